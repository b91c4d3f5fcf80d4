/* The recovery tracker on its own: what the watch shows (pod events) says since when an
 * incident's latest pod runs ready (its end, issue 27: the per-pod "recovered" reply and its
 * arming are gone), with the time passed in. */
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

/* Since when uid/app runs ready at now (0: not ready), or -1 when it is not tracked. */
static int64_t ready(struct krc_recovery *t, const char *uid, int64_t now)
{
    int64_t since = 0;
    return krc_recovery_ready(t, uid, "app", now, &since) == 1 ? since : -1;
}

static void test_nothing_awaited(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    (void)state;

    assert_non_null(t);
    assert_false(krc_recovery_awaiting(t));
    assert_false(krc_recovery_awaiting(NULL));
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    assert_int_equal(krc_recovery_count(t), 0);
    assert_int_equal(ready(t, "u1", T), -1);
    assert_int_equal(ready(NULL, "u1", T), -1);
    krc_recovery_expire(t, T + 3600);
    krc_recovery_free(t);
    krc_recovery_free(NULL);
}

/* The incident's end asks since when its latest pod runs ready (the incident settles
 * recoveredAfter after that time). */
static void test_ready_since_running_and_ready(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    (void)state;

    /* detected at T: in CrashLoopBackOff (the event that revealed the restart) */
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 3, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 0, 0), 0, T);
    assert_int_equal(ready(t, "u1", T + 1), 0);
    /* running but not ready yet, then ready at T+30 */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 1, 0), 0, T + 20);
    assert_int_equal(ready(t, "u1", T + 20), 0);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 1, 1), 0, T + 30);
    /* an unrelated event of the same pod keeps the time it became ready */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 3, 1, 1), 0, T + 50);
    assert_int_equal(ready(t, "u1", T + 30 + AFTER), T + 30);
    /* asking does not take it: the incident decides */
    assert_int_equal(krc_recovery_count(t), 1);
    krc_recovery_free(t);
}

static void test_ready_in_the_event_that_revealed_the_restart(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    (void)state;

    /* the new instance runs ready at once: the same event is observed after the await */
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    assert_int_equal(ready(t, "u1", T + AFTER), T);
    krc_recovery_free(t);
}

static void test_not_ready_again_and_a_moved_count_restart_the_wait(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    (void)state;

    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    /* readiness lost for a while */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 0), 0, T + 10);
    assert_int_equal(ready(t, "u1", T + 10), 0);
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T + 20);
    assert_int_equal(ready(t, "u1", T + 21), T + 20);
    /* it restarted again and came up at once: the wait starts over */
    krc_recovery_observe(t, pod(&f, "u1", "web-1", 2, 1, 1), 0, T + 40);
    assert_int_equal(ready(t, "u1", T + 41), T + 40);
    /* a detected restart (awaited again) waits for the event's state */
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 3, T + 50);
    assert_int_equal(ready(t, "u1", T + 50), 0);
    krc_recovery_free(t);
}

static void test_deleted_replaced_and_expired_are_forgotten(void **state)
{
    struct krc_recovery *t = krc_recovery_new(8);
    struct fake_pod f;
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
    assert_int_equal(ready(t, "u1", T + 1), -1);
    /* a StatefulSet pod replaced: same name, another uid */
    krc_recovery_observe(t, pod(&f, "u2-new", "db-0", 0, 1, 1), 0, T + 2);
    assert_int_equal(krc_recovery_count(t), 2);
    assert_int_equal(ready(t, "u2", T + 2), -1);
    /* an entry an open incident asks about stays; the others go after an hour */
    krc_recovery_observe(t, pod(&f, "u3", "api-1", 2, 0, 0), 0, T + 3);
    assert_int_equal(ready(t, "u3", T + 1800), 0);
    krc_recovery_expire(t, T + KRC_RECOVERY_UNARMED_S + 1);
    assert_int_equal(krc_recovery_count(t), 1);
    assert_int_equal(ready(t, "u4", T + KRC_RECOVERY_UNARMED_S + 1), -1);
    krc_recovery_expire(t, T + 1800 + KRC_RECOVERY_UNARMED_S + 1);
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
    assert_int_equal(ready(t, "u1", T + 3), -1);
    assert_int_equal(ready(t, "u3", T + 3), 0);
    /* the same restart awaited again is one entry */
    krc_recovery_await(t, "u3", "shop", "c", "app", 2, T + 3);
    assert_int_equal(krc_recovery_count(t), 2);
    krc_recovery_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_awaited),
        cmocka_unit_test(test_ready_since_running_and_ready),
        cmocka_unit_test(test_ready_in_the_event_that_revealed_the_restart),
        cmocka_unit_test(test_not_ready_again_and_a_moved_count_restart_the_wait),
        cmocka_unit_test(test_deleted_replaced_and_expired_are_forgotten),
        cmocka_unit_test(test_full_table_replaces_the_oldest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
