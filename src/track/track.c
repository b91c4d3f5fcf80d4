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
#define DRAIN_BATCH 64

static const struct krc_track_resource_info RESOURCES[KRC_TRACK_N_RESOURCES] = {
    [KRC_TRACK_DEPLOYMENTS] = {"deployments", "apis/apps/v1/deployments", 1, 1},
    [KRC_TRACK_REPLICASETS] = {"replicasets", "apis/apps/v1/replicasets", 0, 1},
    [KRC_TRACK_STATEFULSETS] = {"statefulsets", "apis/apps/v1/statefulsets", 1, 1},
    [KRC_TRACK_DAEMONSETS] = {"daemonsets", "apis/apps/v1/daemonsets", 1, 1},
    [KRC_TRACK_CONTROLLERREVISIONS] = {"controllerrevisions", "apis/apps/v1/controllerrevisions",
                                       0, 1},
    [KRC_TRACK_JOBS] = {"jobs", "apis/batch/v1/jobs", 1, 1},
    [KRC_TRACK_CRONJOBS] = {"cronjobs", "apis/batch/v1/cronjobs", 0, 1},
    [KRC_TRACK_NODES] = {"nodes", "api/v1/nodes", 0, 0},
};

static const char *const KIND_NAMES[TK_N] = {
    [TK_NONE] = "",           [TK_DEPLOYMENT] = "Deployment", [TK_STATEFULSET] = "StatefulSet",
    [TK_DAEMONSET] = "DaemonSet", [TK_CRONJOB] = "CronJob",   [TK_JOB] = "Job",
    [TK_NODE] = "Node",       [TK_CONFIGMAP] = "ConfigMap",   [TK_SECRET] = "Secret",
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

static struct rev *rev_find(struct krc_track *t, uint8_t res, uint32_t ns, const char *name)
{
    size_t len = strlen(name);
    uint32_t h = rev_hash(res, ns, name, len);

    for (struct link *l = t->revs.buckets[h & (t->revs.n_buckets - 1)]; l != NULL; l = l->next) {
        struct rev *r = (struct rev *)l;
        if (l->hash == h && r->res == res && r->ns == ns && r->name_len == len &&
            memcmp(rev_name(r), name, len) == 0) {
            return r;
        }
    }
    return NULL;
}

static void unref_facts(struct krc_track *t, const uint32_t *facts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        krc_intern_unref(t->in, facts[i]);
    }
}

static void rev_free(struct krc_track *t, struct rev *r)
{
    krc_intern_unref(t->in, r->ns);
    krc_intern_unref(t->in, r->owner);
    krc_intern_unref(t->in, r->manager);
    krc_intern_unref(t->in, r->hash_id);
    unref_facts(t, r->facts, r->n_facts);
    krc_free(r);
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

    for (struct link *l = t->nodes.buckets[h & (t->nodes.n_buckets - 1)]; l != NULL;
         l = l->next) {
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
        table_init(&t->workloads) < 0 || table_init(&t->nodes) < 0 ||
        pthread_mutex_init(&t->lock, NULL) != 0) {
        krc_intern_free(t->in);
        krc_free(t->ring);
        krc_free(t->notes);
        krc_free(t->revs.buckets);
        krc_free(t->workloads.buckets);
        krc_free(t->nodes.buckets);
        krc_free(t);
        return NULL;
    }
    return t;
}

static void change_clear(struct krc_track *t, struct change *c)
{
    krc_intern_unref(t->in, c->ns);
    krc_intern_unref(t->in, c->name);
    krc_intern_unref(t->in, c->manager);
    krc_free(c->items);
    memset(c, 0, sizeof(*c));
}

static void note_clear(struct krc_track *t, struct config_note *n)
{
    krc_intern_unref(t->in, n->ns);
    krc_intern_unref(t->in, n->wl_name);
    krc_intern_unref(t->in, n->name);
    krc_intern_unref(t->in, n->manager);
    memset(n, 0, sizeof(*n));
}

