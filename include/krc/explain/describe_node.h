/* `kubectl describe node` text -> the Node JSON that kube_parse reads, so
 * that `krc explain` takes the node as people paste it. Only what the text
 * shows is carried over (a field that is not there stays absent):
 *   Name                   metadata.name
 *   Unschedulable          spec.unschedulable (true / false)
 *   Conditions             status.conditions: type, status, reason and
 *                          message of each row (Type Status
 *                          LastHeartbeatTime LastTransitionTime Reason
 *                          Message: cells apart by two or more spaces, as
 *                          kubectl aligns them; a row whose spaces were
 *                          squeezed is read word by word, its two times
 *                          "Wed, 02 Dec 2026 16:49:58 +0000" skipped)
 *   Capacity, Allocatable  status.capacity / status.allocatable
 *   System Info            status.nodeInfo: Kernel Version, OS Image,
 *                          Container Runtime Version, Kubelet Version
 * The rest (labels, taints, addresses, the pods, the Events table) is not
 * read. An indentation common to the lines and CR line ends are ignored. */
#ifndef KRC_EXPLAIN_DESCRIBE_NODE_H
#define KRC_EXPLAIN_DESCRIBE_NODE_H

#include <stddef.h>

#include "krc/util/error.h"

/* 1 when the text has at least two of the lines only `kubectl describe
 * node` prints ("Roles:", "Taints:", "Unschedulable:", "System Info:",
 * "Kubelet Version:", "Kernel Version:", "Container Runtime Version:",
 * "Non-terminated Pods:", "Allocated resources:", "PodCIDR:",
 * "ProviderID:", "Lease:", the conditions header with "LastHeartbeatTime"),
 * at any indentation; describe pod prints none of them. */
int krc_describe_node_is(const char *text, size_t len);

/* Convert. *ret_node_json (caller frees with krc_free) on success;
 * KRC_EINVAL without a "Name:" line; KRC_ETOOBIG beyond
 * KRC_DESCRIBE_NODE_MAX_LINES lines; KRC_ENOMEM. */
#define KRC_DESCRIBE_NODE_MAX_LINES 200000
int krc_describe_node(const char *text, size_t len, char **ret_node_json, struct krc_error *err);

#endif
