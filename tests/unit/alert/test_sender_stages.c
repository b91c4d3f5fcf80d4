/* The alert stages as the pipeline enters them, once each: the route
 * stage's ignore rules (krc_route_ignored) and plan, render reading only
 * the plan (the same plan renders the same messages and changes nothing in
 * the sender), deliver counting what render decided, and a storm that
 * began between route and deliver (another worker's restart) withdrawing
 * the message into its summary. The sender loop is not run: its queue and
 * counters are observed directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/alert/sender.h"
#include "krc/config/config.h"
#include "krc/detect/pod_state.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/util/pattern.h"
#include "krc_test.h"

#define HOOK "https://hooks.example.test/services/T1/B1/stages"

static struct krc_restart mk(const char *pod)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)pod;
    (void)krc_restart_ident_set(&r.ident, "uid-stages", "app", 0, 0, NULL);
    r.ident.restart_count = 1;
    r.has_exit_code = 1;
    r.exit_code = 1;
    return r;
}

/* A collected restart: an empty report (with `log` as its previous log when
 * not NULL) and a fresh diagnosis, both owned by the caller until deliver. */
static void collected(const char *log, struct krc_report **rep, struct krc_diagnosis **dg)
{
    *rep = krc_report_new();
    *dg = krc_calloc(1, sizeof(**dg));
    assert_non_null(*rep);
    assert_non_null(*dg);
    krc_diagnosis_init(*dg);
    (*rep)->namespace = krc_strdup("shop");
    (*rep)->name = krc_strdup("web-1");
    (*rep)->uid = krc_strdup("0ff65529-fbd4-4921-a586-b69ac8ea1030");
    (*dg)->container = krc_strdup("app");
    (*dg)->summary = krc_strdup("Container app exited with code 1 after 3s; 1 restart");
    if (log != NULL) {
        assert_int_equal(krc_report_set_log(*rep, "app", log, strlen(log), 0, NULL), 0);
    }
}

static void test_route_ignored(void **state)
{
    struct krc_config cfg;
    struct krc_container_info c[2];
    struct krc_pod_info pod;
    struct krc_restart_delta d;
    (void)state;

    memset(&cfg, 0, sizeof(cfg));
    memset(c, 0, sizeof(c));
    memset(&pod, 0, sizeof(pod));
    cfg.ignore_restart_count = 5;
    c[0].name = "app";
    c[0].restart_count = 3;
    c[0].has_last_terminated = 1;
    c[0].last_exit_code = 0;
    c[1].name = "init";
    c[1].is_init = 1;
    c[1].restart_count = 9; /* init containers do not count toward the pod's total */
    pod.namespace = "shop";
    pod.name = "web-1";
    pod.containers = c;
    pod.n_containers = 2;
    d.pod = &pod;
    d.container = &c[0];
    d.previous_count = 2;
    d.missed = 0;

    assert_null(krc_route_ignored(&cfg, &d));
    cfg.ignore_restarts_with_exit_code_zero = 1;
    assert_string_equal(krc_route_ignored(&cfg, &d),
                        "restart ignored: exit code 0 (IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO)");
    c[0].last_exit_code = 137;
    assert_null(krc_route_ignored(&cfg, &d));
    c[0].restart_count = 6;
    assert_string_equal(krc_route_ignored(&cfg, &d),
                        "restart ignored: pod restart count exceeds IGNORE_RESTART_COUNT");
    pod.ignore = 1;
    assert_string_equal(krc_route_ignored(&cfg, &d),
                        "restart ignored: pod has annotation krc.io/ignore=true");
}

/* One route call answers what the worker needs; render reads only the plan
 * (twice the same messages, nothing queued, nothing counted); deliver
 * queues one message per destination, or nothing when told not to post. */
