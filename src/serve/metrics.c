#include "krc/serve/metrics.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "krc/model/cause.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#ifndef KRC_VERSION
#define KRC_VERSION "unknown"
#endif

#define MAX_FIXED_VALUES 64
#define MAX_NAME 200
#define MAX_HELP 1024

struct dim {
    char *name;
    char **values; /* fixed set, or NULL for the open dimension */
    size_t n_values;
};

struct series {
    _Atomic uint64_t bits; /* value, or the sum for histograms, as double bits */
    atomic_int present;
};

struct krc_metric {
    enum krc_metric_type type;
    char *name;
    char *help;
    struct dim dims[KRC_METRICS_MAX_LABELS];
    size_t n_dims;
    int open_dim;                          /* index of the first open dimension, -1 when none */
    int open_dims[KRC_METRICS_MAX_LABELS]; /* every open dimension, in order */
    size_t n_open_dims;
    size_t open_cap; /* distinct values (with several open dimensions: combinations) */
    size_t n_fixed;  /* product of the fixed dimensions' sizes */
    size_t n_slots;  /* open: open_cap + 1 (last = "other"); else 1 */
    size_t n_series;
    struct series *series;
    double *bounds;
    size_t n_bounds;
    _Atomic uint64_t *hcounts; /* n_series * (n_bounds + 1), not cumulative */
    pthread_mutex_t open_lock; /* guards open_values */
    /* open_cap entries, first n_open used: each the open values of one series,
     * every one ended by a NUL, in the order of open_dims */
    char **open_values;
    size_t *open_lens; /* bytes of each entry, its last NUL included */
    atomic_size_t n_open;
};

struct collector {
    krc_metrics_collect_fn fn;
    void *userdata;
};

struct process_metrics;

struct krc_metrics {
    struct process_metrics *proc; /* owned, from krc_metrics_register_process */
    pthread_mutex_t lock;         /* guards families and collectors */
    pthread_mutex_t render_lock;  /* one render (and collect) at a time */
    struct krc_metric **families;
    size_t n_families;
    size_t cap_families;
    struct collector collectors[KRC_METRICS_MAX_COLLECTORS];
    size_t n_collectors;
};

/* ---- doubles in atomics ---- */

static uint64_t d2u(double d)
{
    uint64_t u;

    memcpy(&u, &d, sizeof(u));
    return u;
}

static double u2d(uint64_t u)
{
    double d;

    memcpy(&d, &u, sizeof(d));
    return d;
}

static void atomic_add_double(_Atomic uint64_t *p, double delta)
{
    uint64_t old = atomic_load(p);

    while (!atomic_compare_exchange_weak(p, &old, d2u(u2d(old) + delta))) {
    }
}

/* ---- validation ---- */

static int valid_metric_name(const char *s)
{
    size_t i;

    if (s == NULL || s[0] == '\0' || strlen(s) > MAX_NAME) {
        return 0;
    }
    for (i = 0; s[i] != '\0'; i++) {
        char c = s[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
            return 0;
        }
    }
    return 1;
}

static int valid_label_name(const char *s)
{
    size_t i;

    if (s == NULL || s[0] == '\0' || strlen(s) > MAX_NAME || strncmp(s, "__", 2) == 0) {
        return 0;
    }
    for (i = 0; s[i] != '\0'; i++) {
        char c = s[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
            return 0;
        }
    }
    return 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t m = strlen(suffix);

    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* ---- registry ---- */

int krc_metrics_new(struct krc_metrics **ret_metrics, struct krc_error *err)
{
    struct krc_metrics *m = krc_calloc(1, sizeof(*m));

    if (m == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "metrics: out of memory");
    }
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->render_lock, NULL);
    *ret_metrics = m;
    return 0;
}

static void family_free(struct krc_metric *f)
{
    size_t i;
    size_t k;

    if (f == NULL) {
        return;
    }
    for (i = 0; i < f->n_dims; i++) {
        krc_free(f->dims[i].name);
        if (f->dims[i].values != NULL) {
            for (k = 0; k < f->dims[i].n_values; k++) {
                krc_free(f->dims[i].values[k]);
            }
            krc_free(f->dims[i].values);
        }
    }
    if (f->open_values != NULL) {
        size_t n = atomic_load(&f->n_open);
        for (i = 0; i < n; i++) {
            krc_free(f->open_values[i]);
        }
        krc_free(f->open_values);
    }
    krc_free(f->open_lens);
    pthread_mutex_destroy(&f->open_lock);
    krc_free(f->series);
    krc_free(f->hcounts);
    krc_free(f->bounds);
    krc_free(f->name);
    krc_free(f->help);
    krc_free(f);
}

void krc_metrics_free(struct krc_metrics *m)
{
    size_t i;

    if (m == NULL) {
        return;
    }
    for (i = 0; i < m->n_families; i++) {
        family_free(m->families[i]);
    }
    krc_free(m->families);
    krc_free(m->proc);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->render_lock);
    krc_free(m);
}

