/* input_kind: what a file given to `krc explain FILE...` holds, told from
 * its content: Kubernetes objects in JSON and YAML by kind or by fields,
 * kubectl describe pod / node text, event tables, logs, and what is
 * refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "krc/explain/input_kind.h"
#include "krc/util/error.h"

/* Classify a copy without a NUL after it (ASan catches reads past len). */
static int classify(const char *text, size_t n, enum krc_input_kind *kind, struct krc_error *err)
{
    char *copy = malloc(n ? n : 1);
    int rc;

    assert_non_null(copy);
    memcpy(copy, text, n);
    krc_error_clear(err);
    rc = krc_input_classify(copy, n, 1u << 20, kind, err);
    free(copy);
    return rc;
}

static void expect_kind(const char *text, enum krc_input_kind want)
{
    struct krc_error err;
    enum krc_input_kind kind;
    int rc = classify(text, strlen(text), &kind, &err);

    if (rc != 0 || kind != want) {
        fail_msg("expected %s, got rc %d kind %s (%s) for:\n%s", krc_input_kind_name(want), rc,
                 krc_input_kind_name(kind), err.msg, text);
    }
}

static void expect_refused(const char *text, size_t n, const char *msg)
{
    struct krc_error err;
    enum krc_input_kind kind;

    n = n == (size_t)-1 ? strlen(text) : n;
    assert_int_equal(classify(text, n, &kind, &err), KRC_EINVAL);
    if (strstr(err.msg, msg) == NULL) {
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg);
    }
}

static const char DESCRIBE_POD[] =
    "Name:             web-7d9c\n"
    "Namespace:        shop\n"
    "Node:             node-3/10.0.0.7\n"
    "Status:           Running\n"
    "Containers:\n"
    "  app:\n"
    "    Image:          shop/web:1.4\n"
    "    State:          Running\n"
    "      Started:      Wed, 02 Dec 2026 16:50:01 +0000\n"
    "    Last State:     Terminated\n"
    "      Reason:       OOMKilled\n"
    "      Exit Code:    137\n"
    "    Ready:          True\n"
    "    Restart Count:  3\n"
    "Events:\n"
    "  Type     Reason   Age   From     Message\n"
    "  ----     ------   ----  ----     -------\n"
    "  Warning  BackOff  2s    kubelet  Back-off restarting failed container app\n";

static const char DESCRIBE_EVENTS[] =
    "Events:\n"
    "  Type     Reason     Age                From     Message\n"
    "  ----     ------     ----               ----     -------\n"
    "  Warning  Unhealthy  12s (x3 over 32s)  kubelet  Liveness probe failed: HTTP probe "
    "failed with statuscode: 500\n"
    "  Normal   Killing    12s                kubelet  Container app failed liveness probe, "
    "will be restarted\n";

static const char GET_EVENTS[] =
    "LAST SEEN   TYPE      REASON      OBJECT             MESSAGE\n"
    "2m          Warning   BackOff     pod/web-7d9c       Back-off restarting failed container\n"
    "5m          Normal    Pulled      pod/web-7d9c       Container image already present\n";

static const char DESCRIBE_NODE[] =
    "Name:               node-3\n"
    "Roles:              <none>\n"
    "Taints:             node.kubernetes.io/memory-pressure:NoSchedule\n"
    "Unschedulable:      false\n"
    "Conditions:\n"
    "  Type             Status  LastHeartbeatTime                 LastTransitionTime           "
    "     Reason                       Message\n"
    "  ----             ------  -----------------                 ------------------           "
    "     ------                       -------\n"
    "  MemoryPressure   True    Wed, 02 Dec 2026 16:49:58 +0000   Wed, 02 Dec 2026 16:45:12 "
    "+0000   KubeletHasInsufficientMemory kubelet has insufficient memory available\n"
    "Events:\n"
    "  Type     Reason                Age   From     Message\n"
    "  ----     ------                ----  ----     -------\n"
    "  Warning  EvictionThresholdMet  5m    kubelet  Attempting to reclaim memory\n";

static void test_kubernetes_objects(void **state)
{
    (void)state;
    /* by kind, JSON and YAML */
    expect_kind("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}",
                KRC_INPUT_POD);
    expect_kind("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n", KRC_INPUT_POD);
    expect_kind("\xEF\xBB\xBF{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}", KRC_INPUT_NODE);
    expect_kind("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n", KRC_INPUT_NODE);
    expect_kind("{\"kind\":\"Event\",\"involvedObject\":{\"name\":\"a\"}}", KRC_INPUT_EVENTS);
    expect_kind("apiVersion: v1\nkind: EventList\nitems: []\n", KRC_INPUT_EVENTS);
    /* kubectl get events -o yaml: a List, empty when there are none */
    expect_kind("apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n",
                KRC_INPUT_EVENTS);
    expect_kind("apiVersion: v1\nkind: List\nitems:\n- kind: Event\n  reason: BackOff\n"
                "- apiVersion: events.k8s.io/v1\n  kind: Event\n  reason: Killing\n",
                KRC_INPUT_EVENTS);
    /* a List with one Pod among other manifests; one Node */
    expect_kind("{\"kind\":\"List\",\"items\":[{\"kind\":\"Service\"},{\"kind\":\"Pod\"}]}",
                KRC_INPUT_POD);
    expect_kind("{\"kind\":\"NodeList\",\"items\":[{\"kind\":\"Node\"}]}", KRC_INPUT_NODE);
    /* several YAML documents: a Pod among them */
    expect_kind("kind: ConfigMap\nmetadata:\n  name: c\n---\nkind: Pod\nmetadata:\n  name: a\n",
                KRC_INPUT_POD);
    /* no kind: by the fields */
    expect_kind("{\"metadata\":{\"name\":\"a\"},\"status\":{\"containerStatuses\":[]}}",
                KRC_INPUT_POD);
    expect_kind("spec:\n  containers:\n  - name: app\n", KRC_INPUT_POD);
    expect_kind("status:\n  initContainerStatuses: []\n", KRC_INPUT_POD);
    expect_kind("{\"metadata\":{\"name\":\"n\"},\"status\":{\"nodeInfo\":{}}}", KRC_INPUT_NODE);
    expect_kind("{\"items\":[{\"involvedObject\":{\"name\":\"a\"}},{\"regarding\":{}}]}",
                KRC_INPUT_EVENTS);
}

