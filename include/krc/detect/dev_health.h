/* Device health that turns Unhealthy after the restart (issue 26): the
 * kubelet's containerStatuses[].allocatedResourcesStatus (KEP-4680) may be
 * updated after the container crashed (nothing orders the two). For a
 * window after a restart of a container that holds accelerators, the pod
 * updates the watch already applies are checked: the first one that reports
 * a device of the container Unhealthy, while the container's restart is
 * still its last one, is a hit, and the restart is forgotten (at most one
 * hit per restart). The caller amends that restart (daemon/pipeline.h).
 *
 * What "holds accelerators" means: the container's spec holds a device
 * plugin's accelerator resource (krc_accel_scan_pod: nvidia.com/gpu,
 * amd.com/gpu, google.com/tpu, ...), or its status already lists an
 * accelerator in allocatedResourcesStatus (a resource of that list or a DRA
 * claim, "claim:<claim>/<request>"). A restart whose status already reports
 * such a device Unhealthy is not watched: its own diagnosis saw it.
 *
 * Cost: while nothing is watched, krc_dev_health_observe is one atomic load;
 * a restart costs one scan of the pod's spec and, only when the pod's JSON
 * mentions allocatedResourcesStatus, one parse. A pod update of a watched
 * pod costs one parse. Watched restarts are capped (KRC_DEV_HEALTH_MAX):
 * past it, expired ones make room; past that a restart is not watched,
 * counted and logged (at the 1st, 2nd, 4th, 8th ... one). Thread-safe. Times are
 * milliseconds on the caller's monotonic clock (tests pass a fake one). */
#ifndef KRC_DEV_HEALTH_H
#define KRC_DEV_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "krc/detect/pod_state.h"
#include "krc/model/restart_ident.h"

#define KRC_DEV_HEALTH_MAX 256
#define KRC_DEV_HEALTH_CONTAINER_MAX 64 /* a container name (a DNS label) and its NUL */
#define KRC_DEV_HEALTH_DEFAULT_WINDOW_S 60

/* What the kubelet now reports: the first Unhealthy accelerator device. */
struct krc_dev_health_hit {
    char resource[160]; /* "nvidia.com/gpu" or "claim:<claim>/<request>" */
    char device[160];   /* its resourceID ("" when absent) */
    char message[256];  /* its message ("" when absent) */
    int restart_count;  /* the restart's (still the container's last) */
    int64_t after_ms;   /* time since the restart was seen */
};

struct krc_dev_health;

/* window_ms: how long after a restart its pod's updates are checked (> 0).
 * NULL on allocation failure. */
struct krc_dev_health *krc_dev_health_new(int64_t window_ms);
void krc_dev_health_free(struct krc_dev_health *t);

/* A restart was detected (the detector's callback): watched from now_ms
 * when the container holds accelerators and none is reported Unhealthy yet.
 * 1 when watched, 0 when not. */
int krc_dev_health_restart(struct krc_dev_health *t, const struct krc_restart_delta *d,
                           int64_t now_ms);

/* Every pod the watch applies, after the restarts it revealed: for one
 * watched restart of this pod whose container now has an Unhealthy
 * accelerator device, fills *hit and *container (its name) and returns 1;
 * that restart is no longer watched. A watched restart whose window ended,
 * or whose container restarted again since (that restart is diagnosed with
 * the newer status), is forgotten. 0 when nothing. One atomic load when
 * nothing is watched. Call it again while it returns 1 (several containers
 * of one pod). */
int krc_dev_health_observe(struct krc_dev_health *t, const struct krc_pod_info *pod, int64_t now_ms,
                           char container[KRC_DEV_HEALTH_CONTAINER_MAX],
                           struct krc_dev_health_hit *hit);

/* The pod is gone (DELETED, filtered out): its restarts are forgotten. */
void krc_dev_health_forget(struct krc_dev_health *t, const char *uid);

/* Restarts watched now (expired ones included until the next call). */
size_t krc_dev_health_count(struct krc_dev_health *t);

#endif
