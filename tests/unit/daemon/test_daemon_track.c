/* Change tracking's runner (src/daemon/daemon_track.c) is an extra: a watch
 * whose Kubernetes client or thread cannot be created is left out with one
 * warning naming it, the daemon goes on, and the tracker then says nothing
 * (never "no change") about what only that watch would have told. Past
 * KRC_DAEMON_TRACK_MANY_NAMESPACES watched namespaces the start-up log says
 * what the per-namespace watches cost.
 *
 * The watches run against a small in-process API server (plain HTTP) that
 * serves every tracked resource as an empty list and holds each watch open.
 * A thread that cannot be created is made by this file's pthread_create,
 * which fails one chosen call of the test's own thread and hands every
 * other call on (dlsym RTLD_NEXT: libc's, or a sanitizer's interceptor). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/config/config.h"
#include "krc/daemon/daemon_internal.h"
#include "krc/detect/filter.h"
#include "krc/serve/http_server.h"
#include "krc/track/track.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc_test.h"

/* ---- a pthread_create that fails when told ------------------------------ */

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static pthread_t injector;     /* the thread whose calls are counted */
static atomic_int fail_in = 0; /* > 0: the fail_in-th call of injector from now fails */

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static create_fn real;

    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    }
    if (atomic_load(&fail_in) > 0 && pthread_equal(pthread_self(), injector) &&
        atomic_fetch_sub(&fail_in, 1) == 1) {
        return EAGAIN;
    }
    return real(thread, attr, fn, arg);
}

/* ---- the API server --------------------------------------------------- */

static const char *const PATHS[] = {"deployments", "replicasets", "statefulsets", "daemonsets",
                                    "controllerrevisions"};

struct fake {
    atomic_int stop; /* held watches answer */
    atomic_int lists;
};

static int api_handler(const struct krc_http_server_request *req,
                       struct krc_http_server_response *resp, void *ud)
{
    struct fake *f = ud;

    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    if (krc_http_server_request_query(req, "watch") != NULL) {
        /* held open (as a quiet watch is) until the test ends */
        for (int i = 0; i < 3000 && !atomic_load(&f->stop); i++) {
            krc_clock_sleep_ms(10, NULL);
        }
        return 0;
    }
    atomic_fetch_add(&f->lists, 1);
    return krc_buf_append_str(&resp->body, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":"
                                           "{\"resourceVersion\":\"7\"},\"items\":[]}") < 0
               ? -1
               : 0;
}

/* One daemon, as far as change tracking needs one. */
struct rig {
    struct fake fake;
    struct krc_http_server *srv;
    struct krc_config cfg;
    struct daemon d;
    char server[64];
    char logfile[64];
    int logfd;
};

static void rig_up(struct rig *g, const char *namespaces, int serve)
{
    char *argv[] = {"run", "--watched-namespaces", (char *)namespaces, "--streaming-list", "false"};
    char *errors = NULL;
    struct krc_error e;

    memset(g, 0, sizeof(*g));
    krc_error_clear(&e);
    snprintf(g->logfile, sizeof(g->logfile), "/tmp/krc-test-track-log-XXXXXX");
    g->logfd = mkstemp(g->logfile);
    assert_true(g->logfd >= 0);
    krc_log_setup(KRC_LOG_INFO, KRC_LOG_TEXT, g->logfd);
    snprintf(g->server, sizeof(g->server), "http://127.0.0.1:1");
    if (serve) {
        struct krc_http_server_config sc;
        char path[128];
        memset(&sc, 0, sizeof(sc));
        sc.listen = "127.0.0.1:0";
        sc.max_connections_per_address = 64;
        assert_int_equal(krc_http_server_new(&sc, &g->srv, &e), 0);
        for (size_t n = 0; n < 2; n++) {
            const char *ns = n == 0 ? "shop" : "web";
            for (size_t i = 0; i < sizeof(PATHS) / sizeof(PATHS[0]); i++) {
                snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/%s", ns, PATHS[i]);
                assert_int_equal(krc_http_server_route(g->srv, path, KRC_HTTP_METHOD_GET, 0, 0,
                                                       api_handler, &g->fake, &e),
                                 0);
            }
            snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs", ns);
            assert_int_equal(krc_http_server_route(g->srv, path, KRC_HTTP_METHOD_GET, 0, 0,
                                                   api_handler, &g->fake, &e),
                             0);
            snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/cronjobs", ns);
            assert_int_equal(krc_http_server_route(g->srv, path, KRC_HTTP_METHOD_GET, 0, 0,
                                                   api_handler, &g->fake, &e),
                             0);
        }
        assert_int_equal(krc_http_server_route(g->srv, "/api/v1/nodes", KRC_HTTP_METHOD_GET, 0, 0,
                                               api_handler, &g->fake, &e),
                         0);
        assert_int_equal(krc_http_server_start(g->srv, &e), 0);
        snprintf(g->server, sizeof(g->server), "http://127.0.0.1:%d", krc_http_server_port(g->srv));
    }
    krc_config_init(&g->cfg);
    assert_int_equal(krc_config_from_args(&g->cfg, 5, argv, &errors, &e), 0);
    assert_int_equal(g->cfg.track_changes, 1); /* the default */
    g->d.cfg = &g->cfg;
    g->d.auth.server = g->server;
    g->d.auth.token = (char *)"track-token";
    g->d.auth.source = (char *)"test";
    g->d.tokens = krc_token_source_new("track-token", NULL, 0);
    assert_non_null(g->d.tokens);
    assert_int_equal(krc_filter_new(g->cfg.watched_namespaces, g->cfg.ignored_namespaces,
                                    g->cfg.watched_pod_name_prefixes,
                                    g->cfg.ignored_pod_name_prefixes, &g->d.filter, &e),
                     0);
}

