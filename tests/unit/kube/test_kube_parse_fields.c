/* kube_parse: the Pod fields Kubernetes 1.33-1.37 added to say why a
 * container restarted (docs/design/kubernetes-1.33-fields.md).
 *
 * The 1.35-shaped pod (tests/fixtures/k8s-1.35/pod-restart-fields.json) is
 * built from the Kubernetes API reference: the core/v1 OpenAPI schema as the
 * generated clients render it (docs.rs k8s-openapi 0.28/0.29:
 * ContainerRestartRule {action, exitCodes}, ContainerRestartRuleOnExitCodes
 * {operator, values}, ResourceStatus {name, resources}, ResourceHealth
 * {resourceID, health, message}, PodResourceClaimStatus {name,
 * resourceClaimName}) and protocols.md Part 8 (the KEPs). Checked here: every
 * field read, a 1.28-shaped pod leaves them all empty, lists are capped and
 * texts cut, unknown values kept, a field of the wrong type is left out with
 * a note and the pod still read, and no leak when allocations fail. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define FIXTURE_135 KRC_FIXTURES "/k8s-1.35/pod-restart-fields.json"

static int appendf(struct krc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int appendf(struct krc_buf *b, const char *fmt, ...)
{
    char line[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    return krc_buf_append_str(b, line);
}

static int parse_text(const char *json, size_t n, struct krc_report *r, struct krc_error *err)
{
    /* a copy without a NUL, so that ASan catches reads past `len` */
    char *copy = malloc(n ? n : 1);
    int rc;

    assert_non_null(copy);
    memcpy(copy, json, n);
    rc = krc_kube_parse_pod(copy, n, r, err);
    free(copy);
    return rc;
}

static void parse_file(const char *path, struct krc_report *r)
{
    struct krc_error err;
    size_t len = 0;
    char *text = krc_test_read_file(path, &len);

    assert_non_null(text);
    krc_report_init(r);
    krc_error_clear(&err);
    if (parse_text(text, len, r, &err) != 0) {
        fail_msg("%s: %s", path, err.msg);
    }
    free(text);
}

static const struct krc_report_pod_condition *condition(const struct krc_report *r,
                                                        const char *type)
{
    for (size_t i = 0; i < r->n_conditions; i++) {
        if (r->conditions[i].type != NULL && strcmp(r->conditions[i].type, type) == 0) {
            return &r->conditions[i];
        }
    }
    return NULL;
}

static const struct krc_report_container *get(const struct krc_report *r, const char *name)
{
    const struct krc_report_container *c = krc_report_container_get(r, name, -1);
    assert_non_null(c);
    return c;
}

