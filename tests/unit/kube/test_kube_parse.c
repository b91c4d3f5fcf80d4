/* kube_parse: Pod / events / Node JSON -> struct krc_report, and the
 * errors for input that is not what it claims to be. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/mem.h"
#include "krc/model/report.h"

static int parse_pod(const char *json, struct krc_report *r, struct krc_error *err)
{
    /* copy without a NUL so that ASan catches reads past `len` */
    size_t n = strlen(json);
    char *copy = malloc(n ? n : 1);
    int rc;

    assert_non_null(copy);
    memcpy(copy, json, n);
    rc = krc_kube_parse_pod(copy, n, r, err);
    free(copy);
    return rc;
}

static int parse_events(const char *json, struct krc_report *r, struct krc_error *err)
{
    size_t n = strlen(json);
    char *copy = malloc(n ? n : 1);
    int rc;

    assert_non_null(copy);
    memcpy(copy, json, n);
    rc = krc_kube_parse_events(copy, n, r, err);
    free(copy);
    return rc;
}

static const char good_pod[] =
    "{\n"
    "    \"apiVersion\": \"v1\",\n"
    "    \"kind\": \"Pod\",\n"
    "    \"metadata\": {\n"
    "        \"annotations\": {\"alert-slack-channel\": \"#ml-alerts\"},\n"
    "        \"creationTimestamp\": \"2026-07-30T07:00:00Z\",\n"
    "        \"labels\": {\"app\": \"trainer\"},\n"
    "        \"name\": \"trainer-0\",\n"
    "        \"namespace\": \"ml\",\n"
    "        \"ownerReferences\": [{\"kind\": \"Workload\", \"name\": \"w\"},\n"
    "            {\"kind\": \"StatefulSet\", \"name\": \"trainer\", \"controller\": true}],\n"
    "        \"uid\": \"0c9e6b55\"\n"
    "    },\n"
    "    \"spec\": {\n"
    "        \"nodeName\": \"gpu-node-3\", \"restartPolicy\": \"Always\",\n"
    "        \"terminationGracePeriodSeconds\": 45,\n"
    "        \"initContainers\": [{\"name\": \"log-shipper\", \"image\": \"fb:3\",\n"
    "                              \"restartPolicy\": \"Always\"}],\n"
    "        \"containers\": [{\"name\": \"trainer\", \"image\": \"t:1\",\n"
    "            \"livenessProbe\": {\"exec\": {\"command\": [\"true\"]}},\n"
    "            \"startupProbe\": {\"exec\": {\"command\": [\"true\"]}},\n"
    "            \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"2\", \"memory\": \"16Gi\"},\n"
    "                          \"requests\": {\"cpu\": \"4\", \"nvidia.com/gpu\": \"2\"}}}]\n"
    "    },\n"
    "    \"status\": {\n"
    "        \"phase\": \"Running\",\n"
    "        \"initContainerStatuses\": [{\"name\": \"log-shipper\", \"ready\": true,\n"
    "            \"restartCount\": 0, \"image\": \"fb:3\", \"imageID\": \"\",\n"
    "            \"state\": {\"running\": {\"startedAt\": \"2026-07-30T07:00:03Z\"}},\n"
    "            \"lastState\": {}}],\n"
    "        \"containerStatuses\": [{\"name\": \"trainer\", \"ready\": false,\n"
    "            \"restartCount\": 5, \"image\": \"t:1\", \"imageID\": \"\",\n"
    "            \"state\": {\"waiting\": {\"reason\": \"CrashLoopBackOff\",\n"
    "                                    \"message\": \"back-off 2m40s\"}},\n"
    "            \"lastState\": {\"terminated\": {\"exitCode\": 137, \"reason\": \"OOMKilled\",\n"
    "                \"startedAt\": \"2026-07-30T07:41:10Z\",\n"
    "                \"finishedAt\": \"2026-07-30T07:43:52Z\"}}}]\n"
    "    }\n"
    "}\n";

