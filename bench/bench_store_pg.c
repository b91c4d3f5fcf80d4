/* PostgreSQL store benchmark (issue 17): record N restarts through the
 * PostgreSQL backend (a ~6 KB report and one pending alert each, one
 * transaction per restart as the pipeline does), then time the list of
 * `krc history --since 1h` (limit 50, this cluster and every cluster).
 *
 *   KRC_BENCH_PG_URL=postgres://... PGPASSWORD=... bench_store_pg [N] [--password-file F]
 *
 * tests/tools/pg_server.py start DIR gives a server (DIR/url, DIR/password).
 * Restarts are spread one per 30 s back from now, so `--since 1h` matches 120
 * of them whatever N is. Each run writes under a new cluster name. Nothing is
 * asserted: numbers for docs/performance.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/store/backend.h"
#include "krc/util/clock.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int count_row(const struct krc_store_row *row, void *ud)
{
    (void)row;
    (*(long *)ud)++;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of 7 runs of the list, in ms. */
static double time_list(struct krc_store_be *b, const char *cluster, int64_t since, long *rows)
{
    double t[7];
    for (int i = 0; i < 7; i++) {
        struct krc_store_filter f = {.cluster = cluster, .since = since, .limit = 50};
        struct krc_error err = {0};
        double t0 = now_ms();
        *rows = 0;
        if (krc_store_pg_backend.list(b, &f, count_row, rows, &err) != 0) {
            fprintf(stderr, "list: %s\n", err.msg);
            exit(1);
        }
        t[i] = now_ms() - t0;
    }
    qsort(t, 7, sizeof(t[0]), cmp_double);
    return t[3];
}

int main(int argc, char **argv)
{
    const char *url = getenv("KRC_BENCH_PG_URL");
    const char *pwfile = NULL;
    long n = 10000;
    static char report[6200];
    char cluster[64];
    struct krc_store_options o = {0};
    struct krc_store_be *b = NULL;
    struct krc_error err = {0};
    int64_t now = krc_clock_now();
    double t0;
    double ms;
    long rows = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--password-file") == 0 && i + 1 < argc) {
            pwfile = argv[++i];
        } else {
            n = strtol(argv[i], NULL, 10);
        }
    }
    if (url == NULL || n <= 0) {
        fprintf(stderr, "usage: KRC_BENCH_PG_URL=postgres://... bench_store_pg [N] "
                        "[--password-file F]\n");
        return 2;
    }
    snprintf(cluster, sizeof(cluster), "bench-%ld-%ld", (long)getpid(), (long)time(NULL));
    o.cluster = cluster;
    o.password_file = pwfile;
    if (krc_store_pg_backend.open(url, "bench", 0, &o, &b, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    memset(report, 'x', sizeof(report) - 40);
    memcpy(report, "{\"log\":{\"bytes\":6000},\"text\":\"", 31);
    memcpy(report + sizeof(report) - 40, "\"}", 3);
    t0 = now_ms();
    for (long i = 0; i < n; i++) {
        char uid[48];
        struct krc_store_restart r = {0};
        struct krc_store_outbox m = {0};
        int64_t rid = 0;
        int64_t oid = 0;
        snprintf(uid, sizeof(uid), "pod-uid-%ld", i);
        r.pod_uid = uid;
        r.container = "app";
        r.restart_count = 1;
        r.namespace = i % 2 ? "prod" : "staging";
        r.pod = uid;
        r.workload_kind = "Deployment";
        r.workload_name = "api";
        r.node = "node-1";
        r.cause = KRC_CAUSE_OOM_KILLED;
        r.finished_at = now - 30 * i - 1;
        r.container_id = "containerd://0123456789abcdef";
        r.detected_at = now - 30 * i;
        r.decision = "alert";
        r.summary = "out of memory";
        r.message = "the alert text";
        r.report_json = report;
        m.destination = "webhook:default";
        m.thread_key = uid;
        m.body = "{\"text\":\"the alert\",\"blocks\":[]}";
        if (krc_store_pg_backend.record_many(b, &r, &m, 1, &rid, &oid, &err) != 0) {
            fprintf(stderr, "record %ld: %s\n", i, err.msg);
            return 1;
        }
    }
    ms = now_ms() - t0;
    printf("record: %ld restarts in %.0f ms: %.0f restarts/s (one connection, one transaction "
           "each)\n",
           n, ms, (double)n * 1000.0 / ms);
    ms = time_list(b, cluster, now - 3600, &rows);
    printf("list --since 1h --cluster (limit 50): %ld rows, median %.2f ms\n", rows, ms);
    ms = time_list(b, NULL, now - 3600, &rows);
    printf("list --since 1h, every cluster (limit 50): %ld rows, median %.2f ms\n", rows, ms);
    krc_store_pg_backend.close(b);
    return 0;
}
