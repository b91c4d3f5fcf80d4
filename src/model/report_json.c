/* Restart report + diagnosis -> one bounded, redacted, valid UTF-8 JSON
 * document (the store's full diagnostics). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/logtail.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc/model/report_json.h"

/* ---- sanitising --------------------------------------------------------------------- */

int krc_report_json_sanitize(struct krc_buf *out, const void *data, size_t len, int keep_newlines)
{
    return krc_text_sanitize(out, data, len, KRC_TEXT_STRIP | (keep_newlines ? KRC_TEXT_LINES : 0));
}

/* ---- building ------------------------------------------------------------------------ */

struct ctx {
    const struct krc_redactor *rd;
    int rc;
};

static void fail(struct ctx *c, int rc)
{
    if (c->rc == 0) {
        c->rc = rc;
    }
}

static void attach(struct ctx *c, cJSON *o, const char *k, cJSON *item)
{
    if (item == NULL) {
        fail(c, KRC_ENOMEM);
        return;
    }
    if (c->rc != 0 || o == NULL ||
        !(cJSON_IsArray(o) ? cJSON_AddItemToArray(o, item) : cJSON_AddItemToObject(o, k, item))) {
        cJSON_Delete(item);
        fail(c, KRC_ENOMEM);
    }
}

static cJSON *obj(struct ctx *c, cJSON *parent, const char *k)
{
    cJSON *o = cJSON_CreateObject();
    attach(c, parent, k, o);
    return c->rc == 0 ? o : NULL;
}

static cJSON *arr(struct ctx *c, cJSON *parent, const char *k)
{
    cJSON *o = cJSON_CreateArray();
    attach(c, parent, k, o);
    return c->rc == 0 ? o : NULL;
}

/* A cleaned (and, when `redact`, redacted) copy of len bytes, at most max;
 * `key` not NULL: the value of a field of that name (krc_redact_field: the
 * whole value when the name is a secret's). */
static cJSON *text_item(struct ctx *c, const char *key, const char *v, size_t len, size_t max,
                        int redact, int keep_newlines)
{
    struct krc_buf red;
    struct krc_buf out;
    cJSON *item = NULL;
    int rc = 0;

    if (v == NULL) {
        return cJSON_CreateNull();
    }
    krc_buf_init(&red, 2 * max + 1024);
    krc_buf_init(&out, max);
    if (redact) {
        rc = key != NULL ? krc_redact_field(c->rd, key, v, len, &red, NULL)
                         : krc_redact_apply(c->rd, v, len, &red, NULL);
        if (rc == KRC_ETOOBIG || rc >= 0) {
            rc = 0;
            v = red.data != NULL ? red.data : "";
            len = red.len;
        }
    }
    if (rc == 0) {
        rc = krc_report_json_sanitize(&out, v, len, keep_newlines);
    }
    if (rc == 0 || rc == KRC_ETOOBIG) {
        item = cJSON_CreateString(krc_buf_str(&out));
    }
    if (rc == KRC_ENOMEM) {
        fail(c, KRC_ENOMEM);
    }
    krc_buf_cleanup(&red);
    krc_buf_cleanup(&out);
    return item;
}

static void add_text(struct ctx *c, cJSON *o, const char *k, const char *v, int redact)
{
    if (c->rc == 0) {
        attach(
            c, o, k,
            text_item(c, NULL, v, v != NULL ? strlen(v) : 0, KRC_REPORT_JSON_TEXT_MAX, redact, 1));
    }
}

/* The value of a label or an annotation: redacted by its key too. */
static void add_field(struct ctx *c, cJSON *o, const char *k, const char *v)
{
    if (c->rc == 0) {
        attach(c, o, k,
               text_item(c, k, v, v != NULL ? strlen(v) : 0, KRC_REPORT_JSON_TEXT_MAX, 1, 1));
    }
}

static void add_num(struct ctx *c, cJSON *o, const char *k, double v)
{
    if (c->rc == 0) {
        attach(c, o, k, cJSON_CreateNumber(v));
    }
}

static void add_null(struct ctx *c, cJSON *o, const char *k)
{
    if (c->rc == 0) {
        attach(c, o, k, cJSON_CreateNull());
    }
}

static void add_bool(struct ctx *c, cJSON *o, const char *k, int v)
{
    if (c->rc == 0) {
        attach(c, o, k, cJSON_CreateBool(v != 0));
    }
}