static void test_pod_fields(void **state)
{
    struct krc_report r;
    struct krc_error err;
    const struct krc_report_container *c;

    (void)state;
    krc_report_init(&r);
    assert_int_equal(parse_pod(good_pod, &r, &err), 0);
    assert_string_equal(r.namespace, "ml");
    assert_string_equal(r.name, "trainer-0");
    assert_string_equal(r.uid, "0c9e6b55");
    assert_string_equal(r.node_name, "gpu-node-3");
    assert_string_equal(r.owner_kind, "StatefulSet"); /* the controller reference */
    assert_string_equal(r.owner_name, "trainer");
    assert_string_equal(r.restart_policy, "Always");
    assert_string_equal(r.slack_channel, "#ml-alerts");
    assert_string_equal(krc_kv_list_get(&r.labels, "app"), "trainer");
    assert_int_equal(r.grace_period, 45);
    assert_int_equal(r.created_at, 1785394800);
    assert_int_equal(r.n_containers, 2);

    c = krc_report_container_get(&r, "log-shipper", -1);
    assert_non_null(c);
    assert_true(c->is_init);
    assert_true(c->is_sidecar);
    assert_int_equal(c->state, KRC_REPORT_STATE_RUNNING);
    assert_false(c->last.present);

    c = krc_report_container_get(&r, "trainer", 0);
    assert_non_null(c);
    assert_false(c->is_init);
    assert_true(c->has_status);
    assert_true(c->has_liveness);
    assert_false(c->has_readiness);
    assert_true(c->has_startup);
    assert_int_equal(c->restart_count, 5);
    assert_int_equal(c->state, KRC_REPORT_STATE_WAITING);
    assert_string_equal(c->state_reason, "CrashLoopBackOff");
    assert_true(c->last.present);
    assert_int_equal(c->last.exit_code, 137);
    assert_string_equal(c->last.reason, "OOMKilled");
    assert_int_equal(c->last.finished_at - c->last.started_at, 162);
    assert_string_equal(krc_kv_list_get(&c->limits, "memory"), "16Gi");
    assert_int_equal(krc_report_container_gpus(c), 2);
    assert_int_equal(krc_report_gpu_count(&r), 2);
    krc_report_cleanup(&r);
}

static void test_not_json(void **state)
{
    struct krc_report r;
    struct krc_error err;

    (void)state;
    krc_report_init(&r);
    assert_int_equal(parse_pod("{\n  \"kind\": \"Pod\",\n  \"metadata\": {,\n}", &r, &err),
                     KRC_EPARSE);
    assert_non_null(strstr(err.msg, "not JSON at line 3"));
    assert_null(r.name);

    assert_int_equal(parse_pod("", &r, &err), KRC_EPARSE);
    assert_non_null(strstr(err.msg, "empty"));

    assert_int_equal(parse_pod("{\"kind\": \"Pod\"", &r, &err), KRC_EPARSE);
    assert_non_null(strstr(err.msg, "end of input"));

    assert_int_equal(parse_pod("{\"kind\": \"Pod\", \"metadata\": {\"name\": \"x\"}} {}", &r, &err),
                     KRC_EPARSE);
    assert_non_null(strstr(err.msg, "trailing data"));

    assert_int_equal(parse_events("\n\n  [1, 2,, 3]", &r, &err), KRC_EPARSE);
    assert_non_null(strstr(err.msg, "not JSON at line 3, column"));
    krc_report_cleanup(&r);
}

static void test_wrong_kind(void **state)
{
    struct krc_report r;
    struct krc_error err;
    static const char node[] = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                               "\"n1\"},\"status\":{}}";

    (void)state;
    krc_report_init(&r);
    assert_int_equal(parse_pod(node, &r, &err), KRC_EINVAL);
    assert_string_equal(err.msg, "not a Pod (kind \"Node\")");

    assert_int_equal(parse_pod("[1,2]", &r, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "not a Pod (the document is an array)"));

    assert_int_equal(parse_pod("{\"kind\":\"List\",\"items\":[]}", &r, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "List of 0 items"));

    assert_int_equal(krc_kube_parse_node(good_pod, strlen(good_pod), &r, &err), KRC_EINVAL);
    assert_string_equal(err.msg, "not a Node (kind \"Pod\")");

    assert_int_equal(parse_events(good_pod, &r, &err), KRC_EINVAL);
    assert_string_equal(err.msg, "not an event list (kind \"Pod\")");

    assert_int_equal(parse_events("{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\"}]}", &r, &err),
                     KRC_EINVAL);
    assert_non_null(strstr(err.msg, "items[0]: not an Event (kind \"Pod\")"));
    krc_report_cleanup(&r);
}

