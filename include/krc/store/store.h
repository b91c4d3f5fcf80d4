/* Durable restart history and the crash-safe notification outbox: SQLite in
 * the pod (the default), or PostgreSQL shared by many replicas and clusters
 * (krc/store/driver.h; docs/design/store.md, docs/design/postgresql.md).
 *
 * One database file holds every restart report (its identity is pod UID +
 * container + its termination: lastState.terminated.finishedAt, containerID
 * and the restart count, or the count alone when no finishedAt is known; UNIQUE;
 * docs/design/detection-and-identity.md, "Identity") and an outbox of notifications with
 * their delivery state. The pipeline writes a restart and its pending
 * notification in ONE transaction before anything is sent
 * (krc_store_record), marks the notification delivered once Slack accepted
 * it, and at start-up resumes what is still pending (krc_store_pending).
 * Recording the same identity again writes nothing and returns
 * KRC_STORE_EXISTS, so a restart is never stored or alerted twice whatever
 * relists, reconnects or daemon restarts happen.
 *
 * Durability: WAL journal with synchronous=NORMAL by default. A committed
 * transaction survives a process crash or kill -9; on power loss or a kernel
 * crash the last transactions before the next checkpoint may be lost (the
 * file stays consistent). Pass KRC_STORE_SYNC_FULL to fsync every commit.
 *
 * Threads: a struct krc_store is one SQLite connection and must be used by
 * one thread at a time; give every thread that needs the database its own
 * krc_store_open() of the same file. Several connections (threads or
 * processes, e.g. `krc history` while `krc run` writes) work together thanks
 * to WAL (readers never block the writer) and a busy timeout.
 *
 * Errors: the message names the file and what is wrong. Codes:
 *   KRC_ENOTFOUND     read-only open of a file that does not exist; no such id
 *   KRC_EPARSE        not a database, or corrupt (quick_check output quoted)
 *   KRC_ETIMEOUT      locked by another connection longer than the busy timeout
 *   KRC_ETOOBIG       disk or quota full (SQLITE_FULL)
 *   KRC_EIO           cannot open/create, read-only file or directory, I/O error
 *   KRC_EUNSUPPORTED  schema newer than this binary (or older, read-only)
 *   KRC_EINVAL        bad argument
 *   KRC_ENOMEM        out of memory
 *   KRC_EUNSUPPORTED  also: an operation the backend has no use for (the journal
 *                     on PostgreSQL)
 * Only src/store/driver_sqlite.c includes <sqlite3.h>, only src/store/driver_pg.c
 * <libpq-fe.h> (krc/store/driver.h: the SQL layer under these calls). */
#ifndef KRC_STORE_H
#define KRC_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "krc/model/cause.h"
#include "krc/model/diagnosis.h"
#include "krc/model/restart_ident.h"
#include "krc/util/error.h"

/* Schema version this binary writes (migrations up to it are built in).
 * 2: restarts.confidence; 3: restarts.identity replaces UNIQUE (pod_uid,
 * container, restart_count); 4: restarts.gpus and the covering indexes of
 * restart_summary and the workload filter; 5: outbox states withdrawn and
 * superseded; 6: restarts.cluster (issue 17), in the restarts_window index
 * too; 7: outbox.slack_ts renamed outbox.message_ref; 8: restarts.intentional
 * and restarts.accel_seconds_lost (issue 26), in the restarts_window index too;
 * 9: incidents, restarts.incident_id and changes (issue 27, krc/store/incident.h). */
#define KRC_STORE_SCHEMA_VERSION 9
/* krc_store_record(): the identity is already stored, nothing was written. */
#define KRC_STORE_EXISTS 1
/* Busy timeout: how long a connection waits for another one's write lock. */
#define KRC_STORE_BUSY_MS 5000
#define KRC_STORE_DEFAULT_PATH_INCLUSTER "/var/lib/krc/krc.db"

