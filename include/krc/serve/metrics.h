/* Metrics registry and Prometheus text exposition (format 0.0.4).
 *
 * A registry holds metric families (counters, gauges, histograms), each with
 * at most KRC_METRICS_MAX_LABELS label dimensions. Every dimension is bounded:
 *
 *   - a fixed dimension lists its values up front (e.g. result="sent"|...);
 *     updating with a value outside the list fails with KRC_EINVAL and counts
 *     nothing. Series of a family whose dimensions are all fixed exist from
 *     the start with value 0, so a dashboard sees every series;
 *   - an open dimension takes any value, but only the first `cap` distinct
 *     values get their own series; later values, values longer than
 *     KRC_METRICS_LABEL_VALUE_MAX bytes and values that are not valid UTF-8
 *     are all counted under the value "other" (KRC_METRICS_OTHER).
 *     Open-dimension series appear when first updated. A family may have
 *     several open dimensions (e.g. namespace, workload, resource): their
 *     caps must be equal and bound the distinct *combinations*; an update
 *     past the cap, or with any open value that would be "other", counts
 *     under the one series whose open labels are all "other".
 *
 * All storage is allocated when a family is added: updating never allocates
 * except to copy a new open label value (once per distinct value, at most
 * `cap` times). Values are doubles kept in atomics: updates from any thread
 * are lock-free for fixed labels and take a short per-family lock to look up
 * open label values. Integer counts are exact up to 2^53.
 *
 * Rendering runs the registered collect callbacks (which may set gauges from
 * current state, e.g. queue length) and then writes every family in
 * registration order: HELP and TYPE once, then its series (open values in
 * first-seen order, "other" last; fixed values in declared order; the last
 * dimension varies fastest). Renders are serialized with each other. */
#ifndef KRC_METRICS_H
#define KRC_METRICS_H

#include <stddef.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"

#define KRC_METRICS_MAX_LABELS 3
#define KRC_METRICS_MAX_BUCKETS 32
#define KRC_METRICS_MAX_OPEN_CAP 10000  /* largest `cap` of an open dimension */
#define KRC_METRICS_LABEL_VALUE_MAX 128 /* longer open values count as "other" */
#define KRC_METRICS_MAX_COLLECTORS 16
#define KRC_METRICS_OTHER "other"
/* Distinct namespaces that get their own series in krc_restarts_detected_total. */
#define KRC_METRICS_NAMESPACE_CAP 200

/* Content-Type of the rendered text. */
#define KRC_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum krc_metric_type {
    KRC_METRIC_COUNTER = 0,
    KRC_METRIC_GAUGE = 1,
    KRC_METRIC_HISTOGRAM = 2,
};

struct krc_metrics;
struct krc_metric;

/* One label dimension. `values` non-NULL: a fixed set (NULL-terminated list,
 * 1..64 distinct values, `cap` ignored). `values` NULL: an open set of at most
 * `cap` (1..KRC_METRICS_MAX_OPEN_CAP) distinct values plus "other" (several
 * open dimensions: the same `cap` on each, bounding their combinations). */
struct krc_metric_label {
    const char *name;
    const char *const *values;
    size_t cap;
};

/* Everything is copied by krc_metrics_add; the caller keeps ownership. */
struct krc_metric_desc {
    enum krc_metric_type type;
    const char *name; /* [a-zA-Z_:][a-zA-Z0-9_:]*; counters must end in "_total" */
    const char *help; /* one line of documentation (escaped on output) */
    const struct krc_metric_label *labels;
    size_t n_labels;       /* 0..KRC_METRICS_MAX_LABELS */
    const double *buckets; /* histograms: finite upper bounds, strictly increasing; */
    size_t n_buckets;      /* 1..KRC_METRICS_MAX_BUCKETS ("+Inf" is implied) */
};

/* Caller frees with krc_metrics_free (after every user, e.g. the HTTP server,
 * is stopped). */
int krc_metrics_new(struct krc_metrics **ret_metrics, struct krc_error *err);
void krc_metrics_free(struct krc_metrics *m);

/* Add a family. *ret_metric is borrowed, valid while `m` lives. KRC_EINVAL
 * (message names the metric and the problem) for a bad name, duplicate name,
 * bad label definition or bad buckets; KRC_ENOMEM. Thread-safe. */
int krc_metrics_add(struct krc_metrics *m, const struct krc_metric_desc *desc,
                    struct krc_metric **ret_metric, struct krc_error *err);

/* Name of a family (borrowed). */
const char *krc_metric_name(const struct krc_metric *mt);

