/* Private to src/util: what the redactor's files share (include/krc/util/redact.h
 * is the interface). redact.c runs the built-in pass and the extra patterns,
 * redact_keys.c holds the key rule and key=value, redact_tokens.c the shapes
 * of tokens and private key blocks. The character classes and the output
 * are inline here: the scanners call them for every byte. */
#ifndef KRC_REDACT_PRIVATE_H
#define KRC_REDACT_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/redact.h"

#define MARK KRC_REDACT_MARK
#define MARK_LEN (sizeof(MARK) - 1)
#define KEY_MAX 96       /* longest key name looked at in key=value */
#define QUOTED_MAX 4096  /* longest quoted value redacted */
#define USERINFO_MAX 512 /* longest user:password looked at in a URL */
#define PEM_LABEL_MAX 64 /* "RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY", ... */

/* ---- character classes ------------------------------------------------ */

static inline int is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline int is_alnum(unsigned char c)
{
    return is_alpha(c) || is_digit(c);
}

static inline int is_word(unsigned char c)
{
    return is_alnum(c) || c == '_';
}

static inline int is_upper_alnum(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || is_digit(c);
}

static inline int is_b64url(unsigned char c)
{
    return is_word(c) || c == '-';
}

/* characters of an opaque token (bearer values, base64, base64url) */
static inline int is_tok(unsigned char c)
{
    return is_word(c) || c == '-' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

static inline int is_key_char(unsigned char c)
{
    return is_word(c) || c == '-' || c == '.';
}

static inline int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static inline unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static inline int has_prefix(const unsigned char *p, size_t len, size_t i, const char *s)
{
    size_t n = strlen(s);

    return len - i >= n && memcmp(p + i, s, n) == 0;
}

static inline int has_prefix_ci(const unsigned char *p, size_t len, size_t i, const char *s)
{
    size_t n = strlen(s);
    size_t k;

    if (len - i < n) {
        return 0;
    }
    for (k = 0; k < n; k++) {
        if (lower(p[i + k]) != (unsigned char)s[k]) {
            return 0;
        }
    }
    return 1;
}

/* End of the run of bytes of class `cls` starting at i (at most `max` long). */
static inline size_t run_end(const unsigned char *p, size_t len, size_t i,
                             int (*cls)(unsigned char), size_t max)
{
    size_t lim = len - i > max ? i + max : len;

    while (i < lim && cls(p[i])) {
        i++;
    }
    return i;
}

/* First occurrence of s in p[from..len), or SIZE_MAX. */
static inline size_t find(const unsigned char *p, size_t len, size_t from, const char *s)
{
    size_t n = strlen(s);
    size_t i;

    for (i = from; i + n <= len; i++) {
        const unsigned char *q = memchr(p + i, s[0], len - n + 1 - i);
        if (q == NULL) {
            return SIZE_MAX;
        }
        i = (size_t)(q - p);
        if (memcmp(q, s, n) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

static inline int is_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

static inline int is_lower(unsigned char c)
{
    return c >= 'a' && c <= 'z';
}

/* ---- output ------------------------------------------------------------ */

/* ---- output ------------------------------------------------------------ */

struct out {
    const unsigned char *p;
    size_t copied; /* input bytes up to here are already in `b` */
    struct krc_buf *b;
    int count;
    int rc;
};

/* Copy the input up to `upto`, then the mark; the input resumes at `resume`. */
static inline void replace(struct out *o, size_t upto, size_t resume)
{
    if (o->rc == 0 && upto > o->copied) {
        o->rc = krc_buf_append(o->b, o->p + o->copied, upto - o->copied);
    }
    if (o->rc == 0) {
        o->rc = krc_buf_append(o->b, MARK, MARK_LEN);
    }
    o->copied = resume;
    o->count++;
}

/* A word of a list with its length (the lists are compared with every key
 * followed by a separator: no strlen per comparison). */
struct lit {
    const char *s;
    size_t n;
};

/* clang-format off */
#define LIT(s) {(s), sizeof(s) - 1}
#define LIST_LEN(list) (sizeof(list) / sizeof((list)[0]))
/* clang-format on */

/* ---- the scanners the built-in pass calls -------------------------------- */

/* redact_keys.c: try key=value at i (a word boundary). Returns 1 and
 * redacts on a match; otherwise 0 with *ret_skip = end of the key (no pair
 * can start inside). */
int krc_redact_try_key_value(struct out *o, size_t len, size_t i, size_t *ret_skip);

/* redact_tokens.c: an END line with no BEGIN before it (the start of the
 * key material, SIZE_MAX when none); the end of a private key header at
 * "-----BEGIN " (0: not one); a JWT at "eyJ"; a provider token, cloud key or
 * other token shape at i (0: none); "bearer TOKEN" (the token's [start,
 * end) or 0). */
size_t krc_redact_orphan_pem_start(const unsigned char *p, size_t len, size_t *ret_end_at);
size_t krc_redact_pem_header_end(const unsigned char *p, size_t len, size_t i, const char *kw,
                                 int *ret_plain);
size_t krc_redact_jwt_end(const unsigned char *p, size_t len, size_t i, size_t *ret_skip);
size_t krc_redact_token_end(const unsigned char *p, size_t len, size_t i);
size_t krc_redact_bearer_token(const unsigned char *p, size_t len, size_t i, size_t *ret_start);

#endif
