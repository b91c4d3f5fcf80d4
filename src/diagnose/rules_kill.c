/* The kill verdict (docs/causes.md, "The kill verdict"): what ended a
 * container that the kernel or the kubelet killed or stopped, with the
 * field that proves it and what is not known:
 * - an OOM kill (rule 1): the memory limit that applied, the container's
 *   own as actuated (status.containerStatuses[].resources, KEP-1287) else
 *   the spec's, else the pod-level one (spec.resources, KEP-2837), else
 *   none, where only the node's SystemOOM events or MemoryPressure can say
 *   that the node ran out of memory; and an in-place resize around it;
 * - reason OOMKilled on a stop (exit 143, or 128+N for the reported stop
 *   signal N): the runtime's flag of an OOM kill counted in the container's
 *   memory cgroup at any time, on a process that ended by its stop signal
 *   (kubernetes#140716): not an OOM kill of the container;
 * - the kubelet's stop (a Killing event that is not a probe kill) and its
 *   grace period: SIGKILL when the grace period ran out;
 * - a liveness or startup probe that is configured and whose timing fits,
 *   without a Killing event naming it: a hypothesis in the evidence, never
 *   the cause (the cause stays killed, terminated or completed). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"

/* ---- the memory limits ------------------------------------------------------ */

static int same_quantity(const char *a, const char *b)
{
    int64_t x = krc_diag_quantity_bytes(a);
    int64_t y = krc_diag_quantity_bytes(b);

    return strcmp(a, b) == 0 || (x >= 0 && x == y);
}

void krc_diag_mem_limits(const struct dctx *x, struct krc_diag_memlim *m)
{
    const struct krc_report_container *c = x->c;
    const char *st = c->has_status_resources ? krc_kv_list_get(&c->status_limits, "memory") : NULL;
    const char *sp = krc_kv_list_get(&c->limits, "memory");
    const char *st_req =
        c->has_status_resources ? krc_kv_list_get(&c->status_requests, "memory") : NULL;

    memset(m, 0, sizeof(*m));
    if (st != NULL) {
        m->limit = st;
        m->from_status = 1;
        if (sp != NULL && !same_quantity(sp, st)) {
            m->spec = sp;
        }
    } else {
        m->limit = sp;
    }
    m->request = st_req != NULL ? st_req : krc_kv_list_get(&c->requests, "memory");
    m->pod = x->r->has_pod_resources ? krc_kv_list_get(&x->r->pod_limits, "memory") : NULL;
    m->whole = c->has_spec && x->r->api_object;
}

/* The limit line of the evidence (an OOM kill, a stale OOM flag). */
static void limit_evidence(struct builder *b, const struct dctx *x, const struct krc_diag_memlim *m)
{
    if (m->limit != NULL) {
        krc_diag_add_evidence(b, "memory limit %s, request %s (%s)%s%s%s", m->limit,
                              m->request ? m->request : "(none)",
                              m->from_status ? "status.containerStatuses[].resources: what the "
                                               "kubelet actuated"
                                             : "the container spec",
                              m->spec ? "; the spec asks for " : "", m->spec ? m->spec : "",
                              m->spec ? ", not in effect" : "");
    }
    if (m->pod != NULL) {
        const char *req = krc_kv_list_get(&x->r->pod_requests, "memory");
        krc_diag_add_evidence(b,
                              "pod-level memory limit %s, request %s (spec.resources, KEP-2837): "
                              "the cgroup of the pod holds all its containers' memory together%s",
                              m->pod, req ? req : "(none)",
                              m->limit == NULL ? "; this container has no limit of its own" : "");
    }
}

/* ---- an in-place resize around the end -------------------------------------- */

static const struct krc_report_pod_condition *condition(const struct krc_report *r,
                                                        const char *type)
{
    size_t i;

    for (i = 0; i < r->n_conditions; i++) {
        if (str_eq(r->conditions[i].type, type) && str_eq(r->conditions[i].status, "True")) {
            return &r->conditions[i];
        }
    }
    return NULL;
}

