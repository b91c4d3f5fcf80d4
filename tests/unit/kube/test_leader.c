/* Leader election helpers: the hand-over annotation, MicroTime, the handled
 * set, and the fencing token after acquisitions against a small in-process
 * Lease server (the election as a whole runs against the fake API server in
 * tests/integration/test_leader.py). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "krc/kube/kube_auth.h"
#include "krc/kube/leader.h"
#include "krc/serve/http_server.h"
#include "krc/util/clock.h"
#include "krc/util/http.h"
#include "krc/util/mem.h"
#include "krc_test.h"

static void test_microtime(void **state)
{
    char out[40];
    (void)state;
    krc_leader_format_microtime(INT64_C(1796239909) * 1000000 + 123456, out, sizeof(out));
    assert_string_equal(out, "2026-12-02T19:31:49.123456Z");
    krc_leader_format_microtime(0, out, sizeof(out));
    assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
}

static void test_parse_handled(void **state)
{
    struct krc_leader_handled h[4];
    const char *text = "1796239909 0b5e-uid app 3\n"
                       "garbage line\n"
                       "1796239910 1c6f-uid sidecar 12 extra\n" /* too many fields */
                       "\n"
                       "-5 x y 1\n" /* bad time */
                       "1796239911 2d7a-uid init-db 0";
    (void)state;
    assert_int_equal(krc_leader_parse_handled(text, h, 4), 2);
    assert_int_equal(h[0].at, 1796239909);
    assert_string_equal(h[0].key, "0b5e-uid/app/3");
    assert_string_equal(h[1].key, "2d7a-uid/init-db/0");
    /* bounded by max */
    assert_int_equal(krc_leader_parse_handled(text, h, 1), 1);
    assert_int_equal(krc_leader_parse_handled("", h, 4), 0);
    assert_int_equal(krc_leader_parse_handled(NULL, h, 4), 0);
}

static struct krc_leader *new_leader(size_t handled_max)
{
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;

    memset(&o, 0, sizeof(o));
    o.namespace = "krc";
    o.name = "krc";
    o.identity = "pod-a";
    o.lease_duration_s = 15;
    o.renew_deadline_s = 10;
    o.retry_period_s = 2;
    o.handled_max = handled_max;
    krc_error_clear(&e);
    assert_int_equal(krc_leader_new(NULL, &o, &l, &e), 0);
    return l;
}

/* The hand-over list's calls with the identity's fields spelled out. */
static void note_handled(struct krc_leader *l, const char *uid, const char *container, int count,
                         int64_t finished_at, const char *container_id)
{
    struct krc_restart_ident id;
    (void)krc_restart_ident_set(&id, uid, container, count, finished_at, container_id);
    krc_leader_note_handled(l, &id);
}

static int was_handled(struct krc_leader *l, const char *uid, const char *container, int count,
                       int64_t finished_at, const char *container_id)
{
    struct krc_restart_ident id;
    (void)krc_restart_ident_set(&id, uid, container, count, finished_at, container_id);
    return krc_leader_was_handled(l, &id);
}

/* Scenario 5 of issue 12: a restart is its termination, not its count. */
static void test_handled_identity_is_the_termination(void **state)
{
    struct krc_leader *l = new_leader(100);
    const char *cid = "containerd://0123456789abcdef0123456789abcdef";
    (void)state;

    note_handled(l, "u1", "app", 3, 1796239000, cid);
    /* the same termination, relisted */
    assert_true(was_handled(l, "u1", "app", 3, 1796239000, cid));
    /* same count, newer termination: a new crash */
    assert_false(was_handled(l, "u1", "app", 3, 1796239100, cid));
    /* the count went down and climbed back to 3: a new crash */
    assert_false(was_handled(l, "u1", "app", 3, 1796239200,
                             "containerd://ffff456789abcdef0123456789abcdef"));
    /* the same second, another container: a new crash */
    assert_false(was_handled(l, "u1", "app", 3, 1796239000,
                             "containerd://9999456789abcdef0123456789abcdef"));
    /* the same termination at another count: another restart */
    assert_false(was_handled(l, "u1", "app", 4, 1796239000, cid));
    /* the count alone (no finishedAt) does not match a termination */
    assert_false(was_handled(l, "u1", "app", 3, 0, NULL));
    krc_leader_free(l);
}

