/* MCP protocol core: JSON-RPC 2.0 dispatch for both protocol eras. */
#include "krc/mcp/mcp.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER "io.modelcontextprotocol/serverInfo"
#define TOOL_MSG_MAX 1024

struct krc_mcp {
    struct krc_mcp_config cfg;
    cJSON *tools_json; /* the tools array of tools/list, built once */
};

enum era { ERA_LEGACY, ERA_MODERN };

/* One request being handled. */
struct call {
    struct krc_mcp *m;
    struct krc_mcp_session *sess;
    const struct krc_mcp_http *http;
    const cJSON *id; /* NULL: a notification */
    const char *method;
    const cJSON *params; /* object or NULL */
    enum era era;
    cJSON *result; /* set by a method on success */
    int code;      /* set by a method on error */
    char msg[256];
    cJSON *data; /* error data, may stay NULL */
    int status;  /* HTTP status of an error */
    struct krc_error *err;
};

static const char *const legacy_versions[] = {KRC_MCP_VERSION_LEGACY, KRC_MCP_VERSION_LEGACY_OLD};

static int fail(struct call *c, int code, int status, const char *fmt, const char *arg)
{
    c->code = code;
    c->status = status;
    snprintf(c->msg, sizeof(c->msg), fmt, arg != NULL ? arg : "");
    return -1;
}

static int oom(struct call *c)
{
    return fail(c, KRC_MCP_INTERNAL_ERROR, 500, "out of memory%s", NULL);
}

/* ---- building --------------------------------------------------------------------------- */