static int check_desc(const struct krc_metric_desc *d, struct krc_error *err)
{
    const char *name = d->name != NULL ? d->name : "(null)";
    size_t i;
    size_t k;
    size_t n_open = 0;
    size_t open_cap = 0;

    if (!valid_metric_name(d->name)) {
        return krc_error_set(err, KRC_EINVAL, "metric \"%s\": invalid metric name", name);
    }
    if (d->type != KRC_METRIC_COUNTER && d->type != KRC_METRIC_GAUGE &&
        d->type != KRC_METRIC_HISTOGRAM) {
        return krc_error_set(err, KRC_EINVAL, "metric %s: unknown type %d", name, (int)d->type);
    }
    if (d->type == KRC_METRIC_COUNTER && !ends_with(d->name, "_total")) {
        return krc_error_set(err, KRC_EINVAL, "metric %s: a counter's name must end in _total",
                             name);
    }
    if (d->help == NULL || strlen(d->help) > MAX_HELP) {
        return krc_error_set(err, KRC_EINVAL, "metric %s: help text missing or over %d bytes", name,
                             MAX_HELP);
    }
    if (d->n_labels > KRC_METRICS_MAX_LABELS || (d->n_labels > 0 && d->labels == NULL)) {
        return krc_error_set(err, KRC_EINVAL, "metric %s: %zu labels (at most %d)", name,
                             d->n_labels, KRC_METRICS_MAX_LABELS);
    }
    for (i = 0; i < d->n_labels; i++) {
        const struct krc_metric_label *l = &d->labels[i];
        const char *lname = l->name != NULL ? l->name : "(null)";

        if (!valid_label_name(l->name)) {
            return krc_error_set(err, KRC_EINVAL, "metric %s: invalid label name \"%s\"", name,
                                 lname);
        }
        if (d->type == KRC_METRIC_HISTOGRAM && strcmp(l->name, "le") == 0) {
            return krc_error_set(err, KRC_EINVAL, "metric %s: label \"le\" is reserved", name);
        }
        for (k = 0; k < i; k++) {
            if (strcmp(d->labels[k].name, l->name) == 0) {
                return krc_error_set(err, KRC_EINVAL, "metric %s: label %s declared twice", name,
                                     lname);
            }
        }
        if (l->values == NULL) {
            if (l->cap < 1 || l->cap > KRC_METRICS_MAX_OPEN_CAP) {
                return krc_error_set(err, KRC_EINVAL,
                                     "metric %s: label %s: cap %zu out of range 1..%d", name, lname,
                                     l->cap, KRC_METRICS_MAX_OPEN_CAP);
            }
            if (n_open > 0 && l->cap != open_cap) {
                return krc_error_set(err, KRC_EINVAL,
                                     "metric %s: label %s: cap %zu differs from the cap %zu of the "
                                     "first open label (it bounds their combinations)",
                                     name, lname, l->cap, open_cap);
            }
            open_cap = l->cap;
            n_open++;
            continue;
        }
        for (k = 0; l->values[k] != NULL; k++) {
            size_t len = strlen(l->values[k]);

            if (k >= MAX_FIXED_VALUES) {
                return krc_error_set(err, KRC_EINVAL,
                                     "metric %s: label %s: more than %d fixed values", name, lname,
                                     MAX_FIXED_VALUES);
            }
            if (len > KRC_METRICS_LABEL_VALUE_MAX || !krc_text_utf8_valid(l->values[k], len)) {
                return krc_error_set(err, KRC_EINVAL,
                                     "metric %s: label %s: value %zu too long or not UTF-8", name,
                                     lname, k);
            }
            for (size_t j = 0; j < k; j++) {
                if (strcmp(l->values[j], l->values[k]) == 0) {
                    return krc_error_set(err, KRC_EINVAL,
                                         "metric %s: label %s: value \"%s\" listed twice", name,
                                         lname, l->values[k]);
                }
            }
        }
        if (k == 0) {
            return krc_error_set(err, KRC_EINVAL, "metric %s: label %s: empty value list", name,
                                 lname);
        }
    }
    if (d->type == KRC_METRIC_HISTOGRAM) {
        if (d->n_buckets < 1 || d->n_buckets > KRC_METRICS_MAX_BUCKETS || d->buckets == NULL) {
            return krc_error_set(err, KRC_EINVAL, "metric %s: %zu buckets (1..%d)", name,
                                 d->n_buckets, KRC_METRICS_MAX_BUCKETS);
        }
        for (i = 0; i < d->n_buckets; i++) {
            if (!isfinite(d->buckets[i]) || (i > 0 && d->buckets[i] <= d->buckets[i - 1])) {
                return krc_error_set(err, KRC_EINVAL,
                                     "metric %s: bucket %zu: bounds must be finite and strictly "
                                     "increasing",
                                     name, i);
            }
        }
    }
    return 0;
}

