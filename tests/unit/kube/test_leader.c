/* Leader election helpers: the hand-over annotation, MicroTime, the handled
 * set (the election itself runs against the fake API server in
 * tests/integration/test_leader.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/kube/leader.h"
#include "krc/util/mem.h"

static void test_microtime(void **state)
{
    char out[40];
    (void)state;
    krc_leader_format_microtime(INT64_C(1796239909) * 1000000 + 123456, out, sizeof(out));
    assert_string_equal(out, "2026-12-02T19:31:49.123456Z");
    krc_leader_format_microtime(0, out, sizeof(out));
    assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
}

static void test_parse_handled(void **state)
{
    struct krc_leader_handled h[4];
    const char *text = "1796239909 0b5e-uid app 3\n"
                       "garbage line\n"
                       "1796239910 1c6f-uid sidecar 12 extra\n" /* too many fields */
                       "\n"
                       "-5 x y 1\n" /* bad time */
                       "1796239911 2d7a-uid init-db 0";
    (void)state;
    assert_int_equal(krc_leader_parse_handled(text, h, 4), 2);
    assert_int_equal(h[0].at, 1796239909);
    assert_string_equal(h[0].key, "0b5e-uid/app/3");
    assert_string_equal(h[1].key, "2d7a-uid/init-db/0");
    /* bounded by max */
    assert_int_equal(krc_leader_parse_handled(text, h, 1), 1);
    assert_int_equal(krc_leader_parse_handled("", h, 4), 0);
    assert_int_equal(krc_leader_parse_handled(NULL, h, 4), 0);
}

static struct krc_leader *new_leader(size_t handled_max)
{
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;

    memset(&o, 0, sizeof(o));
    o.namespace = "krc";
    o.name = "krc";
    o.identity = "pod-a";
    o.lease_duration_s = 15;
    o.renew_deadline_s = 10;
    o.retry_period_s = 2;
    o.handled_max = handled_max;
    krc_error_clear(&e);
    assert_int_equal(krc_leader_new(NULL, &o, &l, &e), 0);
    return l;
}

/* Scenario 5 of issue 12: a restart is its termination, not its count. */
static void test_handled_identity_is_the_termination(void **state)
{
    struct krc_leader *l = new_leader(100);
    const char *cid = "containerd://0123456789abcdef0123456789abcdef";
    (void)state;

    krc_leader_note_handled(l, "u1", "app", 3, 1796239000, cid);
    /* the same termination, relisted */
    assert_true(krc_leader_was_handled(l, "u1", "app", 3, 1796239000, cid));
    /* same count, newer termination: a new crash */
    assert_false(krc_leader_was_handled(l, "u1", "app", 3, 1796239100, cid));
    /* the count went down and climbed back to 3: a new crash */
    assert_false(krc_leader_was_handled(l, "u1", "app", 3, 1796239200,
                                        "containerd://ffff456789abcdef0123456789abcdef"));
    /* the same second, another container: a new crash */
    assert_false(krc_leader_was_handled(l, "u1", "app", 3, 1796239000,
                                        "containerd://9999456789abcdef0123456789abcdef"));
    /* the same termination at another count: another restart */
    assert_false(krc_leader_was_handled(l, "u1", "app", 4, 1796239000, cid));
    /* the count alone (no finishedAt) does not match a termination */
    assert_false(krc_leader_was_handled(l, "u1", "app", 3, 0, NULL));
    krc_leader_free(l);
}

