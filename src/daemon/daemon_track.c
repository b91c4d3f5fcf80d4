/* Change tracking's runner (trackChanges): one thread per watched resource
 * and scope (the cluster, or each plain watched namespace; nodes are
 * cluster-wide), each running the generic watch loop into the tracker, and
 * the drain of the recorded changes into the store on the krc-store thread.
 *
 * A resource krc may not list or watch (403) or that the server does not
 * serve (404) is logged once by the watch loop, which then retries with its
 * backoff, quietly; these watches never make /readyz fail (they are not
 * among the health's watches): a tracker that has not synced a workload's
 * resource says nothing about it. Change tracking is an extra: a watch
 * whose client or thread cannot be created is left out with one warning
 * naming it, and the daemon runs on; its scope never syncs, so nothing is
 * said (never "no change") about what only it would have told. */
#include "krc/daemon/daemon_internal.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define TRACK_MAX_LINE (2u * 1024u * 1024u) /* one object or event line at most */

struct krc_daemon_track_watch {
    struct daemon *d;
    enum krc_track_resource r;
    const char *namespace; /* borrowed from the filter; NULL: the cluster */
    struct krc_kube_client *client;
    struct krc_watch_stats stats;
    long long skipped; /* objects the tracker could not read */
    int synced_once;
    pthread_t thread;
    int started;
};

static const char *scope_name(const struct krc_daemon_track_watch *w)
{
    return w->namespace != NULL ? w->namespace : "all namespaces";
}

static void h_sync_begin(void *userdata)
{
    struct krc_daemon_track_watch *w = userdata;
    if (krc_track_sync_begin(w->d->track, w->r, w->namespace) < 0) {
        krc_log(KRC_LOG_ERROR, "change tracking: out of memory starting a sync of %s",
                krc_track_resource_info(w->r)->name);
    }
}

static void h_sync_end(void *userdata)
{
    struct krc_daemon_track_watch *w = userdata;
    krc_track_sync_end(w->d->track, w->r, w->namespace, krc_clock_now());
    if (!w->synced_once) {
        struct krc_track_stats st;
        w->synced_once = 1;
        krc_track_get_stats(w->d->track, &st);
        krc_log(KRC_LOG_INFO,
                "change tracking: %s (%s) synced; tracking %zu revisions (%zu with their "
                "template), %zu workloads, %zu nodes, %zu strings in %zu KiB",
                krc_track_resource_info(w->r)->name, scope_name(w), st.revisions, st.templates,
                st.workloads, st.nodes, st.strings, st.string_bytes / 1024);
    }
}

static void h_object(enum krc_watch_event_type type, const char *json, size_t len, void *userdata)
{
    struct krc_daemon_track_watch *w = userdata;
    struct krc_error e;
    int rc;

    krc_error_clear(&e);
    rc = krc_track_object(w->d->track, w->r, type, json, len, krc_clock_now(), &e);
    if (rc == KRC_EPARSE) {
        /* the first of a resource at warn, the rest at debug: one odd
         * object type must not flood the log */
        w->skipped++;
        krc_log(w->skipped == 1 ? KRC_LOG_WARN : KRC_LOG_DEBUG,
                "change tracking: a %s object was skipped: %s", krc_track_resource_info(w->r)->name,
                e.msg);
    } else if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "change tracking: %s", e.msg);
    }
}

static void *track_main(void *arg)
{
    struct krc_daemon_track_watch *w = arg;
    const struct krc_track_resource_info *ri = krc_track_resource_info(w->r);
    struct krc_watch_options o;
    struct krc_watch_handler h;
    struct krc_error e;

    krc_daemon_name_thread("krc-track");
    krc_watch_options_defaults(&o);
    o.resource = ri->path;
    o.metadata_only = ri->metadata_only;
    o.namespace = ri->namespaced ? w->namespace : NULL;
    o.idle_timeout_ms = w->d->cfg->watch_idle_timeout_s * 1000;
    o.page_size = (int)w->d->cfg->list_page_size;
    o.streaming_list = w->d->cfg->streaming_list;
    /* etcd refuses objects over ~1.5 MiB: a larger line is a broken or hostile
     * server's, and eight watches at the pods' 8 MiB would bound far more */
    o.max_line = TRACK_MAX_LINE;
    o.cancel = &w->d->cancel;
    o.stats = &w->stats;
    memset(&h, 0, sizeof(h));
    h.sync_begin = h_sync_begin;
    h.object = h_object;
    h.sync_end = h_sync_end;
    h.userdata = w;
    krc_error_clear(&e);
    if (krc_watch_run(w->client, &o, &h, &e) < 0) {
        /* change tracking is an extra: the daemon goes on without it */
        krc_log(KRC_LOG_ERROR, "change tracking: the %s watch (%s) stopped: %s", ri->name,
                scope_name(w), e.msg);
    }
    return NULL;
}

