/* The tracker: tables of template revisions, workloads and nodes, the
 * recent-changes ring, feeding and draining (track.h). */
#include "krc/track/track.h"

#include <stdio.h>
#include <string.h>

#include "krc/track/object.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "track_private.h"

/* A revision (or a Deployment's template manager) seen this long before the
 * revision's time still names who made it: the Deployment event and its new
 * ReplicaSet arrive in either order, a second or so apart. */
#define MANAGER_SLACK_S 120

static const struct krc_track_resource_info RESOURCES[KRC_TRACK_N_RESOURCES] = {
    [KRC_TRACK_DEPLOYMENTS] = {"deployments", "apis/apps/v1/deployments", 1, 1},
    [KRC_TRACK_REPLICASETS] = {"replicasets", "apis/apps/v1/replicasets", 0, 1},
    [KRC_TRACK_STATEFULSETS] = {"statefulsets", "apis/apps/v1/statefulsets", 1, 1},
    [KRC_TRACK_DAEMONSETS] = {"daemonsets", "apis/apps/v1/daemonsets", 1, 1},
    [KRC_TRACK_CONTROLLERREVISIONS] = {"controllerrevisions", "apis/apps/v1/controllerrevisions", 0,
                                       1},
    [KRC_TRACK_JOBS] = {"jobs", "apis/batch/v1/jobs", 1, 1},
    [KRC_TRACK_CRONJOBS] = {"cronjobs", "apis/batch/v1/cronjobs", 0, 1},
    [KRC_TRACK_NODES] = {"nodes", "api/v1/nodes", 0, 0},
};

static const char *const KIND_NAMES[TK_N] = {
    [TK_NONE] = "",
    [TK_DEPLOYMENT] = "Deployment",
    [TK_STATEFULSET] = "StatefulSet",
    [TK_DAEMONSET] = "DaemonSet",
    [TK_CRONJOB] = "CronJob",
    [TK_JOB] = "Job",
    [TK_NODE] = "Node",
    [TK_CONFIGMAP] = "ConfigMap",
    [TK_SECRET] = "Secret",
    [TK_POD] = "Pod",
};

const struct krc_track_resource_info *krc_track_resource_info(enum krc_track_resource r)
{
    return (unsigned)r < KRC_TRACK_N_RESOURCES ? &RESOURCES[r] : NULL;
}

const char *track_kind_name(enum track_kind k)
{
    return (unsigned)k < TK_N ? KIND_NAMES[k] : "";
}

enum track_kind track_kind_of(const char *name)
{
    for (int k = 1; k < TK_N; k++) {
        if (name != NULL && strcmp(name, KIND_NAMES[k]) == 0) {
            return (enum track_kind)k;
        }
    }
    return TK_NONE;
}

void krc_track_options_defaults(struct krc_track_options *o)
{
    o->lookback_s = 86400;
    o->max_changes = 4096;
}

/* ---- the hash tables ------------------------------------------------------ */

static uint32_t mix(uint32_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 16777619u;
    }
    return h;
}

static uint32_t key_hash(uint32_t a, uint32_t b, const char *name, size_t len)
{
    uint32_t h = 2166136261u;
    h = mix(h, &a, sizeof(a));
    h = mix(h, &b, sizeof(b));
    return mix(h, name, len);
}

static int table_init(struct table *tb)
{
    tb->n_buckets = 64;
    tb->count = 0;
    tb->buckets = krc_calloc(tb->n_buckets, sizeof(struct link *));
    return tb->buckets != NULL ? 0 : KRC_ENOMEM;
}

static void table_insert(struct table *tb, struct link *l)
{
    if (tb->count >= tb->n_buckets) {
        size_t n = tb->n_buckets * 2;
        struct link **b = krc_calloc(n, sizeof(*b));
        if (b != NULL) { /* without memory the chains only grow longer */
            for (size_t i = 0; i < tb->n_buckets; i++) {
                struct link *e = tb->buckets[i];
                while (e != NULL) {
                    struct link *next = e->next;
                    e->next = b[e->hash & (n - 1)];
                    b[e->hash & (n - 1)] = e;
                    e = next;
                }
            }
            krc_free(tb->buckets);
            tb->buckets = b;
            tb->n_buckets = n;
        }
    }
    l->next = tb->buckets[l->hash & (tb->n_buckets - 1)];
    tb->buckets[l->hash & (tb->n_buckets - 1)] = l;
    tb->count++;
}

static void table_remove(struct table *tb, struct link *l)
{
    struct link **p = &tb->buckets[l->hash & (tb->n_buckets - 1)];
    while (*p != NULL) {
        if (*p == l) {
            *p = l->next;
            tb->count--;
            return;
        }
        p = &(*p)->next;
    }
}

/* ---- entries -------------------------------------------------------------- */

static uint32_t rev_hash(uint8_t res, uint32_t ns, const char *name, size_t len)
{
    return key_hash(res, ns, name, len);
}

/* Is r's name name[0..len)? */
static int rev_name_eq(const struct krc_track *t, const struct rev *r, const char *name, size_t len)
{
    size_t olen;
    const char *owner;

    if (!r->name_suffix) {
        return r->name_len == len && memcmp(rev_name_bytes(r), name, len) == 0;
    }
    owner = krc_intern_str(t->in, r->owner, &olen);
    return olen + 1 + r->name_len == len && memcmp(name, owner, olen) == 0 && name[olen] == '-' &&
           memcmp(name + olen + 1, rev_name_bytes(r), r->name_len) == 0;
}

static struct rev *rev_find(struct krc_track *t, uint8_t res, uint32_t ns, const char *name)
{
    size_t len = strlen(name);
    uint32_t h = rev_hash(res, ns, name, len);

