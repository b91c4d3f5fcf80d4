#include "krc/util/text.h"

#include <string.h>

#define ESC 0x1b
#define BEL 0x07

static int is_cont(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

size_t krc_text_utf8_decode(const void *p, size_t len, uint32_t *ret_cp)
{
    const unsigned char *s = p;
    unsigned char c = s[0];
    uint32_t cp;
    size_t n;

    if (c < 0x80) {
        *ret_cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0; /* a continuation byte, an overlong 2-byte lead, or past U+10FFFF */
    }
    if (len < n) {
        return 0;
    }
    for (size_t k = 1; k < n; k++) {
        if (!is_cont(s[k])) {
            return 0;
        }
        cp = (cp << 6) | (s[k] & 0x3fu);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
        return 0;
    }
    *ret_cp = cp;
    return n;
}

int krc_text_utf8_valid(const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t i = 0;

    while (i < len) {
        uint32_t cp;
        size_t n = krc_text_utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            return 0;
        }
        i += n;
    }
    return 1;
}

size_t krc_text_utf8_count(const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        n += !is_cont(p[i]);
    }
    return n;
}

size_t krc_text_utf16_len(const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        n += !is_cont(p[i]);
        n += p[i] >= 0xf0; /* astral: a surrogate pair */
    }
    return n;
}

size_t krc_text_utf8_next(const void *s, size_t len, size_t i)
{
    const unsigned char *p = s;

    i++;
    while (i < len && is_cont(p[i])) {
        i++;
    }
    return i;
}

size_t krc_text_ansi_len(const void *p, size_t len)
{
    const unsigned char *s = p;
    size_t i;

    if (len < 2) {
        return len;
    }
    if (s[1] == '[') {
        for (i = 2; i < len; i++) {
            if (s[i] >= 0x40 && s[i] <= 0x7e) {
                return i + 1;
            }
        }
        return len;
    }
    if (s[1] == ']') {
        for (i = 2; i < len; i++) {
            if (s[i] == BEL) {
                return i + 1;
            }
            if (s[i] == ESC && i + 1 < len && s[i + 1] == '\\') {
                return i + 2;
            }
        }
        return len;
    }
    return 2;
}

size_t krc_text_truncate(char *s, size_t len, size_t size, const char *ellipsis)
{
    size_t e = strlen(ellipsis);

    if (len + e + 1 > size) {
        /* back up to the start of the code point that no longer fits */
        len = size > e + 1 ? size - e - 1 : 0;
        while (len > 0 && is_cont((unsigned char)s[len])) {
            len--;
        }
    }
    if (len + e + 1 <= size) {
        memcpy(s + len, ellipsis, e);
        len += e;
    }
    s[len] = '\0';
    return len;
}
