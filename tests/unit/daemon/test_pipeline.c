/* The worker pipeline on its own: a fake collector (counts its calls, no
 * Kubernetes), a fake clock, a real sender whose delivery is not run (its
 * queue is observed) and a real store in a temporary file (a second SQLite
 * connection breaks it for the failure test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "krc/alert/sender.h"
#include "krc/config/config.h"
#include "krc/daemon/pipeline.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/queue.h"
#include "krc_test.h"

#define HOOK "http://127.0.0.1:1/services/T0/B0/pipeline"
#define NOW 1800000000

static char dir[] = "/tmp/krc-test-pipeline-XXXXXX";
static char db[256];

/* --- fakes ------------------------------------------------------------------ */

struct fakes {
    int collected;     /* calls of the collector */
    int log_files;     /* calls of the log-file fetch */
    int collect_fails; /* the collector returns KRC_ENOMEM */
    atomic_int lost;   /* the Lease; set by the collector when lose_on_collect */
    int lose_on_collect;
    int64_t mono;
    const char *log_text; /* the previous log the collector finds; NULL: a Go panic */
    const char *pod_json; /* the pod the collector finds when the watch gave none */
};

static struct fakes fk;

static int fake_collect(struct krc_kube_client *c, const struct krc_restart *r,
                        const struct krc_collector_options *o, struct krc_report *rep,
                        struct krc_error *err)
{
    static const char log[] = "starting\npanic: boom\n";
    int rc;
    (void)c;

    fk.collected++;
    assert_int_equal(o->tail_lines, 50); /* from the live configuration */
    if (fk.lose_on_collect) {
        atomic_store(&fk.lost, 1);
    }
    if (fk.collect_fails) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (r->pod_json == NULL && fk.pod_json != NULL) {
        struct krc_restart got = *r;
        got.pod_json = (char *)fk.pod_json;
        got.pod_json_len = strlen(fk.pod_json);
        rc = krc_collect_minimal(&got, rep, err);
    } else {
        rc = krc_collect_minimal(r, rep, err);
    }
    if (rc == 0 && fk.log_text != NULL) {
        rc = krc_report_set_log(rep, r->ident.container, fk.log_text, strlen(fk.log_text), 0, err);
    } else if (rc == 0) {
        rc = krc_report_set_log(rep, r->ident.container, log, sizeof(log) - 1, 0, err);
    }
    return rc;
}

static int fake_log_file(struct krc_kube_client *c, const struct krc_restart *r, char **ret,
                         size_t *ret_len, struct krc_error *err)
{
    (void)c;
    (void)r;
    fk.log_files++;
    *ret = krc_strdup("the whole log\n");
    if (*ret == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    *ret_len = strlen(*ret);
    return 0;
}

static int64_t fake_mono(void)
{
    fk.mono += 25;
    return fk.mono;
}

/* --- the pipeline's dependencies ------------------------------------------- */

struct env {
    struct krc_config cfg;
    _Atomic(const struct krc_config *) live;
    struct krc_sender_options no;
    struct krc_sender *sender;
    struct krc_store *store;
    struct krc_pipeline_status status;
    struct krc_pipeline_deps deps;
};

static void env_init(struct env *v, const struct krc_sender_options *no)
{
    memset(&fk, 0, sizeof(fk));
    memset(v, 0, sizeof(*v));
    krc_config_init(&v->cfg);
    atomic_init(&v->live, &v->cfg);
    krc_pipeline_status_init(&v->status);
    unlink(db);
    assert_int_equal(krc_store_open(db, 0, &v->store, NULL), 0);
    if (no != NULL) {
        v->no = *no;
        v->sender = krc_sender_new(&v->no, NULL);
        assert_non_null(v->sender);
    }
    v->deps.collect = fake_collect;
    v->deps.log_file = fake_log_file;
    v->deps.store = v->store;
    v->deps.config = &v->live;
    v->deps.sender = v->sender;
    v->deps.lost = &fk.lost;
    v->deps.status = &v->status;
    v->deps.mono_ms = fake_mono;
    krc_clock_set_fake_now(NOW);
}

static void env_cleanup(struct env *v)
{
    krc_clock_set_fake_now(0);
    krc_sender_free(v->sender);
    krc_store_close(v->store);
    krc_pipeline_status_cleanup(&v->status);
    krc_config_cleanup(&v->cfg);
}

static struct krc_sender_options webhook(void)
{
    return krc_test_sender_options(HOOK);
}

static struct krc_restart mk(const char *ns, const char *pod, int count)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)ns;
    r.pod = (char *)pod;
    (void)krc_restart_ident_set(&r.ident, pod, "app", 0, 0, NULL); /* one uid per pod name */
    r.ident.restart_count = count;
    r.previous_count = count - 1;
    r.has_exit_code = 1;
    r.exit_code = 2;
    r.reason = (char *)"Error";
    r.ident.finished_at = NOW - 5;
    r.detected_at = NOW;
    return r;
}

static int count_row(const struct krc_store_message *m, void *ud)
{
    (void)m;
    (*(int *)ud)++;
    return 0;
}

static int outbox_pending(struct env *v)
{
    int n = 0;
    assert_int_equal(krc_store_pending(v->store, count_row, &n, NULL), 0);
    return n;
}

