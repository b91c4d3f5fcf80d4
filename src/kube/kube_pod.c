#include "krc/kube/kube_pod.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/jscan.h"
#include "krc/util/mem.h"

#include "kube_pod_private.h"

/* ---- arena ---------------------------------------------------------------- */

/* Every string copied out of an input of `len` bytes fits in len + 1 bytes:
 * a decoded string is never longer than its raw form and its two quotes make
 * room for the NUL. Reserving that once up front keeps the pointers handed
 * out during a parse stable (no realloc in the middle). */
int krc_pod_arena_reserve(struct krc_pod_info *p, size_t len, struct krc_error *err)
{
    size_t need = len + 1;
    char *a;

    p->arena_len = 0;
    if (need <= p->arena_cap) {
        return 0;
    }
    if (need < 4096) {
        need = 4096;
    } else if (need < p->arena_cap * 2) {
        need = p->arena_cap * 2;
    }
    a = krc_malloc(need);
    if (a == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "pod: out of memory for a %zu-byte arena", need);
    }
    krc_free(p->arena);
    p->arena = a;
    p->arena_cap = need;
    return 0;
}

static const char *arena_put(struct krc_pod_info *p, const struct krc_jscan_str *str)
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

/* ---- typed field readers -------------------------------------------------- */

static int field_error(struct pctx *c, const char *field, const char *problem, int got)
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

static int missing(struct pctx *c, const char *field)
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
static int get_str(struct pctx *c, const char *field, const char **ret)
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
static int get_str_is(struct pctx *c, const char *field, const char *lit, int *ret)
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

static int get_int(struct pctx *c, const char *field, int *ret)
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

static int get_bool(struct pctx *c, const char *field, int *ret)
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
static int get_time(struct pctx *c, const char *field, int64_t *ret, int *ret_set)
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
static int obj_or_null(struct pctx *c, const char *field)
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

static int arr_or_null(struct pctx *c, const char *field)
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

static int skip(struct pctx *c)
{
    int rc = krc_jscan_skip(c->s, NULL, c->err);
    return rc < 0 ? rc : 0;
}

/* ---- metadata ------------------------------------------------------------- */

/* annotations (is_labels == 0) or labels */
static int parse_string_map(struct pctx *c, const char *field, int is_labels)
{
    struct krc_jscan_str k;
    int rc = obj_or_null(c, field);
    int flag;

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "alert-slack-channel")) {
            rc = get_str(c, field, is_labels ? &c->label_channel : &c->ann_channel);
        } else if (!is_labels && EQ(&k, "krc.io/ignore")) {
            rc = get_str_is(c, "annotations[krc.io/ignore]", "true", &flag);
            c->p->ignore = flag;
        } else if (!is_labels && EQ(&k, "k8s.io/initial-events-end")) {
            rc = get_str_is(c, "annotations[k8s.io/initial-events-end]", "true", &flag);
            c->initial_events_end = flag;
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc;
}

static int parse_metadata(struct pctx *c)
{
    struct krc_pod_info *p = c->p;
    struct krc_jscan_str k;
    int64_t ts;
    int set = 0; /* get_time leaves it unset on an error (clang-tidy) */
    int rc;

    c->section = NULL;
    rc = obj_or_null(c, "metadata");
    if (rc <= 0) {
        return rc;
    }
    c->section = "metadata";
    c->index = NO_INDEX;
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "uid")) {
            rc = get_str(c, "uid", &p->uid);
        } else if (EQ(&k, "name")) {
            rc = get_str(c, "name", &p->name);
        } else if (EQ(&k, "namespace")) {
            rc = get_str(c, "namespace", &p->namespace);
        } else if (EQ(&k, "resourceVersion")) {
            rc = get_str(c, "resourceVersion", &p->resource_version);
        } else if (EQ(&k, "creationTimestamp")) {
            rc = get_time(c, "creationTimestamp", &p->creation_timestamp, NULL);
        } else if (EQ(&k, "deletionTimestamp")) {
            rc = get_time(c, "deletionTimestamp", &ts, &set);
            p->deleting = set;
        } else if (EQ(&k, "annotations")) {
            rc = parse_string_map(c, "annotations", 0);
        } else if (EQ(&k, "labels")) {
            rc = parse_string_map(c, "labels", 1);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    c->section = NULL;
    return rc;
}

