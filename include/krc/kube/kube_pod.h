/* Pod JSON -> the few fields restart detection needs, and watch-event framing.
 *
 * This is the hot path of the daemon: every watch event (~10 KB pods with
 * managedFields) goes through krc_kube_event_parse(). It scans the JSON once,
 * validates its structure, copies only the fields below and skips the rest
 * without building a tree. Strings point into the struct's own arena, so a
 * parse makes O(1) allocations once the arena has grown to its working size. */
#ifndef KRC_KUBE_POD_H
#define KRC_KUBE_POD_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"

/* One entry of status.containerStatuses or status.initContainerStatuses. */
struct krc_container_info {
    const char *name;
    int is_init;       /* from initContainerStatuses */
    int is_sidecar;    /* init container whose spec has restartPolicy: Always */
    int restart_count; /* restartCount */
    int ready;
    /* state: exactly one of these is set when known */
    int state_running;
    int state_waiting;
    int state_terminated;
    const char *state_reason; /* waiting/terminated reason, or NULL */
    int state_exit_code;      /* when state_terminated */
    /* lastState.terminated, when present */
    int has_last_terminated;
    int last_exit_code;
    int last_signal;               /* 0 when absent */
    const char *last_reason;       /* may be NULL */
    int64_t last_started_at;       /* unix seconds; 0 when absent or null */
    int64_t last_finished_at;      /* unix seconds; 0 when absent or null */
    const char *last_container_id; /* lastState.terminated.containerID, may be NULL */
};

struct krc_pod_init_spec {
    const char *name;
    int sidecar;
};

/* Strings below point into the struct's arena and stay valid until the next
 * parse into the same struct or its cleanup. uid, namespace and name are
 * never NULL after a successful pod parse; resource_version is "" when the
 * object has none. */
struct krc_pod_info {
    const char *uid;
    const char *namespace;
    const char *name;
    const char *resource_version;
    const char *node_name;      /* spec.nodeName, may be NULL */
    const char *phase;          /* status.phase, may be NULL */
    int64_t creation_timestamp; /* unix seconds, 0 when absent */
    int deleting;               /* metadata.deletionTimestamp is set */
    int ignore;                 /* annotation krc.io/ignore is "true" */
    const char *slack_channel;  /* annotation, else label, alert-slack-channel; may be NULL */
    /* The pod object's JSON text inside the parsed input (borrowed from the
     * caller's buffer: valid only as long as that buffer, e.g. during a watch
     * callback). Lets a restart carry the full pod without another GET. */
    const char *raw;
    size_t raw_len;
    size_t n_containers; /* containers first (in status order), then init containers */
    struct krc_container_info *containers;

    /* private: storage behind the pointers above */
    char *arena;
    size_t arena_len;
    size_t arena_cap;
    size_t containers_cap;
    /* private: spec.initContainers[] (name, restartPolicy Always), used to set
     * is_sidecar whatever the order of spec and status in the object */
    struct krc_pod_init_spec *init_specs;
    size_t n_init_specs;
    size_t init_specs_cap;
};

enum krc_watch_event_type {
    KRC_WATCH_ADDED = 1,
    KRC_WATCH_MODIFIED,
    KRC_WATCH_DELETED,
    KRC_WATCH_BOOKMARK,
    KRC_WATCH_ERROR,
};

/* The Status object of a watch ERROR event. */
struct krc_kube_status {
    int code;            /* "code", 0 when absent */
    const char *reason;  /* may be NULL */
    const char *message; /* may be NULL */
};

/* One decoded watch event. For ADDED/MODIFIED/DELETED `pod` is filled; for
 * BOOKMARK only pod.resource_version and `initial_events_end`; for ERROR
 * `status`. */
struct krc_watch_event {
    enum krc_watch_event_type type;
    struct krc_pod_info pod;
    int initial_events_end; /* bookmark annotation k8s.io/initial-events-end: "true" */
    struct krc_kube_status status;
};

/* Embedded init/cleanup; an initialized struct can be reused for many parses. */
void krc_pod_info_init(struct krc_pod_info *p);
void krc_pod_info_cleanup(struct krc_pod_info *p);
void krc_watch_event_init(struct krc_watch_event *ev);
void krc_watch_event_cleanup(struct krc_watch_event *ev);

/* Parse one Pod object (as found in a list's items[] or a GET). Previous
 * content of `ret` is discarded. KRC_EPARSE with a message naming the
 * problem (offset, field) on malformed JSON or a missing metadata.uid. */
int krc_pod_info_parse(const char *json, size_t len, struct krc_pod_info *ret,
                       struct krc_error *err);

/* Parse one watch event line {"type":...,"object":...} (keys in any order).
 * KRC_EPARSE on malformed JSON, an unknown type, a missing or null object,
 * a duplicate "type"/"object" key, or a pod without uid/name/namespace.
 * A BOOKMARK needs only metadata.resourceVersion (spec/status are skipped,
 * not validated as a pod beyond JSON syntax). On failure `ret` is left
 * empty (type 0). JSON null counts as absent for every field. */
int krc_watch_event_parse(const char *json, size_t len, struct krc_watch_event *ret,
                          struct krc_error *err);

/* The same for a watch of another resource (a ReplicaSet, a Node, a
 * PartialObjectMetadata, ...): an ADDED/MODIFIED/DELETED object is read as
 * krc_kube_object_meta_parse reads it (into `pod`); bookmarks and ERRORs as
 * above. */
int krc_watch_event_parse_object(const char *json, size_t len, struct krc_watch_event *ret,
                                 struct krc_error *err);

/* Another resource's object (a list item, a GET): its metadata only into
 * `ret` (name, namespace, uid, resourceVersion ("" when absent),
 * creationTimestamp, deleting; raw/raw_len the object's text), the rest
 * validated as JSON and skipped. KRC_EPARSE on malformed JSON, a value
 * that is not an object, or no metadata.name; on failure `ret` is left
 * empty. */
int krc_kube_object_meta_parse(const char *json, size_t len, struct krc_pod_info *ret,
                               struct krc_error *err);

/* What the first bytes of a watch event line or a pod (a list item) say
 * about the object, to name one that is skipped (too large to buffer, or
 * not decodable). The text may be cut anywhere: it is scanned as JSON until
 * its first problem or end, at most KRC_KUBE_IDENT_SCAN bytes of it. A field
 * is "" when it was not found, or when its value is not printable ASCII
 * (no spaces) that fits. The API server writes metadata.name, namespace, uid
 * and resourceVersion before labels, annotations, managedFields, spec and
 * status, so a short head names a pod of any size. */
#define KRC_KUBE_IDENT_SCAN 65536

struct krc_kube_ident {
    char type[16];              /* a watch event's "type" */
    char namespace[64];         /* object.metadata.namespace (a list item: metadata...) */
    char name[254];             /* metadata.name */
    char uid[64];               /* metadata.uid */
    char resource_version[128]; /* metadata.resourceVersion */
};

void krc_kube_ident_scan(const char *text, size_t len, struct krc_kube_ident *ret);

/* The one sidecar rule of both pod parsers (this one and kube_parse's): an
 * init container whose spec says restartPolicy: Always (KEP-753).
 * `restart_policy` is the spec's value, NULL when absent. */
int krc_kube_is_sidecar(int is_init, const char *restart_policy);

#endif
