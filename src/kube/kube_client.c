#include "krc/kube/kube_client.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/kube/kube_exec.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define DEFAULT_TIMEOUT_MS 30000L
#define ERROR_BODY_MAX (64 * 1024)
#define TOKEN_MAX 16384

struct krc_kube_client {
    struct krc_http *http;
    struct krc_token_source *ts; /* borrowed */
    char *server;
    char *token_origin; /* for messages: "token file X", "static token", ... */
    int has_client_cert;
    long timeout_ms;
    /* exec credential plugin (a reference), and what rebuilding the HTTP
     * handle with the plugin's client certificate needs */
    struct krc_exec_plugin *exec;
    unsigned exec_generation; /* of the certificate c->http was built with */
    struct krc_http_tls base_tls;
    char *base_ca_file;
    unsigned char *base_ca_pem;
    char *base_connect_to;
};

void krc_kube_client_free(struct krc_kube_client *c)
{
    if (c == NULL) {
        return;
    }
    krc_http_free(c->http);
    krc_free(c->server);
    krc_free(c->token_origin);
    krc_exec_plugin_unref(c->exec);
    krc_free(c->base_ca_file);
    krc_free(c->base_ca_pem);
    krc_free(c->base_connect_to);
    krc_free(c);
}

/* "https://10.0.0.1:6443" + "api.example" -> "https://api.example:6443" and
 * the CONNECT_TO entry "api.example:6443:10.0.0.1:6443". */
static int server_with_name(const char *server, const char *name, char *out, size_t outsz,
                            char *connect_to, size_t ctsz)
{
    const char *host;
    const char *end;
    const char *port = "443";
    size_t plen = 3;
    size_t hlen;

    if (strncmp(server, "https://", 8) != 0 || name[strcspn(name, ":/[]")] != '\0') {
        return KRC_EINVAL;
    }
    host = server + 8;
    end = host + strcspn(host, "/");
    if (*end != '\0' && strcmp(end, "/") != 0) {
        return KRC_EINVAL; /* a server URL with a path is not supported here */
    }
    if (*host == '[') { /* IPv6 literal */
        const char *rb = memchr(host, ']', (size_t)(end - host));
        if (rb == NULL) {
            return KRC_EINVAL;
        }
        hlen = (size_t)(rb + 1 - host);
        if (rb + 1 < end && rb[1] == ':') {
            port = rb + 2;
            plen = (size_t)(end - port);
        }
    } else {
        const char *colon = memchr(host, ':', (size_t)(end - host));
        hlen = (size_t)((colon ? colon : end) - host);
        if (colon != NULL) {
            port = colon + 1;
            plen = (size_t)(end - port);
        }
    }
    if (hlen == 0 || plen == 0 || plen > 5) {
        return KRC_EINVAL;
    }
    if ((size_t)snprintf(out, outsz, "https://%s:%.*s", name, (int)plen, port) >= outsz ||
        (size_t)snprintf(connect_to, ctsz, "%s:%.*s:%.*s:%.*s", name, (int)plen, port, (int)hlen,
                         host, (int)plen, port) >= ctsz) {
        return KRC_EINVAL;
    }
    return 0;
}

/* A client whose credentials come from an exec plugin keeps a copy of the
 * server-side TLS settings: a new client certificate from the plugin means a
 * new HTTP handle. */
static int keep_tls(struct krc_kube_client *c, const struct krc_http_tls *tls,
                    struct krc_error *err)
{
    memset(&c->base_tls, 0, sizeof(c->base_tls));
    c->base_tls.insecure = tls->insecure;
    if (tls->ca_file != NULL) {
        c->base_ca_file = krc_strdup(tls->ca_file);
        c->base_tls.ca_file = c->base_ca_file;
    }
    if (tls->ca_pem != NULL) {
        c->base_ca_pem = krc_malloc(tls->ca_pem_len + 1);
        if (c->base_ca_pem != NULL) {
            memcpy(c->base_ca_pem, tls->ca_pem, tls->ca_pem_len);
        }
        c->base_tls.ca_pem = c->base_ca_pem;
        c->base_tls.ca_pem_len = tls->ca_pem_len;
    }
    if (tls->connect_to != NULL) {
        c->base_connect_to = krc_strdup(tls->connect_to);
        c->base_tls.connect_to = c->base_connect_to;
    }
    if ((tls->ca_file != NULL && c->base_ca_file == NULL) ||
        (tls->ca_pem != NULL && c->base_ca_pem == NULL) ||
        (tls->connect_to != NULL && c->base_connect_to == NULL)) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory creating the Kubernetes client");
    }
    return 0;
}

