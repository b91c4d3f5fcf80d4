/* A diagnosis as data: the probable cause of one container restart and
 * what it rests on, as the analyser (src/diagnose, krc_diagnose) fills it and
 * every output reads it (the store's report JSON, the alert formats, MCP,
 * krc explain, krc history); and a diagnosis as the history keeps it
 * (struct krc_diagnosis_history), for a muted repeat to carry. Owned by the
 * model layer so that its readers need not depend on the analyser. */
#ifndef KRC_MODEL_DIAGNOSIS_H
#define KRC_MODEL_DIAGNOSIS_H

#include <stddef.h>
#include <stdint.h>

#include "krc/model/cause.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

struct krc_diagnosis {
    char *container; /* NULL when the pod has no container to diagnose */
    int is_init;
    int is_sidecar;
    enum krc_cause cause;
    /* The restart or stop was intended, by a field that proves it (a restart
     * rule, the reported stop signal: docs/causes.md); 0 otherwise. Written
     * as "intentional": true only when set. */
    int intentional;
    int has_termination; /* a termination with an exitCode was seen; 0: exit_code meaningless */
    int from_last_state; /* T is lastState.terminated (else state.terminated) */
    int exit_code;
    int signal;              /* signal number from exit code 128+N or T.signal; 0 = none */
    const char *signal_name; /* static "SIGKILL" ..., NULL when no signal */
    char *reason;            /* T.reason, may be NULL */
    int restart_count;
    int restart_count_known; /* 0: the status did not give restartCount (restart_count 0) */
    int64_t started_at;      /* T.startedAt, 0 when unknown (StartError) */
    int64_t finished_at;
    long gpus;     /* GPUs the pod holds (0 for CPU pods) */
    char *summary; /* one line, never NULL after success */
    /* The summary without the text it quotes from the pod (log lines, event,
     * runtime and termination messages): krc's own words only, for readers
     * who are not shown the log (the Kubernetes Event's note). Never NULL
     * after success; equal to summary when it quotes nothing. */
    char *summary_unquoted;
    char **evidence;
    size_t n_evidence;
    enum krc_confidence confidence;
    char *next_step; /* one actionable line, never NULL after success */
    char **commands; /* kubectl commands to look further (complete, runnable) */
    size_t n_commands;
    char **unchecked; /* what could not be seen, and what that leaves open */
    size_t n_unchecked;
};

void krc_diagnosis_init(struct krc_diagnosis *d);
void krc_diagnosis_cleanup(struct krc_diagnosis *d);

/* "SIGKILL" for 9 ... (Linux numbering), NULL when unknown. */
const char *krc_signal_name(int signo);

/* The number of a signal's name as krc_signal_name writes it ("SIGTERM" ->
 * 15; the stopSignal field uses these names), 0 when unknown or NULL. */
int krc_signal_number(const char *name);

/* Redact the texts of a diagnosis in place (summary, summary_unquoted,
 * next_step, evidence, unchecked) with `rd` (NULL: the built-in patterns): a diagnosis
 * made from a report redacted with krc_report_redact quotes only redacted
 * text, and this applies the extra patterns to what the diagnosis wrote
 * around it. A text that cannot be redacted (out of memory) becomes the
 * mark. 0 or KRC_ENOMEM (the diagnosis is safe to show either way). */
int krc_diagnosis_redact(struct krc_diagnosis *d, const struct krc_redactor *rd,
                         struct krc_error *err);

/* A diagnosed (collected) restart as the history has it: an open incident's
 * first failure (kept by the sender's incident table, read back from the
 * history at start-up and take-over), which a muted repeat of the incident,
 * not collected, may carry (krc_diagnosis_carry,
 * include/krc/diagnose/diagnose.h). A value: it owns its reason, so it
 * outlives the row it was read from. */
struct krc_diagnosis_history {
    int64_t id; /* its history id */
    enum krc_cause cause;
    enum krc_confidence confidence; /* low when recorded before schema 2 */
    int has_exit_code;              /* 0: exit code unknown: never matches */
    int exit_code;
    int signal;     /* 0: none */
    int has_reason; /* 0: no reason (reason is then "") */
    char reason[256];
    int log_collected; /* its previous log was collected (non-empty) */
};

#endif
