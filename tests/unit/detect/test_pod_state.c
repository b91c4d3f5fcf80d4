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

#include "krc/util/error.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/mem.h"
#include "krc/detect/pod_state.h"

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

/* Scenario 5 of issue 12: a restart is its termination, not its count. */
static void test_count_goes_down_and_climbs_back(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;

    tpod_init(&p, "u1", "default", "web-1");
    app = tpod_add(&p, "app", 0, 3, START + 10);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 1); /* first sight, recent */

    /* the count was reset (node reboot) without a new termination: nothing */
    tpod_set(app, 0, START + 10);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    /* it crashes again: count 1, a new finishedAt */
    tpod_set(app, 1, START + 40);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 0, 0);
    /* climbs back to 3: both reported, the count alone would say "known" */
    tpod_set(app, 2, START + 70);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
    tpod_set(app, 3, START + 100);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 2, 0);
    /* the same status replayed: nothing */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* reset and a crash between two observations: the count went down but
     * the termination is new */
    tpod_set(app, 1, START + 200);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 3, 0);
    assert_int_equal(s.r[0].count, 1);
    /* a status rewrite that lowers the count and keeps the termination */
    tpod_set(app, 0, START + 200);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
}

/* An older status seen after a newer one does not make the newer new. */
static void test_replayed_older_status(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;

    tpod_init(&p, "u1", "default", "web-1");
    app = tpod_add(&p, "app", 0, 2, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    tpod_set(app, 2, START + 50);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 1);
    tpod_set(app, 2, START + 10); /* stale */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    tpod_set(app, 2, START + 50); /* the newer one again: already reported */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    tpod_set(app, 2, 0); /* lastState gone, then back */
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    tpod_set(app, 2, START + 50);
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

/* --- compact storage: uids, interned names, 32-bit times ------------------ */

/* A pod shaped like bench/podgen.py's: two containers and a sidecar. */
static void make_web_pod(struct tpod *p, const char *uid, int i, int app_count, int64_t fin)
{
    char name[48];
    struct krc_container_info *side;

    snprintf(name, sizeof(name), "web-7d9c8b6f5-%05d", i);
    tpod_init(p, uid, "ns-003", name);
    tpod_add(p, "app", 0, app_count, fin);
    tpod_add(p, "metrics", 0, 0, 0);
    side = tpod_add(p, "log-shipper", 1, 0, 0);
    side->is_sidecar = 1;
}

static void web_uid(char *buf, size_t len, int i)
{
    snprintf(buf, len, "5e1c7d0a-8f8e-4a55-9d3e-%012x", (unsigned)i * 2654435761u);
}

/* Uids that are not canonical UUIDs are stored as text and work the same. */
static void test_non_uuid_uids(void **state)
{
    static const char *const uids[] = {
        "uid-1",
        "",
        "5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a5",   /* one digit short */
        "5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a590", /* one digit long */
        "5e1c7d0a8f8e-4a55-9d3e-0f1d2c3b4a59-",  /* dash misplaced */
        "5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a5g",  /* not hex */
        "{5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a5}",
    };
    enum { N = sizeof(uids) / sizeof(uids[0]) };
    struct krc_pod_state *st = *state;
    size_t m0 = krc_pod_state_memory(st);
    struct tpod p;
    struct sink s;

    for (int i = 0; i < N; i++) {
        make_web_pod(&p, uids[i], i, i, OLD);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
    }
    assert_int_equal(krc_pod_state_count(st), N);
    for (int i = 0; i < N; i++) {
        make_web_pod(&p, uids[i], i, i + 1, START + i);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_one(&s, "app", 0, i, 0);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
    }
    /* a uid that is a prefix of a stored one is another pod */
    assert_int_equal(krc_pod_state_delete(st, "uid-"), 0);
    assert_int_equal(krc_pod_state_delete(st, "uid-10"), 0);
    assert_int_equal(krc_pod_state_delete(st, uids[0]), 1);
    assert_int_equal(krc_pod_state_delete(st, uids[0]), 0);
    assert_int_equal(krc_pod_state_forget(st, uids[1]), 1);
    for (int i = 2; i < N; i++) {
        assert_int_equal(krc_pod_state_delete(st, uids[i]), 1);
    }
    assert_int_equal(krc_pod_state_count(st), 0);
    assert_int_equal(krc_pod_state_memory(st), m0);
}

/* Kubernetes compares uids as strings: an uppercase UUID and its lowercase
 * twin (which is stored as 16 bytes) are two pods. */
static void test_uuid_case_twins_are_different_pods(void **state)
{
    struct krc_pod_state *st = *state;
    const char *lower = "0b6c5f0e-abcd-4c1e-9d3e-0123456789ef";
    const char *upper = "0B6C5F0E-ABCD-4C1E-9D3E-0123456789EF";
    const char *mixed = "0b6c5f0e-ABCD-4c1e-9d3e-0123456789ef";
    struct tpod p;
    struct sink s;

    make_web_pod(&p, lower, 1, 1, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    make_web_pod(&p, upper, 2, 5, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    make_web_pod(&p, mixed, 3, 9, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(krc_pod_state_count(st), 3);

    /* each restart is compared with its own pod's count */
    make_web_pod(&p, upper, 2, 6, START + 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 5, 0);
    make_web_pod(&p, lower, 1, 2, START + 2);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
    make_web_pod(&p, mixed, 3, 10, START + 3);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 9, 0);

    /* deleting one spelling leaves the others */
    assert_int_equal(krc_pod_state_delete(st, lower), 1);
    assert_int_equal(krc_pod_state_delete(st, lower), 0);
    assert_int_equal(krc_pod_state_count(st), 2);
    make_web_pod(&p, upper, 2, 7, START + 4);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 6, 0);
    assert_int_equal(krc_pod_state_forget(st, upper), 1);
    assert_int_equal(krc_pod_state_forget(st, upper), 0);
    assert_int_equal(krc_pod_state_forget(st, mixed), 1);
    assert_int_equal(krc_pod_state_count(st), 0);

    /* the lowercase one comes back as a new pod */
    make_web_pod(&p, lower, 1, 3, RECENT);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);
}

/* Container names are interned: pods sharing them cost no more than their
 * record, and the last pod to go takes the pool with it. */
static void test_interning_many_pods_one_namespace(void **state)
{
    struct krc_pod_state *st = *state;
    enum { N = 3000 };
    size_t m_empty = krc_pod_state_memory(st);
    size_t m100 = 0;
    size_t m600;
    char uid[48];
    struct tpod p;
    struct sink s;

    for (int i = 0; i < N; i++) {
        web_uid(uid, sizeof(uid), i);
        make_web_pod(&p, uid, i, i % 3, OLD);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
        if (i == 99) {
            m100 = krc_pod_state_memory(st);
        } else if (i == 599) {
            /* no slot growth in between: the difference is the records alone */
            m600 = krc_pod_state_memory(st);
            assert_true(m600 > m100);
            assert_true((m600 - m100) / 500 <= 64);
        }
    }
    assert_int_equal(krc_pod_state_count(st), N);
    assert_true(krc_pod_state_memory(st) / N <= 100);
    for (int i = 0; i < N; i++) {
        web_uid(uid, sizeof(uid), i);
        make_web_pod(&p, uid, i, i % 3 + 1, START + 1);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_one(&s, "app", 0, i % 3, 0);
    }
    for (int i = 0; i < N; i++) {
        web_uid(uid, sizeof(uid), i);
        assert_int_equal(krc_pod_state_delete(st, uid), 1);
    }
    assert_int_equal(krc_pod_state_count(st), 0);
    /* pool empty, slot array back to its initial size */
    assert_int_equal(krc_pod_state_memory(st), m_empty);

    /* the names come back after being freed */
    web_uid(uid, sizeof(uid), 7);
    make_web_pod(&p, uid, 7, 2, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_true(krc_pod_state_memory(st) > m_empty);
    make_web_pod(&p, uid, 7, 3, START + 1);
    tpod_set(&p.c[2], 1, START + 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.r[0].container, "app");
    assert_int_equal(s.r[0].previous, 2);
    assert_string_equal(s.r[1].container, "log-shipper");
    assert_int_equal(s.r[1].is_init, 1);
    assert_int_equal(s.r[1].previous, 0);
    assert_int_equal(krc_pod_state_delete(st, uid), 1);
    assert_int_equal(krc_pod_state_memory(st), m_empty);
}

/* Many distinct names: the pool grows, ids are reused, and removals in any
 * order keep every other name findable. */
static void test_interning_many_names(void **state)
{
    struct krc_pod_state *st = *state;
    enum { N = 400 };
    size_t m_empty = krc_pod_state_memory(st);
    char cname[32];
    struct tpod p;
    struct sink s;

    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            char uid[16];
            snprintf(uid, sizeof(uid), "pod-%d", i);
            snprintf(cname, sizeof(cname), "c-%d-%d", i, round);
            tpod_init(&p, uid, "ns", uid);
            tpod_add(&p, "app", 0, 1, OLD);
            tpod_add(&p, cname, 0, 1, OLD);
            assert_int_equal(apply(st, &p, &s), 0);
            assert_int_equal(s.n, 0);
        }
        /* remove every third pod, then check the others still match */
        for (int i = 0; i < N; i += 3) {
            char uid[16];
            snprintf(uid, sizeof(uid), "pod-%d", i);
            assert_int_equal(krc_pod_state_delete(st, uid), 1);
        }
        for (int i = 0; i < N; i++) {
            char uid[16];
            snprintf(uid, sizeof(uid), "pod-%d", i);
            snprintf(cname, sizeof(cname), "c-%d-%d", i, round);
            tpod_init(&p, uid, "ns", uid);
            tpod_add(&p, "app", 0, 1, OLD);
            tpod_add(&p, cname, 0, 2, START + 1);
            assert_int_equal(apply(st, &p, &s), 0);
            if (i % 3 == 0) {
                assert_one(&s, cname, 0, -1, 0); /* new again */
            } else {
                assert_one(&s, cname, 0, 1, 0);
            }
        }
        krc_pod_state_sync_begin(st);
        assert_int_equal(krc_pod_state_sync_end(st), N);
        assert_int_equal(krc_pod_state_memory(st), m_empty);
    }
}