static int valid_tool_name(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    if (n == 0 || n > 128) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '.' || ch == '-';
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

static cJSON *schema(const char *text)
{
    cJSON *v = text != NULL ? cJSON_Parse(text) : NULL;
    if (v != NULL && !cJSON_IsObject(v)) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

static int add_annotations(cJSON *o, const char *title)
{
    cJSON *a = cJSON_AddObjectToObject(o, "annotations");
    if (a == NULL) {
        return 0;
    }
    if (title != NULL && cJSON_AddStringToObject(a, "title", title) == NULL) {
        return 0;
    }
    return cJSON_AddBoolToObject(a, "readOnlyHint", 1) != NULL &&
           cJSON_AddBoolToObject(a, "destructiveHint", 0) != NULL &&
           cJSON_AddBoolToObject(a, "idempotentHint", 1) != NULL &&
           cJSON_AddBoolToObject(a, "openWorldHint", 0) != NULL;
}

static int tool_json(const struct krc_mcp_tool *t, cJSON *arr, struct krc_error *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *in = schema(t->input_schema);
    cJSON *out = t->output_schema != NULL ? schema(t->output_schema) : NULL;
    int ok;

    if (o == NULL || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        cJSON_Delete(in);
        cJSON_Delete(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (in == NULL || (t->output_schema != NULL && out == NULL)) {
        cJSON_Delete(in);
        cJSON_Delete(out);
        return krc_error_set(err, KRC_EINVAL, "MCP tool %s: %s schema is not a JSON object",
                             t->name, in == NULL ? "input" : "output");
    }
    ok = cJSON_AddStringToObject(o, "name", t->name) != NULL;
    ok = ok && (t->title == NULL || cJSON_AddStringToObject(o, "title", t->title) != NULL);
    ok = ok && cJSON_AddStringToObject(o, "description", t->description) != NULL;
    ok = ok && cJSON_AddItemToObject(o, "inputSchema", in);
    in = ok ? NULL : in;
    ok = ok && (out == NULL || cJSON_AddItemToObject(o, "outputSchema", out));
    out = ok ? NULL : out;
    ok = ok && add_annotations(o, t->title);
    cJSON_Delete(in);
    cJSON_Delete(out);
    return ok ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

int krc_mcp_new(const struct krc_mcp_config *cfg, struct krc_mcp **ret, struct krc_error *err)
{
    struct krc_mcp *m;

    *ret = NULL;
    if (cfg == NULL || cfg->name == NULL || cfg->version == NULL ||
        (cfg->n_tools > 0 && cfg->tools == NULL)) {
        return krc_error_set(err, KRC_EINVAL, "MCP server: name, version and tools are required");
    }
    for (size_t i = 0; i < cfg->n_tools; i++) {
        const struct krc_mcp_tool *t = &cfg->tools[i];
        if (!valid_tool_name(t->name) || t->description == NULL || t->call == NULL) {
            return krc_error_set(err, KRC_EINVAL,
                                 "MCP tool %zu ('%s'): needs a name of 1-128 [A-Za-z0-9_.-], "
                                 "a description and a function",
                                 i, t->name != NULL ? t->name : "");
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cfg->tools[j].name, t->name) == 0) {
                return krc_error_set(err, KRC_EINVAL, "MCP tool %s: defined twice", t->name);
            }
        }
    }
    m = krc_calloc(1, sizeof(*m));
    if (m == NULL || (m->tools_json = cJSON_CreateArray()) == NULL) {
        krc_free(m);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    m->cfg = *cfg;
    for (size_t i = 0; i < cfg->n_tools; i++) {
        int rc = tool_json(&cfg->tools[i], m->tools_json, err);
        if (rc < 0) {
            krc_mcp_free(m);
            return rc;
        }
    }
    *ret = m;
    return 0;
}

void krc_mcp_free(struct krc_mcp *m)
{
    if (m == NULL) {
        return;
    }
    cJSON_Delete(m->tools_json);
    krc_free(m);
}

/* ---- methods ---------------------------------------------------------------------------- */

static cJSON *server_info(const struct krc_mcp *m)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL && cJSON_AddStringToObject(o, "name", m->cfg.name) != NULL &&
             (m->cfg.title == NULL || cJSON_AddStringToObject(o, "title", m->cfg.title) != NULL) &&
             cJSON_AddStringToObject(o, "version", m->cfg.version) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int add_capabilities(cJSON *result)
{
    cJSON *caps = cJSON_AddObjectToObject(result, "capabilities");
    cJSON *tools = caps != NULL ? cJSON_AddObjectToObject(caps, "tools") : NULL;
    return tools != NULL && cJSON_AddBoolToObject(tools, "listChanged", 0) != NULL;
}

static int add_instructions(const struct krc_mcp *m, cJSON *result)
{
    return m->cfg.instructions == NULL ||
           cJSON_AddStringToObject(result, "instructions", m->cfg.instructions) != NULL;
}

static const char *supported_legacy(const char *v)
{
    for (size_t i = 0; v != NULL && i < sizeof(legacy_versions) / sizeof(legacy_versions[0]); i++) {
        if (strcmp(v, legacy_versions[i]) == 0) {
            return legacy_versions[i];
        }
    }
    return NULL;
}

static int m_initialize(struct call *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->params, "protocolVersion");
    const char *ver;
    cJSON *info;
    int ok;

    if (!cJSON_IsString(v)) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 200,
                    "initialize: params.protocolVersion (a string) is required%s", NULL);
    }
    ver = supported_legacy(v->valuestring);
    if (ver == NULL) {
        ver = KRC_MCP_VERSION_LEGACY; /* our latest; the client decides */
    }
    if (c->sess != NULL) {
        snprintf(c->sess->version, sizeof(c->sess->version), "%s", ver);
        c->sess->initialized = 0;
    }
    c->result = cJSON_CreateObject();
    info = server_info(c->m);
    ok = c->result != NULL && info != NULL &&
         cJSON_AddStringToObject(c->result, "protocolVersion", ver) != NULL &&
         add_capabilities(c->result) && cJSON_AddItemToObject(c->result, "serverInfo", info);
    if (!ok) {
        cJSON_Delete(info);
        return oom(c);
    }
    return add_instructions(c->m, c->result) ? 0 : oom(c);
}

static int m_discover(struct call *c)
{
    cJSON *vs;
    int ok;

    c->result = cJSON_CreateObject();
    vs = c->result != NULL ? cJSON_AddArrayToObject(c->result, "supportedVersions") : NULL;
    ok = vs != NULL;
    ok = ok && cJSON_AddItemToArray(vs, cJSON_CreateString(KRC_MCP_VERSION_MODERN));
    for (size_t i = 0; ok && i < sizeof(legacy_versions) / sizeof(legacy_versions[0]); i++) {
        ok = cJSON_AddItemToArray(vs, cJSON_CreateString(legacy_versions[i]));
    }
    ok = ok && add_capabilities(c->result) && add_instructions(c->m, c->result);
    ok = ok && cJSON_AddNumberToObject(c->result, "ttlMs", 3600000) != NULL &&
         cJSON_AddStringToObject(c->result, "cacheScope", "public") != NULL;
    return ok ? 0 : oom(c);
}

static int m_ping(struct call *c)
{
    c->result = cJSON_CreateObject();
    return c->result != NULL ? 0 : oom(c);
}

static int m_tools_list(struct call *c)
{
    const cJSON *cursor = cJSON_GetObjectItemCaseSensitive(c->params, "cursor");
    cJSON *tools;

    /* every tool fits one page: no cursor is ever handed out */
    if (cursor != NULL && !cJSON_IsNull(cursor)) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 200,
                    "tools/list: invalid cursor (this server never returns one)%s", NULL);
    }
    c->result = cJSON_CreateObject();
    tools = cJSON_Duplicate(c->m->tools_json, 1);
    if (c->result == NULL || tools == NULL || !cJSON_AddItemToObject(c->result, "tools", tools)) {
        cJSON_Delete(tools);
        return oom(c);
    }
    if (c->era == ERA_MODERN &&
        (cJSON_AddNumberToObject(c->result, "ttlMs", 60000) == NULL ||
         cJSON_AddStringToObject(c->result, "cacheScope", "private") == NULL)) {
        return oom(c);
    }
    return 0;
}

