/* Health: liveness, readiness and the metrics glue (include/krc/daemon/health.h). */
#include "krc/daemon/health.h"
#include "krc/alert/dest.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

void krc_health_init(struct krc_health *h)
{
    memset(h, 0, sizeof(*h));
    pthread_mutex_init(&h->metrics_lock, NULL);
}

static void add_delta(struct krc_metric *mt, const char *label, long long now, long long *seen)
{
    if (now > *seen) {
        krc_metric_add(mt, label ? (const char *[]){label} : NULL, (double)(now - *seen));
        *seen = now;
    }
}

static int check_ready(void *userdata, char *reason, size_t size);

/* Each destination's outcomes (alert/sender.h). Caller holds metrics_lock. */
static void collect_destinations(struct krc_health *h)
{
    size_t n = krc_sender_dest_stats(h->sender, h->dest_stats, KRC_HEALTH_MAX_DESTS);
    long long ev[KRC_KUBE_EVENT_N_RESULTS] = {0};

    for (size_t i = 0; i < n && i < KRC_HEALTH_MAX_DESTS; i++) {
        const struct krc_sender_dest_stat *st = &h->dest_stats[i];
        const char *dk[2] = {st->destination, st->kind};
        krc_metric_set(h->m_dest_success, dk, (double)st->last_success_s);
        krc_metric_set(h->m_dest_failure, dk, (double)st->last_failure_s);
        for (int r = 0; r < KRC_DEST_N_REASONS; r++) {
            const char *dkr[3] = {st->destination, st->kind, krc_dest_failure_reasons[r]};
            long long now = st->failures[r];
            /* every reason shows, 0 until it happens (rate() needs the series) */
            krc_metric_add(h->m_dest_failures, dkr,
                           (double)(now > h->seen_dest_failures[i][r]
                                        ? now - h->seen_dest_failures[i][r]
                                        : 0));
            if (now > h->seen_dest_failures[i][r]) {
                h->seen_dest_failures[i][r] = now;
            }
        }
        for (int r = 0; st->is_event && r < KRC_KUBE_EVENT_N_RESULTS; r++) {
            ev[r] += st->events[r];
        }
    }
    for (int r = 0; r < KRC_KUBE_EVENT_N_RESULTS; r++) {
        add_delta(h->m_kube_events, krc_kube_event_results[r], ev[r], &h->seen_kube_events[r]);
    }
}

