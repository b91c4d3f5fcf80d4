#include "krc/daemon/daemon.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/sender.h"
#include "krc/collect/collector.h"
#include "krc/daemon/health.h"
#include "krc/serve/mcp.h"
#include "krc/serve/mcp_tools.h"
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
#include "krc/util/url.h"

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
    struct krc_sender *notifier;
    struct krc_redactor *redactor;
    struct krc_pattern *log_ignore; /* logIgnorePatterns, compiled */
    size_t n_log_ignore;
    struct krc_kube_client *mcp_client; /* explain_pod of /mcp; NULL without mcpTokenFile */
    struct krc_mcp_tools *mcp_tools;
    struct krc_mcp *mcp;
    pthread_t sender;
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
    /* before this event's state is observed (h_pod), so the recovery
     * tracker misses nothing between the restart and its alert */
    krc_sender_restart_seen(s->d->notifier, r->uid, r->namespace, r->pod, r->container,
                            r->restart_count);
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
        krc_sender_pod_event(s->d->notifier, pod, 1);
        krc_pod_state_delete(s->state, pod->uid);
        atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
        return;
    }
    if (!krc_filter_pod_allowed(atomic_load(&s->d->live_filter), pod->namespace, pod->name)) {
        /* not tracked at all: costs no memory (and a pod a reload filtered
         * out leaves the table) */
        if (krc_pod_state_forget(s->state, pod->uid)) {
            atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
        }
        return;
    }
    if (krc_pod_state_apply(s->state, pod, on_restart, s) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory tracking pod %s/%s", pod->namespace, pod->name);
    }
    /* after on_restart: a restart this event revealed is awaited first */
    krc_sender_pod_event(s->d->notifier, pod, 0);
    atomic_store(&s->health->pods_tracked, (long long)krc_pod_state_count(s->state));
}

static void h_sync_end(void *userdata)
{
    struct scope *s = userdata;
    size_t removed = krc_pod_state_sync_end(s->state);
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
    name_thread("krc-worker");
    krc_pipeline_run(&w->deps, &w->d->queue, &w->d->queued_pod_bytes, WORKER_IDLE_RELEASE_MS);
    return NULL;
}

/* Every connection of the daemon to its store: the cluster's rows, the
 * password file (krc_store_open_with). A PostgreSQL server that does not
 * answer yet gives a store that connects on a later call
 * (KRC_STORE_DEFER_CONNECT: returns KRC_STORE_DEFERRED, e says why). */
static int open_store(const struct daemon *d, unsigned flags, struct krc_store **ret,
                      struct krc_error *e)
{
    return krc_store_open_with(d->db_path, flags | d->store_flags, &d->store_opts, ret, e);
}

#define RESUME_RETRY_MS 5000
static void late_resume(struct daemon *d, struct krc_store *st);

/* A shared store with leader election is pruned by the leader only (the
 * backend's advisory lock also keeps two leaders of different clusters from
 * pruning at once); a replica's own SQLite file by that replica. */
static int may_prune(struct daemon *d)
{
    return !d->shared_store || d->leader == NULL ||
           krc_leader_role(d->leader) == KRC_LEADER_LEADING;
}

/* A minute between two rounds of retention, resuming the outbox meanwhile
 * when it is due (late_resume). */
static void prune_pause(struct daemon *d, struct krc_store *st)
{
    for (int waited = 0; waited < 60000 && !d->cancel; waited += RESUME_RETRY_MS) {
        late_resume(d, st);
        if (krc_clock_sleep_ms(RESUME_RETRY_MS, &d->cancel)) {
            break;
        }
    }
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
    if (open_store(d, 0, &st, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "history retention disabled: %s", e.msg);
        return NULL;
    }
    while (!d->cancel) {
        int64_t deleted = 0;
        int64_t total = 0;
        if (!may_prune(d)) {
            prune_pause(d, st);
            continue;
        }
        do {
            krc_error_clear(&e);
            deleted = 0;
            if (krc_store_prune(st, d->cfg->history_max_age_s, d->cfg->history_max_rows, 100,
                                &deleted, &e) < 0) {
                atomic_fetch_add(&d->status.store_errors, 1);
                krc_log(KRC_LOG_ERROR, "history retention: %s", e.msg);
                break;
            }
            total += deleted;
        } while (deleted > 0 && !d->cancel && !krc_clock_sleep_ms(20, &d->cancel));
        if (total > 0) {
            krc_log(KRC_LOG_INFO, "history retention: %lld old restart(s) pruned",
                    (long long)total);
        }
        prune_pause(d, st);
    }
    krc_store_close(st);
    return NULL;
}

