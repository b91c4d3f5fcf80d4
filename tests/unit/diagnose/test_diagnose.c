/* diagnose: the whole corpus (every case directory under
 * KRC_FIXTURES/corpus) and one focused test per rule on small synthetic
 * pods, events and logs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "krc/util/buf.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/mem.h"
#include "krc/model/report.h"

#define POD_UID "7d1c0f8e-1111-4aaa-9bbb-000000000001"
#define OTHER_UID "7d1c0f8e-2222-4aaa-9bbb-000000000002"
#define STARTED "2025-01-01T10:00:00Z"
#define FINISHED "2025-01-01T10:05:00Z"

/* ---- helpers ---------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;

    if (f == NULL) {
        return NULL;
    }
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    /* exact size, no NUL: ASan catches any read past the end */
    data = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return data;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    struct krc_buf b;
    va_list ap;
    char *s;

    krc_buf_init(&b, 1 << 22);
    va_start(ap, f);
    assert_int_equal(krc_buf_vprintf(&b, f, ap), 0);
    va_end(ap);
    s = krc_buf_take(&b);
    assert_non_null(s);
    return s;
}

/* A pod with one container "app" (or `cname`), whose lastState.terminated
 * is given by the arguments. `extra_term` is appended inside terminated
 * (e.g. ",\"message\":\"...\""), `limits` is a JSON object. */
static char *make_pod_probes(const char *cname, int exit_code, const char *reason,
                             const char *started, const char *extra_term, const char *limits,
                             const char *probes)
{
    return fmt("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\","
               "\"namespace\":\"shop\",\"uid\":\"" POD_UID "\",\"ownerReferences\":[{\"kind\":"
               "\"StatefulSet\",\"name\":\"web\",\"controller\":true}]},"
               "\"spec\":{\"nodeName\":\"node-1\",\"restartPolicy\":\"Always\",\"containers\":[{"
               "\"name\":\"%s\",\"image\":\"img:1\"%s,\"resources\":{\"limits\":%s}}]},"
               "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"%s\","
               "\"ready\":false,\"restartCount\":3,\"image\":\"img:1\",\"imageID\":\"\","
               "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off "
               "40s\"}},\"lastState\":{\"terminated\":{\"exitCode\":%d,\"reason\":\"%s\","
               "\"startedAt\":\"%s\",\"finishedAt\":\"" FINISHED "\"%s}}}]}}",
               cname, probes ? probes : "", limits ? limits : "{\"memory\":\"1Gi\"}", cname,
               exit_code, reason, started, extra_term ? extra_term : "");
}

/* The same pod without probes. */
static char *make_pod(const char *cname, int exit_code, const char *reason, const char *started,
                      const char *extra_term, const char *limits)
{
    return make_pod_probes(cname, exit_code, reason, started, extra_term, limits, NULL);
}

struct ev {
    const char *uid;
    const char *field_path; /* NULL: none */
    const char *reason;
    const char *message;
    const char *last;       /* NULL: lastTimestamp null */
    const char *event_time; /* NULL: null */
};

static char *make_events(const struct ev *evs, size_t n)
{
    struct krc_buf b;
    size_t i;
    char *s;

    krc_buf_init(&b, 1 << 20);
    assert_int_equal(krc_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":"
                                            "{\"resourceVersion\":\"\"},\"items\":["),
                     0);
    for (i = 0; i < n; i++) {
        char fp[128] = "";
        char last[64] = "null";
        char et[64] = "null";
        if (evs[i].field_path != NULL) {
            snprintf(fp, sizeof(fp), ",\"fieldPath\":\"%s\"", evs[i].field_path);
        }
        if (evs[i].last != NULL) {
            snprintf(last, sizeof(last), "\"%s\"", evs[i].last);
        }
        if (evs[i].event_time != NULL) {
            snprintf(et, sizeof(et), "\"%s\"", evs[i].event_time);
        }
        assert_int_equal(
            krc_buf_printf(&b,
                           "%s{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
                           "\"web-0.%zu\",\"namespace\":\"shop\"},\"involvedObject\":{\"kind\":"
                           "\"Pod\",\"namespace\":\"shop\",\"name\":\"web-0\",\"uid\":\"%s\"%s},"
                           "\"reason\":\"%s\",\"message\":\"%s\",\"source\":{\"component\":"
                           "\"kubelet\",\"host\":\"node-1\"},\"firstTimestamp\":%s,"
                           "\"lastTimestamp\":%s,\"eventTime\":%s,\"count\":2,\"type\":\"Normal\"}",
                           i ? "," : "", i, evs[i].uid, fp, evs[i].reason, evs[i].message, last,
                           last, et),
            0);
    }
    assert_int_equal(krc_buf_append_str(&b, "]}"), 0);
    s = krc_buf_take(&b);
    assert_non_null(s);
    return s;
}

/* Parse pod (+ events, + log) into r and diagnose; returns the cause. */
static enum krc_cause run(struct krc_report *r, struct krc_diagnosis *d, char *pod, char *events,
                          const void *log, size_t log_len)
{
    struct krc_error err;

    krc_report_init(r);
    krc_diagnosis_init(d);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), r, &err), 0);
    if (events != NULL) {
        if (krc_kube_parse_events(events, strlen(events), r, &err) != 0) {
            fail_msg("events: %s", err.msg);
        }
    }
    if (log != NULL) {
        if (log_len == SIZE_MAX) {
            log_len = strlen(log); /* a C string */
        }
        assert_int_equal(krc_report_set_log(r, NULL, log, log_len, 0, &err), 0);
    }
    if (krc_diagnose(r, NULL, d, &err) != 0) {
        fail_msg("diagnose: %s", err.msg);
    }
    krc_free(pod);
    krc_free(events);
    return d->cause;
}

static void done(struct krc_report *r, struct krc_diagnosis *d)
{
    krc_diagnosis_cleanup(d);
    krc_report_cleanup(r);
}

static int evidence_has(const struct krc_diagnosis *d, const char *needle)
{
    size_t i;

    for (i = 0; i < d->n_evidence; i++) {
        if (strstr(d->evidence[i], needle) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* Valid UTF-8 and no control characters. */
static int clean_text(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        if (*p < 0x20 || *p == 0x7f) {
            return 0;
        }
        if (*p < 0x80) {
            p++;
        } else if ((*p & 0xe0) == 0xc0 && (p[1] & 0xc0) == 0x80) {
            p += 2;
        } else if ((*p & 0xf0) == 0xe0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80) {
            p += 3;
        } else if ((*p & 0xf8) == 0xf0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 &&
                   (p[3] & 0xc0) == 0x80) {
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Does s hold a run of 24 bytes of `text`? */
static int shares_24(const char *s, const void *text, size_t len)
{
    const char *t = text;
    size_t n = strlen(s);

    for (size_t i = 0; t != NULL && i + 24 <= n; i++) {
        for (size_t j = 0; j + 24 <= len; j++) {
            if (t[j] == s[i] && memcmp(t + j, s + i, 24) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* summary_unquoted quotes nothing the pod wrote: no 24-byte run of it is
 * in the log, a termination or state message, an event message or the pod's
 * message; and it is the summary with parts left out. */
static int unquoted_ok(const struct krc_report *r, const struct krc_diagnosis *d, char *why,
                       size_t whysz)
{
    const char *u = d->summary_unquoted;
    const char *f = d->summary;
    size_t k = 0;

    if (u == NULL || !clean_text(u)) {
        snprintf(why, whysz, "summary_unquoted missing or not clean");
        return 0;
    }
    for (const char *c = u; *c != '\0'; c++) { /* a subsequence of the summary */
        while (f[k] != '\0' && f[k] != *c) {
            k++;
        }
        if (f[k] == '\0') {
            snprintf(why, whysz, "summary_unquoted is not the summary with parts left out");
            return 0;
        }
        k++;
    }
    if (shares_24(u, r->log, r->log_len) ||
        (r->pod_message && shares_24(u, r->pod_message, strlen(r->pod_message)))) {
        snprintf(why, whysz, "summary_unquoted quotes the log: %s", u);
        return 0;
    }
    for (size_t i = 0; i < r->n_events; i++) {
        const char *m = r->events[i].message;
        if (m != NULL && shares_24(u, m, strlen(m))) {
            snprintf(why, whysz, "summary_unquoted quotes an event: %s", u);
            return 0;
        }
    }
    for (size_t i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        const char *m[] = {c->state_message, c->last.message, c->state_term.message};
        for (size_t j = 0; j < 3; j++) {
            if (m[j] != NULL && shares_24(u, m[j], strlen(m[j]))) {
                snprintf(why, whysz, "summary_unquoted quotes a message: %s", u);
                return 0;
            }
        }
    }
    return 1;
}

/* ---- the corpus ---------------------------------------------------------- */

static int run_case(const char *dir, char *why, size_t whysz)
{
    char path[1024];
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    char *data;
    size_t len;
    cJSON *exp;
    const cJSON *j;
    int ok = 1;

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    krc_error_clear(&err);
    snprintf(path, sizeof(path), "%s/pod.json", dir);
    data = read_file(path, &len);
    assert_non_null(data);
    if (krc_kube_parse_pod(data, len, &r, &err) != 0) {
        fail_msg("%s: %s", path, err.msg);
    }
    free(data);
    snprintf(path, sizeof(path), "%s/events.json", dir);
    data = read_file(path, &len);
    if (data != NULL) {
        if (krc_kube_parse_events(data, len, &r, &err) != 0) {
            fail_msg("%s: %s", path, err.msg);
        }
        free(data);
    }
    snprintf(path, sizeof(path), "%s/node.json", dir);
    data = read_file(path, &len);
    if (data != NULL) {
        if (krc_kube_parse_node(data, len, &r, &err) != 0) {
            fail_msg("%s: %s", path, err.msg);
        }
        free(data);
    }
    krc_report_retain_pod_events(&r);
    snprintf(path, sizeof(path), "%s/logs.txt", dir);
    data = read_file(path, &len);
    if (data != NULL) {
        assert_int_equal(krc_report_set_log(&r, NULL, data, len, 0, &err), 0);
        free(data);
    }
    if (krc_diagnose(&r, NULL, &d, &err) != 0) {
        fail_msg("%s: diagnose: %s", dir, err.msg);
    }
    snprintf(path, sizeof(path), "%s/expected.json", dir);
    data = read_file(path, &len);
    assert_non_null(data);
    exp = cJSON_ParseWithLength(data, len);
    free(data);
    assert_non_null(exp);

    j = cJSON_GetObjectItemCaseSensitive(exp, "cause");
    if (!cJSON_IsString(j) || strcmp(j->valuestring, krc_cause_name(d.cause)) != 0) {
        snprintf(why, whysz, "cause %s, expected %s", krc_cause_name(d.cause),
                 cJSON_IsString(j) ? j->valuestring : "?");
        ok = 0;
    }
    j = cJSON_GetObjectItemCaseSensitive(exp, "container");
    if (ok &&
        (!cJSON_IsString(j) || d.container == NULL || strcmp(j->valuestring, d.container) != 0)) {
        snprintf(why, whysz, "container %s, expected %s", d.container ? d.container : "(none)",
                 cJSON_IsString(j) ? j->valuestring : "?");
        ok = 0;
    }
    j = cJSON_GetObjectItemCaseSensitive(exp, "restart_count");
    if (ok && cJSON_IsNumber(j) && j->valueint != d.restart_count) {
        snprintf(why, whysz, "restart_count %d, expected %d", d.restart_count, j->valueint);
        ok = 0;
    }
    j = cJSON_GetObjectItemCaseSensitive(exp, "exit_code");
    if (ok && cJSON_IsNumber(j) && j->valueint != d.exit_code) {
        snprintf(why, whysz, "exit_code %d, expected %d", d.exit_code, j->valueint);
        ok = 0;
    }
    if (ok && (!clean_text(d.summary) || d.n_evidence == 0)) {
        snprintf(why, whysz, "summary not clean or no evidence");
        ok = 0;
    }
    if (ok && !unquoted_ok(&r, &d, why, whysz)) {
        ok = 0;
    }
    cJSON_Delete(exp);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return ok;
}

static void test_corpus(void **state)
{
    const char *root = KRC_FIXTURES "/corpus";
    DIR *dir = opendir(root);
    struct dirent *e;
    int cases = 0;
    int failed = 0;

    (void)state;
    assert_non_null(dir);
    while ((e = readdir(dir)) != NULL) {
        char path[1024];
        char why[256] = "";
        struct stat st;
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s/pod.json", root, e->d_name);
        if (stat(path, &st) != 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
        cases++;
        if (!run_case(path, why, sizeof(why))) {
            print_error("corpus case %s: %s\n", e->d_name, why);
            failed++;
        }
    }
    closedir(dir);
    print_message("corpus: %d/%d cases correct\n", cases - failed, cases);
    assert_true(cases >= 20);
    assert_int_equal(failed, 0);
}

/* ---- rules ---------------------------------------------------------------- */

static void test_liveness_kill_in_window(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Unhealthy",
         "Liveness probe failed: HTTP probe failed with statuscode: 503", "2025-01-01T10:04:20Z",
         NULL},
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 137, "Error", STARTED, NULL, NULL),
                         make_events(evs, 2), NULL, 0),
                     KRC_CAUSE_LIVENESS_PROBE_FAILED);
    assert_string_equal(d.signal_name, "SIGKILL");
    assert_non_null(strstr(d.summary, "statuscode: 503"));
    assert_true(evidence_has(&d, "failed liveness probe"));
    done(&r, &d);
}

static void test_liveness_kill_with_exit_0_and_combined(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "(combined from similar events): Container app failed liveness probe, will be restarted",
         "2025-01-01T10:04:50Z", NULL},
    };

    (void)state;
    /* The application handles SIGTERM and exits 0: still a probe kill. */
    assert_int_equal(run(&r, &d, make_pod("app", 0, "Completed", STARTED, NULL, NULL),
                         make_events(evs, 1), NULL, 0),
                     KRC_CAUSE_LIVENESS_PROBE_FAILED);
    done(&r, &d);
}

static void test_probe_kill_outside_window_ignored(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        /* an earlier instance, before T.startedAt */
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T08:10:00Z", NULL},
        /* more than 60 s after T.finishedAt */
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed startup probe, will be restarted", "2025-01-01T10:06:30Z", NULL},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 137, "Error", STARTED, NULL, NULL),
                         make_events(evs, 2), NULL, 0),
                     KRC_CAUSE_KILLED);
    done(&r, &d);
}

static void test_probe_kill_window_upper_edge(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed startup probe, will be restarted", "2025-01-01T10:06:00Z", NULL},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 143, "Error", STARTED, NULL, NULL),
                         make_events(evs, 1), NULL, 0),
                     KRC_CAUSE_STARTUP_PROBE_FAILED);
    done(&r, &d);
}

static void test_probe_kill_event_time_only(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        /* events.k8s.io-style writer: lastTimestamp null, eventTime set */
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", NULL,
         "2025-01-01T10:04:58.123456Z"},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 143, "Error", STARTED, NULL, NULL),
                         make_events(evs, 1), NULL, 0),
                     KRC_CAUSE_LIVENESS_PROBE_FAILED);
    done(&r, &d);
}

static void test_other_pod_same_container_name_ignored(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {OTHER_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
        /* same pod, another container */
        {POD_UID, "spec.containers{sidecar}", "Killing",
         "Container sidecar failed liveness probe, will be restarted", "2025-01-01T10:04:30Z",
         NULL},
        /* same pod, but the init container namespace of field paths */
        {POD_UID, "spec.initContainers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 143, "Error", STARTED, NULL, NULL),
                         make_events(evs, 3), NULL, 0),
                     KRC_CAUSE_TERMINATED);
    assert_string_equal(d.signal_name, "SIGTERM");
    done(&r, &d);
}

static void test_readiness_never_counts(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Unhealthy",
         "Readiness probe failed: Get \\\"http://10.0.0.1:8080/ready\\\": dial tcp "
         "10.0.0.1:8080: connect: connection refused",
         "2025-01-01T10:04:30Z", NULL},
        {POD_UID, "spec.containers{app}", "Unhealthy",
         "Liveness probe failed: HTTP probe failed with statuscode: 500", "2025-01-01T10:04:30Z",
         NULL},
    };

    (void)state;
    /* Unhealthy events alone (no Killing) never make a probe kill. */
    assert_int_equal(run(&r, &d, make_pod("app", 143, "Error", STARTED, NULL, NULL),
                         make_events(evs, 2), NULL, 0),
                     KRC_CAUSE_TERMINATED);
    done(&r, &d);
}

