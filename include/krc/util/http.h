/* HTTP client: the only module that sees libcurl.
 *
 * One `struct krc_http` wraps one curl easy handle and is used by one thread at
 * a time; the handle keeps its connections alive between requests. Every
 * request has a connect timeout, and either a total timeout or (for streams)
 * an idle timeout: a stream that delivers no byte for that long is aborted. */
#ifndef KRC_HTTP_H
#define KRC_HTTP_H

#include <stdatomic.h>
#include <stddef.h>

#include "krc/util/error.h"

struct krc_http;

/* TLS material; every pointer is borrowed for the duration of krc_http_new
 * (blobs are copied by libcurl). */
struct krc_http_tls {
    const char *ca_file;
    const unsigned char *ca_pem;
    size_t ca_pem_len;
    const char *cert_file;
    const unsigned char *cert_pem;
    size_t cert_pem_len;
    const char *key_file;
    const unsigned char *key_pem;
    size_t key_pem_len;
    int insecure; /* skip server certificate verification */
    /* curl CONNECT_TO entry "HOST:PORT:CONNECT-HOST:CONNECT-PORT": requests to
     * HOST:PORT go to CONNECT-HOST:CONNECT-PORT, while SNI and certificate
     * verification use HOST (kubeconfig tls-server-name); or NULL */
    const char *connect_to;
};

/* Streaming consumer: called with each piece of a 2xx response body as it
 * arrives. Return 0 to continue, non-zero to abort the transfer (the request
 * then fails with KRC_ECANCELED unless the callback set err itself). */
typedef int (*krc_http_data_cb)(const char *data, size_t len, void *userdata);

struct krc_http_request {
    const char *method; /* "GET" (default when NULL), "POST", "PUT", "DELETE" */
    const char *url;
    const char *const *headers; /* NULL-terminated "Name: value" lines, or NULL */
    const char *body;           /* request body or NULL */
    size_t body_len;
    long connect_timeout_ms;  /* 0: 10 s */
    long timeout_ms;          /* whole request; 0: none (streams) */
    long idle_timeout_ms;     /* abort when no body byte arrived for this long; 0: none */
    krc_http_data_cb on_data; /* NULL: collect the body (up to max_body) */
    void *userdata;
    size_t max_body;          /* cap on a collected body (also error bodies); 0: 1 MiB */
    const atomic_int *cancel; /* abort when *cancel becomes non-zero; may be NULL */
};

struct krc_http_response {
    long status; /* HTTP status, 0 when none was received */
    char *body;  /* collected body (NUL-terminated) or NULL; free with cleanup */
    size_t body_len;
    int body_truncated; /* the body was longer than max_body */
    char content_type[128];
    int retry_after;          /* Retry-After in seconds, -1 when absent or not an integer */
    long long bytes_streamed; /* bytes handed to on_data */
};

/* Process-wide setup (curl_global_init); call once from main before threads. */
int krc_http_global_init(struct krc_error *err);
void krc_http_global_cleanup(void);

/* Caller frees with krc_http_free. */
struct krc_http *krc_http_new(const struct krc_http_tls *tls, struct krc_error *err);
void krc_http_free(struct krc_http *h);

/* Perform a request. Returns 0 when a complete HTTP response was received,
 * whatever its status (check resp->status). Transport failures: KRC_ETIMEOUT
 * (connect/total/idle timeout: err says which), KRC_EIO (connection refused,
 * reset, TLS failure, ...), KRC_ECANCELED (cancel flag or callback abort),
 * KRC_ETOOBIG is not returned: an over-long collected body is truncated and
 * flagged. On error resp->status may still hold the status if one arrived. */
int krc_http_do(struct krc_http *h, const struct krc_http_request *req,
                struct krc_http_response *resp, struct krc_error *err);

/* Most requests krc_http_do_many runs at once. */
#define KRC_HTTP_MAX_PARALLEL 8

/* Run n (<= KRC_HTTP_MAX_PARALLEL) requests concurrently over the client's
 * own connection pool, each with its own timeouts. rets[i] gets what
 * krc_http_do would have returned for request i (errs[i] its detail, each
 * cleared by the caller). Returns 0, or KRC_EINVAL/KRC_ENOMEM when nothing
 * could be started. */
int krc_http_do_many(struct krc_http *h, const struct krc_http_request *reqs, size_t n,
                     struct krc_http_response *resps, int *rets, struct krc_error *errs);

void krc_http_response_init(struct krc_http_response *resp);
void krc_http_response_cleanup(struct krc_http_response *resp);

/* URL-escape a query value; caller frees with krc_free. NULL on ENOMEM. */
char *krc_http_escape(const char *s);

/* "https://host:port" part of a URL without path/query/credentials, for
 * messages that must not leak secrets in paths (webhook URLs). */
void krc_http_url_origin(const char *url, char *out, size_t outsz);

#endif
