/* track's pieces: interned strings, template and node digests (never an env
 * value), the diff items, a pod's ConfigMap/Secret references and what a
 * PartialObjectMetadata says about the last data change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/track/diff.h"
#include "krc/track/digest.h"
#include "krc/track/intern.h"
#include "krc/track/object.h"
#include "krc/track/track.h"
#include "krc/util/mem.h"

/* ---- intern ---------------------------------------------------------------- */

static void test_intern_shares_and_frees(void **state)
{
    (void)state;
    struct krc_intern *in = krc_intern_new();
    uint32_t a, b, c;
    char s[32];

    assert_non_null(in);
    a = krc_intern_add(in, "api:1.4.2", 9);
    b = krc_intern_add(in, "api:1.4.2", 9);
    c = krc_intern_add(in, "api:1.4.3", 9);
    assert_true(a != 0 && a == b && c != a);
    assert_int_equal(krc_intern_count(in), 2);
    assert_string_equal(krc_intern_str(in, a, NULL), "api:1.4.2");
    krc_intern_unref(in, a);
    assert_int_equal(krc_intern_find(in, "api:1.4.2", 9), a); /* one reference left */
    krc_intern_unref(in, b);
    assert_int_equal(krc_intern_find(in, "api:1.4.2", 9), 0);
    assert_int_equal(krc_intern_count(in), 1);
    /* many strings: the table grows, removals shift entries back, every
     * remaining one is still found */
    uint32_t ids[5000];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(s, sizeof(s), "fact-%d", i);
        ids[i] = krc_intern_add(in, s, (size_t)n);
        assert_true(ids[i] != 0);
    }
    for (int i = 0; i < 5000; i += 2) {
        krc_intern_unref(in, ids[i]);
    }
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(s, sizeof(s), "fact-%d", i);
        assert_int_equal(krc_intern_find(in, s, (size_t)n), i % 2 ? ids[i] : 0);
    }
    assert_int_equal(krc_intern_count(in), 2501);
    /* freed ids are reused */
    uint32_t again = krc_intern_add(in, "new", 3);
    int reused = 0;
    for (int i = 0; i < 5000; i += 2) {
        reused |= again == ids[i];
    }
    assert_true(reused);
    krc_intern_free(in);
}

/* ---- digest ---------------------------------------------------------------- */

static const char *RS_JSON =
    "{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\","
    "\"metadata\":{\"name\":\"api-7d9f\",\"namespace\":\"shop\","
    "\"resourceVersion\":\"4711\",\"creationTimestamp\":\"2026-12-06T03:52:00Z\","
    "\"generation\":1,\"labels\":{\"app\":\"api\",\"pod-template-hash\":\"7d9f\"},"
    "\"annotations\":{\"deployment.kubernetes.io/revision\":\"12\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"api\","
    "\"uid\":\"u1\",\"controller\":true}]},"
    "\"spec\":{\"replicas\":3,\"template\":{\"metadata\":{\"labels\":{\"app\":\"api\"}},"
    "\"spec\":{\"serviceAccountName\":\"api-sa\",\"nodeSelector\":{\"disk\":\"ssd\"},"
    "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],"
    "\"volumes\":[{\"name\":\"cfg\",\"configMap\":{\"name\":\"api-config\"}},"
    "{\"name\":\"tls\",\"secret\":{\"secretName\":\"api-tls\"}},"
    "{\"name\":\"tmp\",\"emptyDir\":{}},"
    "{\"name\":\"all\",\"projected\":{\"sources\":[{\"configMap\":{\"name\":\"extra\"}},"
    "{\"secret\":{\"name\":\"creds\"}}]}}],"
    "\"initContainers\":[{\"name\":\"migrate\",\"image\":\"reg.io/shop/migrate:7\"}],"
    "\"containers\":[{\"name\":\"api\",\"image\":\"reg.io/shop/api:1.4.3\","
    "\"command\":[\"/api\"],\"args\":[\"--port\",\"8080\"],"
    "\"env\":[{\"name\":\"DB_PASSWORD\",\"value\":\"s3cr3t-value\"},"
    "{\"name\":\"DB_USER\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"db\",\"key\":\"user\"}}},"
    "{\"name\":\"POD\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}}],"
    "\"envFrom\":[{\"configMapRef\":{\"name\":\"api-env\"}}],"
    "\"resources\":{\"limits\":{\"memory\":\"512Mi\"},\"requests\":{\"cpu\":\"100m\"}},"
    "\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},\"timeoutSeconds\":5}"
    "}]}}},"
    "\"status\":{\"replicas\":3,\"readyReplicas\":2}}";

