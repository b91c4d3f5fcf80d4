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
};

/* Zero everything; max_log_lines = KRC_ALERT_DEFAULT_LOG_LINES. */
void krc_alert_options_init(struct krc_alert_options *o);

/* ---- alert storms ------------------------------------------------------ */

struct krc_alert_group {
    const char *key; /* node name, "Kind namespace/name" (or "namespace/pod"), cause code */
    size_t count;    /* restarts in the group */
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

/* ---- recovery ------------------------------------------------------------ */

struct krc_alert_recovered {
    const char *namespace;
    const char *pod;
    const char *container;
    int64_t ready_seconds; /* has run ready this long */
    int restart_count;
};

#endif