static int family_build(const struct krc_metric_desc *d, struct krc_metric **ret)
{
    struct krc_metric *f = krc_calloc(1, sizeof(*f));
    size_t i;
    size_t k;

    if (f == NULL) {
        return KRC_ENOMEM;
    }
    pthread_mutex_init(&f->open_lock, NULL);
    f->type = d->type;
    f->open_dim = -1;
    f->n_fixed = 1;
    f->n_slots = 1;
    f->name = krc_strdup(d->name);
    f->help = krc_strdup(d->help);
    if (f->name == NULL || f->help == NULL) {
        goto fail;
    }
    for (i = 0; i < d->n_labels; i++) {
        const struct krc_metric_label *l = &d->labels[i];
        struct dim *dm = &f->dims[i];

        f->n_dims = i + 1;
        dm->name = krc_strdup(l->name);
        if (dm->name == NULL) {
            goto fail;
        }
        if (l->values == NULL) {
            if (f->open_dim < 0) {
                f->open_dim = (int)i;
                f->open_cap = l->cap;
                f->n_slots = l->cap + 1;
                f->open_values = krc_calloc(l->cap, sizeof(char *));
                f->open_lens = krc_calloc(l->cap, sizeof(size_t));
                if (f->open_values == NULL || f->open_lens == NULL) {
                    goto fail;
                }
            }
            f->open_dims[f->n_open_dims++] = (int)i;
            continue;
        }
        for (k = 0; l->values[k] != NULL; k++) {
        }
        dm->values = krc_calloc(k, sizeof(char *));
        if (dm->values == NULL) {
            goto fail;
        }
        dm->n_values = k;
        for (k = 0; k < dm->n_values; k++) {
            dm->values[k] = krc_strdup(l->values[k]);
            if (dm->values[k] == NULL) {
                goto fail;
            }
        }
        f->n_fixed *= dm->n_values;
    }
    f->n_series = f->n_slots * f->n_fixed;
    f->series = krc_calloc(f->n_series, sizeof(*f->series));
    if (f->series == NULL) {
        goto fail;
    }
    for (i = 0; i < f->n_series; i++) {
        atomic_init(&f->series[i].bits, d2u(0.0));
        atomic_init(&f->series[i].present, f->open_dim < 0);
    }
    if (f->type == KRC_METRIC_HISTOGRAM) {
        size_t n = f->n_series * (d->n_buckets + 1);

        f->n_bounds = d->n_buckets;
        f->bounds = krc_calloc(d->n_buckets, sizeof(double));
        f->hcounts = krc_calloc(n, sizeof(*f->hcounts));
        if (f->bounds == NULL || f->hcounts == NULL) {
            goto fail;
        }
        memcpy(f->bounds, d->buckets, d->n_buckets * sizeof(double));
        for (i = 0; i < n; i++) {
            atomic_init(&f->hcounts[i], 0);
        }
    }
    *ret = f;
    return 0;

fail:
    family_free(f);
    return KRC_ENOMEM;
}

int krc_metrics_add(struct krc_metrics *m, const struct krc_metric_desc *desc,
                    struct krc_metric **ret_metric, struct krc_error *err)
{
    struct krc_metric *f = NULL;
    size_t i;
    int rc;

    rc = check_desc(desc, err);
    if (rc < 0) {
        return rc;
    }
    if (family_build(desc, &f) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "metric %s: out of memory", desc->name);
    }
    pthread_mutex_lock(&m->lock);
    for (i = 0; i < m->n_families; i++) {
        if (strcmp(m->families[i]->name, desc->name) == 0) {
            pthread_mutex_unlock(&m->lock);
            family_free(f);
            return krc_error_set(err, KRC_EINVAL, "metric %s: already registered", desc->name);
        }
    }
    if (m->n_families == m->cap_families) {
        size_t cap = m->cap_families ? m->cap_families * 2 : 16;
        struct krc_metric **p = krc_realloc(m->families, cap * sizeof(*p));

        if (p == NULL) {
            pthread_mutex_unlock(&m->lock);
            family_free(f);
            return krc_error_set(err, KRC_ENOMEM, "metric %s: out of memory", desc->name);
        }
        m->families = p;
        m->cap_families = cap;
    }
    m->families[m->n_families++] = f;
    pthread_mutex_unlock(&m->lock);
    *ret_metric = f;
    return 0;
}

const char *krc_metric_name(const struct krc_metric *mt)
{
    return mt->name;
}

int krc_metrics_add_collector(struct krc_metrics *m, krc_metrics_collect_fn fn, void *userdata,
                              struct krc_error *err)
{
    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "metrics: collector function is NULL");
    }
    pthread_mutex_lock(&m->lock);
    if (m->n_collectors == KRC_METRICS_MAX_COLLECTORS) {
        pthread_mutex_unlock(&m->lock);
        return krc_error_set(err, KRC_ETOOBIG, "metrics: more than %d collectors",
                             KRC_METRICS_MAX_COLLECTORS);
    }
    m->collectors[m->n_collectors].fn = fn;
    m->collectors[m->n_collectors].userdata = userdata;
    m->n_collectors++;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