/* krc_store_open() flags */
enum {
    KRC_STORE_READONLY = 1u << 0,    /* never create or write; schema must be current */
    KRC_STORE_QUICK_CHECK = 1u << 1, /* run PRAGMA quick_check (O(file size)) at open */
    KRC_STORE_SYNC_FULL = 1u << 2,   /* synchronous=FULL: fsync on every commit */
    /* PostgreSQL (the daemon's connections): a server that does not answer
     * at open is not fatal (below, KRC_STORE_DEFERRED). Ignored by SQLite. */
    KRC_STORE_DEFER_CONNECT = 1u << 3,
    /* with KRC_STORE_DEFER_CONNECT: do not even try at open, the first call
     * connects (the daemon's further connections once its first one found
     * the server down: no connect_timeout per connection at start-up) */
    KRC_STORE_CONNECT_ON_USE = 1u << 4,
};
/* krc_store_open_with() with KRC_STORE_DEFER_CONNECT: the server did not
 * answer (no response, or starting up / shutting down); *ret is a store all
 * of whose calls fail with KRC_EIO naming the server until one connects
 * (at most one attempt per second, each bounded by connect_timeout), which
 * then creates or migrates the schema. err holds why it could not connect. */
#define KRC_STORE_DEFERRED 3

struct krc_store;
struct krc_store_incident_ref; /* krc/store/incident.h */

/* How a store is opened besides its target. Strings borrowed for the call. */
struct krc_store_options {
    /* The cluster this connection records for (clusterName): written on every
     * restart and outbox row; pending rows, the fence and retention are this
     * cluster's. NULL or "": "" (one unnamed cluster). */
    const char *cluster;
    /* PostgreSQL: a file whose first line is the password (a mounted Secret),
     * read at open and at every reconnection; never logged. NULL: the URL's
     * password, or libpq's own (PGPASSWORD, ~/.pgpass). Ignored by SQLite. */
    const char *password_file;
    /* PostgreSQL: seconds to wait for a connection (0: 5). */
    int connect_timeout_s;
};

/* 1 when `target` is a PostgreSQL URL (postgres:// or postgresql://), else 0
 * (a SQLite file path or ":memory:"). */
int krc_store_is_url(const char *target);

/* Open the store at `target`: a PostgreSQL URL (krc_store_is_url) or a SQLite
 * file. `o` may be NULL (no cluster name, no password file). PostgreSQL:
 * connects (KRC_EIO naming host, port and database when it cannot, never
 * the password), creates or migrates the schema under an advisory lock
 * (READONLY: never; the schema must exist and be current) and keeps the
 * connection, reconnecting on the next call after a lost one. A bad URL, an
 * authentication failure or a newer schema always fail; a server that does
 * not answer fails too unless KRC_STORE_DEFER_CONNECT (KRC_STORE_DEFERRED).
 * Caller frees *ret with krc_store_close(). */
int krc_store_open_with(const char *target, unsigned flags, const struct krc_store_options *o,
                        struct krc_store **ret, struct krc_error *err);

/* Open (or create, unless READONLY) the database at `path`; ":memory:" gives
 * a private in-memory database (tests). Creating makes missing parent
 * directories with mode 0700 and the file with mode 0600, then sets WAL,
 * busy_timeout, foreign_keys, synchronous and applies the migrations up to
 * KRC_STORE_SCHEMA_VERSION. A read-only open of an older schema fails (it
 * cannot migrate) as does any open of a newer one. Caller frees *ret with
 * krc_store_close(). */
int krc_store_open(const char *path, unsigned flags, struct krc_store **ret, struct krc_error *err);
/* Accepts NULL. */
void krc_store_close(struct krc_store *s);
/* The path given to open, or the URL with its password replaced by "****"
 * (borrowed): what logs and errors may show. */
const char *krc_store_path(const struct krc_store *s);
/* "sqlite" or "postgres". */
const char *krc_store_backend_name(const struct krc_store *s);
/* 1 when the database is shared by several replicas (PostgreSQL): a replica
 * must fence and claim before it posts (below). */
