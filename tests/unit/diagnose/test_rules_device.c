/* diagnose, rule gpu_device_unhealthy (src/diagnose/rules_device.c): the
 * kubelet's allocatedResourcesStatus (KEP-4680) as a cause, on pods made
 * from the 1.35-shaped fixture tests/fixtures/k8s-1.35/pod-restart-fields.json
 * (container "trainer": nvidia.com/gpu device GPU-5a1e... Unhealthy, "ECC
 * error count exceeded threshold", and DRA claim claim:gpu/gpu Healthy). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/alert/format.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/cause.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

#define FIXTURE KRC_FIXTURES "/k8s-1.35/pod-restart-fields.json"
#define GPU_ID "GPU-5a1e0b7c-2f3d-4e8a-9b6c-0d1e2f3a4b5c"
#define ECC "ECC error count exceeded threshold"
#define DRA_ID "gpu.example.com/gpu-node-7/gpu-3"
#define CLAIM_FIXTURE KRC_FIXTURES "/k8s-1.35/resourceclaim-gpu.json"

/* When set, run() reads this ResourceClaim into the pod's first claim
 * status, as the collector does (NULL: the claim was not read). */
static char *claim_doc;

/* ---- the pod ------------------------------------------------------------ */

static cJSON *load_fixture(void)
{
    FILE *f = fopen(FIXTURE, "rb");
    char *data;
    long n;
    cJSON *pod;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    data = malloc((size_t)n);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    pod = cJSON_ParseWithLength(data, (size_t)n);
    free(data);
    assert_non_null(pod);
    return pod;
}

/* status.containerStatuses[0]: "trainer" */
static cJSON *trainer(cJSON *pod)
{
    cJSON *cs = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "containerStatuses"), 0);

    assert_non_null(cs);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cs, "name")), "trainer");
    return cs;
}

/* allocatedResourcesStatus[entry].resources[0] */
static cJSON *device(cJSON *pod, int entry)
{
    cJSON *ars = cJSON_GetObjectItem(trainer(pod), "allocatedResourcesStatus");
    cJSON *e = cJSON_GetArrayItem(ars, entry);
    cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "resources"), 0);

    assert_non_null(d);
    return d;
}

static void set_str(cJSON *obj, const char *key, const char *value)
{
    cJSON_DeleteItemFromObject(obj, key);
    if (value != NULL) {
        assert_non_null(cJSON_AddStringToObject(obj, key, value));
    }
}

/* entry's resource name, and its device's health and message (NULL: left out) */
static void set_health(cJSON *pod, int entry, const char *name, const char *health,
                       const char *message)
{
    cJSON *e =
        cJSON_GetArrayItem(cJSON_GetObjectItem(trainer(pod), "allocatedResourcesStatus"), entry);

    if (name != NULL) {
        set_str(e, "name", name);
    }
    set_str(device(pod, entry), "health", health);
    set_str(device(pod, entry), "message", message);
}

/* trainer's lastState.terminated exit code and reason */
static void set_exit(cJSON *pod, int code, const char *reason)
{
    cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(trainer(pod), "lastState"), "terminated");

    assert_non_null(t);
    cJSON_DeleteItemFromObject(t, "exitCode");
    assert_non_null(cJSON_AddNumberToObject(t, "exitCode", code));
    set_str(t, "reason", reason);
}

/* The fixture with trainer exiting 1 (Error): its exit 42 is one of its
 * restart rule's codes, a restart the rules of intentional restarts name. */
static cJSON *crashed_pod(void)
{
    cJSON *pod = load_fixture();

    set_exit(pod, 1, "Error");
    return pod;
}

