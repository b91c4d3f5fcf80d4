/* Alert policy on its own: routes, silences (absolute and daily windows), the mute per pod,
 * the storm guard and log-ignore patterns, with the time passed in (no clock is read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/alert/policy.h"
#include "krc/config/config.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define HOOK_A "https://hooks.example.test/services/T1/B1/aaaa"
#define HOOK_B "https://hooks.example.test/services/T1/B2/bbbb"
#define T0 1800000000LL       /* unix seconds */
#define DAY (T0 - T0 % 86400) /* 00:00 UTC of T0's day */
#define HM(h, m) (DAY + (h)*3600 + (m)*60)

static void pat(struct krc_pattern *p, const char *text, enum krc_pattern_field f)
{
    assert_int_equal(krc_pattern_compile(p, text, f, 0, "test", NULL), 0);
}

static void route_cleanup(struct krc_route *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        krc_pattern_cleanup(&r[i].namespace);
        krc_pattern_cleanup(&r[i].pod);
        krc_pattern_cleanup(&r[i].container);
    }
}

static struct krc_policy base(void)
{
    return krc_test_policy(HOOK_A);
}

static void test_route_defaults_and_channel_override(void **state)
{
    struct krc_policy p = base();
    struct krc_policy_target t;
    (void)state;

    assert_int_equal(krc_policy_route(&p, "shop", "web-1", "app", NULL, &t), 1);
    assert_string_equal(t.webhook_url, HOOK_A);
    assert_null(t.channel);
    assert_string_equal(t.store_key, "webhook:default");
    /* the pod's alert-slack-channel */
    assert_int_equal(krc_policy_route(&p, "shop", "web-1", "app", "#ops", &t), 1);
    assert_string_equal(t.channel, "#ops");
    p.channel = "#general";
    assert_int_equal(krc_policy_route(&p, "shop", "web-1", "app", "", &t), 1);
    assert_string_equal(t.channel, "#general");
    /* nothing configured */
    p.webhook_url = "";
    assert_int_equal(krc_policy_route(&p, "shop", "web-1", "app", "#ops", &t), 0);
    /* Web API: a destination is a channel, the pod's own one included */
    p.web_api = 1;
    p.channel = NULL;
    assert_int_equal(krc_policy_route(&p, "shop", "web-1", "app", NULL, &t), 0);
    assert_int_equal(krc_policy_route(&p, "shop", "web-1", "app", "#team", &t), 1);
    assert_null(t.webhook_url);
    assert_string_equal(t.channel, "#team");
    assert_string_equal(t.store_key, "api");
}

/* Named destinations: a route's own list, else those marked default; a
 * route that names destinations only sends nothing to Slack. */
static void test_route_named_destinations(void **state)
{
    struct krc_policy p = base();
    struct krc_destination d[3];
    struct krc_route r[2];
    struct krc_route_dest only_pd[1] = {{(char *)"pd", 3, 20, 1}};
    struct krc_route_dest hook_and_chat[2] = {{(char *)"hook", 6, 20, 0},
                                              {(char *)"chat", 6, 26, 2}};
    struct krc_policy_target t;
    (void)state;

    memset(d, 0, sizeof(d));
    d[0].name = (char *)"hook";
    d[1].name = (char *)"pd";
    d[1].is_default = 1;
    d[2].name = (char *)"chat";
    memset(r, 0, sizeof(r));
    pat(&r[0].namespace, "pay", KRC_PATTERN_NAMESPACE);
    r[0].dests = only_pd;
    r[0].n_dests = 1;
    pat(&r[1].namespace, "web", KRC_PATTERN_NAMESPACE);
    r[1].webhook_url = HOOK_B;
    r[1].dests = hook_and_chat;
    r[1].n_dests = 2;
    p.routes = r;
    p.n_routes = 2;
    p.destinations = d;
    p.n_destinations = 3;

    /* destinations only: no Slack */
    assert_int_equal(krc_policy_route(&p, "pay", "a-0", "app", "#ops", &t), 1);
    assert_int_equal(t.slack, 0);
    assert_int_equal(t.n_named, 1);
    assert_int_equal(t.named[0], 1);
    /* a webhook and two destinations */
    assert_int_equal(krc_policy_route(&p, "web", "a-0", "app", NULL, &t), 1);
    assert_int_equal(t.slack, 1);
    assert_string_equal(t.webhook_url, HOOK_B);
    assert_int_equal(t.n_named, 2);
    assert_int_equal(t.named[0], 0);
    assert_int_equal(t.named[1], 2);
    /* no route: the Slack default and the default destinations */
    assert_int_equal(krc_policy_route(&p, "other", "a-0", "app", NULL, &t), 1);
    assert_int_equal(t.slack, 1);
    assert_string_equal(t.store_key, "webhook:default");
    assert_int_equal(t.n_named, 1);
    assert_int_equal(t.named[0], 1);
    /* no Slack at all: the default destination still gets it */
    p.webhook_url = NULL;
    assert_int_equal(krc_policy_route(&p, "other", "a-0", "app", NULL, &t), 1);
    assert_int_equal(t.slack, 0);
    assert_int_equal(t.n_named, 1);
    d[1].is_default = 0;
    assert_int_equal(krc_policy_route(&p, "other", "a-0", "app", NULL, &t), 0);
    for (int i = 0; i < 2; i++) {
        krc_pattern_cleanup(&r[i].namespace);
    }
}

