/* Device health as a cause (issue 26): the kubelet reports, in
 * containerStatuses[].allocatedResourcesStatus (KEP-4680; device plugins
 * alpha 1.31, DRA 1.34, beta 1.36), the health of each device allocated to
 * the container: {name: a resource name or "claim:<claim>/<request>",
 * resources: [{resourceID, health: Healthy|Unhealthy|Unknown, message}]}.
 *
 * Rule 11, gpu_device_unhealthy: a container that failed (a non-zero exit,
 * or no exit code) while the kubelet reports an accelerator device it holds
 * Unhealthy. Accelerators are the device plugins' accelerator resources
 * (krc_report_is_gpu_resource: nvidia.com/gpu, amd.com/gpu, google.com/tpu,
 * MIG slices ...) and DRA claims, whose devices a DRA driver allocated.
 * `Unknown` says the kubelet could not tell: it is stated in the evidence
 * of whatever cause is named (krc_diag_device_evidence), never a cause by
 * itself; so is any device not Healthy of another resource.
 *
 * Its place (docs/causes.md): below what the kubelet or the kernel did and
 * said it did (rules 1-5: an OOM kill, an eviction, a probe's kill event, a
 * NotReady node, on which a device's health is a consequence) and below the
 * process that could not be started (rules 6-10: an image or spec defect
 * that fails on any device); above what the application wrote (rules
 * 12-19: a CUDA error, a GPU out of memory, a crash signal are what a
 * faulty device makes the application say). */
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"

/* Evidence lines about devices, at most; then one line counts the rest. */
#define DEVICE_LINES_MAX 4

static int is_unhealthy(const struct krc_report_device_health *d)
{
    return str_eq(d->health, "Unhealthy");
}

/* The request of a claim's device result is that request, or one of its
 * subrequests ("<request>/<subrequest>", a prioritized list). */
static int request_is(const char *result, const char *request, size_t request_len)
{
    return result != NULL && strncmp(result, request, request_len) == 0 &&
           (result[request_len] == '\0' || result[request_len] == '/');
}

/* The device of the pod's ResourceClaim (read by the collector) that an
 * allocatedResourcesStatus entry `name` ("claim:<claim>[/<request>]", the
 * claim's name in pod.spec.resourceClaims) reports as `d`: the device whose
 * "<driver>/<pool>/<device>" is d's resourceID (what the kubelet writes for
 * a DRA device), else the only device of the claim's request. NULL when the
 * claim was not read or no device is that one. */
static const struct krc_report_claim_device *
claim_device(const struct krc_report *r, const char *name, const struct krc_report_device_health *d,
             const struct krc_report_claim_status **ret_cs)
{
    const char *claim;
    const char *request;
    size_t claim_len;
    size_t request_len = 0;

    if (name == NULL || strncmp(name, "claim:", 6) != 0) {
        return NULL;
    }
    claim = name + 6;
    request = strchr(claim, '/');
    claim_len = request != NULL ? (size_t)(request - claim) : strlen(claim);
    if (request != NULL) {
        request++;
        request_len = strlen(request);
    }
    for (size_t i = 0; i < r->n_claim_statuses; i++) {
        const struct krc_report_claim_status *cs = &r->claim_statuses[i];
        const struct krc_report_claim_device *only = NULL;
        size_t n_request = 0;
        if (!cs->fetched || cs->name == NULL || strlen(cs->name) != claim_len ||
            strncmp(cs->name, claim, claim_len) != 0) {
            continue;
        }
        for (size_t j = 0; j < cs->n_devices; j++) {
            const struct krc_report_claim_device *dev = &cs->devices[j];
            char id[3 * KRC_REPORT_FIELD_TEXT_MAX + 3];
            snprintf(id, sizeof(id), "%s/%s/%s", dev->driver ? dev->driver : "",
                     dev->pool ? dev->pool : "", dev->device ? dev->device : "");
            if (d != NULL && d->resource_id != NULL && strcmp(id, d->resource_id) == 0) {
                *ret_cs = cs;
                return dev;
            }
            if (request == NULL || request_is(dev->request, request, request_len)) {
                n_request++;
                only = dev;
            }
        }
        if (n_request == 1) {
            *ret_cs = cs;
            return only;
        }
        return NULL;
    }
    return NULL;
}

