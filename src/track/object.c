/* A watched object -> struct krc_track_obj (object.h), one pass of the
 * allocation-free scanner. */
#include "krc/track/object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/jscan.h"

void krc_track_obj_init(struct krc_track_obj *o)
{
    memset(o, 0, sizeof(*o));
    o->ready = -1;
    krc_facts_init(&o->facts);
}

void krc_track_obj_cleanup(struct krc_track_obj *o)
{
    krc_facts_cleanup(&o->facts);
}

static void obj_reset(struct krc_track_obj *o)
{
    struct krc_facts f = o->facts;

    memset(o, 0, sizeof(*o));
    o->ready = -1;
    o->facts = f;
    krc_facts_reset(&o->facts);
}

static int skip(struct krc_jscan *s, struct krc_error *err)
{
    return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
}

/* A string value into out ("" for another type, which is skipped). */
static int str_into(struct krc_jscan *s, char *out, size_t outsz, struct krc_error *err)
{
    struct krc_jscan_str v;
    int t = krc_jscan_peek(s, err);

    out[0] = '\0';
    if (t < 0) {
        return KRC_EPARSE;
    }
    if (t != KRC_JSON_STRING) {
        return skip(s, err);
    }
    if (krc_jscan_string(s, &v, err) < 0) {
        return KRC_EPARSE;
    }
    krc_digest_copy(&v, out, outsz);
    return 0;
}

static int int_into(struct krc_jscan *s, int64_t *out, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    if (t < 0) {
        return KRC_EPARSE;
    }
    if (t != KRC_JSON_NUMBER) {
        return skip(s, err);
    }
    return krc_jscan_int64(s, out, err) < 0 ? KRC_EPARSE : 0;
}

static int time_into(struct krc_jscan *s, int64_t *out, struct krc_error *err)
{
    char t[64];
    int64_t v;

    if (str_into(s, t, sizeof(t), err) < 0) {
        return KRC_EPARSE;
    }
    if (t[0] != '\0' && krc_parse_rfc3339(t, strlen(t), &v) == 0) {
        *out = v;
    }
    return 0;
}

/* -v in unsigned arithmetic: INT64_MIN (a generation no API server sends)
 * stays itself, as before, without the undefined signed negation. */
static int64_t negate(int64_t v)
{
    return (int64_t)(0 - (uint64_t)v);
}

/* ---- managedFields ------------------------------------------------------ */

static int key_in(const struct krc_jscan_str *k, const char *const *set)
{
    for (size_t i = 0; set[i] != NULL; i++) {
        if (krc_jscan_str_eq(k, set[i], strlen(set[i]))) {
            return 1;
        }
    }
    return 0;
}

struct touch_walk {
    const char *const *level1, *const *level2;
    int *ret;
};

static int fields_touch(struct krc_jscan *s, const char *const *level1, const char *const *level2,
                        int *ret, struct krc_error *err);

static int touch_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                     struct krc_error *err)
{
    struct touch_walk *w = ctx;

    if (!key_in(k, w->level1)) {
        return skip(s, err);
    }
    if (w->level2 == NULL) {
        *w->ret = 1;
        return skip(s, err);
    }
    return fields_touch(s, w->level2, NULL, w->ret, err);
}

/* Does a fieldsV1 object touch one of level1 (at its top), or, with level2,
 * one of level2 inside one of level1? */
static int fields_touch(struct krc_jscan *s, const char *const *level1, const char *const *level2,
                        int *ret, struct krc_error *err)
{
    struct touch_walk w = {level1, level2, ret};

    return krc_jscan_each_key(s, touch_key, &w, err);
}

static const char *const SPEC[] = {"f:spec", NULL};
static const char *const TEMPLATE[] = {"f:template", NULL};
static const char *const JOB_TEMPLATE[] = {"f:jobTemplate", NULL};
static const char *const DATA[] = {"f:data", "f:binaryData", "f:stringData", NULL};

struct managed {
    enum krc_track_touch touch;
    struct krc_track_obj *o;
};

/* One managedFields entry. */
struct manager_entry {
    enum krc_track_touch touch;
    char manager[sizeof(((struct krc_track_obj *)0)->manager)];
    int64_t at;
    int touched;
};

