/* Change tracking: what changed in a workload or its node before a crash.
 *
 * The tracker is fed the objects of eight watches (apps/v1 Deployments,
 * ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions, batch/v1 Jobs,
 * CronJobs, v1 Nodes; the runner is src/daemon/daemon_track.c) and keeps, in
 * memory and without any JSON tree:
 *   - a compact digest per pod template revision (a ReplicaSet, a
 *     ControllerRevision, a CronJob's job template): images, command and
 *     args, env variable NAMES and their valueFrom references (never a
 *     value), resources, probes, ConfigMap/Secret volume references, service
 *     account, node selector, tolerations; each fact an interned string;
 *   - per Deployment/StatefulSet/DaemonSet/CronJob the manager and time of
 *     the latest managedFields entry that touched the pod template;
 *   - per node: kubelet and runtime version, kernel, taints, conditions and
 *     accelerator driver labels;
 *   - a ring of recent changes (max_changes), drained into the store.
 * krc_track_describe answers, for the first restart of an incident, the
 * alert's "what changed" line and the change objects (docs/design/
 * change-tracking.md). Thread-safe: one mutex; JSON is scanned outside it. */
#ifndef KRC_TRACK_H
#define KRC_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "krc/kube/kube_pod.h"
#include "krc/util/error.h"

struct krc_track; /* thread-safe (one mutex) */

struct krc_track_options {
    long lookback_s;    /* describe looks this far back before the first crash (86400) */
    size_t max_changes; /* the recent-changes ring (4096) */
};

void krc_track_options_defaults(struct krc_track_options *o);

/* NULL: out of memory. o may be NULL (the defaults). */
struct krc_track *krc_track_new(const struct krc_track_options *o);
void krc_track_free(struct krc_track *t); /* NULL accepted */

/* ---- The question, from the first restart of an incident ---------------- */

struct krc_track_query {
    const char *namespace, *workload_kind, *workload_name; /* report's workload */
    const char *pod_template_hash;                         /* pod label, may be NULL */
    const char *controller_revision_hash;                  /* pod label, may be NULL */
    const char *node;                                      /* may be NULL */
    int64_t before; /* unix s: the incident's first restart */
};

/* 1 with *ret_line / *ret_json (owned, krc_free) when the tracker can answer
 * (the watch of the workload's kind has synced), 0 when it cannot say
 * (nothing set), < 0 error (KRC_ENOMEM, KRC_EINVAL for a query without
 * namespace or workload). Only changes at or before q->before and after
 * q->before - lookback_s, nearest first, at most KRC_TRACK_DESCRIBE_CHANGES
 * changes of at most KRC_TRACK_ITEMS items each. *ret_json is a JSON array of
 * change objects (docs/design/change-tracking.md). A NULL t answers 0. */
int krc_track_describe(struct krc_track *t, const struct krc_track_query *q, int64_t now,
                       char **ret_line, char **ret_json, struct krc_error *err);
#define KRC_TRACK_DESCRIBE_CHANGES 5
#define KRC_TRACK_ITEMS 8

/* ---- The recorded changes, for the store ---------------------------------- */

/* A recorded change, handed to the store writer. Strings owned by the
 * tracker during the call. */
struct krc_track_change {
    const char *namespace, *kind, *name, *revision, *manager; /* manager may be NULL */
    int64_t at;
    const char *summary;     /* items joined by "; " ("; and N more" when some were left out) */
    const char *detail_json; /* the change object */
};
typedef void (*krc_track_change_fn)(const struct krc_track_change *c, void *ud);
/* Hand each change recorded since the last drain to fn, oldest first (the
 * mutex is not held during fn). Returns how many. Changes that the ring
 * dropped before a drain are counted (krc_track_stats.dropped). */
size_t krc_track_drain(struct krc_track *t, krc_track_change_fn fn, void *ud);

/* ---- Feeding (the runner's watch threads) ------------------------------- */

enum krc_track_resource {
    KRC_TRACK_DEPLOYMENTS,
    KRC_TRACK_REPLICASETS,
    KRC_TRACK_STATEFULSETS,
    KRC_TRACK_DAEMONSETS,
    KRC_TRACK_CONTROLLERREVISIONS,
    KRC_TRACK_JOBS,
    KRC_TRACK_CRONJOBS,
    KRC_TRACK_NODES,
    KRC_TRACK_N_RESOURCES
};

