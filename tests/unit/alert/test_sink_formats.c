/* The formats of the destinations other than Slack (alert/sink_formats.h):
 * the PagerDuty Events v2 event and the signed webhook's envelope, on every
 * corpus case and on hostile input (a 2 MB log of multi-byte characters,
 * quotes and control characters, absurd names): the bodies parse, keep the
 * service's limits, cut on code-point boundaries and carry no secret; the
 * signature matches an HMAC computed by Python's hmac. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "krc/alert/dest.h"
#include "krc/alert/sink_formats.h"
#include "krc/detect/accel_time.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc_test.h"

#define CORPUS KRC_FIXTURES "/corpus"

/* A corpus case folder (not README.md). */
static int is_case(const char *dir)
{
    char path[1100];
    struct stat st;

    snprintf(path, sizeof(path), "%s/pod.json", dir);
    return stat(path, &st) == 0;
}

static void opts(struct krc_alert_options *fo)
{
    krc_alert_options_init(fo);
    fo->cluster = "prod-eu";
    fo->now = 1780000000;
}

static size_t code_points(const char *s)
{
    return krc_text_utf8_count(s, strlen(s));
}

/* Every PagerDuty rule fakedest checks, on the C side. */
static void check_pd_trigger(const char *body)
{
    cJSON *o = cJSON_Parse(body);
    cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "payload");
    const char *summary = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "summary"));
    const char *sev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "severity"));
    const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "dedup_key"));

    assert_non_null(o);
    assert_true(strlen(body) <= KRC_PD_MAX_PAYLOAD - 1024);
    assert_true(krc_text_utf8_valid(body, strlen(body)));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "event_action")),
                        "trigger");
    assert_null(cJSON_GetObjectItemCaseSensitive(o, "routing_key"));
    assert_non_null(summary);
    assert_true(strlen(summary) > 0 && code_points(summary) <= 1024);
    assert_non_null(key);
    assert_true(strlen(key) > 0 && strlen(key) <= 255);
    assert_non_null(sev);
    assert_true(strcmp(sev, "critical") == 0 || strcmp(sev, "error") == 0 ||
                strcmp(sev, "warning") == 0 || strcmp(sev, "info") == 0);
    assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "source")));
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(p, "custom_details")));
    cJSON_Delete(o);
}

static void test_pagerduty_every_corpus_case(void **state)
{
    DIR *dir = opendir(CORPUS);
    struct dirent *de;
    int cases = 0;

    (void)state;
    assert_non_null(dir);
    while ((de = readdir(dir)) != NULL) {
        char path[1024];
        struct krc_report r;
        struct krc_diagnosis d;
        struct krc_alert_options fo;
        struct krc_error e;
        char *body = NULL;
        char *fallback = (char *)"x";

        snprintf(path, sizeof(path), "%s/%s", CORPUS, de->d_name);
        if (de->d_name[0] == '.' || !is_case(path)) {
            continue;
        }
        krc_test_load_case(path, &r, &d);
        opts(&fo);
        assert_int_equal(krc_pagerduty_format_restart(&r, &d, &fo, &body, &fallback, &e), 0);
        assert_null(fallback);
        check_pd_trigger(body);
        krc_free(body);
        assert_int_equal(krc_webhook_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
        {
            cJSON *o = cJSON_Parse(body);
            assert_non_null(o);
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind")),
                                "restart");
            assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "report")));
            cJSON_Delete(o);
        }
        krc_free(body);
        krc_diagnosis_cleanup(&d);
        krc_report_cleanup(&r);
        cases++;
    }
    closedir(dir);
    assert_true(cases >= 10);
}

/* A hostile report: a 2 MB log of 3-byte characters with quotes, controls
 * and a token; a summary far over 1024 characters; names at their limits. */
