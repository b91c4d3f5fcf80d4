#include "krc/daemon/daemon.h"

#include <malloc.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/collect/collector.h"
#include "krc/diagnose/diagnose.h"
#include "krc/alert/notify.h"
#include "krc/util/redact.h"
#include "krc/detect/filter.h"
#include "krc/serve/http_server.h"
#include "krc/serve/metrics.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/leader.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/detect/pod_state.h"
#include "krc/util/queue.h"
#include "krc/store/report_json.h"
#include "krc/detect/restart.h"
#include "krc/store/store.h"
#include "krc/kube/watch.h"

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

struct daemon;

/* One watch loop: the whole cluster, or one namespace. */
struct scope {
    struct daemon *d;
    const char *namespace; /* borrowed from the filter; NULL = all */
    struct krc_kube_client *client;
    struct krc_pod_state *state;
    struct krc_watch_stats stats;
    atomic_llong pods_tracked; /* written by the watch thread, read by /metrics */
    pthread_t thread;
    int started;
};

struct worker {
    struct daemon *d;
    struct krc_kube_client *client;
    struct krc_store *store; /* this thread's connection, or NULL (history unavailable) */
    pthread_t thread;
    int started;
};

/* What SIGHUP replaced: kept until exit, since threads and the notifier's
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
    struct krc_notifier *notifier;
    struct krc_redactor *redactor;
    regex_t *log_ignore;
    size_t n_log_ignore;
    struct krc_kube_client *recovery_client;
    pthread_t sender;
    int sender_started;
    atomic_int sender_done;
    char db_path[4096];
    struct krc_store *store; /* main thread: resume at start-up, retention */
    pthread_t pruner;
    int pruner_started;
    atomic_llong store_errors;
    atomic_llong not_posted;
    atomic_int store_fault;     /* 1 while the history database is unusable */
    pthread_mutex_t fault_lock; /* store_fault_msg: written by workers, read by /readyz */
    char store_fault_msg[256];
    struct krc_metrics *metrics;
    struct krc_metrics_std std;
    struct krc_http_server *http;
    /* last values copied into the Prometheus counters (collector deltas) */
    long long seen_watch[5];
    long long seen_restarts[5];
    long long seen_notify[7];
    long long seen_store_errors;
    pthread_mutex_t metrics_lock;
    struct krc_leader *leader; /* NULL unless leaderElect */
    pthread_t leader_thread;
    int leader_started;
    int watching; /* watch threads started */
    /* Set by the election thread the moment the Lease is lost: no worker
     * records or queues another restart, and the sender starts no POST. */
    atomic_int lost;
    struct krc_metric *m_reloads;
    struct krc_metric *m_leader; /* NULL unless leaderElect */
};

static const struct krc_config *live_cfg(struct daemon *d)
{
    return atomic_load(&d->live);
}

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
    int total;

    if (d->pod->ignore) {
        log_ignored(d, "restart ignored: pod has annotation krc.io/ignore=true");
        return;
    }
    total = krc_restart_pod_total(d->pod);
    if (total > cfg->ignore_restart_count) {
        log_ignored(d, "restart ignored: pod restart count exceeds IGNORE_RESTART_COUNT");
        return;
    }
    if (cfg->ignore_restarts_with_exit_code_zero && d->container->has_last_terminated &&
        d->container->last_exit_code == 0) {
        log_ignored(d, "restart ignored: exit code 0 (IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO)");
        return;
    }
    r = krc_restart_from_delta(d, atomic_load(&s->d->queued_pod_bytes) + d->pod->raw_len <=
                                      QUEUE_POD_BYTES);
    if (r == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: restart of %s/%s container %s not queued",
                d->pod->namespace, d->pod->name, d->container->name);
        return;
    }
    if (r->pod_json == NULL && d->pod->raw_len > 0 && krc_log_enabled(KRC_LOG_DEBUG)) {
        log_restart_line(KRC_LOG_DEBUG, d,
                         "restart queued without a copy of its pod (backlog over the pod budget): "
                         "the worker will GET the pod");
    }
    atomic_fetch_add(&s->d->queued_pod_bytes, r->pod_json_len);
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
}

static void h_pod(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *userdata)
{
    struct scope *s = userdata;

    if (type == KRC_WATCH_DELETED) {
        krc_pod_state_delete(s->state, pod->uid);
        atomic_store(&s->pods_tracked, (long long)krc_pod_state_count(s->state));
        return;
    }
    if (!krc_filter_pod_allowed(atomic_load(&s->d->live_filter), pod->namespace, pod->name)) {
        /* not tracked at all: costs no memory (and a pod a reload filtered
         * out leaves the table) */
        if (krc_pod_state_forget(s->state, pod->uid)) {
            atomic_store(&s->pods_tracked, (long long)krc_pod_state_count(s->state));
        }
        return;
    }
    if (krc_pod_state_apply(s->state, pod, on_restart, s) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory tracking pod %s/%s", pod->namespace, pod->name);
    }
    atomic_store(&s->pods_tracked, (long long)krc_pod_state_count(s->state));
}

