/* The Go tool's Slack settings as a destination: the configuration loader
 * makes the implicit destination (never one of `destinations:`), and its
 * kind's operations give the outbox keys and lanes every earlier version of
 * krc used ("webhook:default", "route:N", "api"), for a restart and for an
 * outbox row an earlier process left pending. A declared Slack destination
 * keeps "dest:NAME". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "krc/alert/dest.h"
#include "krc/config/config.h"
#include "krc/config/destinations.h"
#include "krc/util/error.h"
#include "krc_test.h"

#define HOOK_A "https://hooks.example.test/services/T1/B1/aaaa"
#define HOOK_B "https://hooks.example.test/services/T1/B2/bbbb"

static void test_config_makes_the_implicit_destination(void **state)
{
    struct krc_config cfg;
    struct krc_error e;
    char *errors = NULL;
    char *argv[] = {"run", "--slack-channel", "#ops", NULL};
    (void)state;

    unsetenv("SLACK_BOT_TOKEN");
    setenv("SLACK_WEBHOOK_URL", HOOK_A, 1);
    krc_config_init(&cfg);
    krc_error_clear(&e);
    assert_int_equal(krc_config_from_args(&cfg, 3, argv, &errors, &e), 0);
    assert_non_null(cfg.slack_env.kind);
    assert_string_equal(cfg.slack_env.kind->name, "slack-webhook");
    assert_true(cfg.slack_env.implicit);
    assert_string_equal(cfg.slack_env.url, HOOK_A);
    assert_string_equal(cfg.slack_env.channel, "#ops");
    assert_null(cfg.slack_env.secret);
    /* not a declared destination: `krc config print` and the routes' names never see it */
    assert_int_equal(cfg.n_destinations, 0);
    krc_config_cleanup(&cfg);

    setenv("SLACK_BOT_TOKEN", "xoxb-test-token-123", 1);
    krc_config_init(&cfg);
    assert_int_equal(krc_config_from_args(&cfg, 3, argv, &errors, &e), 0);
    assert_string_equal(cfg.slack_env.kind->name, "slack-api");
    assert_string_equal(cfg.slack_env.secret, "xoxb-test-token-123");
    assert_null(cfg.slack_env.url); /* the Web API: the webhook is not used */
    /* the Web API base: the configuration's (Slack's by default) */
    assert_string_equal(cfg.slack_api_url, "https://slack.com/api");
    assert_string_equal(cfg.slack_env.api_url, "https://slack.com/api");
    krc_config_cleanup(&cfg);
    unsetenv("SLACK_BOT_TOKEN");
    unsetenv("SLACK_WEBHOOK_URL");
}

static void test_targets_of_a_restart(void **state)
{
    struct krc_destination env;
    struct krc_destination declared;
    struct krc_dest_target t;
    struct krc_dest_route dflt = {HOOK_A, "#ops", -1};
    struct krc_dest_route route2 = {HOOK_B, NULL, 2};
    (void)state;

    krc_dest_slack_env(HOOK_A, "#ops", NULL, NULL, &env);
    krc_dest_target_of(&env, &dflt, &t);
    assert_string_equal(t.key, "webhook:default");
    assert_string_equal(t.lane, HOOK_A);
    assert_string_equal(t.url, HOOK_A);
    assert_string_equal(t.channel, "#ops");
    krc_dest_target_of(&env, &route2, &t);
    assert_string_equal(t.key, "route:2"); /* the route's index, never its URL */
    assert_string_equal(t.lane, HOOK_B);
    assert_null(t.channel);

    krc_dest_slack_env(HOOK_A, "#ops", "xoxb-1", "http://127.0.0.1:9/api", &env);
    assert_string_equal(env.kind->name, "slack-api");
    krc_dest_target_of(&env, &route2, &t);
    assert_string_equal(t.key, "api");
    assert_string_equal(t.lane, "api");
    assert_null(t.url);

    /* a declared destination of the same kinds keeps its own key and lane */
    memset(&declared, 0, sizeof(declared));
    declared.name = "ops";
    declared.kind = krc_dest_schema_find("slack-webhook");
    declared.url = HOOK_B;
    declared.channel = "#team";
    krc_dest_target_of(&declared, &dflt, &t);
    assert_string_equal(t.key, "dest:ops");
    assert_string_equal(t.lane, "dest:ops");
    assert_string_equal(t.url, HOOK_B);
    assert_string_equal(t.channel, "#team");
}

