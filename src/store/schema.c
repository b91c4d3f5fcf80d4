/* The store's schema, for each dialect: its history of migrations and one
 * runner that applies them (krc/store/driver.h). A database records its
 * version (SQLite: schema_version, PostgreSQL: krc_schema_version; the two
 * are counted apart); opening it applies the migrations it lacks in one
 * transaction, a read-only open of an older one fails, as does any open of
 * a newer one. Add a migration at the end of its table (never edit one) and
 * raise the version (store.h: KRC_STORE_SCHEMA_VERSION for SQLite). */
#include <stdio.h>
#include <string.h>

#include "krc/store/driver.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"

/* migrations[v] takes a database from schema version v to v + 1: SQL, or a
 * function for what SQL alone cannot say. Both run inside the migration's
 * transaction (SQLite: with foreign keys off, so that a table rebuild does
 * not cascade). */
struct migration {
    const char *sql;
    int (*run)(struct krc_store *s, struct krc_error *err);
};

static int migrate_identity(struct krc_store *s, struct krc_error *err);

/* Both dialects' latest migration: the delivered message's reference
 * (Slack's ts, another destination's id) is not Slack's alone. */
#define RENAME_MESSAGE_REF "ALTER TABLE outbox RENAME COLUMN slack_ts TO message_ref;"

/* restarts_window is made again when a column it covers is added (SQLite 5 -> 6
 * and 7 -> 8, PostgreSQL 2 -> 3). */
#define DROP_WINDOW_INDEX "DROP INDEX restarts_window;"
/* Issue 26: the diagnosis was intentional (SQLite 7 -> 8, PostgreSQL 2 -> 3). */
#define ADD_INTENTIONAL "ALTER TABLE restarts ADD COLUMN intentional INTEGER NOT NULL DEFAULT 0;"
/* Issue 26, in the same (unreleased) migration: the device-seconds of GPU time
 * lost that this restart's accel note counted since the container's previous
 * restart (detect/accel_time.h), summed by restart_summary. */
#define ADD_ACCEL_LOST                                                                             \
    "ALTER TABLE restarts ADD COLUMN accel_seconds_lost BIGINT NOT NULL DEFAULT 0;"

/* Issue 27: incidents and changes (SQLite 8 -> 9, PostgreSQL 3 -> 4). The
 * id column is the dialect's; times are unix seconds. At most one open
 * incident per key (the partial UNIQUE index the join's upsert names). The
 * restart ids of an incident and a restart's incident_id are plain
 * references: retention keeps an incident's first and latest restart while
 * it is kept (sql.c, PRUNABLE) and prunes an ended incident with its age. */
#define INCIDENTS_V9(id)                                                                           \
    "CREATE TABLE incidents ("                                                                     \
    "  id " id ","                                                                                 \
    "  cluster TEXT NOT NULL DEFAULT '',"                                                          \
    "  namespace TEXT NOT NULL,"                                                                   \
    "  workload_kind TEXT NOT NULL,"                                                               \
    "  workload_name TEXT NOT NULL,"                                                               \
    "  container TEXT NOT NULL,"                                                                   \
    "  cause TEXT NOT NULL,"                                                                       \
    "  restarts BIGINT NOT NULL DEFAULT 1,"                                                        \
    "  first_restart_id BIGINT,"                                                                   \
    "  latest_restart_id BIGINT,"                                                                  \
    "  first_at BIGINT NOT NULL,"                                                                  \
    "  last_at BIGINT NOT NULL,"                                                                   \
    "  ended_at BIGINT,"                                                                           \
    "  thread_key TEXT,"                                                                           \
    "  last_reply_at BIGINT NOT NULL DEFAULT 0,"                                                   \
    "  last_update_at BIGINT NOT NULL DEFAULT 0,"                                                  \
    "  told_restarts BIGINT NOT NULL DEFAULT 0"                                                    \
    ");"                                                                                           \
    "CREATE UNIQUE INDEX incidents_open ON incidents (cluster, namespace, workload_kind,"          \
    "  workload_name, container, cause) WHERE ended_at IS NULL;"                                   \
    "CREATE INDEX incidents_namespace ON incidents (namespace, id);"                               \
    "CREATE INDEX incidents_workload ON incidents (workload_name, id);"                            \
    "CREATE INDEX incidents_first ON incidents (first_restart_id);"                                \
    "CREATE INDEX incidents_latest ON incidents (latest_restart_id);"                              \
    "CREATE INDEX incidents_ended ON incidents (ended_at) WHERE ended_at IS NOT NULL;"             \
    "ALTER TABLE restarts ADD COLUMN incident_id BIGINT;"                                          \
    "CREATE INDEX restarts_incident ON restarts (incident_id);"                                    \
    "CREATE TABLE changes ("                                                                       \
    "  id " id ","                                                                                 \
    "  cluster TEXT NOT NULL DEFAULT '',"                                                          \
    "  namespace TEXT NOT NULL,"                                                                   \
    "  kind TEXT NOT NULL,"                                                                        \
    "  name TEXT NOT NULL,"                                                                        \
    "  revision TEXT NOT NULL,"                                                                    \
    "  at BIGINT NOT NULL,"                                                                        \
    "  manager TEXT,"                                                                              \
    "  summary TEXT,"                                                                              \
    "  detail_json TEXT,"                                                                          \
    "  recorded_at BIGINT NOT NULL,"                                                               \
    "  UNIQUE (cluster, namespace, kind, name, revision)"                                          \
    ");"                                                                                           \
    "CREATE INDEX changes_recorded ON changes (recorded_at);"

