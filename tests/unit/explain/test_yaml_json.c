/* yaml_json: YAML -> JSON text (scalar typing, documents, Lists) and the
 * errors for what is not YAML; then the converted Pod through kube_parse. */
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
#include "krc/explain/yaml_json.h"

/* Convert a copy without a NUL (ASan catches reads past len). */
static int conv(const char *yaml, const char *kind, size_t max, char **ret, struct krc_error *err)
{
    size_t n = strlen(yaml);
    char *copy = malloc(n ? n : 1);
    size_t len = 0;
    int rc;

    assert_non_null(copy);
    memcpy(copy, yaml, n);
    krc_error_clear(err);
    *ret = NULL;
    rc = krc_yaml_json_convert(copy, n, kind, max, ret, &len, err);
    free(copy);
    if (rc == 0) {
        assert_int_equal(len, strlen(*ret));
    }
    return rc;
}

static void expect_json(const char *yaml, const char *kind, const char *json)
{
    struct krc_error err;
    char *out = NULL;

    assert_int_equal(conv(yaml, kind, 1u << 20, &out, &err), 0);
    assert_string_equal(out, json);
    krc_free(out);
}

static void expect_error(const char *yaml, int code, const char *fragment)
{
    struct krc_error err;
    char *out = NULL;

    assert_int_equal(conv(yaml, NULL, 1u << 20, &out, &err), code);
    assert_null(out);
    if (strstr(err.msg, fragment) == NULL) {
        fail_msg("error '%s' lacks '%s'", err.msg, fragment);
    }
}

static void test_is_json(void **state)
{
    (void)state;
    assert_true(krc_yaml_json_is_json("{}", 2));
    assert_true(krc_yaml_json_is_json("\xEF\xBB\xBF \n\t[1]", 9));
    assert_false(krc_yaml_json_is_json("kind: Pod", 9));
    assert_false(krc_yaml_json_is_json("   ", 3));
    assert_false(krc_yaml_json_is_json("", 0));
    /* the first byte past len is not looked at */
    assert_false(krc_yaml_json_is_json(" {", 1));
}

static void test_scalars(void **state)
{
    (void)state;
    expect_json("a: 1\n"
                "b: -17\n"
                "c: +3\n"
                "d: 0.5\n"
                "e: 1e3\n"
                "f: 007\n"
                "g: .5\n"
                "h: 0x1F\n"
                "i: 0o17\n"
                "j: .inf\n"
                "k: true\n"
                "l: False\n"
                "m: null\n"
                "n: ~\n"
                "o:\n"
                "p: \"137\"\n"
                "q: '0'\n"
                "r: !!str 42\n"
                "s: yes\n"
                "t: 2024-11-14T12:21:22Z\n"
                "u: 1.2.3\n",
                NULL,
                "{\"a\":1,\"b\":-17,\"c\":3,\"d\":0.5,\"e\":1e3,\"f\":7,\"g\":0.5,\"h\":31,"
                "\"i\":15,\"j\":\".inf\",\"k\":true,\"l\":false,\"m\":null,\"n\":null,\"o\":null,"
                "\"p\":\"137\",\"q\":\"0\",\"r\":\"42\",\"s\":\"yes\","
                "\"t\":\"2024-11-14T12:21:22Z\",\"u\":\"1.2.3\"}");
}

static void test_strings_and_structure(void **state)
{
    (void)state;
    /* keys are strings whatever they look like; block scalars keep their
     * newlines; quotes, backslashes and control characters are escaped */
    expect_json("1: x\n"
                "true: y\n"
                "msg: |\n"
                "  line \"one\"\n"
                "  back\\slash\ttab\n"
                "list:\n"
                "- a\n"
                "- {b: [1, 2], c: []}\n"
                "- - nested\n"
                "empty: {}\n"
                "utf8: \"h\\u00e9\"\n",
                NULL,
                "{\"1\":\"x\",\"true\":\"y\",\"msg\":\"line \\\"one\\\"\\nback\\\\slash\\ttab\\n\","
                "\"list\":[\"a\",{\"b\":[1,2],\"c\":[]},[\"nested\"]],\"empty\":{},"
                "\"utf8\":\"h\xC3\xA9\"}");
    expect_json("[1, two]", NULL, "[1,\"two\"]");
}

