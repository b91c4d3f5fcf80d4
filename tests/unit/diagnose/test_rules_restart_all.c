/* diagnose: the intended restarts of issue 26 that other containers, the
 * kubelet's resize or the pod's deletion explain (docs/causes.md rules 10b,
 * 10c, 11b), on the Kubernetes 1.35-shaped pods of tests/fixtures/k8s-1.35,
 * changed field by field:
 *  - restarted_with_others (KEP-5532): the containers another container's
 *    RestartAllContainers rule restarted; the trigger keeps its own cause
 *    with an evidence line that says it restarted all of them; times too far
 *    apart, a rule that does not hold, an OOM kill: not this cause;
 *  - resize_restart (KEP-1287): PodResizeInProgress True and a resizePolicy
 *    RestartContainer, exit by the kubelet's stop; pending, a NotRequired
 *    resource resized, a crash exit: not this cause;
 *  - terminated (intentional) for a sidecar that stopped after the pod's
 *    deletion was asked (metadata.deletionTimestamp - grace); before it, or a
 *    regular container: not;
 *  - metadata.deletionTimestamp read into the report and written only when
 *    present. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/alert/format.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define DIR KRC_FIXTURES "/k8s-1.35/"

static cJSON *load(const char *name)
{
    char path[512];
    size_t len = 0;
    char *text;
    cJSON *pod;

    snprintf(path, sizeof(path), "%s%s", DIR, name);
    text = krc_test_read_file(path, &len);
    assert_non_null(text);
    pod = cJSON_ParseWithLength(text, len);
    free(text);
    assert_non_null(pod);
    return pod;
}

static void put(cJSON *o, const char *k, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    if (v != NULL) {
        assert_true(cJSON_AddItemToObject(o, k, v));
    }
}

static cJSON *member(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    assert_non_null(v);
    return v;
}

/* The status (containerStatuses, else initContainerStatuses) of `name`. */
static cJSON *status_of(cJSON *pod, const char *name)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses"};
    cJSON *it;

    for (size_t i = 0; i < 2; i++) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(member(pod, "status"), lists[i]))
        {
            if (strcmp(cJSON_GetStringValue(member(it, "name")), name) == 0) {
                return it;
            }
        }
    }
    fail_msg("no status of %s", name);
    return NULL;
}

/* Its termination: lastState.terminated, else state.terminated. */
static cJSON *term_of(cJSON *pod, const char *name)
{
    cJSON *st = status_of(pod, name);
    cJSON *t = cJSON_GetObjectItemCaseSensitive(member(st, "lastState"), "terminated");

    if (t == NULL) {
        t = cJSON_GetObjectItemCaseSensitive(member(st, "state"), "terminated");
    }
    assert_non_null(t);
    return t;
}

static void set_term(cJSON *pod, const char *name, int code, const char *reason,
                     const char *finished)
{
    cJSON *t = term_of(pod, name);

    if (code >= 0) {
        put(t, "exitCode", cJSON_CreateNumber(code));
    }
    if (reason != NULL) {
        put(t, "reason", cJSON_CreateString(reason));
    }
    if (finished != NULL) {
        put(t, "finishedAt", cJSON_CreateString(finished));
    }
}

/* Change (status, lastTransitionTime) of condition `type`; status NULL: remove it. */
static void set_condition(cJSON *pod, const char *type, const char *status, const char *at)
{
    cJSON *conds = member(member(pod, "status"), "conditions");
    cJSON *it;
    int i = 0;

    cJSON_ArrayForEach(it, conds)
    {
        if (strcmp(cJSON_GetStringValue(member(it, "type")), type) == 0) {
            break;
        }
        i++;
    }
    if (status == NULL) {
        if (it != NULL) {
            cJSON_DeleteItemFromArray(conds, i);
        }
        return;
    }
    if (it == NULL) {
        it = cJSON_CreateObject();
        assert_non_null(it);
        assert_true(cJSON_AddItemToArray(conds, it));
        put(it, "type", cJSON_CreateString(type));
    }
    put(it, "status", cJSON_CreateString(status));
    if (at != NULL) {
        put(it, "lastTransitionTime", cJSON_CreateString(at));
    }
}

/* Parse the pod (and events, may be NULL) and diagnose `container`; frees pod. */
static void diagnose(cJSON *pod, const char *events, const char *container, struct krc_report *r,
                     struct krc_diagnosis *d)
{
    struct krc_error err;
    char *text = cJSON_PrintUnformatted(pod);

