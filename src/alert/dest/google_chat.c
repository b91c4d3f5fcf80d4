/* Google Chat through an incoming webhook: a message with a cardsV2 card
 * (header, sections of textParagraph / decoratedText / divider widgets) and
 * a thread per pod (thread.threadKey; the sink sends
 * messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD, so every message
 * of a pod goes into its thread, and a key Chat does not know starts one).
 * textParagraph takes a little HTML: every text is escaped (& < > "), line
 * breaks become <br>; krc's own labels are the only markup. Within Chat's
 * 32,000 bytes per message. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/test_message.h"
#include "krc/alert/sink_send.h"

static cJSON *append(cJSON *a)
{
    cJSON *o = cJSON_CreateObject();

    if (o != NULL && !cJSON_AddItemToArray(a, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* HTML-escaped copy (& < > "), newlines kept as <br>. */
static char *html(const char *s)
{
    struct krc_buf b;
    char *r;

    krc_buf_init(&b, strlen(s) * 6 + 16);
    for (const char *p = s; *p != '\0'; p++) {
        switch (*p) {
        case '&':
            krc_buf_append_str(&b, "&amp;");
            break;
        case '<':
            krc_buf_append_str(&b, "&lt;");
            break;
        case '>':
            krc_buf_append_str(&b, "&gt;");
            break;
        case '"':
            krc_buf_append_str(&b, "&quot;");
            break;
        case '\n':
            krc_buf_append_str(&b, "<br>");
            break;
        default:
            krc_buf_append_char(&b, *p);
        }
    }
    r = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    return r;
}

/* A textParagraph: `bold_label` (krc's words) then the escaped text. */
static int paragraph(cJSON *widgets, const char *bold_label, const char *text)
{
    cJSON *w = append(widgets);
    cJSON *tp;
    char *esc = html(text);
    struct krc_buf b;
    int ok;

    krc_buf_init(&b, strlen(esc != NULL ? esc : "") + 64);
    if (bold_label != NULL) {
        krc_buf_printf(&b, "<b>%s</b><br>", bold_label);
    }
    krc_buf_append_str(&b, esc != NULL ? esc : "");
    ok = esc != NULL && w != NULL && (tp = cJSON_AddObjectToObject(w, "textParagraph")) != NULL &&
         cJSON_AddStringToObject(tp, "text", krc_buf_str(&b)) != NULL;
    krc_free(esc);
    krc_buf_cleanup(&b);
    return ok ? 0 : -1;
}

static int decorated(cJSON *widgets, const char *label, const char *text)
{
    cJSON *w = append(widgets);
    cJSON *dt;
    char *esc = html(text);
    int ok = esc != NULL && w != NULL &&
             (dt = cJSON_AddObjectToObject(w, "decoratedText")) != NULL &&
             cJSON_AddStringToObject(dt, "topLabel", label) != NULL &&
             cJSON_AddStringToObject(dt, "text", esc) != NULL;

    krc_free(esc);
    return ok ? 0 : -1;
}

static cJSON *section(cJSON *sections, const char *header)
{
    cJSON *s = append(sections);

    if (s == NULL || (header != NULL && cJSON_AddStringToObject(s, "header", header) == NULL)) {
        return NULL;
    }
    return cJSON_AddArrayToObject(s, "widgets");
}

void krc_gchat_thread_key(const char *cluster, const char *ns, const char *pod, char *out,
                          size_t outsz)
{
    snprintf(out, outsz, "krc/%s/%s/%s", cluster != NULL ? cluster : "-", ns ? ns : "",
             pod ? pod : "");
}

/* The message: text (notifications), one card, the thread. *ret_sections
 * is the card's sections array for the caller to fill. */