/* ---- series lookup ---- */

/* The open values of one update as one key (each value and its NUL, in the
 * order of open_dims) into buf; 0 and its length, or -1 when the update
 * belongs to "other": a value too long, not UTF-8 or "other" itself. */
static int open_key(const struct krc_metric *f, const char *const *values, char *buf,
                    size_t *ret_len)
{
    size_t at = 0;

    if (values == NULL) {
        return -1; /* only families without labels are given none */
    }
    for (size_t j = 0; j < f->n_open_dims; j++) {
        const char *v = values[f->open_dims[j]];
        size_t len = strlen(v);

        if (len > KRC_METRICS_LABEL_VALUE_MAX || !krc_text_utf8_valid(v, len) ||
            strcmp(v, KRC_METRICS_OTHER) == 0) {
            return -1;
        }
        memcpy(buf + at, v, len + 1);
        at += len + 1;
    }
    *ret_len = at;
    return 0;
}

/* Slot of the open values: existing, newly added (create != 0), or "other"
 * (every open label "other"). */
static int open_slot(struct krc_metric *f, const char *const *values, int create, size_t *ret_slot)
{
    char key[KRC_METRICS_MAX_LABELS * (KRC_METRICS_LABEL_VALUE_MAX + 1)];
    size_t len = 0;
    size_t n;
    size_t i;

    if (open_key(f, values, key, &len) < 0) {
        *ret_slot = f->open_cap;
        return 0;
    }
    pthread_mutex_lock(&f->open_lock);
    n = atomic_load(&f->n_open);
    for (i = 0; i < n; i++) {
        if (f->open_lens[i] == len && memcmp(f->open_values[i], key, len) == 0) {
            pthread_mutex_unlock(&f->open_lock);
            *ret_slot = i;
            return 0;
        }
    }
    if (!create && n < f->open_cap) {
        pthread_mutex_unlock(&f->open_lock);
        return KRC_ENOTFOUND;
    }
    if (n < f->open_cap) {
        char *copy = krc_malloc(len);

        if (copy != NULL) {
            memcpy(copy, key, len);
            f->open_values[n] = copy;
            f->open_lens[n] = len;
            atomic_store(&f->n_open, n + 1);
            pthread_mutex_unlock(&f->open_lock);
            *ret_slot = n;
            return 0;
        }
    }
    pthread_mutex_unlock(&f->open_lock);
    *ret_slot = f->open_cap;
    return 0;
}

static int series_index(struct krc_metric *f, const char *const *values, int create,
                        size_t *ret_index)
{
    size_t fixed = 0;
    size_t slot = 0;
    size_t i;
    size_t k;

    if (f->n_dims > 0 && values == NULL) {
        return KRC_EINVAL;
    }
    for (i = 0; i < f->n_dims; i++) {
        const struct dim *dm = &f->dims[i];

        if (values[i] == NULL) {
            return KRC_EINVAL;
        }
        if (dm->values == NULL) {
            continue;
        }
        for (k = 0; k < dm->n_values; k++) {
            if (strcmp(dm->values[k], values[i]) == 0) {
                break;
            }
        }
        if (k == dm->n_values) {
            return KRC_EINVAL;
        }
        fixed = fixed * dm->n_values + k;
    }
    if (f->open_dim >= 0) {
        /* clang-tidy: values is NULL only for families without labels, whose open_dim is -1 */
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
        int rc = open_slot(f, values, create, &slot);

        if (rc < 0) {
            return rc;
        }
    }
    *ret_index = slot * f->n_fixed + fixed;
    return 0;
}

int krc_metric_add(struct krc_metric *mt, const char *const *values, double delta)
{
    size_t idx;

    if (mt->type == KRC_METRIC_HISTOGRAM || !isfinite(delta) ||
        (mt->type == KRC_METRIC_COUNTER && delta < 0)) {
        return KRC_EINVAL;
    }
    if (series_index(mt, values, 1, &idx) < 0) {
        return KRC_EINVAL;
    }
    atomic_add_double(&mt->series[idx].bits, delta);
    atomic_store(&mt->series[idx].present, 1);
    return 0;
}

int krc_metric_inc(struct krc_metric *mt, const char *const *values)
{
    return krc_metric_add(mt, values, 1.0);
}

int krc_metric_set(struct krc_metric *mt, const char *const *values, double value)
{
    size_t idx;

    if (mt->type == KRC_METRIC_HISTOGRAM || isnan(value) ||
        (mt->type == KRC_METRIC_COUNTER && !(value >= 0))) {
        return KRC_EINVAL;
    }
    if (series_index(mt, values, 1, &idx) < 0) {
        return KRC_EINVAL;
    }
    atomic_store(&mt->series[idx].bits, d2u(value));
    atomic_store(&mt->series[idx].present, 1);
    return 0;
}