static void test_routes_first_match_and_one_rule(void **state)
{
    struct krc_policy p = base();
    struct krc_route r[4];
    struct krc_policy_target t;
    (void)state;

    memset(r, 0, sizeof(r));
    pat(&r[0].namespace, "^team-(a|b)$", KRC_PATTERN_NAMESPACE);
    r[0].webhook_url = HOOK_B;
    pat(&r[1].pod, "pay", KRC_PATTERN_POD); /* plain: a pod-name prefix */
    r[1].channel = "#payments";
    pat(&r[2].namespace, "team_c", KRC_PATTERN_NAMESPACE); /* '_' is no DNS label character */
    r[2].channel = "#c";
    pat(&r[3].namespace, "ops", KRC_PATTERN_NAMESPACE); /* plain: the exact namespace */
    pat(&r[3].container, "*", KRC_PATTERN_CONTAINER);
    r[3].channel = "#ops";
    p.routes = r;
    p.n_routes = 4;

    assert_int_equal(krc_policy_route(&p, "team-b", "payroll-0", "app", NULL, &t), 1);
    assert_string_equal(t.webhook_url, HOOK_B); /* first match wins over route 1 */
    assert_null(t.channel);
    assert_string_equal(t.store_key, "route:0");
    assert_int_equal(krc_policy_route(&p, "shop", "payments-1", "app", NULL, &t), 1);
    assert_string_equal(t.webhook_url, HOOK_A); /* the route sets only the channel */
    assert_string_equal(t.channel, "#payments");
    assert_string_equal(t.store_key, "webhook:default");
    assert_int_equal(krc_policy_route(&p, "shop", "repay-1", "app", NULL, &t), 1);
    assert_null(t.channel); /* a plain pod pattern is a prefix, not a substring */
    /* not plain for a namespace: a regular expression searched anywhere */
    assert_int_equal(krc_policy_route(&p, "x-team_c-y", "w", "app", NULL, &t), 1);
    assert_string_equal(t.channel, "#c");
    assert_int_equal(krc_policy_route(&p, "ops", "w", "anything", NULL, &t), 1);
    assert_string_equal(t.channel, "#ops");
    assert_int_equal(krc_policy_route(&p, "ops-2", "w", "app", NULL, &t), 1);
    assert_null(t.channel); /* plain namespace: exact */
    /* the pod's channel still overrides a route's */
    assert_int_equal(krc_policy_route(&p, "shop", "pay-1", "app", "#mine", &t), 1);
    assert_string_equal(t.channel, "#mine");
    route_cleanup(r, 4);
}

static void test_silence_absolute_window(void **state)
{
    struct krc_policy p = base();
    struct krc_silence s;
    (void)state;

    memset(&s, 0, sizeof(s));
    pat(&s.namespace, "maint", KRC_PATTERN_NAMESPACE);
    s.start = HM(1, 0);
    s.end = HM(2, 0);
    p.silences = &s;
    p.n_silences = 1;
    assert_false(krc_policy_silenced(&p, "maint", "job-1", "app", HM(0, 59)));
    assert_true(krc_policy_silenced(&p, "maint", "job-1", "app", HM(1, 0))); /* start: in */
    assert_false(krc_policy_silenced(&p, "shop", "job-1", "app", HM(1, 30)));
    assert_true(krc_policy_silenced(&p, "maint", "job-1", "app", HM(2, 0) - 1));
    assert_false(krc_policy_silenced(&p, "maint", "job-1", "app", HM(2, 0))); /* end: out */
    krc_pattern_cleanup(&s.namespace);
}