static cJSON *message(const char *text, const char *card_id, const char *title,
                      const char *subtitle, const char *thread_key, cJSON **ret_sections)
{
    cJSON *m = cJSON_CreateObject();
    cJSON *cw;
    cJSON *card;
    cJSON *hdr;
    cJSON *th;

    if (m == NULL || cJSON_AddStringToObject(m, "text", text) == NULL ||
        (cw = append(cJSON_AddArrayToObject(m, "cardsV2"))) == NULL ||
        cJSON_AddStringToObject(cw, "cardId", card_id) == NULL ||
        (card = cJSON_AddObjectToObject(cw, "card")) == NULL ||
        (hdr = cJSON_AddObjectToObject(card, "header")) == NULL ||
        cJSON_AddStringToObject(hdr, "title", title) == NULL ||
        (subtitle != NULL && cJSON_AddStringToObject(hdr, "subtitle", subtitle) == NULL) ||
        (*ret_sections = cJSON_AddArrayToObject(card, "sections")) == NULL ||
        (th = cJSON_AddObjectToObject(m, "thread")) == NULL ||
        cJSON_AddStringToObject(th, "threadKey", thread_key) == NULL) {
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}

static int card_sections(cJSON *sections, const struct krc_card *c)
{
    cJSON *w = section(sections, NULL);

    if (w == NULL || paragraph(w, c->cause, c->summary) < 0) {
        return -1;
    }
    for (size_t i = 0; i < c->n_facts; i++) {
        if (decorated(w, c->facts[i].label, c->facts[i].value) < 0) {
            return -1;
        }
    }
    if (c->n_evidence > 0) {
        struct krc_buf b;
        int rc;
        krc_buf_init(&b, 64 * 1024);
        for (size_t i = 0; i < c->n_evidence; i++) {
            krc_buf_printf(&b, "%s\xe2\x80\xa2 %s", i ? "\n" : "", c->evidence[i]);
        }
        rc = (w = section(sections, "Evidence")) == NULL ? -1 : paragraph(w, NULL, krc_buf_str(&b));
        krc_buf_cleanup(&b);
        if (rc < 0) {
            return -1;
        }
    }
    if (c->next_step != NULL &&
        ((w = section(sections, "Next step")) == NULL || paragraph(w, NULL, c->next_step) < 0 ||
         (c->commands != NULL && paragraph(w, NULL, c->commands) < 0))) {
        return -1;
    }
    if (c->log != NULL &&
        ((w = section(sections, "Previous log (end)")) == NULL || paragraph(w, NULL, c->log) < 0)) {
        return -1;
    }
    return 0;
}

struct gchat_ids {
    const char *card_id;
    const char *cluster;
    const char *key;
};

static char *render_restart(const struct krc_card *c, const void *ud)
{
    const struct gchat_ids *ids = ud;
    cJSON *sections = NULL;
    cJSON *m = message(c->title, ids->card_id, c->title, ids->cluster, ids->key, &sections);
    char *s = NULL;

    if (m != NULL && card_sections(sections, c) == 0) {
        s = krc_format_json_print(m);
    }
    cJSON_Delete(m);
    return s;
}

int krc_gchat_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                             const struct krc_alert_options *fo, char **ret_body,
                             char **ret_fallback, struct krc_error *err)
{
    static const size_t log_max[] = {8000, 4000, 2000, 0, 0, 0};
    static const size_t text_max[] = {2000, 2000, 1500, 1000, 500, 150};
    char key[256];
    char card_id[300];
    struct gchat_ids ids = {card_id, fo->cluster, key};
    struct krc_card_fit fit = {log_max,
                               text_max,
                               sizeof(log_max) / sizeof(log_max[0]),
                               KRC_GCHAT_MAX_PAYLOAD,
                               "Google Chat",
                               render_restart,
                               &ids};

    *ret_body = NULL;
    if (ret_fallback != NULL) {
        *ret_fallback = NULL;
    }
    krc_gchat_thread_key(fo->cluster, rep->namespace, rep->name, key, sizeof(key));
    snprintf(card_id, sizeof(card_id), "restart-%s-%s", rep->name ? rep->name : "pod",
             diag->container ? diag->container : "container");
    return krc_card_fit(rep, diag, fo, &fit, ret_body, err);
}

int krc_gchat_format_summary(const struct krc_alert_summary *sum,
                             const struct krc_alert_options *fo, char **ret_body,
                             struct krc_error *err)
{
    cJSON *sections = NULL;
    cJSON *m;
    char title[256];
    char key[256];
    const struct krc_alert_group *groups[3] = {sum->by_cause, sum->by_node, sum->by_workload};
    const size_t ngroups[3] = {sum->n_by_cause, sum->n_by_node, sum->n_by_workload};
    const char *names[3] = {"By cause", "By node", "By workload"};

