#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/error.h"
#include "krc/util/logtail.h"
#include "krc/util/mem.h"

/* Result of streaming `data` in pieces of `chunk` bytes (0: all at once). */
struct result {
    unsigned char *data;
    size_t len;
    struct krc_logtail_cut cut;
    int over; /* feed returned 1 */
};

static void run(const char *data, size_t len, size_t keep, uint64_t cap, size_t chunk,
                struct result *res)
{
    struct krc_logtail t;
    size_t off = 0;

    memset(res, 0, sizeof(*res));
    krc_logtail_init(&t, keep, cap);
    while (off < len) {
        size_t n = chunk == 0 || len - off < chunk ? len - off : chunk;
        int rc = krc_logtail_feed(&t, data + off, n);
        assert_true(rc >= 0);
        /* memory stays bounded by keep */
        assert_true(t.alloc <= keep);
        off += n;
        if (rc == 1) {
            res->over = 1;
            break;
        }
    }
    krc_logtail_finish(&t, &res->data, &res->len, &res->cut);
    krc_logtail_cleanup(&t);
}

static void assert_kept(const struct result *res, const char *want)
{
    assert_int_equal(res->len, strlen(want));
    if (res->len > 0) {
        assert_memory_equal(res->data, want, res->len);
    } else {
        assert_null(res->data);
    }
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_short_log_kept_whole(void **state)
{
    static const size_t chunks[] = {0, 1, 2, 3, 7};
    const char *log = "one\ntwo\nthree\n";
    (void)state;

    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        struct result res;
        run(log, strlen(log), 64, 0, chunks[i], &res);
        assert_kept(&res, log);
        assert_true(res.cut.known);
        assert_int_equal(res.cut.received, strlen(log));
        assert_int_equal(res.cut.dropped, 0);
        assert_false(res.cut.head_cut);
        assert_false(res.cut.capped);
        krc_free(res.data);
    }
}

static void test_empty(void **state)
{
    struct result res;
    char note[200];
    (void)state;

    run("", 0, 16, 0, 0, &res);
    assert_kept(&res, "");
    assert_int_equal(res.cut.received, 0);
    assert_int_equal(krc_logtail_describe(&res.cut, note, sizeof(note)), 0);
    assert_string_equal(note, "");
}

/* The case: a long line, then the fatal one. Every split position
 * of the stream gives the same result. */
static void test_long_line_then_fatal(void **state)
{
    char *x = repeat('x', 300 * 1024);
    size_t len = strlen("starting\n") + strlen(x) + strlen("\nfatal: boom\n");
    char *log = malloc(len + 1);
    static const size_t chunks[] = {0, 1, 4096, 16384, 65535, 65536, 65537, 100000};
    char note[300];
    (void)state;

    assert_non_null(log);
    snprintf(log, len + 1, "starting\n%s\nfatal: boom\n", x);
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        struct result res;
        run(log, len, 64 * 1024, 4 * 1024 * 1024, chunks[i], &res);
        assert_kept(&res, "fatal: boom\n");
        assert_int_equal(res.cut.received, len);
        assert_int_equal(res.cut.dropped, len - 12);
        assert_false(res.cut.head_cut);
        assert_false(res.cut.capped);
        assert_false(res.over);
        krc_free(res.data);
        krc_logtail_describe(&res.cut, note, sizeof(note));
        assert_string_equal(note, "first 300 KB of the 300 KB read dropped to keep the last "
                                  "12 bytes, from a line start");
    }
    free(x);
    free(log);
}

