/* Notification policy: routing, mute, silences, log-ignore and the storm guard. No message is
 * sent here (the sender loop is not run); decisions and the queue are observed directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/util/clock.h"
#include "krc/config/config.h"
#include "krc/util/mem.h"
#include "krc/alert/notify.h"

#define HOOK_A "https://hooks.example.test/services/T1/B1/aaaa"
#define HOOK_B "https://hooks.example.test/services/T1/B2/bbbb"

static struct krc_restart mk(const char *ns, const char *pod, const char *container,
                             const char *channel)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)ns;
    r.pod = (char *)pod;
    r.uid = (char *)"uid-1";
    r.container = (char *)container;
    r.slack_channel = (char *)channel;
    r.restart_count = 1;
    r.has_exit_code = 1;
    r.exit_code = 1;
    return r;
}

static struct krc_notify_options base_options(void)
{
    struct krc_notify_options o;
    memset(&o, 0, sizeof(o));
    o.webhook_url = HOOK_A;
    o.mute_seconds = 600;
    o.storm_threshold = 0;
    o.storm_window_s = 30;
    o.storm_delay_s = 10;
    return o;
}

/* Hand over a collected restart with an empty report as the pipeline does:
 * prepare, then queue what is to be posted (ownership moves). */
static enum krc_notify_decision submit(struct krc_notifier *n, const struct krc_restart *r,
                                       enum krc_notify_decision d, const char *log)
{
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_notify_message msg;
    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    if (log != NULL) {
        assert_int_equal(krc_report_set_log(rep, r->container, log, strlen(log), 0, NULL), 0);
    }
    d = krc_notifier_prepare(n, r, d, rep, dg, &msg);
    if (msg.body != NULL) {
        krc_notifier_enqueue(n, &msg, 0, rep, dg, NULL, 0);
        return d;
    }
    krc_report_free(rep);
    krc_diagnosis_cleanup(dg);
    krc_free(dg);
    return d;
}

static void pat(struct krc_pattern *p, const char *text, enum krc_pattern_field f)
{
    assert_int_equal(krc_pattern_compile(p, text, f, 0, "test", NULL), 0);
}

static void test_no_destination(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_notifier *n;
    struct krc_restart r = mk("shop", "web-1", "app", NULL);
    (void)state;

    o.webhook_url = NULL;
    n = krc_notifier_new(&o, NULL);
    assert_non_null(n);
    assert_false(krc_notifier_has_destination(n));
    assert_int_equal(krc_notifier_decide(n, &r), KRC_NOTIFY_NO_DESTINATION);
    assert_int_equal(submit(n, &r, KRC_NOTIFY_NO_DESTINATION, NULL), KRC_NOTIFY_NO_DESTINATION);
    assert_int_equal(krc_notifier_pending(n), 0);
    krc_notifier_free(n);
}

static void test_mute_per_pod(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_notifier *n = krc_notifier_new(&o, NULL);
    struct krc_restart a = mk("shop", "web-1", "app", NULL);
    struct krc_restart a2 = mk("shop", "web-1", "sidecar", NULL);
    struct krc_restart b = mk("shop", "web-2", "app", NULL);
    (void)state;

    assert_non_null(n);
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_ALERT);
    /* the same pod again, even another container: muted (the Go tool mutes per pod) */
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_MUTED);
    assert_int_equal(krc_notifier_decide(n, &a2), KRC_NOTIFY_MUTED);
    assert_int_equal(krc_notifier_decide(n, &b), KRC_NOTIFY_ALERT);
    assert_int_equal(krc_notifier_stats(n)->muted, 2);
    krc_notifier_free(n);

    o.mute_seconds = 0;
    n = krc_notifier_new(&o, NULL);
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_ALERT);
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_ALERT);
    krc_notifier_free(n);
}

static void test_mute_expires(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_notifier *n = krc_notifier_new(&o, NULL);
    struct krc_restart a = mk("shop", "web-1", "app", NULL);
    int64_t t0 = 1800000000;
    (void)state;

    krc_clock_set_fake_now(t0);
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_ALERT);
    krc_clock_set_fake_now(t0 + 599);
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_MUTED);
    krc_clock_set_fake_now(t0 + 600);
    assert_int_equal(krc_notifier_decide(n, &a), KRC_NOTIFY_ALERT);
    krc_clock_set_fake_now(0);
    krc_notifier_free(n);
}

