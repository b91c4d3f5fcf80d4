#include "krc/util/text.h"

#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

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

/* ---- sanitising ---------------------------------------------------------------- */

static int is_bidi_control(uint32_t cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int krc_text_unsafe_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp);
}

/* A run of printable ASCII, cut to what fits. */
static int append_run(struct krc_buf *out, const unsigned char *p, size_t n)
{
    size_t room = out->max - out->len;
    size_t take = n < room ? n : room;
    int rc = take > 0 ? krc_buf_append(out, p, take) : 0;

    return rc == 0 && take < n ? KRC_ETOOBIG : rc;
}

/* The Control Picture of a C0 control or DEL: U+2400 + c, DEL U+2421. */
static int append_picture(struct krc_buf *out, unsigned char c)
{
    uint32_t pc = c == 0x7f ? 0x2421 : 0x2400u + c;
    char pic[3];

    pic[0] = (char)(0xe0 | (pc >> 12));
    pic[1] = (char)(0x80 | ((pc >> 6) & 0x3f));
    pic[2] = (char)(0x80 | (pc & 0x3f));
    return krc_buf_append(out, pic, sizeof(pic));
}

int krc_text_sanitize(struct krc_buf *out, const void *data, size_t len, unsigned flags)
{
    const unsigned char *p = data;
    int strip = (flags & KRC_TEXT_STRIP) != 0;
    int lines = (flags & KRC_TEXT_LINES) != 0;
    size_t i = 0;
    int rc = 0;

    while (i < len && rc == 0) {
        size_t run = i;
        uint32_t cp;
        size_t n;

        while (run < len && p[run] >= 0x20 && p[run] < 0x7f) {
            run++;
        }
        if (run > i) {
            rc = append_run(out, p + i, run - i);
            i = run;
            continue;
        }
        if (p[i] == '\r' || p[i] == '\n' || p[i] == '\t') {
            char c = p[i] == '\t' ? '\t' : '\n';
            if (p[i] == '\r' && i + 1 < len && p[i + 1] == '\n') {
                i++;
            }
            i++;
            rc = krc_buf_append_char(out, lines ? c : ' ');
            continue;
        }
        if (p[i] < 0x20 || p[i] == 0x7f) {
            if (!strip) {
                rc = append_picture(out, p[i]);
                i++;
            } else if (p[i] == ESC) {
                i += krc_text_ansi_len(p + i, len - i);
            } else {
                i++;
            }
            continue;
        }
        n = krc_text_utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            rc = krc_buf_append_str(out, KRC_TEXT_REPLACEMENT);
            i++;
        } else if (cp >= 0x80 && cp <= 0x9f) { /* C1 controls */
            rc = strip ? 0 : krc_buf_append_str(out, KRC_TEXT_REPLACEMENT);
            i += n;
        } else if (!strip && is_bidi_control(cp)) {
            rc = krc_buf_append_str(out, KRC_TEXT_REPLACEMENT);
            i += n;
        } else {
            rc = krc_buf_append(out, p + i, n);
            i += n;
        }
    }
    return rc;
}

char *krc_text_safe(const char *s, size_t max, unsigned flags)
{
    struct krc_buf b;
    char *out;

    if (s == NULL) {
        return NULL;
    }
    krc_buf_init(&b, max);
    if (krc_text_sanitize(&b, s, strlen(s), flags) == KRC_ENOMEM) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    out = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    return out;
}

int krc_text_fputs(const char *s, size_t max, unsigned flags, FILE *f)
{
    struct krc_buf b;

    if (s == NULL) {
        return 0;
    }
    krc_buf_init(&b, max);
    if (krc_text_sanitize(&b, s, strlen(s), flags) == KRC_ENOMEM) {
        krc_buf_cleanup(&b);
        return KRC_ENOMEM;
    }
    fputs(krc_buf_str(&b), f);
    krc_buf_cleanup(&b);
    return 0;
}
