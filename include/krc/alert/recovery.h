/* Recovery tracking from what the watch already sees (Web API mode): after
 * a restart's alert was posted, a "recovered" reply goes into its thread once
 * the container has run ready for recoveredAfter and its restart count has
 * not moved. No API request: the watch thread hands every pod event to
 * krc_recovery_observe(), which records, for the containers awaited,
 * the restart count and since when they run ready (the time of the event
 * that first showed them running and ready).
 *
 * Life of an entry (pod UID + container):
 * - awaited when the restart is detected (the watch thread, before the
 *   event's state is observed, so nothing between the restart and the alert
 *   is missed); one that is never armed is dropped after an hour;
 * - armed when its alert was posted (the thread's ts and channel);
 * - due when armed, running and ready for `after` seconds: taken once;
 * - forgotten when the pod is deleted or replaced (same namespace/name,
 *   another UID), and 24 h after it was armed.
 *
 * Thread-safe (one lock); a pod event costs one load when nothing is
 * awaited, else a hash comparison per entry. */
#ifndef KRC_RECOVERY_H
#define KRC_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "krc/alert/policy.h"
#include "krc/kube/kube_pod.h"

#define KRC_RECOVERY_GIVE_UP_S (24 * 3600)
#define KRC_RECOVERY_UNARMED_S 3600
/* Destinations one restart's recovery is reported to (a Slack thread, a
 * PagerDuty resolve, ...): as many as a restart can be routed to, so none
 * loses its "recovered" message (a PagerDuty incident left open). */
#define KRC_RECOVERY_MAX_DESTS KRC_POLICY_MAX_ROUTED

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

/* The alert (or a thread reply) of uid/container was posted under thread
 * ts in channel (copied) to `dest` (the caller's, handed back when due: one
 * due entry per destination armed; arming the same dest again updates it).
 * Arming again (a later reply) restarts the 24 h. 0, or KRC_ENOTFOUND when
 * the restart is not awaited (e.g. resumed from before a restart of krc). */
int krc_recovery_arm(struct krc_recovery *t, const char *uid, const char *container, const char *ts,
                     const char *channel, void *dest, int64_t now_s);

struct krc_recovery_due {
    char namespace[256];
    char pod[256];
    char container[256];
    char ts[64];
    char channel[64];
    void *dest;
    int restart_count;
    int64_t ready_seconds; /* has run ready this long */
};

/* Take up to max entries that are due at now_s (one per armed destination;
 * a restart whose destinations do not all fit waits for the next call) (armed, running and ready
 * for after_s); drop the expired ones. Returns how many were written. */
size_t krc_recovery_take_due(struct krc_recovery *t, int64_t now_s, int64_t after_s,
                             struct krc_recovery_due *out, size_t max);

/* An incident's awaited pod (alert/incident.h): is uid/container tracked?
 * 1 with *ret_ready_since (unix s the watch first showed it running and ready
 * since its last restart; 0: not ready), 0 when it is not (never awaited, or
 * forgotten: its pod deleted or replaced). Keeps an unarmed entry another
 * KRC_RECOVERY_UNARMED_S (an open incident still waits for it). */
int krc_recovery_ready(struct krc_recovery *t, const char *uid, const char *container,
                       int64_t now_s, int64_t *ret_ready_since);

/* Entries held (tests, metrics). */
size_t krc_recovery_count(struct krc_recovery *t);

#endif
