#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/jscan.h"

/* Validate a whole document: one value and nothing after it. */
static int validate(const char *doc, size_t len, struct krc_error *err)
{
    struct krc_jscan s;
    int rc;

    krc_jscan_init(&s, doc, len, "t");
    rc = krc_jscan_skip(&s, NULL, err);
    if (rc < 0) {
        return rc;
    }
    return krc_jscan_end(&s, err);
}

static int valid(const char *doc)
{
    struct krc_error err;
    krc_error_clear(&err);
    return validate(doc, strlen(doc), &err) == 0;
}

static void test_valid_documents(void **state)
{
    static const char *const docs[] = {
        "{}",
        "[]",
        " \t\r\n{ \"a\" : [ 1 , -2.5e+3 , 0 , -0 , 0.25 , 1E9 ] , \"b\" : { } } \n",
        "\"\"",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\"",
        "true",
        "false",
        "null",
        "123456789012345678901234567890",
        "[[[[[]]]],{\"\":{\"\":[null,true,false]}}]",
        "{\"k\":\"\xc3\xa9\xff\xfe raw bytes >= 0x80 are accepted\"}",
        "\"a string longer than eight bytes with a \\\" quote in the middle and more text\"",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        if (!valid(docs[i])) {
            fail_msg("rejected valid document %zu: %s", i, docs[i]);
        }
    }
}

static void test_invalid_documents(void **state)
{
    static const char *const docs[] = {
        "",
        "   ",
        "{",
        "{\"a\"",
        "{\"a\":",
        "{\"a\":1",
        "{\"a\":1,}",
        "[1,]",
        "[,1]",
        "{,}",
        "{\"a\" 1}",
        "{a:1}",
        "{'a':1}",
        "[01]",
        "[1.]",
        "[.5]",
        "[-]",
        "[1e]",
        "[1e+]",
        "[+1]",
        "[tru]",
        "[nul]",
        "[falsy]",
        "\"unterminated",
        "\"bad escape \\x\"",
        "\"bad unicode \\u12G4\"",
        "\"short unicode \\u12\"",
        "\"control \x01 char\"",
        "\"newline \n in string\"",
        "{} {}",
        "[1] x",
        "{\"a\":1}}",
        "[1}",
        "{\"a\":1]",
        "NaN",
        "Infinity",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        struct krc_error err;
        krc_error_clear(&err);
        if (validate(docs[i], strlen(docs[i]), &err) != KRC_EPARSE) {
            fail_msg("accepted invalid document %zu: %s", i, docs[i]);
        }
        assert_non_null(strstr(err.msg, "at offset"));
        assert_int_equal(strncmp(err.msg, "t: ", 3), 0);
    }
}