static int has_fact(const struct krc_facts *f, const char *want)
{
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(krc_facts_get(f, i), want) == 0) {
            return 1;
        }
    }
    return 0;
}

static void test_replicaset_object(void **state)
{
    (void)state;
    struct krc_track_obj o;
    struct krc_error e;

    krc_track_obj_init(&o);
    assert_int_equal(krc_track_obj_parse(&o, KRC_TRACK_REPLICASETS, RS_JSON, strlen(RS_JSON), &e),
                     0);
    assert_string_equal(o.name, "api-7d9f");
    assert_string_equal(o.namespace, "shop");
    assert_string_equal(o.hash, "7d9f");
    assert_string_equal(o.owner_kind, "Deployment");
    assert_string_equal(o.owner_name, "api");
    assert_int_equal(o.revision, 12);
    assert_int_equal(o.ready, 2);
    assert_int_equal(o.created, 1796529120); /* 2026-12-06T03:52:00Z */
    assert_true(o.has_template);
    assert_true(has_fact(&o.facts, "aapi\x1f\x1freg.io/shop/api"));
    assert_true(has_fact(&o.facts, "aapi\x1f:\x1f:1.4.3"));
    assert_true(has_fact(&o.facts, "ainit:migrate\x1f\x1freg.io/shop/migrate"));
    assert_true(has_fact(&o.facts, "ainit:migrate\x1f:\x1f:7"));
    assert_true(has_fact(&o.facts, "bapi\x1fmemory\x1f"
                                   "512Mi"));
    assert_true(has_fact(&o.facts, "capi\x1f"
                                   "cpu\x1f"
                                   "100m"));
    assert_true(has_fact(&o.facts, "dapi\x1f\x1f/api"));
    assert_true(has_fact(&o.facts, "eapi\x1f\x1f--port 8080"));
    assert_true(has_fact(&o.facts, "fapi\x1f"
                                   "DB_PASSWORD\x1f"));
    assert_true(has_fact(&o.facts, "fapi\x1f"
                                   "DB_USER\x1fsecret db/user"));
    assert_true(has_fact(&o.facts, "fapi\x1fPOD\x1f"
                                   "field metadata.name"));
    assert_true(has_fact(&o.facts, "gapi\x1f"
                                   "configMap api-env\x1f"));
    assert_true(has_fact(&o.facts, "hapi\x1fliveness\x1fhttp /healthz:8080\x1e"
                                   "delay 0s\x1eperiod 10s\x1etimeout 5s\x1e"
                                   "failures 3"));
    assert_true(has_fact(&o.facts, "v\x1f"
                                   "cfg\x1f"
                                   "configMap api-config"));
    assert_true(has_fact(&o.facts, "v\x1ftls\x1fsecret api-tls"));
    assert_true(has_fact(&o.facts, "v\x1f"
                                   "all\x1f"
                                   "configMap extra, secret creds"));
    assert_true(has_fact(&o.facts, "w\x1f\x1f"
                                   "api-sa"));
    assert_true(has_fact(&o.facts, "x\x1f"
                                   "disk\x1fssd"));
    assert_true(has_fact(&o.facts, "y\x1fgpu:NoSchedule\x1f"));
    /* an env value is never kept */
    for (size_t i = 0; i < o.facts.n; i++) {
        assert_null(strstr(krc_facts_get(&o.facts, i), "s3cr3t"));
    }
    /* sorted by key */
    for (size_t i = 1; i < o.facts.n; i++) {
        assert_true(strcmp(krc_facts_get(&o.facts, i - 1), krc_facts_get(&o.facts, i)) < 0);
    }
    krc_track_obj_cleanup(&o);
}

