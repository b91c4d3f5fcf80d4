/* The recovery tracker on its own: what the watch shows (pod events) decides when a
 * "recovered" reply is due, with the time passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/alert/recovery.h"
#include "krc/util/error.h"

#define T 1800000000LL
#define AFTER 60

struct fake_pod {
    struct krc_pod_info p;
    struct krc_container_info c[2];
};

/* ns/name with uid; container "app" (restart count, running, ready) and a sidecar */
static struct krc_pod_info *pod(struct fake_pod *f, const char *uid, const char *name, int count,
                                int running, int ready)
{
    memset(f, 0, sizeof(*f));
    f->p.uid = uid;
    f->p.namespace = "shop";
    f->p.name = name;
    f->c[0].name = "proxy";
    f->c[0].state_running = 1;
    f->c[0].ready = 1;
    f->c[1].name = "app";
    f->c[1].restart_count = count;
    f->c[1].state_running = running;
    f->c[1].state_waiting = !running;
    f->c[1].ready = ready;
    f->p.containers = f->c;
    f->p.n_containers = 2;
    return &f->p;
}

static size_t due(struct krc_recovery *t, int64_t now, struct krc_recovery_due *d)
{
    return krc_recovery_take_due(t, now, AFTER, d, 1);
}

static void test_nothing_awaited(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    struct krc_recovery_due d;
    (void)state;

    assert_non_null(t);
    assert_false(krc_recovery_awaiting(t));
    assert_false(krc_recovery_awaiting(NULL));
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    assert_int_equal(krc_recovery_count(t), 0);
    assert_int_equal(krc_recovery_arm(t, "u1", "app", "1.2", "C1", NULL, T), KRC_ENOTFOUND);
    assert_int_equal(due(t, T + 3600, &d), 0);
    krc_recovery_free(t);
    krc_recovery_free(NULL);
}

static void test_due_after_running_ready_long_enough(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    struct krc_recovery_due d;
    int dest;
    (void)state;

    /* detected at T: in CrashLoopBackOff (the event that revealed the restart) */
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 3, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 0, 0), 0, T);
    assert_int_equal(krc_recovery_arm(t, "u1", "app", "1700000000.000100", "C1", &dest, T + 1), 0);
    /* running but not ready yet, then ready at T+30 */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 1, 0), 0, T + 20);
    assert_int_equal(due(t, T + 20 + AFTER, &d), 0);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 1, 1), 0, T + 30);
    /* an unrelated event of the same pod keeps the time it became ready */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 1, 1), 0, T + 50);
    assert_int_equal(due(t, T + 30 + AFTER - 1, &d), 0);
    assert_int_equal(due(t, T + 30 + AFTER, &d), 1);
    assert_string_equal(d.namespace, "shop");
    assert_string_equal(d.pod, "web-1");
    assert_string_equal(d.container, "app");
    assert_string_equal(d.ts, "1700000000.000100");
    assert_string_equal(d.channel, "C1");
    assert_ptr_equal(d.dest, &dest);
    assert_int_equal(d.restart_count, 3);
    assert_int_equal(d.ready_seconds, AFTER);
    /* taken once */
    assert_int_equal(krc_recovery_count(t), 0);
    assert_int_equal(due(t, T + 1000, &d), 0);
    krc_recovery_free(t);
}

static void test_ready_in_the_event_that_revealed_the_restart(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    struct krc_recovery_due d;
    (void)state;

    /* the new instance runs ready at once: the same event is observed after the await */
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    krc_recovery_arm(t, "u1", "app", "1.1", "C1", NULL, T + 2);
    assert_int_equal(due(t, T + AFTER, &d), 1);
    krc_recovery_free(t);
}

static void test_not_ready_again_and_a_moved_count_restart_the_wait(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    struct krc_recovery_due d;
    (void)state;

    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    krc_recovery_arm(t, "u1", "app", "1.1", "C1", NULL, T);
    /* readiness lost for a while */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 0), 0, T + 10);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T + 20);
    assert_int_equal(due(t, T + AFTER + 5, &d), 0);
    /* it restarted again and came up at once: the wait starts over, with the new count */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 2, 1, 1), 0, T + 40);
    assert_int_equal(due(t, T + 20 + AFTER, &d), 0);
    assert_int_equal(due(t, T + 40 + AFTER, &d), 1);
    assert_int_equal(d.restart_count, 2);
    krc_recovery_free(t);
}

