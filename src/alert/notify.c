#include "krc/alert/notify.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/alert/slack_format.h"
#include "krc/alert/slack_send.h"
#include "krc/store/store.h"
#include <cjson/cJSON.h>
#include <stdlib.h>

#define MAX_DESTS 64
#define MAX_MUTES 4096
#define MAX_GROUPS 64
#define MAX_EXAMPLES 8
#define MAX_RECOVERY 1024
#define RECOVERY_GIVE_UP_S (24 * 3600)
/* Delivered marks that failed, kept for a retry (see struct unmarked). */
#define MAX_UNMARKED 64
#define UNMARKED_FIRST_RETRY_MS 1000
#define UNMARKED_MAX_DELAY_MS 60000
#define UNMARKED_MAX_TRIES 12

enum item_kind { ITEM_ALERT, ITEM_REPLY, ITEM_SUMMARY, ITEM_RECOVERED, ITEM_WITHDRAWN };

struct dest;

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
    int64_t not_before_ms; /* retry time after a transient failure */
    struct krc_report *rep;
    struct krc_diagnosis *diag;
    char *full_log;
    size_t full_log_len;
    struct krc_slack_recovered recovered; /* strings point into the item's rec_* */
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

/* Per destination: the storm guard and the summary being built. */
struct dest {
    char *webhook_url; /* borrowed from options/routes */
    char *channel;
    char key[1024];
    char store_key[64]; /* "webhook:default", "route:N", "api": never a URL */
    char channel_buf[256];
    int64_t arrivals[256]; /* ring of recent arrival times (mono ms) */
    size_t n_arrivals;
    size_t arrivals_head;
    int storm;
    int64_t next_summary_ms;
    int64_t last_arrival_ms;
    long grouped_total;        /* in the current summary */
    long alerted_before_storm; /* alerts already posted in the storm's window */
    long storm_total;          /* since the storm began */
    int64_t summary_since_ms;  /* start of the current summary's window */
    int64_t sent_ms[16];       /* when the last alerts to this destination were posted */
    size_t n_sent;
    struct group by_node[MAX_GROUPS];
    size_t n_by_node;
    struct group by_workload[MAX_GROUPS];
    size_t n_by_workload;
    struct group by_cause[MAX_GROUPS];
    size_t n_by_cause;
    struct example examples[MAX_EXAMPLES];
    size_t n_examples;
};

struct mute {
    char key[512];
    int64_t last_alert_s;
    char ts[64];      /* Web API: the thread parent */
    char channel[64]; /* Web API: channel id of the parent */
};

struct recovery {
    char namespace[256];
    char pod[256];
    char uid[64];
    char container[256];
    int restart_count;
    int64_t alerted_s;
    int64_t next_check_s;
    char ts[64];
    char channel[64];
    struct dest *dest;
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

struct krc_notifier {
    struct krc_notify_options o;
    struct krc_notify_stats stats;
    struct krc_slack_sender *sender;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct item *head;
    struct item *tail;
    size_t n_items;
    struct dest dests[MAX_DESTS];
    size_t n_dests;
    struct mute *mutes;
    size_t n_mutes;
    struct recovery *recov;
    size_t n_recov;
    int web_api;
    atomic_int abort;        /* set by krc_notifier_abort: no new message, no waiting */
    atomic_int abort_hard;   /* krc_notifier_abort_transfers: the one in flight too */
    int recovery_warned;     /* sender thread only: a failing recovered check was logged */
    struct krc_store *store; /* the sender thread's connection, or NULL */
    struct unmarked unmarked[MAX_UNMARKED]; /* sender thread only */
    size_t n_unmarked;
    int journal_kept; /* sender thread only: the journal holds a fact memory gave up */
    atomic_llong heartbeat_ms;
};

const char *krc_notify_decision_name(enum krc_notify_decision d)
{
    switch (d) {
    case KRC_NOTIFY_ALERT:
        return "alert";
    case KRC_NOTIFY_THREAD:
        return "thread_reply";
    case KRC_NOTIFY_MUTED:
        return "muted";
    case KRC_NOTIFY_GROUPED:
        return "grouped";
    case KRC_NOTIFY_SILENCED:
        return "silenced";
    case KRC_NOTIFY_NO_DESTINATION:
        return "not_posted";
    }
    return "unknown";
}

/* --- patterns ------------------------------------------------------------ */

int krc_notify_pattern_match(const char *pattern, const char *value, int prefix)
{
    int plain = 1;
    regex_t re;
    int m;

    if (pattern == NULL || pattern[0] == '\0' || strcmp(pattern, "*") == 0) {
        return 1;
    }
    if (value == NULL) {
        return 0;
    }
    for (const char *p = pattern; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
              *p == '_' || (*p >= 'A' && *p <= 'Z'))) {
            plain = 0;
            break;
        }
    }
    if (plain) {
        return prefix ? strncmp(value, pattern, strlen(pattern)) == 0 : strcmp(value, pattern) == 0;
    }
    /* Patterns were validated at configuration time; compile per use (routes
     * and silences are few, and this runs once per restart). */
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        return 0;
    }
    m = regexec(&re, value, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

static int triple_match(const char *ns_pat, const char *pod_pat, const char *c_pat,
                        const struct krc_restart *r)
{
    return krc_notify_pattern_match(ns_pat, r->namespace, 0) &&
           krc_notify_pattern_match(pod_pat, r->pod, 1) &&
           krc_notify_pattern_match(c_pat, r->container, 0);
}

/* --- lifecycle ------------------------------------------------------------ */

struct krc_notifier *krc_notifier_new(const struct krc_notify_options *o, struct krc_error *err)
{
    struct krc_notifier *n = krc_calloc(1, sizeof(*n));
    struct krc_slack_sender_options so;

    if (n == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    n->o = *o;
    n->web_api = o->bot_token != NULL && o->bot_token[0] != '\0';
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->wake, NULL);
    n->mutes = krc_calloc(MAX_MUTES, sizeof(struct mute));
    n->recov = krc_calloc(MAX_RECOVERY, sizeof(struct recovery));
    if (n->mutes == NULL || n->recov == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        krc_notifier_free(n);
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
    krc_slack_sender_options_defaults(&so);
    if (o->api_url != NULL && o->api_url[0] != '\0') {
        so.api_url = o->api_url;
    }
    so.bot_token = o->bot_token;
    so.ca_file = o->ca_file;
    so.cancel = &n->abort;
    so.cancel_transfer = &n->abort_hard;
    n->sender = krc_slack_sender_new(&so, err);
    if (n->sender == NULL) {
        krc_notifier_free(n);
        return NULL;
    }
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
    krc_free(it);
}

void krc_notifier_free(struct krc_notifier *n)
{
    if (n == NULL) {
        return;
    }
    while (n->head != NULL) {
        struct item *it = n->head;
        n->head = it->next;
        item_free(it);
    }
    krc_slack_sender_free(n->sender);
    krc_free(n->mutes);
    krc_free(n->recov);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->wake);
    krc_free(n);
}

const struct krc_notify_stats *krc_notifier_stats(const struct krc_notifier *n)
{
    return &n->stats;
}

int krc_notifier_has_destination(const struct krc_notifier *n)
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
            (!n->web_api && n->o.routes[i].webhook_url != NULL)) {
            return 1;
        }
    }
    return 0;
}