static void test_definition_changed_ignored(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app definition changed, will be restarted", "2025-01-01T10:04:55Z", NULL},
        {POD_UID, "spec.containers{app}", "Killing", "Stopping container app",
         "2025-01-01T10:04:56Z", NULL},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 137, "Error", STARTED, NULL, NULL),
                         make_events(evs, 2), NULL, 0),
                     KRC_CAUSE_KILLED);
    done(&r, &d);
}

static void test_oom_killed_cgroup_v1_exit_1(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        /* OOMKilled wins over everything, even a probe kill */
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 1, "OOMKilled", STARTED, NULL, NULL),
                         make_events(evs, 1), NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_int_equal(d.exit_code, 1);
    assert_null(d.signal_name);
    assert_non_null(strstr(d.summary, "memory limit 1Gi"));
    assert_non_null(strstr(d.summary, "after 5m0s"));
    assert_non_null(strstr(d.summary, "3 restarts"));
    done(&r, &d);
}

static void test_start_error_not_found(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(
        run(&r, &d,
            make_pod("app", 128, "StartError", "1970-01-01T00:00:00Z",
                     ",\"message\":\"failed to create containerd task: failed to create shim "
                     "task: OCI runtime create failed: runc create failed: unable to start "
                     "container process: exec: \\\"gunicorn\\\": executable file not found in "
                     "$PATH: unknown\"",
                     NULL),
            NULL, "", 0),
        KRC_CAUSE_COMMAND_NOT_FOUND);
    assert_int_equal(d.started_at, 0);
    assert_true(evidence_has(&d, "executable file not found"));
    done(&r, &d);

    assert_int_equal(
        run(&r, &d,
            make_pod("app", 128, "StartError", "1970-01-01T00:00:00Z",
                     ",\"message\":\"OCI runtime create failed: runc create failed: unable to "
                     "start container process: exec: \\\"/app/run.sh\\\": stat /app/run.sh: no "
                     "such file or directory: unknown\"",
                     NULL),
            NULL, NULL, 0),
        KRC_CAUSE_COMMAND_NOT_FOUND);
    done(&r, &d);

    /* exit 127 from a shell */
    assert_int_equal(run(&r, &d, make_pod("app", 127, "Error", STARTED, NULL, NULL), NULL,
                         "sh: 1: celery: not found\n", 25),
                     KRC_CAUSE_COMMAND_NOT_FOUND);
    done(&r, &d);
}

static void test_start_error_permission_denied(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char log[] = "/bin/sh: 1: /app/entrypoint.sh: Permission denied\n";

    (void)state;
    assert_int_equal(
        run(&r, &d,
            make_pod("app", 128, "StartError", "1970-01-01T00:00:00Z",
                     ",\"message\":\"failed to create containerd task: failed to create shim "
                     "task: OCI runtime create failed: runc create failed: unable to start "
                     "container process: exec: \\\"/entrypoint.sh\\\": permission denied: "
                     "unknown\"",
                     NULL),
            NULL, NULL, 0),
        KRC_CAUSE_PERMISSION_DENIED);
    done(&r, &d);

    assert_int_equal(
        run(&r, &d, make_pod("app", 126, "Error", STARTED, NULL, NULL), NULL, log, sizeof(log) - 1),
        KRC_CAUSE_PERMISSION_DENIED);
    assert_true(evidence_has(&d, "Permission denied"));
    done(&r, &d);

    /* A start error about a mount is neither: the runtime could not start it. */
    assert_int_equal(
        run(&r, &d,
            make_pod("app", 128, "StartError", "1970-01-01T00:00:00Z",
                     ",\"message\":\"runc create failed: error mounting \\\"/var/lib/x\\\" to "
                     "rootfs at \\\"/etc/cfg\\\": no such file or directory\"",
                     NULL),
            NULL, NULL, 0),
        KRC_CAUSE_START_FAILED);
    done(&r, &d);
}

static void test_signals(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 134, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_ABORTED);
    assert_string_equal(d.signal_name, "SIGABRT");
    assert_int_equal(d.signal, 6);
    assert_non_null(strstr(d.summary, "SIGABRT"));
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod("app", 139, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_SEGFAULT);
    assert_string_equal(d.signal_name, "SIGSEGV");
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod("app", 135, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_string_equal(d.signal_name, "SIGBUS");
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_KILLED);
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod("app", 143, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_TERMINATED);
    done(&r, &d);

    assert_int_equal(
        run(&r, &d, make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL, NULL, 0),
        KRC_CAUSE_COMPLETED);
    assert_null(d.signal_name);
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod("app", 255, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_null(d.signal_name);
    done(&r, &d);

    assert_string_equal(krc_signal_name(9), "SIGKILL");
    assert_string_equal(krc_signal_name(15), "SIGTERM");
    assert_string_equal(krc_signal_name(4), "SIGILL");
    assert_string_equal(krc_signal_name(8), "SIGFPE");
    assert_null(krc_signal_name(0));
    assert_null(krc_signal_name(65));
}

static void test_cuda_oom_line_3_of_5000(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_buf b;
    int i;

    (void)state;
    krc_buf_init(&b, 1 << 22);
    assert_int_equal(krc_buf_append_str(&b, "rank0: starting\nrank3: loading shard\n"), 0);
    assert_int_equal(krc_buf_append_str(&b, "[rank3]: torch.OutOfMemoryError: CUDA out of "
                                            "memory. Tried to allocate 2.00 GiB.\n"),
                     0);
    for (i = 3; i < 5000; i++) {
        assert_int_equal(
            krc_buf_printf(&b, "rank0: step %d loss=%.3f (waiting for peers)\n", i, 1.0 / (i + 1)),
            0);
    }
    assert_int_equal(
        run(&r, &d, make_pod("trainer", 1, "Error", STARTED, NULL, "{\"nvidia.com/gpu\":\"8\"}"),
            NULL, b.data, b.len),
        KRC_CAUSE_GPU_OUT_OF_MEMORY);
    assert_int_equal(d.gpus, 8);
    assert_non_null(strstr(d.summary, "8 GPUs"));
    assert_true(evidence_has(&d, "CUDA out of memory"));
    done(&r, &d);

    /* Exit 0 with the same log: the log only decides non-zero exits. */
    assert_int_equal(
        run(&r, &d, make_pod("trainer", 0, "Completed", STARTED, NULL, NULL), NULL, b.data, b.len),
        KRC_CAUSE_COMPLETED);
    done(&r, &d);
    krc_buf_cleanup(&b);
}

static void test_gpu_error(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char xid[] = "loading model\n"
                              "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the "
                              "bus.\nRuntimeError: CUDA error: unknown error\n";
    static const char drv[] = "Failed to initialize NVML: Driver/library version mismatch\n";
    static const char not_xid[] = "id=aXid7 mixidx=3\nValueError: bad input\n";

    (void)state;
    assert_int_equal(
        run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, xid, sizeof(xid) - 1),
        KRC_CAUSE_GPU_ERROR);
    done(&r, &d);
    assert_int_equal(
        run(&r, &d, make_pod("app", 255, "Error", STARTED, NULL, NULL), NULL, drv, sizeof(drv) - 1),
        KRC_CAUSE_GPU_ERROR);
    done(&r, &d);
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, not_xid,
                         sizeof(not_xid) - 1),
                     KRC_CAUSE_APP_ERROR);
    done(&r, &d);
}

static void test_dependency_at_the_end(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char *const logs[] = {
        /* Go */
        "starting\nredis ping failed (attempt 1/3): dial tcp 10.0.0.5:6379: connect: connection "
        "refused\nfatal: could not connect to redis: dial tcp 10.0.0.5:6379: connect: "
        "connection refused\n",
        /* Node, with a stack and the error object after the message */
        "listening\nError: getaddrinfo ENOTFOUND postgres.db.svc\n    at "
        "GetAddrInfoReqWrap.onlookup (node:dns:109:26) {\n  errno: -3008,\n  code: "
        "'ENOTFOUND',\n  syscall: 'getaddrinfo',\n  hostname: 'postgres.db.svc'\n}\n\nNode.js "
        "v20.11.0\n",
        /* asyncpg */
        "Traceback (most recent call last):\n  File \"/app/main.py\", line 3, in <module>\n"
        "ConnectionRefusedError: [Errno 111] Connect call failed ('10.1.2.3', 5432)\n",
        /* JDBC */
        "org.postgresql.util.PSQLException: Connection to db:5432 refused. Check that the "
        "hostname and port are correct and that the postmaster is accepting TCP/IP "
        "connections.\n\tat org.postgresql.core.v3.ConnectionFactoryImpl.openConnectionImpl("
        "ConnectionFactoryImpl.java:346)\nCaused by: java.net.ConnectException: Connection "
        "refused\n\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)\n",
        /* kafka */
        "[2025-01-01 10:04:59,000] WARN [AdminClient clientId=adminclient-1] Connection to node "
        "-1 (kafka/10.0.0.9:9092) could not be established. Broker may not be available.\n"
        "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node "
        "assignment. Call: listTopics\n",
        /* grpc */
        "E0101 10:04:59 rpc error: code = Unavailable desc = connection error: desc = "
        "\"transport: Error while dialing: dial tcp 10.0.0.7:50051: i/o timeout\"\nexit status "
        "1\n",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
        enum krc_cause c = run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                               logs[i], strlen(logs[i]));
        if (c != KRC_CAUSE_DEPENDENCY_UNREACHABLE) {
            fail_msg("log %zu: cause %s", i, krc_cause_name(c));
        }
        done(&r, &d);
    }
}

/* The summary quotes the log's last line; summary_unquoted (the Kubernetes
 * Event's note) is krc's own words; redacted first, as the daemon does, the
 * summary quotes the redacted line; krc_diagnosis_redact applies the extra
 * patterns to what the diagnosis wrote. */
static void test_summary_unquoted_and_redaction(void **state)
{
    static const char *const pats[] = {"app-[0-9]{3}"};
    const char *log = "starting\nconnecting\nfatal: login failed DB_PASS=hunter2 for app-123\n";
    struct krc_redactor *rd = NULL;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;

    (void)state;
    assert_int_equal(
        run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, log, SIZE_MAX),
        KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, "the log ends with: fatal: login failed DB_PASS=hunter2"));
    assert_string_equal(d.summary_unquoted,
                        "Container app exited with code 1 after 5m0s; 3 restarts");
    done(&r, &d);
    /* the daemon's order: the report, then the diagnosis */
    assert_int_equal(krc_redact_new(pats, 1, &rd, NULL), 0);
    krc_report_init(&r);
    krc_diagnosis_init(&d);
    krc_error_clear(&err);
    {
        char *pod = make_pod("app", 1, "Error", STARTED, NULL, NULL);
        assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
        krc_free(pod);
    }
    assert_int_equal(krc_report_set_log(&r, NULL, log, strlen(log), 0, &err), 0);
    assert_int_equal(krc_report_redact(&r, rd, &err), 2);
    assert_int_equal(krc_diagnose(&r, NULL, &d, &err), 0);
    assert_int_equal(krc_diagnosis_redact(&d, rd, &err), 0);
    assert_null(strstr(d.summary, "hunter2"));
    assert_null(strstr(d.summary, "app-123"));
    assert_non_null(strstr(d.summary, "DB_PASS=[REDACTED] for [REDACTED]"));
    for (size_t i = 0; i < d.n_evidence; i++) {
        assert_null(strstr(d.evidence[i], "hunter2"));
    }
    done(&r, &d);
    krc_redact_free(rd);
}

static void test_dependency_retried_successfully_is_not_the_cause(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_buf b;
    int i;

    (void)state;
    krc_buf_init(&b, 1 << 20);
    assert_int_equal(krc_buf_append_str(&b, "connecting to postgres at db:5432\n"
                                            "connection failed: dial tcp 10.0.0.3:5432: connect: "
                                            "connection refused, retrying in 2s\n"
                                            "connected to postgres\n"),
                     0);
    for (i = 0; i < 10; i++) {
        assert_int_equal(krc_buf_printf(&b, "GET /items/%d 200 3ms\n", i), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "panic: assignment to entry in nil map\n\n"
                                            "goroutine 1 [running]:\nmain.main()\n"
                                            "\t/src/main.go:12 +0x1d\n"),
                     0);
    assert_int_equal(
        run(&r, &d, make_pod("app", 2, "Error", STARTED, NULL, NULL), NULL, b.data, b.len),
        KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, "panic: assignment to entry in nil map"));
    done(&r, &d);

    /* kubectl --timestamps prefixes and CRLF line ends: the panic after the
     * network error is still recognised as a different error. */
    krc_buf_reset(&b);
    assert_int_equal(krc_buf_append_str(&b, "2025-01-01T10:04:58.000000001Z dial tcp "
                                            "10.0.0.3:5432: connect: connection refused\r\n"
                                            "2025-01-01T10:04:59.123456789Z panic: boom\r\n"
                                            "2025-01-01T10:04:59.123456789Z \r\n"),
                     0);
    assert_int_equal(
        run(&r, &d, make_pod("app", 2, "Error", STARTED, NULL, NULL), NULL, b.data, b.len),
        KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, ": panic: boom"));
    done(&r, &d);

    /* Within the last lines, but the dependency answered afterwards. */
    krc_buf_reset(&b);
    assert_int_equal(krc_buf_append_str(&b, "kafka: dial tcp 10.0.0.9:9092: i/o timeout\n"
                                            "reconnected to kafka-0\n"
                                            "consumer group joined\n"
                                            "worker exiting: unexpected state\n"),
                     0);
    assert_int_equal(
        run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, b.data, b.len),
        KRC_CAUSE_APP_ERROR);
    done(&r, &d);

    /* The same early error far above a long healthy run, exit 1 without a
     * message at the end. */
    krc_buf_reset(&b);
    assert_int_equal(krc_buf_append_str(&b, "redis: connection refused, retrying\n"), 0);
    for (i = 0; i < 100; i++) {
        assert_int_equal(krc_buf_printf(&b, "processed batch %d\n", i), 0);
    }
    assert_int_equal(
        run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, b.data, b.len),
        KRC_CAUSE_APP_ERROR);
    done(&r, &d);
    krc_buf_cleanup(&b);
}

static void test_non_utf8_log(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char log[] = "\xff\xfe binary \x00\x01\x02 garbage \xc3\x28\n"
                              "progress  10%\r progress  50%\r progress 100%\n"
                              "\x1b[31mERROR\x1b[0m redis \xe2\x9c\x97 \x80\x81: Error 111 "
                              "connecting to redis:6379. Connection refused. <&>\n";
    size_t i;

    (void)state;
    assert_int_equal(
        run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, log, sizeof(log) - 1),
        KRC_CAUSE_DEPENDENCY_UNREACHABLE);
    assert_true(clean_text(d.summary));
    for (i = 0; i < d.n_evidence; i++) {
        assert_true(clean_text(d.evidence[i]));
        assert_null(strstr(d.evidence[i], "[31m"));
    }
    assert_true(evidence_has(&d, "Connection refused. <&>"));
    assert_true(evidence_has(&d, "\xe2\x9c\x97 \xef\xbf\xbd\xef\xbf\xbd:"));
    done(&r, &d);
}

static void test_huge_line_and_bounded_work(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    size_t len = 64 * 1024;
    char *log = malloc(len);
    clock_t t0;
    double secs;
    size_t i;

    (void)state;
    assert_non_null(log);
    /* one 64 KiB line of letters with no match anywhere: the worst case */
    for (i = 0; i < len; i++) {
        log[i] = (char)('a' + (i * 7) % 26);
    }
    t0 = clock();
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, log, len),
                     KRC_CAUSE_APP_ERROR);
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    done(&r, &d);
    /* shown, not asserted: timings belong to bench/, the machines are noisy */
    print_message("64 KiB log without matches: %.3f s\n", secs);

    /* a match in the middle of a huge line gives a short evidence line */
    memcpy(log + 40000, "CUDA out of memory", 18);
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, log, len),
                     KRC_CAUSE_GPU_OUT_OF_MEMORY);
    assert_true(evidence_has(&d, "CUDA out of memory"));
    for (i = 0; i < d.n_evidence; i++) {
        assert_true(strlen(d.evidence[i]) < KRC_DIAG_EVIDENCE_MAX);
    }
    assert_true(strlen(d.summary) < 1024);
    done(&r, &d);

    /* the front cut of that line never lands inside a UTF-8 sequence: "x",
     * then "\xc3\xa9" pairs (leads at odd offsets), "y" and the match at an
     * even offset, so 60 bytes before it is a continuation byte */
    log[0] = 'x';
    for (i = 1; i + 1 < 40001; i += 2) {
        log[i] = (char)0xc3;
        log[i + 1] = (char)0xa9;
    }
    log[40001] = 'y';
    memcpy(log + 40002, "CUDA out of memory", 18);
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, log, len),
                     KRC_CAUSE_GPU_OUT_OF_MEMORY);
    assert_true(evidence_has(&d, "\xc3\xa9yCUDA out of memory"));
    for (i = 0; i < d.n_evidence; i++) {
        assert_null(strstr(d.evidence[i], "\xef\xbf\xbd")); /* no U+FFFD */
    }
    done(&r, &d);
    free(log);
}

