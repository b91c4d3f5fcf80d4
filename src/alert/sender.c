#include "krc/alert/sender.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/alert/dest.h"
#include "krc/alert/policy.h"
#include "krc/alert/recovery.h"
#include "krc/alert/sink.h"
#include "krc/alert/format.h"
#include "krc/store/store.h"
#include <stdlib.h>

#define MAX_DESTS 64
#define MAX_LANES 64
#define LANE_RETRY_MS 10000 /* a lane whose sink could not be built tries again */
#define MAX_MUTES 4096
#define MAX_GROUPS 64
#define MAX_EXAMPLES 8
#define MAX_RECOVERY 1024
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

static void siblings_unref(struct siblings *g)
{
    if (g != NULL && atomic_fetch_sub(&g->refs, 1) == 1) {
        krc_free(g);
    }
}

/* One message of g settled: 1 when it was the last and one was accepted. */
static int siblings_settle(struct siblings *g, int sent)
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
    char pod_key[512];        /* namespace/pod */
    char *body;               /* formatted JSON, thread_ts added at send time for replies */
    char *fallback;           /* text-only JSON, or NULL */
    char what[300];           /* for logs: "alert for ns/pod container c (cause)" */
    int64_t outbox_id;        /* store row, 0 when not stored */
    int64_t detected_mono_ms; /* 0: unknown (resumed from the outbox) */
    int64_t restart_id;       /* store row of the restart, 0 when unknown */
    char uid[64];             /* the restart, "" when unknown (resumed from the outbox) */
    char container[256];
    int restart_count;
    int64_t finished_at;
    char container_id[160];
    struct siblings *group; /* the restart's other destinations' messages, or NULL */
    int64_t not_before_ms;  /* retry time after a transient failure */
    struct krc_report *rep;
    struct krc_diagnosis *diag;
    char *full_log;
    size_t full_log_len;
    struct krc_alert_recovered recovered; /* strings point into the item's rec_* */
    char rec_ns[256];
    char rec_pod[256];
    char rec_container[256];
    struct item *next;
};

struct group {
    char key[256];
    long count;
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
 * state: a webhook URL, or the Web API. One lane's 429 or outage never holds
 * another's messages. The queues are under the notifier's lock. */
struct lane {
    struct krc_sender *n;
    char key[1024];                      /* the webhook URL, "api", or "dest:NAME" */
    const char *webhook_url;             /* borrowed from options/routes; NULL for the Web API */
    const struct krc_sink_ops *ops;      /* the lane's kind of sink */
    const struct krc_destination *named; /* a named destination, or NULL (Slack) */
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
    char *webhook_url; /* borrowed from options/routes */
    char *channel;
    char key[1024];
    char store_key[64]; /* "webhook:default", "route:N", "api", "dest:NAME": never a URL */
    char channel_buf[256];
    const struct krc_sink_ops *ops;      /* formats for this destination */
    const struct krc_destination *named; /* NULL: the Go tool's Slack */
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

struct krc_sender {
    struct krc_sender_options o;
    struct krc_sender_stats stats;
    struct krc_sink_options sink_options;
    const struct krc_sink_ops *ops; /* the kind of sink of every lane */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the main sender loop */
    size_t n_items;      /* in all lanes */
    struct lane lanes[MAX_LANES];
    size_t n_lanes;
    int running; /* krc_sender_run started: lanes start their threads */
    struct dest dests[MAX_DESTS];
    size_t n_dests;
    struct krc_policy pol; /* the policy's view of o */
    struct krc_policy_mutes mutes;
    struct krc_recovery *recovery; /* Web API with recoveredAfter: what the watch saw */
    int web_api;
    int track_recovery; /* a recovery tracker is kept (Web API threads, PagerDuty resolve) */
    /* the named destinations krc started with: a reload changes the routes (and the
     * indices they hold into its own list) but not the destinations, which keep their
     * lanes and settings until krc is restarted */
    const struct krc_destination *fixed;
    size_t n_fixed;
    /* kubernetesEvents with no declared kubernetes-event destination: the
     * implicit one, which every restart goes to whatever the routes */
    struct krc_destination implicit_event;
    int has_implicit_event;
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

/* on_posted for a restart (a message, or the last of its siblings, was
 * settled): the leader hand-over learns it was handled. */
static void publish_handled(const struct krc_sender *n, const char *uid, const char *container,
                            int restart_count, int64_t finished_at, const char *container_id)
{
    if (n->o.on_posted != NULL && uid[0] != '\0') {
        n->o.on_posted(uid, container, restart_count, finished_at,
                       container_id[0] ? container_id : NULL, n->o.on_delivered_userdata);
    }
}

/* --- lifecycle ------------------------------------------------------------ */

/* Every named destination has a sink in this build; its secrets are
 * registered with the log redactor. */
static int check_destinations(const struct krc_sender_options *o, struct krc_error *err)
{
    for (size_t i = 0; i < o->n_destinations; i++) {
        const struct krc_destination *d = &o->destinations[i];
        if (krc_dest_ops(d) == NULL) {
            return krc_error_set(err, KRC_EUNSUPPORTED,
                                 "destination %s: type %s is not available in this build of krc",
                                 d->name, d->kind != NULL ? d->kind->name : "?");
        }
        if (krc_dest_is(d, "kubernetes-event") && !o->kubernetes_events) {
            return krc_error_set(err, KRC_EINVAL,
                                 "destination %s (line %zu): type kubernetes-event needs "
                                 "kubernetesEvents: true (it is false, so krc has no permission "
                                 "to create Events); remove the destination or turn it on",
                                 d->name, d->line);
        }
        if (d->url != NULL && krc_dest_url_hidden(d)) {
            krc_log_add_secret(d->url);
        }
        if (d->secret != NULL) {
            krc_log_add_secret(d->secret);
        }
        for (const char *h = d->headers; h != NULL && *h != '\0';) {
            const char *nl = strchr(h, '\n');
            size_t l = nl != NULL ? (size_t)(nl - h) : strlen(h);
            const char *colon = memchr(h, ':', l);
            if (colon != NULL) {
                char v[1024];
                const char *b = colon + 1;
                while (*b == ' ' || *b == '\t') {
                    b++;
                }
                snprintf(v, sizeof(v), "%.*s", (int)(h + l - b), b);
                if (strlen(v) >= 4) {
                    krc_log_add_secret(v);
                }
            }
            h = nl != NULL ? nl + 1 : h + l;
        }
    }
    return 0;
}

/* The implicit Kubernetes Event destination: with kubernetesEvents, when
 * no destination of that type is declared (a declared one replaces it, so
 * a restart never gets two Events from it). Its name must be free. */
static int implicit_event(struct krc_sender *n, const struct krc_sender_options *o,
                          struct krc_error *err)
{
    if (!o->kubernetes_events) {
        return 0;
    }
    for (size_t i = 0; i < o->n_destinations; i++) {
        if (krc_dest_is(&o->destinations[i], "kubernetes-event")) {
            return 0;
        }
    }
    for (size_t i = 0; i < o->n_destinations; i++) {
        if (strcmp(o->destinations[i].name, KRC_SENDER_KUBE_EVENT_NAME) == 0) {
            return krc_error_set(err, KRC_EINVAL,
                                 "destination %s (line %zu): the name is the Kubernetes Event "
                                 "destination's (kubernetesEvents: true); rename it",
                                 o->destinations[i].name, o->destinations[i].line);
        }
    }
    n->implicit_event.name = (char *)KRC_SENDER_KUBE_EVENT_NAME;
    n->implicit_event.kind = &krc_dest_kind_find("kubernetes-event")->schema;
    n->has_implicit_event = 1;
    return 0;
}

/* A named destination whose sink takes "recovered" messages without threads. */
static int wants_resolves(const struct krc_sender_options *o)
{
    for (size_t i = 0; i < o->n_destinations; i++) {
        const struct krc_dest_kind *k = krc_dest_kind_of(&o->destinations[i]);
        if (k != NULL && k->resolves) {
            return 1;
        }
    }
    return 0;
}

/* The policy's view of the options. Caller holds the lock (or owns n). */
static void policy_from(struct krc_sender *n)
{
    struct krc_policy *p = &n->pol;

    memset(p, 0, sizeof(*p));
    p->webhook_url = n->o.webhook_url;
    p->channel = n->o.channel;
    p->web_api = n->web_api;
    p->mute_seconds = n->o.mute_seconds;
    p->storm_threshold = n->o.storm_threshold;
    p->storm_window_s = n->o.storm_window_s;
    p->storm_delay_s = n->o.storm_delay_s;
    p->routes = n->o.routes;
    p->n_routes = n->o.n_routes;
    p->destinations = n->o.destinations;
    p->n_destinations = n->o.n_destinations;
    p->silences = n->o.silences;
    p->n_silences = n->o.n_silences;
    p->log_ignore = n->o.log_ignore;
    p->n_log_ignore = n->o.n_log_ignore;
}

struct krc_sender *krc_sender_new(const struct krc_sender_options *o, struct krc_error *err)
{
    struct krc_sender *n = krc_calloc(1, sizeof(*n));
    struct krc_sink_options *so;

