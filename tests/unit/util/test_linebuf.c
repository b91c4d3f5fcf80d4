#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/error.h"
#include "krc/util/linebuf.h"
#include "krc/util/mem.h"

/* Collects lines as "a|bb|ccc|" and oversize reports. */
struct sink {
    char out[8192];
    size_t len;
    int lines;
    int oversize;
    size_t last_oversize;
    char head[128]; /* the last reported head, NUL-terminated (cut to fit) */
    size_t head_len;
    int stop_after; /* return 7 from the Nth line (1-based); 0: never */
};

static int on_line(const char *line, size_t len, void *ud)
{
    struct sink *s = ud;

    assert_true(len > 0);
    assert_true(s->len + len + 1 < sizeof(s->out));
    memcpy(s->out + s->len, line, len);
    s->len += len;
    s->out[s->len++] = '|';
    s->out[s->len] = '\0';
    s->lines++;
    if (s->stop_after != 0 && s->lines == s->stop_after) {
        return 7;
    }
    return 0;
}

static void on_oversize(const char *head, size_t head_len, size_t size, void *ud)
{
    struct sink *s = ud;
    size_t keep = head_len < sizeof(s->head) - 1 ? head_len : sizeof(s->head) - 1;
    s->oversize++;
    s->last_oversize = size;
    s->head_len = head_len;
    memcpy(s->head, head, keep);
    s->head[keep] = '\0';
    s->out[s->len++] = '#';
    s->out[s->len] = '\0';
}

static void sink_init(struct sink *s)
{
    memset(s, 0, sizeof(*s));
}

/* Feed `data` split at the given positions (ascending), then finish. */
static void feed_split(struct krc_linebuf *lb, const char *data, size_t len, const size_t *cuts,
                       size_t ncuts, struct sink *s)
{
    size_t prev = 0;
    size_t i;

    for (i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        /* a private copy of each chunk, so ASan sees reads outside it */
        char *chunk = malloc(end - prev + 1);
        assert_non_null(chunk);
        memcpy(chunk, data + prev, end - prev);
        assert_int_equal(krc_linebuf_feed(lb, chunk, end - prev, on_line, on_oversize, s), 0);
        free(chunk);
        prev = end;
    }
    assert_int_equal(krc_linebuf_finish(lb, on_line, on_oversize, s), 0);
}

static const char STREAM[] = "{\"type\":\"ADDED\"}\n"
                             "{\"type\":\"MODIFIED\",\"x\":1}\r\n"
                             "\n"
                             "\r\n"
                             "{\"type\":\"BOOKMARK\"}\n"
                             "last-without-newline";
static const char EXPECT[] = "{\"type\":\"ADDED\"}|{\"type\":\"MODIFIED\",\"x\":1}|"
                             "{\"type\":\"BOOKMARK\"}|last-without-newline|";

static void test_every_split_position(void **state)
{
    size_t len = strlen(STREAM);
    size_t a;
    size_t b;

    (void)state;
    for (a = 0; a <= len; a++) {
        for (b = a; b <= len; b++) {
            struct krc_linebuf lb;
            struct sink s;
            size_t cuts[2] = {a, b};

            sink_init(&s);
            assert_int_equal(krc_linebuf_init(&lb, 64), 0);
            feed_split(&lb, STREAM, len, cuts, 2, &s);
            if (strcmp(s.out, EXPECT) != 0) {
                fail_msg("split %zu/%zu: got %s", a, b, s.out);
            }
            assert_int_equal(krc_linebuf_pending(&lb), 0);
            krc_linebuf_cleanup(&lb);
        }
    }
}

static void test_one_byte_chunks(void **state)
{
    size_t len = strlen(STREAM);
    size_t cuts[sizeof(STREAM)];
    size_t i;
    struct krc_linebuf lb;
    struct sink s;

    (void)state;
    for (i = 0; i + 1 < len; i++) {
        cuts[i] = i + 1;
    }
    sink_init(&s);
    assert_int_equal(krc_linebuf_init(&lb, 64), 0);
    feed_split(&lb, STREAM, len, cuts, len - 1, &s);
    assert_string_equal(s.out, EXPECT);
    assert_int_equal(s.lines, 4);
    assert_int_equal(s.oversize, 0);
    krc_linebuf_cleanup(&lb);
}