/* The stored restart's decision ("" when not recorded) and its outbox rows. */
static void stored(struct env *v, const struct krc_restart *r, char *decision, size_t size,
                   size_t *ret_messages)
{
    const struct krc_restart_ident *id = &r->ident;
    struct krc_store_entry *ent = NULL;
    int64_t row = 0;

    decision[0] = '\0';
    *ret_messages = 0;
    if (krc_store_find_restart(v->store, id, &row, NULL) != 1) {
        return;
    }
    assert_int_equal(krc_store_get(v->store, row, &ent, NULL), 0);
    snprintf(decision, size, "%s", ent->row.decision);
    *ret_messages = ent->n_messages;
    krc_store_entry_free(ent);
}

/* --- tests ------------------------------------------------------------------ */

/* An alert: decided, collected, diagnosed, formatted, recorded with one
 * pending outbox row in the same transaction, queued once; detected again,
 * nothing is collected, recorded or queued a second time. */
static void test_alert_written_once(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 3);
    char decision[32];
    size_t messages;
    (void)state;

    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    assert_int_equal(fk.log_files, 0); /* a webhook takes no log file */
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "alert");
    assert_int_equal(messages, 1);
    assert_int_equal(outbox_pending(&v), 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    assert_int_equal(atomic_load(&v.status.store_errors), 0);
    assert_int_equal(atomic_load(&v.status.store_fault), 0);

    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    assert_int_equal(outbox_pending(&v), 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    env_cleanup(&v);
}

/* kubernetesEvents: the Event is one more destination of the restart, its
 * outbox row recorded in the restart's one transaction beside the alert's
 * (or alone without Slack); the mute per pod holds both back. */
static void test_kubernetes_event_beside_the_alert(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 3);
    struct krc_restart again = mk("shop", "web-1", 4);
    struct krc_restart b = mk("batch", "job-1", 1);
    char decision[32];
    size_t messages;
    (void)state;

    o.kubernetes_events = 1;
    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &r);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "alert");
    assert_int_equal(messages, 2);
    assert_int_equal(outbox_pending(&v), 2);
    assert_int_equal(krc_sender_pending(v.sender), 2);
    krc_pipeline_process(&v.deps, &again);
    stored(&v, &again, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "muted");
    assert_int_equal(messages, 0);
    assert_int_equal(outbox_pending(&v), 2);
    env_cleanup(&v);

    o.webhook_url = NULL;
    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &b);
    assert_int_equal(fk.collected, 1);
    stored(&v, &b, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "alert");
    assert_int_equal(messages, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    env_cleanup(&v);
}

/* The Web API takes the previous log as a file: fetched once, for an alert
 * whose collection found a previous log. */
static void test_web_api_log_file(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 3);
    (void)state;

    o.webhook_url = NULL;
    o.bot_token = "xoxb-test";
    o.api_url = "http://127.0.0.1:1/api";
    o.channel = "#ops";
    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    assert_int_equal(fk.log_files, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    env_cleanup(&v);
}

/* Muted, silenced and grouped restarts are recorded from what the watch saw:
 * no collection, no log file, no outbox row, nothing queued. */
static void test_held_back_costs_no_collection(void **state)
{
    struct krc_sender_options o = webhook();
    struct krc_silence s;
    struct env v;
    struct krc_restart first = mk("shop", "web-1", 1);
    struct krc_restart again = mk("shop", "web-1", 2);
    struct krc_restart maint = mk("maint", "job-1", 1);
    char decision[32];
    size_t messages;
    (void)state;

    memset(&s, 0, sizeof(s));
    assert_int_equal(
        krc_pattern_compile(&s.namespace, "maint", KRC_PATTERN_NAMESPACE, 0, "test", NULL), 0);
    o.silences = &s;
    o.n_silences = 1;
    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &first);
    assert_int_equal(fk.collected, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);

    krc_pipeline_process(&v.deps, &again); /* within muteSeconds of the pod's alert */
    krc_pipeline_process(&v.deps, &maint); /* silenced */
    assert_int_equal(fk.collected, 1);
    stored(&v, &again, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "muted");
    assert_int_equal(messages, 0);
    stored(&v, &maint, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "silenced");
    assert_int_equal(messages, 0);
    assert_int_equal(outbox_pending(&v), 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    env_cleanup(&v);

    /* a storm: past the threshold, further restarts are grouped */
    o = webhook();
    o.mute_seconds = 0;
    o.storm_threshold = 1;
    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &first);
    krc_pipeline_process(&v.deps, &maint);
    assert_int_equal(fk.collected, 1);
    stored(&v, &maint, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "grouped");
    assert_int_equal(messages, 0);
    env_cleanup(&v);
    krc_pattern_cleanup(&s.namespace);
}

/* The stored restart's cause, confidence and report JSON (caller frees). */
static char *stored_diagnosis(struct env *v, const struct krc_restart *r, char *cause,
                              char *confidence, size_t size)
{
    const struct krc_restart_ident *id = &r->ident;
    struct krc_store_entry *ent = NULL;
    int64_t row = 0;
    char *json;

    assert_int_equal(krc_store_find_restart(v->store, id, &row, NULL), 1);
    assert_int_equal(krc_store_get(v->store, row, &ent, NULL), 0);
    snprintf(cause, size, "%s", ent->row.cause);
    snprintf(confidence, size, "%s", ent->row.confidence != NULL ? ent->row.confidence : "");
    json = krc_strdup(ent->report_json != NULL ? ent->report_json : "");
    krc_store_entry_free(ent);
    return json;
}

/* A muted repeat (not collected) whose termination matches the container's
 * last diagnosed restart carries its cause, at most medium, with evidence
 * naming the restart and what was compared, and the log still listed as
 * unchecked; a repeat that ends otherwise keeps its own diagnosis. */
