#include "krc/serve/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "krc/serve/http_guard.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

/* Connections: a slow client's 16 still leave 240 for everyone else (the
 * kubelet's probes, Prometheus, MCP clients). Each connection has a thread
 * (libmicrohttpd's thread-per-connection mode) with the default stack, which
 * is reserved address space: only the pages a handler touches are resident,
 * and the MCP handlers' stack use has not been measured, so it is not cut. */
#define DEFAULT_MAX_CONNECTIONS 256
#define DEFAULT_MAX_PER_ADDRESS 16
#define DEFAULT_CONN_TIMEOUT_S 10
#define DEFAULT_HEAD_TIMEOUT_S 10
#define DEFAULT_REQUEST_TIMEOUT_S 30
#define DEFAULT_DRAIN_MS 5000
#define DEFAULT_METRICS_MAX (8u * 1024u * 1024u)
#define DEFAULT_MAX_BODY (1024u * 1024u)
#define DEFAULT_MAX_RESPONSE (4u * 1024u * 1024u)
#define HOST_MAX 256
#define TEXT_PLAIN "text/plain; charset=utf-8"

enum builtin {
    ROUTE_CUSTOM = 0,
    ROUTE_HEALTHZ,
    ROUTE_READYZ,
    ROUTE_METRICS,
};

struct route {
    char *path;
    enum builtin builtin;
    unsigned methods;
    size_t max_body;
    size_t max_response;
    krc_http_server_handler_fn fn;
    void *userdata;
};

struct krc_http_server {
    struct krc_http_server_config cfg;
    char *listen;
    char host[HOST_MAX];
    int port_wanted;
    int port; /* bound */
    struct route routes[KRC_HTTP_SERVER_MAX_ROUTES + 3];
    size_t n_routes;
    struct MHD_Daemon *daemon;
    struct krc_http_guard *guard;
    int listen_fd;
    atomic_int stopping;
    pthread_mutex_t lock; /* guards in_flight */
    pthread_cond_t idle;
    unsigned in_flight;
};

/* Per-request state, from the first access call to the completion callback. */
struct request_ctx {
    const struct route *route;
    int reject; /* status decided before the body was read (400, 404, 405, 413) */
    int body_over;
    struct krc_buf body;
};

/* ---- listen address ---- */

static int parse_port(const char *s, const char *listen, int *ret_port, struct krc_error *err)
{
    char *end;
    long v;

    if (*s == '\0' || strlen(s) > 5 || strspn(s, "0123456789") != strlen(s)) {
        return krc_error_set(err, KRC_EINVAL,
                             "listen address \"%s\": port \"%s\" is not a number 0..65535", listen,
                             s);
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > 65535) {
        return krc_error_set(err, KRC_EINVAL,
                             "listen address \"%s\": port \"%s\" is not a number 0..65535", listen,
                             s);
    }
    *ret_port = (int)v;
    return 0;
}

int krc_http_server_parse_listen(const char *listen, char *ret_host, size_t host_size,
                                 int *ret_port, struct krc_error *err)
{
    const char *host;
    size_t host_len;
    const char *port_str;
    int port = 0;
    int rc;

    if (listen == NULL || *listen == '\0') {
        return krc_error_set(err, KRC_EINVAL, "listen address is empty (want HOST:PORT)");
    }
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');

        if (close == NULL || close[1] != ':') {
            return krc_error_set(err, KRC_EINVAL,
                                 "listen address \"%s\": want [IPV6]:PORT, e.g. [::]:8080", listen);
        }
        host = listen + 1;
        host_len = (size_t)(close - host);
        port_str = close + 2;
        if (host_len == 0) {
            return krc_error_set(err, KRC_EINVAL, "listen address \"%s\": empty IPv6 address",
                                 listen);
        }
    } else {
        const char *colon = strrchr(listen, ':');

        if (colon == NULL) {
            return krc_error_set(err, KRC_EINVAL,
                                 "listen address \"%s\": missing \":PORT\" (want HOST:PORT)",
                                 listen);
        }
        if (memchr(listen, ':', (size_t)(colon - listen)) != NULL) {
            return krc_error_set(err, KRC_EINVAL,
                                 "listen address \"%s\": put an IPv6 address in brackets, "
                                 "e.g. [::1]:8080",
                                 listen);
        }
        host = listen;
        host_len = (size_t)(colon - listen);
        port_str = colon + 1;
    }
    for (size_t i = 0; i < host_len; i++) {
        unsigned char c = (unsigned char)host[i];
        if (c <= ' ' || c >= 0x7f || c == '/' || c == '[' || c == ']') {
            return krc_error_set(err, KRC_EINVAL,
                                 "listen address \"%s\": bad character at offset %zu", listen,
                                 (size_t)(host - listen) + i);
        }
    }
    rc = parse_port(port_str, listen, &port, err);
    if (rc < 0) {
        return rc;
    }
    if (host_len == 0) {
        host = "0.0.0.0";
        host_len = 7;
    }
    if (host_len >= host_size) {
        return krc_error_set(err, KRC_EINVAL, "listen address \"%s\": host name too long", listen);
    }
    memcpy(ret_host, host, host_len);
    ret_host[host_len] = '\0';
    *ret_port = port;
    return 0;
}

