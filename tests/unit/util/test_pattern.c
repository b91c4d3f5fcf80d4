/* pattern: the one plain-or-regex rule (plain per field, Go's shorthand
 * classes inside and outside brackets, "any"), text patterns, error
 * messages, search with offsets and REG_NOTBOL, allocation failures. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/pattern.h"

/* 1/0: does `text` (compiled for `field`) match `value`. */
static int matches(const char *text, enum krc_pattern_field field, const char *value)
{
    struct krc_pattern p;
    struct krc_error err;
    int m;

    krc_error_clear(&err);
    if (krc_pattern_compile(&p, text, field, 0, "test", &err) != 0) {
        print_error("compile \"%s\": %s\n", text, err.msg);
        fail();
    }
    m = krc_pattern_match(&p, value);
    krc_pattern_cleanup(&p);
    return m;
}

static void test_is_plain_per_field(void **state)
{
    (void)state;
    assert_true(krc_pattern_is_plain("kube-system", KRC_PATTERN_NAMESPACE));
    assert_true(krc_pattern_is_plain("web-0", KRC_PATTERN_POD));
    assert_true(krc_pattern_is_plain("app", KRC_PATTERN_CONTAINER));
    /* '.' is plain only in a pod name (a DNS subdomain) */
    assert_true(krc_pattern_is_plain("web.v1", KRC_PATTERN_POD));
    assert_false(krc_pattern_is_plain("web.v1", KRC_PATTERN_NAMESPACE));
    assert_false(krc_pattern_is_plain("web.v1", KRC_PATTERN_CONTAINER));
    /* upper case, '_' and regex syntax are not DNS-label characters */
    assert_false(krc_pattern_is_plain("Web", KRC_PATTERN_POD));
    assert_false(krc_pattern_is_plain("a_b", KRC_PATTERN_NAMESPACE));
    assert_false(krc_pattern_is_plain("^web", KRC_PATTERN_POD));
    assert_false(krc_pattern_is_plain("web*", KRC_PATTERN_POD));
    /* a text pattern is never plain, nor is nothing */
    assert_false(krc_pattern_is_plain("abc", KRC_PATTERN_TEXT));
    assert_false(krc_pattern_is_plain("", KRC_PATTERN_NAMESPACE));
    assert_false(krc_pattern_is_plain(NULL, KRC_PATTERN_POD));
}

static void test_plain_namespace_is_exact(void **state)
{
    (void)state;
    assert_true(matches("default", KRC_PATTERN_NAMESPACE, "default"));
    assert_false(matches("default", KRC_PATTERN_NAMESPACE, "default2"));
    assert_false(matches("default", KRC_PATTERN_NAMESPACE, "my-default"));
    assert_false(matches("default", KRC_PATTERN_NAMESPACE, "defaul"));
    assert_false(matches("default", KRC_PATTERN_NAMESPACE, NULL));
}

static void test_plain_pod_is_prefix(void **state)
{
    (void)state;
    assert_true(matches("web-", KRC_PATTERN_POD, "web-7d9f-abcde"));
    assert_true(matches("web-", KRC_PATTERN_POD, "web-"));
    assert_false(matches("web-", KRC_PATTERN_POD, "aweb-1"));
    assert_false(matches("web-", KRC_PATTERN_POD, "web"));
    /* a '.' in a plain pod pattern is a literal dot */
    assert_true(matches("web.v1", KRC_PATTERN_POD, "web.v1-abc"));
    assert_false(matches("web.v1", KRC_PATTERN_POD, "webxv1-abc"));
}

static void test_plain_container_is_exact(void **state)
{
    (void)state;
    assert_true(matches("app", KRC_PATTERN_CONTAINER, "app"));
    assert_false(matches("app", KRC_PATTERN_CONTAINER, "app2"));
    assert_false(matches("app", KRC_PATTERN_CONTAINER, "sidecar-app"));
    /* with a '.', a container pattern is a regex searched anywhere */
    assert_true(matches("app.x", KRC_PATTERN_CONTAINER, "appyx"));
    assert_true(matches("app.x", KRC_PATTERN_CONTAINER, "my-app.x-2"));
    assert_false(matches("app.x", KRC_PATTERN_CONTAINER, "appx"));
}

