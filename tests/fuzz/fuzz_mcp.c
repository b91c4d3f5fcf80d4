/* The MCP request handler (mcp/mcp.c): one JSON-RPC message of any bytes,
 * with (first byte odd) or without the Streamable HTTP headers. The answer
 * is nothing with status 202, or one JSON object with jsonrpc "2.0", an id,
 * and exactly one of result and error (an integer code and a message), with
 * status 200, 400 or 404; and it is valid UTF-8 whatever bytes came in (RFC
 * 8259 8.1: names echoed in errors used to be copied byte for byte). */
#include <cjson/cJSON.h>
#include <string.h>

#include "fuzz.h"
#include "krc/mcp/mcp.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/text.h"

static int echo(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                struct krc_error *err)
{
    const cJSON *word = cJSON_GetObjectItemCaseSensitive(args, "word");
    (void)ud;
    if (cJSON_IsString(word) && strcmp(word->valuestring, "fail") == 0) {
        snprintf(msg, msgsz, "no such word");
        return KRC_MCP_TOOL_FAILED;
    }
    if (cJSON_IsString(word) && strcmp(word->valuestring, "crash") == 0) {
        return krc_error_set(err, KRC_EIO, "internal");
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct krc_mcp *m;
    struct krc_mcp_config cfg = {"krc", "Restarts", "1.0", "Read-only.", tools, 1, NULL};
    struct krc_mcp_http http = {KRC_MCP_VERSION_MODERN, "tools/call", "echo"};
    struct krc_mcp_session sess;
    struct krc_buf out;
    struct krc_error err;
    int status = 0;
    int rc;

    if (size < 1) {
        return 0;
    }
    if (m == NULL && krc_mcp_new(&cfg, &m, &err) != 0) {
        abort();
    }
    memset(&sess, 0, sizeof(sess));
    krc_buf_init(&out, 1u << 20);
    rc = krc_mcp_handle(m, (data[0] & 2) ? &sess : NULL, (const char *)data + 1, size - 1,
                        (data[0] & 1) ? &http : NULL, &out, &status, &err);
    FUZZ_CHECK(rc == 0, "handle failed: %d %s", rc, err.msg);
    if (out.len == 0) {
        FUZZ_CHECK(status == 202, "no answer but status %d", status);
    } else {
        cJSON *j = cJSON_ParseWithLength(out.data, out.len);
        const cJSON *result;
        const cJSON *error;
        FUZZ_CHECK(krc_text_utf8_valid(out.data, out.len), "answer is not UTF-8: %.300s", out.data);
        FUZZ_CHECK(j != NULL && cJSON_IsObject(j), "answer is not a JSON object: %.300s", out.data);
        FUZZ_CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "jsonrpc")) &&
                       strcmp(cJSON_GetObjectItemCaseSensitive(j, "jsonrpc")->valuestring, "2.0") ==
                           0,
                   "jsonrpc is not \"2.0\"");
        FUZZ_CHECK(cJSON_HasObjectItem(j, "id"), "answer without an id");
        result = cJSON_GetObjectItemCaseSensitive(j, "result");
        error = cJSON_GetObjectItemCaseSensitive(j, "error");
        FUZZ_CHECK((result != NULL) != (error != NULL), "result and error: %.300s", out.data);
        if (error != NULL) {
            FUZZ_CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(error, "code")) &&
                           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(error, "message")),
                       "bad error object: %.300s", out.data);
        } else {
            FUZZ_CHECK(cJSON_IsObject(result), "result is not an object");
        }
        FUZZ_CHECK(status == 200 || status == 400 || status == 404, "status %d", status);
        cJSON_Delete(j);
    }
    krc_buf_cleanup(&out);
    return 0;
}
