#define _GNU_SOURCE /* memmem */
#include "krc/diagnose/diagnose.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

/* ---- names ------------------------------------------------------------ */

const char *krc_signal_name(int signo)
{
    static const char *const names[] = {
        NULL,        "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
        "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
        "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
        "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS",
    };
    static const char *const rt[] = {
        "SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",  "SIGRTMIN+4",  "SIGRTMIN+5",
        "SIGRTMIN+6",  "SIGRTMIN+7",  "SIGRTMIN+8",  "SIGRTMIN+9",  "SIGRTMIN+10", "SIGRTMIN+11",
        "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15", "SIGRTMAX-14", "SIGRTMAX-13",
        "SIGRTMAX-12", "SIGRTMAX-11", "SIGRTMAX-10", "SIGRTMAX-9",  "SIGRTMAX-8",  "SIGRTMAX-7",
        "SIGRTMAX-6",  "SIGRTMAX-5",  "SIGRTMAX-4",  "SIGRTMAX-3",  "SIGRTMAX-2",  "SIGRTMAX-1",
        "SIGRTMAX",
    };

    if (signo >= 1 && signo <= 31) {
        return names[signo];
    }
    if (signo >= 34 && signo <= 64) {
        return rt[signo - 34];
    }
    return NULL;
}

static const char *signal_meaning(int signo)
{
    switch (signo) {
    case 1:
        return "hang-up";
    case 2:
        return "interrupt";
    case 3:
        return "quit, usually with a core dump";
    case 4:
        return "illegal instruction, e.g. a binary built for another CPU";
    case 6:
        return "abort: a failed assertion, an uncaught C++ exception or a runtime abort";
    case 7:
        return "bus error, e.g. a truncated memory-mapped file or /dev/shm exhausted";
    case 8:
        return "arithmetic exception, e.g. an integer division by zero";
    case 9:
        return "killed";
    case 11:
        return "segmentation fault";
    case 13:
        return "broken pipe";
    case 15:
        return "terminated";
    case 24:
        return "CPU time limit exceeded";
    case 25:
        return "file size limit exceeded";
    case 31:
        return "bad system call, e.g. blocked by seccomp";
    default:
        return NULL;
    }
}

/* ---- small text helpers ----------------------------------------------- */

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Case-insensitive search of the lowercase ASCII `needle` in h[0..hl).
 * Returns the offset or SIZE_MAX. */
static size_t find_ci(const unsigned char *h, size_t hl, const char *needle)
{
    size_t nl = strlen(needle);
    unsigned char first;
    size_t i;
    size_t j;

    if (nl == 0 || hl < nl) {
        return nl == 0 ? 0 : SIZE_MAX;
    }
    first = (unsigned char)needle[0];
    for (i = 0; i + nl <= hl; i++) {
        if (lower(h[i]) != first) {
            continue;
        }
        for (j = 1; j < nl; j++) {
            if (lower(h[i + j]) != (unsigned char)needle[j]) {
                break;
            }
        }
        if (j == nl) {
            return i;
        }
    }
    return SIZE_MAX;
}

static int has_ci(const unsigned char *h, size_t hl, const char *needle)
{
    return find_ci(h, hl, needle) != SIZE_MAX;
}

static int str_has_ci(const char *s, const char *needle)
{
    return s != NULL && has_ci((const unsigned char *)s, strlen(s), needle);
}

static int str_eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int starts_with(const unsigned char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && memcmp(p, prefix, n) == 0;
}

static int is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

size_t krc_diagnose_sanitize(const void *data, size_t len, char *out, size_t outsz)
{
    const unsigned char *p = data;
    size_t i = 0;
    size_t o = 0;
    int last_space = 1; /* drop leading blanks */

    if (outsz == 0) {
        return 0;
    }
    while (i < len) {
        unsigned char c = p[i];
        size_t need;
        size_t seq = 1;
        const char *put = NULL;
        char one[4];

        if (c == 0x1b) {
            i += krc_text_ansi_len(p + i, len - i);
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            one[0] = ' ';
            one[1] = '\0';
            put = one;
            seq = 1;
        } else if (c < 0x80) {
            one[0] = (char)c;
            one[1] = '\0';
            put = one;
        } else {
            uint32_t cp;
            seq = krc_text_utf8_decode(p + i, len - i, &cp);
            if (seq == 0) {
                put = KRC_TEXT_REPLACEMENT;
                seq = 1;
            }
        }
        if (put != NULL && put[0] == ' ' && put[1] == '\0') {
            if (last_space) {
                i += seq;
                continue;
            }
            last_space = 1;
        } else {
            last_space = 0;
        }
        need = put != NULL ? strlen(put) : seq;
        if (o + need + 1 > outsz) {
            /* Cut: make room for "..." */
            return krc_text_truncate(out, o, outsz, "...");
        }
        if (put != NULL) {
            memcpy(out + o, put, need);
        } else {
            memcpy(out + o, p + i, need);
        }
        o += need;
        i += seq;
    }
    while (o > 0 && out[o - 1] == ' ') {
        o--;
    }
    out[o] = '\0';
    return o;
}

void krc_diagnose_format_duration(int64_t s, char *out, size_t outsz)
{
    if (s < 0) {
        s = 0;
    }
    if (s < 60) {
        snprintf(out, outsz, "%llds", (long long)s);
    } else if (s < 3600) {
        snprintf(out, outsz, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
    } else {
        snprintf(out, outsz, "%lldh%lldm%llds", (long long)(s / 3600), (long long)(s % 3600 / 60),
                 (long long)(s % 60));
    }
}

static void format_time(int64_t t, char *out, size_t outsz)
{
    int64_t days = t / 86400;
    int64_t rem = t % 86400;
    int64_t z, era, doe, yoe, y, doy, mp, d, m;

    if (t <= 0) {
        snprintf(out, outsz, "?");
        return;
    }
    /* civil_from_days (H. Hinnant) */
    z = days + 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    snprintf(out, outsz, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)y, (long long)m,
             (long long)d, (long long)(rem / 3600), (long long)(rem % 3600 / 60),
             (long long)(rem % 60));
}

/* ---- the log ----------------------------------------------------------- */

struct span {
    const unsigned char *p;
    size_t len;
};

/* A log line found by a search: the line and the match offset inside it. */
struct hit {
    int found;
    struct span line;
    size_t at; /* offset of the match inside line */
};

static struct span line_around(const unsigned char *buf, size_t len, size_t off)
{
    size_t s = off;
    size_t e = off;
    struct span l;

    while (s > 0 && buf[s - 1] != '\n') {
        s--;
    }
    while (e < len && buf[e] != '\n') {
        e++;
    }
    l.p = buf + s;
    l.len = e - s;
    return l;
}

/* One text pattern: `a` (lowercase) must occur; when `b` is set it must
 * occur on the same line too. */
struct pattern {
    const char *a;
    const char *b;
};

static const struct pattern gpu_oom_patterns[] = {
    {"cuda out of memory", NULL},
    {"cuda error: out of memory", NULL},
    {"cuda_error_out_of_memory", NULL},
    {"cudaerrormemoryallocation", NULL},
    {"torch.outofmemoryerror", NULL},
    {"torch.cuda.outofmemoryerror", NULL},
    {"hip out of memory", NULL},
    {"cuda oom", NULL},
    {"cudamalloc", "out of memory"},
    {"resource_exhausted: out of memory", NULL},
    {"oom when allocating tensor", "gpu"},
    {"cublas_status_alloc_failed", NULL},
    {"cudnn_status_alloc_failed", NULL},
    {"no available memory for the cache blocks", NULL},
    {"out of memory", "cuda"},
    {"out of memory", "gpu"},
    {"ran out of memory", "gpu"},
};

static const struct pattern gpu_error_patterns[] = {
    {"no cuda-capable device is detected", NULL},
    {"no cuda gpus are available", NULL},
    {"found no nvidia driver", NULL},
    {"driver/library version mismatch", NULL},
    {"cuda driver version is insufficient", NULL},
    {"cudaerrorinsufficientdriver", NULL},
    {"cuda_error_no_device", NULL},
    {"cudaerrornodevice", NULL},
    {"cuda_error_system_driver_mismatch", NULL},
    {"cudaerrorsystemdrivermismatch", NULL},
    {"uncorrectable ecc error", NULL},
    {"cuda_error_ecc_uncorrectable", NULL},
    {"cudaerroreccuncorrectable", NULL},
    {"fallen off the bus", NULL},
    {"gpu is lost", NULL},
    {"gpu_is_lost", NULL},
    {"cudaerrordevicesunavailable", NULL},
    {"cuda_error_devices_unavailable", NULL},
    {"busy or unavailable", "cuda"},
    {"busy or unavailable", "gpu"},
    {"failed to initialize nvml", NULL},
    {"could not load nvml library", NULL},
    {"nvml_error_library_not_found", NULL},
    {"libnvidia-ml.so", "cannot open"},
    {"libnvidia-ml.so", "not found"},
    {"couldn't communicate with the nvidia driver", NULL},
    {"nvidia-smi has failed", NULL},
    {"unable to determine the device handle for gpu", NULL},
    {"forward compatibility was attempted on non supported hw", NULL},
};

/* Strong signs that a network dependency could not be reached. */
static const struct pattern net_patterns[] = {
    {"connection refused", NULL},
    {"econnrefused", NULL},
    {"connectionrefusederror", NULL},
    {"errno 111", NULL},
    {"connect call failed", NULL},
    {"actively refused", NULL},
    {"connection to", "refused"},
    {"no such host", NULL},
    {"name or service not known", NULL},
    {"could not translate host name", NULL},
    {"enotfound", NULL},
    {"eai_again", NULL},
    {"temporary failure in name resolution", NULL},
    {"nodename nor servname", NULL},
    {"unknownhostexception", NULL},
    {"unknown host", NULL},
    {"no address associated with hostname", NULL},
    {"host not found in upstream", NULL},
    {"could not resolve host", NULL},
    {"failed to resolve", "host"},
    {"could not be established", "connection"},
    {"context deadline exceeded", "dial"},
    {"a network-related or instance-specific error", NULL},
    {"amqpconnectionerror", NULL},
    {"dns resolution failed", NULL},
    {"server misbehaving", NULL},
    {"hostname resolving error", NULL},
    {"getaddrinfo failed", NULL},
    {"unknown mysql server host", NULL},
    {"i/o timeout", NULL},
    {"connection timed out", NULL},
    {"etimedout", NULL},
    {"connect timed out", NULL},
    {"connecttimeout", NULL},
    {"timed out connecting", NULL},
    {"timeout expired", "connect"},
    {"connection attempt failed", NULL},
    {"server selection timed out", NULL},
    {"serverselectiontimeouterror", NULL},
    {"mongoserverselectionerror", NULL},
    {"mongonetworkerror", NULL},
    {"timed out waiting for a node assignment", NULL},
    {"no route to host", NULL},
    {"ehostunreach", NULL},
    {"network is unreachable", NULL},
    {"enetunreach", NULL},
    {"host is unreachable", NULL},
    {"communications link failure", NULL},
    {"can't connect to mysql server", NULL},
    {"could not connect to redis", NULL},
    {"could not connect to server", NULL},
    {"couldn't connect to server", NULL},
    {"failed to establish a new connection", NULL},
    {"broker may not be available", NULL},
    {"nobrokersavailable", NULL},
    {"all broker connections are down", NULL},
    {"failed to connect to all addresses", NULL},
    {"code = unavailable", NULL},
    {"statuscode.unavailable", NULL},
    {"14 unavailable", NULL},
    {"unavailable: io exception", NULL},
    {"nolivingconnectionserror", NULL},
    {"no living connections", NULL},
    {"is the server running on", NULL},
};

/* Words that make an exception line "about connectivity" (so it does not
 * compete with an earlier network error). */
static const char *const net_weak[] = {
    "connect", "unavailable", "unreachable", "timeout", "timed out",   "refused", "resolv", "dns",
    "host",    "network",     "socket",      "broker",  "getaddrinfo", "lookup",  "dial",
};

/* The dependency came back after the error. */
static const char *const success_words[] = {
    "connected to",
    "connection established",
    "established connection",
    "successfully connected",
    "connected successfully",
    "reconnected",
    "connection restored",
    "connection successful",
    "ready to accept connections",
    "listening on",
    "listening at",
    "server started",
    "started server",
    "startup complete",
    "is ready",
    "now ready",
};

/* Words of a line that belongs to the failure and shutdown path. */
static const char *const failure_words[] = {
    "error",     "fatal",    "exception", "traceback", "panic",   "fail",   "exit",
    "abort",     "shut",     "stop",      "giving up", "give up", "retry",  "retrying",
    "attempt",   "warn",     "crit",      "caused by", "unable",  "cannot", "can't",
    "could not", "couldn't", "terminat",  "node.js v", "killed",  "signal", "goroutine",
    "stack",     "exiting",  "aborting",  "closing",
};

static int line_matches(struct span l, const struct pattern *pat, size_t *at)
{
    size_t o = find_ci(l.p, l.len, pat->a);

    if (o == SIZE_MAX) {
        return 0;
    }
    if (pat->b != NULL && !has_ci(l.p, l.len, pat->b)) {
        return 0;
    }
    if (at != NULL) {
        *at = o;
    }
    return 1;
}

static int line_matches_any(struct span l, const struct pattern *pats, size_t n, size_t *at)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (line_matches(l, &pats[i], at)) {
            return 1;
        }
    }
    return 0;
}

static int line_has_any(struct span l, const char *const *words, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (has_ci(l.p, l.len, words[i])) {
            return 1;
        }
    }
    return 0;
}

/* NVIDIA Xid reports: "NVRM: Xid (PCI:0000:3b:00): 79, ...", "XID 48". */
static int find_xid(const unsigned char *buf, size_t len, struct hit *h)
{
    size_t i;

    for (i = 0; i + 4 <= len; i++) {
        if (buf[i] != 'X' || (buf[i + 1] != 'i' && buf[i + 1] != 'I') ||
            (buf[i + 2] != 'd' && buf[i + 2] != 'D')) {
            continue;
        }
        if (i > 0 && is_alnum(buf[i - 1])) {
            continue;
        }
        if (buf[i + 3] == ':' || buf[i + 3] == '(' ||
            (buf[i + 3] == ' ' && i + 4 < len &&
             (buf[i + 4] == '(' || (buf[i + 4] >= '0' && buf[i + 4] <= '9') ||
              has_ci(buf + i + 4, len - i - 4 < 6 ? len - i - 4 : 6, "error")))) {
            h->found = 1;
            h->line = line_around(buf, len, i);
            h->at = (size_t)(buf + i - h->line.p);
            return 1;
        }
    }
    return 0;
}

