/* The collector against a small API server on 127.0.0.1 (serve/http_server
 * with one route per resource, each with a scripted status and body): what
 * it requests, what goes into the report, the notes for what it could not
 * get, the log file (krc_collect_log_file), and an allocation-failure sweep
 * over one collection. */
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/collect/collector.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/kube_parse.h"
#include "krc/serve/http_server.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "api_fixture.h"
#include "krc_test.h"

#define POD_PATH "/api/v1/namespaces/shop/pods/web-1"
#define LOG_PATH POD_PATH "/log"
#define EVENTS_PATH "/api/v1/namespaces/shop/events"
#define NODE_PATH "/api/v1/nodes/node-a"
#define NODE_EVENTS_PATH "/api/v1/namespaces/default/events"
#define CLAIMS_PATH "/apis/resource.k8s.io/v1/namespaces/shop/resourceclaims/"
#define CLAIM_A_PATH CLAIMS_PATH "web-1-gpu-a1"
#define CLAIM_B_PATH CLAIMS_PATH "web-1-nic-b2"

static const char pod_json[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\",\"uid\":\"u-1\"},"
    "\"spec\":{\"nodeName\":\"node-a\",\"containers\":[{\"name\":\"app\",\"image\":\"shop:1\"}]},"
    "\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"image\":\"shop:1\",\"restartCount\":3,"
    "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]}}";
static const char events_json[] =
    "{\"kind\":\"EventList\",\"items\":[{\"type\":\"Warning\",\"reason\":\"BackOff\","
    "\"message\":\"Back-off restarting failed container\",\"count\":4,"
    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"web-1\",\"uid\":\"u-1\"}}]}";
static const char node_json[] =
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\"},"
    "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";
static const char empty_list[] = "{\"kind\":\"EventList\",\"items\":[]}";
/* The pod with DRA claims (status.resourceClaimStatuses): two ResourceClaims,
 * one claim with no ResourceClaim (resourceClaimName null), one whose name
 * is not an object name. */
static const char pod_claims_json[] =
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\",\"uid\":\"u-1\"},"
    "\"spec\":{\"nodeName\":\"node-a\",\"containers\":[{\"name\":\"app\",\"image\":\"shop:1\"}]},"
    "\"status\":{\"resourceClaimStatuses\":[{\"name\":\"gpu\",\"resourceClaimName\":"
    "\"web-1-gpu-a1\"},{\"name\":\"nic\",\"resourceClaimName\":\"web-1-nic-b2\"},{\"name\":"
    "\"none\",\"resourceClaimName\":null},{\"name\":\"bad\",\"resourceClaimName\":\"../x\"}],"
    "\"containerStatuses\":[{\"name\":\"app\",\"image\":\"shop:1\",\"restartCount\":3,"
    "\"lastState\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]}}";
static const char claim_a_json[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":"
    "\"web-1-gpu-a1\",\"namespace\":\"shop\"},\"status\":{\"allocation\":{\"devices\":{"
    "\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-a\","
    "\"device\":\"gpu-0\"}]}},\"devices\":[{\"driver\":\"gpu.example.com\",\"pool\":"
    "\"node-a\",\"device\":\"gpu-0\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
    "\"False\",\"reason\":\"DeviceLost\"}]}]}}";

/* One scripted resource: its answer and the query of the last request. */
struct resource {
    const char *path;
    int status;
    const char *body; /* NULL: a Status object for `status` */
    size_t body_len;  /* 0: strlen(body) */
    int hits;
    char previous[16];
    char tail_lines[32];
    char limit_bytes[32];
    char timestamps[16];
};

enum { R_POD, R_LOG, R_EVENTS, R_NODE, R_NODE_EVENTS, R_CLAIM_A, R_CLAIM_B, R_COUNT };

static struct resource res[R_COUNT] = {
    {.path = POD_PATH},         {.path = LOG_PATH},     {.path = EVENTS_PATH},  {.path = NODE_PATH},
    {.path = NODE_EVENTS_PATH}, {.path = CLAIM_A_PATH}, {.path = CLAIM_B_PATH},
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct krc_test_api api;

static int handle(const struct krc_http_server_request *req, struct krc_http_server_response *resp,
                  void *userdata)
{
    struct resource *r = userdata;
    int rc;

    pthread_mutex_lock(&lock);
    r->hits++;
    krc_test_api_query(req, "previous", "-", r->previous, sizeof(r->previous));
    krc_test_api_query(req, "tailLines", "-", r->tail_lines, sizeof(r->tail_lines));
    krc_test_api_query(req, "limitBytes", "-", r->limit_bytes, sizeof(r->limit_bytes));
    krc_test_api_query(req, "timestamps", "-", r->timestamps, sizeof(r->timestamps));
    resp->status = r->status;
    if (r->body != NULL) {
        rc = krc_buf_append(&resp->body, r->body, r->body_len ? r->body_len : strlen(r->body));
    } else {
        snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
        rc = krc_buf_printf(&resp->body,
                            "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"scripted "
                            "%d\",\"code\":%d}",
                            r->status, r->status);
    }
    pthread_mutex_unlock(&lock);
    return rc < 0 ? KRC_ENOMEM : 0;
}

/* What resource i saw, read under the lock (the handlers run on the
 * server's threads). */
static struct resource snap(int i)
{
    struct resource copy;
    pthread_mutex_lock(&lock);
    copy = res[i];
    pthread_mutex_unlock(&lock);
    return copy;
}

/* Every resource answers 200 with its document; the log with `log`. */
static void script(const char *log)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < R_COUNT; i++) {
        res[i].status = 200;
        res[i].hits = 0;
        res[i].body_len = 0;
    }
    res[R_POD].body = pod_json;
    res[R_LOG].body = log;
    res[R_EVENTS].body = events_json;
    res[R_NODE].body = node_json;
    res[R_NODE_EVENTS].body = empty_list;
    res[R_CLAIM_A].body = claim_a_json;
    res[R_CLAIM_B].body = NULL;
    res[R_CLAIM_B].status = 403;
    pthread_mutex_unlock(&lock);
}

/* Resource i answers `status` with `body` (NULL: a Status object). */
static void answer(int i, int status, const char *body, size_t body_len)
{
    pthread_mutex_lock(&lock);
    res[i].status = status;
    res[i].body = body;
    res[i].body_len = body_len;
    pthread_mutex_unlock(&lock);
}

static struct krc_restart restart(void)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)"web-1";
    (void)krc_restart_ident_set(&r.ident, "u-1", "app", 0, 0, NULL);
    r.node = (char *)"node-a";
    r.ident.restart_count = 3;
    r.has_exit_code = 1;
    r.exit_code = 1;
    r.reason = (char *)"Error";
    return r;
}

