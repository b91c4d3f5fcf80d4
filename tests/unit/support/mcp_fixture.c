/* The MCP tools server as a client calls it (mcp_fixture.h). */
#include "mcp_fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"

void krc_test_mcp_open(struct krc_test_mcp *f, const char *db,
                       const struct krc_mcp_scope_config *sc, long chunk, long budget)
{
    struct krc_mcp_tools_config tc;
    struct krc_error err;

    memset(f, 0, sizeof(*f));
    memset(&tc, 0, sizeof(tc));
    tc.db_path = db;
    tc.scope = sc;
    tc.scan_chunk = chunk;
    tc.scan_budget = budget;
    krc_error_clear(&err);
    if (krc_mcp_tools_new(&tc, &f->tools, &err) != 0) {
        fail_msg("krc_mcp_tools_new: %s", err.msg);
    }
    assert_int_equal(krc_mcp_tools_server(f->tools, &f->m, NULL), 0);
    krc_buf_init(&f->out, 1 << 22);
}

void krc_test_mcp_close(struct krc_test_mcp *f)
{
    cJSON_Delete(f->doc);
    krc_mcp_free(f->m);
    krc_mcp_tools_free(f->tools);
    krc_buf_cleanup(&f->out);
}

const cJSON *krc_test_mcp_call(struct krc_test_mcp *f, const char *name, const char *args)
{
    char req[2048];
    int status = 0;

    assert_true((size_t)snprintf(req, sizeof(req),
                                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                 "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                                 name, args) < sizeof(req));
    krc_buf_reset(&f->out);
    assert_int_equal(krc_mcp_handle(f->m, NULL, req, strlen(req), NULL, &f->out, &status, NULL), 0);
    cJSON_Delete(f->doc);
    f->doc = cJSON_Parse(krc_buf_str(&f->out));
    assert_non_null(f->doc);
    if (cJSON_GetObjectItemCaseSensitive(f->doc, "result") == NULL) {
        fail_msg("%s %s: %s", name, args, krc_buf_str(&f->out));
    }
    return cJSON_GetObjectItemCaseSensitive(f->doc, "result");
}

int krc_test_mcp_is_error(const cJSON *res)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError"));
}

const char *krc_test_mcp_text(const cJSON *res)
{
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "content"), 0);
    return cJSON_GetObjectItemCaseSensitive(c, "text")->valuestring;
}

const cJSON *krc_test_mcp_sc(const cJSON *res)
{
    if (krc_test_mcp_is_error(res)) {
        fail_msg("tool error: %s", krc_test_mcp_text(res));
    }
    return cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
}

void krc_test_mcp_refused(struct krc_test_mcp *f, const char *name, const char *args,
                          const char *needle, const char *needle2)
{
    const cJSON *res = krc_test_mcp_call(f, name, args);
    const char *text;

    if (!krc_test_mcp_is_error(res)) {
        fail_msg("%s %s answered: %s", name, args, krc_buf_str(&f->out));
    }
    text = krc_test_mcp_text(res);
    if (strstr(text, needle) == NULL || (needle2 != NULL && strstr(text, needle2) == NULL)) {
        fail_msg("%s %s: '%s' without '%s' / '%s'", name, args, text, needle,
                 needle2 != NULL ? needle2 : "");
    }
}
