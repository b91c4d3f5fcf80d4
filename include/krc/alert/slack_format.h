/* Slack message bodies for restarts, storms and recoveries: pure functions
 * from a report (and its diagnosis) to the JSON body of an incoming-webhook
 * POST or a chat.postMessage call, built with cJSON.
 *
 * Pure: no clock reads (ages are computed from options.now), no I/O, no
 * global state; the same input gives byte-identical output (golden tests).
 *
 * Safety, for every text we did not write ourselves (names, events, log
 * lines, evidence, summaries, notes):
 *   - redacted with options.redactor when one is given (log, event messages,
 *     evidence, summary); the message says "N secrets redacted";
 *   - made display-safe: ANSI escapes removed, invalid UTF-8 replaced by
 *     U+FFFD, control characters dropped (\n and \t kept where lines are
 *     meant), a carriage-return progress line shows its last state;
 *   - mrkdwn-escaped: & < > become &amp; &lt; &gt; so no text can ping
 *     <!channel>/<!here>/<@U123> or make a link; runs of backticks get a
 *     zero-width space (U+200B) between them so no text can open or close a
 *     code block.
 * Budgets (Slack rejects the whole post otherwise): at most 50 blocks,
 * section text <= 3000, header <= 150, <= 10 fields of <= 2000, context <= 10
 * elements, top-level text <= 4000. Lengths are counted in UTF-16 code units
 * (what Slack's limits are measured in; never less than the number of code
 * points, so the budget is conservative), entities at their escaped length.
 * Cuts never split a UTF-8 sequence or an entity. A log that does not fit
 * keeps its LAST lines and says how many earlier lines were omitted. */
#ifndef KRC_SLACK_FORMAT_H
#define KRC_SLACK_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/buf.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"
#include "krc/model/report.h"

#define KRC_SLACK_MAX_BLOCKS 50
#define KRC_SLACK_SECTION_MAX 3000
#define KRC_SLACK_HEADER_MAX 150
#define KRC_SLACK_FIELDS_MAX 10
#define KRC_SLACK_FIELD_MAX 2000
#define KRC_SLACK_CONTEXT_MAX 10 /* elements of a context block */
#define KRC_SLACK_BLOCK_ID_MAX 255
#define KRC_SLACK_TEXT_MAX 4000 /* top-level text, and the text-only fallback */
#define KRC_SLACK_DEFAULT_LOG_LINES 50
#define KRC_SLACK_LOG_SECTIONS 3     /* the log tail uses at most this many code blocks */
#define KRC_SLACK_LOG_LINE_MAX 1000  /* one log line is cut after this many units */
#define KRC_SLACK_LOG_WINDOW 262144u /* bytes at the end of the log looked at */
#define KRC_SLACK_EVENTS_MAX 10      /* pod events shown */
#define KRC_SLACK_NODE_EVENTS_MAX 5  /* node warning events shown */

/* Severity of a cause: the emoji and the colour of the message. */
enum krc_slack_severity {
    KRC_SLACK_SEV_CRITICAL = 0, /* red: oom, segfault, GPU, crash, bad image/command */
    KRC_SLACK_SEV_WARNING,      /* orange: probe kills, dependency, plain SIGKILL */
    KRC_SLACK_SEV_INFO,         /* grey: completed, terminated, unknown */
};

enum krc_slack_severity krc_slack_cause_severity(enum krc_cause cause);
/* ":red_circle:", ":large_orange_circle:", ":white_circle:" (static). */
const char *krc_slack_severity_emoji(enum krc_slack_severity sev);
/* "#E01E5A", "#F2A33A", "#9E9EA6" (static). */
const char *krc_slack_severity_color(enum krc_slack_severity sev);
/* Short title of a cause for people: "OOMKilled", "Liveness probe failed" (static). */
const char *krc_slack_cause_title(enum krc_cause cause);

/* All pointers are borrowed for the duration of the call. */
struct krc_slack_options {
    const char *cluster;   /* shown in the text, header and context; NULL: omitted */
    int64_t now;           /* unix seconds, for ages ("5 (2m ago)"); 0: ages omitted */
    const char *channel;   /* "channel" (legacy webhooks, chat.postMessage); NULL: omitted */
    const char *username;  /* legacy webhooks only; NULL: omitted */
    const char *icon;      /* ":emoji:" -> icon_emoji, else icon_url; NULL: omitted */
    const char *thread_ts; /* Web API thread reply; NULL: omitted */
    int max_log_lines;     /* log tail lines, 0: KRC_SLACK_DEFAULT_LOG_LINES */
    const struct krc_redactor *redactor; /* NULL: no redaction here */
    int omit_log;                        /* leave the log tail out (the message says so) */
    int redactions_done; /* secrets already redacted upstream (e.g. by the collector); added
                            to the count the message shows */
    int color_bar;       /* wrap the blocks in one legacy attachment with a colour bar */
};

