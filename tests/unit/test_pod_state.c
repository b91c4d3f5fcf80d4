/* Restart detection table: pods are built directly as struct krc_pod_info
 * values (no JSON), so each test states exactly what the table sees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/error.h"
#include "krc/kube_pod.h"
#include "krc/mem.h"
#include "krc/pod_state.h"

#define START 1800000000LL  /* daemon start-up time */
#define SINCE (START - 600) /* report_since: start minus a 10 minute window */
#define RECENT (START - 60) /* a termination inside the start-up window */
#define OLD (START - 3600)  /* a termination before the start-up window */

/* --- pods ----------------------------------------------------------------- */

#define MAX_C 8

struct tpod {
    struct krc_pod_info info;
    struct krc_container_info c[MAX_C];
    char uid[48];
    char name[48];
    char cname[MAX_C][32];
};

static void tpod_init(struct tpod *p, const char *uid, const char *ns, const char *name)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->uid, sizeof(p->uid), "%s", uid);
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->info.uid = p->uid;
    p->info.namespace = ns;
    p->info.name = p->name;
    p->info.resource_version = "";
    p->info.creation_timestamp = START - 86400;
    p->info.containers = p->c;
}

/* Append a container; fin == 0 means no lastState.terminated. */
static struct krc_container_info *tpod_add(struct tpod *p, const char *name, int is_init, int count,
                                           int64_t fin)
{
    struct krc_container_info *c;
    size_t i = p->info.n_containers;

    assert_true(i < MAX_C);
    c = &p->c[i];
    memset(c, 0, sizeof(*c));
    snprintf(p->cname[i], sizeof(p->cname[i]), "%s", name);
    c->name = p->cname[i];
    c->is_init = is_init;
    c->restart_count = count;
    c->state_running = 1;
    if (fin != 0) {
        c->has_last_terminated = 1;
        c->last_exit_code = 1;
        c->last_started_at = fin - 30;
        c->last_finished_at = fin;
    }
    p->info.n_containers++;
    return c;
}

static void tpod_set(struct krc_container_info *c, int count, int64_t fin)
{
    c->restart_count = count;
    c->has_last_terminated = fin != 0;
    c->last_finished_at = fin;
    c->last_started_at = fin != 0 ? fin - 30 : 0;
}

/* --- reports -------------------------------------------------------------- */

struct report {
    char pod[48];
    char container[32];
    int is_init;
    int is_sidecar;
    int count;
    int previous;
    int missed;
};

struct sink {
    struct report r[64];
    int n;
    const struct krc_pod_info *expect_pod; /* when set, every delta must point into it */
};

static void on_restart(const struct krc_restart_delta *d, void *ud)
{
    struct sink *s = ud;
    struct report *r;

    assert_non_null(d->pod);
    assert_non_null(d->container);
    if (s->expect_pod != NULL) {
        assert_ptr_equal(d->pod, s->expect_pod);
        assert_true(d->container >= d->pod->containers &&
                    d->container < d->pod->containers + d->pod->n_containers);
    }
    if (s->n == (int)(sizeof(s->r) / sizeof(s->r[0]))) {
        s->n++; /* counted, not stored */
        return;
    }
    r = &s->r[s->n++];
    snprintf(r->pod, sizeof(r->pod), "%s", d->pod->name);
    snprintf(r->container, sizeof(r->container), "%s", d->container->name);
    r->is_init = d->container->is_init;
    r->is_sidecar = d->container->is_sidecar;
    r->count = d->container->restart_count;
    r->previous = d->previous_count;
    r->missed = d->missed;
}

static int apply(struct krc_pod_state *st, struct tpod *p, struct sink *s)
{
    s->n = 0;
    s->expect_pod = &p->info;
    return krc_pod_state_apply(st, &p->info, on_restart, s);
}

static void assert_one(const struct sink *s, const char *container, int is_init, int previous,
                       int missed)
{
    assert_int_equal(s->n, 1);
    assert_string_equal(s->r[0].container, container);
    assert_int_equal(s->r[0].is_init, is_init);
    assert_int_equal(s->r[0].previous, previous);
    assert_int_equal(s->r[0].missed, missed);
}

