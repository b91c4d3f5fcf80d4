/* The store's SQL layer: one small driver interface under the history and
 * outbox queries, which are written once above it (src/store/history.c,
 * outbox.c, schema.c). A driver is a connection to one kind of database:
 *   postgres://... or postgresql://...  -> driver_pg.c      (libpq; shared)
 *   anything else (a file, ":memory:")   -> driver_sqlite.c  (SQLite; one replica)
 * Each driver is the only file that includes its library's header. It
 * prepares, binds, steps and reads statements, runs transactions, maps its
 * library's errors to krc_error codes, and says how its dialect differs:
 * placeholders (the queries are written with $1..$n; SQLite reads ?1..?n),
 * the fragments of krc_sql_frag (the cluster scope, the JSON function, the
 * index hint), the schema history (schema.c), the advisory lock of
 * retention and whether a restart and its notifications go in one
 * statement (data-modifying WITH) or in one transaction.
 *
 * Only files of src/store/ and the store's tests include this header. */
#ifndef KRC_STORE_DRIVER_H
#define KRC_STORE_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "krc/store/store.h"
#include "krc/util/buf.h"

/* A driver's connection and statement (their own structs, private to their file). */
struct krc_sql;
struct krc_sql_stmt;

enum krc_sql_dialect { KRC_SQL_SQLITE = 0, KRC_SQL_PG = 1 };
#define KRC_SQL_DIALECTS 2

/* The statements of the SQL layer (sql.c holds their text). A driver may
 * keep a statement prepared per id below KRC_SQL_CACHED; KRC_SQL_DYNAMIC is a
 * text assembled for one call (the list's filters). */
enum krc_sql_id {
    KRC_SQL_INSERT_RESTART,
    KRC_SQL_FIND_RESTART,
    KRC_SQL_RESTART_EXISTS,
    KRC_SQL_INSERT_REPORT,
    KRC_SQL_SET_DECISION,
    KRC_SQL_SET_MESSAGE,
    KRC_SQL_AMEND_RESTART,
    KRC_SQL_SET_REPORT_JSON,
    KRC_SQL_INSERT_OUTBOX,
    KRC_SQL_MARK_DELIVERED,
    KRC_SQL_MARK_ATTEMPT,
    KRC_SQL_MARK_WITHDRAWN,
    KRC_SQL_MARK_SUPERSEDED,
    KRC_SQL_JOURNAL_APPLY,
    KRC_SQL_PENDING_NEXT,
    KRC_SQL_THREAD_REF,
    KRC_SQL_GET_RESTART,
    KRC_SQL_GET_MESSAGES,
    KRC_SQL_PRUNE_AGE,
    KRC_SQL_PRUNE_ORPHANS,
    KRC_SQL_PRUNE_OLDEST,
    KRC_SQL_COUNT_RESTARTS,
    KRC_SQL_STATS_OLDEST,
    KRC_SQL_STATS_OUTBOX,
    KRC_SQL_DB_BYTES,
    KRC_SQL_FENCE,
    KRC_SQL_CLAIM,
    KRC_SQL_WINDOW,
    KRC_SQL_WINDOW_CLUSTER,
    /* incidents and changes (incident.c) */
    KRC_SQL_INCIDENT_JOIN,
    KRC_SQL_INCIDENT_OPEN,
    KRC_SQL_INCIDENT_RECORD, /* one_statement_record drivers: join or open, and the restart's id */
    KRC_SQL_SET_INCIDENT,
    KRC_SQL_RESTART_INCIDENT,
    KRC_SQL_INCIDENTS_OPEN,
    KRC_SQL_INCIDENT_END,
    KRC_SQL_INCIDENT_EXISTS,
    KRC_SQL_GET_INCIDENT,
    KRC_SQL_INCIDENT_MESSAGES,
    KRC_SQL_INCIDENT_MESSAGE_COUNT,
    KRC_SQL_INSERT_CHANGE,
    KRC_SQL_PRUNE_INCIDENTS,
    KRC_SQL_PRUNE_CHANGES,
    KRC_SQL_N_FIXED,
    /* the restart, its report and n notifications in one statement
     * (record_one, drivers with one_statement_record): id + n */
    KRC_SQL_RECORD_ONE = KRC_SQL_N_FIXED,
    KRC_SQL_CACHED = KRC_SQL_RECORD_ONE + 17,
    KRC_SQL_DYNAMIC = -1,
};
/* record_one takes at most this many notifications (ids up to KRC_SQL_CACHED) */
#define KRC_SQL_RECORD_ONE_MAX 16

