#include "krc/model/report.h"

#include <stdarg.h>
#include <stdio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/mem.h"
#include "krc/util/redact.h"

void krc_kv_list_cleanup(struct krc_kv_list *l)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        krc_free(l->items[i].key);
        krc_free(l->items[i].value);
    }
    krc_free(l->items);
    l->items = NULL;
    l->n = 0;
    l->cap = 0;
}

const char *krc_kv_list_get(const struct krc_kv_list *l, const char *key)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].key, key) == 0) {
            return l->items[i].value;
        }
    }
    return NULL;
}

int krc_kv_list_put(struct krc_kv_list *l, const char *key, const char *value)
{
    char *k = NULL;
    char *v = NULL;
    size_t i;

    v = krc_strdup(value ? value : "");
    if (v == NULL) {
        return KRC_ENOMEM;
    }
    for (i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].key, key) == 0) {
            krc_free(l->items[i].value);
            l->items[i].value = v;
            return 0;
        }
    }
    k = krc_strdup(key);
    if (k == NULL) {
        goto fail;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct krc_kv *p = krc_realloc(l->items, cap * sizeof(*p));
        if (p == NULL) {
            goto fail;
        }
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n].key = k;
    l->items[l->n].value = v;
    l->n++;
    return 0;
fail:
    krc_free(k);
    krc_free(v);
    return KRC_ENOMEM;
}

static void term_cleanup(struct krc_report_term *t)
{
    krc_free(t->reason);
    krc_free(t->message);
    krc_free(t->container_id);
    memset(t, 0, sizeof(*t));
}

static void container_fields_cleanup(struct krc_report_container *c)
{
    for (size_t i = 0; i < c->n_restart_rules; i++) {
        krc_free(c->restart_rules[i].action);
        krc_free(c->restart_rules[i].op);
        krc_free(c->restart_rules[i].values);
    }
    krc_free(c->restart_rules);
    for (size_t i = 0; i < c->n_resize_policy; i++) {
        krc_free(c->resize_policy[i].resource_name);
        krc_free(c->resize_policy[i].restart_policy);
    }
    krc_free(c->resize_policy);
    for (size_t i = 0; i < c->n_resource_health; i++) {
        struct krc_report_resource_health *h = &c->resource_health[i];
        for (size_t j = 0; j < h->n_resources; j++) {
            krc_free(h->resources[j].resource_id);
            krc_free(h->resources[j].health);
            krc_free(h->resources[j].message);
        }
        krc_free(h->resources);
        krc_free(h->name);
    }
    krc_free(c->resource_health);
    krc_free(c->restart_policy);
    krc_free(c->stop_signal);
    krc_kv_list_cleanup(&c->status_limits);
    krc_kv_list_cleanup(&c->status_requests);
}

static void container_cleanup(struct krc_report_container *c)
{
    container_fields_cleanup(c);
    krc_free(c->name);
    krc_free(c->image);
    krc_free(c->state_reason);
    krc_free(c->state_message);
    krc_free(c->termination_message_policy);
    term_cleanup(&c->state_term);
    term_cleanup(&c->last);
    krc_kv_list_cleanup(&c->limits);
    krc_kv_list_cleanup(&c->requests);
    krc_kv_list_cleanup(&c->env);
    krc_kv_list_cleanup(&c->env_from);
    krc_kv_list_cleanup(&c->jvm_heap);
    memset(c, 0, sizeof(*c));
}

static void event_cleanup(struct krc_report_event *e)
{
    krc_free(e->type);
    krc_free(e->reason);
    krc_free(e->message);
    krc_free(e->object_kind);
    krc_free(e->object_namespace);
    krc_free(e->object_name);
    krc_free(e->object_uid);
    krc_free(e->field_path);
    krc_free(e->source_component);
    krc_free(e->source_host);
    memset(e, 0, sizeof(*e));
}

void krc_report_init(struct krc_report *r)
{
    memset(r, 0, sizeof(*r));
    r->grace_period = 30;
    r->log_flags = KRC_REPORT_LOG_ABSENT;
}

