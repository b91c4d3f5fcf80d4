/* The pure parts of the demo's simulated API server: request routing, field
 * selectors and the log window (demo/sim.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/demo/sim.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc_test.h"

static void expect_route(const char *path, enum krc_demo_route_kind kind, const char *ns,
                         const char *name)
{
    struct krc_demo_route r;

    assert_int_equal(krc_demo_route_parse(path, &r), 0);
    assert_int_equal(r.kind, kind);
    assert_string_equal(r.ns, ns);
    assert_string_equal(r.name, name);
}

static void test_routes(void **state)
{
    struct krc_demo_route r;

    (void)state;
    expect_route("/api/v1/pods", KRC_DEMO_ROUTE_PODS, "", "");
    expect_route("/api/v1/namespaces/shop/pods", KRC_DEMO_ROUTE_PODS, "shop", "");
    expect_route("/api/v1/namespaces/shop/pods/web-1", KRC_DEMO_ROUTE_POD, "shop", "web-1");
    expect_route("/api/v1/namespaces/shop/pods/web-1/log", KRC_DEMO_ROUTE_POD_LOG, "shop", "web-1");
    expect_route("/api/v1/events", KRC_DEMO_ROUTE_EVENTS, "", "");
    expect_route("/api/v1/namespaces/default/events", KRC_DEMO_ROUTE_EVENTS, "default", "");
    expect_route("/api/v1/nodes/gpu-a100-07", KRC_DEMO_ROUTE_NODE, "", "gpu-a100-07");
    expect_route("/services/T/B/x", KRC_DEMO_ROUTE_WEBHOOK, "", "");
    expect_route("/apis/events.k8s.io/v1/namespaces/shop/events", KRC_DEMO_ROUTE_KUBE_EVENTS,
                 "shop", "");
    expect_route("/apis/events.k8s.io/v1/namespaces/shop/events/x", KRC_DEMO_ROUTE_NONE, "", "");
    expect_route("/apis/events.k8s.io/v1/events", KRC_DEMO_ROUTE_NONE, "", "");
    /* what the server does not serve */
    expect_route("/api/v1/namespaces/shop/pods/web-1/exec", KRC_DEMO_ROUTE_NONE, "", "");
    expect_route("/api/v1/namespaces/shop/secrets/x", KRC_DEMO_ROUTE_NONE, "", "");
    expect_route("/apis/coordination.k8s.io/v1/namespaces/x/leases", KRC_DEMO_ROUTE_NONE, "", "");
    expect_route("/api/v2/pods", KRC_DEMO_ROUTE_NONE, "", "");
    expect_route("/api", KRC_DEMO_ROUTE_NONE, "", "");
    expect_route("/version", KRC_DEMO_ROUTE_NONE, "", "");
    /* empty segments (the server answers 404) */
    assert_int_equal(krc_demo_route_parse("/api/v1/pods/", &r), KRC_EINVAL);
    assert_int_equal(krc_demo_route_parse("/", &r), KRC_EINVAL);
    assert_int_equal(krc_demo_route_parse("/api//v1/pods", &r), KRC_EINVAL);
    assert_int_equal(krc_demo_route_parse("/api/v1/namespaces//pods", &r), KRC_EINVAL);
}

/* The sim checks krc's Event as the API server does. */
static void expect_list(const char *path, enum krc_demo_route_kind kind, enum krc_demo_resource res,
                        const char *ns, const char *name)
{
    struct krc_demo_route r;

    assert_int_equal(krc_demo_route_parse(path, &r), 0);
    assert_int_equal(r.kind, kind);
    assert_int_equal(r.res, res);
    assert_string_equal(r.ns, ns);
    assert_string_equal(r.name, name);
}

/* The resources of change tracking (src/track/track.c's paths), cluster-wide
 * and per namespace, and one object; nothing else of their groups. */
