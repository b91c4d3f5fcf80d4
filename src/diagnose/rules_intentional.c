/* The rules of restarts and stops the pod itself declares or reports as
 * intended (src/diagnose/rules.c has the table; docs/causes.md), each of
 * which sets the diagnosis's `intentional`:
 *  - restarted_with_others: another container's exit code is held by its
 *    RestartAllContainers rule (KEP-5532) and this container stopped with it
 *    (by the times, or the pod condition AllContainersRestarting); the
 *    trigger keeps its own cause, with an evidence line saying it restarted
 *    them all (krc_diag_evidence_restart_all);
 *  - resize_restart: an in-place resize in progress (pod condition
 *    PodResizeInProgress) of a container whose resizePolicy restarts it
 *    (RestartContainer, KEP-1287), stopped the way the kubelet stops;
 *  - restart_rule: a container restart rule (KEP-5307,
 *    spec.containers[].restartPolicyRules) whose exit codes hold the exit code;
 *  - terminated, a sidecar that stopped after the pod's deletion was asked
 *    (metadata.deletionTimestamp minus its grace period);
 *  - terminated, an exit by the container's reported stop signal (KEP-4960,
 *    status.containerStatuses[].stopSignal).
 * And the evidence line of a DisruptionTarget pod condition (KEP-3329),
 * whatever the cause. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/clock.h"

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

/* The rule of c the kubelet applies to exit code `code`: the first whose
 * exit codes hold it (KEP-5307), its index in *ret_i; NULL when none holds
 * or a rule before it cannot be read (krc cannot tell which applies). */
static const struct krc_report_restart_rule *applied_rule(const struct krc_report_container *c,
                                                          int code, size_t *ret_i)
{
    size_t i;

    for (i = 0; i < c->n_restart_rules; i++) {
        const struct krc_report_restart_rule *rr = &c->restart_rules[i];
        int h = rule_holds(rr, code);
        if (h < 0) {
            return NULL;
        }
        if (h == 1) {
            *ret_i = i;
            return rr;
        }
    }
    return NULL;
}

/* 11a. restart_rule: the kubelet applies the first rule whose exit codes hold
 * (KEP-5307); it is this rule when that rule's action is Restart. A rule
 * before it that krc cannot evaluate leaves it unknown: no match. */
