/* Device health that turns Unhealthy after the restart
 * (include/krc/detect/dev_health.h): the restarts of containers holding
 * accelerators, watched for a window, and the pod update that first reports
 * one of their devices Unhealthy. */
#define _GNU_SOURCE /* memmem */
#include "krc/detect/dev_health.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "krc/detect/accel_time.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

struct watched {
    char uid[KRC_RESTART_IDENT_UID_MAX];
    char container[KRC_DEV_HEALTH_CONTAINER_MAX];
    int is_init;
    int restart_count;
    int64_t seen_ms; /* when the restart was detected */
};

struct krc_dev_health {
    pthread_mutex_t lock;
    atomic_size_t n_watched; /* read without the lock: the fast path */
    struct watched *v;       /* KRC_DEV_HEALTH_MAX, allocated while any is watched */
    size_t n;
    size_t dropped;
    int64_t window_ms;
};

struct krc_dev_health *krc_dev_health_new(int64_t window_ms)
{
    struct krc_dev_health *t;

    if (window_ms <= 0) {
        return NULL;
    }
    t = krc_calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    atomic_init(&t->n_watched, 0);
    t->window_ms = window_ms;
    return t;
}

void krc_dev_health_free(struct krc_dev_health *t)
{
    if (t == NULL) {
        return;
    }
    krc_free(t->v);
    pthread_mutex_destroy(&t->lock);
    krc_free(t);
}

/* Container c of the report: 1 when its allocatedResourcesStatus lists an
 * accelerator; *ret_bad: the first Unhealthy accelerator device, or NULL. */
static int scan_health(const struct krc_report_container *c,
                       const struct krc_report_resource_health **ret_rh,
                       const struct krc_report_device_health **ret_bad)
{
    int listed = 0;

    krc_report_unhealthy_accelerators(c, ret_rh, ret_bad, &listed);
    return listed;
}

/* The pod's JSON parsed (only its pod part); 0, or < 0 when it is not. */
static int parse(const char *raw, size_t len, struct krc_report *r)
{
    struct krc_error err;

    krc_report_init(r);
    krc_error_clear(&err);
    if (raw == NULL || len == 0 || krc_kube_parse_pod(raw, len, r, &err) < 0) {
        krc_report_cleanup(r);
        return -1;
    }
    return 0;
}

static int mentions_health(const char *raw, size_t len)
{
    static const char key[] = "allocatedResourcesStatus";

    return raw != NULL && len >= sizeof(key) - 1 && memmem(raw, len, key, sizeof(key) - 1) != NULL;
}

/* Drop entry i (caller holds the lock). */
static void remove_at(struct krc_dev_health *t, size_t i)
{
    t->v[i] = t->v[--t->n];
    atomic_store(&t->n_watched, t->n);
    if (t->n == 0) {
        krc_free(t->v); /* nothing watched: no memory held */
        t->v = NULL;
    }
}

static void expire(struct krc_dev_health *t, int64_t now_ms)
{
    /* remove_at frees v with the last entry */
    for (size_t i = t->n; t->v != NULL && i-- > 0;) {
        if (now_ms - t->v[i].seen_ms > t->window_ms) {
            remove_at(t, i);
        }
    }
}