struct krc_kube_client *krc_kube_client_new(const struct krc_kube_auth_config *cfg,
                                            struct krc_token_source *ts, struct krc_error *err)
{
    struct krc_kube_client *c;
    struct krc_http_tls tls;
    char origin[512];
    char server_buf[600];
    char connect_to[1200];
    const char *server = cfg->server;

    c = krc_calloc(1, sizeof(*c));
    if (c == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory creating the Kubernetes client");
        return NULL;
    }
    memset(&tls, 0, sizeof(tls));
    tls.ca_file = cfg->ca_file;
    tls.ca_pem = cfg->ca_pem;
    tls.ca_pem_len = cfg->ca_pem_len;
    tls.cert_file = cfg->client_cert_file;
    tls.cert_pem = cfg->client_cert_pem;
    tls.cert_pem_len = cfg->client_cert_pem_len;
    tls.key_file = cfg->client_key_file;
    tls.key_pem = cfg->client_key_pem;
    tls.key_pem_len = cfg->client_key_pem_len;
    tls.insecure = cfg->insecure_skip_tls_verify;
    if (cfg->tls_server_name != NULL && cfg->tls_server_name[0] != '\0') {
        /* kubeconfig tls-server-name: SNI and certificate check use that name,
         * the connection goes to the server's address */
        if (server_with_name(cfg->server, cfg->tls_server_name, server_buf, sizeof(server_buf),
                             connect_to, sizeof(connect_to)) < 0) {
            krc_error_set(err, KRC_EINVAL,
                          "%s: server \"%s\" cannot be combined with "
                          "tls-server-name \"%s\"",
                          cfg->source, cfg->server, cfg->tls_server_name);
            krc_kube_client_free(c);
            return NULL;
        }
        tls.connect_to = connect_to;
        server = server_buf;
    }
    c->http = krc_http_new(&tls, err);
    if (c->http == NULL || (cfg->exec != NULL && keep_tls(c, &tls, err) < 0)) {
        krc_kube_client_free(c);
        return NULL;
    }
    if (cfg->exec != NULL) {
        snprintf(origin, sizeof(origin), "the credentials from %s",
                 krc_exec_plugin_describe(cfg->exec));
    } else if (cfg->token_file != NULL) {
        snprintf(origin, sizeof(origin), "the bearer token from %s", cfg->token_file);
    } else if (cfg->token != NULL) {
        snprintf(origin, sizeof(origin), "the static bearer token of %s", cfg->source);
    } else if (cfg->client_cert_file != NULL || cfg->client_cert_pem != NULL) {
        snprintf(origin, sizeof(origin), "the client certificate of %s", cfg->source);
    } else {
        snprintf(origin, sizeof(origin), "no credentials (%s has none)", cfg->source);
    }
    c->server = krc_strdup(server);
    c->token_origin = krc_strdup(origin);
    if (c->server == NULL || c->token_origin == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory creating the Kubernetes client");
        krc_kube_client_free(c);
        return NULL;
    }
    /* A trailing slash would double up with our absolute paths. */
    for (size_t n = strlen(c->server); n > 0 && c->server[n - 1] == '/'; n--) {
        c->server[n - 1] = '\0';
    }
    c->ts = ts;
    if (cfg->exec != NULL) {
        c->exec = krc_exec_plugin_ref(cfg->exec);
    }
    c->has_client_cert = cfg->client_cert_file != NULL || cfg->client_cert_pem != NULL;
    c->timeout_ms = DEFAULT_TIMEOUT_MS;
    return c;
}

