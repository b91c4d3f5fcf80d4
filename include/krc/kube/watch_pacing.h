/* When the pod watch loop retries: two backoffs, so that one kind of failure
 * does not pay for another (issue 12: after an outage, one malformed line
 * cost 22 s because the outage's backoff was still grown).
 *
 *   conn  failures to connect or to be answered (transport, 5xx, 429, 401/403).
 *         Reset by krc_watch_pacing_healthy(): a stream that delivered an
 *         event is healthy, so the outage is over.
 *   line  responses that could not be framed (a LIST body that is not a
 *         list; bad watch lines and list items are skipped one by one
 *         instead) soon after the request began: a server that keeps
 *         sending them gets backoff of its own, a single one costs at most
 *         its first step.
 *
 * Pure: time is passed in. Embedded struct, no allocation. */
#ifndef KRC_WATCH_PACING_H
#define KRC_WATCH_PACING_H

#include <stdint.h>

#include "krc/util/backoff.h"

/* A stream that ran this long before its bad line resumes at once. */
#define KRC_WATCH_PACING_HEALTHY_MS 1000

struct krc_watch_pacing {
    struct krc_backoff conn;
    struct krc_backoff line;
};

/* Both backoffs: initial_ms doubling to max_ms, reset after reset_ms
 * without a failure (see krc/backoff.h). */
void krc_watch_pacing_init(struct krc_watch_pacing *p, int64_t initial_ms, int64_t max_ms,
                           int64_t reset_ms, uint64_t seed);
/* A stream delivered an event (object or bookmark). */
void krc_watch_pacing_healthy(struct krc_watch_pacing *p);
/* Connecting or the request failed at now_ms: the delay before the next try. */
int64_t krc_watch_pacing_failure(struct krc_watch_pacing *p, int64_t now_ms);
/* A stream ended at now_ms with a bad line, age_ms after it began: 0 to
 * resume at once, else the delay. */
int64_t krc_watch_pacing_bad_line(struct krc_watch_pacing *p, int64_t now_ms, int64_t age_ms);

#endif