static void test_regex_is_unanchored(void **state)
{
    (void)state;
    assert_true(matches("prod|stage", KRC_PATTERN_NAMESPACE, "team-prod-1"));
    assert_true(matches("prod|stage", KRC_PATTERN_NAMESPACE, "stage"));
    assert_false(matches("prod|stage", KRC_PATTERN_NAMESPACE, "dev"));
    assert_true(matches("^kube-", KRC_PATTERN_NAMESPACE, "kube-system"));
    assert_false(matches("^kube-", KRC_PATTERN_NAMESPACE, "my-kube-system"));
    assert_true(matches("^web$", KRC_PATTERN_POD, "web"));
    assert_false(matches("^web$", KRC_PATTERN_POD, "web-1"));
    /* the regex is searched; matching is case-sensitive */
    assert_true(matches("Web", KRC_PATTERN_POD, "my-Web-1"));
    assert_false(matches("Web", KRC_PATTERN_POD, "my-web-1"));
    assert_false(matches("^kube-", KRC_PATTERN_NAMESPACE, NULL));
}

static void test_go_classes_outside_brackets(void **state)
{
    (void)state;
    assert_true(matches("^ns-\\d+$", KRC_PATTERN_NAMESPACE, "ns-042"));
    assert_false(matches("^ns-\\d+$", KRC_PATTERN_NAMESPACE, "ns-4a"));
    assert_false(matches("^ns-\\d+$", KRC_PATTERN_NAMESPACE, "ns-d"));
    assert_true(matches("^\\w+$", KRC_PATTERN_TEXT, "Ab_9"));
    assert_false(matches("^\\w+$", KRC_PATTERN_TEXT, "a-b"));
    assert_true(matches("a\\sb", KRC_PATTERN_TEXT, "a b"));
    assert_true(matches("a\\sb", KRC_PATTERN_TEXT, "a\tb"));
    assert_false(matches("a\\sb", KRC_PATTERN_TEXT, "asb"));
    assert_true(matches("^\\D\\W\\S$", KRC_PATTERN_TEXT, "x-y"));
    assert_false(matches("^\\D\\W\\S$", KRC_PATTERN_TEXT, "1-y"));
    assert_false(matches("^\\D\\W\\S$", KRC_PATTERN_TEXT, "x_y"));
    assert_false(matches("^\\D\\W\\S$", KRC_PATTERN_TEXT, "x- "));
    /* other escapes pass through: a literal dot */
    assert_true(matches("^a\\.b$", KRC_PATTERN_TEXT, "a.b"));
    assert_false(matches("^a\\.b$", KRC_PATTERN_TEXT, "axb"));
}

static void test_go_classes_inside_brackets(void **state)
{
    (void)state;
    assert_true(matches("^[\\d.]+$", KRC_PATTERN_TEXT, "10.0.0.1"));
    assert_false(matches("^[\\d.]+$", KRC_PATTERN_TEXT, "10.0.0.x"));
    assert_false(matches("^[\\d.]+$", KRC_PATTERN_TEXT, "d"));
    assert_true(matches("^[\\w-]+$", KRC_PATTERN_TEXT, "a_b-C9"));
    assert_false(matches("^[\\w-]+$", KRC_PATTERN_TEXT, "a.b"));
    assert_true(matches("^[\\s,]+$", KRC_PATTERN_TEXT, " ,\t,"));
    assert_false(matches("^[\\s,]+$", KRC_PATTERN_TEXT, "s"));
    /* a negated bracket with a class, and ']' first is a member */
    assert_true(matches("^[^\\d]+$", KRC_PATTERN_TEXT, "abc"));
    assert_false(matches("^[^\\d]+$", KRC_PATTERN_TEXT, "ab1"));
    assert_true(matches("^[]\\d]+$", KRC_PATTERN_TEXT, "]1]"));
    assert_false(matches("^[]\\d]+$", KRC_PATTERN_TEXT, "]a"));
    /* a POSIX class inside a bracket is copied whole: its ']' does not
     * end the bracket, so the \d after it is still inside */
    assert_true(matches("^[[:alpha:]\\d]+$", KRC_PATTERN_TEXT, "ab12"));
    assert_false(matches("^[[:alpha:]\\d]+$", KRC_PATTERN_TEXT, "ab-12"));
    /* after the bracket closes, \d is a class of its own again */
    assert_true(matches("^[a-c]\\d$", KRC_PATTERN_TEXT, "b7"));
    assert_false(matches("^[a-c]\\d$", KRC_PATTERN_TEXT, "bd"));
}