static void h_sync_end(void *userdata)
{
    struct scope *s = userdata;
    size_t removed = krc_pod_state_sync_end(s->state);
    atomic_store(&s->pods_tracked, (long long)krc_pod_state_count(s->state));
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
static void name_thread(const char *name)
{
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

static void *watch_main(void *arg)
{
    struct scope *s = arg;
    struct krc_watch_options o;
    struct krc_watch_handler h;
    struct krc_error e;

    name_thread("krc-watch");
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

/* --- the workers: collect, diagnose, decide, hand over to the sender ------ */

static void log_detected(const struct krc_restart *r)
{
    char count[16], prev[16], exit_code[16], fin[32], missed[16];
    struct krc_log_field f[12];
    size_t n = 0;

    snprintf(count, sizeof(count), "%d", r->restart_count);
    snprintf(prev, sizeof(prev), "%d", r->previous_count);
    snprintf(exit_code, sizeof(exit_code), "%d", r->exit_code);
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

static void log_diagnosed(const struct krc_restart *r, const struct krc_diagnosis *dg,
                          enum krc_notify_decision decision, int64_t collect_ms)
{
    char ms[24];
    char gpus[24];
    struct krc_log_field f[9];
    size_t n = 0;

    snprintf(ms, sizeof(ms), "%lld", (long long)collect_ms);
    snprintf(gpus, sizeof(gpus), "%ld", dg->gpus);
    f[n++] = (struct krc_log_field){"namespace", r->namespace, 0};
    f[n++] = (struct krc_log_field){"pod", r->pod, 0};
    f[n++] = (struct krc_log_field){"container", r->container, 0};
    f[n++] = (struct krc_log_field){"cause", krc_cause_name(dg->cause), 0};
    f[n++] = (struct krc_log_field){"summary", dg->summary ? dg->summary : "", 0};
    f[n++] = (struct krc_log_field){"decision", krc_notify_decision_name(decision), 0};
    f[n++] = (struct krc_log_field){"collect_ms", ms, 1};
    if (dg->gpus > 0) {
        f[n++] = (struct krc_log_field){"gpus", gpus, 1};
    }
    krc_log_fields(KRC_LOG_INFO, "restart diagnosed", f, n);
}

/* Web API threads get the previous log as a file, not only the tail: its
 * last FULL_LOG_KEEP bytes, reading at most FULL_LOG_CAP (the kubelet
 * rotates container logs at 10 MiB by default). */
#define FULL_LOG_KEEP (4u * 1024u * 1024u)
#define FULL_LOG_CAP (16L * 1024L * 1024L)

static char *fetch_full_log(struct worker *w, const struct krc_restart *r, size_t *ret_len)
{
    unsigned char *out = NULL;
    struct krc_logtail_cut cut;
    struct krc_error e;

    krc_error_clear(&e);
    if (krc_collect_full_log(w->client, r, FULL_LOG_KEEP, FULL_LOG_CAP, &out, ret_len, &cut, &e) <
        0) {
        krc_log(KRC_LOG_DEBUG, "log file of %s/%s container %s not fetched: %s", r->namespace,
                r->pod, r->container, e.msg);
        return NULL;
    }
    if (cut.dropped > 0 || cut.capped) {
        char note[320];
        krc_logtail_describe(&cut, note, sizeof(note));
        krc_log(KRC_LOG_DEBUG, "log file of %s/%s container %s: %s", r->namespace, r->pod,
                r->container, note);
    }
    return (char *)out;
}

/* A history fault is shown on /readyz until a later write succeeds. */
static void store_failed(struct daemon *d, const char *msg)
{
    atomic_fetch_add(&d->store_errors, 1);
    pthread_mutex_lock(&d->fault_lock);
    snprintf(d->store_fault_msg, sizeof(d->store_fault_msg), "%s", msg);
    pthread_mutex_unlock(&d->fault_lock);
    atomic_store(&d->store_fault, 1);
}

/* Store the restart (and its pending message). Returns KRC_STORE_EXISTS when
 * it was already recorded; store errors are logged and counted, and the
 * alert goes out anyway (the daemon keeps working without its history). */
static int record(struct worker *w, const struct krc_restart *r, const struct krc_report *rep,
                  const struct krc_diagnosis *dg, enum krc_notify_decision decision,
                  struct krc_notify_message *msg, int64_t *ret_outbox_id)
{
    struct krc_store_restart rec;
    struct krc_store_outbox ob;
    struct krc_error e;
    char *json = NULL;
    int64_t restart_id = 0;
    int64_t outbox_id = 0;
    int rc;

    if (w->store == NULL) {
        return 0;
    }
    krc_error_clear(&e);
    if (krc_report_json_build(rep, dg, w->d->redactor, &json, &e) < 0) {
        krc_log(KRC_LOG_WARN, "history: report of %s/%s not serialised: %s", r->namespace, r->pod,
                e.msg);
        json = NULL;
    }
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = r->uid;
    rec.container = r->container;
    rec.restart_count = r->restart_count;
    rec.namespace = r->namespace;
    rec.pod = r->pod;
    rec.workload_kind = rep->workload_kind;
    rec.workload_name = rep->workload_name;
    rec.node = r->node;
    rec.cause = dg->cause;
    rec.has_exit_code = r->has_exit_code;
    rec.exit_code = r->exit_code;
    rec.signal = dg->signal;
    rec.reason = r->reason;
    rec.started_at = r->started_at;
    rec.finished_at = r->finished_at;
    rec.container_id = r->container_id;
    rec.detected_at = r->detected_at;
    rec.decision = krc_notify_decision_name(decision);
    rec.summary = dg->summary;
    rec.confidence = dg->confidence;
    rec.message = msg != NULL ? msg->body : NULL;
    rec.report_json = json;
    if (msg != NULL && msg->body != NULL) {
        memset(&ob, 0, sizeof(ob));
        ob.kind = msg->kind;
        ob.destination = msg->destination;
        ob.channel = msg->channel[0] ? msg->channel : NULL;
        ob.thread_key = msg->thread_key;
        ob.body = msg->body;
        ob.fallback = msg->fallback;
    }
    krc_error_clear(&e);
    rc = krc_store_record(w->store, &rec, msg != NULL && msg->body != NULL ? &ob : NULL,
                          &restart_id, &outbox_id, &e);
    krc_free(json);
    if (rc == KRC_STORE_EXISTS) {
        krc_log(KRC_LOG_INFO,
                "restart of %s/%s container %s (count %d) already recorded; not "
                "alerted again",
                r->namespace, r->pod, r->container, r->restart_count);
        return rc;
    }
    if (rc < 0) {
        store_failed(w->d, e.msg);
        krc_log(KRC_LOG_ERROR, "history: restart of %s/%s not recorded: %s; alerting anyway",
                r->namespace, r->pod, e.msg);
        return 0;
    }
    atomic_store(&w->d->store_fault, 0);
    if (ret_outbox_id != NULL) {
        *ret_outbox_id = outbox_id;
    }
    if (msg != NULL) {
        msg->restart_id = restart_id;
    }
    return 0;
}

static void left_to_next_leader(const struct krc_restart *r)
{
    krc_log(KRC_LOG_INFO,
            "restart of %s/%s container %s (count %d) not alerted by this replica: leadership "
            "lost; the next leader reports it",
            r->namespace, r->pod, r->container, r->restart_count);
}

static void process_restart(struct worker *w, struct krc_restart *r)
{
    struct daemon *d = w->d;
    enum krc_notify_decision decision = KRC_NOTIFY_NO_DESTINATION;
    struct krc_collector_options co;
    struct krc_report *rep = NULL;
    struct krc_diagnosis *dg = NULL;
    char *full_log = NULL;
    size_t full_log_len = 0;
    struct krc_error e;
    int64_t t0 = krc_clock_mono_ms();
    int rc;

    log_detected(r);
    if (atomic_load(&d->lost)) {
        left_to_next_leader(r);
        return;
    }
    if (d->leader != NULL &&
        krc_leader_was_handled(d->leader, r->uid, r->container, r->restart_count, r->finished_at,
                               r->container_id)) {
        /* re-detected by a new leader: its predecessor handled it */
        krc_log(KRC_LOG_INFO,
                "restart of %s/%s container %s (count %d) already handled by the previous "
                "leader; not alerted again",
                r->namespace, r->pod, r->container, r->restart_count);
        return;
    }
    if (w->store != NULL) {
        int64_t id = 0;
        struct krc_store_identity ident = {r->uid, r->container, r->restart_count, r->finished_at,
                                           r->container_id};
        int found = krc_store_find_restart(w->store, &ident, &id, &e);
        if (found == 1) {
            /* e.g. re-detected after a restart of krc: it was handled then */
            krc_log(KRC_LOG_INFO,
                    "restart of %s/%s container %s (count %d) already recorded as "
                    "#%lld; not alerted again",
                    r->namespace, r->pod, r->container, r->restart_count, (long long)id);
            return;
        }
        if (found < 0) {
            atomic_fetch_add(&d->store_errors, 1);
            krc_log(KRC_LOG_ERROR, "history: %s", e.msg);
        }
        krc_error_clear(&e);
    }
    /* allocated once the restart is known to be this replica's to handle */
    rep = krc_report_new();
    dg = krc_calloc(1, sizeof(*dg));
    if (rep == NULL || dg == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: restart of %s/%s not diagnosed", r->namespace,
                r->pod);
        krc_report_free(rep);
        krc_free(dg);
        return;
    }
    krc_diagnosis_init(dg);
    krc_error_clear(&e);
    if (d->notifier != NULL) {
        decision = krc_notifier_decide(d->notifier, r);
    }
    krc_collector_options_defaults(&co);
    co.tail_lines = (int)live_cfg(d)->log_tail_lines;
    co.limit_bytes = live_cfg(d)->log_limit_bytes;
    co.transfer_limit_bytes = live_cfg(d)->log_transfer_limit_bytes;
    if (decision == KRC_NOTIFY_ALERT || decision == KRC_NOTIFY_THREAD ||
        decision == KRC_NOTIFY_NO_DESTINATION) {
        rc = krc_collect(w->client, r, &co, rep, &e);
        if (rc == 0 && d->notifier != NULL && krc_notifier_wants_full_log(d->notifier) &&
            decision != KRC_NOTIFY_NO_DESTINATION && rep->log != NULL) {
            full_log = fetch_full_log(w, r, &full_log_len);
        }
    } else {
        /* muted, grouped or silenced: recorded from what the watch saw, no requests */
        rc = krc_collect_minimal(r, rep, &e);
    }
    if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "restart of %s/%s container %s: %s", r->namespace, r->pod,
                r->container, e.msg);
    }
    if (krc_diagnose(rep, r->container, dg, &e) < 0 && krc_diagnose(rep, NULL, dg, &e) < 0) {
        krc_log(KRC_LOG_WARN, "restart of %s/%s container %s not diagnosed: %s", r->namespace,
                r->pod, r->container, e.msg);
    }
    if (d->metrics != NULL) {
        krc_metric_inc(d->std.restarts_detected,
                       (const char *[]){r->namespace, krc_cause_name(dg->cause)});
    }
    if (d->notifier != NULL) {
        struct krc_notify_message msg;
        int64_t outbox_id = 0;
        decision = krc_notifier_prepare(d->notifier, r, decision, rep, dg, &msg);
        if (decision == KRC_NOTIFY_NO_DESTINATION) {
            atomic_fetch_add(&d->not_posted, 1);
        }
        log_diagnosed(r, dg, decision, krc_clock_mono_ms() - t0);
        if (atomic_load(&d->lost)) {
            /* lost the Lease while collecting: not recorded, not posted */
            left_to_next_leader(r);
            krc_notify_message_cleanup(&msg);
            goto out;
        }
        /* Recorded with its pending notification in one transaction before
         * anything is sent: a crash cannot lose or repeat it. */
        rc = record(w, r, rep, dg, decision, &msg, &outbox_id);
        if (d->leader != NULL && rc != KRC_STORE_EXISTS && msg.body == NULL) {
            /* nothing to post (muted, grouped, silenced): handled now; a
             * message is published as handled once Slack accepted it
             * (on_posted), so that a new leader posts what this one could
             * not */
            krc_leader_note_handled(d->leader, r->uid, r->container, r->restart_count,
                                    r->finished_at, r->container_id);
        }
        if (rc == KRC_STORE_EXISTS) {
            krc_notify_message_cleanup(&msg);
            goto out;
        }
        if (msg.body != NULL) {
            /* ownership of rep, dg and full_log moves to the notifier */
            krc_notifier_enqueue(d->notifier, &msg, outbox_id, rep, dg, full_log, full_log_len);
            return;
        }
    } else {
        log_diagnosed(r, dg, decision, krc_clock_mono_ms() - t0);
        record(w, r, rep, dg, decision, NULL, NULL);
        if (d->leader != NULL) {
            krc_leader_note_handled(d->leader, r->uid, r->container, r->restart_count,
                                    r->finished_at, r->container_id);
        }
    }
out:
    krc_report_free(rep);
    krc_diagnosis_cleanup(dg);
    krc_free(dg);
    krc_free(full_log);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int worked = 0; /* restarts processed since memory was last released */
    name_thread("krc-worker");
    for (;;) {
        void *item;
        int rc = krc_queue_pop(&w->d->queue, &item, worked ? WORKER_IDLE_RELEASE_MS : -1);
        if (rc == KRC_ECANCELED) {
            break;
        }
        if (rc == KRC_ETIMEOUT) {
            /* A burst is over (no restart for WORKER_IDLE_RELEASE_MS): hand
             * the memory it used back to the system, the SQLite pages this
             * worker cached (the next restart may be hours away and reads
             * them again from the OS page cache), then glibc's free pages
             * (not under AddressSanitizer, where glibc is not the
             * allocator). Not after every restart: under a steady trickle
             * that cost ~0.7 ms of CPU per restart (docs/performance.md). */
            krc_store_release_memory(w->store);
#ifndef __SANITIZE_ADDRESS__
            malloc_trim(0);
#endif
            worked = 0;
            continue;
        }
        if (rc == 0) {
            atomic_fetch_sub(&w->d->queued_pod_bytes, ((struct krc_restart *)item)->pod_json_len);
            process_restart(w, item);
            krc_restart_free(item);
            worked = 1;
        }
    }
    return NULL;
}

/* Retention without blocking the watch or the workers: small batches, each
 * its own short transaction, once a minute. */
static void *pruner_main(void *arg)
{
    struct daemon *d = arg;
    struct krc_store *st = NULL;
    struct krc_error e;

    name_thread("krc-store");
    krc_error_clear(&e);
    if (krc_store_open(d->db_path, 0, &st, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "history retention disabled: %s", e.msg);
        return NULL;
    }
    while (!d->cancel) {
        int64_t deleted = 0;
        int64_t total = 0;
        do {
            krc_error_clear(&e);
            deleted = 0;
            if (krc_store_prune(st, d->cfg->history_max_age_s, d->cfg->history_max_rows, 100,
                                &deleted, &e) < 0) {
                atomic_fetch_add(&d->store_errors, 1);
                krc_log(KRC_LOG_ERROR, "history retention: %s", e.msg);
                break;
            }
            total += deleted;
        } while (deleted > 0 && !d->cancel && !krc_clock_sleep_ms(20, &d->cancel));
        if (total > 0) {
            krc_log(KRC_LOG_INFO, "history retention: %lld old restart(s) pruned",
                    (long long)total);
        }
        krc_clock_sleep_ms(60000, &d->cancel);
    }
    krc_store_close(st);
    return NULL;
}

struct resume {
    struct daemon *d;
    struct krc_store *store;
    size_t superseded;
};

/* Did this replica or its predecessor handle the stored restart? By its
 * identity as stored (finishedAt, containerID, count). */
static int resumed_was_handled(struct krc_leader *l, const struct krc_store_row *row)
{
    char cid[160];
    int64_t fin = krc_store_identity_container_id(row->identity, cid, sizeof(cid));

    return krc_leader_was_handled(l, row->pod_uid, row->container, row->restart_count, fin,
                                  cid[0] ? cid : NULL);
}

static int resume_one(const struct krc_store_message *m, void *ud)
{
    struct resume *rs = ud;
    struct daemon *d = rs->d;
    struct krc_store_entry *ent = NULL;
    struct krc_error e;
    int rc;

    /* With leader election, the row's restart: published as handled once
     * posted, and not posted at all when the leader this replica took over
     * from did (its hand-over list names it). */
    krc_error_clear(&e);
    if (d->leader != NULL && m->restart_id > 0 &&
        krc_store_get(rs->store, m->restart_id, &ent, &e) == 0 &&
        resumed_was_handled(d->leader, &ent->row)) {
        krc_store_mark_attempt(rs->store, m->id,
                               "superseded: the previous leader posted this restart", 1, NULL);
        rs->superseded++;
        krc_store_entry_free(ent);
        return 0;
    }
    rc = krc_notifier_resume(d->notifier, m, ent != NULL ? &ent->row : NULL);
    krc_store_entry_free(ent);
    if (rc == KRC_ENOTFOUND || rc == KRC_EINVAL) {
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: destination %s is no longer configured; "
                "marked failed",
                (long long)m->id, m->destination);
        krc_store_mark_attempt(rs->store, m->id, "destination no longer configured", 1, NULL);
    }
    return 0;
}