/* Scrape time: copy the loops' atomic counters into the registry. */
static void collect(struct krc_metrics *m, void *userdata)
{
    struct krc_health *h = userdata;
    long long ev[5] = {0}, wr[5] = {0}, sk[2] = {0}, pods = 0;
    static const char *sk_names[2] = {"oversized", "undecodable"};
    char reason[512];
    static const char *ev_names[5] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    static const char *wr_names[5] = {"timeout", "expired", "error", "silent", "malformed"};
    static const char *nt_names[8] = {"sent",     "failed",     "muted",        "grouped",
                                      "silenced", "not_posted", "rate_limited", "intentional"};
    long long nt[8] = {0};
    (void)m;

    for (size_t i = 0; i < h->n_watches; i++) {
        struct krc_watch_stats *st = &h->watches[i].stats;
        ev[0] += atomic_load(&st->events_added);
        ev[1] += atomic_load(&st->events_modified);
        ev[2] += atomic_load(&st->events_deleted);
        ev[3] += atomic_load(&st->events_bookmark);
        ev[4] += atomic_load(&st->events_error);
        /* a clean reconnect after the server's timeoutSeconds is "timeout" */
        wr[0] += atomic_load(&st->reconnects);
        wr[1] += atomic_load(&st->expired);
        wr[2] += atomic_load(&st->request_errors);
        wr[3] += atomic_load(&st->silent_streams);
        wr[4] += atomic_load(&st->malformed_lists);
        sk[0] += atomic_load(&st->skipped_oversized);
        sk[1] += atomic_load(&st->skipped_undecodable);
        pods += atomic_load(&h->watches[i].pods_tracked);
    }
    if (h->sender != NULL) {
        const struct krc_sender_stats *ns = krc_sender_stats(h->sender);
        nt[0] = atomic_load(&ns->alerts_sent) + atomic_load(&ns->replies_sent) +
                atomic_load(&ns->summaries_sent) + atomic_load(&ns->recovered_sent);
        nt[1] = atomic_load(&ns->failed);
        nt[2] = atomic_load(&ns->muted);
        nt[3] = atomic_load(&ns->grouped);
        nt[4] = atomic_load(&ns->silenced) + atomic_load(&ns->log_ignored);
        nt[6] = atomic_load(&ns->rate_limited);
    }
    nt[5] = atomic_load(&h->status->not_posted);
    nt[7] = atomic_load(&h->status->intentional);
    pthread_mutex_lock(&h->metrics_lock);
    for (int i = 0; i < 5; i++) {
        add_delta(h->std.watch_events, ev_names[i], ev[i], &h->seen_watch[i]);
        add_delta(h->std.watch_restarts, wr_names[i], wr[i], &h->seen_restarts[i]);
    }
    for (int i = 0; i < 2; i++) {
        add_delta(h->std.watch_skipped, sk_names[i], sk[i], &h->seen_skipped[i]);
    }
    for (int i = 0; i < 8; i++) {
        add_delta(h->std.notifications, nt_names[i], nt[i], &h->seen_notify[i]);
    }
    add_delta(h->std.store_errors, NULL, atomic_load(&h->status->store_errors),
              &h->seen_store_errors);
    if (h->sender != NULL && h->m_dest_failures != NULL) {
        collect_destinations(h);
    }
    pthread_mutex_unlock(&h->metrics_lock);
    krc_metric_set(h->std.pods_tracked, NULL, (double)pods);
    if (h->m_unwritten != NULL) {
        krc_metric_set(h->m_unwritten, NULL, (double)atomic_load(&h->status->unwritten));
    }
    if (h->leader != NULL && h->m_leader != NULL) {
        krc_metric_set(h->m_leader, NULL, krc_leader_role(h->leader) == KRC_LEADER_LEADING);
    }
    /* krc_ready says what /readyz would answer now, probed or not */
    (void)check_ready(h, reason, sizeof(reason));
}

void krc_health_on_delivered(double seconds, void *userdata)
{
    struct krc_health *h = userdata;
    krc_metric_observe(h->std.restart_to_notification, NULL, seconds);
}

/* /healthz: the loops are alive. A watch loop iterates or receives data at
 * least every watchIdleTimeout plus the longest backoff; the sender loop
 * wakes every 200 ms unless it is busy delivering (retries included). */
static int check_live(void *userdata, char *reason, size_t size)
{
    struct krc_health *h = userdata;
    int64_t now = krc_clock_mono_ms();
    int64_t watch_limit = h->cfg->watch_idle_timeout_s * 1000 + 120000;

    for (size_t i = 0; i < h->n_watches; i++) {
        int64_t hb = atomic_load(&h->watches[i].stats.heartbeat_mono_ms);
        if (hb != 0 && now - hb > watch_limit) {
            snprintf(reason, size, "watch loop (%s) stuck for %llds",
                     h->watches[i].namespace ? h->watches[i].namespace : "all namespaces",
                     (long long)((now - hb) / 1000));
            return 0;
        }
    }
    if (h->sender != NULL) {
        int64_t hb = krc_sender_heartbeat(h->sender);
        if (hb != 0 && now - hb > 15 * 60 * 1000) {
            snprintf(reason, size, "Slack sender stuck for %llds", (long long)((now - hb) / 1000));
            return 0;
        }
    }
    return 1;
}

/* A standby's state for messages; returns 1 when it can reach the Lease. */
static int standby_state(struct krc_health *h, char *reason, size_t size)
{
    char holder[256], why[256];
    krc_leader_holder(h->leader, holder, sizeof(holder));
    krc_leader_last_error(h->leader, why, sizeof(why));
    if (why[0] != '\0') {
        snprintf(reason, size, "standby: lease unavailable: %s", why);
        return 0;
    }
    snprintf(reason, size, "standby: the lease is held by %s", holder[0] ? holder : "nobody yet");
    return 1;
}

/* /readyz/replica, the readiness probe of replicas with leader election: a
 * standby that can reach its Lease is ready to take over, so a rolling
 * update can proceed (with /readyz, which reflects the role, a new standby
 * would never become ready and the rollout would wait forever). */