/* ---- lifecycle ---- */

static int add_route(struct krc_http_server *srv, const char *path, enum builtin builtin,
                     unsigned methods, size_t max_body, size_t max_response,
                     krc_http_server_handler_fn fn, void *userdata)
{
    struct route *r = &srv->routes[srv->n_routes];

    r->path = krc_strdup(path);
    if (r->path == NULL) {
        return KRC_ENOMEM;
    }
    r->builtin = builtin;
    r->methods = methods;
    r->max_body = max_body;
    r->max_response = max_response;
    r->fn = fn;
    r->userdata = userdata;
    srv->n_routes++;
    return 0;
}

int krc_http_server_new(const struct krc_http_server_config *cfg,
                        struct krc_http_server **ret_server, struct krc_error *err)
{
    struct krc_http_server *srv;
    const char *listen = cfg->listen != NULL ? cfg->listen : KRC_HTTP_SERVER_DEFAULT_LISTEN;
    const unsigned get = KRC_HTTP_METHOD_GET | KRC_HTTP_METHOD_HEAD;
    int rc;

    srv = krc_calloc(1, sizeof(*srv));
    if (srv == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "http server: out of memory");
    }
    srv->listen_fd = -1;
    pthread_mutex_init(&srv->lock, NULL);
    {
        pthread_condattr_t attr;

        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&srv->idle, &attr);
        pthread_condattr_destroy(&attr);
    }
    srv->cfg = *cfg;
    srv->cfg.listen = NULL;
    if (srv->cfg.max_connections == 0) {
        srv->cfg.max_connections = DEFAULT_MAX_CONNECTIONS;
    }
    if (srv->cfg.max_connections_per_address == 0) {
        srv->cfg.max_connections_per_address = srv->cfg.max_connections < DEFAULT_MAX_PER_ADDRESS
                                                   ? srv->cfg.max_connections
                                                   : DEFAULT_MAX_PER_ADDRESS;
    }
    if (srv->cfg.connection_timeout_s == 0) {
        srv->cfg.connection_timeout_s = DEFAULT_CONN_TIMEOUT_S;
    }
    if (srv->cfg.head_timeout_s == 0) {
        srv->cfg.head_timeout_s = DEFAULT_HEAD_TIMEOUT_S;
    }
    if (srv->cfg.request_timeout_s == 0) {
        srv->cfg.request_timeout_s = DEFAULT_REQUEST_TIMEOUT_S;
    }
    if (srv->cfg.connection_timeout_s > 86400 || srv->cfg.head_timeout_s > 86400 ||
        srv->cfg.request_timeout_s > 86400) {
        rc = krc_error_set(err, KRC_EINVAL,
                           "http server: connection, head and request timeouts: want at most "
                           "86400 s");
        goto fail;
    }
    if (srv->cfg.drain_timeout_ms == 0) {
        srv->cfg.drain_timeout_ms = DEFAULT_DRAIN_MS;
    }
    if (srv->cfg.metrics_max_bytes == 0) {
        srv->cfg.metrics_max_bytes = DEFAULT_METRICS_MAX;
    }
    rc = krc_http_server_parse_listen(listen, srv->host, sizeof(srv->host), &srv->port_wanted, err);
    if (rc < 0) {
        goto fail;
    }
    {
        const struct krc_http_guard_config gc = {
            .max_connections = srv->cfg.max_connections,
            .max_per_address = srv->cfg.max_connections_per_address,
            .head_timeout_ms = srv->cfg.head_timeout_s * 1000u,
            .request_timeout_ms = srv->cfg.request_timeout_s * 1000u,
            .idle_timeout_s = srv->cfg.connection_timeout_s,
            .metrics = srv->cfg.metrics,
        };
        rc = krc_http_guard_new(&gc, &srv->guard, err);
        if (rc < 0) {
            goto fail;
        }
    }
    srv->listen = krc_strdup(listen);
    rc = srv->listen == NULL ? KRC_ENOMEM : 0;
    if (rc == 0) {
        rc = add_route(srv, "/healthz", ROUTE_HEALTHZ, get, 0, 0, NULL, NULL);
    }
    if (rc == 0) {
        rc = add_route(srv, "/readyz", ROUTE_READYZ, get, 0, 0, NULL, NULL);
    }
    if (rc == 0 && srv->cfg.metrics != NULL) {
        rc = add_route(srv, "/metrics", ROUTE_METRICS, get, 0, 0, NULL, NULL);
    }
    if (rc < 0) {
        krc_error_set(err, rc, "http server: out of memory");
        goto fail;
    }
    *ret_server = srv;
    return 0;

