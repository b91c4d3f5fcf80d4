/* The formats of the destinations other than Slack: pure functions from a
 * restart report and its diagnosis (or a storm summary, or an incident's end) to
 * the body a service takes, within that service's limits. Each is the
 * format_* of one sink (alert/sink.h); none puts a secret in a body (the
 * bodies are stored in the outbox): a routing key or a signature is added at
 * send time.
 *
 * Every foreign text goes through the redactor (fo->redactor, built-in
 * patterns when NULL) and is made valid UTF-8; cuts are on code-point
 * boundaries. Caller frees *ret_body (krc_free); *ret_fallback is NULL. */
#ifndef KRC_SINK_FORMATS_H
#define KRC_SINK_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "krc/alert/format.h"
#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"
#include "krc/util/error.h"

/* --- what the JSON formats share (card_content.c) ------------------------- */

struct cJSON;

/* o printed without spaces into a string the caller frees with krc_free
 * (NULL for NULL or out of memory). */
char *krc_format_json_print(const struct cJSON *o);
/* The body of a format: o printed into *ret_body (krc_free) and deleted.
 * 0, or KRC_ENOMEM (err set), also for a NULL o (a failed build). */
int krc_format_json_finish(struct cJSON *o, char **ret_body, struct krc_error *err);

/* --- signed webhook: docs/report-schema.json ------------------------------ */

#define KRC_WEBHOOK_SCHEMA_VERSION 1

/* {"schema_version": 1, "kind": "restart" | "storm_summary" | "resolved",
 *  "sent_at", "cluster", and "report" (model/report_json.h) | "summary" |
 *  "resolved"}. */
int krc_webhook_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                               const struct krc_alert_options *fo, char **ret_body,
                               char **ret_fallback, struct krc_error *err);
int krc_webhook_format_summary(const struct krc_alert_summary *sum,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err);
int krc_webhook_format_recovered(const struct krc_alert_recovered *rec,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err);

/* HMAC-SHA256 of "T.BODY" with secret, as lowercase hex (65 bytes with
 * the NUL). 0, KRC_ENOMEM, KRC_EIO. */
int krc_webhook_signature(const char *secret, int64_t t, const char *body, size_t len, char *out,
                          size_t outsz);

/* --- PagerDuty Events API v2 ----------------------------------------------- */

#define KRC_PD_SUMMARY_MAX 1024
#define KRC_PD_DEDUP_MAX 255
#define KRC_PD_MAX_PAYLOAD (512 * 1024) /* PagerDuty's limit for one event */
#define KRC_PD_LOG_MAX (16 * 1024)      /* the log tail in custom_details */

/* An event without routing_key (added by the sink at send time):
 * trigger with dedup_key "krc/CLUSTER/NAMESPACE/POD/CONTAINER" (at most 255
 * bytes), payload {summary (at most 1024), source, severity (critical |
 * error | warning | info, from the cause and confidence), timestamp,
 * component, group, class, custom_details (the diagnosis and the report)},
 * within KRC_PD_MAX_PAYLOAD. */
int krc_pagerduty_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 char **ret_fallback, struct krc_error *err);
/* A trigger for the storm (dedup_key "krc/CLUSTER/storm": one incident). */
int krc_pagerduty_format_summary(const struct krc_alert_summary *sum,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err);
/* resolve with the dedup_key of the incident's first alert. */
int krc_pagerduty_format_recovered(const struct krc_alert_recovered *rec,
                                   const struct krc_alert_options *fo, char **ret_body,
                                   struct krc_error *err);
/* The dedup_key of a pod's container (out: at most 256 bytes with NUL). */
void krc_pagerduty_dedup_key(const char *cluster, const char *ns, const char *pod,
                             const char *container, char *out, size_t outsz);
/* The body with "routing_key" added: caller frees. NULL on a body that is
 * not a JSON object (err set) or out of memory. */
char *krc_pagerduty_with_key(const char *body, const char *routing_key, struct krc_error *err);

/* --- chat cards (Teams, Google Chat): the content both show --------------- */

#define KRC_CARD_MAX_FACTS 8
#define KRC_CARD_MAX_EVIDENCE 6

