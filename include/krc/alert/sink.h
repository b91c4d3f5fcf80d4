/* Sinks: where alerts go. A sink formats what the alert layer has to say (a
 * restart, a storm summary, an incident's "resolved" message) in its destination's format
 * and delivers one message at a time, blocking, with its own pacing and
 * retries; it says what it can do (limits) and what a success gave back (a
 * Slack message ts that later replies are threaded under).
 *
 * A sink instance serves one destination and is used by one thread (the
 * sender's thread for that destination), so one destination's rate limit or
 * outage never holds another's messages. The format functions need no
 * instance (workers format before the message is queued). Each kind of
 * destination (alert/dest.h) has its sink in its file under alert/dest/:
 * slack_webhook.c (incoming webhooks), slack_api.c (chat.postMessage threads
 * and the external file upload), webhook.c (the report as signed JSON),
 * pagerduty.c (Events API v2 trigger and resolve), teams.c and
 * google_chat.c (their webhooks, through chat.c), kube_event.c (an
 * events.k8s.io/v1 Event on the pod).
 * Secrets (webhook URLs, tokens) never appear in errors or logs. */
#ifndef KRC_SINK_H
#define KRC_SINK_H

#include <stdatomic.h>
#include <stddef.h>

#include "krc/alert/format.h"
#include "krc/config/destinations.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_auth.h"
#include "krc/model/report.h"
#include "krc/util/error.h"

/* What every sink is built with (a sink ignores what it does not use). */
struct krc_sink_options {
    const char *api_url;               /* Web API base, default "https://slack.com/api" */
    const char *bot_token;             /* Web API token (registered as a secret) */
    const char *ca_file;               /* extra CA for tests (NULL: system roots) */
    long min_interval_ms;              /* pacing per target, default 1000 */
    int max_attempts;                  /* 5xx / transport failures, default 8 */
    long timeout_ms;                   /* per request, default 15000 */
    long backoff_initial_ms;           /* default 1000 */
    long backoff_max_ms;               /* default 60000 */
    const atomic_int *cancel;          /* no new attempt, no waiting */
    const atomic_int *cancel_transfer; /* abort a request in flight (NULL: cancel) */
    /* The destination (config/destinations.h: its url, secret, headers; the
     * Go tool's Slack settings are an implicit one), or NULL. Borrowed. */
    const struct krc_destination *destination;
    /* Kubernetes Events: the sink makes its own client from these (borrowed) */
    const struct krc_kube_auth_config *kube_auth;
    struct krc_token_source *kube_tokens;
};

void krc_sink_options_defaults(struct krc_sink_options *o);

struct krc_sink_limits {
    long min_interval_ms; /* at most one message per this interval per target */
    size_t max_payload;   /* largest body the destination takes, bytes */
    int threads;          /* replies can go under an earlier message (its ts) */
    int files;            /* krc_sink_upload works */
};

/* One message: a body made by this sink's format functions. */
struct krc_sink_message {
    const char *channel;   /* Web API: channel name or id; webhooks: NULL */
    const char *thread_ts; /* a reply under this message (sinks with threads), or NULL */
    const char *body;
    const char *fallback; /* sent once when the destination rejects body's form; may be NULL */
};

/* What came of a send (filled whatever the result). */
struct krc_sink_result {
    long http_status;
    int attempts;
    int used_fallback;
    int rate_limited;    /* 429s seen */
    long retry_after_ms; /* the last 429's wait */
    char error[128];     /* the destination's error code ("invalid_blocks", "no_service") or "" */
    char ts[64];         /* a success: the message's id for threads ("" without threads) */
    char channel[64];    /* a success: the channel id the destination answered, or "" */
    /* A success without a new object: the destination had it already (a
     * Kubernetes Event of the same name, 409 AlreadyExists: written for the
     * same restart before, e.g. by an earlier krc process). Delivered, not
     * an error; sender accounting counts it apart (already_exists). */
    int already_exists;
};

struct krc_sink;

struct krc_sink_ops {
    const char *name; /* "slack-webhook", "slack-api" */
    /* A sink for `target` (a webhook URL, borrowed: keep it alive; sinks
     * without one ignore it). Caller frees with krc_sink_free. */
    struct krc_sink *(*create)(const struct krc_sink_options *o, const char *target,
                               struct krc_error *err);
    /* Bodies, each a caller-freed (krc_free) string; thread-safe. */
    int (*format_restart)(const struct krc_report *rep, const struct krc_diagnosis *diag,
                          const struct krc_alert_options *fo, char **ret_body, char **ret_fallback,
                          struct krc_error *err);
    int (*format_summary)(const struct krc_alert_summary *sum, const struct krc_alert_options *fo,
                          char **ret_body, struct krc_error *err);
    int (*format_recovered)(const struct krc_alert_recovered *rec,
                            const struct krc_alert_options *fo, char **ret_body,
                            struct krc_error *err);
    /* Deliver one message (blocking: pacing, retries). 0 when accepted;
     * KRC_ECANCELED on shutdown; KRC_EHTTP (err->http_status set for a
     * final 4xx), KRC_EIO, KRC_ETIMEOUT, KRC_ERATELIMIT when it gave up. */
    int (*send)(struct krc_sink *s, const struct krc_sink_message *m, struct krc_sink_result *res,
                struct krc_error *err);
    /* Attach a file under message thread_ts (NULL when limits.files is 0). */
    int (*upload)(struct krc_sink *s, const char *channel, const char *thread_ts,
                  const char *filename, const char *title, const void *data, size_t len,
                  struct krc_error *err);
    void (*free)(struct krc_sink *s);
    /* What an answer of the service means to the person who set it up
     * ("this webhook was revoked or mistyped"), or NULL when the kind has
     * nothing to add to the generic words for the status (NULL op: none).
     * status: the HTTP status (0: no answer); error: the service's error
     * code or the start of its body (struct krc_sink_result.error). */
    const char *(*explain)(long status, const char *error);
    /* krc notify test's message (alert/dest/test_message.h): step 0 the
     * message, step 1 a follow-up (*ret_body NULL: none). NULL op: the
     * kind takes no test message (a Kubernetes Event). */
    int (*format_test)(const struct krc_alert_options *fo, const char *test_id, int step,
                       char **ret_body, struct krc_error *err);
};

/* An answer explained, one line: "404 no_service: this webhook was revoked
 * or mistyped", "200 ok: sent" (status 2xx), "403 invalid_token: the token
 * is not valid (revoked or mistyped)"; the kind's words (ops->explain) when
 * it has some, else the generic ones of the status. ops may be NULL. */
void krc_sink_explain(const struct krc_sink_ops *ops, long status, const char *error, char *out,
                      size_t outsz);

/* Implementations embed this as their first member. */
struct krc_sink {
    const struct krc_sink_ops *ops;
    struct krc_sink_limits limits;
};

/* NULL is accepted. */
void krc_sink_free(struct krc_sink *s);

#endif
