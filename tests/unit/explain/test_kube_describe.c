/* kube_describe: `kubectl describe pod` text -> Pod / event List JSON, field
 * by field, and what is left out when it is not there. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/explain/kube_describe.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/mem.h"
#include "krc/model/report.h"

static const char describe[] =
    "$ kubectl describe pod checkout-5f7d9c8b6d-w9j4h -n payments\n"
    "Name:             checkout-5f7d9c8b6d-w9j4h\n"
    "Namespace:        payments\n"
    "Priority:         0\n"
    "Node:             aks-pool-1/10.240.0.5\n"
    "Start Time:       Tue, 22 Oct 2024 08:40:01 +0000\n"
    "Labels:           app=checkout\n"
    "                  pod-template-hash=5f7d9c8b6d\n"
    "Status:           Running\n"
    "Controlled By:  ReplicaSet/checkout-5f7d9c8b6d\n"
    "Init Containers:\n"
    "  migrate:\n"
    "    Image:          payments/migrate:1\n"
    "    State:          Terminated\n"
    "      Reason:       Completed\n"
    "      Exit Code:    0\n"
    "      Started:      Tue, 22 Oct 2024 08:40:03 +0000\n"
    "      Finished:     Tue, 22 Oct 2024 08:40:09 +0000\n"
    "    Ready:          True\n"
    "    Restart Count:  0\n"
    "    Environment:    <none>\n"
    "Containers:\n"
    "  checkout:\n"
    "    Container ID:   containerd://06ae4f\n"
    "    Image:          acr.io/payments/checkout:v3.8.1\n"
    "    Port:           8080/TCP\n"
    "    Command:\n"
    "      /bin/checkout\n"
    "      --listen=:8080\n"
    "    State:          Waiting\n"
    "      Reason:       CrashLoopBackOff\n"
    "    Last State:     Terminated\n"
    "      Reason:       Error\n"
    "      Exit Code:    137\n"
    "      Started:      Tue, 22 Oct 2024 08:57:53 +0000\n"
    "      Finished:     Tue, 22 Oct 2024 09:02:31 -0230\n"
    "    Ready:          False\n"
    "    Restart Count:  4\n"
    "    Limits:\n"
    "      memory:  512Mi\n"
    "    Requests:\n"
    "      cpu:     100m\n"
    "    Liveness:     http-get http://:8080/healthz delay=15s timeout=1s period=10s "
    "#success=1 #failure=3\n"
    "    Readiness:    exec [cat /tmp/ready] delay=0s timeout=2s period=5s #success=1 "
    "#failure=6\n"
    "    Startup:      tcp-socket :grpc-port delay=0s timeout=1s period=10s #success=1 "
    "#failure=30\n"
    "    Environment:    <none>\n"
    "Conditions:\n"
    "  Type              Status\n"
    "  Ready             False\n"
    "Events:\n"
    "  Type     Reason     Age                 From               Message\n"
    "  ----     ------     ----                ----               -------\n"
    "  Warning  Unhealthy  2m (x13 over 9m)    kubelet            Liveness probe failed: HTTP "
    "probe failed with statuscode: 503\n"
    "  Normal   Killing    2m (x5 over 9m)     kubelet, aks-pool-1  Container checkout failed "
    "liveness probe, will be restarted\n"
    "  Warning  BackOff    40s                 kubelet            Back-off restarting failed "
    "container\n";

static void convert(const char *text, char **pod, char **events, struct krc_error *err, int rc)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1); /* no NUL: ASan catches reads past len */

    assert_non_null(copy);
    memcpy(copy, text, n);
    krc_error_clear(err);
    *pod = NULL;
    *events = NULL;
    assert_int_equal(krc_kube_describe_pod(copy, n, pod, events, err), rc);
    free(copy);
}

static const cJSON *at(const cJSON *o, const char *path)
{
    char key[64];

    while (o != NULL && *path != '\0') {
        const char *dot = strchr(path, '.');
        size_t n = dot != NULL ? (size_t)(dot - path) : strlen(path);
        memcpy(key, path, n);
        key[n] = '\0';
        o = key[0] >= '0' && key[0] <= '9' ? cJSON_GetArrayItem(o, (int)strtol(key, NULL, 10))
                                           : cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (dot != NULL);
    }
    return o;
}

static void expect_str(const cJSON *o, const char *path, const char *want)
{
    const cJSON *v = at(o, path);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, want) != 0) {
        fail_msg("%s: want \"%s\", got %s", path, want,
                 cJSON_IsString(v) ? v->valuestring : "(not a string)");
    }
}

static void expect_num(const cJSON *o, const char *path, double want)
{
    const cJSON *v = at(o, path);
    if (!cJSON_IsNumber(v) || v->valuedouble != want) {
        fail_msg("%s: want %g", path, want);
    }
}

static void test_detect(void **state)
{
    (void)state;
    assert_true(krc_kube_describe_is_pod(describe, strlen(describe)));
    assert_false(krc_kube_describe_is_pod("apiVersion: v1\nkind: Pod\n", 25));
    assert_false(krc_kube_describe_is_pod("Name: x\nNamespace: y\n", 21));
    assert_true(krc_kube_describe_is_pod("  Name:   x\r\n  Containers:\r\n", 28));
    /* fragments */
    assert_true(krc_kube_describe_is_pod("    Last State:  Terminated\n", 28));
    assert_true(krc_kube_describe_is_pod("> Exit Code:\t137\n", 17));
    assert_true(krc_kube_describe_is_pod("Status: Failed\nReason: Evicted\n", 31));
    assert_false(krc_kube_describe_is_pod("Status: Failed\n", 15));
    /* the pod's header alone (a paste cut before Containers) */
    assert_true(
        krc_kube_describe_is_pod("Name: x\nNamespace: y\nStart Time: Wed, 14 Mar 2018\n", 50));
    /* a shell prompt first, starting with '[' as JSON would */
    assert_true(krc_kube_describe_is_pod("[12:54:41] $ kubectl describe pod x\nName: x\n"
                                         "    Restart Count:  5\n",
                                         66));
    assert_true(krc_kube_describe_is_pod("  Type  Reason  Age  From  Message\n", 35));
    assert_false(krc_kube_describe_is_pod("NAME    READY   STATUS    RESTARTS   AGE\n", 41));
    assert_false(krc_kube_describe_is_pod("StateX: 1\nstate: Waiting\n", 25));
    assert_true(krc_kube_describe_is_events("  Type  Reason  Age  From  Message\n", 35));
    assert_true(krc_kube_describe_is_events("LAST SEEN  TYPE  REASON  OBJECT  MESSAGE\n", 41));
    assert_false(krc_kube_describe_is_events("    Last State:  Terminated\n", 28));
}