static void test_termination_message_as_log(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    /* FallbackToLogsOnError: the log tail is in T.message, no log file. */
    assert_int_equal(
        run(&r, &d,
            make_pod("app", 1, "Error", STARTED,
                     ",\"message\":\"RuntimeError: CUDA error: out of memory\\nexiting\\n\"", NULL),
            NULL, NULL, 0),
        KRC_CAUSE_GPU_OUT_OF_MEMORY);
    done(&r, &d);
}

static const char two_containers_pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\","
    "\"uid\":\"u1\"},\"spec\":{\"restartPolicy\":\"Always\",\"initContainers\":["
    "{\"name\":\"migrate\",\"image\":\"i\"},{\"name\":\"proxy\",\"image\":\"i\","
    "\"restartPolicy\":\"Always\"}],\"containers\":[{\"name\":\"main\",\"image\":\"i\"},"
    "{\"name\":\"worker\",\"image\":\"i\"}]},\"status\":{"
    "\"initContainerStatuses\":["
    /* completed ordinary init container with an old failure: never chosen */
    "{\"name\":\"migrate\",\"ready\":true,\"restartCount\":1,\"image\":\"i\",\"imageID\":\"\","
    "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\",\"startedAt\":"
    "\"2025-01-01T11:00:00Z\",\"finishedAt\":\"2025-01-01T11:00:01Z\"}},\"lastState\":{"
    "\"terminated\":{\"exitCode\":1,\"reason\":\"Error\",\"startedAt\":\"2025-01-01T11:59:00Z\","
    "\"finishedAt\":\"2025-01-01T11:59:59Z\"}}},"
    "{\"name\":\"proxy\",\"ready\":true,\"restartCount\":2,\"image\":\"i\",\"imageID\":\"\","
    "\"state\":{\"running\":{\"startedAt\":\"2025-01-01T10:00:00Z\"}},\"lastState\":{"
    "\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\",\"startedAt\":"
    "\"2025-01-01T09:00:00Z\",\"finishedAt\":\"2025-01-01T09:30:00Z\"}}}],"
    "\"containerStatuses\":["
    "{\"name\":\"main\",\"ready\":true,\"restartCount\":9,\"image\":\"i\",\"imageID\":\"\","
    "\"state\":{\"running\":{\"startedAt\":\"2025-01-01T10:00:00Z\"}},\"lastState\":{"
    "\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\",\"startedAt\":"
    "\"2025-01-01T09:00:00Z\",\"finishedAt\":\"2025-01-01T09:10:00Z\"}}},"
    "{\"name\":\"worker\",\"ready\":false,\"restartCount\":1,\"image\":\"i\",\"imageID\":\"\","
    "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{"
    "\"terminated\":{\"exitCode\":2,\"reason\":\"Error\",\"startedAt\":"
    "\"2025-01-01T09:40:00Z\",\"finishedAt\":\"2025-01-01T09:45:00Z\"}}}]}}";

static void test_pick_container(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;

    (void)state;
    krc_error_clear(&err);
    /* worker finished last (09:45) though main has more restarts; migrate's
     * later failure belongs to a completed init container */
    assert_int_equal(run(&r, &d, krc_strdup(two_containers_pod), NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_string_equal(d.container, "worker");
    assert_int_equal(d.restart_count, 1);
    assert_int_equal(d.exit_code, 2);

    /* an explicit container */
    assert_int_equal(krc_diagnose(&r, "main", &d, &err), 0);
    assert_int_equal(d.cause, KRC_CAUSE_OOM_KILLED);
    assert_int_equal(krc_diagnose(&r, "proxy", &d, &err), 0);
    assert_int_equal(d.cause, KRC_CAUSE_COMPLETED);
    assert_true(d.is_sidecar);

    /* unknown container */
    assert_int_equal(krc_diagnose(&r, "nope", &d, &err), KRC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "\"nope\" not found"));
    assert_non_null(strstr(err.msg, "worker"));
    done(&r, &d);
}

static void test_nothing_to_explain(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char pod[] =
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"containerStatuses\":[{"
        "\"name\":\"c\",\"ready\":true,\"restartCount\":0,\"image\":\"i\",\"imageID\":\"\","
        "\"state\":{\"running\":{\"startedAt\":\"2025-01-01T10:00:00Z\"}},\"lastState\":{}}]}}";

    (void)state;
    assert_int_equal(run(&r, &d, krc_strdup(pod), NULL, NULL, 0), KRC_CAUSE_UNKNOWN);
    assert_false(d.has_termination);
    assert_null(d.container);
    assert_non_null(d.summary);
    done(&r, &d);
}

static void test_node_evidence(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    static const char node[] =
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\"},"
        "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"8\"},\"allocatable\":{"
        "\"nvidia.com/gpu\":\"7\"},\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":"
        "\"True\",\"reason\":\"KubeletHasInsufficientMemory\",\"message\":\"low\"},{\"type\":"
        "\"Ready\",\"status\":\"False\",\"reason\":\"KubeletNotReady\"},{\"type\":\"DiskPressure\","
        "\"status\":\"False\"}]}}";

    (void)state;
    krc_error_clear(&err);
    assert_int_equal(run(&r, &d, make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_KILLED);
    assert_int_equal(krc_kube_parse_node(node, sizeof(node) - 1, &r, &err), 0);
    assert_int_equal(krc_diagnose(&r, NULL, &d, &err), 0);
    assert_true(evidence_has(&d, "MemoryPressure=True"));
    assert_true(evidence_has(&d, "Ready=False"));
    assert_false(evidence_has(&d, "DiskPressure"));
    assert_true(evidence_has(&d, "allocatable 7 < capacity 8"));
    done(&r, &d);
}

static void test_sanitize_and_names(void **state)
{
    char out[16];
    enum krc_cause c;
    int i;

    (void)state;
    assert_int_equal(krc_diagnose_sanitize("  a\tb\r\n", 7, out, sizeof(out)), 3);
    assert_string_equal(out, "a b");
    krc_diagnose_sanitize("0123456789abcdefghij", 20, out, sizeof(out));
    assert_string_equal(out, "0123456789ab...");
    krc_diagnose_sanitize("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 15, out,
                          sizeof(out));
    assert_true(clean_text(out));
    for (i = 0; i < KRC_CAUSE_COUNT; i++) {
        assert_int_equal(krc_cause_parse(krc_cause_name((enum krc_cause)i), &c), 0);
        assert_int_equal((int)c, i);
    }
    assert_int_equal(krc_cause_parse("bogus", &c), KRC_EINVAL);
    krc_diagnose_format_duration(3725, out, sizeof(out));
    assert_string_equal(out, "1h2m5s");
    krc_diagnose_format_duration(42, out, sizeof(out));
    assert_string_equal(out, "42s");
}

/* Parse + diagnose with every allocation failing in turn until one run
 * succeeds: each failure is reported cleanly and leaks nothing. */
static void alloc_loop(const char *pod, const char *events, const char *log)
{
    long n;

    for (n = 0; n < 10000; n++) {
        struct krc_report r;
        struct krc_diagnosis d;
        int rc;
        krc_report_init(&r);
        krc_diagnosis_init(&d);
        krc_mem_fail_after(n);
        rc = krc_kube_parse_pod(pod, strlen(pod), &r, NULL);
        if (rc == 0 && events != NULL) {
            rc = krc_kube_parse_events(events, strlen(events), &r, NULL);
        }
        if (rc == 0 && log != NULL) {
            rc = krc_report_set_log(&r, NULL, log, strlen(log), 0, NULL);
        }
        if (rc == 0) {
            rc = krc_diagnose(&r, NULL, &d, NULL);
        }
        krc_mem_fail_after(-1);
        if (rc == 0) {
            assert_non_null(d.summary);
            assert_non_null(d.next_step);
        }
        krc_diagnosis_cleanup(&d);
        krc_report_cleanup(&r);
        if (rc == 0) {
            break;
        }
        assert_true(rc == KRC_ENOMEM || rc == KRC_EPARSE);
    }
    assert_true(n < 10000);
}

/* Every allocation failure during parse + diagnose is reported cleanly
 * and leaks nothing (ASan's leak checker runs at exit). */
static void test_allocation_failures(void **state)
{
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };
    char *pod = make_pod("app", 137, "Error", STARTED, NULL, NULL);
    char *events = make_events(evs, 1);
    char *probe = make_pod_probes("app", 137, "Error", STARTED, NULL, NULL,
                                  ",\"livenessProbe\":{\"exec\":{\"command\":[\"x\"]}}");
    char *waiting = fmt("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},"
                        "\"spec\":{\"nodeName\":\"x\",\"containers\":[{\"name\":\"c\"}]},"
                        "\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":2,"
                        "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}}]}}");

    (void)state;
    alloc_loop(pod, events, "line\nError: connect ECONNREFUSED 1.2.3.4:5\n");
    alloc_loop(probe, NULL, NULL);
    alloc_loop(waiting, NULL, "exec /app: exec format error\n");
    alloc_loop(waiting, NULL, NULL);
    krc_free(pod);
    krc_free(events);
    krc_free(probe);
    krc_free(waiting);
}

/* ---- issue 11: the rule table, one rule at a time ---------------------- */

/* A pod "web-0" in "shop" on node-1 with one container "app": `spec_extra`
 * is appended inside the container spec, `status` is the whole container
 * status object after the name, `pod_status` is appended inside status. */
static char *raw_pod(const char *spec_extra, const char *status, const char *pod_status)
{
    return fmt("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\","
               "\"namespace\":\"shop\",\"uid\":\"" POD_UID "\"},\"spec\":{\"nodeName\":\"node-1\","
               "\"restartPolicy\":\"Always\",\"containers\":[{\"name\":\"app\",\"image\":\"img:1\""
               "%s}]},\"status\":{\"phase\":\"Running\"%s,\"containerStatuses\":[{\"name\":"
               "\"app\",\"ready\":false,\"image\":\"img:1\",\"imageID\":\"\"%s}]}}",
               spec_extra ? spec_extra : "", pod_status ? pod_status : "", status);
}

#define WAITING_ONLY                                                                               \
    ",\"restartCount\":7,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":"     \
    "\"back-off 5m0s restarting failed container=app\"}},\"lastState\":{}"

/* Does rule `name` hold on its own for this pod/events/log? Returns the
 * confidence + 1, or 0 when it does not hold. */
static int rule_holds(const char *name, char *pod, char *events, const char *log)
{
    struct krc_report r;
    struct krc_error err;
    enum krc_confidence conf = KRC_CONFIDENCE_LOW;
    int rc;

    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
    if (events != NULL) {
        assert_int_equal(krc_kube_parse_events(events, strlen(events), &r, &err), 0);
    }
    if (log != NULL) {
        assert_int_equal(krc_report_set_log(&r, NULL, log, strlen(log), 0, &err), 0);
    }
    rc = krc_diagnose_rule_matches(&r, NULL, name, &conf, &err);
    if (rc < 0) {
        fail_msg("rule %s: %s", name, err.msg);
    }
    krc_report_cleanup(&r);
    krc_free(pod);
    krc_free(events);
    return rc == 1 ? (int)conf + 1 : 0;
}

#define HIGH (KRC_CONFIDENCE_HIGH + 1)
#define MEDIUM (KRC_CONFIDENCE_MEDIUM + 1)
#define LOW (KRC_CONFIDENCE_LOW + 1)

/* No statement may claim what was not checked. */
static void assert_bounded(const struct krc_diagnosis *d)
{
    static const char *const forbidden[] = {
        "not the OOM killer", "no probe kill)",     "(no probe kill",
        "did not start",      "never (the process", "consider a Job",
    };
    size_t i;
    size_t j;

    assert_non_null(d->summary);
    assert_non_null(d->next_step);
    assert_true(clean_text(d->summary));
    for (i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
        if (strstr(d->summary, forbidden[i]) != NULL) {
            fail_msg("summary says \"%s\": %s", forbidden[i], d->summary);
        }
        for (j = 0; j < d->n_evidence; j++) {
            if (strstr(d->evidence[j], forbidden[i]) != NULL) {
                fail_msg("evidence says \"%s\": %s", forbidden[i], d->evidence[j]);
            }
        }
    }
}

static int unchecked_has(const struct krc_diagnosis *d, const char *needle)
{
    size_t i;

    for (i = 0; i < d->n_unchecked; i++) {
        if (strstr(d->unchecked[i], needle) != NULL) {
            return 1;
        }
    }
    return 0;
}

static int command_is(const struct krc_diagnosis *d, const char *cmd)
{
    size_t i;

    for (i = 0; i < d->n_commands; i++) {
        if (strcmp(d->commands[i], cmd) == 0) {
            return 1;
        }
    }
    return 0;
}

static void test_rule_table(void **state)
{
    size_t n = krc_diagnose_rule_count();
    size_t i;
    size_t j;
    struct krc_report r;
    struct krc_error err;
    int seen[KRC_CAUSE_COUNT] = {0};

    (void)state;
    assert_true(n >= KRC_CAUSE_COUNT);
    for (i = 0; i < n; i++) {
        assert_non_null(krc_diagnose_rule_name(i));
        seen[krc_diagnose_rule_cause(i)] = 1;
        for (j = 0; j < i; j++) {
            assert_string_not_equal(krc_diagnose_rule_name(i), krc_diagnose_rule_name(j));
        }
    }
    for (i = 0; i < KRC_CAUSE_COUNT; i++) {
        assert_true(seen[i]); /* every cause has a rule */
    }
    assert_null(krc_diagnose_rule_name(n));
    assert_string_equal(krc_diagnose_rule_name(n - 1), "unknown");
    /* precedence of neighbours the issue names */
    for (i = 0; i < n; i++) {
        if (strcmp(krc_diagnose_rule_name(i), "app_out_of_memory") == 0) {
            for (j = i; j < n; j++) {
                assert_string_not_equal(krc_diagnose_rule_name(j), "oom_killed");
            }
        }
    }
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_diagnose_rule_matches(&r, NULL, "nope", NULL, &err), KRC_EINVAL);
    assert_int_equal(krc_diagnose_rule_matches(&r, NULL, "unknown", NULL, &err), KRC_ENOTFOUND);
    krc_report_cleanup(&r);
}

static void test_rule_oom_killed(void **state)
{
    (void)state;
    assert_int_equal(rule_holds("oom_killed",
                                make_pod("app", 137, "OOMKilled", STARTED, NULL, NULL), NULL, NULL),
                     HIGH);
    assert_int_equal(
        rule_holds("oom_killed", make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL),
        0);
}

