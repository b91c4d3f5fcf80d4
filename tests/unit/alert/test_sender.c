/* The sender on its own: what its route stage decides for a restart (routes, mute, silences,
 * log-ignore, the storm guard, as the policy says and with the policy's memory) and queues; then,
 * with a fake sink, its delivery: one thread per destination (a destination held by a 429's wait
 * does not hold another), retries, exactly-once marking in a temporary store, the callbacks; and
 * the Slack sinks' shared delivery loop (sink_send.c) with a fake POST: pacing per connection and
 * target, 429 Retry-After, the plain-text fallback, final 4xx and bounded retries of 5xx. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/alert/dest.h"
#include "krc/alert/sender.h"
#include "krc/alert/sink.h"
#include "krc/alert/sink_send.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "fake_sink.h"
#include "krc_test.h"

#define HOOK_SLOW "fake://slow"  /* each send waits 1.5 s, as for a 429's Retry-After */
#define HOOK_FAST "fake://fast"  /* accepted at once */
#define HOOK_FAIL "fake://fail"  /* a transient failure (the sink gave up its retries) */
#define HOOK_REJECT "fake://bad" /* a final 4xx */
#define SLOW_MS 1500

/* --- deciding and queueing (the sender loop is not run: decisions and the queue are observed
 * directly) ----------------------------------------------------------------------------------- */

#define HOOK_A "https://hooks.example.test/services/T1/B1/aaaa"
#define HOOK_B "https://hooks.example.test/services/T1/B2/bbbb"

static struct krc_restart mk_restart(const char *ns, const char *pod, const char *container,
                                     const char *channel)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)ns;
    r.pod = (char *)pod;
    (void)krc_restart_ident_set(&r.ident, "uid-1", container, 0, 0, NULL);
    r.slack_channel = (char *)channel;
    r.ident.restart_count = 1;
    r.has_exit_code = 1;
    r.exit_code = 1;
    return r;
}

static struct krc_sender_options base_options(void)
{
    return krc_test_sender_options(HOOK_A);
}

/* The plan of the restart routed last (decide). */
static struct krc_route_plan last_plan;

/* The route stage's decision for r (its plan in last_plan). */
static enum krc_policy_decision decide(struct krc_sender *n, const struct krc_restart *r)
{
    enum krc_policy_decision d = krc_route_restart_in(n, r, NULL, &last_plan);
    assert_int_equal(last_plan.decision, d);
    return d;
}

/* Hand over a collected restart with an empty report as the pipeline does:
 * render with the plan decide() made for it (decision d), then deliver
 * (ownership moves). */
static enum krc_policy_decision hand_over(struct krc_sender *n, const struct krc_restart *r,
                                          enum krc_policy_decision d, const char *log)
{
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_sender_message msg;
    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    if (log != NULL) {
        assert_int_equal(krc_report_set_log(rep, r->ident.container, log, strlen(log), 0, NULL), 0);
    }
    assert_int_equal(last_plan.decision, d);
    d = krc_render_restart(&last_plan, r, rep, dg, krc_clock_now(), &msg);
    krc_deliver_restart(n, &last_plan, r, &msg, NULL, 1, rep, dg, NULL, 0);
    return d;
}

static void pat(struct krc_pattern *p, const char *text, enum krc_pattern_field f)
{
    assert_int_equal(krc_pattern_compile(p, text, f, 0, "test", NULL), 0);
}

static void test_no_destination(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_sender *n;
    struct krc_restart r = mk_restart("shop", "web-1", "app", NULL);
    (void)state;

    o.webhook_url = NULL;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_false(krc_sender_has_destination(n));
    assert_int_equal(decide(n, &r), KRC_POLICY_NO_DESTINATION);
    assert_int_equal(hand_over(n, &r, KRC_POLICY_NO_DESTINATION, NULL), KRC_POLICY_NO_DESTINATION);
    assert_int_equal(krc_sender_pending(n), 0);
    krc_sender_free(n);
}

/* Muting acts on incidents (issue 27; was the mute per pod): a repeat of the same
 * container of the same pod (its workload: here a bare pod) is muted; another container of
 * the same pod is an incident of its own and alerted (the Go tool's mute per pod held it
 * back); another pod is alerted. muteSeconds 0: every restart is alerted. */
static void test_mute_per_pod(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_sender *n = krc_sender_new(&o, NULL);
    struct krc_restart a = mk_restart("shop", "web-1", "app", NULL);
    struct krc_restart a2 = mk_restart("shop", "web-1", "sidecar", NULL);
    struct krc_restart b = mk_restart("shop", "web-2", "app", NULL);
    (void)state;

    assert_non_null(n);
    assert_int_equal(decide(n, &a), KRC_POLICY_ALERT);
    assert_int_equal(last_plan.repeat, 0);
    assert_int_equal(decide(n, &a), KRC_POLICY_MUTED);
    assert_int_equal(last_plan.repeat, 1);
    assert_int_equal(decide(n, &a2), KRC_POLICY_ALERT);
    assert_int_equal(decide(n, &a2), KRC_POLICY_MUTED);
    assert_int_equal(decide(n, &b), KRC_POLICY_ALERT);
    assert_int_equal(krc_sender_stats(n)->muted, 2);
    assert_int_equal(krc_sender_incidents_open(n), 3);
    krc_sender_free(n);

    o.mute_seconds = 0;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(decide(n, &a), KRC_POLICY_ALERT);
    assert_int_equal(decide(n, &a), KRC_POLICY_ALERT);
    /* recorded as one incident all the same */
    assert_int_equal(last_plan.repeat, 1);
    assert_int_equal(krc_sender_incidents_open(n), 1);
    krc_sender_free(n);
}

/* An open incident's repeats are paced (issue 27; was: the mute per pod expired after
 * muteSeconds): a destination without threads (this webhook) gets one update per
 * incidentUpdateInterval (30m), its repeats in between are muted, whatever muteSeconds. */
static void test_mute_expires(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_sender *n = krc_sender_new(&o, NULL);
    struct krc_restart a = mk_restart("shop", "web-1", "app", NULL);
    int64_t t0 = 1800000000;
    (void)state;

    krc_clock_set_fake_now(t0);
    assert_int_equal(decide(n, &a), KRC_POLICY_ALERT);
    krc_clock_set_fake_now(t0 + 599);
    assert_int_equal(decide(n, &a), KRC_POLICY_MUTED);
    krc_clock_set_fake_now(t0 + 600);
    assert_int_equal(decide(n, &a), KRC_POLICY_MUTED);
    krc_clock_set_fake_now(t0 + 1800);
    assert_int_equal(decide(n, &a), KRC_POLICY_THREAD); /* the update */
    assert_int_equal(last_plan.n_dests, 1);
    assert_int_equal(last_plan.dests[0].held, 0);
    assert_int_equal(last_plan.dests[0].reply, 0); /* a message of its own, no thread */
    krc_clock_set_fake_now(t0 + 1801);
    assert_int_equal(decide(n, &a), KRC_POLICY_MUTED);
    krc_clock_set_fake_now(t0 + 3599);
    assert_int_equal(decide(n, &a), KRC_POLICY_MUTED);
    krc_clock_set_fake_now(t0 + 3600);
    assert_int_equal(decide(n, &a), KRC_POLICY_THREAD);
    krc_clock_set_fake_now(0);
    krc_sender_free(n);
}