/* The whole kept part is the end of one line: kept as it is, said so. */
static void test_one_long_line_keeps_its_end(void **state)
{
    char *y = repeat('y', 100000);
    char *log = malloc(100000 + 16);
    struct result res;
    char note[300];
    (void)state;

    assert_non_null(log);
    snprintf(log, 100000 + 16, "%s the end\n", y);
    run(log, strlen(log), 1024, 0, 333, &res);
    assert_int_equal(res.len, 1024);
    assert_memory_equal(res.data + 1024 - 9, " the end\n", 9);
    assert_int_equal(res.data[0], 'y');
    assert_true(res.cut.head_cut);
    assert_int_equal(res.cut.dropped, strlen(log) - 1024);
    krc_logtail_describe(&res.cut, note, sizeof(note));
    assert_string_equal(note, "first 97 KB of the 98 KB read dropped to keep the last 1.0 KB, "
                              "the end of one longer line");
    krc_free(res.data);
    free(y);
    free(log);
}

/* Many short lines: the last ones that fit, from a line start; the ring
 * wraps many times. */
static void test_many_short_lines(void **state)
{
    size_t cap = 20000 * 12 + 1;
    char *log = malloc(cap);
    size_t len = 0;
    struct result res;
    char want[64];
    (void)state;

    assert_non_null(log);
    for (int i = 0; i < 20000; i++) {
        len += (size_t)snprintf(log + len, cap - len, "line %05d\n", i); /* 11 bytes */
    }
    run(log, len, 100, 0, 7, &res);
    /* 100 bytes hold 9 whole lines (99 bytes) plus the end of the one before */
    assert_int_equal(res.len, 99);
    assert_memory_equal(res.data, "line 19991\n", 11);
    snprintf(want, sizeof(want), "line 19999\n");
    assert_memory_equal(res.data + 88, want, 11);
    assert_int_equal(res.cut.dropped, len - 99);
    assert_false(res.cut.head_cut);
    krc_free(res.data);
    free(log);
}

/* When the byte before the kept part ends a line, nothing more is dropped. */
static void test_cut_exactly_at_a_line_start(void **state)
{
    const char *log = "aaaa\nbbbb\ncccc\n"; /* keep 10: "bbbb\ncccc\n" */
    struct result res;
    (void)state;

    run(log, strlen(log), 10, 0, 1, &res);
    assert_kept(&res, "bbbb\ncccc\n");
    assert_int_equal(res.cut.dropped, 5);
    assert_false(res.cut.head_cut);
    krc_free(res.data);
}

static void test_crlf_lines(void **state)
{
    const char *log = "first line\r\nsecond line\r\nthird\r\n";
    struct result res;
    (void)state;

    /* keep 18: "cond line\r\nthird\r\n", cut inside "second line" */
    run(log, strlen(log), 18, 0, 3, &res);
    assert_kept(&res, "third\r\n");
    assert_int_equal(res.cut.dropped, strlen(log) - 7);
    krc_free(res.data);
}

/* Bytes are kept as they are, whatever they are; cuts happen at '\n'. */
static void test_invalid_utf8_kept_as_is(void **state)
{
    const char log[] = "\xff\xfe ok\n\xc3(\x80\x80 bad\n\xe2\x82 end\n";
    struct result res;
    (void)state;

    run(log, sizeof(log) - 1, 10, 0, 1, &res);
    assert_kept(&res, "\xe2\x82 end\n");
    krc_free(res.data);
    run(log, sizeof(log) - 1, 4096, 0, 2, &res);
    assert_int_equal(res.len, sizeof(log) - 1);
    assert_memory_equal(res.data, log, res.len);
    krc_free(res.data);
}

/* The cap hit in the middle of a line: nothing past it is taken, the
 * caller is told to stop, and the note says where reading stopped. */
