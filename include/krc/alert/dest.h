/* Kinds of destination as plugins. A kind is one file under src/alert/dest/
 * that defines a `const struct krc_dest_kind` with
 *   - its settings table (struct krc_dest_schema, config/destinations.h:
 *     key, how the value is given, flags, default, check), which the
 *     configuration loader reads every destination of the kind with;
 *   - its sink (struct krc_sink_ops, alert/sink.h): the format of a
 *     restart, a storm summary and an incident's "resolved" message, and the
 *     delivery;
 * and one line in src/alert/dest/registry.c lists it. docs/HACKING.md, "How
 * to add a destination", has the steps. */
#ifndef KRC_ALERT_DEST_H
#define KRC_ALERT_DEST_H

#include <stddef.h>

#include "krc/alert/sink.h"
#include "krc/config/config.h"
#include "krc/config/destinations.h"

/* Where one message to a destination goes: its outbox key, its lane (one
 * delivery thread per lane) and the lane's endpoint. */
struct krc_dest_target {
    char key[64];        /* the outbox key (never a URL): "dest:NAME" */
    char lane[1024];     /* the lane: "dest:NAME" */
    const char *url;     /* the lane's endpoint (borrowed), NULL: none */
    const char *channel; /* borrowed, NULL: none */
};

/* What the route stage decided for a restart at a destination that takes
 * the Go tool's settings (alert/policy.h: the route's webhook and channel,
 * the pod's channel, the defaults). */
struct krc_dest_route {
    const char *webhook_url; /* NULL: none */
    const char *channel;     /* NULL: none */
    long route;              /* the route whose webhook it is, -1: the default */
};

struct krc_dest_kind {
    struct krc_dest_schema schema; /* name, help, settings: what the loader reads */
    const struct krc_sink_ops *ops;
    /* 1: a repeat of an incident sends it no update (incidentUpdateInterval): what it
     * shows of the incident stays as the first alert left it until the resolved message
     * (PagerDuty: the incident stays triggered) */
    int no_incident_updates;
    /* --- what the kind says about a destination (NULL: the default of
     * krc_dest_target_of, krc_dest_target_of_key, nothing); target and
     * target_of_key are asked for an implicit destination only (config/
     * destinations.h: the Go tool's Slack settings, whose keys and lanes are
     * its kind's), a declared one always has the default --- */
    /* The target of a restart routed to d as `r` says. */
    void (*target)(const struct krc_destination *d, const struct krc_dest_route *r,
                   struct krc_dest_target *t);
    /* The target of an outbox row of d with key `key` (written by an earlier
     * process), with the routes of the configuration now: 1 and *t; 0 when the
     * key is not d's; KRC_ENOTFOUND when it is d's and the configuration no
     * longer has it. */
    int (*target_of_key)(const struct krc_destination *d, const char *key, const char *channel,
                         const struct krc_route *routes, size_t n_routes,
                         struct krc_dest_target *t);
    /* d's settings into the options its sink is made with. */
    void (*sink_options)(const struct krc_destination *d, struct krc_sink_options *so);
    /* 1: the kind posts threads (a restart within the mute window is a reply
     * to its pod's thread) and takes the previous log as a file; only the
     * implicit destination asks it (a declared one posts each restart on its
     * own, as it always did) */
    int threads;
};

/* Hand the kinds to the configuration loader (krc_dest_schemas_set): the
 * built-in ones of registry.c, then `extra` (n_extra at most 8; a test's
 * kinds, NULL for the program). Call once before a configuration is loaded
 * (main does, and a test that loads one); again to change the extra kinds.
 * KRC_EINVAL when there are too many or a name is taken. */
int krc_dest_registry_init(const struct krc_dest_kind *const *extra, size_t n_extra);

/* krc_dest_registry_init(NULL, 0) unless it was called: the kinds are
 * known to the configuration loader. */
void krc_dest_registry_ensure(void);

/* The kind named `name` (built-in or given to krc_dest_registry_init), or
 * NULL. */
const struct krc_dest_kind *krc_dest_kind_find(const char *name);
/* The names of the kinds (built-in, then extra) into out[max]; returns how
 * many there are. */
size_t krc_dest_kind_names(const char **out, size_t max);
/* The kind of a destination (d->kind), or NULL. */
const struct krc_dest_kind *krc_dest_kind_of(const struct krc_destination *d);
/* The sink of a destination's kind, or NULL. */
const struct krc_sink_ops *krc_dest_ops(const struct krc_destination *d);

/* The target of a restart routed to d (its kind's target, else the
 * default: key and lane "dest:NAME", d's url and channel). */
void krc_dest_target_of(const struct krc_destination *d, const struct krc_dest_route *r,
                        struct krc_dest_target *t);
/* The target of an outbox row of key `key` at d: 1, 0 (not d's) or
 * KRC_ENOTFOUND, as the kind's target_of_key says (default: "dest:NAME"). */
int krc_dest_target_of_key(const struct krc_destination *d, const char *key, const char *channel,
                           const struct krc_route *routes, size_t n_routes,
                           struct krc_dest_target *t);
/* d's settings into its sink's options (the kind's sink_options). */
void krc_dest_sink_options(const struct krc_destination *d, struct krc_sink_options *so);
/* 1 when d's kind posts threads (struct krc_dest_kind.threads). */
int krc_dest_threads(const struct krc_destination *d);
/* 1 when d's kind takes no incident updates (struct krc_dest_kind.no_incident_updates). */
int krc_dest_no_incident_updates(const struct krc_destination *d);

#endif
