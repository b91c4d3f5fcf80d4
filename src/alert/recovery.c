#include "krc/alert/recovery.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

/* Slots are indexed from 1 in the chains (0: the end). */
struct entry {
    uint64_t uid_hash;
    uint64_t name_hash; /* namespace/name */
    uint64_t gen;       /* the await that made or renewed it (krc_recovery_forget) */
    uint32_t next_uid;  /* the next entry of its UID bucket; a free slot: the next free one */
    uint32_t next_name; /* the next entry of its name bucket */
    int live;
    char uid[64];
    char namespace[256];
    char pod[256];
    char container[256];
    int restart_count;
    int64_t awaited_s;
    int64_t ready_since_s; /* 0: not running and ready */
};

/* The index: every live entry is in the UID bucket of its uid_hash and the name bucket of its
 * name_hash (chains through the entries), and counted in the filter under both hashes, so
 * that an event the filter says no to concerns no entry. The filter's counters are written
 * under the lock and read without it; one that reached 255 stays there (a lasting false
 * positive, never a false negative). */
struct krc_recovery {
    pthread_mutex_t lock;
    atomic_size_t n; /* live entries; read without the lock by krc_recovery_wants */
    size_t cap;
    size_t used;        /* slots handed out so far (the ones past it are untouched) */
    uint32_t free_head; /* a free slot below `used`, 0: none */
    uint64_t next_gen;
    size_t bucket_mask;
    uint32_t *uid_head; /* bucket -> first entry, 0: none */
    uint32_t *name_head;
    size_t filter_mask;
    atomic_uchar *filter;
    struct entry *v;
};

#define K1 0x9e3779b97f4a7c15ULL
#define K2 0xff51afd7ed558ccdULL

/* s's bytes into h, 8 a step (the last step takes the last 8 bytes, overlapping the one
 * before: a short tail costs no call), then its length. Every event hashes its UID and
 * namespace/name: this is most of what an event of a pod nothing waits for costs. */
static uint64_t mix_str(uint64_t h, const char *s)
{
    size_t len = s != NULL ? strlen(s) : 0;
    uint64_t w = 0;

    for (size_t i = 0; i + 8 < len; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * K1;
    }
    if (len >= 8) {
        memcpy(&w, s + len - 8, 8);
    } else {
        for (size_t k = 0; k < len; k++) {
            w |= (uint64_t)(unsigned char)s[k] << (8 * k);
        }
    }
    return ((h ^ w) * K1) ^ (uint64_t)len;
}

/* Every bit of h into the low and the high half (the filter's two slots, the buckets). */
static uint64_t finish(uint64_t h)
{
    h ^= h >> 32;
    h *= K2;
    h ^= h >> 29;
    h *= K1;
    h ^= h >> 32;
    return h;
}

static uint64_t hash_uid(const char *uid)
{
    return finish(mix_str(0x6b72632d75696431ULL, uid));
}

static uint64_t hash_name(const char *ns, const char *name)
{
    return finish(mix_str(mix_str(0x6b72632d6e616d65ULL, ns) * K2, name));
}

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

/* Capacities above this are refused (krc_recovery_new): the slots are 32-bit indexes. */
#define KRC_RECOVERY_MAX_CAP ((size_t)1 << 20)

static size_t pow2_at_least(size_t v)
{
    size_t p = 1;
    while (p < v) {
        p <<= 1;
    }
    return p;
}

struct krc_recovery *krc_recovery_new(size_t cap)
{
    struct krc_recovery *t;
    size_t buckets;
    size_t filter;
    char *block;

