/* The Kubernetes Event body (alert/kube_event.h): the fields the
 * events.k8s.io/v1 API requires, the 1024-byte note limit on a huge summary,
 * UTF-8 cut on a code point, bad bytes and control characters, JSON
 * escaping, the name as a DNS subdomain, and errors naming the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "krc/alert/kube_event.h"
#include "krc/alert/dest.h"
#include "krc/alert/sink.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

/* 2026-12-03T15:58:00.123456789Z */
#define T_NS (1796313480LL * 1000000000LL + 123456789LL)

static struct krc_kube_event_in base_in(void)
{
    struct krc_kube_event_in in;

    memset(&in, 0, sizeof(in));
    in.namespace = "shop";
    in.pod = "orders-api-7d9f8c6b5-x2x7q";
    in.pod_uid = "0b8f5e0c-3a1e-4a57-9a39-4d1f2f7a6c11";
    in.container = "api";
    in.cause = "oom_killed";
    in.confidence = "high";
    in.summary = "api was killed at its 512Mi memory limit";
    in.reporting_instance = "krc-5b6f7d8c9-abcde";
    in.time_ns = T_NS;
    return in;
}

static cJSON *build(const struct krc_kube_event_in *in)
{
    char *body = NULL;
    struct krc_error e;
    cJSON *j;

    krc_error_clear(&e);
    assert_int_equal(krc_kube_event_build(in, &body, &e), 0);
    assert_non_null(body);
    j = cJSON_Parse(body);
    assert_non_null(j);
    krc_free(body);
    return j;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void test_fields(void **state)
{
    struct krc_kube_event_in in = base_in();
    cJSON *j = build(&in);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(j, "metadata");
    const cJSON *reg = cJSON_GetObjectItemCaseSensitive(j, "regarding");

    (void)state;
    assert_string_equal(str(j, "apiVersion"), "events.k8s.io/v1");
    assert_string_equal(str(j, "kind"), "Event");
    assert_string_equal(str(j, "type"), "Warning");
    assert_string_equal(str(j, "reason"), "RestartDiagnosed");
    assert_string_equal(str(j, "action"), "Diagnose");
    assert_string_equal(str(j, "reportingController"), "krc.io/kube-restart-collector");
    assert_string_equal(str(j, "reportingInstance"), "krc-5b6f7d8c9-abcde");
    assert_string_equal(str(j, "eventTime"), "2026-12-03T15:58:00.123456Z");
    assert_string_equal(str(j, "note"),
                        "oom_killed (high confidence): api was killed at its 512Mi memory limit");
    assert_string_equal(str(md, "namespace"), "shop");
    /* client-go's convention: <object name>.<hex of the time in ns> */
    assert_string_equal(str(md, "name"), "orders-api-7d9f8c6b5-x2x7q.18edc997c8011d15");
    assert_string_equal(str(reg, "kind"), "Pod");
    assert_string_equal(str(reg, "apiVersion"), "v1");
    assert_string_equal(str(reg, "namespace"), "shop");
    assert_string_equal(str(reg, "name"), "orders-api-7d9f8c6b5-x2x7q");
    assert_string_equal(str(reg, "uid"), "0b8f5e0c-3a1e-4a57-9a39-4d1f2f7a6c11");
    assert_string_equal(str(reg, "fieldPath"), "spec.containers{api}");
    cJSON_Delete(j);

    in.container = "migrate";
    in.init_container = 1;
    j = build(&in);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "regarding"), "fieldPath"),
                        "spec.initContainers{migrate}");
    cJSON_Delete(j);

    /* the pod as a whole: no fieldPath; no uid known: none sent */
    in.container = NULL;
    in.pod_uid = NULL;
    in.summary = NULL;
    in.confidence = NULL;
    j = build(&in);
    reg = cJSON_GetObjectItemCaseSensitive(j, "regarding");
    assert_null(cJSON_GetObjectItemCaseSensitive(reg, "fieldPath"));
    assert_null(cJSON_GetObjectItemCaseSensitive(reg, "uid"));
    assert_string_equal(str(j, "note"), "oom_killed");
    cJSON_Delete(j);
}