int krc_store_shared(const struct krc_store *s);

/* The embedded default: /var/lib/krc/krc.db in a cluster
 * (KUBERNETES_SERVICE_HOST set), else $XDG_STATE_HOME/krc/krc.db (when
 * absolute), else $HOME/.local/state/krc/krc.db. KRC_ETOOBIG when it does not
 * fit `outsz`, KRC_ENOTFOUND without HOME. */
int krc_store_default_path(char *out, size_t outsz, struct krc_error *err);

/* ---- writing ------------------------------------------------------------- */

/* One restart, as recorded. Strings are borrowed for the call; NULL means
 * absent except where marked required. */
struct krc_store_restart {
    const char *pod_uid;   /* required */
    const char *container; /* required */
    int restart_count;
    const char *namespace; /* required */
    const char *pod;       /* required */
    const char *workload_kind;
    const char *workload_name;
    const char *node;
    enum krc_cause cause;
    int has_exit_code; /* 0: exit_code unknown (stored as NULL) */
    int exit_code;
    int signal; /* 0: none */
    const char *reason;
    int64_t started_at;  /* unix seconds, 0: unknown */
    int64_t finished_at; /* lastState.terminated.finishedAt, 0: unknown; part of the identity */
    const char *container_id; /* lastState.terminated.containerID; part of the identity */
    int64_t detected_at;      /* required (> 0) */
    const char *decision;     /* required: krc_policy_decision_name() text */
    const char *summary;
    enum krc_confidence confidence; /* of the diagnosis (stored as its name) */
    const char *message;            /* the alert text as posted (or to be posted) */
    const char *report_json;        /* full diagnostics (krc_report_json_build) */
    long gpus;                      /* GPUs the pod holds (diagnosis.gpus), 0: none */
    int intentional;                /* the diagnosis is intentional (diagnosis.intentional) */
    /* GPU time lost: accelerator device-seconds the container spent not
     * running while holding them since its previous restart, as counted when
     * this one was detected (the restart's accel note); 0: none held */
    int64_t accel_seconds_lost;
    /* its incident (krc/store/incident.h): joined or opened in the same
     * transaction (its ret_* are set); NULL: none (restarts.incident_id NULL) */
    struct krc_store_incident_ref *incident;
};

enum krc_store_kind {
    KRC_STORE_KIND_ALERT = 0, /* a new alert: a thread parent */
    KRC_STORE_KIND_REPLY,     /* a reply in a pod's thread */
    KRC_STORE_KIND_SUMMARY,   /* an alert-storm summary */
    KRC_STORE_KIND_RECOVERED, /* a "recovered" thread reply */
};
#define KRC_STORE_KIND_COUNT 4

enum krc_store_state {
    KRC_STORE_PENDING = 0,
    KRC_STORE_DELIVERED,
    KRC_STORE_FAILED,     /* given up: will not be retried */
    KRC_STORE_WITHDRAWN,  /* never posted: folded into an alert-storm summary (schema 5) */
    KRC_STORE_SUPERSEDED, /* never posted by this replica: the previous leader posted the
                           * restart (schema 5) */
};
#define KRC_STORE_STATE_COUNT 5

/* "alert", "reply", "summary", "recovered" / "pending", "delivered", "failed",
 * "withdrawn", "superseded". */
const char *krc_store_kind_name(enum krc_store_kind k);
const char *krc_store_state_name(enum krc_store_state st);

/* A notification to send. Strings borrowed for the call. */
struct krc_store_outbox {
    enum krc_store_kind kind;
    /* Where it goes, as an opaque key that the caller resolves from the
     * configuration ("webhook:default", "route:2", "api:#ops"): never a
     * webhook URL or token, which must not be written to disk. Required. */
    const char *destination;
    const char *channel;    /* may be NULL */
    const char *thread_key; /* "namespace/pod": finds the thread parent; may be NULL */
    const char *body;       /* required: JSON body to POST */
    const char *fallback;   /* text-only JSON for when Slack refuses the blocks; may be NULL */
    int64_t created_at;     /* unix seconds; 0: krc_clock_now() */
};

