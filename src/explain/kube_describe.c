/* `kubectl describe pod` text -> Pod JSON + event List JSON (see the header).
 * The text is cut into lines with their indentation; elisions and event
 * tables are marked, multi-line messages joined, and the indentation turned
 * into nesting depth (a line's children are the lines below it that are
 * nested deeper). A fragment is then rewritten into one describe document
 * (canonical()) that the field readers take like a whole one. */
#include "krc/explain/kube_describe.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/mem.h"

struct line {
    const char *p; /* after the indentation */
    size_t len;    /* trailing white space and \r removed */
    size_t indent;
    size_t key_len; /* 0: not a "Key:" line */
    const char *val;
    size_t val_len;
    unsigned kind;    /* LN_* */
    unsigned unnamed; /* a container block pasted without its name line */
    unsigned trimmed; /* white space was cut from its end */
    unsigned glued;   /* LN_WRAP: the terminal broke a word here (no space) */
};

/* What a line is, beyond "Key: value": parts of an event table, and the
 * poster's elisions ("...", "<snip>"), which end the lines above them. */
enum { LN_TEXT, LN_ELISION, LN_HEADER, LN_RULE, LN_ROW, LN_WRAP, LN_BROW };

struct doc {
    struct line *l;
    size_t n;
    int oom;
};

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

static void split_key(struct line *l)
{
    for (size_t i = 0; i < l->len; i++) {
        if (l->p[i] == ':' && (i + 1 == l->len || is_space(l->p[i + 1]))) {
            size_t v = i + 1;
            if (i == 0) {
                return;
            }
            while (v < l->len && is_space(l->p[v])) {
                v++;
            }
            l->key_len = i;
            l->val = l->p + v;
            l->val_len = l->len - v;
            return;
        }
    }
}

/* strstr within [s, e): the input is not NUL-terminated. */
static const char *find(const char *s, const char *e, const char *needle)
{
    size_t n = strlen(needle);

    for (; s != NULL && (size_t)(e - s) >= n; s++) {
        if (memcmp(s, needle, n) == 0) {
            return s;
        }
    }
    return NULL;
}

static int key_is(const struct line *l, const char *key)
{
    return l->key_len == strlen(key) && memcmp(l->p, key, l->key_len) == 0;
}

static int has_val(const struct line *l)
{
    return l->val_len > 0 && !(l->val_len == 6 && memcmp(l->val, "<none>", 6) == 0);
}

