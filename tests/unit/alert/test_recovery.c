/* The recovery tracker on its own: what the watch shows (pod events) says since when an
 * incident's latest pod runs ready (its end, issue 27: the per-pod "recovered" reply and its
 * arming are gone), with the time passed in; its index (by UID, by namespace/name) and the
 * lock-free filter in front of it, full and emptied again; an ended incident's entry. */
#include <pthread.h>
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

/* A watch event of pod at now, as krc_sender_pod_event hands it over. */
static void observe(struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                    int64_t now)
{
    struct krc_recovery_probe p;

    if (krc_recovery_wants(t, pod, deleted, &p)) {
        krc_recovery_apply(t, pod, deleted, &p, now);
    }
}

/* Since when uid/app runs ready at now (0: not ready), or -1 when it is not tracked. */
static int64_t ready(struct krc_recovery *t, const char *uid, int64_t now)
{
    int64_t since = 0;
    return krc_recovery_ready(t, uid, "app", now, &since, NULL) == 1 ? since : -1;
}

static void test_nothing_awaited(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct krc_recovery_probe p;
    struct fake_pod f;
    (void)state;

    assert_non_null(t);
    assert_int_equal(krc_recovery_count(t), 0);
    assert_int_equal(krc_recovery_count(NULL), 0);
    assert_false(krc_recovery_wants(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, &p));
    assert_false(krc_recovery_wants(NULL, pod(&f, "u1", "web-1", 1, 1, 1), 0, &p));
    observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
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
    observe(t, pod(&f, "u1", "web-1", 3, 0, 0), 0, T);
    assert_int_equal(ready(t, "u1", T + 1), 0);
    /* running but not ready yet, then ready at T+30 */
    observe(t, pod(&f, "u1", "web-1", 3, 1, 0), 0, T + 20);
    assert_int_equal(ready(t, "u1", T + 20), 0);
    observe(t, pod(&f, "u1", "web-1", 3, 1, 1), 0, T + 30);
    /* an unrelated event of the same pod keeps the time it became ready */
    observe(t, pod(&f, "u1", "web-1", 3, 1, 1), 0, T + 50);
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
    observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    assert_int_equal(ready(t, "u1", T + AFTER), T);
    krc_recovery_free(t);
}

static void test_not_ready_again_and_a_moved_count_restart_the_wait(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    struct fake_pod f;
    (void)state;

    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T);
    /* readiness lost for a while */
    observe(t, pod(&f, "u1", "web-1", 1, 1, 0), 0, T + 10);
    assert_int_equal(ready(t, "u1", T + 10), 0);
    observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 0, T + 20);
    assert_int_equal(ready(t, "u1", T + 21), T + 20);
    /* it restarted again and came up at once: the wait starts over */
    observe(t, pod(&f, "u1", "web-1", 2, 1, 1), 0, T + 40);
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
    /* deleted */
    observe(t, pod(&f, "u1", "web-1", 1, 1, 1), 1, T + 1);
    assert_int_equal(krc_recovery_count(t), 3);
    assert_int_equal(ready(t, "u1", T + 1), -1);
    /* a StatefulSet pod replaced: same name, another uid */
    observe(t, pod(&f, "u2-new", "db-0", 0, 1, 1), 0, T + 2);
    assert_int_equal(krc_recovery_count(t), 2);
    assert_int_equal(ready(t, "u2", T + 2), -1);
    /* an entry an open incident asks about stays; the others go after an hour */
    observe(t, pod(&f, "u3", "api-1", 2, 0, 0), 0, T + 3);
    assert_int_equal(ready(t, "u3", T + 1800), 0);
    krc_recovery_expire(t, T + KRC_RECOVERY_KEEP_S + 1);
    assert_int_equal(krc_recovery_count(t), 1);
    assert_int_equal(ready(t, "u4", T + KRC_RECOVERY_KEEP_S + 1), -1);
    krc_recovery_expire(t, T + 1800 + KRC_RECOVERY_KEEP_S + 1);
    assert_int_equal(krc_recovery_count(t), 0);
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