static void hostile(struct krc_report *r, struct krc_diagnosis *d)
{
    size_t n = 2 * 1024 * 1024;
    char *log = malloc(n + 1);
    char name[300];
    size_t i = 0;

    assert_non_null(log);
    while (i + 80 < n) {
        /* quotes and backslashes double in JSON: the report passes 256 KB */
        i += (size_t)snprintf(log + i, n + 1 - i,
                              "\xe2\x82\xac\"\"\"\"\"\"\\\\\\\x01 "
                              "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n");
    }
    log[i] = '\0';
    krc_report_init(r);
    krc_diagnosis_init(d);
    memset(name, 'p', 253);
    name[253] = '\0';
    r->namespace = krc_strdup("n-123456789012345678901234567890123456789012345678901234567890");
    r->name = krc_strdup(name);
    assert_int_equal(krc_report_set_log(r, "app", log, i, 0, NULL), 0);
    free(log);
    d->container = krc_strdup("app-container-with-a-rather-long-name-0123456789-0123456789");
    d->cause = KRC_CAUSE_OOM_KILLED;
    d->confidence = KRC_CONFIDENCE_HIGH;
    d->summary = malloc(5001);
    assert_non_null(d->summary);
    for (size_t k = 0; k < 5000; k += 2) {
        memcpy(d->summary + k, "\xc3\xa9", 2); /* é: a cut must not split it */
    }
    d->summary[5000] = '\0';
    d->next_step = krc_strdup("raise the memory limit \"now\"\n\t<script>");
}

static void test_pagerduty_limits_hold_on_huge_input(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options fo;
    struct krc_error e;
    char *body = NULL;
    cJSON *o;
    const char *summary;
    const char *text;

    (void)state;
    hostile(&r, &d);
    opts(&fo);
    assert_int_equal(krc_pagerduty_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    check_pd_trigger(body);
    assert_null(strstr(body, "ghp_abcdefghijklmnopqrstuvwxyz0123456789")); /* redacted */
    o = cJSON_Parse(body);
    summary = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, "payload"), "summary"));
    /* cut at 1024 bytes on a code-point boundary, with an ellipsis */
    assert_true(strlen(summary) <= 1024);
    assert_true(krc_text_utf8_valid(summary, strlen(summary)));
    assert_non_null(strstr(summary, "\xe2\x80\xa6"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(o, "payload"), "severity")),
                        "critical");
    /* the report's log was cut to its end for PagerDuty: valid UTF-8 */
    text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "payload"),
                                                 "custom_details"),
                "report"),
            "log"),
        "text"));
    assert_non_null(text);
    assert_true(strlen(text) <= KRC_PD_LOG_MAX);
    assert_true(krc_text_utf8_valid(text, strlen(text)));
    cJSON_Delete(o);
    krc_free(body);

    /* the webhook keeps the whole (bounded) report, still valid UTF-8 JSON */
    assert_int_equal(krc_webhook_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    assert_true(krc_text_utf8_valid(body, strlen(body)));
    o = cJSON_Parse(body);
    assert_non_null(o);
    assert_null(strstr(body, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    cJSON_Delete(o);
    krc_free(body);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

/* An incident's end as deliver_incident.c fills it: #12 of Deployment shop/api container app
 * (oom_killed), 20 restarts from 03:56 to 04:40 UTC, its first alert's pod `pod`, its latest
 * pod api-7d9c-x2k4p; ready for 10 minutes, or (moved_on) that pod went away. */
static struct krc_alert_recovered resolved_of(const char *pod, int moved_on)
{
    struct krc_alert_recovered rec;

    memset(&rec, 0, sizeof(rec));
    rec.namespace = "shop";
    rec.pod = pod;
    rec.container = "app";
    rec.ready_seconds = moved_on ? 0 : 600;
    rec.incident_id = 12;
    rec.workload_kind = "Deployment";
    rec.workload_name = "api";
    rec.cause = "oom_killed";
    rec.restarts = 20;
    rec.first_at = 1785383760; /* 2026-07-30T03:56:00Z */
    rec.last_at = 1785386400;  /* 04:40 */
    rec.moved_on = moved_on;
    rec.last_pod = "api-7d9c-x2k4p";
    return rec;
}

#define RESOLVED_HEAD                                                                              \
    "Resolved: incident #12 of Deployment shop/api container app (oom_killed), 20 restarts "       \
    "from 03:56 to 04:40 UTC; "
#define RESOLVED_READY RESOLVED_HEAD "the container has run ready for 10m0s in pod api-7d9c-x2k4p."
#define RESOLVED_GONE RESOLVED_HEAD "its last pod api-7d9c-x2k4p went away and no restart followed."

static void test_pagerduty_dedup_key_and_resolve(void **state)
{
    struct krc_alert_options fo;
    struct krc_alert_recovered rec = resolved_of("api-0", 0);
    struct krc_error e;
    char key[256];
    char long_pod[400];
    char *body = NULL;
    char *with = NULL;
    cJSON *o;

    (void)state;
    opts(&fo);
    krc_pagerduty_dedup_key("prod-eu", "shop", "api-0", "app", key, sizeof(key));
    assert_string_equal(key, "krc/prod-eu/shop/api-0/app");
    memset(long_pod, 'x', sizeof(long_pod) - 1);
    long_pod[sizeof(long_pod) - 1] = '\0';
    krc_pagerduty_dedup_key("prod-eu", "shop", long_pod, "app", key, sizeof(key));
    assert_int_equal(strlen(key), 255);

    /* the resolve of the first alert's trigger (its pod's key), whichever form */
    assert_int_equal(krc_pagerduty_format_recovered(&rec, &fo, &body, &e), 0);
    assert_string_equal(body, "{\"event_action\":\"resolve\",\"dedup_key\":\"krc/prod-eu/shop/"
                              "api-0/app\"}");
    krc_free(body);
    rec = resolved_of("api-0", 1);
    assert_int_equal(krc_pagerduty_format_recovered(&rec, &fo, &body, &e), 0);
    assert_string_equal(body, "{\"event_action\":\"resolve\",\"dedup_key\":\"krc/prod-eu/shop/"
                              "api-0/app\"}");
    /* the routing key is added at send time only */
    with = krc_pagerduty_with_key(body, "0123456789abcdef0123456789abcdef", &e);
    assert_non_null(with);
    o = cJSON_Parse(with);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "routing_key")),
                        "0123456789abcdef0123456789abcdef");
    cJSON_Delete(o);
    krc_free(with);
    assert_null(krc_pagerduty_with_key("not json", "k", &e));
    assert_int_equal(e.code, KRC_EPARSE);
    krc_free(body);
}

