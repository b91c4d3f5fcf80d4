#include "krc/detect/restart.h"

#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/jscan.h"
#include "krc/util/mem.h"

static int dup_opt(char **dst, const char *src)
{
    if (src == NULL) {
        *dst = NULL;
        return 0;
    }
    *dst = krc_strdup(src);
    return *dst == NULL ? -1 : 0;
}

int krc_restart_pod_total(const struct krc_pod_info *pod)
{
    int total = 0;
    for (size_t i = 0; i < pod->n_containers; i++) {
        if (!pod->containers[i].is_init) {
            total += pod->containers[i].restart_count;
        }
    }
    return total;
}

static size_t skip_ws(const char *json, size_t len, size_t i)
{
    while (i < len && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r')) {
        i++;
    }
    return i;
}

/* Find metadata.managedFields in a pod object: the byte range to cut so that
 * the rest stays valid JSON (the member with the comma that separates it from
 * a neighbour). 1 and the range when found, 0 when absent or the text is not
 * the object expected (then nothing is cut). */
static int find_managed_fields(const char *json, size_t len, size_t *ret_from, size_t *ret_to)
{
    struct krc_jscan s;
    struct krc_jscan_str key;
    struct krc_error err;
    int rc;

    krc_jscan_init(&s, json, len, "pod");
    if (krc_jscan_object_begin(&s, &err) < 0) {
        return 0;
    }
    while ((rc = krc_jscan_object_next(&s, &key, &err)) == 1) {
        size_t prev_end;
        int first = 1;
        if (!KRC_JSCAN_EQ(&key, "metadata")) {
            if (krc_jscan_skip(&s, NULL, &err) < 0) {
                return 0;
            }
            continue;
        }
        if (krc_jscan_object_begin(&s, &err) < 0) {
            return 0;
        }
        prev_end = s.pos; /* just after '{', then after each member's value */
        while ((rc = krc_jscan_object_next(&s, &key, &err)) == 1) {
            size_t key_start = (size_t)(key.raw - json) - 1; /* its opening quote */
            if (KRC_JSCAN_EQ(&key, "managedFields")) {
                if (krc_jscan_skip(&s, NULL, &err) < 0) {
                    return 0;
                }
                if (!first) {
                    /* ',"managedFields":[...]' from the end of the previous value */
                    *ret_from = prev_end;
                    *ret_to = s.pos;
                    return 1;
                }
                /* first member: '"managedFields":[...],' up to the next key */
                *ret_from = key_start;
                *ret_to = skip_ws(json, len, s.pos);
                if (*ret_to < len && json[*ret_to] == ',') {
                    *ret_to = skip_ws(json, len, *ret_to + 1);
                } else {
                    *ret_to = s.pos; /* the only member */
                }
                return 1;
            }
            if (krc_jscan_skip(&s, NULL, &err) < 0) {
                return 0;
            }
            prev_end = s.pos;
            first = 0;
        }
        return 0;
    }
    return 0;
}

/* A copy of the pod object without metadata.managedFields: the API server's
 * field-ownership bookkeeping is ~40% of a typical pod and nothing downstream
 * reads it, while a burst queues one copy per restart. */
static char *copy_pod_json(const char *json, size_t len, size_t *ret_len)
{
    size_t from, to;
    char *out;

    if (!find_managed_fields(json, len, &from, &to)) {
        *ret_len = len;
        return krc_strndup(json, len);
    }
    out = krc_malloc(len - (to - from) + 1);
    if (out == NULL) {
        return NULL;
    }
    memcpy(out, json, from);
    memcpy(out + from, json + to, len - to);
    *ret_len = len - (to - from);
    out[*ret_len] = '\0';
    return out;
}

/* metadata.ownerReferences (the controller, else the first: as the pod
 * parser picks it) and metadata.labels["pod-template-hash"] of a pod's JSON. */
struct owner_scan {
    struct krc_jscan_str kind, name, hash;
    int have, controller;
};

static int owner_ref_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    struct owner_scan *o = ctx;
    struct krc_jscan_str *into = NULL;
    struct krc_jscan_str v;

    if (KRC_JSCAN_EQ(k, "kind")) {
        into = &o->kind;
    } else if (KRC_JSCAN_EQ(k, "name")) {
        into = &o->name;
    } else if (KRC_JSCAN_EQ(k, "controller") && krc_jscan_peek(s, err) == KRC_JSON_TRUE) {
        o->controller = 1;
    }
    if (into == NULL || krc_jscan_peek(s, err) != KRC_JSON_STRING) {
        return krc_jscan_skip(s, NULL, err);
    }
    if (krc_jscan_string(s, &v, err) < 0) {
        return KRC_EPARSE;
    }
    *into = v;
    return 0;
}

static int owner_ref(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct owner_scan *o = ctx;
    struct owner_scan one;
    int rc;

    memset(&one, 0, sizeof(one));
    rc = krc_jscan_each_key(s, owner_ref_key, &one, err);
    if (rc < 0) {
        return rc;
    }
    if (one.kind.raw != NULL && one.name.raw != NULL && (!o->have || one.controller) &&
        !o->controller) {
        o->kind = one.kind;
        o->name = one.name;
        o->have = 1;
        o->controller = one.controller;
    }
    return 0;
}

