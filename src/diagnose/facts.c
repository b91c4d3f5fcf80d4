/* The facts the rules read (src/diagnose/diagnose_private.h): the chosen
 * container's termination T and window W, its log and messages, the events
 * that concern it, where a text was found; and the choice of the container
 * to diagnose (krc_diagnose_pick). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"

const char *krc_diag_strip_combined(const char *msg)
{
    static const char prefix[] = "(combined from similar events): ";

    if (msg != NULL && strncmp(msg, prefix, sizeof(prefix) - 1) == 0) {
        return msg + sizeof(prefix) - 1;
    }
    return msg != NULL ? msg : "";
}

/* Is the event inside [lo, hi]? hi == 0 means "no window known" (a status
 * without a termination): every event counts. */
int krc_diag_ev_undated(const struct krc_report_event *e)
{
    return e->first_timestamp == 0 && e->last_timestamp == 0;
}

/* An undated event (pasted from kubectl describe, which shows ages only)
 * also counts: the confidence of a rule that relies on one says so. */
int64_t krc_diag_ev_in_window(const struct krc_report_event *e, int64_t lo, int64_t hi)
{
    if (hi == 0 || krc_diag_ev_undated(e)) {
        return 1;
    }
    return (e->last_timestamp >= lo && e->last_timestamp <= hi) ||
           (e->first_timestamp >= lo && e->first_timestamp <= hi);
}

/* Does the message name container `name` ("Container NAME failed liveness
 * probe", "Stopping container NAME")? */
static int msg_names_container(const char *msg, const char *name)
{
    size_t nl = name != NULL ? strlen(name) : 0;
    const char *p = msg;

    while (nl > 0 && p != NULL && (p = strstr(p, name)) != NULL) {
        char after = p[nl];
        if (p - msg >= 10 &&
            krc_diag_find_ci((const unsigned char *)p - 10, 10, "container ") == 0 &&
            (after == '\0' || after == ' ' || after == ',' || after == '"' || after == ':')) {
            return 1;
        }
        /* Docker-era kubelet: "Killing container with id docker://NAME:..." */
        if (p - msg >= 3 && strncmp(p - 3, "://", 3) == 0 && after == ':') {
            return 1;
        }
        p += nl;
    }
    return 0;
}

/* Does event e concern container c? By fieldPath; an event without one (as
 * pasted from kubectl describe) when its message names the container or the
 * pod has only this container. */
int krc_diag_ev_about(const struct krc_report *r, const struct krc_report_event *e,
                      const struct krc_report_container *c)
{
    size_t i;
    size_t regular = 0;

    if (krc_report_event_matches(r, e, c)) {
        return 1;
    }
    if (e->field_path != NULL || !krc_report_event_is_pod(r, e)) {
        return 0;
    }
    if (msg_names_container(krc_diag_strip_combined(e->message), c->name)) {
        return 1;
    }
    if (krc_diag_str_has_ci(e->message, "container ")) {
        return 0; /* names another container */
    }
    for (i = 0; i < r->n_containers; i++) {
        regular += !r->containers[i].is_init;
    }
    return regular == 1 && !c->is_init;
}

/* Is e a kubelet event of `reason`? A pasted event may have lost its reason
 * column: then the kubelet's own wording stands for it ("Liveness probe
 * failed: ..." is only ever an Unhealthy event, "... will be restarted" /
 * "... will be killed and recreated" only a Killing one). */
static int ev_is(const struct krc_report_event *e, const char *reason)
{
    const char *m = krc_diag_strip_combined(e->message);

    if (e->reason != NULL && e->reason[0] != '\0') {
        return strcmp(e->reason, reason) == 0;
    }
    if (m == NULL) {
        return 0;
    }
    if (strcmp(reason, "Unhealthy") == 0) {
        return strncmp(m, "Liveness probe failed:", 22) == 0 ||
               strncmp(m, "Startup probe failed:", 21) == 0 ||
               strncmp(m, "Readiness probe failed:", 23) == 0;
    }
    if (strcmp(reason, "Killing") == 0) {
        return krc_diag_str_has_ci(m, "will be restarted") ||
               krc_diag_str_has_ci(m, "will be killed and recreated");
    }
    return 0;
}

