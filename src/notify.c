#include "krc/notify.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "krc/buf.h"
#include "krc/clock.h"
#include "krc/kube_parse.h"
#include "krc/log.h"
#include "krc/mem.h"
#include "krc/slack_format.h"
#include "krc/slack_send.h"

#define MAX_DESTS 64
#define MAX_MUTES 4096
#define MAX_GROUPS 64
#define MAX_EXAMPLES 8
#define MAX_RECOVERY 1024
#define RECOVERY_GIVE_UP_S (24 * 3600)

enum item_kind { ITEM_ALERT, ITEM_REPLY, ITEM_SUMMARY, ITEM_RECOVERED };

struct dest;

/* A message waiting for the sender. */
struct item {
    enum item_kind kind;
    struct dest *dest;
    char pod_key[512]; /* namespace/pod */
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
    int64_t arrivals[256]; /* ring of recent arrival times (mono ms) */
    size_t n_arrivals;
    size_t arrivals_head;
    int storm;
    int64_t storm_started_ms;
    int64_t next_summary_ms;
    int64_t last_arrival_ms;
    long grouped_total;        /* in the current summary */
    long alerted_before_storm; /* alerts already posted in the storm's window */
    long storm_total;          /* since the storm began */
    int64_t summary_since_ms;  /* start of the current summary's window */
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
    volatile int abort; /* set by krc_notifier_abort: stop sending at once */
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

/* The destination of a restart, or NULL when nothing is configured for it.
 * Caller holds the lock. */
static struct dest *route(struct krc_notifier *n, const struct krc_restart *r)
{
    const char *webhook = n->o.webhook_url;
    const char *channel = n->o.channel;
    struct dest *d;
    char key[1024];

