/* A strict, allocation-free pull scanner for JSON text.
 *
 * The caller walks the document it expects (object_begin / object_next /
 * string / int64 / skip ...) and the scanner validates the full JSON grammar
 * on the way: string escapes (\uXXXX and surrogate pairs included), numbers,
 * literals, commas and colons, and a nesting limit of KRC_JSCAN_MAX_DEPTH.
 * Values the caller does not need are skipped with krc_jscan_skip(), which is
 * iterative and scans string contents 8 bytes at a time.
 *
 * Nothing is copied: strings come back as borrowed views into the input with
 * a flag telling whether they contain escapes; krc_jscan_unescape() decodes
 * them into caller storage. Bytes >= 0x80 inside strings are accepted as they
 * are (invalid UTF-8 is not rejected); raw control characters are rejected.
 *
 * Errors are KRC_EPARSE with a message "<what>: <problem> at offset <n>",
 * where <what> is the label given at init and <n> the byte offset in the
 * whole input (plus `base`). After an error the scanner must not be used
 * further. No function reads outside [buf, buf + len). */
#ifndef KRC_JSCAN_H
#define KRC_JSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "krc/util/error.h"

#define KRC_JSCAN_MAX_DEPTH 64

enum krc_json_type {
    KRC_JSON_OBJECT = 1,
    KRC_JSON_ARRAY,
    KRC_JSON_STRING,
    KRC_JSON_NUMBER,
    KRC_JSON_TRUE,
    KRC_JSON_FALSE,
    KRC_JSON_NULL,
};

/* Scanner state; embed it on the stack. Fields are read-only for callers
 * except `base`, which may be set after init. */
struct krc_jscan {
    const char *buf; /* borrowed input */
    size_t len;
    size_t pos;       /* offset of the next byte to look at */
    size_t base;      /* added to offsets in error messages (framing context) */
    const char *what; /* borrowed label for error messages, e.g. "watch event" */
    unsigned depth;   /* open containers */
    uint64_t first;   /* bit (depth-1): the innermost open container has no member yet */
};

/* A string as it appears in the input, without the quotes. Borrowed. */
struct krc_jscan_str {
    const char *raw;
    size_t raw_len;
    int escaped; /* contains backslash escapes; unescape before use */
};

/* `buf` and `what` are borrowed for the scanner's lifetime. */
void krc_jscan_init(struct krc_jscan *s, const char *buf, size_t len, const char *what);

/* Type of the next value (after whitespace), without consuming it; or
 * KRC_EPARSE at end of input or on a byte that cannot start a value. */
int krc_jscan_peek(struct krc_jscan *s, struct krc_error *err);

/* Static name of a type, e.g. "string" (for error messages). */
const char *krc_jscan_type_name(int type);

/* Consume '{'. Then call krc_jscan_object_next() until it returns 0: it
 * returns 1 with the next key in `ret_key` (the ':' consumed, the value
 * must be consumed next), 0 after the closing '}', or KRC_EPARSE. */
int krc_jscan_object_begin(struct krc_jscan *s, struct krc_error *err);
int krc_jscan_object_next(struct krc_jscan *s, struct krc_jscan_str *ret_key,
                          struct krc_error *err);

/* Consume '['. krc_jscan_array_next() returns 1 when an element follows (to
 * be consumed next), 0 after the closing ']', or KRC_EPARSE. */
int krc_jscan_array_begin(struct krc_jscan *s, struct krc_error *err);
int krc_jscan_array_next(struct krc_jscan *s, struct krc_error *err);

/* Walk an array (an object) with a callback per element (per key, the ':'
 * consumed). The callback consumes that one value and returns 0 (any value
 * >= 0) to go on, or a negative code, which ends the walk and is returned as
 * it is. A value of another type, null included, is skipped (and validated)
 * without a call: the caller reads what it expects and passes over the rest.
 * Returns 1 after an array (an object), 0 after another value, KRC_EPARSE, or
 * the callback's code. */
typedef int (*krc_jscan_item_fn)(struct krc_jscan *s, void *ctx, struct krc_error *err);
typedef int (*krc_jscan_key_fn)(struct krc_jscan *s, const struct krc_jscan_str *key, void *ctx,
                                struct krc_error *err);
int krc_jscan_each_item(struct krc_jscan *s, krc_jscan_item_fn fn, void *ctx,
                        struct krc_error *err);
int krc_jscan_each_key(struct krc_jscan *s, krc_jscan_key_fn fn, void *ctx, struct krc_error *err);

/* Consume a string / an integer / a boolean / null. KRC_EPARSE when the next
 * value has another type (message names both types) or is malformed;
 * krc_jscan_int64 also rejects fractions, exponents and out-of-range values. */
int krc_jscan_string(struct krc_jscan *s, struct krc_jscan_str *ret, struct krc_error *err);
int krc_jscan_int64(struct krc_jscan *s, int64_t *ret, struct krc_error *err);
int krc_jscan_bool(struct krc_jscan *s, int *ret, struct krc_error *err);
int krc_jscan_null(struct krc_jscan *s, struct krc_error *err);

/* Consume (and validate) the next value of any type, however deep. Returns
 * its type. `ret_start`, when not NULL, receives the offset of its first
 * byte; the value then spans [*ret_start, s->pos). */
int krc_jscan_skip(struct krc_jscan *s, size_t *ret_start, struct krc_error *err);

/* Succeeds when only whitespace remains. */
int krc_jscan_end(struct krc_jscan *s, struct krc_error *err);

/* Report a caller-detected problem at the current position, in the same
 * "<what>: <msg> at offset <n>" form. Returns KRC_EPARSE. */
int krc_jscan_fail(struct krc_jscan *s, struct krc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Decode `str` into `out`, which must have room for str->raw_len bytes (the
 * decoded form is never longer). Returns the decoded length; no NUL is
 * added. Lone surrogates decode to U+FFFD (as Go's encoding/json does).
 * Only valid on strings returned by this scanner. */
size_t krc_jscan_unescape(const struct krc_jscan_str *str, char *out);

/* Compare a scanned string with a literal of at most 64 bytes. */
int krc_jscan_str_eq_slow(const struct krc_jscan_str *str, const char *lit, size_t lit_len);
static inline int krc_jscan_str_eq(const struct krc_jscan_str *str, const char *lit, size_t lit_len)
{
    if (!str->escaped) {
        return str->raw_len == lit_len && memcmp(str->raw, lit, lit_len) == 0;
    }
    return krc_jscan_str_eq_slow(str, lit, lit_len);
}
/* Compare with a string literal: KRC_JSCAN_EQ(&key, "metadata"). */
#define KRC_JSCAN_EQ(str, lit) krc_jscan_str_eq((str), "" lit, sizeof(lit) - 1)

#endif
