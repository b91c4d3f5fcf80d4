/* The tracker's insides, shared by track.c (tables, feeding, the ring) and
 * describe.c (the answer). Everything here is guarded by krc_track.lock. */
#ifndef KRC_TRACK_PRIVATE_H
#define KRC_TRACK_PRIVATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/track/diff.h"
#include "krc/track/intern.h"
#include "krc/track/track.h"

/* Kinds of changed things (the change object's "kind"). */
enum track_kind {
    TK_NONE,
    TK_DEPLOYMENT,
    TK_STATEFULSET,
    TK_DAEMONSET,
    TK_CRONJOB,
    TK_JOB,
    TK_NODE,
    TK_CONFIGMAP,
    TK_SECRET,
    TK_POD,
    TK_N
};
const char *track_kind_name(enum track_kind k);
enum track_kind track_kind_of(const char *name);

/* A chained hash table of entries that begin with a struct link. */
struct link {
    struct link *next;
    uint32_t hash;
    uint32_t seen; /* the tick of the last object event that named it (syncs) */
};
struct table {
    struct link **buckets;
    size_t n_buckets; /* a power of two */
    size_t count;
};

/* One pod template revision: a ReplicaSet, a ControllerRevision, or a
 * CronJob's current job template. Its facts are kept as elements: a fact's
 * interned id, or (TRACK_GROUP bit set) the interned id of a group, the ids
 * of a run of facts of one type and container (a container's env, its
 * probes, ...) stored as bytes, so revisions that share them share one
 * copy (track.c: encode, expand). */
#define TRACK_GROUP 0x80000000u
struct rev {
    struct link link;
    struct rev *sibling;         /* the next revision of its owner (struct owner) */
    uint32_t ns, owner, manager; /* interned: namespace, owning workload, manager (0: none) */
    int32_t ready;               /* readyReplicas, -1 unknown */
    int64_t revision;    /* the Deployment revision, ControllerRevision revision, generation */
    uint32_t at;         /* unix s (until 2106): when it became this revision */
    uint16_t n_facts;    /* elements */
    uint16_t name_len;   /* bytes stored */
    uint8_t res;         /* enum krc_track_resource */
    uint8_t owner_kind;  /* enum track_kind; TK_NONE: no workload owns it */
    uint8_t recorded;    /* its change is in the ring (or was) */
    uint8_t name_suffix; /* the name is OWNER-<stored>, as the controllers name them */
    uint8_t cold;        /* its facts were dropped: an old revision (compact_owner) */
    uint32_t facts[];    /* the elements (key order); then the name or its suffix, no NUL */
};

/* The revisions of one workload (an index, so that its revisions are found
 * without a scan): the ones a describe or a new revision looks at. */
struct owner {
    struct link link;
    uint32_t ns, name; /* interned, references held */
    uint8_t kind;
    struct rev *revs; /* linked by rev.sibling */
};

static inline const char *rev_name_bytes(const struct rev *r)
{
    return (const char *)(r->facts + r->n_facts);
}

/* A Deployment, StatefulSet or DaemonSet (metadata only): who last changed
 * its pod template, and when. */
struct workload {
    struct link link;
    uint32_t ns, name, manager;
    uint8_t kind;
    int64_t manager_at;
    int64_t revision; /* a Deployment's revision annotation */
};

struct node {
    struct link link;
    uint32_t name;
    uint16_t n_facts;
    uint32_t facts[];
};

/* One watch of a resource: the cluster (ns 0) or a namespace. */
struct sync_scope {
    uint8_t res;
    uint32_t ns;    /* interned, reference held; 0: all namespaces */
    uint32_t start; /* tick at its sync_begin */
    uint8_t syncing;
    uint8_t synced; /* has synced once */
};

/* A recorded change (the ring). */
struct change {
    uint64_t seq;
    uint8_t kind;
    uint32_t ns, name, manager; /* interned, references held */
    int64_t at;
    int64_t prev_revision; /* -1 unknown */
    char revision[24];
    char *items;   /* owned: items each ended by '\n' */
    uint16_t more; /* items left out */
};

/* A ConfigMap/Secret content change the collector saw. */
struct config_note {
    uint32_t ns, wl_name, name, manager; /* interned */
    uint8_t wl_kind, kind;               /* enum track_kind */
    int64_t at;
    char revision[24];
};

struct krc_track {
    pthread_mutex_t lock;
    struct krc_track_options opt;
    struct krc_intern *in;
    struct table revs, workloads, nodes, owners;
    int64_t compacted_at; /* the last compaction of every owner */
    uint32_t tick;        /* counts object events: what a sync saw is newer than its start */
    struct sync_scope *scopes;
    size_t n_scopes;
    struct change *ring;
    size_t ring_cap;
    uint64_t next_seq, drained_seq;
    struct config_note *notes;
    size_t notes_next;
    uint64_t recorded, dropped, undecodable;
};

/* changes.c: record a change in the ring (takes a reference on ns, name,
 * manager; copies the items); an entry's and a note's references dropped. */
int track_record(struct krc_track *t, uint8_t kind, uint32_t ns, uint32_t name,
                 const char *revision, int64_t at, uint32_t manager, int64_t prev_revision,
                 const struct krc_track_items *it);
void track_change_clear(struct krc_track *t, struct change *c);
void track_note_clear(struct krc_track *t, struct config_note *n);

/* Revisions of one workload, newest first. Returns how many (at most max). */
size_t track_revs_of(struct krc_track *t, uint32_t ns, uint8_t owner_kind, uint32_t owner,
                     struct rev **out, size_t max);
/* The revision before r of its workload (the highest lower revision), or NULL. */
struct rev *track_rev_before(struct krc_track *t, const struct rev *r);
/* The items from prev (NULL: none) to r. */
int track_rev_items(struct krc_track *t, const struct rev *prev, const struct rev *r,
                    struct krc_track_items *it);

/* Has resource r synced for namespace ns (its cluster-wide watch, or the
 * watch of that namespace)? ns NULL: any scope. */
int track_scope_synced(const struct krc_track *t, enum krc_track_resource r, const char *ns);

/* describe.c: one change object into b (JSON). */
int track_change_json(struct krc_buf *b, const char *kind, const char *ns, const char *name,
                      const char *revision, int64_t at, const char *manager, const char *items,
                      int64_t prev_revision, int32_t prev_ready);

/* describe.c: the items (each ended by '\n') as one text, "a; b; and N more"
 * (more: the items left out), lead before the first: the alert's line and
 * the history's summary say the same. */
int track_items_join(struct krc_buf *b, const char *items, size_t more, const char *lead);

#endif