void krc_kube_client_set_timeout(struct krc_kube_client *c, long timeout_ms)
{
    c->timeout_ms = timeout_ms;
}

int krc_kube_query_add(struct krc_buf *q, const char *key, const char *value)
{
    char *esc = krc_http_escape(value);
    int rc;

    if (esc == NULL) {
        return KRC_ENOMEM;
    }
    rc = krc_buf_printf(q, "%s%s=%s", q->len > 0 ? "&" : "", key, esc);
    krc_free(esc);
    return rc;
}

/* --- error translation ------------------------------------------------- */

struct api_target {
    char verb[16];
    char resource[64];
    char namespace[256];
};

static void path_only(const char *path, char *out, size_t outsz)
{
    size_t n = strcspn(path, "?");
    if (n >= outsz) {
        n = outsz - 1;
    }
    memcpy(out, path, n);
    out[n] = '\0';
}

static int query_has_watch(const char *path)
{
    const char *q = strchr(path, '?');
    if (q == NULL) {
        return 0;
    }
    return strstr(q, "watch=true") != NULL || strstr(q, "watch=1") != NULL;
}

/* Work out verb, resource and namespace from a request, for the "which
 * permission is missing" part of 403 messages. */
static void describe_target(const char *method, const char *path, struct api_target *t)
{
    char p[1024];
    char *seg[12];
    int n = 0;
    int i = 0;
    int has_name = 0;

    memset(t, 0, sizeof(*t));
    path_only(path, p, sizeof(p));
    for (char *s = p; *s != '\0' && n < 12;) {
        while (*s == '/') {
            *s++ = '\0';
        }
        if (*s == '\0') {
            break;
        }
        seg[n++] = s;
        while (*s != '\0' && *s != '/') {
            s++;
        }
    }
    /* /api/v1/... or /apis/GROUP/VERSION/... */
    if (n >= 2 && strcmp(seg[0], "api") == 0) {
        i = 2;
    } else if (n >= 3 && strcmp(seg[0], "apis") == 0) {
        i = 3;
    } else {
        snprintf(t->resource, sizeof(t->resource), "%s", p);
        snprintf(t->verb, sizeof(t->verb), "%s", method);
        return;
    }
    if (i + 1 < n && strcmp(seg[i], "namespaces") == 0) {
        snprintf(t->namespace, sizeof(t->namespace), "%s", seg[i + 1]);
        i += 2;
    }
    if (i < n) {
        if (i + 2 < n) {
            snprintf(t->resource, sizeof(t->resource), "%s/%s", seg[i], seg[i + 2]);
        } else {
            snprintf(t->resource, sizeof(t->resource), "%s", seg[i]);
        }
        has_name = i + 1 < n;
    } else if (t->namespace[0] != '\0') {
        snprintf(t->resource, sizeof(t->resource), "namespaces");
        has_name = 1;
    }
    if (strcmp(method, "GET") == 0) {
        snprintf(t->verb, sizeof(t->verb), "%s",
                 query_has_watch(path) ? "watch" : (has_name ? "get" : "list"));
    } else if (strcmp(method, "POST") == 0) {
        snprintf(t->verb, sizeof(t->verb), "create");
    } else if (strcmp(method, "PUT") == 0) {
        snprintf(t->verb, sizeof(t->verb), "update");
    } else if (strcmp(method, "PATCH") == 0) {
        snprintf(t->verb, sizeof(t->verb), "patch");
    } else if (strcmp(method, "DELETE") == 0) {
        snprintf(t->verb, sizeof(t->verb), "delete");
    } else {
        snprintf(t->verb, sizeof(t->verb), "%s", method);
    }
}

static const char *status_text(long status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "";
    }
}

/* Pull reason/message out of a Status body; plain-text bodies (the API
 * server's own 429, proxies) are used as the message, trimmed to one line. */