static void test_pod(void **state)
{
    struct krc_error err;
    char *pod;
    char *events;
    cJSON *p;

    (void)state;
    convert(describe, &pod, &events, &err, 0);
    p = cJSON_Parse(pod);
    assert_non_null(p);
    expect_str(p, "kind", "Pod");
    expect_str(p, "metadata.name", "checkout-5f7d9c8b6d-w9j4h");
    expect_str(p, "metadata.namespace", "payments");
    assert_null(at(p, "metadata.uid")); /* not shown, not invented */
    expect_str(p, "metadata.ownerReferences.0.kind", "ReplicaSet");
    expect_str(p, "metadata.ownerReferences.0.name", "checkout-5f7d9c8b6d");
    expect_str(p, "spec.nodeName", "aks-pool-1");
    expect_str(p, "status.phase", "Running");
    expect_str(p, "spec.initContainers.0.name", "migrate");
    expect_num(p, "status.initContainerStatuses.0.state.terminated.exitCode", 0);
    expect_str(p, "status.initContainerStatuses.0.state.terminated.reason", "Completed");

    expect_str(p, "spec.containers.0.name", "checkout");
    expect_str(p, "spec.containers.0.image", "acr.io/payments/checkout:v3.8.1");
    expect_str(p, "spec.containers.0.command.1", "--listen=:8080");
    expect_str(p, "spec.containers.0.resources.limits.memory", "512Mi");
    expect_str(p, "spec.containers.0.resources.requests.cpu", "100m");
    expect_str(p, "spec.containers.0.livenessProbe.httpGet.scheme", "HTTP");
    expect_num(p, "spec.containers.0.livenessProbe.httpGet.port", 8080);
    expect_str(p, "spec.containers.0.livenessProbe.httpGet.path", "/healthz");
    expect_num(p, "spec.containers.0.livenessProbe.initialDelaySeconds", 15);
    expect_num(p, "spec.containers.0.livenessProbe.timeoutSeconds", 1);
    expect_num(p, "spec.containers.0.livenessProbe.periodSeconds", 10);
    expect_num(p, "spec.containers.0.livenessProbe.successThreshold", 1);
    expect_num(p, "spec.containers.0.livenessProbe.failureThreshold", 3);
    expect_str(p, "spec.containers.0.readinessProbe.exec.command.1", "/tmp/ready");
    expect_num(p, "spec.containers.0.readinessProbe.failureThreshold", 6);
    expect_str(p, "spec.containers.0.startupProbe.tcpSocket.port", "grpc-port");
    expect_num(p, "spec.containers.0.startupProbe.failureThreshold", 30);

    expect_str(p, "status.containerStatuses.0.containerID", "containerd://06ae4f");
    expect_str(p, "status.containerStatuses.0.state.waiting.reason", "CrashLoopBackOff");
    assert_null(at(p, "status.containerStatuses.0.state.waiting.message"));
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 137);
    expect_str(p, "status.containerStatuses.0.lastState.terminated.reason", "Error");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.startedAt",
               "2024-10-22T08:57:53Z");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.finishedAt",
               "2024-10-22T11:32:31Z");
    assert_null(at(p, "status.containerStatuses.0.lastState.terminated.signal"));
    assert_true(cJSON_IsFalse(at(p, "status.containerStatuses.0.ready")));
    expect_num(p, "status.containerStatuses.0.restartCount", 4);
    cJSON_Delete(p);
    krc_free(pod);
    krc_free(events);
}

static void test_events(void **state)
{
    struct krc_error err;
    char *pod;
    char *events;
    cJSON *e;

    (void)state;
    convert(describe, &pod, &events, &err, 0);
    assert_non_null(events);
    e = cJSON_Parse(events);
    expect_str(e, "kind", "List");
    assert_int_equal(cJSON_GetArraySize(at(e, "items")), 3);
    expect_str(e, "items.0.type", "Warning");
    expect_str(e, "items.0.reason", "Unhealthy");
    expect_num(e, "items.0.count", 13);
    expect_str(e, "items.0.message",
               "Liveness probe failed: HTTP probe failed with statuscode: 503");
    expect_str(e, "items.0.source.component", "kubelet");
    expect_str(e, "items.0.involvedObject.kind", "Pod");
    expect_str(e, "items.0.involvedObject.name", "checkout-5f7d9c8b6d-w9j4h");
    expect_str(e, "items.0.involvedObject.namespace", "payments");
    assert_null(at(e, "items.0.lastTimestamp")); /* ages have no reference time */
    /* a row wider than the header's columns: cut at runs of spaces */
    expect_str(e, "items.1.reason", "Killing");
    expect_num(e, "items.1.count", 5);
    expect_str(e, "items.1.source.component", "kubelet");
    expect_str(e, "items.1.source.host", "aks-pool-1");
    expect_str(e, "items.1.message", "Container checkout failed liveness probe, will be restarted");
    expect_num(e, "items.2.count", 1);
    expect_str(e, "items.2.message", "Back-off restarting failed container");
    cJSON_Delete(e);
    krc_free(pod);
    krc_free(events);

    /* "Events: <none>" is an empty list; no Events section is NULL */
    convert("Name: a\nContainers:\n  app:\n    Image: i\nEvents:          <none>\n", &pod, &events,
            &err, 0);
    assert_string_equal(events, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}");
    krc_free(pod);
    krc_free(events);
    convert("Name: a\nContainers:\n  app:\n    Image: i\n", &pod, &events, &err, 0);
    assert_null(events);
    krc_free(pod);
}

