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

void krc_sink_free(struct krc_sink *s)
{
    if (s != NULL) {
        s->ops->free(s);
    }
}
