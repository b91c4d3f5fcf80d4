/* MCP over Streamable HTTP: request checks and the /mcp handler. */
#include "krc/mcp/mcp_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "krc/util/log.h"
#include "krc/util/mem.h"

struct krc_mcp_http_route {
    struct krc_mcp *m;
    pthread_mutex_t mu; /* the token: replaced by krc_mcp_http_set_token (SIGHUP) */
    char *token;
    int loopback_only;
};

int krc_mcp_http_is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;

    if (host == NULL) {
        return 0;
    }
    if (strcasecmp(host, "localhost") == 0) {
        return 1;
    }
    /* an address, not a name that starts like one (127.0.0.1.evil.example) */
    if (inet_pton(AF_INET, host, &a4) == 1) {
        return (ntohl(a4.s_addr) >> 24) == 127;
    }
    return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The host of "scheme://host[:port][/...]" or "host[:port]" into out
 * (brackets removed); 0 when it does not parse. */
static int host_of(const char *v, int with_scheme, char *out, size_t outsz)
{
    const char *p = v;
    size_t n;

    if (with_scheme) {
        const char *s = strstr(v, "://");
        if (s == NULL) {
            return 0;
        }
        p = s + 3;
    }
    if (*p == '[') {
        const char *end = strchr(p, ']');
        if (end == NULL) {
            return 0;
        }
        p++;
        n = (size_t)(end - p);
    } else {
        n = strcspn(p, ":/");
    }
    if (n == 0 || n >= outsz) {
        return 0;
    }
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

static int refuse(struct krc_http_server_response *resp, int status, int code, const char *msg)
{
    resp->status = status;
    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    krc_buf_reset(&resp->body);
    return krc_mcp_error_json(&resp->body, code, msg) < 0 ? KRC_ENOMEM : 0;
}

/* Constant-time comparison of the Authorization header with the token. */
static int token_ok(const char *header, const char *token)
{
    size_t n = strlen(token);
    size_t hn;
    unsigned char diff = 0;

    if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0) {
        return 0;
    }
    header += 7;
    hn = strlen(header);
    for (size_t i = 0; i < n; i++) {
        diff |= (unsigned char)(token[i] ^ (i < hn ? header[i] : 0));
    }
    return diff == 0 && hn == n;
}

/* No token, or the Authorization header carries it. */
static int authorized(struct krc_mcp_http_route *r, const char *header)
{
    int ok;
    pthread_mutex_lock(&r->mu);
    ok = r->token == NULL || token_ok(header, r->token);
    pthread_mutex_unlock(&r->mu);
    return ok;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* A Content-Type of application/json, with parameters or not ("application/json;
 * charset=utf-8"); type and subtype are case-insensitive (RFC 9110 8.3.1). */
static int json_content_type(const char *v)
{
    if (v == NULL) {
        return 0;
    }
    while (is_space(*v)) {
        v++;
    }
    if (strncasecmp(v, "application/json", 16) != 0) {
        return 0;
    }
    v += 16;
    while (is_space(*v)) {
        v++;
    }
    return *v == '\0' || *v == ';';
}

/* The q of a media range's parameters ("; q=0.5; x=y"): 1 when absent; 0 for
 * q=0 (also 0.0, 0.00, 0.000: "not acceptable", RFC 9110 12.4.2). */
static int q_positive(const char *p, const char *end)
{
    while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *next = semi != NULL ? semi + 1 : end;
        while (p < next && is_space(*p)) {
            p++;
        }
        if (next - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            int zero = 1;
            for (p += 2; p < next && *p != ';' && !is_space(*p); p++) {
                zero &= *p == '0' || *p == '.';
            }
            return !zero;
        }
        p = next;
    }
    return 1;
}

/* Does an Accept header let the answer be application/json? An absent one
 * does (RFC 9110 12.5.1: any type); else one of its media ranges must be
 * application/json, application/ * or * / * with a q above 0. The MCP client
 * must list application/json and text/event-stream; this server only ever
 * answers JSON, so only JSON must be acceptable. */
static int accepts_json(const char *v)
{
    static const char *const ranges[] = {"application/json", "application/*", "*/*"};

    if (v == NULL) {
        return 1;
    }
    while (*v != '\0') {
        const char *end = strchr(v, ',');
        const char *semi;
        size_t n;

        end = end != NULL ? end : v + strlen(v);
        while (v < end && is_space(*v)) {
            v++;
        }
        semi = memchr(v, ';', (size_t)(end - v));
        n = (size_t)((semi != NULL ? semi : end) - v);
        while (n > 0 && is_space(v[n - 1])) {
            n--;
        }
        for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
            if (n == strlen(ranges[i]) && strncasecmp(v, ranges[i], n) == 0 &&
                q_positive(semi != NULL ? semi + 1 : end, end)) {
                return 1;
            }
        }
        v = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* 0 when the request may go on; else resp is filled with the refusal. */
static int check(struct krc_mcp_http_route *r, const struct krc_http_server_request *req,
                 struct krc_http_server_response *resp, int *refused)
{
    const char *origin = krc_http_server_request_header(req, "Origin");
    const char *hosth = krc_http_server_request_header(req, "Host");
    const char *ctype = krc_http_server_request_header(req, "Content-Type");
    char host[256];

    *refused = 1;
    if (origin != NULL &&
        (!host_of(origin, 1, host, sizeof(host)) || !krc_mcp_http_is_loopback(host))) {
        return refuse(resp, 403, KRC_MCP_INVALID_REQUEST, "Forbidden: Origin not allowed");
    }
    if (r->loopback_only && hosth != NULL &&
        (!host_of(hosth, 0, host, sizeof(host)) || !krc_mcp_http_is_loopback(host))) {
        return refuse(resp, 403, KRC_MCP_INVALID_REQUEST, "Forbidden: Host not allowed");
    }
    if (!authorized(r, krc_http_server_request_header(req, "Authorization"))) {
        if (krc_http_server_response_header(resp, "WWW-Authenticate", "Bearer realm=\"krc\"") < 0) {
            return KRC_ENOMEM;
        }
        return refuse(resp, 401, -32001, "Unauthorized: missing or wrong bearer token");
    }
    if (!json_content_type(ctype)) {
        /* the Streamable HTTP transport POSTs JSON-RPC as application/json; the
         * response's Accept says which type a request may have (RFC 9110
         * 12.5.1, 15.5.16) */
        if (krc_http_server_response_header(resp, "Accept", "application/json") < 0) {
            return KRC_ENOMEM;
        }
        return refuse(resp, 415, KRC_MCP_INVALID_REQUEST,
                      ctype == NULL ? "Unsupported Media Type: no Content-Type; send "
                                      "Content-Type: application/json"
                                    : "Unsupported Media Type: send Content-Type: "
                                      "application/json");
    }
    if (!accepts_json(krc_http_server_request_header(req, "Accept"))) {
        return refuse(resp, 406, KRC_MCP_INVALID_REQUEST,
                      "Not Acceptable: the answer is application/json, which Accept does not "
                      "allow");
    }
    *refused = 0;
    return 0;
}

static int handle(const struct krc_http_server_request *req, struct krc_http_server_response *resp,
                  void *ud)
{
    struct krc_mcp_http_route *r = ud;
    struct krc_mcp_http h;
    struct krc_error err;
    int refused;
    int status = 500;
    int rc;

    if ((rc = check(r, req, resp, &refused)) < 0 || refused) {
        return rc;
    }
    h.protocol_version = krc_http_server_request_header(req, "MCP-Protocol-Version");
    h.method = krc_http_server_request_header(req, "Mcp-Method");
    h.name = krc_http_server_request_header(req, "Mcp-Name");
    krc_error_clear(&err);
    rc = krc_mcp_handle(r->m, NULL, req->body, req->body_len, &h, &resp->body, &status, &err);
    if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "mcp: %s", err.msg);
        return refuse(resp, 500, KRC_MCP_INTERNAL_ERROR, "Internal error: response too large");
    }
    resp->status = status;
    if (resp->body.len > 0) {
        snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    }
    return 0;
}

