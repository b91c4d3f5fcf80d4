/* `krc history` and the MCP tools on a history that two clusters wrote
 * (struct krc_store_options.cluster "east" and "west" on one SQLite file):
 * the cluster of every row (JSON, the table's CLUSTER column, `show`), the
 * --cluster filter and the tools' `cluster` argument; and how a database URL
 * is shown without its password. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/cli/db_target.h"
#include "krc/cli/history.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc_test.h"

static char tmpdir[256];
static char db_two[512];   /* east and west */
static char db_plain[512]; /* no cluster name */

static void record(const char *db, const char *cluster, const char *uid, const char *ns,
                   const char *pod, int count, const char *cause, int64_t at)
{
    struct krc_store_options o;
    struct krc_store *s = NULL;
    struct krc_store_restart r;
    struct krc_error err;

    memset(&o, 0, sizeof(o));
    o.cluster = cluster;
    krc_error_clear(&err);
    if (krc_store_open_with(db, 0, &o, &s, &err) != 0) {
        fail_msg("open %s: %s", db, err.msg);
    }
    memset(&r, 0, sizeof(r));
    r.pod_uid = uid;
    r.container = "app";
    r.restart_count = count;
    r.namespace = ns;
    r.pod = pod;
    r.workload_kind = "Deployment";
    r.workload_name = pod;
    r.node = "node-1";
    assert_int_equal(krc_cause_parse(cause, &r.cause), 0);
    r.has_exit_code = 1;
    r.exit_code = 1;
    r.detected_at = at;
    r.decision = "alert";
    r.summary = "it exited";
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, &err), 0);
    krc_store_close(s);
}

static int setup(void **state)
{
    int64_t now = krc_clock_now();

    (void)state;
    krc_test_tmpdir(tmpdir, sizeof(tmpdir), "history-clusters");
    snprintf(db_two, sizeof(db_two), "%s/two.db", tmpdir);
    snprintf(db_plain, sizeof(db_plain), "%s/plain.db", tmpdir);
    record(db_two, "east", "uid-e1", "shop", "web-1", 1, "oom_killed", now - 60);
    record(db_two, "west", "uid-w1", "shop", "web-1", 1, "app_error", now - 50);
    record(db_two, "east", "uid-e1", "shop", "web-1", 2, "oom_killed", now - 40);
    record(db_two, "west", "uid-w2", "ml", "trainer-0", 1, "app_error", now - 30);
    record(db_plain, NULL, "uid-p1", "shop", "web-1", 1, "app_error", now - 20);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_rmtree(tmpdir);
    return 0;
}

/* ---- krc history, stdout captured ---------------------------------------------------------- */

/* Run `krc history ARGS...` (NULL-terminated); its stdout as an owned string
 * in *out (free()), its exit status returned. */
static int history(char **out, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;

    argv[argc++] = (char *)"history";
    va_start(ap, out);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 15;) {
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    argv[argc] = NULL;
    return krc_test_stdout_of(tmpdir, krc_history_main, argc, argv, out);
}

/* The clusters of a `--format json` list, in order, joined by ",". */
static void json_clusters(const char *text, char *out, size_t outsz)
{
    cJSON *a = cJSON_Parse(text);
    const cJSON *it;
    size_t n = 0;
    int i = 0;

    assert_true(cJSON_IsArray(a));
    out[0] = '\0';
    cJSON_ArrayForEach(it, a)
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "cluster");
        assert_true(cJSON_IsString(c)); /* always there: "" when unnamed */
        n += (size_t)snprintf(out + n, outsz - n, "%s%s", i++ ? "," : "", c->valuestring);
        assert_true(n < outsz);
    }
    cJSON_Delete(a);
}

static void test_history_json_carries_the_cluster(void **state)
{
    char *out;
    char list[256];

    (void)state;
    assert_int_equal(history(&out, "--db", db_two, "--format", "json", NULL), 0);
    json_clusters(out, list, sizeof(list));
    free(out);
    assert_string_equal(list, "west,east,west,east");
    assert_int_equal(history(&out, "--db", db_plain, "--format", "json", NULL), 0);
    json_clusters(out, list, sizeof(list));
    free(out);
    assert_string_equal(list, "");
}

static void test_history_table_of_one_sqlite_file_is_unchanged(void **state)
{
    char *out;

    (void)state;
    assert_int_equal(history(&out, "--db", db_plain, NULL), 0);
    assert_non_null(strstr(out, "ID  TIME (UTC)           NAMESPACE/POD"));
    assert_null(strstr(out, "CLUSTER"));
    free(out);
    assert_int_equal(history(&out, "show", "1", "--db", db_plain, NULL), 0);
    assert_non_null(strstr(out, "Restart #1\nPod:"));
    assert_null(strstr(out, "Cluster:"));
    free(out);
}

