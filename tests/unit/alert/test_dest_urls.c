/* Destination URLs checked before they are needed, and answers explained
 * (issue 25): the generic rules (config/destinations.c), each kind's URL
 * shape (its url setting's check) and each kind's words for an answer
 * (krc_sink_explain with the kind's explain). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "krc/alert/dest.h"
#include "krc/alert/sink.h"
#include "krc/config/destinations.h"
#include "krc/util/url.h"

static int check(const char *kind, const char *key, const char *url, int http, char *why)
{
    const struct krc_dest_schema *k = kind != NULL ? krc_dest_schema_find(kind) : NULL;

    why[0] = '\0';
    if (kind != NULL) {
        assert_non_null(k);
    }
    return krc_dest_check_url(k, key, url, http, "allowInsecureHttp: true", why, 300);
}

static void test_generic_rules(void **state)
{
    char why[300];
    (void)state;

    assert_int_equal(check(NULL, NULL, "https://example.com/x", 0, why), 0);
    assert_int_equal(check(NULL, NULL, "htps://hooks.slack.com/services/T/B/x", 0, why), -1);
    assert_string_equal(why, "has the scheme \"htps://\"; it must be https:// (a typo?)");
    assert_int_equal(check(NULL, NULL, "hooks.slack.com/services/T/B/x", 0, why), -1);
    assert_non_null(strstr(why, "has no scheme"));
    assert_int_equal(check(NULL, NULL, "https:///x", 0, why), -1);
    assert_non_null(strstr(why, "names no host"));
    assert_int_equal(check(NULL, NULL, "https://h:99999/x", 0, why), -1);
    assert_non_null(strstr(why, "bad port"));
    assert_int_equal(check(NULL, NULL, "https://h/x\n", 0, why), -1);
    assert_non_null(strstr(why, "control character"));
    /* plain http: loopback only, or with the opt-in; the host is never named */
    assert_int_equal(check(NULL, NULL, "http://127.0.0.1:8080/x", 0, why), 0);
    assert_int_equal(check(NULL, NULL, "http://localhost/x", 0, why), 0);
    assert_int_equal(check(NULL, NULL, "http://[::1]:9/x", 0, why), 0);
    assert_int_equal(check(NULL, NULL, "http://127.0.0.1.evil.example/x", 0, why), -1);
    assert_int_equal(check(NULL, NULL, "http://user@10.0.0.1/x", 0, why), -1);
    assert_null(strstr(why, "10.0.0.1"));
    assert_non_null(strstr(why, "or set allowInsecureHttp: true"));
    assert_int_equal(check(NULL, NULL, "http://10.0.0.1/x", 1, why), 0);
    /* the placeholder of krc config print */
    assert_int_equal(check(NULL, NULL, "[REDACTED]", 0, why), -1);
    assert_non_null(strstr(why, "placeholder"));
}

static void test_provider_shapes(void **state)
{
    char why[300];
    (void)state;

    assert_int_equal(
        check("slack-webhook", "url", "https://hooks.slack.com/services/T01/B02/abc", 0, why), 0);
    assert_int_equal(
        check("slack-webhook", "url", "https://hooks.slack.com/services/T01/B02", 0, why), -1);
    assert_non_null(strstr(why, "not an incoming webhook's shape"));
    assert_int_equal(
        check("slack-webhook", "url", "https://hooks.slack.com/triggers/T1/2/x", 0, why), -1);
    assert_non_null(strstr(why, "Workflow Builder"));
    /* another host: a proxy, taken as it is */
    assert_int_equal(check("slack-webhook", "url", "https://relay.example.com/any/path", 0, why),
                     0);
    assert_int_equal(check("slack-api", "apiUrl", "https://slack.com/api", 0, why), 0);
    assert_int_equal(check("slack-api", "apiUrl", "https://slack.com/api/chat.postMessage", 0, why),
                     -1);
    assert_int_equal(check("slack-api", "apiUrl", "https://hooks.slack.com/services/T/B/x", 0, why),
                     -1);
    assert_non_null(strstr(why, "incoming webhook's"));
    assert_int_equal(check("pagerduty", "url", "https://events.pagerduty.com/v2/enqueue", 0, why),
                     0);
    assert_int_equal(
        check("pagerduty", "url", "https://events.eu.pagerduty.com/v2/enqueue", 0, why), 0);
    assert_int_equal(check("pagerduty", "url", "https://events.pagerduty.com/v1/enqueue", 0, why),
                     -1);
    assert_int_equal(check("google-chat", "url",
                           "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t", 0,
                           why),
                     0);
    assert_int_equal(check("google-chat", "url",
                           "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k", 0, why),
                     -1);
    assert_int_equal(check("teams", "url",
                           "https://prod-1.westus.logic.azure.com:443/workflows/a/triggers/manual/"
                           "paths/invoke?api-version=2016-06-01&sp=x&sv=1.0&sig=s",
                           0, why),
                     0);
    assert_int_equal(check("teams", "url",
                           "https://prod-1.westus.logic.azure.com:443/workflows/a/triggers/manual/"
                           "paths/invoke?api-version=2016-06-01",
                           0, why),
                     -1);
    assert_int_equal(check("webhook", "url", "https://any.example/where", 0, why), 0);
}

static void explain(const char *kind, long status, const char *error, const char *want)
{
    char out[300];
    const struct krc_dest_kind *k = krc_dest_kind_find(kind);

    assert_non_null(k);
    krc_sink_explain(k->ops, status, error, out, sizeof(out));
    assert_string_equal(out, want);
}

static void test_answers_explained(void **state)
{
    (void)state;
    explain("slack-webhook", 404, "no_service",
            "404 no_service: this webhook was revoked or mistyped");
    explain("slack-webhook", 403, "invalid_token",
            "403 invalid_token: the token is not valid (revoked or mistyped)");
    explain("slack-webhook", 200, "", "200 ok: sent");
    explain("slack-api", 200, "invalid_auth",
            "200 invalid_auth: the bot token is not valid (revoked or mistyped)");
    explain("slack-api", 200, "not_in_channel",
            "200 not_in_channel: the bot is not in the channel: invite it (/invite @BOT)");
    /* a code the kind has no words for: refused, not "sent" */
    explain("slack-api", 200, "something_new", "200 something_new: refused by the service");
    explain("pagerduty", 202, "", "202 ok: sent");
    explain("teams", 404, "",
            "404: no such flow: it was deleted or turned off, or the URL is "
            "mistyped");
    explain("google-chat", 403, "x",
            "403 x: the webhook's key or token is not valid: the webhook "
            "was deleted or mistyped");
    explain("webhook", 500, "oops", "500 oops: the service failed; a later try may work");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generic_rules),
        cmocka_unit_test(test_provider_shapes),
        cmocka_unit_test(test_answers_explained),
    };
    (void)krc_dest_registry_init(NULL, 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
