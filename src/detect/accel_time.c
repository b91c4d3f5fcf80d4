/* GPU time lost (include/krc/detect/accel_time.h): the accelerators a
 * restarted container holds, and the device-seconds it spends not running
 * while holding them, from the pod updates the watch applies. */
#include "krc/detect/accel_time.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/model/restart_ident.h"
#include "krc/util/jscan.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

/* ---- the pod's spec: what a container holds -------------------------------- */

/* A string value into out (NUL-terminated); 0, or 1 when it does not fit or
 * is not a string (skipped), or KRC_EPARSE. */
static int scan_string(struct krc_jscan *s, char *out, size_t outsz, struct krc_error *err)
{
    struct krc_jscan_str str;
    int t = krc_jscan_peek(s, err);
    int rc;

    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_STRING) {
        rc = krc_jscan_skip(s, NULL, err);
        return rc < 0 ? rc : 1;
    }
    rc = krc_jscan_string(s, &str, err);
    if (rc < 0) {
        return rc;
    }
    if (str.raw_len >= outsz) {
        return 1;
    }
    out[krc_jscan_unescape(&str, out)] = '\0';
    return 0;
}

/* A whole, non-negative number of devices ("8"); 0 for anything else. */
static long whole_quantity(const char *q)
{
    char *end = NULL;
    long v;

    errno = 0;
    v = strtol(q, &end, 10);
    if (errno != 0 || end == q || *end != '\0' || v < 0 || q[0] == '+' || q[0] == '-') {
        return 0;
    }
    return v;
}

