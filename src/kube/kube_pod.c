/* Pod JSON (include/krc/kube/kube_pod.h): the few fields detection needs,
 * in one pass with the jscan pull scanner, strings copied into the pod's
 * arena: metadata, the spec's init containers (which are sidecars) and the
 * status (kube_pod_status.c); the watch event around a pod is
 * kube_watch_event.c's. */
#include "krc/kube/kube_pod.h"

#include <string.h>

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

/* ---- metadata ------------------------------------------------------------- */

/* annotations (is_labels == 0) or labels */
static int parse_string_map(struct pctx *c, const char *field, int is_labels)
{
    struct krc_jscan_str k;
    int rc = obj_or_null(c, field);
    int flag = 0; /* get_str_is sets it unless it fails (the parse fails then) */

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

/* Parse the pod object at the scanner position. meta_only (a bookmark, or
 * another resource's object): read metadata only and require nothing of it
 * (the caller checks what it needs). */
int krc_pod_parse_object(struct pctx *c, int meta_only)
{
    struct krc_jscan_str k;
    int t = krc_jscan_peek(c->s, c->err);
    size_t start;
    int rc;

    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return krc_jscan_fail(c->s, c->err, "expected %s object, got %s",
                              meta_only ? "an" : "a pod", krc_jscan_type_name(t));
    }
    start = c->s->pos; /* peek left the scanner on the '{' */
    rc = krc_jscan_object_begin(c->s, c->err);
    if (rc < 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "metadata")) {
            rc = parse_metadata(c);
        } else if (!meta_only && EQ(&k, "spec")) {
            rc = parse_spec(c);
        } else if (!meta_only && EQ(&k, "status")) {
            rc = krc_pod_parse_status(c);
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
    if (meta_only) {
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

int krc_pod_parse_top(const char *json, size_t len, struct krc_pod_info *ret, const char *what,
                      int (*parse)(struct pctx *c), struct krc_error *err)
{
    struct krc_jscan s;
    struct pctx c;
    int rc;

    krc_pod_reset(ret);
    rc = krc_pod_arena_reserve(ret, len, err);
    if (rc < 0) {
        return rc;
    }
    krc_jscan_init(&s, json, len, what);
    krc_pod_ctx_init(&c, &s, ret, what, err);
    rc = parse(&c);
    if (rc == 0) {
        rc = krc_jscan_end(&s, err);
    }
    if (rc < 0) {
        krc_pod_reset(ret);
    }
    return rc;
}

static int parse_pod(struct pctx *c)
{
    return krc_pod_parse_object(c, 0);
}

int krc_pod_info_parse(const char *json, size_t len, struct krc_pod_info *ret,
                       struct krc_error *err)
{
    return krc_pod_parse_top(json, len, ret, "pod", parse_pod, err);
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
