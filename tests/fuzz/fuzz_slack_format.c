/* The Slack formatter (alert/dest/slack_format.c, slack_message.c) fed outside bytes. Parts split
 * at FUZZ_SEP: log bytes | pod JSON | events JSON (a pod that does not
 * parse is replaced by a small built-in one, so that most inputs reach the
 * formatter). The first byte picks options (colour bar, log left out, log
 * line count, redaction). The message, blocks and text-only fallback, must
 * be valid JSON within Slack's limits: blocks <= 50, header <= 150, section
 * and context texts <= 3000, fields <= 10 of <= 2000, text <= 4000
 * (UTF-16 units), every text valid UTF-8 without control characters but
 * \n and \t, and no '<' or '>' (no links or mentions from outside bytes). */
#include <cjson/cJSON.h>
#include <string.h>

#include "fuzz.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/slack.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

static const char fallback_pod[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\",\"uid\":\"u1\"},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"app\",\"image\":\"shop:1\"}]},"
    "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\",\"ready\":false,"
    "\"restartCount\":3,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
    "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\","
    "\"startedAt\":\"2026-07-30T08:00:00Z\",\"finishedAt\":\"2026-07-30T08:01:00Z\"}}}]}}";

static size_t u16_units(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xc0) != 0x80) {
            n += *p >= 0xf0 ? 2 : 1;
        }
    }
    return n;
}

static void check_text(const cJSON *t, size_t max)
{
    const char *s;

    FUZZ_CHECK(cJSON_IsObject(t) || cJSON_IsString(t), "text is neither an object nor a string");
    if (cJSON_IsObject(t)) {
        t = cJSON_GetObjectItemCaseSensitive(t, "text");
    }
    FUZZ_CHECK(cJSON_IsString(t), "text object without a text");
    s = t->valuestring;
    FUZZ_CHECK(u16_units(s) <= max, "text of %zu units > %zu", u16_units(s), max);
    FUZZ_CHECK(fuzz_utf8_ok(s, strlen(s)), "text is not UTF-8");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        FUZZ_CHECK(!(*p < 0x20 && *p != '\n' && *p != '\t') && *p != 0x7f,
                   "control character 0x%02x", *p);
        FUZZ_CHECK(*p != '<' && *p != '>', "'%c' in a text", *p);
    }
}

static void check_message(const char *json)
{
    cJSON *root = cJSON_Parse(json);
    const cJSON *blocks;
    const cJSON *atts;
    const cJSON *b;

    FUZZ_CHECK(root != NULL, "not JSON: %.300s", json);
    check_text(cJSON_GetObjectItemCaseSensitive(root, "text"), KRC_SLACK_TEXT_MAX);
    blocks = cJSON_GetObjectItemCaseSensitive(root, "blocks");
    atts = cJSON_GetObjectItemCaseSensitive(root, "attachments");
    if (atts != NULL) {
        FUZZ_CHECK(cJSON_GetArraySize(atts) == 1, "attachments");
        blocks = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(atts, 0), "blocks");
    }
    FUZZ_CHECK(blocks == NULL || cJSON_GetArraySize(blocks) <= KRC_SLACK_MAX_BLOCKS, "%d blocks",
               cJSON_GetArraySize(blocks));
    cJSON_ArrayForEach(b, blocks)
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(b, "type");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "text");
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(b, "fields");
        const cJSON *e;
        FUZZ_CHECK(cJSON_IsString(type), "block without a type");
        if (strcmp(type->valuestring, "header") == 0) {
            check_text(t, KRC_SLACK_HEADER_MAX);
        } else if (t != NULL) {
            check_text(t, KRC_SLACK_SECTION_MAX);
        }
        FUZZ_CHECK(arr == NULL || cJSON_GetArraySize(arr) <= KRC_SLACK_FIELDS_MAX, "fields");
        cJSON_ArrayForEach(e, arr)
        {
            check_text(e, KRC_SLACK_FIELD_MAX);
        }
        arr = cJSON_GetObjectItemCaseSensitive(b, "elements");
        FUZZ_CHECK(arr == NULL || cJSON_GetArraySize(arr) <= KRC_SLACK_CONTEXT_MAX, "elements");
        cJSON_ArrayForEach(e, arr)
        {
            check_text(e, KRC_SLACK_SECTION_MAX);
        }
    }
    cJSON_Delete(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct krc_redactor *rd;
    const uint8_t *parts[3];
    size_t lens[3];
    size_t n;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    struct krc_error err;
    const struct krc_sink_ops *slack = krc_dest_kind_find("slack-webhook")->ops;
    char *json = NULL;
    char *fallback = NULL;

    if (size < 1) {
        return 0;
    }
    if (rd == NULL && krc_redact_new(NULL, 0, &rd, &err) != 0) {
        abort();
    }
    n = fuzz_split(data + 1, size - 1, parts, lens, 3);
    krc_report_init(&r);
    memset(&d, 0, sizeof(d));
    if (n < 2 || krc_kube_parse_pod((const char *)parts[1], lens[1], &r, &err) != 0) {
        if (krc_kube_parse_pod(fallback_pod, sizeof(fallback_pod) - 1, &r, &err) != 0) {
            abort();
        }
    }
    if (n > 2) {
        (void)krc_kube_parse_events((const char *)parts[2], lens[2], &r, &err);
        krc_report_retain_pod_events(&r);
    }
    if (r.n_containers > 0 && lens[0] > 0) {
        (void)krc_report_set_log(&r, r.containers[0].name, parts[0], lens[0], data[0] & 4, &err);
    }
    if (krc_diagnose(&r, NULL, &d, &err) != 0) {
        krc_report_cleanup(&r);
        return 0;
    }
    krc_alert_options_init(&o);
    o.cluster = "prod-<eu>&1";
    o.now = 1785398400;
    o.color_bar = data[0] & 1;
    o.omit_log = (data[0] & 2) != 0 && (data[0] & 8) != 0;
    o.max_log_lines = 1 + (data[0] >> 4) * 7;
    o.redactor = (data[0] & 8) ? NULL : rd;
    /* the Slack sinks' format: the Block Kit message and its text-only fallback */
    FUZZ_CHECK(slack->format_restart(&r, &d, &o, &json, &fallback, &err) == 0, "format: %s",
               err.msg);
    check_message(json);
    check_message(fallback);
    krc_free(json);
    krc_free(fallback);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return 0;
}
