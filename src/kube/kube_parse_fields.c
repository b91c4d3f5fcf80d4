/* The Pod fields Kubernetes 1.33-1.37 added to say why a container restarted,
 * read into the report (docs/design/kubernetes-1.33-fields.md gives each
 * field, the release it appeared in and the source of its shape):
 *
 *   spec.resources                                  pod-level limits/requests (KEP-2837)
 *   spec.containers[].restartPolicy, restartPolicyRules[]   (KEP-5307, KEP-5532)
 *   spec.containers[].resizePolicy[]                (KEP-1287)
 *   metadata.generation, status.observedGeneration  (KEP-5067)
 *   metadata.deletionTimestamp, deletionGracePeriodSeconds  (any release: a
 *                                                   sidecar's exit during deletion)
 *   status.conditions[]                             every type, observedGeneration too
 *   status.resourceClaimStatuses[]                  (DRA, KEP-4381)
 *   containerStatuses[].stopSignal                  (KEP-4960)
 *   containerStatuses[].allocatedResourcesStatus[]  (KEP-4680)
 *   containerStatuses[].resources                   actuated limits/requests (KEP-1287)
 *
 * and, of a ResourceClaim (resource.k8s.io/v1, DRA GA 1.34) that
 * status.resourceClaimStatuses names, what the collector GETs:
 *
 *   status.allocation.devices.results[] {request, driver, pool, device}
 *   status.devices[] {driver, pool, device, conditions[]}  (KEP-4817)
 *
 * Only the cJSON path of kube_parse (a restart's report) reads them; the
 * watch's scanner (kube_pod.c) does not, so the watch costs the same.
 *
 * All optional: a field of the wrong type is left out with a note that names
 * it (the rest of the pod is still read), lists are capped (KRC_REPORT_*_MAX,
 * the rest counted in *_omitted) and texts cut at KRC_REPORT_FIELD_TEXT_MAX
 * bytes; values the API may add later are kept as the text sent. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kube_parse_private.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

/* Entries kept of a limits or requests map. */
#define QUANTITIES_MAX 32

struct fx {
    struct krc_report *r;
    int rc; /* KRC_ENOMEM once an allocation failed */
};

static void nomem(struct fx *x)
{
    x->rc = KRC_ENOMEM;
}

/* A member that is there and not null. */
static const cJSON *child(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;

    return v == NULL || cJSON_IsNull(v) ? NULL : v;
}

/* A note naming a field left out: "PATH: expected WANT, got TYPE; left out". */
static void bad(struct fx *x, const char *path, const char *want, const cJSON *got)
{
    if (krc_report_add_note(x->r, "%s: expected %s, got %s; left out", path, want,
                            krc_kube_parse_type_name(got)) < 0) {
        nomem(x);
    }
}

/* A copy of at most KRC_REPORT_FIELD_TEXT_MAX bytes, cut before a UTF-8
 * continuation byte. */
static char *dup_text(struct fx *x, const char *s)
{
    size_t n = strlen(s);
    char *out;

    if (n > KRC_REPORT_FIELD_TEXT_MAX) {
        n = KRC_REPORT_FIELD_TEXT_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0u) == 0x80u) {
            n--;
        }
    }
    out = krc_malloc(n + 1);
    if (out == NULL) {
        nomem(x);
        return NULL;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

/* Optional string member `k` of `o` into *ret (NULL when absent). */
static void text(struct fx *x, const cJSON *o, const char *k, const char *path, char **ret)
{
    const cJSON *v = child(o, k);
    char full[200];

    if (v == NULL || x->rc != 0) {
        return;
    }
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        snprintf(full, sizeof(full), "%s.%s", path, k);
        bad(x, full, "a string", v);
        return;
    }
    krc_free(*ret);
    *ret = dup_text(x, v->valuestring);
}

/* An integer that fits in [lo, hi]. */
static int whole(const cJSON *v, double lo, double hi, int64_t *ret)
{
    double d;

    if (!cJSON_IsNumber(v)) {
        return 0;
    }
    d = v->valuedouble;
    /* in range first: the cast of a NaN or a huge value is undefined */
    if (!(d >= lo && d <= hi) || (double)(int64_t)d != d) {
        return 0;
    }
    *ret = (int64_t)d;
    return 1;
}

/* Optional integer member (generation, observedGeneration). */
static void integer(struct fx *x, const cJSON *o, const char *k, const char *path, int *has,
                    int64_t *ret)
{
    const cJSON *v = child(o, k);
    char full[200];

    if (v == NULL || x->rc != 0) {
        return;
    }
    if (!whole(v, 0, 9007199254740992.0, ret)) {
        snprintf(full, sizeof(full), "%s.%s", path, k);
        bad(x, full, "a whole number >= 0", v);
        return;
    }
    *has = 1;
}