/* "3m20s before" / "40s after" the end (finishedAt); "" when a time is missing. */
static void rel_time(int64_t t, int64_t end, char *out, size_t outsz)
{
    char d[32];

    out[0] = '\0';
    if (t <= 0 || end <= 0) {
        return;
    }
    krc_diagnose_format_duration(t <= end ? end - t : t - end, d, sizeof(d));
    snprintf(out, outsz, ", %s %s the container ended", d, t <= end ? "before" : "after");
}

/* Evidence of a resize (conditions PodResizeInProgress / PodResizePending,
 * metadata.generation against status.observedGeneration) and, for an OOM
 * kill, a clause of the summary: only what the fields show. The spec is
 * what was asked; status.containerStatuses[].resources what the kubelet
 * actuated (for a container that is not running: what it allocated). */
static void resize_verdict(struct dctx *x, struct builder *b, struct krc_buf *s,
                           const struct krc_diag_memlim *m)
{
    static const char *const types[] = {"PodResizeInProgress", "PodResizePending"};
    const struct krc_report_pod_condition *prog = condition(x->r, "PodResizeInProgress");
    const struct krc_report_pod_condition *pend = condition(x->r, "PodResizePending");
    int64_t end = x->t != NULL ? x->t->finished_at : 0;
    int64_t spec_b = m->spec != NULL ? krc_diag_quantity_bytes(m->spec) : -1;
    int64_t act_b = m->limit != NULL ? krc_diag_quantity_bytes(m->limit) : -1;
    int lowering = m->spec != NULL && spec_b >= 0 && act_b >= 0 && spec_b < act_b;
    int raising = m->spec != NULL && spec_b >= 0 && act_b >= 0 && spec_b > act_b;
    char when[32];
    char rel[64];
    size_t i;

    for (i = 0; i < 2; i++) {
        const struct krc_report_pod_condition *pc = i == 0 ? prog : pend;
        if (pc == NULL) {
            continue;
        }
        krc_diag_format_time(pc->last_transition, when, sizeof(when));
        rel_time(pc->last_transition, end, rel, sizeof(rel));
        krc_diag_add_evidence(
            b, "pod condition %s=True since %s%s%s%s%s%s (in-place resize, KEP-1287)", types[i],
            when, rel, pc->reason ? ", reason " : "", pc->reason ? pc->reason : "",
            pc->message ? ": " : "", pc->message ? pc->message : "");
    }
    if (x->r->has_generation && x->r->has_observed_generation &&
        x->r->generation != x->r->observed_generation) {
        krc_diag_add_evidence(b,
                              "metadata.generation %lld, status.observedGeneration %lld: the "
                              "kubelet had not yet acted on the latest change of the pod's spec",
                              (long long)x->r->generation, (long long)x->r->observed_generation);
    } else if (x->r->has_generation && x->r->generation > 1 && prog == NULL && pend == NULL) {
        krc_diag_add_evidence(b,
                              "metadata.generation %lld: the pod's spec was changed after it was "
                              "created (a resize changes it); when, and what, is not shown",
                              (long long)x->r->generation);
    }
    if (s == NULL) {
        return;
    }
    /* the summary's clause */
    if (lowering && prog != NULL && !str_eq(prog->reason, "Error")) {
        krc_diag_format_time(prog->last_transition, when, sizeof(when));
        rel_time(prog->last_transition, end, rel, sizeof(rel));
        krc_buf_printf(s,
                       "; limit lowered at %s: an in-place resize to %s was in progress "
                       "(PodResizeInProgress; the actual limit shown is %s)%s",
                       when, m->spec, m->limit, rel);
    } else if (lowering && prog != NULL) {
        krc_buf_printf(s,
                       "; a resize of its memory limit to %s could not be applied "
                       "(PodResizeInProgress, reason Error): the limit stayed %s",
                       m->spec, m->limit);
    } else if (lowering) {
        krc_buf_printf(s, "; the spec asks for a lower limit, %s, that is not in effect", m->spec);
    } else if (raising) {
        krc_buf_printf(s, "; the limit in effect is below the spec's %s", m->spec);
        if (pend != NULL) {
            krc_diag_format_time(pend->last_transition, when, sizeof(when));
            krc_buf_printf(s, ": the resize is pending since %s (PodResizePending%s%s)", when,
                           pend->reason ? ", " : "", pend->reason ? pend->reason : "");
        } else if (prog != NULL) {
            krc_diag_format_time(prog->last_transition, when, sizeof(when));
            krc_buf_printf(s, ": a resize is in progress since %s (PodResizeInProgress)", when);
        }
    } else if (prog != NULL || pend != NULL) {
        const struct krc_report_pod_condition *pc = prog != NULL ? prog : pend;
        krc_diag_format_time(pc->last_transition, when, sizeof(when));
        rel_time(pc->last_transition, end, rel, sizeof(rel));
        krc_buf_printf(s, "; an in-place resize was %s since %s%s",
                       pc == prog ? "in progress" : "pending", when, rel);
    }
}

