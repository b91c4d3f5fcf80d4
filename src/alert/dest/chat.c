/* What the chat destinations share (teams.c, google_chat.c): the sink of
 * an incoming webhook other than Slack's: Microsoft Teams
 * (a Workflows webhook; 200 or 202 when accepted) and Google Chat (an
 * incoming webhook; the URL gets
 * messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD so that the
 * body's thread.threadKey puts every message of a pod in its thread). The
 * webhook URL is the secret: registered with the log redactor, only its
 * origin is logged. 429 waits Retry-After, 5xx and transport errors back
 * off, other 4xx are final (sink_send.c's loop). */
#include <stdio.h>
#include <string.h>

#include "krc/alert/sink.h"
#include "krc/alert/sink_send.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define GCHAT_REPLY_OPTION "messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"

struct chat_sink {
    struct krc_sink base;
    struct krc_sink_conn conn;
    char *url;        /* owned: the webhook URL (Google Chat: with the reply option) */
    const char *what; /* "Teams", "Google Chat" */
};

static int chat_post(struct krc_sink_conn *c, void *ctx, const char *body,
                     struct krc_http_response *resp, struct krc_sink_result *res,
                     struct krc_error *err)
{
    const struct chat_sink *s = ctx;
    const char *headers[] = {"Content-Type: application/json; charset=utf-8", NULL};
    int rc = krc_sink_http_post(c, s->url, headers, body, strlen(body), c->o.timeout_ms, resp, err);

    return krc_sink_http_answer(rc, resp, res);
}

int krc_chat_sink_send(struct krc_sink *base, const struct krc_sink_message *m,
                       struct krc_sink_result *res, struct krc_error *err)
{
    struct chat_sink *s = (struct chat_sink *)base;
    char origin[256];
    char dest[300];

    krc_http_url_origin(s->url, origin, sizeof(origin));
    snprintf(dest, sizeof(dest), "%s %s", s->what, origin);
    return krc_sink_deliver(&s->conn, s->url, dest, chat_post, s, m->body, NULL, res, err);
}

void krc_chat_sink_free(struct krc_sink *base)
{
    struct chat_sink *s = (struct chat_sink *)base;

    krc_sink_conn_cleanup(&s->conn);
    krc_free(s->url);
    krc_free(s);
}

struct krc_sink *krc_chat_sink_create(const struct krc_sink_options *o, const char *url,
                                      const struct krc_sink_ops *ops, const char *what,
                                      size_t max_payload, int gchat, struct krc_error *err)
{
    struct chat_sink *s;
    size_t len;

    if (url == NULL || url[0] == '\0') {
        krc_error_set(err, KRC_EINVAL, "%s sink: no webhook URL", what);
        return NULL;
    }
    s = krc_calloc(1, sizeof(*s));
    len = strlen(url) + sizeof(GCHAT_REPLY_OPTION) + 2;
    if (s == NULL || (s->url = krc_malloc(len)) == NULL) {
        krc_free(s);
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    if (gchat && strstr(url, "messageReplyOption=") == NULL) {
        snprintf(s->url, len, "%s%c%s", url, strchr(url, '?') != NULL ? '&' : '?',
                 GCHAT_REPLY_OPTION);
    } else {
        snprintf(s->url, len, "%s", url);
    }
    s->base.ops = ops;
    s->base.limits.min_interval_ms = o->min_interval_ms;
    s->base.limits.max_payload = max_payload;
    s->what = what;
    krc_log_add_secret(url);
    krc_log_add_secret(s->url);
    if (krc_sink_conn_init(&s->conn, o, err) < 0) {
        krc_chat_sink_free(&s->base);
        return NULL;
    }
    return &s->base;
}
