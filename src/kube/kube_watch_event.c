/* A watch event (include/krc/kube/kube_pod.h): its type and its object, a
 * pod read by kube_pod.c's parser (or the metadata of another resource's
 * object), a bookmark's metadata or an ERROR's Status, in one pass whatever
 * the order of "type" and "object". */
#include <string.h>

#include "kube_pod_private.h"

void krc_watch_event_init(struct krc_watch_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    krc_pod_info_init(&ev->pod);
}

void krc_watch_event_cleanup(struct krc_watch_event *ev)
{
    if (ev == NULL) {
        return;
    }
    krc_pod_info_cleanup(&ev->pod);
    memset(ev, 0, sizeof(*ev));
}

static void event_reset(struct krc_watch_event *ev)
{
    ev->type = 0;
    ev->initial_events_end = 0;
    memset(&ev->status, 0, sizeof(ev->status));
    krc_pod_reset(&ev->pod);
}

static int event_type(const struct krc_jscan_str *v)
{
    if (EQ(v, "ADDED")) {
        return KRC_WATCH_ADDED;
    }
    if (EQ(v, "MODIFIED")) {
        return KRC_WATCH_MODIFIED;
    }
    if (EQ(v, "DELETED")) {
        return KRC_WATCH_DELETED;
    }
    if (EQ(v, "BOOKMARK")) {
        return KRC_WATCH_BOOKMARK;
    }
    if (EQ(v, "ERROR")) {
        return KRC_WATCH_ERROR;
    }
    return 0;
}

/* Another resource's object at the scanner position: its metadata, and a
 * name (what names it to its consumer). */
static int parse_meta_object(struct pctx *c)
{
    int rc = krc_pod_parse_object(c, 1);

    if (rc < 0) {
        return rc;
    }
    if (c->p->name == NULL) {
        return missing(c, "metadata.name");
    }
    if (c->p->resource_version == NULL) {
        c->p->resource_version = "";
    }
    return 0;
}

/* generic: the objects are not pods (parse_meta_object) */
static int parse_event_object(struct krc_jscan *s, struct krc_watch_event *ev, int generic,
                              struct krc_error *err)
{
    struct pctx c;
    int rc;

    switch (ev->type) {
    case KRC_WATCH_BOOKMARK:
        krc_pod_ctx_init(&c, s, &ev->pod, "watch event: bookmark", err);
        rc = krc_pod_parse_object(&c, 1);
        if (rc == 0 && ev->pod.resource_version == NULL) {
            rc = missing(&c, "metadata.resourceVersion"); /* a bookmark without one is useless */
        }
        ev->initial_events_end = c.initial_events_end;
        return rc;
    case KRC_WATCH_ERROR:
        krc_pod_ctx_init(&c, s, &ev->pod, "watch event: status", err);
        return krc_pod_parse_status_object(&c, &ev->status);
    default:
        if (generic) {
            krc_pod_ctx_init(&c, s, &ev->pod, "watch event: object", err);
            return parse_meta_object(&c);
        }
        krc_pod_ctx_init(&c, s, &ev->pod, "watch event: pod", err);
        return krc_pod_parse_object(&c, 0);
    }
}

/* A short printable rendering of a scanned string for error messages. */
static void printable(const struct krc_jscan_str *v, char *out, size_t cap)
{
    size_t i;
    size_t o = 0;

    for (i = 0; i < v->raw_len && o + 1 < cap; i++) {
        unsigned char ch = (unsigned char)v->raw[i];
        out[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    out[o] = '\0';
}

static inline int event_parse(const char *json, size_t len, struct krc_watch_event *ret,
                              int generic, struct krc_error *err)
{
    struct krc_jscan s;
    struct krc_jscan_str k;
    struct krc_jscan_str v;
    size_t obj_start = 0;
    unsigned obj_depth = 0;
    int have_type = 0;
    int have_object = 0;
    int deferred = 0;
    int rc;

    event_reset(ret);
    rc = krc_pod_arena_reserve(&ret->pod, len, err);
    if (rc < 0) {
        return rc;
    }
    krc_jscan_init(&s, json, len, "watch event");
    rc = krc_jscan_peek(&s, err);
    if (rc > 0 && rc != KRC_JSON_OBJECT) {
        rc = krc_jscan_fail(&s, err, "expected an object, got %s", krc_jscan_type_name(rc));
    }
    if (rc > 0) {
        rc = krc_jscan_object_begin(&s, err);
    }
    while (rc >= 0 && (rc = krc_jscan_object_next(&s, &k, err)) > 0) {
        if (EQ(&k, "type")) {
            if (have_type) {
                rc = krc_jscan_fail(&s, err, "duplicate key \"type\"");
                break;
            }
            have_type = 1;
            rc = krc_jscan_string(&s, &v, err);
            if (rc < 0) {
                break;
            }
            ret->type = event_type(&v);
            if (ret->type == 0) {
                char shown[40];
                printable(&v, shown, sizeof(shown));
                rc = krc_error_set(err, KRC_EPARSE, "watch event: unknown type \"%s\"", shown);
                break;
            }
        } else if (EQ(&k, "object")) {
            if (have_object) {
                rc = krc_jscan_fail(&s, err, "duplicate key \"object\"");
                break;
            }
            have_object = 1;
            if (krc_jscan_peek(&s, err) == KRC_JSON_NULL) {
                rc = krc_jscan_fail(&s, err, "object is null");
            } else if (have_type) {
                rc = parse_event_object(&s, ret, generic, err);
            } else {
                /* type comes later: validate and remember where the object is */
                obj_depth = s.depth;
                rc = krc_jscan_skip(&s, &obj_start, err);
                deferred = 1;
            }
        } else {
            rc = krc_jscan_skip(&s, NULL, err);
        }
    }
    if (rc >= 0) {
        rc = krc_jscan_end(&s, err);
    }
    if (rc >= 0 && !have_type) {
        rc = krc_error_set(err, KRC_EPARSE, "watch event: type missing");
    }
    if (rc >= 0 && !have_object) {
        rc = krc_error_set(err, KRC_EPARSE, "watch event: object missing");
    }
    if (rc >= 0 && deferred) {
        struct krc_jscan sub;
        krc_jscan_init(&sub, json, len, "watch event");
        sub.pos = obj_start;
        sub.depth = obj_depth;
        rc = parse_event_object(&sub, ret, generic, err);
    }
    if (rc < 0) {
        event_reset(ret);
        return rc;
    }
    return 0;
}

int krc_watch_event_parse(const char *json, size_t len, struct krc_watch_event *ret,
                          struct krc_error *err)
{
    return event_parse(json, len, ret, 0, err);
}

int krc_watch_event_parse_object(const char *json, size_t len, struct krc_watch_event *ret,
                                 struct krc_error *err)
{
    return event_parse(json, len, ret, 1, err);
}

int krc_kube_object_meta_parse(const char *json, size_t len, struct krc_pod_info *ret,
                               struct krc_error *err)
{
    return krc_pod_parse_top(json, len, ret, "object", parse_meta_object, err);
}
