#include "krc/restart.h"

#include "krc/clock.h"
#include "krc/mem.h"

static int dup_opt(char **dst, const char *src)
{
    if (src == NULL) {
        *dst = NULL;
        return 0;
    }
    *dst = krc_strdup(src);
    return *dst == NULL ? -1 : 0;
}

int krc_restart_pod_total(const struct krc_pod_info *pod)
{
    int total = 0;
    for (size_t i = 0; i < pod->n_containers; i++) {
        if (!pod->containers[i].is_init) {
            total += pod->containers[i].restart_count;
        }
    }
    return total;
}

struct krc_restart *krc_restart_from_delta(const struct krc_restart_delta *d)
{
    const struct krc_pod_info *p = d->pod;
    const struct krc_container_info *c = d->container;
    struct krc_restart *r = krc_calloc(1, sizeof(*r));

    if (r == NULL) {
        return NULL;
    }
    if (dup_opt(&r->namespace, p->namespace) < 0 || dup_opt(&r->pod, p->name) < 0 ||
        dup_opt(&r->uid, p->uid) < 0 || dup_opt(&r->container, c->name) < 0 ||
        dup_opt(&r->node, p->node_name) < 0 ||
        dup_opt(&r->reason, c->has_last_terminated ? c->last_reason : NULL) < 0 ||
        dup_opt(&r->slack_channel, p->slack_channel) < 0) {
        krc_restart_free(r);
        return NULL;
    }
    if (p->raw != NULL && p->raw_len > 0) {
        r->pod_json = krc_strndup(p->raw, p->raw_len);
        if (r->pod_json == NULL) {
            krc_restart_free(r);
            return NULL;
        }
        r->pod_json_len = p->raw_len;
    }
    r->is_init = c->is_init;
    r->is_sidecar = c->is_sidecar;
    r->restart_count = c->restart_count;
    r->previous_count = d->previous_count;
    r->missed = d->missed;
    r->pod_restarts = krc_restart_pod_total(p);
    r->has_exit_code = c->has_last_terminated;
    r->exit_code = c->last_exit_code;
    r->signal = c->last_signal;
    r->started_at = c->last_started_at;
    r->finished_at = c->last_finished_at;
    r->detected_at = krc_clock_now();
    r->detected_mono_ms = krc_clock_mono_ms();
    return r;
}

void krc_restart_free(struct krc_restart *r)
{
    if (r == NULL) {
        return;
    }
    krc_free(r->namespace);
    krc_free(r->pod);
    krc_free(r->uid);
    krc_free(r->container);
    krc_free(r->node);
    krc_free(r->reason);
    krc_free(r->slack_channel);
    krc_free(r->pod_json);
    krc_free(r);
}