/* Did this replica or its predecessor handle the stored restart? By its
 * identity as stored (finishedAt, containerID, count). */
static int resumed_was_handled(const struct krc_store_row *row, void *ud)
{
    struct daemon *d = ud;
    char cid[160];
    int64_t fin = krc_store_identity_container_id(row->identity, cid, sizeof(cid));

    return krc_leader_was_handled(d->leader, row->pod_uid, row->container, row->restart_count, fin,
                                  cid[0] ? cid : NULL);
}

/* Queue the outbox rows still pending from before (the sender reads them).
 * Without leader election at start-up. With it, only when this replica
 * becomes the leader, never on a standby: the rows were decided while an
 * earlier process of this replica led, and one the leader in between posted
 * (its hand-over list, merged at the take-over, names the restart) is marked
 * failed, not sent again. */
static void resume_outbox(struct daemon *d, struct krc_store *store)
{
    int rc = krc_sender_resume_outbox(d->notifier, store,
                                      d->leader != NULL ? resumed_was_handled : NULL, d);
    if (rc < 0 && d->shared_store) {
        /* PostgreSQL down: rows left pending by an earlier process or leader
         * are resumed once it answers (late_resume) */
        atomic_store(&d->resume_due, 1);
    }
}

/* The pruner thread: resume the outbox once the database answers again, if
 * it did not when this replica started or took over (a standby waits until
 * it leads). The sender skips rows this process wrote meanwhile. */
static void late_resume(struct daemon *d, struct krc_store *st)
{
    if (!atomic_load(&d->resume_due) ||
        (d->leader != NULL && krc_leader_role(d->leader) != KRC_LEADER_LEADING)) {
        return;
    }
    if (krc_sender_resume_outbox(d->notifier, st, d->leader != NULL ? resumed_was_handled : NULL,
                                 d) < 0) {
        return;
    }
    atomic_store(&d->resume_due, 0);
    krc_log(KRC_LOG_INFO,
            "outbox: the history database %s answers; undelivered notifications "
            "from before are resumed",
            d->db_shown);
    if (atomic_load(&d->status.unwritten) == 0) {
        atomic_store(&d->status.store_fault, 0);
    }
}

/* A shared outbox: raise this cluster's fence to our token before anything
 * is resumed or posted. Returns 1 when a newer leader has fenced us out
 * (the caller stops as on a lost Lease). A database error is logged and
 * ignored: the Lease remains the authority, and each POST is claimed. */
static int fence_store(struct daemon *d, struct krc_store *st, int64_t token)
{
    struct krc_error e;
    int rc;

    krc_error_clear(&e);
    rc = krc_store_fence(st, token, &e);
    if (rc == KRC_STORE_FENCED) {
        krc_log(KRC_LOG_ERROR,
                "leader election: fenced: the shared outbox %s has a newer leader's fence than "
                "this replica's token %lld (a newer leader exists, or another krc writes with "
                "the same clusterName \"%s\"); stopping",
                d->db_shown, (long long)token, d->cfg->cluster_name);
        return 1;
    }
    if (rc < 0) {
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_ERROR,
                "leader election: the shared outbox could not be fenced (%s); leading anyway "
                "(the Lease decides, and every POST is claimed)",
                e.msg);
        return 0;
    }
    krc_log(KRC_LOG_INFO, "leader election: shared outbox %s fenced with token %lld", d->db_shown,
            (long long)token);
    return 0;
}

/* This replica starts leading: fence the shared outbox (PostgreSQL), give
 * the sender its token, queue what is pending. Returns 1 when fenced out. */
