/* The MCP tools list_incidents, get_incident and what_changed (issue 27) on a
 * SQLite history with incidents and recorded changes written through the
 * store API (tests/unit/support/incident_seed.h):
 *   - list_incidents: newest first, open / since / namespace / workload
 *     filters, keyset pages that neither repeat nor skip;
 *   - get_incident: the first failure's evidence kept beside the latest one,
 *     the changes in the 24 h before the first restart (not after it, not an
 *     unrelated node's), the messages, log tails bounded, ids cited;
 *   - what_changed: a workload's changes and its nodes', a pod's workload
 *     from its newest restart;
 *   - scope: a namespace outside it refused before any query, its incidents
 *     left out of lists and refused by id without their names; pod name
 *     settings applied to an incident's pods and a workload's name;
 *   - untrusted_fields point to the changes, messages and reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "incident_seed.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc_test.h"
#include "mcp_fixture.h"

static struct krc_test_incident_db hist;

static int setup(void **state)
{
    (void)state;
    krc_test_incident_db_make(&hist, "mcp-incidents");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_incident_db_remove(&hist);
    return 0;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(v)) {
        fail_msg("%s is not a string", k);
    }
    return v->valuestring;
}

static int64_t num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v)) {
        fail_msg("%s is not a number", k);
    }
    return (int64_t)v->valuedouble;
}

/* "id,id,..." of structuredContent.incidents; the answer in *sc. */
static void incident_ids(struct krc_test_mcp *f, const char *args, char *out, size_t outsz,
                         const cJSON **sc)
{
    const cJSON *it;
    size_t n = 0;

    *sc = krc_test_mcp_sc(krc_test_mcp_call(f, "list_incidents", args));
    out[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(*sc, "incidents"))
    {
        n += (size_t)snprintf(out + n, outsz - n, "%s%lld", n ? "," : "", (long long)num(it, "id"));
        assert_true(n < outsz);
    }
}

static void expect_ids(struct krc_test_mcp *f, const char *args, const char *want)
{
    char got[256];
    const cJSON *sc;
    incident_ids(f, args, got, sizeof(got), &sc);
    if (strcmp(got, want) != 0) {
        fail_msg("list_incidents %s: [%s], not [%s]", args, got, want);
    }
}

/* "kind name revision,..." of an answer's changes */
static void change_list(const cJSON *sc, char *out, size_t outsz)
{
    const cJSON *it;
    size_t n = 0;

    out[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sc, "changes"))
    {
        n += (size_t)snprintf(out + n, outsz - n, "%s%s %s %s", n ? "," : "", str(it, "kind"),
                              str(it, "name"), str(it, "revision"));
        assert_true(n < outsz);
    }
}

static int has_pointer(const cJSON *sc, const char *ptr)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sc, "untrusted_fields"))
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, ptr) == 0) {
            return 1;
        }
    }
    return 0;
}

