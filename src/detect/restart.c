#include "krc/detect/restart.h"

#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/jscan.h"
#include "krc/util/mem.h"

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

static size_t skip_ws(const char *json, size_t len, size_t i)
{
    while (i < len && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r')) {
        i++;
    }
    return i;
}

/* Find metadata.managedFields in a pod object: the byte range to cut so that
 * the rest stays valid JSON (the member with the comma that separates it from
 * a neighbour). 1 and the range when found, 0 when absent or the text is not
 * the object expected (then nothing is cut). */
static int find_managed_fields(const char *json, size_t len, size_t *ret_from, size_t *ret_to)
{
    struct krc_jscan s;
    struct krc_jscan_str key;
    struct krc_error err;
    int rc;

    krc_jscan_init(&s, json, len, "pod");
    if (krc_jscan_object_begin(&s, &err) < 0) {
        return 0;
    }
    while ((rc = krc_jscan_object_next(&s, &key, &err)) == 1) {
        size_t prev_end;
        int first = 1;
        if (!KRC_JSCAN_EQ(&key, "metadata")) {
            if (krc_jscan_skip(&s, NULL, &err) < 0) {
                return 0;
            }
            continue;
        }
        if (krc_jscan_object_begin(&s, &err) < 0) {
            return 0;
        }
        prev_end = s.pos; /* just after '{', then after each member's value */
        while ((rc = krc_jscan_object_next(&s, &key, &err)) == 1) {
            size_t key_start = (size_t)(key.raw - json) - 1; /* its opening quote */
            if (KRC_JSCAN_EQ(&key, "managedFields")) {
                if (krc_jscan_skip(&s, NULL, &err) < 0) {
                    return 0;
                }
                if (!first) {
                    /* ',"managedFields":[...]' from the end of the previous value */
                    *ret_from = prev_end;
                    *ret_to = s.pos;
                    return 1;
                }
                /* first member: '"managedFields":[...],' up to the next key */
                *ret_from = key_start;
                *ret_to = skip_ws(json, len, s.pos);
                if (*ret_to < len && json[*ret_to] == ',') {
                    *ret_to = skip_ws(json, len, *ret_to + 1);
                } else {
                    *ret_to = s.pos; /* the only member */
                }
                return 1;
            }
            if (krc_jscan_skip(&s, NULL, &err) < 0) {
                return 0;
            }
            prev_end = s.pos;
            first = 0;
        }
        return 0;
    }
    return 0;
}

/* A copy of the pod object without metadata.managedFields: the API server's
 * field-ownership bookkeeping is ~40% of a typical pod and nothing downstream
 * reads it, while a burst queues one copy per restart. */
static char *copy_pod_json(const char *json, size_t len, size_t *ret_len)
{
    size_t from, to;
    char *out;

    if (!find_managed_fields(json, len, &from, &to)) {
        *ret_len = len;
        return krc_strndup(json, len);
    }
    out = krc_malloc(len - (to - from) + 1);
    if (out == NULL) {
        return NULL;
    }
    memcpy(out, json, from);
    memcpy(out + from, json + to, len - to);
    *ret_len = len - (to - from);
    out[*ret_len] = '\0';
    return out;
}

struct krc_restart *krc_restart_from_delta(const struct krc_restart_delta *d, int copy_pod)
{
    const struct krc_pod_info *p = d->pod;
    const struct krc_container_info *c = d->container;
    struct krc_restart *r = krc_calloc(1, sizeof(*r));

    if (r == NULL) {
        return NULL;
    }
    if (dup_opt(&r->namespace, p->namespace) < 0 || dup_opt(&r->pod, p->name) < 0 ||
        dup_opt(&r->node, p->node_name) < 0 ||
        dup_opt(&r->reason, c->has_last_terminated ? c->last_reason : NULL) < 0 ||
        dup_opt(&r->slack_channel, p->slack_channel) < 0) {
        krc_restart_free(r);
        return NULL;
    }
    if (copy_pod && p->raw != NULL && p->raw_len > 0) {
        r->pod_json = copy_pod_json(p->raw, p->raw_len, &r->pod_json_len);
        if (r->pod_json == NULL) {
            krc_restart_free(r);
            return NULL;
        }
    }
    /* an API server's values fit (model/restart_ident.h); a longer one is cut */
    (void)krc_restart_ident_set(&r->ident, p->uid, c->name, c->restart_count, c->last_finished_at,
                                c->has_last_terminated ? c->last_container_id : NULL);
    r->is_init = c->is_init;
    r->is_sidecar = c->is_sidecar;
    r->previous_count = d->previous_count;
    r->missed = d->missed;
    r->pod_restarts = krc_restart_pod_total(p);
    r->has_exit_code = c->has_last_terminated;
    r->exit_code = c->last_exit_code;
    r->signal = c->last_signal;
    r->started_at = c->last_started_at;
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
    krc_free(r->node);
    krc_free(r->reason);
    krc_free(r->slack_channel);
    krc_free(r->pod_json);
    krc_free(r);
}