/* ---- spec ----------------------------------------------------------------- */

static int add_init_spec(struct pctx *c, const char *name, int sidecar)
{
    struct krc_pod_info *p = c->p;

    if (p->n_init_specs == p->init_specs_cap) {
        size_t cap = p->init_specs_cap ? p->init_specs_cap * 2 : 8;
        struct krc_pod_init_spec *n = krc_realloc(p->init_specs, cap * sizeof(*n));
        if (n == NULL) {
            return krc_error_set(c->err, KRC_ENOMEM, "%s: out of memory", c->what);
        }
        p->init_specs = n;
        p->init_specs_cap = cap;
    }
    p->init_specs[p->n_init_specs].name = name;
    p->init_specs[p->n_init_specs].sidecar = sidecar;
    p->n_init_specs++;
    return 0;
}

static int parse_init_containers(struct pctx *c)
{
    struct krc_jscan_str k;
    const char *name;
    const char *policy;
    int rc = arr_or_null(c, "initContainers");

    if (rc <= 0) {
        return rc;
    }
    c->section = "spec.initContainers";
    c->index = 0;
    while ((rc = krc_jscan_array_next(c->s, c->err)) > 0) {
        name = NULL;
        policy = NULL;
        rc = obj_or_null(c, "");
        if (rc < 0) {
            return rc;
        }
        while (rc > 0 && (rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
            if (EQ(&k, "name")) {
                rc = get_str(c, "name", &name);
            } else if (EQ(&k, "restartPolicy")) {
                rc = get_str(c, "restartPolicy", &policy);
            } else {
                rc = skip(c);
            }
            if (rc < 0) {
                return rc;
            }
            rc = 1;
        }
        if (rc < 0) {
            return rc;
        }
        if (name != NULL) {
            rc = add_init_spec(c, name, krc_kube_is_sidecar(1, policy));
            if (rc < 0) {
                return rc;
            }
        }
        c->index++;
    }
    c->section = "spec";
    c->index = NO_INDEX;
    return rc;
}

static int parse_spec(struct pctx *c)
{
    struct krc_jscan_str k;
    int rc;

    c->section = NULL;
    rc = obj_or_null(c, "spec");
    if (rc <= 0) {
        return rc;
    }
    c->section = "spec";
    c->index = NO_INDEX;
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "nodeName")) {
            rc = get_str(c, "nodeName", &c->p->node_name);
        } else if (EQ(&k, "initContainers")) {
            rc = parse_init_containers(c);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    c->section = NULL;
    return rc;
}

/* ---- status --------------------------------------------------------------- */

/* Consume an object (whole) or null: 1 for an object, 0 for null. */
static int present_obj(struct pctx *c, const char *field)
{
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_OBJECT) {
        rc = krc_jscan_skip(c->s, NULL, c->err);
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

struct terminated {
    int exit_code;
    int signal;
    const char *reason;
    int64_t started;
    int64_t finished;
    const char *container_id;
};

/* state.terminated (last == 0) or lastState.terminated: 1 when an object was
 * read into *t, 0 for null. */
static int parse_terminated(struct pctx *c, int last, struct terminated *t)
{
    struct krc_jscan_str k;
    int rc = obj_or_null(c, last ? "lastState.terminated" : "state.terminated");

    memset(t, 0, sizeof(*t));
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "exitCode")) {
            rc = get_int(c, last ? "lastState.terminated.exitCode" : "state.terminated.exitCode",
                         &t->exit_code);
        } else if (EQ(&k, "reason")) {
            rc = get_str(c, last ? "lastState.terminated.reason" : "state.terminated.reason",
                         &t->reason);
        } else if (last && EQ(&k, "signal")) {
            rc = get_int(c, "lastState.terminated.signal", &t->signal);
        } else if (last && EQ(&k, "startedAt")) {
            rc = get_time(c, "lastState.terminated.startedAt", &t->started, NULL);
        } else if (last && EQ(&k, "finishedAt")) {
            rc = get_time(c, "lastState.terminated.finishedAt", &t->finished, NULL);
        } else if (last && EQ(&k, "containerID")) {
            rc = get_str(c, "lastState.terminated.containerID", &t->container_id);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? rc : 1;
}