/* A MODIFIED event whose containers differ from the record's: detection as
 * before, and names no pod uses any more leave the pool. */
static void test_container_rename_frees_name(void **state)
{
    struct krc_pod_state *st = *state;
    size_t m_empty = krc_pod_state_memory(st);
    size_t m_one;
    struct tpod p;
    struct sink s;

    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 1, OLD);
    tpod_add(&p, "old-sidecar", 1, 4, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    m_one = krc_pod_state_memory(st);

    /* renamed sidecar: first sight, its old termination is quiet; app restarts */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 2, START + 1);
    tpod_add(&p, "new-sidecar", 1, 4, OLD);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
    /* same-length name: the old one was released, nothing accumulates */
    assert_int_equal(krc_pod_state_memory(st), m_one);

    /* the init flag is part of the identity: same name, now regular */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 2, START + 1);
    tpod_add(&p, "new-sidecar", 0, 1, START + 2);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "new-sidecar", 0, -1, 0);

    /* the old name is back: new to the table again */
    tpod_init(&p, "u1", "ns", "a");
    tpod_add(&p, "app", 0, 2, START + 1);
    tpod_add(&p, "old-sidecar", 1, 5, START + 3);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "old-sidecar", 1, -1, 0);
    assert_int_equal(krc_pod_state_memory(st), m_one);

    assert_int_equal(krc_pod_state_delete(st, "u1"), 1);
    assert_int_equal(krc_pod_state_memory(st), m_empty);
}