/* First line anywhere in buf matching one of the patterns (pattern order
 * is priority order; each is searched over the whole buffer). */
static int search_patterns(const unsigned char *buf, size_t len, const struct pattern *pats,
                           size_t n, struct hit *h)
{
    size_t i;

    for (i = 0; i < n; i++) {
        size_t pos = 0;
        while (pos < len) {
            size_t o = find_ci(buf + pos, len - pos, pats[i].a);
            struct span l;
            if (o == SIZE_MAX) {
                break;
            }
            o += pos;
            l = line_around(buf, len, o);
            if (pats[i].b == NULL || has_ci(l.p, l.len, pats[i].b)) {
                h->found = 1;
                h->line = l;
                h->at = (size_t)(buf + o - l.p);
                return 1;
            }
            pos = (size_t)(l.p - buf) + l.len + 1;
        }
    }
    return 0;
}

/* Skip a kubectl --timestamps prefix ("2026-07-30T07:43:51.123456789Z "). */
static struct span strip_ts(struct span l)
{
    size_t i;

    if (l.len > 20 && l.p[4] == '-' && l.p[7] == '-' && l.p[10] == 'T' && l.p[0] >= '0' &&
        l.p[0] <= '9') {
        for (i = 11; i < l.len && i < 40; i++) {
            if (l.p[i] == ' ') {
                l.p += i + 1;
                l.len -= i + 1;
                return l;
            }
        }
    }
    return l;
}

static int is_blank(struct span l)
{
    size_t i;

    for (i = 0; i < l.len; i++) {
        if (!is_space(l.p[i])) {
            return 0;
        }
    }
    return 1;
}

/* Stack frames, source excerpts, markers, punctuation: lines that do not
 * count toward the "last lines" of a log. */
static int is_frame(struct span l)
{
    size_t i;
    int alnum = 0;

    l = strip_ts(l);
    if (l.len == 0) {
        return 1;
    }
    if (l.p[0] == ' ' || l.p[0] == '\t' || l.p[0] == '^' || l.p[0] == '~') {
        return 1;
    }
    if (starts_with(l.p, l.len, "at ") || starts_with(l.p, l.len, "... ") ||
        starts_with(l.p, l.len, "goroutine ") || starts_with(l.p, l.len, "created by ")) {
        return 1;
    }
    for (i = 0; i < l.len; i++) {
        if (is_alnum(l.p[i])) {
            alnum = 1;
            break;
        }
    }
    if (!alnum) {
        return 1;
    }
    /* Go frame: "pkg/path.(*T).Method(0xc000..., ...)" - no blank before '(' */
    for (i = 0; i < l.len && l.p[i] != ' ' && l.p[i] != '('; i++) {
    }
    if (i < l.len && i > 0 && l.p[i] == '(' && l.p[l.len - 1] == ')' &&
        memchr(l.p, '.', i) != NULL) {
        return 1;
    }
    return 0;
}

/* A line logged at a level that ends the process in the common logging
 * libraries: klog "F0210 01:36:39.123645 ..." (klog.Fatal exits 255),
 * "[FATAL]" (CoreDNS, log.Fatal wrappers), logrus/zap "level=fatal" and
 * "\"level\":\"fatal\"", and nginx's "[emerg]" (nginx stops on it at start). */