static void test_history_cluster_filter(void **state)
{
    char *out;
    char list[256];

    (void)state;
    /* --cluster is a list option; `show` refuses it */
    assert_int_equal(history(&out, "show", "1", "--db", db_two, "--cluster", "east", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "--db", db_two, "--cluster=", NULL), 2);
    free(out);
    assert_int_equal(history(&out, "--db", db_two, "--cluster", "east", "--format", "json", NULL),
                     0);
    json_clusters(out, list, sizeof(list));
    free(out);
    assert_string_equal(list, "east,east");
    assert_int_equal(history(&out, "--db", db_two, "--cluster", "nope", NULL), 0);
    assert_string_equal(out, "no restarts recorded that match\n");
    free(out);
    /* rows of two clusters: the CLUSTER column, "east"/"west" after the id */
    assert_int_equal(history(&out, "--db", db_two, NULL), 0);
    assert_non_null(strstr(out, "ID  CLUSTER  TIME (UTC)"));
    assert_non_null(strstr(out, "\n4   west     "));
    assert_non_null(strstr(out, "\n3   east     "));
    free(out);
    /* one cluster of a SQLite file: no column */
    assert_int_equal(history(&out, "--db", db_two, "--cluster", "west", NULL), 0);
    assert_null(strstr(out, "CLUSTER"));
    free(out);
    assert_int_equal(history(&out, "show", "3", "--db", db_two, NULL), 0);
    assert_non_null(strstr(out, "Restart #3\nCluster:    east\nPod:"));
    free(out);
}

/* ---- the MCP tools ------------------------------------------------------------------------- */

struct mcp_fx {
    struct krc_mcp_tools *tools;
    struct krc_mcp *m;
    struct krc_mcp_session sess;
    struct krc_buf out;
};

static void mcp_open(struct mcp_fx *f, const char *db)
{
    struct krc_mcp_tools_config tc;

    memset(f, 0, sizeof(*f));
    memset(&tc, 0, sizeof(tc));
    tc.db_path = db;
    assert_int_equal(krc_mcp_tools_new(&tc, &f->tools, NULL), 0);
    assert_int_equal(krc_mcp_tools_server(f->tools, &f->m, NULL), 0);
    krc_buf_init(&f->out, 1 << 22);
}

static void mcp_close(struct mcp_fx *f)
{
    krc_mcp_free(f->m);
    krc_mcp_tools_free(f->tools);
    krc_buf_cleanup(&f->out);
}

/* tools/call NAME with ARGS (JSON): its result object (owned by *doc). */
static cJSON *call(struct mcp_fx *f, const char *name, const char *args, cJSON **doc)
{
    char req[1024];
    int status = 0;

    snprintf(req, sizeof(req),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":%s}}",
             name, args);
    krc_buf_reset(&f->out);
    assert_int_equal(krc_mcp_handle(f->m, &f->sess, req, strlen(req), NULL, &f->out, &status, NULL),
                     0);
    *doc = cJSON_Parse(krc_buf_str(&f->out));
    assert_non_null(*doc);
    return cJSON_GetObjectItemCaseSensitive(*doc, "result");
}

static int is_error(const cJSON *res)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError"));
}

static const char *error_text(const cJSON *res)
{
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "content"), 0);
    return cJSON_GetObjectItemCaseSensitive(c, "text")->valuestring;
}

/* The clusters of structuredContent.restarts, joined by ",". */
static void row_clusters(const cJSON *res, char *out, size_t outsz)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
    const cJSON *it;
    size_t n = 0;
    int i = 0;

    assert_false(is_error(res));
    out[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sc, "restarts"))
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "cluster");
        assert_true(cJSON_IsString(c));
        n += (size_t)snprintf(out + n, outsz - n, "%s%s", i++ ? "," : "", c->valuestring);
        assert_true(n < outsz);
    }
}