static void test_note_limit_and_utf8(void **state)
{
    struct krc_kube_event_in in = base_in();
    size_t big = 100000;
    char *summary = malloc(big + 1);
    const char *note;
    size_t n;
    cJSON *j;

    (void)state;
    /* "é" is 2 bytes: after the 30-byte prefix, room for "…" leaves 1021 bytes,
     * and a plain byte cut there would fall inside one */
    for (size_t i = 0; i + 2 <= big; i += 2) {
        summary[i] = (char)0xc3;
        summary[i + 1] = (char)0xa9;
    }
    summary[big] = '\0';
    in.summary = summary;
    j = build(&in);
    note = str(j, "note");
    n = strlen(note);
    assert_true(n <= KRC_KUBE_EVENT_NOTE_MAX);
    assert_true(n > KRC_KUBE_EVENT_NOTE_MAX - 4); /* filled, not emptied */
    assert_true(krc_text_utf8_valid(note, n));
    assert_string_equal(note + n - 3, "\xe2\x80\xa6"); /* "…" says it was cut */
    assert_memory_equal(note, "oom_killed (high confidence): \xc3\xa9", 32);
    assert_int_equal(n, 30 + 2 * 495 + 3);
    cJSON_Delete(j);

    /* 4-byte code points too */
    for (size_t i = 0; i + 4 <= big; i += 4) {
        memcpy(summary + i, "\xf0\x9f\x92\xa5", 4);
    }
    summary[big - big % 4] = '\0';
    j = build(&in);
    note = str(j, "note");
    assert_true(strlen(note) <= KRC_KUBE_EVENT_NOTE_MAX);
    assert_true(krc_text_utf8_valid(note, strlen(note)));
    cJSON_Delete(j);

    /* exactly at the limit: nothing cut */
    memset(summary, 'a', big);
    n = KRC_KUBE_EVENT_NOTE_MAX - strlen("oom_killed (high confidence): ");
    summary[n] = '\0';
    j = build(&in);
    assert_int_equal(strlen(str(j, "note")), KRC_KUBE_EVENT_NOTE_MAX);
    assert_null(strstr(str(j, "note"), "\xe2\x80\xa6"));
    cJSON_Delete(j);
    summary[n] = 'a';
    summary[n + 1] = '\0';
    j = build(&in);
    /* one byte over: cut to 1021 bytes and "…" */
    assert_int_equal(strlen(str(j, "note")), KRC_KUBE_EVENT_NOTE_MAX);
    assert_string_equal(str(j, "note") + KRC_KUBE_EVENT_NOTE_MAX - 4, "a\xe2\x80\xa6");
    cJSON_Delete(j);
    free(summary);
}

static void test_escaping_and_bad_bytes(void **state)
{
    struct krc_kube_event_in in = base_in();
    char *body = NULL;
    struct krc_error e;
    cJSON *j;

    (void)state;
    in.summary = "exit \"1\" at C:\\app\n\tnext line \x01 bad \xff\xfe end </script>";
    krc_error_clear(&e);
    assert_int_equal(krc_kube_event_build(&in, &body, &e), 0);
    /* the raw body is JSON with escapes, no raw control byte */
    for (const char *p = body; *p; p++) {
        assert_true((unsigned char)*p >= 0x20);
    }
    j = cJSON_Parse(body);
    assert_non_null(j);
    assert_string_equal(str(j, "note"), "oom_killed (high confidence): exit \"1\" at C:\\app  "
                                        "next line   bad \xef\xbf\xbd\xef\xbf\xbd end </script>");
    cJSON_Delete(j);
    krc_free(body);
}