static void test_tracking_routes(void **state)
{
    struct krc_demo_route r;
    static const struct {
        const char *gv;
        const char *plural;
        enum krc_demo_resource res;
        const char *kind;
    } all[] = {
        {"apps/v1", "deployments", KRC_DEMO_RES_DEPLOYMENTS, "Deployment"},
        {"apps/v1", "replicasets", KRC_DEMO_RES_REPLICASETS, "ReplicaSet"},
        {"apps/v1", "statefulsets", KRC_DEMO_RES_STATEFULSETS, "StatefulSet"},
        {"apps/v1", "daemonsets", KRC_DEMO_RES_DAEMONSETS, "DaemonSet"},
        {"apps/v1", "controllerrevisions", KRC_DEMO_RES_CONTROLLERREVISIONS, "ControllerRevision"},
        {"batch/v1", "jobs", KRC_DEMO_RES_JOBS, "Job"},
        {"batch/v1", "cronjobs", KRC_DEMO_RES_CRONJOBS, "CronJob"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        char path[256];
        const struct krc_demo_resource_info *ri = krc_demo_resource_info(all[i].res);
        assert_non_null(ri);
        assert_string_equal(ri->plural, all[i].plural);
        assert_string_equal(ri->api_version, all[i].gv);
        assert_string_equal(ri->kind, all[i].kind);
        assert_true(ri->namespaced);
        snprintf(path, sizeof(path), "/apis/%s/%s", all[i].gv, all[i].plural);
        expect_list(path, KRC_DEMO_ROUTE_LIST, all[i].res, "", "");
        snprintf(path, sizeof(path), "/apis/%s/namespaces/llm/%s", all[i].gv, all[i].plural);
        expect_list(path, KRC_DEMO_ROUTE_LIST, all[i].res, "llm", "");
        snprintf(path, sizeof(path), "/apis/%s/namespaces/llm/%s/x-1", all[i].gv, all[i].plural);
        expect_list(path, KRC_DEMO_ROUTE_OBJECT, all[i].res, "llm", "x-1");
        /* a subresource, the cluster-wide name of a namespaced object */
        snprintf(path, sizeof(path), "/apis/%s/namespaces/llm/%s/x-1/status", all[i].gv,
                 all[i].plural);
        expect_list(path, KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
        snprintf(path, sizeof(path), "/apis/%s/%s/x-1", all[i].gv, all[i].plural);
        expect_list(path, KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
    }
    expect_list("/api/v1/nodes", KRC_DEMO_ROUTE_LIST, KRC_DEMO_RES_NODES, "", "");
    assert_false(krc_demo_resource_info(KRC_DEMO_RES_NODES)->namespaced);
    assert_null(krc_demo_resource_info(KRC_DEMO_RES_NONE));
    assert_null(krc_demo_resource_info(KRC_DEMO_RES_N));
    /* the group decides: no apps/v1 jobs, no batch/v1 deployments, no v1beta1 */
    expect_list("/apis/apps/v1/jobs", KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
    expect_list("/apis/batch/v1/deployments", KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
    expect_list("/apis/apps/v1beta1/deployments", KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
    expect_list("/apis/apps/v1/namespaces/llm/nodes", KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "",
                "");
    expect_list("/apis/apps/v1", KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
    expect_list("/apis/apps/v1/namespaces/llm", KRC_DEMO_ROUTE_NONE, KRC_DEMO_RES_NONE, "", "");
    assert_int_equal(krc_demo_route_parse("/apis/apps/v1/namespaces//replicasets", &r), KRC_EINVAL);
    assert_int_equal(krc_demo_route_parse("/apis/apps/v1/replicasets/", &r), KRC_EINVAL);
}

/* The Accept header's metadata-only conversion, as krc's watch asks for it
 * (src/kube/watch.c) and as the API server negotiates it. */
static void test_accept_meta(void **state)
{
    (void)state;
    assert_int_equal(krc_demo_accept_meta(NULL), 0);
    assert_int_equal(krc_demo_accept_meta(""), 0);
    assert_int_equal(krc_demo_accept_meta("application/json"), 0);
    assert_int_equal(krc_demo_accept_meta("application/json, */*"), 0);
    assert_int_equal(
        krc_demo_accept_meta("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
        2);
    assert_int_equal(
        krc_demo_accept_meta("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"), 1);
    assert_int_equal(
        krc_demo_accept_meta("application/json; as=PartialObjectMetadata; v=v1; g=meta.k8s.io"), 1);
    /* the first JSON clause decides; other media types are skipped */
    assert_int_equal(krc_demo_accept_meta("application/vnd.kubernetes.protobuf;as="
                                          "PartialObjectMetadata;g=meta.k8s.io;v=v1,application/"
                                          "json"),
                     0);
    assert_int_equal(krc_demo_accept_meta("application/json;as=Table;g=meta.k8s.io;v=v1"), 0);
    /* an unknown conversion, group or version: the next clause, else 406 */
    assert_int_equal(
        krc_demo_accept_meta("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2"),
        KRC_EINVAL);
    assert_int_equal(krc_demo_accept_meta("application/json;as=Foo;g=meta.k8s.io;v=v1"),
                     KRC_EINVAL);
    assert_int_equal(krc_demo_accept_meta("application/json;as=Foo;g=meta.k8s.io;v=v1,application/"
                                          "json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
                     1);
}

static void test_partial_metadata(void **state)
{
    char *t;
    cJSON *o;

    (void)state;
    t = krc_demo_partial_metadata(
        "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"api\","
        "\"managedFields\":[{\"manager\":\"helm\"}]},\"spec\":{\"replicas\":1},\"status\":{}}");
    assert_non_null(t);
    o = cJSON_Parse(t);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind")),
                        "PartialObjectMetadata");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "apiVersion")),
                        "meta.k8s.io/v1");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "name")),
        "api");
    /* the whole metadata, managedFields included; nothing else */
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "managedFields"));
    assert_null(cJSON_GetObjectItem(o, "spec"));
    assert_null(cJSON_GetObjectItem(o, "status"));
    assert_int_equal(cJSON_GetArraySize(o), 3);
    cJSON_Delete(o);
    cJSON_free(t);
    assert_null(krc_demo_partial_metadata("not json"));
    assert_null(krc_demo_partial_metadata("[1]"));
}

