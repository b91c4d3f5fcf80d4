/* Store benchmark: record N realistic restarts (report JSON of ~5-10 KB and
 * a pending Slack alert each, one transaction per restart as the pipeline
 * does), then time the queries `krc history` runs, retention batches and
 * the start-up quick_check.
 *
 *   bench_store [--dir DIR] [--sizes 10000,100000] [--full-sync N]
 *
 * Restarts are spread one per 30 s back from now, so `--since 1h` matches
 * 120 of them whatever N is. 99% of the alerts are marked delivered. Prints
 * one block per size; nothing is asserted (see docs/performance.md). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "krc/clock.h"
#include "krc/diagnose.h"
#include "krc/mem.h"
#include "krc/report.h"
#include "krc/report_json.h"
#include "krc/store.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const struct krc_error *e)
{
    fprintf(stderr, "bench_store: %s: %s\n", what, e->msg);
    exit(1);
}

/* A report like the collector builds for a crash-looping pod. */
static char *make_report_json(int variant)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    char *json = NULL;
    char line[200];
    char *log;
    size_t log_len = 0;
    size_t log_cap = 6000;

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    r.namespace = krc_strdup("shop");
    r.name = krc_strdup("web-5d9f8c7b6-x2k4q");
    r.uid = krc_strdup("0f6e8a52-3c1d-4b9a-9f7e-2d5c8b1a4e60");
    r.node_name = krc_strdup("ip-10-0-12-34.eu-west-1.compute.internal");
    r.owner_kind = krc_strdup("ReplicaSet");
    r.owner_name = krc_strdup("web-5d9f8c7b6");
    r.phase = krc_strdup("Running");
    krc_kv_list_put(&r.labels, "app.kubernetes.io/name", "web");
    krc_kv_list_put(&r.labels, "pod-template-hash", "5d9f8c7b6");
    krc_kv_list_put(&r.annotations, "prometheus.io/scrape", "true");
    for (int i = 0; i < 2; i++) {
        struct krc_report_container *c = krc_report_add_container(&r);
        c->name = krc_strdup(i == 0 ? "app" : "istio-proxy");
        c->image = krc_strdup(i == 0 ? "registry.example.com/shop/web:1.42.7"
                                     : "docker.io/istio/proxyv2:1.22.3");
        c->restart_count = 7;
        c->state = KRC_REPORT_STATE_WAITING;
        c->state_reason = krc_strdup("CrashLoopBackOff");
        c->state_message = krc_strdup("back-off 5m0s restarting failed container=app");
        c->last.present = 1;
        c->last.exit_code = 137;
        c->last.reason = krc_strdup("OOMKilled");
        c->last.started_at = 1800000000;
        c->last.finished_at = 1800000300;
        c->last.container_id = krc_strdup("containerd://4f1b2c3d4e5f60718293a4b5c6d7e8f9");
        krc_kv_list_put(&c->limits, "memory", "512Mi");
        krc_kv_list_put(&c->limits, "cpu", "1");
        krc_kv_list_put(&c->requests, "memory", "256Mi");
        c->has_liveness = 1;
        c->has_readiness = 1;
    }
    for (int i = 0; i < 6; i++) {
        struct krc_report_event *ev = krc_report_add_event(&r);
        ev->type = krc_strdup(i % 2 ? "Warning" : "Normal");
        ev->reason = krc_strdup(i % 2 ? "BackOff" : "Pulled");
        ev->message = krc_strdup(i % 2 ? "Back-off restarting failed container app in pod "
                                         "web-5d9f8c7b6-x2k4q_shop(0f6e8a52)"
                                       : "Container image \"registry.example.com/shop/web:1.42.7\" "
                                         "already present on machine");
        ev->count = 3 + i;
        ev->first_timestamp = 1800000000 + i;
        ev->last_timestamp = 1800000300 + i;
        ev->object_kind = krc_strdup("Pod");
        ev->object_namespace = krc_strdup("shop");
        ev->object_name = krc_strdup("web-5d9f8c7b6-x2k4q");
        ev->source_component = krc_strdup("kubelet");
    }
    r.node.present = 1;
    r.node.name = krc_strdup("ip-10-0-12-34.eu-west-1.compute.internal");
    r.node.kubelet_version = krc_strdup("v1.31.2-eks-7f9249a");
    r.node.n_conditions = 0;
    krc_report_add_note(&r, "previous log cut to the last 100 lines");
    log = malloc(log_cap);
    while (log != NULL) {
        int n = snprintf(line, sizeof(line),
                         "2026-12-02T17:30:%02dZ INFO request id=%06d path=/api/cart/%d "
                         "status=200 duration_ms=%d\n",
                         (int)(log_len / 100) % 60, variant, (int)log_len, (int)log_len % 97);
        if (log_len + (size_t)n > log_cap) {
            break;
        }
        memcpy(log + log_len, line, (size_t)n);
        log_len += (size_t)n;
    }
    if (log == NULL || krc_report_set_log(&r, "app", log, log_len, 1, NULL) < 0 ||
        krc_diagnose(&r, "app", &d, &e) < 0 || krc_report_json_build(&r, &d, NULL, &json, &e) < 0) {
        fprintf(stderr, "bench_store: cannot build the report\n");
        exit(1);
    }
    free(log);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return json;
}

