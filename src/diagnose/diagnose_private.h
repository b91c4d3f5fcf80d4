/* Private to src/diagnose: what the analyser's files share. Nothing outside
 * src/diagnose includes it; the public interface is
 * include/krc/diagnose/diagnose.h, the data include/krc/model/diagnosis.h.
 *
 * How a diagnosis is made (diagnose.c, krc_diagnose): the facts of the
 * chosen container are computed once into a struct dctx (facts.c), the
 * rule table (rules.c) is run in precedence order, and the first rule whose
 * match function holds names the cause; its say function writes the
 * summary and its evidence (rules_*.c), and the common parts (the
 * termination, the node, the back-off, what was not seen, the kubectl
 * commands) are added around it (evidence.c). Rules read text through the
 * log readers of log_patterns.c. A say function may replace the rule's next
 * step with one that follows the evidence (advice.c: x->next, x->cmds). */
#ifndef KRC_DIAGNOSE_PRIVATE_H
#define KRC_DIAGNOSE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"
#include "krc/util/buf.h"

/* ---- text -------------------------------------------------------------- */

static inline int str_eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static inline int starts_with(const unsigned char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && memcmp(p, prefix, n) == 0;
}

static inline int is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

struct span {
    const unsigned char *p;
    size_t len;
};

/* A log line found by a search: the line and the match offset inside it. */
struct hit {
    int found;
    struct span line;
    size_t at; /* offset of the match inside line */
};

/* One text pattern: `a` (lowercase) must occur; when `b` is set it must
 * occur on the same line too. */
struct pattern {
    const char *a;
    const char *b;
};

#define TAIL_MAX_LINES 600
#define TAIL_MAX_BYTES (1024u * 1024u)

/* The last lines of a text, oldest first: up to `want` counting lines
 * (non-blank, not frames) plus the frames between them. */
struct tail {
    struct span lines[TAIL_MAX_LINES];
    size_t n;
};

/* log_patterns.c: how the rules read a log or a message. */
size_t krc_diag_find_ci(const unsigned char *h, size_t hl, const char *needle);
int krc_diag_has_ci(const unsigned char *h, size_t hl, const char *needle);
int krc_diag_str_has_ci(const char *s, const char *needle);
int krc_diag_search_patterns(const unsigned char *buf, size_t len, const struct pattern *pats,
                             size_t n, struct hit *h);
int krc_diag_tail_search(const unsigned char *p, size_t n, const struct pattern *pats, size_t np,
                         struct hit *h);
struct span krc_diag_strip_ts(struct span l);
int krc_diag_is_error_header(struct span l);
int krc_diag_is_error_level(struct span l);
void krc_diag_collect_tail(const unsigned char *buf, size_t len, size_t want, struct tail *t);
int krc_diag_is_last_line(const unsigned char *buf, size_t len, struct span l);
int krc_diag_find_xid(const unsigned char *buf, size_t len, struct hit *h);
int krc_diag_find_dependency(const unsigned char *buf, size_t len, struct hit *h);
int krc_diag_find_error_line(const unsigned char *buf, size_t len, struct hit *h);

/* ---- facts ------------------------------------------------------------- */

#define KRC_DIAG_NEXT_MAX 640

/* Everything the rules read, computed once per diagnosis. */
struct dctx {
    const struct krc_report *r;
    const struct krc_report_container *c;
    const struct krc_report_term *t; /* NULL: no termination was given */
    int from_last;
    int has_exit; /* t with an exitCode */
    int exit_code;
    int signal;
    const char *signal_name;
    int64_t run;  /* seconds the instance ran, -1 unknown */
    char dur[32]; /* run as "2m42s", "" when unknown */
    int64_t lo;   /* W = [lo, hi]; hi == 0: no termination time, no window */
    int64_t hi;
    const unsigned char *log; /* previous log of c, its last KRC_DIAG_SCAN_MAX bytes */
    size_t log_len;
    const unsigned char *msg; /* termination message written by the application */
    size_t msg_len;
    const char *runtime;  /* runtime error: start-error message or waiting message */
    int start_error;      /* a reason says the runtime could not start the process */
    size_t pod_events;    /* events about this pod */
    size_t window_events; /* events about this container or the pod itself, in W */
    /* what the matching rule found */
    enum krc_confidence conf;
    struct hit h;
    const char *where; /* "log", "termination message", "runtime", "pod status" */
    const struct krc_report_event *ev;
    const struct krc_report_event *ev2;
    const struct krc_report_probe *probe;
    const char *detail;
    const struct krc_report_restart_rule *rrule; /* restart_rule: the rule that holds */
    size_t rrule_i;                              /* and its index in restartPolicyRules */
    /* restarted_with_others: the container whose exit restarted all of them,
     * its termination and the AllContainersRestarting condition (may be NULL);
     * resize_restart: the PodResizeInProgress condition and the resize
     * policy of the resource seen resized (may be NULL); sandbox_changed: the
     * PodReadyToStartContainers condition (may be NULL) */
    const struct krc_report_container *other;
    const struct krc_report_term *other_t;
    const struct krc_report_pod_condition *cond;
    const struct krc_report_resize_policy *resized;
    int runc_log; /* the hit is an exec error in the log: 1 runc's, 2 a shell's */
    /* set by a say function when the evidence calls for a more specific next
     * step than the rule's (advice.c), and the commands it adds */
    char next[KRC_DIAG_NEXT_MAX];
    unsigned cmds;
};

