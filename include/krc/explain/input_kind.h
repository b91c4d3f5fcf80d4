/* What a file given to `krc explain FILE...` holds, told from its content
 * (never from its name), so that positional files and piped standard input
 * need no option:
 *
 *   JSON or YAML of a Kubernetes object (the keys apiVersion, kind,
 *   metadata, spec, status or items at the top level): by its kind, a Pod,
 *   an Event or an EventList, a Node, or a List (or PodList, NodeList) of
 *   them: only Events, one Pod, one Node (and no Pod). Without a kind, by
 *   its fields: spec.containers or a container status makes a Pod,
 *   involvedObject or regarding an Event, status.nodeInfo a Node. Another
 *   kind (a Deployment) or a List of several Pods is refused.
 *   `kubectl describe node` text: at least two of its own lines ("Roles:",
 *   "Taints:", "Unschedulable:", "System Info:", "Kubelet Version:",
 *   "Kernel Version:", "Container Runtime Version:", "Non-terminated Pods:",
 *   "Allocated resources:", "PodCIDR:", "ProviderID:", "Lease:", the
 *   conditions table's "LastHeartbeatTime" header), which describe pod
 *   never prints.
 *   `kubectl describe pod` text (krc_kube_describe_is_pod), whole or a
 *   fragment; an event table without any of describe pod's own fields
 *   (describe's Events table, `kubectl get events`) is events.
 *   Anything else that is text is a container log (`kubectl logs
 *   --previous`), a JSON log line among them, and an empty file (the log
 *   of a container that wrote nothing). Binary data (a NUL byte) is
 *   refused, and so is a JSON document that does not parse and whose first
 *   line is "{" or "[" alone (kubectl -o json cut short). */
#ifndef KRC_EXPLAIN_INPUT_KIND_H
#define KRC_EXPLAIN_INPUT_KIND_H

#include <stddef.h>

#include "krc/util/error.h"

enum krc_input_kind {
    KRC_INPUT_POD,           /* kubectl get pod -o json|yaml */
    KRC_INPUT_DESCRIBE_POD,  /* kubectl describe pod */
    KRC_INPUT_EVENTS,        /* kubectl get events -o json|yaml */
    KRC_INPUT_EVENT_TABLE,   /* kubectl get events, describe's Events table */
    KRC_INPUT_NODE,          /* kubectl get node -o json|yaml */
    KRC_INPUT_DESCRIBE_NODE, /* kubectl describe node */
    KRC_INPUT_LOG            /* kubectl logs --previous: anything else */
};

/* "pod", "describe pod", "events", "event table", "node", "describe node",
 * "log". */
const char *krc_input_kind_name(enum krc_input_kind kind);

/* Classify `len` bytes (not necessarily NUL-terminated; up to `max` bytes
 * of JSON are made from YAML to read it). 0 and *ret_kind, or KRC_EINVAL
 * with a message saying what the content is ("binary data (a NUL byte)",
 * "a Deployment (a Kubernetes object of another kind)", "a List of 2 Pods") for
 * the caller to prefix with the file name and follow with what was
 * expected; KRC_ENOMEM. */
int krc_input_classify(const char *data, size_t len, size_t max, enum krc_input_kind *ret_kind,
                       struct krc_error *err);

#endif