static int setup(void **state)
{
    *state = krc_pod_state_new(SINCE, START);
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    krc_pod_state_free(*state);
    return 0;
}

/* --- tests ---------------------------------------------------------------- */

static void test_increase_reported_once(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;

    tpod_init(&p, "u1", "default", "web-1");
    app = tpod_add(&p, "app", 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(krc_pod_state_count(st), 1);

    tpod_set(app, 1, START + 10);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 0, 0);
    assert_int_equal(s.r[0].count, 1);
    assert_string_equal(s.r[0].pod, "web-1");

    /* the same status again (a MODIFIED for an unrelated field) */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(krc_pod_state_count(st), 1);
}

static void test_jump_reports_missed(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;

    tpod_init(&p, "u1", "default", "web-1");
    app = tpod_add(&p, "app", 0, 1, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0); /* first sight, old termination */

    tpod_set(app, 4, START + 100);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 2);
    assert_int_equal(s.r[0].count, 4);

    tpod_set(app, 5, START + 200);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 4, 0);
}

static void test_same_count_newer_finished(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;

    tpod_init(&p, "u1", "default", "web-1");
    app = tpod_add(&p, "app", 0, 2, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* same finishedAt: nothing new */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* a newer termination at an unchanged count */
    tpod_set(app, 2, START + 50);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 2, 0);

    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* an older finishedAt (stale object) is not a restart */
    tpod_set(app, 2, START + 10);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
}

static void test_init_and_sidecar(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;
    struct krc_container_info *init;
    struct krc_container_info *side;

    tpod_init(&p, "u1", "default", "web-1");
    app = tpod_add(&p, "app", 0, 0, 0);
    init = tpod_add(&p, "migrate", 1, 0, 0);
    side = tpod_add(&p, "proxy", 1, 0, 0);
    side->is_sidecar = 1;
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    tpod_set(init, 1, START + 5);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "migrate", 1, 0, 0);
    assert_int_equal(s.r[0].is_sidecar, 0);

    tpod_set(side, 3, START + 6);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "proxy", 1, 0, 2);
    assert_int_equal(s.r[0].is_sidecar, 1);

    /* two containers restart in one update: both reported, in status order */
    tpod_set(app, 1, START + 7);
    tpod_set(side, 4, START + 8);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.r[0].container, "app");
    assert_string_equal(s.r[1].container, "proxy");
    assert_int_equal(s.r[1].previous, 3);
}

static void test_init_name_clash_kept_apart(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct tpod q;
    struct sink s;
    struct krc_container_info *reg;
    struct krc_container_info *init;

    tpod_init(&p, "u1", "default", "web-1");
    reg = tpod_add(&p, "setup", 0, 5, OLD);
    init = tpod_add(&p, "setup", 1, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* the init container's count is below the regular one's: still a restart */
    tpod_set(init, 1, START + 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "setup", 1, 0, 0);

    /* the regular one restarts: previous is its own count, not the init one's */
    tpod_set(reg, 6, START + 2);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "setup", 0, 5, 0);

    /* the same pod with its statuses listed in the other order */
    tpod_init(&q, "u1", "default", "web-1");
    tpod_add(&q, "setup", 1, 2, START + 3);
    tpod_add(&q, "setup", 0, 6, START + 2);
    assert_int_equal(apply(st, &q, &s), 0);
    assert_one(&s, "setup", 1, 1, 0);
    assert_int_equal(apply(st, &q, &s), 0);
    assert_int_equal(s.n, 0);
}

