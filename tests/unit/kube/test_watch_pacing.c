/* The watch loop's retry pacing (issue 12): an outage's backoff is reset by
 * a healthy stream and never charged to a bad line. Time is passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/kube/watch_pacing.h"

#define INITIAL 800
#define MAX 30000
#define RESET 120000

/* An outage: connecting fails again and again, each after the last delay. */
static int64_t outage(struct krc_watch_pacing *p, int64_t *now, int failures)
{
    int64_t d = 0;
    for (int i = 0; i < failures; i++) {
        d = krc_watch_pacing_failure(p, *now);
        *now += d;
    }
    return d;
}

/* The case of the issue: an outage, then a malformed line right after the
 * stream came back. The outage's backoff (here >= 12.8 s) must not apply. */
static void test_bad_line_after_outage_costs_little(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        struct krc_watch_pacing p;
        int64_t now = 1000000;
        int64_t d;

        krc_watch_pacing_init(&p, INITIAL, MAX, RESET, seed);
        outage(&p, &now, 5);
        assert_true(p.conn.current_ms >= 6400);
        /* the stream is back; its first line is malformed, 50 ms in */
        d = krc_watch_pacing_bad_line(&p, now + 50, 50);
        assert_true(d >= INITIAL && d < 2 * INITIAL);
        /* without a healthy event the outage backoff is still there for
         * the next connection failure */
        assert_true(krc_watch_pacing_failure(&p, now + 100) >= 12800);
    }
}

/* A stream that delivered an event is healthy: the next failure starts from
 * the initial delay again, even though the outage was less than the 2 min
 * reset ago. */
static void test_healthy_stream_resets_the_outage_backoff(void **state)
{
    struct krc_watch_pacing p;
    int64_t now = 1000000;
    int64_t d;
    (void)state;

    krc_watch_pacing_init(&p, INITIAL, MAX, RESET, 7);
    d = outage(&p, &now, 6);
    assert_true(d >= 15000);
    krc_watch_pacing_healthy(&p);
    d = krc_watch_pacing_failure(&p, now + 5000);
    assert_true(d >= INITIAL && d < 2 * INITIAL);
}

/* A bad line after the stream ran a while: resume at once, no backoff used. */
static void test_bad_line_on_a_long_stream_resumes_at_once(void **state)
{
    struct krc_watch_pacing p;
    (void)state;

    krc_watch_pacing_init(&p, INITIAL, MAX, RESET, 3);
    assert_int_equal(krc_watch_pacing_bad_line(&p, 5000, KRC_WATCH_PACING_HEALTHY_MS), 0);
    assert_int_equal(krc_watch_pacing_bad_line(&p, 9000, 60000), 0);
    assert_int_equal(p.line.current_ms, 0);
}

/* A server that keeps sending bad lines at once still gets growing delays,
 * events before the bad line notwithstanding (the line backoff is not reset
 * by events), capped at the maximum. */
static void test_repeated_bad_lines_back_off(void **state)
{
    struct krc_watch_pacing p;
    int64_t now = 1000000;
    int64_t prev = 0;
    (void)state;

    krc_watch_pacing_init(&p, INITIAL, MAX, RESET, 11);
    for (int i = 0; i < 10; i++) {
        int64_t d;
        krc_watch_pacing_healthy(&p); /* a bookmark arrived before the bad line */
        d = krc_watch_pacing_bad_line(&p, now, 100);
        assert_true(d > 0 && d <= MAX);
        if (i < 5) {
            assert_true(d >= prev); /* [x, 2x) then [2x, 4x) never go down */
        }
        prev = d;
        now += d + 100;
    }
    assert_int_equal(p.line.current_ms, MAX);
    /* and it is forgotten 2 min after the last one */
    assert_true(krc_watch_pacing_bad_line(&p, now + RESET + 1, 100) < 2 * INITIAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_line_after_outage_costs_little),
        cmocka_unit_test(test_healthy_stream_resets_the_outage_backoff),
        cmocka_unit_test(test_bad_line_on_a_long_stream_resumes_at_once),
        cmocka_unit_test(test_repeated_bad_lines_back_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
