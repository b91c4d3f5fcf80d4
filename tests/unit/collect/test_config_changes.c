/* trackConfigChanges: the collector reads a crashing pod's ConfigMaps and
 * Secrets as metadata only (the Accept header), notes their last data
 * change in the tracker (which then names it), skips a missing one, and
 * turns a 403 into one note naming the RBAC it needs; the collector asks
 * nothing when the setting is off. Against a small API server on 127.0.0.1. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/collect/collector.h"
#include "krc/collect/config_changes.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/serve/http_server.h"
#include "krc/track/track.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "api_fixture.h"
#include "krc_test.h"

#define T0 1796529120 /* 2026-12-06T03:52:00Z */

/* The pod: a ConfigMap volume, a Secret through envFrom, a ConfigMap that
 * does not exist through env valueFrom. */
static const char pod_json[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"api-7d9f-x1\",\"namespace\":\"shop\","
    "\"uid\":\"u-1\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"api-7d9f\","
    "\"controller\":true}]},\"spec\":{\"nodeName\":\"node-a\",\"volumes\":[{\"name\":\"cfg\","
    "\"configMap\":{\"name\":\"api-config\"}}],\"containers\":[{\"name\":\"app\",\"image\":"
    "\"api:1\",\"envFrom\":[{\"secretRef\":{\"name\":\"api-creds\"}}],\"env\":[{\"name\":\"X\","
    "\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"gone\",\"key\":\"x\"}}}]}]},"
    "\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":3}]}}";

/* metadata of the ConfigMap: its data edited at 03:40 by kubectl-edit */
static const char cm_meta[] =
    "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{"
    "\"name\":\"api-config\",\"namespace\":\"shop\",\"resourceVersion\":\"812\","
    "\"creationTimestamp\":\"2026-12-01T00:00:00Z\",\"managedFields\":[{\"manager\":"
    "\"kubectl-edit\",\"operation\":\"Update\",\"time\":\"2026-12-06T03:40:00Z\","
    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:level\":{}}}}]}}";
/* the Secret: created a week ago, never changed since; its last-applied
 * annotation holds its data (never kept, never shown) */
static const char secret_meta[] =
    "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{"
    "\"name\":\"api-creds\",\"namespace\":\"shop\",\"resourceVersion\":\"77\","
    "\"creationTimestamp\":\"2026-11-29T00:00:00Z\",\"annotations\":{"
    "\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"data\\\":{\\\"password\\\":"
    "\\\"aHVudGVyMg==\\\"}}\"}}}";

struct resource {
    const char *path;
    int status;
    const char *body;
    int hits;
    char accept[160];
};

enum { R_CM, R_SECRET, R_GONE, R_COUNT };
static struct resource res[R_COUNT] = {
    {.path = "/api/v1/namespaces/shop/configmaps/api-config"},
    {.path = "/api/v1/namespaces/shop/secrets/api-creds"},
    {.path = "/api/v1/namespaces/shop/configmaps/gone"},
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct krc_test_api api;

static int handle(const struct krc_http_server_request *req, struct krc_http_server_response *resp,
                  void *userdata)
{
    struct resource *r = userdata;
    const char *accept = krc_http_server_request_header(req, "Accept");
    int rc;

    pthread_mutex_lock(&lock);
    r->hits++;
    snprintf(r->accept, sizeof(r->accept), "%s", accept != NULL ? accept : "");
    resp->status = r->status;
    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    if (r->status == 200) {
        rc = krc_buf_append_str(&resp->body, r->body);
    } else {
        rc = krc_buf_printf(&resp->body,
                            "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"scripted "
                            "%d\",\"reason\":\"%s\",\"code\":%d}",
                            r->status, r->status == 404 ? "NotFound" : "Forbidden", r->status);
    }
    pthread_mutex_unlock(&lock);
    return rc < 0 ? KRC_ENOMEM : 0;
}

static void script(int cm_status, int secret_status)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < R_COUNT; i++) {
        res[i].hits = 0;
        res[i].accept[0] = '\0';
    }
    res[R_CM].status = cm_status;
    res[R_CM].body = cm_meta;
    res[R_SECRET].status = secret_status;
    res[R_SECRET].body = secret_meta;
    res[R_GONE].status = 404;
    pthread_mutex_unlock(&lock);
}

static struct resource snap(int i)
{
    struct resource copy;
    pthread_mutex_lock(&lock);
    copy = res[i];
    pthread_mutex_unlock(&lock);
    return copy;
}

static struct krc_kube_client *client(void)
{
    return krc_test_api_client(&api, 5000);
}

/* a tracker that can answer for Deployments (its ReplicaSets synced) */
static struct krc_track *tracker(void)
{
    struct krc_track *t = krc_track_new(NULL);
    assert_non_null(t);
    assert_int_equal(krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, NULL), 0);
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, NULL, T0);
    return t;
}

static void report_of_pod(struct krc_report *rep)
{
    krc_report_init(rep);
    rep->namespace = krc_strdup("shop");
    rep->name = krc_strdup("api-7d9f-x1");
    rep->workload_kind = krc_strdup("Deployment");
    rep->workload_name = krc_strdup("api");
}

struct seen {
    int n;
    char kind[4][16], name[4][64], revision[4][16], summary[4][64], manager[4][32];
};

