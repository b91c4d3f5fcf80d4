/* The SQLite backend of the store (krc/store/backend.h): restart history,
 * notification outbox and the delivery journal in one file of one replica.
 * The only file that sees SQLite. All its SQL is here, in the statement
 * table and the migrations below; statements are prepared once per
 * connection (SQLITE_PREPARE_PERSISTENT) on first use and reset after every
 * use. store.c checks the arguments before it calls any of these. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/store/backend.h"
#include "krc/store/store.h"

/* ---- schema ------------------------------------------------------------------ */

struct krc_store_be;
static int migrate_identity(struct krc_store_be *s, struct krc_error *err);

/* A restart's identity in SQL, from the finishedAt, containerID and
 * restartCount of its last termination (docs/architecture.md, "Restart
 * identity"): 't<finishedAt>/<containerID>/<restartCount>' when the
 * termination time is known, else 'c<restartCount>', the only thing known.
 * The count alone is not the identity: it can go down and climb back. */
/* clang-format off */
#define IDENTITY_SQL(fin, cid, count)                                                              \
    "(CASE WHEN " fin " > 0"                                                                       \
    " THEN 't' || " fin " || '/' || coalesce(" cid ", '') || '/' || " count                        \
    " ELSE 'c' || " count " END)"
/* clang-format on */

/* What the sender wrote into last_error of a withdrawn alert up to schema 4
 * (state 'failed', one attempt); migration 4 -> 5 turns those rows into
 * state 'withdrawn'. */
#define WITHDRAWN_V4_ERROR "withdrawn: grouped into an alert-storm summary"
/* ... and of a row a new leader found already posted by the previous one
 * (state 'failed', one attempt): state 'superseded' since schema 5. */
#define SUPERSEDED_V4_ERROR "superseded: the previous leader posted this restart"

/* migrations[v] takes a database from schema version v to v + 1: SQL, or a
 * function for what SQL alone cannot say. Both run inside the migration's
 * transaction, with foreign keys off (a table rebuild must not cascade).
 * Add a new entry (never edit an old one) and raise
 * KRC_STORE_SCHEMA_VERSION. */
static const struct migration {
    const char *sql;
    int (*run)(struct krc_store_be *s, struct krc_error *err);
} migrations[] = {
    /* 0 -> 1 */
    {"CREATE TABLE restarts ("
     "  id INTEGER PRIMARY KEY,"
     "  pod_uid TEXT NOT NULL,"
     "  container TEXT NOT NULL,"
     "  restart_count INTEGER NOT NULL,"
     "  namespace TEXT NOT NULL,"
     "  pod TEXT NOT NULL,"
     "  workload_kind TEXT,"
     "  workload_name TEXT,"
     "  node TEXT,"
     "  cause TEXT NOT NULL,"
     "  exit_code INTEGER,"
     "  signal INTEGER NOT NULL DEFAULT 0,"
     "  reason TEXT,"
     "  started_at INTEGER NOT NULL DEFAULT 0,"
     "  finished_at INTEGER NOT NULL DEFAULT 0,"
     "  detected_at INTEGER NOT NULL,"
     "  decision TEXT NOT NULL,"
     "  summary TEXT,"
     "  UNIQUE (pod_uid, container, restart_count)"
     ");"
     "CREATE INDEX restarts_detected ON restarts (detected_at);"
     "CREATE INDEX restarts_namespace ON restarts (namespace, detected_at);"
     "CREATE INDEX restarts_cause ON restarts (cause, detected_at);"
     "CREATE INDEX restarts_pod ON restarts (pod, detected_at);"
     /* the large texts live apart so that scans of restarts stay small */
     "CREATE TABLE reports ("
     "  restart_id INTEGER PRIMARY KEY REFERENCES restarts (id) ON DELETE CASCADE,"
     "  message TEXT,"
     "  report_json TEXT"
     ");"
     "CREATE TABLE outbox ("
     "  id INTEGER PRIMARY KEY,"
     "  restart_id INTEGER REFERENCES restarts (id) ON DELETE CASCADE,"
     "  kind TEXT NOT NULL CHECK (kind IN ('alert', 'reply', 'summary', 'recovered')),"
     "  destination TEXT NOT NULL,"
     "  channel TEXT,"
     "  thread_key TEXT,"
     "  body TEXT NOT NULL,"
     "  fallback TEXT,"
     "  state TEXT NOT NULL DEFAULT 'pending'"
     "    CHECK (state IN ('pending', 'delivered', 'failed')),"
     "  attempts INTEGER NOT NULL DEFAULT 0,"
     "  last_error TEXT,"
     "  created_at INTEGER NOT NULL,"
     "  updated_at INTEGER NOT NULL,"
     "  delivered_at INTEGER,"
     "  slack_ts TEXT"
     ");"
     "CREATE INDEX outbox_restart ON outbox (restart_id);"
     "CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending';"
     "CREATE INDEX outbox_thread ON outbox (thread_key, delivered_at)"
     "  WHERE slack_ts IS NOT NULL;",
     NULL},
    /* 1 -> 2: how sure the diagnosis was (issue 11); NULL for restarts
     * recorded before */
    {"ALTER TABLE restarts ADD COLUMN confidence TEXT;", NULL},
    /* 2 -> 3: a restart is identified by its termination, not by its
     * restartCount. The UNIQUE (pod_uid, container, restart_count)
     * constraint goes, so the table is rebuilt. */
    {NULL, migrate_identity},
    /* 3 -> 4 (issue 14: tools/call within 100 ms on 100,000 restarts):
     * the GPUs the pod held, from the report (restart_summary read it with
     * json_extract from every crash-looping pod's report); restarts_window
     * covers everything the summary's single pass reads, so it never
     * touches the table; restarts_workload serves the workload filter
     * without a namespace. */
    {"ALTER TABLE restarts ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;"
     "UPDATE restarts SET gpus = coalesce((SELECT CASE WHEN json_valid(p.report_json)"
     "  THEN CAST(json_extract(p.report_json, '$.diagnosis.gpus') AS INTEGER) END"
     "  FROM reports p WHERE p.restart_id = restarts.id), 0);"
     "CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,"
     "  workload_name, pod, pod_uid, cause, node, gpus);"
     "CREATE INDEX restarts_workload ON restarts (workload_name, detected_at);",
     NULL},
    /* 4 -> 5 (issue 15): an alert withdrawn into an alert-storm summary
     * before it was posted gets a state of its own, 'withdrawn', and so
     * does a row that a new leader found already posted by the previous
     * leader, 'superseded' (both were 'failed' with a fixed last_error,
     * which read like a delivery failure). SQLite cannot change a CHECK
     * constraint, so the table is rebuilt. */
    {"CREATE TABLE outbox_v5 ("
     "  id INTEGER PRIMARY KEY,"
     "  restart_id INTEGER REFERENCES restarts (id) ON DELETE CASCADE,"
     "  kind TEXT NOT NULL CHECK (kind IN ('alert', 'reply', 'summary', 'recovered')),"
     "  destination TEXT NOT NULL,"
     "  channel TEXT,"
     "  thread_key TEXT,"
     "  body TEXT NOT NULL,"
     "  fallback TEXT,"
     "  state TEXT NOT NULL DEFAULT 'pending'"
     "    CHECK (state IN ('pending', 'delivered', 'failed', 'withdrawn', 'superseded')),"
     "  attempts INTEGER NOT NULL DEFAULT 0,"
     "  last_error TEXT,"
     "  created_at INTEGER NOT NULL,"
     "  updated_at INTEGER NOT NULL,"
     "  delivered_at INTEGER,"
     "  slack_ts TEXT"
     ");"
     "INSERT INTO outbox_v5 SELECT id, restart_id, kind, destination, channel, thread_key, body,"
     "  fallback, CASE WHEN state = 'failed' AND last_error = '" WITHDRAWN_V4_ERROR "'"
     "  THEN 'withdrawn' WHEN state = 'failed' AND last_error = '" SUPERSEDED_V4_ERROR "'"
     "  THEN 'superseded' ELSE state END, CASE WHEN state = 'failed' AND last_error IN ("
     "'" WITHDRAWN_V4_ERROR "', '" SUPERSEDED_V4_ERROR "') THEN 0 ELSE attempts END,"
     "  CASE WHEN state = 'failed' AND last_error IN ('" WITHDRAWN_V4_ERROR
     "', '" SUPERSEDED_V4_ERROR "') THEN NULL ELSE last_error END, created_at,"
     "  updated_at, delivered_at, slack_ts FROM outbox;"
     "DROP TABLE outbox;"
     "ALTER TABLE outbox_v5 RENAME TO outbox;"
     "CREATE INDEX outbox_restart ON outbox (restart_id);"
     "CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending';"
     "CREATE INDEX outbox_thread ON outbox (thread_key, delivered_at)"
     "  WHERE slack_ts IS NOT NULL;",
     NULL},
    /* 5 -> 6 (issue 17): the cluster that recorded a restart (clusterName;
     * '' when unnamed, as are the rows recorded before), so that lists and
     * summaries can tell clusters apart; restarts_window gains it so that a
     * window of one cluster is still read from the index alone. The outbox
     * has no cluster, and retention and counts take the whole file: a
     * SQLite file is one replica's own (whatever clusterName it had when it
     * recorded a row). */
    {"ALTER TABLE restarts ADD COLUMN cluster TEXT NOT NULL DEFAULT '';"
     "DROP INDEX restarts_window;"
     "CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,"
     "  workload_name, pod, pod_uid, cause, node, gpus, cluster);",
     NULL},
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == KRC_STORE_SCHEMA_VERSION,
               "one migration per schema version");

