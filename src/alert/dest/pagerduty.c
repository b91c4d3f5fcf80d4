/* PagerDuty Events API v2 bodies (https://developer.pagerduty.com, "Send an
 * Alert Event"): event_action trigger | resolve, dedup_key (at most 255),
 * payload.summary (at most 1024), payload.source, payload.severity
 * (critical | error | warning | info), custom_details; one event at most
 * 512 KB. The routing key is not in the body: the sink adds it when it
 * sends (the body is stored in the outbox). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/model/report_json.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"
#include "krc/util/text.h"
#include "krc/alert/sink.h"
#include "krc/alert/sink_send.h"
#include "krc/util/log.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/test_message.h"

static const struct krc_sink_ops krc_sink_pagerduty;

void krc_pagerduty_dedup_key(const char *cluster, const char *ns, const char *pod,
                             const char *container, char *out, size_t outsz)
{
    size_t len;

    snprintf(out, outsz, "krc/%s/%s/%s/%s", cluster != NULL ? cluster : "-", ns ? ns : "",
             pod ? pod : "", container ? container : "");
    len = strlen(out);
    if (len > KRC_PD_DEDUP_MAX) {
        krc_text_truncate(out, len, KRC_PD_DEDUP_MAX + 1, "");
    }
}

/* PagerDuty's severity of a cause: critical for the crashes Slack shows
 * red, error when krc is less sure of them, warning and info as shown. */
static const char *severity(const struct krc_diagnosis *d)
{
    switch (krc_alert_cause_severity(d->cause)) {
    case KRC_ALERT_SEV_CRITICAL:
        return d->confidence == KRC_CONFIDENCE_LOW ? "error" : "critical";
    case KRC_ALERT_SEV_WARNING:
        return "warning";
    case KRC_ALERT_SEV_INFO:
        return "info";
    }
    return "error";
}

static int add_text(cJSON *o, const char *key, const struct krc_alert_options *fo, const char *s,
                    size_t max, int keep_newlines)
{
    char *t;
    int ok;

    if (s == NULL) {
        return cJSON_AddNullToObject(o, key) != NULL ? 0 : -1;
    }
    t = krc_card_text(fo, s, strlen(s), max, keep_newlines);
    ok = t != NULL && cJSON_AddStringToObject(o, key, t) != NULL;
    krc_free(t);
    return ok ? 0 : -1;
}

static int add_list(cJSON *o, const char *key, const struct krc_alert_options *fo, char *const *v,
                    size_t n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);

    for (size_t i = 0; a != NULL && i < n && i < 20; i++) {
        char *t = krc_card_text(fo, v[i], strlen(v[i]), 1024, 0);
        int ok = t != NULL && cJSON_AddItemToArray(a, cJSON_CreateString(t));
        krc_free(t);
        if (!ok) {
            return -1;
        }
    }
    return a != NULL ? 0 : -1;
}

/* The one line: "CLUSTER: ns/pod container c restarted: SUMMARY". */
static char *summary_line(const struct krc_report *rep, const struct krc_diagnosis *d,
                          const struct krc_alert_options *fo)
{
    struct krc_buf b;
    char *r;

    krc_buf_init(&b, 64 * 1024);
    krc_buf_printf(&b, "%s%s%s/%s container %s restarted: %s", fo->cluster ? fo->cluster : "",
                   fo->cluster ? ": " : "", rep->namespace ? rep->namespace : "",
                   rep->name ? rep->name : "", d->container ? d->container : "?",
                   d->summary ? d->summary : krc_cause_name(d->cause));
    r = krc_card_text(fo, krc_buf_str(&b), b.len, KRC_PD_SUMMARY_MAX, 0);
    krc_buf_cleanup(&b);
    return r;
}

/* custom_details: the diagnosis up front, then the report (smaller when
 * the event would pass PagerDuty's size limit: the log cut to its end, then
 * no report). */