    cJSON_Delete(pod);
    assert_non_null(text);
    krc_report_init(r);
    krc_diagnosis_init(d);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(text, strlen(text), r, &err) != 0) {
        fail_msg("pod: %s", err.msg);
    }
    cJSON_free(text);
    if (events != NULL) {
        char path[512];
        size_t len = 0;
        char *ev;
        snprintf(path, sizeof(path), "%s%s", DIR, events);
        ev = krc_test_read_file(path, &len);
        assert_non_null(ev);
        if (krc_kube_parse_events(ev, len, r, &err) != 0) {
            fail_msg("events: %s", err.msg);
        }
        free(ev);
    }
    if (krc_diagnose(r, container, d, &err) != 0) {
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

static void expect(const struct krc_diagnosis *d, const char *cause, int intentional)
{
    if (strcmp(krc_cause_name(d->cause), cause) != 0 || d->intentional != intentional) {
        fail_msg("cause %s intentional %d, want %s %d: %s", krc_cause_name(d->cause),
                 d->intentional, cause, intentional, d->summary);
    }
}

#define EVIDENCE(d, s) has((d)->evidence, (d)->n_evidence, s)
#define UNCHECKED(d, s) has((d)->unchecked, (d)->n_unchecked, s)

/* ---- restarted_with_others ----------------------------------------------- */

/* restart-all.json: server exited 88, its rule RestartAllContainers In [88];
 * tokenizer, metrics and cache stopped 1-2 s later (137);
 * AllContainersRestarting False since 3 s after. */
static void test_restart_all_others(void **state)
{
    static const char *const others[] = {"tokenizer", "metrics", "cache"};
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        diagnose(load("restart-all.json"), NULL, others[i], &r, &d);
        expect(&d, "restarted_with_others", 1);
        assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
        assert_non_null(strstr(d.summary, "restarted with all 4 containers of the pod"));
        assert_non_null(strstr(d.summary, "container server exited 88"));
        assert_true(EVIDENCE(&d, "spec.containers[server].restartPolicyRules[0]: action "
                                 "RestartAllContainers, exitCodes In [88] holds its exit code 88"));
        assert_true(EVIDENCE(&d, "pod condition AllContainersRestarting=False since "
                                 "2026-11-21T11:30:14Z"));
        done(&r, &d);
    }
}

/* The trigger keeps its own cause (exit 88: app_error) and says it restarted
 * them all; it is not intentional. */
static void test_restart_all_trigger(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    diagnose(load("restart-all.json"), NULL, "server", &r, &d);
    expect(&d, "app_error", 0);
    assert_true(EVIDENCE(&d, "action RestartAllContainers, exitCodes In [88]: this exit restarted "
                             "all 4 containers of the pod by its rule (KEP-5532)"));
    done(&r, &d);
}

/* Without the condition, the times alone: within 15 s high; 60 s apart no. */
static void test_restart_all_times(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    pod = load("restart-all.json");
    set_condition(pod, "AllContainersRestarting", NULL, NULL);
    diagnose(pod, NULL, "cache", &r, &d);
    expect(&d, "restarted_with_others", 1);
    assert_true(UNCHECKED(&d, "AllContainersRestarting was not seen"));
    done(&r, &d);

    pod = load("restart-all.json");
    set_condition(pod, "AllContainersRestarting", NULL, NULL);
    set_term(pod, "cache", -1, NULL, "2026-11-21T11:31:11Z"); /* 60 s after */
    diagnose(pod, NULL, "cache", &r, &d);
    expect(&d, "killed", 0);
    done(&r, &d);

    /* with the condition changed after the trigger's exit, 60 s still fits */
    pod = load("restart-all.json");
    set_term(pod, "cache", -1, NULL, "2026-11-21T11:31:11Z");
    diagnose(pod, NULL, "cache", &r, &d);
    expect(&d, "restarted_with_others", 1);
    done(&r, &d);

    /* it stopped before the trigger exited: its own restart */
    pod = load("restart-all.json");
    set_term(pod, "cache", -1, NULL, "2026-11-21T11:29:00Z");
    diagnose(pod, NULL, "cache", &r, &d);
    expect(&d, "killed", 0);
    done(&r, &d);
}

/* A trigger exit code the rule does not hold, or a rule that is not
 * RestartAllContainers: not this cause; an OOM kill of the container keeps
 * its own cause. */
