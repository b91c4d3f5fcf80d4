/* The route stage of the alert pipeline: what happens to one restart,
 * asked once per restart, before anything is collected.
 *
 * krc_route_restart_in() answers, from the alert policy (alert/policy.h) and
 * the sender's memory of it (the mute per pod, the storm guard per
 * destination): the destinations of the restart, the decision (alert,
 * thread reply, muted, grouped into a storm, silenced, no destination),
 * which destinations are in a storm, what to collect (everything, the log
 * file too, or only what the watch saw) and the settings the render stage
 * formats with. The plan is a value: render (alert/render.h) and deliver
 * (alert/deliver.h) read it and never ask the routing again.
 *
 * krc_route_ignored() is the rule that keeps a restart out before it is
 * even queued (the Go tool's ignore settings); the watch thread asks it.
 * Every other "is this restart held back" answer is in the plan (silences,
 * mute, storm) or in render (a log-ignore pattern, which needs the log).
 * The detection-level filters (namespaces, pod names) stay in
 * detect/filter.h; "handled already" (by this replica, a predecessor or an
 * earlier process) is the pipeline's check against the history and the
 * Lease, not a rule. */
#ifndef KRC_ALERT_ROUTE_H
#define KRC_ALERT_ROUTE_H

#include <stddef.h>

#include "krc/alert/incident.h"
#include "krc/alert/policy.h"
#include "krc/alert/sink.h"
#include "krc/alert/format.h"
#include "krc/config/config.h"
#include "krc/detect/pod_state.h"
#include "krc/detect/restart.h"
#include "krc/util/pattern.h"

struct krc_sender;
struct krc_sender_message; /* alert/render.h */

/* One destination of a restart, as the plan names it. */
struct krc_plan_dest {
    void *dest;                     /* the sender's destination (private to the sender) */
    const struct krc_sink_ops *ops; /* its formats (alert/sink.h) */
    char store_key[64];             /* "webhook:default", "route:N", "api", "dest:NAME" */
    const char *channel;            /* NULL when none (the sender's, valid while it lives) */
    const char *name;               /* shown in logs ("alert ... to NAME"); NULL: not shown */
    int is_event;                   /* a Kubernetes Event (no thread, no summary) */
    int storming;                   /* in a storm: counted into its summary, no message */
    /* an incident's repeat: no message to it now (paced, alert/incident.h; PagerDuty gets
     * none: its incident stays triggered) */
    int held;
    int reply; /* with decision KRC_POLICY_THREAD: a reply in the thread (it posts threads) */
};

struct krc_route_plan {
    enum krc_policy_decision decision;
    int collect;        /* collect everything (alert, thread reply, no destination) */
    int wants_full_log; /* and the previous log as a file (Web API threads) */
    size_t n_dests;     /* 0: nothing is configured for the restart */
    struct krc_plan_dest dests[KRC_POLICY_MAX_ROUTED];
    /* the formats' settings when the restart was routed (render adds the
     * destination's channel and the time); strings borrowed from the
     * configuration, which the daemon keeps until it exits */
    struct krc_alert_options format;
    /* log-ignore patterns (KRC_PATTERN_TEXT): render holds back an alert
     * whose previous log matches one */
    const struct krc_pattern *log_ignore;
    size_t n_log_ignore;
    /* pageIntentionalRestarts: render pages a restart whose diagnosis is
     * intentional like any other. 0 (as krc_route_restart_in leaves it): render
     * holds it back (KRC_POLICY_INTENTIONAL); the caller sets it. */
    int page_intentional;
    /* The restart's incident (alert/incident.h): its handle (0: none), whether the restart
     * repeats it (decision KRC_POLICY_THREAD: a paced reply or update, KRC_POLICY_MUTED:
     * counted only) and the thread its messages go to ("": namespace/pod). The caller sets
     * the headlines a paced message starts with (krc_route_incident_headlines; NULL: none),
     * kept alive until render. */
    uint64_t incident;
    int repeat;
    char thread_key[320];
    /* a paced repeat (KRC_POLICY_THREAD): what the route decided under the sender's lock, the
     * one answer the later stages read: a reply goes into the thread (replied) and an update
     * to a destination without threads (updated), and the restarts since the incident's last
     * reply / update before this one, which its headlines count */
    int replied;
    int updated;
    long since_last_reply;
    long since_last_update;
    const char *headline_reply;  /* for replies in the thread */
    const char *headline_update; /* for updates to destinations without threads */
};

/* What the pipeline knows of a restart's incident before routing it (after the cheap
 * diagnosis: what the watch saw, a repeat's carried cause). */
struct krc_route_incident {
    const char *workload_kind; /* the report's workload; NULL: a bare pod (kind "Pod", the pod) */
    const char *workload_name;
    enum krc_cause cause;
};