/* ---- 1. oom_killed ------------------------------------------------------------ */

/* Does the OOM verdict hold for this termination? Not for an exit by the
 * stop signal: the flag is then stale (krc_diag_oom_flag_on_stop). */
int krc_diag_oom_flag_on_stop(const struct dctx *x)
{
    int n = krc_signal_number(x->c->stop_signal);

    if (x->t == NULL || !str_eq(x->t->reason, "OOMKilled") || !x->has_exit) {
        return 0;
    }
    return x->exit_code == 143 || (n > 0 && n != 9 && x->exit_code == 128 + n);
}

/* The node's own OOM reports around the end: the kubelet's SystemOOM event
 * on the Node, the node-problem-detector's OOMKilling. */
static size_t node_oom_events(const struct dctx *x, struct builder *b,
                              const struct krc_report_event **first)
{
    size_t n = 0;
    size_t i;

    *first = NULL;
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if ((str_eq(e->reason, "SystemOOM") || str_eq(e->reason, "OOMKilling")) &&
            krc_diag_ev_in_window(e, x->lo - 60, x->hi)) {
            if (b != NULL) {
                krc_diag_evidence_event(b, e);
            }
            if (*first == NULL) {
                *first = e;
            }
            n++;
        }
    }
    return n;
}

static const struct krc_report_node_condition *memory_pressure(const struct krc_report *r)
{
    size_t i;

    for (i = 0; r->node.present && i < r->node.n_conditions; i++) {
        if (str_eq(r->node.conditions[i].type, "MemoryPressure") &&
            str_eq(r->node.conditions[i].status, "True")) {
            return &r->node.conditions[i];
        }
    }
    return NULL;
}

int krc_diag_match_oom_killed(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    return x->t != NULL && str_eq(x->t->reason, "OOMKilled") && !krc_diag_oom_flag_on_stop(x);
}

/* No memory limit on the container or the pod: the node's (system) OOM. */
static void say_no_limit(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_event *ev;
    const struct krc_report_node_condition *mp = memory_pressure(x->r);
    size_t n = node_oom_events(x, NULL, &ev);
    const char *node = x->r->node.name ? x->r->node.name : x->r->node_name;

    if (n > 0) {
        krc_buf_printf(s, "; its node reported a system OOM (event %s)", ev->reason);
    }
    if (mp != NULL) {
        krc_buf_printf(s, "%s node %s reports MemoryPressure=True", n > 0 ? " and" : ";",
                       node ? node : "?");
    }
    if (n == 0 && mp == NULL) {
        krc_buf_append_str(s, "; a limit above it was reached: the node's memory for pods or "
                              "the node's own memory");
        krc_diag_add_unchecked(
            b,
            "no SystemOOM or OOMKilling event and no MemoryPressure of the node were seen%s: "
            "whether the node ran out of memory is not shown (its kernel log is not read)",
            !x->r->node.present ? " (no node object was given)" : "");
    } else {
        krc_buf_append_str(s, ": the node ran out of memory");
    }
}