static void test_list_incidents(void **state)
{
    struct krc_test_mcp f;
    char want[128];
    char args[128];
    char page1[128];
    char page2[128];
    const cJSON *sc;
    const cJSON *first;
    (void)state;

    krc_test_mcp_open(&f, hist.db, NULL, 0, 0);
    snprintf(want, sizeof(want), "%lld,%lld,%lld,%lld", (long long)hist.ids.trainer,
             (long long)hist.ids.dns, (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_ids(&f, "{}", want); /* newest first: by id */
    snprintf(want, sizeof(want), "%lld,%lld,%lld", (long long)hist.ids.dns,
             (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_ids(&f, "{\"open\":true}", want);
    /* ended after since, or open: trainer ended at T-6000 */
    expect_ids(&f, "{\"since\":\"30m\"}", want);
    snprintf(want, sizeof(want), "%lld,%lld", (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_ids(&f, "{\"namespace\":\"shop\"}", want);
    snprintf(want, sizeof(want), "%lld", (long long)hist.ids.api);
    expect_ids(&f, "{\"workload\":\"Deployment/api\"}", want);
    snprintf(want, sizeof(want), "%lld", (long long)hist.ids.trainer);
    expect_ids(&f, "{\"workload\":\"Pod/trainer-0\"}", want);

    /* the row: the keys, ids to cite, ended_at null while open */
    incident_ids(&f, "{\"workload\":\"Deployment/api\"}", page1, sizeof(page1), &sc);
    first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sc, "incidents"), 0);
    assert_string_equal(str(first, "namespace"), "shop");
    assert_string_equal(str(first, "workload"), "Deployment/api");
    assert_string_equal(str(first, "container"), "app");
    assert_string_equal(str(first, "cause"), "oom_killed");
    assert_int_equal(num(first, "restarts"), 3);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(first, "ended_at")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(first, "open")));
    assert_int_equal(num(first, "first_restart_id"), hist.ids.api_first);
    assert_int_equal(num(first, "latest_restart_id"), hist.ids.api_latest);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sc, "untrusted_fields")),
                     0);
    assert_null(cJSON_GetObjectItemCaseSensitive(sc, "next_cursor"));

    /* pages of 3 then 1: the same incidents, none twice */
    incident_ids(&f, "{\"limit\":3}", page1, sizeof(page1), &sc);
    snprintf(args, sizeof(args), "{\"limit\":3,\"cursor\":\"%s\"}", str(sc, "next_cursor"));
    incident_ids(&f, args, page2, sizeof(page2), &sc);
    assert_null(cJSON_GetObjectItemCaseSensitive(sc, "next_cursor"));
    snprintf(want, sizeof(want), "%lld", (long long)hist.ids.api);
    assert_string_equal(page2, want);

    /* a shared database: one cluster's (the seed's is unnamed) */
    expect_ids(&f, "{\"cluster\":\"east\"}", "");
    krc_test_mcp_refused(&f, "list_incidents", "{\"workload\":\"api\"}", "workload 'api'",
                         "Kind/name");
    krc_test_mcp_refused(&f, "list_incidents", "{\"workload\":\"deployment/api\"}", "upper-case",
                         NULL);
    krc_test_mcp_refused(&f, "list_incidents", "{\"workload\":\"Deployment/API\"}", "DNS subdomain",
                         NULL);
    krc_test_mcp_refused(&f, "list_incidents", "{\"cursor\":\"x\"}", "cursor 'x'", NULL);
    krc_test_mcp_refused(&f, "list_incidents", "{\"open\":\"yes\"}", "'open' must be true or false",
                         NULL);
    krc_test_mcp_refused(&f, "list_incidents", "{\"limit\":201}", "'limit'", NULL);
    krc_test_mcp_refused(&f, "list_incidents", "{\"namespace\":\"..\"}", "namespace '..'", NULL);
    krc_test_mcp_close(&f);
}