static int is_fatal_level(struct span l)
{
    static const char *const marks[] = {"[FATAL]", "level=fatal", "\"level\":\"fatal\"", "[emerg]",
                                        " FATAL "};
    size_t i;

    if (l.len > 6 && l.p[0] == 'F' && is_digit(l.p[1]) && is_digit(l.p[2]) && is_digit(l.p[3]) &&
        is_digit(l.p[4]) && l.p[5] == ' ') {
        return 1;
    }
    if (starts_with(l.p, l.len, "FATAL") || starts_with(l.p, l.len, "fatal: ")) {
        return 1;
    }
    for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        if (memmem(l.p, l.len, marks[i], strlen(marks[i])) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* An exception or crash header at the start of a line: "panic: ...",
 * "TypeError: ...", "java.lang.IllegalStateException: ...", or a line
 * logged at a fatal level. */
static int is_error_header(struct span l)
{
    size_t i;
    size_t tok;

    l = strip_ts(l);
    if (is_fatal_level(l)) {
        return 1;
    }
    if (starts_with(l.p, l.len, "panic: ") || starts_with(l.p, l.len, "fatal error: ") ||
        starts_with(l.p, l.len, "Exception in thread ") || starts_with(l.p, l.len, "Uncaught ") ||
        starts_with(l.p, l.len, "Segmentation fault") ||
        starts_with(l.p, l.len, "terminate called")) {
        return 1;
    }
    for (i = 0; i < l.len; i++) {
        unsigned char c = l.p[i];
        if (!(is_alnum(c) || c == '_' || c == '.' || c == '$')) {
            break;
        }
    }
    tok = i;
    if (tok == 0 || (tok < l.len && l.p[tok] != ':')) {
        return 0;
    }
    return (tok >= 5 && memcmp(l.p + tok - 5, "Error", 5) == 0) ||
           (tok >= 9 && memcmp(l.p + tok - 9, "Exception", 9) == 0);
}

#define TAIL_MAX_LINES 600
#define TAIL_MAX_BYTES (1024u * 1024u)

/* The last lines of a text, oldest first: up to `want` counting lines
 * (non-blank, not frames) plus the frames between them. */
struct tail {
    struct span lines[TAIL_MAX_LINES];
    size_t n;
};

static void collect_tail(const unsigned char *buf, size_t len, size_t want, struct tail *t)
{
    size_t end = len;
    size_t counted = 0;
    size_t floor = len > TAIL_MAX_BYTES ? len - TAIL_MAX_BYTES : 0;
    size_t i;

    t->n = 0;
    while (end > floor && t->n < TAIL_MAX_LINES && counted < want) {
        size_t s = end;
        struct span l;
        while (s > floor && buf[s - 1] != '\n') {
            s--;
        }
        l.p = buf + s;
        l.len = end - s;
        while (l.len > 0 && l.p[l.len - 1] == '\r') {
            l.len--; /* CRLF line ends */
        }
        if (!is_blank(l)) {
            t->lines[t->n++] = l;
            if (!is_frame(l)) {
                counted++;
            }
        }
        if (s == floor) {
            break;
        }
        end = s - 1; /* skip the '\n' */
    }
    for (i = 0; i < t->n / 2; i++) {
        struct span tmp = t->lines[i];
        t->lines[i] = t->lines[t->n - 1 - i];
        t->lines[t->n - 1 - i] = tmp;
    }
}

/* Rule 9: the tail shows the application giving up on a network dependency. */
static int find_dependency(const unsigned char *buf, size_t len, struct hit *h)
{
    struct tail *t = krc_malloc(sizeof(*t));
    size_t i;
    size_t last = SIZE_MAX;
    size_t at = 0;
    size_t last_at = 0;
    size_t ordinary = 0;
    int ok = 1;

    if (t == NULL) {
        return 0; /* degrade: no dependency verdict rather than fail */
    }
    collect_tail(buf, len, KRC_DIAG_TAIL_LINES, t);
    for (i = 0; i < t->n; i++) {
        if (line_matches_any(t->lines[i], net_patterns,
                             sizeof(net_patterns) / sizeof(net_patterns[0]), &at)) {
            last = i;
            last_at = at;
        }
    }
    if (last == SIZE_MAX) {
        ok = 0;
    }
    for (i = last + 1; ok && i < t->n; i++) {
        struct span l = t->lines[i];
        if (line_has_any(l, success_words, sizeof(success_words) / sizeof(success_words[0]))) {
            ok = 0; /* the dependency answered after the error */
        } else if (is_error_header(l) &&
                   !line_has_any(l, net_weak, sizeof(net_weak) / sizeof(net_weak[0]))) {
            ok = 0; /* a different error ends the log */
        } else if (!is_frame(l) &&
                   !line_has_any(l, failure_words,
                                 sizeof(failure_words) / sizeof(failure_words[0]))) {
            if (++ordinary > 10) {
                ok = 0; /* the application went on working after the error */
            }
        }
    }
    if (ok) {
        h->found = 1;
        h->line = t->lines[last];
        h->at = last_at;
    }
    krc_free(t);
    return ok;
}

/* Is `l` the last line of buf that counts (not blank, not a frame)? */
static int is_last_line(const unsigned char *buf, size_t len, struct span l)
{
    struct tail *t = krc_malloc(sizeof(*t));
    int last;

    if (t == NULL || buf == NULL) {
        krc_free(t);
        return 0;
    }
    collect_tail(buf, len, 1, t);
    while (t->n > 0 && is_frame(t->lines[t->n - 1])) {
        t->n--;
    }
    last = t->n > 0 && t->lines[t->n - 1].p == l.p;
    krc_free(t);
    return last;
}

/* The most telling error line of the tail (for app errors): the last
 * exception/panic header, else the last line mentioning an error. */
static int find_error_line(const unsigned char *buf, size_t len, struct hit *h)
{
    struct tail *t = krc_malloc(sizeof(*t));
    static const char *const err_words[] = {
        "error",     "panic",     "fatal",  "exception", "fail",      "denied",
        "not found", "traceback", "can't ", "cannot ",   "unable to", "read-only file system"};
    size_t i;
    size_t header = SIZE_MAX;
    size_t word = SIZE_MAX;

    if (t == NULL) {
        return 0;
    }
    collect_tail(buf, len, KRC_DIAG_TAIL_LINES, t);
    for (i = 0; i < t->n; i++) {
        if (is_error_header(t->lines[i])) {
            header = i;
        }
        if (!is_frame(t->lines[i]) &&
            line_has_any(t->lines[i], err_words, sizeof(err_words) / sizeof(err_words[0])) &&
            !has_ci(t->lines[i].p, t->lines[i].len, "traceback (most recent")) {
            word = i;
        }
    }
    if (header == SIZE_MAX) {
        header = word;
    }
    if (header != SIZE_MAX) {
        h->found = 1;
        h->line = t->lines[header];
        h->at = 0;
    }
    krc_free(t);
    return header != SIZE_MAX;
}

/* Display text for a hit: the CR-separated segment holding the match,
 * centred on it when the line is long. */
static void hit_text(const struct hit *h, char *out, size_t outsz)
{
    size_t s = 0;
    size_t e = h->line.len;
    size_t i;
    size_t budget = KRC_DIAG_EVIDENCE_MAX - 40;
    int cut_front = 0;
    size_t o = 0;

    for (i = h->at; i > 0; i--) {
        if (h->line.p[i - 1] == '\r') {
            s = i;
            break;
        }
    }
    for (i = h->at; i < h->line.len; i++) {
        if (h->line.p[i] == '\r') {
            e = i;
            break;
        }
    }
    {
        struct span seg = strip_ts((struct span){h->line.p + s, e - s});
        s = (size_t)(seg.p - h->line.p);
    }
    if (e - s > budget && h->at > s + 60) {
        s = h->at - 60;
        /* start on a character, not inside a UTF-8 sequence */
        for (int k = 0; k < 3 && s < h->at && ((unsigned char)h->line.p[s] & 0xc0) == 0x80; k++) {
            s++;
        }
        cut_front = 1;
    }
    if (cut_front && outsz > 4) {
        /* clang-tidy: the "..." is a prefix: krc_diagnose_sanitize writes the rest and the NUL */
        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
        memcpy(out, "...", 3);
        o = 3;
    }
    if (e - s > budget + 8) {
        e = s + budget + 8; /* sanitize adds the trailing "..." */
    }
    krc_diagnose_sanitize(h->line.p + s, e - s, out + o, outsz - o < budget ? outsz - o : budget);
}

/* ---- building the result ---------------------------------------------- */

struct builder {
    struct krc_diagnosis *d;
    int oom; /* allocation failure seen */
};

static void add_evidence(struct builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_evidence(struct builder *b, const char *fmt, ...)
{
    char raw[1024];
    char clean[KRC_DIAG_EVIDENCE_MAX];
    char **p;
    va_list ap;
    size_t n;

    if (b->d->n_evidence >= KRC_DIAG_MAX_EVIDENCE) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    n = krc_diagnose_sanitize(raw, strlen(raw), clean, sizeof(clean));
    if (n == 0) {
        return;
    }
    p = krc_realloc(b->d->evidence, (b->d->n_evidence + 1) * sizeof(*p));
    if (p == NULL) {
        b->oom = 1;
        return;
    }
    b->d->evidence = p;
    p[b->d->n_evidence] = krc_strdup(clean);
    if (p[b->d->n_evidence] == NULL) {
        b->oom = 1;
        return;
    }
    b->d->n_evidence++;
}

static const char *strip_combined(const char *msg)
{
    static const char prefix[] = "(combined from similar events): ";

    if (msg != NULL && strncmp(msg, prefix, sizeof(prefix) - 1) == 0) {
        return msg + sizeof(prefix) - 1;
    }
    return msg != NULL ? msg : "";
}

/* Is the event inside [lo, hi]? hi == 0 means "no window known" (a status
 * without a termination): every event counts. */
static int ev_undated(const struct krc_report_event *e)
{
    return e->first_timestamp == 0 && e->last_timestamp == 0;
}

/* An undated event (pasted from kubectl describe, which shows ages only)
 * also counts: the confidence of a rule that relies on one says so. */
static int64_t ev_in_window(const struct krc_report_event *e, int64_t lo, int64_t hi)
{
    if (hi == 0 || ev_undated(e)) {
        return 1;
    }
    return (e->last_timestamp >= lo && e->last_timestamp <= hi) ||
           (e->first_timestamp >= lo && e->first_timestamp <= hi);
}

static void evidence_event(struct builder *b, const struct krc_report_event *e)
{
    char when[32];

    format_time(e->last_timestamp, when, sizeof(when));
    if (e->count > 1) {
        add_evidence(b, "event %s x%d (last %s): %s", e->reason ? e->reason : "?", e->count, when,
                     strip_combined(e->message));
    } else {
        add_evidence(b, "event %s (%s): %s", e->reason ? e->reason : "?", when,
                     strip_combined(e->message));
    }
}

/* Does the message name container `name` ("Container NAME failed liveness
 * probe", "Stopping container NAME")? */
static int msg_names_container(const char *msg, const char *name)
{
    size_t nl = name != NULL ? strlen(name) : 0;
    const char *p = msg;

    while (nl > 0 && p != NULL && (p = strstr(p, name)) != NULL) {
        char after = p[nl];
        if (p - msg >= 10 && find_ci((const unsigned char *)p - 10, 10, "container ") == 0 &&
            (after == '\0' || after == ' ' || after == ',' || after == '"' || after == ':')) {
            return 1;
        }
        /* Docker-era kubelet: "Killing container with id docker://NAME:..." */
        if (p - msg >= 3 && strncmp(p - 3, "://", 3) == 0 && after == ':') {
            return 1;
        }
        p += nl;
    }
    return 0;
}

/* Does event e concern container c? By fieldPath; an event without one (as
 * pasted from kubectl describe) when its message names the container or the
 * pod has only this container. */
static int ev_about(const struct krc_report *r, const struct krc_report_event *e,
                    const struct krc_report_container *c)
{
    size_t i;
    size_t regular = 0;

    if (krc_report_event_matches(r, e, c)) {
        return 1;
    }
    if (e->field_path != NULL || !krc_report_event_is_pod(r, e)) {
        return 0;
    }
    if (msg_names_container(strip_combined(e->message), c->name)) {
        return 1;
    }
    if (str_has_ci(e->message, "container ")) {
        return 0; /* names another container */
    }
    for (i = 0; i < r->n_containers; i++) {
        regular += !r->containers[i].is_init;
    }
    return regular == 1 && !c->is_init;
}

/* Is e a kubelet event of `reason`? A pasted event may have lost its reason
 * column: then the kubelet's own wording stands for it ("Liveness probe
 * failed: ..." is only ever an Unhealthy event, "... will be restarted" /
 * "... will be killed and recreated" only a Killing one). */
static int ev_is(const struct krc_report_event *e, const char *reason)
{
    const char *m = strip_combined(e->message);

    if (e->reason != NULL && e->reason[0] != '\0') {
        return strcmp(e->reason, reason) == 0;
    }
    if (m == NULL) {
        return 0;
    }
    if (strcmp(reason, "Unhealthy") == 0) {
        return strncmp(m, "Liveness probe failed:", 22) == 0 ||
               strncmp(m, "Startup probe failed:", 21) == 0 ||
               strncmp(m, "Readiness probe failed:", 23) == 0;
    }
    if (strcmp(reason, "Killing") == 0) {
        return str_has_ci(m, "will be restarted") || str_has_ci(m, "will be killed and recreated");
    }
    return 0;
}

/* Killing event naming `probe` ("liveness" / "startup") for container c in W. */
static const struct krc_report_event *find_probe_kill(const struct krc_report *r,
                                                      const struct krc_report_container *c,
                                                      const char *probe, int64_t lo, int64_t hi)
{
    char a[48];
    char bb[48];
    const struct krc_report_event *best = NULL;
    size_t i;

    snprintf(a, sizeof(a), "failed %s probe", probe);
    snprintf(bb, sizeof(bb), "%s probe failed", probe);
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        const char *msg = strip_combined(e->message);
        if (!ev_is(e, "Killing") || !ev_about(r, e, c)) {
            continue;
        }
        if (!str_has_ci(msg, a) && !str_has_ci(msg, bb)) {
            continue;
        }
        if (!ev_in_window(e, lo, hi)) {
            continue;
        }
        if (best == NULL || e->last_timestamp > best->last_timestamp) {
            best = e;
        }
    }
    return best;
}

/* Latest "<Probe> probe failed: ..." Unhealthy event for c up to `hi`. */
static const struct krc_report_event *find_unhealthy(const struct krc_report *r,
                                                     const struct krc_report_container *c,
                                                     const char *probe_cap, int64_t lo, int64_t hi)
{
    const struct krc_report_event *best = NULL;
    size_t pl = strlen(probe_cap);
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        const char *msg = strip_combined(e->message);
        if (!ev_is(e, "Unhealthy") || !ev_about(r, e, c) || strncmp(msg, probe_cap, pl) != 0 ||
            msg[pl] != ' ') {
            continue;
        }
        if (hi > 0 && e->first_timestamp > hi) {
            continue;
        }
        if (best == NULL || (ev_in_window(e, lo, hi) && !ev_in_window(best, lo, hi)) ||
            (ev_in_window(e, lo, hi) == ev_in_window(best, lo, hi) &&
             e->last_timestamp > best->last_timestamp)) {
            best = e;
        }
    }
    return best;
}

static int msg_not_found(const char *m)
{
    if (m == NULL) {
        return 0;
    }
    if (str_has_ci(m, "executable file not found") || str_has_ci(m, "command not found")) {
        return 1;
    }
    /* "exec: \"/app/run\": stat /app/run: no such file or directory", but not
     * a missing mount source or working directory. */
    return str_has_ci(m, "no such file or directory") && !str_has_ci(m, "mount") &&
           !str_has_ci(m, "chdir") && !str_has_ci(m, "cwd");
}

static int msg_permission(const char *m)
{
    return m != NULL && str_has_ci(m, "permission denied") && !str_has_ci(m, "error mounting");
}

/* Text quoted into a summary from the pod (a log line, an event, runtime or
 * termination message) is written with the words that introduce it between
 * Q_OPEN and Q_CLOSE, so that summary_set can also make the summary without
 * it (summary_unquoted). Quoted text is sanitized first: control characters
 * become spaces, so no quoted byte is a marker. */
#define Q_OPEN '\x01'
#define Q_CLOSE '\x02'

/* lead + line + tail as one quoted clause; line is sanitized already. */
static void quote_clean(struct krc_buf *s, const char *lead, const char *line, const char *tail)
{
    krc_buf_printf(s, "%c%s%s%s%c", Q_OPEN, lead, line, tail, Q_CLOSE);
}

/* lead + the first `max` bytes of text (sanitized) + tail, quoted. */
static void quote(struct krc_buf *s, const char *lead, const char *text, size_t max,
                  const char *tail)
{
    char line[KRC_DIAG_EVIDENCE_MAX];
    size_t n = strlen(text);

    krc_diagnose_sanitize(text, n < max ? n : max, line, sizeof(line));
    quote_clean(s, lead, line, tail);
}

/* text with its quoted clauses (keep: only their markers) left out,
 * sanitized, in a new string; NULL when out of memory. */
static char *summary_form(const char *text, size_t n, int keep)
{
    size_t cap = n * 3 + 4 > 2048 ? 2048 : n * 3 + 4;
    char *plain = krc_malloc(n + 1);
    char *clean = krc_malloc(cap);
    size_t o = 0;
    int in_quote = 0;

    if (plain == NULL || clean == NULL) {
        krc_free(plain);
        krc_free(clean);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (text[i] == Q_OPEN || text[i] == Q_CLOSE) {
            in_quote = text[i] == Q_OPEN;
        } else if (keep || !in_quote) {
            plain[o++] = text[i];
        }
    }
    krc_diagnose_sanitize(plain, o, clean, cap);
    krc_free(plain);
    return clean;
}

static void summary_set(struct builder *b, struct krc_buf *s)
{
    char *text = krc_buf_take(s);
    char *full;
    char *unquoted;
    size_t n;

    if (text == NULL) {
        b->oom = 1;
        return;
    }
    n = strlen(text);
    full = summary_form(text, n, 1);
    unquoted = summary_form(text, n, 0);
    krc_free(text);
    if (full == NULL || unquoted == NULL) {
        krc_free(full);
        krc_free(unquoted);
        b->oom = 1;
        return;
    }
    krc_free(b->d->summary);
    krc_free(b->d->summary_unquoted);
    b->d->summary = full;
    b->d->summary_unquoted = unquoted;
}

static void node_evidence(struct builder *b, const struct krc_report *r)
{
    const struct krc_report_node *n = &r->node;
    size_t i;

    if (!n->present) {
        return;
    }
    for (i = 0; i < n->n_conditions; i++) {
        const struct krc_report_node_condition *c = &n->conditions[i];
        int bad;
        if (c->type == NULL || c->status == NULL) {
            continue;
        }
        if (strcmp(c->type, "Ready") == 0) {
            bad = strcmp(c->status, "True") != 0;
        } else {
            bad = strcmp(c->status, "False") != 0;
        }
        if (bad) {
            add_evidence(b, "node %s: condition %s=%s%s%s%s%s", n->name ? n->name : "?", c->type,
                         c->status, c->reason ? " (" : "", c->reason ? c->reason : "",
                         c->reason ? ")" : "", "");
            if (c->message != NULL && c->message[0] != '\0') {
                add_evidence(b, "node %s: %s: %s", n->name ? n->name : "?", c->type, c->message);
            }
        }
    }
    if (n->unschedulable) {
        add_evidence(b, "node %s is cordoned (unschedulable)", n->name ? n->name : "?");
    }
    for (i = 0; i < n->capacity.n; i++) {
        const char *key = n->capacity.items[i].key;
        const char *cap = n->capacity.items[i].value;
        const char *alloc = krc_kv_list_get(&n->allocatable, key);
        if (krc_report_is_gpu_resource(key) && alloc != NULL && strcmp(cap, alloc) != 0) {
            add_evidence(b,
                         "node %s: %s allocatable %s < capacity %s (the device plugin marked a "
                         "GPU unhealthy)",
                         n->name ? n->name : "?", key, alloc, cap);
        }
    }
}

/* ---- the facts the rules read ------------------------------------------- */

/* Reasons with which the kubelet reports that the runtime could not create
 * or start the process (terminated or waiting). */
static int is_start_reason(const char *reason)
{
    static const char *const reasons[] = {"StartError", "ContainerCannotRun", "RunContainerError",
                                          "CreateContainerError", "CreateContainerConfigError"};
    size_t i;

    for (i = 0; reason != NULL && i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        if (strcmp(reason, reasons[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Everything the rules read, computed once per diagnosis. */
struct dctx {
    const struct krc_report *r;
    const struct krc_report_container *c;
    const struct krc_report_term *t; /* NULL: no termination was given */
    int from_last;
    int has_exit; /* t with an exitCode */
    int exit_code;
    int signal;
    const char *signal_name;
    int64_t run;  /* seconds the instance ran, -1 unknown */
    char dur[32]; /* run as "2m42s", "" when unknown */
    int64_t lo;   /* W = [lo, hi]; hi == 0: no termination time, no window */
    int64_t hi;
    const unsigned char *log; /* previous log of c, its last KRC_DIAG_SCAN_MAX bytes */
    size_t log_len;
    const unsigned char *msg; /* termination message written by the application */
    size_t msg_len;
    const char *runtime;  /* runtime error: start-error message or waiting message */
    int start_error;      /* a reason says the runtime could not start the process */
    size_t pod_events;    /* events about this pod */
    size_t window_events; /* events about this container or the pod itself, in W */
    /* what the matching rule found */
    enum krc_confidence conf;
    struct hit h;
    const char *where; /* "log", "termination message", "runtime", "pod status" */
    const struct krc_report_event *ev;
    const struct krc_report_event *ev2;
    const struct krc_report_probe *probe;
    const char *detail;
    int runc_log; /* the hit is an exec error in the log: 1 runc's, 2 a shell's */
};

static const struct krc_report_term *term_of(const struct krc_report_container *c, int *from_last)
{
    if (c->last.present) {
        *from_last = 1;
        return &c->last;
    }
    if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present) {
        *from_last = 0;
        return &c->state_term;
    }
    return NULL;
}

static int event_of(const struct dctx *x, const struct krc_report_event *e)
{
    return krc_report_event_matches(x->r, e, x->c) ||
           (e->field_path == NULL && krc_report_event_is_pod(x->r, e));
}

static void ctx_init(struct dctx *x, const struct krc_report *r,
                     const struct krc_report_container *c)
{
    const struct krc_report_term *t;
    size_t i;

    memset(x, 0, sizeof(*x));
    x->r = r;
    x->c = c;
    x->run = -1;
    t = x->t = term_of(c, &x->from_last);
    if (t != NULL) {
        x->has_exit = !t->exit_code_missing;
        x->exit_code = x->has_exit ? t->exit_code : 0;
        if (t->signal > 0) {
            x->signal = t->signal;
        } else if (x->has_exit && t->exit_code > 128 && t->exit_code <= 128 + 64) {
            x->signal = t->exit_code - 128;
        }
        x->signal_name = krc_signal_name(x->signal);
        if (x->signal_name == NULL) {
            x->signal = 0;
        }
        if (t->started_at > 0 && t->finished_at >= t->started_at) {
            x->run = t->finished_at - t->started_at;
            krc_diagnose_format_duration(x->run, x->dur, sizeof(x->dur));
        }
        /* Without a start time (StartError writes 1970) assume the instance
         * lived at most the grace period. */
        x->hi = t->finished_at > 0 ? t->finished_at + KRC_DIAG_WINDOW_AFTER : 0;
        x->lo = t->started_at > 0
                    ? t->started_at
                    : (t->finished_at > 0 ? t->finished_at - r->grace_period - 10 : 1);
        x->start_error = is_start_reason(t->reason) ||
                         (x->has_exit && t->exit_code == 128 && t->started_at == 0);
    }
    if (c->state == KRC_REPORT_STATE_WAITING && is_start_reason(c->state_reason)) {
        x->start_error = 1;
        if (c->state_message != NULL && c->state_message[0] != '\0') {
            x->runtime = c->state_message;
        }
    }
    if (t != NULL && t->message != NULL && t->message[0] != '\0') {
        if (x->start_error && is_start_reason(t->reason)) {
            x->runtime = t->message;
        } else if (!(x->has_exit && t->exit_code == 128 && t->started_at == 0)) {
            x->msg = (const unsigned char *)t->message;
            x->msg_len = strlen(t->message);
        } else {
            x->runtime = t->message;
        }
    }
    if (r->log != NULL && r->log_len > 0 &&
        (r->log_container == NULL || str_eq(r->log_container, c->name))) {
        x->log = r->log;
        x->log_len = r->log_len;
        if (x->log_len > KRC_DIAG_SCAN_MAX) {
            x->log += x->log_len - KRC_DIAG_SCAN_MAX;
            x->log_len = KRC_DIAG_SCAN_MAX;
        }
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (krc_report_event_is_pod(r, e)) {
            x->pod_events++;
            if (x->hi > 0 && !ev_undated(e) && event_of(x, e) && ev_in_window(e, x->lo, x->hi)) {
                x->window_events++;
            }
        }
    }
}

/* Where find_text looks. */
enum {
    IN_LOG = 1u << 0,      /* anywhere in the (bounded) previous log */
    IN_LOG_TAIL = 1u << 1, /* the last KRC_DIAG_TAIL_LINES lines of the log */
    IN_MSG = 1u << 2,      /* termination message */
    IN_RUNTIME = 1u << 3,  /* runtime error message (start error, waiting) */
    IN_EVENTS = 1u << 4,   /* messages of this container's / pod's events (W when known) */
    IN_POD = 1u << 5,      /* status.message of the pod */
};

static int tail_search(const unsigned char *p, size_t n, const struct pattern *pats, size_t np,
                       struct hit *h)
{
    struct tail *t = krc_malloc(sizeof(*t));
    size_t i;
    size_t at = 0;
    int found = 0;

    if (t == NULL) {
        return 0; /* degrade: no verdict from the tail rather than fail */
    }
    collect_tail(p, n, KRC_DIAG_TAIL_LINES, t);
    for (i = t->n; i > 0 && !found; i--) {
        if (line_matches_any(t->lines[i - 1], pats, np, &at)) {
            h->found = 1;
            h->line = t->lines[i - 1];
            h->at = at;
            found = 1;
        }
    }
    krc_free(t);
    return found;
}

/* First place (in the order runtime, pod, events, termination message,
 * log) holding one of the patterns; fills x->h, x->where, x->ev. */
static int find_text(struct dctx *x, const struct pattern *pats, size_t n, unsigned in)
{
    size_t i;

    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    if ((in & IN_RUNTIME) && x->runtime != NULL &&
        search_patterns((const unsigned char *)x->runtime, strlen(x->runtime), pats, n, &x->h)) {
        x->where = "runtime";
        return 1;
    }
    if ((in & IN_POD) && x->r->pod_message != NULL &&
        search_patterns((const unsigned char *)x->r->pod_message, strlen(x->r->pod_message), pats,
                        n, &x->h)) {
        x->where = "pod status";
        return 1;
    }
    for (i = 0; (in & IN_EVENTS) && i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        const char *m = strip_combined(e->message);
        if (!event_of(x, e) || !ev_in_window(e, x->lo - 120, x->hi)) {
            continue;
        }
        if (search_patterns((const unsigned char *)m, strlen(m), pats, n, &x->h)) {
            x->where = "event";
            x->ev = e;
            return 1;
        }
    }
    if ((in & IN_MSG) && x->msg != NULL && search_patterns(x->msg, x->msg_len, pats, n, &x->h)) {
        x->where = "termination message";
        return 1;
    }
    if ((in & IN_LOG) && x->log != NULL && search_patterns(x->log, x->log_len, pats, n, &x->h)) {
        x->where = "log";
        return 1;
    }
    if ((in & IN_LOG_TAIL) && x->log != NULL && tail_search(x->log, x->log_len, pats, n, &x->h)) {
        x->where = "log";
        return 1;
    }
    return 0;
}

#define NPAT(a) (sizeof(a) / sizeof((a)[0]))

/* A non-zero exit, or no exit code at all (partial input): text may decide. */
static int failed_or_unknown(const struct dctx *x)
{
    return !x->has_exit || x->exit_code != 0;
}

/* ---- building the result, part 2 ---------------------------------------- */

static void add_line(struct builder *b, char ***arr, size_t *n, const char *text)
{
    char clean[KRC_DIAG_EVIDENCE_MAX * 2];
    char **p;
    size_t i;

    if (*n >= KRC_DIAG_MAX_EVIDENCE ||
        krc_diagnose_sanitize(text, strlen(text), clean, sizeof(clean)) == 0) {
        return;
    }
    for (i = 0; i < *n; i++) {
        if (strcmp((*arr)[i], clean) == 0) {
            return;
        }
    }
    p = krc_realloc(*arr, (*n + 1) * sizeof(*p));
    if (p == NULL) {
        b->oom = 1;
        return;
    }
    *arr = p;
    p[*n] = krc_strdup(clean);
    if (p[*n] == NULL) {
        b->oom = 1;
        return;
    }
    (*n)++;
}

static void add_unchecked(struct builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_unchecked(struct builder *b, const char *fmt, ...)
{
    char raw[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    add_line(b, &b->d->unchecked, &b->d->n_unchecked, raw);
}

/* The evidence line of a text hit. */
static void evidence_hit(struct builder *b, const struct dctx *x)
{
    char line[KRC_DIAG_EVIDENCE_MAX];

    if (x->ev != NULL) {
        evidence_event(b, x->ev);
        return;
    }
    if (!x->h.found) {
        return;
    }
    hit_text(&x->h, line, sizeof(line));
    add_evidence(b, "%s: %s", x->where ? x->where : "log", line);
}

/* The matched text for a summary, at most `max` bytes. */
static void hit_short(const struct dctx *x, char *out, size_t outsz)
{
    if (x->ev != NULL) {
        krc_diagnose_sanitize(strip_combined(x->ev->message),
                              strlen(strip_combined(x->ev->message)), out, outsz);
    } else if (x->h.found) {
        hit_text(&x->h, out, outsz);
    } else {
        out[0] = '\0';
    }
}

static void say_exit(const struct dctx *x, struct krc_buf *s)
{
    if (!x->has_exit) {
        krc_buf_append_str(s, "exit code unknown");
        return;
    }
    krc_buf_printf(s, "exit %d%s%s%s", x->exit_code, x->signal_name ? ", " : "",
                   x->signal_name ? x->signal_name : "", "");
}

/* "exited 137 (SIGKILL)" / "stopped (exit code unknown)" */
static void say_exited(const struct dctx *x, struct krc_buf *s)
{
    if (!x->has_exit) {
        krc_buf_append_str(s, "stopped (exit code unknown)");
        return;
    }
    krc_buf_printf(s, "exited %d", x->exit_code);
    if (x->signal_name != NULL) {
        krc_buf_printf(s, " (%s)", x->signal_name);
    }
}

static void say_after(const struct dctx *x, struct krc_buf *s)
{
    if (x->dur[0]) {
        krc_buf_printf(s, " after %s", x->dur);
    }
}

/* ---- the rules ----------------------------------------------------------- */

static const struct pattern exec_format_patterns[] = {
    {"exec format error", NULL},
};

static const struct pattern disk_full_patterns[] = {
    {"no space left on device", NULL},
    {"enospc", NULL},
};

/* The runtime (runc, containerd, CRI-O) failing to create or start the
 * container, as written in a start error or a Failed event. */
static const struct pattern start_patterns[] = {
    {"oci runtime create failed", NULL},
    {"oci runtime start failed", NULL},
    /* the kubelet's CreateContainerConfigError texts ("Error: secret \"x\" not found",
     * "Error: couldn't find key K in Secret ns/x", runAsNonRoot), as Failed events */
    {"error: secret \"", "not found"},
    {"error: configmap \"", "not found"},
    {"couldn't find key", NULL},
    {"container has runasnonroot and image", NULL},
    {"oci runtime error", NULL},
    {"starting container process caused", NULL},
    {"container init caused", NULL},
    {"failed to create containerd task", NULL},
    {"failed to create shim task", NULL},
    {"failed to start containerd task", NULL},
    {"runc create failed", NULL},
    {"unable to start container process", NULL},
    {"error during container init", NULL},
    {"error mounting", NULL},
    {"failed to create container", NULL},
    {"failed to start container", NULL},
    {"cgroup", "failed"},
    {"cgroup", "error"},
    {"mount", "failed"},
};

/* Language runtimes giving up at their own heap limit. */
static const struct pattern app_oom_patterns[] = {
    {"javascript heap out of memory", NULL},
    {"reached heap limit", NULL},
    {"java.lang.outofmemoryerror", NULL},
    {"terminating due to java.lang.outofmemoryerror", NULL},
    {"fatal error: runtime: out of memory", NULL},
    {"runtime: out of memory", NULL},
    {"system.outofmemoryexception", NULL},
    {"nomemoryerror", NULL},
    {"allowed memory size of", "exhausted"}, /* PHP */
};

static const struct pattern segv_patterns[] = {
    {"segmentation fault", NULL},
};

static const struct pattern sigill_patterns[] = {
    {"illegal instruction", NULL},
    {"compiled to use avx", NULL}, /* TensorFlow's CPU feature check */
    {"instructions, but these aren't available", NULL},
};

static const struct pattern abort_patterns[] = {
    {"double free", NULL},
    {"free(): invalid", NULL},
    {"malloc(): ", NULL},
    {"corrupted size vs. prev_size", NULL},
    {"stack smashing detected", NULL},
    {"terminate called after throwing", NULL},
    {"terminate called without an active exception", NULL},
    {"assertion `", "failed"},
    {"assertion failed", NULL},
    {"aborted (core dumped)", NULL},
    {"sigabrt", NULL},
};

/* Python's MemoryError: the exception name opens the last line of a traceback. */
static int find_python_memory_error(struct dctx *x)
{
    struct tail *t;
    size_t i;
    int found = 0;

    if (x->log == NULL) {
        return 0;
    }
    t = krc_malloc(sizeof(*t));
    if (t == NULL) {
        return 0;
    }
    collect_tail(x->log, x->log_len, KRC_DIAG_TAIL_LINES, t);
    for (i = t->n; i > 0 && !found; i--) {
        struct span l = strip_ts(t->lines[i - 1]);
        if (starts_with(l.p, l.len, "MemoryError") &&
            (l.len == 11 || l.p[11] == ':' || l.p[11] == ' ' || l.p[11] == '\r')) {
            memset(&x->h, 0, sizeof(x->h));
            x->h.found = 1;
            x->h.line = t->lines[i - 1];
            x->h.at = (size_t)(l.p - t->lines[i - 1].p);
            x->where = "log";
            found = 1;
        }
    }
    krc_free(t);
    return found;
}

/* 1. oom_killed */
static int m_oom_killed(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    return x->t != NULL && str_eq(x->t->reason, "OOMKilled");
}

static void s_oom_killed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const char *lim = krc_kv_list_get(&x->c->limits, "memory");
    const char *req = krc_kv_list_get(&x->c->requests, "memory");
    size_t i;

    krc_buf_printf(s, "Container %s was OOM-killed by the kernel (reason OOMKilled", x->c->name);
    if (lim != NULL) {
        krc_buf_printf(s, ", memory limit %s)", lim);
    } else if (x->c->has_spec) {
        krc_buf_append_str(s, ", no memory limit in the pod spec)");
    } else {
        krc_buf_append_str(s, ")");
    }
    if (x->has_exit && x->exit_code != 137) {
        krc_buf_printf(s, " with exit code %d (on cgroup v1 the victim can be a child process)",
                       x->exit_code);
    }
    say_after(x, s);
    if (lim != NULL) {
        add_evidence(b, "memory limit %s, request %s", lim, req ? req : "(none)");
    }
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if ((str_eq(e->reason, "SystemOOM") || str_eq(e->reason, "OOMKilling")) &&
            ev_in_window(e, x->lo - 60, x->hi)) {
            evidence_event(b, e);
        }
    }
}

/* 2. evicted, from direct evidence */
static int m_evicted(struct dctx *x)
{
    /* The kubelet's own eviction wording (T.message may otherwise be the
     * application's log tail, where "evicted" means anything). */
    static const struct pattern evict_words[] = {
        {"the node was low on resource", NULL},
        {"pod ephemeral local storage usage exceeds", NULL},
        {"exceeded its local ephemeral storage limit", NULL},
        {"usage of emptydir volume", "exceeds the limit"},
    };
    size_t i;

    x->conf = KRC_CONFIDENCE_HIGH;
    x->ev = NULL;
    x->detail = NULL;
    if (str_eq(x->r->pod_reason, "Evicted")) {
        x->detail = "pod";
        return 1;
    }
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if (str_eq(e->reason, "Evicted") && event_of(x, e) && ev_in_window(e, x->lo, x->hi)) {
            x->ev = e;
            return 1;
        }
    }
    if (x->t != NULL && (str_eq(x->t->reason, "ContainerStatusUnknown") ||
                         str_has_ci(x->t->message, "could not be located when the pod was"))) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->detail = "unknown";
        return 1;
    }
    if (x->t != NULL && x->t->message != NULL &&
        search_patterns((const unsigned char *)x->t->message, strlen(x->t->message), evict_words,
                        NPAT(evict_words), &x->h)) {
        x->detail = "message";
        return 1;
    }
    return 0;
}

static void s_evicted(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->detail != NULL && strcmp(x->detail, "pod") == 0) {
        krc_buf_printf(s, "The kubelet evicted %s%s (status.reason Evicted",
                       x->r->name ? "pod " : "the pod", x->r->name ? x->r->name : "");
        if (x->r->pod_message != NULL) {
            quote(s, ": ", x->r->pod_message, 200, "");
        }
        krc_buf_append_str(s, ")");
        add_evidence(b, "pod status: reason Evicted%s%s", x->r->pod_message ? ": " : "",
                     x->r->pod_message ? x->r->pod_message : "");
    } else if (x->ev != NULL) {
        krc_buf_append_str(s, "The kubelet evicted the pod (event Evicted");
        quote(s, ": ", strip_combined(x->ev->message), 200, "");
        krc_buf_append_str(s, ")");
        evidence_event(b, x->ev);
    } else if (x->detail != NULL && strcmp(x->detail, "unknown") == 0) {
        krc_buf_printf(s,
                       "The kubelet could not locate container %s when the pod was terminated "
                       "(reason %s, ",
                       x->c->name, x->t->reason ? x->t->reason : "none");
        say_exit(x, s);
        krc_buf_append_str(s, "); this is what an eviction or a lost node leaves behind");
        add_unchecked(b, "no Evicted event was seen: an eviction, a node restart or a forced pod "
                         "deletion are all possible");
    } else {
        krc_buf_printf(s, "Container %s was stopped by an eviction", x->c->name);
        quote(s, " (", x->t->message, 200, ")");
    }
    if (x->t != NULL && x->t->message != NULL) {
        add_evidence(b, "termination message: %s", x->t->message);
    }
}

/* 3-4. probe kills named by a Killing event */
static int m_probe_event(struct dctx *x, const char *probe, const char *cap)
{
    x->ev = find_probe_kill(x->r, x->c, probe, x->lo, x->hi);
    x->ev2 = x->ev != NULL ? find_unhealthy(x->r, x->c, cap, x->lo, x->hi) : NULL;
    /* An undated kill event, or one with no termination time to place it
     * against, may belong to an earlier instance than the last one. */
    x->conf = x->ev != NULL && (x->hi <= 0 || ev_undated(x->ev)) ? KRC_CONFIDENCE_MEDIUM
                                                                 : KRC_CONFIDENCE_HIGH;
    return x->ev != NULL;
}

static int m_liveness_event(struct dctx *x)
{
    return m_probe_event(x, "liveness", "Liveness");
}

static int m_startup_event(struct dctx *x)
{
    return m_probe_event(x, "startup", "Startup");
}

static const char *probe_detail(const struct krc_report_event *unhealthy)
{
    const char *m;
    const char *colon;
    const char *detail;

    if (unhealthy == NULL) {
        return NULL;
    }
    m = strip_combined(unhealthy->message);
    colon = strstr(m, ": ");
    detail = colon != NULL ? colon + 2 : "";
    if (detail[0] == '\0' || (colon == NULL && str_has_ci(m, "probe failed:"))) {
        detail = "no output";
    }
    return detail;
}

static void s_probe_event(struct dctx *x, struct builder *b, struct krc_buf *s, int liveness)
{
    const char *detail = probe_detail(x->ev2);

    krc_buf_printf(s, "%s probe failed", liveness ? "Liveness" : "Startup");
    if (detail != NULL) {
        quote(s, " (", detail, 200, ")");
    }
    krc_buf_append_str(s, " and the kubelet killed the container");
    if (!liveness) {
        krc_buf_append_str(s, " before it finished starting");
    }
    if (x->has_exit) {
        krc_buf_printf(s, "; exit %d%s%s%s", x->exit_code, x->signal_name ? " (" : "",
                       x->signal_name ? x->signal_name : "", x->signal_name ? ")" : "");
    }
    say_after(x, s);
    evidence_event(b, x->ev);
    if (x->ev2 != NULL) {
        evidence_event(b, x->ev2);
    }
}

static void s_liveness_event(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_event(x, b, s, 1);
}

static void s_startup_event(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_event(x, b, s, 0);
}

/* 5. exec_format_error */
static int m_exec_format(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    /* the log and the termination message decide only a failure */
    return find_text(x, exec_format_patterns, NPAT(exec_format_patterns),
                     IN_RUNTIME | IN_POD | IN_EVENTS |
                         (failed_or_unknown(x) ? (unsigned)(IN_MSG | IN_LOG) : 0u));
}

static void s_exec_format(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    char line[200];

    hit_short(x, line, sizeof(line));
    krc_buf_printf(s,
                   "Container %s could not execute its binary: \"exec format error\" (built for "
                   "another CPU architecture or not an executable)",
                   x->c->name);
    quote_clean(s, ": ", line, "");
    evidence_hit(b, x);
}

/* 6-7. command_not_found, permission_denied */
static const char *start_text(struct dctx *x)
{
    size_t i;
    const struct krc_report_event *best = NULL;

    if (x->runtime != NULL) {
        return x->runtime;
    }
    /* A Failed event carries the start error; with a termination that is
     * not a start error, its Failed events belong to other attempts. */
    if (!x->start_error && x->has_exit) {
        return NULL;
    }
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if (str_eq(e->reason, "Failed") && ev_about(x->r, e, x->c) &&
            !str_has_ci(e->message, "pull") && !str_has_ci(e->message, "ErrImage") &&
            (x->hi == 0 || ev_in_window(e, x->t->finished_at - 120, x->hi)) &&
            (best == NULL || e->last_timestamp > best->last_timestamp)) {
            best = e;
        }
    }
    return best != NULL ? strip_combined(best->message) : NULL;
}

static int m_exec_log(struct dctx *x, const char *word)
{
    struct pattern p = {word, NULL};

    return x->log != NULL && tail_search(x->log, x->log_len, &p, 1, &x->h) &&
           (x->where = "log") != NULL;
}

/* runc's exec error as it reaches the container's log (runc >= 1.1:
 * "exec /entrypoint.sh: no such file or directory"; older:
 * "standard_init_linux.go:228: exec user process caused: no such file or
 * directory"). */
static int find_runc_exec_error(struct dctx *x, const char *what)
{
    struct tail *t;
    size_t i;
    int found = 0;

    x->runc_log = 0;
    if (x->log == NULL || !failed_or_unknown(x)) {
        return 0;
    }
    t = krc_malloc(sizeof(*t));
    if (t == NULL) {
        return 0;
    }
    collect_tail(x->log, x->log_len, KRC_DIAG_TAIL_LINES, t);
    for (i = t->n; i > 0 && !found; i--) {
        struct span l = strip_ts(t->lines[i - 1]);
        size_t at = find_ci(l.p, l.len, what);
        if (at != SIZE_MAX &&
            (starts_with(l.p, l.len, "exec ") || has_ci(l.p, l.len, "exec user process caused"))) {
            memset(&x->h, 0, sizeof(x->h));
            x->h.found = 1;
            x->h.line = t->lines[i - 1];
            x->h.at = (size_t)(l.p - t->lines[i - 1].p) + at;
            x->where = "log";
            x->runc_log = found = 1;
        }
    }
    krc_free(t);
    return found;
}

/* A shell that could not run a command, among the last lines of the log
 * ("/bin/sh: 1: celery: not found", "bash: /app/run.sh: Permission
 * denied", "/usr/bin/env: 'python': No such file or directory"). */
static int find_shell_error(struct dctx *x, const char *const *what, size_t n_what)
{
    static const char *const shells[] = {
        "/bin/sh: ", "sh: ", "/bin/bash: ", "bash: ", "/bin/ash: ", "/usr/bin/env: ", "env: "};
    struct tail *t;
    size_t i;
    size_t j;
    size_t k;
    int found = 0;

    if (x->log == NULL || (t = krc_malloc(sizeof(*t))) == NULL) {
        return 0;
    }
    collect_tail(x->log, x->log_len, 3, t);
    for (i = t->n; i > 0 && !found; i--) {
        struct span l = strip_ts(t->lines[i - 1]);
        for (j = 0; j < sizeof(shells) / sizeof(shells[0]) && !found; j++) {
            if (!starts_with(l.p, l.len, shells[j])) {
                continue;
            }
            for (k = 0; k < n_what && !found; k++) {
                size_t at = find_ci(l.p, l.len, what[k]);
                if (at != SIZE_MAX) {
                    memset(&x->h, 0, sizeof(x->h));
                    x->h.found = 1;
                    x->h.line = t->lines[i - 1];
                    x->h.at = (size_t)(l.p - t->lines[i - 1].p);
                    x->where = "log";
                    found = 1;
                }
            }
        }
    }
    krc_free(t);
    return found;
}

static int m_not_found(struct dctx *x)
{
    static const char *const shell_not_found[] = {": not found", "command not found",
                                                  "no such file or directory"};

    const char *st = start_text(x);

    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    x->detail = NULL;
    x->runc_log = 0;
    if (st != NULL && msg_not_found(st)) {
        x->conf = KRC_CONFIDENCE_HIGH;
        x->detail = st;
        return 1;
    }
    if (find_runc_exec_error(x, "no such file or directory")) {
        x->conf = KRC_CONFIDENCE_HIGH;
        return 1;
    }
    if (!x->has_exit && find_shell_error(x, shell_not_found, 3)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->runc_log = 2;
        return 1;
    }
    if (x->has_exit && x->exit_code == 127) {
        x->conf = m_exec_log(x, "not found") ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    return 0;
}

static void s_not_found(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->detail != NULL) {
        krc_buf_printf(s, "Container %s could not start: the command was not found", x->c->name);
        add_evidence(b, "runtime: %s", x->detail);
    } else if (x->runc_log == 2) {
        /* a shell's "not found": a command the shell (the entrypoint or a
         * script it runs) was asked to run */
        char line[200];
        hit_short(x, line, sizeof(line));
        krc_buf_printf(s, "Container %s stopped after its shell could not find a command",
                       x->c->name);
        quote_clean(s, " (the shell's message in the log: ", line, ")");
        evidence_hit(b, x);
    } else if (x->runc_log) {
        char line[200];
        hit_short(x, line, sizeof(line));
        krc_buf_printf(s, "Container %s could not execute its entrypoint, a file was not found",
                       x->c->name);
        quote_clean(s, " (the runtime's message in the log: ", line, ")");
        evidence_hit(b, x);
    } else {
        krc_buf_printf(s, "Container %s exited 127, the shell's code for \"command not found\"",
                       x->c->name);
        evidence_hit(b, x);
    }
}

static int m_permission(struct dctx *x)
{
    static const char *const shell_denied[] = {": permission denied"};

    const char *st = start_text(x);

    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    x->detail = NULL;
    x->runc_log = 0;
    if (st != NULL && msg_permission(st)) {
        x->conf = KRC_CONFIDENCE_HIGH;
        x->detail = st;
        return 1;
    }
    if (find_runc_exec_error(x, "permission denied")) {
        x->conf = KRC_CONFIDENCE_HIGH;
        return 1;
    }
    if (!x->has_exit && find_shell_error(x, shell_denied, 1)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->runc_log = 2;
        return 1;
    }
    if (x->has_exit && x->exit_code == 126) {
        x->conf = m_exec_log(x, "permission denied") ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    return 0;
}

static void s_permission(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->detail != NULL) {
        krc_buf_printf(s, "Container %s could not start: permission denied on the entrypoint",
                       x->c->name);
        add_evidence(b, "runtime: %s", x->detail);
    } else if (x->runc_log == 2) {
        /* a shell's "X: Permission denied" is the same for a file it could
         * not execute and one it could not write (a redirection) */
        char line[200];
        hit_short(x, line, sizeof(line));
        krc_buf_printf(s,
                       "Container %s stopped after its shell was denied access to a file it "
                       "tried to execute or write",
                       x->c->name);
        quote_clean(s, " (the shell's message in the log: ", line, ")");
        evidence_hit(b, x);
    } else if (x->runc_log) {
        char line[200];
        hit_short(x, line, sizeof(line));
        krc_buf_printf(s, "Container %s could not execute its entrypoint: permission denied",
                       x->c->name);
        quote_clean(s, " (the runtime's message in the log: ", line, ")");
        evidence_hit(b, x);
    } else {
        krc_buf_printf(s,
                       "Container %s exited 126, the shell's code for a command that could not "
                       "be executed (e.g. permission denied, a missing execute bit)",
                       x->c->name);
        evidence_hit(b, x);
    }
}

/* 8. disk_full */
static int m_disk_full(struct dctx *x)
{
    if (!failed_or_unknown(x) && !x->start_error) {
        return 0;
    }
    if (find_text(x, disk_full_patterns, NPAT(disk_full_patterns),
                  IN_RUNTIME | IN_POD | IN_EVENTS | IN_MSG)) {
        x->conf = KRC_CONFIDENCE_HIGH;
        return 1;
    }
    x->conf = KRC_CONFIDENCE_MEDIUM;
    return find_text(x, disk_full_patterns, NPAT(disk_full_patterns), IN_LOG_TAIL);
}

static void s_disk_full(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    char line[200];

    hit_short(x, line, sizeof(line));
    krc_buf_printf(s, "Container %s ran out of disk space (\"No space left on device\"",
                   x->c->name);
    if (x->has_exit) {
        krc_buf_printf(s, ", exit %d", x->exit_code);
    }
    krc_buf_append_str(s, ")");
    quote_clean(s, ": ", line, "");
    evidence_hit(b, x);
}

/* 9. start_failed */
static int m_start_failed(struct dctx *x)
{
    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    x->detail = start_text(x);
    if (x->start_error) {
        x->conf = x->detail != NULL || (x->t != NULL && is_start_reason(x->t->reason))
                      ? KRC_CONFIDENCE_HIGH
                      : KRC_CONFIDENCE_MEDIUM;
        return 1;
    }
    if (x->has_exit && x->exit_code == 128) {
        x->conf = KRC_CONFIDENCE_LOW;
        return 1;
    }
    x->conf = KRC_CONFIDENCE_HIGH;
    return find_text(x, start_patterns, NPAT(start_patterns), IN_RUNTIME | IN_EVENTS);
}

/* The specific end of a nested runtime error ("failed to create containerd
 * task: ...: error during container init: error mounting ...: unknown"). */
static const char *runtime_core(const char *msg)
{
    static const char *const layers[] = {
        "error during container init: ",
        "unable to start container process: ",
        "runc create failed: ",
        "oci runtime create failed: ",
        "failed to create shim task: ",
        "failed to create containerd task: ",
        "failed to start containerd task: ",
        "error: ",
    };
    size_t i;

    for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
        size_t at = find_ci((const unsigned char *)msg, strlen(msg), layers[i]);
        if (at != SIZE_MAX && msg[at + strlen(layers[i])] != '\0') {
            return msg + at + strlen(layers[i]);
        }
    }
    return msg;
}

