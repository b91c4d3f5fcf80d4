/* How the diagnosis reads a log or a message (src/diagnose/diagnose_private.h):
 * case-insensitive search of the patterns, the lines around a match, the
 * kubectl time stamp, stack frames and crash headers, the last lines of a
 * log, and the verdicts that read those last lines (a network dependency
 * given up on, the most telling error line). The log is never assumed to be
 * NUL-terminated or UTF-8, and each search is bounded. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/mem.h"

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Case-insensitive search of the lowercase ASCII `needle` in h[0..hl).
 * Returns the offset or SIZE_MAX. */
size_t krc_diag_find_ci(const unsigned char *h, size_t hl, const char *needle)
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

int krc_diag_has_ci(const unsigned char *h, size_t hl, const char *needle)
{
    return krc_diag_find_ci(h, hl, needle) != SIZE_MAX;
}

int krc_diag_str_has_ci(const char *s, const char *needle)
{
    return s != NULL && krc_diag_has_ci((const unsigned char *)s, strlen(s), needle);
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

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

/* Like line_matches, but `a` must start a word: "ENOTFOUND" (Node's DNS
 * error code) is not the tail of "ModuleNotFoundError". */
static int line_matches_word(struct span l, const struct pattern *pat, size_t *at)
{
    size_t pos = 0;

    while (pos < l.len) {
        size_t o = krc_diag_find_ci(l.p + pos, l.len - pos, pat->a);
        if (o == SIZE_MAX) {
            return 0;
        }
        o += pos;
        if (o == 0 || !is_alnum(l.p[o - 1]) || !is_alnum((unsigned char)pat->a[0])) {
            if (pat->b != NULL && !krc_diag_has_ci(l.p, l.len, pat->b)) {
                return 0;
            }
            if (at != NULL) {
                *at = o;
            }
            return 1;
        }
        pos = o + 1;
    }
    return 0;
}

static int line_matches(struct span l, const struct pattern *pat, size_t *at)
{
    size_t o = krc_diag_find_ci(l.p, l.len, pat->a);

    if (o == SIZE_MAX) {
        return 0;
    }
    if (pat->b != NULL && !krc_diag_has_ci(l.p, l.len, pat->b)) {
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
        if (krc_diag_has_ci(l.p, l.len, words[i])) {
            return 1;
        }
    }
    return 0;
}

/* NVIDIA Xid reports: "NVRM: Xid (PCI:0000:3b:00): 79, ...", "XID 48". */
int krc_diag_find_xid(const unsigned char *buf, size_t len, struct hit *h)
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
              krc_diag_has_ci(buf + i + 4, len - i - 4 < 6 ? len - i - 4 : 6, "error")))) {
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
int krc_diag_search_patterns(const unsigned char *buf, size_t len, const struct pattern *pats,
                             size_t n, struct hit *h)
{
    size_t i;

    for (i = 0; i < n; i++) {
        size_t pos = 0;
        while (pos < len) {
            size_t o = krc_diag_find_ci(buf + pos, len - pos, pats[i].a);
            struct span l;
            if (o == SIZE_MAX) {
                break;
            }
            o += pos;
            l = line_around(buf, len, o);
            if (pats[i].b == NULL || krc_diag_has_ci(l.p, l.len, pats[i].b)) {
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
struct span krc_diag_strip_ts(struct span l)
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

/* A line a log viewer adds when the stream it follows ends, not written by
 * the container: k9s, Lens and other client-go based viewers print "Stream
 * closed EOF for NAMESPACE/POD (CONTAINER)" when the log stream of a
 * container that exited reaches EOF. Pasted logs often end with it. */
static int is_viewer_trailer(struct span l)
{
    l = krc_diag_strip_ts(l);
    while (l.len > 0 && is_space(l.p[0])) {
        l.p++;
        l.len--;
    }
    return starts_with(l.p, l.len, "Stream closed EOF for ");
}

/* A record whose level is right-aligned after its time stamp, as Rust's
 * tracing writes them ("2024-05-01T10:00:00Z  INFO target: ..."): indented,
 * but a record, not a frame. */
static int is_padded_level(struct span l)
{
    static const char *const levels[] = {"INFO ", "WARN ", "DEBUG ", "TRACE ", "ERROR "};
    size_t i = 0;

    while (i < l.len && i < 4 && l.p[i] == ' ') {
        i++;
    }
    for (size_t k = 0; k < sizeof(levels) / sizeof(levels[0]); k++) {
        if (starts_with(l.p + i, l.len - i, levels[k])) {
            return 1;
        }
    }
    return 0;
}

/* Stack frames, source excerpts, markers, punctuation: lines that do not
 * count toward the "last lines" of a log. */
static int is_frame(struct span l)
{
    size_t i;
    int alnum = 0;

    l = krc_diag_strip_ts(l);
    if (l.len == 0) {
        return 1;
    }
    if (l.p[0] == ' ' && is_padded_level(l)) {
        return 0;
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
int krc_diag_is_error_header(struct span l)
{
    size_t i;
    size_t tok;

    l = krc_diag_strip_ts(l);
    if (is_fatal_level(l)) {
        return 1;
    }
    if (starts_with(l.p, l.len, "panic: ") || starts_with(l.p, l.len, "fatal error: ") ||
        starts_with(l.p, l.len, "Exception in thread ") || starts_with(l.p, l.len, "Uncaught ") ||
        starts_with(l.p, l.len, "Segmentation fault") ||
        starts_with(l.p, l.len, "terminate called")) {
        return 1;
    }
    /* .NET: the runtime's report of an exception no handler caught, after
     * which the process exits ("Unhandled exception. System.X: ..." since
     * .NET 5, "Unhandled Exception: System.X: ..." before); the "   at ..."
     * frames that follow are not counted as lines. */
    if (starts_with(l.p, l.len, "Unhandled exception. ") ||
        starts_with(l.p, l.len, "Unhandled Exception: ")) {
        return 1;
    }
    /* Rust: the panic message ("thread 'main' panicked at src/main.rs:5:9:") */
    if (starts_with(l.p, l.len, "thread '") && krc_diag_has_ci(l.p, l.len, "' panicked at") != 0) {
        return 1;
    }
    /* The dynamic loader refusing to run the program before main: a missing
     * shared library or too old a C library in the image. */
    if (krc_diag_has_ci(l.p, l.len, "error while loading shared libraries: ") ||
        (krc_diag_has_ci(l.p, l.len, ": version `glibc_") &&
         krc_diag_has_ci(l.p, l.len, "' not found"))) {
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

/* A record logged at error level by the common formats: Rust's tracing
 * ("2024-05-01T10:00:00.1Z ERROR target: ...", the time stamp skipped) and
 * env_logger ("[2024-05-01T10:00:00Z ERROR target] ..."), klog
 * ("E0210 01:36:39.123645 ..."), "[ERROR]", logfmt "level=error" and JSON
 * "\"level\":\"error\"". Alone it is not a crash: many programs log errors
 * and go on; the rules use it only for the last line a process wrote. */
int krc_diag_is_error_level(struct span l)
{
    static const char *const marks[] = {"[ERROR]", "level=error", "\"level\":\"error\""};
    size_t i;

    l = krc_diag_strip_ts(l);
    if (starts_with(l.p, l.len, "ERROR ") || starts_with(l.p, l.len, "ERROR:")) {
        return 1;
    }
    if (l.len > 6 && l.p[0] == 'E' && is_digit(l.p[1]) && is_digit(l.p[2]) && is_digit(l.p[3]) &&
        is_digit(l.p[4]) && l.p[5] == ' ') {
        return 1;
    }
    if (l.len > 0 && l.p[0] == '[') {
        const unsigned char *close = memchr(l.p, ']', l.len < 80 ? l.len : 80);
        if (close != NULL && memmem(l.p, (size_t)(close - l.p), " ERROR ", 7) != NULL) {
            return 1;
        }
    }
    for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        if (memmem(l.p, l.len, marks[i], strlen(marks[i])) != NULL) {
            return 1;
        }
    }
    return 0;
}

void krc_diag_collect_tail(const unsigned char *buf, size_t len, size_t want, struct tail *t)
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
        if (!is_blank(l) && !is_viewer_trailer(l)) {
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
int krc_diag_find_dependency(const unsigned char *buf, size_t len, struct hit *h)
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
    krc_diag_collect_tail(buf, len, KRC_DIAG_TAIL_LINES, t);
    for (i = 0; i < t->n; i++) {
        size_t k;
        for (k = 0; k < sizeof(net_patterns) / sizeof(net_patterns[0]); k++) {
            if (line_matches_word(t->lines[i], &net_patterns[k], &at)) {
                last = i;
                last_at = at;
                break;
            }
        }
    }
    if (last == SIZE_MAX) {
        ok = 0;
    }
    for (i = last + 1; ok && i < t->n; i++) {
        struct span l = t->lines[i];
        if (line_has_any(l, success_words, sizeof(success_words) / sizeof(success_words[0]))) {
            ok = 0; /* the dependency answered after the error */
        } else if (krc_diag_is_error_header(l) &&
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
int krc_diag_is_last_line(const unsigned char *buf, size_t len, struct span l)
{
    struct tail *t = krc_malloc(sizeof(*t));
    int last;

    if (t == NULL || buf == NULL) {
        krc_free(t);
        return 0;
    }
    krc_diag_collect_tail(buf, len, 1, t);
    while (t->n > 0 && is_frame(t->lines[t->n - 1])) {
        t->n--;
    }
    last = t->n > 0 && t->lines[t->n - 1].p == l.p;
    krc_free(t);
    return last;
}

/* The most telling error line of the tail (for app errors): the last
 * exception/panic header, else the last line mentioning an error. */
int krc_diag_find_error_line(const unsigned char *buf, size_t len, struct hit *h)
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
    krc_diag_collect_tail(buf, len, KRC_DIAG_TAIL_LINES, t);
    for (i = 0; i < t->n; i++) {
        if (krc_diag_is_error_header(t->lines[i])) {
            header = i;
        }
        if (!is_frame(t->lines[i]) &&
            line_has_any(t->lines[i], err_words, sizeof(err_words) / sizeof(err_words[0])) &&
            !krc_diag_has_ci(t->lines[i].p, t->lines[i].len, "traceback (most recent")) {
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

int krc_diag_tail_search(const unsigned char *p, size_t n, const struct pattern *pats, size_t np,
                         struct hit *h)
{
    struct tail *t = krc_malloc(sizeof(*t));
    size_t i;
    size_t at = 0;
    int found = 0;

    if (t == NULL) {
        return 0; /* degrade: no verdict from the tail rather than fail */
    }
    krc_diag_collect_tail(p, n, KRC_DIAG_TAIL_LINES, t);
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
