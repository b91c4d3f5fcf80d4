/* What each destination's deliveries came to (alert/sender.h:
 * krc_sender_dest_stats), for /metrics; and the destinations said at
 * start. */
#include <stdio.h>
#include <string.h>

#include "krc/alert/dest.h"
#include "krc/alert/sender.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/url.h"
#include "sender_int.h"

const char *const krc_dest_failure_reasons[KRC_DEST_N_REASONS + 1] = {
    "http_4xx", "http_5xx",       "rate_limited", "timeout", "connect",
    "tls",      "invalid_answer", "other",        NULL};

const char *const krc_kube_event_results[KRC_KUBE_EVENT_N_RESULTS + 1] = {
    "created", "already_exists", "failed", NULL};

enum { R_4XX, R_5XX, R_RATE, R_TIMEOUT, R_CONNECT, R_TLS, R_INVALID, R_OTHER };

static struct dest_stat *stat_of(struct krc_sender *n, const struct krc_destination *named)
{
    for (size_t i = 0; i < n->n_dstats; i++) {
        if (n->dstats[i].named == named) {
            return &n->dstats[i];
        }
    }
    return NULL;
}

/* The reason of a failed send (rc < 0). */
static int reason_of(int rc, const struct krc_sink_result *res, const struct krc_error *e)
{
    const char *m = e != NULL ? e->msg : "";

    if (rc == KRC_ERATELIMIT || res->http_status == 429) {
        return R_RATE;
    }
    if (res->http_status >= 500) {
        return R_5XX;
    }
    if (res->http_status >= 400) {
        return R_4XX;
    }
    if (res->http_status >= 200 && res->http_status < 300) {
        /* a refusal in a 2xx answer (Slack's Web API: ok:false), or no reading it */
        return strcmp(res->error, "unreadable response") == 0 ? R_INVALID : R_4XX;
    }
    if (rc == KRC_ETIMEOUT) {
        return R_TIMEOUT;
    }
    if (rc == KRC_EIO) {
        return strstr(m, "SSL") != NULL || strstr(m, "TLS") != NULL ||
                       strstr(m, "certificate") != NULL
                   ? R_TLS
                   : R_CONNECT;
    }
    if (rc == KRC_EPARSE) {
        return R_INVALID;
    }
    return R_OTHER;
}

void krc_sender_count_outcome(struct krc_sender *n, const struct krc_destination *named, int rc,
                              const struct krc_sink_result *res, const struct krc_error *e)
{
    struct dest_stat *st = stat_of(n, named);
    long long now = (long long)krc_clock_now();

    if (st == NULL || rc == KRC_ECANCELED) {
        return;
    }
    if (rc == 0) {
        atomic_store(&st->last_success_s, now);
        if (krc_dest_is(named, "kubernetes-event")) {
            /* a 409 AlreadyExists: the Event is there already (kube_event.c) */
            atomic_fetch_add(&st->events[res->already_exists ? 1 : 0], 1);
        }
        return;
    }
    atomic_store(&st->last_failure_s, now);
    atomic_fetch_add(&st->failures[reason_of(rc, res, e)], 1);
    if (krc_dest_is(named, "kubernetes-event")) {
        atomic_fetch_add(&st->events[2], 1);
    }
}

void krc_sender_stats_register(struct krc_sender *n, const struct krc_destination *named)
{
    if (named == NULL || named->kind == NULL || n->n_dstats == MAX_DEST_STATS ||
        stat_of(n, named) != NULL) {
        return;
    }
    memset(&n->dstats[n->n_dstats], 0, sizeof(n->dstats[0]));
    n->dstats[n->n_dstats++].named = named;
}

size_t krc_sender_dest_stats(struct krc_sender *n, struct krc_sender_dest_stat *out, size_t max)
{
    for (size_t i = 0; i < n->n_dstats && i < max; i++) {
        const struct dest_stat *st = &n->dstats[i];
        struct krc_sender_dest_stat *o = &out[i];
        memset(o, 0, sizeof(*o));
        snprintf(o->destination, sizeof(o->destination), "%s", st->named->name);
        snprintf(o->kind, sizeof(o->kind), "%s", st->named->kind->name);
        o->is_event = krc_dest_is(st->named, "kubernetes-event");
        o->last_success_s = atomic_load(&st->last_success_s);
        o->last_failure_s = atomic_load(&st->last_failure_s);
        for (int r = 0; r < KRC_DEST_N_REASONS; r++) {
            o->failures[r] = atomic_load(&st->failures[r]);
        }
        for (int r = 0; r < KRC_KUBE_EVENT_N_RESULTS; r++) {
            o->events[r] = atomic_load(&st->events[r]);
        }
    }
    return n->n_dstats;
}

/* "hooks.slack.com" of a URL, or "(none)". */
static void host_of(const char *url, char *out, size_t outsz)
{
    struct krc_url_parts u;

    if (url == NULL || krc_url_split(url, &u) != KRC_URL_OK) {
        snprintf(out, outsz, "(none)");
        return;
    }
    if (u.port != 0) {
        snprintf(out, outsz, "%.*s:%ld", (int)u.host_len, u.host, u.port);
    } else {
        snprintf(out, outsz, "%.*s", (int)u.host_len, u.host);
    }
}

static void log_one(const struct krc_destination *d, const char *what, const char *url)
{
    char host[300];

    host_of(url, host, sizeof(host));
    krc_log(KRC_LOG_INFO, "destination %s (%s)%s%s: posts to host %s%s", d->name, d->kind->name,
            what != NULL ? ", " : "", what != NULL ? what : "", host,
            d->is_default ? " (default: gets the restarts no route matches)" : "");
}

void krc_sender_log_destinations(const struct krc_sender *n)
{
    const struct krc_destination *env = n->env;

    if (env->kind != NULL && krc_dest_is(env, "slack-api") && env->secret != NULL) {
        log_one(env, "SLACK_BOT_TOKEN",
                env->api_url != NULL ? env->api_url : "https://slack.com/api");
    } else if (env->kind != NULL && env->url != NULL) {
        log_one(env, "SLACK_WEBHOOK_URL", env->url);
    }
    for (size_t i = 0; env->kind != NULL && !krc_dest_is(env, "slack-api") && i < n->o.n_routes;
         i++) {
        char what[64];
        if (n->o.routes[i].webhook_url == NULL) {
            continue;
        }
        snprintf(what, sizeof(what), "routes[%zu] webhook", i);
        log_one(env, what, n->o.routes[i].webhook_url);
    }
    for (size_t i = 0; i < n->n_fixed; i++) {
        const struct krc_destination *d = &n->fixed[i];
        if (krc_dest_is(d, "kubernetes-event")) {
            krc_log(KRC_LOG_INFO, "destination %s (kubernetes-event): an Event on the pod%s",
                    d->name, d->is_default ? " (default: gets the restarts no route matches)" : "");
        } else if (krc_dest_is(d, "slack-api")) {
            log_one(d, NULL, d->api_url != NULL ? d->api_url : "https://slack.com/api");
        } else {
            log_one(d, NULL, d->url);
        }
    }
    if (n->has_implicit_event) {
        krc_log(KRC_LOG_INFO,
                "destination %s (kubernetes-event): an Event on the pod (kubernetesEvents: true)",
                n->implicit_event.name);
    }
}
