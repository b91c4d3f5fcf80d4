#include "krc/util/backoff.h"

static uint64_t next_rand(struct krc_backoff *b)
{
    /* xorshift64*: small, good enough for jitter */
    uint64_t x = b->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    b->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void krc_backoff_init(struct krc_backoff *b, int64_t initial_ms, int64_t max_ms, int64_t reset_ms,
                      uint64_t seed)
{
    b->initial_ms = initial_ms;
    b->max_ms = max_ms;
    b->reset_ms = reset_ms;
    b->current_ms = 0;
    b->last_failure_mono_ms = 0;
    b->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
}

void krc_backoff_reset(struct krc_backoff *b)
{
    b->current_ms = 0;
}

int64_t krc_backoff_rand_range(struct krc_backoff *b, int64_t lo, int64_t hi)
{
    if (hi <= lo) {
        return lo;
    }
    return lo + (int64_t)(next_rand(b) % (uint64_t)(hi - lo));
}

int64_t krc_backoff_next(struct krc_backoff *b, int64_t now_ms)
{
    int64_t d;

    if (b->current_ms != 0 && b->reset_ms > 0 && now_ms - b->last_failure_mono_ms > b->reset_ms) {
        b->current_ms = 0;
    }
    b->last_failure_mono_ms = now_ms;
    if (b->current_ms == 0) {
        b->current_ms = b->initial_ms;
    } else {
        b->current_ms *= 2;
        if (b->current_ms > b->max_ms) {
            b->current_ms = b->max_ms;
        }
    }
    d = b->current_ms;
    /* Jitter upward to [d, 2d), but never past the cap: at the cap the delay
     * is spread over [max/2, max] so that many clients do not retry in step. */
    if (2 * d > b->max_ms) {
        return krc_backoff_rand_range(b, b->max_ms / 2, b->max_ms + 1);
    }
    return krc_backoff_rand_range(b, d, 2 * d);
}
