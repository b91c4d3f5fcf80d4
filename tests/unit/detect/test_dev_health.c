/* dev_health: a restart of a container holding accelerators is watched for a
 * window; the first pod update inside it that reports one of its devices
 * Unhealthy is one hit (never two), an update after the window or after a
 * newer restart is none, a container without devices is never watched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/detect/dev_health.h"
#include "krc/kube/kube_pod.h"

#define SEC 1000
#define T0 (1000000 * (int64_t)SEC) /* the fake monotonic clock, ms */
#define WINDOW (60 * SEC)

/* A 1.35-shaped pod: "train" holds 1 nvidia.com/gpu (device-plugin resource,
 * allocatedResourcesStatus: KEP-4680, alpha 1.31), "log" holds none.
 * health: "Healthy", "Unhealthy", "" (no allocatedResourcesStatus). */
static void pod_json(char *out, size_t outsz, const char *uid, const char *gpu_res, int count,
                     const char *health)
{
    char status[400] = "";

    if (health[0] != '\0') {
        snprintf(status, sizeof(status),
                 ",\"allocatedResourcesStatus\":[{\"name\":\"nvidia.com/gpu\",\"resources\":"
                 "[{\"resourceID\":\"GPU-7d3a\",\"health\":\"%s\",\"message\":\"ECC error "
                 "count exceeded threshold\"}]}]",
                 health);
    }
    snprintf(out, outsz,
             "{\"metadata\":{\"name\":\"trainer-0\",\"namespace\":\"ml\",\"uid\":\"%s\","
             "\"resourceVersion\":\"7\"},"
             "\"spec\":{\"nodeName\":\"gpu-node-1\",\"containers\":["
             "{\"name\":\"train\",\"image\":\"t\",\"resources\":{\"limits\":{\"%s\":\"1\"}}},"
             "{\"name\":\"log\",\"image\":\"l\"}]},"
             "\"status\":{\"phase\":\"Running\",\"containerStatuses\":["
             "{\"name\":\"train\",\"restartCount\":%d,\"ready\":false,\"image\":\"t\","
             "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
             "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\","
             "\"finishedAt\":\"2026-12-06T10:00:00Z\"}}%s},"
             "{\"name\":\"log\",\"restartCount\":%d,\"ready\":true,\"image\":\"l\","
             "\"state\":{\"running\":{}}}]}}",
             uid, gpu_res, count, status, count);
}

struct pod {
    char json[4096];
    struct krc_pod_info p;
};

static void load(struct pod *f, const char *uid, const char *gpu_res, int count, const char *health)
{
    struct krc_error err;

    pod_json(f->json, sizeof(f->json), uid, gpu_res, count, health);
    krc_pod_info_init(&f->p);
    assert_int_equal(krc_pod_info_parse(f->json, strlen(f->json), &f->p, &err), 0);
}

static const struct krc_container_info *container(const struct pod *f, const char *name)
{
    for (size_t i = 0; i < f->p.n_containers; i++) {
        if (strcmp(f->p.containers[i].name, name) == 0) {
            return &f->p.containers[i];
        }
    }
    fail_msg("no container %s", name);
    return NULL;
}

static int restart(struct krc_dev_health *t, struct pod *f, const char *name, int64_t now)
{
    struct krc_restart_delta d;

    memset(&d, 0, sizeof(d));
    d.pod = &f->p;
    d.container = container(f, name);
    d.previous_count = d.container->restart_count - 1;
    return krc_dev_health_restart(t, &d, now);
}

/* Unhealthy 20 s after the restart: one hit, with the device; the next
 * update that still says so gives none (once per restart). */
static void test_unhealthy_in_window(void **state)
{
    struct krc_dev_health *t = krc_dev_health_new(WINDOW);
    struct krc_dev_health_hit hit;
    char name[KRC_DEV_HEALTH_CONTAINER_MAX];
    struct pod a;
    struct pod b;

    (void)state;
    load(&a, "u1", "nvidia.com/gpu", 3, "Healthy");
    assert_int_equal(restart(t, &a, "train", T0), 1);
    assert_int_equal(krc_dev_health_count(t), 1);
    /* an update with the device still Healthy: nothing, still watched */
    assert_int_equal(krc_dev_health_observe(t, &a.p, T0 + 5 * SEC, name, &hit), 0);
    assert_int_equal(krc_dev_health_count(t), 1);
    load(&b, "u1", "nvidia.com/gpu", 3, "Unhealthy");
    assert_int_equal(krc_dev_health_observe(t, &b.p, T0 + 20 * SEC, name, &hit), 1);
    assert_string_equal(name, "train");
    assert_string_equal(hit.resource, "nvidia.com/gpu");
    assert_string_equal(hit.device, "GPU-7d3a");
    assert_string_equal(hit.message, "ECC error count exceeded threshold");
    assert_int_equal(hit.restart_count, 3);
    assert_int_equal(hit.after_ms, 20 * SEC);
    /* once only */
    assert_int_equal(krc_dev_health_observe(t, &b.p, T0 + 21 * SEC, name, &hit), 0);
    assert_int_equal(krc_dev_health_count(t), 0);
    krc_pod_info_cleanup(&a.p);
    krc_pod_info_cleanup(&b.p);
    krc_dev_health_free(t);
}

