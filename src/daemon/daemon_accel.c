/* GPU time lost, the daemon's glue (daemon_internal.h): each watch scope's
 * table (detect/accel_time.h) counted into
 * krc_accelerator_seconds_lost_total{namespace,workload,resource}, and
 * brought up to date at every scrape. And device health that turns
 * Unhealthy after a restart (detect/dev_health.h): each scope's table, and
 * the amendment queued for the workers. */
#include <stdio.h>
#include <string.h>

#include "krc/daemon/daemon_internal.h"
#include "krc/detect/accel_time.h"
#include "krc/serve/metrics.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"

static void emit(const char *namespace, const char *workload, const char *resource,
                 double device_seconds, void *userdata)
{
    struct krc_metric *m = userdata;
    const char *v[3] = {namespace, workload, resource};

    krc_metric_add(m, v, device_seconds);
}

static void collect(struct krc_metrics *m, void *userdata)
{
    struct daemon *d = userdata;
    int64_t now = krc_clock_mono_ms();

    (void)m;
    for (size_t i = 0; i < d->n_scopes; i++) {
        krc_accel_time_flush(d->scopes[i].accel, now);
    }
}

int krc_daemon_accel_setup(struct daemon *d, struct krc_error *err)
{
    const struct krc_metric_label labels[] = {
        {.name = "namespace", .cap = KRC_DAEMON_ACCEL_SERIES},
        {.name = "workload", .cap = KRC_DAEMON_ACCEL_SERIES},
        {.name = "resource", .cap = KRC_DAEMON_ACCEL_SERIES},
    };
    const struct krc_metric_desc desc = {
        .type = KRC_METRIC_COUNTER,
        .name = "krc_accelerator_seconds_lost_total",
        .help = "Accelerator device-seconds lost: devices a restarted container holds (nvidia.com/"
                "gpu, amd.com/gpu, google.com/tpu, ...) x seconds it spent not running while "
                "holding them (back-off, failed starts). Past the series cap: namespace, workload "
                "and resource \"other\".",
        .labels = labels,
        .n_labels = 3};
    int rc;

    if ((rc = krc_metrics_add(d->health.metrics, &desc, &d->m_accel, err)) < 0) {
        return rc;
    }
    for (size_t i = 0; i < d->n_scopes; i++) {
        d->scopes[i].accel = krc_accel_time_new(emit, d->m_accel);
        if (d->scopes[i].accel == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        if (d->cfg->device_health_recheck_seconds > 0) {
            d->scopes[i].devh = krc_dev_health_new(d->cfg->device_health_recheck_seconds * 1000);
            if (d->scopes[i].devh == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
        }
    }
    return krc_metrics_add_collector(d->health.metrics, collect, d, err);
}

void krc_daemon_accel_cleanup(struct daemon *d)
{
    for (size_t i = 0; d->scopes != NULL && i < d->n_scopes; i++) {
        krc_accel_time_free(d->scopes[i].accel);
        d->scopes[i].accel = NULL;
        krc_dev_health_free(d->scopes[i].devh);
        d->scopes[i].devh = NULL;
    }
}

void krc_daemon_dev_health_observe(struct scope *s, const struct krc_pod_info *pod)
{
    struct krc_dev_health_hit hit;
    char container[KRC_DEV_HEALTH_CONTAINER_MAX];

    while (krc_dev_health_observe(s->devh, pod, krc_clock_mono_ms(), container, &hit)) {
        const struct krc_container_info *c = NULL;
        struct krc_restart_delta delta;
        struct krc_restart *r;

        for (size_t i = 0; i < pod->n_containers && c == NULL; i++) {
            if (strcmp(pod->containers[i].name, container) == 0) {
                c = &pod->containers[i];
            }
        }
        if (c == NULL) {
            continue;
        }
        krc_log(KRC_LOG_INFO,
                "device health of %s/%s container %s changed %.0fs after its restart (count "
                "%d): the kubelet now reports device %s (%s) Unhealthy; amending the restart",
                pod->namespace, pod->name, container, (double)hit.after_ms / 1000.0,
                hit.restart_count, hit.device[0] ? hit.device : "(no ID)", hit.resource);
        memset(&delta, 0, sizeof(delta));
        delta.pod = pod;
        delta.container = c;
        delta.previous_count = -1;
        r = krc_restart_from_delta(&delta, 1);
        if (r == NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: amendment of %s/%s container %s not queued",
                    pod->namespace, pod->name, container);
            continue;
        }
        r->amend = 1;
        r->amend_after_ms = hit.after_ms;
        atomic_fetch_add(&s->d->queued_pod_bytes, r->pod_json_len);
        for (;;) {
            int rc = krc_queue_push(&s->d->queue, r, 1000);
            if (rc == 0) {
                break;
            }
            if (rc == KRC_ECANCELED || s->d->cancel) {
                atomic_fetch_sub(&s->d->queued_pod_bytes, r->pod_json_len);
                krc_restart_free(r);
                return;
            }
        }
    }
}
