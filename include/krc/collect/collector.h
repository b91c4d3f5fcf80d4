/* Collection: everything about one restart that the analyser and the alert
 * need, gathered from the API in parallel (each request with its own
 * timeout): the pod (from the watch, else a GET), the pod's events (by
 * involvedObject.uid), the node and the node's warning events, and the
 * previous container's last log lines. A piece that cannot be had (no
 * previous log, a deleted pod, a gone node, a 403) becomes a note in the
 * report, never a failure of the whole collection. */
#ifndef KRC_COLLECTOR_H
#define KRC_COLLECTOR_H

#include "krc/util/error.h"
#include "krc/kube/kube_client.h"
#include "krc/util/logtail.h"
#include "krc/model/report.h"
#include "krc/detect/restart.h"
#include "krc/track/track.h"

/* The previous log: the last `tail_lines` lines are requested with
 * limitBytes = transfer_limit_bytes + 1 (the API server counts limitBytes from
 * the start of that window, so it only bounds the transfer) and streamed
 * through a krc_logtail that keeps their last `limit_bytes` bytes; a window
 * longer than transfer_limit_bytes is not read further. */
struct krc_collector_options {
    int tail_lines;            /* previous log: tailLines (default 50) */
    long limit_bytes;          /* previous log: bytes kept, the end (default 65536) */
    long transfer_limit_bytes; /* previous log: bytes read at most (default 4 MiB; at
                                  least limit_bytes) */
    int timestamps;            /* previous log with timestamps (default 1) */
    int fetch_logs;            /* default 1 */
    int fetch_events;          /* default 1 */
    int fetch_node;            /* default 1 */
    /* trackConfigChanges: after the rest, the metadata of the ConfigMaps and
     * Secrets the pod references, noted in `track` (collect/config_changes.h).
     * Default 0 / NULL: no such request. */
    int track_configs;
    struct krc_track *track; /* borrowed, thread-safe */
};

void krc_collector_options_defaults(struct krc_collector_options *o);

/* Fill `rep` (initialized, empty) for restart `r`. Returns 0 whenever a
 * report could be built, even with notes about missing parts; KRC_ENOMEM
 * otherwise. `c` is used by the calling thread only. */
int krc_collect(struct krc_kube_client *c, const struct krc_restart *r,
                const struct krc_collector_options *o, struct krc_report *rep,
                struct krc_error *err);

/* The pod and the container a collection is about (borrowed strings). */
struct krc_collect_target {
    const char *namespace;
    const char *pod;
    const char *uid;
    const char *container; /* whose previous log is read */
};

/* What krc_collect does after the pod, for a report whose pod part is
 * already filled (explain_pod: the pod the API answered, parsed once by the
 * caller): the pod's events, the node and its warning events and
 * t->container's previous log, in parallel; failures become notes. Returns
 * 0 whenever the report could be completed, KRC_ENOMEM otherwise. */
int krc_collect_around_pod(struct krc_kube_client *c, const struct krc_collect_target *t,
                           const struct krc_collector_options *o, struct krc_report *rep,
                           struct krc_error *err);

/* Web API threads get the previous log as a file, not only the tail: its
 * last KRC_COLLECT_LOG_FILE_KEEP bytes, reading at most
 * KRC_COLLECT_LOG_FILE_CAP (the kubelet rotates container logs at 10 MiB by
 * default). */
#define KRC_COLLECT_LOG_FILE_KEEP (4u * 1024u * 1024u)
#define KRC_COLLECT_LOG_FILE_CAP (16L * 1024L * 1024L)

/* The end of the whole previous log of r's container, as a log file: no
 * tailLines, limitBytes = KRC_COLLECT_LOG_FILE_CAP + 1, streamed through a
 * krc_logtail that keeps the last KRC_COLLECT_LOG_FILE_KEEP bytes (what was
 * cut is logged at debug). *ret (caller frees with krc_free; NULL when
 * empty) and *ret_len. Errors: the request's (a non-2xx status gives
 * KRC_EHTTP or the translated code), KRC_ETOOBIG (path), KRC_ENOMEM. */
int krc_collect_log_file(struct krc_kube_client *c, const struct krc_restart *r, char **ret,
                         size_t *ret_len, struct krc_error *err);

/* Fill `rep` from the restart record alone (no API request): used for
 * restarts that are muted or grouped into a storm summary, which are
 * recorded and counted but do not cost any request. */
int krc_collect_minimal(const struct krc_restart *r, struct krc_report *rep, struct krc_error *err);

#endif
