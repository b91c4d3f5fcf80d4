/* MCP protocol core: both eras, JSON-RPC errors, tool results and argument
 * checks, with a test tool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "krc/mcp/mcp.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

static int echo(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                struct krc_error *err)
{
    const cJSON *word = cJSON_GetObjectItemCaseSensitive(args, "word");
    int *calls = ud;
    (*calls)++;
    if (cJSON_IsString(word) && strcmp(word->valuestring, "fail") == 0) {
        snprintf(msg, msgsz, "no such word");
        return KRC_MCP_TOOL_FAILED;
    }
    if (cJSON_IsString(word) && strcmp(word->valuestring, "crash") == 0) {
        return krc_error_set(err, KRC_EIO, "disk on fire");
    }
    if (cJSON_IsString(word) && strcmp(word->valuestring, "raw") == 0) {
        /* bytes that are not UTF-8, as an old stored row may hold */
        *ret = cJSON_CreateObject();
        cJSON_AddStringToObject(*ret, "word", "a\xff\xc3(b\xe2\x82");
        return KRC_MCP_TOOL_OK;
    }
    *ret = cJSON_CreateObject();
    cJSON_AddStringToObject(*ret, "word", cJSON_IsString(word) ? word->valuestring : "");
    return KRC_MCP_TOOL_OK;
}

static const struct krc_mcp_tool tools[] = {
    {"echo", "Echo", "Say a word back",
     "{\"type\":\"object\",\"properties\":{\"word\":{\"type\":\"string\",\"maxLength\":8},"
     "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5},"
     "\"mode\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}},"
     "\"required\":[\"word\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"word\":{\"type\":\"string\"}}}", echo},
};

struct fx {
    struct krc_mcp *m;
    struct krc_mcp_session sess;
    int calls;
    struct krc_buf out;
    int status;
};

static int setup(void **state)
{
    struct fx *f = krc_calloc(1, sizeof(*f));
    struct krc_mcp_config cfg = {"krc", "Restarts", "1.0", "Read-only.", tools, 1, NULL};
    struct krc_error err;
    cfg.tool_ud = &f->calls;
    assert_int_equal(krc_mcp_new(&cfg, &f->m, &err), 0);
    krc_buf_init(&f->out, 1 << 20);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    krc_mcp_free(f->m);
    krc_buf_cleanup(&f->out);
    krc_free(f);
    return 0;
}

/* Handle req; returns the parsed response (NULL when none). */
static cJSON *rpc(struct fx *f, const char *req, const struct krc_mcp_http *http)
{
    struct krc_error err;
    krc_buf_reset(&f->out);
    assert_int_equal(
        krc_mcp_handle(f->m, &f->sess, req, strlen(req), http, &f->out, &f->status, &err), 0);
    if (f->out.len == 0) {
        return NULL;
    }
    assert_null(memchr(f->out.data, '\n', f->out.len)); /* one line for stdio */
    return cJSON_Parse(krc_buf_str(&f->out));
}

static int err_code(const cJSON *r)
{
    const cJSON *e = cJSON_GetObjectItem(r, "error");
    assert_non_null(e);
    return (int)cJSON_GetObjectItem(e, "code")->valuedouble;
}

static const char *str(const cJSON *o, const char *path)
{
    char buf[128];
    const cJSON *v = o;
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *save = NULL, *p = strtok_r(buf, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
        v = cJSON_GetObjectItem(v, p);
    }
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_initialize_negotiates(void **state)
{
    struct fx *f = *state;
    cJSON *r = rpc(f,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                   "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                   "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                   NULL);
    assert_int_equal(f->status, 200);
    assert_string_equal(str(r, "result.protocolVersion"), "2025-06-18");
    assert_string_equal(str(r, "result.serverInfo.name"), "krc");
    assert_non_null(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "capabilities"), "tools"));
    assert_int_equal((int)cJSON_GetObjectItem(r, "id")->valuedouble, 1);
    assert_string_equal(f->sess.version, "2025-06-18");
    cJSON_Delete(r);
    /* an unknown version gets our latest legacy one */
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"initialize\",\"params\":{"
            "\"protocolVersion\":\"2024-01-01\",\"capabilities\":{}}}",
            NULL);
    assert_string_equal(str(r, "result.protocolVersion"), "2025-11-25");
    assert_string_equal(str(r, "id"), "x");
    cJSON_Delete(r);
    /* the initialized notification gets no answer */
    assert_null(rpc(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", NULL));
    assert_int_equal(f->status, 202);
    assert_int_equal(f->sess.initialized, 1);
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}", NULL);
    assert_non_null(cJSON_GetObjectItem(r, "result"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "result")), 0);
    cJSON_Delete(r);
}

