/* Stand-in for store_pg.c (issue 17) until it is merged: a krc built
 * without the PostgreSQL backend refuses postgres:// targets. Deleted when
 * store_pg.c lands. Only open() is ever called (it never succeeds). */
#include <stddef.h>

#include "krc/store/backend.h"

static int absent_open(const char *target, const char *display, unsigned flags,
                       const struct krc_store_options *o, struct krc_store_be **ret,
                       struct krc_error *err)
{
    (void)target, (void)flags, (void)o, (void)ret;
    return krc_error_set(err, KRC_EUNSUPPORTED, "%s: this krc was built without PostgreSQL support",
                         display);
}

const struct krc_store_backend krc_store_pg_backend = {
    .name = "postgres",
    .shared = 1,
    .open = absent_open,
};
