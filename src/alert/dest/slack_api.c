/* The Slack Web API sink: chat.postMessage with a bot token (threads: a
 * reply carries its parent's ts), and the external file upload
 * (files.getUploadURLExternal, POST to the upload URL,
 * files.completeUploadExternal). */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/sink.h"
#include "krc/alert/dest/slack.h"
#include "krc/alert/sink_send.h"
#include "krc/util/buf.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/test_message.h"

static const struct krc_sink_ops krc_sink_slack_api;

/* krc's own bound on a body (the sender refuses a larger one); the
 * formatter's budgets keep a message far below it. */
#define API_MAX_PAYLOAD (512 * 1024)

struct api_sink {
    struct krc_sink base;
    struct krc_sink_conn conn;
    char *api_url;
    char *auth_header; /* "Authorization: Bearer ..." */
};

/* Web API: application errors come as HTTP 200 {"ok":false,"error":...}. */
static int read_answer(const struct krc_http_response *resp, struct krc_sink_result *res)
{
    cJSON *root = resp->body ? cJSON_ParseWithLength(resp->body, resp->body_len) : NULL;
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(root, "ok");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(root, "ts");
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(root, "channel");
    int accepted = resp->status == 200 && cJSON_IsTrue(ok);

    if (cJSON_IsString(e)) {
        snprintf(res->error, sizeof(res->error), "%s", e->valuestring);
    } else if (!accepted && root == NULL) {
        snprintf(res->error, sizeof(res->error), "unreadable response");
    }
    if (accepted && cJSON_IsString(ts)) {
        snprintf(res->ts, sizeof(res->ts), "%s", ts->valuestring);
    }
    if (accepted && cJSON_IsString(ch)) {
        snprintf(res->channel, sizeof(res->channel), "%s", ch->valuestring);
    }
    cJSON_Delete(root);
    return accepted ? 0 : 1;
}

static int api_post(struct krc_sink_conn *c, void *ctx, const char *body,
                    struct krc_http_response *resp, struct krc_sink_result *res,
                    struct krc_error *err)
{
    const struct api_sink *a = ctx;
    const char *headers[] = {"Content-Type: application/json; charset=utf-8", a->auth_header, NULL};
    char url[2048];
    int rc;

    snprintf(url, sizeof(url), "%s/chat.postMessage", a->api_url);
    rc = krc_sink_http_post(c, url, headers, body, strlen(body), c->o.timeout_ms, resp, err);
    res->http_status = resp->status;
    res->error[0] = '\0';
    if (rc < 0) {
        return rc;
    }
    return read_answer(resp, res);
}

/* A reply goes into its thread: set thread_ts (and the parent's channel
 * id) in an already formatted body. Returns a new string or NULL. */
static char *with_thread(const char *body, const char *ts, const char *channel)
{
    cJSON *root = cJSON_Parse(body);
    char *out = NULL;

    if (root == NULL) {
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "thread_ts");
    if (cJSON_AddStringToObject(root, "thread_ts", ts) != NULL) {
        if (channel != NULL && channel[0] != '\0') {
            cJSON_DeleteItemFromObjectCaseSensitive(root, "channel");
            cJSON_AddStringToObject(root, "channel", channel);
        }
        out = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(root);
    return out;
}

static void api_describe(const struct krc_sink *s, const struct krc_sink_message *m, char *out,
                         size_t outsz)
{
    (void)s;
    snprintf(out, outsz, "Slack channel %s", m->channel != NULL ? m->channel : "(none)");
}

static int api_send(struct krc_sink *s, const struct krc_sink_message *m,
                    struct krc_sink_result *res, struct krc_error *err)
{
    struct api_sink *a = (struct api_sink *)s;
    char *threaded = NULL;
    char dest[300];
    const char *body = m->body;
    int rc;

    api_describe(s, m, dest, sizeof(dest));
    if (m->thread_ts != NULL && m->thread_ts[0] != '\0') {
        threaded = with_thread(m->body, m->thread_ts, m->channel);
        if (threaded != NULL) {
            body = threaded;
        }
    }
    rc = krc_sink_deliver(&a->conn, m->channel != NULL ? m->channel : "", dest, api_post, a, body,
                          m->fallback, res, err);
    cJSON_free(threaded);
    return rc;
}

static int api_call(struct api_sink *a, const char *method, const char *content_type,
                    const char *body, size_t body_len, cJSON **ret, struct krc_error *err)
{
    struct krc_http_response resp;
    char url[2048];
    char ct[128];
    const char *headers[] = {ct, a->auth_header, NULL};
    cJSON *root;
    int rc;

    snprintf(url, sizeof(url), "%s/%s", a->api_url, method);
    snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
    krc_http_response_init(&resp);
    rc = krc_sink_http_post(&a->conn, url, headers, body, body_len, a->conn.o.timeout_ms, &resp,
                            err);
    if (rc < 0) {
        krc_error_prefix(err, "Slack %s", method);
        krc_http_response_cleanup(&resp);
        return rc;
    }
    root = resp.body ? cJSON_ParseWithLength(resp.body, resp.body_len) : NULL;
    if (resp.status != 200 || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "ok"))) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
        rc = krc_error_set(err, resp.status == 429 ? KRC_ERATELIMIT : KRC_EHTTP,
                           "Slack %s answered %ld %s", method, resp.status,
                           cJSON_IsString(e) ? e->valuestring : "(no error code)");
        cJSON_Delete(root);
        krc_http_response_cleanup(&resp);
        return rc;
    }
    krc_http_response_cleanup(&resp);
    *ret = root;
    return 0;
}

