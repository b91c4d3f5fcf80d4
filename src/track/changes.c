/* The recorded changes: the ring, the ConfigMap/Secret notes of the
 * collector, and the drain to the store (track.h). The tracker's mutex
 * guards all of it; the drain calls its callback without it. */
#include "krc/track/track.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "track_private.h"

#define DRAIN_BATCH 64

void track_change_clear(struct krc_track *t, struct change *c)
{
    krc_intern_unref(t->in, c->ns);
    krc_intern_unref(t->in, c->name);
    krc_intern_unref(t->in, c->manager);
    krc_free(c->items);
    memset(c, 0, sizeof(*c));
}

void track_note_clear(struct krc_track *t, struct config_note *n)
{
    krc_intern_unref(t->in, n->ns);
    krc_intern_unref(t->in, n->wl_name);
    krc_intern_unref(t->in, n->name);
    krc_intern_unref(t->in, n->manager);
    memset(n, 0, sizeof(*n));
}

/* ---- the ring -------------------------------------------------------------- */

/* Record a change (takes a reference on ns, name, manager; copies items). */
int track_record(struct krc_track *t, uint8_t kind, uint32_t ns, uint32_t name,
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
    track_change_clear(t, c);
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
    c->more = (uint16_t)(it->more > 65535 ? 65535 : it->more);
    t->recorded++;
    return 0;
}

/* ---- ConfigMaps and Secrets ------------------------------------------------------ */

/* A note of the same object and content (resourceVersion), for any workload. */
static int same_object(const struct krc_track *t, const struct config_note *n, uint32_t ns,
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
    uint8_t wl_kind = (uint8_t)track_kind_of(workload_kind);
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
    int known = 0;    /* this workload's note of this content */
    int recorded = 0; /* the change is in the ring (another workload's note) */

    if (ns == 0 || wl_name == 0 || name == 0 || (meta->manager[0] && manager == 0)) {
        rc = KRC_ENOMEM;
        goto release;
    }
    /* A ConfigMap shared by two workloads is noted for each (describe
     * answers per workload), and its change recorded once. */
    for (size_t i = 0; i < KRC_TRACK_CONFIG_NOTES; i++) {
        const struct config_note *n = &t->notes[i];
        if (same_object(t, n, ns, kind, ref->name, meta->resource_version)) {
            recorded = 1;
            known |= n->wl_kind == wl_kind && n->wl_name == wl_name;
        }
    }
    if (!known) {
        struct config_note *n = &t->notes[t->notes_next];
        t->notes_next = (t->notes_next + 1) % KRC_TRACK_CONFIG_NOTES;
        track_note_clear(t, n);
        n->ns = ns;
        n->wl_name = wl_name;
        n->name = name;
        n->manager = manager;
        krc_intern_ref(t->in, ns);
        krc_intern_ref(t->in, wl_name);
        krc_intern_ref(t->in, name);
        krc_intern_ref(t->in, manager);
        n->wl_kind = wl_kind;
        n->kind = kind;
        n->at = meta->at;
        snprintf(n->revision, sizeof(n->revision), "%s", meta->resource_version);
    }
    if (!known && !recorded) {
        struct krc_track_items it;
        krc_track_items_init(&it, 1);
        rc = krc_track_items_add(&it, "data changed");
        if (rc == 0) {
            rc =
                track_record(t, kind, ns, name, meta->resource_version, meta->at, manager, -1, &it);
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

/* The summary: the items as the alert's line lists them. */
static char *summary_of(const struct change *c)
{
    struct krc_buf b;

    krc_buf_init(&b, 64 * 1024);
    if (track_items_join(&b, c->items, c->more, "") < 0) {
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
    if (d->ns == NULL || d->name == NULL || (manager && d->manager == NULL) || d->summary == NULL ||
        d->json == NULL) {
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
            struct krc_track_change c = {batch[i].ns,       batch[i].kind,    batch[i].name,
                                         batch[i].revision, batch[i].manager, batch[i].at,
                                         batch[i].summary,  batch[i].json};
            fn(&c, ud);
            drained_free(&batch[i]);
        }
        total += n;
        if (n < DRAIN_BATCH) {
            return total;
        }
    }
}
