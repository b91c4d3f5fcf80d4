/* explain: the text and JSON reports of a diagnosis built here (not by the
 * engine), so that confidence, next step, commands and what was not checked
 * are rendered whatever the rules produce. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/diagnose/diagnose.h"
#include "krc/cli/explain.h"
#include "krc/util/mem.h"
#include "krc/model/report.h"

static char *xdup(const char *s)
{
    char *c = krc_strdup(s);
    assert_non_null(c);
    return c;
}

static char **strings(size_t n, const char *const *v)
{
    char **a = krc_calloc(n, sizeof(char *));
    assert_non_null(a);
    for (size_t i = 0; i < n; i++) {
        a[i] = xdup(v[i]);
    }
    return a;
}

static void fill(struct krc_report *r, struct krc_diagnosis *d)
{
    static const char *const ev[] = {"lastState.terminated: reason=Error exitCode=137 (SIGKILL)"};
    static const char *const un[] = {
        "no pod events were available, so a liveness kill cannot be ruled out",
        "no node was given, so node memory pressure cannot be ruled out"};
    static const char *const cmds[] = {"kubectl logs -n shop web-1 -c app --previous",
                                       "kubectl get events -n shop --field-selector "
                                       "involvedObject.name=web-1"};

    krc_report_init(r);
    krc_diagnosis_init(d);
    r->namespace = xdup("shop");
    r->name = xdup("web-1");
    d->container = xdup("app");
    d->cause = KRC_CAUSE_KILLED;
    d->has_termination = 1;
    d->exit_code = 137;
    d->signal = 9;
    d->signal_name = "SIGKILL";
    d->reason = xdup("Error");
    d->restart_count = 3;
    d->restart_count_known = 1;
    d->summary = xdup("Container app was killed with SIGKILL (exit 137)");
    d->evidence = strings(1, ev);
    d->n_evidence = 1;
    d->confidence = KRC_CONFIDENCE_MEDIUM;
    d->unchecked = strings(2, un);
    d->n_unchecked = 2;
    d->next_step = xdup("Look for a kernel OOM kill or a probe kill in the node's events");
    d->commands = strings(2, cmds);
    d->n_commands = 2;
}

static char *render(int json, const struct krc_report *r, const struct krc_diagnosis *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    if (json) {
        assert_int_equal(krc_explain_write_json(f, r, d), 0);
    } else {
        krc_explain_write_text(f, r, d);
    }
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_text(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    char *t;

    (void)state;
    fill(&r, &d);
    t = render(0, &r, &d);
    assert_non_null(strstr(t, "Container:  app, 3 restarts\n"));
    assert_non_null(strstr(t, "Last exit:  code 137 (SIGKILL), reason Error"));
    assert_non_null(strstr(t, "\nCause:      killed (confidence: medium)\n"
                              "Summary:    Container app was killed with SIGKILL (exit 137)\n"
                              "Evidence:\n"
                              "  - lastState.terminated: reason=Error exitCode=137 (SIGKILL)\n"
                              "Not checked:\n"
                              "  - no pod events were available, so a liveness kill cannot be "
                              "ruled out\n"
                              "  - no node was given, so node memory pressure cannot be ruled "
                              "out\n"
                              "Next step:  Look for a kernel OOM kill or a probe kill in the "
                              "node's events\n"
                              "Commands:\n"
                              "  $ kubectl logs -n shop web-1 -c app --previous\n"
                              "  $ kubectl get events -n shop --field-selector "
                              "involvedObject.name=web-1\n"));
    free(t);

    /* no termination in the files, nothing beyond the cause: no made-up
     * exit code, no empty headings */
    krc_diagnosis_cleanup(&d);
    d.container = xdup("app");
    d.cause = KRC_CAUSE_UNKNOWN;
    d.restart_count = 5;
    d.summary = xdup("not enough evidence");
    t = render(0, &r, &d);
    assert_non_null(strstr(t, "Container:  app, restart count not given\n"));
    assert_non_null(strstr(t, "Last exit:  not in the given files\n"));
    assert_non_null(strstr(t, "Cause:      unknown (confidence: low)\n"));
    assert_null(strstr(t, "code 0"));
    assert_null(strstr(t, "Not checked"));
    assert_null(strstr(t, "Next step"));
    assert_null(strstr(t, "Commands"));
    free(t);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