#define MODERN_META                                                                                \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static void test_modern_discover_and_list(void **state)
{
    struct fx *f = *state;
    cJSON *r = rpc(f,
                   "{\"jsonrpc\":\"2.0\",\"id\":\"d1\",\"method\":\"server/discover\","
                   "\"params\":{" MODERN_META "}}",
                   NULL);
    cJSON *res = cJSON_GetObjectItem(r, "result");
    assert_string_equal(str(res, "resultType"), "complete");
    assert_string_equal(
        cJSON_GetArrayItem(cJSON_GetObjectItem(res, "supportedVersions"), 0)->valuestring,
        "2026-07-28");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "_meta"),
                                                "io.modelcontextprotocol/serverInfo"),
                            "name")
            ->valuestring,
        "krc");
    assert_non_null(cJSON_GetObjectItem(res, "ttlMs"));
    cJSON_Delete(r);
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MODERN_META "}}",
            NULL);
    res = cJSON_GetObjectItem(r, "result");
    assert_string_equal(str(res, "resultType"), "complete");
    assert_string_equal(str(res, "cacheScope"), "private");
    {
        cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "tools"), 0);
        assert_string_equal(str(t, "name"), "echo");
        assert_true(cJSON_IsTrue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(t, "annotations"), "readOnlyHint")));
        assert_true(cJSON_IsObject(cJSON_GetObjectItem(t, "inputSchema")));
        assert_true(cJSON_IsObject(cJSON_GetObjectItem(t, "outputSchema")));
    }
    cJSON_Delete(r);
    /* legacy has no server/discover without _meta; modern has no ping */
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{}}", NULL);
    assert_int_equal(err_code(r), -32602);
    assert_int_equal(f->status, 400);
    cJSON_Delete(r);
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{" MODERN_META "}}",
            NULL);
    assert_int_equal(err_code(r), -32601);
    assert_int_equal(f->status, 404);
    cJSON_Delete(r);
}

static void test_modern_errors(void **state)
{
    struct fx *f = *state;
    struct krc_mcp_http h = {"2026-07-28", "tools/call", "other"};
    cJSON *r = rpc(f,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
                   "\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\","
                   "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
                   NULL);
    assert_int_equal(err_code(r), -32022);
    assert_string_equal(str(r, "error.data.requested"), "2030-01-01");
    assert_int_equal(f->status, 400);
    cJSON_Delete(r);
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
            "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
            NULL);
    assert_int_equal(err_code(r), -32602);
    cJSON_Delete(r);
    /* HTTP headers must repeat the body */
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
            "\"name\":\"echo\",\"arguments\":{\"word\":\"hi\"}," MODERN_META "}}",
            &h);
    assert_int_equal(err_code(r), -32020);
    assert_int_equal(f->status, 400);
    cJSON_Delete(r);
    h.name = "echo";
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
            "\"name\":\"echo\",\"arguments\":{\"word\":\"hi\"}," MODERN_META "}}",
            &h);
    assert_string_equal(str(r, "result.structuredContent.word"), "hi");
    assert_string_equal(str(r, "result.resultType"), "complete");
    assert_int_equal(f->status, 200);
    cJSON_Delete(r);
}