static void test_rule_evicted(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, NULL, "Evicted",
         "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 0.",
         "2025-01-01T10:04:50Z", NULL},
    };
    static const char csu[] =
        ",\"restartCount\":1,\"state\":{\"terminated\":{\"exitCode\":137,\"reason\":"
        "\"ContainerStatusUnknown\",\"message\":\"The container could not be located when the pod "
        "was terminated\",\"startedAt\":null,\"finishedAt\":null}},\"lastState\":{}";

    (void)state;
    assert_int_equal(rule_holds("evicted",
                                raw_pod(NULL, csu,
                                        ",\"reason\":\"Evicted\",\"message\":\"The node "
                                        "was low on resource: memory.\""),
                                NULL, NULL),
                     HIGH);
    assert_int_equal(rule_holds("evicted", raw_pod(NULL, csu, NULL), NULL, NULL), MEDIUM);
    assert_int_equal(rule_holds("evicted", make_pod("app", 137, "Error", STARTED, NULL, NULL),
                                make_events(evs, 1), NULL),
                     HIGH);
    assert_int_equal(
        rule_holds("evicted", make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL), 0);
    /* an application's log tail (FallbackToLogsOnError) talking about evictions is not one */
    assert_int_equal(
        rule_holds("evicted",
                   make_pod("app", 1, "Error", STARTED,
                            ",\"message\":\"cache: evicted 30 keys\\nfatal: eviction failed\"",
                            NULL),
                   NULL, NULL),
        0);
    assert_int_equal(
        rule_holds("evicted",
                   make_pod("app", 137, "Error", STARTED,
                            ",\"message\":\"Pod ephemeral local storage usage exceeds the total "
                            "limit of containers 1Gi.\"",
                            NULL),
                   NULL, NULL),
        HIGH);

    /* the whole diagnosis: the pod-level reason names the cause */
    assert_int_equal(run(&r, &d,
                         raw_pod(NULL, csu,
                                 ",\"reason\":\"Evicted\",\"message\":\"Pod ephemeral local "
                                 "storage usage exceeds the total limit of containers 1Gi.\""),
                         NULL, NULL, 0),
                     KRC_CAUSE_EVICTED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "ephemeral local storage"));
    assert_true(command_is(&d, "kubectl describe node node-1"));
    assert_bounded(&d);
    done(&r, &d);

    /* OOMKilled stays first */
    assert_int_equal(run(&r, &d, make_pod("app", 137, "OOMKilled", STARTED, NULL, NULL),
                         make_events(evs, 1), NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    done(&r, &d);
}

static void test_rule_probe_events_confidence(void **state)
{
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };
    struct ev st[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed startup probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };

    (void)state;
    assert_int_equal(rule_holds("liveness_probe_failed",
                                make_pod("app", 137, "Error", STARTED, NULL, NULL),
                                make_events(evs, 1), NULL),
                     HIGH);
    assert_int_equal(rule_holds("startup_probe_failed",
                                make_pod("app", 137, "Error", STARTED, NULL, NULL),
                                make_events(st, 1), NULL),
                     HIGH);
    assert_int_equal(rule_holds("liveness_probe_failed",
                                make_pod("app", 137, "Error", STARTED, NULL, NULL),
                                make_events(st, 1), NULL),
                     0);
}

/* Events as pasted from kubectl describe: no fieldPath, no timestamps. */
static void test_rule_probe_events_undated(void **state)
{
    struct ev kill[] = {
        {POD_UID, NULL, "Killing", "Container app failed liveness probe, will be restarted", NULL,
         NULL},
    };
    struct ev other[] = {
        {POD_UID, NULL, "Killing", "Container sidecar failed liveness probe, will be restarted",
         NULL, NULL},
    };

    (void)state;
    /* dated termination, undated kill: it may be an earlier instance's */
    assert_int_equal(rule_holds("liveness_probe_failed",
                                make_pod("app", 137, "Error", STARTED, NULL, NULL),
                                make_events(kill, 1), NULL),
                     MEDIUM);
    /* no termination at all: the kill is the best evidence there is, but nothing ties it
     * to the last restart rather than an earlier one */
    assert_int_equal(rule_holds("liveness_probe_failed", raw_pod(NULL, WAITING_ONLY, NULL),
                                make_events(kill, 1), NULL),
                     MEDIUM);
    /* the message names another container */
    assert_int_equal(rule_holds("liveness_probe_failed", raw_pod(NULL, WAITING_ONLY, NULL),
                                make_events(other, 1), NULL),
                     0);
}

static void test_rule_exec_format_error(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char log[] = "exec /usr/local/bin/server: exec format error\n";

    (void)state;
    /* in the log, exit 1 */
    assert_int_equal(rule_holds("exec_format_error",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, log),
                     HIGH);
    /* in a start error */
    assert_int_equal(
        rule_holds("exec_format_error",
                   make_pod("app", 128, "StartError", "1970-01-01T00:00:00Z",
                            ",\"message\":\"failed to create containerd task: failed to create "
                            "shim task: OCI runtime create failed: runc create failed: unable to "
                            "start container process: exec: \\\"/app\\\": exec format error: "
                            "unknown\"",
                            NULL),
                   NULL, NULL),
        HIGH);
    assert_int_equal(rule_holds("exec_format_error",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "error: bad format in config\n"),
                     0);
    assert_int_equal(rule_holds("exec_format_error",
                                make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL, log),
                     0); /* the log decides only a failure */
    /* precedence: exec format error beats start_failed and app_error */
    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL, log, sizeof(log) - 1),
                     KRC_CAUSE_EXEC_FORMAT_ERROR);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_true(command_is(&d, "kubectl get node node-1 -L kubernetes.io/arch"));
    assert_bounded(&d);
    done(&r, &d);
}

/* runc's exec errors that reach the log, and a JVM thread limit. */
static void test_rule_runc_log_and_native_thread(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                         "exec /docker-entrypoint.sh: no such file or directory\n", SIZE_MAX),
                     KRC_CAUSE_COMMAND_NOT_FOUND);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "could not execute its entrypoint"));
    assert_null(strstr(d.summary, "exited 127"));
    assert_bounded(&d);
    done(&r, &d);
    assert_int_equal(rule_holds("permission_denied",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "standard_init_linux.go:228: exec user process caused: permission "
                                "denied\n"),
                     HIGH);
    /* no exit code: a shell's exec error ending the log */
    assert_int_equal(rule_holds("permission_denied", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "/bin/sh: 1: /app/entrypoint.sh: Permission denied\n"),
                     MEDIUM);
    assert_int_equal(rule_holds("command_not_found", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "/bin/sh: 1: celery: not found\n"),
                     MEDIUM);
    /* a shell's "Permission denied" is the same for a file it could not execute and one it
     * could not write: the summary claims neither */
    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                         "sh: /data/myid: Permission denied\n", SIZE_MAX),
                     KRC_CAUSE_PERMISSION_DENIED);
    assert_null(strstr(d.summary, "could not execute its entrypoint"));
    assert_non_null(strstr(d.summary, "execute or write"));
    done(&r, &d);
    assert_int_equal(rule_holds("command_not_found", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "/bin/sh: 1: celery: not found\nstarted worker\nready\n"
                                "serving\n"),
                     0); /* not among the last lines */
    /* an application's own "no such file" is not an exec error */
    assert_int_equal(rule_holds("command_not_found",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "open /etc/app.yaml: no such file or directory\n"),
                     0);
    assert_int_equal(
        run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
            "Exception in thread \"main\" java.lang.OutOfMemoryError: unable to create native "
            "thread: possibly out of memory or process/resource limits reached\n",
            SIZE_MAX),
        KRC_CAUSE_APP_ERROR);
    done(&r, &d);
    /* TensorFlow's CPU check, then abort() */
    assert_int_equal(
        run(&r, &d, make_pod("app", 134, "Error", STARTED, NULL, NULL), NULL,
            "The TensorFlow library was compiled to use AVX instructions, but these aren't "
            "available on your machine.\nAborted (core dumped)\n",
            SIZE_MAX),
        KRC_CAUSE_ILLEGAL_INSTRUCTION);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    done(&r, &d);
}

static void test_rule_disk_full(void **state)
{
    (void)state;
    assert_int_equal(rule_holds("disk_full", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "writing segment\nOSError: [Errno 28] No space left on device: "
                                "'/data/seg-7'\n"),
                     MEDIUM);
    assert_int_equal(
        rule_holds("disk_full",
                   make_pod("app", 1, "Error", STARTED,
                            ",\"message\":\"Error: ENOSPC: no space left on device, write\"", NULL),
                   NULL, NULL),
        HIGH);
    /* exit 0: the log does not decide */
    assert_int_equal(rule_holds("disk_full", make_pod("app", 0, "Completed", STARTED, NULL, NULL),
                                NULL, "No space left on device\n"),
                     0);
}

static void test_rule_start_failed(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev evs[] = {
        {POD_UID, "spec.containers{app}", "Failed",
         "Error: failed to create containerd task: failed to create shim task: OCI runtime create "
         "failed: runc create failed: unable to start container process: error during container "
         "init: error mounting \\\"/etc/app.conf\\\" to rootfs: not a directory: unknown",
         "2025-01-01T10:05:00Z", NULL},
    };

    (void)state;
    assert_int_equal(
        rule_holds("start_failed", make_pod("app", 128, "Error", STARTED, NULL, NULL), NULL, NULL),
        LOW);
    assert_int_equal(
        rule_holds("start_failed",
                   raw_pod(NULL,
                           ",\"restartCount\":2,\"state\":{\"waiting\":{\"reason\":"
                           "\"RunContainerError\",\"message\":\"failed to create containerd task: "
                           "cgroup: failed to write 1 to cpu.max\"}},\"lastState\":{}",
                           NULL),
                   NULL, NULL),
        HIGH);
    assert_int_equal(rule_holds("start_failed", make_pod("app", 1, "Error", STARTED, NULL, NULL),
                                NULL, "mount: failed to read config\n"),
                     0);
    /* exit 128 and a mount error in a Failed event: start_failed, not app_error */
    assert_int_equal(run(&r, &d,
                         make_pod("app", 128, "StartError", "1970-01-01T00:00:00Z", NULL, NULL),
                         make_events(evs, 1), NULL, 0),
                     KRC_CAUSE_START_FAILED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "error mounting"));
    assert_bounded(&d);
    done(&r, &d);
}

static void test_rule_app_out_of_memory(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char node_oom[] =
        "<--- Last few GCs --->\n"
        "[1:0x5d5e3c0]   512 ms: Mark-Compact 2043.1 (2083.4) -> 2041.9 (2084.2) MB\n"
        "<--- JS stacktrace --->\n"
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n"
        " 1: 0xb7b3e0 node::Abort() [node]\n"
        " 2: 0xa8e823  [node]\n";

    (void)state;
    /* exit 139 with the Node heap message: the runtime's heap, not a segfault */
    assert_int_equal(run(&r, &d, make_pod("app", 139, "Error", STARTED, NULL, NULL), NULL, node_oom,
                         sizeof(node_oom) - 1),
                     KRC_CAUSE_APP_OUT_OF_MEMORY);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_HIGH);
    assert_non_null(strstr(d.summary, "JavaScript heap out of memory"));
    assert_bounded(&d);
    done(&r, &d);
    /* but never over the kernel's OOMKilled */
    assert_int_equal(run(&r, &d, make_pod("app", 137, "OOMKilled", STARTED, NULL, NULL), NULL,
                         node_oom, sizeof(node_oom) - 1),
                     KRC_CAUSE_OOM_KILLED);
    done(&r, &d);

    assert_int_equal(
        rule_holds("app_out_of_memory", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                   "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n"
                   "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3512)\n"),
        HIGH);
    assert_int_equal(rule_holds("app_out_of_memory",
                                make_pod("app", 2, "Error", STARTED, NULL, NULL), NULL,
                                "fatal error: runtime: out of memory\n\nruntime stack:\n"),
                     HIGH);
    assert_int_equal(rule_holds("app_out_of_memory",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "Traceback (most recent call last):\n  File \"x.py\", line 3, in "
                                "<module>\nMemoryError\n"),
                     HIGH);
    /* 137 with the message: inferred only */
    assert_int_equal(rule_holds("app_out_of_memory",
                                make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL,
                                "java.lang.OutOfMemoryError: Java heap space\n"),
                     MEDIUM);
    /* CUDA's OutOfMemoryError is the GPU's */
    assert_int_equal(rule_holds("app_out_of_memory",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "torch.OutOfMemoryError: CUDA out of memory.\n"),
                     0);
    assert_int_equal(rule_holds("app_out_of_memory",
                                make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL,
                                "MemoryError\n"),
                     0);
}

static void test_rule_signals(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(
        rule_holds("segfault", make_pod("app", 139, "Error", STARTED, NULL, NULL), NULL, NULL),
        LOW);
    assert_int_equal(rule_holds("segfault", make_pod("app", 139, "Error", STARTED, NULL, NULL),
                                NULL, "Segmentation fault (core dumped)\n"),
                     MEDIUM);
    assert_int_equal(rule_holds("segfault", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "run.sh: line 3:    7 Segmentation fault      ./worker\n"),
                     MEDIUM);
    /* a Go nil dereference is a panic (app_error), not a segfault */
    assert_int_equal(
        run(&r, &d, make_pod("app", 2, "Error", STARTED, NULL, NULL), NULL,
            "panic: runtime error: invalid memory address or nil pointer "
            "dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0]\n",
            SIZE_MAX),
        KRC_CAUSE_APP_ERROR);
    done(&r, &d);

    assert_int_equal(rule_holds("illegal_instruction",
                                make_pod("app", 132, "Error", STARTED, NULL, NULL), NULL, NULL),
                     LOW);
    assert_int_equal(run(&r, &d, make_pod("app", 132, "Error", STARTED, NULL, NULL), NULL,
                         "loading model\nIllegal instruction (core dumped)\n", SIZE_MAX),
                     KRC_CAUSE_ILLEGAL_INSTRUCTION);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_string_equal(d.signal_name, "SIGILL");
    assert_bounded(&d);
    done(&r, &d);

    assert_int_equal(
        rule_holds("aborted", make_pod("app", 134, "Error", STARTED, NULL, NULL), NULL, NULL), LOW);
    assert_int_equal(rule_holds("aborted", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "free(): double free detected in tcache 2\n"),
                     MEDIUM);
    assert_int_equal(rule_holds("aborted", make_pod("app", 134, "Error", STARTED, NULL, NULL), NULL,
                                "terminate called after throwing an instance of "
                                "'std::runtime_error'\n  what():  boom\n"),
                     MEDIUM);
    assert_int_equal(rule_holds("aborted", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "server: main.c:12: main: Assertion `fd >= 0' failed.\n"),
                     MEDIUM);
    assert_int_equal(rule_holds("aborted", make_pod("app", 139, "Error", STARTED, NULL, NULL), NULL,
                                "double free or corruption (out)\n"),
                     0); /* the exit code names another signal */
}

/* The rules not covered on their own above, through the rule API. */
static void test_rule_remaining_on_their_own(void **state)
{
    struct krc_report r;
    struct krc_error err;
    enum krc_confidence conf;
    char *pod;
    static const char node[] =
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\"},"
        "\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"True\"}]}}";

    (void)state;
    assert_int_equal(rule_holds("gpu_out_of_memory",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "RuntimeError: CUDA error: out of memory\n"),
                     HIGH);
    assert_int_equal(rule_holds("gpu_out_of_memory",
                                make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL,
                                "RuntimeError: CUDA error: out of memory\n"),
                     0);
    assert_int_equal(rule_holds("gpu_error", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "RuntimeError: No CUDA GPUs are available\n"),
                     HIGH);
    assert_int_equal(rule_holds("gpu_error", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "all good\n"),
                     0);
    assert_int_equal(rule_holds("dependency_unreachable",
                                make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                                "Error: connect ECONNREFUSED 10.0.0.5:5432\n"),
                     MEDIUM);
    assert_int_equal(rule_holds("dependency_unreachable",
                                make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL,
                                "Error: connect ECONNREFUSED 10.0.0.5:5432\n"),
                     0);
    assert_int_equal(rule_holds("app_error", make_pod("app", 3, "Error", STARTED, NULL, NULL), NULL,
                                "ValueError: bad port\n"),
                     MEDIUM);
    assert_int_equal(
        rule_holds("app_error", make_pod("app", 3, "Error", STARTED, NULL, NULL), NULL, NULL), LOW);
    assert_int_equal(
        rule_holds("app_error", make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL), 0);
    assert_int_equal(
        rule_holds("completed", make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL, NULL),
        MEDIUM);
    assert_int_equal(
        rule_holds("completed", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, NULL), 0);
    assert_int_equal(
        rule_holds("killed", make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL), LOW);
    assert_int_equal(
        rule_holds("killed", make_pod("app", 143, "Error", STARTED, NULL, NULL), NULL, NULL), 0);
    assert_int_equal(
        rule_holds("terminated", make_pod("app", 143, "Error", STARTED, NULL, NULL), NULL, NULL),
        LOW);
    assert_int_equal(
        rule_holds("terminated", make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL),
        0);
    assert_int_equal(
        rule_holds("unknown", make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL, NULL), LOW);

    /* evicted_node_pressure needs the node */
    krc_report_init(&r);
    krc_error_clear(&err);
    pod = make_pod("app", 137, "Error", STARTED, NULL, NULL);
    assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
    assert_int_equal(krc_diagnose_rule_matches(&r, NULL, "evicted_node_pressure", &conf, &err), 0);
    assert_int_equal(krc_kube_parse_node(node, sizeof(node) - 1, &r, &err), 0);
    assert_int_equal(krc_diagnose_rule_matches(&r, "app", "evicted_node_pressure", &conf, &err), 1);
    assert_int_equal(conf, KRC_CONFIDENCE_LOW);
    krc_report_cleanup(&r);
    krc_free(pod);
}

