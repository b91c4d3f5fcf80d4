/* The statements of the SQL layer, written once for both drivers
 * (krc/store/driver.h): with $1..$n placeholders and {fragments} that each
 * dialect fills in, expanded once per process and dialect. $1 is the
 * store's cluster wherever a statement is scoped to it ({scope} and its
 * kin), so that PostgreSQL, whose database many clusters share, filters on
 * it, and SQLite, whose file is one replica's own, does not. */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include "krc/store/driver.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"

/* Restarts that may be deleted ($2 the pin time): no pending notification,
 * and not the first or latest restart of an incident that is open or ended
 * at or after $2 (its evidence stays while the incident is kept). */
#define PINNED_AS(col)                                                                             \
    "NOT EXISTS (SELECT 1 FROM incidents i WHERE i." col " = r.id AND (i.ended_at IS NULL OR "     \
    "i.ended_at >= $2))"
#define PRUNABLE                                                                                   \
    "NOT EXISTS (SELECT 1 FROM outbox o WHERE o.restart_id = r.id AND o.state = 'pending') "       \
    "AND " PINNED_AS("first_restart_id") " AND " PINNED_AS("latest_restart_id")
/* What a restart does to its incident's counters: $2 the restart, $3 its
 * detected_at, $4 the update's time (0: none), $5 the thread reply's. */
#define INCIDENT_COUNT_SET(t)                                                                      \
    "restarts = " t "restarts + 1, last_at = CASE WHEN CAST($3 AS BIGINT) > " t "last_at THEN $3 " \
    "ELSE " t                                                                                      \
    "last_at END, latest_restart_id = $2, last_update_at = CASE WHEN CAST($4 AS BIGINT) "          \
    "> 0 THEN $4 ELSE " t "last_update_at END, last_reply_at = CASE WHEN CAST($5 AS BIGINT) > 0 "  \
    "THEN $5 ELSE " t "last_reply_at END, told_restarts = CASE WHEN CAST($4 AS BIGINT) > 0 OR "    \
    "CAST($5 AS BIGINT) > 0 THEN " t "restarts + 1 ELSE " t "told_restarts END"
/* The outbox rows of an incident's restarts. */
#define INCIDENT_OUTBOX                                                                            \
    "FROM outbox WHERE restart_id IN (SELECT id FROM restarts WHERE incident_id = $1)"
/* Everything krc_store_summarize reads of the restarts in a window, from the
 * covering index restarts_window alone: $1 since, $2 the cluster. */
#define WINDOW_SQL                                                                                 \
    "SELECT r.id, r.detected_at, r.namespace, r.workload_kind, r.workload_name, r.pod,"            \
    " r.pod_uid, r.cause, r.node, r.gpus, r.cluster, r.intentional, r.accel_seconds_lost"          \
    " FROM restarts r{window_hint}"                                                                \
    " WHERE r.detected_at >= $1"