static void test_cap_hit_mid_line(void **state)
{
    const char *log = "alpha\nbravo\ncharlie delta echo\nfoxtrot\n";
    struct result res;
    char note[300];
    (void)state;

    run(log, strlen(log), 8, 20, 5, &res);
    assert_true(res.over);
    assert_true(res.cut.capped);
    assert_int_equal(res.cut.cap, 20);
    assert_int_equal(res.cut.received, 20);
    /* the first 20 bytes: "alpha\nbravo\ncharlie " -> last 8 "charlie " (a line start) */
    assert_kept(&res, "charlie ");
    assert_false(res.cut.head_cut);
    krc_logtail_describe(&res.cut, note, sizeof(note));
    assert_string_equal(note, "first 12 bytes of the 20 bytes read dropped to keep the last "
                              "8 bytes, from a line start; reading stopped at the 20 bytes "
                              "transfer cap: anything after byte 20 was not fetched");
    krc_free(res.data);

    /* exactly the cap: not known to continue */
    run(log, 20, 8, 20, 0, &res);
    assert_false(res.over);
    assert_false(res.cut.capped);
    krc_free(res.data);

    /* a cap below keep is raised to keep */
    run(log, strlen(log), 16, 4, 0, &res);
    assert_int_equal(res.cut.cap, 16);
    assert_true(res.cut.capped);
    krc_free(res.data);
}

static void test_skip_counts_unread_bytes(void **state)
{
    struct krc_logtail t;
    unsigned char *data;
    size_t len;
    struct krc_logtail_cut cut;
    (void)state;

    /* a reader seeked past 1000 bytes and reads the last keep + 1 */
    krc_logtail_init(&t, 6, 0);
    krc_logtail_skip(&t, 1000);
    assert_int_equal(krc_logtail_feed(&t, "\nab\ncd\n", 7), 0);
    krc_logtail_finish(&t, &data, &len, &cut);
    assert_int_equal(len, 6);
    assert_memory_equal(data, "ab\ncd\n", 6);
    assert_int_equal(cut.received, 1007);
    assert_int_equal(cut.dropped, 1001);
    assert_false(cut.head_cut);
    krc_free(data);
    krc_logtail_cleanup(&t);
}

static void test_out_of_memory(void **state)
{
    struct krc_logtail t;
    (void)state;

    krc_logtail_init(&t, 1000, 0);
    krc_mem_fail_after(0);
    assert_int_equal(krc_logtail_feed(&t, "abc", 3), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    assert_int_equal(krc_logtail_feed(&t, "abc", 3), 0);
    krc_logtail_cleanup(&t);
    krc_logtail_cleanup(&t); /* twice is harmless */
}

static void test_describe_unknown_and_small_buffers(void **state)
{
    struct krc_logtail_cut cut;
    char note[16];
    (void)state;

    memset(&cut, 0, sizeof(cut));
    cut.dropped = 5; /* not counted by a producer: nothing is claimed */
    assert_int_equal(krc_logtail_describe(&cut, note, sizeof(note)), 0);
    cut.known = 1;
    cut.received = 3u * 1024u * 1024u * 1024u;
    cut.dropped = cut.received - 65536;
    cut.capped = 1;
    cut.cap = 3u * 1024u * 1024u * 1024u;
    assert_int_equal(krc_logtail_describe(&cut, note, sizeof(note)), sizeof(note) - 1);
    assert_int_equal(strlen(note), sizeof(note) - 1);
    assert_int_equal(krc_logtail_describe(&cut, note, 0), 0);
}

static void test_kubelet_stamp(void **state)
{
    static const struct {
        const char *line;
        size_t want;
    } cases[] = {
        {"2026-07-30T07:43:51.123456789Z hello", 31},
        {"2026-07-30T07:43:51.5Z hello", 23},
        {"2026-07-30T07:43:51Z hello", 21},
        {"2026-07-30T07:43:51.123456789Z ", 31},
        {"2026-07-30T07:43:51.123456789Z", 0},    /* no space */
        {"2026-07-30T07:43:51.1234567891Z x", 0}, /* ten digits */
        {"2026-07-30T07:43:51.Z x", 0},
        {"2022-10-29T16:10:22.592603036-05:00 x", 36}, /* a runtime writing local time */
        {"2026-07-30T07:43:51+02:00 x", 26},
        {"2026-07-30T07:43:51+02:0 x", 0},
        {"2026-07-30T07:43:51+02:00", 0},
        {"2026-07-30 07:43:51Z x", 0},
        {"2026/07/30T07:43:51Z x", 0},
        {"hello", 0},
        {"", 0},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *l = cases[i].line;
        size_t got = krc_logtail_stamp_len((const unsigned char *)l, strlen(l));
        if (got != cases[i].want) {
            fail_msg("%s: %zu, want %zu", l, got, cases[i].want);
        }
    }
}

static void test_stamp_short(void **state)
{
    static const struct {
        const char *line;
        const char *want;
    } cases[] = {
        {"2026-07-30T07:43:51.123456789Z hello", "07:43:51Z"},
        {"2026-07-30T07:43:51Z x", "07:43:51Z"},
        {"2022-10-29T16:10:22.592603036-05:00 x", "16:10:22-05:00"},
        {"not a stamp", ""},
    };
    char out[32];
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const unsigned char *p = (const unsigned char *)cases[i].line;
        size_t n = krc_logtail_stamp_len(p, strlen(cases[i].line));
        assert_int_equal(krc_logtail_stamp_short(p, n, out, sizeof(out)), strlen(cases[i].want));
        assert_string_equal(out, cases[i].want);
    }
    /* a small buffer is cut, NUL-terminated */
    assert_int_equal(krc_logtail_stamp_short((const unsigned char *)cases[0].line, 31, out, 4), 3);
    assert_string_equal(out, "07:");
}

