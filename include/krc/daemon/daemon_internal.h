/* The daemon's parts, private to src/daemon/daemon*.c (krc_daemon_run is the
 * one entry point, daemon/daemon.h):
 *   daemon.c            lifecycle: set-up, the threads (watch, workers,
 *                       sender), signals, the stop and the clean-up
 *   daemon_reload.c     SIGHUP: rebuild the configuration and apply what a
 *                       reload may change
 *   daemon_ha.c         leader election glue: the Lease's thread, the
 *                       take-over (fence, resume the outbox), the hand-over
 *   daemon_retention.c  the history database: opening it, its password,
 *                       and the pruner thread (retention)
 *   daemon_accel.c      GPU time lost: the scopes' tables and their counter
 *   daemon_track.c      change tracking: the tracker's watches, the drain of its
 *                       changes into the history */
#ifndef KRC_DAEMON_INTERNAL_H
#define KRC_DAEMON_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "krc/alert/sender.h"
#include "krc/config/config.h"
#include "krc/daemon/health.h"
#include "krc/daemon/pipeline.h"
#include "krc/detect/accel_time.h"
#include "krc/detect/dev_health.h"
#include "krc/detect/filter.h"
#include "krc/detect/pod_state.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/leader.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/store/store.h"
#include "krc/track/track.h"
#include "krc/util/error.h"
#include "krc/util/pattern.h"
#include "krc/util/queue.h"
#include "krc/util/redact.h"

struct daemon;

/* One watch loop: the whole cluster, or one namespace. */
struct scope {
    struct daemon *d;
    const char *namespace; /* borrowed from the filter; NULL = all */
    struct krc_kube_client *client;
    struct krc_pod_state *state;
    struct krc_accel_time *accel;    /* GPU time lost (daemon_accel.c) */
    struct krc_dev_health *devh;     /* late device health (daemon_accel.c); NULL: off */
    struct krc_health_watch *health; /* its stats and pod count, read by health */
    pthread_t thread;
    int started;
};

struct worker {
    struct daemon *d;
    struct krc_pipeline_deps deps; /* its client and store connection (or NULL: no history) */
    pthread_t thread;
    int started;
};

/* What SIGHUP replaced: kept until exit, since threads and the sender's
 * destinations may still point into them (a few KB per reload). */
struct retired {
    struct krc_config *cfg;
    struct krc_filter *filter;
    struct retired *next;
};

struct daemon {
    const struct krc_config *cfg;             /* as started: the settings a reload cannot change */
    _Atomic(const struct krc_config *) live;  /* reloadable settings (SIGHUP) */
    _Atomic(struct krc_filter *) live_filter; /* reloadable filters */
    struct retired *retired;
    atomic_int cancel;
    atomic_size_t queued_pod_bytes; /* pod_json bytes of the restarts in the queue */
    struct krc_kube_auth_config auth;
    struct krc_token_source *tokens;
    struct krc_filter *filter;
    struct krc_queue queue;
    struct scope *scopes;
    size_t n_scopes;
    struct worker *workers;
    size_t n_workers;
    struct krc_sender *sender;
    struct krc_redactor *redactor;
    struct krc_kube_client *mcp_client; /* explain_pod of /mcp; NULL without mcpTokenFile */
    struct krc_mcp_tools *mcp_tools;
    struct krc_mcp *mcp;
    pthread_t sender_thread;
    int sender_started;
    atomic_int sender_done;
    char db_path[4096];                  /* the store's target: a file or a PostgreSQL URL */
    char db_shown[4096];                 /* what logs show of it (krc_store_path: no password) */
    struct krc_store_options store_opts; /* every connection: cluster, password file */
    int shared_store;        /* PostgreSQL: fence at take-over, claim before each POST */
    struct krc_store *store; /* main thread: resume at start-up, retention */
    /* PostgreSQL: the outbox could not be resumed (the database did not
     * answer at start-up or at the take-over); the pruner thread tries again
     * every RESUME_RETRY_MS until it does */
    atomic_int resume_due;
    /* how every connection is opened: KRC_STORE_DEFER_CONNECT, and
     * KRC_STORE_CONNECT_ON_USE once the first found PostgreSQL down */
    unsigned store_flags;
    pthread_t pruner;
    int pruner_started;
    struct krc_pipeline_status status; /* the workers' counters and history fault */
    struct krc_health health;          /* /healthz /readyz /metrics */
    struct krc_leader *leader;         /* NULL unless leaderElect */
    pthread_t leader_thread;
    int leader_started;
    int watching; /* watch threads started */
    /* Set by the election thread the moment the Lease is lost: no worker
     * records or queues another restart, and the sender starts no POST. */
    atomic_int lost;
    struct krc_metric *m_accel; /* krc_accelerator_seconds_lost_total */
    /* change tracking (daemon_track.c); NULL / 0 with trackChanges off */
    struct krc_track *track;
    struct krc_daemon_track_watch *track_watches;
    size_t n_track_watches;
};