static void rig_down(struct rig *g)
{
    atomic_store(&g->d.cancel, 1);
    atomic_store(&g->fake.stop, 1);
    krc_daemon_track_stop(&g->d);
    krc_daemon_track_cleanup(&g->d);
    if (g->srv != NULL) {
        krc_http_server_stop(g->srv);
        krc_http_server_free(g->srv);
    }
    krc_filter_free(g->d.filter);
    krc_token_source_free(g->d.tokens);
    krc_config_cleanup(&g->cfg);
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, 2);
    close(g->logfd);
    unlink(g->logfile);
}

/* The log so far (free()). */
static char *logged(struct rig *g)
{
    size_t len;
    char *s = krc_test_read_file(g->logfile, &len);
    assert_non_null(s);
    return s;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p != NULL; p = strstr(p + 1, what)) {
        n++;
    }
    return n;
}

/* 1 / 0 as krc_track_describe answers (a line is freed). */
static int says(struct daemon *d, const char *ns, const char *kind, const char *name,
                const char *node)
{
    struct krc_track_query q;
    struct krc_error e;
    char *line = NULL, *json = NULL;
    int64_t now = krc_clock_now();
    int rc;

    memset(&q, 0, sizeof(q));
    q.namespace = ns;
    q.workload_kind = kind;
    q.workload_name = name;
    q.node = node;
    q.before = now;
    rc = krc_track_describe(d->track, &q, now, &line, &json, &e);
    if (rc == 1) {
        assert_non_null(strstr(line, "No change to "));
    }
    krc_free(line);
    krc_free(json);
    return rc;
}

/* The thread of shop's ReplicaSet watch cannot be created: the daemon goes
 * on with the other 14, one warning names it, and a Deployment's crash in
 * shop hears nothing, while web's and shop's StatefulSets hear "No change". */
static void test_watch_without_thread(void **state)
{
    struct rig g;
    char *log;
    (void)state;

    rig_up(&g, "shop,web", 1);
    krc_daemon_track_setup(&g.d);
    assert_non_null(g.d.track);
    assert_int_equal(g.d.n_track_watches, 7 * 2 + 1);
    /* in creation order: deployments shop, web; replicasets shop (the third) */
    injector = pthread_self();
    atomic_store(&fail_in, 3);
    krc_daemon_track_start(&g.d);
    assert_int_equal(atomic_load(&fail_in), 0);
    log = logged(&g);
    assert_non_null(strstr(log, "change tracking: the replicasets watch (shop) is not started: "
                                "cannot create its thread: "));
    assert_non_null(strstr(log, "krc runs without it, and its alerts say nothing about the "
                                "rollouts of Deployments in namespace shop"));
    assert_int_equal(count(log, "is not started"), 1);
    assert_non_null(strstr(log, "change tracking: 14 of 15 watches started"));
    free(log);

    /* every started watch syncs: web's Deployments, shop's StatefulSets
     * and a bare pod's node are answered for */
    for (int i = 0; i < 2000; i++) {
        if (says(&g.d, "web", "Deployment", "api", NULL) == 1 &&
            says(&g.d, "shop", "StatefulSet", "db", NULL) == 1 &&
            says(&g.d, "shop", "CronJob", "report", NULL) == 1 &&
            says(&g.d, "shop", "Pod", "solo", "node-1") == 1) {
            break;
        }
        krc_clock_sleep_ms(10, NULL);
    }
    assert_int_equal(says(&g.d, "web", "Deployment", "api", NULL), 1);
    assert_int_equal(says(&g.d, "shop", "StatefulSet", "db", NULL), 1);
    assert_int_equal(says(&g.d, "shop", "Pod", "solo", "node-1"), 1);
    /* shop's ReplicaSets were never listed: nothing said, not "no change" */
    assert_int_equal(says(&g.d, "shop", "Deployment", "api", NULL), 0);
    rig_down(&g);
}

