/* The rules of a process that could not be started (src/diagnose/rules.c
 * has the table): a binary for another CPU, a command not found, permission
 * denied, a full disk, and the runtime's own start errors. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/mem.h"

static const struct pattern exec_format_patterns[] = {
    {"exec format error", NULL},
};

static const struct pattern disk_full_patterns[] = {
    {"no space left on device", NULL},
    {"enospc", NULL},
};

/* The runtime (runc, containerd, CRI-O) failing to create or start the
 * container, as written in a start error or a Failed event. */
static const struct pattern start_patterns[] = {
    {"oci runtime create failed", NULL},
    {"oci runtime start failed", NULL},
    /* the kubelet's CreateContainerConfigError texts ("Error: secret \"x\" not found",
     * "Error: couldn't find key K in Secret ns/x", runAsNonRoot), as Failed events */
    {"error: secret \"", "not found"},
    {"error: configmap \"", "not found"},
    {"couldn't find key", NULL},
    {"container has runasnonroot and image", NULL},
    {"oci runtime error", NULL},
    {"starting container process caused", NULL},
    {"container init caused", NULL},
    {"failed to create containerd task", NULL},
    {"failed to create shim task", NULL},
    {"failed to start containerd task", NULL},
    {"runc create failed", NULL},
    {"unable to start container process", NULL},
    {"error during container init", NULL},
    {"error mounting", NULL},
    {"failed to create container", NULL},
    {"failed to start container", NULL},
    {"cgroup", "failed"},
    {"cgroup", "error"},
    {"mount", "failed"},
};

static int msg_not_found(const char *m)
{
    if (m == NULL) {
        return 0;
    }
    if (krc_diag_str_has_ci(m, "executable file not found") ||
        krc_diag_str_has_ci(m, "command not found")) {
        return 1;
    }
    /* "exec: \"/app/run\": stat /app/run: no such file or directory", but not
     * a missing mount source or working directory. */
    return krc_diag_str_has_ci(m, "no such file or directory") &&
           !krc_diag_str_has_ci(m, "mount") && !krc_diag_str_has_ci(m, "chdir") &&
           !krc_diag_str_has_ci(m, "cwd");
}

static int msg_permission(const char *m)
{
    return m != NULL && krc_diag_str_has_ci(m, "permission denied") &&
           !krc_diag_str_has_ci(m, "error mounting");
}

/* 6. exec_format_error */
int krc_diag_match_exec_format(struct dctx *x)
{
    x->conf = KRC_CONFIDENCE_HIGH;
    /* the log and the termination message decide only a failure */
    return krc_diag_find_text(x, exec_format_patterns, NPAT(exec_format_patterns),
                              IN_RUNTIME | IN_POD | IN_EVENTS |
                                  (failed_or_unknown(x) ? (unsigned)(IN_MSG | IN_LOG) : 0u));
}

void krc_diag_say_exec_format(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    char line[200];

    krc_diag_hit_short(x, line, sizeof(line));
    krc_buf_printf(s,
                   "Container %s could not execute its binary: \"exec format error\" (built for "
                   "another CPU architecture or not an executable)",
                   x->c->name);
    krc_diag_quote_clean(s, ": ", line, "");
    krc_diag_evidence_hit(b, x);
}

/* 7-8. command_not_found, permission_denied */
static const char *start_text(struct dctx *x)
{
    size_t i;
    const struct krc_report_event *best = NULL;

    if (x->runtime != NULL) {
        return x->runtime;
    }
    /* A Failed event carries the start error; with a termination that is
     * not a start error, its Failed events belong to other attempts. */
    if (!x->start_error && x->has_exit) {
        return NULL;
    }
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if (str_eq(e->reason, "Failed") && krc_diag_ev_about(x->r, e, x->c) &&
            !krc_diag_str_has_ci(e->message, "pull") &&
            !krc_diag_str_has_ci(e->message, "ErrImage") &&
            (x->hi == 0 || krc_diag_ev_in_window(e, x->t->finished_at - 120, x->hi)) &&
            (best == NULL || e->last_timestamp > best->last_timestamp)) {
            best = e;
        }
    }
    return best != NULL ? krc_diag_strip_combined(best->message) : NULL;
}