static void test_first_sight(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *c;

    /* recent termination: reported, previous unknown */
    tpod_init(&p, "a", "ns", "recent");
    tpod_add(&p, "app", 0, 3, RECENT);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);
    assert_int_equal(s.r[0].count, 3);

    /* exactly at report_since: reported (>=) */
    tpod_init(&p, "b", "ns", "edge");
    tpod_add(&p, "app", 0, 1, SINCE);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);

    /* one second before report_since: not reported */
    tpod_init(&p, "c", "ns", "old");
    tpod_add(&p, "app", 0, 1, SINCE - 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* no finishedAt, pod created after start-up: reported */
    tpod_init(&p, "d", "ns", "new");
    p.info.creation_timestamp = START + 5;
    tpod_add(&p, "app", 0, 1, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);

    /* no finishedAt, created before start-up: not reported */
    tpod_init(&p, "e", "ns", "older");
    p.info.creation_timestamp = START - 5;
    tpod_add(&p, "app", 0, 1, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* lastState.terminated present but finishedAt null: treated as absent */
    tpod_init(&p, "f", "ns", "nullfin");
    p.info.creation_timestamp = START + 5;
    c = tpod_add(&p, "app", 0, 2, 0);
    c->has_last_terminated = 1;
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);

    /* no creation timestamp at all and no finishedAt: not reported */
    tpod_init(&p, "g", "ns", "nocreation");
    p.info.creation_timestamp = 0;
    tpod_add(&p, "app", 0, 1, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* restartCount 0 never reports, whatever the timestamps */
    tpod_init(&p, "h", "ns", "zero");
    p.info.creation_timestamp = START + 5;
    tpod_add(&p, "app", 0, 0, RECENT);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    assert_int_equal(krc_pod_state_count(st), 8);

    /* once known, an old-looking pod reports its next restart */
    tpod_init(&p, "c", "ns", "old");
    tpod_add(&p, "app", 0, 2, SINCE + 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
}

static void test_delete(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct tpod q;
    struct sink s;

    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 2, OLD);
    tpod_init(&q, "u2", "ns", "b");
    tpod_add(&q, "app", 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(apply(st, &q, &s), 0);
    assert_int_equal(krc_pod_state_count(st), 2);

    assert_int_equal(krc_pod_state_delete(st, "u1"), 1);
    assert_int_equal(krc_pod_state_count(st), 1);
    assert_int_equal(krc_pod_state_delete(st, "u1"), 0);
    assert_int_equal(krc_pod_state_delete(st, "nope"), 0);
    assert_int_equal(krc_pod_state_delete(st, NULL), 0);
    assert_int_equal(krc_pod_state_forget(st, "u2"), 1);
    assert_int_equal(krc_pod_state_count(st), 0);

    /* after deletion the pod is new again: the old restart stays quiet... */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(krc_pod_state_delete(st, "u1"), 1);
    /* ...and a recent one is reported with an unknown previous count */
    tpod_set(&p.c[0], 3, RECENT);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);
}

static void test_bad_pod(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;

    tpod_init(&p, "u1", "ns", "a");
    p.info.uid = NULL;
    assert_int_equal(apply(st, &p, &s), KRC_EINVAL);
    tpod_init(&p, "u1", "ns", "a");
    p.info.namespace = NULL;
    assert_int_equal(apply(st, &p, &s), KRC_EINVAL);
    tpod_init(&p, "u1", "ns", "a");
    p.info.name = NULL;
    assert_int_equal(apply(st, &p, &s), KRC_EINVAL);
    assert_int_equal(krc_pod_state_count(st), 0);

    /* a pod without container statuses yet (Pending) is tracked */
    tpod_init(&p, "u1", "ns", "a");
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(krc_pod_state_count(st), 1);
    tpod_add(&p, "app", 0, 1, START + 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);
}

static void make_pod(struct tpod *p, int i, int count, int64_t fin)
{
    char uid[48];
    char name[48];

    snprintf(uid, sizeof(uid), "0b6c5f0e-%04d-4c1e-9d3e-%012d", i % 10000, i);
    snprintf(name, sizeof(name), "worker-%d", i);
    tpod_init(p, uid, "team-a", name);
    tpod_add(p, "app", 0, count, fin);
}

static void test_sync_removes_missing(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;

    for (int i = 0; i < 10; i++) {
        make_pod(&p, i, i, OLD);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
    }
    krc_pod_state_sync_begin(st);
    for (int i = 0; i < 10; i++) {
        if (i % 3 != 0) {
            make_pod(&p, i, i, OLD);
            assert_int_equal(apply(st, &p, &s), 0);
            assert_int_equal(s.n, 0);
        }
    }
    /* a pod new in this relist is kept */
    make_pod(&p, 42, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(krc_pod_state_sync_end(st), 4); /* 0, 3, 6, 9 */
    assert_int_equal(krc_pod_state_count(st), 7);
    make_pod(&p, 3, 0, 0);
    assert_int_equal(krc_pod_state_delete(st, p.info.uid), 0);
    make_pod(&p, 4, 0, 0);
    assert_int_equal(krc_pod_state_delete(st, p.info.uid), 1);
    make_pod(&p, 42, 0, 0);
    assert_int_equal(krc_pod_state_delete(st, p.info.uid), 1);

    /* an empty relist removes everything */
    krc_pod_state_sync_begin(st);
    assert_int_equal(krc_pod_state_sync_end(st), 5);
    assert_int_equal(krc_pod_state_count(st), 0);

    /* sync_end without changes in between removes nothing more */
    krc_pod_state_sync_begin(st);
    assert_int_equal(krc_pod_state_sync_end(st), 0);
}

static void test_relist_unchanged_and_one_grown(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    int total = 0;

    for (int i = 0; i < 300; i++) {
        make_pod(&p, i, i % 5, i % 5 ? RECENT - i : 0);
        assert_int_equal(apply(st, &p, &s), 0);
        total += s.n;
    }
    assert_int_equal(total, 240); /* every pod with restarts and a recent finishedAt */

    /* relist, nothing changed: nothing reported, nothing removed */
    krc_pod_state_sync_begin(st);
    for (int i = 0; i < 300; i++) {
        make_pod(&p, i, i % 5, i % 5 ? RECENT - i : 0);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
    }
    assert_int_equal(krc_pod_state_sync_end(st), 0);

    /* relist after the watch was down: exactly pod 123 restarted twice */
    krc_pod_state_sync_begin(st);
    total = 0;
    for (int i = 299; i >= 0; i--) {
        if (i == 123) {
            make_pod(&p, i, i % 5 + 2, START + 500);
        } else {
            make_pod(&p, i, i % 5, i % 5 ? RECENT - i : 0);
        }
        assert_int_equal(apply(st, &p, &s), 0);
        if (s.n > 0) {
            assert_int_equal(i, 123);
            assert_one(&s, "app", 0, 3, 1);
            assert_string_equal(s.r[0].pod, "worker-123");
        }
        total += s.n;
    }
    assert_int_equal(total, 1);
    assert_int_equal(krc_pod_state_sync_end(st), 0);
    assert_int_equal(krc_pod_state_count(st), 300);
}

static void test_container_set_changes(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;

    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 1, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* a container appears (status filled in later) while app restarts */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 2, START + 1);
    tpod_add(&p, "logger", 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);

    /* both known now */
    tpod_set(&p.c[1], 1, START + 2);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "logger", 0, 0, 0);

    /* app disappears from the status; logger restarts */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "logger", 0, 2, START + 3);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "logger", 0, 1, 0);

    /* app comes back: it is new to the table, its old restart is quiet... */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "logger", 0, 2, START + 3);
    tpod_add(&p, "app", 0, 2, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    /* ...and its next one is reported against the re-learned count */
    tpod_set(&p.c[1], 3, START + 4);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 2, 0);

    /* a renamed container with a recent termination is first-sight */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "logger", 0, 2, START + 3);
    tpod_add(&p, "app2", 0, 1, START + 5);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app2", 0, -1, 0);
    assert_int_equal(krc_pod_state_count(st), 1);
}

