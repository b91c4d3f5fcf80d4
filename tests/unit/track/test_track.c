/* The tracker: objects fed as the watches deliver them, the "what changed"
 * answer (line and change objects), the ring and its drain, syncs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>
#include <cmocka.h>

#include "krc/track/track.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define T0 1796529120 /* 2026-12-06T03:52:00Z */

static void rfc3339(int64_t t, char *out, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A ReplicaSet of Deployment ns/owner. */
static char *rs(const char *ns, const char *owner, const char *hash, int revision, int64_t created,
                const char *image, const char *memory, int ready)
{
    static char buf[4096];
    char when[32];
    rfc3339(created, when, sizeof(when));
    snprintf(
        buf, sizeof(buf),
        "{\"metadata\":{\"name\":\"%s-%s\",\"namespace\":\"%s\",\"creationTimestamp\":\"%s\","
        "\"labels\":{\"pod-template-hash\":\"%s\"},"
        "\"annotations\":{\"deployment.kubernetes.io/revision\":\"%d\"},"
        "\"ownerReferences\":[{\"kind\":\"Deployment\",\"name\":\"%s\",\"controller\":true}]},"
        "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"api\",\"image\":"
        "\"registry.example.com/shop/%s\",\"env\":[{\"name\":\"TOKEN\",\"value\":\"hunter2\"}],"
        "\"resources\":{\"limits\":{\"memory\":\"%s\"}}}]}}},"
        "\"status\":{\"replicas\":3,\"readyReplicas\":%d}}",
        owner, hash, ns, when, hash, revision, owner, image, memory, ready);
    return buf;
}

static char *deployment(const char *ns, const char *name, int revision, const char *manager,
                        int64_t at)
{
    static char buf[2048];
    char when[32];
    rfc3339(at, when, sizeof(when));
    snprintf(
        buf, sizeof(buf),
        "{\"kind\":\"PartialObjectMetadata\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
        "\"generation\":%d,\"annotations\":{\"deployment.kubernetes.io/revision\":\"%d\"},"
        "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
        "\"time\":\"%s\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{}}},"
        "{\"manager\":\"%s\",\"operation\":\"Update\",\"time\":\"%s\",\"fieldsType\":"
        "\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:template\":{\"f:spec\":{}}}}}]}}",
        name, ns, revision, revision, when, manager, when);
    return buf;
}

static char *node(const char *name, const char *rv, const char *kubelet, const char *taint,
                  const char *mem_pressure)
{
    static char buf[2048];
    snprintf(
        buf, sizeof(buf),
        "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\"},\"spec\":{\"taints\":[%s]},"
        "\"status\":{\"nodeInfo\":{\"kubeletVersion\":\"%s\"},\"conditions\":["
        "{\"type\":\"MemoryPressure\",\"status\":\"%s\"}]}}",
        name, rv, taint, kubelet, mem_pressure);
    return buf;
}

static void feed(struct krc_track *t, enum krc_track_resource r, enum krc_watch_event_type type,
                 const char *json, int64_t now)
{
    struct krc_error e;
    krc_error_clear(&e);
    int rc = krc_track_object(t, r, type, json, strlen(json), now, &e);
    if (rc != 0) {
        fail_msg("krc_track_object: %d %s", rc, e.msg);
    }
}

static void sync_all(struct krc_track *t, int64_t now)
{
    for (int r = 0; r < KRC_TRACK_N_RESOURCES; r++) {
        krc_track_sync_begin(t, (enum krc_track_resource)r, NULL);
        krc_track_sync_end(t, (enum krc_track_resource)r, NULL, now);
    }
}

static int describe(struct krc_track *t, const char *ns, const char *kind, const char *name,
                    const char *nodename, int64_t before, char **line, char **json)
{
    struct krc_track_query q;
    struct krc_error e;
    memset(&q, 0, sizeof(q));
    q.namespace = ns;
    q.workload_kind = kind;
    q.workload_name = name;
    q.node = nodename;
    q.before = before;
    *line = *json = NULL;
    return krc_track_describe(t, &q, before + 5, line, json, &e);
}

/* The example, word for word. */
static void test_rollout_line(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    char *line, *json;

    assert_non_null(t);
    krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, NULL);
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "aaa", 11, T0 - 86400 * 3, "api:1.4.2", "1Gi", 3), T0);
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "bbb", 12, T0, "api:1.4.3", "512Mi", 0), T0);
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, NULL, T0 + 60);
    feed(t, KRC_TRACK_DEPLOYMENTS, KRC_WATCH_ADDED,
         deployment("shop", "api", 12, "kubectl-client-side-apply", T0), T0 + 60);

    assert_int_equal(describe(t, "shop", "Deployment", "api", NULL, T0 + 240, &line, &json), 1);
    assert_string_equal(line, "Deployment shop/api rolled out revision 12 at 03:52, 4 min before "
                              "the first crash: image api:1.4.2 \xe2\x86\x92 api:1.4.3; memory "
                              "limit 1Gi \xe2\x86\x92 512Mi; 3 pods of revision 11 are still "
                              "ready");
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(j), 1);
    cJSON *c = cJSON_GetArrayItem(j, 0);
    assert_string_equal(cJSON_GetObjectItem(c, "kind")->valuestring, "Deployment");
    assert_string_equal(cJSON_GetObjectItem(c, "namespace")->valuestring, "shop");
    assert_string_equal(cJSON_GetObjectItem(c, "name")->valuestring, "api");
    assert_string_equal(cJSON_GetObjectItem(c, "revision")->valuestring, "12");
    assert_string_equal(cJSON_GetObjectItem(c, "at")->valuestring, "2026-12-06T03:52:00Z");
    assert_string_equal(cJSON_GetObjectItem(c, "manager")->valuestring,
                        "kubectl-client-side-apply");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(c, "items")), 2);
    assert_string_equal(cJSON_GetObjectItem(c, "previous_revision")->valuestring, "11");
    assert_int_equal(cJSON_GetObjectItem(c, "previous_ready")->valueint, 3);
    assert_null(strstr(json, "hunter2"));
    cJSON_Delete(j);
    krc_free(line);
    krc_free(json);

    /* a change after the first crash is not before it: the one before is
     * listed (revision 11 is the first revision seen for api) */
    assert_int_equal(describe(t, "shop", "Deployment", "api", NULL, T0 - 60, &line, &json), 1);
    assert_string_equal(line, "No change to the workload in the 24 h before the first crash.");
    assert_string_equal(json, "[]");
    krc_free(line);
    krc_free(json);
    krc_track_free(t);
}

