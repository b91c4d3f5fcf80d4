/* Redaction benchmark: the secret scanners on adversarial 64 KiB inputs
 * (candidate prefixes repeated that never complete a secret: a scanner that
 * backtracks over them would be quadratic) and on a realistic 64 KiB log
 * with a secret on every line. Prints the median and the worst wall time of
 * -r runs per input; nothing is asserted (tests/unit/util/test_redact.c
 * checks the same inputs' results, docs/performance.md has the figures).
 *
 * Usage: bench_redact [-r runs]. Build without sanitizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

#define LEN (64 * 1024)

/* Redact in[0..len) runs times; print the median and the worst. */
static int run(const struct krc_redactor *rd, const char *label, const char *in, size_t len,
               int runs)
{
    double t[256];
    struct krc_buf out;
    struct krc_error err;
    int n = 0;

    krc_buf_init(&out, 1 << 24);
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        krc_buf_reset(&out);
        n = krc_redact_apply(rd, in, len, &out, &err);
        t[i] = bench_now_ms() - t0;
        if (n < 0) {
            fprintf(stderr, "bench_redact: %s: %s\n", label, err.msg);
            krc_buf_cleanup(&out);
            return -1;
        }
    }
    krc_buf_cleanup(&out);
    qsort(t, (size_t)runs, sizeof(t[0]), bench_cmp_double);
    printf("%-28s median %7.3f ms  max %7.3f ms  %5d redacted\n", label, t[runs / 2], t[runs - 1],
           n);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const units[] = {"eyJ-",    "xoxb-",       "a-",   "password-", "://",
                                        "bearer ", "-----BEGIN ", "AKIA", "ghp_",      "x:y"};
    const char *pats[] = {"SECRET-[0-9]+"};
    struct krc_redactor *rd = NULL;
    struct krc_buf log;
    struct krc_error err;
    char *in = malloc(LEN);
    int runs = 21;
    int opt;
    int rc = 0;

    while ((opt = getopt(argc, argv, "r:")) != -1) {
        if (opt != 'r' || (runs = (int)strtol(optarg, NULL, 10)) < 1 || runs > 256) {
            fprintf(stderr, "usage: bench_redact [-r runs (1-256)]\n");
            free(in);
            return 2;
        }
    }
    if (in == NULL || krc_redact_new(pats, 1, &rd, &err) < 0) {
        fprintf(stderr, "bench_redact: cannot set up\n");
        free(in);
        return 1;
    }
    for (size_t u = 0; rc == 0 && u < sizeof(units) / sizeof(units[0]); u++) {
        char label[64];
        size_t ul = strlen(units[u]);
        for (size_t i = 0; i < LEN; i++) {
            in[i] = units[u][i % ul];
        }
        snprintf(label, sizeof(label), "64 KiB of '%s'", units[u]);
        rc = run(rd, label, in, LEN, runs);
    }
    krc_buf_init(&log, LEN + 256);
    while (rc == 0 && log.len + 200 < LEN) {
        if (krc_buf_printf(&log,
                           "2025-02-06T03:14:40Z INFO request id=%zu path=/api/v1/orders "
                           "user=bob token=t%zu ok\n",
                           log.len, log.len) < 0) {
            rc = -1;
        }
    }
    if (rc == 0) {
        rc = run(rd, "64 KiB log, a token a line", log.data, log.len, runs);
    }
    krc_buf_cleanup(&log);
    krc_redact_free(rd);
    free(in);
    return rc == 0 ? 0 : 1;
}
