#include "krc/model/cause.h"

#include <string.h>

#include "krc/util/error.h"

static const char *const cause_names[KRC_CAUSE_COUNT] = {
    "unknown",
    "oom_killed",
    "liveness_probe_failed",
    "startup_probe_failed",
    "command_not_found",
    "permission_denied",
    "segfault",
    "gpu_out_of_memory",
    "gpu_error",
    "dependency_unreachable",
    "app_error",
    "completed",
    "killed",
    "terminated",
    "start_failed",
    "exec_format_error",
    "illegal_instruction",
    "aborted",
    "app_out_of_memory",
    "disk_full",
    "evicted",
    "node_not_ready",
    "restart_rule",
    "gpu_device_unhealthy",
    "restarted_with_others",
    "resize_restart",
    "sandbox_changed",
};

const char *krc_confidence_name(enum krc_confidence c)
{
    switch (c) {
    case KRC_CONFIDENCE_HIGH:
        return "high";
    case KRC_CONFIDENCE_MEDIUM:
        return "medium";
    case KRC_CONFIDENCE_LOW:
    default:
        return "low";
    }
}

int krc_confidence_parse(const char *name, enum krc_confidence *ret)
{
    static const enum krc_confidence all[] = {KRC_CONFIDENCE_LOW, KRC_CONFIDENCE_MEDIUM,
                                              KRC_CONFIDENCE_HIGH};
    for (size_t i = 0; name != NULL && i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(name, krc_confidence_name(all[i])) == 0) {
            *ret = all[i];
            return 0;
        }
    }
    return KRC_EINVAL;
}

int krc_cause_always_intentional(enum krc_cause cause)
{
    return cause == KRC_CAUSE_RESTART_RULE || cause == KRC_CAUSE_RESTARTED_WITH_OTHERS ||
           cause == KRC_CAUSE_RESIZE_RESTART;
}

int krc_cause_may_be_intentional(enum krc_cause cause)
{
    return krc_cause_always_intentional(cause) || cause == KRC_CAUSE_TERMINATED;
}

const char *krc_cause_name(enum krc_cause cause)
{
    if ((int)cause < 0 || (int)cause >= KRC_CAUSE_COUNT) {
        return "unknown";
    }
    return cause_names[cause];
}

int krc_cause_parse(const char *name, enum krc_cause *ret_cause)
{
    int i;

    for (i = 0; name != NULL && i < KRC_CAUSE_COUNT; i++) {
        if (strcmp(name, cause_names[i]) == 0) {
            *ret_cause = (enum krc_cause)i;
            return 0;
        }
    }
    return KRC_EINVAL;
}