static void test_any(void **state)
{
    const char *any[] = {NULL, "", "*"};
    const enum krc_pattern_field fields[] = {KRC_PATTERN_NAMESPACE, KRC_PATTERN_POD,
                                             KRC_PATTERN_CONTAINER};

    (void)state;
    for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++) {
        for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
            struct krc_pattern p;
            assert_int_equal(krc_pattern_compile(&p, any[i], fields[f], 0, "x", NULL), 0);
            assert_null(p.text);
            assert_true(krc_pattern_match(&p, "anything"));
            assert_true(krc_pattern_match(&p, ""));
            assert_true(krc_pattern_match(&p, NULL));
            krc_pattern_cleanup(&p);
        }
    }
    /* a NULL pattern pointer is "any" too */
    assert_true(krc_pattern_match(NULL, "x"));
}

static void test_text_pattern_empty_is_error(void **state)
{
    const char *empty[] = {NULL, "", "*"};

    (void)state;
    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
        struct krc_pattern p;
        struct krc_error err;
        krc_error_clear(&err);
        assert_int_equal(krc_pattern_compile(&p, empty[i], KRC_PATTERN_TEXT, 0, "LOG_IGNORE", &err),
                         KRC_EINVAL);
        assert_int_equal(err.code, KRC_EINVAL);
        assert_string_equal(err.msg, "LOG_IGNORE: empty pattern");
        assert_null(p.text);
    }
}

static void test_invalid_regex_names_what_and_pattern(void **state)
{
    struct krc_pattern p;
    struct krc_error err;

    (void)state;
    krc_error_clear(&err);
    assert_int_equal(
        krc_pattern_compile(&p, "x[", KRC_PATTERN_NAMESPACE, 0, "WATCHED_NAMESPACES", &err),
        KRC_EINVAL);
    assert_int_equal(err.code, KRC_EINVAL);
    assert_non_null(strstr(err.msg, "WATCHED_NAMESPACES: invalid regular expression \"x[\": "));
    /* regerror's text follows */
    assert_true(strlen(err.msg) >
                strlen("WATCHED_NAMESPACES: invalid regular expression \"x[\": "));
    /* on error nothing is left to clean up; cleanup is still harmless */
    assert_null(p.text);
    krc_pattern_cleanup(&p);

    krc_error_clear(&err);
    assert_int_equal(
        krc_pattern_compile(&p, "a(b", KRC_PATTERN_TEXT, KRC_PATTERN_OFFSETS, "route 2 pod", &err),
        KRC_EINVAL);
    assert_non_null(strstr(err.msg, "route 2 pod: invalid regular expression \"a(b\""));
}

static void test_too_long_names_what(void **state)
{
    char text[2 * 1000 + 1];
    struct krc_pattern p;
    struct krc_error err;

    (void)state;
    /* 2000 bytes that translate to 5000 ("\d" -> "[0-9]"): over the limit */
    for (size_t i = 0; i < 1000; i++) {
        text[2 * i] = '\\';
        text[2 * i + 1] = 'd';
    }
    text[sizeof(text) - 1] = '\0';
    krc_error_clear(&err);
    assert_int_equal(krc_pattern_compile(&p, text, KRC_PATTERN_POD, 0, "IGNORED_POD", &err),
                     KRC_EINVAL);
    assert_non_null(strstr(err.msg, "IGNORED_POD: pattern \"\\d\\d"));
    assert_non_null(strstr(err.msg, "is too long"));
    assert_null(p.text);

    /* 500 of them (1000 bytes) translate to 2500: accepted */
    text[1000] = '\0';
    assert_int_equal(krc_pattern_compile(&p, text, KRC_PATTERN_POD, 0, "IGNORED_POD", &err), 0);
    {
        char digits[600];
        memset(digits, '7', sizeof(digits) - 1);
        digits[sizeof(digits) - 1] = '\0';
        assert_true(krc_pattern_match(&p, digits)); /* 500 digits in a row */
        digits[499] = 'x';
        assert_false(krc_pattern_match(&p, digits));
    }
    assert_false(krc_pattern_match(&p, "0123456789"));
    krc_pattern_cleanup(&p);
}

