/* PagerDuty Events API v2 bodies (https://developer.pagerduty.com, "Send an
 * Alert Event"): event_action trigger | resolve, dedup_key (at most 255),
 * payload.summary (at most 1024), payload.source, payload.severity
 * (critical | error | warning | info), custom_details; one event at most
 * 512 KB. The routing key is not in the body: the sink adds it when it
 * sends (the body is stored in the outbox). */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/model/report_json.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

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
    switch (krc_slack_cause_severity(d->cause)) {
    case KRC_SLACK_SEV_CRITICAL:
        return d->confidence == KRC_CONFIDENCE_LOW ? "error" : "critical";
    case KRC_SLACK_SEV_WARNING:
        return "warning";
    case KRC_SLACK_SEV_INFO:
        return "info";
    }
    return "error";
}

static int add_text(cJSON *o, const char *key, const struct krc_slack_options *fo, const char *s,
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

static int add_list(cJSON *o, const char *key, const struct krc_slack_options *fo, char *const *v,
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
                          const struct krc_slack_options *fo)
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
                       const struct krc_slack_options *fo, size_t report_max, struct krc_error *err)
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
        add_text(cd, "node", fo, rep->node_name, 256, 0) < 0) {
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
                         const struct krc_slack_options *fo, size_t report_max, char **ret_body,
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
                                 const struct krc_slack_options *fo, char **ret_body,
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

static int add_groups(cJSON *o, const char *key, const struct krc_slack_group *g, size_t n)
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

int krc_pagerduty_format_summary(const struct krc_slack_summary *sum,
                                 const struct krc_slack_options *fo, char **ret_body,
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

int krc_pagerduty_format_recovered(const struct krc_slack_recovered *rec,
                                   const struct krc_slack_options *fo, char **ret_body,
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
