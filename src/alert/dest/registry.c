/* The kinds of destination (curl's protocol table is the model): one line
 * each below, in the order the loader lists them in its errors ("types:
 * slack-webhook, slack-api, ..."). Each kind is defined in its own file of
 * this folder (alert/dest.h). */
#include "krc/alert/dest.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"

#define KRC_DEST_KINDS(X)                                                                          \
    X(krc_dest_slack_webhook)                                                                      \
    X(krc_dest_slack_api)                                                                          \
    X(krc_dest_pagerduty)                                                                          \
    X(krc_dest_teams)                                                                              \
    X(krc_dest_google_chat)                                                                        \
    X(krc_dest_webhook)                                                                            \
    X(krc_dest_kube_event)

#define DECLARE(k) extern const struct krc_dest_kind k;
#define ADDRESS(k) &(k),

KRC_DEST_KINDS(DECLARE)

static const struct krc_dest_kind *const builtin[] = {KRC_DEST_KINDS(ADDRESS)};

#define N_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))
#define MAX_EXTRA 8

/* What the loader was given: the built-in kinds' schemas, then the extra ones. */
static const struct krc_dest_kind *extras[MAX_EXTRA];
static size_t n_extras;
static const struct krc_dest_schema *schemas[N_BUILTIN + MAX_EXTRA];

int krc_dest_registry_init(const struct krc_dest_kind *const *extra, size_t n_extra)
{
    size_t n = 0;

    if (n_extra > MAX_EXTRA) {
        return KRC_EINVAL;
    }
    for (size_t i = 0; i < n_extra; i++) {
        for (size_t j = 0; j < N_BUILTIN; j++) {
            if (strcmp(extra[i]->schema.name, builtin[j]->schema.name) == 0) {
                return KRC_EINVAL;
            }
        }
    }
    for (size_t i = 0; i < N_BUILTIN; i++) {
        schemas[n++] = &builtin[i]->schema;
    }
    for (size_t i = 0; i < n_extra; i++) {
        extras[i] = extra[i];
        schemas[n++] = &extra[i]->schema;
    }
    n_extras = n_extra;
    krc_dest_schemas_set(schemas, n);
    return 0;
}

void krc_dest_registry_ensure(void)
{
    if (krc_dest_schema_find(builtin[0]->schema.name) == NULL) {
        (void)krc_dest_registry_init(NULL, 0);
    }
}

const struct krc_dest_kind *krc_dest_kind_find(const char *name)
{
    for (size_t i = 0; i < N_BUILTIN; i++) {
        if (strcmp(builtin[i]->schema.name, name) == 0) {
            return builtin[i];
        }
    }
    for (size_t i = 0; i < n_extras; i++) {
        if (strcmp(extras[i]->schema.name, name) == 0) {
            return extras[i];
        }
    }
    return NULL;
}

size_t krc_dest_kind_names(const char **out, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < N_BUILTIN; i++, n++) {
        if (n < max) {
            out[n] = builtin[i]->schema.name;
        }
    }
    for (size_t i = 0; i < n_extras; i++, n++) {
        if (n < max) {
            out[n] = extras[i]->schema.name;
        }
    }
    return n;
}

const struct krc_dest_kind *krc_dest_kind_of(const struct krc_destination *d)
{
    return d->kind != NULL ? krc_dest_kind_find(d->kind->name) : NULL;
}

const struct krc_sink_ops *krc_dest_ops(const struct krc_destination *d)
{
    const struct krc_dest_kind *k = krc_dest_kind_of(d);

    return k != NULL ? k->ops : NULL;
}

void krc_dest_target_of(const struct krc_destination *d, const struct krc_dest_route *r,
                        struct krc_dest_target *t)
{
    const struct krc_dest_kind *k = krc_dest_kind_of(d);

    memset(t, 0, sizeof(*t));
    if (k != NULL && k->target != NULL && d->implicit) {
        k->target(d, r, t);
        return;
    }
    snprintf(t->key, sizeof(t->key), "dest:%s", d->name);
    snprintf(t->lane, sizeof(t->lane), "dest:%s", d->name);
    t->url = d->url;
    t->channel = d->channel;
}

int krc_dest_target_of_key(const struct krc_destination *d, const char *key, const char *channel,
                           const struct krc_route *routes, size_t n_routes,
                           struct krc_dest_target *t)
{
    const struct krc_dest_kind *k = krc_dest_kind_of(d);

    memset(t, 0, sizeof(*t));
    if (k != NULL && k->target_of_key != NULL && d->implicit) {
        return k->target_of_key(d, key, channel, routes, n_routes, t);
    }
    if (strncmp(key, "dest:", 5) != 0 || strcmp(key + 5, d->name) != 0) {
        return 0;
    }
    krc_dest_target_of(d, NULL, t);
    return 1;
}

void krc_dest_sink_options(const struct krc_destination *d, struct krc_sink_options *so)
{
    const struct krc_dest_kind *k = krc_dest_kind_of(d);

    so->destination = d;
    if (k != NULL && k->sink_options != NULL) {
        k->sink_options(d, so);
    }
}

int krc_dest_threads(const struct krc_destination *d)
{
    const struct krc_dest_kind *k = d != NULL ? krc_dest_kind_of(d) : NULL;

    return k != NULL && k->threads;
}

int krc_dest_no_incident_updates(const struct krc_destination *d)
{
    const struct krc_dest_kind *k = d != NULL ? krc_dest_kind_of(d) : NULL;

    return k != NULL && k->no_incident_updates;
}