    if (cap > KRC_RECOVERY_MAX_CAP) {
        return NULL;
    }
    t = krc_calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->cap = cap > 0 ? cap : 1;
    buckets = pow2_at_least(t->cap * 2);
    filter = pow2_at_least(t->cap * 32);
    /* one zeroed block, zero being the empty state of every part: the daemon's (1024
     * entries, about 1 MiB) is mapped by malloc, so none of it is resident before it is used */
    block = krc_calloc(1, t->cap * sizeof(*t->v) + 2 * buckets * sizeof(uint32_t) + filter);
    if (block == NULL) {
        krc_recovery_free(t);
        return NULL;
    }
    t->v = (struct entry *)(void *)block;
    t->uid_head = (uint32_t *)(void *)(block + t->cap * sizeof(*t->v));
    t->name_head = t->uid_head + buckets;
    t->filter = (atomic_uchar *)(void *)(t->name_head + buckets);
    t->bucket_mask = buckets - 1;
    t->filter_mask = filter - 1;
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

/* --- the filter (written under the lock, read without it) ------------------- */

static void filter_slots(const struct krc_recovery *t, uint64_t h, size_t slot[2])
{
    slot[0] = (size_t)h & t->filter_mask;
    slot[1] = (size_t)(h >> 32) & t->filter_mask;
}

static void filter_add(struct krc_recovery *t, uint64_t h, int delta)
{
    size_t slot[2];

    filter_slots(t, h, slot);
    for (int k = 0; k < 2; k++) {
        unsigned c = atomic_load_explicit(&t->filter[slot[k]], memory_order_relaxed);
        if (c == 255 || (delta < 0 && c == 0)) {
            continue; /* saturated: stays (a lasting false positive) */
        }
        atomic_store_explicit(&t->filter[slot[k]], (unsigned char)(delta > 0 ? c + 1 : c - 1),
                              memory_order_relaxed);
    }
}

static int filter_has(const struct krc_recovery *t, uint64_t h)
{
    size_t slot[2];

    filter_slots(t, h, slot);
    return atomic_load_explicit(&t->filter[slot[0]], memory_order_relaxed) != 0 &&
           atomic_load_explicit(&t->filter[slot[1]], memory_order_relaxed) != 0;
}

/* --- the index (caller holds the lock) ----------------------------------------- */

static uint32_t *uid_bucket(struct krc_recovery *t, uint64_t h)
{
    return &t->uid_head[h & t->bucket_mask];
}

static uint32_t *name_bucket(struct krc_recovery *t, uint64_t h)
{
    return &t->name_head[h & t->bucket_mask];
}

static uint32_t slot_of(const struct krc_recovery *t, const struct entry *e)
{
    return (uint32_t)(e - t->v) + 1;
}

static void unlink_entry(struct krc_recovery *t, struct entry *e)
{
    uint32_t s = slot_of(t, e);
    uint32_t *link = uid_bucket(t, e->uid_hash);

    while (*link != 0 && *link != s) {
        link = &t->v[*link - 1].next_uid;
    }
    if (*link == s) {
        *link = e->next_uid;
    }
    link = name_bucket(t, e->name_hash);
    while (*link != 0 && *link != s) {
        link = &t->v[*link - 1].next_name;
    }
    if (*link == s) {
        *link = e->next_name;
    }
}

static void drop(struct krc_recovery *t, struct entry *e)
{
    unlink_entry(t, e);
    filter_add(t, e->uid_hash, -1);
    filter_add(t, e->name_hash, -1);
    e->live = 0;
    e->next_name = 0;
    e->next_uid = t->free_head;
    t->free_head = slot_of(t, e);
    atomic_store(&t->n, atomic_load(&t->n) - 1);
}

/* A slot for a new entry: a free one, else the entry awaited longest is replaced. */
static struct entry *take_slot(struct krc_recovery *t)
{
    struct entry *e;

    if (t->free_head != 0) {
        e = &t->v[t->free_head - 1];
        t->free_head = e->next_uid;
        return e;
    }
    if (t->used < t->cap) {
        return &t->v[t->used++];
    }
    /* full: no free slot below `used`, so every slot is live; the oldest goes */
    e = &t->v[0];
    for (size_t i = 1; i < t->used; i++) {
        if (t->v[i].awaited_s < e->awaited_s) {
            e = &t->v[i];
        }
    }
    drop(t, e);
    t->free_head = e->next_uid;
    return e;
}

static struct entry *find(struct krc_recovery *t, const char *uid, const char *container)
{
    uint64_t h = hash_uid(uid);