static void test_cannot_say_before_sync(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    char *line = NULL, *json = NULL;

    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "bbb", 12, T0, "api:1.4.3", "512Mi", 0), T0);
    /* not synced yet: nothing said */
    assert_int_equal(describe(t, "shop", "Deployment", "api", NULL, T0 + 240, &line, &json), 0);
    assert_null(line);
    assert_null(json);
    /* kinds the tracker does not follow: nothing said */
    sync_all(t, T0);
    assert_int_equal(describe(t, "shop", "Rollout", "api", NULL, T0 + 240, &line, &json), 0);
    assert_int_equal(describe(t, "shop", "Pod", "api-x", NULL, T0 + 240, &line, &json), 0);
    assert_int_equal(describe(NULL, "shop", "Deployment", "api", NULL, T0, &line, &json), 0);
    struct krc_track_query q;
    struct krc_error e;
    memset(&q, 0, sizeof(q));
    assert_int_equal(krc_track_describe(t, &q, T0, &line, &json, &e), KRC_EINVAL);
    krc_track_free(t);
}

struct drained {
    int n;
    char kind[8][32], ns[8][32], name[8][64], revision[8][24], manager[8][64], summary[8][512];
    char json[8][2048];
    int64_t at[8];
};

static void on_change(const struct krc_track_change *c, void *ud)
{
    struct drained *d = ud;
    if (d->n >= 8) {
        d->n++;
        return;
    }
    snprintf(d->kind[d->n], 32, "%s", c->kind);
    snprintf(d->ns[d->n], 32, "%s", c->namespace);
    snprintf(d->name[d->n], 64, "%s", c->name);
    snprintf(d->revision[d->n], 24, "%s", c->revision);
    snprintf(d->manager[d->n], 64, "%s", c->manager != NULL ? c->manager : "(none)");
    snprintf(d->summary[d->n], 512, "%s", c->summary);
    snprintf(d->json[d->n], 2048, "%s", c->detail_json);
    d->at[d->n] = c->at;
    d->n++;
}