static struct krc_kube_client *client(void)
{
    return krc_test_api_client(&api, 5000);
}

static void test_collects_everything(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_restart r = restart();
    struct krc_report *rep = krc_report_new();
    (void)state;

    script("2026-01-01T00:00:00Z starting\n2026-01-01T00:00:01Z panic: boom\n");
    krc_collector_options_defaults(&o);
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    /* no pod copy from the watch: GET */
    assert_int_equal(snap(R_POD).hits, 1);
    assert_int_equal(snap(R_EVENTS).hits, 1);
    assert_int_equal(snap(R_NODE).hits, 1);
    assert_int_equal(snap(R_NODE_EVENTS).hits, 1);
    assert_int_equal(snap(R_LOG).hits, 1);
    assert_string_equal(snap(R_LOG).previous, "true");
    assert_string_equal(snap(R_LOG).tail_lines, "50");
    assert_string_equal(snap(R_LOG).limit_bytes, "4194305"); /* transfer limit + 1 */
    assert_string_equal(snap(R_LOG).timestamps, "true");
    assert_string_equal(rep->name, "web-1");
    assert_string_equal(rep->node_name, "node-a");
    assert_int_equal(rep->n_events, 1);
    assert_true(rep->node.present);
    assert_non_null(rep->log);
    assert_non_null(memmem(rep->log, rep->log_len, "panic: boom", 11));
    assert_string_equal(rep->log_container, "app");
    assert_int_equal(rep->n_notes, 0);
    krc_report_free(rep);

    /* with the pod from the watch, no GET */
    r.pod_json = (char *)pod_json;
    r.pod_json_len = strlen(pod_json);
    rep = krc_report_new();
    script("x\n");
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_int_equal(snap(R_POD).hits, 0);
    assert_int_equal(snap(R_LOG).hits, 1);
    krc_report_free(rep);
    krc_kube_client_free(c);
}

