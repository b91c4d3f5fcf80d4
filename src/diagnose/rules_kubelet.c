/* The rules of what the kubelet or the kernel did to the container
 * (src/diagnose/rules.c has the table): an eviction, a probe kill seen in the
 * events, probe failures of a container without a termination, and the
 * endings the exit code alone names (completed, killed, terminated,
 * unknown). The OOM kill and what the kill verdict adds to these endings
 * (the limits, the kubelet's stop and its grace period, a configured probe
 * as a hypothesis) are in rules_kill.c. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/mem.h"

/* What rule 5 (node_not_ready) holds on, and rule 2 (evicted) leaves to it:
 * the container was killed (exit 137, no exit code, or lost:
 * ContainerStatusUnknown) while its node's Ready condition was False or
 * Unknown, or a NodeNotReady event of the pod or the node came at that time
 * (advice.c, krc_diag_node_not_ready). */
static int killed_like(const struct dctx *x)
{
    return x->t != NULL &&
           (!x->has_exit || x->exit_code == 137 || str_eq(x->t->reason, "ContainerStatusUnknown"));
}

static int node_down(const struct dctx *x)
{
    const struct krc_report_event *ev;

    return killed_like(x) && (krc_diag_node_not_ready(x, &ev) != NULL || ev != NULL);
}

/* 1. oom_killed: rules_kill.c (the kill verdict) */

/* 2. evicted, from direct evidence */
int krc_diag_match_evicted(struct dctx *x)
{
    /* The kubelet's own eviction wording (T.message may otherwise be the
     * application's log tail, where "evicted" means anything). */
    static const struct pattern evict_words[] = {
        {"the node was low on resource", NULL},
        {"pod ephemeral local storage usage exceeds", NULL},
        {"exceeded its local ephemeral storage limit", NULL},
        {"usage of emptydir volume", "exceeds the limit"},
    };
    const struct krc_report_event *taint_ev = NULL;
    size_t i;

    x->conf = KRC_CONFIDENCE_HIGH;
    x->ev = NULL;
    x->detail = NULL;
    /* a stop (SIGTERM, SIGKILL, no exit code): an exit of its own is its own */
    if ((krc_diag_device_taint(x, &taint_ev) != NULL || taint_ev != NULL) && x->t != NULL &&
        (!x->has_exit || x->exit_code == 137 || x->exit_code == 143 || x->exit_code == 0)) {
        x->detail = "device taint";
        return 1;
    }
    if (str_eq(x->r->pod_reason, "Evicted")) {
        x->detail = "pod";
        return 1;
    }
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if (str_eq(e->reason, "Evicted") && krc_diag_event_of(x, e) &&
            krc_diag_ev_in_window(e, x->lo, x->hi)) {
            x->ev = e;
            return 1;
        }
    }
    /* A container the kubelet lost while its node was NotReady: the node
     * rule names that (node_not_ready). */
    if (x->t != NULL &&
        (str_eq(x->t->reason, "ContainerStatusUnknown") ||
         krc_diag_str_has_ci(x->t->message, "could not be located when the pod was")) &&
        !node_down(x)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->detail = "unknown";
        return 1;
    }
    if (x->t != NULL && x->t->message != NULL &&
        krc_diag_search_patterns((const unsigned char *)x->t->message, strlen(x->t->message),
                                 evict_words, NPAT(evict_words), &x->h)) {
        x->detail = "message";
        return 1;
    }
    return 0;
}

