/* The signed webhook sink: the restart report (store/report_json.h) in a
 * versioned envelope (docs/report-schema.json), POSTed with an HMAC-SHA256
 * signature over "TIMESTAMP.BODY" (Stripe's scheme; Slack signs
 * "v0:TIMESTAMP:BODY" the same way) in the header
 *   X-Krc-Signature: t=TIMESTAMP,v1=HEX
 * computed again for every attempt, so a receiver can refuse old
 * timestamps (replays). Extra headers come from the destination's
 * headersFile. No threads, no files. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "krc/alert/sink.h"
#include "krc/alert/sink_formats.h"
#include "krc/alert/slack_send.h"
#include "krc/model/report_json.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define WEBHOOK_MAX_PAYLOAD (4 * 1024 * 1024)
#define MAX_HEADERS 32

struct signed_sink {
    struct krc_sink base;
    struct krc_slack_conn conn;
    const char *url;    /* borrowed from the destination */
    const char *secret; /* borrowed */
    char *header_lines; /* owned copy of the extra headers, one per line */
    const char *headers[MAX_HEADERS + 4];
};

int krc_webhook_signature(const char *secret, int64_t t, const char *body, size_t len, char *out,
                          size_t outsz)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    char prefix[32];
    size_t plen = (size_t)snprintf(prefix, sizeof(prefix), "%lld.", (long long)t);
    unsigned char *msg;
    size_t o;

    if (outsz < 2 * 32 + 1) {
        return KRC_EINVAL;
    }
    msg = krc_malloc(plen + len + 1);
    if (msg == NULL) {
        return KRC_ENOMEM;
    }
    memcpy(msg, prefix, plen);
    memcpy(msg + plen, body, len);
    if (HMAC(EVP_sha256(), secret, (int)strlen(secret), msg, plen + len, mac, &mac_len) == NULL) {
        krc_free(msg);
        return KRC_EIO;
    }
    krc_free(msg);
    o = 0;
    for (unsigned int i = 0; i < mac_len && o + 3 <= outsz; i++) {
        o += (size_t)snprintf(out + o, outsz - o, "%02x", mac[i]);
    }
    return 0;
}

static int sw_post(struct krc_slack_conn *c, void *ctx, const char *body,
                   struct krc_http_response *resp, struct krc_sink_result *res,
                   struct krc_error *err)
{
    struct signed_sink *w = ctx;
    char sig[64 + 1];
    char sig_header[160];
    int64_t t = krc_clock_now();
    int rc;

    if (krc_webhook_signature(w->secret, t, body, strlen(body), sig, sizeof(sig)) < 0) {
        return krc_error_set(err, KRC_EIO, "webhook: cannot compute the signature");
    }
    snprintf(sig_header, sizeof(sig_header), "X-Krc-Signature: t=%lld,v1=%s", (long long)t, sig);
    w->headers[1] = sig_header;
    rc = krc_slack_http_post(c, w->url, w->headers, body, strlen(body), c->o.timeout_ms, resp, err);
    w->headers[1] = "X-Krc-Signature: -"; /* the stack buffer is gone after this call */
    return krc_sink_http_answer(rc, resp, res);
}

static void sw_free(struct krc_sink *s)
{
    struct signed_sink *w = (struct signed_sink *)s;

    krc_slack_conn_cleanup(&w->conn);
    krc_free(w->header_lines);
    krc_free(w);
}

static int sw_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    struct signed_sink *w = (struct signed_sink *)s;
    char origin[256];
    char dest[300];

    krc_http_url_origin(w->url, origin, sizeof(origin));
    snprintf(dest, sizeof(dest), "webhook %s", origin);
    return krc_slack_deliver(&w->conn, w->url, dest, sw_post, w, m->body, NULL, res, err);
}

/* The extra header lines as curl header strings (blank lines skipped). */
static int sw_headers(struct signed_sink *w, const char *lines, struct krc_error *err)
{
    size_t k = 0;

    w->headers[k++] = "Content-Type: application/json; charset=utf-8";
    w->headers[k++] = "X-Krc-Signature: -"; /* set per attempt */
    w->headers[k++] = "User-Agent: krc/" KRC_VERSION;
    if (lines != NULL) {
        w->header_lines = krc_strdup(lines);
        if (w->header_lines == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        for (char *p = w->header_lines; *p != '\0';) {
            char *nl = strchr(p, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            if (nl != NULL && nl > p && nl[-1] == '\r') {
                nl[-1] = '\0';
            }
            if (*p != '\0') {
                if (k == MAX_HEADERS + 3) {
                    return krc_error_set(err, KRC_EINVAL, "webhook: more than %d extra headers",
                                         MAX_HEADERS);
                }
                w->headers[k++] = p;
            }
            p = nl != NULL ? nl + 1 : p + strlen(p);
        }
    }
    w->headers[k] = NULL;
    return 0;
}

static struct krc_sink *sw_create(const struct krc_sink_options *o, const char *url,
                                  struct krc_error *err)
{
    const struct krc_destination *d = o->destination;
    struct signed_sink *w;

    if (d == NULL || url == NULL || url[0] == '\0' || d->secret == NULL || d->secret[0] == '\0') {
        krc_error_set(err, KRC_EINVAL, "webhook sink: needs a destination with url and secret");
        return NULL;
    }
    w = krc_calloc(1, sizeof(*w));
    if (w == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    w->base.ops = &krc_sink_webhook;
    w->base.limits.min_interval_ms = o->min_interval_ms;
    w->base.limits.max_payload = WEBHOOK_MAX_PAYLOAD;
    w->base.limits.resolves = 1; /* "recovered" events too */
    w->url = url;
    w->secret = d->secret;
    krc_log_add_secret(d->secret);
    if (sw_headers(w, d->headers, err) < 0 || krc_slack_conn_init(&w->conn, o, err) < 0) {
        sw_free(&w->base);
        return NULL;
    }
    return &w->base;
}

const struct krc_sink_ops krc_sink_webhook = {
    .name = "webhook",
    .create = sw_create,
    .format_restart = krc_webhook_format_restart,
    .format_summary = krc_webhook_format_summary,
    .format_recovered = krc_webhook_format_recovered,
    .send = sw_send,
    .upload = NULL,
    .free = sw_free,
};