static void test_silence_daily_across_midnight(void **state)
{
    struct krc_policy p = base();
    struct krc_silence s[2];
    (void)state;

    memset(s, 0, sizeof(s));
    pat(&s[0].namespace, "batch", KRC_PATTERN_NAMESPACE);
    s[0].daily_from = 22 * 60;
    s[0].daily_to = 6 * 60;
    pat(&s[1].pod, "^report-", KRC_PATTERN_POD);
    s[1].daily_from = 12 * 60;
    s[1].daily_to = 13 * 60;
    s[1].end = DAY + 86400 * 2; /* a daily window inside an absolute one */
    p.silences = s;
    p.n_silences = 2;

    assert_true(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(22, 0)));
    assert_true(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(23, 59)));
    assert_true(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(0, 0) + 86400)); /* 00:00 */
    assert_true(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(5, 59)));
    assert_false(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(6, 0)));
    assert_false(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(12, 0)));
    assert_false(krc_policy_silenced(&p, "batch", "etl-1", "app", HM(21, 59)));
    /* a window that does not wrap */
    assert_true(krc_policy_silenced(&p, "shop", "report-7", "app", HM(12, 30)));
    assert_false(krc_policy_silenced(&p, "shop", "report-7", "app", HM(13, 0)));
    assert_false(krc_policy_silenced(&p, "shop", "web-7", "app", HM(12, 30)));
    /* ... and past its end date */
    assert_false(krc_policy_silenced(&p, "shop", "report-7", "app", HM(12, 30) + 86400 * 2));
    krc_pattern_cleanup(&s[0].namespace);
    krc_pattern_cleanup(&s[1].pod);
}

/* The mute per pod became incidents (issue 27: alert/incident.h, test_incident.c); its
 * table remains the memory of the threads' parents by thread key, bounded. */
static void test_mute_threads_and_bounded_table(void **state)
{
    struct krc_policy_mutes m;
    struct krc_policy_mute *e;
    (void)state;

    assert_int_equal(krc_policy_mutes_init(&m, 2), 0);
    assert_null(krc_policy_mute_find(&m, "a/1", 0, T0));
    e = krc_policy_mute_find(&m, "a/1", 1, T0);
    assert_non_null(e);
    assert_string_equal(e->ts, "");
    snprintf(e->ts, sizeof(e->ts), "1700000000.000100");
    assert_string_equal(krc_policy_mute_find(&m, "a/1", 0, T0 + 6)->ts, "1700000000.000100");
    /* a full table forgets the thread remembered longest ago */
    assert_non_null(krc_policy_mute_find(&m, "b/1", 1, T0 + 10));
    assert_non_null(krc_policy_mute_find(&m, "c/1", 1, T0 + 20));
    assert_null(krc_policy_mute_find(&m, "a/1", 0, T0));
    assert_non_null(krc_policy_mute_find(&m, "b/1", 0, T0 + 21));
    krc_policy_mutes_cleanup(&m);
}

static void test_storm_start_summaries_and_end(void **state)
{
    struct krc_policy p = base();
    struct krc_policy_storm s;
    int64_t t = 5000000; /* monotonic ms */
    (void)state;

    memset(&s, 0, sizeof(s));
    p.storm_threshold = 3;
    /* three alerts were posted, one long before the window */
    krc_policy_storm_sent(&s, t - 60000);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(krc_policy_storm_arrival(&p, &s, t + i * 1000), 0);
        krc_policy_storm_sent(&s, t + i * 1000 + 500);
    }
    assert_false(s.active);
    /* the fourth within 30 s starts the storm */
    assert_int_equal(krc_policy_storm_arrival(&p, &s, t + 3000), 1);
    assert_true(s.active);
    assert_int_equal(s.alerted_before_storm, 3);
    assert_int_equal(s.summary_since_ms, t); /* the window's first restart */
    /* further arrivals do not start it again */
    assert_int_equal(krc_policy_storm_arrival(&p, &s, t + 4000), 0);
    /* the first summary is due storm_delay after the start, at once when stopping */
    assert_false(krc_policy_storm_summary_due(&s, 1, 0, t + 3000 + 9999));
    assert_true(krc_policy_storm_summary_due(&s, 1, 1, t + 3000 + 9999));
    assert_false(krc_policy_storm_summary_due(&s, 0, 0, t + 3000 + 10000));
    assert_true(krc_policy_storm_summary_due(&s, 1, 0, t + 3000 + 10000));
    krc_policy_storm_summarised(&p, &s, t + 13000);
    assert_int_equal(s.alerted_before_storm, 0);
    /* then once per window */
    assert_false(krc_policy_storm_summary_due(&s, 2, 0, t + 13000 + 29999));
    assert_true(krc_policy_storm_summary_due(&s, 2, 0, t + 13000 + 30000));
    /* over only when nothing is grouped and a whole window passed without a restart */
    assert_false(krc_policy_storm_over(&p, &s, 0, t + 4000 + 30000));
    assert_false(krc_policy_storm_over(&p, &s, 1, t + 4000 + 30001));
    assert_true(krc_policy_storm_over(&p, &s, 0, t + 4000 + 30001));
    assert_false(s.active);
    assert_false(krc_policy_storm_over(&p, &s, 0, t + 4000 + 30002));
}

