/* diagnose: the kill verdict (issue 26; docs/causes.md "The kill verdict"),
 * one test per row, each asserting the proof the diagnosis states, the
 * unknowns it lists, and that no forbidden claim appears:
 *  - container-limit OOM (the limit the kubelet actuated, from
 *    status.containerStatuses[].resources, before the spec's);
 *  - pod-level limit OOM (KEP-2837 spec.resources, no limit of its own);
 *  - node/system OOM (no limit anywhere: SystemOOM events, MemoryPressure,
 *    or what is not known);
 *  - reason OOMKilled with exit 143 (kubernetes#140716: a stop with a stale
 *    flag, not an OOM kill of the container);
 *  - SIGKILL after the grace period (the kubelet's stop, a probe kill, a
 *    preStop hook);
 *  - a memory-limit decrease by an in-place resize before the OOM kill;
 *  - a configured probe alone: a hypothesis, never the cause. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

#define POD_UID "5e0c1d2f-aaaa-4bbb-8ccc-000000000026"
#define STARTED "2026-11-20T10:00:00Z"
#define FINISHED "2026-11-20T10:05:00Z"

/* ---- building the input ----------------------------------------------------- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    struct krc_buf b;
    va_list ap;
    char *s;

    krc_buf_init(&b, 1 << 20);
    va_start(ap, f);
    assert_int_equal(krc_buf_vprintf(&b, f, ap), 0);
    va_end(ap);
    s = krc_buf_take(&b);
    assert_non_null(s);
    return s;
}

/* One container "app" of pod shop/web-0 on node-1, served by the API server
 * (metadata.resourceVersion: an absent field is not set). */
struct pod {
    int exit_code;
    const char *reason;
    const char *resources;        /* the container spec's "resources" object, NULL: none */
    const char *status_resources; /* containerStatuses[].resources, NULL: none */
    const char *pod_resources;    /* spec.resources (pod-level), NULL: none */
    const char *probes;           /* ",\"livenessProbe\":{...}", NULL: none */
    const char *conditions;       /* status.conditions array, NULL: none */
    const char *meta;             /* more of metadata, e.g. ",\"generation\":4" */
    const char *status;           /* more of status, e.g. ",\"observedGeneration\":3" */
    const char *stop_signal;      /* containerStatuses[].stopSignal, NULL: none */
    int grace;                    /* terminationGracePeriodSeconds, 0: absent (30) */
};

static char *pod_json(const struct pod *p)
{
    char grace[64] = "";
    char stop[64] = "";

    if (p->grace > 0) {
        snprintf(grace, sizeof(grace), ",\"terminationGracePeriodSeconds\":%d", p->grace);
    }
    if (p->stop_signal != NULL) {
        snprintf(stop, sizeof(stop), ",\"stopSignal\":\"%s\"", p->stop_signal);
    }
    return fmt(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\","
        "\"namespace\":\"shop\",\"uid\":\"" POD_UID "\",\"resourceVersion\":\"4711\"%s},"
        "\"spec\":{\"nodeName\":\"node-1\",\"restartPolicy\":\"Always\"%s%s%s,\"containers\":[{"
        "\"name\":\"app\",\"image\":\"img:1\"%s%s%s}]},"
        "\"status\":{\"phase\":\"Running\"%s%s%s,\"containerStatuses\":[{\"name\":\"app\","
        "\"ready\":false,\"restartCount\":3,\"image\":\"img:1\",\"imageID\":\"\"%s%s%s,"
        "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off 40s\"}},"
        "\"lastState\":{\"terminated\":{\"exitCode\":%d,\"reason\":\"%s\",\"startedAt\":\"" STARTED
        "\",\"finishedAt\":\"" FINISHED "\"}}}]}}",
        p->meta ? p->meta : "", grace, p->pod_resources ? ",\"resources\":" : "",
        p->pod_resources ? p->pod_resources : "", p->probes ? p->probes : "",
        p->resources ? ",\"resources\":" : "", p->resources ? p->resources : "",
        p->status ? p->status : "", p->conditions ? ",\"conditions\":" : "",
        p->conditions ? p->conditions : "", stop, p->status_resources ? ",\"resources\":" : "",
        p->status_resources ? p->status_resources : "", p->exit_code, p->reason);
}

