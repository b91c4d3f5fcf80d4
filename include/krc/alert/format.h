/* What every destination's format is given: the options of a message
 * (cluster, clock, redactor, log lines, and the chat fields some formats
 * use), a storm summary and a "recovered" reply, and what all of them say
 * about a cause (its severity and a short title). The formats themselves
 * are the destinations' (alert/dest/, alert/sink.h). */
#ifndef KRC_ALERT_FORMAT_H
#define KRC_ALERT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/model/cause.h"
#include "krc/util/redact.h"

struct krc_restart_ident; /* krc/model/restart_ident.h */
struct krc_accel_note;    /* krc/detect/accel_time.h */
struct krc_report;
struct krc_report_event;
struct krc_diagnosis;

#define KRC_ALERT_DEFAULT_LOG_LINES 50

/* How urgent a cause is; each format shows it its way (Slack's emoji and
 * colour, Teams' style, PagerDuty's severity). */
enum krc_alert_severity {
    KRC_ALERT_SEV_CRITICAL = 0, /* red: oom, segfault, GPU, crash, bad image/command */
    KRC_ALERT_SEV_WARNING,      /* orange: probe kills, dependency, plain SIGKILL */
    KRC_ALERT_SEV_INFO,         /* grey: completed, terminated, unknown */
};

enum krc_alert_severity krc_alert_cause_severity(enum krc_cause cause);

/* Short title of a cause for people: "OOMKilled", "Liveness probe failed" (static). */
const char *krc_alert_cause_title(enum krc_cause cause);

/* All pointers are borrowed for the duration of the call. */
struct krc_alert_options {
    const char *cluster;   /* shown in the text, header and context; NULL: omitted */
    int64_t now;           /* unix seconds, for ages ("5 (2m ago)"); 0: ages omitted */
    const char *channel;   /* "channel" (legacy webhooks, chat.postMessage); NULL: omitted */
    const char *username;  /* legacy webhooks only; NULL: omitted */
    const char *icon;      /* ":emoji:" -> icon_emoji, else icon_url; NULL: omitted */
    const char *thread_ts; /* Web API thread reply; NULL: omitted */
    int max_log_lines;     /* log tail lines, 0: KRC_ALERT_DEFAULT_LOG_LINES */
    const struct krc_redactor *redactor; /* NULL: no redaction here */
    int omit_log;                        /* leave the log tail out (the message says so) */
    int redactions_done; /* secrets already redacted upstream (e.g. by the collector); added
                            to the count the message shows */
    int color_bar;       /* wrap the blocks in one legacy attachment with a colour bar */
    /* The restart's identity (render.c sets it from the detected restart), or
     * NULL: the Kubernetes Event's name is derived from it, so that the same
     * restart gets the same Event name in every krc process. */
    const struct krc_restart_ident *restart;
    /* GPU time lost: the accelerators the container holds and its time not
     * running while holding them, brought up to now (render.c sets it from
     * the detected restart), or NULL */
    const struct krc_accel_note *accel;
    /* The message amends the restart's first alert (a device reported
     * Unhealthy after it): a Kubernetes Event gets a name of its own. */
    int amended;
};

/* Zero everything; max_log_lines = KRC_ALERT_DEFAULT_LOG_LINES. */
void krc_alert_options_init(struct krc_alert_options *o);

/* ---- alert storms ------------------------------------------------------ */

struct krc_alert_group {
    const char *key; /* node name, "Kind namespace/name" (or "namespace/pod"), cause code */
    size_t count;    /* restarts in the group */
    /* by_node only: the node's failure as a grouped restart's report saw it
     * ("NotReady", "MemoryPressure": krc_alert_node_state), or NULL */
    const char *condition;
};

struct krc_alert_example {
    const char *namespace;
    const char *pod;
    const char *container; /* may be NULL */
    const char *cause;     /* cause code or reason, may be NULL (not diagnosed) */
    const char *node;      /* may be NULL */
    int restart_count;
};

/* Filled by the storm guard. Groups need not be sorted (the formatter shows
 * the largest first); strings are borrowed. */
struct krc_alert_summary {
    size_t restarts;        /* restarts in the window */
    size_t pods;            /* distinct pods among them (0: unknown) */
    int64_t window_seconds; /* "in the last N" */
    size_t alerted;         /* of them, posted individually before the storm began */
    const struct krc_alert_group *by_node;
    size_t n_by_node;
    const struct krc_alert_group *by_workload;
    size_t n_by_workload;
    const struct krc_alert_group *by_cause;
    size_t n_by_cause;
    const struct krc_alert_example *examples;
    size_t n_examples;
};