static int resume_after_takeover(struct daemon *d)
{
    struct krc_store *st = NULL;
    struct krc_error e;
    int64_t token = krc_leader_fence_token(d->leader);

    if (d->db_path[0] == '\0' || d->notifier == NULL) {
        return 0;
    }
    krc_error_clear(&e);
    if (open_store(d, 0, &st, &e) < 0) {
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_ERROR, "outbox: %s; undelivered notifications are not resumed", e.msg);
        if (d->shared_store) {
            atomic_store(&d->resume_due, 1);
        }
        if (d->shared_store) {
            krc_sender_set_fence_token(d->notifier, token); /* claims still protect */
        }
        return 0;
    }
    if (d->shared_store && krc_store_shared(st)) {
        if (fence_store(d, st, token)) {
            krc_store_close(st);
            return 1;
        }
        krc_sender_set_fence_token(d->notifier, token);
    }
    resume_outbox(d, st);
    krc_store_close(st);
    return 0;
}

/* dbPasswordFile must be readable at start-up (the store reads it again at
 * every connection); its password is never logged from here on. */
static int check_db_password(struct daemon *d, struct krc_error *e)
{
    const char *file = d->cfg->db_password_file;
    char *pw = NULL;

    if (file == NULL || file[0] == '\0') {
        return 0;
    }
    if (!krc_store_is_url(d->db_path)) {
        krc_log(KRC_LOG_WARN, "dbPasswordFile is set but db is not a PostgreSQL URL: ignored");
        return 0;
    }
    if (krc_config_read_db_password(file, &pw, e) < 0) {
        return -1;
    }
    krc_log_add_secret(pw);
    for (volatile char *p = pw; *p != '\0'; p++) {
        *p = 0;
    }
    krc_free(pw);
    d->store_opts.password_file = file;
    return 0;
}

/* A password in the URL's user information is never logged either (an
 * error of libpq's quoting the URL, say). */
static void register_url_password(const char *url)
{
    const char *rest = strstr(url, "://");
    size_t auth_len;
    const char *at = NULL;
    const char *colon;
    char pw[512];

    if (rest == NULL) {
        return;
    }
    rest += 3;
    auth_len = strcspn(rest, "/?#");
    for (size_t i = 0; i < auth_len; i++) {
        if (rest[i] == '@') {
            at = rest + i;
        }
    }
    colon = at != NULL ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
    if (colon != NULL && (size_t)(at - colon - 1) < sizeof(pw)) {
        snprintf(pw, sizeof(pw), "%.*s", (int)(at - colon - 1), colon + 1);
        krc_log_add_secret(pw);
        for (volatile char *p = pw; *p != '\0'; p++) {
            *p = 0;
        }
    }
}

static int open_history(struct daemon *d, struct krc_error *ep)
{
    struct krc_error e;
    int has_password = 0;
    int rc;

    krc_error_clear(&e);
    d->store_opts.cluster = d->cfg->cluster_name;
    if (d->cfg->db != NULL && d->cfg->db[0] != '\0') {
        snprintf(d->db_path, sizeof(d->db_path), "%s", d->cfg->db);
    } else if (krc_store_default_path(d->db_path, sizeof(d->db_path), &e) < 0) {
        krc_log(KRC_LOG_ERROR, "history unavailable: %s; restarts are alerted but not recorded",
                e.msg);
        d->db_path[0] = '\0';
        return 0;
    }
    if (check_db_password(d, ep) < 0) {
        return -1;
    }
    if (krc_store_is_url(d->db_path) &&
        krc_config_check_db_url(d->db_path, &has_password, NULL) == 0 && has_password) {
        register_url_password(d->db_path);
        krc_log(KRC_LOG_WARN, "db: the PostgreSQL URL holds a password; put it in a file named "
                              "by dbPasswordFile (e.g. a mounted Secret) instead");
    }
    {
        char *shown = krc_url_mask_password(d->db_path);
        snprintf(d->db_shown, sizeof(d->db_shown), "%s", shown != NULL ? shown : "(database)");
        krc_free(shown);
    }
    rc = open_store(d, KRC_STORE_QUICK_CHECK, &d->store, &e);
    if (rc < 0) {
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_ERROR,
                "history database unavailable: %s; restarts are still detected and alerted "
                "(in memory only)",
                e.msg);
        d->store = NULL;
        d->db_path[0] = '\0';
        return 0;
    }
    snprintf(d->db_shown, sizeof(d->db_shown), "%s", krc_store_path(d->store));
    d->shared_store = krc_store_shared(d->store);
    if (rc == KRC_STORE_DEFERRED) {
        d->store_flags |= KRC_STORE_CONNECT_ON_USE;
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_WARN,
                "history database: %s; restarts are still detected and alerted, their records "
                "are kept in memory and written once it answers",
                e.msg);
    }
    krc_log(KRC_LOG_INFO, "history database %s (%s%s)", d->db_shown,
            krc_store_backend_name(d->store),
            d->shared_store ? (d->cfg->leader_elect ? ", shared: fenced outbox"
                                                    : ", shared; without leaderElect run one "
                                                      "replica per clusterName")
                            : "");
    return 0;
}

