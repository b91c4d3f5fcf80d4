/* The sender's private state, shared by its files: sender.c (set-up,
 * reload), route.c (the route stage), render.c (the formats' glue),
 * deliver.c (lanes, sending) and deliver_outbox.c (resume, delivered marks,
 * claims). Not a public header: nothing outside src/alert/ includes it but
 * tests/unit/alert/test_incident_end.c, which drives the incidents' end directly. */
#ifndef KRC_SENDER_INT_H
#define KRC_SENDER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/alert/dest.h"
#include "krc/alert/incident.h"
#include "krc/alert/policy.h"
#include "krc/alert/recovery.h"
#include "krc/alert/sender.h"
#include "krc/alert/sink.h"
#include "krc/store/store.h"
#include "krc/util/mem.h"

#define MAX_DESTS 64
#define MAX_LANES 64
#define LANE_RETRY_MS 10000 /* a lane whose sink could not be built tries again */
#define MAX_MUTES 4096
#define MAX_GROUPS 64
#define MAX_EXAMPLES 8
#define MAX_RECOVERY 1024
/* Open incidents held (alert/incident.h): the one whose last restart is oldest is forgotten */
#define MAX_INCIDENTS 1024
/* Sandbox changes alerted (krc_route_sandbox_alerted): the newest kept. */
#define MAX_SANDBOX_MARKS 256
/* Delivered marks that failed, kept for a retry (see struct unmarked). */
#define MAX_UNMARKED 64
#define UNMARKED_FIRST_RETRY_MS 1000
#define UNMARKED_MAX_DELAY_MS 60000
#define UNMARKED_MAX_TRIES 12

enum item_kind { ITEM_ALERT, ITEM_REPLY, ITEM_SUMMARY, ITEM_RECOVERED, ITEM_WITHDRAWN };

struct dest;
struct lane;

/* The messages of one restart to its several destinations: the restart is
 * published as handled (on_posted) once every one of them is settled
 * (accepted, given up for good, or grouped into a storm summary) and at
 * least one was accepted, not when the first is. Shared by the messages,
 * freed with the last reference. */
struct siblings {
    atomic_int pending; /* messages not settled yet */
    atomic_int sent;    /* messages accepted */
    atomic_int refs;
};

static inline void krc_siblings_unref(struct siblings *g)
{
    if (g != NULL && atomic_fetch_sub(&g->refs, 1) == 1) {
        krc_free(g);
    }
}

/* One message of g settled: 1 when it was the last and one was accepted. */
static inline int krc_siblings_settle(struct siblings *g, int sent)
{
    if (sent) {
        atomic_fetch_add(&g->sent, 1);
    }
    return atomic_fetch_sub(&g->pending, 1) == 1 && atomic_load(&g->sent) > 0;
}

/* A message waiting for the sender. */
struct item {
    enum item_kind kind;
    struct dest *dest;
    char pod_key[512];              /* namespace/pod */
    char *body;                     /* formatted JSON, thread_ts added at send time for replies */
    char *fallback;                 /* text-only JSON, or NULL */
    char what[300];                 /* for logs: "alert for ns/pod container c (cause)" */
    int64_t outbox_id;              /* store row, 0 when not stored */
    int64_t detected_mono_ms;       /* 0: unknown (resumed from the outbox) */
    int64_t restart_id;             /* store row of the restart, 0 when unknown */
    struct krc_restart_ident ident; /* the restart's; empty when unknown (resumed) */
    struct siblings *group;         /* the restart's other destinations' messages, or NULL */
    int64_t not_before_ms;          /* retry time after a transient failure */
    struct krc_report *rep;
    struct krc_diagnosis *diag;
    char *full_log;
    size_t full_log_len;
    uint64_t incident; /* an incident's first alert: its handle (settled: the end may come) */
    struct item *next;
};

/* A pod's sandbox change that was alerted: its other containers' restarts
 * of the same change are not (krc_route_sandbox_alerted). */
struct sandbox_mark {
    char uid[KRC_RESTART_IDENT_UID_MAX];
    char container[KRC_RESTART_IDENT_CONTAINER_MAX]; /* the one alerted */
    int64_t stopped_at;                              /* its stop (unix s) */
};

struct group {
    char key[256];
    long count;
    char condition[128]; /* by_node: the node's failure a report saw ("NotReady"), or "" */
};

struct example {
    char namespace[128];
    char pod[256];
    char container[128];
    char cause[48];
    char node[128];
    int restart_count;
};

/* A delivery target with its own thread, queue, sink, pacing and retry
 * state: the lane of a destination's target (struct krc_dest_target: a
 * webhook URL, the Web API, "dest:NAME"). One lane's 429 or outage never
 * holds another's messages. The queues are under the sender's lock. */