/* Watch order: the new ReplicaSet first, its Deployment's update after;
 * the drain gives the change with its manager, once. */
static void test_live_rollout_is_drained(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct drained d;

    sync_all(t, T0 - 3600);
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "aaa", 1, T0 - 86400 * 3, "api:1.4.2", "1Gi", 3), T0 - 100);
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "bbb", 2, T0, "api:1.4.3", "1Gi", 0), T0);
    feed(t, KRC_TRACK_DEPLOYMENTS, KRC_WATCH_MODIFIED, deployment("shop", "api", 2, "helm", T0),
         T0 + 1);
    /* status-only updates change nothing */
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_MODIFIED,
         rs("shop", "api", "bbb", 2, T0, "api:1.4.3", "1Gi", 1), T0 + 30);

    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 2);
    /* revision 1 arrived after the sync: the Deployment was created */
    assert_string_equal(d.revision[0], "1");
    assert_string_equal(d.summary[0], "created");
    assert_string_equal(d.kind[1], "Deployment");
    assert_string_equal(d.ns[1], "shop");
    assert_string_equal(d.name[1], "api");
    assert_string_equal(d.revision[1], "2");
    assert_string_equal(d.manager[1], "helm");
    assert_int_equal(d.at[1], T0);
    assert_string_equal(d.summary[1], "image api:1.4.2 \xe2\x86\x92 api:1.4.3");
    cJSON *j = cJSON_Parse(d.json[1]);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "manager")->valuestring, "helm");
    assert_int_equal(cJSON_GetObjectItem(j, "previous_ready")->valueint, 3);
    cJSON_Delete(j);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 0); /* once */

    /* a rollback: revision 1's ReplicaSet becomes revision 3 */
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_MODIFIED,
         rs("shop", "api", "aaa", 3, T0 - 86400 * 3, "api:1.4.2", "1Gi", 3), T0 + 600);
    assert_int_equal(krc_track_drain(t, on_change, &d), 1);
    assert_string_equal(d.revision[0], "3");
    assert_int_equal(d.at[0], T0 + 600);
    assert_string_equal(d.summary[0], "image api:1.4.3 \xe2\x86\x92 api:1.4.2");
    krc_track_free(t);
}

static void test_node_changes(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct drained d;
    char *line, *json;

    krc_track_sync_begin(t, KRC_TRACK_NODES, NULL);
    feed(t, KRC_TRACK_NODES, KRC_WATCH_ADDED, node("n1", "10", "v1.33.1", "", "False"), T0);
    feed(t, KRC_TRACK_NODES, KRC_WATCH_ADDED, node("n2", "11", "v1.33.1", "", "False"), T0);
    krc_track_sync_end(t, KRC_TRACK_NODES, NULL, T0);
    sync_all(t, T0);
    /* heartbeats (same facts) record nothing */
    feed(t, KRC_TRACK_NODES, KRC_WATCH_MODIFIED, node("n1", "12", "v1.33.1", "", "False"), T0 + 10);
    feed(t, KRC_TRACK_NODES, KRC_WATCH_MODIFIED,
         node("n1", "20", "v1.34.0",
              "{\"key\":\"gpu\",\"value\":\"broken\",\"effect\":\"NoSchedule\"}", "True"),
         T0 + 100);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 1);
    assert_string_equal(d.kind[0], "Node");
    assert_string_equal(d.ns[0], "");
    assert_string_equal(d.name[0], "n1");
    assert_string_equal(d.revision[0], "20");
    assert_string_equal(d.summary[0], "kubelet v1.33.1 \xe2\x86\x92 v1.34.0; taint "
                                      "gpu=broken:NoSchedule added; condition MemoryPressure "
                                      "False \xe2\x86\x92 True");
    /* a bare pod on n1: its node's change */
    assert_int_equal(describe(t, "shop", "Pod", "solo", "n1", T0 + 400, &line, &json), 1);
    assert_string_equal(line, "Node n1 changed at 03:53, 5 min before the first crash: kubelet "
                              "v1.33.1 \xe2\x86\x92 v1.34.0; taint gpu=broken:NoSchedule added; "
                              "condition MemoryPressure False \xe2\x86\x92 True");
    krc_free(line);
    krc_free(json);
    /* on n2: nothing */
    assert_int_equal(describe(t, "shop", "Pod", "solo", "n2", T0 + 400, &line, &json), 1);
    assert_string_equal(line, "No change to its node in the 24 h before the first crash.");
    krc_free(line);
    krc_free(json);
    /* a Deployment on n1 with no rollout of its own: the node's change */
    assert_int_equal(describe(t, "shop", "Deployment", "web", "n1", T0 + 400, &line, &json), 1);
    assert_non_null(strstr(line, "Node n1 changed"));
    krc_free(line);
    krc_free(json);
    assert_int_equal(describe(t, "shop", "Deployment", "web", "n2", T0 + 400, &line, &json), 1);
    assert_string_equal(line, "No change to the workload or its node in the 24 h before the "
                              "first crash.");
    krc_free(line);
    krc_free(json);
    krc_track_free(t);
}