static int tool_result(struct call *c, cJSON *structured, const char *error_text)
{
    cJSON *content;
    cJSON *item;
    char *text = NULL;
    int ok;

    c->result = cJSON_CreateObject();
    content = c->result != NULL ? cJSON_AddArrayToObject(c->result, "content") : NULL;
    item = cJSON_CreateObject();
    ok = content != NULL && item != NULL && cJSON_AddItemToArray(content, item);
    if (!ok) {
        cJSON_Delete(item);
        cJSON_Delete(structured);
        return oom(c);
    }
    if (structured != NULL) {
        text = cJSON_PrintUnformatted(structured);
    }
    ok = cJSON_AddStringToObject(item, "type", "text") != NULL &&
         (structured == NULL || text != NULL) &&
         cJSON_AddStringToObject(item, "text", structured != NULL ? text : error_text) != NULL;
    cJSON_free(text);
    if (ok && structured != NULL) {
        ok = cJSON_AddItemToObject(c->result, "structuredContent", structured);
        structured = ok ? NULL : structured;
    }
    cJSON_Delete(structured);
    ok = ok && cJSON_AddBoolToObject(c->result, "isError", error_text != NULL) != NULL;
    return ok ? 0 : oom(c);
}

/* ---- arguments ---------------------------------------------------------------------------- */

/* The subset of JSON Schema the tools use: type string (maxLength, enum),
 * integer (minimum, maximum), boolean; required; additionalProperties false. */
