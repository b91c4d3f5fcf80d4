/* The Slack incoming-webhook sink: one webhook URL, Block Kit bodies, no
 * threads, no files. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/sink.h"
#include "krc/alert/dest/slack.h"
#include "krc/alert/sink_send.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/alert/dest.h"

static const struct krc_sink_ops krc_sink_slack_webhook;

/* krc's own bound on a body (the sender refuses a larger one); the
 * formatter's budgets keep a message far below it. */
#define WEBHOOK_MAX_PAYLOAD (512 * 1024)

struct webhook_sink {
    struct krc_sink base;
    struct krc_sink_conn conn;
    const char *url; /* borrowed */
};

static int wh_post(struct krc_sink_conn *c, void *ctx, const char *body,
                   struct krc_http_response *resp, struct krc_sink_result *res,
                   struct krc_error *err)
{
    const struct webhook_sink *w = ctx;
    const char *headers[] = {"Content-Type: application/json; charset=utf-8", NULL};
    int rc = krc_sink_http_post(c, w->url, headers, body, strlen(body), c->o.timeout_ms, resp, err);

    /* 200 "ok"; an error is a short plain-text code */
    return krc_sink_http_answer(rc, resp, res);
}

static void wh_describe(const struct krc_sink *s, const struct krc_sink_message *m, char *out,
                        size_t outsz)
{
    const struct webhook_sink *w = (const struct webhook_sink *)s;
    char origin[256];

    (void)m;
    krc_http_url_origin(w->url, origin, sizeof(origin));
    snprintf(out, outsz, "Slack webhook %s", origin);
}

static int wh_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    struct webhook_sink *w = (struct webhook_sink *)s;
    char dest[300];

    wh_describe(s, m, dest, sizeof(dest));
    return krc_sink_deliver(&w->conn, w->url, dest, wh_post, w, m->body, m->fallback, res, err);
}

static void wh_free(struct krc_sink *s)
{
    struct webhook_sink *w = (struct webhook_sink *)s;

    krc_sink_conn_cleanup(&w->conn);
    krc_free(w);
}

static struct krc_sink *wh_create(const struct krc_sink_options *o, const char *url,
                                  struct krc_error *err)
{
    struct webhook_sink *w;

    if (url == NULL || url[0] == '\0') {
        krc_error_set(err, KRC_EINVAL, "Slack webhook sink: no webhook URL");
        return NULL;
    }
    w = krc_calloc(1, sizeof(*w));
    if (w == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    w->base.ops = &krc_sink_slack_webhook;
    w->base.limits.min_interval_ms = o->min_interval_ms;
    w->base.limits.max_payload = WEBHOOK_MAX_PAYLOAD;
    w->url = url;
    krc_log_add_secret(url);
    if (krc_sink_conn_init(&w->conn, o, err) < 0) {
        wh_free(&w->base);
        return NULL;
    }
    return &w->base;
}

static const struct krc_sink_ops krc_sink_slack_webhook = {
    .name = "slack-webhook",
    .create = wh_create,
    .format_restart = krc_slack_sink_format_restart,
    .format_summary = krc_slack_format_summary,
    .format_recovered = krc_slack_format_recovered,
    .send = wh_send,
    .upload = NULL,
    .free = wh_free,
};

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

static const struct krc_dest_setting settings[] = {
    {"url", KRC_DEST_SECRET, KRC_DEST_INLINE | KRC_DEST_REQUIRED | KRC_DEST_HIDDEN, NULL,
     offsetof(struct krc_destination, url), offsetof(struct krc_destination, url_src), NULL},
    {"channel", KRC_DEST_TEXT, 0, NULL, offsetof(struct krc_destination, channel), 0, NULL},
};

const struct krc_dest_kind krc_dest_slack_webhook = {
    .schema = {"slack-webhook", "a Slack incoming webhook", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_slack_webhook,
    .resolves = 0,
    .target = krc_slack_env_webhook_target,
    .target_of_key = krc_slack_env_webhook_target_of_key,
};