static int label_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                     struct krc_error *err)
{
    struct owner_scan *o = ctx;

    if (KRC_JSCAN_EQ(k, "pod-template-hash") && krc_jscan_peek(s, err) == KRC_JSON_STRING) {
        return krc_jscan_string(s, &o->hash, err) < 0 ? KRC_EPARSE : 0;
    }
    return krc_jscan_skip(s, NULL, err);
}

static int meta_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                    struct krc_error *err)
{
    if (KRC_JSCAN_EQ(k, "ownerReferences")) {
        return krc_jscan_each_item(s, owner_ref, ctx, err);
    }
    if (KRC_JSCAN_EQ(k, "labels")) {
        return krc_jscan_each_key(s, label_key, ctx, err);
    }
    return krc_jscan_skip(s, NULL, err);
}

static int pod_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                   struct krc_error *err)
{
    if (KRC_JSCAN_EQ(k, "metadata")) {
        int rc = krc_jscan_each_key(s, meta_key, ctx, err);
        /* nothing after metadata is needed: stop the walk (1 is not an error) */
        return rc < 0 ? rc : KRC_ECANCELED;
    }
    return krc_jscan_skip(s, NULL, err);
}

static char *dup_scanned(const struct krc_jscan_str *v)
{
    char *out;
    size_t n;

    if (v->raw == NULL) {
        return NULL;
    }
    out = krc_malloc(v->raw_len + 1);
    if (out != NULL) {
        n = krc_jscan_unescape(v, out);
        out[n] = '\0';
    }
    return out;
}

/* The owner and template hash of a pod's JSON into r (0; KRC_ENOMEM). A
 * pod the scanner cannot read leaves them NULL: the restart then counts
 * under its pod, as before. */
static int keep_owner(struct krc_restart *r, const char *json, size_t len)
{
    struct owner_scan o;
    struct krc_jscan s;
    struct krc_error err;
    int rc;

    memset(&o, 0, sizeof(o));
    krc_jscan_init(&s, json, len, "pod");
    rc = krc_jscan_each_key(&s, pod_key, &o, &err);
    if (rc < 0 && rc != KRC_ECANCELED) {
        return 0;
    }
    if (o.have) {
        r->owner_kind = dup_scanned(&o.kind);
        r->owner_name = dup_scanned(&o.name);
        if (r->owner_kind == NULL || r->owner_name == NULL) {
            return KRC_ENOMEM;
        }
    }
    if (o.hash.raw != NULL && (r->template_hash = dup_scanned(&o.hash)) == NULL) {
        return KRC_ENOMEM;
    }
    return 0;
}

struct krc_restart *krc_restart_from_delta(const struct krc_restart_delta *d, int copy_pod)
{
    const struct krc_pod_info *p = d->pod;
    const struct krc_container_info *c = d->container;
    struct krc_restart *r = krc_calloc(1, sizeof(*r));

    if (r == NULL) {
        return NULL;
    }
    if (dup_opt(&r->namespace, p->namespace) < 0 || dup_opt(&r->pod, p->name) < 0 ||
        dup_opt(&r->node, p->node_name) < 0 ||
        dup_opt(&r->reason, c->has_last_terminated ? c->last_reason : NULL) < 0 ||
        dup_opt(&r->slack_channel, p->slack_channel) < 0) {
        krc_restart_free(r);
        return NULL;
    }
    if (copy_pod && p->raw != NULL && p->raw_len > 0) {
        r->pod_json = copy_pod_json(p->raw, p->raw_len, &r->pod_json_len);
        if (r->pod_json == NULL) {
            krc_restart_free(r);
            return NULL;
        }
    } else if (p->raw != NULL && p->raw_len > 0 && keep_owner(r, p->raw, p->raw_len) < 0) {
        krc_restart_free(r);
        return NULL;
    }
    /* an API server's values fit (model/restart_ident.h); a longer one is cut */
    (void)krc_restart_ident_set(&r->ident, p->uid, c->name, c->restart_count, c->last_finished_at,
                                c->has_last_terminated ? c->last_container_id : NULL);
    r->is_init = c->is_init;
    r->is_sidecar = c->is_sidecar;
    r->previous_count = d->previous_count;
    r->missed = d->missed;
    r->pod_restarts = krc_restart_pod_total(p);
    r->has_exit_code = c->has_last_terminated;
    r->exit_code = c->last_exit_code;
    r->signal = c->last_signal;
    r->started_at = c->last_started_at;
    r->detected_at = krc_clock_now();
    r->detected_mono_ms = krc_clock_mono_ms();
    return r;
}

void krc_restart_free(struct krc_restart *r)
{
    if (r == NULL) {
        return;
    }
    krc_free(r->namespace);
    krc_free(r->pod);
    krc_free(r->node);
    krc_free(r->reason);
    krc_free(r->slack_channel);
    krc_free(r->pod_json);
    krc_free(r->owner_kind);
    krc_free(r->owner_name);
    krc_free(r->template_hash);
    krc_free(r);
}