int krc_diag_match_restart_rule(struct dctx *x)
{
    const struct krc_report_restart_rule *rr;
    size_t i = 0;

    x->rrule = NULL;
    if (x->t == NULL || !x->has_exit || x->c->n_restart_rules == 0) {
        return 0;
    }
    rr = applied_rule(x->c, x->exit_code, &i);
    if (rr == NULL || !str_eq(rr->action, "Restart")) {
        return 0; /* RestartAllContainers or a later action: not this cause */
    }
    x->rrule = rr;
    x->rrule_i = i;
    /* NotIn declares what is not retried: the exit is retried, not named */
    x->conf = strcmp(rr->op, "In") == 0 ? KRC_CONFIDENCE_HIGH : KRC_CONFIDENCE_MEDIUM;
    return 1;
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

/* 11c. terminated_stop_signal: exit 128+N for the container's reported stop
 * signal N is how the process ends when it is stopped (and does not catch
 * the signal). Not SIGKILL: exit 137 is also the OOM killer's and a grace
 * period's end, which the stop signal does not tell apart. */
int krc_diag_match_stop_signal(struct dctx *x)
{
    int n = krc_signal_number(x->c->stop_signal);

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
        {"DeletionByDeviceTaintManager",
         "evicted (device taint): deleted by the device taint eviction controller, a device of "
         "its ResourceClaim has a NoExecute taint that it does not tolerate"},
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

/* ---- what the other containers and the pod conditions say ---------------- */

const struct krc_report_term *krc_diag_term_of(const struct krc_report_container *c)
{
    if (c->last.present) {
        return &c->last;
    }
    if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present) {
        return &c->state_term;
    }
    return NULL;
}

const struct krc_report_pod_condition *krc_diag_pod_condition(const struct krc_report *r,
                                                              const char *type)
{
    size_t i;

    for (i = 0; i < r->n_conditions; i++) {
        if (str_eq(r->conditions[i].type, type)) {
            return &r->conditions[i];
        }
    }
    return NULL;
}

void krc_diag_format_time(int64_t t, char *out, size_t size)
{
    if (t <= 0) {
        snprintf(out, size, "unknown");
        return;
    }
    krc_clock_format_rfc3339(t, out, (unsigned)size);
}

/* ---- 10b. restarted_with_others (KEP-5532) ------------------------------- */

/* Seconds after the trigger's exit within which another container's
 * termination is taken as the kubelet's restart of all containers: the
 * kubelet kills them at once, without preStop (KEP-5532); the margin covers
 * a stop signal handled for a few seconds. With the pod condition
 * AllContainersRestarting changed at or after the trigger's exit, a longer
 * one (the kubelet may wait for a grace period). */
#define RESTART_ALL_SECONDS 15
#define RESTART_ALL_COND_SECONDS 120

/* The RestartAllContainers rule c's own termination t answers (the rule the
 * kubelet applies to its exit code), its index in *ret_i; NULL otherwise. */
static const struct krc_report_restart_rule *
triggers_all(const struct krc_report_container *c, const struct krc_report_term *t, size_t *ret_i)
{
    const struct krc_report_restart_rule *rr;

    if (t == NULL || t->exit_code_missing || c->n_restart_rules == 0) {
        return NULL;
    }
    rr = applied_rule(c, t->exit_code, ret_i);
    return rr != NULL && str_eq(rr->action, "RestartAllContainers") ? rr : NULL;
}

/* Did the condition change (or hold True) at or after the trigger's exit tx? */
static int cond_after(const struct krc_report_pod_condition *cond, int64_t tx)
{
    if (cond == NULL) {
        return 0;
    }
    if (str_eq(cond->status, "True")) {
        return 1;
    }
    return cond->last_transition > 0 && tx > 0 && cond->last_transition >= tx - 1;
}

int krc_diag_match_restarted_with_others(struct dctx *x)
{
    const struct krc_report *r = x->r;
    const struct krc_report_pod_condition *cond;
    int64_t tc;
    size_t k = 0;
    size_t i;

    x->other = NULL;
    if (x->t == NULL || triggers_all(x->c, x->t, &k) != NULL) {
        return 0; /* the trigger keeps its own cause */
    }
    cond = krc_diag_pod_condition(r, "AllContainersRestarting");
    tc = x->t->finished_at;
    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *o = &r->containers[i];
        const struct krc_report_term *ot;
        const struct krc_report_restart_rule *rr;
        int64_t tx;
        if (o == x->c) {
            continue;
        }
        ot = krc_diag_term_of(o);
        if ((rr = triggers_all(o, ot, &k)) == NULL) {
            continue;
        }
        tx = ot->finished_at;
        if (tc > 0 && tx > 0) {
            /* it stopped when the trigger exited, not before (1 s: the
             * times are whole seconds) */
            if (tc < tx - 1 || tc - tx > RESTART_ALL_COND_SECONDS ||
                (tc - tx > RESTART_ALL_SECONDS && !cond_after(cond, tx))) {
                continue;
            }
            x->conf = KRC_CONFIDENCE_HIGH;
        } else if (str_eq(cond != NULL ? cond->status : NULL, "True")) {
            x->conf = KRC_CONFIDENCE_MEDIUM; /* no times: the condition alone */
        } else {
            continue;
        }
        x->other = o;
        x->other_t = ot;
        x->rrule = rr;
        x->rrule_i = k;
        x->cond = cond;
        return 1;
    }
    return 0;
}

/* The containers of the pod: every one restarts (init containers re-run). */
static size_t n_containers(const struct krc_report *r)
{
    return r->n_containers;
}