static void add_time(struct ctx *c, cJSON *o, const char *k, int64_t t)
{
    char ts[40];
    if (c->rc != 0) {
        return;
    }
    if (t <= 0) {
        attach(c, o, k, cJSON_CreateNull());
        return;
    }
    krc_clock_format_rfc3339(t, ts, sizeof(ts));
    attach(c, o, k, cJSON_CreateString(ts));
}

static void add_kv(struct ctx *c, cJSON *o, const char *k, const struct krc_kv_list *l, int redact)
{
    cJSON *m = obj(c, o, k);
    for (size_t i = 0; c->rc == 0 && i < l->n; i++) {
        if (strcmp(l->items[i].key, "kubectl.kubernetes.io/last-applied-configuration") == 0) {
            continue; /* the whole manifest, environment values included */
        }
        if (redact) {
            add_field(c, m, l->items[i].key, l->items[i].value);
        } else {
            add_text(c, m, l->items[i].key, l->items[i].value, 0);
        }
    }
}

/* ---- Kubernetes 1.33+ fields: written only when the pod has them, so
 * that the document of an older pod is byte for byte what it was. ---- */

/* "KEY_omitted": n, only when a capped list left some out. */
static void add_omitted(struct ctx *c, cJSON *o, const char *k, size_t n)
{
    char key[64];

    if (n > 0) {
        snprintf(key, sizeof(key), "%s_omitted", k);
        add_num(c, o, key, (double)n);
    }
}

static void add_resources(struct ctx *c, cJSON *o, const char *k, const struct krc_kv_list *limits,
                          const struct krc_kv_list *requests)
{
    cJSON *res = obj(c, o, k);
    add_kv(c, res, "limits", limits, 0);
    add_kv(c, res, "requests", requests, 0);
}

/* The pod conditions written: those that say why containers restarted or
 * stopped (docs/design/kubernetes-1.33-fields.md). PodScheduled, Initialized,
 * ContainersReady and Ready stay in the model only. */