static void test_muted_repeat_carries_the_diagnosis(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart first = mk("ml", "ft-1", 1);
    struct krc_restart again = mk("ml", "ft-1", 2);
    struct krc_restart third = mk("ml", "ft-1", 3);
    struct krc_restart other = mk("ml", "ft-1", 4);
    struct krc_restart sigkill = mk("ml", "ft-1", 5);
    char cause[64], conf[64], want[160];
    struct krc_restart_ident id = first.ident;
    int64_t first_id = 0;
    char *json;
    (void)state;

    first.exit_code = again.exit_code = third.exit_code = 1;
    other.exit_code = 2; /* same reason, another exit code */
    sigkill.exit_code = 1;
    sigkill.reason = (char *)"OOMKilled"; /* same exit code, another reason */
    again.ident.finished_at = NOW - 4;
    third.ident.finished_at = NOW - 3;
    other.ident.finished_at = NOW - 2;
    sigkill.ident.finished_at = NOW - 1;
    env_init(&v, &o);
    fk.log_text = "step 12\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
                  "GiB\n";
    krc_pipeline_process(&v.deps, &first);
    json = stored_diagnosis(&v, &first, cause, conf, sizeof(cause));
    assert_string_equal(cause, "gpu_out_of_memory");
    assert_string_equal(conf, "high");
    krc_free(json);
    assert_int_equal(krc_store_find_restart(v.store, &id, &first_id, NULL), 1);
    snprintf(want, sizeof(want),
             "same exit code 1 and reason Error as restart #%lld (diagnosed gpu_out_of_memory "
             "with its log); this restart's log was not collected (muted repeat)",
             (long long)first_id);

    /* the repeats are muted, not collected; both refer to the alert, not to
     * the repeat before them */
    krc_pipeline_process(&v.deps, &again);
    krc_pipeline_process(&v.deps, &third);
    assert_int_equal(fk.collected, 1);
    json = stored_diagnosis(&v, &again, cause, conf, sizeof(cause));
    assert_string_equal(cause, "gpu_out_of_memory");
    assert_string_equal(conf, "medium");
    assert_non_null(strstr(json, want));
    assert_non_null(strstr(json, "no previous log was available"));
    assert_non_null(strstr(json, "a muted repeat of restart #"));
    krc_free(json);
    json = stored_diagnosis(&v, &third, cause, conf, sizeof(cause));
    assert_string_equal(cause, "gpu_out_of_memory");
    assert_non_null(strstr(json, want));
    krc_free(json);

    /* another exit code, another reason: today's diagnosis from the watch. The other exit
     * code's (app_error, as the first restart's own cheap look) still repeats the incident,
     * muted; the other reason's cheap cause (OOMKilled) is a new incident (issue 27): alerted
     * and collected as a first alert */
    krc_pipeline_process(&v.deps, &other);
    krc_pipeline_process(&v.deps, &sigkill);
    assert_int_equal(fk.collected, 2);
    json = stored_diagnosis(&v, &other, cause, conf, sizeof(cause));
    assert_string_equal(cause, "app_error");
    assert_string_equal(conf, "low");
    assert_null(strstr(json, "muted repeat"));
    krc_free(json);
    json = stored_diagnosis(&v, &sigkill, cause, conf, sizeof(cause));
    assert_string_not_equal(cause, "gpu_out_of_memory");
    assert_null(strstr(json, "muted repeat"));
    krc_free(json);
    assert_int_equal(atomic_load(&v.status.store_errors), 0);
    env_cleanup(&v);
}

/* No destination: collected, diagnosed and recorded, counted as not posted,
 * nothing queued. Without a sender at all, recorded the same way. */
static void test_no_destination(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    char decision[32];
    size_t messages;
    (void)state;

    o.webhook_url = NULL;
    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    assert_int_equal(atomic_load(&v.status.not_posted), 1);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "not_posted");
    assert_int_equal(messages, 0);
    assert_int_equal(krc_sender_pending(v.sender), 0);
    env_cleanup(&v);

    env_init(&v, NULL);
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "not_posted");
    env_cleanup(&v);
}

/* A pod whose container restarts in place on exit code 42 (KEP-5307), as
 * the watch delivers it after the container exited 42 (NOW - 5). */
static const char retry_pod[] =
    "{\"metadata\":{\"name\":\"retry-0\",\"namespace\":\"jobs\",\"uid\":\"retry-0\"},"
    "\"spec\":{\"restartPolicy\":\"Always\",\"containers\":[{\"name\":\"app\",\"image\":"
    "\"registry.example.com/app:1\",\"restartPolicy\":\"Never\",\"restartPolicyRules\":[{"
    "\"action\":\"Restart\",\"exitCodes\":{\"operator\":\"In\",\"values\":[42]}}]}]},"
    "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
    "\"restartCount\":1,\"ready\":true,\"image\":\"registry.example.com/app:1\","
    "\"state\":{\"running\":{\"startedAt\":\"2027-01-15T07:59:56Z\"}},"
    "\"lastState\":{\"terminated\":{\"exitCode\":42,\"reason\":\"Error\","
    "\"startedAt\":\"2027-01-15T07:50:00Z\",\"finishedAt\":\"2027-01-15T07:59:55Z\"}}}]}}";

static struct krc_restart retry(int count)
{
    struct krc_restart r = mk("jobs", "retry-0", count);
    r.exit_code = 42;
    r.pod_json = (char *)retry_pod;
    r.pod_json_len = sizeof(retry_pod) - 1;
    return r;
}