    if (n == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    n->o = *o;
    n->web_api = o->bot_token != NULL && o->bot_token[0] != '\0';
    pthread_mutex_init(&n->lock, NULL);
    pthread_mutex_init(&n->mark_lock, NULL);
    pthread_cond_init(&n->wake, NULL);
    policy_from(n);
    if (check_destinations(o, err) < 0 || implicit_event(n, o, err) < 0) {
        krc_sender_free(n);
        return NULL;
    }
    n->fixed = o->destinations;
    n->n_fixed = o->n_destinations;
    n->track_recovery = (n->web_api || wants_resolves(o)) && o->recovered_after_s > 0;
    if (n->track_recovery) {
        n->recovery = krc_recovery_new(MAX_RECOVERY);
    }
    if (krc_policy_mutes_init(&n->mutes, MAX_MUTES) < 0 ||
        (n->track_recovery && n->recovery == NULL)) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        krc_sender_free(n);
        return NULL;
    }
    if (o->webhook_url != NULL && o->webhook_url[0] != '\0') {
        krc_log_add_secret(o->webhook_url);
    }
    for (size_t i = 0; i < o->n_routes; i++) {
        if (o->routes[i].webhook_url != NULL) {
            krc_log_add_secret(o->routes[i].webhook_url);
        }
    }
    if (n->web_api) {
        krc_log_add_secret(o->bot_token);
    }
    n->ops = o->sink_ops != NULL
                 ? o->sink_ops
                 : krc_dest_kind_find(n->web_api ? "slack-api" : "slack-webhook")->ops;
    so = &n->sink_options;
    krc_sink_options_defaults(so);
    if (o->api_url != NULL && o->api_url[0] != '\0') {
        so->api_url = o->api_url;
    }
    so->bot_token = o->bot_token;
    so->ca_file = o->ca_file;
    so->cancel = &n->abort;
    so->cancel_transfer = &n->abort_hard;
    so->kube_auth = o->kube_auth;
    so->kube_tokens = o->kube_tokens;
    return n;
}

static void item_free(struct item *it)
{
    if (it == NULL) {
        return;
    }
    krc_free(it->body);
    krc_free(it->fallback);
    krc_report_free(it->rep);
    if (it->diag != NULL) {
        krc_diagnosis_cleanup(it->diag);
        krc_free(it->diag);
    }
    krc_free(it->full_log);
    siblings_unref(it->group);
    krc_free(it);
}

static void lane_cleanup(struct lane *l)
{
    while (l->head != NULL) {
        struct item *it = l->head;
        l->head = it->next;
        item_free(it);
    }
    krc_sink_free(l->sink);
    pthread_cond_destroy(&l->wake);
}

void krc_sender_free(struct krc_sender *n)
{
    if (n == NULL) {
        return;
    }
    for (size_t i = 0; i < n->n_lanes; i++) {
        lane_cleanup(&n->lanes[i]);
    }
    krc_policy_mutes_cleanup(&n->mutes);
    krc_recovery_free(n->recovery);
    pthread_mutex_destroy(&n->mark_lock);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->wake);
    krc_free(n);
}

const struct krc_sender_stats *krc_sender_stats(const struct krc_sender *n)
{
    return &n->stats;
}

int krc_sender_has_destination(const struct krc_sender *n)
{
    if (n->web_api) {
        if (n->o.channel != NULL && n->o.channel[0] != '\0') {
            return 1;
        }
    } else if (n->o.webhook_url != NULL && n->o.webhook_url[0] != '\0') {
        return 1;
    }
    for (size_t i = 0; i < n->o.n_routes; i++) {
        if ((n->web_api && n->o.routes[i].channel != NULL) ||
            (!n->web_api && n->o.routes[i].webhook_url != NULL) || n->o.routes[i].n_dests > 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < n->o.n_destinations; i++) {
        if (n->o.destinations[i].is_default) {
            return 1;
        }
    }
    return 0; /* the implicit Kubernetes Event is not counted: it is not posted */
}

void krc_sender_reconfigure(struct krc_sender *n, const struct krc_sender_options *o)
{
    for (size_t i = 0; i < o->n_routes; i++) {
        if (o->routes[i].webhook_url != NULL) {
            krc_log_add_secret(o->routes[i].webhook_url);
        }
    }
    pthread_mutex_lock(&n->lock);
    n->o.cluster_name = o->cluster_name;
    n->o.channel = o->channel;
    n->o.username = o->username;
    n->o.icon_emoji = o->icon_emoji;
    n->o.mute_seconds = o->mute_seconds;
    n->o.storm_threshold = o->storm_threshold;
    n->o.storm_window_s = o->storm_window_s;
    n->o.storm_delay_s = o->storm_delay_s;
    n->o.max_log_lines = o->max_log_lines;
    n->o.routes = o->routes;
    n->o.n_routes = o->n_routes;
    /* for the routes' indices only: the destinations themselves are n->fixed */
    n->o.destinations = o->destinations;
    n->o.n_destinations = o->n_destinations;
    n->o.silences = o->silences;
    n->o.n_silences = o->n_silences;
    policy_from(n);
    pthread_mutex_unlock(&n->lock);
}

int krc_sender_wants_full_log(const struct krc_sender *n)
{
    return n->web_api;
}

size_t krc_sender_pending(struct krc_sender *n)
{
    size_t k;
    pthread_mutex_lock(&n->lock);
    k = n->n_items;
    /* at shutdown, an owed storm summary counts as pending too */
    if (n->o.cancel != NULL && *n->o.cancel) {
        for (size_t i = 0; i < n->n_dests; i++) {
            k += n->dests[i].storm.active && n->dests[i].grouped_total > 0;
        }
    }
    pthread_mutex_unlock(&n->lock);
    return k;
}

/* --- lanes ---------------------------------------------------------------- */

static void *lane_main(void *arg);

/* Start a lane's thread once the sender runs. Caller holds the lock. */
static void lane_start(struct krc_sender *n, struct lane *l)
{
    if (!n->running || l->started || atomic_load(&n->abort)) {
        return;
    }
    atomic_store(&l->heartbeat_ms, krc_clock_mono_ms());
    if (pthread_create(&l->thread, NULL, lane_main, l) != 0) {
        krc_log(KRC_LOG_ERROR, "sender: cannot start a delivery thread; retrying in %ds",
                LANE_RETRY_MS / 1000);
        return;
    }
    l->started = 1;
}

/* The lane of `key` (a webhook URL, "api" or "dest:NAME"), made with these
 * settings when new. Caller holds the lock. */
static struct lane *lane_get(struct krc_sender *n, const char *key, const char *webhook,
                             const struct krc_sink_ops *ops, const struct krc_destination *named)
{
    struct lane *l;

    for (size_t i = 0; i < n->n_lanes; i++) {
        /* clang-tidy: web_api never changes after krc_sender_new; without it every caller passes a
         * webhook (route, resume_row check) */
        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
        if (strcmp(n->lanes[i].key, key) == 0) {
            return &n->lanes[i];
        }
    }
    if (n->n_lanes == MAX_LANES) {
        return &n->lanes[MAX_LANES - 1]; /* pathological: share the last lane */
    }
    l = &n->lanes[n->n_lanes++];
    l->n = n;
    snprintf(l->key, sizeof(l->key), "%s", key);
    l->webhook_url = webhook;
    l->ops = ops;
    l->named = named;
    pthread_cond_init(&l->wake, NULL);
    lane_start(n, l);
    return l;
}

/* Caller holds the lock. */
static void lane_push(struct krc_sender *n, struct lane *l, struct item *it)
{
    if (l->tail != NULL) {
        l->tail->next = it;
    } else {
        l->head = it;
    }
    l->tail = it;
    l->n_items++;
    n->n_items++;
    pthread_cond_signal(&l->wake);
}

/* --- routing ------------------------------------------------------------- */

static struct dest *dest_get(struct krc_sender *n, const char *webhook, const char *channel,
                             const char *store_key)
{
    struct dest *d;
    char key[1024];

    snprintf(key, sizeof(key), "%s|%s", n->web_api ? "api" : webhook, channel ? channel : "");
    for (size_t i = 0; i < n->n_dests; i++) {
        if (strcmp(n->dests[i].key, key) == 0) {
            return &n->dests[i];
        }
    }
    if (n->n_dests == MAX_DESTS) {
        return &n->dests[MAX_DESTS - 1]; /* pathological: share the last slot */
    }
    d = &n->dests[n->n_dests++];
    memset(d, 0, sizeof(*d));
    d->webhook_url = n->web_api ? NULL : (char *)webhook;
    if (channel != NULL) {
        snprintf(d->channel_buf, sizeof(d->channel_buf), "%s", channel);
        d->channel = d->channel_buf;
    }
    snprintf(d->key, sizeof(d->key), "%s", key);
    snprintf(d->store_key, sizeof(d->store_key), "%s", store_key);
    d->ops = n->ops;
    d->lane = lane_get(n, n->web_api ? "api" : webhook, n->web_api ? NULL : webhook, n->ops, NULL);
    return d;
}

/* The destination of a named one (config/destinations.h). Caller holds the
 * lock. */
static struct dest *dest_get_named(struct krc_sender *n, const struct krc_destination *nd)
{
    struct dest *d;
    char key[1024];

    snprintf(key, sizeof(key), "dest:%s", nd->name);
    for (size_t i = 0; i < n->n_dests; i++) {
        if (strcmp(n->dests[i].key, key) == 0) {
            return &n->dests[i];
        }
    }
    if (n->n_dests == MAX_DESTS) {
        return &n->dests[MAX_DESTS - 1]; /* pathological: share the last slot */
    }
    d = &n->dests[n->n_dests++];
    memset(d, 0, sizeof(*d));
    snprintf(d->key, sizeof(d->key), "%s", key);
    snprintf(d->store_key, sizeof(d->store_key), "%s", key);
    if (nd->channel != NULL) {
        snprintf(d->channel_buf, sizeof(d->channel_buf), "%s", nd->channel);
        d->channel = d->channel_buf;
    }
    d->ops = krc_dest_ops(nd);
    d->named = nd;
    d->lane = lane_get(n, key, NULL, d->ops, nd);
    return d;
}

#define MAX_ROUTED KRC_POLICY_MAX_ROUTED

/* The running destination of that name (NULL: one a reload added; it
 * takes effect when krc is restarted, as the reload's warning says). */
static const struct krc_destination *fixed_named(const struct krc_sender *n, const char *name)
{
    for (size_t i = 0; i < n->n_fixed; i++) {
        if (strcmp(n->fixed[i].name, name) == 0) {
            return &n->fixed[i];
        }
    }
    if (n->has_implicit_event && strcmp(name, n->implicit_event.name) == 0) {
        return &n->implicit_event;
    }
    return NULL;
}

/* The destinations of a restart (Slack first, then the named ones, then
 * the implicit Kubernetes Event): how many were written to out (0: nothing
 * is configured for it). Caller holds the lock. */
static size_t route(struct krc_sender *n, const struct krc_restart *r, struct dest **out)
{
    struct krc_policy_target t;
    size_t k = 0;

    if (!krc_policy_route(&n->pol, r->namespace, r->pod, r->container, r->slack_channel, &t)) {
        t.slack = 0;
        t.n_named = 0;
    }
    if (t.slack) {
        out[k++] = dest_get(n, t.webhook_url, t.channel, t.store_key);
    }
    for (size_t i = 0; i < t.n_named; i++) {
        const struct krc_destination *nd = fixed_named(n, n->o.destinations[t.named[i]].name);
        if (nd != NULL && krc_dest_ops(nd) != NULL) {
            out[k++] = dest_get_named(n, nd);
        }
    }
    if (n->has_implicit_event) {
        out[k++] = dest_get_named(n, &n->implicit_event);
    }
    return k;
}

/* A Kubernetes Event destination (declared or implicit). */
static int is_event(const struct dest *d)
{
    return d->named != NULL && krc_dest_is(d->named, "kubernetes-event");
}

/* --- storm guard ---------------------------------------------------------- */

static void group_add(struct group *g, size_t *n, const char *key)
{
    if (key == NULL || key[0] == '\0') {
        key = "(unknown)";
    }
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(g[i].key, key) == 0) {
            g[i].count++;
            return;
        }
    }
    if (*n < MAX_GROUPS) {
        snprintf(g[*n].key, sizeof(g[*n].key), "%s", key);
        g[*n].count = 1;
        (*n)++;
    } else {
        g[MAX_GROUPS - 1].count++; /* folded into the last group */
    }
}

static void dest_group(struct dest *d, const struct krc_report *rep,
                       const struct krc_diagnosis *diag, const struct krc_restart *r)
{
    char wl[512];
    const char *ns = rep != NULL && rep->namespace ? rep->namespace : r ? r->namespace : "";
    const char *pod = rep != NULL && rep->name ? rep->name : r ? r->pod : "";
    const char *node = rep != NULL && rep->node_name ? rep->node_name : r ? r->node : NULL;
    const char *container = diag != NULL && diag->container ? diag->container
                            : r != NULL                     ? r->container
                                                            : "";
    const char *cause = diag != NULL ? krc_cause_name(diag->cause) : "unknown";

    if (rep != NULL && rep->workload_kind != NULL) {
        snprintf(wl, sizeof(wl), "%s %s/%s", rep->workload_kind, ns,
                 rep->workload_name ? rep->workload_name : "");
    } else {
        snprintf(wl, sizeof(wl), "Pod %s/%s", ns, pod);
    }
    group_add(d->by_node, &d->n_by_node, node);
    group_add(d->by_workload, &d->n_by_workload, wl);
    group_add(d->by_cause, &d->n_by_cause, cause);
    if (d->n_examples < MAX_EXAMPLES) {
        struct example *x = &d->examples[d->n_examples++];
        snprintf(x->namespace, sizeof(x->namespace), "%s", ns);
        snprintf(x->pod, sizeof(x->pod), "%s", pod);
        snprintf(x->container, sizeof(x->container), "%s", container);
        snprintf(x->cause, sizeof(x->cause), "%s", cause);
        snprintf(x->node, sizeof(x->node), "%s", node ? node : "");
        x->restart_count = diag != NULL ? diag->restart_count : r ? r->restart_count : 0;
    }
    d->grouped_total++;
    d->storm_total++;
}

/* Count an arrival; start a storm when the window holds too many. Caller
 * holds the lock. Pending, unsent alerts of this destination are folded
 * into the summary so a burst never becomes a flood. */
static void storm_arrival(struct krc_sender *n, struct dest *d, int64_t now_ms)
{
    if (!krc_policy_storm_arrival(&n->pol, &d->storm, now_ms)) {
        return;
    }
    d->storm_total = 0;
    krc_log(KRC_LOG_WARN,
            "alert storm: more than %d restarts within %lds for one destination (%s); grouping "
            "further restarts into a summary%s",
            n->pol.storm_threshold, n->pol.storm_window_s, d->store_key,
            is_event(d) ? " (a Kubernetes Event has none: grouped restarts get no Event)" : "");
    /* withdraw queued alerts of this destination */
    for (struct item *it = d->lane->head; it != NULL; it = it->next) {
        if (it->dest == d && (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
            /* Not posted: counted into the summary. The item stays queued as
             * WITHDRAWN so the sender settles its outbox row (it must not be
             * resent after a restart of krc). */
            dest_group(d, it->rep, it->diag, NULL);
            atomic_fetch_add(&n->stats.grouped, 1);
            krc_log(KRC_LOG_INFO, "%s withdrawn: grouped into the storm summary", it->what);
            it->kind = ITEM_WITHDRAWN;
        }
    }
}

enum krc_policy_decision krc_sender_decide(struct krc_sender *n, const struct krc_restart *r)
{
    enum krc_policy_decision d = KRC_POLICY_ALERT;
    int64_t now = krc_clock_now();
    struct dest *dests[MAX_ROUTED];
    size_t n_dests;
    size_t storming = 0;
    char key[512];

    pthread_mutex_lock(&n->lock);
    n_dests = route(n, r, dests);
    if (n_dests == 0) {
        d = KRC_POLICY_NO_DESTINATION;
        goto out;
    }
    if (krc_policy_silenced(&n->pol, r->namespace, r->pod, r->container, now)) {
        d = KRC_POLICY_SILENCED;
        atomic_fetch_add(&n->stats.silenced, 1);
        goto out;
    }
    /* the storm guard is per destination: grouped when every one of them
     * is in a storm (the others get the alert; prepare groups it into the
     * storming ones' summaries) */
    for (size_t i = 0; i < n_dests; i++) {
        storm_arrival(n, dests[i], krc_clock_mono_ms());
        storming += dests[i]->storm.active != 0;
    }
    if (storming == n_dests) {
        d = KRC_POLICY_GROUPED;
        goto out;
    }
    snprintf(key, sizeof(key), "%s/%s", r->namespace, r->pod);
    switch (krc_policy_mute_check(&n->pol, &n->mutes, key, now)) {
    case KRC_POLICY_MUTE_THREAD:
        d = KRC_POLICY_THREAD;
        break;
    case KRC_POLICY_MUTE_MUTED:
        d = KRC_POLICY_MUTED;
        atomic_fetch_add(&n->stats.muted, 1);
        break;
    case KRC_POLICY_MUTE_NONE:
        break;
    }
out:
    pthread_mutex_unlock(&n->lock);
    return d;
}

static void fill_format_options(const struct krc_sender *n, const struct dest *d,
                                struct krc_alert_options *fo);

/* Format the message of one destination into m (the decision's kind). */
static int prepare_one(struct krc_sender *n, struct dest *dest, const struct krc_restart *r,
                       enum krc_policy_decision d, const struct krc_report *rep,
                       const struct krc_diagnosis *diag, struct krc_sender_message *m)
{
    struct krc_alert_options fo;
    struct krc_error e;
    /* the implicit Event's name says nothing its "Kubernetes Event" does not */
    int show_to = dest->named != NULL && dest->named != &n->implicit_event;

    pthread_mutex_lock(&n->lock);
    fill_format_options(n, dest, &fo);
    pthread_mutex_unlock(&n->lock);
    /* an Event has no thread: a restart within the mute's thread window is
     * one more Event on the pod */
    m->kind =
        d == KRC_POLICY_THREAD && !is_event(dest) ? KRC_STORE_KIND_REPLY : KRC_STORE_KIND_ALERT;
    snprintf(m->destination, sizeof(m->destination), "%s", dest->store_key);
    snprintf(m->channel, sizeof(m->channel), "%s", dest->channel ? dest->channel : "");
    snprintf(m->thread_key, sizeof(m->thread_key), "%s/%s", r->namespace, r->pod);
    m->dest = dest;
    krc_error_clear(&e);
    if (dest->ops->format_restart(rep, diag, &fo, &m->body, &m->fallback, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the alert for %s/%s (%s): %s", r->namespace, r->pod,
                dest->store_key, e.msg);
        atomic_fetch_add(&n->stats.failed, 1);
        krc_free(m->body);
        krc_free(m->fallback);
        m->body = m->fallback = NULL;
        return -1;
    }
    snprintf(m->what, sizeof(m->what), "%s for %s/%s container %s (%s)%s%s",
             is_event(dest)           ? "Kubernetes Event"
             : d == KRC_POLICY_THREAD ? "thread reply"
                                      : "alert",
             r->namespace, r->pod, diag->container ? diag->container : r->container,
             krc_cause_name(diag->cause), show_to ? " to " : "", show_to ? dest->named->name : "");
    m->detected_mono_ms = r->detected_mono_ms;
    snprintf(m->uid, sizeof(m->uid), "%s", r->uid);
    snprintf(m->container, sizeof(m->container), "%s", r->container);
    m->restart_count = r->restart_count;
    m->finished_at = r->finished_at;
    snprintf(m->container_id, sizeof(m->container_id), "%s",
             r->container_id != NULL ? r->container_id : "");
    m->decision = d;
    return 0;
}

/* The messages of the chain share one struct siblings; without memory each
 * is published on its own, as a single message is. */
static void share_siblings(struct krc_sender_message *chain)
{
    struct siblings *g = krc_calloc(1, sizeof(*g));
    int k = 0;

    if (g == NULL) {
        return;
    }
    for (struct krc_sender_message *m = chain; m != NULL; m = m->next) {
        m->group = g;
        k++;
    }
    atomic_store(&g->pending, k);
    atomic_store(&g->refs, k);
}

enum krc_policy_decision krc_sender_prepare(struct krc_sender *n, const struct krc_restart *r,
                                            enum krc_policy_decision d,
                                            const struct krc_report *rep,
                                            const struct krc_diagnosis *diag,
                                            struct krc_sender_message *ret)
{
    struct dest *dests[MAX_ROUTED];
    struct dest *post[MAX_ROUTED];
    size_t n_dests;
    size_t n_post = 0;
    struct krc_sender_message **tail = &ret->next;

    memset(ret, 0, sizeof(*ret));
    pthread_mutex_lock(&n->lock);
    n_dests = route(n, r, dests);
    if ((d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD) &&
        krc_policy_log_ignored(&n->pol, (const char *)rep->log, rep->log_len)) {
        atomic_fetch_add(&n->stats.log_ignored, 1);
        d = KRC_POLICY_SILENCED;
    }
    for (size_t i = 0; i < n_dests; i++) {
        /* a destination whose storm began while this one was collected, or
         * was on already, counts it into its summary */
        if (d == KRC_POLICY_GROUPED ||
            ((d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD) && dests[i]->storm.active)) {
            dest_group(dests[i], rep, diag, r);
        } else if (d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD) {
            post[n_post++] = dests[i];
        }
    }
    if ((d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD) && n_dests > 0 && n_post == 0) {
        d = KRC_POLICY_GROUPED;
    }
    if (d == KRC_POLICY_GROUPED && n_dests > 0) {
        atomic_fetch_add(&n->stats.grouped, 1);
    }
    pthread_mutex_unlock(&n->lock);
    ret->decision = d;
    if ((d != KRC_POLICY_ALERT && d != KRC_POLICY_THREAD) || n_post == 0) {
        return d;
    }
    for (size_t i = 0; i < n_post; i++) {
        /* the first message is ret itself, the others are chained to it */
        struct krc_sender_message *m = ret->body == NULL ? ret : krc_calloc(1, sizeof(*m));
        if (m == NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: alert for %s/%s to %s dropped", r->namespace,
                    r->pod, post[i]->store_key);
            atomic_fetch_add(&n->stats.failed, 1);
            continue;
        }
        if (prepare_one(n, post[i], r, d, rep, diag, m) < 0) {
            if (m != ret) {
                krc_free(m);
            } else {
                ret->dest = NULL;
            }
            continue;
        }
        if (m != ret) {
            *tail = m;
            tail = &m->next;
        }
    }
    if (ret->next != NULL) {
        share_siblings(ret);
    }
    ret->decision = d;
    return d;
}

void krc_sender_message_cleanup(struct krc_sender_message *m)
{
    struct krc_sender_message *next = m->next;

    krc_free(m->body);
    krc_free(m->fallback);
    siblings_unref(m->group);
    m->body = NULL;
    m->fallback = NULL;
    m->group = NULL;
    m->next = NULL;
    while (next != NULL) {
        struct krc_sender_message *x = next;
        next = x->next;
        krc_free(x->body);
        krc_free(x->fallback);
        siblings_unref(x->group);
        krc_free(x);
    }
}

static void queue_item(struct krc_sender *n, struct item *it)
{
    pthread_mutex_lock(&n->lock);
    lane_push(n, it->dest->lane, it);
    pthread_mutex_unlock(&n->lock);
}

/* An outbox row of this process's own (see first_own_outbox_id). */
static void note_own_outbox(struct krc_sender *n, int64_t id)
{
    long long cur = atomic_load(&n->first_own_outbox_id);

    while (id > 0 && (cur == 0 || id < cur) &&
           !atomic_compare_exchange_weak(&n->first_own_outbox_id, &cur, (long long)id)) {
    }
}

void krc_sender_enqueue(struct krc_sender *n, struct krc_sender_message *msg, int64_t outbox_id,
                        struct krc_report *rep, struct krc_diagnosis *diag, char *full_log,
                        size_t full_log_len)
{
    struct item *it = NULL;

    note_own_outbox(n, outbox_id);
    if (msg->body == NULL || msg->dest == NULL || (it = krc_calloc(1, sizeof(*it))) == NULL) {
        if (msg->body != NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: %s dropped", msg->what);
            atomic_fetch_add(&n->stats.failed, 1);
        }
        /* dropped counts as settled for the restart's other destinations */
        if (msg->group != NULL && siblings_settle(msg->group, 0)) {
            publish_handled(n, msg->uid, msg->container, msg->restart_count, msg->finished_at,
                            msg->container_id);
        }
        krc_sender_message_cleanup(msg);
        krc_report_free(rep);
        if (diag != NULL) {
            krc_diagnosis_cleanup(diag);
            krc_free(diag);
        }
        krc_free(full_log);
        return;
    }
    it->kind = msg->kind == KRC_STORE_KIND_REPLY ? ITEM_REPLY : ITEM_ALERT;
    it->dest = msg->dest;
    it->group = msg->group;
    msg->group = NULL;
    snprintf(it->pod_key, sizeof(it->pod_key), "%s", msg->thread_key);
    snprintf(it->what, sizeof(it->what), "%s", msg->what);
    it->body = msg->body;
    it->fallback = msg->fallback;
    msg->body = msg->fallback = NULL;
    it->outbox_id = outbox_id;
    it->detected_mono_ms = msg->detected_mono_ms;
    it->restart_id = msg->restart_id;
    snprintf(it->uid, sizeof(it->uid), "%s", msg->uid);
    snprintf(it->container, sizeof(it->container), "%s", msg->container);
    it->restart_count = msg->restart_count;
    it->finished_at = msg->finished_at;
    snprintf(it->container_id, sizeof(it->container_id), "%s", msg->container_id);
    it->rep = rep;
    it->diag = diag;
    it->full_log = full_log;
    it->full_log_len = full_log_len;
    queue_item(n, it);
}

static int resume_row(struct krc_sender *n, const struct krc_store_message *m,
                      const struct krc_store_row *restart)
{
    const char *webhook = NULL;
    const struct krc_destination *named = NULL;
    struct item *it;
    struct dest *d;
    const char *channel = m->channel != NULL && m->channel[0] != '\0' ? m->channel : NULL;

    if (strncmp(m->destination, "dest:", 5) == 0) {
        named = fixed_named(n, m->destination + 5);
        if (named == NULL || krc_dest_ops(named) == NULL) {
            return KRC_ENOTFOUND;
        }
    } else if (strcmp(m->destination, "api") == 0) {
        if (!n->web_api) {
            return KRC_EINVAL;
        }
    } else if (strcmp(m->destination, "webhook:default") == 0) {
        webhook = n->o.webhook_url;
    } else if (strncmp(m->destination, "route:", 6) == 0) {
        char *end;
        long i = strtol(m->destination + 6, &end, 10);
        if (*end == '\0' && i >= 0 && (size_t)i < n->o.n_routes) {
            webhook = n->o.routes[i].webhook_url;
        }
    }
    if (named == NULL && !n->web_api && (webhook == NULL || webhook[0] == '\0')) {
        return KRC_ENOTFOUND; /* the configuration no longer has that destination */
    }
    /* channel strings must outlive the item: keep them in the options or
     * routes when they match, else in the dest table's own copy */
    it = krc_calloc(1, sizeof(*it));
    if (it == NULL) {
        return KRC_ENOMEM;
    }
    it->body = krc_strdup(m->body);
    it->fallback = m->fallback != NULL ? krc_strdup(m->fallback) : NULL;
    if (it->body == NULL || (m->fallback != NULL && it->fallback == NULL)) {
        item_free(it);
        return KRC_ENOMEM;
    }
    pthread_mutex_lock(&n->lock);
    d = named != NULL ? dest_get_named(n, named) : dest_get(n, webhook, channel, m->destination);
    pthread_mutex_unlock(&n->lock);
    it->kind = m->kind == KRC_STORE_KIND_REPLY       ? ITEM_REPLY
               : m->kind == KRC_STORE_KIND_RECOVERED ? ITEM_RECOVERED
               : m->kind == KRC_STORE_KIND_SUMMARY   ? ITEM_SUMMARY
                                                     : ITEM_ALERT;
    it->dest = d;
    it->outbox_id = m->id;
    it->restart_id = m->restart_id;
    if (restart != NULL && restart->pod_uid != NULL && restart->container != NULL) {
        snprintf(it->uid, sizeof(it->uid), "%s", restart->pod_uid);
        snprintf(it->container, sizeof(it->container), "%s", restart->container);
        it->restart_count = restart->restart_count;
        /* the identity's finishedAt is the row's when positive (IDENTITY_SQL);
         * only its containerID has no column of its own */
        (void)krc_store_identity_container_id(restart->identity, it->container_id,
                                              sizeof(it->container_id));
        it->finished_at = restart->finished_at > 0 ? restart->finished_at : 0;
    }
    snprintf(it->pod_key, sizeof(it->pod_key), "%s", m->thread_key ? m->thread_key : "");
    snprintf(it->what, sizeof(it->what), "%s #%lld from before the restart of krc",
             krc_store_kind_name(m->kind), (long long)m->id);
    queue_item(n, it);
    return 0;
}

struct resume {
    struct krc_sender *n;
    struct krc_store *store;
    int (*was_handled)(const struct krc_store_row *row, void *ud);
    void *ud;
    size_t superseded;
};

static int resume_one(const struct krc_store_message *m, void *ud)
{
    struct resume *rs = ud;
    struct krc_store_entry *ent = NULL;
    struct krc_error e;
    long long own = atomic_load(&rs->n->first_own_outbox_id);
    int rc;

    if (own > 0 && m->id >= own) {
        return 0; /* written by this process since: queued already */
    }
    /* The row's restart, when it has one: published as handled once posted,
     * and not posted at all when the leader this replica took over from did. */
    krc_error_clear(&e);
    if (m->restart_id > 0 && krc_store_get(rs->store, m->restart_id, &ent, &e) == 0 &&
        rs->was_handled != NULL && rs->was_handled(&ent->row, rs->ud)) {
        /* not a delivery failure: its own outbox state (schema 5) */
        krc_error_clear(&e);
        if (krc_store_mark_superseded(rs->store, m->id, &e) < 0) {
            krc_log(KRC_LOG_WARN,
                    "outbox message #%lld was posted by the previous leader, but its row could "
                    "not be marked superseded: %s",
                    (long long)m->id, e.msg);
        }
        rs->superseded++;
        krc_store_entry_free(ent);
        return 0;
    }
    rc = resume_row(rs->n, m, ent != NULL ? &ent->row : NULL);
    krc_store_entry_free(ent);
    if (rc == KRC_ENOTFOUND && strcmp(m->destination, "dest:" KRC_SENDER_KUBE_EVENT_NAME) == 0) {
        /* kubernetesEvents was turned off since: not left pending forever */
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: a Kubernetes Event, and kubernetesEvents is false now; "
                "marked failed, not written",
                (long long)m->id);
        krc_store_mark_attempt(rs->store, m->id, "kubernetesEvents is false", 1, NULL);
    } else if (rc == KRC_ENOTFOUND || rc == KRC_EINVAL) {
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: destination %s is no longer configured; "
                "marked failed",
                (long long)m->id, m->destination);
        krc_store_mark_attempt(rs->store, m->id, "destination no longer configured", 1, NULL);
    }
    return 0;
}

