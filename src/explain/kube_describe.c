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

#include "krc/explain/describe_doc.h"
#include "krc/util/mem.h"

int krc_desc_is_space(char c)
{
    return c == ' ' || c == '\t';
}

static void split_key(struct line *l)
{
    for (size_t i = 0; i < l->len; i++) {
        if (l->p[i] == ':' && (i + 1 == l->len || krc_desc_is_space(l->p[i + 1]))) {
            size_t v = i + 1;
            if (i == 0) {
                return;
            }
            while (v < l->len && krc_desc_is_space(l->p[v])) {
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
const char *krc_desc_find(const char *s, const char *e, const char *needle)
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

int krc_desc_has_val(const struct line *l)
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
        while (k < n && (krc_desc_is_space(s[k]) || s[k] == '\r')) {
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
            while (q < n && krc_desc_is_space(s[q])) {
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
            for (; k < n && krc_desc_is_space(s[k]); k++) {
                l.indent = s[k] == '\t' ? (l.indent / 8 + 1) * 8 : l.indent + 1;
            }
            l.p = s + k;
            l.len = n - k;
        }
        while (l.len > 0 && (krc_desc_is_space(l.p[l.len - 1]) || l.p[l.len - 1] == '\r')) {
            l.len--;
            l.trimmed |= krc_desc_is_space(l.p[l.len]);
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
size_t krc_desc_end_of(const struct doc *d, size_t i)
{
    size_t j = i + 1;
    while (j < d->n && d->l[j].indent > d->l[i].indent) {
        j++;
    }
    return j;
}

/* The direct child of line i with this key, or 0 (line 0 is never a child). */
size_t krc_desc_child(const struct doc *d, size_t i, const char *key)
{
    size_t end = krc_desc_end_of(d, i);

    for (size_t j = i + 1; j < end; j++) {
        if (d->l[j].indent == d->l[i + 1].indent && key_is(&d->l[j], key)) {
            return j;
        }
    }
    return 0;
}

/* ---- JSON building (sticky out-of-memory flag) ----------------------------------- */

cJSON *krc_desc_add(struct doc *d, cJSON *o, const char *k, cJSON *item)
{
    if (item == NULL || o == NULL ||
        !(cJSON_IsArray(o) ? cJSON_AddItemToArray(o, item) : cJSON_AddItemToObject(o, k, item))) {
        cJSON_Delete(item);
        d->oom = 1;
        return NULL;
    }
    return item;
}

cJSON *krc_desc_add_obj(struct doc *d, cJSON *o, const char *k)
{
    return krc_desc_add(d, o, k, cJSON_CreateObject());
}

void krc_desc_add_strn(struct doc *d, cJSON *o, const char *k, const char *s, size_t n)
{
    char *c = krc_calloc(1, n + 1);

    if (c == NULL) {
        d->oom = 1;
        return;
    }
    memcpy(c, s, n);
    krc_desc_add(d, o, k, cJSON_CreateString(c));
    krc_free(c);
}

/* The value of child `key` of line i as a string, when there is one. */
void krc_desc_add_val(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = krc_desc_child(d, i, key);

    if (j != 0 && krc_desc_has_val(&d->l[j])) {
        krc_desc_add_strn(d, o, k, d->l[j].val, d->l[j].val_len);
    }
}

/* A whole decimal number (optionally negative) or -1 when it is not one. */
int krc_desc_parse_int(const char *s, size_t n, long *ret)
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

void krc_desc_add_int_val(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = krc_desc_child(d, i, key);
    long v;

    if (j != 0 && krc_desc_parse_int(d->l[j].val, d->l[j].val_len, &v) == 0) {
        krc_desc_add(d, o, k, cJSON_CreateNumber((double)v));
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

void krc_desc_add_time_val(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = krc_desc_child(d, i, key);
    char ts[40];

    if (j != 0 && krc_desc_has_val(&d->l[j]) &&
        rfc1123_to_rfc3339(d->l[j].val, d->l[j].val_len, ts, sizeof(ts)) == 0) {
        krc_desc_add(d, o, k, cJSON_CreateString(ts));
    }
}

/* ---- the pod ----------------------------------------------------------------------------- */

/* A "Key:" line whose key reads like kubectl's: "Restart Count", "QoS Class". */
int krc_desc_describe_key(const struct line *l)
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
size_t krc_desc_span(const struct line *l, const char *set)
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
    size_t dots = krc_desc_span(l, ".");

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
            !krc_desc_describe_key(l)) {
            /* kubectl prints each item on its own line, indented below */
            d->l[out] = *l;
            d->l[out++].indent = d->l[cmd].indent + 2;
            continue;
        }
        cmd = SIZE_MAX;
        if (msg != SIZE_MAX) {
            const struct line *m = &d->l[msg];
            int ends =
                l->indent == 0 || l->kind != LN_TEXT
                    ? own_line(l)
                    : krc_desc_describe_key(l) && l->indent % 2 == 0 && l->indent <= m->indent;
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
        while (top > 0 && krc_desc_describe_key(&l) && !st[top - 1].takes_keys) {
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
    size_t end = krc_desc_end_of(d, i);

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
    for (size_t i = 0; i < d->n; i = krc_desc_end_of(d, i)) {
        const struct line *l = &d->l[i];
        if (!key_is(l, "Containers") && !key_is(l, "Init Containers") && !key_is(l, "Events") &&
            !name_line(d, i) && !container_key(l)) {
            put_tree(&c, d, i, krc_desc_end_of(d, i), 0);
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *sec = pass == 0 ? "Init Containers" : "Containers";
        size_t head = c.n;
        put(&c, pass == 0 ? &init_sec : &cont_sec, 0);
        for (size_t i = 0; i < d->n;) {
            size_t end = krc_desc_end_of(d, i);
            if (key_is(&d->l[i], sec)) {
                sections |= 1 << pass;
                put_tree(&c, d, i + 1, end, 0);
            } else if (pass == 1 && name_line(d, i)) {
                put_tree(&c, d, i, end, 1);
            } else if (pass == 1 && container_key(&d->l[i])) {
                /* consecutive container keys at the top: one unnamed block */
                put(&c, &unnamed, 1);
                while (i < d->n && d->l[i].indent == 0 && container_key(&d->l[i])) {
                    end = krc_desc_end_of(d, i);
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
    return n > k && memcmp(s, key, k) == 0 && s[k] == ':' &&
           (n == k + 1 || krc_desc_is_space(s[k + 1]));
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
        while (k < n && (krc_desc_is_space(s[k]) || s[k] == '>')) {
            k++;
        }
        while (n > k && (krc_desc_is_space(s[n - 1]) || s[n - 1] == '\r')) {
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
        found |= l.len > 0 && (krc_desc_table_header(&l, &t) || krc_desc_bare_row(&l)) ? 2 : 0;
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
        if (l->indent != 0 || !krc_desc_has_val(l)) {
            continue;
        }
        if (key_is(l, "Name") && *name == NULL) {
            *name = cstr(d, l);
            krc_desc_add(d, md, "name", cJSON_CreateString(*name != NULL ? *name : ""));
        } else if (key_is(l, "Namespace") && *ns == NULL) {
            *ns = cstr(d, l);
            krc_desc_add(d, md, "namespace", cJSON_CreateString(*ns != NULL ? *ns : ""));
        } else if (key_is(l, "Node")) {
            const char *slash = memchr(l->val, '/', l->val_len);
            size_t n = slash != NULL ? (size_t)(slash - l->val) : l->val_len;
            if (n > 0) {
                krc_desc_add_strn(d, spec, "nodeName", l->val, n);
            }
        } else if (key_is(l, "Status")) {
            krc_desc_add_strn(d, status, "phase", l->val, l->val_len);
        } else if (key_is(l, "Reason")) {
            krc_desc_add_strn(d, status, "reason", l->val, l->val_len);
        } else if (key_is(l, "Message")) {
            krc_desc_add_strn(d, status, "message", l->val, l->val_len);
        } else if (key_is(l, "Controlled By")) {
            const char *slash = memchr(l->val, '/', l->val_len);
            if (slash != NULL) {
                cJSON *refs = krc_desc_add(d, md, "ownerReferences", cJSON_CreateArray());
                cJSON *ref = krc_desc_add_obj(d, refs, NULL);
                krc_desc_add_strn(d, ref, "kind", l->val, (size_t)(slash - l->val));
                krc_desc_add_strn(d, ref, "name", slash + 1,
                                  l->val_len - (size_t)(slash - l->val) - 1);
                krc_desc_add(d, ref, "controller", cJSON_CreateTrue());
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
    krc_desc_mark_tables(&d);
    tables = has_table(&d);
    dedent(&d);
    join_messages(&d);
    if (tables) {
        /* nest() drops the table lines: keep them for krc_desc_events_json() */
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
    krc_desc_add(&d, pod, "apiVersion", cJSON_CreateString("v1"));
    krc_desc_add(&d, pod, "kind", cJSON_CreateString("Pod"));
    md = krc_desc_add_obj(&d, pod, "metadata");
    spec = krc_desc_add_obj(&d, pod, "spec");
    status = krc_desc_add_obj(&d, pod, "status");
    add_top(&d, md, spec, status, &name, &ns, &facts);
    if (!facts && sec_c == SIZE_MAX && sec_i == SIZE_MAX && !tables && !events_none) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "no kubectl describe pod fields (Name, Status, Reason, a container's "
                           "State or Last State, an Events table)");
        goto out;
    }
    if (sec_i != SIZE_MAX && !d.oom) {
        rc = krc_desc_add_containers(
            &d, krc_desc_add(&d, spec, "initContainers", cJSON_CreateArray()),
            krc_desc_add(&d, status, "initContainerStatuses", cJSON_CreateArray()), sec_i, err);
        if (rc < 0) {
            goto out;
        }
    }
    if (sec_c != SIZE_MAX && !d.oom) {
        rc = krc_desc_add_containers(
            &d, krc_desc_add(&d, spec, "containers", cJSON_CreateArray()),
            krc_desc_add(&d, status, "containerStatuses", cJSON_CreateArray()), sec_c, err);
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
        ev_text = copy_out(&d, krc_desc_events_json(&tbl, name, ns));
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
    krc_desc_mark_tables(&d);
    if (!has_table(&d)) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "no event table (a \"Type Reason Age From Message\" or \"LAST SEEN "
                           "TYPE REASON OBJECT MESSAGE\" header line)");
        goto out;
    }
    ev_text = copy_out(&d, krc_desc_events_json(&d, NULL, NULL));
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