/* Killing event naming `probe` ("liveness" / "startup") for container c in W. */
const struct krc_report_event *krc_diag_find_probe_kill(const struct krc_report *r,
                                                        const struct krc_report_container *c,
                                                        const char *probe, int64_t lo, int64_t hi)
{
    char a[48];
    char bb[48];
    const struct krc_report_event *best = NULL;
    size_t i;

    snprintf(a, sizeof(a), "failed %s probe", probe);
    snprintf(bb, sizeof(bb), "%s probe failed", probe);
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        const char *msg = krc_diag_strip_combined(e->message);
        if (!ev_is(e, "Killing") || !krc_diag_ev_about(r, e, c)) {
            continue;
        }
        if (!krc_diag_str_has_ci(msg, a) && !krc_diag_str_has_ci(msg, bb)) {
            continue;
        }
        if (!krc_diag_ev_in_window(e, lo, hi)) {
            continue;
        }
        if (best == NULL || e->last_timestamp > best->last_timestamp) {
            best = e;
        }
    }
    return best;
}

/* The latest Killing event for container c in [lo, hi] that is not a probe
 * kill: the kubelet stopping it for another reason ("Stopping container
 * NAME" for a deletion or a pod stop, "Container NAME definition changed,
 * will be restarted"). */
const struct krc_report_event *krc_diag_find_stop(const struct krc_report *r,
                                                  const struct krc_report_container *c, int64_t lo,
                                                  int64_t hi)
{
    const struct krc_report_event *best = NULL;
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (!ev_is(e, "Killing") || !krc_diag_ev_about(r, e, c) ||
            krc_diag_str_has_ci(krc_diag_strip_combined(e->message), " probe") ||
            !krc_diag_ev_in_window(e, lo, hi)) {
            continue;
        }
        if (best == NULL || e->last_timestamp > best->last_timestamp) {
            best = e;
        }
    }
    return best;
}

/* The latest event of `reason` about container c (or the pod without a
 * fieldPath) in [lo, hi]. */
const struct krc_report_event *krc_diag_find_reason(const struct krc_report *r,
                                                    const struct krc_report_container *c,
                                                    const char *reason, int64_t lo, int64_t hi)
{
    const struct krc_report_event *best = NULL;
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (!str_eq(e->reason, reason) || !krc_diag_ev_about(r, e, c) ||
            !krc_diag_ev_in_window(e, lo, hi)) {
            continue;
        }
        if (best == NULL || e->last_timestamp > best->last_timestamp) {
            best = e;
        }
    }
    return best;
}

/* Latest "<Probe> probe failed: ..." Unhealthy event for c up to `hi`. */
const struct krc_report_event *krc_diag_find_unhealthy(const struct krc_report *r,
                                                       const struct krc_report_container *c,
                                                       const char *probe_cap, int64_t lo,
                                                       int64_t hi)
{
    const struct krc_report_event *best = NULL;
    size_t pl = strlen(probe_cap);
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        const char *msg = krc_diag_strip_combined(e->message);
        if (!ev_is(e, "Unhealthy") || !krc_diag_ev_about(r, e, c) ||
            strncmp(msg, probe_cap, pl) != 0 || msg[pl] != ' ') {
            continue;
        }
        if (hi > 0 && e->first_timestamp > hi) {
            continue;
        }
        if (best == NULL ||
            (krc_diag_ev_in_window(e, lo, hi) && !krc_diag_ev_in_window(best, lo, hi)) ||
            (krc_diag_ev_in_window(e, lo, hi) == krc_diag_ev_in_window(best, lo, hi) &&
             e->last_timestamp > best->last_timestamp)) {
            best = e;
        }
    }
    return best;
}

/* Reasons with which the kubelet reports that the runtime could not create
 * or start the process (terminated or waiting). */