static int check_value(const char *name, const cJSON *prop, const cJSON *v, char *msg, size_t msgsz)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(prop, "type");
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(prop, "minimum");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(prop, "maximum");
    const cJSON *maxlen = cJSON_GetObjectItemCaseSensitive(prop, "maxLength");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(prop, "enum");
    const cJSON *e;

    if (strcmp(t, "string") == 0) {
        if (!cJSON_IsString(v)) {
            snprintf(msg, msgsz, "invalid arguments: '%s' must be a string", name);
            return -1;
        }
        if (cJSON_IsNumber(maxlen) && strlen(v->valuestring) > (size_t)maxlen->valuedouble) {
            snprintf(msg, msgsz, "invalid arguments: '%s' is longer than %d characters", name,
                     (int)maxlen->valuedouble);
            return -1;
        }
        if (cJSON_IsArray(en)) {
            cJSON_ArrayForEach(e, en)
            {
                if (cJSON_IsString(e) && strcmp(e->valuestring, v->valuestring) == 0) {
                    return 0;
                }
            }
            snprintf(msg, msgsz, "invalid arguments: '%s' is not one of the allowed values", name);
            return -1;
        }
        return 0;
    }
    if (strcmp(t, "integer") == 0) {
        double d = cJSON_IsNumber(v) ? v->valuedouble : 0.5;
        /* within JSON's exact integers (the default bounds below) before the
         * cast: converting a larger double to long long is undefined (found
         * by fuzz_mcp: 4.9e45) */
        if (!cJSON_IsNumber(v) || !(d >= -9007199254740991.0 && d <= 9007199254740991.0) ||
            d != (double)(long long)d || (cJSON_IsNumber(lo) && d < lo->valuedouble) ||
            (cJSON_IsNumber(hi) && d > hi->valuedouble)) {
            snprintf(msg, msgsz, "invalid arguments: '%s' must be an integer from %.0f to %.0f",
                     name, cJSON_IsNumber(lo) ? lo->valuedouble : -9007199254740991.0,
                     cJSON_IsNumber(hi) ? hi->valuedouble : 9007199254740991.0);
            return -1;
        }
        return 0;
    }
    if (strcmp(t, "boolean") == 0 && !cJSON_IsBool(v)) {
        snprintf(msg, msgsz, "invalid arguments: '%s' must be true or false", name);
        return -1;
    }
    return 0;
}

static int check_args(const cJSON *schema, const cJSON *args, char *msg, size_t msgsz)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    const cJSON *a;

    cJSON_ArrayForEach(a, args)
    {
        const cJSON *prop = cJSON_GetObjectItemCaseSensitive(props, a->string);
        if (prop == NULL && cJSON_IsFalse(extra)) {
            snprintf(msg, msgsz, "invalid arguments: unknown argument '%.100s'", a->string);
            return -1;
        }
        if (prop != NULL && check_value(a->string, prop, a, msg, msgsz) < 0) {
            return -1;
        }
    }
    cJSON_ArrayForEach(a, req)
    {
        if (cJSON_IsString(a) && cJSON_GetObjectItemCaseSensitive(args, a->valuestring) == NULL) {
            snprintf(msg, msgsz, "invalid arguments: '%.100s' is required", a->valuestring);
            return -1;
        }
    }
    return 0;
}

static int m_tools_call(struct call *c)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(c->params, "arguments");
    const struct krc_mcp_tool *tool = NULL;
    const cJSON *schema_json = NULL;
    cJSON *empty = NULL;
    cJSON *structured = NULL;
    char msg[TOOL_MSG_MAX];
    int rc;

    if (!cJSON_IsString(name)) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 200,
                    "tools/call: params.name (a string) is required%s", NULL);
    }
    for (size_t i = 0; i < c->m->cfg.n_tools; i++) {
        if (strcmp(c->m->cfg.tools[i].name, name->valuestring) == 0) {
            tool = &c->m->cfg.tools[i];
            schema_json = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(c->m->tools_json, (int)i), "inputSchema");
        }
    }
    if (tool == NULL) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 200, "Unknown tool: %.200s", name->valuestring);
    }
    if (args != NULL && !cJSON_IsNull(args) && !cJSON_IsObject(args)) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 200,
                    "tools/call %.200s: arguments must be an object", tool->name);
    }
    if (args == NULL || cJSON_IsNull(args)) {
        if ((empty = cJSON_CreateObject()) == NULL) {
            return oom(c);
        }
        args = empty;
    }
    msg[0] = '\0';
    if (check_args(schema_json, args, msg, sizeof(msg)) < 0) {
        cJSON_Delete(empty);
        return tool_result(c, NULL, msg);
    }
    rc = tool->call(c->m->cfg.tool_ud, args, &structured, msg, sizeof(msg), c->err);
    cJSON_Delete(empty);
    if (rc < 0) {
        cJSON_Delete(structured);
        krc_log(KRC_LOG_ERROR, "mcp: tool %s: %s", tool->name, c->err->msg);
        return fail(c, KRC_MCP_INTERNAL_ERROR, 500, "tool %.200s failed inside the server",
                    tool->name);
    }
    if (rc == KRC_MCP_TOOL_OK && structured != NULL) {
        return tool_result(c, structured, NULL);
    }
    cJSON_Delete(structured);
    return tool_result(c, NULL, msg[0] != '\0' ? msg : "the tool failed");
}

