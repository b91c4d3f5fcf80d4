#include "krc/util/clock.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "krc/util/error.h"

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

/* ---- RFC 3339 ------------------------------------------------------------- */

/* n digits at s[at] (within len) as a number, or -1. */
static int num(const char *s, size_t len, size_t at, size_t n)
{
    int v = 0;

    if (at + n > len) {
        return -1;
    }
    for (size_t i = at; i < at + n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era;
    int64_t yoe;
    int64_t doy;
    int64_t doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* After the seconds at s[19]: an optional fraction, then the zone. Returns
 * the end of the zone (0: none) and its start, sign and offset in minutes. */
static size_t scan_zone(const char *s, size_t len, int kubelet, size_t *ret_zone,
                        int *ret_offset_min)
{
    size_t p = 19;
    int oh;
    int om;

    if (s[p] == '.') {
        size_t start = ++p;
        while (p < len && s[p] >= '0' && s[p] <= '9' && (!kubelet || p - start < 9)) {
            p++;
        }
        if (p == start) {
            return 0;
        }
    }
    if (p >= len) {
        return 0;
    }
    *ret_zone = p;
    if (s[p] == 'Z' || (s[p] == 'z' && !kubelet)) {
        *ret_offset_min = 0;
        return p + 1;
    }
    if (s[p] != '+' && s[p] != '-') {
        return 0;
    }
    oh = num(s, len, p + 1, 2);
    om = num(s, len, p + 4, 2);
    if (oh < 0 || om < 0 || s[p + 3] != ':' || oh > 23 || om > 59) {
        return 0;
    }
    *ret_offset_min = (s[p] == '-' ? -1 : 1) * (oh * 60 + om);
    return p + 6;
}

size_t krc_clock_scan_rfc3339(const char *s, size_t len, unsigned flags, int64_t *ret_seconds,
                              size_t *ret_zone)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int kubelet = (flags & KRC_CLOCK_RFC3339_KUBELET) != 0;
    int year, mon, day, hour, min, sec;
    int offset_min = 0;
    size_t zone = 0;
    size_t end;
    int leap;

    if (s == NULL || len < 20) {
        return 0;
    }
    year = num(s, len, 0, 4);
    mon = num(s, len, 5, 2);
    day = num(s, len, 8, 2);
    hour = num(s, len, 11, 2);
    min = num(s, len, 14, 2);
    sec = num(s, len, 17, 2);
    if (year < 0 || s[4] != '-' || mon < 0 || s[7] != '-' || day < 0 ||
        !(s[10] == 'T' || (!kubelet && (s[10] == 't' || s[10] == ' '))) || hour < 0 ||
        s[13] != ':' || min < 0 || s[16] != ':' || sec < 0) {
        return 0;
    }
    end = scan_zone(s, len, kubelet, &zone, &offset_min);
    if (end == 0 || (end != len && !(flags & KRC_CLOCK_RFC3339_PREFIX))) {
        return 0;
    }
    leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] + (mon == 2 && leap) || hour > 23 ||
        min > 59 || sec > 60) {
        return 0;
    }
    if (ret_seconds != NULL) {
        *ret_seconds = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec -
                       (int64_t)offset_min * 60;
    }
    if (ret_zone != NULL) {
        *ret_zone = zone;
    }
    return end;
}

int krc_parse_rfc3339(const char *s, size_t len, int64_t *ret_seconds)
{
    return krc_clock_scan_rfc3339(s, len, 0, ret_seconds, NULL) > 0 ? 0 : KRC_EINVAL;
}

int krc_parse_duration(const char *s, long *ret_seconds)
{
    long total = 0;
    const char *p = s;
    int any = 0;

    if (s == NULL || *s == '\0') {
        return KRC_EINVAL;
    }
    while (*p != '\0') {
        char *end;
        long v;
        long mult = 1;
        errno = 0;
        if (*p < '0' || *p > '9') {
            return KRC_EINVAL;
        }
        v = strtol(p, &end, 10);
        if (errno != 0 || v < 0) {
            return KRC_EINVAL;
        }
        switch (*end) {
        case '\0':
            if (any) {
                return KRC_EINVAL; /* "1h30" is ambiguous */
            }
            mult = 1;
            break;
        case 's':
            mult = 1;
            end++;
            break;
        case 'm':
            mult = 60;
            end++;
            break;
        case 'h':
            mult = 3600;
            end++;
            break;
        case 'd':
            mult = 86400;
            end++;
            break;
        default:
            return KRC_EINVAL;
        }
        if (v > 100000000L / mult) {
            return KRC_EINVAL;
        }
        total += v * mult;
        any = 1;
        p = end;
    }
    *ret_seconds = total;
    return 0;
}

int krc_parse_since(const char *s, int64_t now, int64_t *ret)
{
    long secs;
    if (s == NULL) {
        return KRC_EINVAL;
    }
    if (krc_parse_rfc3339(s, strlen(s), ret) == 0) {
        return 0;
    }
    if (krc_parse_duration(s, &secs) < 0 || secs <= 0) {
        return KRC_EINVAL;
    }
    *ret = now - secs > 0 ? now - secs : 1;
    return 0;
}