void krc_diag_say_oom_killed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    struct krc_diag_memlim m;
    const struct krc_report_event *ev;

    krc_diag_mem_limits(x, &m);
    krc_buf_printf(s, "Container %s was OOM-killed by the kernel (reason OOMKilled", x->c->name);
    if (m.limit != NULL) {
        krc_buf_printf(s, ", memory limit %s%s)", m.limit, m.spec ? " in effect" : "");
    } else if (m.pod != NULL) {
        krc_buf_printf(s,
                       ") under the pod-level memory limit %s (spec.resources): it has no "
                       "memory limit of its own, so the limit of the pod's containers together "
                       "applies to it",
                       m.pod);
    } else if (m.whole) {
        krc_buf_append_str(s,
                           ", no memory limit in the pod spec: none on the container or the pod)");
    } else if (x->c->has_spec) {
        krc_buf_append_str(s, ", no memory limit shown in the pod given)");
    } else {
        krc_buf_append_str(s, ")");
    }
    if (x->has_exit && x->exit_code != 137) {
        krc_buf_printf(s, " with exit code %d (on cgroup v1 the victim can be a child process)",
                       x->exit_code);
    }
    krc_diag_say_after(x, s);
    if (m.limit == NULL && m.pod == NULL && m.whole) {
        say_no_limit(x, b, s);
    }
    resize_verdict(x, b, s, &m);
    limit_evidence(b, x, &m);
    node_oom_events(x, b, &ev);
    if (m.limit != NULL && m.pod != NULL) {
        krc_diag_add_unchecked(b,
                               "the container's limit %s and the pod-level limit %s both apply: "
                               "which one was reached is not shown",
                               m.limit, m.pod);
    } else if (m.pod != NULL) {
        krc_diag_add_unchecked(b, "which container of the pod used the most memory is not shown "
                                  "(kubectl top pod --containers shows the use now)");
    } else if (m.limit != NULL) {
        krc_diag_add_unchecked(b, "the container's memory use at the kill is not shown (kubectl "
                                  "top shows the use now, a metrics history its peak)");
    } else if (m.limit == NULL && !m.whole) {
        krc_diag_add_unchecked(
            b, "the pod given does not show the memory limits of the container and the pod "
               "(a pasted or cut spec): which limit was reached is not known");
    }
    if (x->has_exit && x->exit_code != 137) {
        krc_diag_add_unchecked(b, "which process the OOM killer chose is not shown (the node's "
                                  "kernel log names it)");
    }
    krc_diag_advise_oom_killed(x, b);
}

/* ---- the kubelet's stop and the grace period ------------------------------------ */

/* The grace period of a stop: the probe's own (terminationGracePeriodSeconds
 * of a liveness or startup probe, for its kill) or the pod's. */
static int64_t grace_of(const struct dctx *x, const struct krc_report_probe *probe)
{
    return probe != NULL && probe->present && probe->grace_period >= 0 ? probe->grace_period
                                                                       : x->r->grace_period;
}

/* Seconds from event e to the end, -1 when either time is missing or the
 * event is later. */
static int64_t after_event(const struct dctx *x, const struct krc_report_event *e)
{
    int64_t at = e->last_timestamp > 0 ? e->last_timestamp : e->first_timestamp;

    if (at <= 0 || x->t == NULL || x->t->finished_at <= 0 || x->t->finished_at < at) {
        return -1;
    }
    return x->t->finished_at - at;
}

void krc_diag_say_probe_grace(struct dctx *x, struct builder *b, struct krc_buf *s,
                              const struct krc_report_probe *probe)
{
    int64_t grace = grace_of(x, probe);
    int64_t d = after_event(x, x->ev);

    if (!x->has_exit || x->exit_code != 137 || d < 0 || d + 2 < grace) {
        return;
    }
    krc_buf_printf(s, "; it did not stop within the %llds grace period and was SIGKILLed",
                   (long long)grace);
    krc_diag_add_evidence(b,
                          "exit 137 %llds after the probe kill: the kubelet sends SIGKILL when the "
                          "grace period (%llds, %s) runs out",
                          (long long)d, (long long)grace,
                          probe != NULL && probe->present && probe->grace_period >= 0
                              ? "the probe's terminationGracePeriodSeconds"
                              : "the pod's terminationGracePeriodSeconds");
}