/* state.waiting: 1 with *reason when an object, 0 for null. */
static int parse_waiting(struct pctx *c, const char **reason)
{
    struct krc_jscan_str k;
    int rc = obj_or_null(c, "state.waiting");

    *reason = NULL;
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "reason")) {
            rc = get_str(c, "state.waiting.reason", reason);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? rc : 1;
}

/* state: Kubernetes sets at most one of running/waiting/terminated. When a
 * document has several, the same precedence as kube_parse's decoder applies
 * whatever their order (JSON member order carries no meaning): terminated,
 * then waiting, then running, so the watch and the collector agree (found by
 * fuzz_pod_diff; regression input tests/fuzz/regressions/pod_diff). */
static void set_state(struct krc_container_info *ci, int running, int waiting,
                      const char *wait_reason, int terminated, const struct terminated *t)
{
    ci->state_running = 0;
    ci->state_waiting = 0;
    ci->state_terminated = 0;
    ci->state_reason = NULL;
    ci->state_exit_code = 0;
    if (terminated) {
        ci->state_terminated = 1;
        ci->state_reason = t->reason;
        ci->state_exit_code = t->exit_code;
    } else if (waiting) {
        ci->state_waiting = 1;
        ci->state_reason = wait_reason;
    } else if (running) {
        ci->state_running = 1;
    }
}

static int parse_state(struct pctx *c, struct krc_container_info *ci)
{
    struct krc_jscan_str k;
    struct terminated t, term;
    const char *reason, *wait_reason = NULL;
    int running = 0, waiting = 0, terminated = 0;
    int rc = obj_or_null(c, "state");

    if (rc <= 0) {
        return rc;
    }
    memset(&term, 0, sizeof(term));
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "running")) {
            rc = present_obj(c, "state.running");
            running |= rc > 0;
        } else if (EQ(&k, "waiting")) {
            rc = parse_waiting(c, &reason);
            if (rc > 0) {
                waiting = 1;
                wait_reason = reason;
            }
        } else if (EQ(&k, "terminated")) {
            rc = parse_terminated(c, 0, &t);
            if (rc > 0) {
                terminated = 1;
                term = t;
            }
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc == 0 && (running || waiting || terminated)) {
        set_state(ci, running, waiting, wait_reason, terminated, &term);
    }
    return rc;
}

/* lastState: only terminated matters. */
static int parse_last_state(struct pctx *c, struct krc_container_info *ci)
{
    struct krc_jscan_str k;
    struct terminated t;
    int rc = obj_or_null(c, "lastState");

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "terminated")) {
            rc = parse_terminated(c, 1, &t);
            if (rc > 0) {
                ci->has_last_terminated = 1;
                ci->last_exit_code = t.exit_code;
                ci->last_signal = t.signal;
                ci->last_reason = t.reason;
                ci->last_started_at = t.started;
                ci->last_finished_at = t.finished;
                ci->last_container_id = t.container_id;
            }
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc;
}

static int parse_container_status(struct pctx *c, struct krc_container_info *ci)
{
    struct krc_jscan_str k;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return field_error(c, "", "expected object", t);
    }
    rc = krc_jscan_object_begin(c->s, c->err);
    if (rc < 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "name")) {
            rc = get_str(c, "name", &ci->name);
        } else if (EQ(&k, "restartCount")) {
            rc = get_int(c, "restartCount", &ci->restart_count);
        } else if (EQ(&k, "ready")) {
            rc = get_bool(c, "ready", &ci->ready);
        } else if (EQ(&k, "state")) {
            rc = parse_state(c, ci);
        } else if (EQ(&k, "lastState")) {
            rc = parse_last_state(c, ci);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc < 0) {
        return rc;
    }
    if (ci->name == NULL) {
        return missing(c, "name");
    }
    return 0;
}

static int grow_containers(struct pctx *c)
{
    struct krc_pod_info *p = c->p;
    struct krc_container_info *n;
    size_t cap;

    if (p->n_containers < p->containers_cap) {
        return 0;
    }
    cap = p->containers_cap ? p->containers_cap * 2 : 8;
    n = krc_realloc(p->containers, cap * sizeof(*n));
    if (n == NULL) {
        return krc_error_set(c->err, KRC_ENOMEM, "%s: out of memory for %zu containers", c->what,
                             cap);
    }
    p->containers = n;
    p->containers_cap = cap;
    return 0;
}