/* Partial pastes: a fatal-level log line, an error as the last line of a
 * crash-looping container, NVML and Docker-era runc wording, a pod without
 * container statuses, events that name no object. */
static void test_partial_pastes(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    static const char no_object_events[] =
        "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[{\"kind\":\"Event\",\"type\":"
        "\"Warning\",\"reason\":\"Failed\",\"message\":\"invalid header field value \\\"oci "
        "runtime "
        "error: container_linux.go:247: starting container process caused \\\\\\\"process_linux.go:"
        "359: container init caused \\\\\\\\\\\\\\\"rootfs_linux.go:53: mounting ... caused not a "
        "directory\\\"\",\"involvedObject\":{\"kind\":\"Pod\"},\"source\":{\"component\":"
        "\"kubelet\"}}]}";

    (void)state;
    /* klog F line, CoreDNS [FATAL], logrus level=fatal, nginx [emerg]: app_error without an
     * exit code */
    assert_int_equal(rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "I0210 01:36:39.123289 5 flags.go:159] Watching\n"
                                "F0210 01:36:39.123645 5 main.go:59] Port 80 is already in use\n"
                                "-----\nNGINX Ingress controller\n  Release: 0.10.2\n"),
                     LOW);
    assert_int_equal(rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "2019-07-26T05:12:51.129Z [FATAL] plugin/loop: Loop detected\n"),
                     LOW);
    assert_int_equal(rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "time=\"2024\" level=fatal msg=\"bad config\"\n"),
                     LOW);
    assert_int_equal(rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "nginx: [emerg] host not found in upstream \"api\"\n"),
                     LOW);
    /* an error word as the last line counts for a crash-looping container... */
    assert_int_equal(
        rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                   "1:M 10 Jan # Server started\n"
                   "1:M 10 Jan # Can't open the append-only file: Permission denied\n"),
        LOW);
    /* ...not when other lines follow it, nor without a sign of a restart */
    assert_int_equal(rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "open failed: Permission denied\nretrying\nserving on :8080\n"),
                     0);
    assert_int_equal(rule_holds("app_error",
                                raw_pod(NULL,
                                        ",\"restartCount\":0,\"state\":{\"running\":{}},"
                                        "\"lastState\":{}",
                                        NULL),
                                NULL, "open failed: Permission denied\n"),
                     0);
    /* the same holds for the last line of a termination message (no log) */
    assert_int_equal(rule_holds("app_error",
                                raw_pod(NULL,
                                        ",\"restartCount\":7,\"state\":{\"waiting\":{}},"
                                        "\"lastState\":{\"terminated\":{\"message\":"
                                        "\"starting\\nopen failed: Permission denied\\n\"}}",
                                        NULL),
                                NULL, NULL),
                     LOW);
    assert_int_equal(rule_holds("app_error",
                                raw_pod(NULL,
                                        ",\"restartCount\":7,\"state\":{\"waiting\":{}},"
                                        "\"lastState\":{\"terminated\":{\"message\":"
                                        "\"open failed: Permission denied\\nserving\\n\"}}",
                                        NULL),
                                NULL, NULL),
                     0);
    /* a FATAL word inside a sentence is not a level */
    assert_int_equal(rule_holds("app_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                "starting\nnon-FATAListic message\nserving\n"),
                     0);

    /* NVML that cannot be loaded is a GPU driver/runtime fault */
    assert_int_equal(
        rule_holds("gpu_error", raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                   "loading NVML\nFailed to start nvml with error:  could not load NVML library\n"),
        HIGH);

    /* no status entry, nameless Failed event with runc's Docker-era wording: start_failed */
    assert_int_equal(run(&r, &d,
                         fmt("{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"kube-system\"},"
                             "\"status\":{\"containerStatuses\":[{\"ready\":false}]}}"),
                         fmt("%s", no_object_events), NULL, 0),
                     KRC_CAUSE_START_FAILED);
    assert_string_equal(d.container, "(unnamed)");
    assert_false(d.restart_count_known); /* the paste gave no restartCount */
    for (size_t i = 0; i < d.n_commands; i++) {
        assert_null(strstr(d.commands[i], "(unnamed)"));
    }
    assert_bounded(&d);
    done(&r, &d);

    /* an event pasted without its reason counts by the kubelet's wording */
    {
        struct ev startup[] = {{POD_UID, NULL, "",
                                "Startup probe failed: HTTP probe failed with statuscode: 404",
                                NULL, NULL}};
        struct ev docker_kill[] = {
            {POD_UID, NULL, "Killing",
             "Killing container with id docker://app:Container failed liveness probe.. Container "
             "will be killed and recreated.",
             NULL, NULL}};
        struct ev other_kill[] = {
            {POD_UID, NULL, "Killing",
             "Killing container with id docker://sidecar:Container failed liveness probe.. "
             "Container will be killed and recreated.",
             NULL, NULL}};
        static const char startup_probe[] =
            ",\"startupProbe\":{\"httpGet\":{\"path\":\"/live\",\"port\":80}}";
        assert_int_equal(run(&r, &d, raw_pod(startup_probe, WAITING_ONLY, NULL),
                             make_events(startup, 1), NULL, 0),
                         KRC_CAUSE_STARTUP_PROBE_FAILED);
        done(&r, &d);
        /* the same message is no Unhealthy event when a reason says otherwise */
        startup[0].reason = "Created";
        assert_int_not_equal(run(&r, &d, raw_pod(startup_probe, WAITING_ONLY, NULL),
                                 make_events(startup, 1), NULL, 0),
                             KRC_CAUSE_STARTUP_PROBE_FAILED);
        done(&r, &d);
        assert_int_equal(rule_holds("liveness_probe_failed", raw_pod(NULL, WAITING_ONLY, NULL),
                                    make_events(docker_kill, 1), NULL),
                         MEDIUM);
        assert_int_equal(rule_holds("liveness_probe_failed", raw_pod(NULL, WAITING_ONLY, NULL),
                                    make_events(other_kill, 1), NULL),
                         0);
    }

    /* exited 0 without a restart: OOMKilled or Error is explained, a plain Completed with a
     * restart count of 0 is not; Completed without a restart count is */
    assert_int_equal(run(&r, &d,
                         raw_pod(NULL,
                                 ",\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":0,"
                                 "\"reason\":\"OOMKilled\"}}",
                                 NULL),
                         NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    done(&r, &d);
    assert_int_equal(run(&r, &d,
                         raw_pod(NULL,
                                 ",\"state\":{\"terminated\":{\"exitCode\":0,"
                                 "\"reason\":\"Completed\"}}",
                                 NULL),
                         NULL, NULL, 0),
                     KRC_CAUSE_COMPLETED);
    done(&r, &d);

    /* the kubelet's CreateContainerConfigError texts as Failed events: start_failed */
    {
        struct ev cfg[] = {{POD_UID, NULL, "Failed",
                            "Error: couldn't find key VALUE in Secret default/app-secret", NULL,
                            NULL}};
        assert_int_equal(
            run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), make_events(cfg, 1), NULL, 0),
            KRC_CAUSE_START_FAILED);
        done(&r, &d);
        cfg[0].message = "Error: secret \\\"smtp-account\\\" not found";
        assert_int_equal(
            run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), make_events(cfg, 1), NULL, 0),
            KRC_CAUSE_START_FAILED);
        done(&r, &d);
        /* a log line about a missing secret is the application's, not the kubelet's */
        assert_int_not_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                                 "fatal: Error: secret \"db\" not found in vault\n", SIZE_MAX),
                             KRC_CAUSE_START_FAILED);
        done(&r, &d);
    }

    /* a pasted spec without any container status: nothing says it did not
     * restart, so the first container is diagnosed (unknown) rather than refused */
    assert_int_equal(run(&r, &d,
                         fmt("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{"
                             "\"containers\":[{\"name\":\"app\"}]}}"),
                         NULL, NULL, 0),
                     KRC_CAUSE_UNKNOWN);
    assert_string_equal(d.container, "app");
    assert_true(d.n_unchecked > 0);
    done(&r, &d);
    /* the same with a status entry that lost its state (a cut paste) */
    assert_int_equal(
        run(&r, &d,
            fmt("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{"
                "\"name\":\"app\"}]},\"status\":{\"containerStatuses\":[{\"name\":\"app\","
                "\"ready\":false}]}}"),
            NULL, NULL, 0),
        KRC_CAUSE_UNKNOWN);
    assert_string_equal(d.container, "app");
    done(&r, &d);

    /* a never-restarted container without any evidence: nothing picked */
    krc_report_init(&r);
    krc_error_clear(&err);
    {
        char *pod = raw_pod(NULL, ",\"restartCount\":0,\"state\":{\"running\":{}}", NULL);
        assert_int_equal(krc_kube_parse_pod(pod, strlen(pod), &r, &err), 0);
        assert_null(krc_diagnose_pick(&r));
        /* with a previous log given, the container the log belongs to */
        assert_int_equal(krc_report_set_log(&r, NULL, "x\n", 2, 0, &err), 0);
        assert_non_null(krc_diagnose_pick(&r));
        assert_string_equal(krc_diagnose_pick(&r)->name, "app");
        krc_free(pod);
    }
    krc_report_cleanup(&r);
}

/* A probe in the spec no longer stands in for missing events (issue 26): it
 * is a hypothesis in the evidence and the exit code names the cause. */
static void test_rule_probe_from_spec(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char http_probe[] =
        ",\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
        "\"periodSeconds\":10,\"failureThreshold\":3}";
    static const char exec_probe[] =
        ",\"livenessProbe\":{\"exec\":{\"command\":[\"/bin/false\"]},\"initialDelaySeconds\":30}";
    static const char late_probe[] =
        ",\"livenessProbe\":{\"httpGet\":{\"port\":8080},\"initialDelaySeconds\":600}";
    static const char startup_probe[] =
        ",\"startupProbe\":{\"httpGet\":{\"port\":8080},\"periodSeconds\":10,"
        "\"failureThreshold\":30}";
    struct ev backoff[] = {
        {POD_UID, "spec.containers{app}", "BackOff",
         "Back-off restarting failed container app in pod web-0_shop(" POD_UID ")",
         "2025-01-01T10:05:20Z", NULL},
    };

    (void)state;
    /* exit 137, no events: killed, the probe a hypothesis, and it says so */
    assert_int_equal(run(&r, &d,
                         make_pod_probes("app", 137, "Error", STARTED, NULL, NULL, http_probe),
                         NULL, NULL, 0),
                     KRC_CAUSE_KILLED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    assert_true(evidence_has(&d, "hypothesis, not a finding: a liveness probe is configured"));
    assert_true(unchecked_has(&d, "no pod events were available"));
    assert_bounded(&d);
    done(&r, &d);

    /* exit 0 with a failing exec liveness probe configured: completed, the probe a hypothesis */
    assert_int_equal(run(&r, &d,
                         make_pod_probes("app", 0, "Completed", STARTED, NULL, NULL, exec_probe),
                         NULL, NULL, 0),
                     KRC_CAUSE_COMPLETED);
    assert_true(evidence_has(&d, "a liveness probe is configured (exec"));
    done(&r, &d);

    /* the timing does not fit (5 min run, first probe after 10 min): no hypothesis */
    assert_int_equal(run(&r, &d,
                         make_pod_probes("app", 137, "Error", STARTED, NULL, NULL, late_probe),
                         NULL, NULL, 0),
                     KRC_CAUSE_KILLED);
    assert_false(evidence_has(&d, "hypothesis"));
    done(&r, &d);
    /* events of the time were seen and none is a kill: no inference */
    assert_int_equal(
        rule_holds("liveness_probe_configured",
                   make_pod_probes("app", 137, "Error", STARTED, NULL, NULL, http_probe),
                   make_events(backoff, 1), NULL),
        0);
    /* an app error is not turned into a probe kill */
    assert_int_equal(rule_holds("liveness_probe_configured",
                                make_pod_probes("app", 1, "Error", STARTED, NULL, NULL, http_probe),
                                NULL, NULL),
                     0);
    /* startup probe: killed at the end of its budget (30 x 10 s = 290 s .. 5 min): a
     * hypothesis, the rule does not hold */
    assert_int_equal(
        rule_holds("startup_probe_configured",
                   make_pod_probes("app", 143, "Error", STARTED, NULL, NULL, startup_probe), NULL,
                   NULL),
        0);
    /* without a start time the timing cannot be checked: the hypothesis says so */
    assert_int_equal(run(&r, &d, make_pod_probes("app", 137, "Error", "", NULL, NULL, http_probe),
                         NULL, NULL, 0),
                     KRC_CAUSE_KILLED);
    assert_true(evidence_has(&d, "the run time is unknown"));
    done(&r, &d);
}

static void test_rule_completed_killed_terminated_wording(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    /* exit 137, reason Error, no events, no node: killed, low, nothing negated */
    assert_int_equal(run(&r, &d, make_pod("app", 137, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_KILLED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    assert_non_null(strstr(d.summary, "cannot be ruled out"));
    assert_non_null(strstr(d.summary, "no events/node were given"));
    assert_true(unchecked_has(&d, "no pod events were available"));
    assert_true(unchecked_has(&d, "no node object was given"));
    assert_true(unchecked_has(&d, "no previous log"));
    assert_true(command_is(&d, "kubectl logs -n shop web-0 -c app --previous"));
    assert_true(command_is(&d, "kubectl describe node node-1"));
    assert_non_null(d.next_step);
    assert_bounded(&d);
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod("app", 143, "Error", STARTED, NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_TERMINATED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    assert_non_null(strstr(d.summary, "a probe kill cannot be ruled out"));
    assert_bounded(&d);
    done(&r, &d);

    /* exit 0 without probes: completed, and no advice passed off as evidence */
    assert_int_equal(
        run(&r, &d, make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL, NULL, 0),
        KRC_CAUSE_COMPLETED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_non_null(strstr(d.next_step, "Job"));
    assert_bounded(&d);
    done(&r, &d);

    /* a missing start time is "unknown", never "did not start" */
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", "", NULL, NULL), NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_true(evidence_has(&d, "started unknown"));
    assert_true(unchecked_has(&d, "start time unknown"));
    assert_bounded(&d);
    done(&r, &d);
}

/* Partial input: a waiting state only, no exitCode, pod status only. */
static void test_partial_input(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct ev unhealthy[] = {
        {POD_UID, "spec.containers{app}", "Unhealthy",
         "Liveness probe failed: HTTP probe failed with statuscode: 500", "2025-01-01T10:04:30Z",
         NULL},
    };
    struct ev kill[] = {
        {POD_UID, "spec.containers{app}", "Killing",
         "Container app failed liveness probe, will be restarted", "2025-01-01T10:04:30Z", NULL},
    };
    static const char js[] = "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation "
                             "failed - JavaScript heap out of memory\n";
    static const char dns[] = "connecting to db\npanic: dial tcp: lookup postgres on "
                              "10.96.0.10:53: no such host\n";

    (void)state;
    /* waiting only, nothing else: unknown, low, says what is missing */
    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL, NULL, 0),
                     KRC_CAUSE_UNKNOWN);
    assert_string_equal(d.container, "app");
    assert_false(d.has_termination);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    assert_true(unchecked_has(&d, "lastState.terminated"));
    assert_true(unchecked_has(&d, "no pod events were available"));
    assert_non_null(d.next_step);
    assert_bounded(&d);
    done(&r, &d);

    /* a log that names nothing: still unknown, and the evidence shows its end */
    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL,
                         "2025-01-01T10:00:00.5Z serving on :8080\n", SIZE_MAX),
                     KRC_CAUSE_UNKNOWN);
    assert_true(evidence_has(&d, "the log ends with: serving on :8080"));
    done(&r, &d);

    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL, js, sizeof(js) - 1),
                     KRC_CAUSE_APP_OUT_OF_MEMORY);
    assert_non_null(strstr(d.summary, "exit code unknown"));
    done(&r, &d);

    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), NULL, dns, sizeof(dns) - 1),
                     KRC_CAUSE_DEPENDENCY_UNREACHABLE);
    done(&r, &d);

    assert_int_equal(run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), make_events(kill, 1), NULL, 0),
                     KRC_CAUSE_LIVENESS_PROBE_FAILED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM); /* no termination to place it */
    done(&r, &d);

    assert_int_equal(
        run(&r, &d, raw_pod(NULL, WAITING_ONLY, NULL), make_events(unhealthy, 1), NULL, 0),
        KRC_CAUSE_LIVENESS_PROBE_FAILED);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_non_null(strstr(d.summary, "no kill event seen"));
    done(&r, &d);

    /* a terminated state without exitCode */
    assert_int_equal(run(&r, &d,
                         raw_pod(NULL,
                                 ",\"restartCount\":3,\"state\":{\"waiting\":{\"reason\":"
                                 "\"CrashLoopBackOff\"}},\"lastState\":{\"terminated\":{"
                                 "\"reason\":\"Error\",\"finishedAt\":\"" FINISHED "\"}}",
                                 NULL),
                         NULL, "starting\npanic: config: missing key \"port\"\n", SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_false(d.has_termination);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    assert_true(evidence_has(&d, "exitCode missing"));
    assert_true(unchecked_has(&d, "no exitCode"));
    assert_bounded(&d);
    done(&r, &d);

    /* a pod status reason only */
    assert_int_equal(run(&r, &d,
                         raw_pod(NULL, ",\"restartCount\":0,\"state\":{},\"lastState\":{}",
                                 ",\"reason\":\"Evicted\",\"message\":\"The node was low on "
                                 "resource: memory.\""),
                         NULL, NULL, 0),
                     KRC_CAUSE_EVICTED);
    assert_string_equal(d.container, "app");
    done(&r, &d);

    /* a pod that finished successfully has nothing to explain */
    assert_int_equal(run(&r, &d,
                         raw_pod(NULL,
                                 ",\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":0,"
                                 "\"reason\":\"Completed\"}},\"lastState\":{}",
                                 NULL),
                         NULL, NULL, 0),
                     KRC_CAUSE_UNKNOWN);
    assert_null(d.container);
    assert_non_null(d.next_step);
    done(&r, &d);

    /* names that are not Kubernetes names give no command */
    assert_int_equal(run(&r, &d,
                         fmt("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a b;rm\",\"namespace\":"
                             "\"x\"},\"status\":{\"containerStatuses\":[{\"name\":\"c\","
                             "\"restartCount\":1,\"lastState\":{\"terminated\":{\"exitCode\":1}}}"
                             "]}}"),
                         NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_int_equal(d.n_commands, 0);
    assert_true(unchecked_has(&d, "container spec was not given"));
    done(&r, &d);
}

/* A diagnosis as the pipeline makes one for a muted repeat: from the watch,
 * app_error low, one evidence line. */
static void repeat_diagnosis(struct krc_diagnosis *d, int exit_code, int signal, const char *reason)
{
    krc_diagnosis_init(d);
    d->container = krc_strdup("trainer");
    d->cause = KRC_CAUSE_APP_ERROR;
    d->confidence = KRC_CONFIDENCE_LOW;
    d->has_termination = 1;
    d->exit_code = exit_code;
    d->signal = signal;
    d->signal_name = krc_signal_name(signal);
    d->reason = reason != NULL ? krc_strdup(reason) : NULL;
    d->summary = krc_strdup("Container trainer exited with code 1 after 2s; 2 restarts");
    d->evidence = krc_calloc(1, sizeof(char *));
    d->evidence[0] = krc_strdup("lastState.terminated: reason=Error exitCode=1");
    d->n_evidence = 1;
    d->unchecked = krc_calloc(1, sizeof(char *));
    d->unchecked[0] = krc_strdup("no previous log was available");
    d->n_unchecked = 1;
}

static void test_carry_repeat(void **state)
{
    struct krc_diagnosis d;
    struct krc_diagnosis_history p = {.id = 42,
                                      .cause = KRC_CAUSE_GPU_OUT_OF_MEMORY,
                                      .confidence = KRC_CONFIDENCE_HIGH,
                                      .has_exit_code = 1,
                                      .exit_code = 1,
                                      .signal = 0,
                                      .has_reason = 1,
                                      .reason = "Error",
                                      .log_collected = 1};
    (void)state;

    /* matching: the cause, capped at medium, the evidence first, the
     * summary kept and completed, the log still unchecked */
    repeat_diagnosis(&d, 1, 0, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &p), 1);
    assert_int_equal(d.cause, KRC_CAUSE_GPU_OUT_OF_MEMORY);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_int_equal(d.n_evidence, 2);
    assert_string_equal(d.evidence[0],
                        "same exit code 1 and reason Error as restart #42 (diagnosed "
                        "gpu_out_of_memory with its log); this restart's log was not collected "
                        "(muted repeat)");
    assert_string_equal(d.summary, "Container trainer exited with code 1 after 2s; 2 restarts; a "
                                   "muted repeat of restart #42 (gpu_out_of_memory): same "
                                   "termination, log not collected");
    assert_int_equal(d.n_unchecked, 1);
    krc_diagnosis_cleanup(&d);

    /* the original was low: the repeat is no surer */
    p.confidence = KRC_CONFIDENCE_LOW;
    p.log_collected = 0;
    repeat_diagnosis(&d, 1, 0, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &p), 1);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_LOW);
    assert_non_null(strstr(d.evidence[0], "(diagnosed gpu_out_of_memory without its log)"));
    krc_diagnosis_cleanup(&d);

    /* its own diagnosis is surer than the carried one: kept */
    repeat_diagnosis(&d, 1, 0, "Error");
    d.confidence = KRC_CONFIDENCE_MEDIUM;
    assert_int_equal(krc_diagnosis_carry(&d, &p), 0);
    assert_int_equal(d.cause, KRC_CAUSE_APP_ERROR);
    krc_diagnosis_cleanup(&d);
    p.confidence = KRC_CONFIDENCE_HIGH;

    /* not matching: exit code, signal, reason, no reason, unknown exit code */
    repeat_diagnosis(&d, 2, 0, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &p), 0);
    krc_diagnosis_cleanup(&d);
    repeat_diagnosis(&d, 1, 9, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &p), 0);
    krc_diagnosis_cleanup(&d);
    repeat_diagnosis(&d, 1, 0, "OOMKilled");
    assert_int_equal(krc_diagnosis_carry(&d, &p), 0);
    krc_diagnosis_cleanup(&d);
    repeat_diagnosis(&d, 1, 0, NULL);
    assert_int_equal(krc_diagnosis_carry(&d, &p), 0);
    assert_int_equal(d.cause, KRC_CAUSE_APP_ERROR);
    assert_string_equal(d.summary, "Container trainer exited with code 1 after 2s; 2 restarts");
    assert_int_equal(d.n_evidence, 1);
    krc_diagnosis_cleanup(&d);
    p.has_exit_code = 0;
    repeat_diagnosis(&d, 1, 0, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &p), 0);
    krc_diagnosis_cleanup(&d);
    p.has_exit_code = 1;

    /* a signal is named; a full evidence list loses its last line */
    p.exit_code = 137;
    p.signal = 9;
    repeat_diagnosis(&d, 137, 9, "Error");
    while (d.n_evidence < KRC_DIAG_MAX_EVIDENCE) {
        d.evidence = krc_realloc(d.evidence, (d.n_evidence + 1) * sizeof(char *));
        d.evidence[d.n_evidence++] = krc_strdup("filler");
    }
    assert_int_equal(krc_diagnosis_carry(&d, &p), 1);
    assert_int_equal(d.n_evidence, KRC_DIAG_MAX_EVIDENCE);
    assert_non_null(strstr(d.evidence[0], "same exit code 137 (SIGKILL) and reason Error"));
    assert_string_equal(d.evidence[1], "lastState.terminated: reason=Error exitCode=1");
    krc_diagnosis_cleanup(&d);
}