/* ns/name with uid, one container `container` (restart count 1, running and ready or not). */
static struct krc_pod_info *pod1(struct fake_pod *f, const char *uid, const char *ns,
                                 const char *name, int up)
{
    memset(f, 0, sizeof(*f));
    f->p.uid = uid;
    f->p.namespace = ns;
    f->p.name = name;
    f->c[0].name = "app";
    f->c[0].restart_count = 1;
    f->c[0].state_running = up;
    f->c[0].ready = up;
    f->c[1].name = "proxy";
    f->c[1].restart_count = 1;
    f->c[1].state_running = up;
    f->c[1].ready = up;
    f->p.containers = f->c;
    f->p.n_containers = 2;
    return &f->p;
}

static int64_t ready_of(struct krc_recovery *t, const char *uid, const char *container, int64_t now)
{
    int64_t since = 0;
    return krc_recovery_ready(t, uid, container, now, &since, NULL) == 1 ? since : -1;
}

#define MANY 512 /* pods, two awaited containers each: 1024 entries */

struct names {
    char uid[MANY][16];
    char ns[MANY][16];
    char name[MANY][16];
};

/* A full table of 1024 entries: each event reaches its own pod's entries and no other's,
 * replaced, deleted and forgotten pods go, their slots are used again, and a full table
 * still replaces one entry for a new one. */
