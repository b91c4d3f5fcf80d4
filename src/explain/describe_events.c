/* Event tables as text (kube_describe.c cuts the text into lines):
 * describe's Events table and the default output of `kubectl get events`,
 * their header's columns, rows (aligned or not, wrapped by the terminal)
 * -> an event List JSON. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/explain/describe_doc.h"
#include "krc/util/mem.h"

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
        while (j < e && krc_desc_is_space(row->p[j])) {
            j++;
        }
        aligned = col[k] > 0 && krc_desc_is_space(row->p[col[k] - 1]) && (j == col[k] || j == e);
    }
    if (aligned) {
        for (k = 0; k < n; k++) {
            size_t a = col[k];
            size_t b = k + 1 < n ? col[k + 1] : row->len;
            while (b > a && krc_desc_is_space(row->p[b - 1])) {
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
                while (e < row->len && !(krc_desc_is_space(row->p[e]) && e + 1 < row->len &&
                                         krc_desc_is_space(row->p[e + 1]))) {
                    e++;
                }
            }
            f[k] = row->p + s;
            fl[k] = e - s;
            i = e;
            while (i < row->len && krc_desc_is_space(row->p[i])) {
                i++;
            }
        }
        return k;
    }
}

/* ---- event tables ------------------------------------------------------------------------ */

#define TAB_LINE_MAX 4096

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
        const char *h = krc_desc_find(pos, end, heads[k]);
        size_t hl = strlen(heads[k]);
        if (h == NULL || (h > l->p && !krc_desc_is_space(h[-1])) ||
            (h + hl < end && !krc_desc_is_space(h[hl]))) {
            return 0;
        }
        col[k] = (size_t)(h - l->p);
        pos = h + hl;
    }
    return col[0] == 0 && pos == end;
}

/* 1 when line l is the header of an event table; *t says its layout. */
int krc_desc_table_header(const struct line *raw, struct table *t)
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
    return l->p[0] == '-' && krc_desc_span(l, "- \t") == l->len;
}

/* The next word of the row from *i on: its start and length. */
static size_t word(const struct line *l, size_t *i, const char **ret)
{
    size_t s = *i;

    while (s < l->len && krc_desc_is_space(l->p[s])) {
        s++;
    }
    *i = s;
    while (*i < l->len && !krc_desc_is_space(l->p[*i])) {
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
    while (i < l->len && krc_desc_is_space(l->p[i])) {
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
int krc_desc_bare_row(const struct line *l)
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
void krc_desc_mark_tables(struct doc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        struct table t;
        int rows = 0;
        if (d->l[i].kind != LN_TEXT || !krc_desc_table_header(&d->l[i], &t)) {
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
            } else if (rows && !krc_desc_table_header(l, &t2) &&
                       !(krc_desc_describe_key(l) && l->indent <= d->l[i].indent)) {
                l->kind = LN_WRAP; /* posted wraps: joined with a space */
            } else {
                break;
            }
        }
    }
    for (size_t i = 0; i < d->n; i++) {
        if (d->l[i].kind != LN_TEXT || !krc_desc_bare_row(&d->l[i])) {
            continue;
        }
        d->l[i].kind = LN_BROW;
        while (i + 1 < d->n && d->l[i + 1].kind == LN_TEXT && !krc_desc_bare_row(&d->l[i + 1]) &&
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
        while (sl > 0 && krc_desc_is_space(s[sl - 1])) {
            sl--;
        }
        x = memchr(s, ' ', sl);
    } else {
        x = memchr(s, ',', sl);
    }
    if (sl == 0) {
        return;
    }
    o = krc_desc_add_obj(d, ev, "source");
    if (x != NULL) {
        const char *h = x + 1;
        while (h < s + sl && krc_desc_is_space(*h)) {
            h++;
        }
        krc_desc_add_strn(d, o, "component", s, (size_t)(x - s));
        if (h < s + sl) {
            krc_desc_add_strn(d, o, "host", h, (size_t)(s + sl - h));
        }
    } else {
        krc_desc_add_strn(d, o, "component", s, sl);
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
    ev = krc_desc_add_obj(d, items, NULL);
    krc_desc_add(d, ev, "kind", cJSON_CreateString("Event"));
    krc_desc_add_strn(d, ev, "type", f[t->field[COL_TYPE]], fl[t->field[COL_TYPE]]);
    krc_desc_add_strn(d, ev, "reason", f[t->field[COL_REASON]], fl[t->field[COL_REASON]]);
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
        krc_desc_add(d, ev, "message", cJSON_CreateString(msg));
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
        krc_desc_add(d, ev, "count", cJSON_CreateNumber(count > 0 ? (double)count : 1));
    }
    if (t->field[COL_COUNT] >= 0) {
        long count;
        if (krc_desc_parse_int(f[t->field[COL_COUNT]], fl[t->field[COL_COUNT]], &count) == 0 &&
            count > 0) {
            krc_desc_add(d, ev, "count", cJSON_CreateNumber((double)count));
        }
    }
    if (t->field[COL_FROM] >= 0) {
        add_source(d, ev, f[t->field[COL_FROM]], fl[t->field[COL_FROM]]);
    }
    o = krc_desc_add_obj(d, ev, "involvedObject");
    if (t->field[COL_PATH] >= 0 && fl[t->field[COL_PATH]] > 0) {
        krc_desc_add_strn(d, o, "fieldPath", f[t->field[COL_PATH]], fl[t->field[COL_PATH]]);
    }
    if (t->field[COL_OBJECT] >= 0) {
        /* "pod/web-1" */
        const char *s = f[t->field[COL_OBJECT]];
        size_t sl = fl[t->field[COL_OBJECT]];
        const char *slash = memchr(s, '/', sl);
        const char *k = slash != NULL ? object_kind(s, (size_t)(slash - s)) : NULL;
        if (k != NULL) {
            krc_desc_add(d, o, "kind", cJSON_CreateString(k));
        }
        if (slash != NULL && slash + 1 < s + sl) {
            krc_desc_add_strn(d, o, "name", slash + 1, (size_t)(s + sl - slash - 1));
        }
        if (t->field[COL_NS] >= 0 && fl[t->field[COL_NS]] > 0) {
            krc_desc_add_strn(d, o, "namespace", f[t->field[COL_NS]], fl[t->field[COL_NS]]);
        }
    } else {
        /* describe's table lists the described pod's events */
        krc_desc_add(d, o, "kind", cJSON_CreateString("Pod"));
        if (name != NULL) {
            krc_desc_add(d, o, "name", cJSON_CreateString(name));
        }
        if (ns != NULL) {
            krc_desc_add(d, o, "namespace", cJSON_CreateString(ns));
        }
    }
}

/* The event List of every table in the text (NULL on out of memory). */
char *krc_desc_events_json(struct doc *d, const char *name, const char *ns)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *items;
    char *text = NULL;

    krc_desc_add(d, root, "apiVersion", cJSON_CreateString("v1"));
    krc_desc_add(d, root, "kind", cJSON_CreateString("List"));
    items = krc_desc_add(d, root, "items", cJSON_CreateArray());
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
        krc_desc_table_header(&d->l[i], &t);
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