int krc_sender_resume_outbox(struct krc_sender *n, struct krc_store *store,
                             int (*was_handled)(const struct krc_store_row *row, void *ud),
                             void *ud)
{
    struct resume rs = {n, store, was_handled, ud, 0};
    size_t before = krc_sender_pending(n);
    struct krc_error e;
    int rc;

    krc_error_clear(&e);
    if ((rc = krc_store_pending(store, resume_one, &rs, &e)) < 0) {
        krc_log(KRC_LOG_ERROR, "outbox: %s", e.msg);
        return rc;
    }
    if (krc_sender_pending(n) > before) {
        krc_log(KRC_LOG_INFO, "outbox: resuming %zu undelivered notification(s)",
                krc_sender_pending(n) - before);
    }
    if (rs.superseded > 0) {
        krc_log(KRC_LOG_INFO,
                "outbox: %zu undelivered notification(s) of an earlier leadership were posted "
                "by the previous leader; not sent again",
                rs.superseded);
    }
    return 0;
}

/* --- the sender -----------------------------------------------------------
 * One thread per lane (lane_main) posts that lane's queue and storm
 * summaries with the lane's own sink and store connection; the main sender
 * thread (krc_sender_run) starts the lanes, retries delivered marks and
 * checks recoveries. */

static void fill_format_options(const struct krc_sender *n, const struct dest *d,
                                struct krc_alert_options *fo)
{
    krc_alert_options_init(fo);
    fo->cluster = n->o.cluster_name != NULL && n->o.cluster_name[0] ? n->o.cluster_name : NULL;
    fo->now = krc_clock_now();
    fo->channel = d->channel;
    fo->username = n->o.username != NULL && n->o.username[0] ? n->o.username : NULL;
    fo->icon = n->o.icon_emoji != NULL && n->o.icon_emoji[0] ? n->o.icon_emoji : NULL;
    fo->redactor = n->o.redactor;
    if (n->o.max_log_lines > 0) {
        fo->max_log_lines = n->o.max_log_lines;
    }
}

