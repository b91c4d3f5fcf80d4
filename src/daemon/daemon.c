#include "krc/daemon/daemon.h"
#include "krc/daemon/daemon_internal.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/sender.h"
#include "krc/collect/collector.h"
#include "krc/daemon/health.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/daemon/pipeline.h"
#include "krc/detect/filter.h"
#include "krc/detect/pod_state.h"
#include "krc/detect/restart.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/leader.h"
#include "krc/kube/watch.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/http.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/pattern.h"
#include "krc/util/queue.h"
#include "krc/util/redact.h"

/* Each queued restart carries its pod's JSON (~10 KB): 1024 bound the backlog to
 * ~10 MB; beyond it the watch thread waits (back-pressure), nothing is dropped. */
#define QUEUE_CAPACITY 1024
/* Pod copies in the queue are capped by bytes: past this backlog a restart is
 * queued without one and its worker GETs the pod instead, so a restart storm
 * costs API requests, not ~7 KB of memory per queued restart. */
#define QUEUE_POD_BYTES (256 * 1024)
#define DRAIN_MS 10000
#define SENDER_GRACE_MS 5000
#define WORKER_IDLE_RELEASE_MS 500 /* a worker idle this long releases its memory */

/* --- detection (watch threads) ------------------------------------------ */

static void log_restart_line(enum krc_log_level level, const struct krc_restart_delta *d,
                             const char *why)
{
    char count[16];
    struct krc_log_field f[4];
    snprintf(count, sizeof(count), "%d", d->container->restart_count);
    f[0] = (struct krc_log_field){"namespace", d->pod->namespace, 0};
    f[1] = (struct krc_log_field){"pod", d->pod->name, 0};
    f[2] = (struct krc_log_field){"container", d->container->name, 0};
    f[3] = (struct krc_log_field){"restart_count", count, 1};
    krc_log_fields(level, why, f, 4);
}

static void log_ignored(const struct krc_restart_delta *d, const char *why)
{
    log_restart_line(KRC_LOG_INFO, d, why);
}

static void on_restart(const struct krc_restart_delta *d, void *userdata)
{
    struct scope *s = userdata;
    const struct krc_config *cfg = live_cfg(s->d);
    struct krc_restart *r;
    const char *ignored = krc_route_ignored(cfg, d);

    if (ignored != NULL) {
        log_ignored(d, ignored);
        return;
    }
    r = krc_restart_from_delta(d, atomic_load(&s->d->queued_pod_bytes) + d->pod->raw_len <=
                                      QUEUE_POD_BYTES);
    if (r == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: restart of %s/%s container %s not queued",
                d->pod->namespace, d->pod->name, d->container->name);
        return;
    }
    krc_accel_time_restart(s->accel, d, krc_clock_mono_ms(), krc_clock_now(), &r->accel);
    if (s->devh != NULL) {
        krc_dev_health_restart(s->devh, d, krc_clock_mono_ms());
    }
    if (r->pod_json == NULL && d->pod->raw_len > 0 && krc_log_enabled(KRC_LOG_DEBUG)) {
        log_restart_line(KRC_LOG_DEBUG, d,
                         "restart queued without a copy of its pod (backlog over the pod budget): "
                         "the worker will GET the pod");
    }
    atomic_fetch_add(&s->d->queued_pod_bytes, r->pod_json_len);
    /* before this event's state is observed (h_pod), so the recovery
     * tracker misses nothing between the restart and its alert */
    krc_sender_restart_seen(s->d->sender, r->ident.uid, r->namespace, r->pod, r->ident.container,
                            r->ident.restart_count);
    /* Back-pressure: wait for the workers rather than drop a restart. */
    for (;;) {
        int rc = krc_queue_push(&s->d->queue, r, 1000);
        if (rc == 0) {
            return;
        }
        if (rc == KRC_ECANCELED || s->d->cancel) {
            atomic_fetch_sub(&s->d->queued_pod_bytes, r->pod_json_len);
            krc_restart_free(r);
            return;
        }
        krc_log(KRC_LOG_WARN, "restart queue full (%d entries); watch loop waiting",
                QUEUE_CAPACITY);
    }
}