static void test_routes_and_channel_annotation(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_route routes[2];
    struct krc_notifier *n;
    (void)state;

    memset(routes, 0, sizeof(routes));
    pat(&routes[0].namespace, "^team-(a|b)$", KRC_PATTERN_NAMESPACE);
    routes[0].webhook_url = (char *)HOOK_B;
    pat(&routes[1].pod, "pay", KRC_PATTERN_POD);
    routes[1].channel = (char *)"#payments";
    o.routes = routes;
    o.n_routes = 2;
    o.mute_seconds = 0;
    n = krc_notifier_new(&o, NULL);
    assert_non_null(n);
    {
        struct krc_restart r1 = mk("team-a", "web-1", "app", NULL);
        struct krc_restart r2 = mk("shop", "payments-1", "app", NULL);
        struct krc_restart r3 = mk("team-c", "web-1", "app", "#ops");
        assert_int_equal(krc_notifier_decide(n, &r1), KRC_NOTIFY_ALERT);
        assert_int_equal(krc_notifier_decide(n, &r2), KRC_NOTIFY_ALERT);
        assert_int_equal(krc_notifier_decide(n, &r3), KRC_NOTIFY_ALERT);
    }
    krc_notifier_free(n);
    krc_pattern_cleanup(&routes[0].namespace);
    krc_pattern_cleanup(&routes[1].pod);
}

static void test_web_api_needs_channel(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_notifier *n;
    struct krc_restart r = mk("shop", "web-1", "app", NULL);
    struct krc_restart annotated = mk("shop", "web-2", "app", "#team");
    (void)state;

    o.webhook_url = NULL;
    o.bot_token = "xoxb-test-token-123";
    n = krc_notifier_new(&o, NULL);
    assert_false(krc_notifier_has_destination(n));
    assert_true(krc_notifier_wants_full_log(n));
    assert_int_equal(krc_notifier_decide(n, &r), KRC_NOTIFY_NO_DESTINATION);
    /* a pod's own alert-slack-channel is a destination in Web API mode */
    assert_int_equal(krc_notifier_decide(n, &annotated), KRC_NOTIFY_ALERT);
    krc_notifier_free(n);
}

static void test_silences(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_silence s[2];
    struct krc_notifier *n;
    struct krc_restart maint = mk("maint", "job-1", "app", NULL);
    struct krc_restart other = mk("shop", "web-1", "app", NULL);
    struct krc_restart night = mk("batch", "etl-1", "app", NULL);
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
    n = krc_notifier_new(&o, NULL);

    krc_clock_set_fake_now(day + 3600 + 5);
    assert_int_equal(krc_notifier_decide(n, &maint), KRC_NOTIFY_SILENCED);
    assert_int_equal(krc_notifier_decide(n, &other), KRC_NOTIFY_ALERT);
    krc_clock_set_fake_now(day + 7200); /* end is exclusive */
    assert_int_equal(krc_notifier_decide(n, &maint), KRC_NOTIFY_ALERT);
    krc_clock_set_fake_now(day + 23 * 3600); /* 23:00: inside 22:00-06:00 */
    assert_int_equal(krc_notifier_decide(n, &night), KRC_NOTIFY_SILENCED);
    krc_clock_set_fake_now(day + 5 * 3600 + 59 * 60); /* 05:59 */
    assert_int_equal(krc_notifier_decide(n, &night), KRC_NOTIFY_SILENCED);
    krc_clock_set_fake_now(day + 12 * 3600); /* noon */
    assert_int_equal(krc_notifier_decide(n, &night), KRC_NOTIFY_ALERT);
    krc_clock_set_fake_now(0);
    assert_int_equal(krc_notifier_stats(n)->silenced, 3);
    krc_notifier_free(n);
    krc_pattern_cleanup(&s[0].namespace);
    krc_pattern_cleanup(&s[1].namespace);
}