void krc_notifier_reconfigure(struct krc_notifier *n, const struct krc_notify_options *o)
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
    n->o.silences = o->silences;
    n->o.n_silences = o->n_silences;
    pthread_mutex_unlock(&n->lock);
}

int krc_notifier_wants_full_log(const struct krc_notifier *n)
{
    return n->web_api;
}

size_t krc_notifier_pending(struct krc_notifier *n)
{
    size_t k;
    pthread_mutex_lock(&n->lock);
    k = n->n_items;
    /* at shutdown, an owed storm summary counts as pending too */
    if (n->o.cancel != NULL && *n->o.cancel) {
        for (size_t i = 0; i < n->n_dests; i++) {
            k += n->dests[i].storm && n->dests[i].grouped_total > 0;
        }
    }
    pthread_mutex_unlock(&n->lock);
    return k;
}

/* --- routing ------------------------------------------------------------- */

static struct dest *dest_get(struct krc_notifier *n, const char *webhook, const char *channel,
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
    return d;
}

/* The destination of a restart, or NULL when nothing is configured for it.
 * Caller holds the lock. */
static struct dest *route(struct krc_notifier *n, const struct krc_restart *r)
{
    const char *webhook = n->o.webhook_url;
    const char *channel = n->o.channel;
    char store_key[64] = "webhook:default";

    for (size_t i = 0; i < n->o.n_routes; i++) {
        const struct krc_route *rt = &n->o.routes[i];
        if (triple_match(rt->namespace, rt->pod, rt->container, r)) {
            if (rt->webhook_url != NULL) {
                webhook = rt->webhook_url;
                snprintf(store_key, sizeof(store_key), "route:%zu", i);
            }
            if (rt->channel != NULL) {
                channel = rt->channel;
            }
            break; /* first match wins */
        }
    }
    /* The Go tool's per-pod channel (annotation, else label). App webhooks
     * are bound to one channel and ignore it; legacy webhooks and the Web API
     * honour it. */
    if (r->slack_channel != NULL && r->slack_channel[0] != '\0') {
        channel = r->slack_channel;
    }
    if (webhook != NULL && webhook[0] == '\0') {
        webhook = NULL;
    }
    if (channel != NULL && channel[0] == '\0') {
        channel = NULL;
    }
    if (n->web_api ? channel == NULL : webhook == NULL) {
        return NULL;
    }
    return dest_get(n, webhook, channel, n->web_api ? "api" : store_key);
}

static int silenced(const struct krc_notifier *n, const struct krc_restart *r, int64_t now)
{
    for (size_t i = 0; i < n->o.n_silences; i++) {
        const struct krc_silence *s = &n->o.silences[i];
        if ((s->start != 0 && now < s->start) || (s->end != 0 && now >= s->end)) {
            continue;
        }
        if (s->daily_from != s->daily_to) {
            int minute = (int)((now % 86400 + 86400) % 86400 / 60);
            int in = s->daily_from < s->daily_to
                         ? (minute >= s->daily_from && minute < s->daily_to)
                         : (minute >= s->daily_from || minute < s->daily_to);
            if (!in) {
                continue;
            }
        }
        if (triple_match(s->namespace, s->pod, s->container, r)) {
            return 1;
        }
    }
    return 0;
}

