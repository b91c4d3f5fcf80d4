/* `krc history incidents`, `krc history incident ID` and `krc history changes
 * --workload NS/KIND/NAME` (issue 27) on a history with incidents and
 * recorded changes written through the store API
 * (tests/unit/support/incident_seed.h): the JSON keys the issue names, the
 * filters, the first and the latest failure's evidence, the changes before
 * the first restart, the messages; and the usage errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incident_seed.h"
#include "krc/cli/history.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc_test.h"

static struct krc_test_incident_db hist;

static int setup(void **state)
{
    (void)state;
    krc_test_incident_db_make(&hist, "history-incidents");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_incident_db_remove(&hist);
    return 0;
}

/* Run `krc history ARGS... --db DB` (NULL-terminated); its stdout as an
 * owned string in *out (free()), its exit status returned. */
static int history(char **out, ...)
{
    char *argv[20];
    int argc = 0;
    va_list ap;

    argv[argc++] = (char *)"history";
    va_start(ap, out);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 17;) {
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    argv[argc++] = (char *)"--db";
    argv[argc++] = hist.db;
    argv[argc] = NULL;
    return krc_test_stdout_of(hist.dir, krc_history_main, argc, argv, out);
}

/* The ids of a JSON list of incidents, joined by ",". */
static void json_ids(const char *text, char *out, size_t outsz)
{
    cJSON *a = cJSON_Parse(text);
    const cJSON *it;
    size_t n = 0;

    assert_true(cJSON_IsArray(a));
    out[0] = '\0';
    cJSON_ArrayForEach(it, a)
    {
        n += (size_t)snprintf(out + n, outsz - n, "%s%lld", n ? "," : "",
                              (long long)cJSON_GetObjectItemCaseSensitive(it, "id")->valuedouble);
        assert_true(n < outsz);
    }
    cJSON_Delete(a);
}

static void expect_list(const char *want, ...)
{
    char *argv[12];
    int argc = 0;
    char got[256];
    char *out = NULL;
    va_list ap;
    int rc;

    va_start(ap, want);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 8;) {
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    argv[argc] = NULL;
    rc = history(&out, "incidents", "--format", "json", argc > 0 ? argv[0] : NULL,
                 argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL, NULL);
    assert_int_equal(rc, 0);
    json_ids(out, got, sizeof(got));
    if (strcmp(got, want) != 0) {
        fail_msg("krc history incidents %s %s: [%s], not [%s]", argc > 0 ? argv[0] : "",
                 argc > 1 ? argv[1] : "", got, want);
    }
    free(out);
}

static void test_incidents_json(void **state)
{
    char want[128];
    char *out = NULL;
    cJSON *a;
    const cJSON *api;
    (void)state;

    snprintf(want, sizeof(want), "%lld,%lld,%lld,%lld", (long long)hist.ids.trainer,
             (long long)hist.ids.dns, (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_list(want, NULL);
    snprintf(want, sizeof(want), "%lld,%lld,%lld", (long long)hist.ids.dns,
             (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_list(want, "--open", NULL);
    expect_list(want, "--since", "30m", NULL);
    snprintf(want, sizeof(want), "%lld,%lld", (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_list(want, "--namespace", "shop", NULL);
    snprintf(want, sizeof(want), "%lld", (long long)hist.ids.api);
    expect_list(want, "--workload", "Deployment/api", NULL);
    snprintf(want, sizeof(want), "%lld", (long long)hist.ids.trainer);
    expect_list(want, "--limit", "1", NULL);

    /* the keys the issue names, RFC 3339 UTC times, ended_at null while open */
    assert_int_equal(
        history(&out, "incidents", "--format", "json", "--workload", "Deployment/api", NULL), 0);
    a = cJSON_Parse(out);
    api = cJSON_GetArrayItem(a, 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(api, "namespace")->valuestring, "shop");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(api, "workload")->valuestring,
                        "Deployment/api");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(api, "container")->valuestring, "app");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(api, "cause")->valuestring, "oom_killed");
    assert_int_equal((int)cJSON_GetObjectItemCaseSensitive(api, "restarts")->valuedouble, 3);
    assert_int_equal(strlen(cJSON_GetObjectItemCaseSensitive(api, "first_at")->valuestring), 20);
    assert_non_null(strchr(cJSON_GetObjectItemCaseSensitive(api, "last_at")->valuestring, 'Z'));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(api, "ended_at")));
    cJSON_Delete(a);
    free(out);
    assert_int_equal(
        history(&out, "incidents", "--format", "json", "--workload", "Pod/trainer-0", NULL), 0);
    a = cJSON_Parse(out);
    assert_true(
        cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 0), "ended_at")));
    cJSON_Delete(a);
    free(out);
}