/* Parse the pod (and a previous log of trainer) and diagnose trainer; frees pod. */
static enum krc_cause run(struct krc_report *r, struct krc_diagnosis *d, cJSON *pod,
                          const char *log)
{
    struct krc_error err;
    char *json = cJSON_PrintUnformatted(pod);

    cJSON_Delete(pod);
    assert_non_null(json);
    krc_report_init(r);
    krc_diagnosis_init(d);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(json, strlen(json), r, &err) != 0) {
        fail_msg("parse: %s", err.msg);
    }
    cJSON_free(json);
    if (claim_doc != NULL &&
        krc_kube_parse_resource_claim(claim_doc, strlen(claim_doc), r, 0, &err) != 0) {
        fail_msg("claim: %s", err.msg);
    }
    if (log != NULL) {
        assert_int_equal(krc_report_set_log(r, "trainer", log, strlen(log), 0, &err), 0);
    }
    if (krc_diagnose(r, "trainer", d, &err) != 0) {
        fail_msg("diagnose: %s", err.msg);
    }
    return d->cause;
}

/* Does the rule hold on its own for trainer? confidence + 1, or 0. */
static int rule_holds(cJSON *pod)
{
    struct krc_report r;
    struct krc_error err;
    enum krc_confidence conf = KRC_CONFIDENCE_LOW;
    char *json = cJSON_PrintUnformatted(pod);
    int rc;

    cJSON_Delete(pod);
    assert_non_null(json);
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(json, strlen(json), &r, &err), 0);
    cJSON_free(json);
    rc = krc_diagnose_rule_matches(&r, "trainer", "gpu_device_unhealthy", &conf, &err);
    if (rc < 0) {
        fail_msg("rule: %s", err.msg);
    }
    krc_report_cleanup(&r);
    return rc == 1 ? (int)conf + 1 : 0;
}

static void done(struct krc_report *r, struct krc_diagnosis *d)
{
    krc_diagnosis_cleanup(d);
    krc_report_cleanup(r);
}

/* The evidence line holding every needle (NULL-terminated), or NULL. */
static const char *evidence_with(const struct krc_diagnosis *d, ...)
{
    for (size_t i = 0; i < d->n_evidence; i++) {
        va_list ap;
        const char *needle;
        int all = 1;

        va_start(ap, d);
        while (all && (needle = va_arg(ap, const char *)) != NULL) {
            all = strstr(d->evidence[i], needle) != NULL;
        }
        va_end(ap);
        if (all) {
            return d->evidence[i];
        }
    }
    return NULL;
}

static int unchecked_has(const struct krc_diagnosis *d, const char *needle)
{
    for (size_t i = 0; i < d->n_unchecked; i++) {
        if (strstr(d->unchecked[i], needle) != NULL) {
            return 1;
        }
    }
    return 0;
}

static size_t rule_index(const char *name)
{
    size_t n = krc_diagnose_rule_count();

    for (size_t i = 0; i < n; i++) {
        if (strcmp(krc_diagnose_rule_name(i), name) == 0) {
            return i;
        }
    }
    fail_msg("no rule %s", name);
    return n;
}

#define HIGH (KRC_CONFIDENCE_HIGH + 1)
#define MEDIUM (KRC_CONFIDENCE_MEDIUM + 1)

/* ---- tests ----------------------------------------------------------------- */

/* An Unhealthy GPU of a crashed container is the cause: the summary, an
 * evidence line and the next step name the resource, the device and its
 * message, and what an operator does. */
