/* MCP tools benchmark: tools/call latency on a history of many restarts.
 *
 * Fills a database file (in a temporary directory) with N restarts (default
 * 100,000) spread over the last 7 days: 40 namespaces, 2,000 workloads of
 * 3 pods, causes and nodes from small sets, one pod in 50 holding GPUs, each
 * with a ~2 KB report JSON. Then serves the tools through the whole MCP path
 * (krc_mcp_handle: JSON-RPC parse, argument checks, the store query, the
 * result JSON) and prints, per call, the median and the worst wall time of
 * `-r` runs, the median CPU time of the thread (what the call costs whatever
 * else the machine runs), and "SLOW" for a wall median over 100 ms.
 *
 * Usage: bench_mcp [-n restarts] [-r runs] [-k] [-d DB] [-o LABEL]
 *   -k keeps the database; -d uses one a previous -k kept (no fill);
 *   -o runs only the calls whose label contains LABEL (for a profiler).
 * Build without sanitizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"

#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/error.h"

static int fill(const char *path, long n)
{
    static const enum krc_cause causes[] = {KRC_CAUSE_OOM_KILLED, KRC_CAUSE_APP_ERROR,
                                            KRC_CAUSE_LIVENESS_PROBE_FAILED, KRC_CAUSE_SEGFAULT};
    struct krc_store *s = NULL;
    struct krc_error err;
    char report[2600];
    char pad[2049];
    int64_t now = krc_clock_now();

    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = '\0';
    if (krc_store_open(path, 0, &s, &err) < 0) {
        fprintf(stderr, "bench_mcp: %s\n", err.msg);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        struct krc_store_restart r;
        char uid[48], ns[16], pod[48], wl[32], node[16];
        long w = i % 2000;
        memset(&r, 0, sizeof(r));
        snprintf(uid, sizeof(uid), "uid-%ld-%ld", w, (i / 2000) % 3);
        snprintf(ns, sizeof(ns), "ns-%02ld", w % 40);
        snprintf(wl, sizeof(wl), "app-%04ld", w);
        snprintf(pod, sizeof(pod), "app-%04ld-7d9c8b6f5-%05ld", w, (i / 2000) % 3);
        snprintf(node, sizeof(node), "node-%03ld", (w * 7) % 300);
        snprintf(report, sizeof(report),
                 "{\"version\":1,\"diagnosis\":{\"cause\":\"x\",\"gpus\":%d},"
                 "\"log\":{\"text\":\"%s\\n\"}}",
                 w % 50 == 0 ? 4 : 0, pad);
        r.pod_uid = uid;
        r.container = "app";
        r.restart_count = (int)(i / 6000) + 1;
        r.namespace = ns;
        r.pod = pod;
        r.workload_kind = "Deployment";
        r.workload_name = wl;
        r.node = node;
        r.cause = causes[i % 4];
        r.has_exit_code = 1;
        r.exit_code = 137;
        r.finished_at = now - 7 * 86400 + i * (7 * 86400 / n);
        r.detected_at = r.finished_at + 1;
        r.decision = "alert";
        r.summary = "container app restarted";
        r.report_json = report;
        r.gpus = w % 50 == 0 ? 4 : 0;
        if (krc_store_record(s, &r, NULL, NULL, NULL, &err) < 0) {
            fprintf(stderr, "bench_mcp: %s\n", err.msg);
            krc_store_close(s);
            return -1;
        }
    }
    krc_store_close(s);
    return 0;
}

static const char *only; /* -o */

static void run(struct krc_mcp *m, const char *label, const char *args, int runs)
{
    char req[1024];
    double t[256];
    double cpu[256];
    struct krc_buf out;
    struct krc_error err;
    int status;
    size_t bytes = 0;

    if (only != NULL && strstr(label, only) == NULL) {
        return;
    }
    snprintf(req, sizeof(req),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":%s}", args);
    krc_buf_init(&out, 64u << 20);
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        double c0 = bench_cpu_ms();
        krc_buf_reset(&out);
        if (krc_mcp_handle(m, NULL, req, strlen(req), NULL, &out, &status, &err) < 0 ||
            strstr(krc_buf_str(&out), "\"isError\":false") == NULL) {
            fprintf(stderr, "bench_mcp: %s failed: %.300s\n", label, krc_buf_str(&out));
            exit(1);
        }
        t[i] = bench_now_ms() - t0;
        cpu[i] = bench_cpu_ms() - c0;
        bytes = out.len;
    }
    krc_buf_cleanup(&out);
    qsort(t, (size_t)runs, sizeof(t[0]), bench_cmp_double);
    qsort(cpu, (size_t)runs, sizeof(cpu[0]), bench_cmp_double);
    printf("%-36s median %7.2f ms  max %7.2f ms  cpu median %7.2f ms  %7zu bytes%s\n", label,
           t[runs / 2], t[runs - 1], cpu[runs / 2], bytes, t[runs / 2] > 100.0 ? "  SLOW" : "");
}

