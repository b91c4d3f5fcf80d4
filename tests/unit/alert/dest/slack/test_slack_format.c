/* slack_format: golden messages for every corpus case (kube_parse +
 * diagnose + format with a fixed `now`), plus property tests: every output
 * parses, respects every Slack budget and escapes everything, whatever the
 * log and events hold (1 MB lines, 10,000 lines, invalid UTF-8, mentions,
 * backticks, 200 events, absurd names).
 *
 * Regenerate the golden files after an intended change with
 *   KRC_UPDATE_GOLDEN=1 build/tests/test_slack_format
 * and review the diff (git diff tests/fixtures/slack/). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "krc/detect/accel_time.h"
#include "krc/util/buf.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"
#include "krc/model/report.h"
#include "krc/alert/dest/slack.h"
#include "krc_test.h"

#define CORPUS KRC_FIXTURES "/corpus"
#define GOLDEN KRC_FIXTURES "/slack"
#define NOW_AFTER 150 /* golden `now`: the diagnosed termination + 2m30s */
#define ELLIPSIS_TEXT "\xe2\x80\xa6"
#define ZWSP_TEXT "\xe2\x80\x8b"
#define BULLET_TEXT "\xe2\x80\xa2"
#define DOT_TEXT " \xc2\xb7 "

/* ---- helpers ---------------------------------------------------------- */

/* ---- the budget and escaping checker ------------------------------------ */

static size_t u16_units(const char *s)
{
    size_t n = 0;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        n += (c & 0xc0) != 0x80;
        n += c >= 0xf0;
    }
    return n;
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        size_t n = *p < 0x80                    ? 1
                   : (*p >= 0xc2 && *p <= 0xdf) ? 2
                   : (*p >= 0xe0 && *p <= 0xef) ? 3
                   : (*p >= 0xf0 && *p <= 0xf4) ? 4
                                                : 0;
        size_t k;
        if (n == 0) {
            return 0;
        }
        for (k = 1; k < n; k++) {
            if ((p[k] & 0xc0) != 0x80) {
                return 0;
            }
        }
        p += n;
    }
    return 1;
}

/* A text shown by Slack: valid UTF-8, no control characters but \n and \t,
 * no < or > at all (we never intend links or mentions), every & an entity,
 * code fences balanced, no run of three backticks inside them. */
static void check_text(const char *s, size_t max_units, int mrkdwn)
{
    const char *p;
    size_t fences = 0;

    assert_non_null(s);
    if (u16_units(s) > max_units) {
        print_error("%zu units > %zu: %.200s...\n", u16_units(s), max_units, s);
    }
    assert_true(u16_units(s) <= max_units);
    assert_true(valid_utf8(s));
    for (p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        assert_false(c < 0x20 && c != '\n' && c != '\t');
        assert_false(c == 0x7f);
        assert_false(c == '<' || c == '>');
        if (mrkdwn && c == '&') {
            assert_true(strncmp(p, "&amp;", 5) == 0 || strncmp(p, "&lt;", 4) == 0 ||
                        strncmp(p, "&gt;", 4) == 0);
        }
    }
    for (p = strstr(s, "```"); p != NULL; p = strstr(p + 3, "```")) {
        fences++;
    }
    if (mrkdwn) {
        /* ours open after a line start or the text start and close before
         * the end or a newline; any other fence would be a log's */
        if (fences % 2 != 0) {
            print_error("unbalanced fences in: %s\n", s);
        }
        assert_int_equal(fences % 2, 0);
    }
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    if (v == NULL) {
        print_error("missing \"%s\"\n", k);
    }
    assert_non_null(v);
    return v;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);

    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void check_text_obj(const cJSON *t, size_t max_units)
{
    const char *type = get_str(t, "type");
    int mrkdwn = strcmp(type, "mrkdwn") == 0;

    assert_true(mrkdwn || strcmp(type, "plain_text") == 0);
    check_text(get_str(t, "text"), max_units, mrkdwn);
}

/* Walk a message body and assert every limit. Returns the blocks array
 * (borrowed from root) or NULL for a text-only message. */
