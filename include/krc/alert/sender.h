/* The alert sender: the object that holds the alert pipeline's settings and
 * memory, and its three stages, each entered once per restart by a
 * pipeline worker (daemon/pipeline.h):
 *
 *   route   (alert/route.h)   before collection: destinations, decision,
 *                             mute, storm guard, silences -> a plan
 *   render  (alert/render.h)  pure: plan + report + diagnosis -> the messages
 *                             (the destinations' formats, alert/sink.h)
 *   deliver (alert/deliver.h) the recorded messages -> the per-destination
 *                             lanes, the outbox state machine, retries,
 *                             resume, storm summaries, incidents' ends
 *
 * Restarts are routed before any collection, so a storm or a muted pod
 * costs no log fetch; nothing held back is lost: it is counted, logged and
 * recorded by the store with its decision.
 *
 * Threads: pipeline workers call krc_route_restart_in(), krc_render_restart()
 * and krc_deliver_restart(); the watch threads krc_sender_restart_seen()
 * and krc_sender_pod_event(); one thread runs krc_sender_run(), which runs
 * one delivery thread per destination (alert/sink.h). */
#ifndef KRC_SENDER_H
#define KRC_SENDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/alert/deliver.h"
#include "krc/alert/policy.h"
#include "krc/alert/render.h"
#include "krc/alert/route.h"
#include "krc/alert/sink.h"
#include "krc/config/config.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/detect/filter.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/redact.h"
#include "krc/model/report.h"
#include "krc/detect/restart.h"
#include "krc/store/store.h"

struct krc_sender_options {
    const char *cluster_name;
    const char *webhook_url; /* default incoming webhook */
    const char *channel;     /* default channel (legacy webhooks, Web API) */
    const char *username;
    const char *icon_emoji;
    const char *bot_token; /* Web API mode when set */
    const char *api_url;   /* Web API base URL */
    const char *ca_file;   /* extra CA for Slack (tests) */
    /* The Go tool's Slack settings as a destination (the configuration's
     * slack_env, config/destinations.h); NULL: made from webhook_url,
     * channel, bot_token and api_url above. Borrowed. */
    const struct krc_destination *slack_env;
    long mute_seconds;
    int storm_threshold; /* more restarts than this within storm_window_s start a storm */
    long storm_window_s;
    long storm_delay_s; /* first summary this long after a storm starts */
    /* an incident ends once its latest pod has run ready this long, as the watch saw it
     * (krc_sender_pod_event), with a resolved message; 0: when first seen ready, without */
    long recovered_after_s;
    /* incidents (alert/incident.h): with mute_seconds > 0, a repeat gets at most one reply
     * per incident_reply_interval_s in the thread (destinations with threads) and one
     * update per incident_update_interval_s (destinations without) */
    long incident_reply_interval_s;
    long incident_update_interval_s;
    int max_log_lines;
    const struct krc_route *routes;
    size_t n_routes;
    /* named destinations (config/destinations.h), each with its own lane */
    const struct krc_destination *destinations;
    size_t n_destinations;
    const struct krc_silence *silences;
    size_t n_silences;
    /* text patterns (KRC_PATTERN_TEXT); a matching previous log suppresses the alert */
    const struct krc_pattern *log_ignore;
    size_t n_log_ignore;
    const struct krc_redactor *redactor; /* may be NULL */
    const char *store_path; /* the outbox: the sender opens its own connection; NULL: none */
    /* how every connection of the sender to store_path is opened (cluster,
     * password file: krc_store_open_with); borrowed, may be NULL */
    const struct krc_store_options *store_options;
    unsigned store_flags; /* krc_store_open_with's flags (the daemon: KRC_STORE_DEFER_CONNECT) */
    /* called by a delivery thread after an alert or reply was accepted by Slack, with
     * the seconds since the restart was detected (for the latency histogram) */
    void (*on_delivered)(double seconds, void *userdata);
    /* called by a delivery thread after Slack accepted the alert or reply
     * of a restart (a message resumed from the outbox too, when its restart
     * is stored): leader election publishes it as handled only then. May be
     * NULL; gets on_delivered_userdata. Both callbacks run in the delivery
     * threads, one per destination, so they must be thread-safe. */
    void (*on_posted)(const struct krc_restart_ident *id, void *userdata);
    void *on_delivered_userdata;
    const atomic_int *cancel;
    /* The sink of slack_env's lanes (alert/sink.h); NULL: its kind's (the
     * Slack Web API when bot_token is set, else Slack incoming webhooks). */
    const struct krc_sink_ops *sink_ops;
    /* kubernetesEvents: every restart also goes to a Kubernetes Event
     * destination (type kubernetes-event): the declared ones in
     * `destinations`, routed like any other, or, when none is declared, an
     * implicit one named KRC_SENDER_KUBE_EVENT_NAME that every restart goes
     * to whatever the routes. 0: a declared one is an error (start-up). */
    int kubernetes_events;
    /* the Kubernetes Event sink's client (borrowed) */
    const struct krc_kube_auth_config *kube_auth;
    struct krc_token_source *kube_tokens;
};