/* In ONE transaction, store `rec` and, when `msg` is non-NULL, its pending
 * notification (restart_id set to the new restart). Returns 0, or
 * KRC_STORE_EXISTS when a restart with the same identity (pod_uid,
 * container, finished_at + container_id + restart_count, or restart_count
 * alone when finished_at is 0) is already stored: nothing is written, *ret_restart_id is the
 * existing row and *ret_outbox_id 0. Output pointers may be NULL. */
int krc_store_record(struct krc_store *s, const struct krc_store_restart *rec,
                     const struct krc_store_outbox *msg, int64_t *ret_restart_id,
                     int64_t *ret_outbox_id, struct krc_error *err);
/* krc_store_record with one pending notification per destination (msgs[i]
 * gets ret_outbox_ids[i]; n_msgs may be 0), all in the same transaction. */
int krc_store_record_many(struct krc_store *s, const struct krc_store_restart *rec,
                          const struct krc_store_outbox *msgs, size_t n_msgs,
                          int64_t *ret_restart_id, int64_t *ret_outbox_ids, struct krc_error *err);

/* Is this restart already recorded (by its identity, model/restart_ident.h,
 * as the identity column holds it)? 1 with *ret_id when it is, 0 when not,
 * < 0 on a database error; KRC_EINVAL without uid or container. */
int krc_store_find_restart(struct krc_store *s, const struct krc_restart_ident *id, int64_t *ret_id,
                           struct krc_error *err);

/* Change the decision (and the message text when non-NULL) of a stored
 * restart, e.g. when a storm began after it was recorded. KRC_ENOTFOUND. */
int krc_store_set_decision(struct krc_store *s, int64_t restart_id, const char *decision,
                           const char *message, struct krc_error *err);

/* Amend a stored restart whose diagnosis changed after it was recorded (a
 * device the kubelet reported Unhealthy after the restart,
 * detect/dev_health.h): its cause, summary and confidence, and its report
 * JSON when non-NULL, in one transaction. KRC_ENOTFOUND. */
int krc_store_amend(struct krc_store *s, int64_t restart_id, const char *cause, const char *summary,
                    const char *confidence, const char *report_json, struct krc_error *err);

/* A notification tied to a restart (restart_id > 0) or to none (0: storm
 * summaries). KRC_ENOTFOUND when restart_id names no restart. */
int krc_store_add_outbox(struct krc_store *s, int64_t restart_id,
                         const struct krc_store_outbox *msg, int64_t *ret_outbox_id,
                         struct krc_error *err);

/* The destination accepted outbox row `id`: state delivered, delivered_at
 * now, message_ref (may be NULL: webhooks return none). KRC_ENOTFOUND. */
int krc_store_mark_delivered(struct krc_store *s, int64_t id, const char *message_ref,
                             struct krc_error *err);
/* Slack accepted outbox row `id` but krc_store_mark_delivered() failed
 * (database locked past the busy timeout, disk full): append the fact to the
 * delivery journal, a plain file next to the database (PATH-delivered, mode
 * 0600), with one short O_APPEND write that needs no database lock.
 * krc_store_pending() applies the journal before it lists anything, so a
 * restart does not post the message again. KRC_EINVAL for ":memory:",
 * KRC_ETOOBIG when the disk is full, KRC_EIO. */
int krc_store_journal_delivered(struct krc_store *s, int64_t id, const char *message_ref,
                                struct krc_error *err);
/* Remove the journal: call once every fact in it reached the database. */
int krc_store_journal_clear(struct krc_store *s, struct krc_error *err);

/* A delivery attempt failed: attempts + 1, last_error (one line, may be
 * NULL); `final` gives up (state failed). KRC_ENOTFOUND. */
int krc_store_mark_attempt(struct krc_store *s, int64_t id, const char *error_text, int final,
                           struct krc_error *err);