int krc_diag_say_kubelet_stop(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    /* the stop comes before the end (2 s for clocks that round differently) */
    int64_t hi = x->t != NULL && x->t->finished_at > 0 ? x->t->finished_at + 2 : x->hi;
    const struct krc_report_event *stop = krc_diag_find_stop(x->r, x->c, x->lo, hi);
    const struct krc_report_event *hook;
    /* a deletion gives its own grace period (metadata.deletionGracePeriodSeconds) */
    int deletion = x->r->deletion_timestamp > 0 && x->r->has_deletion_grace;
    int64_t grace = deletion ? x->r->deletion_grace : grace_of(x, NULL);
    int64_t d;

    if (stop == NULL) {
        return 0;
    }
    hook = krc_diag_find_reason(x->r, x->c, "FailedPreStopHook", x->lo, hi);
    d = after_event(x, stop);
    krc_buf_append_str(s, "; the kubelet had stopped it");
    krc_diag_quote(s, " (event Killing: ", krc_diag_strip_combined(stop->message), 160, ")");
    krc_diag_evidence_event(b, stop);
    if (hook != NULL) {
        krc_buf_append_str(s, "; its preStop hook failed (event FailedPreStopHook)");
        krc_diag_evidence_event(b, hook);
    }
    if (x->has_exit && x->exit_code == 137 && d >= 0 && d + 2 >= grace) {
        krc_buf_printf(s,
                       "; SIGKILL %llds after the stop: the %llds grace period ran out before it "
                       "exited",
                       (long long)d, (long long)grace);
        krc_diag_add_evidence(
            b,
            "%s %lld (%s): the kubelet runs the preStop hook, sends the stop "
            "signal, and sends SIGKILL when the grace period ends",
            deletion ? "metadata.deletionGracePeriodSeconds" : "terminationGracePeriodSeconds",
            (long long)grace,
            deletion ? "the pod's deletion" : "the pod's; a deletion may give its own");
        krc_diag_add_unchecked(b, "whether a preStop hook used up the grace period or the process "
                                  "ignored its stop signal is not shown (the spec's "
                                  "lifecycle.preStop is not read)");
        snprintf(x->next, sizeof(x->next),
                 "Make the container exit within its grace period when it is stopped: handle the "
                 "stop signal (SIGTERM unless the image or spec sets another) in PID 1, keep the "
                 "preStop hook short, or raise terminationGracePeriodSeconds; the pod's events "
                 "around the Killing event say why it was stopped");
    } else if (x->has_exit && x->exit_code == 137 && d >= 0) {
        krc_buf_printf(s,
                       "; SIGKILL %llds after the stop, before the %s %llds grace period "
                       "ended: %s",
                       (long long)d, deletion ? "deletion's" : "pod's", (long long)grace,
                       deletion ? "a kill from elsewhere"
                                : "a shorter grace period given with the deletion (--grace-period, "
                                  "--force) or a kill from elsewhere");
        snprintf(x->next, sizeof(x->next),
                 "Find who stopped the pod and how: a deletion with a short grace period "
                 "(--grace-period, --force), a controller or a person (the pod's events, the "
                 "audit log), or a SIGKILL sent from inside the pod");
    } else if (x->has_exit && x->exit_code == 137) {
        krc_diag_add_unchecked(b, "the time between the kubelet's stop and the SIGKILL is not "
                                  "shown: whether the grace period ran out is not known");
    }
    return 1;
}

/* ---- what every verdict adds ------------------------------------------------------ */

/* Is p's timing consistent with a kill at the end of this run? (rules.c
 * no longer names a probe kill from it: it is a hypothesis.) */
static int probe_fits(const struct dctx *x, const struct krc_report_probe *p, int startup)
{
    int64_t first = (int64_t)p->initial_delay + (int64_t)p->period * (p->failure_threshold - 1);
    int64_t grace = p->grace_period >= 0 ? p->grace_period : x->r->grace_period;

    if (x->run < 0) {
        return 1; /* timing unknown: the hypothesis says so */
    }
    if (x->run < first) {
        return 0;
    }
    /* A startup probe stops probing once it succeeds: its kill comes at the
     * end of its budget, plus the stop time. */
    return !startup || x->run <= first + p->period + p->timeout + grace + 10;
}

/* An ending a probe kill gives: 137 (SIGKILL after the grace period), 143
 * or 128+N of the reported stop signal, 0 (a program that handles it). */
static int probe_kill_exit(const struct dctx *x)
{
    int n = krc_signal_number(x->c->stop_signal);

    return x->has_exit && (x->exit_code == 0 || x->exit_code == 137 || x->exit_code == 143 ||
                           (n > 0 && x->exit_code == 128 + n));
}