static int condition_written(const char *type)
{
    static const char *const types[] = {"AllContainersRestarting", "DisruptionTarget",
                                        "PodReadyToStartContainers", "PodResizeInProgress",
                                        "PodResizePending"};
    for (size_t i = 0; type != NULL && i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(type, types[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* What the collector read of a ResourceClaim: "allocated" and its devices,
 * each with the conditions its driver reported (status.devices). */
static void add_claim(struct ctx *c, cJSON *o, const struct krc_report_claim_status *cs)
{
    cJSON *a;

    add_bool(c, o, "allocated", cs->allocated);
    a = arr(c, o, "devices");
    for (size_t i = 0; c->rc == 0 && i < cs->n_devices; i++) {
        const struct krc_report_claim_device *d = &cs->devices[i];
        cJSON *dj = obj(c, a, NULL);
        add_text(c, dj, "request", d->request, 0);
        add_text(c, dj, "driver", d->driver, 0);
        add_text(c, dj, "pool", d->pool, 0);
        add_text(c, dj, "device", d->device, 0);
        if (d->has_status) {
            cJSON *ca = arr(c, dj, "conditions");
            for (size_t j = 0; c->rc == 0 && j < d->n_conditions; j++) {
                const struct krc_report_pod_condition *k = &d->conditions[j];
                cJSON *co = obj(c, ca, NULL);
                add_text(c, co, "type", k->type, 0);
                add_text(c, co, "status", k->status, 0);
                add_text(c, co, "reason", k->reason, 0);
                add_text(c, co, "message", k->message, 1);
            }
            add_omitted(c, dj, "conditions", d->conditions_omitted);
        }
    }
    add_omitted(c, o, "devices", cs->devices_omitted);
}

static void add_pod_fields(struct ctx *c, cJSON *p, const struct krc_report *r)
{
    cJSON *a = NULL;

    if (r->has_generation) {
        add_num(c, p, "generation", (double)r->generation);
    }
    if (r->has_observed_generation) {
        add_num(c, p, "observed_generation", (double)r->observed_generation);
    }
    if (r->deletion_timestamp > 0) {
        add_time(c, p, "deletion_timestamp", r->deletion_timestamp);
    }
    if (r->has_deletion_grace) {
        add_num(c, p, "deletion_grace_period", (double)r->deletion_grace);
    }
    if (r->has_pod_resources) {
        add_resources(c, p, "resources", &r->pod_limits, &r->pod_requests);
    }
    for (size_t i = 0; c->rc == 0 && i < r->n_conditions; i++) {
        const struct krc_report_pod_condition *k = &r->conditions[i];
        cJSON *o;
        if (!condition_written(k->type)) {
            continue;
        }
        if (a == NULL) {
            a = arr(c, p, "conditions");
        }
        o = obj(c, a, NULL);
        add_text(c, o, "type", k->type, 0);
        add_text(c, o, "status", k->status, 0);
        add_text(c, o, "reason", k->reason, 0);
        add_text(c, o, "message", k->message, 1);
        add_time(c, o, "last_transition", k->last_transition);
        if (k->has_observed_generation) {
            add_num(c, o, "observed_generation", (double)k->observed_generation);
        }
    }
    if (r->n_claim_statuses > 0) {
        a = arr(c, p, "resource_claim_statuses");
        for (size_t i = 0; c->rc == 0 && i < r->n_claim_statuses; i++) {
            cJSON *o = obj(c, a, NULL);
            add_text(c, o, "name", r->claim_statuses[i].name, 0);
            add_text(c, o, "resource_claim_name", r->claim_statuses[i].resource_claim_name, 0);
            if (r->claim_statuses[i].fetched) {
                add_claim(c, o, &r->claim_statuses[i]);
            }
        }
    }
    add_omitted(c, p, "resource_claim_statuses", r->claim_statuses_omitted);
}

static void add_container_fields(struct ctx *c, cJSON *o, const struct krc_report_container *k)
{
    cJSON *a;

    /* a sidecar's Always is what is_sidecar says already */
    if (k->restart_policy != NULL && !(k->is_init && strcmp(k->restart_policy, "Always") == 0)) {
        add_text(c, o, "restart_policy", k->restart_policy, 0);
    }
    if (k->n_restart_rules > 0) {
        a = arr(c, o, "restart_policy_rules");
        for (size_t i = 0; c->rc == 0 && i < k->n_restart_rules; i++) {
            const struct krc_report_restart_rule *rule = &k->restart_rules[i];
            cJSON *ro = obj(c, a, NULL);
            cJSON *codes;
            cJSON *vals;
            add_text(c, ro, "action", rule->action, 0);
            if (!rule->has_exit_codes) {
                add_null(c, ro, "exit_codes");
                continue;
            }
            codes = obj(c, ro, "exit_codes");
            add_text(c, codes, "operator", rule->op, 0);
            vals = arr(c, codes, "values");
            for (size_t j = 0; c->rc == 0 && j < rule->n_values; j++) {
                add_num(c, vals, NULL, rule->values[j]);
            }
            add_omitted(c, codes, "values", rule->values_omitted);
        }
    }
    add_omitted(c, o, "restart_policy_rules", k->restart_rules_omitted);
    if (k->n_resize_policy > 0) {
        a = arr(c, o, "resize_policy");
        for (size_t i = 0; c->rc == 0 && i < k->n_resize_policy; i++) {
            cJSON *ro = obj(c, a, NULL);
            add_text(c, ro, "resource_name", k->resize_policy[i].resource_name, 0);
            add_text(c, ro, "restart_policy", k->resize_policy[i].restart_policy, 0);
        }
    }
    add_omitted(c, o, "resize_policy", k->resize_policy_omitted);
    if (k->stop_signal != NULL) {
        add_text(c, o, "stop_signal", k->stop_signal, 0);
    }
    if (k->has_status_resources) {
        add_resources(c, o, "status_resources", &k->status_limits, &k->status_requests);
    }
    if (k->n_resource_health > 0) {
        a = arr(c, o, "allocated_resources_status");
        for (size_t i = 0; c->rc == 0 && i < k->n_resource_health; i++) {
            const struct krc_report_resource_health *h = &k->resource_health[i];
            cJSON *ho = obj(c, a, NULL);
            cJSON *devs;
            add_text(c, ho, "name", h->name, 0);
            devs = arr(c, ho, "resources");
            for (size_t j = 0; c->rc == 0 && j < h->n_resources; j++) {
                cJSON *d = obj(c, devs, NULL);
                add_text(c, d, "resource_id", h->resources[j].resource_id, 0);
                add_text(c, d, "health", h->resources[j].health, 0);
                add_text(c, d, "message", h->resources[j].message, 1);
            }
            add_omitted(c, ho, "resources", h->resources_omitted);
        }
    }
    add_omitted(c, o, "allocated_resources_status", k->resource_health_omitted);
}

static void add_pod(struct ctx *c, cJSON *root, const struct krc_report *r)
{
    cJSON *p = obj(c, root, "pod");
    cJSON *o;

    add_text(c, p, "namespace", r->namespace, 0);
    add_text(c, p, "name", r->name, 0);
    add_text(c, p, "uid", r->uid, 0);
    add_text(c, p, "node", r->node_name, 0);
    o = obj(c, p, "owner");
    add_text(c, o, "kind", r->owner_kind, 0);
    add_text(c, o, "name", r->owner_name, 0);
    o = obj(c, p, "workload");
    add_text(c, o, "kind", r->workload_kind, 0);
    add_text(c, o, "name", r->workload_name, 0);
    add_time(c, p, "created_at", r->created_at);
    add_text(c, p, "phase", r->phase, 0);
    add_text(c, p, "reason", r->pod_reason, 0);
    add_text(c, p, "message", r->pod_message, 1);
    add_text(c, p, "restart_policy", r->restart_policy, 0);
    add_num(c, p, "grace_period", (double)r->grace_period);
    add_text(c, p, "slack_channel", r->slack_channel, 0);
    add_kv(c, p, "labels", &r->labels, 1);
    add_kv(c, p, "annotations", &r->annotations, 1);
    add_pod_fields(c, p, r);
}

/* An array of redacted, cleaned texts. */
static void add_texts(struct ctx *c, cJSON *o, const char *k, char *const *v, size_t n)
{
    cJSON *a = arr(c, o, k);
    for (size_t i = 0; c->rc == 0 && i < n; i++) {
        add_text(c, a, NULL, v[i], 1);
    }
}

static void add_diagnosis(struct ctx *c, cJSON *root, const struct krc_diagnosis *d)
{
    cJSON *o;

    if (d == NULL) {
        attach(c, root, "diagnosis", cJSON_CreateNull());
        return;
    }
    o = obj(c, root, "diagnosis");
    add_text(c, o, "container", d->container, 0);
    add_bool(c, o, "is_init", d->is_init);
    add_bool(c, o, "is_sidecar", d->is_sidecar);
    add_text(c, o, "cause", krc_cause_name(d->cause), 0);
    if (d->intentional) {
        add_bool(c, o, "intentional", 1); /* absent when not: older documents unchanged */
    }
    add_bool(c, o, "has_termination", d->has_termination);
    add_num(c, o, "exit_code", d->exit_code);
    add_num(c, o, "signal", d->signal);
    add_text(c, o, "signal_name", d->signal_name, 0);
    add_text(c, o, "reason", d->reason, 0);
    if (d->restart_count_known) {
        add_num(c, o, "restart_count", d->restart_count);
    } else {
        add_null(c, o, "restart_count");
    }
    add_time(c, o, "started_at", d->started_at);
    add_time(c, o, "finished_at", d->finished_at);
    add_num(c, o, "gpus", (double)d->gpus);
    add_text(c, o, "confidence", krc_confidence_name(d->confidence), 0);
    add_text(c, o, "summary", d->summary, 1);
    add_texts(c, o, "evidence", d->evidence, d->n_evidence);
    add_texts(c, o, "unchecked", d->unchecked, d->n_unchecked);
    add_text(c, o, "next_step", d->next_step, 1);
    add_texts(c, o, "commands", d->commands, d->n_commands);
}

static const char *state_name(enum krc_report_state s)
{
    switch (s) {
    case KRC_REPORT_STATE_WAITING:
        return "waiting";
    case KRC_REPORT_STATE_RUNNING:
        return "running";
    case KRC_REPORT_STATE_TERMINATED:
        return "terminated";
    default:
        return NULL;
    }
}

static void add_term(struct ctx *c, cJSON *o, const char *k, const struct krc_report_term *t)
{
    cJSON *l;

    if (!t->present) {
        attach(c, o, k, cJSON_CreateNull());
        return;
    }
    l = obj(c, o, k);
    add_num(c, l, "exit_code", t->exit_code);
    add_num(c, l, "signal", t->signal);
    add_text(c, l, "reason", t->reason, 0);
    add_text(c, l, "message", t->message, 1);
    add_time(c, l, "started_at", t->started_at);
    add_time(c, l, "finished_at", t->finished_at);
    add_text(c, l, "container_id", t->container_id, 0);
}

static void add_containers(struct ctx *c, cJSON *root, const struct krc_report *r)
{
    cJSON *a = arr(c, root, "containers");

    for (size_t i = 0; c->rc == 0 && i < r->n_containers; i++) {
        const struct krc_report_container *k = &r->containers[i];
        cJSON *o = obj(c, a, NULL);
        cJSON *p;
        add_text(c, o, "name", k->name, 0);
        add_bool(c, o, "is_init", k->is_init);
        add_bool(c, o, "is_sidecar", k->is_sidecar);
        add_text(c, o, "image", k->image, 0);
        add_bool(c, o, "ready", k->ready);
        add_num(c, o, "restart_count", k->restart_count);
        add_text(c, o, "state", state_name(k->state), 0);
        add_text(c, o, "state_reason", k->state_reason, 0);
        add_text(c, o, "state_message", k->state_message, 1);
        add_time(c, o, "state_started_at", k->state_started_at);
        add_term(c, o, "last", &k->last);
        add_kv(c, o, "limits", &k->limits, 0);
        add_kv(c, o, "requests", &k->requests, 0);
        p = obj(c, o, "probes");
        add_bool(c, p, "liveness", k->has_liveness);
        add_bool(c, p, "readiness", k->has_readiness);
        add_bool(c, p, "startup", k->has_startup);
        add_text(c, o, "termination_message_policy", k->termination_message_policy, 0);
        add_container_fields(c, o, k);
    }
}

static void add_events(struct ctx *c, cJSON *root, const struct krc_report *r)
{
    cJSON *a = arr(c, root, "events");

    for (size_t i = 0; c->rc == 0 && i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        cJSON *o = obj(c, a, NULL);
        cJSON *x;
        add_text(c, o, "type", e->type, 0);
        add_text(c, o, "reason", e->reason, 0);
        add_text(c, o, "message", e->message, 1);
        add_num(c, o, "count", e->count);
        add_time(c, o, "first", e->first_timestamp);
        add_time(c, o, "last", e->last_timestamp);
        x = obj(c, o, "object");
        add_text(c, x, "kind", e->object_kind, 0);
        add_text(c, x, "namespace", e->object_namespace, 0);
        add_text(c, x, "name", e->object_name, 0);
        add_text(c, o, "field_path", e->field_path, 0);
        x = obj(c, o, "source");
        add_text(c, x, "component", e->source_component, 0);
        add_text(c, x, "host", e->source_host, 0);
    }
}

static void add_node(struct ctx *c, cJSON *root, const struct krc_report_node *n)
{
    cJSON *o;
    cJSON *a;

    if (!n->present) {
        attach(c, root, "node", cJSON_CreateNull());
        return;
    }
    o = obj(c, root, "node");
    add_text(c, o, "name", n->name, 0);
    a = arr(c, o, "conditions");
    for (size_t i = 0; c->rc == 0 && i < n->n_conditions; i++) {
        cJSON *k = obj(c, a, NULL);
        add_text(c, k, "type", n->conditions[i].type, 0);
        add_text(c, k, "status", n->conditions[i].status, 0);
        add_text(c, k, "reason", n->conditions[i].reason, 0);
        add_text(c, k, "message", n->conditions[i].message, 1);
    }
    add_kv(c, o, "capacity", &n->capacity, 0);
    add_kv(c, o, "allocatable", &n->allocatable, 0);
    add_text(c, o, "kubelet_version", n->kubelet_version, 0);
    add_text(c, o, "container_runtime_version", n->container_runtime_version, 0);
    add_text(c, o, "kernel_version", n->kernel_version, 0);
    add_text(c, o, "os_image", n->os_image, 0);
    add_bool(c, o, "unschedulable", n->unschedulable);
}

static void add_log(struct ctx *c, cJSON *root, const struct krc_report *r)
{
    cJSON *o = obj(c, root, "log");
    const unsigned char *data = r->log;
    size_t len = r->log != NULL ? r->log_len : 0;
    size_t omitted = 0;

    add_text(c, o, "container", r->log_container, 0);
    add_num(c, o, "bytes", (double)len);
    add_bool(c, o, "absent", (r->log_flags & KRC_REPORT_LOG_ABSENT) != 0);
    add_bool(c, o, "empty", (r->log_flags & KRC_REPORT_LOG_EMPTY) != 0);
    add_bool(c, o, "truncated", (r->log_flags & KRC_REPORT_LOG_TRUNCATED) != 0);
    add_bool(c, o, "kubelet_timestamps", (r->log_flags & KRC_REPORT_LOG_TIMESTAMPS) != 0);
    if (r->log_cut.known) {
        /* what the collector (or krc explain) cut before keeping the log */
        char note[320];
        cJSON *cut = obj(c, o, "cut");
        add_num(c, cut, "received_bytes", (double)r->log_cut.received);
        add_num(c, cut, "dropped_bytes", (double)r->log_cut.dropped);
        add_bool(c, cut, "head_line_cut", r->log_cut.head_cut);
        add_num(c, cut, "transfer_limit_bytes", (double)r->log_cut.cap);
        add_bool(c, cut, "transfer_limit_hit", r->log_cut.capped);
        krc_logtail_describe(&r->log_cut, note, sizeof(note));
        add_text(c, cut, "note", note[0] != '\0' ? note : NULL, 0);
    }
    if (len > KRC_REPORT_JSON_LOG_MAX) {
        /* keep the end, starting at a line when one starts soon enough */
        size_t start = len - KRC_REPORT_JSON_LOG_MAX;
        const unsigned char *nl = memchr(data + start, '\n', 4096);
        if (nl != NULL) {
            start = (size_t)(nl - data) + 1;
        }
        omitted = start;
        data += start;
        len -= start;
    }
    add_num(c, o, "omitted_bytes", (double)omitted);
    if (c->rc == 0) {
        attach(c, o, "text",
               data != NULL
                   ? text_item(c, NULL, (const char *)data, len, KRC_REPORT_JSON_LOG_MAX, 1, 1)
                   : cJSON_CreateNull());
    }
}

/* "what_changed": {"summary": LINE, "changes": [..]}, only when the report
 * has a line (the change objects as the tracker wrote them; a list that
 * does not parse as a JSON array is left out, never passed on as text). */
static void add_what_changed(struct ctx *c, cJSON *root, const struct krc_report *r)
{
    cJSON *o;
    cJSON *changes = NULL;

    if (c->rc != 0 || r->what_changed == NULL) {
        return;
    }
    o = obj(c, root, "what_changed");
    add_text(c, o, "summary", r->what_changed, 1);
    if (r->changes_json != NULL) {
        changes = cJSON_Parse(r->changes_json);
        if (changes != NULL && !cJSON_IsArray(changes)) {
            cJSON_Delete(changes);
            changes = NULL;
        }
    }
    attach(c, o, "changes", changes != NULL ? changes : cJSON_CreateArray());
}

int krc_report_json_build(const struct krc_report *r, const struct krc_diagnosis *d,
                          const struct krc_redactor *rd, char **ret_json, struct krc_error *err)
{
    struct ctx c = {rd, 0};
    cJSON *root = cJSON_CreateObject();
    cJSON *notes;
    char *text;
    char *out;

    if (root == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    add_num(&c, root, "version", KRC_REPORT_JSON_VERSION);
    add_pod(&c, root, r);
    add_diagnosis(&c, root, d);
    add_what_changed(&c, root, r);
    add_containers(&c, root, r);
    add_events(&c, root, r);
    add_node(&c, root, &r->node);
    notes = arr(&c, root, "notes");
    for (size_t i = 0; c.rc == 0 && i < r->n_notes; i++) {
        add_text(&c, notes, NULL, r->notes[i], 1);
    }
    add_log(&c, root, r);
    if (c.rc != 0) {
        cJSON_Delete(root);
        return krc_error_set(err, c.rc, "out of memory building the report JSON");
    }
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (text == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory building the report JSON");
    }
    /* hand out krc_malloc'd memory, whatever allocator cJSON uses */
    out = krc_strdup(text);
    cJSON_free(text);
    if (out == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory building the report JSON");
    }
    *ret_json = out;
    return 0;
}

/* ---- rows of the history ------------------------------------------------------ */

int krc_report_json_put(cJSON *o, const char *k, cJSON *item)
{
    if (o == NULL || item == NULL) {
        cJSON_Delete(item);
        return 0;
    }
    if (!cJSON_AddItemToObject(o, k, item)) {
        cJSON_Delete(item);
        return 0;
    }
    return 1;
}

cJSON *krc_report_json_str(const char *v)
{
    return v != NULL ? cJSON_CreateString(v) : cJSON_CreateNull();
}

cJSON *krc_report_json_time(int64_t t)
{
    char ts[40];
    if (t <= 0) {
        return cJSON_CreateNull();
    }
    krc_clock_format_rfc3339(t, ts, sizeof(ts));
    return cJSON_CreateString(ts);
}

cJSON *krc_report_json_doc(const char *text)
{
    cJSON *v;

    if (text == NULL) {
        return cJSON_CreateNull();
    }
    v = cJSON_Parse(text);
    return v != NULL ? v : cJSON_CreateString(text);
}