/* A pending outbox row that will never be posted because its restart was
 * grouped into an alert-storm summary: state withdrawn, attempts unchanged
 * (nothing was attempted). KRC_ENOTFOUND when no pending row has that id. */
int krc_store_mark_withdrawn(struct krc_store *s, int64_t id, struct krc_error *err);

/* A pending row that a new leader found already posted by the previous
 * leader (the hand-over list): state superseded, attempts unchanged, not a
 * failure. KRC_ENOTFOUND when the row is not pending. */
int krc_store_mark_superseded(struct krc_store *s, int64_t id, struct krc_error *err);

/* ---- fencing (a shared outbox) ---------------------------------------------------
 * With a shared database only the current leader may post, and a deposed
 * leader must not post a row that the new leader owns. The fencing token is
 * the Lease's spec.leaseTransitions as this replica acquired it (0 without
 * leader election); it only grows. SQLite (one replica's own file): both
 * calls return 0 and do nothing. */

/* krc_store_fence() / krc_store_claim(): a newer leader owns it; do not post. */
#define KRC_STORE_FENCED 2

/* This replica leads its cluster with `token`: raise the cluster's fence to
 * it. 0, or KRC_STORE_FENCED when the stored fence is already higher. */
int krc_store_fence(struct krc_store *s, int64_t token, struct krc_error *err);

/* Before posting outbox row `id`: claim it with `token` (SELECT ... FOR
 * UPDATE SKIP LOCKED, then the claim is written with the token). 0: claimed,
 * post it. KRC_STORE_FENCED: the row is no longer pending, is locked or
 * claimed by another replica with a newer token, or the cluster's fence is
 * newer than `token`: do not post it. */
int krc_store_claim(struct krc_store *s, int64_t id, int64_t token, struct krc_error *err);

/* ---- reading --------------------------------------------------------------- */

/* An outbox row. Strings are borrowed (valid during the callback) or owned
 * by the struct krc_store_entry that holds it. */
struct krc_store_message {
    int64_t id;
    int64_t restart_id; /* 0: none */
    enum krc_store_kind kind;
    const char *destination;
    const char *channel;
    const char *thread_key;
    const char *body;
    const char *fallback;
    enum krc_store_state state;
    int attempts;
    const char *last_error;
    int64_t created_at;
    int64_t updated_at;
    int64_t delivered_at; /* 0: not delivered */
    /* the delivered message's reference: Slack's ts, another destination's id;
     * NULL when it returned none (webhooks) */
    const char *message_ref;
};

/* Callbacks return 0 to continue; any other value stops the iteration and
 * is returned by the iterating function. */
typedef int (*krc_store_message_fn)(const struct krc_store_message *m, void *ud);

/* Every pending outbox row (of the store's cluster), oldest first (start-up
 * resume), after applying
 * the delivery journal (rows it names are marked delivered and the file is
 * removed; when that fails nothing is listed and the error returned). The callback
 * may call krc_store_mark_*() on the same store: rows are fetched one at a
 * time and no statement is active during the callback. */
int krc_store_pending(struct krc_store *s, krc_store_message_fn fn, void *ud,
                      struct krc_error *err);

/* The message_ref (Slack's ts) and channel of the latest delivered alert for thread_key,
 * for Web API thread replies across daemon restarts. *ret_ts (and
 * *ret_channel when ret_channel is non-NULL) are set to owned strings (free
 * with krc_free), or to NULL when there is none. */
int krc_store_thread_ts(struct krc_store *s, const char *thread_key, char **ret_ts,
                        char **ret_channel, struct krc_error *err);