static int summary_item(struct krc_sender *n, struct dest *d, char **ret_body, long *ret_total)
{
    struct krc_alert_summary s;
    struct krc_alert_options fo;
    struct krc_alert_group nodes[MAX_GROUPS], wls[MAX_GROUPS], causes[MAX_GROUPS];
    struct krc_alert_example ex[MAX_EXAMPLES];
    struct krc_error e;
    int rc;

    memset(&s, 0, sizeof(s));
    for (size_t i = 0; i < d->n_by_node; i++) {
        nodes[i].key = d->by_node[i].key;
        nodes[i].count = (size_t)d->by_node[i].count;
    }
    for (size_t i = 0; i < d->n_by_workload; i++) {
        wls[i].key = d->by_workload[i].key;
        wls[i].count = (size_t)d->by_workload[i].count;
    }
    for (size_t i = 0; i < d->n_by_cause; i++) {
        causes[i].key = d->by_cause[i].key;
        causes[i].count = (size_t)d->by_cause[i].count;
    }
    for (size_t i = 0; i < d->n_examples; i++) {
        const struct example *x = &d->examples[i];
        ex[i].namespace = x->namespace;
        ex[i].pod = x->pod;
        ex[i].container = x->container;
        ex[i].cause = x->cause;
        ex[i].node = x->node[0] ? x->node : NULL;
        ex[i].restart_count = x->restart_count;
    }
    s.restarts = (size_t)(d->grouped_total + d->storm.alerted_before_storm);
    s.window_seconds = (krc_clock_mono_ms() - d->storm.summary_since_ms) / 1000;
    s.alerted = (size_t)d->storm.alerted_before_storm;
    s.by_node = nodes;
    s.n_by_node = d->n_by_node;
    s.by_workload = wls;
    s.n_by_workload = d->n_by_workload;
    s.by_cause = causes;
    s.n_by_cause = d->n_by_cause;
    s.examples = ex;
    s.n_examples = d->n_examples;
    fill_format_options(n, d, &fo);
    krc_error_clear(&e);
    rc = d->ops->format_summary(&s, &fo, ret_body, &e);
    if (rc == KRC_EUNSUPPORTED) {
        /* a destination without summaries (a Kubernetes Event is about one
         * pod): the grouped restarts are recorded; this summary is done */
        krc_log(KRC_LOG_INFO, "%s: %ld restart(s) grouped by the storm guard get no message (%s)",
                d->named != NULL ? d->named->name : d->ops->name, d->grouped_total, e.msg);
        *ret_body = NULL;
    } else if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the storm summary: %s", e.msg);
        return rc;
    }
    *ret_total = d->grouped_total;
    /* start the next summary */
    d->grouped_total = 0;
    d->n_by_node = d->n_by_workload = d->n_by_cause = 0;
    d->n_examples = 0;
    krc_policy_storm_summarised(&n->pol, &d->storm, krc_clock_mono_ms());
    return 0;
}