/* resources.limits or resources.requests: the accelerator entries into out. */
static int scan_quantities(struct krc_jscan *s, struct krc_accel_hold *out, size_t max,
                           size_t *ret_n, struct krc_error *err)
{
    struct krc_jscan_str k;
    char key[KRC_ACCEL_NAME_MAX];
    char val[32];
    int t = krc_jscan_peek(s, err);
    int rc;

    *ret_n = 0;
    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
    }
    if ((rc = krc_jscan_object_begin(s, err)) < 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) > 0) {
        long n;

        if (k.raw_len >= sizeof(key)) {
            rc = krc_jscan_skip(s, NULL, err);
        } else {
            key[krc_jscan_unescape(&k, key)] = '\0';
            rc = scan_string(s, val, sizeof(val), err);
            if (rc == 0 && *ret_n < max && krc_report_is_gpu_resource(key) &&
                (n = whole_quantity(val)) > 0) {
                snprintf(out[*ret_n].resource, sizeof(out[*ret_n].resource), "%s", key);
                out[*ret_n].devices = n;
                (*ret_n)++;
            }
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc;
}

/* One container's spec: its name and what its resources hold (limits, else
 * requests: a device plugin's resource has both equal when both are set). */
static int scan_container(struct krc_jscan *s, char *name, size_t namesz,
                          struct krc_accel_hold *out, size_t max, size_t *ret_n,
                          struct krc_error *err)
{
    struct krc_jscan_str k;
    struct krc_accel_hold req[KRC_ACCEL_HOLDS_PER_POD];
    size_t n_lim = 0;
    size_t n_req = 0;
    int rc;

    name[0] = '\0';
    *ret_n = 0;
    if (krc_jscan_peek(s, err) != KRC_JSON_OBJECT) {
        return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
    }
    if ((rc = krc_jscan_object_begin(s, err)) < 0) {
        return rc;
    }
    if (max > KRC_ACCEL_HOLDS_PER_POD) {
        max = KRC_ACCEL_HOLDS_PER_POD;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) > 0) {
        if (KRC_JSCAN_EQ(&k, "name")) {
            rc = scan_string(s, name, namesz, err);
            if (rc == 1) {
                name[0] = '\0';
            }
        } else if (KRC_JSCAN_EQ(&k, "resources") && krc_jscan_peek(s, err) == KRC_JSON_OBJECT) {
            rc = krc_jscan_object_begin(s, err);
            while (rc >= 0 && (rc = krc_jscan_object_next(s, &k, err)) > 0) {
                if (KRC_JSCAN_EQ(&k, "limits")) {
                    rc = scan_quantities(s, out, max, &n_lim, err);
                } else if (KRC_JSCAN_EQ(&k, "requests")) {
                    rc = scan_quantities(s, req, max, &n_req, err);
                } else {
                    rc = krc_jscan_skip(s, NULL, err);
                }
            }
        } else {
            rc = krc_jscan_skip(s, NULL, err);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc < 0) {
        return rc;
    }
    if (n_lim == 0 && n_req > 0) {
        memcpy(out, req, n_req * sizeof(*req));
        n_lim = n_req;
    }
    *ret_n = n_lim;
    return 0;
}

size_t krc_accel_scan_pod(const char *json, size_t len, const char *container,
                          struct krc_accel_hold *out, size_t max)
{
    struct krc_jscan s;
    struct krc_jscan_str k;
    struct krc_error err;
    struct krc_accel_hold tmp[KRC_ACCEL_HOLDS_PER_POD];
    char name[KRC_RESTART_IDENT_CONTAINER_MAX];
    size_t found = 0;
    int rc;

    if (json == NULL || container == NULL || max == 0 ||
        !krc_report_json_may_name_gpu_resource(json, len)) {
        return 0; /* most pods: no device resource named anywhere, nothing to scan */
    }
    krc_jscan_init(&s, json, len, "pod");
    if (krc_jscan_object_begin(&s, &err) < 0) {
        return 0;
    }
    while ((rc = krc_jscan_object_next(&s, &k, &err)) > 0) {
        if (!KRC_JSCAN_EQ(&k, "spec") || krc_jscan_peek(&s, &err) != KRC_JSON_OBJECT) {
            rc = krc_jscan_skip(&s, NULL, &err);
            if (rc < 0) {
                return 0;
            }
            continue;
        }
        if (krc_jscan_object_begin(&s, &err) < 0) {
            return 0;
        }
        while ((rc = krc_jscan_object_next(&s, &k, &err)) > 0) {
            if ((KRC_JSCAN_EQ(&k, "containers") || KRC_JSCAN_EQ(&k, "initContainers")) &&
                krc_jscan_peek(&s, &err) == KRC_JSON_ARRAY) {
                rc = krc_jscan_array_begin(&s, &err);
                while (rc >= 0 && (rc = krc_jscan_array_next(&s, &err)) > 0) {
                    size_t n = 0;
                    rc = scan_container(&s, name, sizeof(name), tmp, max, &n, &err);
                    if (rc >= 0 && n > 0 && strcmp(name, container) == 0) {
                        memcpy(out, tmp, n * sizeof(*tmp));
                        found = n;
                    }
                }
            } else {
                rc = krc_jscan_skip(&s, NULL, &err);
            }
            if (rc < 0) {
                return 0;
            }
        }
        if (rc < 0) {
            return 0;
        }
    }
    return rc < 0 ? 0 : found;
}

/* ---- the table ------------------------------------------------------------- */

struct hold {
    char container[KRC_ACCEL_CONTAINER_MAX];
    struct krc_accel_hold what;
    int down;           /* a spell of not running is open */
    int64_t counted_ms; /* its time is counted up to here; when closed: its end */
    int64_t lost_ms;    /* counted so far, every spell */
    int64_t noted_ms;   /* the note's lost_ms at the last restart (since_last_ms) */
};

struct pod_entry {
    char uid[KRC_RESTART_IDENT_UID_MAX];
    char namespace[KRC_ACCEL_NAME_MAX];
    char workload[KRC_ACCEL_NAME_MAX];
    int seen; /* applied again during the relist under way */
    size_t n;
    struct hold h[KRC_ACCEL_HOLDS_PER_POD];
};

struct krc_accel_time {
    pthread_mutex_t lock;
    atomic_size_t n_pods; /* read without the lock: the fast path */
    struct pod_entry **pods;
    size_t n;
    size_t cap;
    size_t dropped;
    krc_accel_emit_fn emit;
    void *userdata;
};

struct krc_accel_time *krc_accel_time_new(krc_accel_emit_fn emit, void *userdata)
{
    struct krc_accel_time *t = krc_calloc(1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    atomic_init(&t->n_pods, 0);
    t->emit = emit;
    t->userdata = userdata;
    return t;
}

void krc_accel_time_free(struct krc_accel_time *t)
{
    if (t == NULL) {
        return;
    }
    for (size_t i = 0; i < t->n; i++) {
        krc_free(t->pods[i]);
    }
    krc_free(t->pods);
    pthread_mutex_destroy(&t->lock);
    krc_free(t);
}

/* Tracked pods are few (pods holding devices that restarted): a linear
 * search, only ever run while at least one is tracked. */
static struct pod_entry *find_pod(struct krc_accel_time *t, const char *uid, size_t *ret_i)
{
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->pods[i]->uid, uid) == 0) {
            if (ret_i != NULL) {
                *ret_i = i;
            }
            return t->pods[i];
        }
    }
    return NULL;
}