static void test_failures_become_notes(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_restart r = restart();
    struct krc_report *rep = krc_report_new();
    (void)state;

    script("x\n");
    answer(R_EVENTS, 403, NULL, 0);
    answer(R_NODE, 404, NULL, 0);
    answer(R_LOG, 400, NULL, 0);
    krc_collector_options_defaults(&o);
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_true(krc_test_has_note(rep, "pod events unavailable"));
    assert_true(krc_test_has_note(rep, "node node-a no longer exists"));
    assert_true(krc_test_has_note(rep, "no previous log: "));
    assert_null(rep->log);
    krc_report_free(rep);

    /* the pod is gone: no log request, the identity from the restart */
    rep = krc_report_new();
    script("x\n");
    answer(R_POD, 404, NULL, 0);
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_int_equal(snap(R_LOG).hits, 0);
    assert_string_equal(rep->name, "web-1");
    assert_true(krc_test_has_note(rep, "the pod was deleted before it could be collected"));
    assert_true(krc_test_has_note(rep, "no previous log: the pod no longer exists"));
    krc_report_free(rep);
    krc_kube_client_free(c);
}

/* The pod's ResourceClaims (status.resourceClaimStatuses): read in the same
 * parallel round; a 403, a 404, a body over the cap or a bad name are notes
 * naming the claim; a claim without a ResourceClaim is not asked for. */
static void test_claims(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_restart r = restart();
    struct krc_report *rep = krc_report_new();
    const struct krc_report_claim_status *cs;
    static char big[1024 * 1024 + 64];
    (void)state;

    r.pod_json = (char *)pod_claims_json;
    r.pod_json_len = strlen(pod_claims_json);
    script("x\n");
    krc_collector_options_defaults(&o);
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_int_equal(snap(R_CLAIM_A).hits, 1);
    assert_int_equal(snap(R_CLAIM_B).hits, 1);
    assert_int_equal(rep->n_claim_statuses, 4);
    cs = &rep->claim_statuses[0];
    assert_true(cs->fetched);
    assert_true(cs->allocated);
    assert_int_equal(cs->n_devices, 1);
    assert_string_equal(cs->devices[0].driver, "gpu.example.com");
    assert_string_equal(cs->devices[0].pool, "node-a");
    assert_string_equal(cs->devices[0].device, "gpu-0");
    assert_string_equal(cs->devices[0].request, "gpu");
    assert_int_equal(cs->devices[0].n_conditions, 1);
    assert_string_equal(cs->devices[0].conditions[0].reason, "DeviceLost");
    assert_false(rep->claim_statuses[1].fetched);
    assert_false(rep->claim_statuses[2].fetched);
    assert_false(rep->claim_statuses[3].fetched);
    assert_true(krc_test_has_note(rep,
                                  "ResourceClaim web-1-nic-b2 not readable (403: krc needs get on "
                                  "resourceclaims.resource.k8s.io): scripted 403"));
    assert_true(krc_test_has_note(rep, "ResourceClaim \"../x\" not read: the name "));
    assert_int_equal(rep->n_notes, 2);
    /* the rest of the collection as without claims */
    assert_int_equal(rep->n_events, 1);
    assert_true(rep->node.present);
    assert_non_null(rep->log);
    krc_report_free(rep);

    /* a claim gone (404), a claim over the size cap, a claim not JSON */
    rep = krc_report_new();
    script("x\n");
    answer(R_CLAIM_B, 404, NULL, 0);
    memset(big, ' ', sizeof(big));
    answer(R_CLAIM_A, 200, big, sizeof(big));
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_true(krc_test_has_note(rep, "ResourceClaim web-1-nic-b2 no longer exists"));
    assert_true(
        krc_test_has_note(rep, "ResourceClaim web-1-gpu-a1 not read: larger than 1048576 bytes"));
    assert_false(rep->claim_statuses[0].fetched);
    krc_report_free(rep);
    rep = krc_report_new();
    script("x\n");
    answer(R_CLAIM_A, 200, "{\"kind\":\"Pod\"}", 0);
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_true(
        krc_test_has_note(rep, "ResourceClaim web-1-gpu-a1 unreadable: not a ResourceClaim"));
    krc_report_free(rep);
    krc_kube_client_free(c);
}

