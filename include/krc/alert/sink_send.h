/* What the HTTP sinks share (Slack's two, the signed webhook, PagerDuty,
 * Teams, Google Chat): one HTTP connection with pacing, and the delivery
 * loop around one POST.
 *
 * - at most one message per min_interval_ms per target (webhook URL or
 *   channel);
 * - HTTP 429: wait Retry-After (1 s when absent) and try again;
 * - 5xx and transport errors: exponential backoff with jitter, up to
 *   max_attempts;
 * - invalid_payload / invalid_blocks / msg_too_long / no_text: send the
 *   fallback (text-only) body once, and log Slack's answer;
 * - other 4xx (channel_not_found, no_service, invalid_auth ...): give up at
 *   once with Slack's error string.
 * A connection is used by one thread (its sink's). */
#ifndef KRC_SINK_SEND_H
#define KRC_SINK_SEND_H

#include <stdint.h>

#include "krc/alert/sink.h"
#include "krc/util/backoff.h"
#include "krc/util/error.h"
#include "krc/util/http.h"

#define KRC_SINK_PACE_SLOTS 64

struct krc_sink_pace {
    uint64_t key;
    int64_t last_ms;
};

struct krc_sink_conn {
    struct krc_sink_options o;
    struct krc_http *http;
    struct krc_backoff backoff; /* transient failures */
    struct krc_sink_pace pace[KRC_SINK_PACE_SLOTS];
};

/* Caller frees with krc_sink_conn_cleanup (also after a failed init). */
int krc_sink_conn_init(struct krc_sink_conn *c, const struct krc_sink_options *o,
                       struct krc_error *err);
void krc_sink_conn_cleanup(struct krc_sink_conn *c);

/* A request in flight is aborted only on the hard cancel. */
const atomic_int *krc_sink_transfer_cancel(const struct krc_sink_conn *c);

/* One POST of `body` by the sink: 0 when Slack accepted it, 1 when Slack
 * answered without accepting it (res->http_status and res->error set),
 * < 0 on a transport error. */
typedef int (*krc_sink_post_fn)(struct krc_sink_conn *c, void *ctx, const char *body,
                                struct krc_http_response *resp, struct krc_sink_result *res,
                                struct krc_error *err);

/* The delivery loop (see the top of this file): `pace_key` is the target,
 * `dest` its description for logs and errors (no secrets). */
int krc_sink_deliver(struct krc_sink_conn *c, const char *pace_key, const char *dest,
                     krc_sink_post_fn post, void *ctx, const char *body, const char *fallback,
                     struct krc_sink_result *res, struct krc_error *err);

/* POST body with the given header lines (NULL-terminated, at most 3). */
int krc_sink_http_post(struct krc_sink_conn *c, const char *url, const char *const *headers,
                       const void *body, size_t len, long timeout_ms,
                       struct krc_http_response *resp, struct krc_error *err);

/* For the sinks of other services, which answer with an HTTP status: the
 * result of krc_sink_http_post (rc) and its response as a post function
 * returns it: 0 for 2xx; 1 with res->http_status and res->error (the start
 * of the body, one line) otherwise; rc when < 0. */
int krc_sink_http_answer(int rc, const struct krc_http_response *resp, struct krc_sink_result *res);

/* The chat sinks of incoming webhooks other than Slack's (Teams, Google
 * Chat: alert/dest/chat.c): a POST of the JSON body to the webhook URL
 * (the secret). `what` names the service in logs and errors; with
 * `reply_option`, Google Chat's messageReplyOption is added to the URL and
 * "recovered" messages go without threads (limits.resolves). */
struct krc_sink *krc_chat_sink_create(const struct krc_sink_options *o, const char *url,
                                      const struct krc_sink_ops *ops, const char *what,
                                      size_t max_payload, int reply_option, struct krc_error *err);
int krc_chat_sink_send(struct krc_sink *s, const struct krc_sink_message *m,
                       struct krc_sink_result *res, struct krc_error *err);
void krc_chat_sink_free(struct krc_sink *s);

#endif
