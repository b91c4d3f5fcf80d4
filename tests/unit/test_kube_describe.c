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

#include "krc/error.h"
#include "krc/kube_describe.h"
#include "krc/kube_parse.h"
#include "krc/mem.h"
#include "krc/report.h"

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
               "2024-10-22T09:02:31-02:30");
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
    convert("Containers:\n  app:\n", &pod, &events, &err, KRC_EINVAL);
    assert_non_null(strstr(err.msg, "Name:"));
    assert_null(pod);
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
                               "  sidecar:\n"
                               "    Image:          envoy:1\n"
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
    long n;

    (void)state;
    for (n = 0; n < 100000; n++) {
        char *pod = NULL;
        char *events = NULL;
        long attempts;
        int rc;
        krc_mem_fail_after(n);
        rc = krc_kube_describe_pod(describe, strlen(describe), &pod, &events, NULL);
        attempts = krc_mem_fail_after(-1);
        if (rc == 0) {
            krc_free(pod);
            krc_free(events);
        } else {
            assert_int_equal(rc, KRC_ENOMEM);
            assert_null(pod);
        }
        if (attempts <= n) {
            assert_int_equal(rc, 0);
            break;
        }
    }
    assert_true(n > 3);
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
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