/* At most 4 ResourceClaims are read; the rest are counted in a note. */
static void test_claims_capped(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_restart r = restart();
    struct krc_report *rep = krc_report_new();
    char pod[4096];
    int n;
    (void)state;

    n = snprintf(pod, sizeof(pod),
                 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\","
                 "\"uid\":\"u-1\"},\"spec\":{\"nodeName\":\"node-a\",\"containers\":[{\"name\":"
                 "\"app\"}]},\"status\":{\"resourceClaimStatuses\":[");
    for (int i = 0; i < 7; i++) {
        n += snprintf(pod + n, sizeof(pod) - (size_t)n,
                      "%s{\"name\":\"c%d\",\"resourceClaimName\":\"%s\"}", i ? "," : "", i,
                      i == 0   ? "web-1-gpu-a1"
                      : i == 6 ? "web-1-nic-b2"
                               : "web-1-other");
    }
    snprintf(pod + n, sizeof(pod) - (size_t)n, "]}}");
    r.pod_json = pod;
    r.pod_json_len = strlen(pod);
    script("x\n");
    krc_collector_options_defaults(&o);
    assert_int_equal(krc_collect(c, &r, &o, rep, NULL), 0);
    assert_int_equal(snap(R_CLAIM_A).hits, 1);
    assert_int_equal(snap(R_CLAIM_B).hits, 0); /* the 7th: not read */
    assert_true(
        krc_test_has_note(rep, "3 more ResourceClaims of the pod not read (at most 4 are)"));
    krc_report_free(rep);
    krc_kube_client_free(c);
}

/* A report whose pod is already parsed (explain_pod): no pod GET, the rest
 * requested for the target's container. */
static void test_around_pod(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_collect_target t = {"shop", "web-1", "u-1", "app"};
    struct krc_report *rep = krc_report_new();
    (void)state;

    assert_non_null(rep);
    assert_int_equal(krc_kube_parse_pod(pod_json, strlen(pod_json), rep, NULL), 0);
    script("2026-01-01T00:00:01Z panic: boom\n");
    krc_collector_options_defaults(&o);
    o.limit_bytes = 16384;
    assert_int_equal(krc_collect_around_pod(c, &t, &o, rep, NULL), 0);
    assert_int_equal(snap(R_POD).hits, 0);
    assert_int_equal(snap(R_EVENTS).hits, 1);
    assert_int_equal(snap(R_NODE).hits, 1);
    assert_int_equal(snap(R_NODE_EVENTS).hits, 1);
    assert_int_equal(snap(R_LOG).hits, 1);
    assert_string_equal(snap(R_LOG).previous, "true");
    assert_int_equal(rep->n_events, 1);
    assert_true(rep->node.present);
    assert_string_equal(rep->log_container, "app");
    assert_non_null(memmem(rep->log, rep->log_len, "panic: boom", 11));
    assert_int_equal(rep->n_notes, 0);
    krc_report_free(rep);
    krc_kube_client_free(c);
}

/* The log file: the whole previous log (no tailLines), read up to the cap,
 * its last KRC_COLLECT_LOG_FILE_KEEP bytes kept. */
static void test_log_file(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_restart r = restart();
    size_t big = KRC_COLLECT_LOG_FILE_KEEP + 512 * 1024;
    char *log = malloc(big);
    char *out = NULL;
    size_t len = 0;
    char limit[32];
    struct krc_error e;
    (void)state;

    assert_non_null(log);
    for (size_t i = 0; i < big; i++) {
        log[i] = (i % 64 == 63) ? '\n' : (char)('a' + (i / 64) % 26);
    }
    memcpy(log + big - 9, "THE END\n", 8);
    log[big - 1] = '\n';
    script(NULL);
    answer(R_LOG, 200, log, big);
    assert_int_equal(krc_collect_log_file(c, &r, &out, &len, NULL), 0);
    assert_string_equal(snap(R_LOG).tail_lines, "-");
    snprintf(limit, sizeof(limit), "%ld", KRC_COLLECT_LOG_FILE_CAP + 1);
    assert_string_equal(snap(R_LOG).limit_bytes, limit);
    assert_string_equal(snap(R_LOG).previous, "true");
    assert_non_null(out);
    assert_true(len <= KRC_COLLECT_LOG_FILE_KEEP);
    assert_true(len > KRC_COLLECT_LOG_FILE_KEEP - 128);
    assert_memory_equal(out + len - 9, "THE END\n", 8);
    krc_free(out);

    /* an error status is the caller's error, nothing returned */
    out = NULL;
    answer(R_LOG, 400, NULL, 0);
    krc_error_clear(&e);
    assert_true(krc_collect_log_file(c, &r, &out, &len, &e) < 0);
    assert_null(out);
    assert_non_null(strstr(e.msg, "scripted 400"));
    free(log);
    krc_kube_client_free(c);
}

