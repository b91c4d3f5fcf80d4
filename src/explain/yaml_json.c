/* YAML -> JSON text with libyaml's event parser: one pass, bounded depth and
 * size, no document tree kept. */
#include "krc/explain/yaml_json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/yaml_doc.h"

#define TAG_STR "tag:yaml.org,2002:str"

int krc_yaml_json_is_json(const char *data, size_t len)
{
    size_t i = 0;

    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        i = 3;
    }
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n')) {
        i++;
    }
    return i < len && (data[i] == '{' || data[i] == '[');
}

struct frame {
    int is_map;
    int expect_key; /* maps: the next node is a key */
    size_t count;   /* entries (maps) or items (sequences) so far */
};

struct doc {
    char *json;
    size_t len;
    char *kind; /* top-level "kind" when it is a scalar, else NULL */
};

struct conv {
    struct krc_buf out; /* the current document */
    struct frame stack[KRC_YAML_JSON_DEPTH_MAX];
    size_t depth;
    int kind_next; /* the last root key was "kind" */
    char *kind;
    int empty; /* the document's root is an empty/null scalar */
    struct doc *docs;
    size_t n_docs;
    size_t max;
    struct krc_error *err;
};

static int oom(struct conv *c)
{
    return krc_error_set(c->err, KRC_ENOMEM, "out of memory converting YAML");
}

static int put_rc(struct conv *c, int rc)
{
    if (rc == KRC_ETOOBIG) {
        return krc_error_set(c->err, KRC_ETOOBIG,
                             "YAML converted to JSON is larger than the %zu byte limit", c->max);
    }
    return rc < 0 ? oom(c) : 0;
}

static int put(struct conv *c, const char *s, size_t n)
{
    return put_rc(c, krc_buf_append(&c->out, s, n));
}

static int put_string(struct conv *c, const char *s, size_t n)
{
    int rc = put(c, "\"", 1);
    if (rc == 0) {
        rc = put_rc(c, krc_buf_append_json_str(&c->out, s, n));
    }
    return rc == 0 ? put(c, "\"", 1) : rc;
}

/* Separators before a node; *is_key tells whether it is a mapping key. */
static int before_node(struct conv *c, int *is_key)
{
    struct frame *f;

    *is_key = 0;
    if (c->depth == 0) {
        return 0;
    }
    f = &c->stack[c->depth - 1];
    if (!f->is_map) {
        return f->count++ > 0 ? put(c, ",", 1) : 0;
    }
    if (f->expect_key) {
        f->expect_key = 0;
        *is_key = 1;
        return f->count++ > 0 ? put(c, ",", 1) : 0;
    }
    f->expect_key = 1;
    return put(c, ":", 1);
}

static int all_in(const char *s, size_t n, const char *set)
{
    if (n == 0) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (strchr(set, s[i]) == NULL || s[i] == '\0') {
            return 0;
        }
    }
    return 1;
}

/* The optional exponent ([eE][-+]?[0-9]+) from s[i] ends s exactly. */
static int exponent_ends(const char *s, size_t n, size_t i)
{
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t d;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            i++;
        }
        d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
        if (i == d) {
            return 0;
        }
    }
    return i == n;
}

/* Is s exactly a JSON number? */
static int json_number(const char *s, size_t n)
{
    size_t i = 0;

    if (i < n && s[i] == '-') {
        i++;
    }
    if (i < n && s[i] == '0') {
        i++;
    } else if (i < n && s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
    } else {
        return 0;
    }
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
        if (i == d) {
            return 0;
        }
    }
    return exponent_ends(s, n, i);
}

/* YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int yaml_float(const char *s, size_t n)
{
    size_t i = 0;
    size_t digits = 0;

    if (i < n && (s[i] == '-' || s[i] == '+')) {
        i++;
    }
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        i++;
        digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
            digits++;
        }
    }
    if (digits == 0) {
        return 0;
    }
    return exponent_ends(s, n, i);
}

/* Plain scalars the core schema reads as null. */
static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};

