/* The Go tool's Slack settings as a destination (config/destinations.h:
 * krc_dest_slack_env, an implicit destination of kind slack-webhook or
 * slack-api): its targets and outbox keys, which the kinds' operations
 * (alert/dest.h) give.
 *
 * Incoming webhooks: one lane per webhook URL (the default one, or a
 * route's webhookUrl), outbox key "webhook:default" or "route:N" (the
 * route's index: never the URL, a secret). The Web API: one lane "api" and
 * key "api"; the channel is the route's, the pod's alert-slack-channel or
 * the default. The keys are those of every earlier version of krc, so the
 * rows an earlier process left pending resume after an upgrade. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/alert/dest.h"
#include "krc/alert/dest/slack.h"
#include "krc/util/error.h"

#define SLACK_API_URL "https://slack.com/api"

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

void krc_slack_env_webhook_target(const struct krc_destination *d, const struct krc_dest_route *r,
                                  struct krc_dest_target *t)
{
    (void)d;
    if (r->route >= 0) {
        snprintf(t->key, sizeof(t->key), "route:%ld", r->route);
    } else {
        snprintf(t->key, sizeof(t->key), "webhook:default");
    }
    snprintf(t->lane, sizeof(t->lane), "%s", r->webhook_url != NULL ? r->webhook_url : "");
    t->url = r->webhook_url;
    t->channel = r->channel;
}

int krc_slack_env_webhook_target_of_key(const struct krc_destination *d, const char *key,
                                        const char *channel, const struct krc_route *routes,
                                        size_t n_routes, struct krc_dest_target *t)
{
    const char *webhook = NULL;

    if (strncmp(key, "dest:", 5) == 0) {
        return 0; /* a declared destination's */
    }
    if (strcmp(key, "webhook:default") == 0) {
        webhook = d->url;
    } else if (strncmp(key, "route:", 6) == 0) {
        char *end;
        long i = strtol(key + 6, &end, 10);
        if (*end == '\0' && i >= 0 && (size_t)i < n_routes) {
            webhook = routes[i].webhook_url;
        }
    }
    if (!nonempty(webhook)) {
        return KRC_ENOTFOUND; /* "api", or the configuration no longer has it */
    }
    snprintf(t->key, sizeof(t->key), "%s", key);
    snprintf(t->lane, sizeof(t->lane), "%s", webhook);
    t->url = webhook;
    t->channel = channel;
    return 1;
}

void krc_slack_env_api_target(const struct krc_destination *d, const struct krc_dest_route *r,
                              struct krc_dest_target *t)
{
    (void)d;
    snprintf(t->key, sizeof(t->key), "api");
    snprintf(t->lane, sizeof(t->lane), "api");
    t->url = NULL;
    t->channel = r->channel;
}

/* Every row that is not a declared destination's goes to the Web API in
 * its channel, under its own key (a "webhook:default" row of a krc that
 * used a webhook before is posted with the token now). */
int krc_slack_env_api_target_of_key(const struct krc_destination *d, const char *key,
                                    const char *channel, const struct krc_route *routes,
                                    size_t n_routes, struct krc_dest_target *t)
{
    (void)d;
    (void)routes;
    (void)n_routes;
    if (strncmp(key, "dest:", 5) == 0) {
        return 0;
    }
    snprintf(t->key, sizeof(t->key), "%s", key);
    snprintf(t->lane, sizeof(t->lane), "api");
    t->url = NULL;
    t->channel = channel;
    return 1;
}

void krc_slack_api_sink_options(const struct krc_destination *d, struct krc_sink_options *so)
{
    so->bot_token = d->secret;
    so->api_url = d->api_url != NULL ? d->api_url : SLACK_API_URL;
}