static const cJSON *check_message(const cJSON *root)
{
    const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(root, "blocks");
    const cJSON *atts = cJSON_GetObjectItemCaseSensitive(root, "attachments");
    const cJSON *b;
    char ids[KRC_SLACK_MAX_BLOCKS][KRC_SLACK_BLOCK_ID_MAX + 1];
    size_t n_ids = 0;

    assert_true(cJSON_IsObject(root));
    check_text(get_str(root, "text"), KRC_SLACK_TEXT_MAX, 1);
    if (atts != NULL) {
        assert_null(blocks);
        assert_int_equal(cJSON_GetArraySize(atts), 1);
        assert_true(get_str(cJSON_GetArrayItem(atts, 0), "color")[0] == '#');
        blocks = get(cJSON_GetArrayItem(atts, 0), "blocks");
    }
    if (blocks == NULL) {
        return NULL;
    }
    assert_true(cJSON_IsArray(blocks));
    assert_true(cJSON_GetArraySize(blocks) >= 1);
    assert_true(cJSON_GetArraySize(blocks) <= KRC_SLACK_MAX_BLOCKS);
    cJSON_ArrayForEach(b, blocks)
    {
        const char *type = get_str(b, "type");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "block_id");
        if (id != NULL) {
            size_t k;
            assert_true(cJSON_IsString(id));
            assert_true(strlen(id->valuestring) <= KRC_SLACK_BLOCK_ID_MAX);
            for (k = 0; k < n_ids; k++) {
                assert_string_not_equal(ids[k], id->valuestring);
            }
            snprintf(ids[n_ids++], sizeof(ids[0]), "%s", id->valuestring);
        }
        if (strcmp(type, "header") == 0) {
            assert_string_equal(get_str(get(b, "text"), "type"), "plain_text");
            check_text_obj(get(b, "text"), KRC_SLACK_HEADER_MAX);
        } else if (strcmp(type, "section") == 0) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "text");
            const cJSON *fields = cJSON_GetObjectItemCaseSensitive(b, "fields");
            const cJSON *f;
            assert_true(t != NULL || fields != NULL);
            if (t != NULL) {
                assert_string_equal(get_str(t, "type"), "mrkdwn");
                check_text_obj(t, KRC_SLACK_SECTION_MAX);
            }
            if (fields != NULL) {
                assert_true(cJSON_GetArraySize(fields) >= 1);
                assert_true(cJSON_GetArraySize(fields) <= KRC_SLACK_FIELDS_MAX);
                cJSON_ArrayForEach(f, fields)
                {
                    check_text_obj(f, KRC_SLACK_FIELD_MAX);
                }
            }
        } else if (strcmp(type, "context") == 0) {
            const cJSON *el = get(b, "elements");
            const cJSON *e;
            assert_true(cJSON_GetArraySize(el) >= 1);
            assert_true(cJSON_GetArraySize(el) <= KRC_SLACK_CONTEXT_MAX);
            cJSON_ArrayForEach(e, el)
            {
                check_text_obj(e, KRC_SLACK_SECTION_MAX);
            }
        } else {
            fail_msg("unexpected block type %s", type);
        }
    }
    return blocks;
}

/* All mrkdwn/plain texts of a message joined by newlines (caller frees). */
static char *all_text(const cJSON *root)
{
    struct krc_buf b;
    const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(root, "blocks");
    const cJSON *blk;
    char *s;

    krc_buf_init(&b, 1 << 24);
    assert_int_equal(krc_buf_printf(&b, "%s\n", get_str(root, "text")), 0);
    if (blocks == NULL && cJSON_GetObjectItemCaseSensitive(root, "attachments") != NULL) {
        blocks = get(cJSON_GetArrayItem(get(root, "attachments"), 0), "blocks");
    }
    cJSON_ArrayForEach(blk, blocks)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(blk, "fields");
        const cJSON *e;
        if (arr == NULL) {
            arr = cJSON_GetObjectItemCaseSensitive(blk, "elements");
        }
        if (t != NULL) {
            assert_int_equal(krc_buf_printf(&b, "%s\n", get_str(t, "text")), 0);
        }
        cJSON_ArrayForEach(e, arr)
        {
            assert_int_equal(krc_buf_printf(&b, "%s\n", get_str(e, "text")), 0);
        }
    }
    s = krc_buf_take(&b);
    assert_non_null(s);
    return s;
}

static cJSON *format_ok(const struct krc_report *r, const struct krc_diagnosis *d,
                        const struct krc_alert_options *o, int *ret_redactions)
{
    struct krc_error err;
    char *json = NULL;
    cJSON *root;
    int rc;

    krc_error_clear(&err);
    rc = krc_slack_format_restart(r, d, o, &json, ret_redactions, &err);
    if (rc != 0) {
        print_error("format: %s\n", err.msg);
    }
    assert_int_equal(rc, 0);
    root = cJSON_Parse(json);
    assert_non_null(root);
    krc_free(json);
    check_message(root);
    return root;
}

/* ---- golden files ---------------------------------------------------------- */

static int update_golden(void)
{
    const char *v = getenv("KRC_UPDATE_GOLDEN");

    return v != NULL && strcmp(v, "1") == 0;
}

static void compare_golden(const char *name, const char *json)
{
    char path[1024];
    cJSON *root = cJSON_Parse(json);
    char *pretty;
    char *want;
    size_t len;

    assert_non_null(root);
    pretty = cJSON_Print(root);
    assert_non_null(pretty);
    cJSON_Delete(root);
    snprintf(path, sizeof(path), "%s/%s.json", GOLDEN, name);
    if (update_golden()) {
        FILE *f;
        mkdir(GOLDEN, 0755);
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fprintf(f, "%s\n", pretty) > 0, 1);
        assert_int_equal(fclose(f), 0);
    }
    want = krc_test_read_file(path, &len);
    if (want == NULL) {
        fail_msg("%s missing: run with KRC_UPDATE_GOLDEN=1 to create it", path);
    }
    if (len == 0 || strncmp(want, pretty, len - 1) != 0 || strlen(pretty) != len - 1) {
        print_error("%s differs from the output:\n%s\n(KRC_UPDATE_GOLDEN=1 regenerates it)\n", path,
                    pretty);
        fail();
    }
    free(want);
    cJSON_free(pretty);
}

static void golden_options(struct krc_alert_options *o, const struct krc_diagnosis *d,
                           const struct krc_redactor *rd)
{
    krc_alert_options_init(o);
    o->cluster = "prod-eu";
    o->now = d->finished_at + NOW_AFTER;
    o->redactor = rd;
}