/* RESTART_COLS, OUTBOX_COLS, PRUNABLE: krc/store/backend.h (shared with store_pg.c). */

enum stmt {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_VERSION_TABLE,
    ST_VERSION_GET,
    ST_VERSION_SET,
    ST_USER_TABLES,
    ST_INSERT_RESTART,
    ST_FIND_RESTART,
    ST_RESTART_EXISTS,
    ST_LAST_DIAGNOSED,
    ST_INSERT_REPORT,
    ST_SET_DECISION,
    ST_SET_MESSAGE,
    ST_INSERT_OUTBOX,
    ST_MARK_DELIVERED,
    ST_MARK_ATTEMPT,
    ST_MARK_WITHDRAWN,
    ST_MARK_SUPERSEDED,
    ST_JOURNAL_APPLY,
    ST_PENDING_NEXT,
    ST_THREAD_TS,
    ST_GET_RESTART,
    ST_GET_MESSAGES,
    ST_PRUNE_AGE,
    ST_COUNT_RESTARTS,
    ST_PRUNE_OLDEST,
    ST_PRUNE_ORPHANS,
    ST_STATS_OUTBOX,
    ST_STATS_OLDEST,
    ST_PAGES,
    ST_LIST_BASE, /* not prepared from the table: the list query is assembled */
    N_STMT
};

static const char *const sql_text[N_STMT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_VERSION_TABLE] =
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
    [ST_VERSION_GET] = "SELECT max(version) FROM schema_version",
    [ST_VERSION_SET] = "UPDATE schema_version SET version = ?1",
    [ST_USER_TABLES] =
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    [ST_INSERT_RESTART] =
        "INSERT INTO restarts (pod_uid, container, restart_count, namespace, pod, workload_kind, "
        "workload_name, node, cause, exit_code, signal, reason, started_at, finished_at, "
        "detected_at, decision, summary, confidence, gpus, identity, cluster) VALUES (?1, ?2, ?3, "
        "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?20, " IDENTITY_SQL(
            "?14", "?19", "?3") ", ?21) ON CONFLICT (pod_uid, container, identity) DO NOTHING",
    [ST_FIND_RESTART] = "SELECT id FROM restarts WHERE pod_uid = ?1 AND container = ?2 AND "
                        "identity = " IDENTITY_SQL("?4", "?5", "?3"),
    [ST_RESTART_EXISTS] = "SELECT 1 FROM restarts WHERE id = ?1",
    [ST_LAST_DIAGNOSED] =
        "SELECT r.id, r.cause, r.confidence, r.exit_code, r.signal, r.reason, coalesce((SELECT "
        "CASE WHEN json_valid(p.report_json) THEN json_extract(p.report_json, '$.log.bytes') > 0 "
        "END FROM reports p WHERE p.restart_id = r.id), 0) FROM restarts r WHERE r.pod_uid = ?1 "
        "AND r.container = ?2 AND r.decision IN ('alert', 'thread_reply', 'not_posted') "
        "ORDER BY r.detected_at DESC, r.id DESC LIMIT 1",
    [ST_INSERT_REPORT] =
        "INSERT INTO reports (restart_id, message, report_json) VALUES (?1, ?2, ?3)",
    [ST_SET_DECISION] = "UPDATE restarts SET decision = ?2 WHERE id = ?1",
    [ST_SET_MESSAGE] = "INSERT INTO reports (restart_id, message) VALUES (?1, ?2) "
                       "ON CONFLICT (restart_id) DO UPDATE SET message = excluded.message",
    [ST_INSERT_OUTBOX] = "INSERT INTO outbox (restart_id, kind, destination, channel, thread_key, "
                         "body, fallback, created_at, updated_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
    [ST_MARK_DELIVERED] = "UPDATE outbox SET state = 'delivered', delivered_at = ?2, "
                          "updated_at = ?2, slack_ts = ?3, attempts = attempts + 1 WHERE id = ?1",
    [ST_JOURNAL_APPLY] = "UPDATE outbox SET state = 'delivered', delivered_at = ?2, "
                         "updated_at = ?2, slack_ts = coalesce(?3, slack_ts), "
                         "attempts = attempts + 1 WHERE id = ?1 AND state = 'pending'",
    [ST_MARK_ATTEMPT] = "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, "
                        "updated_at = ?3, state = CASE WHEN ?4 THEN 'failed' ELSE state END "
                        "WHERE id = ?1",
    [ST_MARK_WITHDRAWN] = "UPDATE outbox SET state = 'withdrawn', updated_at = ?2 "
                          "WHERE id = ?1 AND state = 'pending'",
    [ST_MARK_SUPERSEDED] = "UPDATE outbox SET state = 'superseded', updated_at = ?2 "
                           "WHERE id = ?1 AND state = 'pending'",
    [ST_PENDING_NEXT] = "SELECT " OUTBOX_COLS " FROM outbox WHERE state = 'pending' AND id > ?1 "
                        "ORDER BY id LIMIT 1",
    [ST_THREAD_TS] = "SELECT slack_ts, channel FROM outbox WHERE thread_key = ?1 AND kind = "
                     "'alert' AND state = 'delivered' AND slack_ts IS NOT NULL "
                     "ORDER BY delivered_at DESC, id DESC LIMIT 1",
    [ST_GET_RESTART] = "SELECT " RESTART_COLS ", p.message, p.report_json FROM restarts r "
                       "LEFT JOIN reports p ON p.restart_id = r.id WHERE r.id = ?1",
    [ST_GET_MESSAGES] = "SELECT " OUTBOX_COLS " FROM outbox WHERE restart_id = ?1 ORDER BY id",
    [ST_PRUNE_AGE] = "DELETE FROM restarts WHERE id IN (SELECT r.id FROM restarts r WHERE "
                     "r.detected_at < ?1 AND " PRUNABLE " ORDER BY r.detected_at, r.id LIMIT ?2)",
    [ST_COUNT_RESTARTS] = "SELECT count(*) FROM restarts",
    [ST_PRUNE_OLDEST] =
        "DELETE FROM restarts WHERE id IN (SELECT r.id FROM restarts r WHERE " PRUNABLE
        " ORDER BY r.detected_at, r.id LIMIT ?1)",
    [ST_PRUNE_ORPHANS] = "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE restart_id "
                         "IS NULL AND state != 'pending' AND created_at < ?1 ORDER BY id LIMIT ?2)",
    [ST_STATS_OUTBOX] = "SELECT state, count(*) FROM outbox GROUP BY state",
    [ST_STATS_OLDEST] = "SELECT min(detected_at) FROM restarts",
    [ST_PAGES] = "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
    [ST_LIST_BASE] = "SELECT " RESTART_COLS " FROM restarts r WHERE 1",
};

/* Pieces of the list query, appended to ST_LIST_BASE for the filters in use
 * (so that SQLite picks the index of the filter that is present). */
#define LIST_NAMESPACE " AND r.namespace = ?1"
/* every string with prefix P sorts in [P, P || U+10FFFF) */
#define LIST_POD " AND r.pod >= ?2 AND r.pod < ?2 || char(1114111)"
#define LIST_CAUSE " AND r.cause = ?3"
#define LIST_SINCE " AND r.detected_at >= ?4"
#define LIST_POD_EXACT " AND r.pod = ?2"
#define LIST_WORKLOAD " AND r.workload_name = ?6"
#define LIST_BEFORE " AND (r.detected_at < ?7 OR (r.detected_at = ?7 AND r.id < ?8))"
#define LIST_CLUSTER " AND r.cluster = ?9"
#define LIST_ORDER " ORDER BY r.detected_at DESC, r.id DESC LIMIT ?5"

struct krc_store_be {
    sqlite3 *db;
    char *path;    /* the file (or ":memory:"): what messages name */
    char *cluster; /* options.cluster, "" when none: written on every restart */
    unsigned flags;
    sqlite3_stmt *st[N_STMT];
};

/* ---- errors -------------------------------------------------------------------- */

/* Translate a SQLite result into a KRC code and a message naming the file,
 * what we were doing and what is wrong. */
static int db_fail(const struct krc_store_be *s, int rc, const char *what, struct krc_error *err)
{
    int saved_errno = errno; /* before anything else can change it */
    const char *path = s->path;
    const char *msg = s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    int sys = s->db != NULL ? sqlite3_system_errno(s->db) : 0;

    /* SQLite does not always keep the errno of a failed write
     * (SQLITE_IOERR_WRITE from a commit): take the thread's errno then. */
    if (sys == 0 && (rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC ||
                     rc == SQLITE_IOERR_TRUNCATE || rc == SQLITE_IOERR_SHMSIZE)) {
        sys = saved_errno;
    }
    if ((rc & 0xff) == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG)) {
        return krc_error_set(err, KRC_ETOOBIG, "%s: disk full while %s (%s)", path, what,
                             KRC_ERRNO_STR(sys));
    }
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return krc_error_set(err, KRC_ENOMEM, "%s: out of memory while %s", path, what);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return krc_error_set(err, KRC_ETIMEOUT,
                             "%s: database is locked by another connection (waited %d ms) "
                             "while %s",
                             path, KRC_STORE_BUSY_MS, what);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return krc_error_set(err, KRC_EPARSE,
                             "%s: file is not a krc database or is corrupt (%s) while %s; move "
                             "it aside to start a new history",
                             path, msg, what);
    case SQLITE_FULL:
        return krc_error_set(err, KRC_ETOOBIG, "%s: disk full while %s (%s)", path, what, msg);
    case SQLITE_READONLY:
        return krc_error_set(err, KRC_EIO,
                             "%s: cannot write: the file, its directory or the file system is "
                             "read-only (%s) while %s",
                             path, msg, what);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return krc_error_set(err, KRC_EIO, "%s: cannot open (%s, errno %d: %s) while %s", path, msg,
                             s->db != NULL ? sqlite3_system_errno(s->db) : 0,
                             s->db != NULL ? KRC_ERRNO_STR(sqlite3_system_errno(s->db)) : "?",
                             what);
    case SQLITE_CONSTRAINT:
        return krc_error_set(err, KRC_EINVAL, "%s: constraint failed (%s) while %s", path, msg,
                             what);
    default:
        if (sys != 0) {
            return krc_error_set(err, KRC_EIO, "%s: %s (%s) while %s", path, msg,
                                 KRC_ERRNO_STR(sys), what);
        }
        return krc_error_set(err, KRC_EIO, "%s: %s while %s", path, msg, what);
    }
}