static int pod_down(const struct pod_entry *e)
{
    for (size_t i = 0; i < e->n; i++) {
        if (e->h[i].down) {
            return 1;
        }
    }
    return 0;
}

/* Close the pod's spells at now_ms and drop it. */
static void remove_at(struct krc_accel_time *t, size_t at, int64_t now_ms);

static struct hold *find_hold(struct pod_entry *e, const char *container, const char *resource)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->h[i].container, container) == 0 &&
            (resource == NULL || strcmp(e->h[i].what.resource, resource) == 0)) {
            return &e->h[i];
        }
    }
    return NULL;
}

/* Count an open spell up to now_ms. */
static void count(struct krc_accel_time *t, const struct pod_entry *e, struct hold *h,
                  int64_t now_ms)
{
    int64_t d;

    if (!h->down || now_ms <= h->counted_ms) {
        return;
    }
    d = now_ms - h->counted_ms;
    h->counted_ms = now_ms;
    h->lost_ms += d;
    if (t->emit != NULL) {
        t->emit(e->namespace, e->workload, h->what.resource,
                (double)h->what.devices * (double)d / 1000.0, t->userdata);
    }
}

static void close_spell(struct krc_accel_time *t, const struct pod_entry *e, struct hold *h,
                        int64_t now_ms)
{
    count(t, e, h, now_ms);
    h->down = 0;
    if (now_ms > h->counted_ms) {
        h->counted_ms = now_ms;
    }
}

/* A spell starts at `start_ms`, never before the end of the last one. */
static void open_spell(struct hold *h, int64_t start_ms)
{
    if (h->down) {
        return;
    }
    h->down = 1;
    if (start_ms > h->counted_ms) {
        h->counted_ms = start_ms;
    }
}

static void fill_note(struct hold *h, int64_t now_ms, struct krc_accel_note *note)
{
    snprintf(note->resource, sizeof(note->resource), "%s", h->what.resource);
    note->devices = h->what.devices;
    note->lost_ms = h->lost_ms + (h->down && now_ms > h->counted_ms ? now_ms - h->counted_ms : 0);
    note->at_ms = now_ms;
    note->down = h->down;
    note->since_last_ms = note->lost_ms > h->noted_ms ? note->lost_ms - h->noted_ms : 0;
    if (note->lost_ms > h->noted_ms) {
        h->noted_ms = note->lost_ms;
    }
}

/* When the spell of a termination began, on the caller's clock: its
 * finishedAt (unix seconds, compared with wall_s) when known and recent,
 * else now. */
static int64_t spell_start(const struct krc_container_info *c, int64_t now_ms, int64_t wall_s)
{
    int64_t ago = wall_s - c->last_finished_at;

    if (c->last_finished_at > 0 && ago >= 0 && ago <= KRC_ACCEL_BACKDATE_MAX_S) {
        return now_ms - ago * 1000;
    }
    return now_ms;
}