void krc_diag_say_evicted(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->detail != NULL && strcmp(x->detail, "device taint") == 0) {
        krc_diag_say_device_taint(x, b, s);
    } else if (x->detail != NULL && strcmp(x->detail, "pod") == 0) {
        krc_buf_printf(s, "The kubelet evicted %s%s (status.reason Evicted",
                       x->r->name ? "pod " : "the pod", x->r->name ? x->r->name : "");
        if (x->r->pod_message != NULL) {
            krc_diag_quote(s, ": ", x->r->pod_message, 200, "");
        }
        krc_buf_append_str(s, ")");
        krc_diag_add_evidence(b, "pod status: reason Evicted%s%s", x->r->pod_message ? ": " : "",
                              x->r->pod_message ? x->r->pod_message : "");
    } else if (x->ev != NULL) {
        krc_buf_append_str(s, "The kubelet evicted the pod (event Evicted");
        krc_diag_quote(s, ": ", krc_diag_strip_combined(x->ev->message), 200, "");
        krc_buf_append_str(s, ")");
        krc_diag_evidence_event(b, x->ev);
    } else if (x->detail != NULL && strcmp(x->detail, "unknown") == 0) {
        krc_buf_printf(s,
                       "The kubelet could not locate container %s when the pod was terminated "
                       "(reason %s, ",
                       x->c->name, x->t->reason ? x->t->reason : "none");
        krc_diag_say_exit(x, s);
        krc_buf_append_str(s, "); this is what an eviction or a lost node leaves behind");
        krc_diag_add_unchecked(
            b, "no Evicted event was seen: an eviction, a node restart or a forced pod "
               "deletion are all possible");
    } else {
        krc_buf_printf(s, "Container %s was stopped by an eviction", x->c->name);
        krc_diag_quote(s, " (", x->t->message, 200, ")");
    }
    if (x->t != NULL && x->t->message != NULL) {
        krc_diag_add_evidence(b, "termination message: %s", x->t->message);
    }
}

/* 3-4. probe kills named by a Killing event */
static int m_probe_event(struct dctx *x, const char *probe, const char *cap)
{
    x->ev = krc_diag_find_probe_kill(x->r, x->c, probe, x->lo, x->hi);
    x->ev2 = x->ev != NULL ? krc_diag_find_unhealthy(x->r, x->c, cap, x->lo, x->hi) : NULL;
    /* An undated kill event, or one with no termination time to place it
     * against, may belong to an earlier instance than the last one. */
    x->conf = x->ev != NULL && (x->hi <= 0 || krc_diag_ev_undated(x->ev)) ? KRC_CONFIDENCE_MEDIUM
                                                                          : KRC_CONFIDENCE_HIGH;
    return x->ev != NULL;
}

int krc_diag_match_liveness_event(struct dctx *x)
{
    return m_probe_event(x, "liveness", "Liveness");
}

int krc_diag_match_startup_event(struct dctx *x)
{
    return m_probe_event(x, "startup", "Startup");
}

static const char *probe_detail(const struct krc_report_event *unhealthy)
{
    const char *m;
    const char *colon;
    const char *detail;

    if (unhealthy == NULL) {
        return NULL;
    }
    m = krc_diag_strip_combined(unhealthy->message);
    colon = strstr(m, ": ");
    detail = colon != NULL ? colon + 2 : "";
    if (detail[0] == '\0' || (colon == NULL && krc_diag_str_has_ci(m, "probe failed:"))) {
        detail = "no output";
    }
    return detail;
}

static void s_probe_event(struct dctx *x, struct builder *b, struct krc_buf *s, int liveness)
{
    const char *detail = probe_detail(x->ev2);

    krc_buf_printf(s, "%s probe failed", liveness ? "Liveness" : "Startup");
    if (detail != NULL) {
        krc_diag_quote(s, " (", detail, 200, ")");
    }
    krc_buf_append_str(s, " and the kubelet killed the container");
    if (!liveness) {
        krc_buf_append_str(s, " before it finished starting");
    }
    if (x->has_exit) {
        krc_buf_printf(s, "; exit %d%s%s%s", x->exit_code, x->signal_name ? " (" : "",
                       x->signal_name ? x->signal_name : "", x->signal_name ? ")" : "");
    }
    krc_diag_say_after(x, s);
    krc_diag_evidence_event(b, x->ev);
    if (x->ev2 != NULL) {
        krc_diag_evidence_event(b, x->ev2);
    }
    krc_diag_say_probe_grace(x, b, s, liveness ? &x->c->liveness : &x->c->startup);
}

void krc_diag_say_liveness_event(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_event(x, b, s, 1);
}