/* The JSON goes through kube_parse into a report like a kubectl -o json Pod. */
static void test_report(void **state)
{
    struct krc_error err;
    struct krc_report r;
    char *pod;
    char *events;
    const struct krc_report_container *c;

    (void)state;
    convert(describe, &pod, &events, &err, 0);
    krc_report_init(&r);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
    assert_int_equal(krc_kube_parse_events(events, strlen(events), &r, &err), 0);
    krc_report_retain_pod_events(&r);
    assert_int_equal(r.n_events, 3);
    c = krc_report_container_get(&r, "checkout", 0);
    assert_non_null(c);
    assert_true(c->has_liveness && c->has_readiness && c->has_startup);
    assert_int_equal(c->restart_count, 4);
    assert_true(c->last.present);
    assert_int_equal(c->last.exit_code, 137);
    assert_int_equal(c->last.finished_at - c->last.started_at, 278 + 9000);
    assert_string_equal(r.owner_kind, "ReplicaSet");
    krc_report_cleanup(&r);
    krc_free(pod);
    krc_free(events);
}

static void test_partial_and_errors(void **state)
{
    struct krc_error err;
    char *pod;
    char *events;
    cJSON *p;

    (void)state;
    /* a quoted paste (common indentation), no exit code, an unreadable time:
     * those fields are left out */
    convert("    Name:         web-1\n"
            "    Containers:\n"
            "      app:\n"
            "        State:          Waiting\n"
            "          Reason:       CrashLoopBackOff\n"
            "        Last State:     Terminated\n"
            "          Reason:       Error\n"
            "          Started:      yesterday\n"
            "        Restart Count:  many\n",
            &pod, &events, &err, 0);
    p = cJSON_Parse(pod);
    expect_str(p, "metadata.name", "web-1");
    assert_null(at(p, "metadata.namespace"));
    expect_str(p, "status.containerStatuses.0.lastState.terminated.reason", "Error");
    assert_null(at(p, "status.containerStatuses.0.lastState.terminated.exitCode"));
    assert_null(at(p, "status.containerStatuses.0.lastState.terminated.startedAt"));
    assert_null(at(p, "status.containerStatuses.0.restartCount"));
    assert_null(at(p, "spec.containers.0.livenessProbe"));
    cJSON_Delete(p);
    krc_free(pod);
    krc_free(events);

    convert("Name: a\nContainers:\n  app:\n\nName: b\nContainers:\n  app:\n", &pod, &events, &err,
            KRC_EINVAL);
    assert_non_null(strstr(err.msg, "2 pods"));
    convert("Name: a\nContainers:\nEvents: <none>\n", &pod, &events, &err, KRC_EINVAL);
    assert_non_null(strstr(err.msg, "without containers"));
    convert("Name: a\nContainers:\n  Image: x\n", &pod, &events, &err, KRC_EINVAL);
    assert_non_null(strstr(err.msg, "expected a container name"));
    convert("Labels:   a=b\nPriority: 0\n", &pod, &events, &err, KRC_EINVAL);
    assert_non_null(strstr(err.msg, "no kubectl describe pod fields"));
    assert_null(pod);
    /* a section from "Containers:" without the pod's lines: its container,
     * no spec entry (the block ends before Environment: its limits and
     * probes were not shown) */
    convert("Containers:\n  app:\n", &pod, &events, &err, 0);
    p = cJSON_Parse(pod);
    assert_null(at(p, "metadata.name"));
    expect_str(p, "status.containerStatuses.0.name", "app");
    assert_null(at(p, "spec.containers"));
    assert_null(events);
    cJSON_Delete(p);
    krc_free(pod);
}

static cJSON *pod_of(const char *text, char **events)
{
    struct krc_error err;
    char *pod;
    cJSON *p;

    convert(text, &pod, events, &err, 0);
    p = cJSON_Parse(pod);
    assert_non_null(p);
    krc_free(pod);
    return p;
}