static int manager_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                       struct krc_error *err)
{
    struct manager_entry *m = ctx;

    if (KRC_JSCAN_EQ(k, "manager")) {
        return str_into(s, m->manager, sizeof(m->manager), err);
    }
    if (KRC_JSCAN_EQ(k, "time")) {
        return time_into(s, &m->at, err);
    }
    if (KRC_JSCAN_EQ(k, "fieldsV1")) {
        if (m->touch == KRC_TRACK_TOUCH_DATA) {
            return fields_touch(s, DATA, NULL, &m->touched, err);
        }
        return fields_touch(s, SPEC, m->touch == KRC_TRACK_TOUCH_TEMPLATE ? TEMPLATE : JOB_TEMPLATE,
                            &m->touched, err);
    }
    return skip(s, err);
}

static int managed_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct managed *mf = ctx;
    struct manager_entry m = {.touch = mf->touch};
    int rc = krc_jscan_each_key(s, manager_key, &m, err);

    if (rc < 0) {
        return KRC_EPARSE;
    }
    /* the latest entry that touched it (ties: the later listed) */
    if (m.touched && m.at >= mf->o->manager_at) {
        mf->o->manager_at = m.at;
        snprintf(mf->o->manager, sizeof(mf->o->manager), "%s", m.manager);
    }
    return 0;
}

static int managed_fields(struct krc_jscan *s, enum krc_track_touch touch, struct krc_track_obj *o,
                          struct krc_error *err)
{
    struct managed mf = {touch, o};

    if (touch == KRC_TRACK_TOUCH_NONE) {
        return skip(s, err);
    }
    return krc_jscan_each_item(s, managed_item, &mf, err);
}

/* ---- metadata ----------------------------------------------------------- */

static int label_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                     struct krc_error *err)
{
    struct krc_track_obj *o = ctx;
    char other[64];
    int rc;

    if (KRC_JSCAN_EQ(k, "pod-template-hash")) {
        return str_into(s, o->hash, sizeof(o->hash), err);
    }
    if (KRC_JSCAN_EQ(k, "controller-revision-hash") && o->hash[0] == '\0') {
        rc = str_into(s, other, sizeof(other), err);
        memcpy(o->hash, other, sizeof(o->hash));
        return rc;
    }
    return skip(s, err);
}

static int labels(struct krc_jscan *s, struct krc_track_obj *o, int node, struct krc_error *err)
{
    if (node) {
        return krc_digest_node_labels(s, &o->facts, err);
    }
    return krc_jscan_each_key(s, label_key, o, err);
}

static int annotation_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                          struct krc_error *err)
{
    struct krc_track_obj *o = ctx;
    char v[32];
    char *end = NULL;
    long long n;

    if (!KRC_JSCAN_EQ(k, "deployment.kubernetes.io/revision")) {
        return skip(s, err);
    }
    if (str_into(s, v, sizeof(v), err) < 0) {
        return KRC_EPARSE;
    }
    n = strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) {
        o->revision = n;
    }
    return 0;
}

struct owners {
    struct krc_track_obj *o;
    int have_controller;
};

/* One ownerReference. */
struct owner {
    char kind[sizeof(((struct krc_track_obj *)0)->owner_kind)];
    char name[sizeof(((struct krc_track_obj *)0)->owner_name)];
    int controller;
};

static int owner_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                     struct krc_error *err)
{
    struct owner *ow = ctx;

    if (KRC_JSCAN_EQ(k, "kind")) {
        return str_into(s, ow->kind, sizeof(ow->kind), err);
    }
    if (KRC_JSCAN_EQ(k, "name")) {
        return str_into(s, ow->name, sizeof(ow->name), err);
    }
    if (KRC_JSCAN_EQ(k, "controller") && krc_jscan_peek(s, err) == KRC_JSON_TRUE) {
        ow->controller = 1;
    }
    return skip(s, err);
}