static void status_fields(const char *body, size_t body_len, const char *content_type, char *reason,
                          size_t reason_sz, char *message, size_t message_sz)
{
    cJSON *root = NULL;

    reason[0] = '\0';
    message[0] = '\0';
    if (body == NULL || body_len == 0) {
        return;
    }
    if (content_type == NULL || strstr(content_type, "json") != NULL || body[0] == '{') {
        root = cJSON_ParseWithLength(body, body_len);
    }
    if (root != NULL && cJSON_IsObject(root)) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "reason");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
        if (cJSON_IsString(r)) {
            snprintf(reason, reason_sz, "%s", r->valuestring);
        }
        if (cJSON_IsString(m)) {
            snprintf(message, message_sz, "%s", m->valuestring);
            /* error messages are one line */
            for (char *p = message; *p != '\0'; p++) {
                if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                    *p = ' ';
                }
            }
        }
        cJSON_Delete(root);
        return;
    }
    cJSON_Delete(root);
    {
        size_t n = body_len < message_sz - 1 ? body_len : message_sz - 1;
        size_t j = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)body[i];
            message[j++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
        }
        while (j > 0 && message[j - 1] == ' ') {
            j--;
        }
        message[j] = '\0';
    }
}

int krc_kube_translate_error(const char *method, const char *path, long status, const char *body,
                             size_t body_len, const char *content_type, int retry_after,
                             struct krc_error *err)
{
    char reason[128];
    char message[768];
    char p[512];
    char what[1024];
    struct api_target t;
    int code;

    status_fields(body, body_len, content_type, reason, sizeof(reason), message, sizeof(message));
    path_only(path, p, sizeof(p));
    describe_target(method, path, &t);
    snprintf(what, sizeof(what), "%s %s: %ld %s", method, p, status,
             reason[0] ? reason : status_text(status));
    switch (status) {
    case 401:
        code = KRC_EAUTH;
        break;
    case 403:
        code = KRC_EAUTH;
        break;
    case 404:
        code = KRC_ENOTFOUND;
        break;
    case 409:
        code = KRC_ECONFLICT;
        break;
    case 410:
        code = KRC_EGONE;
        break;
    case 429:
        code = KRC_ERATELIMIT;
        break;
    default:
        code = KRC_EHTTP;
        break;
    }
    if (status == 403) {
        char scope[300];
        if (t.namespace[0] != '\0') {
            snprintf(scope, sizeof(scope), "in namespace \"%s\"", t.namespace);
        } else {
            snprintf(scope, sizeof(scope), "at cluster scope");
        }
        krc_error_set(err, code, "%s: forbidden: cannot %s %s %s (%s)", what, t.verb, t.resource,
                      scope, message[0] ? message : "no message");
    } else if (status == 429) {
        if (retry_after >= 0) {
            krc_error_set(err, code, "%s: %s (Retry-After %ds)", what,
                          message[0] ? message : "rate limited", retry_after);
        } else {
            krc_error_set(err, code, "%s: %s", what, message[0] ? message : "rate limited");
        }
    } else if (message[0] != '\0') {
        krc_error_set(err, code, "%s: %s", what, message);
    } else {
        krc_error_set(err, code, "%s", what);
    }
    if (err != NULL) {
        err->http_status = (int)status;
        err->retry_after = retry_after;
    }
    return code;
}

/* --- requests ------------------------------------------------------------ */

struct auth_header {
    char line[TOKEN_MAX + 32];
    int have;
};

/* The plugin's client certificate changed (first run, rotation): a new
 * HTTP handle carries it. */
static int use_exec_cert(struct krc_kube_client *c, const struct krc_exec_creds *cr,
                         struct krc_error *err)
{
    struct krc_http_tls tls = c->base_tls;
    struct krc_http *h;

    tls.cert_pem = cr->cert_pem;
    tls.cert_pem_len = cr->cert_pem_len;
    tls.key_pem = cr->key_pem;
    tls.key_pem_len = cr->key_pem_len;
    h = krc_http_new(&tls, err);
    if (h == NULL) {
        krc_error_prefix(err, "%s", krc_exec_plugin_describe(c->exec));
        return err != NULL && err->code < 0 ? err->code : KRC_EIO;
    }
    krc_http_free(c->http);
    c->http = h;
    c->exec_generation = cr->generation;
    c->has_client_cert = 1;
    return 0;
}