/* ---- dispatch ----------------------------------------------------------------------------- */

static int same(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A modern request over HTTP: the headers must repeat the body. */
static int check_modern_headers(struct call *c, const char *version)
{
    const struct krc_mcp_http *h = c->http;
    const cJSON *name;

    if (h == NULL) {
        return 0;
    }
    if (!same(h->protocol_version, version)) {
        return fail(c, KRC_MCP_HEADER_MISMATCH, 400,
                    "MCP-Protocol-Version header missing or not equal to _meta's %s", version);
    }
    if (!same(h->method, c->method)) {
        return fail(c, KRC_MCP_HEADER_MISMATCH, 400,
                    "Mcp-Method header missing or not equal to the method %.200s", c->method);
    }
    name = cJSON_GetObjectItemCaseSensitive(c->params, "name");
    if (strcmp(c->method, "tools/call") == 0 && cJSON_IsString(name) &&
        !same(h->name, name->valuestring)) {
        return fail(c, KRC_MCP_HEADER_MISMATCH, 400,
                    "Mcp-Name header missing or not equal to params.name %.200s",
                    name->valuestring);
    }
    return 0;
}

/* Decide the era; check the modern _meta or the legacy version header. */
static int classify(struct call *c)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(c->params, "_meta");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, META_VERSION);
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(meta, META_CAPS);

    c->era = ERA_LEGACY;
    /* clang-tidy: classify() runs only after envelope_check() set c->method (c->code == 0); the
     * analyzer forgets c->code when fail() snprintf()s into c->msg */
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
    if (strcmp(c->method, "initialize") == 0) {
        return 0;
    }
    if (ver == NULL) {
        if (strcmp(c->method, "server/discover") == 0) {
            return fail(c, KRC_MCP_INVALID_PARAMS, 400,
                        "server/discover: params._meta[\"" META_VERSION "\"] is required%s", NULL);
        }
        if (c->http != NULL && c->http->protocol_version != NULL &&
            strcmp(c->http->protocol_version, "2025-03-26") != 0 &&
            supported_legacy(c->http->protocol_version) == NULL) {
            return fail(c, KRC_MCP_INVALID_REQUEST, 400,
                        "unsupported MCP-Protocol-Version header %.40s (without a modern _meta)",
                        c->http->protocol_version);
        }
        return 0;
    }
    c->era = ERA_MODERN;
    if (!cJSON_IsString(ver) || strcmp(ver->valuestring, KRC_MCP_VERSION_MODERN) != 0) {
        cJSON *sv = cJSON_CreateStringArray((const char *const[]){KRC_MCP_VERSION_MODERN,
                                                                  KRC_MCP_VERSION_LEGACY,
                                                                  KRC_MCP_VERSION_LEGACY_OLD},
                                            3);
        c->data = cJSON_CreateObject();
        if (c->data == NULL || sv == NULL || !cJSON_AddItemToObject(c->data, "supported", sv)) {
            cJSON_Delete(sv);
            return oom(c);
        }
        cJSON_AddItemToObject(c->data, "requested",
                              cJSON_IsString(ver) ? cJSON_CreateString(ver->valuestring)
                                                  : cJSON_Duplicate(ver, 1));
        return fail(c, KRC_MCP_UNSUPPORTED_VERSION, 400, "unsupported protocol version%s", NULL);
    }
    if (!cJSON_IsObject(caps)) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 400,
                    "params._meta[\"" META_CAPS "\"] (an object) is required%s", NULL);
    }
    return check_modern_headers(c, ver->valuestring);
}