static struct mute *find_mute(struct krc_notifier *n, const char *key, int create, int64_t now)
{
    struct mute *oldest = NULL;
    for (size_t i = 0; i < n->n_mutes; i++) {
        if (strcmp(n->mutes[i].key, key) == 0) {
            return &n->mutes[i];
        }
        if (oldest == NULL || n->mutes[i].last_alert_s < oldest->last_alert_s) {
            oldest = &n->mutes[i];
        }
    }
    if (!create) {
        return NULL;
    }
    if (n->n_mutes < MAX_MUTES) {
        oldest = &n->mutes[n->n_mutes++];
    }
    memset(oldest, 0, sizeof(*oldest));
    snprintf(oldest->key, sizeof(oldest->key), "%s", key);
    oldest->last_alert_s = now;
    return oldest;
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
static void storm_arrival(struct krc_notifier *n, struct dest *d, int64_t now_ms)
{
    int64_t window_ms = n->o.storm_window_s * 1000;
    size_t cap = sizeof(d->arrivals) / sizeof(d->arrivals[0]);
    size_t in_window = 0;

    d->arrivals[(d->arrivals_head + d->n_arrivals) % cap] = now_ms;
    if (d->n_arrivals < cap) {
        d->n_arrivals++;
    } else {
        d->arrivals_head = (d->arrivals_head + 1) % cap;
    }
    for (size_t i = 0; i < d->n_arrivals; i++) {
        if (now_ms - d->arrivals[(d->arrivals_head + i) % cap] <= window_ms) {
            in_window++;
        }
    }
    d->last_arrival_ms = now_ms;
    if (d->storm || n->o.storm_threshold <= 0 || (long)in_window <= n->o.storm_threshold) {
        return;
    }
    d->storm = 1;
    d->alerted_before_storm = 0;
    for (size_t i = 0; i < d->n_sent; i++) {
        if (now_ms - d->sent_ms[i] <= window_ms) {
            d->alerted_before_storm++;
        }
    }
    d->summary_since_ms = now_ms - window_ms < d->arrivals[d->arrivals_head]
                              ? d->arrivals[d->arrivals_head]
                              : now_ms - window_ms;
    d->next_summary_ms = now_ms + n->o.storm_delay_s * 1000;
    d->storm_total = 0;
    krc_log(KRC_LOG_WARN,
            "alert storm: %zu restarts within %lds for one destination; grouping further "
            "restarts into a summary",
            in_window, n->o.storm_window_s);
    /* withdraw queued alerts of this destination */
    {
        struct item **pp = &n->head;
        n->tail = NULL;
        while (*pp != NULL) {
            struct item *it = *pp;
            if (it->dest == d && (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
                /* Not posted: counted into the summary. The item stays queued as
                 * WITHDRAWN so the sender settles its outbox row (it must not be
                 * resent after a restart of krc). */
                dest_group(d, it->rep, it->diag, NULL);
                atomic_fetch_add(&n->stats.grouped, 1);
                krc_log(KRC_LOG_INFO, "%s withdrawn: grouped into the storm summary", it->what);
                it->kind = ITEM_WITHDRAWN;
            }
            n->tail = it;
            pp = &it->next;
        }
    }
}

enum krc_notify_decision krc_notifier_decide(struct krc_notifier *n, const struct krc_restart *r)
{
    enum krc_notify_decision d = KRC_NOTIFY_ALERT;
    int64_t now = krc_clock_now();
    struct dest *dest;
    struct mute *m;
    char key[512];

    pthread_mutex_lock(&n->lock);
    dest = route(n, r);
    if (dest == NULL) {
        d = KRC_NOTIFY_NO_DESTINATION;
        goto out;
    }
    if (silenced(n, r, now)) {
        d = KRC_NOTIFY_SILENCED;
        atomic_fetch_add(&n->stats.silenced, 1);
        goto out;
    }
    storm_arrival(n, dest, krc_clock_mono_ms());
    if (dest->storm) {
        d = KRC_NOTIFY_GROUPED;
        goto out;
    }
    snprintf(key, sizeof(key), "%s/%s", r->namespace, r->pod);
    m = find_mute(n, key, 0, now);
    if (m != NULL && now - m->last_alert_s < n->o.mute_seconds) {
        if (n->web_api && m->ts[0] != '\0') {
            d = KRC_NOTIFY_THREAD;
        } else {
            d = KRC_NOTIFY_MUTED;
            atomic_fetch_add(&n->stats.muted, 1);
        }
        goto out;
    }
    /* Mark now, so that a second restart of the same pod arriving before
     * this alert is sent is muted (or threaded) rather than duplicated. */
    m = find_mute(n, key, 1, now);
    m->last_alert_s = now;
    m->ts[0] = '\0';
out:
    pthread_mutex_unlock(&n->lock);
    return d;
}

static int log_ignored(const struct krc_notifier *n, const struct krc_report *rep)
{
    char *text;
    int hit = 0;

    if (n->o.n_log_ignore == 0 || rep->log == NULL || rep->log_len == 0) {
        return 0;
    }
    text = krc_strndup((const char *)rep->log, rep->log_len);
    if (text == NULL) {
        return 0;
    }
    for (size_t i = 0; i < n->o.n_log_ignore && !hit; i++) {
        hit = regexec(&n->o.log_ignore[i], text, 0, NULL, 0) == 0;
    }
    krc_free(text);
    return hit;
}

static void fill_format_options(const struct krc_notifier *n, const struct dest *d,
                                struct krc_slack_options *fo);

enum krc_notify_decision krc_notifier_prepare(struct krc_notifier *n, const struct krc_restart *r,
                                              enum krc_notify_decision d,
                                              const struct krc_report *rep,
                                              const struct krc_diagnosis *diag,
                                              struct krc_notify_message *ret)
{
    struct dest *dest;
    struct krc_slack_options fo;
    struct krc_error e;

    memset(ret, 0, sizeof(*ret));
    pthread_mutex_lock(&n->lock);
    dest = route(n, r);
    if ((d == KRC_NOTIFY_ALERT || d == KRC_NOTIFY_THREAD) && dest != NULL && dest->storm) {
        d = KRC_NOTIFY_GROUPED; /* the storm began while this one was collected */
    }
    if ((d == KRC_NOTIFY_ALERT || d == KRC_NOTIFY_THREAD) && log_ignored(n, rep)) {
        atomic_fetch_add(&n->stats.log_ignored, 1);
        d = KRC_NOTIFY_SILENCED;
    }
    if (d == KRC_NOTIFY_GROUPED && dest != NULL) {
        atomic_fetch_add(&n->stats.grouped, 1);
        dest_group(dest, rep, diag, r);
    }
    if ((d != KRC_NOTIFY_ALERT && d != KRC_NOTIFY_THREAD) || dest == NULL) {
        pthread_mutex_unlock(&n->lock);
        ret->decision = d;
        return d;
    }
    fill_format_options(n, dest, &fo);
    ret->kind = d == KRC_NOTIFY_THREAD ? KRC_STORE_KIND_REPLY : KRC_STORE_KIND_ALERT;
    snprintf(ret->destination, sizeof(ret->destination), "%s", dest->store_key);
    snprintf(ret->channel, sizeof(ret->channel), "%s", dest->channel ? dest->channel : "");
    snprintf(ret->thread_key, sizeof(ret->thread_key), "%s/%s", r->namespace, r->pod);
    ret->dest = dest;
    pthread_mutex_unlock(&n->lock);

    krc_error_clear(&e);
    if (krc_slack_format_restart(rep, diag, &fo, &ret->body, NULL, &e) < 0 ||
        krc_slack_format_text_only(rep, diag, &fo, &ret->fallback, NULL, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the alert for %s/%s: %s", r->namespace, r->pod,
                e.msg);
        atomic_fetch_add(&n->stats.failed, 1);
        krc_notify_message_cleanup(ret);
        ret->decision = d;
        return d;
    }
    snprintf(ret->what, sizeof(ret->what), "%s for %s/%s container %s (%s)",
             d == KRC_NOTIFY_THREAD ? "thread reply" : "alert", r->namespace, r->pod,
             diag->container ? diag->container : r->container, krc_cause_name(diag->cause));
    ret->detected_mono_ms = r->detected_mono_ms;
    snprintf(ret->uid, sizeof(ret->uid), "%s", r->uid);
    snprintf(ret->container, sizeof(ret->container), "%s", r->container);
    ret->restart_count = r->restart_count;
    ret->finished_at = r->finished_at;
    snprintf(ret->container_id, sizeof(ret->container_id), "%s",
             r->container_id != NULL ? r->container_id : "");
    ret->decision = d;
    return d;
}

void krc_notify_message_cleanup(struct krc_notify_message *m)
{
    krc_free(m->body);
    krc_free(m->fallback);
    m->body = NULL;
    m->fallback = NULL;
}

static void queue_item(struct krc_notifier *n, struct item *it)
{
    pthread_mutex_lock(&n->lock);
    if (n->tail != NULL) {
        n->tail->next = it;
    } else {
        n->head = it;
    }
    n->tail = it;
    n->n_items++;
    pthread_cond_signal(&n->wake);
    pthread_mutex_unlock(&n->lock);
}

void krc_notifier_enqueue(struct krc_notifier *n, struct krc_notify_message *msg, int64_t outbox_id,
                          struct krc_report *rep, struct krc_diagnosis *diag, char *full_log,
                          size_t full_log_len)
{
    struct item *it = NULL;

    if (msg->body == NULL || msg->dest == NULL || (it = krc_calloc(1, sizeof(*it))) == NULL) {
        if (msg->body != NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: %s dropped", msg->what);
            atomic_fetch_add(&n->stats.failed, 1);
        }
        krc_notify_message_cleanup(msg);
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

enum krc_notify_decision krc_notifier_submit(struct krc_notifier *n, const struct krc_restart *r,
                                             enum krc_notify_decision d, struct krc_report *rep,
                                             struct krc_diagnosis *diag, char *full_log,
                                             size_t full_log_len)
{
    struct krc_notify_message msg;

    d = krc_notifier_prepare(n, r, d, rep, diag, &msg);
    if (msg.body != NULL) {
        krc_notifier_enqueue(n, &msg, 0, rep, diag, full_log, full_log_len);
        return d;
    }
    krc_report_free(rep);
    if (diag != NULL) {
        krc_diagnosis_cleanup(diag);
        krc_free(diag);
    }
    krc_free(full_log);
    return d;
}

int krc_notifier_resume(struct krc_notifier *n, const struct krc_store_message *m,
                        const struct krc_store_row *restart)
{
    const char *webhook = NULL;
    struct item *it;
    struct dest *d;
    const char *channel = m->channel != NULL && m->channel[0] != '\0' ? m->channel : NULL;

    if (strcmp(m->destination, "api") == 0) {
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
    if (!n->web_api && (webhook == NULL || webhook[0] == '\0')) {
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
    d = dest_get(n, webhook, channel, m->destination);
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

/* --- the sender ----------------------------------------------------------- */

static void fill_format_options(const struct krc_notifier *n, const struct dest *d,
                                struct krc_slack_options *fo)
{
    krc_slack_options_init(fo);
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

static int summary_item(struct krc_notifier *n, struct dest *d, char **ret_body, long *ret_total)
{
    struct krc_slack_summary s;
    struct krc_slack_options fo;
    struct krc_slack_group nodes[MAX_GROUPS], wls[MAX_GROUPS], causes[MAX_GROUPS];
    struct krc_slack_example ex[MAX_EXAMPLES];
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
    s.restarts = (size_t)(d->grouped_total + d->alerted_before_storm);
    s.window_seconds = (krc_clock_mono_ms() - d->summary_since_ms) / 1000;
    s.alerted = (size_t)d->alerted_before_storm;
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
    rc = krc_slack_format_summary(&s, &fo, ret_body, &e);
    if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the storm summary: %s", e.msg);
        return rc;
    }
    *ret_total = d->grouped_total;
    /* start the next summary */
    d->grouped_total = 0;
    d->alerted_before_storm = 0;
    d->n_by_node = d->n_by_workload = d->n_by_cause = 0;
    d->n_examples = 0;
    d->summary_since_ms = krc_clock_mono_ms();
    return 0;
}

/* Replies go into the pod's thread: set thread_ts (and the parent's channel
 * id) in an already formatted body. Returns a new string or NULL. */
static char *with_thread(const char *body, const char *ts, const char *channel)
{
    cJSON *root = cJSON_Parse(body);
    char *out = NULL;

    if (root == NULL) {
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "thread_ts");
    if (cJSON_AddStringToObject(root, "thread_ts", ts) != NULL) {
        if (channel != NULL && channel[0] != '\0') {
            cJSON_DeleteItemFromObjectCaseSensitive(root, "channel");
            cJSON_AddStringToObject(root, "channel", channel);
        }
        out = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(root);
    return out;
}

/* The thread parent of a pod: from memory, else from the store (threads
 * survive a daemon restart). */
static void thread_parent(struct krc_notifier *n, const char *pod_key, char *ts, size_t tssz,
                          char *channel, size_t chsz)
{
    struct mute *mt;

    ts[0] = '\0';
    channel[0] = '\0';
    pthread_mutex_lock(&n->lock);
    mt = find_mute(n, pod_key, 0, 0);
    if (mt != NULL && mt->ts[0] != '\0') {
        snprintf(ts, tssz, "%s", mt->ts);
        snprintf(channel, chsz, "%s", mt->channel);
    }
    pthread_mutex_unlock(&n->lock);
    if (ts[0] == '\0' && n->store != NULL) {
        char *t = NULL;
        char *c = NULL;
        if (krc_store_thread_ts(n->store, pod_key, &t, &c, NULL) == 0 && t != NULL) {
            snprintf(ts, tssz, "%s", t);
            snprintf(channel, chsz, "%s", c ? c : "");
        }
        krc_free(t);
        krc_free(c);
    }
}

enum send_result { SENT, RETRY_LATER, GIVEN_UP };

static void remember_thread(struct krc_notifier *n, struct item *it,
                            const struct krc_slack_result *res)
{
    struct mute *mt;

    pthread_mutex_lock(&n->lock);
    mt = find_mute(n, it->pod_key, 1, krc_clock_now());
    snprintf(mt->ts, sizeof(mt->ts), "%s", res->ts);
    snprintf(mt->channel, sizeof(mt->channel), "%s", res->channel);
    if (n->o.recovered_after_s > 0 && n->n_recov < MAX_RECOVERY && it->rep != NULL &&
        it->rep->uid != NULL && it->diag != NULL) {
        struct recovery *rv = &n->recov[n->n_recov++];
        memset(rv, 0, sizeof(*rv));
        snprintf(rv->namespace, sizeof(rv->namespace), "%s", it->rep->namespace);
        snprintf(rv->pod, sizeof(rv->pod), "%s", it->rep->name);
        snprintf(rv->uid, sizeof(rv->uid), "%s", it->rep->uid);
        snprintf(rv->container, sizeof(rv->container), "%s",
                 it->diag->container ? it->diag->container : "");
        rv->restart_count = it->diag->restart_count;
        rv->alerted_s = krc_clock_now();
        rv->next_check_s = rv->alerted_s + n->o.recovered_after_s;
        snprintf(rv->ts, sizeof(rv->ts), "%s", res->ts);
        snprintf(rv->channel, sizeof(rv->channel), "%s", res->channel);
        rv->dest = it->dest;
    }
    pthread_mutex_unlock(&n->lock);
}

/* A later restart in the thread: the "recovered" reply waits for this one. */
static void rearm_recovery(struct krc_notifier *n, struct item *it)
{
    if (n->o.recovered_after_s <= 0 || it->rep == NULL || it->rep->uid == NULL ||
        it->diag == NULL) {
        return;
    }
    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < n->n_recov; i++) {
        struct recovery *rv = &n->recov[i];
        if (strcmp(rv->uid, it->rep->uid) == 0 &&
            strcmp(rv->container, it->diag->container ? it->diag->container : "") == 0) {
            rv->restart_count = it->diag->restart_count;
            rv->next_check_s = krc_clock_now() + n->o.recovered_after_s;
            pthread_mutex_unlock(&n->lock);
            return;
        }
    }
    pthread_mutex_unlock(&n->lock);
}

static void upload_log(struct krc_notifier *n, struct item *it, const char *channel,
                       const char *thread)
{
    char fname[300];
    struct krc_buf red;
    struct krc_error e;
    const char *data = it->full_log;
    size_t len = it->full_log_len;

    krc_buf_init(&red, it->full_log_len * 2 + 1024);
    /* Always redact (built-in patterns at least): the file leaves the cluster. */
    if (krc_redact_apply(n->o.redactor, it->full_log, it->full_log_len, &red, NULL) >= 0) {
        data = krc_buf_str(&red);
        len = red.len;
    }
    snprintf(fname, sizeof(fname), "%s-%s-previous.log",
             it->rep != NULL && it->rep->name ? it->rep->name : "pod",
             it->diag != NULL && it->diag->container ? it->diag->container : "container");
    krc_error_clear(&e);
    if (krc_slack_upload(n->sender, channel, thread, fname, "Previous container log", data, len,
                         &e) == 0) {
        atomic_fetch_add(&n->stats.files_uploaded, 1);
    } else {
        krc_log(KRC_LOG_WARN, "log file for %s not uploaded: %s", it->pod_key, e.msg);
    }
    krc_buf_cleanup(&red);
}

/* Remember a failed mark for a retry; the oldest is dropped from memory
 * when the table is full (the journal still has it, if it was written). */
static void unmarked_add(struct krc_notifier *n, int64_t id, const char *ts, int journaled)
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
static void mark_delivered(struct krc_notifier *n, int64_t id, const char *ts, const char *what)
{
    struct krc_error se;
    struct krc_error je;
    int jrc;

    krc_error_clear(&se);
    if (krc_store_mark_delivered(n->store, id, ts, &se) == 0) {
        return;
    }
    if (se.code == KRC_ENOTFOUND) {
        krc_log(KRC_LOG_WARN, "%s was posted but its outbox row is gone: %s", what, se.msg);
        return;
    }
    krc_error_clear(&je);
    jrc = krc_store_journal_delivered(n->store, id, ts, &je);
    unmarked_add(n, id, ts, jrc == 0);
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
 * journal is removed once memory holds nothing it did not write. */
static void retry_unmarked(struct krc_notifier *n, int all)
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

static enum send_result send_one(struct krc_notifier *n, struct item *it)
{
    struct krc_slack_message m;
    struct krc_slack_result res;
    struct krc_error e;
    char *owned = NULL;
    const char *body = it->body;
    char parent_ts[64] = "";
    char parent_channel[64] = "";
    int rc;

    krc_error_clear(&e);
    if (it->kind == ITEM_WITHDRAWN) {
        if (n->store != NULL && it->outbox_id > 0) {
            krc_store_mark_attempt(n->store, it->outbox_id,
                                   "withdrawn: grouped into an alert-storm summary", 1, NULL);
        }
        if (n->store != NULL && it->restart_id > 0) {
            krc_store_set_decision(n->store, it->restart_id, "grouped", NULL, NULL);
        }
        return GIVEN_UP;
    }
    if (it->kind == ITEM_RECOVERED && body == NULL) {
        struct krc_slack_options fo;
        fill_format_options(n, it->dest, &fo);
        if (krc_slack_format_recovered(&it->recovered, &fo, &owned, &e) < 0) {
            krc_log(KRC_LOG_ERROR, "cannot format the %s: %s", it->what, e.msg);
            atomic_fetch_add(&n->stats.failed, 1);
            return GIVEN_UP;
        }
        body = owned;
    }
    if (it->kind == ITEM_REPLY || it->kind == ITEM_RECOVERED) {
        thread_parent(n, it->pod_key, parent_ts, sizeof(parent_ts), parent_channel,
                      sizeof(parent_channel));
        if (parent_ts[0] != '\0') {
            char *t = with_thread(body, parent_ts, parent_channel);
            if (t != NULL) {
                krc_free(owned);
                owned = t;
                body = owned;
            }
        }
    }
    memset(&m, 0, sizeof(m));
    m.webhook_url = it->dest->webhook_url;
    m.channel =
        m.webhook_url == NULL ? (parent_channel[0] ? parent_channel : it->dest->channel) : NULL;
    m.body = body;
    m.fallback = it->fallback;
    rc = krc_slack_send(n->sender, &m, &res, &e);
    krc_free(owned);
    atomic_fetch_add(&n->stats.rate_limited, res.rate_limited);
    if (rc == KRC_ECANCELED) {
        return RETRY_LATER; /* shutdown: it stays pending in the outbox */
    }
    if (rc < 0) {
        /* Slack refused it for good (4xx) or kept failing: a 4xx will never
         * succeed; anything else is tried again later, the outbox keeps it. */
        int final = rc == KRC_EHTTP && res.http_status >= 400 && res.http_status < 500;
        if (n->store != NULL && it->outbox_id > 0) {
            krc_store_mark_attempt(n->store, it->outbox_id, e.msg, final, NULL);
        }
        atomic_fetch_add(&n->stats.failed, 1);
        krc_log(KRC_LOG_ERROR, "%s not delivered: %s%s", it->what, e.msg,
                final ? "" : "; it stays in the outbox and is retried in 60s");
        return final ? GIVEN_UP : RETRY_LATER;
    }
    if (n->store != NULL && it->outbox_id > 0) {
        mark_delivered(n, it->outbox_id, res.ts[0] ? res.ts : NULL, it->what);
    }
    krc_log(KRC_LOG_INFO, "%s posted%s (%d attempt%s)", it->what,
            res.used_fallback ? " as plain text" : "", res.attempts, res.attempts == 1 ? "" : "s");
    if (n->o.on_delivered != NULL && it->detected_mono_ms > 0 &&
        (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
        n->o.on_delivered((double)(krc_clock_mono_ms() - it->detected_mono_ms) / 1000.0,
                          n->o.on_delivered_userdata);
    }
    if (n->o.on_posted != NULL && it->uid[0] != '\0' &&
        (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
        n->o.on_posted(it->uid, it->container, it->restart_count, it->finished_at,
                       it->container_id[0] ? it->container_id : NULL, n->o.on_delivered_userdata);
    }
    if (it->kind == ITEM_ALERT) {
        pthread_mutex_lock(&n->lock);
        it->dest->sent_ms[it->dest->n_sent % 16] = krc_clock_mono_ms();
        it->dest->n_sent = it->dest->n_sent < 16 ? it->dest->n_sent + 1 : 16;
        if (it->dest->storm) {
            /* it was already being sent when the storm began */
            it->dest->alerted_before_storm++;
        }
        pthread_mutex_unlock(&n->lock);
    }
    switch (it->kind) {
    case ITEM_ALERT:
        atomic_fetch_add(&n->stats.alerts_sent, 1);
        if (n->web_api && res.ts[0] != '\0') {
            remember_thread(n, it, &res);
        }
        break;
    case ITEM_REPLY:
        atomic_fetch_add(&n->stats.replies_sent, 1);
        rearm_recovery(n, it);
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
    if (n->web_api && it->full_log != NULL && it->full_log_len > 0 &&
        (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
        const char *thread = it->kind == ITEM_ALERT ? res.ts : parent_ts;
        const char *chan = res.channel[0] ? res.channel : m.channel;
        upload_log(n, it, chan, thread);
    }
    return SENT;
}

static void send_summary(struct krc_notifier *n, struct dest *d, char *body, long total)
{
    struct item it;
    int64_t id = 0;

    memset(&it, 0, sizeof(it));
    it.kind = ITEM_SUMMARY;
    it.dest = d;
    it.body = body;
    snprintf(it.what, sizeof(it.what), "storm summary of %ld restarts", total);
    if (n->store != NULL) {
        struct krc_store_outbox ob;
        memset(&ob, 0, sizeof(ob));
        ob.kind = KRC_STORE_KIND_SUMMARY;
        ob.destination = d->store_key;
        ob.channel = d->channel;
        ob.body = body;
        if (krc_store_add_outbox(n->store, 0, &ob, &id, NULL) == 0) {
            it.outbox_id = id;
        }
    }
    if (send_one(n, &it) == RETRY_LATER && it.outbox_id > 0) {
        krc_log(KRC_LOG_WARN, "storm summary kept in the outbox for a later retry");
    }
}

/* A due storm summary, if any (caller holds the lock); the storm ends once
 * a whole window passed without a restart. */
static struct dest *due_summary(struct krc_notifier *n, int64_t now_ms)
{
    for (size_t i = 0; i < n->n_dests; i++) {
        struct dest *d = &n->dests[i];
        if (!d->storm) {
            continue;
        }
        if (d->grouped_total > 0 && now_ms >= d->next_summary_ms) {
            return d;
        }
        if (d->grouped_total == 0 && now_ms - d->last_arrival_ms > n->o.storm_window_s * 1000) {
            d->storm = 0;
            krc_log(KRC_LOG_INFO, "alert storm over: %ld restarts were grouped", d->storm_total);
        }
    }
    return NULL;
}

/* Web API: after an alert, check whether the container has run ready for
 * recovered_after_s and say so in the thread. */
static void check_recoveries(struct krc_notifier *n)
{
    int64_t now = krc_clock_now();

    if (n->o.kube == NULL) {
        return;
    }
    for (size_t i = 0; i < n->n_recov;) {
        struct recovery rv;
        char path[700];
        char *body = NULL;
        size_t len = 0;
        struct krc_error e;
        struct krc_report rep;
        int done = 0;
        const struct krc_report_container *c;

        pthread_mutex_lock(&n->lock);
        rv = n->recov[i];
        pthread_mutex_unlock(&n->lock);
        if (rv.next_check_s > now) {
            i++;
            continue;
        }
        krc_error_clear(&e);
        krc_report_init(&rep);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", rv.namespace, rv.pod);
        if (krc_kube_get(n->o.kube, path, 8 * 1024 * 1024, &body, &len, &e) < 0 ||
            krc_kube_parse_pod(body, len, &rep, &e) < 0 || rep.uid == NULL ||
            strcmp(rep.uid, rv.uid) != 0) {
            done = e.code == KRC_ENOTFOUND || (rep.uid != NULL && strcmp(rep.uid, rv.uid) != 0);
            if (!done && e.code != 0 && !n->recovery_warned) {
                /* e.g. 403 without "get pods": said once, then retried quietly */
                krc_log(KRC_LOG_WARN, "recovered check of %s/%s: %s (retried later)", rv.namespace,
                        rv.pod, e.msg);
                n->recovery_warned = 1;
            }
        } else if ((c = krc_report_container_get(&rep, rv.container, -1)) != NULL) {
            if (c->restart_count != rv.restart_count) {
                /* it restarted again: wait for this restart to settle too */
                pthread_mutex_lock(&n->lock);
                n->recov[i].restart_count = c->restart_count;
                pthread_mutex_unlock(&n->lock);
            } else if (c->ready && c->state == KRC_REPORT_STATE_RUNNING &&
                       c->state_started_at != 0 &&
                       now - c->state_started_at >= n->o.recovered_after_s) {
                struct item *it = krc_calloc(1, sizeof(*it));
                if (it != NULL) {
                    it->kind = ITEM_RECOVERED;
                    it->dest = rv.dest;
                    snprintf(it->pod_key, sizeof(it->pod_key), "%s/%s", rv.namespace, rv.pod);
                    snprintf(it->rec_ns, sizeof(it->rec_ns), "%s", rv.namespace);
                    snprintf(it->rec_pod, sizeof(it->rec_pod), "%s", rv.pod);
                    snprintf(it->rec_container, sizeof(it->rec_container), "%s", rv.container);
                    it->recovered.namespace = it->rec_ns;
                    it->recovered.pod = it->rec_pod;
                    it->recovered.container = it->rec_container;
                    it->recovered.ready_seconds = now - c->state_started_at;
                    snprintf(it->what, sizeof(it->what), "recovered reply for %s/%s", rv.namespace,
                             rv.pod);
                    it->recovered.restart_count = c->restart_count;
                    pthread_mutex_lock(&n->lock);
                    if (n->tail != NULL) {
                        n->tail->next = it;
                    } else {
                        n->head = it;
                    }
                    n->tail = it;
                    n->n_items++;
                    pthread_mutex_unlock(&n->lock);
                }
                done = 1;
            }
        } else {
            done = 1;
        }
        krc_free(body);
        krc_report_cleanup(&rep);
        pthread_mutex_lock(&n->lock);
        if (done || now - n->recov[i].alerted_s > RECOVERY_GIVE_UP_S) {
            n->recov[i] = n->recov[--n->n_recov];
        } else {
            /* not yet: look again when it could first qualify, at most a minute later */
            n->recov[i].next_check_s =
                now + (n->o.recovered_after_s < 60
                           ? (n->o.recovered_after_s > 1 ? n->o.recovered_after_s : 1)
                           : 60);
            i++;
        }
        pthread_mutex_unlock(&n->lock);
    }
}

int64_t krc_notifier_heartbeat(const struct krc_notifier *n)
{
    return atomic_load(&n->heartbeat_ms);
}

void krc_notifier_abort_transfers(struct krc_notifier *n)
{
    n->abort_hard = 1;
    krc_notifier_abort(n);
}

int krc_notifier_aborted(struct krc_notifier *n)
{
    return atomic_load(&n->abort);
}

void krc_notifier_abort(struct krc_notifier *n)
{
    atomic_store(&n->abort, 1);
    pthread_mutex_lock(&n->lock);
    pthread_cond_broadcast(&n->wake);
    pthread_mutex_unlock(&n->lock);
}

void krc_notifier_run(struct krc_notifier *n)
{
    int64_t last_recovery_check = 0;

    if (n->o.store_path != NULL) {
        struct krc_error e;
        krc_error_clear(&e);
        if (krc_store_open(n->o.store_path, 0, &n->store, &e) < 0) {
            krc_log(KRC_LOG_ERROR, "sender: outbox unavailable (%s); deliveries are not recorded",
                    e.msg);
            n->store = NULL;
        }
    }

    while (!n->abort) {
        struct item *it = NULL;
        atomic_store(&n->heartbeat_ms, krc_clock_mono_ms());
        struct dest *d = NULL;
        char *summary = NULL;
        long total = 0;
        int64_t now_ms = krc_clock_mono_ms();
        int stopping = n->o.cancel != NULL && *n->o.cancel;

        pthread_mutex_lock(&n->lock);
        d = due_summary(n, now_ms);
        if (d == NULL && stopping) {
            /* A storm summary still owed is posted before we go. */
            for (size_t i = 0; i < n->n_dests && d == NULL; i++) {
                if (n->dests[i].storm && n->dests[i].grouped_total > 0) {
                    d = &n->dests[i];
                }
            }
        }
        if (d != NULL) {
            if (summary_item(n, d, &summary, &total) < 0) {
                summary = NULL;
            }
            d->next_summary_ms = now_ms + n->o.storm_window_s * 1000;
        } else if (n->head != NULL && n->head->not_before_ms <= now_ms) {
            it = n->head;
            n->head = it->next;
            if (n->head == NULL) {
                n->tail = NULL;
            }
            it->next = NULL;
            n->n_items--;
        } else if (n->head != NULL && n->head->next != NULL) {
            /* the head waits for a retry: rotate it to the back */
            struct item *h = n->head;
            n->head = h->next;
            h->next = NULL;
            n->tail->next = h;
            n->tail = h;
            if (n->head->not_before_ms > now_ms) {
                pthread_mutex_unlock(&n->lock);
                krc_clock_sleep_ms(100, &n->abort);
                continue;
            }
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&n->wake, &n->lock, &ts);
        }
        pthread_mutex_unlock(&n->lock);
        if (summary != NULL) {
            send_summary(n, d, summary, total);
            krc_free(summary);
        }
        if (it != NULL) {
            if (send_one(n, it) == RETRY_LATER && !n->abort) {
                it->not_before_ms = krc_clock_mono_ms() + 60000;
                queue_item(n, it);
            } else {
                item_free(it);
            }
        }
        if (n->n_unmarked > 0) {
            retry_unmarked(n, 0);
        }
        if (!stopping && n->o.recovered_after_s > 0 && now_ms - last_recovery_check > 5000) {
            last_recovery_check = now_ms;
            check_recoveries(n);
        }
    }
    /* What could not be sent in time is reported, not silently dropped: with
     * a store it stays in the outbox and is sent at the next start. */
    pthread_mutex_lock(&n->lock);
    if (n->n_items > 0) {
        krc_log(KRC_LOG_WARN, "shutdown: %zu Slack message(s) not sent%s", n->n_items,
                n->store != NULL ? "; they stay in the outbox (sent at the next start or, with "
                                   "leader election, when this replica leads again and its "
                                   "predecessor did not post them)"
                                 : "");
    }
    pthread_mutex_unlock(&n->lock);
    if (n->n_unmarked > 0) {
        /* one last try; what fails is left to the delivery journal (the
         * marks whose journal write failed too were logged as such) */
        retry_unmarked(n, 1);
    }
    krc_store_close(n->store);
    n->store = NULL;
}