/* Summary of a restart (no JSON, no message text). */
struct krc_store_row {
    int64_t id;
    const char *cluster; /* the cluster that recorded it ("" when unnamed) */
    const char *pod_uid;
    const char *namespace;
    const char *pod;
    const char *container;
    int restart_count;
    const char *workload_kind;
    const char *workload_name;
    const char *node;
    const char *cause;
    int has_exit_code;
    int exit_code;
    int signal;
    const char *reason;
    int64_t started_at;
    int64_t finished_at;
    int64_t detected_at;
    const char *decision;
    const char *summary;
    /* latest outbox row of this restart: delivery NULL when it has none */
    const char *delivery; /* "pending", "delivered", "failed", "withdrawn", "superseded" */
    int attempts;
    const char *confidence; /* "low", "medium", "high"; NULL: recorded before schema 2 */
    const char *identity;   /* the restart's identity as stored (schema 3) */
    int64_t incident_id;    /* its incident (krc/store/incident.h); 0: none */
};

/* The restart's identity of a row (its pod_uid, container and count, and the
 * finishedAt and containerID of its stored identity,
 * "t<finishedAt>/<containerID>/<count>" or "c<count>"): 1, or 0 with *ret
 * empty when the row has no pod_uid or container. */
int krc_store_row_ident(const struct krc_store_row *row, struct krc_restart_ident *ret);

typedef int (*krc_store_row_fn)(const struct krc_store_row *row, void *ud);

struct krc_store_filter {
    const char *cluster;   /* exact; NULL: every cluster */
    const char *namespace; /* exact; NULL: any */
    const char *pod;       /* name prefix (exact with pod_exact); NULL: any */
    const char *cause;     /* cause code; NULL: any */
    int64_t since;         /* detected_at >= since; 0: any */
    long limit;            /* <= 0: no limit */
    int pod_exact;         /* pod is the exact name, not a prefix */
    const char *workload;  /* exact workload name; NULL: any */
    /* keyset page: only rows after (older than) this one in the newest-first
     * order, i.e. detected_at < before_at, or == before_at and id < before_id;
     * before_id 0: from the newest */
    int64_t before_at;
    int64_t before_id;
};

/* Matching restarts newest first (detected_at, then id), one callback per
 * row with borrowed strings. */
int krc_store_list(struct krc_store *s, const struct krc_store_filter *f, krc_store_row_fn fn,
                   void *ud, struct krc_error *err);

/* Everything stored about one restart. Strings are owned by the entry. */
struct krc_store_entry {
    struct krc_store_row row;
    const char *message;                /* may be NULL */
    const char *report_json;            /* may be NULL */
    struct krc_store_message *messages; /* its outbox rows, oldest first */
    size_t n_messages;
    /* private storage of the strings above */
    char **strings_;
    size_t n_strings_;
};

/* KRC_ENOTFOUND when no restart has this id. Caller frees *ret with
 * krc_store_entry_free (accepts NULL). */
int krc_store_get(struct krc_store *s, int64_t id, struct krc_store_entry **ret,
                  struct krc_error *err);
void krc_store_entry_free(struct krc_store_entry *e);

/* One restart of a window, as krc_store_window reads it (strings borrowed
 * for the callback; workload_kind, workload_name and node may be NULL). */
struct krc_store_window_row {
    int64_t id;
    const char *cluster;
    int64_t detected_at;
    const char *namespace;
    const char *workload_kind;
    const char *workload_name;
    const char *pod;
    const char *pod_uid;
    const char *cause;
    const char *node;
    long gpus;       /* GPUs the pod held (the diagnosis), 0: none */
    int intentional; /* the diagnosis was intentional (0 for restarts recorded before schema 8) */
    int64_t accel_seconds_lost; /* krc_store_restart.accel_seconds_lost */
};

typedef int (*krc_store_window_fn)(const struct krc_store_window_row *row, void *ud);

/* Every restart detected at or after `since` (of `cluster` only, when not
 * NULL), in no particular order, read from one covering index (no table
 * rows); a non-zero return of fn stops the scan and is returned. */
int krc_store_window(struct krc_store *s, int64_t since, const char *cluster,
                     krc_store_window_fn fn, void *ud, struct krc_error *err);

