/* What the recovery tracker costs the watch thread: krc_sender_pod_event, the call every pod
 * event of every watch scope makes (docs/design/recovery.md), with 0, 1, 256 and 1024 awaited
 * containers (1024: the tracker's capacity).
 *
 * The pods are shaped like bench/podgen.py's (uid a random lowercase v4 UUID, namespace
 * "ns-NNN" out of 20, name "web-7d9c8b6f5-NNNNN", containers "app", "metrics" and the sidecar
 * "log-shipper"). The awaited containers are other pods' (krc_sender_restart_seen, as the
 * watch thread calls it for a detected restart), so the events measured are the common case:
 * a pod nothing waits for. Printed per count:
 *   - 1 thread: CPU ns per event (median of the rounds) over 10,000 unrelated pods;
 *   - 2 threads: two watch scopes at once (5,000 pods each, one sender shared as the daemon
 *     shares it), wall ns per event per thread (median of the rounds); on a machine with
 *     fewer than two idle cores this mostly measures the scheduler;
 *   - awaited: CPU ns per event of an awaited pod itself (running and ready, restart count
 *     unchanged: the update of its entry).
 * First, what a sender with an empty tracker holds: the growth of glibc's mallinfo2() bytes in
 * use (uordblks + hblkhd) and of the resident set (/proc/self/statm) across krc_sender_new.
 * Only the public sender API is used, so the same file measures any build of it.
 *
 * Usage: bench_recovery [-r rounds]   (rounds of 10,000 events, default 21). Build in Release,
 * without sanitizers. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "krc/alert/sender.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/log.h"

#define UID_LEN 37
#define NAME_LEN 24
#define PODS 10000
#define MAX_ROUNDS 1001

struct pods {
    size_t n;
    char *uids;  /* n * UID_LEN */
    char *names; /* n * NAME_LEN */
    char ns[20][8];
    struct krc_pod_info *info;
    struct krc_container_info *c; /* 3 a pod */
};

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* n pods named prefix-NNNNN, each running and ready with restart count `count`. */
static int pods_make(struct pods *p, size_t n, uint64_t seed, const char *prefix, int count)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->uids = malloc(n * UID_LEN);
    p->names = malloc(n * NAME_LEN);
    p->info = calloc(n, sizeof(*p->info));
    p->c = calloc(n * 3, sizeof(*p->c));
    if (p->uids == NULL || p->names == NULL || p->info == NULL || p->c == NULL) {
        return -1;
    }
    for (int i = 0; i < 20; i++) {
        snprintf(p->ns[i], sizeof(p->ns[i]), "ns-%03d", i);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t a = rng_next(&seed);
        uint64_t b = rng_next(&seed);
        struct krc_pod_info *pi = &p->info[i];
        struct krc_container_info *c = &p->c[i * 3];
        /* version 4, variant 10xx, as uuid.UUID(int=..., version=4) */
        snprintf(p->uids + i * UID_LEN, UID_LEN, "%08x-%04x-4%03x-%04x-%012llx",
                 (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffffu, (unsigned)a & 0xfffu,
                 (unsigned)(0x8000u | ((b >> 48) & 0x3fffu)),
                 (unsigned long long)(b & 0xffffffffffffULL));
        snprintf(p->names + i * NAME_LEN, NAME_LEN, "%s-%05zu", prefix, i % 100000);
        pi->uid = p->uids + i * UID_LEN;
        pi->namespace = p->ns[i % 20];
        pi->name = p->names + i * NAME_LEN;
        pi->resource_version = "";
        pi->containers = c;
        pi->n_containers = 3;
        c[0].name = "app";
        c[0].restart_count = count;
        c[0].state_running = 1;
        c[0].ready = 1;
        c[1].name = "metrics";
        c[1].state_running = 1;
        c[1].ready = 1;
        c[2].name = "log-shipper";
        c[2].is_init = 1;
        c[2].is_sidecar = 1;
        c[2].state_running = 1;
        c[2].ready = 1;
    }
    return 0;
}

static void pods_free(struct pods *p)
{
    free(p->uids);
    free(p->names);
    free(p->info);
    free(p->c);
}

/* Resident bytes of this process (0: unknown). */
static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0;
    unsigned long resident = 0;

    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%lu %lu", &size, &resident) != 2) {
        resident = 0;
    }
    fclose(f);
    return (size_t)resident * 4096;
}

static int idle_memory(void)
{
    struct krc_sender_options o;
    struct krc_sender *n;
    struct mallinfo2 m0;
    struct mallinfo2 m1;
    size_t r0;
    size_t r1;

    memset(&o, 0, sizeof(o));
    o.recovered_after_s = 600;
    m0 = mallinfo2();
    r0 = rss_bytes();
    n = krc_sender_new(&o, NULL);
    if (n == NULL) {
        fprintf(stderr, "bench_recovery: no sender\n");
        return 1;
    }
    m1 = mallinfo2();
    r1 = rss_bytes();
    printf("idle sender: malloc in use %+.1f KiB (uordblks %+.1f, hblkhd %+.1f), resident %+.1f "
           "KiB\n",
           ((double)(m1.uordblks - m0.uordblks) + (double)(m1.hblkhd - m0.hblkhd)) / 1024.0,
           (double)(m1.uordblks - m0.uordblks) / 1024.0, (double)(m1.hblkhd - m0.hblkhd) / 1024.0,
           ((double)r1 - (double)r0) / 1024.0);
    krc_sender_free(n);
    return 0;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
    return v[n / 2];
}