static void test_fields_135(void **state)
{
    struct krc_report r;
    const struct krc_report_container *c;
    const struct krc_report_pod_condition *k;

    (void)state;
    parse_file(FIXTURE_135, &r);
    assert_int_equal(r.n_notes, 0);
    /* metadata.generation, status.observedGeneration (KEP-5067) */
    assert_true(r.has_generation);
    assert_int_equal(r.generation, 4);
    assert_true(r.has_observed_generation);
    assert_int_equal(r.observed_generation, 4);
    /* pod-level spec.resources (KEP-2837) */
    assert_true(r.has_pod_resources);
    assert_string_equal(krc_kv_list_get(&r.pod_limits, "memory"), "32Gi");
    assert_string_equal(krc_kv_list_get(&r.pod_limits, "cpu"), "8");
    assert_string_equal(krc_kv_list_get(&r.pod_requests, "memory"), "24Gi");
    /* every condition kept, in order, with observedGeneration */
    assert_int_equal(r.n_conditions, 7);
    assert_int_equal(r.conditions_omitted, 0);
    k = condition(&r, "AllContainersRestarting");
    assert_non_null(k);
    assert_string_equal(k->status, "False");
    assert_true(k->has_observed_generation);
    assert_int_equal(k->observed_generation, 4);
    assert_int_equal(k->last_transition, 1795165960); /* 2026-11-20T09:12:40Z */
    k = condition(&r, "PodResizePending");
    assert_non_null(k);
    assert_string_equal(k->reason, "Deferred");
    assert_non_null(strstr(k->message, "enough capacity: memory"));
    assert_non_null(condition(&r, "PodReadyToStartContainers"));
    assert_null(condition(&r, "DisruptionTarget"));
    /* status.resourceClaimStatuses (DRA) */
    assert_int_equal(r.n_claim_statuses, 1);
    assert_string_equal(r.claim_statuses[0].name, "gpu");
    assert_string_equal(r.claim_statuses[0].resource_claim_name, "trainer-0-gpu-x7k2p");

    c = get(&r, "trainer");
    /* container restartPolicy + restartPolicyRules (KEP-5307, KEP-5532) */
    assert_string_equal(c->restart_policy, "Never");
    assert_int_equal(c->n_restart_rules, 2);
    assert_string_equal(c->restart_rules[0].action, "Restart");
    assert_true(c->restart_rules[0].has_exit_codes);
    assert_string_equal(c->restart_rules[0].op, "In");
    assert_int_equal(c->restart_rules[0].n_values, 2);
    assert_int_equal(c->restart_rules[0].values[0], 42);
    assert_int_equal(c->restart_rules[0].values[1], 43);
    assert_string_equal(c->restart_rules[1].action, "RestartAllContainers");
    assert_int_equal(c->restart_rules[1].n_values, 1);
    assert_int_equal(c->restart_rules[1].values[0], 88);
    /* resizePolicy (KEP-1287) */
    assert_int_equal(c->n_resize_policy, 2);
    assert_string_equal(c->resize_policy[1].resource_name, "memory");
    assert_string_equal(c->resize_policy[1].restart_policy, "RestartContainer");
    /* stopSignal (KEP-4960) */
    assert_string_equal(c->stop_signal, "SIGUSR1");
    /* containerStatuses[].resources: actuated, 12Gi where the spec says 16Gi */
    assert_true(c->has_status_resources);
    assert_string_equal(krc_kv_list_get(&c->status_limits, "memory"), "12Gi");
    assert_string_equal(krc_kv_list_get(&c->limits, "memory"), "16Gi");
    assert_string_equal(krc_kv_list_get(&c->status_requests, "nvidia.com/gpu"), "1");
    /* allocatedResourcesStatus (KEP-4680): device plugin and DRA claim */
    assert_int_equal(c->n_resource_health, 2);
    assert_string_equal(c->resource_health[0].name, "nvidia.com/gpu");
    assert_int_equal(c->resource_health[0].n_resources, 1);
    assert_string_equal(c->resource_health[0].resources[0].resource_id,
                        "GPU-5a1e0b7c-2f3d-4e8a-9b6c-0d1e2f3a4b5c");
    assert_string_equal(c->resource_health[0].resources[0].health, "Unhealthy");
    assert_string_equal(c->resource_health[0].resources[0].message,
                        "ECC error count exceeded threshold");
    assert_string_equal(c->resource_health[1].name, "claim:gpu/gpu");
    assert_string_equal(c->resource_health[1].resources[0].health, "Healthy");
    assert_null(c->resource_health[1].resources[0].message);
    /* what was read before is unchanged */
    assert_int_equal(c->restart_count, 3);
    assert_int_equal(c->last.exit_code, 42);

    c = get(&r, "evaluator");
    assert_null(c->restart_policy);
    assert_int_equal(c->n_restart_rules, 0);
    assert_int_equal(c->n_resize_policy, 0);
    assert_string_equal(c->stop_signal, "SIGTERM");
    assert_false(c->has_status_resources);
    assert_int_equal(c->n_resource_health, 0);

    c = krc_report_container_get(&r, "log-shipper", 1);
    assert_non_null(c);
    assert_true(c->is_sidecar);
    assert_string_equal(c->restart_policy, "Always");
    assert_string_equal(c->stop_signal, "SIGTERM");
    krc_report_cleanup(&r);
}