/* 100k pods with churn: deletes leave tombstones, inserts reuse them, growth
 * rehashes; every lookup must still find the right record. */
static void test_large_table_with_tombstones(void **state)
{
    struct krc_pod_state *st = *state;
    enum { N = 100000 };
    struct tpod p;
    struct sink s;
    size_t mem_small;
    size_t mem_full;
    size_t mem_after;
    int expect_count = 0;

    mem_small = krc_pod_state_memory(st);
    for (int i = 0; i < N; i++) {
        make_pod(&p, i, i % 7, OLD);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
        /* delete every third pod soon after it appeared */
        if (i % 3 == 2) {
            make_pod(&p, i - 1, 0, 0);
            assert_int_equal(krc_pod_state_delete(st, p.info.uid), 1);
        }
    }
    expect_count = N - N / 3;
    assert_int_equal(krc_pod_state_count(st), (size_t)expect_count);

    /* churn: delete and re-add ranges several times */
    for (int round = 0; round < 3; round++) {
        for (int i = round; i < N; i += 5) {
            make_pod(&p, i, 0, 0);
            if (krc_pod_state_delete(st, p.info.uid) == 1) {
                expect_count--;
            }
        }
        for (int i = N + round * 20000; i < N + (round + 1) * 20000; i++) {
            make_pod(&p, i, i % 7, OLD);
            assert_int_equal(apply(st, &p, &s), 0);
            expect_count++;
        }
        assert_int_equal(krc_pod_state_count(st), (size_t)expect_count);
    }

    /* every lookup: deleted pods are gone, live ones keep their own count */
    for (int i = 0; i < N + 60000; i++) {
        int deleted = i < N && (i % 3 == 1 || (i % 5) < 3);
        make_pod(&p, i, i % 7 + 1, START + 1);
        assert_int_equal(apply(st, &p, &s), 0);
        if (deleted) {
            /* re-added as new: a recent restart with unknown previous count */
            assert_one(&s, "app", 0, -1, 0);
            expect_count++;
        } else {
            assert_one(&s, "app", 0, i % 7, 0);
        }
    }
    assert_int_equal(krc_pod_state_count(st), (size_t)expect_count);
    assert_int_equal(expect_count, N + 60000);

    /* memory: roughly proportional to the number of pods */
    mem_full = krc_pod_state_memory(st);
    assert_true(mem_full > mem_small);
    assert_true(mem_full / (size_t)expect_count >= 64);   /* at least the record */
    assert_true(mem_full / (size_t)expect_count <= 1024); /* far below a pod object */

    krc_pod_state_sync_begin(st);
    for (int i = 0; i < 1000; i++) {
        make_pod(&p, i, i % 7 + 1, START + 1);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
    }
    assert_int_equal(krc_pod_state_sync_end(st), (size_t)expect_count - 1000);
    assert_int_equal(krc_pod_state_count(st), 1000);
    mem_after = krc_pod_state_memory(st);
    /* the records of the 159000 removed pods are released (the slot array stays) */
    assert_true(mem_after < mem_full);
    assert_true(mem_full - mem_after >= ((size_t)expect_count - 1000) * 64);
}