static void test_routes_and_channel_annotation(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_route routes[2];
    struct krc_sender *n;
    (void)state;

    memset(routes, 0, sizeof(routes));
    pat(&routes[0].namespace, "^team-(a|b)$", KRC_PATTERN_NAMESPACE);
    routes[0].webhook_url = (char *)HOOK_B;
    pat(&routes[1].pod, "pay", KRC_PATTERN_POD);
    routes[1].channel = (char *)"#payments";
    o.routes = routes;
    o.n_routes = 2;
    o.mute_seconds = 0;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    {
        struct krc_restart r1 = mk_restart("team-a", "web-1", "app", NULL);
        struct krc_restart r2 = mk_restart("shop", "payments-1", "app", NULL);
        struct krc_restart r3 = mk_restart("team-c", "web-1", "app", "#ops");
        assert_int_equal(decide(n, &r1), KRC_POLICY_ALERT);
        assert_int_equal(decide(n, &r2), KRC_POLICY_ALERT);
        assert_int_equal(decide(n, &r3), KRC_POLICY_ALERT);
    }
    krc_sender_free(n);
    krc_pattern_cleanup(&routes[0].namespace);
    krc_pattern_cleanup(&routes[1].pod);
}

static void test_web_api_needs_channel(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_sender *n;
    struct krc_restart r = mk_restart("shop", "web-1", "app", NULL);
    struct krc_restart annotated = mk_restart("shop", "web-2", "app", "#team");
    (void)state;

    o.webhook_url = NULL;
    o.bot_token = "xoxb-test-token-123";
    n = krc_sender_new(&o, NULL);
    assert_false(krc_sender_has_destination(n));
    assert_int_equal(decide(n, &r), KRC_POLICY_NO_DESTINATION);
    assert_false(last_plan.wants_full_log); /* nothing to post it to */
    /* a pod's own alert-slack-channel is a destination in Web API mode */
    assert_int_equal(decide(n, &annotated), KRC_POLICY_ALERT);
    assert_true(last_plan.wants_full_log); /* Web API mode: the log file for the thread */
    krc_sender_free(n);
}

static void test_silences(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_silence s[2];
    struct krc_sender *n;
    struct krc_restart maint = mk_restart("maint", "job-1", "app", NULL);
    struct krc_restart other = mk_restart("shop", "web-1", "app", NULL);
    struct krc_restart night = mk_restart("batch", "etl-1", "app", NULL);
    int64_t day = 1800000000 - 1800000000 % 86400; /* 00:00 UTC */
    (void)state;

    memset(s, 0, sizeof(s));
    pat(&s[0].namespace, "maint", KRC_PATTERN_NAMESPACE);
    s[0].start = day + 3600;
    s[0].end = day + 7200;
    pat(&s[1].namespace, "batch", KRC_PATTERN_NAMESPACE);
    s[1].daily_from = 22 * 60;
    s[1].daily_to = 6 * 60;
    o.silences = s;
    o.n_silences = 2;
    o.mute_seconds = 0;
    n = krc_sender_new(&o, NULL);

    krc_clock_set_fake_now(day + 3600 + 5);
    assert_int_equal(decide(n, &maint), KRC_POLICY_SILENCED);
    assert_int_equal(decide(n, &other), KRC_POLICY_ALERT);
    krc_clock_set_fake_now(day + 7200); /* end is exclusive */
    assert_int_equal(decide(n, &maint), KRC_POLICY_ALERT);
    krc_clock_set_fake_now(day + 23 * 3600); /* 23:00: inside 22:00-06:00 */
    assert_int_equal(decide(n, &night), KRC_POLICY_SILENCED);
    krc_clock_set_fake_now(day + 5 * 3600 + 59 * 60); /* 05:59 */
    assert_int_equal(decide(n, &night), KRC_POLICY_SILENCED);
    krc_clock_set_fake_now(day + 12 * 3600); /* noon */
    assert_int_equal(decide(n, &night), KRC_POLICY_ALERT);
    krc_clock_set_fake_now(0);
    assert_int_equal(krc_sender_stats(n)->silenced, 3);
    krc_sender_free(n);
    krc_pattern_cleanup(&s[0].namespace);
    krc_pattern_cleanup(&s[1].namespace);
}

static void test_log_ignore(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_pattern re;
    struct krc_sender *n;
    struct krc_restart r1 = mk_restart("shop", "web-1", "app", NULL);
    struct krc_restart r2 = mk_restart("shop", "web-2", "app", NULL);
    (void)state;

    assert_int_equal(krc_pattern_compile(&re, "expected shutdown", KRC_PATTERN_TEXT,
                                         KRC_PATTERN_NEWLINE, "logIgnorePatterns", NULL),
                     0);
    o.log_ignore = &re;
    o.n_log_ignore = 1;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(decide(n, &r1), KRC_POLICY_ALERT);
    assert_int_equal(hand_over(n, &r1, KRC_POLICY_ALERT, "x\nthis was an expected shutdown\n"),
                     KRC_POLICY_SILENCED);
    assert_int_equal(krc_sender_stats(n)->log_ignored, 1);
    assert_int_equal(decide(n, &r2), KRC_POLICY_ALERT);
    assert_int_equal(hand_over(n, &r2, KRC_POLICY_ALERT, "panic: boom\n"), KRC_POLICY_ALERT);
    assert_int_equal(krc_sender_pending(n), 1);
    krc_sender_free(n); /* frees the queued alert */
    krc_pattern_cleanup(&re);
}

static void test_storm_groups_and_withdraws(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_sender *n;
    char names[10][32];
    struct krc_restart r[10];
    (void)state;

    o.storm_threshold = 3;
    o.mute_seconds = 0;
    n = krc_sender_new(&o, NULL);
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof(names[i]), "web-%d", i);
        r[i] = mk_restart("shop", names[i], "app", NULL);
    }
    /* three arrivals: alerts, queued (the sender is not running) */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(decide(n, &r[i]), KRC_POLICY_ALERT);
        assert_int_equal(hand_over(n, &r[i], KRC_POLICY_ALERT, NULL), KRC_POLICY_ALERT);
    }
    assert_int_equal(krc_sender_pending(n), 3);
    /* the fourth within the window starts the storm: queued alerts are withdrawn; they stay
     * queued (as withdrawn) only so that the sender settles their outbox rows */
    assert_int_equal(decide(n, &r[3]), KRC_POLICY_GROUPED);
    assert_int_equal(krc_sender_pending(n), 3);
    assert_int_equal(krc_sender_stats(n)->grouped, 3);
    for (int i = 4; i < 10; i++) {
        assert_int_equal(decide(n, &r[i]), KRC_POLICY_GROUPED);
        assert_int_equal(hand_over(n, &r[i], KRC_POLICY_GROUPED, NULL), KRC_POLICY_GROUPED);
    }
    assert_int_equal(krc_sender_stats(n)->grouped, 9);
    krc_sender_free(n);
}

