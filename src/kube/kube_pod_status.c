/* A pod's status (include/krc/kube/kube_pod.h): the phase and, per container
 * status, the restart count, readiness, the current state and the last
 * terminated one, for the pod parser (kube_pod.c). */
#include <string.h>

#include "krc/util/mem.h"

#include "kube_pod_private.h"

/* Consume an object (whole) or null: 1 for an object, 0 for null. */
static int present_obj(struct pctx *c, const char *field)
{
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t == KRC_JSON_OBJECT) {
        rc = krc_jscan_skip(c->s, NULL, c->err);
        return rc < 0 ? rc : 1;
    }
    if (t == KRC_JSON_NULL) {
        rc = krc_jscan_null(c->s, c->err);
        return rc < 0 ? rc : 0;
    }
    if (t < 0) {
        return t;
    }
    return field_error(c, field, "expected object", t);
}

struct terminated {
    int exit_code;
    int signal;
    const char *reason;
    int64_t started;
    int64_t finished;
    const char *container_id;
};

/* state.terminated (last == 0) or lastState.terminated: 1 when an object was
 * read into *t, 0 for null. */
static int parse_terminated(struct pctx *c, int last, struct terminated *t)
{
    struct krc_jscan_str k;
    int rc = obj_or_null(c, last ? "lastState.terminated" : "state.terminated");

    memset(t, 0, sizeof(*t));
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "exitCode")) {
            rc = get_int(c, last ? "lastState.terminated.exitCode" : "state.terminated.exitCode",
                         &t->exit_code);
        } else if (EQ(&k, "reason")) {
            rc = get_str(c, last ? "lastState.terminated.reason" : "state.terminated.reason",
                         &t->reason);
        } else if (last && EQ(&k, "signal")) {
            rc = get_int(c, "lastState.terminated.signal", &t->signal);
        } else if (last && EQ(&k, "startedAt")) {
            rc = get_time(c, "lastState.terminated.startedAt", &t->started, NULL);
        } else if (last && EQ(&k, "finishedAt")) {
            rc = get_time(c, "lastState.terminated.finishedAt", &t->finished, NULL);
        } else if (last && EQ(&k, "containerID")) {
            rc = get_str(c, "lastState.terminated.containerID", &t->container_id);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? rc : 1;
}

/* state.waiting: 1 with *reason when an object, 0 for null. */
static int parse_waiting(struct pctx *c, const char **reason)
{
    struct krc_jscan_str k;
    int rc = obj_or_null(c, "state.waiting");

    *reason = NULL;
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "reason")) {
            rc = get_str(c, "state.waiting.reason", reason);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? rc : 1;
}

/* state: Kubernetes sets at most one of running/waiting/terminated. When a
 * document has several, the same precedence as kube_parse's decoder applies
 * whatever their order (JSON member order carries no meaning): terminated,
 * then waiting, then running, so the watch and the collector agree (found by
 * fuzz_pod_diff; regression input tests/fuzz/regressions/pod_diff). */
static void set_state(struct krc_container_info *ci, int running, int waiting,
                      const char *wait_reason, int terminated, const struct terminated *t)
{
    ci->state_running = 0;
    ci->state_waiting = 0;
    ci->state_terminated = 0;
    ci->state_reason = NULL;
    ci->state_exit_code = 0;
    if (terminated) {
        ci->state_terminated = 1;
        ci->state_reason = t->reason;
        ci->state_exit_code = t->exit_code;
    } else if (waiting) {
        ci->state_waiting = 1;
        ci->state_reason = wait_reason;
    } else if (running) {
        ci->state_running = 1;
    }
}

static int parse_state(struct pctx *c, struct krc_container_info *ci)
{
    struct krc_jscan_str k;
    struct terminated t, term;
    const char *reason, *wait_reason = NULL;
    int running = 0, waiting = 0, terminated = 0;
    int rc = obj_or_null(c, "state");

    if (rc <= 0) {
        return rc;
    }
    memset(&term, 0, sizeof(term));
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "running")) {
            rc = present_obj(c, "state.running");
            running |= rc > 0;
        } else if (EQ(&k, "waiting")) {
            rc = parse_waiting(c, &reason);
            if (rc > 0) {
                waiting = 1;
                wait_reason = reason;
            }
        } else if (EQ(&k, "terminated")) {
            rc = parse_terminated(c, 0, &t);
            if (rc > 0) {
                terminated = 1;
                term = t;
            }
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc == 0 && (running || waiting || terminated)) {
        set_state(ci, running, waiting, wait_reason, terminated, &term);
    }
    return rc;
}