int main(int argc, char **argv)
{
    long n = 100000;
    int runs = 21;
    int keep = 0;
    int opt;
    char dir[] = "/tmp/krc-bench-mcp-XXXXXX";
    char path[256];
    char first[300];
    const char *reuse = NULL;
    struct krc_mcp_tools_config tc;
    struct krc_mcp_tools *tools = NULL;
    struct krc_mcp *m = NULL;
    struct krc_error err;
    double t0;

    while ((opt = getopt(argc, argv, "n:r:kd:o:")) != -1) {
        if (opt == 'd') {
            reuse = optarg;
        } else if (opt == 'o') {
            only = optarg;
        } else if (opt == 'k') {
            keep = 1;
        } else if (opt == 'n') {
            n = strtol(optarg, NULL, 10);
        } else if (opt == 'r') {
            runs = (int)strtol(optarg, NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_mcp [-n restarts] [-r runs] [-k] [-d DB] [-o LABEL]\n");
            return 2;
        }
    }
    if (n < 6000 || runs < 1 || runs > 256 || (reuse == NULL && mkdtemp(dir) == NULL)) {
        fprintf(stderr, "bench_mcp: need -n >= 6000, 1 <= -r <= 256 and a temporary directory\n");
        return 2;
    }
    if (reuse != NULL) {
        snprintf(path, sizeof(path), "%s", reuse);
        keep = 1;
    } else {
        snprintf(path, sizeof(path), "%s/krc.db", dir);
        t0 = bench_now_ms();
        if (fill(path, n) < 0) {
            return 1;
        }
        printf("filled %ld restarts in %.1f s\n", n, (bench_now_ms() - t0) / 1e3);
    }
    memset(&tc, 0, sizeof(tc));
    tc.db_path = path;
    if (krc_mcp_tools_new(&tc, &tools, &err) < 0 || krc_mcp_tools_server(tools, &m, &err) < 0) {
        fprintf(stderr, "bench_mcp: %s\n", err.msg);
        return 1;
    }
    snprintf(first, sizeof(first), "{\"name\":\"get_restart_report\",\"arguments\":{\"id\":%ld}}",
             n / 2);
    run(m, "list_restarts (50 newest)", "{\"name\":\"list_restarts\",\"arguments\":{}}", runs);
    run(m, "list_restarts namespace, limit 200",
        "{\"name\":\"list_restarts\",\"arguments\":{\"namespace\":\"ns-07\",\"limit\":200}}", runs);
    run(m, "list_restarts cause + since 1d",
        "{\"name\":\"list_restarts\",\"arguments\":{\"cause\":\"segfault\",\"since\":\"1d\"}}",
        runs);
    run(m, "list_restarts workload",
        "{\"name\":\"list_restarts\",\"arguments\":{\"workload\":\"app-0042\"}}", runs);
    run(m, "get_restart_report", first, runs);
    run(m, "pod_restart_timeline pod",
        "{\"name\":\"pod_restart_timeline\",\"arguments\":{\"namespace\":\"ns-02\","
        "\"pod\":\"app-0042-7d9c8b6f5-00001\"}}",
        runs);
    run(m, "restart_summary (24h)", "{\"name\":\"restart_summary\",\"arguments\":{}}", runs);
    run(m, "restart_summary (7d, everything)",
        "{\"name\":\"restart_summary\",\"arguments\":{\"since\":\"8d\"}}", runs);
    krc_mcp_free(m);
    krc_mcp_tools_free(tools);
    if (keep) {
        printf("kept %s\n", path);
        return 0;
    }
    unlink(path);
    snprintf(first, sizeof(first), "%s/krc.db-wal", dir);
    unlink(first);
    snprintf(first, sizeof(first), "%s/krc.db-shm", dir);
    unlink(first);
    rmdir(dir);
    return 0;
}
