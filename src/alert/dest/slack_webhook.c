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
#include "krc/util/url.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/test_message.h"

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

/* Slack's answers to an incoming webhook (a status and a plain-text code). */
static const char *wh_explain(long status, const char *error)
{
    static const struct {
        const char *code;
        const char *why;
    } words[] = {
        {"no_service", "this webhook was revoked or mistyped"},
        {"invalid_token", "the token is not valid (revoked or mistyped)"},
        {"no_team", "the webhook's workspace is gone, or the URL is mistyped"},
        {"team_disabled", "the webhook's workspace is disabled"},
        {"channel_not_found", "the channel is gone (or the channel setting names none)"},
        {"channel_is_archived", "the channel is archived: unarchive it or make a new webhook"},
        {"action_prohibited", "an administrator restricted posting to this channel"},
        {"posting_to_general_channel_denied", "only administrators may post in this channel"},
        {"user_not_found", "the channel setting names a user that does not exist"},
        {"invalid_payload", "Slack could not read the message (krc sends a plain-text one)"},
        {"no_text", "Slack found no text in the message (krc sends a plain-text one)"},
        {"too_many_attachments", "the message has too many attachments"},
    };

    (void)status;
    for (size_t i = 0; error != NULL && i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcmp(error, words[i].code) == 0) {
            return words[i].why;
        }
    }
    return NULL;
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
    .explain = wh_explain,
    .format_test = krc_test_format_slack,
};

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

/* The shape of a webhook URL on Slack's own hosts (hooks.slack.com, and
 * GovSlack's hooks.slack-gov.com): /services/T.../B.../SECRET. Another
 * host is taken as it is: a proxy or relay in front of Slack (the scheme
 * and host rules still hold). The sentence never quotes the URL. */
static int check_webhook_url(const char *url, char *why, size_t whysz)
{
    struct krc_url_parts u;
    const char *p;
    int parts = 0;

    if (krc_url_split(url, &u) != KRC_URL_OK ||
        (!krc_url_host_is(&u, "hooks.slack.com") && !krc_url_host_is(&u, "hooks.slack-gov.com"))) {
        return 0;
    }
    if (u.path_len >= 11 &&
        (strncmp(u.path, "/workflows/", 11) == 0 || strncmp(u.path, "/triggers/", 10) == 0)) {
        snprintf(
            why, whysz,
            "is a Workflow Builder webhook, which takes its own variables, not krc's "
            "messages: make an incoming webhook (https://hooks.slack.com/services/T.../B.../...)");
        return -1;
    }
    if (u.path_len > 10 && strncmp(u.path, "/services/", 10) == 0) {
        p = u.path + 10;
        while (p < u.path + u.path_len) {
            size_t l = strcspn(p, "/?#");
            if (l == 0 || p + l > u.path + u.path_len) {
                break;
            }
            parts++;
            p += l;
            if (*p == '/') {
                p++;
            }
        }
        if (parts == 3 && p == u.path + u.path_len && u.path[u.path_len - 1] != '/') {
            return 0;
        }
    }
    snprintf(why, whysz,
             "is on Slack's webhook host but not an incoming webhook's shape "
             "(https://hooks.slack.com/services/T.../B.../...): copied in part?");
    return -1;
}

static const struct krc_dest_setting settings[] = {
    {"url", KRC_DEST_SECRET, KRC_DEST_INLINE | KRC_DEST_REQUIRED | KRC_DEST_HIDDEN, NULL,
     offsetof(struct krc_destination, url), offsetof(struct krc_destination, url_src),
     check_webhook_url},
    {"channel", KRC_DEST_TEXT, 0, NULL, offsetof(struct krc_destination, channel), 0, NULL},
};

const struct krc_dest_kind krc_dest_slack_webhook = {
    .schema = {"slack-webhook", "a Slack incoming webhook", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_slack_webhook,
    .target = krc_slack_env_webhook_target,
    .target_of_key = krc_slack_env_webhook_target_of_key,
};
