/* Store benchmark: record N realistic restarts (report JSON of ~5-10 KB and
 * a pending Slack alert each, one transaction per restart as the pipeline
 * does), then time the queries `krc history` runs, retention batches and
 * the start-up quick_check.
 *
 *   bench_store [--dir DIR] [--sizes 10000,100000] [--full-sync N]
 *
 * Restarts are spread one per 30 s back from now, so `--since 1h` matches
 * 120 of them whatever N is. 99% of the alerts are marked delivered. Prints
 * one block per size; nothing is asserted (see docs/performance.md).
 *
 *   bench_store --soak [--dir DIR] [--restarts 100000] [--max-rows 10000]
 *
 * Retention soak: records the restarts as the daemon does, with the
 * daemon's prune loop (batch 100, max_rows, a 365-day max_age) after every
 * 1,000 records, and exits 1 unless the row count stays within max_rows +
 * 1,000, the file size at the end is within 10% of its size after 2 x
 * max_rows restarts, and the 50 oldest restarts, whose alerts stay
 * pending, are all still stored.
 *
 *   bench_store --incidents [--dir DIR] [--restarts 1000000] [--incident-count 20000]
 *               [--changes 50000]
 *
 * Issue 27: a store of N restarts (one per 2.6 s back from now: 30 days for
 * 1M; the first restart of an incident with a full report JSON of about 6 KB,
 * the repeats, which the pipeline mutes, with a short one) in incidents of N / incident-count
 * consecutive restarts of one workload (2,000 workloads in 40 namespaces on
 * 500 nodes; the first restart of each alerts, delivered; each incident ends
 * when the next one of the store begins, the newest 50 stay open), and
 * `--changes` changes (each workload's revisions and each node's updates,
 * spread over the 30 days). Records through the API (the record rate with
 * incidents is printed), then times on a read-only connection what
 * `list_incidents` and `what_changed` (MCP, krc history) run: median and
 * worst of 11. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "krc/util/clock.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/mem.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/store/store.h"

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

/* A report like the collector builds for a crash-looping pod, with about
 * log_cap bytes of previous log (6000 gives 10.9 KB of JSON). */
static char *make_report_json(int variant, size_t log_cap)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    char *json = NULL;
    char line[200];
    char *log;
    size_t log_len = 0;

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

/* ---- retention soak (issue 4) -------------------------------------------- */

#define SOAK_INTERVAL 1000 /* records between two prune loops: the once-a-minute thread */
#define SOAK_PRINT 5000    /* records between two progress lines */
#define SOAK_PENDING 50    /* restarts whose alert stays pending to the end */
#define SOAK_BATCH 100     /* as pruner_main in src/daemon/daemon.c */
#define SOAK_MAX_AGE ((int64_t)365 * 86400)
#define SOAK_VARIANTS 8

static char *make_body(size_t len)
{
    char *b = krc_malloc(len + 1);
    if (b == NULL) {
        fprintf(stderr, "bench_store: out of memory\n");
        exit(1);
    }
    memset(b, 'x', len);
    memcpy(b, "{\"text\":\"", 9);
    memcpy(b + len - 2, "\"}", 2);
    b[len] = '\0';
    return b;
}

/* The retention loop of pruner_main (src/daemon/daemon.c), without its 20 ms pauses
 * between calls: prune until a call deletes nothing. Returns milliseconds. */
static double prune_loop(struct krc_store *s, int64_t max_rows, int64_t *ret_total)
{
    struct krc_error e;
    int64_t deleted;
    int64_t total = 0;
    double t0 = now_ms();

    do {
        deleted = 0;
        if (krc_store_prune(s, SOAK_MAX_AGE, max_rows, SOAK_BATCH, &deleted, &e) < 0) {
            die("prune", &e);
        }
        total += deleted;
    } while (deleted > 0);
    *ret_total = total;
    return now_ms() - t0;
}

static int within(long value, long ref, double frac)
{
    double d = (double)value - (double)ref;
    return (d < 0 ? -d : d) <= frac * (double)ref;
}