static void test_restart_all_not(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;
    cJSON *rule;

    (void)state;
    pod = load("restart-all.json");
    set_term(pod, "server", 1, NULL, NULL);
    diagnose(pod, NULL, "tokenizer", &r, &d);
    expect(&d, "killed", 0);
    done(&r, &d);

    pod = load("restart-all.json");
    rule =
        cJSON_GetArrayItem(member(cJSON_GetArrayItem(member(member(pod, "spec"), "containers"), 0),
                                  "restartPolicyRules"),
                           0);
    put(rule, "action", cJSON_CreateString("Restart"));
    diagnose(pod, NULL, "tokenizer", &r, &d);
    expect(&d, "killed", 0);
    done(&r, &d);

    pod = load("restart-all.json");
    set_term(pod, "metrics", 137, "OOMKilled", NULL);
    diagnose(pod, NULL, "metrics", &r, &d);
    expect(&d, "oom_killed", 0);
    done(&r, &d);
}

/* ---- resize_restart ------------------------------------------------------- */

/* resize-restart.json: redis, resizePolicy memory RestartContainer; spec
 * memory 2Gi, actuated 1Gi; PodResizeInProgress True since 09:15:00; exit 143
 * at 09:15:02. */
static void test_resize(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    diagnose(load("resize-restart.json"), NULL, NULL, &r, &d);
    expect(&d, "resize_restart", 1);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "its resizePolicy for memory is RestartContainer"));
    assert_non_null(strstr(d.summary, "it exited 143 (SIGTERM): the kubelet's stop, not a crash"));
    assert_true(EVIDENCE(&d, "memory: spec limit 2Gi, request 2Gi; actuated "
                             "(status.containerStatuses[redis].resources) limit 1Gi, request 1Gi"));
    assert_true(EVIDENCE(&d, "pod condition PodResizeInProgress=True since 2026-11-22T09:15:00Z"));
    assert_true(EVIDENCE(&d, "metadata.generation 3, status.observedGeneration 3"));
    done(&r, &d);

    /* the actuated resources equal the spec: which one is not shown, medium */
    pod = load("resize-restart.json");
    put(status_of(pod, "redis"), "resources", NULL);
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "resize_restart", 1);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_true(UNCHECKED(&d, "which resource was resized is not shown"));
    done(&r, &d);

    /* SIGKILL at the end of the grace period and exit 0 are the kubelet's stop too */
    pod = load("resize-restart.json");
    set_term(pod, "redis", 137, "Error", NULL);
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "resize_restart", 1);
    done(&r, &d);
}

static void test_resize_not(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;
    cJSON *st;

    (void)state;
    /* pending: not actuated, the kubelet did not stop it for the resize */
    pod = load("resize-restart.json");
    set_condition(pod, "PodResizeInProgress", NULL, NULL);
    set_condition(pod, "PodResizePending", "True", "2026-11-22T09:15:00Z");
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "terminated", 0);
    done(&r, &d);

    /* a crash exit during the resize is a crash */
    pod = load("resize-restart.json");
    set_term(pod, "redis", 1, "Error", NULL);
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "app_error", 0);
    done(&r, &d);

    /* an OOM kill (a memory decrease) keeps its cause */
    pod = load("resize-restart.json");
    set_term(pod, "redis", 137, "OOMKilled", NULL);
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "oom_killed", 0);
    done(&r, &d);

    /* it stopped before the resize began */
    pod = load("resize-restart.json");
    set_term(pod, "redis", -1, NULL, "2026-11-22T09:10:00Z");
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "terminated", 0);
    done(&r, &d);

    /* it stopped an hour after the resize began (a resize still in
     * progress, or failed): not stopped for it */
    pod = load("resize-restart.json");
    set_term(pod, "redis", -1, NULL, "2026-11-22T10:15:02Z");
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "terminated", 0);
    done(&r, &d);

    /* only the cpu (NotRequired) was resized: no restart for it */
    pod = load("resize-restart.json");
    st = member(status_of(pod, "redis"), "resources");
    put(member(st, "limits"), "memory", cJSON_CreateString("2Gi"));
    put(member(st, "requests"), "memory", cJSON_CreateString("2048Mi"));
    put(member(st, "limits"), "cpu", cJSON_CreateString("500m"));
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "terminated", 0);
    done(&r, &d);

    /* no resizePolicy RestartContainer */
    pod = load("resize-restart.json");
    put(cJSON_GetArrayItem(member(member(pod, "spec"), "containers"), 0), "resizePolicy", NULL);
    diagnose(pod, NULL, NULL, &r, &d);
    expect(&d, "terminated", 0);
    done(&r, &d);
}