struct ev {
    const char *kind; /* "Pod" (this pod, container app) or "Node" (node-1) */
    const char *reason;
    const char *message;
    const char *at; /* lastTimestamp */
};

static char *events_json(const struct ev *evs, size_t n)
{
    struct krc_buf b;
    char *s;

    krc_buf_init(&b, 1 << 20);
    assert_int_equal(krc_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["),
                     0);
    for (size_t i = 0; i < n; i++) {
        int node = strcmp(evs[i].kind, "Node") == 0;
        assert_int_equal(
            krc_buf_printf(
                &b,
                "%s{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e.%zu\","
                "\"namespace\":\"%s\"},\"involvedObject\":{\"kind\":\"%s\",%s},\"reason\":\"%s\","
                "\"message\":\"%s\",\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"
                "\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\",\"count\":1,\"type\":\"%s\"}",
                i ? "," : "", i, node ? "default" : "shop", evs[i].kind,
                node ? "\"name\":\"node-1\""
                     : "\"namespace\":\"shop\",\"name\":\"web-0\",\"uid\":\"" POD_UID
                       "\",\"fieldPath\":\"spec.containers{app}\"",
                evs[i].reason, evs[i].message, evs[i].at, evs[i].at, node ? "Warning" : "Normal"),
            0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}"), 0);
    s = krc_buf_take(&b);
    assert_non_null(s);
    return s;
}

/* Node node-1 with the given conditions (JSON array). */
static char *node_json(const char *conditions)
{
    return fmt("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-1\"},"
               "\"status\":{\"conditions\":%s,\"capacity\":{\"memory\":\"16Gi\"},"
               "\"allocatable\":{\"memory\":\"15Gi\"}}}",
               conditions);
}

static const char READY_ONLY[] =
    "[{\"type\":\"MemoryPressure\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\"}]";
static const char MEMORY_PRESSURE[] =
    "[{\"type\":\"MemoryPressure\",\"status\":\"True\",\"reason\":\"KubeletHasInsufficientMemory\","
    "\"message\":\"kubelet has insufficient memory available\"},{\"type\":\"Ready\",\"status\":"
    "\"True\"}]";

/* Parse and diagnose; frees the JSON texts. */
static void run(struct krc_report *r, struct krc_diagnosis *d, const struct pod *p,
                const struct ev *evs, size_t n_evs, const char *node_conditions)
{
    struct krc_error err;
    char *pod = pod_json(p);

    krc_report_init(r);
    krc_diagnosis_init(d);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(pod, strlen(pod), r, &err) != 0) {
        fail_msg("pod: %s\n%s", err.msg, pod);
    }
    krc_free(pod);
    if (evs != NULL) {
        char *ev = events_json(evs, n_evs);
        if (krc_kube_parse_events(ev, strlen(ev), r, &err) != 0) {
            fail_msg("events: %s", err.msg);
        }
        krc_free(ev);
    }
    if (node_conditions != NULL) {
        char *node = node_json(node_conditions);
        if (krc_kube_parse_node(node, strlen(node), r, &err) != 0) {
            fail_msg("node: %s", err.msg);
        }
        krc_free(node);
    }
    if (krc_diagnose(r, NULL, d, &err) != 0) {
        fail_msg("diagnose: %s", err.msg);
    }
}

static void done(struct krc_report *r, struct krc_diagnosis *d)
{
    krc_diagnosis_cleanup(d);
    krc_report_cleanup(r);
}

static int in(char *const *lines, size_t n, const char *needle)
{
    for (size_t i = 0; i < n; i++) {
        if (strstr(lines[i], needle) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* Every text of the diagnosis, for the forbidden claims. */
static int anywhere(const struct krc_diagnosis *d, const char *needle)
{
    return strstr(d->summary, needle) != NULL || strstr(d->next_step, needle) != NULL ||
           in(d->evidence, d->n_evidence, needle) || in(d->unchecked, d->n_unchecked, needle);
}

static void dump(const struct krc_diagnosis *d)
{
    print_message("cause %s (%s)\nsummary: %s\nnext: %s\n", krc_cause_name(d->cause),
                  krc_confidence_name(d->confidence), d->summary, d->next_step);
    for (size_t i = 0; i < d->n_evidence; i++) {
        print_message("  evidence: %s\n", d->evidence[i]);
    }
    for (size_t i = 0; i < d->n_unchecked; i++) {
        print_message("  unchecked: %s\n", d->unchecked[i]);
    }
}

#define EXPECT_CAUSE(d, want)                                                                      \
    do {                                                                                           \
        if ((d)->cause != (want)) {                                                                \
            dump(d);                                                                               \
            fail_msg("cause %s, want %s", krc_cause_name((d)->cause), krc_cause_name(want));       \
        }                                                                                          \
    } while (0)
#define SUMMARY_HAS(d, s)                                                                          \
    do {                                                                                           \
        if (strstr((d)->summary, (s)) == NULL) {                                                   \
            dump(d);                                                                               \
            fail_msg("summary lacks \"%s\"", (s));                                                 \
        }                                                                                          \
    } while (0)
#define EVIDENCE_HAS(d, s)                                                                         \
    do {                                                                                           \
        if (!in((d)->evidence, (d)->n_evidence, (s))) {                                            \
            dump(d);                                                                               \
            fail_msg("no evidence line with \"%s\"", (s));                                         \
        }                                                                                          \
    } while (0)
#define UNCHECKED_HAS(d, s)                                                                        \
    do {                                                                                           \
        if (!in((d)->unchecked, (d)->n_unchecked, (s))) {                                          \
            dump(d);                                                                               \
            fail_msg("no unchecked line with \"%s\"", (s));                                        \
        }                                                                                          \
    } while (0)
#define NOWHERE(d, s)                                                                              \
    do {                                                                                           \
        if (anywhere((d), (s))) {                                                                  \
            dump(d);                                                                               \
            fail_msg("forbidden claim \"%s\"", (s));                                               \
        }                                                                                          \
    } while (0)

/* What no verdict says without the evidence for it. */
static void no_unproven_negation(const struct krc_diagnosis *d)
{
    NOWHERE(d, "not the OOM killer");
    NOWHERE(d, "not the oom killer");
    NOWHERE(d, "no OOM kill");
}

/* ---- 1. container-limit OOM --------------------------------------------------------- */

static void test_container_limit_oom(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {.exit_code = 137,
                    .reason = "OOMKilled",
                    .resources = "{\"limits\":{\"memory\":\"1Gi\"},\"requests\":"
                                 "{\"memory\":\"512Mi\"}}"};

    (void)state;
    /* the spec's limit: no status resources (a cluster before 1.33) */
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    SUMMARY_HAS(&d, "OOM-killed by the kernel (reason OOMKilled, memory limit 1Gi)");
    EVIDENCE_HAS(&d, "memory limit 1Gi, request 512Mi (the container spec)");
    UNCHECKED_HAS(&d, "the container's memory use at the kill is not shown");
    NOWHERE(&d, "pod-level");
    NOWHERE(&d, "node ran out of memory");
    NOWHERE(&d, "resize");
    no_unproven_negation(&d);
    done(&r, &d);

    /* the actuated limit wins over the spec's (the same value: one line) */
    p.status_resources = "{\"limits\":{\"memory\":\"1024Mi\"},\"requests\":{\"memory\":\"512Mi\"}}";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "memory limit 1024Mi)");
    EVIDENCE_HAS(&d, "memory limit 1024Mi, request 512Mi (status.containerStatuses[].resources: "
                     "what the kubelet actuated)");
    NOWHERE(&d, "the spec asks for");
    done(&r, &d);

    /* a container limit and a pod-level limit: both named, which one was hit is unknown */
    p.status_resources = NULL;
    p.pod_resources = "{\"limits\":{\"memory\":\"4Gi\"}}";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "memory limit 1Gi)");
    EVIDENCE_HAS(&d, "pod-level memory limit 4Gi");
    UNCHECKED_HAS(&d, "the container's limit 1Gi and the pod-level limit 4Gi both apply: which "
                      "one was reached is not shown");
    done(&r, &d);
}

/* ---- 2. pod-level limit OOM ------------------------------------------------------ */

static void test_pod_level_limit_oom(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {
        .exit_code = 137, .reason = "OOMKilled", .resources = "{\"requests\":{\"cpu\":\"1\"}}"};

    (void)state;
    p.pod_resources = "{\"limits\":{\"memory\":\"32Gi\"},\"requests\":{\"memory\":\"24Gi\"}}";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    SUMMARY_HAS(&d, "under the pod-level memory limit 32Gi (spec.resources): it has no memory "
                    "limit of its own");
    EVIDENCE_HAS(&d, "pod-level memory limit 32Gi, request 24Gi (spec.resources, KEP-2837)");
    EVIDENCE_HAS(&d, "this container has no limit of its own");
    UNCHECKED_HAS(&d, "which container of the pod used the most memory is not shown");
    assert_non_null(strstr(d.next_step, "The pod-level memory limit 32Gi (spec.resources)"));
    /* not the node's verdict: a limit is named */
    NOWHERE(&d, "no memory limit in the pod spec");
    NOWHERE(&d, "node ran out of memory");
    NOWHERE(&d, "a limit above it was reached");
    no_unproven_negation(&d);
    done(&r, &d);
}

/* ---- 3. node / system OOM ------------------------------------------------------------ */

static void test_node_oom(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {.exit_code = 137, .reason = "OOMKilled"};
    struct ev system_oom[] = {
        {"Node", "SystemOOM", "System OOM encountered, victim process: app, pid: 4242",
         "2026-11-20T10:04:59Z"},
    };

    (void)state;
    /* no limit anywhere, a SystemOOM event of the node: the node ran out of memory */
    run(&r, &d, &p, system_oom, 1, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "no memory limit in the pod spec: none on the container or the pod");
    SUMMARY_HAS(&d, "its node reported a system OOM (event SystemOOM): the node ran out of memory");
    EVIDENCE_HAS(&d, "event SystemOOM");
    EVIDENCE_HAS(&d, "victim process: app");
    NOWHERE(&d, "whether the node ran out of memory is not shown");
    no_unproven_negation(&d);
    done(&r, &d);

    /* MemoryPressure instead of an event */
    run(&r, &d, &p, NULL, 0, MEMORY_PRESSURE);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "node node-1 reports MemoryPressure=True: the node ran out of memory");
    done(&r, &d);

    /* neither: which limit was reached is stated as unknown, not claimed */
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "a limit above it was reached: the node's memory for pods or the node's own "
                    "memory");
    UNCHECKED_HAS(&d, "no SystemOOM or OOMKilling event and no MemoryPressure of the node were "
                      "seen: whether the node ran out of memory is not shown");
    if (strstr(d.summary, ": the node ran out of memory") != NULL) {
        dump(&d);
        fail_msg("claims the node ran out of memory without evidence");
    }
    assert_non_null(strstr(d.next_step, "memory of the pod's node"));
    done(&r, &d);

    /* without the node object the unknown says so */
    run(&r, &d, &p, NULL, 0, NULL);
    UNCHECKED_HAS(&d, "(no node object was given)");
    done(&r, &d);
}

