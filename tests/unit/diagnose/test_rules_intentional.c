/* diagnose: intentional restarts and stops (issue 26; docs/causes.md rules
 * 10a-10b) on the Kubernetes 1.35-shaped pod of
 * tests/fixtures/k8s-1.35/pod-restart-fields.json, changed field by field:
 *  - restart_rule: a restartPolicyRules rule with action Restart whose
 *    exitCodes (In / NotIn) hold the exit code; no match gives the old
 *    cause; the first rule that holds decides; OOMKilled still wins;
 *  - terminated by the reported stop signal (exit 128+N), not app_error;
 *  - a DisruptionTarget condition named in the evidence with its message;
 *  - "intentional": true in the JSON of krc explain and of the report only
 *    when set. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/cli/explain.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/store/store.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define FIXTURE KRC_FIXTURES "/k8s-1.35/pod-restart-fields.json"

/* The fixture's pod, to be changed by the tests. Its trainer container has
 * the rules [Restart In [42, 43], RestartAllContainers In [88]], stop
 * signal SIGUSR1 and last exit 42 (Error). Its device health is removed:
 * this file tests the intentional rules, not the device rule. */
static cJSON *load_pod(void)
{
    size_t len = 0;
    char *text = krc_test_read_file(FIXTURE, &len);
    cJSON *pod;

    assert_non_null(text);
    pod = cJSON_ParseWithLength(text, len);
    free(text);
    assert_non_null(pod);
    return pod;
}

static cJSON *at(cJSON *o, const char *a, const char *b, int i)
{
    cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);

    x = cJSON_GetArrayItem(x, i);
    assert_non_null(x);
    return x;
}

static cJSON *trainer_spec(cJSON *pod)
{
    return at(pod, "spec", "containers", 0);
}

static cJSON *trainer_status(cJSON *pod)
{
    return at(pod, "status", "containerStatuses", 0);
}

static void put(cJSON *o, const char *k, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    if (v != NULL) {
        assert_true(cJSON_AddItemToObject(o, k, v));
    }
}

/* Set the trainer's rules (JSON text; NULL: none). */
static void set_rules(cJSON *pod, const char *rules)
{
    cJSON *v = NULL;

    if (rules != NULL) {
        v = cJSON_Parse(rules);
        assert_non_null(v);
    }
    put(trainer_spec(pod), "restartPolicyRules", v);
}

static void set_exit(cJSON *pod, int code, const char *reason)
{
    cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(trainer_status(pod), "lastState"), "terminated");

    assert_non_null(t);
    put(t, "exitCode", cJSON_CreateNumber(code));
    put(t, "reason", cJSON_CreateString(reason));
}

static void set_stop_signal(cJSON *pod, const char *sig)
{
    put(trainer_status(pod), "stopSignal", sig != NULL ? cJSON_CreateString(sig) : NULL);
}

static void add_condition(cJSON *pod, const char *cond)
{
    cJSON *c = cJSON_Parse(cond);

    assert_non_null(c);
    assert_true(
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(
                                 cJSON_GetObjectItemCaseSensitive(pod, "status"), "conditions"),
                             c));
}

/* Parse the pod and diagnose its trainer container; frees pod. */
static void diagnose(cJSON *pod, struct krc_report *r, struct krc_diagnosis *d)
{
    struct krc_error err;
    char *text;

    put(trainer_status(pod), "allocatedResourcesStatus", NULL);
    text = cJSON_PrintUnformatted(pod);
    cJSON_Delete(pod);
    assert_non_null(text);
    krc_report_init(r);
    krc_diagnosis_init(d);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(text, strlen(text), r, &err) != 0) {
        fail_msg("pod: %s", err.msg);
    }
    cJSON_free(text);
    if (krc_diagnose(r, "trainer", d, &err) != 0) {
        fail_msg("diagnose: %s", err.msg);
    }
}

static void done(struct krc_report *r, struct krc_diagnosis *d)
{
    krc_diagnosis_cleanup(d);
    krc_report_cleanup(r);
}