/* Optional RFC 3339 time member into *ret (unix seconds; 0 when absent,
 * empty or before 1970). */
static void timestamp(struct fx *x, const cJSON *o, const char *k, const char *path, int64_t *ret)
{
    const cJSON *t = child(o, k);
    int64_t ts = 0;

    if (t == NULL || x->rc != 0) {
        return;
    }
    if (!cJSON_IsString(t) || t->valuestring == NULL ||
        (t->valuestring[0] != '\0' &&
         krc_parse_rfc3339(t->valuestring, strlen(t->valuestring), &ts) < 0)) {
        char full[300];
        snprintf(full, sizeof(full), "%s.%s", path, k);
        bad(x, full, "an RFC 3339 timestamp", t);
        return;
    }
    *ret = ts < 0 ? 0 : ts;
}

/* Optional member of the given kind (cJSON_Array / cJSON_Object). */
static const cJSON *typed(struct fx *x, const cJSON *o, const char *k, const char *path, int kind)
{
    const cJSON *v = child(o, k);
    char full[200];

    if (v == NULL || x->rc != 0) {
        return NULL;
    }
    if ((kind == cJSON_Array && !cJSON_IsArray(v)) ||
        (kind == cJSON_Object && !cJSON_IsObject(v))) {
        snprintf(full, sizeof(full), "%s.%s", path, k);
        bad(x, full, kind == cJSON_Array ? "an array" : "an object", v);
        return NULL;
    }
    return v;
}

/* Room for min(size of `a`, max) elements of `size` bytes; *omitted gets the
 * rest. NULL for an empty array (or on failure, x->rc set). */
static void *alloc_list(struct fx *x, const cJSON *a, size_t max, size_t size, size_t *omitted)
{
    int n = cJSON_GetArraySize(a);
    size_t keep = n > 0 ? (size_t)n : 0;
    void *p;

    *omitted = 0;
    if (keep > max) {
        *omitted = keep - max;
        keep = max;
    }
    if (keep == 0) {
        return NULL;
    }
    p = krc_calloc(keep, size);
    if (p == NULL) {
        nomem(x);
    }
    return p;
}

/* Reads one element of a list (an object) into slot. */
typedef void (*object_fn)(struct fx *x, const cJSON *item, const char *path, void *slot);

/* The objects of array `a` ("PARENT.KEY[i]" in notes), at most max of them,
 * each read by fn into a new list of `size`-byte elements, returned (*ret_n
 * read, *omitted the rest beyond max); an element that is not an object is
 * left out with a note. NULL for an empty array or out of memory (x->rc). */
static void *object_list(struct fx *x, const cJSON *a, const char *parent, const char *key,
                         size_t max, size_t size, size_t *ret_n, size_t *omitted, object_fn fn)
{
    char *list = alloc_list(x, a, max, size, omitted);
    const cJSON *it;
    char path[256];
    size_t i = 0;

    *ret_n = 0;
    cJSON_ArrayForEach(it, a)
    {
        if (x->rc != 0 || list == NULL || *ret_n == max) {
            break;
        }
        snprintf(path, sizeof(path), "%s.%s[%zu]", parent, key, i++);
        if (!cJSON_IsObject(it)) {
            bad(x, path, "an object", it);
            continue;
        }
        fn(x, it, path, list + (*ret_n)++ * size);
    }
    return list;
}

/* A limits/requests object: name -> quantity (a string; a bare number is
 * kept as written, as kube_parse does for the container's). */
static void quantities(struct fx *x, const cJSON *o, const char *path, struct krc_kv_list *l)
{
    const cJSON *it;
    size_t n = 0;
    size_t left = 0;
    char num[64];
    char full[200];

    cJSON_ArrayForEach(it, o)
    {
        const char *val = num;
        char *k;
        char *v;
        if (x->rc != 0 || it->string == NULL) {
            continue;
        }
        if (cJSON_IsString(it) && it->valuestring != NULL) {
            val = it->valuestring;
        } else if (cJSON_IsNumber(it)) {
            snprintf(num, sizeof(num), "%.17g", it->valuedouble);
        } else {
            snprintf(full, sizeof(full), "%s.%.60s", path, it->string);
            bad(x, full, "a quantity string", it);
            continue;
        }
        if (n == QUANTITIES_MAX) {
            left++;
            continue;
        }
        k = dup_text(x, it->string);
        v = dup_text(x, val);
        if (k != NULL && v != NULL && krc_kv_list_put(l, k, v) < 0) {
            nomem(x);
        }
        krc_free(k);
        krc_free(v);
        n++;
    }
    if (left > 0 && x->rc == 0 &&
        krc_report_add_note(x->r, "%s: %zu more resources left out", path, left) < 0) {
        nomem(x);
    }
}