static void test_get_incident(void **state)
{
    struct krc_test_mcp f;
    char args[128];
    char got[512];
    const cJSON *sc;
    const cJSON *ev;
    const cJSON *msgs;
    const cJSON *items;
    (void)state;

    krc_test_mcp_open(&f, hist.db, NULL, 0, 0);
    snprintf(args, sizeof(args), "{\"id\":%lld}", (long long)hist.ids.api);
    sc = krc_test_mcp_sc(krc_test_mcp_call(&f, "get_incident", args));
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(sc, "incident"), "restarts"), 3);
    /* the first failure's evidence is kept beside the latest one's */
    ev = cJSON_GetObjectItemCaseSensitive(sc, "first");
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(ev, "restart"), "id"),
                     hist.ids.api_first);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(ev, "restart"), "pod"), "api-7d9f-1");
    assert_non_null(strstr(
        str(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "report"), "log"),
            "text"),
        "FIRST-CRASH-LOG"));
    assert_non_null(strstr(str(cJSON_GetObjectItemCaseSensitive(
                                   cJSON_GetObjectItemCaseSensitive(ev, "report"), "what_changed"),
                               "summary"),
                           "rolled out revision 12"));
    ev = cJSON_GetObjectItemCaseSensitive(sc, "latest");
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(ev, "restart"), "id"),
                     hist.ids.api_latest);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(ev, "restart"), "node"), "node-b");
    assert_non_null(strstr(
        str(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "report"), "log"),
            "text"),
        "LATEST-CRASH-LOG"));
    /* the changes in the 24 h before the first restart, nearest first: not revision 11 (2 days
     * before), not 13 (after), not node-z (no pod of it ran there), not coredns */
    change_list(sc, got, sizeof(got));
    assert_string_equal(got, "Deployment api 12,Node node-a 9001");
    items = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sc, "changes"), 0), "items");
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(cJSON_GetArrayItem(items, 1)->valuestring,
                        "memory limit 1Gi \xe2\x86\x92 512Mi");
    /* what was sent: the alert (delivered) and the reply (pending) */
    msgs = cJSON_GetObjectItemCaseSensitive(sc, "messages");
    assert_int_equal(cJSON_GetArraySize(msgs), 2);
    assert_int_equal(num(sc, "messages_total"), 2);
    assert_string_equal(str(cJSON_GetArrayItem(msgs, 0), "kind"), "alert");
    assert_string_equal(str(cJSON_GetArrayItem(msgs, 0), "state"), "delivered");
    assert_string_equal(str(cJSON_GetArrayItem(msgs, 0), "message_ref"), "1765000000.000100");
    assert_non_null(strstr(str(cJSON_GetArrayItem(msgs, 0), "text"), "OOM-killed"));
    /* its text is cut to 2,000 bytes, on a character, with an ellipsis */
    assert_true(strlen(str(cJSON_GetArrayItem(msgs, 0), "text")) <= 2000);
    assert_true(strlen(str(cJSON_GetArrayItem(msgs, 0), "text")) > 1900);
    assert_non_null(strstr(str(cJSON_GetArrayItem(msgs, 0), "text"), "x\xe2\x80\xa6"));
    assert_string_equal(str(cJSON_GetArrayItem(msgs, 1), "kind"), "reply");
    assert_string_equal(str(cJSON_GetArrayItem(msgs, 1), "state"), "pending");
    assert_string_equal(str(cJSON_GetArrayItem(msgs, 1), "text"),
                        "2 more restarts since the first");
    /* text from the cluster is pointed to */
    assert_true(has_pointer(sc, "/first/restart/summary"));
    assert_true(has_pointer(sc, "/first/report/log/text"));
    assert_true(has_pointer(sc, "/first/report/what_changed/summary"));
    assert_true(has_pointer(sc, "/first/report/what_changed/changes/0/items"));
    assert_true(has_pointer(sc, "/latest/report/log/text"));
    assert_true(has_pointer(sc, "/latest/report/events/0/message"));
    assert_true(has_pointer(sc, "/changes/0/items"));
    assert_true(has_pointer(sc, "/changes/0/manager"));
    assert_true(has_pointer(sc, "/messages/0/text"));
    assert_false(has_pointer(sc, "/incident/workload"));

    /* the log tails are bounded */
    snprintf(args, sizeof(args), "{\"id\":%lld,\"log_bytes\":10}", (long long)hist.ids.api);
    sc = krc_test_mcp_sc(krc_test_mcp_call(&f, "get_incident", args));
    ev = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sc, "first"), "report"),
        "log");
    assert_true(strlen(str(ev, "text")) <= 10);
    assert_true(num(ev, "omitted_bytes") > 0);

    /* one restart: latest is null (the first is it) */
    snprintf(args, sizeof(args), "{\"id\":%lld}", (long long)hist.ids.canary);
    sc = krc_test_mcp_sc(krc_test_mcp_call(&f, "get_incident", args));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sc, "latest")));
    /* an ended one */
    snprintf(args, sizeof(args), "{\"id\":%lld}", (long long)hist.ids.trainer);
    sc = krc_test_mcp_sc(krc_test_mcp_call(&f, "get_incident", args));
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(sc, "incident"), "open")));
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(sc, "incident"), "workload"),
                        "Pod/trainer-0");

    krc_test_mcp_refused(&f, "get_incident", "{\"id\":999999}", "no incident with id 999999", NULL);
    krc_test_mcp_refused(&f, "get_incident", "{}", "'id' is required", NULL);
    krc_test_mcp_refused(&f, "get_incident", "{\"id\":0}", "'id'", NULL);
    krc_test_mcp_close(&f);
}

