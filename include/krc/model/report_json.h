/* A restart report and its diagnosis as one JSON document: the "full
 * diagnostics" that the store keeps for `krc history show` (everything the
 * Slack message had no room for).
 *
 * Document (version 1), every time RFC 3339 UTC or null:
 *   { "version": 1,
 *     "pod": {namespace, name, uid, node, owner{kind,name}, workload{kind,name},
 *             created_at, phase, reason, message, restart_policy, grace_period,
 *             slack_channel, labels{}, annotations{}, and only when the pod has them
 *             (Kubernetes 1.33+, docs/design/kubernetes-1.33-fields.md): generation,
 *             observed_generation, deletion_timestamp, deletion_grace_period,
 *             resources{limits{}, requests{}} (pod-level),
 *             conditions[{type, status, reason, message, last_transition,
 *             observed_generation?}] (AllContainersRestarting, DisruptionTarget,
 *             PodReadyToStartContainers, PodResizeInProgress, PodResizePending only),
 *             resource_claim_statuses[{name, resource_claim_name, and when the
 *             ResourceClaim was read: allocated, devices[{request, driver, pool,
 *             device, conditions[{type, status, reason, message}] (when its
 *             driver reported the device in status.devices)}]}]},
 *     "diagnosis": {container, is_init, is_sidecar, cause, has_termination,
 *             exit_code, signal, signal_name, reason, restart_count, started_at,
 *             finished_at, gpus, confidence ("low"|"medium"|"high"), summary,
 *             evidence[], unchecked[] (what could not be seen), next_step (null
 *             when none), commands[] (kubectl commands to look further)},
 *     "containers": [{name, is_init, is_sidecar, image, ready, restart_count, state,
 *             state_reason, state_message, state_started_at, last{exit_code, signal,
 *             reason, message, started_at, finished_at, container_id} | null,
 *             limits{}, requests{}, probes{liveness, readiness, startup},
 *             termination_message_policy, and only when the pod has them:
 *             restart_policy (the container's own; not a sidecar's Always),
 *             restart_policy_rules[{action, exit_codes{operator, values[]} | null}],
 *             resize_policy[{resource_name, restart_policy}], stop_signal,
 *             status_resources{limits{}, requests{}} (containerStatuses[].resources),
 *             allocated_resources_status[{name, resources[{resource_id, health,
 *             message}]}]}],
 *     A capped list that left entries out is followed by "<list>_omitted": N.
 *     "events": [{type, reason, message, count, first, last, object{kind, namespace,
 *             name}, field_path, source{component, host}}],
 *     "node": null | {name, conditions[{type,status,reason,message}], capacity{},
 *             allocatable{}, kubelet_version, container_runtime_version,
 *             kernel_version, os_image, unschedulable},
 *     "notes": [...],
 *     "log": {container, bytes, absent, empty, truncated, kubelet_timestamps, omitted_bytes,
 *             cut{received_bytes, dropped_bytes, head_line_cut, transfer_limit_bytes,
 *             transfer_limit_hit, note} (only when the producer counted what it cut),
 *             text} }
 *
 * Bounded: the log keeps its last KRC_REPORT_JSON_LOG_MAX bytes (cut at a line
 * start; "omitted_bytes" says how much was left out, "truncated" that the
 * collector already cut it, "cut" how: see krc_logtail_describe), other free texts
 * KRC_REPORT_JSON_TEXT_MAX bytes, the kubectl last-applied-configuration annotation is left out.
 * Safe: free texts (log, messages, notes, evidence, summary, unchecked, next step, commands,
 * label and annotation values, the whole value when its key names a secret: krc_redact_field)
 * go through the redactor (built-in patterns when rd is NULL), then ANSI
 * escapes and control characters other than \n and \t are removed and invalid UTF-8 becomes
 * U+FFFD, so the document is valid UTF-8 JSON. */
#ifndef KRC_REPORT_JSON_H
#define KRC_REPORT_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/util/buf.h"
#include "krc/model/diagnosis.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"
#include "krc/model/report.h"

#define KRC_REPORT_JSON_VERSION 1
#define KRC_REPORT_JSON_LOG_MAX (256u * 1024u)
#define KRC_REPORT_JSON_TEXT_MAX (16u * 1024u)

/* d may be NULL (not diagnosed: "diagnosis" is null). Caller frees *ret_json
 * with krc_free. KRC_ENOMEM. */
int krc_report_json_build(const struct krc_report *r, const struct krc_diagnosis *d,
                          const struct krc_redactor *rd, char **ret_json, struct krc_error *err);

/* krc_text_sanitize with KRC_TEXT_STRIP (and KRC_TEXT_LINES when
 * keep_newlines): a display-safe copy of len raw bytes: ANSI escape sequences
 * removed, \r\n and lone \r become \n, other control characters (and C1
 * controls) dropped, \n and \t kept (or turned into spaces when
 * keep_newlines is 0), invalid UTF-8 replaced by U+FFFD. 0, KRC_ETOOBIG (out
 * keeps what fitted, cut at a character boundary) or KRC_ENOMEM. */
int krc_report_json_sanitize(struct krc_buf *out, const void *data, size_t len, int keep_newlines);

/* cJSON building blocks shared by `krc history` and the MCP tools. put adds
 * item to o under k: 1, or 0 when o or item is NULL or the add failed (item
 * released). str is a string, or null for NULL; time is RFC 3339 UTC, or
 * null for t <= 0; doc is the parsed JSON text, or the text itself as a
 * string when it is not JSON, or null for NULL (a stored body or report). */
int krc_report_json_put(cJSON *o, const char *k, cJSON *item);
cJSON *krc_report_json_str(const char *v);
cJSON *krc_report_json_time(int64_t t);
cJSON *krc_report_json_doc(const char *text);

#endif