static int has(char *const *lines, size_t n, const char *needle)
{
    for (size_t i = 0; i < n; i++) {
        if (strstr(lines[i], needle) != NULL) {
            return 1;
        }
    }
    return 0;
}

static void expect(const struct krc_diagnosis *d, enum krc_cause cause, int intentional)
{
    if (d->cause != cause || d->intentional != intentional) {
        fail_msg("cause %s intentional %d, want %s %d: %s", krc_cause_name(d->cause),
                 d->intentional, krc_cause_name(cause), intentional, d->summary);
    }
}

/* ---- restart_rule --------------------------------------------------------- */

static void test_rule_in(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    diagnose(load_pod(), &r, &d); /* exit 42, Restart In [42, 43] */
    expect(&d, KRC_CAUSE_RESTART_RULE, 1);
    assert_string_equal(krc_cause_name(d.cause), "restart_rule");
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "restarted by its restart rule for exit code 42"));
    assert_true(has(d.evidence, d.n_evidence,
                    "spec.containers[trainer].restartPolicyRules[0]: action Restart, exitCodes "
                    "In [42, 43] holds exit code 42"));
    assert_true(has(d.evidence, d.n_evidence, "container restartPolicy Never"));
    assert_false(has(d.unchecked, d.n_unchecked, "restarts every exit code"));
    done(&r, &d);

    /* the other listed code, from the second place of the list */
    {
        cJSON *pod = load_pod();
        set_exit(pod, 43, "Error");
        diagnose(pod, &r, &d);
    }
    expect(&d, KRC_CAUSE_RESTART_RULE, 1);
    assert_non_null(strstr(d.summary, "exit code 43"));
    done(&r, &d);
}

static void test_rule_not_in(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = load_pod();

    (void)state;
    set_rules(pod, "[{\"action\":\"Restart\",\"exitCodes\":{\"operator\":\"NotIn\","
                   "\"values\":[0,1]}}]");
    set_exit(pod, 3, "Error");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_RESTART_RULE, 1);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_true(has(d.evidence, d.n_evidence, "exitCodes NotIn [0, 1] holds exit code 3"));
    assert_true(has(d.unchecked, d.n_unchecked, "the rule restarts every exit code but [0, 1]"));
    done(&r, &d);

    /* a listed code is not retried by NotIn: the old cause */
    pod = load_pod();
    set_rules(pod, "[{\"action\":\"Restart\",\"exitCodes\":{\"operator\":\"NotIn\","
                   "\"values\":[0,1]}}]");
    set_exit(pod, 1, "Error");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    done(&r, &d);
}

static void test_rule_no_match(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = load_pod();

    (void)state;
    set_exit(pod, 7, "Error"); /* not in [42, 43] nor [88] */
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    assert_null(strstr(d.summary, "restart rule"));
    done(&r, &d);

    /* the first rule that holds decides: 88 is RestartAllContainers */
    pod = load_pod();
    set_exit(pod, 88, "Error");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    done(&r, &d);

    pod = load_pod();
    set_rules(pod, "[{\"action\":\"RestartAllContainers\",\"exitCodes\":{\"operator\":\"In\","
                   "\"values\":[42]}},{\"action\":\"Restart\",\"exitCodes\":{\"operator\":"
                   "\"In\",\"values\":[42]}}]");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    done(&r, &d);

    /* a rule before it that cannot be read (an operator of a later release):
     * which rule applied is unknown */
    pod = load_pod();
    set_rules(pod, "[{\"action\":\"Restart\",\"exitCodes\":{\"operator\":\"Matches\","
                   "\"values\":[42]}},{\"action\":\"Restart\",\"exitCodes\":{\"operator\":"
                   "\"In\",\"values\":[42]}}]");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    done(&r, &d);

    /* no rules: the 1.28 diagnosis */
    pod = load_pod();
    set_rules(pod, NULL);
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    done(&r, &d);
}

