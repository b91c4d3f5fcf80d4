/* The report JSON (krc explain --format json, krc history show, MCP, the
 * signed webhook) and the Kubernetes 1.33+ fields
 * (docs/design/kubernetes-1.33-fields.md):
 *  - a 1.28-shaped pod gives the document krc built before it read them,
 *    byte for byte (tests/fixtures/k8s-1.35/report-1.28: made by the code of
 *    main before the change);
 *  - a 1.35-shaped pod (tests/fixtures/k8s-1.35/pod-restart-fields.json,
 *    built from the API reference: see its README) gives every field under
 *    its name, and only the restart-related conditions;
 *  - capped lists say how many entries were left out;
 *  - condition and device health messages are redacted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc_test.h"

/* The pod of a fixture: a watch event's object, or the file itself. */
static void load_pod(const char *path, struct krc_report *r)
{
    struct krc_error err;
    size_t len = 0;
    char *text = krc_test_read_file(path, &len);
    cJSON *root;
    const cJSON *obj;
    char *pod;

    assert_non_null(text);
    root = cJSON_Parse(text);
    assert_non_null(root);
    obj = cJSON_GetObjectItemCaseSensitive(root, "object");
    pod = cJSON_PrintUnformatted(obj != NULL ? obj : root);
    assert_non_null(pod);
    krc_report_init(r);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(pod, strlen(pod), r, &err) != 0) {
        fail_msg("%s: %s", path, err.msg);
    }
    cJSON_free(pod);
    cJSON_Delete(root);
    free(text);
}

static char *report_json(const struct krc_report *r)
{
    char *json = NULL;
    struct krc_error err;

    krc_error_clear(&err);
    if (krc_report_json_build(r, NULL, NULL, &json, &err) != 0) {
        fail_msg("report json: %s", err.msg);
    }
    return json;
}

static void test_json_128_unchanged(void **state)
{
    static const char *const names[] = {"crashloop_oom", "sidecar_restart", "pod_item"};

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[512];
        struct krc_report r;
        size_t len = 0;
        char *want;
        char *got;
        snprintf(path, sizeof(path), "%s/pods/%s.json", KRC_FIXTURES, names[i]);
        load_pod(path, &r);
        got = report_json(&r);
        snprintf(path, sizeof(path), "%s/k8s-1.35/report-1.28/%s.json", KRC_FIXTURES, names[i]);
        want = krc_test_read_file(path, &len);
        assert_non_null(want);
        /* the golden file ends with a newline */
        assert_true(len > 0 && want[len - 1] == '\n');
        want[len - 1] = '\0';
        if (strcmp(got, want) != 0) {
            fail_msg("%s: the report JSON of a 1.28 pod changed:\n got %s\nwant %s", names[i], got,
                     want);
        }
        free(want);
        krc_free(got);
        krc_report_cleanup(&r);
    }
}

static const cJSON *at(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (v == NULL) {
        fail_msg("no \"%s\" in %s", k, o != NULL && o->string != NULL ? o->string : "(item)");
    }
    return v;
}

