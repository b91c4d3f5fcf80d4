/* restart: the owned copy of a detected restart, in particular the pod JSON
 * it carries to the collector without metadata.managedFields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "krc/detect/restart.h"

static struct krc_restart *restart_with_raw(const char *raw, int copy_pod)
{
    static struct krc_container_info c;
    static struct krc_pod_info p;
    struct krc_restart_delta d;

    memset(&c, 0, sizeof(c));
    memset(&p, 0, sizeof(p));
    c.name = "app";
    c.restart_count = 3;
    p.uid = "0f6c3b2e-1d2a-4c5b-9e8f-7a6b5c4d3e2f";
    p.namespace = "shop";
    p.name = "web-1";
    p.raw = raw;
    p.raw_len = strlen(raw);
    p.n_containers = 1;
    p.containers = &c;
    memset(&d, 0, sizeof(d));
    d.pod = &p;
    d.container = &c;
    d.previous_count = 2;
    return krc_restart_from_delta(&d, copy_pod);
}

/* The copy parses, has the same metadata minus managedFields, and the rest
 * of the object unchanged. */
static void check_stripped(const char *raw, const char *expect)
{
    struct krc_restart *r = restart_with_raw(raw, 1);
    assert_non_null(r);
    assert_non_null(r->pod_json);
    assert_int_equal(r->pod_json_len, strlen(r->pod_json));
    assert_string_equal(r->pod_json, expect);
    if (strcmp(expect, raw) != 0) {
        cJSON *j = cJSON_Parse(r->pod_json);
        assert_non_null(j);
        assert_null(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(j, "metadata"), "managedFields"));
        cJSON_Delete(j);
    }
    assert_string_equal(r->namespace, "shop");
    assert_int_equal(r->ident.restart_count, 3);
    krc_restart_free(r);
}

static void test_managed_fields_in_the_middle(void **state)
{
    (void)state;
    check_stripped(
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"managedFields\":[{\"manager\":"
        "\"kubelet\",\"fieldsV1\":{\"f:status\":{}}}],\"uid\":\"u\"},\"spec\":{}}",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"uid\":\"u\"},\"spec\":{}}");
}

static void test_managed_fields_last(void **state)
{
    (void)state;
    check_stripped("{\"metadata\":{\"name\":\"web-1\", \"managedFields\" : [ {} ] },\"status\":{}}",
                   "{\"metadata\":{\"name\":\"web-1\" },\"status\":{}}");
}

static void test_managed_fields_first_with_whitespace(void **state)
{
    (void)state;
    check_stripped("{\"metadata\": {\n  \"managedFields\": [],\n  \"name\": \"web-1\"\n}}",
                   "{\"metadata\": {\n  \"name\": \"web-1\"\n}}");
}

static void test_managed_fields_only_member(void **state)
{
    (void)state;
    check_stripped("{\"metadata\":{\"managedFields\":[{\"a\":[1,2,{\"b\":\"}]\"}]}]}}",
                   "{\"metadata\":{}}");
}

static void test_escaped_key_is_the_same_member(void **state)
{
    (void)state;
    check_stripped("{\"metadata\":{\"name\":\"x\",\"managed\\u0046ields\":[]}}",
                   "{\"metadata\":{\"name\":\"x\"}}");
}

static void test_kept_when_absent_elsewhere_or_malformed(void **state)
{
    (void)state;
    /* absent */
    check_stripped("{\"metadata\":{\"name\":\"web-1\"},\"spec\":{}}",
                   "{\"metadata\":{\"name\":\"web-1\"},\"spec\":{}}");
    /* a managedFields that is not metadata's is data, not bookkeeping */
    check_stripped("{\"spec\":{\"managedFields\":[]},\"metadata\":{\"name\":\"a\"}}",
                   "{\"spec\":{\"managedFields\":[]},\"metadata\":{\"name\":\"a\"}}");
    check_stripped("{\"metadata\":{\"annotations\":{\"managedFields\":\"x\"}}}",
                   "{\"metadata\":{\"annotations\":{\"managedFields\":\"x\"}}}");
    /* not valid JSON: copied as it is, the collector reports the parse error */
    check_stripped("{\"metadata\":{\"managedFields\":[}", "{\"metadata\":{\"managedFields\":[}");
    check_stripped("[1,2]", "[1,2]");
}