/* 50 pods with a container name each of their own, then a relist that only
 * has pod 0: the 50 leave the table. */
static void add_jobs_then_relist_without_them(struct krc_pod_state *st)
{
    char uid[48];
    char cname[32];
    struct tpod p;
    struct sink s;

    for (int i = 1; i <= 50; i++) {
        web_uid(uid, sizeof(uid), i);
        make_web_pod(&p, uid, i, 0, 0);
        snprintf(cname, sizeof(cname), "job-%d", i);
        tpod_add(&p, cname, 1, 0, 0);
        assert_int_equal(apply(st, &p, &s), 0);
    }
    krc_pod_state_sync_begin(st);
    web_uid(uid, sizeof(uid), 0);
    make_web_pod(&p, uid, 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(krc_pod_state_sync_end(st), 50);
}

/* A relist that no longer has pods removes them and their names. */
static void test_sync_end_frees_names(void **state)
{
    struct krc_pod_state *st = *state;
    size_t m_empty = krc_pod_state_memory(st);
    size_t m_kept;
    size_t m_after;
    char uid[48];
    struct tpod p;
    struct sink s;

    web_uid(uid, sizeof(uid), 0);
    make_web_pod(&p, uid, 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    m_kept = krc_pod_state_memory(st);
    add_jobs_then_relist_without_them(st);
    assert_int_equal(krc_pod_state_count(st), 1);
    /* the 50 names are gone (each took a 32-byte chunk); the pool's arrays
     * keep their size while it is not empty */
    m_after = krc_pod_state_memory(st);
    assert_true(m_after >= m_kept);
    assert_true(m_after < m_kept + 50 * 32);
    /* the same pods again and the same relist: nothing accumulates */
    add_jobs_then_relist_without_them(st);
    assert_int_equal(krc_pod_state_memory(st), m_after);
    krc_pod_state_sync_begin(st);
    assert_int_equal(krc_pod_state_sync_end(st), 1);
    assert_int_equal(krc_pod_state_memory(st), m_empty);
}

/* A relist that starts again before it ended (the list failed midway): only
 * pods applied since the last sync_begin are kept. */
static void test_sync_begin_twice(void **state)
{
    struct krc_pod_state *st = *state;
    struct tpod p;
    struct sink s;

    for (int i = 0; i < 6; i++) {
        make_pod(&p, i, 0, 0);
        assert_int_equal(apply(st, &p, &s), 0);
    }
    krc_pod_state_sync_begin(st);
    for (int i = 0; i < 3; i++) {
        make_pod(&p, i, 0, 0);
        assert_int_equal(apply(st, &p, &s), 0);
    }
    krc_pod_state_sync_begin(st);
    make_pod(&p, 4, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(krc_pod_state_sync_end(st), 5);
    assert_int_equal(krc_pod_state_count(st), 1);
    assert_int_equal(krc_pod_state_delete(st, p.info.uid), 1);
}

/* finishedAt is kept as 32-bit unix seconds. */
static void test_finished_at_32_bits(void **state)
{
    struct krc_pod_state *st = *state;
    const int64_t y2106 = (int64_t)UINT32_MAX;
    struct tpod p;
    struct sink s;
    struct krc_container_info *app;

    tpod_init(&p, "u1", "ns", "a");
    app = tpod_add(&p, "app", 0, 1, START);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, -1, 0);

    /* the full range up to 2106 is kept exactly */
    tpod_set(app, 1, y2106 - 1);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
    tpod_set(app, 1, y2106);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);
    /* beyond: clamped, so the same object repeated never re-reports */
    tpod_set(app, 1, y2106 + 100);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    /* counts are unaffected */
    tpod_set(app, 2, y2106 + 200);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 1, 0);

    /* a time before 1970 counts as no termination */
    tpod_set(app, 2, -5);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    /* the newest termination seen (2106) is kept: earlier ones are not new */
    tpod_set(app, 2, START + 9);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);

    /* a time before 1970 on a fresh pod: nothing known to compare with */
    tpod_init(&p, "u2", "ns", "b");
    app = tpod_add(&p, "app", 0, 2, OLD);
    tpod_set(app, 2, -5);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0);
    tpod_set(app, 2, START + 9);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(s.n, 0); /* nothing known to compare with, as with fin 0 */
    tpod_set(app, 2, START + 10);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_one(&s, "app", 0, 2, 0);
}