/* A Lease written by an older krc: "AT UID CONTAINER COUNT". */
static void test_handled_reads_the_old_encoding(void **state)
{
    struct krc_leader *l = new_leader(100);
    const char *text = "1796239909 0b5e-uid app 3\n"
                       "1796239950 0b5e-uid app t1796239940:0123456789abcdef#4\n"
                       "1796239960 1c6f-uid app c2\n";
    struct krc_leader_handled h[4];
    (void)state;

    assert_int_equal(krc_leader_parse_handled(text, h, 4), 3);
    assert_string_equal(h[0].key, "0b5e-uid/app/3");
    assert_string_equal(h[1].key, "0b5e-uid/app/t1796239940:0123456789abcdef#4");
    assert_string_equal(h[2].key, "1c6f-uid/app/c2");
    assert_int_equal(krc_leader_merge_handled(l, text), 3);
    /* old entry: count 3, handled at ...909: a termination of count 3 that
     * finished before is the same one; one that finished later is new */
    assert_true(was_handled(l, "0b5e-uid", "app", 3, 1796239900, "docker://x"));
    assert_true(was_handled(l, "0b5e-uid", "app", 3, 0, NULL));
    assert_false(was_handled(l, "0b5e-uid", "app", 3, 1796239930, NULL));
    assert_false(was_handled(l, "0b5e-uid", "app", 4, 1796239900, NULL));
    /* new entries */
    assert_true(
        was_handled(l, "0b5e-uid", "app", 4, 1796239940, "containerd://0123456789abcdef0123"));
    assert_true(was_handled(l, "1c6f-uid", "app", 2, 0, NULL));
    assert_false(was_handled(l, "1c6f-uid", "app", 2, 1796239940, NULL));
    /* malformed identities are skipped */
    assert_int_equal(krc_leader_parse_handled("1 u app x3\n1 u app t12:#1\n1 u app t1:a-b#1\n"
                                              "1 u app t12\n1 u app t12#\n1 u app c\n",
                                              h, 4),
                     0);
    assert_int_equal(krc_leader_parse_handled("1 u app t12#1\n", h, 4), 1);
    assert_string_equal(h[0].key, "u/app/t12#1");
    krc_leader_free(l);
}

static void test_handled_set_is_bounded(void **state)
{
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;
    char uid[32];
    (void)state;

    memset(&o, 0, sizeof(o));
    o.namespace = "krc";
    o.name = "krc";
    o.identity = "pod-a";
    o.lease_duration_s = 15;
    o.renew_deadline_s = 10;
    o.retry_period_s = 2;
    o.handled_max = 3;
    krc_error_clear(&e);
    assert_int_equal(krc_leader_new(NULL, &o, &l, &e), 0);
    for (int i = 0; i < 5; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        note_handled(l, uid, "app", i, 0, NULL);
        note_handled(l, uid, "app", i, 0, NULL); /* duplicates are not added twice */
    }
    /* the oldest two made room */
    assert_false(was_handled(l, "uid-0", "app", 0, 0, NULL));
    assert_false(was_handled(l, "uid-1", "app", 1, 0, NULL));
    assert_true(was_handled(l, "uid-2", "app", 2, 0, NULL));
    assert_true(was_handled(l, "uid-4", "app", 4, 0, NULL));
    /* without a finishedAt the count is the key: the next restart is a new one */
    assert_false(was_handled(l, "uid-4", "app", 5, 0, NULL));
    assert_false(was_handled(l, "uid-4", "other", 4, 0, NULL));
    assert_int_equal(krc_leader_role(l), KRC_LEADER_STANDBY);
    krc_leader_free(l);
}