static void s_start_failed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const char *reason = x->t != NULL && is_start_reason(x->t->reason) ? x->t->reason
                         : is_start_reason(x->c->state_reason)         ? x->c->state_reason
                                                                       : NULL;
    char line[240];

    krc_buf_printf(s, "The container runtime could not start container %s", x->c->name);
    if (reason != NULL) {
        krc_buf_printf(s, " (reason %s)", reason);
    } else if (x->has_exit && x->exit_code == 128) {
        krc_buf_append_str(s, " (exit 128, the code a start error reports)");
    }
    if (x->detail != NULL) {
        const char *core = runtime_core(x->detail);
        size_t n = strlen(core);
        if (n >= 9 && strcmp(core + n - 9, ": unknown") == 0) {
            n -= 9; /* runc's error class, not information */
        }
        krc_diagnose_sanitize(core, n, line, sizeof(line));
        quote_clean(s, ": ", line, "");
        add_evidence(b, "runtime: %s", x->detail);
    } else if (x->ev != NULL) {
        const char *core = runtime_core(strip_combined(x->ev->message));
        krc_diagnose_sanitize(core, strlen(core), line, sizeof(line));
        quote_clean(s, ": ", line, "");
        evidence_hit(b, x);
    } else if (x->h.found) {
        hit_short(x, line, sizeof(line));
        quote_clean(s, ": ", line, "");
        evidence_hit(b, x);
    }
}