static const char *const sql_text[KRC_SQL_N_FIXED] = {
    [KRC_SQL_INSERT_RESTART] = KRC_SQL_INSERT_RESTART_TEXT,
    [KRC_SQL_FIND_RESTART] = "SELECT id FROM restarts WHERE {scope}pod_uid = $2 AND container = $3 "
                             "AND identity = $4",
    [KRC_SQL_RESTART_EXISTS] = "SELECT 1 FROM restarts WHERE id = $1",
    [KRC_SQL_INSERT_REPORT] =
        "INSERT INTO reports (restart_id, message, report_json) VALUES ($1, $2, $3)",
    [KRC_SQL_SET_DECISION] = "UPDATE restarts SET decision = $2 WHERE id = $1",
    [KRC_SQL_SET_MESSAGE] = "INSERT INTO reports (restart_id, message) VALUES ($1, $2) "
                            "ON CONFLICT (restart_id) DO UPDATE SET message = excluded.message",
    [KRC_SQL_AMEND_RESTART] =
        "UPDATE restarts SET cause = $2, summary = $3, confidence = $4 WHERE id = $1",
    [KRC_SQL_SET_REPORT_JSON] = "INSERT INTO reports (restart_id, report_json) VALUES ($1, $2) "
                                "ON CONFLICT (restart_id) DO UPDATE SET report_json = "
                                "excluded.report_json",
    [KRC_SQL_INSERT_OUTBOX] =
        "INSERT INTO outbox ({ocol}restart_id, kind, destination, channel, thread_key, body, "
        "fallback, created_at, updated_at) VALUES ({oval}$2, $3, $4, $5, $6, $7, $8, $9, $9)"
        "{returning_id}",
    [KRC_SQL_MARK_DELIVERED] = "UPDATE outbox SET state = 'delivered', delivered_at = $2, "
                               "updated_at = $2, message_ref = $3, attempts = attempts + 1 "
                               "WHERE id = $1",
    [KRC_SQL_MARK_ATTEMPT] = "UPDATE outbox SET attempts = attempts + 1, last_error = $3, "
                             "updated_at = $2, state = CASE WHEN $4 <> 0 THEN 'failed' ELSE "
                             "state END WHERE id = $1",
    [KRC_SQL_MARK_WITHDRAWN] = "UPDATE outbox SET state = 'withdrawn', updated_at = $2 "
                               "WHERE id = $1 AND state = 'pending'",
    [KRC_SQL_MARK_SUPERSEDED] = "UPDATE outbox SET state = 'superseded', updated_at = $2 "
                                "WHERE id = $1 AND state = 'pending'",
    [KRC_SQL_JOURNAL_APPLY] = "UPDATE outbox SET state = 'delivered', delivered_at = $2, "
                              "updated_at = $2, message_ref = coalesce($3, message_ref), "
                              "attempts = attempts + 1 WHERE id = $1 AND state = 'pending'",
    [KRC_SQL_PENDING_NEXT] = "SELECT " OUTBOX_COLS " FROM outbox WHERE {scope}state = 'pending' "
                             "AND id > $2 ORDER BY id LIMIT 1",
    [KRC_SQL_THREAD_REF] = "SELECT message_ref, channel FROM outbox WHERE {scope}thread_key = $2 "
                           "AND kind = 'alert' AND state = 'delivered' AND message_ref IS NOT "
                           "NULL ORDER BY delivered_at DESC, id DESC LIMIT 1",
    [KRC_SQL_GET_RESTART] = "SELECT " RESTART_COLS ", p.message, p.report_json FROM restarts r "
                            "LEFT JOIN reports p ON p.restart_id = r.id WHERE r.id = $1",
    [KRC_SQL_GET_MESSAGES] = "SELECT " OUTBOX_COLS " FROM outbox WHERE restart_id = $1 ORDER BY id",
    [KRC_SQL_PRUNE_AGE] =
        "DELETE FROM restarts WHERE id IN (SELECT r.id FROM restarts r WHERE "
        "{rscope}r.detected_at < $2 AND " PRUNABLE " ORDER BY r.detected_at, r.id LIMIT $3)",
    [KRC_SQL_PRUNE_ORPHANS] = "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE "
                              "{scope}restart_id IS NULL AND state != 'pending' AND created_at < "
                              "$2 ORDER BY id LIMIT $3)",
    [KRC_SQL_PRUNE_OLDEST] = "DELETE FROM restarts WHERE id IN (SELECT r.id FROM restarts r WHERE "
                             "{rscope}" PRUNABLE " ORDER BY r.detected_at, r.id LIMIT $3)",
    [KRC_SQL_COUNT_RESTARTS] = "SELECT count(*) FROM restarts{where_scope}",
    [KRC_SQL_STATS_OLDEST] = "SELECT min(detected_at) FROM restarts{where_scope}",
    [KRC_SQL_STATS_OUTBOX] = "SELECT state, count(*) FROM outbox{where_scope} GROUP BY state",
    [KRC_SQL_DB_BYTES] = "{db_bytes}",
    [KRC_SQL_FENCE] = "INSERT INTO krc_fences (cluster, token) VALUES ($1, $2) ON CONFLICT "
                      "(cluster) DO UPDATE SET token = GREATEST(krc_fences.token, "
                      "excluded.token) RETURNING token",
    /* SELECT ... FOR UPDATE SKIP LOCKED: a row another replica is claiming is
     * not waited for; shared drivers only */
    [KRC_SQL_CLAIM] =
        "WITH f AS (SELECT coalesce((SELECT token FROM krc_fences WHERE cluster = $1), 0) AS "
        "token), c AS (SELECT o.id FROM outbox o WHERE o.id = $2 AND o.cluster = $1 AND o.state "
        "= 'pending' FOR UPDATE SKIP LOCKED) UPDATE outbox o SET claim_token = $3, claimed_at = "
        "$4 FROM c, f WHERE o.id = c.id AND f.token <= $3 AND (o.claim_token IS NULL OR "
        "o.claim_token <= $3) RETURNING o.id",
    [KRC_SQL_WINDOW] = WINDOW_SQL,
    [KRC_SQL_WINDOW_CLUSTER] = WINDOW_SQL " AND r.cluster = $2",
    /* $1 the incident, $2..$5 as INCIDENT_COUNT_SET; nothing when it ended */
    [KRC_SQL_INCIDENT_JOIN] = "UPDATE incidents SET " INCIDENT_COUNT_SET(
        "") " WHERE id = $1 AND ended_at IS NULL RETURNING id, restarts",
    /* $1 the cluster, $2..$5 as INCIDENT_COUNT_SET, $6.. its key, $11 the
     * thread: a new incident, or the open one of its key joined */
    [KRC_SQL_INCIDENT_OPEN] =
        "INSERT INTO incidents (cluster, namespace, workload_kind, workload_name, container, "
        "cause, restarts, first_restart_id, latest_restart_id, first_at, last_at, thread_key, "
        "last_update_at, last_reply_at, told_restarts) VALUES ($1, $6, $7, $8, $9, $10, 1, $2, $2, "
        "$3, $3, $11, $4, $5, CASE WHEN CAST($4 AS BIGINT) > 0 OR CAST($5 AS BIGINT) > 0 THEN 1 "
        "ELSE 0 END) ON CONFLICT (cluster, namespace, workload_kind, workload_name, container, "
        "cause) WHERE ended_at IS NULL DO UPDATE SET " INCIDENT_COUNT_SET(
            "incidents.") " RETURNING id, restarts",
    /* The same as one statement (drivers with one_statement_record: data-modifying
     * WITH), $12 the incident to join (0: none): join it, else open or join
     * the open one of the key, and set the restart's incident_id. */
    [KRC_SQL_INCIDENT_RECORD] = "WITH j AS (UPDATE incidents SET " INCIDENT_COUNT_SET(
        "") " WHERE id = $12 AND ended_at IS NULL RETURNING id, restarts), n AS (INSERT INTO "
            "incidents (cluster, namespace, workload_kind, workload_name, container, cause, "
            "restarts, first_restart_id, latest_restart_id, first_at, last_at, thread_key, "
            "last_update_at, last_reply_at, told_restarts) SELECT CAST($1 AS TEXT), CAST($6 "
            "AS TEXT), CAST($7 AS TEXT), CAST($8 AS TEXT), CAST($9 AS TEXT), CAST($10 AS "
            "TEXT), 1, $2, $2, $3, $3, CAST($11 AS TEXT), $4, $5, CASE WHEN CAST($4 AS "
            "BIGINT) > 0 OR CAST($5 AS BIGINT) > 0 THEN 1 ELSE 0 END WHERE NOT EXISTS "
            "(SELECT 1 FROM j) ON CONFLICT (cluster, namespace, workload_kind, workload_name, "
            "container, cause) WHERE ended_at IS NULL DO UPDATE SET " INCIDENT_COUNT_SET(
                "incidents.") " RETURNING id, restarts), a AS (SELECT id, restarts FROM j "
                              "UNION ALL SELECT id, restarts FROM n), u AS (UPDATE restarts "
                              "SET incident_id = a.id FROM a WHERE restarts.id = $2) SELECT "
                              "id, restarts FROM a",
    [KRC_SQL_SET_INCIDENT] = "UPDATE restarts SET incident_id = $2 WHERE id = $1",
    [KRC_SQL_RESTART_INCIDENT] = "SELECT i.id, i.restarts FROM restarts r JOIN incidents i ON i.id "
                                 "= r.incident_id WHERE r.id = $1",
    [KRC_SQL_INCIDENTS_OPEN] = "SELECT " INCIDENT_COLS " FROM incidents WHERE {scope}ended_at IS "
                               "NULL ORDER BY id",
    [KRC_SQL_INCIDENT_END] = "UPDATE incidents SET ended_at = $2 WHERE id = $1 AND ended_at IS "
                             "NULL RETURNING coalesce(latest_restart_id, 0)",
    [KRC_SQL_INCIDENT_EXISTS] = "SELECT 1 FROM incidents WHERE id = $1",
    [KRC_SQL_GET_INCIDENT] = "SELECT " INCIDENT_COLS " FROM incidents WHERE id = $1",
    [KRC_SQL_INCIDENT_MESSAGES] = "SELECT " OUTBOX_COLS " " INCIDENT_OUTBOX " ORDER BY id LIMIT $2",
    [KRC_SQL_INCIDENT_MESSAGE_COUNT] = "SELECT count(*) " INCIDENT_OUTBOX,
    [KRC_SQL_INSERT_CHANGE] = "INSERT INTO changes (cluster, namespace, kind, name, revision, at, "
                              "manager, summary, detail_json, recorded_at) VALUES ($1, $2, $3, "
                              "$4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING{returning_id}",
    /* ended before $2, or ended with no restart left (their restarts were
     * pruned: historyMaxRows without historyMaxAge) */
    [KRC_SQL_PRUNE_INCIDENTS] =
        "DELETE FROM incidents WHERE id IN (SELECT id FROM incidents WHERE {scope}ended_at IS NOT "
        "NULL AND (ended_at < $2 OR NOT EXISTS (SELECT 1 FROM restarts r WHERE r.incident_id = "
        "incidents.id)) ORDER BY id LIMIT $3)",
    [KRC_SQL_PRUNE_CHANGES] = "DELETE FROM changes WHERE id IN (SELECT id FROM changes WHERE "
                              "{scope}recorded_at < $2 ORDER BY recorded_at LIMIT $3)",
};