static const char *str_at(const cJSON *o, const char *k)
{
    const cJSON *v = at(o, k);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static double num_at(const cJSON *o, const char *k)
{
    const cJSON *v = at(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const cJSON *container(const cJSON *doc, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, at(doc, "containers"))
    {
        if (strcmp(str_at(it, "name"), name) == 0) {
            return it;
        }
    }
    fail_msg("no container %s", name);
    return NULL;
}

static void test_json_135(void **state)
{
    struct krc_report r;
    char *json;
    cJSON *doc;
    const cJSON *pod;
    const cJSON *a;
    const cJSON *it;
    const cJSON *c;
    const cJSON *rule;
    const char *types[8];
    size_t n = 0;

    (void)state;
    load_pod(KRC_FIXTURES "/k8s-1.35/pod-restart-fields.json", &r);
    json = report_json(&r);
    doc = cJSON_Parse(json);
    assert_non_null(doc);
    pod = at(doc, "pod");
    assert_int_equal((int)num_at(pod, "generation"), 4);
    assert_int_equal((int)num_at(pod, "observed_generation"), 4);
    assert_string_equal(str_at(at(at(pod, "resources"), "limits"), "memory"), "32Gi");
    assert_string_equal(str_at(at(at(pod, "resources"), "requests"), "cpu"), "6");
    /* only the conditions that say why containers restarted, in pod order */
    cJSON_ArrayForEach(it, at(pod, "conditions"))
    {
        assert_true(n < 8);
        types[n++] = str_at(it, "type");
        assert_int_equal((int)num_at(it, "observed_generation"), 4);
    }
    assert_int_equal(n, 3);
    assert_string_equal(types[0], "PodReadyToStartContainers");
    assert_string_equal(types[1], "AllContainersRestarting");
    assert_string_equal(types[2], "PodResizePending");
    it = cJSON_GetArrayItem(at(pod, "conditions"), 2);
    assert_string_equal(str_at(it, "reason"), "Deferred");
    assert_string_equal(str_at(it, "last_transition"), "2026-11-20T09:10:00Z");
    a = at(pod, "resource_claim_statuses");
    assert_string_equal(str_at(cJSON_GetArrayItem(a, 0), "resource_claim_name"),
                        "trainer-0-gpu-x7k2p");
    /* the ResourceClaim was not read: no allocated, no devices */
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 0), "devices"));
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 0), "allocated"));

    c = container(doc, "trainer");
    assert_string_equal(str_at(c, "restart_policy"), "Never");
    a = at(c, "restart_policy_rules");
    assert_int_equal(cJSON_GetArraySize(a), 2);
    rule = cJSON_GetArrayItem(a, 1);
    assert_string_equal(str_at(rule, "action"), "RestartAllContainers");
    assert_string_equal(str_at(at(rule, "exit_codes"), "operator"), "In");
    assert_int_equal((int)cJSON_GetArrayItem(at(at(rule, "exit_codes"), "values"), 0)->valuedouble,
                     88);
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "restart_policy_rules_omitted"));
    it = cJSON_GetArrayItem(at(c, "resize_policy"), 1);
    assert_string_equal(str_at(it, "resource_name"), "memory");
    assert_string_equal(str_at(it, "restart_policy"), "RestartContainer");
    assert_string_equal(str_at(c, "stop_signal"), "SIGUSR1");
    assert_string_equal(str_at(at(at(c, "status_resources"), "limits"), "memory"), "12Gi");
    assert_string_equal(str_at(at(c, "limits"), "memory"), "16Gi");
    a = at(c, "allocated_resources_status");
    it = cJSON_GetArrayItem(a, 0);
    assert_string_equal(str_at(it, "name"), "nvidia.com/gpu");
    it = cJSON_GetArrayItem(at(it, "resources"), 0);
    assert_string_equal(str_at(it, "resource_id"), "GPU-5a1e0b7c-2f3d-4e8a-9b6c-0d1e2f3a4b5c");
    assert_string_equal(str_at(it, "health"), "Unhealthy");
    assert_string_equal(str_at(it, "message"), "ECC error count exceeded threshold");
    it = cJSON_GetArrayItem(at(cJSON_GetArrayItem(a, 1), "resources"), 0);
    assert_true(cJSON_IsNull(at(it, "message")));

    /* a sidecar's restartPolicy Always is is_sidecar; no new key without the field */
    c = container(doc, "log-shipper");
    assert_true(cJSON_IsTrue(at(c, "is_sidecar")));
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "restart_policy"));
    assert_string_equal(str_at(c, "stop_signal"), "SIGTERM");
    c = container(doc, "evaluator");
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "restart_policy"));
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "restart_policy_rules"));
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "status_resources"));
    assert_null(cJSON_GetObjectItemCaseSensitive(c, "allocated_resources_status"));
    cJSON_Delete(doc);
    krc_free(json);
    krc_report_cleanup(&r);
}

/* A ResourceClaim the collector read: allocated, its devices and the
 * conditions its driver reports (schema: docs/report-schema.json). */