static void on_change(const struct krc_track_change *c, void *ud)
{
    struct seen *s = ud;
    if (s->n < 4) {
        snprintf(s->kind[s->n], 16, "%s", c->kind);
        snprintf(s->name[s->n], 64, "%s", c->name);
        snprintf(s->revision[s->n], 16, "%s", c->revision);
        snprintf(s->summary[s->n], 64, "%s", c->summary);
        snprintf(s->manager[s->n], 32, "%s", c->manager != NULL ? c->manager : "");
    }
    s->n++;
}

static void test_named_from_metadata(void **state)
{
    (void)state;
    struct krc_kube_client *c = client();
    struct krc_track *t = tracker();
    struct krc_report rep;
    struct seen seen;
    char *line = NULL, *json = NULL;

    script(200, 200);
    report_of_pod(&rep);
    assert_int_equal(krc_collect_config_changes(c, t, pod_json, strlen(pod_json), &rep), 2);
    for (int i = 0; i < R_COUNT; i++) {
        struct resource r = snap(i);
        assert_int_equal(r.hits, 1);
        assert_string_equal(r.accept, KRC_COLLECT_CONFIG_ACCEPT); /* metadata only */
    }
    assert_int_equal(rep.n_notes, 0); /* a missing ConfigMap is no note */
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(krc_track_drain(t, on_change, &seen), 2);
    assert_string_equal(seen.kind[0], "ConfigMap");
    assert_string_equal(seen.name[0], "api-config");
    assert_string_equal(seen.revision[0], "812");
    assert_string_equal(seen.summary[0], "data changed");
    assert_string_equal(seen.manager[0], "kubectl-edit");
    assert_string_equal(seen.kind[1], "Secret");
    assert_string_equal(seen.manager[1], ""); /* its creation: no manager */

    struct krc_track_query q = {"shop", "Deployment", "api", NULL, NULL, NULL, T0 + 240};
    assert_int_equal(krc_track_describe(t, &q, T0 + 300, &line, &json, NULL), 1);
    /* the ConfigMap changed 16 min before; the Secret a week before: outside the 24 h */
    assert_string_equal(line, "ConfigMap shop/api-config data changed at 03:40 by kubectl-edit, "
                              "16 min before the first crash");
    assert_null(strstr(json, "aHVudGVy"));
    assert_null(strstr(json, "hunter2"));
    krc_free(line);
    krc_free(json);
    /* the same again: noted once per resourceVersion */
    assert_int_equal(krc_collect_config_changes(c, t, pod_json, strlen(pod_json), &rep), 2);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(krc_track_drain(t, on_change, &seen), 0);
    krc_report_cleanup(&rep);
    krc_track_free(t);
    krc_kube_client_free(c);
}

static void test_forbidden_is_one_note(void **state)
{
    (void)state;
    struct krc_kube_client *c = client();
    struct krc_track *t = tracker();
    struct krc_report rep;

    script(403, 403);
    report_of_pod(&rep);
    assert_int_equal(krc_collect_config_changes(c, t, pod_json, strlen(pod_json), &rep), 0);
    assert_int_equal(rep.n_notes, 1);
    assert_true(
        krc_test_has_note(&rep, "ConfigMap api-config not readable (403: trackConfigChanges needs "
                                "get on configmaps and secrets)"));
    krc_report_cleanup(&rep);
    krc_track_free(t);
    krc_kube_client_free(c);
}

/* krc_collect: with the setting off (the default), not one request. */
static void test_off_asks_nothing(void **state)
{
    (void)state;
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_track *t = tracker();
    struct krc_restart r;
    struct krc_report rep;

    script(200, 200);
    krc_collector_options_defaults(&o);
    assert_int_equal(o.track_configs, 0);
    assert_null(o.track);
    o.fetch_logs = o.fetch_events = o.fetch_node = 0;
    o.track = t; /* change tracking on, trackConfigChanges off */
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)"api-7d9f-x1";
    (void)krc_restart_ident_set(&r.ident, "u-1", "app", 0, 0, NULL);
    r.pod_json = (char *)pod_json;
    r.pod_json_len = strlen(pod_json);
    krc_report_init(&rep);
    assert_int_equal(krc_collect(c, &r, &o, &rep, NULL), 0);
    for (int i = 0; i < R_COUNT; i++) {
        assert_int_equal(snap(i).hits, 0);
    }
    krc_report_cleanup(&rep);
    /* on: the same collection reads them */
    o.track_configs = 1;
    krc_report_init(&rep);
    assert_int_equal(krc_collect(c, &r, &o, &rep, NULL), 0);
    assert_int_equal(snap(R_CM).hits, 1);
    assert_int_equal(snap(R_SECRET).hits, 1);
    krc_report_cleanup(&rep);
    krc_track_free(t);
    krc_kube_client_free(c);
}

static int setup(void **state)
{
    (void)state;
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    krc_test_api_new(&api);
    for (int i = 0; i < R_COUNT; i++) {
        krc_test_api_get(&api, res[i].path, 1024u * 1024u, handle, &res[i]);
    }
    krc_test_api_start(&api, "test-token");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_api_free(&api);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_from_metadata),
        cmocka_unit_test(test_forbidden_is_one_note),
        cmocka_unit_test(test_off_asks_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