int krc_mcp_http_add(struct krc_http_server *srv, struct krc_mcp *m,
                     const struct krc_mcp_http_config *cfg, struct krc_mcp_http_route **ret,
                     struct krc_error *err)
{
    struct krc_mcp_http_route *r = krc_calloc(1, sizeof(*r));
    int rc;

    *ret = NULL;
    if (r == NULL || (cfg->token != NULL && (r->token = krc_strdup(cfg->token)) == NULL)) {
        krc_free(r);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    r->m = m;
    pthread_mutex_init(&r->mu, NULL);
    r->loopback_only = cfg->loopback_only;
    rc = krc_http_server_route(srv, cfg->path != NULL ? cfg->path : "/mcp", KRC_HTTP_METHOD_POST,
                               cfg->max_body ? cfg->max_body : KRC_MCP_HTTP_MAX_BODY, 0, handle, r,
                               err);
    if (rc < 0) {
        krc_mcp_http_free(r);
        return rc;
    }
    *ret = r;
    return 0;
}

void krc_mcp_http_free(struct krc_mcp_http_route *r)
{
    if (r == NULL) {
        return;
    }
    if (r->token != NULL) {
        memset(r->token, 0, strlen(r->token));
    }
    krc_free(r->token);
    pthread_mutex_destroy(&r->mu);
    krc_free(r);
}

int krc_mcp_http_set_token(struct krc_mcp_http_route *r, const char *token, struct krc_error *err)
{
    char *copy = krc_strdup(token);
    char *old;
    int changed;

    if (copy == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&r->mu);
    old = r->token;
    changed = old == NULL || strcmp(old, copy) != 0;
    r->token = copy;
    pthread_mutex_unlock(&r->mu);
    if (old != NULL) {
        memset(old, 0, strlen(old));
        krc_free(old);
    }
    return changed;
}

int krc_mcp_http_read_token(const char *path, char **ret, struct krc_error *err)
{
    char buf[KRC_MCP_HTTP_TOKEN_MAX + 2];
    FILE *f = fopen(path, "re");
    size_t n;
    size_t start = 0;

    *ret = NULL;
    if (f == NULL) {
        return krc_error_set(err, KRC_EIO, "token file %s: %s", path, KRC_ERRNO_STR(errno));
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    n = strlen(buf);
    while (start < n && (buf[start] == ' ' || buf[start] == '\t')) {
        start++;
    }
    while (n > start && (buf[n - 1] == ' ' || buf[n - 1] == '\t')) {
        buf[--n] = '\0';
    }
    if (n == start || n - start > KRC_MCP_HTTP_TOKEN_MAX) {
        memset(buf, 0, sizeof(buf));
        return krc_error_set(err, KRC_EINVAL, "token file %s: %s", path,
                             n == start ? "empty" : "longer than 4096 bytes");
    }
    *ret = krc_strdup(buf + start);
    memset(buf, 0, sizeof(buf));
    if (*ret == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_log_add_secret(*ret); /* every reader (daemon, reload, krc mcp): never in a log line */
    return 0;
}