/* KRC_ENOMEM in the middle of interning a changed pod's names: the names
 * taken so far are released and the pod keeps its previous state. */
static void test_enomem_while_interning(void **state)
{
    struct krc_pod_state *st = *state;
    const char *uids[] = {"0b6c5f0e-abcd-4c1e-9d3e-0123456789ef", "not-a-uuid"};
    struct tpod p;
    struct sink s;

    for (int u = 0; u < 2; u++) {
        size_t m_empty = krc_pod_state_memory(st);
        size_t m_before;
        long n;

        make_web_pod(&p, uids[u], 1, 1, OLD);
        assert_int_equal(apply(st, &p, &s), 0);
        m_before = krc_pod_state_memory(st);
        /* the record, then two new names (and maybe pool growth) */
        for (n = 0;; n++) {
            int rc;
            make_web_pod(&p, uids[u], 1, 2, START + 1);
            tpod_add(&p, "extra-1", 0, 0, 0);
            tpod_add(&p, "extra-2", 1, 0, 0);
            krc_mem_fail_after(n);
            rc = apply(st, &p, &s);
            krc_mem_fail_after(-1);
            assert_one(&s, "app", 0, 1, 0); /* reported either way */
            if (rc == 0) {
                break;
            }
            assert_int_equal(rc, KRC_ENOMEM);
            assert_int_equal(krc_pod_state_memory(st), m_before);
            assert_int_equal(krc_pod_state_count(st), 1);
        }
        assert_true(n >= 3);
        assert_true(krc_pod_state_memory(st) > m_before);
        assert_int_equal(apply(st, &p, &s), 0);
        assert_int_equal(s.n, 0);
        assert_int_equal(krc_pod_state_delete(st, uids[u]), 1);
        assert_int_equal(krc_pod_state_memory(st), m_empty);
    }

    /* a first pod failing while the pool is empty leaves no pool behind */
    {
        size_t m_empty = krc_pod_state_memory(st);
        for (long n = 0; n < 3; n++) {
            make_web_pod(&p, uids[0], 1, 1, RECENT);
            krc_mem_fail_after(n);
            assert_int_equal(apply(st, &p, &s), KRC_ENOMEM);
            krc_mem_fail_after(-1);
            assert_one(&s, "app", 0, -1, 0);
            assert_int_equal(krc_pod_state_count(st), 0);
            assert_int_equal(krc_pod_state_memory(st), m_empty);
        }
    }
}