static void test_unhealthy_gpu(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    const char *line;

    (void)state;
    assert_int_equal(run(&r, &d, crashed_pod(), NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_string_equal(krc_cause_name(d.cause), "gpu_device_unhealthy");
    assert_non_null(strstr(d.summary, "Container trainer exited 1"));
    assert_non_null(strstr(d.summary, GPU_ID));
    assert_non_null(strstr(d.summary, "(nvidia.com/gpu) Unhealthy"));
    assert_non_null(strstr(d.summary, ECC));
    /* the device's message is the cluster's text: not in the unquoted form */
    assert_null(strstr(d.summary_unquoted, ECC));
    assert_non_null(strstr(d.summary_unquoted, GPU_ID));
    line = evidence_with(&d, "allocatedResourcesStatus nvidia.com/gpu", GPU_ID, "Unhealthy", ECC,
                         NULL);
    assert_non_null(line);
    /* the Healthy DRA device is not evidence */
    assert_null(evidence_with(&d, DRA_ID, NULL));
    assert_non_null(strstr(d.next_step, "cordon and drain node gpu-node-7"));
    assert_non_null(strstr(d.next_step, GPU_ID));
    assert_non_null(strstr(d.next_step, "nvidia-smi"));
    assert_non_null(strstr(d.next_step, "DCGM"));
    assert_non_null(strstr(d.next_step, "fail again"));
    assert_non_null(strstr(d.next_step, "rescheduled"));
    assert_true(unchecked_has(&d, "carries no time"));
    done(&r, &d);
    /* and the rule on its own, on the fixture as it is (exit 42) */
    assert_int_equal(rule_holds(load_fixture()), HIGH);
}

/* A DRA claim's device ("claim:<claim>/<request>") Unhealthy is the cause too. */
static void test_unhealthy_dra_claim(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();

    (void)state;
    set_health(pod, 0, NULL, "Healthy", NULL);
    set_health(pod, 1, NULL, "Unhealthy", "XID 79: GPU has fallen off the bus");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, DRA_ID " (DRA claim gpu, request gpu) Unhealthy"));
    assert_non_null(
        evidence_with(&d, "DRA claim gpu, request gpu", DRA_ID, "fallen off the bus", NULL));
    assert_null(evidence_with(&d, GPU_ID, NULL));
    done(&r, &d);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    data = calloc(1, (size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return data;
}

/* The claim's ResourceClaim read (collector): the Unhealthy claim device is
 * named with its ResourceClaim, driver, pool and device, and the condition
 * its driver reports of it is evidence. The device is found by its
 * resourceID (driver/pool/device); a resourceID of no allocated device falls
 * back on the claim's only device of that request; a claim with two devices
 * for the request and no matching ID names none. */
static void test_unhealthy_dra_claim_device(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();
    cJSON *claim;
    cJSON *results;
    char *two;

    (void)state;
    claim_doc = read_text(CLAIM_FIXTURE);
    set_health(pod, 0, NULL, "Healthy", NULL);
    set_health(pod, 1, NULL, "Unhealthy", "XID 79: GPU has fallen off the bus");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_non_null(strstr(d.summary, DRA_ID " (DRA claim gpu, request gpu; ResourceClaim "
                                             "trainer-0-gpu-x7k2p: driver gpu.example.com, pool "
                                             "gpu-node-7, device gpu-3) Unhealthy"));
    assert_non_null(evidence_with(&d,
                                  "ResourceClaim trainer-0-gpu-x7k2p, device gpu-3: "
                                  "condition Ready=False, reason DeviceLost: XID 79",
                                  NULL));
    done(&r, &d);

    /* an ID of no allocated device: the only device of request gpu */
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Healthy", NULL);
    set_health(pod, 1, NULL, "Unhealthy", NULL);
    set_str(device(pod, 1), "resourceID", "gpu.example.com/gpu-node-7/gpu-9");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_non_null(strstr(d.summary, "device gpu-3)"));
    done(&r, &d);

    /* two devices for the request and no matching ID: neither is named */
    claim = cJSON_Parse(claim_doc);
    assert_non_null(claim);
    results = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(claim, "status"), "allocation"),
                            "devices"),
        "results");
    assert_non_null(results);
    cJSON_AddItemToArray(results, cJSON_Duplicate(cJSON_GetArrayItem(results, 0), 1));
    two = cJSON_PrintUnformatted(claim);
    cJSON_Delete(claim);
    free(claim_doc);
    claim_doc = strdup(two);
    cJSON_free(two);
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Healthy", NULL);
    set_health(pod, 1, NULL, "Unhealthy", NULL);
    set_str(device(pod, 1), "resourceID", "gpu.example.com/gpu-node-7/gpu-9");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_null(strstr(d.summary, "ResourceClaim"));
    assert_non_null(strstr(d.summary, "(DRA claim gpu, request gpu) Unhealthy"));
    done(&r, &d);
    free(claim_doc);
    claim_doc = NULL;
}

