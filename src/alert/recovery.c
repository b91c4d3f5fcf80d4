#include "krc/alert/recovery.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

struct entry {
    uint64_t uid_hash;
    uint64_t name_hash; /* namespace/name */
    char uid[64];
    char namespace[256];
    char pod[256];
    char container[256];
    int restart_count;
    int64_t awaited_s;
    int64_t ready_since_s; /* 0: not running and ready */
};

struct krc_recovery {
    pthread_mutex_t lock;
    atomic_size_t n; /* read without the lock by observe's fast path */
    size_t cap;
    struct entry *v;
};

static uint64_t hash2(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = a; s != NULL && *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    if (b != NULL) {
        h ^= '/';
        h *= 1099511628211ULL;
        for (const char *s = b; *s != '\0'; s++) {
            h ^= (unsigned char)*s;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

struct krc_recovery *krc_recovery_new(size_t cap)
{
    struct krc_recovery *t = krc_calloc(1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    t->v = krc_calloc(cap > 0 ? cap : 1, sizeof(*t->v));
    if (t->v == NULL) {
        krc_free(t);
        return NULL;
    }
    t->cap = cap > 0 ? cap : 1;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void krc_recovery_free(struct krc_recovery *t)
{
    if (t == NULL) {
        return;
    }
    pthread_mutex_destroy(&t->lock);
    krc_free(t->v);
    krc_free(t);
}

/* Caller holds the lock. */
static void drop(struct krc_recovery *t, size_t i)
{
    size_t n = atomic_load(&t->n);
    t->v[i] = t->v[n - 1];
    atomic_store(&t->n, n - 1);
}

static struct entry *find(struct krc_recovery *t, const char *uid, const char *container)
{
    uint64_t h = hash2(uid, NULL);
    size_t n = atomic_load(&t->n);

    for (size_t i = 0; i < n; i++) {
        if (t->v[i].uid_hash == h && strcmp(t->v[i].uid, uid) == 0 &&
            strcmp(t->v[i].container, container) == 0) {
            return &t->v[i];
        }
    }
    return NULL;
}

void krc_recovery_await(struct krc_recovery *t, const char *uid, const char *ns, const char *name,
                        const char *container, int restart_count, int64_t now_s)
{
    struct entry *e;

    if (t == NULL) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    e = find(t, uid, container);
    if (e == NULL) {
        size_t n = atomic_load(&t->n);
        if (n < t->cap) {
            e = &t->v[n];
            atomic_store(&t->n, n + 1);
        } else {
            e = &t->v[0]; /* full: replace the entry awaited longest */
            for (size_t i = 1; i < n; i++) {
                if (t->v[i].awaited_s < e->awaited_s) {
                    e = &t->v[i];
                }
            }
        }
        memset(e, 0, sizeof(*e));
        e->uid_hash = hash2(uid, NULL);
        e->name_hash = hash2(ns, name);
        snprintf(e->uid, sizeof(e->uid), "%s", uid);
        snprintf(e->namespace, sizeof(e->namespace), "%s", ns);
        snprintf(e->pod, sizeof(e->pod), "%s", name);
        snprintf(e->container, sizeof(e->container), "%s", container);
    }
    e->awaited_s = now_s;
    e->restart_count = restart_count;
    e->ready_since_s = 0; /* the event being applied says whether it runs ready */
    pthread_mutex_unlock(&t->lock);
}

/* Update an entry from its container's status in an event. */
static void observe_container(struct entry *e, const struct krc_container_info *c, int64_t now_s)
{
    int up = c->state_running && c->ready;

    if (c->restart_count != e->restart_count) {
        /* it restarted again: the reply waits for this restart to settle */
        e->restart_count = c->restart_count;
        e->ready_since_s = up ? now_s : 0;
        return;
    }
    if (!up) {
        e->ready_since_s = 0;
    } else if (e->ready_since_s == 0) {
        e->ready_since_s = now_s;
    }
}

int krc_recovery_awaiting(struct krc_recovery *t)
{
    return t != NULL && atomic_load(&t->n) != 0;
}

void krc_recovery_observe(struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                          int64_t now_s)
{
    uint64_t uh;
    uint64_t nh;

    if (t == NULL || atomic_load(&t->n) == 0) {
        return; /* nothing awaited: the common case */
    }
    uh = hash2(pod->uid, NULL);
    nh = hash2(pod->namespace, pod->name);
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < atomic_load(&t->n);) {
        struct entry *e = &t->v[i];
        int same_uid = e->uid_hash == uh && strcmp(e->uid, pod->uid) == 0;
        int replaced = !same_uid && e->name_hash == nh &&
                       strcmp(e->namespace, pod->namespace) == 0 && strcmp(e->pod, pod->name) == 0;

        if ((same_uid && deleted) || (replaced && !deleted)) {
            drop(t, i); /* deleted, or replaced by a pod of the same name */
            continue;
        }
        if (same_uid) {
            for (size_t k = 0; k < pod->n_containers; k++) {
                if (strcmp(pod->containers[k].name, e->container) == 0) {
                    observe_container(e, &pod->containers[k], now_s);
                    break;
                }
            }
        }
        i++;
    }
    pthread_mutex_unlock(&t->lock);
}

void krc_recovery_expire(struct krc_recovery *t, int64_t now_s)
{
    if (t == NULL || atomic_load(&t->n) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < atomic_load(&t->n);) {
        if (now_s - t->v[i].awaited_s > KRC_RECOVERY_UNARMED_S) {
            drop(t, i);
            continue;
        }
        i++;
    }
    pthread_mutex_unlock(&t->lock);
}

int krc_recovery_ready(struct krc_recovery *t, const char *uid, const char *container,
                       int64_t now_s, int64_t *ret_ready_since)
{
    struct entry *e;
    int rc = 0;

    *ret_ready_since = 0;
    if (t == NULL || uid == NULL || uid[0] == '\0') {
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    e = find(t, uid, container);
    if (e != NULL) {
        *ret_ready_since = e->ready_since_s;
        e->awaited_s = now_s; /* an open incident still waits for it */
        rc = 1;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

size_t krc_recovery_count(struct krc_recovery *t)
{
    return t != NULL ? atomic_load(&t->n) : 0;
}