/* What the answer lacks without resource r's watch (a warning's words). */
static const char *without(enum krc_track_resource r)
{
    switch (r) {
    case KRC_TRACK_DEPLOYMENTS:
        return "who changed a Deployment";
    case KRC_TRACK_REPLICASETS:
        return "the rollouts of Deployments";
    case KRC_TRACK_STATEFULSETS:
        return "who changed a StatefulSet";
    case KRC_TRACK_DAEMONSETS:
        return "who changed a DaemonSet";
    case KRC_TRACK_CONTROLLERREVISIONS:
        return "the rollouts of StatefulSets and DaemonSets";
    case KRC_TRACK_JOBS:
        return "Jobs";
    case KRC_TRACK_CRONJOBS:
        return "CronJobs";
    default:
        return "nodes";
    }
}

/* A watch that cannot start: one warning naming it. The tracker never hears
 * of its scope, which stays unsynced: describe says nothing (rather than "no
 * change") for what only this watch would have told. */
static void not_started(const struct krc_daemon_track_watch *w, const char *why)
{
    krc_log(KRC_LOG_WARN,
            "change tracking: the %s watch (%s) is not started: %s; krc runs without it, and its "
            "alerts say nothing about %s%s%s",
            krc_track_resource_info(w->r)->name, scope_name(w), why, without(w->r),
            w->namespace != NULL ? " in namespace " : "", w->namespace != NULL ? w->namespace : "");
}

/* The watches wanted: per namespaced resource one per scope (the cluster,
 * or each plain watched namespace), and one of the nodes. */
static size_t watches_wanted(const struct daemon *d, const char *const **names, size_t *n_names)
{
    *n_names = krc_filter_plain_namespaces(d->filter, names);
    return (KRC_TRACK_N_RESOURCES - 1) * (*n_names > 0 ? *n_names : 1) + 1;
}

void krc_daemon_track_setup(struct daemon *d)
{
    const char *const *names = NULL;
    size_t n_names;
    size_t want;

    if (!d->cfg->track_changes) {
        krc_log(KRC_LOG_INFO, "change tracking off (trackChanges: false): alerts say nothing "
                              "about what changed");
        return;
    }
    want = watches_wanted(d, &names, &n_names);
    d->track = krc_track_new(NULL);
    d->track_watches = krc_calloc(want, sizeof(struct krc_daemon_track_watch));
    if (d->track == NULL || d->track_watches == NULL) {
        /* change tracking is an extra: the daemon goes on without it */
        krc_log(KRC_LOG_WARN, "change tracking off: out of memory setting it up; alerts say "
                              "nothing about what changed");
        krc_track_free(d->track);
        krc_free(d->track_watches);
        d->track = NULL;
        d->track_watches = NULL;
        return;
    }
    /* n_track_watches counts the ones set up: start, stop and clean-up see
     * no other */
    for (int r = 0; r < KRC_TRACK_N_RESOURCES; r++) {
        int per_ns = krc_track_resource_info((enum krc_track_resource)r)->namespaced && n_names;
        for (size_t i = 0; i < (per_ns ? n_names : 1); i++) {
            struct krc_daemon_track_watch *w = &d->track_watches[d->n_track_watches];
            struct krc_error e;
            memset(w, 0, sizeof(*w));
            w->d = d;
            w->r = (enum krc_track_resource)r;
            w->namespace = per_ns ? names[i] : NULL;
            krc_error_clear(&e);
            w->client = krc_kube_client_new(&d->auth, d->tokens, &e);
            if (w->client == NULL) {
                char why[KRC_ERROR_MSG_MAX + 64];
                snprintf(why, sizeof(why), "cannot create its Kubernetes client: %s", e.msg);
                not_started(w, why);
                continue;
            }
            d->n_track_watches++;
        }
    }
    if (n_names > KRC_DAEMON_TRACK_MANY_NAMESPACES) {
        /* a namespaced install's Roles (the chart's with plain watched
         * namespaces) grant no cluster-wide list or watch: the watches stay
         * per namespace, and their cost is said once */
        krc_log(KRC_LOG_INFO,
                "change tracking: %zu watched namespaces: %zu watches, each its own thread and API "
                "connection (%d per namespace, and nodes); trackChanges: false drops them",
                n_names, want, KRC_TRACK_N_RESOURCES - 1);
    }
    if (d->cfg->track_config_changes) {
        krc_log(KRC_LOG_INFO, "change tracking: also the metadata of a crashing pod's ConfigMaps "
                              "and Secrets (trackConfigChanges)");
    }
}

