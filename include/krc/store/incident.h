/* Incidents and recorded changes in the store (issue 27; both backends:
 * SQLite schema 9, PostgreSQL schema 4; docs/design/store.md, "Incidents"
 * and "Changes").
 *
 * An incident is the restarts of one workload's container with the same
 * cause: its key is (cluster, namespace, workload kind, workload name,
 * container, cause), a bare pod's workload being kind "Pod" and the pod's
 * name. At most one incident of a key is open (ended_at NULL) at a time (a
 * partial UNIQUE index). A restart joins or opens its incident in the same
 * transaction that records it (krc_store_record / _record_many with
 * krc_store_restart.incident set), so a restart that is already recorded
 * (KRC_STORE_EXISTS) changes no incident, and a new leader that loads the
 * open incidents (krc_store_incidents_open) continues the same ones.
 *
 * A change is what the tracker (track/track.h) saw change in a workload's pod
 * template or a node (or a ConfigMap/Secret's data), recorded once per
 * (cluster, namespace, kind, name, revision).
 *
 * Included by krc/store/store.h; strings borrowed for the call unless said. */
#ifndef KRC_STORE_INCIDENT_H
#define KRC_STORE_INCIDENT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/store/store.h"
#include "krc/util/error.h"

/* krc_store_restart.incident: what the recorded restart does to its incident.
 * The incident's key is taken from the restart (namespace, workload_kind and
 * workload_name, or "Pod" and the pod's name without a workload, container,
 * the cause's name) and the store's cluster. */
struct krc_store_incident_ref {
    /* > 0: join that open incident; when it has ended meanwhile (another
     * leader ended it) or does not exist, the restart opens one as with 0.
     * 0: open a new one with this restart first; when an incident of the
     * same key is already open (another leader opened it, or the caller's
     * memory is stale) the restart joins that one instead: at most one
     * open incident per key. ret_id and ret_restarts say what happened. */
    int64_t id;
    /* a new incident: its thread (the first alert's outbox thread_key, as
     * "namespace/pod"); may be NULL; ignored when the restart joins */
    const char *thread_key;
    /* > 0: the messages recorded with this restart are the incident's update
     * at this time (unix s): told_restarts = restarts (this one counted), and
     * last_update_at = update_at, or last_reply_at = update_at when
     * thread_reply is set (and last_update_at too when and_update is set) */
    int64_t update_at;
    int thread_reply;     /* with update_at: it is a thread reply (last_reply_at) */
    int and_update;       /* with thread_reply: also an update of destinations without
                           * threads (last_update_at = update_at as well) */
    int64_t ret_id;       /* out: the incident id (new or joined); 0 when nothing was written */
    int64_t ret_restarts; /* out: its restart count after this one (1: this restart opened it) */
};

/* An incident as stored. Strings borrowed (valid during the callback) or owned
 * by the struct that holds it. */
struct krc_store_incident {
    int64_t id;
    const char *namespace, *workload_kind, *workload_name, *container, *cause, *thread_key;
    int64_t restarts, first_restart_id, latest_restart_id, first_at, last_at, ended_at /* 0 open */,
        last_reply_at, last_update_at, told_restarts;
    const char *cluster; /* the cluster that recorded it ("" when unnamed) */
};

/* Callbacks return 0 to continue; any other value stops the iteration and is
 * returned by the iterating function. */
typedef int (*krc_store_incident_fn)(const struct krc_store_incident *inc, void *ud);

/* Every open incident (of the store's cluster; SQLite: of the file), oldest
 * first: what a new leader continues. They are read before the first
 * callback, so the callback may call the store (krc_store_incident_get, _end). */
int krc_store_incidents_open(struct krc_store *s, krc_store_incident_fn fn, void *ud,
                             struct krc_error *err);

/* End incident `id` at `ended_at` and queue its resolved messages (restart_id
 * = the incident's latest restart, kind as given: recovered) in one
 * transaction; ret_outbox_ids[i] (may be NULL) gets msgs[i]'s row, n may be 0.
 * 0, or KRC_STORE_EXISTS when it had already ended (another leader ended it):
 * nothing written. KRC_ENOTFOUND when no incident has that id. */
int krc_store_incident_end(struct krc_store *s, int64_t id, int64_t ended_at,
                           const struct krc_store_outbox *msgs, size_t n, int64_t *ret_outbox_ids,
                           struct krc_error *err);

struct krc_store_incident_filter {
    const char *namespace, *workload_kind, *workload_name; /* exact; NULL: any */
    int open_only;
    int64_t since;       /* > 0: open, or ended at or after since */
    long limit;          /* <= 0: no limit */
    int64_t before_id;   /* keyset page: only incidents with id < before_id; 0: from the newest */
    const char *cluster; /* exact; NULL: every cluster */
};

/* Matching incidents newest first (by id, i.e. by when they opened). */
int krc_store_incidents_list(struct krc_store *s, const struct krc_store_incident_filter *f,
                             krc_store_incident_fn fn, void *ud, struct krc_error *err);

/* At most this many messages in an incident's detail (the oldest). */
#define KRC_STORE_INCIDENT_MESSAGES_MAX 200

/* One incident with its first and latest restart (NULL when pruned; the same
 * restart twice is two entries) and its messages: the outbox rows of its
 * restarts, oldest first, at most KRC_STORE_INCIDENT_MESSAGES_MAX of
 * n_messages_total. */
struct krc_store_incident_detail {
    struct krc_store_incident inc;
    struct krc_store_entry *first, *latest;
    struct krc_store_message *messages;
    size_t n_messages;
    int64_t n_messages_total;
    /* private storage of the strings above */
    char **strings_;
    size_t n_strings_;
};

/* KRC_ENOTFOUND when no incident has this id. Free *ret with
 * krc_store_incident_detail_free (accepts NULL). */
int krc_store_incident_get(struct krc_store *s, int64_t id, struct krc_store_incident_detail **ret,
                           struct krc_error *err);
void krc_store_incident_detail_free(struct krc_store_incident_detail *d);

/* ---- changes -------------------------------------------------------------------------- */

/* A change of a workload's pod template, a node, a ConfigMap or Secret
 * (track/track.h). namespace "" for a node. detail_json: the change object
 * (kind, namespace, name, revision, at, manager, items, previous_*). */
struct krc_store_change {
    const char *namespace, *kind, *name, *revision, *manager, *summary, *detail_json;
    int64_t at, recorded_at; /* unix s; recorded_at 0 on record: now */
    int64_t id;              /* listing: the row's id */
    const char *cluster;     /* listing: the cluster that recorded it; ignored on record */
};

/* Record a change (namespace, kind, name, revision required; the store's
 * cluster). KRC_STORE_EXISTS when that revision is already recorded: nothing
 * written. */
int krc_store_record_change(struct krc_store *s, const struct krc_store_change *c,
                            struct krc_error *err);

struct krc_store_change_filter {
    const char *namespace, *kind, *name; /* exact; NULL: any */
    /* also these nodes' changes (kind "Node"), whatever the filter above */
    const char *const *nodes;
    size_t n_nodes;
    int64_t since, until; /* at >= since (0: any), at < until (0: any) */
    long limit;           /* <= 0: no limit */
    const char *cluster;  /* exact; NULL: every cluster */
};

typedef int (*krc_store_change_fn)(const struct krc_store_change *c, void *ud);

/* Matching changes newest first (at, then id). At most 64 nodes. */
int krc_store_changes_list(struct krc_store *s, const struct krc_store_change_filter *f,
                           krc_store_change_fn fn, void *ud, struct krc_error *err);

#endif
