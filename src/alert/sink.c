#include "krc/alert/sink.h"

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

const struct krc_sink_ops *krc_sink_ops_for(enum krc_dest_type type)
{
    switch (type) {
    case KRC_DEST_SLACK_WEBHOOK:
        return &krc_sink_slack_webhook;
    case KRC_DEST_SLACK_API:
        return &krc_sink_slack_api;
    case KRC_DEST_WEBHOOK:
        return &krc_sink_webhook;
    case KRC_DEST_PAGERDUTY:
        return &krc_sink_pagerduty;
    case KRC_DEST_TEAMS:
        return &krc_sink_teams;
    case KRC_DEST_GOOGLE_CHAT:
        return &krc_sink_google_chat;
    case KRC_DEST_KUBERNETES_EVENT:
        return &krc_sink_kube_event;
    }
    return NULL;
}

void krc_sink_free(struct krc_sink *s)
{
    if (s != NULL) {
        s->ops->free(s);
    }
}