static int exec_auth(struct krc_kube_client *c, struct auth_header *ah, struct krc_error *err)
{
    struct krc_exec_creds cr;
    int rc = krc_exec_plugin_get(c->exec, &cr, err);

    if (rc == 0 && cr.cert_pem != NULL && cr.generation != c->exec_generation) {
        rc = use_exec_cert(c, &cr, err);
    }
    if (rc == 0 && cr.token != NULL) {
        if ((size_t)snprintf(ah->line, sizeof(ah->line), "Authorization: Bearer %s", cr.token) >=
            sizeof(ah->line)) {
            rc = krc_error_set(err, KRC_ETOOBIG, "%s: the token does not fit in %d bytes",
                               krc_exec_plugin_describe(c->exec), TOKEN_MAX);
        } else {
            ah->have = 1;
        }
    }
    krc_exec_creds_cleanup(&cr);
    /* A credential that cannot be had is an authentication error to the
     * callers (the watch loop backs off and keeps trying: a login or an
     * installed plugin fixes it), not a timeout or a bad stream. */
    if (rc < 0 && rc != KRC_ENOMEM && err != NULL) {
        err->code = KRC_EAUTH;
    }
    return rc < 0 && rc != KRC_ENOMEM ? KRC_EAUTH : rc;
}

static int build_auth(struct krc_kube_client *c, struct auth_header *ah, struct krc_error *err)
{
    char token[TOKEN_MAX];
    int rc;

    ah->have = 0;
    if (c->exec != NULL) {
        return exec_auth(c, ah, err);
    }
    if (c->ts == NULL) {
        return 0;
    }
    rc = krc_token_source_get(c->ts, token, sizeof(token), err);
    if (rc < 0) {
        return rc;
    }
    if (token[0] != '\0') {
        snprintf(ah->line, sizeof(ah->line), "Authorization: Bearer %s", token);
        ah->have = 1;
    }
    memset(token, 0, sizeof(token));
    return 0;
}

/* After a 401: re-read the token file, or run the exec plugin again. */
static void invalidate_credentials(struct krc_kube_client *c)
{
    krc_token_source_invalidate(c->ts);
    krc_exec_plugin_invalidate(c->exec);
}

static int perform(struct krc_kube_client *c, const char *method, const char *path,
                   const char *accept, const char *body, size_t body_len, long timeout_ms,
                   long idle_timeout_ms, krc_http_data_cb on_data, void *ud,
                   const atomic_int *cancel, size_t max_body, struct krc_http_response *resp,
                   struct krc_error *err)
{
    struct auth_header ah;
    const char *headers[5];
    struct krc_http_request req;
    struct krc_buf url;
    char p[512];
    int attempt;
    int rc = 0;

    krc_buf_init(&url, 16384);
    if (krc_buf_append_str(&url, c->server) < 0 || krc_buf_append_str(&url, path) < 0) {
        krc_buf_cleanup(&url);
        return krc_error_set(err, KRC_ETOOBIG, "request URL too long: %s", path);
    }
    path_only(path, p, sizeof(p));
    for (attempt = 0; attempt < 2; attempt++) {
        int n = 0;
        rc = build_auth(c, &ah, err);
        if (rc < 0) {
            break;
        }
        headers[n++] = accept;
        if (ah.have) {
            headers[n++] = ah.line;
        }
        if (body != NULL) {
            headers[n++] = "Content-Type: application/json";
        }
        headers[n] = NULL;
        memset(&req, 0, sizeof(req));
        req.method = method;
        req.url = krc_buf_str(&url);
        req.headers = headers;
        req.body = body;
        req.body_len = body_len;
        req.timeout_ms = timeout_ms;
        req.idle_timeout_ms = idle_timeout_ms;
        req.on_data = on_data;
        req.userdata = ud;
        req.max_body = max_body;
        req.cancel = cancel;
        rc = krc_http_do(c->http, &req, resp, err);
        memset(ah.line, 0, sizeof(ah.line));
        if (rc < 0) {
            krc_error_prefix(err, "%s %s%s", method, c->server, p);
            break;
        }
        if (resp->status == 401 && attempt == 0 && resp->bytes_streamed == 0) {
            /* Bound tokens rotate: re-read the token file (or run the exec
             * plugin) once and retry, as client-go does after a 401. */
            invalidate_credentials(c);
            continue;
        }
        break;
    }
    krc_buf_cleanup(&url);
    return rc;
}