fail:
    krc_http_server_free(srv);
    return rc;
}

int krc_http_server_route(struct krc_http_server *srv, const char *path, unsigned methods,
                          size_t max_body, size_t max_response, krc_http_server_handler_fn fn,
                          void *userdata, struct krc_error *err)
{
    const unsigned known = KRC_HTTP_METHOD_GET | KRC_HTTP_METHOD_HEAD | KRC_HTTP_METHOD_POST |
                           KRC_HTTP_METHOD_PUT | KRC_HTTP_METHOD_DELETE | KRC_HTTP_METHOD_OPTIONS;
    size_t n_custom = 0;

    if (srv->daemon != NULL) {
        return krc_error_set(err, KRC_EINVAL, "http server: route %s added after start",
                             path != NULL ? path : "(null)");
    }
    if (path == NULL || path[0] != '/' || strlen(path) > 512 || fn == NULL || methods == 0 ||
        (methods & ~known) != 0) {
        return krc_error_set(err, KRC_EINVAL,
                             "http server: route %s: want a path starting with '/', a handler "
                             "and known methods",
                             path != NULL ? path : "(null)");
    }
    if (strcmp(path, "/metrics") == 0) {
        return krc_error_set(err, KRC_EINVAL, "http server: route %s is built in", path);
    }
    for (size_t i = 0; i < srv->n_routes; i++) {
        if (strcmp(srv->routes[i].path, path) == 0) {
            return krc_error_set(err, KRC_EINVAL, "http server: route %s %s", path,
                                 srv->routes[i].builtin != ROUTE_CUSTOM ? "is built in"
                                                                        : "already exists");
        }
        n_custom += srv->routes[i].builtin == ROUTE_CUSTOM;
    }
    if (n_custom >= KRC_HTTP_SERVER_MAX_ROUTES) {
        return krc_error_set(err, KRC_ETOOBIG, "http server: more than %d routes",
                             KRC_HTTP_SERVER_MAX_ROUTES);
    }
    if (add_route(srv, path, ROUTE_CUSTOM, methods, max_body ? max_body : DEFAULT_MAX_BODY,
                  max_response ? max_response : DEFAULT_MAX_RESPONSE, fn, userdata) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "http server: out of memory");
    }
    return 0;
}

/* ---- responses ---- */

static const struct route *find_route(const struct krc_http_server *srv, const char *path)
{
    for (size_t i = 0; i < srv->n_routes; i++) {
        if (strcmp(srv->routes[i].path, path) == 0) {
            return &srv->routes[i];
        }
    }
    return NULL;
}

static unsigned method_bit(const char *method)
{
    static const struct {
        const char *name;
        unsigned bit;
    } methods[] = {
        {"GET", KRC_HTTP_METHOD_GET},       {"HEAD", KRC_HTTP_METHOD_HEAD},
        {"POST", KRC_HTTP_METHOD_POST},     {"PUT", KRC_HTTP_METHOD_PUT},
        {"DELETE", KRC_HTTP_METHOD_DELETE}, {"OPTIONS", KRC_HTTP_METHOD_OPTIONS},
    };

    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        if (strcmp(method, methods[i].name) == 0) {
            return methods[i].bit;
        }
    }
    return 0;
}

