/* Delivery to Slack: incoming webhooks and the Web API (chat.postMessage,
 * the external file upload), with pacing, retries and fallbacks.
 *
 * - at most one message per second per destination (webhook URL or channel);
 * - HTTP 429: wait Retry-After (1 s when absent) and try again;
 * - 5xx and transport errors: exponential backoff with jitter, up to
 *   max_attempts;
 * - invalid_payload / invalid_blocks / msg_too_long / no_text: send the
 *   fallback (text-only) body once, and log Slack's answer;
 * - other 4xx (channel_not_found, no_service, invalid_auth ...): give up at
 *   once with Slack's error string.
 * Webhook URLs and tokens never appear in errors or logs (the host only).
 * A sender is used by one thread. */
#ifndef KRC_SLACK_SEND_H
#define KRC_SLACK_SEND_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"

struct krc_slack_sender;

struct krc_slack_sender_options {
    const char *api_url;               /* Web API base, default "https://slack.com/api" */
    const char *bot_token;             /* xoxb-..., NULL for webhook-only */
    long min_interval_ms;              /* per destination, default 1000 */
    int max_attempts;                  /* default 8 */
    long timeout_ms;                   /* per request, default 15000 */
    long backoff_initial_ms;           /* default 1000 */
    long backoff_max_ms;               /* default 60000 */
    const char *ca_file;               /* extra CA for tests (NULL: system roots) */
    const atomic_int *cancel;          /* no new attempt, no waiting */
    const atomic_int *cancel_transfer; /* abort a request in flight (NULL: cancel) */
};

void krc_slack_sender_options_defaults(struct krc_slack_sender_options *o);

/* One message. Exactly one of webhook_url / channel is set (channel: Web API).
 * body/fallback are complete JSON documents (fallback may be NULL). */
struct krc_slack_message {
    const char *webhook_url;
    const char *channel;
    const char *body;
    const char *fallback;
};

struct krc_slack_result {
    long http_status;
    int attempts;
    int used_fallback;
    int rate_limited; /* 429s seen */
    char error[128];  /* Slack's error string ("invalid_blocks", "no_service") or "" */
    char ts[64];      /* Web API: the message's ts (thread parent for replies) */
    char channel[64]; /* Web API: the channel id Slack answered */
};

struct krc_slack_sender *krc_slack_sender_new(const struct krc_slack_sender_options *o,
                                              struct krc_error *err);
void krc_slack_sender_free(struct krc_slack_sender *s);

/* Deliver one message (blocking: pacing, retries). 0 when Slack accepted it;
 * KRC_ECANCELED on shutdown; KRC_EHTTP / KRC_EIO / KRC_ETIMEOUT when it gave
 * up (err says why, without secrets). res is filled either way. */
int krc_slack_send(struct krc_slack_sender *s, const struct krc_slack_message *m,
                   struct krc_slack_result *res, struct krc_error *err);

/* Web API: upload `data` as a file and share it into channel/thread_ts
 * (files.getUploadURLExternal, POST to the upload URL,
 * files.completeUploadExternal). */
int krc_slack_upload(struct krc_slack_sender *s, const char *channel, const char *thread_ts,
                     const char *filename, const char *title, const void *data, size_t len,
                     struct krc_error *err);

/* For logs: a destination without secrets ("webhook hooks.slack.com",
 * "channel #alerts"). */
void krc_slack_describe(const struct krc_slack_message *m, char *out, size_t outsz);

#endif
