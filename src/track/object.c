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

/* Enter an object value: 1 inside, 0 it was another type (skipped). */
static int enter(struct krc_jscan *s, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    if (t < 0) {
        return KRC_EPARSE;
    }
    if (t != KRC_JSON_OBJECT) {
        return skip(s, err);
    }
    return krc_jscan_object_begin(s, err) < 0 ? KRC_EPARSE : 1;
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

/* Does a fieldsV1 object touch one of level1 (at its top), or, with level2,
 * one of level2 inside one of level1? */
static int fields_touch(struct krc_jscan *s, const char *const *level1, const char *const *level2,
                        int *ret, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = enter(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        if (!key_in(&k, level1)) {
            rc = skip(s, err);
        } else if (level2 == NULL) {
            *ret = 1;
            rc = skip(s, err);
        } else {
            rc = fields_touch(s, level2, NULL, ret, err);
        }
        if (rc < 0) {
            return KRC_EPARSE;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static const char *const SPEC[] = {"f:spec", NULL};
static const char *const TEMPLATE[] = {"f:template", NULL};
static const char *const JOB_TEMPLATE[] = {"f:jobTemplate", NULL};
static const char *const DATA[] = {"f:data", "f:binaryData", "f:stringData", NULL};

static int managed_fields(struct krc_jscan *s, enum krc_track_touch touch, struct krc_track_obj *o,
                          struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    int rc;

    if (t < 0) {
        return KRC_EPARSE;
    }
    if (t != KRC_JSON_ARRAY || touch == KRC_TRACK_TOUCH_NONE) {
        return skip(s, err);
    }
    if (krc_jscan_array_begin(s, err) < 0) {
        return KRC_EPARSE;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        struct krc_jscan_str k;
        char manager[sizeof(o->manager)] = "";
        int64_t at = 0;
        int touched = 0;
        int r2 = enter(s, err);
        while (r2 == 1 && (r2 = krc_jscan_object_next(s, &k, err)) == 1) {
            if (KRC_JSCAN_EQ(&k, "manager")) {
                r2 = str_into(s, manager, sizeof(manager), err);
            } else if (KRC_JSCAN_EQ(&k, "time")) {
                r2 = time_into(s, &at, err);
            } else if (KRC_JSCAN_EQ(&k, "fieldsV1")) {
                if (touch == KRC_TRACK_TOUCH_DATA) {
                    r2 = fields_touch(s, DATA, NULL, &touched, err);
                } else {
                    r2 = fields_touch(s, SPEC,
                                      touch == KRC_TRACK_TOUCH_TEMPLATE ? TEMPLATE : JOB_TEMPLATE,
                                      &touched, err);
                }
            } else {
                r2 = skip(s, err);
            }
            if (r2 < 0) {
                return KRC_EPARSE;
            }
            r2 = 1;
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
        /* the latest entry that touched it (ties: the later listed) */
        if (touched && at >= o->manager_at) {
            o->manager_at = at;
            snprintf(o->manager, sizeof(o->manager), "%s", manager);
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

/* ---- metadata ----------------------------------------------------------- */

static int labels(struct krc_jscan *s, struct krc_track_obj *o, int node, struct krc_error *err)
{
    struct krc_jscan_str k;
    char other[64];
    int rc;

    if (node) {
        return krc_digest_node_labels(s, &o->facts, err);
    }
    rc = enter(s, err);
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        if (KRC_JSCAN_EQ(&k, "pod-template-hash")) {
            rc = str_into(s, o->hash, sizeof(o->hash), err);
        } else if (KRC_JSCAN_EQ(&k, "controller-revision-hash") && o->hash[0] == '\0') {
            rc = str_into(s, other, sizeof(other), err);
            memcpy(o->hash, other, sizeof(o->hash));
        } else {
            rc = skip(s, err);
        }
        if (rc < 0) {
            return KRC_EPARSE;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int annotations(struct krc_jscan *s, struct krc_track_obj *o, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = enter(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        if (KRC_JSCAN_EQ(&k, "deployment.kubernetes.io/revision")) {
            char v[32];
            char *end = NULL;
            long long n;
            if (str_into(s, v, sizeof(v), err) < 0) {
                return KRC_EPARSE;
            }
            n = strtoll(v, &end, 10);
            if (end != v && *end == '\0' && n > 0) {
                o->revision = n;
            }
        } else if (skip(s, err) < 0) {
            return KRC_EPARSE;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int owners(struct krc_jscan *s, struct krc_track_obj *o, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    int have_controller = 0;
    int rc;

    if (t < 0) {
        return KRC_EPARSE;
    }
    if (t != KRC_JSON_ARRAY) {
        return skip(s, err);
    }
    if (krc_jscan_array_begin(s, err) < 0) {
        return KRC_EPARSE;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        struct krc_jscan_str k;
        char kind[sizeof(o->owner_kind)] = "";
        char name[sizeof(o->owner_name)] = "";
        int controller = 0;
        int r2 = enter(s, err);
        while (r2 == 1 && (r2 = krc_jscan_object_next(s, &k, err)) == 1) {
            if (KRC_JSCAN_EQ(&k, "kind")) {
                r2 = str_into(s, kind, sizeof(kind), err);
            } else if (KRC_JSCAN_EQ(&k, "name")) {
                r2 = str_into(s, name, sizeof(name), err);
            } else if (KRC_JSCAN_EQ(&k, "controller") && krc_jscan_peek(s, err) == KRC_JSON_TRUE) {
                controller = 1;
                r2 = skip(s, err);
            } else {
                r2 = skip(s, err);
            }
            if (r2 < 0) {
                return KRC_EPARSE;
            }
            r2 = 1;
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
        if (!have_controller && (controller || o->owner_kind[0] == '\0')) {
            memcpy(o->owner_kind, kind, sizeof(kind));
            memcpy(o->owner_name, name, sizeof(name));
            have_controller = controller;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int metadata(struct krc_jscan *s, struct krc_track_obj *o, enum krc_track_touch touch,
                    int node, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = enter(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (KRC_JSCAN_EQ(&k, "name")) {
            r2 = str_into(s, o->name, sizeof(o->name), err);
        } else if (KRC_JSCAN_EQ(&k, "namespace")) {
            r2 = str_into(s, o->namespace, sizeof(o->namespace), err);
        } else if (KRC_JSCAN_EQ(&k, "resourceVersion")) {
            r2 = str_into(s, o->resource_version, sizeof(o->resource_version), err);
        } else if (KRC_JSCAN_EQ(&k, "creationTimestamp")) {
            r2 = time_into(s, &o->created, err);
        } else if (KRC_JSCAN_EQ(&k, "generation")) {
            int64_t g = 0;
            r2 = int_into(s, &g, err);
            if (o->revision == 0) {
                o->revision = -g; /* kept apart until the end: an annotation wins */
            }
        } else if (KRC_JSCAN_EQ(&k, "labels")) {
            r2 = labels(s, o, node, err);
        } else if (KRC_JSCAN_EQ(&k, "annotations")) {
            r2 = annotations(s, o, err);
        } else if (KRC_JSCAN_EQ(&k, "ownerReferences")) {
            r2 = owners(s, o, err);
        } else if (KRC_JSCAN_EQ(&k, "managedFields")) {
            r2 = managed_fields(s, touch, o, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

/* ---- spec, status -------------------------------------------------------- */

/* Follow path (object keys) to a PodSpec and digest it. */
static int pod_spec_at(struct krc_jscan *s, const char *const *path, struct krc_track_obj *o,
                       struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc;

    if (path[0] == NULL) {
        o->has_template = 1;
        return krc_digest_pod_spec(s, &o->facts, err);
    }
    rc = enter(s, err);
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2 = krc_jscan_str_eq(&k, path[0], strlen(path[0])) ? pod_spec_at(s, path + 1, o, err)
                                                                : skip(s, err);
        if (r2 < 0) {
            return r2;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int node_part(struct krc_jscan *s, int status, struct krc_track_obj *o,
                     struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = enter(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (!status && KRC_JSCAN_EQ(&k, "taints")) {
            r2 = krc_digest_node_taints(s, &o->facts, err);
        } else if (status && KRC_JSCAN_EQ(&k, "nodeInfo")) {
            r2 = krc_digest_node_info(s, &o->facts, err);
        } else if (status && KRC_JSCAN_EQ(&k, "conditions")) {
            r2 = krc_digest_node_conditions(s, &o->facts, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int rs_status(struct krc_jscan *s, struct krc_track_obj *o, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = enter(s, err);

    if (rc <= 0) {
        return rc;
    }
    o->ready = 0; /* omitted when zero */
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (KRC_JSCAN_EQ(&k, "readyReplicas")) {
            int64_t v = 0;
            r2 = int_into(s, &v, err);
            o->ready = v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
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

static int top_member(struct krc_jscan *s, const struct krc_jscan_str *k, enum krc_track_resource r,
                      enum krc_track_touch touch, struct krc_track_obj *o, struct krc_error *err)
{
    int node = r == KRC_TRACK_NODES;

    if (KRC_JSCAN_EQ(k, "metadata")) {
        return metadata(s, o, touch, node, err);
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
    struct krc_jscan_str k;
    int rc;

    obj_reset(o);
    krc_jscan_init(&s, json, len, "object");
    if (krc_jscan_peek(&s, err) != KRC_JSON_OBJECT) {
        return krc_jscan_fail(&s, err, "not an object");
    }
    if (krc_jscan_object_begin(&s, err) < 0) {
        return KRC_EPARSE;
    }
    while ((rc = krc_jscan_object_next(&s, &k, err)) == 1) {
        rc = top_member(&s, &k, r, touch, o, err);
        if (rc < 0) {
            return rc;
        }
    }
    if (rc < 0 || krc_jscan_end(&s, err) < 0) {
        return KRC_EPARSE;
    }
    if (o->revision < 0) {
        o->revision = -o->revision; /* the generation: no better revision */
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
