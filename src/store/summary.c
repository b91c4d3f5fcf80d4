/* restart_summary's aggregation: one pass over the restarts of a window
 * (krc_store_window, a covering index scan) into hash tables, then sorted
 * lists. SQL GROUP BY needed one scan and one sort per list (four of them,
 * plus a query per listed workload for its top cause, plus a JSON parse of
 * every crash-looping pod's report): 0.6 s on 100,000 restarts; this pass
 * reads each restart once (docs/performance.md, "MCP tools"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "krc/store/store.h"
#include "krc/util/mem.h"

/* ---- interned strings ------------------------------------------------------ */

#define CHUNK_BYTES 65536

struct chunk {
    struct chunk *next;
    size_t used;
    size_t cap;
    char data[];
};

/* `size` bytes from the arena; NULL when out of memory. */
static char *arena_alloc(struct chunk **head, size_t size)
{
    struct chunk *c = *head;
    char *out;

    if (c == NULL || c->cap - c->used < size) {
        size_t cap = size > CHUNK_BYTES ? size : CHUNK_BYTES;
        c = krc_malloc(sizeof(*c) + cap);
        if (c == NULL) {
            return NULL;
        }
        c->next = *head;
        c->used = 0;
        c->cap = cap;
        *head = c;
    }
    out = c->data + c->used;
    c->used += size;
    return out;
}

/* Copy `len` bytes (they may hold NULs) and a final NUL into the arena. */
static char *arena_copy(struct chunk **head, const char *p, size_t len)
{
    char *out = arena_alloc(head, len + 1);
    if (out != NULL) {
        memcpy(out, p, len);
        out[len] = '\0';
    }
    return out;
}

static void arena_free(struct chunk *c)
{
    while (c != NULL) {
        struct chunk *next = c->next;
        krc_free(c);
        c = next;
    }
}

/* ---- groups keyed by strings ----------------------------------------------- */

struct group {
    const char *key; /* the key's parts, each ended by a NUL */
    size_t len;      /* of the whole key, the last NUL excluded */
    uint64_t hash;
    int64_t restarts;
    int64_t pods;
    int64_t last_at;
    int64_t last_id; /* pods: the latest restart (by id) and its GPUs */
    long gpus;
    size_t best_cause; /* workloads: index into the causes table, and its count */
    int64_t best_n;
    const char *label; /* pods: namespace and name, each ended by a NUL */
    size_t first_wl;   /* pods: the workload and node of the first restart seen */
    size_t first_node;
    uint64_t causes; /* pods: bit i: counted in cause i (i < 64) */
};

struct table {
    struct group *items;
    size_t n;
    size_t cap;
    uint32_t *slots; /* item index + 1; 0 empty */
    size_t nslots;   /* a power of two, at least twice n */
};

/* A multiply-xorshift hash, 8 bytes a step (byte order does not matter:
 * the values stay in this process). */