void krc_report_claim_clear_devices(struct krc_report_claim_status *c)
{
    for (size_t i = 0; i < c->n_devices; i++) {
        struct krc_report_claim_device *d = &c->devices[i];
        krc_free(d->request);
        krc_free(d->driver);
        krc_free(d->pool);
        krc_free(d->device);
        for (size_t j = 0; j < d->n_conditions; j++) {
            krc_free(d->conditions[j].type);
            krc_free(d->conditions[j].status);
            krc_free(d->conditions[j].reason);
            krc_free(d->conditions[j].message);
        }
        krc_free(d->conditions);
    }
    krc_free(c->devices);
    c->devices = NULL;
    c->n_devices = c->devices_omitted = 0;
    c->fetched = c->allocated = 0;
}

void krc_report_clear_pod(struct krc_report *r)
{
    size_t i;

    krc_free(r->namespace);
    krc_free(r->name);
    krc_free(r->uid);
    krc_free(r->node_name);
    krc_free(r->owner_kind);
    krc_free(r->owner_name);
    krc_free(r->workload_kind);
    krc_free(r->workload_name);
    r->workload_kind = r->workload_name = NULL;
    krc_free(r->phase);
    krc_free(r->pod_reason);
    krc_free(r->pod_message);
    krc_free(r->restart_policy);
    krc_free(r->slack_channel);
    r->namespace = r->name = r->uid = r->node_name = NULL;
    r->owner_kind = r->owner_name = r->phase = r->pod_reason = r->pod_message = NULL;
    r->restart_policy = r->slack_channel = NULL;
    r->created_at = 0;
    r->grace_period = 30;
    r->api_object = 0;
    krc_kv_list_cleanup(&r->labels);
    krc_kv_list_cleanup(&r->annotations);
    krc_kv_list_cleanup(&r->pod_limits);
    krc_kv_list_cleanup(&r->pod_requests);
    r->has_pod_resources = 0;
    r->has_generation = r->has_observed_generation = 0;
    r->generation = r->observed_generation = 0;
    r->deletion_timestamp = 0;
    r->has_deletion_grace = 0;
    r->deletion_grace = 0;
    for (i = 0; i < r->n_conditions; i++) {
        krc_free(r->conditions[i].type);
        krc_free(r->conditions[i].status);
        krc_free(r->conditions[i].reason);
        krc_free(r->conditions[i].message);
    }
    krc_free(r->conditions);
    r->conditions = NULL;
    r->n_conditions = r->conditions_omitted = 0;
    for (i = 0; i < r->n_claim_statuses; i++) {
        krc_free(r->claim_statuses[i].name);
        krc_free(r->claim_statuses[i].resource_claim_name);
        krc_report_claim_clear_devices(&r->claim_statuses[i]);
    }
    krc_free(r->claim_statuses);
    r->claim_statuses = NULL;
    r->n_claim_statuses = r->claim_statuses_omitted = 0;
    for (i = 0; i < r->n_containers; i++) {
        container_cleanup(&r->containers[i]);
    }
    krc_free(r->containers);
    r->containers = NULL;
    r->n_containers = 0;
    r->containers_cap = 0;
}

void krc_report_clear_events(struct krc_report *r)
{
    size_t i;

    for (i = 0; i < r->n_events; i++) {
        event_cleanup(&r->events[i]);
    }
    krc_free(r->events);
    r->events = NULL;
    r->n_events = 0;
    r->events_cap = 0;
}

void krc_report_clear_node(struct krc_report *r)
{
    struct krc_report_node *n = &r->node;
    size_t i;

    krc_free(n->name);
    for (i = 0; i < n->n_conditions; i++) {
        krc_free(n->conditions[i].type);
        krc_free(n->conditions[i].status);
        krc_free(n->conditions[i].reason);
        krc_free(n->conditions[i].message);
    }
    krc_free(n->conditions);
    krc_kv_list_cleanup(&n->capacity);
    krc_kv_list_cleanup(&n->allocatable);
    krc_free(n->kubelet_version);
    krc_free(n->container_runtime_version);
    krc_free(n->kernel_version);
    krc_free(n->os_image);
    memset(n, 0, sizeof(*n));
}