static void h_sync_begin(void *userdata)
{
    struct scope *s = userdata;
    krc_pod_state_sync_begin(s->state);
    krc_accel_time_sync_begin(s->accel);
}

static void h_pod(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *userdata)
{
    struct scope *s = userdata;

    if (type == KRC_WATCH_DELETED) {
        krc_sender_pod_event(s->d->sender, pod, 1);
        if (krc_accel_time_count(s->accel) > 0) {
            krc_accel_time_forget(s->accel, pod->uid, krc_clock_mono_ms());
        }
        if (s->devh != NULL) {
            krc_dev_health_forget(s->devh, pod->uid);
        }
        krc_pod_state_delete(s->state, pod->uid);
        atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
        return;
    }
    if (!krc_filter_pod_allowed(atomic_load(&s->d->live_filter), pod->namespace, pod->name)) {
        /* not tracked at all: costs no memory (and a pod a reload filtered
         * out leaves the table) */
        if (krc_accel_time_count(s->accel) > 0) {
            krc_accel_time_forget(s->accel, pod->uid, krc_clock_mono_ms());
        }
        if (s->devh != NULL) {
            krc_dev_health_forget(s->devh, pod->uid);
        }
        if (krc_pod_state_forget(s->state, pod->uid)) {
            atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
        }
        return;
    }
    if (krc_pod_state_apply(s->state, pod, on_restart, s) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory tracking pod %s/%s", pod->namespace, pod->name);
    }
    /* after on_restart: a restart this event revealed is awaited first */
    krc_sender_pod_event(s->d->sender, pod, 0);
    if (krc_accel_time_count(s->accel) > 0) { /* GPU time lost: nothing while none is tracked */
        krc_accel_time_observe(s->accel, pod, krc_clock_mono_ms());
    }
    if (s->devh != NULL && krc_dev_health_count(s->devh) > 0) {
        krc_daemon_dev_health_observe(s, pod); /* late device health: nothing while none */
    }
    atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
}

static void h_sync_end(void *userdata)
{
    struct scope *s = userdata;
    size_t removed = krc_pod_state_sync_end(s->state);
    krc_accel_time_sync_end(s->accel, krc_clock_mono_ms());
    atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
    /* A (re)list churned through thousands of pod objects: hand the free
     * heap top back now (the thresholds keep up to 512 KiB of it), once per
     * sync, not per event. */
#ifndef __SANITIZE_ADDRESS__
    malloc_trim(0);
#endif
    krc_log(KRC_LOG_INFO, "tracking %zu pods (%s)%s", krc_pod_state_count(s->state),
            s->namespace ? s->namespace : "all namespaces",
            removed ? "; pods deleted while the watch was down were dropped" : "");
}

/* Thread names show in top -H, ps -L and /proc/PID/task/TID/comm. */
void krc_daemon_name_thread(const char *name)
{
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

static void *watch_main(void *arg)
{
    struct scope *s = arg;
    struct krc_watch_options o;
    struct krc_watch_handler h;
    struct krc_error e;

    krc_daemon_name_thread("krc-watch");
    krc_watch_options_defaults(&o);
    o.namespace = s->namespace;
    o.label_selector = s->d->cfg->label_selector;
    o.idle_timeout_ms = s->d->cfg->watch_idle_timeout_s * 1000;
    o.page_size = (int)s->d->cfg->list_page_size;
    o.streaming_list = s->d->cfg->streaming_list;
    o.cancel = &s->d->cancel;
    o.stats = &s->health->stats;
    h.sync_begin = h_sync_begin;
    h.pod = h_pod;
    h.sync_end = h_sync_end;
    h.userdata = s;
    krc_error_clear(&e);
    if (krc_watch_run(s->client, &o, &h, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "pod watch (%s) stopped: %s",
                s->namespace ? s->namespace : "all namespaces", e.msg);
        s->d->cancel = 1;
    }
    return NULL;
}

/* --- worker threads (the pipeline: pipeline.c), retention, the outbox ---- */

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    krc_daemon_name_thread("krc-worker");
    krc_pipeline_run(&w->deps, &w->d->queue, &w->d->queued_pod_bytes, WORKER_IDLE_RELEASE_MS);
    return NULL;
}

