/* The rule table: the causes a diagnosis can name and, in precedence order,
 * the rule that recognises each (docs/causes.md). A rule is a row: its
 * name (the cause, or the cause and how it is recognised), the cause, the
 * match function that says whether it holds (the conditions; it sets the
 * confidence and what it found in struct dctx), the say function that
 * writes the summary and the evidence, the next step and the kubectl
 * commands to look further. The first row that holds wins; the last one
 * (unknown) always does. */
#include "diagnose_private.h"

/* Precedence order: the first rule that holds names the cause (docs/causes.md). */
const struct rule krc_diag_rules[] = {
    {"oom_killed", KRC_CAUSE_OOM_KILLED, krc_diag_match_oom_killed, krc_diag_say_oom_killed,
     "Compare the container's memory use with its limit (kubectl top) and raise the memory limit "
     "or reduce its memory use",
     CMD_TOP | CMD_DESCRIBE | CMD_LOGS_PREV},
    {"evicted", KRC_CAUSE_EVICTED, krc_diag_match_evicted, krc_diag_say_evicted,
     "Check the node's pressure conditions and the pod's ephemeral-storage and memory use; set "
     "requests/limits that fit, or move the pod to a node with room",
     CMD_DESCRIBE | CMD_NODE | CMD_EVENTS},
    {"liveness_probe_failed", KRC_CAUSE_LIVENESS_PROBE_FAILED, krc_diag_match_liveness_event,
     krc_diag_say_liveness_event,
     "Check why the liveness endpoint failed (the log around the kill) and whether the probe's "
     "timeoutSeconds/failureThreshold fit the application's pauses",
     CMD_LOGS_PREV | CMD_DESCRIBE | CMD_EVENTS},
    {"startup_probe_failed", KRC_CAUSE_STARTUP_PROBE_FAILED, krc_diag_match_startup_event,
     krc_diag_say_startup_event,
     "Give the application more time to start (startupProbe failureThreshold x periodSeconds) "
     "or find what slows its start in the log",
     CMD_LOGS_PREV | CMD_DESCRIBE | CMD_EVENTS},
    {"node_not_ready", KRC_CAUSE_NODE_NOT_READY, krc_diag_match_node_not_ready,
     krc_diag_say_node_not_ready,
     "Check the pod's node first (its conditions and events; the kubelet, the container runtime, "
     "memory and disk on the node): the container was killed with the node",
     CMD_NODE | CMD_EVENTS | CMD_DESCRIBE},
    {"exec_format_error", KRC_CAUSE_EXEC_FORMAT_ERROR, krc_diag_match_exec_format,
     krc_diag_say_exec_format,
     "Build or pull the image for the node's CPU architecture (docker buildx --platform), or "
     "schedule the pod on nodes of the image's architecture",
     CMD_ARCH | CMD_DESCRIBE},
    {"command_not_found", KRC_CAUSE_COMMAND_NOT_FOUND, krc_diag_match_not_found,
     krc_diag_say_not_found,
     "Check the command/args of the container against the image (the binary's path, $PATH, the "
     "entrypoint script's interpreter line)",
     CMD_DESCRIBE | CMD_LOGS_PREV},
    {"permission_denied", KRC_CAUSE_PERMISSION_DENIED, krc_diag_match_permission,
     krc_diag_say_permission,
     "Give the container's user access to the file named: execute permission for a program "
     "(chmod +x in the image, a noexec mount), write permission for a data file (fsGroup, "
     "runAsUser, the volume's owner)",
     CMD_DESCRIBE | CMD_LOGS_PREV},
    {"disk_full", KRC_CAUSE_DISK_FULL, krc_diag_match_disk_full, krc_diag_say_disk_full,
     "Find which volume is full (the path in the message: emptyDir, PVC or the node's disk) and "
     "free or enlarge it",
     CMD_LOGS_PREV | CMD_DESCRIBE | CMD_NODE},
    {"start_failed", KRC_CAUSE_START_FAILED, krc_diag_match_start_failed, krc_diag_say_start_failed,
     "Read the runtime error in the pod's events and fix what it names (a mount, a missing "
     "ConfigMap/Secret, the security context, the cgroup or the runtime on the node)",
     CMD_DESCRIBE | CMD_EVENTS | CMD_NODE},
    /* all containers killed with a lost sandbox: one node-level cause, above the
     * exit-code and log rules that would call each kill a crash of its own */
    {"sandbox_changed", KRC_CAUSE_SANDBOX_CHANGED, krc_diag_match_sandbox_changed,
     krc_diag_say_sandbox_changed,
     "Check the pod's node: its events (Rebooted, NodeNotReady), the container runtime's and "
     "the kubelet's logs and the CNI plugin on it; the containers were stopped with their "
     "sandbox, their own logs end where it was lost",
     CMD_NODE | CMD_EVENTS | CMD_DESCRIBE},
    /* the kubelet killed it for another container's exit: that one's rule proves it */
    {"restarted_with_others", KRC_CAUSE_RESTARTED_WITH_OTHERS, krc_diag_match_restarted_with_others,
     krc_diag_say_restarted_with_others,
     "Nothing to fix in this container: look at the container whose exit restarted them all "
     "(its own restart is diagnosed and alerted on its own)",
     CMD_DESCRIBE | CMD_EVENTS},
    /* the kubelet stopped it to apply a resize its resizePolicy restarts for */
    {"resize_restart", KRC_CAUSE_RESIZE_RESTART, krc_diag_match_resize_restart,
     krc_diag_say_resize_restart,
     "Nothing to fix if the resize was wanted; set resizePolicy NotRequired for the resource "
     "if the container can take the new value without a restart",
     CMD_DESCRIBE | CMD_EVENTS},
    {"gpu_device_unhealthy", KRC_CAUSE_GPU_DEVICE_UNHEALTHY, krc_diag_match_device_unhealthy,
     krc_diag_say_device_unhealthy,
     "Take the unhealthy device out of service (cordon and drain its node, or let the device "
     "plugin or DRA driver withdraw it), check it on the node (nvidia-smi, DCGM) and reschedule "
     "the pod onto a healthy device",
     CMD_NODE | CMD_DESCRIBE | CMD_LOGS_PREV},
    {"restart_rule", KRC_CAUSE_RESTART_RULE, krc_diag_match_restart_rule, krc_diag_say_restart_rule,
     "Nothing to fix if this exit code is the retry the rule was written for; if the restarts "
     "repeat, read the previous log for why the program asks to be retried",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    /* a sidecar stops after the main containers when the pod is deleted */
    {"terminated_sidecar_deletion", KRC_CAUSE_TERMINATED, krc_diag_match_sidecar_deletion,
     krc_diag_say_sidecar_deletion,
     "Nothing to fix: the pod is being deleted; if the sidecar should outlive the main "
     "containers longer, check its stop handling and the pod's grace period",
     CMD_EVENTS | CMD_DESCRIBE},
    {"terminated_stop_signal", KRC_CAUSE_TERMINATED, krc_diag_match_stop_signal,
     krc_diag_say_stop_signal,
     "Find who stopped it: the pod's events (a deletion, a rollout, a probe kill, a resize); "
     "the exit itself is the stop signal's, not a crash",
     CMD_EVENTS | CMD_DESCRIBE},
    {"gpu_out_of_memory", KRC_CAUSE_GPU_OUT_OF_MEMORY, krc_diag_match_gpu_oom, krc_diag_say_gpu_oom,
     "Reduce the GPU memory the job needs (batch size, sequence length, model sharding) or run it "
     "on GPUs with more memory",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"app_out_of_memory", KRC_CAUSE_APP_OUT_OF_MEMORY, krc_diag_match_app_oom, krc_diag_say_app_oom,
     "Raise the runtime's heap limit (-Xmx, --max-old-space-size, GOMEMLIMIT) within the "
     "container's memory limit, or find what fills the heap",
     CMD_LOGS_PREV | CMD_TOP | CMD_DESCRIBE},
    {"segfault", KRC_CAUSE_SEGFAULT, krc_diag_match_segfault, krc_diag_say_segfault,
     "Read the log before the crash and get a core dump or stack trace; check native libraries "
     "and the image version that started crashing",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"illegal_instruction", KRC_CAUSE_ILLEGAL_INSTRUCTION, krc_diag_match_sigill,
     krc_diag_say_sigill,
     "Compare the CPU features the binary needs (AVX, AVX2, x86-64-v3) with the node's CPU; "
     "build for a baseline CPU or schedule on nodes that have the feature",
     CMD_LOGS_PREV | CMD_NODE},
    {"aborted", KRC_CAUSE_ABORTED, krc_diag_match_abort, krc_diag_say_abort,
     "Read the assertion or abort message at the end of the log and get a stack trace of the "
     "abort",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"gpu_error", KRC_CAUSE_GPU_ERROR, krc_diag_match_gpu_error, krc_diag_say_gpu_error,
     "Check the node's GPU (driver version, Xid errors in the node's kernel log, the device "
     "plugin) and drain the node if a GPU is faulty",
     CMD_NODE | CMD_LOGS_PREV},
    {"dependency_unreachable", KRC_CAUSE_DEPENDENCY_UNREACHABLE, krc_diag_match_dependency,
     krc_diag_say_dependency,
     "Check that the dependency named in the log is up and reachable from the pod (its Service, "
     "DNS name, NetworkPolicy, credentials)",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"app_error", KRC_CAUSE_APP_ERROR, krc_diag_match_app_error, krc_diag_say_app_error,
     "Read the end of the previous log for the error that made the application exit",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"evicted_node_pressure", KRC_CAUSE_EVICTED, krc_diag_match_evicted_pressure,
     krc_diag_say_evicted_pressure,
     "Check the node's pressure conditions and events, and the pod's requests/limits",
     CMD_NODE | CMD_EVENTS | CMD_DESCRIBE},
    {"startup_probe_configured", KRC_CAUSE_STARTUP_PROBE_FAILED, krc_diag_match_startup_spec,
     krc_diag_say_startup_spec,
     "Check the pod's events right after the next restart for a startup probe kill, and whether "
     "the startup probe's budget fits the start time",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"liveness_probe_configured", KRC_CAUSE_LIVENESS_PROBE_FAILED, krc_diag_match_liveness_spec,
     krc_diag_say_liveness_spec,
     "Check the pod's events right after the next restart for a liveness probe kill, and test "
     "the probe's command or endpoint by hand",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"terminated_exit0", KRC_CAUSE_TERMINATED, krc_diag_match_terminated_exit0,
     krc_diag_say_terminated_exit0,
     "Find who stopped it: the pod's events (a probe kill, a deletion, an eviction), a rollout "
     "of its workload, or a sidecar or supervisor in the pod; it is not a program that "
     "finished, so a Job is not the answer",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"completed", KRC_CAUSE_COMPLETED, krc_diag_match_completed, krc_diag_say_completed,
     "If the program is meant to finish, run it as a Job; if it is a server, find in its log why "
     "it exited 0",
     CMD_LOGS_PREV | CMD_DESCRIBE},
    {"killed", KRC_CAUSE_KILLED, krc_diag_match_killed, krc_diag_say_killed,
     "Find who sent SIGKILL: the pod's events (probe kill, eviction), the node's kernel log (OOM "
     "killer) and the application's own supervisor or timeout",
     CMD_EVENTS | CMD_NODE | CMD_LOGS_PREV},
    {"terminated", KRC_CAUSE_TERMINATED, krc_diag_match_terminated, krc_diag_say_terminated,
     "Find who sent SIGTERM: the pod's events (probe kill, deletion), a sidecar or supervisor in "
     "the pod, or the application itself",
     CMD_EVENTS | CMD_LOGS_PREV | CMD_DESCRIBE},
    {"unknown", KRC_CAUSE_UNKNOWN, krc_diag_match_unknown, krc_diag_say_unknown,
     "Gather the missing evidence: the pod's lastState, its events and the previous log",
     CMD_DESCRIBE | CMD_EVENTS | CMD_LOGS_PREV},
};

const size_t krc_diag_n_rules = sizeof(krc_diag_rules) / sizeof(krc_diag_rules[0]);
