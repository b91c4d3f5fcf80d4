#include "krc/daemon.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "krc/clock.h"
#include "krc/filter.h"
#include "krc/kube_auth.h"
#include "krc/kube_client.h"
#include "krc/log.h"
#include "krc/mem.h"
#include "krc/pod_state.h"
#include "krc/queue.h"
#include "krc/restart.h"
#include "krc/watch.h"

#define QUEUE_CAPACITY 4096

struct daemon;

/* One watch loop: the whole cluster, or one namespace. */
struct scope {
    struct daemon *d;
    const char *namespace; /* borrowed from the filter; NULL = all */
    struct krc_kube_client *client;
    struct krc_pod_state *state;
    struct krc_watch_stats stats;
    pthread_t thread;
    int started;
};

struct daemon {
    const struct krc_config *cfg;
    volatile int cancel;
    struct krc_kube_auth_config auth;
    struct krc_token_source *tokens;
    struct krc_filter *filter;
    struct krc_queue queue;
    struct scope *scopes;
    size_t n_scopes;
    pthread_t worker;
    int worker_started;
    atomic_llong restarts_detected;
    atomic_llong restarts_ignored;
};

/* --- detection (watch threads) ------------------------------------------ */

static void log_ignored(const struct krc_restart_delta *d, const char *why)
{
    char count[16];
    struct krc_log_field f[4];
    snprintf(count, sizeof(count), "%d", d->container->restart_count);
    f[0] = (struct krc_log_field){"namespace", d->pod->namespace, 0};
    f[1] = (struct krc_log_field){"pod", d->pod->name, 0};
    f[2] = (struct krc_log_field){"container", d->container->name, 0};
    f[3] = (struct krc_log_field){"restart_count", count, 1};
    krc_log_fields(KRC_LOG_INFO, why, f, 4);
}