void krc_diag_say_startup_event(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_event(x, b, s, 0);
}

/* 5. node_not_ready */
int krc_diag_match_node_not_ready(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_MEDIUM;
    return node_down(x);
}

void krc_diag_say_node_not_ready(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_event *ev;
    const struct krc_report_node_condition *ready = krc_diag_node_not_ready(x, &ev);
    const char *node = x->r->node_name != NULL   ? x->r->node_name
                       : x->r->node.name != NULL ? x->r->node.name
                                                 : NULL;

    if (ready != NULL) {
        /* the reason and message are the evidence's node line */
        krc_buf_printf(s, "The pod's node is NotReady (Ready=%s)", ready->status);
    } else {
        krc_buf_printf(s, "The pod's node was NotReady at the time (event NodeNotReady)%s",
                       x->r->node.present ? " and reports Ready now" : "");
    }
    krc_buf_printf(s, "; container %s was killed (", x->c->name);
    if (x->t != NULL && str_eq(x->t->reason, "ContainerStatusUnknown")) {
        krc_buf_append_str(s, "reason ContainerStatusUnknown: the kubelet lost it, ");
    }
    krc_diag_say_exit(x, s);
    krc_buf_append_str(s, ")");
    krc_diag_say_after(x, s);
    if (ev != NULL) {
        krc_diag_evidence_event(b, ev);
    }
    if (!x->r->node.present) {
        krc_diag_add_unchecked(b, "no node object was given: the node's conditions now were not "
                                  "checked");
    }
    if (node != NULL) {
        /* the node's name is in the report's node field and the commands */
        snprintf(x->next, sizeof(x->next),
                 "Check the node first (its conditions and events; the kubelet, the container "
                 "runtime, memory and disk on the node): the container was killed with the node; "
                 "the pod restarts when the node recovers, or is replaced if the node is drained");
    }
}

/* 20. evicted, inferred from node pressure */
static const struct krc_report_node_condition *node_pressure(const struct krc_report *r)
{
    size_t i;

    for (i = 0; r->node.present && i < r->node.n_conditions; i++) {
        const struct krc_report_node_condition *nc = &r->node.conditions[i];
        if (str_eq(nc->status, "True") &&
            (str_eq(nc->type, "MemoryPressure") || str_eq(nc->type, "DiskPressure") ||
             str_eq(nc->type, "PIDPressure"))) {
            return nc;
        }
    }
    return NULL;
}

int krc_diag_match_evicted_pressure(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_LOW;
    return (!x->has_exit || x->exit_code == 137) && x->t != NULL && node_pressure(x->r) != NULL;
}

void krc_diag_say_evicted_pressure(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_node_condition *nc = node_pressure(x->r);

    krc_buf_printf(s, "Container %s was killed (", x->c->name);
    krc_diag_say_exit(x, s);
    krc_buf_printf(s,
                   ") while node %s reports %s=True; under node pressure the kubelet evicts "
                   "pods and reclaims resources",
                   x->r->node.name ? x->r->node.name : "?", nc->type);
    krc_diag_add_unchecked(b, "no Evicted event was seen: the node pressure is the only sign of an "
                              "eviction");
}

/* 21-22. probe failures seen in the events of a container that restarts,
 * without a termination to read: no Killing event seen. A probe configured
 * in the spec alone names no cause: with a termination it is a hypothesis
 * in the evidence of killed / terminated / completed (rules_kill.c). */
static int m_probe_spec(struct dctx *x, int startup)
{
    const struct krc_report_probe *p = startup ? &x->c->startup : &x->c->liveness;
    const char *cap = startup ? "Startup" : "Liveness";

    x->probe = p->present ? p : NULL;
    x->ev2 = NULL;
    if (x->has_exit) {
        return 0;
    }
    x->ev2 = krc_diag_find_unhealthy(x->r, x->c, cap, x->lo, x->hi);
    x->conf = KRC_CONFIDENCE_MEDIUM;
    return x->ev2 != NULL &&
           (x->c->restart_count > 0 || str_eq(x->c->state_reason, "CrashLoopBackOff"));
}