static void test_targets_of_an_earlier_row(void **state)
{
    struct krc_destination env;
    struct krc_route routes[2];
    struct krc_dest_target t;
    (void)state;

    memset(routes, 0, sizeof(routes));
    routes[0].webhook_url = HOOK_B;
    routes[1].channel = "#only-a-channel";
    krc_dest_slack_env(HOOK_A, NULL, NULL, NULL, &env);
    assert_int_equal(krc_dest_target_of_key(&env, "webhook:default", "#c", routes, 2, &t), 1);
    assert_string_equal(t.key, "webhook:default");
    assert_string_equal(t.lane, HOOK_A);
    assert_string_equal(t.channel, "#c");
    assert_int_equal(krc_dest_target_of_key(&env, "route:0", NULL, routes, 2, &t), 1);
    assert_string_equal(t.key, "route:0");
    assert_string_equal(t.url, HOOK_B);
    /* gone from the configuration (or never a webhook's): not resumable */
    assert_int_equal(krc_dest_target_of_key(&env, "route:1", NULL, routes, 2, &t), KRC_ENOTFOUND);
    assert_int_equal(krc_dest_target_of_key(&env, "route:7", NULL, routes, 2, &t), KRC_ENOTFOUND);
    assert_int_equal(krc_dest_target_of_key(&env, "route:0x", NULL, routes, 2, &t), KRC_ENOTFOUND);
    assert_int_equal(krc_dest_target_of_key(&env, "api", NULL, routes, 2, &t), KRC_ENOTFOUND);
    /* a declared destination's row is not the implicit one's */
    assert_int_equal(krc_dest_target_of_key(&env, "dest:ops", NULL, routes, 2, &t), 0);
    krc_dest_slack_env("", NULL, NULL, NULL, &env);
    assert_int_equal(krc_dest_target_of_key(&env, "webhook:default", NULL, routes, 2, &t),
                     KRC_ENOTFOUND);

    /* the Web API: every row that is not a declared destination's, under its own key */
    krc_dest_slack_env(HOOK_A, "#ops", "xoxb-1", NULL, &env);
    assert_int_equal(krc_dest_target_of_key(&env, "api", "C123", routes, 2, &t), 1);
    assert_string_equal(t.key, "api");
    assert_string_equal(t.lane, "api");
    assert_string_equal(t.channel, "C123");
    assert_int_equal(krc_dest_target_of_key(&env, "webhook:default", "#x", routes, 2, &t), 1);
    assert_string_equal(t.key, "webhook:default");
    assert_string_equal(t.lane, "api");
    assert_int_equal(krc_dest_target_of_key(&env, "dest:ops", NULL, routes, 2, &t), 0);
}

static void test_sink_options_of_the_web_api(void **state)
{
    struct krc_destination env;
    struct krc_sink_options so;
    (void)state;

    krc_sink_options_defaults(&so);
    krc_dest_slack_env(NULL, "#ops", "xoxb-1", NULL, &env);
    krc_dest_sink_options(&env, &so);
    assert_string_equal(so.bot_token, "xoxb-1");
    assert_string_equal(so.api_url, "https://slack.com/api");
    krc_dest_slack_env(NULL, "#ops", "xoxb-1", "http://127.0.0.1:9/api", &env);
    krc_dest_sink_options(&env, &so);
    assert_string_equal(so.api_url, "http://127.0.0.1:9/api");
    assert_true(krc_dest_threads(&env));
    krc_dest_slack_env(HOOK_A, "#ops", NULL, NULL, &env);
    assert_false(krc_dest_threads(&env));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_makes_the_implicit_destination),
        cmocka_unit_test(test_targets_of_a_restart),
        cmocka_unit_test(test_targets_of_an_earlier_row),
        cmocka_unit_test(test_sink_options_of_the_web_api),
    };
    (void)krc_dest_registry_init(NULL, 0); /* the kinds of destination, as main does */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