/* One container's block as people paste it: no name line, no pod lines. */
static void test_fragment_block(void **state)
{
    struct krc_report r;
    struct krc_error err;
    char *events;
    char *text;
    cJSON *p;

    (void)state;
    p = pod_of("    State:          Waiting\n"
               "      Reason:       CrashLoopBackOff\n"
               "    Last State:     Terminated\n"
               "      Reason:       OOMKilled\n"
               "      Exit Code:    1\n"
               "      Started:      Thu, 04 Jan 2024 17:52:29 +0800\n"
               "      Finished:     Thu, 04 Jan 2024 17:52:49 +0800\n"
               "    Ready:          False\n"
               "    Restart Count:  3\n",
               &events);
    assert_null(events);
    assert_null(at(p, "metadata.name"));
    assert_null(at(p, "spec.containers"));
    assert_int_equal(cJSON_GetArraySize(at(p, "status.containerStatuses")), 1);
    assert_null(at(p, "status.containerStatuses.0.name"));
    expect_str(p, "status.containerStatuses.0.state.waiting.reason", "CrashLoopBackOff");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.reason", "OOMKilled");
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 1);
    expect_str(p, "status.containerStatuses.0.lastState.terminated.startedAt",
               "2024-01-04T09:52:29Z");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.finishedAt",
               "2024-01-04T09:52:49Z");
    expect_num(p, "status.containerStatuses.0.restartCount", 3);
    assert_true(cJSON_IsFalse(at(p, "status.containerStatuses.0.ready")));
    /* kube_parse reads it: one unnamed container */
    text = cJSON_PrintUnformatted(p);
    krc_report_init(&r);
    assert_int_equal(krc_kube_parse_pod(text, strlen(text), &r, &err), 0);
    assert_int_equal(r.n_containers, 1);
    assert_string_equal(r.containers[0].name, "(unnamed)");
    krc_report_cleanup(&r);
    cJSON_free(text);
    cJSON_Delete(p);

    /* what is not shown stays absent; the day changes with the offset */
    p = pod_of("Last State:     Terminated\n"
               "  Reason:       OOMKilled\n"
               "  Finished:     Mon, 01 Jan 2024 01:00:00 +0230\n",
               &events);
    assert_null(at(p, "status.containerStatuses.0.restartCount"));
    assert_null(at(p, "status.containerStatuses.0.state"));
    assert_null(at(p, "status.containerStatuses.0.lastState.terminated.exitCode"));
    expect_str(p, "status.containerStatuses.0.lastState.terminated.finishedAt",
               "2023-12-31T22:30:00Z");
    cJSON_Delete(p);

    /* from the container's name line, and from "Containers:" */
    p = pod_of("  kafka:\n    State:  Running\n    Last State:  Terminated\n"
               "      Exit Code:    137\n",
               &events);
    expect_str(p, "status.containerStatuses.0.name", "kafka");
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 137);
    cJSON_Delete(p);
    p = pod_of("Containers:\n  kafka:\n    Image:  k:1\n    Restart Count:  5\n"
               "    Environment:  <none>\n",
               &events);
    expect_str(p, "status.containerStatuses.0.name", "kafka");
    expect_str(p, "spec.containers.0.name", "kafka");
    expect_str(p, "spec.containers.0.image", "k:1");
    expect_num(p, "status.containerStatuses.0.restartCount", 5);
    cJSON_Delete(p);
}

/* The pod's own lines from the middle of the output (an evicted pod). */
static void test_fragment_status(void **state)
{
    char *events;
    cJSON *p;

    (void)state;
    p = pod_of("Status:       Failed\n"
               "Reason:       Evicted\n"
               "Message:      The node was low on resource: memory. Container db was using "
               "1275700Ki, which e\n"
               "xceeds its request of 0.\n",
               &events);
    expect_str(p, "status.phase", "Failed");
    expect_str(p, "status.reason", "Evicted");
    expect_str(p, "status.message",
               "The node was low on resource: memory. Container db was using 1275700Ki, which "
               "e\nxceeds its request of 0.");
    assert_null(at(p, "status.containerStatuses"));
    assert_null(at(p, "spec.containers"));
    assert_null(events);
    cJSON_Delete(p);
}

/* The Events table alone, with or without "Events:", wrapped messages and
 * "kubelet, minikube" in From. */
static void test_fragment_events(void **state)
{
    static const char *const texts[] = {
        "Events:\n"
        "  Type     Reason     Age               From               Message\n"
        "  ----     ------     ----              ----               -------\n"
        "  Warning  Unhealthy  1s (x6 over 28s)  kubelet, minikube  Liveness probe failed: HTTP\n"
        "probe failed with statuscode: 500\n"
        "  Normal   Killing    1s                kubelet            Container web failed "
        "liveness probe, will be restarted\n"
        "  Normal   Created    0s (x3 over 40s)  kubelet\n",
        /* after a container block, less indented, no "Events:" line, CRLF */
        "    Last State:     Terminated\r\n"
        "      Exit Code:    0\r\n"
        "  Type     Reason     Age               From               Message\r\n"
        "  ----     ------     ----              ----               -------\r\n"
        "  Warning  Unhealthy  1s (x6 over 28s)  kubelet, minikube  Liveness probe failed: HTTP\r\n"
        "    probe failed with statuscode: 500\r\n"
        "  Normal   Killing    1s                kubelet            Container web failed "
        "liveness probe, will be restarted\r\n"
        "  Normal   Created    0s (x3 over 40s)  kubelet\r\n",
        /* the spaces squeezed to one (copied from a web page) */
        "Events:\n"
        "Type Reason Age From Message\n"
        "---- ------ ---- ---- -------\n"
        "Warning Unhealthy 1s (x6 over 28s) kubelet, minikube Liveness probe failed: HTTP\n"
        "probe failed with statuscode: 500\n"
        "Normal Killing 1s kubelet Container web failed liveness probe, will be restarted\n"
        "Normal Created 0s (x3 over 40s) kubelet\n",
    };

    (void)state;
    for (size_t t = 0; t < 3; t++) {
        char *events;
        cJSON *p = pod_of(texts[t], &events);
        cJSON *e = cJSON_Parse(events);
        assert_non_null(e);
        assert_int_equal(cJSON_GetArraySize(at(e, "items")), 3);
        expect_str(e, "items.0.type", "Warning");
        expect_str(e, "items.0.reason", "Unhealthy");
        expect_str(e, "items.0.message",
                   "Liveness probe failed: HTTP probe failed with "
                   "statuscode: 500");
        expect_num(e, "items.0.count", 6);
        expect_str(e, "items.0.source.component", "kubelet");
        expect_str(e, "items.0.source.host", "minikube");
        expect_str(e, "items.0.involvedObject.kind", "Pod");
        assert_null(at(e, "items.0.involvedObject.name"));
        assert_null(at(e, "items.0.involvedObject.uid"));
        assert_null(at(e, "items.0.lastTimestamp"));
        expect_num(e, "items.1.count", 1);
        assert_null(at(e, "items.1.source.host"));
        expect_str(e, "items.1.message", "Container web failed liveness probe, will be restarted");
        expect_str(e, "items.2.reason", "Created");
        expect_num(e, "items.2.count", 3);
        expect_str(e, "items.2.source.component", "kubelet");
        assert_null(at(e, "items.2.message"));
        if (t == 1) {
            expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 0);
        } else {
            assert_null(at(p, "status.containerStatuses"));
        }
        cJSON_Delete(e);
        cJSON_Delete(p);
        krc_free(events);
    }
}