static void test_oversize_then_good_line(void **state)
{
    /* max_line 8: "12345678" fits, with or without "\r"; 9 bytes do not */
    const char *data = "short\n"
                       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
                       "12345678\n"
                       "12345678\r\n"
                       "123456789\n"
                       "123456789\r\n"
                       "good\n"
                       "yyyyyyyyyyyyyyyyyyyyyy";
    const char *expect = "short|#12345678|12345678|##good|#";
    size_t len = strlen(data);
    size_t a;

    (void)state;
    for (a = 0; a <= len; a++) {
        struct krc_linebuf lb;
        struct sink s;
        size_t cuts[1] = {a};

        sink_init(&s);
        assert_int_equal(krc_linebuf_init(&lb, 8), 0);
        feed_split(&lb, data, len, cuts, 1, &s);
        if (strcmp(s.out, expect) != 0) {
            fail_msg("split %zu: got %s", a, s.out);
        }
        /* the unterminated over-long tail is reported, not delivered */
        assert_int_equal(s.oversize, 4);
        assert_true(s.last_oversize > 8);
        assert_true(lb.cap <= 9);
        krc_linebuf_cleanup(&lb);
    }
}

static void test_oversize_one_byte_chunks_bounded(void **state)
{
    struct krc_linebuf lb;
    struct sink s;
    size_t i;

    (void)state;
    sink_init(&s);
    assert_int_equal(krc_linebuf_init(&lb, 1000), 0);
    /* a 1 MB line fed byte by byte, then a good line */
    for (i = 0; i < 1000000; i++) {
        assert_int_equal(krc_linebuf_feed(&lb, "z", 1, on_line, on_oversize, &s), 0);
        assert_true(lb.cap <= 1001);
    }
    /* reported when it ends, with its size and its head (max_line bytes) */
    assert_int_equal(s.oversize, 0);
    assert_int_equal(krc_linebuf_pending(&lb), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "\nok\n", 4, on_line, on_oversize, &s), 0);
    assert_int_equal(s.oversize, 1);
    assert_int_equal(s.last_oversize, 1000000);
    assert_int_equal(s.head_len, 1000);
    assert_string_equal(s.out, "#ok|");
    krc_linebuf_cleanup(&lb);
}

/* An over-long line is reported once, when it ends, with its first
 * KRC_LINEBUF_HEAD bytes (whatever the chunking) and its whole size; the
 * rest is not buffered. */
static void test_oversize_head_and_size(void **state)
{
    const size_t max = 4 * KRC_LINEBUF_HEAD;
    const size_t big = 3 * max + 17;
    const size_t chunks[] = {1, 7, 4096, KRC_LINEBUF_HEAD - 1, KRC_LINEBUF_HEAD + 3, max + 2, 0};
    char *line = malloc(big + 1);
    (void)state;

    assert_non_null(line);
    for (size_t i = 0; i < big; i++) {
        line[i] = (char)('a' + i % 23);
    }
    line[big] = '\n';
    for (size_t c = 0; chunks[c] != 0; c++) {
        struct krc_linebuf lb;
        struct sink s;

        sink_init(&s);
        assert_int_equal(krc_linebuf_init(&lb, max), 0);
        assert_int_equal(krc_linebuf_feed(&lb, "first\n", 6, on_line, on_oversize, &s), 0);
        for (size_t off = 0; off < big + 1; off += chunks[c]) {
            size_t n = big + 1 - off < chunks[c] ? big + 1 - off : chunks[c];
            assert_int_equal(krc_linebuf_feed(&lb, line + off, n, on_line, on_oversize, &s), 0);
            assert_true(lb.cap <= max + 1);
        }
        assert_int_equal(krc_linebuf_feed(&lb, "next\n", 5, on_line, on_oversize, &s), 0);
        assert_string_equal(s.out, "first|#next|");
        assert_int_equal(s.oversize, 1);
        assert_int_equal(s.last_oversize, big);
        assert_int_equal(s.head_len, KRC_LINEBUF_HEAD);
        assert_memory_equal(s.head, line, sizeof(s.head) - 1);
        krc_linebuf_cleanup(&lb);
    }
    free(line);
}

/* A last over-long line without a newline is reported by finish (with the
 * size it had); one cut by reset (a broken connection) is not reported. */
