/* Health on its own: the endpoint on 127.0.0.1 (port 0) over two watch
 * scopes whose counters the test sets, read back with plain HTTP requests:
 * /readyz (synced, API reachable, history usable), /healthz (a stuck watch
 * loop), /readyz/replica without leader election, and /metrics (the loops'
 * counters copied as deltas, the reload counter). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/config/config.h"
#include "krc/daemon/health.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

struct env {
    struct krc_config cfg;
    struct krc_health_watch watches[2];
    struct krc_pipeline_status status;
    struct krc_health health;
};

static void env_start(struct env *v)
{
    memset(v, 0, sizeof(*v));
    krc_config_init(&v->cfg);
    krc_free(v->cfg.listen);
    v->cfg.listen = krc_strdup("127.0.0.1:0");
    assert_non_null(v->cfg.listen);
    krc_pipeline_status_init(&v->status);
    v->watches[0].namespace = "shop";
    v->watches[1].namespace = "web";
    krc_health_init(&v->health);
    v->health.cfg = &v->cfg;
    v->health.watches = v->watches;
    v->health.n_watches = 2;
    v->health.status = &v->status;
    assert_int_equal(krc_health_start(&v->health, NULL), 0);
    assert_non_null(v->health.http);
}

static void env_stop(struct env *v)
{
    krc_health_stop(&v->health);
    krc_health_cleanup(&v->health);
    krc_pipeline_status_cleanup(&v->status);
    krc_config_cleanup(&v->cfg);
}

/* GET path; returns the status code, the body in body (size bytes). */
static int get(struct env *v, const char *path, char *body, size_t size)
{
    static char resp[65536];
    struct sockaddr_in a;
    char req[256];
    size_t got = 0;
    ssize_t n;
    int status = 0;
    const char *sep;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)krc_http_server_port(v->health.http));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", path);
    assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    while (got < sizeof(resp) - 1 && (n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0) {
        got += (size_t)n;
    }
    close(fd);
    resp[got] = '\0';
    assert_int_equal(sscanf(resp, "HTTP/1.1 %d", &status), 1);
    sep = strstr(resp, "\r\n\r\n");
    snprintf(body, size, "%s", sep != NULL ? sep + 4 : "");
    return status;
}

static void synced(struct env *v)
{
    for (int i = 0; i < 2; i++) {
        atomic_store(&v->watches[i].stats.synced, 1);
        atomic_store(&v->watches[i].stats.last_ok_mono_ms, krc_clock_mono_ms());
    }
}

static void test_readiness(void **state)
{
    struct env v;
    char body[4096];
    (void)state;

    env_start(&v);
    atomic_store(&v.watches[0].stats.synced, 1);
    atomic_store(&v.watches[0].stats.last_ok_mono_ms, krc_clock_mono_ms());
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 503);
    assert_non_null(strstr(body, "pods (web) not synced yet"));
    synced(&v);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 200);
    assert_int_equal(get(&v, "/readyz/replica", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "ok: ready"));

    atomic_store(&v.watches[1].stats.last_error_mono_ms, krc_clock_mono_ms() + 1);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 503);
    assert_non_null(strstr(body, "Kubernetes API unreachable (web)"));
    synced(&v);
    atomic_store(&v.watches[1].stats.last_ok_mono_ms, krc_clock_mono_ms() + 2);

    krc_pipeline_store_failed(&v.status, "disk I/O error");
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 503);
    assert_non_null(strstr(body, "history database unavailable: disk I/O error"));
    assert_int_equal(get(&v, "/readyz/replica", body, sizeof(body)), 503);
    atomic_store(&v.status.store_fault, 0); /* a later write succeeded */
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 200);
    /* another worker still holds records the database refused */
    atomic_store(&v.status.unwritten, 2);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 503);
    assert_non_null(strstr(body, "2 restart(s) kept in memory to be recorded"));
    atomic_store(&v.status.unwritten, 0);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 200);
    env_stop(&v);
}

/* A synced watch that has delivered nothing (no event, no bookmark, no
 * list) for more than twice watchBookmarkInterval is not ready, whatever
 * bytes it receives; krc_ready says the same at every scrape, probed or not. */
