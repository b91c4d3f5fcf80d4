/* The signed webhook's bodies (docs/report-schema.json). Built with cJSON;
 * the report is store/report_json's document, which is redacted, bounded and
 * valid UTF-8 already. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/model/report_json.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "krc/alert/sink.h"
#include "krc/alert/sink_send.h"
#include "krc/util/log.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/test_message.h"

static const struct krc_sink_ops krc_sink_webhook;

/* The envelope every body shares. */
static cJSON *envelope(const char *kind, const struct krc_alert_options *fo)
{
    cJSON *o = cJSON_CreateObject();
    char t[40];

    if (o == NULL) {
        return NULL;
    }
    krc_clock_format_rfc3339(fo->now > 0 ? fo->now : krc_clock_now(), t, sizeof(t));
    if (cJSON_AddNumberToObject(o, "schema_version", KRC_WEBHOOK_SCHEMA_VERSION) == NULL ||
        cJSON_AddStringToObject(o, "kind", kind) == NULL ||
        cJSON_AddStringToObject(o, "sent_at", t) == NULL ||
        (fo->cluster != NULL ? cJSON_AddStringToObject(o, "cluster", fo->cluster)
                             : cJSON_AddNullToObject(o, "cluster")) == NULL) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int krc_webhook_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                               const struct krc_alert_options *fo, char **ret_body,
                               char **ret_fallback, struct krc_error *err)
{
    char *report = NULL;
    cJSON *o;
    int rc;

    *ret_body = NULL;
    if (ret_fallback != NULL) {
        *ret_fallback = NULL;
    }
    rc = krc_report_json_build(rep, diag, fo->redactor, &report, err);
    if (rc < 0) {
        return rc;
    }
    o = envelope("restart", fo);
    /* the report is a complete JSON document already: inserted as it is */
    if (o == NULL || !cJSON_AddItemToObject(o, "report", cJSON_CreateRaw(report))) {
        krc_free(report);
        cJSON_Delete(o);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_free(report);
    return krc_format_json_finish(o, ret_body, err);
}

static int add_groups(cJSON *o, const char *key, const struct krc_alert_group *g, size_t n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);

    for (size_t i = 0; a != NULL && i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        if (x == NULL || !cJSON_AddItemToArray(a, x) ||
            cJSON_AddStringToObject(x, "key", g[i].key ? g[i].key : "") == NULL ||
            cJSON_AddNumberToObject(x, "count", (double)g[i].count) == NULL) {
            return -1;
        }
    }
    return a != NULL ? 0 : -1;
}