/* The outbox's indexes as schema 1 made them, made again by the rebuild of
 * 4 -> 5 (SQLite); PostgreSQL's first has the same outbox_restart. */
#define OUTBOX_RESTART_INDEX "CREATE INDEX outbox_restart ON outbox (restart_id);"
#define OUTBOX_INDEXES_V1                                                                          \
    OUTBOX_RESTART_INDEX                                                                           \
    "CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending';"                          \
    "CREATE INDEX outbox_thread ON outbox (thread_key, delivered_at)"                              \
    "  WHERE slack_ts IS NOT NULL;"

/* ---- SQLite ----------------------------------------------------------------------- */

/* A restart's identity in SQL, from the finishedAt, containerID and
 * restartCount of its last termination (docs/design/detection-and-identity.md,
 * "Identity"): 't<finishedAt>/<containerID>/<restartCount>' when the
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

static const struct migration sqlite_migrations[] = {
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
     ");" OUTBOX_INDEXES_V1,
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
     "ALTER TABLE outbox_v5 RENAME TO outbox;" OUTBOX_INDEXES_V1,
     NULL},
    /* 5 -> 6 (issue 17): the cluster that recorded a restart (clusterName;
     * '' when unnamed, as are the rows recorded before), so that lists and
     * summaries can tell clusters apart; restarts_window gains it so that a
     * window of one cluster is still read from the index alone. The outbox
     * has no cluster, and retention and counts take the whole file: a
     * SQLite file is one replica's own (whatever clusterName it had when it
     * recorded a row). */
    {"ALTER TABLE restarts ADD COLUMN cluster TEXT NOT NULL DEFAULT '';" DROP_WINDOW_INDEX
     "CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,"
     "  workload_name, pod, pod_uid, cause, node, gpus, cluster);",
     NULL},
    /* 6 -> 7: the delivered message's reference (Slack's ts, another
     * destination's id) is not Slack's alone: outbox.slack_ts becomes
     * outbox.message_ref (the partial index outbox_thread follows). */
    {RENAME_MESSAGE_REF, NULL},
    /* 7 -> 8 (issue 26): whether the diagnosis was intentional (a restart rule,
     * the stop signal: "intentional": true in the report), so that
     * restart_summary counts them apart from the index alone; restarts
     * recorded before count as not intentional. And the GPU time lost that
     * the restart counted (accel_seconds_lost), which restart_summary sums. */
    {ADD_INTENTIONAL ADD_ACCEL_LOST DROP_WINDOW_INDEX
     "CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,"
     "  workload_name, pod, pod_uid, cause, node, gpus, cluster, intentional,"
     "  accel_seconds_lost);",
     NULL},
    /* 8 -> 9 (issue 27): incidents and changes; a workload's changes are
     * read by (namespace, kind, name) newest first (SQLite's file is one
     * replica's: no cluster in the index, as in its other indexes) */
    {INCIDENTS_V9("INTEGER PRIMARY KEY") "CREATE INDEX changes_object ON changes (namespace, kind, "
                                         "name, at);",
     NULL},
};

_Static_assert(sizeof(sqlite_migrations) / sizeof(sqlite_migrations[0]) == KRC_STORE_SCHEMA_VERSION,
               "one migration per schema version");

/* ---- PostgreSQL ------------------------------------------------------------------- */