static uint64_t mix(uint64_t h)
{
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

static uint64_t hash_bytes(const char *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    uint64_t v;

    for (; len >= 8; p += 8, len -= 8) {
        memcpy(&v, p, 8);
        h = mix(h ^ v);
    }
    v = 0;
    memcpy(&v, p, len);
    return mix(h ^ v);
}

static int table_grow(struct table *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slots = krc_calloc(nslots, sizeof(*slots));
    if (slots == NULL) {
        return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        size_t j = (size_t)t->items[i].hash & (nslots - 1);
        while (slots[j] != 0) {
            j = (j + 1) & (nslots - 1);
        }
        slots[j] = (uint32_t)(i + 1);
    }
    krc_free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* The group of key (len bytes), added (zeroed, key copied) when new; NULL
 * when out of memory. */
static struct group *table_get(struct table *t, struct chunk **arena, const char *key, size_t len)
{
    uint64_t h = hash_bytes(key, len);
    size_t j;
    struct group *g;

    /* indexes stay below 2^30: the pair keys hold a table number above them */
    if ((t->n + 1) * 2 > t->nslots && (t->n >= (1u << 30) - 1 || table_grow(t) < 0)) {
        return NULL;
    }
    for (j = (size_t)h & (t->nslots - 1); t->slots[j] != 0; j = (j + 1) & (t->nslots - 1)) {
        g = &t->items[t->slots[j] - 1];
        if (g->hash == h && g->len == len && memcmp(g->key, key, len) == 0) {
            return g;
        }
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct group *items = krc_realloc(t->items, cap * sizeof(*items));
        if (items == NULL) {
            return NULL;
        }
        t->items = items;
        t->cap = cap;
    }
    g = &t->items[t->n];
    memset(g, 0, sizeof(*g));
    if ((g->key = arena_copy(arena, key, len)) == NULL) {
        return NULL;
    }
    g->len = len;
    g->hash = h;
    t->slots[j] = (uint32_t)(++t->n);
    return g;
}

static void table_free(struct table *t)
{
    krc_free(t->items);
    krc_free(t->slots);
}

/* ---- sets and counts keyed by pairs of indexes -------------------------------- */

struct pairs {
    uint64_t *keys; /* pair + 1; 0 empty */
    int64_t *counts;
    size_t n;
    size_t cap; /* a power of two, at least twice n */
};

static uint64_t pair_key(size_t a, size_t b)
{
    return ((uint64_t)a << 32 | (uint64_t)b) + 1;
}

static int pairs_grow(struct pairs *p)
{
    size_t cap = p->cap ? p->cap * 2 : 256;
    uint64_t *keys = krc_calloc(cap, sizeof(*keys));
    int64_t *counts = krc_calloc(cap, sizeof(*counts));
    if (keys == NULL || counts == NULL) {
        krc_free(keys);
        krc_free(counts);
        return -1;
    }
    for (size_t i = 0; i < p->cap; i++) {
        if (p->keys[i] != 0) {
            size_t j = (size_t)mix(p->keys[i]) & (cap - 1);
            while (keys[j] != 0) {
                j = (j + 1) & (cap - 1);
            }
            keys[j] = p->keys[i];
            counts[j] = p->counts[i];
        }
    }
    krc_free(p->keys);
    krc_free(p->counts);
    p->keys = keys;
    p->counts = counts;
    p->cap = cap;
    return 0;
}

/* Add one to the pair's count: its new count (1 when it is new), -1 when
 * out of memory. */
static int64_t pairs_add(struct pairs *p, size_t a, size_t b)
{
    uint64_t k = pair_key(a, b);
    size_t j;

    if ((p->n + 1) * 2 > p->cap && pairs_grow(p) < 0) {
        return -1;
    }
    j = (size_t)mix(k) & (p->cap - 1);
    while (p->keys[j] != 0 && p->keys[j] != k) {
        j = (j + 1) & (p->cap - 1);
    }
    if (p->keys[j] == 0) {
        p->keys[j] = k;
        p->n++;
    }
    return ++p->counts[j];
}

static void pairs_free(struct pairs *p)
{
    krc_free(p->keys);
    krc_free(p->counts);
}

/* ---- the pass ------------------------------------------------------------------ */

enum { T_WORKLOAD, T_CAUSE, T_NODE, T_POD, N_TABLES };

/* A workload's restarts of cause i < CAUSE_SLOTS are counted in an array
 * (krc knows 21 causes); a cause past them in the pairs. */
#define CAUSE_SLOTS 24

/* Per restart the pass looks up four groups. Whether the pod was counted in
 * its workload, node and cause already is known from the pod's group in all
 * but odd cases (a pod seen under two workloads or nodes), which the pairs
 * answer. */
struct agg {
    struct table t[N_TABLES];
    struct pairs seen;   /* (table * 2^30 + group, pod): the pod counted in the group */
    struct pairs cause;  /* (workload, cause >= CAUSE_SLOTS): restarts */
    uint32_t *wl_cause;  /* [workload * CAUSE_SLOTS + cause]: restarts */
    size_t wl_cause_cap; /* workloads */
    struct chunk *arena;
    int64_t restarts;
    int64_t intentional;      /* restarts whose diagnosis was intentional */
    int64_t accel_lost;       /* the sum of their accel_seconds_lost */
    krc_store_window_fn keep; /* NULL: every row */
    void *keep_ud;
};

/* The parts joined, each ended by a NUL, in buf (or, when longer than
 * bufsz, in *heap, freed by the caller); *len excludes the last NUL. NULL
 * when out of memory. */
static char *join(const char *const *parts, int n, char *buf, size_t bufsz, char **heap,
                  size_t *len)
{
    size_t total = 0;
    char *out = buf;

    for (int i = 0; i < n; i++) {
        total += strlen(parts[i]) + 1;
    }
    if (total > bufsz && (out = *heap = krc_malloc(total)) == NULL) {
        return NULL;
    }
    total = 0;
    for (int i = 0; i < n; i++) {
        size_t k = strlen(parts[i]) + 1;
        memcpy(out + total, parts[i], k);
        total += k;
    }
    *len = total - 1;
    return out;
}

/* Count pod `pod` once in group g of table t. */
static int count_pod(struct agg *a, int t, struct group *g, size_t pod)
{
    int64_t n = pairs_add(&a->seen, (size_t)t << 30 | (size_t)(g - a->t[t].items), pod);
    if (n < 0) {
        return -1;
    }
    g->pods += n == 1;
    return 0;
}

/* The pod's group, with its namespace and name the first time. */
static struct group *pod_group(struct agg *a, const struct krc_store_window_row *r)
{
    struct group *g = table_get(&a->t[T_POD], &a->arena, r->pod_uid, strlen(r->pod_uid));
    if (g != NULL && g->label == NULL) {
        size_t ns = strlen(r->namespace);
        size_t pod = strlen(r->pod);
        char *l = arena_alloc(&a->arena, ns + 1 + pod + 1);
        if (l == NULL) {
            return NULL;
        }
        memcpy(l, r->namespace, ns + 1);
        memcpy(l + ns + 1, r->pod, pod + 1);
        g->label = l;
    }
    return g;
}

/* Count the pod in its workload, node and cause once, and the restart in
 * the workload's causes. */
static int count_pod_in(struct agg *a, struct group *const *g, int first)
{
    struct group *pg = g[T_POD];
    size_t wi = (size_t)(g[T_WORKLOAD] - a->t[T_WORKLOAD].items);
    size_t ni = (size_t)(g[T_NODE] - a->t[T_NODE].items);
    size_t ci = (size_t)(g[T_CAUSE] - a->t[T_CAUSE].items);
    size_t pod = (size_t)(pg - a->t[T_POD].items);

    if (first) {
        pg->first_wl = wi;
        pg->first_node = ni;
        g[T_WORKLOAD]->pods++;
        g[T_NODE]->pods++;
    } else if ((wi != pg->first_wl && count_pod(a, T_WORKLOAD, g[T_WORKLOAD], pod) < 0) ||
               (ni != pg->first_node && count_pod(a, T_NODE, g[T_NODE], pod) < 0)) {
        return -1;
    }
    if (ci < 64) {
        g[T_CAUSE]->pods += (pg->causes >> ci & 1u) == 0;
        pg->causes |= (uint64_t)1 << ci;
    } else if (count_pod(a, T_CAUSE, g[T_CAUSE], pod) < 0) {
        return -1;
    }
    if (wi >= a->wl_cause_cap) {
        size_t cap = a->wl_cause_cap ? a->wl_cause_cap * 2 : 256;
        uint32_t *v = krc_realloc(a->wl_cause, cap * CAUSE_SLOTS * sizeof(*v));
        if (v == NULL) {
            return -1;
        }
        memset(v + a->wl_cause_cap * CAUSE_SLOTS, 0,
               (cap - a->wl_cause_cap) * CAUSE_SLOTS * sizeof(*v));
        a->wl_cause = v;
        a->wl_cause_cap = cap;
    }
    if (ci < CAUSE_SLOTS) {
        a->wl_cause[wi * CAUSE_SLOTS + ci]++;
        return 0;
    }
    return pairs_add(&a->cause, wi, ci) < 0 ? -1 : 0;
}

/* Are the parts (ended by NULs) of key the strings of parts? */
static int key_is(const char *key, const char *const *parts, int n)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(key, parts[i]) != 0) {
            return 0;
        }
        key += strlen(key) + 1;
    }
    return 1;
}

