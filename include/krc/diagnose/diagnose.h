/* Probable cause of a container restart: a pure function of a restart report.
 *
 * Pick the container (the one whose lastState.terminated finished last; else,
 * for partial input, one whose status still shows a restart), call T its last
 * termination (may be missing, or lack exitCode) and W = [T.startedAt,
 * T.finishedAt + 60 s], then run a table of rules in precedence order; the
 * first that holds names the cause, its confidence, summary, evidence, next
 * step and kubectl commands, and the diagnosis lists what it could not see
 * (docs/causes.md has the whole table):
 *
 *   oom_killed               T.reason OOMKilled
 *   evicted                  pod reason Evicted, Evicted event, ContainerStatusUnknown
 *   liveness/startup_probe_failed   a Killing event naming the probe, in W
 *   node_not_ready           killed (137, no exit code, ContainerStatusUnknown) while the
 *                            node is NotReady or a NodeNotReady event came at that time
 *   exec_format_error        "exec format error" anywhere
 *   command_not_found        start error "not found", exit 127
 *   permission_denied        start error "permission denied", exit 126
 *   disk_full                "No space left on device" / ENOSPC
 *   start_failed             StartError & co, exit 128, runtime create/mount/cgroup errors
 *   sandbox_changed          stopped with all containers, PodReadyToStartContainers changed
 *                            after it or a SandboxChanged event (a node-level cause)
 *   restarted_with_others    another container's RestartAllContainers rule held its exit
 *                            code, and this one stopped with it
 *   resize_restart           PodResizeInProgress, resizePolicy RestartContainer, a stop exit
 *   gpu_device_unhealthy     failed while the kubelet reports an accelerator device it holds
 *                            Unhealthy (allocatedResourcesStatus; Unknown is only evidence)
 *   restart_rule             a restartPolicyRules rule (action Restart) holds the exit code
 *   terminated               a sidecar stopped after the pod's deletion was asked
 *   terminated               exit 128+N for the reported stopSignal N (not SIGKILL)
 *   gpu_out_of_memory        GPU OOM in the log
 *   app_out_of_memory        the language runtime's own heap limit in the log
 *   segfault / illegal_instruction / aborted   exit 139 / 132 / 134 (or their log lines)
 *   gpu_error                GPU device/driver fault in the log
 *   dependency_unreachable   the log's last lines give up on a network dependency
 *   app_error                other non-zero exit except 137 and 143
 *   evicted                  exit 137 under node pressure
 *   startup/liveness_probe_failed   probe failure events, no termination to read
 *   completed / killed / terminated   exit 0 / 137 / 143 (a configured probe whose
 *                            timing fits is a hypothesis in their evidence)
 *   unknown                  not enough evidence
 *
 * Every statement says what was seen, never a negation of what was not
 * checked. Work is bounded: the log is scanned over its last
 * KRC_DIAG_SCAN_MAX bytes, the tail analysis looks at a bounded number of
 * lines. The log is never assumed to be NUL-terminated or UTF-8. All text in
 * the result is valid UTF-8 without control characters. */
#ifndef KRC_DIAGNOSE_H
#define KRC_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "krc/model/cause.h"
#include "krc/model/diagnosis.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

#define KRC_DIAG_SCAN_MAX (4u * 1024u * 1024u) /* log bytes searched for GPU faults */
#define KRC_DIAG_TAIL_LINES 30                 /* "last lines" for dependency errors */
#define KRC_DIAG_WINDOW_AFTER 60               /* seconds after finishedAt in W */
#define KRC_DIAG_MAX_EVIDENCE 16
#define KRC_DIAG_EVIDENCE_MAX 320 /* bytes per evidence line */

/* The container to diagnose (borrowed from r), or NULL when no container
 * shows a termination, a restart, a back-off or a start error. */
const struct krc_report_container *krc_diagnose_pick(const struct krc_report *r);

/* Diagnose `container` (NULL: krc_diagnose_pick). Fills *ret (previous
 * content released): always a cause, a confidence, a summary and a next
 * step, even from partial input (cause KRC_CAUSE_UNKNOWN, low confidence and
 * `unchecked` saying what is missing when nothing else holds; container NULL
 * when no container shows anything to explain). KRC_ENOTFOUND when
 * `container` names no container of the pod (message lists the names),
 * KRC_ENOMEM. */
int krc_diagnose(const struct krc_report *r, const char *container, struct krc_diagnosis *ret,
                 struct krc_error *err);

/* A muted repeat's diagnosis *d (made without the log) takes the cause of
 * `prior` (the container's last diagnosed restart, as the history has it)
 * when their terminations match (same exit code, signal and reason; the
 * caller matched pod UID and container) and the carried confidence,
 * min(prior's, medium), is not below d's own: the cause and that
 * confidence are set, a summary and a first evidence line say what was
 * compared, `unchecked` keeps what it listed. Returns 1 when carried, 0 when
 * not (d unchanged), KRC_ENOMEM. src/diagnose/repeat.c. */
int krc_diagnosis_carry(struct krc_diagnosis *d, const struct krc_diagnosis_history *prior);

/* The rule table in precedence order, for tests and documentation: the
 * number of rules, the name and cause of rule i (NULL / unknown past the
 * end). */
size_t krc_diagnose_rule_count(void);
const char *krc_diagnose_rule_name(size_t i);
enum krc_cause krc_diagnose_rule_cause(size_t i);

/* Does rule `rule` (a name from krc_diagnose_rule_name) hold on its own for
 * `container` (NULL: krc_diagnose_pick) of r? 1 (and *ret_confidence, may be
 * NULL), 0, KRC_EINVAL for an unknown rule, KRC_ENOTFOUND without a
 * container. */
int krc_diagnose_rule_matches(const struct krc_report *r, const char *container, const char *rule,
                              enum krc_confidence *ret_confidence, struct krc_error *err);

/* Format seconds like Go's time.Duration: "45s", "2m42s", "1h0m5s". out >= 32. */
void krc_diagnose_format_duration(int64_t seconds, char *out, size_t outsz);

/* Append to `out` (capacity outsz, always NUL-terminated) a display-safe
 * copy of `len` raw bytes: ANSI escapes removed, control characters turned
 * into spaces, invalid UTF-8 replaced by U+FFFD, cut (with "...") to fit.
 * Returns the length written. */
size_t krc_diagnose_sanitize(const void *data, size_t len, char *out, size_t outsz);

#endif