static int m_exec_log(struct dctx *x, const char *word)
{
    struct pattern p = {word, NULL};

    return x->log != NULL && krc_diag_tail_search(x->log, x->log_len, &p, 1, &x->h) &&
           (x->where = "log") != NULL;
}

/* runc's exec error as it reaches the container's log (runc >= 1.1:
 * "exec /entrypoint.sh: no such file or directory"; older:
 * "standard_init_linux.go:228: exec user process caused: no such file or
 * directory"). */
static int find_runc_exec_error(struct dctx *x, const char *what)
{
    struct tail *t;
    size_t i;
    int found = 0;

    x->runc_log = 0;
    if (x->log == NULL || !failed_or_unknown(x)) {
        return 0;
    }
    t = krc_malloc(sizeof(*t));
    if (t == NULL) {
        return 0;
    }
    krc_diag_collect_tail(x->log, x->log_len, KRC_DIAG_TAIL_LINES, t);
    for (i = t->n; i > 0 && !found; i--) {
        struct span l = krc_diag_strip_ts(t->lines[i - 1]);
        size_t at = krc_diag_find_ci(l.p, l.len, what);
        if (at != SIZE_MAX && (starts_with(l.p, l.len, "exec ") ||
                               krc_diag_has_ci(l.p, l.len, "exec user process caused"))) {
            memset(&x->h, 0, sizeof(x->h));
            x->h.found = 1;
            x->h.line = t->lines[i - 1];
            x->h.at = (size_t)(l.p - t->lines[i - 1].p) + at;
            x->where = "log";
            x->runc_log = found = 1;
        }
    }
    krc_free(t);
    return found;
}

/* A shell that could not run a command, among the last lines of the log
 * ("/bin/sh: 1: celery: not found", "bash: /app/run.sh: Permission
 * denied", "/usr/bin/env: 'python': No such file or directory"). */
static int find_shell_error(struct dctx *x, const char *const *what, size_t n_what)
{
    static const char *const shells[] = {
        "/bin/sh: ", "sh: ", "/bin/bash: ", "bash: ", "/bin/ash: ", "/usr/bin/env: ", "env: "};
    struct tail *t;
    size_t i;
    size_t j;
    size_t k;
    int found = 0;

    if (x->log == NULL || (t = krc_malloc(sizeof(*t))) == NULL) {
        return 0;
    }
    krc_diag_collect_tail(x->log, x->log_len, 3, t);
    for (i = t->n; i > 0 && !found; i--) {
        struct span l = krc_diag_strip_ts(t->lines[i - 1]);
        for (j = 0; j < sizeof(shells) / sizeof(shells[0]) && !found; j++) {
            if (!starts_with(l.p, l.len, shells[j])) {
                continue;
            }
            for (k = 0; k < n_what && !found; k++) {
                size_t at = krc_diag_find_ci(l.p, l.len, what[k]);
                if (at != SIZE_MAX) {
                    memset(&x->h, 0, sizeof(x->h));
                    x->h.found = 1;
                    x->h.line = t->lines[i - 1];
                    x->h.at = (size_t)(l.p - t->lines[i - 1].p);
                    x->where = "log";
                    found = 1;
                }
            }
        }
    }
    krc_free(t);
    return found;
}