static void test_name_is_dns_subdomain(void **state)
{
    struct krc_kube_event_in in = base_in();
    char pod[254];
    const char *name;
    size_t n;
    cJSON *j;

    (void)state;
    /* a 253-character pod name whose cut would end on '-' */
    memset(pod, 'a', 253);
    pod[253] = '\0';
    for (size_t i = 230; i < 240; i++) {
        pod[i] = '-';
    }
    in.pod = pod;
    j = build(&in);
    name = str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name");
    n = strlen(name);
    assert_true(n <= KRC_KUBE_EVENT_NAME_MAX);
    assert_null(strstr(name, "-."));
    assert_string_equal(name + n - 17, ".18edc997c8011d15");
    /* regarding keeps the whole pod name */
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "regarding"), "name"), pod);
    cJSON_Delete(j);
}

/* With the restart known, the name is the restart's: the same in every krc
 * process (time, cause, summary, reportingInstance do not change it), and
 * another for each field of the identity. The value is pinned: a krc that
 * named the same restart differently after an upgrade would write its Event
 * twice. */
static void test_name_from_restart(void **state)
{
    struct krc_kube_event_in in = base_in();
    struct krc_restart_ident id;
    struct krc_restart_ident other;
    char first[KRC_KUBE_EVENT_NAME_MAX + 1];
    char name[KRC_KUBE_EVENT_NAME_MAX + 1];
    char pod[254];
    cJSON *j;

    (void)state;
    assert_int_equal(
        krc_restart_ident_set(&id, in.pod_uid, "api", 3, 1796313480, "containerd://4f1c2a"), 0);
    in.restart = &id;
    j = build(&in);
    /* sha256("krc restart v1\n<uid>\napi\nt1796313480\ncontainerd://4f1c2a\n3") */
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name"),
                        "orders-api-7d9f8c6b5-x2x7q.krc-d4919a9036ad882b");
    snprintf(first, sizeof(first), "%s",
             str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name"));
    cJSON_Delete(j);

    /* another process, later, another diagnosis: the same name */
    in.time_ns += 3600LL * 1000000000LL;
    in.cause = "app_error";
    in.summary = "something else";
    in.reporting_instance = "krc-other";
    j = build(&in);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name"), first);
    cJSON_Delete(j);

    /* each field of the identity makes another restart */
    const struct {
        const char *uid, *container;
        int count;
        int64_t fin;
        const char *cid;
    } others[] = {
        {"1b8f5e0c-3a1e-4a57-9a39-4d1f2f7a6c11", "api", 3, 1796313480, "containerd://4f1c2a"},
        {in.pod_uid, "sidecar", 3, 1796313480, "containerd://4f1c2a"},
        {in.pod_uid, "api", 4, 1796313480, "containerd://4f1c2a"},
        {in.pod_uid, "api", 3, 1796313481, "containerd://4f1c2a"},
        {in.pod_uid, "api", 3, 1796313480, "containerd://4f1c2b"},
        {in.pod_uid, "api", 3, 0, NULL},
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        (void)krc_restart_ident_set(&other, others[i].uid, others[i].container, others[i].count,
                                    others[i].fin, others[i].cid);
        krc_kube_event_restart_name(in.pod, &other, name, sizeof(name));
        assert_string_not_equal(name, first);
        assert_true(strncmp(name, "orders-api-7d9f8c6b5-x2x7q.krc-", 31) == 0);
        assert_int_equal(strlen(name), 31 + 16);
    }
    /* without a finishedAt the count alone is the termination (a container ID
     * left from before does not enter) */
    (void)krc_restart_ident_set(&other, in.pod_uid, "api", 3, 0, NULL);
    krc_kube_event_restart_name(in.pod, &other, first, sizeof(first));
    assert_string_equal(first, "orders-api-7d9f8c6b5-x2x7q.krc-11db711795bf0a45");
    (void)krc_restart_ident_set(&other, in.pod_uid, "api", 3, 0, "containerd://4f1c2a");
    krc_kube_event_restart_name(in.pod, &other, name, sizeof(name));
    assert_string_equal(name, first);

    /* a 253-character pod name: cut, still a DNS subdomain */
    memset(pod, 'a', 253);
    pod[253] = '\0';
    krc_kube_event_restart_name(pod, &id, name, sizeof(name));
    assert_int_equal(strlen(name), KRC_KUBE_EVENT_NAME_MAX);
    assert_string_equal(name + strlen(name) - 21, ".krc-d4919a9036ad882b");
    pod[231] = '.'; /* a cut that would end on this '.': it goes too */
    krc_kube_event_restart_name(pod, &id, name, sizeof(name));
    assert_null(strstr(name, ".."));
    assert_int_equal(strlen(name), KRC_KUBE_EVENT_NAME_MAX - 1);

    /* an identity without a uid: the name from the time, as client-go's */
    in = base_in();
    (void)krc_restart_ident_set(&other, "", "api", 3, 1796313480, NULL);
    in.restart = &other;
    j = build(&in);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name"),
                        "orders-api-7d9f8c6b5-x2x7q.18edc997c8011d15");
    cJSON_Delete(j);
}

