/* Exponential backoff with jitter. Time is passed in, so no test sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/backoff.h"

/* Nominal delays double from initial up to max; each actual delay is in
 * [d, 2d) while 2d stays within max, and never above max. */
static void test_doubling_and_cap(void **state)
{
    struct krc_backoff b;
    int64_t now = 1000000;
    int64_t expect = 1000;
    (void)state;

    for (uint64_t seed = 1; seed <= 200; seed++) {
        krc_backoff_init(&b, 1000, 30000, 60000, seed);
        expect = 1000;
        for (int i = 0; i < 12; i++) {
            int64_t d = krc_backoff_next(&b, now);
            now += d;
            assert_int_equal(b.current_ms, expect);
            assert_true(d <= 30000);
            if (2 * expect <= 30000) {
                if (d < expect || d >= 2 * expect) {
                    fail_msg("seed %llu step %d: delay %lld outside [%lld, %lld)",
                             (unsigned long long)seed, i, (long long)d, (long long)expect,
                             (long long)(2 * expect));
                }
            } else {
                /* at the cap: spread, but not collapsed below half of it */
                assert_true(d >= 15000);
            }
            expect = expect * 2 > 30000 ? 30000 : expect * 2;
        }
    }
}

/* Small delays make the bounds of [d, 2d) visible: both ends are reached,
 * 2d never is. */
static void test_jitter_bounds_exact(void **state)
{
    int seen_low = 0;
    int seen_high = 0;
    (void)state;

    for (uint64_t seed = 1; seed <= 3000; seed++) {
        struct krc_backoff b;
        int64_t d;
        krc_backoff_init(&b, 2, 1000000, 0, seed);
        d = krc_backoff_next(&b, 0);
        assert_true(d == 2 || d == 3);
        seen_low += d == 2;
        seen_high += d == 3;
        d = krc_backoff_next(&b, 0);
        assert_true(d >= 4 && d < 8);
    }
    assert_true(seen_low > 1000);
    assert_true(seen_high > 1000);
}

static void test_reset_after_quiet_period(void **state)
{
    struct krc_backoff b;
    int64_t now = 5000;
    int64_t d;
    (void)state;

    krc_backoff_init(&b, 500, 8000, 10000, 7);
    for (int i = 0; i < 6; i++) {
        now += 1000; /* failures 1 s apart: well inside reset_ms */
        krc_backoff_next(&b, now);
    }
    assert_int_equal(b.current_ms, 8000);

    /* exactly reset_ms after the last failure: not yet */
    now += 10000;
    d = krc_backoff_next(&b, now);
    assert_int_equal(b.current_ms, 8000);
    assert_true(d <= 8000);

    /* longer than reset_ms: back to the initial delay */
    now += 10001;
    d = krc_backoff_next(&b, now);
    assert_int_equal(b.current_ms, 500);
    assert_true(d >= 500 && d < 1000);
    d = krc_backoff_next(&b, now + 1);
    assert_int_equal(b.current_ms, 1000);
    assert_true(d >= 1000 && d < 2000);
}

static void test_reset_disabled_and_explicit(void **state)
{
    struct krc_backoff b;
    (void)state;

    krc_backoff_init(&b, 100, 1000, 0, 3);
    krc_backoff_next(&b, 0);
    krc_backoff_next(&b, 1);
    assert_int_equal(b.current_ms, 200);
    /* reset_ms 0: a long pause does not reset */
    krc_backoff_next(&b, 100000000);
    assert_int_equal(b.current_ms, 400);

    krc_backoff_reset(&b);
    {
        int64_t d = krc_backoff_next(&b, 100000001);
        assert_int_equal(b.current_ms, 100);
        assert_true(d >= 100 && d < 200);
    }
}

static void test_deterministic_by_seed(void **state)
{
    struct krc_backoff a;
    struct krc_backoff b;
    struct krc_backoff c;
    int differ = 0;
    (void)state;

    krc_backoff_init(&a, 1000, 600000, 0, 12345);
    krc_backoff_init(&b, 1000, 600000, 0, 12345);
    krc_backoff_init(&c, 1000, 600000, 0, 54321);
    for (int i = 0; i < 20; i++) {
        int64_t x = krc_backoff_next(&a, i);
        int64_t y = krc_backoff_next(&b, i);
        int64_t z = krc_backoff_next(&c, i);
        assert_int_equal(x, y);
        differ += x != z;
    }
    assert_true(differ > 10);
}

/* Many clients starting together must not retry in step. */
static void test_jitter_spreads(void **state)
{
    int64_t lo = INT64_MAX;
    int64_t hi = 0;
    int64_t cap_lo = INT64_MAX;
    int64_t cap_hi = 0;
    (void)state;

    for (uint64_t seed = 1; seed <= 2000; seed++) {
        struct krc_backoff b;
        int64_t d;
        krc_backoff_init(&b, 1000, 4000, 0, seed * 0x9E3779B97F4A7C15ULL);
        d = krc_backoff_next(&b, 0);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
        for (int i = 0; i < 4; i++) {
            d = krc_backoff_next(&b, 0);
        }
        cap_lo = d < cap_lo ? d : cap_lo;
        cap_hi = d > cap_hi ? d : cap_hi;
    }
    assert_true(lo < 1050);
    assert_true(hi > 1950);
    assert_true(cap_lo < 2200);
    assert_true(cap_hi > 3800);
    assert_true(cap_hi <= 4000);
}

static void test_rand_range(void **state)
{
    struct krc_backoff b;
    int buckets[10] = {0};
    (void)state;

    krc_backoff_init(&b, 1, 2, 0, 99);
    for (int i = 0; i < 20000; i++) {
        int64_t v = krc_backoff_rand_range(&b, 0, 10);
        assert_true(v >= 0 && v < 10);
        buckets[v]++;
    }
    for (int i = 0; i < 10; i++) {
        if (buckets[i] < 1600 || buckets[i] > 2400) {
            fail_msg("bucket %d has %d of 20000", i, buckets[i]);
        }
    }
    for (int i = 0; i < 1000; i++) {
        int64_t v = krc_backoff_rand_range(&b, -5, 5);
        assert_true(v >= -5 && v < 5);
    }
    /* empty or inverted ranges give lo */
    assert_int_equal(krc_backoff_rand_range(&b, 7, 7), 7);
    assert_int_equal(krc_backoff_rand_range(&b, 7, 3), 7);
    assert_int_equal(krc_backoff_rand_range(&b, 7, 8), 7);
}

/* Seed 0 must not leave xorshift stuck at zero. */
static void test_seed_zero(void **state)
{
    struct krc_backoff b;
    int distinct = 0;
    int64_t prev = -1;
    (void)state;

    krc_backoff_init(&b, 1, 2, 0, 0);
    for (int i = 0; i < 50; i++) {
        int64_t v = krc_backoff_rand_range(&b, 0, 1000000);
        distinct += v != prev;
        prev = v;
    }
    assert_true(distinct > 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubling_and_cap),
        cmocka_unit_test(test_jitter_bounds_exact),
        cmocka_unit_test(test_reset_after_quiet_period),
        cmocka_unit_test(test_reset_disabled_and_explicit),
        cmocka_unit_test(test_deterministic_by_seed),
        cmocka_unit_test(test_jitter_spreads),
        cmocka_unit_test(test_rand_range),
        cmocka_unit_test(test_seed_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