static void test_rule_oom_wins(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = load_pod();

    (void)state;
    set_rules(pod, "[{\"action\":\"Restart\",\"exitCodes\":{\"operator\":\"NotIn\","
                   "\"values\":[0]}}]");
    set_exit(pod, 137, "OOMKilled");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_OOM_KILLED, 0);
    done(&r, &d);

    /* In [137] too: the kernel's kill is not the rule's doing */
    pod = load_pod();
    set_rules(pod, "[{\"action\":\"Restart\",\"exitCodes\":{\"operator\":\"In\","
                   "\"values\":[137]}}]");
    set_exit(pod, 137, "OOMKilled");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_OOM_KILLED, 0);
    done(&r, &d);
}

/* ---- the stop signal -------------------------------------------------------- */

static void test_stop_signal(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod = load_pod();

    (void)state;
    set_exit(pod, 138, "Error"); /* 128 + SIGUSR1 (10), the reported stop signal */
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_TERMINATED, 1);
    assert_non_null(strstr(d.summary, "stopped by its stop signal SIGUSR1 (exit 138 = 128 + 10)"));
    assert_true(
        has(d.evidence, d.n_evidence, "status.containerStatuses[trainer].stopSignal SIGUSR1"));
    assert_true(has(d.unchecked, d.n_unchecked, "who stopped it"));
    done(&r, &d);

    /* without the stop signal, 138 is an application's exit */
    pod = load_pod();
    set_exit(pod, 138, "Error");
    set_stop_signal(pod, NULL);
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    done(&r, &d);

    /* another signal's exit is not the stop */
    pod = load_pod();
    set_exit(pod, 139, "Error");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_SEGFAULT, 0);
    done(&r, &d);

    /* SIGQUIT (nginx's): 131 */
    pod = load_pod();
    set_exit(pod, 131, "Error");
    set_stop_signal(pod, "SIGQUIT");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_TERMINATED, 1);
    done(&r, &d);

    /* SIGTERM reported: 143 is a stop; without it, terminated as before */
    pod = load_pod();
    set_exit(pod, 143, "Error");
    set_stop_signal(pod, "SIGTERM");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_TERMINATED, 1);
    done(&r, &d);
    pod = load_pod();
    set_exit(pod, 143, "Error");
    set_stop_signal(pod, NULL);
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_TERMINATED, 0);
    done(&r, &d);

    /* SIGKILL as the stop signal does not tell 137 apart */
    pod = load_pod();
    set_exit(pod, 137, "Error");
    set_stop_signal(pod, "SIGKILL");
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_KILLED, 0);
    done(&r, &d);
}

/* ---- DisruptionTarget --------------------------------------------------------- */

static void test_disruption_target(void **state)
{
    static const char *const reasons[] = {"PreemptionByKubeScheduler", "DeletionByTaintManager",
                                          "EvictionByEvictionAPI", "DeletionByPodGC",
                                          "TerminationByKubelet"};
    struct krc_report r;
    struct krc_diagnosis d;
    char cond[512];
    char want[128];

    (void)state;
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        cJSON *pod = load_pod();
        snprintf(cond, sizeof(cond),
                 "{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"%s\","
                 "\"message\":\"disrupted by test %zu\","
                 "\"lastTransitionTime\":\"2026-11-20T09:12:20Z\"}",
                 reasons[i], i);
        add_condition(pod, cond);
        set_exit(pod, 143, "Error");
        set_stop_signal(pod, NULL);
        diagnose(pod, &r, &d);
        snprintf(want, sizeof(want),
                 "pod condition DisruptionTarget=True, reason %s: ", reasons[i]);
        if (!has(d.evidence, d.n_evidence, want)) {
            fail_msg("no evidence \"%s\" (cause %s)", want, krc_cause_name(d.cause));
        }
        snprintf(want, sizeof(want), "; message: disrupted by test %zu", i);
        assert_true(has(d.evidence, d.n_evidence, want));
        /* the evidence only: the cause and intentional are the exit's */
        expect(&d, KRC_CAUSE_TERMINATED, 0);
        done(&r, &d);
    }
    /* the taint manager's wording names what it means */
    {
        cJSON *pod = load_pod();
        add_condition(pod, "{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
                           "\"DeletionByTaintManager\",\"message\":\"Taint manager: deleting\"}");
        diagnose(pod, &r, &d);
        assert_true(has(d.evidence, d.n_evidence, "a NoExecute taint on its node"));
        done(&r, &d);
    }
    /* a reason of a later release is written as sent; False is no evidence */
    {
        cJSON *pod = load_pod();
        add_condition(pod, "{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
                           "\"DeletionByFutureThing\"}");
        diagnose(pod, &r, &d);
        assert_true(has(d.evidence, d.n_evidence,
                        "pod condition DisruptionTarget=True, reason DeletionByFutureThing"));
        done(&r, &d);
    }
    {
        cJSON *pod = load_pod();
        add_condition(pod, "{\"type\":\"DisruptionTarget\",\"status\":\"False\",\"reason\":"
                           "\"EvictionByEvictionAPI\"}");
        diagnose(pod, &r, &d);
        assert_false(has(d.evidence, d.n_evidence, "DisruptionTarget"));
        done(&r, &d);
    }
}

