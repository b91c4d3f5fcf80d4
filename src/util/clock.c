#include "krc/util/clock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static atomic_llong fake_now;

int64_t krc_clock_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t krc_clock_now(void)
{
    long long f = atomic_load(&fake_now);
    if (f != 0) {
        return (int64_t)f;
    }
    return (int64_t)time(NULL);
}

void krc_clock_set_fake_now(int64_t now)
{
    atomic_store(&fake_now, (long long)now);
}

void krc_clock_format_rfc3339(int64_t t, char *out, unsigned outsz)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    snprintf(out, outsz, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int krc_clock_sleep_ms(int64_t ms, const atomic_int *cancel)
{
    int64_t end = krc_clock_mono_ms() + ms;
    for (;;) {
        int64_t left;
        struct timespec ts;
        if (cancel != NULL && *cancel) {
            return 1;
        }
        left = end - krc_clock_mono_ms();
        if (left <= 0) {
            return 0;
        }
        if (left > 100) {
            left = 100;
        }
        ts.tv_sec = 0;
        ts.tv_nsec = (long)left * 1000000L;
        nanosleep(&ts, NULL);
    }
}
