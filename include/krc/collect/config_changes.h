/* trackConfigChanges: the metadata of the ConfigMaps and Secrets a crashing
 * pod references (volumes, projected sources, envFrom, env valueFrom; at
 * most KRC_TRACK_CONFIG_REFS), one GET each with
 * Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,
 * never their data; when their data last changed (managedFields) goes to
 * the change tracker, which names a change before the crash in the alert's
 * "what changed" (track/track.h). */
#ifndef KRC_COLLECT_CONFIG_CHANGES_H
#define KRC_COLLECT_CONFIG_CHANGES_H

#include <stddef.h>

#include "krc/kube/kube_client.h"
#include "krc/model/report.h"
#include "krc/track/track.h"

#define KRC_COLLECT_CONFIG_ACCEPT "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

/* For the pod pod_json (len bytes) whose report is rep (namespace, name
 * and workload filled): look the references up and note what they say in
 * t. What cannot be read becomes a note in rep (a 403 says which RBAC is
 * missing); a ConfigMap or Secret that does not exist is left out. Returns
 * how many were read; KRC_ENOMEM. */
int krc_collect_config_changes(struct krc_kube_client *c, struct krc_track *t, const char *pod_json,
                               size_t len, struct krc_report *rep);

#endif