/* Updates. `values` has one entry per label dimension in declaration order
 * (NULL for a family without labels), e.g.
 *   krc_metric_inc(std.notifications, (const char *[]){"sent"});
 * Return 0, or KRC_EINVAL (nothing changed) when a value is NULL or not in
 * its fixed set, the operation does not fit the type, or the number is not
 * allowed (negative or NaN counter delta). Never allocate more than the copy
 * of a new open value (KRC_ENOMEM: counted under "other" instead). */
int krc_metric_inc(struct krc_metric *mt, const char *const *values);
/* Counters (delta >= 0) and gauges (any finite delta). */
int krc_metric_add(struct krc_metric *mt, const char *const *values, double delta);
/* Gauges; counters too, for collect callbacks that mirror a monotonic source
 * (process_cpu_seconds_total). */
int krc_metric_set(struct krc_metric *mt, const char *const *values, double value);
/* Histograms: count `value` in the first bucket whose bound is >= value. */
int krc_metric_observe(struct krc_metric *mt, const char *const *values, double value);

/* Current value (counter, gauge) or observation count (histogram) of the
 * series an update with these values would change (so once an open
 * dimension is full, an unknown value reads "other"); KRC_ENOTFOUND when that
 * series has not been created yet, KRC_EINVAL for a value outside a fixed
 * set. For tests and collect callbacks. */
int krc_metric_get(struct krc_metric *mt, const char *const *values, double *ret_value);

/* Called at the start of every render, in registration order, on the
 * rendering thread (an HTTP server thread), one render at a time. It may
 * update metrics but must not render. */
typedef void (*krc_metrics_collect_fn)(struct krc_metrics *m, void *userdata);
/* userdata is borrowed and must stay valid while `m` lives. KRC_ETOOBIG after
 * KRC_METRICS_MAX_COLLECTORS. */
int krc_metrics_add_collector(struct krc_metrics *m, krc_metrics_collect_fn fn, void *userdata,
                              struct krc_error *err);

/* Append the exposition text to `out` (its max bounds the size: KRC_ETOOBIG
 * leaves a partial text, so reset the buffer before another try). */
int krc_metrics_render(struct krc_metrics *m, struct krc_buf *out, struct krc_error *err);

/* Format a sample value the way the exposition format reads it back: the
 * shortest of %.15g/%.17g that round-trips, "NaN", "+Inf", "-Inf".
 * out >= 32 bytes. */
void krc_metrics_format_value(double v, char *out, size_t outsz);

/* The daemon's metrics. Every pointer is borrowed from the registry. */
struct krc_metrics_std {
    /* counter {namespace (open, KRC_METRICS_NAMESPACE_CAP), cause (krc_cause_name)} */
    struct krc_metric *restarts_detected;
    /* counter {namespace, cause}: the restarts whose diagnosis is intentional */
    struct krc_metric *restarts_intentional;
    struct krc_metric *restarts_amended;
    /* counter {result}: sent failed muted grouped silenced not_posted rate_limited
     * intentional (restarts held back because intentional) */
    struct krc_metric *notifications;
    /* counter {type}: ADDED MODIFIED DELETED BOOKMARK ERROR */
    struct krc_metric *watch_events;
    /* counter {reason}: timeout expired error silent malformed */
    struct krc_metric *watch_restarts;
    /* counter {reason}: oversized undecodable */
    struct krc_metric *watch_skipped;
    struct krc_metric *pods_tracked; /* gauge */
    struct krc_metric *store_errors; /* counter */
    /* histogram, seconds, buckets KRC_METRICS_LATENCY_BUCKETS */
    struct krc_metric *restart_to_notification;
    struct krc_metric *build_info; /* gauge {version} = 1 */
    struct krc_metric *up;         /* gauge, 1 once registered */
    struct krc_metric *ready;      /* gauge, 0 until the daemon sets it */
};

#define KRC_METRICS_LATENCY_BUCKETS 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300

/* Register the daemon's metrics (names: krc_restarts_detected_total,
 * krc_restarts_intentional_total, krc_restarts_amended_total, krc_notifications_total,
 * krc_watch_events_total, krc_watch_restarts_total, krc_watch_objects_skipped_total,
 * krc_pods_tracked, krc_store_errors_total, krc_restart_to_notification_seconds, krc_build_info,
 * krc_up, krc_ready). `version` is the build_info label (NULL: KRC_VERSION). Fills *ret. */
int krc_metrics_register_std(struct krc_metrics *m, const char *version,
                             struct krc_metrics_std *ret, struct krc_error *err);

/* Register process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_start_time_seconds, process_open_fds
 * and process_max_fds with a collect callback reading /proc/self at scrape
 * time (values stay at their last reading when /proc is unreadable). */
int krc_metrics_register_process(struct krc_metrics *m, struct krc_error *err);

#endif