static int upload_bytes(struct api_sink *a, const char *url, const void *data, size_t len,
                        struct krc_error *err)
{
    struct krc_http_response resp;
    const char *headers[] = {"Content-Type: application/octet-stream", NULL};
    int rc;

    krc_http_response_init(&resp);
    rc =
        krc_sink_http_post(&a->conn, url, headers, data, len, a->conn.o.timeout_ms * 4, &resp, err);
    if (rc == 0 && resp.status != 200) {
        rc = krc_error_set(err, KRC_EHTTP, "Slack file upload answered %ld", resp.status);
    }
    krc_http_response_cleanup(&resp);
    return rc;
}

static char *complete_request(const char *file_id, const char *title, const char *channel,
                              const char *thread_ts)
{
    cJSON *req = cJSON_CreateObject();
    cJSON *files = cJSON_AddArrayToObject(req, "files");
    cJSON *f = cJSON_CreateObject();
    char *json;

    cJSON_AddStringToObject(f, "id", file_id);
    cJSON_AddStringToObject(f, "title", title);
    cJSON_AddItemToArray(files, f);
    cJSON_AddStringToObject(req, "channel_id", channel);
    if (thread_ts != NULL && thread_ts[0] != '\0') {
        cJSON_AddStringToObject(req, "thread_ts", thread_ts);
    }
    json = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    return json;
}

static int api_upload(struct krc_sink *s, const char *channel, const char *thread_ts,
                      const char *filename, const char *title, const void *data, size_t len,
                      struct krc_error *err)
{
    struct api_sink *a = (struct api_sink *)s;
    struct krc_buf form;
    cJSON *r1 = NULL;
    cJSON *r2 = NULL;
    char *esc = NULL;
    char *json = NULL;
    const cJSON *upload_url;
    const cJSON *file_id;
    int rc;

    krc_buf_init(&form, 4096);
    esc = krc_http_escape(filename);
    if (esc == NULL || krc_buf_printf(&form, "filename=%s&length=%zu", esc, len) < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    rc = api_call(a, "files.getUploadURLExternal", "application/x-www-form-urlencoded",
                  krc_buf_str(&form), form.len, &r1, err);
    if (rc < 0) {
        goto out;
    }
    upload_url = cJSON_GetObjectItemCaseSensitive(r1, "upload_url");
    file_id = cJSON_GetObjectItemCaseSensitive(r1, "file_id");
    if (!cJSON_IsString(upload_url) || !cJSON_IsString(file_id)) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "Slack files.getUploadURLExternal: no upload_url/file_id in answer");
        goto out;
    }
    rc = upload_bytes(a, upload_url->valuestring, data, len, err);
    if (rc < 0) {
        goto out;
    }
    json = complete_request(file_id->valuestring, title != NULL ? title : filename, channel,
                            thread_ts);
    if (json == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    rc = api_call(a, "files.completeUploadExternal", "application/json; charset=utf-8", json,
                  strlen(json), &r2, err);
out:
    cJSON_free(json);
    cJSON_Delete(r1);
    cJSON_Delete(r2);
    krc_free(esc);
    krc_buf_cleanup(&form);
    return rc;
}

static void api_free(struct krc_sink *s)
{
    struct api_sink *a = (struct api_sink *)s;

    krc_sink_conn_cleanup(&a->conn);
    krc_free(a->api_url);
    if (a->auth_header != NULL) {
        memset(a->auth_header, 0, strlen(a->auth_header));
        krc_free(a->auth_header);
    }
    krc_free(a);
}