/* Rows of the Events table pasted without "Events:" and the header line;
 * a row the terminal broke inside a word is joined without a space. */
static void test_bare_event_rows(void **state)
{
    static const char text[] =
        "  Normal   Pulled     2s (x5 over 54s)  kubelet      Image \"a:1\" present\n"
        "  Warning  Failed     2s                kubelet, n1  Error: no key in Secret x/y\n"
        "  Warning  Unhealthy  <unknown>         default-scheduler  probe down\n"
        "  Warning  Failed     1m (x5 over 2m)   kubelet  Error: OCI runtime create failed: "
        "starting containe\n"
        "r process caused exec\n";
    char *pod;
    char *events;
    struct krc_error err;
    cJSON *e;

    (void)state;
    assert_true(krc_kube_describe_is_pod(text, strlen(text)));
    assert_true(krc_kube_describe_is_events(text, strlen(text)));
    convert(text, &pod, &events, &err, 0);
    e = cJSON_Parse(events);
    assert_non_null(e);
    assert_int_equal(cJSON_GetArraySize(at(e, "items")), 4);
    expect_str(e, "items.0.reason", "Pulled");
    expect_num(e, "items.0.count", 5);
    expect_str(e, "items.0.message", "Image \"a:1\" present");
    expect_str(e, "items.1.type", "Warning");
    expect_str(e, "items.1.message", "Error: no key in Secret x/y");
    expect_str(e, "items.1.source.component", "kubelet");
    expect_str(e, "items.1.source.host", "n1");
    expect_num(e, "items.1.count", 1);
    expect_str(e, "items.2.source.component", "default-scheduler");
    expect_str(e, "items.3.message",
               "Error: OCI runtime create failed: starting container process caused exec");
    expect_num(e, "items.3.count", 5);
    expect_str(e, "items.3.involvedObject.kind", "Pod");
    cJSON_Delete(e);
    krc_free(pod);
    krc_free(events);

    /* a short line before a column-0 line is not a terminal's break: the
     * line is not the row's */
    convert("  Warning  Failed  2s  kubelet  Error: x\nr more\n", &pod, &events, &err, 0);
    e = cJSON_Parse(events);
    expect_str(e, "items.0.message", "Error: x");
    assert_int_equal(cJSON_GetArraySize(at(e, "items")), 1);
    cJSON_Delete(e);
    krc_free(pod);
    krc_free(events);

    /* as an event table (--events); old kubectl's "{component host}" From */
    {
        static const char rows[] = "Warning  BackOff  3m  {kubelet node-1}  Back-off\n"
                                   "Normal  Scheduled  <unknown>  {default-scheduler }  ok\n";
        assert_true(krc_kube_describe_is_events(rows, strlen(rows)));
        assert_int_equal(krc_kube_describe_events(rows, strlen(rows), &events, &err), 0);
        e = cJSON_Parse(events);
        assert_int_equal(cJSON_GetArraySize(at(e, "items")), 2);
        expect_str(e, "items.0.source.host", "node-1");
        expect_str(e, "items.1.source.component", "default-scheduler");
        assert_null(at(e, "items.1.source.host"));
        cJSON_Delete(e);
        krc_free(events);
    }

    /* not rows: no type, a bad age, a reason that is not a word, no From */
    assert_false(krc_kube_describe_is_pod("  Info  Failed  2s  kubelet  x\n", 31));
    assert_false(krc_kube_describe_is_pod("  Warning  Failed  soon  kubelet  x\n", 35));
    assert_false(krc_kube_describe_is_pod("  Warning  Fail-ed  2s  kubelet  x\n", 34));
    assert_false(krc_kube_describe_is_pod("  Warning  Failed  2s (x5)  kubelet  x\n", 38));
    assert_false(krc_kube_describe_is_pod("Warning: disk almost full\n", 26));
}

/* One container line alone: a probe line gives an unnamed container with
 * that probe in its spec (and nothing else there); other container keys
 * are describe's too, but from a cut block give no spec entry. */
static void test_lone_container_line(void **state)
{
    static const char probe[] = "    Liveness:       http-get http://:9898/api/2/health delay=0s "
                                "timeout=60s period=10s #success=1 #failure=6\n";
    char *events;
    cJSON *p;

    (void)state;
    assert_true(krc_kube_describe_is_pod(probe, strlen(probe)));
    assert_true(krc_kube_describe_is_pod("  Image:  nginx:1\n", 18));
    assert_true(krc_kube_describe_is_pod("Command:\n", 9));
    assert_false(krc_kube_describe_is_pod("image: nginx:1\n", 15));
    assert_false(krc_kube_describe_is_events(probe, strlen(probe)));
    p = pod_of(probe, &events);
    assert_null(events);
    expect_str(p, "spec.containers.0.livenessProbe.httpGet.path", "/api/2/health");
    expect_num(p, "spec.containers.0.livenessProbe.httpGet.port", 9898);
    expect_num(p, "spec.containers.0.livenessProbe.timeoutSeconds", 60);
    expect_num(p, "spec.containers.0.livenessProbe.failureThreshold", 6);
    assert_null(at(p, "spec.containers.0.name"));
    assert_null(at(p, "spec.containers.0.readinessProbe"));
    assert_null(at(p, "spec.containers.0.resources"));
    assert_int_equal(cJSON_GetArraySize(at(p, "spec.containers")), 1);
    assert_int_equal(cJSON_GetArraySize(at(p, "status.containerStatuses")), 1);
    assert_null(at(p, "status.containerStatuses.0.state"));
    cJSON_Delete(p);

    /* an image line: the status shows it, no spec entry */
    p = pod_of("    Image:          nginx:1\n", &events);
    expect_str(p, "status.containerStatuses.0.image", "nginx:1");
    assert_null(at(p, "spec.containers"));
    cJSON_Delete(p);
}