struct worker {
    struct krc_sender *n;
    const struct pods *p;
    size_t from;
    size_t to;
    int rounds;
    pthread_barrier_t *start;
    double ns[MAX_ROUNDS];
};

static void *worker_run(void *arg)
{
    struct worker *w = arg;

    for (int r = 0; r < w->rounds; r++) {
        double t0;
        pthread_barrier_wait(w->start);
        t0 = bench_now_ms();
        for (size_t i = w->from; i < w->to; i++) {
            krc_sender_pod_event(w->n, &w->p->info[i], 0);
        }
        w->ns[r] = (bench_now_ms() - t0) * 1e6 / (double)(w->to - w->from);
    }
    return NULL;
}

static int run(size_t awaited, int rounds, const struct pods *events, const struct pods *waits)
{
    struct krc_sender_options o;
    struct krc_error e;
    struct krc_sender *n;
    double one[MAX_ROUNDS];
    double own[MAX_ROUNDS];
    struct worker w[2];
    pthread_t th[2];
    pthread_barrier_t start;

    memset(&o, 0, sizeof(o));
    o.recovered_after_s = 600;
    krc_error_clear(&e);
    n = krc_sender_new(&o, &e);
    if (n == NULL) {
        fprintf(stderr, "bench_recovery: %s\n", e.msg);
        return 1;
    }
    for (size_t i = 0; i < awaited; i++) {
        const struct krc_pod_info *pi = &waits->info[i];
        krc_sender_restart_seen(n, pi->uid, pi->namespace, pi->name, "app", 1);
        krc_sender_pod_event(n, pi, 0); /* the event that revealed the restart */
    }
    /* one thread */
    for (int r = 0; r < rounds; r++) {
        double t0 = bench_cpu_ms();
        for (size_t i = 0; i < events->n; i++) {
            krc_sender_pod_event(n, &events->info[i], 0);
        }
        one[r] = (bench_cpu_ms() - t0) * 1e6 / (double)events->n;
    }
    /* two threads (two watch scopes), one sender */
    pthread_barrier_init(&start, NULL, 2);
    for (int k = 0; k < 2; k++) {
        memset(&w[k], 0, sizeof(w[k]));
        w[k].n = n;
        w[k].p = events;
        w[k].from = k == 0 ? 0 : events->n / 2;
        w[k].to = k == 0 ? events->n / 2 : events->n;
        w[k].rounds = rounds;
        w[k].start = &start;
        if (pthread_create(&th[k], NULL, worker_run, &w[k]) != 0) {
            fprintf(stderr, "bench_recovery: cannot start a thread\n");
            return 1;
        }
    }
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    pthread_barrier_destroy(&start);
    /* an awaited pod's own events */
    for (int r = 0; r < rounds && awaited > 0; r++) {
        double t0 = bench_cpu_ms();
        for (size_t i = 0; i < events->n; i++) {
            krc_sender_pod_event(n, &waits->info[i % awaited], 0);
        }
        own[r] = (bench_cpu_ms() - t0) * 1e6 / (double)events->n;
    }
    {
        double two[2 * MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            two[2 * r] = w[0].ns[r];
            two[2 * r + 1] = w[1].ns[r];
        }
        printf("%5zu awaited: 1 thread %8.1f ns/event (CPU); 2 threads %8.1f ns/event (wall, "
               "each)",
               awaited, median(one, rounds), median(two, 2 * rounds));
    }
    if (awaited > 0) {
        printf("; awaited pod %8.1f ns/event (CPU)\n", median(own, rounds));
    } else {
        printf("\n");
    }
    krc_sender_free(n);
    return 0;
}

int main(int argc, char **argv)
{
    static const size_t counts[] = {0, 1, 256, 1024};
    int rounds = 21;
    struct pods events;
    struct pods waits;
    int rc = 0;

    if (argc == 3 && strcmp(argv[1], "-r") == 0) {
        char *end;
        long v = strtol(argv[2], &end, 10);
        if (*end != '\0' || v < 1 || v >= MAX_ROUNDS) {
            fprintf(stderr, "usage: %s [-r rounds(1..1000)]\n", argv[0]);
            return 2;
        }
        rounds = (int)v;
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [-r rounds(1..1000)]\n", argv[0]);
        return 2;
    }
    krc_log_set_level(KRC_LOG_WARN);
    if (idle_memory() != 0) {
        return 1;
    }
    if (pods_make(&events, PODS, 0x5eed, "web-7d9c8b6f5", 0) < 0 ||
        pods_make(&waits, 1024, 0xa11ce, "api-5c7f9d8b4", 1) < 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]) && rc == 0; i++) {
        rc = run(counts[i], rounds, &events, &waits);
    }
    pods_free(&events);
    pods_free(&waits);
    return rc;
}