/* Every allocation of one collection fails from the Nth on: a report or
 * KRC_ENOMEM, never a leak (ASan) or a crash. */
/* The minimal report of a restart queued without its pod (past the queue's pod
 * budget): the workload from the owner and template hash the watch kept (a
 * Deployment's ReplicaSet names its Deployment), else none (the pod itself). */
static void test_minimal_without_pod_names_the_workload(void **state)
{
    struct krc_restart r;
    struct krc_report *rep;
    struct krc_error e;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.namespace = "shop";
    r.pod = "web-7d9c8b6f5-x7k2p";
    (void)krc_restart_ident_set(&r.ident, "uid-1", "app", 4, 0, NULL);
    r.owner_kind = "ReplicaSet";
    r.owner_name = "web-7d9c8b6f5";
    r.template_hash = "7d9c8b6f5";
    rep = krc_report_new();
    assert_non_null(rep);
    assert_int_equal(krc_collect_minimal(&r, rep, &e), 0);
    assert_string_equal(rep->workload_kind, "Deployment");
    assert_string_equal(rep->workload_name, "web");
    assert_string_equal(rep->owner_kind, "ReplicaSet");
    krc_report_free(rep);

    r.owner_kind = "StatefulSet"; /* no hash: the owner itself */
    r.owner_name = "db";
    r.template_hash = NULL;
    rep = krc_report_new();
    assert_int_equal(krc_collect_minimal(&r, rep, &e), 0);
    assert_string_equal(rep->workload_kind, "StatefulSet");
    assert_string_equal(rep->workload_name, "db");
    krc_report_free(rep);

    r.owner_kind = NULL;
    r.owner_name = NULL;
    rep = krc_report_new();
    assert_int_equal(krc_collect_minimal(&r, rep, &e), 0);
    assert_null(rep->workload_kind);
    assert_null(rep->workload_name);
    krc_report_free(rep);
}

static void test_alloc_sweep(void **state)
{
    struct krc_kube_client *c = client();
    struct krc_collector_options o;
    struct krc_restart r = restart();
    long n;
    (void)state;

    krc_collector_options_defaults(&o);
    for (n = 0;; n++) {
        struct krc_report *rep = krc_report_new();
        long attempts;
        int rc;
        assert_non_null(rep);
        script("line one\nline two\n");
        krc_mem_fail_after(n);
        rc = krc_collect(c, &r, &o, rep, NULL);
        attempts = krc_mem_fail_after(-1);
        assert_true(rc == 0 || rc == KRC_ENOMEM);
        krc_report_free(rep);
        if (attempts <= n) {
            assert_int_equal(rc, 0);
            break;
        }
    }
    assert_true(n > 20);
    /* and with ResourceClaims to read */
    r.pod_json = (char *)pod_claims_json;
    r.pod_json_len = strlen(pod_claims_json);
    for (n = 0;; n++) {
        struct krc_report *rep = krc_report_new();
        long attempts;
        int rc;
        assert_non_null(rep);
        script("line one\n");
        krc_mem_fail_after(n);
        rc = krc_collect(c, &r, &o, rep, NULL);
        attempts = krc_mem_fail_after(-1);
        assert_true(rc == 0 || rc == KRC_ENOMEM);
        krc_report_free(rep);
        if (attempts <= n) {
            assert_int_equal(rc, 0);
            break;
        }
    }
    krc_kube_client_free(c);
}

static int setup(void **state)
{
    (void)state;
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    krc_test_api_new(&api);
    for (int i = 0; i < R_COUNT; i++) {
        krc_test_api_get(&api, res[i].path, 8u * 1024u * 1024u, handle, &res[i]);
    }
    krc_test_api_start(&api, "test-token");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_api_free(&api);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collects_everything),
        cmocka_unit_test(test_failures_become_notes),
        cmocka_unit_test(test_around_pod),
        cmocka_unit_test(test_log_file),
        cmocka_unit_test(test_alloc_sweep),
        cmocka_unit_test(test_claims),
        cmocka_unit_test(test_claims_capped),
        cmocka_unit_test(test_minimal_without_pod_names_the_workload),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