static int finish(struct krc_kube_client *c, const char *method, const char *path,
                  struct krc_http_response *resp, struct krc_error *err)
{
    int rc;

    if (resp->status >= 200 && resp->status < 300) {
        return 0;
    }
    rc = krc_kube_translate_error(method, path, resp->status, resp->body, resp->body_len,
                                  resp->content_type, resp->retry_after, err);
    if (resp->status == 401 && err != NULL) {
        char more[KRC_ERROR_MSG_MAX];
        /* already retried once with the credentials read again */
        snprintf(more, sizeof(more),
                 "%s; the API server rejected %s: expired or revoked, or for another cluster "
                 "than %s",
                 err->msg, c->token_origin, c->server);
        memcpy(err->msg, more, sizeof(err->msg));
    }
    return rc;
}

int krc_kube_get(struct krc_kube_client *c, const char *path, size_t max_body, char **ret_body,
                 size_t *ret_len, struct krc_error *err)
{
    struct krc_http_response resp;
    int rc;

    krc_http_response_init(&resp);
    rc = perform(c, "GET", path, "Accept: application/json", NULL, 0, c->timeout_ms, 0, NULL, NULL,
                 NULL, max_body, &resp, err);
    if (rc == 0) {
        rc = finish(c, "GET", path, &resp, err);
    }
    if (rc == 0 && resp.body_truncated) {
        char p[512];
        path_only(path, p, sizeof(p));
        rc = krc_error_set(err, KRC_ETOOBIG, "GET %s: response larger than %zu bytes", p, max_body);
    }
    if (rc == 0) {
        if (resp.body == NULL) {
            resp.body = krc_strdup("");
            if (resp.body == NULL) {
                krc_http_response_cleanup(&resp);
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
        }
        *ret_body = resp.body;
        *ret_len = resp.body_len;
        resp.body = NULL;
    }
    krc_http_response_cleanup(&resp);
    return rc;
}

/* accept: the whole header line */
static int stream_accept(struct krc_kube_client *c, const char *path, const char *accept,
                         long idle_timeout_ms, krc_http_data_cb on_data, void *userdata,
                         const atomic_int *cancel, struct krc_error *err)
{
    struct krc_http_response resp;
    int rc;

    krc_http_response_init(&resp);
    rc = perform(c, "GET", path, accept, NULL, 0, 0, idle_timeout_ms, on_data, userdata, cancel,
                 ERROR_BODY_MAX, &resp, err);
    if (rc == 0) {
        rc = finish(c, "GET", path, &resp, err);
    } else if (err != NULL) {
        err->http_status = (int)resp.status;
    }
    krc_http_response_cleanup(&resp);
    return rc;
}

int krc_kube_stream(struct krc_kube_client *c, const char *path, long idle_timeout_ms,
                    krc_http_data_cb on_data, void *userdata, const atomic_int *cancel,
                    struct krc_error *err)
{
    return stream_accept(c, path, "Accept: application/json", idle_timeout_ms, on_data, userdata,
                         cancel, err);
}

int krc_kube_stream_accept(struct krc_kube_client *c, const char *path, const char *accept,
                           long idle_timeout_ms, krc_http_data_cb on_data, void *userdata,
                           const atomic_int *cancel, struct krc_error *err)
{
    char line[256];
    char p[512];
    int n = snprintf(line, sizeof(line), "Accept: %s", accept);

    if (n < 0 || (size_t)n >= sizeof(line) || strpbrk(accept, "\r\n") != NULL) {
        path_only(path, p, sizeof(p));
        return krc_error_set(err, KRC_EINVAL, "GET %s: Accept value too long or not one line", p);
    }
    return stream_accept(c, path, line, idle_timeout_ms, on_data, userdata, cancel, err);
}

int krc_kube_write(struct krc_kube_client *c, const char *method, const char *path,
                   const char *json, size_t json_len, char **ret_body, size_t *ret_len,
                   struct krc_error *err)
{
    struct krc_http_response resp;
    int rc;

    krc_http_response_init(&resp);
    rc = perform(c, method, path, "Accept: application/json", json, json_len, c->timeout_ms, 0,
                 NULL, NULL, NULL, 1024 * 1024, &resp, err);
    if (rc == 0) {
        rc = finish(c, method, path, &resp, err);
    }
    if (rc == 0 && ret_body != NULL) {
        *ret_body = resp.body != NULL ? resp.body : krc_strdup("");
        *ret_len = resp.body_len;
        resp.body = NULL;
        if (*ret_body == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    krc_http_response_cleanup(&resp);
    return rc;
}

int krc_kube_get_many_stream(struct krc_kube_client *c, const char *const *paths, size_t n,
                             size_t max_body, const krc_http_data_cb *on_data,
                             void *const *userdata, struct krc_http_response *resps, int *rets,
                             struct krc_error *errs)
{
    struct krc_http_request reqs[KRC_HTTP_MAX_PARALLEL];
    struct krc_buf urls[KRC_HTTP_MAX_PARALLEL];
    const char *headers[3];
    struct auth_header ah;
    struct krc_error e;
    int rc = 0;

    if (n > KRC_HTTP_MAX_PARALLEL) {
        return KRC_EINVAL;
    }
    krc_error_clear(&e);
    rc = build_auth(c, &ah, &e);
    for (size_t i = 0; i < n; i++) {
        krc_buf_init(&urls[i], 16384);
    }
    if (rc < 0) {
        for (size_t i = 0; i < n; i++) {
            rets[i] = rc;
            errs[i] = e;
        }
        goto out;
    }
    headers[0] = "Accept: application/json, */*";
    headers[1] = ah.have ? ah.line : NULL;
    headers[2] = NULL;
    for (size_t i = 0; i < n; i++) {
        memset(&reqs[i], 0, sizeof(reqs[i]));
        if (krc_buf_append_str(&urls[i], c->server) < 0 ||
            krc_buf_append_str(&urls[i], paths[i]) < 0) {
            rc = KRC_ETOOBIG;
            break;
        }
        reqs[i].url = krc_buf_str(&urls[i]);
        reqs[i].headers = headers;
        reqs[i].timeout_ms = c->timeout_ms;
        reqs[i].max_body = max_body;
        if (on_data != NULL && on_data[i] != NULL) {
            reqs[i].on_data = on_data[i];
            reqs[i].userdata = userdata != NULL ? userdata[i] : NULL;
        }
    }
    if (rc == 0) {
        rc = krc_http_do_many(c->http, reqs, n, resps, rets, errs);
    }
    memset(ah.line, 0, sizeof(ah.line));
    if (rc < 0) {
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char p[512];
        path_only(paths[i], p, sizeof(p));
        if (rets[i] < 0) {
            krc_error_prefix(&errs[i], "GET %s%s", c->server, p);
        } else if (resps[i].status == 401) {
            /* The token may have rotated: re-read it and retry this one alone. */
            invalidate_credentials(c);
            rets[i] =
                perform(c, "GET", paths[i], "Accept: application/json, */*", NULL, 0, c->timeout_ms,
                        0, reqs[i].on_data, reqs[i].userdata, NULL, max_body, &resps[i], &errs[i]);
            if (rets[i] == 0 && resps[i].status == 401) {
                rets[i] = finish(c, "GET", paths[i], &resps[i], &errs[i]);
            }
        }
    }
out:
    for (size_t i = 0; i < n; i++) {
        krc_buf_cleanup(&urls[i]);
    }
    return rc;
}

void krc_kube_status_message(const struct krc_http_response *resp, char *out, size_t outsz)
{
    char reason[128];

    status_fields(resp->body, resp->body_len, resp->content_type, reason, sizeof(reason), out,
                  outsz);
    if (out[0] == '\0') {
        snprintf(out, outsz, "HTTP %ld %s", resp->status,
                 reason[0] ? reason : status_text(resp->status));
    }
}
