/* The incident table on its own (alert/incident.h): the key and the cause, the pacing of
 * replies and updates with the time passed in, the bound, and what a reply says differs
 * from the first failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/alert/incident.h"

#define T 1800000000LL

static void test_key_and_cause(void **state)
{
    struct krc_incidents t;
    struct krc_incident *a;
    (void)state;

    assert_int_equal(krc_incidents_init(&t, 8), 0);
    a = krc_incident_open(&t, "shop", "Deployment", "api", "app", KRC_CAUSE_OOM_KILLED, T);
    assert_non_null(a);
    assert_int_equal(a->restarts, 1);
    /* the same workload's container and cause: the same incident, whichever pod */
    assert_ptr_equal(
        krc_incident_match(&t, "shop", "Deployment", "api", "app", KRC_CAUSE_OOM_KILLED), a);
    /* another container, workload, kind or namespace, or another cause: none */
    assert_null(krc_incident_match(&t, "shop", "Deployment", "api", "proxy", KRC_CAUSE_OOM_KILLED));
    assert_null(krc_incident_match(&t, "shop", "Deployment", "web", "app", KRC_CAUSE_OOM_KILLED));
    assert_null(krc_incident_match(&t, "shop", "StatefulSet", "api", "app", KRC_CAUSE_OOM_KILLED));
    assert_null(krc_incident_match(&t, "prod", "Deployment", "api", "app", KRC_CAUSE_OOM_KILLED));
    assert_null(krc_incident_match(&t, "shop", "Deployment", "api", "app", KRC_CAUSE_SEGFAULT));
    /* the first alert's full diagnosis named another cause than the watch's: a repeat whose
     * cheap diagnosis gives the first restart's cheap cause is still the incident's */
    a->cause = KRC_CAUSE_DEPENDENCY_UNREACHABLE;
    a->first_cheap = KRC_CAUSE_APP_ERROR;
    assert_ptr_equal(
        krc_incident_match(&t, "shop", "Deployment", "api", "app", KRC_CAUSE_APP_ERROR), a);
    assert_ptr_equal(krc_incident_match(&t, "shop", "Deployment", "api", "app",
                                        KRC_CAUSE_DEPENDENCY_UNREACHABLE),
                     a);
    /* an ended incident takes no repeat */
    a->ending = 1;
    assert_null(krc_incident_match(&t, "shop", "Deployment", "api", "app",
                                   KRC_CAUSE_DEPENDENCY_UNREACHABLE));
    assert_null(krc_incident_latest(&t, "shop", "Deployment", "api", "app"));
    krc_incidents_cleanup(&t);
}

static void test_pacing(void **state)
{
    struct krc_incidents t;
    struct krc_incident *a;
    (void)state;

    krc_incidents_init(&t, 8);
    a = krc_incident_open(&t, "shop", "Deployment", "api", "app", KRC_CAUSE_OOM_KILLED, T);
    /* the first alert is the last message: nothing due within the intervals */
    krc_incident_count(a, T + 10);
    assert_false(krc_incident_reply_due(a, T + 599, 600));
    assert_false(krc_incident_update_due(a, T + 1799, 1800));
    assert_true(krc_incident_reply_due(a, T + 600, 600));
    krc_incident_count(a, T + 600);
    krc_incident_told(a, 1, T + 600);
    assert_int_equal(a->told_reply, 3);
    assert_int_equal(a->told_update, 1);
    assert_false(krc_incident_reply_due(a, T + 1199, 600));
    assert_true(krc_incident_update_due(a, T + 1800, 1800));
    krc_incident_told(a, 0, T + 1800);
    assert_int_equal(a->told_update, 3);
    assert_false(krc_incident_update_due(a, T + 3599, 1800));
    assert_int_equal(a->restarts, 3);
    assert_true(a->last_at == T + 600);
    krc_incidents_cleanup(&t);
}

