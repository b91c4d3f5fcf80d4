#include "krc/util/http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_MAX_BODY (1024 * 1024)

struct blob {
    unsigned char *data;
    size_t len;
};

struct krc_http {
    CURL *curl;
    CURLM *multi;                      /* for krc_http_do_many, created on first use */
    CURL *pool[KRC_HTTP_MAX_PARALLEL]; /* easy handles of do_many (keep their connections) */
    char *ca_file;
    char *cert_file;
    char *key_file;
    struct blob ca;
    struct blob cert;
    struct blob key;
    int insecure;
    struct curl_slist *connect_to;
};

struct xfer {
    const struct krc_http *h;
    const struct krc_http_request *req;
    struct krc_http_response *resp;
    CURL *curl;
    struct krc_buf body;
    int64_t last_data_ms;
    int idle_expired;
    int canceled;
    int cb_aborted;
};

int krc_http_global_init(struct krc_error *err)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        return krc_error_set(err, KRC_EIO, "libcurl initialisation failed: %s",
                             curl_easy_strerror(rc));
    }
    return 0;
}

void krc_http_global_cleanup(void)
{
    curl_global_cleanup();
}

static int copy_blob(struct blob *dst, const unsigned char *src, size_t len)
{
    if (src == NULL || len == 0) {
        return 0;
    }
    dst->data = krc_malloc(len);
    if (dst->data == NULL) {
        return KRC_ENOMEM;
    }
    memcpy(dst->data, src, len);
    dst->len = len;
    return 0;
}

static int copy_str(char **dst, const char *src)
{
    if (src == NULL) {
        return 0;
    }
    *dst = krc_strdup(src);
    return *dst == NULL ? KRC_ENOMEM : 0;
}

void krc_http_free(struct krc_http *h)
{
    if (h == NULL) {
        return;
    }
    for (size_t i = 0; i < KRC_HTTP_MAX_PARALLEL; i++) {
        if (h->pool[i] != NULL) {
            curl_easy_cleanup(h->pool[i]);
        }
    }
    if (h->multi != NULL) {
        curl_multi_cleanup(h->multi);
    }
    if (h->curl != NULL) {
        curl_easy_cleanup(h->curl);
    }
    krc_free(h->ca_file);
    krc_free(h->cert_file);
    krc_free(h->key_file);
    krc_free(h->ca.data);
    krc_free(h->cert.data);
    krc_free(h->key.data);
    curl_slist_free_all(h->connect_to);
    krc_free(h);
}

struct krc_http *krc_http_new(const struct krc_http_tls *tls, struct krc_error *err)
{
    struct krc_http *h = krc_calloc(1, sizeof(*h));

    if (h == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory creating HTTP client");
        return NULL;
    }
    if (tls != NULL) {
        if (copy_str(&h->ca_file, tls->ca_file) < 0 ||
            copy_str(&h->cert_file, tls->cert_file) < 0 ||
            copy_str(&h->key_file, tls->key_file) < 0 ||
            copy_blob(&h->ca, tls->ca_pem, tls->ca_pem_len) < 0 ||
            copy_blob(&h->cert, tls->cert_pem, tls->cert_pem_len) < 0 ||
            copy_blob(&h->key, tls->key_pem, tls->key_pem_len) < 0) {
            krc_error_set(err, KRC_ENOMEM, "out of memory creating HTTP client");
            krc_http_free(h);
            return NULL;
        }
        h->insecure = tls->insecure;
        if (tls->connect_to != NULL) {
            h->connect_to = curl_slist_append(NULL, tls->connect_to);
            if (h->connect_to == NULL) {
                krc_error_set(err, KRC_ENOMEM, "out of memory creating HTTP client");
                krc_http_free(h);
                return NULL;
            }
        }
    }
    h->curl = curl_easy_init();
    if (h->curl == NULL) {
        krc_error_set(err, KRC_ENOMEM, "curl_easy_init failed");
        krc_http_free(h);
        return NULL;
    }
    return h;
}

void krc_http_response_init(struct krc_http_response *resp)
{
    memset(resp, 0, sizeof(*resp));
    resp->retry_after = -1;
}

void krc_http_response_cleanup(struct krc_http_response *resp)
{
    krc_free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}