void krc_report_clear_log(struct krc_report *r)
{
    krc_free(r->log);
    krc_free(r->log_container);
    r->log = NULL;
    r->log_container = NULL;
    r->log_len = 0;
    r->log_flags = KRC_REPORT_LOG_ABSENT;
    memset(&r->log_cut, 0, sizeof(r->log_cut));
}

void krc_report_clear_changes(struct krc_report *r)
{
    krc_free(r->what_changed);
    krc_free(r->changes_json);
    r->what_changed = NULL;
    r->changes_json = NULL;
}

int krc_report_add_note(struct krc_report *r, const char *fmt, ...)
{
    char line[512];
    char **n;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    n = krc_realloc(r->notes, (r->n_notes + 1) * sizeof(*n));
    if (n == NULL) {
        return KRC_ENOMEM;
    }
    r->notes = n;
    r->notes[r->n_notes] = krc_strdup(line);
    if (r->notes[r->n_notes] == NULL) {
        return KRC_ENOMEM;
    }
    r->n_notes++;
    return 0;
}

void krc_report_clear_notes(struct krc_report *r)
{
    for (size_t i = 0; i < r->n_notes; i++) {
        krc_free(r->notes[i]);
    }
    krc_free(r->notes);
    r->notes = NULL;
    r->n_notes = 0;
}

void krc_workload_or_pod(const char *kind, const char *name, const char *pod, const char **ret_kind,
                         const char **ret_name)
{
    if (kind != NULL && name != NULL && kind[0] != '\0' && name[0] != '\0') {
        *ret_kind = kind;
        *ret_name = name;
    } else {
        *ret_kind = "Pod";
        *ret_name = pod;
    }
}

int krc_report_resolve_workload(struct krc_report *r)
{
    const char *kind = r->owner_kind;
    const char *name = r->owner_name;
    char *wk;
    char *wn;

    krc_free(r->workload_kind);
    krc_free(r->workload_name);
    r->workload_kind = r->workload_name = NULL;
    if (kind == NULL || name == NULL) {
        return 0;
    }
    wk = krc_strdup(kind);
    wn = krc_strdup(name);
    if (wk == NULL || wn == NULL) {
        krc_free(wk);
        krc_free(wn);
        return KRC_ENOMEM;
    }
    if (strcmp(kind, "ReplicaSet") == 0) {
        /* The Deployment controller names its ReplicaSets NAME-HASH, where
         * HASH is the pod-template-hash label of their pods. */
        const char *hash = krc_kv_list_get(&r->labels, "pod-template-hash");
        size_t nl = strlen(name);
        size_t hl = hash != NULL ? strlen(hash) : 0;
        if (hl > 0 && nl > hl + 1 && name[nl - hl - 1] == '-' &&
            strcmp(name + nl - hl, hash) == 0) {
            char *dk = krc_strdup("Deployment");
            if (dk == NULL) {
                krc_free(wk);
                krc_free(wn);
                return KRC_ENOMEM;
            }
            krc_free(wk);
            wk = dk;
            wn[nl - hl - 1] = '\0';
        }
    }
    r->workload_kind = wk;
    r->workload_name = wn;
    return 0;
}

void krc_report_cleanup(struct krc_report *r)
{
    krc_report_clear_notes(r);
    krc_report_clear_pod(r);
    krc_report_clear_events(r);
    krc_report_clear_node(r);
    krc_report_clear_log(r);
    krc_report_clear_changes(r);
    krc_report_init(r);
}

struct krc_report *krc_report_new(void)
{
    struct krc_report *r = krc_malloc(sizeof(*r));

    if (r != NULL) {
        krc_report_init(r);
    }
    return r;
}

void krc_report_free(struct krc_report *r)
{
    if (r == NULL) {
        return;
    }
    krc_report_cleanup(r);
    krc_free(r);
}