int krc_dev_health_restart(struct krc_dev_health *t, const struct krc_restart_delta *d,
                           int64_t now_ms)
{
    const struct krc_container_info *c = d->container;
    struct krc_accel_hold what[KRC_ACCEL_HOLDS_PER_POD];
    struct watched *w = NULL;
    int holds;
    size_t dropped;

    if (strlen(c->name) >= KRC_DEV_HEALTH_CONTAINER_MAX ||
        strlen(d->pod->uid) >= KRC_RESTART_IDENT_UID_MAX) {
        return 0; /* not what the API server writes */
    }
    holds = krc_accel_scan_pod(d->pod->raw, d->pod->raw_len, c->name, what,
                               KRC_ACCEL_HOLDS_PER_POD) > 0;
    if (mentions_health(d->pod->raw, d->pod->raw_len)) {
        struct krc_report r;
        const struct krc_report_container *rc;
        const struct krc_report_resource_health *rh = NULL;
        const struct krc_report_device_health *bad = NULL;

        if (parse(d->pod->raw, d->pod->raw_len, &r) == 0) {
            rc = krc_report_container_get(&r, c->name, c->is_init);
            if (rc != NULL && scan_health(rc, &rh, &bad)) {
                holds = 1;
            }
            krc_report_cleanup(&r);
            if (bad != NULL) {
                return 0; /* the restart's own diagnosis sees it */
            }
        }
    }
    if (!holds) {
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->v[i].uid, d->pod->uid) == 0 && strcmp(t->v[i].container, c->name) == 0 &&
            t->v[i].is_init == c->is_init) {
            w = &t->v[i]; /* its next restart: the window starts again */
            break;
        }
    }
    if (w == NULL) {
        if (t->n >= KRC_DEV_HEALTH_MAX) {
            expire(t, now_ms);
        }
        if (t->v == NULL) {
            t->v = krc_calloc(KRC_DEV_HEALTH_MAX, sizeof(*t->v));
            if (t->v == NULL) {
                pthread_mutex_unlock(&t->lock);
                return 0;
            }
        }
        if (t->n >= KRC_DEV_HEALTH_MAX) {
            dropped = ++t->dropped;
            pthread_mutex_unlock(&t->lock);
            if ((dropped & (dropped - 1)) == 0) { /* the 1st, 2nd, 4th, 8th ... */
                krc_log(KRC_LOG_WARN,
                        "device health of %s/%s container %s not re-read after its restart: "
                        "already %d restarts watched (%zu not watched so far)",
                        d->pod->namespace, d->pod->name, c->name, KRC_DEV_HEALTH_MAX, dropped);
            }
            return 0;
        }
        w = &t->v[t->n++];
        memset(w, 0, sizeof(*w));
        snprintf(w->uid, sizeof(w->uid), "%s", d->pod->uid);
        snprintf(w->container, sizeof(w->container), "%s", c->name);
        w->is_init = c->is_init;
        atomic_store(&t->n_watched, t->n);
    }
    w->restart_count = c->restart_count;
    w->seen_ms = now_ms;
    pthread_mutex_unlock(&t->lock);
    return 1;
}

static void copy_clean(char *out, size_t outsz, const char *s)
{
    snprintf(out, outsz, "%s", s != NULL ? s : "");
}

int krc_dev_health_observe(struct krc_dev_health *t, const struct krc_pod_info *pod, int64_t now_ms,
                           char container[KRC_DEV_HEALTH_CONTAINER_MAX],
                           struct krc_dev_health_hit *hit)
{
    struct krc_report r;
    int found = 0;
    int parsed = 0;

    if (atomic_load(&t->n_watched) == 0) {
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    expire(t, now_ms);
    for (size_t i = 0; t->v != NULL && i < t->n && !found; i++) {
        struct watched *w = &t->v[i];
        const struct krc_report_container *c;
        const struct krc_report_resource_health *rh;
        const struct krc_report_device_health *bad;

        if (strcmp(w->uid, pod->uid) != 0) {
            continue;
        }
        if (!parsed) {
            if (parse(pod->raw, pod->raw_len, &r) < 0) {
                break; /* not a pod this update: the next one may be */
            }
            parsed = 1;
        }
        c = krc_report_container_get(&r, w->container, w->is_init);
        if (c == NULL) {
            continue;
        }
        if (c->restart_count_known && c->restart_count != w->restart_count) {
            remove_at(t, i--); /* restarted again: that restart reads the newer status */
            continue;
        }
        scan_health(c, &rh, &bad);
        if (bad == NULL) {
            continue;
        }
        memset(hit, 0, sizeof(*hit));
        copy_clean(hit->resource, sizeof(hit->resource), rh->name);
        copy_clean(hit->device, sizeof(hit->device), bad->resource_id);
        copy_clean(hit->message, sizeof(hit->message), bad->message);
        hit->restart_count = w->restart_count;
        hit->after_ms = now_ms - w->seen_ms;
        snprintf(container, KRC_DEV_HEALTH_CONTAINER_MAX, "%s", w->container);
        remove_at(t, i); /* once per restart */
        found = 1;
    }
    pthread_mutex_unlock(&t->lock);
    if (parsed) {
        krc_report_cleanup(&r);
    }
    return found;
}

void krc_dev_health_forget(struct krc_dev_health *t, const char *uid)
{
    if (atomic_load(&t->n_watched) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = t->n; t->v != NULL && i-- > 0;) {
        if (strcmp(t->v[i].uid, uid) == 0) {
            remove_at(t, i);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

size_t krc_dev_health_count(struct krc_dev_health *t)
{
    return atomic_load(&t->n_watched);
}