static void test_oversize_at_finish_and_reset(void **state)
{
    struct krc_linebuf lb;
    struct sink s;
    (void)state;

    sink_init(&s);
    assert_int_equal(krc_linebuf_init(&lb, 8), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "abcdefghij", 10, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "klm", 3, on_line, on_oversize, &s), 0);
    krc_linebuf_reset(&lb);
    assert_int_equal(s.oversize, 0);
    assert_int_equal(krc_linebuf_feed(&lb, "ok\nABCDEFGHIJ", 13, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "KL", 2, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_finish(&lb, on_line, on_oversize, &s), 0);
    assert_string_equal(s.out, "ok|#");
    assert_int_equal(s.last_oversize, 12);
    assert_int_equal(s.head_len, 8);
    assert_string_equal(s.head, "ABCDEFGH");
    /* max_line + 1 bytes without '\r', in one piece: reported with its head */
    assert_int_equal(krc_linebuf_feed(&lb, "123456789\n", 10, on_line, on_oversize, &s), 0);
    assert_int_equal(s.last_oversize, 9);
    assert_string_equal(s.head, "12345678");
    krc_linebuf_cleanup(&lb);
}

static void test_big_chunk_many_lines(void **state)
{
    /* many lines in one chunk are delivered without buffering */
    char data[1000];
    struct krc_linebuf lb;
    struct sink s;
    size_t n = 0;
    int i;

    (void)state;
    for (i = 0; i < 100; i++) {
        n += (size_t)snprintf(data + n, sizeof(data) - n, "l%02d\n", i);
    }
    sink_init(&s);
    assert_int_equal(krc_linebuf_init(&lb, 16), 0);
    assert_int_equal(krc_linebuf_feed(&lb, data, n, on_line, on_oversize, &s), 0);
    assert_int_equal(s.lines, 100);
    assert_null(lb.buf);
    assert_int_equal(strncmp(s.out, "l00|l01|l02|", 12), 0);
    krc_linebuf_cleanup(&lb);
}

static void test_stop_from_callback(void **state)
{
    struct krc_linebuf lb;
    struct sink s;

    (void)state;
    sink_init(&s);
    s.stop_after = 2;
    assert_int_equal(krc_linebuf_init(&lb, 64), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "par", 3, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "tial\nb\nc\nd", 10, on_line, on_oversize, &s), 7);
    assert_string_equal(s.out, "partial|b|");
    assert_int_equal(krc_linebuf_pending(&lb), 0);
    /* reusable afterwards (new stream) */
    s.stop_after = 0;
    assert_int_equal(krc_linebuf_feed(&lb, "x\ny", 3, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_finish(&lb, on_line, on_oversize, &s), 0);
    assert_string_equal(s.out, "partial|b|x|y|");
    krc_linebuf_cleanup(&lb);
}

static void test_reset_and_finish_edge_cases(void **state)
{
    struct krc_linebuf lb;
    struct sink s;

    (void)state;
    sink_init(&s);
    assert_int_equal(krc_linebuf_init(&lb, 0), KRC_EINVAL);
    assert_int_equal(krc_linebuf_init(&lb, 64), 0);
    assert_int_equal(krc_linebuf_finish(&lb, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "half", 4, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_pending(&lb), 4);
    krc_linebuf_reset(&lb);
    assert_int_equal(krc_linebuf_feed(&lb, "new\r", 4, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_finish(&lb, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_feed(&lb, "\r", 1, on_line, on_oversize, &s), 0);
    assert_int_equal(krc_linebuf_finish(&lb, on_line, on_oversize, &s), 0);
    assert_string_equal(s.out, "new|");
    assert_int_equal(krc_linebuf_feed(&lb, "", 0, on_line, on_oversize, &s), 0);
    krc_linebuf_cleanup(&lb);
    krc_linebuf_cleanup(&lb); /* idempotent */
}

static void test_out_of_memory(void **state)
{
    struct krc_linebuf lb;
    struct sink s;

    (void)state;
    sink_init(&s);
    assert_int_equal(krc_linebuf_init(&lb, 64), 0);
    krc_mem_fail_after(0);
    assert_int_equal(krc_linebuf_feed(&lb, "partial", 7, on_line, on_oversize, &s), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    /* the lost line is dropped up to its newline; later lines are fine */
    assert_int_equal(krc_linebuf_feed(&lb, "-rest\nnext\n", 11, on_line, on_oversize, &s), 0);
    assert_string_equal(s.out, "next|");
    krc_linebuf_cleanup(&lb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split_position),
        cmocka_unit_test(test_one_byte_chunks),
        cmocka_unit_test(test_oversize_then_good_line),
        cmocka_unit_test(test_oversize_one_byte_chunks_bounded),
        cmocka_unit_test(test_oversize_head_and_size),
        cmocka_unit_test(test_oversize_at_finish_and_reset),
        cmocka_unit_test(test_big_chunk_many_lines),
        cmocka_unit_test(test_stop_from_callback),
        cmocka_unit_test(test_reset_and_finish_edge_cases),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
