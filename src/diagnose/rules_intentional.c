/* The rules of restarts and stops the pod itself declares or reports as
 * intended (src/diagnose/rules.c has the table; docs/causes.md): a
 * container restart rule (KEP-5307, spec.containers[].restartPolicyRules)
 * whose exit codes hold the exit code, and an exit by the container's
 * reported stop signal (KEP-4960, status.containerStatuses[].stopSignal).
 * Both set the diagnosis's `intentional`. And the evidence line of a
 * DisruptionTarget pod condition (KEP-3329), whatever the cause. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"

/* How many of a rule's exit codes an evidence line lists. */
#define RULE_CODES_SHOWN 16

/* Does rule `rr` hold for exit code `code`? 1 yes, 0 no, -1 cannot tell
 * (no exitCodes, an operator of a later release, a value list cut by the
 * cap). */
static int rule_holds(const struct krc_report_restart_rule *rr, int code)
{
    int listed = 0;
    size_t i;

    if (!rr->has_exit_codes || rr->op == NULL) {
        return -1;
    }
    for (i = 0; i < rr->n_values; i++) {
        if (rr->values[i] == code) {
            listed = 1;
            break;
        }
    }
    if (strcmp(rr->op, "In") == 0) {
        return listed ? 1 : rr->values_omitted > 0 ? -1 : 0;
    }
    if (strcmp(rr->op, "NotIn") == 0) {
        return listed ? 0 : rr->values_omitted > 0 ? -1 : 1;
    }
    return -1;
}

/* 10a. restart_rule: the kubelet applies the first rule whose exit codes hold
 * (KEP-5307); it is this rule when that rule's action is Restart. A rule
 * before it that krc cannot evaluate leaves it unknown: no match. */
int krc_diag_match_restart_rule(struct dctx *x)
{
    size_t i;

    x->rrule = NULL;
    if (x->t == NULL || !x->has_exit || x->c->n_restart_rules == 0) {
        return 0;
    }
    for (i = 0; i < x->c->n_restart_rules; i++) {
        const struct krc_report_restart_rule *rr = &x->c->restart_rules[i];
        int h = rule_holds(rr, x->exit_code);
        if (h < 0) {
            return 0;
        }
        if (h == 1) {
            if (!str_eq(rr->action, "Restart")) {
                return 0; /* RestartAllContainers or a later action: not this cause */
            }
            x->rrule = rr;
            x->rrule_i = i;
            /* NotIn declares what is not retried: the exit is retried, not named */
            x->conf = strcmp(rr->op, "In") == 0 ? KRC_CONFIDENCE_HIGH : KRC_CONFIDENCE_MEDIUM;
            return 1;
        }
    }
    return 0;
}

/* "[42, 43]": the rule's exit codes, the first RULE_CODES_SHOWN of them.
 * out holds RULE_CODES_LIST bytes: 13 per code ("-2147483648, ") and the
 * count. */
#define RULE_CODES_LIST (RULE_CODES_SHOWN * 13 + 40)
static void rule_codes(const struct krc_report_restart_rule *rr, char out[RULE_CODES_LIST])
{
    size_t o = 1;
    size_t i;

    out[0] = '[';
    out[1] = '\0';
    for (i = 0; i < rr->n_values && i < RULE_CODES_SHOWN; i++) {
        o += (size_t)snprintf(out + o, RULE_CODES_LIST - o, "%s%d", i ? ", " : "", rr->values[i]);
    }
    if (rr->n_values + rr->values_omitted > RULE_CODES_SHOWN) {
        snprintf(out + o, RULE_CODES_LIST - o, ", ... %zu in all]",
                 rr->n_values + rr->values_omitted);
    } else {
        snprintf(out + o, RULE_CODES_LIST - o, "]");
    }
}

void krc_diag_say_restart_rule(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_restart_rule *rr = x->rrule;
    char list[RULE_CODES_LIST];

    b->d->intentional = 1;
    rule_codes(rr, list);
    krc_buf_printf(s,
                   "Container %s %s by its restart rule for exit code %d "
                   "(restartPolicyRules[%zu]: %s %s %s)",
                   x->c->name, x->from_last ? "was restarted" : "exited and is to be restarted",
                   x->exit_code, x->rrule_i, rr->action, rr->op, list);
    krc_diag_say_after(x, s);
    krc_diag_add_evidence(b,
                          "spec.containers[%s].restartPolicyRules[%zu]: action %s, exitCodes "
                          "%s %s holds exit code %d (KEP-5307: the kubelet restarts the container "
                          "in place)",
                          x->c->name, x->rrule_i, rr->action, rr->op, list, x->exit_code);
    if (x->c->restart_policy != NULL) {
        krc_diag_add_evidence(b, "container restartPolicy %s, pod restartPolicy %s",
                              x->c->restart_policy,
                              x->r->restart_policy ? x->r->restart_policy : "not given");
    }
    if (strcmp(rr->op, "NotIn") == 0) {
        krc_diag_add_unchecked(b,
                               "the rule restarts every exit code but %s: it says the exit is "
                               "retried, not that exit code %d was expected; a crash is "
                               "restarted by it too (the log says which)",
                               list, x->exit_code);
    }
}