/* ---- statements ------------------------------------------------------------------ */

static int stmt_get(struct krc_store_be *s, enum stmt id, sqlite3_stmt **ret, struct krc_error *err)
{
    if (s->st[id] == NULL) {
        int rc = sqlite3_prepare_v3(s->db, sql_text[id], -1, SQLITE_PREPARE_PERSISTENT, &s->st[id],
                                    NULL);
        if (rc != SQLITE_OK) {
            return db_fail(s, rc, "preparing a statement", err);
        }
    }
    *ret = s->st[id];
    return 0;
}

static void stmt_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
    return v != NULL ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* ST_FIND_RESTART's parameters. */
static void bind_identity(sqlite3_stmt *st, const char *pod_uid, const char *container,
                          int restart_count, int64_t finished_at, const char *container_id)
{
    bind_text(st, 1, pod_uid);
    bind_text(st, 2, container);
    sqlite3_bind_int(st, 3, restart_count);
    sqlite3_bind_int64(st, 4, finished_at);
    bind_text(st, 5, container_id);
}

/* Run a statement that returns no rows. */
static int run_done(struct krc_store_be *s, sqlite3_stmt *st, const char *what,
                    struct krc_error *err)
{
    int rc = sqlite3_step(st);
    stmt_done(st);
    if (rc != SQLITE_DONE) {
        return db_fail(s, rc, what, err);
    }
    return 0;
}

static int run_simple(struct krc_store_be *s, enum stmt id, const char *what, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, id, &st, err);
    return rc < 0 ? rc : run_done(s, st, what, err);
}

/* A statement returning one integer (0 when no row or NULL). */
static int query_int(struct krc_store_be *s, enum stmt id, int64_t arg, int64_t *ret,
                     const char *what, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, id, &st, err);
    if (rc < 0) {
        return rc;
    }
    if (sqlite3_bind_parameter_count(st) >= 1) {
        sqlite3_bind_int64(st, 1, arg);
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *ret = sqlite3_column_int64(st, 0);
        stmt_done(st);
        return 0;
    }
    stmt_done(st);
    if (rc == SQLITE_DONE) {
        *ret = 0;
        return 0;
    }
    return db_fail(s, rc, what, err);
}

static int tx_begin(struct krc_store_be *s, struct krc_error *err)
{
    return run_simple(s, ST_BEGIN, "starting a transaction", err);
}

static int tx_commit(struct krc_store_be *s, struct krc_error *err)
{
    return run_simple(s, ST_COMMIT, "committing", err);
}

static void tx_rollback(struct krc_store_be *s)
{
    if (!sqlite3_get_autocommit(s->db)) {
        run_simple(s, ST_ROLLBACK, "rolling back", NULL);
    }
}

/* ---- open ------------------------------------------------------------------------ */

/* mkdir -p of the directory part of path, new directories 0700. */
static int make_parents(const char *path, struct krc_error *err)
{
    char *dir = krc_strdup(path);
    int rc = 0;

    if (dir == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (char *p = dir + 1; *p != '\0'; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            int e = errno;
            rc = krc_error_set(err, KRC_EIO, "%s: cannot create directory %s: %s%s", path, dir,
                               KRC_ERRNO_STR(e),
                               e == EACCES || e == EROFS || e == EPERM
                                   ? " (its parent or the file system is read-only or not ours)"
                                   : "");
            break;
        }
        *p = '/';
    }
    krc_free(dir);
    return rc;
}

/* Create the file (mode 0600, so that the -wal and -shm files that SQLite
 * creates with the same mode are private too) or check that it exists. */
static int prepare_file(const char *path, unsigned flags, struct krc_error *err)
{
    struct stat sb;
    int fd;

    if (flags & KRC_STORE_READONLY) {
        if (stat(path, &sb) != 0) {
            if (errno == ENOENT) {
                return krc_error_set(err, KRC_ENOTFOUND, "%s: no such file", path);
            }
            return krc_error_set(err, KRC_EIO, "%s: %s", path, KRC_ERRNO_STR(errno));
        }
        if (S_ISDIR(sb.st_mode)) {
            return krc_error_set(err, KRC_EIO, "%s: is a directory, not a database file", path);
        }
        return 0;
    }
    if (make_parents(path, err) < 0) {
        return KRC_EIO;
    }
    /* Never open() and close() a database file that exists: closing any
     * descriptor of a file drops every POSIX lock this process holds on it,
     * the SHARED locks of the other connections (threads) included. SQLite
     * then believes the last connection is closing, checkpoints and deletes
     * the -wal and -shm files under the others, and from then on other
     * processes (krc history, another connection's lock) see none of their
     * writes. Whether it may be written is for SQLite's open to say. */
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            return krc_error_set(err, KRC_EIO, "%s: is a directory, not a database file", path);
        }
        return 0;
    }
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        return 0; /* created by another thread or process meanwhile */
    }
    if (fd < 0) {
        int e = errno;
        if (e == EISDIR) {
            return krc_error_set(err, KRC_EIO, "%s: is a directory, not a database file", path);
        }
        if (e == EACCES || e == EROFS || e == EPERM) {
            return krc_error_set(err, KRC_EIO,
                                 "%s: cannot open for writing: %s (the file, its directory or "
                                 "the file system is read-only or not ours)",
                                 path, KRC_ERRNO_STR(e));
        }
        return krc_error_set(err, KRC_EIO, "%s: cannot create: %s", path, KRC_ERRNO_STR(e));
    }
    close(fd);
    return 0;
}

static int quick_check(struct krc_store_be *s, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    struct krc_buf out;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(5)", -1, &st, NULL);
    int ok = 0;
    int n = 0;

    if (rc != SQLITE_OK) {
        return db_fail(s, rc, "checking the file", err);
    }
    krc_buf_init(&out, 400);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line == NULL) {
            continue;
        }
        if (n++ == 0 && strcmp(line, "ok") == 0) {
            ok = 1;
        } else if (out.len < 300) {
            krc_buf_printf(&out, "%s%s", out.len ? "; " : "", line);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        krc_buf_cleanup(&out);
        return db_fail(s, rc, "checking the file", err);
    }
    if (!ok) {
        krc_error_set(err, KRC_EPARSE,
                      "%s: database is corrupt (quick_check: %s); move it aside to start a new "
                      "history",
                      s->path, krc_buf_str(&out));
        krc_buf_cleanup(&out);
        return KRC_EPARSE;
    }
    krc_buf_cleanup(&out);
    return 0;
}

static int exec_sql(struct krc_store_be *s, const char *sql, const char *what,
                    struct krc_error *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : db_fail(s, rc, what, err);
}

/* The text of one column of the first row of `sql` (owned, krc_free), or
 * NULL in *ret when there is no row. */
