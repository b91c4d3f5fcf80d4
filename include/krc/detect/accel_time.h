/* GPU time lost: accelerator devices held x the seconds a container spent not
 * running while holding them (waiting in back-off after a crash, failed
 * starts), counted from the pod updates the watch already sees.
 *
 * A container is tracked from its first detected restart on, and only when
 * its spec holds devices: an extended resource of the device plugins'
 * closed list (krc_report_is_gpu_resource: nvidia.com/gpu, amd.com/gpu,
 * google.com/tpu, MIG slices, ...; never quantities such as nvidia.com/gpumem
 * or gpucores), its limit, else its request. DRA claims are not counted: the
 * pod does not say how many devices a claim holds.
 *
 * Cost: while nothing is tracked, krc_accel_time_observe is one atomic load
 * and no memory is held; a restart costs one scan of the pod's JSON (its
 * spec) and, only for a container that holds devices, one parse for the
 * workload's name. Tracked pods are capped (KRC_ACCEL_MAX_PODS): when full,
 * pods whose containers run again make room (only their "so far" is lost);
 * past that a new one is not tracked, counted (krc_accel_time_dropped) and
 * logged. One table per watch scope, like the detection table.
 *
 * Every count goes to the emit callback: (namespace, workload, resource,
 * device-seconds), the krc_accelerator_seconds_lost_total counter's labels.
 * Times (now_ms) are milliseconds on the caller's monotonic clock (tests
 * pass a fake one); only a termination's finishedAt is wall time, placed on
 * that clock with wall_s. Thread-safe: the watch thread and the metrics
 * scrape share a table. */
#ifndef KRC_ACCEL_TIME_H
#define KRC_ACCEL_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "krc/detect/pod_state.h"

#define KRC_ACCEL_MAX_PODS 1024
#define KRC_ACCEL_HOLDS_PER_POD 4  /* (container, resource) pairs of one pod */
#define KRC_ACCEL_CONTAINER_MAX 64 /* a container name (a DNS label) and its NUL */
#define KRC_ACCEL_NAME_MAX 129     /* a metrics label value (128 bytes) and its NUL */
/* A spell of not running starts at the termination's finishedAt when that is
 * at most this long before wall_s (the kubelet's longest back-off), else
 * when seen. */
#define KRC_ACCEL_BACKDATE_MAX_S 300

/* One accelerator resource a container holds. */
struct krc_accel_hold {
    char resource[KRC_ACCEL_NAME_MAX];
    long devices;
};

/* What the alert says about the restarted container (devices 0: it holds
 * none, or it is not tracked). lost_ms: time not running while holding
 * them, up to at_ms (monotonic); down: still not running then (the time
 * since at_ms adds to it). */
struct krc_accel_note {
    char resource[KRC_ACCEL_NAME_MAX]; /* the first resource it holds */
    long devices;
    int64_t lost_ms;
    int64_t at_ms;
    int down;
    /* lost_ms less what the note of the container's previous restart said:
     * the time counted since then (restart_summary sums devices x it) */
    int64_t since_last_ms;
};

/* The accelerators container `container` holds according to the pod JSON
 * `json` (spec.containers[] and spec.initContainers[]: resources.limits,
 * else resources.requests): at most `max` of them into out; returns how
 * many. 0 for malformed JSON or a container the spec does not list. */
size_t krc_accel_scan_pod(const char *json, size_t len, const char *container,
                          struct krc_accel_hold *out, size_t max);

typedef void (*krc_accel_emit_fn)(const char *namespace, const char *workload, const char *resource,
                                  double device_seconds, void *userdata);

struct krc_accel_time;

/* NULL on allocation failure. emit may be NULL (nothing counted). */
struct krc_accel_time *krc_accel_time_new(krc_accel_emit_fn emit, void *userdata);
void krc_accel_time_free(struct krc_accel_time *t);

/* A restart was detected (call it from the detector's callback, before the
 * same event is observed): a container holding accelerators is tracked from
 * now on and its spell of not running starts at the termination. *note says
 * what it holds and has lost so far (devices 0 when nothing). wall_s: unix
 * seconds now, to place finishedAt. */
void krc_accel_time_restart(struct krc_accel_time *t, const struct krc_restart_delta *d,
                            int64_t now_ms, int64_t wall_s, struct krc_accel_note *note);

/* Every pod the watch applies: a tracked container seen running ends its
 * spell, one seen waiting or terminated again starts one; a pod being
 * deleted or finished ends them all. One atomic load when nothing is
 * tracked. */
void krc_accel_time_observe(struct krc_accel_time *t, const struct krc_pod_info *pod,
                            int64_t now_ms);

/* The pod is gone (DELETED, filtered out): its spells end now, it is
 * forgotten. */
void krc_accel_time_forget(struct krc_accel_time *t, const char *uid, int64_t now_ms);

/* A relist starts: pods not applied again (observe) before sync_end are
 * gone; their spells end at sync_end's now_ms. */
void krc_accel_time_sync_begin(struct krc_accel_time *t);
void krc_accel_time_sync_end(struct krc_accel_time *t, int64_t now_ms);

/* Count the open spells up to now_ms (a metrics scrape calls it, so the
 * counter grows while a container stays in back-off). */
void krc_accel_time_flush(struct krc_accel_time *t, int64_t now_ms);

/* Pods tracked, and pods not tracked because the table was full. */
size_t krc_accel_time_count(struct krc_accel_time *t);
size_t krc_accel_time_dropped(struct krc_accel_time *t);

#endif