/* The row's workload and node groups: those of its pod's first restart when
 * they are the same (the rule: a pod has one of each; no hashing then), else
 * looked up. */
static int lookup(struct agg *a, const struct krc_store_window_row *r, struct group **g)
{
    const char *parts[3] = {r->namespace, r->workload_kind != NULL ? r->workload_kind : "Pod",
                            r->workload_name != NULL ? r->workload_name : r->pod};
    const char *node = r->node != NULL ? r->node : "";
    struct group *pg = g[T_POD];
    char buf[512];
    char *heap = NULL;
    size_t len = 0;
    const char *key;

    g[T_WORKLOAD] = NULL;
    g[T_NODE] = NULL;
    if (pg->restarts > 0) {
        struct group *w = &a->t[T_WORKLOAD].items[pg->first_wl];
        struct group *nd = &a->t[T_NODE].items[pg->first_node];
        g[T_WORKLOAD] = key_is(w->key, parts, 3) ? w : NULL;
        g[T_NODE] = strcmp(nd->key, node) == 0 ? nd : NULL;
    }
    if (g[T_WORKLOAD] == NULL) {
        key = join(parts, 3, buf, sizeof(buf), &heap, &len);
        g[T_WORKLOAD] = key != NULL ? table_get(&a->t[T_WORKLOAD], &a->arena, key, len) : NULL;
        krc_free(heap);
    }
    if (g[T_NODE] == NULL) {
        g[T_NODE] = table_get(&a->t[T_NODE], &a->arena, node, strlen(node));
    }
    g[T_CAUSE] = table_get(&a->t[T_CAUSE], &a->arena, r->cause, strlen(r->cause));
    return g[T_WORKLOAD] != NULL && g[T_NODE] != NULL && g[T_CAUSE] != NULL ? 0 : -1;
}