void krc_diag_say_restarted_with_others(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_container *o = x->other;
    const struct krc_report_term *ot = x->other_t;
    char list[RULE_CODES_LIST];
    char when[40];
    char cwhen[40];

    b->d->intentional = 1;
    rule_codes(x->rrule, list);
    krc_diag_format_time(ot->finished_at, when, sizeof(when));
    krc_buf_printf(s,
                   "Container %s was restarted with all %zu containers of the pod: container %s "
                   "exited %d, and its restart rule (restartPolicyRules[%zu]: %s %s %s) restarts "
                   "every container (KEP-5532); not a crash of %s",
                   x->c->name, n_containers(x->r), o->name, ot->exit_code, x->rrule_i,
                   x->rrule->action, x->rrule->op, list, x->c->name);
    krc_diag_add_evidence(b,
                          "spec.containers[%s].restartPolicyRules[%zu]: action %s, exitCodes "
                          "%s %s holds its exit code %d (finished %s): the kubelet kills and "
                          "restarts all containers of the pod, keeping its sandbox",
                          o->name, x->rrule_i, x->rrule->action, x->rrule->op, list, ot->exit_code,
                          when);
    if (x->t->finished_at > 0 && ot->finished_at > 0) {
        krc_diag_format_time(x->t->finished_at, cwhen, sizeof(cwhen));
        krc_diag_add_evidence(b, "this container stopped at %s, %lld s after %s's exit", cwhen,
                              (long long)(x->t->finished_at - ot->finished_at), o->name);
    }
    if (x->cond != NULL) {
        krc_diag_format_time(x->cond->last_transition, cwhen, sizeof(cwhen));
        krc_diag_add_evidence(b, "pod condition AllContainersRestarting=%s since %s",
                              x->cond->status ? x->cond->status : "(none)", cwhen);
    } else {
        krc_diag_add_unchecked(b, "the pod condition AllContainersRestarting was not seen: the "
                                  "restart is placed by the times of the terminations only");
    }
}

void krc_diag_evidence_restart_all(struct builder *b, const struct dctx *x)
{
    const struct krc_report_restart_rule *rr;
    char list[RULE_CODES_LIST];
    size_t k = 0;

    if (x->t == NULL || (rr = triggers_all(x->c, x->t, &k)) == NULL) {
        return;
    }
    rule_codes(rr, list);
    krc_diag_add_evidence(b,
                          "spec.containers[%s].restartPolicyRules[%zu]: action %s, exitCodes %s "
                          "%s holds exit code %d: this exit restarted all %zu containers of the "
                          "pod by its rule (KEP-5532); the others are restarted_with_others",
                          x->c->name, k, rr->action, rr->op, list, x->t->exit_code,
                          n_containers(x->r));
}

/* ---- 10c. resize_restart (KEP-1287) ------------------------------------ */

/* A quantity's value ("16Gi", "500m", "2"); 0 when it cannot be read. */
static int quantity_value(const char *q, double *ret)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
        {"k", 1e3},     {"M", 1e6},        {"G", 1e9},           {"T", 1e12},
        {"m", 1e-3},    {"", 1.0},
    };
    char *end = NULL;
    double v;

    if (q == NULL || q[0] == '\0') {
        return 0;
    }
    v = strtod(q, &end);
    if (end == q) {
        return 0;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            *ret = v * units[i].mult;
            return 1;
        }
    }
    return 0;
}

/* Do two quantities differ? Unreadable ones differ when their texts do. */
static int quantities_differ(const char *a, const char *b)
{
    double va;
    double vb;

    if (a == NULL || b == NULL) {
        return 0; /* one side not given: nothing to compare */
    }
    if (quantity_value(a, &va) && quantity_value(b, &vb)) {
        double d = va > vb ? va - vb : vb - va;
        return d > 1e-9 * (va > vb ? va : vb);
    }
    return strcmp(a, b) != 0;
}

/* Does resource `name` of c differ between the spec and what the kubelet
 * actuated (containerStatuses[].resources)? */
