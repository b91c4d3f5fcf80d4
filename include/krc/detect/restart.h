/* One detected restart: the owned record that travels from the detector
 * through the bounded queue to the workers (collector, diagnose, store,
 * sender). */
#ifndef KRC_RESTART_H
#define KRC_RESTART_H

#include <stdint.h>

#include "krc/detect/accel_time.h"
#include "krc/detect/pod_state.h"
#include "krc/model/restart_ident.h"

struct krc_restart {
    /* which restart: pod UID, container, restartCount, the termination's
     * finishedAt and containerID (model/restart_ident.h) */
    struct krc_restart_ident ident;
    char *namespace;
    char *pod;
    char *node;          /* may be NULL */
    char *reason;        /* lastState.terminated.reason, may be NULL */
    char *slack_channel; /* alert-slack-channel annotation/label, may be NULL */
    int is_init;
    int is_sidecar;
    int previous_count; /* -1: first sight of the pod/container */
    int missed;         /* further restarts folded into this one (seen late) */
    int pod_restarts;   /* sum of restartCount over the pod's containers */
    int has_exit_code;
    int exit_code;
    int signal;
    int64_t started_at;
    char *pod_json; /* the pod object as the watch delivered it minus
                     * metadata.managedFields, or NULL */
    size_t pod_json_len;
    /* Without pod_json (past the queue's pod budget): the pod's controller
     * owner and its pod-template-hash label, so that a restart that is not
     * collected still counts under its workload (collect/collector.c); NULL
     * when the pod has none, or with pod_json. */
    char *owner_kind;
    char *owner_name;
    char *template_hash;
    int64_t detected_at; /* unix seconds */
    int64_t detected_mono_ms;
    /* the accelerators the container holds and the time it has spent not
     * running while holding them (devices 0: none; detect/accel_time.h) */
    struct krc_accel_note accel;
    /* Not a new restart: the kubelet reported a device of this (already
     * detected) restart's container Unhealthy after it (detect/dev_health.h);
     * the pipeline amends the restart's alert and stored report. */
    int amend;
    int64_t amend_after_ms; /* how long after the restart was seen */
};

/* Build an owned restart from a detector delta. With copy_pod, and when the
 * delta has the pod's JSON, the restart carries a copy of it (so the
 * collector needs no GET); without, pod_json is NULL and the collector GETs
 * the pod. Caller frees with krc_restart_free. NULL on allocation failure. */
struct krc_restart *krc_restart_from_delta(const struct krc_restart_delta *d, int copy_pod);
void krc_restart_free(struct krc_restart *r);

/* Sum of restartCount over a pod's regular containers (the Go tool's
 * IGNORE_RESTART_COUNT compares this). */
int krc_restart_pod_total(const struct krc_pod_info *pod);

#endif