static int query_text(struct krc_store_be *s, const char *sql, char **ret, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

    *ret = NULL;
    if (rc != SQLITE_OK) {
        return db_fail(s, rc, "reading the schema", err);
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
        *ret = krc_strdup((const char *)sqlite3_column_text(st, 0));
        if (*ret == NULL) {
            sqlite3_finalize(st);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        return db_fail(s, rc, "reading the schema", err);
    }
    return 0;
}

/* The old rows into the rebuilt table, each with the identity of its
 * termination (rows were unique by count, so they stay unique with it).
 * Columns are named (the old table's, from pragma_table_info), so the copy
 * does not depend on where the rebuilt text puts each column. */
/* clang-format off */
#define COPY_WITH_IDENTITY                                                                         \
    "INSERT INTO restarts_new (%s, identity) SELECT %s, "                                          \
    IDENTITY_SQL("r.finished_at", "NULL", "r.restart_count")                                       \
    " FROM restarts r ORDER BY r.id; "                                                             \
    "DROP TABLE restarts; "                                                                        \
    "ALTER TABLE restarts_new RENAME TO restarts; "
/* clang-format on */

#define OLD_UNIQUE "UNIQUE (pod_uid, container, restart_count)"
#define NEW_UNIQUE "identity TEXT NOT NULL, UNIQUE (pod_uid, container, identity)"

/* restarts: UNIQUE (pod_uid, container, restart_count) becomes UNIQUE
 * (pod_uid, container, identity). SQLite cannot drop a constraint, so the
 * table is rebuilt (sqlite.org/lang_altertable.html, "other kinds of table
 * schema changes"): the new table is made from the stored CREATE TABLE text
 * with only the constraint replaced, so columns added by other migrations
 * (before or after this one) are kept whatever they are. Rows keep their
 * ids, so reports and outbox rows still point to them. Stored rows get the
 * identity of their termination. */
static int migrate_identity(struct krc_store_be *s, struct krc_error *err)
{
    static const char *const create_prefix = "CREATE TABLE restarts (";
    char *table = NULL;
    char *indexes = NULL;
    char *cols = NULL;
    const char *u;
    struct krc_buf sql;
    int rc;

    krc_buf_init(&sql, 64 * 1024);
    rc = query_text(s, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'restarts'",
                    &table, err);
    if (rc < 0 || (rc = query_text(s,
                                   "SELECT group_concat('\"' || name || '\"', ', ') FROM "
                                   "pragma_table_info('restarts')",
                                   &cols, err)) < 0) {
        goto out;
    }
    if (cols == NULL) {
        rc = krc_error_set(err, KRC_EPARSE, "%s: table restarts has no columns", s->path);
        goto out;
    }
    /* every index of the table but the constraint's own, re-created after */
    rc = query_text(s,
                    "SELECT group_concat(sql, '; ') FROM sqlite_master WHERE type = 'index' AND "
                    "tbl_name = 'restarts' AND sql IS NOT NULL",
                    &indexes, err);
    if (rc < 0) {
        goto out;
    }
    if (table == NULL || strncmp(table, create_prefix, strlen(create_prefix)) != 0 ||
        (u = strstr(table, OLD_UNIQUE)) == NULL) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "%s: table restarts is not as krc created it (no " OLD_UNIQUE
                           "); move the file aside to start a new history",
                           s->path);
        goto out;
    }
    rc = krc_buf_printf(&sql, "CREATE TABLE restarts_new (%.*s" NEW_UNIQUE "%s; ",
                        (int)(u - table - strlen(create_prefix)), table + strlen(create_prefix),
                        u + strlen(OLD_UNIQUE));
    if (rc == 0) {
        rc = krc_buf_printf(&sql, COPY_WITH_IDENTITY, cols, cols);
    }
    if (rc == 0 && indexes != NULL) {
        rc = krc_buf_printf(&sql, "%s;", indexes);
    }
    if (rc < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = exec_sql(s, krc_buf_str(&sql), "rebuilding the restarts table", err)) < 0) {
        goto out;
    }
    /* nothing may point to a restart that is gone */
    krc_free(indexes);
    if ((rc = query_text(s, "SELECT \"table\" FROM pragma_foreign_key_check", &indexes, err)) < 0) {
        goto out;
    }
    if (indexes != NULL) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "%s: rows of table %s point to no restart after the rebuild; move the "
                           "file aside to start a new history",
                           s->path, indexes);
    }
out:
    krc_free(table);
    krc_free(indexes);
    krc_free(cols);
    krc_buf_cleanup(&sql);
    return rc;
}

static int read_version(struct krc_store_be *s, int64_t *ret, struct krc_error *err)
{
    int64_t has = 0;
    int rc = query_int(s, ST_VERSION_TABLE, 0, &has, "reading the schema version", err);
    if (rc < 0) {
        return rc;
    }
    if (!has) {
        int64_t tables = 0;
        rc = query_int(s, ST_USER_TABLES, 0, &tables, "reading the schema", err);
        if (rc < 0) {
            return rc;
        }
        if (tables > 0) {
            return krc_error_set(err, KRC_EPARSE,
                                 "%s: an SQLite database but not krc's (no schema_version "
                                 "table); use another --db file",
                                 s->path);
        }
        *ret = 0;
        return 0;
    }
    return query_int(s, ST_VERSION_GET, 0, ret, "reading the schema version", err);
}

static int check_newer(const struct krc_store_be *s, int64_t v, struct krc_error *err)
{
    if (v > KRC_STORE_SCHEMA_VERSION) {
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "%s: schema version %lld is newer than this krc understands (%d): "
                             "it was written by a newer krc; upgrade krc or use another --db",
                             s->path, (long long)v, KRC_STORE_SCHEMA_VERSION);
    }
    return 0;
}

static int migrate_locked(struct krc_store_be *s, struct krc_error *err);

static int migrate(struct krc_store_be *s, struct krc_error *err)
{
    int64_t v = 0;
    int rc = read_version(s, &v, err);

    if (rc < 0 || (rc = check_newer(s, v, err)) < 0) {
        return rc;
    }
    if (v == KRC_STORE_SCHEMA_VERSION) {
        return 0;
    }
    if (s->flags & KRC_STORE_READONLY) {
        if (v == 0) {
            return krc_error_set(err, KRC_ENOTFOUND, "%s: empty database", s->path);
        }
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "%s: schema version %lld is older than this krc's (%d) and the "
                             "file is opened read-only; run krc run once to upgrade it",
                             s->path, (long long)v, KRC_STORE_SCHEMA_VERSION);
    }
    /* A table rebuild drops the old table: with foreign keys on, that
     * would delete the reports and outbox rows that point to it. The pragma
     * has no effect inside a transaction, so it is set around it;
     * migrate_identity checks the keys before the commit. */
    if ((rc = exec_sql(s, "PRAGMA foreign_keys = OFF", "configuring the connection", err)) < 0) {
        return rc;
    }
    rc = migrate_locked(s, err);
    if (exec_sql(s, "PRAGMA foreign_keys = ON", "configuring the connection", rc < 0 ? NULL : err) <
            0 &&
        rc == 0) {
        rc = KRC_EIO;
    }
    return rc;
}

/* migrate() without the pragma: the write transaction itself. */
static int migrate_locked(struct krc_store_be *s, struct krc_error *err)
{
    int64_t v = 0;
    int rc;

    /* Another process may be migrating at the same moment: decide inside
     * the write transaction. */
    if ((rc = tx_begin(s, err)) < 0) {
        return rc;
    }
    if ((rc = read_version(s, &v, err)) < 0 || (rc = check_newer(s, v, err)) < 0) {
        goto rollback;
    }
    if (v == 0 && (rc = exec_sql(s,
                                 "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER "
                                 "NOT NULL); INSERT INTO schema_version (version) SELECT 0 "
                                 "WHERE NOT EXISTS (SELECT 1 FROM schema_version);",
                                 "creating the schema_version table", err)) < 0) {
        goto rollback;
    }
    for (; v < KRC_STORE_SCHEMA_VERSION; v++) {
        char what[64];
        sqlite3_stmt *st = NULL;
        snprintf(what, sizeof(what), "migrating the schema to version %lld", (long long)v + 1);
        if (migrations[v].sql != NULL && (rc = exec_sql(s, migrations[v].sql, what, err)) < 0) {
            goto rollback;
        }
        if (migrations[v].run != NULL && (rc = migrations[v].run(s, err)) < 0) {
            krc_error_prefix(err, "%s", what);
            goto rollback;
        }
        /* statements that read the schema were prepared against the old one */
        if ((rc = stmt_get(s, ST_VERSION_SET, &st, err)) < 0) {
            goto rollback;
        }
        sqlite3_bind_int64(st, 1, v + 1);
        if ((rc = run_done(s, st, what, err)) < 0) {
            goto rollback;
        }
    }
    return tx_commit(s, err);
rollback:
    tx_rollback(s);
    return rc;
}

static int set_pragmas(struct krc_store_be *s, struct krc_error *err)
{
    char sql[160];
    int rc;

    /* A small page cache per connection (the default is 2 MB each, and the
     * daemon holds one connection per thread): the working set is a few
     * index pages and the rows being written. */
    snprintf(sql, sizeof(sql),
             "PRAGMA busy_timeout = %d; PRAGMA foreign_keys = ON; PRAGMA cache_size = -256;",
             KRC_STORE_BUSY_MS);
    if ((rc = exec_sql(s, sql, "configuring the connection", err)) < 0) {
        return rc;
    }
    if (s->flags & KRC_STORE_READONLY) {
        return 0;
    }
    /* No auto_vacuum: pages freed by pruning are reused by new rows, so
     * retention bounds the file at its high-water mark without the cost
     * of moving pages inside the writers' lock. */
    rc = exec_sql(s, "PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = 67108864;",
                  "switching to WAL", err);
    if (rc < 0) {
        return rc;
    }
    return exec_sql(s,
                    (s->flags & KRC_STORE_SYNC_FULL) ? "PRAGMA synchronous = FULL"
                                                     : "PRAGMA synchronous = NORMAL",
                    "configuring the connection", err);
}

static void disconnect(struct krc_store_be *s)
{
    for (int i = 0; i < N_STMT; i++) {
        sqlite3_finalize(s->st[i]);
        s->st[i] = NULL;
    }
    sqlite3_close(s->db);
    s->db = NULL;
}

/* "file:PATH?immutable=1" with PATH percent-encoded. */
static char *immutable_uri(const char *path)
{
    struct krc_buf b;
    char *out;
    int rc;

    krc_buf_init(&b, 3 * strlen(path) + 32);
    rc = krc_buf_append_str(&b, "file:");
    for (const unsigned char *p = (const unsigned char *)path; rc == 0 && *p != '\0'; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-._~", *p) != NULL) {
            rc = krc_buf_append_char(&b, (char)*p);
        } else {
            rc = krc_buf_printf(&b, "%%%02X", *p);
        }
    }
    if (rc == 0) {
        rc = krc_buf_append_str(&b, "?immutable=1");
    }
    out = rc == 0 ? krc_buf_take(&b) : NULL;
    krc_buf_cleanup(&b);
    return out;
}