/* Unhealthy after the window: nothing; the restart is forgotten. The window's
 * last millisecond still counts. */
static void test_after_window(void **state)
{
    struct krc_dev_health *t = krc_dev_health_new(WINDOW);
    struct krc_dev_health_hit hit;
    char name[KRC_DEV_HEALTH_CONTAINER_MAX];
    struct pod a;
    struct pod b;

    (void)state;
    load(&a, "u1", "nvidia.com/gpu", 3, "");
    load(&b, "u1", "nvidia.com/gpu", 3, "Unhealthy");
    assert_int_equal(restart(t, &a, "train", T0), 1);
    assert_int_equal(krc_dev_health_observe(t, &b.p, T0 + WINDOW + 1, name, &hit), 0);
    assert_int_equal(krc_dev_health_count(t), 0);

    assert_int_equal(restart(t, &a, "train", T0), 1);
    assert_int_equal(krc_dev_health_observe(t, &b.p, T0 + WINDOW, name, &hit), 1);
    krc_pod_info_cleanup(&a.p);
    krc_pod_info_cleanup(&b.p);
    krc_dev_health_free(t);
}

/* A container without accelerators, or quantities that are not devices, is
 * never watched; a restart whose status already says Unhealthy is not
 * either (its own diagnosis reads it); nothing is held then. */
static void test_not_watched(void **state)
{
    struct krc_dev_health *t = krc_dev_health_new(WINDOW);
    struct krc_dev_health_hit hit;
    char name[KRC_DEV_HEALTH_CONTAINER_MAX];
    struct pod a;

    (void)state;
    load(&a, "u1", "nvidia.com/gpu", 3, "");
    assert_int_equal(restart(t, &a, "log", T0), 0);
    krc_pod_info_cleanup(&a.p);
    load(&a, "u2", "nvidia.com/gpumem", 3, "");
    assert_int_equal(restart(t, &a, "train", T0), 0);
    krc_pod_info_cleanup(&a.p);
    load(&a, "u3", "nvidia.com/gpu", 3, "Unhealthy");
    assert_int_equal(restart(t, &a, "train", T0), 0);
    assert_int_equal(krc_dev_health_count(t), 0);
    assert_int_equal(krc_dev_health_observe(t, &a.p, T0 + SEC, name, &hit), 0);
    krc_pod_info_cleanup(&a.p);
    krc_dev_health_free(t);
}

/* The container restarted again before the status turned: that newer
 * restart is diagnosed with the newer status; the older one is not amended.
 * Another pod's update does not touch it; a deleted pod is forgotten. */
static void test_newer_restart_and_other_pods(void **state)
{
    struct krc_dev_health *t = krc_dev_health_new(WINDOW);
    struct krc_dev_health_hit hit;
    char name[KRC_DEV_HEALTH_CONTAINER_MAX];
    struct pod a;
    struct pod other;
    struct pod later;

    (void)state;
    load(&a, "u1", "nvidia.com/gpu", 3, "Healthy");
    load(&other, "u9", "nvidia.com/gpu", 3, "Unhealthy");
    load(&later, "u1", "nvidia.com/gpu", 4, "Unhealthy");
    assert_int_equal(restart(t, &a, "train", T0), 1);
    assert_int_equal(krc_dev_health_observe(t, &other.p, T0 + SEC, name, &hit), 0);
    assert_int_equal(krc_dev_health_count(t), 1);
    assert_int_equal(krc_dev_health_observe(t, &later.p, T0 + 2 * SEC, name, &hit), 0);
    assert_int_equal(krc_dev_health_count(t), 0);

    assert_int_equal(restart(t, &a, "train", T0), 1);
    krc_dev_health_forget(t, "u1");
    assert_int_equal(krc_dev_health_count(t), 0);
    krc_pod_info_cleanup(&a.p);
    krc_pod_info_cleanup(&other.p);
    krc_pod_info_cleanup(&later.p);
    krc_dev_health_free(t);
}

/* The cap: past KRC_DEV_HEALTH_MAX a restart is not watched and counted;
 * expired ones make room. */
static void test_cap(void **state)
{
    struct krc_dev_health *t = krc_dev_health_new(WINDOW);
    struct pod f;
    char uid[32];

    (void)state;
    for (int i = 0; i <= KRC_DEV_HEALTH_MAX; i++) {
        snprintf(uid, sizeof(uid), "u%d", i);
        load(&f, uid, "nvidia.com/gpu", 1, "");
        assert_int_equal(restart(t, &f, "train", T0), i < KRC_DEV_HEALTH_MAX);
        krc_pod_info_cleanup(&f.p);
    }
    assert_int_equal(krc_dev_health_count(t), KRC_DEV_HEALTH_MAX);
    load(&f, "new", "nvidia.com/gpu", 1, "");
    assert_int_equal(restart(t, &f, "train", T0 + WINDOW + 1), 1);
    assert_int_equal(krc_dev_health_count(t), 1);
    krc_pod_info_cleanup(&f.p);
    krc_dev_health_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unhealthy_in_window),
        cmocka_unit_test(test_after_window),
        cmocka_unit_test(test_not_watched),
        cmocka_unit_test(test_newer_restart_and_other_pods),
        cmocka_unit_test(test_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