static void test_memory_grows_with_pods(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    size_t m0 = krc_pod_state_memory(st);
    size_t m1;
    size_t m2;

    for (int i = 0; i < 500; i++) {
        make_pod(&p, i, 0, 0);
        assert_int_equal(apply(st, &p, &s), 0);
    }
    m1 = krc_pod_state_memory(st);
    for (int i = 500; i < 1000; i++) {
        make_pod(&p, i, 0, 0);
        assert_int_equal(apply(st, &p, &s), 0);
    }
    m2 = krc_pod_state_memory(st);
    assert_true(m1 > m0);
    assert_true(m2 > m1);
    /* the second 500 pods cost about as much as the first (slot array aside) */
    assert_true((m2 - m1) * 2 > (m1 - m0) / 2);
    for (int i = 0; i < 1000; i++) {
        make_pod(&p, i, 0, 0);
        assert_int_equal(krc_pod_state_delete(st, p.info.uid), 1);
    }
    assert_true(krc_pod_state_memory(st) < m1);
}

/* Run a scenario with the Nth allocation failing, for every N until a run
 * needs no failure. Nothing may crash or leak (ASan checks the leaks), and
 * every failure must come back as KRC_ENOMEM. */
static int alloc_scenario(int *ret_enomem)
{
    struct krc_pod_state *st = krc_pod_state_new(SINCE, START);
    struct tpod p;
    struct sink s;
    int rc;

    if (st == NULL) {
        return KRC_ENOMEM;
    }
    for (int i = 0; i < 1200; i++) { /* > 3/4 of the initial 1024 slots: grows */
        make_pod(&p, i, 1, RECENT);
        rc = apply(st, &p, &s);
        assert_true(rc == 0 || rc == KRC_ENOMEM);
        /* the restart is reported even when the table could not keep it */
        assert_int_equal(s.n, 1);
        if (rc == KRC_ENOMEM) {
            (*ret_enomem)++;
        }
        if (i % 4 == 0) {
            krc_pod_state_delete(st, p.info.uid);
        }
    }
    /* shape changes reallocate records */
    for (int i = 1; i < 40; i += 4) {
        size_t before = krc_pod_state_count(st);
        make_pod(&p, i, 2, START + 1);
        tpod_add(&p, "sidecar", 1, 0, 0);
        rc = apply(st, &p, &s);
        assert_true(rc == 0 || rc == KRC_ENOMEM);
        assert_int_equal(s.n, 1);
        if (rc == KRC_ENOMEM) {
            (*ret_enomem)++;
        }
        assert_true(krc_pod_state_count(st) == before || krc_pod_state_count(st) == before + 1);
    }
    krc_pod_state_sync_begin(st);
    (void)krc_pod_state_sync_end(st);
    krc_pod_state_free(st);
    return 0;
}

