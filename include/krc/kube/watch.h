/* The list-then-watch loop for pods, or for any other resource (apps/v1
 * replicasets, v1 nodes, ...; see krc_watch_options.resource), one namespace
 * scope (or the whole cluster) per loop.
 *
 * Sync: a streaming list (WATCH with sendInitialEvents=true,
 * resourceVersionMatch=NotOlderThan, ending at the bookmark annotated
 * k8s.io/initial-events-end) where the server supports it, otherwise a
 * paginated LIST (limit/continue) whose body is framed item by item, so the
 * whole list is never held in memory. Then WATCH from the last
 * resourceVersion with bookmarks and a jittered timeoutSeconds.
 *
 * Recovery: 410 Gone/Expired (in-band ERROR event or HTTP status) → relist;
 * transport errors and 5xx → exponential backoff with jitter (capped at 30 s)
 * then resume from the last resourceVersion; 429 → wait Retry-After; a stream
 * silent for longer than idle_timeout_ms → dropped and resumed.
 *
 * One bad object never stops the watch: an event line or list item over
 * max_line (discarded as it arrives, only its first 64 KiB kept to name it)
 * or one that does not decode (bad JSON, wrong shape) is skipped with a
 * warning naming it (event type, namespace/name, size, as far as its first
 * bytes say) and counted, and the stream or list goes on with the next one.
 * The skipped pod stays unknown to krc until a version of it that fits
 * arrives.
 *
 * Other resources: the same loop (streaming list, pagination, 410, backoff,
 * bookmarks, skipped objects, stats, idle timeout), with each object handed
 * to the handler's `object` callback as its own JSON text. An object is
 * decodable when it is a JSON object whose metadata has a name (what the
 * loop reads of it: metadata only); its metadata.resourceVersion is tracked
 * as a pod's is. */
#ifndef KRC_WATCH_H
#define KRC_WATCH_H

#include <stdatomic.h>
#include <stddef.h>

#include "krc/util/error.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/kube_pod.h"

/* Counters, updated atomically by the loop; read them from any thread. */
struct krc_watch_stats {
    atomic_llong events_added;
    atomic_llong events_modified;
    atomic_llong events_deleted;
    atomic_llong events_bookmark;
    atomic_llong events_error;
    atomic_llong skipped_oversized;   /* objects skipped: over max_line */
    atomic_llong skipped_undecodable; /* objects skipped: bad JSON, not a pod/object or event */
    atomic_llong malformed_lists;     /* LIST responses abandoned: the body was not a list */
    atomic_llong relists;             /* full syncs after the first */
    atomic_llong reconnects;          /* watch streams re-established */
    atomic_llong expired;             /* 410 Gone/Expired seen */
    atomic_llong silent_streams;      /* streams dropped for silence */
    atomic_llong request_errors;      /* failed list/watch requests */
    atomic_llong bytes;               /* body bytes received */
    atomic_int synced;                /* 1 once the current sync completed */
    atomic_llong last_sync_mono_ms;
    /* last delivery: an event or bookmark decoded, a list item or a whole
     * list read (not a skipped object, not a bare chunk of bytes) */
    atomic_llong last_ok_mono_ms;
    atomic_llong last_error_mono_ms; /* last failed list/watch request */
    atomic_llong heartbeat_mono_ms;  /* the loop is alive: each data chunk and iteration */
};

struct krc_watch_handler {
    /* A full sync starts (list or streaming list). */
    void (*sync_begin)(void *userdata);
    /* A pod (resource NULL): list items and initial events arrive as
     * KRC_WATCH_ADDED. */
    void (*pod)(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *userdata);
    /* The sync completed: objects not seen since sync_begin are gone. */
    void (*sync_end)(void *userdata);
    void *userdata;
    /* An object of another resource (resource not NULL; called instead of
     * `pod`, which is then not used; this one is not read for pods): its
     * own JSON text (the event's "object" or the list's item, not the event
     * wrapper), len bytes, not NUL-terminated, valid during the call only.
     * Types as for `pod`. */
    void (*object)(enum krc_watch_event_type type, const char *json, size_t len, void *userdata);
};

struct krc_watch_options {
    /* NULL: pods (/api/v1/pods). Else the path after the API root and before
     * an optional namespace, without a leading '/': "apis/apps/v1/replicasets",
     * "api/v1/nodes". With a namespace the loop requests
     * /<group path>/namespaces/<namespace>/<plural> (namespaced resources
     * only). */
    const char *resource;
    /* Ask for metadata only: LIST with Accept
     * application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, WATCH
     * (and the streaming list) with ...;as=PartialObjectMetadata;...: the
     * objects are PartialObjectMetadata (apiVersion meta.k8s.io/v1). No
     * fallback to full objects is offered: a server that cannot answer so
     * fails the request, logged and retried with backoff like any failure.
     * Other resources only. */
    int metadata_only;
    const char *namespace;      /* NULL: all namespaces */
    const char *label_selector; /* server-side labelSelector, or NULL */
    long idle_timeout_ms;       /* drop a stream silent for this long (default 180000) */
    int page_size;              /* LIST limit (default 500) */
    int streaming_list;         /* try sendInitialEvents first (default 1) */
    size_t max_line;            /* hard cap on one watch line / list item (default 8 MiB) */
    int timeout_min_s;          /* watch timeoutSeconds jitter range [min, max) (300, 600) */
    int timeout_max_s;
    long backoff_initial_ms;       /* default 800 */
    long backoff_max_ms;           /* default 30000 */
    const atomic_int *cancel;      /* loop ends when *cancel becomes non-zero */
    struct krc_watch_stats *stats; /* optional */
};

void krc_watch_options_defaults(struct krc_watch_options *o);

/* Run until *cancel. Returns 0 on cancel. Errors are logged and retried;
 * nothing but an allocation failure or a bad option at set-up ends the loop
 * early (KRC_EINVAL, named in err: a resource that is not such a path, a
 * resource without an `object` callback, metadata_only for pods). */
int krc_watch_run(struct krc_kube_client *client, const struct krc_watch_options *opts,
                  const struct krc_watch_handler *handler, struct krc_error *err);

#endif
