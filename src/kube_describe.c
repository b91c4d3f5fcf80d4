/* `kubectl describe pod` text -> Pod JSON + event List JSON (see the header).
 * The text is cut into lines with their indentation; a line's children are
 * the lines below it that are indented deeper. */
#include "krc/kube_describe.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/mem.h"

struct line {
    const char *p; /* after the indentation */
    size_t len;    /* trailing white space and \r removed */
    size_t indent;
    size_t key_len; /* 0: not a "Key:" line */
    const char *val;
    size_t val_len;
};

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

/* Cut the text into lines; NUL bytes end nothing (the caller checked). */
static int cut_lines(const char *text, size_t len, struct doc *d, struct krc_error *err)
{
    size_t cap = 0;
    size_t i = 0;

    while (i < len) {
        const char *s = text + i;
        const char *nl = memchr(s, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - i;
        struct line l;

        i += n + (nl != NULL);
        memset(&l, 0, sizeof(l));
        while (l.indent < n && is_space(s[l.indent])) {
            l.indent++;
        }
        l.p = s + l.indent;
        l.len = n - l.indent;
        while (l.len > 0 && (is_space(l.p[l.len - 1]) || l.p[l.len - 1] == '\r')) {
            l.len--;
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

/* "Thu, 14 Nov 2024 10:33:00 +0000" -> "2024-11-14T10:33:00+00:00"; 0 or -1. */
static int rfc1123_to_rfc3339(const char *s, size_t n, char *out, size_t outsz)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char buf[64];
    char mon[4];
    char zone[8];
    int day, year, hh, mm, ss;
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
    if (sscanf(p, " %2d %3s %4d %2d:%2d:%2d %7s", &day, mon, &year, &hh, &mm, &ss, zone) < 6) {
        return -1;
    }
    mon[3] = '\0';
    m = strlen(mon) == 3 ? strstr(months, mon) : NULL;
    if (m == NULL || (m - months) % 3 != 0 || day < 1 || day > 31 || hh > 23 || mm > 59 ||
        ss > 60) {
        return -1;
    }
    if (zone[0] == '\0' || strcmp(zone, "UTC") == 0 || strcmp(zone, "GMT") == 0 ||
        strcmp(zone, "+0000") == 0) {
        snprintf(zone, sizeof(zone), "Z");
    } else if ((zone[0] == '+' || zone[0] == '-') && strlen(zone) == 5 &&
               strspn(zone + 1, "0123456789") == 4) {
        zone[6] = '\0';
        zone[5] = zone[4];
        zone[4] = zone[3];
        zone[3] = ':';
    } else {
        return -1;
    }
    snprintf(out, outsz, "%04d-%02d-%02dT%02d:%02d:%02d%s", year, (int)((m - months) / 3) + 1, day,
             hh, mm, ss, zone);
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
        if (cJSON_GetObjectItemCaseSensitive(h, "scheme") != NULL) {
            cJSON *sc = cJSON_GetObjectItemCaseSensitive(h, "scheme");
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
        const char *a = s + 11;
        const char *ae = memchr(a, ' ', (size_t)(e - a));
        const char *colon;
        cJSON *t = add_obj(d, p, "tcpSocket");
        ae = ae != NULL ? ae : e;
        colon = memchr(a, ':', (size_t)(ae - a));
        if (colon != NULL) {
            add_port(d, t, colon + 1, (size_t)(ae - colon - 1));
        }
    } else if (e - s > 5 && memcmp(s, "grpc ", 5) == 0) {
        const char *a = s + 5;
        const char *ae = memchr(a, ' ', (size_t)(e - a));
        const char *colon;
        cJSON *g = add_obj(d, p, "grpc");
        ae = ae != NULL ? ae : e;
        colon = memchr(a, ':', (size_t)(ae - a));
        if (colon != NULL) {
            add_port(d, g, colon + 1, (size_t)(ae - colon - 1));
        }
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
        sp = add_obj(d, spec_arr, NULL);
        st = add_obj(d, status_arr, NULL);
        add(d, sp, "name", cJSON_CreateString(name));
        add(d, st, "name", cJSON_CreateString(name));
        krc_free(name);
        add_val(d, sp, "image", i, "Image");
        add_lines(d, sp, "command", i, "Command");
        add_lines(d, sp, "args", i, "Args");
        if (child(d, i, "Limits") != 0 || child(d, i, "Requests") != 0) {
            cJSON *res = add_obj(d, sp, "resources");
            add_map(d, res, "limits", i, "Limits");
            add_map(d, res, "requests", i, "Requests");
        }
        add_probe(d, sp, "livenessProbe", i, "Liveness");
        add_probe(d, sp, "readinessProbe", i, "Readiness");
        add_probe(d, sp, "startupProbe", i, "Startup");
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
        aligned = col[k] > 0 && is_space(row->p[col[k] - 1]) && !is_space(row->p[col[k]]);
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

static char *events_json(struct doc *d, size_t sec, const char *name, const char *ns)
{
    static const char *const heads[] = {"Type", "Reason", "Age", "From", "Message"};
    size_t end = end_of(d, sec);
    size_t col[5];
    size_t hdr = 0;
    cJSON *root = cJSON_CreateObject();
    cJSON *items;
    char *text = NULL;

    add(d, root, "apiVersion", cJSON_CreateString("v1"));
    add(d, root, "kind", cJSON_CreateString("List"));
    items = add(d, root, "items", cJSON_CreateArray());
    for (size_t i = sec + 1; i < end && hdr == 0; i++) {
        const char *pos = d->l[i].p;
        const char *end_line = d->l[i].p + d->l[i].len;
        size_t k;
        for (k = 0; k < 5; k++) {
            const char *h = find(pos, end_line, heads[k]);
            if (h == NULL) {
                break;
            }
            col[k] = (size_t)(h - d->l[i].p);
            pos = h + strlen(heads[k]);
        }
        if (k == 5 && col[0] == 0) {
            hdr = i;
        }
    }
    for (size_t i = hdr + 1; hdr != 0 && i < end && !d->oom; i++) {
        const struct line *row = &d->l[i];
        const char *f[5];
        size_t fl[5];
        cJSON *ev;
        cJSON *o;
        const char *x;
        long count = 1;
        if (row->p[0] == '-' || row_fields(row, col, 5, f, fl) < 5 ||
            row->indent != d->l[hdr].indent) {
            continue;
        }
        ev = add_obj(d, items, NULL);
        add(d, ev, "kind", cJSON_CreateString("Event"));
        add_strn(d, ev, "type", f[0], fl[0]);
        add_strn(d, ev, "reason", f[1], fl[1]);
        add_strn(d, ev, "message", f[4], fl[4]);
        x = memchr(f[2], '(', fl[2]);
        if (x != NULL && x + 2 < f[2] + fl[2] && x[1] == 'x') {
            const char *q = x + 2;
            count = 0;
            while (q < f[2] + fl[2] && *q >= '0' && *q <= '9' && count < 100000000) {
                count = count * 10 + (*q++ - '0');
            }
        }
        add(d, ev, "count", cJSON_CreateNumber(count > 0 ? (double)count : 1));
        o = add_obj(d, ev, "source");
        x = memchr(f[3], ',', fl[3]);
        if (x != NULL) {
            const char *h = x + 1;
            while (h < f[3] + fl[3] && is_space(*h)) {
                h++;
            }
            add_strn(d, o, "component", f[3], (size_t)(x - f[3]));
            add_strn(d, o, "host", h, (size_t)(f[3] + fl[3] - h));
        } else {
            add_strn(d, o, "component", f[3], fl[3]);
        }
        o = add_obj(d, ev, "involvedObject");
        add(d, o, "kind", cJSON_CreateString("Pod"));
        add(d, o, "name", cJSON_CreateString(name));
        if (ns != NULL) {
            add(d, o, "namespace", cJSON_CreateString(ns));
        }
    }
    if (!d->oom) {
        text = cJSON_PrintUnformatted(root);
        d->oom = text == NULL;
    }
    cJSON_Delete(root);
    return text;
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

/* kubectl prints a multi-line message (a termination message, a stack
 * trace) as it is, so its later lines start anywhere, often at column 0.
 * Join them to their "Message:" line until a line that is one of
 * describe's own: a known top-level key at column 0, or a key line at an
 * even indentation no deeper than the message's. Other lines at column 0
 * that are not describe's (a shell prompt after the output) are dropped. */
static void join_messages(struct doc *d)
{
    size_t out = 0;
    size_t msg = SIZE_MAX;

    for (size_t i = 0; i < d->n; i++) {
        struct line *l = &d->l[i];
        if (msg != SIZE_MAX) {
            const struct line *m = &d->l[msg];
            int ends = l->indent == 0
                           ? top_key(l)
                           : describe_key(l) && l->indent % 2 == 0 && l->indent <= m->indent;
            if (!ends) {
                d->l[msg].val_len = (size_t)(l->p + l->len - m->val);
                continue;
            }
            msg = SIZE_MAX;
        }
        if (l->indent == 0 && !top_key(l)) {
            continue;
        }
        d->l[out] = *l;
        if (key_is(l, "Message") && l->val_len > 0) {
            msg = out;
        }
        out++;
    }
    d->n = out;
}

int krc_kube_describe_is_pod(const char *text, size_t len)
{
    int name = 0;
    int containers = 0;
    size_t i = 0;

    while (i < len && !(name && containers)) {
        const char *s = text + i;
        const char *nl = memchr(s, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - i;
        size_t k = 0;
        i += n + 1;
        while (k < n && is_space(s[k])) {
            k++;
        }
        name |= n - k > 6 && memcmp(s + k, "Name:", 5) == 0 && is_space(s[k + 5]);
        while (n > k && (is_space(s[n - 1]) || s[n - 1] == '\r')) {
            n--;
        }
        containers |= n - k == 11 && memcmp(s + k, "Containers:", 11) == 0;
    }
    return name && containers;
}

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

int krc_kube_describe_pod(const char *text, size_t len, char **ret_pod_json, char **ret_events_json,
                          struct krc_error *err)
{
    struct doc d = {NULL, 0, 0};
    size_t first = SIZE_MAX;
    size_t base;
    size_t names = 0;
    size_t sec_c = 0;
    size_t sec_i = 0;
    size_t sec_e = 0;
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
    for (size_t i = 0; i < d.n; i++) {
        if (key_is(&d.l[i], "Name") && (first == SIZE_MAX || d.l[i].indent == d.l[first].indent)) {
            first = first == SIZE_MAX ? i : first;
            names++;
        }
    }
    if (first == SIZE_MAX) {
        rc = krc_error_set(err, KRC_EINVAL, "kubectl describe output without a \"Name:\" line");
        goto out;
    }
    if (names > 1) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "kubectl describe output of %zu pods; give the output of one", names);
        goto out;
    }
    /* drop what comes before Name: and an indentation common to the rest */
    base = d.l[first].indent;
    memmove(d.l, d.l + first, (d.n - first) * sizeof(*d.l));
    d.n -= first;
    for (size_t i = 0; i < d.n; i++) {
        d.l[i].indent = d.l[i].indent > base ? d.l[i].indent - base : 0;
    }
    join_messages(&d);
    for (size_t i = 0; i < d.n; i++) {
        if (d.l[i].indent == 0) {
            sec_c = key_is(&d.l[i], "Containers") ? i : sec_c;
            sec_i = key_is(&d.l[i], "Init Containers") ? i : sec_i;
            sec_e = key_is(&d.l[i], "Events") ? i : sec_e;
        }
    }
    if (sec_c == 0 || sec_c + 1 >= d.n || d.l[sec_c + 1].indent == 0) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "kubectl describe output without containers (no indented lines "
                           "under \"Containers:\")");
        goto out;
    }
    /* top-level fields are the children of a virtual root: look them up by
     * scanning the lines at indent 0 */
    pod = cJSON_CreateObject();
    add(&d, pod, "apiVersion", cJSON_CreateString("v1"));
    add(&d, pod, "kind", cJSON_CreateString("Pod"));
    md = add_obj(&d, pod, "metadata");
    spec = add_obj(&d, pod, "spec");
    status = add_obj(&d, pod, "status");
    for (size_t i = 0; i < d.n && !d.oom; i++) {
        const struct line *l = &d.l[i];
        if (l->indent != 0 || !has_val(l)) {
            continue;
        }
        if (key_is(l, "Name")) {
            name = cstr(&d, l);
            add(&d, md, "name", cJSON_CreateString(name != NULL ? name : ""));
        } else if (key_is(l, "Namespace")) {
            ns = cstr(&d, l);
            add(&d, md, "namespace", cJSON_CreateString(ns != NULL ? ns : ""));
        } else if (key_is(l, "Node")) {
            const char *slash = memchr(l->val, '/', l->val_len);
            add_strn(&d, spec, "nodeName", l->val,
                     slash != NULL ? (size_t)(slash - l->val) : l->val_len);
        } else if (key_is(l, "Status")) {
            add_strn(&d, status, "phase", l->val, l->val_len);
        } else if (key_is(l, "Reason")) {
            add_strn(&d, status, "reason", l->val, l->val_len);
        } else if (key_is(l, "Message")) {
            add_strn(&d, status, "message", l->val, l->val_len);
        } else if (key_is(l, "Controlled By")) {
            const char *slash = memchr(l->val, '/', l->val_len);
            if (slash != NULL) {
                cJSON *refs = add(&d, md, "ownerReferences", cJSON_CreateArray());
                cJSON *ref = add_obj(&d, refs, NULL);
                add_strn(&d, ref, "kind", l->val, (size_t)(slash - l->val));
                add_strn(&d, ref, "name", slash + 1, l->val_len - (size_t)(slash - l->val) - 1);
                add(&d, ref, "controller", cJSON_CreateTrue());
            }
        }
    }
    if (sec_i != 0 && sec_i + 1 < d.n && d.l[sec_i + 1].indent > 0 && !d.oom) {
        rc = add_containers(&d, add(&d, spec, "initContainers", cJSON_CreateArray()),
                            add(&d, status, "initContainerStatuses", cJSON_CreateArray()), sec_i,
                            err);
        if (rc < 0) {
            goto out;
        }
    }
    if (!d.oom) {
        rc = add_containers(&d, add(&d, spec, "containers", cJSON_CreateArray()),
                            add(&d, status, "containerStatuses", cJSON_CreateArray()), sec_c, err);
        if (rc < 0) {
            goto out;
        }
    }
    if (!d.oom) {
        pod_text = copy_out(&d, cJSON_PrintUnformatted(pod));
    }
    if (!d.oom && sec_e != 0) {
        ev_text = copy_out(&d, events_json(&d, sec_e, name != NULL ? name : "", ns));
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
    return rc;
}