/* An eviction by a device taint (KEP-5055): the DisruptionTarget condition
 * the device taint eviction controller sets names it "evicted (device
 * taint)", with the claim's devices; a container's own crash is still its
 * own. */
static void test_evicted_device_taint(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();
    cJSON *conds;
    cJSON *c;

    (void)state;
    claim_doc = read_text(CLAIM_FIXTURE);
    set_health(pod, 0, NULL, "Healthy", NULL);
    set_exit(pod, 143, "Error");
    conds = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions");
    assert_non_null(conds);
    c = cJSON_Parse("{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
                    "\"DeletionByDeviceTaintManager\",\"message\":\"Device Taint manager: "
                    "deleting due to NoExecute taint\"}");
    assert_non_null(c);
    cJSON_AddItemToArray(conds, c);
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_EVICTED);
    assert_non_null(strstr(d.summary, "evicted (device taint)"));
    assert_non_null(strstr(d.summary, "DeletionByDeviceTaintManager"));
    assert_non_null(evidence_with(&d,
                                  "ResourceClaim trainer-0-gpu-x7k2p (claim gpu) holds device "
                                  "gpu-3 of driver gpu.example.com, pool gpu-node-7",
                                  NULL));
    assert_non_null(evidence_with(&d,
                                  "DisruptionTarget=True, reason DeletionByDeviceTaintManager: "
                                  "evicted (device taint)",
                                  NULL));
    assert_true(unchecked_has(&d, "DeviceTaintRule"));
    done(&r, &d);

    /* the same condition on a container that crashed (exit 1): its own cause */
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Healthy", NULL);
    conds = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "conditions");
    cJSON_AddItemToArray(conds,
                         cJSON_Parse("{\"type\":\"DisruptionTarget\",\"status\":"
                                     "\"True\",\"reason\":\"DeletionByDeviceTaintManager\"}"));
    assert_int_not_equal(run(&r, &d, pod, NULL), KRC_CAUSE_EVICTED);
    assert_null(strstr(d.summary, "device taint"));
    done(&r, &d);
    free(claim_doc);
    claim_doc = NULL;
}

/* Unknown is not proof: stated as evidence, the cause is the exit's. */
static void test_unknown_alone_is_not_the_cause(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();

    (void)state;
    set_health(pod, 0, NULL, "Unknown", "device plugin stopped reporting");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_APP_ERROR);
    assert_non_null(evidence_with(&d, "nvidia.com/gpu", GPU_ID, "Unknown",
                                  "not by itself a device fault", "device plugin stopped reporting",
                                  NULL));
    assert_null(strstr(d.summary, GPU_ID));
    done(&r, &d);
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Unknown", NULL);
    assert_int_equal(rule_holds(pod), 0);
    /* nor a health of a later release, nor none at all */
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Degraded", NULL);
    assert_int_equal(rule_holds(pod), 0);
    pod = crashed_pod();
    set_health(pod, 0, NULL, NULL, NULL);
    assert_int_equal(rule_holds(pod), 0);
}

/* Healthy devices: not the cause, and no device evidence. */
static void test_healthy_is_not_the_cause(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();

    (void)state;
    set_health(pod, 0, NULL, "Healthy", NULL);
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_APP_ERROR);
    assert_null(evidence_with(&d, "allocatedResourcesStatus", NULL));
    done(&r, &d);
}

/* An Unhealthy device of a resource that is not an accelerator (an RDMA NIC,
 * a GPU quantity that is not a device count) is not the cause. */
static void test_non_accelerator_is_not_the_cause(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();

    (void)state;
    set_health(pod, 0, "rdma/hca_shared_devices_a", "Unhealthy", "link down");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_APP_ERROR);
    assert_non_null(evidence_with(&d, "rdma/hca_shared_devices_a", "Unhealthy",
                                  "(not an accelerator)", "link down", NULL));
    done(&r, &d);
    pod = crashed_pod();
    set_health(pod, 0, "nvidia.com/gpumem", "Unhealthy", NULL);
    assert_int_equal(rule_holds(pod), 0);
}

