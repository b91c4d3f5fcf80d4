/* The tracker: tables of template revisions, workloads and nodes, the
 * recent-changes ring, feeding and draining (track.h). */
#include "krc/track/track.h"

#include <string.h>

static const struct krc_track_resource_info RESOURCES[KRC_TRACK_N_RESOURCES] = {
    [KRC_TRACK_DEPLOYMENTS] = {"deployments", "apis/apps/v1/deployments", 1, 1},
    [KRC_TRACK_REPLICASETS] = {"replicasets", "apis/apps/v1/replicasets", 0, 1},
    [KRC_TRACK_STATEFULSETS] = {"statefulsets", "apis/apps/v1/statefulsets", 1, 1},
    [KRC_TRACK_DAEMONSETS] = {"daemonsets", "apis/apps/v1/daemonsets", 1, 1},
    [KRC_TRACK_CONTROLLERREVISIONS] = {"controllerrevisions", "apis/apps/v1/controllerrevisions",
                                       0, 1},
    [KRC_TRACK_JOBS] = {"jobs", "apis/batch/v1/jobs", 1, 1},
    [KRC_TRACK_CRONJOBS] = {"cronjobs", "apis/batch/v1/cronjobs", 0, 1},
    [KRC_TRACK_NODES] = {"nodes", "api/v1/nodes", 0, 0},
};

const struct krc_track_resource_info *krc_track_resource_info(enum krc_track_resource r)
{
    return (unsigned)r < KRC_TRACK_N_RESOURCES ? &RESOURCES[r] : NULL;
}

void krc_track_options_defaults(struct krc_track_options *o)
{
    o->lookback_s = 86400;
    o->max_changes = 4096;
}