static void test_storm_is_per_destination(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_route rt;
    struct krc_sender *n;
    struct krc_restart a[5];
    char names[5][32];
    struct krc_restart other = mk_restart("team-b", "api-1", "app", NULL);
    (void)state;

    memset(&rt, 0, sizeof(rt));
    pat(&rt.namespace, "team-b", KRC_PATTERN_NAMESPACE);
    rt.webhook_url = (char *)HOOK_B;
    o.routes = &rt;
    o.n_routes = 1;
    o.storm_threshold = 3;
    o.mute_seconds = 0;
    n = krc_sender_new(&o, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(names[i], sizeof(names[i]), "w-%d", i);
        a[i] = mk_restart("shop", names[i], "app", NULL);
        decide(n, &a[i]);
    }
    assert_int_equal(decide(n, &a[0]), KRC_POLICY_GROUPED);
    assert_int_equal(decide(n, &other), KRC_POLICY_ALERT);
    krc_sender_free(n);
    krc_pattern_cleanup(&rt.namespace);
}

/* --- the Kubernetes Event destination (kubernetesEvents) -------------------------- */

/* The destinations of one restart, as render chains them: "A,B,...". */
static enum krc_policy_decision prepared(struct krc_sender *n, const struct krc_restart *r,
                                         char *dests, size_t dsz, char *what, size_t wsz)
{
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis dg;
    struct krc_sender_message msg;
    enum krc_policy_decision d;

    assert_non_null(rep);
    krc_diagnosis_init(&dg);
    rep->namespace = krc_strdup(r->namespace);
    rep->name = krc_strdup(r->pod);
    rep->uid = krc_strdup("0ff65529-fbd4-4921-a586-b69ac8ea1030");
    dg.container = krc_strdup(r->ident.container);
    dg.summary = krc_strdup("Container app exited with code 1 after 3s; 1 restart");
    decide(n, r);
    d = krc_render_restart(&last_plan, r, rep, &dg, krc_clock_now(), &msg);
    dests[0] = '\0';
    what[0] = '\0';
    for (struct krc_sender_message *m = msg.body != NULL ? &msg : NULL; m != NULL; m = m->next) {
        snprintf(dests + strlen(dests), dsz - strlen(dests), "%s%s", dests[0] ? "," : "",
                 m->destination);
        assert_int_equal(m->kind, KRC_STORE_KIND_ALERT);
        if (strncmp(m->destination, "dest:kubernetes-event", 21) == 0 ||
            strcmp(m->destination, "dest:cluster") == 0) {
            snprintf(what, wsz, "%s", m->what);
            assert_non_null(strstr(m->body, "\"reason\":\"RestartDiagnosed\""));
        }
    }
    krc_sender_message_cleanup(&msg);
    krc_report_free(rep);
    krc_diagnosis_cleanup(&dg);
    return d;
}

static void test_kubernetes_event_destination(void **state)
{
    struct krc_sender_options o = base_options();
    struct krc_destination dest[1];
    struct krc_restart r = mk_restart("shop", "web-1", "app", NULL);
    struct krc_restart q = mk_restart("shop", "web-2", "app", NULL);
    struct krc_error e;
    struct krc_sender *n;
    char dests[256];
    char what[300];
    (void)state;

    /* implicit: every restart, beside Slack, after it */
    o.kubernetes_events = 1;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(prepared(n, &r, dests, sizeof(dests), what, sizeof(what)), KRC_POLICY_ALERT);
    assert_string_equal(dests, "webhook:default,dest:kubernetes-event");
    assert_string_equal(what, "Kubernetes Event for shop/web-1 container app (unknown)");
    krc_sender_free(n);

    /* without Slack the Event alone; it is not "a destination to post to" */
    o.webhook_url = NULL;
    n = krc_sender_new(&o, NULL);
    assert_false(krc_sender_has_destination(n));
    assert_int_equal(prepared(n, &r, dests, sizeof(dests), what, sizeof(what)), KRC_POLICY_ALERT);
    assert_string_equal(dests, "dest:kubernetes-event");
    /* the mute per pod applies to it */
    assert_int_equal(decide(n, &r), KRC_POLICY_MUTED);
    krc_sender_free(n);

    /* its own storm state: the Event alone in a storm groups the restart */
    o.mute_seconds = 0;
    o.storm_threshold = 1;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(decide(n, &r), KRC_POLICY_ALERT);
    assert_int_equal(decide(n, &q), KRC_POLICY_GROUPED);
    krc_sender_free(n);
    o.storm_threshold = 0;

    /* off: nothing */
    o.kubernetes_events = 0;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(decide(n, &r), KRC_POLICY_NO_DESTINATION);
    krc_sender_free(n);

    /* a declared one replaces the implicit one: routed (here: default), never two */
    memset(dest, 0, sizeof(dest));
    dest[0].name = (char *)"cluster";
    dest[0].kind = &krc_dest_kind_find("kubernetes-event")->schema;
    dest[0].line = 3;
    o.destinations = dest;
    o.n_destinations = 1;
    o.webhook_url = HOOK_A;
    o.kubernetes_events = 1;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(prepared(n, &r, dests, sizeof(dests), what, sizeof(what)), KRC_POLICY_ALERT);
    assert_string_equal(dests, "webhook:default");
    krc_sender_free(n);
    dest[0].is_default = 1;
    n = krc_sender_new(&o, NULL);
    assert_int_equal(prepared(n, &r, dests, sizeof(dests), what, sizeof(what)), KRC_POLICY_ALERT);
    assert_string_equal(dests, "webhook:default,dest:cluster");
    assert_string_equal(what, "Kubernetes Event for shop/web-1 container app (unknown) to cluster");
    krc_sender_free(n);

    /* declared while kubernetesEvents is false: refused, naming it */
    o.kubernetes_events = 0;
    krc_error_clear(&e);
    assert_null(krc_sender_new(&o, &e));
    assert_non_null(strstr(e.msg, "destination cluster (line 3): type kubernetes-event needs "
                                  "kubernetesEvents: true"));

    /* another type may not take the implicit one's name */
    dest[0].name = (char *)"kubernetes-event";
    dest[0].kind = &krc_dest_kind_find("teams")->schema;
    dest[0].url = (char *)"https://teams.example.test/x";
    o.kubernetes_events = 1;
    krc_error_clear(&e);
    assert_null(krc_sender_new(&o, &e));
    assert_non_null(strstr(e.msg, "the name is the Kubernetes Event destination's"));
    o.kubernetes_events = 0;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n); /* with Events off the name is free */
    krc_sender_free(n);
}