static int64_t summary_intentional(struct env *v)
{
    struct krc_store_summary *sum = NULL;
    int64_t n;

    assert_int_equal(krc_store_summarize(v->store, 0, NULL, 10, &sum, NULL), 0);
    n = sum->intentional;
    krc_store_summary_free(sum);
    return n;
}

/* An intentional restart (a restart rule holds its exit code) is analysed
 * before it is routed and never routed: recorded as "intentional" with its
 * cause, counted apart, no outbox row, nothing queued, and the pod's mute is
 * not marked: the pod's next crash is alerted, not muted. */
static void test_intentional_not_routed(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = retry(1);
    struct krc_restart crash = mk("jobs", "retry-0", 2);
    struct krc_metrics *m = NULL;
    struct krc_metrics_std std;
    char decision[32];
    size_t messages;
    double n = 0;
    (void)state;

    assert_int_equal(krc_metrics_new(&m, NULL), 0);
    assert_int_equal(krc_metrics_register_std(m, "test", &std, NULL), 0);
    env_init(&v, &o);
    v.deps.restarts_intentional = std.restarts_intentional;
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1); /* analysed fully */
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "intentional");
    assert_int_equal(messages, 0);
    assert_int_equal(outbox_pending(&v), 0);
    assert_int_equal(krc_sender_pending(v.sender), 0);
    assert_int_equal(atomic_load(&v.status.intentional), 1);
    assert_int_equal(atomic_load(&krc_sender_stats(v.sender)->muted), 0);
    assert_int_equal(summary_intentional(&v), 1);
    assert_int_equal(
        krc_metric_get(std.restarts_intentional, (const char *[]){"jobs", "restart_rule"}, &n), 0);
    assert_true(n == 1);

    krc_pipeline_process(&v.deps, &crash); /* exit 2: no rule holds */
    stored(&v, &crash, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "alert");
    assert_int_equal(messages, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    assert_int_equal(atomic_load(&v.status.intentional), 1);
    assert_int_equal(summary_intentional(&v), 1);
    env_cleanup(&v);
    krc_metrics_free(m);
}

/* pageIntentionalRestarts: routed and alerted like any other restart, still
 * recorded as intentional in the summary. */
static void test_intentional_paged_when_set(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = retry(1);
    char decision[32];
    size_t messages;
    (void)state;

    env_init(&v, &o);
    v.cfg.page_intentional_restarts = 1;
    krc_pipeline_process(&v.deps, &r);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "alert");
    assert_int_equal(messages, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    assert_int_equal(atomic_load(&v.status.intentional), 0);
    assert_int_equal(summary_intentional(&v), 1);
    env_cleanup(&v);
}

/* Without the watch's pod the candidate check cannot run: the restart is
 * routed, and render holds the intentional diagnosis back. */
static void test_intentional_held_back_by_render(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = retry(1);
    char decision[32];
    size_t messages;
    (void)state;

    r.pod_json = NULL;
    r.pod_json_len = 0;
    env_init(&v, &o);
    fk.pod_json = retry_pod; /* what the collection reads */
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "intentional");
    assert_int_equal(messages, 0);
    assert_int_equal(krc_sender_pending(v.sender), 0);
    assert_int_equal(atomic_load(&v.status.intentional), 1);
    env_cleanup(&v);
}

/* A failed collection still gives a diagnosis and an alert (from what the
 * watch saw). */
static void test_collection_failure_still_alerts(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    (void)state;

    env_init(&v, &o);
    fk.collect_fails = 1;
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    assert_int_equal(outbox_pending(&v), 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);
    env_cleanup(&v);
}

/* The history breaks: the error is counted, shown on /readyz (store_fault
 * with its message), and the alert is queued anyway, with no outbox row. */
static void test_store_failure_alerts_anyway(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    sqlite3 *other = NULL;
    char msg[256];
    (void)state;

    env_init(&v, &o);
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "ALTER TABLE restarts RENAME TO gone", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(other);

    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    /* the look-up and the record both failed */
    assert_int_equal(atomic_load(&v.status.store_errors), 2);
    assert_int_equal(atomic_load(&v.status.store_fault), 1);
    krc_pipeline_store_fault(&v.status, msg, sizeof(msg));
    assert_true(msg[0] != '\0');
    assert_int_equal(krc_sender_pending(v.sender), 1);
    env_cleanup(&v);

    /* a later successful record clears the fault */
    env_init(&v, &o);
    krc_pipeline_store_failed(&v.status, "disk full");
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(atomic_load(&v.status.store_fault), 0);
    assert_int_equal(atomic_load(&v.status.store_errors), 1);
    env_cleanup(&v);
}

/* A record that could not be written (the table is away: as a full disk,
 * every write fails) is kept in memory, without its notification, and
 * written with the next successful record; the fault clears then. */
static void test_failed_record_is_written_later(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r1 = mk("shop", "web-1", 1);
    struct krc_restart r2 = mk("shop", "web-2", 1);
    sqlite3 *other = NULL;
    char decision[32];
    size_t n_msgs = 0;
    (void)state;

    env_init(&v, &o);
    v.deps.deferred = krc_pipeline_deferred_new();
    assert_non_null(v.deps.deferred);
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "ALTER TABLE restarts RENAME TO gone", NULL, NULL, NULL),
                     SQLITE_OK);
    krc_pipeline_process(&v.deps, &r1);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 1);
    assert_int_equal(atomic_load(&v.status.store_fault), 1);
    assert_int_equal(krc_sender_pending(v.sender), 1); /* alerted anyway */
    assert_int_equal(sqlite3_exec(other, "ALTER TABLE gone RENAME TO restarts", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(other);

    krc_pipeline_process(&v.deps, &r2);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 0);
    assert_int_equal(atomic_load(&v.status.store_fault), 0);
    stored(&v, &r1, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, "alert");
    assert_int_equal(n_msgs, 0); /* posted directly: never re-sent from the outbox */
    stored(&v, &r2, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, "alert");
    assert_int_equal(n_msgs, 1);
    assert_int_equal(krc_sender_pending(v.sender), 2);
    krc_pipeline_deferred_free(v.deps.deferred);
    env_cleanup(&v);
}