static void test_log_ignore(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_pattern re;
    struct krc_notifier *n;
    struct krc_restart r1 = mk("shop", "web-1", "app", NULL);
    struct krc_restart r2 = mk("shop", "web-2", "app", NULL);
    (void)state;

    assert_int_equal(krc_pattern_compile(&re, "expected shutdown", KRC_PATTERN_TEXT,
                                         KRC_PATTERN_NEWLINE, "logIgnorePatterns", NULL),
                     0);
    o.log_ignore = &re;
    o.n_log_ignore = 1;
    n = krc_notifier_new(&o, NULL);
    assert_int_equal(krc_notifier_decide(n, &r1), KRC_NOTIFY_ALERT);
    assert_int_equal(submit(n, &r1, KRC_NOTIFY_ALERT, "x\nthis was an expected shutdown\n"),
                     KRC_NOTIFY_SILENCED);
    assert_int_equal(krc_notifier_stats(n)->log_ignored, 1);
    assert_int_equal(krc_notifier_decide(n, &r2), KRC_NOTIFY_ALERT);
    assert_int_equal(submit(n, &r2, KRC_NOTIFY_ALERT, "panic: boom\n"), KRC_NOTIFY_ALERT);
    assert_int_equal(krc_notifier_pending(n), 1);
    krc_notifier_free(n); /* frees the queued alert */
    krc_pattern_cleanup(&re);
}

static void test_storm_groups_and_withdraws(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_notifier *n;
    char names[10][32];
    struct krc_restart r[10];
    (void)state;

    o.storm_threshold = 3;
    o.mute_seconds = 0;
    n = krc_notifier_new(&o, NULL);
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof(names[i]), "web-%d", i);
        r[i] = mk("shop", names[i], "app", NULL);
    }
    /* three arrivals: alerts, queued (the sender is not running) */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(krc_notifier_decide(n, &r[i]), KRC_NOTIFY_ALERT);
        assert_int_equal(submit(n, &r[i], KRC_NOTIFY_ALERT, NULL), KRC_NOTIFY_ALERT);
    }
    assert_int_equal(krc_notifier_pending(n), 3);
    /* the fourth within the window starts the storm: queued alerts are withdrawn; they stay
     * queued (as withdrawn) only so that the sender settles their outbox rows */
    assert_int_equal(krc_notifier_decide(n, &r[3]), KRC_NOTIFY_GROUPED);
    assert_int_equal(krc_notifier_pending(n), 3);
    assert_int_equal(krc_notifier_stats(n)->grouped, 3);
    for (int i = 4; i < 10; i++) {
        assert_int_equal(krc_notifier_decide(n, &r[i]), KRC_NOTIFY_GROUPED);
        assert_int_equal(submit(n, &r[i], KRC_NOTIFY_GROUPED, NULL), KRC_NOTIFY_GROUPED);
    }
    assert_int_equal(krc_notifier_stats(n)->grouped, 9);
    krc_notifier_free(n);
}

static void test_storm_is_per_destination(void **state)
{
    struct krc_notify_options o = base_options();
    struct krc_route rt;
    struct krc_notifier *n;
    struct krc_restart a[5];
    char names[5][32];
    struct krc_restart other = mk("team-b", "api-1", "app", NULL);
    (void)state;

    memset(&rt, 0, sizeof(rt));
    pat(&rt.namespace, "team-b", KRC_PATTERN_NAMESPACE);
    rt.webhook_url = (char *)HOOK_B;
    o.routes = &rt;
    o.n_routes = 1;
    o.storm_threshold = 3;
    o.mute_seconds = 0;
    n = krc_notifier_new(&o, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(names[i], sizeof(names[i]), "w-%d", i);
        a[i] = mk("shop", names[i], "app", NULL);
        krc_notifier_decide(n, &a[i]);
    }
    assert_int_equal(krc_notifier_decide(n, &a[0]), KRC_NOTIFY_GROUPED);
    assert_int_equal(krc_notifier_decide(n, &other), KRC_NOTIFY_ALERT);
    krc_notifier_free(n);
    krc_pattern_cleanup(&rt.namespace);
}

/* --- routes and silences in the configuration file ------------------------- */