static void test_no_raw_json(void **state)
{
    struct krc_restart *r;
    (void)state;
    r = restart_with_raw("", 1);
    assert_non_null(r);
    assert_null(r->pod_json);
    krc_restart_free(r);
}

/* Without a pod copy (the queue's pod budget is spent) the restart still
 * carries everything detection saw; the collector GETs the pod. */
static void test_without_pod_copy(void **state)
{
    struct krc_restart *r;
    (void)state;
    r = restart_with_raw("{\"metadata\":{\"name\":\"web-1\"}}", 0);
    assert_non_null(r);
    assert_null(r->pod_json);
    assert_int_equal(r->pod_json_len, 0);
    assert_string_equal(r->namespace, "shop");
    assert_string_equal(r->pod, "web-1");
    assert_string_equal(r->ident.container, "app");
    assert_int_equal(r->ident.restart_count, 3);
    assert_int_equal(r->previous_count, 2);
    krc_restart_free(r);
}

/* Without a pod copy the restart keeps the pod's controller owner and its
 * pod-template-hash (the workload a restart that is not collected counts
 * under); with a copy it does not need them; a pod without them, or one the
 * scanner cannot read, leaves them NULL. */
static void test_owner_kept_without_pod_copy(void **state)
{
    struct krc_restart *r;
    (void)state;
    r = restart_with_raw(
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-7d9c8b6f5-x7k2p\",\"labels\":{\"app\":"
        "\"web\",\"pod-template-hash\":\"7d9c8b6f5\"},\"ownerReferences\":[{\"apiVersion\":"
        "\"v1\",\"kind\":\"Node\",\"name\":\"n1\"},{\"apiVersion\":\"apps/v1\",\"kind\":"
        "\"ReplicaSet\",\"name\":\"web-7d9c8b6f5\",\"controller\":true,\"blockOwnerDeletion\":"
        "true}]},\"spec\":{\"containers\":[]}}",
        0);
    assert_non_null(r);
    assert_null(r->pod_json);
    assert_string_equal(r->owner_kind, "ReplicaSet");
    assert_string_equal(r->owner_name, "web-7d9c8b6f5");
    assert_string_equal(r->template_hash, "7d9c8b6f5");
    krc_restart_free(r);

    /* no controller: the first owner, as the pod parser picks it; escapes decoded */
    r = restart_with_raw("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Job\",\"name\":"
                         "\"batch\\u002d1\"},{\"kind\":\"X\",\"name\":\"y\"}]}}",
                         0);
    assert_non_null(r);
    assert_string_equal(r->owner_kind, "Job");
    assert_string_equal(r->owner_name, "batch-1");
    assert_null(r->template_hash);
    krc_restart_free(r);

    r = restart_with_raw("{\"metadata\":{\"name\":\"solo\"}}", 0);
    assert_non_null(r);
    assert_null(r->owner_kind);
    assert_null(r->owner_name);
    krc_restart_free(r);

    r = restart_with_raw("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"ReplicaSet\"", 0);
    assert_non_null(r);
    assert_null(r->owner_kind);
    krc_restart_free(r);

    r = restart_with_raw("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":"
                         "\"web-1\",\"controller\":true}]}}",
                         1);
    assert_non_null(r);
    assert_non_null(r->pod_json);
    assert_null(r->owner_kind);
    krc_restart_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_managed_fields_in_the_middle),
        cmocka_unit_test(test_managed_fields_last),
        cmocka_unit_test(test_managed_fields_first_with_whitespace),
        cmocka_unit_test(test_managed_fields_only_member),
        cmocka_unit_test(test_escaped_key_is_the_same_member),
        cmocka_unit_test(test_kept_when_absent_elsewhere_or_malformed),
        cmocka_unit_test(test_no_raw_json),
        cmocka_unit_test(test_without_pod_copy),
        cmocka_unit_test(test_owner_kept_without_pod_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