static int add_details(cJSON *payload, const struct krc_report *rep, const struct krc_diagnosis *d,
                       const struct krc_alert_options *fo, size_t report_max, struct krc_error *err)
{
    cJSON *cd = cJSON_AddObjectToObject(payload, "custom_details");
    char *report = NULL;
    int rc;

    if (cd == NULL || cJSON_AddStringToObject(cd, "cause", krc_cause_name(d->cause)) == NULL ||
        cJSON_AddStringToObject(cd, "confidence", krc_confidence_name(d->confidence)) == NULL ||
        add_text(cd, "summary", fo, d->summary, 4096, 0) < 0 ||
        add_list(cd, "evidence", fo, d->evidence, d->n_evidence) < 0 ||
        add_text(cd, "next_step", fo, d->next_step, 4096, 0) < 0 ||
        add_list(cd, "commands", fo, d->commands, d->n_commands) < 0 ||
        cJSON_AddNumberToObject(cd, "restart_count", d->restart_count) == NULL ||
        (d->has_termination ? cJSON_AddNumberToObject(cd, "exit_code", d->exit_code)
                            : cJSON_AddNullToObject(cd, "exit_code")) == NULL ||
        add_text(cd, "node", fo, rep->node_name, 256, 0) < 0 ||
        (rep->what_changed != NULL &&
         add_text(cd, "what_changed", fo, rep->what_changed, 4096, 0) < 0)) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (report_max == 0) {
        return cJSON_AddStringToObject(cd, "report",
                                       "left out: the event would pass PagerDuty's "
                                       "512 KB limit") != NULL
                   ? 0
                   : krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = krc_report_json_build(rep, d, fo->redactor, &report, err);
    if (rc < 0) {
        return rc;
    }
    if (strlen(report) > report_max) {
        /* the log is most of a large report: keep its end */
        cJSON *doc = cJSON_Parse(report);
        cJSON *log = cJSON_GetObjectItemCaseSensitive(doc, "log");
        cJSON *text = cJSON_GetObjectItemCaseSensitive(log, "text");
        krc_free(report);
        report = NULL;
        if (cJSON_IsString(text) && strlen(text->valuestring) > KRC_PD_LOG_MAX) {
            const char *v = text->valuestring;
            size_t len = strlen(v);
            size_t start = len - KRC_PD_LOG_MAX;
            while (start < len && ((unsigned char)v[start] & 0xc0) == 0x80) {
                start++; /* a code-point boundary */
            }
            cJSON_ReplaceItemInObjectCaseSensitive(log, "text", cJSON_CreateString(v + start));
            cJSON_AddBoolToObject(log, "cut_for_pagerduty", 1);
        }
        return cJSON_AddItemToObject(cd, "report", doc != NULL ? doc : cJSON_CreateNull())
                   ? 0
                   : krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (!cJSON_AddItemToObject(cd, "report", cJSON_CreateRaw(report))) {
        krc_free(report);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_free(report);
    return 0;
}

static int restart_event(const struct krc_report *rep, const struct krc_diagnosis *d,
                         const struct krc_alert_options *fo, size_t report_max, char **ret_body,
                         struct krc_error *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *p = o != NULL ? cJSON_CreateObject() : NULL;
    char key[KRC_PD_DEDUP_MAX + 1];
    char source[600];
    char ts[40];
    char *summary = summary_line(rep, d, fo);
    int rc;

    krc_pagerduty_dedup_key(fo->cluster, rep->namespace, rep->name, d->container, key, sizeof(key));
    snprintf(source, sizeof(source), "%s%s%s/%s", fo->cluster ? fo->cluster : "",
             fo->cluster ? "/" : "", rep->namespace ? rep->namespace : "",
             rep->name ? rep->name : "");
    krc_clock_format_rfc3339(d->finished_at > 0 ? d->finished_at
                             : fo->now > 0      ? fo->now
                                                : krc_clock_now(),
                             ts, sizeof(ts));
    if (p == NULL || summary == NULL || !cJSON_AddItemToObject(o, "payload", p) ||
        cJSON_AddStringToObject(o, "event_action", "trigger") == NULL ||
        cJSON_AddStringToObject(o, "dedup_key", key) == NULL ||
        cJSON_AddStringToObject(o, "client", "kube-restart-collector") == NULL ||
        cJSON_AddStringToObject(p, "summary", summary) == NULL ||
        cJSON_AddStringToObject(p, "source", source) == NULL ||
        cJSON_AddStringToObject(p, "severity", severity(d)) == NULL ||
        cJSON_AddStringToObject(p, "timestamp", ts) == NULL ||
        cJSON_AddStringToObject(p, "component", d->container ? d->container : "") == NULL ||
        cJSON_AddStringToObject(p, "group", rep->namespace ? rep->namespace : "") == NULL ||
        cJSON_AddStringToObject(p, "class", krc_cause_name(d->cause)) == NULL) {
        krc_free(summary);
        cJSON_Delete(o);
        if (p != NULL && o == NULL) {
            cJSON_Delete(p);
        }
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_free(summary);
    rc = add_details(p, rep, d, fo, report_max, err);
    if (rc < 0) {
        cJSON_Delete(o);
        return rc;
    }
    return krc_format_json_finish(o, ret_body, err);
}

int krc_pagerduty_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 char **ret_fallback, struct krc_error *err)
{
    /* room left for the routing key and the envelope */
    const size_t limit = KRC_PD_MAX_PAYLOAD - 1024;
    /* a report over 64 KB (most of it the log) keeps the log's last 16 KB:
     * PagerDuty shows custom_details on the incident, not a file */
    size_t report_max = 64 * 1024;
    int rc;

    *ret_body = NULL;
    if (ret_fallback != NULL) {
        *ret_fallback = NULL;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        rc = restart_event(rep, diag, fo, report_max, ret_body, err);
        if (rc < 0 || *ret_body == NULL || strlen(*ret_body) <= limit) {
            return rc;
        }
        krc_free(*ret_body);
        *ret_body = NULL;
        report_max = attempt == 0 ? 16 * 1024 : 0;
    }
    return krc_error_set(err, KRC_ETOOBIG, "PagerDuty event larger than %zu bytes", limit);
}

static int add_groups(cJSON *o, const char *key, const struct krc_alert_group *g, size_t n)
{
    cJSON *m = cJSON_AddObjectToObject(o, key);

    for (size_t i = 0; m != NULL && i < n && i < 50; i++) {
        if (cJSON_AddNumberToObject(m, g[i].key ? g[i].key : "(unknown)", (double)g[i].count) ==
            NULL) {
            return -1;
        }
    }
    return m != NULL ? 0 : -1;
}

int krc_pagerduty_format_summary(const struct krc_alert_summary *sum,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *p = cJSON_AddObjectToObject(o, "payload");
    cJSON *cd = cJSON_AddObjectToObject(p, "custom_details");
    char key[KRC_PD_DEDUP_MAX + 1];
    char line[KRC_PD_SUMMARY_MAX + 1];
    char ts[40];

    *ret_body = NULL;
    snprintf(key, sizeof(key), "krc/%s/storm", fo->cluster ? fo->cluster : "-");
    snprintf(line, sizeof(line),
             "%s%srestart storm: %zu restarts in %llds (%zu alerted "
             "individually before it began)",
             fo->cluster ? fo->cluster : "", fo->cluster ? ": " : "", sum->restarts,
             (long long)sum->window_seconds, sum->alerted);
    krc_clock_format_rfc3339(fo->now > 0 ? fo->now : krc_clock_now(), ts, sizeof(ts));
    if (cd == NULL || cJSON_AddStringToObject(o, "event_action", "trigger") == NULL ||
        cJSON_AddStringToObject(o, "dedup_key", key) == NULL ||
        cJSON_AddStringToObject(o, "client", "kube-restart-collector") == NULL ||
        cJSON_AddStringToObject(p, "summary", line) == NULL ||
        cJSON_AddStringToObject(p, "source", fo->cluster ? fo->cluster : "kubernetes") == NULL ||
        cJSON_AddStringToObject(p, "severity", "error") == NULL ||
        cJSON_AddStringToObject(p, "timestamp", ts) == NULL ||
        cJSON_AddStringToObject(p, "class", "restart_storm") == NULL ||
        cJSON_AddNumberToObject(cd, "restarts", (double)sum->restarts) == NULL ||
        cJSON_AddNumberToObject(cd, "window_seconds", (double)sum->window_seconds) == NULL ||
        add_groups(cd, "by_node", sum->by_node, sum->n_by_node) < 0 ||
        add_groups(cd, "by_workload", sum->by_workload, sum->n_by_workload) < 0 ||
        add_groups(cd, "by_cause", sum->by_cause, sum->n_by_cause) < 0) {
        cJSON_Delete(o);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return krc_format_json_finish(o, ret_body, err);
}

int krc_pagerduty_format_recovered(const struct krc_alert_recovered *rec,
                                   const struct krc_alert_options *fo, char **ret_body,
                                   struct krc_error *err)
{
    cJSON *o = cJSON_CreateObject();
    char key[KRC_PD_DEDUP_MAX + 1];

    *ret_body = NULL;
    krc_pagerduty_dedup_key(fo->cluster, rec->namespace, rec->pod, rec->container, key,
                            sizeof(key));
    if (cJSON_AddStringToObject(o, "event_action", "resolve") == NULL ||
        cJSON_AddStringToObject(o, "dedup_key", key) == NULL) {
        cJSON_Delete(o);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return krc_format_json_finish(o, ret_body, err);
}

char *krc_pagerduty_with_key(const char *body, const char *routing_key, struct krc_error *err)
{
    cJSON *o = cJSON_Parse(body);
    char *r;

    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        krc_error_set(err, KRC_EPARSE, "PagerDuty: the stored event is not a JSON object");
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(o, "routing_key");
    if (cJSON_AddStringToObject(o, "routing_key", routing_key) == NULL ||
        (r = krc_format_json_print(o)) == NULL) {
        cJSON_Delete(o);
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    cJSON_Delete(o);
    return r;
}

/* --- the sink ---
 * The PagerDuty sink: Events API v2 (POST /v2/enqueue, 202 Accepted). The
 * routing key is added to each stored event when it is sent; an incident's
 * "resolved" message is a resolve event. 429 is PagerDuty's rate
 * limit (retried after Retry-After, else 1 s), 5xx and transport errors are
 * retried with backoff, 400 (an invalid event) is final. */
struct pd_sink {
    struct krc_sink base;
    struct krc_sink_conn conn;
    const char *url; /* borrowed from the destination */
    const char *routing_key;
};

static int pd_post(struct krc_sink_conn *c, void *ctx, const char *body,
                   struct krc_http_response *resp, struct krc_sink_result *res,
                   struct krc_error *err)
{
    const struct pd_sink *p = ctx;
    const char *headers[] = {"Content-Type: application/json", NULL};
    char *event = krc_pagerduty_with_key(body, p->routing_key, err);
    int rc;

    if (event == NULL) {
        return err != NULL && err->code < 0 ? err->code : KRC_ENOMEM;
    }
    rc = krc_sink_http_post(c, p->url, headers, event, strlen(event), c->o.timeout_ms, resp, err);
    krc_free(event);
    return krc_sink_http_answer(rc, resp, res);
}

static int pd_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    struct pd_sink *p = (struct pd_sink *)s;
    char origin[256];
    char dest[300];
    int rc;

    krc_http_url_origin(p->url, origin, sizeof(origin));
    snprintf(dest, sizeof(dest), "PagerDuty %s", origin);
    rc = krc_sink_deliver(&p->conn, p->url, dest, pd_post, p, m->body, NULL, res, err);
    if (rc == KRC_EPARSE) {
        /* a stored event that is not JSON will never be: give up on it */
        if (err != NULL) {
            err->http_status = 400;
        }
        res->http_status = 400;
        return KRC_EHTTP;
    }
    return rc;
}

static void pd_free(struct krc_sink *s)
{
    struct pd_sink *p = (struct pd_sink *)s;

    krc_sink_conn_cleanup(&p->conn);
    krc_free(p);
}

static struct krc_sink *pd_create(const struct krc_sink_options *o, const char *url,
                                  struct krc_error *err)
{
    const struct krc_destination *d = o->destination;
    struct pd_sink *p;

    if (d == NULL || url == NULL || url[0] == '\0' || d->secret == NULL || d->secret[0] == '\0') {
        krc_error_set(err, KRC_EINVAL, "PagerDuty sink: needs a destination with a routing key");
        return NULL;
    }
    p = krc_calloc(1, sizeof(*p));
    if (p == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    p->base.ops = &krc_sink_pagerduty;
    p->base.limits.min_interval_ms = o->min_interval_ms;
    p->base.limits.max_payload = KRC_PD_MAX_PAYLOAD;
    p->url = url;
    p->routing_key = d->secret;
    krc_log_add_secret(d->secret);
    if (krc_sink_conn_init(&p->conn, o, err) < 0) {
        pd_free(&p->base);
        return NULL;
    }
    return &p->base;
}

/* The Events API v2's answers (202 when accepted). */
static const char *pd_explain(long status, const char *error)
{
    (void)error;
    switch (status) {
    case 400:
        return "PagerDuty refused the event (its message says why; a routing key that is not an "
               "Events API v2 integration key of a service is a common cause)";
    case 429:
        return "PagerDuty throttles events for this routing key";
    default:
        return NULL;
    }
}

static const struct krc_sink_ops krc_sink_pagerduty = {
    .name = "pagerduty",
    .create = pd_create,
    .format_restart = krc_pagerduty_format_restart,
    .format_summary = krc_pagerduty_format_summary,
    .format_recovered = krc_pagerduty_format_recovered,
    .send = pd_send,
    .upload = NULL,
    .free = pd_free,
    .explain = pd_explain,
    .format_test = krc_test_format_pagerduty,
};

/* An Events API v2 integration key has 32 characters. */
static int check_routing_key(const char *v, char *why, size_t whysz)
{
    if (strlen(v) == 32) {
        return 0;
    }
    snprintf(why, whysz,
             "the routing key must be 32 characters (an Events API v2 integration key), not %zu",
             strlen(v));
    return -1;
}

/* On PagerDuty's hosts the Events API v2 URL is /v2/enqueue (the EU service
 * region: events.eu.pagerduty.com); another host is a proxy. */
static int check_events_url(const char *url, char *why, size_t whysz)
{
    struct krc_url_parts u;

    if (krc_url_split(url, &u) != KRC_URL_OK || !krc_url_host_is(&u, ".pagerduty.com")) {
        return 0;
    }
    if ((krc_url_host_is(&u, "events.pagerduty.com") ||
         krc_url_host_is(&u, "events.eu.pagerduty.com")) &&
        u.path_len == 11 && strncmp(u.path, "/v2/enqueue", 11) == 0) {
        return 0;
    }
    snprintf(why, whysz,
             "is not PagerDuty's Events API v2 URL (https://events.pagerduty.com/v2/enqueue, "
             "or events.eu.pagerduty.com in the EU region)");
    return -1;
}

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

static const struct krc_dest_setting settings[] = {
    {"routingKey", KRC_DEST_SECRET, KRC_DEST_REQUIRED, NULL,
     offsetof(struct krc_destination, secret), offsetof(struct krc_destination, secret_src),
     check_routing_key},
    {"url", KRC_DEST_URL, 0, "https://events.pagerduty.com/v2/enqueue",
     offsetof(struct krc_destination, url), 0, check_events_url},
};

const struct krc_dest_kind krc_dest_pagerduty = {
    .schema = {"pagerduty", "PagerDuty Events API v2", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_pagerduty,
    /* its incident stays triggered until the resolve: a repeat sends no update */
    .no_incident_updates = 1,
};
