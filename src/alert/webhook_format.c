/* The signed webhook's bodies (docs/report-schema.json). Built with cJSON;
 * the report is store/report_json's document, which is redacted, bounded and
 * valid UTF-8 already. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/model/report_json.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

/* The envelope every body shares. */
static cJSON *envelope(const char *kind, const struct krc_slack_options *fo)
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
                               const struct krc_slack_options *fo, char **ret_body,
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

static int add_groups(cJSON *o, const char *key, const struct krc_slack_group *g, size_t n)
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

int krc_webhook_format_summary(const struct krc_slack_summary *sum,
                               const struct krc_slack_options *fo, char **ret_body,
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
        const struct krc_slack_example *x = &sum->examples[i];
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

int krc_webhook_format_recovered(const struct krc_slack_recovered *rec,
                                 const struct krc_slack_options *fo, char **ret_body,
                                 struct krc_error *err)
{
    cJSON *o = envelope("recovered", fo);
    cJSON *r = o != NULL ? cJSON_AddObjectToObject(o, "recovered") : NULL;

    *ret_body = NULL;
    if (r == NULL || cJSON_AddStringToObject(r, "namespace", rec->namespace) == NULL ||
        cJSON_AddStringToObject(r, "pod", rec->pod) == NULL ||
        cJSON_AddStringToObject(r, "container", rec->container) == NULL ||
        cJSON_AddNumberToObject(r, "ready_seconds", (double)rec->ready_seconds) == NULL ||
        cJSON_AddNumberToObject(r, "restart_count", rec->restart_count) == NULL) {
        cJSON_Delete(o);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return krc_format_json_finish(o, ret_body, err);
}