void krc_daemon_track_start(struct daemon *d)
{
    const char *const *names;
    size_t n_names;
    size_t started = 0;

    for (size_t i = 0; i < d->n_track_watches; i++) {
        struct krc_daemon_track_watch *w = &d->track_watches[i];
        int rc = pthread_create(&w->thread, NULL, track_main, w);
        if (rc != 0) {
            char why[160];
            snprintf(why, sizeof(why), "cannot create its thread: %s", KRC_ERRNO_STR(rc));
            not_started(w, why);
            continue;
        }
        w->started = 1;
        started++;
    }
    if (d->track != NULL) {
        krc_log(KRC_LOG_INFO,
                "change tracking: %zu of %zu watches started (workload controllers and nodes)",
                started, watches_wanted(d, &names, &n_names));
    }
}

/* After d->cancel: the watch loops end within their cancel checks. */
void krc_daemon_track_stop(struct daemon *d)
{
    for (size_t i = 0; d->track_watches != NULL && i < d->n_track_watches; i++) {
        if (d->track_watches[i].started) {
            pthread_join(d->track_watches[i].thread, NULL);
            d->track_watches[i].started = 0;
        }
    }
}

void krc_daemon_track_cleanup(struct daemon *d)
{
    for (size_t i = 0; d->track_watches != NULL && i < d->n_track_watches; i++) {
        krc_kube_client_free(d->track_watches[i].client);
    }
    krc_free(d->track_watches);
    d->track_watches = NULL;
    krc_track_free(d->track);
    d->track = NULL;
}

struct drain_ctx {
    struct daemon *d;
    struct krc_store *st;
    size_t stored, failed;
    char first_error[KRC_ERROR_MSG_MAX];
};

static void store_change(const struct krc_track_change *c, void *ud)
{
    struct drain_ctx *x = ud;
    struct krc_store_change sc;
    struct krc_error e;
    int rc;

    memset(&sc, 0, sizeof(sc));
    sc.namespace = c->namespace;
    sc.kind = c->kind;
    sc.name = c->name;
    sc.revision = c->revision;
    sc.manager = c->manager;
    sc.summary = c->summary;
    sc.detail_json = c->detail_json;
    sc.at = c->at;
    krc_error_clear(&e);
    rc = krc_store_record_change(x->st, &sc, &e);
    if (rc < 0) {
        if (x->failed++ == 0) {
            snprintf(x->first_error, sizeof(x->first_error), "%s", e.msg);
        }
    } else if (rc == 0) {
        x->stored++;
    }
}

/* The krc-store thread, between retention rounds: the changes recorded since
 * the last drain into the history (a change already stored, by another
 * replica or before a restart of krc, is KRC_STORE_EXISTS: skipped). */
void krc_daemon_track_drain(struct daemon *d, struct krc_store *st)
{
    struct drain_ctx x;

    if (d->track == NULL || st == NULL) {
        return;
    }
    memset(&x, 0, sizeof(x));
    x.d = d;
    x.st = st;
    krc_track_drain(d->track, store_change, &x);
    if (x.failed > 0) {
        atomic_fetch_add(&d->status.store_errors, 1);
        krc_log(KRC_LOG_WARN,
                "change tracking: %zu change(s) not written to the history: %s (alerts still "
                "name them from memory)",
                x.failed, x.first_error);
    } else if (x.stored > 0) {
        krc_log(KRC_LOG_DEBUG, "change tracking: %zu change(s) written to the history", x.stored);
    }
}