/* The number of a stop signal's name ("SIGUSR1" -> 10), 0 when unknown. */
static int signal_number(const char *name)
{
    int n;

    for (n = 1; name != NULL && n <= 64; n++) {
        const char *s = krc_signal_name(n);
        if (s != NULL && strcmp(s, name) == 0) {
            return n;
        }
    }
    return 0;
}

/* 10b. terminated_stop_signal: exit 128+N for the container's reported stop
 * signal N is how the process ends when it is stopped (and does not catch
 * the signal). Not SIGKILL: exit 137 is also the OOM killer's and a grace
 * period's end, which the stop signal does not tell apart. */
int krc_diag_match_stop_signal(struct dctx *x)
{
    int n = signal_number(x->c->stop_signal);

    x->conf = x->window_events > 0 ? KRC_CONFIDENCE_HIGH : KRC_CONFIDENCE_MEDIUM;
    return x->t != NULL && x->has_exit && n > 0 && n != 9 && x->exit_code == 128 + n;
}

void krc_diag_say_stop_signal(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    b->d->intentional = 1;
    krc_buf_printf(s,
                   "Container %s was stopped by its stop signal %s (exit %d = 128 + %d): a stop, "
                   "not a crash",
                   x->c->name, x->c->stop_signal, x->exit_code, x->exit_code - 128);
    krc_diag_say_after(x, s);
    krc_diag_add_evidence(b,
                          "status.containerStatuses[%s].stopSignal %s (KEP-4960: the signal the "
                          "runtime stops the container with); exit code %d is 128 + %d, death "
                          "by that signal",
                          x->c->name, x->c->stop_signal, x->exit_code, x->exit_code - 128);
    if (x->window_events == 0) {
        krc_diag_add_unchecked(b, "who stopped it (a deletion, a rollout, a probe kill, a "
                                  "resize) is not shown: no events of the time were given");
    } else if (x->c->has_liveness || x->c->has_startup) {
        krc_diag_add_unchecked(b, "a probe is configured: a probe kill also stops with the stop "
                                  "signal; no Killing event naming it was seen");
    }
}

/* What a DisruptionTarget reason says (KEP-3329; the reasons of
 * k8s.io/api core/v1). */
static const char *disruption_meaning(const char *reason)
{
    static const struct {
        const char *reason;
        const char *meaning;
    } known[] = {
        {"PreemptionByKubeScheduler", "preempted by the scheduler for a pod of higher priority"},
        {"DeletionByTaintManager",
         "deleted by the taint manager: a NoExecute taint on its node that it does not "
         "tolerate"},
        {"EvictionByEvictionAPI", "evicted through the Eviction API (a drain, an autoscaler, "
                                  "a descheduler)"},
        {"DeletionByPodGC", "deleted by the pod garbage collector (its node is gone, or it was "
                            "terminating on a node out of service)"},
        {"TerminationByKubelet", "terminated by the kubelet (node-pressure eviction, graceful "
                                 "node shutdown, or preemption for a critical pod)"},
    };
    size_t i;

    for (i = 0; reason != NULL && i < sizeof(known) / sizeof(known[0]); i++) {
        if (strcmp(reason, known[i].reason) == 0) {
            return known[i].meaning;
        }
    }
    return NULL;
}

void krc_diag_evidence_disruption(struct builder *b, const struct krc_report *r)
{
    size_t i;

    for (i = 0; i < r->n_conditions; i++) {
        const struct krc_report_pod_condition *pc = &r->conditions[i];
        const char *meaning;
        if (!str_eq(pc->type, "DisruptionTarget") || !str_eq(pc->status, "True")) {
            continue;
        }
        meaning = disruption_meaning(pc->reason);
        krc_diag_add_evidence(b, "pod condition DisruptionTarget=True, reason %s%s%s%s%s",
                              pc->reason ? pc->reason : "(none)", meaning ? ": " : "",
                              meaning ? meaning : "", pc->message ? "; message: " : "",
                              pc->message ? pc->message : "");
    }
}