static void test_index_many_entries(void **state)
{
    struct krc_recovery *t = krc_recovery_new(2 * MANY);
    static struct names nm;
    struct krc_recovery_probe p;
    struct fake_pod f;
    size_t gone = 0;
    size_t maybe = 0;
    size_t found = 0;
    (void)state;

    assert_non_null(t);
    for (int i = 0; i < MANY; i++) {
        snprintf(nm.uid[i], sizeof(nm.uid[i]), "uid-%04d", i);
        snprintf(nm.ns[i], sizeof(nm.ns[i]), "ns-%d", i % 7);
        snprintf(nm.name[i], sizeof(nm.name[i]), "pod-%04d", i);
        krc_recovery_await(t, nm.uid[i], nm.ns[i], nm.name[i], "app", 1, T);
        krc_recovery_await(t, nm.uid[i], nm.ns[i], nm.name[i], "proxy", 1, T);
    }
    assert_int_equal(krc_recovery_count(t), 2 * MANY);
    /* pod i comes up at T + i: its two entries say so, no other's moves */
    for (int i = 0; i < MANY; i++) {
        observe(t, pod1(&f, nm.uid[i], nm.ns[i], nm.name[i], 1), 0, T + i);
    }
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(ready_of(t, nm.uid[i], "app", T + 1000), T + i);
        assert_int_equal(ready_of(t, nm.uid[i], "proxy", T + 1000), T + i);
    }
    /* pods nothing waits for: no entry changes, and the filter turns nearly all of them
     * away without the lock */
    for (int i = 0; i < 10000; i++) {
        char uid[32], name[32];
        snprintf(uid, sizeof(uid), "other-%05d", i);
        snprintf(name, sizeof(name), "web-%05d", i);
        maybe += (size_t)krc_recovery_wants(t, pod1(&f, uid, nm.ns[i % MANY], name, 0), 0, &p);
        observe(t, &f.p, 0, T + 2000);
    }
    assert_int_equal(krc_recovery_count(t), 2 * MANY);
    assert_true(maybe < 500); /* under 5% of false positives */
    for (int i = 0; i < MANY; i++) {
        /* the filter never turns away an awaited pod's event, nor its replacement's */
        assert_true(krc_recovery_wants(t, pod1(&f, nm.uid[i], nm.ns[i], nm.name[i], 1), 1, &p));
        assert_true(krc_recovery_wants(t, pod1(&f, "fresh", nm.ns[i], nm.name[i], 1), 0, &p));
        assert_int_equal(ready_of(t, nm.uid[i], "app", T + 2000), T + i);
    }
    /* a tenth replaced (same namespace/name, another uid), a tenth deleted, a tenth
     * forgotten by the end of their incident */
    for (int i = 0; i < MANY; i++) {
        char uid[32];
        uint64_t gen = 0;
        int64_t since;
        snprintf(uid, sizeof(uid), "new-%04d", i);
        if (i % 10 == 0) {
            observe(t, pod1(&f, uid, nm.ns[i], nm.name[i], 1), 0, T + 3000);
        } else if (i % 10 == 1) {
            observe(t, pod1(&f, nm.uid[i], nm.ns[i], nm.name[i], 1), 1, T + 3000);
        } else if (i % 10 == 2) {
            assert_int_equal(krc_recovery_ready(t, nm.uid[i], "app", T + 3000, &since, &gen), 1);
            krc_recovery_forget(t, nm.uid[i], "app", gen);
            assert_int_equal(krc_recovery_ready(t, nm.uid[i], "proxy", T + 3000, &since, &gen), 1);
            krc_recovery_forget(t, nm.uid[i], "proxy", gen);
        } else {
            continue;
        }
        gone += 2;
    }
    assert_int_equal(krc_recovery_count(t), 2 * MANY - gone);
    for (int i = 0; i < MANY; i++) {
        int64_t want = i % 10 <= 2 ? -1 : T + i;
        assert_int_equal(ready_of(t, nm.uid[i], "app", T + 3000), want);
        assert_int_equal(ready_of(t, nm.uid[i], "proxy", T + 3000), want);
    }
    /* their slots are used again: the table is full once more, and still right */
    for (size_t k = 0; k < gone; k++) {
        char uid[32], name[32];
        snprintf(uid, sizeof(uid), "again-%04zu", k);
        snprintf(name, sizeof(name), "again-%04zu", k);
        krc_recovery_await(t, uid, "ns-again", name, "app", 1, T + 4000);
        observe(t, pod1(&f, uid, "ns-again", name, 1), 0, T + 4000 + (int64_t)k);
    }
    assert_int_equal(krc_recovery_count(t), 2 * MANY);
    for (size_t k = 0; k < gone; k++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "again-%04zu", k);
        assert_int_equal(ready_of(t, uid, "app", T + 5000), T + 4000 + (int64_t)k);
    }
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(ready_of(t, nm.uid[i], "app", T + 5000), i % 10 <= 2 ? -1 : T + i);
    }
    /* full: a new restart replaces one entry (the one awaited or asked longest ago) */
    krc_recovery_await(t, "late", "ns-late", "late-0", "app", 1, T + 6000);
    assert_int_equal(krc_recovery_count(t), 2 * MANY);
    assert_int_equal(ready_of(t, "late", "app", T + 6000), 0);
    for (int i = 0; i < MANY; i++) {
        found += ready_of(t, nm.uid[i], "app", T + 6000) >= 0;
        found += ready_of(t, nm.uid[i], "proxy", T + 6000) >= 0;
    }
    for (size_t k = 0; k < gone; k++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "again-%04zu", k);
        found += ready_of(t, uid, "app", T + 6000) >= 0;
    }
    assert_int_equal(found, 2 * MANY - 1);
    /* an hour after the last ask, all go */
    krc_recovery_expire(t, T + 6001 + KRC_RECOVERY_KEEP_S);
    assert_int_equal(krc_recovery_count(t), 0);
    assert_false(krc_recovery_wants(t, pod1(&f, nm.uid[5], nm.ns[5], nm.name[5], 1), 0, &p));
    krc_recovery_free(t);
}

/* 256 entries of one namespace/name (a pod replaced again and again, each restarted): the
 * filter's counters of that name stay up when full (a counter of 8 bits that wrapped would
 * say no, and the replacement would be missed). */
static void test_filter_counter_saturates(void **state)
{
    struct krc_recovery *t = krc_recovery_new(512);
    struct krc_recovery_probe p;
    struct fake_pod f;
    (void)state;

    for (int i = 0; i < 256; i++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "db-0-uid-%03d", i);
        krc_recovery_await(t, uid, "shop", "db-0", "app", 1, T);
    }
    assert_int_equal(krc_recovery_count(t), 256);
    assert_true(krc_recovery_wants(t, pod1(&f, "db-0-uid-new", "shop", "db-0", 1), 0, &p));
    observe(t, &f.p, 0, T + 1);
    assert_int_equal(krc_recovery_count(t), 0);
    /* emptied: still right */
    krc_recovery_await(t, "web-uid", "shop", "web-0", "app", 1, T + 2);
    observe(t, pod1(&f, "web-uid", "shop", "web-0", 1), 0, T + 3);
    assert_int_equal(ready_of(t, "web-uid", "app", T + 4), T + 3);
    observe(t, pod1(&f, "web-uid", "shop", "web-0", 1), 1, T + 5);
    assert_int_equal(krc_recovery_count(t), 0);
    krc_recovery_free(t);
}