static int handle_replica_ready(const struct krc_http_server_request *req,
                                struct krc_http_server_response *resp, void *userdata)
{
    struct krc_health *h = userdata;
    char reason[512];
    int ok;
    (void)req;

    reason[0] = '\0';
    if (h->leader != NULL && krc_leader_role(h->leader) != KRC_LEADER_LEADING) {
        ok = standby_state(h, reason, sizeof(reason));
    } else {
        ok = check_ready(h, reason, sizeof(reason));
        if (ok) {
            snprintf(reason, sizeof(reason), "%s", h->leader != NULL ? "leader" : "ready");
        }
    }
    resp->status = ok ? 200 : 503;
    return krc_buf_printf(&resp->body, "%s%s\n", ok ? "ok: " : "", reason) < 0 ? KRC_ENOMEM : 0;
}

/* /readyz: every watch scope synced, the API server answering, and each
 * watch delivering: an event, a bookmark or a list within twice the
 * bookmark interval (the API server sends a bookmark about every minute, so
 * a quiet cluster stays ready; a watch that receives bytes but delivers
 * nothing, or nothing at all, does not). */
static int check_ready(void *userdata, char *reason, size_t size)
{
    struct krc_health *h = userdata;
    int64_t now = krc_clock_mono_ms();
    int64_t stale_ms = (int64_t)h->cfg->watch_bookmark_interval_s * 2000;

    if (h->leader != NULL && krc_leader_role(h->leader) != KRC_LEADER_LEADING) {
        standby_state(h, reason, size);
        krc_metric_set(h->std.ready, NULL, 0);
        return 0;
    }
    for (size_t i = 0; i < h->n_watches; i++) {
        struct krc_watch_stats *st = &h->watches[i].stats;
        const char *scope = h->watches[i].namespace ? h->watches[i].namespace : "all namespaces";
        if (!atomic_load(&st->synced)) {
            snprintf(reason, size, "pods (%s) not synced yet", scope);
            krc_metric_set(h->std.ready, NULL, 0);
            return 0;
        }
        if (atomic_load(&st->last_error_mono_ms) > atomic_load(&st->last_ok_mono_ms)) {
            snprintf(reason, size, "Kubernetes API unreachable (%s)", scope);
            krc_metric_set(h->std.ready, NULL, 0);
            return 0;
        }
        if (stale_ms > 0 && now - atomic_load(&st->last_ok_mono_ms) > stale_ms) {
            snprintf(reason, size,
                     "pod watch (%s) has delivered no event or bookmark for %llds (more than "
                     "twice the %lds watchBookmarkInterval)",
                     scope, (long long)((now - atomic_load(&st->last_ok_mono_ms)) / 1000),
                     h->cfg->watch_bookmark_interval_s);
            krc_metric_set(h->std.ready, NULL, 0);
            return 0;
        }
    }
    if (atomic_load(&h->status->store_fault) || atomic_load(&h->status->unwritten) > 0) {
        /* restarts are still detected and alerted (posted directly); the
         * history keeps what it refused in memory until it accepts writes */
        char msg[256];
        long long waiting = atomic_load(&h->status->unwritten);
        krc_pipeline_store_fault(h->status, msg, sizeof(msg));
        if (waiting > 0) {
            snprintf(reason, size,
                     "history database unavailable: %s; %lld restart(s) kept in memory to be "
                     "recorded, alerts posted directly",
                     msg[0] ? msg : "writes refused", waiting);
        } else {
            snprintf(reason, size, "history database unavailable: %s", msg);
        }
        krc_metric_set(h->std.ready, NULL, 0);
        return 0;
    }
    krc_metric_set(h->std.ready, NULL, 1);
    return 1;
}

/* /mcp with the token of cfg->mcp_token_file (required even on loopback: the
 * daemon's endpoint is meant for a cluster). */
static int add_mcp(struct krc_health *h, struct krc_error *err)
{
    struct krc_mcp_http_config mc;
    char host[256];
    char *token = NULL;
    int port;
    int rc;

    if (h->mcp == NULL) {
        return 0;
    }
    if ((rc = krc_mcp_http_read_token(h->cfg->mcp_token_file, &token, err)) < 0) {
        krc_error_prefix(err, "mcpTokenFile");
        return rc;
    }
    memset(&mc, 0, sizeof(mc));
    mc.token = token;
    mc.loopback_only =
        krc_http_server_parse_listen(h->cfg->listen, host, sizeof(host), &port, NULL) == 0 &&
        krc_mcp_http_is_loopback(host);
    rc = krc_mcp_http_add(h->http, h->mcp, &mc, &h->mcp_route, err);
    memset(token, 0, strlen(token));
    krc_free(token);
    return rc;
}

