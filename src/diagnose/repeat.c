/* A muted repeat carries the diagnosis it repeats (include/krc/diagnose/diagnose.h,
 * krc_diagnosis_carry; the history's form: struct krc_diagnosis_history,
 * include/krc/model/diagnosis.h; docs/causes.md "Muted repeats"). */
#include <stdio.h>
#include <string.h>

#include "krc/diagnose/diagnose.h"
#include "krc/util/mem.h"

static int same_text(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return strcmp(a, b) == 0;
}

static int matches(const struct krc_diagnosis *d, const struct krc_diagnosis_history *p)
{
    return d->has_termination && p->has_exit_code && d->exit_code == p->exit_code &&
           d->signal == p->signal && same_text(d->reason, p->has_reason ? p->reason : NULL);
}

/* Put `line` (owned) first in d's evidence; the last line goes when the
 * list is full. */
static int evidence_first(struct krc_diagnosis *d, char *line)
{
    if (d->n_evidence >= KRC_DIAG_MAX_EVIDENCE) {
        krc_free(d->evidence[d->n_evidence - 1]);
        d->n_evidence--;
    } else {
        char **grown = krc_realloc(d->evidence, (d->n_evidence + 1) * sizeof(*grown));
        if (grown == NULL) {
            return KRC_ENOMEM;
        }
        d->evidence = grown;
    }
    memmove(d->evidence + 1, d->evidence, d->n_evidence * sizeof(*d->evidence));
    d->evidence[0] = line;
    d->n_evidence++;
    return 0;
}

/* "exit code 1 and reason Error", "exit code 137 (SIGKILL) and no reason" */
static void describe(const struct krc_diagnosis *d, char *out, size_t outsz)
{
    char sig[48] = "";

    if (d->signal != 0) {
        snprintf(sig, sizeof(sig), " (%s)", d->signal_name != NULL ? d->signal_name : "signal");
    }
    if (d->reason != NULL) {
        snprintf(out, outsz, "exit code %d%s and reason %.64s", d->exit_code, sig, d->reason);
    } else {
        snprintf(out, outsz, "exit code %d%s and no reason", d->exit_code, sig);
    }
}

int krc_diagnosis_carry(struct krc_diagnosis *d, const struct krc_diagnosis_history *prior)
{
    enum krc_confidence conf;
    const char *cause;
    char what[160];
    char ev[KRC_DIAG_EVIDENCE_MAX];
    char sum[2048];
    char unq[2048];
    char *ev_copy;
    char *sum_copy;
    char *unq_copy;

    if (d == NULL || prior == NULL || !matches(d, prior)) {
        return 0;
    }
    conf = prior->confidence < KRC_CONFIDENCE_MEDIUM ? prior->confidence : KRC_CONFIDENCE_MEDIUM;
    if (conf < d->confidence) {
        return 0; /* its own termination says more than the carried cause */
    }
    cause = krc_cause_name(prior->cause);
    describe(d, what, sizeof(what));
    snprintf(ev, sizeof(ev),
             "same %s as restart #%lld (diagnosed %s %s its log); this restart's log was not "
             "collected (muted repeat)",
             what, (long long)prior->id, cause, prior->log_collected ? "with" : "without");
    /* its own summary says what the watch saw (exit code, run time,
     * restart count); the carried cause is said after it */
    snprintf(sum, sizeof(sum),
             "%s; a muted repeat of restart #%lld (%s): same termination, log "
             "not collected",
             d->summary != NULL ? d->summary : "exited again", (long long)prior->id, cause);
    snprintf(unq, sizeof(unq),
             "%s; a muted repeat of restart #%lld (%s): same termination, log "
             "not collected",
             d->summary_unquoted != NULL ? d->summary_unquoted : "exited again",
             (long long)prior->id, cause);
    ev_copy = krc_strdup(ev);
    sum_copy = krc_strdup(sum);
    unq_copy = krc_strdup(unq);
    if (ev_copy == NULL || sum_copy == NULL || unq_copy == NULL || evidence_first(d, ev_copy) < 0) {
        krc_free(ev_copy);
        krc_free(sum_copy);
        krc_free(unq_copy);
        return KRC_ENOMEM;
    }
    krc_free(d->summary);
    d->summary = sum_copy;
    krc_free(d->summary_unquoted);
    d->summary_unquoted = unq_copy;
    d->cause = prior->cause;
    /* a restart rule's, a restart-all's or a resize's restart is intended by
     * its cause; a stop by the stop signal (terminated) is not told apart in
     * the history: not carried */
    d->intentional = krc_cause_always_intentional(prior->cause);
    d->confidence = conf;
    return 1;
}
