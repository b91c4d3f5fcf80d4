/* PostgreSQL store benchmark (issue 17), through the store API the daemon
 * uses (krc_store_open_with, krc_store_record_many, krc_store_list):
 *
 *   KRC_BENCH_PG_URL=postgres://... bench_store_pg [--password-file F] [--cluster NAME]
 *       [--fill N [--spacing S]] [--storm N [--conns C] [--rate R]] [--list] [--incident]
 *
 * --fill N    records N restarts, one transaction each as a worker does (a
 *             realistic report JSON of 5-11 KB and one pending alert), the newest
 *             detected now - 1 s and each next one S seconds earlier (default
 *             3.6: `--since 1h` then matches 1,000 of them).
 * --storm N   a restart storm: N restarts detected now, recorded by C threads
 *             with a connection each (the daemon's `workers`), offered at R
 *             restarts/s in total (0: as fast as they go). Each restart is due
 *             at start + k/R; a thread takes the next one when it is free, so a
 *             thread that falls behind builds a backlog as the daemon's queue
 *             does. Prints the sustained rate, the time each record took
 *             (p50/p99/max) and the delay from due to recorded (p50/p99/max).
 * --list      times the list of `krc history --since 1h` (limit 50, this
 *             cluster and every cluster): median and worst of 11 runs.
 * --incident  each restart of --fill and --storm joins the open incident of
 *             its workload, container and cause, or opens one (issue 27: the
 *             record then takes a transaction of 4 statements instead of one
 *             statement).
 * --changes N records N changes (krc_store_record_change, one statement each, as the
 *             daemon drains the tracker) and prints the rate.
 * --incident-queries
 *             times what list_incidents and what_changed (MCP, krc history) run
 *             for this cluster, on the store bench/pg_bench.py `incidents` loads
 *             (workloads web-N in namespace ns-(N % 40) on nodes ip-10-0-(N % 500)):
 *             median and worst of 11 runs.
 *
 * tests/tools/pg_server.py start DIR gives a server (DIR/url, DIR/password);
 * bench/pg_bench.py runs the whole issue 17 benchmark. Nothing is asserted:
 * numbers for docs/performance.md. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

#define N_VARIANTS 8
#define LIST_RUNS 11
#define MAX_CONNS 64

struct opts {
    const char *url;
    const char *password_file;
    const char *cluster;
    long fill;
    double spacing;
    long storm;
    int conns;
    double rate;
    int list;
    int incident;
    int incident_queries;
    long changes;
};

static int g_incident; /* --incident */
static char *g_json[N_VARIANTS];
static char *g_body[N_VARIANTS];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const struct krc_error *e)
{
    fprintf(stderr, "bench_store_pg: %s: %s\n", what, e->msg);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile of sorted v[0..n). */
static double pct(const double *v, long n, double p)
{
    long i = (long)(p / 100.0 * (double)(n - 1) + 0.5);
    return n > 0 ? v[i < n ? i : n - 1] : 0;
}

/* Fill the report of a crash-looping pod (2 containers, 6 events, the node). */
static void fill_report(struct krc_report *r, int variant)
{
    r->namespace = krc_strdup("shop");
    r->name = krc_strdup("web-5d9f8c7b6-x2k4q");
    r->uid = krc_strdup("0f6e8a52-3c1d-4b9a-9f7e-2d5c8b1a4e60");
    r->node_name = krc_strdup("ip-10-0-12-34.eu-west-1.compute.internal");
    r->owner_kind = krc_strdup("ReplicaSet");
    r->owner_name = krc_strdup("web-5d9f8c7b6");
    r->phase = krc_strdup("Running");
    krc_kv_list_put(&r->labels, "app.kubernetes.io/name", "web");
    krc_kv_list_put(&r->labels, "pod-template-hash", "5d9f8c7b6");
    for (int i = 0; i < 2; i++) {
        struct krc_report_container *c = krc_report_add_container(r);
        c->name = krc_strdup(i == 0 ? "app" : "istio-proxy");
        c->image = krc_strdup(i == 0 ? "registry.example.com/shop/web:1.42.7"
                                     : "docker.io/istio/proxyv2:1.22.3");
        c->restart_count = 7 + variant;
        c->state = KRC_REPORT_STATE_WAITING;
        c->state_reason = krc_strdup("CrashLoopBackOff");
        c->state_message = krc_strdup("back-off 5m0s restarting failed container=app");
        c->last.present = 1;
        c->last.exit_code = variant % 2 ? 1 : 137;
        c->last.reason = krc_strdup(variant % 2 ? "Error" : "OOMKilled");
        c->last.started_at = 1800000000;
        c->last.finished_at = 1800000300;
        c->last.container_id = krc_strdup("containerd://4f1b2c3d4e5f60718293a4b5c6d7e8f9");
        krc_kv_list_put(&c->limits, "memory", "512Mi");
        krc_kv_list_put(&c->requests, "memory", "256Mi");
        c->has_liveness = 1;
        c->has_readiness = 1;
    }
    for (int i = 0; i < 6; i++) {
        struct krc_report_event *ev = krc_report_add_event(r);
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
    r->node.present = 1;
    r->node.name = krc_strdup("ip-10-0-12-34.eu-west-1.compute.internal");
    r->node.kubelet_version = krc_strdup("v1.31.2-eks-7f9249a");
    krc_report_add_note(r, "previous log cut to the last 100 lines");
}

/* The report JSON the collector builds (as bench_store.c), with about
 * log_cap bytes of previous log; lines differ per variant. */
static char *make_report_json(int variant, size_t log_cap)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    char *json = NULL;
    char *log = malloc(log_cap);
    size_t log_len = 0;

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    fill_report(&r, variant);
    while (log != NULL) {
        char line[200];
        int n = snprintf(line, sizeof(line),
                         "2026-12-02T17:30:%02dZ INFO request id=%06d path=/api/cart/%d "
                         "status=200 duration_ms=%d\n",
                         (int)(log_len / 100) % 60, variant * 7919 + (int)log_len / 90,
                         (int)log_len, (int)log_len % 97);
        if (log_len + (size_t)n > log_cap) {
            break;
        }
        memcpy(log + log_len, line, (size_t)n);
        log_len += (size_t)n;
    }
    if (log == NULL || krc_report_set_log(&r, "app", log, log_len, 1, NULL) < 0 ||
        krc_diagnose(&r, "app", &d, &e) < 0 || krc_report_json_build(&r, &d, NULL, &json, &e) < 0) {
        fprintf(stderr, "bench_store_pg: cannot build the report\n");
        exit(1);
    }
    free(log);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return json;
}

/* A Slack alert body of len bytes (what the sender posts later). */
static char *make_body(size_t len)
{
    char *b = krc_malloc(len + 1);
    if (b == NULL) {
        fprintf(stderr, "bench_store_pg: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < len; i++) {
        b[i] = (char)('a' + (i * 7 + i / 13) % 26);
    }
    memcpy(b, "{\"text\":\"", 9);
    memcpy(b + len - 2, "\"}", 2);
    b[len] = '\0';
    return b;
}

static struct krc_store *open_pg(const struct opts *o)
{
    struct krc_store_options so = {.cluster = o->cluster, .password_file = o->password_file};
    struct krc_store *s = NULL;
    struct krc_error e = {0};
    if (krc_store_open_with(o->url, 0, &so, &s, &e) < 0) {
        die("open", &e);
    }
    return s;
}

/* Restart k: pod k % 5000 of namespace k % 40; `tag` keeps the pod UIDs of
 * a storm apart from the fill's. */
static void record_one(struct krc_store *s, const char *tag, long k, int64_t detected_at)
{
    char uid[64];
    char pod[64];
    char ns[32];
    char key[128];
    struct krc_store_restart r = {0};
    struct krc_store_outbox m = {0};
    struct krc_store_incident_ref inc = {0};
    struct krc_error e = {0};
    int64_t rid = 0;
    int64_t oid = 0;
    int v = (int)(k % N_VARIANTS);

    snprintf(uid, sizeof(uid), "%s-uid-%ld", tag, k % 5000);
    snprintf(pod, sizeof(pod), "web-%ld-%ld", k % 5000, k % 3);
    snprintf(ns, sizeof(ns), "ns-%ld", k % 40);
    snprintf(key, sizeof(key), "%s/%s", ns, pod);
    r.pod_uid = uid;
    r.container = "app";
    r.restart_count = (int)(k / 5000) + 1;
    r.namespace = ns;
    r.pod = pod;
    r.workload_kind = "Deployment";
    r.workload_name = k % 4 ? "web" : "cart";
    r.node = "ip-10-0-12-34";
    r.cause = v % 2 ? KRC_CAUSE_APP_ERROR : KRC_CAUSE_OOM_KILLED;
    r.has_exit_code = 1;
    r.exit_code = v % 2 ? 1 : 137;
    r.signal = v % 2 ? 0 : 9;
    r.reason = v % 2 ? "Error" : "OOMKilled";
    r.started_at = detected_at - 300;
    r.finished_at = detected_at - 1;
    r.container_id = "containerd://4f1b2c3d4e5f60718293a4b5c6d7e8f9";
    r.detected_at = detected_at;
    r.decision = "alert";
    r.summary = v % 2 ? "container app exited with code 1" : "container app was OOM-killed";
    r.message = v % 2 ? "Error: shop/web container app" : "OOMKilled: shop/web container app";
    r.report_json = g_json[v];
    m.kind = KRC_STORE_KIND_ALERT;
    m.destination = "webhook:default";
    m.thread_key = key;
    m.body = g_body[v];
    if (g_incident) {
        r.incident = &inc;
    }
    if (krc_store_record_many(s, &r, &m, 1, &rid, &oid, &e) != 0) {
        die("record", &e);
    }
}

static void run_fill(const struct opts *o)
{
    struct krc_store *s = open_pg(o);
    int64_t now = krc_clock_now();
    double t0 = now_ms();
    double ms;

    /* oldest first, as they would have been recorded */
    for (long i = o->fill - 1; i >= 0; i--) {
        record_one(s, "fill", i, now - 1 - (int64_t)((double)i * o->spacing));
    }
    ms = now_ms() - t0;
    printf("fill: %ld restarts in %.0f ms: %.0f restarts/s (one connection, one transaction "
           "each), one per %.1f s back from now\n",
           o->fill, ms, (double)o->fill * 1000.0 / ms, o->spacing);
    krc_store_close(s);
}

struct storm {
    const struct opts *o;
    char tag[48];
    double t0;
    atomic_long next;
    double *service; /* per restart: ms its record took */
    double *delay;   /* per restart: ms from due to recorded */
};

static void *storm_thread(void *arg)
{
    struct storm *st = arg;
    struct krc_store *s = open_pg(st->o);
    for (;;) {
        long k = atomic_fetch_add(&st->next, 1);
        double due;
        double t;
        if (k >= st->o->storm) {
            break;
        }
        due = st->o->rate > 0 ? st->t0 + (double)k * 1000.0 / st->o->rate : now_ms();
        while ((t = now_ms()) < due) {
            double wait = due - t;
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(wait * 1e6)};
            nanosleep(&ts, NULL);
        }
        record_one(s, st->tag, k, krc_clock_now());
        st->service[k] = now_ms() - t;
        st->delay[k] = now_ms() - due;
    }
    krc_store_close(s);
    return NULL;
}

static void run_storm(const struct opts *o)
{
    struct storm st = {.o = o};
    pthread_t th[MAX_CONNS];
    double ms;

    snprintf(st.tag, sizeof(st.tag), "storm-%ld-%ld", (long)getpid(), (long)time(NULL));
    st.service = calloc((size_t)o->storm, sizeof(double));
    st.delay = calloc((size_t)o->storm, sizeof(double));
    if (st.service == NULL || st.delay == NULL) {
        fprintf(stderr, "bench_store_pg: out of memory\n");
        exit(1);
    }
    atomic_init(&st.next, 0);
    st.t0 = now_ms();
    for (int i = 0; i < o->conns; i++) {
        if (pthread_create(&th[i], NULL, storm_thread, &st) != 0) {
            fprintf(stderr, "bench_store_pg: cannot start a thread\n");
            exit(1);
        }
    }
    for (int i = 0; i < o->conns; i++) {
        pthread_join(th[i], NULL);
    }
    ms = now_ms() - st.t0;
    qsort(st.service, (size_t)o->storm, sizeof(double), cmp_double);
    qsort(st.delay, (size_t)o->storm, sizeof(double), cmp_double);
    printf("storm: %ld restarts, %d connection(s), offered %s%.0f/s: %.0f ms, sustained %.0f "
           "restarts/s; record ms p50 %.2f p99 %.2f max %.1f; due->recorded ms p50 %.2f p99 "
           "%.1f max %.1f\n",
           o->storm, o->conns, o->rate > 0 ? "" : "unpaced, ", o->rate, ms,
           (double)o->storm * 1000.0 / ms, pct(st.service, o->storm, 50),
           pct(st.service, o->storm, 99), st.service[o->storm - 1], pct(st.delay, o->storm, 50),
           pct(st.delay, o->storm, 99), st.delay[o->storm - 1]);
    free(st.service);
    free(st.delay);
}

static int count_row(const struct krc_store_row *row, void *ud)
{
    (void)row;
    (*(long *)ud)++;
    return 0;
}

static void time_list(struct krc_store *s, const char *cluster, const char *what)
{
    double t[LIST_RUNS];
    long rows = 0;
    for (int i = 0; i < LIST_RUNS; i++) {
        struct krc_store_filter f = {
            .cluster = cluster, .since = krc_clock_now() - 3600, .limit = 50};
        struct krc_error err = {0};
        double t0 = now_ms();
        rows = 0;
        if (krc_store_list(s, &f, count_row, &rows, &err) != 0) {
            die("list", &err);
        }
        t[i] = now_ms() - t0;
    }
    qsort(t, LIST_RUNS, sizeof(t[0]), cmp_double);
    printf("list --since 1h %s (limit 50): %ld rows, median %.2f ms, worst %.2f ms of %d\n", what,
           rows, t[LIST_RUNS / 2], t[LIST_RUNS - 1], LIST_RUNS);
}

static int count_incident(const struct krc_store_incident *i, void *ud)
{
    (void)i;
    (*(long *)ud)++;
    return 0;
}

static int count_change(const struct krc_store_change *c, void *ud)
{
    (void)c;
    (*(long *)ud)++;
    return 0;
}

/* kind 0: incidents_list(f), 1: changes_list(cf), 2: incident_get(id); median and worst of
 * LIST_RUNS */
static void time_incident_query(struct krc_store *s, const char *what, int kind,
                                const struct krc_store_incident_filter *f,
                                const struct krc_store_change_filter *cf, int64_t id)
{
    double t[LIST_RUNS];
    long rows = 0;
    for (int i = 0; i < LIST_RUNS; i++) {
        struct krc_error err = {0};
        double t0 = now_ms();
        int rc;
        rows = 0;
        struct krc_store_incident_detail *d = NULL;
        rc = kind == 0   ? krc_store_incidents_list(s, f, count_incident, &rows, &err)
             : kind == 1 ? krc_store_changes_list(s, cf, count_change, &rows, &err)
                         : krc_store_incident_get(s, id, &d, &err);
        if (rc != 0) {
            die(what, &err);
        }
        if (d != NULL) {
            rows = (long)d->n_messages + (d->first != NULL) + (d->latest != NULL);
            krc_store_incident_detail_free(d);
        }
        t[i] = now_ms() - t0;
    }
    qsort(t, LIST_RUNS, sizeof(t[0]), cmp_double);
    printf("%-46s %7.2f ms median, %7.2f ms worst, %ld rows\n", what, t[LIST_RUNS / 2],
           t[LIST_RUNS - 1], rows);
}

static void run_incident_queries(const struct opts *o)
{
    struct krc_store *s = open_pg(o);
    const char *nodes[2] = {"ip-10-0-7", "ip-10-0-8"};
    int64_t now = krc_clock_now();
    struct krc_store_incident_filter f = {.cluster = o->cluster, .limit = 50};
    struct krc_store_change_filter cf = {.cluster = o->cluster,
                                         .namespace = "ns-7",
                                         .kind = "Deployment",
                                         .name = "web-7",
                                         .nodes = nodes,
                                         .n_nodes = 2,
                                         .limit = 50};

    time_incident_query(s, "list_incidents (limit 50)", 0, &f, NULL, 0);
    f.since = now - 86400;
    time_incident_query(s, "list_incidents --since 24h (limit 50)", 0, &f, NULL, 0);
    f.since = 0;
    f.namespace = "ns-7";
    time_incident_query(s, "list_incidents --namespace ns-7 (limit 50)", 0, &f, NULL, 0);
    f.namespace = NULL;
    f.open_only = 1;
    time_incident_query(s, "list_incidents --open (limit 50)", 0, &f, NULL, 0);
    f.open_only = 0;
    f.since = now - 30 * 86400;
    f.before_id = 10000;
    time_incident_query(s, "list_incidents --since 30d, page at the middle", 0, &f, NULL, 0);
    f.since = now - 86400;
    f.namespace = "ns-7";
    f.before_id = 19990;
    time_incident_query(s, "list_incidents ns-7 --since 24h, a later page", 0, &f, NULL, 0);
    time_incident_query(s, "get_incident (first, latest, messages)", 2, NULL, NULL, 10001);
    time_incident_query(s, "what_changed workload + 2 nodes (limit 50)", 1, NULL, &cf, 0);
    cf.since = now - 7 * 86400;
    time_incident_query(s, "what_changed workload + 2 nodes --since 7d", 1, NULL, &cf, 0);
    cf.since = now - 3 * 86400;
    cf.until = now - 86400;
    cf.limit = 5;
    time_incident_query(s, "what_changed 2 days before a crash (limit 5)", 1, NULL, &cf, 0);
    memset(&cf, 0, sizeof(cf));
    cf.cluster = o->cluster;
    cf.namespace = "ns-7";
    cf.limit = 50;
    time_incident_query(s, "what_changed namespace ns-7 (limit 50)", 1, NULL, &cf, 0);
    krc_store_close(s);
}

static void run_changes(const struct opts *o)
{
    struct krc_store *s = open_pg(o);
    int64_t now = krc_clock_now();
    double t0 = now_ms();
    double ms;

    for (long k = 0; k < o->changes; k++) {
        char name[64], rev[32];
        struct krc_store_change c = {.namespace = "ns-1",
                                     .kind = "ReplicaSet",
                                     .name = name,
                                     .revision = rev,
                                     .manager = "kube-controller-manager",
                                     .summary = "image web:1.0 → web:1.1",
                                     .detail_json = "{\"kind\":\"Deployment\",\"items\":[]}",
                                     .at = now - k};
        struct krc_error e = {0};
        snprintf(name, sizeof(name), "web-%ld", k % 30000);
        snprintf(rev, sizeof(rev), "%ld-%ld", now, k);
        if (krc_store_record_change(s, &c, &e) < 0) {
            die("record change", &e);
        }
    }
    ms = now_ms() - t0;
    printf("changes: %ld in %.0f ms: %.0f changes/s (one connection, one statement each)\n",
           o->changes, ms, (double)o->changes * 1000.0 / ms);
    krc_store_close(s);
}

static void usage(void)
{
    fprintf(stderr, "usage: KRC_BENCH_PG_URL=postgres://... bench_store_pg [--password-file F] "
                    "[--cluster NAME] [--fill N [--spacing S]] [--storm N [--conns C] [--rate R]] "
                    "[--list] [--incident] [--incident-queries] [--changes N]\n");
    exit(2);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--list") == 0) {
            o->list = 1;
            continue;
        }
        if (strcmp(a, "--incident") == 0) {
            o->incident = 1;
            continue;
        }
        if (strcmp(a, "--incident-queries") == 0) {
            o->incident_queries = 1;
            continue;
        }
        if (v == NULL) {
            usage();
        }
        i++;
        if (strcmp(a, "--password-file") == 0) {
            o->password_file = v;
        } else if (strcmp(a, "--cluster") == 0) {
            o->cluster = v;
        } else if (strcmp(a, "--fill") == 0) {
            o->fill = strtol(v, NULL, 10);
        } else if (strcmp(a, "--spacing") == 0) {
            o->spacing = strtod(v, NULL);
        } else if (strcmp(a, "--storm") == 0) {
            o->storm = strtol(v, NULL, 10);
        } else if (strcmp(a, "--conns") == 0) {
            o->conns = (int)strtol(v, NULL, 10);
        } else if (strcmp(a, "--changes") == 0) {
            o->changes = strtol(v, NULL, 10);
        } else if (strcmp(a, "--rate") == 0) {
            o->rate = strtod(v, NULL);
        } else {
            usage();
        }
    }
    if (o->url == NULL || o->fill < 0 || o->storm < 0 || o->spacing < 1 || o->conns < 1 ||
        o->conns > MAX_CONNS || o->rate < 0 ||
        (o->fill == 0 && o->storm == 0 && !o->list && !o->incident_queries && o->changes <= 0)) {
        usage();
    }
}