static void test_alloc_failure_sweep(void **state)
{
    int enomem = 0;
    long n;

    (void)state;
    for (n = 0; n < 100000; n++) {
        long attempts;
        krc_mem_fail_after(n);
        alloc_scenario(&enomem);
        attempts = krc_mem_fail_after(-1);
        if (attempts <= n) {
            break; /* this run had no failure: every allocation point was tried */
        }
    }
    assert_true(n > 2);
    assert_true(n < 100000);
    assert_true(enomem > 0);
}

/* KRC_ENOMEM leaves the table unchanged for the pod: the next update is
 * compared against what was known before. */
static void test_enomem_leaves_pod_unchanged(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;

    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 1, OLD);
    assert_int_equal(apply(st, &p, &s), 0);

    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 2, START + 1);
    tpod_add(&p, "logger", 0, 0, 0);
    krc_mem_fail_after(0);
    assert_int_equal(apply(st, &p, &s), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    assert_one(&s, "app", 0, 1, 0);
    assert_int_equal(krc_pod_state_count(st), 1);

    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* a new pod that cannot be stored is reported and not counted */
    tpod_init(&p, "u2", "ns", "b");
    tpod_add(&p, "app", 0, 1, RECENT);
    krc_mem_fail_after(0);
    assert_int_equal(apply(st, &p, &s), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    assert_one(&s, "app", 0, -1, 0);
    assert_int_equal(krc_pod_state_count(st), 1);
    assert_int_equal(krc_pod_state_delete(st, "u2"), 0);
}

static void test_new_free_null(void **state)
{
    struct krc_pod_state *st;

    (void)state;
    krc_pod_state_free(NULL);
    for (long n = 0; n < 2; n++) {
        krc_mem_fail_after(n);
        st = krc_pod_state_new(SINCE, START);
        krc_mem_fail_after(-1);
        assert_null(st);
    }
    st = krc_pod_state_new(SINCE, START);
    assert_non_null(st);
    assert_int_equal(krc_pod_state_count(st), 0);
    assert_true(krc_pod_state_memory(st) > 0);
    krc_pod_state_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_increase_reported_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jump_reports_missed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_count_newer_finished, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_and_sidecar, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_name_clash_kept_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_sight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_removes_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_unchanged_and_one_grown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_container_set_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_table_with_tombstones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_grows_with_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enomem_leaves_pod_unchanged, setup, teardown),
        cmocka_unit_test(test_alloc_failure_sweep),
        cmocka_unit_test(test_new_free_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