static void test_search_offsets(void **state)
{
    const char *v = "a CUST-1 b CUST-22";
    struct krc_pattern p;
    size_t s = 99;
    size_t e = 99;

    (void)state;
    assert_int_equal(
        krc_pattern_compile(&p, "CUST-\\d+", KRC_PATTERN_TEXT, KRC_PATTERN_OFFSETS, "x", NULL), 0);
    assert_true(krc_pattern_search(&p, v, 0, &s, &e));
    assert_int_equal(s, 2);
    assert_int_equal(e, 8);
    /* offsets stay relative to the start of value */
    assert_true(krc_pattern_search(&p, v, e, &s, &e));
    assert_int_equal(s, 11);
    assert_int_equal(e, 18);
    s = e = 99;
    assert_false(krc_pattern_search(&p, v, 18, &s, &e));
    assert_int_equal(s, 99); /* untouched without a match */
    assert_int_equal(e, 99);
    /* krc_pattern_match agrees */
    assert_true(krc_pattern_match(&p, v));
    assert_false(krc_pattern_match(&p, "CUST-"));
    krc_pattern_cleanup(&p);
}

static void test_search_notbol(void **state)
{
    struct krc_pattern p;
    size_t s = 0;
    size_t e = 0;

    (void)state;
    assert_int_equal(
        krc_pattern_compile(&p, "^x", KRC_PATTERN_TEXT, KRC_PATTERN_OFFSETS, "x", NULL), 0);
    assert_true(krc_pattern_search(&p, "xax", 0, &s, &e));
    assert_int_equal(s, 0);
    assert_int_equal(e, 1);
    /* from 1 the string does not start at a line start: the last x is not
     * at the beginning of anything */
    assert_false(krc_pattern_search(&p, "xax", 1, &s, &e));
    assert_false(krc_pattern_search(&p, "axx", 2, &s, &e));
    /* without KRC_PATTERN_NEWLINE, '^' does not match after a newline */
    assert_false(krc_pattern_search(&p, "a\nx", 0, &s, &e));
    krc_pattern_cleanup(&p);

    assert_int_equal(krc_pattern_compile(&p, "^x", KRC_PATTERN_TEXT,
                                         KRC_PATTERN_OFFSETS | KRC_PATTERN_NEWLINE, "x", NULL),
                     0);
    assert_true(krc_pattern_search(&p, "a\nx", 1, &s, &e));
    assert_int_equal(s, 2);
    assert_int_equal(e, 3);
    assert_false(krc_pattern_search(&p, "a\nax", 2, &s, &e));
    krc_pattern_cleanup(&p);
}

static void test_newline_flag(void **state)
{
    struct krc_pattern p;

    (void)state;
    assert_int_equal(krc_pattern_compile(&p, "a.b", KRC_PATTERN_TEXT, 0, "x", NULL), 0);
    assert_true(krc_pattern_match(&p, "a\nb"));
    krc_pattern_cleanup(&p);
    assert_int_equal(
        krc_pattern_compile(&p, "a.b", KRC_PATTERN_TEXT, KRC_PATTERN_NEWLINE, "x", NULL), 0);
    assert_false(krc_pattern_match(&p, "a\nb"));
    assert_true(krc_pattern_match(&p, "x\naxb"));
    krc_pattern_cleanup(&p);
    assert_int_equal(
        krc_pattern_compile(&p, "^oom$", KRC_PATTERN_TEXT, KRC_PATTERN_NEWLINE, "x", NULL), 0);
    assert_true(krc_pattern_match(&p, "start\noom\nend"));
    krc_pattern_cleanup(&p);
}

static void test_search_only_for_regex(void **state)
{
    struct krc_pattern p;
    size_t s = 0;
    size_t e = 0;

    (void)state;
    /* plain and "any" patterns have no offsets to report */
    assert_int_equal(krc_pattern_compile(&p, "default", KRC_PATTERN_NAMESPACE, 0, "x", NULL), 0);
    assert_false(krc_pattern_search(&p, "default", 0, &s, &e));
    krc_pattern_cleanup(&p);
    assert_int_equal(krc_pattern_compile(&p, NULL, KRC_PATTERN_POD, 0, "x", NULL), 0);
    assert_false(krc_pattern_search(&p, "web", 0, &s, &e));
    krc_pattern_cleanup(&p);
    assert_int_equal(krc_pattern_compile(&p, "b", KRC_PATTERN_TEXT, KRC_PATTERN_OFFSETS, "x", NULL),
                     0);
    assert_false(krc_pattern_search(&p, NULL, 0, &s, &e));
    krc_pattern_cleanup(&p);
}