/* The database as PostgreSQL behaves when it is down: every write answers
 * KRC_EIO (a lost connection) or KRC_ETIMEOUT, until it is back. */
static int db_down_code; /* 0: up */
static int db_down_calls;

static int down_record(struct krc_store *s, const struct krc_store_restart *rec,
                       const struct krc_store_outbox *msgs, size_t n_msgs, int64_t *ret_restart_id,
                       int64_t *ret_outbox_ids, struct krc_error *err)
{
    if (db_down_code != 0) {
        db_down_calls++;
        return krc_error_set(err, db_down_code,
                             "postgres://krc@db:5432/krc: server closed the connection "
                             "unexpectedly");
    }
    return krc_store_record_many(s, rec, msgs, n_msgs, ret_restart_id, ret_outbox_ids, err);
}

/* The database unreachable (KRC_EIO, then KRC_ETIMEOUT): each restart is
 * still alerted (its message queued for the sender, posted directly without
 * an outbox row), its record kept in memory and counted in `unwritten`
 * (krc_store_unwritten_records; /readyz unready); once the database answers
 * again, the worker's retry writes them all, oldest first. */
static void test_unreachable_database_keeps_records(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r1 = mk("shop", "web-1", 1);
    struct krc_restart r2 = mk("shop", "web-2", 1);
    struct krc_restart r3 = mk("shop", "web-3", 1);
    struct krc_queue q;
    atomic_size_t queued;
    char decision[32];
    char msg[256];
    size_t n_msgs = 0;
    (void)state;

    env_init(&v, &o);
    v.deps.deferred = krc_pipeline_deferred_new();
    assert_non_null(v.deps.deferred);
    v.deps.record = down_record;
    db_down_calls = 0;

    db_down_code = KRC_EIO;
    krc_pipeline_process(&v.deps, &r1);
    db_down_code = KRC_ETIMEOUT;
    krc_pipeline_process(&v.deps, &r2);
    assert_int_equal(fk.collected, 2);
    assert_int_equal(krc_sender_pending(v.sender), 2); /* both alerted */
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 2);
    assert_int_equal(atomic_load(&v.status.unwritten), 2);
    assert_int_equal(atomic_load(&v.status.store_fault), 1);
    assert_int_equal(atomic_load(&v.status.store_errors), 2);
    krc_pipeline_store_fault(&v.status, msg, sizeof(msg));
    assert_non_null(strstr(msg, "server closed the connection"));
    assert_int_equal(outbox_pending(&v), 0);
    stored(&v, &r1, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, ""); /* not recorded yet */

    /* still down: a third restart, and the worker's retry (here its last
     * try at the queue's close) is refused too; nothing is lost */
    db_down_code = KRC_EIO;
    krc_pipeline_process(&v.deps, &r3);
    assert_int_equal(krc_queue_init(&q, 4), 0);
    atomic_init(&queued, 0);
    krc_queue_close(&q);
    krc_pipeline_run(&v.deps, &q, &queued, 1000);
    krc_queue_cleanup(&q, NULL);
    assert_int_equal(db_down_calls, 4); /* three records, one retry (it stops at the first) */
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 3);
    assert_int_equal(atomic_load(&v.status.unwritten), 3);
    assert_int_equal(krc_sender_pending(v.sender), 3);

    /* back: the retry of the worker's loop (here its last try at the
     * queue's close) writes the three, oldest first, without their
     * notifications (they were posted directly) */
    db_down_code = 0;
    assert_int_equal(krc_queue_init(&q, 4), 0);
    krc_queue_close(&q);
    krc_pipeline_run(&v.deps, &q, &queued, 1000);
    krc_queue_cleanup(&q, NULL);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 0);
    assert_int_equal(atomic_load(&v.status.unwritten), 0);
    assert_int_equal(atomic_load(&v.status.store_fault), 0);
    stored(&v, &r1, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, "alert");
    assert_int_equal(n_msgs, 0);
    stored(&v, &r2, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, "alert");
    stored(&v, &r3, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, "alert");
    assert_int_equal(outbox_pending(&v), 0);
    assert_int_equal(db_down_calls, 4);
    krc_pipeline_deferred_free(v.deps.deferred);
    env_cleanup(&v);
}

/* The handle of a new sender's first incident (alert/incident.h: handles count from 1). */
#define FIRST_INCIDENT 1

/* The stored incident of r's record (0: none) and its cause. */
static int64_t stored_incident(struct env *v, const struct krc_restart *r, enum krc_cause *cause)
{
    struct krc_store_entry *ent = NULL;
    struct krc_store_incident_detail *det = NULL;
    int64_t row = 0;
    int64_t id;

    assert_int_equal(krc_store_find_restart(v->store, &r->ident, &row, NULL), 1);
    assert_int_equal(krc_store_get(v->store, row, &ent, NULL), 0);
    id = ent->row.incident_id;
    krc_store_entry_free(ent);
    if (id > 0 && cause != NULL) {
        assert_int_equal(krc_store_incident_get(v->store, id, &det, NULL), 0);
        assert_int_equal(krc_cause_parse(det->inc.cause, cause), 0);
        krc_store_incident_detail_free(det);
    }
    return id;
}