static inline const struct krc_config *live_cfg(struct daemon *d)
{
    return atomic_load(&d->live);
}

/* daemon.c */
/* Thread names show in top -H, ps -L and /proc/PID/task/TID/comm. */
void krc_daemon_name_thread(const char *name);
/* The sender's options a configuration gives (the reloadable ones and the
 * rest); the daemon adds what is not configuration (redactor, clients, ...). */
void krc_daemon_sender_options_from(const struct krc_config *cfg, struct krc_sender_options *no);
/* Create the detection tables and start the watch threads (at start-up, or
 * when this replica becomes the leader). */
int krc_daemon_start_watches(struct daemon *d);

/* daemon_reload.c */
/* SIGHUP: rebuild the configuration from the `krc run` arguments and apply
 * it, or keep the running one and say why. */
void krc_daemon_reload(struct daemon *d);
/* The configurations and filters SIGHUP replaced, and the live ones. */
void krc_daemon_free_reloaded(struct daemon *d);

/* daemon_accel.c */
/* Distinct (namespace, workload, resource) series of
 * krc_accelerator_seconds_lost_total; past it: one series, all "other". */
#define KRC_DAEMON_ACCEL_SERIES 200
/* After krc_health_start: register the counter, give each scope its table,
 * bring the counter up to date at every scrape. */
int krc_daemon_accel_setup(struct daemon *d, struct krc_error *err);
void krc_daemon_accel_cleanup(struct daemon *d);
/* The watch thread, after the restarts a pod update revealed: a restart of
 * the pod whose device the kubelet now reports Unhealthy is queued again as
 * an amendment (krc_restart.amend), at most once per restart. */
void krc_daemon_dev_health_observe(struct scope *s, const struct krc_pod_info *pod);

/* daemon_track.c */
/* Past this many plain watched namespaces, the start-up log says what the
 * per-namespace tracking watches cost (7 per namespace: a thread and an API
 * connection each). They stay per namespace: a namespaced install's Roles
 * (the chart's with plain watched namespaces) grant no cluster-wide list or
 * watch. */
#define KRC_DAEMON_TRACK_MANY_NAMESPACES 4
/* With trackChanges: the tracker and a watch (client, thread to come) per
 * resource and scope. Change tracking is an extra: a watch whose client
 * cannot be created is left out with a warning, and without memory for the
 * tracker the daemon runs without change tracking (d->track NULL). */
void krc_daemon_track_setup(struct daemon *d);
/* Start the watches (with the pod watches: at start-up or at the take-over);
 * a watch whose thread cannot be created is left out with a warning. */
void krc_daemon_track_start(struct daemon *d);
/* After d->cancel: join the watch threads. */
void krc_daemon_track_stop(struct daemon *d);
void krc_daemon_track_cleanup(struct daemon *d);
/* The krc-store thread: write the changes recorded since the last drain. */
void krc_daemon_track_drain(struct daemon *d, struct krc_store *st);

/* daemon_ha.c */
int krc_daemon_setup_leader(struct daemon *d, struct krc_error *err);
void *krc_daemon_leader_main(void *arg);
/* Between two signals: start watching once leading; 1 when the daemon must
 * stop (leadership lost or overdue). */
int krc_daemon_follow_leader(struct daemon *d);
/* Queue the outbox rows still pending from before (the sender reads them). */
void krc_daemon_resume_outbox(struct daemon *d, struct krc_store *store);
/* The pruner thread: resume the outbox once the database answers again. */
void krc_daemon_late_resume(struct daemon *d, struct krc_store *st);
/* The sender's on_posted: a delivered restart joins the hand-over list. */
void krc_daemon_on_posted(const struct krc_restart_ident *id, void *userdata);

/* daemon_retention.c */
int krc_daemon_open_store(const struct daemon *d, unsigned flags, struct krc_store **ret,
                          struct krc_error *e);
/* The history database: its target, password and first connection; 0 also
 * when it is unavailable (d->db_path empty: restarts are not recorded). */
int krc_daemon_open_history(struct daemon *d, struct krc_error *ep);
void *krc_daemon_pruner_main(void *arg);

#endif