/* --- the fake sink ----------------------------------------------------------- */

struct fake_send {
    char target[64];
    int64_t start_ms;
    int64_t end_ms;
    char ts[64]; /* what an accepted send answered */
};

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_send fk_sends[64];
static size_t fk_n;

static const struct krc_sink_ops fake_ops;

struct fake_sink {
    struct krc_sink base;
    char target[64];
    const atomic_int *cancel;
};

static struct krc_sink *fk_create(const struct krc_sink_options *o, const char *target,
                                  struct krc_error *err)
{
    struct fake_sink *f = krc_calloc(1, sizeof(*f));
    (void)err;
    assert_non_null(f);
    f->base.ops = &fake_ops;
    f->base.limits.max_payload = 1 << 20;
    snprintf(f->target, sizeof(f->target), "%s", target != NULL ? target : "api");
    f->cancel = o->cancel;
    return &f->base;
}

static int fk_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err)
{
    (void)rec;
    (void)fo;
    (void)err;
    *ret_body = krc_strdup("{\"text\":\"recovered\"}");
    return *ret_body != NULL ? 0 : KRC_ENOMEM;
}

static int fk_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    struct fake_sink *f = (struct fake_sink *)s;
    size_t i;
    int rc = 0;

    (void)m;
    pthread_mutex_lock(&fk_lock);
    i = fk_n < 64 ? fk_n++ : 63;
    snprintf(fk_sends[i].target, sizeof(fk_sends[i].target), "%s", f->target);
    fk_sends[i].start_ms = krc_clock_mono_ms();
    pthread_mutex_unlock(&fk_lock);
    memset(res, 0, sizeof(*res));
    res->attempts = 1;
    if (strcmp(f->target, HOOK_SLOW) == 0) {
        res->rate_limited = 1;
        res->attempts = 2;
        if (krc_clock_sleep_ms(SLOW_MS, f->cancel)) {
            rc = krc_error_set(err, KRC_ECANCELED, "canceled");
        }
    } else if (strcmp(f->target, HOOK_FAIL) == 0) {
        res->http_status = 503;
        rc = krc_error_set(err, KRC_EHTTP, "gave up after 8 attempts: 503");
    } else if (strcmp(f->target, HOOK_REJECT) == 0) {
        res->http_status = 404;
        rc = krc_error_set(err, KRC_EHTTP, "answered 404 no_service");
    }
    if (rc == 0) {
        snprintf(res->ts, sizeof(res->ts), "1700000000.%06zu", i);
    }
    pthread_mutex_lock(&fk_lock);
    fk_sends[i].end_ms = krc_clock_mono_ms();
    snprintf(fk_sends[i].ts, sizeof(fk_sends[i].ts), "%s", res->ts);
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

static void fk_free(struct krc_sink *s)
{
    krc_free(s);
}

static const struct krc_sink_ops fake_ops = {
    .name = "fake",
    .create = fk_create,
    .format_restart = krc_test_sink_format_restart,
    .format_summary = krc_test_sink_format_summary,
    .format_recovered = fk_format_recovered,
    .send = fk_send,
    .upload = NULL,
    .free = fk_free,
};

static void fk_reset(void)
{
    pthread_mutex_lock(&fk_lock);
    fk_n = 0;
    memset(fk_sends, 0, sizeof(fk_sends));
    pthread_mutex_unlock(&fk_lock);
}

/* The first send to target (a copy), or start_ms 0 when none yet. */
static struct fake_send fk_find(const char *target)
{
    struct fake_send r;
    memset(&r, 0, sizeof(r));
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_n; i++) {
        if (strcmp(fk_sends[i].target, target) == 0) {
            r = fk_sends[i];
            break;
        }
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

/* --- helpers ----------------------------------------------------------------- */

static struct krc_restart mk(const char *ns, const char *pod)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)ns;
    r.pod = (char *)pod;
    (void)krc_restart_ident_set(&r.ident, "uid-1", "app", 0, 0, NULL);
    r.ident.restart_count = 1;
    r.detected_mono_ms = krc_clock_mono_ms();
    return r;
}

struct routes {
    struct krc_route r[4];
};

static void routes_init(struct routes *rs)
{
    const char *ns[4] = {"slow", "fast", "fail", "bad"};
    const char *hook[4] = {HOOK_SLOW, HOOK_FAST, HOOK_FAIL, HOOK_REJECT};
    memset(rs, 0, sizeof(*rs));
    for (int i = 0; i < 4; i++) {
        assert_int_equal(
            krc_pattern_compile(&rs->r[i].namespace, ns[i], KRC_PATTERN_NAMESPACE, 0, "t", NULL),
            0);
        rs->r[i].webhook_url = (char *)hook[i];
    }
}

static void routes_cleanup(struct routes *rs)
{
    for (int i = 0; i < 4; i++) {
        krc_pattern_cleanup(&rs->r[i].namespace);
    }
}

static int posted_calls;
static char posted_uid[64];

static void on_posted(const struct krc_restart_ident *id, void *userdata)
{
    (void)userdata;
    pthread_mutex_lock(&fk_lock);
    posted_calls++;
    snprintf(posted_uid, sizeof(posted_uid), "%s", id->uid);
    pthread_mutex_unlock(&fk_lock);
}

/* route, render and deliver a restart of ns/pod, with its outbox row when a store is given */
static void submit(struct krc_sender *n, struct krc_store *store, const char *ns, const char *pod,
                   int64_t *ret_outbox_id)
{
    struct krc_restart r = mk(ns, pod);
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_sender_message msg;
    int64_t id = 0;

    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    assert_int_equal(decide(n, &r), KRC_POLICY_ALERT);
    assert_int_equal(krc_render_restart(&last_plan, &r, rep, dg, krc_clock_now(), &msg),
                     KRC_POLICY_ALERT);
    assert_non_null(msg.body);
    if (store != NULL) {
        struct krc_store_outbox ob;
        memset(&ob, 0, sizeof(ob));
        ob.kind = msg.kind;
        ob.destination = msg.destination;
        ob.thread_key = msg.thread_key;
        ob.body = msg.body;
        assert_int_equal(krc_store_add_outbox(store, 0, &ob, &id, NULL), 0);
    }
    krc_deliver_restart(n, &last_plan, &r, &msg, &id, 1, rep, dg, NULL, 0);
    if (ret_outbox_id != NULL) {
        *ret_outbox_id = id;
    }
}

static void *run_thread(void *arg)
{
    krc_sender_run(arg);
    return NULL;
}