struct lane {
    struct krc_sender *n;
    char key[1024];                      /* the target's lane */
    const char *url;                     /* the target's endpoint (borrowed), or NULL */
    const struct krc_sink_ops *ops;      /* the lane's kind of sink */
    const struct krc_destination *named; /* the destination (declared or implicit) */
    struct item *head;
    struct item *tail;
    size_t n_items;
    pthread_cond_t wake;
    pthread_t thread;
    int started;             /* the thread runs (join it) */
    struct krc_sink *sink;   /* the lane thread's */
    struct krc_store *store; /* the lane thread's connection, or NULL */
    atomic_llong heartbeat_ms;
};

/* Per destination: the storm guard and the summary being built. */
struct dest {
    struct lane *lane;
    char *channel;
    char key[1024];
    char store_key[64]; /* the target's outbox key ("dest:NAME", ...): never a URL */
    char channel_buf[256];
    const struct krc_sink_ops *ops;      /* formats for this destination */
    const struct krc_destination *named; /* the destination (declared or implicit) */
    struct krc_policy_storm storm;
    long grouped_total; /* in the current summary */
    long storm_total;   /* since the storm began */
    struct group by_node[MAX_GROUPS];
    size_t n_by_node;
    struct group by_workload[MAX_GROUPS];
    size_t n_by_workload;
    struct group by_cause[MAX_GROUPS];
    size_t n_by_cause;
    struct example examples[MAX_EXAMPLES];
    size_t n_examples;
};

/* A message Slack accepted whose "delivered" mark did not reach the
 * database (locked past the busy timeout, disk full). It is not posted
 * again: the fact is kept here and retried with backoff, and it is in the
 * delivery journal (krc_store_journal_delivered) for the next start. */
struct unmarked {
    int64_t outbox_id;
    char ts[64];
    int64_t next_ms; /* mono time of the next try */
    int64_t delay_ms;
    int tries;
    int journaled; /* the journal has it: memory may give up */
};

/* A destination's outcomes (struct krc_sender_dest_stat), written by its
 * lanes' threads. */
struct dest_stat {
    const struct krc_destination *named;
    atomic_llong last_success_s;
    atomic_llong last_failure_s;
    atomic_llong failures[KRC_DEST_N_REASONS];
    atomic_llong events[KRC_KUBE_EVENT_N_RESULTS];
};

#define MAX_DEST_STATS (MAX_DESTS + 2)

struct krc_sender {
    struct krc_sender_options o;
    struct krc_sender_stats stats;
    struct krc_sink_options sink_options;
    /* the Go tool's settings as a destination (o.slack_env, else own_env made
     * from the options), routed by the policy's rules */
    const struct krc_destination *env;
    struct krc_destination own_env;
    const struct krc_sink_ops *ops; /* env's sink (o.sink_ops, else its kind's) */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the main sender loop */
    size_t n_items;      /* in all lanes */
    struct lane lanes[MAX_LANES];
    size_t n_lanes;
    int running; /* krc_sender_run started: lanes start their threads */
    struct dest dests[MAX_DESTS];
    size_t n_dests;
    struct krc_policy pol;          /* the policy's view of o */
    struct krc_policy_mutes mutes;  /* the threads' parents by thread key (ts, channel) */
    struct krc_incidents incidents; /* the open incidents (under lock) */
    struct sandbox_mark sandbox[MAX_SANDBOX_MARKS]; /* under lock */
    size_t n_sandbox;
    struct krc_recovery *recovery; /* what the watch saw of awaited pods: incidents end from it */
    int threads;                   /* env's kind posts threads (krc_dest_threads) */
    /* the named destinations krc started with: a reload changes the routes (and the
     * indices they hold into its own list) but not the destinations, which keep their
     * lanes and settings until krc is restarted */
    const struct krc_destination *fixed;
    size_t n_fixed;
    /* kubernetesEvents with no declared kubernetes-event destination: the
     * implicit one, which every restart goes to whatever the routes */
    struct krc_destination implicit_event;
    int has_implicit_event;
    struct dest_stat dstats[MAX_DEST_STATS]; /* fixed at krc_sender_new */
    size_t n_dstats;
    atomic_int abort;          /* set by krc_sender_abort: no new message, no waiting */
    atomic_int abort_hard;     /* krc_sender_abort_transfers: the one in flight too */
    struct krc_store *store;   /* the main sender thread's connection, or NULL */
    pthread_mutex_t mark_lock; /* the unmarked table and the delivery journal */
    struct unmarked unmarked[MAX_UNMARKED];
    size_t n_unmarked;
    int journal_kept; /* the journal holds a fact memory gave up */
    atomic_llong heartbeat_ms;
    /* krc_sender_set_fence_token: claim before each POST (shared outbox) */
    atomic_int fencing;
    atomic_llong fence_token;
    /* the smallest outbox id this process wrote or was given by a worker
     * (0: none yet): a resume skips rows from there on, which are queued
     * already (a late resume, after the database came back) */
    atomic_llong first_own_outbox_id;
};