/* The resolved message each destination sends, in both forms (the container has run ready;
 * its last pod went away): the signed webhook's "resolved" event, Teams' and Google Chat's
 * line (the card's title "Resolved"); a Kubernetes Event has none. PagerDuty's resolve and
 * Slack's reply are checked in test_pagerduty_dedup_key_and_resolve and test_slack_format. */
static void test_resolved_every_destination(void **state)
{
    struct krc_alert_options fo;
    struct krc_error e;
    (void)state;

    opts(&fo);
    for (int gone = 0; gone <= 1; gone++) {
        struct krc_alert_recovered rec = resolved_of("api-0", gone);
        const char *line = gone ? RESOLVED_GONE : RESOLVED_READY;
        char *body = NULL;
        cJSON *o;
        cJSON *r;
        cJSON *x;

        /* the signed webhook: kind "resolved" (docs/report-schema.json) */
        assert_int_equal(krc_webhook_format_recovered(&rec, &fo, &body, &e), 0);
        o = cJSON_Parse(body);
        assert_non_null(o);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind")),
                            "resolved");
        assert_null(cJSON_GetObjectItemCaseSensitive(o, "recovered"));
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "cluster")),
                            "prod-eu");
        r = cJSON_GetObjectItemCaseSensitive(o, "resolved");
        assert_non_null(r);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "summary")),
                            line);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "workload")),
                            "Deployment/api");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "pod")),
                            "api-0");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "first_at")),
                            "2026-07-30T03:56:00Z");
        assert_int_equal(
            (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "incident_id")), 12);
        assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "restarts")),
                         20);
        assert_int_equal(
            (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "ready_seconds")),
            gone ? 0 : 600);
        x = cJSON_GetObjectItemCaseSensitive(r, "moved_on");
        assert_true(gone ? cJSON_IsTrue(x) : cJSON_IsFalse(x));
        cJSON_Delete(o);
        krc_free(body);
        /* Teams: the line as the card's text */
        assert_int_equal(krc_teams_format_recovered(&rec, &fo, &body, &e), 0);
        o = cJSON_Parse(body);
        assert_non_null(o);
        x = cJSON_GetArrayItem(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "attachments"), 0),
                    "content"),
                "body"),
            0);
        assert_string_equal(
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(x, "inlines"), 0), "text")),
            line);
        cJSON_Delete(o);
        krc_free(body);
        /* Google Chat: "Resolved", the line, in the first alert's pod's thread */
        assert_int_equal(krc_gchat_format_recovered(&rec, &fo, &body, &e), 0);
        o = cJSON_Parse(body);
        assert_non_null(o);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "text")),
                            line);
        x = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "cardsV2"), 0), "card"),
            "header");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "title")),
                            "Resolved");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(o, "thread"), "threadKey")),
                            "krc/prod-eu/shop/api-0");
        cJSON_Delete(o);
        krc_free(body);
        /* a Kubernetes Event: none */
        assert_int_equal(
            krc_dest_kind_find("kubernetes-event")->ops->format_recovered(&rec, &fo, &body, &e),
            KRC_EUNSUPPORTED);
        assert_null(body);
    }
}