#define KRC_ALERT_GROUPS_SHOWN 8   /* per grouping, then "and K more" */
#define KRC_ALERT_EXAMPLES_SHOWN 5 /* example pods */

/* ---- what a restart message shows ----------------------------------------
 * One design for every chat format (docs/destinations.md, "The message"):
 * the cause once, no field said twice, only the events that are warnings or
 * evidence, no back-off boilerplate, collection notes only when they change
 * what the reader does, and a failing node first. These helpers decide what
 * is shown; each format writes it its way. */

/* The node's failure as the report saw it, or 0 when the node is healthy or
 * unknown: *ret_state "NotReady" (its Ready condition is False or Unknown),
 * else the pressure conditions that are True ("MemoryPressure, DiskPressure");
 * *ret_detail the Ready condition's status, message and reason ("Ready=Unknown:
 * Kubelet stopped posting node status. (NodeStatusUnknown)"), else the first
 * pressure condition's message and reason ("" when it has none). */
int krc_alert_node_state(const struct krc_report *r, char *ret_state, size_t state_size,
                         char *ret_detail, size_t detail_size);

/* Is evidence line i of d worth its line in a message? Not when it is the
 * kubelet's back-off boilerplate (state: waiting CrashLoopBackOff, a BackOff
 * "restarting failed container" event), the termination line (the message's
 * facts carry its exit code, reason and run time), a node condition (the node
 * line says each once), the pod's NodeNotReady event when the node leads (the
 * headline says it) or a quote the summary already holds. */
int krc_alert_evidence_shown(const struct krc_report *r, const struct krc_diagnosis *d, size_t i);

/* Evidence line e as a message shows it: "node NAME: ..." as "node: ..."
 * (the message names the node once, in its facts or its headline), written
 * into buf (size bytes, cut when longer); other lines as they are. */
const char *krc_alert_evidence_text(const struct krc_report *r, const char *e, char *buf,
                                    size_t size);

/* Is the pod's event worth a line of its own? A warning or an event the
 * evidence quotes, that the evidence does not already show, that is not the
 * back-off boilerplate, and (when the node leads, node_leads) not the pod's
 * NodeNotReady echo of the node line. */
int krc_alert_event_shown(const struct krc_report *r, const struct krc_diagnosis *d,
                          const struct krc_report_event *e, int node_leads);

/* Is this collection note worth showing? The previous log's absence is said
 * once by the message (or by the diagnosis' "not checked"): notes about it
 * are not repeated; every other note (an API error, a missing node) is. */
int krc_alert_note_shown(const char *note);

/* Does the diagnosis' summary already say `needle` (as a whole phrase: not
 * followed by a digit or letter)? For leaving a fact out of the facts line. */
int krc_alert_summary_says(const struct krc_diagnosis *d, const char *needle);

/* The GPU time line, "holds 8 nvidia.com/gpu; 14 min in back-off so far",
 * into buf, or NULL when fo->accel is NULL or holds no device. */
const char *krc_alert_accel_text(const struct krc_alert_options *fo, char *buf, size_t size);

/* Does the summary name the container (as a word of its own)? */
int krc_alert_summary_names(const struct krc_diagnosis *d, const char *name);

/* ---- recovery ------------------------------------------------------------ */

/* The end of an incident (alert/incident.h): one "resolved" message per destination its
 * first alert went to (the per-pod "recovered" message it replaced is no longer sent). */
struct krc_alert_recovered {
    const char *namespace;
    const char *pod; /* its first alert's pod (PagerDuty's dedup_key, Google Chat's thread) */
    const char *container;
    int64_t ready_seconds;     /* has run ready this long */
    int64_t incident_id;       /* its store id, 0: not recorded */
    const char *workload_kind; /* "Deployment"; "Pod" for a bare pod */
    const char *workload_name;
    const char *cause;    /* the incident's cause code */
    long restarts;        /* restarts counted into it */
    int64_t first_at;     /* its first restart (unix s) */
    int64_t last_at;      /* its last restart */
    int moved_on;         /* its last pod went away and no restart followed (not seen ready) */
    const char *last_pod; /* the pod of its latest restart (may be NULL) */
};

/* The resolved message's line, for every destination's format: "Resolved: incident #12 of
 * Deployment shop/api container app (oom_killed), 20 restarts from 03:56 to 04:40 UTC; the
 * container has run ready for 10m0s in pod api-7d9c-x2k4p." (or "...; its last pod
 * api-7d9c-x2k4p went away and no restart followed."). */
void krc_alert_resolved_line(const struct krc_alert_recovered *rec, char *out, size_t size);

#endif
