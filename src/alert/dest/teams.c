/* Microsoft Teams through a Workflows webhook ("When a Teams webhook
 * request is received"): a message with one Adaptive Card 1.5 attachment,
 * the same content as the Slack message, within Teams' 28 KB. Foreign texts
 * go into TextRuns (RichTextBlock): Teams renders them as plain text, so a
 * log line cannot turn into a link or a heading. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/test_message.h"
#include "krc/alert/sink_send.h"

/* Append a new object to array a: NULL (nothing leaked) on failure. */
static cJSON *append(cJSON *a)
{
    cJSON *o = cJSON_CreateObject();

    if (o != NULL && !cJSON_AddItemToArray(a, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* A TextBlock of krc's own words (no foreign text: markdown is harmless). */
static int own_text(cJSON *body, const char *text, const char *size, const char *weight,
                    const char *color, int subtle)
{
    cJSON *b = append(body);

    if (b == NULL || cJSON_AddStringToObject(b, "type", "TextBlock") == NULL ||
        cJSON_AddStringToObject(b, "text", text) == NULL ||
        cJSON_AddBoolToObject(b, "wrap", 1) == NULL ||
        (size != NULL && cJSON_AddStringToObject(b, "size", size) == NULL) ||
        (weight != NULL && cJSON_AddStringToObject(b, "weight", weight) == NULL) ||
        (color != NULL && cJSON_AddStringToObject(b, "color", color) == NULL) ||
        (subtle && cJSON_AddBoolToObject(b, "isSubtle", 1) == NULL)) {
        return -1;
    }
    return 0;
}

/* A RichTextBlock with one plain TextRun (monospace for code and logs). */
static int plain_text(cJSON *body, const char *text, int mono, const char *weight)
{
    cJSON *b = append(body);
    cJSON *run;

    if (b == NULL || cJSON_AddStringToObject(b, "type", "RichTextBlock") == NULL ||
        (run = append(cJSON_AddArrayToObject(b, "inlines"))) == NULL ||
        cJSON_AddStringToObject(run, "type", "TextRun") == NULL ||
        cJSON_AddStringToObject(run, "text", text) == NULL ||
        (mono && cJSON_AddStringToObject(run, "fontType", "Monospace") == NULL) ||
        (weight != NULL && cJSON_AddStringToObject(run, "weight", weight) == NULL)) {
        return -1;
    }
    return 0;
}

/* The message around an Adaptive Card whose body is filled by the caller. */
static cJSON *message(cJSON **ret_body)
{
    cJSON *m = cJSON_CreateObject();
    cJSON *a;
    cJSON *card;

    if (m == NULL || cJSON_AddStringToObject(m, "type", "message") == NULL ||
        (a = append(cJSON_AddArrayToObject(m, "attachments"))) == NULL ||
        cJSON_AddStringToObject(a, "contentType", "application/vnd.microsoft.card.adaptive") ==
            NULL ||
        (card = cJSON_AddObjectToObject(a, "content")) == NULL ||
        cJSON_AddStringToObject(card, "$schema",
                                "http://adaptivecards.io/schemas/adaptive-card.json") == NULL ||
        cJSON_AddStringToObject(card, "type", "AdaptiveCard") == NULL ||
        cJSON_AddStringToObject(card, "version", "1.5") == NULL ||
        (*ret_body = cJSON_AddArrayToObject(card, "body")) == NULL) {
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}

static const char *cause_color(const struct krc_diagnosis *d)
{
    switch (krc_alert_cause_severity(d->cause)) {
    case KRC_ALERT_SEV_CRITICAL:
        return "Attention";
    case KRC_ALERT_SEV_WARNING:
        return "Warning";
    case KRC_ALERT_SEV_INFO:
        return "Default";
    }
    return "Default";
}

static int card_body(cJSON *body, const struct krc_card *c, const struct krc_diagnosis *d)
{
    cJSON *fs;
    cJSON *facts;

    if (plain_text(body, c->title, 0, "Bolder") < 0 ||
        own_text(body, c->cause, NULL, "Bolder", cause_color(d), 0) < 0 ||
        plain_text(body, c->summary, 0, NULL) < 0 || (fs = append(body)) == NULL ||
        cJSON_AddStringToObject(fs, "type", "FactSet") == NULL ||
        (facts = cJSON_AddArrayToObject(fs, "facts")) == NULL) {
        return -1;
    }
    for (size_t i = 0; i < c->n_facts; i++) {
        cJSON *f = append(facts);
        if (f == NULL || cJSON_AddStringToObject(f, "title", c->facts[i].label) == NULL ||
            cJSON_AddStringToObject(f, "value", c->facts[i].value) == NULL) {
            return -1;
        }
    }
    if (c->n_evidence > 0 && own_text(body, "Evidence", NULL, "Bolder", NULL, 0) < 0) {
        return -1;
    }
    for (size_t i = 0; i < c->n_evidence; i++) {
        if (plain_text(body, c->evidence[i], 0, NULL) < 0) {
            return -1;
        }
    }
    if ((c->next_step != NULL && (own_text(body, "Next step", NULL, "Bolder", NULL, 0) < 0 ||
                                  plain_text(body, c->next_step, 0, NULL) < 0)) ||
        (c->commands != NULL && plain_text(body, c->commands, 1, NULL) < 0)) {
        return -1;
    }
    if (c->log != NULL && (own_text(body, "Previous log (end)", NULL, "Bolder", NULL, 0) < 0 ||
                           plain_text(body, c->log, 1, NULL) < 0)) {
        return -1;
    }
    return 0;
}

static char *render_restart(const struct krc_card *c, const void *ud)
{
    cJSON *body = NULL;
    cJSON *m = message(&body);
    char *s = NULL;

    if (m != NULL && card_body(body, c, ud) == 0 &&
        own_text(body, "kube-restart-collector", NULL, NULL, NULL, 1) == 0) {
        s = krc_format_json_print(m);
    }
    cJSON_Delete(m);
    return s;
}

int krc_teams_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                             const struct krc_alert_options *fo, char **ret_body,
                             char **ret_fallback, struct krc_error *err)
{
    /* the log first, then every text, until the message fits */
    static const size_t log_max[] = {12000, 6000, 3000, 1000, 0, 0, 0};
    static const size_t text_max[] = {2000, 2000, 1500, 1000, 600, 300, 120};
    struct krc_card_fit fit = {log_max,
                               text_max,
                               sizeof(log_max) / sizeof(log_max[0]),
                               KRC_TEAMS_MAX_PAYLOAD,
                               "Teams",
                               render_restart,
                               diag};

    *ret_body = NULL;
    if (ret_fallback != NULL) {
        *ret_fallback = NULL;
    }
    return krc_card_fit(rep, diag, fo, &fit, ret_body, err);
}

static int finish(cJSON *m, char **ret_body, struct krc_error *err)
{
    char *s;

    if (krc_format_json_finish(m, &s, err) < 0) {
        return KRC_ENOMEM;
    }
    if (strlen(s) > KRC_TEAMS_MAX_PAYLOAD) {
        krc_free(s);
        return krc_error_set(err, KRC_ETOOBIG, "Teams card larger than %d bytes",
                             KRC_TEAMS_MAX_PAYLOAD);
    }
    *ret_body = s;
    return 0;
}

int krc_teams_format_summary(const struct krc_alert_summary *sum,
                             const struct krc_alert_options *fo, char **ret_body,
                             struct krc_error *err)
{
    cJSON *body = NULL;
    cJSON *m = message(&body);
    char line[512];
    const struct krc_alert_group *groups[3] = {sum->by_cause, sum->by_node, sum->by_workload};
    const size_t ngroups[3] = {sum->n_by_cause, sum->n_by_node, sum->n_by_workload};
    const char *names[3] = {"By cause", "By node", "By workload"};

    *ret_body = NULL;
    snprintf(line, sizeof(line), "Restart storm%s%s: %zu restarts in %llds",
             fo->cluster ? " in " : "", fo->cluster ? fo->cluster : "", sum->restarts,
             (long long)sum->window_seconds);
    if (m == NULL || plain_text(body, line, 0, "Bolder") < 0) {
        cJSON_Delete(m);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (int g = 0; g < 3; g++) {
        cJSON *fs;
        cJSON *facts;
        if (ngroups[g] == 0) {
            continue;
        }
        if (own_text(body, names[g], NULL, "Bolder", NULL, 0) < 0 || (fs = append(body)) == NULL ||
            cJSON_AddStringToObject(fs, "type", "FactSet") == NULL ||
            (facts = cJSON_AddArrayToObject(fs, "facts")) == NULL) {
            cJSON_Delete(m);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < ngroups[g] && i < KRC_ALERT_GROUPS_SHOWN; i++) {
            cJSON *f = append(facts);
            char n[32];
            snprintf(n, sizeof(n), "%zu", groups[g][i].count);
            if (f == NULL ||
                cJSON_AddStringToObject(f, "title", groups[g][i].key ? groups[g][i].key : "?") ==
                    NULL ||
                cJSON_AddStringToObject(f, "value", n) == NULL) {
                cJSON_Delete(m);
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
        }
    }
    return finish(m, ret_body, err);
}

int krc_teams_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err)
{
    cJSON *body = NULL;
    cJSON *m = message(&body);
    char line[1024];

    (void)fo;
    *ret_body = NULL;
    krc_alert_resolved_line(rec, line, sizeof(line)); /* an incident's end */
    if (m == NULL || plain_text(body, line, 0, NULL) < 0) {
        cJSON_Delete(m);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return finish(m, ret_body, err);
}

/* --- the sink (chat.c) ------------------------------------------------------ */

static struct krc_sink *teams_create(const struct krc_sink_options *o, const char *url,
                                     struct krc_error *err);

/* What a Workflows webhook's answer means (200 or 202 when accepted). */
static const char *teams_explain(long status, const char *error)
{
    (void)error;
    switch (status) {
    case 400:
        return "the flow refused the message (does its trigger expect an Adaptive Card?)";
    case 401:
    case 403:
        return "the URL's signature (sig) is not valid: the flow's URL changed or was mistyped";
    case 404:
        return "no such flow: it was deleted or turned off, or the URL is mistyped";
    default:
        return NULL;
    }
}

static const struct krc_sink_ops krc_sink_teams = {
    .name = "teams",
    .create = teams_create,
    .format_restart = krc_teams_format_restart,
    .format_summary = krc_teams_format_summary,
    .format_recovered = krc_teams_format_recovered,
    .send = krc_chat_sink_send,
    .upload = NULL,
    .free = krc_chat_sink_free,
    .explain = teams_explain,
    .format_test = krc_test_format_teams,
};

static struct krc_sink *teams_create(const struct krc_sink_options *o, const char *url,
                                     struct krc_error *err)
{
    return krc_chat_sink_create(o, url, &krc_sink_teams, "Teams", KRC_TEAMS_MAX_PAYLOAD, 0, err);
}

/* A Workflows webhook ("When a Teams webhook request is received") on
 * Microsoft's hosts (*.logic.azure.com, *.powerplatform.com) has a
 * /workflows/.../triggers/... path and its signature in the query (sig=):
 * a URL cut short at the '?' or '&' is the common slip. Another host (a
 * proxy, an old connector) is taken as it is. */
static int check_workflow_url(const char *url, char *why, size_t whysz)
{
    struct krc_url_parts u;
    char path[1024];

    if (krc_url_split(url, &u) != KRC_URL_OK ||
        (!krc_url_host_is(&u, ".logic.azure.com") && !krc_url_host_is(&u, ".powerplatform.com"))) {
        return 0;
    }
    snprintf(path, sizeof(path), "%.*s", (int)u.path_len, u.path);
    if (strstr(path, "/workflows/") != NULL && strstr(path, "/triggers/") != NULL &&
        krc_url_query_has(&u, "sig")) {
        return 0;
    }
    snprintf(why, whysz,
             "is not a whole Workflows webhook URL (.../workflows/.../triggers/...?...&sig=...): "
             "copy all of it, with its query");
    return -1;
}

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

static const struct krc_dest_setting settings[] = {
    {"url", KRC_DEST_SECRET, KRC_DEST_INLINE | KRC_DEST_REQUIRED | KRC_DEST_HIDDEN, NULL,
     offsetof(struct krc_destination, url), offsetof(struct krc_destination, url_src),
     check_workflow_url},
};

const struct krc_dest_kind krc_dest_teams = {
    .schema = {"teams", "a Microsoft Teams Workflows webhook", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_teams,
};