static const char *write_tmp(const char *text)
{
    static char path[64];
    FILE *f;
    snprintf(path, sizeof(path), "/tmp/krc-test-notify-%d.yaml", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_config_routes_and_silences(void **state)
{
    struct krc_config cfg;
    char *errors = NULL;
    const char *path;
    (void)state;

    setenv("KRC_TEST_HOOK", HOOK_B, 1);
    path = write_tmp("routes:\n"
                     "  - namespace: team-a\n"
                     "    webhookUrl: " HOOK_A "\n"
                     "  - pod: pay\n"
                     "    webhookUrlEnv: KRC_TEST_HOOK\n"
                     "    channel: '#payments'\n"
                     "silences:\n"
                     "  - namespace: maint\n"
                     "    start: 2026-12-24T18:00:00Z\n"
                     "    end: 2026-12-27T08:00:00Z\n"
                     "    reason: holidays\n"
                     "  - namespace: batch\n"
                     "    daily: \"22:00-06:00\"\n");
    krc_config_init(&cfg);
    assert_int_equal(krc_config_load_file(&cfg, path, &errors, NULL), 0);
    assert_null(errors);
    assert_int_equal(cfg.n_routes, 2);
    assert_string_equal(cfg.routes[0].namespace.text, "team-a");
    assert_true(krc_pattern_match(&cfg.routes[0].namespace, "team-a"));
    assert_false(krc_pattern_match(&cfg.routes[0].namespace, "team-ab"));
    assert_string_equal(cfg.routes[0].webhook_url, HOOK_A);
    assert_null(cfg.routes[0].channel);
    assert_string_equal(cfg.routes[1].pod.text, "pay");
    assert_null(cfg.routes[1].namespace.text);
    assert_true(krc_pattern_match(&cfg.routes[1].pod, "payments-1"));
    assert_false(krc_pattern_match(&cfg.routes[1].pod, "repay-1"));
    assert_string_equal(cfg.routes[1].webhook_url, HOOK_B);
    assert_string_equal(cfg.routes[1].channel, "#payments");
    assert_int_equal(cfg.n_silences, 2);
    assert_int_equal(cfg.silences[0].start, 1798135200);
    assert_int_equal(cfg.silences[0].end, 1798358400);
    assert_string_equal(cfg.silences[0].reason, "holidays");
    assert_int_equal(cfg.silences[1].daily_from, 22 * 60);
    assert_int_equal(cfg.silences[1].daily_to, 6 * 60);
    krc_config_cleanup(&cfg);
    unlink(path);
}

static void test_config_route_and_silence_errors(void **state)
{
    struct krc_config cfg;
    char *errors = NULL;
    const char *path;
    (void)state;

    unsetenv("KRC_TEST_MISSING");
    path = write_tmp("routes:\n"
                     "  - namespace: team-a\n"
                     "    webhook: typo\n"
                     "  - pod: \"(pay\"\n"
                     "    channel: x\n"
                     "  - webhookUrlEnv: KRC_TEST_MISSING\n"
                     "  - namespace: only-a-pattern\n"
                     "silences:\n"
                     "  - start: yesterday\n"
                     "  - daily: \"25:00-06:00\"\n"
                     "  - start: 2026-12-27T08:00:00Z\n"
                     "    end: 2026-12-24T18:00:00Z\n");
    krc_config_init(&cfg);
    assert_int_equal(krc_config_load_file(&cfg, path, &errors, NULL), KRC_EINVAL);
    assert_non_null(errors);
    assert_non_null(strstr(errors, ":3:5: routes[0]: unknown key \"webhook\""));
    assert_non_null(strstr(errors, "routes[1].pod: invalid regular expression \"(pay\""));
    assert_non_null(strstr(errors, "environment variable KRC_TEST_MISSING is not set"));
    assert_non_null(strstr(errors, "routes[3] needs webhookUrl, webhookUrlEnv or channel"));
    assert_non_null(strstr(errors, "silences[0].start must be an RFC 3339 time"));
    assert_non_null(strstr(errors, "silences[1].daily must look like"));
    assert_non_null(strstr(errors, "silences[2]: end is not after start"));
    krc_free(errors);
    krc_config_cleanup(&cfg);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_destination),
        cmocka_unit_test(test_mute_per_pod),
        cmocka_unit_test(test_mute_expires),
        cmocka_unit_test(test_routes_and_channel_annotation),
        cmocka_unit_test(test_web_api_needs_channel),
        cmocka_unit_test(test_silences),
        cmocka_unit_test(test_log_ignore),
        cmocka_unit_test(test_storm_groups_and_withdraws),
        cmocka_unit_test(test_storm_is_per_destination),
        cmocka_unit_test(test_config_routes_and_silences),
        cmocka_unit_test(test_config_route_and_silence_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