static int resource_resized(const struct krc_report_container *c, const char *name)
{
    if (!c->has_status_resources || name == NULL) {
        return 0;
    }
    return quantities_differ(krc_kv_list_get(&c->limits, name),
                             krc_kv_list_get(&c->status_limits, name)) ||
           quantities_differ(krc_kv_list_get(&c->requests, name),
                             krc_kv_list_get(&c->status_requests, name));
}

/* The kubelet's stop: the stop signal (128+N; SIGTERM when none is
 * reported), SIGKILL at the end of the grace period, or 0 from a program
 * that handles the signal. */
static int stop_exit(const struct dctx *x)
{
    int n = krc_signal_number(x->c->stop_signal);

    return x->exit_code == 0 || x->exit_code == 137 || x->exit_code == 143 ||
           (n > 0 && x->exit_code == 128 + n);
}

/* Seconds after the resize began, beyond the grace period, within which the
 * kubelet's stop for it is looked for. */
#define RESIZE_STOP_SLACK 120

int krc_diag_match_resize_restart(struct dctx *x)
{
    const struct krc_report_pod_condition *cond;
    const struct krc_report_resize_policy *restart = NULL;
    int resized_other = 0;
    size_t i;

    x->resized = NULL;
    if (x->t == NULL || !x->has_exit || str_eq(x->t->reason, "OOMKilled") || !stop_exit(x)) {
        return 0;
    }
    cond = krc_diag_pod_condition(x->r, "PodResizeInProgress");
    if (cond == NULL || !str_eq(cond->status, "True")) {
        return 0; /* pending (not actuated) or done: nothing shows the resize now */
    }
    /* the stop came after the kubelet began the resize, not before, and
     * within the grace period of it (with RESIZE_STOP_SLACK seconds to spare):
     * a resize still in progress (or failed, reason Error) long before the stop
     * did not stop it */
    if (cond->last_transition > 0 && x->t->finished_at > 0 &&
        (x->t->finished_at < cond->last_transition - 1 ||
         x->t->finished_at - cond->last_transition > x->r->grace_period + RESIZE_STOP_SLACK)) {
        return 0;
    }
    for (i = 0; i < x->c->n_resize_policy; i++) {
        const struct krc_report_resize_policy *rp = &x->c->resize_policy[i];
        int changed = resource_resized(x->c, rp->resource_name);
        if (str_eq(rp->restart_policy, "RestartContainer")) {
            if (restart == NULL) {
                restart = rp;
            }
            if (changed && x->resized == NULL) {
                x->resized = rp;
            }
        } else if (changed) {
            resized_other = 1;
        }
    }
    if (restart == NULL || (x->resized == NULL && resized_other)) {
        /* no resource restarts on resize, or the one seen resized does not */
        return 0;
    }
    x->cond = cond;
    if (x->resized == NULL) {
        x->resized = restart;
        x->conf = KRC_CONFIDENCE_MEDIUM;
    } else {
        x->conf = KRC_CONFIDENCE_HIGH;
    }
    return 1;
}