static void test_jsonrpc_errors(void **state)
{
    struct fx *f = *state;
    cJSON *r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":1,", NULL);
    assert_int_equal(err_code(r), -32700);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    assert_int_equal(f->status, 400);
    cJSON_Delete(r);
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", NULL);
    assert_int_equal(err_code(r), -32700);
    cJSON_Delete(r);
    r = rpc(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", NULL);
    assert_int_equal(err_code(r), -32600);
    cJSON_Delete(r);
    r = rpc(f, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", NULL);
    assert_int_equal(err_code(r), -32600);
    cJSON_Delete(r);
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", NULL);
    assert_int_equal(err_code(r), -32600);
    cJSON_Delete(r);
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/list\"}", NULL);
    assert_int_equal(err_code(r), -32601);
    assert_int_equal((int)cJSON_GetObjectItem(r, "id")->valuedouble, 7);
    cJSON_Delete(r);
    r = rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":[1]}", NULL);
    assert_int_equal(err_code(r), -32602);
    cJSON_Delete(r);
    r = rpc(
        f,
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
        NULL);
    assert_int_equal(err_code(r), -32602);
    assert_string_equal(str(r, "error.message"), "Unknown tool: nope");
    cJSON_Delete(r);
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\",\"arguments\":[]}}",
            NULL);
    assert_int_equal(err_code(r), -32602);
    cJSON_Delete(r);
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\",\"params\":{\"cursor\":"
            "\"zz\"}}",
            NULL);
    assert_int_equal(err_code(r), -32602);
    cJSON_Delete(r);
    /* notifications, even unknown ones, and client responses get no answer */
    assert_null(rpc(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}", NULL));
    assert_null(rpc(f, "{\"jsonrpc\":\"2.0\",\"method\":\"whatever\"}", NULL));
    assert_null(rpc(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", NULL));
    assert_int_equal(f->calls, 0);
}

/* The answer of req (len bytes) is valid UTF-8 and JSON: returns it parsed. */
static cJSON *utf8_answer(struct fx *f, const char *req, size_t len,
                          const struct krc_mcp_http *http)
{
    struct krc_error err;
    cJSON *r;

    krc_buf_reset(&f->out);
    assert_int_equal(krc_mcp_handle(f->m, &f->sess, req, len, http, &f->out, &f->status, &err), 0);
    if (!krc_text_utf8_valid(f->out.data, f->out.len)) {
        fail_msg("not UTF-8: %s", krc_buf_str(&f->out));
    }
    r = cJSON_ParseWithLength(f->out.data, f->out.len);
    assert_non_null(r);
    return r;
}

/* Invalid UTF-8 in a method or tool name used to be echoed in the error, so
 * the answer was not valid JSON (review of security issue 24): a message
 * that is not UTF-8 is a parse error, and whatever bytes a name cut at 200
 * bytes, a header or a stored row hold, the answer is valid UTF-8. */
static void test_answers_are_always_utf8(void **state)
{
    static const char *const bad[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"e\xc3\"}}",
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"\xed\xa0\x80\"}}"),                                          /* a surrogate */
        "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"ping\"}", /* overlong '/' */
    };
    struct fx *f = *state;
    struct krc_mcp_http h = {"\xff\xfe-version", "tools/list", NULL};
    char req[2048];
    size_t n;
    cJSON *r;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = utf8_answer(f, bad[i], strlen(bad[i]), NULL);
        assert_int_equal(err_code(r), -32700);
        assert_int_equal(f->status, 400);
        assert_string_equal(str(r, "error.message"), "Parse error: the message is not UTF-8");
        cJSON_Delete(r);
    }
    /* valid names of many 2-byte characters, cut at 200 bytes in the middle of one */
    n = (size_t)snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x");
    for (int i = 0; i < 150; i++) {
        n += (size_t)snprintf(req + n, sizeof(req) - n, "\xc3\xa9");
    }
    n += (size_t)snprintf(req + n, sizeof(req) - n, "\"}");
    r = utf8_answer(f, req, n, NULL);
    assert_int_equal(err_code(r), -32601);
    assert_non_null(strstr(str(r, "error.message"), "Method not found: x\xc3\xa9"));
    cJSON_Delete(r);
    n = (size_t)snprintf(req, sizeof(req),
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                         "{\"name\":\"x");
    for (int i = 0; i < 150; i++) {
        n += (size_t)snprintf(req + n, sizeof(req) - n, "\xe2\x82\xac");
    }
    n += (size_t)snprintf(req + n, sizeof(req) - n, "\"}}");
    r = utf8_answer(f, req, n, NULL);
    assert_int_equal(err_code(r), -32602);
    cJSON_Delete(r);
    /* a header's bytes echoed */
    snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    r = utf8_answer(f, req, strlen(req), &h);
    assert_int_equal(err_code(r), -32600);
    assert_non_null(strstr(str(r, "error.message"), "\xef\xbf\xbd\xef\xbf\xbd-version"));
    cJSON_Delete(r);
    /* a tool's answer with bytes that are not UTF-8: each one becomes U+FFFD */
    snprintf(req, sizeof(req),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"echo\",\"arguments\":{\"word\":\"raw\"}}}");
    r = utf8_answer(f, req, strlen(req), NULL);
    assert_string_equal(str(r, "result.structuredContent.word"),
                        "a\xef\xbf\xbd\xef\xbf\xbd(b\xef\xbf\xbd\xef\xbf\xbd");
    cJSON_Delete(r);
}