static void test_incidents_table(void **state)
{
    char *out = NULL;
    (void)state;

    assert_int_equal(history(&out, "incidents", NULL), 0);
    assert_non_null(strstr(out, "ID"));
    assert_non_null(strstr(out, "ENDED (UTC)"));
    assert_non_null(strstr(out, "Deployment/api"));
    assert_non_null(strstr(out, "Pod/trainer-0"));
    assert_non_null(strstr(out, "open"));
    free(out);
    /* the subcommand after an option works too */
    assert_int_equal(
        history(&out, "--format", "table", "incidents", "--namespace", "nowhere", NULL), 0);
    assert_non_null(strstr(out, "no incidents that match open or ended since "));
    free(out);
}

static void test_incident_text(void **state)
{
    char id[32];
    char *out = NULL;
    (void)state;

    snprintf(id, sizeof(id), "%lld", (long long)hist.ids.api);
    assert_int_equal(history(&out, "incident", id, NULL), 0);
    assert_non_null(strstr(out, "Deployment shop/api, container app"));
    assert_non_null(strstr(out, "still open"));
    /* the line the first alert said, and the changes before the first restart */
    assert_non_null(strstr(out, "rolled out revision 12"));
    assert_non_null(strstr(out, "kubectl-client-side-apply"));
    assert_non_null(strstr(out, "Node node-a"));
    assert_null(strstr(out, "node-z"));
    assert_null(strstr(out, "api:1.4.1")); /* revision 11: two days before */
    /* the first failure's evidence and the latest one's */
    assert_non_null(strstr(out, "First failure"));
    assert_non_null(strstr(out, "FIRST-CRASH-LOG"));
    assert_non_null(strstr(out, "Latest failure"));
    assert_non_null(strstr(out, "LATEST-CRASH-LOG"));
    assert_true(strstr(out, "FIRST-CRASH-LOG") < strstr(out, "LATEST-CRASH-LOG"));
    /* the messages */
    assert_non_null(strstr(out, "alert to webhook:default: delivered"));
    assert_non_null(strstr(out, "reply to webhook:default: pending"));
    free(out);
}

static void test_incident_json(void **state)
{
    char id[32];
    char *out = NULL;
    cJSON *o;
    const cJSON *v;
    (void)state;

    snprintf(id, sizeof(id), "%lld", (long long)hist.ids.api);
    assert_int_equal(history(&out, "incident", id, "--format", "json", NULL), 0);
    o = cJSON_Parse(out);
    assert_non_null(o);
    v = cJSON_GetObjectItemCaseSensitive(o, "incident");
    assert_int_equal((long long)cJSON_GetObjectItemCaseSensitive(v, "id")->valuedouble,
                     hist.ids.api);
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "first"), "restart");
    assert_int_equal((long long)cJSON_GetObjectItemCaseSensitive(v, "id")->valuedouble,
                     hist.ids.api_first);
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "latest"), "report");
    assert_non_null(
        strstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v, "log"), "text")
                   ->valuestring,
               "LATEST-CRASH-LOG"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "changes")), 2);
    v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "messages"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(v, "state")->valuestring, "delivered");
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(v, "body")));
    /* the whole text here (3,000 bytes of it quoted): MCP cuts it */
    assert_true(strlen(cJSON_GetObjectItemCaseSensitive(v, "text")->valuestring) > 3000);
    cJSON_Delete(o);
    free(out);
}