static void test_object_errors(void **state)
{
    (void)state;
    struct krc_track_obj o;
    struct krc_error e;
    const char *bad = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"template\":";

    krc_track_obj_init(&o);
    krc_error_clear(&e);
    assert_int_equal(krc_track_obj_parse(&o, KRC_TRACK_REPLICASETS, bad, strlen(bad), &e),
                     KRC_EPARSE);
    assert_non_null(strstr(e.msg, "object"));
    assert_int_equal(krc_track_obj_parse(&o, KRC_TRACK_REPLICASETS, "[]", 2, &e), KRC_EPARSE);
    /* wrong types are skipped, not fatal */
    const char *odd = "{\"metadata\":{\"name\":\"x\",\"labels\":[1]},\"spec\":{\"template\":"
                      "{\"spec\":{\"containers\":{\"name\":\"c\"},\"volumes\":7}}}}";
    assert_int_equal(krc_track_obj_parse(&o, KRC_TRACK_REPLICASETS, odd, strlen(odd), &e), 0);
    assert_int_equal(o.facts.n, 0);
    krc_track_obj_cleanup(&o);
}

/* The revision falls back on metadata.generation (kept negated until an
 * annotation could win): the extreme generations parse, without undefined
 * behaviour (the sanitizer build), to the revision they always gave. */
static void test_generation_revision(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int64_t revision;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"x\",\"generation\":7}}", 7},
        {"{\"metadata\":{\"name\":\"x\",\"generation\":7,"
         "\"annotations\":{\"deployment.kubernetes.io/revision\":\"3\"}}}",
         3},
        {"{\"metadata\":{\"name\":\"x\",\"generation\":9223372036854775807}}", INT64_MAX},
        {"{\"metadata\":{\"name\":\"x\",\"generation\":-9223372036854775808}}", INT64_MIN},
    };
    struct krc_track_obj o;
    struct krc_error e;

    krc_track_obj_init(&o);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(krc_track_obj_parse(&o, KRC_TRACK_DEPLOYMENTS, cases[i].json,
                                             strlen(cases[i].json), &e),
                         0);
        assert_true(o.revision == cases[i].revision);
    }
    krc_track_obj_cleanup(&o);
}

static void test_long_values_are_cut_and_hashed(void **state)
{
    (void)state;
    struct krc_facts f;
    char a[400], b[400];

    memset(a, 'x', sizeof(a) - 1);
    a[sizeof(a) - 1] = '\0';
    memcpy(b, a, sizeof(b));
    b[390] = 'y'; /* differs past the cut */
    krc_facts_init(&f);
    assert_int_equal(krc_facts_add(&f, KRC_FACT_ARGS, "c", 1, "", 0, a, strlen(a)), 0);
    assert_int_equal(krc_facts_add(&f, KRC_FACT_ARGS, "c", 1, "", 0, b, strlen(b)), 0);
    assert_true(strlen(krc_facts_get(&f, 0)) < 200);
    assert_string_not_equal(krc_facts_get(&f, 0), krc_facts_get(&f, 1));
    krc_facts_finish(&f); /* same key: the later stays */
    assert_int_equal(f.n, 1);
    krc_facts_cleanup(&f);
}

static const char *NODE_JSON =
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-1\",\"resourceVersion\":\"99\","
    "\"labels\":{\"nvidia.com/cuda.driver.major\":\"550\",\"nvidia.com/gpu.product\":\"H100\","
    "\"kubernetes.io/hostname\":\"gpu-1\",\"cloud.google.com/gke-gpu-driver-version\":\"latest\"}},"
    "\"spec\":{\"taints\":[{\"key\":\"gpu\",\"value\":\"broken\",\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"nodeInfo\":{\"kubeletVersion\":\"v1.34.0\",\"containerRuntimeVersion\":"
    "\"containerd://2.0.1\",\"kernelVersion\":\"6.8.0\",\"osImage\":\"Ubuntu\","
    "\"machineID\":\"m\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
    "\"lastHeartbeatTime\":\"2026-12-06T03:00:00Z\"},{\"type\":\"MemoryPressure\","
    "\"status\":\"False\"}]}}";