static void test_tool_results(void **state)
{
    struct fx *f = *state;
    cJSON *r = rpc(f,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"echo\",\"arguments\":{\"word\":\"hi\",\"n\":3,\"mode\":\"b\"}}}",
                   NULL);
    cJSON *res = cJSON_GetObjectItem(r, "result");
    cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0);
    assert_string_equal(str(item, "type"), "text");
    assert_string_equal(str(item, "text"), "{\"word\":\"hi\"}");
    assert_string_equal(str(res, "structuredContent.word"), "hi");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(res, "isError")));
    assert_null(cJSON_GetObjectItem(res, "resultType")); /* legacy */
    cJSON_Delete(r);
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\",\"arguments\":{\"word\":\"fail\"}}}",
            NULL);
    res = cJSON_GetObjectItem(r, "result");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")));
    assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0), "text"),
                        "no such word");
    assert_null(cJSON_GetObjectItem(res, "structuredContent"));
    cJSON_Delete(r);
    r = rpc(f,
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"echo\",\"arguments\":{\"word\":\"crash\"}}}",
            NULL);
    assert_int_equal(err_code(r), -32603);
    assert_null(strstr(krc_buf_str(&f->out), "disk on fire")); /* details stay in the log */
    cJSON_Delete(r);
    assert_int_equal(f->calls, 3);
}

static void expect_invalid(struct fx *f, const char *args, const char *needle)
{
    char req[512];
    cJSON *r;
    cJSON *res;
    int calls = f->calls;
    snprintf(req, sizeof(req),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"echo\",\"arguments\":%s}}",
             args);
    r = rpc(f, req, NULL);
    res = cJSON_GetObjectItem(r, "result");
    assert_non_null(res);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")));
    assert_non_null(
        strstr(str(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0), "text"), needle));
    assert_int_equal(f->calls, calls); /* the tool did not run */
    cJSON_Delete(r);
}

static void test_argument_checks(void **state)
{
    struct fx *f = *state;
    expect_invalid(f, "{}", "'word' is required");
    expect_invalid(f, "{\"word\":1}", "'word' must be a string");
    expect_invalid(f, "{\"word\":\"abcdefghi\"}", "longer than 8");
    expect_invalid(f, "{\"word\":\"a\",\"n\":0}", "'n' must be an integer from 1 to 5");
    expect_invalid(f, "{\"word\":\"a\",\"n\":2.5}", "'n' must be an integer");
    /* past long long: refused, not converted (undefined; fuzz_mcp) */
    expect_invalid(f, "{\"word\":\"a\",\"n\":4888888888888888888888888888888888888888888888}",
                   "'n' must be an integer");
    expect_invalid(f, "{\"word\":\"a\",\"n\":-1e300}", "'n' must be an integer");
    expect_invalid(f, "{\"word\":\"a\",\"n\":\"2\"}", "'n' must be an integer");
    expect_invalid(f, "{\"word\":\"a\",\"mode\":\"c\"}", "'mode' is not one of");
    expect_invalid(f, "{\"word\":\"a\",\"extra\":true}", "unknown argument 'extra'");
}

static void test_bad_tool_definitions(void **state)
{
    struct krc_mcp_tool bad = tools[0];
    struct krc_mcp_config cfg = {"krc", NULL, "1", NULL, &bad, 1, NULL};
    struct krc_mcp *m = NULL;
    struct krc_error err;
    (void)state;
    bad.name = "has space";
    assert_int_equal(krc_mcp_new(&cfg, &m, &err), KRC_EINVAL);
    bad.name = "ok";
    bad.input_schema = "[1]";
    assert_int_equal(krc_mcp_new(&cfg, &m, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "ok"));
    assert_null(m);
}

static void test_out_of_memory_is_clean(void **state)
{
    struct fx *f = *state;
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                      "\"name\":\"echo\",\"arguments\":{\"word\":\"hi\"}}}";
    /* every allocation failure point: an error, never a crash or a leak */
    for (long n = 0; n < 200; n++) {
        struct krc_error err;
        int rc;
        krc_buf_reset(&f->out);
        krc_mem_fail_after(n);
        rc = krc_mcp_handle(f->m, &f->sess, req, strlen(req), NULL, &f->out, &f->status, &err);
        krc_mem_fail_after(-1);
        assert_true(rc == 0 || rc == KRC_ENOMEM);
        assert_true(rc == 0 ? f->out.len > 0 : f->out.len == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_initialize_negotiates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modern_discover_and_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modern_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jsonrpc_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answers_are_always_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tool_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argument_checks, setup, teardown),
        cmocka_unit_test(test_bad_tool_definitions),
        cmocka_unit_test_setup_teardown(test_out_of_memory_is_clean, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