/* Open the connection and bring the schema up to date. */
static int connect_db(struct krc_store_be *s, int immutable, struct krc_error *err)
{
    int readonly = (s->flags & KRC_STORE_READONLY) != 0;
    int oflags = SQLITE_OPEN_NOMUTEX |
                 (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    char *uri = NULL;
    int rc;

    if (immutable) {
        if ((uri = immutable_uri(s->path)) == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        oflags |= SQLITE_OPEN_URI;
    }
    rc = sqlite3_open_v2(uri != NULL ? uri : s->path, &s->db, oflags, NULL);
    krc_free(uri);
    if (rc != SQLITE_OK) {
        return db_fail(s, rc, "opening", err);
    }
    sqlite3_extended_result_codes(s->db, 1);
    if (!readonly && strcmp(s->path, ":memory:") != 0 && sqlite3_db_readonly(s->db, "main") == 1) {
        return krc_error_set(err, KRC_EIO,
                             "%s: the file is read-only (check its owner and mode): krc needs "
                             "to write it",
                             s->path);
    }
    if ((rc = set_pragmas(s, err)) < 0) {
        return rc;
    }
    if ((s->flags & KRC_STORE_QUICK_CHECK) && (rc = quick_check(s, err)) < 0) {
        return rc;
    }
    return migrate(s, err);
}

/* A reader that may not create the -shm file (a directory it cannot write)
 * cannot open a WAL database normally. When no -wal file exists, no writer
 * is active and the file is complete: read it as immutable. */
static int can_read_immutable(const struct krc_store_be *s)
{
    struct krc_buf wal;
    struct stat sb;
    int absent;

    krc_buf_init(&wal, strlen(s->path) + 8);
    if (krc_buf_printf(&wal, "%s-wal", s->path) < 0) {
        krc_buf_cleanup(&wal);
        return 0;
    }
    absent = stat(krc_buf_str(&wal), &sb) != 0 && errno == ENOENT;
    krc_buf_cleanup(&wal);
    return absent;
}

/* Process-wide SQLite settings, applied once before the first connection.
 * By default SQLite's page cache gives every connection an up-front block of
 * 20 pages (87 KB), used or not. The daemon keeps one connection per thread
 * and some of them are idle most of the time (retention once a minute, the
 * sender only when there is something to send), so pages are allocated one
 * by one as a connection needs them instead, up to its cache_size: 76 KB
 * less per connection that reads little. bench_store: same speed. */
static void configure_sqlite(void)
{
    /* SQLITE_MISUSE if SQLite was initialised before (not by us): then the
     * default stays, which is only a matter of memory. */
    (void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)NULL, 0, 0);
}

static void sq_close(struct krc_store_be *s);

/* `display` is the path itself: a file path holds no secret. */
static int sq_open(const char *path, const char *display, unsigned flags,
                   const struct krc_store_options *o, struct krc_store_be **ret,
                   struct krc_error *err)
{
    static pthread_once_t configured = PTHREAD_ONCE_INIT;
    struct krc_store_be *s;
    int rc;

    (void)display;
    pthread_once(&configured, configure_sqlite);

    if (path == NULL || path[0] == '\0') {
        return krc_error_set(err, KRC_EINVAL, "database path is empty");
    }
    if (strcmp(path, ":memory:") != 0 && (rc = prepare_file(path, flags, err)) < 0) {
        return rc;
    }
    s = krc_calloc(1, sizeof(*s));
    if (s == NULL || (s->path = krc_strdup(path)) == NULL ||
        (s->cluster = krc_strdup(o != NULL && o->cluster != NULL ? o->cluster : "")) == NULL) {
        sq_close(s);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    s->flags = flags;
    rc = connect_db(s, 0, err);
    if (rc == KRC_EIO && (flags & KRC_STORE_READONLY) && can_read_immutable(s)) {
        disconnect(s);
        rc = connect_db(s, 1, err);
    }
    if (rc < 0) {
        sq_close(s);
        return rc;
    }
    *ret = s;
    return 0;
}

static void sq_close(struct krc_store_be *s)
{
    if (s == NULL) {
        return;
    }
    disconnect(s);
    krc_free(s->path);
    krc_free(s->cluster);
    krc_free(s);
}

/* ---- names ------------------------------------------------------------------------ */

/* ---- writing ---------------------------------------------------------------------- */

static int insert_outbox(struct krc_store_be *s, int64_t restart_id,
                         const struct krc_store_outbox *m, int64_t *ret_id, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, ST_INSERT_OUTBOX, &st, err);

    if (rc < 0) {
        return rc;
    }
    if (restart_id > 0) {
        sqlite3_bind_int64(st, 1, restart_id);
    } else {
        sqlite3_bind_null(st, 1);
    }
    bind_text(st, 2, krc_store_kind_name(m->kind));
    bind_text(st, 3, m->destination);
    bind_text(st, 4, m->channel);
    bind_text(st, 5, m->thread_key);
    bind_text(st, 6, m->body);
    bind_text(st, 7, m->fallback);
    sqlite3_bind_int64(st, 8, m->created_at > 0 ? m->created_at : krc_clock_now());
    if ((rc = run_done(s, st, "queueing a notification", err)) < 0) {
        return rc;
    }
    *ret_id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

static int sq_record_many(struct krc_store_be *s, const struct krc_store_restart *rec,
                          const struct krc_store_outbox *msgs, size_t n_msgs,
                          int64_t *ret_restart_id, int64_t *ret_outbox_ids, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int64_t rid = 0;
    int rc;

    if ((rc = stmt_get(s, ST_INSERT_RESTART, &st, err)) < 0 || (rc = tx_begin(s, err)) < 0) {
        return rc;
    }
    bind_text(st, 1, rec->pod_uid);
    bind_text(st, 2, rec->container);
    sqlite3_bind_int(st, 3, rec->restart_count);
    bind_text(st, 4, rec->namespace);
    bind_text(st, 5, rec->pod);
    bind_text(st, 6, rec->workload_kind);
    bind_text(st, 7, rec->workload_name);
    bind_text(st, 8, rec->node);
    bind_text(st, 9, krc_cause_name(rec->cause));
    if (rec->has_exit_code) {
        sqlite3_bind_int(st, 10, rec->exit_code);
    } else {
        sqlite3_bind_null(st, 10);
    }
    sqlite3_bind_int(st, 11, rec->signal);
    bind_text(st, 12, rec->reason);
    sqlite3_bind_int64(st, 13, rec->started_at);
    sqlite3_bind_int64(st, 14, rec->finished_at);
    sqlite3_bind_int64(st, 15, rec->detected_at);
    bind_text(st, 16, rec->decision);
    bind_text(st, 17, rec->summary);
    bind_text(st, 18, krc_confidence_name(rec->confidence));
    bind_text(st, 19, rec->container_id);
    sqlite3_bind_int64(st, 20, rec->gpus > 0 ? (int64_t)rec->gpus : 0);
    bind_text(st, 21, s->cluster);
    if ((rc = run_done(s, st, "recording a restart", err)) < 0) {
        goto rollback;
    }
    if (sqlite3_changes(s->db) == 0) {
        /* already recorded: find it, write nothing */
        if ((rc = stmt_get(s, ST_FIND_RESTART, &st, err)) < 0) {
            goto rollback;
        }
        bind_identity(st, rec->pod_uid, rec->container, rec->restart_count, rec->finished_at,
                      rec->container_id);
        rc = sqlite3_step(st);
        rid = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        stmt_done(st);
        if (rc != SQLITE_ROW) {
            rc = db_fail(s, rc, "looking up a recorded restart", err);
            goto rollback;
        }
        tx_rollback(s);
        if (ret_restart_id != NULL) {
            *ret_restart_id = rid;
        }
        for (size_t i = 0; ret_outbox_ids != NULL && i < n_msgs; i++) {
            ret_outbox_ids[i] = 0;
        }
        return KRC_STORE_EXISTS;
    }
    rid = sqlite3_last_insert_rowid(s->db);
    if ((rc = stmt_get(s, ST_INSERT_REPORT, &st, err)) < 0) {
        goto rollback;
    }
    sqlite3_bind_int64(st, 1, rid);
    bind_text(st, 2, rec->message);
    bind_text(st, 3, rec->report_json);
    if ((rc = run_done(s, st, "recording a restart report", err)) < 0) {
        goto rollback;
    }
    for (size_t i = 0; i < n_msgs; i++) {
        int64_t oid = 0;
        if ((rc = insert_outbox(s, rid, &msgs[i], &oid, err)) < 0) {
            goto rollback;
        }
        if (ret_outbox_ids != NULL) {
            ret_outbox_ids[i] = oid;
        }
    }
    if ((rc = tx_commit(s, err)) < 0) {
        goto rollback;
    }
    if (ret_restart_id != NULL) {
        *ret_restart_id = rid;
    }
    return 0;
rollback:
    tx_rollback(s);
    return rc;
}

static int sq_set_decision(struct krc_store_be *s, int64_t restart_id, const char *decision,
                           const char *message, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = stmt_get(s, ST_SET_DECISION, &st, err)) < 0 || (rc = tx_begin(s, err)) < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, restart_id);
    bind_text(st, 2, decision);
    if ((rc = run_done(s, st, "updating a decision", err)) < 0) {
        goto rollback;
    }
    if (sqlite3_changes(s->db) == 0) {
        rc = krc_error_set(err, KRC_ENOTFOUND, "%s: no restart with id %lld", s->path,
                           (long long)restart_id);
        goto rollback;
    }
    if (message != NULL) {
        if ((rc = stmt_get(s, ST_SET_MESSAGE, &st, err)) < 0) {
            goto rollback;
        }
        sqlite3_bind_int64(st, 1, restart_id);
        bind_text(st, 2, message);
        if ((rc = run_done(s, st, "updating a message", err)) < 0) {
            goto rollback;
        }
    }
    if ((rc = tx_commit(s, err)) < 0) {
        goto rollback;
    }
    return 0;
rollback:
    tx_rollback(s);
    return rc;
}

