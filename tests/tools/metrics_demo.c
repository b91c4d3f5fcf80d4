/* metrics_demo: serve the daemon's metrics, filled with sample values, for
 * tests/integration/test_metrics_promtool.py (promtool and a real Prometheus
 * scrape it).
 *
 *   metrics_demo [--listen HOST:PORT]     default 127.0.0.1:0
 *
 * Prints "port N" on stdout once listening, then serves until SIGTERM or
 * SIGINT, stops the server cleanly and exits 0. The sample data covers every
 * metric type, label escaping (a namespace holding a quote, a backslash and a
 * newline), the namespace cap ("other") and a collect callback. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/serve/http_server.h"
#include "krc/util/log.h"
#include "krc/serve/metrics.h"

struct demo {
    struct krc_metric *queue_length;
    unsigned long scrapes;
};

/* Collect callback: a gauge filled at scrape time. */
static void collect(struct krc_metrics *m, void *userdata)
{
    struct demo *d = userdata;
    (void)m;

    d->scrapes++;
    krc_metric_set(d->queue_length, NULL, (double)(d->scrapes % 7));
}

static int fill(struct krc_metrics *m, struct demo *d, struct krc_error *err)
{
    struct krc_metrics_std std;
    const struct krc_metric_desc queue = {.type = KRC_METRIC_GAUGE,
                                          .name = "krc_queue_length",
                                          .help = "Restarts waiting for a worker."};
    char ns[32];
    int rc;

    rc = krc_metrics_register_std(m, NULL, &std, err);
    if (rc == 0) {
        rc = krc_metrics_register_process(m, err);
    }
    if (rc == 0) {
        rc = krc_metrics_add(m, &queue, &d->queue_length, err);
    }
    if (rc == 0) {
        rc = krc_metrics_add_collector(m, collect, d, err);
    }
    if (rc < 0) {
        return rc;
    }
    /* A namespace needing escapes, then more namespaces than the cap, so
     * "other" appears. */
    krc_metric_inc(std.restarts_detected, (const char *[]){"we\"ird\\ns\n", "killed"});
    for (int i = 0; i < KRC_METRICS_NAMESPACE_CAP + 5; i++) {
        snprintf(ns, sizeof(ns), "ns-%03d", i);
        krc_metric_inc(std.restarts_detected, (const char *[]){ns, "app_error"});
    }
    krc_metric_add(std.restarts_detected, (const char *[]){"ns-000", "oom_killed"}, 3);
    krc_metric_add(std.notifications, (const char *[]){"sent"}, 12);
    krc_metric_inc(std.notifications, (const char *[]){"rate_limited"});
    krc_metric_add(std.watch_events, (const char *[]){"MODIFIED"}, 420);
    krc_metric_add(std.watch_events, (const char *[]){"BOOKMARK"}, 7);
    krc_metric_add(std.watch_restarts, (const char *[]){"timeout"}, 40);
    krc_metric_set(std.pods_tracked, NULL, 1234);
    krc_metric_inc(std.store_errors, NULL);
    for (int i = 0; i < 50; i++) {
        krc_metric_observe(std.restart_to_notification, NULL, 0.02 * i);
    }
    krc_metric_observe(std.restart_to_notification, NULL, 1000);
    krc_metric_set(std.ready, NULL, 1);
    return 0;
}

int main(int argc, char **argv)
{
    const char *listen = "127.0.0.1:0";
    struct krc_error err;
    struct krc_metrics *m = NULL;
    struct krc_http_server *srv = NULL;
    struct demo d;
    sigset_t set;
    int sig = 0;
    int status = 1;

    memset(&d, 0, sizeof(d));
    krc_error_clear(&err);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--listen HOST:PORT]\n", argv[0]);
            return 2;
        }
    }
    krc_log_setup(KRC_LOG_INFO, KRC_LOG_TEXT, 2);
    /* Block the stop signals before any thread starts, then wait for them. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    if (krc_metrics_new(&m, &err) < 0 || fill(m, &d, &err) < 0) {
        goto out;
    }
    {
        struct krc_http_server_config cfg = {.listen = listen, .metrics = m};

        if (krc_http_server_new(&cfg, &srv, &err) < 0 || krc_http_server_start(srv, &err) < 0) {
            goto out;
        }
    }
    printf("port %d\n", krc_http_server_port(srv));
    fflush(stdout);
    if (sigwait(&set, &sig) != 0) {
        goto out;
    }
    krc_http_server_stop(srv);
    status = 0;
out:
    if (status != 0) {
        fprintf(stderr, "metrics_demo: %s\n", err.msg[0] != '\0' ? err.msg : "failed");
    }
    krc_http_server_free(srv);
    krc_metrics_free(m);
    return status;
}