static void allow_header(unsigned methods, char *out, size_t outsz)
{
    static const char *const names[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"};
    size_t len = 0;

    out[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if ((methods & (1u << i)) != 0 && len < outsz) {
            int n = snprintf(out + len, outsz - len, "%s%s", len > 0 ? ", " : "", names[i]);
            if (n < 0) {
                return;
            }
            len += (size_t)n;
        }
    }
}

struct reply {
    int status;
    const char *content_type;
    char *body; /* owned, krc_malloc'd */
    size_t body_len;
    const struct krc_http_server_header *headers;
    size_t n_headers;
    const char *allow;
    int no_store;
};

/* The guard's record of a connection (set when it started). */
static struct krc_http_guard_conn *guard_conn(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci != NULL ? ci->socket_context : NULL;
}

/* Queue the reply; takes the body (freed on every path). */
static enum MHD_Result send_reply(struct krc_http_server *srv, struct MHD_Connection *conn,
                                  struct reply *r)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;
    int ok;

    if (r->body == NULL) {
        r->body = krc_strdup("");
        r->body_len = 0;
        if (r->body == NULL) {
            return MHD_NO;
        }
    }
    resp = MHD_create_response_from_buffer_with_free_callback(r->body_len, r->body, krc_free);
    if (resp == NULL) {
        krc_free(r->body);
        return MHD_NO;
    }
    ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type) == MHD_YES;
    if (ok && r->no_store) {
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES;
    }
    if (ok && r->allow != NULL) {
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow) == MHD_YES;
    }
    for (size_t i = 0; ok && i < r->n_headers; i++) {
        ok = MHD_add_response_header(resp, r->headers[i].name, r->headers[i].value) == MHD_YES;
    }
    if (ok && atomic_load(&srv->stopping)) {
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES;
    }
    if (ok) {
        /* the client has request_timeout_s to take the response */
        krc_http_guard_phase(srv->guard, guard_conn(conn), KRC_HTTP_GUARD_WRITE);
    }
    ret = ok ? MHD_queue_response(conn, (unsigned)r->status, resp) : MHD_NO;
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result send_text(struct krc_http_server *srv, struct MHD_Connection *conn,
                                 int status, const char *text, const char *allow)
{
    struct reply r = {.status = status, .content_type = TEXT_PLAIN, .allow = allow};

    r.body = krc_strdup(text);
    if (r.body == NULL) {
        return MHD_NO;
    }
    r.body_len = strlen(text);
    return send_reply(srv, conn, &r);
}

static enum MHD_Result serve_check(struct krc_http_server *srv, struct MHD_Connection *conn,
                                   krc_http_server_check_fn fn, void *userdata, const char *what)
{
    char reason[KRC_HTTP_SERVER_REASON_MAX];
    char body[KRC_HTTP_SERVER_REASON_MAX + 2];
    struct reply r = {.content_type = TEXT_PLAIN, .no_store = 1};

    reason[0] = '\0';
    if (fn == NULL || fn(userdata, reason, sizeof(reason)) == 1) {
        r.status = MHD_HTTP_OK;
        snprintf(body, sizeof(body), "ok\n");
    } else {
        reason[sizeof(reason) - 1] = '\0';
        for (char *p = reason; *p != '\0'; p++) {
            if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                *p = ' ';
            }
        }
        r.status = MHD_HTTP_SERVICE_UNAVAILABLE;
        snprintf(body, sizeof(body), "%s\n", reason[0] != '\0' ? reason : what);
    }
    r.body = krc_strdup(body);
    if (r.body == NULL) {
        return MHD_NO;
    }
    r.body_len = strlen(body);
    return send_reply(srv, conn, &r);
}

static enum MHD_Result serve_metrics(struct krc_http_server *srv, struct MHD_Connection *conn)
{
    struct krc_buf buf;
    struct krc_error err;
    struct reply r = {
        .status = MHD_HTTP_OK, .content_type = KRC_METRICS_CONTENT_TYPE, .no_store = 1};
    int rc;