int krc_diag_match_not_found(struct dctx *x)
{
    static const char *const shell_not_found[] = {": not found", "command not found",
                                                  "no such file or directory"};

    const char *st = start_text(x);

    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    x->detail = NULL;
    x->runc_log = 0;
    if (st != NULL && msg_not_found(st)) {
        x->conf = KRC_CONFIDENCE_HIGH;
        x->detail = st;
        return 1;
    }
    if (find_runc_exec_error(x, "no such file or directory")) {
        x->conf = KRC_CONFIDENCE_HIGH;
        return 1;
    }
    if (!x->has_exit && find_shell_error(x, shell_not_found, 3)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->runc_log = 2;
        return 1;
    }
    if (x->has_exit && x->exit_code == 127) {
        x->conf = m_exec_log(x, "not found") ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    return 0;
}

void krc_diag_say_not_found(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->detail != NULL) {
        krc_buf_printf(s, "Container %s could not start: the command was not found", x->c->name);
        krc_diag_add_evidence(b, "runtime: %s", x->detail);
    } else if (x->runc_log == 2) {
        /* a shell's "not found": a command the shell (the entrypoint or a
         * script it runs) was asked to run */
        char line[200];
        krc_diag_hit_short(x, line, sizeof(line));
        krc_buf_printf(s, "Container %s stopped after its shell could not find a command",
                       x->c->name);
        krc_diag_quote_clean(s, " (the shell's message in the log: ", line, ")");
        krc_diag_evidence_hit(b, x);
    } else if (x->runc_log) {
        char line[200];
        krc_diag_hit_short(x, line, sizeof(line));
        krc_buf_printf(s, "Container %s could not execute its entrypoint, a file was not found",
                       x->c->name);
        krc_diag_quote_clean(s, " (the runtime's message in the log: ", line, ")");
        krc_diag_evidence_hit(b, x);
    } else {
        krc_buf_printf(s, "Container %s exited 127, the shell's code for \"command not found\"",
                       x->c->name);
        krc_diag_evidence_hit(b, x);
    }
}

int krc_diag_match_permission(struct dctx *x)
{
    static const char *const shell_denied[] = {": permission denied"};

    const char *st = start_text(x);

    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    x->detail = NULL;
    x->runc_log = 0;
    if (st != NULL && msg_permission(st)) {
        x->conf = KRC_CONFIDENCE_HIGH;
        x->detail = st;
        return 1;
    }
    if (find_runc_exec_error(x, "permission denied")) {
        x->conf = KRC_CONFIDENCE_HIGH;
        return 1;
    }
    if (!x->has_exit && find_shell_error(x, shell_denied, 1)) {
        x->conf = KRC_CONFIDENCE_MEDIUM;
        x->runc_log = 2;
        return 1;
    }
    if (x->has_exit && x->exit_code == 126) {
        x->conf = m_exec_log(x, "permission denied") ? KRC_CONFIDENCE_MEDIUM : KRC_CONFIDENCE_LOW;
        return 1;
    }
    return 0;
}

void krc_diag_say_permission(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    if (x->detail != NULL) {
        krc_buf_printf(s, "Container %s could not start: permission denied on the entrypoint",
                       x->c->name);
        krc_diag_add_evidence(b, "runtime: %s", x->detail);
    } else if (x->runc_log == 2) {
        /* a shell's "X: Permission denied" is the same for a file it could
         * not execute and one it could not write (a redirection) */
        char line[200];
        krc_diag_hit_short(x, line, sizeof(line));
        krc_buf_printf(s,
                       "Container %s stopped after its shell was denied access to a file it "
                       "tried to execute or write",
                       x->c->name);
        krc_diag_quote_clean(s, " (the shell's message in the log: ", line, ")");
        krc_diag_evidence_hit(b, x);
    } else if (x->runc_log) {
        char line[200];
        krc_diag_hit_short(x, line, sizeof(line));
        krc_buf_printf(s, "Container %s could not execute its entrypoint: permission denied",
                       x->c->name);
        krc_diag_quote_clean(s, " (the runtime's message in the log: ", line, ")");
        krc_diag_evidence_hit(b, x);
    } else {
        krc_buf_printf(s,
                       "Container %s exited 126, the shell's code for a command that could not "
                       "be executed (e.g. permission denied, a missing execute bit)",
                       x->c->name);
        krc_diag_evidence_hit(b, x);
    }
}

