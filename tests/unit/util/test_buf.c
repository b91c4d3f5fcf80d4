/* krc_buf: limits, clean failures, JSON escaping, consume, take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

static void test_empty(void **state)
{
    struct krc_buf b;
    (void)state;

    krc_buf_init(&b, 100);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_string_equal(krc_buf_str(&b), "");
    krc_buf_reset(&b);
    krc_buf_consume(&b, 5);
    assert_string_equal(krc_buf_str(&b), "");
    krc_buf_cleanup(&b);
    krc_buf_cleanup(&b);
}

static void test_append_and_terminate(void **state)
{
    struct krc_buf b;
    (void)state;

    krc_buf_init(&b, 1024);
    assert_int_equal(krc_buf_append_str(&b, "hello"), 0);
    assert_int_equal(krc_buf_append_char(&b, ','), 0);
    assert_int_equal(krc_buf_append(&b, " world!!", 6), 0);
    assert_int_equal(krc_buf_printf(&b, " %d-%s", 42, "x"), 0);
    assert_int_equal(b.len, strlen("hello, world 42-x"));
    assert_string_equal(krc_buf_str(&b), "hello, world 42-x");
    assert_int_equal(b.data[b.len], '\0');
    /* empty appends are fine */
    assert_int_equal(krc_buf_append(&b, "", 0), 0);
    assert_int_equal(krc_buf_append(&b, NULL, 0), 0);
    assert_int_equal(krc_buf_printf(&b, "%s", ""), 0);
    assert_string_equal(krc_buf_str(&b), "hello, world 42-x");
    /* binary content with NUL bytes */
    krc_buf_reset(&b);
    assert_int_equal(krc_buf_append(&b, "a\0b", 3), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\0b\0", 4);
    krc_buf_cleanup(&b);
}

static void test_limit_exact_and_over(void **state)
{
    struct krc_buf b;
    (void)state;

    krc_buf_init(&b, 10);
    assert_int_equal(krc_buf_append_str(&b, "0123456789"), 0); /* exactly max */
    assert_int_equal(b.len, 10);
    assert_true(b.cap <= 11); /* never more than max + NUL */
    assert_int_equal(krc_buf_append_char(&b, 'x'), KRC_ETOOBIG);
    assert_int_equal(krc_buf_append_str(&b, "x"), KRC_ETOOBIG);
    assert_int_equal(krc_buf_printf(&b, "%d", 1), KRC_ETOOBIG);
    assert_int_equal(krc_buf_append_json_str(&b, "x", 1), KRC_ETOOBIG);
    assert_int_equal(b.len, 10);
    assert_string_equal(krc_buf_str(&b), "0123456789");
    /* still usable after a failure */
    krc_buf_consume(&b, 5);
    assert_int_equal(krc_buf_append_str(&b, "abcde"), 0);
    assert_string_equal(krc_buf_str(&b), "56789abcde");
    krc_buf_cleanup(&b);

    /* one append larger than the limit, on an empty and a non-empty buffer */
    krc_buf_init(&b, 8);
    assert_int_equal(krc_buf_append_str(&b, "123456789"), KRC_ETOOBIG);
    assert_int_equal(b.len, 0);
    assert_string_equal(krc_buf_str(&b), "");
    assert_int_equal(krc_buf_append_str(&b, "abc"), 0);
    assert_int_equal(krc_buf_append_str(&b, "defghi"), KRC_ETOOBIG);
    assert_int_equal(krc_buf_printf(&b, "%s", "defghi"), KRC_ETOOBIG);
    assert_int_equal(b.len, 3);
    assert_string_equal(krc_buf_str(&b), "abc");
    /* sizes that would overflow size_t arithmetic */
    assert_int_equal(krc_buf_append(&b, "x", SIZE_MAX), KRC_ETOOBIG);
    assert_int_equal(krc_buf_append(&b, "x", SIZE_MAX - 2), KRC_ETOOBIG);
    assert_string_equal(krc_buf_str(&b), "abc");
    krc_buf_cleanup(&b);

    /* max 0: only the empty string */
    krc_buf_init(&b, 0);
    assert_int_equal(krc_buf_append_char(&b, 'a'), KRC_ETOOBIG);
    assert_int_equal(krc_buf_append(&b, "", 0), 0);
    assert_string_equal(krc_buf_str(&b), "");
    krc_buf_cleanup(&b);
}

