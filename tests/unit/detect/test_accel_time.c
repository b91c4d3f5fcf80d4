/* accel_time: what a container holds (the pod's spec), and the device-seconds
 * counted on a fake clock while it does not run: back-off, failed starts,
 * running again, deletion, relists, the cap on tracked pods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/detect/accel_time.h"

/* A Deployment's pod: "train" holds 4 GPUs (and HAMi quantities that are not
 * devices), "log" none, the init container "fetch" requests 2 AMD GPUs. */
static const char *const POD_JSON =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"trainer-5d8f9c7b6-x2x4q\","
    "\"namespace\":\"ml\",\"uid\":\"6b1e2c9a-0d4f-4e7b-9a51-3c2d1e0f9a8b\","
    "\"resourceVersion\":\"42\",\"labels\":{\"pod-template-hash\":\"5d8f9c7b6\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
    "\"name\":\"trainer-5d8f9c7b6\",\"uid\":\"1\",\"controller\":true}]},"
    "\"spec\":{\"initContainers\":[{\"name\":\"fetch\",\"resources\":{\"requests\":"
    "{\"amd.com/gpu\":\"2\",\"cpu\":\"1\"}}}],"
    "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\",\"nvidia.com/gpumem\":"
    "\"16000\",\"nvidia.com/gpucores\":\"100\",\"memory\":\"8Gi\"},\"requests\":{\"nvidia.com/"
    "gpu\":\"4\"}},\"name\":\"train\",\"image\":\"t\"},"
    "{\"name\":\"log\",\"resources\":{\"limits\":{\"memory\":\"64Mi\"}}}]},"
    "\"status\":{\"phase\":\"Running\"}}";