int krc_metric_observe(struct krc_metric *mt, const char *const *values, double value)
{
    size_t idx;
    size_t b;

    if (mt->type != KRC_METRIC_HISTOGRAM || isnan(value)) {
        return KRC_EINVAL;
    }
    if (series_index(mt, values, 1, &idx) < 0) {
        return KRC_EINVAL;
    }
    for (b = 0; b < mt->n_bounds; b++) {
        if (value <= mt->bounds[b]) {
            break;
        }
    }
    atomic_fetch_add(&mt->hcounts[idx * (mt->n_bounds + 1) + b], 1);
    atomic_add_double(&mt->series[idx].bits, value);
    atomic_store(&mt->series[idx].present, 1);
    return 0;
}

int krc_metric_get(struct krc_metric *mt, const char *const *values, double *ret_value)
{
    size_t idx;
    int rc = series_index(mt, values, 0, &idx);

    if (rc < 0) {
        return rc;
    }
    if (!atomic_load(&mt->series[idx].present)) {
        return KRC_ENOTFOUND;
    }
    if (mt->type == KRC_METRIC_HISTOGRAM) {
        uint64_t n = 0;

        for (size_t b = 0; b <= mt->n_bounds; b++) {
            n += atomic_load(&mt->hcounts[idx * (mt->n_bounds + 1) + b]);
        }
        *ret_value = (double)n;
        return 0;
    }
    *ret_value = u2d(atomic_load(&mt->series[idx].bits));
    return 0;
}

/* ---- rendering ---- */

void krc_metrics_format_value(double v, char *out, size_t outsz)
{
    if (isnan(v)) {
        snprintf(out, outsz, "NaN");
    } else if (isinf(v)) {
        snprintf(out, outsz, "%s", v > 0 ? "+Inf" : "-Inf");
    } else {
        snprintf(out, outsz, "%.15g", v);
        if (strtod(out, NULL) != v) {
            snprintf(out, outsz, "%.17g", v);
        }
    }
}

static int append_escaped(struct krc_buf *out, const char *s, int quote)
{
    int rc = 0;

    /* clang-tidy: render_family passes label values that are set (never NULL) for every open
     * dimension */
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
    for (; *s != '\0' && rc == 0; s++) {
        if (*s == '\\') {
            rc = krc_buf_append(out, "\\\\", 2);
        } else if (*s == '\n') {
            rc = krc_buf_append(out, "\\n", 2);
        } else if (*s == '"' && quote) {
            rc = krc_buf_append(out, "\\\"", 2);
        } else {
            rc = krc_buf_append_char(out, *s);
        }
    }
    return rc;
}

/* `{a="x",b="y"` plus `,le="..."` when `le` is given, then `}`; nothing when
 * there are no labels at all. */
static int append_labels(struct krc_buf *out, const struct krc_metric *f, const char *const *vals,
                         const char *le)
{
    int rc = 0;
    size_t i;

    if (f->n_dims == 0 && le == NULL) {
        return 0;
    }
    rc = krc_buf_append_char(out, '{');
    for (i = 0; i < f->n_dims && rc == 0; i++) {
        rc = krc_buf_printf(out, "%s%s=\"", i > 0 ? "," : "", f->dims[i].name);
        if (rc == 0) {
            rc = append_escaped(out, vals[i], 1);
        }
        if (rc == 0) {
            rc = krc_buf_append_char(out, '"');
        }
    }
    if (rc == 0 && le != NULL) {
        rc = krc_buf_printf(out, "%sle=\"%s\"", f->n_dims > 0 ? "," : "", le);
    }
    if (rc == 0) {
        rc = krc_buf_append_char(out, '}');
    }
    return rc;
}

static int render_series(struct krc_buf *out, struct krc_metric *f, size_t idx,
                         const char *const *vals)
{
    char num[40];
    int rc;

    if (f->type != KRC_METRIC_HISTOGRAM) {
        krc_metrics_format_value(u2d(atomic_load(&f->series[idx].bits)), num, sizeof(num));
        rc = krc_buf_append_str(out, f->name);
        if (rc == 0) {
            rc = append_labels(out, f, vals, NULL);
        }
        if (rc == 0) {
            rc = krc_buf_printf(out, " %s\n", num);
        }
        return rc;
    }

    uint64_t cum = 0;
    double sum = u2d(atomic_load(&f->series[idx].bits));
    char le[40];

    for (size_t b = 0; b <= f->n_bounds; b++) {
        cum += atomic_load(&f->hcounts[idx * (f->n_bounds + 1) + b]);
        if (b < f->n_bounds) {
            krc_metrics_format_value(f->bounds[b], le, sizeof(le));
        } else {
            snprintf(le, sizeof(le), "+Inf");
        }
        rc = krc_buf_printf(out, "%s_bucket", f->name);
        if (rc == 0) {
            rc = append_labels(out, f, vals, le);
        }
        if (rc == 0) {
            rc = krc_buf_printf(out, " %llu\n", (unsigned long long)cum);
        }
        if (rc < 0) {
            return rc;
        }
    }
    krc_metrics_format_value(sum, num, sizeof(num));
    rc = krc_buf_printf(out, "%s_sum", f->name);
    if (rc == 0) {
        rc = append_labels(out, f, vals, NULL);
    }
    if (rc == 0) {
        rc = krc_buf_printf(out, " %s\n%s_count", num, f->name);
    }
    if (rc == 0) {
        rc = append_labels(out, f, vals, NULL);
    }
    if (rc == 0) {
        rc = krc_buf_printf(out, " %llu\n", (unsigned long long)cum);
    }
    return rc;
}

