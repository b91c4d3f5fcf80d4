/* Two fact lists (digest.h, each sorted by key) -> short items a person
 * reads: "image api:1.4.2 → api:1.4.3", "memory limit 1Gi → 512Mi",
 * "env DB_URL added", "taint gpu=broken:NoSchedule added". Never a value
 * the facts do not hold (an env value is not among them). */
#ifndef KRC_TRACK_DIFF_H
#define KRC_TRACK_DIFF_H

#include <stddef.h>

#include "krc/util/buf.h"

struct krc_track_items {
    struct krc_buf buf; /* the items, each ended by '\n' */
    size_t n;           /* items in buf (at most max) */
    size_t more;        /* differences past max */
    size_t max;
};

void krc_track_items_init(struct krc_track_items *it, size_t max);
void krc_track_items_cleanup(struct krc_track_items *it);
/* Add one item (printf); counted in more once max are there. KRC_ENOMEM,
 * KRC_ETOOBIG. */
int krc_track_items_add(struct krc_track_items *it, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The differences from old to cur, in key order (images first). KRC_ENOMEM. */
int krc_track_diff(const char *const *old, size_t n_old, const char *const *cur, size_t n_cur,
                   struct krc_track_items *out);

/* An image as the items show it: its last path part ("api:1.4.3"), a
 * digest cut to 12 hex digits. out >= 1 byte. */
void krc_track_short_image(const char *image, char *out, size_t outsz);

#endif