static void test_storm_needs_the_restarts_within_one_window(void **state)
{
    struct krc_policy p = base();
    struct krc_policy_storm s;
    int64_t t = 1000;
    (void)state;

    memset(&s, 0, sizeof(s));
    p.storm_threshold = 3;
    /* one restart every 11 s: never more than 3 within 30 s */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(krc_policy_storm_arrival(&p, &s, t + i * 11000), 0);
    }
    /* storm guard off */
    p.storm_threshold = 0;
    for (int i = 0; i < 300; i++) {
        assert_int_equal(krc_policy_storm_arrival(&p, &s, t + 300000 + i), 0);
    }
    /* a ring full of old arrivals does not start one either */
    p.storm_threshold = 3;
    memset(&s, 0, sizeof(s));
    for (int i = 0; i < KRC_POLICY_STORM_ARRIVALS + 10; i++) {
        assert_int_equal(krc_policy_storm_arrival(&p, &s, t + i * 11000), 0);
    }
}

static void test_log_ignore(void **state)
{
    struct krc_policy p = base();
    struct krc_pattern re[2];
    const char log[] = "x\nthis was an expected shutdown\nTAIL";
    (void)state;

    assert_int_equal(krc_pattern_compile(&re[0], "expected\\s+shutdown", KRC_PATTERN_TEXT,
                                         KRC_PATTERN_NEWLINE, "logIgnorePatterns", NULL),
                     0);
    assert_int_equal(
        krc_pattern_compile(&re[1], "TAIL$", KRC_PATTERN_TEXT, KRC_PATTERN_NEWLINE, "t", NULL), 0);
    assert_false(krc_policy_log_ignored(&p, log, sizeof(log) - 1)); /* no patterns */
    p.log_ignore = re;
    p.n_log_ignore = 1;
    assert_true(krc_policy_log_ignored(&p, log, sizeof(log) - 1));
    assert_false(krc_policy_log_ignored(&p, "panic: boom\n", 12));
    assert_false(krc_policy_log_ignored(&p, NULL, 0));
    /* only len bytes are read */
    p.log_ignore = &re[1];
    assert_true(krc_policy_log_ignored(&p, log, sizeof(log) - 1));
    assert_false(krc_policy_log_ignored(&p, log, sizeof(log) - 2));
    krc_pattern_cleanup(&re[0]);
    krc_pattern_cleanup(&re[1]);
}

/* --- routes and silences in the configuration file ------------------------- */

static const char *write_tmp(const char *text)
{
    static char path[64];
    FILE *f;
    snprintf(path, sizeof(path), "/tmp/krc-test-policy-%d.yaml", (int)getpid());
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
    assert_non_null(
        strstr(errors, "routes[3] needs webhookUrl, webhookUrlEnv, channel or destinations"));
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
        cmocka_unit_test(test_route_defaults_and_channel_override),
        cmocka_unit_test(test_routes_first_match_and_one_rule),
        cmocka_unit_test(test_route_named_destinations),
        cmocka_unit_test(test_silence_absolute_window),
        cmocka_unit_test(test_silence_daily_across_midnight),
        cmocka_unit_test(test_mute_threads_and_bounded_table),
        cmocka_unit_test(test_storm_start_summaries_and_end),
        cmocka_unit_test(test_storm_needs_the_restarts_within_one_window),
        cmocka_unit_test(test_log_ignore),
        cmocka_unit_test(test_config_routes_and_silences),
        cmocka_unit_test(test_config_route_and_silence_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
