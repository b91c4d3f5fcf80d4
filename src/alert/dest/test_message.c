/* krc notify test's message in each destination kind's format
 * (alert/dest/test_message.h). */
#include "krc/alert/dest/test_message.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"

static const char *cluster_of(const struct krc_alert_options *fo)
{
    return fo->cluster != NULL && fo->cluster[0] != '\0' ? fo->cluster : "(no clusterName set)";
}

/* "Sent by `krc notify test` for cluster C ..." */
static void body_text(const struct krc_alert_options *fo, char *out, size_t outsz)
{
    snprintf(out, outsz,
             "Sent by krc notify test for cluster %s to check this destination. No container "
             "restarted; alerts about restarts will come here.",
             cluster_of(fo));
}

static cJSON *add_obj(cJSON *array)
{
    cJSON *o = cJSON_CreateObject();

    if (o != NULL && !cJSON_AddItemToArray(array, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int none(char **ret_body)
{
    *ret_body = NULL;
    return 0;
}

int krc_test_format_slack(const struct krc_alert_options *fo, const char *test_id, int step,
                          char **ret_body, struct krc_error *err)
{
    char text[512];
    cJSON *m;
    cJSON *blocks;
    cJSON *b;
    cJSON *t;
    int ok;

    (void)test_id;
    if (step != 0) {
        return none(ret_body);
    }
    body_text(fo, text, sizeof(text));
    m = cJSON_CreateObject();
    ok = m != NULL && cJSON_AddStringToObject(m, "text", KRC_TEST_HEADLINE) != NULL &&
         (blocks = cJSON_AddArrayToObject(m, "blocks")) != NULL && (b = add_obj(blocks)) != NULL &&
         cJSON_AddStringToObject(b, "type", "header") &&
         (t = cJSON_AddObjectToObject(b, "text")) != NULL &&
         cJSON_AddStringToObject(t, "type", "plain_text") &&
         cJSON_AddStringToObject(t, "text", KRC_TEST_HEADLINE) && (b = add_obj(blocks)) != NULL &&
         cJSON_AddStringToObject(b, "type", "section") &&
         (t = cJSON_AddObjectToObject(b, "text")) != NULL &&
         cJSON_AddStringToObject(t, "type", "plain_text") &&
         cJSON_AddStringToObject(t, "text", text);
    if (ok && fo->channel != NULL) {
        ok = cJSON_AddStringToObject(m, "channel", fo->channel) != NULL;
    }
    if (ok && fo->username != NULL) {
        ok = cJSON_AddStringToObject(m, "username", fo->username) != NULL;
    }
    if (ok && fo->icon != NULL) {
        ok = cJSON_AddStringToObject(m, fo->icon[0] == ':' ? "icon_emoji" : "icon_url", fo->icon) !=
             NULL;
    }
    if (!ok) {
        cJSON_Delete(m);
        m = NULL;
    }
    return krc_format_json_finish(m, ret_body, err);
}

int krc_test_format_teams(const struct krc_alert_options *fo, const char *test_id, int step,
                          char **ret_body, struct krc_error *err)
{
    char text[512];
    cJSON *m;
    cJSON *a;
    cJSON *card;
    cJSON *body;
    cJSON *tb;
    int ok;

    (void)test_id;
    if (step != 0) {
        return none(ret_body);
    }
    body_text(fo, text, sizeof(text));
    m = cJSON_CreateObject();
    ok = m != NULL && cJSON_AddStringToObject(m, "type", "message") &&
         (a = add_obj(cJSON_AddArrayToObject(m, "attachments"))) != NULL &&
         cJSON_AddStringToObject(a, "contentType", "application/vnd.microsoft.card.adaptive") &&
         (card = cJSON_AddObjectToObject(a, "content")) != NULL &&
         cJSON_AddStringToObject(card, "$schema",
                                 "http://adaptivecards.io/schemas/adaptive-card.json") &&
         cJSON_AddStringToObject(card, "type", "AdaptiveCard") &&
         cJSON_AddStringToObject(card, "version", "1.5") &&
         (body = cJSON_AddArrayToObject(card, "body")) != NULL && (tb = add_obj(body)) != NULL &&
         cJSON_AddStringToObject(tb, "type", "TextBlock") &&
         cJSON_AddStringToObject(tb, "text", KRC_TEST_HEADLINE) &&
         cJSON_AddStringToObject(tb, "weight", "Bolder") &&
         cJSON_AddStringToObject(tb, "size", "Medium") && cJSON_AddBoolToObject(tb, "wrap", 1) &&
         (tb = add_obj(body)) != NULL && cJSON_AddStringToObject(tb, "type", "TextBlock") &&
         cJSON_AddStringToObject(tb, "text", text) && cJSON_AddBoolToObject(tb, "wrap", 1);
    if (!ok) {
        cJSON_Delete(m);
        m = NULL;
    }
    return krc_format_json_finish(m, ret_body, err);
}

/* The card an alert has too: the headline, and the text as a paragraph
 * (Chat's card text takes a little HTML: &, < and > escaped). */
static int gchat_card(cJSON *m, const char *body)
{
    char esc[1024];
    size_t k = 0;
    cJSON *cards = cJSON_AddArrayToObject(m, "cardsV2");
    cJSON *cw = cards != NULL ? add_obj(cards) : NULL;
    cJSON *card;
    cJSON *hdr;
    cJSON *sec;
    cJSON *w;
    cJSON *tp;

    for (const char *p = body; *p != '\0' && k + 6 < sizeof(esc); p++) {
        const char *rep = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : NULL;
        if (rep != NULL) {
            memcpy(esc + k, rep, strlen(rep));
            k += strlen(rep);
        } else {
            esc[k++] = *p;
        }
    }
    esc[k] = '\0';
    if (cw == NULL || cJSON_AddStringToObject(cw, "cardId", "krc-test") == NULL ||
        (card = cJSON_AddObjectToObject(cw, "card")) == NULL ||
        (hdr = cJSON_AddObjectToObject(card, "header")) == NULL ||
        cJSON_AddStringToObject(hdr, "title", KRC_TEST_HEADLINE) == NULL ||
        (sec = add_obj(cJSON_AddArrayToObject(card, "sections"))) == NULL ||
        (w = add_obj(cJSON_AddArrayToObject(sec, "widgets"))) == NULL ||
        (tp = cJSON_AddObjectToObject(w, "textParagraph")) == NULL ||
        cJSON_AddStringToObject(tp, "text", esc) == NULL) {
        return -1;
    }
    return 0;
}

int krc_test_format_gchat(const struct krc_alert_options *fo, const char *test_id, int step,
                          char **ret_body, struct krc_error *err)
{
    char text[600];
    char body[512];
    char key[128];
    cJSON *m;
    cJSON *th = NULL;

    (void)test_id;
    if (step != 0) {
        return none(ret_body);
    }
    body_text(fo, body, sizeof(body));
    snprintf(text, sizeof(text), "*%s*\n%s", KRC_TEST_HEADLINE, body);
    snprintf(key, sizeof(key), "krc-test-%s", test_id);
    m = cJSON_CreateObject();
    /* a thread of its own (the sink asks Chat to start one for a new key) */
    if (m != NULL &&
        (cJSON_AddStringToObject(m, "text", text) == NULL ||
         (th = cJSON_AddObjectToObject(m, "thread")) == NULL ||
         cJSON_AddStringToObject(th, "threadKey", key) == NULL || gchat_card(m, body) < 0)) {
        cJSON_Delete(m);
        m = NULL;
    }
    return krc_format_json_finish(m, ret_body, err);
}

/* A trigger of severity info, resolved at once by step 1 under the same
 * dedup_key: whether the trigger notifies anyone is the service's urgency
 * rule's (docs/destinations.md). */
int krc_test_format_pagerduty(const struct krc_alert_options *fo, const char *test_id, int step,
                              char **ret_body, struct krc_error *err)
{
    char summary[512];
    char key[160];
    cJSON *m = cJSON_CreateObject();
    cJSON *p;
    int ok;

    snprintf(key, sizeof(key), "krc-test/%s", test_id);
    snprintf(summary, sizeof(summary), "%s (cluster %s; krc notify test, resolved at once)",
             KRC_TEST_HEADLINE, cluster_of(fo));
    ok = m != NULL &&
         cJSON_AddStringToObject(m, "event_action", step == 0 ? "trigger" : "resolve") &&
         cJSON_AddStringToObject(m, "dedup_key", key) &&
         cJSON_AddStringToObject(m, "client", "kube-restart-collector");
    if (ok && step == 0) {
        ok = (p = cJSON_AddObjectToObject(m, "payload")) != NULL &&
             cJSON_AddStringToObject(p, "summary", summary) &&
             cJSON_AddStringToObject(p, "source", cluster_of(fo)) &&
             cJSON_AddStringToObject(p, "severity", "info") &&
             cJSON_AddStringToObject(p, "class", "krc_test");
    }
    if (!ok) {
        cJSON_Delete(m);
        m = NULL;
    }
    return krc_format_json_finish(m, ret_body, err);
}

int krc_test_format_webhook(const struct krc_alert_options *fo, const char *test_id, int step,
                            char **ret_body, struct krc_error *err)
{
    char text[512];
    char sent_at[32];
    time_t now = time(NULL);
    struct tm tm;
    cJSON *m;
    cJSON *t = NULL;

    if (step != 0) {
        return none(ret_body);
    }
    body_text(fo, text, sizeof(text));
    gmtime_r(&now, &tm);
    strftime(sent_at, sizeof(sent_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* the envelope of docs/report-schema.json, kind "test" */
    m = cJSON_CreateObject();
    if (m != NULL && (cJSON_AddNumberToObject(m, "schema_version", 1) == NULL ||
                      cJSON_AddStringToObject(m, "kind", "test") == NULL ||
                      cJSON_AddStringToObject(m, "sent_at", sent_at) == NULL ||
                      (fo->cluster != NULL ? cJSON_AddStringToObject(m, "cluster", fo->cluster)
                                           : cJSON_AddNullToObject(m, "cluster")) == NULL ||
                      (t = cJSON_AddObjectToObject(m, "test")) == NULL ||
                      cJSON_AddStringToObject(t, "id", test_id) == NULL ||
                      cJSON_AddStringToObject(t, "headline", KRC_TEST_HEADLINE) == NULL ||
                      cJSON_AddStringToObject(t, "text", text) == NULL)) {
        cJSON_Delete(m);
        m = NULL;
    }
    return krc_format_json_finish(m, ret_body, err);
}