static void *sender_main(void *arg)
{
    struct daemon *d = arg;
    name_thread("krc-sender");
    krc_sender_run(d->notifier);
    atomic_store(&d->sender_done, 1);
    return NULL;
}

/* Text patterns (util/pattern.h) of a '\n'-separated list, compiled; errors
 * name the key. */
static int compile_list(const char *list, const char *key, struct krc_pattern **ret, size_t *ret_n,
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
                struct krc_pattern *nr =
                    krc_realloc(*ret, (cap ? cap * 2 : 4) * sizeof(struct krc_pattern));
                if (nr == NULL) {
                    krc_free(pat);
                    return krc_error_set(err, KRC_ENOMEM, "out of memory");
                }
                *ret = nr;
                cap = cap ? cap * 2 : 4;
            }
            rc = krc_pattern_compile(&(*ret)[*ret_n], pat, KRC_PATTERN_TEXT, KRC_PATTERN_NEWLINE,
                                     key, err);
            if (rc < 0) {
                krc_free(pat);
                return rc;
            }
            krc_free(pat);
            (*ret_n)++;
        }
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* The notifier's options a configuration gives (the reloadable ones and the
 * rest); the daemon adds what is not configuration (redactor, clients, ...). */
static void notify_options_from(const struct krc_config *cfg, struct krc_sender_options *no)
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
    no->destinations = cfg->destinations;
    no->n_destinations = cfg->n_destinations;
    no->silences = cfg->silences;
    no->n_silences = cfg->n_silences;
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