/* Where krc_diag_find_text looks. */
enum {
    IN_LOG = 1u << 0,      /* anywhere in the (bounded) previous log */
    IN_LOG_TAIL = 1u << 1, /* the last KRC_DIAG_TAIL_LINES lines of the log */
    IN_MSG = 1u << 2,      /* termination message */
    IN_RUNTIME = 1u << 3,  /* runtime error message (start error, waiting) */
    IN_EVENTS = 1u << 4,   /* messages of this container's / pod's events (W when known) */
    IN_POD = 1u << 5,      /* status.message of the pod */
};

#define NPAT(a) (sizeof(a) / sizeof((a)[0]))

/* A non-zero exit, or no exit code at all (partial input): text may decide. */
static inline int failed_or_unknown(const struct dctx *x)
{
    return !x->has_exit || x->exit_code != 0;
}

/* facts.c: the facts of one container, and the events that concern it. */
void krc_diag_ctx_init(struct dctx *x, const struct krc_report *r,
                       const struct krc_report_container *c);
int krc_diag_find_text(struct dctx *x, const struct pattern *pats, size_t n, unsigned in);
int krc_diag_is_start_reason(const char *reason);
const char *krc_diag_strip_combined(const char *msg);
int krc_diag_ev_undated(const struct krc_report_event *e);
int64_t krc_diag_ev_in_window(const struct krc_report_event *e, int64_t lo, int64_t hi);
int krc_diag_ev_about(const struct krc_report *r, const struct krc_report_event *e,
                      const struct krc_report_container *c);
int krc_diag_event_of(const struct dctx *x, const struct krc_report_event *e);
const struct krc_report_event *krc_diag_find_probe_kill(const struct krc_report *r,
                                                        const struct krc_report_container *c,
                                                        const char *probe, int64_t lo, int64_t hi);
const struct krc_report_event *krc_diag_find_unhealthy(const struct krc_report *r,
                                                       const struct krc_report_container *c,
                                                       const char *probe_cap, int64_t lo,
                                                       int64_t hi);
const struct krc_report_event *krc_diag_find_stop(const struct krc_report *r,
                                                  const struct krc_report_container *c, int64_t lo,
                                                  int64_t hi);
const struct krc_report_event *krc_diag_find_reason(const struct krc_report *r,
                                                    const struct krc_report_container *c,
                                                    const char *reason, int64_t lo, int64_t hi);

/* ---- evidence wording ---------------------------------------------------- */

struct builder {
    struct krc_diagnosis *d;
    int oom; /* allocation failure seen */
};

/* kubectl commands a rule suggests (bit set). */
enum {
    CMD_LOGS_PREV = 1u << 0, /* kubectl logs -n NS POD -c C --previous */
    CMD_DESCRIBE = 1u << 1,  /* kubectl describe pod -n NS POD */
    CMD_EVENTS = 1u << 2,    /* kubectl get events -n NS --field-selector involvedObject.name=POD */
    CMD_NODE = 1u << 3,      /* kubectl describe node N */
    CMD_TOP = 1u << 4,       /* kubectl top pod -n NS POD --containers */
    CMD_ARCH = 1u << 5,      /* kubectl get node N -L kubernetes.io/arch */
};

struct rule {
    const char *name; /* rule id: the cause, or cause + how it is recognised */
    enum krc_cause cause;
    int (*match)(struct dctx *x); /* 1: holds (sets x->conf and what it found) */
    void (*say)(struct dctx *x, struct builder *b, struct krc_buf *s); /* summary, evidence */
    const char *next_step;
    unsigned cmds;
};