/* The implicit Kubernetes Event destination's name (outbox key
 * "dest:kubernetes-event"). */
#define KRC_SENDER_KUBE_EVENT_NAME "kubernetes-event"

struct krc_sender_stats {
    atomic_llong alerts_sent;
    atomic_llong replies_sent;
    atomic_llong summaries_sent;
    atomic_llong recovered_sent;
    atomic_llong failed;
    atomic_llong muted;
    atomic_llong grouped;
    atomic_llong silenced;
    atomic_llong log_ignored;
    atomic_llong rate_limited; /* 429s from Slack */
    atomic_llong files_uploaded;
};

/* Per destination (the Go tool's Slack settings are one, "slack"; each
 * declared one; the implicit Kubernetes Event): what /metrics shows. The
 * failure reasons, in this order (krc_destination_failures_total{reason}). */
#define KRC_DEST_N_REASONS 8
extern const char *const krc_dest_failure_reasons[KRC_DEST_N_REASONS + 1];
/* Kubernetes Events' results (krc_kube_events_total{result}). */
#define KRC_KUBE_EVENT_N_RESULTS 3
extern const char *const krc_kube_event_results[KRC_KUBE_EVENT_N_RESULTS + 1];

struct krc_sender_dest_stat {
    char destination[48];     /* its name: "slack", "oncall", "kubernetes-event" */
    char kind[32];            /* "slack-webhook", ... */
    int is_event;             /* a Kubernetes Event destination: counted in events[] */
    long long last_success_s; /* unix seconds, 0: never */
    long long last_failure_s;
    long long failures[KRC_DEST_N_REASONS];
    long long events[KRC_KUBE_EVENT_N_RESULTS]; /* created, already_exists, failed */
};

struct krc_sender;

/* Options are copied (strings and arrays stay borrowed: keep them alive).
 * Caller frees with krc_sender_free. */
struct krc_sender *krc_sender_new(const struct krc_sender_options *o, struct krc_error *err);
void krc_sender_free(struct krc_sender *n);
const struct krc_sender_stats *krc_sender_stats(const struct krc_sender *n);
/* SIGHUP: take the reloadable settings of o (cluster name, default channel,
 * user name, icon, mute, storm guard, log lines, routes, silences); the rest
 * of o is ignored. The strings and arrays o points to must outlive n (the
 * daemon keeps every configuration it loaded until it exits), because
 * destinations already in use keep pointing into them. */
void krc_sender_reconfigure(struct krc_sender *n, const struct krc_sender_options *o);
/* A snapshot of the destinations' outcomes into out[max]; returns how many
 * there are (the set is fixed when n is made). Thread-safe. */
size_t krc_sender_dest_stats(struct krc_sender *n, struct krc_sender_dest_stat *out, size_t max);
/* One info line per destination, as krc run starts: its name, kind and the
 * host it posts to (never the path, query or token of a URL). */
void krc_sender_log_destinations(const struct krc_sender *n);

/* The open incidents of `store` (krc_store_incidents_open), at start-up and
 * at a take-over, before the watch starts: a repeat of one continues it (its
 * thread, its count), its awaited pod is watched for the end, and its end
 * sends one resolved message to each destination its first alert went to.
 * Returns how many were loaded, or < 0 when the store could not be read
 * (logged). */
int krc_sender_load_incidents(struct krc_sender *n, struct krc_store *store);

/* Open incidents held (tests, metrics). */
size_t krc_sender_incidents_open(struct krc_sender *n);

/* 1 when a restart can be posted somewhere (the implicit Kubernetes Event
 * does not count). */
int krc_sender_has_destination(const struct krc_sender *n);

#endif
