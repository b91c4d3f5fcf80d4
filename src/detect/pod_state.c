#include "krc/detect/pod_state.h"

#include <assert.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

/* Layout (see docs/design/detection-and-identity.md, "The detection table"): one allocation per
 * pod holding only what the comparison reads back:
 *
 *   struct pod_rec (20 bytes)   uid as 16 binary bytes, container count, flags
 *   struct cstate[n] (12 each)  finishedAt, restartCount, interned name | init
 *   [uid text + NUL]            only when the uid is not a canonical UUID
 *
 * Namespace and name are not stored: a pod's UID fixes them, and detection
 * reports from the pod being applied, never from the record. Container names
 * repeat across all pods of a workload, so they live once in a refcounted
 * intern pool and records hold 31-bit ids. The benchmark pod (3 containers)
 * is a 56-byte record, a 64-byte malloc chunk, against 160 before. */

/* Per container: 12 bytes. */
struct cstate {
    uint32_t finished_at; /* lastState.terminated.finishedAt (unix s, clamped), 0 when none */
    int32_t restart_count;
    uint32_t name; /* intern id << 1 | CS_INIT */
};

#define CS_INIT 1u

#define REC_UID_STR 1u /* the uid is text after the containers, uid[] unused */
#define REC_SEEN 2u    /* applied since the last sync_begin */

struct pod_rec {
    uint8_t uid[16]; /* canonical UUID text 8-4-4-4-12 lowercase hex, as bytes */
    uint16_t n_containers;
    uint8_t flags;
    uint8_t reserved;
    struct cstate c[];
};

struct slot {
    uint64_t hash; /* 0: empty, 1: tombstone */
    struct pod_rec *rec;
};

/* An interned string: the ids in cstate index `ent`. */
struct istr {
    uint32_t refs;
    uint32_t hash;
    char s[];
};

/* String -> id, refcounted. The arrays exist only while some string is
 * interned: an empty pool holds no memory. */
struct intern {
    struct istr **ent;  /* by id, NULL for a free id; ent_cap entries */
    uint32_t *free_ids; /* stack of free ids below n_ids; ent_cap entries */
    uint32_t *index;    /* linear probing, id + 1 (0: empty); index_cap entries */
    size_t ent_cap;
    size_t n_ids; /* ids handed out so far (high-water mark) */
    size_t n_free;
    size_t live;
    size_t index_cap; /* power of two, load <= 1/2 */
    size_t str_bytes; /* malloc chunks of the entries */
};

#define INTERN_MAX_IDS (UINT32_MAX >> 1)

struct krc_pod_state {
    struct slot *slots;
    size_t cap;   /* power of two */
    size_t count; /* live records */
    size_t used;  /* live + tombstones */
    size_t rec_bytes;
    struct intern names;
    int64_t report_since;
    int64_t start_time;
};

#define MIN_CAP 1024

/* A uid to look up: binary when it is a canonical UUID. */
struct uid_key {
    const char *str;
    int binary;
    uint8_t bytes[16];
    uint64_t hash;
};

/* What glibc's malloc takes for a request: an 8-byte header, rounded to 16,
 * at least 32. Used so that krc_pod_state_memory() tracks the real heap. */