/* The command itself on the first line, with or without a prompt. */
static void test_command_line_first(void **state)
{
    static const char *const texts[] = {
        "kubectl describe po\n"
        "Name:           web-1\n"
        "Status:         Running\n"
        "Containers:\n"
        "  web:\n"
        "    State:          Waiting\n"
        "      Reason:       CrashLoopBackOff\n",
        "$ kubectl describe pod web-1 -n shop | grep -A2 State:\n"
        "    State:          Waiting\n"
        "      Reason:       CrashLoopBackOff\n",
    };

    (void)state;
    for (size_t t = 0; t < 2; t++) {
        char *events;
        cJSON *p;
        assert_true(krc_kube_describe_is_pod(texts[t], strlen(texts[t])));
        p = pod_of(texts[t], &events);
        assert_null(events);
        expect_str(p, "status.containerStatuses.0.state.waiting.reason", "CrashLoopBackOff");
        if (t == 0) {
            expect_str(p, "metadata.name", "web-1");
            expect_str(p, "status.containerStatuses.0.name", "web");
        } else {
            assert_null(at(p, "metadata.name"));
            assert_null(at(p, "status.containerStatuses.0.name"));
        }
        cJSON_Delete(p);
    }
}

/* A block pasted at column 0: the items of "Command:" lost their
 * indentation too, and are still its items. */
static void test_command_items_at_column_0(void **state)
{
    char *events;
    cJSON *p;

    (void)state;
    p = pod_of("Image:          busybox:1\n"
               "Command:\n"
               "sh\n"
               "-c\n"
               "echo hi | \\\n"
               "Args:\n"
               "--port=80\n"
               "State:          Waiting\n"
               "Reason:       CrashLoopBackOff\n"
               "Environment:    <none>\n",
               &events);
    assert_int_equal(cJSON_GetArraySize(at(p, "spec.containers.0.command")), 3);
    expect_str(p, "spec.containers.0.command.0", "sh");
    expect_str(p, "spec.containers.0.command.2", "echo hi | \\");
    assert_int_equal(cJSON_GetArraySize(at(p, "spec.containers.0.args")), 1);
    expect_str(p, "spec.containers.0.args.0", "--port=80");
    expect_str(p, "status.containerStatuses.0.state.waiting.reason", "CrashLoopBackOff");
    cJSON_Delete(p);

    /* the block alone: cut before Environment, so no spec entry */
    p = pod_of("Command:\nsh\n-c\nmkdir -p /data\n", &events);
    assert_null(at(p, "spec.containers"));
    assert_int_equal(cJSON_GetArraySize(at(p, "status.containerStatuses")), 1);
    cJSON_Delete(p);

    /* indented items: a prompt at column 0 after them is not one */
    p = pod_of("    Command:\n      sh\n$ kubectl get pods\n    Environment:  <none>\n", &events);
    assert_int_equal(cJSON_GetArraySize(at(p, "spec.containers.0.command")), 1);
    cJSON_Delete(p);
}

/* Elisions, tabs, a markdown quote, extra indentation. */
static void test_fragment_layouts(void **state)
{
    char *events;
    cJSON *p;

    (void)state;
    /* "<snip>" ends the lines above it: State is not under Name */
    p = pod_of("Name:             web-1\n"
               "<snip>\n"
               "    State:          Running\n"
               "    ...\n"
               "    Last State:     Terminated\n"
               "      Reason:       Error\n"
               "      ...\n"
               "      Exit Code:    2\n",
               &events);
    expect_str(p, "metadata.name", "web-1");
    assert_null(at(p, "status.containerStatuses.0.name"));
    assert_non_null(at(p, "status.containerStatuses.0.state.running"));
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 2);
    cJSON_Delete(p);
    /* tabs between key and value and in the indentation */
    p = pod_of("Name:\t\tweb-2\nContainers:\n  app:\n\tState:\t\tTerminated\n"
               "\t  Exit Code:\t137\n\tRestart Count:\t4\n",
               &events);
    expect_str(p, "metadata.name", "web-2");
    expect_str(p, "status.containerStatuses.0.name", "app");
    expect_num(p, "status.containerStatuses.0.state.terminated.exitCode", 137);
    expect_num(p, "status.containerStatuses.0.restartCount", 4);
    cJSON_Delete(p);
    /* a markdown quote, indented */
    p = pod_of("> Status:       Failed\n"
               ">\n"
               ">       Last State:     Terminated\n"
               ">         Reason:       OOMKilled\n",
               &events);
    expect_str(p, "status.phase", "Failed");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.reason", "OOMKilled");
    cJSON_Delete(p);
    /* a shell prompt before, the whole paste indented */
    p = pod_of("$ kubectl describe pod web-3 | grep -A5 State\n"
               "        State:          Waiting\n"
               "          Reason:       CrashLoopBackOff\n"
               "        Restart Count:  7\n",
               &events);
    expect_str(p, "status.containerStatuses.0.state.waiting.reason", "CrashLoopBackOff");
    expect_num(p, "status.containerStatuses.0.restartCount", 7);
    cJSON_Delete(p);
    /* an Events section whose table is not recognised: no event list,
     * which would say that there were none */
    p = pod_of("    Last State:  Terminated\n"
               "Events:\n  Kind  Reason  Message\n"
               "  Normal  Pulled  pulled\n",
               &events);
    assert_null(events);
    assert_non_null(at(p, "status.containerStatuses.0.lastState.terminated"));
    cJSON_Delete(p);
    /* the indentation lost: a state's lines follow it in the same column,
     * and are not the pod's Reason */
    p = pod_of("State:          Waiting\n"
               "Reason:         CrashLoopBackOff\n"
               "Last State:     Terminated\n"
               "Reason:         OOMKilled\n"
               "Exit Code:      137\n"
               "Ready:          False\n"
               "Restart Count:  3\n",
               &events);
    assert_null(at(p, "status.reason"));
    expect_str(p, "status.containerStatuses.0.state.waiting.reason", "CrashLoopBackOff");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.reason", "OOMKilled");
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 137);
    expect_num(p, "status.containerStatuses.0.restartCount", 3);
    cJSON_Delete(p);
    /* a whole describe with all indentation lost (markdown outside a code
     * block): containers, their states and the pod's lines apart again */
    p = pod_of("Name: web-4\n"
               "Status: Running\n"
               "Containers:\n"
               "app:\n"
               "Image: shop/app:2\n"
               "State: Running\n"
               "Started: Sun, 09 Aug 2020 12:17:29 +0530\n"
               "Last State: Terminated\n"
               "Reason: Error\n"
               "Exit Code: 1\n"
               "Ready: True\n"
               "Restart Count: 19\n"
               "Environment:\n"
               "DB_HOST: mysql\n"
               "sidecar:\n"
               "Image: envoy:1\n"
               "Restart Count: 0\n"
               "Conditions:\n"
               "Type Status\n"
               "Events: <none>\n",
               &events);
    expect_str(p, "metadata.name", "web-4");
    assert_null(at(p, "status.reason"));
    expect_str(p, "status.containerStatuses.0.name", "app");
    expect_str(p, "status.containerStatuses.0.state.running.startedAt", "2020-08-09T06:47:29Z");
    expect_str(p, "status.containerStatuses.0.lastState.terminated.reason", "Error");
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 1);
    expect_num(p, "status.containerStatuses.0.restartCount", 19);
    expect_str(p, "spec.containers.0.image", "shop/app:2");
    expect_str(p, "status.containerStatuses.1.name", "sidecar");
    expect_num(p, "status.containerStatuses.1.restartCount", 0);
    assert_int_equal(cJSON_GetArraySize(at(p, "status.containerStatuses")), 2);
    assert_string_equal(events, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}");
    krc_free(events);
    cJSON_Delete(p);
    /* an elision or a table rule as the last bytes (no newline, no NUL) */
    p = pod_of("    Last State:  Terminated\n      Exit Code:  2\n...", &events);
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 2);
    cJSON_Delete(p);
    p = pod_of("Events:\n  Type  Reason  Age  From  Message\n  ----", &events);
    assert_string_equal(events, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}");
    krc_free(events);
    cJSON_Delete(p);
}

