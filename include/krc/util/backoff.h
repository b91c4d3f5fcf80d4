/* Exponential backoff with jitter, as client-go's reflector does: delays
 * initial, 2x initial, ... each jittered upward to [d, 2d) and never above max
 * (jitter 1.0), and reset to the initial delay once `reset_ms` passed since the
 * last failure. */
#ifndef KRC_BACKOFF_H
#define KRC_BACKOFF_H

#include <stdint.h>

struct krc_backoff {
    int64_t initial_ms;
    int64_t max_ms;
    int64_t reset_ms;
    int64_t current_ms;
    int64_t last_failure_mono_ms;
    uint64_t rng;
};

void krc_backoff_init(struct krc_backoff *b, int64_t initial_ms, int64_t max_ms, int64_t reset_ms,
                      uint64_t seed);
/* Delay to wait after a failure observed at monotonic time now_ms. */
int64_t krc_backoff_next(struct krc_backoff *b, int64_t now_ms);
void krc_backoff_reset(struct krc_backoff *b);
/* Uniform random integer in [lo, hi) from the backoff's generator. */
int64_t krc_backoff_rand_range(struct krc_backoff *b, int64_t lo, int64_t hi);

#endif