static int wait_for_send(const char *target, int64_t deadline_ms)
{
    while (fk_find(target).end_ms == 0) {
        if (krc_clock_mono_ms() > deadline_ms) {
            return 0;
        }
        krc_clock_sleep_ms(10, NULL);
    }
    return 1;
}

/* --- the sender ---------------------------------------------------------------- */

static void test_a_held_destination_does_not_hold_another(void **state)
{
    struct krc_sender_options o;
    struct routes rs;
    struct krc_sender *n;
    pthread_t th;
    int64_t t0;
    struct fake_send slow;
    struct fake_send fast;
    (void)state;

    fk_reset();
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    /* the slow destination's message first: its send begins and is held (1.5 s, as by a
     * 429's Retry-After) */
    submit(n, NULL, "slow", "a-0", NULL);
    assert_int_equal(krc_sender_pending(n), 1);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    t0 = krc_clock_mono_ms();
    while (fk_find(HOOK_SLOW).start_ms == 0) {
        assert_true(krc_clock_mono_ms() < t0 + 5000);
        krc_clock_sleep_ms(5, NULL);
    }
    /* then another destination's message: it goes out while the slow one is still held (a
     * sender that took one message at a time would post it after the slow one). Waiting for
     * the slow send to begin makes that order certain: under qemu the slow lane's thread
     * could begin after the fast message had gone out. */
    t0 = krc_clock_mono_ms();
    submit(n, NULL, "fast", "b-0", NULL);
    assert_true(wait_for_send(HOOK_FAST, t0 + 5000));
    fast = fk_find(HOOK_FAST);
    slow = fk_find(HOOK_SLOW);
    assert_true(fast.end_ms - t0 < 500);
    assert_true(slow.end_ms == 0 || fast.end_ms < slow.end_ms);
    assert_true(wait_for_send(HOOK_SLOW, t0 + 5000));
    slow = fk_find(HOOK_SLOW);
    assert_true(slow.end_ms - slow.start_ms >= SLOW_MS);
    while (krc_sender_pending(n) > 0 || krc_sender_stats(n)->alerts_sent < 2) {
        krc_clock_sleep_ms(10, NULL);
    }
    assert_int_equal(krc_sender_stats(n)->rate_limited, 1);
    assert_true(krc_sender_heartbeat(n) > 0);
    krc_sender_abort(n);
    pthread_join(th, NULL);
    krc_sender_free(n);
    routes_cleanup(&rs);
}

/* A restart of ns/pod (uid) in its incident (inc: NULL, or its cause), rendered and settled
 * as the pipeline does; delivered, or (deliver 0) its first alert left on its way. */
static void incident_restart(struct krc_sender *n, const char *ns, const char *pod, const char *uid,
                             const struct krc_route_incident *inc, int deliver)
{
    struct krc_restart r = mk(ns, pod);
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_sender_message msg;
    enum krc_policy_decision d;

    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    (void)krc_restart_ident_set(&r.ident, uid, "app", 1, 0, NULL);
    krc_sender_restart_seen(n, uid, ns, pod, "app", 1); /* the watch, as it detects it */
    assert_int_equal(krc_route_restart_in(n, &r, inc, &last_plan), KRC_POLICY_ALERT);
    d = krc_render_restart(&last_plan, &r, rep, dg, krc_clock_now(), &msg);
    assert_int_equal(d, KRC_POLICY_ALERT);
    krc_route_incident_settle(n, &last_plan, &r, rep, dg, d, &msg);
    if (deliver) {
        krc_deliver_restart(n, &last_plan, &r, &msg, NULL, 1, rep, dg, NULL, 0);
        return;
    }
    krc_sender_message_cleanup(&msg);
    krc_report_free(rep);
    krc_diagnosis_cleanup(dg);
    krc_free(dg);
}

/* The watch shows ns/pod (uid) with its container running and ready. */
static void ready_event(struct krc_sender *n, const char *ns, const char *pod, const char *uid)
{
    struct krc_container_info c;
    struct krc_pod_info p;

    memset(&c, 0, sizeof(c));
    c.name = "app";
    c.restart_count = 1;
    c.state_running = 1;
    c.ready = 1;
    memset(&p, 0, sizeof(p));
    p.uid = uid;
    p.namespace = ns;
    p.name = pod;
    p.containers = &c;
    p.n_containers = 1;
    krc_sender_pod_event(n, &p, 0);
}

/* An incident's end takes its latest pod's entry out of the recovery tracker (that pod's
 * events no longer take its lock); another pod's entry stays, and so does the entry of a
 * container another open incident (another cause) still waits for. */
static void test_incident_end_forgets_its_pod(void **state)
{
    static const struct krc_route_incident oom = {NULL, NULL, KRC_CAUSE_OOM_KILLED};
    struct krc_sender_options o;
    struct routes rs;
    struct krc_sender *n;
    pthread_t th;
    int64_t deadline;
    (void)state;

    fk_reset();
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    o.recovered_after_s = 1;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    incident_restart(n, "fast", "b-0", "uid-b", NULL, 1);
    /* d-0: two incidents of its container (two causes); the second's alert is not sent */
    incident_restart(n, "fast", "d-0", "uid-d", NULL, 1);
    incident_restart(n, "fast", "d-0", "uid-d", &oom, 0);
    krc_sender_restart_seen(n, "uid-c", "fast", "c-0", "app", 1); /* no incident */
    ready_event(n, "fast", "b-0", "uid-b");
    ready_event(n, "fast", "d-0", "uid-d");
    assert_int_equal(krc_sender_incidents_open(n), 3);
    assert_int_equal(krc_sender_awaited(n), 3);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    deadline = krc_clock_mono_ms() + 10000;
    while (krc_sender_incidents_open(n) > 1 && krc_clock_mono_ms() < deadline) {
        krc_clock_sleep_ms(20, NULL);
    }
    assert_int_equal(krc_sender_incidents_open(n), 1);
    /* b-0's entry went with its incident; c-0's, and d-0's for its other incident, stay */
    assert_int_equal(krc_sender_awaited(n), 2);
    krc_sender_abort(n);
    pthread_join(th, NULL);
    krc_sender_free(n);
    routes_cleanup(&rs);
}

struct pending_rows {
    int n;
    int64_t id[8];
    int attempts[8];
};

static int collect(const struct krc_store_message *m, void *ud)
{
    struct pending_rows *p = ud;
    if (p->n < 8) {
        p->id[p->n] = m->id;
        p->attempts[p->n] = m->attempts;
        p->n++;
    }
    return 0;
}

/* Remove a test's store (with its -wal, -shm and -delivered files) and its
 * temporary folder. */
