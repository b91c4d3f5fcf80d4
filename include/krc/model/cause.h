/* The causes a diagnosis names and how sure it is: codes shared by the
 * analyser, the store, the metrics and every output (docs/causes.md). The
 * enum values are stored: append, never reorder. */
#ifndef KRC_CAUSE_H
#define KRC_CAUSE_H

enum krc_cause {
    KRC_CAUSE_UNKNOWN = 0,
    KRC_CAUSE_OOM_KILLED,
    KRC_CAUSE_LIVENESS_PROBE_FAILED,
    KRC_CAUSE_STARTUP_PROBE_FAILED,
    KRC_CAUSE_COMMAND_NOT_FOUND,
    KRC_CAUSE_PERMISSION_DENIED,
    KRC_CAUSE_SEGFAULT,
    KRC_CAUSE_GPU_OUT_OF_MEMORY,
    KRC_CAUSE_GPU_ERROR,
    KRC_CAUSE_DEPENDENCY_UNREACHABLE,
    KRC_CAUSE_APP_ERROR,
    KRC_CAUSE_COMPLETED,
    KRC_CAUSE_KILLED,
    KRC_CAUSE_TERMINATED,
    /* issue 11: appended so that stored enum values keep their meaning */
    KRC_CAUSE_START_FAILED,        /* the runtime could not start the process */
    KRC_CAUSE_EXEC_FORMAT_ERROR,   /* binary for another CPU architecture */
    KRC_CAUSE_ILLEGAL_INSTRUCTION, /* SIGILL / exit 132 */
    KRC_CAUSE_ABORTED,             /* SIGABRT / exit 134 */
    KRC_CAUSE_APP_OUT_OF_MEMORY,   /* the language runtime's own heap limit */
    KRC_CAUSE_DISK_FULL,           /* "No space left on device" */
    KRC_CAUSE_EVICTED,             /* kubelet eviction / node pressure */
    /* issue 25 */
    KRC_CAUSE_NODE_NOT_READY, /* killed while its node was NotReady */
    /* issue 26 */
    KRC_CAUSE_RESTART_RULE,          /* restarted by its restartPolicyRules (KEP-5307) */
    KRC_CAUSE_GPU_DEVICE_UNHEALTHY,  /* the kubelet reports a device it holds Unhealthy */
    KRC_CAUSE_RESTARTED_WITH_OTHERS, /* killed by another container's RestartAllContainers
                                        rule (KEP-5532) */
    KRC_CAUSE_RESIZE_RESTART,        /* stopped to apply an in-place resize whose
                                        resizePolicy is RestartContainer (KEP-1287) */
    KRC_CAUSE_SANDBOX_CHANGED,       /* the pod sandbox was re-created (node-level) */
};
#define KRC_CAUSE_COUNT 27

/* How sure a diagnosis is, given what it could see. */
enum krc_confidence {
    KRC_CONFIDENCE_LOW = 0,
    KRC_CONFIDENCE_MEDIUM,
    KRC_CONFIDENCE_HIGH,
};

/* "oom_killed", ... ("unknown" for out-of-range values). */
const char *krc_cause_name(enum krc_cause cause);
/* Inverse of krc_cause_name; KRC_EINVAL for an unknown name. */
int krc_cause_parse(const char *name, enum krc_cause *ret_cause);
/* 1 for the causes that are intended restarts by their name (restart_rule,
 * restarted_with_others, resize_restart): a diagnosis of one is always
 * intentional. terminated may be either (the diagnosis says). */
int krc_cause_always_intentional(enum krc_cause cause);

/* 1 for the causes a diagnosis marked intentional can have: the three above
 * and `terminated` (a stop by the reported stop signal, a sidecar stopped
 * during deletion); the values of krc_restarts_intentional_total's cause. */
int krc_cause_may_be_intentional(enum krc_cause cause);
/* "low", "medium", "high". */
const char *krc_confidence_name(enum krc_confidence c);
/* Inverse of krc_confidence_name; KRC_EINVAL for an unknown name. */
int krc_confidence_parse(const char *name, enum krc_confidence *ret);

#endif