static void on_restart(const struct krc_restart_delta *d, void *userdata)
{
    struct scope *s = userdata;
    const struct krc_config *cfg = s->d->cfg;
    struct krc_restart *r;
    int total;

    if (d->pod->ignore) {
        atomic_fetch_add(&s->d->restarts_ignored, 1);
        log_ignored(d, "restart ignored: pod has annotation krc.io/ignore=true");
        return;
    }
    total = krc_restart_pod_total(d->pod);
    if (total > cfg->ignore_restart_count) {
        atomic_fetch_add(&s->d->restarts_ignored, 1);
        log_ignored(d, "restart ignored: pod restart count exceeds IGNORE_RESTART_COUNT");
        return;
    }
    if (cfg->ignore_restarts_with_exit_code_zero && d->container->has_last_terminated &&
        d->container->last_exit_code == 0) {
        atomic_fetch_add(&s->d->restarts_ignored, 1);
        log_ignored(d, "restart ignored: exit code 0 (IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO)");
        return;
    }
    r = krc_restart_from_delta(d);
    if (r == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: restart of %s/%s container %s not queued",
                d->pod->namespace, d->pod->name, d->container->name);
        return;
    }
    atomic_fetch_add(&s->d->restarts_detected, 1);
    /* Back-pressure: wait for the workers rather than drop a restart. */
    for (;;) {
        int rc = krc_queue_push(&s->d->queue, r, 1000);
        if (rc == 0) {
            return;
        }
        if (rc == KRC_ECANCELED || s->d->cancel) {
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
}

static void h_pod(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *userdata)
{
    struct scope *s = userdata;

    if (type == KRC_WATCH_DELETED) {
        krc_pod_state_delete(s->state, pod->uid);
        return;
    }
    if (!krc_filter_pod_allowed(s->d->filter, pod->namespace, pod->name)) {
        return; /* not tracked at all: costs no memory */
    }
    if (krc_pod_state_apply(s->state, pod, on_restart, s) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory tracking pod %s/%s", pod->namespace, pod->name);
    }
}

static void h_sync_end(void *userdata)
{
    struct scope *s = userdata;
    size_t removed = krc_pod_state_sync_end(s->state);
    krc_log(KRC_LOG_INFO, "tracking %zu pods (%s)%s", krc_pod_state_count(s->state),
            s->namespace ? s->namespace : "all namespaces",
            removed ? "; pods deleted while the watch was down were dropped" : "");
}

static void *watch_main(void *arg)
{
    struct scope *s = arg;
    struct krc_watch_options o;
    struct krc_watch_handler h;
    struct krc_error e;

    krc_watch_options_defaults(&o);
    o.namespace = s->namespace;
    o.label_selector = s->d->cfg->label_selector;
    o.idle_timeout_ms = s->d->cfg->watch_idle_timeout_s * 1000;
    o.page_size = (int)s->d->cfg->list_page_size;
    o.streaming_list = s->d->cfg->streaming_list;
    o.cancel = &s->d->cancel;
    o.stats = &s->stats;
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

/* --- the worker ---------------------------------------------------------- */

static void report_restart(const struct krc_restart *r)
{
    char count[16], prev[16], exit_code[16], sig[16], fin[32], missed[16];
    struct krc_log_field f[12];
    size_t n = 0;

    snprintf(count, sizeof(count), "%d", r->restart_count);
    snprintf(prev, sizeof(prev), "%d", r->previous_count);
    snprintf(exit_code, sizeof(exit_code), "%d", r->exit_code);
    snprintf(sig, sizeof(sig), "%d", r->signal);
    snprintf(missed, sizeof(missed), "%d", r->missed);
    if (r->finished_at != 0) {
        krc_clock_format_rfc3339(r->finished_at, fin, sizeof(fin));
    } else {
        fin[0] = '\0';
    }
    f[n++] = (struct krc_log_field){"namespace", r->namespace, 0};
    f[n++] = (struct krc_log_field){"pod", r->pod, 0};
    f[n++] = (struct krc_log_field){"pod_uid", r->uid, 0};
    f[n++] = (struct krc_log_field){"container", r->container, 0};
    f[n++] = (struct krc_log_field){"restart_count", count, 1};
    f[n++] = (struct krc_log_field){"exit_code", r->has_exit_code ? exit_code : "", 1};
    f[n++] = (struct krc_log_field){"reason", r->reason ? r->reason : "", 0};
    f[n++] = (struct krc_log_field){"finished_at", fin, 0};
    f[n++] = (struct krc_log_field){"node", r->node ? r->node : "", 0};
    f[n++] = (struct krc_log_field){"previous_count", prev, 1};
    if (r->missed > 0) {
        f[n++] = (struct krc_log_field){"missed_restarts", missed, 1};
    }
    if (r->is_init) {
        f[n++] = (struct krc_log_field){"init_container", r->is_sidecar ? "sidecar" : "init", 0};
    }
    krc_log_fields(KRC_LOG_INFO, "restart detected", f, n);
}

static void *worker_main(void *arg)
{
    struct daemon *d = arg;
    for (;;) {
        void *item;
        int rc = krc_queue_pop(&d->queue, &item, -1);
        if (rc == KRC_ECANCELED) {
            break;
        }
        if (rc == 0) {
            report_restart(item);
            krc_restart_free(item);
        }
    }
    return NULL;
}

/* --- lifecycle ------------------------------------------------------------ */

static void free_restart_item(void *p)
{
    krc_restart_free(p);
}

int krc_daemon_run(const struct krc_config *cfg)
{
    struct daemon d;
    struct krc_kube_auth_options ao;
    struct krc_error e;
    const char *const *names = NULL;
    size_t n_names;
    sigset_t sigs;
    int exit_code = 1;
    int sig = 0;

    memset(&d, 0, sizeof(d));
    d.cfg = cfg;
    krc_error_clear(&e);

    /* Signals are taken by sigwait in this thread only. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    memset(&ao, 0, sizeof(ao));
    ao.kubeconfig = cfg->kubeconfig;
    ao.context = cfg->context;
    if (krc_kube_auth_load(&ao, &d.auth, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "cannot configure Kubernetes access: %s", e.msg);
        goto out;
    }
    krc_log(KRC_LOG_INFO, "Kubernetes API %s (%s)", d.auth.server, d.auth.source);
    if (d.auth.insecure_skip_tls_verify) {
        krc_log(KRC_LOG_WARN,
                "WARNING: insecure-skip-tls-verify is set in %s: the API server's certificate is "
                "NOT verified and the connection can be intercepted",
                d.auth.source);
    }
    if (d.auth.token != NULL) {
        krc_log_add_secret(d.auth.token);
    }
    d.tokens = krc_token_source_new(d.auth.token, d.auth.token_file, 60);
    if (d.tokens == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        goto out;
    }
    if (krc_filter_new(cfg->watched_namespaces, cfg->ignored_namespaces,
                       cfg->watched_pod_name_prefixes, cfg->ignored_pod_name_prefixes, &d.filter,
                       &e) < 0) {
        krc_log(KRC_LOG_ERROR, "invalid filter: %s", e.msg);
        goto out;
    }
    if (krc_queue_init(&d.queue, QUEUE_CAPACITY) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        goto out;
    }
    n_names = krc_filter_plain_namespaces(d.filter, &names);
    d.n_scopes = n_names > 0 ? n_names : 1;
    d.scopes = krc_calloc(d.n_scopes, sizeof(struct scope));
    if (d.scopes == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        goto out;
    }
    {
        int64_t now = krc_clock_now();
        for (size_t i = 0; i < d.n_scopes; i++) {
            struct scope *s = &d.scopes[i];
            s->d = &d;
            s->namespace = n_names > 0 ? names[i] : NULL;
            s->client = krc_kube_client_new(&d.auth, d.tokens, &e);
            s->state = krc_pod_state_new(now - cfg->startup_window_s, now);
            if (s->client == NULL || s->state == NULL) {
                krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s",
                        e.msg[0] ? e.msg : "out of memory");
                goto out;
            }
        }
    }
    if (n_names > 0) {
        krc_log(KRC_LOG_INFO,
                "watching %zu namespace(s) only (namespace-scoped permissions suffice)", n_names);
    } else {
        krc_log(KRC_LOG_INFO, "watching pods in all namespaces");
    }
    if (pthread_create(&d.worker, NULL, worker_main, &d) != 0) {
        krc_log(KRC_LOG_ERROR, "cannot start the worker thread");
        goto out;
    }
    d.worker_started = 1;
    for (size_t i = 0; i < d.n_scopes; i++) {
        if (pthread_create(&d.scopes[i].thread, NULL, watch_main, &d.scopes[i]) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start a watch thread");
            d.cancel = 1;
            goto out;
        }
        d.scopes[i].started = 1;
    }
    krc_log(KRC_LOG_INFO, "krc %s started (start-up window %lds)", KRC_VERSION,
            cfg->startup_window_s);

    /* Wait for a signal, or for a watch loop to give up (it sets cancel). */
    while (!d.cancel) {
        struct timespec ts = {1, 0};
        siginfo_t si;
        sig = sigtimedwait(&sigs, &si, &ts);
        if (sig == SIGHUP) {
            krc_log(KRC_LOG_INFO, "SIGHUP received; configuration reload is not implemented yet");
            continue;
        }
        if (sig == SIGTERM || sig == SIGINT) {
            krc_log(KRC_LOG_INFO, "%s received; shutting down",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
            break;
        }
    }
    exit_code = (sig == SIGTERM || sig == SIGINT) ? 0 : 1;

out:
    d.cancel = 1;
    for (size_t i = 0; i < d.n_scopes; i++) {
        if (d.scopes[i].started) {
            pthread_join(d.scopes[i].thread, NULL);
        }
    }
    if (d.worker_started) {
        krc_queue_close(&d.queue);
        pthread_join(d.worker, NULL);
    }
    for (size_t i = 0; d.scopes != NULL && i < d.n_scopes; i++) {
        krc_kube_client_free(d.scopes[i].client);
        krc_pod_state_free(d.scopes[i].state);
    }
    krc_free(d.scopes);
    krc_queue_cleanup(&d.queue, free_restart_item);
    krc_filter_free(d.filter);
    krc_token_source_free(d.tokens);
    krc_kube_auth_config_cleanup(&d.auth);
    if (exit_code == 0) {
        krc_log(KRC_LOG_INFO, "stopped");
    }
    return exit_code;
}