/* Zero everything; max_log_lines = KRC_SLACK_DEFAULT_LOG_LINES. */
void krc_slack_options_init(struct krc_slack_options *o);

/* The restart alert: a `text` notification fallback and blocks (header,
 * cause + summary, evidence, fields, kubectl pod line, pod events, node,
 * collection notes, log tail, context). `d` must come from krc_diagnose()
 * on `r`. *ret_json (unformatted JSON, caller frees with krc_free) and
 * *ret_redactions (total secrets redacted, including redactions_done; may be
 * NULL) are set on success. KRC_ENOMEM. */
int krc_slack_format_restart(const struct krc_report *r, const struct krc_diagnosis *d,
                             const struct krc_slack_options *o, char **ret_json,
                             int *ret_redactions, struct krc_error *err);

/* The same alert as one mrkdwn `text` of at most KRC_SLACK_TEXT_MAX units
 * and no blocks, for when Slack refuses the blocks (invalid_blocks,
 * invalid_payload). Same escaping and redaction. */
int krc_slack_format_text_only(const struct krc_report *r, const struct krc_diagnosis *d,
                               const struct krc_slack_options *o, char **ret_json,
                               int *ret_redactions, struct krc_error *err);

/* ---- alert storms ------------------------------------------------------ */

struct krc_slack_group {
    const char *key; /* node name, "Kind namespace/name" (or "namespace/pod"), cause code */
    size_t count;    /* restarts in the group */
};

struct krc_slack_example {
    const char *namespace;
    const char *pod;
    const char *container; /* may be NULL */
    const char *cause;     /* cause code or reason, may be NULL (not diagnosed) */
    const char *node;      /* may be NULL */
    int restart_count;
};

/* Filled by the storm guard. Groups need not be sorted (the formatter shows
 * the largest first); strings are borrowed. */
struct krc_slack_summary {
    size_t restarts;        /* restarts in the window */
    size_t pods;            /* distinct pods among them (0: unknown) */
    int64_t window_seconds; /* "in the last N" */
    size_t alerted;         /* of them, posted individually before the storm began */
    const struct krc_slack_group *by_node;
    size_t n_by_node;
    const struct krc_slack_group *by_workload;
    size_t n_by_workload;
    const struct krc_slack_group *by_cause;
    size_t n_by_cause;
    const struct krc_slack_example *examples;
    size_t n_examples;
};

#define KRC_SLACK_GROUPS_SHOWN 8   /* per grouping, then "and K more" */
#define KRC_SLACK_EXAMPLES_SHOWN 5 /* example pods */

/* The grouped storm message. Caller frees *ret_json with krc_free. */
int krc_slack_format_summary(const struct krc_slack_summary *s, const struct krc_slack_options *o,
                             char **ret_json, struct krc_error *err);

/* ---- recovery ------------------------------------------------------------ */

struct krc_slack_recovered {
    const char *namespace;
    const char *pod;
    const char *container;
    int64_t ready_seconds; /* has run ready this long */
    int restart_count;
};

/* "container app of shop/web-1 has run ready for 10m0s after 5 restarts", a
 * short text message meant as a thread reply (options.thread_ts). */
int krc_slack_format_recovered(const struct krc_slack_recovered *rc,
                               const struct krc_slack_options *o, char **ret_json,
                               struct krc_error *err);

/* ---- helpers --------------------------------------------------------------- */

/* Append a display-safe, mrkdwn-escaped copy of len raw bytes to out (see
 * above; `keep_newlines` keeps \n, else it becomes a space). Returns 0,
 * KRC_ETOOBIG or KRC_ENOMEM. */
int krc_slack_escape(struct krc_buf *out, const void *data, size_t len, int keep_newlines);

/* Length of valid UTF-8 text as Slack counts it (UTF-16 code units). */
size_t krc_slack_text_length(const char *s, size_t len);

#endif