static void free_table(struct krc_track *t, struct table *tb, int which)
{
    for (size_t i = 0; i < tb->n_buckets; i++) {
        struct link *l = tb->buckets[i];
        while (l != NULL) {
            struct link *next = l->next;
            if (which == 0) {
                rev_free(t, (struct rev *)l);
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
    free_table(t, &t->workloads, 1);
    free_table(t, &t->nodes, 2);
    for (size_t i = 0; i < t->ring_cap; i++) {
        change_clear(t, &t->ring[i]);
    }
    for (size_t i = 0; i < KRC_TRACK_CONFIG_NOTES; i++) {
        note_clear(t, &t->notes[i]);
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

/* ---- the ring -------------------------------------------------------------- */

/* Record a change (takes a reference on ns, name, manager; copies items). */
static int record(struct krc_track *t, uint8_t kind, uint32_t ns, uint32_t name,
                  const char *revision, int64_t at, uint32_t manager, int64_t prev_revision,
                  const struct krc_track_items *it)
{
    struct change *c = &t->ring[t->next_seq % t->ring_cap];
    char *items = krc_strdup(krc_buf_str(&it->buf));

    if (items == NULL) {
        return KRC_ENOMEM;
    }
    if (c->seq != 0 && c->seq > t->drained_seq) {
        t->dropped++; /* overwritten before a drain took it */
    }
    change_clear(t, c);
    c->seq = t->next_seq++;
    c->kind = kind;
    c->ns = ns;
    c->name = name;
    c->manager = manager;
    krc_intern_ref(t->in, ns);
    krc_intern_ref(t->in, name);
    krc_intern_ref(t->in, manager);
    c->at = at;
    c->prev_revision = prev_revision;
    snprintf(c->revision, sizeof(c->revision), "%s", revision);
    c->items = items;
    c->n_items = (uint16_t)it->n;
    c->more = (uint16_t)(it->more > 65535 ? 65535 : it->more);
    t->recorded++;
    return 0;
}

/* ---- revisions ------------------------------------------------------------- */

size_t track_revs_of(struct krc_track *t, uint32_t ns, uint8_t owner_kind, uint32_t owner,
                     struct rev **out, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < t->revs.n_buckets; i++) {
        for (struct link *l = t->revs.buckets[i]; l != NULL; l = l->next) {
            struct rev *r = (struct rev *)l;
            if (r->ns != ns || r->owner != owner || r->owner_kind != owner_kind) {
                continue;
            }
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
    }
    return n;
}

struct rev *track_rev_before(struct krc_track *t, const struct rev *r)
{
    struct rev *best = NULL;

    if (r->owner_kind == TK_NONE || r->res == KRC_TRACK_CRONJOBS) {
        return NULL;
    }
    for (size_t i = 0; i < t->revs.n_buckets; i++) {
        for (struct link *l = t->revs.buckets[i]; l != NULL; l = l->next) {
            struct rev *o = (struct rev *)l;
            if (o != r && o->ns == r->ns && o->owner == r->owner &&
                o->owner_kind == r->owner_kind && o->revision < r->revision &&
                (best == NULL || o->revision > best->revision)) {
                best = o;
            }
        }
    }
    return best;
}

static int facts_items(struct krc_track *t, const uint32_t *a, size_t na, const uint32_t *b,
                       size_t nb, struct krc_track_items *it)
{
    const char *sa[KRC_FACTS_MAX];
    const char *sb[KRC_FACTS_MAX];

    for (size_t i = 0; i < na; i++) {
        sa[i] = krc_intern_str(t->in, a[i], NULL);
    }
    for (size_t i = 0; i < nb; i++) {
        sb[i] = krc_intern_str(t->in, b[i], NULL);
    }
    return krc_track_diff(sa, na, sb, nb, it);
}

int track_rev_items(struct krc_track *t, const struct rev *prev, const struct rev *r,
                    struct krc_track_items *it)
{
    if (prev == NULL) {
        return krc_track_items_add(it, "first revision seen");
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
        rc = record(t, r->owner_kind, r->ns, r->owner, revision, r->at, r->manager,
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

/* Intern o's facts into ids (references taken); NULL: out of memory. */
static uint32_t *intern_facts(struct krc_track *t, const struct krc_facts *f, uint32_t *ids)
{
    for (size_t i = 0; i < f->n; i++) {
        const char *s = krc_facts_get(f, i);
        ids[i] = krc_intern_add(t->in, s, strlen(s));
        if (ids[i] == 0) {
            unref_facts(t, ids, i);
            return NULL;
        }
    }
    return ids;
}

static struct rev *rev_new(struct krc_track *t, enum krc_track_resource res,
                           const struct krc_track_obj *o, uint32_t ns, const uint32_t *ids,
                           int64_t now)
{
    size_t nlen = strlen(o->name);
    struct rev *r = krc_calloc(1, sizeof(*r) + o->facts.n * sizeof(uint32_t) + nlen);
    const char *owner = res == KRC_TRACK_CRONJOBS ? o->name : o->owner_name;

    if (r == NULL) {
        return NULL;
    }
    r->res = (uint8_t)res;
    r->ns = ns;
    krc_intern_ref(t->in, ns);
    r->owner_kind = owner_kind_of(res, o);
    r->owner = r->owner_kind != TK_NONE ? krc_intern_add(t->in, owner, strlen(owner)) : 0;
    r->hash_id = o->hash[0] ? krc_intern_add(t->in, o->hash, strlen(o->hash)) : 0;
    r->n_facts = (uint16_t)o->facts.n;
    r->name_len = (uint16_t)nlen;
    memcpy(r->facts, ids, o->facts.n * sizeof(uint32_t));
    memcpy((char *)(r->facts + r->n_facts), o->name, nlen);
    r->ready = o->ready;
    r->revision = o->revision;
    r->at = o->created > 0 ? o->created : now;
    if ((r->owner_kind != TK_NONE && r->owner == 0) || (o->hash[0] && r->hash_id == 0)) {
        r->n_facts = 0; /* the caller still holds the facts' references */
        rev_free(t, r);
        return NULL;
    }
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

    cur->at = o->manager_at > old->at && o->manager_at <= now + MANAGER_SLACK_S ? o->manager_at
                                                                                : now;
    if (o->manager[0] != '\0') {
        manager = krc_intern_add(t->in, o->manager, strlen(o->manager));
        krc_intern_unref(t->in, cur->manager);
        cur->manager = manager; /* the reference is cur's */
    }
    krc_track_items_init(&it, KRC_TRACK_ITEMS);
    rc = facts_items(t, old->facts, old->n_facts, cur->facts, cur->n_facts, &it);
    snprintf(revision, sizeof(revision), "%lld", (long long)cur->revision);
    if (rc == 0) {
        rc = record(t, TK_CRONJOB, cur->ns, cur->owner, revision, cur->at, manager,
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
    uint32_t idbuf[KRC_FACTS_MAX];
    uint32_t *ids = intern_facts(t, &o->facts, idbuf);
    struct rev *old = rev_find(t, (uint8_t)res, ns, o->name);
    struct rev *cur;
    int syncing = !scope_quiet(t, res, ns);
    int rc = 0;

    if (ids == NULL) {
        return KRC_ENOMEM;
    }
    if (old != NULL && same_facts(old, ids, o->facts.n) &&
        (old->revision == o->revision || res == KRC_TRACK_CRONJOBS)) {
        old->revision = o->revision; /* a CronJob's generation: the schedule, say */
        unref_facts(t, ids, o->facts.n); /* the template as before: status only */
        old->ready = o->ready;
        old->link.seen = t->tick;
        return 0;
    }
    cur = rev_new(t, res, o, ns, ids, now);
    if (cur == NULL) {
        unref_facts(t, ids, o->facts.n);
        return KRC_ENOMEM;
    }
    cur->link.seen = t->tick;
    if (old != NULL) {
        carry_over(t, old, cur, now, syncing);
        if (res == KRC_TRACK_CRONJOBS && !syncing) {
            rc = cronjob_changed(t, old, cur, o, now);
        }
        table_remove(&t->revs, &old->link);
        rev_free(t, old);
    } else if (res == KRC_TRACK_CRONJOBS && o->manager[0] != '\0') {
        cur->manager = krc_intern_add(t->in, o->manager, strlen(o->manager));
    }
    table_insert(&t->revs, &cur->link);
    attach_manager(t, cur);
    if (!syncing && !cur->recorded && res != KRC_TRACK_CRONJOBS) {
        rc = record_rev(t, cur);
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
    uint32_t idbuf[KRC_FACTS_MAX];
    uint32_t name = krc_intern_add(t->in, o->name, strlen(o->name));
    struct node *old;
    struct node *cur;
    uint32_t *ids;
    int rc = 0;

    if (name == 0) {
        return KRC_ENOMEM;
    }
    old = node_find(t, name);
    ids = intern_facts(t, &o->facts, idbuf);
    if (ids == NULL) {
        krc_intern_unref(t->in, name);
        return KRC_ENOMEM;
    }
    if (old != NULL && old->n_facts == o->facts.n &&
        memcmp(old->facts, ids, o->facts.n * sizeof(uint32_t)) == 0) {
        unref_facts(t, ids, o->facts.n);
        krc_intern_unref(t->in, name);
        old->link.seen = t->tick;
        return 0;
    }
    cur = krc_calloc(1, sizeof(*cur) + o->facts.n * sizeof(uint32_t));
    if (cur == NULL) {
        unref_facts(t, ids, o->facts.n);
        krc_intern_unref(t->in, name);
        return KRC_ENOMEM;
    }
    cur->name = name;
    cur->link.seen = t->tick;
    cur->n_facts = (uint16_t)o->facts.n;
    memcpy(cur->facts, ids, o->facts.n * sizeof(uint32_t));
    cur->link.hash = key_hash(TK_NODE, 0, (const char *)&name, sizeof(name));
    if (old != NULL) {
        struct krc_track_items it;
        krc_track_items_init(&it, KRC_TRACK_ITEMS);
        rc = facts_items(t, old->facts, old->n_facts, cur->facts, cur->n_facts, &it);
        if (rc == 0 && it.n > 0) {
            rc = record(t, TK_NODE, 0, name, o->resource_version, now, 0, -1, &it);
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
static void record_recent(struct krc_track *t, enum krc_track_resource r, uint32_t ns,
                          int64_t now)
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
    struct table *tb = r == KRC_TRACK_NODES                                  ? &t->nodes
                       : r == KRC_TRACK_DEPLOYMENTS || r == KRC_TRACK_STATEFULSETS ||
                               r == KRC_TRACK_DAEMONSETS                     ? &t->workloads
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
            *p = l->next;
            tb->count--;
            if (tb == &t->nodes) {
                node_free(t, (struct node *)l);
            } else if (tb == &t->workloads) {
                wl_free(t, (struct workload *)l);
            } else {
                rev_free(t, (struct rev *)l);
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
        t->synced |= 1u << r;
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
            table_remove(&t->revs, &v->link);
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

int krc_track_object(struct krc_track *t, enum krc_track_resource r,
                     enum krc_watch_event_type type, const char *json, size_t len, int64_t now,
                     struct krc_error *err)
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
        if (rc == KRC_ENOMEM) {
            krc_error_set(err, rc, "out of memory tracking %s %s/%s", RESOURCES[r].name,
                          o.namespace, o.name);
        }
    }
    pthread_mutex_unlock(&t->lock);
    krc_track_obj_cleanup(&o);
    return rc;
}

/* ---- ConfigMaps and Secrets ------------------------------------------------------ */

static int same_note(const struct krc_track *t, const struct config_note *n, uint32_t ns,
                     uint8_t kind, const char *name, const char *revision)
{
    return n->ns == ns && n->kind == kind &&
           strcmp(krc_intern_str(t->in, n->name, NULL), name) == 0 &&
           strcmp(n->revision, revision) == 0;
}

int krc_track_note_config(struct krc_track *t, const char *namespace, const char *workload_kind,
                          const char *workload_name, const struct krc_track_config_ref *ref,
                          const struct krc_track_config_meta *meta)
{
    uint8_t kind = (uint8_t)track_kind_of(ref->kind);
    int rc = 0;

    if (t == NULL || namespace == NULL || meta->at == 0 ||
        (kind != TK_CONFIGMAP && kind != TK_SECRET)) {
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    uint32_t ns = krc_intern_add(t->in, namespace, strlen(namespace));
    const char *wl = workload_name != NULL ? workload_name : "";
    uint32_t wl_name = krc_intern_add(t->in, wl, strlen(wl));
    uint32_t name = krc_intern_add(t->in, ref->name, strlen(ref->name));
    uint32_t manager =
        meta->manager[0] ? krc_intern_add(t->in, meta->manager, strlen(meta->manager)) : 0;
    int known = 0;

    if (ns == 0 || wl_name == 0 || name == 0 || (meta->manager[0] && manager == 0)) {
        rc = KRC_ENOMEM;
        goto release;
    }
    for (size_t i = 0; i < KRC_TRACK_CONFIG_NOTES; i++) {
        if (same_note(t, &t->notes[i], ns, kind, ref->name, meta->resource_version)) {
            known = 1;
        }
    }
    if (!known) {
        struct config_note *n = &t->notes[t->notes_next];
        struct krc_track_items it;
        t->notes_next = (t->notes_next + 1) % KRC_TRACK_CONFIG_NOTES;
        note_clear(t, n);
        n->ns = ns;
        n->wl_name = wl_name;
        n->name = name;
        n->manager = manager;
        krc_intern_ref(t->in, ns);
        krc_intern_ref(t->in, wl_name);
        krc_intern_ref(t->in, name);
        krc_intern_ref(t->in, manager);
        n->wl_kind = (uint8_t)track_kind_of(workload_kind);
        n->kind = kind;
        n->at = meta->at;
        snprintf(n->revision, sizeof(n->revision), "%s", meta->resource_version);
        krc_track_items_init(&it, 1);
        rc = krc_track_items_add(&it, "data changed");
        if (rc == 0) {
            rc = record(t, kind, ns, name, n->revision, n->at, manager, -1, &it);
        }
        krc_track_items_cleanup(&it);
    }
release:
    krc_intern_unref(t->in, ns);
    krc_intern_unref(t->in, wl_name);
    krc_intern_unref(t->in, name);
    krc_intern_unref(t->in, manager);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* ---- draining ---------------------------------------------------------------------- */

struct drained {
    char kind[16];
    char *ns, *name, *manager, *summary, *json;
    char revision[24];
    int64_t at;
};

static void drained_free(struct drained *d)
{
    krc_free(d->ns);
    krc_free(d->name);
    krc_free(d->manager);
    krc_free(d->summary);
    krc_free(d->json);
}

/* The summary: the items joined by "; " (and "(N more)"). */
static char *summary_of(const struct change *c)
{
    struct krc_buf b;
    const char *p = c->items;

    krc_buf_init(&b, 64 * 1024);
    while (*p != '\0') {
        size_t n = strcspn(p, "\n");
        if ((b.len > 0 && krc_buf_append_str(&b, "; ") < 0) || krc_buf_append(&b, p, n) < 0) {
            krc_buf_cleanup(&b);
            return NULL;
        }
        p += n + (p[n] == '\n');
    }
    if (c->more > 0 && krc_buf_printf(&b, " (%u more)", (unsigned)c->more) < 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    return krc_buf_take(&b);
}

/* The ready pods of the revision before a Deployment change, when known. */
static int32_t prev_ready(struct krc_track *t, const struct change *c)
{
    if (c->kind != TK_DEPLOYMENT || c->prev_revision < 0) {
        return -1;
    }
    struct rev *revs[64];
    size_t n = track_revs_of(t, c->ns, TK_DEPLOYMENT, c->name, revs, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        if (revs[i]->revision == c->prev_revision) {
            return revs[i]->ready;
        }
    }
    return -1;
}

/* The manager of a change: recorded with it, or learnt since (the
 * workload's event came after its new revision's). */
static uint32_t change_manager(struct krc_track *t, const struct change *c)
{
    struct rev *revs[64];
    size_t n;

    if (c->manager != 0 ||
        (c->kind != TK_DEPLOYMENT && c->kind != TK_STATEFULSET && c->kind != TK_DAEMONSET)) {
        return c->manager;
    }
    n = track_revs_of(t, c->ns, c->kind, c->name, revs, 64);
    for (size_t i = 0; i < n; i++) {
        char r[24];
        snprintf(r, sizeof(r), "%lld", (long long)revs[i]->revision);
        if (strcmp(r, c->revision) == 0) {
            return revs[i]->manager;
        }
    }
    return 0;
}

static int drained_fill(struct krc_track *t, const struct change *c, struct drained *d)
{
    uint32_t manager = change_manager(t, c);
    struct krc_buf b;
    char prev[24];
    int rc;

    memset(d, 0, sizeof(*d));
    snprintf(d->kind, sizeof(d->kind), "%s", track_kind_name((enum track_kind)c->kind));
    snprintf(d->revision, sizeof(d->revision), "%s", c->revision);
    d->at = c->at;
    d->ns = krc_strdup(krc_intern_str(t->in, c->ns, NULL));
    d->name = krc_strdup(krc_intern_str(t->in, c->name, NULL));
    d->manager = manager ? krc_strdup(krc_intern_str(t->in, manager, NULL)) : NULL;
    d->summary = summary_of(c);
    snprintf(prev, sizeof(prev), "%lld", (long long)c->prev_revision);
    krc_buf_init(&b, 256 * 1024);
    rc = track_change_json(&b, d->kind, d->ns != NULL ? d->ns : "", d->name != NULL ? d->name : "",
                           c->revision, c->at, d->manager, c->items, c->prev_revision,
                           prev_ready(t, c));
    d->json = rc == 0 ? krc_buf_take(&b) : NULL;
    krc_buf_cleanup(&b);
    if (d->ns == NULL || d->name == NULL || (manager && d->manager == NULL) ||
        d->summary == NULL || d->json == NULL) {
        drained_free(d);
        return KRC_ENOMEM;
    }
    return 0;
}

size_t krc_track_drain(struct krc_track *t, krc_track_change_fn fn, void *ud)
{
    struct drained batch[DRAIN_BATCH];
    size_t total = 0;

    if (t == NULL) {
        return 0;
    }
    for (;;) {
        size_t n = 0;
        pthread_mutex_lock(&t->lock);
        uint64_t first = t->next_seq > t->ring_cap ? t->next_seq - t->ring_cap : 1;
        if (t->drained_seq + 1 < first) {
            t->drained_seq = first - 1; /* the ring dropped them (counted) */
        }
        while (n < DRAIN_BATCH && t->drained_seq + 1 < t->next_seq) {
            const struct change *c = &t->ring[(t->drained_seq + 1) % t->ring_cap];
            if (drained_fill(t, c, &batch[n]) < 0) {
                break; /* out of memory: the rest at the next drain */
            }
            n++;
            t->drained_seq++;
        }
        pthread_mutex_unlock(&t->lock);
        for (size_t i = 0; i < n; i++) {
            struct krc_track_change c = {batch[i].ns,      batch[i].kind,    batch[i].name,
                                         batch[i].revision, batch[i].manager, batch[i].at,
                                         batch[i].summary, batch[i].json};
            fn(&c, ud);
            drained_free(&batch[i]);
        }
        total += n;
        if (n < DRAIN_BATCH) {
            return total;
        }
    }
}

void krc_track_get_stats(struct krc_track *t, struct krc_track_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (t == NULL) {
        return;
    }
    pthread_mutex_lock(&t->lock);
    ret->revisions = t->revs.count;
    ret->workloads = t->workloads.count;
    ret->nodes = t->nodes.count;
    ret->strings = krc_intern_count(t->in);
    ret->string_bytes = krc_intern_bytes(t->in);
    ret->changes = t->next_seq - 1 < t->ring_cap ? (size_t)(t->next_seq - 1) : t->ring_cap;
    ret->recorded = t->recorded;
    ret->dropped = t->dropped;
    ret->undecodable = t->undecodable;
    ret->synced = t->synced;
    pthread_mutex_unlock(&t->lock);
}

int krc_track_synced(struct krc_track *t, enum krc_track_resource r)
{
    int s;
    pthread_mutex_lock(&t->lock);
    s = (t->synced >> r) & 1u;
    pthread_mutex_unlock(&t->lock);
    return s;
}