int krc_diag_is_start_reason(const char *reason)
{
    static const char *const reasons[] = {"StartError", "ContainerCannotRun", "RunContainerError",
                                          "CreateContainerError", "CreateContainerConfigError"};
    size_t i;

    for (i = 0; reason != NULL && i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        if (strcmp(reason, reasons[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static const struct krc_report_term *term_of(const struct krc_report_container *c, int *from_last)
{
    if (c->last.present) {
        *from_last = 1;
        return &c->last;
    }
    if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present) {
        *from_last = 0;
        return &c->state_term;
    }
    return NULL;
}

int krc_diag_event_of(const struct dctx *x, const struct krc_report_event *e)
{
    return krc_report_event_matches(x->r, e, x->c) ||
           (e->field_path == NULL && krc_report_event_is_pod(x->r, e));
}

void krc_diag_ctx_init(struct dctx *x, const struct krc_report *r,
                       const struct krc_report_container *c)
{
    const struct krc_report_term *t;
    size_t i;

    memset(x, 0, sizeof(*x));
    x->r = r;
    x->c = c;
    x->run = -1;
    t = x->t = term_of(c, &x->from_last);
    if (t != NULL) {
        x->has_exit = !t->exit_code_missing;
        x->exit_code = x->has_exit ? t->exit_code : 0;
        if (t->signal > 0) {
            x->signal = t->signal;
        } else if (x->has_exit && t->exit_code > 128 && t->exit_code <= 128 + 64) {
            x->signal = t->exit_code - 128;
        }
        x->signal_name = krc_signal_name(x->signal);
        if (x->signal_name == NULL) {
            x->signal = 0;
        }
        if (t->started_at > 0 && t->finished_at >= t->started_at) {
            x->run = t->finished_at - t->started_at;
            krc_diagnose_format_duration(x->run, x->dur, sizeof(x->dur));
        }
        /* Without a start time (StartError writes 1970) assume the instance
         * lived at most the grace period. */
        x->hi = t->finished_at > 0 ? t->finished_at + KRC_DIAG_WINDOW_AFTER : 0;
        x->lo = t->started_at > 0
                    ? t->started_at
                    : (t->finished_at > 0 ? t->finished_at - r->grace_period - 10 : 1);
        x->start_error = krc_diag_is_start_reason(t->reason) ||
                         (x->has_exit && t->exit_code == 128 && t->started_at == 0);
    }
    if (c->state == KRC_REPORT_STATE_WAITING && krc_diag_is_start_reason(c->state_reason)) {
        x->start_error = 1;
        if (c->state_message != NULL && c->state_message[0] != '\0') {
            x->runtime = c->state_message;
        }
    }
    if (t != NULL && t->message != NULL && t->message[0] != '\0') {
        if (x->start_error && krc_diag_is_start_reason(t->reason)) {
            x->runtime = t->message;
        } else if (!(x->has_exit && t->exit_code == 128 && t->started_at == 0)) {
            x->msg = (const unsigned char *)t->message;
            x->msg_len = strlen(t->message);
        } else {
            x->runtime = t->message;
        }
    }
    if (r->log != NULL && r->log_len > 0 &&
        (r->log_container == NULL || str_eq(r->log_container, c->name))) {
        x->log = r->log;
        x->log_len = r->log_len;
        if (x->log_len > KRC_DIAG_SCAN_MAX) {
            x->log += x->log_len - KRC_DIAG_SCAN_MAX;
            x->log_len = KRC_DIAG_SCAN_MAX;
        }
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (krc_report_event_is_pod(r, e)) {
            x->pod_events++;
            if (x->hi > 0 && !krc_diag_ev_undated(e) && krc_diag_event_of(x, e) &&
                krc_diag_ev_in_window(e, x->lo, x->hi)) {
                x->window_events++;
            }
        }
    }
}

/* First place (in the order runtime, pod, events, termination message,
 * log) holding one of the patterns; fills x->h, x->where, x->ev. */
int krc_diag_find_text(struct dctx *x, const struct pattern *pats, size_t n, unsigned in)
{
    size_t i;

    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    if ((in & IN_RUNTIME) && x->runtime != NULL &&
        krc_diag_search_patterns((const unsigned char *)x->runtime, strlen(x->runtime), pats, n,
                                 &x->h)) {
        x->where = "runtime";
        return 1;
    }
    if ((in & IN_POD) && x->r->pod_message != NULL &&
        krc_diag_search_patterns((const unsigned char *)x->r->pod_message,
                                 strlen(x->r->pod_message), pats, n, &x->h)) {
        x->where = "pod status";
        return 1;
    }
    for (i = 0; (in & IN_EVENTS) && i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        const char *m = krc_diag_strip_combined(e->message);
        if (!krc_diag_event_of(x, e) || !krc_diag_ev_in_window(e, x->lo - 120, x->hi)) {
            continue;
        }
        if (krc_diag_search_patterns((const unsigned char *)m, strlen(m), pats, n, &x->h)) {
            x->where = "event";
            x->ev = e;
            return 1;
        }
    }
    if ((in & IN_MSG) && x->msg != NULL &&
        krc_diag_search_patterns(x->msg, x->msg_len, pats, n, &x->h)) {
        x->where = "termination message";
        return 1;
    }
    if ((in & IN_LOG) && x->log != NULL &&
        krc_diag_search_patterns(x->log, x->log_len, pats, n, &x->h)) {
        x->where = "log";
        return 1;
    }
    if ((in & IN_LOG_TAIL) && x->log != NULL &&
        krc_diag_tail_search(x->log, x->log_len, pats, n, &x->h)) {
        x->where = "log";
        return 1;
    }
    return 0;
}

/* Does any container status say something about restarts: a state, a
 * previous state or a restart count? (The API server always sends a state;
 * a paste may have lost all three.) */
static int any_state_shown(const struct krc_report *r)
{
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        if (c->has_status &&
            (c->state != KRC_REPORT_STATE_NONE || c->last.present || c->restart_count_known)) {
            return 1;
        }
    }
    return 0;
}

/* No container has a termination: a pasted status may still show one that
 * restarts (waiting in back-off or a start error, a restart count, a
 * terminated state without exitCode) or a pod the kubelet evicted. */
static const struct krc_report_container *pick_partial(const struct krc_report *r)
{
    const struct krc_report_container *best = NULL;
    const struct krc_report_container *done = NULL;
    int best_score = 0;
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        int score = 0;
        if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present &&
            !c->state_term.exit_code_missing && c->state_term.exit_code == 0 &&
            ((c->is_init && !c->is_sidecar) || c->restart_count == 0)) {
            /* Exited 0 and never restarted: only worth explaining when
             * nothing else is, and not a container that simply completed
             * (reason Completed with a restart count of 0, or an init
             * container: a normal end). An exit 0 with reason OOMKilled or
             * Error, or a Completed one whose restart count was not given,
             * is still a termination to look at. */
            if (done == NULL && (!str_eq(c->state_term.reason, "Completed") ||
                                 (!c->is_init && !c->restart_count_known))) {
                done = c;
            }
            continue;
        }
        if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present) {
            score = 4;
        } else if (c->state == KRC_REPORT_STATE_WAITING &&
                   (str_eq(c->state_reason, "CrashLoopBackOff") ||
                    krc_diag_is_start_reason(c->state_reason))) {
            score = 3;
        } else if (c->restart_count > 0) {
            score = 2;
        } else if (str_eq(r->pod_reason, "Evicted") && !c->is_init) {
            score = 1;
        }
        if (score > best_score ||
            (score == best_score && score > 0 && c->restart_count > best->restart_count)) {
            best = c;
            best_score = score;
        }
    }
    if (best == NULL && done != NULL) {
        best = done;
    }
    if (best == NULL && (r->log != NULL || (r->log_flags & KRC_REPORT_LOG_EMPTY) ||
                         r->n_events > 0 || r->pod_reason != NULL || !any_state_shown(r))) {
        /* Nothing in the status says which container restarted, but the
         * files hold evidence of a restart (a previous log, the pod's
         * events, a pod status reason), or no status says anything about
         * restarts (a pasted spec, a cut paste: nothing says it did not
         * restart): the container
         * the log belongs to, else the first app container. */
        for (i = 0; i < r->n_containers && best == NULL; i++) {
            if (r->log_container != NULL && str_eq(r->containers[i].name, r->log_container)) {
                best = &r->containers[i];
            }
        }
        for (i = 0; i < r->n_containers && best == NULL; i++) {
            if (!r->containers[i].is_init) {
                best = &r->containers[i];
            }
        }
        if (best == NULL && r->n_containers > 0) {
            best = &r->containers[0];
        }
    }
    return best;
}

const struct krc_report_container *krc_diagnose_pick(const struct krc_report *r)
{
    const struct krc_report_container *best = NULL;
    const struct krc_report_container *fallback = NULL;
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        if (!c->last.present) {
            /* No restart. A container that terminated without restarting
             * (restartPolicy Never, failed run) is a fallback. */
            if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.present &&
                c->state_term.exit_code != 0 &&
                (fallback == NULL ||
                 c->state_term.finished_at > fallback->state_term.finished_at)) {
                fallback = c;
            }
            continue;
        }
        /* A completed ordinary init container has not restarted now. */
        if (c->is_init && !c->is_sidecar && c->state == KRC_REPORT_STATE_TERMINATED &&
            c->state_term.present && c->state_term.exit_code == 0) {
            continue;
        }
        if (best == NULL || c->last.finished_at > best->last.finished_at ||
            (c->last.finished_at == best->last.finished_at &&
             (c->restart_count > best->restart_count ||
              (c->restart_count == best->restart_count && best->is_init && !c->is_init)))) {
            best = c;
        }
    }
    if (best != NULL || fallback != NULL) {
        return best != NULL ? best : fallback;
    }
    return pick_partial(r);
}
