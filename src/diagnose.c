#include "krc/diagnose.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/buf.h"
#include "krc/mem.h"

/* ---- names ------------------------------------------------------------ */

static const char *const cause_names[KRC_CAUSE_COUNT] = {
    "unknown",
    "oom_killed",
    "liveness_probe_failed",
    "startup_probe_failed",
    "command_not_found",
    "permission_denied",
    "segfault",
    "gpu_out_of_memory",
    "gpu_error",
    "dependency_unreachable",
    "app_error",
    "completed",
    "killed",
    "terminated",
    "start_failed",
    "exec_format_error",
    "illegal_instruction",
    "aborted",
    "app_out_of_memory",
    "disk_full",
    "evicted",
};

const char *krc_confidence_name(enum krc_confidence c)
{
    switch (c) {
    case KRC_CONFIDENCE_HIGH:
        return "high";
    case KRC_CONFIDENCE_MEDIUM:
        return "medium";
    case KRC_CONFIDENCE_LOW:
    default:
        return "low";
    }
}

int krc_confidence_parse(const char *name, enum krc_confidence *ret)
{
    static const enum krc_confidence all[] = {KRC_CONFIDENCE_LOW, KRC_CONFIDENCE_MEDIUM,
                                              KRC_CONFIDENCE_HIGH};
    for (size_t i = 0; name != NULL && i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(name, krc_confidence_name(all[i])) == 0) {
            *ret = all[i];
            return 0;
        }
    }
    return KRC_EINVAL;
}

const char *krc_cause_name(enum krc_cause cause)
{
    if ((int)cause < 0 || (int)cause >= KRC_CAUSE_COUNT) {
        return "unknown";
    }
    return cause_names[cause];
}