static int setup_notifier(struct daemon *d, struct krc_error *err)
{
    const struct krc_config *cfg = d->cfg;
    struct krc_sender_options no;
    int rc;

    rc = krc_config_redactor(cfg, &d->redactor, err);
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
    no.store_path = d->db_path[0] ? d->db_path : NULL;
    no.store_options = &d->store_opts;
    no.store_flags = d->store_flags;
    no.on_delivered = on_delivered;
    no.on_posted = on_posted;
    no.on_delivered_userdata = d;
    no.cancel = &d->cancel;
    no.kubernetes_events = cfg->kubernetes_events;
    no.kube_auth = &d->auth;
    no.kube_tokens = d->tokens;
    d->notifier = krc_sender_new(&no, err);
    if (d->notifier == NULL) {
        return err != NULL && err->code ? err->code : KRC_ENOMEM;
    }
    for (size_t i = 0; i < cfg->n_destinations; i++) {
        const struct krc_destination *x = &cfg->destinations[i];
        krc_log(KRC_LOG_INFO, "destination %s: %s%s", x->name,
                x->kind != NULL ? x->kind->help : "?",
                x->is_default ? " (default: gets the restarts no route matches)" : "");
    }
    if (cfg->kubernetes_events) {
        krc_log(KRC_LOG_INFO,
                "writing an events.k8s.io/v1 Event (RestartDiagnosed) on each "
                "restarted pod (kubernetesEvents%s)",
                events_declared(cfg) ? ": the declared kubernetes-event destinations, by route"
                                     : "");
    }
    if (!krc_sender_has_destination(d->notifier)) {
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
    "mcpNamespaces",
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
    case KRC_CONFIG_DESTINATIONS:
        return krc_destinations_differ(a->destinations, a->n_destinations, b->destinations,
                                       b->n_destinations);
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
    krc_health_reloaded(&d->health, 0);
}

static void reload(struct daemon *d)
{
    const struct krc_config *old = live_cfg(d);
    struct krc_config *cfg = krc_calloc(1, sizeof(*cfg));
    struct krc_filter *filter = NULL;
    struct retired *ret = krc_calloc(1, sizeof(*ret));
    struct krc_sender_options no;
    struct krc_error e;
    char *errors = NULL;
    size_t changed = 0;
    int rc;

    krc_log(KRC_LOG_INFO, "SIGHUP received; reloading the configuration%s%s",
            d->cfg->config_file ? " from " : "", d->cfg->config_file ? d->cfg->config_file : "");
    /* a rotated Secret is taken whatever becomes of the configuration */
    krc_health_reload_mcp_token(&d->health);
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
    /* /mcp answers about what the new filters let through (from its next call) */
    if (d->mcp_tools != NULL) {
        struct krc_mcp_scope_config sc;
        krc_mcp_scope_config_from(cfg, &sc);
        if (krc_mcp_tools_set_scope(d->mcp_tools, &sc, &e) < 0) {
            reload_failed(d, e.msg);
            goto fail;
        }
    }
    /* Apply: the notifier first (under its lock), then the watch side. */
    if (d->notifier != NULL) {
        notify_options_from(cfg, &no); /* the notifier takes the reloadable ones */
        krc_sender_reconfigure(d->notifier, &no);
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
    krc_health_reloaded(&d->health, 1);
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
        krc_sender_abort(d->notifier);
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
 * the history, the notifier, leader election and the health endpoint. */
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
    if (open_history(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "history database: %s", e->msg);
        return -1;
    }
    if (setup_notifier(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "invalid alert configuration: %s", e->msg);
        return -1;
    }
    if (d->cfg->leader_elect && setup_leader(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "leader election: %s", e->msg);
        return -1;
    }
    /* Last of what the HTTP threads read (the notifier, the leader): they
     * start here, and those pointers are not written again. */
    d->health.notifier = d->notifier;
    d->health.leader = d->leader;
    if (setup_mcp(d, e) < 0) {
        krc_log(KRC_LOG_ERROR, "MCP endpoint: %s", e->msg);
        return -1;
    }
    if (krc_health_start(&d->health, e) < 0) {
        krc_log(KRC_LOG_ERROR, "health and metrics endpoint: %s", e->msg);
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
    p->notifier = d->notifier;
    p->redactor = d->redactor;
    p->leader = d->leader;
    p->lost = &d->lost;
    p->restarts_detected = d->health.std.restarts_detected;
    p->status = &d->status;
    p->client = krc_kube_client_new(&d->auth, d->tokens, e);
    if (p->client == NULL) {
        krc_log(KRC_LOG_ERROR, "cannot create the Kubernetes client: %s", e->msg);
        return KRC_ENOMEM;
    }
    krc_kube_client_set_timeout(p->client, 10000);
    if (d->store != NULL && open_store(d, 0, &p->store, e) < 0) {
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
            resume_outbox(d, d->store);
        }
        if (pthread_create(&d->pruner, NULL, pruner_main, d) == 0) {
            d->pruner_started = 1;
        }
        /* The main thread needs the database only at start-up. */
        krc_store_close(d->store);
        d->store = NULL;
    }
    /* The sender runs on a standby too, idle: nothing is queued for it until
     * this replica leads. */
    if (pthread_create(&d->sender, NULL, sender_main, d) != 0) {
        krc_log(KRC_LOG_ERROR, "cannot start the Slack sender thread");
        return -1;
    }
    d->sender_started = 1;
    if (d->cfg->leader_elect) {
        if (pthread_create(&d->leader_thread, NULL, leader_main, d->leader) != 0) {
            krc_log(KRC_LOG_ERROR, "cannot start the leader election thread");
            return -1;
        }
        d->leader_started = 1;
    } else if (start_watches(d) < 0) {
        d->cancel = 1;
        return -1;
    }
    return 0;
}

/* Between two signals, with leader election: start watching once leading;
 * returns 1 when the daemon must stop (leadership lost or overdue). */
static int follow_leader(struct daemon *d)
{
    enum krc_leader_role role = krc_leader_role(d->leader);

    if (role == KRC_LEADER_LEADING && !d->watching) {
        krc_log(KRC_LOG_INFO, "leading: watching pods and alerting");
        if (resume_after_takeover(d)) {
            leadership_lost(d);
            return 1;
        }
        return start_watches(d) < 0;
    }
    if (role == KRC_LEADER_LEADING && krc_leader_overdue(d->leader)) {
        /* a renewal hangs: past the renew deadline a standby may take the
         * Lease soon, so stop posting now */
        leadership_lost(d);
        krc_log(KRC_LOG_ERROR,
                "leader election: no renewal of the lease for %lds (renew deadline); "
                "stopping, exiting so that this replica restarts as a standby",
                d->cfg->lease_renew_deadline_s);
        return 1;
    }
    if (role == KRC_LEADER_LOST) {
        /* a fresh process starts as a clean standby */
        krc_log(KRC_LOG_ERROR, "leadership lost; exiting so that this replica restarts "
                               "as a standby");
        return 1;
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
            reload(d);
            continue;
        }
        if (sig == SIGTERM || sig == SIGINT) {
            krc_log(KRC_LOG_INFO, "%s received; shutting down",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT");
            *ret_signal = sig;
            break;
        }
        if (d->leader != NULL && follow_leader(d)) {
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

    while (krc_sender_pending(d->notifier) > 0 && krc_clock_mono_ms() < deadline) {
        krc_clock_sleep_ms(50, NULL);
    }
    /* The message in flight may finish (Slack may be processing it already);
     * a hung one is cut after SENDER_GRACE_MS. */
    krc_sender_abort(d->notifier);
    deadline = krc_clock_mono_ms() + SENDER_GRACE_MS;
    while (!atomic_load(&d->sender_done) && krc_clock_mono_ms() < deadline) {
        krc_clock_sleep_ms(20, NULL);
    }
    if (!atomic_load(&d->sender_done)) {
        krc_log(KRC_LOG_WARN,
                "shutdown: the Slack request in flight did not finish in %ds; "
                "aborted (it stays in the outbox)",
                SENDER_GRACE_MS / 1000);
        krc_sender_abort_transfers(d->notifier);
    }
    pthread_join(d->sender, NULL);
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

/* The configurations and filters SIGHUP replaced, and the live ones. */
static void free_reloaded(struct daemon *d)
{
    while (d->retired != NULL) {
        struct retired *r = d->retired;
        d->retired = r->next;
        if (r->cfg != d->cfg) {
            krc_config_cleanup(r->cfg);
            krc_free(r->cfg);
        }
        if (r->filter != d->filter) {
            krc_filter_free(r->filter);
        }
        krc_free(r);
    }
    if (atomic_load(&d->live) != d->cfg) {
        struct krc_config *live = (struct krc_config *)atomic_load(&d->live);
        krc_config_cleanup(live);
        krc_free(live);
    }
    if (atomic_load(&d->live_filter) != d->filter) {
        krc_filter_free(atomic_load(&d->live_filter));
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
    krc_sender_free(d->notifier);
    krc_redact_free(d->redactor);
    for (size_t i = 0; i < d->n_log_ignore; i++) {
        krc_pattern_cleanup(&d->log_ignore[i]);
    }
    krc_free(d->log_ignore);
    krc_health_cleanup(&d->health);
    krc_mcp_free(d->mcp);
    krc_mcp_tools_free(d->mcp_tools);
    krc_kube_client_free(d->mcp_client);
    for (size_t i = 0; d->scopes != NULL && i < d->n_scopes; i++) {
        krc_kube_client_free(d->scopes[i].client);
        krc_pod_state_free(d->scopes[i].state);
    }
    krc_free(d->scopes);
    krc_free(d->health.watches);
    krc_queue_cleanup(&d->queue, free_restart_item);
    krc_filter_free(d->filter);
    free_reloaded(d);
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