int krc_report_set_log(struct krc_report *r, const char *container, const void *data, size_t len,
                       int truncated, struct krc_error *err)
{
    unsigned char *copy = NULL;
    char *name = NULL;
    const unsigned char *src = data;
    unsigned flags = 0;

    if (len > KRC_REPORT_LOG_MAX) {
        src += len - KRC_REPORT_LOG_MAX;
        len = KRC_REPORT_LOG_MAX;
        flags |= KRC_REPORT_LOG_TRUNCATED;
    }
    if (truncated) {
        flags |= KRC_REPORT_LOG_TRUNCATED;
    }
    if (len == 0) {
        flags |= KRC_REPORT_LOG_EMPTY;
    } else {
        copy = krc_malloc(len);
        if (copy == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "log: out of memory copying %zu bytes", len);
        }
        memcpy(copy, src, len);
    }
    if (container != NULL) {
        name = krc_strdup(container);
        if (name == NULL) {
            krc_free(copy);
            return krc_error_set(err, KRC_ENOMEM, "log: out of memory");
        }
    }
    krc_report_clear_log(r);
    r->log = copy;
    r->log_len = len;
    r->log_flags = flags;
    r->log_container = name;
    return 0;
}

int krc_report_take_log(struct krc_report *r, const char *container, unsigned char *data,
                        size_t len, struct krc_error *err)
{
    char *name = NULL;

    if (len > KRC_REPORT_LOG_MAX) {
        int rc = krc_report_set_log(r, container, data, len, 0, err);
        krc_free(data);
        return rc;
    }
    if (container != NULL && (name = krc_strdup(container)) == NULL) {
        krc_free(data);
        return krc_error_set(err, KRC_ENOMEM, "log: out of memory");
    }
    krc_report_clear_log(r);
    if (len == 0) {
        krc_free(data);
        data = NULL;
    }
    r->log = data;
    r->log_len = len;
    r->log_flags = len == 0 ? KRC_REPORT_LOG_EMPTY : 0;
    r->log_container = name;
    return 0;
}

void krc_report_set_log_cut(struct krc_report *r, const struct krc_logtail_cut *cut)
{
    r->log_cut = *cut;
    if (cut->dropped > 0 || cut->capped) {
        r->log_flags |= KRC_REPORT_LOG_TRUNCATED;
    }
    if (cut->capped) {
        r->log_flags |= KRC_REPORT_LOG_CAPPED;
    }
}

struct krc_report_container *krc_report_add_container(struct krc_report *r)
{
    struct krc_report_container *c;

    if (r->n_containers == r->containers_cap) {
        size_t cap = r->containers_cap ? r->containers_cap * 2 : 4;
        struct krc_report_container *p = krc_realloc(r->containers, cap * sizeof(*p));
        if (p == NULL) {
            return NULL;
        }
        r->containers = p;
        r->containers_cap = cap;
    }
    c = &r->containers[r->n_containers++];
    memset(c, 0, sizeof(*c));
    return c;
}

struct krc_report_event *krc_report_add_event(struct krc_report *r)
{
    struct krc_report_event *e;

    if (r->n_events == r->events_cap) {
        size_t cap = r->events_cap ? r->events_cap * 2 : 16;
        struct krc_report_event *p = krc_realloc(r->events, cap * sizeof(*p));
        if (p == NULL) {
            return NULL;
        }
        r->events = p;
        r->events_cap = cap;
    }
    e = &r->events[r->n_events++];
    memset(e, 0, sizeof(*e));
    return e;
}

void krc_report_drop_last_event(struct krc_report *r)
{
    if (r->n_events > 0) {
        event_cleanup(&r->events[--r->n_events]);
    }
}

const struct krc_report_container *krc_report_container_get(const struct krc_report *r,
                                                            const char *name, int is_init)
{
    size_t i;
    int pass;

    if (name == NULL) {
        return NULL;
    }
    /* With is_init -1, regular containers win over init containers of the
     * same name (names are unique per pod, but be deterministic). */
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < r->n_containers; i++) {
            const struct krc_report_container *c = &r->containers[i];
            int want = is_init >= 0 ? is_init : pass;
            if (c->is_init == want && c->name != NULL && strcmp(c->name, name) == 0) {
                return c;
            }
        }
        if (is_init >= 0) {
            break;
        }
    }
    return NULL;
}

static int str_eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

