/* Time sources. Everything that measures intervals uses the monotonic clock;
 * wall-clock time is only for timestamps that come from or go to Kubernetes. */
#ifndef KRC_CLOCK_H
#define KRC_CLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t krc_clock_mono_ms(void);
/* Unix seconds on CLOCK_REALTIME, unless a test fixed it with krc_clock_set_fake_now. */
int64_t krc_clock_now(void);
/* Test seam: make krc_clock_now() return `now` (0 restores the real clock). */
void krc_clock_set_fake_now(int64_t now);
/* Format unix seconds as RFC 3339 UTC ("2026-07-30T08:14:05Z"); out >= 21 bytes. */
void krc_clock_format_rfc3339(int64_t t, char *out, unsigned outsz);

/* Flags of krc_clock_scan_rfc3339: KRC_CLOCK_RFC3339_PREFIX, more text may
 * follow the time; KRC_CLOCK_RFC3339_KUBELET, only the form the kubelet
 * writes its log stamps in ('T' and 'Z' upper case, at most 9 fraction
 * digits). */
#define KRC_CLOCK_RFC3339_PREFIX 1u
#define KRC_CLOCK_RFC3339_KUBELET 2u

/* Scan an RFC 3339 time ("2026-07-30T08:14:05Z"; 't' or ' ' between date
 * and time, a 'z', fraction digits, "+hh:mm" / "-hh:mm" offsets accepted)
 * at the start of s[0..len) and return its length, or 0 when there is
 * none: a bad format, a date that does not exist or a time out of range
 * (second 60 is accepted). Without KRC_CLOCK_RFC3339_PREFIX the time must
 * be all of s[0..len). On success *ret_seconds (unix seconds, fraction
 * dropped) and *ret_zone (index of the 'Z' or the offset's sign) are set;
 * either may be NULL. */
size_t krc_clock_scan_rfc3339(const char *s, size_t len, unsigned flags, int64_t *ret_seconds,
                              size_t *ret_zone);

/* The whole of s[0..len) as an RFC 3339 time (see krc_clock_scan_rfc3339)
 * to unix seconds: 0, or KRC_EINVAL on a bad format (*ret_seconds
 * untouched). The one parser for Kubernetes times, silences and log
 * stamps. */
int krc_parse_rfc3339(const char *s, size_t len, int64_t *ret_seconds);

/* Parse "90", "90s", "10m", "2h", "1h30m", "1d" into seconds: 0, or
 * KRC_EINVAL (a bare number only alone; at most 100,000,000 per part). */
int krc_parse_duration(const char *s, long *ret_seconds);

/* The start of a "since" window: an RFC 3339 time as it is, or a positive
 * duration (krc_parse_duration) back from now (at least 1). 0, or
 * KRC_EINVAL. The one parser of `krc history --since` and the MCP tools'
 * `since`. */
int krc_parse_since(const char *s, int64_t now, int64_t *ret);

/* Sleep up to ms milliseconds, returning early (1) when *cancel becomes non-zero. */
int krc_clock_sleep_ms(int64_t ms, const atomic_int *cancel);

#endif