static void test_kube_event_check(void **state)
{
    static const char good[] =
        "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
        "\"web-0.18a\",\"namespace\":\"shop\"},\"eventTime\":\"2026-12-03T15:58:00.123456Z\","
        "\"type\":\"Warning\",\"reason\":\"RestartDiagnosed\",\"action\":\"Diagnose\","
        "\"reportingController\":\"krc.io/kube-restart-collector\",\"reportingInstance\":"
        "\"krc-0\",\"regarding\":{\"kind\":\"Pod\",\"name\":\"web-0\"},\"note\":\"x\"}";
    static const char *const drop[] = {
        "eventTime", "reportingController", "reportingInstance", "action", "reason", "regarding"};
    char why[512];
    cJSON *ev = cJSON_Parse(good);
    char *big;

    (void)state;
    assert_non_null(ev);
    assert_int_equal(krc_demo_kube_event_check(ev, "shop", why, sizeof(why)), 0);
    assert_int_equal(krc_demo_kube_event_check(ev, "other", why, sizeof(why)), 400);
    for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
        cJSON *c = cJSON_Duplicate(ev, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(c, drop[i]);
        assert_int_equal(krc_demo_kube_event_check(c, "shop", why, sizeof(why)), 422);
        assert_non_null(strstr(why, drop[i]));
        assert_non_null(strstr(why, "Required value"));
        cJSON_Delete(c);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "type", cJSON_CreateString("Error"));
    assert_int_equal(krc_demo_kube_event_check(ev, "shop", why, sizeof(why)), 422);
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "type", cJSON_CreateString("Warning"));
    big = malloc(1026);
    assert_non_null(big);
    memset(big, 'n', 1025);
    big[1025] = '\0';
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "note", cJSON_CreateString(big));
    assert_int_equal(krc_demo_kube_event_check(ev, "shop", why, sizeof(why)), 422);
    assert_non_null(strstr(why, "note"));
    big[1024] = '\0';
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "note", cJSON_CreateString(big));
    assert_int_equal(krc_demo_kube_event_check(ev, "shop", why, sizeof(why)), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItem(ev, "metadata"), "name",
                                           cJSON_CreateString("Web_0"));
    assert_int_equal(krc_demo_kube_event_check(ev, "shop", why, sizeof(why)), 422);
    free(big);
    cJSON_Delete(ev);
}

static void test_route_segment_too_long(void **state)
{
    char path[600];
    struct krc_demo_route r;

    (void)state;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%0300d/pods", 0);
    assert_int_equal(krc_demo_route_parse(path, &r), KRC_EINVAL);
}

static const char EVENT[] =
    "{\"metadata\":{\"name\":\"e1\",\"namespace\":\"default\"},\"type\":\"Warning\","
    "\"reason\":\"NodeNotReady\",\"source\":{\"component\":\"node-controller\"},"
    "\"involvedObject\":{\"kind\":\"Node\",\"name\":\"n1\",\"uid\":\"u-1\"}}";

