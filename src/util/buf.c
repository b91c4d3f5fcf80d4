#include "krc/util/buf.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

void krc_buf_init(struct krc_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void krc_buf_cleanup(struct krc_buf *b)
{
    krc_free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void krc_buf_reset(struct krc_buf *b)
{
    b->len = 0;
    if (b->data != NULL) {
        b->data[0] = '\0';
    }
}

static int reserve(struct krc_buf *b, size_t extra)
{
    size_t need;
    size_t cap;
    char *p;

    if (extra > b->max || b->len > b->max - extra) {
        return KRC_ETOOBIG;
    }
    need = b->len + extra + 1;
    if (need <= b->cap) {
        return 0;
    }
    cap = b->cap ? b->cap : 64;
    while (cap < need) {
        cap *= 2;
    }
    if (cap > b->max + 1) {
        cap = b->max + 1;
    }
    p = krc_realloc(b->data, cap);
    if (p == NULL) {
        return KRC_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int krc_buf_append(struct krc_buf *b, const void *data, size_t len)
{
    int rc = reserve(b, len);

    if (rc < 0) {
        return rc;
    }
    if (len > 0) {
        memcpy(b->data + b->len, data, len);
    }
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int krc_buf_append_str(struct krc_buf *b, const char *s)
{
    return krc_buf_append(b, s, strlen(s));
}

int krc_buf_append_char(struct krc_buf *b, char c)
{
    return krc_buf_append(b, &c, 1);
}

int krc_buf_vprintf(struct krc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    int rc;

    va_copy(ap2, ap);
    /* clang-tidy: ap2 is initialised by va_copy (clang 14's va_list model misses it) */
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        return KRC_EINVAL;
    }
    rc = reserve(b, (size_t)n);
    if (rc < 0) {
        return rc;
    }
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int krc_buf_printf(struct krc_buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = krc_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

static int append_json_str(struct krc_buf *b, const char *s, size_t len);

/* All or nothing: on failure the buffer is as it was. */
int krc_buf_append_json_str(struct krc_buf *b, const char *s, size_t len)
{
    size_t before = b->len;
    int rc = append_json_str(b, s, len);

    if (rc < 0 && b->data != NULL) {
        b->len = before;
        b->data[before] = '\0';
    }
    return rc;
}

static int append_json_str(struct krc_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t start = 0;
    size_t i;
    int rc;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[7];
        size_t esc_len = 2;

        if (c >= 0x20 && c != '"' && c != '\\') {
            continue;
        }
        rc = krc_buf_append(b, s + start, i - start);
        if (rc < 0) {
            return rc;
        }
        esc[0] = '\\';
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 0xf];
            esc_len = 6;
            break;
        }
        rc = krc_buf_append(b, esc, esc_len);
        if (rc < 0) {
            return rc;
        }
        start = i + 1;
    }
    return krc_buf_append(b, s + start, len - start);
}

void krc_buf_consume(struct krc_buf *b, size_t n)
{
    if (n >= b->len) {
        krc_buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *krc_buf_take(struct krc_buf *b)
{
    char *s = b->data;

    if (s == NULL) {
        return krc_strdup("");
    }
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return s;
}

const char *krc_buf_str(const struct krc_buf *b)
{
    return b->data != NULL ? b->data : "";
}