static void test_new_needs_names(void **state)
{
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;
    (void)state;
    memset(&o, 0, sizeof(o));
    o.namespace = "krc";
    o.name = "krc";
    krc_error_clear(&e);
    assert_int_equal(krc_leader_new(NULL, &o, &l, &e), KRC_EINVAL);
    assert_null(l);
    assert_non_null(strstr(e.msg, "identity"));
}

/* ---- the fencing token ------------------------------------------------- */

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
#define CREATED "2026-12-03T10:00:00Z"

/* One Lease, as the API server keeps it: GET, PUT (resourceVersion checked),
 * POST (create). creationTimestamp is the server's. */
struct lease_server {
    pthread_mutex_t lock;
    cJSON *lease; /* NULL: none (404) */
    int rv;
};

static int reply(struct krc_http_server_response *resp, int status, const cJSON *obj)
{
    char *text = obj != NULL ? cJSON_PrintUnformatted(obj) : NULL;
    int rc;
    resp->status = status;
    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    rc = krc_buf_append_str(&resp->body, text != NULL ? text : "{\"kind\":\"Status\"}");
    cJSON_free(text);
    return rc < 0 ? -1 : 0;
}

static void store_lease(struct lease_server *s, cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    char rv[32];
    snprintf(rv, sizeof(rv), "%d", ++s->rv);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    cJSON_AddStringToObject(meta, "resourceVersion", rv);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "creationTimestamp");
    cJSON_AddStringToObject(meta, "creationTimestamp", CREATED);
    cJSON_Delete(s->lease);
    s->lease = obj;
}

static int lease_handler(const struct krc_http_server_request *req,
                         struct krc_http_server_response *resp, void *ud)
{
    struct lease_server *s = ud;
    int rc;

    pthread_mutex_lock(&s->lock);
    if (strcmp(req->method, "GET") == 0) {
        rc = reply(resp, s->lease != NULL ? 200 : 404, s->lease);
    } else {
        cJSON *obj = cJSON_Parse(req->body);
        int create = strcmp(req->method, "POST") == 0;
        if (obj == NULL || (create && s->lease != NULL)) {
            cJSON_Delete(obj);
            rc = reply(resp, 409, NULL);
        } else {
            store_lease(s, obj);
            rc = reply(resp, create ? 201 : 200, s->lease);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* A Lease as another process left it. */
static void put_lease(struct lease_server *s, const char *holder, int transitions, int duration)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
             "\"metadata\":{\"name\":\"krc\",\"namespace\":\"ns\"},"
             "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,"
             "\"leaseTransitions\":%d,\"renewTime\":\"2026-12-03T10:00:00.000000Z\"}}",
             holder, duration, transitions);
    pthread_mutex_lock(&s->lock);
    store_lease(s, cJSON_Parse(text));
    pthread_mutex_unlock(&s->lock);
}

static int stored_transitions(struct lease_server *s)
{
    int n;
    pthread_mutex_lock(&s->lock);
    n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s->lease, "spec"),
                                         "leaseTransitions")
            ->valueint;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void *run_leader(void *arg)
{
    krc_leader_run(arg);
    return NULL;
}