static void test_missing_fields(void **state)
{
    struct krc_kube_event_in in = base_in();
    char *body = (char *)"untouched";
    char longname[200];
    struct krc_error e;

    (void)state;
    in.namespace = "";
    krc_error_clear(&e);
    assert_int_equal(krc_kube_event_build(&in, &body, &e), KRC_EINVAL);
    assert_null(body);
    assert_non_null(strstr(e.msg, "namespace"));
    in = base_in();
    in.pod = NULL;
    assert_int_equal(krc_kube_event_build(&in, &body, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "pod"));
    in = base_in();
    in.reporting_instance = "";
    assert_int_equal(krc_kube_event_build(&in, &body, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "reportingInstance"));
    memset(longname, 'k', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    in.reporting_instance = longname;
    assert_int_equal(krc_kube_event_build(&in, &body, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "128"));
}

static void test_namespace_of_body(void **state)
{
    struct krc_kube_event_in in = base_in();
    char *body = NULL;
    char ns[64];
    struct krc_error e;

    (void)state;
    krc_error_clear(&e);
    assert_int_equal(krc_kube_event_build(&in, &body, &e), 0);
    assert_int_equal(krc_kube_event_namespace(body, ns, sizeof(ns), &e), 0);
    assert_string_equal(ns, "shop");
    krc_free(body);
    assert_int_equal(krc_kube_event_namespace("{\"metadata\":{}}", ns, sizeof(ns), &e), KRC_EPARSE);
    assert_int_equal(krc_kube_event_namespace("not json", ns, sizeof(ns), &e), KRC_EPARSE);
}

/* The sink's format: the report's pod, the diagnosed container (an init
 * container's field path), and the summary redacted like every text krc
 * sends. */
static void test_sink_format_restart(void **state)
{
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis dg;
    struct krc_report_container *c;
    struct krc_alert_options fo;
    struct krc_error e;
    char *body = NULL;
    char *fallback = (char *)"untouched";
    cJSON *j;
    const char *note;

    (void)state;
    assert_non_null(rep);
    rep->namespace = krc_strdup("shop");
    rep->name = krc_strdup("orders-0");
    rep->uid = krc_strdup("uid-1");
    c = krc_report_add_container(rep);
    c->name = krc_strdup("migrate");
    c->is_init = 1;
    krc_diagnosis_init(&dg);
    dg.container = krc_strdup("migrate");
    dg.cause = KRC_CAUSE_UNKNOWN;
    dg.confidence = KRC_CONFIDENCE_LOW;
    /* the note carries the summary without the log text it quotes; that one
     * is still redacted (its words could be anyone's) */
    dg.summary = krc_strdup("Container migrate exited with code 1; the log ends with: "
                            "LOG-LINE-SENTINEL connecting to postgres://app:hunter2@db failed");
    dg.summary_unquoted =
        krc_strdup("connecting to postgres://app:hunter2@db.internal:5432/orders failed");
    krc_alert_options_init(&fo);
    setenv("POD_NAME", "krc-abc", 1);
    krc_error_clear(&e);
    assert_int_equal(krc_dest_kind_find("kubernetes-event")
                         ->ops->format_restart(rep, &dg, &fo, &body, &fallback, &e),
                     0);
    assert_null(fallback);
    assert_null(strstr(body, "hunter2"));
    assert_null(strstr(body, "LOG-LINE-SENTINEL"));
    j = cJSON_Parse(body);
    assert_non_null(j);
    note = str(j, "note");
    assert_non_null(strstr(note, "[REDACTED]"));
    assert_non_null(strstr(note, "(low confidence): connecting to postgres://"));
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "regarding"), "fieldPath"),
                        "spec.initContainers{migrate}");
    assert_string_equal(str(j, "reportingInstance"), "krc-abc");
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "namespace"), "shop");
    cJSON_Delete(j);
    krc_free(body);
    /* a summary with terminal escapes: the note has its text, not the
     * escapes (neither the ESC nor the rest of the sequence) */
    krc_free(dg.summary_unquoted);
    dg.summary_unquoted = krc_strdup("log says \x1b[31mFATAL\x1b[0m: disk full");
    assert_int_equal(krc_dest_kind_find("kubernetes-event")
                         ->ops->format_restart(rep, &dg, &fo, &body, &fallback, &e),
                     0);
    j = cJSON_Parse(body);
    assert_non_null(j);
    assert_non_null(strstr(str(j, "note"), "(low confidence): log says FATAL: disk full"));
    cJSON_Delete(j);
    krc_free(body);
    /* the name: the detected restart's (render.c passes it) ... */
    {
        struct krc_restart_ident id;
        char want[KRC_KUBE_EVENT_NAME_MAX + 1];
        (void)krc_restart_ident_set(&id, "uid-1", "migrate", 2, 1796313480, "cri-o://77");
        krc_kube_event_restart_name("orders-0", &id, want, sizeof(want));
        fo.restart = &id;
        assert_int_equal(krc_dest_kind_find("kubernetes-event")
                             ->ops->format_restart(rep, &dg, &fo, &body, &fallback, &e),
                         0);
        j = cJSON_Parse(body);
        assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name"), want);
        cJSON_Delete(j);
        krc_free(body);
        /* ... else the report's last termination of the diagnosed container */
        fo.restart = NULL;
        c->has_status = 1;
        c->restart_count = 2;
        c->last.present = 1;
        c->last.finished_at = 1796313480;
        c->last.container_id = krc_strdup("cri-o://77");
        assert_int_equal(krc_dest_kind_find("kubernetes-event")
                             ->ops->format_restart(rep, &dg, &fo, &body, &fallback, &e),
                         0);
        j = cJSON_Parse(body);
        assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "name"), want);
        assert_true(strncmp(want, "orders-0.krc-", 13) == 0);
        cJSON_Delete(j);
        krc_free(body);
    }
    /* an Event is about one pod: no storm summary, no replies */
    assert_int_equal(
        krc_dest_kind_find("kubernetes-event")->ops->format_summary(NULL, &fo, &body, &e),
        KRC_EUNSUPPORTED);
    assert_null(body);
    unsetenv("POD_NAME");
    krc_diagnosis_cleanup(&dg);
    krc_report_free(rep);
}

static void test_sink_needs_a_client(void **state)
{
    struct krc_sink_options o;
    struct krc_error e;

    (void)state;
    krc_sink_options_defaults(&o);
    krc_error_clear(&e);
    assert_null(krc_dest_kind_find("kubernetes-event")->ops->create(&o, NULL, &e));
    assert_int_equal(e.code, KRC_EINVAL);
    assert_string_equal(krc_dest_kind_find("kubernetes-event")->ops->name, "kubernetes-event");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_note_limit_and_utf8),
        cmocka_unit_test(test_escaping_and_bad_bytes),
        cmocka_unit_test(test_name_is_dns_subdomain),
        cmocka_unit_test(test_name_from_restart),
        cmocka_unit_test(test_missing_fields),
        cmocka_unit_test(test_namespace_of_body),
        cmocka_unit_test(test_sink_format_restart),
        cmocka_unit_test(test_sink_needs_a_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
