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
 *   Events      the table (Type, Reason, Age, From, Message): type, reason,
 *               message, count ("x5 over 3m"), source component and host;
 *               ages are relative to an unknown moment, so events get no
 *               time; involvedObject is the described pod.
 * Times ("Thu, 14 Nov 2024 10:33:00 +0000") become RFC 3339 with the offset
 * kept. Text before the "Name:" line (a shell prompt) is ignored, as is an
 * indentation common to all lines (a quoted paste). "<none>" is absent. */
#ifndef KRC_KUBE_DESCRIBE_H
#define KRC_KUBE_DESCRIBE_H

#include <stddef.h>

#include "krc/error.h"

#define KRC_KUBE_DESCRIBE_MAX_LINES 200000

/* 1 when the text looks like `kubectl describe pod` output: a "Name:" line
 * and a "Containers:" line (kubectl -o yaml never writes the latter). */
int krc_kube_describe_is_pod(const char *text, size_t len);

/* Convert. *ret_pod_json is set on success; *ret_events_json is set to an
 * event List (empty for "Events: <none>") or to NULL when the text has no
 * Events section. Caller frees both with krc_free. KRC_EINVAL: no
 * "Containers:" section, several pods, a container without a name;
 * KRC_ETOOBIG: more than KRC_KUBE_DESCRIBE_MAX_LINES lines; KRC_ENOMEM. */
int krc_kube_describe_pod(const char *text, size_t len, char **ret_pod_json, char **ret_events_json,
                          struct krc_error *err);

#endif