static cJSON *opt_string(const char *s)
{
    return s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int krc_webhook_format_summary(const struct krc_alert_summary *sum,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err)
{
    cJSON *o = envelope("storm_summary", fo);
    cJSON *s = o != NULL ? cJSON_AddObjectToObject(o, "summary") : NULL;
    cJSON *ex;

    *ret_body = NULL;
    if (s == NULL || cJSON_AddNumberToObject(s, "restarts", (double)sum->restarts) == NULL ||
        cJSON_AddNumberToObject(s, "window_seconds", (double)sum->window_seconds) == NULL ||
        cJSON_AddNumberToObject(s, "alerted_before_storm", (double)sum->alerted) == NULL ||
        add_groups(s, "by_node", sum->by_node, sum->n_by_node) < 0 ||
        add_groups(s, "by_workload", sum->by_workload, sum->n_by_workload) < 0 ||
        add_groups(s, "by_cause", sum->by_cause, sum->n_by_cause) < 0 ||
        (ex = cJSON_AddArrayToObject(s, "examples")) == NULL) {
        cJSON_Delete(o);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < sum->n_examples; i++) {
        const struct krc_alert_example *x = &sum->examples[i];
        cJSON *e = cJSON_CreateObject();
        if (e == NULL || !cJSON_AddItemToArray(ex, e) ||
            cJSON_AddStringToObject(e, "namespace", x->namespace ? x->namespace : "") == NULL ||
            cJSON_AddStringToObject(e, "pod", x->pod ? x->pod : "") == NULL ||
            !cJSON_AddItemToObject(e, "container", opt_string(x->container)) ||
            !cJSON_AddItemToObject(e, "cause", opt_string(x->cause)) ||
            !cJSON_AddItemToObject(e, "node", opt_string(x->node)) ||
            cJSON_AddNumberToObject(e, "restart_count", x->restart_count) == NULL) {
            cJSON_Delete(o);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    return krc_format_json_finish(o, ret_body, err);
}

/* An incident's end: kind "resolved" (docs/report-schema.json). Kind "recovered", a pod's,
 * is no longer sent: the schema keeps it for the receivers written before incidents. */
int krc_webhook_format_recovered(const struct krc_alert_recovered *rec,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err)
{
    cJSON *o = envelope("resolved", fo);
    cJSON *r = o != NULL ? cJSON_AddObjectToObject(o, "resolved") : NULL;
    char workload[600];
    char line[1024];

    *ret_body = NULL;
    snprintf(workload, sizeof(workload), "%s/%s", rec->workload_kind ? rec->workload_kind : "",
             rec->workload_name != NULL ? rec->workload_name : "");
    krc_alert_resolved_line(rec, line, sizeof(line));
    if (r == NULL ||
        cJSON_AddNumberToObject(r, "incident_id",
                                (double)(rec->incident_id > 0 ? rec->incident_id : 0)) == NULL ||
        cJSON_AddStringToObject(r, "namespace", rec->namespace) == NULL ||
        cJSON_AddStringToObject(r, "workload", workload) == NULL ||
        cJSON_AddStringToObject(r, "container", rec->container) == NULL ||
        cJSON_AddStringToObject(r, "cause", rec->cause != NULL ? rec->cause : "unknown") == NULL ||
        cJSON_AddNumberToObject(r, "restarts", (double)rec->restarts) == NULL ||
        !krc_report_json_put(r, "first_at", krc_report_json_time(rec->first_at)) ||
        !krc_report_json_put(r, "last_at", krc_report_json_time(rec->last_at)) ||
        cJSON_AddNumberToObject(r, "ready_seconds", (double)rec->ready_seconds) == NULL ||
        cJSON_AddBoolToObject(r, "moved_on", rec->moved_on) == NULL ||
        cJSON_AddStringToObject(r, "pod", rec->pod != NULL ? rec->pod : "") == NULL ||
        cJSON_AddStringToObject(r, "summary", line) == NULL) {
        cJSON_Delete(o);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return krc_format_json_finish(o, ret_body, err);
}

/* --- the sink ---
 * The signed webhook sink: the restart report (store/report_json.h) in a
 * versioned envelope (docs/report-schema.json), POSTed with an HMAC-SHA256
 * signature over "TIMESTAMP.BODY" (Stripe's scheme; Slack signs
 * "v0:TIMESTAMP:BODY" the same way) in the header
 *   X-Krc-Signature: t=TIMESTAMP,v1=HEX
 * computed again for every attempt, so a receiver can refuse old
 * timestamps (replays). Extra headers come from the destination's
 * headersFile. No threads, no files. */
#define WEBHOOK_MAX_PAYLOAD (4 * 1024 * 1024)
#define MAX_HEADERS 32

struct signed_sink {
    struct krc_sink base;
    struct krc_sink_conn conn;
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

static int sw_post(struct krc_sink_conn *c, void *ctx, const char *body,
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
    rc = krc_sink_http_post(c, w->url, w->headers, body, strlen(body), c->o.timeout_ms, resp, err);
    w->headers[1] = "X-Krc-Signature: -"; /* the stack buffer is gone after this call */
    return krc_sink_http_answer(rc, resp, res);
}

static void sw_free(struct krc_sink *s)
{
    struct signed_sink *w = (struct signed_sink *)s;

    krc_sink_conn_cleanup(&w->conn);
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
    return krc_sink_deliver(&w->conn, w->url, dest, sw_post, w, m->body, NULL, res, err);
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
    w->url = url;
    w->secret = d->secret;
    krc_log_add_secret(d->secret);
    if (sw_headers(w, d->headers, err) < 0 || krc_sink_conn_init(&w->conn, o, err) < 0) {
        sw_free(&w->base);
        return NULL;
    }
    return &w->base;
}

/* The receiver is the operator's own: only the words for its credentials. */
static const char *sw_explain(long status, const char *error)
{
    (void)error;
    if (status == 401 || status == 403) {
        return "the receiver refused the request (does it check the signature with the same "
               "secret, or want one of the extra headers?)";
    }
    return NULL;
}

static const struct krc_sink_ops krc_sink_webhook = {
    .name = "webhook",
    .create = sw_create,
    .format_restart = krc_webhook_format_restart,
    .format_summary = krc_webhook_format_summary,
    .format_recovered = krc_webhook_format_recovered,
    .send = sw_send,
    .upload = NULL,
    .free = sw_free,
    .explain = sw_explain,
    .format_test = krc_test_format_webhook,
};
/* Header lines "Name: value" (a Secret mounted as a file): each must have
 * a token name and no line breaks inside. */
static int check_headers(const char *h, char *why, size_t whysz)
{
    size_t line = 1;

    for (const char *p = h; *p != '\0'; line++) {
        const char *nl = strchr(p, '\n');
        size_t l = nl != NULL ? (size_t)(nl - p) : strlen(p);
        const char *colon = memchr(p, ':', l);
        if (l > 0 && p[l - 1] == '\r') {
            l--;
        }
        if (l > 0) {
            if (colon == NULL || colon == p) {
                snprintf(why, whysz, "line %zu is not \"Name: value\"", line);
                return -1;
            }
            for (const char *c = p; c < colon; c++) {
                if (*c <= ' ' || *c >= 127 || strchr("()<>@,;:\\\"/[]?={}", *c) != NULL) {
                    snprintf(why, whysz, "line %zu: the header name has a character not allowed",
                             line);
                    return -1;
                }
            }
        }
        p = nl != NULL ? nl + 1 : p + strlen(p);
    }
    return 0;
}

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

static const struct krc_dest_setting settings[] = {
    {"url", KRC_DEST_SECRET, KRC_DEST_INLINE | KRC_DEST_REQUIRED, NULL,
     offsetof(struct krc_destination, url), offsetof(struct krc_destination, url_src), NULL},
    {"secret", KRC_DEST_SECRET, KRC_DEST_REQUIRED, NULL, offsetof(struct krc_destination, secret),
     offsetof(struct krc_destination, secret_src), NULL},
    {"headers", KRC_DEST_SECRET, KRC_DEST_FILE_ONLY | KRC_DEST_CHECK_AT_FILE, NULL,
     offsetof(struct krc_destination, headers), offsetof(struct krc_destination, headers_src),
     check_headers},
};

const struct krc_dest_kind krc_dest_webhook = {
    .schema = {"webhook", "the report as signed JSON (HMAC-SHA256)", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_webhook,
};
