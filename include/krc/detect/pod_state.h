/* Restart detection: a table keyed by pod UID holding only what detection
 * needs (per container its name, restartCount and the finishedAt of its last
 * termination), never whole pod objects. Namespace and name are not kept: the
 * UID fixes them and every report carries the pod being applied.
 *
 * A restart is an increase of a container's restartCount (regular, init and
 * sidecar containers alike) or a lastState.terminated that finished after
 * the one recorded, whether the count stayed the same or went down (a
 * kubelet whose count was reset, a rewritten status): a restart's identity
 * is its termination, not its count alone (docs/design/detection-and-identity.md,
 * "Identity"). Each one is reported exactly once: a relist compares
 * against the table, so it reports restarts that happened while the watch was
 * down and never repeats old ones. Pods seen for the first time report only
 * terminations that finished at or after `report_since` (start-up time minus
 * the start-up window), so old restarts are not re-alerted at start-up. */
#ifndef KRC_POD_STATE_H
#define KRC_POD_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "krc/kube/kube_pod.h"

struct krc_pod_state;

/* What the table knew about a container before this update. */
struct krc_restart_delta {
    const struct krc_pod_info *pod;             /* borrowed, valid during the callback */
    const struct krc_container_info *container; /* borrowed, points into pod */
    int previous_count;                         /* -1 when the pod/container was not known */
    int missed;                                 /* restarts beyond one since the last observation */
};

/* Called once per detected restart. */
typedef void (*krc_restart_cb)(const struct krc_restart_delta *delta, void *userdata);

/* report_since: unix seconds; terminations of first-seen pods that finished
 * before it are not reported. start_time: pods created after it report
 * restarts even without a finishedAt. Caller frees with krc_pod_state_free. */
struct krc_pod_state *krc_pod_state_new(int64_t report_since, int64_t start_time);
void krc_pod_state_free(struct krc_pod_state *st);

/* ADDED/MODIFIED or a list item. KRC_ENOMEM leaves the table unchanged for
 * that pod (the restart, if any, is still reported); so does KRC_ETOOBIG
 * for a pod with more than 65535 containers. KRC_EINVAL when uid, namespace
 * or name is NULL. finishedAt is kept as 32-bit unix seconds (until 2106;
 * later times compare as equal, times <= 0 as absent). */
int krc_pod_state_apply(struct krc_pod_state *st, const struct krc_pod_info *pod, krc_restart_cb cb,
                        void *userdata);
/* DELETED: the pod leaves the table. Returns 1 if it was there. */
int krc_pod_state_delete(struct krc_pod_state *st, const char *uid);
/* Forget a pod without a DELETED event (it stopped matching a filter). */
#define krc_pod_state_forget krc_pod_state_delete

/* A relist starts: pods not applied again before sync_end are removed. */
void krc_pod_state_sync_begin(struct krc_pod_state *st);
/* Returns the number of pods removed because the relist no longer had them. */
size_t krc_pod_state_sync_end(struct krc_pod_state *st);

size_t krc_pod_state_count(const struct krc_pod_state *st);
/* Approximate heap bytes held by the table, malloc's chunk headers and
 * rounding (glibc's) and the interned container names included. */
size_t krc_pod_state_memory(const struct krc_pod_state *st);

#endif
