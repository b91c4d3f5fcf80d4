/* The configuration loader reading the built-in kinds of destination from
 * their settings tables (config/destinations.c, alert/dest/): every mistake
 * one file can hold. The expected text was the output of `krc config
 * print` for this file by the binary of main at 16884f4 (before the kinds
 * became plugins), with the file's and the secrets' directory put back in;
 * since issue 25 an endpoint's mistake is said at its key, with what is
 * wrong with it (scheme, host, plain http), and a kind with an endpoint
 * allows allowInsecureHttp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/alert/dest.h"
#include "krc/config/config.h"
#include "krc/util/mem.h"

/* @DIR@: the directory of the secret files */
static const char bad_yaml[] = "destinations:\n"
                               "  - name: a\n"
                               "    type: slack-webhook\n"
                               "    url: http://hooks.example.test/x\n"
                               "    colour: red\n"
                               "  - name: b\n"
                               "    type: slack-webhook\n"
                               "  - name: c\n"
                               "    type: slack-api\n"
                               "    tokenEnv: NOPE_UNSET_TOKEN\n"
                               "    apiUrl: http://slack.example.test/api\n"
                               "  - name: d\n"
                               "    type: pagerduty\n"
                               "    routingKeyFile: @DIR@/short.key\n"
                               "    url: http://events.example.test/\n"
                               "  - name: e\n"
                               "    type: pagerduty\n"
                               "  - name: f\n"
                               "    type: webhook\n"
                               "    url: https://h.example.test/\n"
                               "    secretEnv: NOPE_UNSET_SECRET\n"
                               "    headersFile: @DIR@/bad.headers\n"
                               "  - name: g\n"
                               "    type: webhook\n"
                               "    urlEnv: NOPE_URL\n"
                               "    url: https://x.example.test\n"
                               "    secretFile: @DIR@/missing.key\n"
                               "  - name: h\n"
                               "    type: teams\n"
                               "    urlFile: @DIR@/missing.url\n"
                               "  - name: i\n"
                               "    type: google-chat\n"
                               "    url: ftp://x\n"
                               "  - name: j\n"
                               "    type: kubernetes-event\n"
                               "    url: https://x.example.test\n"
                               "  - name: k\n"
                               "    type: gogle-chat\n"
                               "  - name: l\n"
                               "    type: slack-api\n"
                               "    tokenFile: @DIR@/good.key\n"
                               "    channel: [a, b]\n"
                               "  - name: m\n"
                               "    type: slack-api\n"
                               "    tokenFile: @DIR@/good.key\n"
                               "    default: maybe\n"
                               "  - name: n\n"
                               "    type: webhook\n"
                               "    headersEnv: X\n"
                               "  - name: o\n"
                               "    type: pagerduty\n"
                               "    routingKeyEnv: NOPE_RK\n"
                               "    routingKeyFile: @DIR@/good.key\n"
                               "  - name: p\n"
                               "    type: slack-webhook\n"
                               "    url: https://hooks.slack.com/services/T/B/x\n"
                               "    channel: \"#ops\"\n"
                               "routes:\n"
                               "  - namespace: shop\n"
                               "    destinations: [p, q]\n";