static void test_readiness_of_a_silent_watch(void **state)
{
    struct env v;
    static char body[65536];
    int64_t limit_ms;
    (void)state;

    env_start(&v);
    assert_int_equal(v.cfg.watch_bookmark_interval_s, 60);
    limit_ms = v.cfg.watch_bookmark_interval_s * 2000;
    synced(&v);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 200);
    assert_int_equal(get(&v, "/metrics", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\nkrc_ready 1\n"));
    /* just under the limit: still ready (a bookmark is due about every minute) */
    atomic_store(&v.watches[0].stats.last_ok_mono_ms, krc_clock_mono_ms() - limit_ms + 5000);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 200);
    /* over it: 503 naming the watch; bytes and heartbeats do not count */
    atomic_store(&v.watches[0].stats.last_ok_mono_ms, krc_clock_mono_ms() - limit_ms - 5000);
    atomic_store(&v.watches[0].stats.heartbeat_mono_ms, krc_clock_mono_ms());
    atomic_store(&v.watches[0].stats.bytes, 123456);
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 503);
    assert_non_null(strstr(body, "pod watch (shop) has delivered no event or bookmark for 12"));
    assert_non_null(strstr(body, "twice the 60s watchBookmarkInterval"));
    /* the gauge follows at scrape time without a /readyz request */
    synced(&v);
    assert_int_equal(get(&v, "/metrics", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\nkrc_ready 1\n"));
    atomic_store(&v.watches[1].stats.last_ok_mono_ms, krc_clock_mono_ms() - limit_ms - 1000);
    assert_int_equal(get(&v, "/metrics", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\nkrc_ready 0\n"));
    /* a bookmark arrives */
    atomic_store(&v.watches[1].stats.last_ok_mono_ms, krc_clock_mono_ms());
    assert_int_equal(get(&v, "/readyz", body, sizeof(body)), 200);
    assert_int_equal(get(&v, "/metrics", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\nkrc_ready 1\n"));
    env_stop(&v);
}

static void test_liveness(void **state)
{
    struct env v;
    char body[4096];
    int64_t limit_ms;
    (void)state;

    env_start(&v);
    assert_int_equal(get(&v, "/healthz", body, sizeof(body)), 200);
    limit_ms = v.cfg.watch_idle_timeout_s * 1000 + 120000;
    atomic_store(&v.watches[1].stats.heartbeat_mono_ms, krc_clock_mono_ms() - limit_ms - 5000);
    assert_int_equal(get(&v, "/healthz", body, sizeof(body)), 503);
    assert_non_null(strstr(body, "watch loop (web) stuck for"));
    atomic_store(&v.watches[1].stats.heartbeat_mono_ms, krc_clock_mono_ms());
    assert_int_equal(get(&v, "/healthz", body, sizeof(body)), 200);
    env_stop(&v);
}

/* The loops' counters reach /metrics as deltas: a scrape adds what grew
 * since the last one, so a counter never goes back. */
static void test_metrics(void **state)
{
    struct env v;
    static char body[65536];
    (void)state;

    env_start(&v);
    atomic_store(&v.watches[0].pods_tracked, 3);
    atomic_store(&v.watches[1].pods_tracked, 4);
    atomic_store(&v.watches[0].stats.events_added, 5);
    atomic_store(&v.watches[1].stats.events_added, 2);
    atomic_store(&v.watches[0].stats.skipped_oversized, 1);
    atomic_store(&v.watches[1].stats.skipped_oversized, 2);
    atomic_store(&v.watches[1].stats.skipped_undecodable, 4);
    atomic_store(&v.watches[1].stats.malformed_lists, 1);
    atomic_store(&v.status.not_posted, 2);
    atomic_store(&v.status.intentional, 3);
    krc_pipeline_store_failed(&v.status, "locked");
    krc_health_reloaded(&v.health, 1);
    krc_health_reloaded(&v.health, 0);
    krc_health_reloaded(&v.health, 0);
    assert_int_equal(get(&v, "/metrics", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\nkrc_pods_tracked 7\n"));
    assert_non_null(strstr(body, "krc_watch_events_total{type=\"ADDED\"} 7\n"));
    assert_non_null(strstr(body, "krc_watch_objects_skipped_total{reason=\"oversized\"} 3\n"));
    assert_non_null(strstr(body, "krc_watch_objects_skipped_total{reason=\"undecodable\"} 4\n"));
    assert_non_null(strstr(body, "krc_watch_restarts_total{reason=\"malformed\"} 1\n"));
    assert_non_null(strstr(body, "krc_notifications_total{result=\"not_posted\"} 2\n"));
    assert_non_null(strstr(body, "krc_notifications_total{result=\"intentional\"} 3\n"));
    assert_non_null(strstr(body, "\nkrc_store_errors_total 1\n"));
    assert_non_null(strstr(body, "\nkrc_store_unwritten_records 0\n"));
    assert_non_null(strstr(body, "krc_config_reloads_total{result=\"success\"} 1\n"));
    assert_non_null(strstr(body, "krc_config_reloads_total{result=\"failure\"} 2\n"));
    assert_null(strstr(body, "krc_leader ")); /* no leader election */

    atomic_store(&v.watches[1].stats.events_added, 4);
    atomic_store(&v.status.unwritten, 3);
    assert_int_equal(get(&v, "/metrics", body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\nkrc_store_unwritten_records 3\n"));
    assert_non_null(strstr(body, "krc_watch_events_total{type=\"ADDED\"} 9\n"));
    env_stop(&v);
}

/* listen: off registers the metrics but serves nothing. */
static void test_listen_off(void **state)
{
    struct krc_config cfg;
    struct krc_pipeline_status status;
    struct krc_health h;
    (void)state;

    krc_config_init(&cfg);
    krc_free(cfg.listen);
    cfg.listen = krc_strdup("off");
    krc_pipeline_status_init(&status);
    krc_health_init(&h);
    h.cfg = &cfg;
    h.status = &status;
    assert_int_equal(krc_health_start(&h, NULL), 0);
    assert_null(h.http);
    assert_non_null(h.metrics);
    assert_non_null(h.std.restarts_detected);
    krc_health_stop(&h);
    krc_health_cleanup(&h);
    krc_pipeline_status_cleanup(&status);
    krc_config_cleanup(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readiness),  cmocka_unit_test(test_readiness_of_a_silent_watch),
        cmocka_unit_test(test_liveness),   cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_listen_off),
    };
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