static void *sender_main(void *arg)
{
    struct daemon *d = arg;
    krc_daemon_name_thread("krc-sender");
    krc_sender_run(d->sender);
    atomic_store(&d->sender_done, 1);
    return NULL;
}

/* The sender's options a configuration gives (the reloadable ones and the
 * rest); the daemon adds what is not configuration (redactor, clients, ...). */
void krc_daemon_sender_options_from(const struct krc_config *cfg, struct krc_sender_options *no)
{
    memset(no, 0, sizeof(*no));
    no->cluster_name = cfg->cluster_name;
    no->webhook_url = cfg->slack_webhook_url;
    no->channel = cfg->slack_channel;
    no->username = cfg->slack_username;
    no->icon_emoji = cfg->slack_icon;
    no->bot_token = cfg->slack_bot_token;
    no->api_url = cfg->slack_api_url;
    no->slack_env = &cfg->slack_env;
    no->mute_seconds = cfg->mute_seconds;
    no->storm_threshold = (int)cfg->storm_threshold;
    no->storm_window_s = cfg->storm_window_s;
    no->storm_delay_s = cfg->storm_summary_delay_s;
    no->recovered_after_s = cfg->recovered_after_s;
    no->incident_reply_interval_s = cfg->incident_reply_interval_s;
    no->incident_update_interval_s = cfg->incident_update_interval_s;
    no->max_log_lines = (int)cfg->log_tail_lines;
    no->routes = cfg->routes;
    no->n_routes = cfg->n_routes;
    no->destinations = cfg->destinations;
    no->n_destinations = cfg->n_destinations;
    no->silences = cfg->silences;
    no->n_silences = cfg->n_silences;
}

static void on_delivered(double seconds, void *userdata)
{
    struct daemon *d = userdata;
    krc_health_on_delivered(seconds, &d->health);
}

/* A kubernetes-event destination is declared (it replaces the implicit one). */
static int events_declared(const struct krc_config *cfg)
{
    for (size_t i = 0; i < cfg->n_destinations; i++) {
        if (krc_dest_is(&cfg->destinations[i], "kubernetes-event")) {
            return 1;
        }
    }
    return 0;
}

static int setup_sender(struct daemon *d, struct krc_error *err)
{
    const struct krc_config *cfg = d->cfg;
    struct krc_sender_options no;
    int rc;

    rc = krc_config_redactor(cfg, &d->redactor, err);
    if (rc < 0) {
        return rc;
    }
    krc_daemon_sender_options_from(cfg, &no);
    no.ca_file = getenv("KRC_SLACK_CA_FILE");
    no.log_ignore = cfg->log_ignore_patterns.patterns; /* compiled at load */
    no.n_log_ignore = cfg->log_ignore_patterns.n_patterns;
    no.redactor = d->redactor;
    no.store_path = d->db_path[0] ? d->db_path : NULL;
    no.store_options = &d->store_opts;
    no.store_flags = d->store_flags;
    no.on_delivered = on_delivered;
    no.on_posted = krc_daemon_on_posted;
    no.on_delivered_userdata = d;
    no.cancel = &d->cancel;
    no.kubernetes_events = cfg->kubernetes_events;
    no.kube_auth = &d->auth;
    no.kube_tokens = d->tokens;
    d->sender = krc_sender_new(&no, err);
    if (d->sender == NULL) {
        return err != NULL && err->code ? err->code : KRC_ENOMEM;
    }
    /* one line each: name, kind, host (never a URL's path or token) */
    krc_sender_log_destinations(d->sender);
    if (cfg->kubernetes_events) {
        krc_log(KRC_LOG_INFO,
                "writing an events.k8s.io/v1 Event (RestartDiagnosed) on each "
                "restarted pod (kubernetesEvents%s)",
                events_declared(cfg) ? ": the declared kubernetes-event destinations, by route"
                                     : "");
    }
    if (!krc_sender_has_destination(d->sender)) {
        krc_log(KRC_LOG_WARN,
                "no Slack destination configured (SLACK_WEBHOOK_URL, or "
                "SLACK_BOT_TOKEN with SLACK_CHANNEL, or routes, or destinations): "
                "restarts are detected, diagnosed and logged, but nothing will be "
                "posted%s",
                cfg->kubernetes_events ? " (only their Kubernetes Events are written)" : "");
    } else if (cfg->slack_bot_token != NULL && cfg->slack_bot_token[0] != '\0') {
        krc_log(KRC_LOG_INFO, "posting to Slack with the Web API (threads per pod, log files)");
    } else if (cfg->slack_webhook_url != NULL && cfg->slack_webhook_url[0] != '\0') {
        char origin[256];
        krc_http_url_origin(cfg->slack_webhook_url, origin, sizeof(origin));
        krc_log(KRC_LOG_INFO, "posting to Slack through the incoming webhook at %s%s", origin,
                cfg->n_routes > 0 ? " and the configured routes" : "");
    } else if (cfg->n_destinations == 0) {
        krc_log(KRC_LOG_INFO,
                "posting to Slack through %zu configured route(s) only; restarts no route "
                "matches are diagnosed but not posted",
                cfg->n_routes);
    }
    return 0;
}