/* prepare flags */
enum {
    /* a hot statement worth preparing on the server once per connection
     * (PostgreSQL: a named statement; a pooler that loses it turns this off) */
    KRC_SQL_PREPARE_SERVER = 1u << 0,
};

/* The dialect's pieces of the queries, written {name} in their text. */
enum krc_sql_frag {
    KRC_SQL_F_SCOPE,       /* {scope}: "cluster = $1 AND " or "" (SQLite: one replica's file) */
    KRC_SQL_F_RSCOPE,      /* {rscope}: the same of restarts r */
    KRC_SQL_F_WHERE_SCOPE, /* {where_scope}: " WHERE cluster = $1" or "" */
    KRC_SQL_F_OUTBOX_COL,  /* {ocol}: the outbox's cluster column ("cluster, "), if it has one */
    KRC_SQL_F_OUTBOX_VAL,  /* {oval}: its value ("$1, ") */
    KRC_SQL_F_LOG_BYTES,   /* {log_bytes}: $.log.bytes of p.report_json, NULL if not JSON */
    KRC_SQL_F_WINDOW_HINT, /* {window_hint}: the window's covering index, when it must be named */
    KRC_SQL_F_DB_BYTES,    /* {db_bytes}: a statement returning the database's size in bytes */
    /* {returning_id}: " RETURNING id" where an INSERT says its row so (PostgreSQL); SQLite's
     * RETURNING costs a temporary table per row: last_insert_id instead */
    KRC_SQL_F_RETURNING_ID,
    KRC_SQL_N_FRAGS,
};

/* The statements that end a transaction, in both dialects. */
#define KRC_SQL_COMMIT "COMMIT"
#define KRC_SQL_ROLLBACK "ROLLBACK"
/* SQLite: set on every connection, and again after a migration that
 * turned it off around a table rebuild (schema.c). */
#define KRC_SQL_FOREIGN_KEYS_ON "PRAGMA foreign_keys = ON"

struct krc_sql_driver {
    const char *name; /* "sqlite", "postgres" */
    enum krc_sql_dialect dialect;
    /* 1: one database serves many replicas and clusters: the outbox is shared,
     * so a replica must claim a row (fence and claim) before posting it */
    int shared;
    /* 1: writes the delivery journal next to its file (krc_store_journal_*) */
    int journal;
    /* 1: data-modifying WITH: a restart and its notifications in one statement */
    int one_statement_record;
    const char *const *frags; /* [KRC_SQL_N_FRAGS] */

    /* Connect s->target into s->c (s->display, s->flags, s->cluster are set),
     * and bring the schema up to date with krc_store_migrate(s). 0, or
     * KRC_STORE_DEFERRED with s->c set (PostgreSQL, KRC_STORE_DEFER_CONNECT:
     * the driver migrates when it first connects). */
    int (*open)(struct krc_store *s, const struct krc_store_options *o, struct krc_error *err);
    void (*close)(struct krc_sql *c);

    /* A statement ready to bind: `sql` is the text for this dialect (placeholders
     * and fragments already replaced), `id` an enum krc_sql_id. */
    int (*prepare)(struct krc_sql *c, int id, const char *sql, unsigned flags,
                   struct krc_sql_stmt **ret, struct krc_error *err);
    /* Parameters count from 1; a NULL text binds NULL. A parameter that the
     * statement does not use is ignored. */
    void (*bind_text)(struct krc_sql_stmt *st, int i, const char *v);
    void (*bind_int)(struct krc_sql_stmt *st, int i, int64_t v);
    /* 1: a row, 0: done, < 0: error (KRC code; `what` names the operation). */
    int (*step)(struct krc_sql_stmt *st, const char *what, struct krc_error *err);
    int64_t (*col_int)(struct krc_sql_stmt *st, int i); /* NULL: 0 */
    const char *(*col_text)(struct krc_sql_stmt *st,
                            int i); /* NULL: NULL; valid until the next step */
    int (*col_null)(struct krc_sql_stmt *st, int i);
    int64_t (*changes)(struct krc_sql_stmt *st); /* rows the done statement changed */
    void (*done)(struct krc_sql_stmt *st);       /* reset or free it; accepts NULL */

    /* A script of statements without parameters (the migrations). */
    int (*exec)(struct krc_sql *c, const char *sql, const char *what, struct krc_error *err);
    int (*begin)(struct krc_sql *c, struct krc_error *err);
    int (*commit)(struct krc_sql *c, struct krc_error *err);
    void (*rollback)(struct krc_sql *c); /* when a transaction is open */
    /* 1 when the last failure was a serialization failure or deadlock (worth one retry) */
    int (*retryable)(struct krc_sql *c);