static void test_app_stamp(void **state)
{
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"2026-07-30T07:43:51.123Z INFO ready", 1},
        {"2026-07-30 07:43:51,123 ERROR app", 1},
        {"2026/07/30 07:43:51 listening", 1}, /* Go's log package */
        {"[2026-07-30 07:43:51] production.ERROR", 1},
        {"time=\"2026-07-30T07:43:51Z\" level=info", 1},
        {"ts=2026-07-30T07:43:51Z caller=main.go", 1},
        {"I0730 07:43:51.123456       1 main.go:12] klog", 1},
        {"E0730 07:43:51.123456       1 main.go:12] klog", 1},
        {"07:43:51.123 [main] INFO logback", 1},
        {"Jul 30 07:43:51 host sshd", 1},
        {"Jul  3 07:43:51 host sshd", 1},
        {"{\"level\":\"info\",\"ts\":1722325431.5,\"msg\":\"zap\"}", 1},
        {"{\"time\":\"2026-07-30T07:43:51Z\",\"msg\":\"x\"}", 1},
        {"{\"@timestamp\":\"2026-07-30T07:43:51Z\"}", 1},
        {"{\"msg\":\"no time key\"}", 0},
        {"fatal: boom", 0},
        {"Traceback (most recent call last):", 0},
        {"I0730 starting", 0},
        {"2026-07-30 was a good day", 0},
        {"12:30 is lunch", 0},
        {"", 0},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *s = cases[i].text;
        int got = krc_logtail_has_app_stamp((const unsigned char *)s, strlen(s));
        if (got != cases[i].want) {
            fail_msg("%s: %d, want %d", s, got, cases[i].want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_log_kept_whole),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_long_line_then_fatal),
        cmocka_unit_test(test_one_long_line_keeps_its_end),
        cmocka_unit_test(test_many_short_lines),
        cmocka_unit_test(test_cut_exactly_at_a_line_start),
        cmocka_unit_test(test_crlf_lines),
        cmocka_unit_test(test_invalid_utf8_kept_as_is),
        cmocka_unit_test(test_cap_hit_mid_line),
        cmocka_unit_test(test_skip_counts_unread_bytes),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_describe_unknown_and_small_buffers),
        cmocka_unit_test(test_kubelet_stamp),
        cmocka_unit_test(test_stamp_short),
        cmocka_unit_test(test_app_stamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