static void test_growth(void **state)
{
    struct krc_buf b;
    char *expect = malloc(100001);
    (void)state;

    assert_non_null(expect);
    krc_buf_init(&b, 100000);
    for (int i = 0; i < 100000; i++) {
        char c = (char)('a' + i % 26);
        expect[i] = c;
        assert_int_equal(krc_buf_append_char(&b, c), 0);
    }
    expect[100000] = '\0';
    assert_int_equal(b.len, 100000);
    assert_true(b.cap <= 100001);
    assert_string_equal(b.data, expect);
    assert_int_equal(krc_buf_append_char(&b, 'z'), KRC_ETOOBIG);
    krc_buf_cleanup(&b);
    free(expect);
}

static void test_enomem_leaves_buffer(void **state)
{
    struct krc_buf b;
    (void)state;

    krc_buf_init(&b, 1 << 20);
    krc_mem_fail_after(0);
    assert_int_equal(krc_buf_append_str(&b, "abc"), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    assert_null(b.data);
    assert_string_equal(krc_buf_str(&b), "");
    assert_int_equal(krc_buf_append_str(&b, "abc"), 0);
    /* growing past the first allocation fails cleanly */
    {
        char big[200];
        memset(big, 'x', sizeof(big));
        krc_mem_fail_after(0);
        assert_int_equal(krc_buf_append(&b, big, sizeof(big)), KRC_ENOMEM);
        assert_int_equal(krc_buf_printf(&b, "%.*s", 150, big), KRC_ENOMEM);
        krc_mem_fail_after(-1);
    }
    assert_int_equal(b.len, 3);
    assert_string_equal(krc_buf_str(&b), "abc");
    krc_buf_cleanup(&b);
}

static void check_json(const char *in, size_t len, const char *want)
{
    struct krc_buf b;

    krc_buf_init(&b, 4096);
    assert_int_equal(krc_buf_append_str(&b, "["), 0);
    assert_int_equal(krc_buf_append_json_str(&b, in, len), 0);
    assert_int_equal(krc_buf_append_str(&b, "]"), 0);
    assert_string_equal(krc_buf_str(&b), want);
    krc_buf_cleanup(&b);
}

static void test_json_escaping(void **state)
{
    char all_ctrl[32];
    struct krc_buf b;
    (void)state;

    check_json("plain text", 10, "[plain text]");
    check_json("", 0, "[]");
    check_json("say \"hi\"", 8, "[say \\\"hi\\\"]");
    check_json("C:\\dir\\", 7, "[C:\\\\dir\\\\]");
    check_json("a\nb\rc\td", 7, "[a\\nb\\rc\\td]");
    check_json("\x01\x1f", 2, "[\\u0001\\u001f]");
    check_json("\b\f", 2, "[\\u0008\\u000c]");
    check_json("a\0b", 3, "[a\\u0000b]"); /* the length counts, not the NUL */
    check_json("x\x7fy", 3, "[x\x7fy]");  /* DEL needs no escape in JSON */
    check_json("/</script>", 10, "[/</script>]");
    check_json("caf\xc3\xa9 \xe2\x9c\x93", 9, "[caf\xc3\xa9 \xe2\x9c\x93]"); /* UTF-8 as is */
    check_json("abc", 2, "[ab]");
    check_json("\"\"\\\\", 4, "[\\\"\\\"\\\\\\\\]");

    /* every control character becomes an escape, and nothing below 0x20 stays raw */
    for (int i = 0; i < 32; i++) {
        all_ctrl[i] = (char)i;
    }
    krc_buf_init(&b, 4096);
    assert_int_equal(krc_buf_append_json_str(&b, all_ctrl, 32), 0);
    for (size_t i = 0; i < b.len; i++) {
        assert_true((unsigned char)b.data[i] >= 0x20);
    }
    assert_non_null(strstr(b.data, "\\u0000\\u0001"));
    assert_non_null(strstr(b.data, "\\u001e\\u001f"));
    krc_buf_cleanup(&b);
}

/* An append that does not fit fails cleanly: the buffer is unchanged
 * (buf.h, and house style: "an append that fails cleanly with
 * KRC_ETOOBIG"). BUG (src/util/buf.c krc_buf_append_json_str): the escaped text is
 * appended piece by piece, so a value that does not fit leaves its first
 * pieces behind, e.g. a JSON string cut in the middle. */
static void test_fixed_json_str_too_big_leaves_buffer_unchanged(void **state)
{
    struct krc_buf b;
    int rc;
    (void)state;

    krc_buf_init(&b, 16);
    assert_int_equal(krc_buf_append_str(&b, "{\"m\":\""), 0);
    rc = krc_buf_append_json_str(&b, "line one\nline two\n", 18);
    assert_int_equal(rc, KRC_ETOOBIG);
    assert_string_equal(krc_buf_str(&b), "{\"m\":\""); /* fails: "{\"m\":\"line one\\n" */
    krc_buf_cleanup(&b);
}

static void test_consume(void **state)
{
    struct krc_buf b;
    (void)state;

    krc_buf_init(&b, 100);
    assert_int_equal(krc_buf_append_str(&b, "line1\nline2\nrest"), 0);
    krc_buf_consume(&b, 0);
    assert_string_equal(krc_buf_str(&b), "line1\nline2\nrest");
    krc_buf_consume(&b, 6);
    assert_string_equal(krc_buf_str(&b), "line2\nrest");
    assert_int_equal(b.len, 10);
    krc_buf_consume(&b, 6);
    assert_string_equal(krc_buf_str(&b), "rest");
    krc_buf_consume(&b, 4);
    assert_string_equal(krc_buf_str(&b), "");
    assert_int_equal(b.len, 0);
    assert_int_equal(krc_buf_append_str(&b, "abc"), 0);
    krc_buf_consume(&b, 1000);
    assert_int_equal(b.len, 0);
    assert_string_equal(krc_buf_str(&b), "");
    /* room freed by consume can be used up to max again */
    {
        char fill[100];
        memset(fill, 'f', sizeof(fill));
        assert_int_equal(krc_buf_append(&b, fill, 100), 0);
        krc_buf_consume(&b, 50);
        assert_int_equal(krc_buf_append(&b, fill, 50), 0);
        assert_int_equal(b.len, 100);
    }
    krc_buf_cleanup(&b);
}

static void test_reset_keeps_allocation(void **state)
{
    struct krc_buf b;
    char *data;
    size_t cap;
    (void)state;

    krc_buf_init(&b, 1000);
    assert_int_equal(krc_buf_append_str(&b, "some content"), 0);
    data = b.data;
    cap = b.cap;
    krc_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(krc_buf_str(&b), "");
    assert_ptr_equal(b.data, data);
    assert_int_equal(b.cap, cap);
    /* no allocation needed to refill */
    krc_mem_fail_after(0);
    assert_int_equal(krc_buf_append_str(&b, "again"), 0);
    krc_mem_fail_after(-1);
    assert_string_equal(krc_buf_str(&b), "again");
    krc_buf_cleanup(&b);
}

static void test_take(void **state)
{
    struct krc_buf b;
    char *s;
    (void)state;

    krc_buf_init(&b, 50);
    assert_int_equal(krc_buf_printf(&b, "%s=%d", "n", 5), 0);
    s = krc_buf_take(&b);
    assert_string_equal(s, "n=5");
    krc_free(s);
    /* the buffer is empty and keeps its limit */
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_string_equal(krc_buf_str(&b), "");
    assert_int_equal(b.max, 50);
    assert_int_equal(krc_buf_append_str(&b, "again"), 0);
    s = krc_buf_take(&b);
    assert_string_equal(s, "again");
    krc_free(s);

    /* empty: an allocated "" */
    s = krc_buf_take(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    krc_free(s);
    /* a reset buffer hands out its (empty) allocation */
    assert_int_equal(krc_buf_append_str(&b, "x"), 0);
    krc_buf_reset(&b);
    s = krc_buf_take(&b);
    assert_string_equal(s, "");
    krc_free(s);
    /* empty and no memory: NULL */
    krc_mem_fail_after(0);
    s = krc_buf_take(&b);
    krc_mem_fail_after(-1);
    assert_null(s);
    krc_buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_append_and_terminate),
        cmocka_unit_test(test_limit_exact_and_over),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_enomem_leaves_buffer),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_consume),
        cmocka_unit_test(test_reset_keeps_allocation),
        cmocka_unit_test(test_take),
        /* known bugs: KRC_BUG_TESTS=only runs just these */
        cmocka_unit_test(test_fixed_json_str_too_big_leaves_buffer_unchanged),
    };
    const char *v = getenv("KRC_BUG_TESTS");

    /* Known-bug tests (test_bug_*) fail until the code is fixed. They are
     * skipped unless KRC_BUG_TESTS is set: "1" runs everything, "only" just them. */
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0) {
        cmocka_set_skip_filter("test_bug_*");
    } else if (strcmp(v, "only") == 0) {
        cmocka_set_test_filter("test_bug_*");
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
