/* Restart-detection table benchmark: memory per pod and time per apply.
 *
 * Builds tables of 10,000 and 150,000 pods shaped like bench/podgen.py's
 * (uid a random lowercase v4 UUID, namespace "ns-NNN" out of 20, name
 * "web-7d9c8b6f5-NNNNN", containers "app" and "metrics", sidecar init
 * container "log-shipper") and prints, per pod:
 *   - krc_pod_state_memory() / pods (the table's own estimate)
 *   - the growth of glibc's mallinfo2() bytes in use while the table is
 *     filled: uordblks (heap chunks, headers and rounding included) plus
 *     hblkhd (large blocks such as the slot array, which malloc mmaps)
 * then the CPU time of krc_pod_state_apply for a new pod (insert), an
 * unchanged pod (the common MODIFIED event) and a pod whose "app" container
 * restarted.
 *
 * Usage: bench_pod_state [-r rounds]   (rounds of applies over all pods,
 * default 20). Build without sanitizers: ASan replaces malloc, so mallinfo2
 * and the timings mean nothing under it. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "krc/kube/kube_pod.h"
#include "krc/detect/pod_state.h"

#define UID_LEN 37
#define NAME_LEN 24

struct pods {
    size_t n;
    char *uids;  /* n * UID_LEN */
    char *names; /* n * NAME_LEN */
    char (*ns)[8];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int pods_make(struct pods *p, size_t n, uint64_t seed)
{
    p->n = n;
    p->uids = malloc(n * UID_LEN);
    p->names = malloc(n * NAME_LEN);
    p->ns = malloc(20 * sizeof(*p->ns));
    if (p->uids == NULL || p->names == NULL || p->ns == NULL) {
        return -1;
    }
    for (int i = 0; i < 20; i++) {
        snprintf(p->ns[i], sizeof(p->ns[i]), "ns-%03d", i);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t a = rng_next(&seed);
        uint64_t b = rng_next(&seed);
        /* version 4, variant 10xx, as uuid.UUID(int=..., version=4) */
        snprintf(p->uids + i * UID_LEN, UID_LEN, "%08x-%04x-4%03x-%04x-%012llx",
                 (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffffu, (unsigned)a & 0xfffu,
                 (unsigned)(0x8000u | ((b >> 48) & 0x3fffu)),
                 (unsigned long long)(b & 0xffffffffffffULL));
        snprintf(p->names + i * NAME_LEN, NAME_LEN, "web-7d9c8b6f5-%05zu", i % 100000);
    }
    return 0;
}

static void pods_free(struct pods *p)
{
    free(p->uids);
    free(p->names);
    free(p->ns);
}

struct one_pod {
    struct krc_pod_info info;
    struct krc_container_info c[3];
};

static void pod_fill(struct one_pod *op, const struct pods *p, size_t i, int app_count)
{
    memset(op, 0, sizeof(*op));
    op->info.uid = p->uids + i * UID_LEN;
    op->info.namespace = p->ns[i % 20];
    op->info.name = p->names + i * NAME_LEN;
    op->info.resource_version = "";
    op->info.creation_timestamp = 1785394800;
    op->info.containers = op->c;
    op->info.n_containers = 3;
    op->c[0].name = "app";
    op->c[0].restart_count = app_count;
    op->c[0].state_running = 1;
    if (app_count > 0) {
        op->c[0].has_last_terminated = 1;
        op->c[0].last_finished_at = 1785394800 + app_count;
    }
    op->c[1].name = "metrics";
    op->c[1].state_running = 1;
    op->c[2].name = "log-shipper";
    op->c[2].is_init = 1;
    op->c[2].is_sidecar = 1;
    op->c[2].state_running = 1;
}

static void on_restart(const struct krc_restart_delta *d, void *ud)
{
    (void)d;
    (*(size_t *)ud)++;
}

static int run(size_t n, int rounds)
{
    struct pods p;
    struct one_pod op;
    struct krc_pod_state *st;
    struct mallinfo2 m0;
    struct mallinfo2 m1;
    size_t restarts = 0;
    size_t heap;
    size_t mapped;
    double t0;
    double t_insert;
    double t_same;
    double t_restart;
    size_t applies = n * (size_t)rounds;

    if (pods_make(&p, n, 0x5eed + n) < 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    m0 = mallinfo2();
    st = krc_pod_state_new(0, 1785394800);
    if (st == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    t0 = now_s();
    for (size_t i = 0; i < n; i++) {
        pod_fill(&op, &p, i, 0);
        if (krc_pod_state_apply(st, &op.info, on_restart, &restarts) < 0) {
            fprintf(stderr, "apply failed\n");
            return 1;
        }
    }
    t_insert = now_s() - t0;
    m1 = mallinfo2();

    t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++) {
            pod_fill(&op, &p, i, 0);
            (void)krc_pod_state_apply(st, &op.info, on_restart, &restarts);
        }
    }
    t_same = now_s() - t0;
    if (restarts != 0) {
        fprintf(stderr, "unexpected restarts: %zu\n", restarts);
        return 1;
    }

    t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++) {
            pod_fill(&op, &p, i, r + 1);
            (void)krc_pod_state_apply(st, &op.info, on_restart, &restarts);
        }
    }
    t_restart = now_s() - t0;
    if (restarts != applies) {
        fprintf(stderr, "expected %zu restarts, got %zu\n", applies, restarts);
        return 1;
    }

    heap = m1.uordblks - m0.uordblks;
    mapped = m1.hblkhd - m0.hblkhd;
    printf("%6zu pods: memory() %5.1f B/pod; malloc in use %5.1f B/pod (uordblks %5.1f + "
           "hblkhd %4.1f); apply: insert %5.1f ns, unchanged %5.1f ns, restart %5.1f ns\n",
           n, (double)krc_pod_state_memory(st) / (double)n, (double)(heap + mapped) / (double)n,
           (double)heap / (double)n, (double)mapped / (double)n, t_insert * 1e9 / (double)n,
           t_same * 1e9 / (double)applies, t_restart * 1e9 / (double)applies);
    krc_pod_state_free(st);
    pods_free(&p);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = 20;

    if (argc == 3 && strcmp(argv[1], "-r") == 0) {
        char *end;
        long v = strtol(argv[2], &end, 10);
        if (*end != '\0' || v < 1 || v > 1000) {
            fprintf(stderr, "usage: %s [-r rounds(1..1000)]\n", argv[0]);
            return 2;
        }
        rounds = (int)v;
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [-r rounds(1..1000)]\n", argv[0]);
        return 2;
    }
    if (run(10000, rounds) != 0 || run(150000, rounds) != 0) {
        return 1;
    }
    return 0;
}