/* Removing names from the pool's hash index (backward shift, no tombstones)
 * must keep every other name findable: a pod using names that are already
 * interned costs exactly its record, never a duplicate name. */
static void test_interning_lookup_after_removals(void **state)
{
    struct krc_pod_state *st = *state;
    enum { N = 2000 };
    char uid[48];
    char cname[32];
    char gone[N] = {0};
    struct tpod p;
    struct sink s;
    size_t m;
    size_t per_pod = 0;

    for (int i = 0; i < N; i++) {
        snprintf(uid, sizeof(uid), "a-%d", i);
        snprintf(cname, sizeof(cname), "n-%d", i);
        tpod_init(&p, uid, "ns", uid);
        tpod_add(&p, cname, 0, 0, 0);
        assert_int_equal(apply(st, &p, &s), 0);
    }
    for (int k = 0; k < 6; k++) {
        /* remove names in a scattered order */
        for (int i = k; i < N; i += 7) {
            int victim = (i * 37) % N;
            snprintf(uid, sizeof(uid), "a-%d", victim);
            assert_int_equal(krc_pod_state_delete(st, uid), !gone[victim]);
            gone[victim] = 1;
        }
        /* a second pod for each name still there: only its record is new */
        for (int i = 0; i < N; i++) {
            if (gone[i]) {
                continue;
            }
            snprintf(uid, sizeof(uid), "0b6c5f0e-0000-4c1e-9d3e-%012d", i);
            snprintf(cname, sizeof(cname), "n-%d", i);
            tpod_init(&p, uid, "ns", uid);
            tpod_add(&p, cname, 0, 0, 0);
            m = krc_pod_state_memory(st);
            assert_int_equal(apply(st, &p, &s), 0);
            if (per_pod == 0) {
                per_pod = krc_pod_state_memory(st) - m;
            }
            assert_int_equal(krc_pod_state_memory(st) - m, per_pod);
            assert_int_equal(krc_pod_state_delete(st, uid), 1);
            assert_int_equal(krc_pod_state_memory(st), m);
        }
    }
}