static void test_golden_corpus(void **state)
{
    struct krc_redactor *rd = NULL;
    char **names;
    size_t n = krc_test_case_names(CORPUS, &names);
    size_t i;

    (void)state;
    assert_true(n >= 20);
    assert_int_equal(krc_redact_new(NULL, 0, &rd, NULL), 0);
    for (i = 0; i < n; i++) {
        char dir[1024];
        struct krc_report r;
        struct krc_diagnosis d;
        struct krc_alert_options o;
        char *json = NULL;
        cJSON *root;
        snprintf(dir, sizeof(dir), "%s/%s", CORPUS, names[i]);
        krc_test_load_case(dir, &r, &d);
        golden_options(&o, &d, rd);
        assert_int_equal(krc_slack_format_restart(&r, &d, &o, &json, NULL, NULL), 0);
        root = cJSON_Parse(json);
        assert_non_null(root);
        check_message(root);
        cJSON_Delete(root);
        compare_golden(names[i], json);
        krc_free(json);
        krc_test_unload_case(&r, &d);
        free(names[i]);
    }
    free(names);
    krc_redact_free(rd);
}

/* Web API thread reply with the colour bar, and the text-only fallback. */
static void test_golden_variants(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char *json = NULL;
    cJSON *root;

    (void)state;
    krc_test_load_case(CORPUS "/03-checkout-liveness-503", &r, &d);
    golden_options(&o, &d, NULL);
    o.channel = "C0123ABCD";
    o.thread_ts = "1722325372.001200";
    o.username = "krc";
    o.icon = ":rotating_light:";
    o.color_bar = 1;
    o.max_log_lines = 10;
    assert_int_equal(krc_slack_format_restart(&r, &d, &o, &json, NULL, NULL), 0);
    root = cJSON_Parse(json);
    check_message(root);
    assert_string_equal(get_str(root, "thread_ts"), "1722325372.001200");
    assert_string_equal(get_str(root, "icon_emoji"), ":rotating_light:");
    assert_string_equal(get_str(cJSON_GetArrayItem(get(root, "attachments"), 0), "color"),
                        "#F2A33A");
    cJSON_Delete(root);
    compare_golden("variant-thread-colour", json);
    krc_free(json);

    o.color_bar = 0;
    o.thread_ts = NULL;
    assert_int_equal(krc_slack_format_text_only(&r, &d, &o, &json, NULL, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    cJSON_Delete(root);
    compare_golden("variant-text-only", json);
    krc_free(json);
    krc_test_unload_case(&r, &d);
}

static void test_summary(void **state)
{
    struct krc_alert_group nodes[12];
    struct krc_alert_group causes[] = {
        {"dependency_unreachable", 150, NULL}, {"oom_killed", 20, NULL}, {"app_error", 30, NULL}};
    struct krc_alert_group workloads[] = {{"Deployment shop/web", 180, NULL},
                                          {"StatefulSet shop/db <!here>", 20, NULL}};
    struct krc_alert_example ex[] = {
        {"shop", "web-7d9c-1", "app", "dependency_unreachable", "node-1", 3},
        {"shop", "web-7d9c-2", "app", "dependency_unreachable", "node-2", 1},
        {"shop", "db-0", NULL, NULL, NULL, 1},
    };
    struct krc_alert_summary s;
    struct krc_alert_options o;
    char names[12][16];
    char *json = NULL;
    char *text;
    cJSON *root;
    size_t i;

    (void)state;
    for (i = 0; i < 12; i++) {
        snprintf(names[i], sizeof(names[i]), "node-%02zu", i);
        nodes[i].key = names[i];
        nodes[i].count = i < 2 ? 50 : 10;
        nodes[i].condition = NULL;
    }
    memset(&s, 0, sizeof(s));
    s.restarts = 200;
    s.pods = 180;
    s.window_seconds = 10;
    s.alerted = 3;
    s.by_node = nodes;
    s.n_by_node = 12;
    s.by_cause = causes;
    s.n_by_cause = 3;
    s.by_workload = workloads;
    s.n_by_workload = 2;
    s.examples = ex;
    s.n_examples = 3;
    krc_alert_options_init(&o);
    o.cluster = "prod-eu";
    assert_int_equal(krc_slack_format_summary(&s, &o, &json, NULL), 0);
    root = cJSON_Parse(json);
    check_message(root);
    text = all_text(root);
    assert_non_null(strstr(text, "200 restarts"));
    assert_non_null(strstr(text, "in 10s"));
    /* nothing shared: no "all ..." words, every grouping listed */
    assert_null(strstr(text, "grouped here:"));
    assert_non_null(strstr(text, "*By node*"));
    /* largest first, then "and K more" with the rest of the restarts */
    assert_true(strstr(text, "`dependency_unreachable` 150") < strstr(text, "`app_error` 30"));
    assert_non_null(strstr(text, "and 4 more (40 restarts)"));
    assert_non_null(strstr(text, "db &lt;!here&gt;"));
    krc_free(text);
    cJSON_Delete(root);
    compare_golden("summary", json);
    krc_free(json);
}

/* An incident's end, as deliver_incident.c fills it: the reply in its thread, both forms
 * (the container has run ready; its last pod went away). */
static void test_resolved(void **state)
{
    struct krc_alert_recovered rc;
    struct krc_alert_options o;
    char *json = NULL;
    cJSON *root;

    (void)state;
    memset(&rc, 0, sizeof(rc));
    rc.namespace = "shop";
    rc.pod = "web-7d9c-q8z1m";
    rc.container = "app";
    rc.ready_seconds = 600;
    rc.incident_id = 12;
    rc.workload_kind = "Deployment";
    rc.workload_name = "web";
    rc.cause = "oom_killed";
    rc.restarts = 5;
    rc.first_at = 1785383760; /* 2026-07-30T03:56:00Z */
    rc.last_at = 1785386400;  /* 04:40 */
    rc.last_pod = "web-7d9c-x2k4p";
    krc_alert_options_init(&o);
    o.cluster = "prod-eu";
    o.thread_ts = "1722325372.001200";
    assert_int_equal(krc_slack_format_recovered(&rc, &o, &json, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    assert_string_equal(get_str(root, "text"),
                        ":large_green_circle: [prod-eu] Resolved: incident #12 of Deployment "
                        "shop/web container app (oom_killed), 5 restarts from 03:56 to 04:40 UTC; "
                        "the container has run ready for 10m0s in pod web-7d9c-x2k4p.");
    assert_string_equal(get_str(root, "thread_ts"), "1722325372.001200");
    cJSON_Delete(root);
    compare_golden("resolved", json);
    krc_free(json);
    rc.moved_on = 1;
    rc.ready_seconds = 0;
    rc.restarts = 1;
    rc.incident_id = 0; /* not recorded (no history) */
    assert_int_equal(krc_slack_format_recovered(&rc, &o, &json, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    assert_string_equal(get_str(root, "text"),
                        ":large_green_circle: [prod-eu] Resolved: incident of Deployment "
                        "shop/web container app (oom_killed), 1 restart from 03:56 to 04:40 UTC; "
                        "its last pod web-7d9c-x2k4p went away and no restart followed.");
    cJSON_Delete(root);
    krc_free(json);
}

/* ---- properties ------------------------------------------------------------------------ */

static void set_log(struct krc_report *r, const void *data, size_t len)
{
    assert_int_equal(krc_report_set_log(r, NULL, data, len, 0, NULL), 0);
}

static void add_event(struct krc_report *r, const char *type, const char *reason, const char *msg,
                      int count, int64_t t)
{
    struct krc_report_event *e = krc_report_add_event(r);

    assert_non_null(e);
    e->type = krc_strdup(type);
    e->reason = krc_strdup(reason);
    e->message = krc_strdup(msg);
    e->count = count;
    e->first_timestamp = t;
    e->last_timestamp = t;
    e->object_kind = krc_strdup("Pod");
    e->object_uid = krc_strdup(r->uid);
    e->object_name = krc_strdup(r->name);
    e->object_namespace = krc_strdup(r->namespace);
}

static void test_one_megabyte_line(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    size_t len = 1024 * 1024;
    char *log = malloc(len);
    char *text;
    cJSON *root;
    size_t i;

    (void)state;
    assert_non_null(log);
    for (i = 0; i < len; i++) {
        log[i] = "ab<&`\xc3\xa9"[i % 7]; /* é split at random places: invalid too */
    }
    krc_test_load_case(CORPUS "/15-webhook-relay-typeerror", &r, &d);
    set_log(&r, log, len);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "[line cut]"));
    krc_free(text);
    cJSON_Delete(root);
    free(log);
    krc_test_unload_case(&r, &d);
}

/* Issue 11 item 6: one time stamp per line in a log fetched with
 * timestamps=true, and a cut note that says what was cut. */
static void test_log_stamps_and_cut_note(void **state)
{
    static const char log[] = "2026-07-30T07:43:51.123456789Z 2026-07-30T07:43:51.120Z INFO own\n"
                              "2026-07-30T07:43:52.5Z plain line\n"
                              "2026-07-30T07:43:53.000000001Z fatal: boom\n";
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    struct krc_logtail_cut cut;
    char *text;
    cJSON *root;

    (void)state;
    krc_test_load_case(CORPUS "/15-webhook-relay-typeerror", &r, &d);
    set_log(&r, log, sizeof(log) - 1);
    memset(&cut, 0, sizeof(cut));
    cut.known = 1;
    cut.received = 320000;
    cut.dropped = 320000 - (sizeof(log) - 1);
    krc_report_set_log_cut(&r, &cut);
    r.log_flags |= KRC_REPORT_LOG_TIMESTAMPS;
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "\n2026-07-30T07:43:51.120Z INFO own\n"));
    assert_null(strstr(text, "51.123456789Z"));
    assert_non_null(strstr(text, "\n07:43:52Z plain line\n"));
    assert_non_null(strstr(text, "\n07:43:53Z fatal: boom\n"));
    assert_non_null(strstr(text, "_first 312 KB of the 313 KB read dropped to keep the last "
                                 "142 bytes, from a line start_"));
    assert_null(strstr(text, "older lines are lost"));
    krc_free(text);
    cJSON_Delete(root);

    /* the same log not fetched with timestamps=true is shown as it is */
    r.log_flags &= ~(unsigned)KRC_REPORT_LOG_TIMESTAMPS;
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "\n2026-07-30T07:43:52.5Z plain line\n"));
    krc_free(text);
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

static void test_ten_thousand_lines(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    struct krc_buf b;
    const cJSON *blocks;
    char *text;
    cJSON *root;
    int i;

    (void)state;
    krc_buf_init(&b, 1 << 22);
    for (i = 1; i <= 10000; i++) {
        assert_int_equal(krc_buf_printf(&b,
                                        "2025-01-01T10:00:00Z line %05d of a long log with some "
                                        "padding to make it wider than usual ............\n",
                                        i),
                         0);
    }
    krc_test_load_case(CORPUS "/15-webhook-relay-typeerror", &r, &d);
    set_log(&r, b.data, b.len);
    krc_buf_cleanup(&b);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    blocks = get(root, "blocks");
    text = all_text(root);
    /* the last lines that fit the chat's budget (15 lines, 1400 characters: these lines
     * are 106 characters, so 13 of them): the last line is there, the 13th from the end
     * too, the 14th is not */
    assert_non_null(strstr(text, "line 10000 of"));
    assert_non_null(strstr(text, "line 09988 of"));
    assert_null(strstr(text, "line 09987 of"));
    assert_non_null(strstr(text, "last 13 lines"));
    assert_non_null(strstr(text, "_9987 earlier lines not shown_"));
    krc_free(text);
    assert_true(cJSON_GetArraySize(blocks) <= KRC_SLACK_MAX_BLOCKS);
    cJSON_Delete(root);

    /* more lines than fit: the budget keeps the last ones */
    o.max_log_lines = 1000;
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "line 10000 of"));
    assert_null(strstr(text, "line 09000 of"));
    assert_non_null(strstr(text, "earlier lines not shown"));
    krc_free(text);
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