static void test_what_changed(void **state)
{
    struct krc_test_mcp f;
    char got[512];
    const cJSON *sc;
    (void)state;

    krc_test_mcp_open(&f, hist.db, NULL, 0, 0);
    /* a workload: its changes and those of the nodes its pods ran on (node-a, node-b), newest
     * first; since 3d reaches revision 11 */
    sc = krc_test_mcp_sc(krc_test_mcp_call(
        &f, "what_changed",
        "{\"namespace\":\"shop\",\"workload\":\"Deployment/api\",\"since\":\"3d\"}"));
    change_list(sc, got, sizeof(got));
    assert_string_equal(got, "Deployment api 13,Deployment api 12,Node node-a 9001,"
                             "Deployment api 11");
    assert_string_equal(str(sc, "workload"), "Deployment/api");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sc, "nodes")), 2);
    /* its newest restart's node first */
    assert_string_equal(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sc, "nodes"), 0)->valuestring,
        "node-b");
    assert_true(has_pointer(sc, "/changes/0/items"));
    assert_true(has_pointer(sc, "/changes/0/summary"));
    sc = krc_test_mcp_sc(krc_test_mcp_call(
        &f, "what_changed",
        "{\"namespace\":\"shop\",\"workload\":\"Deployment/api\",\"since\":\"3d\","
        "\"cluster\":\"east\"}"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sc, "changes")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sc, "nodes")), 0);
    assert_string_equal(str(sc, "cluster"), "east");
    /* the default: the last 24 h */
    sc = krc_test_mcp_sc(krc_test_mcp_call(
        &f, "what_changed", "{\"namespace\":\"shop\",\"workload\":\"Deployment/api\"}"));
    change_list(sc, got, sizeof(got));
    assert_string_equal(got, "Deployment api 13,Deployment api 12,Node node-a 9001");
    /* a pod: its workload from its newest recorded restart */
    sc = krc_test_mcp_sc(
        krc_test_mcp_call(&f, "what_changed", "{\"namespace\":\"shop\",\"pod\":\"api-7d9f-1\"}"));
    assert_string_equal(str(sc, "workload"), "Deployment/api");
    assert_string_equal(str(sc, "pod"), "api-7d9f-1");
    change_list(sc, got, sizeof(got));
    assert_string_equal(got, "Deployment api 13,Deployment api 12,Node node-a 9001");
    /* a bare pod: no workload changes, its node's */
    sc = krc_test_mcp_sc(
        krc_test_mcp_call(&f, "what_changed", "{\"namespace\":\"ml\",\"pod\":\"trainer-0\"}"));
    assert_string_equal(str(sc, "workload"), "Pod/trainer-0");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sc, "changes")), 0);

    krc_test_mcp_refused(&f, "what_changed", "{\"namespace\":\"shop\",\"pod\":\"nope-1\"}",
                         "no restart of pod nope-1 in namespace shop is recorded", "Kind/name");
    krc_test_mcp_refused(&f, "what_changed", "{\"namespace\":\"shop\"}", "either workload", NULL);
    krc_test_mcp_refused(
        &f, "what_changed",
        "{\"namespace\":\"shop\",\"pod\":\"api-7d9f-1\",\"workload\":\"Deployment/api\"}",
        "either workload", NULL);
    krc_test_mcp_refused(&f, "what_changed", "{\"workload\":\"Deployment/api\"}",
                         "'namespace' is required", NULL);
    krc_test_mcp_refused(&f, "what_changed",
                         "{\"namespace\":\"shop\",\"workload\":\"Deployment/api\","
                         "\"since\":\"soon\"}",
                         "since 'soon'", NULL);
    krc_test_mcp_close(&f);
}

/* A token limited to namespaces never sees others: refused by name before any query, left out
 * of lists, refused by id without its names. */