/* ---- a sidecar stopped during the pod's deletion --------------------------- */

/* sidecar-deletion.json: deletionTimestamp 12:00:30, grace 30 s (asked at
 * 12:00:00); log-shipper (a sidecar) exited 1 at 12:00:06 and was restarted
 * while web is being stopped. */
static void test_sidecar_deletion(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    diagnose(load("sidecar-deletion.json"), NULL, "log-shipper", &r, &d);
    expect(&d, "terminated", 1);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "Sidecar log-shipper stopped during the pod's deletion"));
    assert_true(EVIDENCE(&d, "metadata.deletionTimestamp 2026-11-23T12:00:30Z with a grace "
                             "period of 30 s (deletionGracePeriodSeconds): the deletion was "
                             "asked at 2026-11-23T12:00:00Z"));
    assert_true(EVIDENCE(&d, "6 s after the deletion was asked"));
    done(&r, &d);

    /* SIGKILL at the end of the grace period: the same */
    pod = load("sidecar-deletion.json");
    set_term(pod, "log-shipper", 137, "Error", "2026-11-23T12:00:30Z");
    diagnose(pod, NULL, "log-shipper", &r, &d);
    expect(&d, "terminated", 1);
    done(&r, &d);

    /* without deletionGracePeriodSeconds: the spec's grace, medium */
    pod = load("sidecar-deletion.json");
    put(member(pod, "metadata"), "deletionGracePeriodSeconds", NULL);
    diagnose(pod, NULL, "log-shipper", &r, &d);
    expect(&d, "terminated", 1);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_true(UNCHECKED(&d, "deletionGracePeriodSeconds was not given"));
    done(&r, &d);
}

static void test_sidecar_deletion_not(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    /* it exited before the deletion was asked: its own crash */
    pod = load("sidecar-deletion.json");
    set_term(pod, "log-shipper", -1, NULL, "2026-11-23T11:59:00Z");
    diagnose(pod, NULL, "log-shipper", &r, &d);
    expect(&d, "app_error", 0);
    done(&r, &d);

    /* the pod is not being deleted */
    pod = load("sidecar-deletion.json");
    put(member(pod, "metadata"), "deletionTimestamp", NULL);
    diagnose(pod, NULL, "log-shipper", &r, &d);
    expect(&d, "app_error", 0);
    done(&r, &d);

    /* a regular container is not a sidecar */
    pod = load("sidecar-deletion.json");
    put(status_of(pod, "web"), "restartCount", cJSON_CreateNumber(1));
    put(status_of(pod, "web"), "lastState",
        cJSON_Parse("{\"terminated\": {\"exitCode\": 1, \"reason\": \"Error\", "
                    "\"startedAt\": \"2026-11-23T06:00:06Z\", "
                    "\"finishedAt\": \"2026-11-23T12:00:05Z\"}}"));
    diagnose(pod, NULL, "web", &r, &d);
    expect(&d, "app_error", 0);
    done(&r, &d);
}

/* ---- metadata.deletionTimestamp in the report ----------------------------- */

