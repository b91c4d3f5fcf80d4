#include "krc/alert/format.h"

#include <string.h>

enum krc_alert_severity krc_alert_cause_severity(enum krc_cause cause)
{
    switch (cause) {
    case KRC_CAUSE_OOM_KILLED:
    case KRC_CAUSE_SEGFAULT:
    case KRC_CAUSE_GPU_OUT_OF_MEMORY:
    case KRC_CAUSE_GPU_ERROR:
    case KRC_CAUSE_COMMAND_NOT_FOUND:
    case KRC_CAUSE_PERMISSION_DENIED:
    case KRC_CAUSE_APP_ERROR:
        return KRC_ALERT_SEV_CRITICAL;
    case KRC_CAUSE_LIVENESS_PROBE_FAILED:
    case KRC_CAUSE_STARTUP_PROBE_FAILED:
    case KRC_CAUSE_DEPENDENCY_UNREACHABLE:
    case KRC_CAUSE_KILLED:
    case KRC_CAUSE_NODE_NOT_READY:
        return KRC_ALERT_SEV_WARNING;
    default:
        return KRC_ALERT_SEV_INFO;
    }
}

const char *krc_alert_cause_title(enum krc_cause cause)
{
    static const char *const titles[KRC_CAUSE_COUNT] = {
        "Restarted",
        "OOMKilled",
        "Liveness probe failed",
        "Startup probe failed",
        "Command not found",
        "Permission denied",
        "Segmentation fault",
        "GPU out of memory",
        "GPU error",
        "Dependency unreachable",
        "Application error",
        "Completed",
        "Killed",
        "Terminated",
        "Container failed to start",
        "Exec format error",
        "Illegal instruction",
        "Aborted",
        "Application out of memory",
        "Disk full",
        "Evicted",
        "Node not ready",
    };

    if ((int)cause < 0 || (int)cause >= KRC_CAUSE_COUNT) {
        return titles[0];
    }
    return titles[cause];
}

void krc_alert_options_init(struct krc_alert_options *o)
{
    memset(o, 0, sizeof(*o));
    o->max_log_lines = KRC_ALERT_DEFAULT_LOG_LINES;
}
