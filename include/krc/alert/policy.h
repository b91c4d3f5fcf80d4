/* Alert policy: pure functions from a restart, the configuration and the
 * time to a decision. Where a restart goes (routes, the alert-slack-channel
 * annotation/label, the defaults), whether it is held back (silences, the
 * a log-ignore pattern; the mute acts on incidents, alert/incident.h) and when a storm of restarts
 * to one destination starts and ends.
 *
 * The threads' parents and the storm guard need memory: it is kept in explicit state
 * objects the functions take, with the time passed in (no clock is read, no
 * I/O, no logging). The caller serialises access to a state object. Route and
 * silence patterns arrive compiled (config.c compiles them at (re)load). */
#ifndef KRC_POLICY_H
#define KRC_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "krc/config/config.h"

/* The settings the policy reads (borrowed). */
struct krc_policy {
    const char *webhook_url; /* default incoming webhook, NULL or "": none */
    const char *channel;     /* default channel, NULL or "": none */
    int web_api;             /* Web API mode: a destination is a channel */
    long mute_seconds;
    int storm_threshold; /* more restarts than this within storm_window_s start a storm (0: off) */
    long storm_window_s;
    long storm_delay_s; /* first summary this long after a storm starts */
    const struct krc_route *routes;
    size_t n_routes;
    const struct krc_destination *destinations; /* the named ones (config/destinations.h) */
    size_t n_destinations;
    const struct krc_silence *silences;
    size_t n_silences;
    /* text patterns (KRC_PATTERN_TEXT); a matching previous log suppresses the alert */
    const struct krc_pattern *log_ignore;
    size_t n_log_ignore;
};

/* What happens to a restart (the daemon records the name with it). */
enum krc_policy_decision {
    KRC_POLICY_ALERT = 0,      /* collect fully and post a new alert */
    KRC_POLICY_THREAD,         /* an incident's paced reply (in its thread) or update */
    KRC_POLICY_MUTED,          /* a repeat of an open incident, no message due (MUTE_SECONDS) */
    KRC_POLICY_GROUPED,        /* part of an alert storm: counted into the summary */
    KRC_POLICY_SILENCED,       /* a silence matches */
    KRC_POLICY_NO_DESTINATION, /* nothing configured: collect and diagnose, post nothing */
    /* the diagnosis says a field of the pod proves the restart intended (a restart rule, the
     * stop signal, ...): recorded, not paged (pageIntentionalRestarts pages them) */
    KRC_POLICY_INTENTIONAL,
};

const char *krc_policy_decision_name(enum krc_policy_decision d);

#define KRC_POLICY_MAX_NAMED 8
/* Every destination one restart can go to: the Slack target, the implicit Kubernetes Event
 * and the named ones. */
#define KRC_POLICY_MAX_ROUTED (2 + KRC_POLICY_MAX_NAMED)

/* Where a restart goes: strings borrowed from the policy or the restart. */
struct krc_policy_target {
    int slack;                          /* the Slack target below is set */
    const char *webhook_url;            /* NULL in Web API mode */
    const char *channel;                /* may be NULL for webhooks */
    char store_key[64];                 /* "webhook:default", "route:N", "api": never a URL */
    long route;                         /* the route whose webhook_url it is, -1: the default */
    size_t named[KRC_POLICY_MAX_NAMED]; /* indices into p->destinations */
    size_t n_named;
};

/* The destinations of a restart. Slack: the first matching route, then the
 * pod's own channel (slack_channel, may be NULL), then the defaults; a route
 * that names destinations and gives no webhook or channel sends nothing to
 * Slack. Named destinations: those of the matching route, or, when it names
 * none or no route matches, the destinations marked default. 1 and *ret, or
 * 0 when nothing is configured for it. */
int krc_policy_route(const struct krc_policy *p, const char *ns, const char *pod,
                     const char *container, const char *slack_channel,
                     struct krc_policy_target *ret);

/* 1 when some restart can go somewhere: the default webhook (the default
 * channel in Web API mode), a route's webhook (channel) or named
 * destinations, or a destination marked default. */
int krc_policy_has_destination(const struct krc_policy *p);

/* 1 when an active silence matches at unix time now_s. */
int krc_policy_silenced(const struct krc_policy *p, const char *ns, const char *pod,
                        const char *container, int64_t now_s);

/* 1 when a log-ignore pattern matches the log (len bytes, need not be
 * NUL-terminated). */
int krc_policy_log_ignored(const struct krc_policy *p, const char *log, size_t len);

/* --- thread parents ---------------------------------------------------------
 * The mute per pod became incidents (alert/incident.h, issue 27); its table
 * remains as the memory of the threads' parents by thread key. */

struct krc_policy_mute {
    char key[512];        /* the thread key: namespace/pod of an incident's first alert */
    int64_t last_alert_s; /* unix seconds: when it was remembered */
    char ts[64];          /* Web API: the thread parent ("" until posted) */
    char channel[64];     /* Web API: the parent's channel id */
};

/* A bounded table: when full, the entry remembered longest ago is forgotten. */
struct krc_policy_mutes {
    struct krc_policy_mute *v;
    size_t n;
    size_t cap;
};

/* KRC_ENOMEM; free with krc_policy_mutes_cleanup (also after a failure). */
int krc_policy_mutes_init(struct krc_policy_mutes *m, size_t cap);
void krc_policy_mutes_cleanup(struct krc_policy_mutes *m);

/* The entry of `key`; with `create`, a new one (last alerted now_s) when
 * there is none. NULL when absent and not created. */
struct krc_policy_mute *krc_policy_mute_find(struct krc_policy_mutes *m, const char *key,
                                             int create, int64_t now_s);

/* --- storm guard per destination ------------------------------------------- */

#define KRC_POLICY_STORM_ARRIVALS 256
#define KRC_POLICY_STORM_SENT 16

/* Times are monotonic milliseconds. Zero-initialise. */
struct krc_policy_storm {
    int64_t arrivals[KRC_POLICY_STORM_ARRIVALS]; /* ring of recent restarts */
    size_t n_arrivals;
    size_t arrivals_head;
    int active;                /* a storm is on */
    int64_t next_summary_ms;   /* when the next summary is due */
    int64_t last_arrival_ms;   /* the last restart */
    int64_t summary_since_ms;  /* start of the current summary's window */
    long alerted_before_storm; /* alerts posted in the storm's window before it began */
    int64_t sent_ms[KRC_POLICY_STORM_SENT]; /* when the last alerts were posted */
    size_t n_sent;
    size_t sent_next; /* the ring's next slot */
};

/* Count a restart at now_ms. 1 when it starts a storm (the caller withdraws
 * the destination's unsent alerts), else 0. */
int krc_policy_storm_arrival(const struct krc_policy *p, struct krc_policy_storm *s,
                             int64_t now_ms);

/* An alert to this destination was posted at now_ms (counted into the next
 * storm's "already alerted"). */
void krc_policy_storm_sent(struct krc_policy_storm *s, int64_t now_ms);

/* With `grouped` restarts waiting for the summary: 1 when the summary is due
 * (at once when `stopping`). */
int krc_policy_storm_summary_due(const struct krc_policy_storm *s, long grouped, int stopping,
                                 int64_t now_ms);

/* A summary was taken at now_ms: the next one is due one window later. */
void krc_policy_storm_summarised(const struct krc_policy *p, struct krc_policy_storm *s,
                                 int64_t now_ms);

/* 1 (and the storm ends) when nothing is grouped and a whole window passed
 * without a restart. */
int krc_policy_storm_over(const struct krc_policy *p, struct krc_policy_storm *s, long grouped,
                          int64_t now_ms);

#endif