static double sc_number(const cJSON *res, const char *key)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sc, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void test_tools_take_a_cluster_argument(void **state)
{
    static const char *const names[] = {"list_restarts", "pod_restart_timeline", "restart_summary"};
    struct mcp_fx f;
    cJSON *doc;
    cJSON *res;
    const cJSON *t;
    char list[256];
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
    int status;

    (void)state;
    mcp_open(&f, db_two);
    assert_int_equal(krc_mcp_handle(f.m, &f.sess, req, strlen(req), NULL, &f.out, &status, NULL),
                     0);
    doc = cJSON_Parse(krc_buf_str(&f.out));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const cJSON *found = NULL;
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(doc, "result"), "tools"))
        {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
            if (strcmp(n->valuestring, names[i]) == 0) {
                found = t;
            }
        }
        assert_non_null(found);
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(found, "inputSchema"), "properties");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(props, "cluster");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "type")->valuestring, "string");
    }
    cJSON_Delete(doc);

    /* checked against the schema: a string */
    res = call(&f, "list_restarts", "{\"cluster\":5}", &doc);
    assert_true(is_error(res));
    assert_string_equal(error_text(res), "invalid arguments: 'cluster' must be a string");
    cJSON_Delete(doc);

    /* every row carries its cluster */
    res = call(&f, "list_restarts", "{}", &doc);
    row_clusters(res, list, sizeof(list));
    assert_string_equal(list, "west,east,west,east");
    cJSON_Delete(doc);

    /* accepted by the three tools, and said back by the summary and the timeline */
    res = call(&f, "restart_summary", "{\"cluster\":\"east\",\"since\":\"1h\"}", &doc);
    assert_false(is_error(res));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(res, "structuredContent"), "cluster")
                            ->valuestring,
                        "east");
    cJSON_Delete(doc);
    res = call(&f, "pod_restart_timeline",
               "{\"cluster\":\"west\",\"namespace\":\"shop\",\"pod\":\"web-1\"}", &doc);
    assert_false(is_error(res));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(res, "structuredContent"), "cluster")
                            ->valuestring,
                        "west");
    cJSON_Delete(doc);
    res = call(&f, "get_restart_report", "{\"id\":3}", &doc);
    assert_false(is_error(res));
    {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(res, "structuredContent"), "restart");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "cluster")->valuestring, "east");
    }
    cJSON_Delete(doc);
    mcp_close(&f);
}

static void test_tools_filter_by_cluster(void **state)
{
    struct mcp_fx f;
    cJSON *doc;
    cJSON *res;
    char list[256];

    (void)state;
    mcp_open(&f, db_two);
    res = call(&f, "list_restarts", "{\"cluster\":\"east\"}", &doc);
    row_clusters(res, list, sizeof(list));
    assert_string_equal(list, "east,east");
    cJSON_Delete(doc);
    res = call(&f, "list_restarts", "{\"cluster\":\"west\",\"namespace\":\"shop\"}", &doc);
    row_clusters(res, list, sizeof(list));
    assert_string_equal(list, "west");
    cJSON_Delete(doc);
    res = call(&f, "list_restarts", "{\"cluster\":\"nope\"}", &doc);
    row_clusters(res, list, sizeof(list));
    assert_string_equal(list, "");
    cJSON_Delete(doc);
    /* the same pod name in two clusters: one timeline each */
    res = call(&f, "pod_restart_timeline",
               "{\"cluster\":\"east\",\"namespace\":\"shop\",\"pod\":\"web-1\"}", &doc);
    row_clusters(res, list, sizeof(list));
    assert_string_equal(list, "east,east");
    cJSON_Delete(doc);
    res = call(&f, "pod_restart_timeline", "{\"namespace\":\"shop\",\"pod\":\"web-1\"}", &doc);
    row_clusters(res, list, sizeof(list));
    assert_string_equal(list, "east,west,east");
    cJSON_Delete(doc);
    res = call(&f, "restart_summary", "{\"cluster\":\"east\",\"since\":\"1h\"}", &doc);
    assert_true(sc_number(res, "restarts") == 2);
    cJSON_Delete(doc);
    res = call(&f, "restart_summary", "{\"cluster\":\"west\",\"since\":\"1h\"}", &doc);
    assert_true(sc_number(res, "restarts") == 2);
    cJSON_Delete(doc);
    res = call(&f, "restart_summary", "{\"since\":\"1h\"}", &doc);
    assert_true(sc_number(res, "restarts") == 4);
    cJSON_Delete(doc);
    mcp_close(&f);
}

/* ---- the database as messages show it ------------------------------------------------------ */

/* The target's display form (krc_url_mask_password, tests/unit/util/test_url.c). */
static void test_url_shown_without_password(void **state)
{
    struct krc_db_target t;

    (void)state;
    assert_int_equal(krc_db_target_resolve("krc history",
                                           "postgres://krc:hunter2@db:5432/krc?"
                                           "password=hunter3",
                                           NULL, &t),
                     0);
    assert_string_equal(t.target, "postgres://krc:hunter2@db:5432/krc?password=hunter3");
    assert_string_equal(t.display, "postgres://krc:****@db:5432/krc?password=****");
    assert_int_equal(krc_db_target_resolve("krc history", "/tmp/a:b@c.db", NULL, &t), 0);
    assert_string_equal(t.display, "/tmp/a:b@c.db");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_shown_without_password),
        cmocka_unit_test(test_history_json_carries_the_cluster),
        cmocka_unit_test(test_history_table_of_one_sqlite_file_is_unchanged),
        cmocka_unit_test(test_history_cluster_filter),
        cmocka_unit_test(test_tools_take_a_cluster_argument),
        cmocka_unit_test(test_tools_filter_by_cluster),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