/* Queue the outbox rows still pending from before. Without leader election
 * at start-up. With it, only when this replica becomes the leader, never on
 * a standby: the rows were decided while an earlier process of this replica
 * led, and one the leader in between posted (its hand-over list, merged at
 * the take-over, names the restart) is marked failed, not sent again. */
static void resume_outbox(struct daemon *d, struct krc_store *store)
{
    struct resume rs = {d, store, 0};
    size_t before = krc_notifier_pending(d->notifier);
    struct krc_error e;

    krc_error_clear(&e);
    if (krc_store_pending(store, resume_one, &rs, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "outbox: %s", e.msg);
        return;
    }
    if (krc_notifier_pending(d->notifier) > before) {
        krc_log(KRC_LOG_INFO, "outbox: resuming %zu undelivered notification(s)",
                krc_notifier_pending(d->notifier) - before);
    }
    if (rs.superseded > 0) {
        krc_log(KRC_LOG_INFO,
                "outbox: %zu undelivered notification(s) of an earlier leadership were posted "
                "by the previous leader; not sent again",
                rs.superseded);
    }
}

static void resume_after_takeover(struct daemon *d)
{
    struct krc_store *st = NULL;
    struct krc_error e;

    if (d->db_path[0] == '\0' || d->notifier == NULL) {
        return;
    }
    krc_error_clear(&e);
    if (krc_store_open(d->db_path, 0, &st, &e) < 0) {
        store_failed(d, e.msg);
        krc_log(KRC_LOG_ERROR, "outbox: %s; undelivered notifications are not resumed", e.msg);
        return;
    }
    resume_outbox(d, st);
    krc_store_close(st);
}

