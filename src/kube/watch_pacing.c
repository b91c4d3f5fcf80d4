#include "krc/kube/watch_pacing.h"

void krc_watch_pacing_init(struct krc_watch_pacing *p, int64_t initial_ms, int64_t max_ms,
                           int64_t reset_ms, uint64_t seed)
{
    krc_backoff_init(&p->conn, initial_ms, max_ms, reset_ms, seed);
    /* another sequence of jitter for the other backoff */
    krc_backoff_init(&p->line, initial_ms, max_ms, reset_ms, seed ^ 0x5DEECE66DULL);
}

void krc_watch_pacing_healthy(struct krc_watch_pacing *p)
{
    krc_backoff_reset(&p->conn);
}

int64_t krc_watch_pacing_failure(struct krc_watch_pacing *p, int64_t now_ms)
{
    return krc_backoff_next(&p->conn, now_ms);
}

int64_t krc_watch_pacing_bad_line(struct krc_watch_pacing *p, int64_t now_ms, int64_t age_ms)
{
    if (age_ms >= KRC_WATCH_PACING_HEALTHY_MS) {
        return 0;
    }
    return krc_backoff_next(&p->line, now_ms);
}