int krc_diag_match_startup_spec(struct dctx *x)
{
    return m_probe_spec(x, 1);
}

int krc_diag_match_liveness_spec(struct dctx *x)
{
    return m_probe_spec(x, 0);
}

static void s_probe_spec(struct dctx *x, struct builder *b, struct krc_buf *s, int startup)
{
    krc_buf_printf(s,
                   "%s probe failures were seen for container %s, which is restarting; "
                   "probe failures past the threshold make the kubelet restart it (no kill "
                   "event seen)",
                   startup ? "Startup" : "Liveness", x->c->name);
    if (x->ev2 != NULL) {
        krc_diag_evidence_event(b, x->ev2);
    }
    if (x->probe != NULL) {
        krc_diag_add_evidence(
            b,
            "%s probe: %s, initialDelaySeconds %d, periodSeconds %d, timeoutSeconds %d, "
            "failureThreshold %d",
            startup ? "startup" : "liveness", x->probe->handler, x->probe->initial_delay,
            x->probe->period, x->probe->timeout, x->probe->failure_threshold);
    }
}

void krc_diag_say_startup_spec(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_spec(x, b, s, 1);
}

void krc_diag_say_liveness_spec(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    s_probe_spec(x, b, s, 0);
}

/* 23. terminated, exit 0: the log says the process was asked to stop.
 * A program that handles SIGTERM (the kubelet's stop signal for a probe
 * kill, a deletion, an eviction or a rollout) and shuts down cleanly exits
 * 0: that is a stop, not a program that finished its work. The lines are
 * the handlers' own words: "SIGTERM received", "Received SIGTERM", Go's
 * "received signal: terminated" (os.Signal's String), nginx's "signal 15
 * (SIGTERM) received", PostgreSQL's "received smart/fast shutdown request"
 * (its SIGTERM/SIGINT handlers), the NATS server's "Trapped "terminated"
 * signal". */
static const struct pattern stop_signal_patterns[] = {
    {"sigterm", "receiv"},
    {"sigterm", "caught"},
    {"sigterm", "got "},
    {"signal terminated", "receiv"},
    {"signal: terminated", "receiv"},
    {"signal 15", "receiv"},
    {"received smart shutdown request", NULL},
    {"received fast shutdown request", NULL},
    {"trapped \"terminated\" signal", NULL}, /* NATS server */
};

int krc_diag_match_terminated_exit0(struct dctx *x)
{
    x->ev = NULL;
    memset(&x->h, 0, sizeof(x->h));
    x->conf = x->window_events > 0 ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    return x->has_exit && x->exit_code == 0 &&
           krc_diag_find_text(x, stop_signal_patterns, NPAT(stop_signal_patterns), IN_LOG_TAIL);
}

/* 24. completed */
int krc_diag_match_completed(struct dctx *x)
{
    if (!x->has_exit || x->exit_code != 0) {
        return 0;
    }
    if (x->c->has_spec && !x->c->has_liveness && !x->c->has_startup) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
    } else {
        x->conf = x->window_events > 0 ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    }
    return 1;
}

void krc_diag_say_completed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    (void)b;
    krc_buf_printf(s, "Container %s exited 0 (%s)", x->c->name,
                   x->t->reason ? x->t->reason : "no reason given");
    krc_diag_say_after(x, s);
    if (!x->from_last) {
        krc_buf_append_str(s, " (its current state)");
    } else if (x->c->is_sidecar) {
        krc_buf_append_str(s, " and was restarted: sidecars (restartPolicy Always) always restart");
    } else if (!x->c->is_init) {
        krc_buf_printf(s, " and was restarted (restartPolicy %s)",
                       x->r->restart_policy ? x->r->restart_policy : "not given");
    }
}

/* 25-26. killed, terminated */
int krc_diag_match_killed(struct dctx *x)
{
    x->conf =
        x->window_events > 0 && x->r->node.present ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    return x->has_exit && x->exit_code == 137;
}