/* 9. disk_full */
int krc_diag_match_disk_full(struct dctx *x)
{
    if (!failed_or_unknown(x) && !x->start_error) {
        return 0;
    }
    if (krc_diag_find_text(x, disk_full_patterns, NPAT(disk_full_patterns),
                           IN_RUNTIME | IN_POD | IN_EVENTS | IN_MSG)) {
        x->conf = KRC_CONFIDENCE_HIGH;
        return 1;
    }
    x->conf = KRC_CONFIDENCE_MEDIUM;
    return krc_diag_find_text(x, disk_full_patterns, NPAT(disk_full_patterns), IN_LOG_TAIL);
}

void krc_diag_say_disk_full(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    char line[200];

    krc_diag_hit_short(x, line, sizeof(line));
    krc_buf_printf(s, "Container %s ran out of disk space (\"No space left on device\"",
                   x->c->name);
    if (x->has_exit) {
        krc_buf_printf(s, ", exit %d", x->exit_code);
    }
    krc_buf_append_str(s, ")");
    krc_diag_quote_clean(s, ": ", line, "");
    krc_diag_evidence_hit(b, x);
}

/* 10. start_failed */
int krc_diag_match_start_failed(struct dctx *x)
{
    memset(&x->h, 0, sizeof(x->h));
    x->ev = NULL;
    x->detail = start_text(x);
    if (x->start_error) {
        x->conf = x->detail != NULL || (x->t != NULL && krc_diag_is_start_reason(x->t->reason))
                      ? KRC_CONFIDENCE_HIGH
                      : KRC_CONFIDENCE_MEDIUM;
        return 1;
    }
    if (x->has_exit && x->exit_code == 128) {
        x->conf = KRC_CONFIDENCE_LOW;
        return 1;
    }
    x->conf = KRC_CONFIDENCE_HIGH;
    return krc_diag_find_text(x, start_patterns, NPAT(start_patterns), IN_RUNTIME | IN_EVENTS);
}

/* The specific end of a nested runtime error ("failed to create containerd
 * task: ...: error during container init: error mounting ...: unknown"). */
static const char *runtime_core(const char *msg)
{
    static const char *const layers[] = {
        "error during container init: ",
        "unable to start container process: ",
        "runc create failed: ",
        "oci runtime create failed: ",
        "failed to create shim task: ",
        "failed to create containerd task: ",
        "failed to start containerd task: ",
        "error: ",
    };
    size_t i;

    for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
        size_t at = krc_diag_find_ci((const unsigned char *)msg, strlen(msg), layers[i]);
        if (at != SIZE_MAX && msg[at + strlen(layers[i])] != '\0') {
            return msg + at + strlen(layers[i]);
        }
    }
    return msg;
}

void krc_diag_say_start_failed(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const char *reason = x->t != NULL && krc_diag_is_start_reason(x->t->reason) ? x->t->reason
                         : krc_diag_is_start_reason(x->c->state_reason)         ? x->c->state_reason
                                                                                : NULL;
    char line[240];

    krc_buf_printf(s, "The container runtime could not start container %s", x->c->name);
    if (reason != NULL) {
        krc_buf_printf(s, " (reason %s)", reason);
    } else if (x->has_exit && x->exit_code == 128) {
        krc_buf_append_str(s, " (exit 128, the code a start error reports)");
    }
    if (x->detail != NULL) {
        const char *core = runtime_core(x->detail);
        size_t n = strlen(core);
        if (n >= 9 && strcmp(core + n - 9, ": unknown") == 0) {
            n -= 9; /* runc's error class, not information */
        }
        krc_diagnose_sanitize(core, n, line, sizeof(line));
        krc_diag_quote_clean(s, ": ", line, "");
        krc_diag_add_evidence(b, "runtime: %s", x->detail);
    } else if (x->ev != NULL) {
        const char *core = runtime_core(krc_diag_strip_combined(x->ev->message));
        krc_diagnose_sanitize(core, strlen(core), line, sizeof(line));
        krc_diag_quote_clean(s, ": ", line, "");
        krc_diag_evidence_hit(b, x);
    } else if (x->h.found) {
        krc_diag_hit_short(x, line, sizeof(line));
        krc_diag_quote_clean(s, ": ", line, "");
        krc_diag_evidence_hit(b, x);
    }
}