static const char *const PLAIN_JSON =
    "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\",\"uid\":\"u-web\"},"
    "\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":{\"limits\":{\"memory\":"
    "\"1Gi\",\"nvidia.com/gpumem\":\"1000\"}}}]}}";

#define SEC 1000
#define T0 (1000000 * (int64_t)SEC) /* the fake monotonic clock, ms */
#define WALL0 1780000000            /* wall seconds at T0 */

/* ---- the counter the table feeds ------------------------------------------ */

struct sample {
    char key[400];
    double value;
};

struct sink {
    struct sample s[16];
    size_t n;
    int calls;
};

static void emit(const char *ns, const char *wl, const char *res, double ds, void *ud)
{
    struct sink *k = ud;
    char key[400];
    size_t i;

    snprintf(key, sizeof(key), "%s|%s|%s", ns, wl, res);
    k->calls++;
    for (i = 0; i < k->n; i++) {
        if (strcmp(k->s[i].key, key) == 0) {
            break;
        }
    }
    if (i == k->n) {
        assert_true(k->n < 16);
        snprintf(k->s[k->n].key, sizeof(k->s[k->n].key), "%s", key);
        k->s[k->n++].value = 0;
    }
    k->s[i].value += ds;
}

static double total(const struct sink *k, const char *key)
{
    for (size_t i = 0; i < k->n; i++) {
        if (strcmp(k->s[i].key, key) == 0) {
            return k->s[i].value;
        }
    }
    return 0;
}

/* ---- pods as the watch parser gives them ---------------------------------- */

struct fake_pod {
    struct krc_pod_info p;
    struct krc_container_info c[3];
};

static void pod_init(struct fake_pod *f, const char *raw, const char *uid)
{
    memset(f, 0, sizeof(*f));
    f->p.uid = uid;
    f->p.namespace = strcmp(raw, POD_JSON) == 0 ? "ml" : "shop";
    f->p.name = strcmp(raw, POD_JSON) == 0 ? "trainer-5d8f9c7b6-x2x4q" : "web-1";
    f->p.phase = "Running";
    f->p.raw = raw;
    f->p.raw_len = strlen(raw);
    f->p.containers = f->c;
    f->c[0].name = strcmp(raw, POD_JSON) == 0 ? "train" : "app";
    f->c[0].state_running = 1;
    f->c[1].name = "log";
    f->c[1].state_running = 1;
    f->p.n_containers = 2;
}

/* c[0] crashed (finished `ago` seconds before wall) and waits in back-off. */
static void crash(struct fake_pod *f, int64_t wall, int64_t ago)
{
    f->c[0].state_running = 0;
    f->c[0].state_waiting = 1;
    f->c[0].state_reason = "CrashLoopBackOff";
    f->c[0].restart_count++;
    f->c[0].has_last_terminated = 1;
    f->c[0].last_exit_code = 1;
    f->c[0].last_finished_at = wall - ago;
}

static void run(struct fake_pod *f)
{
    f->c[0].state_waiting = 0;
    f->c[0].state_terminated = 0;
    f->c[0].state_reason = NULL;
    f->c[0].state_running = 1;
}

static void restart(struct krc_accel_time *t, struct fake_pod *f, int64_t now_ms, int64_t wall,
                    struct krc_accel_note *note)
{
    struct krc_restart_delta d;

    memset(&d, 0, sizeof(d));
    d.pod = &f->p;
    d.container = &f->c[0];
    d.previous_count = f->c[0].restart_count - 1;
    krc_accel_time_restart(t, &d, now_ms, wall, note);
}

#define KEY "ml|trainer|nvidia.com/gpu"

/* ---- tests ----------------------------------------------------------------- */

static const char *const BAD_QUANTITY =
    "{\"spec\":{\"containers\":[{\"name\":\"train\",\"resources\":{\"limits\":"
    "{\"nvidia.com/gpu\":\"2x\"}}}]}}";
static const char *const GOOD_QUANTITY =
    "{\"spec\":{\"containers\":[{\"name\":\"train\",\"resources\":{\"limits\":"
    "{\"nvidia.com/gpu\":\"2\"}}}]}}";

static void test_scan(void **state)
{
    struct krc_accel_hold h[4];
    (void)state;

    assert_int_equal(krc_accel_scan_pod(POD_JSON, strlen(POD_JSON), "train", h, 4), 1);
    assert_string_equal(h[0].resource, "nvidia.com/gpu");
    assert_int_equal(h[0].devices, 4);
    /* requests when no limit names the device; init containers too */
    assert_int_equal(krc_accel_scan_pod(POD_JSON, strlen(POD_JSON), "fetch", h, 4), 1);
    assert_string_equal(h[0].resource, "amd.com/gpu");
    assert_int_equal(h[0].devices, 2);
    /* gpumem/gpucores-style quantities are not devices */
    assert_int_equal(krc_accel_scan_pod(POD_JSON, strlen(POD_JSON), "log", h, 4), 0);
    assert_int_equal(krc_accel_scan_pod(PLAIN_JSON, strlen(PLAIN_JSON), "app", h, 4), 0);
    assert_int_equal(krc_accel_scan_pod(POD_JSON, strlen(POD_JSON), "nope", h, 4), 0);
    /* cut or malformed JSON: nothing */
    assert_int_equal(krc_accel_scan_pod(POD_JSON, strlen(POD_JSON) / 2, "train", h, 4), 0);
    assert_int_equal(krc_accel_scan_pod(BAD_QUANTITY, strlen(BAD_QUANTITY), "train", h, 4), 0);
    assert_int_equal(krc_accel_scan_pod(GOOD_QUANTITY, strlen(GOOD_QUANTITY), "train", h, 4), 1);
}

/* 4 GPUs: back-off from the termination (2 s before it was seen) until the
 * container runs again; scrapes count the open spell as it grows. */
static void test_backoff_counted(void **state)
{
    struct sink k = {0};
    struct krc_accel_time *t = krc_accel_time_new(emit, &k);
    struct krc_accel_note note;
    struct fake_pod f;
    (void)state;

    pod_init(&f, POD_JSON, "6b1e2c9a-0d4f-4e7b-9a51-3c2d1e0f9a8b");
    krc_accel_time_observe(t, &f.p, T0); /* not tracked before a restart */
    assert_int_equal(krc_accel_time_count(t), 0);

    crash(&f, WALL0, 2);
    restart(t, &f, T0, WALL0, &note);
    krc_accel_time_observe(t, &f.p, T0);
    assert_int_equal(krc_accel_time_count(t), 1);
    assert_string_equal(note.resource, "nvidia.com/gpu");
    assert_int_equal(note.devices, 4);
    assert_int_equal(note.lost_ms, 2 * SEC);
    assert_int_equal(note.since_last_ms, 2 * SEC);
    assert_int_equal(note.down, 1);

    krc_accel_time_observe(t, &f.p, T0 + 5 * SEC); /* still waiting */
    krc_accel_time_flush(t, T0 + 10 * SEC);
    assert_true(total(&k, KEY) == 4 * 12.0);
    krc_accel_time_flush(t, T0 + 10 * SEC); /* nothing twice */
    assert_true(total(&k, KEY) == 4 * 12.0);

    run(&f);
    krc_accel_time_observe(t, &f.p, T0 + 20 * SEC);
    assert_true(total(&k, KEY) == 4 * 22.0);
    /* running: nothing more */
    krc_accel_time_flush(t, T0 + 50 * SEC);
    krc_accel_time_observe(t, &f.p, T0 + 60 * SEC);
    assert_true(total(&k, KEY) == 4 * 22.0);

    /* the next crash: finishedAt 1 s before it was seen; "so far" adds up */
    crash(&f, WALL0 + 100, 1);
    restart(t, &f, T0 + 100 * SEC, WALL0 + 100, &note);
    assert_int_equal(note.lost_ms, 23 * SEC);
    /* restart_summary's share: what was counted since the previous restart */
    assert_int_equal(note.since_last_ms, 21 * SEC);
    krc_accel_time_observe(t, &f.p, T0 + 100 * SEC);
    /* the pod is deleted while it waits: its spell ends there */
    krc_accel_time_forget(t, f.p.uid, T0 + 110 * SEC);
    assert_true(total(&k, KEY) == 4 * 33.0);
    assert_int_equal(krc_accel_time_count(t), 0);
    krc_accel_time_flush(t, T0 + 200 * SEC);
    assert_true(total(&k, KEY) == 4 * 33.0);
    assert_int_equal(k.n, 1);
    krc_accel_time_free(t);
}

/* Failed starts: the container never runs between restarts, so the spell
 * goes on across them and is not counted twice. A finishedAt far in the past
 * (a restart seen late) does not backdate the spell. */
static void test_failed_starts(void **state)
{
    struct sink k = {0};
    struct krc_accel_time *t = krc_accel_time_new(emit, &k);
    struct krc_accel_note note;
    struct fake_pod f;
    (void)state;

    pod_init(&f, POD_JSON, "6b1e2c9a-0d4f-4e7b-9a51-3c2d1e0f9a8b");
    crash(&f, WALL0, KRC_ACCEL_BACKDATE_MAX_S + 60);
    restart(t, &f, T0, WALL0, &note);
    assert_int_equal(note.lost_ms, 0);
    assert_int_equal(note.since_last_ms, 0);
    krc_accel_time_observe(t, &f.p, T0);
    /* StartError, then waiting again: one spell */
    f.c[0].state_waiting = 0;
    f.c[0].state_terminated = 1;
    f.c[0].state_reason = "StartError";
    krc_accel_time_observe(t, &f.p, T0 + 10 * SEC);
    crash(&f, WALL0 + 30, 0);
    restart(t, &f, T0 + 30 * SEC, WALL0 + 30, &note);
    assert_int_equal(note.lost_ms, 30 * SEC);
    assert_int_equal(note.since_last_ms, 30 * SEC);
    krc_accel_time_observe(t, &f.p, T0 + 30 * SEC);
    run(&f);
    krc_accel_time_observe(t, &f.p, T0 + 40 * SEC);
    assert_true(total(&k, KEY) == 4 * 40.0);
    /* a pod that finished holds nothing any more */
    crash(&f, WALL0 + 50, 0);
    restart(t, &f, T0 + 50 * SEC, WALL0 + 50, &note);
    assert_int_equal(note.lost_ms, 40 * SEC);
    assert_int_equal(note.since_last_ms, 10 * SEC); /* the sums never count a time twice */
    f.p.phase = "Failed";
    krc_accel_time_observe(t, &f.p, T0 + 55 * SEC);
    krc_accel_time_flush(t, T0 + 90 * SEC);
    assert_true(total(&k, KEY) == 4 * 45.0);
    krc_accel_time_free(t);
}

/* A container without devices is not tracked: nothing kept, nothing counted,
 * its pod's events cost nothing. */
static void test_no_accelerator(void **state)
{
    struct sink k = {0};
    struct krc_accel_time *t = krc_accel_time_new(emit, &k);
    struct krc_accel_note note;
    struct fake_pod f;
    struct fake_pod g;
    struct krc_restart_delta d;
    (void)state;

    pod_init(&f, PLAIN_JSON, "u-web");
    crash(&f, WALL0, 0);
    restart(t, &f, T0, WALL0, &note);
    assert_int_equal(note.devices, 0);
    assert_int_equal(krc_accel_time_count(t), 0);
    krc_accel_time_observe(t, &f.p, T0 + 5 * SEC);
    krc_accel_time_flush(t, T0 + 10 * SEC);
    /* the GPU pod's sidecar without devices restarts: not tracked either */
    pod_init(&g, POD_JSON, "6b1e2c9a-0d4f-4e7b-9a51-3c2d1e0f9a8b");
    memset(&d, 0, sizeof(d));
    d.pod = &g.p;
    d.container = &g.c[1];
    krc_accel_time_restart(t, &d, T0, WALL0, &note);
    assert_int_equal(note.devices, 0);
    assert_int_equal(krc_accel_time_count(t), 0);
    /* no JSON: nothing known */
    g.p.raw = NULL;
    g.p.raw_len = 0;
    restart(t, &g, T0, WALL0, &note);
    assert_int_equal(note.devices, 0);
    assert_int_equal(k.calls, 0);
    krc_accel_time_free(t);
}

/* A relist that no longer has the pod (deleted while the watch was down)
 * ends its spell at the relist's end and forgets it. */
static void test_relist(void **state)
{
    struct sink k = {0};
    struct krc_accel_time *t = krc_accel_time_new(emit, &k);
    struct krc_accel_note note;
    struct fake_pod f;
    (void)state;

    pod_init(&f, POD_JSON, "6b1e2c9a-0d4f-4e7b-9a51-3c2d1e0f9a8b");
    crash(&f, WALL0, 0);
    restart(t, &f, T0, WALL0, &note);
    krc_accel_time_sync_begin(t);
    krc_accel_time_observe(t, &f.p, T0 + 1 * SEC);
    krc_accel_time_sync_end(t, T0 + 2 * SEC);
    assert_int_equal(krc_accel_time_count(t), 1); /* seen again: kept */
    krc_accel_time_sync_begin(t);
    krc_accel_time_sync_end(t, T0 + 8 * SEC);
    assert_int_equal(krc_accel_time_count(t), 0);
    assert_true(total(&k, KEY) == 4 * 8.0);
    krc_accel_time_free(t);
}

/* The cap: pods running again make room; when every tracked pod waits, a
 * new one is not tracked and counted as dropped. */
static void test_cap(void **state)
{
    static struct fake_pod pods[KRC_ACCEL_MAX_PODS + 1];
    static char uids[KRC_ACCEL_MAX_PODS + 1][40];
    struct sink k = {0};
    struct krc_accel_time *t = krc_accel_time_new(emit, &k);
    struct krc_accel_note note;
    (void)state;

    for (size_t i = 0; i <= KRC_ACCEL_MAX_PODS; i++) {
        snprintf(uids[i], sizeof(uids[i]), "uid-%zu", i);
        pod_init(&pods[i], POD_JSON, uids[i]);
        crash(&pods[i], WALL0, 0);
    }
    for (size_t i = 0; i < KRC_ACCEL_MAX_PODS; i++) {
        restart(t, &pods[i], T0, WALL0, &note);
        assert_int_equal(note.devices, 4);
    }
    restart(t, &pods[KRC_ACCEL_MAX_PODS], T0, WALL0, &note);
    assert_int_equal(note.devices, 0);
    assert_int_equal(krc_accel_time_dropped(t), 1);
    assert_int_equal(krc_accel_time_count(t), KRC_ACCEL_MAX_PODS);
    /* one runs again: it makes room (its time stays counted) */
    run(&pods[7]);
    krc_accel_time_observe(t, &pods[7].p, T0 + 3 * SEC);
    restart(t, &pods[KRC_ACCEL_MAX_PODS], T0 + 4 * SEC, WALL0 + 4, &note);
    assert_int_equal(note.devices, 4);
    assert_int_equal(krc_accel_time_dropped(t), 1);
    assert_int_equal(krc_accel_time_count(t), KRC_ACCEL_MAX_PODS);
    assert_true(total(&k, KEY) == 4 * 3.0);
    krc_accel_time_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan),          cmocka_unit_test(test_backoff_counted),
        cmocka_unit_test(test_failed_starts), cmocka_unit_test(test_no_accelerator),
        cmocka_unit_test(test_relist),        cmocka_unit_test(test_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