/* 10. gpu_out_of_memory */
static int m_gpu_oom(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    return failed_or_unknown(x) &&
           find_text(x, gpu_oom_patterns, NPAT(gpu_oom_patterns), IN_LOG | IN_MSG);
}

static void s_text_cause(struct dctx *x, struct builder *b, struct krc_buf *s, const char *what)
{
    char line[200];

    hit_short(x, line, sizeof(line));
    krc_buf_printf(s, "Container %s %s and ", x->c->name, what);
    say_exited(x, s);
    say_after(x, s);
    quote_clean(s, " (", line, ")");
    evidence_hit(b, x);
}

static void s_gpu_oom(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "ran out of GPU memory");
}

/* 11. app_out_of_memory */
static int m_app_oom(struct dctx *x)
{
    if (!failed_or_unknown(x)) {
        return 0;
    }
    x->conf = x->has_exit && (x->exit_code == 137 || x->exit_code == 143) ? KRC_CONFIDENCE_MEDIUM
                                                                          : KRC_CONFIDENCE_HIGH;
    x->ev = NULL;
    if (find_text(x, app_oom_patterns, NPAT(app_oom_patterns), IN_MSG | IN_LOG_TAIL)) {
        /* "OutOfMemoryError: unable to create native thread" is a thread limit */
        return !has_ci(x->h.line.p, x->h.line.len, "native thread");
    }
    return find_python_memory_error(x);
}