/* The workload label: the Deployment (or other controller) the pod belongs
 * to as the report names it, else the pod itself. */
static void workload_of(const struct krc_pod_info *pod, char *out, size_t outsz)
{
    struct krc_report r;
    struct krc_error err;

    krc_report_init(&r);
    krc_error_clear(&err);
    if (krc_kube_parse_pod(pod->raw, pod->raw_len, &r, &err) == 0 && r.workload_name != NULL) {
        snprintf(out, outsz, "%s", r.workload_name);
    } else {
        snprintf(out, outsz, "%s", pod->name);
    }
    krc_report_cleanup(&r);
}

void krc_accel_time_restart(struct krc_accel_time *t, const struct krc_restart_delta *d,
                            int64_t now_ms, int64_t wall_s, struct krc_accel_note *note)
{
    const struct krc_container_info *c = d->container;
    struct krc_accel_hold what[KRC_ACCEL_HOLDS_PER_POD];
    struct pod_entry *e;
    struct hold *h;
    size_t n;
    char workload[KRC_ACCEL_NAME_MAX];

    memset(note, 0, sizeof(*note));
    if (strlen(c->name) >= KRC_ACCEL_CONTAINER_MAX ||
        strlen(d->pod->uid) >= KRC_RESTART_IDENT_UID_MAX) {
        return; /* not what the API server writes: could not be found again */
    }
    pthread_mutex_lock(&t->lock);
    e = find_pod(t, d->pod->uid, NULL);
    if (e != NULL && find_hold(e, c->name, NULL) != NULL) {
        /* tracked: the spells of each resource it holds go on, or start */
        for (size_t i = 0; i < e->n; i++) {
            h = &e->h[i];
            if (strcmp(h->container, c->name) == 0) {
                open_spell(h, spell_start(c, now_ms, wall_s));
            }
        }
        fill_note(find_hold(e, c->name, NULL), now_ms, note);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    pthread_mutex_unlock(&t->lock);

    n = krc_accel_scan_pod(d->pod->raw, d->pod->raw_len, c->name, what, KRC_ACCEL_HOLDS_PER_POD);
    if (n == 0) {
        return; /* holds no accelerator: nothing kept */
    }
    workload_of(d->pod, workload, sizeof(workload));

    pthread_mutex_lock(&t->lock);
    e = find_pod(t, d->pod->uid, NULL);
    if (e == NULL) {
        for (size_t i = 0; t->n >= KRC_ACCEL_MAX_PODS && i < t->n; i++) {
            if (!pod_down(t->pods[i])) {
                remove_at(t, i, now_ms); /* running again: only its "so far" is lost */
            }
        }
        if (t->n >= KRC_ACCEL_MAX_PODS) {
            size_t dropped = ++t->dropped;
            pthread_mutex_unlock(&t->lock);
            if ((dropped & (dropped - 1)) != 0) {
                return; /* logged at the 1st, 2nd, 4th, 8th ... */
            }
            krc_log(KRC_LOG_WARN,
                    "GPU time of %s/%s container %s not counted: already %d pods tracked "
                    "(%zu pods not counted so far)",
                    d->pod->namespace, d->pod->name, c->name, KRC_ACCEL_MAX_PODS, dropped);
            return;
        }
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 8;
            struct pod_entry **p = krc_realloc(t->pods, cap * sizeof(*p));
            if (p == NULL) {
                pthread_mutex_unlock(&t->lock);
                return;
            }
            t->pods = p;
            t->cap = cap;
        }
        e = krc_calloc(1, sizeof(*e));
        if (e == NULL) {
            pthread_mutex_unlock(&t->lock);
            return;
        }
        snprintf(e->uid, sizeof(e->uid), "%s", d->pod->uid);
        snprintf(e->namespace, sizeof(e->namespace), "%s", d->pod->namespace);
        snprintf(e->workload, sizeof(e->workload), "%s", workload);
        e->seen = 1;
        t->pods[t->n++] = e;
        atomic_store(&t->n_pods, t->n);
    }
    for (size_t i = 0; i < n && e->n < KRC_ACCEL_HOLDS_PER_POD; i++) {
        if (find_hold(e, c->name, what[i].resource) != NULL) {
            continue;
        }
        h = &e->h[e->n++];
        memset(h, 0, sizeof(*h));
        snprintf(h->container, sizeof(h->container), "%s", c->name);
        h->what = what[i];
        open_spell(h, spell_start(c, now_ms, wall_s));
    }
    h = find_hold(e, c->name, NULL);
    if (h != NULL) {
        fill_note(h, now_ms, note);
    }
    pthread_mutex_unlock(&t->lock);
}