static const char *type_name(enum krc_metric_type t)
{
    switch (t) {
    case KRC_METRIC_COUNTER:
        return "counter";
    case KRC_METRIC_GAUGE:
        return "gauge";
    case KRC_METRIC_HISTOGRAM:
        return "histogram";
    }
    return "untyped";
}

static int render_family(struct krc_buf *out, struct krc_metric *f)
{
    const char *vals[KRC_METRICS_MAX_LABELS] = {NULL};
    size_t n_open;
    size_t slot;
    size_t fx;
    int rc;

    rc = krc_buf_printf(out, "# HELP %s ", f->name);
    if (rc == 0) {
        rc = append_escaped(out, f->help, 0);
    }
    if (rc == 0) {
        rc = krc_buf_printf(out, "\n# TYPE %s %s\n", f->name, type_name(f->type));
    }
    if (rc < 0) {
        return rc;
    }
    /* The open values only grow; holding the lock keeps the array stable. */
    pthread_mutex_lock(&f->open_lock);
    n_open = atomic_load(&f->n_open);
    for (slot = 0; slot < f->n_slots && rc == 0; slot++) {
        if (f->open_dim >= 0) {
            if (slot < f->open_cap && slot >= n_open) {
                continue;
            }
            const char *v = slot < f->open_cap ? f->open_values[slot] : NULL;
            for (size_t j = 0; j < f->n_open_dims; j++) {
                vals[f->open_dims[j]] = v != NULL ? v : KRC_METRICS_OTHER;
                if (v != NULL) {
                    v += strlen(v) + 1;
                }
            }
        }
        for (fx = 0; fx < f->n_fixed && rc == 0; fx++) {
            size_t idx = slot * f->n_fixed + fx;
            size_t rest = fx;

            if (!atomic_load(&f->series[idx].present)) {
                continue;
            }
            /* Decode the fixed index; the last dimension varies fastest. */
            for (size_t i = f->n_dims; i-- > 0;) {
                if (f->dims[i].values != NULL) {
                    vals[i] = f->dims[i].values[rest % f->dims[i].n_values];
                    rest /= f->dims[i].n_values;
                }
            }
            rc = render_series(out, f, idx, vals);
        }
    }
    pthread_mutex_unlock(&f->open_lock);
    return rc;
}

int krc_metrics_render(struct krc_metrics *m, struct krc_buf *out, struct krc_error *err)
{
    struct collector collectors[KRC_METRICS_MAX_COLLECTORS];
    size_t n_collectors;
    size_t i;
    int rc = 0;

    pthread_mutex_lock(&m->render_lock);
    pthread_mutex_lock(&m->lock);
    n_collectors = m->n_collectors;
    memcpy(collectors, m->collectors, n_collectors * sizeof(collectors[0]));
    pthread_mutex_unlock(&m->lock);
    /* Without the registry lock, so a collector may add metrics. */
    for (i = 0; i < n_collectors; i++) {
        collectors[i].fn(m, collectors[i].userdata);
    }
    pthread_mutex_lock(&m->lock);
    for (i = 0; i < m->n_families && rc == 0; i++) {
        rc = render_family(out, m->families[i]);
    }
    pthread_mutex_unlock(&m->lock);
    pthread_mutex_unlock(&m->render_lock);
    if (rc == KRC_ETOOBIG) {
        return krc_error_set(err, rc, "metrics: exposition text over %zu bytes", out->max);
    }
    if (rc < 0) {
        return krc_error_set(err, rc, "metrics: out of memory while rendering");
    }
    return 0;
}

/* ---- the daemon's metrics ---- */

static int add_simple(struct krc_metrics *m, enum krc_metric_type type, const char *name,
                      const char *help, const struct krc_metric_label *labels, size_t n_labels,
                      struct krc_metric **ret, struct krc_error *err)
{
    struct krc_metric_desc d = {
        .type = type, .name = name, .help = help, .labels = labels, .n_labels = n_labels};

    return krc_metrics_add(m, &d, ret, err);
}

/* The restart counters, by namespace (bounded) and cause. The series are a
 * dense array (namespaces x causes): the intentional and amended counters take
 * only the causes they can count, not all of them (~87 KB each otherwise). */