static void test_deletion_fields(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    char *json = NULL;
    cJSON *o;
    cJSON *p;
    cJSON *pod;

    (void)state;
    diagnose(load("sidecar-deletion.json"), NULL, "log-shipper", &r, &d);
    assert_int_equal(r.deletion_timestamp, 1795435230); /* 2026-11-23T12:00:30Z */
    assert_int_equal(r.has_deletion_grace, 1);
    assert_int_equal(r.deletion_grace, 30);
    krc_error_clear(&err);
    assert_int_equal(krc_report_json_build(&r, &d, NULL, &json, &err), 0);
    o = cJSON_Parse(json);
    assert_non_null(o);
    p = member(o, "pod");
    assert_string_equal(cJSON_GetStringValue(member(p, "deletion_timestamp")),
                        "2026-11-23T12:00:30Z");
    assert_int_equal(cJSON_GetNumberValue(member(p, "deletion_grace_period")), 30);
    cJSON_Delete(o);
    krc_free(json);
    done(&r, &d);

    /* absent: no key; a wrong type: left out with a note naming the field */
    pod = load("restart-all.json");
    put(member(pod, "metadata"), "deletionTimestamp", cJSON_CreateNumber(7));
    diagnose(pod, NULL, "cache", &r, &d);
    assert_int_equal(r.deletion_timestamp, 0);
    assert_true(has(r.notes, r.n_notes,
                    "metadata.deletionTimestamp: expected an RFC 3339 "
                    "timestamp, got a number; left out"));
    assert_int_equal(krc_report_json_build(&r, &d, NULL, &json, &err), 0);
    assert_null(strstr(json, "deletion_"));
    krc_free(json);
    done(&r, &d);
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

/* Below the kills with their own proof and the start failures, above the
 * device rule and every rule that reads the exit code or the log. */
static void test_precedence(void **state)
{
    static const char *const mine[] = {"restarted_with_others", "resize_restart",
                                       "terminated_sidecar_deletion"};
    static const char *const before[] = {
        "oom_killed",     "evicted",           "liveness_probe_failed", "startup_probe_failed",
        "node_not_ready", "exec_format_error", "command_not_found",     "permission_denied",
        "disk_full",      "start_failed",
    };
    static const char *const after[] = {
        "gpu_out_of_memory", "app_out_of_memory",
        "segfault",          "illegal_instruction",
        "aborted",           "gpu_error",
        "app_error",         "terminated_exit0",
        "completed",         "killed",
        "terminated",
    };

    (void)state;
    for (size_t m = 0; m < sizeof(mine) / sizeof(mine[0]); m++) {
        for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
            assert_true(rule_index(before[i]) < rule_index(mine[m]));
        }
        for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++) {
            assert_true(rule_index(after[i]) > rule_index(mine[m]));
        }
    }
    assert_true(rule_index("restarted_with_others") < rule_index("gpu_device_unhealthy"));
    assert_true(rule_index("resize_restart") < rule_index("gpu_device_unhealthy"));
    assert_true(rule_index("terminated_sidecar_deletion") < rule_index("terminated_stop_signal"));
    assert_int_equal(krc_diagnose_rule_cause(rule_index("terminated_sidecar_deletion")),
                     KRC_CAUSE_TERMINATED);
    assert_true(krc_cause_always_intentional(KRC_CAUSE_RESTARTED_WITH_OTHERS));
    assert_true(krc_cause_always_intentional(KRC_CAUSE_RESIZE_RESTART));
    assert_true(krc_cause_always_intentional(KRC_CAUSE_RESTART_RULE));
    assert_false(krc_cause_always_intentional(KRC_CAUSE_SANDBOX_CHANGED));
    assert_false(krc_cause_always_intentional(KRC_CAUSE_TERMINATED));
}

/* The codes are a public contract and their enum values are stored: appended
 * after gpu_device_unhealthy (23) in this order; their titles, and severity
 * info for the intended ones, warning for a re-created sandbox. */
static void test_codes_titles_severity(void **state)
{
    static const struct {
        enum krc_cause cause;
        int value;
        const char *name;
        const char *title;
        enum krc_alert_severity sev;
    } want[] = {
        {KRC_CAUSE_RESTARTED_WITH_OTHERS, 24, "restarted_with_others",
         "Restarted with the other containers", KRC_ALERT_SEV_INFO},
        {KRC_CAUSE_RESIZE_RESTART, 25, "resize_restart", "Restarted to resize", KRC_ALERT_SEV_INFO},
        {KRC_CAUSE_SANDBOX_CHANGED, 26, "sandbox_changed", "Pod sandbox re-created",
         KRC_ALERT_SEV_WARNING},
    };

    (void)state;
    assert_int_equal(KRC_CAUSE_COUNT, 27);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        enum krc_cause c = KRC_CAUSE_UNKNOWN;
        assert_int_equal((int)want[i].cause, want[i].value);
        assert_string_equal(krc_cause_name(want[i].cause), want[i].name);
        assert_int_equal(krc_cause_parse(want[i].name, &c), 0);
        assert_int_equal(c, want[i].cause);
        assert_string_equal(krc_alert_cause_title(want[i].cause), want[i].title);
        assert_int_equal(krc_alert_cause_severity(want[i].cause), want[i].sev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_all_others),
        cmocka_unit_test(test_restart_all_trigger),
        cmocka_unit_test(test_restart_all_times),
        cmocka_unit_test(test_restart_all_not),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_resize_not),
        cmocka_unit_test(test_sidecar_deletion),
        cmocka_unit_test(test_sidecar_deletion_not),
        cmocka_unit_test(test_deletion_fields),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_codes_titles_severity),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