static int parse_statuses(struct pctx *c, int is_init)
{
    const char *field = is_init ? "initContainerStatuses" : "containerStatuses";
    int *seen = is_init ? &c->seen_init_statuses : &c->seen_statuses;
    int rc;

    if (*seen) {
        return field_error(c, field, "duplicate key", 0);
    }
    *seen = 1;
    rc = arr_or_null(c, field);
    if (rc <= 0) {
        return rc;
    }
    c->section = is_init ? "status.initContainerStatuses" : "status.containerStatuses";
    c->index = 0;
    while ((rc = krc_jscan_array_next(c->s, c->err)) > 0) {
        struct krc_container_info *ci;

        rc = grow_containers(c);
        if (rc < 0) {
            return rc;
        }
        ci = &c->p->containers[c->p->n_containers];
        memset(ci, 0, sizeof(*ci));
        ci->is_init = is_init;
        rc = parse_container_status(c, ci);
        if (rc < 0) {
            return rc;
        }
        c->p->n_containers++;
        c->index++;
    }
    c->section = "status";
    c->index = NO_INDEX;
    return rc;
}

static int parse_status(struct pctx *c)
{
    struct krc_jscan_str k;
    int rc;

    c->section = NULL;
    rc = obj_or_null(c, "status");
    if (rc <= 0) {
        return rc;
    }
    c->section = "status";
    c->index = NO_INDEX;
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "phase")) {
            rc = get_str(c, "phase", &c->p->phase);
        } else if (EQ(&k, "containerStatuses")) {
            rc = parse_statuses(c, 0);
        } else if (EQ(&k, "initContainerStatuses")) {
            rc = parse_statuses(c, 1);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    c->section = NULL;
    return rc;
}

/* ---- pod object ----------------------------------------------------------- */

void krc_pod_reset(struct krc_pod_info *p)
{
    p->uid = NULL;
    p->namespace = NULL;
    p->name = NULL;
    p->resource_version = NULL;
    p->node_name = NULL;
    p->phase = NULL;
    p->creation_timestamp = 0;
    p->deleting = 0;
    p->ignore = 0;
    p->slack_channel = NULL;
    p->raw = NULL;
    p->raw_len = 0;
    p->n_containers = 0;
    p->n_init_specs = 0;
    p->arena_len = 0;
}

static void reverse(struct krc_container_info *a, size_t n)
{
    size_t i;

    for (i = 0; i < n / 2; i++) {
        struct krc_container_info t = a[i];
        a[i] = a[n - 1 - i];
        a[n - 1 - i] = t;
    }
}

/* Regular containers first, then init containers; each kind comes from one
 * array (duplicates are rejected), so at most one rotation is needed. */
static void order_containers(struct krc_pod_info *p)
{
    size_t k = 0;

    while (k < p->n_containers && p->containers[k].is_init) {
        k++;
    }
    if (k == 0 || k == p->n_containers) {
        return;
    }
    reverse(p->containers, k);
    reverse(p->containers + k, p->n_containers - k);
    reverse(p->containers, p->n_containers);
}

int krc_kube_is_sidecar(int is_init, const char *restart_policy)
{
    return is_init && restart_policy != NULL && strcmp(restart_policy, "Always") == 0;
}

static void mark_sidecars(struct krc_pod_info *p)
{
    size_t i;
    size_t j;
    size_t nth = 0;

    for (i = 0; i < p->n_containers; i++) {
        struct krc_container_info *ci = &p->containers[i];

        if (!ci->is_init) {
            continue;
        }
        /* statuses normally follow the spec order: try the same position first */
        if (nth < p->n_init_specs && strcmp(p->init_specs[nth].name, ci->name) == 0) {
            ci->is_sidecar = p->init_specs[nth].sidecar;
        } else {
            for (j = 0; j < p->n_init_specs; j++) {
                if (strcmp(p->init_specs[j].name, ci->name) == 0) {
                    ci->is_sidecar = p->init_specs[j].sidecar;
                    break;
                }
            }
        }
        nth++;
    }
}

