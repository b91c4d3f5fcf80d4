/* HTTP server for health, metrics and (later) MCP: the only module that sees
 * libmicrohttpd.
 *
 * Built-in routes (GET and HEAD; other methods get 405 with an Allow header;
 * unknown paths get 404; query strings are ignored):
 *   /healthz  200 "ok" while the liveness check passes, else 503 + reason
 *   /readyz   200 "ok" while the readiness check passes, else 503 + reason
 *   /metrics  the registry in Prometheus text format 0.0.4 (only when a
 *             registry is configured)
 * Further exact-path routes are added with krc_http_server_route before the
 * server starts.
 *
 * Every request: an HTTP/1.1 request without a Host header, and any request
 * with more than one or with an invalid value, gets 400 before routing
 * (RFC 9112 section 3.2).
 *
 * Threads: libmicrohttpd's internal polling thread accepts connections and
 * runs one thread per connection. Against slow and greedy clients
 * (krc/serve/http_guard.h): at most `max_connections` at once, at most
 * `max_connections_per_address` from one IP address (both refused at
 * accept, closed at once); the request head must be complete
 * `head_timeout_s` after the connection opened or its previous response,
 * the body received and the response taken within `request_timeout_s` each;
 * a connection silent for `connection_timeout_s` is closed (idle timeout).
 * Refusals and cuts are counted in krc_http_connections_rejected_total
 * {reason} of `metrics` and logged at warning, rate-limited. Handlers and the
 * check callbacks run on several threads at once and must be thread-safe.
 *
 * Shutdown (krc_http_server_stop): stop accepting (the listening socket is
 * closed at once), let requests in flight finish for up to
 * `drain_timeout_ms` (responses then carry "Connection: close"), then close
 * every connection and join the threads. */
#ifndef KRC_HTTP_SERVER_H
#define KRC_HTTP_SERVER_H

#include <stddef.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/serve/metrics.h"

#define KRC_HTTP_SERVER_DEFAULT_LISTEN "0.0.0.0:8080"
#define KRC_HTTP_SERVER_MAX_ROUTES 16
#define KRC_HTTP_SERVER_MAX_HEADERS 8 /* extra response headers per response */
#define KRC_HTTP_SERVER_REASON_MAX 256

/* Methods a route accepts (bit set). */
enum {
    KRC_HTTP_METHOD_GET = 1 << 0,
    KRC_HTTP_METHOD_HEAD = 1 << 1,
    KRC_HTTP_METHOD_POST = 1 << 2,
    KRC_HTTP_METHOD_PUT = 1 << 3,
    KRC_HTTP_METHOD_DELETE = 1 << 4,
    KRC_HTTP_METHOD_OPTIONS = 1 << 5,
};

/* Health check: return 1 when healthy (ready), 0 when not, after writing a
 * one-line reason into `reason` (size `reason_size`, NUL-terminated; control
 * characters are replaced before sending). Runs on server threads. */
typedef int (*krc_http_server_check_fn)(void *userdata, char *reason, size_t reason_size);

struct krc_http_server_config {
    const char *listen; /* "HOST:PORT" (copied); NULL: default above */
    /* borrowed, outlives the server; NULL: no /metrics. The server registers
     * krc_http_connections_rejected_total in it: one server per registry. */
    struct krc_metrics *metrics;
    krc_http_server_check_fn liveness;    /* NULL: always live */
    void *liveness_userdata;              /* borrowed */
    krc_http_server_check_fn readiness;   /* NULL: always ready */
    void *readiness_userdata;             /* borrowed */
    unsigned max_connections;             /* 0: 256 */
    unsigned max_connections_per_address; /* 0: 16 (at most max_connections) */
    unsigned connection_timeout_s;        /* idle: nothing received or sent; 0: 10 */
    unsigned head_timeout_s;              /* whole request head; 0: 10 */
    unsigned request_timeout_s;           /* body, and then response; 0: 30 */
    unsigned drain_timeout_ms;            /* at stop; 0: 5000 */
    size_t metrics_max_bytes;             /* cap on the /metrics body; 0: 8 MiB */
};

/* A request as a handler sees it; everything is borrowed for the call. */
struct krc_http_server_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* without the query string */
    const char *body;   /* NUL-terminated ("" when none) */
    size_t body_len;
    void *internal; /* for the lookup functions below */
};

/* Request header (case-insensitive name) or query argument, borrowed for the
 * handler call; NULL when absent. */
const char *krc_http_server_request_header(const struct krc_http_server_request *req,
                                           const char *name);
const char *krc_http_server_request_query(const struct krc_http_server_request *req,
                                          const char *key);

struct krc_http_server_header {
    char name[64];
    char value[512];
};

/* What a handler fills in. The server initializes status 200, content type
 * "text/plain; charset=utf-8" and an empty body of at most the route's
 * max_response bytes. */
struct krc_http_server_response {
    int status;
    char content_type[128];
    struct krc_buf body;
    struct krc_http_server_header headers[KRC_HTTP_SERVER_MAX_HEADERS];
    size_t n_headers;
};

/* Add a response header (copied). KRC_EINVAL for a bad name, a value with CR,
 * LF or NUL, or a value that does not fit; KRC_ETOOBIG when full. */
int krc_http_server_response_header(struct krc_http_server_response *resp, const char *name,
                                    const char *value);

/* Handler: fill `resp` and return 0; a negative return sends 500 with a
 * generic body (the handler logs details itself). */
typedef int (*krc_http_server_handler_fn)(const struct krc_http_server_request *req,
                                          struct krc_http_server_response *resp, void *userdata);

struct krc_http_server;

/* Parse "HOST:PORT": "0.0.0.0:8080", "[::]:8080", "127.0.0.1:0", ":8080"
 * (all IPv4 interfaces), "localhost:9090". Port 0..65535, 0 = any free port.
 * ret_host gets the host without brackets ("0.0.0.0" for an empty host).
 * KRC_EINVAL with a message naming the input and what is wrong. */
int krc_http_server_parse_listen(const char *listen, char *ret_host, size_t host_size,
                                 int *ret_port, struct krc_error *err);

/* Validate the configuration and build a stopped server (nothing is bound).
 * Caller frees with krc_http_server_free. */
int krc_http_server_new(const struct krc_http_server_config *cfg,
                        struct krc_http_server **ret_server, struct krc_error *err);

/* Route `path` (exact match, must start with '/', not a built-in path) to
 * `fn` for the `methods` given; other methods get 405. Request bodies over
 * `max_body` bytes get 413 (0: 1 MiB); response bodies are capped at
 * `max_response` (0: 4 MiB; a handler that overflows it gets 500). Only
 * before krc_http_server_start (KRC_EINVAL after). userdata is borrowed. */
int krc_http_server_route(struct krc_http_server *srv, const char *path, unsigned methods,
                          size_t max_body, size_t max_response, krc_http_server_handler_fn fn,
                          void *userdata, struct krc_error *err);

/* Bind and start serving. KRC_EIO when the address cannot be resolved or
 * bound (the message names the address and the OS error), KRC_EINVAL when
 * already started. */
int krc_http_server_start(struct krc_http_server *srv, struct krc_error *err);

/* The bound port (the chosen one for port 0); 0 when not started. */
int krc_http_server_port(const struct krc_http_server *srv);

/* Stop as described above; does nothing when not running. Not from a handler. */
void krc_http_server_stop(struct krc_http_server *srv);

/* Stop and free; accepts NULL. */
void krc_http_server_free(struct krc_http_server *srv);

#endif