int krc_cause_parse(const char *name, enum krc_cause *ret_cause)
{
    int i;

    for (i = 0; name != NULL && i < KRC_CAUSE_COUNT; i++) {
        if (strcmp(name, cause_names[i]) == 0) {
            *ret_cause = (enum krc_cause)i;
            return 0;
        }
    }
    return KRC_EINVAL;
}

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
            /* ANSI: CSI ESC [ params final(0x40-0x7e), OSC ESC ] ... BEL/ST,
             * or a two-byte escape. */
            i++;
            if (i < len && p[i] == '[') {
                i++;
                while (i < len && !(p[i] >= 0x40 && p[i] <= 0x7e)) {
                    i++;
                }
                i += i < len;
            } else if (i < len && p[i] == ']') {
                while (i < len && p[i] != 0x07 && !(p[i] == 0x1b && i + 1 < len)) {
                    i++;
                }
                i += (i < len && p[i] == 0x07) ? 1 : (i + 1 < len ? 2 : 0);
            } else {
                i += i < len;
            }
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
            /* Validate one UTF-8 sequence (no overlongs, no surrogates). */
            size_t n = 0;
            unsigned cp = 0;
            size_t k;
            if (c >= 0xc2 && c <= 0xdf) {
                n = 2;
                cp = c & 0x1f;
            } else if (c >= 0xe0 && c <= 0xef) {
                n = 3;
                cp = c & 0x0f;
            } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4;
                cp = c & 0x07;
            }
            for (k = 1; n > 0 && k < n; k++) {
                if (i + k >= len || (p[i + k] & 0xc0) != 0x80) {
                    n = 0;
                    break;
                }
                cp = (cp << 6) | (p[i + k] & 0x3f);
            }
            if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) {
                n = 0;
            }
            if (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) {
                n = 0;
            }
            if (n == 0) {
                put = "\xef\xbf\xbd"; /* U+FFFD */
                seq = 1;
            } else {
                seq = n;
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
            while (o > 0 && o + 4 > outsz) {
                o--;
                while (o > 0 && ((unsigned char)out[o] & 0xc0) == 0x80) {
                    o--;
                }
            }
            if (o + 4 <= outsz) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            out[o] = '\0';
            return o;
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

/* An exception or crash header at the start of a line: "panic: ...",
 * "TypeError: ...", "java.lang.IllegalStateException: ...". */
static int is_error_header(struct span l)
{
    size_t i;
    size_t tok;

    l = strip_ts(l);
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

/* The most telling error line of the tail (for app errors): the last
 * exception/panic header, else the last line mentioning an error. */
static int find_error_line(const unsigned char *buf, size_t len, struct hit *h)
{
    struct tail *t = krc_malloc(sizeof(*t));
    static const char *const err_words[] = {"error", "panic",  "fatal",     "exception",
                                            "fail",  "denied", "not found", "traceback"};
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
        cut_front = 1;
    }
    if (cut_front && outsz > 4) {
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

static int64_t ev_in_window(const struct krc_report_event *e, int64_t lo, int64_t hi)
{
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
        if (!str_eq(e->reason, "Killing") || !krc_report_event_matches(r, e, c)) {
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
        if (!str_eq(e->reason, "Unhealthy") || !krc_report_event_matches(r, e, c) ||
            strncmp(msg, probe_cap, pl) != 0 || msg[pl] != ' ') {
            continue;
        }
        if (e->first_timestamp > hi) {
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

static int is_start_error(const struct krc_report_term *t)
{
    return str_eq(t->reason, "StartError") || str_eq(t->reason, "ContainerCannotRun") ||
           str_eq(t->reason, "RunContainerError") || str_eq(t->reason, "CreateContainerError") ||
           (t->exit_code == 128 && t->started_at == 0);
}

/* Runtime start error text: T.message, else a matching Failed event. */
static const char *start_error_text(const struct krc_report *r,
                                    const struct krc_report_container *c,
                                    const struct krc_report_term *t)
{
    size_t i;
    const struct krc_report_event *best = NULL;

    if (t->message != NULL && t->message[0] != '\0') {
        return t->message;
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (str_eq(e->reason, "Failed") && krc_report_event_matches(r, e, c) &&
            ev_in_window(e, t->finished_at - 120, t->finished_at + KRC_DIAG_WINDOW_AFTER) &&
            (best == NULL || e->last_timestamp > best->last_timestamp)) {
            best = e;
        }
    }
    return best != NULL ? strip_combined(best->message) : NULL;
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

static void summary_set(struct builder *b, struct krc_buf *s)
{
    char *text = krc_buf_take(s);
    char *clean;
    size_t n;

    if (text == NULL) {
        b->oom = 1;
        return;
    }
    n = strlen(text);
    clean = krc_malloc(n * 3 + 4 > 2048 ? 2048 : n * 3 + 4);
    if (clean == NULL) {
        krc_free(text);
        b->oom = 1;
        return;
    }
    krc_diagnose_sanitize(text, n, clean, n * 3 + 4 > 2048 ? 2048 : n * 3 + 4);
    krc_free(text);
    krc_free(b->d->summary);
    b->d->summary = clean;
}

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
    return best != NULL ? best : fallback;
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

/* Where the log text for container c comes from. */
struct sources {
    const unsigned char *log;
    size_t log_len;
    const unsigned char *msg; /* termination message written by the app */
    size_t msg_len;
};

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

int krc_diagnose(const struct krc_report *r, const char *container, struct krc_diagnosis *ret,
                 struct krc_error *err)
{
    struct builder b;
    struct krc_buf s;
    const struct krc_report_container *c;
    const struct krc_report_term *t;
    const struct krc_report_event *kill = NULL;
    const struct krc_report_event *unhealthy = NULL;
    struct sources src = {NULL, 0, NULL, 0};
    struct hit h;
    char dur[32] = "";
    char when_s[32];
    char when_f[32];
    char line[KRC_DIAG_EVIDENCE_MAX];
    const char *mem_limit;
    const char *start_text = NULL;
    int64_t lo;
    int64_t hi;
    int from_last = 0;
    int crashloop;
    size_t i;

    krc_diagnosis_cleanup(ret);
    b.d = ret;
    b.oom = 0;
    krc_buf_init(&s, 4096);

    if (container != NULL) {
        c = krc_report_container_get(r, container, -1);
        if (c == NULL) {
            char names[512];
            list_names(r, names, sizeof(names));
            return krc_error_set(err, KRC_ENOTFOUND,
                                 "container \"%.100s\" not found in pod %s/%s (containers: %s)",
                                 container, r->namespace ? r->namespace : "?",
                                 r->name ? r->name : "?", names[0] ? names : "none");
        }
    } else {
        c = krc_diagnose_pick(r);
    }
    ret->gpus = krc_report_gpu_count(r);
    if (c == NULL) {
        ret->cause = KRC_CAUSE_UNKNOWN;
        krc_buf_printf(&s,
                       "No container of pod %s/%s has restarted or terminated, so there is "
                       "no termination to explain",
                       r->namespace ? r->namespace : "?", r->name ? r->name : "?");
        summary_set(&b, &s);
        goto done;
    }
    ret->container = krc_strdup(c->name ? c->name : "");
    ret->is_init = c->is_init;
    ret->is_sidecar = c->is_sidecar;
    ret->restart_count = c->restart_count;
    if (ret->container == NULL) {
        b.oom = 1;
        goto done;
    }
    t = term_of(c, &from_last);
    if (t == NULL) {
        ret->cause = KRC_CAUSE_UNKNOWN;
        krc_buf_printf(&s,
                       "Container %s has no previous termination to explain (state %s%s%s, "
                       "%d restarts)",
                       c->name,
                       c->state == KRC_REPORT_STATE_RUNNING   ? "running"
                       : c->state == KRC_REPORT_STATE_WAITING ? "waiting"
                                                              : "unknown",
                       c->state_reason ? ": " : "", c->state_reason ? c->state_reason : "",
                       c->restart_count);
        summary_set(&b, &s);
        goto done;
    }
    ret->has_termination = 1;
    ret->from_last_state = from_last;
    ret->exit_code = t->exit_code;
    ret->started_at = t->started_at;
    ret->finished_at = t->finished_at;
    if (t->reason != NULL && (ret->reason = krc_strdup(t->reason)) == NULL) {
        b.oom = 1;
        goto done;
    }
    if (t->signal > 0) {
        ret->signal = t->signal;
    } else if (t->exit_code > 128 && t->exit_code <= 128 + 64) {
        ret->signal = t->exit_code - 128;
    }
    ret->signal_name = krc_signal_name(ret->signal);
    if (ret->signal_name == NULL) {
        ret->signal = 0;
    }
    if (t->started_at > 0 && t->finished_at >= t->started_at) {
        krc_diagnose_format_duration(t->finished_at - t->started_at, dur, sizeof(dur));
    }
    format_time(t->started_at, when_s, sizeof(when_s));
    format_time(t->finished_at, when_f, sizeof(when_f));
    crashloop = c->state == KRC_REPORT_STATE_WAITING && str_eq(c->state_reason, "CrashLoopBackOff");

    /* W = [T.startedAt, T.finishedAt + 60 s]; without a start time (StartError
     * writes 1970) assume the instance lived at most the grace period. */
    hi = t->finished_at > 0 ? t->finished_at + KRC_DIAG_WINDOW_AFTER : 0;
    lo = t->started_at > 0 ? t->started_at
                           : (t->finished_at > 0 ? t->finished_at - r->grace_period - 10 : 1);

    /* Log sources for rules 7-9. */
    if (r->log != NULL && r->log_len > 0 &&
        (r->log_container == NULL || str_eq(r->log_container, c->name))) {
        src.log = r->log;
        src.log_len = r->log_len;
    }
    if (!is_start_error(t) && t->message != NULL && t->message[0] != '\0') {
        src.msg = (const unsigned char *)t->message;
        src.msg_len = strlen(t->message);
    }

    /* Evidence that holds whatever the cause. */
    add_evidence(&b, "%s: reason=%s exitCode=%d%s%s%s, started %s, finished %s%s%s",
                 from_last ? "lastState.terminated" : "state.terminated",
                 t->reason ? t->reason : "(none)", t->exit_code, ret->signal_name ? " (" : "",
                 ret->signal_name ? ret->signal_name : "", ret->signal_name ? ")" : "",
                 t->started_at > 0 ? when_s : "never (the process did not start)", when_f,
                 dur[0] ? ", ran " : "", dur);

    mem_limit = krc_kv_list_get(&c->limits, "memory");

    /* 1. OOMKilled */
    if (str_eq(t->reason, "OOMKilled")) {
        ret->cause = KRC_CAUSE_OOM_KILLED;
        krc_buf_printf(&s, "Container %s was OOM-killed by the kernel (%s%s)", c->name,
                       mem_limit ? "memory limit " : "no memory limit set",
                       mem_limit ? mem_limit : "");
        if (t->exit_code != 137) {
            krc_buf_printf(&s,
                           " with exit code %d (on cgroup v1 the victim can be a child "
                           "process)",
                           t->exit_code);
        }
        if (dur[0]) {
            krc_buf_printf(&s, " after %s", dur);
        }
        if (mem_limit != NULL) {
            add_evidence(&b, "memory limit %s, request %s", mem_limit,
                         krc_kv_list_get(&c->requests, "memory")
                             ? krc_kv_list_get(&c->requests, "memory")
                             : "(none)");
        }
        for (i = 0; i < r->n_events; i++) {
            const struct krc_report_event *e = &r->events[i];
            if ((str_eq(e->reason, "SystemOOM") || str_eq(e->reason, "OOMKilling")) &&
                ev_in_window(e, lo - 60, hi)) {
                evidence_event(&b, e);
            }
        }
        goto finish;
    }

    /* 2-3. probe kills */
    if (hi > 0) {
        kill = find_probe_kill(r, c, "liveness", lo, hi);
        if (kill != NULL) {
            ret->cause = KRC_CAUSE_LIVENESS_PROBE_FAILED;
            unhealthy = find_unhealthy(r, c, "Liveness", lo, hi);
        } else {
            kill = find_probe_kill(r, c, "startup", lo, hi);
            if (kill != NULL) {
                ret->cause = KRC_CAUSE_STARTUP_PROBE_FAILED;
                unhealthy = find_unhealthy(r, c, "Startup", lo, hi);
            }
        }
    }
    if (kill != NULL) {
        const char *detail = NULL;
        if (unhealthy != NULL) {
            const char *m = strip_combined(unhealthy->message);
            const char *colon = strstr(m, ": ");
            detail = colon != NULL ? colon + 2 : "";
            if (detail[0] == '\0' || (colon == NULL && str_has_ci(m, "probe failed:"))) {
                detail = "no output";
            }
        }
        krc_buf_printf(&s, "%s probe failed%s%s%s and the kubelet killed the container",
                       ret->cause == KRC_CAUSE_LIVENESS_PROBE_FAILED ? "Liveness" : "Startup",
                       detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
        if (ret->cause == KRC_CAUSE_STARTUP_PROBE_FAILED) {
            krc_buf_append_str(&s, " before it finished starting");
        }
        krc_buf_printf(&s, "; exit %d%s%s%s", t->exit_code, ret->signal_name ? " (" : "",
                       ret->signal_name ? ret->signal_name : "", ret->signal_name ? ")" : "");
        if (dur[0]) {
            krc_buf_printf(&s, " after %s", dur);
        }
        evidence_event(&b, kill);
        if (unhealthy != NULL) {
            evidence_event(&b, unhealthy);
        }
        goto finish;
    }

    /* 4-5. the process could not be executed */
    if (is_start_error(t)) {
        start_text = start_error_text(r, c, t);
    }
    if (t->exit_code == 127 || (start_text != NULL && msg_not_found(start_text))) {
        ret->cause = KRC_CAUSE_COMMAND_NOT_FOUND;
        if (start_text != NULL && msg_not_found(start_text)) {
            krc_buf_printf(&s, "Container %s could not start: the command was not found", c->name);
            add_evidence(&b, "runtime: %s", start_text);
        } else {
            krc_buf_printf(&s, "Container %s exited 127: command not found", c->name);
        }
        goto finish_exec;
    }
    if (t->exit_code == 126 || (start_text != NULL && msg_permission(start_text))) {
        ret->cause = KRC_CAUSE_PERMISSION_DENIED;
        if (start_text != NULL && msg_permission(start_text)) {
            krc_buf_printf(&s, "Container %s could not start: permission denied on the entrypoint",
                           c->name);
            add_evidence(&b, "runtime: %s", start_text);
        } else {
            krc_buf_printf(&s,
                           "Container %s exited 126: the command could not be executed "
                           "(permission denied, e.g. a missing execute bit)",
                           c->name);
        }
        goto finish_exec;
    }

    /* 6. SIGSEGV */
    if (t->exit_code == 139 || ret->signal == 11) {
        ret->cause = KRC_CAUSE_SEGFAULT;
        krc_buf_printf(&s, "Container %s crashed with a segmentation fault (exit %d, SIGSEGV)",
                       c->name, t->exit_code);
        if (dur[0]) {
            krc_buf_printf(&s, " after %s", dur);
        }
        memset(&h, 0, sizeof(h));
        if ((src.log &&
             (search_patterns(src.log, src.log_len, (const struct pattern[]){{"sigsegv", NULL}}, 1,
                              &h) ||
              search_patterns(src.log, src.log_len,
                              (const struct pattern[]){{"segmentation fault", NULL}}, 1, &h))) &&
            h.found) {
            hit_text(&h, line, sizeof(line));
            add_evidence(&b, "log: %s", line);
        }
        goto finish;
    }

    /* 7-9. the log decides, for a non-zero exit */
    if (t->exit_code != 0) {
        const unsigned char *scan = src.log;
        size_t scan_len = src.log_len;
        int k;
        if (scan_len > KRC_DIAG_SCAN_MAX) {
            scan += scan_len - KRC_DIAG_SCAN_MAX;
            scan_len = KRC_DIAG_SCAN_MAX;
        }
        for (k = 0; k < 2; k++) {
            const unsigned char *p = k == 0 ? scan : src.msg;
            size_t n = k == 0 ? scan_len : src.msg_len;
            if (p == NULL || n == 0) {
                continue;
            }
            memset(&h, 0, sizeof(h));
            if (search_patterns(p, n, gpu_oom_patterns,
                                sizeof(gpu_oom_patterns) / sizeof(gpu_oom_patterns[0]), &h)) {
                ret->cause = KRC_CAUSE_GPU_OUT_OF_MEMORY;
                hit_text(&h, line, sizeof(line));
                krc_buf_printf(&s, "Container %s ran out of GPU memory and exited %d", c->name,
                               t->exit_code);
                if (dur[0]) {
                    krc_buf_printf(&s, " after %s", dur);
                }
                krc_buf_printf(&s, " (%.120s%s)", line, strlen(line) > 120 ? "..." : "");
                add_evidence(&b, "%s: %s", k == 0 ? "log" : "termination message", line);
                goto finish;
            }
        }
        for (k = 0; k < 2; k++) {
            const unsigned char *p = k == 0 ? scan : src.msg;
            size_t n = k == 0 ? scan_len : src.msg_len;
            if (p == NULL || n == 0) {
                continue;
            }
            memset(&h, 0, sizeof(h));
            if (search_patterns(p, n, gpu_error_patterns,
                                sizeof(gpu_error_patterns) / sizeof(gpu_error_patterns[0]), &h) ||
                find_xid(p, n, &h)) {
                ret->cause = KRC_CAUSE_GPU_ERROR;
                hit_text(&h, line, sizeof(line));
                krc_buf_printf(&s, "Container %s hit a GPU device or driver error and exited %d",
                               c->name, t->exit_code);
                krc_buf_printf(&s, " (%.160s%s)", line, strlen(line) > 160 ? "..." : "");
                add_evidence(&b, "%s: %s", k == 0 ? "log" : "termination message", line);
                goto finish;
            }
        }
        for (k = 0; k < 2; k++) {
            const unsigned char *p = k == 0 ? src.log : src.msg;
            size_t n = k == 0 ? src.log_len : src.msg_len;
            if (p == NULL || n == 0) {
                continue;
            }
            memset(&h, 0, sizeof(h));
            if (find_dependency(p, n, &h)) {
                ret->cause = KRC_CAUSE_DEPENDENCY_UNREACHABLE;
                hit_text(&h, line, sizeof(line));
                krc_buf_printf(&s,
                               "Container %s gave up because a network dependency could not be "
                               "reached and exited %d (%.160s%s)",
                               c->name, t->exit_code, line, strlen(line) > 160 ? "..." : "");
                add_evidence(&b, "%s: %s", k == 0 ? "log" : "termination message", line);
                goto finish;
            }
        }
    }

    /* 10-13. exit code only */
    if (t->exit_code != 0 && t->exit_code != 137 && t->exit_code != 143) {
        const char *meaning = signal_meaning(ret->signal);
        ret->cause = KRC_CAUSE_APP_ERROR;
        if (ret->signal_name != NULL) {
            krc_buf_printf(&s, "Container %s died from %s (exit %d%s%s)", c->name, ret->signal_name,
                           t->exit_code, meaning ? ": " : "", meaning ? meaning : "");
        } else {
            krc_buf_printf(&s, "Container %s exited with code %d (application error)", c->name,
                           t->exit_code);
        }
        if (dur[0]) {
            krc_buf_printf(&s, " after %s", dur);
        }
        memset(&h, 0, sizeof(h));
        if ((src.log != NULL && find_error_line(src.log, src.log_len, &h)) ||
            (src.msg != NULL && find_error_line(src.msg, src.msg_len, &h))) {
            hit_text(&h, line, sizeof(line));
            krc_buf_printf(&s, ": %.160s%s", line, strlen(line) > 160 ? "..." : "");
            add_evidence(&b, "log: %s", line);
        } else if (start_text != NULL) {
            add_evidence(&b, "runtime: %s", start_text);
        }
        goto finish;
    }
    if (t->exit_code == 0) {
        ret->cause = KRC_CAUSE_COMPLETED;
        krc_buf_printf(&s, "Container %s exited 0 (%s)%s%s but was restarted", c->name,
                       t->reason ? t->reason : "success", dur[0] ? " after " : "", dur);
        if (!c->is_init || c->is_sidecar) {
            krc_buf_printf(&s, " because %s",
                           c->is_sidecar ? "sidecars (restartPolicy Always) always restart"
                                         : "the pod's restartPolicy restarts it");
            add_evidence(&b,
                         "a run-to-completion program in a %s with restartPolicy %s: "
                         "consider a Job or a long-running command",
                         r->owner_kind ? r->owner_kind : "pod",
                         r->restart_policy ? r->restart_policy : "Always");
        }
        goto finish;
    }
    if (t->exit_code == 137) {
        ret->cause = KRC_CAUSE_KILLED;
        krc_buf_printf(&s,
                       "Container %s was killed with SIGKILL (exit 137, reason %s: not the OOM "
                       "killer, no probe kill)",
                       c->name, t->reason ? t->reason : "none");
        if (dur[0]) {
            krc_buf_printf(&s, " after %s", dur);
        }
        goto finish;
    }
    ret->cause = KRC_CAUSE_TERMINATED;
    krc_buf_printf(&s, "Container %s received SIGTERM and exited 143 (no probe kill)", c->name);
    if (dur[0]) {
        krc_buf_printf(&s, " after %s", dur);
    }
    goto finish;

finish_exec:
    memset(&h, 0, sizeof(h));
    if (src.log != NULL &&
        search_patterns(src.log, src.log_len,
                        ret->cause == KRC_CAUSE_COMMAND_NOT_FOUND
                            ? (const struct pattern[]){{"not found", NULL}}
                            : (const struct pattern[]){{"permission denied", NULL}},
                        1, &h)) {
        hit_text(&h, line, sizeof(line));
        add_evidence(&b, "log: %s", line);
    }

finish:
    if (c->restart_count > 0) {
        krc_buf_printf(&s, "; %d restart%s", c->restart_count, c->restart_count == 1 ? "" : "s");
    }
    if (ret->gpus > 0) {
        krc_buf_printf(&s, "; the pod holds %ld GPU%s%s", ret->gpus, ret->gpus == 1 ? "" : "s",
                       crashloop ? " while crash-looping" : "");
        add_evidence(&b, "the pod holds %ld GPU%s%s", ret->gpus, ret->gpus == 1 ? "" : "s",
                     crashloop ? " while it crash-loops" : "");
    }
    if (c->state == KRC_REPORT_STATE_WAITING && c->state_reason != NULL) {
        add_evidence(&b, "state: waiting %s%s%s", c->state_reason, c->state_message ? ": " : "",
                     c->state_message ? c->state_message : "");
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (str_eq(e->reason, "BackOff") && krc_report_event_matches(r, e, c) &&
            str_has_ci(e->message, "restarting failed container")) {
            evidence_event(&b, e);
            break;
        }
    }
    if (start_text == NULL && is_start_error(t)) {
        start_text = start_error_text(r, c, t);
        if (start_text != NULL) {
            add_evidence(&b, "runtime: %s", start_text);
        }
    }
    node_evidence(&b, r);
    if (r->log_flags & KRC_REPORT_LOG_CAPPED) {
        add_evidence(&b, "the previous log was read only up to the transfer cap; its last "
                         "lines were not seen");
    } else if (r->log_flags & KRC_REPORT_LOG_TRUNCATED) {
        add_evidence(&b, "the previous log was truncated; only its end was analysed");
    }
    summary_set(&b, &s);

done:
    krc_buf_cleanup(&s);
    if (b.oom || ret->summary == NULL) {
        krc_diagnosis_cleanup(ret);
        return krc_error_set(err, KRC_ENOMEM, "diagnose: out of memory");
    }
    return 0;
}