/* White-box: the pool's index starts with 32 slots and FNV-1a 32 hashes.
 * Names whose probe sequence wraps from the last slot to the first must stay
 * findable when the one before them is removed (if the hash or size change,
 * this test still passes but no longer covers the wrap). */
static uint32_t fnv1a32(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static void test_interning_index_wraps(void **state)
{
    struct krc_pod_state *st = *state;
    char names[4][16];
    int found[2] = {0, 0}; /* home slot 31, home slot 0 */
    struct tpod p;
    struct sink s;
    size_t m;
    size_t per_pod;

    for (int i = 0; found[0] < 3 || found[1] < 1; i++) {
        char n[16];
        uint32_t home;
        snprintf(n, sizeof(n), "w-%d", i);
        home = fnv1a32(n) & 31;
        if (home == 31 && found[0] < 3) {
            snprintf(names[found[0]++], sizeof(names[0]), "%s", n);
        } else if (home == 0 && found[1] < 1) {
            snprintf(names[3], sizeof(names[3]), "%s", n);
            found[1]++;
        }
    }
    /* slots: names[0] 31, names[1] 0, names[2] 1, names[3] 2 */
    tpod_init(&p, "first", "ns", "first");
    for (int i = 0; i < 4; i++) {
        tpod_add(&p, names[i], 0, 0, 0);
    }
    assert_int_equal(apply(st, &p, &s), 0);
    m = krc_pod_state_memory(st);
    tpod_init(&p, "0b6c5f0e-0000-4c1e-9d3e-000000000001", "ns", "second");
    for (int i = 1; i < 4; i++) {
        tpod_add(&p, names[i], 0, 0, 0);
    }
    assert_int_equal(apply(st, &p, &s), 0);
    per_pod = krc_pod_state_memory(st) - m;
    /* names[0] leaves: the other three shift back across the wrap */
    assert_int_equal(krc_pod_state_delete(st, "first"), 1);
    m = krc_pod_state_memory(st);
    tpod_init(&p, "0b6c5f0e-0000-4c1e-9d3e-000000000002", "ns", "third");
    for (int i = 1; i < 4; i++) {
        tpod_add(&p, names[i], 0, 0, 0);
    }
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(krc_pod_state_memory(st) - m, per_pod); /* no duplicate names */

    /* an empty pool starts again at 32 slots: names[0] at 31, names[3] at 0 */
    krc_pod_state_sync_begin(st);
    assert_int_equal(krc_pod_state_sync_end(st), 2);
    tpod_init(&p, "first", "ns", "first");
    tpod_add(&p, names[0], 0, 0, 0);
    tpod_add(&p, names[3], 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    m = krc_pod_state_memory(st);
    tpod_init(&p, "0b6c5f0e-0000-4c1e-9d3e-000000000001", "ns", "second");
    tpod_add(&p, names[3], 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    per_pod = krc_pod_state_memory(st) - m;
    /* names[0] leaves: names[3] is at its home slot and must stay there */
    assert_int_equal(krc_pod_state_delete(st, "first"), 1);
    m = krc_pod_state_memory(st);
    tpod_init(&p, "0b6c5f0e-0000-4c1e-9d3e-000000000002", "ns", "third");
    tpod_add(&p, names[3], 0, 0, 0);
    assert_int_equal(apply(st, &p, &s), 0);
    assert_int_equal(krc_pod_state_memory(st) - m, per_pod);
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
        cmocka_unit_test_setup_teardown(test_count_goes_down_and_climbs_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replayed_older_status, setup, teardown),
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
        cmocka_unit_test_setup_teardown(test_non_uuid_uids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uuid_case_twins_are_different_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interning_many_pods_one_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interning_many_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interning_lookup_after_removals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interning_index_wraps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_container_rename_frees_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_end_frees_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_begin_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finished_at_32_bits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enomem_while_interning, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
