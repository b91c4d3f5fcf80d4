/* Private to src/kube: what the pod parser (kube_pod.c) shares with the
 * watch event parser (kube_watch_event.c). */
#ifndef KRC_KUBE_POD_PRIVATE_H
#define KRC_KUBE_POD_PRIVATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/kube/kube_pod.h"
#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/jscan.h"

/* Parse state shared by the parsers of a pod, a Status and a watch event. */
struct pctx {
    struct krc_jscan *s;
    struct krc_pod_info *p;
    struct krc_error *err;
    const char *what;    /* "pod", "watch event: pod", ... for semantic errors */
    const char *section; /* e.g. "status.containerStatuses", for field paths */
    size_t index;        /* element of `section`, or SIZE_MAX */
    const char *ann_channel;
    const char *label_channel;
    int initial_events_end;
    int seen_statuses;
    int seen_init_statuses;
};

#define NO_INDEX ((size_t)-1)

#define EQ(k, lit) KRC_JSCAN_EQ(k, lit)

/* ---- the arena and the typed field readers ---------------------------------
 * Inline: the parsers of kube_pod.c and kube_pod_status.c call them for
 * every field of every pod the watch delivers. */

static inline const char *arena_put(struct krc_pod_info *p, const struct krc_jscan_str *str)
{
    char *dst;
    size_t n;

    if (p->arena_cap - p->arena_len < str->raw_len + 1) {
        return NULL; /* cannot happen, see arena_reserve */
    }
    dst = p->arena + p->arena_len;
    if (str->escaped) {
        n = krc_jscan_unescape(str, dst);
    } else {
        memcpy(dst, str->raw, str->raw_len);
        n = str->raw_len;
    }
    dst[n] = '\0';
    p->arena_len += n + 1;
    return dst;
}

static inline int field_error(struct pctx *c, const char *field, const char *problem, int got)
{
    char path[256];

    const char *dot = field[0] != '\0' ? "." : "";

    if (c->section == NULL) {
        snprintf(path, sizeof(path), "%s", field);
    } else if (c->index == NO_INDEX) {
        snprintf(path, sizeof(path), "%s%s%s", c->section, dot, field);
    } else {
        snprintf(path, sizeof(path), "%s[%zu]%s%s", c->section, c->index, dot, field);
    }
    if (got != 0) {
        return krc_error_set(c->err, KRC_EPARSE, "%s: %s: %s, got %s at offset %zu", c->what, path,
                             problem, krc_jscan_type_name(got), c->s->base + c->s->pos);
    }
    return krc_error_set(c->err, KRC_EPARSE, "%s: %s: %s at offset %zu", c->what, path, problem,
                         c->s->base + c->s->pos);
}

static inline int missing(struct pctx *c, const char *field)
{
    if (c->section == NULL) {
        return krc_error_set(c->err, KRC_EPARSE, "%s: %s missing", c->what, field);
    }
    if (c->index == NO_INDEX) {
        return krc_error_set(c->err, KRC_EPARSE, "%s: %s.%s missing", c->what, c->section, field);
    }
    return krc_error_set(c->err, KRC_EPARSE, "%s: %s[%zu].%s missing", c->what, c->section,
                         c->index, field);
}

/* A string or null (-> NULL) copied into the arena. */
static inline int get_str(struct pctx *c, const char *field, const char **ret)
{
    struct krc_jscan_str str;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_STRING) {
        rc = krc_jscan_string(c->s, &str, c->err);
        if (rc < 0) {
            return rc;
        }
        *ret = arena_put(c->p, &str);
        if (*ret == NULL) {
            return krc_error_set(c->err, KRC_EPARSE, "%s: internal: arena overflow", c->what);
        }
        return 0;
    }
    if (t == KRC_JSON_NULL) {
        *ret = NULL;
        return krc_jscan_null(c->s, c->err);
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected string", t);
}

/* A string compared with `lit` without copying; null counts as different. */
static inline int get_str_is(struct pctx *c, const char *field, const char *lit, int *ret)
{
    struct krc_jscan_str str;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_STRING) {
        rc = krc_jscan_string(c->s, &str, c->err);
        if (rc < 0) {
            return rc;
        }
        *ret = krc_jscan_str_eq(&str, lit, strlen(lit));
        return 0;
    }
    if (t == KRC_JSON_NULL) {
        *ret = 0;
        return krc_jscan_null(c->s, c->err);
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected string", t);
}