static void remove_db(const char *dir, const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-delivered"};

    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        char p[160];
        snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void test_outbox_marked_once_retry_and_final_failure(void **state)
{
    struct krc_sender_options o;
    struct routes rs;
    struct krc_sender *n;
    struct krc_store *store = NULL;
    struct pending_rows pend;
    char dir[] = "/tmp/krc-test-sender-XXXXXX";
    char path[128];
    int64_t ok_id, fail_id, bad_id;
    char *ts = NULL;
    char *ch = NULL;
    pthread_t th;
    (void)state;

    fk_reset();
    posted_calls = 0;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/krc.db", dir);
    assert_int_equal(krc_store_open(path, 0, &store, NULL), 0);
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    o.store_path = path;
    o.on_posted = on_posted;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    submit(n, store, "fast", "web-1", &ok_id);
    submit(n, store, "fail", "web-2", &fail_id);
    submit(n, store, "bad", "web-3", &bad_id);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    /* the failure is counted before its item is queued again, so wait for
     * both (bounded: a transient failure that is never queued again fails) */
    {
        int64_t deadline = krc_clock_mono_ms() + 10000;
        while ((krc_sender_stats(n)->alerts_sent < 1 || krc_sender_stats(n)->failed < 2 ||
                krc_sender_pending(n) < 1) &&
               krc_clock_mono_ms() < deadline) {
            krc_clock_sleep_ms(10, NULL);
        }
    }
    /* the transient failure is queued again (for 60 s), the final one is not */
    assert_int_equal(krc_sender_pending(n), 1);
    krc_sender_abort(n);
    pthread_join(th, NULL);
    /* each was tried once */
    pthread_mutex_lock(&fk_lock);
    assert_int_equal(fk_n, 3);
    pthread_mutex_unlock(&fk_lock);
    assert_int_equal(posted_calls, 1);
    assert_string_equal(posted_uid, "uid-1");
    /* delivered with its ts; the transient failure pending with one attempt; the 4xx failed */
    assert_int_equal(krc_store_thread_ts(store, "fast/web-1", &ts, &ch, NULL), 0);
    assert_non_null(ts);
    assert_string_equal(ts, fk_find(HOOK_FAST).ts);
    assert_non_null(strstr(ts, "1700000000."));
    memset(&pend, 0, sizeof(pend));
    assert_int_equal(krc_store_pending(store, collect, &pend, NULL), 0);
    assert_int_equal(pend.n, 1);
    assert_int_equal(pend.id[0], fail_id);
    assert_int_equal(pend.attempts[0], 1);
    assert_true(ok_id > 0 && bad_id > 0);
    krc_free(ts);
    krc_free(ch);
    krc_sender_free(n);
    krc_store_close(store);
    routes_cleanup(&rs);
    remove_db(dir, path);
}

/* A shared outbox: what a lane does after krc_store_claim. Claimed: post;
 * fenced (a newer leader owns the row, or another replica delivered it):
 * drop, never retried; any database error (PostgreSQL down): post anyway,
 * krc keeps alerting. */
static void test_claim_action(void **state)
{
    (void)state;
    assert_int_equal(krc_sender_claim_action(0), KRC_SENDER_CLAIM_POST);
    assert_int_equal(krc_sender_claim_action(KRC_STORE_FENCED), KRC_SENDER_CLAIM_DROP);
    assert_int_equal(krc_sender_claim_action(KRC_EIO), KRC_SENDER_CLAIM_POST_ANYWAY);
    assert_int_equal(krc_sender_claim_action(KRC_ETIMEOUT), KRC_SENDER_CLAIM_POST_ANYWAY);
    assert_int_equal(krc_sender_claim_action(KRC_ENOMEM), KRC_SENDER_CLAIM_POST_ANYWAY);
    assert_int_equal(krc_sender_claim_action(KRC_ENOTFOUND), KRC_SENDER_CLAIM_POST_ANYWAY);
}

/* With a fencing token on a SQLite outbox (one replica's own file, not
 * shared) nothing changes: the row is posted once and marked delivered. */
static void test_fence_token_on_sqlite_changes_nothing(void **state)
{
    struct krc_sender_options o;
    struct routes rs;
    struct krc_sender *n;
    struct krc_store *store = NULL;
    struct pending_rows pend;
    char dir[] = "/tmp/krc-test-sender-XXXXXX";
    char path[128];
    struct krc_store_options so = {"prod", NULL, 0};
    int64_t id;
    pthread_t th;
    (void)state;

    fk_reset();
    posted_calls = 0;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/krc.db", dir);
    assert_int_equal(krc_store_open_with(path, 0, &so, &store, NULL), 0);
    assert_false(krc_store_shared(store));
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    o.store_path = path;
    o.store_options = &so;
    o.on_posted = on_posted;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    krc_sender_set_fence_token(n, 7);
    submit(n, store, "fast", "web-1", &id);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    while (krc_sender_stats(n)->alerts_sent < 1) {
        krc_clock_sleep_ms(10, NULL);
    }
    krc_sender_abort(n);
    pthread_join(th, NULL);
    pthread_mutex_lock(&fk_lock);
    assert_int_equal(fk_n, 1);
    pthread_mutex_unlock(&fk_lock);
    assert_int_equal(posted_calls, 1);
    memset(&pend, 0, sizeof(pend));
    assert_int_equal(krc_store_pending(store, collect, &pend, NULL), 0);
    assert_int_equal(pend.n, 0);
    assert_true(id > 0);
    krc_sender_free(n);
    krc_store_close(store);
    routes_cleanup(&rs);
    remove_db(dir, path);
}

/* was_handled for test_resume_superseded: the previous leader posted web-1. */
static int handled_web1(const struct krc_store_row *row, void *ud)
{
    (void)ud;
    return row->pod != NULL && strcmp(row->pod, "web-1") == 0;
}

/* Record a restart of `pod` with its pending alert (the sender's own
 * destination key) as an earlier leadership of this replica left it. */
static int64_t record_pending(struct krc_sender *n, struct krc_store *store, const char *pod,
                              int64_t *ret_restart_id)
{
    struct krc_restart r = mk("fast", pod);
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_sender_message msg;
    struct krc_store_restart rec;
    struct krc_store_outbox ob;
    int64_t id = 0;

    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    assert_int_equal(decide(n, &r), KRC_POLICY_ALERT);
    assert_int_equal(krc_render_restart(&last_plan, &r, rep, dg, krc_clock_now(), &msg),
                     KRC_POLICY_ALERT);
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = pod;
    rec.container = "app";
    rec.restart_count = 1;
    rec.namespace = "fast";
    rec.pod = pod;
    rec.detected_at = krc_clock_now();
    rec.decision = "alert";
    memset(&ob, 0, sizeof(ob));
    ob.kind = msg.kind;
    ob.destination = msg.destination;
    ob.thread_key = msg.thread_key;
    ob.body = msg.body;
    assert_int_equal(krc_store_record(store, &rec, &ob, ret_restart_id, &id, NULL), 0);
    krc_sender_message_cleanup(&msg);
    krc_diagnosis_cleanup(dg);
    krc_free(dg);
    krc_report_free(rep);
    return id;
}

/* A new leader resumes its outbox: a row whose restart the previous leader
 * posted (the hand-over list) is marked superseded, not failed and not
 * sent; the other is queued. */
static void test_resume_superseded(void **state)
{
    struct krc_sender_options o;
    struct routes rs;
    struct krc_sender *n;
    struct krc_store *store = NULL;
    struct krc_store_stats st;
    struct krc_store_entry *en = NULL;
    int64_t rid1;
    int64_t rid2;
    (void)state;

    fk_reset();
    assert_int_equal(krc_store_open(":memory:", 0, &store, NULL), 0);
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    record_pending(n, store, "web-1", &rid1);
    record_pending(n, store, "web-2", &rid2);
    krc_sender_resume_outbox(n, store, handled_web1, NULL);
    assert_int_equal(krc_sender_pending(n), 1);
    assert_int_equal(krc_store_stats(store, &st, NULL), 0);
    assert_int_equal(st.superseded, 1);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.pending, 1);
    assert_int_equal(krc_sender_stats(n)->failed, 0);
    assert_int_equal(krc_store_get(store, rid1, &en, NULL), 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_SUPERSEDED);
    assert_int_equal(en->messages[0].attempts, 0);
    assert_null(en->messages[0].last_error);
    assert_string_equal(en->row.delivery, "superseded");
    krc_store_entry_free(en);
    assert_int_equal(krc_store_get(store, rid2, &en, NULL), 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_PENDING);
    krc_store_entry_free(en);
    krc_sender_free(n);
    krc_store_close(store);
    routes_cleanup(&rs);
}

