/* One watched object (Deployment, ReplicaSet, StatefulSet, DaemonSet,
 * ControllerRevision, Job, CronJob, Node) or a ConfigMap/Secret's metadata,
 * scanned once into the few fields change tracking keeps, and the facts of
 * its pod template (or node). Nothing of the JSON is kept. */
#ifndef KRC_TRACK_OBJECT_H
#define KRC_TRACK_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/track/digest.h"
#include "krc/track/track.h"
#include "krc/util/error.h"

/* What a managedFields entry must touch to count (the manager of a change). */
enum krc_track_touch {
    KRC_TRACK_TOUCH_NONE,
    KRC_TRACK_TOUCH_TEMPLATE,     /* f:spec → f:template */
    KRC_TRACK_TOUCH_JOB_TEMPLATE, /* f:spec → f:jobTemplate */
    KRC_TRACK_TOUCH_DATA,         /* f:data, f:binaryData or f:stringData */
};

struct krc_track_obj {
    char namespace[64];
    char name[254];
    char resource_version[64];
    int64_t created;     /* creationTimestamp, 0 absent */
    int64_t revision;    /* deployment.kubernetes.io/revision, a ControllerRevision's
                            revision, else metadata.generation; 0 absent */
    char hash[64];       /* label pod-template-hash, else controller-revision-hash */
    char owner_kind[32]; /* the controller ownerReference (else the first) */
    char owner_name[254];
    char manager[128]; /* the latest managedFields entry that touched what
                          `touch` names; "" none */
    int64_t manager_at;
    int32_t ready;    /* status.readyReplicas, -1 absent */
    int has_template; /* facts hold a pod template (or a node) */
    struct krc_facts facts;
};

void krc_track_obj_init(struct krc_track_obj *o);
void krc_track_obj_cleanup(struct krc_track_obj *o);
/* Scan json as resource r into o (reset first); facts finished (sorted).
 * KRC_EPARSE with a message naming the object as far as it was read. */
int krc_track_obj_parse(struct krc_track_obj *o, enum krc_track_resource r, const char *json,
                        size_t len, struct krc_error *err);
/* The same for a PartialObjectMetadata (or any object: only metadata is
 * read) with the given touch rule. */
int krc_track_obj_parse_meta(struct krc_track_obj *o, enum krc_track_touch touch, const char *json,
                             size_t len, struct krc_error *err);

#endif