int krc_diag_match_terminated(struct dctx *x)
{
    x->conf = x->window_events > 0 ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
    return x->has_exit && x->exit_code == 143;
}

/* What the diagnosis looked at to rule out other killers, and what it
 * could not see. */
static void say_checked(struct dctx *x, struct krc_buf *s, int want_node)
{
    int no_events = x->window_events == 0;
    int no_node = want_node && !x->r->node.present;

    if (!no_events) {
        krc_buf_printf(s,
                       "; no probe kill or eviction among the %zu event%s of the pod from that "
                       "time",
                       x->window_events, x->window_events == 1 ? "" : "s");
    }
    if (no_events || no_node) {
        krc_buf_printf(s, "; %s cannot be ruled out: no %s%s%s %s given",
                       want_node ? "the OOM killer or a probe kill" : "a probe kill",
                       no_events ? "events" : "", no_events && no_node ? "/" : "",
                       no_node ? "node" : "", no_events && no_node ? "were" : "was");
    }
}

void krc_diag_say_killed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    krc_buf_printf(s, "Container %s was killed (SIGKILL, exit 137, reason %s)", x->c->name,
                   x->t->reason ? x->t->reason : "none");
    krc_diag_say_after(x, s);
    if (!krc_diag_say_kubelet_stop(x, b, s)) {
        say_checked(x, s, 1);
    }
}

void krc_diag_say_terminated(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    krc_buf_printf(s, "Container %s received SIGTERM and exited 143", x->c->name);
    krc_diag_say_after(x, s);
    if (krc_diag_oom_flag_on_stop(x)) {
        krc_buf_append_str(s, " with reason OOMKilled: a stop, not an OOM kill of the container "
                              "(its own process ended on SIGTERM; the flag says a process in its "
                              "memory cgroup was OOM-killed at some time, e.g. a child: "
                              "kubernetes#140716)");
    }
    if (!krc_diag_say_kubelet_stop(x, b, s)) {
        say_checked(x, s, 0);
    }
}

void krc_diag_say_terminated_exit0(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    char line[200];

    krc_diag_hit_short(x, line, sizeof(line));
    krc_buf_printf(s, "Container %s was stopped: its log reported a stop signal", x->c->name);
    krc_diag_quote_clean(s, " (", line, ")");
    krc_buf_printf(s, " and it exited 0 (%s)", x->t->reason ? x->t->reason : "no reason given");
    krc_diag_say_after(x, s);
    krc_diag_evidence_hit(b, x);
    krc_diag_add_evidence(b, "exit 0 after a stop signal is a graceful stop, not a finished "
                             "program: the sender is not shown by the exit code");
    say_checked(x, s, 0);
}

/* 27. unknown */
int krc_diag_match_unknown(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_LOW;
    return 1;
}

void krc_diag_say_unknown(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    krc_buf_printf(s, "Not enough evidence to name a cause for container %s", x->c->name);
    if (x->t == NULL) {
        krc_buf_printf(s, " (state %s%s%s; no terminated state was given)",
                       x->c->state == KRC_REPORT_STATE_RUNNING   ? "running"
                       : x->c->state == KRC_REPORT_STATE_WAITING ? "waiting"
                                                                 : "unknown",
                       x->c->state_reason ? ": " : "",
                       x->c->state_reason ? x->c->state_reason : "");
    } else if (!x->has_exit) {
        krc_buf_printf(s, " (terminated, reason %s, no exitCode given)",
                       x->t->reason ? x->t->reason : "none");
    }
    if (x->log != NULL) {
        struct tail *t = krc_malloc(sizeof(*t));
        char line[KRC_DIAG_EVIDENCE_MAX];
        if (t == NULL) {
            b->oom = 1;
            return;
        }
        krc_diag_collect_tail(x->log, x->log_len, 1, t);
        if (t->n > 0) {
            struct span l = krc_diag_strip_ts(t->lines[t->n - 1]);
            krc_diagnose_sanitize(l.p, l.len, line, sizeof(line) - 40);
            krc_diag_add_evidence(b, "the log ends with: %s", line);
        }
        krc_free(t);
    }
}