/* The history's "no reason" is has_reason 0 (whatever its buffer holds): it
 * matches a termination without a reason, and only that; has_reason 1
 * matches that reason only. */
static void test_carry_history_reason(void **state)
{
    struct krc_diagnosis d;
    struct krc_diagnosis_history h = {.id = 7,
                                      .cause = KRC_CAUSE_DEPENDENCY_UNREACHABLE,
                                      .confidence = KRC_CONFIDENCE_MEDIUM,
                                      .has_exit_code = 1,
                                      .exit_code = 1,
                                      .has_reason = 0,
                                      .reason = "Error"};
    (void)state;

    repeat_diagnosis(&d, 1, 0, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &h), 0);
    krc_diagnosis_cleanup(&d);
    repeat_diagnosis(&d, 1, 0, NULL);
    assert_int_equal(krc_diagnosis_carry(&d, &h), 1);
    assert_int_equal(d.cause, KRC_CAUSE_DEPENDENCY_UNREACHABLE);
    assert_non_null(strstr(d.evidence[0], "same exit code 1 and no reason as restart #7"));
    krc_diagnosis_cleanup(&d);

    h.has_reason = 1;
    repeat_diagnosis(&d, 1, 0, NULL);
    assert_int_equal(krc_diagnosis_carry(&d, &h), 0);
    krc_diagnosis_cleanup(&d);
    repeat_diagnosis(&d, 1, 0, "Error");
    assert_int_equal(krc_diagnosis_carry(&d, &h), 1);
    assert_non_null(strstr(d.evidence[0], "same exit code 1 and reason Error as restart #7"));
    krc_diagnosis_cleanup(&d);
}

/* ---- next steps that follow the evidence (issue 25) ---------------------- */

/* The pod of make_pod_probes with `spec` (",\"env\":[...]" and the like)
 * inserted into the container. */
static char *pod_spec(int exit_code, const char *reason, const char *limits, const char *spec)
{
    return make_pod_probes("app", exit_code, reason, STARTED, NULL, limits, spec);
}

/* The same pod as the API server serves it (metadata.resourceVersion): whole,
 * an absent field is not set. Takes pod. */
static char *served(char *pod)
{
    char *meta = strstr(pod, "\"metadata\":{");
    char *copy;

    assert_non_null(meta);
    copy = fmt("%.*s\"metadata\":{\"resourceVersion\":\"4711\",%s", (int)(meta - pod), pod,
               meta + strlen("\"metadata\":{"));
    krc_free(pod);
    return copy;
}

static int count_evidence(const struct krc_diagnosis *d, const char *needle)
{
    int n = 0;

    for (size_t i = 0; i < d->n_evidence; i++) {
        n += strstr(d->evidence[i], needle) != NULL;
    }
    return n;
}

/* (1a) An OOM kill without a memory limit: the node's memory and a limit to
 * set, never "raise the memory limit". */
