/* The Slack destination's format (alert/dest/slack_format.c and
 * slack_message.c; its two kinds are slack_webhook.c and slack_api.c):
 * message bodies for restarts, storms and recoveries, pure functions from a
 * report (and its diagnosis) to the JSON body of an incoming-webhook POST or
 * a chat.postMessage call, built with cJSON. Other modules reach it through
 * the kinds (krc_dest_kind_find("slack-webhook")->ops, alert/dest.h).
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
#ifndef KRC_DEST_SLACK_H
#define KRC_DEST_SLACK_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/buf.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"
#include "krc/model/report.h"
#include "krc/alert/format.h"

#define KRC_SLACK_MAX_BLOCKS 50
#define KRC_SLACK_SECTION_MAX 3000
#define KRC_SLACK_HEADER_MAX 150
#define KRC_SLACK_FIELDS_MAX 10
#define KRC_SLACK_FIELD_MAX 2000
#define KRC_SLACK_CONTEXT_MAX 10 /* elements of a context block */
#define KRC_SLACK_BLOCK_ID_MAX 255
#define KRC_SLACK_TEXT_MAX 4000      /* top-level text, and the text-only fallback */
#define KRC_SLACK_NOTIFY_MAX 150     /* a restart's `text`: what a phone notification shows */
#define KRC_SLACK_LOG_SECTIONS 3     /* the log tail uses at most this many code blocks */
#define KRC_SLACK_LOG_LINE_MAX 1000  /* one log line is cut after this many units */
#define KRC_SLACK_LOG_WINDOW 262144u /* bytes at the end of the log looked at */
#define KRC_SLACK_EVENTS_MAX 5       /* events shown */
#define KRC_SLACK_NODE_EVENTS_MAX 5  /* node warning events shown */

/* ":red_circle:", ":large_orange_circle:", ":white_circle:" (static). */
const char *krc_slack_severity_emoji(enum krc_alert_severity sev);
/* "#E01E5A", "#F2A33A", "#9E9EA6" (static). */
const char *krc_slack_severity_color(enum krc_alert_severity sev);

/* The restart alert: a `text` notification (headline and summary, at most
 * KRC_SLACK_NOTIFY_MAX characters) and blocks (header: the cause and pod,
 * a failing node first; the node's condition and the summary; one line of
 * facts; evidence and what was not checked; next step and commands; the
 * warning events not already in the evidence; collection notes that matter;
 * the log tail; context). Each field is said once (krc/alert/format.h). `d` must come from
 * krc_diagnose() on `r`. *ret_json (unformatted JSON, caller frees with krc_free) and
 * *ret_redactions (total secrets redacted, including redactions_done; may be
 * NULL) are set on success. KRC_ENOMEM. */
int krc_slack_format_restart(const struct krc_report *r, const struct krc_diagnosis *d,
                             const struct krc_alert_options *o, char **ret_json,
                             int *ret_redactions, struct krc_error *err);

/* The same alert as one mrkdwn `text` of at most KRC_SLACK_TEXT_MAX units
 * and no blocks, for when Slack refuses the blocks (invalid_blocks,
 * invalid_payload). Same escaping and redaction. */
int krc_slack_format_text_only(const struct krc_report *r, const struct krc_diagnosis *d,
                               const struct krc_alert_options *o, char **ret_json,
                               int *ret_redactions, struct krc_error *err);

/* ---- alert storms ------------------------------------------------------ */

/* The grouped storm message. Caller frees *ret_json with krc_free. */
int krc_slack_format_summary(const struct krc_alert_summary *s, const struct krc_alert_options *o,
                             char **ret_json, struct krc_error *err);

/* ---- an incident's end ----------------------------------------------------- */

/* ":large_green_circle: [cluster] Resolved: incident #12 of Deployment shop/api ..."
 * (krc_alert_resolved_line), a short text message meant as a reply in the incident's
 * thread (options.thread_ts). */
int krc_slack_format_recovered(const struct krc_alert_recovered *rc,
                               const struct krc_alert_options *o, char **ret_json,
                               struct krc_error *err);

/* ---- helpers --------------------------------------------------------------- */

/* Append a display-safe, mrkdwn-escaped copy of len raw bytes to out (see
 * above; `keep_newlines` keeps \n, else it becomes a space). Returns 0,
 * KRC_ETOOBIG or KRC_ENOMEM. */
int krc_slack_escape(struct krc_buf *out, const void *data, size_t len, int keep_newlines);

/* Length of valid UTF-8 text as Slack counts it (UTF-16 code units). */
size_t krc_slack_text_length(const char *s, size_t len);

/* The sinks' restart format: the Block Kit message and its text-only
 * fallback (both owned by the caller), as both Slack sinks send them. */
int krc_slack_sink_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                  const struct krc_alert_options *fo, char **ret_body,
                                  char **ret_fallback, struct krc_error *err);

/* --- the Go tool's Slack settings as a destination (slack_env.c) ------------ */

struct krc_destination;
struct krc_dest_route;
struct krc_dest_target;
struct krc_route;
struct krc_sink_options;

/* The kinds' operations (alert/dest.h) for the implicit destination: the
 * incoming webhooks' (a lane per URL, keys "webhook:default" / "route:N")
 * and the Web API's (lane and key "api"). */
void krc_slack_env_webhook_target(const struct krc_destination *d, const struct krc_dest_route *r,
                                  struct krc_dest_target *t);
int krc_slack_env_webhook_target_of_key(const struct krc_destination *d, const char *key,
                                        const char *channel, const struct krc_route *routes,
                                        size_t n_routes, struct krc_dest_target *t);
void krc_slack_env_api_target(const struct krc_destination *d, const struct krc_dest_route *r,
                              struct krc_dest_target *t);
int krc_slack_env_api_target_of_key(const struct krc_destination *d, const char *key,
                                    const char *channel, const struct krc_route *routes,
                                    size_t n_routes, struct krc_dest_target *t);
/* A slack-api destination's token and Web API base into its sink's options. */
void krc_slack_api_sink_options(const struct krc_destination *d, struct krc_sink_options *so);

#endif