/* The thread parent of a pod: from memory, else from the store (threads
 * survive a daemon restart). */
static void thread_parent(struct krc_sender *n, struct krc_store *store, const char *pod_key,
                          char *ts, size_t tssz, char *channel, size_t chsz)
{
    struct krc_policy_mute *mt;

    ts[0] = '\0';
    channel[0] = '\0';
    pthread_mutex_lock(&n->lock);
    mt = krc_policy_mute_find(&n->mutes, pod_key, 0, 0);
    if (mt != NULL && mt->ts[0] != '\0') {
        snprintf(ts, tssz, "%s", mt->ts);
        snprintf(channel, chsz, "%s", mt->channel);
    }
    pthread_mutex_unlock(&n->lock);
    if (ts[0] == '\0' && store != NULL) {
        char *t = NULL;
        char *c = NULL;
        if (krc_store_thread_ts(store, pod_key, &t, &c, NULL) == 0 && t != NULL) {
            snprintf(ts, tssz, "%s", t);
            snprintf(channel, chsz, "%s", c ? c : "");
        }
        krc_free(t);
        krc_free(c);
    }
}

/* DROPPED: another leader owns the row (a shared outbox): not posted, not
 * marked, not retried. */
enum send_result { SENT, RETRY_LATER, GIVEN_UP, DROPPED };

static void remember_thread(struct krc_sender *n, struct item *it,
                            const struct krc_sink_result *res)
{
    struct krc_policy_mute *mt;

    pthread_mutex_lock(&n->lock);
    mt = krc_policy_mute_find(&n->mutes, it->pod_key, 1, krc_clock_now());
    snprintf(mt->ts, sizeof(mt->ts), "%s", res->ts);
    snprintf(mt->channel, sizeof(mt->channel), "%s", res->channel);
    pthread_mutex_unlock(&n->lock);
}