    for (size_t i = 0; i < n->o.n_routes; i++) {
        const struct krc_route *rt = &n->o.routes[i];
        if (triple_match(rt->namespace, rt->pod, rt->container, r)) {
            if (rt->webhook_url != NULL) {
                webhook = rt->webhook_url;
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
    d->channel = (char *)channel;
    snprintf(d->key, sizeof(d->key), "%s", key);
    return d;
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
    d->storm_started_ms = now_ms;
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
                *pp = it->next;
                dest_group(d, it->rep, it->diag, NULL);
                atomic_fetch_add(&n->stats.grouped, 1);
                n->n_items--;
                item_free(it);
                continue;
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

enum krc_notify_decision krc_notifier_submit(struct krc_notifier *n, const struct krc_restart *r,
                                             enum krc_notify_decision d, struct krc_report *rep,
                                             struct krc_diagnosis *diag, char *full_log,
                                             size_t full_log_len)
{
    struct item *it = NULL;
    struct dest *dest;

    pthread_mutex_lock(&n->lock);
    dest = route(n, r);
    if ((d == KRC_NOTIFY_ALERT || d == KRC_NOTIFY_THREAD) && dest != NULL && dest->storm) {
        d = KRC_NOTIFY_GROUPED; /* the storm began while this one was collected */
        atomic_fetch_add(&n->stats.grouped, 1);
        dest_group(dest, rep, diag, r);
        goto release;
    }
    if ((d == KRC_NOTIFY_ALERT || d == KRC_NOTIFY_THREAD) && log_ignored(n, rep)) {
        atomic_fetch_add(&n->stats.log_ignored, 1);
        d = KRC_NOTIFY_SILENCED;
        goto release;
    }
    if (d == KRC_NOTIFY_GROUPED && dest != NULL) {
        atomic_fetch_add(&n->stats.grouped, 1);
        dest_group(dest, rep, diag, r);
        goto release;
    }
    if ((d != KRC_NOTIFY_ALERT && d != KRC_NOTIFY_THREAD) || dest == NULL) {
        goto release;
    }
    it = krc_calloc(1, sizeof(*it));
    if (it == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: alert for %s/%s dropped", r->namespace, r->pod);
        atomic_fetch_add(&n->stats.failed, 1);
        goto release;
    }
    it->kind = d == KRC_NOTIFY_THREAD ? ITEM_REPLY : ITEM_ALERT;
    it->dest = dest;
    snprintf(it->pod_key, sizeof(it->pod_key), "%s/%s", r->namespace, r->pod);
    it->rep = rep;
    it->diag = diag;
    it->full_log = full_log;
    it->full_log_len = full_log_len;
    if (n->tail != NULL) {
        n->tail->next = it;
    } else {
        n->head = it;
    }
    n->tail = it;
    n->n_items++;
    pthread_cond_signal(&n->wake);
    pthread_mutex_unlock(&n->lock);
    return d;

release:
    pthread_mutex_unlock(&n->lock);
    krc_report_free(rep);
    if (diag != NULL) {
        krc_diagnosis_cleanup(diag);
        krc_free(diag);
    }
    krc_free(full_log);
    return d;
}

/* --- the sender ----------------------------------------------------------- */

static void fill_format_options(const struct krc_notifier *n, const struct dest *d,
                                struct krc_slack_options *fo)
{
    krc_slack_options_init(fo);
    fo->cluster = n->o.cluster_name != NULL && n->o.cluster_name[0] ? n->o.cluster_name : NULL;
    fo->now = krc_clock_now();
    fo->channel = d->channel;
    fo->username = n->o.username;
    fo->icon = n->o.icon_emoji;
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
    s.restarts = (size_t)d->grouped_total;
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

static void send_one(struct krc_notifier *n, struct item *it)
{
    struct krc_slack_options fo;
    struct krc_slack_message m;
    struct krc_slack_result res;
    struct krc_error e;
    char *body = NULL;
    char *fallback = NULL;
    char what[600];
    char parent_ts[64] = "";
    char parent_channel[64] = "";
    int rc;

    krc_error_clear(&e);
    fill_format_options(n, it->dest, &fo);
    if (it->kind == ITEM_REPLY || it->kind == ITEM_RECOVERED) {
        struct mute *mt;
        pthread_mutex_lock(&n->lock);
        mt = find_mute(n, it->pod_key, 0, 0);
        if (mt != NULL) {
            snprintf(parent_ts, sizeof(parent_ts), "%s", mt->ts);
            snprintf(parent_channel, sizeof(parent_channel), "%s", mt->channel);
        }
        pthread_mutex_unlock(&n->lock);
        fo.thread_ts = parent_ts[0] ? parent_ts : NULL;
        if (parent_channel[0] != '\0') {
            fo.channel = parent_channel;
        }
    }
    switch (it->kind) {
    case ITEM_ALERT:
    case ITEM_REPLY:
        rc = krc_slack_format_restart(it->rep, it->diag, &fo, &body, NULL, &e);
        if (rc == 0) {
            rc = krc_slack_format_text_only(it->rep, it->diag, &fo, &fallback, NULL, &e);
        }
        snprintf(what, sizeof(what), "%s for %s container %s (%s)",
                 it->kind == ITEM_ALERT ? "alert" : "thread reply", it->pod_key,
                 it->diag->container ? it->diag->container : "?", krc_cause_name(it->diag->cause));
        break;
    case ITEM_RECOVERED:
        rc = krc_slack_format_recovered(&it->recovered, &fo, &body, &e);
        snprintf(what, sizeof(what), "recovered reply for %s", it->pod_key);
        break;
    default:
        rc = KRC_EINVAL;
        what[0] = '\0';
        break;
    }
    if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the %s: %s", what, e.msg);
        atomic_fetch_add(&n->stats.failed, 1);
        goto out;
    }
    memset(&m, 0, sizeof(m));
    m.webhook_url = it->dest->webhook_url;
    m.channel = m.webhook_url == NULL ? fo.channel : NULL;
    m.body = body;
    m.fallback = fallback;
    rc = krc_slack_send(n->sender, &m, &res, &e);
    atomic_fetch_add(&n->stats.rate_limited, res.rate_limited);
    if (rc < 0) {
        if (rc != KRC_ECANCELED) {
            atomic_fetch_add(&n->stats.failed, 1);
            krc_log(KRC_LOG_ERROR, "%s not delivered: %s", what, e.msg);
        }
        goto out;
    }
    krc_log(KRC_LOG_INFO, "%s posted%s (%d attempt%s)", what,
            res.used_fallback ? " as plain text" : "", res.attempts, res.attempts == 1 ? "" : "s");
    switch (it->kind) {
    case ITEM_ALERT: {
        atomic_fetch_add(&n->stats.alerts_sent, 1);
        if (n->web_api && res.ts[0] != '\0') {
            struct mute *mt;
            pthread_mutex_lock(&n->lock);
            mt = find_mute(n, it->pod_key, 1, krc_clock_now());
            snprintf(mt->ts, sizeof(mt->ts), "%s", res.ts);
            snprintf(mt->channel, sizeof(mt->channel), "%s", res.channel);
            if (n->o.recovered_after_s > 0 && n->n_recov < MAX_RECOVERY && it->rep->uid) {
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
                snprintf(rv->ts, sizeof(rv->ts), "%s", res.ts);
                snprintf(rv->channel, sizeof(rv->channel), "%s", res.channel);
                rv->dest = it->dest;
            }
            pthread_mutex_unlock(&n->lock);
        }
        break;
    }
    case ITEM_REPLY:
        atomic_fetch_add(&n->stats.replies_sent, 1);
        break;
    case ITEM_RECOVERED:
        atomic_fetch_add(&n->stats.recovered_sent, 1);
        break;
    default:
        break;
    }
    /* Web API: the full previous log goes into the thread as a file. */
    if (n->web_api && it->full_log != NULL && it->full_log_len > 0 &&
        (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
        const char *thread = it->kind == ITEM_ALERT ? res.ts : parent_ts;
        const char *chan = res.channel[0] ? res.channel : fo.channel;
        char fname[300];
        struct krc_buf red;
        const char *data = it->full_log;
        size_t len = it->full_log_len;
        krc_buf_init(&red, it->full_log_len * 2 + 1024);
        /* Always redact (built-in patterns at least): the file leaves the cluster. */
        if (krc_redact_apply(n->o.redactor, it->full_log, it->full_log_len, &red, NULL) >= 0) {
            data = krc_buf_str(&red);
            len = red.len;
        }
        snprintf(fname, sizeof(fname), "%s-%s-previous.log", it->rep->name ? it->rep->name : "pod",
                 it->diag->container ? it->diag->container : "container");
        krc_error_clear(&e);
        if (krc_slack_upload(n->sender, chan, thread, fname, "Previous container log", data, len,
                             &e) == 0) {
            atomic_fetch_add(&n->stats.files_uploaded, 1);
        } else {
            krc_log(KRC_LOG_WARN, "log file for %s not uploaded: %s", it->pod_key, e.msg);
        }
        krc_buf_cleanup(&red);
    }
out:
    krc_free(body);
    krc_free(fallback);
}

static void send_summary(struct krc_notifier *n, struct dest *d, char *body, long total)
{
    struct krc_slack_message m;
    struct krc_slack_result res;
    struct krc_error e;

    krc_error_clear(&e);
    memset(&m, 0, sizeof(m));
    m.webhook_url = d->webhook_url;
    m.channel = d->webhook_url == NULL ? d->channel : NULL;
    m.body = body;
    if (krc_slack_send(n->sender, &m, &res, &e) == 0) {
        atomic_fetch_add(&n->stats.summaries_sent, 1);
        krc_log(KRC_LOG_INFO, "storm summary of %ld restarts posted", total);
    } else if (e.code != KRC_ECANCELED) {
        atomic_fetch_add(&n->stats.failed, 1);
        krc_log(KRC_LOG_ERROR, "storm summary of %ld restarts not delivered: %s", total, e.msg);
    }
    atomic_fetch_add(&n->stats.rate_limited, res.rate_limited);
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
        } else if ((c = krc_report_container_get(&rep, rv.container, -1)) != NULL) {
            if (c->restart_count != rv.restart_count) {
                done = 1; /* it restarted again: that restart has its own alert */
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
            n->recov[i].next_check_s = now + 60;
            i++;
        }
        pthread_mutex_unlock(&n->lock);
    }
}

void krc_notifier_abort(struct krc_notifier *n)
{
    n->abort = 1;
    pthread_mutex_lock(&n->lock);
    pthread_cond_broadcast(&n->wake);
    pthread_mutex_unlock(&n->lock);
}

void krc_notifier_run(struct krc_notifier *n)
{
    int64_t last_recovery_check = 0;

    while (!n->abort) {
        struct item *it = NULL;
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
        } else if (n->head != NULL) {
            it = n->head;
            n->head = it->next;
            if (n->head == NULL) {
                n->tail = NULL;
            }
            n->n_items--;
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
            send_one(n, it);
            item_free(it);
        }
        if (!stopping && n->o.recovered_after_s > 0 && now_ms - last_recovery_check > 5000) {
            last_recovery_check = now_ms;
            check_recoveries(n);
        }
    }
    /* What could not be sent in time is reported, not silently dropped. */
    pthread_mutex_lock(&n->lock);
    if (n->n_items > 0) {
        krc_log(KRC_LOG_WARN, "shutdown: %zu Slack message(s) were not sent", n->n_items);
    }
    pthread_mutex_unlock(&n->lock);
}