/* No watch's client can be created (a kubeconfig's tls-server-name with a
 * plain-HTTP server): each watch is named once, set-up goes on, and the
 * tracker never answers. */
static void test_watches_without_client(void **state)
{
    struct rig g;
    char *log;
    (void)state;

    rig_up(&g, "shop,web", 0);
    g.d.auth.tls_server_name = (char *)"api.example";
    krc_daemon_track_setup(&g.d);
    assert_non_null(g.d.track);
    assert_int_equal(g.d.n_track_watches, 0);
    krc_daemon_track_start(&g.d);
    log = logged(&g);
    assert_int_equal(count(log, "is not started: cannot create its Kubernetes client: test: server "
                                "\"http://127.0.0.1:1\" cannot be combined with tls-server-name "
                                "\"api.example\""),
                     15);
    assert_non_null(strstr(log, "the nodes watch (all namespaces) is not started"));
    assert_non_null(strstr(log, "its alerts say nothing about nodes\n"));
    assert_non_null(strstr(log, "the controllerrevisions watch (web) is not started"));
    assert_non_null(strstr(log, "the rollouts of StatefulSets and DaemonSets in namespace web\n"));
    assert_non_null(strstr(log, "change tracking: 0 of 15 watches started"));
    free(log);
    assert_int_equal(says(&g.d, "web", "Deployment", "api", NULL), 0);
    assert_int_equal(says(&g.d, "web", "StatefulSet", "db", NULL), 0);
    assert_int_equal(says(&g.d, "web", "Pod", "solo", "node-1"), 0);
    rig_down(&g);
}

/* Without memory for a watch's client, that watch is left out and set-up
 * goes on; without memory for the tracker, the daemon runs without change
 * tracking. Never a failed start, never a leak (ASan). (The warnings are
 * not checked here: without memory the log drops its lines.) */
struct sweep {
    long partial; /* runs with some watches left out */
    long none;    /* runs without change tracking */
};

static long sweep_run(void *ud, long n)
{
    struct sweep *sw = ud;
    struct rig g;
    long used;

    rig_up(&g, "shop,web", 0);
    krc_mem_fail_after(n);
    krc_daemon_track_setup(&g.d);
    used = krc_mem_fail_after(-1);
    if (g.d.track == NULL) {
        assert_null(g.d.track_watches);
        assert_int_equal(g.d.n_track_watches, 0);
        sw->none++;
    } else {
        assert_non_null(g.d.track_watches);
        assert_true(g.d.n_track_watches <= 15);
        sw->partial += g.d.n_track_watches < 15;
    }
    rig_down(&g);
    return used;
}

static void test_setup_without_memory(void **state)
{
    struct sweep sw = {0, 0};
    (void)state;

    assert_true(krc_test_alloc_sweep(sweep_run, &sw) > 15);
    assert_true(sw.partial > 0);
    assert_true(sw.none > 0);
}

/* Past KRC_DAEMON_TRACK_MANY_NAMESPACES namespaces, the cost is logged once. */
static void test_many_namespaces_logged(void **state)
{
    struct rig g;
    char *log;
    (void)state;

    assert_int_equal(KRC_DAEMON_TRACK_MANY_NAMESPACES, 4);
    rig_up(&g, "a,b,c,d", 0);
    krc_daemon_track_setup(&g.d);
    assert_int_equal(g.d.n_track_watches, 7 * 4 + 1);
    log = logged(&g);
    assert_null(strstr(log, "watched namespaces"));
    free(log);
    rig_down(&g);

    rig_up(&g, "a,b,c,d,e", 0);
    krc_daemon_track_setup(&g.d);
    assert_int_equal(g.d.n_track_watches, 7 * 5 + 1);
    log = logged(&g);
    assert_int_equal(count(log, "change tracking: 5 watched namespaces: 36 watches, each its own "
                                "thread and API connection"),
                     1);
    free(log);
    rig_down(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch_without_thread),
        cmocka_unit_test(test_watches_without_client),
        cmocka_unit_test(test_setup_without_memory),
        cmocka_unit_test(test_many_namespaces_logged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