static void test_text(void **state)
{
    (void)state;
    expect_kind(DESCRIBE_POD, KRC_INPUT_DESCRIBE_POD);
    /* a fragment people paste: one container's Last State */
    expect_kind("    Last State:     Terminated\n      Reason:       Error\n"
                "      Exit Code:    1\n",
                KRC_INPUT_DESCRIBE_POD);
    /* describe text after a shell prompt that starts like JSON */
    expect_kind("[12:54:41] $ kubectl describe pod web\nName:  web\nStatus:  Running\n"
                "Containers:\n  app:\n    State:  Running\n",
                KRC_INPUT_DESCRIBE_POD);
    /* a pod without events: still the pod */
    expect_kind("Name:  web\nNamespace:  shop\nStatus:  Running\nEvents:  <none>\n",
                KRC_INPUT_DESCRIBE_POD);
    expect_kind(DESCRIBE_EVENTS, KRC_INPUT_EVENT_TABLE);
    expect_kind(GET_EVENTS, KRC_INPUT_EVENT_TABLE);
    expect_kind(DESCRIBE_NODE, KRC_INPUT_DESCRIBE_NODE);
}

static void test_logs(void **state)
{
    (void)state;
    expect_kind("Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
                "KeyError: 'SMTP_PORT'\n",
                KRC_INPUT_LOG);
    /* JSON log lines, one JSON log line, a JSON array */
    expect_kind("{\"level\":\"error\",\"msg\":\"boom\"}\n{\"level\":\"fatal\",\"msg\":\"x\"}\n",
                KRC_INPUT_LOG);
    expect_kind("{\"level\":\"fatal\",\"msg\":\"cannot connect\"}\n", KRC_INPUT_LOG);
    expect_kind("[1, 2, 3]\n", KRC_INPUT_LOG);
    /* bracketed time stamps; a JSON log line cut short */
    expect_kind("[2026-12-02 16:50:00] ERROR cannot connect\n[2026-12-02 16:50:01] exit\n",
                KRC_INPUT_LOG);
    expect_kind("{\"level\":\"fatal\",\"msg\":\"cannot conn", KRC_INPUT_LOG);
    /* YAML-looking log lines without a Kubernetes object's keys */
    expect_kind("level: error\nmsg: connection refused\n", KRC_INPUT_LOG);
    expect_kind("2026-12-02T16:50:00Z starting\n2026-12-02T16:50:01Z listening on :8080\n",
                KRC_INPUT_LOG);
    /* a log that says Roles: once is not describe node */
    expect_kind("Roles: admin\nconnecting to db\n", KRC_INPUT_LOG);
    /* the log of a container that wrote nothing */
    expect_kind("", KRC_INPUT_LOG);
    expect_kind(" \n\n", KRC_INPUT_LOG);
}

static void test_refused(void **state)
{
    (void)state;
    expect_refused("abc\0def", 7, "binary data");
    expect_refused("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n", (size_t)-1,
                   "a Deployment (a Kubernetes object of another kind)");
    expect_refused("{\"kind\":\"Ingress\"}", (size_t)-1, "an Ingress");
    expect_refused("{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\"},{\"kind\":\"Pod\"}]}",
                   (size_t)-1, "a List of 2 Pods");
    expect_refused("{\"kind\":\"List\",\"items\":[{\"kind\":\"Service\"}]}", (size_t)-1,
                   "a List of 1 item, of them Service");
    expect_refused("{\"metadata\":{\"name\":\"x\"}}", (size_t)-1, "without a kind");
    /* kubectl -o json cut short: refused, not taken for a log */
    expect_refused("{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {\n",
                   (size_t)-1,
                   "a JSON document (its first line is \"{\") that is not valid JSON (cut short or "
                   "malformed near line 4)");
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(krc_input_kind_name(KRC_INPUT_POD), "pod");
    assert_string_equal(krc_input_kind_name(KRC_INPUT_DESCRIBE_POD), "describe pod");
    assert_string_equal(krc_input_kind_name(KRC_INPUT_EVENT_TABLE), "event table");
    assert_string_equal(krc_input_kind_name(KRC_INPUT_DESCRIBE_NODE), "describe node");
    assert_string_equal(krc_input_kind_name(KRC_INPUT_LOG), "log");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubernetes_objects),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_logs),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
