/* The sender's set-up and reload (include/krc/alert/sender.h); its stages
 * are route.c, render.c and deliver.c. */
#include "krc/alert/sender.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/dest.h"
#include "krc/alert/policy.h"
#include "krc/alert/recovery.h"
#include "krc/alert/sink.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "sender_int.h"

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

/* The policy's view of the options. Caller holds the lock (or owns n). */
static void policy_from(struct krc_sender *n)
{
    struct krc_policy *p = &n->pol;

    memset(p, 0, sizeof(*p));
    p->webhook_url = n->env->url; /* the Go tool's settings' destination */
    p->channel = n->o.channel;
    p->web_api = n->threads;
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
    if (o->slack_env != NULL && o->slack_env->kind != NULL) {
        n->env = o->slack_env;
    } else {
        /* made here as the configuration loader makes it (an embedder, a test) */
        krc_dest_registry_ensure();
        krc_dest_slack_env(o->webhook_url, o->channel, o->bot_token, o->api_url, &n->own_env);
        n->env = &n->own_env;
    }
    n->threads = krc_dest_threads(n->env);
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
    /* incidents end from what the watch saw of their latest pod, whatever the
     * destinations (recoveredAfter 0 too: then when it is first seen ready) */
    n->recovery = krc_recovery_new(MAX_RECOVERY);
    krc_incidents_init(&n->incidents, MAX_INCIDENTS);
    if (krc_policy_mutes_init(&n->mutes, MAX_MUTES) < 0 || n->recovery == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        krc_sender_free(n);
        return NULL;
    }
    if (n->env->url != NULL) {
        krc_log_add_secret(n->env->url);
    }
    for (size_t i = 0; i < o->n_routes; i++) {
        if (o->routes[i].webhook_url != NULL) {
            krc_log_add_secret(o->routes[i].webhook_url);
        }
    }
    if (n->env->secret != NULL) {
        krc_log_add_secret(n->env->secret);
    }
    /* the destinations whose outcomes /metrics shows (the set is fixed) */
    if (n->env->url != NULL || n->env->secret != NULL || o->n_routes > 0) {
        krc_sender_stats_register(n, n->env);
    }
    for (size_t i = 0; i < n->n_fixed; i++) {
        krc_sender_stats_register(n, &n->fixed[i]);
    }
    if (n->has_implicit_event) {
        krc_sender_stats_register(n, &n->implicit_event);
    }
    n->ops = o->sink_ops != NULL ? o->sink_ops : krc_dest_ops(n->env);
    so = &n->sink_options;
    krc_sink_options_defaults(so);
    so->ca_file = o->ca_file;
    so->cancel = &n->abort;
    so->cancel_transfer = &n->abort_hard;
    so->kube_auth = o->kube_auth;
    so->kube_tokens = o->kube_tokens;
    return n;
}

void krc_sender_free(struct krc_sender *n)
{
    if (n == NULL) {
        return;
    }
    krc_deliver_lanes_free(n);
    krc_policy_mutes_cleanup(&n->mutes);
    krc_incidents_cleanup(&n->incidents);
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
    /* the implicit Kubernetes Event is not counted: it is not posted */
    return krc_policy_has_destination(&n->pol);
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
    n->o.incident_reply_interval_s = o->incident_reply_interval_s;
    n->o.incident_update_interval_s = o->incident_update_interval_s;
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