/* Records written late (the database was down) tell the sender their incident's id: the
 * incident the first alert opened in memory is the stored one, so its end ends the stored
 * one (test_incident_end.c has the end; test_incidents.py the whole daemon). */
static void test_deferred_records_tell_their_incident(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r1 = mk("shop", "web-1", 1);
    struct krc_restart r2 = mk("shop", "web-1", 2);
    struct krc_queue q;
    atomic_size_t queued;
    int64_t id;
    (void)state;

    env_init(&v, &o);
    v.deps.deferred = krc_pipeline_deferred_new();
    assert_non_null(v.deps.deferred);
    v.deps.record = down_record;
    db_down_code = KRC_EIO;
    krc_pipeline_process(&v.deps, &r1); /* the first alert, posted directly */
    krc_pipeline_process(&v.deps, &r2); /* a muted repeat */
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 2);
    assert_int_equal(krc_sender_incidents_open(v.sender), 1);
    assert_int_equal(krc_route_incident_id(v.sender, FIRST_INCIDENT), 0);

    db_down_code = 0;
    atomic_init(&queued, 0);
    assert_int_equal(krc_queue_init(&q, 4), 0);
    krc_queue_close(&q);
    krc_pipeline_run(&v.deps, &q, &queued, 1000);
    krc_queue_cleanup(&q, NULL);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 0);
    id = stored_incident(&v, &r1, NULL);
    assert_true(id > 0);
    assert_int_equal(stored_incident(&v, &r2, NULL), id);
    assert_int_equal(krc_route_incident_id(v.sender, FIRST_INCIDENT), id);
    krc_pipeline_deferred_free(v.deps.deferred);
    env_cleanup(&v);
}

/* The record seam: another worker or leader records the restart first (into an incident, or
 * into none when exists_in_incident is 0), so this worker's record finds it recorded
 * (KRC_STORE_EXISTS). */
static int exists_in_incident;
static int64_t exists_incident_id;

static int exists_record(struct krc_store *s, const struct krc_store_restart *rec,
                         const struct krc_store_outbox *msgs, size_t n_msgs,
                         int64_t *ret_restart_id, int64_t *ret_outbox_ids, struct krc_error *err)
{
    struct krc_store_restart other = *rec;
    struct krc_store_incident_ref ref;
    int64_t id = 0;

    memset(&ref, 0, sizeof(ref));
    ref.thread_key = "shop/web-1";
    other.incident = exists_in_incident ? &ref : NULL;
    assert_int_equal(krc_store_record_many(s, &other, NULL, 0, &id, NULL, NULL), 0);
    exists_incident_id = ref.ret_id;
    return krc_store_record_many(s, rec, msgs, n_msgs, ret_restart_id, ret_outbox_ids, err);
}

/* A first restart that another worker or leader recorded first: not alerted again; its
 * incident takes the stored incident's id (so that it ends, and ends the stored one), or,
 * when the stored restart is in no incident, the incident it opened is forgotten. */
static void test_first_restart_recorded_already(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    (void)state;

    env_init(&v, &o);
    v.deps.record = exists_record;
    exists_in_incident = 1;
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(krc_sender_pending(v.sender), 0);
    assert_int_equal(outbox_pending(&v), 0);
    assert_true(exists_incident_id > 0);
    assert_int_equal(krc_sender_incidents_open(v.sender), 1);
    assert_int_equal(krc_route_incident_id(v.sender, FIRST_INCIDENT), exists_incident_id);
    env_cleanup(&v);

    env_init(&v, &o);
    v.deps.record = exists_record;
    exists_in_incident = 0;
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(krc_sender_pending(v.sender), 0);
    assert_int_equal(exists_incident_id, 0);
    assert_int_equal(krc_sender_incidents_open(v.sender), 0);
    env_cleanup(&v);
}

/* A restart joins a stored incident that others counted into too (another leader, another
 * worker): the incident's count is the store's from then on, so the paced messages and the
 * resolved message count every restart. */
static void test_joined_incident_takes_the_stored_count(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r1 = mk("shop", "web-1", 1);
    struct krc_restart r2 = mk("shop", "web-1", 5);
    struct krc_restart r3 = mk("shop", "web-1", 6);
    struct krc_route_incident ri;
    struct krc_route_plan plan;
    enum krc_cause cause = KRC_CAUSE_UNKNOWN;
    char reply[1024], update[1024];
    int64_t id;
    (void)state;

    env_init(&v, &o);
    krc_pipeline_process(&v.deps, &r1);
    id = stored_incident(&v, &r1, &cause);
    assert_true(id > 0);
    /* another leader records restarts 2 to 4 into it */
    for (int count = 2; count <= 4; count++) {
        struct krc_restart other = mk("shop", "web-1", count);
        struct krc_store_restart rec;
        struct krc_store_incident_ref ref;
        memset(&rec, 0, sizeof(rec));
        rec.pod_uid = other.ident.uid;
        rec.container = other.ident.container;
        rec.restart_count = count;
        rec.namespace = "shop";
        rec.pod = "web-1";
        rec.cause = cause;
        rec.finished_at = other.ident.finished_at;
        rec.detected_at = NOW;
        rec.decision = "muted";
        memset(&ref, 0, sizeof(ref));
        ref.id = id;
        rec.incident = &ref;
        assert_int_equal(krc_store_record_many(v.store, &rec, NULL, 0, NULL, NULL, NULL), 0);
        assert_int_equal(ref.ret_id, id);
    }
    krc_pipeline_process(&v.deps, &r2); /* a repeat here: the incident's fifth restart */
    assert_int_equal(stored_incident(&v, &r2, NULL), id);
    /* the next one is counted as the sixth */
    ri.workload_kind = NULL;
    ri.workload_name = NULL;
    ri.cause = cause;
    assert_int_equal(krc_route_restart_in(v.sender, &r3, &ri, &plan), KRC_POLICY_MUTED);
    assert_int_equal(plan.incident, FIRST_INCIDENT);
    krc_route_incident_headlines(v.sender, &plan, &r3, NULL, NULL, reply, update, sizeof(reply));
    assert_non_null(strstr(reply, ", 6 since "));
    env_cleanup(&v);
}