static inline int get_int(struct pctx *c, const char *field, int *ret)
{
    int64_t v;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_NUMBER) {
        size_t at = c->s->pos;
        rc = krc_jscan_int64(c->s, &v, c->err);
        if (rc < 0) {
            return rc;
        }
        if (v < INT_MIN || v > INT_MAX) {
            c->s->pos = at;
            return field_error(c, field, "integer out of range", 0);
        }
        *ret = (int)v;
        return 0;
    }
    if (t == KRC_JSON_NULL) {
        *ret = 0;
        return krc_jscan_null(c->s, c->err);
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected integer", t);
}

static inline int get_bool(struct pctx *c, const char *field, int *ret)
{
    int t = krc_jscan_peek(c->s, c->err);

    if (t == KRC_JSON_TRUE || t == KRC_JSON_FALSE) {
        return krc_jscan_bool(c->s, ret, c->err);
    }
    if (t == KRC_JSON_NULL) {
        *ret = 0;
        return krc_jscan_null(c->s, c->err);
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected boolean", t);
}

/* An RFC 3339 string, or null (-> 0). *ret_set tells whether it was a string. */
static inline int get_time(struct pctx *c, const char *field, int64_t *ret, int *ret_set)
{
    struct krc_jscan_str str;
    char tmp[128];
    const char *txt;
    size_t len;
    size_t at;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_NULL) {
        *ret = 0;
        if (ret_set != NULL) {
            *ret_set = 0;
        }
        return krc_jscan_null(c->s, c->err);
    }
    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_STRING) {
        return field_error(c, field, "expected RFC 3339 timestamp string", t);
    }
    at = c->s->pos;
    rc = krc_jscan_string(c->s, &str, c->err);
    if (rc < 0) {
        return rc;
    }
    txt = str.raw;
    len = str.raw_len;
    if (str.escaped) {
        if (len > sizeof(tmp)) {
            len = 0; /* far too long for a timestamp: rejected below */
        } else {
            len = krc_jscan_unescape(&str, tmp);
        }
        txt = tmp;
    }
    if (krc_parse_rfc3339(txt, len, ret) < 0) {
        c->s->pos = at;
        return field_error(c, field, "invalid RFC 3339 timestamp", 0);
    }
    if (*ret < 0) {
        *ret = 0; /* before 1970: 0, as kube_parse reads it (found by fuzz_pod_diff) */
    }
    if (ret_set != NULL) {
        *ret_set = 1;
    }
    return 0;
}

/* Begin an object; 1 when begun, 0 when the value was null (consumed). */
static inline int obj_or_null(struct pctx *c, const char *field)
{
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_OBJECT) {
        rc = krc_jscan_object_begin(c->s, c->err);
        return rc < 0 ? rc : 1;
    }
    if (t == KRC_JSON_NULL) {
        rc = krc_jscan_null(c->s, c->err);
        return rc < 0 ? rc : 0;
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected object", t);
}

static inline int arr_or_null(struct pctx *c, const char *field)
{
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_ARRAY) {
        rc = krc_jscan_array_begin(c->s, c->err);
        return rc < 0 ? rc : 1;
    }
    if (t == KRC_JSON_NULL) {
        rc = krc_jscan_null(c->s, c->err);
        return rc < 0 ? rc : 0;
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected array", t);
}

static inline int skip(struct pctx *c)
{
    int rc = krc_jscan_skip(c->s, NULL, c->err);
    return rc < 0 ? rc : 0;
}

/* Reserve the arena for an input of `len` bytes (every string copied out of
 * it fits); 0 or KRC_ENOMEM. */
int krc_pod_arena_reserve(struct krc_pod_info *p, size_t len, struct krc_error *err);
/* Forget a previous parse (the arena is kept). */
void krc_pod_reset(struct krc_pod_info *p);
void krc_pod_ctx_init(struct pctx *c, struct krc_jscan *s, struct krc_pod_info *p, const char *what,
                      struct krc_error *err);
/* A whole document (`what` names it in errors) parsed by `parse` into *ret:
 * the arena reserved, the end checked, *ret forgotten on failure. */
int krc_pod_parse_top(const char *json, size_t len, struct krc_pod_info *ret, const char *what,
                      int (*parse)(struct pctx *c), struct krc_error *err);
/* kube_pod_status.c: the status object at the scanner position. */
int krc_pod_parse_status(struct pctx *c);
/* The pod object at the scanner position (meta_only: metadata only, nothing
 * required: a bookmark, another resource's object). */
int krc_pod_parse_object(struct pctx *c, int meta_only);
/* The Status object at the scanner position into *st (strings in the pod
 * arena). */
int krc_pod_parse_status_object(struct pctx *c, struct krc_kube_status *st);

#endif
