/* The Streamable HTTP transport of MCP at one path (e.g. /mcp) of the HTTP
 * server, for a server that answers every request with one JSON response
 * and never streams:
 *   POST   a JSON-RPC message: 200 application/json with the response, 202
 *          with an empty body for a notification, 400/404 as krc_mcp_handle
 *          says; bodies over max_body get 413 (from the HTTP server)
 *   GET    405 (no server-to-client stream), DELETE 405 (no sessions)
 * Checked before the body is handled, in this order:
 *   - Origin (DNS rebinding): a request with an Origin whose host is not
 *     localhost, 127.0.0.1 or [::1] gets 403;
 *   - Host, when the server listens on loopback only: a Host other than
 *     localhost, 127.0.0.1 or [::1] (a rebound DNS name) gets 403;
 *   - the bearer token, when one is set: a missing or different
 *     "Authorization: Bearer TOKEN" gets 401 with WWW-Authenticate (compared
 *     in constant time);
 *   - Content-Type must be application/json, parameters allowed
 *     ("application/json; charset=utf-8"): a missing or other one (also
 *     "application/jsonfoo") gets 415 with "Accept: application/json";
 *   - Accept, when given, must allow application/json (application/json,
 *     application/ *, * / *; q above 0), else 406 (an MCP client lists
 *     application/json and text/event-stream; this server answers JSON only).
 * Refusals carry a JSON-RPC error body without an id. */
#ifndef KRC_MCP_HTTP_H
#define KRC_MCP_HTTP_H

#include <stddef.h>

#include "krc/serve/http_server.h"
#include "krc/mcp/mcp.h"
#include "krc/util/error.h"

#define KRC_MCP_HTTP_MAX_BODY (1024u * 1024u)
#define KRC_MCP_HTTP_TOKEN_MAX 4096

struct krc_mcp_http_config {
    const char *path;  /* NULL: "/mcp" */
    const char *token; /* copied; NULL: no token required */
    int loopback_only; /* the server listens on a loopback address only */
    size_t max_body;   /* NULL: KRC_MCP_HTTP_MAX_BODY */
};

struct krc_mcp_http_route;

/* Add the route to srv (before krc_http_server_start). m is borrowed and
 * must outlive the server; free *ret after the server. */
int krc_mcp_http_add(struct krc_http_server *srv, struct krc_mcp *m,
                     const struct krc_mcp_http_config *cfg, struct krc_mcp_http_route **ret,
                     struct krc_error *err);
void krc_mcp_http_free(struct krc_mcp_http_route *r);

/* Replace the route's bearer token (copied; thread-safe: requests being
 * checked see the old or the new one). 1 when it differs from the old one,
 * 0 when the same, KRC_ENOMEM (the old one kept). */
int krc_mcp_http_set_token(struct krc_mcp_http_route *r, const char *token, struct krc_error *err);

/* Is host (without brackets or port) "localhost" or a loopback address
 * (127.0.0.0/8, ::1)? */
int krc_mcp_http_is_loopback(const char *host);

/* Read a bearer token file: the first line, surrounding white space removed;
 * KRC_EINVAL when empty or longer than KRC_MCP_HTTP_TOKEN_MAX, KRC_EIO when
 * unreadable (the message names the file, never the token). Caller frees. */
int krc_mcp_http_read_token(const char *path, char **ret, struct krc_error *err);

#endif
