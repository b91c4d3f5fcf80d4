/* The worker pipeline: what happens to one detected restart, in one place.
 *
 *   route (alert/route.h, before any request: the plan) -> collect (the
 *   collector: pod, events, node, previous log; nothing for a muted,
 *   grouped or silenced restart) -> diagnose -> render (alert/render.h:
 *   the messages) -> record the restart and its pending messages in one
 *   store transaction (the outbox) -> deliver (alert/deliver.h: the
 *   destinations' lanes). Each stage is entered once per restart.
 *
 * Everything the pipeline uses comes in through struct krc_pipeline_deps,
 * so that it runs on its own with fakes (tests/unit/daemon/test_pipeline.c).
 * Threads: every worker thread has its own deps (its own Kubernetes client
 * and store connection); the sender, the leader and the status are shared
 * and thread-safe. */
#ifndef KRC_PIPELINE_H
#define KRC_PIPELINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/alert/sender.h"
#include "krc/collect/collector.h"
#include "krc/config/config.h"
#include "krc/detect/restart.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/leader.h"
#include "krc/serve/metrics.h"
#include "krc/store/store.h"
#include "krc/util/error.h"
#include "krc/util/queue.h"
#include "krc/util/redact.h"

/* What the workers report to the health endpoint: written by every worker
 * (and by the daemon at start-up), read by /readyz and /metrics. */
struct krc_pipeline_status {
    atomic_llong store_errors; /* history reads/writes that failed */
    atomic_llong not_posted;   /* restarts with no destination */
    atomic_llong intentional;  /* restarts held back as intentional (KRC_POLICY_INTENTIONAL) */
    atomic_int store_fault;    /* 1 while the history database is unusable */
    /* records kept in the workers' memory because the database refused them
     * (krc_store_unwritten_records; /readyz is unready while any wait) */
    atomic_llong unwritten;
    pthread_mutex_t fault_lock; /* guards store_fault_msg */
    char store_fault_msg[256];
};

void krc_pipeline_status_init(struct krc_pipeline_status *s);
void krc_pipeline_status_cleanup(struct krc_pipeline_status *s);
/* A history fault: counted, and shown on /readyz until a later write
 * succeeds. msg is copied (truncated to fit). */
void krc_pipeline_store_failed(struct krc_pipeline_status *s, const char *msg);
/* Copy the last fault's message into buf (size bytes, always terminated). */
void krc_pipeline_store_fault(struct krc_pipeline_status *s, char *buf, size_t size);

/* History records that could not be written (any write error: disk full,
 * database locked, PostgreSQL unreachable or timing out...):
 * kept in memory, at most KRC_PIPELINE_DEFERRED_MAX records and
 * KRC_PIPELINE_DEFERRED_BYTES bytes (the oldest is dropped, with an error,
 * beyond), and written once the database accepts writes again, without their
 * notifications (those were posted directly). One per worker. */
struct krc_pipeline_deferred;
#define KRC_PIPELINE_DEFERRED_MAX 1024
#define KRC_PIPELINE_DEFERRED_BYTES (32u * 1024u * 1024u)
struct krc_pipeline_deferred *krc_pipeline_deferred_new(void);
void krc_pipeline_deferred_free(struct krc_pipeline_deferred *d);
size_t krc_pipeline_deferred_count(const struct krc_pipeline_deferred *d);

/* The collection step: krc_collect's signature (tests pass fakes). */
typedef int (*krc_pipeline_collect_fn)(struct krc_kube_client *c, const struct krc_restart *r,
                                       const struct krc_collector_options *o,
                                       struct krc_report *rep, struct krc_error *err);
/* The log file of a restart (Web API threads): *ret (caller frees with
 * krc_free; NULL when empty) and *ret_len; < 0 when it could not be had. */
struct krc_track; /* track/track.h: the change tracker */

typedef int (*krc_pipeline_log_file_fn)(struct krc_kube_client *c, const struct krc_restart *r,
                                        char **ret, size_t *ret_len, struct krc_error *err);

struct krc_pipeline_deps {
    /* this worker's own (used by its thread only) */
    struct krc_kube_client *client; /* passed to collect and log_file */
    krc_pipeline_collect_fn collect;
    krc_pipeline_log_file_fn log_file;
    struct krc_store *store; /* this worker's connection; NULL: history unavailable */
    struct krc_pipeline_deferred *deferred; /* NULL: a failed history write is not retried */
    /* shared (borrowed, thread-safe) */
    _Atomic(const struct krc_config *) *config; /* the live configuration (SIGHUP) */
    struct krc_sender *sender;                  /* NULL: nothing is routed or posted */
    const struct krc_redactor *redactor;        /* redacts every report and diagnosis; may be
                                                   NULL (the built-in patterns) */
    struct krc_leader *leader;                  /* NULL without leader election */
    const atomic_int *lost;                     /* 1 once the Lease was lost; may be NULL */
    struct krc_metric *restarts_detected;       /* counter by namespace and cause; may be NULL */
    /* counter by namespace and cause of the restarts whose diagnosis is
     * intentional, paged or not; may be NULL */
    struct krc_metric *restarts_intentional;
    /* counter by namespace and cause of the restarts amended after the
     * kubelet reported a device Unhealthy (detect/dev_health.h); may be NULL */
    struct krc_metric *restarts_amended;
    struct krc_pipeline_status *status;
    /* the change tracker (track/track.h): an incident's first alert says
     * what changed before it (krc_track_describe); NULL: no line */
    struct krc_track *track;
    int64_t (*mono_ms)(void); /* clock for collect_ms; NULL: krc_clock_mono_ms */
    /* krc_store_record_many's seam (tests: a database that answers KRC_EIO);
     * NULL: krc_store_record_many */
    int (*record)(struct krc_store *s, const struct krc_store_restart *rec,
                  const struct krc_store_outbox *msgs, size_t n_msgs, int64_t *ret_restart_id,
                  int64_t *ret_outbox_ids, struct krc_error *err);
};

/* Handle one restart (borrowed: the caller frees it). Never fails: what
 * goes wrong is logged, counted and, for the history, shown on /readyz. */
void krc_pipeline_process(const struct krc_pipeline_deps *p, const struct krc_restart *r);

/* A worker thread's loop: pop restarts from q and process them until q is
 * closed; *queued_pod_bytes drops by each popped restart's pod copy. After
 * idle_release_ms without a restart, the memory a burst used is released.
 * Deferred history records are retried every second while there are any. */
void krc_pipeline_run(const struct krc_pipeline_deps *p, struct krc_queue *q,
                      atomic_size_t *queued_pod_bytes, int idle_release_ms);

#endif