static void test_pod_in_a_list(void **state)
{
    struct krc_report r;
    struct krc_error err;
    char *json = malloc(strlen(good_pod) + 64);

    (void)state;
    assert_non_null(json);
    memcpy(json, "{\"kind\":\"List\",\"items\":[", 24);
    memcpy(json + 24, good_pod, strlen(good_pod));
    memcpy(json + 24 + strlen(good_pod), "]}", 3);
    krc_report_init(&r);
    assert_int_equal(parse_pod(json, &r, &err), 0);
    assert_string_equal(r.name, "trainer-0");
    krc_report_cleanup(&r);
    free(json);
}

static void test_field_errors(void **state)
{
    struct krc_report r;
    struct krc_error err;

    (void)state;
    krc_report_init(&r);
    assert_int_equal(
        parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"status\":{"
                  "\"containerStatuses\":[{\"name\":\"a\"},{\"name\":\"b\",\"restartCount\":\"3\"}"
                  "]}}",
                  &r, &err),
        KRC_EINVAL);
    assert_string_equal(
        err.msg, "status.containerStatuses[1].restartCount: expected a number, got a string");
    assert_int_equal(r.n_containers, 0); /* pod part cleared on error */

    assert_int_equal(
        parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"status\":{"
                  "\"containerStatuses\":[{\"name\":\"a\",\"lastState\":{\"terminated\":{"
                  "\"exitCode\":1,\"finishedAt\":\"yesterday\"}}}]}}",
                  &r, &err),
        KRC_EINVAL);
    assert_non_null(strstr(err.msg,
                           "status.containerStatuses[0].lastState.terminated.finishedAt: bad "
                           "timestamp \"yesterday\""));

    assert_int_equal(
        parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"status\":{"
                  "\"containerStatuses\":[{\"name\":\"a\",\"lastState\":{\"terminated\":{"
                  "\"reason\":\"Error\"}}}]}}",
                  &r, &err),
        0);
    /* a pasted status without exitCode is kept, marked as such (issue 11) */
    assert_int_equal(r.n_containers, 1);
    assert_true(r.containers[0].last.present);
    assert_true(r.containers[0].last.exit_code_missing);
    assert_string_equal(r.containers[0].last.reason, "Error");
    krc_report_cleanup(&r);
    krc_report_init(&r);

    /* probes: defaults applied, explicit values kept, a bad type named */
    assert_int_equal(
        parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{"
                  "\"name\":\"a\",\"livenessProbe\":{\"exec\":{\"command\":[\"true\"]},"
                  "\"periodSeconds\":5,\"failureThreshold\":6,\"terminationGracePeriodSeconds\":"
                  "7},\"startupProbe\":{\"httpGet\":{\"port\":80}}}]}}",
                  &r, &err),
        0);
    assert_true(r.containers[0].has_spec);
    assert_true(r.containers[0].has_liveness);
    assert_string_equal(r.containers[0].liveness.handler, "exec");
    assert_int_equal(r.containers[0].liveness.period, 5);
    assert_int_equal(r.containers[0].liveness.failure_threshold, 6);
    assert_int_equal(r.containers[0].liveness.initial_delay, 0);
    assert_int_equal(r.containers[0].liveness.grace_period, 7);
    assert_true(r.containers[0].has_startup);
    assert_string_equal(r.containers[0].startup.handler, "httpGet");
    assert_int_equal(r.containers[0].startup.period, 10);
    assert_int_equal(r.containers[0].startup.timeout, 1);
    assert_int_equal(r.containers[0].startup.failure_threshold, 3);
    assert_int_equal(r.containers[0].startup.grace_period, -1);
    assert_false(r.containers[0].has_readiness);
    assert_int_equal(
        parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{"
                  "\"name\":\"a\",\"livenessProbe\":{\"periodSeconds\":\"5\"}}]}}",
                  &r, &err),
        KRC_EINVAL);
    assert_string_equal(err.msg,
                        "spec.containers[0].livenessProbe.periodSeconds: expected a number, got a "
                        "string");

    /* a pasted partial Pod: no name is no error, nothing at all is */
    assert_int_equal(parse_pod("{\"kind\":\"Pod\",\"metadata\":{}}", &r, &err), 0);
    assert_null(r.name);
    assert_int_equal(parse_pod("{\"kind\":\"Pod\"}", &r, &err), KRC_EINVAL);
    assert_string_equal(err.msg, "not a Pod: no metadata, spec or status");

    /* a name, when given, must be a non-empty string */
    assert_int_equal(parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{"
                               "\"containers\":[{\"name\":\"\",\"image\":\"x\"}]}}",
                               &r, &err),
                     KRC_EINVAL);
    assert_non_null(strstr(err.msg, "spec.containers[0].name"));
    assert_int_equal(parse_pod("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"status\":{"
                               "\"containerStatuses\":[{\"name\":7}]}}",
                               &r, &err),
                     KRC_EINVAL);
    assert_non_null(strstr(err.msg, "status.containerStatuses[0].name"));

    /* unnamed entries: the only spec container of its kind names the only
     * status entry; otherwise both are "(unnamed)" by position */
    assert_int_equal(parse_pod("{\"kind\":\"Pod\",\"metadata\":{},\"spec\":{\"containers\":["
                               "{\"name\":\"app\"}]},\"status\":{\"containerStatuses\":["
                               "{\"restartCount\":3}]}}",
                               &r, &err),
                     0);
    assert_int_equal(r.n_containers, 1);
    assert_string_equal(r.containers[0].name, "app");
    assert_int_equal(r.containers[0].restart_count, 3);
    assert_true(r.containers[0].restart_count_known);
    assert_int_equal(
        parse_pod("{\"kind\":\"Pod\",\"metadata\":{},\"spec\":{\"containers\":["
                  "{\"image\":\"a\"},{\"image\":\"b\"}]},\"status\":{"
                  "\"containerStatuses\":[{\"restartCount\":1},{\"restartCount\":2}]}}",
                  &r, &err),
        0);
    assert_int_equal(r.n_containers, 2);
    assert_string_equal(r.containers[0].name, "(unnamed)");
    assert_string_equal(r.containers[0].image, "a");
    assert_int_equal(r.containers[0].restart_count, 1);
    assert_string_equal(r.containers[1].name, "(unnamed 2)");
    assert_int_equal(r.containers[1].restart_count, 2);
    krc_report_cleanup(&r);
}