static void test_json_claim_devices(void **state)
{
    struct krc_report r;
    struct krc_error err;
    size_t len = 0;
    char *text = krc_test_read_file(KRC_FIXTURES "/k8s-1.35/resourceclaim-gpu.json", &len);
    char *json;
    cJSON *doc;
    const cJSON *cs;
    const cJSON *dev;
    const cJSON *cond;

    (void)state;
    assert_non_null(text);
    load_pod(KRC_FIXTURES "/k8s-1.35/pod-restart-fields.json", &r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_resource_claim(text, len, &r, 0, &err), 0);
    json = report_json(&r);
    doc = cJSON_Parse(json);
    assert_non_null(doc);
    cs = cJSON_GetArrayItem(at(at(doc, "pod"), "resource_claim_statuses"), 0);
    assert_true(cJSON_IsTrue(at(cs, "allocated")));
    assert_int_equal(cJSON_GetArraySize(at(cs, "devices")), 1);
    dev = cJSON_GetArrayItem(at(cs, "devices"), 0);
    assert_string_equal(str_at(dev, "request"), "gpu");
    assert_string_equal(str_at(dev, "driver"), "gpu.example.com");
    assert_string_equal(str_at(dev, "pool"), "gpu-node-7");
    assert_string_equal(str_at(dev, "device"), "gpu-3");
    cond = cJSON_GetArrayItem(at(dev, "conditions"), 0);
    assert_string_equal(str_at(cond, "type"), "Ready");
    assert_string_equal(str_at(cond, "status"), "False");
    assert_string_equal(str_at(cond, "reason"), "DeviceLost");
    assert_string_equal(str_at(cond, "message"), "XID 79: GPU has fallen off the bus");
    cJSON_Delete(doc);
    krc_free(json);
    krc_report_cleanup(&r);
    free(text);
}

static void test_json_omitted_counts(void **state)
{
    struct krc_buf b;
    struct krc_report r;
    struct krc_error err;
    char item[128];
    char *json;
    cJSON *doc;
    const cJSON *c;

    (void)state;
    krc_buf_init(&b, 1u << 20);
    assert_int_equal(krc_buf_append_str(&b, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                                            "\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{"
                                            "\"containers\":[{\"name\":\"app\","
                                            "\"restartPolicyRules\":["),
                     0);
    for (int i = 0; i < KRC_REPORT_RULES_MAX + 2; i++) {
        snprintf(item, sizeof(item), "%s{\"action\":\"Restart\"}", i ? "," : "");
        assert_int_equal(krc_buf_append_str(&b, item), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}]},\"status\":{\"resourceClaimStatuses\":["), 0);
    for (int i = 0; i < KRC_REPORT_CLAIMS_MAX + 3; i++) {
        snprintf(item, sizeof(item), "%s{\"name\":\"c%d\"}", i ? "," : "", i);
        assert_int_equal(krc_buf_append_str(&b, item), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}}"), 0);
    krc_report_init(&r);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(b.data, b.len, &r, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    krc_buf_cleanup(&b);
    json = report_json(&r);
    doc = cJSON_Parse(json);
    assert_non_null(doc);
    c = container(doc, "app");
    assert_int_equal(cJSON_GetArraySize(at(c, "restart_policy_rules")), KRC_REPORT_RULES_MAX);
    assert_int_equal((int)num_at(c, "restart_policy_rules_omitted"), 2);
    assert_true(
        cJSON_IsNull(at(cJSON_GetArrayItem(at(c, "restart_policy_rules"), 0), "exit_codes")));
    assert_int_equal(cJSON_GetArraySize(at(at(doc, "pod"), "resource_claim_statuses")),
                     KRC_REPORT_CLAIMS_MAX);
    assert_int_equal((int)num_at(at(doc, "pod"), "resource_claim_statuses_omitted"), 3);
    cJSON_Delete(doc);
    krc_free(json);
    krc_report_cleanup(&r);
}

/* Condition and device health messages come from the cluster: redacted in
 * the report, so in every output of it. */
static void test_json_messages_redacted(void **state)
{
    static const char pod[] =
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"},"
        "\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
        "\"reason\":\"TerminationByKubelet\",\"message\":\"node shutdown; password=pw7x\"}],"
        "\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":1,"
        "\"allocatedResourcesStatus\":[{\"name\":\"nvidia.com/gpu\",\"resources\":"
        "[{\"resourceID\":\"GPU-1\",\"health\":\"Unhealthy\",\"message\":\"xid 79; "
        "token=tk7y\"}]}]}]}}";
    struct krc_report r;
    struct krc_error err;
    char *json;

    (void)state;
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
    assert_true(krc_report_redact(&r, NULL, &err) >= 2);
    assert_null(strstr(r.conditions[0].message, "pw7x"));
    assert_null(strstr(r.containers[0].resource_health[0].resources[0].message, "tk7y"));
    json = report_json(&r);
    assert_null(strstr(json, "pw7x"));
    assert_null(strstr(json, "tk7y"));
    assert_non_null(strstr(json, "\"reason\":\"TerminationByKubelet\""));
    assert_non_null(strstr(json, "node shutdown"));
    krc_free(json);
    krc_report_cleanup(&r);
}