/* Record n restarts as the daemon does (restart + pending alert in one
 * transaction, then mark it delivered), with retention max_rows and the
 * daemon's prune loop after every SOAK_INTERVAL records. The first
 * SOAK_PENDING alerts (the oldest restarts, the first that retention would
 * take) are never delivered. Returns the number of failed checks. */
static int run_soak(const char *dir, long n, long max_rows)
{
    char path[1024];
    char side[1100];
    char *json[SOAK_VARIANTS];
    char *body[SOAK_VARIANTS];
    int64_t pending_id[SOAK_PENDING];
    struct krc_store *s = NULL;
    struct krc_store *ro = NULL;
    struct krc_store_stats st;
    struct krc_store_filter f;
    struct krc_error e;
    int64_t now = (int64_t)time(NULL);
    int64_t peak_rows = 0;
    int64_t worst_after = 0;
    long ref_at = 2 * max_rows;
    long ref_db = 0;
    long ref_total = 0;
    long db = 0;
    long wal = 0;
    long max_db = 0;
    long max_total = 0;
    long rows;
    double worst_prune = 0;
    double prune_sum = 0;
    double t_start = now_ms();
    double t_block = t_start;
    double dt;
    uint32_t rnd = 12345;
    size_t json_min = SIZE_MAX;
    size_t json_max = 0;
    size_t json_sum = 0;
    int failures = 0;
    int lost = 0;

    for (int v = 0; v < SOAK_VARIANTS; v++) {
        json[v] = make_report_json(v, 2000 + (size_t)v * 860);
        body[v] = make_body(3000 + (size_t)v * 285);
        json_sum += strlen(json[v]);
        json_min = strlen(json[v]) < json_min ? strlen(json[v]) : json_min;
        json_max = strlen(json[v]) > json_max ? strlen(json[v]) : json_max;
    }
    snprintf(path, sizeof(path), "%s/bench-soak.db", dir);
    unlink(path);
    if (krc_store_open(path, 0, &s, &e) < 0) {
        die("open", &e);
    }
    printf("== retention soak: %ld restarts, max_rows %ld, max_age %lld d, prune loop (batch %d) "
           "every %d records\n",
           n, max_rows, (long long)(SOAK_MAX_AGE / 86400), SOAK_BATCH, SOAK_INTERVAL);
    printf("report JSON %zu-%zu bytes (mean %zu), alert body 3000-4995 bytes, %d alerts kept "
           "pending\n",
           json_min, json_max, json_sum / SOAK_VARIANTS, SOAK_PENDING);
    printf("%8s %13s %7s %9s %8s %9s %10s %9s\n", "records", "rows (before)", "pending", "db MiB",
           "WAL MiB", "total MiB", "prune ms", "records/s");
    for (long i = 0; i < n; i++) {
        char uid[64];
        char pod[64];
        char ns[32];
        char key[128];
        struct krc_store_restart r;
        struct krc_store_outbox m;
        int64_t rid;
        int64_t oid;
        int jv;
        int bv;

        rnd = rnd * 1103515245u + 12345u;
        jv = (int)((rnd >> 16) % SOAK_VARIANTS);
        bv = (int)((rnd >> 24) % SOAK_VARIANTS);
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
        r.report_json = json[jv];
        memset(&m, 0, sizeof(m));
        m.kind = KRC_STORE_KIND_ALERT;
        m.destination = "webhook:default";
        m.thread_key = key;
        m.body = body[bv];
        if (krc_store_record(s, &r, &m, &rid, &oid, &e) != 0) {
            die("record", &e);
        }
        if (i < SOAK_PENDING) {
            pending_id[i] = rid;
        } else if (krc_store_mark_delivered(s, oid, NULL, &e) < 0) {
            die("mark", &e);
        }
        if ((i + 1) % SOAK_INTERVAL == 0) {
            int64_t before;
            int64_t deleted;

            if (krc_store_stats(s, &st, &e) < 0) {
                die("stats", &e);
            }
            before = st.restarts;
            peak_rows = before > peak_rows ? before : peak_rows;
            dt = prune_loop(s, max_rows, &deleted);
            worst_prune = dt > worst_prune ? dt : worst_prune;
            prune_sum += dt;
            if (krc_store_stats(s, &st, &e) < 0) {
                die("stats", &e);
            }
            worst_after = st.restarts > worst_after ? st.restarts : worst_after;
            db = file_size(path);
            wal = (long)st.wal_bytes;
            max_db = db > max_db ? db : max_db;
            max_total = db + wal > max_total ? db + wal : max_total;
            if (i + 1 == ref_at) {
                ref_db = db;
                ref_total = db + wal;
            }
            if ((i + 1) % SOAK_PRINT == 0) {
                double now_t = now_ms();
                printf("%8ld %6lld (%5lld) %7lld %9.1f %8.1f %9.1f %10.0f %9.0f\n", i + 1,
                       (long long)st.restarts, (long long)before, (long long)st.pending,
                       (double)db / 1048576.0, (double)wal / 1048576.0,
                       (double)(db + wal) / 1048576.0, dt, SOAK_PRINT * 1000.0 / (now_t - t_block));
                fflush(stdout);
                t_block = now_t;
            }
        }
    }
    dt = now_ms() - t_start;
    printf("total: %.0f s, %.0f restarts/s including retention; prune loop mean %.0f ms, worst "
           "%.0f ms (%ld loops)\n",
           dt / 1000.0, (double)n * 1000.0 / dt, prune_sum / (double)(n / SOAK_INTERVAL),
           worst_prune, n / SOAK_INTERVAL);
    printf("database file after %ld restarts: %.1f MiB (with WAL %.1f MiB); after %ld: %.1f MiB "
           "(with WAL %.1f MiB); largest seen: %.1f MiB (with WAL %.1f MiB)\n",
           ref_at, (double)ref_db / 1048576.0, (double)ref_total / 1048576.0, n,
           (double)db / 1048576.0, (double)(db + wal) / 1048576.0, (double)max_db / 1048576.0,
           (double)max_total / 1048576.0);

    /* checks */
    if (peak_rows > max_rows + SOAK_INTERVAL) {
        printf("FAIL: %lld rows before a prune loop, more than max_rows + %d = %ld\n",
               (long long)peak_rows, SOAK_INTERVAL, max_rows + SOAK_INTERVAL);
        failures++;
    } else {
        printf("ok: at most %lld rows (max_rows + one interval = %ld)\n", (long long)peak_rows,
               max_rows + SOAK_INTERVAL);
    }
    if (worst_after > max_rows) {
        printf("FAIL: %lld rows after a prune loop, more than max_rows %ld\n",
               (long long)worst_after, max_rows);
        failures++;
    } else {
        printf("ok: at most %lld rows after every prune loop\n", (long long)worst_after);
    }
    if (!within(db, ref_db, 0.10) || !within(db + wal, ref_total, 0.10)) {
        printf("FAIL: file size after %ld restarts (%ld bytes, with WAL %ld) is not within 10%% "
               "of its size after %ld (%ld bytes, with WAL %ld)\n",
               n, db, db + wal, ref_at, ref_db, ref_total);
        failures++;
    } else {
        printf("ok: file size after %ld restarts differs by %+.2f%% (with WAL %+.2f%%) from its "
               "size after %ld\n",
               n, ((double)db / (double)ref_db - 1.0) * 100.0,
               ((double)(db + wal) / (double)ref_total - 1.0) * 100.0, ref_at);
    }
    if (st.pending != SOAK_PENDING) {
        printf("FAIL: %lld pending alerts at the end, expected %d\n", (long long)st.pending,
               SOAK_PENDING);
        failures++;
    }
    for (int k = 0; k < SOAK_PENDING; k++) {
        struct krc_store_entry *ent = NULL;
        int rc = krc_store_get(s, pending_id[k], &ent, &e);
        if (rc == KRC_ENOTFOUND) {
            printf("FAIL: restart %lld with a pending alert was pruned\n",
                   (long long)pending_id[k]);
            lost++;
        } else if (rc < 0) {
            die("get", &e);
        } else if (ent->n_messages != 1 || ent->messages[0].state != KRC_STORE_PENDING ||
                   ent->report_json == NULL) {
            printf("FAIL: restart %lld lost its pending alert or its report\n",
                   (long long)pending_id[k]);
            lost++;
        }
        krc_store_entry_free(ent);
    }
    failures += lost;
    if (st.pending == SOAK_PENDING && lost == 0) {
        printf("ok: all %d restarts with a pending alert (the oldest) are still stored\n",
               SOAK_PENDING);
    }

    /* what `krc history --since 1h` runs, on its own read-only connection */
    if (krc_store_open(path, KRC_STORE_READONLY, &ro, &e) < 0) {
        die("open read-only", &e);
    }
    memset(&f, 0, sizeof(f));
    f.since = now - 3600;
    f.limit = 50;
    dt = time_list(ro, &f, &rows);
    printf("list --since 1h (limit 50):  %.2f ms, %ld rows\n", dt, rows);
    f.limit = 0;
    dt = time_list(ro, &f, &rows);
    printf("list --since 1h (no limit):  %.2f ms, %ld rows\n", dt, rows);
    if (rows != 120) {
        printf("FAIL: list --since 1h found %ld rows, expected 120\n", rows);
        failures++;
    }
    krc_store_close(ro);
    krc_store_close(s);
    unlink(path);
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
    for (int v = 0; v < SOAK_VARIANTS; v++) {
        krc_free(json[v]);
        krc_free(body[v]);
    }
    if (failures == 0) {
        printf("soak: PASS\n");
    } else {
        printf("soak: FAIL (%d checks)\n", failures);
    }
    return failures;
}