static int sq_add_outbox(struct krc_store_be *s, int64_t restart_id,
                         const struct krc_store_outbox *msg, int64_t *ret_outbox_id,
                         struct krc_error *err)
{
    int64_t oid;
    int rc;

    if (restart_id > 0) {
        int64_t found = 0;
        if ((rc = query_int(s, ST_RESTART_EXISTS, restart_id, &found, "looking up a restart",
                            err)) < 0) {
            return rc;
        }
        if (!found) {
            return krc_error_set(err, KRC_ENOTFOUND, "%s: no restart with id %lld", s->path,
                                 (long long)restart_id);
        }
    }
    /* a single INSERT is its own transaction */
    if ((rc = insert_outbox(s, restart_id, msg, &oid, err)) < 0) {
        return rc;
    }
    if (ret_outbox_id != NULL) {
        *ret_outbox_id = oid;
    }
    return 0;
}

static int sq_mark_delivered(struct krc_store_be *s, int64_t id, const char *slack_ts,
                             struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, ST_MARK_DELIVERED, &st, err);

    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, krc_clock_now());
    bind_text(st, 3, slack_ts);
    if ((rc = run_done(s, st, "marking a notification delivered", err)) < 0) {
        return rc;
    }
    if (sqlite3_changes(s->db) == 0) {
        return krc_error_set(err, KRC_ENOTFOUND, "%s: no notification with id %lld", s->path,
                             (long long)id);
    }
    return 0;
}

static int sq_mark_attempt(struct krc_store_be *s, int64_t id, const char *error_text, int final,
                           struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, ST_MARK_ATTEMPT, &st, err);

    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    bind_text(st, 2, error_text);
    sqlite3_bind_int64(st, 3, krc_clock_now());
    sqlite3_bind_int(st, 4, final != 0);
    if ((rc = run_done(s, st, "recording a delivery attempt", err)) < 0) {
        return rc;
    }
    if (sqlite3_changes(s->db) == 0) {
        return krc_error_set(err, KRC_ENOTFOUND, "%s: no notification with id %lld", s->path,
                             (long long)id);
    }
    return 0;
}

/* A pending row leaves the queue without an attempt (statement `which`). */
static int mark_settled(struct krc_store_be *s, enum stmt which, const char *what, int64_t id,
                        struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, which, &st, err);

    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, krc_clock_now());
    if ((rc = run_done(s, st, what, err)) < 0) {
        return rc;
    }
    if (sqlite3_changes(s->db) == 0) {
        return krc_error_set(err, KRC_ENOTFOUND, "%s: no pending notification with id %lld",
                             s->path, (long long)id);
    }
    return 0;
}

static int sq_mark_withdrawn(struct krc_store_be *s, int64_t id, struct krc_error *err)
{
    return mark_settled(s, ST_MARK_WITHDRAWN, "marking a notification withdrawn", id, err);
}

static int sq_mark_superseded(struct krc_store_be *s, int64_t id, struct krc_error *err)
{
    return mark_settled(s, ST_MARK_SUPERSEDED, "marking a notification superseded", id, err);
}

/* ---- reading ---------------------------------------------------------------------- */

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Owned copies of column strings, released together. */
struct strings {
    char **items;
    size_t n;
    size_t cap;
    int failed;
};

static const char *keep(struct strings *k, const char *v)
{
    char *c;
    if (v == NULL) {
        return NULL;
    }
    if (k->n == k->cap) {
        size_t ncap = k->cap ? k->cap * 2 : 16;
        char **ni = krc_realloc(k->items, ncap * sizeof(*ni));
        if (ni == NULL) {
            k->failed = 1;
            return NULL;
        }
        k->items = ni;
        k->cap = ncap;
    }
    c = krc_strdup(v);
    if (c == NULL) {
        k->failed = 1;
        return NULL;
    }
    k->items[k->n++] = c;
    return c;
}

static void strings_cleanup(struct strings *k)
{
    for (size_t i = 0; i < k->n; i++) {
        krc_free(k->items[i]);
    }
    krc_free(k->items);
    memset(k, 0, sizeof(*k));
}

/* Fill m from an OUTBOX_COLS row; strings copied into k when k is non-NULL,
 * else borrowed from the statement. */
static void read_message(sqlite3_stmt *st, struct krc_store_message *m, struct strings *k)
{
#define TXT(i) (k != NULL ? keep(k, col_text(st, i)) : col_text(st, i))
    memset(m, 0, sizeof(*m));
    m->id = sqlite3_column_int64(st, 0);
    m->restart_id = sqlite3_column_int64(st, 1);
    m->kind = krc_store_kind_parse(col_text(st, 2));
    m->destination = TXT(3);
    m->channel = TXT(4);
    m->thread_key = TXT(5);
    m->body = TXT(6);
    m->fallback = TXT(7);
    m->state = krc_store_state_parse(col_text(st, 8));
    m->attempts = sqlite3_column_int(st, 9);
    m->last_error = TXT(10);
    m->created_at = sqlite3_column_int64(st, 11);
    m->updated_at = sqlite3_column_int64(st, 12);
    m->delivered_at = sqlite3_column_int64(st, 13);
    m->slack_ts = TXT(14);
#undef TXT
}

/* Fill row from the RESTART_COLS columns; strings copied or borrowed. */
static void read_row(sqlite3_stmt *st, struct krc_store_row *r, struct strings *k)
{
#define TXT(i) (k != NULL ? keep(k, col_text(st, i)) : col_text(st, i))
    memset(r, 0, sizeof(*r));
    r->id = sqlite3_column_int64(st, 0);
    r->pod_uid = TXT(1);
    r->namespace = TXT(2);
    r->pod = TXT(3);
    r->container = TXT(4);
    r->restart_count = sqlite3_column_int(st, 5);
    r->workload_kind = TXT(6);
    r->workload_name = TXT(7);
    r->node = TXT(8);
    r->cause = TXT(9);
    r->has_exit_code = sqlite3_column_type(st, 10) != SQLITE_NULL;
    r->exit_code = sqlite3_column_int(st, 10);
    r->signal = sqlite3_column_int(st, 11);
    r->reason = TXT(12);
    r->started_at = sqlite3_column_int64(st, 13);
    r->finished_at = sqlite3_column_int64(st, 14);
    r->detected_at = sqlite3_column_int64(st, 15);
    r->decision = TXT(16);
    r->summary = TXT(17);
    r->delivery = TXT(18);
    r->attempts = sqlite3_column_int(st, 19);
    r->confidence = TXT(20);
    r->identity = TXT(21);
    r->cluster = TXT(22);
#undef TXT
}

/* ---- delivery journal ---------------------------------------------------------- */

/* PATH-delivered; NULL for an in-memory database (it has no journal). */
static char *journal_path(const struct krc_store_be *s)
{
    struct krc_buf b;
    char *out = NULL;

    if (strcmp(s->path, ":memory:") == 0) {
        return NULL;
    }
    krc_buf_init(&b, strlen(s->path) + 16);
    if (krc_buf_printf(&b, "%s-delivered", s->path) == 0) {
        out = krc_buf_take(&b);
    }
    krc_buf_cleanup(&b);
    return out;
}

static int sq_journal_delivered(struct krc_store_be *s, int64_t id, const char *slack_ts,
                                struct krc_error *err)
{
    char line[128];
    char *path;
    int fd;
    int n;
    int rc = 0;

    if (strcmp(s->path, ":memory:") == 0) {
        return krc_error_set(err, KRC_EINVAL, "an in-memory database has no delivery journal");
    }
    if ((path = journal_path(s)) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    n = snprintf(line, sizeof(line), "%lld %s\n", (long long)id, slack_ts != NULL ? slack_ts : "-");
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = krc_error_set(err, KRC_EIO, "%s: cannot open: %s", path, KRC_ERRNO_STR(errno));
    } else {
        /* one write of a short line with O_APPEND: whole or, on a crash,
         * a torn last line that the reader skips */
        ssize_t w = write(fd, line, (size_t)n);
        if (w != n) {
            rc = krc_error_set(err, errno == ENOSPC || errno == EDQUOT ? KRC_ETOOBIG : KRC_EIO,
                               "%s: cannot write: %s", path,
                               w < 0 ? KRC_ERRNO_STR(errno) : "short write");
        } else if ((s->flags & KRC_STORE_SYNC_FULL) && fdatasync(fd) != 0) {
            rc = krc_error_set(err, KRC_EIO, "%s: cannot sync: %s", path, KRC_ERRNO_STR(errno));
        }
        close(fd);
    }
    krc_free(path);
    return rc;
}

static int sq_journal_clear(struct krc_store_be *s, struct krc_error *err)
{
    char *path;
    int rc = 0;

    if (strcmp(s->path, ":memory:") == 0) {
        return 0;
    }
    if ((path = journal_path(s)) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        rc = krc_error_set(err, KRC_EIO, "%s: cannot remove: %s", path, KRC_ERRNO_STR(errno));
    }
    krc_free(path);
    return rc;
}

/* The journal's size limit: ~40 bytes a line, far more than one run's
 * failed marks. */
#define JOURNAL_MAX (4 * 1024 * 1024)