static int expand_into(struct krc_buf *out, const struct krc_sql_driver *drv, const char *tmpl);

static const char *const frag_names[KRC_SQL_N_FRAGS] = {
    [KRC_SQL_F_SCOPE] = "scope",
    [KRC_SQL_F_RSCOPE] = "rscope",
    [KRC_SQL_F_WHERE_SCOPE] = "where_scope",
    [KRC_SQL_F_OUTBOX_COL] = "ocol",
    [KRC_SQL_F_OUTBOX_VAL] = "oval",
    [KRC_SQL_F_LOG_BYTES] = "log_bytes",
    [KRC_SQL_F_WINDOW_HINT] = "window_hint",
    [KRC_SQL_F_DB_BYTES] = "db_bytes",
    [KRC_SQL_F_RETURNING_ID] = "returning_id",
};

/* {name} into the dialect's fragment. */
static int append_frag(struct krc_buf *out, const struct krc_sql_driver *drv, const char *name,
                       size_t len)
{
    for (int f = 0; f < KRC_SQL_N_FRAGS; f++) {
        if (frag_names[f] != NULL && drv->frags[f] != NULL && strlen(frag_names[f]) == len &&
            strncmp(frag_names[f], name, len) == 0) {
            return expand_into(out, drv, drv->frags[f]);
        }
    }
    return -1;
}

