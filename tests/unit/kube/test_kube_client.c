/* Kubernetes client pieces that need no server: error translation (status,
 * Status body, and for 403 the missing permission) and query building. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/http.h"
#include "krc/kube/kube_client.h"
#include "krc/util/mem.h"
#include "krc_test.h"

static void assert_contains(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle) == NULL) {
        fail_msg("\"%s\"\n    does not contain \"%s\"", haystack, needle);
    }
}

static void assert_one_line(const char *s)
{
    for (const char *p = s; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            fail_msg("control character 0x%02x at %zu in \"%s\"", (unsigned char)*p,
                     (size_t)(p - s), s);
        }
    }
}

#define JSON "application/json"

/* A Kubernetes Status body. */
static const char *status_body(char *out, size_t outsz, int code, const char *reason,
                               const char *message)
{
    snprintf(out, outsz,
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
             "\"message\":\"%s\",\"reason\":\"%s\",\"details\":{\"kind\":\"pods\"},\"code\":%d}",
             message, reason, code);
    return out;
}

static int translate(const char *method, const char *path, long status, const char *body,
                     const char *ctype, int retry_after, struct krc_error *err)
{
    krc_error_clear(err);
    return krc_kube_translate_error(method, path, status, body, body ? strlen(body) : 0, ctype,
                                    retry_after, err);
}

/* --- 403: which permission is missing ------------------------------------- */

struct forbidden_case {
    const char *method;
    const char *path;
    const char *hint;
};

static void test_403_names_missing_permission(void **state)
{
    static const struct forbidden_case cases[] = {
        {"GET", "/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=812",
         "cannot watch pods at cluster scope"},
        {"GET", "/api/v1/pods?limit=500", "cannot list pods at cluster scope"},
        {"GET", "/api/v1/pods", "cannot list pods at cluster scope"},
        {"GET", "/api/v1/namespaces/team-a/pods?limit=500&labelSelector=app%3Dweb",
         "cannot list pods in namespace \"team-a\""},
        {"GET", "/api/v1/namespaces/team-a/pods?watch=1&resourceVersion=5",
         "cannot watch pods in namespace \"team-a\""},
        {"GET", "/api/v1/namespaces/team-a/pods/web-1", "cannot get pods in namespace \"team-a\""},
        {"GET", "/api/v1/namespaces/team-a/pods/web-1/log?container=app&previous=true",
         "cannot get pods/log in namespace \"team-a\""},
        {"GET", "/api/v1/namespaces/team-a/events?fieldSelector=involvedObject.uid%3Dabc",
         "cannot list events in namespace \"team-a\""},
        {"GET", "/api/v1/nodes/node-7", "cannot get nodes at cluster scope"},
        {"POST", "/apis/coordination.k8s.io/v1/namespaces/krc/leases",
         "cannot create leases in namespace \"krc\""},
        {"PUT", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc-leader",
         "cannot update leases in namespace \"krc\""},
        {"GET", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc-leader",
         "cannot get leases in namespace \"krc\""},
        {"DELETE", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc-leader",
         "cannot delete leases in namespace \"krc\""},
        {"PATCH", "/api/v1/namespaces/x/pods/p", "cannot patch pods in namespace \"x\""},
    };
    char body[1024];
    struct krc_error err;
    (void)state;

    status_body(body, sizeof(body), 403, "Forbidden",
                "pods is forbidden: User \\\"system:serviceaccount:krc:krc\\\" cannot list "
                "resource \\\"pods\\\" in API group \\\"\\\" at the cluster scope");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char head[600];
        char path[512];
        size_t n = strcspn(cases[i].path, "?");

        memcpy(path, cases[i].path, n);
        path[n] = '\0';
        assert_int_equal(translate(cases[i].method, cases[i].path, 403, body, JSON, -1, &err),
                         KRC_EAUTH);
        assert_int_equal(err.code, KRC_EAUTH);
        assert_int_equal(err.http_status, 403);
        /* method, path without the query, status and reason */
        snprintf(head, sizeof(head), "%s %s: 403 Forbidden", cases[i].method, path);
        assert_contains(err.msg, head);
        assert_contains(err.msg, cases[i].hint);
        /* and the API server's own words */
        assert_contains(err.msg, "User \"system:serviceaccount:krc:krc\" cannot list");
        assert_null(strchr(err.msg, '?'));
        assert_one_line(err.msg);
    }
}

static void test_403_without_body(void **state)
{
    struct krc_error err;
    (void)state;

    assert_int_equal(translate("GET", "/api/v1/pods?watch=true", 403, NULL, NULL, -1, &err),
                     KRC_EAUTH);
    assert_contains(err.msg, "GET /api/v1/pods: 403 Forbidden");
    assert_contains(err.msg, "cannot watch pods at cluster scope");
    assert_contains(err.msg, "no message");
}