static void test_field_selectors(void **state)
{
    cJSON *e = cJSON_Parse(EVENT);
    char bad[64];

    (void)state;
    assert_non_null(e);
    assert_int_equal(krc_demo_field_selector_match(NULL, e, bad, sizeof(bad)), 1);
    assert_int_equal(krc_demo_field_selector_match("", e, bad, sizeof(bad)), 1);
    assert_int_equal(krc_demo_field_selector_match("involvedObject.uid=u-1", e, bad, sizeof(bad)),
                     1);
    assert_int_equal(krc_demo_field_selector_match("involvedObject.uid=u-2", e, bad, sizeof(bad)),
                     0);
    /* the collector's node events query */
    assert_int_equal(
        krc_demo_field_selector_match(
            "involvedObject.kind=Node,involvedObject.name=n1,type!=Normal", e, bad, sizeof(bad)),
        1);
    assert_int_equal(
        krc_demo_field_selector_match("involvedObject.name=n1,type!=Warning", e, bad, sizeof(bad)),
        0);
    assert_int_equal(krc_demo_field_selector_match("type==Warning", e, bad, sizeof(bad)), 1);
    assert_int_equal(krc_demo_field_selector_match("source=node-controller", e, bad, sizeof(bad)),
                     1);
    /* an absent field is "" */
    assert_int_equal(
        krc_demo_field_selector_match("involvedObject.namespace=", e, bad, sizeof(bad)), 1);
    /* malformed, or a field events do not support: the API server's 400 */
    assert_int_equal(krc_demo_field_selector_match("spec.nodeName=n1", e, bad, sizeof(bad)),
                     KRC_EINVAL);
    assert_string_equal(bad, "spec.nodeName");
    assert_int_equal(krc_demo_field_selector_match("reason", e, bad, sizeof(bad)), KRC_EINVAL);
    assert_int_equal(krc_demo_field_selector_match("=x", e, bad, sizeof(bad)), KRC_EINVAL);
    assert_int_equal(krc_demo_field_selector_match("reason=a,,type=b", e, bad, sizeof(bad)),
                     KRC_EINVAL);
    cJSON_Delete(e);
}

static void expect_window(const char *log, long tail, int stamps, long limit, const char *want)
{
    char *got = krc_demo_log_window(log, tail, stamps, 1700000000, limit);

    assert_non_null(got);
    assert_string_equal(got, want);
    krc_free(got);
}

static void test_log_window(void **state)
{
    (void)state;
    expect_window("a\nb\nc\n", -1, 0, -1, "a\nb\nc\n");
    expect_window("a\nb\nc\n", 2, 0, -1, "b\nc\n");
    expect_window("a\nb\nc\n", 3, 0, -1, "a\nb\nc\n");
    expect_window("a\nb\nc\n", 50, 0, -1, "a\nb\nc\n");
    expect_window("a\nb\nc\n", 1, 0, -1, "c\n");
    expect_window("a\nb\nc\n", 0, 0, -1, "");
    expect_window("a\nb\nc", 1, 0, -1, "c"); /* no final newline */
    expect_window("a\nb\nc", 2, 0, -1, "b\nc");
    expect_window("", 10, 0, -1, "");
    expect_window("a\nb\nc\n", -1, 0, 3, "a\nb");
    /* the kubelet's stamps: RFC 3339 with nanoseconds, the last line 1 ms before the end */
    expect_window("x\ny\n", -1, 1, -1,
                  "2023-11-14T22:13:19.998000000Z x\n2023-11-14T22:13:19.999000000Z y\n");
    expect_window("x\ny\n", 1, 1, -1, "2023-11-14T22:13:19.999000000Z y\n");
}

/* Every allocation of the log window may fail: NULL, never a wrong text or a leak. */
static const char *const OOM_LOG = "one\ntwo\nthree\nfour\n";

static long window_failing_after(void *ud, long n)
{
    const char *want = ud;
    char *got;
    long used;

    krc_mem_fail_after(n);
    got = krc_demo_log_window(OOM_LOG, 3, 1, 1700000000, 60);
    used = krc_mem_fail_after(-1);
    if (got != NULL) {
        assert_string_equal(got, want);
    }
    krc_free(got);
    return used;
}

static void test_log_window_out_of_memory(void **state)
{
    char *want = krc_demo_log_window(OOM_LOG, 3, 1, 1700000000, 60);

    (void)state;
    assert_non_null(want);
    assert_true(krc_test_alloc_sweep(window_failing_after, want) > 1);
    krc_free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),           cmocka_unit_test(test_route_segment_too_long),
        cmocka_unit_test(test_kube_event_check), cmocka_unit_test(test_field_selectors),
        cmocka_unit_test(test_log_window),       cmocka_unit_test(test_log_window_out_of_memory),
        cmocka_unit_test(test_tracking_routes),  cmocka_unit_test(test_accept_meta),
        cmocka_unit_test(test_partial_metadata),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