/* Run the election as `identity` until it leads (at most 10 s); its token. */
static int64_t lead_once(const char *server, const char *identity)
{
    struct krc_kube_auth_config ac;
    struct krc_token_source *ts = krc_token_source_new("t", NULL, 0);
    struct krc_kube_client *client;
    struct krc_leader_options o;
    struct krc_leader *l = NULL;
    struct krc_error e;
    pthread_t th;
    int64_t token;
    int64_t end = krc_clock_mono_ms() + 10000;

    memset(&ac, 0, sizeof(ac));
    ac.server = (char *)server;
    ac.token = (char *)"t";
    ac.source = (char *)"test";
    assert_non_null(ts);
    krc_error_clear(&e);
    client = krc_kube_client_new(&ac, ts, &e);
    assert_non_null(client);
    memset(&o, 0, sizeof(o));
    o.namespace = "ns";
    o.name = "krc";
    o.identity = identity;
    o.lease_duration_s = 15;
    o.renew_deadline_s = 10;
    o.retry_period_s = 1;
    o.handled_retention_s = 600;
    assert_int_equal(krc_leader_new(client, &o, &l, &e), 0);
    assert_int_equal(krc_leader_fence_token(l), 0);
    assert_int_equal(pthread_create(&th, NULL, run_leader, l), 0);
    while (krc_leader_role(l) != KRC_LEADER_LEADING && krc_clock_mono_ms() < end) {
        krc_clock_sleep_ms(20, NULL);
    }
    assert_int_equal(krc_leader_role(l), KRC_LEADER_LEADING);
    token = krc_leader_fence_token(l);
    krc_leader_stop(l);
    pthread_join(th, NULL);
    /* a renewal does not change the token */
    assert_int_equal(krc_leader_fence_token(l), token);
    krc_leader_free(l);
    krc_token_source_free(ts);
    return token;
}

static void test_fence_token_after_acquisitions(void **state)
{
    struct lease_server s;
    struct krc_http_server_config sc;
    struct krc_http_server *srv = NULL;
    struct krc_error e;
    char server[64];
    int64_t created = 0, t_new, t_nobody, t_other, t_self;
    (void)state;

    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.lock, NULL);
    memset(&sc, 0, sizeof(sc));
    sc.listen = "127.0.0.1:0";
    krc_error_clear(&e);
    assert_int_equal(krc_http_server_new(&sc, &srv, &e), 0);
    assert_int_equal(
        krc_http_server_route(srv, LEASES, KRC_HTTP_METHOD_POST, 0, 0, lease_handler, &s, &e), 0);
    assert_int_equal(krc_http_server_route(srv, LEASES "/krc",
                                           KRC_HTTP_METHOD_GET | KRC_HTTP_METHOD_PUT, 0, 0,
                                           lease_handler, &s, &e),
                     0);
    assert_int_equal(krc_http_server_start(srv, &e), 0);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", krc_http_server_port(srv));
    assert_int_equal(krc_parse_rfc3339(CREATED, strlen(CREATED), &created), 0);

    /* no Lease yet: created with leaseTransitions 0 */
    t_new = lead_once(server, "a");
    assert_int_equal(t_new, created * KRC_LEADER_FENCE_EPOCH + 0);
    assert_int_equal(stored_transitions(&s), 0);

    /* released by its holder (nobody holds it): one transition more */
    put_lease(&s, "", 4, 15);
    t_nobody = lead_once(server, "a");
    assert_int_equal(t_nobody, created * KRC_LEADER_FENCE_EPOCH + 5);
    assert_int_equal(stored_transitions(&s), 5);

    /* held by another replica whose Lease (1 s) expires on our clock */
    put_lease(&s, "b", 7, 1);
    t_other = lead_once(server, "a");
    assert_int_equal(t_other, created * KRC_LEADER_FENCE_EPOCH + 8);

    /* held by an earlier process of this identity (kill -9, then a restart
     * of the container): taken over at once, and a token of its own */
    put_lease(&s, "a", 8, 15);
    t_self = lead_once(server, "a");
    assert_int_equal(t_self, created * KRC_LEADER_FENCE_EPOCH + 9);
    assert_true(t_new < t_nobody && t_nobody < t_other && t_other < t_self);

    krc_http_server_stop(srv);
    krc_http_server_free(srv);
    cJSON_Delete(s.lease);
    pthread_mutex_destroy(&s.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_microtime),
        cmocka_unit_test(test_parse_handled),
        cmocka_unit_test(test_handled_set_is_bounded),
        cmocka_unit_test(test_handled_identity_is_the_termination),
        cmocka_unit_test(test_handled_reads_the_old_encoding),
        cmocka_unit_test(test_new_needs_names),
        cmocka_unit_test(test_fence_token_after_acquisitions),
    };
    return cmocka_run_group_tests(tests, krc_test_http_init, krc_test_http_cleanup);
}