int main(int argc, char **argv)
{
    struct opts o = {
        .url = getenv("KRC_BENCH_PG_URL"), .cluster = "bench", .spacing = 3.6, .conns = 1};
    size_t jmin = SIZE_MAX;
    size_t jmax = 0;

    parse_args(argc, argv, &o);
    g_incident = o.incident;
    for (int v = 0; v < N_VARIANTS; v++) {
        g_json[v] = make_report_json(v, 2000 + (size_t)v * 860);
        g_body[v] = make_body(3000 + (size_t)v * 285);
        jmin = strlen(g_json[v]) < jmin ? strlen(g_json[v]) : jmin;
        jmax = strlen(g_json[v]) > jmax ? strlen(g_json[v]) : jmax;
    }
    printf("cluster %s; report JSON %zu-%zu bytes, alert body 3000-4995 bytes\n", o.cluster, jmin,
           jmax);
    if (o.fill > 0) {
        run_fill(&o);
    }
    if (o.storm > 0) {
        run_storm(&o);
    }
    if (o.changes > 0) {
        run_changes(&o);
    }
    if (o.incident_queries) {
        run_incident_queries(&o);
    }
    if (o.list) {
        double t0 = now_ms();
        struct krc_store *s = open_pg(&o);
        printf("open (connect, authenticate, schema check): %.1f ms\n", now_ms() - t0);
        time_list(s, o.cluster, "--cluster");
        time_list(s, NULL, "every cluster");
        krc_store_close(s);
    }
    for (int v = 0; v < N_VARIANTS; v++) {
        krc_free(g_json[v]);
        krc_free(g_body[v]);
    }
    return 0;
}