/* The detection table is created when this replica starts watching (at
 * start-up, or when it becomes the leader): the start-up window counts back
 * from this moment, not from the start of the process, so a standby that
 * takes over after hours does not report the restarts of those hours. */
int krc_daemon_start_watches(struct daemon *d)
{
    int64_t now = krc_clock_now();

    for (size_t i = 0; i < d->n_scopes; i++) {
        d->scopes[i].state = krc_pod_state_new(now - d->cfg->startup_window_s, now);
        if (d->scopes[i].state == NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory");
            return KRC_ENOMEM;
        }
    }
    for (size_t i = 0; i < d->n_scopes; i++) {
        if (pthread_create(&d->scopes[i].thread, NULL, watch_main, &d->scopes[i]) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start a watch thread");
            return KRC_ENOMEM;
        }
        d->scopes[i].started = 1;
    }
    d->watching = 1;
    krc_daemon_track_start(d);
    return 0;
}

/* --- lifecycle ------------------------------------------------------------ */

static void free_restart_item(void *p)
{
    krc_restart_free(p);
}

/* One malloc arena for all threads: the watch thread allocates nothing per
 * event once warm and most small blocks come from per-thread caches, so there
 * is little lock contention, and memory one thread frees (a worker's
 * collection, the pruner's pages) is reused by the others instead of staying
 * resident in a second arena.
 * Fixed thresholds instead of glibc's sliding ones: collecting a restart grows
 * the heap top by a few hundred KiB that glibc otherwise hands back with brk()
 * after every restart (two system calls and re-faulted pages each time, ~15%
 * of a worker's CPU); 512 KiB of free top is kept while restarts keep coming
 * and the idle workers' malloc_trim returns it after a burst. Blocks of 256
 * KiB and more are mmap'd (the pod hash table). */
static void tune_malloc(void)
{
#ifndef __SANITIZE_ADDRESS__
    /* clang-tidy: called once at start-up, before any thread exists */
    /* NOLINTBEGIN(concurrency-mt-unsafe) */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024);
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    /* NOLINTEND(concurrency-mt-unsafe) */
#endif
}

/* Signals are taken by sigwait in the main thread only. */
static void block_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void daemon_init(struct daemon *d, const struct krc_config *cfg)
{
    memset(d, 0, sizeof(*d));
    krc_pipeline_status_init(&d->status);
    krc_health_init(&d->health);
    d->cfg = cfg;
    atomic_init(&d->live, cfg);
    atomic_init(&d->live_filter, NULL);
    atomic_init(&d->resume_due, 0);
    d->store_flags = KRC_STORE_DEFER_CONNECT;
    d->health.cfg = cfg;
    d->health.status = &d->status;
}

