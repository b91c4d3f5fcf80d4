/* Time sources. Everything that measures intervals uses the monotonic clock;
 * wall-clock time is only for timestamps that come from or go to Kubernetes. */
#ifndef KRC_CLOCK_H
#define KRC_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t krc_clock_mono_ms(void);
/* Unix seconds on CLOCK_REALTIME, unless a test fixed it with krc_clock_set_fake_now. */
int64_t krc_clock_now(void);
/* Test seam: make krc_clock_now() return `now` (0 restores the real clock). */
void krc_clock_set_fake_now(int64_t now);
/* Format unix seconds as RFC 3339 UTC ("2026-07-30T08:14:05Z"); out >= 21 bytes. */
void krc_clock_format_rfc3339(int64_t t, char *out, unsigned outsz);
/* Sleep up to ms milliseconds, returning early (1) when *cancel becomes non-zero. */
int krc_clock_sleep_ms(int64_t ms, const atomic_int *cancel);

#endif
