/* Incidents in the route and render stages (issue 27, alert/route.h): the first restart of
 * a workload's container alerts; its repeats, whichever pod, are muted except one reply
 * per incidentReplyInterval in the first alert's thread (destinations with threads) and
 * one update per incidentUpdateInterval (without; none to PagerDuty); a repeat is no storm
 * arrival; another cause is another incident; the open incidents of a history are loaded
 * and continued (their thread, their id). The clock is set by krc_clock_set_fake_now. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/alert/dest.h"
#include "krc/alert/sender.h"
#include "krc/config/destinations.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define HOOK "https://hooks.example.test/services/T1/B1/incidents"
#define T0 1800000000LL

static struct krc_restart mk(const char *pod, int count)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)pod;
    (void)krc_restart_ident_set(&r.ident, pod, "app", count, 0, NULL);
    r.has_exit_code = 1;
    r.exit_code = 137;
    r.reason = (char *)"OOMKilled";
    r.detected_at = krc_clock_now();
    return r;
}

static const struct krc_route_incident API_OOM = {"Deployment", "api", KRC_CAUSE_OOM_KILLED};

/* Render the plan's messages for r (a report naming its pod) and let the incident keep
 * its first alert; returns the rendered decision, the messages in *msg (cleanup: caller). */
static enum krc_policy_decision render(struct krc_sender *n, struct krc_route_plan *plan,
                                       const struct krc_restart *r, struct krc_sender_message *msg)
{
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis dg;
    enum krc_policy_decision d;

    assert_non_null(rep);
    krc_diagnosis_init(&dg);
    rep->namespace = krc_strdup(r->namespace);
    rep->name = krc_strdup(r->pod);
    rep->uid = krc_strdup("0ff65529-fbd4-4921-a586-b69ac8ea1030");
    dg.container = krc_strdup("app");
    dg.cause = KRC_CAUSE_OOM_KILLED;
    dg.has_termination = 1;
    dg.exit_code = 137;
    dg.summary = krc_strdup("Container app was OOM-killed");
    dg.summary_unquoted = krc_strdup("Container app was OOM-killed");
    d = krc_render_restart(plan, r, rep, &dg, krc_clock_now(), msg);
    krc_route_incident_settle(n, plan, r, rep, &dg, d, msg);
    krc_report_free(rep);
    krc_diagnosis_cleanup(&dg);
    return d;
}

static enum krc_policy_decision route(struct krc_sender *n, const char *pod, int count,
                                      const struct krc_route_incident *inc,
                                      struct krc_route_plan *plan)
{
    struct krc_restart r = mk(pod, count);
    return krc_route_restart_in(n, &r, inc, plan);
}

