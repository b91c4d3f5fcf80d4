/* Change-tracking benchmark: memory per tracked ReplicaSet and time per
 * object and per answer.
 *
 * Reads ReplicaSets, one JSON object per line, as bench/benchworkloads.py
 * writes them (Deployments of 10 revisions with full pod templates):
 *   python3 bench/benchworkloads.py 30000 > /tmp/rs.jsonl
 *   build-bench/bench_track /tmp/rs.jsonl
 * feeds them to a tracker as a watch's initial sync does, and prints:
 *   - the growth of glibc's mallinfo2() bytes in use (uordblks + hblkhd)
 *     while they are fed, in total and per ReplicaSet, and the tracker's
 *     own figures (revisions, interned strings and their bytes);
 *   - the CPU time per object of the sync and of a second pass (the
 *     MODIFIED events of a relist: the same objects again);
 *   - the CPU time of krc_track_describe for a Deployment of 10 revisions.
 * With -a (all recent), the lookback covers every revision, so none is
 * compacted: the worst case, a cluster whose every Deployment rolled out 10
 * times within the lookback.
 * Build without sanitizers: ASan replaces malloc, so mallinfo2 and the
 * timings mean nothing under it. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "krc/track/track.h"
#include "krc/util/mem.h"

struct lines {
    char *data;
    size_t *off, *len;
    size_t n;
};

static int read_lines(const char *path, struct lines *l)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 0, size = 0, ncap = 0;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    memset(l, 0, sizeof(*l));
    for (;;) {
        if (size + 65536 > cap) {
            cap = cap ? cap * 2 : 1 << 24;
            char *d = realloc(l->data, cap);
            if (d == NULL) {
                fclose(f);
                return -1;
            }
            l->data = d;
        }
        size_t got = fread(l->data + size, 1, cap - size, f);
        if (got == 0) {
            break;
        }
        size += got;
    }
    fclose(f);
    for (size_t p = 0; p < size;) {
        char *nl = memchr(l->data + p, '\n', size - p);
        size_t e = nl != NULL ? (size_t)(nl - l->data) : size;
        if (l->n == ncap) {
            ncap = ncap ? ncap * 2 : 1024;
            l->off = realloc(l->off, ncap * sizeof(size_t));
            l->len = realloc(l->len, ncap * sizeof(size_t));
            if (l->off == NULL || l->len == NULL) {
                return -1;
            }
        }
        if (e > p) {
            l->off[l->n] = p;
            l->len[l->n++] = e - p;
        }
        p = e + 1;
    }
    return 0;
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static double feed(struct krc_track *t, const struct lines *l, enum krc_watch_event_type type)
{
    double c0 = bench_cpu_ms();
    for (size_t i = 0; i < l->n; i++) {
        struct krc_error e;
        if (krc_track_object(t, KRC_TRACK_REPLICASETS, type, l->data + l->off[i], l->len[i],
                             1790000000, &e) < 0) {
            fprintf(stderr, "object %zu: %s\n", i, e.msg);
            exit(1);
        }
    }
    return bench_cpu_ms() - c0;
}

int main(int argc, char **argv)
{
    struct lines l;
    struct krc_track_stats st;
    size_t bytes = 0;

    struct krc_track_options opt;
    int all_recent = argc == 3 && strcmp(argv[1], "-a") == 0;
    const char *path = argv[argc - 1];

    if (argc != 2 && !all_recent) {
        fprintf(stderr, "usage: bench_track [-a] FILE.jsonl (python3 bench/benchworkloads.py N)\n");
        return 2;
    }
    if (read_lines(path, &l) < 0 || l.n == 0) {
        fprintf(stderr, "bench_track: no objects in %s\n", path);
        return 1;
    }
    krc_track_options_defaults(&opt);
    if (all_recent) {
        opt.lookback_s = 3650L * 86400; /* every revision is recent */
    }
    for (size_t i = 0; i < l.n; i++) {
        bytes += l.len[i];
    }
    malloc_trim(0);
    size_t h0 = heap_in_use();
    struct krc_track *t = krc_track_new(&opt);
    if (t == NULL || krc_track_sync_begin(t, KRC_TRACK_REPLICASETS, NULL) < 0) {
        return 1;
    }
    double sync_ms = feed(t, &l, KRC_WATCH_ADDED);
    krc_track_sync_end(t, KRC_TRACK_REPLICASETS, NULL, 1790000000);
    size_t h1 = heap_in_use();
    double again_ms = feed(t, &l, KRC_WATCH_MODIFIED);
    size_t h2 = heap_in_use();
    krc_track_get_stats(t, &st);
    printf("objects: %zu ReplicaSets, %.1f MiB of JSON (%.0f bytes each)\n", l.n,
           (double)bytes / 1048576.0, (double)bytes / (double)l.n);
    printf("heap in use by the tracker: %.2f MiB after the sync (%.0f bytes per ReplicaSet), "
           "%.2f MiB after a second pass\n",
           (double)(h1 - h0) / 1048576.0, (double)(h1 - h0) / (double)l.n,
           (double)(h2 - h0) / 1048576.0);
    printf("tracker: %zu revisions, %zu interned strings in %.2f MiB (their table included), "
           "%zu changes in the ring\n",
           st.revisions, st.strings, (double)st.string_bytes / 1048576.0, st.changes);
    printf("CPU per object: %.2f us at the sync (ADDED), %.2f us for an unchanged one "
           "(MODIFIED)\n",
           1000.0 * sync_ms / (double)l.n, 1000.0 * again_ms / (double)l.n);
    /* the question of the first restart of an incident: a Deployment of 10 revisions */
    struct krc_track_query q = {"ns-000", "Deployment", "svc-00000", NULL, NULL, NULL, 1790000000};
    double c0 = bench_cpu_ms();
    int rounds = 200;
    for (int i = 0; i < rounds; i++) {
        char *line = NULL, *json = NULL;
        if (krc_track_describe(t, &q, 1790000000, &line, &json, NULL) != 1) {
            fprintf(stderr, "describe did not answer\n");
            return 1;
        }
        if (i == 0) {
            printf("answer: %s\n", line);
        }
        krc_free(line);
        krc_free(json);
    }
    printf("CPU per describe: %.1f us (%zu revisions scanned)\n",
           1000.0 * (bench_cpu_ms() - c0) / rounds, st.revisions);
    krc_track_free(t);
    free(l.data);
    free(l.off);
    free(l.len);
    return 0;
}