static const char *CR_FMT =
    "{\"kind\":\"ControllerRevision\",\"metadata\":{\"name\":\"db-%s\",\"namespace\":\"data\","
    "\"creationTimestamp\":\"%s\",\"labels\":{\"controller-revision-hash\":\"db-%s\"},"
    "\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]},"
    "\"data\":{\"spec\":{\"template\":{\"$patch\":\"replace\",\"spec\":{\"containers\":[{\"name\":"
    "\"pg\",\"image\":\"postgres:%s\",\"readinessProbe\":{\"exec\":{\"command\":[\"pg_isready\"]},"
    "\"periodSeconds\":%d}}]}}}},\"revision\":%d}";

static void test_statefulset_revisions(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    char a[2048], b[2048], w1[32], w2[32];
    char *line, *json;

    rfc3339(T0 - 7200, w1, sizeof(w1));
    rfc3339(T0 - 600, w2, sizeof(w2));
    snprintf(a, sizeof(a), CR_FMT, "5c7d", w1, "5c7d", "16.4", 10, 4);
    snprintf(b, sizeof(b), CR_FMT, "8f9e", w2, "8f9e", "17.0", 5, 5);
    krc_track_sync_begin(t, KRC_TRACK_CONTROLLERREVISIONS, NULL);
    feed(t, KRC_TRACK_CONTROLLERREVISIONS, KRC_WATCH_ADDED, b, T0);
    feed(t, KRC_TRACK_CONTROLLERREVISIONS, KRC_WATCH_ADDED, a, T0);
    krc_track_sync_end(t, KRC_TRACK_CONTROLLERREVISIONS, NULL, T0);
    assert_int_equal(describe(t, "data", "StatefulSet", "db", NULL, T0, &line, &json), 1);
    assert_string_equal(line, "StatefulSet data/db rolled out revision 5 at 03:42, 10 min before "
                              "the first crash: image postgres:16.4 \xe2\x86\x92 postgres:17.0; "
                              "readiness probe period 10s \xe2\x86\x92 period 5s. StatefulSet "
                              "data/db rolled out revision 4 at 01:52, 2 h before the first "
                              "crash: the revision before it is not known");
    krc_free(line);
    krc_free(json);
    krc_track_free(t);
}

static const char *CJ_FMT =
    "{\"kind\":\"CronJob\",\"metadata\":{\"name\":\"report\",\"namespace\":\"ops\","
    "\"generation\":%d,\"creationTimestamp\":\"2026-11-01T00:00:00Z\",\"managedFields\":[{"
    "\"manager\":\"argocd\",\"time\":\"%s\",\"fieldsV1\":{\"f:spec\":{\"f:jobTemplate\":{}}}}]},"
    "\"spec\":{\"schedule\":\"%s\",\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{"
    "\"containers\":[{\"name\":\"r\",\"image\":\"report:%s\"}]}}}}}}";

