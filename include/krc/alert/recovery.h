/* Recovery tracking from what the watch already sees: an incident (alert/incident.h) ends
 * once the pod of its latest restart has run ready for recoveredAfter and its restart count
 * has not moved. No API request: the watch thread hands every pod event to
 * krc_recovery_observe(), which records, for the containers awaited, the restart count and
 * since when they run ready (the time of the event that first showed them running and
 * ready).
 *
 * Life of an entry (pod UID + container):
 * - awaited when the restart is detected (the watch thread, before the event's state is
 *   observed, so nothing between the restart and its alert is missed), or when an open
 *   incident is loaded from the history;
 * - asked by the incidents' end (krc_recovery_ready), which keeps it;
 * - forgotten when the pod is deleted or replaced (same namespace/name, another UID), and
 *   KRC_RECOVERY_UNARMED_S after it was last awaited or asked (krc_recovery_expire).
 *
 * Thread-safe (one lock); a pod event costs one load when nothing is awaited, else a hash
 * comparison per entry. */
#ifndef KRC_RECOVERY_H
#define KRC_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "krc/kube/kube_pod.h"

#define KRC_RECOVERY_UNARMED_S 3600

struct krc_recovery;

/* A tracker of at most `cap` entries (when full, a new restart replaces the
 * entry awaited longest). NULL on allocation failure. Caller frees with
 * krc_recovery_free (accepts NULL). */
struct krc_recovery *krc_recovery_new(size_t cap);
void krc_recovery_free(struct krc_recovery *t);

/* A restart of uid/container was detected (pod ns/name) at now_s. */
void krc_recovery_await(struct krc_recovery *t, const char *uid, const char *ns, const char *name,
                        const char *container, int restart_count, int64_t now_s);

/* Is any container awaited? One atomic load: callers on the watch thread's
 * hot path ask this before they read the clock for krc_recovery_observe. */
int krc_recovery_awaiting(struct krc_recovery *t);

/* A watch event of `pod` (deleted: a DELETED event). */
void krc_recovery_observe(struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                          int64_t now_s);

/* Forget the entries not awaited or asked for KRC_RECOVERY_UNARMED_S. */
void krc_recovery_expire(struct krc_recovery *t, int64_t now_s);

/* An incident's awaited pod (alert/incident.h): is uid/container tracked?
 * 1 with *ret_ready_since (unix s the watch first showed it running and ready
 * since its last restart; 0: not ready), 0 when it is not (never awaited, or
 * forgotten: its pod deleted or replaced). Keeps the entry another
 * KRC_RECOVERY_UNARMED_S (an open incident still waits for it). */
int krc_recovery_ready(struct krc_recovery *t, const char *uid, const char *container,
                       int64_t now_s, int64_t *ret_ready_since);

/* Entries held (tests, metrics). */
size_t krc_recovery_count(struct krc_recovery *t);

#endif
