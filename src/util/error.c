#include "krc/util/error.h"

#include <stdio.h>
#include <string.h>

int krc_error_vset(struct krc_error *err, int code, const char *fmt, va_list ap)
{
    if (err == NULL) {
        return code;
    }
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    return code;
}

int krc_error_set(struct krc_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    krc_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void krc_error_prefix(struct krc_error *err, const char *fmt, ...)
{
    char prefix[KRC_ERROR_MSG_MAX];
    char old[KRC_ERROR_MSG_MAX];
    va_list ap;

    if (err == NULL) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    old[sizeof(old) - 1] = '\0';
    if (old[0] != '\0') {
        snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
    } else {
        snprintf(err->msg, sizeof(err->msg), "%s", prefix);
    }
}

void krc_error_clear(struct krc_error *err)
{
    if (err != NULL) {
        memset(err, 0, sizeof(*err));
    }
}

const char *krc_strerror(int code)
{
    switch (code) {
    case KRC_OK:
        return "ok";
    case KRC_ENOMEM:
        return "out of memory";
    case KRC_EINVAL:
        return "invalid argument";
    case KRC_EIO:
        return "i/o error";
    case KRC_ETIMEOUT:
        return "timeout";
    case KRC_EAUTH:
        return "not authorized";
    case KRC_EGONE:
        return "gone";
    case KRC_ERATELIMIT:
        return "rate limited";
    case KRC_EHTTP:
        return "http error";
    case KRC_EPARSE:
        return "parse error";
    case KRC_ETOOBIG:
        return "too big";
    case KRC_ECANCELED:
        return "canceled";
    case KRC_ENOTFOUND:
        return "not found";
    case KRC_EUNSUPPORTED:
        return "not supported";
    case KRC_ECONFLICT:
        return "conflict";
    default:
        return "unknown error";
    }
}

const char *krc_errno_str(int errnum, char *buf, size_t bufsz)
{
    if (bufsz == 0) {
        return "";
    }
    if (strerror_r(errnum, buf, bufsz) != 0) {
        snprintf(buf, bufsz, "error %d", errnum);
    }
    return buf;
}
