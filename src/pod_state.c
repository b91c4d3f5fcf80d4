#include "krc/pod_state.h"

#include <string.h>

#include "krc/error.h"
#include "krc/mem.h"

/* Per container: 16 bytes. */
struct cstate {
    int64_t finished_at; /* lastState.terminated.finishedAt, 0 when none */
    int32_t restart_count;
    uint16_t name_off; /* offset of the name in the record's string area */
    uint16_t flags;
};

#define CS_INIT 1u

/* One allocation per pod: header, container states, then the strings
 * "uid\0namespace\0name\0container1\0container2\0...". */
struct pod_rec {
    uint32_t gen;
    uint16_t n_containers;
    uint16_t ns_off;
    uint16_t name_off;
    uint16_t str_len;
    struct cstate c[];
};

struct slot {
    uint64_t hash; /* 0: empty, 1: tombstone */
    struct pod_rec *rec;
};

struct krc_pod_state {
    struct slot *slots;
    size_t cap;   /* power of two */
    size_t count; /* live records */
    size_t used;  /* live + tombstones */
    size_t rec_bytes;
    uint32_t gen;
    int64_t report_since;
    int64_t start_time;
};

static inline const char *rec_strings(const struct pod_rec *r)
{
    return (const char *)&r->c[r->n_containers];
}

static inline const char *rec_uid(const struct pod_rec *r)
{
    return rec_strings(r);
}

static uint64_t hash_str(const char *s)
{
    /* FNV-1a 64, never 0 or 1 (reserved for empty/tombstone). */
    uint64_t h = 1469598103934665603ULL;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h < 2 ? h + 2 : h;
}

struct krc_pod_state *krc_pod_state_new(int64_t report_since, int64_t start_time)
{
    struct krc_pod_state *st = krc_calloc(1, sizeof(*st));
    if (st == NULL) {
        return NULL;
    }
    st->cap = 1024;
    st->slots = krc_calloc(st->cap, sizeof(struct slot));
    if (st->slots == NULL) {
        krc_free(st);
        return NULL;
    }
    st->report_since = report_since;
    st->start_time = start_time;
    st->gen = 1;
    return st;
}

void krc_pod_state_free(struct krc_pod_state *st)
{
    if (st == NULL) {
        return;
    }
    for (size_t i = 0; i < st->cap; i++) {
        if (st->slots[i].hash > 1) {
            krc_free(st->slots[i].rec);
        }
    }
    krc_free(st->slots);
    krc_free(st);
}

/* Index of the slot holding uid, or of the slot where it would go (first
 * tombstone on the way, else the empty slot that ended the probe). */
static size_t find_slot(const struct krc_pod_state *st, const char *uid, uint64_t h, int *found)
{
    size_t mask = st->cap - 1;
    size_t i = (size_t)h & mask;
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
        } else if (s->hash == h && strcmp(rec_uid(s->rec), uid) == 0) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
}