/* OOMKilled wins (rule 1), and the Unhealthy device is still stated. */
static void test_oom_killed_still_wins(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = load_fixture();

    (void)state;
    set_exit(pod, 137, "OOMKilled");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_OOM_KILLED);
    assert_non_null(evidence_with(&d, "nvidia.com/gpu", GPU_ID, "Unhealthy", ECC, NULL));
    done(&r, &d);
}

/* It ranks above what the application says about the GPU: a CUDA out of
 * memory or CUDA error in the log of a crash on an Unhealthy device. */
static void test_above_application_gpu_causes(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    assert_int_equal(run(&r, &d, crashed_pod(),
                         "step 812\ntorch.OutOfMemoryError: CUDA out of memory. Tried to "
                         "allocate 2.00 GiB\n"),
                     KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    done(&r, &d);
    assert_int_equal(run(&r, &d, crashed_pod(),
                         "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"),
                     KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    done(&r, &d);
    /* the same logs on a Healthy device keep their causes */
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Healthy", NULL);
    assert_int_equal(run(&r, &d, pod,
                         "step 812\ntorch.OutOfMemoryError: CUDA out of memory. Tried to "
                         "allocate 2.00 GiB\n"),
                     KRC_CAUSE_GPU_OUT_OF_MEMORY);
    done(&r, &d);
    pod = crashed_pod();
    set_health(pod, 0, NULL, "Healthy", NULL);
    assert_int_equal(
        run(&r, &d, pod, "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"),
        KRC_CAUSE_GPU_ERROR);
    done(&r, &d);
    /* the table: below the kubelet's and kernel's verdicts and start failures, above
     * the application's */
    assert_true(rule_index("gpu_device_unhealthy") > rule_index("oom_killed"));
    assert_true(rule_index("gpu_device_unhealthy") > rule_index("evicted"));
    assert_true(rule_index("gpu_device_unhealthy") > rule_index("liveness_probe_failed"));
    assert_true(rule_index("gpu_device_unhealthy") > rule_index("startup_probe_failed"));
    assert_true(rule_index("gpu_device_unhealthy") > rule_index("node_not_ready"));
    assert_true(rule_index("gpu_device_unhealthy") > rule_index("start_failed"));
    assert_true(rule_index("gpu_device_unhealthy") < rule_index("gpu_out_of_memory"));
    assert_true(rule_index("gpu_device_unhealthy") < rule_index("gpu_error"));
    assert_true(rule_index("gpu_device_unhealthy") < rule_index("segfault"));
    assert_true(rule_index("gpu_device_unhealthy") < rule_index("app_error"));
}

/* How the container ended: exit 0 is not a crash; SIGKILL / SIGTERM is
 * something else stopping it (medium). */
static void test_exit_codes(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    pod = load_fixture();
    set_exit(pod, 0, "Completed");
    assert_int_equal(rule_holds(pod), 0);
    pod = load_fixture();
    set_exit(pod, 0, "Completed");
    assert_int_not_equal(run(&r, &d, pod, NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_non_null(evidence_with(&d, GPU_ID, "Unhealthy", NULL));
    done(&r, &d);
    pod = load_fixture();
    set_exit(pod, 143, "Error");
    assert_int_equal(rule_holds(pod), MEDIUM);
    pod = load_fixture();
    set_exit(pod, 137, "Error");
    assert_int_equal(rule_holds(pod), MEDIUM);
    pod = load_fixture();
    set_exit(pod, 139, "Error");
    assert_int_equal(rule_holds(pod), HIGH);
}

/* Several devices not Healthy: the first Unhealthy is named, the others
 * counted; evidence lines are bounded and display-safe. */
static void test_many_devices_bounded(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();
    cJSON *list = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(trainer(pod), "allocatedResourcesStatus"), 0),
        "resources");
    char big[2000];

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "bad\x1b[31m\n", 9);
    for (int i = 0; i < 7; i++) {
        char id[32];
        cJSON *o = cJSON_CreateObject();
        snprintf(id, sizeof(id), "GPU-extra-%d", i);
        assert_non_null(cJSON_AddStringToObject(o, "resourceID", id));
        assert_non_null(cJSON_AddStringToObject(o, "health", "Unhealthy"));
        assert_non_null(cJSON_AddStringToObject(o, "message", big));
        assert_true(cJSON_AddItemToArray(list, o));
    }
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_non_null(strstr(d.summary, GPU_ID));
    assert_non_null(strstr(d.summary, "7 more of its devices are reported Unhealthy"));
    assert_non_null(evidence_with(&d, "GPU-extra-2", NULL));
    assert_null(evidence_with(&d, "GPU-extra-3", NULL));
    assert_non_null(evidence_with(&d, "4 more devices not Healthy", NULL));
    for (size_t i = 0; i < d.n_evidence; i++) {
        assert_true(strlen(d.evidence[i]) < KRC_DIAG_EVIDENCE_MAX);
        for (const char *p = d.evidence[i]; *p; p++) {
            assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
        }
    }
    done(&r, &d);
}

/* A pod without allocatedResourcesStatus (a 1.28 cluster) keeps its cause
 * and gets no device evidence. */
static void test_without_the_field(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = crashed_pod();

    (void)state;
    cJSON_DeleteItemFromObject(trainer(pod), "allocatedResourcesStatus");
    assert_int_equal(run(&r, &d, pod, NULL), KRC_CAUSE_APP_ERROR);
    assert_null(evidence_with(&d, "allocatedResourcesStatus", NULL));
    done(&r, &d);
}

/* Every allocation failing in turn: a clean KRC_ENOMEM, nothing leaked. */
static void test_alloc_failures(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    cJSON *pod = crashed_pod();
    char *json = cJSON_PrintUnformatted(pod);
    int rc = -1;

    (void)state;
    cJSON_Delete(pod);
    assert_non_null(json);
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(json, strlen(json), &r, &err), 0);
    cJSON_free(json);
    for (long n = 0; rc != 0 && n < 10000; n++) {
        krc_diagnosis_init(&d);
        krc_mem_fail_after(n);
        rc = krc_diagnose(&r, "trainer", &d, &err);
        krc_mem_fail_after(-1);
        if (rc != 0) {
            assert_int_equal(rc, KRC_ENOMEM);
        } else {
            assert_int_equal(d.cause, KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
        }
        krc_diagnosis_cleanup(&d);
    }
    assert_int_equal(rc, 0);
    krc_report_cleanup(&r);
}

/* The code is a public contract and its enum value is stored: appended after
 * node_not_ready (21); an alert shows it red with its own title. */
static void test_code_title_severity(void **state)
{
    enum krc_cause c = KRC_CAUSE_UNKNOWN;

    (void)state;
    assert_int_equal((int)KRC_CAUSE_GPU_DEVICE_UNHEALTHY, 23);
    assert_int_equal(krc_cause_parse("gpu_device_unhealthy", &c), 0);
    assert_int_equal(c, KRC_CAUSE_GPU_DEVICE_UNHEALTHY);
    assert_string_equal(krc_cause_name(KRC_CAUSE_NODE_NOT_READY), "node_not_ready");
    assert_string_equal(krc_alert_cause_title(KRC_CAUSE_GPU_DEVICE_UNHEALTHY),
                        "GPU device unhealthy");
    assert_int_equal(krc_alert_cause_severity(KRC_CAUSE_GPU_DEVICE_UNHEALTHY),
                     KRC_ALERT_SEV_CRITICAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unhealthy_gpu),
        cmocka_unit_test(test_unhealthy_dra_claim),
        cmocka_unit_test(test_unhealthy_dra_claim_device),
        cmocka_unit_test(test_evicted_device_taint),
        cmocka_unit_test(test_unknown_alone_is_not_the_cause),
        cmocka_unit_test(test_healthy_is_not_the_cause),
        cmocka_unit_test(test_non_accelerator_is_not_the_cause),
        cmocka_unit_test(test_oom_killed_still_wins),
        cmocka_unit_test(test_above_application_gpu_causes),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_many_devices_bounded),
        cmocka_unit_test(test_without_the_field),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_code_title_severity),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