/* Kubernetes access: credentials, the token source and the filter. */
static int setup_kube(struct daemon *d, struct krc_error *e)
{
    const struct krc_config *cfg = d->cfg;
    struct krc_kube_auth_options ao;

    memset(&ao, 0, sizeof(ao));
    ao.kubeconfig = cfg->kubeconfig;
    ao.context = cfg->context;
    if (krc_kube_auth_load(&ao, &d->auth, e) < 0) {
        krc_log(KRC_LOG_ERROR, "cannot configure Kubernetes access: %s", e->msg);
        return e->code ? e->code : KRC_EINVAL;
    }
    krc_log(KRC_LOG_INFO, "Kubernetes API %s (%s)", d->auth.server, d->auth.source);
    if (d->auth.insecure_skip_tls_verify) {
        krc_log(KRC_LOG_WARN,
                "WARNING: insecure-skip-tls-verify is set in %s: the API server's certificate is "
                "NOT verified and the connection can be intercepted",
                d->auth.source);
    }
    if (d->auth.token != NULL) {
        krc_log_add_secret(d->auth.token);
    }
    d->tokens = krc_token_source_new(d->auth.token, d->auth.token_file, 60);
    if (d->tokens == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        return KRC_ENOMEM;
    }
    if (krc_filter_new(cfg->watched_namespaces, cfg->ignored_namespaces,
                       cfg->watched_pod_name_prefixes, cfg->ignored_pod_name_prefixes, &d->filter,
                       e) < 0) {
        krc_log(KRC_LOG_ERROR, "invalid filter: %s", e->msg);
        return KRC_EINVAL;
    }
    atomic_store(&d->live_filter, d->filter);
    return 0;
}

/* The watch scopes (one per plain watched namespace, else the cluster), each
 * with its client, and the recovery client. */
static int setup_scopes(struct daemon *d, struct krc_error *e)
{
    const char *const *names = NULL;
    size_t n_names = krc_filter_plain_namespaces(d->filter, &names);

    d->n_scopes = n_names > 0 ? n_names : 1;
    d->scopes = krc_calloc(d->n_scopes, sizeof(struct scope));
    d->health.watches = krc_calloc(d->n_scopes, sizeof(struct krc_health_watch));
    if (d->scopes == NULL || d->health.watches == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        return KRC_ENOMEM;
    }
    d->health.n_watches = d->n_scopes;
    for (size_t i = 0; i < d->n_scopes; i++) {
        struct scope *s = &d->scopes[i];
        s->d = d;
        s->namespace = n_names > 0 ? names[i] : NULL;
        s->health = &d->health.watches[i];
        s->health->namespace = s->namespace;
        s->client = krc_kube_client_new(&d->auth, d->tokens, e);
        if (s->client == NULL) {
            krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s",
                    e->msg[0] ? e->msg : "out of memory");
            return KRC_ENOMEM;
        }
    }
    if (n_names > 0) {
        krc_log(KRC_LOG_INFO,
                "watching %zu namespace(s) only (namespace-scoped permissions suffice)", n_names);
    } else {
        krc_log(KRC_LOG_INFO, "watching pods in all namespaces");
    }
    return 0;
}

/* /mcp (mcpTokenFile): the read-only MCP tools over the history, with a
 * Kubernetes client of their own for explain_pod. Without a history there is
 * nothing to serve: a warning, and the daemon runs on without /mcp. */
