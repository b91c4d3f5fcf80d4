/* Probable cause of a container restart: a pure function of a restart report.
 *
 * The rules follow the project's diagnosis corpus (tests/fixtures/corpus/
 * README.md): pick the container (the one whose lastState.terminated
 * finished last), call T its last termination and W = [T.startedAt,
 * T.finishedAt + 60 s], then take the first cause that holds:
 *
 *   oom_killed               T.reason OOMKilled (any exit code)
 *   liveness_probe_failed    a Killing event of this pod (uid) and container
 *   startup_probe_failed     (fieldPath) naming the probe, time in W
 *   command_not_found        exit 127, or a start error "executable file not found"
 *   permission_denied        exit 126, or a start error "permission denied"
 *   segfault                 exit 139 (SIGSEGV)
 *   gpu_out_of_memory        non-zero exit, GPU OOM anywhere in the previous log
 *   gpu_error                non-zero exit, GPU device/driver fault anywhere in the log
 *   dependency_unreachable   non-zero exit, the last ~30 log lines give up on an
 *                            unreachable network dependency
 *   app_error                other non-zero exit except 137 and 143
 *   completed                exit 0
 *   killed                   exit 137 (SIGKILL) without OOM or probe kill
 *   terminated               exit 143 (SIGTERM) without probe kill
 *   unknown                  no termination to explain
 *
 * Work is bounded: the log is scanned at most once per pattern over its last
 * KRC_DIAG_SCAN_MAX bytes, and the tail analysis looks at a bounded number of
 * lines. The log is never assumed to be NUL-terminated or UTF-8. All text in
 * the result (summary, evidence) is valid UTF-8 without control characters. */
#ifndef KRC_DIAGNOSE_H
#define KRC_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "krc/error.h"
#include "krc/report.h"

#define KRC_DIAG_SCAN_MAX (4u * 1024u * 1024u) /* log bytes searched for GPU faults */
#define KRC_DIAG_TAIL_LINES 30                 /* "last lines" for dependency errors */
#define KRC_DIAG_WINDOW_AFTER 60               /* seconds after finishedAt in W */
#define KRC_DIAG_MAX_EVIDENCE 16
#define KRC_DIAG_EVIDENCE_MAX 320 /* bytes per evidence line */

enum krc_cause {
    KRC_CAUSE_UNKNOWN = 0,
    KRC_CAUSE_OOM_KILLED,
    KRC_CAUSE_LIVENESS_PROBE_FAILED,
    KRC_CAUSE_STARTUP_PROBE_FAILED,
    KRC_CAUSE_COMMAND_NOT_FOUND,
    KRC_CAUSE_PERMISSION_DENIED,
    KRC_CAUSE_SEGFAULT,
    KRC_CAUSE_GPU_OUT_OF_MEMORY,
    KRC_CAUSE_GPU_ERROR,
    KRC_CAUSE_DEPENDENCY_UNREACHABLE,
    KRC_CAUSE_APP_ERROR,
    KRC_CAUSE_COMPLETED,
    KRC_CAUSE_KILLED,
    KRC_CAUSE_TERMINATED,
};
#define KRC_CAUSE_COUNT 14

struct krc_diagnosis {
    char *container; /* NULL when the pod has no container to diagnose */
    int is_init;
    int is_sidecar;
    enum krc_cause cause;
    int has_termination; /* 0: cause is unknown, exit_code meaningless */
    int from_last_state; /* T is lastState.terminated (else state.terminated) */
    int exit_code;
    int signal;              /* signal number from exit code 128+N or T.signal; 0 = none */
    const char *signal_name; /* static "SIGKILL" ..., NULL when no signal */
    char *reason;            /* T.reason, may be NULL */
    int restart_count;
    int64_t started_at; /* T.startedAt, 0 when unknown (StartError) */
    int64_t finished_at;
    long gpus;     /* GPUs the pod holds (0 for CPU pods) */
    char *summary; /* one line, never NULL after success */
    char **evidence;
    size_t n_evidence;
};

void krc_diagnosis_init(struct krc_diagnosis *d);
void krc_diagnosis_cleanup(struct krc_diagnosis *d);

/* "oom_killed", ... ("unknown" for out-of-range values). */
const char *krc_cause_name(enum krc_cause cause);
/* Inverse of krc_cause_name; KRC_EINVAL for an unknown name. */
int krc_cause_parse(const char *name, enum krc_cause *ret_cause);

/* "SIGKILL" for 9 ... (Linux numbering), NULL when unknown. */
const char *krc_signal_name(int signo);

/* The container to diagnose (borrowed from r), or NULL when no container
 * has a termination to explain. */
const struct krc_report_container *krc_diagnose_pick(const struct krc_report *r);

/* Diagnose `container` (NULL: krc_diagnose_pick). Fills *ret (previous
 * content released); cause KRC_CAUSE_UNKNOWN with a summary saying why when
 * there is no termination to explain. KRC_ENOTFOUND when `container` names
 * no container of the pod (message lists the names), KRC_ENOMEM. */
int krc_diagnose(const struct krc_report *r, const char *container, struct krc_diagnosis *ret,
                 struct krc_error *err);

/* Format seconds like Go's time.Duration: "45s", "2m42s", "1h0m5s". out >= 32. */
void krc_diagnose_format_duration(int64_t seconds, char *out, size_t outsz);

/* Append to `out` (capacity outsz, always NUL-terminated) a display-safe
 * copy of `len` raw bytes: ANSI escapes removed, control characters turned
 * into spaces, invalid UTF-8 replaced by U+FFFD, cut (with "...") to fit.
 * Returns the length written. */
size_t krc_diagnose_sanitize(const void *data, size_t len, char *out, size_t outsz);

#endif