void krc_diag_say_resize_restart(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_container *c = x->c;
    const char *res = x->resized->resource_name;
    char when[40];

    b->d->intentional = 1;
    krc_diag_format_time(x->cond->last_transition, when, sizeof(when));
    krc_buf_printf(s,
                   "Container %s was restarted to apply an in-place resize: its resizePolicy for "
                   "%s is RestartContainer and the pod condition PodResizeInProgress is True "
                   "(since %s); it ",
                   c->name, res, when);
    krc_diag_say_exited(x, s);
    krc_buf_printf(s, ": the kubelet's stop, not a crash");
    krc_diag_add_evidence(b,
                          "spec.containers[%s].resizePolicy: %s RestartContainer (KEP-1287: the "
                          "kubelet restarts the container to resize it)",
                          c->name, res);
    krc_diag_add_evidence(b, "pod condition PodResizeInProgress=True since %s%s%s%s%s", when,
                          x->cond->reason ? ", reason " : "",
                          x->cond->reason ? x->cond->reason : "", x->cond->message ? ": " : "",
                          x->cond->message ? x->cond->message : "");
    if (x->conf == KRC_CONFIDENCE_HIGH) {
        const char *sl = krc_kv_list_get(&c->limits, res);
        const char *al = krc_kv_list_get(&c->status_limits, res);
        const char *sr = krc_kv_list_get(&c->requests, res);
        const char *ar = krc_kv_list_get(&c->status_requests, res);
        krc_diag_add_evidence(b,
                              "%s: spec limit %s, request %s; actuated "
                              "(status.containerStatuses[%s].resources) limit %s, request %s",
                              res, sl ? sl : "none", sr ? sr : "none", c->name, al ? al : "none",
                              ar ? ar : "none");
    } else {
        krc_diag_add_unchecked(b,
                               "which resource was resized is not shown (the actuated resources "
                               "equal the spec or were not given): a resize of a resource with "
                               "NotRequired would not restart %s",
                               c->name);
    }
    if (x->r->has_generation && x->r->has_observed_generation) {
        krc_diag_add_evidence(b, "metadata.generation %lld, status.observedGeneration %lld",
                              (long long)x->r->generation, (long long)x->r->observed_generation);
    }
    if (c->stop_signal != NULL) {
        krc_diag_add_evidence(b, "status.containerStatuses[%s].stopSignal %s", c->name,
                              c->stop_signal);
    }
}

/* ---- 11b. terminated_sidecar_deletion ------------------------------------ */

/* When the pod's deletion was asked: deletionTimestamp is that time plus the
 * grace period (deletionGracePeriodSeconds, else the spec's); 0 unknown. */
static int64_t deletion_asked(const struct krc_report *r)
{
    if (r->deletion_timestamp <= 0) {
        return 0;
    }
    return r->deletion_timestamp - (r->has_deletion_grace ? r->deletion_grace : r->grace_period);
}

int krc_diag_match_sidecar_deletion(struct dctx *x)
{
    int64_t asked = deletion_asked(x->r);

    if (!x->c->is_sidecar || asked <= 0 || x->t == NULL || x->t->finished_at <= 0) {
        return 0;
    }
    if (x->t->finished_at < asked - 1) {
        return 0; /* it exited before the deletion was asked */
    }
    x->conf = x->r->has_deletion_grace ? KRC_CONFIDENCE_HIGH : KRC_CONFIDENCE_MEDIUM;
    return 1;
}

void krc_diag_say_sidecar_deletion(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report *r = x->r;
    int64_t asked = deletion_asked(r);
    char del[40];
    char ask[40];
    char fin[40];

    b->d->intentional = 1;
    krc_diag_format_time(r->deletion_timestamp, del, sizeof(del));
    krc_diag_format_time(asked, ask, sizeof(ask));
    krc_diag_format_time(x->t->finished_at, fin, sizeof(fin));
    krc_buf_printf(s, "Sidecar %s stopped during the pod's deletion (", x->c->name);
    krc_diag_say_exit(x, s);
    krc_buf_printf(s,
                   ", at %s; deletion asked at %s): a pod that terminates stops its sidecars "
                   "after its main containers; a stop, not a crash",
                   fin, ask);
    krc_diag_add_evidence(b,
                          "metadata.deletionTimestamp %s with a grace period of %lld s%s: the "
                          "deletion was asked at %s",
                          del,
                          (long long)(r->has_deletion_grace ? r->deletion_grace : r->grace_period),
                          r->has_deletion_grace ? " (deletionGracePeriodSeconds)"
                                                : " (the spec's; deletionGracePeriodSeconds "
                                                  "not given)",
                          ask);
    krc_diag_add_evidence(b,
                          "%s is a sidecar (an init container with restartPolicy Always, "
                          "KEP-753); it stopped at %s, %lld s after the deletion was asked",
                          x->c->name, fin, (long long)(x->t->finished_at - asked));
    if (!r->has_deletion_grace) {
        krc_diag_add_unchecked(b, "deletionGracePeriodSeconds was not given: the time the "
                                  "deletion was asked is derived from the spec's grace period");
    }
}
