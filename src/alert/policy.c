#include "krc/alert/policy.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/mem.h"

const char *krc_policy_decision_name(enum krc_policy_decision d)
{
    switch (d) {
    case KRC_POLICY_ALERT:
        return "alert";
    case KRC_POLICY_THREAD:
        return "thread_reply";
    case KRC_POLICY_MUTED:
        return "muted";
    case KRC_POLICY_GROUPED:
        return "grouped";
    case KRC_POLICY_SILENCED:
        return "silenced";
    case KRC_POLICY_NO_DESTINATION:
        return "not_posted";
    case KRC_POLICY_INTENTIONAL:
        return "intentional";
    }
    return "unknown";
}

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* The named destinations of a restart (matched: its route, or NULL). */
static void named_targets(const struct krc_policy *p, const struct krc_route *matched,
                          struct krc_policy_target *t)
{
    if (matched != NULL && matched->n_dests > 0) {
        for (size_t i = 0; i < matched->n_dests && t->n_named < KRC_POLICY_MAX_NAMED; i++) {
            if (matched->dests[i].index < p->n_destinations) {
                t->named[t->n_named++] = matched->dests[i].index;
            }
        }
        return;
    }
    for (size_t i = 0; i < p->n_destinations && t->n_named < KRC_POLICY_MAX_NAMED; i++) {
        if (p->destinations[i].is_default) {
            t->named[t->n_named++] = i;
        }
    }
}

int krc_policy_route(const struct krc_policy *p, const char *ns, const char *pod,
                     const char *container, const char *slack_channel,
                     struct krc_policy_target *ret)
{
    const char *webhook = p->webhook_url;
    const char *channel = p->channel;
    char store_key[64] = "webhook:default";
    const struct krc_route *matched = NULL;
    long route = -1;
    int slack = 1;

    for (size_t i = 0; i < p->n_routes; i++) {
        const struct krc_route *rt = &p->routes[i];
        if (krc_pattern_match_pod(&rt->namespace, &rt->pod, &rt->container, ns, pod, container)) {
            matched = rt;
            if (rt->webhook_url != NULL) {
                webhook = rt->webhook_url;
                snprintf(store_key, sizeof(store_key), "route:%zu", i);
                route = (long)i;
            }
            if (rt->channel != NULL) {
                channel = rt->channel;
            }
            /* a route that names destinations only sends nothing to Slack */
            slack = rt->n_dests == 0 || rt->webhook_url != NULL || rt->channel != NULL;
            break; /* first match wins */
        }
    }
    /* The Go tool's per-pod channel (annotation, else label). App webhooks
     * are bound to one channel and ignore it; legacy webhooks and the Web API
     * honour it. */
    if (nonempty(slack_channel)) {
        channel = slack_channel;
    }
    webhook = nonempty(webhook) ? webhook : NULL;
    channel = nonempty(channel) ? channel : NULL;
    memset(ret, 0, sizeof(*ret));
    named_targets(p, matched, ret);
    if (slack && !(p->web_api ? channel == NULL : webhook == NULL)) {
        ret->slack = 1;
        ret->webhook_url = p->web_api ? NULL : webhook;
        ret->channel = channel;
        ret->route = route;
        snprintf(ret->store_key, sizeof(ret->store_key), "%s", p->web_api ? "api" : store_key);
    }
    return ret->slack || ret->n_named > 0;
}