static void test_json(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *o;
    const cJSON *a;
    char *t;

    (void)state;
    fill(&r, &d);
    t = render(1, &r, &d);
    o = cJSON_Parse(t);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "cause")->valuestring, "killed");
    assert_string_equal(cJSON_GetObjectItem(o, "confidence")->valuestring, "medium");
    assert_int_equal(cJSON_GetObjectItem(o, "exit_code")->valueint, 137);
    assert_int_equal(cJSON_GetObjectItem(o, "restart_count")->valueint, 3);
    assert_string_equal(cJSON_GetObjectItem(o, "next_step")->valuestring,
                        "Look for a kernel OOM kill or a probe kill in the node's events");
    a = cJSON_GetObjectItem(o, "commands");
    assert_int_equal(cJSON_GetArraySize(a), 2);
    assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring,
                        "kubectl logs -n shop web-1 -c app --previous");
    a = cJSON_GetObjectItem(o, "unchecked");
    assert_int_equal(cJSON_GetArraySize(a), 2);
    assert_string_equal(cJSON_GetArrayItem(a, 1)->valuestring,
                        "no node was given, so node memory pressure cannot be ruled out");
    cJSON_Delete(o);
    free(t);

    krc_diagnosis_cleanup(&d);
    d.container = xdup("app");
    d.summary = xdup("not enough evidence");
    t = render(1, &r, &d);
    o = cJSON_Parse(t);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "exit_code")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "restart_count")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "next_step")));
    assert_string_equal(cJSON_GetObjectItem(o, "confidence")->valuestring, "low");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "commands")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "unchecked")), 0);
    cJSON_Delete(o);
    free(t);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

/* Text from the input files (names, reason, the diagnosis quoting a log
 * line) with escape sequences, C1 controls and newlines: the text report
 * shows them as symbols on the lines they belong to; the JSON escapes them. */
static void test_terminal_safe(void **state)
{
    static const char *const ev[] = {"log line: \x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\"};
    static const char *const cmds[] = {"kubectl logs -n shop web\x1b[8m-1"};
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *o;
    char *t;

    (void)state;
    fill(&r, &d);
    krc_free(r.name);
    r.name = xdup("web\x1b]0;pwned\x07-1");
    r.owner_kind = xdup("ReplicaSet\xc2\x9b"
                        "2J");
    r.owner_name = xdup("web\nCause:      fake");
    r.node_name = xdup("node\x1b[31m-1");
    krc_free(d.container);
    d.container = xdup("app\x1b[2J");
    krc_free(d.reason);
    d.reason = xdup("Error\x1b[5m");
    krc_free(d.summary);
    d.summary = xdup("killed\r\x1b[Kfake summary");
    krc_free(d.next_step);
    d.next_step = xdup("look\x7f");
    for (size_t i = 0; i < d.n_evidence; i++) {
        krc_free(d.evidence[i]);
    }
    krc_free(d.evidence);
    d.evidence = strings(1, ev);
    for (size_t i = 0; i < d.n_commands; i++) {
        krc_free(d.commands[i]);
    }
    krc_free(d.commands);
    d.commands = strings(1, cmds);
    d.n_commands = 1;

    t = render(0, &r, &d);
    assert_null(strchr(t, '\x1b'));
    assert_null(strchr(t, '\x07'));
    assert_null(strchr(t, '\x7f'));
    assert_null(strchr(t, '\r'));
    assert_null(strstr(t, "\xc2\x9b"));
    assert_non_null(strstr(t, "Pod:        shop/web\xe2\x90\x9b]0;pwned\xe2\x90\x87-1 "
                              "(ReplicaSet\xef\xbf\xbd"
                              "2J web Cause:      fake) on node "
                              "node\xe2\x90\x9b[31m-1\n"));
    assert_non_null(strstr(t, "\nContainer:  app\xe2\x90\x9b[2J, 3 restarts\n"));
    assert_non_null(strstr(t, "reason Error\xe2\x90\x9b[5m, finished"));
    assert_non_null(strstr(t, "\nSummary:    killed \xe2\x90\x9b[Kfake summary\n"));
    assert_non_null(strstr(t, "\n  - log line: \xe2\x90\x9b]8;;http://evil\xe2\x90\x9b\\click"));
    assert_non_null(strstr(t, "\nNext step:  look\xe2\x90\xa1\n"));
    assert_non_null(strstr(t, "\n  $ kubectl logs -n shop web\xe2\x90\x9b[8m-1\n"));
    /* the fake "Cause:" of the owner name is not a line of its own */
    assert_null(strstr(t, "\nCause:      fake"));
    free(t);

    /* JSON: cJSON escapes the C0 controls; the values are kept as they were */
    t = render(1, &r, &d);
    assert_null(strchr(t, '\x1b'));
    assert_non_null(strstr(t, "\"web\\u001b]0;pwned\\u0007-1\""));
    o = cJSON_Parse(t);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "pod")->valuestring, "web\x1b]0;pwned\x07-1");
    cJSON_Delete(o);
    free(t);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_terminal_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