/* A 1.28-shaped pod: none of the new fields, no note. */
static void test_fields_absent_128(void **state)
{
    static const char *const files[] = {"/pods/pod_item.json",
                                        "/corpus/01-orders-api-oomkilled/pod.json"};

    (void)state;
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char path[512];
        struct krc_report r;
        snprintf(path, sizeof(path), "%s%s", KRC_FIXTURES, files[f]);
        parse_file(path, &r);
        assert_true(r.n_containers > 0);
        assert_int_equal(r.n_notes, 0);
        assert_false(r.has_generation);
        assert_false(r.has_observed_generation);
        assert_false(r.has_pod_resources);
        assert_int_equal(r.pod_limits.n + r.pod_requests.n, 0);
        assert_int_equal(r.n_claim_statuses, 0);
        assert_null(condition(&r, "AllContainersRestarting"));
        for (size_t i = 0; i < r.n_containers; i++) {
            const struct krc_report_container *c = &r.containers[i];
            assert_null(c->stop_signal);
            assert_int_equal(c->n_restart_rules, 0);
            assert_int_equal(c->n_resize_policy, 0);
            assert_int_equal(c->n_resource_health, 0);
            assert_false(c->has_status_resources);
        }
        krc_report_cleanup(&r);
    }
}

/* Every list capped, the rest counted; every text cut at
 * KRC_REPORT_FIELD_TEXT_MAX bytes before a UTF-8 continuation byte. */