/* @DIR@: that directory, @FILE@: the configuration file */
static const char expected[] =
    "@FILE@:5:5: destinations[0] (a): unknown key \"colour\" (allowed: "
    "name|type|default|allowInsecureHttp|url|urlEnv|urlFile|channel)\n"
    "@FILE@:6:5: destinations[1] (b): a slack-webhook destination needs url, urlEnv or "
    "urlFile\n"
    "@FILE@:10:15: destinations[2] (c).tokenEnv: environment variable NOPE_UNSET_TOKEN is "
    "not set\n"
    "@FILE@:8:5: destinations[2] (c): a slack-api destination needs tokenEnv or tokenFile\n"
    "@FILE@:8:5: destinations[2] (c): a slack-api destination needs a channel\n"
    "@FILE@:11:13: destinations[2] (c).apiUrl: the URL is plain http:// to a host that is "
    "not loopback: the URL and its token would cross the network unencrypted; use https://, "
    "or set allowInsecureHttp: true\n"
    "@FILE@:15:10: destinations[3] (d).url: the URL is plain http:// to a host that is not "
    "loopback: the URL and its token would cross the network unencrypted; use https://, or "
    "set allowInsecureHttp: true\n"
    "@FILE@:12:5: destinations[3] (d): the routing key must be 32 characters (an Events API "
    "v2 integration key), not 1\n"
    "@FILE@:16:5: destinations[4] (e): a pagerduty destination needs routingKeyEnv or "
    "routingKeyFile\n"
    "@FILE@:21:16: destinations[5] (f).secretEnv: environment variable NOPE_UNSET_SECRET is "
    "not set\n"
    "@FILE@:18:5: destinations[5] (f): a webhook destination needs secretEnv or secretFile\n"
    "@FILE@:22:18: destinations[5] (f).headersFile: @DIR@/bad.headers: line 1: the header "
    "name has a character not allowed\n"
    "@FILE@:25:13: destinations[6] (g): give only one of url,, urlEnv and urlFile\n"
    "@FILE@:23:5: destinations[6] (g): a webhook destination needs url, urlEnv or urlFile\n"
    "@FILE@:27:17: destinations[6] (g).secretFile: cannot read @DIR@/missing.key: No such "
    "file or directory\n"
    "@FILE@:23:5: destinations[6] (g): a webhook destination needs secretEnv or secretFile\n"
    "@FILE@:30:14: destinations[7] (h).urlFile: cannot read @DIR@/missing.url: No such file "
    "or directory\n"
    "@FILE@:28:5: destinations[7] (h): a teams destination needs url, urlEnv or urlFile\n"
    "@FILE@:33:10: destinations[8] (i).url: the URL has the scheme \"ftp://\"; it must be "
    "https://\n"
    "@FILE@:36:5: destinations[9] (j): unknown key \"url\" (allowed: name|type|default)\n"
    "@FILE@:38:11: destinations[10] (k).type: unknown destination type \"gogle-chat\" (did "
    "you mean \"google-chat\"? types: slack-webhook, slack-api, pagerduty, teams, "
    "google-chat, webhook, kubernetes-event)\n"
    "@FILE@:42:14: destinations[11] (l).channel must be a single value\n"
    "@FILE@:43:5: destinations[12] (m).default must be true or false\n"
    "@FILE@:43:5: destinations[12] (m): a slack-api destination needs a channel\n"
    "@FILE@:49:5: destinations[13] (n): unknown key \"headersEnv\" (allowed: "
    "name|type|default|allowInsecureHttp|url|urlEnv|urlFile|secretEnv|secretFile|headersFile)\n"
    "@FILE@:52:20: destinations[14] (o): give only one of , routingKeyEnv and "
    "routingKeyFile\n"
    "@FILE@:50:5: destinations[14] (o): a pagerduty destination needs routingKeyEnv or "
    "routingKeyFile\n"
    "@FILE@:60:23: routes[0].destinations: no destination is named \"q\" (did you mean "
    "\"b\"?)\n";

/* text with every @DIR@ and @FILE@ replaced (krc_free it). */
static char *fill(const char *text, const char *dir, const char *file)
{
    size_t cap = strlen(text) * 4 + 4096;
    char *out = krc_malloc(cap);
    size_t n = 0;

    assert_non_null(out);
    for (const char *p = text; *p != '\0';) {
        const char *v = strncmp(p, "@DIR@", 5) == 0    ? dir
                        : strncmp(p, "@FILE@", 6) == 0 ? file
                                                       : NULL;
        if (v != NULL) {
            assert_true(n + strlen(v) < cap);
            memcpy(out + n, v, strlen(v));
            n += strlen(v);
            p += v == dir ? 5 : 6;
        } else {
            assert_true(n + 1 < cap);
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    return out;
}

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_every_mistake_as_before(void **state)
{
    char dir[] = "/tmp/krc-dest-msgs-XXXXXX";
    char path[256];
    char *text;
    char *want;
    char *errors = NULL;
    struct krc_config cfg;
    struct krc_error err;
    (void)state;

    assert_non_null(mkdtemp(dir));
    put_file(dir, "short.key", "x\n");
    put_file(dir, "bad.headers", "Bad Header: v\nX-Ok: 1\n");
    put_file(dir, "good.key", "0123456789abcdef0123456789abcdeX\n");
    snprintf(path, sizeof(path), "%s/bad.yaml", dir);
    text = fill(bad_yaml, dir, path);
    put_file(dir, "bad.yaml", text);
    want = fill(expected, dir, path);
    unsetenv("NOPE_UNSET_TOKEN");
    unsetenv("NOPE_UNSET_SECRET");
    unsetenv("NOPE_URL");
    unsetenv("NOPE_RK");

    krc_config_init(&cfg);
    krc_error_clear(&err);
    assert_true(krc_config_load_file(&cfg, path, &errors, &err) < 0);
    assert_non_null(errors);
    assert_string_equal(errors, want);

    free(errors);
    krc_config_cleanup(&cfg);
    krc_free(text);
    krc_free(want);
    for (const char *f = "short.key\0bad.headers\0good.key\0bad.yaml\0"; *f; f += strlen(f) + 1) {
        snprintf(path, sizeof(path), "%s/%s", dir, f);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_mistake_as_before),
    };
    (void)krc_dest_registry_init(NULL, 0); /* the kinds of destination, as main does */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
