/* Interned strings: an array of entries indexed by id and an open-addressing
 * table of ids (linear probing, deletion by backward shift, no tombstones). */
#include "krc/track/intern.h"

#include <string.h>

#include "krc/util/mem.h"

struct istr {
    uint32_t refs;
    uint32_t hash;
    uint32_t len;
    char s[];
};

struct krc_intern {
    struct istr **entries; /* by id; [0] unused; NULL: a free id */
    uint32_t n_entries;    /* ids handed out so far + 1 */
    uint32_t cap_entries;
    uint32_t *free_ids; /* ids to reuse */
    uint32_t n_free;
    uint32_t cap_free;
    uint32_t *slots; /* the table: ids, 0 empty; a power of two */
    uint32_t n_slots;
    uint32_t count;
    size_t bytes;
};

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

struct krc_intern *krc_intern_new(void)
{
    struct krc_intern *in = krc_calloc(1, sizeof(*in));
    if (in == NULL) {
        return NULL;
    }
    in->n_slots = 256;
    in->slots = krc_calloc(in->n_slots, sizeof(uint32_t));
    in->n_entries = 1;
    if (in->slots == NULL) {
        krc_free(in);
        return NULL;
    }
    return in;
}

void krc_intern_free(struct krc_intern *in)
{
    if (in == NULL) {
        return;
    }
    for (uint32_t i = 1; i < in->n_entries; i++) {
        krc_free(in->entries[i]);
    }
    krc_free(in->entries);
    krc_free(in->free_ids);
    krc_free(in->slots);
    krc_free(in);
}

/* The slot of s, or of the empty slot where it would go. */
static uint32_t probe(const struct krc_intern *in, const char *s, size_t len, uint32_t h)
{
    uint32_t mask = in->n_slots - 1;
    uint32_t i = h & mask;

    for (;;) {
        uint32_t id = in->slots[i];
        if (id == 0) {
            return i;
        }
        const struct istr *e = in->entries[id];
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
            return i;
        }
        i = (i + 1) & mask;
    }
}

static int grow_table(struct krc_intern *in)
{
    uint32_t n = in->n_slots * 2;
    uint32_t *slots = krc_calloc(n, sizeof(uint32_t));

    if (slots == NULL) {
        return -1;
    }
    for (uint32_t i = 0; i < in->n_slots; i++) {
        uint32_t id = in->slots[i];
        if (id != 0) {
            uint32_t j = in->entries[id]->hash & (n - 1);
            while (slots[j] != 0) {
                j = (j + 1) & (n - 1);
            }
            slots[j] = id;
        }
    }
    krc_free(in->slots);
    in->slots = slots;
    in->n_slots = n;
    return 0;
}

static uint32_t take_id(struct krc_intern *in)
{
    if (in->n_free > 0) {
        return in->free_ids[--in->n_free];
    }
    if (in->n_entries >= in->cap_entries) {
        uint32_t cap = in->cap_entries ? in->cap_entries * 2 : 256;
        struct istr **e = krc_realloc(in->entries, (size_t)cap * sizeof(*e));
        if (e == NULL) {
            return 0;
        }
        in->entries = e;
        in->cap_entries = cap;
        in->entries[0] = NULL;
    }
    return in->n_entries++;
}

uint32_t krc_intern_add(struct krc_intern *in, const char *s, size_t len)
{
    uint32_t h;
    uint32_t slot;
    uint32_t id;
    struct istr *e;

    if (len > KRC_INTERN_MAX_LEN) {
        return 0;
    }
    if ((in->count + 1) * 4 > in->n_slots * 3 && grow_table(in) < 0) {
        return 0;
    }
    h = hash_bytes(s, len);
    slot = probe(in, s, len, h);
    if (in->slots[slot] != 0) {
        id = in->slots[slot];
        in->entries[id]->refs++;
        return id;
    }
    if (in->n_free == 0 && in->n_entries >= in->cap_free) {
        /* room to give every id back later, taken now: unref never allocates */
        uint32_t cap = in->cap_free ? in->cap_free * 2 : 64;
        uint32_t *f = krc_realloc(in->free_ids, (size_t)cap * sizeof(uint32_t));
        if (f == NULL) {
            return 0;
        }
        in->free_ids = f;
        in->cap_free = cap;
    }
    e = krc_malloc(sizeof(*e) + len + 1);
    if (e == NULL) {
        return 0;
    }
    id = take_id(in);
    if (id == 0) {
        krc_free(e);
        return 0;
    }
    e->refs = 1;
    e->hash = h;
    e->len = (uint32_t)len;
    memcpy(e->s, s, len);
    e->s[len] = '\0';
    in->entries[id] = e;
    in->slots[slot] = id;
    in->count++;
    in->bytes += sizeof(*e) + len + 1;
    return id;
}

uint32_t krc_intern_find(const struct krc_intern *in, const char *s, size_t len)
{
    if (len > KRC_INTERN_MAX_LEN) {
        return 0;
    }
    return in->slots[probe(in, s, len, hash_bytes(s, len))];
}

void krc_intern_ref(struct krc_intern *in, uint32_t id)
{
    if (id != 0) {
        in->entries[id]->refs++;
    }
}

/* Remove the id at slot i; shift back the entries that probed past it. */
static void remove_slot(struct krc_intern *in, uint32_t i)
{
    uint32_t mask = in->n_slots - 1;
    uint32_t j = i;

    in->slots[i] = 0;
    for (;;) {
        j = (j + 1) & mask;
        uint32_t id = in->slots[j];
        if (id == 0) {
            return;
        }
        uint32_t home = in->entries[id]->hash & mask;
        /* move it to i when i lies cyclically in [home, j) */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            in->slots[i] = id;
            in->slots[j] = 0;
            i = j;
        }
    }
}

void krc_intern_unref(struct krc_intern *in, uint32_t id)
{
    struct istr *e;

    if (id == 0) {
        return;
    }
    e = in->entries[id];
    if (--e->refs > 0) {
        return;
    }
    remove_slot(in, probe(in, e->s, e->len, e->hash));
    in->bytes -= sizeof(*e) + e->len + 1;
    in->count--;
    krc_free(e);
    in->entries[id] = NULL;
    in->free_ids[in->n_free++] = id; /* room was taken when it was added */
}

uint32_t krc_intern_refs(const struct krc_intern *in, uint32_t id)
{
    return id != 0 ? in->entries[id]->refs : 0;
}

const char *krc_intern_str(const struct krc_intern *in, uint32_t id, size_t *ret_len)
{
    if (id == 0) {
        if (ret_len != NULL) {
            *ret_len = 0;
        }
        return "";
    }
    if (ret_len != NULL) {
        *ret_len = in->entries[id]->len;
    }
    return in->entries[id]->s;
}

size_t krc_intern_count(const struct krc_intern *in)
{
    return in->count;
}

size_t krc_intern_bytes(const struct krc_intern *in)
{
    return in->bytes + (size_t)in->cap_entries * sizeof(struct istr *) +
           (size_t)in->n_slots * sizeof(uint32_t) + (size_t)in->cap_free * sizeof(uint32_t);
}