static void test_fields_oversize(void **state)
{
    struct krc_buf b;
    struct krc_report r;
    struct krc_error err;
    const struct krc_report_container *c;
    size_t i;
    size_t j;

    (void)state;
    krc_buf_init(&b, 8u * 1024u * 1024u);
    assert_int_equal(krc_buf_append_str(&b, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"big\","
                                            "\"namespace\":\"x\",\"uid\":\"u1\"},"
                                            "\"spec\":{\"containers\":[{\"name\":\"app\","
                                            "\"restartPolicy\":\"Never\","
                                            "\"restartPolicyRules\":["),
                     0);
    for (i = 0; i < 25; i++) {
        assert_int_equal(appendf(&b,
                                 "%s{\"action\":\"Restart\",\"exitCodes\":{"
                                 "\"operator\":\"In\",\"values\":[",
                                 i ? "," : ""),
                         0);
        for (j = 0; j < 300; j++) {
            assert_int_equal(appendf(&b, "%s%zu", j ? "," : "", j), 0);
        }
        assert_int_equal(krc_buf_append_str(&b, "]}}"), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "],\"resizePolicy\":["), 0);
    for (i = 0; i < 12; i++) {
        assert_int_equal(appendf(&b,
                                 "%s{\"resourceName\":\"r%zu\","
                                 "\"restartPolicy\":\"NotRequired\"}",
                                 i ? "," : "", i),
                         0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}]},\"status\":{\"conditions\":["), 0);
    for (i = 0; i < 40; i++) {
        assert_int_equal(appendf(&b, "%s{\"type\":\"T%zu\",\"status\":\"True\"}", i ? "," : "", i),
                         0);
    }
    assert_int_equal(krc_buf_append_str(&b, "],\"resourceClaimStatuses\":["), 0);
    for (i = 0; i < 40; i++) {
        assert_int_equal(appendf(&b, "%s{\"name\":\"c%zu\"}", i ? "," : "", i), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "],\"containerStatuses\":[{\"name\":\"app\","
                                            "\"restartCount\":1,\"stopSignal\":\"S"),
                     0);
    /* 1023 ASCII bytes, then 'é' (2 bytes) across the 1024-byte cut */
    for (i = 0; i < KRC_REPORT_FIELD_TEXT_MAX - 2; i++) {
        assert_int_equal(krc_buf_append_str(&b, "I"), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "\xc3\xa9tail\",\"allocatedResourcesStatus\":["), 0);
    for (i = 0; i < 20; i++) {
        assert_int_equal(
            appendf(&b, "%s{\"name\":\"example.com/dev%zu\",\"resources\":[", i ? "," : "", i), 0);
        for (j = 0; j < 70; j++) {
            assert_int_equal(appendf(&b,
                                     "%s{\"resourceID\":\"d%zu\",\"health\":"
                                     "\"Unknown\"}",
                                     j ? "," : "", j),
                             0);
        }
        assert_int_equal(krc_buf_append_str(&b, "]}"), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}]}}"), 0);

    krc_report_init(&r);
    krc_error_clear(&err);
    if (parse_text(b.data, b.len, &r, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    krc_buf_cleanup(&b);
    c = get(&r, "app");
    assert_int_equal(c->n_restart_rules, KRC_REPORT_RULES_MAX);
    assert_int_equal(c->restart_rules_omitted, 5);
    assert_int_equal(c->restart_rules[19].n_values, KRC_REPORT_RULE_CODES_MAX);
    assert_int_equal(c->restart_rules[19].values_omitted, 300 - KRC_REPORT_RULE_CODES_MAX);
    assert_int_equal(c->restart_rules[19].values[254], 254);
    assert_int_equal(c->n_resize_policy, KRC_REPORT_RESIZE_MAX);
    assert_int_equal(c->resize_policy_omitted, 4);
    assert_int_equal(r.n_conditions, KRC_REPORT_CONDITIONS_MAX);
    assert_int_equal(r.conditions_omitted, 40 - KRC_REPORT_CONDITIONS_MAX);
    assert_string_equal(r.conditions[31].type, "T31");
    assert_int_equal(r.n_claim_statuses, KRC_REPORT_CLAIMS_MAX);
    assert_int_equal(r.claim_statuses_omitted, 40 - KRC_REPORT_CLAIMS_MAX);
    assert_null(r.claim_statuses[0].resource_claim_name);
    assert_int_equal(c->n_resource_health, KRC_REPORT_HEALTH_MAX);
    assert_int_equal(c->resource_health_omitted, 20 - KRC_REPORT_HEALTH_MAX);
    assert_int_equal(c->resource_health[15].n_resources, KRC_REPORT_DEVICES_MAX);
    assert_int_equal(c->resource_health[15].resources_omitted, 70 - KRC_REPORT_DEVICES_MAX);
    /* "S" + 1022 "I" = 1023 bytes: the 2-byte é would end past 1024, so it goes */
    assert_int_equal(strlen(c->stop_signal), KRC_REPORT_FIELD_TEXT_MAX - 1);
    assert_int_equal(c->stop_signal[KRC_REPORT_FIELD_TEXT_MAX - 2], 'I');
    krc_report_cleanup(&r);
}

/* Values the API may add later are kept as sent; a new field of the wrong
 * type is left out with a note naming it, and the pod is still read. */
static void test_fields_unknown_and_wrong_types(void **state)
{
    static const char pod[] =
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\","
        "\"generation\":\"4\"},"
        "\"spec\":{\"resources\":[],\"containers\":[{\"name\":\"app\","
        "\"restartPolicyRules\":[{\"action\":\"RestartPod\",\"exitCodes\":{\"operator\":\"Above\","
        "\"values\":[1,\"x\",2.5,3]}},\"bad\",{\"action\":\"Restart\"}],"
        "\"resizePolicy\":{\"cpu\":1}}]},"
        "\"status\":{\"observedGeneration\":-1,\"conditions\":[\"c\",{\"type\":"
        "\"DisruptionTarget\","
        "\"status\":\"True\",\"reason\":\"EvictionByEvictionAPI\",\"lastTransitionTime\":\"soon\"}]"
        ","
        "\"resourceClaimStatuses\":{},"
        "\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":2,\"stopSignal\":15,"
        "\"resources\":{\"limits\":{\"memory\":true,\"cpu\":2}},"
        "\"allocatedResourcesStatus\":[{\"name\":\"example.com/fpga\",\"resources\":"
        "[{\"resourceID\":\"f0\",\"health\":\"Degraded\",\"message\":7}]}]}]}}";
    static const char *const notes[] = {
        "metadata.generation: expected a whole number >= 0, got a string; left out",
        "spec.resources: expected an object, got an array; left out",
        "spec.containers[0].restartPolicyRules[0].exitCodes.values[1]: expected an exit code, "
        "got a string; left out",
        "spec.containers[0].restartPolicyRules[0].exitCodes.values[2]: expected an exit code, "
        "got a number; left out",
        "spec.containers[0].restartPolicyRules[1]: expected an object, got a string; left out",
        "spec.containers[0].resizePolicy: expected an array, got an object; left out",
        "status.observedGeneration: expected a whole number >= 0, got a number; left out",
        "status.conditions[0]: expected an object, got a string; left out",
        "status.conditions[1].lastTransitionTime: expected an RFC 3339 timestamp, got a string; "
        "left out",
        "status.resourceClaimStatuses: expected an array, got an object; left out",
        "status.containerStatuses[0].stopSignal: expected a string, got a number; left out",
        "status.containerStatuses[0].resources.limits.memory: expected a quantity string, got a "
        "boolean; left out",
        "status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].message: expected "
        "a string, got a number; left out",
    };
    struct krc_report r;
    struct krc_error err;
    const struct krc_report_container *c;

    (void)state;
    krc_report_init(&r);
    krc_error_clear(&err);
    if (parse_text(pod, strlen(pod), &r, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(r.n_notes, sizeof(notes) / sizeof(notes[0]));
    for (size_t i = 0; i < r.n_notes; i++) {
        assert_string_equal(r.notes[i], notes[i]);
    }
    assert_false(r.has_generation);
    assert_false(r.has_observed_generation);
    assert_false(r.has_pod_resources);
    assert_int_equal(r.n_claim_statuses, 0);
    assert_int_equal(r.n_conditions, 1);
    assert_string_equal(r.conditions[0].reason, "EvictionByEvictionAPI");
    assert_int_equal(r.conditions[0].last_transition, 0);
    c = get(&r, "app");
    assert_int_equal(c->restart_count, 2);
    assert_int_equal(c->n_restart_rules, 2);
    assert_string_equal(c->restart_rules[0].action, "RestartPod");
    assert_string_equal(c->restart_rules[0].op, "Above");
    assert_int_equal(c->restart_rules[0].n_values, 2);
    assert_int_equal(c->restart_rules[0].values[0], 1);
    assert_int_equal(c->restart_rules[0].values[1], 3);
    assert_string_equal(c->restart_rules[1].action, "Restart");
    assert_false(c->restart_rules[1].has_exit_codes);
    assert_int_equal(c->n_resize_policy, 0);
    assert_null(c->stop_signal);
    assert_true(c->has_status_resources);
    assert_null(krc_kv_list_get(&c->status_limits, "memory"));
    assert_string_equal(krc_kv_list_get(&c->status_limits, "cpu"), "2");
    assert_int_equal(c->n_resource_health, 1);
    assert_string_equal(c->resource_health[0].resources[0].health, "Degraded");
    assert_null(c->resource_health[0].resources[0].message);
    krc_report_cleanup(&r);
}

/* A second parse into the same report replaces the fields (no leak, no
 * stale list). */
static void test_fields_reparse(void **state)
{
    struct krc_report r;
    struct krc_error err;
    size_t len = 0;
    char *text = krc_test_read_file(KRC_FIXTURES "/pods/pod_item.json", &len);

    (void)state;
    assert_non_null(text);
    parse_file(FIXTURE_135, &r);
    assert_int_equal(parse_text(text, len, &r, &err), 0);
    free(text);
    assert_int_equal(r.n_conditions, 0);
    assert_int_equal(r.n_claim_statuses, 0);
    assert_false(r.has_pod_resources);
    assert_false(r.has_generation);
    krc_report_cleanup(&r);
}

static char *sweep_text;
static size_t sweep_len;

static long sweep_run(void *ud, long n)
{
    struct krc_report r;
    struct krc_error err;
    long used;
    int rc;

    (void)ud;
    krc_report_init(&r);
    krc_mem_fail_after(n);
    rc = parse_text(sweep_text, sweep_len, &r, &err);
    used = krc_mem_fail_after(-1);
    assert_true(rc == 0 || rc == KRC_ENOMEM);
    if (rc != 0) {
        assert_int_equal(r.n_containers, 0);
        assert_int_equal(r.n_conditions, 0);
    }
    krc_report_cleanup(&r);
    return used;
}

static void test_fields_alloc_failures(void **state)
{
    (void)state;
    sweep_text = krc_test_read_file(FIXTURE_135, &sweep_len);
    assert_non_null(sweep_text);
    assert_true(krc_test_alloc_sweep(sweep_run, NULL) > 50);
    free(sweep_text);
}

/* ---- a ResourceClaim (resource.k8s.io/v1) ------------------------------ */

#define CLAIM_FIXTURE KRC_FIXTURES "/k8s-1.35/resourceclaim-gpu.json"

static int parse_claim_text(const char *json, size_t n, struct krc_report *r, size_t i,
                            struct krc_error *err)
{
    char *copy = malloc(n ? n : 1);
    int rc;

    assert_non_null(copy);
    memcpy(copy, json, n);
    rc = krc_kube_parse_resource_claim(copy, n, r, i, err);
    free(copy);
    return rc;
}

/* The claim pod-restart-fields.json names, read into its claim status:
 * allocation results and the device's conditions from status.devices. */
static void test_claim_135(void **state)
{
    struct krc_report r;
    struct krc_error err;
    size_t len = 0;
    char *text = krc_test_read_file(CLAIM_FIXTURE, &len);
    const struct krc_report_claim_device *d;
    size_t notes;

    (void)state;
    assert_non_null(text);
    parse_file(FIXTURE_135, &r);
    notes = r.n_notes;
    assert_int_equal(r.n_claim_statuses, 1);
    assert_false(r.claim_statuses[0].fetched);
    krc_error_clear(&err);
    assert_int_equal(parse_claim_text(text, len, &r, 0, &err), 0);
    assert_true(r.claim_statuses[0].fetched);
    assert_true(r.claim_statuses[0].allocated);
    assert_int_equal(r.claim_statuses[0].n_devices, 1);
    assert_int_equal(r.claim_statuses[0].devices_omitted, 0);
    d = &r.claim_statuses[0].devices[0];
    assert_string_equal(d->request, "gpu");
    assert_string_equal(d->driver, "gpu.example.com");
    assert_string_equal(d->pool, "gpu-node-7");
    assert_string_equal(d->device, "gpu-3");
    assert_true(d->has_status);
    assert_int_equal(d->n_conditions, 1);
    assert_string_equal(d->conditions[0].type, "Ready");
    assert_string_equal(d->conditions[0].status, "False");
    assert_string_equal(d->conditions[0].reason, "DeviceLost");
    assert_string_equal(d->conditions[0].message, "XID 79: GPU has fallen off the bus");
    assert_int_equal(r.n_notes, notes);
    /* read again: replaced, not appended */
    assert_int_equal(parse_claim_text(text, len, &r, 0, &err), 0);
    assert_int_equal(r.claim_statuses[0].n_devices, 1);
    /* a claim status that is not there, and documents that are not claims */
    assert_int_equal(parse_claim_text(text, len, &r, 1, &err), KRC_EINVAL);
    assert_int_equal(parse_claim_text("{\"kind\":\"Pod\"}", 14, &r, 0, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "not a ResourceClaim"));
    assert_int_equal(parse_claim_text("[1]", 3, &r, 0, &err), KRC_EINVAL);
    assert_int_equal(parse_claim_text("{\"kind\":", 8, &r, 0, &err), KRC_EPARSE);
    /* a failed read leaves what was read before */
    assert_int_equal(r.claim_statuses[0].n_devices, 1);
    krc_report_cleanup(&r);
    free(text);
}

/* Not allocated yet, devices without a status, a status for a device not
 * allocated, wrong types (a note naming the claim and the field), caps. */
static void test_claim_shapes(void **state)
{
    struct krc_report r;
    struct krc_error err;
    struct krc_buf b;
    const char *unalloc = "{\"kind\":\"ResourceClaim\",\"status\":{}}";
    const char *wrong =
        "{\"kind\":\"ResourceClaim\",\"status\":{\"allocation\":{\"devices\":{\"results\":"
        "[{\"request\":\"gpu\",\"driver\":7,\"pool\":\"p\",\"device\":\"d\"},\"x\"]}},"
        "\"devices\":[{\"driver\":\"other\",\"pool\":\"p\",\"device\":\"d\","
        "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]},5,"
        "{\"pool\":\"p\",\"device\":\"d\",\"conditions\":{}}]}}";
    size_t notes;

    (void)state;
    parse_file(FIXTURE_135, &r);
    notes = r.n_notes;
    krc_error_clear(&err);
    assert_int_equal(parse_claim_text(unalloc, strlen(unalloc), &r, 0, &err), 0);
    assert_true(r.claim_statuses[0].fetched);
    assert_false(r.claim_statuses[0].allocated);
    assert_int_equal(r.claim_statuses[0].n_devices, 0);
    assert_int_equal(r.n_notes, notes);

    assert_int_equal(parse_claim_text(wrong, strlen(wrong), &r, 0, &err), 0);
    assert_true(r.claim_statuses[0].allocated);
    assert_int_equal(r.claim_statuses[0].n_devices, 1);
    assert_null(r.claim_statuses[0].devices[0].driver); /* 7: left out */
    assert_string_equal(r.claim_statuses[0].devices[0].device, "d");
    /* "other" is another driver's device; the entry without a driver is this
     * one (driver left out on both sides), its conditions of the wrong type */
    assert_true(r.claim_statuses[0].devices[0].has_status);
    assert_int_equal(r.claim_statuses[0].devices[0].n_conditions, 0);
    assert_int_equal(r.n_notes, notes + 4);
    assert_string_equal(r.notes[notes], "ResourceClaim trainer-0-gpu-x7k2p "
                                        "status.allocation.devices.results[0].driver: expected "
                                        "a string, got a number; left out");
    assert_string_equal(r.notes[notes + 1], "ResourceClaim trainer-0-gpu-x7k2p "
                                            "status.allocation.devices.results[1]: expected an "
                                            "object, got a string; left out");
    assert_string_equal(r.notes[notes + 2], "ResourceClaim trainer-0-gpu-x7k2p status.devices[1]: "
                                            "expected an object, got a number; left out");
    assert_string_equal(r.notes[notes + 3], "ResourceClaim trainer-0-gpu-x7k2p "
                                            "status.devices[2].conditions: expected an array, "
                                            "got an object; left out");
    krc_report_cleanup(&r);

    /* caps: 40 results, 12 conditions */
    parse_file(FIXTURE_135, &r);
    krc_buf_init(&b, 1 << 20);
    assert_int_equal(krc_buf_append_str(&b,
                                        "{\"kind\":\"ResourceClaim\",\"status\":{\"allocation\":"
                                        "{\"devices\":{\"results\":["),
                     0);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(appendf(&b,
                                 "%s{\"request\":\"gpu\",\"driver\":\"g\",\"pool\":\"p\","
                                 "\"device\":\"d%d\"}",
                                 i ? "," : "", i),
                         0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}},\"devices\":[{\"driver\":\"g\",\"pool\":\"p\","
                                            "\"device\":\"d0\",\"conditions\":["),
                     0);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(appendf(&b, "%s{\"type\":\"T%d\",\"status\":\"True\"}", i ? "," : "", i),
                         0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}]}}"), 0);
    assert_int_equal(parse_claim_text(b.data, b.len, &r, 0, &err), 0);
    assert_int_equal(r.claim_statuses[0].n_devices, KRC_REPORT_CLAIM_DEVICES_MAX);
    assert_int_equal(r.claim_statuses[0].devices_omitted, 40 - KRC_REPORT_CLAIM_DEVICES_MAX);
    assert_int_equal(r.claim_statuses[0].devices[0].n_conditions, KRC_REPORT_CLAIM_CONDS_MAX);
    assert_int_equal(r.claim_statuses[0].devices[0].conditions_omitted,
                     12 - KRC_REPORT_CLAIM_CONDS_MAX);
    krc_buf_cleanup(&b);
    krc_report_cleanup(&r);
}