int krc_report_event_is_pod(const struct krc_report *r, const struct krc_report_event *ev)
{
    if (ev->object_kind != NULL && ev->object_kind[0] != '\0' &&
        strcmp(ev->object_kind, "Pod") != 0) {
        return 0;
    }
    if (ev->object_uid != NULL && ev->object_uid[0] != '\0' && r->uid != NULL &&
        r->uid[0] != '\0') {
        return strcmp(ev->object_uid, r->uid) == 0;
    }
    /* An event naming no object at all comes from a pasted Events table
     * (kubectl describe pod), which lists the events of that pod only. */
    if ((ev->object_uid == NULL || ev->object_uid[0] == '\0') &&
        (ev->object_name == NULL || ev->object_name[0] == '\0')) {
        return 1;
    }
    /* No uid on the event (hand-made or stripped): fall back to name and
     * namespace. Real kubelet events always carry the uid. */
    if (!str_eq(ev->object_name, r->name)) {
        return 0;
    }
    if (ev->object_namespace != NULL && ev->object_namespace[0] != '\0' && r->namespace != NULL) {
        return strcmp(ev->object_namespace, r->namespace) == 0;
    }
    return 1;
}

/* fieldPath "spec.containers{NAME}" or "spec.initContainers{NAME}" */
static int field_path_is(const char *fp, const struct krc_report_container *c)
{
    const char *prefix = c->is_init ? "spec.initContainers{" : "spec.containers{";
    size_t pl = strlen(prefix);
    size_t nl;

    if (fp == NULL || c->name == NULL || strncmp(fp, prefix, pl) != 0) {
        return 0;
    }
    nl = strlen(c->name);
    return strncmp(fp + pl, c->name, nl) == 0 && fp[pl + nl] == '}' && fp[pl + nl + 1] == '\0';
}

int krc_report_event_matches(const struct krc_report *r, const struct krc_report_event *ev,
                             const struct krc_report_container *c)
{
    if (!krc_report_event_is_pod(r, ev)) {
        return 0;
    }
    if (c == NULL) {
        return 1;
    }
    return field_path_is(ev->field_path, c);
}

void krc_report_retain_pod_events(struct krc_report *r)
{
    size_t i;
    size_t out = 0;

    for (i = 0; i < r->n_events; i++) {
        struct krc_report_event *e = &r->events[i];
        int keep = krc_report_event_is_pod(r, e);
        if (!keep && str_eq(e->object_kind, "Node") && str_eq(e->object_name, r->node_name)) {
            keep = 1;
        }
        if (keep) {
            if (out != i) {
                r->events[out] = *e;
                memset(e, 0, sizeof(*e));
            }
            out++;
        } else {
            event_cleanup(e);
        }
    }
    r->n_events = out;
}

/* Extended resources that count accelerator devices, one unit per device
 * (or per partition that the plugin hands out as a device): the device
 * plugins' resource names. Quantities that merely mention a GPU are not
 * devices: HAMi's nvidia.com/gpumem (MiB) and nvidia.com/gpucores
 * (percent of a GPU), other memory or core quantities, and time-sliced
 * shares (nvidia.com/gpu.shared) are left out, so that "1 GPU + 100 cores +
 * 16000 MiB" is not 16101 GPUs. A resource not listed is not counted. */
static const char *const gpu_devices[] = {
    "nvidia.com/gpu",        /* NVIDIA device plugin */
    "amd.com/gpu",           /* AMD (ROCm) device plugin */
    "gpu.intel.com/i915",    /* Intel GPU plugin */
    "gpu.intel.com/xe",      /* Intel GPU plugin, xe driver */
    "intel.com/gpu",         /* older Intel naming */
    "google.com/tpu",        /* GKE TPUs */
    "habana.ai/gaudi",       /* Intel Gaudi (Habana) */
    "aws.amazon.com/neuron", /* AWS Inferentia/Trainium devices */
    "aws.amazon.com/neurondevice",
};

int krc_report_is_gpu_resource(const char *name)
{
    size_t i;

    if (name == NULL || strchr(name, '/') == NULL) {
        return 0; /* cpu, memory, ephemeral-storage, hugepages-... */
    }
    for (i = 0; i < sizeof(gpu_devices) / sizeof(gpu_devices[0]); i++) {
        if (strcmp(name, gpu_devices[i]) == 0) {
            return 1;
        }
    }
    /* MIG slices ("nvidia.com/mig-1g.5gb"): each unit is a GPU instance */
    return strncmp(name, "nvidia.com/mig-", 15) == 0;
}