int krc_policy_has_destination(const struct krc_policy *p)
{
    if (p->web_api ? nonempty(p->channel) : nonempty(p->webhook_url)) {
        return 1;
    }
    for (size_t i = 0; i < p->n_routes; i++) {
        if ((p->web_api && p->routes[i].channel != NULL) ||
            (!p->web_api && p->routes[i].webhook_url != NULL) || p->routes[i].n_dests > 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < p->n_destinations; i++) {
        if (p->destinations[i].is_default) {
            return 1;
        }
    }
    return 0;
}

static int in_daily_window(const struct krc_silence *s, int64_t now_s)
{
    int minute = (int)((now_s % 86400 + 86400) % 86400 / 60);

    if (s->daily_from < s->daily_to) {
        return minute >= s->daily_from && minute < s->daily_to;
    }
    return minute >= s->daily_from || minute < s->daily_to; /* wraps past midnight */
}

int krc_policy_silenced(const struct krc_policy *p, const char *ns, const char *pod,
                        const char *container, int64_t now_s)
{
    for (size_t i = 0; i < p->n_silences; i++) {
        const struct krc_silence *s = &p->silences[i];
        if ((s->start != 0 && now_s < s->start) || (s->end != 0 && now_s >= s->end)) {
            continue;
        }
        if (s->daily_from != s->daily_to && !in_daily_window(s, now_s)) {
            continue;
        }
        if (krc_pattern_match_pod(&s->namespace, &s->pod, &s->container, ns, pod, container)) {
            return 1;
        }
    }
    return 0;
}

int krc_policy_log_ignored(const struct krc_policy *p, const char *log, size_t len)
{
    char *text;
    int hit = 0;

    if (p->n_log_ignore == 0 || log == NULL || len == 0) {
        return 0;
    }
    text = krc_strndup(log, len);
    if (text == NULL) {
        return 0; /* out of memory: the alert is not suppressed */
    }
    for (size_t i = 0; i < p->n_log_ignore && !hit; i++) {
        hit = krc_pattern_match(&p->log_ignore[i], text);
    }
    krc_free(text);
    return hit;
}

/* --- mute per pod ---------------------------------------------------------- */

int krc_policy_mutes_init(struct krc_policy_mutes *m, size_t cap)
{
    memset(m, 0, sizeof(*m));
    m->v = krc_calloc(cap, sizeof(*m->v));
    if (m->v == NULL) {
        return KRC_ENOMEM;
    }
    m->cap = cap;
    return 0;
}

void krc_policy_mutes_cleanup(struct krc_policy_mutes *m)
{
    krc_free(m->v);
    memset(m, 0, sizeof(*m));
}

struct krc_policy_mute *krc_policy_mute_find(struct krc_policy_mutes *m, const char *key,
                                             int create, int64_t now_s)
{
    struct krc_policy_mute *oldest = NULL;

    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->v[i].key, key) == 0) {
            return &m->v[i];
        }
        if (oldest == NULL || m->v[i].last_alert_s < oldest->last_alert_s) {
            oldest = &m->v[i];
        }
    }
    if (!create || m->cap == 0) {
        return NULL;
    }
    if (m->n < m->cap) {
        oldest = &m->v[m->n++];
    }
    memset(oldest, 0, sizeof(*oldest));
    snprintf(oldest->key, sizeof(oldest->key), "%s", key);
    oldest->last_alert_s = now_s;
    return oldest;
}

/* --- storm guard per destination ------------------------------------------- */

int krc_policy_storm_arrival(const struct krc_policy *p, struct krc_policy_storm *s, int64_t now_ms)
{
    int64_t window_ms = p->storm_window_s * 1000;
    size_t cap = KRC_POLICY_STORM_ARRIVALS;
    size_t in_window = 0;

    s->arrivals[(s->arrivals_head + s->n_arrivals) % cap] = now_ms;
    if (s->n_arrivals < cap) {
        s->n_arrivals++;
    } else {
        s->arrivals_head = (s->arrivals_head + 1) % cap;
    }
    for (size_t i = 0; i < s->n_arrivals; i++) {
        if (now_ms - s->arrivals[(s->arrivals_head + i) % cap] <= window_ms) {
            in_window++;
        }
    }
    s->last_arrival_ms = now_ms;
    if (s->active || p->storm_threshold <= 0 || (long)in_window <= p->storm_threshold) {
        return 0;
    }
    s->active = 1;
    s->alerted_before_storm = 0;
    for (size_t i = 0; i < s->n_sent; i++) {
        if (now_ms - s->sent_ms[i] <= window_ms) {
            s->alerted_before_storm++;
        }
    }
    s->summary_since_ms = now_ms - window_ms < s->arrivals[s->arrivals_head]
                              ? s->arrivals[s->arrivals_head]
                              : now_ms - window_ms;
    s->next_summary_ms = now_ms + p->storm_delay_s * 1000;
    return 1;
}

void krc_policy_storm_sent(struct krc_policy_storm *s, int64_t now_ms)
{
    s->sent_ms[s->sent_next] = now_ms;
    s->sent_next = (s->sent_next + 1) % KRC_POLICY_STORM_SENT;
    s->n_sent = s->n_sent < KRC_POLICY_STORM_SENT ? s->n_sent + 1 : KRC_POLICY_STORM_SENT;
    if (s->active) {
        s->alerted_before_storm++; /* it was already being sent when the storm began */
    }
}

int krc_policy_storm_summary_due(const struct krc_policy_storm *s, long grouped, int stopping,
                                 int64_t now_ms)
{
    return s->active && grouped > 0 && (stopping || now_ms >= s->next_summary_ms);
}

void krc_policy_storm_summarised(const struct krc_policy *p, struct krc_policy_storm *s,
                                 int64_t now_ms)
{
    s->alerted_before_storm = 0;
    s->summary_since_ms = now_ms;
    s->next_summary_ms = now_ms + p->storm_window_s * 1000;
}

int krc_policy_storm_over(const struct krc_policy *p, struct krc_policy_storm *s, long grouped,
                          int64_t now_ms)
{
    if (!s->active || grouped > 0 || now_ms - s->last_arrival_ms <= p->storm_window_s * 1000) {
        return 0;
    }
    s->active = 0;
    return 1;
}
