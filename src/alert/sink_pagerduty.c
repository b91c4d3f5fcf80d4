/* The PagerDuty sink: Events API v2 (POST /v2/enqueue, 202 Accepted). The
 * routing key is added to each stored event when it is sent; "recovered"
 * messages are resolve events (limits.resolves). 429 is PagerDuty's rate
 * limit (retried after Retry-After, else 1 s), 5xx and transport errors are
 * retried with backoff, 400 (an invalid event) is final. */
#include <stdio.h>
#include <string.h>

#include "krc/alert/sink.h"
#include "krc/alert/sink_formats.h"
#include "krc/alert/slack_send.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

struct pd_sink {
    struct krc_sink base;
    struct krc_slack_conn conn;
    const char *url; /* borrowed from the destination */
    const char *routing_key;
};

static int pd_post(struct krc_slack_conn *c, void *ctx, const char *body,
                   struct krc_http_response *resp, struct krc_sink_result *res,
                   struct krc_error *err)
{
    const struct pd_sink *p = ctx;
    const char *headers[] = {"Content-Type: application/json", NULL};
    char *event = krc_pagerduty_with_key(body, p->routing_key, err);
    int rc;

    if (event == NULL) {
        return err != NULL && err->code < 0 ? err->code : KRC_ENOMEM;
    }
    rc = krc_slack_http_post(c, p->url, headers, event, strlen(event), c->o.timeout_ms, resp, err);
    krc_free(event);
    return krc_sink_http_answer(rc, resp, res);
}

static int pd_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    struct pd_sink *p = (struct pd_sink *)s;
    char origin[256];
    char dest[300];
    int rc;

    krc_http_url_origin(p->url, origin, sizeof(origin));
    snprintf(dest, sizeof(dest), "PagerDuty %s", origin);
    rc = krc_slack_deliver(&p->conn, p->url, dest, pd_post, p, m->body, NULL, res, err);
    if (rc == KRC_EPARSE) {
        /* a stored event that is not JSON will never be: give up on it */
        if (err != NULL) {
            err->http_status = 400;
        }
        res->http_status = 400;
        return KRC_EHTTP;
    }
    return rc;
}

static void pd_free(struct krc_sink *s)
{
    struct pd_sink *p = (struct pd_sink *)s;

    krc_slack_conn_cleanup(&p->conn);
    krc_free(p);
}

static struct krc_sink *pd_create(const struct krc_sink_options *o, const char *url,
                                  struct krc_error *err)
{
    const struct krc_destination *d = o->destination;
    struct pd_sink *p;

    if (d == NULL || url == NULL || url[0] == '\0' || d->secret == NULL || d->secret[0] == '\0') {
        krc_error_set(err, KRC_EINVAL, "PagerDuty sink: needs a destination with a routing key");
        return NULL;
    }
    p = krc_calloc(1, sizeof(*p));
    if (p == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    p->base.ops = &krc_sink_pagerduty;
    p->base.limits.min_interval_ms = o->min_interval_ms;
    p->base.limits.max_payload = KRC_PD_MAX_PAYLOAD;
    p->base.limits.resolves = 1;
    p->url = url;
    p->routing_key = d->secret;
    krc_log_add_secret(d->secret);
    if (krc_slack_conn_init(&p->conn, o, err) < 0) {
        pd_free(&p->base);
        return NULL;
    }
    return &p->base;
}

const struct krc_sink_ops krc_sink_pagerduty = {
    .name = "pagerduty",
    .create = pd_create,
    .format_restart = krc_pagerduty_format_restart,
    .format_summary = krc_pagerduty_format_summary,
    .format_recovered = krc_pagerduty_format_recovered,
    .send = pd_send,
    .upload = NULL,
    .free = pd_free,
};