/* The restart's "recovered" reply goes into this thread once the watch saw
 * its container run ready long enough (a later reply arms it again). */
static void arm_recovery(struct krc_sender *n, const struct item *it, const char *ts,
                         const char *channel)
{
    if (n->recovery != NULL && it->uid[0] != '\0' && ts != NULL && ts[0] != '\0') {
        (void)krc_recovery_arm(n->recovery, it->uid, it->container, ts, channel, it->dest,
                               krc_clock_now());
    }
}

static void upload_log(struct krc_sender *n, struct lane *l, struct item *it, const char *channel,
                       const char *thread)
{
    char fname[300];
    struct krc_buf red;
    struct krc_error e;
    const char *data;
    size_t len;

    if (l->sink->ops->upload == NULL) {
        return;
    }
    /* a limit, not an allocation: every byte could become a mark */
    krc_buf_init(&red, it->full_log_len * 11 + 1024);
    /* Always redact (built-in patterns at least): the file leaves the cluster, so
     * when redaction fails the file is not sent at all (it used to go unredacted). */
    if (krc_redact_apply(n->o.redactor, it->full_log, it->full_log_len, &red, NULL) < 0) {
        krc_log(KRC_LOG_WARN, "log file for %s not uploaded: redaction failed", it->pod_key);
        krc_buf_cleanup(&red);
        return;
    }
    data = krc_buf_str(&red);
    len = red.len;
    snprintf(fname, sizeof(fname), "%s-%s-previous.log",
             it->rep != NULL && it->rep->name ? it->rep->name : "pod",
             it->diag != NULL && it->diag->container ? it->diag->container : "container");
    krc_error_clear(&e);
    if (l->sink->ops->upload(l->sink, channel, thread, fname, "Previous container log", data, len,
                             &e) == 0) {
        atomic_fetch_add(&n->stats.files_uploaded, 1);
    } else {
        krc_log(KRC_LOG_WARN, "log file for %s not uploaded: %s", it->pod_key, e.msg);
    }
    krc_buf_cleanup(&red);
}

/* Remember a failed mark for a retry; the oldest is dropped from memory
 * when the table is full (the journal still has it, if it was written).
 * Caller holds mark_lock. */
static void unmarked_add(struct krc_sender *n, int64_t id, const char *ts, int journaled)
{
    struct unmarked *u;

    if (n->n_unmarked == MAX_UNMARKED) {
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: too many delivered marks waiting for the database; "
                "left to the delivery journal",
                (long long)n->unmarked[0].outbox_id);
        n->journal_kept = 1;
        memmove(&n->unmarked[0], &n->unmarked[1], (MAX_UNMARKED - 1) * sizeof(n->unmarked[0]));
        n->n_unmarked--;
    }
    u = &n->unmarked[n->n_unmarked++];
    memset(u, 0, sizeof(*u));
    u->outbox_id = id;
    snprintf(u->ts, sizeof(u->ts), "%s", ts != NULL ? ts : "");
    u->delay_ms = UNMARKED_FIRST_RETRY_MS;
    u->next_ms = krc_clock_mono_ms() + u->delay_ms;
    u->tries = 1;
    u->journaled = journaled;
}

/* Slack accepted outbox row `id`: record it. When the database refuses,
 * the message must still not be posted again: the fact goes to the
 * delivery journal and to memory for a retry. */
static void mark_delivered(struct krc_sender *n, struct krc_store *store, int64_t id,
                           const char *ts, const char *what)
{
    struct krc_error se;
    struct krc_error je;
    int jrc;

    krc_error_clear(&se);
    if (krc_store_mark_delivered(store, id, ts, &se) == 0) {
        return;
    }
    if (se.code == KRC_ENOTFOUND) {
        krc_log(KRC_LOG_WARN, "%s was posted but its outbox row is gone: %s", what, se.msg);
        return;
    }
    krc_error_clear(&je);
    /* under mark_lock: the main sender loop must not clear the journal
     * between this write and the table entry */
    pthread_mutex_lock(&n->mark_lock);
    jrc = krc_store_journal_delivered(store, id, ts, &je);
    unmarked_add(n, id, ts, jrc == 0);
    pthread_mutex_unlock(&n->mark_lock);
    if (jrc == 0) {
        krc_log(KRC_LOG_ERROR,
                "%s was posted but could not be marked delivered: %s; noted in the delivery "
                "journal, retrying in %ds",
                what, se.msg, UNMARKED_FIRST_RETRY_MS / 1000);
    } else {
        krc_log(KRC_LOG_ERROR,
                "%s was posted but could not be marked delivered: %s; the delivery journal "
                "failed too (%s): retrying in %ds, and a restart of krc before that succeeds "
                "would post it again",
                what, se.msg, je.msg, UNMARKED_FIRST_RETRY_MS / 1000);
    }
}

/* Retry the due delivered marks (all of them when `all`, once). The
 * journal is removed once memory holds nothing it did not write. Main
 * sender thread, with mark_lock held. */
static void retry_unmarked_locked(struct krc_sender *n, int all)
{
    int64_t now = krc_clock_mono_ms();
    size_t i = 0;
    int had = n->n_unmarked > 0;

    while (i < n->n_unmarked) {
        struct unmarked *u = &n->unmarked[i];
        struct krc_error e;
        int rc;

        if (!all && u->next_ms > now) {
            i++;
            continue;
        }
        krc_error_clear(&e);
        rc = krc_store_mark_delivered(n->store, u->outbox_id, u->ts[0] ? u->ts : NULL, &e);
        if (rc == 0 || e.code == KRC_ENOTFOUND) {
            krc_log(KRC_LOG_INFO, "outbox message #%lld marked delivered (try %d)",
                    (long long)u->outbox_id, u->tries + 1);
        } else if (u->journaled && u->tries + 1 >= UNMARKED_MAX_TRIES) {
            krc_log(KRC_LOG_ERROR,
                    "outbox message #%lld still not marked delivered after %d tries: %s; left to "
                    "the delivery journal for the next start",
                    (long long)u->outbox_id, u->tries + 1, e.msg);
            n->journal_kept = 1;
        } else {
            u->tries++;
            u->delay_ms =
                u->delay_ms * 2 > UNMARKED_MAX_DELAY_MS ? UNMARKED_MAX_DELAY_MS : u->delay_ms * 2;
            u->next_ms = krc_clock_mono_ms() + u->delay_ms;
            krc_log(KRC_LOG_WARN,
                    "outbox message #%lld: delivered mark failed again: %s; retrying in %llds",
                    (long long)u->outbox_id, e.msg, (long long)(u->delay_ms / 1000));
            if (all || e.code == KRC_ETIMEOUT) {
                /* the database is busy: the others would wait as long */
                break;
            }
            i++;
            continue;
        }
        memmove(u, u + 1, (n->n_unmarked - i - 1) * sizeof(*u));
        n->n_unmarked--;
    }
    if (had && n->n_unmarked == 0 && !n->journal_kept) {
        struct krc_error e;
        krc_error_clear(&e);
        if (krc_store_journal_clear(n->store, &e) < 0) {
            krc_log(KRC_LOG_WARN, "delivery journal: %s", e.msg);
        }
    }
}

static void retry_unmarked(struct krc_sender *n, int all)
{
    pthread_mutex_lock(&n->mark_lock);
    if (n->n_unmarked > 0) {
        retry_unmarked_locked(n, all);
    }
    pthread_mutex_unlock(&n->mark_lock);
}

/* An alert grouped into a storm before it was sent: its outbox row is
 * settled as withdrawn (not failed: nothing was attempted, and the storm
 * summary carries the restart), never posted. */
static void settle_withdrawn(struct lane *l, const struct item *it)
{
    struct krc_error e;

    krc_error_clear(&e);
    if (l->store != NULL && it->outbox_id > 0 &&
        krc_store_mark_withdrawn(l->store, it->outbox_id, &e) < 0) {
        krc_log(KRC_LOG_WARN, "%s withdrawn, but its outbox row could not be marked so: %s",
                it->what, e.msg);
    }
    if (l->store != NULL && it->restart_id > 0) {
        krc_store_set_decision(l->store, it->restart_id, "grouped", NULL, NULL);
    }
}

/* Slack refused it for good (4xx) or kept failing: a 4xx will never
 * succeed; anything else is tried again later, the outbox keeps it. */
static enum send_result send_failed(struct krc_sender *n, struct lane *l, const struct item *it,
                                    int rc, long http_status, const struct krc_error *e)
{
    int final = rc == KRC_EHTTP && http_status >= 400 && http_status < 500;

    if (l->store != NULL && it->outbox_id > 0) {
        krc_store_mark_attempt(l->store, it->outbox_id, e->msg, final, NULL);
    }
    atomic_fetch_add(&n->stats.failed, 1);
    krc_log(KRC_LOG_ERROR, "%s not delivered: %s%s", it->what, e->msg,
            final ? "" : "; it stays in the outbox and is retried in 60s");
    return final ? GIVEN_UP : RETRY_LATER;
}

/* After Slack accepted an item: callbacks, storm bookkeeping, statistics,
 * thread state and the log file. */