/* Mark delivered what the journal says Slack accepted, then remove it. */
static int journal_apply(struct krc_store_be *s, struct krc_error *err)
{
    char *path = journal_path(s);
    struct krc_buf text;
    sqlite3_stmt *st = NULL;
    char chunk[4096];
    int64_t now = krc_clock_now();
    int fd;
    int rc = 0;

    if (path == NULL) {
        return strcmp(s->path, ":memory:") == 0 ? 0
                                                : krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = errno == ENOENT
                 ? 0
                 : krc_error_set(err, KRC_EIO, "%s: cannot open: %s", path, KRC_ERRNO_STR(errno));
        krc_free(path);
        return rc;
    }
    krc_buf_init(&text, JOURNAL_MAX);
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n == 0) {
            break;
        }
        if (n < 0) {
            rc = krc_error_set(err, KRC_EIO, "%s: cannot read: %s", path, KRC_ERRNO_STR(errno));
            break;
        }
        if (krc_buf_append(&text, chunk, (size_t)n) < 0) {
            rc = krc_error_set(err, KRC_ETOOBIG, "%s: larger than %d bytes", path, JOURNAL_MAX);
            break;
        }
    }
    close(fd);
    if (rc == 0 && text.len > 0) {
        if ((rc = stmt_get(s, ST_JOURNAL_APPLY, &st, err)) == 0 && (rc = tx_begin(s, err)) == 0) {
            char *p = (char *)krc_buf_str(&text);
            while (rc == 0 && *p != '\0') {
                char *nl = strchr(p, '\n');
                long long id;
                char ts[64];
                char extra;
                if (nl == NULL) {
                    break; /* torn last line: the write did not finish */
                }
                *nl = '\0';
                /* clang-tidy: %18lld cannot overflow (krc's own journal file); id > 0 checked */
                /* NOLINTNEXTLINE(cert-err34-c) */
                if (sscanf(p, "%18lld %63s %c", &id, ts, &extra) == 2 && id > 0) {
                    sqlite3_bind_int64(st, 1, id);
                    sqlite3_bind_int64(st, 2, now);
                    bind_text(st, 3, strcmp(ts, "-") == 0 ? NULL : ts);
                    rc = run_done(s, st, "applying the delivery journal", err);
                }
                p = nl + 1;
            }
            if (rc == 0) {
                rc = tx_commit(s, err);
            }
            if (rc < 0) {
                tx_rollback(s);
            }
        }
    }
    krc_buf_cleanup(&text);
    if (rc == 0 && unlink(path) != 0 && errno != ENOENT) {
        rc = krc_error_set(err, KRC_EIO, "%s: cannot remove: %s", path, KRC_ERRNO_STR(errno));
    }
    krc_free(path);
    return rc;
}

static int sq_pending(struct krc_store_be *s, krc_store_message_fn fn, void *ud,
                      struct krc_error *err)
{
    int64_t last = 0;
    int rc0 = journal_apply(s, err);

    if (rc0 < 0) {
        /* resuming now could post again what Slack accepted */
        return rc0;
    }

    for (;;) {
        struct krc_store_message m;
        struct strings k;
        sqlite3_stmt *st = NULL;
        int rc = stmt_get(s, ST_PENDING_NEXT, &st, err);

        if (rc < 0) {
            return rc;
        }
        sqlite3_bind_int64(st, 1, last);
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
            stmt_done(st);
            return 0;
        }
        if (rc != SQLITE_ROW) {
            stmt_done(st);
            return db_fail(s, rc, "reading pending notifications", err);
        }
        memset(&k, 0, sizeof(k));
        read_message(st, &m, &k);
        stmt_done(st);
        if (k.failed) {
            strings_cleanup(&k);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        last = m.id;
        rc = fn(&m, ud);
        strings_cleanup(&k);
        if (rc != 0) {
            return rc;
        }
    }
}

static int sq_find_restart(struct krc_store_be *s, const struct krc_store_identity *id,
                           int64_t *ret_id, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = stmt_get(s, ST_FIND_RESTART, &st, err)) < 0) {
        return rc;
    }
    bind_identity(st, id->pod_uid, id->container, id->restart_count, id->finished_at,
                  id->container_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *ret_id = sqlite3_column_int64(st, 0);
        stmt_done(st);
        return 1;
    }
    stmt_done(st);
    if (rc != SQLITE_DONE) {
        return db_fail(s, rc, "looking up a restart", err);
    }
    return 0;
}

/* A row of ST_LAST_DIAGNOSED into *ret: 1, or 0 when it cannot be read
 * back whole. */
static int read_diagnosed(sqlite3_stmt *st, struct krc_store_diagnosed *ret)
{
    const char *cause = (const char *)sqlite3_column_text(st, 1);
    const char *conf = (const char *)sqlite3_column_text(st, 2);
    const char *reason = (const char *)sqlite3_column_text(st, 5);

    memset(ret, 0, sizeof(*ret));
    ret->id = sqlite3_column_int64(st, 0);
    if (cause == NULL || krc_cause_parse(cause, &ret->cause) < 0) {
        return 0;
    }
    if (conf == NULL || krc_confidence_parse(conf, &ret->confidence) < 0) {
        ret->confidence = KRC_CONFIDENCE_LOW;
    }
    ret->has_exit_code = sqlite3_column_type(st, 3) != SQLITE_NULL;
    ret->exit_code = sqlite3_column_int(st, 3);
    ret->signal = sqlite3_column_int(st, 4);
    if (reason != NULL) {
        if (strlen(reason) >= sizeof(ret->reason)) {
            return 0;
        }
        ret->has_reason = 1;
        snprintf(ret->reason, sizeof(ret->reason), "%s", reason);
    }
    ret->log_collected = sqlite3_column_int(st, 6) != 0;
    return 1;
}

static int sq_last_diagnosed(struct krc_store_be *s, const char *pod_uid, const char *container,
                             struct krc_store_diagnosed *ret, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = stmt_get(s, ST_LAST_DIAGNOSED, &st, err)) < 0) {
        return rc;
    }
    bind_text(st, 1, pod_uid);
    bind_text(st, 2, container);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int ok = read_diagnosed(st, ret);
        stmt_done(st);
        return ok;
    }
    stmt_done(st);
    if (rc != SQLITE_DONE) {
        return db_fail(s, rc, "reading the container's last diagnosed restart", err);
    }
    return 0;
}

static int sq_thread_ts(struct krc_store_be *s, const char *thread_key, char **ret_ts,
                        char **ret_channel, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    char *ts = NULL;
    char *ch = NULL;
    int rc;

    if ((rc = stmt_get(s, ST_THREAD_TS, &st, err)) < 0) {
        return rc;
    }
    bind_text(st, 1, thread_key);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *t = col_text(st, 0);
        const char *c = col_text(st, 1);
        ts = krc_strdup(t);
        ch = c != NULL ? krc_strdup(c) : NULL;
        if (ts == NULL || (c != NULL && ch == NULL)) {
            stmt_done(st);
            krc_free(ts);
            krc_free(ch);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    } else if (rc != SQLITE_DONE) {
        stmt_done(st);
        return db_fail(s, rc, "looking up a thread", err);
    }
    stmt_done(st);
    *ret_ts = ts;
    if (ret_channel != NULL) {
        *ret_channel = ch;
    } else {
        krc_free(ch);
    }
    return 0;
}

