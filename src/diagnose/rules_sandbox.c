/* A re-created pod sandbox (issue 26; docs/causes.md rule 10a): when the
 * kubelet finds the pod's sandbox gone or changed (a node reboot, a
 * container runtime restart, a CNI failure), it kills what is left of the
 * pod's containers, creates a new sandbox and starts them all again
 * (event SandboxChanged, "Pod sandbox changed, it will be killed and
 * re-created."; the pod condition PodReadyToStartContainers, KEP-3085, goes
 * False while there is no sandbox and True again). N containers restart, for
 * one node-level cause: sandbox_changed, not an intended restart.
 *
 * It holds when the chosen container stopped the way a lost sandbox stops
 * it (killed, stopped, or the runtime's "Unknown"; not an exit code of its
 * own, which a crash at the same time would have), every other running
 * container of the pod stopped within SANDBOX_TOGETHER seconds of it, and
 * the pod shows the re-creation: PodReadyToStartContainers changed at or
 * after the stop (and after the instance started, in a pod that existed
 * then), or a SandboxChanged event of the pod of the time. It ranks
 * below the kills with their own proof (OOMKilled, an eviction, a probe's
 * kill, a NotReady node: a node that went NotReady names the cause better)
 * and the start failures, above everything that reads the exit code or the
 * log: those would call each container's kill a crash of its own. */
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"

/* Seconds within which the containers' terminations count as one stop. */
#define SANDBOX_TOGETHER 60
/* Seconds after the stop within which a SandboxChanged event counts: after a
 * node reboot the kubelet reports it when it is back. */
#define SANDBOX_EVENT_AFTER 900

static int64_t gap(int64_t a, int64_t b)
{
    return a > b ? a - b : b - a;
}

/* Does the container's exit look like a lost sandbox's stop? */
static int sandbox_exit(const struct dctx *x)
{
    int n = 0;

    if (str_eq(x->t->reason, "Unknown") || str_eq(x->t->reason, "ContainerStatusUnknown")) {
        return 1;
    }
    if (!x->has_exit) {
        return 1;
    }
    n = krc_signal_number(x->c->stop_signal);
    return x->exit_code == 0 || x->exit_code == 137 || x->exit_code == 143 || x->exit_code == 255 ||
           (n > 0 && x->exit_code == 128 + n);
}

/* Is e the kubelet's SandboxChanged event (by its reason, or its wording
 * when a pasted event lost the reason)? */
static int is_sandbox_event(const struct krc_report_event *e)
{
    if (e->reason != NULL && e->reason[0] != '\0') {
        return strcmp(e->reason, "SandboxChanged") == 0;
    }
    return krc_diag_str_has_ci(e->message, "sandbox changed, it will be killed and re-created");
}

static const struct krc_report_event *sandbox_event(const struct dctx *x)
{
    const struct krc_report *r = x->r;
    const struct krc_report_event *best = NULL;
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (!is_sandbox_event(e) || !krc_report_event_is_pod(r, e) ||
            !krc_diag_ev_in_window(e, x->lo, x->hi + SANDBOX_EVENT_AFTER)) {
            continue;
        }
        if (best == NULL || e->last_timestamp > best->last_timestamp) {
            best = e;
        }
    }
    return best;
}

/* Did every other container that runs with the pod (regular containers and
 * sidecars) stop with this one? A container without any termination did
 * not restart: no. Unknown times do not count against it. *ret_n: the
 * containers that stopped together, this one included. */
static int all_together(const struct dctx *x, size_t *ret_n)
{
    const struct krc_report *r = x->r;
    int64_t tc = x->t->finished_at;
    size_t i;

    *ret_n = 1;
    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *o = &r->containers[i];
        const struct krc_report_term *ot;
        if (o == x->c || (o->is_init && !o->is_sidecar) || !o->has_status) {
            continue;
        }
        if ((ot = krc_diag_term_of(o)) == NULL) {
            return 0;
        }
        if (tc > 0 && ot->finished_at > 0 && gap(ot->finished_at, tc) > SANDBOX_TOGETHER) {
            return 0;
        }
        (*ret_n)++;
    }
    return 1;
}

/* Did PodReadyToStartContainers change after this instance ran in the pod's
 * previous sandbox? Its transition is at or after the instance stopped and
 * after it started, and the instance started while the pod existed (a
 * termination written by hand with times before the pod's creation proves
 * nothing about its sandbox). Without a start or stop time: cannot tell. */