static int setup_mcp(struct daemon *d, struct krc_error *e)
{
    struct krc_mcp_tools_config tc;
    struct krc_mcp_scope_config sc;

    if (d->cfg->mcp_token_file == NULL || d->cfg->mcp_token_file[0] == '\0') {
        return 0;
    }
    if (d->db_path[0] == '\0') {
        krc_log(KRC_LOG_WARN, "mcpTokenFile is set but the history is unavailable: no /mcp");
        return 0;
    }
    d->mcp_client = krc_kube_client_new(&d->auth, d->tokens, e);
    if (d->mcp_client == NULL) {
        return -1;
    }
    memset(&tc, 0, sizeof(tc));
    tc.db_path = d->db_path;
    tc.db_password_file = d->cfg->db_password_file;
    tc.kube = d->mcp_client;
    tc.redactor = d->redactor;
    krc_mcp_scope_config_from(d->cfg, &sc);
    tc.scope = &sc;
    if (krc_mcp_tools_new(&tc, &d->mcp_tools, e) < 0 ||
        krc_mcp_tools_server(d->mcp_tools, &d->mcp, e) < 0) {
        return -1;
    }
    d->health.mcp = d->mcp;
    return 0;
}

/* Everything before the threads: Kubernetes access, the queue, the scopes,
 * the history, the sender, leader election and the health endpoint. */
static int setup(struct daemon *d, struct krc_error *e)
{
    if (setup_kube(d, e) < 0) {
        return -1;
    }
    if (krc_queue_init(&d->queue, QUEUE_CAPACITY) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        return KRC_ENOMEM;
    }
    if (setup_scopes(d, e) < 0) {
        return -1;
    }
    krc_daemon_track_setup(d);
    if (krc_daemon_open_history(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "history database: %s", e->msg);
        return -1;
    }
    if (setup_sender(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "invalid alert configuration: %s", e->msg);
        return -1;
    }
    if (d->cfg->leader_elect && krc_daemon_setup_leader(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "leader election: %s", e->msg);
        return -1;
    }
    /* Last of what the HTTP threads read (the sender, the leader): they
     * start here, and those pointers are not written again. */
    d->health.sender = d->sender;
    d->health.leader = d->leader;
    if (setup_mcp(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "MCP endpoint: %s", e->msg);
        return -1;
    }
    if (krc_health_start(&d->health, e) < 0) {
        krc_log(KRC_LOG_ERROR, "health and metrics endpoint: %s", e->msg);
        return -1;
    }
    if (krc_daemon_accel_setup(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "GPU time lost: %s", e->msg);
        return -1;
    }
    return 0;
}

/* What a worker's pipeline uses: its own client and store connection, the
 * daemon's shared parts. */
static int setup_worker(struct daemon *d, struct worker *w, struct krc_error *e)
{
    struct krc_pipeline_deps *p = &w->deps;

    w->d = d;
    p->collect = krc_collect;
    p->log_file = krc_collect_log_file;
    p->config = &d->live;
    p->sender = d->sender;
    p->redactor = d->redactor;
    p->leader = d->leader;
    p->lost = &d->lost;
    p->restarts_detected = d->health.std.restarts_detected;
    p->restarts_intentional = d->health.std.restarts_intentional;
    p->restarts_amended = d->health.std.restarts_amended;
    p->status = &d->status;
    p->track = d->track; /* an incident's first alert says what changed (NULL: off) */
    p->client = krc_kube_client_new(&d->auth, d->tokens, e);
    if (p->client == NULL) {
        krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s", e->msg);
        return KRC_ENOMEM;
    }
    krc_kube_client_set_timeout(p->client, 10000);
    if (d->store != NULL && krc_daemon_open_store(d, 0, &p->store, e) < 0) {
        krc_log(KRC_LOG_ERROR, "history: %s", e->msg);
        p->store = NULL;
    }
    if (p->store != NULL && (p->deferred = krc_pipeline_deferred_new()) == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        return KRC_ENOMEM;
    }
    return 0;
}

static int start_workers(struct daemon *d, struct krc_error *e)
{
    d->n_workers = (size_t)d->cfg->workers;
    d->workers = krc_calloc(d->n_workers, sizeof(struct worker));
    if (d->workers == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        return KRC_ENOMEM;
    }
    for (size_t i = 0; i < d->n_workers; i++) {
        struct worker *w = &d->workers[i];
        if (setup_worker(d, w, e) < 0) {
            return KRC_ENOMEM;
        }
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start a worker thread");
            return KRC_ENOMEM;
        }
        w->started = 1;
    }
    return 0;
}