struct krc_card {
    char *title;   /* "Out of memory: ns/pod (container)" */
    char *cause;   /* "oom_killed, high confidence" */
    char *summary; /* one line */
    char *evidence[KRC_CARD_MAX_EVIDENCE];
    size_t n_evidence;
    char *next_step; /* or NULL */
    char *commands;  /* kubectl commands, one per line, or NULL */
    struct {
        const char *label;
        char *value;
    } facts[KRC_CARD_MAX_FACTS];
    size_t n_facts;
    char *log; /* the end of the previous log, or NULL */
};

/* Fill c (free with krc_card_cleanup, also after a failure): texts cut to
 * text_max bytes, the log to its last log_max bytes. 0 or KRC_ENOMEM. */
int krc_card_build(const struct krc_report *rep, const struct krc_diagnosis *d,
                   const struct krc_alert_options *fo, size_t log_max, size_t text_max,
                   struct krc_card *c);
void krc_card_cleanup(struct krc_card *c);
/* How a chat format shrinks its card until the body fits: the card is built
 * with log_max[k] and text_max[k] (k = 0, 1, ... n_steps - 1, largest first)
 * and rendered until the body has at most max_payload bytes. */
struct krc_card_fit {
    const size_t *log_max;
    const size_t *text_max;
    size_t n_steps;
    size_t max_payload;
    const char *service; /* for the error: "<service> card larger than N bytes" */
    /* The body for card c (krc_free), NULL when out of memory. */
    char *(*render)(const struct krc_card *c, const void *ud);
    const void *ud;
};

/* *ret_body set (krc_free) and 0, or KRC_ENOMEM / KRC_ETOOBIG (err set). */
int krc_card_fit(const struct krc_report *rep, const struct krc_diagnosis *d,
                 const struct krc_alert_options *fo, const struct krc_card_fit *fit,
                 char **ret_body, struct krc_error *err);
/* A redacted, display-safe copy of s cut to max bytes with "…" (NULL for
 * NULL or out of memory); the PagerDuty texts use it too. */
char *krc_card_text(const struct krc_alert_options *fo, const char *s, size_t len, size_t max,
                    int keep_newlines);

/* --- Microsoft Teams (Workflows webhook) ----------------------------------- */

#define KRC_TEAMS_MAX_PAYLOAD (28 * 1024) /* Teams' limit for a message */

/* {"type": "message", "attachments": [{"contentType":
 * "application/vnd.microsoft.card.adaptive", "content": {AdaptiveCard 1.5}}]}
 * within KRC_TEAMS_MAX_PAYLOAD bytes (the log, then the other texts, are
 * shortened until it fits). Foreign texts are TextRuns of RichTextBlocks,
 * which Teams shows without markdown. */
int krc_teams_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                             const struct krc_alert_options *fo, char **ret_body,
                             char **ret_fallback, struct krc_error *err);
int krc_teams_format_summary(const struct krc_alert_summary *sum,
                             const struct krc_alert_options *fo, char **ret_body,
                             struct krc_error *err);
int krc_teams_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err);

/* --- Google Chat (incoming webhook) ---------------------------------------- */

#define KRC_GCHAT_MAX_PAYLOAD (32000) /* Google Chat's limit for a message */

/* {"text", "cardsV2": [{"cardId", "card": {"header", "sections": [{"header",
 * "widgets": [textParagraph | decoratedText | divider]}]}}], "thread":
 * {"threadKey": "krc/CLUSTER/NAMESPACE/POD"}}: one thread per pod (the sink
 * asks messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD). Texts are
 * HTML-escaped (textParagraph takes a little HTML). */
int krc_gchat_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                             const struct krc_alert_options *fo, char **ret_body,
                             char **ret_fallback, struct krc_error *err);
int krc_gchat_format_summary(const struct krc_alert_summary *sum,
                             const struct krc_alert_options *fo, char **ret_body,
                             struct krc_error *err);
int krc_gchat_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err);
/* The pod's thread key (out: at most 256 bytes with NUL). */
void krc_gchat_thread_key(const char *cluster, const char *ns, const char *pod, char *out,
                          size_t outsz);

#endif