/* PostgreSQL schema versions (krc_schema_version), counted apart from
 * SQLite's: version 1 is what SQLite reached at its version 5, with the
 * cluster, the fence and the claim. Append a migration, never edit one. */
static const struct migration pg_migrations[] = {
    /* 0 -> 1 */
    {"CREATE TABLE restarts ("
     "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  cluster TEXT NOT NULL,"
     "  pod_uid TEXT NOT NULL,"
     "  container TEXT NOT NULL,"
     "  restart_count INTEGER NOT NULL,"
     "  namespace TEXT NOT NULL,"
     /* byte order, so that a name prefix is an index range (LIKE 'p%') */
     "  pod TEXT COLLATE \"C\" NOT NULL,"
     "  workload_kind TEXT,"
     "  workload_name TEXT,"
     "  node TEXT,"
     "  cause TEXT NOT NULL,"
     "  exit_code INTEGER,"
     "  signal INTEGER NOT NULL DEFAULT 0,"
     "  reason TEXT,"
     "  started_at BIGINT NOT NULL DEFAULT 0,"
     "  finished_at BIGINT NOT NULL DEFAULT 0,"
     "  detected_at BIGINT NOT NULL,"
     "  decision TEXT NOT NULL,"
     "  summary TEXT,"
     "  confidence TEXT,"
     "  gpus BIGINT NOT NULL DEFAULT 0,"
     "  identity TEXT NOT NULL,"
     "  UNIQUE (cluster, pod_uid, container, identity)"
     ");"
     "CREATE INDEX restarts_list ON restarts (cluster, detected_at DESC, id DESC);"
     "CREATE INDEX restarts_all ON restarts (detected_at DESC, id DESC);"
     "CREATE INDEX restarts_namespace ON restarts (namespace, detected_at DESC, id DESC);"
     "CREATE INDEX restarts_pod ON restarts (pod, detected_at DESC, id DESC);"
     "CREATE INDEX restarts_cause ON restarts (cause, detected_at DESC, id DESC);"
     "CREATE INDEX restarts_workload ON restarts (workload_name, detected_at DESC, id DESC);"
     "CREATE INDEX restarts_window ON restarts (cluster, detected_at) INCLUDE (id, namespace,"
     "  workload_kind, workload_name, pod, pod_uid, cause, node, gpus);"
     "CREATE TABLE reports ("
     "  restart_id BIGINT PRIMARY KEY REFERENCES restarts (id) ON DELETE CASCADE,"
     "  message TEXT,"
     "  report_json TEXT"
     ");"
     "CREATE TABLE outbox ("
     "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  cluster TEXT NOT NULL,"
     "  restart_id BIGINT REFERENCES restarts (id) ON DELETE CASCADE,"
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
     "  created_at BIGINT NOT NULL,"
     "  updated_at BIGINT NOT NULL,"
     "  delivered_at BIGINT,"
     "  slack_ts TEXT,"
     "  claim_token BIGINT,"
     "  claimed_at BIGINT"
     ");" OUTBOX_RESTART_INDEX "CREATE INDEX outbox_state ON outbox (cluster, state, id);"
     "CREATE INDEX outbox_thread ON outbox (cluster, thread_key, delivered_at)"
     "  WHERE slack_ts IS NOT NULL;"
     "CREATE TABLE krc_fences (cluster TEXT PRIMARY KEY, token BIGINT NOT NULL);"
     /* $.log.bytes of a stored report, NULL when it is not JSON (SQLite's
      * json_valid/json_extract) */
     "CREATE FUNCTION krc_log_bytes(doc TEXT) RETURNS NUMERIC LANGUAGE plpgsql IMMUTABLE AS $f$"
     " BEGIN RETURN (doc::jsonb #>> '{log,bytes}')::numeric;"
     " EXCEPTION WHEN others THEN RETURN NULL; END $f$;",
     NULL},
    /* 1 -> 2: outbox.slack_ts becomes outbox.message_ref (as SQLite 6 -> 7) */
    {RENAME_MESSAGE_REF, NULL},
    /* 2 -> 3: restarts.intentional and restarts.accel_seconds_lost, in
     * restarts_window too (as SQLite 7 -> 8) */
    {ADD_INTENTIONAL ADD_ACCEL_LOST DROP_WINDOW_INDEX
     "CREATE INDEX restarts_window ON restarts (cluster, detected_at) INCLUDE (id, namespace,"
     "  workload_kind, workload_name, pod, pod_uid, cause, node, gpus, intentional,"
     "  accel_seconds_lost);",
     NULL},
    /* 3 -> 4: incidents and changes (as SQLite 8 -> 9), a cluster's
     * workload's changes read newest first */
    {INCIDENTS_V9(
         "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY") "CREATE INDEX changes_object ON "
                                                                "changes (cluster, namespace, "
                                                                "kind, name, at);",
     NULL},
};
#define PG_SCHEMA_VERSION ((int)(sizeof(pg_migrations) / sizeof(pg_migrations[0])))