static int owner_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct owners *os = ctx;
    struct krc_track_obj *o = os->o;
    struct owner ow = {"", "", 0};

    if (krc_jscan_each_key(s, owner_key, &ow, err) < 0) {
        return KRC_EPARSE;
    }
    if (!os->have_controller && (ow.controller || o->owner_kind[0] == '\0')) {
        memcpy(o->owner_kind, ow.kind, sizeof(ow.kind));
        memcpy(o->owner_name, ow.name, sizeof(ow.name));
        os->have_controller = ow.controller;
    }
    return 0;
}

struct meta_walk {
    struct krc_track_obj *o;
    enum krc_track_touch touch;
    int node;
};

static int metadata_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                        struct krc_error *err)
{
    struct meta_walk *m = ctx;
    struct krc_track_obj *o = m->o;

    if (KRC_JSCAN_EQ(k, "name")) {
        return str_into(s, o->name, sizeof(o->name), err);
    }
    if (KRC_JSCAN_EQ(k, "namespace")) {
        return str_into(s, o->namespace, sizeof(o->namespace), err);
    }
    if (KRC_JSCAN_EQ(k, "resourceVersion")) {
        return str_into(s, o->resource_version, sizeof(o->resource_version), err);
    }
    if (KRC_JSCAN_EQ(k, "creationTimestamp")) {
        return time_into(s, &o->created, err);
    }
    if (KRC_JSCAN_EQ(k, "generation")) {
        int64_t g = 0;
        int rc = int_into(s, &g, err);
        if (o->revision == 0) {
            o->revision = negate(g); /* kept apart until the end: an annotation wins */
        }
        return rc;
    }
    if (KRC_JSCAN_EQ(k, "labels")) {
        return labels(s, o, m->node, err);
    }
    if (KRC_JSCAN_EQ(k, "annotations")) {
        return krc_jscan_each_key(s, annotation_key, o, err);
    }
    if (KRC_JSCAN_EQ(k, "ownerReferences")) {
        struct owners os = {o, 0};
        return krc_jscan_each_item(s, owner_item, &os, err);
    }
    if (KRC_JSCAN_EQ(k, "managedFields")) {
        return managed_fields(s, m->touch, o, err);
    }
    return skip(s, err);
}

/* ---- spec, status -------------------------------------------------------- */

struct path_walk {
    const char *const *path;
    struct krc_track_obj *o;
};

static int pod_spec_at(struct krc_jscan *s, const char *const *path, struct krc_track_obj *o,
                       struct krc_error *err);

static int path_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                    struct krc_error *err)
{
    struct path_walk *w = ctx;

    if (krc_jscan_str_eq(k, w->path[0], strlen(w->path[0]))) {
        return pod_spec_at(s, w->path + 1, w->o, err);
    }
    return skip(s, err);
}

/* Follow path (object keys) to a PodSpec and digest it. */
static int pod_spec_at(struct krc_jscan *s, const char *const *path, struct krc_track_obj *o,
                       struct krc_error *err)
{
    struct path_walk w = {path, o};

    if (path[0] == NULL) {
        o->has_template = 1;
        return krc_digest_pod_spec(s, &o->facts, err);
    }
    return krc_jscan_each_key(s, path_key, &w, err);
}

struct node_walk {
    int status;
    struct krc_track_obj *o;
};

static int node_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                    struct krc_error *err)
{
    struct node_walk *w = ctx;

    if (!w->status && KRC_JSCAN_EQ(k, "taints")) {
        return krc_digest_node_taints(s, &w->o->facts, err);
    }
    if (w->status && KRC_JSCAN_EQ(k, "nodeInfo")) {
        return krc_digest_node_info(s, &w->o->facts, err);
    }
    if (w->status && KRC_JSCAN_EQ(k, "conditions")) {
        return krc_digest_node_conditions(s, &w->o->facts, err);
    }
    return skip(s, err);
}

static int node_part(struct krc_jscan *s, int status, struct krc_track_obj *o,
                     struct krc_error *err)
{
    struct node_walk w = {status, o};

    return krc_jscan_each_key(s, node_key, &w, err);
}

static int rs_status_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    struct krc_track_obj *o = ctx;
    int64_t v = 0;
    int rc;

    if (!KRC_JSCAN_EQ(k, "readyReplicas")) {
        return skip(s, err);
    }
    rc = int_into(s, &v, err);
    o->ready = v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
    return rc;
}