/* ---- "intentional" in the JSON ------------------------------------------------ */

static char *explain_json(const struct krc_report *r, const struct krc_diagnosis *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(krc_explain_write_json(f, r, d), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* The diagnosis object's "intentional": 1 true, 0 absent, -1 anything else. */
static int intentional_of(const cJSON *diag)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(diag, "intentional");

    if (v == NULL) {
        return 0;
    }
    return cJSON_IsTrue(v) ? 1 : -1;
}

static void check_json(cJSON *pod, int want)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    char *text;
    char *report = NULL;
    cJSON *o;

    diagnose(pod, &r, &d);
    assert_int_equal(d.intentional, want);
    text = explain_json(&r, &d);
    assert_int_equal(strstr(text, "\"intentional\": true") != NULL, want);
    assert_null(strstr(text, "\"intentional\": false"));
    o = cJSON_Parse(text);
    assert_non_null(o);
    assert_int_equal(intentional_of(o), want);
    cJSON_Delete(o);
    free(text);

    /* the report JSON: what the store keeps, krc history show and MCP read */
    krc_error_clear(&err);
    assert_int_equal(krc_report_json_build(&r, &d, NULL, &report, &err), 0);
    o = cJSON_Parse(report);
    assert_non_null(o);
    assert_int_equal(intentional_of(cJSON_GetObjectItemCaseSensitive(o, "diagnosis")), want);
    cJSON_Delete(o);
    krc_free(report);
    done(&r, &d);
}

static void test_json_intentional_only_when_true(void **state)
{
    cJSON *pod;

    (void)state;
    check_json(load_pod(), 1); /* restart_rule */
    pod = load_pod();
    set_exit(pod, 138, "Error"); /* the stop signal */
    check_json(pod, 1);
    pod = load_pod();
    set_exit(pod, 7, "Error"); /* app_error */
    check_json(pod, 0);
}

/* ---- stored and read back ------------------------------------------------------ */

/* The store keeps the cause by its name and the diagnosis in the report
 * JSON: a restart_rule restart reads back with its cause and
 * "intentional": true, and a muted repeat that carries its cause is
 * intentional too. */