int krc_report_is_accelerator_status(const char *name)
{
    return name != NULL && (krc_report_is_gpu_resource(name) || strncmp(name, "claim:", 6) == 0);
}

size_t krc_report_unhealthy_accelerators(const struct krc_report_container *c,
                                         const struct krc_report_resource_health **ret_rh,
                                         const struct krc_report_device_health **ret_dev,
                                         int *ret_listed)
{
    size_t n = 0;

    *ret_rh = NULL;
    *ret_dev = NULL;
    if (ret_listed != NULL) {
        *ret_listed = 0;
    }
    for (size_t i = 0; c->resource_health != NULL && i < c->n_resource_health; i++) {
        const struct krc_report_resource_health *rh = &c->resource_health[i];

        if (!krc_report_is_accelerator_status(rh->name)) {
            continue;
        }
        if (ret_listed != NULL) {
            *ret_listed = 1;
        }
        for (size_t j = 0; rh->resources != NULL && j < rh->n_resources; j++) {
            const struct krc_report_device_health *d = &rh->resources[j];

            if (d->health != NULL && strcmp(d->health, "Unhealthy") == 0 && n++ == 0) {
                *ret_rh = rh;
                *ret_dev = d;
            }
        }
    }
    return n;
}

int krc_report_json_may_name_gpu_resource(const char *json, size_t len)
{
    const char *p = json;
    const char *end;

    if (json == NULL) {
        return 0;
    }
    end = json + len;
    /* every '/' of the text: is what stands before it, from a quote, the
     * domain of a device resource ("nvidia.com" of "nvidia.com/gpu", also
     * MIG's "nvidia.com/mig-..."; a '/' written escaped as "\/" too) */
    while (p < end && (p = memchr(p, '/', (size_t)(end - p))) != NULL) {
        const char *stop = p > json && p[-1] == '\\' ? p - 1 : p;
        for (size_t i = 0; i < sizeof(gpu_devices) / sizeof(gpu_devices[0]); i++) {
            size_t dl = (size_t)(strchr(gpu_devices[i], '/') - gpu_devices[i]);
            if ((size_t)(stop - json) > dl && stop[-(ptrdiff_t)dl - 1] == '"' &&
                memcmp(stop - dl, gpu_devices[i], dl) == 0) {
                return 1;
            }
        }
        p++;
    }
    return 0;
}

static long quantity_whole(const char *q)
{
    char *end = NULL;
    long v;

    if (q == NULL) {
        return 0;
    }
    errno = 0;
    v = strtol(q, &end, 10);
    if (errno != 0 || end == q || *end != '\0' || v < 0) {
        return 0;
    }
    return v;
}

long krc_report_container_gpus(const struct krc_report_container *c)
{
    const struct krc_kv_list *l = c->limits.n > 0 ? &c->limits : &c->requests;
    long sum = 0;
    size_t i;

    for (i = 0; i < l->n; i++) {
        if (krc_report_is_gpu_resource(l->items[i].key)) {
            long v = quantity_whole(l->items[i].value);
            if (v > 0 && sum < 1000000) {
                sum += v;
            }
        }
    }
    /* Limits listed without the GPU but requests with it. */
    if (sum == 0 && l == &c->limits) {
        for (i = 0; i < c->requests.n; i++) {
            if (krc_report_is_gpu_resource(c->requests.items[i].key)) {
                long v = quantity_whole(c->requests.items[i].value);
                if (v > 0 && sum < 1000000) {
                    sum += v;
                }
            }
        }
    }
    return sum;
}

long krc_report_gpu_count(const struct krc_report *r)
{
    long running = 0;
    long init_max = 0;
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        long g = krc_report_container_gpus(c);
        if (c->is_init && !c->is_sidecar) {
            if (g > init_max) {
                init_max = g;
            }
        } else {
            running += g;
        }
    }
    return running > init_max ? running : init_max;
}