/* "nvidia.com/gpu", or "DRA claim gpu, request gpu" for "claim:gpu/gpu",
 * followed, when the collector read the claim and found the device d, by
 * "; ResourceClaim <name>: driver D, pool P, device X". */
static void resource_words(const struct krc_report *r, const char *name,
                           const struct krc_report_device_health *d, char *out, size_t outsz)
{
    const struct krc_report_claim_status *cs = NULL;
    const struct krc_report_claim_device *dev = claim_device(r, name, d, &cs);
    char clean[160];
    char more[400] = "";
    const char *slash;

    krc_diagnose_sanitize(name ? name : "?", name ? strlen(name) : 1, clean, sizeof(clean));
    if (dev != NULL) {
        char claim[128];
        char driver[128];
        char pool[128];
        char device[128];
        krc_diagnose_sanitize(cs->resource_claim_name, strlen(cs->resource_claim_name), claim,
                              sizeof(claim));
        krc_diagnose_sanitize(dev->driver ? dev->driver : "?",
                              dev->driver ? strlen(dev->driver) : 1, driver, sizeof(driver));
        krc_diagnose_sanitize(dev->pool ? dev->pool : "?", dev->pool ? strlen(dev->pool) : 1, pool,
                              sizeof(pool));
        krc_diagnose_sanitize(dev->device ? dev->device : "?",
                              dev->device ? strlen(dev->device) : 1, device, sizeof(device));
        snprintf(more, sizeof(more), "; ResourceClaim %s: driver %s, pool %s, device %s", claim,
                 driver, pool, device);
    }
    if (strncmp(clean, "claim:", 6) == 0 && (slash = strchr(clean + 6, '/')) != NULL) {
        snprintf(out, outsz, "DRA claim %.*s, request %s%s", (int)(slash - (clean + 6)), clean + 6,
                 slash + 1, more);
        return;
    }
    if (strncmp(clean, "claim:", 6) == 0) {
        snprintf(out, outsz, "DRA claim %s%s", clean + 6, more);
        return;
    }
    snprintf(out, outsz, "%s", clean);
}

static void device_id(const struct krc_report_device_health *d, char *out, size_t outsz)
{
    const char *id = d->resource_id != NULL && d->resource_id[0] ? d->resource_id : "(no ID)";

    krc_diagnose_sanitize(id, strlen(id), out, outsz);
}

/* 11. gpu_device_unhealthy */
int krc_diag_match_device_unhealthy(struct dctx *x)
{
    const struct krc_report_resource_health *rh = NULL;
    const struct krc_report_device_health *dev = NULL;

    if (!failed_or_unknown(x) || krc_report_unhealthy_accelerators(x->c, &rh, &dev, NULL) == 0) {
        return 0;
    }
    /* A SIGKILL or SIGTERM is something else stopping the container; a
     * missing exit code leaves how it ended unknown. */
    x->conf = !x->has_exit || x->exit_code == 137 || x->exit_code == 143 ? KRC_CONFIDENCE_MEDIUM
                                                                         : KRC_CONFIDENCE_HIGH;
    return 1;
}