/* A long Status message is cut, but the permission hint survives. */
static void test_403_long_message_keeps_hint(void **state)
{
    char msg[1500];
    char body[2000];
    struct krc_error err;
    (void)state;

    memset(msg, 'm', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    status_body(body, sizeof(body), 403, "Forbidden", msg);
    assert_int_equal(
        translate("GET", "/api/v1/namespaces/ns1/pods?limit=5", 403, body, JSON, -1, &err),
        KRC_EAUTH);
    assert_contains(err.msg, "cannot list pods in namespace \"ns1\"");
    assert_true(strlen(err.msg) < sizeof(err.msg));
}

/* --- other statuses -------------------------------------------------------- */

static void test_401(void **state)
{
    char body[512];
    struct krc_error err;
    (void)state;

    status_body(body, sizeof(body), 401, "Unauthorized", "Unauthorized");
    assert_int_equal(translate("GET", "/api/v1/pods?limit=500", 401, body, JSON, -1, &err),
                     KRC_EAUTH);
    assert_int_equal(err.http_status, 401);
    assert_contains(err.msg, "GET /api/v1/pods: 401 Unauthorized");
    /* a credential problem, not a permission one */
    assert_null(strstr(err.msg, "cannot "));

    assert_int_equal(translate("PUT", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/l", 401,
                               NULL, NULL, -1, &err),
                     KRC_EAUTH);
    assert_contains(err.msg, "PUT /apis/coordination.k8s.io/v1/namespaces/krc/leases/l: 401");
}

static void test_404_409_410_422(void **state)
{
    char body[512];
    struct krc_error err;
    (void)state;

    status_body(body, sizeof(body), 404, "NotFound", "pods \\\"web-1\\\" not found");
    assert_int_equal(translate("GET", "/api/v1/namespaces/a/pods/web-1/log?previous=true", 404,
                               body, JSON, -1, &err),
                     KRC_ENOTFOUND);
    assert_int_equal(err.http_status, 404);
    assert_contains(err.msg, "GET /api/v1/namespaces/a/pods/web-1/log: 404 NotFound");
    assert_contains(err.msg, "pods \"web-1\" not found");

    status_body(body, sizeof(body), 409, "AlreadyExists",
                "leases.coordination.k8s.io \\\"krc\\\" already exists");
    assert_int_equal(translate("POST", "/apis/coordination.k8s.io/v1/namespaces/krc/leases", 409,
                               body, JSON, -1, &err),
                     KRC_ECONFLICT);
    assert_int_equal(err.http_status, 409);
    assert_contains(err.msg, "409 AlreadyExists");
    assert_contains(err.msg, "leases.coordination.k8s.io \"krc\" already exists");

    status_body(body, sizeof(body), 410, "Expired", "too old resource version: 812 (9001)");
    assert_int_equal(
        translate("GET", "/api/v1/pods?watch=true&resourceVersion=812", 410, body, JSON, -1, &err),
        KRC_EGONE);
    assert_int_equal(err.http_status, 410);
    assert_contains(err.msg, "GET /api/v1/pods: 410 Expired: too old resource version: 812 (9001)");

    status_body(body, sizeof(body), 422, "Invalid",
                "Lease.coordination.k8s.io \\\"krc\\\" is invalid: spec.holderIdentity: Required");
    assert_int_equal(translate("PUT", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc", 422,
                               body, JSON, -1, &err),
                     KRC_EHTTP);
    assert_int_equal(err.code, KRC_EHTTP);
    assert_int_equal(err.http_status, 422);
    assert_contains(err.msg, "422 Invalid");
    assert_contains(err.msg, "spec.holderIdentity: Required");

    /* no reason in the body: the standard status text */
    assert_int_equal(translate("GET", "/api/v1/pods", 410, "{\"kind\":\"Status\"}", JSON, -1, &err),
                     KRC_EGONE);
    assert_contains(err.msg, "GET /api/v1/pods: 410 Gone");
}

static void test_429_plain_text_retry_after(void **state)
{
    struct krc_error err;
    (void)state;

    assert_int_equal(translate("GET", "/api/v1/pods?limit=500", 429,
                               "Too many requests, please try again later.\n",
                               "text/plain; charset=utf-8", 3, &err),
                     KRC_ERATELIMIT);
    assert_int_equal(err.code, KRC_ERATELIMIT);
    assert_int_equal(err.http_status, 429);
    assert_int_equal(err.retry_after, 3);
    assert_contains(err.msg, "GET /api/v1/pods: 429 Too Many Requests");
    assert_contains(err.msg, "Too many requests, please try again later.");
    assert_contains(err.msg, "Retry-After 3s");
    assert_one_line(err.msg);

    /* no Retry-After header */
    assert_int_equal(translate("GET", "/api/v1/pods", 429, NULL, NULL, -1, &err), KRC_ERATELIMIT);
    assert_null(strstr(err.msg, "Retry-After"));
    assert_contains(err.msg, "rate limited");

    /* a Status body from the API server's priority and fairness */
    assert_int_equal(translate("GET", "/api/v1/pods", 429,
                               "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\","
                               "\"message\":\"the server has received too many requests\","
                               "\"details\":{\"retryAfterSeconds\":1},\"code\":429}",
                               JSON, 1, &err),
                     KRC_ERATELIMIT);
    assert_contains(err.msg, "429 TooManyRequests: the server has received too many requests");
    assert_int_equal(err.retry_after, 1);
}

static void test_500_status_json(void **state)
{
    char body[512];
    struct krc_error err;
    (void)state;

    status_body(body, sizeof(body), 500, "InternalError",
                "Internal error occurred: etcdserver: request timed out");
    assert_int_equal(
        translate("GET", "/api/v1/pods?limit=500&continue=abc", 500, body, JSON, -1, &err),
        KRC_EHTTP);
    assert_int_equal(err.http_status, 500);
    assert_string_equal(err.msg, "GET /api/v1/pods: 500 InternalError: Internal error occurred: "
                                 "etcdserver: request timed out");

    /* JSON without a content type is still recognised */
    assert_int_equal(translate("GET", "/api/v1/pods", 503, body, NULL, -1, &err), KRC_EHTTP);
    assert_contains(err.msg, "etcdserver: request timed out");
}

static void test_non_json_body_with_control_chars(void **state)
{
    static const char body[] = "<html>\r\n<body>\x1b[31mBad gateway\x1b[0m\tupstream\x00hidden"
                               "</body>\n</html>\n\n";
    struct krc_error err;
    (void)state;

    krc_error_clear(&err);
    assert_int_equal(krc_kube_translate_error("GET", "/api/v1/pods", 502, body, sizeof(body) - 1,
                                              "text/html", -1, &err),
                     KRC_EHTTP);
    assert_int_equal(err.http_status, 502);
    assert_contains(err.msg, "GET /api/v1/pods: 502 Bad Gateway: <html>");
    assert_contains(err.msg, "Bad gateway");
    assert_contains(err.msg, "upstream hidden"); /* the NUL did not end the text */
    assert_one_line(err.msg);
    /* trailing whitespace is trimmed */
    assert_int_equal(err.msg[strlen(err.msg) - 1], '>');

    /* broken JSON falls back to text */
    assert_int_equal(translate("GET", "/api/v1/pods", 500, "{\"message\": \"cut", JSON, -1, &err),
                     KRC_EHTTP);
    assert_contains(err.msg, "500 Internal Server Error: {\"message\": \"cut");

    /* a JSON value that is not an object */
    assert_int_equal(translate("GET", "/api/v1/pods", 500, "\"just a string\"", JSON, -1, &err),
                     KRC_EHTTP);
    assert_contains(err.msg, "500 Internal Server Error");

    /* a huge text body is cut to fit */
    {
        char *big = malloc(100001);
        assert_non_null(big);
        memset(big, 'x', 100000);
        big[100000] = '\0';
        assert_int_equal(translate("GET", "/api/v1/pods", 500, big, "text/plain", -1, &err),
                         KRC_EHTTP);
        assert_true(strlen(err.msg) < sizeof(err.msg));
        assert_contains(err.msg, "500 Internal Server Error: xxxx");
        free(big);
    }
}

static void test_empty_body(void **state)
{
    struct krc_error err;
    (void)state;

    assert_int_equal(translate("GET", "/api/v1/pods?limit=1", 503, "", NULL, -1, &err), KRC_EHTTP);
    assert_string_equal(err.msg, "GET /api/v1/pods: 503 Service Unavailable");
    assert_int_equal(err.http_status, 503);
    assert_int_equal(translate("GET", "/api/v1/pods", 504, NULL, JSON, -1, &err), KRC_EHTTP);
    assert_string_equal(err.msg, "GET /api/v1/pods: 504 Gateway Timeout");
    /* whitespace only */
    assert_int_equal(translate("GET", "/api/v1/pods", 502, " \r\n", "text/plain", -1, &err),
                     KRC_EHTTP);
    assert_string_equal(err.msg, "GET /api/v1/pods: 502 Bad Gateway");
    /* a status without a standard text still names its number */
    assert_int_equal(translate("GET", "/api/v1/pods", 418, NULL, NULL, -1, &err), KRC_EHTTP);
    assert_contains(err.msg, "GET /api/v1/pods: 418");
    assert_int_equal(err.http_status, 418);
    /* err may be NULL */
    assert_int_equal(krc_kube_translate_error("GET", "/x", 404, NULL, 0, NULL, -1, NULL),
                     KRC_ENOTFOUND);
}

/* error.h promises a one-line message. BUG (src/kube/kube_client.c status_fields):
 * the plain-text branch folds control characters, but a Status "message"
 * (admission webhooks often send several lines) is copied as is, so err->msg
 * holds raw newlines. */
static void test_fixed_status_message_newlines_not_folded(void **state)
{
    struct krc_error err;
    (void)state;

    assert_int_equal(translate("POST", "/apis/coordination.k8s.io/v1/namespaces/krc/leases", 400,
                               "{\"kind\":\"Status\",\"reason\":\"BadRequest\",\"message\":"
                               "\"admission webhook denied the request:\\nline two\\r\\n\"}",
                               JSON, -1, &err),
                     KRC_EHTTP);
    assert_contains(err.msg, "admission webhook denied the request:");
    assert_one_line(err.msg); /* fails: '\n' in err.msg */
}

/* --- query strings --------------------------------------------------------- */

static void test_query_add(void **state)
{
    struct krc_buf q;
    (void)state;

    krc_buf_init(&q, 4096);
    assert_int_equal(krc_kube_query_add(&q, "limit", "500"), 0);
    assert_string_equal(krc_buf_str(&q), "limit=500");
    assert_int_equal(krc_kube_query_add(&q, "labelSelector", "app in (a,b),tier!=batch"), 0);
    assert_int_equal(krc_kube_query_add(&q, "continue", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ=="), 0);
    assert_int_equal(krc_kube_query_add(&q, "fieldSelector", "involvedObject.uid=1-2_3~4"), 0);
    assert_int_equal(krc_kube_query_add(&q, "empty", ""), 0);
    assert_string_equal(krc_buf_str(&q), "limit=500"
                                         "&labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Dbatch"
                                         "&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ%3D%3D"
                                         "&fieldSelector=involvedObject.uid%3D1-2_3~4"
                                         "&empty=");
    krc_buf_reset(&q);
    /* characters that would end or split the query, and non-ASCII */
    assert_int_equal(krc_kube_query_add(&q, "v", "a&b=c#d?e/f+g%h caf\xc3\xa9"), 0);
    assert_string_equal(krc_buf_str(&q), "v=a%26b%3Dc%23d%3Fe%2Ff%2Bg%25h%20caf%C3%A9");
    krc_buf_cleanup(&q);
}

static void test_query_add_limits(void **state)
{
    struct krc_buf q;
    (void)state;

    krc_buf_init(&q, 16);
    assert_int_equal(krc_kube_query_add(&q, "limit", "500"), 0);
    assert_int_equal(krc_kube_query_add(&q, "labelSelector", "x"), KRC_ETOOBIG);
    assert_string_equal(krc_buf_str(&q), "limit=500");
    krc_mem_fail_after(0);
    assert_int_equal(krc_kube_query_add(&q, "a", "b"), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    assert_string_equal(krc_buf_str(&q), "limit=500");
    krc_buf_cleanup(&q);
}

/* Known-bug tests (test_bug_*) fail until the code is fixed. They are skipped
 * unless KRC_BUG_TESTS is set: "1" runs everything, "only" just them. */
static void select_bug_tests(void)
{
    const char *v = getenv("KRC_BUG_TESTS");

    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0) {
        cmocka_set_skip_filter("test_bug_*");
    } else if (strcmp(v, "only") == 0) {
        cmocka_set_test_filter("test_bug_*");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_403_names_missing_permission),
        cmocka_unit_test(test_403_without_body),
        cmocka_unit_test(test_403_long_message_keeps_hint),
        cmocka_unit_test(test_401),
        cmocka_unit_test(test_404_409_410_422),
        cmocka_unit_test(test_429_plain_text_retry_after),
        cmocka_unit_test(test_500_status_json),
        cmocka_unit_test(test_non_json_body_with_control_chars),
        cmocka_unit_test(test_empty_body),
        cmocka_unit_test(test_query_add),
        cmocka_unit_test(test_query_add_limits),
        /* known bugs: KRC_BUG_TESTS=only runs just these */
        cmocka_unit_test(test_fixed_status_message_newlines_not_folded),
    };
    select_bug_tests();
    return cmocka_run_group_tests(tests, krc_test_http_init, krc_test_http_cleanup);
}