static int register_restarts(struct krc_metrics *m, struct krc_metrics_std *s,
                             struct krc_error *err)
{
    const char *causes[KRC_CAUSE_COUNT + 1];
    const char *intentional_causes[KRC_CAUSE_COUNT + 1];
    const char *amended_causes[] = {krc_cause_name(KRC_CAUSE_GPU_DEVICE_UNHEALTHY), NULL};
    size_t n_intentional = 0;
    int rc;

    for (int i = 0; i < KRC_CAUSE_COUNT; i++) {
        causes[i] = krc_cause_name((enum krc_cause)i);
        if (krc_cause_may_be_intentional((enum krc_cause)i)) {
            intentional_causes[n_intentional++] = causes[i];
        }
    }
    causes[KRC_CAUSE_COUNT] = NULL;
    intentional_causes[n_intentional] = NULL;

    const struct krc_metric_label restart_labels[] = {
        {.name = "namespace", .cap = KRC_METRICS_NAMESPACE_CAP},
        {.name = "cause", .values = causes},
    };
    const struct krc_metric_label intentional_labels[] = {
        {.name = "namespace", .cap = KRC_METRICS_NAMESPACE_CAP},
        {.name = "cause", .values = intentional_causes},
    };
    const struct krc_metric_label amended_labels[] = {
        {.name = "namespace", .cap = KRC_METRICS_NAMESPACE_CAP},
        {.name = "cause", .values = amended_causes},
    };

    rc = add_simple(m, KRC_METRIC_COUNTER, "krc_restarts_detected_total",
                    "Container restarts detected, by namespace (first 200 namespaces, then "
                    "\"other\") and diagnosed cause.",
                    restart_labels, 2, &s->restarts_detected, err);
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_restarts_intentional_total",
                        "Container restarts whose diagnosis says a field of the pod proves them "
                        "intended (a restart rule, the stop signal), alerted or not, by namespace "
                        "(first 200, then \"other\") and cause; also in "
                        "krc_restarts_detected_total.",
                        intentional_labels, 2, &s->restarts_intentional, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_restarts_amended_total",
                        "Restarts whose alert and stored report were amended after the kubelet "
                        "reported a device of the container Unhealthy within "
                        "deviceHealthRecheckSeconds of the restart, by namespace (first 200, "
                        "then \"other\") and the amended cause.",
                        amended_labels, 2, &s->restarts_amended, err);
    }
    return rc;
}

int krc_metrics_register_std(struct krc_metrics *m, const char *version,
                             struct krc_metrics_std *ret, struct krc_error *err)
{
    static const char *const results[] = {"sent",         "failed",      "muted",
                                          "grouped",      "silenced",    "not_posted",
                                          "rate_limited", "intentional", NULL};
    static const char *const types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", NULL};
    static const char *const reasons[] = {"timeout", "expired",   "error",
                                          "silent",  "malformed", NULL};
    static const char *const skip_reasons[] = {"oversized", "undecodable", NULL};
    static const double latency[] = {KRC_METRICS_LATENCY_BUCKETS};
    const char *versions[2];
    struct krc_metrics_std s;
    int rc;

    versions[0] = version != NULL ? version : KRC_VERSION;
    versions[1] = NULL;

    const struct krc_metric_label result_label = {.name = "result", .values = results};
    const struct krc_metric_label type_label = {.name = "type", .values = types};
    const struct krc_metric_label reason_label = {.name = "reason", .values = reasons};
    const struct krc_metric_label skip_label = {.name = "reason", .values = skip_reasons};
    const struct krc_metric_label version_label = {.name = "version", .values = versions};
    const struct krc_metric_desc hist = {
        .type = KRC_METRIC_HISTOGRAM,
        .name = "krc_restart_to_notification_seconds",
        .help = "Seconds from a detected container restart to its delivery at a destination "
                "(one observation per destination: Slack message, Kubernetes Event, ...).",
        .buckets = latency,
        .n_buckets = sizeof(latency) / sizeof(latency[0]),
    };

    memset(&s, 0, sizeof(s));
    rc = register_restarts(m, &s, err);
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_notifications_total",
                        "Restart notifications by outcome.", &result_label, 1, &s.notifications,
                        err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_watch_events_total",
                        "Pod watch events received, by event type.", &type_label, 1,
                        &s.watch_events, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_watch_restarts_total",
                        "Pod watch streams re-established, by reason.", &reason_label, 1,
                        &s.watch_restarts, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_watch_objects_skipped_total",
                        "Pods skipped by the watch or a list (the stream goes on), by reason: "
                        "oversized (over the 8 MiB line limit), undecodable (bad JSON or not a "
                        "pod).",
                        &skip_label, 1, &s.watch_skipped, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "krc_pods_tracked",
                        "Pods currently tracked across all watch scopes.", NULL, 0, &s.pods_tracked,
                        err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_COUNTER, "krc_store_errors_total",
                        "Failed operations on the restart history database.", NULL, 0,
                        &s.store_errors, err);
    }
    if (rc == 0) {
        rc = krc_metrics_add(m, &hist, &s.restart_to_notification, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "krc_build_info",
                        "Always 1; the version label names the running build.", &version_label, 1,
                        &s.build_info, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "krc_up", "1 while the daemon is running.", NULL, 0,
                        &s.up, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "krc_ready",
                        "1 when the daemon is ready (as /readyz: initial sync done, API reachable, "
                        "watches delivering).",
                        NULL, 0, &s.ready, err);
    }
    if (rc < 0) {
        return rc;
    }
    krc_metric_set(s.build_info, versions, 1);
    krc_metric_set(s.up, NULL, 1);
    *ret = s;
    return 0;
}