static void test_hostile_log_and_events(void **state)
{
    static const char log[] =
        "ok line\n"
        "<!channel> <!here> <@U123> <https://evil.example|click> & co\n"
        "```\nclosing the block``` and ````` more\n"
        "\xff\xfe bad \xc3 bytes \xed\xa0\x80 surrogate \x01\x02\x1b[31mred\x1b[0m\n"
        "progress 10%\rprogress 100%\r\n"
        "bidi \xe2\x80\xae reversed\n"
        "tail `";
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char *text;
    cJSON *root;

    (void)state;
    krc_test_load_case(CORPUS "/13-notifier-redis-refused", &r, &d);
    set_log(&r, log, sizeof(log) - 1);
    add_event(&r, "Warning", "BackOff", "<!channel> ``` & <@U999> in an event", 3, d.finished_at);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt;"));
    assert_non_null(strstr(text, "&lt;https://evil.example|click&gt; &amp; co"));
    assert_non_null(strstr(text, "`" ZWSP_TEXT "`" ZWSP_TEXT "`\n"));
    assert_non_null(strstr(text, "\xef\xbf\xbd\xef\xbf\xbd bad \xef\xbf\xbd bytes"));
    assert_non_null(strstr(text, "red\n"));
    assert_non_null(strstr(text, "\nprogress 100%\n"));
    assert_null(strstr(text, "progress 10%"));
    assert_non_null(strstr(text, "bidi  reversed"));
    assert_non_null(strstr(text, "&lt;!channel&gt; `" ZWSP_TEXT "`" ZWSP_TEXT "` &amp; "
                                 "&lt;@U999&gt; in an event"));
    krc_free(text);
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

static void test_many_events(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char msg[600];
    char *text;
    cJSON *root;
    int i;

    (void)state;
    krc_test_load_case(CORPUS "/01-orders-api-oomkilled", &r, &d);
    for (i = 0; i < 200; i++) {
        snprintf(msg, sizeof(msg), "event %03d %.*s", i, 400,
                 "padding padding padding padding padding padding padding padding padding "
                 "padding padding padding padding padding padding padding padding padding "
                 "padding padding padding padding padding padding padding padding padding "
                 "padding padding padding padding padding padding padding padding padding "
                 "padding padding padding padding padding padding padding padding padding "
                 "padding padding padding padding padding padding padding padding padding");
        add_event(&r, i % 2 ? "Warning" : "Normal", i % 3 ? "Unhealthy" : "Pulled", msg, 1,
                  d.finished_at - i);
    }
    /* duplicates are merged with their counts */
    for (i = 0; i < 5; i++) {
        add_event(&r, "Warning", "BackOff", "Back-off restarting failed container", 4,
                  d.finished_at + 100 - i);
    }
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    /* warnings only, newest first, merged with their counts; the kubelet's back-off
     * boilerplate is not shown */
    assert_null(strstr(text, "BackOff"));
    assert_non_null(strstr(text, "*Warning events*\n" BULLET_TEXT " *Unhealthy*" DOT_TEXT
                                 "2m31s ago: event 001 padding"));
    assert_non_null(strstr(text, "more_"));
    assert_null(strstr(text, "event 000 ")); /* a Normal one: never shown */
    krc_free(text);
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

static void test_long_names(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char big[4000];
    const cJSON *hdr;
    const char *h;
    cJSON *root;

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    krc_test_load_case(CORPUS "/01-orders-api-oomkilled", &r, &d);
    krc_free(r.name);
    r.name = krc_strdup(big);
    krc_free(r.namespace);
    r.namespace = krc_strdup("ns-\xe6\x97\xa5\xe6\x9c\xac-<&>");
    golden_options(&o, &d, NULL);
    o.cluster = "a-cluster-name-that-is-quite-long-\xf0\x9f\x9a\x80";
    root = format_ok(&r, &d, &o, NULL);
    hdr = cJSON_GetArrayItem(get(root, "blocks"), 0);
    h = get_str(get(hdr, "text"), "text");
    assert_true(u16_units(h) <= KRC_SLACK_HEADER_MAX);
    assert_true(u16_units(h) >= KRC_SLACK_HEADER_MAX - 2);
    assert_non_null(strstr(h, ELLIPSIS_TEXT));
    assert_non_null(strstr(h, "ns-\xe6\x97\xa5\xe6\x9c\xac-\xe2\x80\xb9&\xe2\x80\xba/xxx"));
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

static void test_gpu_pod(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char *text;
    cJSON *root;

    (void)state;
    krc_test_load_case(CORPUS "/09-llama-finetune-cuda-oom", &r, &d);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    /* the GPUs the pod holds are in the summary: not said again */
    assert_non_null(strstr(d.summary, "1 GPU"));
    assert_null(strstr(text, "*GPUs*"));
    assert_non_null(strstr(text, "nvidia.com/gpu: 1"));
    assert_non_null(strstr(text, "*Node GPUs* 8 of 8 nvidia.com/gpu allocatable"));
    assert_non_null(strstr(text, "GPU out of memory: "));
    assert_non_null(strstr(text, ":red_circle: Container trainer ran out of GPU memory"));
    /* GPU time lost: said only when the restart carries it */
    assert_null(strstr(text, "*GPU time*"));
    krc_free(text);
    cJSON_Delete(root);
    {
        struct krc_accel_note note;
        memset(&note, 0, sizeof(note));
        snprintf(note.resource, sizeof(note.resource), "nvidia.com/gpu");
        note.devices = 8;
        note.lost_ms = 14 * 60 * 1000 + 59 * 1000;
        o.accel = &note;
        root = format_ok(&r, &d, &o, NULL);
        text = all_text(root);
        assert_non_null(
            strstr(text, "*GPU time* holds 8 nvidia.com/gpu; 14 min in back-off so far"));
        krc_free(text);
        cJSON_Delete(root);
        note.devices = 0; /* holds none: no line */
        root = format_ok(&r, &d, &o, NULL);
        text = all_text(root);
        assert_null(strstr(text, "*GPU time*"));
        krc_free(text);
        cJSON_Delete(root);
    }
    krc_test_unload_case(&r, &d);
}

static void test_redaction_is_reported(void **state)
{
    static const char log[] = "connecting to postgres://app:hunter2@db:5432/x\n"
                              "Authorization: Bearer abcdef0123456789\n"
                              "password reset email sent\n";
    struct krc_redactor *rd = NULL;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    int n = -1;
    char *text;
    char *json = NULL;
    cJSON *root;

    (void)state;
    assert_int_equal(krc_redact_new(NULL, 0, &rd, NULL), 0);
    krc_test_load_case(CORPUS "/13-notifier-redis-refused", &r, &d);
    set_log(&r, log, sizeof(log) - 1);
    add_event(&r, "Warning", "Failed",
              "pull failed: token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", 1, d.finished_at);
    golden_options(&o, &d, rd);
    o.redactions_done = 1;
    root = format_ok(&r, &d, &o, &n);
    assert_int_equal(n, 4);
    text = all_text(root);
    assert_null(strstr(text, "hunter2"));
    assert_null(strstr(text, "abcdef0123456789"));
    assert_null(strstr(text, "ghp_"));
    assert_non_null(strstr(text, "password reset email sent"));
    assert_non_null(strstr(text, ":lock: 2 secrets redacted")); /* in the log heading */
    assert_non_null(strstr(text, ":lock: 4 secrets redacted")); /* in the context */
    krc_free(text);
    cJSON_Delete(root);

    /* the text-only fallback says so too, and stays within 4000 */
    assert_int_equal(krc_slack_format_text_only(&r, &d, &o, &json, &n, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    assert_non_null(strstr(get_str(root, "text"), "secrets redacted"));
    assert_null(strstr(get_str(root, "text"), "hunter2"));
    cJSON_Delete(root);
    krc_free(json);
    krc_test_unload_case(&r, &d);
    krc_redact_free(rd);
}

static void test_text_only_budget(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    struct krc_buf b;
    char *json = NULL;
    cJSON *root;
    const char *t;
    int i;

    (void)state;
    krc_buf_init(&b, 1 << 22);
    for (i = 0; i < 300; i++) {
        assert_int_equal(krc_buf_printf(&b, "%d <&> %0400d\n", i, 0), 0);
    }
    krc_test_load_case(CORPUS "/15-webhook-relay-typeerror", &r, &d);
    set_log(&r, b.data, b.len);
    krc_buf_cleanup(&b);
    golden_options(&o, &d, NULL);
    assert_int_equal(krc_slack_format_text_only(&r, &d, &o, &json, NULL, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    t = get_str(root, "text");
    assert_non_null(strstr(t, "299 &lt;&amp;&gt; 000"));
    assert_null(cJSON_GetObjectItemCaseSensitive(root, "blocks"));
    cJSON_Delete(root);
    krc_free(json);
    krc_test_unload_case(&r, &d);
}

/* ---- confidence, next step, commands, what was not checked ------------------- */

static char *xstrdup(const char *s)
{
    char *c = krc_strdup(s);
    assert_non_null(c);
    return c;
}

/* Replace the engine's next step, commands and unchecked list with ours,
 * so that these tests do not depend on what the engine writes. */
static void set_next(struct krc_diagnosis *d, enum krc_confidence conf, const char *next,
                     const char *const *cmds, size_t n_cmds, const char *const *unchecked,
                     size_t n_unchecked)
{
    size_t i;

    krc_free(d->next_step);
    for (i = 0; i < d->n_commands; i++) {
        krc_free(d->commands[i]);
    }
    krc_free(d->commands);
    for (i = 0; i < d->n_unchecked; i++) {
        krc_free(d->unchecked[i]);
    }
    krc_free(d->unchecked);
    d->confidence = conf;
    d->next_step = next != NULL ? xstrdup(next) : NULL;
    d->commands = n_cmds ? krc_calloc(n_cmds, sizeof(char *)) : NULL;
    d->n_commands = n_cmds;
    for (i = 0; i < n_cmds; i++) {
        d->commands[i] = xstrdup(cmds[i]);
    }
    d->unchecked = n_unchecked ? krc_calloc(n_unchecked, sizeof(char *)) : NULL;
    d->n_unchecked = n_unchecked;
    for (i = 0; i < n_unchecked; i++) {
        d->unchecked[i] = xstrdup(unchecked[i]);
    }
}

static void test_next_step_and_commands(void **state)
{
    static const char *const cmds[] = {
        "kubectl logs -n shop orders-api-7c9d8b6f5-x2k4p -c orders-api --previous",
        "kubectl describe node ip-10-42-17-201.ec2.internal",
    };
    static const char *const unchecked[] = {
        "no node was given, so node memory pressure cannot be ruled out",
    };
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char *json = NULL;
    char *text;
    cJSON *root;
    const char *t;

    (void)state;
    krc_test_load_case(CORPUS "/01-orders-api-oomkilled", &r, &d);
    set_next(&d, KRC_CONFIDENCE_HIGH,
             "Raise the memory limit of orders-api above 1Gi or find what grows the heap", cmds, 2,
             unchecked, 1);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    /* the cause once (the header's title; its code is the header's block_id), then the
     * summary and its confidence */
    assert_null(strstr(text, "oom_killed"));
    assert_string_equal(get_str(cJSON_GetArrayItem(get(root, "blocks"), 0), "block_id"),
                        "cause:oom_killed");
    assert_non_null(strstr(text, DOT_TEXT "_confidence: high_"));
    assert_non_null(strstr(text,
                           "*Not checked*\n" BULLET_TEXT
                           " no node was given, so node memory pressure cannot be ruled out"));
    assert_non_null(strstr(text, "*Next step:* Raise the memory limit of orders-api above 1Gi or "
                                 "find what grows the heap\n```\nkubectl logs -n shop "
                                 "orders-api-7c9d8b6f5-x2k4p -c orders-api --previous\n"
                                 "kubectl describe node ip-10-42-17-201.ec2.internal\n```"));
    krc_free(text);
    cJSON_Delete(root);
    assert_int_equal(krc_slack_format_restart(&r, &d, &o, &json, NULL, NULL), 0);
    compare_golden("variant-next-step", json);
    krc_free(json);

    /* the text-only fallback carries them too */
    assert_int_equal(krc_slack_format_text_only(&r, &d, &o, &json, NULL, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    t = get_str(root, "text");
    assert_non_null(strstr(t, "_(confidence: high)_"));
    assert_non_null(strstr(t, BULLET_TEXT " not checked: no node was given"));
    assert_non_null(strstr(t, "*Next step:* Raise the memory limit"));
    assert_non_null(strstr(t, "```\nkubectl logs -n shop"));
    cJSON_Delete(root);
    krc_free(json);

    /* commands alone */
    set_next(&d, KRC_CONFIDENCE_MEDIUM, NULL, cmds, 1, NULL, 0);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "confidence: medium"));
    assert_non_null(strstr(text, "*To look further:*\n```\nkubectl logs"));
    assert_null(strstr(text, "Not checked"));
    krc_free(text);
    cJSON_Delete(root);

    /* nothing: no section */
    set_next(&d, KRC_CONFIDENCE_LOW, NULL, NULL, 0, NULL, 0);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "confidence: low")); /* the message itself is there */
    assert_null(strstr(text, "Next step"));
    assert_null(strstr(text, "To look further"));
    krc_free(text);
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

/* Hostile and oversized next steps, commands and unchecked lines stay inside
 * Slack's limits and escaped (check_message), with "and K more". */
static void test_next_step_budget(void **state)
{
    static const char *cmds[200];
    static const char *unchecked[100];
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char big[3000];
    char *text;
    char *json = NULL;
    cJSON *root;
    size_t i;

    (void)state;
    for (i = 0; i + 1 < sizeof(big); i++) {
        big[i] = "kubectl `` <!channel> & get pod "[i % 32];
    }
    big[sizeof(big) - 1] = '\0';
    for (i = 0; i < 200; i++) {
        cmds[i] = big;
    }
    for (i = 0; i < 100; i++) {
        unchecked[i] = big;
    }
    krc_test_load_case(CORPUS "/08-geo-tiler-segfault", &r, &d);
    set_next(&d, KRC_CONFIDENCE_HIGH, big, cmds, 200, unchecked, 100);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_null(strstr(text, "<!channel>"));
    assert_non_null(strstr(text, "&lt;!channel&gt;"));
    assert_non_null(strstr(text, " more command"));
    assert_non_null(strstr(text, " and 9"));
    krc_free(text);
    cJSON_Delete(root);
    assert_int_equal(krc_slack_format_text_only(&r, &d, &o, &json, NULL, NULL), 0);
    root = cJSON_Parse(json);
    assert_null(check_message(root));
    assert_null(strstr(get_str(root, "text"), "<!channel>"));
    cJSON_Delete(root);
    krc_free(json);
    krc_test_unload_case(&r, &d);
}

static void test_no_log_and_omitted_log(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char *text;
    cJSON *root;

    (void)state;
    krc_test_load_case(CORPUS "/06-thumbnailer-exec-not-found", &r, &d);
    krc_report_clear_log(&r);
    assert_int_equal(krc_report_add_note(&r, "no previous log: %s", "the API answered 400"), 0);
    golden_options(&o, &d, NULL);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    /* a start error ran nothing that could log: the log's absence is not said, nor is
     * the note about it (it changes nothing for the reader) */
    assert_null(strstr(text, "*Previous log*"));
    assert_null(strstr(text, "Collection notes"));
    assert_null(strstr(text, "the API answered 400"));
    krc_free(text);
    cJSON_Delete(root);
    /* a container that ran: its log's absence is said once */
    d.started_at = d.finished_at - 60;
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(strstr(text, "*Previous log*: _not available_"));
    assert_null(strstr(text, "the API answered 400"));
    /* a note that changes what the reader does is shown */
    krc_free(text);
    cJSON_Delete(root);
    assert_int_equal(krc_report_add_note(&r, "pod events unavailable: 403 forbidden"), 0);
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_non_null(
        strstr(text, "*Collection notes*\n" BULLET_TEXT " pod events unavailable: 403 forbidden"));
    assert_null(strstr(text, "the API answered 400"));
    krc_free(text);
    cJSON_Delete(root);

    set_log(&r, "secret line\n", 12);
    o.omit_log = 1;
    root = format_ok(&r, &d, &o, NULL);
    text = all_text(root);
    assert_null(strstr(text, "secret line"));
    assert_non_null(strstr(text, "not included"));
    krc_free(text);
    cJSON_Delete(root);
    krc_test_unload_case(&r, &d);
}

static void test_escape_helper(void **state)
{
    struct krc_buf b;

    (void)state;
    krc_buf_init(&b, 1024);
    assert_int_equal(krc_slack_escape(&b, "a<b>&c```\n\x01\xff", 13, 0), 0);
    assert_string_equal(b.data, "a&lt;b&gt;&amp;c`" ZWSP_TEXT "`" ZWSP_TEXT "` \xef\xbf\xbd");
    assert_int_equal(krc_slack_text_length(b.data, b.len), 23);
    assert_int_equal(krc_slack_text_length("\xf0\x9f\x9a\x80", 4), 2);
    krc_buf_cleanup(&b);
}

/* Every allocation failure is reported as KRC_ENOMEM without leaks. */
static void test_alloc_failures(void **state)
{
    struct krc_redactor *rd = NULL;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    long n;

    (void)state;
    assert_int_equal(krc_redact_new(NULL, 0, &rd, NULL), 0);
    krc_test_load_case(CORPUS "/09-llama-finetune-cuda-oom", &r, &d);
    golden_options(&o, &d, rd);
    for (n = 0; n < 100000; n++) {
        char *json = NULL;
        struct krc_error err;
        long used;
        int rc;
        krc_mem_fail_after(n);
        rc = krc_slack_format_restart(&r, &d, &o, &json, NULL, &err);
        used = krc_mem_fail_after(-1);
        if (rc == 0) {
            krc_free(json);
            assert_true(used <= n);
            break;
        }
        assert_int_equal(rc, KRC_ENOMEM);
        assert_int_equal(err.code, KRC_ENOMEM);
        assert_null(json);
    }
    assert_true(n < 100000);
    krc_test_unload_case(&r, &d);
    krc_redact_free(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_corpus),
        cmocka_unit_test(test_golden_variants),
        cmocka_unit_test(test_next_step_and_commands),
        cmocka_unit_test(test_next_step_budget),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_resolved),
        cmocka_unit_test(test_one_megabyte_line),
        cmocka_unit_test(test_ten_thousand_lines),
        cmocka_unit_test(test_hostile_log_and_events),
        cmocka_unit_test(test_many_events),
        cmocka_unit_test(test_long_names),
        cmocka_unit_test(test_gpu_pod),
        cmocka_unit_test(test_redaction_is_reported),
        cmocka_unit_test(test_text_only_budget),
        cmocka_unit_test(test_no_log_and_omitted_log),
        cmocka_unit_test(test_escape_helper),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_log_stamps_and_cut_note),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