    for (struct link *l = t->revs.buckets[h & (t->revs.n_buckets - 1)]; l != NULL; l = l->next) {
        struct rev *r = (struct rev *)l;
        if (l->hash == h && r->res == res && r->ns == ns && rev_name_eq(t, r, name, len)) {
            return r;
        }
    }
    return NULL;
}

/* Drop the references of elements (a group's last one drops its facts'). */
static void unref_facts(struct krc_track *t, const uint32_t *facts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = facts[i] & ~TRACK_GROUP;
        if ((facts[i] & TRACK_GROUP) && krc_intern_refs(t->in, id) == 1) {
            size_t len;
            const char *b = krc_intern_str(t->in, id, &len);
            for (size_t k = 0; k + sizeof(uint32_t) <= len; k += sizeof(uint32_t)) {
                uint32_t f;
                memcpy(&f, b + k, sizeof(f));
                krc_intern_unref(t->in, f);
            }
        }
        krc_intern_unref(t->in, id);
    }
}

static void rev_free(struct krc_track *t, struct rev *r)
{
    krc_intern_unref(t->in, r->ns);
    krc_intern_unref(t->in, r->owner);
    krc_intern_unref(t->in, r->manager);
    unref_facts(t, r->facts, r->n_facts);
    krc_free(r);
}

static void owner_free(struct krc_track *t, struct owner *o)
{
    krc_intern_unref(t->in, o->ns);
    krc_intern_unref(t->in, o->name);
    krc_free(o);
}

static uint32_t owner_hash(uint8_t kind, uint32_t ns, uint32_t name)
{
    return key_hash(kind, ns, (const char *)&name, sizeof(name));
}

static struct owner *owner_find(const struct krc_track *t, uint8_t kind, uint32_t ns, uint32_t name)
{
    uint32_t h = owner_hash(kind, ns, name);

    for (struct link *l = t->owners.buckets[h & (t->owners.n_buckets - 1)]; l != NULL;
         l = l->next) {
        struct owner *o = (struct owner *)l;
        if (l->hash == h && o->kind == kind && o->ns == ns && o->name == name) {
            return o;
        }
    }
    return NULL;
}

/* Put r in the tables: by name, and in its owner's list (a revision of no
 * workload is in the first only). KRC_ENOMEM: r is in neither. */
static int rev_link(struct krc_track *t, struct rev *r)
{
    struct owner *o = NULL;

    if (r->owner_kind != TK_NONE) {
        o = owner_find(t, r->owner_kind, r->ns, r->owner);
        if (o == NULL) {
            o = krc_calloc(1, sizeof(*o));
            if (o == NULL) {
                return KRC_ENOMEM;
            }
            o->kind = r->owner_kind;
            o->ns = r->ns;
            o->name = r->owner;
            krc_intern_ref(t->in, o->ns);
            krc_intern_ref(t->in, o->name);
            o->link.hash = owner_hash(o->kind, o->ns, o->name);
            table_insert(&t->owners, &o->link);
        }
        r->sibling = o->revs;
        o->revs = r;
    }
    table_insert(&t->revs, &r->link);
    return 0;
}

static void rev_unlink(struct krc_track *t, struct rev *r)
{
    table_remove(&t->revs, &r->link);
    if (r->owner_kind == TK_NONE) {
        return;
    }
    struct owner *o = owner_find(t, r->owner_kind, r->ns, r->owner);
    if (o == NULL) {
        return;
    }
    for (struct rev **p = &o->revs; *p != NULL; p = &(*p)->sibling) {
        if (*p == r) {
            *p = r->sibling;
            break;
        }
    }
    if (o->revs == NULL) {
        table_remove(&t->owners, &o->link);
        owner_free(t, o);
    }
}

static struct workload *wl_find(struct krc_track *t, uint8_t kind, uint32_t ns, uint32_t name)
{
    uint32_t h = key_hash(kind, ns, (const char *)&name, sizeof(name));

    for (struct link *l = t->workloads.buckets[h & (t->workloads.n_buckets - 1)]; l != NULL;
         l = l->next) {
        struct workload *w = (struct workload *)l;
        if (l->hash == h && w->kind == kind && w->ns == ns && w->name == name) {
            return w;
        }
    }
    return NULL;
}

static void wl_free(struct krc_track *t, struct workload *w)
{
    krc_intern_unref(t->in, w->ns);
    krc_intern_unref(t->in, w->name);
    krc_intern_unref(t->in, w->manager);
    krc_free(w);
}

static struct node *node_find(struct krc_track *t, uint32_t name)
{
    uint32_t h = key_hash(TK_NODE, 0, (const char *)&name, sizeof(name));

    for (struct link *l = t->nodes.buckets[h & (t->nodes.n_buckets - 1)]; l != NULL; l = l->next) {
        struct node *n = (struct node *)l;
        if (l->hash == h && n->name == name) {
            return n;
        }
    }
    return NULL;
}

static void node_free(struct krc_track *t, struct node *n)
{
    krc_intern_unref(t->in, n->name);
    unref_facts(t, n->facts, n->n_facts);
    krc_free(n);
}

/* ---- life ------------------------------------------------------------------ */