static void update_status(struct xfer *x)
{
    long code = 0;
    if (x->resp->status == 0 &&
        curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK) {
        x->resp->status = code;
    }
}

static size_t on_header(char *buffer, size_t size, size_t nitems, void *userdata)
{
    struct xfer *x = userdata;
    size_t len = size * nitems;
    const char *colon;
    size_t name_len;
    const char *v;
    const char *end = buffer + len;

    if (len >= 5 && strncmp(buffer, "HTTP/", 5) == 0) {
        /* A new response (e.g. after 100 Continue): forget earlier headers. */
        x->resp->content_type[0] = '\0';
        x->resp->retry_after = -1;
        x->resp->status = 0;
        return len;
    }
    colon = memchr(buffer, ':', len);
    if (colon == NULL) {
        return len;
    }
    name_len = (size_t)(colon - buffer);
    v = colon + 1;
    while (v < end && (*v == ' ' || *v == '\t')) {
        v++;
    }
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) {
        end--;
    }
    if (name_len == 12 && strncasecmp(buffer, "Content-Type", 12) == 0) {
        size_t n = (size_t)(end - v);
        if (n >= sizeof(x->resp->content_type)) {
            n = sizeof(x->resp->content_type) - 1;
        }
        memcpy(x->resp->content_type, v, n);
        x->resp->content_type[n] = '\0';
    } else if (name_len == 11 && strncasecmp(buffer, "Retry-After", 11) == 0) {
        /* Only the delta-seconds form; an HTTP-date is ignored like client-go does. */
        long secs = 0;
        const char *p = v;
        int digits = 0;
        while (p < end && *p >= '0' && *p <= '9' && secs < 86400) {
            secs = secs * 10 + (*p - '0');
            p++;
            digits++;
        }
        if (digits > 0 && p == end) {
            x->resp->retry_after = (int)secs;
        }
    }
    return len;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct xfer *x = userdata;
    size_t len = size * nmemb;

    x->last_data_ms = krc_clock_mono_ms();
    update_status(x);
    if (x->req->on_data != NULL && x->resp->status >= 200 && x->resp->status < 300) {
        if (x->req->on_data(ptr, len, x->req->userdata) != 0) {
            x->cb_aborted = 1;
            return 0; /* makes curl fail with CURLE_WRITE_ERROR */
        }
        x->resp->bytes_streamed += (long long)len;
        return len;
    }
    if (!x->resp->body_truncated) {
        size_t room = x->body.max - x->body.len;
        size_t take = len < room ? len : room;
        if (krc_buf_append(&x->body, ptr, take) < 0) {
            x->resp->body_truncated = 1;
        } else if (take < len) {
            x->resp->body_truncated = 1;
        }
    }
    return len;
}

static int on_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct xfer *x = clientp;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    if (x->req->cancel != NULL && *x->req->cancel) {
        x->canceled = 1;
        return 1;
    }
    if (x->req->idle_timeout_ms > 0 &&
        krc_clock_mono_ms() - x->last_data_ms > x->req->idle_timeout_ms) {
        x->idle_expired = 1;
        return 1;
    }
    return 0;
}

static void set_blob(CURL *c, CURLoption opt, const struct blob *b)
{
    struct curl_blob cb;
    cb.data = b->data;
    cb.len = b->len;
    cb.flags = CURL_BLOB_COPY;
    curl_easy_setopt(c, opt, &cb);
}