    krc_error_clear(&err);
    krc_buf_init(&buf, srv->cfg.metrics_max_bytes);
    rc = krc_metrics_render(srv->cfg.metrics, &buf, &err);
    if (rc < 0) {
        krc_buf_cleanup(&buf);
        krc_log(KRC_LOG_WARN, "http server: /metrics: %s", err.msg);
        return send_text(srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render metrics\n",
                         NULL);
    }
    r.body_len = buf.len;
    r.body = krc_buf_take(&buf);
    if (r.body == NULL) {
        return MHD_NO;
    }
    return send_reply(srv, conn, &r);
}

const char *krc_http_server_request_header(const struct krc_http_server_request *req,
                                           const char *name)
{
    return MHD_lookup_connection_value(req->internal, MHD_HEADER_KIND, name);
}

const char *krc_http_server_request_query(const struct krc_http_server_request *req,
                                          const char *key)
{
    return MHD_lookup_connection_value(req->internal, MHD_GET_ARGUMENT_KIND, key);
}

int krc_http_server_response_header(struct krc_http_server_response *resp, const char *name,
                                    const char *value)
{
    size_t nlen;
    size_t vlen;

    if (name == NULL || value == NULL) {
        return KRC_EINVAL;
    }
    nlen = strlen(name);
    vlen = strlen(value);
    if (nlen == 0 || nlen >= sizeof(resp->headers[0].name) ||
        vlen >= sizeof(resp->headers[0].value) || strpbrk(value, "\r\n") != NULL) {
        return KRC_EINVAL;
    }
    for (size_t i = 0; i < nlen; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 0x7f || c == ':') {
            return KRC_EINVAL;
        }
    }
    if (resp->n_headers == KRC_HTTP_SERVER_MAX_HEADERS) {
        return KRC_ETOOBIG;
    }
    memcpy(resp->headers[resp->n_headers].name, name, nlen + 1);
    memcpy(resp->headers[resp->n_headers].value, value, vlen + 1);
    resp->n_headers++;
    return 0;
}

static enum MHD_Result serve_custom(struct krc_http_server *srv, struct MHD_Connection *conn,
                                    const struct route *route, struct request_ctx *ctx,
                                    const char *method, const char *path)
{
    struct krc_http_server_request req = {.method = method, .path = path, .internal = conn};
    struct krc_http_server_response resp;
    struct reply r;
    int rc;

    req.body = ctx->body.len > 0 ? ctx->body.data : "";
    req.body_len = ctx->body.len;
    memset(&resp, 0, sizeof(resp));
    resp.status = MHD_HTTP_OK;
    snprintf(resp.content_type, sizeof(resp.content_type), "%s", TEXT_PLAIN);
    krc_buf_init(&resp.body, route->max_response);
    rc = route->fn(&req, &resp, route->userdata);
    if (rc < 0 || resp.status < 100 || resp.status > 599 ||
        strpbrk(resp.content_type, "\r\n") != NULL) {
        krc_log(KRC_LOG_DEBUG, "http server: %s %s: handler failed (%s, status %d)", method, path,
                rc < 0 ? krc_strerror(rc) : "ok", resp.status);
        krc_buf_cleanup(&resp.body);
        return send_text(srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n", NULL);
    }
    memset(&r, 0, sizeof(r));
    r.status = resp.status;
    r.content_type = resp.content_type;
    r.headers = resp.headers;
    r.n_headers = resp.n_headers;
    r.body_len = resp.body.len;
    r.body = krc_buf_take(&resp.body);
    if (r.body == NULL) {
        return MHD_NO;
    }
    return send_reply(srv, conn, &r);
}

/* ---- Host (RFC 9112 section 3.2) ---- */

struct host_count {
    unsigned n;
    const char *value;
};

static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    struct host_count *hc = cls;
    (void)kind;

    if (key != NULL && strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        hc->n++;
        hc->value = value != NULL ? value : "";
    }
    return MHD_YES;
}

static int ascii_in(unsigned char c, const char *set)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr(set, c) != NULL);
}

static int hex_digit(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* uri-host [ ":" port ] (RFC 3986 section 3.2.2/3.2.3): an IP literal in
 * brackets or a reg-name (unreserved, sub-delims, %HH), then digits. Empty is
 * valid (a target without an authority). */
static int host_value_ok(const char *v)
{
    const unsigned char *p = (const unsigned char *)v;

    if (*p == '[') {
        const unsigned char *start = ++p;

        while (*p != ']' && ascii_in(*p, "-._~!$&'()*+,;=:")) {
            p++;
        }
        if (*p != ']' || p == start) {
            return 0;
        }
        p++;
    } else {
        while (*p != '\0' && *p != ':') {
            if (*p == '%') {
                if (!hex_digit(p[1]) || !hex_digit(p[2])) {
                    return 0;
                }
                p += 3;
            } else if (ascii_in(*p, "-._~!$&'()*+,;=")) {
                p++;
            } else {
                return 0;
            }
        }
    }
    if (*p == ':') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
        }
    }
    return *p == '\0';
}

