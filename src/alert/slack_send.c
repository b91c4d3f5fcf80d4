#include "krc/alert/slack_send.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/backoff.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/http.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define PACE_SLOTS 64
#define RESPONSE_MAX (256 * 1024)

struct pace {
    uint64_t key;
    int64_t last_ms;
};

struct krc_slack_sender {
    struct krc_slack_sender_options o;
    char *api_url;
    char *auth_header; /* "Authorization: Bearer ..." or NULL */
    struct krc_http *http;
    struct krc_backoff backoff;
    struct pace pace[PACE_SLOTS];
};

void krc_slack_sender_options_defaults(struct krc_slack_sender_options *o)
{
    memset(o, 0, sizeof(*o));
    o->api_url = "https://slack.com/api";
    o->min_interval_ms = 1000;
    o->max_attempts = 8;
    o->timeout_ms = 15000;
    o->backoff_initial_ms = 1000;
    o->backoff_max_ms = 60000;
}

void krc_slack_sender_free(struct krc_slack_sender *s)
{
    if (s == NULL) {
        return;
    }
    krc_http_free(s->http);
    krc_free(s->api_url);
    if (s->auth_header != NULL) {
        memset(s->auth_header, 0, strlen(s->auth_header));
        krc_free(s->auth_header);
    }
    krc_free(s);
}

struct krc_slack_sender *krc_slack_sender_new(const struct krc_slack_sender_options *o,
                                              struct krc_error *err)
{
    struct krc_slack_sender *s = krc_calloc(1, sizeof(*s));
    struct krc_http_tls tls;