static void open_history(struct daemon *d)
{
    struct krc_error e;

    krc_error_clear(&e);
    if (d->cfg->db != NULL && d->cfg->db[0] != '\0') {
        snprintf(d->db_path, sizeof(d->db_path), "%s", d->cfg->db);
    } else if (krc_store_default_path(d->db_path, sizeof(d->db_path), &e) < 0) {
        krc_log(KRC_LOG_ERROR, "history unavailable: %s; restarts are alerted but not recorded",
                e.msg);
        d->db_path[0] = '\0';
        return;
    }
    if (krc_store_open(d->db_path, KRC_STORE_QUICK_CHECK, &d->store, &e) < 0) {
        store_failed(d, e.msg);
        krc_log(KRC_LOG_ERROR,
                "history database unavailable: %s; restarts are still detected and alerted "
                "(in memory only)",
                e.msg);
        d->store = NULL;
        d->db_path[0] = '\0';
        return;
    }
    krc_log(KRC_LOG_INFO, "history database %s", d->db_path);
}

static void *sender_main(void *arg)
{
    struct daemon *d = arg;
    name_thread("krc-sender");
    krc_notifier_run(d->notifier);
    atomic_store(&d->sender_done, 1);
    return NULL;
}

/* Regular expressions of a '\n'-separated list, compiled; errors name the key. */
static int compile_list(const char *list, const char *key, regex_t **ret, size_t *ret_n,
                        struct krc_error *err)
{
    size_t cap = 0;
    const char *p = list;