static void probe_hypothesis(struct dctx *x, struct builder *b)
{
    const struct krc_report_probe *probes[2] = {&x->c->startup, &x->c->liveness};
    static const char *const names[2] = {"startup", "liveness"};
    static const char *const caps[2] = {"Startup", "Liveness"};
    size_t i;

    if (!probe_kill_exit(x)) {
        return;
    }
    for (i = 0; i < 2; i++) {
        const struct krc_report_probe *p = probes[i];
        const struct krc_report_event *fail;
        int64_t first;
        if (!p->present || !probe_fits(x, p, i == 0)) {
            continue;
        }
        fail = krc_diag_find_unhealthy(x->r, x->c, caps[i], x->lo, x->hi);
        if (fail != NULL && !krc_diag_ev_in_window(fail, x->lo, x->hi)) {
            fail = NULL;
        }
        /* events of the time without a kill or a failure of this probe:
         * the kubelet records both, so no hypothesis */
        if (x->window_events > 0 && fail == NULL) {
            continue;
        }
        first = (int64_t)p->initial_delay + (int64_t)p->period * (p->failure_threshold - 1);
        krc_diag_add_evidence(b,
                              "hypothesis, not a finding: a %s probe is configured (%s, first "
                              "possible kill after %llds)%s%s%s; a probe kill ends a container "
                              "this way, but no Killing event naming it was seen",
                              names[i], p->handler, (long long)first,
                              x->run >= 0 ? " and fits the run time of "
                                          : "; the run time is "
                                            "unknown",
                              x->run >= 0 ? x->dur : "",
                              fail != NULL ? "; its failures were seen" : "");
        if (fail != NULL) {
            krc_diag_evidence_event(b, fail);
            krc_diag_add_unchecked(b,
                                   "%s probe failures were seen but no Killing event of the probe: "
                                   "whether the kubelet killed the container for them is not shown",
                                   names[i]);
        } else if (x->pod_events > 0 && x->hi == 0) {
            /* (without events, or without events of the time, krc_diag_add_missing says
             * that a probe kill cannot be ruled out) */
            krc_diag_add_unchecked(b,
                                   "no termination time: whether the events given are of the "
                                   "time of the kill is not known, and a %s probe kill can be "
                                   "neither confirmed nor ruled out",
                                   names[i]);
        }
        x->cmds |= CMD_EVENTS;
        if (b->d->cause == KRC_CAUSE_COMPLETED && x->next[0] == '\0') {
            snprintf(x->next, sizeof(x->next),
                     "Check the pod's events right after the next restart for a Killing event of "
                     "the %s probe (a program that handles SIGTERM exits 0 when a probe kill "
                     "stops it) and test the probe by hand; if the program is meant to finish, "
                     "run it as a Job",
                     names[i]);
        }
    }
}

/* reason OOMKilled on an exit by the stop signal (kubernetes#140716) */
static void stale_oom_flag(struct dctx *x, struct builder *b)
{
    struct krc_diag_memlim m;

    krc_diag_add_evidence(
        b,
        "reason OOMKilled with exit %d (%s): the runtime reports OOMKilled when the container's "
        "memory cgroup counted an OOM kill at any time (kubernetes#140716): a process in it, "
        "e.g. a child, was OOM-killed, and the container's own process ended by its stop signal",
        x->exit_code, x->signal_name ? x->signal_name : "?");
    krc_diag_mem_limits(x, &m);
    limit_evidence(b, x, &m);
    resize_verdict(x, b, NULL, &m);
    krc_diag_add_unchecked(b, "when the OOM kill happened and which process it hit are not shown "
                              "(the node's kernel log names it)");
}

void krc_diag_kill_evidence(struct builder *b, struct dctx *x)
{
    enum krc_cause cause = b->d->cause;

    if (x->t == NULL) {
        return;
    }
    if (cause != KRC_CAUSE_OOM_KILLED && krc_diag_oom_flag_on_stop(x)) {
        stale_oom_flag(x, b);
    }
    if (cause == KRC_CAUSE_KILLED || cause == KRC_CAUSE_TERMINATED ||
        cause == KRC_CAUSE_COMPLETED) {
        probe_hypothesis(x, b);
    }
    if (cause == KRC_CAUSE_KILLED) {
        const struct krc_report_event *ev;
        node_oom_events(x, b, &ev);
    }
}