static void after_sent(struct krc_sender *n, struct lane *l, struct item *it,
                       const struct krc_sink_result *res, const char *parent_ts,
                       const char *channel)
{
    int restart_msg = it->kind == ITEM_ALERT || it->kind == ITEM_REPLY;

    if (n->o.on_delivered != NULL && it->detected_mono_ms > 0 && restart_msg) {
        n->o.on_delivered((double)(krc_clock_mono_ms() - it->detected_mono_ms) / 1000.0,
                          n->o.on_delivered_userdata);
    }
    if (restart_msg && it->group == NULL) {
        publish_handled(n, it->uid, it->container, it->restart_count, it->finished_at,
                        it->container_id);
    }
    if (it->kind == ITEM_ALERT) {
        pthread_mutex_lock(&n->lock);
        krc_policy_storm_sent(&it->dest->storm, krc_clock_mono_ms());
        pthread_mutex_unlock(&n->lock);
    }
    switch (it->kind) {
    case ITEM_ALERT:
        atomic_fetch_add(&n->stats.alerts_sent, 1);
        if (l->sink->limits.threads && res->ts[0] != '\0') {
            remember_thread(n, it, res);
            arm_recovery(n, it, res->ts, res->channel);
        } else if (l->sink->limits.resolves) {
            arm_recovery(n, it, "-", NULL); /* PagerDuty: resolve by its dedup_key */
        }
        break;
    case ITEM_REPLY:
        atomic_fetch_add(&n->stats.replies_sent, 1);
        arm_recovery(n, it, l->sink->limits.resolves ? "-" : parent_ts, channel);
        break;
    case ITEM_RECOVERED:
        atomic_fetch_add(&n->stats.recovered_sent, 1);
        break;
    case ITEM_SUMMARY:
        atomic_fetch_add(&n->stats.summaries_sent, 1);
        break;
    case ITEM_WITHDRAWN:
        break;
    }
    /* Web API: the full previous log goes into the thread as a file. */
    if (l->sink->limits.files && it->full_log != NULL && it->full_log_len > 0 && restart_msg) {
        const char *thread = it->kind == ITEM_ALERT ? res->ts : parent_ts;
        upload_log(n, l, it, res->channel[0] ? res->channel : channel, thread);
    }
}

void krc_sender_set_fence_token(struct krc_sender *n, int64_t token)
{
    atomic_store(&n->fence_token, token);
    atomic_store(&n->fencing, 1);
}

enum krc_sender_claim_action krc_sender_claim_action(int claim_rc)
{
    if (claim_rc == 0) {
        return KRC_SENDER_CLAIM_POST;
    }
    if (claim_rc == KRC_STORE_FENCED) {
        return KRC_SENDER_CLAIM_DROP;
    }
    return KRC_SENDER_CLAIM_POST_ANYWAY;
}

/* A shared outbox: may this replica post the item's row now? 1: post,
 * 0: another leader owns it (dropped, logged). */
static int claimed(struct krc_sender *n, struct lane *l, const struct item *it)
{
    struct krc_error e;
    int rc;

    if (!atomic_load(&n->fencing) || l->store == NULL || it->outbox_id <= 0 ||
        !krc_store_shared(l->store)) {
        return 1;
    }
    krc_error_clear(&e);
    rc = krc_store_claim(l->store, it->outbox_id, atomic_load(&n->fence_token), &e);
    switch (krc_sender_claim_action(rc)) {
    case KRC_SENDER_CLAIM_POST:
        return 1;
    case KRC_SENDER_CLAIM_DROP:
        krc_log(KRC_LOG_INFO,
                "outbox row %lld is owned by a newer leader (or was delivered by another "
                "replica); not posted",
                (long long)it->outbox_id);
        return 0;
    case KRC_SENDER_CLAIM_POST_ANYWAY:
        break;
    }
    krc_log(KRC_LOG_DEBUG, "outbox row %lld not claimed (%s); posting it anyway",
            (long long)it->outbox_id, e.msg);
    return 1;
}

static enum send_result send_one(struct krc_sender *n, struct lane *l, struct item *it)
{
    struct krc_sink_message m;
    struct krc_sink_result res;
    struct krc_error e;
    char *owned = NULL;
    char parent_ts[64] = "";
    char parent_channel[64] = "";
    int rc;

    krc_error_clear(&e);
    memset(&res, 0, sizeof(res));
    if (it->kind == ITEM_WITHDRAWN) {
        settle_withdrawn(l, it);
        return GIVEN_UP;
    }
    memset(&m, 0, sizeof(m));
    m.body = it->body;
    m.fallback = it->fallback;
    if (it->kind == ITEM_RECOVERED && m.body == NULL) {
        struct krc_alert_options fo;
        fill_format_options(n, it->dest, &fo);
        if (it->dest->ops->format_recovered(&it->recovered, &fo, &owned, &e) < 0) {
            krc_log(KRC_LOG_ERROR, "cannot format the %s: %s", it->what, e.msg);
            atomic_fetch_add(&n->stats.failed, 1);
            return GIVEN_UP;
        }
        m.body = owned;
    }
    if ((it->kind == ITEM_REPLY || it->kind == ITEM_RECOVERED) && l->sink->limits.threads) {
        thread_parent(n, l->store, it->pod_key, parent_ts, sizeof(parent_ts), parent_channel,
                      sizeof(parent_channel));
        m.thread_ts = parent_ts[0] != '\0' ? parent_ts : NULL;
    }
    m.channel =
        l->webhook_url == NULL ? (parent_channel[0] ? parent_channel : it->dest->channel) : NULL;
    if (strlen(m.body) > l->sink->limits.max_payload) {
        rc = krc_error_set(&e, KRC_EHTTP, "%s: %zu bytes, more than the %zu the destination takes",
                           l->sink->ops->name, strlen(m.body), l->sink->limits.max_payload);
        krc_free(owned);
        return send_failed(n, l, it, rc, 400, &e);
    }
    if (!claimed(n, l, it)) {
        krc_free(owned);
        return DROPPED;
    }
    rc = l->sink->ops->send(l->sink, &m, &res, &e);
    krc_free(owned);
    atomic_fetch_add(&n->stats.rate_limited, res.rate_limited);
    if (rc == KRC_ECANCELED) {
        return RETRY_LATER; /* shutdown: it stays pending in the outbox */
    }
    if (rc < 0) {
        return send_failed(n, l, it, rc, res.http_status, &e);
    }
    if (l->store != NULL && it->outbox_id > 0) {
        mark_delivered(n, l->store, it->outbox_id, res.ts[0] ? res.ts : NULL, it->what);
    }
    /* "posted (" is the mark of a message; an Event is written */
    krc_log(KRC_LOG_INFO, "%s %s%s (%d attempt%s)", it->what,
            is_event(it->dest) ? "written" : "posted", res.used_fallback ? " as plain text" : "",
            res.attempts, res.attempts == 1 ? "" : "s");
    after_sent(n, l, it, &res, parent_ts, m.channel);
    return SENT;
}

static void send_summary(struct krc_sender *n, struct lane *l, struct dest *d, char *body,
                         long total)
{
    struct item it;
    int64_t id = 0;

    memset(&it, 0, sizeof(it));
    it.kind = ITEM_SUMMARY;
    it.dest = d;
    it.body = body;
    snprintf(it.what, sizeof(it.what), "storm summary of %ld restarts", total);
    if (l->store != NULL) {
        struct krc_store_outbox ob;
        memset(&ob, 0, sizeof(ob));
        ob.kind = KRC_STORE_KIND_SUMMARY;
        ob.destination = d->store_key;
        ob.channel = d->channel;
        ob.body = body;
        if (krc_store_add_outbox(l->store, 0, &ob, &id, NULL) == 0) {
            note_own_outbox(n, id);
            it.outbox_id = id;
        }
    }
    if (send_one(n, l, &it) == RETRY_LATER && it.outbox_id > 0) {
        krc_log(KRC_LOG_WARN, "storm summary kept in the outbox for a later retry");
    }
}

/* A due storm summary of this lane, if any (caller holds the lock); the
 * storm ends once a whole window passed without a restart. At shutdown a
 * summary still owed is due at once. */
static struct dest *due_summary(struct krc_sender *n, const struct lane *l, int64_t now_ms,
                                int stopping)
{
    for (size_t i = 0; i < n->n_dests; i++) {
        struct dest *d = &n->dests[i];
        if (d->lane != l) {
            continue;
        }
        if (krc_policy_storm_summary_due(&d->storm, d->grouped_total, stopping, now_ms)) {
            return d;
        }
        if (krc_policy_storm_over(&n->pol, &d->storm, d->grouped_total, now_ms)) {
            krc_log(KRC_LOG_INFO, "alert storm over: %ld restarts were grouped", d->storm_total);
        }
    }
    return NULL;
}

/* Web API: the "recovered" replies the watch made due. */
static void queue_recoveries(struct krc_sender *n)
{
    struct krc_recovery_due due[16];
    size_t k = krc_recovery_take_due(n->recovery, krc_clock_now(), n->o.recovered_after_s, due,
                                     sizeof(due) / sizeof(due[0]));

    for (size_t i = 0; i < k; i++) {
        struct item *it = krc_calloc(1, sizeof(*it));
        if (it == NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: recovered reply for %s/%s dropped",
                    due[i].namespace, due[i].pod);
            continue;
        }
        it->kind = ITEM_RECOVERED;
        it->dest = due[i].dest;
        snprintf(it->pod_key, sizeof(it->pod_key), "%s/%s", due[i].namespace, due[i].pod);
        snprintf(it->rec_ns, sizeof(it->rec_ns), "%s", due[i].namespace);
        snprintf(it->rec_pod, sizeof(it->rec_pod), "%s", due[i].pod);
        snprintf(it->rec_container, sizeof(it->rec_container), "%s", due[i].container);
        it->recovered.namespace = it->rec_ns;
        it->recovered.pod = it->rec_pod;
        it->recovered.container = it->rec_container;
        it->recovered.ready_seconds = due[i].ready_seconds;
        it->recovered.restart_count = due[i].restart_count;
        snprintf(it->what, sizeof(it->what), "recovered reply for %s/%s", due[i].namespace,
                 due[i].pod);
        pthread_mutex_lock(&n->lock);
        lane_push(n, it->dest->lane, it);
        pthread_mutex_unlock(&n->lock);
    }
}