/* {limits, requests} at o.k into the two lists; *has set when it is there. */
static void resources(struct fx *x, const cJSON *o, const char *k, const char *path, int *has,
                      struct krc_kv_list *limits, struct krc_kv_list *requests)
{
    const cJSON *res = typed(x, o, k, path, cJSON_Object);
    const cJSON *m;
    char base[200];
    char full[220];

    if (res == NULL) {
        return;
    }
    *has = 1;
    snprintf(base, sizeof(base), "%s.%s", path, k);
    if ((m = typed(x, res, "limits", base, cJSON_Object)) != NULL) {
        snprintf(full, sizeof(full), "%s.limits", base);
        quantities(x, m, full, limits);
    }
    if ((m = typed(x, res, "requests", base, cJSON_Object)) != NULL) {
        snprintf(full, sizeof(full), "%s.requests", base);
        quantities(x, m, full, requests);
    }
}

/* ---- spec.containers[] ------------------------------------------------ */

static void restart_rule(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_restart_rule *rule = slot;
    const cJSON *codes;
    const cJSON *vals;
    const cJSON *it;
    char base[200];
    size_t i = 0;

    text(x, js, "action", path, &rule->action);
    codes = typed(x, js, "exitCodes", path, cJSON_Object);
    if (codes == NULL) {
        return;
    }
    rule->has_exit_codes = 1;
    snprintf(base, sizeof(base), "%s.exitCodes", path);
    text(x, codes, "operator", base, &rule->op);
    vals = typed(x, codes, "values", base, cJSON_Array);
    if (vals == NULL) {
        return;
    }
    rule->values = alloc_list(x, vals, KRC_REPORT_RULE_CODES_MAX, sizeof(*rule->values),
                              &rule->values_omitted);
    cJSON_ArrayForEach(it, vals)
    {
        int64_t v;
        char full[220];
        if (x->rc != 0 || rule->values == NULL || rule->n_values == KRC_REPORT_RULE_CODES_MAX) {
            break;
        }
        if (!whole(it, (double)INT_MIN, (double)INT_MAX, &v)) {
            snprintf(full, sizeof(full), "%s.values[%zu]", base, i);
            bad(x, full, "an exit code", it);
        } else {
            rule->values[rule->n_values++] = (int)v;
        }
        i++;
    }
}

static void resize_policy(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_resize_policy *rp = slot;

    text(x, js, "resourceName", path, &rp->resource_name);
    text(x, js, "restartPolicy", path, &rp->restart_policy);
}

static void spec_container(struct fx *x, const cJSON *js, const char *path,
                           struct krc_report_container *c)
{
    const cJSON *a;

    text(x, js, "restartPolicy", path, &c->restart_policy);
    if ((a = typed(x, js, "restartPolicyRules", path, cJSON_Array)) != NULL) {
        c->restart_rules = object_list(x, a, path, "restartPolicyRules", KRC_REPORT_RULES_MAX,
                                       sizeof(*c->restart_rules), &c->n_restart_rules,
                                       &c->restart_rules_omitted, restart_rule);
    }
    if ((a = typed(x, js, "resizePolicy", path, cJSON_Array)) != NULL) {
        c->resize_policy = object_list(x, a, path, "resizePolicy", KRC_REPORT_RESIZE_MAX,
                                       sizeof(*c->resize_policy), &c->n_resize_policy,
                                       &c->resize_policy_omitted, resize_policy);
    }
}

/* ---- status.containerStatuses[] --------------------------------------- */

static void device_health(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_device_health *d = slot;

    text(x, js, "resourceID", path, &d->resource_id);
    text(x, js, "health", path, &d->health);
    text(x, js, "message", path, &d->message);
}

static void resource_health(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_resource_health *h = slot;
    const cJSON *a;

    text(x, js, "name", path, &h->name);
    if ((a = typed(x, js, "resources", path, cJSON_Array)) != NULL) {
        h->resources =
            object_list(x, a, path, "resources", KRC_REPORT_DEVICES_MAX, sizeof(*h->resources),
                        &h->n_resources, &h->resources_omitted, device_health);
    }
}