static void test_cronjob_template_change(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    char j[2048], when[32];
    char *line, *json;
    struct drained d;

    rfc3339(T0 - 86400 * 30, when, sizeof(when));
    snprintf(j, sizeof(j), CJ_FMT, 3, when, "0 * * * *", "1");
    krc_track_sync_begin(t, KRC_TRACK_CRONJOBS, NULL);
    feed(t, KRC_TRACK_CRONJOBS, KRC_WATCH_ADDED, j, T0);
    krc_track_sync_end(t, KRC_TRACK_CRONJOBS, NULL, T0);
    /* a schedule change: not the pod template */
    snprintf(j, sizeof(j), CJ_FMT, 4, when, "5 * * * *", "1");
    feed(t, KRC_TRACK_CRONJOBS, KRC_WATCH_MODIFIED, j, T0 + 10);
    rfc3339(T0 + 60, when, sizeof(when));
    snprintf(j, sizeof(j), CJ_FMT, 5, when, "5 * * * *", "2");
    feed(t, KRC_TRACK_CRONJOBS, KRC_WATCH_MODIFIED, j, T0 + 61);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 1);
    assert_string_equal(d.kind[0], "CronJob");
    assert_string_equal(d.revision[0], "5");
    assert_string_equal(d.manager[0], "argocd");
    assert_int_equal(d.at[0], T0 + 60);
    assert_int_equal(describe(t, "ops", "CronJob", "report", NULL, T0 + 120, &line, &json), 1);
    assert_string_equal(line, "CronJob ops/report changed its pod template at 03:53 (generation "
                              "5), 1 min before the first crash: image report:1 \xe2\x86\x92 "
                              "report:2");
    krc_free(line);
    krc_free(json);
    krc_track_free(t);
}

static void test_config_notes(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct krc_track_config_ref ref = {"ConfigMap", "api-config"};
    struct krc_track_config_meta m;
    struct drained d;
    char *line, *json;

    sync_all(t, T0 - 3600);
    memset(&m, 0, sizeof(m));
    m.at = T0 - 120;
    snprintf(m.manager, sizeof(m.manager), "kubectl-edit");
    snprintf(m.resource_version, sizeof(m.resource_version), "812");
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "api", &ref, &m), 0);
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "api", &ref, &m), 0);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 1); /* once per resourceVersion */
    assert_string_equal(d.kind[0], "ConfigMap");
    assert_string_equal(d.summary[0], "data changed");
    assert_string_equal(d.revision[0], "812");
    assert_int_equal(describe(t, "shop", "Deployment", "api", NULL, T0, &line, &json), 1);
    assert_string_equal(line, "ConfigMap shop/api-config data changed at 03:50 by kubectl-edit, "
                              "2 min before the first crash");
    assert_non_null(strstr(json, "\"items\": [\"data changed\"]"));
    krc_free(line);
    krc_free(json);
    /* another workload: not its ConfigMap */
    assert_int_equal(describe(t, "shop", "Deployment", "web", NULL, T0, &line, &json), 1);
    assert_non_null(strstr(line, "No change"));
    krc_free(line);
    krc_free(json);
    krc_track_free(t);
}

/* A ConfigMap two workloads share, at the same resourceVersion: each
 * workload's crash names it (the second must not hear "No change"), and
 * its change is recorded for the history once. */