/* NULL when the request's Host is as RFC 9112 section 3.2 wants it, else the
 * text of the 400: an HTTP/1.1 request needs one, and no request may carry
 * more than one or an invalid value. Checked here rather than with
 * MHD_OPTION_STRICT_FOR_CLIENT 1: libmicrohttpd 0.9.75 checks there only
 * that a Host line is present (with an HTML body), not the other two. */
static const char *host_problem(struct MHD_Connection *conn, const char *version)
{
    struct host_count hc = {0, NULL};
    int http11 = version != NULL && strncmp(version, "HTTP/1.", 7) == 0 &&
                 strcmp(version, MHD_HTTP_VERSION_1_0) != 0;

    (void)MHD_get_connection_values(conn, MHD_HEADER_KIND, count_host, &hc);
    if (hc.n == 0) {
        return http11 ? "bad request: an HTTP/1.1 request needs a Host header\n" : NULL;
    }
    if (hc.n > 1) {
        return "bad request: more than one Host header\n";
    }
    return host_value_ok(hc.value) ? NULL : "bad request: invalid Host header\n";
}

/* ---- libmicrohttpd callbacks ---- */

static enum MHD_Result reject(struct krc_http_server *srv, struct MHD_Connection *conn,
                              const struct route *route, int status)
{
    char allow[64];

    switch (status) {
    case MHD_HTTP_NOT_FOUND:
        return send_text(srv, conn, status, "not found\n", NULL);
    case MHD_HTTP_METHOD_NOT_ALLOWED:
        allow_header(route->methods, allow, sizeof(allow));
        return send_text(srv, conn, status, "method not allowed\n", allow);
    default:
        return send_text(srv, conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large\n", NULL);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct krc_http_server *srv = cls;
    struct request_ctx *ctx = *con_cls;

    if (ctx == NULL) {
        const char *bad_host = host_problem(conn, version);
        const char *clen;

        ctx = krc_calloc(1, sizeof(*ctx));
        if (ctx == NULL) {
            return MHD_NO;
        }
        pthread_mutex_lock(&srv->lock);
        srv->in_flight++;
        pthread_mutex_unlock(&srv->lock);
        *con_cls = ctx;
        ctx->route = find_route(srv, url);
        if (bad_host != NULL) {
            ctx->reject = MHD_HTTP_BAD_REQUEST;
        } else if (ctx->route == NULL) {
            ctx->reject = MHD_HTTP_NOT_FOUND;
        } else if ((ctx->route->methods & method_bit(method)) == 0) {
            ctx->reject = MHD_HTTP_METHOD_NOT_ALLOWED;
        } else {
            krc_buf_init(&ctx->body,
                         ctx->route->builtin == ROUTE_CUSTOM ? ctx->route->max_body : 0);
            clen =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (clen != NULL && strtoull(clen, NULL, 10) > ctx->body.max) {
                ctx->reject = MHD_HTTP_CONTENT_TOO_LARGE;
            }
        }
        /* Answer a rejected request at once: libmicrohttpd then skips the
         * body and closes the connection instead of reading it. */
        if (ctx->reject == MHD_HTTP_BAD_REQUEST) {
            return send_text(srv, conn, ctx->reject, bad_host, NULL);
        }
        if (ctx->reject != 0) {
            return reject(srv, conn, ctx->route, ctx->reject);
        }
        /* the head is complete: the body has request_timeout_s */
        krc_http_guard_phase(srv->guard, guard_conn(conn), KRC_HTTP_GUARD_BODY);
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (ctx->reject == 0 && !ctx->body_over &&
            krc_buf_append(&ctx->body, upload_data, *upload_data_size) < 0) {
            ctx->body_over = 1;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (ctx->reject != 0) {
        return MHD_YES; /* answered on the first call */
    }
    if (ctx->body_over) {
        return reject(srv, conn, ctx->route, MHD_HTTP_CONTENT_TOO_LARGE);
    }
    /* the handler's own time is not the client's doing: no deadline */
    krc_http_guard_phase(srv->guard, guard_conn(conn), KRC_HTTP_GUARD_HANDLER);
    switch (ctx->route->builtin) {
    case ROUTE_HEALTHZ:
        return serve_check(srv, conn, srv->cfg.liveness, srv->cfg.liveness_userdata, "not alive");
    case ROUTE_READYZ:
        return serve_check(srv, conn, srv->cfg.readiness, srv->cfg.readiness_userdata, "not ready");
    case ROUTE_METRICS:
        return serve_metrics(srv, conn);
    case ROUTE_CUSTOM:
        break;
    }
    return serve_custom(srv, conn, ctx->route, ctx, method, url);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct krc_http_server *srv = cls;
    struct request_ctx *ctx = *con_cls;

    if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED) {
        krc_http_guard_idle_timeout(srv->guard, guard_conn(conn));
    } else if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        /* kept alive: the next head has head_timeout_s from now */
        krc_http_guard_phase(srv->guard, guard_conn(conn), KRC_HTTP_GUARD_HEAD);
    }
    if (ctx == NULL) {
        return;
    }
    krc_buf_cleanup(&ctx->body);
    krc_free(ctx);
    *con_cls = NULL;
    pthread_mutex_lock(&srv->lock);
    srv->in_flight--;
    if (srv->in_flight == 0) {
        pthread_cond_broadcast(&srv->idle);
    }
    pthread_mutex_unlock(&srv->lock);
}

/* Runs on libmicrohttpd's accepting thread before a connection is set up;
 * the guard's open (STARTED below) follows on the same thread. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct krc_http_server *srv = cls;

    return krc_http_guard_admit(srv->guard, addr, addrlen) ? MHD_YES : MHD_NO;
}

/* STARTED and CLOSED, both on the accepting thread. libmicrohttpd (checked
 * in 0.9.75's daemon.c: MHD_cleanup_connections and the failure path of
 * new_connection_process_) sends CLOSED before it closes the socket, so the
 * guard's record, and with it the reaper's right to shut the socket down,
 * ends while the socket number is still this connection's. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct krc_http_server *srv = cls;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fdi =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ai != NULL ? ai->client_addr : NULL;
        socklen_t len = 0;

        if (sa != NULL) {
            len = sa->sa_family == AF_INET6  ? (socklen_t)sizeof(struct sockaddr_in6)
                  : sa->sa_family == AF_INET ? (socklen_t)sizeof(struct sockaddr_in)
                                             : 0;
        }
        *socket_context = NULL;
        if (fdi == NULL) {
            return;
        }
        *socket_context = krc_http_guard_open(srv->guard, fdi->connect_fd, sa, len);
        if (*socket_context == NULL) {
            /* cannot happen: libmicrohttpd's limit is the guard's capacity */
            krc_log(KRC_LOG_WARN, "http server: no connection slot left, closing a connection");
            (void)shutdown(fdi->connect_fd, SHUT_RDWR);
        }
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        krc_http_guard_close(srv->guard, *socket_context);
        *socket_context = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    size_t len;
    (void)cls;

    vsnprintf(line, sizeof(line), fmt, ap);
    len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
        line[--len] = '\0';
    }
    krc_log(KRC_LOG_DEBUG, "http server: libmicrohttpd: %s", line);
}