/* The threads: workers, pruner, sender, then the election (or the watches). */
static int start(struct daemon *d, struct krc_error *e)
{
    if (start_workers(d, e) < 0) {
        return -1;
    }
    if (d->store != NULL) {
        /* Undelivered notifications from before: send them first (with
         * leader election once this replica leads: a standby posts nothing). */
        if (d->cfg->leader_elect) {
            /* at the take-over */
        } else if (d->store_flags & KRC_STORE_CONNECT_ON_USE) {
            atomic_store(&d->resume_due, 1); /* PostgreSQL down: once it answers */
        } else {
            krc_daemon_resume_outbox(d, d->store);
        }
        if (pthread_create(&d->pruner, NULL, krc_daemon_pruner_main, d) == 0) {
            d->pruner_started = 1;
        }
        /* The main thread needs the database only at start-up. */
        krc_store_close(d->store);
        d->store = NULL;
    }
    /* The sender runs on a standby too, idle: nothing is queued for it until
     * this replica leads. */
    if (pthread_create(&d->sender_thread, NULL, sender_main, d) != 0) {
        krc_log(KRC_LOG_ERROR, "cannot start the Slack sender thread");
        return -1;
    }
    d->sender_started = 1;
    if (d->cfg->leader_elect) {
        if (pthread_create(&d->leader_thread, NULL, krc_daemon_leader_main, d->leader) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start the leader election thread");
            return -1;
        }
        d->leader_started = 1;
    } else if (krc_daemon_start_watches(d) < 0) {
        d->cancel = 1;
        return -1;
    }
    return 0;
}

/* Wait for a signal, for leadership (then watch), for its loss, or for a
 * watch loop to give up (it sets cancel). Returns the exit code. */