/* A Kubernetes Event destination (declared or implicit). */
static inline int krc_dest_is_event(const struct dest *d)
{
    return d->named != NULL && krc_dest_is(d->named, "kubernetes-event");
}

/* --- route.c --------------------------------------------------------------- */

/* The destination of target t of destination nd, made when new. Caller
 * holds the lock. */
struct dest *krc_route_dest_get(struct krc_sender *n, const struct krc_destination *nd,
                                const struct krc_dest_target *t);
/* The running destination of that name, or NULL. */
const struct krc_destination *krc_route_fixed_named(const struct krc_sender *n, const char *name);
/* Count a restart into d's storm summary (rep, diag or r may be NULL).
 * Caller holds the lock. */
void krc_route_group(struct dest *d, const struct krc_report *rep, const struct krc_diagnosis *diag,
                     const struct krc_restart *r);

/* --- render.c -------------------------------------------------------------- */

/* The formats' settings of destination d now. Caller holds the lock. */
void krc_render_format_options(const struct krc_sender *n, const struct dest *d,
                               struct krc_alert_options *fo);
/* The storm summary of d (*ret_body NULL: the destination has none) and
 * the restarts it counts; the next summary starts. Caller holds the lock. */
int krc_render_summary(struct krc_sender *n, struct dest *d, char **ret_body, long *ret_total);

/* --- deliver.c ------------------------------------------------------------- */

void krc_deliver_item_free(struct item *it);
/* Free the lanes' queues and sinks (krc_sender_free). */
void krc_deliver_lanes_free(struct krc_sender *n);
/* The lane of target t, made with these settings when new. Caller holds the lock. */
struct lane *krc_deliver_lane_get(struct krc_sender *n, const struct krc_dest_target *t,
                                  const struct krc_sink_ops *ops,
                                  const struct krc_destination *named);
/* Queue it on its destination's lane (takes the lock). */
void krc_deliver_queue(struct krc_sender *n, struct item *it);
/* An incident whose latest pod is uid/container ended (it is out of the table): the
 * tracker's entry goes, unless another open incident waits for the same container or a
 * restart of it was awaited since krc_recovery_ready gave `gen`. Caller holds the lock. */
void krc_deliver_recovery_release(struct krc_sender *n, const char *uid, const char *container,
                                  uint64_t gen);

/* --- deliver_incident.c ---------------------------------------------------- */

/* End the open incidents that are over (the main sender thread, once a second). */
void krc_deliver_incidents_check(struct krc_sender *n);
/* One message of an incident's first alert, to dest, is settled (posted, given up,
 * withdrawn): an incident ends only after its first alert (incident 0: nothing). not_sent:
 * it was withdrawn or dropped, never the destination's alert: dest gets no resolved
 * message. Takes the lock. */
void krc_deliver_incident_settled(struct krc_sender *n, uint64_t incident, void *dest,
                                  int not_sent);

/* --- deliver_outbox.c ------------------------------------------------------ */

/* The destination and target of an outbox row's key (the Go tool's settings' or a named
 * one's); KRC_ENOTFOUND when the configuration no longer has it. */
int krc_deliver_row_target(struct krc_sender *n, const struct krc_store_message *m,
                           const char *channel, const struct krc_destination **ret,
                           struct krc_dest_target *t);
/* An outbox row of this process's own (see first_own_outbox_id). */
void krc_deliver_note_own_outbox(struct krc_sender *n, int64_t id);
/* The destination accepted outbox row `id`: mark it delivered (or keep the
 * fact in the journal and memory for a retry). */
void krc_deliver_mark_delivered(struct krc_sender *n, struct krc_store *store, int64_t id,
                                const char *ts, const char *what);
/* Retry the due delivered marks (all of them when `all`, once). */
void krc_deliver_retry_unmarked(struct krc_sender *n, int all);
/* A shared outbox: may this replica post the item's row now? 1: post, 0: another leader owns
 * it (logged). */
int krc_deliver_claimed(struct krc_sender *n, struct lane *l, const struct item *it);

/* The outcome of one send at destination `named` (deliver.c): rc 0 or an
 * error, the sink's result. */
/* Keep outcomes for `named` (sender_stats.c; at krc_sender_new). */
void krc_sender_stats_register(struct krc_sender *n, const struct krc_destination *named);
void krc_sender_count_outcome(struct krc_sender *n, const struct krc_destination *named, int rc,
                              const struct krc_sink_result *res, const struct krc_error *e);

#endif