static void s_app_oom(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "hit its language runtime's own heap limit");
}

/* 12-14. fatal signals: the exit code names the signal; a log line alone
 * counts only when the exit code names no other signal. */
static int m_signal(struct dctx *x, int signo, const struct pattern *pats, size_t n)
{
    int text;

    x->ev = NULL;
    if (x->signal == signo) {
        text = find_text(x, pats, n, IN_MSG | IN_LOG_TAIL);
        x->conf = text ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    if ((!x->has_exit || x->exit_code != 0) && x->signal == 0 &&
        !(x->has_exit && (x->exit_code == 137 || x->exit_code == 143)) &&
        find_text(x, pats, n, IN_MSG | IN_LOG_TAIL)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        return 1;
    }
    return 0;
}

static int m_segfault(struct dctx *x)
{
    return m_signal(x, 11, segv_patterns, NPAT(segv_patterns));
}

static int m_sigill(struct dctx *x)
{
    static const struct pattern cpu_check[] = {
        {"compiled to use avx", NULL},
        {"instructions, but these aren't available", NULL},
    };

    if (m_signal(x, 4, sigill_patterns, NPAT(sigill_patterns))) {
        return 1;
    }
    /* A library that checks the CPU first and then calls abort() (exit 134). */
    x->conf = KRC_CONFIDENCE_MEDIUM;
    return failed_or_unknown(x) && !(x->has_exit && (x->exit_code == 137 || x->exit_code == 143)) &&
           find_text(x, cpu_check, NPAT(cpu_check), IN_MSG | IN_LOG_TAIL);
}

static int m_abort(struct dctx *x)
{
    return m_signal(x, 6, abort_patterns, NPAT(abort_patterns));
}

static void s_signal(struct dctx *x, struct builder *b, struct krc_buf *s, const char *what)
{
    char line[200];

    krc_buf_printf(s, "Container %s %s (", x->c->name, what);
    say_exit(x, s);
    krc_buf_append_str(s, ")");
    say_after(x, s);
    if (x->h.found) {
        hit_short(x, line, sizeof(line));
        quote_clean(s, ": ", line, "");
        evidence_hit(b, x);
    }
}

static void s_segfault(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_signal(x, b, s, "crashed with a segmentation fault");
}

static void s_sigill(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->signal != 4 && x->h.found && !has_ci(x->h.line.p, x->h.line.len, "illegal instr")) {
        s_signal(x, b, s, "stopped after reporting a CPU instruction set the node lacks");
        return;
    }
    s_signal(x, b, s,
             "died on an illegal instruction (SIGILL: usually a CPU feature, e.g. AVX, that "
             "the node lacks)");
}

static void s_abort(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_signal(x, b, s, "aborted (SIGABRT: a failed assertion, abort() or heap corruption)");
}

/* 15. gpu_error */
static int m_gpu_error(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    if (!failed_or_unknown(x)) {
        return 0;
    }
    if (find_text(x, gpu_error_patterns, NPAT(gpu_error_patterns), IN_LOG | IN_MSG)) {
        return 1;
    }
    memset(&x->h, 0, sizeof(x->h));
    if (x->log != NULL && find_xid(x->log, x->log_len, &x->h)) {
        x->where = "log";
        return 1;
    }
    if (x->msg != NULL && find_xid(x->msg, x->msg_len, &x->h)) {
        x->where = "termination message";
        return 1;
    }
    return 0;
}

static void s_gpu_error(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "hit a GPU device or driver error");
}

/* 16. dependency_unreachable */
static int m_dependency(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_MEDIUM;
    x->ev = NULL;
    memset(&x->h, 0, sizeof(x->h));
    if (!failed_or_unknown(x)) {
        return 0;
    }
    if (x->log != NULL && find_dependency(x->log, x->log_len, &x->h)) {
        x->where = "log";
        return 1;
    }
    if (x->msg != NULL && find_dependency(x->msg, x->msg_len, &x->h)) {
        x->where = "termination message";
        return 1;
    }
    return 0;
}

static void s_dependency(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_text_cause(x, b, s, "gave up because a network dependency could not be reached");
}

/* 17. app_error */
static int m_app_error(struct dctx *x)
{
    const unsigned char *src = NULL; /* the text holding the error line */
    size_t src_len = 0;
    int line;

    x->ev = NULL;
    memset(&x->h, 0, sizeof(x->h));
    if (x->log != NULL && find_error_line(x->log, x->log_len, &x->h)) {
        x->where = "log";
        src = x->log;
        src_len = x->log_len;
    } else if (x->msg != NULL && find_error_line(x->msg, x->msg_len, &x->h)) {
        x->where = "termination message";
        src = x->msg;
        src_len = x->msg_len;
    }
    line = src != NULL;
    if (x->has_exit && x->exit_code != 0 && x->exit_code != 137 && x->exit_code != 143) {
        x->conf = line ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    /* No exit code: a crash header ending the log is the best there is;
     * or, for a container that shows it restarted (CrashLoopBackOff, a
     * restart count, a previous state), an error as the very last line the
     * previous instance wrote. */
    x->conf = KRC_CONFIDENCE_LOW;
    if (x->has_exit || !line) {
        return 0;
    }
    return is_error_header(x->h.line) || ((str_eq(x->c->state_reason, "CrashLoopBackOff") ||
                                           x->c->restart_count > 0 || x->c->last.present) &&
                                          is_last_line(src, src_len, x->h.line));
}

static void s_app_error(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const char *meaning = signal_meaning(x->signal);
    char line[200];

    if (!x->has_exit) {
        krc_buf_printf(s, "Container %s stopped (exit code unknown)", x->c->name);
    } else if (x->signal_name != NULL) {
        krc_buf_printf(s, "Container %s died from %s (exit %d%s%s)", x->c->name, x->signal_name,
                       x->exit_code, meaning ? ": " : "", meaning ? meaning : "");
    } else {
        krc_buf_printf(s, "Container %s exited with code %d", x->c->name, x->exit_code);
    }
    say_after(x, s);
    if (x->h.found) {
        char lead[64];
        hit_short(x, line, sizeof(line));
        snprintf(lead, sizeof(lead), "; the %s ends with: ", x->where);
        quote_clean(s, lead, line, "");
        evidence_hit(b, x);
    }
}

/* 18. evicted, inferred from node pressure */
static const struct krc_report_node_condition *node_pressure(const struct krc_report *r)
{
    size_t i;

    for (i = 0; r->node.present && i < r->node.n_conditions; i++) {
        const struct krc_report_node_condition *nc = &r->node.conditions[i];
        if (str_eq(nc->status, "True") &&
            (str_eq(nc->type, "MemoryPressure") || str_eq(nc->type, "DiskPressure") ||
             str_eq(nc->type, "PIDPressure"))) {
            return nc;
        }
    }
    return NULL;
}

static int m_evicted_pressure(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_LOW;
    return (!x->has_exit || x->exit_code == 137) && x->t != NULL && node_pressure(x->r) != NULL;
}

static void s_evicted_pressure(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_node_condition *nc = node_pressure(x->r);

    krc_buf_printf(s, "Container %s was killed (", x->c->name);
    say_exit(x, s);
    krc_buf_printf(s,
                   ") while node %s reports %s=True; under node pressure the kubelet evicts "
                   "pods and reclaims resources",
                   x->r->node.name ? x->r->node.name : "?", nc->type);
    add_unchecked(b, "no Evicted event was seen: the node pressure is the only sign of an "
                     "eviction");
}

/* 19-20. probes configured in the spec, no kill event seen */
static int probe_fits(const struct dctx *x, const struct krc_report_probe *p, int startup)
{
    int64_t first = (int64_t)p->initial_delay + (int64_t)p->period * (p->failure_threshold - 1);
    int64_t grace = p->grace_period >= 0 ? p->grace_period : x->r->grace_period;

    if (x->run < 0) {
        return 1; /* timing unknown: the confidence says so */
    }
    if (x->run < first) {
        return 0;
    }
    /* A startup probe stops probing once it succeeds: its kill comes at the
     * end of its budget, plus the stop time. */
    return !startup || x->run <= first + p->period + p->timeout + grace + 10;
}

static int has_unhealthy(const struct dctx *x, const char *cap)
{
    return find_unhealthy(x->r, x->c, cap, x->lo, x->hi) != NULL;
}

static int m_probe_spec(struct dctx *x, int startup)
{
    const struct krc_report_probe *p = startup ? &x->c->startup : &x->c->liveness;
    const char *cap = startup ? "Startup" : "Liveness";

    x->probe = p->present ? p : NULL;
    x->ev2 = NULL;
    /* A status without a termination: failures of the probe seen in events. */
    if (!x->has_exit) {
        if (has_unhealthy(x, cap) &&
            (x->c->restart_count > 0 || str_eq(x->c->state_reason, "CrashLoopBackOff"))) {
            x->ev2 = find_unhealthy(x->r, x->c, cap, x->lo, x->hi);
            x->conf = KRC_CONFIDENCE_MEDIUM;
            return 1;
        }
        return 0;
    }
    if (!p->present || x->window_events > 0 ||
        !(x->exit_code == 0 || x->exit_code == 137 || x->exit_code == 143) ||
        !probe_fits(x, p, startup)) {
        return 0;
    }
    x->conf = x->run >= 0 ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    return 1;
}

static int m_startup_spec(struct dctx *x)
{
    return m_probe_spec(x, 1);
}

static int m_liveness_spec(struct dctx *x)
{
    return m_probe_spec(x, 0);
}

static void s_probe_spec(struct dctx *x, struct builder *b, struct krc_buf *s, int startup)
{
    const struct krc_report_probe *p = x->probe;

    if (x->ev2 != NULL) {
        krc_buf_printf(s,
                       "%s probe failures were seen for container %s, which is restarting; "
                       "probe failures past the threshold make the kubelet restart it (no kill "
                       "event seen)",
                       startup ? "Startup" : "Liveness", x->c->name);
        evidence_event(b, x->ev2);
        return;
    }
    krc_buf_printf(s, "Container %s ", x->c->name);
    say_exited(x, s);
    krc_buf_printf(s,
                   "%s%s; a %s probe is configured (%s, first possible kill after %ds) and "
                   "fits the run time: probe configured; no kill event seen",
                   x->dur[0] ? " after " : "", x->dur, startup ? "startup" : "liveness", p->handler,
                   p->initial_delay + p->period * (p->failure_threshold - 1));
    add_evidence(b,
                 "%s probe: %s, initialDelaySeconds %d, periodSeconds %d, timeoutSeconds %d, "
                 "failureThreshold %d",
                 startup ? "startup" : "liveness", p->handler, p->initial_delay, p->period,
                 p->timeout, p->failure_threshold);
    if (x->run < 0) {
        add_unchecked(b, "start time unknown: the run time could not be compared with the probe "
                         "timing");
    }
}

static void s_startup_spec(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_spec(x, b, s, 1);
}

static void s_liveness_spec(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_spec(x, b, s, 0);
}

/* 21. completed */
static int m_completed(struct dctx *x)
{
    if (!x->has_exit || x->exit_code != 0) {
        return 0;
    }
    if (x->c->has_spec && !x->c->has_liveness && !x->c->has_startup) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
    } else {
        x->conf = x->window_events > 0 ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    }
    return 1;
}

static void s_completed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    (void)b;
    krc_buf_printf(s, "Container %s exited 0 (%s)", x->c->name,
                   x->t->reason ? x->t->reason : "no reason given");
    say_after(x, s);
    if (!x->from_last) {
        krc_buf_append_str(s, " (its current state)");
    } else if (x->c->is_sidecar) {
        krc_buf_append_str(s, " and was restarted: sidecars (restartPolicy Always) always restart");
    } else if (!x->c->is_init) {
        krc_buf_printf(s, " and was restarted (restartPolicy %s)",
                       x->r->restart_policy ? x->r->restart_policy : "not given");
    }
}

/* 22-23. killed, terminated */
static int m_killed(struct dctx *x)
{
    x->conf =
        x->window_events > 0 && x->r->node.present ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    return x->has_exit && x->exit_code == 137;
}

static int m_terminated(struct dctx *x)
{
    x->conf = x->window_events > 0 ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    return x->has_exit && x->exit_code == 143;
}

/* What the diagnosis looked at to rule out other killers, and what it
 * could not see. */