static void test_deleted_replaced_and_expired_are_forgotten(void **state)
{
    struct krc_recovery *t = krc_recovery_new(8);
    struct fake_pod f;
    struct krc_recovery_due d;
    (void)state;

    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_await(t, "u2", "shop", "db-0", "app", 1, T);
    krc_recovery_await(t, "u3", "shop", "api-1", "app", 1, T);
    krc_recovery_await(t, "u4", "shop", "job-1", "app", 1, T);
    assert_int_equal(krc_recovery_count(t), 4);
    assert_true(krc_recovery_awaiting(t));
    /* deleted */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 1, T + 1);
    assert_int_equal(krc_recovery_count(t), 3);
    /* a StatefulSet pod replaced: same name, another uid */
    krc_recovery_observe(t, pod(&f, "u2-new", "db-0", 0, 1, 1), 0, T + 2);
    assert_int_equal(krc_recovery_count(t), 2);
    /* an awaited restart whose alert was never posted is dropped after an hour */
    krc_recovery_arm(t, "u3", "app", "1.3", "C1", NULL, T + 3);
    krc_recovery_observe(t, pod(&f, "u3", "api-1", 2, 0, 0), 0, T + 3);
    assert_int_equal(due(t, T + KRC_RECOVERY_UNARMED_S + 1, &d), 0);
    assert_int_equal(krc_recovery_count(t), 1);
    /* an armed one is given up 24 h after its alert */
    assert_int_equal(due(t, T + 3 + KRC_RECOVERY_GIVE_UP_S, &d), 0);
    assert_int_equal(krc_recovery_count(t), 1);
    assert_int_equal(due(t, T + 4 + KRC_RECOVERY_GIVE_UP_S, &d), 0);
    assert_int_equal(krc_recovery_count(t), 0);
    assert_false(krc_recovery_awaiting(t));
    krc_recovery_free(t);
}

static void test_full_table_replaces_the_oldest(void **state)
{
    struct krc_recovery *t = krc_recovery_new(2);
    (void)state;

    krc_recovery_await(t, "u1", "shop", "a", "app", 1, T);
    krc_recovery_await(t, "u2", "shop", "b", "app", 1, T + 1);
    krc_recovery_await(t, "u3", "shop", "c", "app", 1, T + 2);
    assert_int_equal(krc_recovery_count(t), 2);
    assert_int_equal(krc_recovery_arm(t, "u1", "app", "1", "C", NULL, T), KRC_ENOTFOUND);
    assert_int_equal(krc_recovery_arm(t, "u3", "app", "1", "C", NULL, T), 0);
    /* the same restart awaited again is one entry */
    krc_recovery_await(t, "u3", "shop", "c", "app", 2, T + 3);
    assert_int_equal(krc_recovery_count(t), 2);
    krc_recovery_free(t);
}

/* Every destination a restart can be routed to gets its "recovered" message (five or more
 * used to overwrite the fourth: a PagerDuty incident could stay open). */
static void test_every_routed_destination_is_armed(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    struct krc_recovery_due d[KRC_POLICY_MAX_ROUTED + 1];
    int dests[KRC_POLICY_MAX_ROUTED];
    int seen[KRC_POLICY_MAX_ROUTED] = {0};
    (void)state;

    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    for (size_t i = 0; i < KRC_POLICY_MAX_ROUTED; i++) {
        assert_int_equal(krc_recovery_arm(t, "u1", "app", "1.1", "C1", &dests[i], T + 1), 0);
    }
    assert_int_equal(krc_recovery_take_due(t, T + AFTER, AFTER, d, KRC_POLICY_MAX_ROUTED + 1),
                     KRC_POLICY_MAX_ROUTED);
    for (size_t i = 0; i < KRC_POLICY_MAX_ROUTED; i++) {
        int *p = d[i].dest;
        assert_true(p >= dests && p < dests + KRC_POLICY_MAX_ROUTED);
        seen[p - dests]++;
    }
    for (size_t i = 0; i < KRC_POLICY_MAX_ROUTED; i++) {
        assert_int_equal(seen[i], 1);
    }
    krc_recovery_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_awaited),
        cmocka_unit_test(test_due_after_running_ready_long_enough),
        cmocka_unit_test(test_ready_in_the_event_that_revealed_the_restart),
        cmocka_unit_test(test_not_ready_again_and_a_moved_count_restart_the_wait),
        cmocka_unit_test(test_deleted_replaced_and_expired_are_forgotten),
        cmocka_unit_test(test_full_table_replaces_the_oldest),
        cmocka_unit_test(test_every_routed_destination_is_armed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