static int cond_changed_after(const struct dctx *x, const struct krc_report_pod_condition *cond)
{
    const struct krc_report_term *t = x->t;
    int64_t lt = cond->last_transition;

    if (lt <= 0 || t->finished_at <= 0 || t->started_at <= 0) {
        return 0;
    }
    if (x->r->created_at > 0 && t->started_at < x->r->created_at) {
        return 0;
    }
    return lt >= t->finished_at - 1 && lt > t->started_at;
}

int krc_diag_match_sandbox_changed(struct dctx *x)
{
    const struct krc_report_pod_condition *cond;
    const struct krc_report_event *ev;
    size_t n = 0;

    x->cond = NULL;
    x->ev = NULL;
    if (x->t == NULL || !sandbox_exit(x) || !all_together(x, &n)) {
        return 0;
    }
    cond = krc_diag_pod_condition(x->r, "PodReadyToStartContainers");
    if (cond != NULL && !cond_changed_after(x, cond)) {
        cond = NULL; /* unchanged since before the stop: says nothing */
    }
    ev = sandbox_event(x);
    if (cond == NULL && ev == NULL) {
        return 0;
    }
    x->cond = cond;
    x->ev = ev;
    x->conf = cond != NULL && ev != NULL ? KRC_CONFIDENCE_HIGH : KRC_CONFIDENCE_MEDIUM;
    return 1;
}

/* A Rebooted event of the pod's node of the time: names the node-level cause. */
static const struct krc_report_event *node_rebooted(const struct dctx *x)
{
    const struct krc_report *r = x->r;
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (str_eq(e->reason, "Rebooted") && str_eq(e->object_kind, "Node") &&
            str_eq(e->object_name, r->node_name) &&
            krc_diag_ev_in_window(e, x->lo - SANDBOX_EVENT_AFTER, x->hi + SANDBOX_EVENT_AFTER)) {
            return e;
        }
    }
    return NULL;
}

void krc_diag_say_sandbox_changed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report *r = x->r;
    const struct krc_report_event *reboot = node_rebooted(x);
    size_t n = 0;
    size_t i;
    char when[40] = "";

    all_together(x, &n);
    krc_buf_printf(s, "The pod's sandbox was re-created: container %s ", x->c->name);
    krc_diag_say_exited(x, s);
    if (n > 1) {
        krc_buf_printf(s, " together with the pod's %zu other container%s", n - 1,
                       n == 2 ? "" : "s");
    }
    krc_buf_printf(s, ", and ");
    if (x->cond != NULL) {
        krc_diag_format_time(x->cond->last_transition, when, sizeof(when));
        krc_buf_printf(s, "PodReadyToStartContainers changed to %s at %s%s",
                       x->cond->status ? x->cond->status : "(none)", when,
                       x->ev != NULL ? " (event SandboxChanged)" : "");
    } else {
        krc_buf_printf(s, "the kubelet reported SandboxChanged");
    }
    krc_buf_printf(s, ": a node-level cause (%s), not the application",
                   reboot != NULL ? "the node rebooted"
                                  : "a node reboot, a container runtime restart or a "
                                    "CNI/network setup failure");
    if (x->cond != NULL) {
        krc_diag_add_evidence(b,
                              "pod condition PodReadyToStartContainers=%s since %s, after the "
                              "container stopped (KEP-3085: False while the pod has no "
                              "sandbox, True once a new one is ready)%s%s",
                              x->cond->status ? x->cond->status : "(none)", when,
                              x->cond->message ? ": " : "",
                              x->cond->message ? x->cond->message : "");
    }
    if (x->ev != NULL) {
        krc_diag_evidence_event(b, x->ev);
    }
    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *o = &r->containers[i];
        const struct krc_report_term *ot = krc_diag_term_of(o);
        char fin[40];
        if (o == x->c || (o->is_init && !o->is_sidecar) || ot == NULL) {
            continue;
        }
        krc_diag_format_time(ot->finished_at, fin, sizeof(fin));
        krc_diag_add_evidence(b, "container %s stopped too: exit %d%s%s, finished %s", o->name,
                              ot->exit_code, ot->reason ? ", reason " : "",
                              ot->reason ? ot->reason : "", fin);
    }
    if (reboot != NULL) {
        krc_diag_evidence_event(b, reboot);
    } else {
        krc_diag_add_unchecked(b, "which node-level cause (a reboot, a runtime restart, a CNI "
                                  "failure) is not shown: no Rebooted event of the node was seen; "
                                  "the node's events and the kubelet's and runtime's logs say");
    }
}