/* ---- incidents and changes (issue 27) ---------------------------------------------- */

#define INC_WORKLOADS 2000
#define INC_NAMESPACES 40
#define INC_NODES 500
#define INC_OPEN 50
#define INC_RUNS 11

static int count_incident(const struct krc_store_incident *i, void *ud)
{
    (void)i;
    ((struct counter *)ud)->rows++;
    return 0;
}

static int count_change(const struct krc_store_change *c, void *ud)
{
    (void)c;
    ((struct counter *)ud)->rows++;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* kind 0: krc_store_incidents_list(f), 1: krc_store_changes_list(cf), 2:
 * krc_store_incident_get(id); median and worst of INC_RUNS. */
static void time_query(struct krc_store *s, const char *label, int kind,
                       const struct krc_store_incident_filter *f,
                       const struct krc_store_change_filter *cf, int64_t id)
{
    double t[INC_RUNS];
    struct counter c = {0};
    struct krc_error e;

    for (int rep = 0; rep < INC_RUNS; rep++) {
        struct krc_store_incident_detail *d = NULL;
        double t0 = now_ms();
        int rc;
        c.rows = 0;
        rc = kind == 0   ? krc_store_incidents_list(s, f, count_incident, &c, &e)
             : kind == 1 ? krc_store_changes_list(s, cf, count_change, &c, &e)
                         : krc_store_incident_get(s, id, &d, &e);
        if (rc < 0) {
            die(label, &e);
        }
        if (d != NULL) {
            c.rows = (long)d->n_messages + (d->first != NULL) + (d->latest != NULL);
            krc_store_incident_detail_free(d);
        }
        t[rep] = now_ms() - t0;
    }
    qsort(t, INC_RUNS, sizeof(t[0]), cmp_double);
    printf("%-46s %7.2f ms median, %7.2f ms worst, %ld rows\n", label, t[INC_RUNS / 2],
           t[INC_RUNS - 1], c.rows);
}

static void record_changes(struct krc_store *s, long n_changes, int64_t now)
{
    struct krc_error e;
    long per = n_changes / (INC_WORKLOADS + INC_NODES);

    for (long k = 0; k < n_changes; k++) {
        struct krc_store_change c;
        char ns[32], name[64], rev[32], summary[160], detail[512];
        long obj = k % (INC_WORKLOADS + INC_NODES);
        long v = k / (INC_WORKLOADS + INC_NODES);
        int node = obj >= INC_WORKLOADS;

        memset(&c, 0, sizeof(c));
        snprintf(ns, sizeof(ns), "ns-%ld", obj % INC_NAMESPACES);
        snprintf(name, sizeof(name), node ? "ip-10-0-%ld" : "web-%ld",
                 node ? obj - INC_WORKLOADS : obj);
        snprintf(rev, sizeof(rev), "%ld", v + 1);
        snprintf(summary, sizeof(summary),
                 node ? "kubelet v1.33.%ld → v1.33.%ld"
                      : "image web:1.%ld.0 → web:1.%ld.1; memory limit 1Gi → 512Mi",
                 v, v + 1);
        c.namespace = node ? "" : ns;
        c.kind = node ? "Node" : "Deployment";
        c.name = name;
        c.revision = rev;
        c.manager = "kubectl-client-side-apply";
        c.summary = summary;
        /* spread over 30 days, each object's revisions in order */
        c.at = now - 30 * 86400 + (v * 30 * 86400) / (per > 0 ? per : 1) + obj % 3600;
        snprintf(detail, sizeof(detail),
                 "{\"kind\":\"%s\",\"namespace\":\"%s\",\"name\":\"%s\",\"revision\":\"%s\","
                 "\"items\":[\"%s\"]}",
                 c.kind, c.namespace, name, rev, summary);
        c.detail_json = detail;
        if (krc_store_record_change(s, &c, &e) < 0) {
            die("record change", &e);
        }
    }
}

/* A muted repeat's report: the cheap diagnosis, no log collected. */
#define REPEAT_JSON                                                                                \
    "{\"version\":1,\"pod\":{\"namespace\":\"shop\",\"name\":\"web-5d9f8c7b6-x2k4q\"},"            \
    "\"diagnosis\":{\"cause\":\"oom_killed\",\"confidence\":\"high\",\"summary\":\"container app " \
    "was OOM-killed (limit 512Mi)\",\"signals\":[\"exit_code_137\",\"reason_oomkilled\"]},"        \
    "\"containers\":[{\"name\":\"app\",\"restart_count\":7,\"last_state\":{\"reason\":"            \
    "\"OOMKilled\",\"exit_code\":137}}]}"

static int64_t record_incidents(struct krc_store *s, long n, long n_inc, int64_t now,
                                const char *json, const char *body)
{
    struct krc_error e;
    long per = n / n_inc;
    int64_t inc_id = 0, probe = 0;
    double t0 = now_ms();

    for (long i = 0; i < n; i++) {
        long inc = i / per;
        long wl = (inc * 7919) % INC_WORKLOADS; /* workloads in no order */
        char uid[64], pod[64], ns[32], name[32], node[32], key[128];
        struct krc_store_incident_ref ref;
        struct krc_store_restart r;
        struct krc_store_outbox m;
        int64_t oid = 0;

        snprintf(uid, sizeof(uid), "uid-%ld-%ld", wl, (i % per) / 10);
        snprintf(pod, sizeof(pod), "web-%ld-%ld", wl, (i % per) / 10);
        snprintf(ns, sizeof(ns), "ns-%ld", wl % INC_NAMESPACES);
        snprintf(name, sizeof(name), "web-%ld", wl);
        snprintf(node, sizeof(node), "ip-10-0-%ld", wl % INC_NODES);
        snprintf(key, sizeof(key), "%s/%s", ns, pod);
        memset(&r, 0, sizeof(r));
        memset(&ref, 0, sizeof(ref));
        r.pod_uid = uid;
        r.container = "app";
        r.restart_count = (int)(i % 10) + 1;
        r.namespace = ns;
        r.pod = pod;
        r.workload_kind = "Deployment";
        r.workload_name = name;
        r.node = node;
        r.cause = inc % 3 == 0 ? KRC_CAUSE_APP_ERROR : KRC_CAUSE_OOM_KILLED;
        r.has_exit_code = 1;
        r.exit_code = 137;
        r.finished_at = now - (n - i) * 26 / 10 - 1;
        r.container_id = "containerd://0f6e8a52";
        r.detected_at = now - (n - i) * 26 / 10;
        r.decision = i % per == 0 ? "alert" : "muted";
        r.summary = "container app was OOM-killed (limit 512Mi)";
        r.message = "OOMKilled: shop/web container app";
        r.report_json = i % per == 0 ? json : REPEAT_JSON;
        ref.id = i % per == 0 ? 0 : inc_id;
        ref.thread_key = key;
        r.incident = &ref;
        memset(&m, 0, sizeof(m));
        m.kind = KRC_STORE_KIND_ALERT;
        m.destination = "api:#ops";
        m.thread_key = key;
        m.body = body;
        if (krc_store_record(s, &r, i % per == 0 ? &m : NULL, NULL, &oid, &e) != 0) {
            die("record", &e);
        }
        if (oid > 0 && krc_store_mark_delivered(s, oid, "1800000000.000100", &e) < 0) {
            die("mark", &e);
        }
        inc_id = ref.ret_id;
        if (inc == n_inc / 2 && i % per == 0) {
            probe = inc_id;
        }
        /* the last restart of its incident: it ends, unless among the newest */
        if (i % per == per - 1 && inc < n_inc - INC_OPEN &&
            krc_store_incident_end(s, inc_id, r.detected_at + 600, NULL, 0, NULL, &e) < 0) {
            die("end", &e);
        }
        if ((i + 1) % 100000 == 0) {
            fprintf(stderr, "bench_store: %ld restarts recorded\n", i + 1);
        }
    }
    printf("record with incidents (1 tx each, %ld incidents): %.0f restarts/s\n", n_inc,
           (double)n * 1000.0 / (now_ms() - t0));
    return probe;
}

static void run_incidents(const char *dir, long n, long n_inc, long n_changes)
{
    char path[1024];
    struct krc_store *s = NULL;
    struct krc_store_stats st;
    struct krc_store_incident_filter f;
    struct krc_store_change_filter cf;
    struct krc_error e;
    const char *nodes[2] = {"ip-10-0-7", "ip-10-0-8"};
    int64_t now = (int64_t)time(NULL);
    char *json = make_report_json(2, 1000);
    char *body = make_body(2000);
    int64_t probe;
    double t0;

    snprintf(path, sizeof(path), "%s/bench-incidents-%ld.db", dir, n);
    unlink(path);
    if (krc_store_open(path, 0, &s, &e) < 0) {
        die("open", &e);
    }
    printf("== %ld restarts in %ld incidents, %ld changes (report JSON %zu bytes first, %zu "
           "repeats)\n",
           n, n_inc, n_changes, strlen(json), strlen(REPEAT_JSON));
    probe = record_incidents(s, n, n_inc, now, json, body);
    t0 = now_ms();
    record_changes(s, n_changes, now);
    printf("record changes: %.0f changes/s\n", (double)n_changes * 1000.0 / (now_ms() - t0));
    if (krc_store_stats(s, &st, &e) < 0) {
        die("stats", &e);
    }
    printf("database: %.1f MiB, %lld restarts\n", (double)st.db_bytes / 1048576.0,
           (long long)st.restarts);
    krc_store_close(s);

    if (krc_store_open(path, KRC_STORE_READONLY, &s, &e) < 0) {
        die("open read-only", &e);
    }
    memset(&f, 0, sizeof(f));
    f.limit = 50;
    time_query(s, "list_incidents (limit 50)", 0, &f, NULL, 0);
    f.since = now - 86400;
    time_query(s, "list_incidents --since 24h (limit 50)", 0, &f, NULL, 0);
    f.since = 0;
    f.namespace = "ns-7";
    time_query(s, "list_incidents --namespace ns-7 (limit 50)", 0, &f, NULL, 0);
    f.namespace = NULL;
    f.open_only = 1;
    time_query(s, "list_incidents --open (limit 50)", 0, &f, NULL, 0);
    f.open_only = 0;
    f.since = now - 86400;
    f.namespace = "ns-7";
    f.before_id = n_inc - 10;
    time_query(s, "list_incidents ns-7 --since 24h, a later page", 0, &f, NULL, 0);
    f.since = now - 30 * 86400;
    f.namespace = NULL;
    f.before_id = n_inc / 2;
    time_query(s, "list_incidents --since 30d, page at the middle", 0, &f, NULL, 0);
    time_query(s, "get_incident (first, latest, messages)", 2, NULL, NULL, probe);

    memset(&cf, 0, sizeof(cf));
    cf.namespace = "ns-7";
    cf.kind = "Deployment";
    cf.name = "web-7";
    cf.nodes = nodes;
    cf.n_nodes = 2;
    cf.limit = 50;
    time_query(s, "what_changed workload + 2 nodes (limit 50)", 1, NULL, &cf, 0);
    cf.since = now - 7 * 86400;
    time_query(s, "what_changed workload + 2 nodes --since 7d", 1, NULL, &cf, 0);
    cf.since = now - 3 * 86400;
    cf.until = now - 86400;
    cf.limit = 5;
    time_query(s, "what_changed 2 days before a crash (limit 5)", 1, NULL, &cf, 0);
    memset(&cf, 0, sizeof(cf));
    cf.namespace = "ns-7";
    cf.limit = 50;
    time_query(s, "what_changed namespace ns-7 (limit 50)", 1, NULL, &cf, 0);
    krc_store_close(s);
    krc_free(json);
    krc_free(body);
    unlink(path);
}

static int parse_count(const char *opt, const char *text, long min, long *ret)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min) {
        fprintf(stderr, "bench_store: %s: '%s' is not a number >= %ld\n", opt, text, min);
        return -1;
    }
    *ret = v;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_store [--dir DIR] [--sizes N,M] [--full-sync N]\n"
                    "       bench_store --soak [--dir DIR] [--restarts N] [--max-rows N]\n"
                    "       bench_store --incidents [--dir DIR] [--restarts N] "
                    "[--incident-count N] [--changes N]\n");
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";
    const char *sizes = "10000,100000";
    long full_n = 1000;
    long soak_n = 100000;
    long soak_rows = 10000;
    int soak = 0;
    int incidents = 0;
    long inc_n = 1000000;
    long inc_count = 20000;
    long inc_changes = 50000;
    char *json;
    char body[4096];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--soak") == 0) {
            soak = 1;
            continue;
        }
        if (strcmp(argv[i], "--incidents") == 0) {
            incidents = 1;
            continue;
        }
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        if (strcmp(argv[i], "--dir") == 0) {
            dir = argv[i + 1];
        } else if (strcmp(argv[i], "--sizes") == 0) {
            sizes = argv[i + 1];
        } else if (strcmp(argv[i], "--full-sync") == 0) {
            if (parse_count(argv[i], argv[i + 1], 0, &full_n) < 0) {
                return 2;
            }
        } else if (strcmp(argv[i], "--restarts") == 0) {
            if (parse_count(argv[i], argv[i + 1], SOAK_INTERVAL, &soak_n) < 0) {
                return 2;
            }
            inc_n = soak_n;
        } else if (strcmp(argv[i], "--incident-count") == 0) {
            if (parse_count(argv[i], argv[i + 1], 2 * INC_OPEN, &inc_count) < 0) {
                return 2;
            }
        } else if (strcmp(argv[i], "--changes") == 0) {
            if (parse_count(argv[i], argv[i + 1], INC_WORKLOADS + INC_NODES, &inc_changes) < 0) {
                return 2;
            }
        } else if (strcmp(argv[i], "--max-rows") == 0) {
            if (parse_count(argv[i], argv[i + 1], 2 * SOAK_PENDING, &soak_rows) < 0) {
                return 2;
            }
        } else {
            usage();
            return 2;
        }
        i++;
    }
    if (incidents) {
        if (inc_n < inc_count) {
            fprintf(stderr, "bench_store: --restarts must be at least --incident-count\n");
            return 2;
        }
        run_incidents(dir, inc_n, inc_count, inc_changes);
        return 0;
    }
    if (soak) {
        if (soak_n % SOAK_INTERVAL != 0 || soak_n < 2 * soak_rows ||
            2 * soak_rows % SOAK_INTERVAL != 0) {
            fprintf(stderr,
                    "bench_store: --soak needs --restarts a multiple of %d and at least twice "
                    "--max-rows, and 2 x --max-rows a multiple of %d\n",
                    SOAK_INTERVAL, SOAK_INTERVAL);
            return 2;
        }
        return run_soak(dir, soak_n, soak_rows) == 0 ? 0 : 1;
    }
    json = make_report_json(1, 6000);
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