/* 1 when every non-blank line starts with ">" (a quote in an issue). */
static int quoted_paste(const char *text, size_t len)
{
    int any = 0;
    size_t i = 0;

    while (i < len) {
        const char *s = text + i;
        const char *nl = memchr(s, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - i;
        size_t k = 0;
        i += n + 1;
        while (k < n && (is_space(s[k]) || s[k] == '\r')) {
            k++;
        }
        if (k < n) {
            if (s[k] != '>') {
                return 0;
            }
            any = 1;
        }
    }
    return any;
}

/* Cut the text into lines; NUL bytes end nothing (the caller checked). */
static int cut_lines(const char *text, size_t len, struct doc *d, struct krc_error *err)
{
    size_t cap = 0;
    size_t i = 0;
    int quoted = quoted_paste(text, len);

    while (i < len) {
        const char *s = text + i;
        const char *nl = memchr(s, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - i;
        struct line l;

        i += n + (nl != NULL);
        memset(&l, 0, sizeof(l));
        if (quoted) {
            /* "> " of a markdown quote; the rest keeps its indentation */
            size_t q = 0;
            while (q < n && is_space(s[q])) {
                q++;
            }
            if (q < n && s[q] == '>') {
                q += 1 + (q + 1 < n && s[q + 1] == ' ');
                s += q;
                n -= q;
            }
        }
        {
            size_t k = 0;
            for (; k < n && is_space(s[k]); k++) {
                l.indent = s[k] == '\t' ? (l.indent / 8 + 1) * 8 : l.indent + 1;
            }
            l.p = s + k;
            l.len = n - k;
        }
        while (l.len > 0 && (is_space(l.p[l.len - 1]) || l.p[l.len - 1] == '\r')) {
            l.len--;
            l.trimmed |= is_space(l.p[l.len]);
        }
        if (l.len == 0) {
            continue;
        }
        if (d->n == KRC_KUBE_DESCRIBE_MAX_LINES) {
            return krc_error_set(err, KRC_ETOOBIG, "kubectl describe output: more than %d lines",
                                 KRC_KUBE_DESCRIBE_MAX_LINES);
        }
        if (d->n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct line *nl2 = krc_realloc(d->l, ncap * sizeof(*nl2));
            if (nl2 == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
            d->l = nl2;
            cap = ncap;
        }
        split_key(&l);
        d->l[d->n++] = l;
    }
    return 0;
}

/* First line after i that is not indented deeper than line i. */
static size_t end_of(const struct doc *d, size_t i)
{
    size_t j = i + 1;
    while (j < d->n && d->l[j].indent > d->l[i].indent) {
        j++;
    }
    return j;
}

/* The direct child of line i with this key, or 0 (line 0 is never a child). */
static size_t child(const struct doc *d, size_t i, const char *key)
{
    size_t end = end_of(d, i);

    for (size_t j = i + 1; j < end; j++) {
        if (d->l[j].indent == d->l[i + 1].indent && key_is(&d->l[j], key)) {
            return j;
        }
    }
    return 0;
}

/* ---- JSON building (sticky out-of-memory flag) ----------------------------------- */

static cJSON *add(struct doc *d, cJSON *o, const char *k, cJSON *item)
{
    if (item == NULL || o == NULL ||
        !(cJSON_IsArray(o) ? cJSON_AddItemToArray(o, item) : cJSON_AddItemToObject(o, k, item))) {
        cJSON_Delete(item);
        d->oom = 1;
        return NULL;
    }
    return item;
}

static cJSON *add_obj(struct doc *d, cJSON *o, const char *k)
{
    return add(d, o, k, cJSON_CreateObject());
}

static void add_strn(struct doc *d, cJSON *o, const char *k, const char *s, size_t n)
{
    char *c = krc_calloc(1, n + 1);

    if (c == NULL) {
        d->oom = 1;
        return;
    }
    memcpy(c, s, n);
    add(d, o, k, cJSON_CreateString(c));
    krc_free(c);
}

/* The value of child `key` of line i as a string, when there is one. */
static void add_val(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = child(d, i, key);

    if (j != 0 && has_val(&d->l[j])) {
        add_strn(d, o, k, d->l[j].val, d->l[j].val_len);
    }
}

/* A whole decimal number (optionally negative) or -1 when it is not one. */
static int parse_int(const char *s, size_t n, long *ret)
{
    char buf[24];
    char *end;

    if (n == 0 || n >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    *ret = strtol(buf, &end, 10);
    return *end == '\0' && (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')) ? 0 : -1;
}

static void add_int_val(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = child(d, i, key);
    long v;

    if (j != 0 && parse_int(d->l[j].val, d->l[j].val_len, &v) == 0) {
        add(d, o, k, cJSON_CreateNumber((double)v));
    }
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static long long days_from_civil(long long y, int m, int d)
{
    long long era;
    long long yoe;
    long long doy;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* "Thu, 04 Jan 2024 17:52:29 +0800" -> "2024-01-04T09:52:29Z"; 0 or -1. */
static int rfc1123_to_rfc3339(const char *s, size_t n, char *out, size_t outsz)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char buf[64];
    char mon[4];
    char zone[8];
    int day, year, hh, mm, ss;
    long long off = 0;
    long long t;
    long long days;
    long long rem;
    const char *p;
    const char *m;

    if (n >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    p = strchr(buf, ',');
    p = p != NULL ? p + 1 : buf;
    zone[0] = '\0';
    /* clang-tidy: the widths (%2d %4d) bound every number: no overflow; a short match is refused */
    /* NOLINTNEXTLINE(cert-err34-c) */
    if (sscanf(p, " %2d %3s %4d %2d:%2d:%2d %7s", &day, mon, &year, &hh, &mm, &ss, zone) < 6) {
        return -1;
    }
    mon[3] = '\0';
    m = strlen(mon) == 3 ? strstr(months, mon) : NULL;
    if (m == NULL || (m - months) % 3 != 0 || day < 1 || day > 31 || hh > 23 || mm > 59 ||
        ss > 60 || year < 1) {
        return -1;
    }
    if ((zone[0] == '+' || zone[0] == '-') && strlen(zone) == 5 &&
        strspn(zone + 1, "0123456789") == 4) {
        off = ((zone[1] - '0') * 10 + (zone[2] - '0')) * 3600 +
              ((zone[3] - '0') * 10 + (zone[4] - '0')) * 60;
        off = zone[0] == '-' ? -off : off;
    } else if (zone[0] != '\0' && strcmp(zone, "UTC") != 0 && strcmp(zone, "GMT") != 0) {
        return -1;
    }
    t = days_from_civil(year, (int)((m - months) / 3) + 1, day) * 86400 + hh * 3600 + mm * 60 + ss -
        off;
    days = (t >= 0 ? t : t - 86399) / 86400;
    rem = t - days * 86400;
    {
        /* civil_from_days */
        long long z = days + 719468;
        long long era = (z >= 0 ? z : z - 146096) / 146097;
        long long doe = z - era * 146097;
        long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long long mp = (5 * doy + 2) / 153;
        long long dd = doy - (153 * mp + 2) / 5 + 1;
        long long mo = mp < 10 ? mp + 3 : mp - 9;
        long long yy = yoe + era * 400 + (mo <= 2);
        if (yy < 1 || yy > 9999) {
            return -1;
        }
        snprintf(out, outsz, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", yy, mo, dd, rem / 3600,
                 rem % 3600 / 60, rem % 60);
    }
    return 0;
}

static void add_time_val(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = child(d, i, key);
    char ts[40];

    if (j != 0 && has_val(&d->l[j]) &&
        rfc1123_to_rfc3339(d->l[j].val, d->l[j].val_len, ts, sizeof(ts)) == 0) {
        add(d, o, k, cJSON_CreateString(ts));
    }
}

/* ---- containers ---------------------------------------------------------------------- */

/* "State: Terminated" and its Reason, Exit Code, ... lines. */
static void add_state(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = child(d, i, key);
    const struct line *l;
    cJSON *st;
    cJSON *s;

    if (j == 0) {
        return;
    }
    l = &d->l[j];
    if (l->val_len == 7 && memcmp(l->val, "Running", 7) == 0) {
        st = add_obj(d, o, k);
        s = add_obj(d, st, "running");
        add_time_val(d, s, "startedAt", j, "Started");
    } else if (l->val_len == 7 && memcmp(l->val, "Waiting", 7) == 0) {
        st = add_obj(d, o, k);
        s = add_obj(d, st, "waiting");
        add_val(d, s, "reason", j, "Reason");
        add_val(d, s, "message", j, "Message");
    } else if (l->val_len == 10 && memcmp(l->val, "Terminated", 10) == 0) {
        st = add_obj(d, o, k);
        s = add_obj(d, st, "terminated");
        add_int_val(d, s, "exitCode", j, "Exit Code");
        add_int_val(d, s, "signal", j, "Signal");
        add_val(d, s, "reason", j, "Reason");
        add_val(d, s, "message", j, "Message");
        add_time_val(d, s, "startedAt", j, "Started");
        add_time_val(d, s, "finishedAt", j, "Finished");
    }
}

/* The indented lines under "Command:" / "Args:", one element each. */
static void add_lines(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = child(d, i, key);
    size_t end;
    cJSON *a;

    if (j == 0 || j + 1 >= d->n || d->l[j + 1].indent <= d->l[j].indent) {
        return;
    }
    a = add(d, o, k, cJSON_CreateArray());
    end = end_of(d, j);
    for (size_t m = j + 1; m < end && !d->oom; m++) {
        add_strn(d, a, NULL, d->l[m].p, d->l[m].len);
    }
}

/* "memory:  1Gi" lines under "Limits:" / "Requests:". */
static void add_map(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = child(d, i, key);
    size_t end;
    cJSON *m;

    if (j == 0 || j + 1 >= d->n || d->l[j + 1].indent <= d->l[j].indent) {
        return;
    }
    m = add_obj(d, o, k);
    end = end_of(d, j);
    for (size_t x = j + 1; x < end && !d->oom; x++) {
        const struct line *l = &d->l[x];
        char name[128];
        if (l->key_len == 0 || l->key_len >= sizeof(name) || !has_val(l)) {
            continue;
        }
        memcpy(name, l->p, l->key_len);
        name[l->key_len] = '\0';
        add_strn(d, m, name, l->val, l->val_len);
    }
}

/* "10s" -> 10 */
static int seconds(const char *s, size_t n, long *ret)
{
    return n > 1 && s[n - 1] == 's' ? parse_int(s, n - 1, ret) : -1;
}

static void add_port(struct doc *d, cJSON *o, const char *s, size_t n)
{
    long v;

    if (parse_int(s, n, &v) == 0) {
        add(d, o, "port", cJSON_CreateNumber((double)v));
    } else if (n > 0) {
        add_strn(d, o, "port", s, n);
    }
}

/* "HOST:PORT" up to the first space in [a, e): the port into o. */
static void add_host_port(struct doc *d, cJSON *o, const char *a, const char *e)
{
    const char *ae = memchr(a, ' ', (size_t)(e - a));
    const char *colon;

    ae = ae != NULL ? ae : e;
    colon = memchr(a, ':', (size_t)(ae - a));
    if (colon != NULL) {
        add_port(d, o, colon + 1, (size_t)(ae - colon - 1));
    }
}

/* "http-get http://:8080/healthz delay=10s timeout=1s period=10s #success=1 #failure=3",
 * "exec [cat /tmp/ready] delay=0s ...", "tcp-socket :5432 ...", "grpc <pod>:9090  ..." */
static void add_probe(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    static const struct {
        const char *word;
        const char *field;
    } nums[] = {{"delay=", "initialDelaySeconds"},
                {"timeout=", "timeoutSeconds"},
                {"period=", "periodSeconds"},
                {"#success=", "successThreshold"},
                {"#failure=", "failureThreshold"}};
    size_t j = child(d, i, key);
    const char *s;
    const char *e;
    cJSON *p;

    if (j == 0 || !has_val(&d->l[j])) {
        return;
    }
    s = d->l[j].val;
    e = s + d->l[j].val_len;
    p = add_obj(d, o, k);
    if (e - s > 9 && memcmp(s, "http-get ", 9) == 0) {
        const char *u = s + 9;
        const char *ue = memchr(u, ' ', (size_t)(e - u));
        const char *hp;
        const char *path;
        cJSON *h = add_obj(d, p, "httpGet");
        ue = ue != NULL ? ue : e;
        hp = find(u, ue, "://");
        if (hp != NULL && hp < ue) {
            const char *colon;
            add_strn(d, h, "scheme", u, (size_t)(hp - u));
            hp += 3;
            path = memchr(hp, '/', (size_t)(ue - hp));
            path = path != NULL ? path : ue;
            colon = memchr(hp, ':', (size_t)(path - hp));
            if (colon != NULL) {
                add_port(d, h, colon + 1, (size_t)(path - colon - 1));
            }
            if (path < ue) {
                add_strn(d, h, "path", path, (size_t)(ue - path));
            }
        }
        cJSON *sc = cJSON_GetObjectItemCaseSensitive(h, "scheme");
        if (sc != NULL) {
            for (char *c = sc->valuestring; c != NULL && *c != '\0'; c++) {
                *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
            }
        }
    } else if (e - s > 6 && memcmp(s, "exec [", 6) == 0) {
        const char *c = s + 6;
        const char *ce = memchr(c, ']', (size_t)(e - c));
        cJSON *x = add_obj(d, p, "exec");
        cJSON *a = add(d, x, "command", cJSON_CreateArray());
        ce = ce != NULL ? ce : e;
        while (c < ce && !d->oom) {
            const char *w = c;
            while (w < ce && *w != ' ') {
                w++;
            }
            if (w > c) {
                add_strn(d, a, NULL, c, (size_t)(w - c));
            }
            c = w + 1;
        }
    } else if (e - s > 11 && memcmp(s, "tcp-socket ", 11) == 0) {
        add_host_port(d, add_obj(d, p, "tcpSocket"), s + 11, e);
    } else if (e - s > 5 && memcmp(s, "grpc ", 5) == 0) {
        add_host_port(d, add_obj(d, p, "grpc"), s + 5, e);
    }
    for (const char *w = s; w < e && !d->oom;) {
        const char *we = memchr(w, ' ', (size_t)(e - w));
        we = we != NULL ? we : e;
        for (size_t n = 0; n < sizeof(nums) / sizeof(nums[0]); n++) {
            size_t wl = strlen(nums[n].word);
            long v;
            if ((size_t)(we - w) > wl && memcmp(w, nums[n].word, wl) == 0 &&
                ((n < 3 && seconds(w + wl, (size_t)(we - w) - wl, &v) == 0) ||
                 (n >= 3 && parse_int(w + wl, (size_t)(we - w) - wl, &v) == 0))) {
                add(d, p, nums[n].field, cJSON_CreateNumber((double)v));
            }
        }
        w = we + 1;
    }
}

/* Is the container's spec part all there? kubectl prints Limits, Requests
 * and the probes before Environment and Mounts (always printed, "<none>"
 * when empty): a block without them was cut, and a spec entry built from
 * it would tell kube_parse that the container has no limit and no probe. */
static int spec_shown(const struct doc *d, size_t i)
{
    return child(d, i, "Environment") != 0 || child(d, i, "Environment Variables from") != 0 ||
           child(d, i, "Mounts") != 0 || child(d, i, "Devices") != 0;
}

/* A probe line of container i ("Liveness:", "Readiness:", "Startup:"). */
static int probe_shown(const struct doc *d, size_t i)
{
    return child(d, i, "Liveness") != 0 || child(d, i, "Readiness") != 0 ||
           child(d, i, "Startup") != 0;
}

/* The spec entry (NULL when not shown) and the status entry of container
 * i; from a cut block (!full) only the probes its lines show. */
static void add_container_fields(struct doc *d, cJSON *sp, cJSON *st, size_t i, int full)
{
    if (sp != NULL && full) {
        add_val(d, sp, "image", i, "Image");
        add_lines(d, sp, "command", i, "Command");
        add_lines(d, sp, "args", i, "Args");
        if (child(d, i, "Limits") != 0 || child(d, i, "Requests") != 0) {
            cJSON *res = add_obj(d, sp, "resources");
            add_map(d, res, "limits", i, "Limits");
            add_map(d, res, "requests", i, "Requests");
        }
    }
    if (sp != NULL) {
        add_probe(d, sp, "livenessProbe", i, "Liveness");
        add_probe(d, sp, "readinessProbe", i, "Readiness");
        add_probe(d, sp, "startupProbe", i, "Startup");
    }
    add_val(d, st, "image", i, "Image");
    add_val(d, st, "containerID", i, "Container ID");
    add_state(d, st, "state", i, "State");
    add_state(d, st, "lastState", i, "Last State");
    add_int_val(d, st, "restartCount", i, "Restart Count");
    {
        size_t r = child(d, i, "Ready");
        if (r != 0 && has_val(&d->l[r])) {
            int t = d->l[r].val_len == 4 && memcmp(d->l[r].val, "True", 4) == 0;
            int f = d->l[r].val_len == 5 && memcmp(d->l[r].val, "False", 5) == 0;
            if (t || f) {
                add(d, st, "ready", cJSON_CreateBool(t));
            }
        }
    }
}

static int add_containers(struct doc *d, cJSON *spec_arr, cJSON *status_arr, size_t sec,
                          struct krc_error *err)
{
    size_t end = end_of(d, sec);

    for (size_t i = sec + 1; i < end && !d->oom; i++) {
        const struct line *l = &d->l[i];
        cJSON *sp;
        cJSON *st;
        char *name;
        if (l->indent != d->l[sec + 1].indent) {
            continue;
        }
        if (l->unnamed) {
            /* no name: kube_parse matches it to the only spec container */
            sp = spec_shown(d, i) || probe_shown(d, i) ? add_obj(d, spec_arr, NULL) : NULL;
            st = add_obj(d, status_arr, NULL);
            add_container_fields(d, sp, st, i, spec_shown(d, i));
            continue;
        }
        if (l->key_len == 0 || l->val_len != 0) {
            return krc_error_set(err, KRC_EINVAL,
                                 "kubectl describe output: expected a container name (\"app:\") "
                                 "under %.*s, got \"%.*s\"",
                                 (int)d->l[sec].key_len, d->l[sec].p,
                                 (int)(l->len < 60 ? l->len : 60), l->p);
        }
        name = krc_calloc(1, l->key_len + 1);
        if (name == NULL) {
            d->oom = 1;
            break;
        }
        memcpy(name, l->p, l->key_len);
        sp = spec_shown(d, i) || probe_shown(d, i) ? add_obj(d, spec_arr, NULL) : NULL;
        st = add_obj(d, status_arr, NULL);
        if (sp != NULL) {
            add(d, sp, "name", cJSON_CreateString(name));
        }
        add(d, st, "name", cJSON_CreateString(name));
        krc_free(name);
        add_container_fields(d, sp, st, i, spec_shown(d, i));
    }
    return 0;
}

/* ---- events ---------------------------------------------------------------------------- */

/* Cut a table row into n fields: at the header's column offsets when the row
 * lines up with them, else at runs of two or more spaces (the last field
 * keeps the rest). */
static size_t row_fields(const struct line *row, const size_t *col, size_t n, const char **f,
                         size_t *fl)
{
    size_t k;
    int aligned = row->len > col[n - 1];

    for (k = 1; aligned && k < n; k++) {
        /* a field starts at its column, or is empty (old tables leave
         * SubObjectPath empty) */
        size_t e = k + 1 < n ? col[k + 1] : row->len;
        size_t j = col[k];
        while (j < e && is_space(row->p[j])) {
            j++;
        }
        aligned = col[k] > 0 && is_space(row->p[col[k] - 1]) && (j == col[k] || j == e);
    }
    if (aligned) {
        for (k = 0; k < n; k++) {
            size_t a = col[k];
            size_t b = k + 1 < n ? col[k + 1] : row->len;
            while (b > a && is_space(row->p[b - 1])) {
                b--;
            }
            f[k] = row->p + a;
            fl[k] = b - a;
        }
        return n;
    }
    {
        size_t i = 0;
        for (k = 0; k < n && i < row->len; k++) {
            size_t s = i;
            size_t e = i;
            if (k + 1 == n) {
                e = row->len;
            } else {
                while (e < row->len &&
                       !(is_space(row->p[e]) && e + 1 < row->len && is_space(row->p[e + 1]))) {
                    e++;
                }
            }
            f[k] = row->p + s;
            fl[k] = e - s;
            i = e;
            while (i < row->len && is_space(row->p[i])) {
                i++;
            }
        }
        return k;
    }
}

/* ---- the pod ----------------------------------------------------------------------------- */

/* A "Key:" line whose key reads like kubectl's: "Restart Count", "QoS Class". */
static int describe_key(const struct line *l)
{
    if (l->key_len == 0 || l->p[0] < 'A' || l->p[0] > 'Z') {
        return 0;
    }
    for (size_t i = 1; i < l->key_len; i++) {
        char c = l->p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ' ' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

static int top_key(const struct line *l)
{
    static const char *const keys[] = {"Name",
                                       "Namespace",
                                       "Priority",
                                       "Priority Class Name",
                                       "Runtime Class Name",
                                       "Service Account",
                                       "Node",
                                       "Start Time",
                                       "Labels",
                                       "Annotations",
                                       "Status",
                                       "Reason",
                                       "Message",
                                       "IP",
                                       "IPs",
                                       "Controlled By",
                                       "Init Containers",
                                       "Containers",
                                       "Ephemeral Containers",
                                       "Readiness Gates",
                                       "Conditions",
                                       "Volumes",
                                       "QoS Class",
                                       "Node-Selectors",
                                       "Tolerations",
                                       "Events",
                                       "Nominated Node Name",
                                       "SeccompProfile",
                                       "Topology Spread Constraints",
                                       NULL};

    for (size_t i = 0; keys[i] != NULL; i++) {
        if (key_is(l, keys[i])) {
            return 1;
        }
    }
    return 0;
}

static int in_list(const struct line *l, const char *const *keys)
{
    for (size_t i = 0; keys[i] != NULL; i++) {
        if (key_is(l, keys[i])) {
            return 1;
        }
    }
    return 0;
}

/* The keys of one container's block (the lines under "  app:"). */
static int container_key(const struct line *l)
{
    static const char *const keys[] = {
        "Container ID",  "Image",     "Image ID",    "Port",
        "Ports",         "Host Port", "Host Ports",  "Command",
        "Args",          "State",     "Last State",  "Ready",
        "Restart Count", "Limits",    "Requests",    "Liveness",
        "Readiness",     "Startup",   "Environment", "Environment Variables from",
        "Mounts",        "Devices",   NULL};
    return in_list(l, keys);
}

/* The keys under "State:" / "Last State:". */
static int state_key(const struct line *l)
{
    static const char *const keys[] = {"Reason",  "Message",  "Exit Code", "Signal",
                                       "Started", "Finished", NULL};
    return in_list(l, keys);
}

/* strspn within the line (the text is not NUL-terminated). */
static size_t span(const struct line *l, const char *set)
{
    size_t n = 0;

    while (n < l->len && strchr(set, l->p[n]) != NULL && l->p[n] != '\0') {
        n++;
    }
    return n;
}

/* "...", "[...]", "<snip>": the poster left lines out here. */
static int is_elision(const struct line *l)
{
    static const char *const marks[] = {"[...]",  "(...)",      "<...>",     "\xE2\x80\xA6",
                                        "<snip>", "[snip]",     "<snipped>", "[snipped]",
                                        "(snip)", "...snip...", NULL};
    size_t dots = span(l, ".");

    if (l->key_len != 0) {
        return 0;
    }
    if (dots >= 3 && dots == l->len) {
        return 1;
    }
    for (size_t i = 0; marks[i] != NULL; i++) {
        if (l->len == strlen(marks[i]) && memcmp(l->p, marks[i], l->len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* ---- event tables ------------------------------------------------------------------------ */

/* The columns of an event table: describe's Events table, or the default
 * output of `kubectl get events` (with a NAMESPACE column under -A). */
enum {
    COL_TYPE,
    COL_REASON,
    COL_AGE,
    COL_FROM,
    COL_MESSAGE,
    COL_OBJECT,
    COL_NS,
    COL_COUNT,
    COL_PATH,
    COL_N
};

#define TABLE_COLS 8
#define TAB_LINE_MAX 4096

struct table {
    size_t n;               /* columns */
    size_t col[TABLE_COLS]; /* offsets in the header line (tabs expanded) */
    int field[COL_N];       /* COL_* -> column index, -1 when absent */
};

/* Old kubectl separated the columns with tabs, aligned at 8-column stops:
 * *out is the line with its tabs expanded (columns counted from the start
 * of the line) in buf, or the line itself when it has no tab or is longer
 * than buf. */
static const struct line *expand_tabs(const struct line *l, char *buf, size_t cap, struct line *out)
{
    size_t col = l->indent;
    size_t n = 0;

    if (memchr(l->p, '\t', l->len) == NULL) {
        return l;
    }
    for (size_t i = 0; i < l->len; i++) {
        size_t w = l->p[i] == '\t' ? 8 - col % 8 : 1;
        if (n + w > cap) {
            return l;
        }
        memset(buf + n, l->p[i] == '\t' ? ' ' : l->p[i], w);
        n += w;
        col += w;
    }
    *out = *l;
    out->p = buf;
    out->len = n;
    return out;
}

static int header_cols(const struct line *l, const char *const *heads, size_t n, size_t *col)
{
    const char *pos = l->p;
    const char *end = l->p + l->len;

    for (size_t k = 0; k < n; k++) {
        const char *h = find(pos, end, heads[k]);
        size_t hl = strlen(heads[k]);
        if (h == NULL || (h > l->p && !is_space(h[-1])) || (h + hl < end && !is_space(h[hl]))) {
            return 0;
        }
        col[k] = (size_t)(h - l->p);
        pos = h + hl;
    }
    return col[0] == 0 && pos == end;
}

/* 1 when line l is the header of an event table; *t says its layout. */
static int table_header(const struct line *raw, struct table *t)
{
    static const char *const describe[] = {"Type", "Reason", "Age", "From", "Message"};
    static const char *const old[] = {"FirstSeen",     "LastSeen", "Count",  "From",
                                      "SubObjectPath", "Type",     "Reason", "Message"};
    static const char *const old2[] = {"FirstSeen",     "LastSeen", "Count",  "From",
                                       "SubobjectPath", "Type",     "Reason", "Message"};
    char buf[TAB_LINE_MAX];
    struct line x;
    const struct line *l = expand_tabs(raw, buf, sizeof(buf), &x);
    static const char *const get[] = {"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"};
    static const char *const get_ns[] = {"NAMESPACE", "LAST SEEN", "TYPE",
                                         "REASON",    "OBJECT",    "MESSAGE"};
    int i;

    for (i = 0; i < COL_N; i++) {
        t->field[i] = -1;
    }
    if (l->key_len != 0) {
        return 0;
    }
    if (header_cols(l, describe, 5, t->col)) {
        t->n = 5;
        for (i = 0; i < 5; i++) {
            t->field[i] = i; /* COL_TYPE .. COL_MESSAGE */
        }
        return 1;
    }
    if (header_cols(l, old, 8, t->col) || header_cols(l, old2, 8, t->col)) {
        /* kubectl before 1.10 */
        static const int map[COL_N] = {5, 6, -1, 3, 7, -1, -1, 2, 4};
        t->n = 8;
        memcpy(t->field, map, sizeof(map));
        return 1;
    }
    i = header_cols(l, get_ns, 6, t->col) ? 1 : header_cols(l, get, 5, t->col) ? 0 : -1;
    if (i < 0) {
        return 0;
    }
    t->n = 5 + (size_t)i;
    t->field[COL_NS] = i ? 0 : -1;
    t->field[COL_AGE] = -1; /* LAST SEEN carries no count */
    t->field[COL_TYPE] = 1 + i;
    t->field[COL_REASON] = 2 + i;
    t->field[COL_OBJECT] = 3 + i;
    t->field[COL_MESSAGE] = 4 + i;
    return 1;
}

static int is_rule(const struct line *l)
{
    return l->p[0] == '-' && span(l, "- \t") == l->len;
}

/* The next word of the row from *i on: its start and length. */
static size_t word(const struct line *l, size_t *i, const char **ret)
{
    size_t s = *i;

    while (s < l->len && is_space(l->p[s])) {
        s++;
    }
    *i = s;
    while (*i < l->len && !is_space(l->p[*i])) {
        (*i)++;
    }
    *ret = l->p + s;
    return *i - s;
}

/* A row whose runs of spaces were squeezed to one (a web page's copy):
 * every column but the message is one word, except describe's Age, which
 * may go on with "(x6 over 28s)", and From, with ", HOST" after a comma. */
static size_t row_tokens(const struct line *l, const struct table *t, const char **f, size_t *fl)
{
    size_t i = 0;
    size_t k;

    for (k = 0; k + 1 < t->n; k++) {
        fl[k] = word(l, &i, &f[k]);
        if (fl[k] == 0) {
            return k;
        }
        if ((int)k == t->field[COL_AGE] || (int)k == t->field[COL_FROM]) {
            size_t j = i;
            const char *w;
            size_t wl = word(l, &j, &w);
            int more = (int)k == t->field[COL_AGE] ? wl > 2 && memcmp(w, "(x", 2) == 0
                                                   : f[k][fl[k] - 1] == ',';
            if (more && (int)k == t->field[COL_AGE]) {
                while (j < l->len && l->p[j - 1] != ')') {
                    wl = word(l, &j, &w);
                    if (wl == 0) {
                        break;
                    }
                }
            }
            if (more && wl > 0) {
                fl[k] = (size_t)(l->p + j - f[k]);
                i = j;
            }
        }
    }
    while (i < l->len && is_space(l->p[i])) {
        i++;
    }
    f[k] = l->p + i;
    fl[k] = l->len - i;
    return t->n;
}

/* A row: at the header's indentation, with an event type in its column
 * (Kubernetes has two: Normal and Warning) and all columns up to the
 * message (which may be empty). */
static int table_row(const struct line *raw, const struct line *hdr, const struct table *t,
                     char *buf, const char **f, size_t *fl)
{
    struct line x;
    const struct line *l = expand_tabs(raw, buf, TAB_LINE_MAX, &x);
    size_t got;
    int ty = t->field[COL_TYPE];

    if (l->indent != hdr->indent) {
        return 0;
    }
    got = row_fields(l, t->col, t->n, f, fl);
    if (got + 1 < t->n && t->field[COL_PATH] < 0) {
        got = row_tokens(l, t, f, fl);
    }
    if (got + 1 < t->n) {
        return 0;
    }
    if (got < t->n) {
        f[t->n - 1] = l->p + l->len;
        fl[t->n - 1] = 0;
    }
    return (fl[ty] == 6 && memcmp(f[ty], "Normal", 6) == 0) ||
           (fl[ty] == 7 && memcmp(f[ty], "Warning", 7) == 0);
}

/* describe's table without its header (rows pasted alone): cut at runs of
 * spaces, or word by word when they were squeezed. */
static void bare_table(struct table *t)
{
    memset(t, 0, sizeof(*t));
    t->n = 5;
    for (int i = 0; i < COL_N; i++) {
        t->field[i] = i < 5 ? i : -1; /* COL_TYPE .. COL_MESSAGE */
    }
}

/* digits then a unit, repeated ("2s", "11m", "3h5m"), "<unknown>", "<invalid>" */
static int age_word(const char *s, size_t n)
{
    size_t i = 0;

    if ((n == 9 && memcmp(s, "<unknown>", 9) == 0) || (n == 9 && memcmp(s, "<invalid>", 9) == 0)) {
        return 1;
    }
    while (i < n) {
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
        if (i == d || i == n || strchr("smhdy", s[i]) == NULL || s[i] == '\0') {
            return 0;
        }
        i++;
    }
    return n > 0;
}

/* An Age column: "13s", or "13s (x3 over 34s)" (spaces may be squeezed). */
static int age_field(const char *s, size_t n)
{
    const char *sp = memchr(s, ' ', n);
    const char *x;
    size_t i;

    if (sp == NULL) {
        return age_word(s, n);
    }
    if (!age_word(s, (size_t)(sp - s))) {
        return 0;
    }
    x = sp + 1;
    n -= (size_t)(x - s);
    if (n < 9 || memcmp(x, "(x", 2) != 0 || x[n - 1] != ')') {
        return 0;
    }
    for (i = 2; i < n && x[i] >= '0' && x[i] <= '9'; i++) {
    }
    if (i == 2 || n - i < 7 || memcmp(x + i, " over ", 6) != 0) {
        return 0;
    }
    return age_word(x + i + 6, n - i - 7);
}

/* A From column: "kubelet", "default-scheduler", "kubelet, node-1" or,
 * before kubectl 1.10, "{kubelet node-1}". */
static int from_field(const char *s, size_t n)
{
    size_t i = 0;

    if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
        s++;
        n -= 2;
        while (n > 0 && s[n - 1] == ' ') {
            n--; /* "{default-scheduler }" */
        }
    }
    if (n == 0 || s[0] < 'a' || s[0] > 'z') {
        return 0;
    }
    while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
        i++;
    }
    if (i < n && (s[i] == ',' || s[i] == ' ')) {
        i++;
        while (i < n && s[i] == ' ') {
            i++;
        }
        if (i == n) {
            return 0;
        }
        while (i < n && s[i] != ' ' && s[i] != '\t') {
            i++;
        }
    }
    return i == n;
}

/* A row of describe's Events table pasted without its header: Normal or
 * Warning, a Reason word, an Age, a From, then the message. */
static int bare_row(const struct line *l)
{
    struct table t;
    const char *f[TABLE_COLS] = {NULL};
    size_t fl[TABLE_COLS] = {0}; /* table_row fills the columns it returns (clang-tidy) */
    char buf[TAB_LINE_MAX];

    bare_table(&t);
    if (!table_row(l, l, &t, buf, f, fl) || fl[COL_REASON] < 2 || f[COL_REASON][0] < 'A' ||
        f[COL_REASON][0] > 'Z') {
        return 0;
    }
    for (size_t i = 1; i < fl[COL_REASON]; i++) {
        char c = f[COL_REASON][i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            return 0;
        }
    }
    return age_field(f[COL_AGE], fl[COL_AGE]) && from_field(f[COL_FROM], fl[COL_FROM]);
}

/* Line l continues line prev, broken by the terminal: prev is as wide as a
 * terminal (80 columns or more) and ends without white space, and l starts
 * at column 0. A terminal keeps the space of a break between words (at the
 * end of prev or the start of l), so such a break is inside a word: the
 * lines are joined without a space. Only used after rows pasted without
 * their header; a table's wrapped lines are taken as the poster's and
 * joined with one space. */
static int terminal_wrap(const struct line *prev, const struct line *l)
{
    return l->indent == 0 && !prev->trimmed && prev->indent + prev->len >= 80;
}

/* Mark the event tables: header, rule, rows, and the lines a long message
 * was wrapped onto (after a row, until a line that is describe's own);
 * then the rows pasted without a header, each followed by the lines the
 * terminal wrapped it onto. */
static void mark_tables(struct doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        struct table t;
        int rows = 0;
        if (d->l[i].kind != LN_TEXT || !table_header(&d->l[i], &t)) {
            continue;
        }
        d->l[i].kind = LN_HEADER;
        for (size_t j = i + 1; j < d->n; j++) {
            struct line *l = &d->l[j];
            const char *f[TABLE_COLS];
            size_t fl[TABLE_COLS];
            char buf[TAB_LINE_MAX];
            struct table t2;
            if (l->kind == LN_ELISION) {
                continue;
            }
            if (is_rule(l)) {
                l->kind = LN_RULE;
            } else if (table_row(l, &d->l[i], &t, buf, f, fl)) {
                l->kind = LN_ROW;
                rows = 1;
            } else if (rows && !table_header(l, &t2) &&
                       !(describe_key(l) && l->indent <= d->l[i].indent)) {
                l->kind = LN_WRAP; /* posted wraps: joined with a space */
            } else {
                break;
            }
        }
    }
    for (size_t i = 0; i < d->n; i++) {
        if (d->l[i].kind != LN_TEXT || !bare_row(&d->l[i])) {
            continue;
        }
        d->l[i].kind = LN_BROW;
        while (i + 1 < d->n && d->l[i + 1].kind == LN_TEXT && !bare_row(&d->l[i + 1]) &&
               terminal_wrap(&d->l[i], &d->l[i + 1])) {
            d->l[++i].kind = LN_WRAP;
            d->l[i].glued = 1;
        }
    }
}

/* "<x>" -> "<X>" for the kinds `kubectl get events` names in OBJECT. */
static const char *object_kind(const char *s, size_t n)
{
    static const char *const kinds[] = {
        "pod",        "Pod",        "node",        "Node",        "replicaset", "ReplicaSet",
        "deployment", "Deployment", "statefulset", "StatefulSet", "daemonset",  "DaemonSet",
        "job",        "Job",        "cronjob",     "CronJob",     NULL};
    for (size_t i = 0; kinds[i] != NULL; i += 2) {
        if (n == strlen(kinds[i]) && memcmp(s, kinds[i], n) == 0) {
            return kinds[i + 1];
        }
    }
    return NULL;
}

/* From: "kubelet, minikube", "kubelet" or, before kubectl 1.10,
 * "{kubelet node-1}" / "{default-scheduler }": component and host. */
static void add_source(struct doc *d, cJSON *ev, const char *s, size_t sl)
{
    const char *x;
    cJSON *o;

    if (sl >= 2 && s[0] == '{' && s[sl - 1] == '}') {
        s++;
        sl -= 2;
        while (sl > 0 && is_space(s[sl - 1])) {
            sl--;
        }
        x = memchr(s, ' ', sl);
    } else {
        x = memchr(s, ',', sl);
    }
    if (sl == 0) {
        return;
    }
    o = add_obj(d, ev, "source");
    if (x != NULL) {
        const char *h = x + 1;
        while (h < s + sl && is_space(*h)) {
            h++;
        }
        add_strn(d, o, "component", s, (size_t)(x - s));
        if (h < s + sl) {
            add_strn(d, o, "host", h, (size_t)(s + sl - h));
        }
    } else {
        add_strn(d, o, "component", s, sl);
    }
}

/* One event from a row and the lines its message was wrapped onto. */
static void add_event(struct doc *d, cJSON *items, const struct table *t, size_t row,
                      const char *name, const char *ns)
{
    const char *f[TABLE_COLS];
    size_t fl[TABLE_COLS];
    char buf[TAB_LINE_MAX];
    cJSON *ev;
    cJSON *o;
    size_t mlen;
    size_t end;
    char *msg;

    table_row(&d->l[row], &d->l[row], t, buf, f, fl);
    ev = add_obj(d, items, NULL);
    add(d, ev, "kind", cJSON_CreateString("Event"));
    add_strn(d, ev, "type", f[t->field[COL_TYPE]], fl[t->field[COL_TYPE]]);
    add_strn(d, ev, "reason", f[t->field[COL_REASON]], fl[t->field[COL_REASON]]);
    /* the message, with wrapped lines joined by one space */
    mlen = fl[t->field[COL_MESSAGE]];
    for (end = row + 1; end < d->n && (d->l[end].kind == LN_WRAP || d->l[end].kind == LN_ELISION);
         end++) {
        mlen += d->l[end].kind == LN_WRAP ? d->l[end].len + 1 : 0;
    }
    msg = krc_malloc(mlen + 1);
    if (msg == NULL) {
        d->oom = 1;
        return;
    }
    mlen = fl[t->field[COL_MESSAGE]];
    memcpy(msg, f[t->field[COL_MESSAGE]], mlen);
    for (size_t w = row + 1; w < end; w++) {
        if (d->l[w].kind == LN_WRAP) {
            if (mlen > 0 && !d->l[w].glued) {
                msg[mlen++] = ' ';
            }
            memcpy(msg + mlen, d->l[w].p, d->l[w].len);
            mlen += d->l[w].len;
        }
    }
    msg[mlen] = '\0';
    if (mlen > 0) {
        add(d, ev, "message", cJSON_CreateString(msg));
    }
    krc_free(msg);
    if (t->field[COL_AGE] >= 0) {
        /* "2m (x13 over 9m)": the count; no "(x": one */
        const char *a = f[t->field[COL_AGE]];
        size_t al = fl[t->field[COL_AGE]];
        const char *x = memchr(a, '(', al);
        long count = 1;
        if (x != NULL && x + 2 < a + al && x[1] == 'x') {
            const char *q = x + 2;
            count = 0;
            while (q < a + al && *q >= '0' && *q <= '9' && count < 100000000) {
                count = count * 10 + (*q++ - '0');
            }
        }
        add(d, ev, "count", cJSON_CreateNumber(count > 0 ? (double)count : 1));
    }
    if (t->field[COL_COUNT] >= 0) {
        long count;
        if (parse_int(f[t->field[COL_COUNT]], fl[t->field[COL_COUNT]], &count) == 0 && count > 0) {
            add(d, ev, "count", cJSON_CreateNumber((double)count));
        }
    }
    if (t->field[COL_FROM] >= 0) {
        add_source(d, ev, f[t->field[COL_FROM]], fl[t->field[COL_FROM]]);
    }
    o = add_obj(d, ev, "involvedObject");
    if (t->field[COL_PATH] >= 0 && fl[t->field[COL_PATH]] > 0) {
        add_strn(d, o, "fieldPath", f[t->field[COL_PATH]], fl[t->field[COL_PATH]]);
    }
    if (t->field[COL_OBJECT] >= 0) {
        /* "pod/web-1" */
        const char *s = f[t->field[COL_OBJECT]];
        size_t sl = fl[t->field[COL_OBJECT]];
        const char *slash = memchr(s, '/', sl);
        const char *k = slash != NULL ? object_kind(s, (size_t)(slash - s)) : NULL;
        if (k != NULL) {
            add(d, o, "kind", cJSON_CreateString(k));
        }
        if (slash != NULL && slash + 1 < s + sl) {
            add_strn(d, o, "name", slash + 1, (size_t)(s + sl - slash - 1));
        }
        if (t->field[COL_NS] >= 0 && fl[t->field[COL_NS]] > 0) {
            add_strn(d, o, "namespace", f[t->field[COL_NS]], fl[t->field[COL_NS]]);
        }
    } else {
        /* describe's table lists the described pod's events */
        add(d, o, "kind", cJSON_CreateString("Pod"));
        if (name != NULL) {
            add(d, o, "name", cJSON_CreateString(name));
        }
        if (ns != NULL) {
            add(d, o, "namespace", cJSON_CreateString(ns));
        }
    }
}

/* The event List of every table in the text (NULL on out of memory). */
static char *events_json(struct doc *d, const char *name, const char *ns)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *items;
    char *text = NULL;

    add(d, root, "apiVersion", cJSON_CreateString("v1"));
    add(d, root, "kind", cJSON_CreateString("List"));
    items = add(d, root, "items", cJSON_CreateArray());
    for (size_t i = 0; i < d->n && !d->oom; i++) {
        struct table t;
        if (d->l[i].kind == LN_BROW) {
            bare_table(&t);
            add_event(d, items, &t, i, name, ns);
            continue;
        }
        if (d->l[i].kind != LN_HEADER) {
            continue;
        }
        table_header(&d->l[i], &t);
        for (size_t j = i + 1;
             j < d->n && !d->oom && d->l[j].kind >= LN_ELISION && d->l[j].kind != LN_HEADER; j++) {
            if (d->l[j].kind == LN_ROW) {
                add_event(d, items, &t, j, name, ns);
            }
        }
    }
    if (!d->oom) {
        text = cJSON_PrintUnformatted(root);
        d->oom = text == NULL;
    }
    cJSON_Delete(root);
    return text;
}

/* ---- structure ---------------------------------------------------------------------------- */

static void mark_elisions(struct doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        if (is_elision(&d->l[i])) {
            d->l[i].kind = LN_ELISION;
        }
    }
}

/* An indentation common to the "Key:" lines (a quoted or indented paste)
 * is removed; lines left of it count as column 0. */
static void dedent(struct doc *d)
{
    size_t base = SIZE_MAX;

    for (size_t i = 0; i < d->n; i++) {
        if (d->l[i].kind == LN_TEXT && d->l[i].key_len > 0 && d->l[i].indent < base) {
            base = d->l[i].indent;
        }
    }
    for (size_t i = 0; base != SIZE_MAX && i < d->n; i++) {
        d->l[i].indent = d->l[i].indent > base ? d->l[i].indent - base : 0;
    }
}

/* "app:": a container's name (a DNS label) and nothing after it. */
static int name_key(const struct line *l)
{
    if (l->key_len == 0 || l->val_len != 0) {
        return 0;
    }
    for (size_t i = 0; i < l->key_len; i++) {
        char c = l->p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
            return 0;
        }
    }
    return 1;
}

/* A line at column 0 that ends a multi-line message: one of describe's own. */
static int own_line(const struct line *l)
{
    return l->kind != LN_TEXT || top_key(l) || container_key(l) || state_key(l) || name_key(l);
}

/* kubectl prints a multi-line message (a termination message, a stack
 * trace) as it is, so its later lines start anywhere, often at column 0.
 * Join them to their "Message:" line until a line that is one of
 * describe's own: a table or elision line, a known key at column 0, or a
 * key line at an even indentation no deeper than the message's. Other
 * lines at column 0 that are not describe's (a shell prompt) are dropped. */
static void join_messages(struct doc *d)
{
    size_t out = 0;
    size_t msg = SIZE_MAX;
    size_t cmd = SIZE_MAX; /* a "Command:" / "Args:" whose items lost their indentation */

    for (size_t i = 0; i < d->n; i++) {
        struct line *l = &d->l[i];
        if (cmd != SIZE_MAX && l->indent == 0 && l->kind == LN_TEXT && !own_line(l) &&
            !describe_key(l)) {
            /* kubectl prints each item on its own line, indented below */
            d->l[out] = *l;
            d->l[out++].indent = d->l[cmd].indent + 2;
            continue;
        }
        cmd = SIZE_MAX;
        if (msg != SIZE_MAX) {
            const struct line *m = &d->l[msg];
            int ends = l->indent == 0 || l->kind != LN_TEXT
                           ? own_line(l)
                           : describe_key(l) && l->indent % 2 == 0 && l->indent <= m->indent;
            if (!ends) {
                d->l[msg].val_len = (size_t)(l->p + l->len - m->val);
                continue;
            }
            msg = SIZE_MAX;
        }
        if (l->indent == 0 && !own_line(l)) {
            continue;
        }
        d->l[out] = *l;
        if (l->kind == LN_TEXT && key_is(l, "Message") && l->val_len > 0) {
            msg = out;
        }
        if (l->kind == LN_TEXT && (key_is(l, "Command") || key_is(l, "Args")) && l->val_len == 0 &&
            i + 1 < d->n && d->l[i + 1].indent == 0) {
            cmd = out;
        }
        out++;
    }
    d->n = out;
}

/* Replace indentation by nesting depth, dropping table and elision lines.
 * A line's parent is the nearest line above it that is indented less,
 * except that an elision ends the lines indented as deep as it or deeper
 * (the lines after "<snip>" are not inside the ones before it), and that
 * describe's "Key:" lines only nest under a key without a value ("app:",
 * "Containers:") or under State / Last State. */
#define NEST_MAX 32
static void nest(struct doc *d)
{
    struct {
        size_t indent;
        int takes_keys;
    } st[NEST_MAX];
    size_t top = 0;
    size_t out = 0;
    size_t flat = SIZE_MAX; /* indentation of the last State / Last State line */
    size_t sec = SIZE_MAX;  /* of a "Containers:" whose entries lost theirs */

    for (size_t i = 0; i < d->n; i++) {
        struct line l = d->l[i];
        size_t raw = l.indent;
        int is_state = key_is(&l, "State") || key_is(&l, "Last State");
        if (l.kind != LN_TEXT && l.kind != LN_ELISION) {
            continue;
        }
        /* The paste lost the indentation (markdown outside a code block):
         * put the lines back where kubectl's layout has them. */
        if (l.kind == LN_TEXT && raw == sec && !is_state && state_key(&l) && flat == raw + 2) {
            raw += 3; /* a state's Reason (also a pod-level key) */
        } else if (l.kind == LN_TEXT && raw == sec && !top_key(&l)) {
            raw += name_key(&l) ? 1 : container_key(&l) ? 2 : 3;
        } else if (l.kind == LN_TEXT && raw == sec) {
            sec = SIZE_MAX;
        } else if (l.kind == LN_TEXT && raw == flat && !is_state && state_key(&l)) {
            raw++; /* "State: Terminated", then "Reason:" in the same column */
        }
        if ((key_is(&l, "Containers") || key_is(&l, "Init Containers")) && i + 1 < d->n &&
            d->l[i + 1].indent == raw && name_key(&d->l[i + 1])) {
            sec = raw;
        }
        flat = is_state ? raw : (raw <= flat ? SIZE_MAX : flat);
        l.indent = raw;
        while (top > 0 && st[top - 1].indent >= l.indent) {
            top--;
        }
        if (l.kind == LN_ELISION) {
            continue;
        }
        while (top > 0 && describe_key(&l) && !st[top - 1].takes_keys) {
            top--;
        }
        l.indent = top;
        d->l[out++] = l;
        if (top < NEST_MAX) {
            st[top].indent = raw;
            st[top].takes_keys = l.key_len > 0 && (l.val_len == 0 || key_is(&l, "State") ||
                                                   key_is(&l, "Last State"));
            top++;
        }
    }
    d->n = out;
}

/* A container's name line: "app:" with container keys below it. */
static int name_line(const struct doc *d, size_t i)
{
    const struct line *l = &d->l[i];
    size_t end = end_of(d, i);

    if (l->key_len == 0 || l->val_len != 0 || top_key(l) || container_key(l)) {
        return 0;
    }
    for (size_t j = i + 1; j < end; j++) {
        if (d->l[j].indent == l->indent + 1 && container_key(&d->l[j])) {
            return 1;
        }
    }
    return 0;
}

struct canon {
    struct line *l;
    size_t n;
};

static void put(struct canon *c, const struct line *l, size_t indent)
{
    c->l[c->n] = *l;
    c->l[c->n].indent = indent;
    c->n++;
}

static void put_tree(struct canon *c, const struct doc *d, size_t i, size_t end, size_t shift)
{
    for (; i < end; i++) {
        put(c, &d->l[i], d->l[i].indent + shift);
    }
}

/* Rewrite the nested lines into one describe document: the pod's own
 * lines, then "Init Containers:" and "Containers:" with one entry per
 * container, whether the paste held the whole section, a container's
 * name line and its block, or a block without its name line (an unnamed
 * entry). Events lines are left out (the tables were read before). */
static int canonical(struct doc *d, int *ret_sections)
{
    static const struct line init_sec = {"Init Containers:", 16, 0, 15, "", 0, LN_TEXT, 0, 0, 0};
    static const struct line cont_sec = {"Containers:", 11, 0, 10, "", 0, LN_TEXT, 0, 0, 0};
    static const struct line unnamed = {"", 0, 0, 0, "", 0, LN_TEXT, 1, 0, 0};
    struct canon c;
    int sections = 0;

    c.l = krc_calloc(2 * d->n + 2, sizeof(*c.l));
    if (c.l == NULL) {
        return KRC_ENOMEM;
    }
    c.n = 0;
    for (size_t i = 0; i < d->n; i = end_of(d, i)) {
        const struct line *l = &d->l[i];
        if (!key_is(l, "Containers") && !key_is(l, "Init Containers") && !key_is(l, "Events") &&
            !name_line(d, i) && !container_key(l)) {
            put_tree(&c, d, i, end_of(d, i), 0);
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *sec = pass == 0 ? "Init Containers" : "Containers";
        size_t head = c.n;
        put(&c, pass == 0 ? &init_sec : &cont_sec, 0);
        for (size_t i = 0; i < d->n;) {
            size_t end = end_of(d, i);
            if (key_is(&d->l[i], sec)) {
                sections |= 1 << pass;
                put_tree(&c, d, i + 1, end, 0);
            } else if (pass == 1 && name_line(d, i)) {
                put_tree(&c, d, i, end, 1);
            } else if (pass == 1 && container_key(&d->l[i])) {
                /* consecutive container keys at the top: one unnamed block */
                put(&c, &unnamed, 1);
                while (i < d->n && d->l[i].indent == 0 && container_key(&d->l[i])) {
                    end = end_of(d, i);
                    put_tree(&c, d, i, end, 2);
                    i = end;
                }
                continue;
            }
            i = end;
        }
        if (c.n == head + 1 && !(sections & (1 << pass))) {
            c.n = head; /* no such section */
        }
    }
    krc_free(d->l);
    d->l = c.l;
    d->n = c.n;
    *ret_sections = sections;
    return 0;
}

/* ---- detection ---------------------------------------------------------------------------- */

/* Does the trimmed line start with "KEY:" followed by white space or its end? */
static int starts_key(const char *s, size_t n, const char *key)
{
    size_t k = strlen(key);
    return n > k && memcmp(s, key, k) == 0 && s[k] == ':' && (n == k + 1 || is_space(s[k + 1]));
}

/* Scan the lines for describe's shapes: 1 for a pod's key, 2 for an event
 * table header (both bits may be set). */
static int shapes(const char *text, size_t len)
{
    static const char *const strong[] = {
        "State", "Last State", "Exit Code", "Restart Count", "Containers", "Init Containers",
        "Events", "Liveness", "Readiness", "Startup", "Image", "Image ID", "Port", "Host Port",
        "Command", "Args", "Limits", "Requests", "Environment", "Mounts",
        /* the pod's own header, which a cut paste may hold alone */
        "Start Time", "Controlled By", "QoS Class", "Node-Selectors", "Tolerations",
        "Service Account", NULL};
    int found = 0;
    int status = 0;
    int reason = 0;
    size_t i = 0;

    while (i < len && found != 3) {
        const char *s = text + i;
        const char *nl = memchr(s, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - i;
        size_t k = 0;
        struct line l;
        struct table t;
        i += n + 1;
        while (k < n && (is_space(s[k]) || s[k] == '>')) {
            k++;
        }
        while (n > k && (is_space(s[n - 1]) || s[n - 1] == '\r')) {
            n--;
        }
        for (size_t j = 0; strong[j] != NULL; j++) {
            found |= starts_key(s + k, n - k, strong[j]);
        }
        status |= starts_key(s + k, n - k, "Status");
        reason |= starts_key(s + k, n - k, "Reason");
        memset(&l, 0, sizeof(l));
        l.p = s + k;
        l.len = n - k;
        found |= l.len > 0 && (table_header(&l, &t) || bare_row(&l)) ? 2 : 0;
    }
    return found | (status && reason);
}

int krc_kube_describe_is_pod(const char *text, size_t len)
{
    return shapes(text, len) != 0;
}

int krc_kube_describe_is_events(const char *text, size_t len)
{
    return (shapes(text, len) & 2) != 0;
}

/* ---- entry points ------------------------------------------------------------------------- */

static char *cstr(struct doc *d, const struct line *l)
{
    char *c = krc_calloc(1, l->val_len + 1);
    if (c == NULL) {
        d->oom = 1;
        return NULL;
    }
    memcpy(c, l->val, l->val_len);
    return c;
}

static char *copy_out(struct doc *d, char *cjson_text)
{
    char *out = cjson_text != NULL ? krc_strdup(cjson_text) : NULL;
    if (cjson_text != NULL) {
        cJSON_free(cjson_text);
    }
    if (out == NULL) {
        d->oom = 1;
    }
    return out;
}

static int has_table(const struct doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        if (d->l[i].kind == LN_HEADER || d->l[i].kind == LN_BROW) {
            return 1;
        }
    }
    return 0;
}

/* The pod's own top-level lines -> metadata, spec.nodeName, status. */
static void add_top(struct doc *d, cJSON *md, cJSON *spec, cJSON *status, char **name, char **ns,
                    int *facts)
{
    for (size_t i = 0; i < d->n && !d->oom; i++) {
        const struct line *l = &d->l[i];
        if (l->indent != 0 || !has_val(l)) {
            continue;
        }
        if (key_is(l, "Name") && *name == NULL) {
            *name = cstr(d, l);
            add(d, md, "name", cJSON_CreateString(*name != NULL ? *name : ""));
        } else if (key_is(l, "Namespace") && *ns == NULL) {
            *ns = cstr(d, l);
            add(d, md, "namespace", cJSON_CreateString(*ns != NULL ? *ns : ""));
        } else if (key_is(l, "Node")) {
            const char *slash = memchr(l->val, '/', l->val_len);
            size_t n = slash != NULL ? (size_t)(slash - l->val) : l->val_len;
            if (n > 0) {
                add_strn(d, spec, "nodeName", l->val, n);
            }
        } else if (key_is(l, "Status")) {
            add_strn(d, status, "phase", l->val, l->val_len);
        } else if (key_is(l, "Reason")) {
            add_strn(d, status, "reason", l->val, l->val_len);
        } else if (key_is(l, "Message")) {
            add_strn(d, status, "message", l->val, l->val_len);
        } else if (key_is(l, "Controlled By")) {
            const char *slash = memchr(l->val, '/', l->val_len);
            if (slash != NULL) {
                cJSON *refs = add(d, md, "ownerReferences", cJSON_CreateArray());
                cJSON *ref = add_obj(d, refs, NULL);
                add_strn(d, ref, "kind", l->val, (size_t)(slash - l->val));
                add_strn(d, ref, "name", slash + 1, l->val_len - (size_t)(slash - l->val) - 1);
                add(d, ref, "controller", cJSON_CreateTrue());
            }
        } else {
            continue;
        }
        *facts = 1;
    }
}

/* The pod's sections in the nested lines of *d, made canonical: the line
 * indices of "Containers:" and "Init Containers:" (SIZE_MAX if absent) and
 * whether "Events:  <none>" was said. Fails on the output of several pods and
 * on a container section without containers. */
static int find_sections(struct doc *d, size_t *ret_sec_c, size_t *ret_sec_i, int *ret_events_none,
                         struct krc_error *err)
{
    size_t names = 0;
    size_t sec_c = SIZE_MAX;
    size_t sec_i = SIZE_MAX;
    int sections = 0;
    int events_none = 0;
    int rc;

    for (size_t i = 0; i < d->n; i++) {
        if (d->l[i].indent == 0 && key_is(&d->l[i], "Name")) {
            names++;
        }
        /* "Events:  <none>" says there were none; an "Events:" whose table
         * is not recognised says nothing */
        events_none |= d->l[i].indent == 0 && key_is(&d->l[i], "Events") && d->l[i].val_len == 6 &&
                       memcmp(d->l[i].val, "<none>", 6) == 0;
    }
    if (names > 1) {
        return krc_error_set(err, KRC_EINVAL,
                             "kubectl describe output of %zu pods; give the output of one", names);
    }
    if ((rc = canonical(d, &sections)) < 0) {
        return krc_error_set(err, rc, "out of memory");
    }
    for (size_t i = 0; i < d->n; i++) {
        if (d->l[i].indent == 0) {
            sec_c = key_is(&d->l[i], "Containers") ? i : sec_c;
            sec_i = key_is(&d->l[i], "Init Containers") ? i : sec_i;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t sec = pass == 0 ? sec_i : sec_c;
        if ((sections & (1 << pass)) && (sec + 1 >= d->n || d->l[sec + 1].indent == 0)) {
            return krc_error_set(err, KRC_EINVAL,
                                 "kubectl describe output without containers (no indented lines "
                                 "under \"%s:\")",
                                 pass == 0 ? "Init Containers" : "Containers");
        }
    }
    *ret_sec_c = sec_c;
    *ret_sec_i = sec_i;
    *ret_events_none = events_none;
    return 0;
}

int krc_kube_describe_pod(const char *text, size_t len, char **ret_pod_json, char **ret_events_json,
                          struct krc_error *err)
{
    struct doc d = {NULL, 0, 0};
    struct doc tbl = {NULL, 0, 0};
    size_t sec_c = SIZE_MAX;
    size_t sec_i = SIZE_MAX;
    int events_none = 0;
    int tables;
    int facts = 0;
    cJSON *pod = NULL;
    cJSON *md;
    cJSON *spec;
    cJSON *status;
    char *name = NULL;
    char *ns = NULL;
    char *pod_text = NULL;
    char *ev_text = NULL;
    int rc;

    if ((rc = cut_lines(text, len, &d, err)) < 0) {
        goto out;
    }
    mark_elisions(&d);
    mark_tables(&d);
    tables = has_table(&d);
    dedent(&d);
    join_messages(&d);
    if (tables) {
        /* nest() drops the table lines: keep them for events_json() */
        tbl.l = krc_malloc((d.n ? d.n : 1) * sizeof(*tbl.l));
        if (tbl.l == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < d.n; i++) {
            if (d.l[i].kind != LN_TEXT) {
                tbl.l[tbl.n++] = d.l[i];
            }
        }
    }
    nest(&d);
    if ((rc = find_sections(&d, &sec_c, &sec_i, &events_none, err)) < 0) {
        goto out;
    }
    pod = cJSON_CreateObject();
    add(&d, pod, "apiVersion", cJSON_CreateString("v1"));
    add(&d, pod, "kind", cJSON_CreateString("Pod"));
    md = add_obj(&d, pod, "metadata");
    spec = add_obj(&d, pod, "spec");
    status = add_obj(&d, pod, "status");
    add_top(&d, md, spec, status, &name, &ns, &facts);
    if (!facts && sec_c == SIZE_MAX && sec_i == SIZE_MAX && !tables && !events_none) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "no kubectl describe pod fields (Name, Status, Reason, a container's "
                           "State or Last State, an Events table)");
        goto out;
    }
    if (sec_i != SIZE_MAX && !d.oom) {
        rc = add_containers(&d, add(&d, spec, "initContainers", cJSON_CreateArray()),
                            add(&d, status, "initContainerStatuses", cJSON_CreateArray()), sec_i,
                            err);
        if (rc < 0) {
            goto out;
        }
    }
    if (sec_c != SIZE_MAX && !d.oom) {
        rc = add_containers(&d, add(&d, spec, "containers", cJSON_CreateArray()),
                            add(&d, status, "containerStatuses", cJSON_CreateArray()), sec_c, err);
        if (rc < 0) {
            goto out;
        }
    }
    /* an entry list that nothing was shown for is left out */
    for (const char *const *k = (const char *const[]){"initContainers", "containers", NULL};
         *k != NULL; k++) {
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(spec, *k)) == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(spec, *k);
        }
    }
    if (!d.oom) {
        pod_text = copy_out(&d, cJSON_PrintUnformatted(pod));
    }
    if (!d.oom && (tables || events_none)) {
        /* "Events:  <none>" gives an empty list */
        ev_text = copy_out(&d, events_json(&tbl, name, ns));
        d.oom |= tbl.oom;
    }
    if (d.oom) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    *ret_pod_json = pod_text;
    *ret_events_json = ev_text;
    pod_text = NULL;
    ev_text = NULL;
    rc = 0;
out:
    krc_free(pod_text);
    krc_free(ev_text);
    krc_free(name);
    krc_free(ns);
    cJSON_Delete(pod);
    krc_free(d.l);
    krc_free(tbl.l);
    return rc;
}

int krc_kube_describe_events(const char *text, size_t len, char **ret_events_json,
                             struct krc_error *err)
{
    struct doc d = {NULL, 0, 0};
    char *ev_text = NULL;
    int rc;

    if ((rc = cut_lines(text, len, &d, err)) < 0) {
        goto out;
    }
    mark_elisions(&d);
    mark_tables(&d);
    if (!has_table(&d)) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "no event table (a \"Type Reason Age From Message\" or \"LAST SEEN "
                           "TYPE REASON OBJECT MESSAGE\" header line)");
        goto out;
    }
    ev_text = copy_out(&d, events_json(&d, NULL, NULL));
    if (d.oom) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    *ret_events_json = ev_text;
    ev_text = NULL;
    rc = 0;
out:
    krc_free(ev_text);
    krc_free(d.l);
    return rc;
}