/* Route one restart: fills *plan and returns its decision. Counts muted and silenced
 * restarts, starts storms (and withdraws the queued alerts of a destination whose storm this
 * restart starts). With the restart's incident: the first restart of an incident (none open
 * for its namespace, workload, container and cause) opens it and is routed as an alert; a
 * repeat is counted into it and, with muteSeconds > 0, is muted except for the
 * destinations a message is due to (one reply per incidentReplyInterval in the thread of a
 * destination with threads, one update per incidentUpdateInterval to one without, none to a
 * kind that takes no incident updates, PagerDuty: struct krc_dest_kind.no_incident_updates):
 * decision KRC_POLICY_THREAD with the others held, or KRC_POLICY_MUTED. A repeat is never a
 * storm arrival. inc NULL: the restart's pod is its workload, its cause unknown.
 * Thread-safe. */
enum krc_policy_decision krc_route_restart_in(struct krc_sender *n, const struct krc_restart *r,
                                              const struct krc_route_incident *inc,
                                              struct krc_route_plan *plan);

/* The restart routed with plan repeats an incident whose first alert's diagnosis the
 * cheap one carries: the first failure of plan's incident (1 and *ret), 0 when there is
 * no open incident of that key or its first diagnosis is not known yet. Thread-safe. */
int krc_route_incident_first(struct krc_sender *n, const char *ns, const char *kind,
                             const char *name, const char *container,
                             struct krc_diagnosis_history *ret);

/* The first words of a paced message of plan's incident (a reply, an update): the count
 * since the last message of that kind and what differs from the first failure (this
 * restart's report and diagnosis). Thread-safe. */
void krc_route_incident_headlines(struct krc_sender *n, const struct krc_route_plan *plan,
                                  const struct krc_restart *r, const struct krc_report *rep,
                                  const struct krc_diagnosis *dg, char *reply, char *update,
                                  size_t size);

/* After render: the incident's first alert (plan->repeat 0) keeps its diagnosis, its first
 * failure (termination, node, log), its thread and the destinations its messages went to
 * (msg's chain; decision: render's). A first alert that was not posted (held back,
 * silenced, grouped) leaves the incident unalerted: its next restart is alerted. Thread-safe. */
void krc_route_incident_settle(struct krc_sender *n, const struct krc_route_plan *plan,
                               const struct krc_restart *r, const struct krc_report *rep,
                               const struct krc_diagnosis *dg, enum krc_policy_decision decision,
                               const struct krc_sender_message *msg);

/* The store recorded restart `restart_id` into incident `id` with `restarts` restarts after
 * it (its krc_store_incident_ref's ret_id and ret_restarts; 0, 0, 0: the record failed): the
 * incident's id, for the next repeat and the end, and its count (the store's, which counts
 * the restarts other leaders and workers recorded into it; never below the restarts routed
 * here). An id other than the one known (the stored incident had ended meanwhile) replaces
 * it, and its count too. Returns 1, or 0 when this process no longer holds the incident
 * (ended, or forgotten). Thread-safe. */
int krc_route_incident_recorded(struct krc_sender *n, uint64_t incident, int64_t id,
                                int64_t restarts, int64_t restart_id);

/* The first restart of incident `incident` turned out recorded already, in no incident of
 * the store (KRC_STORE_EXISTS, ret_id 0): the incident is forgotten when nothing of it is
 * recorded (no id, no record). Thread-safe. */
void krc_route_incident_drop(struct krc_sender *n, uint64_t incident);

/* The store id of plan's incident (0: not recorded yet). Thread-safe. */
int64_t krc_route_incident_id(struct krc_sender *n, uint64_t incident);

/* Route the amendment of a restart already alerted (its device reported
 * Unhealthy after it, detect/dev_health.h): the restart's destinations, as
 * krc_route_restart_in finds them, decision KRC_POLICY_THREAD where the Slack
 * target has threads (a reply under the pod's alert), else
 * KRC_POLICY_ALERT (a message of its own), KRC_POLICY_SILENCED when a
 * silence matches. Neither marks the mute nor counts a storm arrival: the
 * restart was routed once already. Thread-safe. */
enum krc_policy_decision krc_route_amend(struct krc_sender *n, const struct krc_restart *r,
                                         struct krc_route_plan *plan);

/* Seconds within which the stops of a pod's containers are one sandbox
 * change (the diagnosis's rule takes them together within 60 s). */
#define KRC_ROUTE_SANDBOX_SECONDS 60

/* A re-created sandbox restarts every container of the pod for one cause:
 * it is alerted once per pod, whatever the mute (muteSeconds 0 included).
 * For a restart diagnosed sandbox_changed that is about to be alerted: 1
 * when an alert of the same change of the pod (its uid, a stop within
 * KRC_ROUTE_SANDBOX_SECONDS) was let through already, with the container
 * that was alerted in alerted[size] (the caller holds this one back and
 * counts it muted); 0 when this restart is the change's first (remembered
 * now: the newest MAX_SANDBOX_MARKS changes are). Thread-safe. */
int krc_route_sandbox_alerted(struct krc_sender *n, const struct krc_restart *r, char *alerted,
                              size_t size);

/* Why a detected restart is ignored before it is queued: the
 * krc.io/ignore=true annotation, the pod's restart count above
 * ignoreRestartCount, exit code 0 with ignoreRestartsWithExitCodeZero. The
 * sentence to log, or NULL when it is not ignored. Pure. */
const char *krc_route_ignored(const struct krc_config *cfg, const struct krc_restart_delta *d);

#endif