static int wait_for_signals(struct daemon *d, const sigset_t *sigs, const atomic_int *stop_flag,
                            int *ret_signal)
{
    int sig = 0;

    while (!d->cancel) {
        if (stop_flag != NULL && atomic_load(stop_flag)) {
            krc_log(KRC_LOG_INFO, "stop requested; shutting down");
            return 0;
        }
        struct timespec ts = {0, 200 * 1000000L};
        siginfo_t si;
        sig = sigtimedwait(sigs, &si, &ts);
        if (sig == SIGHUP) {
            krc_daemon_reload(d);
            continue;
        }
        if (sig == SIGTERM || sig == SIGINT) {
            krc_log(KRC_LOG_INFO, "%s received; shutting down",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
            *ret_signal = sig;
            break;
        }
        if (d->leader != NULL && krc_daemon_follow_leader(d)) {
            break;
        }
    }
    return (sig == SIGTERM || sig == SIGINT) ? 0 : 1;
}

/* The sender posts what is queued for at most DRAIN_MS (none after the
 * Lease was lost); what is left is logged as not sent. */
static void drain_sender(struct daemon *d)
{
    /* A replica that lost the Lease does not drain: nothing more is posted
     * (leadership_lost aborted the sender already). */
    int64_t deadline = krc_clock_mono_ms() + (atomic_load(&d->lost) ? 0 : DRAIN_MS);

    while (krc_sender_pending(d->sender) > 0 && krc_clock_mono_ms() < deadline) {
        krc_clock_sleep_ms(50, NULL);
    }
    /* The message in flight may finish (Slack may be processing it already);
     * a hung one is cut after SENDER_GRACE_MS. */
    krc_sender_abort(d->sender);
    deadline = krc_clock_mono_ms() + SENDER_GRACE_MS;
    while (!atomic_load(&d->sender_done) && krc_clock_mono_ms() < deadline) {
        krc_clock_sleep_ms(20, NULL);
    }
    if (!atomic_load(&d->sender_done)) {
        krc_log(KRC_LOG_WARN,
                "shutdown: the Slack request in flight did not finish in %ds; "
                "aborted (it stays in the outbox)",
                SENDER_GRACE_MS / 1000);
        krc_sender_abort_transfers(d->sender);
    }
    pthread_join(d->sender_thread, NULL);
}

/* Stop every thread: the endpoint and the watches first, then the workers
 * finish what was detected, the sender drains, and last the Lease is handed
 * over with the complete list of handled restarts. */
static void stop(struct daemon *d)
{
    struct krc_error e;

    d->cancel = 1;
    krc_health_stop(&d->health);
    for (size_t i = 0; d->scopes != NULL && i < d->n_scopes; i++) {
        if (d->scopes[i].started) {
            pthread_join(d->scopes[i].thread, NULL);
        }
    }
    krc_daemon_track_stop(d);
    if (d->queue.items != NULL) {
        krc_queue_close(&d->queue);
    }
    for (size_t i = 0; d->workers != NULL && i < d->n_workers; i++) {
        if (d->workers[i].started) {
            pthread_join(d->workers[i].thread, NULL);
        }
    }
    if (d->sender_started) {
        drain_sender(d);
    }
    if (d->pruner_started) {
        pthread_join(d->pruner, NULL);
    }
    if (d->leader_started) {
        krc_leader_stop(d->leader);
        pthread_join(d->leader_thread, NULL);
        krc_error_clear(&e);
        if (krc_leader_release(d->leader, &e) < 0) {
            krc_log(KRC_LOG_WARN, "leader election: releasing the lease failed: %s", e.msg);
        }
    }
}

/* Free what setup and start built (the threads are stopped). */
static void daemon_cleanup(struct daemon *d)
{
    krc_leader_free(d->leader);
    for (size_t i = 0; d->workers != NULL && i < d->n_workers; i++) {
        krc_kube_client_free(d->workers[i].deps.client);
        krc_store_close(d->workers[i].deps.store);
        krc_pipeline_deferred_free(d->workers[i].deps.deferred);
    }
    krc_store_close(d->store);
    krc_free(d->workers);
    krc_sender_free(d->sender);
    krc_redact_free(d->redactor);
    krc_health_cleanup(&d->health);
    krc_mcp_free(d->mcp);
    krc_mcp_tools_free(d->mcp_tools);
    krc_kube_client_free(d->mcp_client);
    krc_daemon_accel_cleanup(d);
    krc_daemon_track_cleanup(d);
    for (size_t i = 0; d->scopes != NULL && i < d->n_scopes; i++) {
        krc_kube_client_free(d->scopes[i].client);
        krc_pod_state_free(d->scopes[i].state);
    }
    krc_free(d->scopes);
    krc_free(d->health.watches);
    krc_queue_cleanup(&d->queue, free_restart_item);
    krc_filter_free(d->filter);
    krc_daemon_free_reloaded(d);
    krc_token_source_free(d->tokens);
    krc_kube_auth_config_cleanup(&d->auth);
    krc_pipeline_status_cleanup(&d->status);
}

int krc_daemon_run(const struct krc_config *cfg)
{
    return krc_daemon_run_until(cfg, NULL, NULL);
}

int krc_daemon_run_until(const struct krc_config *cfg, const atomic_int *stop_flag, int *ret_signal)
{
    struct daemon d;
    struct krc_error e;
    sigset_t sigs;
    int exit_code = 1;
    int sig = 0;

    daemon_init(&d, cfg);
    tune_malloc();
    krc_error_clear(&e);
    block_signals(&sigs);
    if (setup(&d, &e) == 0 && start(&d, &e) == 0) {
        krc_log(KRC_LOG_INFO, "krc %s started (start-up window %lds)%s", KRC_VERSION,
                cfg->startup_window_s, cfg->leader_elect ? "; waiting to lead" : "");
        exit_code = wait_for_signals(&d, &sigs, stop_flag, &sig);
    }
    if (ret_signal != NULL) {
        *ret_signal = sig;
    }
    stop(&d);
    daemon_cleanup(&d);
    if (exit_code == 0) {
        krc_log(KRC_LOG_INFO, "stopped");
    }
    return exit_code;
}