    *ret = NULL;
    *ret_n = 0;
    while (p != NULL && *p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0) {
            char *pat = krc_strndup(p, len);
            int rc;
            if (pat == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
            if (*ret_n == cap) {
                regex_t *nr = krc_realloc(*ret, (cap ? cap * 2 : 4) * sizeof(regex_t));
                if (nr == NULL) {
                    krc_free(pat);
                    return krc_error_set(err, KRC_ENOMEM, "out of memory");
                }
                *ret = nr;
                cap = cap ? cap * 2 : 4;
            }
            rc = regcomp(&(*ret)[*ret_n], pat, REG_EXTENDED | REG_NOSUB | REG_NEWLINE);
            if (rc != 0) {
                char why[128];
                regerror(rc, &(*ret)[*ret_n], why, sizeof(why));
                krc_error_set(err, KRC_EINVAL, "%s: invalid regular expression \"%s\": %s", key,
                              pat, why);
                krc_free(pat);
                return KRC_EINVAL;
            }
            krc_free(pat);
            (*ret_n)++;
        }
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Split a '\n'-separated list into borrowed pointers of a copy. */
static int split_lines(const char *list, char **ret_copy, const char ***ret_items, size_t *ret_n)
{
    char *copy = krc_strdup(list != NULL ? list : "");
    const char **items;
    size_t n = 0;

    if (copy == NULL) {
        return KRC_ENOMEM;
    }
    items = krc_calloc(strlen(copy) / 2 + 2, sizeof(char *));
    if (items == NULL) {
        krc_free(copy);
        return KRC_ENOMEM;
    }
    for (char *p = copy; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        if (*p != '\0') {
            items[n++] = p;
        }
        p = nl ? nl + 1 : NULL;
    }
    *ret_copy = copy;
    *ret_items = items;
    *ret_n = n;
    return 0;
}

/* The notifier's options a configuration gives (the reloadable ones and the
 * rest); the daemon adds what is not configuration (redactor, clients, ...). */
static void notify_options_from(const struct krc_config *cfg, struct krc_notify_options *no)
{
    memset(no, 0, sizeof(*no));
    no->cluster_name = cfg->cluster_name;
    no->webhook_url = cfg->slack_webhook_url;
    no->channel = cfg->slack_channel;
    no->username = cfg->slack_username;
    no->icon_emoji = cfg->slack_icon;
    no->bot_token = cfg->slack_bot_token;
    no->api_url = cfg->slack_api_url;
    no->mute_seconds = cfg->mute_seconds;
    no->storm_threshold = (int)cfg->storm_threshold;
    no->storm_window_s = cfg->storm_window_s;
    no->storm_delay_s = cfg->storm_summary_delay_s;
    no->recovered_after_s = cfg->recovered_after_s;
    no->max_log_lines = (int)cfg->log_tail_lines;
    no->routes = cfg->routes;
    no->n_routes = cfg->n_routes;
    no->silences = cfg->silences;
    no->n_silences = cfg->n_silences;
}

static void on_delivered(double seconds, void *userdata);
static void on_posted(const char *uid, const char *container, int restart_count,
                      int64_t finished_at, const char *container_id, void *userdata);

static int setup_notifier(struct daemon *d, struct krc_error *err)
{
    const struct krc_config *cfg = d->cfg;
    struct krc_notify_options no;
    char *copy = NULL;
    const char **items = NULL;
    size_t n_items = 0;
    int rc;

    rc = split_lines(cfg->redact_patterns, &copy, &items, &n_items);
    if (rc == 0) {
        rc = krc_redact_new(items, n_items, &d->redactor, err);
        if (rc < 0) {
            krc_error_prefix(err, "redactPatterns");
        }
    } else {
        krc_error_set(err, rc, "out of memory");
    }
    krc_free(items);
    krc_free(copy);
    if (rc < 0) {
        return rc;
    }
    rc = compile_list(cfg->log_ignore_patterns, "logIgnorePatterns", &d->log_ignore,
                      &d->n_log_ignore, err);
    if (rc < 0) {
        return rc;
    }
    notify_options_from(cfg, &no);
    no.ca_file = getenv("KRC_SLACK_CA_FILE");
    no.log_ignore = d->log_ignore;
    no.n_log_ignore = d->n_log_ignore;
    no.redactor = d->redactor;
    no.kube = d->recovery_client;
    no.store_path = d->db_path[0] ? d->db_path : NULL;
    no.on_delivered = on_delivered;
    no.on_posted = on_posted;
    no.on_delivered_userdata = d;
    no.cancel = &d->cancel;
    d->notifier = krc_notifier_new(&no, err);
    if (d->notifier == NULL) {
        return err != NULL && err->code ? err->code : KRC_ENOMEM;
    }
    if (!krc_notifier_has_destination(d->notifier)) {
        krc_log(KRC_LOG_WARN, "no Slack destination configured (SLACK_WEBHOOK_URL, or "
                              "SLACK_BOT_TOKEN with SLACK_CHANNEL, or routes): restarts are "
                              "detected, diagnosed and logged, but nothing will be posted");
    } else if (cfg->slack_bot_token != NULL && cfg->slack_bot_token[0] != '\0') {
        krc_log(KRC_LOG_INFO, "posting to Slack with the Web API (threads per pod, log files)");
    } else if (cfg->slack_webhook_url != NULL && cfg->slack_webhook_url[0] != '\0') {
        char origin[256];
        krc_http_url_origin(cfg->slack_webhook_url, origin, sizeof(origin));
        krc_log(KRC_LOG_INFO, "posting to Slack through the incoming webhook at %s%s", origin,
                cfg->n_routes > 0 ? " and the configured routes" : "");
    } else {
        krc_log(KRC_LOG_INFO,
                "posting to Slack through %zu configured route(s) only; restarts no route "
                "matches are diagnosed but not posted",
                cfg->n_routes);
    }
    return 0;
}

/* --- health and metrics --------------------------------------------------- */

static void add_delta(struct krc_metric *mt, const char *label, long long now, long long *seen)
{
    if (now > *seen) {
        krc_metric_add(mt, label ? (const char *[]){label} : NULL, (double)(now - *seen));
        *seen = now;
    }
}

/* Scrape time: copy the loops' atomic counters into the registry. */
static void collect(struct krc_metrics *m, void *userdata)
{
    struct daemon *d = userdata;
    long long ev[5] = {0}, wr[5] = {0}, pods = 0;
    static const char *ev_names[5] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    static const char *wr_names[5] = {"timeout", "expired", "error", "silent", "malformed"};
    static const char *nt_names[7] = {"sent",     "failed",     "muted",       "grouped",
                                      "silenced", "not_posted", "rate_limited"};
    long long nt[7] = {0};
    (void)m;

    for (size_t i = 0; i < d->n_scopes; i++) {
        struct krc_watch_stats *st = &d->scopes[i].stats;
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
        wr[4] += atomic_load(&st->malformed_lines) + atomic_load(&st->oversized_lines);
        pods += atomic_load(&d->scopes[i].pods_tracked);
    }
    if (d->notifier != NULL) {
        const struct krc_notify_stats *ns = krc_notifier_stats(d->notifier);
        nt[0] = atomic_load(&ns->alerts_sent) + atomic_load(&ns->replies_sent) +
                atomic_load(&ns->summaries_sent) + atomic_load(&ns->recovered_sent);
        nt[1] = atomic_load(&ns->failed);
        nt[2] = atomic_load(&ns->muted);
        nt[3] = atomic_load(&ns->grouped);
        nt[4] = atomic_load(&ns->silenced) + atomic_load(&ns->log_ignored);
        nt[6] = atomic_load(&ns->rate_limited);
    }
    nt[5] = atomic_load(&d->not_posted);
    pthread_mutex_lock(&d->metrics_lock);
    for (int i = 0; i < 5; i++) {
        add_delta(d->std.watch_events, ev_names[i], ev[i], &d->seen_watch[i]);
        add_delta(d->std.watch_restarts, wr_names[i], wr[i], &d->seen_restarts[i]);
    }
    for (int i = 0; i < 7; i++) {
        add_delta(d->std.notifications, nt_names[i], nt[i], &d->seen_notify[i]);
    }
    add_delta(d->std.store_errors, NULL, atomic_load(&d->store_errors), &d->seen_store_errors);
    pthread_mutex_unlock(&d->metrics_lock);
    krc_metric_set(d->std.pods_tracked, NULL, (double)pods);
    if (d->leader != NULL && d->m_leader != NULL) {
        krc_metric_set(d->m_leader, NULL, krc_leader_role(d->leader) == KRC_LEADER_LEADING);
    }
}

static void on_delivered(double seconds, void *userdata)
{
    struct daemon *d = userdata;
    krc_metric_observe(d->std.restart_to_notification, NULL, seconds);
}

/* Slack accepted a restart's message: published in the hand-over list from
 * the next renewal on. */
static void on_posted(const char *uid, const char *container, int restart_count,
                      int64_t finished_at, const char *container_id, void *userdata)
{
    struct daemon *d = userdata;
    if (d->leader != NULL) {
        krc_leader_note_handled(d->leader, uid, container, restart_count, finished_at,
                                container_id);
    }
}

/* /healthz: the loops are alive. A watch loop iterates or receives data at
 * least every watchIdleTimeout plus the longest backoff; the sender loop
 * wakes every 200 ms unless it is busy delivering (retries included). */
static int check_live(void *userdata, char *reason, size_t size)
{
    struct daemon *d = userdata;
    int64_t now = krc_clock_mono_ms();
    int64_t watch_limit = d->cfg->watch_idle_timeout_s * 1000 + 120000;

    for (size_t i = 0; i < d->n_scopes; i++) {
        int64_t hb = atomic_load(&d->scopes[i].stats.heartbeat_mono_ms);
        if (hb != 0 && now - hb > watch_limit) {
            snprintf(reason, size, "watch loop (%s) stuck for %llds",
                     d->scopes[i].namespace ? d->scopes[i].namespace : "all namespaces",
                     (long long)((now - hb) / 1000));
            return 0;
        }
    }
    if (d->notifier != NULL) {
        int64_t hb = krc_notifier_heartbeat(d->notifier);
        if (hb != 0 && now - hb > 15 * 60 * 1000) {
            snprintf(reason, size, "Slack sender stuck for %llds", (long long)((now - hb) / 1000));
            return 0;
        }
    }
    return 1;
}

static int check_ready(void *userdata, char *reason, size_t size);

/* A standby's state for messages; returns 1 when it can reach the Lease. */
static int standby_state(struct daemon *d, char *reason, size_t size)
{
    char holder[256], why[256];
    krc_leader_holder(d->leader, holder, sizeof(holder));
    krc_leader_last_error(d->leader, why, sizeof(why));
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
    struct daemon *d = userdata;
    char reason[512];
    int ok;
    (void)req;

    reason[0] = '\0';
    if (d->leader != NULL && krc_leader_role(d->leader) != KRC_LEADER_LEADING) {
        ok = standby_state(d, reason, sizeof(reason));
    } else {
        ok = check_ready(d, reason, sizeof(reason));
        if (ok) {
            snprintf(reason, sizeof(reason), "%s", d->leader != NULL ? "leader" : "ready");
        }
    }
    resp->status = ok ? 200 : 503;
    return krc_buf_printf(&resp->body, "%s%s\n", ok ? "ok: " : "", reason) < 0 ? KRC_ENOMEM : 0;
}

/* /readyz: every watch scope synced and the API server answering. */
static int check_ready(void *userdata, char *reason, size_t size)
{
    struct daemon *d = userdata;

    if (d->leader != NULL && krc_leader_role(d->leader) != KRC_LEADER_LEADING) {
        standby_state(d, reason, size);
        krc_metric_set(d->std.ready, NULL, 0);
        return 0;
    }
    for (size_t i = 0; i < d->n_scopes; i++) {
        struct krc_watch_stats *st = &d->scopes[i].stats;
        const char *scope = d->scopes[i].namespace ? d->scopes[i].namespace : "all namespaces";
        if (!atomic_load(&st->synced)) {
            snprintf(reason, size, "pods (%s) not synced yet", scope);
            krc_metric_set(d->std.ready, NULL, 0);
            return 0;
        }
        if (atomic_load(&st->last_error_mono_ms) > atomic_load(&st->last_ok_mono_ms)) {
            snprintf(reason, size, "Kubernetes API unreachable (%s)", scope);
            krc_metric_set(d->std.ready, NULL, 0);
            return 0;
        }
    }
    if (atomic_load(&d->store_fault)) {
        /* restarts are still detected and alerted; the history is not kept */
        pthread_mutex_lock(&d->fault_lock);
        snprintf(reason, size, "history database unavailable: %s", d->store_fault_msg);
        pthread_mutex_unlock(&d->fault_lock);
        krc_metric_set(d->std.ready, NULL, 0);
        return 0;
    }
    krc_metric_set(d->std.ready, NULL, 1);
    return 1;
}

static int setup_http(struct daemon *d, struct krc_error *err)
{
    struct krc_http_server_config hc;
    int rc;

    pthread_mutex_init(&d->metrics_lock, NULL);
    if ((rc = krc_metrics_new(&d->metrics, err)) < 0 ||
        (rc = krc_metrics_register_std(d->metrics, KRC_VERSION, &d->std, err)) < 0 ||
        (rc = krc_metrics_register_process(d->metrics, err)) < 0 ||
        (rc = krc_metrics_add_collector(d->metrics, collect, d, err)) < 0) {
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
        const struct krc_metric_desc leader = {
            .type = KRC_METRIC_GAUGE,
            .name = "krc_leader",
            .help = "1 while this replica holds the leader-election Lease, 0 on a standby."};
        if ((rc = krc_metrics_add(d->metrics, &reloads, &d->m_reloads, err)) < 0 ||
            (d->cfg->leader_elect &&
             (rc = krc_metrics_add(d->metrics, &leader, &d->m_leader, err)) < 0)) {
            return rc;
        }
    }
    if (d->cfg->listen == NULL || d->cfg->listen[0] == '\0' || strcmp(d->cfg->listen, "off") == 0) {
        krc_log(KRC_LOG_INFO, "health and metrics endpoint disabled (listen: off)");
        return 0;
    }
    memset(&hc, 0, sizeof(hc));
    hc.listen = d->cfg->listen;
    hc.metrics = d->metrics;
    hc.liveness = check_live;
    hc.liveness_userdata = d;
    hc.readiness = check_ready;
    hc.readiness_userdata = d;
    if ((rc = krc_http_server_new(&hc, &d->http, err)) < 0 ||
        (rc = krc_http_server_route(d->http, "/readyz/replica",
                                    KRC_HTTP_METHOD_GET | KRC_HTTP_METHOD_HEAD, 0, 4096,
                                    handle_replica_ready, d, err)) < 0 ||
        (rc = krc_http_server_start(d->http, err)) < 0) {
        return rc;
    }
    krc_log(KRC_LOG_INFO, "health and metrics on %s (port %d): /healthz /readyz /metrics",
            d->cfg->listen, krc_http_server_port(d->http));
    return 0;
}

/* --- SIGHUP: reload ------------------------------------------------------- */

/* Options a reload applies; every other option keeps its running value
 * until krc is restarted (a warning names each one that changed). */
static const char *const reloadable[] = {
    "clusterName",
    "watchedNamespaces",
    "ignoredNamespaces",
    "watchedPodNamePrefixes",
    "ignoredPodNamePrefixes",
    "ignoreRestartCount",
    "ignoreRestartsWithExitCodeZero",
    "slackChannel",
    "slackUsername",
    "slackIcon",
    "muteSeconds",
    "stormThreshold",
    "stormWindow",
    "stormSummaryDelay",
    "logTailLines",
    "logLimitBytes",
    "logTransferLimitBytes",
    "routes",
    "silences",
    "logLevel",
    NULL,
};

static int is_reloadable(const char *key)
{
    for (size_t i = 0; reloadable[i] != NULL; i++) {
        if (strcmp(reloadable[i], key) == 0) {
            return 1;
        }
    }
    return 0;
}

static int option_changed(const struct krc_config *a, const struct krc_config *b,
                          const struct krc_config_option *o)
{
    const char *pa = (const char *)a + o->offset;
    const char *pb = (const char *)b + o->offset;

    switch (o->type) {
    case KRC_CONFIG_STRING:
    case KRC_CONFIG_SECRET:
    case KRC_CONFIG_LIST: {
        const char *x = *(char *const *)(const void *)pa;
        const char *y = *(char *const *)(const void *)pb;
        return strcmp(x ? x : "", y ? y : "") != 0;
    }
    case KRC_CONFIG_INT:
    case KRC_CONFIG_DURATION:
        return *(const long *)(const void *)pa != *(const long *)(const void *)pb;
    case KRC_CONFIG_BOOL:
        return *(const int *)(const void *)pa != *(const int *)(const void *)pb;
    case KRC_CONFIG_ROUTES:
    case KRC_CONFIG_SILENCES:
        return 0; /* reloadable anyway */
    }
    return 0;
}

/* The plain namespaces are the watch scopes: changing them needs new watch
 * loops (and maybe other permissions), which a reload does not start. */
static int same_scopes(const struct krc_filter *a, const struct krc_filter *b)
{
    const char *const *na = NULL, *const *nb = NULL;
    size_t ca = krc_filter_plain_namespaces(a, &na);
    size_t cb = krc_filter_plain_namespaces(b, &nb);
    if (ca != cb) {
        return 0;
    }
    for (size_t i = 0; i < ca; i++) {
        if (strcmp(na[i], nb[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

static void reload_rejected(const char *why)
{
    krc_log(KRC_LOG_ERROR, "configuration reload rejected; the running configuration is kept: %s",
            why);
}

static void reload_failed(struct daemon *d, const char *why)
{
    if (why != NULL) {
        reload_rejected(why);
    }
    if (d->m_reloads != NULL) {
        krc_metric_inc(d->m_reloads, (const char *[]){"failure"});
    }
}

static void reload(struct daemon *d)
{
    const struct krc_config *old = live_cfg(d);
    struct krc_config *cfg = krc_calloc(1, sizeof(*cfg));
    struct krc_filter *filter = NULL;
    struct retired *ret = krc_calloc(1, sizeof(*ret));
    struct krc_notify_options no;
    struct krc_error e;
    char *errors = NULL;
    size_t changed = 0;
    int rc;

    krc_log(KRC_LOG_INFO, "SIGHUP received; reloading the configuration%s%s",
            d->cfg->config_file ? " from " : "", d->cfg->config_file ? d->cfg->config_file : "");
    if (cfg == NULL || ret == NULL) {
        krc_free(cfg);
        krc_free(ret);
        reload_failed(d, "out of memory");
        return;
    }
    krc_config_init(cfg);
    krc_error_clear(&e);
    rc = krc_config_from_args(cfg, d->cfg->run_argc, d->cfg->run_argv, &errors, &e);
    if (rc != 0) {
        /* one line per mistake, as krc config check prints them */
        char *p = errors;
        while (p != NULL && *p != '\0') {
            char *nl = strchr(p, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            if (*p != '\0' && strcmp(p, "krc run: invalid configuration:") != 0) {
                reload_rejected(strncmp(p, "krc run: ", 9) == 0 ? p + 9 : p);
            }
            p = nl ? nl + 1 : NULL;
        }
        reload_failed(d, errors == NULL ? e.msg : NULL);
        krc_free(errors);
        goto fail;
    }
    if (krc_filter_new(cfg->watched_namespaces, cfg->ignored_namespaces,
                       cfg->watched_pod_name_prefixes, cfg->ignored_pod_name_prefixes, &filter,
                       &e) < 0) {
        reload_failed(d, e.msg);
        goto fail;
    }
    if (!same_scopes(filter, atomic_load(&d->live_filter))) {
        reload_failed(d, "watchedNamespaces changes which namespaces are watched; restart krc "
                         "to apply it");
        goto fail;
    }
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        if (option_changed(old, cfg, o)) {
            changed++;
            if (!is_reloadable(o->key)) {
                krc_log(KRC_LOG_WARN,
                        "configuration reload: %s changed; it takes effect when krc is "
                        "restarted (the running value is kept)",
                        o->key);
            }
        }
    }
    /* Apply: the notifier first (under its lock), then the watch side. */
    if (d->notifier != NULL) {
        notify_options_from(cfg, &no); /* the notifier takes the reloadable ones */
        krc_notifier_reconfigure(d->notifier, &no);
    }
    {
        enum krc_log_level level = KRC_LOG_INFO;
        if (krc_log_parse_level(cfg->log_level, &level) == 0) {
            krc_log_set_level(level);
        }
    }
    ret->cfg = (struct krc_config *)old;
    ret->filter = atomic_load(&d->live_filter);
    atomic_store(&d->live_filter, filter);
    atomic_store(&d->live, cfg);
    ret->next = d->retired;
    d->retired = ret;
    if (d->m_reloads != NULL) {
        krc_metric_inc(d->m_reloads, (const char *[]){"success"});
    }
    krc_log(KRC_LOG_INFO,
            "configuration reloaded (%zu option(s) differ from the running ones; %zu route(s), "
            "%zu silence(s))",
            changed, cfg->n_routes, cfg->n_silences);
    return;
fail:
    krc_filter_free(filter);
    krc_config_cleanup(cfg);
    krc_free(cfg);
    krc_free(ret);
}

/* --- leader election ------------------------------------------------------- */

/* The election thread, the moment the Lease is lost: nothing new is posted
 * from here on (a POST already in flight may still complete: the one
 * window). What is not delivered stays pending in this replica's outbox and
 * is not sent by it unless it leads again (see resume_outbox); the next
 * leader reports those restarts from its relist. */
static void leadership_lost(void *userdata)
{
    struct daemon *d = userdata;
    atomic_store(&d->lost, 1);
    if (d->notifier != NULL) {
        krc_notifier_abort(d->notifier);
    }
}

static void *leader_main(void *arg)
{
    name_thread("krc-leader");
    krc_leader_run(arg);
    return NULL;
}

static int setup_leader(struct daemon *d, struct krc_error *err)
{
    const struct krc_config *cfg = d->cfg;
    struct krc_leader_options lo;
    struct krc_kube_client *client;
    char host[256];
    const char *ns = cfg->lease_namespace;
    const char *id = getenv("POD_NAME");

    if (ns == NULL || ns[0] == '\0') {
        ns = getenv("POD_NAMESPACE");
    }
    if (ns == NULL || ns[0] == '\0') {
        ns = d->auth.namespace; /* in-cluster namespace file, or the context's */
    }
    if (ns == NULL || ns[0] == '\0') {
        ns = "default";
    }
    if (id == NULL || id[0] == '\0') {
        if (gethostname(host, sizeof(host)) != 0) {
            return krc_error_set(err, KRC_EIO,
                                 "leader election needs an identity: set POD_NAME (no host name)");
        }
        host[sizeof(host) - 1] = '\0';
        id = host;
    }
    client = krc_kube_client_new(&d->auth, d->tokens, err);
    if (client == NULL) {
        return err->code ? err->code : KRC_ENOMEM;
    }
    krc_kube_client_set_timeout(client, (cfg->lease_renew_deadline_s * 1000) / 2);
    memset(&lo, 0, sizeof(lo));
    lo.namespace = ns;
    lo.name = cfg->lease_name;
    lo.identity = id;
    lo.lease_duration_s = cfg->lease_duration_s;
    lo.renew_deadline_s = cfg->lease_renew_deadline_s;
    lo.retry_period_s = cfg->lease_retry_period_s;
    /* a new leader reports the restarts of the last startupWindow: the
     * hand-over list must cover them */
    lo.handled_retention_s = cfg->startup_window_s + 300;
    lo.on_lost = leadership_lost;
    lo.userdata = d;
    return krc_leader_new(client, &lo, &d->leader, err);
}

/* The detection table is created when this replica starts watching (at
 * start-up, or when it becomes the leader): the start-up window counts back
 * from this moment, not from the start of the process, so a standby that
 * takes over after hours does not report the restarts of those hours. */
static int start_watches(struct daemon *d)
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
    return 0;
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
    pthread_mutex_init(&d.fault_lock, NULL);
    d.cfg = cfg;
    atomic_init(&d.live, cfg);
    atomic_init(&d.live_filter, NULL);
    /* One malloc arena for all threads: the watch thread allocates nothing
     * per event once warm and most small blocks come from per-thread caches,
     * so there is little lock contention, and memory one thread frees (a
     * worker's collection, the pruner's pages) is reused by the others
     * instead of staying resident in a second arena.
     * Fixed thresholds instead of glibc's sliding ones: collecting a restart
     * grows the heap top by a few hundred KiB that glibc otherwise hands back
     * with brk() after every restart (two system calls and re-faulted pages
     * each time, ~15% of a worker's CPU); 512 KiB of free top is kept while
     * restarts keep coming and the idle workers' malloc_trim returns it after
     * a burst. Blocks of 256 KiB and more are mmap'd (the pod hash table). */
#ifndef __SANITIZE_ADDRESS__
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024);
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
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
    atomic_store(&d.live_filter, d.filter);
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
    for (size_t i = 0; i < d.n_scopes; i++) {
        struct scope *s = &d.scopes[i];
        s->d = &d;
        s->namespace = n_names > 0 ? names[i] : NULL;
        s->client = krc_kube_client_new(&d.auth, d.tokens, &e);
        if (s->client == NULL) {
            krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s",
                    e.msg[0] ? e.msg : "out of memory");
            goto out;
        }
    }
    if (n_names > 0) {
        krc_log(KRC_LOG_INFO,
                "watching %zu namespace(s) only (namespace-scoped permissions suffice)", n_names);
    } else {
        krc_log(KRC_LOG_INFO, "watching pods in all namespaces");
    }
    d.recovery_client = krc_kube_client_new(&d.auth, d.tokens, &e);
    if (d.recovery_client == NULL) {
        krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s", e.msg);
        goto out;
    }
    open_history(&d);
    if (setup_notifier(&d, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "invalid alert configuration: %s", e.msg);
        goto out;
    }
    if (cfg->leader_elect && setup_leader(&d, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "leader election: %s", e.msg);
        goto out;
    }
    /* Last of what the HTTP threads read (d.notifier, d.leader): they start
     * here, and those pointers are not written again. */
    if (setup_http(&d, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "health and metrics endpoint: %s", e.msg);
        goto out;
    }
    d.n_workers = (size_t)cfg->workers;
    d.workers = krc_calloc(d.n_workers, sizeof(struct worker));
    if (d.workers == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < d.n_workers; i++) {
        struct worker *w = &d.workers[i];
        w->d = &d;
        w->client = krc_kube_client_new(&d.auth, d.tokens, &e);
        if (w->client == NULL) {
            krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s", e.msg);
            goto out;
        }
        krc_kube_client_set_timeout(w->client, 10000);
        if (d.store != NULL && krc_store_open(d.db_path, 0, &w->store, &e) < 0) {
            krc_log(KRC_LOG_ERROR, "history: %s", e.msg);
            w->store = NULL;
        }
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start a worker thread");
            goto out;
        }
        w->started = 1;
    }
    if (d.store != NULL) {
        /* Undelivered notifications from before: send them first (with
         * leader election once this replica leads: a standby posts nothing). */
        if (!cfg->leader_elect) {
            resume_outbox(&d, d.store);
        }
        if (pthread_create(&d.pruner, NULL, pruner_main, &d) == 0) {
            d.pruner_started = 1;
        }
        /* The main thread needs the database only at start-up. */
        krc_store_close(d.store);
        d.store = NULL;
    }
    /* The sender runs on a standby too, idle: nothing is queued for it until
     * this replica leads. */
    if (pthread_create(&d.sender, NULL, sender_main, &d) != 0) {
        krc_log(KRC_LOG_ERROR, "cannot start the Slack sender thread");
        goto out;
    }
    d.sender_started = 1;
    if (cfg->leader_elect) {
        if (pthread_create(&d.leader_thread, NULL, leader_main, d.leader) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start the leader election thread");
            goto out;
        }
        d.leader_started = 1;
    } else if (start_watches(&d) < 0) {
        d.cancel = 1;
        goto out;
    }
    krc_log(KRC_LOG_INFO, "krc %s started (start-up window %lds)%s", KRC_VERSION,
            cfg->startup_window_s, cfg->leader_elect ? "; waiting to lead" : "");

    /* Wait for a signal, for leadership (then watch), for its loss, or for a
     * watch loop to give up (it sets cancel). */
    while (!d.cancel) {
        struct timespec ts = {0, 200 * 1000000L};
        siginfo_t si;
        sig = sigtimedwait(&sigs, &si, &ts);
        if (sig == SIGHUP) {
            reload(&d);
            continue;
        }
        if (sig == SIGTERM || sig == SIGINT) {
            krc_log(KRC_LOG_INFO, "%s received; shutting down",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
            break;
        }
        if (d.leader != NULL) {
            enum krc_leader_role role = krc_leader_role(d.leader);
            if (role == KRC_LEADER_LEADING && !d.watching) {
                krc_log(KRC_LOG_INFO, "leading: watching pods and alerting");
                resume_after_takeover(&d);
                if (start_watches(&d) < 0) {
                    break;
                }
            } else if (role == KRC_LEADER_LEADING && krc_leader_overdue(d.leader)) {
                /* a renewal hangs: past the renew deadline a standby may
                 * take the Lease soon, so stop posting now */
                leadership_lost(&d);
                krc_log(KRC_LOG_ERROR,
                        "leader election: no renewal of the lease for %lds (renew deadline); "
                        "stopping, exiting so that this replica restarts as a standby",
                        cfg->lease_renew_deadline_s);
                break;
            } else if (role == KRC_LEADER_LOST) {
                /* a fresh process starts as a clean standby */
                krc_log(KRC_LOG_ERROR, "leadership lost; exiting so that this replica restarts "
                                       "as a standby");
                break;
            }
        }
    }
    exit_code = (sig == SIGTERM || sig == SIGINT) ? 0 : 1;

out:
    d.cancel = 1;
    if (d.http != NULL) {
        krc_http_server_stop(d.http);
    }
    for (size_t i = 0; d.scopes != NULL && i < d.n_scopes; i++) {
        if (d.scopes[i].started) {
            pthread_join(d.scopes[i].thread, NULL);
        }
    }
    /* Drain: the workers finish what was detected, the sender posts what is
     * queued, for at most DRAIN_MS; what is left is logged as not sent. */
    if (d.queue.items != NULL) {
        krc_queue_close(&d.queue);
    }
    for (size_t i = 0; d.workers != NULL && i < d.n_workers; i++) {
        if (d.workers[i].started) {
            pthread_join(d.workers[i].thread, NULL);
        }
    }
    if (d.sender_started) {
        /* A replica that lost the Lease does not drain: nothing more is
         * posted (leadership_lost aborted the sender already). */
        int64_t deadline = krc_clock_mono_ms() + (atomic_load(&d.lost) ? 0 : DRAIN_MS);
        while (krc_notifier_pending(d.notifier) > 0 && krc_clock_mono_ms() < deadline) {
            krc_clock_sleep_ms(50, NULL);
        }
        /* The message in flight may finish (Slack may be processing it
         * already); a hung one is cut after SENDER_GRACE_MS. */
        krc_notifier_abort(d.notifier);
        deadline = krc_clock_mono_ms() + SENDER_GRACE_MS;
        while (!atomic_load(&d.sender_done) && krc_clock_mono_ms() < deadline) {
            krc_clock_sleep_ms(20, NULL);
        }
        if (!atomic_load(&d.sender_done)) {
            krc_log(KRC_LOG_WARN,
                    "shutdown: the Slack request in flight did not finish in %ds; "
                    "aborted (it stays in the outbox)",
                    SENDER_GRACE_MS / 1000);
            krc_notifier_abort_transfers(d.notifier);
        }
        pthread_join(d.sender, NULL);
    }
    if (d.pruner_started) {
        pthread_join(d.pruner, NULL);
    }
    /* Last: hand over with the complete list of handled restarts. */
    if (d.leader_started) {
        krc_leader_stop(d.leader);
        pthread_join(d.leader_thread, NULL);
        krc_error_clear(&e);
        if (krc_leader_release(d.leader, &e) < 0) {
            krc_log(KRC_LOG_WARN, "leader election: releasing the lease failed: %s", e.msg);
        }
    }
    krc_leader_free(d.leader);
    for (size_t i = 0; d.workers != NULL && i < d.n_workers; i++) {
        krc_kube_client_free(d.workers[i].client);
        krc_store_close(d.workers[i].store);
    }
    krc_store_close(d.store);
    krc_free(d.workers);
    krc_notifier_free(d.notifier);
    krc_redact_free(d.redactor);
    for (size_t i = 0; i < d.n_log_ignore; i++) {
        regfree(&d.log_ignore[i]);
    }
    krc_free(d.log_ignore);
    krc_kube_client_free(d.recovery_client);
    krc_http_server_free(d.http);
    krc_metrics_free(d.metrics);
    for (size_t i = 0; d.scopes != NULL && i < d.n_scopes; i++) {
        krc_kube_client_free(d.scopes[i].client);
        krc_pod_state_free(d.scopes[i].state);
    }
    krc_free(d.scopes);
    krc_queue_cleanup(&d.queue, free_restart_item);
    krc_filter_free(d.filter);
    while (d.retired != NULL) {
        struct retired *r = d.retired;
        d.retired = r->next;
        if (r->cfg != cfg) {
            krc_config_cleanup(r->cfg);
            krc_free(r->cfg);
        }
        if (r->filter != d.filter) {
            krc_filter_free(r->filter);
        }
        krc_free(r);
    }
    if (atomic_load(&d.live) != cfg) {
        struct krc_config *live = (struct krc_config *)atomic_load(&d.live);
        krc_config_cleanup(live);
        krc_free(live);
    }
    if (atomic_load(&d.live_filter) != d.filter) {
        krc_filter_free(atomic_load(&d.live_filter));
    }
    krc_token_source_free(d.tokens);
    krc_kube_auth_config_cleanup(&d.auth);
    pthread_mutex_destroy(&d.fault_lock);
    if (exit_code == 0) {
        krc_log(KRC_LOG_INFO, "stopped");
    }
    return exit_code;
}
