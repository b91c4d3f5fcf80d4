/* The one analysis (analyse/analyse.h) of the daemon's worker, explain_pod
 * and krc explain: redaction before the diagnosis, the container fallback,
 * a failed step that ends the analysis or is handed to the warn hook, the
 * container explain_pod picks from the pod it parsed (in status order), the
 * restart's collection (none for a muted one, the log file only when a log
 * was found), and an allocation-failure sweep. */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "krc/analyse/analyse.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define SECRET "AKIAEXAMPLEKEY012345"

/* Two containers whose spec order (b, a) is not their status order (a, b),
 * both with 2 restarts, and an init container with as many. */
static const char pod_json[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\",\"uid\":\"u-1\"},"
    "\"spec\":{\"initContainers\":[{\"name\":\"setup\"}],"
    "\"containers\":[{\"name\":\"b\"},{\"name\":\"a\"}]},"
    "\"status\":{\"initContainerStatuses\":[{\"name\":\"setup\",\"restartCount\":2,"
    "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}],"
    "\"containerStatuses\":["
    "{\"name\":\"a\",\"restartCount\":2,\"state\":{\"running\":{}},"
    "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}},"
    "{\"name\":\"b\",\"restartCount\":2,\"state\":{\"running\":{}},"
    "\"lastState\":{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}}]}}";

/* A Go panic whose log quotes a secret. */
static const char panic_pod[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"api-1\",\"namespace\":\"shop\",\"uid\":\"u-2\"},"
    "\"spec\":{\"containers\":[{\"name\":\"api\"}]},"
    "\"status\":{\"containerStatuses\":[{\"name\":\"api\",\"restartCount\":1,"
    "\"state\":{\"running\":{}},\"lastState\":{\"terminated\":{\"exitCode\":2,"
    "\"reason\":\"Error\",\"message\":\"key " SECRET " refused\"}}}]}}";
static const char panic_log[] = "starting\npanic: login with " SECRET " refused\n\n"
                                "goroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d\n";

static void load(struct krc_report *r, const char *json, const char *log)
{
    krc_report_init(r);
    assert_int_equal(krc_kube_parse_pod(json, strlen(json), r, NULL), 0);
    if (log != NULL) {
        unsigned char *copy = (unsigned char *)krc_strdup(log);
        assert_non_null(copy);
        assert_int_equal(krc_report_take_log(r, NULL, copy, strlen(log), NULL), 0);
    }
}

static int quotes(const struct krc_diagnosis *d, const char *s)
{
    int found = d->summary != NULL && strstr(d->summary, s) != NULL;
    for (size_t i = 0; i < d->n_evidence; i++) {
        found |= strstr(d->evidence[i], s) != NULL;
    }
    return found;
}

/* krc explain's way: the report as given, redacted before the diagnosis
 * quotes it, and the report JSON from the redacted texts. */
static void test_redacts_before_diagnosing(void **state)
{
    struct krc_analyse_request q;
    struct krc_analysis a;
    struct krc_report r;
    struct krc_diagnosis d;
    (void)state;

    load(&r, panic_pod, panic_log);
    krc_diagnosis_init(&d);
    memset(&q, 0, sizeof(q));
    q.want_json = 1;
    a.report = &r;
    a.diagnosis = &d;
    assert_int_equal(krc_analyse(&q, &a, NULL), 0);
    assert_int_equal(a.failed, KRC_ANALYSE_DONE);
    assert_string_equal(d.container, "api");
    assert_true(quotes(&d, "[REDACTED]"));
    assert_false(quotes(&d, SECRET));
    assert_null(memmem(r.log, r.log_len, SECRET, strlen(SECRET)));
    assert_null(strstr(r.containers[0].last.message, SECRET));
    assert_non_null(a.json);
    assert_null(strstr(a.json, SECRET));
    assert_non_null(strstr(a.json, "\"container\":\"api\""));
    krc_analysis_cleanup(&a);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

/* The diagnosis cuts the lines it quotes: a secret cut in half there is no
 * longer one the diagnosis's own redaction recognises, so the report is
 * redacted before it is diagnosed. Wherever the cut falls, no part of the
 * secret is quoted. */
static void test_no_cut_secret_is_quoted(void **state)
{
    struct krc_analyse_request q;
    struct krc_analysis a;
    struct krc_diagnosis d;
    struct krc_report r;
    char log[1024];
    char pad[400];
    (void)state;

    memset(&q, 0, sizeof(q));
    a.report = &r;
    a.diagnosis = &d;
    for (size_t n = 100; n < 300; n++) {
        memset(pad, 'x', n);
        pad[n] = '\0';
        snprintf(log, sizeof(log), "starting\npanic: %s " SECRET " refused\n\n", pad);
        load(&r, panic_pod, log);
        krc_diagnosis_init(&d);
        assert_int_equal(krc_analyse(&q, &a, NULL), 0);
        if (quotes(&d, "AKIAEX")) {
            fail_msg("pad %zu: the diagnosis quotes part of the secret: %s", n, d.summary);
        }
        krc_analysis_cleanup(&a);
        krc_diagnosis_cleanup(&d);
        krc_report_cleanup(&r);
    }
}

struct hooks {
    int amended;
    int warned;
    enum krc_analyse_step step;
    char msg[KRC_ERROR_MSG_MAX];
};

static void amend(void *ud, struct krc_diagnosis *dg)
{
    struct hooks *h = ud;
    h->amended++;
    assert_non_null(dg);
}

static void warn(void *ud, enum krc_analyse_step step, const struct krc_error *e)
{
    struct hooks *h = ud;
    h->warned++;
    h->step = step;
    snprintf(h->msg, sizeof(h->msg), "%s", e->msg);
}

/* A container the pod does not have: the end of the analysis (krc explain's
 * --container), the pod's own pick with any_container (the daemon, MCP), or
 * handed to the warn hook while the rest goes on (the daemon). */
static void test_container_fallback_and_failures(void **state)
{
    struct krc_analyse_request q;
    struct krc_analysis a;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    struct hooks h;
    (void)state;

    load(&r, panic_pod, panic_log);
    krc_diagnosis_init(&d);
    memset(&q, 0, sizeof(q));
    memset(&h, 0, sizeof(h));
    q.container = "nope";
    q.amend = amend;
    q.ud = &h;
    q.want_json = 1;
    a.report = &r;
    a.diagnosis = &d;
    krc_error_clear(&e);
    assert_int_equal(krc_analyse(&q, &a, &e), KRC_ENOTFOUND);
    assert_int_equal(a.failed, KRC_ANALYSE_DIAGNOSE);
    assert_non_null(strstr(e.msg, "nope"));
    assert_int_equal(h.amended, 0); /* ended at the diagnosis */
    assert_null(a.json);
    krc_analysis_cleanup(&a);

    q.any_container = 1;
    assert_int_equal(krc_analyse(&q, &a, NULL), 0);
    assert_string_equal(d.container, "api");
    assert_int_equal(h.amended, 1);
    assert_non_null(a.json);
    krc_analysis_cleanup(&a);

    /* with a warn hook the failure is handed over and the analysis goes on */
    q.any_container = 0;
    q.warn = warn;
    krc_error_clear(&e);
    assert_int_equal(krc_analyse(&q, &a, &e), KRC_ENOTFOUND);
    assert_int_equal(a.failed, KRC_ANALYSE_DIAGNOSE);
    assert_int_equal(h.warned, 1);
    assert_int_equal(h.step, KRC_ANALYSE_DIAGNOSE);
    assert_string_equal(h.msg, e.msg);
    assert_int_equal(h.amended, 2);
    assert_non_null(a.json); /* built from what could be had */
    krc_analysis_cleanup(&a);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

static struct krc_kube_auth_config auth;
static struct krc_token_source *tokens;

/* A client of an API server that is not there: every request of the
 * collection fails, which the report says in its notes. */
static struct krc_kube_client *unreachable(void)
{
    struct krc_kube_client *c;

    memset(&auth, 0, sizeof(auth));
    auth.server = "http://127.0.0.1:1";
    auth.source = "test";
    tokens = krc_token_source_new("test-token", NULL, 60);
    assert_non_null(tokens);
    c = krc_kube_client_new(&auth, tokens, NULL);
    assert_non_null(c);
    krc_kube_client_set_timeout(c, 5000);
    return c;
}

static int analyse_pod(struct krc_kube_client *c, const char *json, const char *container,
                       struct krc_analysis *a, struct krc_error *e)
{
    struct krc_analyse_request q;

    memset(&q, 0, sizeof(q));
    q.pod_json = json;
    q.pod_json_len = strlen(json);
    q.client = c;
    q.container = container;
    q.any_container = 1;
    q.want_json = 1;
    krc_report_init(a->report);
    krc_diagnosis_init(a->diagnosis);
    return krc_analyse(&q, a, e);
}

static void analysed(struct krc_analysis *a)
{
    krc_analysis_cleanup(a);
    krc_diagnosis_cleanup(a->diagnosis);
    krc_report_cleanup(a->report);
}

/* explain_pod's way: the pod it read, parsed here; the container with the
 * most restarts, on a tie the first in status order (not spec order), a
 * container before an init container; the rest collected around it. */
static void test_pod_pick_and_collection(void **state)
{
    struct krc_kube_client *c = unreachable();
    struct krc_analysis a;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    (void)state;

    a.report = &r;
    a.diagnosis = &d;
    assert_int_equal(analyse_pod(c, pod_json, NULL, &a, NULL), 0);
    assert_string_equal(a.container, "a");
    assert_int_equal(a.restart_count, 2);
    assert_string_equal(d.container, "a");
    assert_string_equal(r.name, "web-1");
    assert_true(krc_test_has_note(&r, "pod events unavailable"));
    assert_true(krc_test_has_note(&r, "previous log unavailable"));
    assert_non_null(a.json);
    analysed(&a);

    assert_int_equal(analyse_pod(c, pod_json, "b", &a, NULL), 0);
    assert_string_equal(a.container, "b");
    assert_string_equal(d.container, "b");
    analysed(&a);

    krc_error_clear(&e);
    assert_int_equal(analyse_pod(c, pod_json, "zzz", &a, &e), KRC_ENOTFOUND);
    assert_int_equal(a.failed, KRC_ANALYSE_POD);
    assert_null(a.json);
    analysed(&a);

    krc_error_clear(&e);
    assert_true(analyse_pod(c, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"spec\":{}}", NULL,
                            &a, &e) < 0);
    assert_int_equal(a.failed, KRC_ANALYSE_POD);
    assert_string_equal(e.msg, "pod: metadata.uid missing");
    analysed(&a);

    krc_error_clear(&e);
    assert_true(analyse_pod(c, "{\"kind\":\"Node\"}", NULL, &a, &e) < 0);
    assert_int_equal(a.failed, KRC_ANALYSE_POD);
    assert_non_null(strstr(e.msg, "not a Pod"));
    analysed(&a);
    krc_kube_client_free(c);
    krc_token_source_free(tokens);
}

static int collected;
static int log_files;
static const char *found_log; /* the previous log fake_collect finds; NULL: none */

static int fake_collect(struct krc_kube_client *c, const struct krc_restart *r,
                        const struct krc_collector_options *o, struct krc_report *rep,
                        struct krc_error *err)
{
    (void)c;
    (void)o;
    collected++;
    if (krc_collect_minimal(r, rep, err) < 0) {
        return KRC_ENOMEM;
    }
    if (found_log != NULL) {
        unsigned char *copy = (unsigned char *)krc_strdup(found_log);
        if (copy == NULL) {
            return KRC_ENOMEM;
        }
        return krc_report_take_log(rep, r->ident.container, copy, strlen(found_log), err);
    }
    return 0;
}

static int fake_log_file(struct krc_kube_client *c, const struct krc_restart *r, char **ret,
                         size_t *ret_len, struct krc_error *err)
{
    (void)c;
    (void)r;
    (void)err;
    log_files++;
    *ret = krc_strdup("the whole log\n");
    *ret_len = strlen("the whole log\n");
    return *ret != NULL ? 0 : KRC_ENOMEM;
}

/* The daemon's way: a restart record; nothing requested for a muted one;
 * the log file only when asked for and a previous log was found. */
static void test_restart_collection(void **state)
{
    struct krc_analyse_request q;
    struct krc_analysis a;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_restart rs;
    (void)state;

    memset(&rs, 0, sizeof(rs));
    rs.namespace = (char *)"shop";
    rs.pod = (char *)"api-1";
    assert_int_equal(krc_restart_ident_set(&rs.ident, "u-2", "api", 0, 0, NULL), 0);
    rs.pod_json = (char *)panic_pod;
    rs.pod_json_len = strlen(panic_pod);
    memset(&q, 0, sizeof(q));
    q.restart = &rs;
    q.collect = fake_collect;
    q.log_file = fake_log_file;
    q.container = "api";
    q.want_log_file = 1;
    q.minimal = 1;
    a.report = &r;
    a.diagnosis = &d;
    collected = log_files = 0;

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    assert_int_equal(krc_analyse(&q, &a, NULL), 0);
    assert_int_equal(collected, 0);
    assert_int_equal(log_files, 0);
    assert_string_equal(d.container, "api");
    analysed(&a);

    /* collected; the fake finds no previous log: no log file */
    q.minimal = 0;
    found_log = NULL;
    krc_report_init(&r);
    krc_diagnosis_init(&d);
    assert_int_equal(krc_analyse(&q, &a, NULL), 0);
    assert_int_equal(collected, 1);
    assert_int_equal(log_files, 0);
    assert_null(a.log_file);
    analysed(&a);

    /* a previous log: the log file too, the caller's to keep */
    found_log = panic_log;
    krc_report_init(&r);
    krc_diagnosis_init(&d);
    assert_int_equal(krc_analyse(&q, &a, NULL), 0);
    assert_int_equal(collected, 2);
    assert_int_equal(log_files, 1);
    assert_non_null(a.log_file);
    assert_int_equal(a.log_file_len, strlen("the whole log\n"));
    assert_true(quotes(&d, "[REDACTED]")); /* the collected log, redacted */
    analysed(&a);

    /* not asked for: not fetched */
    q.want_log_file = 0;
    krc_report_init(&r);
    krc_diagnosis_init(&d);
    assert_int_equal(krc_analyse(&q, &a, NULL), 0);
    assert_int_equal(collected, 3);
    assert_int_equal(log_files, 1);
    assert_null(a.log_file);
    analysed(&a);
    found_log = NULL;
}

/* Every allocation of one analysis fails from the Nth on: 0 or a failure,
 * never a leak (ASan) or a crash. */
static long sweep_run(void *ud, long n)
{
    struct krc_analyse_request q;
    struct krc_analysis a;
    struct krc_report r;
    struct krc_diagnosis d;
    long attempts;
    int rc;
    (void)ud;

    load(&r, panic_pod, panic_log);
    krc_diagnosis_init(&d);
    memset(&q, 0, sizeof(q));
    q.want_json = 1;
    q.any_container = 1;
    q.container = "api";
    a.report = &r;
    a.diagnosis = &d;
    krc_mem_fail_after(n);
    rc = krc_analyse(&q, &a, NULL);
    attempts = krc_mem_fail_after(-1);
    assert_true(rc == 0 || rc == KRC_ENOMEM);
    assert_true((rc == 0) == (a.failed == KRC_ANALYSE_DONE));
    krc_analysis_cleanup(&a);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return attempts;
}

static void test_alloc_sweep(void **state)
{
    (void)state;
    assert_true(krc_test_alloc_sweep(sweep_run, NULL) > 10);
}

/* A container stopped by its stop signal (KEP-4960: exit 128 + SIGUSR1). */
static const char stop_pod[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"worker-0\",\"namespace\":\"jobs\","
    "\"uid\":\"u-3\"},\"spec\":{\"containers\":[{\"name\":\"app\",\"lifecycle\":{"
    "\"stopSignal\":\"SIGUSR1\"}}]},\"status\":{\"containerStatuses\":[{\"name\":\"app\","
    "\"restartCount\":1,\"stopSignal\":\"SIGUSR1\",\"state\":{\"running\":{}},"
    "\"lastState\":{\"terminated\":{\"exitCode\":138,\"reason\":\"Error\"}}}]}}";

static struct krc_restart watched(const char *json, const char *container)
{
    struct krc_restart r;

    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"jobs";
    r.pod = (char *)"worker-0";
    (void)krc_restart_ident_set(&r.ident, "u-3", container, 1, 0, NULL);
    r.pod_json = (char *)json;
    r.pod_json_len = json != NULL ? strlen(json) : 0;
    return r;
}

/* The daemon's look before routing: the watch's pod diagnosed without events
 * or log; 1 only when a field of the pod proves the restart intended. */
static void test_intentional_candidate(void **state)
{
    struct krc_restart r = watched(stop_pod, "app");
    (void)state;

    assert_int_equal(krc_analyse_intentional_candidate(&r), 1);
    r = watched(pod_json, "a"); /* exit 1, no rule, no stop signal */
    assert_int_equal(krc_analyse_intentional_candidate(&r), 0);
    r = watched(stop_pod, "nosuch");
    assert_int_equal(krc_analyse_intentional_candidate(&r), 0);
    r = watched(NULL, "app"); /* no pod from the watch */
    assert_int_equal(krc_analyse_intentional_candidate(&r), 0);
    r = watched("{\"kind\":", "app");
    assert_int_equal(krc_analyse_intentional_candidate(&r), 0);
}

/* The look before routing agrees with the full diagnosis of the same Pod on
 * every container of the 1.35-shaped fixtures (restart rules, restart-all,
 * resize, a sidecar during deletion, a sandbox change), and a Pod that names
 * no intent field is not one. */
static void test_intentional_candidate_agrees(void **state)
{
    static const char *const files[] = {"restart-all", "resize-restart", "sidecar-deletion",
                                        "sandbox-changed", "pod-restart-fields"};
    size_t seen_intentional = 0;
    size_t seen_not = 0;
    (void)state;

    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char path[512];
        size_t len = 0;
        char *json;
        struct krc_report *rep = krc_report_new();

        snprintf(path, sizeof(path), "%s/k8s-1.35/%s.json", KRC_FIXTURES, files[f]);
        json = krc_test_read_file(path, &len);
        assert_non_null(json);
        assert_non_null(rep);
        assert_int_equal(krc_kube_parse_pod(json, len, rep, NULL), 0);
        for (size_t i = 0; i < rep->n_containers; i++) {
            struct krc_diagnosis dg;
            struct krc_restart r = watched(json, rep->containers[i].name);
            krc_diagnosis_init(&dg);
            assert_int_equal(krc_diagnose(rep, rep->containers[i].name, &dg, NULL), 0);
            if (krc_analyse_intentional_candidate(&r) != dg.intentional) {
                fail_msg("%s container %s: candidate %d, diagnosis intentional %d (%s)", files[f],
                         rep->containers[i].name, krc_analyse_intentional_candidate(&r),
                         dg.intentional, krc_cause_name(dg.cause));
            }
            /* krc_restarts_intentional_total has a series for its cause */
            assert_true(!dg.intentional || krc_cause_may_be_intentional(dg.cause));
            seen_intentional += dg.intentional != 0;
            seen_not += dg.intentional == 0;
            krc_diagnosis_cleanup(&dg);
        }
        krc_report_free(rep);
        free(json);
    }
    /* both answers were exercised */
    assert_true(seen_intentional >= 5);
    assert_true(seen_not >= 2);
}

static long candidate_sweep_run(void *ud, long n)
{
    struct krc_restart r = watched(stop_pod, "app");
    long attempts;
    int rc;
    (void)ud;

    krc_mem_fail_after(n);
    rc = krc_analyse_intentional_candidate(&r);
    attempts = krc_mem_fail_after(-1);
    /* a failed allocation is never taken for "intentional" unless it was */
    assert_true(rc == 1 || rc == 0 || rc == KRC_ENOMEM);
    if (attempts <= n) {
        assert_int_equal(rc, 1);
    }
    return attempts;
}

static void test_intentional_candidate_alloc_sweep(void **state)
{
    (void)state;
    assert_true(krc_test_alloc_sweep(candidate_sweep_run, NULL) > 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redacts_before_diagnosing),
        cmocka_unit_test(test_no_cut_secret_is_quoted),
        cmocka_unit_test(test_container_fallback_and_failures),
        cmocka_unit_test(test_pod_pick_and_collection),
        cmocka_unit_test(test_restart_collection),
        cmocka_unit_test(test_alloc_sweep),
        cmocka_unit_test(test_intentional_candidate),
        cmocka_unit_test(test_intentional_candidate_agrees),
        cmocka_unit_test(test_intentional_candidate_alloc_sweep),
    };
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