/* A ResourceClaim device condition's message is a text of the cluster: redacted too. */
static void test_json_claim_message_redacted(void **state)
{
    static const char pod[] =
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"},"
        "\"status\":{\"resourceClaimStatuses\":[{\"name\":\"gpu\",\"resourceClaimName\":\"c\"}]}}";
    static const char claim[] =
        "{\"kind\":\"ResourceClaim\",\"status\":{\"allocation\":{\"devices\":{\"results\":"
        "[{\"request\":\"gpu\",\"driver\":\"d\",\"pool\":\"p\",\"device\":\"x\"}]}},"
        "\"devices\":[{\"driver\":\"d\",\"pool\":\"p\",\"device\":\"x\",\"conditions\":"
        "[{\"type\":\"Ready\",\"status\":\"False\",\"message\":\"lost; password=pw9q\"}]}]}}";
    struct krc_report r;
    struct krc_error err;
    char *json;

    (void)state;
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
    assert_int_equal(krc_kube_parse_resource_claim(claim, strlen(claim), &r, 0, &err), 0);
    assert_int_equal(krc_report_redact(&r, NULL, &err), 1);
    assert_null(strstr(r.claim_statuses[0].devices[0].conditions[0].message, "pw9q"));
    json = report_json(&r);
    assert_null(strstr(json, "pw9q"));
    assert_non_null(strstr(json, "lost; password="));
    krc_free(json);
    krc_report_cleanup(&r);
}

/* "what_changed" (issue 27): absent without a line; with one, the summary and the change
 * objects as given; a list that is not a JSON array is left out, never passed on as text. */
static void test_json_what_changed(void **state)
{
    static const char pod[] =
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"}}";
    static const char line[] = "Deployment n/api rolled out revision 12 at 03:52, 4 min before the "
                               "first crash: image api:1.4.2 \xe2\x86\x92 api:1.4.3";
    struct krc_report r;
    struct krc_error err;
    cJSON *root;
    const cJSON *wc;
    const cJSON *ch;
    char *json;

    (void)state;
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
    json = report_json(&r);
    assert_null(strstr(json, "what_changed"));
    krc_free(json);

    r.what_changed = krc_strdup(line);
    r.changes_json = krc_strdup("[{\"kind\":\"Deployment\",\"namespace\":\"n\",\"name\":\"api\","
                                "\"revision\":\"12\",\"items\":[\"image api:1.4.2 \xe2\x86\x92 "
                                "api:1.4.3\"],\"previous_revision\":\"11\",\"previous_ready\":3}]");
    json = report_json(&r);
    root = cJSON_Parse(json);
    assert_non_null(root);
    wc = cJSON_GetObjectItemCaseSensitive(root, "what_changed");
    assert_non_null(wc);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(wc, "summary")->valuestring, line);
    ch = cJSON_GetObjectItemCaseSensitive(wc, "changes");
    assert_true(cJSON_IsArray(ch));
    assert_int_equal(cJSON_GetArraySize(ch), 1);
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ch, 0), "previous_revision")
            ->valuestring,
        "11");
    cJSON_Delete(root);
    krc_free(json);

    krc_free(r.changes_json);
    r.changes_json = krc_strdup("{\"not\":\"a list\"}");
    json = report_json(&r);
    root = cJSON_Parse(json);
    ch = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "what_changed"),
                                          "changes");
    assert_true(cJSON_IsArray(ch));
    assert_int_equal(cJSON_GetArraySize(ch), 0);
    assert_null(strstr(json, "a list"));
    cJSON_Delete(root);
    krc_free(json);
    krc_report_cleanup(&r); /* frees both fields */
    assert_null(r.what_changed);
    assert_null(r.changes_json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_128_unchanged),
        cmocka_unit_test(test_json_135),
        cmocka_unit_test(test_json_claim_devices),
        cmocka_unit_test(test_json_omitted_counts),
        cmocka_unit_test(test_json_messages_redacted),
        cmocka_unit_test(test_json_claim_message_redacted),
        cmocka_unit_test(test_json_what_changed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