    /* Retention's lock: 1 taken, 0 another replica holds it, < 0 error. NULL: one writer. */
    int (*prune_lock)(struct krc_sql *c, int take, struct krc_error *err);
    void (*release_memory)(struct krc_sql *c); /* NULL: nothing cached */
    int64_t (*wal_bytes)(struct krc_sql *c);   /* NULL: none */
    /* the row the last INSERT made, for {returning_id} empty; NULL: RETURNING */
    int64_t (*last_insert_id)(struct krc_sql *c);
};

extern const struct krc_sql_driver krc_sql_sqlite;
extern const struct krc_sql_driver krc_sql_pg;

struct krc_store {
    const struct krc_sql_driver *drv;
    struct krc_sql *c;
    char *target;  /* the path or URL as given */
    char *display; /* the path, or the URL without its passwords */
    char *cluster; /* options.cluster, "" when none: written on every row */
    unsigned flags;
};

/* store.c: open with the display given (the store's tests name it). */
int krc_store_open_as(const char *target, const char *display, unsigned flags,
                      const struct krc_store_options *o, struct krc_store **ret,
                      struct krc_error *err);

/* schema.c: create or migrate the schema on s->c (called by the drivers
 * when they connect). */
int krc_store_migrate(struct krc_store *s, struct krc_error *err);

/* sql.c: statement `id`'s text for s's dialect, prepared. */
int krc_sql_prepare(struct krc_store *s, int id, struct krc_sql_stmt **ret, struct krc_error *err);
/* The same with prepare flags (KRC_SQL_PREPARE_SERVER). */
int krc_sql_prepare_as(struct krc_store *s, int id, unsigned flags, struct krc_sql_stmt **ret,
                       struct krc_error *err);
/* A text assembled for one call (KRC_SQL_DYNAMIC unless id names it), with
 * {fragments} and $n, prepared. */
int krc_sql_prepare_text(struct krc_store *s, int id, const char *tmpl, unsigned flags,
                         struct krc_sql_stmt **ret, struct krc_error *err);
/* A query assembled from the filters in use: each condition takes the next
 * parameter number and keeps its value, so that the text and the binding
 * can never disagree on the order. The values are borrowed: they must live
 * until krc_sql_query_prepare. */
#define KRC_SQL_QUERY_PARAMS 80
struct krc_sql_query {
    struct krc_buf sql;
    enum { KRC_SQL_QUERY_NOMEM = 1, KRC_SQL_QUERY_TOO_MANY } failed; /* 0: not failed */
    int n;
    struct {
        const char *text;
        int64_t i;
        int is_text;
    } p[KRC_SQL_QUERY_PARAMS];
};
/* Start with `head` (with {fragments} and no parameter). */
void krc_sql_query_init(struct krc_sql_query *q, const char *head);
/* Append `text`, which takes no parameter. */
void krc_sql_query_add(struct krc_sql_query *q, const char *text);
/* Append `before` then the next parameter ($n), bound to v. */
void krc_sql_query_text(struct krc_sql_query *q, const char *before, const char *v);
void krc_sql_query_int(struct krc_sql_query *q, const char *before, int64_t v);
/* Prepare the text and bind its parameters in order; q's text is released
 * whatever the result. */
int krc_sql_query_prepare(struct krc_store *s, struct krc_sql_query *q, struct krc_sql_stmt **ret,
                          const char *what, struct krc_error *err);
/* tmpl for `dialect` (owned, krc_free; NULL when out of memory or a fragment is unknown). */
char *krc_sql_expand(const struct krc_sql_driver *drv, const char *tmpl);
/* Run a statement that returns no rows and done it; *ret_changes when non-NULL. */
int krc_sql_run(struct krc_store *s, struct krc_sql_stmt *st, const char *what,
                int64_t *ret_changes, struct krc_error *err);
/* An INSERT with {returning_id}: the new row's id into *ret, 0 when it
 * inserted nothing (ON CONFLICT DO NOTHING); done it. */
int krc_sql_insert(struct krc_store *s, struct krc_sql_stmt *st, int64_t *ret, const char *what,
                   struct krc_error *err);
/* Its first row's first column (0 when no row or NULL), and done it. */
int krc_sql_int(struct krc_store *s, struct krc_sql_stmt *st, int64_t *ret, const char *what,
                struct krc_error *err);
/* A restart's identity as stored ('t<finishedAt>/<containerID>/<count>' or
 * 'c<count>', owned; NULL: out of memory). */
char *krc_sql_identity(int64_t finished_at, const char *container_id, int restart_count);