static int on_row(const struct krc_store_window_row *r, void *ud)
{
    struct agg *a = ud;
    struct group *g[N_TABLES];
    int first;

    if (a->keep != NULL && !a->keep(r, a->keep_ud)) {
        return 0;
    }
    if ((g[T_POD] = pod_group(a, r)) == NULL || lookup(a, r, g) < 0) {
        return KRC_ENOMEM;
    }
    first = g[T_POD]->restarts == 0;
    a->restarts++;
    a->intentional += r->intentional != 0;
    a->accel_lost += r->accel_seconds_lost > 0 ? r->accel_seconds_lost : 0;
    for (int t = 0; t < N_TABLES; t++) {
        g[t]->restarts++;
        if (r->detected_at > g[t]->last_at) {
            g[t]->last_at = r->detected_at;
        }
    }
    if (r->id > g[T_POD]->last_id) {
        g[T_POD]->last_id = r->id;
        g[T_POD]->gpus = r->gpus;
    }
    return count_pod_in(a, g, first) < 0 ? KRC_ENOMEM : 0;
}

/* ---- the lists ------------------------------------------------------------------ */

static int cmp_key(const struct group *x, const struct group *y)
{
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* Most restarts, then the latest, then the key. */
static int cmp_groups(const void *pa, const void *pb)
{
    const struct group *x = *(const struct group *const *)pa;
    const struct group *y = *(const struct group *const *)pb;
    if (x->restarts != y->restarts) {
        return x->restarts > y->restarts ? -1 : 1;
    }
    if (x->last_at != y->last_at) {
        return x->last_at > y->last_at ? -1 : 1;
    }
    return cmp_key(x, y);
}

/* Most GPUs, then as cmp_groups (by namespace and name, not UID). */
static int cmp_gpu_pods(const void *pa, const void *pb)
{
    const struct group *x = *(const struct group *const *)pa;
    const struct group *y = *(const struct group *const *)pb;
    int c;
    if (x->gpus != y->gpus) {
        return x->gpus > y->gpus ? -1 : 1;
    }
    if (x->restarts != y->restarts || x->last_at != y->last_at) {
        return cmp_groups(pa, pb);
    }
    c = strcmp(x->label, y->label);
    return c != 0 ? c : strcmp(x->label + strlen(x->label) + 1, y->label + strlen(y->label) + 1);
}

static void best_cause(struct group *g, const struct table *causes, size_t ci, int64_t n)
{
    if (n > g->best_n ||
        (n == g->best_n && strcmp(causes->items[ci].key, causes->items[g->best_cause].key) < 0)) {
        g->best_n = n;
        g->best_cause = ci;
    }
}

/* Each workload's most frequent cause (ties: the first by name). */
static void top_causes(struct agg *a)
{
    struct table *w = &a->t[T_WORKLOAD];
    const struct table *c = &a->t[T_CAUSE];

    for (size_t wi = 0; wi < w->n; wi++) {
        for (size_t ci = 0; ci < CAUSE_SLOTS && ci < c->n; ci++) {
            if (a->wl_cause[wi * CAUSE_SLOTS + ci] > 0) {
                best_cause(&w->items[wi], c, ci, a->wl_cause[wi * CAUSE_SLOTS + ci]);
            }
        }
    }
    for (size_t i = 0; i < a->cause.cap; i++) {
        uint64_t k = a->cause.keys[i];
        if (k != 0) {
            best_cause(&w->items[(k - 1) >> 32], c, (size_t)((k - 1) & 0xffffffffu),
                       a->cause.counts[i]);
        }
    }
}

static void fill_row(struct krc_store_group_row *o, int t, const struct agg *a,
                     const struct group *g)
{
    memset(o, 0, sizeof(*o));
    o->restarts = g->restarts;
    o->pods = g->pods;
    o->last_at = g->last_at;
    if (t == T_POD) {
        o->key[0] = g->label;
        o->key[1] = g->label + strlen(g->label) + 1;
        o->pods = 1;
        o->gpus = g->gpus;
        return;
    }
    o->key[0] = g->key;
    if (t == T_WORKLOAD) {
        o->key[1] = o->key[0] + strlen(o->key[0]) + 1;
        o->key[2] = o->key[1] + strlen(o->key[1]) + 1;
        o->top_cause = a->t[T_CAUSE].items[g->best_cause].key;
    }
}

/* The sorted list of table t (GPU pods only: crash-looping, with GPUs), at
 * most limit entries; *gpus_held sums the GPUs of all of them. */
static int make_list(const struct agg *a, int t, long limit, struct krc_store_group_row **ret,
                     size_t *ret_n, long *gpus_held)
{
    const struct table *tb = &a->t[t];
    const struct group **v = krc_malloc((tb->n ? tb->n : 1) * sizeof(*v));
    size_t n = 0;

    if (v == NULL) {
        return KRC_ENOMEM;
    }
    for (size_t i = 0; i < tb->n; i++) {
        const struct group *g = &tb->items[i];
        if (t != T_POD || (g->restarts >= 2 && g->gpus > 0)) {
            v[n++] = g;
            *gpus_held += t == T_POD ? g->gpus : 0;
        }
    }
    qsort(v, n, sizeof(*v), t == T_POD ? cmp_gpu_pods : cmp_groups);
    if (limit > 0 && n > (size_t)limit) {
        n = (size_t)limit;
    }
    *ret = krc_calloc(n ? n : 1, sizeof(**ret));
    if (*ret == NULL) {
        krc_free(v);
        return KRC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        fill_row(&(*ret)[i], t, a, v[i]);
    }
    *ret_n = n;
    krc_free(v);
    return 0;
}

void krc_store_summary_free(struct krc_store_summary *sum)
{
    if (sum == NULL) {
        return;
    }
    krc_free(sum->workloads);
    krc_free(sum->causes);
    krc_free(sum->nodes);
    krc_free(sum->gpu_pods);
    arena_free(sum->mem_);
    krc_free(sum);
}

int krc_store_summarize(struct krc_store *s, int64_t since, const char *cluster, long limit,
                        struct krc_store_summary **ret, struct krc_error *err)
{
    return krc_store_summarize_where(s, since, cluster, NULL, NULL, limit, ret, err);
}

int krc_store_summarize_where(struct krc_store *s, int64_t since, const char *cluster,
                              krc_store_window_fn keep, void *keep_ud, long limit,
                              struct krc_store_summary **ret, struct krc_error *err)
{
    struct agg a;
    struct krc_store_summary *sum = krc_calloc(1, sizeof(*sum));
    int rc = sum != NULL ? 0 : KRC_ENOMEM;

    memset(&a, 0, sizeof(a));
    a.keep = keep;
    a.keep_ud = keep_ud;
    if (rc == 0) {
        rc = krc_store_window(s, since, cluster, on_row, &a, err);
    }
    if (rc == 0) {
        top_causes(&a);
        sum->restarts = a.restarts;
        sum->intentional = a.intentional;
        sum->accel_seconds_lost = a.accel_lost;
        sum->mem_ = a.arena;
        a.arena = NULL;
        rc = make_list(&a, T_WORKLOAD, limit, &sum->workloads, &sum->n_workloads, &sum->gpus_held);
    }
    if (rc == 0) {
        rc = make_list(&a, T_CAUSE, limit, &sum->causes, &sum->n_causes, &sum->gpus_held);
    }
    if (rc == 0) {
        rc = make_list(&a, T_NODE, limit, &sum->nodes, &sum->n_nodes, &sum->gpus_held);
    }
    if (rc == 0) {
        rc = make_list(&a, T_POD, limit, &sum->gpu_pods, &sum->n_gpu_pods, &sum->gpus_held);
    }
    for (int t = 0; t < N_TABLES; t++) {
        table_free(&a.t[t]);
    }
    pairs_free(&a.seen);
    pairs_free(&a.cause);
    krc_free(a.wl_cause);
    arena_free(a.arena);
    if (rc != 0) {
        krc_store_summary_free(sum);
        /* on_row and the lists fail only for memory; the scan sets err itself */
        return rc == KRC_ENOMEM ? krc_error_set(err, KRC_ENOMEM, "out of memory") : rc;
    }
    *ret = sum;
    return 0;
}