/* Parse the pod object at the scanner position. bookmark: read metadata only
 * and do not require a uid. */
int krc_pod_parse_object(struct pctx *c, int bookmark)
{
    struct krc_jscan_str k;
    int t = krc_jscan_peek(c->s, c->err);
    size_t start;
    int rc;

    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return krc_jscan_fail(c->s, c->err, "expected a pod object, got %s",
                              krc_jscan_type_name(t));
    }
    start = c->s->pos; /* peek left the scanner on the '{' */
    rc = krc_jscan_object_begin(c->s, c->err);
    if (rc < 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "metadata")) {
            rc = parse_metadata(c);
        } else if (!bookmark && EQ(&k, "spec")) {
            rc = parse_spec(c);
        } else if (!bookmark && EQ(&k, "status")) {
            rc = parse_status(c);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc < 0) {
        return rc;
    }
    c->section = NULL;
    c->p->raw = c->s->buf + start;
    c->p->raw_len = c->s->pos - start;
    if (bookmark) {
        if (c->p->resource_version == NULL) {
            return missing(c, "metadata.resourceVersion");
        }
        return 0;
    }
    if (c->p->uid == NULL) {
        return missing(c, "metadata.uid");
    }
    if (c->p->name == NULL) {
        return missing(c, "metadata.name");
    }
    if (c->p->namespace == NULL) {
        return missing(c, "metadata.namespace");
    }
    if (c->p->resource_version == NULL) {
        c->p->resource_version = "";
    }
    c->p->slack_channel = c->ann_channel != NULL ? c->ann_channel : c->label_channel;
    mark_sidecars(c->p);
    order_containers(c->p);
    return 0;
}

void krc_pod_ctx_init(struct pctx *c, struct krc_jscan *s, struct krc_pod_info *p, const char *what,
                      struct krc_error *err)
{
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->p = p;
    c->err = err;
    c->what = what;
    c->index = NO_INDEX;
}

/* ---- public --------------------------------------------------------------- */

void krc_pod_info_init(struct krc_pod_info *p)
{
    memset(p, 0, sizeof(*p));
}

void krc_pod_info_cleanup(struct krc_pod_info *p)
{
    if (p == NULL) {
        return;
    }
    krc_free(p->arena);
    krc_free(p->containers);
    krc_free(p->init_specs);
    memset(p, 0, sizeof(*p));
}

int krc_pod_info_parse(const char *json, size_t len, struct krc_pod_info *ret,
                       struct krc_error *err)
{
    struct krc_jscan s;
    struct pctx c;
    int rc;

    krc_pod_reset(ret);
    rc = krc_pod_arena_reserve(ret, len, err);
    if (rc < 0) {
        return rc;
    }
    krc_jscan_init(&s, json, len, "pod");
    krc_pod_ctx_init(&c, &s, ret, "pod", err);
    rc = krc_pod_parse_object(&c, 0);
    if (rc == 0) {
        rc = krc_jscan_end(&s, err);
    }
    if (rc < 0) {
        krc_pod_reset(ret);
    }
    return rc;
}

/* Status object at the scanner position into ev->status (strings in the pod
 * arena). */
int krc_pod_parse_status_object(struct pctx *c, struct krc_kube_status *st)
{
    struct krc_jscan_str k;
    const char *kind = NULL;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return krc_jscan_fail(c->s, c->err, "expected a Status object, got %s",
                              krc_jscan_type_name(t));
    }
    rc = krc_jscan_object_begin(c->s, c->err);
    while (rc >= 0 && (rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "kind")) {
            rc = get_str(c, "kind", &kind);
        } else if (EQ(&k, "code")) {
            rc = get_int(c, "code", &st->code);
        } else if (EQ(&k, "reason")) {
            rc = get_str(c, "reason", &st->reason);
        } else if (EQ(&k, "message")) {
            rc = get_str(c, "message", &st->message);
        } else {
            rc = skip(c);
        }
    }
    if (rc < 0) {
        return rc;
    }
    if (kind != NULL && strcmp(kind, "Status") != 0) {
        return krc_error_set(c->err, KRC_EPARSE, "%s: kind is \"%.64s\", expected Status", c->what,
                             kind);
    }
    return 0;
}
