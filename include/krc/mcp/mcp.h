/* Model Context Protocol server core: JSON-RPC 2.0 over any transport.
 *
 * Pure: one request (bytes) in, one response (bytes, or none for a
 * notification) out, plus the HTTP status that the Streamable HTTP transport
 * answers with. The transports (stdio, HTTP) live with their callers.
 *
 * Both protocol eras (docs/mcp.md, ../shared/protocols.md part 3):
 *   - legacy 2025-06-18 and 2025-11-25: `initialize` negotiates the version
 *     (a supported one is echoed, any other gets 2025-11-25),
 *     `notifications/initialized`, `ping`;
 *   - stateless 2026-07-28: every request carries
 *     _meta["io.modelcontextprotocol/protocolVersion"] and
 *     _meta["io.modelcontextprotocol/clientCapabilities"]; `server/discover`;
 *     results carry resultType "complete" and the serverInfo in _meta, list
 *     results ttlMs and cacheScope. No session.
 * A request is modern when its _meta names a protocol version, else legacy;
 * legacy requests are served whether or not `initialize` came first (the HTTP
 * transport keeps no sessions).
 * `tools/list` and `tools/call` work in both.
 *
 * Errors: JSON-RPC -32700 (parse error), -32600 (invalid request: not an
 * object, jsonrpc not "2.0", bad id or method, a batch), -32601 (unknown
 * method), -32602 (params not an object, unknown tool, arguments not an
 * object, a bad cursor, a modern request without its _meta fields), -32603
 * (internal), -32020 (modern HTTP header does not match the body), -32022
 * (unsupported modern version). A tool that rejects its arguments or fails
 * answers a result with isError true and a text item saying why (the
 * 2025-11-25 rule: the model can correct itself).
 *
 * Threads: a struct krc_mcp is immutable after krc_mcp_new and may serve
 * several threads at once if its tools may; a session belongs to one
 * transport connection. */
#ifndef KRC_MCP_H
#define KRC_MCP_H

#include <stddef.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"

/* cJSON's type, declared only: its library stays inside mcp/ (the tools and the core
 * include <cjson/cJSON.h>). */
struct cJSON;

#define KRC_MCP_VERSION_MODERN "2026-07-28"
#define KRC_MCP_VERSION_LEGACY "2025-11-25" /* the newest legacy version */
#define KRC_MCP_VERSION_LEGACY_OLD "2025-06-18"

#define KRC_MCP_PARSE_ERROR (-32700)
#define KRC_MCP_INVALID_REQUEST (-32600)
#define KRC_MCP_METHOD_NOT_FOUND (-32601)
#define KRC_MCP_INVALID_PARAMS (-32602)
#define KRC_MCP_INTERNAL_ERROR (-32603)
#define KRC_MCP_HEADER_MISMATCH (-32020)
#define KRC_MCP_UNSUPPORTED_VERSION (-32022)

/* A tool's answer (krc_mcp_tool_fn's return). */
enum {
    KRC_MCP_TOOL_OK = 0,     /* *ret is the structured result */
    KRC_MCP_TOOL_FAILED = 1, /* msg says why: a result with isError true */
};

/* Run a tool: `args` is the arguments object (never NULL: {} when the
 * request had none). On KRC_MCP_TOOL_OK set *ret to a cJSON object (the
 * structuredContent; the core takes it). On KRC_MCP_TOOL_FAILED write a
 * one-line reason into msg (msgsz bytes). A negative krc error code is an
 * internal error (-32603, err->msg logged, not sent). */
typedef int (*krc_mcp_tool_fn)(void *ud, const struct cJSON *args, struct cJSON **ret, char *msg,
                               size_t msgsz, struct krc_error *err);

struct krc_mcp_tool {
    const char *name;          /* [A-Za-z0-9_.-]{1,128}, unique */
    const char *title;         /* may be NULL */
    const char *description;   /* required */
    const char *input_schema;  /* JSON Schema object as JSON text, required */
    const char *output_schema; /* JSON text; NULL: none */
    krc_mcp_tool_fn call;
};

struct krc_mcp_config {
    const char *name;                 /* serverInfo.name, required */
    const char *title;                /* may be NULL */
    const char *version;              /* serverInfo.version, required */
    const char *instructions;         /* may be NULL */
    const struct krc_mcp_tool *tools; /* borrowed, outlives the server */
    size_t n_tools;
    void *tool_ud; /* passed to every tool */
};

/* Per-connection state: the legacy version negotiated by `initialize`. */
struct krc_mcp_session {
    char version[16]; /* "" before initialize */
    int initialized;  /* notifications/initialized seen */
};

/* What the Streamable HTTP transport saw in the request headers (NULL when
 * absent); pass NULL for stdio. */
struct krc_mcp_http {
    const char *protocol_version; /* MCP-Protocol-Version */
    const char *method;           /* Mcp-Method */
    const char *name;             /* Mcp-Name */
};

struct krc_mcp;

/* Check every tool (name rule, schemas parse as JSON objects) and build the
 * server. KRC_EINVAL naming the tool; KRC_ENOMEM. Free with krc_mcp_free. */
int krc_mcp_new(const struct krc_mcp_config *cfg, struct krc_mcp **ret, struct krc_error *err);
void krc_mcp_free(struct krc_mcp *m);

/* Handle one JSON-RPC message of len bytes. Appends the response (compact
 * JSON, no newline) to out, or nothing for a notification or a client
 * response. *ret_status gets the HTTP status: 200 with a response, 202
 * without one, 400 for parse errors, invalid requests and modern _meta or
 * header errors, 404 for an unknown modern method. `sess` may be NULL
 * (stateless). Returns 0, or KRC_ENOMEM / KRC_ETOOBIG when out cannot hold
 * the response (out is then reset). */
int krc_mcp_handle(struct krc_mcp *m, struct krc_mcp_session *sess, const char *req, size_t len,
                   const struct krc_mcp_http *http, struct krc_buf *out, int *ret_status,
                   struct krc_error *err);

/* Append a JSON-RPC error without an id (transport-level refusals such as a
 * request that is too large). */
int krc_mcp_error_json(struct krc_buf *out, int code, const char *message);

#endif