static int word(const char *s, size_t n, const char *const *words)
{
    for (; *words != NULL; words++) {
        if (strlen(*words) == n && memcmp(s, *words, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* A plain scalar typed by the core schema. */
static int put_plain(struct conv *c, const char *s, size_t n)
{
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    char tmp[64];

    if (word(s, n, nulls)) {
        return put(c, "null", 4);
    }
    if (word(s, n, trues)) {
        return put(c, "true", 4);
    }
    if (word(s, n, falses)) {
        return put(c, "false", 5);
    }
    if (n > 2 && n < sizeof(tmp) && s[0] == '0' && (s[1] == 'x' || s[1] == 'o') &&
        all_in(s + 2, n - 2, s[1] == 'x' ? "0123456789abcdefABCDEF" : "01234567")) {
        unsigned long long v;
        memcpy(tmp, s + 2, n - 2);
        tmp[n - 2] = '\0';
        errno = 0;
        v = strtoull(tmp, NULL, s[1] == 'x' ? 16 : 8);
        if (errno == 0) {
            int k = snprintf(tmp, sizeof(tmp), "%llu", v);
            return put(c, tmp, (size_t)k);
        }
        return put_string(c, s, n);
    }
    if (n > 0 && s[0] == '+' && json_number(s + 1, n - 1)) {
        return put(c, s + 1, n - 1);
    }
    if (json_number(s, n)) {
        return put(c, s, n);
    }
    if (n < sizeof(tmp) && yaml_float(s, n)) {
        /* 007, 1., .5, +1e3: valid YAML numbers JSON spells differently */
        double v;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        v = strtod(tmp, NULL);
        if (v == v && v < 1e308 && v > -1e308) {
            int k = snprintf(tmp, sizeof(tmp), "%.17g", v);
            return put(c, tmp, (size_t)k);
        }
    }
    return put_string(c, s, n);
}

static int on_scalar(struct conv *c, const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                (tag == NULL || strcmp(tag, TAG_STR) != 0);
    int is_key;
    int rc;

    if (c->depth == 0) {
        if (plain && word(v, n, nulls)) {
            c->empty = 1;
            return 0;
        }
        return krc_error_set(c->err, KRC_EPARSE,
                             "not JSON or YAML: line %lu is plain text, not a mapping",
                             (unsigned long)ev->start_mark.line + 1);
    }
    if ((rc = before_node(c, &is_key)) < 0) {
        return rc;
    }
    if (c->depth == 1 && c->stack[0].is_map) {
        if (is_key) {
            c->kind_next = n == 4 && memcmp(v, "kind", 4) == 0;
        } else if (c->kind_next) {
            c->kind_next = 0;
            krc_free(c->kind);
            c->kind = krc_calloc(1, n + 1);
            if (c->kind == NULL) {
                return oom(c);
            }
            memcpy(c->kind, v, n);
        }
    }
    return is_key || !plain ? put_string(c, v, n) : put_plain(c, v, n);
}

static int on_start(struct conv *c, const yaml_event_t *ev, int is_map)
{
    int is_key;
    int rc;

    if ((rc = before_node(c, &is_key)) < 0) {
        return rc;
    }
    if (is_key) {
        return krc_error_set(c->err, KRC_EUNSUPPORTED,
                             "YAML at line %lu: a %s used as a mapping key is not supported",
                             (unsigned long)ev->start_mark.line + 1,
                             is_map ? "mapping" : "sequence");
    }
    if (c->depth == KRC_YAML_JSON_DEPTH_MAX) {
        return krc_error_set(c->err, KRC_ETOOBIG, "YAML at line %lu: nested deeper than %d levels",
                             (unsigned long)ev->start_mark.line + 1, KRC_YAML_JSON_DEPTH_MAX);
    }
    if (c->depth == 1) {
        c->kind_next = 0;
    }
    c->stack[c->depth].is_map = is_map;
    c->stack[c->depth].expect_key = 1;
    c->stack[c->depth].count = 0;
    c->depth++;
    return put(c, is_map ? "{" : "[", 1);
}

static int on_end(struct conv *c)
{
    int is_map = c->stack[c->depth - 1].is_map;

    c->depth--;
    return put(c, is_map ? "}" : "]", 1);
}

static int on_document_end(struct conv *c)
{
    struct doc *nd;
    char *json;
    size_t len = c->out.len;

    if (c->empty || len == 0) {
        krc_buf_reset(&c->out);
        krc_free(c->kind);
        c->kind = NULL;
        c->empty = 0;
        return 0;
    }
    json = krc_buf_take(&c->out);
    nd = json != NULL ? krc_realloc(c->docs, (c->n_docs + 1) * sizeof(*nd)) : NULL;
    if (nd == NULL) {
        krc_free(json);
        return oom(c);
    }
    c->docs = nd;
    nd[c->n_docs].json = json;
    nd[c->n_docs].len = len;
    nd[c->n_docs].kind = c->kind;
    c->n_docs++;
    c->kind = NULL;
    krc_buf_init(&c->out, c->max);
    return 0;
}

static int parse_error(struct conv *c, const yaml_parser_t *p)
{
    struct krc_yaml_problem yp;

    krc_yaml_doc_problem(p, &yp);
    if (yp.kind == KRC_YAML_OUT_OF_MEMORY) {
        return oom(c);
    }
    if (yp.kind == KRC_YAML_UNREADABLE) {
        return krc_error_set(c->err, KRC_EPARSE,
                             "binary data or not UTF-8 text, so not JSON or YAML (%s at byte %zu)",
                             yp.problem ? yp.problem : "unreadable text", yp.offset);
    }
    return krc_error_set(c->err, KRC_EPARSE, "not valid YAML at line %zu, column %zu: %s%s%s%s",
                         yp.line, yp.column, yp.problem ? yp.problem : "syntax error",
                         yp.context ? " (" : "", yp.context ? yp.context : "",
                         yp.context ? ")" : "");
}

static int run_parser(struct conv *c, const char *data, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int done = 0;
    int rc = 0;

    if (!yaml_parser_initialize(&p)) {
        return oom(c);
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    while (!done && rc == 0) {
        if (!yaml_parser_parse(&p, &ev)) {
            rc = parse_error(c, &p);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            krc_buf_reset(&c->out);
            c->depth = 0;
            c->empty = 0;
            c->kind_next = 0;
            break;
        case YAML_DOCUMENT_END_EVENT:
            rc = on_document_end(c);
            break;
        case YAML_ALIAS_EVENT:
            rc = krc_error_set(c->err, KRC_EUNSUPPORTED,
                               "YAML at line %lu: aliases (*name) are not supported",
                               (unsigned long)ev.start_mark.line + 1);
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(c, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(c, &ev, 0);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(c, &ev, 1);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(c);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* The documents to return: all, or those of want_kind when there are some. */
static int selected(const struct conv *c, size_t i, const char *want_kind, int any_wanted)
{
    return !any_wanted || (c->docs[i].kind != NULL && strcmp(c->docs[i].kind, want_kind) == 0);
}

static int combine(struct conv *c, const char *want_kind, char **ret_json, size_t *ret_len)
{
    int any_wanted = 0;
    size_t n = 0;
    size_t last = 0;
    int rc;

    for (size_t i = 0; want_kind != NULL && i < c->n_docs; i++) {
        any_wanted |= c->docs[i].kind != NULL && strcmp(c->docs[i].kind, want_kind) == 0;
    }
    for (size_t i = 0; i < c->n_docs; i++) {
        if (selected(c, i, want_kind, any_wanted)) {
            n++;
            last = i;
        }
    }
    if (n == 1) {
        *ret_json = c->docs[last].json;
        *ret_len = c->docs[last].len;
        c->docs[last].json = NULL;
        return 0;
    }
    krc_buf_reset(&c->out);
    rc = put(c, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", 42);
    n = 0;
    for (size_t i = 0; rc == 0 && i < c->n_docs; i++) {
        if (selected(c, i, want_kind, any_wanted)) {
            if (n++ > 0) {
                rc = put(c, ",", 1);
            }
            if (rc == 0) {
                rc = put(c, c->docs[i].json, c->docs[i].len);
            }
        }
    }
    if (rc == 0) {
        rc = put(c, "]}", 2);
    }
    if (rc == 0) {
        *ret_len = c->out.len;
        *ret_json = krc_buf_take(&c->out);
        if (*ret_json == NULL) {
            rc = oom(c);
        }
    }
    return rc;
}

int krc_yaml_json_convert(const char *data, size_t len, const char *want_kind, size_t max,
                          char **ret_json, size_t *ret_len, struct krc_error *err)
{
    struct conv c;
    const char *nul = memchr(data, '\0', len);
    int rc;

    if (nul != NULL) {
        return krc_error_set(err, KRC_EPARSE,
                             "binary data, not JSON or YAML (a NUL byte at offset %zu)",
                             (size_t)(nul - data));
    }
    memset(&c, 0, sizeof(c));
    c.max = max;
    c.err = err;
    krc_buf_init(&c.out, max);
    rc = run_parser(&c, data, len);
    if (rc == 0 && c.n_docs == 0) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "no document (the file is empty or holds only comments)");
    }
    if (rc == 0) {
        rc = combine(&c, want_kind, ret_json, ret_len);
    }
    for (size_t i = 0; i < c.n_docs; i++) {
        krc_free(c.docs[i].json);
        krc_free(c.docs[i].kind);
    }
    krc_free(c.docs);
    krc_free(c.kind);
    krc_buf_cleanup(&c.out);
    return rc;
}
