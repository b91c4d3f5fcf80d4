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

static int is_accelerator(const char *name)
{
    return krc_report_is_gpu_resource(name) || (name != NULL && strncmp(name, "claim:", 6) == 0);
}

static int is_unhealthy(const struct krc_report_device_health *d)
{
    return str_eq(d->health, "Unhealthy");
}

/* The first Unhealthy accelerator device of c (*ret_rh, *ret_dev) and how
 * many there are. */
static size_t find_unhealthy(const struct krc_report_container *c,
                             const struct krc_report_resource_health **ret_rh,
                             const struct krc_report_device_health **ret_dev)
{
    size_t n = 0;
    size_t i;
    size_t j;

    for (i = 0; i < c->n_resource_health; i++) {
        const struct krc_report_resource_health *rh = &c->resource_health[i];
        if (!is_accelerator(rh->name)) {
            continue;
        }
        for (j = 0; j < rh->n_resources; j++) {
            if (is_unhealthy(&rh->resources[j])) {
                if (n++ == 0) {
                    *ret_rh = rh;
                    *ret_dev = &rh->resources[j];
                }
            }
        }
    }
    return n;
}

/* "nvidia.com/gpu", or "DRA claim gpu, request gpu" for "claim:gpu/gpu". */
static void resource_words(const char *name, char *out, size_t outsz)
{
    char clean[160];
    const char *slash;

    krc_diagnose_sanitize(name ? name : "?", name ? strlen(name) : 1, clean, sizeof(clean));
    if (strncmp(clean, "claim:", 6) == 0 && (slash = strchr(clean + 6, '/')) != NULL) {
        snprintf(out, outsz, "DRA claim %.*s, request %s", (int)(slash - (clean + 6)), clean + 6,
                 slash + 1);
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

    if (!failed_or_unknown(x) || find_unhealthy(x->c, &rh, &dev) == 0) {
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
    size_t n = find_unhealthy(x->c, &rh, &dev);
    char what[200];
    char id[160];

    if (n == 0) {
        return;
    }
    resource_words(rh->name, what, sizeof(what));
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
        char what[200];

        resource_words(rh->name, what, sizeof(what));
        for (j = 0; j < rh->n_resources; j++) {
            const struct krc_report_device_health *d = &rh->resources[j];
            const char *note = "";
            char id[160];

            if (str_eq(d->health, "Healthy")) {
                continue;
            }
            if (lines == DEVICE_LINES_MAX) {
                more++;
                continue;
            }
            if (d->health == NULL || str_eq(d->health, "Unknown")) {
                note = " (the kubelet cannot tell: not by itself a device fault)";
            } else if (is_unhealthy(d) && !is_accelerator(rh->name)) {
                note = " (not an accelerator)";
            }
            device_id(d, id, sizeof(id));
            krc_diag_add_evidence(b, "allocatedResourcesStatus %.120s: device %.120s %.40s%s%s%s",
                                  what, id, d->health ? d->health : "(no health)", note,
                                  d->message && d->message[0] ? ": " : "",
                                  d->message ? d->message : "");
            lines++;
        }
    }
    if (more > 0) {
        krc_diag_add_evidence(b, "allocatedResourcesStatus: %zu more devices not Healthy", more);
    }
}