static void test_scope(void **state)
{
    struct krc_mcp_scope_config narrow = {NULL, NULL, NULL, NULL, "shop", NULL};
    struct krc_mcp_scope_config canary = {NULL, NULL, NULL, "web-canary", NULL, NULL};
    struct krc_mcp_scope_config first_pod = {NULL, NULL, NULL, "api-7d9f-1", NULL, NULL};
    struct krc_mcp_scope_config latest_pod = {NULL, NULL, NULL, "api-7d9f-3", NULL, NULL};
    struct krc_test_mcp f;
    char want[128];
    char args[128];
    const cJSON *res;
    (void)state;

    krc_test_mcp_open(&f, hist.db, &narrow, 0, 0);
    snprintf(want, sizeof(want), "%lld,%lld", (long long)hist.ids.canary, (long long)hist.ids.api);
    expect_ids(&f, "{}", want);
    expect_ids(&f, "{\"open\":true}", want);
    krc_test_mcp_refused(&f, "list_incidents", "{\"namespace\":\"kube-system\"}",
                         "namespace kube-system", "not in mcpNamespaces");
    snprintf(args, sizeof(args), "{\"id\":%lld}", (long long)hist.ids.dns);
    res = krc_test_mcp_call(&f, "get_incident", args);
    assert_true(krc_test_mcp_is_error(res));
    assert_non_null(
        strstr(krc_test_mcp_text(res), "is outside what this MCP server answers about"));
    assert_null(strstr(krc_test_mcp_text(res), "kube-system"));
    assert_null(strstr(krc_test_mcp_text(res), "coredns"));
    krc_test_mcp_refused(&f, "what_changed", "{\"namespace\":\"ml\",\"pod\":\"trainer-0\"}",
                         "namespace ml", "mcpNamespaces");
    krc_test_mcp_refused(&f, "what_changed",
                         "{\"namespace\":\"kube-system\",\"workload\":\"Deployment/coredns\"}",
                         "namespace kube-system", "mcpNamespaces");
    krc_test_mcp_close(&f);

    /* pod name settings: the canary's incident is left out (its pods are), and the workload
     * named like its pods is refused */
    krc_test_mcp_open(&f, hist.db, &canary, 0, 0);
    snprintf(want, sizeof(want), "%lld,%lld,%lld", (long long)hist.ids.trainer,
             (long long)hist.ids.dns, (long long)hist.ids.api);
    expect_ids(&f, "{}", want);
    snprintf(args, sizeof(args), "{\"id\":%lld}", (long long)hist.ids.canary);
    krc_test_mcp_refused(&f, "get_incident", args, "is outside what this MCP server answers about",
                         "ignoredPodNamePrefixes");
    krc_test_mcp_refused(&f, "what_changed",
                         "{\"namespace\":\"shop\",\"workload\":\"Deployment/web-canary\"}",
                         "workload Deployment/web-canary", "ignoredPodNamePrefixes");
    krc_test_mcp_refused(&f, "what_changed", "{\"namespace\":\"shop\",\"pod\":\"web-canary-1\"}",
                         "pod web-canary-1", "ignoredPodNamePrefixes");
    krc_test_mcp_close(&f);

    /* the api incident's first pod only is left out: so is the incident */
    krc_test_mcp_open(&f, hist.db, &first_pod, 0, 0);
    snprintf(want, sizeof(want), "%lld,%lld,%lld", (long long)hist.ids.trainer,
             (long long)hist.ids.dns, (long long)hist.ids.canary);
    expect_ids(&f, "{}", want);
    snprintf(args, sizeof(args), "{\"id\":%lld}", (long long)hist.ids.api);
    krc_test_mcp_refused(&f, "get_incident", args, "is outside what this MCP server answers about",
                         "ignoredPodNamePrefixes");
    krc_test_mcp_close(&f);
    /* and its latest one only */
    krc_test_mcp_open(&f, hist.db, &latest_pod, 0, 0);
    expect_ids(&f, "{}", want);
    krc_test_mcp_refused(&f, "get_incident", args, "is outside", "ignoredPodNamePrefixes");
    krc_test_mcp_close(&f);
}

