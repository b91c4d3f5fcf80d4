#include "krc/alert/sink.h"

#include <stdio.h>
#include <string.h>

void krc_sink_options_defaults(struct krc_sink_options *o)
{
    memset(o, 0, sizeof(*o));
    o->api_url = "https://slack.com/api";
    o->min_interval_ms = 1000;
    o->max_attempts = 8;
    o->timeout_ms = 15000;
    o->backoff_initial_ms = 1000;
    o->backoff_max_ms = 60000;
}

void krc_sink_free(struct krc_sink *s)
{
    if (s != NULL) {
        s->ops->free(s);
    }
}

/* The words for a status when the kind has none. */
static const char *generic(long status)
{
    if (status >= 200 && status < 300) {
        return "sent";
    }
    switch (status) {
    case 0:
        return "no answer (connection, TLS or time-out: see the log)";
    case 400:
        return "the service refused the request as malformed";
    case 401:
    case 403:
        return "the credentials were refused (a revoked or mistyped URL, token or key)";
    case 404:
    case 410:
        return "the service knows no such endpoint (deleted, revoked or mistyped)";
    case 413:
        return "the message is larger than the service takes";
    case 429:
        return "rate limited by the service";
    default:
        break;
    }
    if (status >= 500) {
        return "the service failed; a later try may work";
    }
    return "refused by the service";
}

void krc_sink_explain(const struct krc_sink_ops *ops, long status, const char *error, char *out,
                      size_t outsz)
{
    const char *why = ops != NULL && ops->explain != NULL ? ops->explain(status, error) : NULL;
    const char *code = error != NULL && error[0] != '\0' ? error : NULL;

    if (why == NULL) {
        /* a 200 with an error code is a refusal (Slack's Web API: ok:false) */
        why = status >= 200 && status < 300 && code != NULL ? "refused by the service"
                                                            : generic(status);
    }
    if (status >= 200 && status < 300 && code == NULL) {
        code = "ok";
    }
    if (status == 0) {
        snprintf(out, outsz, "%s", why);
    } else {
        snprintf(out, outsz, "%ld%s%s: %s", status, code != NULL ? " " : "",
                 code != NULL ? code : "", why);
    }
}
