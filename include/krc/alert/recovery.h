/* Recovery tracking from what the watch already sees: an incident (alert/incident.h) ends
 * once the pod of its latest restart has run ready for recoveredAfter and its restart count
 * has not moved. No API request: the watch thread hands every pod event to the tracker
 * (krc_recovery_wants, then krc_recovery_apply), which records, for the containers awaited,
 * the restart count and since when they run ready (the time of the event that first showed
 * them running and ready).
 *
 * Life of an entry (pod UID + container):
 * - awaited when the restart is detected (the watch thread, before the event's state is
 *   observed, so nothing between the restart and its alert is missed), or when an open
 *   incident is loaded from the history;
 * - asked by the incidents' end (krc_recovery_ready), which keeps it;
 * - forgotten when its incident ends (krc_recovery_forget), when the pod is deleted or
 *   replaced (same namespace/name, another UID), and KRC_RECOVERY_KEEP_S after it was last
 *   awaited or asked (krc_recovery_expire).
 *
 * Thread-safe. A pod event of a pod nothing waits for takes no lock: one atomic load when
 * nothing is awaited, else a hash of its UID (and, unless deleted, of its namespace/name)
 * and two atomic loads of a counting Bloom filter each. An event that passes the filter
 * takes the lock and looks its pod up by UID and by name in hash indexes (no scan of the
 * entries). */
#ifndef KRC_RECOVERY_H
#define KRC_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "krc/kube/kube_pod.h"

/* An entry nothing awaited or asked for this long is forgotten (krc_recovery_expire). */
#define KRC_RECOVERY_KEEP_S 3600

struct krc_recovery;

/* A tracker of at most `cap` entries (when full, a new restart replaces the
 * entry awaited longest). NULL on allocation failure. Caller frees with
 * krc_recovery_free (accepts NULL). */
struct krc_recovery *krc_recovery_new(size_t cap);
void krc_recovery_free(struct krc_recovery *t);

/* A restart of uid/container was detected (pod ns/name) at now_s. */
void krc_recovery_await(struct krc_recovery *t, const char *uid, const char *ns, const char *name,
                        const char *container, int restart_count, int64_t now_s);

/* What krc_recovery_wants computed of an event, for krc_recovery_apply. */
struct krc_recovery_probe {
    uint64_t uid_hash;
    uint64_t name_hash; /* namespace/name */
};

/* May the watch event of `pod` (deleted: a DELETED event) concern an awaited container?
 * Lock-free (the watch thread's hot path asks it before it reads the clock): 0 when
 * certainly not; 1 (*p set) when maybe: then krc_recovery_apply. */
int krc_recovery_wants(const struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                       struct krc_recovery_probe *p);

/* Apply the event krc_recovery_wants said 1 to: the awaited containers of the pod are
 * observed (or forgotten: deleted), an awaited pod of the same namespace/name and another
 * UID is forgotten (replaced). */
void krc_recovery_apply(struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                        const struct krc_recovery_probe *p, int64_t now_s);

/* Forget the entries not awaited or asked for KRC_RECOVERY_KEEP_S. */
void krc_recovery_expire(struct krc_recovery *t, int64_t now_s);

/* An incident's awaited pod (alert/incident.h): is uid/container tracked?
 * 1 with *ret_ready_since (unix s the watch first showed it running and ready
 * since its last restart; 0: not ready) and *ret_gen (the entry's await, for
 * krc_recovery_forget; ret_gen may be NULL), 0 when it is not (never awaited,
 * or forgotten: its pod deleted or replaced). Keeps the entry another
 * KRC_RECOVERY_KEEP_S (an open incident still waits for it). */
int krc_recovery_ready(struct krc_recovery *t, const char *uid, const char *container,
                       int64_t now_s, int64_t *ret_ready_since, uint64_t *ret_gen);

/* The incident that asked about uid/container ended: forget the entry, unless it was
 * awaited again since krc_recovery_ready gave `gen` (a restart detected since then: its
 * incident waits for it). */
void krc_recovery_forget(struct krc_recovery *t, const char *uid, const char *container,
                         uint64_t gen);

/* Entries held (tests, metrics). */
size_t krc_recovery_count(const struct krc_recovery *t);

#endif