void krc_diag_say_device_unhealthy(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_resource_health *rh = NULL;
    const struct krc_report_device_health *dev = NULL;
    size_t n = krc_report_unhealthy_accelerators(x->c, &rh, &dev, NULL);
    char what[600];
    char id[160];

    if (n == 0) {
        return;
    }
    resource_words(x->r, rh->name, dev, what, sizeof(what));
    device_id(dev, id, sizeof(id));
    krc_buf_printf(s, "Container %s ", x->c->name);
    krc_diag_say_exited(x, s);
    krc_diag_say_after(x, s);
    krc_buf_printf(s, " while the kubelet reports its device %s (%s) Unhealthy", id, what);
    if (dev->message != NULL && dev->message[0]) {
        krc_diag_quote(s, ": ", dev->message, 200, "");
    }
    if (n > 1) {
        krc_buf_printf(s, "; %zu more of its devices are reported Unhealthy", n - 1);
    }
    krc_diag_add_unchecked(b, "allocatedResourcesStatus carries no time: whether the device "
                              "turned Unhealthy before or after the container exited is not shown");
    /* "the pod's node": the report and the alert name it once (its facts, and
     * the `kubectl describe node` command) */
    snprintf(x->next, sizeof(x->next),
             "Take device %s out of service: cordon and drain the pod's node, or let the device "
             "plugin or DRA driver withdraw the device; check it on the node (nvidia-smi -q, DCGM "
             "dcgmi diag, or the accelerator vendor's tool). The pod will likely fail again on "
             "that device while it holds it: once the node is cordoned, delete the pod so that "
             "it is rescheduled onto a healthy device",
             id);
}

/* The conditions the DRA driver reports of the claim device behind d (the
 * ResourceClaim's status.devices, KEP-4817), a line each, at most two. */
static void claim_conditions(struct builder *b, const struct krc_report *r, const char *name,
                             const struct krc_report_device_health *d)
{
    const struct krc_report_claim_status *cs = NULL;
    const struct krc_report_claim_device *dev = claim_device(r, name, d, &cs);

    for (size_t i = 0; dev != NULL && i < dev->n_conditions && i < 2; i++) {
        const struct krc_report_pod_condition *k = &dev->conditions[i];
        krc_diag_add_evidence(
            b, "ResourceClaim %.120s, device %.120s: condition %.60s=%.20s%s%.80s%s%.200s",
            cs->resource_claim_name, dev->device ? dev->device : "?", k->type ? k->type : "?",
            k->status ? k->status : "?", k->reason ? ", reason " : "", k->reason ? k->reason : "",
            k->message ? ": " : "", k->message ? k->message : "");
    }
}

/* Every device of x->c whose health is not Healthy, one evidence line each
 * (whatever the cause named: an Unknown, or an Unhealthy device behind an OOM
 * kill, is worth stating). */
void krc_diag_device_evidence(struct builder *b, const struct dctx *x)
{
    const struct krc_report_container *c = x->c;
    size_t lines = 0;
    size_t more = 0;
    size_t i;
    size_t j;

    for (i = 0; i < c->n_resource_health; i++) {
        const struct krc_report_resource_health *rh = &c->resource_health[i];
        char what[600];

        for (j = 0; j < rh->n_resources; j++) {
            const struct krc_report_device_health *d = &rh->resources[j];
            const char *note = "";
            char id[160];

            if (str_eq(d->health, "Healthy")) {
                continue;
            }
            resource_words(x->r, rh->name, d, what, sizeof(what));
            if (lines == DEVICE_LINES_MAX) {
                more++;
                continue;
            }
            if (d->health == NULL || str_eq(d->health, "Unknown")) {
                note = " (the kubelet cannot tell: not by itself a device fault)";
            } else if (is_unhealthy(d) && !krc_report_is_accelerator_status(rh->name)) {
                note = " (not an accelerator)";
            }
            device_id(d, id, sizeof(id));
            krc_diag_add_evidence(b, "allocatedResourcesStatus %.400s: device %.120s %.40s%s%s%s",
                                  what, id, d->health ? d->health : "(no health)", note,
                                  d->message && d->message[0] ? ": " : "",
                                  d->message ? d->message : "");
            claim_conditions(b, x->r, rh->name, d);
            lines++;
        }
    }
    if (more > 0) {
        krc_diag_add_evidence(b, "allocatedResourcesStatus: %zu more devices not Healthy", more);
    }
}

