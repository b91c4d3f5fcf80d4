/* diagnose, rule sandbox_changed (src/diagnose/rules_sandbox.c; docs/causes.md
 * rule 10a) on tests/fixtures/k8s-1.35/sandbox-changed.json (two containers
 * that stopped together with exit 255, reason Unknown, at 08:40:12;
 * PodReadyToStartContainers True again since 08:42:37) and its events
 * (SandboxChanged of the pod, Rebooted of its node), changed field by field:
 * the proof (the condition, the event, both), the node-level cause named,
 * not intentional; and what is not this cause: a container that stopped at
 * another time, one that crashed with a code of its own or was OOM-killed,
 * a condition that did not change after the stop, a termination dated
 * before the pod existed. */
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
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc_test.h"

#define POD KRC_FIXTURES "/k8s-1.35/sandbox-changed.json"
#define EVENTS KRC_FIXTURES "/k8s-1.35/sandbox-changed-events.json"

static cJSON *load_pod(void)
{
    size_t len = 0;
    char *text = krc_test_read_file(POD, &len);
    cJSON *pod;

    assert_non_null(text);
    pod = cJSON_ParseWithLength(text, len);
    free(text);
    assert_non_null(pod);
    return pod;
}

static cJSON *member(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    assert_non_null(v);
    return v;
}

static void put(cJSON *o, const char *k, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    if (v != NULL) {
        assert_true(cJSON_AddItemToObject(o, k, v));
    }
}

/* lastState.terminated of container i (0 api, 1 envoy). */
static cJSON *term(cJSON *pod, int i)
{
    cJSON *st = cJSON_GetArrayItem(member(member(pod, "status"), "containerStatuses"), i);

    assert_non_null(st);
    return member(member(st, "lastState"), "terminated");
}

static void set_ready_to_start(cJSON *pod, const char *at)
{
    cJSON *c = cJSON_GetArrayItem(member(member(pod, "status"), "conditions"), 0);

    assert_string_equal(cJSON_GetStringValue(member(c, "type")), "PodReadyToStartContainers");
    put(c, "lastTransitionTime", cJSON_CreateString(at));
}

static void diagnose(cJSON *pod, int events, const char *container, struct krc_report *r,
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
    if (events) {
        size_t len = 0;
        char *ev = krc_test_read_file(EVENTS, &len);
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

#define EVIDENCE(d, s) has((d)->evidence, (d)->n_evidence, s)
#define UNCHECKED(d, s) has((d)->unchecked, (d)->n_unchecked, s)

static void expect_cause(const struct krc_diagnosis *d, enum krc_cause cause)
{
    if (d->cause != cause) {
        fail_msg("cause %s, want %s: %s", krc_cause_name(d->cause), krc_cause_name(cause),
                 d->summary);
    }
}

/* The condition and the event: high, the node's reboot named. */
static void test_sandbox_both(void **state)
{
    static const char *const names[] = {"api", "envoy"};
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        diagnose(load_pod(), 1, names[i], &r, &d);
        expect_cause(&d, KRC_CAUSE_SANDBOX_CHANGED);
        assert_string_equal(krc_cause_name(d.cause), "sandbox_changed");
        assert_int_equal(d.intentional, 0);
        assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
        assert_non_null(strstr(d.summary, "The pod's sandbox was re-created"));
        assert_non_null(strstr(d.summary, "exited 255 together with the pod's 1 other container, "
                                          "and PodReadyToStartContainers changed to True"));
        assert_non_null(strstr(d.summary, "a node-level cause (the node rebooted)"));
        assert_true(EVIDENCE(&d, "pod condition PodReadyToStartContainers=True since "
                                 "2026-11-24T08:42:37Z, after the container stopped"));
        assert_true(EVIDENCE(&d, "Pod sandbox changed, it will be killed and re-created."));
        assert_true(EVIDENCE(&d, "Node node-9 has been rebooted"));
        assert_true(EVIDENCE(&d, i == 0 ? "container envoy stopped too: exit 255, reason Unknown"
                                        : "container api stopped too: exit 255, reason Unknown"));
        done(&r, &d);
    }
}

/* Either proof alone: medium; no Rebooted event: the node-level cause is
 * listed, and what is not shown says so. */
static void test_sandbox_one_proof(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    diagnose(load_pod(), 0, "api", &r, &d);
    expect_cause(&d, KRC_CAUSE_SANDBOX_CHANGED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_non_null(strstr(d.summary, "a node reboot, a container runtime restart or a "
                                      "CNI/network setup failure"));
    assert_true(UNCHECKED(&d, "no Rebooted event of the node was seen"));
    done(&r, &d);

    pod = load_pod();
    set_ready_to_start(pod, "2026-11-24T05:00:03Z"); /* unchanged since the pod started */
    diagnose(pod, 1, "api", &r, &d);
    expect_cause(&d, KRC_CAUSE_SANDBOX_CHANGED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_non_null(strstr(d.summary, "the kubelet reported SandboxChanged"));
    done(&r, &d);
}

/* No proof, or the containers did not stop together: not this cause. */
static void test_sandbox_not(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    pod = load_pod();
    set_ready_to_start(pod, "2026-11-24T05:00:03Z");
    diagnose(pod, 0, "api", &r, &d);
    assert_int_not_equal(d.cause, KRC_CAUSE_SANDBOX_CHANGED);
    done(&r, &d);

    /* envoy stopped two hours earlier: api's stop was not the pod's */
    pod = load_pod();
    put(term(pod, 1), "finishedAt", cJSON_CreateString("2026-11-24T06:40:12Z"));
    diagnose(pod, 1, "api", &r, &d);
    assert_int_not_equal(d.cause, KRC_CAUSE_SANDBOX_CHANGED);
    done(&r, &d);

    /* a termination dated before the pod existed proves nothing about its
     * sandbox (a hand-made status): the condition does not count */
    pod = load_pod();
    put(term(pod, 0), "startedAt", cJSON_CreateString("2026-11-24T04:00:00Z"));
    diagnose(pod, 0, "api", &r, &d);
    assert_int_not_equal(d.cause, KRC_CAUSE_SANDBOX_CHANGED);
    done(&r, &d);
}

/* A crash with its own proof is not swallowed: a segfault exit of one
 * container, an OOM kill. */
static void test_sandbox_own_crash(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    cJSON *pod;

    (void)state;
    pod = load_pod();
    put(term(pod, 0), "exitCode", cJSON_CreateNumber(139));
    put(term(pod, 0), "reason", cJSON_CreateString("Error"));
    diagnose(pod, 1, "api", &r, &d);
    expect_cause(&d, KRC_CAUSE_SEGFAULT);
    done(&r, &d);

    pod = load_pod();
    put(term(pod, 0), "exitCode", cJSON_CreateNumber(137));
    put(term(pod, 0), "reason", cJSON_CreateString("OOMKilled"));
    diagnose(pod, 1, "api", &r, &d);
    expect_cause(&d, KRC_CAUSE_OOM_KILLED);
    done(&r, &d);

    /* killed (137) or stopped (143) with the sandbox: still this cause */
    pod = load_pod();
    put(term(pod, 0), "exitCode", cJSON_CreateNumber(137));
    put(term(pod, 0), "reason", cJSON_CreateString("Error"));
    diagnose(pod, 1, "api", &r, &d);
    expect_cause(&d, KRC_CAUSE_SANDBOX_CHANGED);
    done(&r, &d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sandbox_both),
        cmocka_unit_test(test_sandbox_one_proof),
        cmocka_unit_test(test_sandbox_not),
        cmocka_unit_test(test_sandbox_own_crash),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