static void test_store_round_trip(void **state)
{
    struct krc_store *st = NULL;
    struct krc_store_restart rec;
    struct krc_store_entry *e = NULL;
    struct krc_diagnosis_history prior;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    char *report = NULL;
    int64_t id = 0;
    cJSON *o;
    cJSON *pod;

    (void)state;
    krc_error_clear(&err);
    if (krc_store_open(":memory:", 0, &st, &err) != 0) {
        fail_msg("open: %s", err.msg);
    }
    diagnose(load_pod(), &r, &d);
    expect(&d, KRC_CAUSE_RESTART_RULE, 1);
    assert_int_equal(krc_report_json_build(&r, &d, NULL, &report, &err), 0);
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = r.uid;
    rec.container = d.container;
    rec.restart_count = d.restart_count;
    rec.namespace = r.namespace;
    rec.pod = r.name;
    rec.cause = d.cause;
    rec.has_exit_code = 1;
    rec.exit_code = d.exit_code;
    rec.reason = d.reason;
    rec.finished_at = d.finished_at;
    rec.detected_at = d.finished_at + 5;
    rec.decision = "alert";
    rec.summary = d.summary;
    rec.confidence = d.confidence;
    rec.report_json = report;
    if (krc_store_record(st, &rec, NULL, &id, NULL, &err) != 0) {
        fail_msg("record: %s", err.msg);
    }
    assert_int_equal(krc_store_get(st, id, &e, &err), 0);
    assert_string_equal(e->row.cause, "restart_rule");
    o = cJSON_Parse(e->report_json);
    assert_non_null(o);
    assert_int_equal(intentional_of(cJSON_GetObjectItemCaseSensitive(o, "diagnosis")), 1);
    cJSON_Delete(o);
    /* the incident's first failure as a take-over reads it back from the row */
    memset(&prior, 0, sizeof(prior));
    prior.id = e->row.id;
    assert_int_equal(krc_cause_parse(e->row.cause, &prior.cause), 0);
    prior.confidence = d.confidence;
    prior.has_exit_code = e->row.has_exit_code;
    prior.exit_code = e->row.exit_code;
    prior.signal = e->row.signal;
    prior.has_reason = e->row.reason != NULL;
    snprintf(prior.reason, sizeof(prior.reason), "%s", e->row.reason ? e->row.reason : "");
    krc_store_entry_free(e);
    assert_int_equal(prior.cause, KRC_CAUSE_RESTART_RULE);
    krc_free(report);
    done(&r, &d);

    /* a muted repeat of it (the watch's pod has no rules: its own verdict is
     * app_error, low) carries the cause and is intentional */
    pod = load_pod();
    set_rules(pod, NULL);
    diagnose(pod, &r, &d);
    expect(&d, KRC_CAUSE_APP_ERROR, 0);
    assert_int_equal(krc_diagnosis_carry(&d, &prior), 1);
    expect(&d, KRC_CAUSE_RESTART_RULE, 1);
    done(&r, &d);

    krc_store_close(st);
}

/* ---- precedence ------------------------------------------------------------- */

static size_t rule_index(const char *name)
{
    for (size_t i = 0; i < krc_diagnose_rule_count(); i++) {
        if (strcmp(krc_diagnose_rule_name(i), name) == 0) {
            return i;
        }
    }
    fail_msg("no rule %s", name);
    return 0;
}

/* Below the kills and the start failures, above every rule that reads the
 * exit code or the log (docs/causes.md, "Intentional restarts and stops"). */
static void test_precedence(void **state)
{
    static const char *const before[] = {
        "oom_killed",     "evicted",           "liveness_probe_failed", "startup_probe_failed",
        "node_not_ready", "exec_format_error", "command_not_found",     "permission_denied",
        "disk_full",      "start_failed",
    };
    static const char *const after[] = {
        "gpu_out_of_memory",
        "app_out_of_memory",
        "segfault",
        "illegal_instruction",
        "aborted",
        "gpu_error",
        "dependency_unreachable",
        "app_error",
        "evicted_node_pressure",
        "startup_probe_configured",
        "liveness_probe_configured",
        "terminated_exit0",
        "completed",
        "killed",
        "terminated",
        "unknown",
    };
    size_t rr = rule_index("restart_rule");
    size_t ss = rule_index("terminated_stop_signal");

    (void)state;
    assert_int_equal(krc_diagnose_rule_cause(rr), KRC_CAUSE_RESTART_RULE);
    assert_int_equal(krc_diagnose_rule_cause(ss), KRC_CAUSE_TERMINATED);
    assert_true(rr < ss);
    for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
        assert_true(rule_index(before[i]) < rr);
    }
    for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++) {
        assert_true(rule_index(after[i]) > ss);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_in),
        cmocka_unit_test(test_rule_not_in),
        cmocka_unit_test(test_rule_no_match),
        cmocka_unit_test(test_rule_oom_wins),
        cmocka_unit_test(test_stop_signal),
        cmocka_unit_test(test_disruption_target),
        cmocka_unit_test(test_json_intentional_only_when_true),
        cmocka_unit_test(test_store_round_trip),
        cmocka_unit_test(test_precedence),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