/* ---- 4. OOMKilled with exit 143 ---------------------------------------------------------- */

static void test_oom_flag_on_stop(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {
        .exit_code = 143, .reason = "OOMKilled", .resources = "{\"limits\":{\"memory\":\"2Gi\"}}"};

    (void)state;
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_TERMINATED);
    SUMMARY_HAS(&d, "received SIGTERM and exited 143");
    SUMMARY_HAS(&d, "with reason OOMKilled: a stop, not an OOM kill of the container");
    SUMMARY_HAS(&d, "kubernetes#140716");
    EVIDENCE_HAS(&d, "reason OOMKilled with exit 143 (SIGTERM): the runtime reports OOMKilled "
                     "when the container's memory cgroup counted an OOM kill at any time");
    EVIDENCE_HAS(&d, "memory limit 2Gi");
    UNCHECKED_HAS(&d, "when the OOM kill happened and which process it hit are not shown");
    NOWHERE(&d, "OOM-killed by the kernel");
    no_unproven_negation(&d);
    done(&r, &d);

    /* the reported stop signal: 128 + 10 (SIGUSR1) with the flag; the stop-signal rule names
     * the cause, the flag is still stated */
    p.exit_code = 138;
    p.stop_signal = "SIGUSR1";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_TERMINATED);
    EVIDENCE_HAS(&d, "reason OOMKilled with exit 138 (SIGUSR1)");
    NOWHERE(&d, "OOM-killed by the kernel");
    done(&r, &d);

    /* exit 137 and exit 1 with OOMKilled stay OOM kills */
    p.stop_signal = NULL;
    p.exit_code = 137;
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    NOWHERE(&d, "kubernetes#140716");
    done(&r, &d);
    p.exit_code = 1;
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "with exit code 1");
    UNCHECKED_HAS(&d, "which process the OOM killer chose is not shown");
    done(&r, &d);
}