struct krc_track_resource_info {
    const char *name;  /* "replicasets" (logs, metrics) */
    const char *path;  /* "apis/apps/v1/replicasets": the watch's resource */
    int metadata_only; /* watched as PartialObjectMetadata (no spec, no status) */
    int namespaced;
};
const struct krc_track_resource_info *krc_track_resource_info(enum krc_track_resource r);

/* A full sync of resource r in namespace `namespace` (NULL: the whole
 * cluster, one watch) starts / completed: its objects not seen since
 * sync_begin are gone. A scope that has synced once stays answerable across
 * later relists. KRC_ENOMEM (sync_begin: the sync then removes nothing). */
int krc_track_sync_begin(struct krc_track *t, enum krc_track_resource r, const char *namespace);
void krc_track_sync_end(struct krc_track *t, enum krc_track_resource r, const char *namespace,
                        int64_t now);
/* One object of resource r (its own JSON, not the event wrapper), seen at
 * `now` (unix s). KRC_EPARSE (err names the object as far as known) for an
 * object that does not scan: it is skipped, the tracker is unchanged;
 * KRC_ENOMEM. */
int krc_track_object(struct krc_track *t, enum krc_track_resource r, enum krc_watch_event_type type,
                     const char *json, size_t len, int64_t now, struct krc_error *err);

/* Drop the pod templates no answer can need any more (revisions that left
 * the lookback and are neither their workload's newest nor the one before
 * a recent revision: their entry stays, without facts). Does the work at
 * most every 10 minutes; krc_track_object does it too, so a fed tracker
 * needs no call. */
void krc_track_compact(struct krc_track *t, int64_t now);

/* ---- ConfigMaps and Secrets (trackConfigChanges, the collector) ---------- */

#define KRC_TRACK_CONFIG_REFS 8 /* referenced objects looked up at most */

struct krc_track_config_ref {
    char kind[10]; /* "ConfigMap" or "Secret" */
    char name[254];
};

/* The ConfigMaps and Secrets a pod (its JSON) references in volumes,
 * projected sources, envFrom and env valueFrom, deduplicated, in that order,
 * at most `max`. *ret_n; *ret_more: references left out. KRC_EPARSE. */
int krc_track_config_refs(const char *pod_json, size_t len, struct krc_track_config_ref *refs,
                          size_t max, size_t *ret_n, size_t *ret_more, struct krc_error *err);

/* What a PartialObjectMetadata of a ConfigMap or Secret says about its
 * content's last change: the latest managedFields entry whose fieldsV1
 * touches f:data, f:binaryData or f:stringData (time and manager), else the
 * creationTimestamp (manager empty). */
struct krc_track_config_meta {
    int64_t at;                /* 0: unknown */
    char manager[128];         /* "" when unknown */
    char resource_version[64]; /* the object's resourceVersion */
    int from_managed_fields;   /* 1: at is a managedFields time */
};
int krc_track_config_meta_parse(const char *json, size_t len, struct krc_track_config_meta *ret,
                                struct krc_error *err);

/* The collector read ref's metadata for a crashing pod of the workload
 * (namespace, workload_kind, workload_name as in krc_track_query). The
 * tracker keeps the last KRC_TRACK_CONFIG_NOTES such notes; describe names a
 * ConfigMap/Secret of the queried workload whose content changed in the
 * window, and the change is recorded for the store once per
 * resourceVersion. */
#define KRC_TRACK_CONFIG_NOTES 1024
int krc_track_note_config(struct krc_track *t, const char *namespace, const char *workload_kind,
                          const char *workload_name, const struct krc_track_config_ref *ref,
                          const struct krc_track_config_meta *meta);

/* ---- Numbers (metrics, the benchmark, tests) ---------------------------- */

struct krc_track_stats {
    size_t revisions;     /* revisions known */
    size_t templates;     /* of them, with their pod template's facts (the rest: compacted) */
    size_t workloads;     /* Deployments, StatefulSets, DaemonSets, CronJobs kept */
    size_t nodes;         /* node digests kept */
    size_t strings;       /* interned strings */
    size_t string_bytes;  /* their bytes */
    size_t changes;       /* changes in the ring */
    uint64_t recorded;    /* changes recorded since start */
    uint64_t dropped;     /* changes the ring dropped before a drain */
    uint64_t undecodable; /* objects skipped */
    unsigned synced;      /* bit r: resource r has synced once */
};
void krc_track_get_stats(struct krc_track *t, struct krc_track_stats *ret);

#endif