/* Destination label values the series are made for: the destinations of
 * the configuration as started (krc_sender_dest_stats: the named ones, the
 * Go tool's Slack settings, the implicit Kubernetes Event; destinations a
 * reload adds take effect at the next start), plus one, at most
 * KRC_HEALTH_MAX_DESTS; a destination beyond them would be counted as
 * "other". The series are one dense array (the cross product with kind and
 * reason), so sizing it by the configuration rather than by the maximum
 * keeps ~90 KB out of every krc's memory (docs/performance.md). */
static size_t destination_cap(const struct krc_config *cfg)
{
    size_t n = 3;

    if (cfg != NULL) {
        n += cfg->n_destinations;
    }
    return n < KRC_HEALTH_MAX_DESTS ? n : KRC_HEALTH_MAX_DESTS;
}

/* The destinations' metrics: labels destination (the configuration's
 * names: bounded), kind (the kinds known) and reason (a fixed set). */
static int register_destinations(struct krc_health *h, struct krc_error *err)
{
    static const char *kinds[33];
    size_t nk = krc_dest_kind_names(kinds, 32);
    const struct krc_metric_label dkr[3] = {
        {.name = "destination", .cap = destination_cap(h->cfg)},
        {.name = "kind", .values = kinds},
        {.name = "reason", .values = krc_dest_failure_reasons},
    };
    const struct krc_metric_label result = {.name = "result", .values = krc_kube_event_results};
    const struct krc_metric_desc success = {
        .type = KRC_METRIC_GAUGE,
        .name = "krc_destination_last_success_timestamp_seconds",
        .help = "Unix time of the last message a destination accepted (0: none since start).",
        .labels = dkr,
        .n_labels = 2};
    const struct krc_metric_desc failure = {
        .type = KRC_METRIC_GAUGE,
        .name = "krc_destination_last_failure_timestamp_seconds",
        .help = "Unix time of the last message a destination did not take after krc's retries "
                "(0: none since start).",
        .labels = dkr,
        .n_labels = 2};
    const struct krc_metric_desc failures = {
        .type = KRC_METRIC_COUNTER,
        .name = "krc_destination_failures_total",
        .help = "Messages a destination did not take after krc's retries, by reason.",
        .labels = dkr,
        .n_labels = 3};
    const struct krc_metric_desc events = {
        .type = KRC_METRIC_COUNTER,
        .name = "krc_kube_events_total",
        .help = "Kubernetes Events krc wrote on restarted pods, by result (not in "
                "krc_notifications_total).",
        .labels = &result,
        .n_labels = 1};
    int rc;

    kinds[nk < 32 ? nk : 32] = NULL;
    if ((rc = krc_metrics_add(h->metrics, &success, &h->m_dest_success, err)) < 0 ||
        (rc = krc_metrics_add(h->metrics, &failure, &h->m_dest_failure, err)) < 0 ||
        (rc = krc_metrics_add(h->metrics, &failures, &h->m_dest_failures, err)) < 0 ||
        (rc = krc_metrics_add(h->metrics, &events, &h->m_kube_events, err)) < 0) {
        return rc;
    }
    return 0;
}

