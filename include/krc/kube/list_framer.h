/* Incremental framer for a Kubernetes List response body.
 *
 * The body ({"kind":"PodList","metadata":{...},"items":[{...},...]}) is fed
 * in arbitrary chunks (down to one byte) as the transport delivers it; each
 * complete element of "items" is validated (full JSON grammar) and handed to
 * a callback as JSON text, so a list of any length is processed in memory
 * bounded by the largest single item (hard cap `max_item`) plus the small
 * top-level values. Items lying entirely inside one chunk are passed without
 * copying.
 *
 * Top-level keys may come in any order (metadata after items is fine);
 * "items": null and "items": [] are both empty. After the body ends,
 * krc_list_framer_finish() checks it was complete and the list's
 * metadata.resourceVersion / metadata.continue are available.
 *
 * An item larger than max_item is skipped, not failed: its first bytes
 * (at most KRC_LIST_FRAMER_HEAD) are kept, the rest is scanned for the
 * item's end without being kept, and the skip callback (if set) names it;
 * the list goes on. Its JSON grammar is not checked (nothing reads it).
 *
 * Errors: KRC_EPARSE "list: <problem> at offset <n>" (offset in the body),
 * KRC_ETOOBIG for a key or top-level value over max_item, and for a Status body (kind "Status",
 * e.g. a 410 Expired) finish() fails with a code mapped from the Status code
 * (410 -> KRC_EGONE, 401/403 -> KRC_EAUTH, 429 -> KRC_ERATELIMIT, else
 * KRC_EHTTP), err->http_status set, and its reason and message quoted. */
#ifndef KRC_LIST_FRAMER_H
#define KRC_LIST_FRAMER_H

#include <stddef.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"

/* Called for each element of items; `json` (not NUL-terminated) is borrowed
 * for the duration of the call. Return non-zero to stop: feed() returns that
 * value and the framer refuses further input until reset. */
typedef int (*krc_list_item_cb)(const char *json, size_t len, void *userdata);

/* Largest head of a skipped item kept for the skip callback. */
#define KRC_LIST_FRAMER_HEAD 65536

/* Called once for each item over max_item when its end has been read:
 * `index` is its position in items, `head` (borrowed for the call, not
 * NUL-terminated) its first head_len bytes (min(KRC_LIST_FRAMER_HEAD,
 * max_item); fewer only when memory for them could not be had), and `size`
 * its length in bytes. userdata is feed()'s. */
typedef void (*krc_list_skip_cb)(size_t index, const char *head, size_t head_len, size_t size,
                                 void *userdata);

struct krc_list_framer {
    size_t max_item;
    int state;
    int error;             /* sticky error code, 0 when none */
    struct krc_error last; /* its detail, repeated on later calls */
    size_t off;            /* body bytes consumed */
    size_t n_items;        /* items delivered */
    size_t n_skipped;      /* items skipped for their size */
    int seen_items;
    krc_list_skip_cb on_skip; /* may be NULL */
    int skipping;             /* inside an item over max_item: scanned, only its head kept */
    size_t skip_size;         /* its bytes so far */
    int key;                  /* which top-level key the current value belongs to */
    /* the value being accumulated: a key, a top-level value or an item */
    struct krc_buf val;
    size_t val_start; /* body offset of its first byte */
    int vkind;
    size_t vdepth;
    int vin_str;
    int vesc;
    /* captured top-level fields, owned (krc_free) */
    char *kind;
    char *resource_version;
    char *continue_token;
    char *reason;
    char *message;
    int code;
};

/* Embedded init/cleanup. max_item: largest accepted item (and top-level
 * value) in bytes. Never allocates; KRC_EINVAL for 0. */
int krc_list_framer_init(struct krc_list_framer *lf, size_t max_item);
void krc_list_framer_cleanup(struct krc_list_framer *lf);
/* Start a new body; keeps the allocation (and the skip callback). */
void krc_list_framer_reset(struct krc_list_framer *lf);
/* The callback for items over max_item (NULL: skipped silently). */
void krc_list_framer_set_skip(struct krc_list_framer *lf, krc_list_skip_cb on_skip);

/* Feed body bytes. 0, a negative KRC_E* (sticky), or the callback's
 * non-zero return value. */
int krc_list_framer_feed(struct krc_list_framer *lf, const char *data, size_t len,
                         krc_list_item_cb on_item, void *userdata, struct krc_error *err);

/* The body has ended: 0 when it was one complete list object. */
int krc_list_framer_finish(struct krc_list_framer *lf, struct krc_error *err);

/* Items delivered so far (inside the callback: including the current one).
 * Skipped items are not counted here but in krc_list_framer_skipped_count. */
size_t krc_list_framer_item_count(const struct krc_list_framer *lf);
size_t krc_list_framer_skipped_count(const struct krc_list_framer *lf);
/* Borrowed, valid until reset/cleanup; NULL when absent. continue is NULL
 * when absent or "" (last page). */
const char *krc_list_framer_resource_version(const struct krc_list_framer *lf);
const char *krc_list_framer_continue(const struct krc_list_framer *lf);
/* Top-level "kind" ("PodList", "Status", ...) or NULL when absent. */
const char *krc_list_framer_kind(const struct krc_list_framer *lf);

#endif