/* ---- process metrics from /proc/self ---- */

struct process_metrics {
    struct krc_metric *cpu;
    struct krc_metric *rss;
    struct krc_metric *vsize;
    struct krc_metric *start;
    struct krc_metric *open_fds;
    struct krc_metric *max_fds;
};

static int read_small_file(const char *path, char *buf, size_t size)
{
    FILE *fp = fopen(path, "re");
    size_t n;

    if (fp == NULL) {
        return -1;
    }
    n = fread(buf, 1, size - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return 0;
}

/* btime from /proc/stat, read line by line: its "intr" line can be long. */
static double boot_time(void)
{
    FILE *fp = fopen("/proc/stat", "re");
    char line[512];
    int at_line_start = 1;
    double bt = -1;

    if (fp == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), fp) != NULL) {
        if (at_line_start && strncmp(line, "btime ", 6) == 0) {
            bt = strtod(line + 6, NULL);
            break;
        }
        at_line_start = strchr(line, '\n') != NULL;
    }
    fclose(fp);
    return bt;
}

static void collect_process(struct krc_metrics *m, void *userdata)
{
    struct process_metrics *pm = userdata;
    char buf[1024];
    long ticks = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    DIR *dir;
    (void)m;

    if (read_small_file("/proc/self/stat", buf, sizeof(buf)) == 0 && ticks > 0 && page > 0) {
        /* Fields after "(comm)": the name may itself hold spaces and ')'. */
        char *p = strrchr(buf, ')');
        char *end;
        double f[25] = {0};
        int n = 3; /* next field number: 3 is state */

        if (p != NULL) {
            p += 2;
            while (*p != '\0' && n <= 24) {
                if (n > 3) {
                    f[n] = strtod(p, &end);
                    if (end == p) {
                        break;
                    }
                    p = end;
                } else {
                    p++; /* state: one letter */
                }
                while (*p == ' ') {
                    p++;
                }
                n++;
            }
        }
        if (n > 24) {
            double bt = boot_time();

            krc_metric_set(pm->cpu, NULL, (f[14] + f[15]) / (double)ticks);
            krc_metric_set(pm->vsize, NULL, f[23]);
            krc_metric_set(pm->rss, NULL, f[24] * (double)page);
            if (bt > 0) {
                krc_metric_set(pm->start, NULL, bt + f[22] / (double)ticks);
            }
        }
    }
    dir = opendir("/proc/self/fd");
    if (dir != NULL) {
        double n_fds = 0;
        const struct dirent *de;

        while ((de = readdir(dir)) != NULL) {
            if (de->d_name[0] != '.') {
                n_fds++;
            }
        }
        closedir(dir);
        krc_metric_set(pm->open_fds, NULL, n_fds - 1); /* not counting the opendir fd */
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        krc_metric_set(pm->max_fds, NULL,
                       rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
    }
}

int krc_metrics_register_process(struct krc_metrics *m, struct krc_error *err)
{
    struct process_metrics p;
    int rc;

    if (m->proc != NULL) {
        return krc_error_set(err, KRC_EINVAL, "metrics: process metrics already registered");
    }

    memset(&p, 0, sizeof(p));
    rc = add_simple(m, KRC_METRIC_COUNTER, "process_cpu_seconds_total",
                    "Total user and system CPU time spent in seconds.", NULL, 0, &p.cpu, err);
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "process_resident_memory_bytes",
                        "Resident memory size in bytes.", NULL, 0, &p.rss, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "process_virtual_memory_bytes",
                        "Virtual memory size in bytes.", NULL, 0, &p.vsize, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "process_start_time_seconds",
                        "Start time of the process since unix epoch in seconds.", NULL, 0, &p.start,
                        err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "process_open_fds", "Number of open file descriptors.",
                        NULL, 0, &p.open_fds, err);
    }
    if (rc == 0) {
        rc = add_simple(m, KRC_METRIC_GAUGE, "process_max_fds",
                        "Maximum number of open file descriptors.", NULL, 0, &p.max_fds, err);
    }
    if (rc < 0) {
        return rc;
    }
    m->proc = krc_malloc(sizeof(*m->proc));
    if (m->proc == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "metrics: out of memory");
    }
    *m->proc = p;
    return krc_metrics_add_collector(m, collect_process, m->proc, err);
}