static void test_changes(void **state)
{
    char *out = NULL;
    cJSON *a;
    (void)state;

    /* every recorded change of the workload and of its nodes, newest first */
    assert_int_equal(
        history(&out, "changes", "--workload", "shop/Deployment/api", "--format", "json", NULL), 0);
    a = cJSON_Parse(out);
    assert_int_equal(cJSON_GetArraySize(a), 4);
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 0), "revision")->valuestring, "13");
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 3), "revision")->valuestring, "11");
    cJSON_Delete(a);
    free(out);
    assert_int_equal(
        history(&out, "changes", "--workload", "shop/Deployment/api", "--since", "1d", NULL), 0);
    assert_non_null(strstr(out, "REVISION"));
    assert_non_null(strstr(out, "Node node-a"));
    assert_non_null(strstr(out, "memory limit 1Gi \xe2\x86\x92 512Mi"));
    assert_null(strstr(out, "api:1.4.1"));
    free(out);
    assert_int_equal(history(&out, "changes", "--workload", "shop/Deployment/none", NULL), 0);
    assert_non_null(strstr(out, "no changes of Deployment/none in namespace shop"));
    free(out);
}

/* Text from the cluster (an image name, a manager) reaches the terminal without its control
 * characters or escape sequences. */
static void test_terminal_safe(void **state)
{
    struct krc_store *s = NULL;
    struct krc_store_change c;
    struct krc_error err;
    char *out = NULL;
    (void)state;

    krc_error_clear(&err);
    assert_int_equal(krc_store_open(hist.db, 0, &s, &err), 0);
    memset(&c, 0, sizeof(c));
    c.namespace = "shop";
    c.kind = "Deployment";
    c.name = "evil";
    c.revision = "2";
    c.manager = "kubectl\x1b]0;owned\x07";
    c.summary = "image a \xe2\x86\x92 b\x1b[2J";
    c.detail_json = "{\"items\":[\"image a \\u2192 b\\u001b[31mRED\\r\\nFAKE PROMPT $ \"]}";
    c.at = krc_clock_now() - 60;
    assert_int_equal(krc_store_record_change(s, &c, &err), 0);
    krc_store_close(s);
    assert_int_equal(history(&out, "changes", "--workload", "shop/Deployment/evil", NULL), 0);
    assert_non_null(strstr(out, "image a \xe2\x86\x92 b"));
    assert_null(strchr(out, '\x1b'));
    assert_null(strchr(out, '\x07'));
    assert_null(strchr(out, '\r'));
    assert_int_equal(strchr(out, '\n') != NULL, 1);
    assert_null(strstr(out, "\nFAKE PROMPT")); /* the item's newline is not a new line */
    free(out);
}

static void test_usage_errors(void **state)
{
    char *out = NULL;
    (void)state;

    assert_int_equal(history(&out, "changes", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "changes", "--workload", "Deployment/api", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "changes", "--workload", "shop/deployment/api", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "changes", "--workload", "shop/Deployment/api", "--open", NULL),
                     2);
    free(out);
    assert_int_equal(history(&out, "incident", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incident", "x", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incident", "999999", NULL), 1);
    free(out);
    assert_int_equal(history(&out, "incident", "1", "--namespace", "shop", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incidents", "--open=yes", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incidents", "--format", "text", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incidents", "--since", "soon", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incidents", "--workload", "api", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "incidents", "extra", NULL), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incidents_json), cmocka_unit_test(test_incidents_table),
        cmocka_unit_test(test_incident_text),  cmocka_unit_test(test_incident_json),
        cmocka_unit_test(test_changes),        cmocka_unit_test(test_terminal_safe),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