/* tmpl with its {fragments} (which may hold $n themselves) and, for SQLite,
 * $n as ?n outside quoted text, appended to out. */
static int expand_into(struct krc_buf *out, const struct krc_sql_driver *drv, const char *tmpl)
{
    const char *p = tmpl;
    int sqlite = drv->dialect == KRC_SQL_SQLITE;
    int rc = 0;

    while (rc == 0 && *p != '\0') {
        size_t n = strcspn(p, sqlite ? "{$'\"" : "{'\"");
        const char *end;
        rc = krc_buf_append(out, p, n);
        p += n;
        if (rc < 0 || *p == '\0') {
            break;
        }
        if (*p == '{' && (end = strchr(p, '}')) != NULL) {
            rc = append_frag(out, drv, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else if (*p == '\'' || *p == '"') {
            end = strchr(p + 1, *p);
            n = end != NULL ? (size_t)(end - p) + 1 : strlen(p);
            rc = krc_buf_append(out, p, n);
            p += n;
        } else {
            /* $n as ?n; any other '$' as it is */
            rc = krc_buf_append_char(out, p[1] >= '0' && p[1] <= '9' ? '?' : *p);
            p++;
        }
    }
    return rc;
}

char *krc_sql_expand(const struct krc_sql_driver *drv, const char *tmpl)
{
    struct krc_buf out;
    char *r = NULL;

    krc_buf_init(&out, 2 * strlen(tmpl) + 1024);
    if (expand_into(&out, drv, tmpl) == 0) {
        r = krc_buf_take(&out);
    }
    krc_buf_cleanup(&out);
    return r;
}

/* The fixed statements of each dialect, expanded once per process. */
static char *expanded[KRC_SQL_DIALECTS][KRC_SQL_N_FIXED];
static pthread_once_t expand_once[KRC_SQL_DIALECTS] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void expand_all(const struct krc_sql_driver *drv)
{
    for (int i = 0; i < KRC_SQL_N_FIXED; i++) {
        expanded[drv->dialect][i] = krc_sql_expand(drv, sql_text[i]);
    }
}

static void expand_sqlite(void)
{
    expand_all(&krc_sql_sqlite);
}

static void expand_pg(void)
{
    expand_all(&krc_sql_pg);
}

int krc_sql_prepare(struct krc_store *s, int id, struct krc_sql_stmt **ret, struct krc_error *err)
{
    return krc_sql_prepare_as(s, id, 0, ret, err);
}

int krc_sql_prepare_as(struct krc_store *s, int id, unsigned flags, struct krc_sql_stmt **ret,
                       struct krc_error *err)
{
    enum krc_sql_dialect d = s->drv->dialect;

    pthread_once(&expand_once[d], d == KRC_SQL_SQLITE ? expand_sqlite : expand_pg);
    if (expanded[d][id] == NULL) {
        return krc_error_set(err, KRC_ENOMEM,
                             "out of memory or an unknown {fragment} preparing statement %d", id);
    }
    return s->drv->prepare(s->c, id, expanded[d][id], flags, ret, err);
}

int krc_sql_prepare_text(struct krc_store *s, int id, const char *tmpl, unsigned flags,
                         struct krc_sql_stmt **ret, struct krc_error *err)
{
    char *sql = krc_sql_expand(s->drv, tmpl);
    int rc;

    if (sql == NULL) {
        return krc_error_set(err, KRC_ENOMEM,
                             "out of memory or an unknown {fragment} preparing statement %d", id);
    }
    rc = s->drv->prepare(s->c, id, sql, flags, ret, err);
    krc_free(sql);
    return rc;
}

void krc_sql_query_init(struct krc_sql_query *q, const char *head)
{
    krc_buf_init(&q->sql, 16384);
    q->failed = 0;
    q->n = 0;
    krc_sql_query_add(q, head);
}

void krc_sql_query_add(struct krc_sql_query *q, const char *text)
{
    if (!q->failed && krc_buf_append_str(&q->sql, text) < 0) {
        q->failed = KRC_SQL_QUERY_NOMEM;
    }
}

/* before, then $n for the next parameter: its slot, -1 when failed. */
static int next_param(struct krc_sql_query *q, const char *before)
{
    if (!q->failed && q->n == KRC_SQL_QUERY_PARAMS) {
        q->failed = KRC_SQL_QUERY_TOO_MANY;
    }
    if (!q->failed && krc_buf_printf(&q->sql, "%s$%d", before, q->n + 1) < 0) {
        q->failed = KRC_SQL_QUERY_NOMEM;
    }
    if (q->failed) {
        return -1;
    }
    return q->n++;
}

void krc_sql_query_text(struct krc_sql_query *q, const char *before, const char *v)
{
    int i = next_param(q, before);

    if (i >= 0) {
        q->p[i].text = v;
        q->p[i].is_text = 1;
    }
}

void krc_sql_query_int(struct krc_sql_query *q, const char *before, int64_t v)
{
    int i = next_param(q, before);

    if (i >= 0) {
        q->p[i].i = v;
        q->p[i].is_text = 0;
    }
}

int krc_sql_query_prepare(struct krc_store *s, struct krc_sql_query *q, struct krc_sql_stmt **ret,
                          const char *what, struct krc_error *err)
{
    int rc;

    if (q->failed == KRC_SQL_QUERY_TOO_MANY) {
        rc = krc_error_set(err, KRC_EINVAL, "%s: more than %d parameters", what,
                           KRC_SQL_QUERY_PARAMS);
    } else if (q->failed) {
        rc = krc_error_set(err, KRC_ENOMEM, "%s: out of memory", what);
    } else {
        rc = krc_sql_prepare_text(s, KRC_SQL_DYNAMIC, krc_buf_str(&q->sql), 0, ret, err);
    }
    krc_buf_cleanup(&q->sql);
    for (int i = 0; rc == 0 && i < q->n; i++) {
        if (q->p[i].is_text) {
            ST_TEXT(s, *ret, i + 1, q->p[i].text);
        } else {
            ST_INT(s, *ret, i + 1, q->p[i].i);
        }
    }
    return rc;
}

int krc_sql_run(struct krc_store *s, struct krc_sql_stmt *st, const char *what,
                int64_t *ret_changes, struct krc_error *err)
{
    int rc;

    while ((rc = s->drv->step(st, what, err)) == 1) {
    }
    if (rc == 0 && ret_changes != NULL) {
        *ret_changes = s->drv->changes(st);
    }
    s->drv->done(st);
    return rc;
}

int krc_sql_insert(struct krc_store *s, struct krc_sql_stmt *st, int64_t *ret, const char *what,
                   struct krc_error *err)
{
    int64_t changed = 0;
    int rc;

    if (s->drv->last_insert_id == NULL) {
        return krc_sql_int(s, st, ret, what, err);
    }
    rc = krc_sql_run(s, st, what, &changed, err);
    *ret = rc == 0 && changed > 0 ? s->drv->last_insert_id(s->c) : 0;
    return rc;
}

int krc_sql_int(struct krc_store *s, struct krc_sql_stmt *st, int64_t *ret, const char *what,
                struct krc_error *err)
{
    int rc = s->drv->step(st, what, err);

    *ret = rc == 1 ? s->drv->col_int(st, 0) : 0;
    s->drv->done(st);
    return rc < 0 ? rc : 0;
}

char *krc_sql_identity(int64_t finished_at, const char *container_id, int restart_count)
{
    struct krc_buf b;
    char *out = NULL;
    int rc;

    krc_buf_init(&b, 4096);
    if (finished_at > 0) {
        rc = krc_buf_printf(&b, "t%" PRId64 "/%s/%d", finished_at,
                            container_id != NULL ? container_id : "", restart_count);
    } else {
        rc = krc_buf_printf(&b, "c%d", restart_count);
    }
    if (rc == 0) {
        out = krc_buf_take(&b);
    }
    krc_buf_cleanup(&b);
    return out;
}

const char *krc_sql_keep(struct krc_sql_strings *k, const char *v)
{
    char *c;

    if (v == NULL || k == NULL) {
        return v;
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
    if ((c = krc_strdup(v)) == NULL) {
        k->failed = 1;
        return NULL;
    }
    k->items[k->n++] = c;
    return c;
}

void krc_sql_strings_cleanup(struct krc_sql_strings *k)
{
    for (size_t i = 0; i < k->n; i++) {
        krc_free(k->items[i]);
    }
    krc_free(k->items);
    memset(k, 0, sizeof(*k));
}