/* Pages stay exact when the scope leaves incidents out and every query reads one row. */
static void test_pages_with_a_scope(void **state)
{
    struct krc_mcp_scope_config narrow = {NULL, "kube-system", NULL, NULL, NULL, NULL};
    struct krc_test_mcp f;
    char got[256];
    char all[256];
    char args[128];
    const cJSON *sc;
    size_t n = 0;
    (void)state;

    krc_test_mcp_open(&f, hist.db, &narrow, 1, 2);
    all[0] = '\0';
    snprintf(args, sizeof(args), "{\"limit\":1}");
    for (int i = 0; i < 10; i++) {
        incident_ids(&f, args, got, sizeof(got), &sc);
        if (got[0] != '\0') {
            n += (size_t)snprintf(all + n, sizeof(all) - n, "%s%s", n ? "," : "", got);
        }
        if (cJSON_GetObjectItemCaseSensitive(sc, "next_cursor") == NULL) {
            break;
        }
        snprintf(args, sizeof(args), "{\"limit\":1,\"cursor\":\"%s\"}", str(sc, "next_cursor"));
    }
    snprintf(got, sizeof(got), "%lld,%lld,%lld", (long long)hist.ids.trainer,
             (long long)hist.ids.canary, (long long)hist.ids.api);
    assert_string_equal(all, got);
    krc_test_mcp_close(&f);
}

struct sweep {
    struct krc_test_mcp f;
    const char *name;
    char args[256];
};

/* One call with its Nth allocation failing (the database already open): an answer or an
 * internal error, never a crash or a leak (ASan). The allocations attempted. */
static long sweep_run(void *ud, long n)
{
    struct sweep *sw = ud;
    char req[512];
    struct krc_error err;
    int status = 0;
    long used;
    int rc;

    snprintf(req, sizeof(req),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":%s}}",
             sw->name, sw->args);
    krc_buf_reset(&sw->f.out);
    krc_mem_fail_after(n);
    rc = krc_mcp_handle(sw->f.m, NULL, req, strlen(req), NULL, &sw->f.out, &status, &err);
    used = krc_mem_fail_after(-1);
    assert_true(rc == 0 || rc == KRC_ENOMEM);
    assert_true(rc == 0 ? sw->f.out.len > 0 : sw->f.out.len == 0);
    return used;
}

/* Every allocation of the three tools failing in turn (135, 72 and 11 points when written). */
static void test_out_of_memory_is_clean(void **state)
{
    struct krc_mcp_scope_config pods = {NULL, NULL, NULL, "web-canary", NULL, NULL};
    struct sweep sw;
    (void)state;

    memset(&sw, 0, sizeof(sw));
    krc_test_mcp_open(&sw.f, hist.db, &pods, 0,
                      0); /* a scope with pod rules: the incidents' pods are read */
    krc_test_mcp_sc(krc_test_mcp_call(&sw.f, "list_incidents", "{}")); /* the database opened */
    sw.name = "list_incidents";
    snprintf(sw.args, sizeof(sw.args), "{\"limit\":2}");
    assert_true(krc_test_alloc_sweep(sweep_run, &sw) > 10);
    sw.name = "get_incident";
    snprintf(sw.args, sizeof(sw.args), "{\"id\":%lld}", (long long)hist.ids.api);
    assert_true(krc_test_alloc_sweep(sweep_run, &sw) > 10);
    sw.name = "what_changed";
    snprintf(sw.args, sizeof(sw.args),
             "{\"namespace\":\"shop\",\"pod\":\"api-7d9f-1\",\"since\":\"3d\"}");
    assert_true(krc_test_alloc_sweep(sweep_run, &sw) > 5);
    krc_test_mcp_close(&sw.f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_incidents),     cmocka_unit_test(test_get_incident),
        cmocka_unit_test(test_what_changed),       cmocka_unit_test(test_scope),
        cmocka_unit_test(test_pages_with_a_scope), cmocka_unit_test(test_out_of_memory_is_clean),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