static char *claim_text;
static size_t claim_len;

static long claim_sweep_run(void *ud, long n)
{
    struct krc_report *r = ud;
    struct krc_error err;
    long used;
    int rc;

    krc_mem_fail_after(n);
    rc = parse_claim_text(claim_text, claim_len, r, 0, &err);
    used = krc_mem_fail_after(-1);
    assert_true(rc == 0 || rc == KRC_ENOMEM);
    if (rc != 0) {
        assert_int_equal(r->claim_statuses[0].n_devices, 0);
    }
    return used;
}

static void test_claim_alloc_failures(void **state)
{
    struct krc_report r;

    (void)state;
    parse_file(FIXTURE_135, &r);
    claim_text = krc_test_read_file(CLAIM_FIXTURE, &claim_len);
    assert_non_null(claim_text);
    assert_true(krc_test_alloc_sweep(claim_sweep_run, &r) > 5);
    free(claim_text);
    krc_report_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_135),
        cmocka_unit_test(test_fields_absent_128),
        cmocka_unit_test(test_fields_oversize),
        cmocka_unit_test(test_fields_unknown_and_wrong_types),
        cmocka_unit_test(test_fields_reparse),
        cmocka_unit_test(test_fields_alloc_failures),
        cmocka_unit_test(test_claim_135),
        cmocka_unit_test(test_claim_shapes),
        cmocka_unit_test(test_claim_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
