#include "krc/alert/sink_send.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define RESPONSE_MAX (256 * 1024)

int krc_sink_conn_init(struct krc_sink_conn *c, const struct krc_sink_options *o,
                       struct krc_error *err)
{
    struct krc_http_tls tls;

    memset(c, 0, sizeof(*c));
    c->o = *o;
    memset(&tls, 0, sizeof(tls));
    tls.ca_file = o->ca_file;
    c->http = krc_http_new(&tls, err);
    if (c->http == NULL) {
        return err != NULL && err->code < 0 ? err->code : KRC_ENOMEM;
    }
    krc_backoff_init(&c->backoff, o->backoff_initial_ms, o->backoff_max_ms, 300000,
                     (uint64_t)krc_clock_mono_ms());
    return 0;
}

void krc_sink_conn_cleanup(struct krc_sink_conn *c)
{
    krc_http_free(c->http);
    c->http = NULL;
}

/* A request in flight is aborted only on the hard cancel: at shutdown a
 * message Slack may already be processing is better finished than sent
 * again from the outbox at the next start. */
const atomic_int *krc_sink_transfer_cancel(const struct krc_sink_conn *c)
{
    return c->o.cancel_transfer != NULL ? c->o.cancel_transfer : c->o.cancel;
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

/* Wait until this target may receive another message. */
static int pace_wait(struct krc_sink_conn *c, const char *target)
{
    uint64_t k = key_of(target);
    struct krc_sink_pace *slot = NULL;
    struct krc_sink_pace *oldest = &c->pace[0];
    int64_t now = krc_clock_mono_ms();

    for (size_t i = 0; i < KRC_SINK_PACE_SLOTS; i++) {
        if (c->pace[i].key == k) {
            slot = &c->pace[i];
            break;
        }
        if (c->pace[i].last_ms < oldest->last_ms) {
            oldest = &c->pace[i];
        }
    }
    if (slot != NULL && now - slot->last_ms < c->o.min_interval_ms) {
        if (krc_clock_sleep_ms(c->o.min_interval_ms - (now - slot->last_ms), c->o.cancel)) {
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

int krc_sink_http_post(struct krc_sink_conn *c, const char *url, const char *const *headers,
                       const void *body, size_t len, long timeout_ms,
                       struct krc_http_response *resp, struct krc_error *err)
{
    struct krc_http_request req;

    memset(&req, 0, sizeof(req));
    req.method = "POST";
    req.url = url;
    req.headers = headers;
    req.body = body;
    req.body_len = len;
    req.timeout_ms = timeout_ms;
    req.max_body = RESPONSE_MAX;
    req.cancel = krc_sink_transfer_cancel(c);
    return krc_http_do(c->http, &req, resp, err);
}

static int is_payload_error(const char *e)
{
    return strcmp(e, "invalid_payload") == 0 || strcmp(e, "invalid_blocks") == 0 ||
           strcmp(e, "invalid_blocks_format") == 0 || strcmp(e, "msg_too_long") == 0 ||
           strcmp(e, "no_text") == 0 || strcmp(e, "invalid_attachments") == 0 ||
           strcmp(e, "too_many_attachments") == 0;
}

enum next { NEXT_DONE, NEXT_WAIT, NEXT_FALLBACK };

/* What to do after an answer that was not a success: wait `*delay` and try
 * again, switch to the fallback, or stop with *rc set. */
static enum next after_failure(struct krc_sink_conn *c, const char *dest, int *rc,
                               const struct krc_http_response *resp, const struct krc_error *e,
                               int has_fallback, int *transient, int64_t *delay,
                               struct krc_sink_result *res, struct krc_error *err)
{
    if (*rc == 1 && res->http_status == 429) {
        res->rate_limited++;
        *delay = resp->retry_after > 0 ? (int64_t)resp->retry_after * 1000 : 1000;
        res->retry_after_ms = *delay;
        krc_log(KRC_LOG_WARN, "%s: rate limited (429), retrying in %.1fs", dest,
                (double)*delay / 1000.0);
        /* A 429 is Slack pacing us, not a failure: it does not use up attempts,
         * but a bound keeps a broken endpoint from holding us forever. */
        if (res->rate_limited > 50) {
            *rc = krc_error_set(err, KRC_ERATELIMIT, "%s: still rate limited after %d tries", dest,
                                res->rate_limited);
            return NEXT_DONE;
        }
        return NEXT_WAIT;
    }
    if (*rc == 1 && is_payload_error(res->error) && !res->used_fallback && has_fallback) {
        krc_log(KRC_LOG_WARN,
                "%s rejected the message (%ld %s); sending a plain-text "
                "version",
                dest, res->http_status, res->error);
        res->used_fallback = 1;
        return NEXT_FALLBACK;
    }
    if (*rc == 1 && res->http_status < 500 && res->http_status != 0) {
        *rc = krc_error_set(err, KRC_EHTTP, "%s answered %ld %s", dest, res->http_status,
                            res->error[0] ? res->error : "(no error code)");
        if (err != NULL) {
            err->http_status = (int)res->http_status;
        }
        return NEXT_DONE;
    }
    /* 5xx, ok:false with a server error, or a transport failure */
    if (++*transient >= c->o.max_attempts) {
        if (*rc == 1) {
            *rc = krc_error_set(err, KRC_EHTTP, "%s: gave up after %d attempts: %ld %s", dest,
                                res->attempts, res->http_status, res->error);
        } else {
            *rc = krc_error_set(err, *rc, "%s: gave up after %d attempts: %s", dest, res->attempts,
                                e->msg);
        }
        return NEXT_DONE;
    }
    *delay = krc_backoff_next(&c->backoff, krc_clock_mono_ms());
    if (*rc == 1 && resp->retry_after > 0) {
        *delay = (int64_t)resp->retry_after * 1000;
    }
    krc_log(KRC_LOG_WARN, "%s: %s; retrying in %.1fs", dest, *rc == 1 ? res->error : e->msg,
            (double)*delay / 1000.0);
    return NEXT_WAIT;
}

int krc_sink_deliver(struct krc_sink_conn *c, const char *pace_key, const char *dest,
                     krc_sink_post_fn post, void *ctx, const char *body, const char *fallback,
                     struct krc_sink_result *res, struct krc_error *err)
{
    struct krc_http_response resp;
    int rc = 0;
    int transient = 0;

    memset(res, 0, sizeof(*res));
    krc_http_response_init(&resp);
    for (;;) {
        struct krc_error e;
        int64_t delay = 0;
        enum next next;

        krc_error_clear(&e);
        if (pace_wait(c, pace_key) < 0) {
            rc = krc_error_set(err, KRC_ECANCELED, "%s: canceled", dest);
            break;
        }
        res->attempts++;
        krc_http_response_cleanup(&resp);
        krc_http_response_init(&resp);
        rc = post(c, ctx, body, &resp, res, &e);
        if (rc == 0) {
            krc_backoff_reset(&c->backoff);
            break;
        }
        if (rc == KRC_ECANCELED) {
            rc = krc_error_set(err, KRC_ECANCELED, "%s: canceled", dest);
            break;
        }
        next =
            after_failure(c, dest, &rc, &resp, &e, fallback != NULL, &transient, &delay, res, err);
        if (next == NEXT_DONE) {
            break;
        }
        if (next == NEXT_FALLBACK) {
            body = fallback;
            continue;
        }
        if (krc_clock_sleep_ms(delay, c->o.cancel)) {
            rc = krc_error_set(err, KRC_ECANCELED, "%s: canceled", dest);
            break;
        }
    }
    krc_http_response_cleanup(&resp);
    return rc;
}

int krc_sink_http_answer(int rc, const struct krc_http_response *resp, struct krc_sink_result *res)
{
    res->http_status = resp->status;
    res->error[0] = '\0';
    if (rc < 0) {
        return rc;
    }
    if (resp->status >= 200 && resp->status < 300) {
        return 0;
    }
    snprintf(res->error, sizeof(res->error), "%.*s",
             (int)(resp->body_len < 100 ? resp->body_len : 100), resp->body ? resp->body : "");
    for (char *p = res->error; *p; p++) {
        if ((unsigned char)*p < 0x20) {
            *p = ' ';
        }
    }
    return 1;
}