/* Advisory lock key ("krcschem" in ASCII): the migration's transaction
 * lock, so that replicas starting together do not race. */
#define LOCK_SCHEMA "7741542372566264173"

/* ---- the runner ------------------------------------------------------------------- */

struct schema {
    const struct migration *migrations;
    int version;
    /* 1 when the version table exists */
    const char *has_version_sql;
    /* when it does not: the number of tables that are not krc's (NULL: not asked) */
    const char *foreign_sql;
    const char *version_sql;
    /* outside the transaction, before and after (SQLite: foreign keys off) */
    const char *before_tx, *after_tx;
    /* first in the transaction: the lock and the version table */
    const char *lock_sql;
    const char *set_version_sql; /* $1 the version */
    const char *empty_msg;       /* read-only open of a database without the schema */
    const char *kind;            /* "file", "database" */
};

static const struct schema schemas[KRC_SQL_DIALECTS] = {
    [KRC_SQL_SQLITE] =
        {
            .migrations = sqlite_migrations,
            .version = KRC_STORE_SCHEMA_VERSION,
            .has_version_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
                               "'schema_version'",
            .foreign_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT "
                           "LIKE 'sqlite_%'",
            .version_sql = "SELECT max(version) FROM schema_version",
            /* A table rebuild drops the old table: with foreign keys on, that
             * would delete the reports and outbox rows that point to it. The
             * pragma has no effect inside a transaction, so it is set around
             * it; migrate_identity checks the keys before the commit. */
            .before_tx = "PRAGMA foreign_keys = OFF",
            .after_tx = KRC_SQL_FOREIGN_KEYS_ON,
            .lock_sql = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL); "
                        "INSERT INTO schema_version (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 "
                        "FROM schema_version);",
            .set_version_sql = "UPDATE schema_version SET version = $1",
            .empty_msg = "%s: empty database",
            .kind = "file",
        },
    [KRC_SQL_PG] =
        {
            .migrations = pg_migrations,
            .version = PG_SCHEMA_VERSION,
            .has_version_sql = "SELECT (to_regclass('krc_schema_version') IS NOT NULL)::int",
            .version_sql = "SELECT max(version) FROM krc_schema_version",
            /* a migration (an index on a large table) and the wait for another
             * replica's may take longer than a statement may */
            .lock_sql = "SET LOCAL statement_timeout = 0; SELECT pg_advisory_xact_lock(" LOCK_SCHEMA
                        "); CREATE TABLE IF NOT EXISTS krc_schema_version (version INTEGER NOT "
                        "NULL)",
            /* one row, whether or not the version table had one */
            .set_version_sql = "WITH d AS (DELETE FROM krc_schema_version) INSERT INTO "
                               "krc_schema_version (version) VALUES ($1)",
            .empty_msg = "%s: the database has no krc schema (run krc run once with this --db to "
                         "create it)",
            .kind = "database",
        },
};

/* The text of one column of the first row of `sql` (owned, krc_free), or
 * NULL in *ret when there is no row. */
static int query_text(struct krc_store *s, const char *sql, char **ret, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = s->drv->prepare(s->c, KRC_SQL_DYNAMIC, sql, 0, &st, err);

    *ret = NULL;
    if (rc < 0) {
        return rc;
    }
    if ((rc = s->drv->step(st, "reading the schema", err)) == 1 && COL_TEXT(s, st, 0) != NULL &&
        (*ret = krc_strdup(COL_TEXT(s, st, 0))) == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    s->drv->done(st);
    return rc < 0 ? rc : 0;
}

static int query_int(struct krc_store *s, const char *sql, int64_t *ret, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = s->drv->prepare(s->c, KRC_SQL_DYNAMIC, sql, 0, &st, err);

    *ret = 0;
    return rc < 0 ? rc : krc_sql_int(s, st, ret, "reading the schema version", err);
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
static int migrate_identity(struct krc_store *s, struct krc_error *err)
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
        rc = krc_error_set(err, KRC_EPARSE, "%s: table restarts has no columns", s->display);
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
                           s->display);
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
    if ((rc = s->drv->exec(s->c, krc_buf_str(&sql), "rebuilding the restarts table", err)) < 0) {
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
                           s->display, indexes);
    }
