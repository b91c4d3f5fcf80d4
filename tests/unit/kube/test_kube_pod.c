#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/error.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

/* Read tests/fixtures/pods/<name>; caller frees. */
static char *fixture(const char *name, size_t *ret_len)
{
    char path[512];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/pods/%s", KRC_FIXTURES, name);
    f = fopen(path, "rb");
    if (f == NULL) {
        fail_msg("cannot open %s", path);
    }
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *ret_len = (size_t)n;
    return buf;
}

static int64_t ts(const char *s)
{
    int64_t v = -1;
    assert_int_equal(krc_parse_rfc3339(s, strlen(s), &v), 0);
    return v;
}

static void parse_fixture(const char *name, struct krc_watch_event *ev)
{
    struct krc_error err;
    size_t len;
    char *json = fixture(name, &len);

    krc_error_clear(&err);
    if (krc_watch_event_parse(json, len, ev, &err) != 0) {
        fail_msg("%s: %s", name, err.msg);
    }
    free(json);
}

static void test_crashloop_oom(void **state)
{
    struct krc_watch_event ev;
    const struct krc_container_info *c;

    (void)state;
    krc_watch_event_init(&ev);
    parse_fixture("crashloop_oom.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_MODIFIED);
    assert_string_equal(ev.pod.uid, "0c9e6b55-3a7e-4c0e-9d7f-2f9b3d1a2b10");
    assert_string_equal(ev.pod.namespace, "ml");
    assert_string_equal(ev.pod.name, "trainer-0");
    assert_string_equal(ev.pod.resource_version, "990112");
    assert_string_equal(ev.pod.node_name, "gpu-node-3");
    assert_string_equal(ev.pod.phase, "Running");
    assert_int_equal(ev.pod.creation_timestamp, 1785394800); /* 2026-07-30T07:00:00Z */
    assert_int_equal(ev.pod.deleting, 0);
    assert_int_equal(ev.pod.ignore, 0);
    assert_null(ev.pod.slack_channel);
    assert_int_equal(ev.pod.n_containers, 1);
    c = &ev.pod.containers[0];
    assert_string_equal(c->name, "trainer");
    assert_int_equal(c->is_init, 0);
    assert_int_equal(c->is_sidecar, 0);
    assert_int_equal(c->restart_count, 5);
    assert_int_equal(c->ready, 0);
    assert_int_equal(c->state_waiting, 1);
    assert_int_equal(c->state_running, 0);
    assert_int_equal(c->state_terminated, 0);
    assert_string_equal(c->state_reason, "CrashLoopBackOff");
    assert_int_equal(c->has_last_terminated, 1);
    assert_int_equal(c->last_exit_code, 137);
    assert_int_equal(c->last_signal, 0);
    assert_string_equal(c->last_reason, "OOMKilled");
    assert_int_equal(c->last_started_at, ts("2026-07-30T07:41:10Z"));
    assert_int_equal(c->last_finished_at, ts("2026-07-30T07:43:52Z"));
    assert_int_equal(c->last_finished_at - c->last_started_at, 162);
    /* part of a restart's identity */
    assert_string_equal(c->last_container_id, "containerd://b7a2");
    krc_watch_event_cleanup(&ev);
}

static void test_sidecar_status_before_spec(void **state)
{
    struct krc_watch_event ev;
    const struct krc_container_info *c;

    (void)state;
    krc_watch_event_init(&ev);
    parse_fixture("sidecar_restart.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_MODIFIED);
    assert_string_equal(ev.pod.name, "checkout-5f7d8-abcde");
    assert_string_equal(ev.pod.node_name, "node-7");
    assert_string_equal(ev.pod.slack_channel, "#shop-oncall"); /* from the label */
    assert_int_equal(ev.pod.deleting, 0);                      /* deletionTimestamp: null */
    assert_int_equal(ev.pod.n_containers, 4);
    /* regular containers first, then init containers, each in status order */
    c = &ev.pod.containers[0];
    assert_string_equal(c->name, "app");
    assert_int_equal(c->is_init, 0);
    assert_int_equal(c->state_running, 1);
    assert_int_equal(c->has_last_terminated, 0);
    c = &ev.pod.containers[1];
    assert_string_equal(c->name, "proxy");
    assert_int_equal(c->restart_count, 1);
    assert_int_equal(c->state_terminated, 1);
    assert_int_equal(c->state_exit_code, 1);
    assert_string_equal(c->state_reason, "Error");
    assert_int_equal(c->has_last_terminated, 0); /* lastState: null */
    c = &ev.pod.containers[2];
    assert_string_equal(c->name, "migrate");
    assert_int_equal(c->is_init, 1);
    assert_int_equal(c->is_sidecar, 0);
    assert_int_equal(c->state_terminated, 1);
    assert_string_equal(c->state_reason, "Completed");
    c = &ev.pod.containers[3];
    assert_string_equal(c->name, "log-shipper");
    assert_int_equal(c->is_init, 1);
    assert_int_equal(c->is_sidecar, 1); /* spec came after status */
    assert_int_equal(c->restart_count, 2);
    assert_int_equal(c->state_running, 1);
    assert_null(c->state_reason);
    assert_int_equal(c->has_last_terminated, 1);
    assert_int_equal(c->last_exit_code, 139);
    assert_int_equal(c->last_signal, 11);
    assert_string_equal(c->last_reason, "Error");
    assert_int_equal(c->last_started_at, ts("2026-07-30T07:10:00Z"));
    assert_int_equal(c->last_finished_at, ts("2026-07-30T07:19:58Z"));
    krc_watch_event_cleanup(&ev);
}

static void test_deleted(void **state)
{
    struct krc_watch_event ev;

    (void)state;
    krc_watch_event_init(&ev);
    parse_fixture("deleted.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_DELETED);
    assert_int_equal(ev.pod.deleting, 1);
    assert_int_equal(ev.pod.ignore, 0); /* "false" */
    assert_string_equal(ev.pod.phase, "Succeeded");
    assert_int_equal(ev.pod.n_containers, 1);
    assert_int_equal(ev.pod.containers[0].state_terminated, 1);
    assert_string_equal(ev.pod.containers[0].state_reason, "Completed");
    krc_watch_event_cleanup(&ev);
}

static void test_bookmarks(void **state)
{
    struct krc_watch_event ev;

    (void)state;
    krc_watch_event_init(&ev);
    parse_fixture("bookmark.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_BOOKMARK);
    assert_string_equal(ev.pod.resource_version, "884377");
    assert_int_equal(ev.initial_events_end, 0);
    assert_null(ev.pod.uid);
    assert_int_equal(ev.pod.n_containers, 0);

    parse_fixture("bookmark_initial_end.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_BOOKMARK);
    assert_string_equal(ev.pod.resource_version, "884211");
    assert_int_equal(ev.initial_events_end, 1);

    /* a bookmark without resourceVersion is useless */
    {
        const char *j = "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}";
        struct krc_error err;
        assert_int_equal(krc_watch_event_parse(j, strlen(j), &ev, &err), KRC_EPARSE);
        assert_string_equal(err.msg, "watch event: bookmark: metadata.resourceVersion missing");
        assert_int_equal(ev.type, 0);
    }
    krc_watch_event_cleanup(&ev);
}

static void test_error_410(void **state)
{
    struct krc_watch_event ev;

    (void)state;
    krc_watch_event_init(&ev);
    parse_fixture("error_410.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_ERROR);
    assert_int_equal(ev.status.code, 410);
    assert_string_equal(ev.status.reason, "Expired");
    assert_string_equal(ev.status.message, "too old resource version: 1 (5)");
    krc_watch_event_cleanup(&ev);
}

static void test_escaped_strings(void **state)
{
    struct krc_watch_event ev;

    (void)state;
    krc_watch_event_init(&ev);
    parse_fixture("escaped.json", &ev);
    assert_int_equal(ev.type, KRC_WATCH_ADDED);
    assert_string_equal(ev.pod.name, "caf\xc3\xa9-0");
    assert_string_equal(ev.pod.namespace, "d\xc3\xa9mo");
    assert_string_equal(ev.pod.uid, "e5c1/42");
    /* annotation wins over the label; escaped key krc.io\/ignore matches */
    assert_string_equal(ev.pod.slack_channel, "#caf\xc3\xa9 \"quoted\"");
    assert_int_equal(ev.pod.ignore, 1);
    /* 23:59:60 (leap second) is accepted as the next second */
    assert_int_equal(ev.pod.creation_timestamp, ts("2026-03-01T00:00:00Z"));
    assert_int_equal(ev.pod.n_containers, 1);
    assert_string_equal(ev.pod.containers[0].name, "w\xc3\xa9"
                                                   "b");
    assert_string_equal(ev.pod.containers[0].state_reason, "ContainerCreating");
    krc_watch_event_cleanup(&ev);
}

static void test_pod_item(void **state)
{
    struct krc_pod_info pod;
    struct krc_error err;
    size_t len;
    char *json = fixture("pod_item.json", &len);

    (void)state;
    krc_pod_info_init(&pod);
    assert_int_equal(krc_pod_info_parse(json, len, &pod, &err), 0);
    assert_string_equal(pod.name, "web-7d9c");
    assert_string_equal(pod.slack_channel, "#payments");
    assert_int_equal(pod.n_containers, 1);
    assert_int_equal(pod.containers[0].restart_count, 1);
    assert_int_equal(pod.containers[0].ready, 1);
    assert_int_equal(pod.containers[0].has_last_terminated, 1);
    assert_int_equal(pod.containers[0].last_finished_at, 0); /* null */
    assert_null(pod.containers[0].last_container_id);
    /* a watch event is not a pod */
    free(json);
    json = fixture("crashloop_oom.json", &len);
    assert_int_equal(krc_pod_info_parse(json, len, &pod, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "pod: metadata.uid missing");
    assert_null(pod.uid);
    free(json);
    krc_pod_info_cleanup(&pod);
}

/* Kubernetes sets one state kind; with several, the order of the members does not
 * matter: terminated, then waiting, then running (kube_parse's precedence too). */
static void test_state_kinds_precedence(void **state)
{
    static const char *const docs[] = {
        "{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"},\"running\":{}}",
        "{\"running\":{},\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}",
        ("{\"waiting\":{\"reason\":\"CrashLoopBackOff\"},\"terminated\":{\"exitCode\":1,"
         "\"reason\":\"Error\"},\"running\":{}}"),
    };
    char json[1024];
    struct krc_pod_info pod;
    struct krc_error err;

    (void)state;
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"},"
                 "\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":1,"
                 "\"state\":%s}]}}",
                 docs[i]);
        krc_pod_info_init(&pod);
        assert_int_equal(krc_pod_info_parse(json, strlen(json), &pod, &err), 0);
        assert_int_equal(pod.containers[0].state_terminated, 1);
        assert_int_equal(pod.containers[0].state_running, 0);
        assert_int_equal(pod.containers[0].state_waiting, 0);
        assert_int_equal(pod.containers[0].state_exit_code, 1);
        assert_string_equal(pod.containers[0].state_reason, "Error");
        krc_pod_info_cleanup(&pod);
    }
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"},"
             "\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"state\":"
             "{\"waiting\":{\"reason\":\"ImagePullBackOff\"},\"running\":{}}}]}}");
    krc_pod_info_init(&pod);
    assert_int_equal(krc_pod_info_parse(json, strlen(json), &pod, &err), 0);
    assert_int_equal(pod.containers[0].state_waiting, 1);
    assert_int_equal(pod.containers[0].state_running, 0);
    assert_string_equal(pod.containers[0].state_reason, "ImagePullBackOff");
    krc_pod_info_cleanup(&pod);
}

static int parse_str(const char *json, struct krc_watch_event *ev, struct krc_error *err)
{
    krc_error_clear(err);
    return krc_watch_event_parse(json, strlen(json), ev, err);
}

static void test_event_key_order_and_errors(void **state)
{
    static const struct {
        const char *json;
        const char *msg; /* NULL: must succeed */
    } cases[] = {
        /* object before type is fine */
        {"{\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":\"s\"}},"
         "\"type\":\"ADDED\"}",
         NULL},
        {"{\"object\":{\"kind\":\"Status\",\"code\":500},\"type\":\"ERROR\"}", NULL},
        {"{\"type\":\"ADDED\"}", "watch event: object missing"},
        {"{\"object\":{}}", "watch event: type missing"},
        {"{\"type\":\"ADDED\",\"object\":null}", "watch event: object is null at offset 25"},
        {"{\"type\":\"SYNC\",\"object\":{}}", "watch event: unknown type \"SYNC\""},
        {"{\"type\":\"ADDED\",\"type\":\"ADDED\",\"object\":{}}",
         "watch event: duplicate key \"type\" at offset 23"},
        {"{\"type\":7,\"object\":{}}", "watch event: expected string, got number at offset 8"},
        {"[]", "watch event: expected an object, got array at offset 0"},
        {"", "watch event: unexpected end of input at offset 0"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"n\",\"namespace\":\"s\"}}}",
         "watch event: pod: metadata.uid missing"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"namespace\":\"s\"}}}",
         "watch event: pod: metadata.name missing"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":5}}}",
         "watch event: pod: metadata.uid: expected string, got number at offset 44"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\"},\"status\":{\"containerStatuses\":[{\"name\":\"a\"},{\"name\":\"b\","
         "\"restartCount\":\"3\"}]}}}",
         "watch event: pod: status.containerStatuses[1].restartCount: expected integer, got "
         "string at offset 147"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\"},\"status\":{\"containerStatuses\":[{\"restartCount\":1}]}}}",
         "watch event: pod: status.containerStatuses[0].name missing"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\"},\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"restartCount\":"
         "99999999999}]}}}",
         "watch event: pod: status.containerStatuses[0].restartCount: integer out of range at "
         "offset 134"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\"},\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"restartCount\":1e400}]}}}",
         "watch event: expected an integer, got '1e400' at offset 134"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\"},\"status\":{\"containerStatuses\":[],\"containerStatuses\":[]}}}",
         "watch event: pod: status.containerStatuses: duplicate key at offset 129"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\",\"creationTimestamp\":\"yesterday\"}}}",
         "watch event: pod: metadata.creationTimestamp: invalid RFC 3339 timestamp at offset 95"},
        {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Pod\"}}",
         "watch event: status: kind is \"Pod\", expected Status"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"n\",\"namespace\":"
         "\"s\"}}} x",
         "watch event: expected end of input after the JSON value, got 'x' at offset 78"},
    };
    struct krc_watch_event ev;
    size_t i;
    int bad = 0;

    (void)state;
    krc_watch_event_init(&ev);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct krc_error err;
        int rc = parse_str(cases[i].json, &ev, &err);

        if (cases[i].msg == NULL) {
            if (rc != 0) {
                print_message("case %zu: unexpected error: %s\n", i, err.msg);
                bad++;
            }
        } else if (rc != KRC_EPARSE || strcmp(err.msg, cases[i].msg) != 0) {
            print_message("case %zu: rc %d msg: %s\n", i, rc, err.msg);
            bad++;
        } else if (ev.type != 0 || ev.pod.uid != NULL) {
            print_message("case %zu: event not reset after an error\n", i);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    krc_watch_event_cleanup(&ev);
}

static void test_sidecar_rule(void **state)
{
    (void)state;
    assert_true(krc_kube_is_sidecar(1, "Always"));
    assert_false(krc_kube_is_sidecar(0, "Always")); /* a regular container's policy */
    assert_false(krc_kube_is_sidecar(1, NULL));
    assert_false(krc_kube_is_sidecar(1, "OnFailure"));
    assert_false(krc_kube_is_sidecar(1, "always")); /* the API's values are case-sensitive */
}

static const char *const FIXTURES[] = {
    "crashloop_oom.json", "sidecar_restart.json",      "deleted.json",   "bookmark.json",
    "escaped.json",       "bookmark_initial_end.json", "error_410.json",
};

/* Every proper prefix of every fixture is a parse error, never a crash. */
static void test_every_truncation_is_an_error(void **state)
{
    struct krc_watch_event ev;
    size_t f;

    (void)state;
    krc_watch_event_init(&ev);
    for (f = 0; f < sizeof(FIXTURES) / sizeof(FIXTURES[0]); f++) {
        size_t len;
        char *json = fixture(FIXTURES[f], &len);
        size_t full = len;
        size_t i;

        while (full > 0 && (json[full - 1] == '\n' || json[full - 1] == ' ')) {
            full--;
        }
        for (i = 0; i < full; i++) {
            struct krc_error err;
            char *p = malloc(i + 1); /* exact-size copy so ASan sees overreads */
            int rc;
            assert_non_null(p);
            memcpy(p, json, i);
            rc = krc_watch_event_parse(p, i, &ev, &err);
            free(p);
            if (rc != KRC_EPARSE) {
                fail_msg("%s: prefix %zu gave %d", FIXTURES[f], i, rc);
            }
            assert_non_null(strstr(err.msg, "watch event"));
        }
        free(json);
    }
    krc_watch_event_cleanup(&ev);
}

/* Random byte mutations: any result is fine as long as nothing crashes. */
static void test_mutations_no_crash(void **state)
{
    static const char alphabet[] = "{}[]\",:\\u0e-+.tfn 19aEZT\x01\xff";
    struct krc_watch_event ev;
    unsigned seed = 4242;
    size_t f;

    (void)state;
    krc_watch_event_init(&ev);
    for (f = 0; f < sizeof(FIXTURES) / sizeof(FIXTURES[0]); f++) {
        size_t len;
        char *json = fixture(FIXTURES[f], &len);
        int iter;

        for (iter = 0; iter < 1500; iter++) {
            char *p = malloc(len);
            struct krc_error err;
            int k;
            assert_non_null(p);
            memcpy(p, json, len);
            for (k = 0; k < 2; k++) {
                seed = seed * 1103515245u + 12345u;
                p[(seed >> 4) % len] = alphabet[(seed >> 22) % (sizeof(alphabet) - 1)];
            }
            if (krc_watch_event_parse(p, len, &ev, &err) == 0 &&
                (ev.type == KRC_WATCH_ADDED || ev.type == KRC_WATCH_MODIFIED)) {
                assert_non_null(ev.pod.uid);
                assert_non_null(ev.pod.name);
                assert_non_null(ev.pod.namespace);
            }
            free(p);
        }
        free(json);
    }
    krc_watch_event_cleanup(&ev);
}

static void test_deep_nesting_in_skipped_field(void **state)
{
    struct krc_watch_event ev;
    struct krc_error err;
    char *json = malloc(200000);
    size_t n = 0;
    int i;

    (void)state;
    assert_non_null(json);
    n += (size_t)snprintf(json, 200000, "{\"type\":\"ADDED\",\"object\":{\"x\":");
    for (i = 0; i < 90000; i++) {
        json[n++] = '[';
    }
    krc_watch_event_init(&ev);
    assert_int_equal(krc_watch_event_parse(json, n, &ev, &err), KRC_EPARSE);
    assert_non_null(strstr(err.msg, "nesting deeper than 64 levels"));
    krc_watch_event_cleanup(&ev);
    free(json);
}

static void test_reuse_big_then_small(void **state)
{
    struct krc_watch_event ev;
    size_t i;

    (void)state;
    krc_watch_event_init(&ev);
    for (i = 0; i < 3; i++) {
        parse_fixture("bookmark.json", &ev);
        assert_string_equal(ev.pod.resource_version, "884377");
        parse_fixture("sidecar_restart.json", &ev);
        assert_int_equal(ev.pod.n_containers, 4);
        assert_string_equal(ev.pod.containers[3].name, "log-shipper");
        parse_fixture("crashloop_oom.json", &ev);
        assert_int_equal(ev.pod.n_containers, 1);
        assert_null(ev.pod.slack_channel);
    }
    krc_watch_event_cleanup(&ev);
    krc_watch_event_cleanup(&ev); /* idempotent */
}

/* Allocation failure at every point leaves no leak (ASan) and a clean error. */
static void test_alloc_failure_sweep(void **state)
{
    size_t f;

    (void)state;
    for (f = 0; f < sizeof(FIXTURES) / sizeof(FIXTURES[0]); f++) {
        size_t len;
        char *json = fixture(FIXTURES[f], &len);
        long n;
        int done = 0;

        for (n = 0; n < 50 && !done; n++) {
            struct krc_watch_event ev;
            struct krc_error err;
            long attempts;
            int rc;

            krc_watch_event_init(&ev);
            krc_error_clear(&err);
            krc_mem_fail_after(n);
            rc = krc_watch_event_parse(json, len, &ev, &err);
            attempts = krc_mem_fail_after(-1);
            if (rc == 0) {
                assert_true(attempts <= n);
                done = 1;
            } else {
                assert_int_equal(rc, KRC_ENOMEM);
                assert_non_null(strstr(err.msg, "out of memory"));
                assert_int_equal(ev.type, 0);
            }
            krc_watch_event_cleanup(&ev);
        }
        assert_true(done);
        free(json);
    }
}

/* Once warmed up, a parse of the same size allocates nothing. */
static void test_no_allocation_when_warm(void **state)
{
    struct krc_watch_event ev;
    struct krc_error err;
    size_t len;
    char *json = fixture("sidecar_restart.json", &len);

    (void)state;
    krc_watch_event_init(&ev);
    assert_int_equal(krc_watch_event_parse(json, len, &ev, &err), 0);
    krc_mem_fail_after(0);
    assert_int_equal(krc_watch_event_parse(json, len, &ev, &err), 0);
    assert_int_equal(krc_mem_fail_after(-1), 0);
    krc_watch_event_cleanup(&ev);
    free(json);
}

/* The first bytes of a skipped object name it: a watch event's type and
 * the pod's namespace, name, uid and resourceVersion, from a text cut
 * anywhere; what is missing, not JSON or not printable stays "". */
static void test_ident_scan(void **state)
{
    static const char ev[] =
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
        "\"metadata\":{\"name\":\"giant-0\",\"generateName\":\"giant-\",\"namespace\":\"big\","
        "\"uid\":\"0d5e-11\",\"resourceVersion\":\"4711\",\"labels\":{\"a\":\"b\"},"
        "\"managedFields\":[{\"manager\":\"x\"}]},\"spec\":{\"containers\":[{\"name\":\"c0\"}";
    static const char item[] = "{\"metadata\":{\"namespace\":\"shop\",\"name\":\"w\\u0065b\","
                               "\"resourceVersion\":\"9\"},\"spec\":{";
    struct krc_kube_ident id;
    size_t cut;
    (void)state;

    krc_kube_ident_scan(ev, strlen(ev), &id);
    assert_string_equal(id.type, "MODIFIED");
    assert_string_equal(id.namespace, "big");
    assert_string_equal(id.name, "giant-0");
    assert_string_equal(id.uid, "0d5e-11");
    assert_string_equal(id.resource_version, "4711");

    /* a list item (no event around it); escapes decoded */
    krc_kube_ident_scan(item, strlen(item), &id);
    assert_string_equal(id.type, "");
    assert_string_equal(id.namespace, "shop");
    assert_string_equal(id.name, "web");
    assert_string_equal(id.resource_version, "9");
    assert_string_equal(id.uid, "");

    /* cut anywhere: never a partial value, fields found before the cut stay */
    for (cut = 0; cut <= strlen(ev); cut++) {
        krc_kube_ident_scan(ev, cut, &id);
        assert_true(id.name[0] == '\0' || strcmp(id.name, "giant-0") == 0);
        assert_true(id.resource_version[0] == '\0' || strcmp(id.resource_version, "4711") == 0);
        assert_true(id.type[0] == '\0' || strcmp(id.type, "MODIFIED") == 0);
        if (cut >= (size_t)(strstr(ev, ",\"labels\"") - ev)) {
            assert_string_equal(id.resource_version, "4711");
            assert_string_equal(id.namespace, "big");
        }
    }
    krc_kube_ident_scan(NULL, 0, &id);
    assert_string_equal(id.name, "");

    /* not printable, too long, or not a string: unknown */
    {
        static const char odd[] = "{\"type\":\"MOD IFIED\",\"object\":{\"metadata\":{\"name\":"
                                  "\"a\\nb\",\"namespace\":7,\"uid\":\"\\u00e9\"}}}";
        char big[600];
        krc_kube_ident_scan(odd, strlen(odd), &id);
        assert_string_equal(id.type, "");
        assert_string_equal(id.name, "");
        assert_string_equal(id.namespace, "");
        assert_string_equal(id.uid, "");
        snprintf(big, sizeof(big), "{\"metadata\":{\"name\":\"%0300d\",\"namespace\":\"n\"}}", 1);
        krc_kube_ident_scan(big, strlen(big), &id);
        assert_string_equal(id.name, "");
        assert_string_equal(id.namespace, "n");
    }
    /* garbage */
    krc_kube_ident_scan("\x00\xff{[", 4, &id);
    assert_string_equal(id.name, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crashloop_oom),
        cmocka_unit_test(test_sidecar_status_before_spec),
        cmocka_unit_test(test_deleted),
        cmocka_unit_test(test_bookmarks),
        cmocka_unit_test(test_error_410),
        cmocka_unit_test(test_escaped_strings),
        cmocka_unit_test(test_pod_item),
        cmocka_unit_test(test_state_kinds_precedence),
        cmocka_unit_test(test_event_key_order_and_errors),
        cmocka_unit_test(test_every_truncation_is_an_error),
        cmocka_unit_test(test_mutations_no_crash),
        cmocka_unit_test(test_deep_nesting_in_skipped_field),
        cmocka_unit_test(test_reuse_big_then_small),
        cmocka_unit_test(test_sidecar_rule),
        cmocka_unit_test(test_alloc_failure_sweep),
        cmocka_unit_test(test_no_allocation_when_warm),
        cmocka_unit_test(test_ident_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
