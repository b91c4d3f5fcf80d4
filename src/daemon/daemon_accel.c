/* GPU time lost, the daemon's glue (daemon_internal.h): each watch scope's
 * table (detect/accel_time.h) counted into
 * krc_accelerator_seconds_lost_total{namespace,workload,resource}, and
 * brought up to date at every scrape. */
#include <stdio.h>

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
    }
    return krc_metrics_add_collector(d->health.metrics, collect, d, err);
}

void krc_daemon_accel_cleanup(struct daemon *d)
{
    for (size_t i = 0; d->scopes != NULL && i < d->n_scopes; i++) {
        krc_accel_time_free(d->scopes[i].accel);
        d->scopes[i].accel = NULL;
    }
}