static void test_web_api_replies_paced_in_the_first_thread(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(NULL);
    struct krc_route_plan plan;
    struct krc_sender_message msg;
    struct krc_restart first = mk("api-1", 1);
    struct krc_restart again = mk("api-2", 1);
    struct krc_sender *n;
    char reply[1024], update[1024];
    (void)state;

    o.bot_token = "xoxb-incidents";
    o.channel = "#alerts";
    o.api_url = "https://slack.example.test/api";
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    krc_clock_set_fake_now(T0);
    assert_int_equal(krc_route_restart_in(n, &first, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.repeat, 0);
    assert_int_equal(render(n, &plan, &first, &msg), KRC_POLICY_ALERT);
    assert_string_equal(msg.thread_key, "shop/api-1");
    assert_int_equal(msg.kind, KRC_STORE_KIND_ALERT);
    krc_sender_message_cleanup(&msg);

    /* another pod of the workload (a replacement), within the reply interval: muted */
    krc_clock_set_fake_now(T0 + 599);
    assert_int_equal(krc_route_restart_in(n, &again, &API_OOM, &plan), KRC_POLICY_MUTED);
    assert_int_equal(plan.repeat, 1);
    assert_int_equal(plan.collect, 0);
    /* 10 minutes after the first alert: one reply, in the first alert's thread */
    krc_clock_set_fake_now(T0 + 600);
    again.ident.restart_count = 2;
    assert_int_equal(krc_route_restart_in(n, &again, &API_OOM, &plan), KRC_POLICY_THREAD);
    assert_int_equal(plan.collect, 1);
    assert_string_equal(plan.thread_key, "shop/api-1");
    assert_int_equal(plan.dests[0].reply, 1);
    assert_int_equal(plan.dests[0].held, 0);
    krc_route_incident_headlines(n, &plan, &again, NULL, NULL, reply, update, sizeof(reply));
    assert_non_null(strstr(reply, "Incident of Deployment shop/api container app (oom_killed): "
                                  "2 more restarts since the last message, 3 since "));
    plan.headline_reply = reply;
    plan.headline_update = update;
    assert_int_equal(render(n, &plan, &again, &msg), KRC_POLICY_THREAD);
    assert_int_equal(msg.kind, KRC_STORE_KIND_REPLY);
    assert_string_equal(msg.thread_key, "shop/api-1");
    assert_int_equal(msg.incident, 0); /* a repeat's message does not hold the end back */
    assert_non_null(strstr(msg.body, "2 more restarts since the last message"));
    krc_sender_message_cleanup(&msg);
    /* and then muted again for 10 minutes */
    krc_clock_set_fake_now(T0 + 1199);
    assert_int_equal(route(n, "api-2", 3, &API_OOM, &plan), KRC_POLICY_MUTED);
    assert_int_equal(krc_sender_incidents_open(n), 1);
    krc_clock_set_fake_now(0);
    krc_sender_free(n);
}

/* Two paced repeats routed before the first one's message is rendered (two workers): each
 * message counts the restarts since the message before it, as the route decided it. */
static void test_paced_repeats_keep_their_own_count(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(NULL);
    struct krc_route_plan plan, a, b;
    struct krc_sender_message msg;
    struct krc_restart first = mk("api-1", 1);
    struct krc_restart again = mk("api-2", 1);
    struct krc_sender *n;
    char reply[1024], update[1024];
    (void)state;

    o.bot_token = "xoxb-incidents";
    o.channel = "#alerts";
    o.api_url = "https://slack.example.test/api";
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    krc_clock_set_fake_now(T0);
    assert_int_equal(krc_route_restart_in(n, &first, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(render(n, &plan, &first, &msg), KRC_POLICY_ALERT);
    krc_sender_message_cleanup(&msg);
    krc_clock_set_fake_now(T0 + 1);
    assert_int_equal(krc_route_restart_in(n, &again, &API_OOM, &plan), KRC_POLICY_MUTED);
    /* a: a reply 10 minutes on (2 restarts since the first alert); b: the next reply,
     * routed by another worker before a's message is rendered (1 since a's) */
    krc_clock_set_fake_now(T0 + 600);
    again.ident.restart_count = 2;
    assert_int_equal(krc_route_restart_in(n, &again, &API_OOM, &a), KRC_POLICY_THREAD);
    assert_int_equal(a.replied, 1);
    assert_int_equal(a.since_last_reply, 2);
    krc_clock_set_fake_now(T0 + 1200);
    again.ident.restart_count = 3;
    assert_int_equal(krc_route_restart_in(n, &again, &API_OOM, &b), KRC_POLICY_THREAD);
    assert_int_equal(b.replied, 1);
    assert_int_equal(b.since_last_reply, 1);
    krc_route_incident_headlines(n, &a, &again, NULL, NULL, reply, update, sizeof(reply));
    assert_non_null(strstr(reply, "): 2 more restarts since the last message"));
    krc_route_incident_headlines(n, &b, &again, NULL, NULL, reply, update, sizeof(reply));
    assert_non_null(strstr(reply, "): 1 more restart since the last message"));
    krc_clock_set_fake_now(0);
    krc_sender_free(n);
}

static void test_pagerduty_gets_no_update(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    struct krc_destination pd;
    struct krc_route_plan plan;
    struct krc_sender *n;
    size_t k;
    (void)state;

    memset(&pd, 0, sizeof(pd));
    pd.name = (char *)"oncall";
    pd.kind = &krc_dest_kind_find("pagerduty")->schema;
    pd.url = (char *)"https://events.pagerduty.com/v2/enqueue";
    pd.secret = (char *)"R0UT1NGKEY0123456789012345678901";
    pd.is_default = 1;
    o.destinations = &pd;
    o.n_destinations = 1;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    krc_clock_set_fake_now(T0);
    assert_int_equal(route(n, "api-1", 1, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.n_dests, 2);
    krc_clock_set_fake_now(T0 + 1799);
    assert_int_equal(route(n, "api-1", 2, &API_OOM, &plan), KRC_POLICY_MUTED);
    /* the update is due: the webhook gets it, PagerDuty none (its incident stays triggered) */
    krc_clock_set_fake_now(T0 + 1800);
    assert_int_equal(route(n, "api-1", 3, &API_OOM, &plan), KRC_POLICY_THREAD);
    for (k = 0; k < plan.n_dests; k++) {
        if (strcmp(plan.dests[k].store_key, "dest:oncall") == 0) {
            assert_int_equal(plan.dests[k].held, 1);
        } else {
            assert_int_equal(plan.dests[k].held, 0);
            assert_int_equal(plan.dests[k].reply, 0);
        }
    }
    krc_clock_set_fake_now(0);
    krc_sender_free(n);
}

/* The storm guard counts incidents: a repeat is no arrival; muteSeconds 0 alerts every
 * restart (the Go tool's meaning), each an arrival, recorded as one incident. */
static void test_storm_counts_incidents(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    const struct krc_route_incident web = {"Deployment", "web", KRC_CAUSE_OOM_KILLED};
    const struct krc_route_incident db = {"StatefulSet", "db", KRC_CAUSE_OOM_KILLED};
    struct krc_route_plan plan;
    struct krc_sender *n;
    (void)state;

    o.storm_threshold = 2;
    o.storm_window_s = 30;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(route(n, "api-1", 1, &API_OOM, &plan), KRC_POLICY_ALERT);
    for (int i = 2; i < 8; i++) {
        assert_int_equal(route(n, "api-1", i, &API_OOM, &plan), KRC_POLICY_MUTED);
    }
    assert_int_equal(route(n, "web-1", 1, &web, &plan), KRC_POLICY_ALERT);
    /* the third incident within the window starts the storm */
    assert_int_equal(route(n, "db-0", 1, &db, &plan), KRC_POLICY_GROUPED);
    assert_int_equal(krc_sender_incidents_open(n), 3);
    krc_sender_free(n);

    o.mute_seconds = 0;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(route(n, "api-1", 1, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(route(n, "api-1", 2, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.repeat, 1);
    assert_int_equal(route(n, "api-1", 3, &API_OOM, &plan), KRC_POLICY_GROUPED);
    assert_int_equal(krc_sender_incidents_open(n), 1);
    krc_sender_free(n);
}

/* A repeat whose cheap cause differs is a new incident: alerted (and collected) as a first
 * alert; the container and the workload are part of the key. */
static void test_other_cause_container_or_workload_is_another_incident(void **state)
{
    struct krc_sender_options o = krc_test_sender_options(HOOK);
    const struct krc_route_incident probe = {"Deployment", "api", KRC_CAUSE_LIVENESS_PROBE_FAILED};
    const struct krc_route_incident sts = {"StatefulSet", "api", KRC_CAUSE_OOM_KILLED};
    struct krc_route_plan plan;
    struct krc_restart side = mk("api-1", 1);
    struct krc_sender *n = krc_sender_new(&o, NULL);
    (void)state;

    assert_int_equal(route(n, "api-1", 1, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(route(n, "api-1", 2, &API_OOM, &plan), KRC_POLICY_MUTED);
    assert_int_equal(route(n, "api-1", 3, &probe, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.repeat, 0);
    assert_int_equal(plan.collect, 1);
    assert_int_equal(route(n, "api-1", 4, &sts, &plan), KRC_POLICY_ALERT);
    (void)krc_restart_ident_set(&side.ident, "api-1", "sidecar", 1, 0, NULL);
    assert_int_equal(krc_route_restart_in(n, &side, &API_OOM, &plan), KRC_POLICY_ALERT);
    /* a bare pod (no workload): the pod is the workload */
    assert_int_equal(route(n, "solo", 1, NULL, &plan), KRC_POLICY_ALERT);
    assert_int_equal(route(n, "solo", 2, NULL, &plan), KRC_POLICY_MUTED);
    assert_int_equal(krc_sender_incidents_open(n), 5);
    krc_sender_free(n);
}

/* The open incidents of a history are continued: the same id, the first alert's thread,
 * its count; an ended one is not loaded. */
static void test_load_open_incidents(void **state)
{
    char path[] = "/tmp/krc-test-incident-route-XXXXXX";
    struct krc_sender_options o = krc_test_sender_options(NULL);
    struct krc_store_restart rec;
    struct krc_store_incident_ref ref;
    struct krc_store_outbox ob;
    struct krc_route_plan plan;
    struct krc_store *s = NULL;
    struct krc_sender *n;
    int64_t restart_id = 0, outbox_id = 0, id;
    int fd = mkstemp(path);
    (void)state;

    assert_true(fd >= 0);
    close(fd);
    krc_test_remove_db(path);
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    krc_clock_set_fake_now(T0);
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = "uid-api-1";
    rec.container = "app";
    rec.restart_count = 1;
    rec.namespace = "shop";
    rec.pod = "api-1";
    rec.workload_kind = "Deployment";
    rec.workload_name = "api";
    rec.node = "node-a";
    rec.cause = KRC_CAUSE_OOM_KILLED;
    rec.has_exit_code = 1;
    rec.exit_code = 137;
    rec.reason = "OOMKilled";
    rec.detected_at = T0;
    rec.decision = "alert";
    rec.summary = "Container app was OOM-killed";
    memset(&ref, 0, sizeof(ref));
    ref.thread_key = "shop/api-1";
    rec.incident = &ref;
    memset(&ob, 0, sizeof(ob));
    ob.kind = KRC_STORE_KIND_ALERT;
    ob.destination = "api";
    ob.channel = "#alerts";
    ob.thread_key = "shop/api-1";
    ob.body = "{\"text\":\"first\"}";
    assert_int_equal(krc_store_record_many(s, &rec, &ob, 1, &restart_id, &outbox_id, NULL), 0);
    assert_true(ref.ret_id > 0);

    o.bot_token = "xoxb-incidents";
    o.channel = "#alerts";
    o.api_url = "https://slack.example.test/api";
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_sender_load_incidents(n, s), 1);
    assert_int_equal(krc_sender_load_incidents(n, s), 0); /* known already */
    assert_int_equal(krc_sender_incidents_open(n), 1);
    /* a repeat on a new leader: the same incident, muted, then a reply in its thread */
    krc_clock_set_fake_now(T0 + 60);
    assert_int_equal(route(n, "api-2", 1, &API_OOM, &plan), KRC_POLICY_MUTED);
    assert_int_equal(plan.repeat, 1);
    id = krc_route_incident_id(n, plan.incident);
    assert_int_equal(id, ref.ret_id);
    /* and it is final (recorded): its end is not held back for a record on its way
     * (test_incident_end.c, test_loaded_incident_ends) */
    krc_clock_set_fake_now(T0 + 600);
    assert_int_equal(route(n, "api-2", 2, &API_OOM, &plan), KRC_POLICY_THREAD);
    assert_string_equal(plan.thread_key, "shop/api-1");
    krc_clock_set_fake_now(0);
    krc_sender_free(n);
    krc_store_close(s);
    krc_test_remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_web_api_replies_paced_in_the_first_thread),
        cmocka_unit_test(test_paced_repeats_keep_their_own_count),
        cmocka_unit_test(test_pagerduty_gets_no_update),
        cmocka_unit_test(test_storm_counts_incidents),
        cmocka_unit_test(test_other_cause_container_or_workload_is_another_incident),
        cmocka_unit_test(test_load_open_incidents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