    *ret_body = NULL;
    snprintf(title, sizeof(title), "Restart storm: %zu restarts in %llds", sum->restarts,
             (long long)sum->window_seconds);
    snprintf(key, sizeof(key), "krc/%s/storm", fo->cluster ? fo->cluster : "-");
    m = message(title, "storm-summary", title, fo->cluster, key, &sections);
    for (int g = 0; m != NULL && g < 3; g++) {
        cJSON *w;
        if (ngroups[g] == 0) {
            continue;
        }
        if ((w = section(sections, names[g])) == NULL) {
            cJSON_Delete(m);
            m = NULL;
            break;
        }
        for (size_t i = 0; i < ngroups[g] && i < KRC_ALERT_GROUPS_SHOWN; i++) {
            char n[32];
            snprintf(n, sizeof(n), "%zu", groups[g][i].count);
            if (decorated(w, groups[g][i].key ? groups[g][i].key : "?", n) < 0) {
                cJSON_Delete(m);
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
        }
    }
    return krc_format_json_finish(m, ret_body, err);
}

int krc_gchat_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err)
{
    cJSON *sections = NULL;
    cJSON *m;
    cJSON *w;
    char key[256];
    char line[1024];

    *ret_body = NULL;
    krc_gchat_thread_key(fo->cluster, rec->namespace, rec->pod, key, sizeof(key));
    krc_alert_resolved_line(rec, line, sizeof(line)); /* an incident's end */
    m = message(line, "recovered", "Resolved", fo->cluster, key, &sections);
    if (m != NULL && ((w = section(sections, NULL)) == NULL || paragraph(w, NULL, line) < 0)) {
        cJSON_Delete(m);
        m = NULL;
    }
    return krc_format_json_finish(m, ret_body, err);
}

/* --- the sink (chat.c) ------------------------------------------------------ */

static struct krc_sink *gchat_create(const struct krc_sink_options *o, const char *url,
                                     struct krc_error *err);

/* What Google Chat's answer to an incoming webhook means. */
static const char *gchat_explain(long status, const char *error)
{
    (void)error;
    switch (status) {
    case 400:
        return "Google Chat refused the message or the URL (its key or token is mistyped?)";
    case 401:
    case 403:
        return "the webhook's key or token is not valid: the webhook was deleted or mistyped";
    case 404:
        return "no such space or webhook: it was deleted, or the URL is mistyped";
    default:
        return NULL;
    }
}

static const struct krc_sink_ops krc_sink_google_chat = {
    .name = "google-chat",
    .create = gchat_create,
    .format_restart = krc_gchat_format_restart,
    .format_summary = krc_gchat_format_summary,
    .format_recovered = krc_gchat_format_recovered,
    .send = krc_chat_sink_send,
    .upload = NULL,
    .free = krc_chat_sink_free,
    .explain = gchat_explain,
    .format_test = krc_test_format_gchat,
};

static struct krc_sink *gchat_create(const struct krc_sink_options *o, const char *url,
                                     struct krc_error *err)
{
    return krc_chat_sink_create(o, url, &krc_sink_google_chat, "Google Chat", KRC_GCHAT_MAX_PAYLOAD,
                                1, err);
}

/* On chat.googleapis.com an incoming webhook is
 * /v1/spaces/SPACE/messages?key=...&token=...; another host is a proxy. */
static int check_chat_url(const char *url, char *why, size_t whysz)
{
    struct krc_url_parts u;
    const char *space;
    size_t space_len;

    if (krc_url_split(url, &u) != KRC_URL_OK || !krc_url_host_is(&u, "chat.googleapis.com")) {
        return 0;
    }
    space = u.path + 11;
    if (u.path_len > 11 + 9 && strncmp(u.path, "/v1/spaces/", 11) == 0 &&
        strncmp(u.path + u.path_len - 9, "/messages", 9) == 0 &&
        (space_len = (size_t)(u.path + u.path_len - 9 - space)) > 0 &&
        memchr(space, '/', space_len) == NULL && krc_url_query_has(&u, "key") &&
        krc_url_query_has(&u, "token")) {
        return 0;
    }
    snprintf(why, whysz,
             "is not a whole Google Chat webhook URL "
             "(https://chat.googleapis.com/v1/spaces/SPACE/messages?key=...&token=...)");
    return -1;
}

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

static const struct krc_dest_setting settings[] = {
    {"url", KRC_DEST_SECRET, KRC_DEST_INLINE | KRC_DEST_REQUIRED | KRC_DEST_HIDDEN, NULL,
     offsetof(struct krc_destination, url), offsetof(struct krc_destination, url_src),
     check_chat_url},
};

const struct krc_dest_kind krc_dest_google_chat = {
    .schema = {"google-chat", "a Google Chat incoming webhook", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_google_chat,
};