static void test_shared_config_note(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct krc_track_config_ref ref = {"ConfigMap", "shared-config"};
    struct krc_track_config_meta m;
    struct drained d;
    char *line, *json;
    const char *named = "ConfigMap shop/shared-config data changed at 03:50 by kubectl-edit, 2 "
                        "min before the first crash";

    sync_all(t, T0 - 3600);
    memset(&m, 0, sizeof(m));
    m.at = T0 - 120;
    snprintf(m.manager, sizeof(m.manager), "kubectl-edit");
    snprintf(m.resource_version, sizeof(m.resource_version), "977");
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "api", &ref, &m), 0);
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "web", &ref, &m), 0);
    assert_int_equal(krc_track_note_config(t, "shop", "StatefulSet", "web", &ref, &m), 0);
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "web", &ref, &m), 0);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 1); /* once per resourceVersion */
    assert_string_equal(d.name[0], "shared-config");
    assert_string_equal(d.revision[0], "977");
    assert_int_equal(describe(t, "shop", "Deployment", "api", NULL, T0, &line, &json), 1);
    assert_string_equal(line, named);
    krc_free(line);
    krc_free(json);
    assert_int_equal(describe(t, "shop", "Deployment", "web", NULL, T0, &line, &json), 1);
    assert_string_equal(line, named);
    krc_free(line);
    krc_free(json);
    assert_int_equal(describe(t, "shop", "StatefulSet", "web", NULL, T0, &line, &json), 1);
    assert_string_equal(line, named);
    krc_free(line);
    krc_free(json);
    /* a workload that does not reference it */
    assert_int_equal(describe(t, "shop", "Deployment", "worker", NULL, T0, &line, &json), 1);
    assert_string_equal(line, "No change to the workload in the 24 h before the first crash.");
    krc_free(line);
    krc_free(json);
    /* its next content: recorded again, once */
    m.at = T0 - 60;
    snprintf(m.resource_version, sizeof(m.resource_version), "990");
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "web", &ref, &m), 0);
    assert_int_equal(krc_track_note_config(t, "shop", "Deployment", "api", &ref, &m), 0);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 1);
    assert_string_equal(d.revision[0], "990");
    krc_track_free(t);
}

/* More items than a change keeps: the history's summary and the alert's
 * line list them in the same words, "; and N more" at the end. */
static void test_items_left_out(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    char taints[1024] = "";
    struct drained d;
    char *line, *json;
    const char *items = "taint ka=v:NoSchedule added; taint kb=v:NoSchedule added; taint "
                        "kc=v:NoSchedule added; taint kd=v:NoSchedule added; taint "
                        "ke=v:NoSchedule added; taint kf=v:NoSchedule added; taint "
                        "kg=v:NoSchedule added; taint kh=v:NoSchedule added; and 3 more";

    for (int i = 0; i < 11; i++) {
        size_t len = strlen(taints);
        snprintf(taints + len, sizeof(taints) - len,
                 "%s{\"key\":\"k%c\",\"value\":\"v\",\"effect\":\"NoSchedule\"}", i > 0 ? "," : "",
                 'a' + i);
    }
    sync_all(t, T0);
    feed(t, KRC_TRACK_NODES, KRC_WATCH_ADDED, node("n1", "1", "v1", "", "False"), T0);
    feed(t, KRC_TRACK_NODES, KRC_WATCH_MODIFIED, node("n1", "2", "v1", taints, "False"), T0 + 60);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 1);
    assert_string_equal(d.summary[0], items);
    assert_int_equal(describe(t, "shop", "Pod", "solo", "n1", T0 + 120, &line, &json), 1);
    assert_string_equal(line, "Node n1 changed at 03:53, 1 min before the first crash: taint "
                              "ka=v:NoSchedule added; taint kb=v:NoSchedule added; taint "
                              "kc=v:NoSchedule added; taint kd=v:NoSchedule added; taint "
                              "ke=v:NoSchedule added; taint kf=v:NoSchedule added; taint "
                              "kg=v:NoSchedule added; taint kh=v:NoSchedule added; and 3 more");
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "items")), 8);
    cJSON_Delete(j);
    krc_free(line);
    krc_free(json);
    krc_track_free(t);
}

/* Objects deleted while the watch was down leave at the next sync; the
 * ring keeps max_changes and counts what it dropped. */