static void say_checked(struct dctx *x, struct krc_buf *s, int want_node)
{
    int no_events = x->window_events == 0;
    int no_node = want_node && !x->r->node.present;

    if (!no_events) {
        krc_buf_printf(s,
                       "; no probe kill or eviction among the %zu event%s of the pod from that "
                       "time",
                       x->window_events, x->window_events == 1 ? "" : "s");
    }
    if (no_events || no_node) {
        krc_buf_printf(s, "; %s cannot be ruled out: no %s%s%s %s given",
                       want_node ? "the OOM killer or a probe kill" : "a probe kill",
                       no_events ? "events" : "", no_events && no_node ? "/" : "",
                       no_node ? "node" : "", no_events && no_node ? "were" : "was");
    }
}

static void s_killed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    (void)b;
    krc_buf_printf(s, "Container %s was killed (SIGKILL, exit 137, reason %s)", x->c->name,
                   x->t->reason ? x->t->reason : "none");
    say_after(x, s);
    say_checked(x, s, 1);
}

static void s_terminated(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    (void)b;
    krc_buf_printf(s, "Container %s received SIGTERM and exited 143", x->c->name);
    say_after(x, s);
    say_checked(x, s, 0);
}

/* 24. unknown */
static int m_unknown(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_LOW;
    return 1;
}

static void s_unknown(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    krc_buf_printf(s, "Not enough evidence to name a cause for container %s", x->c->name);
    if (x->t == NULL) {
        krc_buf_printf(s, " (state %s%s%s; no terminated state was given)",
                       x->c->state == KRC_REPORT_STATE_RUNNING   ? "running"
                       : x->c->state == KRC_REPORT_STATE_WAITING ? "waiting"
                                                                 : "unknown",
                       x->c->state_reason ? ": " : "",
                       x->c->state_reason ? x->c->state_reason : "");
    } else if (!x->has_exit) {
        krc_buf_printf(s, " (terminated, reason %s, no exitCode given)",
                       x->t->reason ? x->t->reason : "none");
    }
    if (x->log != NULL) {
        struct tail *t = krc_malloc(sizeof(*t));
        char line[KRC_DIAG_EVIDENCE_MAX];
        if (t == NULL) {
            b->oom = 1;
            return;
        }
        collect_tail(x->log, x->log_len, 1, t);
        if (t->n > 0) {
            struct span l = strip_ts(t->lines[t->n - 1]);
            krc_diagnose_sanitize(l.p, l.len, line, sizeof(line) - 40);
            add_evidence(b, "the log ends with: %s", line);
        }
        krc_free(t);
    }
}

/* ---- the table ----------------------------------------------------------- */

/* kubectl commands a rule suggests (bit set). */
enum {
    CMD_LOGS_PREV = 1u << 0, /* kubectl logs -n NS POD -c C --previous */
    CMD_DESCRIBE = 1u << 1,  /* kubectl describe pod -n NS POD */
    CMD_EVENTS = 1u << 2,    /* kubectl get events -n NS --field-selector involvedObject.name=POD */
    CMD_NODE = 1u << 3,      /* kubectl describe node N */
    CMD_TOP = 1u << 4,       /* kubectl top pod -n NS POD --containers */
    CMD_ARCH = 1u << 5,      /* kubectl get node N -L kubernetes.io/arch */
};

struct rule {
    const char *name; /* rule id: the cause, or cause + how it is recognised */
    enum krc_cause cause;
    int (*match)(struct dctx *x); /* 1: holds (sets x->conf and what it found) */
    void (*say)(struct dctx *x, struct builder *b, struct krc_buf *s); /* summary, evidence */
    const char *next_step;
    unsigned cmds;
};

/* Precedence order: the first rule that holds names the cause (docs/causes.md). */
static const struct rule rules[] = {
    {"oom_killed", KRC_CAUSE_OOM_KILLED, m_oom_killed, s_oom_killed,
     "Compare the container's memory use with its limit (kubectl top) and raise the memory limit "
     "or reduce its memory use",
     CMD_TOP | CMD_DESCRIBE | CMD_LOGS_PREV},
    {"evicted", KRC_CAUSE_EVICTED, m_evicted, s_evicted,
     "Check the node's pressure conditions and the pod's ephemeral-storage and memory use; set "
     "requests/limits that fit, or move the pod to a node with room",
     CMD_DESCRIBE | CMD_NODE | CMD_EVENTS},
    {"liveness_probe_failed", KRC_CAUSE_LIVENESS_PROBE_FAILED, m_liveness_event, s_liveness_event,
     "Check why the liveness endpoint failed (the log around the kill) and whether the probe's "
     "timeoutSeconds/failureThreshold fit the application's pauses",
     CMD_LOGS_PREV | CMD_DESCRIBE | CMD_EVENTS},
    {"startup_probe_failed", KRC_CAUSE_STARTUP_PROBE_FAILED, m_startup_event, s_startup_event,
     "Give the application more time to start (startupProbe failureThreshold x periodSeconds) "
     "or find what slows its start in the log",
     CMD_LOGS_PREV | CMD_DESCRIBE | CMD_EVENTS},
    {"exec_format_error", KRC_CAUSE_EXEC_FORMAT_ERROR, m_exec_format, s_exec_format,
     "Build or pull the image for the node's CPU architecture (docker buildx --platform), or "
     "schedule the pod on nodes of the image's architecture",
     CMD_ARCH | CMD_DESCRIBE},
    {"command_not_found", KRC_CAUSE_COMMAND_NOT_FOUND, m_not_found, s_not_found,
     "Check the command/args of the container against the image (the binary's path, $PATH, the "
     "entrypoint script's interpreter line)",
     CMD_DESCRIBE | CMD_LOGS_PREV},
    {"permission_denied", KRC_CAUSE_PERMISSION_DENIED, m_permission, s_permission,
     "Give the container's user access to the file named: execute permission for a program "
     "(chmod +x in the image, a noexec mount), write permission for a data file (fsGroup, "
     "runAsUser, the volume's owner)",
     CMD_DESCRIBE | CMD_LOGS_PREV},
    {"disk_full", KRC_CAUSE_DISK_FULL, m_disk_full, s_disk_full,
     "Find which volume is full (the path in the message: emptyDir, PVC or the node's disk) and "
     "free or enlarge it",
     CMD_LOGS_PREV | CMD_DESCRIBE | CMD_NODE},
    {"start_failed", KRC_CAUSE_START_FAILED, m_start_failed, s_start_failed,
     "Read the runtime error in the pod's events and fix what it names (a mount, a missing "
     "ConfigMap/Secret, the security context, the cgroup or the runtime on the node)",
     CMD_DESCRIBE | CMD_EVENTS | CMD_NODE},
    {"gpu_out_of_memory", KRC_CAUSE_GPU_OUT_OF_MEMORY, m_gpu_oom, s_gpu_oom,
     "Reduce the GPU memory the job needs (batch size, sequence length, model sharding) or run it "
     "on GPUs with more memory",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"app_out_of_memory", KRC_CAUSE_APP_OUT_OF_MEMORY, m_app_oom, s_app_oom,
     "Raise the runtime's heap limit (-Xmx, --max-old-space-size, GOMEMLIMIT) within the "
     "container's memory limit, or find what fills the heap",
     CMD_LOGS_PREV | CMD_TOP | CMD_DESCRIBE},
    {"segfault", KRC_CAUSE_SEGFAULT, m_segfault, s_segfault,
     "Read the log before the crash and get a core dump or stack trace; check native libraries "
     "and the image version that started crashing",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"illegal_instruction", KRC_CAUSE_ILLEGAL_INSTRUCTION, m_sigill, s_sigill,
     "Compare the CPU features the binary needs (AVX, AVX2, x86-64-v3) with the node's CPU; "
     "build for a baseline CPU or schedule on nodes that have the feature",
     CMD_LOGS_PREV | CMD_NODE},
    {"aborted", KRC_CAUSE_ABORTED, m_abort, s_abort,
     "Read the assertion or abort message at the end of the log and get a stack trace of the "
     "abort",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"gpu_error", KRC_CAUSE_GPU_ERROR, m_gpu_error, s_gpu_error,
     "Check the node's GPU (driver version, Xid errors in the node's kernel log, the device "
     "plugin) and drain the node if a GPU is faulty",
     CMD_NODE | CMD_LOGS_PREV},
    {"dependency_unreachable", KRC_CAUSE_DEPENDENCY_UNREACHABLE, m_dependency, s_dependency,
     "Check that the dependency named in the log is up and reachable from the pod (its Service, "
     "DNS name, NetworkPolicy, credentials)",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"app_error", KRC_CAUSE_APP_ERROR, m_app_error, s_app_error,
     "Read the end of the previous log for the error that made the application exit",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"evicted_node_pressure", KRC_CAUSE_EVICTED, m_evicted_pressure, s_evicted_pressure,
     "Check the node's pressure conditions and events, and the pod's requests/limits",
     CMD_NODE | CMD_EVENTS | CMD_DESCRIBE},
    {"startup_probe_configured", KRC_CAUSE_STARTUP_PROBE_FAILED, m_startup_spec, s_startup_spec,
     "Check the pod's events right after the next restart for a startup probe kill, and whether "
     "the startup probe's budget fits the start time",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"liveness_probe_configured", KRC_CAUSE_LIVENESS_PROBE_FAILED, m_liveness_spec, s_liveness_spec,
     "Check the pod's events right after the next restart for a liveness probe kill, and test "
     "the probe's command or endpoint by hand",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"completed", KRC_CAUSE_COMPLETED, m_completed, s_completed,
     "If the program is meant to finish, run it as a Job; if it is a server, find in its log why "
     "it exited 0",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"killed", KRC_CAUSE_KILLED, m_killed, s_killed,
     "Find who sent SIGKILL: the pod's events (probe kill, eviction), the node's kernel log (OOM "
     "killer) and the application's own supervisor or timeout",
     CMD_EVENTS | CMD_NODE | CMD_LOGS_PREV},
    {"terminated", KRC_CAUSE_TERMINATED, m_terminated, s_terminated,
     "Find who sent SIGTERM: the pod's events (probe kill, deletion), a sidecar or supervisor in "
     "the pod, or the application itself",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"unknown", KRC_CAUSE_UNKNOWN, m_unknown, s_unknown,
     "Gather the missing evidence: the pod's lastState, its events and the previous log",
     CMD_DESCRIBE | CMD_EVENTS | CMD_LOGS_PREV},
};

#define N_RULES (sizeof(rules) / sizeof(rules[0]))

/* A Kubernetes name that can be pasted into a shell unquoted. */
static int name_ok(const char *s)
{
    size_t i;

    if (s == NULL || s[0] == '\0' || s[0] == '-' || strlen(s) > 253) {
        return 0;
    }
    for (i = 0; s[i] != '\0'; i++) {
        if (!(is_alnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '.' || s[i] == '_')) {
            return 0;
        }
    }
    return 1;
}

