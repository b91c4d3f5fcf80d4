#include "krc/util/jscan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Why a string scan stopped. */
enum {
    STR_OK = 0,
    STR_EOF,
    STR_CTRL,
    STR_ESCAPE,
};

static const uint64_t ONES = 0x0101010101010101ULL;
static const uint64_t HIGHS = 0x8080808080808080ULL;

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JSCAN_LE 1
#endif

static inline int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline size_t skip_ws(const char *b, size_t n, size_t p)
{
    while (p < n && is_ws((unsigned char)b[p])) {
        p++;
    }
    return p;
}

static inline int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c |= 0x20;
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

/* Scan the string whose opening quote is at *pp. On success *pp is just past
 * the closing quote; on failure it is the offending position. */
static int scan_string(const char *b, size_t n, size_t *pp, int *ret_escaped)
{
    size_t p = *pp + 1;
    int escaped = 0;

    for (;;) {
        /* 8 bytes at a time until one of '"', '\\' or a control byte. The
         * test has no false negatives; on little endian the lowest flagged
         * byte is exact, elsewhere the byte loop below sorts it out. */
#ifdef __SSE2__
        while (p + 16 <= n) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + p));
            __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                       _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
            int mask;

            /* unsigned x <= 0x1f  <=>  max(x, 0x1f) == 0x1f */
            hit = _mm_or_si128(
                hit, _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f)));
            mask = _mm_movemask_epi8(hit);
            if (mask != 0) {
                p += (size_t)__builtin_ctz((unsigned)mask);
                goto special;
            }
            p += 16;
        }
#endif
        while (p + 8 <= n) {
            uint64_t x;
            uint64_t t;

            memcpy(&x, b + p, 8);
            t = ((x ^ (ONES * '"')) - ONES) & ~(x ^ (ONES * '"'));
            t |= ((x ^ (ONES * '\\')) - ONES) & ~(x ^ (ONES * '\\'));
            t |= (x - ONES * 0x20) & ~x;
            t &= HIGHS;
            if (t != 0) {
#ifdef JSCAN_LE
                p += (size_t)__builtin_ctzll(t) >> 3;
#endif
                break;
            }
            p += 8;
        }
#ifdef __SSE2__
    special:
#endif
        for (;;) {
            unsigned char c;

            if (p >= n) {
                *pp = p;
                return STR_EOF;
            }
            c = (unsigned char)b[p];
            if (c == '"') {
                *pp = p + 1;
                *ret_escaped = escaped;
                return STR_OK;
            }
            if (c == '\\') {
                escaped = 1;
                if (p + 1 >= n) {
                    *pp = p + 1;
                    return STR_EOF;
                }
                c = (unsigned char)b[p + 1];
                if (c == 'u') {
                    int i;
                    for (i = 2; i < 6; i++) {
                        if (p + (size_t)i >= n) {
                            *pp = p + (size_t)i;
                            return STR_EOF;
                        }
                        if (hexval((unsigned char)b[p + (size_t)i]) < 0) {
                            *pp = p;
                            return STR_ESCAPE;
                        }
                    }
                    p += 6;
                } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                           c == 'r' || c == 't') {
                    p += 2;
                } else {
                    *pp = p;
                    return STR_ESCAPE;
                }
                break;
            }
            if (c < 0x20) {
                *pp = p;
                return STR_CTRL;
            }
            p++;
            if ((p & 7) == 0) {
                break; /* back to the word loop */
            }
        }
    }
}

/* Number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? .
 * Returns 0 and *pp past the number, or -1 with *pp at the bad byte (or at
 * n when the input ended inside the number). *ret_int tells whether it had
 * neither fraction nor exponent. */