/* Shutdown (the queue closed): the worker tries the deferred records once
 * more, so a database that came back within the last retry interval still
 * gets them; one it still refuses keeps them (logged as not recorded). */
static void test_deferred_last_try_at_shutdown(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r1 = mk("shop", "web-1", 1);
    struct krc_queue q;
    atomic_size_t queued;
    sqlite3 *other = NULL;
    char decision[32];
    size_t n_msgs = 0;
    (void)state;

    env_init(&v, &o);
    v.deps.deferred = krc_pipeline_deferred_new();
    assert_non_null(v.deps.deferred);
    atomic_init(&queued, 0);
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "ALTER TABLE restarts RENAME TO gone", NULL, NULL, NULL),
                     SQLITE_OK);
    krc_pipeline_process(&v.deps, &r1);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 1);

    /* still refused: kept to the end */
    assert_int_equal(krc_queue_init(&q, 4), 0);
    krc_queue_close(&q);
    krc_pipeline_run(&v.deps, &q, &queued, 1000);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 1);
    krc_queue_cleanup(&q, NULL);

    /* accepted again: written by the last try */
    assert_int_equal(sqlite3_exec(other, "ALTER TABLE gone RENAME TO restarts", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(other);
    assert_int_equal(krc_queue_init(&q, 4), 0);
    krc_queue_close(&q);
    krc_pipeline_run(&v.deps, &q, &queued, 1000);
    assert_int_equal(krc_pipeline_deferred_count(v.deps.deferred), 0);
    assert_int_equal(atomic_load(&v.status.store_fault), 0);
    stored(&v, &r1, decision, sizeof(decision), &n_msgs);
    assert_string_equal(decision, "alert");
    krc_queue_cleanup(&q, NULL);
    krc_pipeline_deferred_free(v.deps.deferred);
    env_cleanup(&v);
}

/* Leadership lost: before the restart, it is not even collected; during its
 * collection, it is neither recorded nor queued (the next leader reports
 * it). */
static void test_left_to_next_leader(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    char decision[32];
    size_t messages;
    (void)state;

    env_init(&v, &o);
    atomic_store(&fk.lost, 1);
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 0);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "");
    assert_int_equal(krc_sender_pending(v.sender), 0);

    atomic_store(&fk.lost, 0);
    fk.lose_on_collect = 1;
    krc_pipeline_process(&v.deps, &r);
    assert_int_equal(fk.collected, 1);
    stored(&v, &r, decision, sizeof(decision), &messages);
    assert_string_equal(decision, "");
    assert_int_equal(outbox_pending(&v), 0);
    assert_int_equal(krc_sender_pending(v.sender), 0);
    env_cleanup(&v);
}

/* Allocation failures: the Nth allocation of one restart's pipeline and
 * every one after it fail, for every N until a run needs no more; each run
 * must clean up (ASan/LeakSanitizer) and queue at most one message. */
static long sweep_run(void *ud, long n)
{
    const struct krc_sender_options *o = ud;
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    long attempts;

    env_init(&v, o);
    fk.collected = 0;
    krc_mem_fail_after(n);
    krc_pipeline_process(&v.deps, &r);
    attempts = krc_mem_fail_after(-1);
    assert_true(krc_sender_pending(v.sender) <= 1);
    assert_true(outbox_pending(&v) <= 1);
    env_cleanup(&v);
    return attempts;
}

static void test_alloc_sweep(void **state)
{
    struct krc_sender_options o = webhook();
    (void)state;
    assert_true(krc_test_alloc_sweep(sweep_run, &o) > 10);
}

/* The same with every history write failing: the record kept for later
 * (deferred_push, its copies) fails cleanly at each allocation too, and at
 * most one is kept; the last run, where no allocation failed, keeps it. */
struct sweep_deferred {
    struct krc_sender_options o;
    size_t kept;
};

static long sweep_deferred_run(void *ud, long n)
{
    struct sweep_deferred *sw = ud;
    struct env v;
    struct krc_restart r = mk("shop", "web-1", 1);
    sqlite3 *other = NULL;
    long attempts;

    env_init(&v, &sw->o);
    v.deps.deferred = krc_pipeline_deferred_new();
    assert_non_null(v.deps.deferred);
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "ALTER TABLE restarts RENAME TO gone", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(other);
    krc_mem_fail_after(n);
    krc_pipeline_process(&v.deps, &r);
    attempts = krc_mem_fail_after(-1);
    sw->kept = krc_pipeline_deferred_count(v.deps.deferred);
    assert_true(sw->kept <= 1);
    assert_true(krc_sender_pending(v.sender) <= 1);
    krc_pipeline_deferred_free(v.deps.deferred);
    env_cleanup(&v);
    return attempts;
}