struct krc_track *krc_track_new(const struct krc_track_options *o)
{
    struct krc_track *t = krc_calloc(1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    krc_track_options_defaults(&t->opt);
    if (o != NULL) {
        t->opt.lookback_s = o->lookback_s > 0 ? o->lookback_s : t->opt.lookback_s;
        t->opt.max_changes = o->max_changes > 0 ? o->max_changes : t->opt.max_changes;
    }
    t->ring_cap = t->opt.max_changes;
    t->next_seq = 1;
    t->drained_seq = 0;
    t->in = krc_intern_new();
    t->ring = krc_calloc(t->ring_cap, sizeof(struct change));
    t->notes = krc_calloc(KRC_TRACK_CONFIG_NOTES, sizeof(struct config_note));
    if (t->in == NULL || t->ring == NULL || t->notes == NULL || table_init(&t->revs) < 0 ||
        table_init(&t->workloads) < 0 || table_init(&t->nodes) < 0 || table_init(&t->owners) < 0 ||
        pthread_mutex_init(&t->lock, NULL) != 0) {
        krc_intern_free(t->in);
        krc_free(t->ring);
        krc_free(t->notes);
        krc_free(t->revs.buckets);
        krc_free(t->workloads.buckets);
        krc_free(t->nodes.buckets);
        krc_free(t->owners.buckets);
        krc_free(t);
        return NULL;
    }
    return t;
}

static void free_table(struct krc_track *t, struct table *tb, int which)
{
    for (size_t i = 0; i < tb->n_buckets; i++) {
        struct link *l = tb->buckets[i];
        while (l != NULL) {
            struct link *next = l->next;
            if (which == 0) {
                rev_free(t, (struct rev *)l);
            } else if (which == 3) {
                owner_free(t, (struct owner *)l);
            } else if (which == 1) {
                wl_free(t, (struct workload *)l);
            } else {
                node_free(t, (struct node *)l);
            }
            l = next;
        }
    }
    krc_free(tb->buckets);
}

void krc_track_free(struct krc_track *t)
{
    if (t == NULL) {
        return;
    }
    free_table(t, &t->revs, 0);
    free_table(t, &t->owners, 3);
    free_table(t, &t->workloads, 1);
    free_table(t, &t->nodes, 2);
    for (size_t i = 0; i < t->ring_cap; i++) {
        track_change_clear(t, &t->ring[i]);
    }
    for (size_t i = 0; i < KRC_TRACK_CONFIG_NOTES; i++) {
        track_note_clear(t, &t->notes[i]);
    }
    for (size_t i = 0; i < t->n_scopes; i++) {
        krc_intern_unref(t->in, t->scopes[i].ns);
    }
    krc_free(t->scopes);
    krc_free(t->ring);
    krc_free(t->notes);
    krc_intern_free(t->in);
    pthread_mutex_destroy(&t->lock);
    krc_free(t);
}

/* ---- revisions ------------------------------------------------------------- */

size_t track_revs_of(struct krc_track *t, uint32_t ns, uint8_t owner_kind, uint32_t owner,
                     struct rev **out, size_t max)
{
    struct owner *o = owner_find(t, owner_kind, ns, owner);
    size_t n = 0;

    for (struct rev *r = o != NULL ? o->revs : NULL; r != NULL; r = r->sibling) {
        /* insert by revision, newest first; keep the newest max */
        size_t j = n < max ? n++ : max;
        while (j > 0 && out[j - 1]->revision < r->revision) {
            if (j < max) {
                out[j] = out[j - 1];
            }
            j--;
        }
        if (j < max) {
            out[j] = r;
        }
    }
    return n;
}

struct rev *track_rev_before(struct krc_track *t, const struct rev *r)
{
    struct owner *o;
    struct rev *best = NULL;

    if (r->owner_kind == TK_NONE || r->res == KRC_TRACK_CRONJOBS) {
        return NULL;
    }
    o = owner_find(t, r->owner_kind, r->ns, r->owner);
    for (struct rev *v = o != NULL ? o->revs : NULL; v != NULL; v = v->sibling) {
        if (v != r && v->revision < r->revision && (best == NULL || v->revision > best->revision)) {
            best = v;
        }
    }
    return best;
}

/* The fact strings of elements (at most KRC_FACTS_MAX). */
static size_t expand(const struct krc_track *t, const uint32_t *e, size_t n, const char **out)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (!(e[i] & TRACK_GROUP)) {
            if (k < KRC_FACTS_MAX) {
                out[k++] = krc_intern_str(t->in, e[i], NULL);
            }
            continue;
        }
        size_t len;
        const char *b = krc_intern_str(t->in, e[i] & ~TRACK_GROUP, &len);
        for (size_t j = 0; j + sizeof(uint32_t) <= len && k < KRC_FACTS_MAX; j += 4) {
            uint32_t f;
            memcpy(&f, b + j, sizeof(f));
            out[k++] = krc_intern_str(t->in, f, NULL);
        }
    }
    return k;
}

static int facts_items(struct krc_track *t, const uint32_t *a, size_t na, const uint32_t *b,
                       size_t nb, struct krc_track_items *it)
{
    const char *sa[KRC_FACTS_MAX];
    const char *sb[KRC_FACTS_MAX];
    size_t ea = expand(t, a, na, sa);
    size_t eb = expand(t, b, nb, sb);

    return krc_track_diff(sa, ea, sb, eb, it);
}

int track_rev_items(struct krc_track *t, const struct rev *prev, const struct rev *r,
                    struct krc_track_items *it)
{
    if (prev == NULL) {
        return krc_track_items_add(it, r->revision <= 1 ? "created"
                                                        : "the revision before it is not known");
    }
    if (prev->cold || r->cold) {
        return krc_track_items_add(it, "the pod template of revision %lld is no longer in memory",
                                   (long long)(r->cold ? r->revision : prev->revision));
    }
    if (r->res == KRC_TRACK_REPLICASETS && r->n_facts == prev->n_facts &&
        memcmp(r->facts, prev->facts, r->n_facts * sizeof(uint32_t)) == 0) {
        return krc_track_items_add(it, "pod template unchanged (a restart or a rollback)");
    }
    return facts_items(t, prev->facts, prev->n_facts, r->facts, r->n_facts, it);
}