static const struct krc_container_info *status_of(const struct krc_pod_info *pod, const char *name)
{
    for (size_t i = 0; i < pod->n_containers; i++) {
        if (strcmp(pod->containers[i].name, name) == 0) {
            return &pod->containers[i];
        }
    }
    return NULL;
}

static int pod_finished(const struct krc_pod_info *pod)
{
    return pod->deleting || (pod->phase != NULL && (strcmp(pod->phase, "Succeeded") == 0 ||
                                                    strcmp(pod->phase, "Failed") == 0));
}

void krc_accel_time_observe(struct krc_accel_time *t, const struct krc_pod_info *pod,
                            int64_t now_ms)
{
    struct pod_entry *e;
    int finished;

    if (atomic_load(&t->n_pods) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    e = find_pod(t, pod->uid, NULL);
    if (e == NULL) {
        pthread_mutex_unlock(&t->lock);
        return;
    }
    e->seen = 1;
    finished = pod_finished(pod);
    for (size_t i = 0; i < e->n; i++) {
        struct hold *h = &e->h[i];
        const struct krc_container_info *c = status_of(pod, h->container);

        if (finished || (c != NULL && c->state_running)) {
            close_spell(t, e, h, now_ms);
        } else if (c != NULL && (c->state_waiting || c->state_terminated)) {
            open_spell(h, now_ms);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

static void remove_at(struct krc_accel_time *t, size_t at, int64_t now_ms)
{
    struct pod_entry *e = t->pods[at];

    for (size_t i = 0; i < e->n; i++) {
        close_spell(t, e, &e->h[i], now_ms);
    }
    krc_free(e);
    t->pods[at] = t->pods[--t->n];
    atomic_store(&t->n_pods, t->n);
    if (t->n == 0) {
        krc_free(t->pods); /* nothing tracked: no memory held */
        t->pods = NULL;
        t->cap = 0;
    }
}

void krc_accel_time_forget(struct krc_accel_time *t, const char *uid, int64_t now_ms)
{
    size_t at = 0;

    if (atomic_load(&t->n_pods) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (find_pod(t, uid, &at) != NULL) {
        remove_at(t, at, now_ms);
    }
    pthread_mutex_unlock(&t->lock);
}

void krc_accel_time_sync_begin(struct krc_accel_time *t)
{
    if (atomic_load(&t->n_pods) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        t->pods[i]->seen = 0;
    }
    pthread_mutex_unlock(&t->lock);
}

void krc_accel_time_sync_end(struct krc_accel_time *t, int64_t now_ms)
{
    if (atomic_load(&t->n_pods) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = t->n; t->pods != NULL && i-- > 0;) {
        if (!t->pods[i]->seen) {
            remove_at(t, i, now_ms);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void krc_accel_time_flush(struct krc_accel_time *t, int64_t now_ms)
{
    if (atomic_load(&t->n_pods) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        for (size_t j = 0; j < t->pods[i]->n; j++) {
            count(t, t->pods[i], &t->pods[i]->h[j], now_ms);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

size_t krc_accel_time_count(struct krc_accel_time *t)
{
    return atomic_load(&t->n_pods);
}

size_t krc_accel_time_dropped(struct krc_accel_time *t)
{
    size_t n;

    pthread_mutex_lock(&t->lock);
    n = t->dropped;
    pthread_mutex_unlock(&t->lock);
    return n;
}