/* An outbox row an earlier krc left pending, keyed as every earlier version
 * keyed the Go tool's Slack settings. */
static void add_row(struct krc_store *store, const char *key, const char *channel)
{
    struct krc_store_outbox ob;
    int64_t id = 0;

    memset(&ob, 0, sizeof(ob));
    ob.kind = KRC_STORE_KIND_ALERT;
    ob.destination = key;
    ob.channel = channel;
    ob.thread_key = "fast/web-1";
    ob.body = "{\"text\":\"earlier\"}";
    assert_int_equal(krc_store_add_outbox(store, 0, &ob, &id, NULL), 0);
}

/* After an upgrade, with the Go tool's settings as the configuration's
 * implicit destination: rows keyed "webhook:default" and "route:N" resume
 * to their webhooks (the default one, the route's), "api" rows to the Web
 * API; a key the configuration no longer has is marked failed. */
static void test_resume_earlier_keys(void **state)
{
    struct krc_sender_options o;
    struct krc_destination env;
    struct routes rs;
    struct krc_sender *n;
    struct krc_store *store = NULL;
    struct krc_store_stats st;
    pthread_t th;
    (void)state;

    (void)krc_dest_registry_init(NULL, 0);
    fk_reset();
    assert_int_equal(krc_store_open(":memory:", 0, &store, NULL), 0);
    add_row(store, "webhook:default", NULL);
    add_row(store, "route:1", NULL);
    add_row(store, "route:9", NULL);
    add_row(store, "api", "C123");
    add_row(store, "dest:gone", NULL);
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    krc_dest_slack_env("fake://default", NULL, NULL, NULL, &env);
    o.slack_env = &env; /* as the daemon passes the configuration's */
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_sender_resume_outbox(n, store, NULL, NULL), 0);
    assert_int_equal(krc_sender_pending(n), 2);
    assert_int_equal(krc_store_stats(store, &st, NULL), 0);
    assert_int_equal(st.failed, 3); /* route:9, api (no token now), dest:gone */
    assert_int_equal(st.pending, 2);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    assert_true(wait_for_send("fake://default", krc_clock_mono_ms() + 10000));
    assert_true(wait_for_send(HOOK_FAST, krc_clock_mono_ms() + 10000));
    krc_sender_abort(n);
    pthread_join(th, NULL);
    krc_sender_free(n);

    krc_store_close(store);

    /* the Web API: every row of the Go tool's settings goes to it, in its channel */
    fk_reset();
    assert_int_equal(krc_store_open(":memory:", 0, &store, NULL), 0);
    krc_dest_slack_env(NULL, "#ops", "xoxb-test-token-123", NULL, &env);
    add_row(store, "api", "C123");
    add_row(store, "webhook:default", "#old");
    add_row(store, "dest:gone", NULL);
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_int_equal(krc_sender_resume_outbox(n, store, NULL, NULL), 0);
    assert_int_equal(krc_sender_pending(n), 2);
    assert_int_equal(krc_store_stats(store, &st, NULL), 0);
    assert_int_equal(st.failed, 1); /* dest:gone */
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    assert_true(wait_for_send("api", krc_clock_mono_ms() + 10000));
    krc_sender_abort(n);
    pthread_join(th, NULL);
    krc_sender_free(n);
    krc_store_close(store);
    routes_cleanup(&rs);
}

/* Alerts queued when a storm begins are withdrawn into its summary: their
 * outbox rows become "withdrawn" (never attempted), not "failed", and the
 * sender counts them as grouped, never as failed or sent. */
static void test_storm_withdrawn_rows_are_not_failures(void **state)
{
    struct krc_sender_options o;
    struct routes rs;
    struct krc_sender *n;
    struct krc_store *store = NULL;
    struct krc_store_stats st;
    struct krc_restart r4;
    char dir[] = "/tmp/krc-test-sender-XXXXXX";
    char path[128];
    int64_t ids[3];
    int64_t deadline;
    pthread_t th;
    (void)state;

    fk_reset();
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/krc.db", dir);
    assert_int_equal(krc_store_open(path, 0, &store, NULL), 0);
    routes_init(&rs);
    memset(&o, 0, sizeof(o));
    o.routes = rs.r;
    o.n_routes = 4;
    o.sink_ops = &fake_ops;
    o.store_path = path;
    o.storm_threshold = 3;
    o.storm_window_s = 60;
    o.storm_delay_s = 3600; /* no summary while the test runs */
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    submit(n, store, "fast", "web-1", &ids[0]);
    submit(n, store, "fast", "web-2", &ids[1]);
    submit(n, store, "fast", "web-3", &ids[2]);
    /* the fourth starts the storm before the sender ran: the three are withdrawn */
    r4 = mk("fast", "web-4");
    assert_int_equal(decide(n, &r4), KRC_POLICY_GROUPED);
    assert_int_equal(krc_sender_stats(n)->grouped, 3);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    deadline = krc_clock_mono_ms() + 5000;
    do {
        krc_clock_sleep_ms(10, NULL);
        assert_int_equal(krc_store_stats(store, &st, NULL), 0);
    } while (st.withdrawn < 3 && krc_clock_mono_ms() < deadline);
    krc_sender_abort(n);
    pthread_join(th, NULL);
    assert_int_equal(st.withdrawn, 3);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.delivered, 0);
    assert_int_equal(krc_sender_stats(n)->failed, 0);
    assert_int_equal(krc_sender_stats(n)->alerts_sent, 0);
    pthread_mutex_lock(&fk_lock);
    assert_int_equal(fk_n, 0); /* nothing was posted */
    pthread_mutex_unlock(&fk_lock);
    assert_true(ids[0] > 0 && ids[2] > ids[0]);
    krc_sender_free(n);
    krc_store_close(store);
    routes_cleanup(&rs);
    remove_db(dir, path);
}