static void status_container(struct fx *x, const cJSON *js, const char *path,
                             struct krc_report_container *c)
{
    const cJSON *a;

    text(x, js, "stopSignal", path, &c->stop_signal);
    resources(x, js, "resources", path, &c->has_status_resources, &c->status_limits,
              &c->status_requests);
    if ((a = typed(x, js, "allocatedResourcesStatus", path, cJSON_Array)) != NULL) {
        c->resource_health =
            object_list(x, a, path, "allocatedResourcesStatus", KRC_REPORT_HEALTH_MAX,
                        sizeof(*c->resource_health), &c->n_resource_health,
                        &c->resource_health_omitted, resource_health);
    }
}

/* The report container of the k-th entry of a spec list (status 0) or a
 * status list (status 1) of this kind: kube_parse added the spec ones in
 * order and set status_index for the status ones, whatever their names. */
static struct krc_report_container *container_at(struct krc_report *r, int is_init, int status,
                                                 size_t k)
{
    size_t seen = 0;

    for (size_t i = 0; i < r->n_containers; i++) {
        struct krc_report_container *c = &r->containers[i];
        if (c->is_init != is_init) {
            continue;
        }
        if (status ? (c->has_status && c->status_index >= 0 && (size_t)c->status_index == k)
                   : (c->has_spec && seen++ == k)) {
            return c;
        }
    }
    return NULL;
}

static void containers(struct fx *x, const cJSON *parent, const char *key, const char *prefix,
                       int is_init, int status)
{
    const cJSON *a = child(parent, key);
    const cJSON *it;
    size_t k = 0;
    char path[200];

    /* kube_parse refused a list of the wrong type already */
    if (!cJSON_IsArray(a)) {
        return;
    }
    cJSON_ArrayForEach(it, a)
    {
        struct krc_report_container *c = container_at(x->r, is_init, status, k);
        snprintf(path, sizeof(path), "%s.%s[%zu]", prefix, key, k);
        k++;
        if (x->rc != 0) {
            return;
        }
        if (c == NULL || !cJSON_IsObject(it)) {
            continue;
        }
        if (status) {
            status_container(x, it, path, c);
        } else {
            spec_container(x, it, path, c);
        }
    }
}

/* ---- pod --------------------------------------------------------------- */

static void condition(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_pod_condition *c = slot;

    text(x, js, "type", path, &c->type);
    text(x, js, "status", path, &c->status);
    text(x, js, "reason", path, &c->reason);
    text(x, js, "message", path, &c->message);
    integer(x, js, "observedGeneration", path, &c->has_observed_generation,
            &c->observed_generation);
    timestamp(x, js, "lastTransitionTime", path, &c->last_transition);
}

static void claim_status(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_claim_status *c = slot;

    text(x, js, "name", path, &c->name);
    text(x, js, "resourceClaimName", path, &c->resource_claim_name);
}

static void conditions(struct fx *x, const cJSON *status)
{
    const cJSON *a = typed(x, status, "conditions", "status", cJSON_Array);
    struct krc_report *r = x->r;

    if (a != NULL) {
        r->conditions = object_list(x, a, "status", "conditions", KRC_REPORT_CONDITIONS_MAX,
                                    sizeof(*r->conditions), &r->n_conditions,
                                    &r->conditions_omitted, condition);
    }
}

static void claim_statuses(struct fx *x, const cJSON *status)
{
    const cJSON *a = typed(x, status, "resourceClaimStatuses", "status", cJSON_Array);
    struct krc_report *r = x->r;

    if (a != NULL) {
        r->claim_statuses =
            object_list(x, a, "status", "resourceClaimStatuses", KRC_REPORT_CLAIMS_MAX,
                        sizeof(*r->claim_statuses), &r->n_claim_statuses,
                        &r->claim_statuses_omitted, claim_status);
    }
}

int krc_kube_parse_pod_fields(const cJSON *pod, struct krc_report *r, struct krc_error *err)
{
    struct fx x = {r, 0};
    const cJSON *meta = child(pod, "metadata");
    const cJSON *spec = child(pod, "spec");
    const cJSON *status = child(pod, "status");

    /* kube_parse refused a metadata, spec or status that is not an object */
    if (cJSON_IsObject(meta)) {
        integer(&x, meta, "generation", "metadata", &r->has_generation, &r->generation);
        timestamp(&x, meta, "deletionTimestamp", "metadata", &r->deletion_timestamp);
        integer(&x, meta, "deletionGracePeriodSeconds", "metadata", &r->has_deletion_grace,
                &r->deletion_grace);
    }
    if (cJSON_IsObject(spec)) {
        resources(&x, spec, "resources", "spec", &r->has_pod_resources, &r->pod_limits,
                  &r->pod_requests);
        containers(&x, spec, "initContainers", "spec", 1, 0);
        containers(&x, spec, "containers", "spec", 0, 0);
    }
    if (cJSON_IsObject(status)) {
        integer(&x, status, "observedGeneration", "status", &r->has_observed_generation,
                &r->observed_generation);
        conditions(&x, status);
        claim_statuses(&x, status);
        containers(&x, status, "initContainerStatuses", "status", 1, 1);
        containers(&x, status, "containerStatuses", "status", 0, 1);
    }
    if (x.rc != 0) {
        return krc_error_set(err, x.rc, "out of memory");
    }
    return 0;
}