static void apply_tls(struct krc_http *h, CURL *c)
{
    if (h->connect_to != NULL) {
        curl_easy_setopt(c, CURLOPT_CONNECT_TO, h->connect_to);
    }
    if (h->ca.data != NULL) {
        set_blob(c, CURLOPT_CAINFO_BLOB, &h->ca);
    } else if (h->ca_file != NULL) {
        curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
    }
    if (h->cert.data != NULL) {
        set_blob(c, CURLOPT_SSLCERT_BLOB, &h->cert);
        curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (h->cert_file != NULL) {
        curl_easy_setopt(c, CURLOPT_SSLCERT, h->cert_file);
    }
    if (h->key.data != NULL) {
        set_blob(c, CURLOPT_SSLKEY_BLOB, &h->key);
        curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (h->key_file != NULL) {
        curl_easy_setopt(c, CURLOPT_SSLKEY, h->key_file);
    }
    if (h->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    }
}

/* Everything one transfer needs besides its easy handle. */
struct xfer_slot {
    struct xfer x;
    struct curl_slist *headers;
    char errbuf[CURL_ERROR_SIZE];
};

static int setup_easy(struct krc_http *h, CURL *c, const struct krc_http_request *req,
                      struct krc_http_response *resp, struct xfer_slot *slot, struct krc_error *err)
{
    const char *method = req->method != NULL ? req->method : "GET";

    krc_http_response_cleanup(resp);
    krc_http_response_init(resp);
    memset(&slot->x, 0, sizeof(slot->x));
    slot->headers = NULL;
    slot->x.h = h;
    slot->x.req = req;
    slot->x.resp = resp;
    slot->x.curl = c;
    slot->x.last_data_ms = krc_clock_mono_ms();
    krc_buf_init(&slot->x.body, req->max_body ? req->max_body : DEFAULT_MAX_BODY);
    slot->errbuf[0] = '\0';

    if (req->headers != NULL) {
        for (const char *const *hp = req->headers; *hp != NULL; hp++) {
            struct curl_slist *n = curl_slist_append(slot->headers, *hp);
            if (n == NULL) {
                curl_slist_free_all(slot->headers);
                slot->headers = NULL;
                return krc_error_set(err, KRC_ENOMEM, "out of memory building request headers");
            }
            slot->headers = n;
        }
    }

    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, req->url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, slot->errbuf);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                     req->connect_timeout_ms > 0 ? req->connect_timeout_ms
                                                 : DEFAULT_CONNECT_TIMEOUT_MS);
    if (req->timeout_ms > 0) {
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    }
    curl_easy_setopt(c, CURLOPT_USERAGENT, "krc/" KRC_VERSION);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, slot->headers);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &slot->x);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &slot->x);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &slot->x);
    curl_easy_setopt(c, CURLOPT_PRIVATE, slot);
    apply_tls(h, c);
    if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    if (req->body != NULL) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    return 0;
}

/* Turn curl's result into ours and release the slot. */
static int finish_easy(struct xfer_slot *slot, CURLcode rc, struct krc_error *err)
{
    struct xfer *x = &slot->x;
    /* clang-tidy: finish_easy is called only for slots that were started (rets[i] == 1), whose x
     * was filled */
    /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign) */
    const struct krc_http_request *req = x->req;
    struct krc_http_response *resp = x->resp;
    int ret = 0;

    update_status(x);
    if (rc != CURLE_OK) {
        const char *msg = slot->errbuf[0] ? slot->errbuf : curl_easy_strerror(rc);
        if (x->canceled) {
            ret = krc_error_set(err, KRC_ECANCELED, "request canceled");
        } else if (x->cb_aborted) {
            ret = KRC_ECANCELED;
            if (err != NULL && err->code == 0) {
                krc_error_set(err, KRC_ECANCELED, "transfer stopped by the consumer");
            }
        } else if (x->idle_expired) {
            ret = krc_error_set(err, KRC_ETIMEOUT, "no data received for %ld ms",
                                req->idle_timeout_ms);
        } else if (rc == CURLE_OPERATION_TIMEDOUT) {
            ret = krc_error_set(err, KRC_ETIMEOUT, "%s", msg);
        } else if (rc == CURLE_PEER_FAILED_VERIFICATION) {
            /* name the trust anchor: a wrong CA is the usual cause */
            const struct krc_http *h = x->h;
            ret = krc_error_set(err, KRC_EIO, "%s (server certificate checked against %s%s)", msg,
                                h->ca_file != NULL ? "the CA in " : "",
                                h->ca_file != NULL ? h->ca_file
                                : h->ca.len > 0    ? "the given certificate-authority-data"
                                                   : "the system CA store");
        } else {
            ret = krc_error_set(err, KRC_EIO, "%s", msg);
        }
    } else if (x->body.len > 0) {
        resp->body_len = x->body.len;
        resp->body = krc_buf_take(&x->body);
        if (resp->body == NULL) {
            resp->body_len = 0;
            ret = krc_error_set(err, KRC_ENOMEM, "out of memory reading response body");
        }
    }
    /* Do not leave pointers to the slot or its headers in the handle. */
    curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(x->curl, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(slot->headers);
    slot->headers = NULL;
    krc_buf_cleanup(&x->body);
    if (err != NULL && ret < 0) {
        err->http_status = (int)resp->status;
    }
    return ret;
}