/* kubectl before 1.10: tab-separated columns at 8-column stops, Count and
 * SubObjectPath columns (empty for pod-level events), "{kubelet node1}". */
static void test_old_events_table(void **state)
{
    char *events;
    cJSON *p;
    cJSON *e;

    (void)state;
    p = pod_of("Name:\t\tweb-1\n"
               "Events:\n"
               "  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\t\tType\t\tReason\t\t"
               "Message\n"
               "  ---------\t--------\t-----\t----\t\t\t-------------\t\t--------\t------\t\t"
               "-------\n"
               "  1m\t\t1m\t\t1\t{default-scheduler }\t\t\t\tNormal\t\tScheduled\t"
               "Successfully assigned web-1 to node1\n"
               "  40s\t\t2s\t\t5\t{kubelet node1}\t\tspec.containers{app}\tWarning\t\tBackOff"
               "\t\tBack-off restarting failed docker container\n",
               &events);
    e = cJSON_Parse(events);
    assert_int_equal(cJSON_GetArraySize(at(e, "items")), 2);
    expect_str(e, "items.0.type", "Normal");
    expect_str(e, "items.0.reason", "Scheduled");
    expect_num(e, "items.0.count", 1);
    expect_str(e, "items.0.source.component", "default-scheduler");
    assert_null(at(e, "items.0.source.host"));
    assert_null(at(e, "items.0.involvedObject.fieldPath"));
    expect_str(e, "items.0.involvedObject.name", "web-1");
    expect_str(e, "items.1.type", "Warning");
    expect_str(e, "items.1.reason", "BackOff");
    expect_num(e, "items.1.count", 5);
    expect_str(e, "items.1.source.component", "kubelet");
    expect_str(e, "items.1.source.host", "node1");
    expect_str(e, "items.1.involvedObject.fieldPath", "spec.containers{app}");
    expect_str(e, "items.1.message", "Back-off restarting failed docker container");
    cJSON_Delete(e);
    cJSON_Delete(p);
    krc_free(events);
}