/* ---- a ResourceClaim (resource.k8s.io/v1) ------------------------------ */

static void claim_result(struct fx *x, const cJSON *js, const char *path, void *slot)
{
    struct krc_report_claim_device *d = slot;

    text(x, js, "request", path, &d->request);
    text(x, js, "driver", path, &d->driver);
    text(x, js, "pool", path, &d->pool);
    text(x, js, "device", path, &d->device);
}

/* Both NULL, or equal. */
static int same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* status.devices[i]: the conditions of the allocated device it names
 * (driver, pool, device); an entry for no allocated device is skipped. */
static void claim_device_status(struct fx *x, struct krc_report_claim_status *c, const cJSON *js,
                                const char *path)
{
    char *driver = NULL;
    char *pool = NULL;
    char *device = NULL;
    const cJSON *a;

    text(x, js, "driver", path, &driver);
    text(x, js, "pool", path, &pool);
    text(x, js, "device", path, &device);
    for (size_t i = 0; x->rc == 0 && i < c->n_devices; i++) {
        struct krc_report_claim_device *d = &c->devices[i];
        if (d->has_status || !same_text(d->driver, driver) || !same_text(d->pool, pool) ||
            !same_text(d->device, device)) {
            continue;
        }
        d->has_status = 1;
        if ((a = typed(x, js, "conditions", path, cJSON_Array)) != NULL) {
            d->conditions = object_list(x, a, path, "conditions", KRC_REPORT_CLAIM_CONDS_MAX,
                                        sizeof(*d->conditions), &d->n_conditions,
                                        &d->conditions_omitted, condition);
        }
        break;
    }
    krc_free(driver);
    krc_free(pool);
    krc_free(device);
}

int krc_kube_parse_claim_fields(const cJSON *claim, struct krc_report *r,
                                struct krc_report_claim_status *c, struct krc_error *err)
{
    struct fx x = {r, 0};
    const cJSON *status = child(claim, "status");
    const cJSON *alloc;
    const cJSON *devs;
    const cJSON *a;
    const cJSON *it;
    char base[200];
    size_t i = 0;

    snprintf(base, sizeof(base), "ResourceClaim %.100s status",
             c->resource_claim_name ? c->resource_claim_name : "?");
    krc_report_claim_clear_devices(c);
    c->fetched = 1;
    if (status != NULL && !cJSON_IsObject(status)) {
        bad(&x, base, "an object", status);
        status = NULL;
    }
    alloc = status != NULL ? typed(&x, status, "allocation", base, cJSON_Object) : NULL;
    if (alloc != NULL) {
        char path[240];
        c->allocated = 1;
        snprintf(path, sizeof(path), "%s.allocation", base);
        devs = typed(&x, alloc, "devices", path, cJSON_Object);
        snprintf(path, sizeof(path), "%s.allocation.devices", base);
        if (devs != NULL && (a = typed(&x, devs, "results", path, cJSON_Array)) != NULL) {
            c->devices =
                object_list(&x, a, path, "results", KRC_REPORT_CLAIM_DEVICES_MAX,
                            sizeof(*c->devices), &c->n_devices, &c->devices_omitted, claim_result);
        }
    }
    a = status != NULL ? typed(&x, status, "devices", base, cJSON_Array) : NULL;
    cJSON_ArrayForEach(it, a)
    {
        char path[240];
        if (x.rc != 0) {
            break;
        }
        snprintf(path, sizeof(path), "%s.devices[%zu]", base, i++);
        if (!cJSON_IsObject(it)) {
            bad(&x, path, "an object", it);
            continue;
        }
        claim_device_status(&x, c, it, path);
    }
    if (x.rc != 0) {
        krc_report_claim_clear_devices(c);
        return krc_error_set(err, x.rc, "out of memory");
    }
    return 0;
}