/* Record r's change: its items against its predecessor. */
static int record_rev(struct krc_track *t, struct rev *r)
{
    struct krc_track_items it;
    struct rev *prev = track_rev_before(t, r);
    char revision[24];
    int rc;

    if (r->owner_kind == TK_NONE) {
        return 0;
    }
    krc_track_items_init(&it, KRC_TRACK_ITEMS);
    rc = track_rev_items(t, prev, r, &it);
    snprintf(revision, sizeof(revision), "%lld", (long long)r->revision);
    if (rc == 0) {
        rc = track_record(t, r->owner_kind, r->ns, r->owner, revision, r->at, r->manager,
                          prev != NULL ? prev->revision : -1, &it);
    }
    r->recorded = 1;
    krc_track_items_cleanup(&it);
    return rc;
}

/* The workload's template manager for a revision made at `at`. */
static void attach_manager(struct krc_track *t, struct rev *r)
{
    struct workload *w;

    if (r->manager != 0 || r->owner_kind == TK_NONE || r->owner_kind == TK_CRONJOB) {
        return;
    }
    w = wl_find(t, r->owner_kind, r->ns, r->owner);
    if (w == NULL || w->manager == 0 || w->manager_at + MANAGER_SLACK_S < r->at) {
        return;
    }
    if (r->owner_kind == TK_DEPLOYMENT && w->revision != 0 && w->revision != r->revision) {
        return;
    }
    r->manager = w->manager;
    krc_intern_ref(t->in, r->manager);
}

static uint8_t owner_kind_of(enum krc_track_resource res, const struct krc_track_obj *o)
{
    if (res == KRC_TRACK_CRONJOBS) {
        return TK_CRONJOB;
    }
    enum track_kind k = track_kind_of(o->owner_kind);
    if (res == KRC_TRACK_REPLICASETS) {
        return k == TK_DEPLOYMENT ? TK_DEPLOYMENT : TK_NONE;
    }
    return k == TK_STATEFULSET || k == TK_DAEMONSET ? (uint8_t)k : TK_NONE;
}

/* Facts a and b are of one type and container (a group's run). */
static int same_run(const char *a, const char *b)
{
    size_t n = strcspn(a, "\x1f");
    return a[0] != KRC_FACT_IMAGE && strncmp(a, b, n + 1) == 0;
}

/* Encode facts as elements (references taken): each fact's id, a run of
 * two or more facts of one type and container as one group. *ret_n
 * elements; KRC_ENOMEM (nothing held). */
static int encode_facts(struct krc_track *t, const struct krc_facts *f, uint32_t *out,
                        size_t *ret_n)
{
    uint32_t run[KRC_FACTS_MAX];
    size_t n = 0;

    for (size_t i = 0; i < f->n;) {
        size_t j = i + 1;
        while (j < f->n && same_run(krc_facts_get(f, i), krc_facts_get(f, j))) {
            j++;
        }
        for (size_t k = i; k < j; k++) {
            const char *fs = krc_facts_get(f, k);
            run[k - i] = krc_intern_add(t->in, fs, strlen(fs));
            if (run[k - i] == 0) {
                for (size_t m = i; m < k; m++) {
                    krc_intern_unref(t->in, run[m - i]);
                }
                goto nomem;
            }
        }
        if (j - i == 1) {
            out[n++] = run[0];
        } else {
            uint32_t g = krc_intern_add(t->in, (const char *)run, (j - i) * sizeof(uint32_t));
            if (g == 0 || g >= TRACK_GROUP) {
                krc_intern_unref(t->in, g);
                for (size_t m = 0; m < j - i; m++) {
                    krc_intern_unref(t->in, run[m]);
                }
                goto nomem;
            }
            if (krc_intern_refs(t->in, g) > 1) {
                for (size_t m = 0; m < j - i; m++) { /* the group holds them already */
                    krc_intern_unref(t->in, run[m]);
                }
            }
            out[n++] = g | TRACK_GROUP;
        }
        i = j;
    }
    *ret_n = n;
    return 0;
nomem:
    unref_facts(t, out, n);
    return KRC_ENOMEM;
}

/* A new revision entry owning the n elements ids (on failure the caller
 * still holds them). */
static struct rev *rev_new(struct krc_track *t, enum krc_track_resource res,
                           const struct krc_track_obj *o, uint32_t ns, const uint32_t *ids,
                           size_t n, int64_t now)
{
    size_t nlen = strlen(o->name);
    uint8_t kind = owner_kind_of(res, o);
    const char *owner = res == KRC_TRACK_CRONJOBS ? o->name : o->owner_name;
    size_t olen = kind != TK_NONE ? strlen(owner) : 0;
    /* OWNER-SUFFIX (a ReplicaSet, a ControllerRevision): the suffix only */
    int suffix = kind != TK_NONE && nlen > olen + 1 && memcmp(o->name, owner, olen) == 0 &&
                 o->name[olen] == '-';
    size_t stored = suffix ? nlen - olen - 1 : nlen;
    struct rev *r = krc_calloc(1, sizeof(*r) + n * sizeof(uint32_t) + stored);

    if (r == NULL || nlen > UINT16_MAX) {
        krc_free(r);
        return NULL;
    }
    r->res = (uint8_t)res;
    r->owner_kind = kind;
    r->owner = kind != TK_NONE ? krc_intern_add(t->in, owner, olen) : 0;
    if (kind != TK_NONE && r->owner == 0) {
        krc_free(r);
        return NULL;
    }
    r->ns = ns;
    krc_intern_ref(t->in, ns);
    r->n_facts = (uint16_t)n;
    r->name_suffix = (uint8_t)suffix;
    r->name_len = (uint16_t)stored;
    memcpy(r->facts, ids, n * sizeof(uint32_t));
    memcpy((char *)(r->facts + n), o->name + (nlen - stored), stored);
    r->ready = o->ready;
    r->revision = o->revision;
    r->at = o->created > 0 ? o->created : now;
    r->link.hash = rev_hash(r->res, ns, o->name, nlen);
    return r;
}

