/* Health of the daemon: liveness (/healthz), readiness (/readyz, and
 * /readyz/replica for replicas with leader election) and the metrics glue
 * (the loops' atomic counters copied into the Prometheus registry at scrape
 * time). The HTTP endpoint itself is serve/http_server. */
#ifndef KRC_HEALTH_H
#define KRC_HEALTH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "krc/alert/sender.h"
#include "krc/config/config.h"
#include "krc/daemon/pipeline.h"
#include "krc/kube/leader.h"
#include "krc/kube/watch.h"
#include "krc/serve/http_server.h"
#include "krc/mcp/mcp_http.h"
#include "krc/serve/metrics.h"
#include "krc/util/error.h"

/* One watch loop as health sees it: written by the loop's thread. */
struct krc_health_watch {
    const char *namespace; /* borrowed; NULL: all namespaces */
    struct krc_watch_stats stats;
    atomic_llong pods_tracked;
};

#define KRC_HEALTH_MAX_DESTS 72

struct krc_health {
    /* inputs, borrowed; set before krc_health_start and not written again
     * (the HTTP threads read them) */
    const struct krc_config *cfg; /* as started */
    struct krc_health_watch *watches;
    size_t n_watches;
    struct krc_sender *sender; /* may be NULL */
    struct krc_leader *leader; /* NULL without leader election */
    struct krc_pipeline_status *status;
    struct krc_mcp *mcp; /* NULL: no /mcp; served with cfg->mcp_token_file's token */
    /* built by krc_health_start */
    struct krc_mcp_http_route *mcp_route; /* NULL without /mcp */
    struct krc_metrics *metrics;
    struct krc_metrics_std std;
    struct krc_metric *m_reloads;   /* krc_config_reloads_total{result} */
    struct krc_metric *m_leader;    /* NULL unless leaderElect */
    struct krc_metric *m_unwritten; /* krc_store_unwritten_records */
    /* per destination (krc_sender_dest_stats): krc_destination_*, krc_kube_events_total */
    struct krc_metric *m_dest_success;
    struct krc_metric *m_dest_failure;
    struct krc_metric *m_dest_failures;
    struct krc_metric *m_kube_events;
    struct krc_sender_dest_stat dest_stats[KRC_HEALTH_MAX_DESTS];
    long long seen_dest_failures[KRC_HEALTH_MAX_DESTS][KRC_DEST_N_REASONS];
    long long seen_kube_events[KRC_KUBE_EVENT_N_RESULTS];
    struct krc_http_server *http; /* NULL with listen: off */
    /* last values copied into the Prometheus counters (deltas) */
    pthread_mutex_t metrics_lock;
    long long seen_watch[5];
    long long seen_restarts[5];
    long long seen_skipped[2];
    long long seen_notify[8];
    long long seen_store_errors;
};

/* Zero h (the inputs are set afterwards). Pair with krc_health_cleanup. */
void krc_health_init(struct krc_health *h);
/* Register the metrics and, unless cfg->listen is "off" or empty, start the
 * endpoint: /healthz /readyz /readyz/replica /metrics, and /mcp when mcp is
 * set (the token read from cfg->mcp_token_file: an unreadable or empty file
 * fails the start). */
int krc_health_start(struct krc_health *h, struct krc_error *err);
/* Stop serving (the HTTP threads are done when it returns). */
void krc_health_stop(struct krc_health *h);
/* Free the endpoint and the metrics; accepts a half-started h. */
void krc_health_cleanup(struct krc_health *h);

/* SIGHUP: read cfg->mcp_token_file again and serve /mcp with its token from
 * now on. A missing, unreadable or empty file keeps the old token (a warning
 * names the file, never the token). Nothing without /mcp. */
void krc_health_reload_mcp_token(struct krc_health *h);
/* A configuration reload's result, counted. */
void krc_health_reloaded(struct krc_health *h, int ok);
/* The sender's on_delivered callback (userdata: the struct krc_health):
 * the restart-to-notification latency histogram. */
void krc_health_on_delivered(double seconds, void *userdata);

#endif