/* A Lease written by an older krc: "AT UID CONTAINER COUNT". */
static void test_handled_reads_the_old_encoding(void **state)
{
    struct krc_leader *l = new_leader(100);
    const char *text = "1796239909 0b5e-uid app 3\n"
                       "1796239950 0b5e-uid app t1796239940:0123456789abcdef#4\n"
                       "1796239960 1c6f-uid app c2\n";
    struct krc_leader_handled h[4];
    (void)state;

    assert_int_equal(krc_leader_parse_handled(text, h, 4), 3);
    assert_string_equal(h[0].key, "0b5e-uid/app/3");
    assert_string_equal(h[1].key, "0b5e-uid/app/t1796239940:0123456789abcdef#4");
    assert_string_equal(h[2].key, "1c6f-uid/app/c2");
    assert_int_equal(krc_leader_merge_handled(l, text), 3);
    /* old entry: count 3, handled at ...909: a termination of count 3 that
     * finished before is the same one; one that finished later is new */
    assert_true(krc_leader_was_handled(l, "0b5e-uid", "app", 3, 1796239900, "docker://x"));
    assert_true(krc_leader_was_handled(l, "0b5e-uid", "app", 3, 0, NULL));
    assert_false(krc_leader_was_handled(l, "0b5e-uid", "app", 3, 1796239930, NULL));
    assert_false(krc_leader_was_handled(l, "0b5e-uid", "app", 4, 1796239900, NULL));
    /* new entries */
    assert_true(krc_leader_was_handled(l, "0b5e-uid", "app", 4, 1796239940,
                                       "containerd://0123456789abcdef0123"));
    assert_true(krc_leader_was_handled(l, "1c6f-uid", "app", 2, 0, NULL));
    assert_false(krc_leader_was_handled(l, "1c6f-uid", "app", 2, 1796239940, NULL));
    /* malformed identities are skipped */
    assert_int_equal(krc_leader_parse_handled("1 u app x3\n1 u app t12:#1\n1 u app t1:a-b#1\n"
                                              "1 u app t12\n1 u app t12#\n1 u app c\n",
                                              h, 4),
                     0);
    assert_int_equal(krc_leader_parse_handled("1 u app t12#1\n", h, 4), 1);
    assert_string_equal(h[0].key, "u/app/t12#1");
    krc_leader_free(l);
}

static void test_handled_set_is_bounded(void **state)
{
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;
    char uid[32];
    (void)state;

    memset(&o, 0, sizeof(o));
    o.namespace = "krc";
    o.name = "krc";
    o.identity = "pod-a";
    o.lease_duration_s = 15;
    o.renew_deadline_s = 10;
    o.retry_period_s = 2;
    o.handled_max = 3;
    krc_error_clear(&e);
    assert_int_equal(krc_leader_new(NULL, &o, &l, &e), 0);
    for (int i = 0; i < 5; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        krc_leader_note_handled(l, uid, "app", i, 0, NULL);
        krc_leader_note_handled(l, uid, "app", i, 0, NULL); /* duplicates are not added twice */
    }
    /* the oldest two made room */
    assert_false(krc_leader_was_handled(l, "uid-0", "app", 0, 0, NULL));
    assert_false(krc_leader_was_handled(l, "uid-1", "app", 1, 0, NULL));
    assert_true(krc_leader_was_handled(l, "uid-2", "app", 2, 0, NULL));
    assert_true(krc_leader_was_handled(l, "uid-4", "app", 4, 0, NULL));
    /* without a finishedAt the count is the key: the next restart is a new one */
    assert_false(krc_leader_was_handled(l, "uid-4", "app", 5, 0, NULL));
    assert_false(krc_leader_was_handled(l, "uid-4", "other", 4, 0, NULL));
    assert_int_equal(krc_leader_role(l), KRC_LEADER_STANDBY);
    krc_leader_free(l);
}

static void test_new_needs_names(void **state)
{
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;
    (void)state;
    memset(&o, 0, sizeof(o));
    o.namespace = "krc";
    o.name = "krc";
    krc_error_clear(&e);
    assert_int_equal(krc_leader_new(NULL, &o, &l, &e), KRC_EINVAL);
    assert_null(l);
    assert_non_null(strstr(e.msg, "identity"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_microtime),
        cmocka_unit_test(test_parse_handled),
        cmocka_unit_test(test_handled_set_is_bounded),
        cmocka_unit_test(test_handled_identity_is_the_termination),
        cmocka_unit_test(test_handled_reads_the_old_encoding),
        cmocka_unit_test(test_new_needs_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