/* ---- an eviction by a device taint (DRA, KEP-5055) ---------------------- */

/* The device taint eviction controller (kube-controller-manager, KEP-5055:
 * alpha 1.33, beta 1.36) deletes a pod whose ResourceClaim holds a device
 * with a NoExecute taint (a DeviceTaintRule's, or one its DRA driver
 * published) that the claim does not tolerate. Before deleting it, it sets
 * the pod condition DisruptionTarget=True with reason
 * DeletionByDeviceTaintManager ("Device Taint manager: deleting due to
 * NoExecute taint"; kubernetes pkg/controller/devicetainteviction). An event
 * reason is also looked for: one beginning with "DeviceTaint" (its exact
 * reason was not confirmed from a primary source, hence the prefix). */
const struct krc_report_pod_condition *krc_diag_device_taint(const struct dctx *x,
                                                             const struct krc_report_event **ev)
{
    *ev = NULL;
    for (size_t i = 0; i < x->r->n_conditions; i++) {
        const struct krc_report_pod_condition *pc = &x->r->conditions[i];
        if (str_eq(pc->type, "DisruptionTarget") && str_eq(pc->status, "True") &&
            str_eq(pc->reason, "DeletionByDeviceTaintManager")) {
            return pc;
        }
    }
    for (size_t i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        if (e->reason != NULL && strncmp(e->reason, "DeviceTaint", 11) == 0 &&
            krc_report_event_is_pod(x->r, e)) {
            *ev = e;
            return NULL;
        }
    }
    return NULL;
}

void krc_diag_say_device_taint(struct dctx *x, struct builder *b, struct krc_buf *s)
{
    const struct krc_report_event *ev = NULL;
    const struct krc_report_pod_condition *pc = krc_diag_device_taint(x, &ev);
    size_t lines = 0;

    krc_buf_printf(s, "Container %s ", x->c->name);
    krc_diag_say_exited(x, s);
    krc_buf_append_str(s, ": the pod was evicted (device taint): a device of its ResourceClaim "
                          "has a NoExecute taint it does not tolerate");
    if (pc != NULL) {
        krc_buf_append_str(s, " (pod condition DisruptionTarget, reason "
                              "DeletionByDeviceTaintManager)");
    } else if (ev != NULL) {
        krc_buf_printf(s, " (event %s)", ev->reason);
        krc_diag_evidence_event(b, ev);
    }
    for (size_t i = 0; i < x->r->n_claim_statuses && lines < DEVICE_LINES_MAX; i++) {
        const struct krc_report_claim_status *cs = &x->r->claim_statuses[i];
        for (size_t j = 0; cs->fetched && j < cs->n_devices && lines < DEVICE_LINES_MAX; j++) {
            const struct krc_report_claim_device *d = &cs->devices[j];
            krc_diag_add_evidence(b,
                                  "ResourceClaim %.120s (claim %.120s) holds device %.120s "
                                  "of driver %.120s, pool %.120s",
                                  cs->resource_claim_name, cs->name ? cs->name : "?",
                                  d->device ? d->device : "?", d->driver ? d->driver : "?",
                                  d->pool ? d->pool : "?");
            lines++;
        }
    }
    krc_diag_add_unchecked(b, "which taint and which DeviceTaintRule (or DRA driver) set it is "
                              "not read: krc does not read DeviceTaintRules or ResourceSlices");
    snprintf(x->next, sizeof(x->next), "%s",
             "Nothing to fix in the application: the device was taken out of service. Check the "
             "DeviceTaintRules (kubectl get devicetaintrules) and the DRA driver's view of the "
             "device; the pod's controller recreates it on another device, or add a toleration "
             "to the ResourceClaim's request if the pod should stay on a tainted device");
}