/* ---- start / stop ---- */

static int bind_socket(struct krc_http_server *srv, struct krc_error *err)
{
    struct addrinfo hints;
    struct addrinfo *res = NULL;
    char port[8];
    int saved = 0;
    int rc;
    int fd = -1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%d", srv->port_wanted);
    rc = getaddrinfo(srv->host, port, &hints, &res);
    if (rc != 0) {
        return krc_error_set(err, KRC_EIO, "http server: cannot resolve listen address %s: %s",
                             srv->listen, gai_strerror(rc));
    }
    for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        int one = 1;

        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) {
            break;
        }
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        /* The usual causes get the way out: krc's --listen (KRC_LISTEN,
         * config key listen) moves the endpoint or turns it off. */
        const char *hint = "";
        if (saved == EADDRINUSE) {
            hint = "; another process uses that port: pick a free one with --listen HOST:PORT "
                   "(KRC_LISTEN, config key listen; port 0 picks any), or turn the endpoint "
                   "off with --listen off";
        } else if (saved == EACCES) {
            hint = "; ports below 1024 need privileges: pick another with --listen HOST:PORT, "
                   "or turn the endpoint off with --listen off";
        } else if (saved == EADDRNOTAVAIL) {
            hint = "; no interface has that address: use one of this machine's addresses "
                   "(0.0.0.0 for all) with --listen HOST:PORT, or --listen off";
        }
        return krc_error_set(err, KRC_EIO, "http server: cannot listen on %s: %s%s", srv->listen,
                             KRC_ERRNO_STR(saved), hint);
    }
    {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);

        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
            saved = errno;
            close(fd);
            return krc_error_set(err, KRC_EIO, "http server: getsockname on %s: %s", srv->listen,
                                 KRC_ERRNO_STR(saved));
        }
        srv->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                   : ((struct sockaddr_in *)&ss)->sin_port);
    }
    srv->listen_fd = fd;
    return 0;
}