static void test_advice_oom_without_limit(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run(&r, &d, served(pod_spec(137, "OOMKilled", "{}", NULL)), NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_non_null(strstr(d.summary, "no memory limit in the pod spec"));
    assert_non_null(strstr(d.next_step, "no memory limit"));
    assert_non_null(strstr(d.next_step, "memory of the pod's node"));
    assert_non_null(strstr(d.next_step, "set a memory request and limit"));
    assert_null(strstr(d.next_step, "raise the memory limit"));
    assert_true(command_is(&d, "kubectl describe node node-1"));
    assert_bounded(&d);
    done(&r, &d);
    /* a pasted or cut spec without a limit (realworld 024, 029: the describe text broke off
     * before the memory limit): not shown is not "none" */
    assert_int_equal(
        run(&r, &d, pod_spec(137, "OOMKilled", "{\"cpu\":\"30m\"}", NULL), NULL, NULL, 0),
        KRC_CAUSE_OOM_KILLED);
    assert_non_null(strstr(d.summary, "no memory limit shown in the pod given"));
    assert_null(strstr(d.next_step, "no memory limit"));
    done(&r, &d);
    /* with a limit: the limit is the thing to compare and raise */
    assert_int_equal(
        run(&r, &d, pod_spec(137, "OOMKilled", "{\"memory\":\"1Gi\"}", NULL), NULL, NULL, 0),
        KRC_CAUSE_OOM_KILLED);
    assert_non_null(strstr(d.next_step, "raise the memory limit"));
    done(&r, &d);
    /* no spec at all: whether there is a limit is unknown, nothing is claimed */
    {
        static const char bare[] =
            "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\",\"namespace\":"
            "\"n\"},\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":1,"
            "\"lastState\":{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}}]}}";
        assert_int_equal(run(&r, &d, krc_strdup(bare), NULL, NULL, 0), KRC_CAUSE_OOM_KILLED);
        assert_null(strstr(d.next_step, "no memory limit"));
        assert_null(strstr(d.summary, "no memory limit"));
        done(&r, &d);
    }
}

/* (1c) The JVM's maximum heap against the container's memory limit. */
static void test_advice_jvm_heap(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    /* issue 25: -Xmx2g in JAVA_TOOL_OPTIONS under a 2Gi limit */
    assert_int_equal(
        run(&r, &d,
            pod_spec(137, "OOMKilled", "{\"memory\":\"2Gi\"}",
                     ",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"-XX:+UseG1GC "
                     "-Xmx2g\"}]"),
            NULL, NULL, 0),
        KRC_CAUSE_OOM_KILLED);
    assert_true(evidence_has(&d,
                             "-Xmx2g in JAVA_TOOL_OPTIONS: a JVM heap of up to 2Gi, at or above "
                             "the 2Gi memory limit"));
    assert_non_null(strstr(d.next_step, "Lower the JVM heap (-Xmx2g in JAVA_TOOL_OPTIONS)"));
    assert_null(strstr(d.next_step, "raise the memory limit or reduce"));
    done(&r, &d);
    /* virtualcell/vcell#1899: MaxRAMPercentage=80 of a 2000Mi limit, 1600Mi of heap and
     * ~700Mi of measured non-heap: a quarter or less left is called tight */
    assert_int_equal(run(&r, &d,
                         pod_spec(137, "OOMKilled", "{\"memory\":\"2000Mi\"}",
                                  ",\"env\":[{\"name\":\"JDK_JAVA_OPTIONS\",\"value\":"
                                  "\"-XX:MaxRAMPercentage=80\"}]"),
                         NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_true(evidence_has(&d, "-XX:MaxRAMPercentage=80 in JDK_JAVA_OPTIONS: a JVM heap of up to "
                                 "1.6Gi of the 2000Mi memory limit, 400Mi left"));
    assert_non_null(strstr(d.next_step, "Lower the JVM heap (-XX:MaxRAMPercentage=80 in "
                                        "JDK_JAVA_OPTIONS) or raise the memory limit"));
    done(&r, &d);
    /* a quarter left: said, but the generic step stays */
    assert_int_equal(run(&r, &d,
                         pod_spec(137, "OOMKilled", "{\"memory\":\"2Gi\"}",
                                  ",\"env\":[{\"name\":\"JAVA_OPTS\",\"value\":\"-Xmx1536m\"}]"),
                         NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_true(evidence_has(&d,
                             "-Xmx1536m in JAVA_OPTS: a JVM heap of up to 1.5Gi of the 2Gi memory "
                             "limit, 512Mi left"));
    assert_non_null(strstr(d.next_step, "raise the memory limit or reduce"));
    done(&r, &d);
    /* the command line overrides JAVA_TOOL_OPTIONS; -Xmx inside a `sh -c` line counts */
    assert_int_equal(
        run(&r, &d,
            pod_spec(137, "OOMKilled", "{\"memory\":\"2Gi\"}",
                     ",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"-Xmx1g\"}],"
                     "\"command\":[\"sh\",\"-c\"],\"args\":[\"exec java -Xmx3g -jar app.jar\"]"),
            NULL, NULL, 0),
        KRC_CAUSE_OOM_KILLED);
    assert_true(evidence_has(&d, "-Xmx3g in command/args: a JVM heap of up to 3Gi, at or above"));
    done(&r, &d);
    /* -Xmx wins over the RAM percentage; MaxRAMFraction=1 is the whole limit */
    assert_int_equal(run(&r, &d,
                         pod_spec(137, "OOMKilled", "{\"memory\":\"1Gi\"}",
                                  ",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":"
                                  "\"-XX:MaxRAMPercentage=100 -Xmx512m\"}]"),
                         NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_true(evidence_has(&d, "-Xmx512m in JAVA_TOOL_OPTIONS: a JVM heap of up to 512Mi"));
    done(&r, &d);
    assert_int_equal(run(&r, &d,
                         pod_spec(137, "OOMKilled", "{\"memory\":\"1Gi\"}",
                                  ",\"args\":[\"-XX:MaxRAMFraction=1\",\"-jar\",\"app.jar\"]"),
                         NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_true(evidence_has(&d,
                             "-XX:MaxRAMFraction=1 in command/args: a JVM heap of up to 1Gi, at or "
                             "above"));
    done(&r, &d);
    /* a value with more options than the parser keeps: bounded, the last one counts */
    {
        struct krc_buf opts;
        char *text;
        krc_buf_init(&opts, 1 << 20);
        for (int i = 0; i < 2000; i++) {
            assert_int_equal(krc_buf_append_str(&opts, "-Xmx1g "), 0);
        }
        assert_int_equal(krc_buf_append_str(&opts, "-Xmx3g"), 0);
        text = krc_buf_take(&opts);
        assert_non_null(text);
        char *spec = fmt(",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"%s\"}]", text);
        assert_int_equal(
            run(&r, &d, pod_spec(137, "OOMKilled", "{\"memory\":\"2Gi\"}", spec), NULL, NULL, 0),
            KRC_CAUSE_OOM_KILLED);
        assert_true(evidence_has(&d, "-Xmx3g in JAVA_TOOL_OPTIONS: a JVM heap of up to 3Gi"));
        krc_free(spec);
        krc_free(text);
        done(&r, &d);
    }
    /* a value from a ConfigMap is not visible: nothing is said about the heap */
    assert_int_equal(run(&r, &d,
                         pod_spec(137, "OOMKilled", "{\"memory\":\"2Gi\"}",
                                  ",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"valueFrom\":{"
                                  "\"configMapKeyRef\":{\"name\":\"jvm\",\"key\":\"opts\"}}}]"),
                         NULL, NULL, 0),
                     KRC_CAUSE_OOM_KILLED);
    assert_false(evidence_has(&d, "a JVM heap"));
    done(&r, &d);
    /* app_out_of_memory: the heap ran out at a maximum that is already the limit */
    assert_int_equal(run(&r, &d,
                         pod_spec(1, "Error", "{\"memory\":\"2Gi\"}",
                                  ",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":"
                                  "\"-Xmx2g\"}]"),
                         NULL,
                         "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap "
                         "space\n",
                         SIZE_MAX),
                     KRC_CAUSE_APP_OUT_OF_MEMORY);
    assert_non_null(strstr(d.next_step, "Do not raise the heap (-Xmx2g in JAVA_TOOL_OPTIONS)"));
    assert_true(evidence_has(&d, "at or above the 2Gi memory limit"));
    done(&r, &d);
    /* room left: raise that heap, named */
    assert_int_equal(run(&r, &d,
                         pod_spec(1, "Error", "{\"memory\":\"4Gi\"}",
                                  ",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":"
                                  "\"-Xmx1g\"}]"),
                         NULL,
                         "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap "
                         "space\n",
                         SIZE_MAX),
                     KRC_CAUSE_APP_OUT_OF_MEMORY);
    assert_non_null(strstr(d.next_step, "Raise the heap (-Xmx1g in JAVA_TOOL_OPTIONS)"));
    done(&r, &d);
}

struct missing_case {
    const char *source; /* where the log text was posted */
    const char *log;
    const char *spec;
    const char *evidence; /* must be in the evidence */
    const char *next;     /* must be in the next step */
};

/* (1b) A missing key or setting named by the log: the next step names it.
 * The log lines are as posted in the sources. */
static void test_advice_missing_setting(void **state)
{
    static const struct missing_case cases[] = {
        {"https://github.com/greenstatic/bigbluebutton-exporter/issues/89",
         "  File \"server.py\", line 7, in <module>\n"
         "    import settings\n"
         "  File \"/app/settings.py\", line 24, in <module>\n"
         "    API_BASE_URL = validate_api_base_url(os.environ[\"API_BASE_URL\"])\n"
         "  File \"/usr/local/lib/python3.8/os.py\", line 675, in __getitem__\n"
         "    raise KeyError(key) from None\n"
         "KeyError: 'API_BASE_URL'\n",
         NULL, "missing setting: environment variable API_BASE_URL (Python's os.environ",
         "Set environment variable API_BASE_URL for the container"},
        {"https://github.com/pawadski/curlhttp_exporter/issues/8",
         "Traceback (most recent call last):\n"
         "  File \"exporter.py\", line 312, in <module>\n"
         "    config_curl_options = docs['curl_settings']\n"
         "KeyError: 'curl_settings'\n",
         NULL, "missing setting: key curl_settings (Python's KeyError",
         "The application looked up 'curl_settings' and it was not there"},
        {"https://github.com/abrt/faf/issues/501 (Python 2)",
         "    frame[\"file_name\"].encode(\"ascii\", \"ignore\")))\n"
         "KeyError: u'file_name'\n",
         NULL, "missing setting: key file_name (Python's KeyError",
         "The application looked up 'file_name' and it was not there"},
        {"https://github.com/PacktPublishing/Machine-Learning-on-Kubernetes/issues/3",
         "Added 'admin' to '/opt/jboss/keycloak/standalone/configuration/"
         "keycloak-add-user.json', restart server to load user\n"
         "-b 0.0.0.0\n"
         "/opt/jboss/tools/docker-entrypoint.sh: line 165: DB_ADDR: unbound variable\n",
         ",\"env\":[{\"name\":\"DB_VENDOR\",\"value\":\"postgres\"}],\"envFrom\":[{"
         "\"configMapRef\":"
         "{\"name\":\"keycloak-env\"}}]",
         "DB_ADDR is not in the container's env; envFrom loads configMap keycloak-env",
         "Add DB_ADDR to the container's env, or as a key of configMap keycloak-env"},
        {"https://github.com/DickChesterwood/k8s-fleetman/issues/53",
         "org.springframework.beans.factory.BeanCreationException: Error creating bean with name "
         "'journeySimulator': Injection of autowired dependencies failed; nested exception is "
         "java.lang.IllegalArgumentException: Could not resolve placeholder "
         "'fleetman.position.queue' in string value \"${fleetman.position.queue}\"\n",
         NULL, "missing setting: property fleetman.position.queue",
         "or as environment variable FLEETMAN_POSITION_QUEUE"},
        {"https://github.com/openware/peatio/issues/739",
         "KeyError: key not found: \"REDIS_URL\"\n",
         ",\"env\":[{\"name\":\"REDIS_URL\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"redis\","
         "\"key\":\"url\",\"optional\":true}}}]",
         "the container's env takes REDIS_URL from secret redis key url",
         "Check secret redis key url, which the container's env reads into REDIS_URL"},
        {"https://github.com/kelseyhightower/envconfig/pull/216 (the library's error text)",
         "required key FOO missing value\n", ",\"env\":[]",
         "FOO is not in the container's env and there is no envFrom",
         "Add FOO to the container's env (a value, or a key of a ConfigMap or Secret)"},
        {"joke2k/django-environ, environ/environ.py (the library's message)",
         "django.core.exceptions.ImproperlyConfigured: Set the SECRET_KEY environment variable\n",
         NULL, "missing setting: environment variable SECRET_KEY",
         "Set environment variable SECRET_KEY for the container"},
        {"https://github.com/wekan/wekan/issues/6363",
         "node:internal/modules/cjs/loader:1503\n"
         "  throw err;\n"
         "  ^\n"
         "Error: Cannot find module '/build/main.js'\n"
         "    at Module._resolveFilename (node:internal/modules/cjs/loader:1500:15)\n"
         "    at node:internal/main/run_main_module:33:47 {\n"
         "  code: 'MODULE_NOT_FOUND',\n"
         "  requireStack: []\n"
         "}\n"
         "Node.js v24.16.0\n",
         NULL, "missing module: /build/main.js", "Module '/build/main.js' could not be loaded"},
    };
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct missing_case *c = &cases[i];
        assert_int_equal(run(&r, &d, pod_spec(1, "Error", NULL, c->spec), NULL, c->log, SIZE_MAX),
                         KRC_CAUSE_APP_ERROR);
        if (!evidence_has(&d, c->evidence) || strstr(d.next_step, c->next) == NULL) {
            fail_msg("%s: evidence or next step:\n%s\n%s\n%s", c->source,
                     d.n_evidence > 2 ? d.evidence[2] : "(none)", d.next_step,
                     d.n_evidence > 1 ? d.evidence[1] : "");
        }
        assert_null(strstr(d.next_step, "Read the end of the previous log"));
        assert_bounded(&d);
        done(&r, &d);
    }
    /* a hint of that wording earlier in the log is not the error */
    assert_int_equal(run(&r, &d, pod_spec(1, "Error", NULL, NULL), NULL,
                         "Set the DEBUG_TOOLBAR environment variable to enable the toolbar\n"
                         "starting\nloading models\nlistening on :8000\n"
                         "panic: runtime error: index out of range [3] with length 3\n",
                         SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_false(evidence_has(&d, "missing setting"));
    done(&r, &d);
    /* an error that names no setting keeps the generic step */
    assert_int_equal(run(&r, &d, pod_spec(1, "Error", NULL, NULL), NULL,
                         "panic: runtime error: index out of range [3] with length 3\n", SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.next_step, "Read the end of the previous log"));
    assert_false(evidence_has(&d, "missing setting"));
    done(&r, &d);
    /* a spec without env: pasted or converted, it may have left env out; served by the API
     * server (metadata.resourceVersion), it has none */
    assert_int_equal(run(&r, &d, pod_spec(1, "Error", NULL, NULL), NULL, cases[0].log, SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_true(evidence_has(&d, "whether API_BASE_URL is set was not checked"));
    done(&r, &d);
    {
        assert_int_equal(
            run(&r, &d, served(pod_spec(1, "Error", NULL, NULL)), NULL, cases[0].log, SIZE_MAX),
            KRC_CAUSE_APP_ERROR);
        assert_true(evidence_has(&d, "API_BASE_URL is not in the container's env and there is no "
                                     "envFrom"));
        assert_non_null(strstr(d.next_step, "Add API_BASE_URL to the container's env"));
        done(&r, &d);
    }
    /* no spec: whether the variable is set is said to be unknown */
    {
        static const char bare[] =
            "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\",\"namespace\":"
            "\"n\"},\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":1,"
            "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]}}";
        assert_int_equal(run(&r, &d, krc_strdup(bare), NULL, cases[0].log, SIZE_MAX),
                         KRC_CAUSE_APP_ERROR);
        assert_true(evidence_has(&d, "the container spec was not given: whether API_BASE_URL is "
                                     "set was not checked"));
        done(&r, &d);
    }
}

/* aws-samples/eks-workshop-v2, website/docs/troubleshooting/workernodes/three/index.md:
 * the node's conditions as `kubectl describe node` printed them (all Unknown,
 * "Kubelet stopped posting node status.", last transition Wed, 12 Feb 2025
 * 15:21:04 +0000), here in Node structure; its allocatable memory was not
 * posted. The pod is 062's (kubernetes/kubernetes#53669): exit 137, reason
 * Error, its times moved to just before the node's transition. */
static const char eks_not_ready_node[] =
    "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
    "\"ip-10-42-180-244.us-west-2.compute.internal\"},\"status\":{\"conditions\":["
    "{\"type\":\"MemoryPressure\",\"status\":\"Unknown\",\"lastHeartbeatTime\":"
    "\"2025-02-12T15:20:21Z\",\"lastTransitionTime\":\"2025-02-12T15:21:04Z\",\"reason\":"
    "\"NodeStatusUnknown\",\"message\":\"Kubelet stopped posting node status.\"},"
    "{\"type\":\"DiskPressure\",\"status\":\"Unknown\",\"lastHeartbeatTime\":"
    "\"2025-02-12T15:20:21Z\",\"lastTransitionTime\":\"2025-02-12T15:21:04Z\",\"reason\":"
    "\"NodeStatusUnknown\",\"message\":\"Kubelet stopped posting node status.\"},"
    "{\"type\":\"PIDPressure\",\"status\":\"Unknown\",\"lastHeartbeatTime\":"
    "\"2025-02-12T15:20:21Z\",\"lastTransitionTime\":\"2025-02-12T15:21:04Z\",\"reason\":"
    "\"NodeStatusUnknown\",\"message\":\"Kubelet stopped posting node status.\"},"
    "{\"type\":\"Ready\",\"status\":\"Unknown\",\"lastHeartbeatTime\":"
    "\"2025-02-12T15:20:21Z\",\"lastTransitionTime\":\"%s\",\"reason\":"
    "\"NodeStatusUnknown\",\"message\":\"Kubelet stopped posting node status.\"}]}}";

#define EKS_NODE "ip-10-42-180-244.us-west-2.compute.internal"

static char *node_pod(int exit_code, const char *reason, const char *finished)
{
    return fmt("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"memcached-0\","
               "\"namespace\":\"cache\",\"uid\":\"" POD_UID "\"},\"spec\":{\"nodeName\":\"" EKS_NODE
               "\",\"containers\":[{\"name\":\"memcached\",\"image\":\"memcached:1.5\","
               "\"resources\":{\"limits\":{\"memory\":\"500M\"}}}]},\"status\":{"
               "\"containerStatuses\":[{\"name\":\"memcached\",\"restartCount\":1,\"lastState\":{"
               "\"terminated\":{\"exitCode\":%d,\"reason\":\"%s\",\"startedAt\":"
               "\"2025-02-12T14:59:37Z\",\"finishedAt\":\"%s\"}}}]}}",
               exit_code, reason, finished);
}

/* the node controller's event on the pod (realworld 062's demo, scenario.c) */
static char *node_not_ready_event(const char *when)
{
    return fmt("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\","
               "\"kind\":\"Event\",\"metadata\":{\"name\":\"e1\",\"namespace\":\"cache\"},"
               "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"cache\",\"name\":"
               "\"memcached-0\",\"uid\":\"" POD_UID "\"},\"reason\":\"NodeNotReady\",\"message\":"
               "\"Node is not ready\",\"type\":\"Warning\",\"source\":{\"component\":"
               "\"node-controller\"},\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\","
               "\"count\":1}]}",
               when, when);
}

static enum krc_cause run_node(struct krc_report *r, struct krc_diagnosis *d, char *pod,
                               char *events, const char *transition)
{
    struct krc_error err;
    char *node = transition != NULL ? fmt(eks_not_ready_node, transition) : NULL;

    krc_error_clear(&err);
    run(r, d, pod, events, NULL, 0);
    if (node != NULL) {
        assert_int_equal(krc_kube_parse_node(node, strlen(node), r, &err), 0);
        krc_free(node);
        assert_int_equal(krc_diagnose(r, NULL, d, &err), 0);
    }
    return d->cause;
}

/* (2) A container killed while its node was NotReady: the node leads. */
static void test_rule_node_not_ready(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run_node(&r, &d, node_pod(137, "Error", "2025-02-12T15:20:58Z"), NULL,
                              "2025-02-12T15:21:04Z"),
                     KRC_CAUSE_NODE_NOT_READY);
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_non_null(strstr(d.summary, "The pod's node is NotReady (Ready=Unknown)"));
    assert_null(strstr(d.summary, "NodeStatusUnknown")); /* the evidence says it */
    assert_non_null(strstr(d.next_step, "Check the node first"));
    assert_true(command_is(&d, "kubectl describe node " EKS_NODE));
    /* the four conditions with the same words are one line, said once */
    assert_int_equal(count_evidence(&d, "Kubelet stopped posting node status."), 1);
    assert_true(evidence_has(&d, "conditions MemoryPressure, DiskPressure, PIDPressure, "
                                 "Ready=Unknown (NodeStatusUnknown)"));
    assert_null(strstr(d.summary, "no probe kill or eviction"));
    assert_bounded(&d);
    done(&r, &d);
    /* the event alone (the node reports Ready now, or was not given) */
    assert_int_equal(run_node(&r, &d, node_pod(137, "Error", "2025-02-12T15:20:58Z"),
                              node_not_ready_event("2025-02-12T15:21:40Z"), NULL),
                     KRC_CAUSE_NODE_NOT_READY);
    assert_non_null(strstr(d.summary, "was NotReady at the time (event NodeNotReady)"));
    assert_true(evidence_has(&d, "event NodeNotReady"));
    assert_true(unchecked_has(&d, "no node object was given"));
    done(&r, &d);
    /* an event long after the kill is another story */
    assert_int_equal(run_node(&r, &d, node_pod(137, "Error", "2025-02-12T15:20:58Z"),
                              node_not_ready_event("2025-02-12T16:30:00Z"), NULL),
                     KRC_CAUSE_KILLED);
    done(&r, &d);
    /* NotReady only since an hour after the kill: not the kill's node state */
    assert_int_equal(run_node(&r, &d, node_pod(137, "Error", "2025-02-12T14:20:58Z"), NULL,
                              "2025-02-12T15:21:04Z"),
                     KRC_CAUSE_KILLED);
    done(&r, &d);
    /* no exit code, or the kubelet lost the container: the node, not an eviction */
    assert_int_equal(run_node(&r, &d,
                              node_pod(137, "ContainerStatusUnknown", "2025-02-12T15:20:58Z"), NULL,
                              "2025-02-12T15:21:04Z"),
                     KRC_CAUSE_NODE_NOT_READY);
    assert_non_null(strstr(d.summary, "ContainerStatusUnknown"));
    done(&r, &d);
    /* the kernel's verdict and an application's own exit still win */
    assert_int_equal(run_node(&r, &d, node_pod(137, "OOMKilled", "2025-02-12T15:20:58Z"), NULL,
                              "2025-02-12T15:21:04Z"),
                     KRC_CAUSE_OOM_KILLED);
    done(&r, &d);
    assert_int_equal(run_node(&r, &d, node_pod(1, "Error", "2025-02-12T15:20:58Z"), NULL,
                              "2025-02-12T15:21:04Z"),
                     KRC_CAUSE_APP_ERROR);
    done(&r, &d);
    /* a Ready node and no event: nothing says the node was down */
    assert_int_equal(run_node(&r, &d, node_pod(137, "Error", "2025-02-12T15:20:58Z"), NULL, NULL),
                     KRC_CAUSE_KILLED);
    done(&r, &d);
}

/* ---- issue 26: the patterns ---------------------------------------------- */

/* A pod whose container "app" is terminated with reason Error and no exit
 * code, restartCount 0, no previous state: the log alone must decide. */
static char *make_pod_no_exit(void)
{
    return fmt("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\","
               "\"namespace\":\"shop\",\"uid\":\"" POD_UID "\"},"
               "\"spec\":{\"nodeName\":\"node-1\",\"restartPolicy\":\"Always\",\"containers\":[{"
               "\"name\":\"app\",\"image\":\"img:1\"}]},"
               "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
               "\"ready\":false,\"restartCount\":0,\"image\":\"img:1\",\"imageID\":\"\","
               "\"state\":{\"terminated\":{\"reason\":\"Error\",\"startedAt\":\"" STARTED
               "\",\"finishedAt\":\"" FINISHED "\"}}}]}}");
}

/* A crash header with no exit code shown: .NET's unhandled exception with
 * its frames after it, a Rust panic, a Rust error-level record ending the
 * log, the dynamic loader refusing the program; and a log viewer's trailer
 * line is not the last line of the log. */
static void test_crash_header_without_exit_code(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    static const char dotnet[] =
        "info: Microsoft.Hosting.Lifetime[0]\n"
        "      Application is shutting down...\n"
        "Unhandled exception. System.InvalidOperationException: Unable to resolve service for "
        "type 'IRepo'\n"
        "   at Microsoft.Extensions.DependencyInjection.ServiceProvider.GetService(Type t)\n"
        "   at Program.<Main>$(String[] args) in /src/Program.cs:line 12\n";
    static const char rust_panic[] =
        "starting worker\n"
        "thread 'main' panicked at src/main.rs:41:10:\n"
        "called `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound }\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
    static const char rust_error[] =
        "2024-05-01T10:00:00.120000Z  INFO indexer: loading state\n"
        "2024-05-01T10:00:00.125000Z ERROR indexer: could not open state file\n";
    static const char rust_error_trailer[] =
        "2024-05-01T10:00:00.120000Z  INFO indexer: loading state\n"
        "2024-05-01T10:00:00.125000Z ERROR indexer: could not open state file\n"
        "Stream closed EOF for shop/web-0 (app)\n";
    static const char rust_error_then_work[] =
        "2024-05-01T10:00:00.125000Z ERROR indexer: could not open state file\n"
        "2024-05-01T10:00:01.000000Z  INFO indexer: using an empty state\n";
    static const char glibc[] =
        "gke-operator: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by "
        "gke-operator)\n"
        "gke-operator: /lib64/libc.so.6: version `GLIBC_2.32' not found (required by "
        "gke-operator)\n";

    (void)state;
    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL, dotnet, SIZE_MAX), KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, "Unhandled exception. System.InvalidOperationException"));
    assert_non_null(strstr(d.summary, "exit code unknown"));
    assert_bounded(&d);
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL, rust_panic, SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, "panicked at"));
    done(&r, &d);

    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL, rust_error, SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, "could not open state file"));
    done(&r, &d);

    /* the viewer's "Stream closed EOF for NS/POD (C)" is not the last line */
    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL, rust_error_trailer, SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.summary, "could not open state file"));
    assert_null(strstr(d.summary, "Stream closed"));
    done(&r, &d);

    /* an error record the program went on after is not its end */
    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL, rust_error_then_work, SIZE_MAX),
                     KRC_CAUSE_UNKNOWN);
    done(&r, &d);

    /* the dynamic loader: the newest glibc version is the one to name */
    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL, glibc, SIZE_MAX), KRC_CAUSE_APP_ERROR);
    assert_true(evidence_has(&d, "C library too old: the program needs GLIBC_2.34"));
    assert_non_null(strstr(d.next_step, "newer glibc than the image has (it needs GLIBC_2.34)"));
    done(&r, &d);

    /* the loader's missing library, named in the next step */
    assert_int_equal(run(&r, &d, make_pod_no_exit(), NULL,
                         "/usr/bin/app: error while loading shared libraries: libssl.so.1.1: "
                         "cannot open shared object file: No such file or directory\n",
                         SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_true(evidence_has(&d, "missing shared library: libssl.so.1.1"));
    assert_non_null(strstr(d.next_step, "Shared library libssl.so.1.1 is missing"));
    done(&r, &d);
}

/* NCCL failures are GPU (collective communication) errors, read in the
 * last lines of the log only. */
static void test_nccl_gpu_error(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_buf b;
    static const char vllm[] =
        "ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] RuntimeError: NCCL error: "
        "unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
        "ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] WorkerProc failed to "
        "start.\n";
    static const char warn[] =
        "42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address "
        "already in use\n"
        "42692884fcba:140:140 [0] NCCL INFO bootstrap.cc:91 -> 2\n"
        "Traceback (most recent call last):\n"
        "  File \"train.py\", line 186, in <module>\n";

    (void)state;
    assert_int_equal(
        run(&r, &d, make_pod("trainer", 1, "Error", STARTED, NULL, "{\"nvidia.com/gpu\":\"8\"}"),
            NULL, vllm, SIZE_MAX),
        KRC_CAUSE_GPU_ERROR);
    assert_non_null(strstr(d.summary, "collective-communication failure"));
    assert_int_equal(d.confidence, KRC_CONFIDENCE_MEDIUM);
    assert_non_null(strstr(d.summary, "NCCL error: unhandled system error"));
    assert_non_null(strstr(d.next_step, "NCCL_DEBUG=INFO"));
    assert_non_null(strstr(d.next_step, "/dev/shm"));
    done(&r, &d);

    assert_int_equal(
        run(&r, &d, make_pod("trainer", 1, "Error", STARTED, NULL, NULL), NULL, warn, SIZE_MAX),
        KRC_CAUSE_GPU_ERROR);
    assert_non_null(strstr(d.summary, "NCCL WARN"));
    done(&r, &d);

    /* a warning long before the end, and another error ending the log */
    krc_buf_init(&b, 1 << 20);
    assert_int_equal(krc_buf_append_str(&b, warn), 0);
    for (int i = 0; i < 60; i++) {
        assert_int_equal(krc_buf_printf(&b, "step %d loss=0.5\n", i), 0);
    }
    assert_int_equal(krc_buf_append_str(&b, "ValueError: checkpoint path is empty\n"), 0);
    assert_int_equal(
        run(&r, &d, make_pod("trainer", 1, "Error", STARTED, NULL, NULL), NULL, b.data, b.len),
        KRC_CAUSE_APP_ERROR);
    done(&r, &d);
    krc_buf_cleanup(&b);
}

/* Exit 0 after the log reported SIGTERM: a stop, not a completed program. */
static void test_sigterm_exit0_is_terminated(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL,
                         "listening on :8080\nSIGTERM received, shutting down\nbye\n", SIZE_MAX),
                     KRC_CAUSE_TERMINATED);
    assert_non_null(strstr(d.summary, "was stopped: its log reported a stop signal"));
    assert_non_null(strstr(d.summary, "and it exited 0 (Completed)"));
    assert_non_null(strstr(d.summary, "SIGTERM received"));
    assert_non_null(strstr(d.summary, "a probe kill cannot be ruled out"));
    assert_true(evidence_has(&d, "SIGTERM received"));
    assert_non_null(strstr(d.next_step, "Find who stopped it"));
    assert_null(strstr(d.summary, "completed"));
    assert_bounded(&d);
    done(&r, &d);

    /* Go's wording of the signal */
    assert_int_equal(run(&r, &d, make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL,
                         "level=info msg=\"received signal: terminated\"\n", SIZE_MAX),
                     KRC_CAUSE_TERMINATED);
    done(&r, &d);

    /* a handler being installed is not a signal received */
    assert_int_equal(run(&r, &d, make_pod("app", 0, "Completed", STARTED, NULL, NULL), NULL,
                         "installing SIGTERM handler\njob done\n", SIZE_MAX),
                     KRC_CAUSE_COMPLETED);
    done(&r, &d);

    /* a failing exit keeps its own rules */
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                         "SIGTERM received\npanic: close of closed channel\n", SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    done(&r, &d);
}

