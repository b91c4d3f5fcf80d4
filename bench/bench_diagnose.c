/* Diagnosis benchmark: krc_diagnose on the cases of a corpus directory
 * (tests/fixtures/corpus: each case a folder with pod.json and, when
 * present, events.json, node.json and logs.txt). The reports are parsed
 * once; then every report is diagnosed -n times per run, and the median and
 * the best of -r runs are printed as diagnoses per CPU-second of this
 * thread. Nothing is asserted.
 *
 * With -d, it prints instead every field of every case's diagnosis, one
 * line each: two builds (before and after a change that must not change
 * behaviour) give the same text.
 *
 * Usage: bench_diagnose [-n iterations] [-r runs] [-d] DIR. Build without
 * sanitizers (Release). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_time.h"

#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/error.h"

#define MAX_CASES 512

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    FILE *f;
    char *data;
    long n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        (data = malloc((size_t)n + 1)) == NULL) {
        fclose(f);
        return NULL;
    }
    *len = fread(data, 1, (size_t)n, f);
    data[*len] = '\0';
    fclose(f);
    return data;
}

/* Parse one case folder into r; 1 when it has no pod.json (not a case: a
 * README), -1 when a file of it does not parse. */
static int load(const char *dir, struct krc_report *r)
{
    struct krc_error err;
    size_t len = 0;
    char *data;
    int rc = 0;

    krc_report_init(r);
    data = slurp(dir, "pod.json", &len);
    if (data == NULL) {
        return 1;
    }
    if (krc_kube_parse_pod(data, len, r, &err) != 0) {
        free(data);
        return -1;
    }
    free(data);
    if ((data = slurp(dir, "events.json", &len)) != NULL) {
        rc |= krc_kube_parse_events(data, len, r, &err);
        free(data);
    }
    if ((data = slurp(dir, "node.json", &len)) != NULL) {
        rc |= krc_kube_parse_node(data, len, r, &err);
        free(data);
    }
    krc_report_retain_pod_events(r);
    if ((data = slurp(dir, "logs.txt", &len)) != NULL) {
        rc |= krc_report_set_log(r, NULL, data, len, 0, &err);
        free(data);
    }
    return rc == 0 ? 0 : -1;
}

static void dump_list(const char *what, char **items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("  %s: %s\n", what, items[i]);
    }
}

static void dump(const char *name, const struct krc_diagnosis *d)
{
    printf("%s\n  container %s init %d sidecar %d cause %s confidence %s\n", name,
           d->container ? d->container : "(none)", d->is_init, d->is_sidecar,
           krc_cause_name(d->cause), krc_confidence_name(d->confidence));
    printf("  term %d last %d exit %d signal %d %s reason %s restarts %d/%d times %lld %lld "
           "gpus %ld\n",
           d->has_termination, d->from_last_state, d->exit_code, d->signal,
           d->signal_name ? d->signal_name : "-", d->reason ? d->reason : "-", d->restart_count,
           d->restart_count_known, (long long)d->started_at, (long long)d->finished_at, d->gpus);
    printf("  summary: %s\n  unquoted: %s\n  next: %s\n", d->summary, d->summary_unquoted,
           d->next_step);
    dump_list("evidence", d->evidence, d->n_evidence);
    dump_list("command", d->commands, d->n_commands);
    dump_list("unchecked", d->unchecked, d->n_unchecked);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    static struct krc_report reports[MAX_CASES];
    char *names[MAX_CASES];
    double rate[64];
    struct krc_diagnosis d;
    struct krc_error err;
    size_t n = 0;
    size_t kept = 0;
    long iters = 200;
    int runs = 7;
    int dump_mode = 0;
    int opt;
    DIR *dir;
    struct dirent *e;

    while ((opt = getopt(argc, argv, "n:r:d")) != -1) {
        if (opt == 'n') {
            iters = strtol(optarg, NULL, 10);
        } else if (opt == 'r') {
            runs = (int)strtol(optarg, NULL, 10);
        } else if (opt == 'd') {
            dump_mode = 1;
        } else {
            return 2;
        }
    }
    if (optind >= argc || iters < 1 || runs < 1 || runs > 64 ||
        (dir = opendir(argv[optind])) == NULL) {
        fprintf(stderr, "usage: bench_diagnose [-n iterations] [-r runs 1-64] [-d] DIR\n");
        return 2;
    }
    while ((e = readdir(dir)) != NULL && n < MAX_CASES) {
        if (e->d_name[0] != '.') {
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(dir);
    qsort(names, n, sizeof(names[0]), by_name);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        int rc;
        snprintf(path, sizeof(path), "%s/%s", argv[optind], names[i]);
        rc = load(path, &reports[kept]);
        if (rc < 0) {
            fprintf(stderr, "bench_diagnose: %s: a file of the case does not parse\n", path);
            return 1;
        }
        if (rc == 0) {
            names[kept++] = names[i];
        } else {
            free(names[i]); /* not a case */
        }
    }
    n = kept;
    krc_diagnosis_init(&d);
    if (dump_mode) {
        for (size_t i = 0; i < n; i++) {
            if (krc_diagnose(&reports[i], NULL, &d, &err) != 0) {
                printf("%s\n  error %s\n", names[i], err.msg);
                continue;
            }
            dump(names[i], &d);
        }
        krc_diagnosis_cleanup(&d);
        return 0;
    }
    for (int k = 0; k < runs; k++) {
        double t0 = bench_cpu_ms();
        for (long it = 0; it < iters; it++) {
            for (size_t i = 0; i < n; i++) {
                if (krc_diagnose(&reports[i], NULL, &d, &err) != 0) {
                    fprintf(stderr, "bench_diagnose: %s: %s\n", names[i], err.msg);
                    return 1;
                }
            }
        }
        rate[k] = (double)iters * (double)n / ((bench_cpu_ms() - t0) / 1e3);
    }
    krc_diagnosis_cleanup(&d);
    qsort(rate, (size_t)runs, sizeof(rate[0]), bench_cmp_double);
    printf("%zu cases x %ld: median %.0f diagnoses per CPU-second, best %.0f\n", n, iters,
           rate[runs / 2], rate[runs - 1]);
    for (size_t i = 0; i < n; i++) {
        krc_report_cleanup(&reports[i]);
        free(names[i]);
    }
    return 0;
}