static void test_events_shapes(void **state)
{
    struct krc_report r;
    struct krc_error err;
    /* the API server's EventList: compact, items without kind, managedFields */
    static const char event_list[] =
        "{\"kind\":\"EventList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},"
        "\"items\":[{\"metadata\":{\"name\":\"p.1\",\"namespace\":\"ns\",\"creationTimestamp\":"
        "\"2025-02-11T07:31:16Z\",\"managedFields\":[{\"manager\":\"kubelet\"}]},"
        "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\","
        "\"fieldPath\":\"spec.containers{c}\"},\"reason\":\"BackOff\",\"message\":\"Back-off\","
        "\"source\":{\"component\":\"kubelet\",\"host\":\"n\"},\"firstTimestamp\":"
        "\"2025-02-11T07:32:03Z\",\"lastTimestamp\":\"2025-02-11T07:42:05Z\",\"count\":42,"
        "\"type\":\"Warning\",\"eventTime\":null,\"reportingComponent\":\"kubelet\","
        "\"reportingInstance\":\"n\"},"
        /* scheduler-style: null timestamps, eventTime + series */
        "{\"metadata\":{\"name\":\"p.2\",\"creationTimestamp\":\"2025-02-11T06:56:45Z\"},"
        "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"redis-0\",\"uid\":\"r\"},\"reason\":"
        "\"FailedScheduling\",\"message\":\"0/6 nodes\",\"source\":{},\"firstTimestamp\":null,"
        "\"lastTimestamp\":null,\"type\":\"Warning\",\"eventTime\":\"2025-02-11T06:56:45.175999Z\","
        "\"series\":{\"count\":17,\"lastObservedTime\":\"2025-02-11T07:46:11.175999Z\"},"
        "\"reportingComponent\":\"default-scheduler\",\"reportingInstance\":\"s\"}]}";
    /* events.k8s.io/v1 names in a bare array */
    static const char new_api[] =
        "[{\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"u\",\"fieldPath\":"
        "\"spec.initContainers{init}\"},\"note\":\"Started container init\",\"reason\":"
        "\"Started\",\"reportingController\":\"kubelet\",\"deprecatedCount\":3,"
        "\"deprecatedFirstTimestamp\":\"2025-01-01T00:00:00Z\",\"deprecatedLastTimestamp\":"
        "\"2025-01-01T00:10:00Z\",\"eventTime\":null}]";

    (void)state;
    krc_report_init(&r);
    assert_int_equal(parse_events(event_list, &r, &err), 0);
    assert_int_equal(r.n_events, 2);
    assert_string_equal(r.events[0].field_path, "spec.containers{c}");
    assert_int_equal(r.events[0].count, 42);
    assert_int_equal(r.events[0].last_timestamp - r.events[0].first_timestamp, 602);
    assert_string_equal(r.events[0].source_component, "kubelet");
    assert_null(r.events[1].field_path);
    assert_int_equal(r.events[1].count, 17);
    /* lastTimestamp null -> series.lastObservedTime */
    assert_int_equal(r.events[1].last_timestamp - r.events[1].first_timestamp, 49 * 60 + 26);
    assert_string_equal(r.events[1].source_component, "default-scheduler");

    assert_int_equal(parse_events(new_api, &r, &err), 0);
    assert_int_equal(r.n_events, 3);
    assert_string_equal(r.events[2].message, "Started container init");
    assert_string_equal(r.events[2].field_path, "spec.initContainers{init}");
    assert_int_equal(r.events[2].count, 3);
    assert_int_equal(r.events[2].last_timestamp - r.events[2].first_timestamp, 600);

    /* a failing parse leaves the events as they were */
    assert_int_equal(
        parse_events("[{\"involvedObject\":{\"uid\":\"u\"},\"count\":\"x\"}]", &r, &err),
        KRC_EINVAL);
    assert_non_null(strstr(err.msg, "items[0].count: expected a number"));
    assert_int_equal(r.n_events, 3);

    assert_int_equal(parse_events("[{\"reason\":\"x\"}]", &r, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "involvedObject is missing"));

    /* an empty List */
    assert_int_equal(
        parse_events("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[]}", &r, &err), 0);
    assert_int_equal(r.n_events, 3);

    /* krc's own RestartDiagnosed Event (core/v1 view: reportingComponent) is not evidence of
     * a later restart: left out; the kubelet's beside it is kept */
    assert_int_equal(
        parse_events("[{\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"u\"},"
                     "\"reason\":\"RestartDiagnosed\",\"type\":\"Warning\",\"message\":"
                     "\"oom_killed (high confidence): OOMKilled\",\"source\":{},"
                     "\"reportingComponent\":\"krc.io/kube-restart-collector\"},"
                     "{\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"u\"},"
                     "\"reason\":\"BackOff\",\"type\":\"Warning\",\"message\":\"Back-off\","
                     "\"source\":{\"component\":\"kubelet\"}}]",
                     &r, &err),
        0);
    assert_int_equal(r.n_events, 4);
    assert_string_equal(r.events[3].reason, "BackOff");
    /* ... also as a single Event document (kubectl get event NAME -o json) */
    assert_int_equal(
        parse_events("{\"kind\":\"Event\",\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\","
                     "\"uid\":\"u\"},\"reason\":\"RestartDiagnosed\",\"type\":\"Warning\","
                     "\"message\":\"oom_killed (high confidence): OOMKilled\",\"source\":{},"
                     "\"reportingComponent\":\"krc.io/kube-restart-collector\"}",
                     &r, &err),
        0);
    assert_int_equal(r.n_events, 4);
    krc_report_cleanup(&r);
}