static int set_auth(struct api_sink *a, const char *token, struct krc_error *err)
{
    struct krc_buf b;

    krc_buf_init(&b, 8192);
    if (krc_buf_printf(&b, "Authorization: Bearer %s", token) < 0) {
        krc_buf_cleanup(&b);
        return krc_error_set(err, KRC_EINVAL, "Slack bot token too long");
    }
    a->auth_header = krc_buf_take(&b);
    if (a->auth_header == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_log_add_secret(token);
    return 0;
}

static struct krc_sink *api_create(const struct krc_sink_options *o, const char *target,
                                   struct krc_error *err)
{
    struct api_sink *a;

    (void)target;
    if (o->bot_token == NULL || o->bot_token[0] == '\0') {
        krc_error_set(err, KRC_EINVAL, "Slack Web API sink: the Web API needs a bot token");
        return NULL;
    }
    a = krc_calloc(1, sizeof(*a));
    if (a == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    a->base.ops = &krc_sink_slack_api;
    a->base.limits.min_interval_ms = o->min_interval_ms;
    a->base.limits.max_payload = API_MAX_PAYLOAD;
    a->base.limits.threads = 1;
    a->base.limits.files = 1;
    a->api_url = krc_strdup(o->api_url != NULL ? o->api_url : "https://slack.com/api");
    if (a->api_url == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        api_free(&a->base);
        return NULL;
    }
    for (size_t n = strlen(a->api_url); n > 0 && a->api_url[n - 1] == '/'; n--) {
        a->api_url[n - 1] = '\0';
    }
    if (set_auth(a, o->bot_token, err) < 0 || krc_sink_conn_init(&a->conn, o, err) < 0) {
        api_free(&a->base);
        return NULL;
    }
    return &a->base;
}

/* The Web API's error codes (HTTP 200 {"ok":false,"error":...}). */
static const char *api_explain(long status, const char *error)
{
    static const struct {
        const char *code;
        const char *why;
    } words[] = {
        {"invalid_auth", "the bot token is not valid (revoked or mistyped)"},
        {"not_authed", "no bot token was sent"},
        {"token_revoked", "the bot token was revoked"},
        {"token_expired", "the bot token expired (token rotation is on: give krc a new one)"},
        {"account_inactive", "the bot token's user or workspace was deleted"},
        {"not_in_channel", "the bot is not in the channel: invite it (/invite @BOT)"},
        {"channel_not_found",
         "the bot sees no such channel (mistyped, or private without the bot in it)"},
        {"is_archived", "the channel is archived"},
        {"missing_scope", "the token lacks a scope (chat:write; files:write for log files)"},
        {"restricted_action", "a workspace setting keeps the bot from posting there"},
        {"ratelimited", "rate limited by Slack"},
    };

    (void)status;
    for (size_t i = 0; error != NULL && i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcmp(error, words[i].code) == 0) {
            return words[i].why;
        }
    }
    return NULL;
}

static const struct krc_sink_ops krc_sink_slack_api = {
    .name = "slack-api",
    .create = api_create,
    .format_restart = krc_slack_sink_format_restart,
    .format_summary = krc_slack_format_summary,
    .format_recovered = krc_slack_format_recovered,
    .send = api_send,
    .upload = api_upload,
    .free = api_free,
    .explain = api_explain,
    .format_test = krc_test_format_slack,
};

/* --- the kind: settings and registry entry (alert/dest.h) -------------------- */

/* The Web API base on Slack's hosts is https://slack.com/api (slack-gov.com
 * for GovSlack); another host is a proxy and taken as it is. An incoming
 * webhook's URL here is a common slip. */
static int check_api_url(const char *url, char *why, size_t whysz)
{
    struct krc_url_parts u;

    if (krc_url_split(url, &u) != KRC_URL_OK) {
        return 0;
    }
    if (krc_url_host_is(&u, "hooks.slack.com") || krc_url_host_is(&u, "hooks.slack-gov.com")) {
        snprintf(why, whysz,
                 "is an incoming webhook's, not the Web API base (https://slack.com/api): the "
                 "Web API takes the bot token and a channel; a webhook goes in SLACK_WEBHOOK_URL "
                 "or a slack-webhook destination");
        return -1;
    }
    if ((krc_url_host_is(&u, "slack.com") || krc_url_host_is(&u, "slack-gov.com")) &&
        !(u.path_len == 4 && strncmp(u.path, "/api", 4) == 0) &&
        !(u.path_len == 5 && strncmp(u.path, "/api/", 5) == 0)) {
        snprintf(why, whysz, "is on Slack's host but not the Web API base (https://slack.com/api)");
        return -1;
    }
    return 0;
}

static const struct krc_dest_setting settings[] = {
    {"token", KRC_DEST_SECRET, KRC_DEST_REQUIRED, NULL, offsetof(struct krc_destination, secret),
     offsetof(struct krc_destination, secret_src), NULL},
    {"channel", KRC_DEST_TEXT, KRC_DEST_REQUIRED, NULL, offsetof(struct krc_destination, channel),
     0, NULL},
    {"apiUrl", KRC_DEST_URL, 0, NULL, offsetof(struct krc_destination, api_url), 0, check_api_url},
};

const struct krc_dest_kind krc_dest_slack_api = {
    .schema = {"slack-api", "the Slack Web API (a bot token and a channel)", settings,
               sizeof(settings) / sizeof(settings[0])},
    .ops = &krc_sink_slack_api,
    .target = krc_slack_env_api_target,
    .target_of_key = krc_slack_env_api_target_of_key,
    .sink_options = krc_slack_api_sink_options,
    .threads = 1,
};