#define ST_TEXT(s, st, i, v) ((s)->drv->bind_text((st), (i), (v)))
#define ST_INT(s, st, i, v) ((s)->drv->bind_int((st), (i), (int64_t)(v)))
#define COL_INT(s, st, i) ((s)->drv->col_int((st), (i)))
#define COL_TEXT(s, st, i) ((s)->drv->col_text((st), (i)))

/* Owned copies of column strings, released together. */
struct krc_sql_strings {
    char **items;
    size_t n;
    size_t cap;
    int failed;
};
/* A copy of v kept in k; v itself when k is NULL. */
const char *krc_sql_keep(struct krc_sql_strings *k, const char *v);
void krc_sql_strings_cleanup(struct krc_sql_strings *k);

/* A stored kind or state name back to its value (store.c): an unknown or
 * NULL name gives KRC_STORE_KIND_ALERT / KRC_STORE_PENDING. */
enum krc_store_kind krc_store_kind_parse(const char *name);
enum krc_store_state krc_store_state_parse(const char *name);

/* outbox.c: the checks of a notification before it is queued. */
int krc_store_check_outbox(const struct krc_store_outbox *m, struct krc_error *err);
/* history.c: one notification row ($1 the cluster, $2 the restart). */
int krc_store_insert_outbox(struct krc_store *s, int64_t restart_id,
                            const struct krc_store_outbox *m, int64_t *ret_id,
                            struct krc_error *err);

/* outbox.c: an OUTBOX_COLS row (strings copied into k, or borrowed when k is NULL). */
void krc_sql_read_message(struct krc_store *s, struct krc_sql_stmt *st, struct krc_store_message *m,
                          struct krc_sql_strings *k);
/* incident.c: join or open rec->incident for the restart `restart_id` just
 * inserted, inside record's transaction (its ret_* set). */
int krc_store_incident_record(struct krc_store *s, const struct krc_store_restart *rec,
                              int64_t restart_id, struct krc_error *err);
/* incident.c: a restart already recorded: rec->incident's ret_* say its
 * incident (0 when none). */
int krc_store_incident_of(struct krc_store *s, const struct krc_store_restart *rec,
                          int64_t restart_id, struct krc_error *err);

/* outbox.c: apply the delivery journal (drivers with `journal`). */
int krc_store_journal_apply(struct krc_store *s, struct krc_error *err);

/* The columns the readers map (sql.c, history.c, outbox.c). A restart's
 * delivery in the history is its latest message's, the implicit Kubernetes
 * Event's (outbox destination "dest:kubernetes-event", alert/sender.h) only
 * when it has no other: that column says whether someone was told. */
#define EVENT_LAST "ORDER BY o.destination = 'dest:kubernetes-event', o.id DESC LIMIT 1"
#define RESTART_COLS                                                                               \
    "r.id, r.pod_uid, r.namespace, r.pod, r.container, r.restart_count, r.workload_kind, "         \
    "r.workload_name, r.node, r.cause, r.exit_code, r.signal, r.reason, r.started_at, "            \
    "r.finished_at, r.detected_at, r.decision, r.summary, "                                        \
    "(SELECT o.state FROM outbox o WHERE o.restart_id = r.id " EVENT_LAST "), "                    \
    "(SELECT o.attempts FROM outbox o WHERE o.restart_id = r.id " EVENT_LAST "), "                 \
    "r.confidence, r.identity, r.cluster, r.incident_id"
#define N_RESTART_COLS 24
/* A restart ($1 the cluster .. $21 its identity, $22 intentional, $23
 * accel_seconds_lost); nothing
 * when the identity is stored. history.c runs it alone and inside
 * record_one's WITH. */
#define KRC_SQL_INSERT_RESTART_TEXT                                                                \
    "INSERT INTO restarts (cluster, pod_uid, container, restart_count, namespace, pod, "           \
    "workload_kind, workload_name, node, cause, exit_code, signal, reason, started_at, "           \
    "finished_at, detected_at, decision, summary, confidence, gpus, identity, intentional, "       \
    "accel_seconds_lost) "                                                                         \
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, "    \
    "$19, $20, $21, $22, $23) ON CONFLICT DO NOTHING{returning_id}"
/* An incident row as incident.c reads it. */
#define INCIDENT_COLS                                                                              \
    "id, namespace, workload_kind, workload_name, container, cause, thread_key, restarts, "        \
    "first_restart_id, latest_restart_id, first_at, last_at, ended_at, last_reply_at, "            \
    "last_update_at, told_restarts, cluster"
#define OUTBOX_COLS                                                                                \
    "id, restart_id, kind, destination, channel, thread_key, body, fallback, state, attempts, "    \
    "last_error, created_at, updated_at, delivered_at, message_ref"

#endif