static void test_summaries(void **state)
{
    struct krc_alert_group nodes[] = {{"node-a", 7, NULL}, {"node-\"b\"", 3, NULL}};
    struct krc_alert_group causes[] = {{"oom_killed", 10, NULL}};
    struct krc_alert_example ex[] = {{"shop", "api-0", "app", "oom_killed", "node-a", 4}};
    struct krc_alert_summary s;
    struct krc_alert_options fo;
    struct krc_error e;
    char *body = NULL;
    cJSON *o;

    (void)state;
    memset(&s, 0, sizeof(s));
    s.restarts = 10;
    s.window_seconds = 30;
    s.by_node = nodes;
    s.n_by_node = 2;
    s.by_cause = causes;
    s.n_by_cause = 1;
    s.examples = ex;
    s.n_examples = 1;
    opts(&fo);
    assert_int_equal(krc_pagerduty_format_summary(&s, &fo, &body, &e), 0);
    check_pd_trigger(body);
    o = cJSON_Parse(body);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "dedup_key")),
                        "krc/prod-eu/storm");
    cJSON_Delete(o);
    krc_free(body);
    assert_int_equal(krc_webhook_format_summary(&s, &fo, &body, &e), 0);
    o = cJSON_Parse(body);
    assert_non_null(o);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind")),
                        "storm_summary");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "sent_at")),
                        "2026-05-28T20:26:40Z");
    cJSON_Delete(o);
    krc_free(body);
}

/* Expected value from Python: hmac.new(b"s3cret", b'1700000000.{"a":"b"}',
 * hashlib.sha256).hexdigest() */
static void test_webhook_signature_matches_python_hmac(void **state)
{
    char sig[65];

    (void)state;
    assert_int_equal(
        krc_webhook_signature("s3cret", 1700000000, "{\"a\":\"b\"}", 9, sig, sizeof(sig)), 0);
    assert_string_equal(sig, "8e3df8df06977f83b77027228b580951a8c82fe1093ad8116177e1ed1951abce");
    assert_int_equal(krc_webhook_signature("s3cret", 1700000000, "{}", 2, sig, 10), KRC_EINVAL);
}

/* Every string of the tree is valid UTF-8. */
static void all_utf8(const cJSON *n)
{
    for (; n != NULL; n = n->next) {
        if (cJSON_IsString(n)) {
            assert_true(krc_text_utf8_valid(n->valuestring, strlen(n->valuestring)));
        }
        all_utf8(n->child);
    }
}

static void test_teams_card_within_28kb_on_huge_input(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options fo;
    struct krc_error e;
    char *body = NULL;
    cJSON *o;
    cJSON *card;

    (void)state;
    hostile(&r, &d);
    opts(&fo);
    assert_int_equal(krc_teams_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    assert_true(strlen(body) <= KRC_TEAMS_MAX_PAYLOAD);
    assert_null(strstr(body, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    o = cJSON_Parse(body);
    assert_non_null(o);
    all_utf8(o);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "type")),
                        "message");
    card = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "attachments"), 0), "content");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(card, "version")),
                        "1.5");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(card, "type")),
                        "AdaptiveCard");
    /* foreign text only in TextRuns (no markdown): the next step's "<script>" is there as text */
    assert_non_null(strstr(body, "\"type\":\"TextRun\",\"text\":\"raise the memory limit"));
    cJSON_Delete(o);
    krc_free(body);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