out:
    krc_free(table);
    krc_free(indexes);
    krc_free(cols);
    krc_buf_cleanup(&sql);
    return rc;
}

/* The schema's version, 0 when there is none. */
static int read_version(struct krc_store *s, const struct schema *sc, int64_t *ret,
                        struct krc_error *err)
{
    int64_t has = 0;
    int rc = query_int(s, sc->has_version_sql, &has, err);

    *ret = 0;
    if (rc < 0 || has) {
        return rc < 0 ? rc : query_int(s, sc->version_sql, ret, err);
    }
    if (sc->foreign_sql != NULL && (rc = query_int(s, sc->foreign_sql, &has, err)) == 0 && has) {
        return krc_error_set(err, KRC_EPARSE,
                             "%s: an SQLite database but not krc's (no schema_version "
                             "table); use another --db file",
                             s->display);
    }
    return rc;
}

static int check_newer(const struct krc_store *s, const struct schema *sc, int64_t v,
                       struct krc_error *err)
{
    if (v > sc->version) {
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "%s: schema version %lld is newer than this krc understands (%d): "
                             "it was written by a newer krc; upgrade krc or use another --db",
                             s->display, (long long)v, sc->version);
    }
    return 0;
}

/* The write transaction: decided inside it, for another process may be
 * migrating at the same moment (PostgreSQL: the replica that waited for the
 * lock finds the work done). */
static int migrate_tx(struct krc_store *s, const struct schema *sc, struct krc_error *err)
{
    int64_t v = 0;
    int rc;

    if ((rc = s->drv->begin(s->c, err)) < 0) {
        return rc;
    }
    if ((rc = s->drv->exec(s->c, sc->lock_sql, "taking the schema lock", err)) < 0 ||
        (rc = read_version(s, sc, &v, err)) < 0 || (rc = check_newer(s, sc, v, err)) < 0) {
        goto rollback;
    }
    for (; v < sc->version; v++) {
        const struct migration *m = &sc->migrations[v];
        struct krc_sql_stmt *st = NULL;
        char what[64];
        snprintf(what, sizeof(what), "migrating the schema to version %lld", (long long)v + 1);
        if (m->sql != NULL && (rc = s->drv->exec(s->c, m->sql, what, err)) < 0) {
            goto rollback;
        }
        if (m->run != NULL && (rc = m->run(s, err)) < 0) {
            krc_error_prefix(err, "%s", what);
            goto rollback;
        }
        if ((rc = krc_sql_prepare_text(s, KRC_SQL_DYNAMIC, sc->set_version_sql, 0, &st, err)) < 0) {
            goto rollback;
        }
        ST_INT(s, st, 1, v + 1);
        if ((rc = krc_sql_run(s, st, what, NULL, err)) < 0) {
            goto rollback;
        }
    }
    if ((rc = s->drv->commit(s->c, err)) < 0) {
        goto rollback;
    }
    return 0;
rollback:
    s->drv->rollback(s->c);
    return rc;
}

int krc_store_migrate(struct krc_store *s, struct krc_error *err)
{
    const struct schema *sc = &schemas[s->drv->dialect];
    int64_t v = 0;
    int rc = read_version(s, sc, &v, err);

    if (rc < 0 || (rc = check_newer(s, sc, v, err)) < 0 || v == sc->version) {
        return rc;
    }
    if (s->flags & KRC_STORE_READONLY) {
        if (v == 0) {
            return krc_error_set(err, KRC_ENOTFOUND, sc->empty_msg, s->display);
        }
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "%s: schema version %lld is older than this krc's (%d) and the "
                             "%s is opened read-only; run krc run once to upgrade it",
                             s->display, (long long)v, sc->version, sc->kind);
    }
    if (sc->before_tx != NULL &&
        (rc = s->drv->exec(s->c, sc->before_tx, "configuring the connection", err)) < 0) {
        return rc;
    }
    rc = migrate_tx(s, sc, err);
    if (sc->after_tx != NULL &&
        s->drv->exec(s->c, sc->after_tx, "configuring the connection", rc < 0 ? NULL : err) < 0 &&
        rc == 0) {
        rc = KRC_EIO;
    }
    return rc;
}