struct counter {
    long rows;
};

static int count_row(const struct krc_store_row *row, void *ud)
{
    struct counter *c = ud;
    (void)row;
    c->rows++;
    return 0;
}

static double time_list(struct krc_store *s, const struct krc_store_filter *f, long *ret_rows)
{
    struct counter c = {0};
    struct krc_error e;
    double best = 1e9;

    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ms();
        c.rows = 0;
        if (krc_store_list(s, f, count_row, &c, &e) < 0) {
            die("list", &e);
        }
        double dt = now_ms() - t0;
        best = dt < best ? dt : best;
    }
    *ret_rows = c.rows;
    return best;
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : 0;
}

static void run_size(const char *dir, long n, const char *json, const char *body)
{
    char path[1024];
    struct krc_store *s = NULL;
    struct krc_store *ro = NULL;
    struct krc_error e;
    int64_t now = (int64_t)time(NULL);
    double t0;
    double dt;
    long rows;
    struct krc_store_filter f;
    struct krc_store_stats st;
    int64_t deleted;
    double worst = 0;

    snprintf(path, sizeof(path), "%s/bench-%ld.db", dir, n);
    unlink(path);
    if (krc_store_open(path, 0, &s, &e) < 0) {
        die("open", &e);
    }
    t0 = now_ms();
    for (long i = 0; i < n; i++) {
        char uid[64];
        char pod[64];
        char ns[32];
        char key[128];
        struct krc_store_restart r;
        struct krc_store_outbox m;
        int64_t oid;

        snprintf(uid, sizeof(uid), "uid-%ld", i % 5000);
        snprintf(pod, sizeof(pod), "web-%ld", i % 5000);
        snprintf(ns, sizeof(ns), "ns-%ld", i % 40);
        snprintf(key, sizeof(key), "%s/%s", ns, pod);
        memset(&r, 0, sizeof(r));
        r.pod_uid = uid;
        r.container = "app";
        r.restart_count = (int)(i / 5000) + 1;
        r.namespace = ns;
        r.pod = pod;
        r.workload_kind = "Deployment";
        r.workload_name = "web";
        r.node = "ip-10-0-12-34";
        r.cause = (i % 7 == 0) ? KRC_CAUSE_APP_ERROR : KRC_CAUSE_OOM_KILLED;
        r.has_exit_code = 1;
        r.exit_code = 137;
        r.signal = 9;
        r.reason = "OOMKilled";
        r.started_at = now - (n - i) * 30 - 300;
        r.finished_at = now - (n - i) * 30 - 1;
        r.detected_at = now - (n - i) * 30 + 15;
        r.decision = "alert";
        r.summary = "container app was OOM-killed (limit 512Mi)";
        r.message = "OOMKilled: shop/web container app";
        r.report_json = json;
        memset(&m, 0, sizeof(m));
        m.kind = KRC_STORE_KIND_ALERT;
        m.destination = "webhook:default";
        m.thread_key = key;
        m.body = body;
        if (krc_store_record(s, &r, &m, NULL, &oid, &e) != 0) {
            die("record", &e);
        }
        if (i % 100 != 0 && krc_store_mark_delivered(s, oid, NULL, &e) < 0) {
            die("mark", &e);
        }
    }
    dt = now_ms() - t0;
    printf("== %ld restarts (report JSON %zu bytes, alert body %zu bytes)\n", n, strlen(json),
           strlen(body));
    printf("record (1 tx each) + mark 99%% delivered: %.0f ms, %.0f restarts/s\n", dt,
           (double)n * 1000.0 / dt);
    if (krc_store_stats(s, &st, &e) < 0) {
        die("stats", &e);
    }
    printf("database: %.1f MiB (+ WAL %.1f MiB), %lld pending\n", (double)st.db_bytes / 1048576.0,
           (double)st.wal_bytes / 1048576.0, (long long)st.pending);

    /* the reader `krc history` opens */
    t0 = now_ms();
    if (krc_store_open(path, KRC_STORE_READONLY, &ro, &e) < 0) {
        die("open read-only", &e);
    }
    printf("open read-only: %.2f ms\n", now_ms() - t0);
    memset(&f, 0, sizeof(f));
    f.since = now - 3600;
    f.limit = 50;
    dt = time_list(ro, &f, &rows);
    printf("list --since 1h (limit 50):            %7.2f ms, %ld rows\n", dt, rows);
    f.limit = 0;
    dt = time_list(ro, &f, &rows);
    printf("list --since 1h (no limit):            %7.2f ms, %ld rows\n", dt, rows);
    memset(&f, 0, sizeof(f));
    f.limit = 50;
    dt = time_list(ro, &f, &rows);
    printf("list (limit 50):                       %7.2f ms, %ld rows\n", dt, rows);
    f.namespace = "ns-7";
    dt = time_list(ro, &f, &rows);
    printf("list --namespace ns-7 (limit 50):      %7.2f ms, %ld rows\n", dt, rows);
    f.namespace = NULL;
    f.cause = "app_error";
    f.since = now - 86400;
    dt = time_list(ro, &f, &rows);
    printf("list --cause app_error --since 1d:     %7.2f ms, %ld rows\n", dt, rows);
    f.cause = NULL;
    f.since = 0;
    f.pod = "web-4999";
    dt = time_list(ro, &f, &rows);
    printf("list --pod web-4999 (prefix, index):   %7.2f ms, %ld rows\n", dt, rows);
    krc_store_close(ro);

    /* retention: single batches of 500 (the longest a writer waits), then
     * the rest down to a quarter of the rows, then by age */
    for (int size = 100; size <= 500; size += 400) {
        worst = 0;
        for (int b = 0; b < 5; b++) {
            if (krc_store_stats(s, &st, &e) < 0) {
                die("stats", &e);
            }
            t0 = now_ms();
            if (krc_store_prune(s, 0, st.restarts - size, size, &deleted, &e) < 0) {
                die("prune", &e);
            }
            dt = now_ms() - t0;
            worst = dt > worst ? dt : worst;
        }
        printf("prune one batch of %d:                %7.2f ms worst of 5\n", size, worst);
    }
    t0 = now_ms();
    if (krc_store_prune(s, 0, n / 4, 500, &deleted, &e) < 0) {
        die("prune", &e);
    }
    dt = now_ms() - t0;
    printf("prune to %ld rows (batches of 500):    %7.0f ms, %lld deleted\n", n / 4, dt,
           (long long)deleted);
    t0 = now_ms();
    if (krc_store_prune(s, (int64_t)(n / 8) * 30, 0, 500, &deleted, &e) < 0) {
        die("prune", &e);
    }
    dt = now_ms() - t0;
    printf("prune by age (older than %ld h):        %7.0f ms, %lld deleted\n", n / 8 * 30 / 3600,
           dt, (long long)deleted);
    krc_store_close(s);
    printf("file after pruning: %.1f MiB\n", (double)file_size(path) / 1048576.0);

    t0 = now_ms();
    if (krc_store_open(path, KRC_STORE_QUICK_CHECK, &s, &e) < 0) {
        die("open with quick_check", &e);
    }
    printf("open with quick_check:                 %7.0f ms\n", now_ms() - t0);
    krc_store_close(s);
    unlink(path);
}