static void test_node_object(void **state)
{
    (void)state;
    struct krc_track_obj o;
    struct krc_error e;

    krc_track_obj_init(&o);
    assert_int_equal(krc_track_obj_parse(&o, KRC_TRACK_NODES, NODE_JSON, strlen(NODE_JSON), &e), 0);
    assert_string_equal(o.name, "gpu-1");
    assert_string_equal(o.resource_version, "99");
    assert_true(has_fact(&o.facts, "A\x1f\x1fv1.34.0"));
    assert_true(has_fact(&o.facts, "B\x1f\x1f"
                                   "containerd://2.0.1"));
    assert_true(has_fact(&o.facts, "C\x1f\x1f"
                                   "6.8.0"));
    assert_true(has_fact(&o.facts, "E\x1fgpu=broken:NoSchedule\x1f"));
    assert_true(has_fact(&o.facts, "F\x1fReady\x1fTrue"));
    assert_true(has_fact(&o.facts, "F\x1fMemoryPressure\x1f"
                                   "False"));
    assert_true(has_fact(&o.facts, "G\x1fnvidia.com/cuda.driver.major\x1f"
                                   "550"));
    assert_true(has_fact(&o.facts, "G\x1f"
                                   "cloud.google.com/gke-gpu-driver-version\x1flatest"));
    for (size_t i = 0; i < o.facts.n; i++) { /* not a driver label, not a heartbeat */
        assert_null(strstr(krc_facts_get(&o.facts, i), "H100"));
        assert_null(strstr(krc_facts_get(&o.facts, i), "hostname"));
        assert_null(strstr(krc_facts_get(&o.facts, i), "2026-12-06"));
    }
    krc_track_obj_cleanup(&o);
}

/* ---- diff ----------------------------------------------------------------- */

static char *diff_text(const char *const *a, size_t na, const char *const *b, size_t nb, size_t max,
                       size_t *more)
{
    struct krc_track_items it;
    char *s;

    krc_track_items_init(&it, max);
    assert_int_equal(krc_track_diff(a, na, b, nb, &it), 0);
    *more = it.more;
    s = krc_buf_take(&it.buf);
    krc_track_items_cleanup(&it);
    return s;
}

static void test_diff_items(void **state)
{
    (void)state;
    const char *a[] = {"aapi\x1f\x1freg.io/shop/api",
                       "aapi\x1f:\x1f:1.4.2",
                       "bapi\x1fmemory\x1f"
                       "1Gi",
                       "fapi\x1f"
                       "A\x1f",
                       "fapi\x1f"
                       "B\x1fsecret x/k",
                       "hapi\x1fliveness\x1fhttp /h:80\x1e"
                       "delay 0s\x1etimeout 1s",
                       "w\x1f\x1f"
                       "default"};
    const char *b[] = {"aapi\x1f\x1freg.io/shop/api",
                       "aapi\x1f:\x1f:1.4.3",
                       "bapi\x1fmemory\x1f"
                       "512Mi",
                       "fapi\x1f"
                       "B\x1fsecret y/k",
                       "fapi\x1f"
                       "C\x1f",
                       "hapi\x1fliveness\x1fhttp /h:80\x1e"
                       "delay 0s\x1etimeout 5s",
                       "w\x1f\x1f"
                       "api"};
    size_t more;
    char *s = diff_text(a, 7, b, 7, 8, &more);

    assert_string_equal(s, "image api:1.4.2 \xe2\x86\x92 api:1.4.3\n"
                           "memory limit 1Gi \xe2\x86\x92 512Mi\n"
                           "env A removed\n"
                           "env B secret x/k \xe2\x86\x92 secret y/k\n"
                           "env C added\n"
                           "liveness probe timeout 1s \xe2\x86\x92 timeout 5s\n"
                           "service account default \xe2\x86\x92 api\n");
    assert_int_equal(more, 0);
    krc_free(s);
    s = diff_text(a, 7, b, 7, 2, &more); /* bounded: the rest counted */
    assert_int_equal(more, 5);
    krc_free(s);
}

static void test_diff_containers(void **state)
{
    (void)state;
    const char *a[] = {"aapp\x1f\x1f"
                       "app",
                       "aapp\x1f:\x1f:1",
                       "bapp\x1f"
                       "cpu\x1f"
                       "1"};
    const char *b[] = {"aapp\x1f\x1f"
                       "app",
                       "aapp\x1f:\x1f:1",
                       "aside\x1f\x1freg/envoy",
                       "aside\x1f:\x1f:1.30",
                       "bapp\x1f"
                       "cpu\x1f"
                       "2",
                       "bside\x1f"
                       "cpu\x1f"
                       "1"};
    size_t more;
    char *s = diff_text(a, 3, b, 6, 8, &more);

    /* two containers now: items name theirs; the new one's facts are not listed */
    assert_string_equal(s, "container side added (envoy:1.30)\n"
                           "container app cpu limit 1 \xe2\x86\x92 2\n");
    krc_free(s);
    char img[64];
    krc_track_short_image("reg.io/a/b@sha256:0123456789abcdef0123", img, sizeof(img));
    assert_string_equal(img, "b@0123456789ab");
    assert_int_equal(krc_digest_image_split("reg.io:5000/a/b:1.2@sha256:ab", 29), 15);
    assert_int_equal(krc_digest_image_split("reg.io:5000/a/b@sha256:ab", 25), 15);
    assert_int_equal(krc_digest_image_split("reg.io:5000/a/b", 15), 15);
    assert_int_equal(krc_digest_image_split("busybox", 7), 7);
}