static void test_documents(void **state)
{
    (void)state;
    /* one document, with markers and empty documents around it */
    expect_json("---\n---\nkind: Pod\n...\n---\n", "Pod", "{\"kind\":\"Pod\"}");
    /* the Pod among other manifests */
    expect_json("kind: Service\n---\nkind: Pod\nx: 1\n---\nkind: ConfigMap\n", "Pod",
                "{\"kind\":\"Pod\",\"x\":1}");
    /* two Pods: a List of both (the Pod decoder then refuses it) */
    expect_json("kind: Pod\nx: 1\n---\nkind: Pod\nx: 2\n", "Pod",
                "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"x\":1},"
                "{\"kind\":\"Pod\",\"x\":2}]}");
    /* no kind asked for, or none of that kind: all of them */
    expect_json("kind: Event\n---\nkind: Event\n", NULL,
                "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"kind\":\"Event\"},"
                "{\"kind\":\"Event\"}]}");
    expect_json("kind: Event\n---\nreason: x\n", "Pod",
                "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"kind\":\"Event\"},"
                "{\"reason\":\"x\"}]}");
    /* a nested "kind" is not the document's */
    expect_json("a: {kind: Pod}\n---\nkind: Pod\n", "Pod", "{\"kind\":\"Pod\"}");
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", KRC_EPARSE, "no document");
    expect_error("# only a comment\n", KRC_EPARSE, "no document");
    expect_error("kind: Pod\nmetadata:\n  labels: {a: b\nspec: {}\n", KRC_EPARSE,
                 "not valid YAML at line 4");
    expect_error("a: b: c\n", KRC_EPARSE, "not valid YAML at line 1, column 5");
    expect_error("<html>502 Bad Gateway</html>\n", KRC_EPARSE,
                 "not JSON or YAML: line 1 is plain text");
    expect_error("a: &x {b: 1}\nc: *x\n", KRC_EUNSUPPORTED, "line 2: aliases");
    expect_error("? [a]\n: b\n", KRC_EUNSUPPORTED, "mapping key");
    expect_error("a: \"\xff\xfe\"\n", KRC_EPARSE, "not UTF-8");
    {
        static const char bin[] = "kind: Pod\n\0\x01\x02";
        struct krc_error err;
        char *out = NULL;
        size_t len = 0;
        assert_int_equal(krc_yaml_json_convert(bin, sizeof(bin) - 1, NULL, 1024, &out, &len, &err),
                         KRC_EPARSE);
        assert_non_null(strstr(err.msg, "binary data"));
        assert_non_null(strstr(err.msg, "offset 10"));
    }
}

static void test_limits(void **state)
{
    char deep[2 * (KRC_YAML_JSON_DEPTH_MAX + 2) + 1];
    struct krc_error err;
    char *out = NULL;

    (void)state;
    for (size_t i = 0; i < KRC_YAML_JSON_DEPTH_MAX + 1; i++) {
        deep[i] = '[';
        deep[KRC_YAML_JSON_DEPTH_MAX + 1 + i] = ']';
    }
    deep[2 * (KRC_YAML_JSON_DEPTH_MAX + 1)] = '\0';
    assert_int_equal(conv(deep, NULL, 1u << 20, &out, &err), KRC_ETOOBIG);
    assert_non_null(strstr(err.msg, "nested deeper"));
    deep[0] = ' '; /* one level less fits */
    deep[2 * (KRC_YAML_JSON_DEPTH_MAX + 1) - 1] = '\0';
    assert_int_equal(conv(deep, NULL, 1u << 20, &out, &err), 0);
    krc_free(out);
    assert_int_equal(conv("a: 0123456789\nb: 0123456789\n", NULL, 20, &out, &err), KRC_ETOOBIG);
    assert_non_null(strstr(err.msg, "20 byte limit"));
}

/* A kubectl -o yaml Pod decodes like its JSON. */
static void test_pod_through_kube_parse(void **state)
{
    static const char yaml[] = "apiVersion: v1\n"
                               "kind: List\n"
                               "items:\n"
                               "- apiVersion: v1\n"
                               "  kind: Pod\n"
                               "  metadata:\n"
                               "    name: web-1\n"
                               "    namespace: shop\n"
                               "    uid: \"1234\"\n"
                               "  spec:\n"
                               "    containers:\n"
                               "    - name: app\n"
                               "      image: shop/web:1.2\n"
                               "  status:\n"
                               "    containerStatuses:\n"
                               "    - name: app\n"
                               "      restartCount: 4\n"
                               "      lastState:\n"
                               "        terminated:\n"
                               "          exitCode: 137\n"
                               "          reason: OOMKilled\n"
                               "          startedAt: \"2026-07-30T07:00:00Z\"\n"
                               "          finishedAt: \"2026-07-30T07:05:00Z\"\n";
    struct krc_error err;
    struct krc_report r;
    char *json = NULL;

    (void)state;
    assert_int_equal(conv(yaml, "Pod", 1u << 20, &json, &err), 0);
    krc_report_init(&r);
    assert_int_equal(krc_kube_parse_pod(json, strlen(json), &r, &err), 0);
    assert_string_equal(r.name, "web-1");
    assert_string_equal(r.uid, "1234");
    assert_int_equal(r.n_containers, 1);
    assert_int_equal(r.containers[0].restart_count, 4);
    assert_true(r.containers[0].last.present);
    assert_int_equal(r.containers[0].last.exit_code, 137);
    assert_string_equal(r.containers[0].last.reason, "OOMKilled");
    assert_int_equal(r.containers[0].last.finished_at - r.containers[0].last.started_at, 300);
    krc_report_cleanup(&r);
    krc_free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_json),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_strings_and_structure),
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_pod_through_kube_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