/* `kubectl get events` output and describe's table alone for --events. */
static void test_event_tables(void **state)
{
    struct krc_error err;
    char *ev = NULL;
    cJSON *e;
    static const char get[] =
        "LAST SEEN   TYPE      REASON      OBJECT      MESSAGE\n"
        "2m          Warning   BackOff     pod/web-1   Back-off restarting failed container\n"
        "5m          Normal    Scheduled   pod/web-1   Successfully assigned shop/web-1 to n1\n"
        "5m          Normal    Starting    node/n1     Starting kubelet.\n";
    static const char squeezed[] = "LAST SEEN TYPE REASON OBJECT MESSAGE\n"
                                   "90s Warning Failed pod/api-1 Error: ErrImagePull\n";
    static const char get_ns[] =
        "NAMESPACE   LAST SEEN   TYPE      REASON    OBJECT      MESSAGE\n"
        "shop        2m          Warning   Killing   pod/web-1   Container app failed liveness "
        "probe, will be restarted\n";

    (void)state;
    assert_int_equal(krc_kube_describe_events(get, strlen(get), &ev, &err), 0);
    e = cJSON_Parse(ev);
    assert_int_equal(cJSON_GetArraySize(at(e, "items")), 3);
    expect_str(e, "items.0.type", "Warning");
    expect_str(e, "items.0.reason", "BackOff");
    expect_str(e, "items.0.involvedObject.kind", "Pod");
    expect_str(e, "items.0.involvedObject.name", "web-1");
    assert_null(at(e, "items.0.involvedObject.namespace"));
    assert_null(at(e, "items.0.count"));
    assert_null(at(e, "items.0.source"));
    expect_str(e, "items.0.message", "Back-off restarting failed container");
    expect_str(e, "items.2.involvedObject.kind", "Node");
    expect_str(e, "items.2.involvedObject.name", "n1");
    cJSON_Delete(e);
    krc_free(ev);
    assert_int_equal(krc_kube_describe_events(squeezed, strlen(squeezed), &ev, &err), 0);
    e = cJSON_Parse(ev);
    expect_str(e, "items.0.type", "Warning");
    expect_str(e, "items.0.reason", "Failed");
    expect_str(e, "items.0.involvedObject.name", "api-1");
    expect_str(e, "items.0.message", "Error: ErrImagePull");
    cJSON_Delete(e);
    krc_free(ev);
    assert_int_equal(krc_kube_describe_events(get_ns, strlen(get_ns), &ev, &err), 0);
    e = cJSON_Parse(ev);
    expect_str(e, "items.0.involvedObject.namespace", "shop");
    expect_str(e, "items.0.reason", "Killing");
    cJSON_Delete(e);
    krc_free(ev);
    assert_int_equal(krc_kube_describe_events(describe, strlen(describe), &ev, &err), 0);
    e = cJSON_Parse(ev);
    assert_int_equal(cJSON_GetArraySize(at(e, "items")), 3);
    cJSON_Delete(e);
    krc_free(ev);
    ev = NULL;
    assert_int_equal(krc_kube_describe_events("NAME READY STATUS\nweb 0/1 Error\n", 33, &ev, &err),
                     KRC_EINVAL);
    assert_null(ev);
    assert_non_null(strstr(err.msg, "no event table"));
}

/* kubectl prints a multi-line termination message as it is: its lines
 * start at column 0 or with tabs, and must not end the container. */
static void test_multiline_message(void **state)
{
    static const char text[] = "Name:         relay-0\n"
                               "Namespace:    hooks\n"
                               "Containers:\n"
                               "  relay:\n"
                               "    Image:          hooks/relay:4\n"
                               "    State:          Waiting\n"
                               "      Reason:       CrashLoopBackOff\n"
                               "    Last State:     Terminated\n"
                               "      Reason:       Error\n"
                               "      Message:      panic: runtime error: index out of range\n"
                               "\n"
                               "goroutine 1 [running]:\n"
                               "main.main()\n"
                               "\t/src/main.go:12 +0x1d\n"
                               "Error: exit status 2\n"
                               "      Exit Code:    2\n"
                               "    Ready:          False\n"
                               "    Restart Count:  6\n"
                               "    Environment:    <none>\n"
                               "  sidecar:\n"
                               "    Image:          envoy:1\n"
                               "    Environment:    <none>\n"
                               "Events:          <none>\n"
                               "$ \n";
    struct krc_error err;
    char *pod;
    char *events;
    cJSON *p;

    (void)state;
    convert(text, &pod, &events, &err, 0);
    p = cJSON_Parse(pod);
    expect_str(p, "status.containerStatuses.0.lastState.terminated.message",
               "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n"
               "\t/src/main.go:12 +0x1d\nError: exit status 2");
    expect_num(p, "status.containerStatuses.0.lastState.terminated.exitCode", 2);
    expect_num(p, "status.containerStatuses.0.restartCount", 6);
    expect_str(p, "spec.containers.1.name", "sidecar");
    expect_str(p, "spec.containers.1.image", "envoy:1");
    assert_int_equal(cJSON_GetArraySize(at(p, "spec.containers")), 2);
    cJSON_Delete(p);
    assert_string_equal(events, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}");
    krc_free(pod);
    krc_free(events);
}

static void test_alloc_failures(void **state)
{
    static const char fragment[] =
        "<snip>\n"
        "    Last State:     Terminated\n"
        "      Reason:       OOMKilled\n"
        "      Exit Code:    137\n"
        "  Type     Reason     Age               From               Message\n"
        "  Warning  Unhealthy  1s (x6 over 28s)  kubelet, minikube  Liveness probe failed:\n"
        "    HTTP probe failed with statuscode: 500\n";
    const char *const texts[] = {describe, fragment};

    (void)state;
    for (size_t t = 0; t < 2 * 2; t++) {
        const char *text = texts[t % 2];
        long n;
        for (n = 0; n < 100000; n++) {
            char *pod = NULL;
            char *events = NULL;
            long attempts;
            int rc;
            krc_mem_fail_after(n);
            rc = t < 2 ? krc_kube_describe_pod(text, strlen(text), &pod, &events, NULL)
                       : krc_kube_describe_events(text, strlen(text), &events, NULL);
            attempts = krc_mem_fail_after(-1);
            if (rc == 0) {
                krc_free(pod);
                krc_free(events);
            } else {
                assert_int_equal(rc, KRC_ENOMEM);
                assert_null(pod);
                assert_null(events);
            }
            if (attempts <= n) {
                assert_int_equal(rc, 0);
                break;
            }
        }
        assert_true(n > 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_partial_and_errors),
        cmocka_unit_test(test_multiline_message),
        cmocka_unit_test(test_fragment_block),
        cmocka_unit_test(test_bare_event_rows),
        cmocka_unit_test(test_lone_container_line),
        cmocka_unit_test(test_command_line_first),
        cmocka_unit_test(test_command_items_at_column_0),
        cmocka_unit_test(test_fragment_status),
        cmocka_unit_test(test_fragment_events),
        cmocka_unit_test(test_fragment_layouts),
        cmocka_unit_test(test_event_tables),
        cmocka_unit_test(test_old_events_table),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