static int same_facts(const struct rev *r, const uint32_t *ids, size_t n)
{
    return r->n_facts == n && memcmp(r->facts, ids, n * sizeof(uint32_t)) == 0;
}

/* A CronJob's template changed: record it (generation, the manager). */
static int cronjob_changed(struct krc_track *t, struct rev *old, struct rev *cur,
                           const struct krc_track_obj *o, int64_t now)
{
    struct krc_track_items it;
    char revision[24];
    uint32_t manager = 0;
    int rc;

    cur->at =
        o->manager_at > old->at && o->manager_at <= now + MANAGER_SLACK_S ? o->manager_at : now;
    if (o->manager[0] != '\0') {
        manager = krc_intern_add(t->in, o->manager, strlen(o->manager));
        krc_intern_unref(t->in, cur->manager);
        cur->manager = manager; /* the reference is cur's */
    }
    krc_track_items_init(&it, KRC_TRACK_ITEMS);
    rc = facts_items(t, old->facts, old->n_facts, cur->facts, cur->n_facts, &it);
    snprintf(revision, sizeof(revision), "%lld", (long long)cur->revision);
    if (rc == 0) {
        rc = track_record(t, TK_CRONJOB, cur->ns, cur->owner, revision, cur->at, manager,
                          old->revision, &it);
    }
    cur->recorded = 1;
    krc_track_items_cleanup(&it);
    return rc;
}

/* Keep what the old entry knew that the object does not say again. */
static void carry_over(struct krc_track *t, struct rev *old, struct rev *cur, int64_t now,
                       int syncing)
{
    cur->recorded = old->recorded;
    if (cur->manager == 0 && old->manager != 0) {
        cur->manager = old->manager;
        krc_intern_ref(t->in, cur->manager);
    }
    if (cur->res == KRC_TRACK_CRONJOBS) {
        cur->at = old->at;
    } else if (cur->revision > old->revision && !syncing) {
        cur->at = now; /* an old ReplicaSet made current again: a rollback, now */
        cur->recorded = 0;
    } else {
        cur->at = old->at;
    }
}

/* ---- keeping only the templates an answer can need ------------------------------------ */

static void compact_all(struct krc_track *t, int64_t now);

/* A revision older than the lookback (and this margin) that is neither its
 * workload's newest nor the one before a recent revision is never part of
 * an answer: its facts are dropped, its entry stays (revision, ready pods,
 * name: a later event about it is known). */
#define COLD_MARGIN_S 3600
#define OWNER_REVS_MAX 128
#define COMPACT_EVERY_S 600

/* Put c where r is, in the table by name and in the owner's list. */
static void rev_replace(struct krc_track *t, struct rev *r, struct rev *c)
{
    struct link **p = &t->revs.buckets[r->link.hash & (t->revs.n_buckets - 1)];
    struct owner *o = owner_find(t, r->owner_kind, r->ns, r->owner);

    for (; *p != NULL; p = &(*p)->next) {
        if (*p == &r->link) {
            *p = &c->link;
            break;
        }
    }
    for (struct rev **q = o != NULL ? &o->revs : NULL; q != NULL && *q != NULL;
         q = &(*q)->sibling) {
        if (*q == r) {
            *q = c;
            break;
        }
    }
}

/* r without its facts (the entry is replaced; r is freed). Out of memory:
 * r stays as it is. */
static void make_cold(struct krc_track *t, struct rev *r)
{
    struct rev *c = krc_malloc(sizeof(*c) + r->name_len);

    if (c == NULL) {
        return;
    }
    memcpy(c, r, sizeof(*c));
    c->n_facts = 0;
    c->cold = 1;
    memcpy((char *)c->facts, rev_name_bytes(r), r->name_len);
    rev_replace(t, r, c);
    unref_facts(t, r->facts, r->n_facts);
    krc_free(r);
}