static void test_bounded(void **state)
{
    struct krc_incidents t;
    char name[32];
    (void)state;

    krc_incidents_init(&t, 3);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "w%d", i);
        assert_non_null(
            krc_incident_open(&t, "ns", "Deployment", name, "app", KRC_CAUSE_OOM_KILLED, T + i));
    }
    assert_int_equal(t.n, 3);
    /* the oldest last restart went first */
    assert_null(krc_incident_latest(&t, "ns", "Deployment", "w0", "app"));
    assert_null(krc_incident_latest(&t, "ns", "Deployment", "w1", "app"));
    assert_non_null(krc_incident_latest(&t, "ns", "Deployment", "w4", "app"));
    krc_incident_remove(&t, krc_incident_latest(&t, "ns", "Deployment", "w4", "app"));
    assert_int_equal(t.n, 2);
    assert_non_null(krc_incident_latest(&t, "ns", "Deployment", "w2", "app"));
    krc_incidents_cleanup(&t);
}

static void test_differs(void **state)
{
    struct krc_incident_facts a, b;
    char out[512];
    char line[128];
    static const char first_log[] = "starting\nconnecting to db\npanic: out of memory\n";
    static const char log[] = "starting\r\nconnecting to db\nerror: config key missing\npanic\n";
    (void)state;

    memset(&a, 0, sizeof(a));
    a.has_exit_code = 1;
    a.exit_code = 137;
    snprintf(a.reason, sizeof(a.reason), "OOMKilled");
    snprintf(a.node, sizeof(a.node), "node-a");
    a.has_confidence = 1;
    a.confidence = KRC_CONFIDENCE_HIGH;
    b = a;
    krc_incident_differs(&a, &b, NULL, out, sizeof(out));
    assert_string_equal(out, "");
    b.exit_code = 1;
    snprintf(b.reason, sizeof(b.reason), "Error");
    snprintf(b.node, sizeof(b.node), "node-b");
    b.confidence = KRC_CONFIDENCE_MEDIUM;
    krc_incident_log_differs(first_log, log, strlen(log), line, sizeof(line));
    assert_string_equal(line, "error: config key missing");
    krc_incident_differs(&a, &b, line, out, sizeof(out));
    assert_string_equal(out, "exit code 137 \xe2\x86\x92 1; reason OOMKilled \xe2\x86\x92 Error; "
                             "node node-a \xe2\x86\x92 node-b; cause confidence high \xe2\x86\x92 "
                             "medium; log: error: config key missing");
    /* the same lines (a CR at the end aside): nothing differs; no first log: nothing said */
    krc_incident_log_differs(first_log, "panic: out of memory\r\n", 22, line, sizeof(line));
    assert_string_equal(line, "");
    krc_incident_log_differs("", log, strlen(log), line, sizeof(line));
    assert_string_equal(line, "");
    /* an unknown node is not a change */
    b = a;
    b.node[0] = '\0';
    krc_incident_differs(&a, &b, "", out, sizeof(out));
    assert_string_equal(out, "");
}

static void test_headline(void **state)
{
    struct krc_incidents t;
    struct krc_incident *a;
    char out[512];
    (void)state;

    krc_incidents_init(&t, 8);
    a = krc_incident_open(&t, "shop", "Deployment", "api", "app", KRC_CAUSE_OOM_KILLED, T);
    a->id = 12;
    for (int i = 0; i < 19; i++) {
        krc_incident_count(a, T + i);
    }
    krc_incident_headline(a, 19, "exit code 137 \xe2\x86\x92 1", out, sizeof(out));
    assert_non_null(strstr(out, "Incident #12 of Deployment shop/api container app (oom_killed): "
                                "19 more restarts since the last message, 20 since "));
    assert_non_null(strstr(out, "Differs from the first failure: exit code 137"));
    krc_incident_headline(a, 1, "", out, sizeof(out));
    assert_non_null(strstr(out, "1 more restart since"));
    assert_non_null(strstr(out, "The same as the first failure."));
    krc_incidents_cleanup(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_and_cause), cmocka_unit_test(test_pacing),
        cmocka_unit_test(test_bounded),       cmocka_unit_test(test_differs),
        cmocka_unit_test(test_headline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
