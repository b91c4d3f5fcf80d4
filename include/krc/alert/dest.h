/* Kinds of destination as plugins. A kind is one file under src/alert/dest/
 * that defines a `const struct krc_dest_kind` with
 *   - its settings table (struct krc_dest_schema, config/destinations.h:
 *     key, how the value is given, flags, default, check), which the
 *     configuration loader reads every destination of the kind with;
 *   - its sink (struct krc_sink_ops, alert/sink.h): the format of a
 *     restart, a storm summary and a "recovered" message, and the delivery;
 * and one line in src/alert/dest/registry.c lists it. docs/HACKING.md, "How
 * to add a destination", has the steps. */
#ifndef KRC_ALERT_DEST_H
#define KRC_ALERT_DEST_H

#include <stddef.h>

#include "krc/alert/sink.h"
#include "krc/config/destinations.h"

struct krc_dest_kind {
    struct krc_dest_schema schema; /* name, help, settings: what the loader reads */
    const struct krc_sink_ops *ops;
    /* its sink takes "recovered" messages without threads (a resolve, a
     * thread of its own): the sender tracks recoveries for it */
    int resolves;
};

/* Hand the kinds to the configuration loader (krc_dest_schemas_set): the
 * built-in ones of registry.c, then `extra` (n_extra at most 8; a test's
 * kinds, NULL for the program). Call once before a configuration is loaded
 * (main does, and a test that loads one); again to change the extra kinds.
 * KRC_EINVAL when there are too many or a name is taken. */
int krc_dest_registry_init(const struct krc_dest_kind *const *extra, size_t n_extra);

/* The kind named `name` (built-in or given to krc_dest_registry_init), or
 * NULL. */
const struct krc_dest_kind *krc_dest_kind_find(const char *name);
/* The kind of a destination (d->kind), or NULL. */
const struct krc_dest_kind *krc_dest_kind_of(const struct krc_destination *d);
/* The sink of a destination's kind, or NULL. */
const struct krc_sink_ops *krc_dest_ops(const struct krc_destination *d);

#endif