static void test_alloc_sweep_deferred(void **state)
{
    struct sweep_deferred sw = {webhook(), 0};
    (void)state;
    assert_true(krc_test_alloc_sweep(sweep_deferred_run, &sw) > 10);
    assert_int_equal(sw.kept, 1);
}

static int setup(void **state)
{
    (void)state;
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    snprintf(db, sizeof(db), "%s/krc.db", dir);
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_remove_db(db);
    rmdir(dir);
    return 0;
}

/* A GPU pod whose device the kubelet reports `health` (allocatedResourcesStatus). */
static void gpu_pod(char *out, size_t outsz, const char *health)
{
    snprintf(out, outsz,
             "{\"metadata\":{\"name\":\"gpu-0\",\"namespace\":\"ml\",\"uid\":\"gpu-0\","
             "\"resourceVersion\":\"9\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":"
             "\"app\",\"image\":\"t\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},"
             "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
             "\"restartCount\":1,\"ready\":false,\"image\":\"t\",\"state\":{\"waiting\":"
             "{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{\"terminated\":{\"exitCode\":2,"
             "\"reason\":\"Error\"}},\"allocatedResourcesStatus\":[{\"name\":\"nvidia.com/gpu\","
             "\"resources\":[{\"resourceID\":\"GPU-1\",\"health\":\"%s\",\"message\":"
             "\"XID 79\"}]}]}]}}",
             health);
}

static void stored_cause(struct env *v, const struct krc_restart *r, char *cause, size_t size,
                         size_t *ret_messages)
{
    struct krc_store_entry *ent = NULL;
    int64_t row = 0;

    assert_int_equal(krc_store_find_restart(v->store, &r->ident, &row, NULL), 1);
    assert_int_equal(krc_store_get(v->store, row, &ent, NULL), 0);
    snprintf(cause, size, "%s", ent->row.cause);
    *ret_messages = ent->n_messages;
    krc_store_entry_free(ent);
}

/* A device reported Unhealthy after the restart (krc_restart.amend): diagnosed
 * again, the record amended and one amendment queued; an amendment of a
 * restart already diagnosed gpu_device_unhealthy, or whose new diagnosis is
 * not, changes nothing and sends nothing. */
static void test_amend_device_unhealthy(void **state)
{
    struct krc_sender_options o = webhook();
    struct env v;
    struct krc_restart r = mk("ml", "gpu-0", 1);
    struct krc_restart late = r;
    char healthy[2048];
    char unhealthy[2048];
    char cause[64];
    size_t messages;
    (void)state;

    gpu_pod(healthy, sizeof(healthy), "Healthy");
    gpu_pod(unhealthy, sizeof(unhealthy), "Unhealthy");
    env_init(&v, &o);
    r.pod_json = healthy;
    r.pod_json_len = strlen(healthy);
    krc_pipeline_process(&v.deps, &r);
    stored_cause(&v, &r, cause, sizeof(cause), &messages);
    assert_string_not_equal(cause, "gpu_device_unhealthy");
    assert_int_equal(messages, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);

    /* the status still says Healthy: not amended */
    late.amend = 1;
    late.amend_after_ms = 20000;
    late.pod_json = healthy;
    late.pod_json_len = strlen(healthy);
    krc_pipeline_process(&v.deps, &late);
    stored_cause(&v, &r, cause, sizeof(cause), &messages);
    assert_string_not_equal(cause, "gpu_device_unhealthy");
    assert_int_equal(messages, 1);
    assert_int_equal(krc_sender_pending(v.sender), 1);

    /* Unhealthy: amended, one more message tied to the same restart */
    late.pod_json = unhealthy;
    late.pod_json_len = strlen(unhealthy);
    krc_pipeline_process(&v.deps, &late);
    stored_cause(&v, &r, cause, sizeof(cause), &messages);
    assert_string_equal(cause, "gpu_device_unhealthy");
    assert_int_equal(messages, 2);
    assert_int_equal(krc_sender_pending(v.sender), 2);
    assert_int_equal(outbox_pending(&v), 2);

    /* already gpu_device_unhealthy: nothing more */
    krc_pipeline_process(&v.deps, &late);
    stored_cause(&v, &r, cause, sizeof(cause), &messages);
    assert_int_equal(messages, 2);
    assert_int_equal(krc_sender_pending(v.sender), 2);
    env_cleanup(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alert_written_once),
        cmocka_unit_test(test_kubernetes_event_beside_the_alert),
        cmocka_unit_test(test_web_api_log_file),
        cmocka_unit_test(test_held_back_costs_no_collection),
        cmocka_unit_test(test_muted_repeat_carries_the_diagnosis),
        cmocka_unit_test(test_no_destination),
        cmocka_unit_test(test_intentional_not_routed),
        cmocka_unit_test(test_intentional_paged_when_set),
        cmocka_unit_test(test_intentional_held_back_by_render),
        cmocka_unit_test(test_collection_failure_still_alerts),
        cmocka_unit_test(test_store_failure_alerts_anyway),
        cmocka_unit_test(test_failed_record_is_written_later),
        cmocka_unit_test(test_unreachable_database_keeps_records),
        cmocka_unit_test(test_deferred_last_try_at_shutdown),
        cmocka_unit_test(test_deferred_records_tell_their_incident),
        cmocka_unit_test(test_first_restart_recorded_already),
        cmocka_unit_test(test_joined_incident_takes_the_stored_count),
        cmocka_unit_test(test_left_to_next_leader),
        cmocka_unit_test(test_alloc_sweep),
        cmocka_unit_test(test_alloc_sweep_deferred),
        cmocka_unit_test(test_amend_device_unhealthy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