static void test_sync_sweep_and_ring(void **state)
{
    (void)state;
    struct krc_track_options o = {86400, 4};
    struct krc_track *t = krc_track_new(&o);
    struct krc_track_stats st;
    struct drained d;

    sync_all(t, T0);
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", i);
        feed(t, KRC_TRACK_NODES, KRC_WATCH_ADDED, node(name, "1", "v1", "", "False"), T0);
        feed(t, KRC_TRACK_NODES, KRC_WATCH_MODIFIED, node(name, "2", "v2", "", "False"), T0 + 1);
    }
    krc_track_get_stats(t, &st);
    assert_int_equal(st.nodes, 6);
    assert_int_equal(st.recorded, 6);
    assert_int_equal(st.changes, 4);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 4);
    assert_string_equal(d.name[0], "n2"); /* oldest kept first */
    krc_track_get_stats(t, &st);
    assert_int_equal(st.dropped, 2);
    /* relist: only n0 is still there */
    krc_track_sync_begin(t, KRC_TRACK_NODES, NULL);
    feed(t, KRC_TRACK_NODES, KRC_WATCH_ADDED, node("n0", "3", "v2", "", "False"), T0 + 50);
    krc_track_sync_end(t, KRC_TRACK_NODES, NULL, T0 + 50);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.nodes, 1);
    /* a deleted ReplicaSet goes; its strings with it */
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "aaa", 1, T0, "api:1", "1Gi", 1), T0);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.revisions, 1);
    size_t strings = st.strings;
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_DELETED,
         rs("shop", "api", "aaa", 1, T0, "api:1", "1Gi", 1), T0);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.revisions, 0);
    assert_true(st.strings < strings);
    krc_track_free(t);
}

/* Watches per namespace (WATCHED_NAMESPACES): a relist of one namespace
 * removes only its own objects, and a namespace not watched is not
 * answered for. */
static void test_namespace_scopes(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct krc_track_stats st;
    char *line, *json;

    assert_int_equal(krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, "a"), 0);
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED, rs("a", "x", "h1", 1, T0, "x:1", "1Gi", 1), T0);
    assert_int_equal(krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, "b"), 0);
    assert_int_equal(krc_track_sync_begin(t, KRC_TRACK_NODES, NULL), 0);
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED, rs("b", "y", "h2", 1, T0, "y:1", "1Gi", 1), T0);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.synced, 0); /* syncing, not synced */
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, "a", T0);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.synced, 1u << KRC_TRACK_REPLICASETS);
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, "b", T0);
    krc_track_sync_end(t, KRC_TRACK_NODES, NULL, T0);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.revisions, 2);
    assert_int_equal(st.synced, (1u << KRC_TRACK_REPLICASETS) | (1u << KRC_TRACK_NODES));
    /* a relists and finds x gone; b keeps y */
    krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, "a");
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, "a", T0 + 10);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.revisions, 1);
    assert_int_equal(describe(t, "b", "Deployment", "y", NULL, T0 + 60, &line, &json), 1);
    assert_non_null(strstr(line, "Deployment b/y rolled out revision 1"));
    krc_free(line);
    krc_free(json);
    assert_int_equal(describe(t, "c", "Deployment", "z", NULL, T0 + 60, &line, &json), 0);
    krc_track_free(t);
}

/* Old revisions keep their entry, not their template; a rollout and a
 * rollback still say what changed. */
static void test_old_templates_are_dropped(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct krc_track_stats st;
    struct drained d;
    const char *images[] = {"api:1", "api:2", "api:3", "api:4"};

    krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, NULL);
    for (int r = 1; r <= 4; r++) {
        char hash[8];
        snprintf(hash, sizeof(hash), "h%d", r);
        feed(
            t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
            rs("shop", "api", hash, r, T0 - 86400 * (10 - r), images[r - 1], "1Gi", r == 4 ? 3 : 0),
            T0);
    }
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, NULL, T0);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.revisions, 4);
    assert_int_equal(st.templates, 1); /* the newest only */
    /* status updates of an old one change nothing */
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_MODIFIED,
         rs("shop", "api", "h1", 1, T0 - 86400 * 9, "api:1", "1Gi", 0), T0 + 1);
    memset(&d, 0, sizeof(d));
    assert_int_equal(krc_track_drain(t, on_change, &d), 0);
    /* a rollout: its items against the newest, kept */
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED,
         rs("shop", "api", "h5", 5, T0 + 10, "api:5", "2Gi", 0), T0 + 10);
    /* a rollback to revision 1 (made revision 6): its template comes with the event */
    feed(t, KRC_TRACK_REPLICASETS, KRC_WATCH_MODIFIED,
         rs("shop", "api", "h1", 6, T0 - 86400 * 9, "api:1", "1Gi", 1), T0 + 20);
    assert_int_equal(krc_track_drain(t, on_change, &d), 2);
    assert_string_equal(d.summary[0], "image api:4 \xe2\x86\x92 api:5; memory limit 1Gi "
                                      "\xe2\x86\x92 2Gi");
    assert_string_equal(d.revision[1], "6");
    assert_string_equal(d.summary[1], "image api:5 \xe2\x86\x92 api:1; memory limit 2Gi "
                                      "\xe2\x86\x92 1Gi");
    krc_track_get_stats(t, &st);
    assert_int_equal(st.templates, 3); /* 6, 5 (before 6), 4 (before 5): all within a day */
    /* a day later, compaction leaves the newest */
    krc_track_compact(t, T0 + 3 * 86400);
    krc_track_get_stats(t, &st);
    assert_int_equal(st.templates, 1);
    assert_int_equal(st.revisions, 5);
    krc_track_free(t);
}

