/* Error codes and the error detail carried up through the layers. */
#ifndef KRC_ERROR_H
#define KRC_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum {
    KRC_OK = 0,
    KRC_ENOMEM = -1,     /* allocation failed */
    KRC_EINVAL = -2,     /* bad argument or bad input value */
    KRC_EIO = -3,        /* file or transport error */
    KRC_ETIMEOUT = -4,   /* a deadline passed (request timeout, silent stream) */
    KRC_EAUTH = -5,      /* 401 or 403 */
    KRC_EGONE = -6,      /* 410 Gone / Expired */
    KRC_ERATELIMIT = -7, /* 429 */
    KRC_EHTTP = -8,      /* any other unexpected HTTP status */
    KRC_EPARSE = -9,     /* malformed JSON/YAML */
    KRC_ETOOBIG = -10,   /* a hard size limit was hit */
    KRC_ECANCELED = -11, /* shutdown requested */
    KRC_ENOTFOUND = -12, /* 404 or a missing entry */
    KRC_EUNSUPPORTED = -13,
    KRC_ECONFLICT = -14, /* 409 */
};

#define KRC_ERROR_MSG_MAX 512

/* Detail for an error: the code, the HTTP status if one was involved, the
 * server's Retry-After in seconds (-1 or 0 when absent: test > 0) and a
 * one-line message. */
struct krc_error {
    int code;
    int http_status;
    int retry_after;
    char msg[KRC_ERROR_MSG_MAX];
};

/* Set err (ignores NULL) and return code, so callers can write
 * `return krc_error_set(err, KRC_EIO, "...")`. */
int krc_error_set(struct krc_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int krc_error_vset(struct krc_error *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Prefix the existing message with more context: "context: old message". */
void krc_error_prefix(struct krc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void krc_error_clear(struct krc_error *err);

/* Static name of a code, e.g. "timeout". */
const char *krc_strerror(int code);

/* errno's text, thread-safe (XSI strerror_r, unlike strerror, whose buffer
 * is shared by all threads): written to buf, which is returned. */
const char *krc_errno_str(int errnum, char *buf, size_t bufsz);
/* The same with a buffer that lives until the end of the enclosing block
 * (a compound literal): for use as an argument, e.g. of krc_error_set. */
#define KRC_ERRNO_STR(errnum) krc_errno_str((errnum), (char[128]){0}, 128)

#endif