    if (s == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->api_url = krc_strdup(o->api_url != NULL ? o->api_url : "https://slack.com/api");
    if (s->api_url == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        krc_slack_sender_free(s);
        return NULL;
    }
    for (size_t n = strlen(s->api_url); n > 0 && s->api_url[n - 1] == '/'; n--) {
        s->api_url[n - 1] = '\0';
    }
    if (o->bot_token != NULL && o->bot_token[0] != '\0') {
        struct krc_buf b;
        krc_buf_init(&b, 8192);
        if (krc_buf_printf(&b, "Authorization: Bearer %s", o->bot_token) < 0) {
            krc_buf_cleanup(&b);
            krc_error_set(err, KRC_EINVAL, "Slack bot token too long");
            krc_slack_sender_free(s);
            return NULL;
        }
        s->auth_header = krc_buf_take(&b);
        krc_log_add_secret(o->bot_token);
    }
    memset(&tls, 0, sizeof(tls));
    tls.ca_file = o->ca_file;
    s->http = krc_http_new(&tls, err);
    if (s->http == NULL || (o->bot_token != NULL && o->bot_token[0] && s->auth_header == NULL)) {
        krc_slack_sender_free(s);
        return NULL;
    }
    krc_backoff_init(&s->backoff, o->backoff_initial_ms, o->backoff_max_ms, 300000,
                     (uint64_t)krc_clock_mono_ms());
    return s;
}

/* A request in flight is aborted only on the hard cancel: at shutdown a
 * message Slack may already be processing is better finished than sent
 * again from the outbox at the next start. */
static const atomic_int *transfer_cancel(const struct krc_slack_sender *s)
{
    return s->o.cancel_transfer != NULL ? s->o.cancel_transfer : s->o.cancel;
}

static uint64_t key_of(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* Wait until this destination may receive another message. */
static int pace_wait(struct krc_slack_sender *s, const char *dest)
{
    uint64_t k = key_of(dest);
    struct pace *slot = NULL;
    struct pace *oldest = &s->pace[0];
    int64_t now = krc_clock_mono_ms();

    for (size_t i = 0; i < PACE_SLOTS; i++) {
        if (s->pace[i].key == k) {
            slot = &s->pace[i];
            break;
        }
        if (s->pace[i].last_ms < oldest->last_ms) {
            oldest = &s->pace[i];
        }
    }
    if (slot != NULL && now - slot->last_ms < s->o.min_interval_ms) {
        if (krc_clock_sleep_ms(s->o.min_interval_ms - (now - slot->last_ms), s->o.cancel)) {
            return KRC_ECANCELED;
        }
    }
    if (slot == NULL) {
        slot = oldest;
        slot->key = k;
    }
    slot->last_ms = krc_clock_mono_ms();
    return 0;
}

void krc_slack_describe(const struct krc_slack_message *m, char *out, size_t outsz)
{
    if (m->webhook_url != NULL) {
        char origin[256];
        krc_http_url_origin(m->webhook_url, origin, sizeof(origin));
        snprintf(out, outsz, "webhook %s", origin);
    } else {
        snprintf(out, outsz, "channel %s", m->channel ? m->channel : "(none)");
    }
}

/* One POST. Fills res->http_status/error/ts/channel; returns 0 when Slack
 * accepted the message, 1 when it answered (not accepted), < 0 on transport
 * errors. */
static int post_once(struct krc_slack_sender *s, const struct krc_slack_message *m,
                     const char *body, struct krc_http_response *resp, struct krc_slack_result *res,
                     struct krc_error *err)
{
    struct krc_http_request req;
    const char *headers[3];
    char url[2048];
    int rc;

    memset(&req, 0, sizeof(req));
    headers[0] = "Content-Type: application/json; charset=utf-8";
    headers[1] = NULL;
    headers[2] = NULL;
    if (m->webhook_url != NULL) {
        req.url = m->webhook_url;
    } else {
        snprintf(url, sizeof(url), "%s/chat.postMessage", s->api_url);
        req.url = url;
        headers[1] = s->auth_header;
    }
    req.method = "POST";
    req.headers = headers;
    req.body = body;
    req.body_len = strlen(body);
    req.timeout_ms = s->o.timeout_ms;
    req.max_body = RESPONSE_MAX;
    req.cancel = transfer_cancel(s);
    rc = krc_http_do(s->http, &req, resp, err);
    res->http_status = resp->status;
    res->error[0] = '\0';
    if (rc < 0) {
        return rc;
    }
    if (m->webhook_url != NULL) {
        if (resp->status == 200) {
            return 0;
        }
        /* Webhook errors are short plain-text codes. */
        snprintf(res->error, sizeof(res->error), "%.*s",
                 (int)(resp->body_len < 100 ? resp->body_len : 100), resp->body ? resp->body : "");
        for (char *p = res->error; *p; p++) {
            if ((unsigned char)*p < 0x20) {
                *p = ' ';
            }
        }
        return 1;
    }
    /* Web API: application errors come as HTTP 200 {"ok":false,"error":...}. */
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
}

static int is_payload_error(const char *e)
{
    return strcmp(e, "invalid_payload") == 0 || strcmp(e, "invalid_blocks") == 0 ||
           strcmp(e, "invalid_blocks_format") == 0 || strcmp(e, "msg_too_long") == 0 ||
           strcmp(e, "no_text") == 0 || strcmp(e, "invalid_attachments") == 0 ||
           strcmp(e, "too_many_attachments") == 0;
}

int krc_slack_send(struct krc_slack_sender *s, const struct krc_slack_message *m,
                   struct krc_slack_result *res, struct krc_error *err)
{
    struct krc_http_response resp;
    const char *body = m->body;
    char dest[300];
    int rc = 0;
    int transient_failures = 0;

    memset(res, 0, sizeof(*res));
    krc_http_response_init(&resp);
    krc_slack_describe(m, dest, sizeof(dest));
    if (m->webhook_url == NULL && s->auth_header == NULL) {
        return krc_error_set(err, KRC_EINVAL, "Slack %s: the Web API needs a bot token", dest);
    }
    for (;;) {
        struct krc_error e;
        int64_t delay = 0;

        krc_error_clear(&e);
        if (pace_wait(s, m->webhook_url != NULL ? m->webhook_url : m->channel) < 0) {
            rc = krc_error_set(err, KRC_ECANCELED, "Slack %s: canceled", dest);
            break;
        }
        res->attempts++;
        rc = post_once(s, m, body, &resp, res, &e);
        if (rc == 0) {
            krc_backoff_reset(&s->backoff);
            break;
        }
        if (rc == KRC_ECANCELED) {
            rc = krc_error_set(err, KRC_ECANCELED, "Slack %s: canceled", dest);
            break;
        }
        if (rc == 1 && res->http_status == 429) {
            res->rate_limited++;
            delay = resp.retry_after > 0 ? (int64_t)resp.retry_after * 1000 : 1000;
            krc_log(KRC_LOG_WARN, "Slack %s: rate limited (429), retrying in %.1fs", dest,
                    (double)delay / 1000.0);
            /* A 429 is Slack pacing us, not a failure: it does not use up attempts,
             * but a bound keeps a broken endpoint from holding us forever. */
            if (res->rate_limited > 50) {
                rc = krc_error_set(err, KRC_ERATELIMIT,
                                   "Slack %s: still rate limited after %d tries", dest,
                                   res->rate_limited);
                break;
            }
        } else if (rc == 1 && is_payload_error(res->error) && !res->used_fallback &&
                   m->fallback != NULL) {
            krc_log(KRC_LOG_WARN,
                    "Slack %s rejected the message (%ld %s); sending a plain-text "
                    "version",
                    dest, res->http_status, res->error);
            body = m->fallback;
            res->used_fallback = 1;
            continue;
        } else if (rc == 1 && res->http_status < 500 && res->http_status != 0) {
            rc = krc_error_set(err, KRC_EHTTP, "Slack %s answered %ld %s", dest, res->http_status,
                               res->error[0] ? res->error : "(no error code)");
            if (err != NULL) {
                err->http_status = (int)res->http_status;
            }
            break;
        } else {
            /* 5xx, ok:false with a server error, or a transport failure */
            transient_failures++;
            if (transient_failures >= s->o.max_attempts) {
                if (rc == 1) {
                    rc =
                        krc_error_set(err, KRC_EHTTP, "Slack %s: gave up after %d attempts: %ld %s",
                                      dest, res->attempts, res->http_status, res->error);
                } else {
                    rc = krc_error_set(err, rc, "Slack %s: gave up after %d attempts: %s", dest,
                                       res->attempts, e.msg);
                }
                break;
            }
            delay = krc_backoff_next(&s->backoff, krc_clock_mono_ms());
            if (rc == 1 && resp.retry_after > 0) {
                delay = (int64_t)resp.retry_after * 1000;
            }
            krc_log(KRC_LOG_WARN, "Slack %s: %s; retrying in %.1fs", dest,
                    rc == 1 ? res->error : e.msg, (double)delay / 1000.0);
        }
        if (krc_clock_sleep_ms(delay, s->o.cancel)) {
            rc = krc_error_set(err, KRC_ECANCELED, "Slack %s: canceled", dest);
            break;
        }
    }
    krc_http_response_cleanup(&resp);
    return rc;
}

/* --- file upload (Web API) ----------------------------------------------- */

static int api_call(struct krc_slack_sender *s, const char *method, const char *content_type,
                    const char *body, size_t body_len, cJSON **ret, struct krc_error *err)
{
    struct krc_http_request req;
    struct krc_http_response resp;
    const char *headers[3];
    char url[2048];
    char ct[128];
    cJSON *root;
    int rc;

    snprintf(url, sizeof(url), "%s/%s", s->api_url, method);
    snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
    headers[0] = ct;
    headers[1] = s->auth_header;
    headers[2] = NULL;
    memset(&req, 0, sizeof(req));
    req.method = "POST";
    req.url = url;
    req.headers = headers;
    req.body = body;
    req.body_len = body_len;
    req.timeout_ms = s->o.timeout_ms;
    req.max_body = RESPONSE_MAX;
    req.cancel = transfer_cancel(s);
    krc_http_response_init(&resp);
    rc = krc_http_do(s->http, &req, &resp, err);
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

int krc_slack_upload(struct krc_slack_sender *s, const char *channel, const char *thread_ts,
                     const char *filename, const char *title, const void *data, size_t len,
                     struct krc_error *err)
{
    struct krc_buf form;
    cJSON *r1 = NULL;
    cJSON *r2 = NULL;
    cJSON *req = NULL;
    char *esc = NULL;
    char *json = NULL;
    const cJSON *upload_url;
    const cJSON *file_id;
    int rc;

    if (s->auth_header == NULL) {
        return krc_error_set(err, KRC_EINVAL, "file upload needs a Slack bot token");
    }
    krc_buf_init(&form, 4096);
    esc = krc_http_escape(filename);
    if (esc == NULL || krc_buf_printf(&form, "filename=%s&length=%zu", esc, len) < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    rc = api_call(s, "files.getUploadURLExternal", "application/x-www-form-urlencoded",
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
    {
        struct krc_http_request req2;
        struct krc_http_response resp;
        const char *headers[] = {"Content-Type: application/octet-stream", NULL};
        memset(&req2, 0, sizeof(req2));
        req2.method = "POST";
        req2.url = upload_url->valuestring;
        req2.headers = headers;
        req2.body = data;
        req2.body_len = len;
        req2.timeout_ms = s->o.timeout_ms * 4;
        req2.cancel = transfer_cancel(s);
        krc_http_response_init(&resp);
        rc = krc_http_do(s->http, &req2, &resp, err);
        if (rc == 0 && resp.status != 200) {
            rc = krc_error_set(err, KRC_EHTTP, "Slack file upload answered %ld", resp.status);
        }
        krc_http_response_cleanup(&resp);
        if (rc < 0) {
            goto out;
        }
    }
    req = cJSON_CreateObject();
    {
        cJSON *files = cJSON_AddArrayToObject(req, "files");
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "id", file_id->valuestring);
        cJSON_AddStringToObject(f, "title", title != NULL ? title : filename);
        cJSON_AddItemToArray(files, f);
        cJSON_AddStringToObject(req, "channel_id", channel);
        if (thread_ts != NULL && thread_ts[0] != '\0') {
            cJSON_AddStringToObject(req, "thread_ts", thread_ts);
        }
    }
    json = cJSON_PrintUnformatted(req);
    if (json == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    rc = api_call(s, "files.completeUploadExternal", "application/json; charset=utf-8", json,
                  strlen(json), &r2, err);
out:
    cJSON_free(json);
    cJSON_Delete(req);
    cJSON_Delete(r1);
    cJSON_Delete(r2);
    krc_free(esc);
    krc_buf_cleanup(&form);
    return rc;
}