static void test_undecodable_object(void **state)
{
    (void)state;
    struct krc_track *t = krc_track_new(NULL);
    struct krc_track_stats st;
    struct krc_error e;

    krc_error_clear(&e);
    assert_int_equal(
        krc_track_object(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED, "{\"metadata\":", 12, T0, &e),
        KRC_EPARSE);
    assert_int_equal(krc_track_object(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED, "{}", 2, T0, &e),
                     KRC_EPARSE);
    assert_non_null(strstr(e.msg, "replicasets object without metadata.name"));
    krc_track_get_stats(t, &st);
    assert_int_equal(st.undecodable, 2);
    assert_int_equal(st.revisions, 0);
    krc_track_free(t);
}

/* Every allocation failure on the feeding and answering paths is an error,
 * never a crash or a leak (ASan), and leaves a usable tracker. */
static long sweep_run(void *ud, long n)
{
    (void)ud;
    struct krc_track *t = krc_track_new(NULL);
    struct krc_error e;
    char *line = NULL, *json = NULL;
    struct drained d;
    long used;

    if (t == NULL) {
        return 0;
    }
    sync_all(t, T0 - 10);
    krc_mem_fail_after(n);
    const char *a = rs("shop", "api", "aaa", 1, T0 - 86400, "api:1", "1Gi", 3);
    krc_track_object(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED, a, strlen(a), T0, &e);
    const char *b = rs("shop", "api", "bbb", 2, T0, "api:2", "2Gi", 0);
    krc_track_object(t, KRC_TRACK_REPLICASETS, KRC_WATCH_ADDED, b, strlen(b), T0, &e);
    const char *nd = node("n1", "1", "v1", "", "False");
    krc_track_object(t, KRC_TRACK_NODES, KRC_WATCH_ADDED, nd, strlen(nd), T0, &e);
    memset(&d, 0, sizeof(d));
    krc_track_drain(t, on_change, &d);
    struct krc_track_query q = {"shop", "Deployment", "api", NULL, NULL, "n1", T0 + 60};
    if (krc_track_describe(t, &q, T0 + 60, &line, &json, &e) == 1) {
        krc_free(line);
        krc_free(json);
    }
    used = krc_mem_fail_after(-1);
    krc_track_free(t);
    return used;
}

static void test_alloc_failures(void **state)
{
    (void)state;
    assert_true(krc_test_alloc_sweep(sweep_run, NULL) > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollout_line),
        cmocka_unit_test(test_cannot_say_before_sync),
        cmocka_unit_test(test_live_rollout_is_drained),
        cmocka_unit_test(test_node_changes),
        cmocka_unit_test(test_statefulset_revisions),
        cmocka_unit_test(test_cronjob_template_change),
        cmocka_unit_test(test_config_notes),
        cmocka_unit_test(test_shared_config_note),
        cmocka_unit_test(test_items_left_out),
        cmocka_unit_test(test_sync_sweep_and_ring),
        cmocka_unit_test(test_namespace_scopes),
        cmocka_unit_test(test_old_templates_are_dropped),
        cmocka_unit_test(test_undecodable_object),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