/* One entry of a summary list (src/store/summary.c). */
struct krc_store_group_row {
    /* workloads: namespace, kind ("Pod" when none), name (the pod's name when
     * it has no workload); causes: the cause code; nodes: the node ("" when
     * unknown); GPU pods: namespace, pod. Unused ones NULL. */
    const char *key[3];
    int64_t restarts;
    int64_t pods;          /* distinct pod UIDs */
    int64_t last_at;       /* latest detected_at */
    const char *top_cause; /* workloads: the most frequent cause (ties: by name) */
    long gpus;             /* GPU pods: GPUs of the pod's latest restart */
};

/* The restarts detected at or after `since`, summarised in one pass over
 * krc_store_window. Every list is sorted by most restarts, then the latest,
 * then the key, and holds at most `limit` entries (<= 0: all); GPU pods are
 * the pods with at least 2 restarts whose latest restart held GPUs, most
 * GPUs first. `restarts`, `gpus_held` and `intentional` (the restarts whose
 * diagnosis was intentional, paged or not) count everything, listed or not. */
struct krc_store_summary {
    int64_t restarts;
    long gpus_held;
    int64_t intentional;
    int64_t accel_seconds_lost; /* the sum of the restarts' accel_seconds_lost */
    struct krc_store_group_row *workloads, *causes, *nodes, *gpu_pods;
    size_t n_workloads, n_causes, n_nodes, n_gpu_pods;
    void *mem_; /* the strings */
};

/* *ret is freed with krc_store_summary_free (accepts NULL). */
int krc_store_summarize(struct krc_store *s, int64_t since, const char *cluster, long limit,
                        struct krc_store_summary **ret, struct krc_error *err);
/* krc_store_summarize of the rows keep() returns non-zero for (the others
 * are not counted anywhere); keep NULL: every row. The MCP tools leave out
 * what is outside their scope so. */
int krc_store_summarize_where(struct krc_store *s, int64_t since, const char *cluster,
                              krc_store_window_fn keep, void *keep_ud, long limit,
                              struct krc_store_summary **ret, struct krc_error *err);
void krc_store_summary_free(struct krc_store_summary *sum);

/* ---- retention and health -------------------------------------------------- */

/* Delete restarts detected before now - max_age_seconds (0: no age limit)
 * and the oldest beyond max_rows (0: no count limit), oldest first, `batch`
 * rows per short transaction (so other connections wait at most one batch),
 * together with their delivered or failed outbox rows. A restart with a
 * pending notification is never deleted. Delivered/failed outbox rows of no
 * restart (summaries) older than max_age go too. *ret_deleted (may be NULL)
 * counts deleted restarts. Only the store's cluster's rows are considered
 * (SQLite: the whole file, one replica's own, rows of any cluster name);
 * on PostgreSQL one replica prunes at a time (an advisory lock; a replica
 * that finds it taken prunes nothing this round and returns 0). */
int krc_store_prune(struct krc_store *s, int64_t max_age_seconds, int64_t max_rows, int batch,
                    int64_t *ret_deleted, struct krc_error *err);

/* Free the pages the connection caches (they are read again when needed),
 * e.g. when its thread goes idle. Accepts NULL. */
void krc_store_release_memory(struct krc_store *s);

struct krc_store_stats {
    int64_t restarts;
    int64_t pending;
    int64_t delivered;
    int64_t failed;
    int64_t withdrawn;          /* grouped into a storm summary, never posted */
    int64_t superseded;         /* posted by the previous leader, not by this replica */
    int64_t oldest_detected_at; /* 0: empty */
    int64_t db_bytes;           /* page_count * page_size */
    int64_t wal_bytes;          /* size of the -wal file, 0 when none */
};

/* Counts of the store's cluster (SQLite: of the whole file). PostgreSQL: db_bytes is the database's
 * size (pg_database_size), wal_bytes 0. */
int krc_store_stats(struct krc_store *s, struct krc_store_stats *ret, struct krc_error *err);

/* incidents and changes (issue 27) */
#include "krc/store/incident.h"

#endif