static void test_retain_pod_events(void **state)
{
    struct krc_report r;
    struct krc_error err;
    static const char pod[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
                              "\"uid\":\"new\"},\"spec\":{\"nodeName\":\"n1\"}}";
    static const char events[] =
        "[{\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"old\"},\"reason\":\"a\"},"
        "{\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"new\"},\"reason\":\"b\"},"
        "{\"involvedObject\":{\"kind\":\"Node\",\"name\":\"n1\",\"uid\":\"n1\"},\"reason\":\"c\"},"
        "{\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"q\",\"uid\":\"other\"},\"reason\":\"d\"}"
        "]";

    (void)state;
    krc_report_init(&r);
    assert_int_equal(parse_pod(pod, &r, &err), 0);
    assert_int_equal(parse_events(events, &r, &err), 0);
    krc_report_retain_pod_events(&r);
    assert_int_equal(r.n_events, 2);
    assert_string_equal(r.events[0].reason, "b");
    assert_string_equal(r.events[1].reason, "c");
    krc_report_cleanup(&r);
}

static void test_node(void **state)
{
    struct krc_report r;
    struct krc_error err;
    static const char node[] =
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"gpu-1\"},\"spec\":{"
        "\"unschedulable\":true},\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"8\",\"cpu\":"
        "\"96\"},\"allocatable\":{\"nvidia.com/gpu\":\"7\"},\"conditions\":[{\"type\":\"Ready\","
        "\"status\":\"True\",\"reason\":\"KubeletReady\"}],\"nodeInfo\":{\"kubeletVersion\":"
        "\"v1.31.2\"}}}";

    (void)state;
    krc_report_init(&r);
    assert_int_equal(krc_kube_parse_node(node, sizeof(node) - 1, &r, &err), 0);
    assert_true(r.node.present);
    assert_string_equal(r.node.name, "gpu-1");
    assert_true(r.node.unschedulable);
    assert_int_equal(r.node.n_conditions, 1);
    assert_string_equal(r.node.conditions[0].type, "Ready");
    assert_string_equal(krc_kv_list_get(&r.node.capacity, "nvidia.com/gpu"), "8");
    assert_string_equal(krc_kv_list_get(&r.node.allocatable, "nvidia.com/gpu"), "7");
    assert_string_equal(r.node.kubelet_version, "v1.31.2");
    /* a bad node keeps the previous one */
    assert_int_equal(krc_kube_parse_node("{\"kind\":\"Node\",\"metadata\":{}}", 30, &r, &err),
                     KRC_EINVAL);
    assert_string_equal(r.node.name, "gpu-1");
    krc_report_cleanup(&r);
}

static void test_allocation_failures(void **state)
{
    long n;

    (void)state;
    for (n = 0; n < 5000; n++) {
        struct krc_report r;
        int rc;
        krc_report_init(&r);
        krc_mem_fail_after(n);
        rc = krc_kube_parse_pod(good_pod, strlen(good_pod), &r, NULL);
        krc_mem_fail_after(-1);
        krc_report_cleanup(&r);
        if (rc == 0) {
            break;
        }
        assert_int_equal(rc, KRC_ENOMEM);
    }
    assert_true(n < 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_fields),          cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_wrong_kind),          cmocka_unit_test(test_pod_in_a_list),
        cmocka_unit_test(test_field_errors),        cmocka_unit_test(test_events_shapes),
        cmocka_unit_test(test_retain_pod_events),   cmocka_unit_test(test_node),
        cmocka_unit_test(test_allocation_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