static int sq_list(struct krc_store_be *s, const struct krc_store_filter *f, krc_store_row_fn fn,
                   void *ud, struct krc_error *err)
{
    struct krc_buf sql;
    sqlite3_stmt *st = NULL;
    int rc;

    krc_buf_init(&sql, 4096);
    rc = krc_buf_append_str(&sql, sql_text[ST_LIST_BASE]);
    if (rc == 0 && f->cluster != NULL) {
        rc = krc_buf_append_str(&sql, LIST_CLUSTER);
    }
    if (rc == 0 && f->namespace != NULL) {
        rc = krc_buf_append_str(&sql, LIST_NAMESPACE);
    }
    if (rc == 0 && f->pod != NULL) {
        rc = krc_buf_append_str(&sql, f->pod_exact ? LIST_POD_EXACT : LIST_POD);
    }
    if (rc == 0 && f->workload != NULL) {
        rc = krc_buf_append_str(&sql, LIST_WORKLOAD);
    }
    if (rc == 0 && f->before_id > 0) {
        rc = krc_buf_append_str(&sql, LIST_BEFORE);
    }
    if (rc == 0 && f->cause != NULL) {
        rc = krc_buf_append_str(&sql, LIST_CAUSE);
    }
    if (rc == 0 && f->since > 0) {
        rc = krc_buf_append_str(&sql, LIST_SINCE);
    }
    if (rc == 0) {
        rc = krc_buf_append_str(&sql, LIST_ORDER);
    }
    if (rc < 0) {
        krc_buf_cleanup(&sql);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = sqlite3_prepare_v2(s->db, krc_buf_str(&sql), -1, &st, NULL);
    krc_buf_cleanup(&sql);
    if (rc != SQLITE_OK) {
        return db_fail(s, rc, "listing restarts", err);
    }
    if (f->cluster != NULL) {
        bind_text(st, 9, f->cluster);
    }
    if (f->namespace != NULL) {
        bind_text(st, 1, f->namespace);
    }
    if (f->pod != NULL) {
        bind_text(st, 2, f->pod);
    }
    if (f->cause != NULL) {
        bind_text(st, 3, f->cause);
    }
    if (f->since > 0) {
        sqlite3_bind_int64(st, 4, f->since);
    }
    sqlite3_bind_int64(st, 5, f->limit > 0 ? (int64_t)f->limit : -1);
    if (f->workload != NULL) {
        bind_text(st, 6, f->workload);
    }
    if (f->before_id > 0) {
        sqlite3_bind_int64(st, 7, f->before_at);
        sqlite3_bind_int64(st, 8, f->before_id);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct krc_store_row row;
        int stop;
        read_row(st, &row, NULL);
        stop = fn(&row, ud);
        if (stop != 0) {
            sqlite3_finalize(st);
            return stop;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        return db_fail(s, rc, "listing restarts", err);
    }
    return 0;
}

/* Everything krc_store_summarize reads of the restarts in a window, from the
 * covering index restarts_window alone (schema 4; cluster since schema 6):
 * ?1 since, ?2 the cluster (NULL: every cluster). */
#define WINDOW_SQL                                                                                 \
    "SELECT r.id, r.detected_at, r.namespace, r.workload_kind, r.workload_name, r.pod,"            \
    " r.pod_uid, r.cause, r.node, r.gpus, r.cluster FROM restarts r INDEXED BY restarts_window"    \
    " WHERE r.detected_at >= ?1 AND (?2 IS NULL OR r.cluster = ?2)"

static int sq_window(struct krc_store_be *s, int64_t since, const char *cluster,
                     krc_store_window_fn fn, void *ud, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, WINDOW_SQL, -1, &st, NULL);

    if (rc != SQLITE_OK) {
        return db_fail(s, rc, "summarising restarts", err);
    }
    sqlite3_bind_int64(st, 1, since);
    bind_text(st, 2, cluster);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct krc_store_window_row r;
        int stop;
        r.id = sqlite3_column_int64(st, 0);
        r.detected_at = sqlite3_column_int64(st, 1);
        r.namespace = col_text(st, 2);
        r.workload_kind = col_text(st, 3);
        r.workload_name = col_text(st, 4);
        r.pod = col_text(st, 5);
        r.pod_uid = col_text(st, 6);
        r.cause = col_text(st, 7);
        r.node = col_text(st, 8);
        r.gpus = (long)sqlite3_column_int64(st, 9);
        r.cluster = col_text(st, 10);
        if ((stop = fn(&r, ud)) != 0) {
            sqlite3_finalize(st);
            return stop;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(s, rc, "summarising restarts", err);
}

static int sq_get(struct krc_store_be *s, int64_t id, struct krc_store_entry **ret,
                  struct krc_error *err)
{
    struct krc_store_entry *e = NULL;
    struct strings k;
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;

    memset(&k, 0, sizeof(k));
    if ((rc = stmt_get(s, ST_GET_RESTART, &st, err)) < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        stmt_done(st);
        return krc_error_set(err, KRC_ENOTFOUND, "%s: no restart with id %lld", s->path,
                             (long long)id);
    }
    if (rc != SQLITE_ROW) {
        stmt_done(st);
        return db_fail(s, rc, "reading a restart", err);
    }
    e = krc_calloc(1, sizeof(*e));
    if (e == NULL) {
        stmt_done(st);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    read_row(st, &e->row, &k);
    e->message = keep(&k, col_text(st, N_RESTART_COLS));
    e->report_json = keep(&k, col_text(st, N_RESTART_COLS + 1));
    stmt_done(st);
    if (k.failed) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = stmt_get(s, ST_GET_MESSAGES, &st, err)) < 0) {
        goto fail;
    }
    sqlite3_bind_int64(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (e->n_messages == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            struct krc_store_message *nm = krc_realloc(e->messages, ncap * sizeof(*nm));
            if (nm == NULL) {
                k.failed = 1;
                break;
            }
            e->messages = nm;
            cap = ncap;
        }
        read_message(st, &e->messages[e->n_messages++], &k);
        if (k.failed) {
            break;
        }
    }
    stmt_done(st);
    if (k.failed) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto fail;
    }
    if (rc != SQLITE_DONE) {
        rc = db_fail(s, rc, "reading notifications", err);
        goto fail;
    }
    e->strings_ = k.items;
    e->n_strings_ = k.n;
    *ret = e;
    return 0;
fail:
    strings_cleanup(&k);
    krc_free(e->messages);
    krc_free(e);
    return rc;
}

/* ---- retention and health -------------------------------------------------------- */

/* One batch in its own short transaction; *ret_n rows deleted. */
static int prune_batch(struct krc_store_be *s, enum stmt id, int64_t a1, int64_t a2, int nargs,
                       int64_t *ret_n, struct krc_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(s, id, &st, err);

    if (rc < 0 || (rc = tx_begin(s, err)) < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, a1);
    if (nargs > 1) {
        sqlite3_bind_int64(st, 2, a2);
    }
    if ((rc = run_done(s, st, "pruning old restarts", err)) < 0) {
        tx_rollback(s);
        return rc;
    }
    *ret_n = sqlite3_changes(s->db);
    if ((rc = tx_commit(s, err)) < 0) {
        tx_rollback(s);
        return rc;
    }
    return 0;
}

static int sq_prune(struct krc_store_be *s, int64_t max_age_seconds, int64_t max_rows, int batch,
                    int64_t *ret_deleted, struct krc_error *err)
{
    int64_t deleted = 0;
    int64_t n = 0;
    int rc = 0;

    if (max_age_seconds > 0) {
        int64_t cutoff = krc_clock_now() - max_age_seconds;
        do {
            if ((rc = prune_batch(s, ST_PRUNE_AGE, cutoff, batch, 2, &n, err)) < 0) {
                goto out;
            }
            deleted += n;
        } while (n == batch);
        do {
            if ((rc = prune_batch(s, ST_PRUNE_ORPHANS, cutoff, batch, 2, &n, err)) < 0) {
                goto out;
            }
        } while (n == batch);
    }
    if (max_rows > 0) {
        for (;;) {
            int64_t count = 0;
            int64_t excess;
            if ((rc = query_int(s, ST_COUNT_RESTARTS, 0, &count, "counting restarts", err)) < 0) {
                goto out;
            }
            excess = count - max_rows;
            if (excess <= 0) {
                break;
            }
            if ((rc = prune_batch(s, ST_PRUNE_OLDEST, excess < batch ? excess : batch, 0, 1, &n,
                                  err)) < 0) {
                goto out;
            }
            deleted += n;
            if (n == 0) {
                break; /* only restarts with pending notifications are left */
            }
        }
    }
out:
    if (rc == 0 && deleted == 0) {
        /* Nothing (more) to prune: the pass is over and the next one is a
         * minute away, so the pages it cached are not worth keeping. */
        sqlite3_db_release_memory(s->db);
    }
    if (rc == 0 && ret_deleted != NULL) {
        *ret_deleted = deleted;
    }
    return rc;
}

static void sq_release_memory(struct krc_store_be *s)
{
    if (s != NULL && s->db != NULL) {
        sqlite3_db_release_memory(s->db);
    }
}

static int sq_stats(struct krc_store_be *s, struct krc_store_stats *ret, struct krc_error *err)
{
    struct krc_store_stats out;
    sqlite3_stmt *st = NULL;
    struct stat sb;
    int rc;

    memset(&out, 0, sizeof(out));
    if ((rc = query_int(s, ST_COUNT_RESTARTS, 0, &out.restarts, "counting restarts", err)) < 0 ||
        (rc = query_int(s, ST_STATS_OLDEST, 0, &out.oldest_detected_at, "reading statistics",
                        err)) < 0 ||
        (rc = query_int(s, ST_PAGES, 0, &out.db_bytes, "reading statistics", err)) < 0 ||
        (rc = stmt_get(s, ST_STATS_OUTBOX, &st, err)) < 0) {
        return rc;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t c = sqlite3_column_int64(st, 1);
        switch (krc_store_state_parse(col_text(st, 0))) {
        case KRC_STORE_DELIVERED:
            out.delivered = c;
            break;
        case KRC_STORE_FAILED:
            out.failed = c;
            break;
        case KRC_STORE_WITHDRAWN:
            out.withdrawn = c;
            break;
        case KRC_STORE_SUPERSEDED:
            out.superseded = c;
            break;
        default:
            out.pending = c;
            break;
        }
    }
    stmt_done(st);
    if (rc != SQLITE_DONE) {
        return db_fail(s, rc, "reading statistics", err);
    }
    if (strcmp(s->path, ":memory:") != 0) {
        struct krc_buf wal;
        krc_buf_init(&wal, PATH_MAX + 8);
        if (krc_buf_printf(&wal, "%s-wal", s->path) == 0 && stat(krc_buf_str(&wal), &sb) == 0) {
            out.wal_bytes = (int64_t)sb.st_size;
        }
        krc_buf_cleanup(&wal);
    }
    *ret = out;
    return 0;
}

/* fence and claim: never called (shared 0: store.c answers them). */
const struct krc_store_backend krc_store_sqlite_backend = {
    .name = "sqlite",
    .shared = 0,
    .open = sq_open,
    .close = sq_close,
    .record_many = sq_record_many,
    .find_restart = sq_find_restart,
    .last_diagnosed = sq_last_diagnosed,
    .set_decision = sq_set_decision,
    .add_outbox = sq_add_outbox,
    .mark_delivered = sq_mark_delivered,
    .journal_delivered = sq_journal_delivered,
    .journal_clear = sq_journal_clear,
    .mark_attempt = sq_mark_attempt,
    .mark_withdrawn = sq_mark_withdrawn,
    .mark_superseded = sq_mark_superseded,
    .fence = NULL,
    .claim = NULL,
    .pending = sq_pending,
    .thread_ts = sq_thread_ts,
    .list = sq_list,
    .get = sq_get,
    .window = sq_window,
    .prune = sq_prune,
    .release_memory = sq_release_memory,
    .stats = sq_stats,
};