int krc_health_start(struct krc_health *h, struct krc_error *err)
{
    struct krc_http_server_config hc;
    int rc;

    if ((rc = krc_metrics_new(&h->metrics, err)) < 0 ||
        (rc = krc_metrics_register_std(h->metrics, KRC_VERSION, &h->std, err)) < 0 ||
        (rc = krc_metrics_register_process(h->metrics, err)) < 0 ||
        (rc = krc_metrics_add_collector(h->metrics, collect, h, err)) < 0) {
        return rc;
    }
    {
        static const char *const results[] = {"success", "failure", NULL};
        const struct krc_metric_label result = {.name = "result", .values = results};
        const struct krc_metric_desc reloads = {.type = KRC_METRIC_COUNTER,
                                                .name = "krc_config_reloads_total",
                                                .help = "Configuration reloads (SIGHUP) by result.",
                                                .labels = &result,
                                                .n_labels = 1};
        const struct krc_metric_desc unwritten = {
            .type = KRC_METRIC_GAUGE,
            .name = "krc_store_unwritten_records",
            .help = "Restarts kept in memory because the history database refused them "
                    "(written, oldest first, once it accepts writes again)."};
        const struct krc_metric_desc leader = {
            .type = KRC_METRIC_GAUGE,
            .name = "krc_leader",
            .help = "1 while this replica holds the leader-election Lease, 0 on a standby."};
        if ((rc = register_destinations(h, err)) < 0 ||
            (rc = krc_metrics_add(h->metrics, &reloads, &h->m_reloads, err)) < 0 ||
            (rc = krc_metrics_add(h->metrics, &unwritten, &h->m_unwritten, err)) < 0 ||
            (h->cfg->leader_elect &&
             (rc = krc_metrics_add(h->metrics, &leader, &h->m_leader, err)) < 0)) {
            return rc;
        }
    }
    if (h->cfg->listen == NULL || h->cfg->listen[0] == '\0' || strcmp(h->cfg->listen, "off") == 0) {
        krc_log(h->mcp != NULL ? KRC_LOG_WARN : KRC_LOG_INFO,
                "health and metrics endpoint disabled (listen: off)%s",
                h->mcp != NULL ? ": mcpTokenFile is set but /mcp is not served" : "");
        return 0;
    }
    memset(&hc, 0, sizeof(hc));
    hc.listen = h->cfg->listen;
    hc.metrics = h->metrics;
    hc.liveness = check_live;
    hc.liveness_userdata = h;
    hc.readiness = check_ready;
    hc.readiness_userdata = h;
    if ((rc = krc_http_server_new(&hc, &h->http, err)) < 0 ||
        (rc = krc_http_server_route(h->http, "/readyz/replica",
                                    KRC_HTTP_METHOD_GET | KRC_HTTP_METHOD_HEAD, 0, 4096,
                                    handle_replica_ready, h, err)) < 0 ||
        (rc = add_mcp(h, err)) < 0 || (rc = krc_http_server_start(h->http, err)) < 0) {
        return rc;
    }
    krc_log(KRC_LOG_INFO, "health and metrics on %s (port %d): /healthz /readyz /metrics%s",
            h->cfg->listen, krc_http_server_port(h->http), h->mcp_route != NULL ? " /mcp" : "");
    return 0;
}

void krc_health_stop(struct krc_health *h)
{
    if (h->http != NULL) {
        krc_http_server_stop(h->http);
    }
}

void krc_health_cleanup(struct krc_health *h)
{
    krc_http_server_free(h->http);
    h->http = NULL;
    krc_mcp_http_free(h->mcp_route);
    h->mcp_route = NULL;
    krc_metrics_free(h->metrics);
    h->metrics = NULL;
    pthread_mutex_destroy(&h->metrics_lock);
}

void krc_health_reload_mcp_token(struct krc_health *h)
{
    const char *path = h->cfg->mcp_token_file;
    struct krc_error e;
    char *token = NULL;
    int rc;

    if (h->mcp_route == NULL) {
        return;
    }
    krc_error_clear(&e);
    if (krc_mcp_http_read_token(path, &token, &e) < 0) {
        /* the message names the file and what is wrong, never a token */
        krc_log(KRC_LOG_WARN, "mcpTokenFile not reloaded; /mcp keeps the token it had: %s", e.msg);
        return;
    }
    rc = krc_mcp_http_set_token(h->mcp_route, token, &e);
    memset(token, 0, strlen(token));
    krc_free(token);
    if (rc < 0) {
        krc_log(KRC_LOG_WARN, "mcpTokenFile %s not reloaded; /mcp keeps the token it had: %s", path,
                e.msg);
    } else {
        krc_log(KRC_LOG_INFO, "mcpTokenFile %s re-read: %s", path,
                rc == 1 ? "/mcp now accepts the new token only" : "the token is unchanged");
    }
}

void krc_health_reloaded(struct krc_health *h, int ok)
{
    if (h->m_reloads != NULL) {
        krc_metric_inc(h->m_reloads, (const char *[]){ok ? "success" : "failure"});
    }
}