/* --- the Slack sinks' delivery loop ------------------------------------------------ */

struct script {
    int status[8];      /* 200: accepted; other: Slack's answer */
    const char *err[8]; /* Slack's error code for that answer */
    int retry_after[8];
    int n;
    int calls;
    const char *bodies[8];
};

static int fake_post(struct krc_sink_conn *c, void *ctx, const char *body,
                     struct krc_http_response *resp, struct krc_sink_result *res,
                     struct krc_error *err)
{
    struct script *s = ctx;
    int i = s->calls < s->n ? s->calls : s->n - 1;
    (void)c;
    (void)err;
    s->bodies[s->calls < 8 ? s->calls : 7] = body;
    s->calls++;
    resp->status = s->status[i];
    resp->retry_after = s->retry_after[i] > 0 ? s->retry_after[i] : -1;
    res->http_status = resp->status;
    snprintf(res->error, sizeof(res->error), "%s", s->err[i] != NULL ? s->err[i] : "");
    return s->status[i] == 200 ? 0 : 1;
}

static void conn_init(struct krc_sink_conn *c)
{
    struct krc_sink_options o;
    krc_sink_options_defaults(&o);
    o.min_interval_ms = 300;
    o.max_attempts = 3;
    o.backoff_initial_ms = 10;
    o.backoff_max_ms = 20;
    assert_int_equal(krc_sink_conn_init(c, &o, NULL), 0);
}

static void test_pacing_per_connection_and_target(void **state)
{
    struct krc_sink_conn a;
    struct krc_sink_conn b;
    struct krc_sink_result res;
    struct script s;
    int64_t t0;
    (void)state;

    conn_init(&a);
    conn_init(&b);
    memset(&s, 0, sizeof(s));
    s.status[0] = 200;
    s.n = 1;
    t0 = krc_clock_mono_ms();
    assert_int_equal(krc_sink_deliver(&a, "x", "d", fake_post, &s, "{}", NULL, &res, NULL), 0);
    /* another target of the same connection, and another connection: not paced */
    assert_int_equal(krc_sink_deliver(&a, "y", "d", fake_post, &s, "{}", NULL, &res, NULL), 0);
    assert_int_equal(krc_sink_deliver(&b, "x", "d", fake_post, &s, "{}", NULL, &res, NULL), 0);
    assert_true(krc_clock_mono_ms() - t0 < 250);
    /* the same target again: one message per min_interval */
    assert_int_equal(krc_sink_deliver(&a, "x", "d", fake_post, &s, "{}", NULL, &res, NULL), 0);
    assert_true(krc_clock_mono_ms() - t0 >= 300);
    assert_int_equal(s.calls, 4);
    krc_sink_conn_cleanup(&a);
    krc_sink_conn_cleanup(&b);
}

static void test_deliver_429_fallback_4xx_5xx(void **state)
{
    struct krc_sink_conn c;
    struct krc_sink_result res;
    struct krc_error e;
    struct script s;
    int64_t t0;
    (void)state;

    conn_init(&c);
    /* 429 with Retry-After: 1 -> waits, then accepted; a 429 uses no attempt */
    memset(&s, 0, sizeof(s));
    s.status[0] = 429;
    s.retry_after[0] = 1;
    s.status[1] = 200;
    s.n = 2;
    t0 = krc_clock_mono_ms();
    assert_int_equal(krc_sink_deliver(&c, "k1", "d", fake_post, &s, "B", "F", &res, NULL), 0);
    assert_true(krc_clock_mono_ms() - t0 >= 1000);
    assert_int_equal(res.rate_limited, 1);
    assert_int_equal(res.retry_after_ms, 1000);
    assert_int_equal(res.attempts, 2);
    /* invalid_blocks -> the fallback, once */
    memset(&s, 0, sizeof(s));
    s.status[0] = 400;
    s.err[0] = "invalid_blocks";
    s.status[1] = 200;
    s.n = 2;
    assert_int_equal(krc_sink_deliver(&c, "k2", "d", fake_post, &s, "B", "F", &res, NULL), 0);
    assert_true(res.used_fallback);
    assert_string_equal(s.bodies[0], "B");
    assert_string_equal(s.bodies[1], "F");
    /* another 4xx: final at once */
    memset(&s, 0, sizeof(s));
    s.status[0] = 404;
    s.err[0] = "no_service";
    s.n = 1;
    krc_error_clear(&e);
    assert_int_equal(krc_sink_deliver(&c, "k3", "d", fake_post, &s, "B", "F", &res, &e), KRC_EHTTP);
    assert_int_equal(e.http_status, 404);
    assert_non_null(strstr(e.msg, "no_service"));
    assert_int_equal(s.calls, 1);
    /* 5xx: retried with backoff, up to max_attempts */
    memset(&s, 0, sizeof(s));
    s.status[0] = 500;
    s.err[0] = "rollup_error";
    s.n = 1;
    krc_error_clear(&e);
    assert_int_equal(krc_sink_deliver(&c, "k4", "d", fake_post, &s, "B", NULL, &res, &e),
                     KRC_EHTTP);
    assert_int_equal(s.calls, 3);
    assert_non_null(strstr(e.msg, "gave up after 3 attempts"));
    krc_sink_conn_cleanup(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_destination),
        cmocka_unit_test(test_kubernetes_event_destination),
        cmocka_unit_test(test_mute_per_pod),
        cmocka_unit_test(test_mute_expires),
        cmocka_unit_test(test_routes_and_channel_annotation),
        cmocka_unit_test(test_web_api_needs_channel),
        cmocka_unit_test(test_silences),
        cmocka_unit_test(test_log_ignore),
        cmocka_unit_test(test_storm_groups_and_withdraws),
        cmocka_unit_test(test_storm_is_per_destination),
        cmocka_unit_test(test_storm_withdrawn_rows_are_not_failures),
        cmocka_unit_test(test_resume_superseded),
        cmocka_unit_test(test_resume_earlier_keys),
        cmocka_unit_test(test_a_held_destination_does_not_hold_another),
        cmocka_unit_test(test_incident_end_forgets_its_pod),
        cmocka_unit_test(test_outbox_marked_once_retry_and_final_failure),
        cmocka_unit_test(test_claim_action),
        cmocka_unit_test(test_fence_token_on_sqlite_changes_nothing),
        cmocka_unit_test(test_pacing_per_connection_and_target),
        cmocka_unit_test(test_deliver_429_fallback_4xx_5xx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