/* ---- 5. SIGKILL after the grace period ---------------------------------------------------- */

static void test_sigkill_after_grace(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {
        .exit_code = 137, .reason = "Error", .resources = "{\"limits\":{\"memory\":\"1Gi\"}}"};
    struct ev stop[] = {
        {"Pod", "Killing", "Stopping container app", "2026-11-20T10:04:30Z"},
    };
    struct ev stop_hook[] = {
        {"Pod", "Killing", "Stopping container app", "2026-11-20T10:04:30Z"},
        {"Pod", "FailedPreStopHook", "PreStopHook failed: command '/bin/drain' exited with 1",
         "2026-11-20T10:04:45Z"},
    };
    struct ev early[] = {
        {"Pod", "Killing", "Stopping container app", "2026-11-20T10:04:55Z"},
    };

    (void)state;
    /* the kubelet's stop 30 s before the SIGKILL, grace period 30 s */
    run(&r, &d, &p, stop, 1, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    SUMMARY_HAS(&d, "; the kubelet had stopped it (event Killing: Stopping container app)");
    SUMMARY_HAS(&d, "SIGKILL 30s after the stop: the 30s grace period ran out before it exited");
    EVIDENCE_HAS(&d, "event Killing");
    EVIDENCE_HAS(&d, "terminationGracePeriodSeconds 30");
    UNCHECKED_HAS(&d, "whether a preStop hook used up the grace period or the process ignored its "
                      "stop signal is not shown");
    NOWHERE(&d, "OOM killer");
    NOWHERE(&d, "probe kill");
    no_unproven_negation(&d);
    done(&r, &d);

    /* a failed preStop hook is named */
    run(&r, &d, &p, stop_hook, 2, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    SUMMARY_HAS(&d, "its preStop hook failed (event FailedPreStopHook)");
    EVIDENCE_HAS(&d, "event FailedPreStopHook");
    done(&r, &d);

    /* SIGKILL 5 s after the stop with a 30 s grace period: not the grace period's end */
    run(&r, &d, &p, early, 1, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    SUMMARY_HAS(&d, "SIGKILL 5s after the stop, before the pod's 30s grace period ended");
    NOWHERE(&d, "grace period ran out");
    done(&r, &d);

    /* a longer grace period from the spec: 60 s, and the stop 30 s before: not ran out */
    p.grace = 60;
    run(&r, &d, &p, stop, 1, READY_ONLY);
    SUMMARY_HAS(&d, "before the pod's 60s grace period ended");
    done(&r, &d);
    p.grace = 0;

    /* a deletion with its own grace period of 10 s, asked at 10:04:50 */
    p.meta = ",\"deletionTimestamp\":\"2026-11-20T10:05:00Z\",\"deletionGracePeriodSeconds\":10";
    {
        struct ev deleted[] = {
            {"Pod", "Killing", "Stopping container app", "2026-11-20T10:04:50Z"},
        };
        run(&r, &d, &p, deleted, 1, READY_ONLY);
        EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
        SUMMARY_HAS(&d,
                    "SIGKILL 10s after the stop: the 10s grace period ran out before it exited");
        EVIDENCE_HAS(&d, "metadata.deletionGracePeriodSeconds 10 (the pod's deletion)");
        done(&r, &d);
    }
    p.meta = NULL;

    /* no event: what killed it is not named, and the unknowns say so */
    run(&r, &d, &p, NULL, 0, NULL);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    SUMMARY_HAS(&d, "the OOM killer or a probe kill cannot be ruled out");
    NOWHERE(&d, "grace period");
    no_unproven_negation(&d);
    done(&r, &d);

    /* a probe kill ending in SIGKILL after the grace period */
    {
        struct ev probe_kill[] = {
            {"Pod", "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 503",
             "2026-11-20T10:04:20Z"},
            {"Pod", "Killing", "Container app failed liveness probe, will be restarted",
             "2026-11-20T10:04:30Z"},
        };
        p.probes = ",\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080}}";
        run(&r, &d, &p, probe_kill, 2, READY_ONLY);
        EXPECT_CAUSE(&d, KRC_CAUSE_LIVENESS_PROBE_FAILED);
        SUMMARY_HAS(&d, "it did not stop within the 30s grace period and was SIGKILLed");
        EVIDENCE_HAS(&d, "exit 137 30s after the probe kill");
        EVIDENCE_HAS(&d, "the pod's terminationGracePeriodSeconds");
        done(&r, &d);
        /* the probe's own grace period (KEP-2238) */
        probe_kill[1].at = "2026-11-20T10:04:50Z";
        p.probes = ",\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
                   "\"terminationGracePeriodSeconds\":10}";
        run(&r, &d, &p, probe_kill, 2, READY_ONLY);
        EXPECT_CAUSE(&d, KRC_CAUSE_LIVENESS_PROBE_FAILED);
        SUMMARY_HAS(&d, "within the 10s grace period");
        EVIDENCE_HAS(&d, "the probe's terminationGracePeriodSeconds");
        done(&r, &d);
    }
}

/* ---- 6. a memory-limit decrease by resize before the OOM kill --------------------------- */

static void test_resize_before_oom(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {
        .exit_code = 137, .reason = "OOMKilled", .resources = "{\"limits\":{\"memory\":\"8Gi\"}}"};

    (void)state;
    /* the spec lowered to 8Gi, the status still shows 12Gi, the resize in progress since
     * 10:03:00: "limit lowered at T" */
    p.status_resources = "{\"limits\":{\"memory\":\"12Gi\"}}";
    p.conditions = "[{\"type\":\"PodResizeInProgress\",\"status\":\"True\","
                   "\"lastTransitionTime\":\"2026-11-20T10:03:00Z\"}]";
    p.meta = ",\"generation\":3";
    p.status = ",\"observedGeneration\":3";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_OOM_KILLED);
    SUMMARY_HAS(&d, "memory limit 12Gi in effect");
    SUMMARY_HAS(&d, "limit lowered at 2026-11-20T10:03:00Z: an in-place resize to 8Gi was in "
                    "progress (PodResizeInProgress; the actual limit shown is 12Gi), 2m0s before "
                    "the container ended");
    EVIDENCE_HAS(&d, "pod condition PodResizeInProgress=True since 2026-11-20T10:03:00Z, 2m0s "
                     "before the container ended");
    EVIDENCE_HAS(&d, "the spec asks for 8Gi, not in effect");
    no_unproven_negation(&d);
    done(&r, &d);

    /* the kubelet refused the decrease (usage above the new limit): nothing was lowered */
    p.conditions = "[{\"type\":\"PodResizeInProgress\",\"status\":\"True\",\"reason\":\"Error\","
                   "\"message\":\"memory usage exceeds the desired limit\","
                   "\"lastTransitionTime\":\"2026-11-20T10:03:00Z\"}]";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    SUMMARY_HAS(&d, "a resize of its memory limit to 8Gi could not be applied "
                    "(PodResizeInProgress, reason Error): the limit stayed 12Gi");
    NOWHERE(&d, "limit lowered");
    EVIDENCE_HAS(&d, "reason Error: memory usage exceeds the desired limit");
    done(&r, &d);

    /* the actuated limit below the spec's, a raise pending (the 1.35 fixture's shape): the
     * limit in effect is named, nothing is said to be lowered */
    p.resources = "{\"limits\":{\"memory\":\"16Gi\"}}";
    p.conditions = "[{\"type\":\"PodResizePending\",\"status\":\"True\",\"reason\":\"Deferred\","
                   "\"message\":\"Node didn't have enough capacity\","
                   "\"lastTransitionTime\":\"2026-11-20T09:10:00Z\"}]";
    p.meta = ",\"generation\":4";
    p.status = ",\"observedGeneration\":4";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    SUMMARY_HAS(&d, "memory limit 12Gi in effect");
    SUMMARY_HAS(&d, "the limit in effect is below the spec's 16Gi: the resize is pending since "
                    "2026-11-20T09:10:00Z (PodResizePending, Deferred)");
    EVIDENCE_HAS(&d, "pod condition PodResizePending=True since 2026-11-20T09:10:00Z");
    NOWHERE(&d, "limit lowered");
    done(&r, &d);

    /* the kubelet had not yet seen the latest spec */
    p.conditions = NULL;
    p.meta = ",\"generation\":5";
    p.status = ",\"observedGeneration\":4";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EVIDENCE_HAS(&d, "metadata.generation 5, status.observedGeneration 4: the kubelet had not yet "
                     "acted on the latest change of the pod's spec");
    NOWHERE(&d, "limit lowered");
    done(&r, &d);

    /* a changed spec and nothing else: said, with what is not known */
    p.status_resources = NULL;
    p.meta = ",\"generation\":2";
    p.status = ",\"observedGeneration\":2";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EVIDENCE_HAS(&d, "metadata.generation 2: the pod's spec was changed after it was created (a "
                     "resize changes it); when, and what, is not shown");
    NOWHERE(&d, "resize to");
    done(&r, &d);
}

/* ---- 7. a configured probe alone is a hypothesis --------------------------------------- */

static void assert_no_probe_claim(const struct krc_diagnosis *d)
{
    /* "a probe kill cannot be ruled out" is an unknown, said; a probe kill is not */
    if (strstr(d->summary, "probe failed") != NULL ||
        strstr(d->summary, "probe configured") != NULL ||
        strstr(d->summary, "killed the container") != NULL) {
        dump(d);
        fail_msg("the summary names a probe kill without a kill event");
    }
    NOWHERE(d, "failed liveness probe");
    NOWHERE(d, "failed startup probe");
    NOWHERE(d, "probe killed");
}

static void test_probe_alone_is_a_hypothesis(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct pod p = {
        .exit_code = 137, .reason = "Error", .resources = "{\"limits\":{\"memory\":\"1Gi\"}}"};
    struct ev backoff[] = {
        {"Pod", "BackOff", "Back-off restarting failed container app in pod web-0_shop",
         "2026-11-20T10:05:20Z"},
    };
    struct ev unhealthy[] = {
        {"Pod", "Unhealthy",
         "Liveness probe failed: Get \\\"http://10.0.0.7:8080/healthz\\\": "
         "context deadline exceeded",
         "2026-11-20T10:04:40Z"},
    };

    (void)state;
    p.probes = ",\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
               "\"initialDelaySeconds\":0,\"periodSeconds\":10,\"failureThreshold\":3}";
    /* exit 137, no events: killed, the probe a hypothesis */
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    EVIDENCE_HAS(&d, "hypothesis, not a finding: a liveness probe is configured (httpGet, first "
                     "possible kill after 20s) and fits the run time of 5m0s; a probe kill ends a "
                     "container this way, but no Killing event naming it was seen");
    UNCHECKED_HAS(&d, "no pod events were available, so a liveness or startup probe kill or an "
                      "eviction cannot be ruled out");
    assert_no_probe_claim(&d);
    no_unproven_negation(&d);
    done(&r, &d);

    /* exit 143: terminated */
    p.exit_code = 143;
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_TERMINATED);
    EVIDENCE_HAS(&d, "hypothesis, not a finding: a liveness probe is configured");
    assert_no_probe_claim(&d);
    done(&r, &d);

    /* exit 0 from a program that handles SIGTERM: completed, and the next step looks for the
     * kill event */
    p.exit_code = 0;
    p.reason = "Completed";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_COMPLETED);
    EVIDENCE_HAS(&d, "hypothesis, not a finding: a liveness probe is configured");
    assert_non_null(strstr(d.next_step, "Killing event of the liveness probe"));
    assert_no_probe_claim(&d);
    done(&r, &d);

    /* events of the time and none is a probe failure or kill: no hypothesis */
    p.exit_code = 137;
    p.reason = "Error";
    run(&r, &d, &p, backoff, 1, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    NOWHERE(&d, "hypothesis");
    done(&r, &d);

    /* failures of the probe seen, no Killing event: still killed, the failures quoted */
    run(&r, &d, &p, unhealthy, 1, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_KILLED);
    EVIDENCE_HAS(&d, "; its failures were seen; a probe kill ends a container this way");
    EVIDENCE_HAS(&d, "event Unhealthy");
    UNCHECKED_HAS(&d, "liveness probe failures were seen but no Killing event of the probe");
    assert_no_probe_claim(&d);
    done(&r, &d);

    /* a startup probe whose budget ends where the run ended (30 x 10 s: 290 s .. 5 min) */
    p.exit_code = 143;
    p.probes = ",\"startupProbe\":{\"httpGet\":{\"port\":8080},\"periodSeconds\":10,"
               "\"failureThreshold\":30}";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_TERMINATED);
    EVIDENCE_HAS(&d, "a startup probe is configured (httpGet, first possible kill after 290s)");
    assert_no_probe_claim(&d);
    done(&r, &d);

    /* a probe whose timing does not fit (first check after 10 min, the run was 5 min) */
    p.probes = ",\"livenessProbe\":{\"httpGet\":{\"port\":8080},\"initialDelaySeconds\":600}";
    run(&r, &d, &p, NULL, 0, READY_ONLY);
    EXPECT_CAUSE(&d, KRC_CAUSE_TERMINATED);
    NOWHERE(&d, "hypothesis");
    done(&r, &d);

    /* the rules that named the probe from the spec no longer hold with a termination */
    {
        struct krc_error err;
        enum krc_confidence conf;
        char *pod;
        p.probes = ",\"livenessProbe\":{\"httpGet\":{\"port\":8080}}";
        pod = pod_json(&p);
        krc_report_init(&r);
        krc_error_clear(&err);
        assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
        krc_free(pod);
        assert_int_equal(
            krc_diagnose_rule_matches(&r, NULL, "liveness_probe_configured", &conf, &err), 0);
        assert_int_equal(
            krc_diagnose_rule_matches(&r, NULL, "startup_probe_configured", &conf, &err), 0);
        krc_report_cleanup(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_limit_oom),
        cmocka_unit_test(test_pod_level_limit_oom),
        cmocka_unit_test(test_node_oom),
        cmocka_unit_test(test_oom_flag_on_stop),
        cmocka_unit_test(test_sigkill_after_grace),
        cmocka_unit_test(test_resize_before_oom),
        cmocka_unit_test(test_probe_alone_is_a_hypothesis),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