static void test_error_messages(void **state)
{
    struct krc_error err;

    (void)state;
    krc_error_clear(&err);
    assert_int_equal(validate("{\"a\":1 \"b\":2}", 13, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected ',' or '}', got '\"' at offset 7");
    assert_int_equal(err.code, KRC_EPARSE);

    assert_int_equal(validate("[1,2", 4, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: unexpected end of input at offset 4");

    assert_int_equal(validate("{\"a\":\"x\x02\"}", 10, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: unescaped control character 0x02 in a string at offset 7");

    assert_int_equal(validate("[1] x", 5, &err), KRC_EPARSE);
    assert_string_equal(err.msg,
                        "t: expected end of input after the JSON value, got 'x' at offset 4");

    /* a NUL byte inside the buffer is data, not the end */
    assert_int_equal(validate("[1,\0]", 5, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected a value, got byte 0x00 at offset 3");
}

static void test_depth_limit(void **state)
{
    char doc[2 * 200 + 1];
    struct krc_error err;
    int depth;

    (void)state;
    for (depth = 63; depth <= 66; depth++) {
        int i;
        for (i = 0; i < depth; i++) {
            doc[i] = '[';
            doc[depth + i] = ']';
        }
        krc_error_clear(&err);
        if (depth <= KRC_JSCAN_MAX_DEPTH) {
            assert_int_equal(validate(doc, (size_t)(2 * depth), &err), 0);
        } else {
            assert_int_equal(validate(doc, (size_t)(2 * depth), &err), KRC_EPARSE);
            assert_non_null(strstr(err.msg, "nesting deeper than 64 levels"));
        }
    }
    /* levels opened with the pull API count towards the limit of skip() */
    {
        struct krc_jscan s;
        int inner;

        for (inner = 2; inner <= 3; inner++) {
            int open = 62;
            int n = 0;
            int i;

            for (i = 0; i < open + inner; i++) {
                doc[n++] = '[';
            }
            for (i = 0; i < open + inner; i++) {
                doc[n++] = ']';
            }
            krc_jscan_init(&s, doc, (size_t)n, "t");
            for (i = 0; i < open; i++) {
                assert_int_equal(krc_jscan_array_begin(&s, &err), 0);
                assert_int_equal(krc_jscan_array_next(&s, &err), 1);
            }
            if (inner == 2) {
                assert_int_equal(krc_jscan_skip(&s, NULL, &err), KRC_JSON_ARRAY);
            } else {
                assert_int_equal(krc_jscan_skip(&s, NULL, &err), KRC_EPARSE);
                assert_non_null(strstr(err.msg, "nesting"));
            }
        }
    }
}

static void test_huge_nesting_no_crash(void **state)
{
    size_t n = 1000000;
    char *doc = malloc(n);
    struct krc_error err;

    (void)state;
    assert_non_null(doc);
    memset(doc, '[', n);
    assert_int_equal(validate(doc, n, &err), KRC_EPARSE);
    memset(doc, '{', n);
    assert_int_equal(validate(doc, n, &err), KRC_EPARSE);
    free(doc);
}

static void test_truncation_prefixes(void **state)
{
    const char *doc = "{\"metadata\":{\"name\":\"a\\\"b\\u00e9\",\"n\":[1,-2.5e3,true,false,null]},"
                      "\"x\":{\"y\":[{},[]]}}";
    size_t len = strlen(doc);
    size_t i;

    (void)state;
    assert_int_equal(validate(doc, len, NULL), 0);
    for (i = 0; i < len; i++) {
        /* copy so that ASan catches any read past the prefix */
        char *p = malloc(i + 1);
        assert_non_null(p);
        memcpy(p, doc, i);
        if (validate(p, i, NULL) != KRC_EPARSE) {
            fail_msg("prefix of length %zu accepted", i);
        }
        free(p);
    }
}

static void test_random_mutations_no_crash(void **state)
{
    const char *doc = "{\"a\":[1,2,{\"b\":\"c\\n\\u0041\"}],\"d\":null,\"e\":-1.5e-3,\"f\":true}";
    size_t len = strlen(doc);
    unsigned seed = 12345;
    static const char alphabet[] = "{}[]\",:\\u0e-+.tfn 19aE";
    int iter;

    (void)state;
    for (iter = 0; iter < 20000; iter++) {
        char *p = malloc(len);
        int k;
        assert_non_null(p);
        memcpy(p, doc, len);
        for (k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            p[(seed >> 8) % len] = alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        (void)validate(p, len - (seed >> 16) % 4, NULL);
        free(p);
    }
}

static void test_pull_api(void **state)
{
    const char *doc =
        "{\"s\":\"h\\u00e9llo\",\"i\":-42,\"b\":true,\"n\":null,\"a\":[1,2],\"o\":{}}";
    struct krc_jscan s;
    struct krc_jscan_str k;
    struct krc_jscan_str v;
    struct krc_error err;
    char out[64];
    int64_t i64;
    int b;

    (void)state;
    krc_jscan_init(&s, doc, strlen(doc), "t");
    assert_int_equal(krc_jscan_peek(&s, &err), KRC_JSON_OBJECT);
    assert_int_equal(krc_jscan_object_begin(&s, &err), 0);

    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    assert_true(KRC_JSCAN_EQ(&k, "s"));
    assert_int_equal(krc_jscan_string(&s, &v, &err), 0);
    assert_true(v.escaped);
    assert_true(KRC_JSCAN_EQ(&v, "h\xc3\xa9llo"));
    assert_int_equal(krc_jscan_unescape(&v, out), 6);

    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    assert_true(KRC_JSCAN_EQ(&k, "i"));
    assert_int_equal(krc_jscan_peek(&s, &err), KRC_JSON_NUMBER);
    assert_int_equal(krc_jscan_int64(&s, &i64, &err), 0);
    assert_int_equal(i64, -42);

    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    assert_int_equal(krc_jscan_bool(&s, &b, &err), 0);
    assert_int_equal(b, 1);

    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    assert_int_equal(krc_jscan_null(&s, &err), 0);

    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    assert_true(KRC_JSCAN_EQ(&k, "a"));
    assert_int_equal(krc_jscan_array_begin(&s, &err), 0);
    assert_int_equal(krc_jscan_array_next(&s, &err), 1);
    assert_int_equal(krc_jscan_int64(&s, &i64, &err), 0);
    assert_int_equal(krc_jscan_array_next(&s, &err), 1);
    assert_int_equal(krc_jscan_int64(&s, &i64, &err), 0);
    assert_int_equal(i64, 2);
    assert_int_equal(krc_jscan_array_next(&s, &err), 0);

    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    /* type mismatch names both types */
    assert_int_equal(krc_jscan_string(&s, &v, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected string, got object at offset 58");
    assert_int_equal(krc_jscan_skip(&s, NULL, &err), KRC_JSON_OBJECT);
    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 0);
    assert_int_equal(krc_jscan_end(&s, &err), 0);
    assert_int_equal(s.depth, 0);
}

static void test_pull_api_errors(void **state)
{
    struct krc_jscan s;
    struct krc_jscan_str k;
    struct krc_error err;
    int64_t v;

    (void)state;
    /* trailing comma in an object */
    krc_jscan_init(&s, "{\"a\":1,}", 8, "t");
    assert_int_equal(krc_jscan_object_begin(&s, &err), 0);
    assert_int_equal(krc_jscan_object_next(&s, &k, &err), 1);
    assert_int_equal(krc_jscan_int64(&s, &v, &err), 0);
    assert_int_equal(krc_jscan_object_next(&s, &k, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected a string key after ',', got '}' at offset 7");

    /* missing comma in an array */
    krc_jscan_init(&s, "[1 2]", 5, "t");
    assert_int_equal(krc_jscan_array_begin(&s, &err), 0);
    assert_int_equal(krc_jscan_array_next(&s, &err), 1);
    assert_int_equal(krc_jscan_int64(&s, &v, &err), 0);
    assert_int_equal(krc_jscan_array_next(&s, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected ',' or ']', got '2' at offset 3");

    /* missing colon */
    krc_jscan_init(&s, "{\"a\" 1}", 7, "t");
    assert_int_equal(krc_jscan_object_begin(&s, &err), 0);
    assert_int_equal(krc_jscan_object_next(&s, &k, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected ':' after an object key, got '1' at offset 5");

    /* base offset */
    krc_jscan_init(&s, "[x]", 3, "list");
    s.base = 1000;
    assert_int_equal(krc_jscan_skip(&s, NULL, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "list: expected a value, got 'x' at offset 1001");
}

/* What the each_item / each_key callbacks saw: the calls, the keys (joined
 * by '|'), and at which call to stop with which code. */
struct walk_log {
    int calls;
    char keys[128];
    int stop_at;
    int stop_code;
};

static int log_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct walk_log *w = ctx;

    if (++w->calls == w->stop_at) {
        return krc_error_set(err, w->stop_code, "stopped at item %d", w->calls);
    }
    return krc_jscan_skip(s, NULL, err); /* the value's type (> 0): the walk goes on */
}

static int log_key(struct krc_jscan *s, const struct krc_jscan_str *key, void *ctx,
                   struct krc_error *err)
{
    struct walk_log *w = ctx;
    char k[32];
    size_t len = strlen(w->keys);

    if (++w->calls == w->stop_at) {
        return krc_error_set(err, w->stop_code, "stopped at key %d", w->calls);
    }
    assert_true(key->raw_len < sizeof(k));
    k[krc_jscan_unescape(key, k)] = '\0';
    snprintf(w->keys + len, sizeof(w->keys) - len, "%s%s", len ? "|" : "", k);
    return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
}

/* Walk doc with each_item (keys 0) or each_key; returns the walk's code. */
static int walk_doc(const char *doc, int keys, struct walk_log *w, struct krc_jscan *s,
                    struct krc_error *err)
{
    krc_jscan_init(s, doc, strlen(doc), "t");
    krc_error_clear(err);
    return keys ? krc_jscan_each_key(s, log_key, w, err) : krc_jscan_each_item(s, log_item, w, err);
}

static void test_each_item_and_key(void **state)
{
    struct krc_jscan s;
    struct krc_error err;
    struct walk_log w;

    (void)state;
    /* every element, every key (unescaped) in order; the container consumed */
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc(" [1, \"x\", {\"a\": [2]}, null] ", 0, &w, &s, &err), 1);
    assert_int_equal(w.calls, 4);
    assert_int_equal(krc_jscan_end(&s, &err), 0);
    assert_int_equal(s.depth, 0);
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("{\"a\":1,\"b\\u0063\":[2,{}],\"d\":null}", 1, &w, &s, &err), 1);
    assert_int_equal(w.calls, 3);
    assert_string_equal(w.keys, "a|bc|d");
    assert_int_equal(krc_jscan_end(&s, &err), 0);
    /* empty containers: 1, no call */
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("[ ]", 0, &w, &s, &err), 1);
    assert_int_equal(walk_doc("{ }", 1, &w, &s, &err), 1);
    assert_int_equal(w.calls, 0);
    assert_int_equal(s.pos, 3);
}

static void test_each_null_and_other_types(void **state)
{
    static const char *const items_skipped[] = {"null", "{\"a\":[1,2]}", "\"[1]\"", "7", "true"};
    static const char *const keys_skipped[] = {"null", "[{\"a\":1}]", "\"{}\"", "-1.5e3", "false"};
    struct krc_jscan s;
    struct krc_error err;
    struct walk_log w;

    (void)state;
    /* null or another type: skipped whole, no call, 0 */
    for (size_t i = 0; i < sizeof(items_skipped) / sizeof(items_skipped[0]); i++) {
        memset(&w, 0, sizeof(w));
        assert_int_equal(walk_doc(items_skipped[i], 0, &w, &s, &err), 0);
        assert_int_equal(w.calls, 0);
        assert_int_equal(s.pos, strlen(items_skipped[i]));
        assert_int_equal(s.depth, 0);
    }
    for (size_t i = 0; i < sizeof(keys_skipped) / sizeof(keys_skipped[0]); i++) {
        memset(&w, 0, sizeof(w));
        assert_int_equal(walk_doc(keys_skipped[i], 1, &w, &s, &err), 0);
        assert_int_equal(w.calls, 0);
        assert_int_equal(s.pos, strlen(keys_skipped[i]));
        assert_int_equal(s.depth, 0);
    }
    /* a skipped value is still validated */
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("{\"a\":[1,]}", 0, &w, &s, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected a value, got ']' at offset 8");
    assert_int_equal(walk_doc("nul", 1, &w, &s, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: unexpected end of input at offset 3");
    assert_int_equal(w.calls, 0);
}

static void test_each_truncated(void **state)
{
    struct krc_jscan s;
    struct krc_error err;
    struct walk_log w;

    (void)state;
    /* cut inside: the elements before the cut were each seen once */
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("[1,2", 0, &w, &s, &err), KRC_EPARSE);
    assert_int_equal(w.calls, 2);
    assert_string_equal(err.msg, "t: unexpected end of input at offset 4");
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("{\"a\":1,\"b\"", 1, &w, &s, &err), KRC_EPARSE);
    assert_int_equal(w.calls, 1);
    assert_string_equal(w.keys, "a");
    assert_string_equal(err.msg, "t: unexpected end of input at offset 10");
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("[1 2]", 0, &w, &s, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected ',' or ']', got '2' at offset 3");
    /* nothing at all */
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("", 0, &w, &s, &err), KRC_EPARSE);
    assert_int_equal(walk_doc("  ", 1, &w, &s, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: unexpected end of input at offset 2");
    assert_int_equal(w.calls, 0);
    /* every prefix of a document fails (none is a whole value) and never
     * calls more often than the whole one does */
    const char *doc = "{\"a\":[1,{\"b\":2}],\"c\":\"x\",\"d\":{}}";
    for (size_t cut = 0; cut < strlen(doc); cut++) {
        memset(&w, 0, sizeof(w));
        krc_jscan_init(&s, doc, cut, "t");
        assert_int_equal(krc_jscan_each_key(&s, log_key, &w, &err), KRC_EPARSE);
        assert_true(w.calls <= 3);
    }
}

static void test_each_callback_error(void **state)
{
    struct krc_jscan s;
    struct krc_error err;
    struct walk_log w;

    (void)state;
    /* the callback's code and message come back as they are; no call after */
    memset(&w, 0, sizeof(w));
    w.stop_at = 2;
    w.stop_code = KRC_ENOMEM;
    assert_int_equal(walk_doc("[1,2,3]", 0, &w, &s, &err), KRC_ENOMEM);
    assert_int_equal(w.calls, 2);
    assert_string_equal(err.msg, "stopped at item 2");
    memset(&w, 0, sizeof(w));
    w.stop_at = 3;
    w.stop_code = KRC_ETOOBIG;
    assert_int_equal(walk_doc("{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", 1, &w, &s, &err), KRC_ETOOBIG);
    assert_int_equal(w.calls, 3);
    assert_string_equal(w.keys, "a|b");
    assert_int_equal(err.code, KRC_ETOOBIG);
    /* a scanner error inside the callback (a value that does not scan) */
    memset(&w, 0, sizeof(w));
    assert_int_equal(walk_doc("{\"a\":[1,}", 1, &w, &s, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "t: expected a value, got '}' at offset 8");
}

static void test_int64(void **state)
{
    static const struct {
        const char *doc;
        int ok;
        int64_t v;
    } cases[] = {
        {"0", 1, 0},
        {"-0", 1, 0},
        {"9223372036854775807", 1, INT64_MAX},
        {"-9223372036854775808", 1, INT64_MIN},
        {"9223372036854775808", 0, 0},
        {"-9223372036854775809", 0, 0},
        {"99999999999999999999999999", 0, 0},
        {"1.0", 0, 0},
        {"1e3", 0, 0},
        {"\"1\"", 0, 0},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct krc_jscan s;
        struct krc_error err;
        int64_t v = 7;
        int rc;

        krc_jscan_init(&s, cases[i].doc, strlen(cases[i].doc), "t");
        rc = krc_jscan_int64(&s, &v, &err);
        if (cases[i].ok) {
            assert_int_equal(rc, 0);
            assert_true(v == cases[i].v);
        } else {
            assert_int_equal(rc, KRC_EPARSE);
            assert_int_equal(v, 7);
        }
    }
}

static void check_unescape(const char *json_inner, const char *want, size_t want_len)
{
    char doc[256];
    char out[256];
    struct krc_jscan s;
    struct krc_jscan_str v;
    struct krc_error err;
    size_t n;

    snprintf(doc, sizeof(doc), "\"%s\"", json_inner);
    krc_jscan_init(&s, doc, strlen(doc), "t");
    assert_int_equal(krc_jscan_string(&s, &v, &err), 0);
    n = krc_jscan_unescape(&v, out);
    assert_true(n <= v.raw_len);
    assert_int_equal(n, want_len);
    assert_memory_equal(out, want, want_len);
}

static void test_unescape(void **state)
{
    (void)state;
    check_unescape("plain", "plain", 5);
    check_unescape("caf\\u00e9", "caf\xc3\xa9", 5);
    check_unescape("\\u20AC", "\xe2\x82\xac", 3);
    check_unescape("\\ud83d\\ude00!", "\xf0\x9f\x98\x80!", 5);
    check_unescape("\\uD83D\\uDE00", "\xf0\x9f\x98\x80", 4);
    /* lone surrogates become U+FFFD, like Go */
    check_unescape("a\\ud800b",
                   "a\xef\xbf\xbd"
                   "b",
                   5);
    check_unescape("\\udc00", "\xef\xbf\xbd", 3);
    check_unescape("\\ud800\\u0041",
                   "\xef\xbf\xbd"
                   "A",
                   4);
    check_unescape("\\\"\\\\\\/\\b\\f\\n\\r\\t", "\"\\/\b\f\n\r\t", 8);
    check_unescape("\\u0000x", "\0x", 2);
    check_unescape("\\u007f", "\x7f", 1);
    check_unescape("\\u0800", "\xe0\xa0\x80", 3);
}

static void test_str_eq_escaped(void **state)
{
    struct krc_jscan s;
    struct krc_jscan_str v;
    struct krc_error err;
    const char *doc = "\"\\u006detadata\"";

    (void)state;
    krc_jscan_init(&s, doc, strlen(doc), "t");
    assert_int_equal(krc_jscan_string(&s, &v, &err), 0);
    assert_true(KRC_JSCAN_EQ(&v, "metadata"));
    assert_false(KRC_JSCAN_EQ(&v, "metadat"));
    assert_false(KRC_JSCAN_EQ(&v, "metadatax"));
}

static void test_long_strings(void **state)
{
    /* every length around the 8-byte word boundaries, with the quote, an
     * escape or a control byte at every position */
    char doc[64];
    size_t len;
    size_t pos;

    (void)state;
    for (len = 0; len < 40; len++) {
        doc[0] = '"';
        memset(doc + 1, 'a', len);
        doc[len + 1] = '"';
        assert_int_equal(validate(doc, len + 2, NULL), 0);
        for (pos = 1; pos <= len; pos++) {
            doc[pos] = '\x1f';
            assert_int_equal(validate(doc, len + 2, NULL), KRC_EPARSE);
            doc[pos] = '"';
            assert_int_equal(validate(doc, len + 2, NULL), KRC_EPARSE); /* trailing data */
            doc[pos] = '\x80';
            assert_int_equal(validate(doc, len + 2, NULL), 0);
            doc[pos] = 'a';
        }
        if (len >= 1) {
            doc[len] = '\\'; /* escapes the closing quote: unterminated */
            assert_int_equal(validate(doc, len + 2, NULL), KRC_EPARSE);
            doc[len] = 'a';
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_documents),
        cmocka_unit_test(test_invalid_documents),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_huge_nesting_no_crash),
        cmocka_unit_test(test_truncation_prefixes),
        cmocka_unit_test(test_random_mutations_no_crash),
        cmocka_unit_test(test_pull_api),
        cmocka_unit_test(test_pull_api_errors),
        cmocka_unit_test(test_each_item_and_key),
        cmocka_unit_test(test_each_null_and_other_types),
        cmocka_unit_test(test_each_truncated),
        cmocka_unit_test(test_each_callback_error),
        cmocka_unit_test(test_int64),
        cmocka_unit_test(test_unescape),
        cmocka_unit_test(test_str_eq_escaped),
        cmocka_unit_test(test_long_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