static void test_plan_render_deliver(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    struct krc_restart r = mk("web-1");
    struct krc_route_plan plan;
    struct krc_sender_message m1;
    struct krc_sender_message m2;
    struct krc_report *rep;
    struct krc_diagnosis *dg;
    struct krc_sender *n;
    (void)state;

    o.kubernetes_events = 1;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_route_restart_in(n, &r, NULL, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.decision, KRC_POLICY_ALERT);
    assert_true(plan.collect);
    assert_false(plan.wants_full_log); /* an incoming webhook has no thread for a file */
    assert_int_equal(plan.n_dests, 2);
    assert_string_equal(plan.dests[0].store_key, "webhook:default");
    assert_string_equal(plan.dests[1].store_key, "dest:kubernetes-event");
    assert_true(plan.dests[1].is_event);
    assert_false(plan.dests[0].storming);

    collected("panic: boom\n", &rep, &dg);
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m1), KRC_POLICY_ALERT);
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m2), KRC_POLICY_ALERT);
    assert_non_null(m1.body);
    assert_non_null(m1.next);
    assert_null(m1.next->next);
    assert_string_equal(m1.body, m2.body);
    assert_string_equal(m1.next->body, m2.next->body);
    assert_string_equal(m1.next->what, "Kubernetes Event for shop/web-1 container app (unknown)");
    assert_int_equal(krc_sender_pending(n), 0);
    assert_int_equal(krc_sender_stats(n)->failed, 0);
    krc_sender_message_cleanup(&m2);

    /* the Lease was lost (or the restart was recorded already): not queued */
    krc_deliver_restart(n, &plan, &r, &m1, NULL, 0, rep, dg, NULL, 0);
    assert_null(m1.body);
    assert_int_equal(krc_sender_pending(n), 0);

    /* a second restart (the mute per pod makes it muted: nothing rendered) */
    assert_int_equal(krc_route_restart_in(n, &r, NULL, &plan), KRC_POLICY_MUTED);
    assert_false(plan.collect);
    collected(NULL, &rep, &dg);
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m1), KRC_POLICY_MUTED);
    assert_null(m1.body);
    krc_deliver_restart(n, &plan, &r, &m1, NULL, 1, rep, dg, NULL, 0);
    assert_int_equal(krc_sender_pending(n), 0);
    assert_int_equal(krc_sender_stats(n)->muted, 1);

    /* another pod: both messages queued, one per destination's lane */
    r = mk("web-2");
    assert_int_equal(krc_route_restart_in(n, &r, NULL, &plan), KRC_POLICY_ALERT);
    collected("panic: boom\n", &rep, &dg);
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m1), KRC_POLICY_ALERT);
    krc_deliver_restart(n, &plan, &r, &m1, NULL, 1, rep, dg, NULL, 0);
    assert_int_equal(krc_sender_pending(n), 2);
    krc_sender_free(n);
}

/* Render holds back an alert or reply whose diagnosis is intentional
 * (decision intentional, no message, nothing queued or counted as sent),
 * unless the plan says they are paged; a decision that posts nothing stays
 * as it was. */
static void test_intentional_held_back_by_render(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    struct krc_restart r = mk("retry-0");
    struct krc_route_plan plan;
    struct krc_sender_message m;
    struct krc_report *rep;
    struct krc_diagnosis *dg;
    struct krc_sender *n;
    (void)state;

    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_route_restart_in(n, &r, NULL, &plan), KRC_POLICY_ALERT);
    assert_false(plan.page_intentional); /* held back unless the caller says otherwise */
    collected("panic: boom\n", &rep, &dg);
    dg->intentional = 1;
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m),
                     KRC_POLICY_INTENTIONAL);
    assert_null(m.body);
    assert_int_equal(m.decision, KRC_POLICY_INTENTIONAL);
    plan.page_intentional = 1;
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m), KRC_POLICY_ALERT);
    assert_non_null(m.body);
    krc_sender_message_cleanup(&m);
    plan.page_intentional = 0;
    plan.decision = KRC_POLICY_MUTED;
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m), KRC_POLICY_MUTED);
    plan.decision = KRC_POLICY_INTENTIONAL;
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m),
                     KRC_POLICY_INTENTIONAL);
    krc_deliver_restart(n, &plan, &r, &m, NULL, 1, rep, dg, NULL, 0);
    assert_int_equal(krc_sender_pending(n), 0);
    assert_int_equal(krc_sender_stats(n)->alerts_sent, 0);
    assert_int_equal(krc_sender_stats(n)->muted, 0);
    krc_sender_free(n);
}

/* A log-ignore pattern silences at render (it needs the log); render
 * counts nothing, deliver counts it once. */
static void test_log_ignore_counted_by_deliver(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    struct krc_restart r = mk("web-1");
    struct krc_route_plan plan;
    struct krc_sender_message m;
    struct krc_pattern re;
    struct krc_report *rep;
    struct krc_diagnosis *dg;
    struct krc_sender *n;
    (void)state;

    assert_int_equal(krc_pattern_compile(&re, "expected shutdown", KRC_PATTERN_TEXT,
                                         KRC_PATTERN_NEWLINE, "logIgnorePatterns", NULL),
                     0);
    o.log_ignore = &re;
    o.n_log_ignore = 1;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_route_restart_in(n, &r, NULL, &plan), KRC_POLICY_ALERT);
    collected("x\nan expected shutdown\n", &rep, &dg);
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, 1800000000, &m), KRC_POLICY_SILENCED);
    assert_null(m.body);
    assert_int_equal(krc_sender_stats(n)->log_ignored, 0);
    krc_deliver_restart(n, &plan, &r, &m, NULL, 1, rep, dg, NULL, 0);
    assert_int_equal(krc_sender_stats(n)->log_ignored, 1);
    assert_int_equal(krc_sender_stats(n)->silenced, 0);
    assert_int_equal(krc_sender_pending(n), 0);
    krc_sender_free(n);
    krc_pattern_cleanup(&re);
}