void krc_sender_restart_seen(struct krc_sender *n, const char *uid, const char *ns,
                             const char *name, const char *container, int restart_count)
{
    if (n != NULL && n->recovery != NULL) {
        krc_recovery_await(n->recovery, uid, ns, name, container, restart_count, krc_clock_now());
    }
}

void krc_sender_pod_event(struct krc_sender *n, const struct krc_pod_info *pod, int deleted)
{
    /* nothing awaited (the common case): no clock read either */
    if (n != NULL && krc_recovery_awaiting(n->recovery)) {
        krc_recovery_observe(n->recovery, pod, deleted, krc_clock_now());
    }
}

int64_t krc_sender_heartbeat(const struct krc_sender *n)
{
    int64_t hb = atomic_load(&n->heartbeat_ms);

    /* the oldest beat of the main loop and the running lanes */
    for (size_t i = 0; i < MAX_LANES; i++) {
        int64_t lb = atomic_load(&n->lanes[i].heartbeat_ms);
        if (lb != 0 && lb < hb) {
            hb = lb;
        }
    }
    return hb;
}

void krc_sender_abort_transfers(struct krc_sender *n)
{
    n->abort_hard = 1;
    krc_sender_abort(n);
}

int krc_sender_aborted(struct krc_sender *n)
{
    return atomic_load(&n->abort);
}

void krc_sender_abort(struct krc_sender *n)
{
    atomic_store(&n->abort, 1);
    pthread_mutex_lock(&n->lock);
    pthread_cond_broadcast(&n->wake);
    for (size_t i = 0; i < n->n_lanes; i++) {
        pthread_cond_broadcast(&n->lanes[i].wake);
    }
    pthread_mutex_unlock(&n->lock);
}

static void wait_on(pthread_cond_t *c, pthread_mutex_t *m, long ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(c, m, &ts);
}

/* The next item of the lane that is due (NULL: none; the lane waited a
 * little). Items waiting for a retry rotate to the back. Caller holds the
 * lock. */
static struct item *lane_next(struct krc_sender *n, struct lane *l, int64_t now_ms)
{
    struct item *it = l->head;

    if (it != NULL && it->not_before_ms <= now_ms) {
        l->head = it->next;
        if (l->head == NULL) {
            l->tail = NULL;
        }
        it->next = NULL;
        l->n_items--;
        n->n_items--;
        return it;
    }
    if (it != NULL && it->next != NULL) {
        /* the head waits for a retry: rotate it to the back */
        l->head = it->next;
        it->next = NULL;
        l->tail->next = it;
        l->tail = it;
        if (l->head->not_before_ms <= now_ms) {
            return NULL; /* the new head is due: no wait */
        }
    }
    wait_on(&l->wake, &n->lock, it != NULL ? 100 : 200);
    return NULL;
}

/* A message of a restart with several destinations is done (accepted, or
 * given up): the restart is published as handled with the last one. */
static void settle(struct krc_sender *n, const struct item *it, enum send_result r)
{
    if (it->group == NULL || r == RETRY_LATER) {
        return;
    }
    if (siblings_settle(it->group, r == SENT)) {
        publish_handled(n, it->uid, it->container, it->restart_count, it->finished_at,
                        it->container_id);
    }
}

/* The lane's sink and store connection, made in its own thread. */
static int lane_open(struct krc_sender *n, struct lane *l)
{
    struct krc_error e;
    struct krc_sink_options so;

    krc_error_clear(&e);
    if (n->o.store_path != NULL && l->store == NULL &&
        krc_store_open_with(n->o.store_path, n->o.store_flags, n->o.store_options, &l->store, &e) <
            0) {
        krc_log(KRC_LOG_ERROR, "sender: outbox unavailable (%s); deliveries are not recorded",
                e.msg);
        l->store = NULL;
    }
    krc_error_clear(&e);
    so = n->sink_options;
    if (l->named != NULL) {
        so.destination = l->named;
        if (krc_dest_is(l->named, "slack-api")) {
            so.bot_token = l->named->secret;
            so.api_url = l->named->api_url != NULL ? l->named->api_url : "https://slack.com/api";
        }
    }
    l->sink = l->ops->create(&so, l->named != NULL ? l->named->url : l->webhook_url, &e);
    if (l->sink == NULL) {
        krc_log(KRC_LOG_ERROR, "sender: cannot set up %s delivery%s%s (%s); retrying in %ds",
                l->ops->name, l->named != NULL ? " to " : "",
                l->named != NULL ? l->named->name : "", e.msg, LANE_RETRY_MS / 1000);
        return -1;
    }
    return 0;
}

static void *lane_main(void *arg)
{
    struct lane *l = arg;
    struct krc_sender *n = l->n;

    while (!n->abort && lane_open(n, l) < 0) {
        atomic_store(&l->heartbeat_ms, krc_clock_mono_ms());
        krc_clock_sleep_ms(LANE_RETRY_MS, &n->abort);
    }
    while (!n->abort) {
        struct item *it = NULL;
        struct dest *d;
        char *summary = NULL;
        long total = 0;
        int64_t now_ms = krc_clock_mono_ms();
        int stopping = n->o.cancel != NULL && *n->o.cancel;

        atomic_store(&l->heartbeat_ms, now_ms);
        pthread_mutex_lock(&n->lock);
        d = due_summary(n, l, now_ms, stopping);
        if (d != NULL) {
            if (summary_item(n, d, &summary, &total) < 0) {
                summary = NULL;
            }
            d->storm.next_summary_ms = now_ms + n->pol.storm_window_s * 1000;
        } else {
            it = lane_next(n, l, now_ms);
        }
        pthread_mutex_unlock(&n->lock);
        if (summary != NULL) {
            send_summary(n, l, d, summary, total);
            krc_free(summary);
        }
        if (it != NULL) {
            enum send_result r = send_one(n, l, it);
            if (r == RETRY_LATER && !n->abort) {
                it->not_before_ms = krc_clock_mono_ms() + 60000;
                queue_item(n, it);
            } else {
                settle(n, it, r);
                item_free(it);
            }
        }
    }
    atomic_store(&l->heartbeat_ms, 0);
    krc_store_close(l->store);
    l->store = NULL;
    return NULL;
}

/* Start the lanes that have no thread yet (at start, and after a failed
 * pthread_create). */
static void start_lanes(struct krc_sender *n)
{
    pthread_mutex_lock(&n->lock);
    n->running = 1;
    for (size_t i = 0; i < n->n_lanes; i++) {
        lane_start(n, &n->lanes[i]);
    }
    pthread_mutex_unlock(&n->lock);
}

static void join_lanes(struct krc_sender *n)
{
    size_t count;

    pthread_mutex_lock(&n->lock);
    n->running = 0; /* no lane starts from now on */
    count = n->n_lanes;
    pthread_mutex_unlock(&n->lock);
    for (size_t i = 0; i < count; i++) {
        if (n->lanes[i].started) {
            pthread_join(n->lanes[i].thread, NULL);
            n->lanes[i].started = 0;
        }
    }
}

void krc_sender_run(struct krc_sender *n)
{
    int64_t last_recovery_check = 0;

    if (n->o.store_path != NULL) {
        struct krc_error e;
        krc_error_clear(&e);
        if (krc_store_open_with(n->o.store_path, n->o.store_flags, n->o.store_options, &n->store,
                                &e) < 0) {
            krc_log(KRC_LOG_ERROR, "sender: outbox unavailable (%s); deliveries are not recorded",
                    e.msg);
            n->store = NULL;
        }
    }
    start_lanes(n);
    while (!n->abort) {
        int64_t now_ms = krc_clock_mono_ms();
        int stopping = n->o.cancel != NULL && *n->o.cancel;

        atomic_store(&n->heartbeat_ms, now_ms);
        if (n->store != NULL) {
            retry_unmarked(n, 0);
        }
        if (!stopping && n->recovery != NULL && now_ms - last_recovery_check >= 1000) {
            last_recovery_check = now_ms;
            queue_recoveries(n);
        }
        pthread_mutex_lock(&n->lock);
        for (size_t i = 0; i < n->n_lanes; i++) {
            lane_start(n, &n->lanes[i]);
        }
        wait_on(&n->wake, &n->lock, 200);
        pthread_mutex_unlock(&n->lock);
    }
    join_lanes(n);
    /* What could not be sent in time is reported, not silently dropped: with
     * a store it stays in the outbox and is sent at the next start. */
    pthread_mutex_lock(&n->lock);
    if (n->n_items > 0) {
        krc_log(
            KRC_LOG_WARN,
            "shutdown: %zu message(s) (Slack, other destinations, Kubernetes Events) not sent%s",
            n->n_items,
            n->store != NULL ? "; they stay in the outbox (sent at the next start or, with "
                               "leader election, when this replica leads again and its "
                               "predecessor did not post them)"
                             : "");
    }
    pthread_mutex_unlock(&n->lock);
    if (n->store != NULL) {
        /* one last try; what fails is left to the delivery journal (the
         * marks whose journal write failed too were logged as such) */
        retry_unmarked(n, 1);
    }
    krc_store_close(n->store);
    n->store = NULL;
}
