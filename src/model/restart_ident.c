#include "krc/model/restart_ident.h"

#include <string.h>

/* Copy src into dst[dstsz] ("" for NULL): 1 when it was cut. */
static int copy_field(char *dst, size_t dstsz, const char *src)
{
    size_t n = src != NULL ? strlen(src) : 0;
    int cut = n >= dstsz;

    if (cut) {
        n = dstsz - 1;
    }
    memcpy(dst, src != NULL ? src : "", n);
    dst[n] = '\0';
    return cut;
}

int krc_restart_ident_set(struct krc_restart_ident *id, const char *uid, const char *container,
                          int restart_count, int64_t finished_at, const char *container_id)
{
    int cut = copy_field(id->uid, sizeof(id->uid), uid);

    cut |= copy_field(id->container, sizeof(id->container), container);
    cut |= copy_field(id->container_id, sizeof(id->container_id), container_id);
    id->restart_count = restart_count;
    id->finished_at = finished_at;
    return cut;
}

int krc_restart_ident_known(const struct krc_restart_ident *id)
{
    return id->uid[0] != '\0' && id->container[0] != '\0';
}

const char *krc_restart_ident_container_id(const struct krc_restart_ident *id)
{
    return id->container_id[0] != '\0' ? id->container_id : NULL;
}