/* A Python module missing at start is an application/packaging error with
 * a next step naming it, not an unreachable dependency ("ENOTFOUND" is
 * Node's DNS error code, not the tail of "ModuleNotFoundError"). */
static void test_module_not_found_is_app_error(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                         "Traceback (most recent call last):\n"
                         "  File \"/app/serve.py\", line 3, in <module>\n"
                         "    from transformers import AutoModel\n"
                         "ModuleNotFoundError: No module named 'transformers'\n",
                         SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_true(evidence_has(&d, "missing module: transformers"));
    assert_non_null(strstr(d.next_step, "Python module 'transformers' is not installed"));
    done(&r, &d);

    /* a submodule: the package to install is the top-level one; Python 2 */
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                         "ImportError: No module named yaml.constructor\n", SIZE_MAX),
                     KRC_CAUSE_APP_ERROR);
    assert_non_null(strstr(d.next_step, "provides 'yaml'"));
    done(&r, &d);

    /* Node's ENOTFOUND still names a dependency */
    assert_int_equal(run(&r, &d, make_pod("app", 1, "Error", STARTED, NULL, NULL), NULL,
                         "Error: getaddrinfo ENOTFOUND postgres\n", SIZE_MAX),
                     KRC_CAUSE_DEPENDENCY_UNREACHABLE);
    done(&r, &d);
}

/* Only device resources count as GPUs: not HAMi's gpumem/gpucores. */
static void test_gpu_count_devices_only(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;

    (void)state;
    assert_int_equal(run(&r, &d,
                         make_pod("trainer", 1, "Error", STARTED, NULL,
                                  "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpucores\":\"100\","
                                  "\"nvidia.com/gpumem\":\"16000\",\"memory\":\"1Gi\"}"),
                         NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_int_equal(d.gpus, 1);
    assert_null(strstr(d.summary, "16101"));
    done(&r, &d);

    assert_int_equal(run(&r, &d,
                         make_pod("trainer", 1, "Error", STARTED, NULL,
                                  "{\"amd.com/gpu\":\"2\",\"nvidia.com/gpu.shared\":\"4\"}"),
                         NULL, NULL, 0),
                     KRC_CAUSE_APP_ERROR);
    assert_int_equal(d.gpus, 2);
    done(&r, &d);

    assert_true(krc_report_is_gpu_resource("nvidia.com/gpu"));
    assert_true(krc_report_is_gpu_resource("nvidia.com/mig-1g.5gb"));
    assert_true(krc_report_is_gpu_resource("google.com/tpu"));
    assert_true(krc_report_is_gpu_resource("habana.ai/gaudi"));
    assert_true(krc_report_is_gpu_resource("gpu.intel.com/i915"));
    assert_false(krc_report_is_gpu_resource("nvidia.com/gpumem"));
    assert_false(krc_report_is_gpu_resource("nvidia.com/gpucores"));
    assert_false(krc_report_is_gpu_resource("nvidia.com/gpumem-percentage"));
    assert_false(krc_report_is_gpu_resource("gpu"));
    assert_false(krc_report_is_gpu_resource(NULL));

    /* the watch thread's look before it scans a pod: every device name quoted
     * in the JSON (also with an escaped '/'), none for other names */
    {
        static const char *const devices[] = {
            "nvidia.com/gpu",        "nvidia.com/mig-1g.5gb",
            "amd.com/gpu",           "gpu.intel.com/i915",
            "gpu.intel.com/xe",      "intel.com/gpu",
            "google.com/tpu",        "habana.ai/gaudi",
            "aws.amazon.com/neuron", "aws.amazon.com/neurondevice"};
        char json[256];
        for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
            const char *slash = strchr(devices[i], '/');
            assert_true(krc_report_is_gpu_resource(devices[i]));
            snprintf(json, sizeof(json), "{\"limits\":{\"cpu\":\"1\",\"%s\":\"2\"}}", devices[i]);
            assert_true(krc_report_json_may_name_gpu_resource(json, strlen(json)));
            snprintf(json, sizeof(json), "{\"limits\":{\"%.*s\\/%s\":\"2\"}}",
                     (int)(slash - devices[i]), devices[i], slash + 1);
            assert_true(krc_report_json_may_name_gpu_resource(json, strlen(json)));
        }
        snprintf(json, sizeof(json), "%s",
                 "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"x\"}},"
                 "\"image\":\"reg.example.com/nvidia.com/gpu\",\"example.com/gpu\":\"1\","
                 "\"mount\":\"/var/run/nvidia.com\"}");
        assert_false(krc_report_json_may_name_gpu_resource(json, strlen(json)));
        assert_false(krc_report_json_may_name_gpu_resource("/", 1));
        assert_false(krc_report_json_may_name_gpu_resource(NULL, 0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_liveness_kill_in_window),
        cmocka_unit_test(test_liveness_kill_with_exit_0_and_combined),
        cmocka_unit_test(test_probe_kill_outside_window_ignored),
        cmocka_unit_test(test_probe_kill_window_upper_edge),
        cmocka_unit_test(test_probe_kill_event_time_only),
        cmocka_unit_test(test_other_pod_same_container_name_ignored),
        cmocka_unit_test(test_readiness_never_counts),
        cmocka_unit_test(test_definition_changed_ignored),
        cmocka_unit_test(test_oom_killed_cgroup_v1_exit_1),
        cmocka_unit_test(test_start_error_not_found),
        cmocka_unit_test(test_start_error_permission_denied),
        cmocka_unit_test(test_signals),
        cmocka_unit_test(test_cuda_oom_line_3_of_5000),
        cmocka_unit_test(test_gpu_error),
        cmocka_unit_test(test_dependency_at_the_end),
        cmocka_unit_test(test_summary_unquoted_and_redaction),
        cmocka_unit_test(test_dependency_retried_successfully_is_not_the_cause),
        cmocka_unit_test(test_non_utf8_log),
        cmocka_unit_test(test_huge_line_and_bounded_work),
        cmocka_unit_test(test_termination_message_as_log),
        cmocka_unit_test(test_pick_container),
        cmocka_unit_test(test_nothing_to_explain),
        cmocka_unit_test(test_node_evidence),
        cmocka_unit_test(test_sanitize_and_names),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_rule_table),
        cmocka_unit_test(test_rule_oom_killed),
        cmocka_unit_test(test_rule_evicted),
        cmocka_unit_test(test_rule_probe_events_confidence),
        cmocka_unit_test(test_rule_probe_events_undated),
        cmocka_unit_test(test_rule_exec_format_error),
        cmocka_unit_test(test_rule_runc_log_and_native_thread),
        cmocka_unit_test(test_rule_disk_full),
        cmocka_unit_test(test_rule_start_failed),
        cmocka_unit_test(test_rule_app_out_of_memory),
        cmocka_unit_test(test_rule_signals),
        cmocka_unit_test(test_rule_remaining_on_their_own),
        cmocka_unit_test(test_rule_probe_from_spec),
        cmocka_unit_test(test_rule_completed_killed_terminated_wording),
        cmocka_unit_test(test_partial_input),
        cmocka_unit_test(test_partial_pastes),
        cmocka_unit_test(test_carry_repeat),
        cmocka_unit_test(test_carry_history_reason),
        cmocka_unit_test(test_advice_oom_without_limit),
        cmocka_unit_test(test_advice_jvm_heap),
        cmocka_unit_test(test_advice_missing_setting),
        cmocka_unit_test(test_rule_node_not_ready),
        cmocka_unit_test(test_crash_header_without_exit_code),
        cmocka_unit_test(test_nccl_gpu_error),
        cmocka_unit_test(test_sigterm_exit0_is_terminated),
        cmocka_unit_test(test_module_not_found_is_app_error),
        cmocka_unit_test(test_gpu_count_devices_only),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