static int rs_status(struct krc_jscan *s, struct krc_track_obj *o, struct krc_error *err)
{
    if (krc_jscan_peek(s, err) == KRC_JSON_OBJECT) {
        o->ready = 0; /* omitted when zero */
    }
    return krc_jscan_each_key(s, rs_status_key, o, err);
}

static const char *const RS_TEMPLATE[] = {"template", "spec", NULL};
static const char *const CJ_TEMPLATE[] = {"jobTemplate", "spec", "template", "spec", NULL};
static const char *const CR_TEMPLATE[] = {"spec", "template", "spec", NULL};

static enum krc_track_touch touch_of(enum krc_track_resource r)
{
    switch (r) {
    case KRC_TRACK_DEPLOYMENTS:
    case KRC_TRACK_STATEFULSETS:
    case KRC_TRACK_DAEMONSETS:
        return KRC_TRACK_TOUCH_TEMPLATE;
    case KRC_TRACK_CRONJOBS:
        return KRC_TRACK_TOUCH_JOB_TEMPLATE;
    default:
        return KRC_TRACK_TOUCH_NONE;
    }
}

struct top_walk {
    enum krc_track_resource r;
    enum krc_track_touch touch;
    struct krc_track_obj *o;
};

static int top_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                   struct krc_error *err)
{
    struct top_walk *w = ctx;
    enum krc_track_resource r = w->r;
    struct krc_track_obj *o = w->o;
    int node = r == KRC_TRACK_NODES;

    if (KRC_JSCAN_EQ(k, "metadata")) {
        struct meta_walk m = {o, w->touch, node};
        return krc_jscan_each_key(s, metadata_key, &m, err);
    }
    if (KRC_JSCAN_EQ(k, "spec")) {
        if (r == KRC_TRACK_REPLICASETS) {
            return pod_spec_at(s, RS_TEMPLATE, o, err);
        }
        if (r == KRC_TRACK_CRONJOBS) {
            return pod_spec_at(s, CJ_TEMPLATE, o, err);
        }
        if (node) {
            o->has_template = 1;
            return node_part(s, 0, o, err);
        }
    } else if (KRC_JSCAN_EQ(k, "status")) {
        if (r == KRC_TRACK_REPLICASETS) {
            return rs_status(s, o, err);
        }
        if (node) {
            o->has_template = 1;
            return node_part(s, 1, o, err);
        }
    } else if (r == KRC_TRACK_CONTROLLERREVISIONS && KRC_JSCAN_EQ(k, "revision")) {
        int64_t v = 0;
        int rc = int_into(s, &v, err);
        if (v > 0) {
            o->revision = v;
        }
        return rc;
    } else if (r == KRC_TRACK_CONTROLLERREVISIONS && KRC_JSCAN_EQ(k, "data")) {
        return pod_spec_at(s, CR_TEMPLATE, o, err);
    }
    return skip(s, err);
}

static int parse(struct krc_track_obj *o, enum krc_track_resource r, enum krc_track_touch touch,
                 const char *json, size_t len, struct krc_error *err)
{
    struct krc_jscan s;
    struct top_walk w = {r, touch, o};
    int rc;

    obj_reset(o);
    krc_jscan_init(&s, json, len, "object");
    if (krc_jscan_peek(&s, err) != KRC_JSON_OBJECT) {
        return krc_jscan_fail(&s, err, "not an object");
    }
    rc = krc_jscan_each_key(&s, top_key, &w, err);
    if (rc < 0) {
        return rc;
    }
    if (krc_jscan_end(&s, err) < 0) {
        return KRC_EPARSE;
    }
    if (o->revision < 0) {
        o->revision = negate(o->revision); /* the generation: no better revision */
    }
    krc_facts_finish(&o->facts);
    return 0;
}

int krc_track_obj_parse(struct krc_track_obj *o, enum krc_track_resource r, const char *json,
                        size_t len, struct krc_error *err)
{
    return parse(o, r, touch_of(r), json, len, err);
}

int krc_track_obj_parse_meta(struct krc_track_obj *o, enum krc_track_touch touch, const char *json,
                             size_t len, struct krc_error *err)
{
    return parse(o, KRC_TRACK_JOBS, touch, json, len, err);
}