static void test_gchat_card_escaped_within_limit(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options fo;
    struct krc_alert_recovered rec = resolved_of("api-0", 0);
    struct krc_error e;
    char *body = NULL;
    cJSON *o;
    char key[256];

    (void)state;
    hostile(&r, &d);
    opts(&fo);
    assert_int_equal(krc_gchat_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    assert_true(strlen(body) <= KRC_GCHAT_MAX_PAYLOAD);
    o = cJSON_Parse(body);
    assert_non_null(o);
    all_utf8(o);
    krc_gchat_thread_key("prod-eu", r.namespace, r.name, key, sizeof(key));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(o, "thread"), "threadKey")),
                        key);
    assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "cardsV2"), 0), "cardId")));
    /* HTML is escaped: the next step's <script> cannot become markup */
    assert_null(strstr(body, "<script>"));
    assert_non_null(strstr(body, "&lt;script&gt;"));
    assert_non_null(strstr(body, "&quot;now&quot;"));
    cJSON_Delete(o);
    krc_free(body);

    assert_int_equal(krc_gchat_format_recovered(&rec, &fo, &body, &e), 0);
    o = cJSON_Parse(body);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(o, "thread"), "threadKey")),
                        "krc/prod-eu/shop/api-0");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "text")),
                        RESOLVED_READY);
    cJSON_Delete(o);
    krc_free(body);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

/* GPU time lost: the line every format shares, and the cards' fact. */
static void test_gpu_time_line(void **state)
{
    static const struct {
        int64_t ms;
        const char *want;
    } cases[] = {
        {0, "holds 4 amd.com/gpu; 0 s in back-off so far"},
        {119999, "holds 4 amd.com/gpu; 119 s in back-off so far"},
        {120000, "holds 4 amd.com/gpu; 2 min in back-off so far"},
        {7199000, "holds 4 amd.com/gpu; 119 min in back-off so far"},
        {3 * 3600 * 1000 + 360 * 1000, "holds 4 amd.com/gpu; 3.1 h in back-off so far"},
    };
    struct krc_accel_note note;
    struct krc_alert_options fo;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    char buf[256];
    char *body = NULL;

    (void)state;
    opts(&fo);
    assert_null(krc_alert_accel_text(&fo, buf, sizeof(buf)));
    memset(&note, 0, sizeof(note));
    snprintf(note.resource, sizeof(note.resource), "amd.com/gpu");
    fo.accel = &note;
    assert_null(krc_alert_accel_text(&fo, buf, sizeof(buf))); /* no device */
    note.devices = 4;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        note.lost_ms = cases[i].ms;
        assert_string_equal(krc_alert_accel_text(&fo, buf, sizeof(buf)), cases[i].want);
    }
    hostile(&r, &d);
    note.lost_ms = 14 * 60 * 1000;
    assert_int_equal(krc_teams_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    assert_non_null(strstr(body, "holds 4 amd.com/gpu; 14 min in back-off so far"));
    krc_free(body);
    assert_int_equal(krc_gchat_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    assert_non_null(strstr(body, "holds 4 amd.com/gpu; 14 min in back-off so far"));
    krc_free(body);
    fo.accel = NULL;
    assert_int_equal(krc_teams_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
    assert_null(strstr(body, "in back-off so far"));
    krc_free(body);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

static void test_chat_cards_every_corpus_case(void **state)
{
    DIR *dir = opendir(CORPUS);
    struct dirent *de;

    (void)state;
    assert_non_null(dir);
    while ((de = readdir(dir)) != NULL) {
        char path[1024];
        struct krc_report r;
        struct krc_diagnosis d;
        struct krc_alert_options fo;
        struct krc_error e;
        char *body = NULL;

        snprintf(path, sizeof(path), "%s/%s", CORPUS, de->d_name);
        if (de->d_name[0] == '.' || !is_case(path)) {
            continue;
        }
        krc_test_load_case(path, &r, &d);
        opts(&fo);
        assert_int_equal(krc_teams_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
        assert_true(strlen(body) <= KRC_TEAMS_MAX_PAYLOAD);
        krc_free(body);
        assert_int_equal(krc_gchat_format_restart(&r, &d, &fo, &body, NULL, &e), 0);
        assert_true(strlen(body) <= KRC_GCHAT_MAX_PAYLOAD);
        krc_free(body);
        krc_diagnosis_cleanup(&d);
        krc_report_cleanup(&r);
    }
    closedir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pagerduty_every_corpus_case),
        cmocka_unit_test(test_pagerduty_limits_hold_on_huge_input),
        cmocka_unit_test(test_pagerduty_dedup_key_and_resolve),
        cmocka_unit_test(test_resolved_every_destination),
        cmocka_unit_test(test_summaries),
        cmocka_unit_test(test_webhook_signature_matches_python_hmac),
        cmocka_unit_test(test_teams_card_within_28kb_on_huge_input),
        cmocka_unit_test(test_gchat_card_escaped_within_limit),
        cmocka_unit_test(test_chat_cards_every_corpus_case),
        cmocka_unit_test(test_gpu_time_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