/* ---- redaction ------------------------------------------------------------ */

struct redact_ctx {
    const struct krc_redactor *rd;
    int count;
    int rc; /* the first failure */
};

static void red_str(struct redact_ctx *x, const char *key, char **s)
{
    struct krc_error e;
    int n;

    krc_error_clear(&e);
    n = krc_redact_in_place(x->rd, key, s, &e);
    if (n > 0) {
        x->count += n;
    } else if (n < 0 && x->rc == 0) {
        x->rc = n;
    }
}

static void red_kv(struct redact_ctx *x, struct krc_kv_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        red_str(x, l->items[i].key != NULL ? l->items[i].key : "", &l->items[i].value);
    }
}

static void red_term(struct redact_ctx *x, struct krc_report_term *t)
{
    red_str(x, NULL, &t->message);
}

/* The previous log: redacted bytes replace it; a log that cannot be redacted
 * is dropped (with a note), never kept as it was. */
static void red_log(struct redact_ctx *x, struct krc_report *r)
{
    struct krc_buf b;
    int n;

    if (r->log == NULL || r->log_len == 0) {
        return;
    }
    krc_buf_init(&b, 3 * r->log_len + 1024);
    n = krc_redact_apply(x->rd, r->log, r->log_len, &b, NULL);
    if (n > 0) {
        size_t len = b.len;
        char *red = krc_buf_take(&b);
        if (red == NULL) {
            n = KRC_ENOMEM;
        } else {
            krc_free(r->log);
            r->log = (unsigned char *)red;
            r->log_len = len;
            x->count += n;
        }
    }
    krc_buf_cleanup(&b);
    if (n < 0) {
        unsigned flags = r->log_flags;
        krc_report_clear_log(r);
        r->log_flags = (flags & ~(unsigned)KRC_REPORT_LOG_EMPTY) | KRC_REPORT_LOG_ABSENT;
        krc_report_add_note(r, "the previous log was left out: it could not be redacted (%s)",
                            n == KRC_ETOOBIG ? "too large" : "out of memory");
        if (x->rc == 0) {
            x->rc = n;
        }
    }
}

int krc_report_redact(struct krc_report *r, const struct krc_redactor *rd, struct krc_error *err)
{
    struct redact_ctx x = {rd, 0, 0};

    red_str(&x, NULL, &r->pod_message);
    red_kv(&x, &r->labels);
    red_kv(&x, &r->annotations);
    for (size_t i = 0; i < r->n_containers; i++) {
        struct krc_report_container *c = &r->containers[i];
        red_str(&x, NULL, &c->state_message);
        red_term(&x, &c->state_term);
        red_term(&x, &c->last);
        for (size_t j = 0; j < c->n_resource_health; j++) {
            for (size_t k = 0; k < c->resource_health[j].n_resources; k++) {
                red_str(&x, NULL, &c->resource_health[j].resources[k].message);
            }
        }
    }
    for (size_t i = 0; i < r->n_conditions; i++) {
        red_str(&x, NULL, &r->conditions[i].message);
    }
    for (size_t i = 0; i < r->n_claim_statuses; i++) { /* a ResourceClaim's device conditions */
        for (size_t j = 0; j < r->claim_statuses[i].n_devices; j++) {
            struct krc_report_claim_device *d = &r->claim_statuses[i].devices[j];
            for (size_t k = 0; k < d->n_conditions; k++) {
                red_str(&x, NULL, &d->conditions[k].message);
            }
        }
    }
    for (size_t i = 0; i < r->n_events; i++) {
        red_str(&x, NULL, &r->events[i].message);
    }
    for (size_t i = 0; i < r->node.n_conditions; i++) {
        red_str(&x, NULL, &r->node.conditions[i].message);
    }
    for (size_t i = 0; i < r->n_notes; i++) {
        red_str(&x, NULL, &r->notes[i]);
    }
    red_log(&x, r);
    if (x.rc < 0) {
        return krc_error_set(err, x.rc,
                             "report redaction: %s; the texts it could not redact were replaced "
                             "or left out",
                             x.rc == KRC_ETOOBIG ? "a text too large" : "out of memory");
    }
    return x.count;
}