static void compact_owner(struct krc_track *t, struct owner *o, int64_t now)
{
    struct rev *v[OWNER_REVS_MAX];
    uint8_t keep[OWNER_REVS_MAX];
    int64_t cutoff = now - t->opt.lookback_s - COLD_MARGIN_S;
    size_t n = 0;

    for (struct rev *r = o != NULL ? o->revs : NULL; r != NULL && n < OWNER_REVS_MAX;
         r = r->sibling) {
        size_t j = n++;
        while (j > 0 && v[j - 1]->revision < r->revision) { /* newest first */
            v[j] = v[j - 1];
            j--;
        }
        v[j] = r;
    }
    memset(keep, 0, sizeof(keep));
    for (size_t i = 0; i < n; i++) {
        if (i == 0) {
            keep[i] = 1; /* the newest: the one before the next rollout */
        }
        if ((int64_t)v[i]->at > cutoff) {
            keep[i] = 1;
            if (i + 1 < n) {
                keep[i + 1] = 1; /* the one before it: its change's items */
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!keep[i] && !v[i]->cold && v[i]->res != KRC_TRACK_CRONJOBS) {
            make_cold(t, v[i]);
        }
    }
}

/* Time passes: revisions leave the lookback (at most every COMPACT_EVERY_S). */
void krc_track_compact(struct krc_track *t, int64_t now)
{
    if (t == NULL) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (now - t->compacted_at >= COMPACT_EVERY_S) {
        t->compacted_at = now;
        compact_all(t, now);
    }
    pthread_mutex_unlock(&t->lock);
}

static void compact_all(struct krc_track *t, int64_t now)
{
    for (size_t i = 0; i < t->owners.n_buckets; i++) {
        for (struct link *l = t->owners.buckets[i]; l != NULL; l = l->next) {
            compact_owner(t, (struct owner *)l, now);
        }
    }
}

/* The object's scope has synced and is not syncing again: what arrives now
 * is news (during a sync, an object may be old news). */
static int scope_quiet(const struct krc_track *t, enum krc_track_resource r, uint32_t ns)
{
    for (size_t i = 0; i < t->n_scopes; i++) {
        const struct sync_scope *sc = &t->scopes[i];
        if (sc->res == r && (sc->ns == 0 || sc->ns == ns)) {
            return sc->synced && !sc->syncing;
        }
    }
    return 0;
}

static int upsert_rev(struct krc_track *t, enum krc_track_resource res,
                      const struct krc_track_obj *o, uint32_t ns, int64_t now)
{
    uint32_t ids[KRC_FACTS_MAX];
    size_t n;
    struct rev *old = rev_find(t, (uint8_t)res, ns, o->name);
    struct rev *cur;
    int syncing = !scope_quiet(t, res, ns);
    int rc = 0;

    if (old != NULL && old->cold && old->revision == o->revision) {
        old->ready = o->ready; /* an old revision's status: its template is not kept */
        old->link.seen = t->tick;
        return 0;
    }
    if (encode_facts(t, &o->facts, ids, &n) < 0) {
        return KRC_ENOMEM;
    }
    if (old != NULL && same_facts(old, ids, n) &&
        (old->revision == o->revision || res == KRC_TRACK_CRONJOBS)) {
        old->revision = o->revision; /* a CronJob's generation: the schedule, say */
        unref_facts(t, ids, n);      /* the template as before: status only */
        old->ready = o->ready;
        old->link.seen = t->tick;
        return 0;
    }
    cur = rev_new(t, res, o, ns, ids, n, now);
    if (cur == NULL) {
        unref_facts(t, ids, n);
        return KRC_ENOMEM;
    }
    cur->link.seen = t->tick;
    if (old != NULL) {
        carry_over(t, old, cur, now, syncing);
        if (res == KRC_TRACK_CRONJOBS && !syncing) {
            rc = cronjob_changed(t, old, cur, o, now);
        }
        rev_unlink(t, old);
        rev_free(t, old);
    } else if (res == KRC_TRACK_CRONJOBS && o->manager[0] != '\0') {
        cur->manager = krc_intern_add(t->in, o->manager, strlen(o->manager));
    }
    if (rev_link(t, cur) < 0) {
        rev_free(t, cur);
        return KRC_ENOMEM;
    }
    attach_manager(t, cur);
    if (!syncing && !cur->recorded && res != KRC_TRACK_CRONJOBS) {
        rc = record_rev(t, cur);
    }
    /* last: cur itself may go cold (an old revision seen at a sync) */
    if (cur->owner_kind != TK_NONE && res != KRC_TRACK_CRONJOBS) {
        compact_owner(t, owner_find(t, cur->owner_kind, cur->ns, cur->owner), now);
    }
    return rc;
}

/* ---- workloads and nodes ----------------------------------------------------- */

static int upsert_workload(struct krc_track *t, enum krc_track_resource res,
                           const struct krc_track_obj *o, uint32_t ns)
{
    uint8_t kind = res == KRC_TRACK_DEPLOYMENTS    ? TK_DEPLOYMENT
                   : res == KRC_TRACK_STATEFULSETS ? TK_STATEFULSET
                                                   : TK_DAEMONSET;
    uint32_t name = krc_intern_add(t->in, o->name, strlen(o->name));
    struct workload *w;

    if (name == 0) {
        return KRC_ENOMEM;
    }
    w = wl_find(t, kind, ns, name);
    if (w == NULL) {
        w = krc_calloc(1, sizeof(*w));
        if (w == NULL) {
            krc_intern_unref(t->in, name);
            return KRC_ENOMEM;
        }
        w->kind = kind;
        w->ns = ns;
        krc_intern_ref(t->in, ns);
        w->name = name;
        w->link.hash = key_hash(kind, ns, (const char *)&name, sizeof(name));
        table_insert(&t->workloads, &w->link);
    } else {
        krc_intern_unref(t->in, name); /* w holds one */
    }
    w->link.seen = t->tick;
    w->revision = o->revision;
    if (o->manager[0] != '\0' && o->manager_at >= w->manager_at) {
        uint32_t m = krc_intern_add(t->in, o->manager, strlen(o->manager));
        if (m == 0) {
            return KRC_ENOMEM;
        }
        krc_intern_unref(t->in, w->manager);
        w->manager = m;
        w->manager_at = o->manager_at;
    }
    /* the revision this manager made, when its event came after the revision's */
    struct rev *revs[1];
    if (track_revs_of(t, ns, kind, w->name, revs, 1) == 1 && revs[0]->manager == 0) {
        attach_manager(t, revs[0]);
    }
    return 0;
}

static int upsert_node(struct krc_track *t, const struct krc_track_obj *o, int64_t now)
{
    uint32_t ids[KRC_FACTS_MAX];
    size_t n;
    uint32_t name = krc_intern_add(t->in, o->name, strlen(o->name));
    struct node *old;
    struct node *cur;
    int rc = 0;

    if (name == 0) {
        return KRC_ENOMEM;
    }
    old = node_find(t, name);
    if (encode_facts(t, &o->facts, ids, &n) < 0) {
        krc_intern_unref(t->in, name);
        return KRC_ENOMEM;
    }
    if (old != NULL && old->n_facts == n && memcmp(old->facts, ids, n * sizeof(uint32_t)) == 0) {
        unref_facts(t, ids, n);
        krc_intern_unref(t->in, name);
        old->link.seen = t->tick;
        return 0;
    }
    cur = krc_calloc(1, sizeof(*cur) + n * sizeof(uint32_t));
    if (cur == NULL) {
        unref_facts(t, ids, n);
        krc_intern_unref(t->in, name);
        return KRC_ENOMEM;
    }
    cur->name = name;
    cur->link.seen = t->tick;
    cur->n_facts = (uint16_t)n;
    memcpy(cur->facts, ids, n * sizeof(uint32_t));
    cur->link.hash = key_hash(TK_NODE, 0, (const char *)&name, sizeof(name));
    if (old != NULL) {
        struct krc_track_items it;
        krc_track_items_init(&it, KRC_TRACK_ITEMS);
        rc = facts_items(t, old->facts, old->n_facts, cur->facts, cur->n_facts, &it);
        if (rc == 0 && it.n > 0) {
            rc = track_record(t, TK_NODE, 0, name, o->resource_version, now, 0, -1, &it);
        }
        krc_track_items_cleanup(&it);
        table_remove(&t->nodes, &old->link);
        node_free(t, old);
    }
    table_insert(&t->nodes, &cur->link);
    return rc;
}

/* ---- feeding ---------------------------------------------------------------- */

static struct sync_scope *scope_find(const struct krc_track *t, enum krc_track_resource r,
                                     uint32_t ns)
{
    for (size_t i = 0; i < t->n_scopes; i++) {
        if (t->scopes[i].res == r && t->scopes[i].ns == ns) {
            return &t->scopes[i];
        }
    }
    return NULL;
}

int track_scope_synced(const struct krc_track *t, enum krc_track_resource r, const char *ns)
{
    uint32_t id = ns != NULL && ns[0] != '\0' ? krc_intern_find(t->in, ns, strlen(ns)) : 0;

    for (size_t i = 0; i < t->n_scopes; i++) {
        const struct sync_scope *sc = &t->scopes[i];
        if (sc->res == r && sc->synced && (ns == NULL || sc->ns == 0 || (id && sc->ns == id))) {
            return 1;
        }
    }
    return 0;
}

int krc_track_sync_begin(struct krc_track *t, enum krc_track_resource r, const char *namespace)
{
    struct sync_scope *sc;
    uint32_t ns = 0;
    int rc = 0;

    pthread_mutex_lock(&t->lock);
    if (namespace != NULL && namespace[0] != '\0') {
        ns = krc_intern_add(t->in, namespace, strlen(namespace));
        if (ns == 0) {
            rc = KRC_ENOMEM;
            goto out;
        }
    }
    sc = scope_find(t, r, ns);
    if (sc != NULL) {
        krc_intern_unref(t->in, ns); /* the scope holds one */
    } else {
        struct sync_scope *v = krc_realloc(t->scopes, (t->n_scopes + 1) * sizeof(*v));
        if (v == NULL) {
            krc_intern_unref(t->in, ns);
            rc = KRC_ENOMEM;
            goto out;
        }
        t->scopes = v;
        sc = &t->scopes[t->n_scopes++];
        memset(sc, 0, sizeof(*sc));
        sc->res = (uint8_t)r;
        sc->ns = ns;
    }
    sc->start = ++t->tick;
    sc->syncing = 1;
out:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* The first sync of a revision resource's scope: record the revisions made
 * within the lookback, now that their predecessors are known. */
static void record_recent(struct krc_track *t, enum krc_track_resource r, uint32_t ns, int64_t now)
{
    for (size_t i = 0; i < t->revs.n_buckets; i++) {
        for (struct link *l = t->revs.buckets[i]; l != NULL; l = l->next) {
            struct rev *v = (struct rev *)l;
            if (v->res == r && (ns == 0 || v->ns == ns) && !v->recorded &&
                v->at > now - t->opt.lookback_s && record_rev(t, v) < 0) {
                return;
            }
        }
    }
}

/* Seen before the scope's sync began (wrap-safe). */
static int stale(const struct link *l, const struct sync_scope *sc)
{
    return (int32_t)(l->seen - sc->start) < 0;
}

static int workload_of(enum krc_track_resource r, const struct workload *w)
{
    return (r == KRC_TRACK_DEPLOYMENTS && w->kind == TK_DEPLOYMENT) ||
           (r == KRC_TRACK_STATEFULSETS && w->kind == TK_STATEFULSET) ||
           (r == KRC_TRACK_DAEMONSETS && w->kind == TK_DAEMONSET);
}

static void sweep(struct krc_track *t, const struct sync_scope *sc)
{
    enum krc_track_resource r = (enum krc_track_resource)sc->res;
    struct table *tb =
        r == KRC_TRACK_NODES ? &t->nodes
        : r == KRC_TRACK_DEPLOYMENTS || r == KRC_TRACK_STATEFULSETS || r == KRC_TRACK_DAEMONSETS
            ? &t->workloads
            : &t->revs;

    for (size_t i = 0; i < tb->n_buckets; i++) {
        struct link **p = &tb->buckets[i];
        while (*p != NULL) {
            struct link *l = *p;
            int gone = 0;
            if (tb == &t->nodes) {
                gone = stale(l, sc);
            } else if (tb == &t->workloads) {
                const struct workload *w = (const struct workload *)l;
                gone = workload_of(r, w) && (sc->ns == 0 || w->ns == sc->ns) && stale(l, sc);
            } else {
                const struct rev *v = (const struct rev *)l;
                gone = v->res == r && (sc->ns == 0 || v->ns == sc->ns) && stale(l, sc);
            }
            if (!gone) {
                p = &l->next;
                continue;
            }
            if (tb == &t->revs) { /* out of both its tables: *p is the next one then */
                rev_unlink(t, (struct rev *)l);
                rev_free(t, (struct rev *)l);
                continue;
            }
            *p = l->next;
            tb->count--;
            if (tb == &t->nodes) {
                node_free(t, (struct node *)l);
            } else {
                wl_free(t, (struct workload *)l);
            }
        }
    }
}

void krc_track_sync_end(struct krc_track *t, enum krc_track_resource r, const char *namespace,
                        int64_t now)
{
    struct sync_scope *sc;
    uint32_t ns = 0;

    pthread_mutex_lock(&t->lock);
    if (namespace != NULL && namespace[0] != '\0') {
        ns = krc_intern_find(t->in, namespace, strlen(namespace));
    }
    sc = ns != 0 || namespace == NULL || namespace[0] == '\0' ? scope_find(t, r, ns) : NULL;
    if (sc != NULL && sc->syncing) {
        sweep(t, sc);
        if (!sc->synced && (r == KRC_TRACK_REPLICASETS || r == KRC_TRACK_CONTROLLERREVISIONS)) {
            record_recent(t, r, sc->ns, now);
        }
        sc->syncing = 0;
        sc->synced = 1;
    }
    pthread_mutex_unlock(&t->lock);
}

static void delete_object(struct krc_track *t, enum krc_track_resource r,
                          const struct krc_track_obj *o, uint32_t ns)
{
    if (r == KRC_TRACK_NODES) {
        uint32_t name = krc_intern_find(t->in, o->name, strlen(o->name));
        struct node *n = name != 0 ? node_find(t, name) : NULL;
        if (n != NULL) {
            table_remove(&t->nodes, &n->link);
            node_free(t, n);
        }
    } else if (r == KRC_TRACK_DEPLOYMENTS || r == KRC_TRACK_STATEFULSETS ||
               r == KRC_TRACK_DAEMONSETS) {
        uint8_t kind = r == KRC_TRACK_DEPLOYMENTS    ? TK_DEPLOYMENT
                       : r == KRC_TRACK_STATEFULSETS ? TK_STATEFULSET
                                                     : TK_DAEMONSET;
        uint32_t name = krc_intern_find(t->in, o->name, strlen(o->name));
        struct workload *w = name != 0 ? wl_find(t, kind, ns, name) : NULL;
        if (w != NULL) {
            table_remove(&t->workloads, &w->link);
            wl_free(t, w);
        }
    } else if (r != KRC_TRACK_JOBS) {
        struct rev *v = rev_find(t, (uint8_t)r, ns, o->name);
        if (v != NULL) {
            rev_unlink(t, v);
            rev_free(t, v);
        }
    }
}

static int apply(struct krc_track *t, enum krc_track_resource r, enum krc_watch_event_type type,
                 const struct krc_track_obj *o, int64_t now)
{
    uint32_t ns;
    int rc = 0;

    if (r == KRC_TRACK_JOBS) {
        return 0; /* a Job's template cannot change: its watch says only that Jobs are known */
    }
    ns = krc_intern_add(t->in, o->namespace, strlen(o->namespace));
    if (ns == 0 && o->namespace[0] != '\0') {
        return KRC_ENOMEM;
    }
    if (type == KRC_WATCH_DELETED) {
        delete_object(t, r, o, ns);
    } else if (r == KRC_TRACK_NODES) {
        rc = upsert_node(t, o, now);
    } else if (r == KRC_TRACK_DEPLOYMENTS || r == KRC_TRACK_STATEFULSETS ||
               r == KRC_TRACK_DAEMONSETS) {
        rc = upsert_workload(t, r, o, ns);
    } else if (o->has_template) {
        rc = upsert_rev(t, r, o, ns, now);
    }
    krc_intern_unref(t->in, ns);
    return rc;
}

int krc_track_object(struct krc_track *t, enum krc_track_resource r, enum krc_watch_event_type type,
                     const char *json, size_t len, int64_t now, struct krc_error *err)
{
    struct krc_track_obj o;
    int rc;

    if ((unsigned)r >= KRC_TRACK_N_RESOURCES) {
        return krc_error_set(err, KRC_EINVAL, "unknown tracked resource %d", (int)r);
    }
    krc_track_obj_init(&o);
    rc = krc_track_obj_parse(&o, r, json, len, err);
    if (rc == 0 && o.name[0] == '\0') {
        rc = krc_error_set(err, KRC_EPARSE, "%s object without metadata.name", RESOURCES[r].name);
    }
    pthread_mutex_lock(&t->lock);
    if (rc == KRC_EPARSE) {
        t->undecodable++;
    } else if (rc == 0) {
        t->tick++;
        rc = apply(t, r, type, &o, now);
        if (now - t->compacted_at >= COMPACT_EVERY_S) { /* time passes */
            t->compacted_at = now;
            compact_all(t, now);
        }
        if (rc == KRC_ENOMEM) {
            krc_error_set(err, rc, "out of memory tracking %s %s/%s", RESOURCES[r].name,
                          o.namespace, o.name);
        }
    }
    pthread_mutex_unlock(&t->lock);
    krc_track_obj_cleanup(&o);
    return rc;
}

void krc_track_get_stats(struct krc_track *t, struct krc_track_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (t == NULL) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    ret->revisions = t->revs.count;
    for (size_t i = 0; i < t->revs.n_buckets; i++) {
        for (struct link *l = t->revs.buckets[i]; l != NULL; l = l->next) {
            ret->templates += !((struct rev *)l)->cold;
        }
    }
    ret->workloads = t->workloads.count;
    ret->nodes = t->nodes.count;
    ret->strings = krc_intern_count(t->in);
    ret->string_bytes = krc_intern_bytes(t->in);
    ret->changes = t->next_seq - 1 < t->ring_cap ? (size_t)(t->next_seq - 1) : t->ring_cap;
    ret->recorded = t->recorded;
    ret->dropped = t->dropped;
    ret->undecodable = t->undecodable;
    for (size_t i = 0; i < t->n_scopes; i++) {
        ret->synced |= t->scopes[i].synced ? 1u << t->scopes[i].res : 0u;
    }
    pthread_mutex_unlock(&t->lock);
}