static int grow(struct krc_pod_state *st)
{
    size_t new_cap = st->count * 2 >= st->cap / 2 ? st->cap * 2 : st->cap;
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

static size_t rec_size(const struct krc_pod_info *pod, size_t *ret_str_len)
{
    size_t s = strlen(pod->uid) + strlen(pod->namespace) + strlen(pod->name) + 3;
    for (size_t i = 0; i < pod->n_containers; i++) {
        s += strlen(pod->containers[i].name) + 1;
    }
    *ret_str_len = s;
    return sizeof(struct pod_rec) + pod->n_containers * sizeof(struct cstate) + s;
}

static struct pod_rec *rec_build(const struct krc_pod_info *pod, uint32_t gen, size_t *ret_bytes)
{
    size_t str_len;
    size_t bytes = rec_size(pod, &str_len);
    struct pod_rec *r;
    char *p;
    size_t off = 0;

    if (str_len > UINT16_MAX || pod->n_containers > UINT16_MAX) {
        return NULL;
    }
    r = krc_malloc(bytes);
    if (r == NULL) {
        return NULL;
    }
    r->gen = gen;
    r->n_containers = (uint16_t)pod->n_containers;
    r->str_len = (uint16_t)str_len;
    p = (char *)&r->c[r->n_containers];
#define PUT(s)                                                                                     \
    do {                                                                                           \
        size_t l_ = strlen(s) + 1;                                                                 \
        memcpy(p + off, (s), l_);                                                                  \
        off += l_;                                                                                 \
    } while (0)
    PUT(pod->uid);
    r->ns_off = (uint16_t)off;
    PUT(pod->namespace);
    r->name_off = (uint16_t)off;
    PUT(pod->name);
    for (size_t i = 0; i < pod->n_containers; i++) {
        const struct krc_container_info *ci = &pod->containers[i];
        r->c[i].name_off = (uint16_t)off;
        PUT(ci->name);
        r->c[i].restart_count = ci->restart_count;
        r->c[i].finished_at = ci->has_last_terminated ? ci->last_finished_at : 0;
        r->c[i].flags = ci->is_init ? CS_INIT : 0;
    }
#undef PUT
    *ret_bytes = bytes;
    return r;
}

static const struct cstate *rec_find_container(const struct pod_rec *r,
                                               const struct krc_container_info *ci)
{
    const char *strs = rec_strings(r);
    for (size_t i = 0; i < r->n_containers; i++) {
        const struct cstate *c = &r->c[i];
        if (((c->flags & CS_INIT) != 0) == (ci->is_init != 0) &&
            strcmp(strs + c->name_off, ci->name) == 0) {
            return c;
        }
    }
    return NULL;
}

/* Same identity and container layout: the record can be updated in place. */
static int rec_same_shape(const struct pod_rec *r, const struct krc_pod_info *pod)
{
    const char *strs = rec_strings(r);
    if (r->n_containers != pod->n_containers || strcmp(strs + r->ns_off, pod->namespace) != 0 ||
        strcmp(strs + r->name_off, pod->name) != 0) {
        return 0;
    }
    for (size_t i = 0; i < pod->n_containers; i++) {
        if (((r->c[i].flags & CS_INIT) != 0) != (pod->containers[i].is_init != 0) ||
            strcmp(strs + r->c[i].name_off, pod->containers[i].name) != 0) {
            return 0;
        }
    }
    return 1;
}

static void detect(const struct krc_pod_state *st, const struct pod_rec *old,
                   const struct krc_pod_info *pod, krc_restart_cb cb, void *userdata)
{
    for (size_t i = 0; i < pod->n_containers; i++) {
        const struct krc_container_info *ci = &pod->containers[i];
        const struct cstate *prev = old != NULL ? rec_find_container(old, ci) : NULL;
        int64_t fin = ci->has_last_terminated ? ci->last_finished_at : 0;
        struct krc_restart_delta d;

        d.pod = pod;
        d.container = ci;
        d.missed = 0;
        if (prev != NULL) {
            d.previous_count = prev->restart_count;
            if (ci->restart_count > prev->restart_count) {
                d.missed = ci->restart_count - prev->restart_count - 1;
                cb(&d, userdata);
            } else if (ci->restart_count == prev->restart_count && prev->finished_at != 0 &&
                       fin > prev->finished_at) {
                /* A new termination without a count change. */
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
    uint64_t h;
    size_t idx;
    int found;
    struct slot *s;
    struct pod_rec *r;
    size_t bytes;

    if (pod->uid == NULL || pod->namespace == NULL || pod->name == NULL) {
        return KRC_EINVAL;
    }
    h = hash_str(pod->uid);
    idx = find_slot(st, pod->uid, h, &found);
    s = &st->slots[idx];
    if (found && rec_same_shape(s->rec, pod)) {
        detect(st, s->rec, pod, cb, userdata);
        r = s->rec;
        r->gen = st->gen;
        for (size_t i = 0; i < pod->n_containers; i++) {
            const struct krc_container_info *ci = &pod->containers[i];
            r->c[i].restart_count = ci->restart_count;
            r->c[i].finished_at = ci->has_last_terminated ? ci->last_finished_at : 0;
        }
        return 0;
    }
    detect(st, found ? s->rec : NULL, pod, cb, userdata);
    r = rec_build(pod, st->gen, &bytes);
    if (r == NULL) {
        return KRC_ENOMEM;
    }
    if (found) {
        st->rec_bytes -=
            sizeof(struct pod_rec) + s->rec->n_containers * sizeof(struct cstate) + s->rec->str_len;
        krc_free(s->rec);
        s->rec = r;
        st->rec_bytes += bytes;
        return 0;
    }
    if ((st->used + 1) * 4 > st->cap * 3) {
        if (grow(st) < 0) {
            krc_free(r);
            return KRC_ENOMEM;
        }
        idx = find_slot(st, pod->uid, h, &found);
        s = &st->slots[idx];
    }
    if (s->hash == 0) {
        st->used++;
    }
    s->hash = h;
    s->rec = r;
    st->count++;
    st->rec_bytes += bytes;
    return 0;
}

static void remove_at(struct krc_pod_state *st, size_t idx)
{
    struct slot *s = &st->slots[idx];
    st->rec_bytes -=
        sizeof(struct pod_rec) + s->rec->n_containers * sizeof(struct cstate) + s->rec->str_len;
    krc_free(s->rec);
    s->rec = NULL;
    s->hash = 1;
    st->count--;
}

int krc_pod_state_delete(struct krc_pod_state *st, const char *uid)
{
    int found;
    size_t idx;

    if (uid == NULL) {
        return 0;
    }
    idx = find_slot(st, uid, hash_str(uid), &found);
    if (!found) {
        return 0;
    }
    remove_at(st, idx);
    return 1;
}

void krc_pod_state_sync_begin(struct krc_pod_state *st)
{
    st->gen++;
}

size_t krc_pod_state_sync_end(struct krc_pod_state *st)
{
    size_t removed = 0;
    for (size_t i = 0; i < st->cap; i++) {
        if (st->slots[i].hash > 1 && st->slots[i].rec->gen != st->gen) {
            remove_at(st, i);
            removed++;
        }
    }
    return removed;
}

size_t krc_pod_state_count(const struct krc_pod_state *st)
{
    return st->count;
}

size_t krc_pod_state_memory(const struct krc_pod_state *st)
{
    /* malloc rounds each record up; count ~16 bytes of overhead per record. */
    return sizeof(*st) + st->cap * sizeof(struct slot) + st->rec_bytes + st->count * 16;
}
