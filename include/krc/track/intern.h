/* Interned, reference-counted strings: each distinct string is stored once
 * and named by a 32-bit id, so thousands of template digests that share an
 * image, an env name or a probe pay for it once. Not thread-safe (the
 * tracker's mutex guards it). Id 0 is "no string". */
#ifndef KRC_TRACK_INTERN_H
#define KRC_TRACK_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct krc_intern;

struct krc_intern *krc_intern_new(void);     /* NULL: out of memory */
void krc_intern_free(struct krc_intern *in); /* NULL accepted */

/* The id of s[0..len) with one more reference (added when new); 0: out of
 * memory, or len over KRC_INTERN_MAX_LEN. */
#define KRC_INTERN_MAX_LEN 65535u
uint32_t krc_intern_add(struct krc_intern *in, const char *s, size_t len);
/* The id of s[0..len) without taking a reference; 0 when not interned. */
uint32_t krc_intern_find(const struct krc_intern *in, const char *s, size_t len);
/* One more / one less reference; the string is freed with its last. 0 is
 * ignored. */
void krc_intern_ref(struct krc_intern *in, uint32_t id);
void krc_intern_unref(struct krc_intern *in, uint32_t id);
/* The references held on id (0 for 0). */
uint32_t krc_intern_refs(const struct krc_intern *in, uint32_t id);
/* Borrowed, NUL-terminated, valid while a reference is held; "" for 0.
 * ret_len may be NULL. */
const char *krc_intern_str(const struct krc_intern *in, uint32_t id, size_t *ret_len);
/* Strings held, and their bytes (with the per-string overhead). */
size_t krc_intern_count(const struct krc_intern *in);
size_t krc_intern_bytes(const struct krc_intern *in);

#endif