int krc_http_do(struct krc_http *h, const struct krc_http_request *req,
                struct krc_http_response *resp, struct krc_error *err)
{
    struct xfer_slot slot;
    int rc = setup_easy(h, h->curl, req, resp, &slot, err);

    if (rc < 0) {
        krc_buf_cleanup(&slot.x.body);
        return rc;
    }
    return finish_easy(&slot, curl_easy_perform(h->curl), err);
}

int krc_http_do_many(struct krc_http *h, const struct krc_http_request *reqs, size_t n,
                     struct krc_http_response *resps, int *rets, struct krc_error *errs)
{
    struct xfer_slot slots[KRC_HTTP_MAX_PARALLEL];
    size_t started = 0;
    int running = 0;

    if (n > KRC_HTTP_MAX_PARALLEL) {
        return KRC_EINVAL;
    }
    if (h->multi == NULL) {
        h->multi = curl_multi_init();
        if (h->multi == NULL) {
            return KRC_ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) {
        rets[i] = KRC_EIO;
        if (h->pool[i] == NULL) {
            h->pool[i] = curl_easy_init();
            if (h->pool[i] == NULL) {
                rets[i] = krc_error_set(&errs[i], KRC_ENOMEM, "curl_easy_init failed");
                continue;
            }
        }
        rets[i] = setup_easy(h, h->pool[i], &reqs[i], &resps[i], &slots[i], &errs[i]);
        if (rets[i] < 0) {
            krc_buf_cleanup(&slots[i].x.body);
            continue;
        }
        /* Over HTTP/2 (the API server speaks it) the requests share one
         * connection instead of opening one each: one TLS handshake and one
         * connection's state (~100 KB with the HTTP/2 session) per client
         * instead of n. An HTTP/1.1 server still gets one connection per
         * request in flight. */
        curl_easy_setopt(h->pool[i], CURLOPT_PIPEWAIT, 1L);
        rets[i] = 1; /* in flight */
        curl_multi_add_handle(h->multi, h->pool[i]);
        started++;
    }
    while (started > 0) {
        CURLMsg *msg;
        int left;
        CURLMcode mc = curl_multi_perform(h->multi, &running);
        if (mc != CURLM_OK) {
            break;
        }
        while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
            struct xfer_slot *slot = NULL;
            size_t i;
            if (msg->msg != CURLMSG_DONE) {
                continue;
            }
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&slot);
            i = (size_t)(slot - slots);
            curl_multi_remove_handle(h->multi, msg->easy_handle);
            rets[i] = finish_easy(slot, msg->data.result, &errs[i]);
            started--;
        }
        if (started > 0 && running > 0) {
            curl_multi_poll(h->multi, NULL, 0, 100, NULL);
        }
    }
    /* A multi-level failure leaves transfers in flight: fail them cleanly. */
    for (size_t i = 0; i < n; i++) {
        if (rets[i] == 1) {
            curl_multi_remove_handle(h->multi, h->pool[i]);
            rets[i] = finish_easy(&slots[i], CURLE_SEND_ERROR, &errs[i]);
        }
    }
    return 0;
}

char *krc_http_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    char *out;

    if (e == NULL) {
        return NULL;
    }
    out = krc_strdup(e);
    curl_free(e);
    return out;
}

void krc_http_url_origin(const char *url, char *out, size_t outsz)
{
    CURLU *u = curl_url();
    char *scheme = NULL;
    char *host = NULL;
    char *port = NULL;

    if (outsz == 0) {
        return;
    }
    out[0] = '\0';
    if (u == NULL) {
        return;
    }
    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        if (curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK) {
            snprintf(out, outsz, "%s://%s:%s", scheme, host, port);
        } else {
            snprintf(out, outsz, "%s://%s", scheme, host);
        }
    } else {
        snprintf(out, outsz, "(invalid URL)");
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
}