static void run_sync_full(const char *dir, long n, const char *json, const char *body)
{
    char path[1024];
    struct krc_store *s = NULL;
    struct krc_error e;
    double t0;
    double dt;

    for (int full = 0; full <= 1; full++) {
        snprintf(path, sizeof(path), "%s/bench-sync.db", dir);
        unlink(path);
        if (krc_store_open(path, full ? KRC_STORE_SYNC_FULL : 0, &s, &e) < 0) {
            die("open", &e);
        }
        t0 = now_ms();
        for (long i = 0; i < n; i++) {
            char uid[32];
            struct krc_store_restart r;
            struct krc_store_outbox m;
            snprintf(uid, sizeof(uid), "uid-%ld", i);
            memset(&r, 0, sizeof(r));
            r.pod_uid = uid;
            r.container = "app";
            r.namespace = "ns";
            r.pod = "pod";
            r.detected_at = (int64_t)time(NULL);
            r.decision = "alert";
            r.report_json = json;
            memset(&m, 0, sizeof(m));
            m.destination = "webhook:default";
            m.body = body;
            if (krc_store_record(s, &r, &m, NULL, NULL, &e) != 0) {
                die("record", &e);
            }
        }
        dt = now_ms() - t0;
        printf("synchronous=%s: %ld records in %.0f ms (%.2f ms each)\n", full ? "FULL" : "NORMAL",
               n, dt, dt / (double)n);
        krc_store_close(s);
        unlink(path);
    }
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";
    const char *sizes = "10000,100000";
    long full_n = 1000;
    char *json;
    char body[4096];

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--dir") == 0) {
            dir = argv[i + 1];
        } else if (strcmp(argv[i], "--sizes") == 0) {
            sizes = argv[i + 1];
        } else if (strcmp(argv[i], "--full-sync") == 0) {
            full_n = strtol(argv[i + 1], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_store [--dir DIR] [--sizes N,M] [--full-sync N]\n");
            return 2;
        }
    }
    json = make_report_json(1);
    memset(body, 'x', sizeof(body) - 1);
    body[sizeof(body) - 1] = '\0';
    memcpy(body, "{\"text\":\"", 9);
    memcpy(body + sizeof(body) - 3, "\"}", 2);
    for (const char *p = sizes; *p != '\0';) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n <= 0) {
            fprintf(stderr, "bench_store: bad --sizes %s\n", sizes);
            return 2;
        }
        run_size(dir, n, json, body);
        p = *end == ',' ? end + 1 : end;
    }
    if (full_n > 0) {
        run_sync_full(dir, full_n, json, body);
    }
    krc_free(json);
    return 0;
}
