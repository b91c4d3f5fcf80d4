/* `kubectl describe pod` text -> the Pod JSON and the event list JSON that
 * kube_parse reads, so that `krc explain --pod` takes what people paste most.
 *
 * Conservative: only what the text shows is carried over, a field that is
 * not there stays absent (never a default that could read as a fact):
 *   top level   Name, Namespace, Node (the part before "/"), Status (phase),
 *               Reason, Message, Controlled By (Kind/name)
 *   containers  (and Init Containers) Container ID, Image, Command, Args,
 *               State and Last State (Running/Waiting/Terminated with
 *               Reason, Message, Exit Code, Signal, Started, Finished),
 *               Ready, Restart Count, Limits, Requests, Liveness, Readiness
 *               and Startup probe lines (handler, delay, timeout, period,
 *               #success, #failure)
 *   Events      the table (Type, Reason, Age, From, Message; before kubectl
 *               1.10 FirstSeen, LastSeen, Count, From, SubObjectPath, Type,
 *               Reason, Message, tab-separated): type, reason, message,
 *               count ("x5 over 3m", Count), source component and host
 *               ("kubelet, node-1", "{kubelet node-1}"), the SubObjectPath
 *               as involvedObject.fieldPath;
 *               ages are relative to an unknown moment, so events get no
 *               time; involvedObject is the described pod (its name and
 *               namespace when the text shows them).
 * Fragments are read too, as people paste them: one container's block
 * ("State:" / "Last State:" lines without the container's name line: an
 * entry without "name", which kube_parse matches to the only container),
 * a block from "Containers:" or from the name line, only the Events table
 * (with or without "Events:"), its rows alone (no "Events:", no header:
 * Normal or Warning, a Reason word, an Age such as "2s", "<unknown>" or
 * "13s (x3 over 34s)", a From such as "kubelet, node-1", the message; a
 * line at column 0 after a row at least 80 columns wide that ends without
 * white space is the terminal's break of that row, joined without a
 * space), the pod's Status/Reason/Message, pieces
 * joined by the poster's "..." or "<snip>" (which end the lines above
 * them). Times ("Thu, 04 Jan 2024 17:52:29 +0800") become RFC 3339 UTC.
 * Other text at column 0 (a shell prompt) is ignored, as are an
 * indentation common to the describe lines, tabs (8 columns), CR line
 * ends and a markdown quote's "> ". Indentation lost in the paste is put
 * back where kubectl's layout is unambiguous (a state's Reason, Exit Code,
 * ... lines after "State:"; "Containers:" followed by "app:" in the same
 * column; the items of "Command:" / "Args:" at column 0 below it, up to a
 * "Key:" line or one of describe's own); event table rows whose spaces were squeezed to one are
 * read word by word. A container's spec entry (image, command, limits, probes) is written only when
 * its block reaches Environment / Mounts, which kubectl prints after the limits and probes: from a
 * cut block the absence of a limit or a probe is not known; a cut block that shows probe lines (a
 * lone "Liveness:" line) gets an entry with those probes only. "<none>" is absent. */
#ifndef KRC_KUBE_DESCRIBE_H
#define KRC_KUBE_DESCRIBE_H

#include <stddef.h>

#include "krc/util/error.h"

#define KRC_KUBE_DESCRIBE_MAX_LINES 200000

/* 1 when the text has the shapes of `kubectl describe pod` output, whole or
 * a fragment: a line "State:", "Last State:", "Exit Code:", "Restart Count:",
 * "Containers:", "Init Containers:" or "Events:" (at any indentation, after
 * a markdown "> "), one of a container's "Liveness:", "Readiness:",
 * "Startup:", "Image:", "Image ID:", "Port:", "Host Port:", "Command:",
 * "Args:", "Limits:", "Requests:", "Environment:", "Mounts:", an Events
 * table header or a row of it without the header, or both "Status:" and
 * "Reason:".
 * A YAML mapping can have such keys too: the caller tries YAML first when
 * it could be a Kubernetes object. */
int krc_kube_describe_is_pod(const char *text, size_t len);

/* 1 when the text holds an event table: describe's "Type Reason Age From
 * Message" (or rows of it without the header) or `kubectl get events`'
 * "LAST SEEN TYPE REASON OBJECT MESSAGE" (optionally after NAMESPACE). */
int krc_kube_describe_is_events(const char *text, size_t len);

/* Convert. *ret_pod_json is set on success; *ret_events_json is set to an
 * event List (empty for "Events: <none>") or to NULL when the text has no
 * Events section or table. Caller frees both with krc_free. KRC_EINVAL:
 * none of describe's fields, a "Containers:" section without entries,
 * several pods, an entry of "Containers:" that is not a name line;
 * KRC_ETOOBIG: more than KRC_KUBE_DESCRIBE_MAX_LINES lines; KRC_ENOMEM. */
int krc_kube_describe_pod(const char *text, size_t len, char **ret_pod_json, char **ret_events_json,
                          struct krc_error *err);

/* An event table alone (describe's Events table or `kubectl get events`
 * output) -> event List JSON in *ret_events_json (caller frees with
 * krc_free). Rows are the lines at the header's indentation whose TYPE is
 * Normal or Warning; a message wrapped onto following lines is joined with
 * single spaces. From "kubelet, node-1" gives source component and host;
 * "(x6 over 28s)" the count; OBJECT "pod/NAME" the involvedObject (kind
 * and name). Describe rows name no object (they are the described pod's).
 * KRC_EINVAL: no table header; KRC_ETOOBIG; KRC_ENOMEM. */
int krc_kube_describe_events(const char *text, size_t len, char **ret_events_json,
                             struct krc_error *err);

#endif