/* The end of an incident forgets the entry it asked about, unless a restart of the
 * container was awaited since (its own incident waits for it). */
static void test_forget_only_the_asked_await(void **state)
{
    struct krc_recovery *t = krc_recovery_new(4);
    uint64_t gen = 0;
    uint64_t gen2 = 0;
    int64_t since = 0;
    (void)state;

    krc_recovery_forget(t, "u1", "app", 1); /* nothing awaited: nothing happens */
    krc_recovery_forget(NULL, "u1", "app", 1);
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 1, T);
    krc_recovery_await(t, "u2", "shop", "web-2", "app", 1, T);
    assert_int_equal(krc_recovery_ready(t, "u1", "app", T + 1, &since, &gen), 1);
    assert_true(gen != 0);
    krc_recovery_forget(t, "u1", "app", 0);
    krc_recovery_forget(t, "u1", "other", gen);
    assert_int_equal(krc_recovery_count(t), 2);
    krc_recovery_forget(t, "u1", "app", gen);
    assert_int_equal(krc_recovery_count(t), 1);
    assert_int_equal(ready(t, "u1", T + 2), -1);
    /* awaited again after the ask: kept */
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 2, T + 3);
    assert_int_equal(krc_recovery_ready(t, "u1", "app", T + 4, &since, &gen), 1);
    krc_recovery_await(t, "u1", "shop", "web-1", "app", 3, T + 5);
    krc_recovery_forget(t, "u1", "app", gen);
    assert_int_equal(krc_recovery_count(t), 2);
    assert_int_equal(krc_recovery_ready(t, "u1", "app", T + 6, &since, &gen2), 1);
    assert_true(gen2 != gen);
    krc_recovery_forget(t, "u1", "app", gen2);
    assert_int_equal(krc_recovery_count(t), 1);
    assert_int_equal(ready(t, "u2", T + 7), 0);
    krc_recovery_free(t);
}

/* Watch threads (two scopes) and the incidents' end at once: each thread's entries stay
 * its own (the ASan and TSan builds check the rest). */
struct racer {
    struct krc_recovery *t;
    int id;
    int bad;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    struct fake_pod f;

    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 20; i++) {
            char uid[32], name[32];
            uint64_t gen = 0;
            int64_t since = 0;
            snprintf(uid, sizeof(uid), "r%d-%d", r->id, i);
            snprintf(name, sizeof(name), "pod-%d-%d", r->id, i);
            krc_recovery_await(r->t, uid, "shop", name, "app", 1, T + round);
            observe(r->t, pod1(&f, uid, "shop", name, 1), 0, T + round);
            if (krc_recovery_ready(r->t, uid, "app", T + round, &since, &gen) != 1 ||
                since != T + round) {
                r->bad++;
            }
            if (i % 2 == 0) {
                krc_recovery_forget(r->t, uid, "app", gen);
            } else {
                observe(r->t, &f.p, 1, T + round);
            }
            snprintf(uid, sizeof(uid), "unrelated-%d-%d", r->id, i);
            observe(r->t, pod1(&f, uid, "shop", "nobody", 1), 0, T + round);
        }
    }
    return NULL;
}

static void test_threads(void **state)
{
    struct krc_recovery *t = krc_recovery_new(64);
    struct racer r[3];
    pthread_t th[3];
    (void)state;

    for (int i = 0; i < 3; i++) {
        r[i].t = t;
        r[i].id = i;
        r[i].bad = 0;
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 200; i++) {
        krc_recovery_expire(t, T);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(r[i].bad, 0);
    }
    assert_int_equal(krc_recovery_count(t), 0);
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
        cmocka_unit_test(test_index_many_entries),
        cmocka_unit_test(test_filter_counter_saturates),
        cmocka_unit_test(test_forget_only_the_asked_await),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