static int dispatch(struct call *c)
{
    const char *m = c->method;

    if (classify(c) < 0) {
        return -1;
    }
    if (strcmp(m, "tools/list") == 0) {
        return m_tools_list(c);
    }
    if (strcmp(m, "tools/call") == 0) {
        return m_tools_call(c);
    }
    if (c->era == ERA_LEGACY && strcmp(m, "initialize") == 0) {
        return m_initialize(c);
    }
    if (c->era == ERA_LEGACY && strcmp(m, "ping") == 0) {
        return m_ping(c);
    }
    if (c->era == ERA_MODERN && strcmp(m, "server/discover") == 0) {
        return m_discover(c);
    }
    return fail(c, KRC_MCP_METHOD_NOT_FOUND, c->era == ERA_MODERN ? 404 : 200,
                "Method not found: %.200s", m);
}

static void notification(struct call *c)
{
    if (c->sess != NULL && strcmp(c->method, "notifications/initialized") == 0) {
        c->sess->initialized = 1;
    }
    /* notifications/cancelled and any other: nothing runs in the background */
}

/* ---- framing ------------------------------------------------------------------------------ */

/* Append JSON text with every byte that is not part of valid UTF-8 replaced
 * by U+FFFD: an answer is always valid JSON (RFC 8259 8.1), whatever bytes a
 * stored row, a header or a message cut at a byte count hold. cJSON prints
 * every byte >= 0x80 as it is, and only inside strings, so a replacement
 * never touches the structure. */
static int append_utf8(struct krc_buf *out, const char *text)
{
    size_t len = strlen(text);
    size_t run = 0; /* start of the valid bytes not yet appended */
    size_t i = 0;
    uint32_t cp;
    int rc = 0;

    while (i < len && rc == 0) {
        size_t n = (unsigned char)text[i] < 0x80 ? 1 : krc_text_utf8_decode(text + i, len - i, &cp);
        if (n > 0) {
            i += n;
            continue;
        }
        rc = krc_buf_append(out, text + run, i - run);
        rc = rc < 0 ? rc : krc_buf_append_str(out, KRC_TEXT_REPLACEMENT);
        run = ++i;
    }
    return rc < 0 ? rc : krc_buf_append(out, text + run, len - run);
}

static int emit(struct krc_buf *out, cJSON *msg, struct krc_error *err)
{
    char *text = msg != NULL ? cJSON_PrintUnformatted(msg) : NULL;
    int rc;

    cJSON_Delete(msg);
    if (text == NULL) {
        krc_buf_reset(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = append_utf8(out, text);
    cJSON_free(text);
    if (rc < 0) {
        krc_buf_reset(out);
        return krc_error_set(err, rc, "MCP response does not fit the output limit");
    }
    return 0;
}

static cJSON *envelope(const cJSON *id)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || cJSON_AddStringToObject(o, "jsonrpc", "2.0") == NULL) {
        cJSON_Delete(o);
        return NULL;
    }
    if (!cJSON_AddItemToObject(o, "id", id != NULL ? cJSON_Duplicate(id, 0) : cJSON_CreateNull())) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *error_msg(const cJSON *id, int code, const char *message, cJSON *data)
{
    cJSON *o = envelope(id);
    cJSON *e = o != NULL ? cJSON_AddObjectToObject(o, "error") : NULL;
    int ok = e != NULL && cJSON_AddNumberToObject(e, "code", code) != NULL &&
             cJSON_AddStringToObject(e, "message", message) != NULL;
    if (ok && data != NULL) {
        ok = cJSON_AddItemToObject(e, "data", data);
        data = ok ? NULL : data;
    }
    cJSON_Delete(data);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int krc_mcp_error_json(struct krc_buf *out, int code, const char *message)
{
    struct krc_error err;
    return emit(out, error_msg(NULL, code, message, NULL), &err);
}

static int reply(struct call *c, struct krc_buf *out, int *ret_status)
{
    cJSON *o;

    if (c->code != 0) {
        cJSON_Delete(c->result);
        *ret_status = c->status;
        o = error_msg(c->id, c->code, c->msg, c->data);
        c->data = NULL;
        return emit(out, o, c->err);
    }
    if (c->era == ERA_MODERN) {
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(c->result, "_meta");
        cJSON *info = server_info(c->m);
        int ok = info != NULL && cJSON_AddStringToObject(c->result, "resultType", "complete");
        if (ok && meta == NULL) {
            meta = cJSON_AddObjectToObject(c->result, "_meta");
        }
        ok = ok && meta != NULL && cJSON_AddItemToObject(meta, META_SERVER, info);
        if (!ok) {
            cJSON_Delete(info);
            cJSON_Delete(c->result);
            krc_buf_reset(out);
            return krc_error_set(c->err, KRC_ENOMEM, "out of memory");
        }
    }
    *ret_status = 200;
    o = envelope(c->id);
    if (o == NULL || !cJSON_AddItemToObject(o, "result", c->result)) {
        cJSON_Delete(o);
        cJSON_Delete(c->result);
        return krc_error_set(c->err, KRC_ENOMEM, "out of memory");
    }
    return emit(out, o, c->err);
}

static int only_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') {
            return 0;
        }
    }
    return 1;
}