/* lastState: only terminated matters. */
static int parse_last_state(struct pctx *c, struct krc_container_info *ci)
{
    struct krc_jscan_str k;
    struct terminated t;
    int rc = obj_or_null(c, "lastState");

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "terminated")) {
            rc = parse_terminated(c, 1, &t);
            if (rc > 0) {
                ci->has_last_terminated = 1;
                ci->last_exit_code = t.exit_code;
                ci->last_signal = t.signal;
                ci->last_reason = t.reason;
                ci->last_started_at = t.started;
                ci->last_finished_at = t.finished;
                ci->last_container_id = t.container_id;
            }
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc;
}

static int parse_container_status(struct pctx *c, struct krc_container_info *ci)
{
    struct krc_jscan_str k;
    int t = krc_jscan_peek(c->s, c->err);
    int rc;

    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return field_error(c, "", "expected object", t);
    }
    rc = krc_jscan_object_begin(c->s, c->err);
    if (rc < 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "name")) {
            rc = get_str(c, "name", &ci->name);
        } else if (EQ(&k, "restartCount")) {
            rc = get_int(c, "restartCount", &ci->restart_count);
        } else if (EQ(&k, "ready")) {
            rc = get_bool(c, "ready", &ci->ready);
        } else if (EQ(&k, "state")) {
            rc = parse_state(c, ci);
        } else if (EQ(&k, "lastState")) {
            rc = parse_last_state(c, ci);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc < 0) {
        return rc;
    }
    if (ci->name == NULL) {
        return missing(c, "name");
    }
    return 0;
}

static int grow_containers(struct pctx *c)
{
    struct krc_pod_info *p = c->p;
    struct krc_container_info *n;
    size_t cap;

    if (p->n_containers < p->containers_cap) {
        return 0;
    }
    cap = p->containers_cap ? p->containers_cap * 2 : 8;
    n = krc_realloc(p->containers, cap * sizeof(*n));
    if (n == NULL) {
        return krc_error_set(c->err, KRC_ENOMEM, "%s: out of memory for %zu containers", c->what,
                             cap);
    }
    p->containers = n;
    p->containers_cap = cap;
    return 0;
}

static int parse_statuses(struct pctx *c, int is_init)
{
    const char *field = is_init ? "initContainerStatuses" : "containerStatuses";
    int *seen = is_init ? &c->seen_init_statuses : &c->seen_statuses;
    int rc;

    if (*seen) {
        return field_error(c, field, "duplicate key", 0);
    }
    *seen = 1;
    rc = arr_or_null(c, field);
    if (rc <= 0) {
        return rc;
    }
    c->section = is_init ? "status.initContainerStatuses" : "status.containerStatuses";
    c->index = 0;
    while ((rc = krc_jscan_array_next(c->s, c->err)) > 0) {
        struct krc_container_info *ci;

        rc = grow_containers(c);
        if (rc < 0) {
            return rc;
        }
        ci = &c->p->containers[c->p->n_containers];
        memset(ci, 0, sizeof(*ci));
        ci->is_init = is_init;
        rc = parse_container_status(c, ci);
        if (rc < 0) {
            return rc;
        }
        c->p->n_containers++;
        c->index++;
    }
    c->section = "status";
    c->index = NO_INDEX;
    return rc;
}

int krc_pod_parse_status(struct pctx *c)
{
    struct krc_jscan_str k;
    int rc;

    c->section = NULL;
    rc = obj_or_null(c, "status");
    if (rc <= 0) {
        return rc;
    }
    c->section = "status";
    c->index = NO_INDEX;
    while ((rc = krc_jscan_object_next(c->s, &k, c->err)) > 0) {
        if (EQ(&k, "phase")) {
            rc = get_str(c, "phase", &c->p->phase);
        } else if (EQ(&k, "containerStatuses")) {
            rc = parse_statuses(c, 0);
        } else if (EQ(&k, "initContainerStatuses")) {
            rc = parse_statuses(c, 1);
        } else {
            rc = skip(c);
        }
        if (rc < 0) {
            return rc;
        }
    }
    c->section = NULL;
    return rc;
}