static size_t chunk_bytes(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

static uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* Hex digit value + 1; 0 for anything else (uppercase included: Kubernetes
 * compares UIDs as strings, so "ABC..." and "abc..." are different pods and
 * only the lowercase spelling maps to bytes). */
static const uint8_t hexv[256] = {
    ['0'] = 1, ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* 8-4-4-4-12 lowercase hex and nothing else: exactly the texts that the
 * 16 bytes give back, so the mapping cannot make two uids collide. */
static int uuid_parse(const char *s, uint8_t out[16])
{
    const unsigned char *p = (const unsigned char *)s;

    for (int b = 0; b < 16; b++) {
        unsigned hi;
        unsigned lo;
        if (b == 4 || b == 6 || b == 8 || b == 10) {
            if (*p != '-') {
                return 0;
            }
            p++;
        }
        hi = hexv[p[0]];
        if (hi == 0) {
            return 0; /* also stops at the NUL before reading past it */
        }
        lo = hexv[p[1]];
        if (lo == 0) {
            return 0;
        }
        out[b] = (uint8_t)(((hi - 1) << 4) | (lo - 1));
        p += 2;
    }
    return *p == '\0';
}

static void key_make(struct uid_key *k, const char *uid)
{
    uint64_t h;

    k->str = uid;
    k->binary = uuid_parse(uid, k->bytes);
    if (k->binary) {
        uint64_t a;
        uint64_t b;
        memcpy(&a, k->bytes, 8);
        memcpy(&b, k->bytes + 8, 8);
        h = fmix64(a ^ fmix64(b));
    } else {
        /* FNV-1a 64 */
        h = 1469598103934665603ULL;
        for (const char *s = uid; *s != '\0'; s++) {
            h ^= (unsigned char)*s;
            h *= 1099511628211ULL;
        }
    }
    k->hash = h < 2 ? h + 2 : h; /* 0 and 1 mark empty and tombstone slots */
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a 32 */
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* --- intern pool ----------------------------------------------------------- */

static void intern_cleanup(struct intern *p)
{
    for (size_t i = 0; i < p->n_ids; i++) {
        krc_free(p->ent[i]);
    }
    krc_free(p->ent);
    krc_free(p->free_ids);
    krc_free(p->index);
    memset(p, 0, sizeof(*p));
}

static size_t intern_memory(const struct intern *p)
{
    size_t m = p->str_bytes;
    if (p->ent != NULL) {
        m += chunk_bytes(p->ent_cap * sizeof(*p->ent)) +
             chunk_bytes(p->ent_cap * sizeof(*p->free_ids));
    }
    if (p->index != NULL) {
        m += chunk_bytes(p->index_cap * sizeof(*p->index));
    }
    return m;
}

static inline const char *intern_str(const struct intern *p, uint32_t id)
{
    return p->ent[id]->s;
}

static void index_put(uint32_t *index, size_t cap, uint32_t hash, uint32_t id)
{
    size_t mask = cap - 1;
    size_t i = hash & mask;
    /* clang-tidy: the index is allocated before the first put (intern_grow); cap is never 0 here */
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
    while (index[i] != 0) {
        i = (i + 1) & mask;
    }
    index[i] = id + 1;
}

/* Make room for one more entry (arrays and index); the pool's content is
 * unchanged whatever happens. */
static int intern_reserve(struct intern *p)
{
    if (p->n_free == 0 && p->n_ids == p->ent_cap) {
        size_t cap = p->ent_cap != 0 ? p->ent_cap * 2 : 16;
        struct istr **ent;
        uint32_t *fr;

        if (p->ent_cap >= INTERN_MAX_IDS) {
            return KRC_ETOOBIG;
        }
        ent = krc_realloc(p->ent, cap * sizeof(*ent));
        if (ent == NULL) {
            return KRC_ENOMEM;
        }
        p->ent = ent;
        fr = krc_realloc(p->free_ids, cap * sizeof(*fr));
        if (fr == NULL) {
            return KRC_ENOMEM; /* ent is larger than needed; ent_cap stays */
        }
        p->free_ids = fr;
        p->ent_cap = cap;
    }
    if ((p->live + 1) * 2 > p->index_cap) {
        size_t cap = p->index_cap != 0 ? p->index_cap * 2 : 32;
        uint32_t *index = krc_calloc(cap, sizeof(*index));

        if (index == NULL) {
            return KRC_ENOMEM;
        }
        for (size_t id = 0; id < p->n_ids; id++) {
            if (p->ent[id] != NULL) {
                index_put(index, cap, p->ent[id]->hash, (uint32_t)id);
            }
        }
        krc_free(p->index);
        p->index = index;
        p->index_cap = cap;
    }
    return 0;
}

/* Drop one reference; the last one frees the string, and the last string
 * frees the pool's arrays. */
static void intern_put(struct intern *p, uint32_t id)
{
    struct istr *e = p->ent[id];
    size_t mask = p->index_cap - 1;
    size_t i;

    assert(e != NULL && e->refs > 0);
    if (--e->refs > 0) {
        return;
    }
    /* remove from the index by backward shift: no tombstones */
    i = e->hash & mask;
    while (p->index[i] != id + 1) {
        i = (i + 1) & mask;
    }
    for (;;) {
        size_t j = i;
        p->index[i] = 0;
        for (;;) {
            size_t home;
            j = (j + 1) & mask;
            if (p->index[j] == 0) {
                goto removed;
            }
            home = p->ent[p->index[j] - 1]->hash & mask;
            /* the entry at j may fill i unless its home lies in (i, j] */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
                break;
            }
        }
        p->index[i] = p->index[j];
        i = j;
    }
removed:
    p->str_bytes -= chunk_bytes(sizeof(*e) + strlen(e->s) + 1);
    krc_free(e);
    p->ent[id] = NULL;
    p->free_ids[p->n_free++] = id;
    if (--p->live == 0) {
        intern_cleanup(p);
    }
}

/* Take a reference to s, interning it if needed. */
static int intern_get(struct intern *p, const char *s, uint32_t *ret_id)
{
    uint32_t h = hash_name(s);
    size_t len;
    struct istr *e;
    uint32_t id;
    int rc;

    if (p->index != NULL) {
        size_t mask = p->index_cap - 1;
        for (size_t i = h & mask; p->index[i] != 0; i = (i + 1) & mask) {
            e = p->ent[p->index[i] - 1];
            if (e->hash == h && strcmp(e->s, s) == 0) {
                e->refs++;
                *ret_id = p->index[i] - 1;
                return 0;
            }
        }
    }
    rc = intern_reserve(p);
    len = strlen(s);
    e = rc == 0 ? krc_malloc(sizeof(*e) + len + 1) : NULL;
    if (e == NULL) {
        if (p->live == 0) {
            intern_cleanup(p); /* arrays reserved for nothing */
        }
        return rc < 0 ? rc : KRC_ENOMEM;
    }
    e->refs = 1;
    e->hash = h;
    memcpy(e->s, s, len + 1);
    id = p->n_free > 0 ? p->free_ids[--p->n_free] : (uint32_t)p->n_ids++;
    p->ent[id] = e;
    index_put(p->index, p->index_cap, h, id);
    p->live++;
    p->str_bytes += chunk_bytes(sizeof(*e) + len + 1);
    *ret_id = id;
    return 0;
}

/* --- records --------------------------------------------------------------- */

static uint32_t clamp_time(int64_t t)
{
    /* 0 means "no termination"; unix seconds fit in 32 bits until 2106 */
    if (t <= 0) {
        return 0;
    }
    return t > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static uint32_t finished_of(const struct krc_container_info *ci)
{
    return ci->has_last_terminated ? clamp_time(ci->last_finished_at) : 0;
}

static inline const char *rec_uid_str(const struct pod_rec *r)
{
    return (const char *)&r->c[r->n_containers];
}

static size_t rec_alloc_size(const struct pod_rec *r)
{
    size_t n = sizeof(*r) + r->n_containers * sizeof(struct cstate);
    if (r->flags & REC_UID_STR) {
        n += strlen(rec_uid_str(r)) + 1;
    }
    return n;
}

static int rec_matches(const struct pod_rec *r, const struct uid_key *k)
{
    if (k->binary) {
        return (r->flags & REC_UID_STR) == 0 && memcmp(r->uid, k->bytes, 16) == 0;
    }
    return (r->flags & REC_UID_STR) != 0 && strcmp(rec_uid_str(r), k->str) == 0;
}

/* Release the record's names and free it. */
static void rec_destroy(struct krc_pod_state *st, struct pod_rec *r)
{
    for (size_t i = r->n_containers; i > 0; i--) {
        intern_put(&st->names, r->c[i - 1].name >> 1);
    }
    krc_free(r);
}

/* On failure nothing changed: names taken so far are released. */
static int rec_build(struct krc_pod_state *st, const struct krc_pod_info *pod,
                     const struct uid_key *k, struct pod_rec **ret_rec)
{
    size_t uid_len = k->binary ? 0 : strlen(k->str) + 1;
    size_t bytes;
    struct pod_rec *r;

    if (pod->n_containers > UINT16_MAX) {
        return KRC_ETOOBIG;
    }
    bytes = sizeof(*r) + pod->n_containers * sizeof(struct cstate) + uid_len;
    r = krc_malloc(bytes);
    if (r == NULL) {
        return KRC_ENOMEM;
    }
    r->n_containers = 0; /* counts the names taken, for rec_destroy on failure */
    r->flags = REC_SEEN;
    r->reserved = 0;
    if (k->binary) {
        memcpy(r->uid, k->bytes, 16);
    } else {
        memset(r->uid, 0, 16);
        r->flags |= REC_UID_STR;
    }
    for (size_t i = 0; i < pod->n_containers; i++) {
        const struct krc_container_info *ci = &pod->containers[i];
        uint32_t id;
        int rc = intern_get(&st->names, ci->name, &id);

        if (rc < 0) {
            rec_destroy(st, r);
            return rc;
        }
        r->c[i].name = (id << 1) | (ci->is_init ? CS_INIT : 0);
        r->c[i].restart_count = ci->restart_count;
        r->c[i].finished_at = finished_of(ci);
        r->n_containers = (uint16_t)(i + 1);
    }
    if (!k->binary) {
        memcpy((char *)rec_uid_str(r), k->str, uid_len);
    }
    st->rec_bytes += chunk_bytes(bytes);
    *ret_rec = r;
    return 0;
}

static int cstate_is(const struct krc_pod_state *st, const struct cstate *c,
                     const struct krc_container_info *ci)
{
    return ((c->name & CS_INIT) != 0) == (ci->is_init != 0) &&
           strcmp(intern_str(&st->names, c->name >> 1), ci->name) == 0;
}

static const struct cstate *rec_find_container(const struct krc_pod_state *st,
                                               const struct pod_rec *r,
                                               const struct krc_container_info *ci)
{
    for (size_t i = 0; i < r->n_containers; i++) {
        if (cstate_is(st, &r->c[i], ci)) {
            return &r->c[i];
        }
    }
    return NULL;
}

/* Same containers in the same order: the record can be updated in place. */
static int rec_same_shape(const struct krc_pod_state *st, const struct pod_rec *r,
                          const struct krc_pod_info *pod)
{
    if (r->n_containers != pod->n_containers) {
        return 0;
    }
    for (size_t i = 0; i < pod->n_containers; i++) {
        if (!cstate_is(st, &r->c[i], &pod->containers[i])) {
            return 0;
        }
    }
    return 1;
}

/* --- table ----------------------------------------------------------------- */

struct krc_pod_state *krc_pod_state_new(int64_t report_since, int64_t start_time)
{
    struct krc_pod_state *st = krc_calloc(1, sizeof(*st));
    if (st == NULL) {
        return NULL;
    }
    st->cap = MIN_CAP;
    st->slots = krc_calloc(st->cap, sizeof(struct slot));
    if (st->slots == NULL) {
        krc_free(st);
        return NULL;
    }
    st->report_since = report_since;
    st->start_time = start_time;
    return st;
}

void krc_pod_state_free(struct krc_pod_state *st)
{
    if (st == NULL) {
        return;
    }
    for (size_t i = 0; i < st->cap; i++) {
        if (st->slots[i].hash > 1) {
            krc_free(st->slots[i].rec); /* the pool goes as a whole below */
        }
    }
    intern_cleanup(&st->names);
    krc_free(st->slots);
    krc_free(st);
}

/* Index of the slot holding the key, or of the slot where it would go (first
 * tombstone on the way, else the empty slot that ended the probe). */
static size_t find_slot(const struct krc_pod_state *st, const struct uid_key *k, int *found)
{
    size_t mask = st->cap - 1;
    size_t i = (size_t)k->hash & mask;
    size_t tomb = (size_t)-1;

    for (;;) {
        const struct slot *s = &st->slots[i];
        if (s->hash == 0) {
            *found = 0;
            return tomb != (size_t)-1 ? tomb : i;
        }
        if (s->hash == 1) {
            if (tomb == (size_t)-1) {
                tomb = i;
            }
        } else if (s->hash == k->hash && rec_matches(s->rec, k)) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
}

static int rehash(struct krc_pod_state *st, size_t new_cap)
{
    struct slot *ns = krc_calloc(new_cap, sizeof(struct slot));
    struct slot *old = st->slots;
    size_t old_cap = st->cap;

    if (ns == NULL) {
        return KRC_ENOMEM;
    }
    st->slots = ns;
    st->cap = new_cap;
    st->used = st->count;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].hash > 1) {
            size_t j = (size_t)old[i].hash & (new_cap - 1);
            while (ns[j].hash != 0) {
                j = (j + 1) & (new_cap - 1);
            }
            ns[j] = old[i];
        }
    }
    krc_free(old);
    return 0;
}

static int grow(struct krc_pod_state *st)
{
    /* mostly tombstones: rehash at the same size */
    return rehash(st, st->count * 2 >= st->cap / 2 ? st->cap * 2 : st->cap);
}

/* After mass removal (a namespace deleted, a relist that dropped most pods)
 * give the slot array back: shrink below 1/8 load to a load in (1/8, 1/4],
 * far from the 3/4 that grows it again. Best effort. */
static void maybe_shrink(struct krc_pod_state *st)
{
    size_t new_cap = st->cap;

    if (st->cap <= MIN_CAP || st->count * 8 >= st->cap) {
        return;
    }
    while (new_cap / 2 >= MIN_CAP && st->count * 4 <= new_cap / 2) {
        new_cap /= 2;
    }
    (void)rehash(st, new_cap);
}

/* A restart is identified by its termination
 * (docs/design/detection-and-identity.md, "Identity"): a lastState.terminated that finished after
 * the one recorded is a new crash whatever the count says. At an unchanged count a termination
 * appearing where none was recorded is not counted (the status only caught up with a restart
 * already reported by its count); below the recorded count it is, since the count was reset in
 * between. */
static int is_newer_termination(const struct cstate *prev, const struct krc_container_info *ci)
{
    uint32_t fin = finished_of(ci);

    if (fin == 0 || fin <= prev->finished_at) {
        return 0;
    }
    return prev->finished_at != 0 || ci->restart_count < prev->restart_count;
}

static void detect(const struct krc_pod_state *st, const struct pod_rec *old, int same_shape,
                   const struct krc_pod_info *pod, krc_restart_cb cb, void *userdata)
{
    for (size_t i = 0; i < pod->n_containers; i++) {
        const struct krc_container_info *ci = &pod->containers[i];
        const struct cstate *prev;
        int64_t fin = ci->has_last_terminated ? ci->last_finished_at : 0;
        struct krc_restart_delta d;

        if (old == NULL) {
            prev = NULL;
        } else if (same_shape) {
            prev = &old->c[i];
        } else {
            prev = rec_find_container(st, old, ci);
        }
        d.pod = pod;
        d.container = ci;
        d.missed = 0;
        if (prev != NULL) {
            d.previous_count = prev->restart_count;
            if (ci->restart_count > prev->restart_count) {
                d.missed = ci->restart_count - prev->restart_count - 1;
                cb(&d, userdata);
            } else if (is_newer_termination(prev, ci)) {
                /* The count stayed or went down (the kubelet's count was
                 * reset, the status rewritten) but the container terminated
                 * again: a new crash. How many were missed is not known. */
                cb(&d, userdata);
            }
            continue;
        }
        /* First sight of this container: only recent terminations count. */
        if (ci->restart_count <= 0) {
            continue;
        }
        d.previous_count = -1;
        if (fin != 0 ? fin >= st->report_since
                     : (pod->creation_timestamp != 0 && pod->creation_timestamp > st->start_time)) {
            cb(&d, userdata);
        }
    }
}

int krc_pod_state_apply(struct krc_pod_state *st, const struct krc_pod_info *pod, krc_restart_cb cb,
                        void *userdata)
{
    struct uid_key k;
    size_t idx;
    int found;
    struct slot *s;
    struct pod_rec *r;
    int rc;

    if (pod->uid == NULL || pod->namespace == NULL || pod->name == NULL) {
        return KRC_EINVAL;
    }
    key_make(&k, pod->uid);
    idx = find_slot(st, &k, &found);
    s = &st->slots[idx];
    if (found && rec_same_shape(st, s->rec, pod)) {
        detect(st, s->rec, 1, pod, cb, userdata);
        r = s->rec;
        r->flags |= REC_SEEN;
        for (size_t i = 0; i < pod->n_containers; i++) {
            uint32_t fin = finished_of(&pod->containers[i]);
            r->c[i].restart_count = pod->containers[i].restart_count;
            /* the newest termination seen: an older status replayed later
             * (or one without lastState) must not make it new again */
            if (fin > r->c[i].finished_at) {
                r->c[i].finished_at = fin;
            }
        }
        return 0;
    }
    detect(st, found ? s->rec : NULL, 0, pod, cb, userdata);
    rc = rec_build(st, pod, &k, &r);
    if (rc < 0) {
        return rc;
    }
    if (found) {
        /* after the build, so names both records use stay interned */
        st->rec_bytes -= chunk_bytes(rec_alloc_size(s->rec));
        rec_destroy(st, s->rec);
        s->rec = r;
        return 0;
    }
    if ((st->used + 1) * 4 > st->cap * 3) {
        if (grow(st) < 0) {
            st->rec_bytes -= chunk_bytes(rec_alloc_size(r));
            rec_destroy(st, r);
            return KRC_ENOMEM;
        }
        idx = find_slot(st, &k, &found);
        s = &st->slots[idx];
    }
    if (s->hash == 0) {
        st->used++;
    }
    s->hash = k.hash;
    s->rec = r;
    st->count++;
    return 0;
}

static void remove_at(struct krc_pod_state *st, size_t idx)
{
    struct slot *s = &st->slots[idx];
    st->rec_bytes -= chunk_bytes(rec_alloc_size(s->rec));
    rec_destroy(st, s->rec);
    s->rec = NULL;
    s->hash = 1;
    st->count--;
}

int krc_pod_state_delete(struct krc_pod_state *st, const char *uid)
{
    struct uid_key k;
    int found;
    size_t idx;

    if (uid == NULL) {
        return 0;
    }
    key_make(&k, uid);
    idx = find_slot(st, &k, &found);
    if (!found) {
        return 0;
    }
    remove_at(st, idx);
    maybe_shrink(st);
    return 1;
}

void krc_pod_state_sync_begin(struct krc_pod_state *st)
{
    /* One pass over the table per relist (rare next to the events) buys the
     * 4-byte generation counter each record would otherwise carry. */
    for (size_t i = 0; i < st->cap; i++) {
        if (st->slots[i].hash > 1) {
            st->slots[i].rec->flags &= (uint8_t)~REC_SEEN;
        }
    }
}

size_t krc_pod_state_sync_end(struct krc_pod_state *st)
{
    size_t removed = 0;
    for (size_t i = 0; i < st->cap; i++) {
        if (st->slots[i].hash > 1 && (st->slots[i].rec->flags & REC_SEEN) == 0) {
            remove_at(st, i);
            removed++;
        }
    }
    maybe_shrink(st);
    return removed;
}

size_t krc_pod_state_count(const struct krc_pod_state *st)
{
    return st->count;
}

size_t krc_pod_state_memory(const struct krc_pod_state *st)
{
    return chunk_bytes(sizeof(*st)) + st->cap * sizeof(struct slot) + st->rec_bytes +
           intern_memory(&st->names);
}