    for (uint32_t s = *uid_bucket(t, h); s != 0; s = t->v[s - 1].next_uid) {
        struct entry *e = &t->v[s - 1];
        if (e->uid_hash == h && strcmp(e->uid, uid) == 0 && strcmp(e->container, container) == 0) {
            return e;
        }
    }
    return NULL;
}

/* --- the calls ------------------------------------------------------------------ */

void krc_recovery_await(struct krc_recovery *t, const char *uid, const char *ns, const char *name,
                        const char *container, int restart_count, int64_t now_s)
{
    struct entry *e;

    if (t == NULL) {
        return;
    }
    uid = str(uid);
    container = str(container);
    pthread_mutex_lock(&t->lock);
    e = find(t, uid, container);
    if (e == NULL) {
        e = take_slot(t);
        memset(e, 0, sizeof(*e));
        e->uid_hash = hash_uid(uid);
        e->name_hash = hash_name(ns, name);
        snprintf(e->uid, sizeof(e->uid), "%s", uid);
        snprintf(e->namespace, sizeof(e->namespace), "%s", str(ns));
        snprintf(e->pod, sizeof(e->pod), "%s", str(name));
        snprintf(e->container, sizeof(e->container), "%s", container);
        e->live = 1;
        e->next_uid = *uid_bucket(t, e->uid_hash);
        *uid_bucket(t, e->uid_hash) = slot_of(t, e);
        e->next_name = *name_bucket(t, e->name_hash);
        *name_bucket(t, e->name_hash) = slot_of(t, e);
        filter_add(t, e->uid_hash, 1);
        filter_add(t, e->name_hash, 1);
        atomic_store(&t->n, atomic_load(&t->n) + 1);
    }
    e->gen = ++t->next_gen;
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

int krc_recovery_wants(const struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                       struct krc_recovery_probe *p)
{
    if (t == NULL || atomic_load_explicit(&t->n, memory_order_relaxed) == 0) {
        return 0; /* nothing awaited: the common case */
    }
    p->uid_hash = hash_uid(pod->uid);
    p->name_hash = 0;
    if (filter_has(t, p->uid_hash)) {
        p->name_hash = hash_name(pod->namespace, pod->name);
        return 1;
    }
    if (deleted) {
        return 0; /* a deleted pod matters by its UID only */
    }
    /* a pod of an awaited pod's name and another UID replaced it */
    p->name_hash = hash_name(pod->namespace, pod->name);
    return filter_has(t, p->name_hash);
}

void krc_recovery_apply(struct krc_recovery *t, const struct krc_pod_info *pod, int deleted,
                        const struct krc_recovery_probe *p, int64_t now_s)
{
    const char *uid = str(pod->uid);
    const char *ns = str(pod->namespace);
    const char *name = str(pod->name);
    uint32_t next;

    if (t == NULL) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (uint32_t s = *uid_bucket(t, p->uid_hash); s != 0; s = next) {
        struct entry *e = &t->v[s - 1];
        next = e->next_uid;
        if (e->uid_hash != p->uid_hash || strcmp(e->uid, uid) != 0) {
            continue;
        }
        if (deleted) {
            drop(t, e);
            continue;
        }
        for (size_t k = 0; k < pod->n_containers; k++) {
            if (strcmp(pod->containers[k].name, e->container) == 0) {
                observe_container(e, &pod->containers[k], now_s);
                break;
            }
        }
    }
    for (uint32_t s = deleted ? 0 : *name_bucket(t, p->name_hash); s != 0; s = next) {
        struct entry *e = &t->v[s - 1];
        next = e->next_name;
        if (e->name_hash == p->name_hash && strcmp(e->namespace, ns) == 0 &&
            strcmp(e->pod, name) == 0 && strcmp(e->uid, uid) != 0) {
            drop(t, e); /* replaced by a pod of the same name */
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void krc_recovery_expire(struct krc_recovery *t, int64_t now_s)
{
    if (t == NULL || atomic_load(&t->n) == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->used; i++) {
        if (t->v[i].live && now_s - t->v[i].awaited_s > KRC_RECOVERY_KEEP_S) {
            drop(t, &t->v[i]);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

int krc_recovery_ready(struct krc_recovery *t, const char *uid, const char *container,
                       int64_t now_s, int64_t *ret_ready_since, uint64_t *ret_gen)
{
    struct entry *e;
    int rc = 0;

    *ret_ready_since = 0;
    if (ret_gen != NULL) {
        *ret_gen = 0;
    }
    if (t == NULL || uid == NULL || uid[0] == '\0') {
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    e = find(t, uid, str(container));
    if (e != NULL) {
        *ret_ready_since = e->ready_since_s;
        if (ret_gen != NULL) {
            *ret_gen = e->gen;
        }
        e->awaited_s = now_s; /* an open incident still waits for it */
        rc = 1;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

void krc_recovery_forget(struct krc_recovery *t, const char *uid, const char *container,
                         uint64_t gen)
{
    struct entry *e;

    if (t == NULL || uid == NULL || uid[0] == '\0' || gen == 0) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    e = find(t, uid, str(container));
    if (e != NULL && e->gen == gen) {
        drop(t, e);
    }
    pthread_mutex_unlock(&t->lock);
}

size_t krc_recovery_count(const struct krc_recovery *t)
{
    return t != NULL ? atomic_load(&t->n) : 0;
}