/* A storm that another worker's restart started between this restart's
 * route and its deliver: the message is withdrawn into the summary (queued
 * as withdrawn only so that its lane settles its outbox row), as the alerts
 * queued when the storm began are. */
static void test_storm_begun_after_routing(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    struct krc_restart a = mk("web-a");
    struct krc_restart others[3] = {mk("web-b"), mk("web-c"), mk("web-d")};
    struct krc_route_plan plan;
    struct krc_route_plan other_plan;
    struct krc_sender_message m;
    struct krc_report *rep;
    struct krc_diagnosis *dg;
    struct krc_sender *n;
    (void)state;

    o.mute_seconds = 0;
    o.storm_threshold = 3;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_route_restart_in(n, &a, NULL, &plan), KRC_POLICY_ALERT);
    assert_int_equal(krc_route_restart_in(n, &others[0], NULL, &other_plan), KRC_POLICY_ALERT);
    assert_int_equal(krc_route_restart_in(n, &others[1], NULL, &other_plan), KRC_POLICY_ALERT);
    /* the fourth arrival within the window starts the storm */
    assert_int_equal(krc_route_restart_in(n, &others[2], NULL, &other_plan), KRC_POLICY_GROUPED);
    assert_int_equal(krc_sender_stats(n)->grouped, 0); /* nothing was queued to withdraw */
    collected("panic: boom\n", &rep, &dg);
    assert_int_equal(krc_render_restart(&plan, &a, rep, dg, 1800000000, &m), KRC_POLICY_ALERT);
    assert_non_null(m.body);
    krc_deliver_restart(n, &plan, &a, &m, NULL, 1, rep, dg, NULL, 0);
    assert_int_equal(krc_sender_stats(n)->grouped, 1);
    assert_int_equal(krc_sender_pending(n), 1);
    krc_sender_free(n); /* frees the withdrawn item */
}

/* A sandbox change is alerted once per pod: the first of its restarts
 * passes, the pod's other containers stopped with it (within
 * KRC_ROUTE_SANDBOX_SECONDS) are answered "alerted already" with the
 * container that was, and counted muted; another pod, or the same pod's
 * next change later, passes again. The memory is bounded. */
static void test_sandbox_change_alerted_once(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    struct krc_restart r = mk("api-0");
    char who[KRC_RESTART_IDENT_CONTAINER_MAX] = "";
    char uid[64];
    struct krc_sender *n;
    (void)state;

    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    (void)krc_restart_ident_set(&r.ident, "uid-sandbox", "api", 1, 1800000000, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    (void)krc_restart_ident_set(&r.ident, "uid-sandbox", "envoy", 1, 1800000002, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 1);
    assert_string_equal(who, "api");
    (void)krc_restart_ident_set(&r.ident, "uid-sandbox", "log-shipper", 1,
                                1800000000 - KRC_ROUTE_SANDBOX_SECONDS, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 1);
    assert_int_equal(krc_sender_stats(n)->muted, 2);
    /* another pod's change at the same time */
    (void)krc_restart_ident_set(&r.ident, "uid-other", "api", 1, 1800000000, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    /* the same pod's next change, later */
    (void)krc_restart_ident_set(&r.ident, "uid-sandbox", "envoy", 2,
                                1800000002 + KRC_ROUTE_SANDBOX_SECONDS + 1, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    /* without a uid the change cannot be told: never held back */
    (void)krc_restart_ident_set(&r.ident, "", "api", 1, 1800000000, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    assert_int_equal(krc_sender_stats(n)->muted, 2);
    /* bounded: many pods' changes later, the oldest is forgotten, the newest kept */
    for (int i = 0; i < 300; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        (void)krc_restart_ident_set(&r.ident, uid, "api", 1, 1800001000 + i, NULL);
        assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    }
    for (int i = 300 - 256; i < 300; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        (void)krc_restart_ident_set(&r.ident, uid, "envoy", 1, 1800001000 + i, NULL);
        assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 1);
    }
    (void)krc_restart_ident_set(&r.ident, "uid-sandbox", "envoy", 1, 1800000002, NULL);
    assert_int_equal(krc_route_sandbox_alerted(n, &r, who, sizeof(who)), 0);
    krc_sender_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_ignored),
        cmocka_unit_test(test_plan_render_deliver),
        cmocka_unit_test(test_intentional_held_back_by_render),
        cmocka_unit_test(test_log_ignore_counted_by_deliver),
        cmocka_unit_test(test_storm_begun_after_routing),
        cmocka_unit_test(test_sandbox_change_alerted_once),
    };
    krc_clock_set_fake_now(1800000000);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