int krc_http_server_start(struct krc_http_server *srv, struct krc_error *err)
{
    const unsigned int flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD |
                               MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    int rc;

    if (srv->daemon != NULL) {
        return krc_error_set(err, KRC_EINVAL, "http server: already started on %s", srv->listen);
    }
    rc = bind_socket(srv, err);
    if (rc < 0) {
        return rc;
    }
    rc = krc_http_guard_start(srv->guard, err);
    if (rc < 0) {
        close(srv->listen_fd);
        srv->listen_fd = -1;
        srv->port = 0;
        return rc;
    }
    atomic_store(&srv->stopping, 0);
    /* The guard decides admission (on_accept) and counts every reason;
     * libmicrohttpd's own limits sit KRC_HTTP_GUARD_SLACK above it, a
     * backstop the guard always reaches first. */
    srv->daemon = MHD_start_daemon(
        flags, 0, on_accept, srv, on_request, srv, MHD_OPTION_LISTEN_SOCKET,
        (MHD_socket)srv->listen_fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned int)krc_http_guard_capacity(srv->guard), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned int)(srv->cfg.max_connections_per_address + KRC_HTTP_GUARD_SLACK),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.connection_timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        srv, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv, MHD_OPTION_END);
    if (srv->daemon == NULL) {
        krc_http_guard_stop(srv->guard);
        close(srv->listen_fd);
        srv->listen_fd = -1;
        srv->port = 0;
        return krc_error_set(err, KRC_EIO,
                             "http server: libmicrohttpd could not start on %s (see debug log)",
                             srv->listen);
    }
    return 0;
}

int krc_http_server_port(const struct krc_http_server *srv)
{
    return srv->daemon != NULL ? srv->port : 0;
}

void krc_http_server_stop(struct krc_http_server *srv)
{
    MHD_socket fd;
    struct timespec deadline;

    if (srv == NULL || srv->daemon == NULL) {
        return;
    }
    atomic_store(&srv->stopping, 1);
    fd = MHD_quiesce_daemon(srv->daemon);
    if (fd != MHD_INVALID_SOCKET) {
        close(fd);
    }
    srv->listen_fd = -1;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += srv->cfg.drain_timeout_ms / 1000;
    deadline.tv_nsec += (long)(srv->cfg.drain_timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&srv->lock);
    while (srv->in_flight > 0) {
        if (pthread_cond_timedwait(&srv->idle, &srv->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    if (srv->in_flight > 0) {
        krc_log(KRC_LOG_DEBUG, "http server: %u request(s) still open after %u ms, closing",
                srv->in_flight, srv->cfg.drain_timeout_ms);
    }
    pthread_mutex_unlock(&srv->lock);
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    srv->port = 0;
    krc_http_guard_stop(srv->guard); /* every connection is closed now */
}

void krc_http_server_free(struct krc_http_server *srv)
{
    if (srv == NULL) {
        return;
    }
    krc_http_server_stop(srv);
    krc_http_guard_free(srv->guard);
    for (size_t i = 0; i < srv->n_routes; i++) {
        krc_free(srv->routes[i].path);
    }
    pthread_cond_destroy(&srv->idle);
    pthread_mutex_destroy(&srv->lock);
    krc_free(srv->listen);
    krc_free(srv);
}