static void test_match_pod(void **state)
{
    struct krc_pattern ns;
    struct krc_pattern pod;
    struct krc_pattern c;

    (void)state;
    assert_int_equal(krc_pattern_compile(&ns, "prod", KRC_PATTERN_NAMESPACE, 0, "ns", NULL), 0);
    assert_int_equal(krc_pattern_compile(&pod, "api-", KRC_PATTERN_POD, 0, "pod", NULL), 0);
    assert_int_equal(krc_pattern_compile(&c, "^(app|web)$", KRC_PATTERN_CONTAINER, 0, "c", NULL),
                     0);
    assert_true(krc_pattern_match_pod(&ns, &pod, &c, "prod", "api-1", "app"));
    assert_false(krc_pattern_match_pod(&ns, &pod, &c, "prod2", "api-1", "app"));
    assert_false(krc_pattern_match_pod(&ns, &pod, &c, "prod", "web-1", "app"));
    assert_false(krc_pattern_match_pod(&ns, &pod, &c, "prod", "api-1", "app2"));
    /* NULL patterns: any */
    assert_true(krc_pattern_match_pod(NULL, &pod, NULL, "other", "api-x", NULL));
    assert_true(krc_pattern_match_pod(NULL, NULL, NULL, NULL, NULL, NULL));
    krc_pattern_cleanup(&ns);
    krc_pattern_cleanup(&pod);
    krc_pattern_cleanup(&c);
}

static void test_cleanup_accepts_null_and_zeroes(void **state)
{
    struct krc_pattern p;

    (void)state;
    krc_pattern_cleanup(NULL);
    assert_int_equal(krc_pattern_compile(&p, "a+", KRC_PATTERN_POD, 0, "x", NULL), 0);
    krc_pattern_cleanup(&p);
    assert_null(p.text);
    krc_pattern_cleanup(&p); /* twice is harmless */
}

static void test_alloc_failure_sweep(void **state)
{
    const char *texts[] = {"web-", "^a\\d+[\\w.]$"};

    (void)state;
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        int done = 0;
        for (long n = 0; n < 50 && !done; n++) {
            struct krc_pattern p;
            struct krc_error err;
            int rc;
            krc_error_clear(&err);
            krc_mem_fail_after(n);
            rc = krc_pattern_compile(&p, texts[t], KRC_PATTERN_POD, 0, "x", &err);
            krc_mem_fail_after(-1);
            if (rc == 0) {
                assert_true(krc_pattern_match(&p, t == 0 ? "web-1" : "a12_"));
                krc_pattern_cleanup(&p);
                done = 1;
            } else {
                assert_int_equal(rc, KRC_ENOMEM);
                assert_string_equal(err.msg, "out of memory");
                assert_null(p.text);
            }
        }
        assert_true(done);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_plain_per_field),
        cmocka_unit_test(test_plain_namespace_is_exact),
        cmocka_unit_test(test_plain_pod_is_prefix),
        cmocka_unit_test(test_plain_container_is_exact),
        cmocka_unit_test(test_regex_is_unanchored),
        cmocka_unit_test(test_go_classes_outside_brackets),
        cmocka_unit_test(test_go_classes_inside_brackets),
        cmocka_unit_test(test_any),
        cmocka_unit_test(test_text_pattern_empty_is_error),
        cmocka_unit_test(test_invalid_regex_names_what_and_pattern),
        cmocka_unit_test(test_too_long_names_what),
        cmocka_unit_test(test_search_offsets),
        cmocka_unit_test(test_search_notbol),
        cmocka_unit_test(test_newline_flag),
        cmocka_unit_test(test_search_only_for_regex),
        cmocka_unit_test(test_match_pod),
        cmocka_unit_test(test_cleanup_accepts_null_and_zeroes),
        cmocka_unit_test(test_alloc_failure_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
