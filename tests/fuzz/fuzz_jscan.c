/* jscan: any bytes. Walks the document with the typed calls (as the pod
 * decoder does) and checks that the walk and krc_jscan_skip agree on whether
 * the text is JSON and where it ends, that every string unescapes into at
 * most its raw length as well-formed UTF-8 when the raw text was, and that
 * an integer read by krc_jscan_int64 is the number the text spells. */
#include <string.h>

#include "fuzz.h"
#include "krc/util/jscan.h"

static char scratch[1 << 20];

static int walk(struct krc_jscan *s, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    struct krc_jscan_str str;
    int rc;

    if (t < 0) {
        return t;
    }
    switch (t) {
    case KRC_JSON_OBJECT:
        if ((rc = krc_jscan_object_begin(s, err)) < 0) {
            return rc;
        }
        while ((rc = krc_jscan_object_next(s, &str, err)) == 1) {
            FUZZ_CHECK(str.raw_len <= s->len, "key longer than the input");
            if ((rc = walk(s, err)) < 0) {
                return rc;
            }
        }
        return rc;
    case KRC_JSON_ARRAY:
        if ((rc = krc_jscan_array_begin(s, err)) < 0) {
            return rc;
        }
        while ((rc = krc_jscan_array_next(s, err)) == 1) {
            if ((rc = walk(s, err)) < 0) {
                return rc;
            }
        }
        return rc;
    case KRC_JSON_STRING:
        if ((rc = krc_jscan_string(s, &str, err)) < 0) {
            return rc;
        }
        if (str.raw_len <= sizeof(scratch)) {
            size_t n = krc_jscan_unescape(&str, scratch);
            FUZZ_CHECK(n <= str.raw_len, "unescape grew %zu -> %zu", str.raw_len, n);
            FUZZ_CHECK(str.escaped || (n == str.raw_len && memcmp(scratch, str.raw, n) == 0),
                       "unescaped copy of a string without escapes differs");
            if (fuzz_utf8_ok(str.raw, str.raw_len)) {
                FUZZ_CHECK(fuzz_utf8_ok(scratch, n), "escapes decoded to invalid UTF-8");
            }
            FUZZ_CHECK(str.escaped || str.raw_len > 64 ||
                           krc_jscan_str_eq(&str, str.raw, str.raw_len),
                       "a string is not equal to itself");
        }
        return 0;
    case KRC_JSON_NUMBER: {
        struct krc_jscan copy = *s;
        struct krc_error e2;
        int64_t v;
        size_t start;
        if ((rc = krc_jscan_skip(s, &start, err)) < 0) {
            return rc;
        }
        if (krc_jscan_int64(&copy, &v, &e2) == 0) {
            char text[32];
            size_t n = s->pos - start;
            FUZZ_CHECK(copy.pos == s->pos, "int64 and skip end at different offsets");
            FUZZ_CHECK(n < sizeof(text), "integer of %zu bytes", n);
            memcpy(text, s->buf + start, n);
            text[n] = '\0';
            FUZZ_CHECK(strtoll(text, NULL, 10) == v, "int64 %lld for %s", (long long)v, text);
        }
        return 0;
    }
    case KRC_JSON_TRUE:
    case KRC_JSON_FALSE: {
        int b;
        if ((rc = krc_jscan_bool(s, &b, err)) < 0) {
            return rc;
        }
        FUZZ_CHECK(b == (t == KRC_JSON_TRUE), "bool value");
        return 0;
    }
    default:
        return krc_jscan_null(s, err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct krc_jscan a;
    struct krc_jscan b;
    struct krc_error ea;
    struct krc_error eb;
    size_t start;
    int ra;
    int rb;

    krc_jscan_init(&a, (const char *)data, size, "fuzz");
    krc_jscan_init(&b, (const char *)data, size, "fuzz");
    ra = walk(&a, &ea);
    if (ra == 0) {
        ra = krc_jscan_end(&a, &ea);
    }
    rb = krc_jscan_skip(&b, &start, &eb);
    if (rb > 0) {
        FUZZ_CHECK(a.pos <= size && b.pos <= size, "position past the end");
        rb = krc_jscan_end(&b, &eb);
    }
    FUZZ_CHECK((ra == 0) == (rb == 0), "walk %d (%s) but skip %d (%s)", ra, ra != 0 ? ea.msg : "",
               rb, rb != 0 ? eb.msg : "");
    if (ra != 0) {
        FUZZ_CHECK(ra == KRC_EPARSE && strstr(ea.msg, "fuzz: ") == ea.msg, "error %d: %s", ra,
                   ea.msg);
    }
    return 0;
}