static int scan_number(const char *b, size_t n, size_t *pp, int *ret_int)
{
    size_t p = *pp;
    int is_int = 1;

    if (p < n && b[p] == '-') {
        p++;
    }
    if (p >= n) {
        *pp = p;
        return -1;
    }
    if (b[p] == '0') {
        p++;
    } else if (b[p] >= '1' && b[p] <= '9') {
        while (p < n && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
    } else {
        *pp = p;
        return -1;
    }
    if (p < n && b[p] == '.') {
        is_int = 0;
        p++;
        if (p >= n || b[p] < '0' || b[p] > '9') {
            *pp = p;
            return -1;
        }
        while (p < n && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
    }
    if (p < n && (b[p] == 'e' || b[p] == 'E')) {
        is_int = 0;
        p++;
        if (p < n && (b[p] == '+' || b[p] == '-')) {
            p++;
        }
        if (p >= n || b[p] < '0' || b[p] > '9') {
            *pp = p;
            return -1;
        }
        while (p < n && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
    }
    *pp = p;
    if (ret_int != NULL) {
        *ret_int = is_int;
    }
    return 0;
}

void krc_jscan_init(struct krc_jscan *s, const char *buf, size_t len, const char *what)
{
    s->buf = buf;
    s->len = len;
    s->pos = 0;
    s->base = 0;
    s->what = what != NULL ? what : "json";
    s->depth = 0;
    s->first = 0;
}

static int vfail(struct krc_jscan *s, struct krc_error *err, const char *fmt, va_list ap)
{
    char msg[KRC_ERROR_MSG_MAX];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    return krc_error_set(err, KRC_EPARSE, "%s: %s at offset %zu", s->what, msg, s->base + s->pos);
}

int krc_jscan_fail(struct krc_jscan *s, struct krc_error *err, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vfail(s, err, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_at(struct krc_jscan *s, size_t pos, struct krc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(struct krc_jscan *s, size_t pos, struct krc_error *err, const char *fmt, ...)
{
    va_list ap;
    int rc;

    s->pos = pos;
    va_start(ap, fmt);
    rc = vfail(s, err, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_eof(struct krc_jscan *s, size_t pos, struct krc_error *err)
{
    return fail_at(s, pos, err, "unexpected end of input");
}

/* "unexpected character 'x'" with non-printable bytes shown as hex. */
static int fail_char(struct krc_jscan *s, size_t pos, struct krc_error *err, const char *expected)
{
    unsigned char c = (unsigned char)s->buf[pos];

    if (c >= 0x20 && c < 0x7f) {
        return fail_at(s, pos, err, "%s, got '%c'", expected, c);
    }
    return fail_at(s, pos, err, "%s, got byte 0x%02x", expected, c);
}

static int fail_string(struct krc_jscan *s, int why, size_t pos, struct krc_error *err)
{
    switch (why) {
    case STR_EOF:
        return fail_at(s, pos, err, "unexpected end of input inside a string");
    case STR_CTRL:
        return fail_at(s, pos, err, "unescaped control character 0x%02x in a string",
                       (unsigned char)s->buf[pos]);
    default:
        return fail_at(s, pos, err, "invalid escape sequence in a string");
    }
}

static int type_of(unsigned char c)
{
    switch (c) {
    case '{':
        return KRC_JSON_OBJECT;
    case '[':
        return KRC_JSON_ARRAY;
    case '"':
        return KRC_JSON_STRING;
    case 't':
        return KRC_JSON_TRUE;
    case 'f':
        return KRC_JSON_FALSE;
    case 'n':
        return KRC_JSON_NULL;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        return KRC_JSON_NUMBER;
    default:
        return 0;
    }
}

const char *krc_jscan_type_name(int type)
{
    switch (type) {
    case KRC_JSON_OBJECT:
        return "object";
    case KRC_JSON_ARRAY:
        return "array";
    case KRC_JSON_STRING:
        return "string";
    case KRC_JSON_NUMBER:
        return "number";
    case KRC_JSON_TRUE:
    case KRC_JSON_FALSE:
        return "boolean";
    case KRC_JSON_NULL:
        return "null";
    default:
        return "invalid value";
    }
}

int krc_jscan_peek(struct krc_jscan *s, struct krc_error *err)
{
    int t;

    s->pos = skip_ws(s->buf, s->len, s->pos);
    if (s->pos >= s->len) {
        return fail_eof(s, s->pos, err);
    }
    t = type_of((unsigned char)s->buf[s->pos]);
    if (t == 0) {
        return fail_char(s, s->pos, err, "expected a value");
    }
    return t;
}

static int expect_type(struct krc_jscan *s, int want, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);

    if (t < 0) {
        return t;
    }
    if (t != want && !(want == KRC_JSON_TRUE && t == KRC_JSON_FALSE)) {
        return krc_jscan_fail(s, err, "expected %s, got %s", krc_jscan_type_name(want),
                              krc_jscan_type_name(t));
    }
    return t;
}

static int open_container(struct krc_jscan *s, int type, struct krc_error *err)
{
    int t = expect_type(s, type, err);

    if (t < 0) {
        return t;
    }
    if (s->depth >= KRC_JSCAN_MAX_DEPTH) {
        return krc_jscan_fail(s, err, "nesting deeper than %d levels", KRC_JSCAN_MAX_DEPTH);
    }
    s->pos++;
    s->depth++;
    s->first |= (uint64_t)1 << (s->depth - 1);
    return 0;
}

int krc_jscan_object_begin(struct krc_jscan *s, struct krc_error *err)
{
    return open_container(s, KRC_JSON_OBJECT, err);
}

int krc_jscan_array_begin(struct krc_jscan *s, struct krc_error *err)
{
    return open_container(s, KRC_JSON_ARRAY, err);
}

/* Returns 1 when this is the first call for the innermost container. */
static int take_first(struct krc_jscan *s)
{
    uint64_t bit;

    if (s->depth == 0) {
        return 0;
    }
    bit = (uint64_t)1 << (s->depth - 1);
    if (s->first & bit) {
        s->first &= ~bit;
        return 1;
    }
    return 0;
}

int krc_jscan_object_next(struct krc_jscan *s, struct krc_jscan_str *ret_key, struct krc_error *err)
{
    const char *b = s->buf;
    size_t n = s->len;
    size_t p = skip_ws(b, n, s->pos);
    size_t start;
    int escaped;
    int why;

    if (s->depth == 0) {
        return krc_jscan_fail(s, err, "internal: object_next outside a container");
    }
    if (p >= n) {
        return fail_eof(s, p, err);
    }
    if (take_first(s)) {
        if (b[p] == '}') {
            goto close;
        }
        if (b[p] != '"') {
            return fail_char(s, p, err, "expected a string key or '}'");
        }
    } else {
        if (b[p] == '}') {
            goto close;
        }
        if (b[p] != ',') {
            return fail_char(s, p, err, "expected ',' or '}'");
        }
        p = skip_ws(b, n, p + 1);
        if (p >= n) {
            return fail_eof(s, p, err);
        }
        if (b[p] != '"') {
            return fail_char(s, p, err, "expected a string key after ','");
        }
    }
    start = p;
    why = scan_string(b, n, &p, &escaped);
    if (why != STR_OK) {
        return fail_string(s, why, p, err);
    }
    ret_key->raw = b + start + 1;
    ret_key->raw_len = p - start - 2;
    ret_key->escaped = escaped;
    p = skip_ws(b, n, p);
    if (p >= n) {
        return fail_eof(s, p, err);
    }
    if (b[p] != ':') {
        return fail_char(s, p, err, "expected ':' after an object key");
    }
    s->pos = p + 1;
    return 1;
close:
    s->pos = p + 1;
    s->depth--;
    return 0;
}

int krc_jscan_array_next(struct krc_jscan *s, struct krc_error *err)
{
    const char *b = s->buf;
    size_t n = s->len;
    size_t p = skip_ws(b, n, s->pos);

    if (s->depth == 0) {
        return krc_jscan_fail(s, err, "internal: array_next outside a container");
    }
    if (p >= n) {
        return fail_eof(s, p, err);
    }
    if (b[p] == ']') {
        take_first(s);
        s->pos = p + 1;
        s->depth--;
        return 0;
    }
    if (take_first(s)) {
        s->pos = p;
        return 1;
    }
    if (b[p] != ',') {
        return fail_char(s, p, err, "expected ',' or ']'");
    }
    s->pos = p + 1;
    return 1;
}

/* The next value when it is of `type`: its container begun (1); else skipped (0). */
static int begin_or_skip(struct krc_jscan *s, int type, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);

    if (t < 0) {
        return t;
    }
    if (t != type) {
        t = krc_jscan_skip(s, NULL, err);
        return t < 0 ? t : 0;
    }
    t = open_container(s, type, err);
    return t < 0 ? t : 1;
}

int krc_jscan_each_item(struct krc_jscan *s, krc_jscan_item_fn fn, void *ctx, struct krc_error *err)
{
    int rc = begin_or_skip(s, KRC_JSON_ARRAY, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        rc = fn(s, ctx, err);
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? rc : 1;
}

int krc_jscan_each_key(struct krc_jscan *s, krc_jscan_key_fn fn, void *ctx, struct krc_error *err)
{
    struct krc_jscan_str key;
    int rc = begin_or_skip(s, KRC_JSON_OBJECT, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &key, err)) == 1) {
        rc = fn(s, &key, ctx, err);
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? rc : 1;
}

int krc_jscan_string(struct krc_jscan *s, struct krc_jscan_str *ret, struct krc_error *err)
{
    size_t p;
    int escaped;
    int why;
    int t = expect_type(s, KRC_JSON_STRING, err);

    if (t < 0) {
        return t;
    }
    p = s->pos;
    why = scan_string(s->buf, s->len, &p, &escaped);
    if (why != STR_OK) {
        return fail_string(s, why, p, err);
    }
    ret->raw = s->buf + s->pos + 1;
    ret->raw_len = p - s->pos - 2;
    ret->escaped = escaped;
    s->pos = p;
    return 0;
}

int krc_jscan_int64(struct krc_jscan *s, int64_t *ret, struct krc_error *err)
{
    size_t p;
    size_t i;
    int is_int = 0;
    int neg;
    uint64_t v = 0;
    uint64_t limit;
    int t = expect_type(s, KRC_JSON_NUMBER, err);

    if (t < 0) {
        return t;
    }
    p = s->pos;
    if (scan_number(s->buf, s->len, &p, &is_int) < 0) {
        if (p >= s->len) {
            return fail_eof(s, p, err);
        }
        return fail_char(s, p, err, "invalid number");
    }
    if (!is_int) {
        return krc_jscan_fail(s, err, "expected an integer, got '%.*s'",
                              (int)(p - s->pos > 32 ? 32 : p - s->pos), s->buf + s->pos);
    }
    i = s->pos;
    neg = s->buf[i] == '-';
    if (neg) {
        i++;
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < p; i++) {
        unsigned d = (unsigned)(s->buf[i] - '0');
        if (v > (limit - d) / 10) {
            return krc_jscan_fail(s, err, "integer out of range");
        }
        v = v * 10 + d;
    }
    if (neg) {
        *ret = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        *ret = (int64_t)v;
    }
    s->pos = p;
    return 0;
}

static int scan_literal(struct krc_jscan *s, size_t *pp, struct krc_error *err)
{
    static const char *const words[] = {"true", "false", "null"};
    const char *w;
    size_t p = *pp;
    size_t wl;
    size_t i;

    switch (s->buf[p]) {
    case 't':
        w = words[0];
        break;
    case 'f':
        w = words[1];
        break;
    default:
        w = words[2];
        break;
    }
    wl = strlen(w);
    for (i = 0; i < wl; i++) {
        if (p + i >= s->len) {
            return fail_eof(s, p + i, err);
        }
        if (s->buf[p + i] != w[i]) {
            return fail_char(s, p + i, err, "invalid literal");
        }
    }
    *pp = p + wl;
    return 0;
}

int krc_jscan_bool(struct krc_jscan *s, int *ret, struct krc_error *err)
{
    size_t p;
    int rc;
    int t = expect_type(s, KRC_JSON_TRUE, err);

    if (t < 0) {
        return t;
    }
    p = s->pos;
    rc = scan_literal(s, &p, err);
    if (rc < 0) {
        return rc;
    }
    *ret = t == KRC_JSON_TRUE;
    s->pos = p;
    return 0;
}

int krc_jscan_null(struct krc_jscan *s, struct krc_error *err)
{
    size_t p;
    int rc;
    int t = expect_type(s, KRC_JSON_NULL, err);

    if (t < 0) {
        return t;
    }
    p = s->pos;
    rc = scan_literal(s, &p, err);
    if (rc < 0) {
        return rc;
    }
    s->pos = p;
    return 0;
}

int krc_jscan_skip(struct krc_jscan *s, size_t *ret_start, struct krc_error *err)
{
    const char *b = s->buf;
    size_t n = s->len;
    size_t p;
    uint64_t objs = 0; /* bit (d-1) set: container at local depth d is an object */
    unsigned d = 0;
    unsigned room;
    int escaped;
    int why;
    int type = krc_jscan_peek(s, err);

    if (type < 0) {
        return type;
    }
    if (ret_start != NULL) {
        *ret_start = s->pos;
    }
    room = s->depth < KRC_JSCAN_MAX_DEPTH ? KRC_JSCAN_MAX_DEPTH - s->depth : 0;
    p = s->pos;

value:
    p = skip_ws(b, n, p);
    if (p >= n) {
        return fail_eof(s, p, err);
    }
    switch (b[p]) {
    case '{':
        if (d >= room) {
            return fail_at(s, p, err, "nesting deeper than %d levels", KRC_JSCAN_MAX_DEPTH);
        }
        objs |= (uint64_t)1 << d;
        d++;
        p = skip_ws(b, n, p + 1);
        if (p >= n) {
            return fail_eof(s, p, err);
        }
        if (b[p] == '}') {
            p++;
            d--;
            goto after;
        }
        goto key;
    case '[':
        if (d >= room) {
            return fail_at(s, p, err, "nesting deeper than %d levels", KRC_JSCAN_MAX_DEPTH);
        }
        objs &= ~((uint64_t)1 << d);
        d++;
        p = skip_ws(b, n, p + 1);
        if (p >= n) {
            return fail_eof(s, p, err);
        }
        if (b[p] == ']') {
            p++;
            d--;
            goto after;
        }
        goto value;
    case '"':
        why = scan_string(b, n, &p, &escaped);
        if (why != STR_OK) {
            return fail_string(s, why, p, err);
        }
        goto after;
    case 't':
    case 'f':
    case 'n': {
        int rc = scan_literal(s, &p, err);
        if (rc < 0) {
            return rc;
        }
        goto after;
    }
    default:
        if (type_of((unsigned char)b[p]) != KRC_JSON_NUMBER) {
            return fail_char(s, p, err, "expected a value");
        }
        if (scan_number(b, n, &p, NULL) < 0) {
            if (p >= n) {
                return fail_eof(s, p, err);
            }
            return fail_char(s, p, err, "invalid number");
        }
        goto after;
    }

key:
    if (b[p] != '"') {
        return fail_char(s, p, err, "expected a string key");
    }
    why = scan_string(b, n, &p, &escaped);
    if (why != STR_OK) {
        return fail_string(s, why, p, err);
    }
    p = skip_ws(b, n, p);
    if (p >= n) {
        return fail_eof(s, p, err);
    }
    if (b[p] != ':') {
        return fail_char(s, p, err, "expected ':' after an object key");
    }
    p++;
    goto value;

after:
    if (d == 0) {
        s->pos = p;
        return type;
    }
    p = skip_ws(b, n, p);
    if (p >= n) {
        return fail_eof(s, p, err);
    }
    if (objs & ((uint64_t)1 << (d - 1))) {
        if (b[p] == ',') {
            p = skip_ws(b, n, p + 1);
            if (p >= n) {
                return fail_eof(s, p, err);
            }
            goto key;
        }
        if (b[p] == '}') {
            p++;
            d--;
            goto after;
        }
        return fail_char(s, p, err, "expected ',' or '}'");
    }
    if (b[p] == ',') {
        p++;
        goto value;
    }
    if (b[p] == ']') {
        p++;
        d--;
        goto after;
    }
    return fail_char(s, p, err, "expected ',' or ']'");
}

int krc_jscan_end(struct krc_jscan *s, struct krc_error *err)
{
    s->pos = skip_ws(s->buf, s->len, s->pos);
    if (s->pos < s->len) {
        return fail_char(s, s->pos, err, "expected end of input after the JSON value");
    }
    return 0;
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The scanner has checked the four digits; unsigned all the same, so that a
 * -1 from hexval could never be shifted (undefined; clang-tidy). */
static uint32_t hex4(const char *p)
{
    uint32_t v = 0;

    for (int i = 0; i < 4; i++) {
        v = v << 4 | ((uint32_t)hexval((unsigned char)p[i]) & 0xfu);
    }
    return v;
}

size_t krc_jscan_unescape(const struct krc_jscan_str *str, char *out)
{
    const char *p = str->raw;
    const char *end = str->raw + str->raw_len;
    size_t o = 0;

    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t)(end - p));
        size_t run = bs != NULL ? (size_t)(bs - p) : (size_t)(end - p);
        uint32_t cp;

        memcpy(out + o, p, run);
        o += run;
        p += run;
        if (bs == NULL || p + 1 >= end) {
            break;
        }
        switch (p[1]) {
        case 'b':
            out[o++] = '\b';
            break;
        case 'f':
            out[o++] = '\f';
            break;
        case 'n':
            out[o++] = '\n';
            break;
        case 'r':
            out[o++] = '\r';
            break;
        case 't':
            out[o++] = '\t';
            break;
        case 'u':
            if (end - p < 6) {
                return o; /* cannot happen on scanned strings */
            }
            cp = hex4(p + 2);
            p += 6;
            if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                uint32_t lo = hex4(p + 2);
                if (lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p += 6;
                }
            }
            if (cp >= 0xd800 && cp <= 0xdfff) {
                cp = 0xfffd;
            }
            o += put_utf8(out + o, cp);
            continue;
        default: /* '"', '\\', '/' */
            out[o++] = p[1];
            break;
        }
        p += 2;
    }
    return o;
}

int krc_jscan_str_eq_slow(const struct krc_jscan_str *str, const char *lit, size_t lit_len)
{
    char tmp[6 * 64];
    size_t n;

    /* Each decoded byte takes at most 6 input bytes. */
    if (lit_len > 64 || str->raw_len > 6 * lit_len) {
        return 0;
    }
    n = krc_jscan_unescape(str, tmp);
    return n == lit_len && memcmp(tmp, lit, lit_len) == 0;
}