/* evidence.c: the lines of a diagnosis and the words around its quotes. */
void krc_diag_add_evidence(struct builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void krc_diag_add_unchecked(struct builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void krc_diag_evidence_event(struct builder *b, const struct krc_report_event *e);
void krc_diag_evidence_hit(struct builder *b, const struct dctx *x);
void krc_diag_hit_short(const struct dctx *x, char *out, size_t outsz);
void krc_diag_quote_clean(struct krc_buf *s, const char *lead, const char *line, const char *tail);
void krc_diag_quote(struct krc_buf *s, const char *lead, const char *text, size_t max,
                    const char *tail);
void krc_diag_summary_set(struct builder *b, struct krc_buf *s);
void krc_diag_say_exit(const struct dctx *x, struct krc_buf *s);
void krc_diag_say_exited(const struct dctx *x, struct krc_buf *s);
void krc_diag_say_after(const struct dctx *x, struct krc_buf *s);
void krc_diag_add_common_evidence(struct builder *b, const struct dctx *x);
void krc_diag_finish(struct builder *b, struct dctx *x, struct krc_buf *s);
void krc_diag_add_missing(struct builder *b, const struct dctx *x, const struct rule *rule);
void krc_diag_add_commands(struct builder *b, const struct dctx *x, unsigned cmds);
int krc_diag_set_str(struct builder *b, char **dst, const char *src);

/* advice.c: next steps that follow the evidence (a memory limit or none, the
 * JVM's heap against it, a missing setting the log names, a NotReady node). */
int64_t krc_diag_quantity_bytes(const char *q);
void krc_diag_advise_oom_killed(struct dctx *x, struct builder *b);
void krc_diag_advise_app_oom(struct dctx *x, struct builder *b);
int krc_diag_advise_missing(struct dctx *x, struct builder *b);
const struct krc_report_node_condition *krc_diag_node_not_ready(const struct dctx *x,
                                                                const struct krc_report_event **ev);

/* ---- the rules ------------------------------------------------------------ */

/* rules.c: the table, in precedence order. */
extern const struct rule krc_diag_rules[];
extern const size_t krc_diag_n_rules;

/* Each rule's match (the conditions) and say (the summary and evidence),
 * in the order of the table. */
/* rules_kubelet.c: what the kubelet or the kernel did (rule 1: rules_kill.c) */
int krc_diag_match_oom_killed(struct dctx *x);
void krc_diag_say_oom_killed(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_evicted(struct dctx *x);
void krc_diag_say_evicted(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_node_not_ready(struct dctx *x);
void krc_diag_say_node_not_ready(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_liveness_event(struct dctx *x);
void krc_diag_say_liveness_event(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_startup_event(struct dctx *x);
void krc_diag_say_startup_event(struct dctx *x, struct builder *b, struct krc_buf *s);
/* rules_kill.c: the kill verdict (the OOM kill's say function above is
 * there too): the memory limits that applied, the kubelet's stop and its
 * grace period, a stale OOMKilled flag on a stop, a configured probe as a
 * hypothesis. */
struct krc_diag_memlim {
    const char *limit;   /* the container's memory limit in effect, NULL: none shown */
    int from_status;     /* limit is status.containerStatuses[].resources (actuated) */
    const char *spec;    /* the spec's limit when it differs from limit, else NULL */
    const char *request; /* its memory request (actuated, else the spec's) */
    const char *pod;     /* the pod-level limit (spec.resources, KEP-2837), NULL: none */
    int whole;           /* an API object with the spec: an absent limit is no limit */
};
void krc_diag_mem_limits(const struct dctx *x, struct krc_diag_memlim *m);
/* reason OOMKilled on an exit by the stop signal (143, 128+N of the reported
 * one): a stale flag, not the container's OOM kill (kubernetes#140716) */
int krc_diag_oom_flag_on_stop(const struct dctx *x);
/* "; the kubelet had stopped it (event Killing: ...)" and the grace period,
 * when a Killing event that is not a probe kill is seen: 1, else 0 */
int krc_diag_say_kubelet_stop(struct dctx *x, struct builder *b, struct krc_buf *s);
/* a probe kill (x->ev) that ended in SIGKILL after the grace period */
void krc_diag_say_probe_grace(struct dctx *x, struct builder *b, struct krc_buf *s,
                              const struct krc_report_probe *probe);
/* What every diagnosis adds (krc_diag_finish): a stale OOM flag, the probe
 * hypothesis for killed / terminated / completed, the node's OOM events. */
void krc_diag_kill_evidence(struct builder *b, struct dctx *x);
/* rules_start.c: the process could not be started */
int krc_diag_match_exec_format(struct dctx *x);
void krc_diag_say_exec_format(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_not_found(struct dctx *x);
void krc_diag_say_not_found(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_permission(struct dctx *x);
void krc_diag_say_permission(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_disk_full(struct dctx *x);
void krc_diag_say_disk_full(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_start_failed(struct dctx *x);
void krc_diag_say_start_failed(struct dctx *x, struct builder *b, struct krc_buf *s);
/* rules_intentional.c: restarts and stops the pod declares or reports as intended */
int krc_diag_match_restart_rule(struct dctx *x);
void krc_diag_say_restart_rule(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_stop_signal(struct dctx *x);
void krc_diag_say_stop_signal(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_restarted_with_others(struct dctx *x);
void krc_diag_say_restarted_with_others(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_resize_restart(struct dctx *x);
void krc_diag_say_resize_restart(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_sidecar_deletion(struct dctx *x);
void krc_diag_say_sidecar_deletion(struct dctx *x, struct builder *b, struct krc_buf *s);
/* The evidence of a container whose own exit restarted all containers (its
 * rule RestartAllContainers holds its exit code; whatever its cause). */
void krc_diag_evidence_restart_all(struct builder *b, const struct dctx *x);
/* Helpers the rules of other containers' terminations share: a container's
 * termination T (lastState, else a terminated state; NULL: none), a pod
 * condition of `type` (NULL: none) and "2026-11-20T09:12:30Z" (or "unknown"). */
const struct krc_report_term *krc_diag_term_of(const struct krc_report_container *c);
const struct krc_report_pod_condition *krc_diag_pod_condition(const struct krc_report *r,
                                                              const char *type);
void krc_diag_format_time(int64_t t, char *out, size_t size);
/* rules_sandbox.c: the pod's sandbox was re-created (node-level) */
int krc_diag_match_sandbox_changed(struct dctx *x);
void krc_diag_say_sandbox_changed(struct dctx *x, struct builder *b, struct krc_buf *s);
/* The evidence line of each DisruptionTarget=True pod condition (any cause). */
void krc_diag_evidence_disruption(struct builder *b, const struct krc_report *r);
/* rules_device.c: the kubelet reports a device of the container Unhealthy;
 * krc_diag_device_evidence: its devices not Healthy, whatever the cause */
int krc_diag_match_device_unhealthy(struct dctx *x);
/* An eviction by a device taint (rules_device.c): the DisruptionTarget
 * condition DeletionByDeviceTaintManager (else NULL, *ev an event of the pod
 * whose reason begins with DeviceTaint, or NULL). Rule 2 (evicted) names it. */
const struct krc_report_pod_condition *krc_diag_device_taint(const struct dctx *x,
                                                             const struct krc_report_event **ev);
void krc_diag_say_device_taint(struct dctx *x, struct builder *b, struct krc_buf *s);
void krc_diag_say_device_unhealthy(struct dctx *x, struct builder *b, struct krc_buf *s);
void krc_diag_device_evidence(struct builder *b, const struct dctx *x);
/* rules_app.c: what the application's log and exit say */
int krc_diag_match_gpu_oom(struct dctx *x);
void krc_diag_say_gpu_oom(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_app_oom(struct dctx *x);
void krc_diag_say_app_oom(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_segfault(struct dctx *x);
void krc_diag_say_segfault(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_sigill(struct dctx *x);
void krc_diag_say_sigill(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_abort(struct dctx *x);
void krc_diag_say_abort(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_gpu_error(struct dctx *x);
void krc_diag_say_gpu_error(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_dependency(struct dctx *x);
void krc_diag_say_dependency(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_app_error(struct dctx *x);
void krc_diag_say_app_error(struct dctx *x, struct builder *b, struct krc_buf *s);
/* rules_kubelet.c: inferred from the node, the spec and the exit code */
int krc_diag_match_evicted_pressure(struct dctx *x);
void krc_diag_say_evicted_pressure(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_startup_spec(struct dctx *x);
void krc_diag_say_startup_spec(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_liveness_spec(struct dctx *x);
void krc_diag_say_liveness_spec(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_terminated_exit0(struct dctx *x);
void krc_diag_say_terminated_exit0(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_completed(struct dctx *x);
void krc_diag_say_completed(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_killed(struct dctx *x);
void krc_diag_say_killed(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_terminated(struct dctx *x);
void krc_diag_say_terminated(struct dctx *x, struct builder *b, struct krc_buf *s);
int krc_diag_match_unknown(struct dctx *x);
void krc_diag_say_unknown(struct dctx *x, struct builder *b, struct krc_buf *s);

#endif