/* Check the envelope; fills c->id, method, params. -1 with c's error set. */
static int envelope_check(struct call *c, const cJSON *msg)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");

    if (cJSON_IsArray(msg)) {
        return fail(c, KRC_MCP_INVALID_REQUEST, 400,
                    "Invalid Request: JSON-RPC batches are not supported%s", NULL);
    }
    if (!cJSON_IsObject(msg) || !cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0) {
        return fail(c, KRC_MCP_INVALID_REQUEST, 400, "Invalid Request: not a JSON-RPC 2.0 object%s",
                    NULL);
    }
    if (id != NULL && (cJSON_IsString(id) || cJSON_IsNumber(id))) {
        c->id = id;
    } else if (id != NULL) {
        return fail(c, KRC_MCP_INVALID_REQUEST, 400,
                    "Invalid Request: id must be a string or a number%s", NULL);
    }
    if (!cJSON_IsString(method) || method->valuestring[0] == '\0') {
        return fail(c, KRC_MCP_INVALID_REQUEST, 400,
                    "Invalid Request: method (a string) is required%s", NULL);
    }
    c->method = method->valuestring;
    if (params != NULL && !cJSON_IsObject(params)) {
        return fail(c, KRC_MCP_INVALID_PARAMS, 200, "Invalid params: params must be an object%s",
                    NULL);
    }
    c->params = params;
    return 0;
}

int krc_mcp_handle(struct krc_mcp *m, struct krc_mcp_session *sess, const char *req, size_t len,
                   const struct krc_mcp_http *http, struct krc_buf *out, int *ret_status,
                   struct krc_error *err)
{
    struct call c;
    struct krc_error local;
    const char *end = NULL;
    cJSON *msg;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    if (err == NULL) {
        err = &local;
    }
    c.m = m;
    c.sess = sess;
    c.http = http;
    c.err = err;
    *ret_status = 202;
    if (!krc_text_utf8_valid(req, len)) {
        /* RFC 8259 8.1: JSON exchanged between systems is UTF-8; cJSON would
         * take any bytes, and a method or tool name echoed in an error would
         * make the answer invalid JSON */
        *ret_status = 400;
        return emit(
            out,
            error_msg(NULL, KRC_MCP_PARSE_ERROR, "Parse error: the message is not UTF-8", NULL),
            err);
    }
    msg = cJSON_ParseWithLengthOpts(req, len, &end, 0);
    if (msg == NULL || end == NULL || !only_space(end, len - (size_t)(end - req))) {
        cJSON_Delete(msg);
        *ret_status = 400;
        return emit(out, error_msg(NULL, KRC_MCP_PARSE_ERROR, "Parse error: not valid JSON", NULL),
                    err);
    }
    if (cJSON_IsObject(msg) && cJSON_GetObjectItemCaseSensitive(msg, "method") == NULL &&
        (cJSON_HasObjectItem(msg, "result") || cJSON_HasObjectItem(msg, "error"))) {
        cJSON_Delete(msg); /* a client's response: this server sends no requests */
        return 0;
    }
    if ((envelope_check(&c, msg) == 0 || c.method != NULL) && c.id == NULL) {
        notification(&c);
        cJSON_Delete(msg);
        return 0;
    }
    if (c.code == 0) {
        dispatch(&c);
    }
    rc = reply(&c, out, ret_status);
    cJSON_Delete(c.data);
    cJSON_Delete(msg);
    return rc;
}
