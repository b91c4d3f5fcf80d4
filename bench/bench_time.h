/* What the C benchmarks share: a monotonic clock in milliseconds, the
 * thread's CPU time, and the order of doubles for qsort (medians). Header-only: each bench is one
 * program. */
#ifndef KRC_BENCH_TIME_H
#define KRC_BENCH_TIME_H

#include <time.h>

static inline double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of the calling thread: what a call costs, whatever else the
 * machine runs (the wall time also counts waiting for a core). */
static inline double bench_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