/* ---- ConfigMap / Secret ----------------------------------------------------- */

static void test_config_refs(void **state)
{
    (void)state;
    const char *pod_head = "{\"metadata\":{\"name\":\"p\"},\"spec\":";
    char pod[8192];
    struct krc_track_config_ref refs[KRC_TRACK_CONFIG_REFS];
    size_t n, more;
    struct krc_error e;
    const char *spec = strstr(RS_JSON, "\"spec\":{\"serviceAccountName\"") + 7;
    size_t spec_len = strlen(spec) - strlen("}},\"status\":{\"replicas\":3,\"readyReplicas\":2}}");

    snprintf(pod, sizeof(pod), "%s%.*s}", pod_head, (int)spec_len, spec);
    assert_int_equal(krc_track_config_refs(pod, strlen(pod), refs, 8, &n, &more, &e), 0);
    assert_int_equal(n, 6);
    assert_int_equal(more, 0);
    assert_string_equal(refs[0].kind, "ConfigMap"); /* volumes, in the pod's order */
    assert_string_equal(refs[0].name, "api-config");
    assert_string_equal(refs[1].kind, "Secret");
    assert_string_equal(refs[1].name, "api-tls");
    assert_string_equal(refs[2].name, "extra");
    assert_string_equal(refs[3].name, "creds");
    assert_string_equal(refs[4].name, "api-env"); /* envFrom */
    assert_string_equal(refs[5].kind, "Secret");  /* env valueFrom, without the key */
    assert_string_equal(refs[5].name, "db");
    assert_int_equal(krc_track_config_refs(pod, strlen(pod), refs, 2, &n, &more, &e), 0);
    assert_int_equal(n, 2);
    assert_int_equal(more, 4);
}

static void test_config_meta(void **state)
{
    (void)state;
    struct krc_track_config_meta m;
    struct krc_error e;
    const char *meta =
        "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{"
        "\"name\":\"api-config\",\"namespace\":\"shop\",\"resourceVersion\":\"812\","
        "\"creationTimestamp\":\"2026-12-01T00:00:00Z\",\"managedFields\":["
        "{\"manager\":\"kubectl-client-side-apply\",\"operation\":\"Update\","
        "\"time\":\"2026-12-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":"
        "{\".\":{},\"f:a\":{}}}},"
        "{\"manager\":\"kubectl-edit\",\"operation\":\"Update\",\"time\":\"2026-12-06T03:40:00Z\","
        "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:a\":{}}}},"
        "{\"manager\":\"labeller\",\"operation\":\"Update\",\"time\":\"2026-12-06T05:00:00Z\","
        "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{}}}}]}}";
    const char *created_only = "{\"metadata\":{\"name\":\"s\",\"resourceVersion\":\"5\","
                               "\"creationTimestamp\":\"2026-12-05T00:00:00Z\"}}";

    assert_int_equal(krc_track_config_meta_parse(meta, strlen(meta), &m, &e), 0);
    assert_int_equal(m.at, 1796528400); /* 03:40, not the later label change */
    assert_string_equal(m.manager, "kubectl-edit");
    assert_string_equal(m.resource_version, "812");
    assert_true(m.from_managed_fields);
    assert_int_equal(krc_track_config_meta_parse(created_only, strlen(created_only), &m, &e), 0);
    assert_int_equal(m.at, 1796428800);
    assert_string_equal(m.manager, "");
    assert_false(m.from_managed_fields);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern_shares_and_frees),
        cmocka_unit_test(test_replicaset_object),
        cmocka_unit_test(test_object_errors),
        cmocka_unit_test(test_generation_revision),
        cmocka_unit_test(test_long_values_are_cut_and_hashed),
        cmocka_unit_test(test_node_object),
        cmocka_unit_test(test_diff_items),
        cmocka_unit_test(test_diff_containers),
        cmocka_unit_test(test_config_refs),
        cmocka_unit_test(test_config_meta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