static void add_commands(struct builder *b, const struct dctx *x, unsigned cmds)
{
    const struct krc_report *r = x->r;
    int pod = name_ok(r->namespace) && name_ok(r->name);
    int node = name_ok(r->node_name);
    char line[800];

    if ((cmds & CMD_LOGS_PREV) && pod && name_ok(x->c->name)) {
        snprintf(line, sizeof(line), "kubectl logs -n %s %s -c %s --previous", r->namespace,
                 r->name, x->c->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_DESCRIBE) && pod) {
        snprintf(line, sizeof(line), "kubectl describe pod -n %s %s", r->namespace, r->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_EVENTS) && pod) {
        snprintf(line, sizeof(line),
                 "kubectl get events -n %s --field-selector involvedObject.name=%s "
                 "--sort-by=.lastTimestamp",
                 r->namespace, r->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_TOP) && pod) {
        snprintf(line, sizeof(line), "kubectl top pod -n %s %s --containers", r->namespace,
                 r->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_NODE) && node) {
        snprintf(line, sizeof(line), "kubectl describe node %s", r->node_name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_ARCH) && node) {
        snprintf(line, sizeof(line), "kubectl get node %s -L kubernetes.io/arch", r->node_name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
}

/* What could not be seen, for a diagnosis that is not already certain. */
static void add_missing(struct builder *b, const struct dctx *x, const struct rule *rule)
{
    const struct krc_report *r = x->r;
    int sure = x->conf == KRC_CONFIDENCE_HIGH;

    if (x->t == NULL) {
        add_unchecked(b, "no terminated state (lastState.terminated) was given: the previous "
                         "instance's exit code, reason and run time are unknown");
    } else if (!x->has_exit) {
        add_unchecked(b, "the terminated state has no exitCode: the rules that read exit codes "
                         "could not be applied");
    } else if (x->t->started_at == 0 && !x->start_error) {
        add_unchecked(b, "start time unknown: how long the instance ran could not be checked");
    }
    if (sure) {
        return;
    }
    if (x->pod_events == 0) {
        add_unchecked(b, "no pod events were available, so a liveness or startup probe kill or "
                         "an eviction cannot be ruled out");
    } else if (x->hi > 0 && x->window_events == 0) {
        add_unchecked(b, "no pod events from the time of this termination were available "
                         "(events expire after about an hour), so a probe kill cannot be ruled "
                         "out");
    }
    if (!r->node.present && rule->cause != KRC_CAUSE_COMPLETED) {
        add_unchecked(b, "no node object was given: node pressure and the node's state were "
                         "not checked");
    }
    if (x->log == NULL && !x->start_error) {
        if (r->log != NULL && r->log_len > 0) {
            add_unchecked(b,
                          "the previous log given is of container %s: the last messages of "
                          "container %s were not read",
                          r->log_container ? r->log_container : "?", x->c->name);
        } else if (r->log_flags & KRC_REPORT_LOG_EMPTY) {
            add_unchecked(b, "the previous log was empty: the application's last messages could "
                             "not be read");
        } else {
            add_unchecked(b, "no previous log was available: the application's last messages "
                             "could not be read");
        }
    }
    if (!x->c->has_spec) {
        add_unchecked(b, "the container spec was not given: probes and resource limits could "
                         "not be checked");
    }
}

static void add_common_evidence(struct builder *b, const struct dctx *x)
{
    char when_s[32];
    char when_f[32];
    char code[48];

    if (x->t == NULL) {
        return;
    }
    format_time(x->t->started_at, when_s, sizeof(when_s));
    format_time(x->t->finished_at, when_f, sizeof(when_f));
    if (x->has_exit) {
        snprintf(code, sizeof(code), "exitCode=%d%s%s%s", x->exit_code, x->signal_name ? " (" : "",
                 x->signal_name ? x->signal_name : "", x->signal_name ? ")" : "");
    } else {
        snprintf(code, sizeof(code), "exitCode missing");
    }
    add_evidence(b, "%s: reason=%s %s, started %s, finished %s%s%s",
                 x->from_last ? "lastState.terminated" : "state.terminated",
                 x->t->reason ? x->t->reason : "(none)", code,
                 x->t->started_at > 0 ? when_s
                 : x->start_error     ? "never (a start error)"
                                      : "unknown",
                 x->t->finished_at > 0 ? when_f : "unknown", x->dur[0] ? ", ran " : "", x->dur);
}

static void finish(struct builder *b, struct dctx *x, struct krc_buf *s)
{
    const struct krc_report *r = x->r;
    const struct krc_report_container *c = x->c;
    struct krc_diagnosis *d = b->d;
    int crashloop =
        c->state == KRC_REPORT_STATE_WAITING && str_eq(c->state_reason, "CrashLoopBackOff");
    size_t i;

    if (c->restart_count > 0) {
        krc_buf_printf(s, "; %d restart%s", c->restart_count, c->restart_count == 1 ? "" : "s");
    }
    if (d->gpus > 0) {
        krc_buf_printf(s, "; the pod holds %ld GPU%s%s", d->gpus, d->gpus == 1 ? "" : "s",
                       crashloop ? " while crash-looping" : "");
        add_evidence(b, "the pod holds %ld GPU%s%s", d->gpus, d->gpus == 1 ? "" : "s",
                     crashloop ? " while it crash-loops" : "");
    }
    if (c->state == KRC_REPORT_STATE_WAITING && c->state_reason != NULL) {
        add_evidence(b, "state: waiting %s%s%s", c->state_reason, c->state_message ? ": " : "",
                     c->state_message ? c->state_message : "");
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (str_eq(e->reason, "BackOff") && krc_report_event_matches(r, e, c) &&
            str_has_ci(e->message, "restarting failed container")) {
            evidence_event(b, e);
            break;
        }
    }
    node_evidence(b, r);
    if (r->log_flags & KRC_REPORT_LOG_CAPPED) {
        add_evidence(b, "the previous log was read only up to the transfer cap; its last "
                        "lines were not seen");
    } else if (r->log_flags & KRC_REPORT_LOG_TRUNCATED) {
        add_evidence(b, "the previous log was truncated; only its end was analysed");
    }
}

static int set_str(struct builder *b, char **dst, const char *src)
{
    krc_free(*dst);
    *dst = krc_strdup(src);
    if (*dst == NULL) {
        b->oom = 1;
        return -1;
    }
    return 0;
}

/* Run the table on x; returns the rule that holds (the last one always does). */
static const struct rule *first_rule(struct dctx *x)
{
    size_t i;

    for (i = 0; i < N_RULES; i++) {
        if (rules[i].match(x)) {
            return &rules[i];
        }
    }
    return &rules[N_RULES - 1];
}

/* Does any container status say something about restarts: a state, a
 * previous state or a restart count? (The API server always sends a state;
 * a paste may have lost all three.) */
static int any_state_shown(const struct krc_report *r)
{
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        if (c->has_status &&
            (c->state != KRC_REPORT_STATE_NONE || c->last.present || c->restart_count_known)) {
            return 1;
        }
    }
    return 0;
}

/* No container has a termination: a pasted status may still show one that
 * restarts (waiting in back-off or a start error, a restart count, a
 * terminated state without exitCode) or a pod the kubelet evicted. */
static const struct krc_report_container *pick_partial(const struct krc_report *r)
{
    const struct krc_report_container *best = NULL;
    const struct krc_report_container *done = NULL;
    int best_score = 0;
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        int score = 0;
        if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present &&
            !c->state_term.exit_code_missing && c->state_term.exit_code == 0 &&
            ((c->is_init && !c->is_sidecar) || c->restart_count == 0)) {
            /* Exited 0 and never restarted: only worth explaining when
             * nothing else is, and not a container that simply completed
             * (reason Completed with a restart count of 0, or an init
             * container: a normal end). An exit 0 with reason OOMKilled or
             * Error, or a Completed one whose restart count was not given,
             * is still a termination to look at. */
            if (done == NULL && (!str_eq(c->state_term.reason, "Completed") ||
                                 (!c->is_init && !c->restart_count_known))) {
                done = c;
            }
            continue;
        }
        if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present) {
            score = 4;
        } else if (c->state == KRC_REPORT_STATE_WAITING &&
                   (str_eq(c->state_reason, "CrashLoopBackOff") ||
                    is_start_reason(c->state_reason))) {
            score = 3;
        } else if (c->restart_count > 0) {
            score = 2;
        } else if (str_eq(r->pod_reason, "Evicted") && !c->is_init) {
            score = 1;
        }
        if (score > best_score ||
            (score == best_score && score > 0 && c->restart_count > best->restart_count)) {
            best = c;
            best_score = score;
        }
    }
    if (best == NULL && done != NULL) {
        best = done;
    }
    if (best == NULL && (r->log != NULL || (r->log_flags & KRC_REPORT_LOG_EMPTY) ||
                         r->n_events > 0 || r->pod_reason != NULL || !any_state_shown(r))) {
        /* Nothing in the status says which container restarted, but the
         * files hold evidence of a restart (a previous log, the pod's
         * events, a pod status reason), or no status says anything about
         * restarts (a pasted spec, a cut paste: nothing says it did not
         * restart): the container
         * the log belongs to, else the first app container. */
        for (i = 0; i < r->n_containers && best == NULL; i++) {
            if (r->log_container != NULL && str_eq(r->containers[i].name, r->log_container)) {
                best = &r->containers[i];
            }
        }
        for (i = 0; i < r->n_containers && best == NULL; i++) {
            if (!r->containers[i].is_init) {
                best = &r->containers[i];
            }
        }
        if (best == NULL && r->n_containers > 0) {
            best = &r->containers[0];
        }
    }
    return best;
}

const struct krc_report_container *krc_diagnose_pick(const struct krc_report *r)
{
    const struct krc_report_container *best = NULL;
    const struct krc_report_container *fallback = NULL;
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        if (!c->last.present) {
            /* No restart. A container that terminated without restarting
             * (restartPolicy Never, failed run) is a fallback. */
            if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present &&
                c->state_term.exit_code != 0 &&
                (fallback == NULL ||
                 c->state_term.finished_at > fallback->state_term.finished_at)) {
                fallback = c;
            }
            continue;
        }
        /* A completed ordinary init container has not restarted now. */
        if (c->is_init && !c->is_sidecar && c->state == KRC_REPORT_STATE_TERMINATED &&
            c->state_term.present && c->state_term.exit_code == 0) {
            continue;
        }
        if (best == NULL || c->last.finished_at > best->last.finished_at ||
            (c->last.finished_at == best->last.finished_at &&
             (c->restart_count > best->restart_count ||
              (c->restart_count == best->restart_count && best->is_init && !c->is_init)))) {
            best = c;
        }
    }
    if (best != NULL || fallback != NULL) {
        return best != NULL ? best : fallback;
    }
    return pick_partial(r);
}

void krc_diagnosis_init(struct krc_diagnosis *d)
{
    memset(d, 0, sizeof(*d));
}

void krc_diagnosis_cleanup(struct krc_diagnosis *d)
{
    size_t i;

    krc_free(d->container);
    krc_free(d->reason);
    krc_free(d->summary);
    krc_free(d->summary_unquoted);
    for (i = 0; i < d->n_evidence; i++) {
        krc_free(d->evidence[i]);
    }
    krc_free(d->evidence);
    krc_free(d->next_step);
    for (i = 0; i < d->n_commands; i++) {
        krc_free(d->commands[i]);
    }
    krc_free(d->commands);
    for (i = 0; i < d->n_unchecked; i++) {
        krc_free(d->unchecked[i]);
    }
    krc_free(d->unchecked);
    krc_diagnosis_init(d);
}

int krc_diagnosis_redact(struct krc_diagnosis *d, const struct krc_redactor *rd,
                         struct krc_error *err)
{
    int rc = 0;
    int n;

    n = krc_redact_in_place(rd, NULL, &d->summary, err);
    rc = n < 0 ? n : rc;
    n = krc_redact_in_place(rd, NULL, &d->summary_unquoted, err);
    rc = n < 0 ? n : rc;
    for (size_t i = 0; i < d->n_evidence; i++) {
        n = krc_redact_in_place(rd, NULL, &d->evidence[i], err);
        rc = n < 0 ? n : rc;
    }
    for (size_t i = 0; i < d->n_unchecked; i++) {
        n = krc_redact_in_place(rd, NULL, &d->unchecked[i], err);
        rc = n < 0 ? n : rc;
    }
    return rc < 0 ? krc_error_set(err, rc, "diagnosis redaction: out of memory") : 0;
}

static int list_names(const struct krc_report *r, char *out, size_t outsz)
{
    size_t i;
    size_t o = 0;

    out[0] = '\0';
    for (i = 0; i < r->n_containers && o < outsz; i++) {
        int n = snprintf(out + o, outsz - o, "%s%s%s", o ? ", " : "",
                         r->containers[i].name ? r->containers[i].name : "?",
                         r->containers[i].is_init ? " (init)" : "");
        if (n < 0) {
            break;
        }
        o += (size_t)n;
    }
    return 0;
}

static int diagnose_with(const struct krc_report *r, const struct krc_report_container *c,
                         struct krc_diagnosis *ret)
{
    struct builder b;
    struct krc_buf s;
    struct dctx x;
    const struct rule *rule;

    b.d = ret;
    b.oom = 0;
    krc_buf_init(&s, 4096);
    ret->gpus = krc_report_gpu_count(r);
    if (c == NULL) {
        ret->cause = KRC_CAUSE_UNKNOWN;
        ret->confidence = KRC_CONFIDENCE_LOW;
        krc_buf_printf(&s,
                       "No container of pod %s/%s has restarted, terminated or is waiting to "
                       "restart, so there is no termination to explain",
                       r->namespace ? r->namespace : "?", r->name ? r->name : "?");
        summary_set(&b, &s);
        if (set_str(&b, &ret->next_step,
                    "Nothing to do: run krc explain again on the pod after a restart") == 0) {
            add_unchecked(&b, "no container status shows a restart, a termination or a back-off");
        }
        goto done;
    }
    if (set_str(&b, &ret->container, c->name ? c->name : "") < 0) {
        goto done;
    }
    ret->is_init = c->is_init;
    ret->is_sidecar = c->is_sidecar;
    ret->restart_count = c->restart_count;
    ret->restart_count_known = c->restart_count_known;
    ctx_init(&x, r, c);
    if (x.t != NULL) {
        ret->has_termination = x.has_exit;
        ret->from_last_state = x.from_last;
        ret->exit_code = x.exit_code;
        ret->started_at = x.t->started_at;
        ret->finished_at = x.t->finished_at;
        ret->signal = x.signal;
        ret->signal_name = x.signal_name;
        if (x.t->reason != NULL && set_str(&b, &ret->reason, x.t->reason) < 0) {
            goto done;
        }
    }
    add_common_evidence(&b, &x);
    rule = first_rule(&x);
    ret->cause = rule->cause;
    ret->confidence = x.conf;
    rule->say(&x, &b, &s);
    finish(&b, &x, &s);
    add_missing(&b, &x, rule);
    add_commands(&b, &x, rule->cmds);
    if (set_str(&b, &ret->next_step, rule->next_step) == 0) {
        summary_set(&b, &s);
    }

done:
    krc_buf_cleanup(&s);
    if (b.oom || ret->summary == NULL || ret->next_step == NULL) {
        krc_diagnosis_cleanup(ret);
        return KRC_ENOMEM;
    }
    return 0;
}

static const struct krc_report_container *find_named(const struct krc_report *r,
                                                     const char *container, struct krc_error *err)
{
    const struct krc_report_container *c = krc_report_container_get(r, container, -1);
    char names[512];

    if (c == NULL) {
        list_names(r, names, sizeof(names));
        krc_error_set(err, KRC_ENOTFOUND,
                      "container \"%.100s\" not found in pod %s/%s (containers: %s)", container,
                      r->namespace ? r->namespace : "?", r->name ? r->name : "?",
                      names[0] ? names : "none");
    }
    return c;
}

int krc_diagnose(const struct krc_report *r, const char *container, struct krc_diagnosis *ret,
                 struct krc_error *err)
{
    const struct krc_report_container *c;

    krc_diagnosis_cleanup(ret);
    if (container != NULL) {
        if ((c = find_named(r, container, err)) == NULL) {
            return KRC_ENOTFOUND;
        }
    } else {
        c = krc_diagnose_pick(r);
    }
    if (diagnose_with(r, c, ret) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "diagnose: out of memory");
    }
    return 0;
}

size_t krc_diagnose_rule_count(void)
{
    return N_RULES;
}

const char *krc_diagnose_rule_name(size_t i)
{
    return i < N_RULES ? rules[i].name : NULL;
}

enum krc_cause krc_diagnose_rule_cause(size_t i)
{
    return i < N_RULES ? rules[i].cause : KRC_CAUSE_UNKNOWN;
}

int krc_diagnose_rule_matches(const struct krc_report *r, const char *container, const char *rule,
                              enum krc_confidence *ret_confidence, struct krc_error *err)
{
    const struct krc_report_container *c;
    struct dctx x;
    size_t i;

    for (i = 0; i < N_RULES && strcmp(rules[i].name, rule) != 0; i++) {
    }
    if (i == N_RULES) {
        return krc_error_set(err, KRC_EINVAL, "no diagnosis rule \"%.60s\"", rule);
    }
    c = container != NULL ? find_named(r, container, err) : krc_diagnose_pick(r);
    if (c == NULL) {
        return container != NULL ? KRC_ENOTFOUND
                                 : krc_error_set(err, KRC_ENOTFOUND, "no container to diagnose");
    }
    ctx_init(&x, r, c);
    if (!rules[i].match(&x)) {
        return 0;
    }
    if (ret_confidence != NULL) {
        *ret_confidence = x.conf;
    }
    return 1;
}
