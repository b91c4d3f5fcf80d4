/* What the two Slack sinks share: one HTTP connection with pacing, and the
 * delivery loop around one POST.
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
#ifndef KRC_SLACK_SEND_H
#define KRC_SLACK_SEND_H

#include <stdint.h>

#include "krc/alert/sink.h"
#include "krc/util/backoff.h"
#include "krc/util/error.h"
#include "krc/util/http.h"

#define KRC_SLACK_PACE_SLOTS 64

struct krc_slack_pace {
    uint64_t key;
    int64_t last_ms;
};

struct krc_slack_conn {
    struct krc_sink_options o;
    struct krc_http *http;
    struct krc_backoff backoff; /* transient failures */
    struct krc_slack_pace pace[KRC_SLACK_PACE_SLOTS];
};

/* Caller frees with krc_slack_conn_cleanup (also after a failed init). */
int krc_slack_conn_init(struct krc_slack_conn *c, const struct krc_sink_options *o,
                        struct krc_error *err);
void krc_slack_conn_cleanup(struct krc_slack_conn *c);

/* A request in flight is aborted only on the hard cancel. */
const atomic_int *krc_slack_transfer_cancel(const struct krc_slack_conn *c);

/* One POST of `body` by the sink: 0 when Slack accepted it, 1 when Slack
 * answered without accepting it (res->http_status and res->error set),
 * < 0 on a transport error. */
typedef int (*krc_slack_post_fn)(struct krc_slack_conn *c, void *ctx, const char *body,
                                 struct krc_http_response *resp, struct krc_sink_result *res,
                                 struct krc_error *err);

/* The delivery loop (see the top of this file): `pace_key` is the target,
 * `dest` its description for logs and errors (no secrets). */
int krc_slack_deliver(struct krc_slack_conn *c, const char *pace_key, const char *dest,
                      krc_slack_post_fn post, void *ctx, const char *body, const char *fallback,
                      struct krc_sink_result *res, struct krc_error *err);

/* POST body with the given header lines (NULL-terminated, at most 3). */
int krc_slack_http_post(struct krc_slack_conn *c, const char *url, const char *const *headers,
                        const void *body, size_t len, long timeout_ms,
                        struct krc_http_response *resp, struct krc_error *err);

/* For the sinks of other services, which answer with an HTTP status: the
 * result of krc_slack_http_post (rc) and its response as a post function
 * returns it: 0 for 2xx; 1 with res->http_status and res->error (the start
 * of the body, one line) otherwise; rc when < 0. */
int krc_sink_http_answer(int rc, const struct krc_http_response *resp, struct krc_sink_result *res);

/* The sinks' restart format: the Block Kit message and its text-only
 * fallback (both owned by the caller), as both Slack sinks send them. */
int krc_slack_sink_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                  const struct krc_slack_options *fo, char **ret_body,
                                  char **ret_fallback, struct krc_error *err);

#endif
