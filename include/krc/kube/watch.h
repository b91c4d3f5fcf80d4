/* The list-then-watch loop for pods, one namespace scope (or the whole
 * cluster) per loop.
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
 * arrives. */
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
    atomic_llong skipped_undecodable; /* objects skipped: bad JSON or not a pod/event */
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
    /* An object: list items and initial events arrive as KRC_WATCH_ADDED. */
    void (*pod)(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *userdata);
    /* The sync completed: pods not seen since sync_begin are gone. */
    void (*sync_end)(void *userdata);
    void *userdata;
};

struct krc_watch_options {
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
 * nothing but an allocation failure at set-up ends the loop early. */
int krc_watch_run(struct krc_kube_client *client, const struct krc_watch_options *opts,
                  const struct krc_watch_handler *handler, struct krc_error *err);

#endif
