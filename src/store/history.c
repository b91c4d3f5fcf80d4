/* The restart history above the SQL driver (krc/store/driver.h): recording
 * a restart with its report and notifications, looking restarts up, the
 * list, one restart whole, the summary's window, retention and counts, and
 * the mapping of their rows, written once for both databases. store.c has
 * checked the handle; the arguments are checked here. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/store/driver.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static int check_restart(const struct krc_store_restart *r, struct krc_error *err)
{
    if (r == NULL) {
        return krc_error_set(err, KRC_EINVAL, "no restart to record");
    }
    if (!nonempty(r->pod_uid) || !nonempty(r->container) || !nonempty(r->namespace) ||
        !nonempty(r->pod) || !nonempty(r->decision)) {
        return krc_error_set(err, KRC_EINVAL,
                             "restart record needs pod_uid, container, namespace, pod and "
                             "decision (missing %s)",
                             !nonempty(r->pod_uid)     ? "pod_uid"
                             : !nonempty(r->container) ? "container"
                             : !nonempty(r->namespace) ? "namespace"
                             : !nonempty(r->pod)       ? "pod"
                                                       : "decision");
    }
    if (r->restart_count < 0 || r->detected_at <= 0) {
        return krc_error_set(err, KRC_EINVAL,
                             "restart record of %s/%s: restart_count %d and detected_at %lld "
                             "must not be negative / must be set",
                             r->namespace, r->pod, r->restart_count, (long long)r->detected_at);
    }
    return 0;
}

static int not_found(struct krc_store *s, const char *what, int64_t id, struct krc_error *err)
{
    return krc_error_set(err, KRC_ENOTFOUND, "%s: no %s with id %lld", s->display, what,
                         (long long)id);
}

/* ---- recording --------------------------------------------------------------------- */

/* KRC_SQL_INSERT_RESTART's parameters $1..$23 ($1 the cluster). */
static void bind_restart(struct krc_store *s, struct krc_sql_stmt *st,
                         const struct krc_store_restart *r, const char *identity)
{
    const struct krc_sql_driver *d = s->drv;
    d->bind_text(st, 1, s->cluster);
    d->bind_text(st, 2, r->pod_uid);
    d->bind_text(st, 3, r->container);
    d->bind_int(st, 4, r->restart_count);
    d->bind_text(st, 5, r->namespace);
    d->bind_text(st, 6, r->pod);
    d->bind_text(st, 7, r->workload_kind);
    d->bind_text(st, 8, r->workload_name);
    d->bind_text(st, 9, r->node);
    d->bind_text(st, 10, krc_cause_name(r->cause));
    if (r->has_exit_code) {
        d->bind_int(st, 11, r->exit_code);
    } else {
        d->bind_text(st, 11, NULL);
    }
    d->bind_int(st, 12, r->signal);
    d->bind_text(st, 13, r->reason);
    d->bind_int(st, 14, r->started_at);
    d->bind_int(st, 15, r->finished_at);
    d->bind_int(st, 16, r->detected_at);
    d->bind_text(st, 17, r->decision);
    d->bind_text(st, 18, r->summary);
    d->bind_text(st, 19, krc_confidence_name(r->confidence));
    d->bind_int(st, 20, r->gpus > 0 ? (int64_t)r->gpus : 0);
    d->bind_text(st, 21, identity);
    d->bind_int(st, 22, r->intentional != 0);
    d->bind_int(st, 23, r->accel_seconds_lost > 0 ? r->accel_seconds_lost : 0);
}

/* KRC_SQL_INSERT_OUTBOX's $3..$9 (from `k`: k, k + 1, ...). */
static void bind_outbox(struct krc_store *s, struct krc_sql_stmt *st, int k,
                        const struct krc_store_outbox *m)
{
    const struct krc_sql_driver *d = s->drv;
    d->bind_text(st, k, krc_store_kind_name(m->kind));
    d->bind_text(st, k + 1, m->destination);
    d->bind_text(st, k + 2, m->channel);
    d->bind_text(st, k + 3, m->thread_key);
    d->bind_text(st, k + 4, m->body);
    d->bind_text(st, k + 5, m->fallback);
    d->bind_int(st, k + 6, m->created_at > 0 ? m->created_at : krc_clock_now());
}

int krc_store_insert_outbox(struct krc_store *s, int64_t restart_id,
                            const struct krc_store_outbox *m, int64_t *ret_id,
                            struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = krc_sql_prepare(s, KRC_SQL_INSERT_OUTBOX, &st, err);

    if (rc < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    if (restart_id > 0) {
        ST_INT(s, st, 2, restart_id);
    } else {
        ST_TEXT(s, st, 2, NULL);
    }
    bind_outbox(s, st, 3, m);
    return krc_sql_insert(s, st, ret_id, "queueing a notification", err);
}

static int find_by_identity(struct krc_store *s, const char *pod_uid, const char *container,
                            const char *identity, int64_t *ret_id, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = krc_sql_prepare(s, KRC_SQL_FIND_RESTART, &st, err);

    if (rc < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    ST_TEXT(s, st, 2, pod_uid);
    ST_TEXT(s, st, 3, container);
    ST_TEXT(s, st, 4, identity);
    return krc_sql_int(s, st, ret_id, "looking up a recorded restart", err);
}

/* The restart, its report and its notifications in ONE statement (one round
 * trip instead of 4 + n, an implicit transaction; drivers with
 * one_statement_record): data-modifying WITHs that all hang on the
 * restart's INSERT, so none writes when the identity is already stored.
 * *rid 0 then. */
static int record_one(struct krc_store *s, const struct krc_store_restart *rec,
                      const char *identity, const struct krc_store_outbox *msgs, size_t n_msgs,
                      int64_t *rid, int64_t *oids, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    struct krc_buf sql;
    int rc;

    krc_buf_init(&sql, 64 * 1024);
    rc = krc_buf_append_str(&sql, "WITH r AS (" KRC_SQL_INSERT_RESTART_TEXT "), p AS (INSERT "
                                  "INTO reports (restart_id, message, report_json) SELECT id, "
                                  "$24, $25 FROM r)");
    for (size_t i = 0; rc == 0 && i < n_msgs; i++) {
        int k = 26 + 7 * (int)i;
        rc = krc_buf_printf(&sql,
                            ", o%zu AS (INSERT INTO outbox ({ocol}restart_id, kind, destination, "
                            "channel, thread_key, body, fallback, created_at, updated_at) SELECT "
                            "{oval}id, $%d, $%d, $%d, $%d, $%d, $%d, CAST($%d AS BIGINT), "
                            "CAST($%d AS BIGINT) FROM r RETURNING id)",
                            i, k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6, k + 6);
    }
    rc = rc == 0 ? krc_buf_append_str(&sql, " SELECT (SELECT id FROM r)") : rc;
    for (size_t i = 0; rc == 0 && i < n_msgs; i++) {
        rc = krc_buf_printf(&sql, ", (SELECT id FROM o%zu)", i);
    }
    if (rc < 0) {
        krc_buf_cleanup(&sql);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = krc_sql_prepare_text(s, KRC_SQL_RECORD_ONE + (int)n_msgs, krc_buf_str(&sql),
                              KRC_SQL_PREPARE_SERVER, &st, err);
    krc_buf_cleanup(&sql);
    if (rc < 0) {
        return rc;
    }
    bind_restart(s, st, rec, identity);
    ST_TEXT(s, st, 24, rec->message);
    ST_TEXT(s, st, 25, rec->report_json);
    for (size_t i = 0; i < n_msgs; i++) {
        bind_outbox(s, st, 26 + 7 * (int)i, &msgs[i]);
    }
    if ((rc = s->drv->step(st, "recording a restart", err)) == 1) {
        *rid = COL_INT(s, st, 0);
        for (size_t i = 0; i < n_msgs; i++) {
            oids[i] = COL_INT(s, st, (int)i + 1);
        }
    }
    s->drv->done(st);
    return rc < 0 ? rc : 0;
}

/* One attempt of the transaction: INSERT ... ON CONFLICT DO NOTHING
 * RETURNING id gives no row when the identity is stored (by this or another
 * connection: the insert waits for a concurrent one's transaction and then
 * does nothing). */
static int record_tx(struct krc_store *s, const struct krc_store_restart *rec, const char *identity,
                     const struct krc_store_outbox *msgs, size_t n_msgs, int64_t *rid,
                     int64_t *oids, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc;

    if ((rc = krc_sql_prepare(s, KRC_SQL_INSERT_RESTART, &st, err)) < 0 ||
        (rc = s->drv->begin(s->c, err)) < 0) {
        s->drv->done(st);
        return rc;
    }
    bind_restart(s, st, rec, identity);
    if ((rc = krc_sql_insert(s, st, rid, "recording a restart", err)) < 0) {
        goto rollback;
    }
    if (*rid == 0) {
        /* already recorded: find it, write nothing */
        rc = find_by_identity(s, rec->pod_uid, rec->container, identity, rid, err);
        s->drv->rollback(s->c);
        return rc < 0 ? rc : KRC_STORE_EXISTS;
    }
    if ((rc = krc_sql_prepare(s, KRC_SQL_INSERT_REPORT, &st, err)) < 0) {
        goto rollback;
    }
    ST_INT(s, st, 1, *rid);
    ST_TEXT(s, st, 2, rec->message);
    ST_TEXT(s, st, 3, rec->report_json);
    if ((rc = krc_sql_run(s, st, "recording a restart report", NULL, err)) < 0) {
        goto rollback;
    }
    for (size_t i = 0; i < n_msgs; i++) {
        if ((rc = krc_store_insert_outbox(s, *rid, &msgs[i], &oids[i], err)) < 0) {
            goto rollback;
        }
    }
    if (rec->incident != NULL && (rc = krc_store_incident_record(s, rec, *rid, err)) < 0) {
        goto rollback;
    }
    if ((rc = s->drv->commit(s->c, err)) < 0) {
        goto rollback;
    }
    return 0;
rollback:
    s->drv->rollback(s->c);
    return rc;
}

/* One attempt of a restart with an incident on a one_statement_record
 * driver: its one statement and the incident's in a transaction (the
 * incident's statement sets the restart's incident_id, which the restart's
 * own statement cannot: its WITHs share one snapshot). */
static int record_one_tx(struct krc_store *s, const struct krc_store_restart *rec,
                         const char *identity, const struct krc_store_outbox *msgs, size_t n_msgs,
                         int64_t *rid, int64_t *oids, struct krc_error *err)
{
    int rc = s->drv->begin(s->c, err);

    if (rc < 0) {
        return rc;
    }
    if ((rc = record_one(s, rec, identity, msgs, n_msgs, rid, oids, err)) == 0 && *rid == 0) {
        s->drv->rollback(s->c);
        rc = find_by_identity(s, rec->pod_uid, rec->container, identity, rid, err);
        return rc < 0 ? rc : KRC_STORE_EXISTS;
    }
    if (rc == 0 && (rc = krc_store_incident_record(s, rec, *rid, err)) == 0 &&
        (rc = s->drv->commit(s->c, err)) == 0) {
        return 0;
    }
    s->drv->rollback(s->c);
    return rc;
}

static int record(struct krc_store *s, const struct krc_store_restart *rec, const char *identity,
                  const struct krc_store_outbox *msgs, size_t n_msgs, int64_t *rid, int64_t *oids,
                  struct krc_error *err)
{
    int rc;

    if (s->drv->one_statement_record && n_msgs <= KRC_SQL_RECORD_ONE_MAX && rec->incident != NULL) {
        rc = record_one_tx(s, rec, identity, msgs, n_msgs, rid, oids, err);
        if (rc < 0 && s->drv->retryable != NULL && s->drv->retryable(s->c)) {
            rc = record_one_tx(s, rec, identity, msgs, n_msgs, rid, oids, err);
        }
        return rc;
    }
    if (s->drv->one_statement_record && n_msgs <= KRC_SQL_RECORD_ONE_MAX) {
        /* a serialization failure or deadlock is retried by the driver */
        rc = record_one(s, rec, identity, msgs, n_msgs, rid, oids, err);
        if (rc == 0 && *rid == 0) {
            rc = find_by_identity(s, rec->pod_uid, rec->container, identity, rid, err);
            rc = rc < 0 ? rc : KRC_STORE_EXISTS;
        }
        return rc;
    }
    rc = record_tx(s, rec, identity, msgs, n_msgs, rid, oids, err);
    if (rc < 0 && s->drv->retryable != NULL && s->drv->retryable(s->c)) {
        rc = record_tx(s, rec, identity, msgs, n_msgs, rid, oids, err);
    }
    return rc;
}

int krc_store_record_many(struct krc_store *s, const struct krc_store_restart *rec,
                          const struct krc_store_outbox *msgs, size_t n_msgs,
                          int64_t *ret_restart_id, int64_t *ret_outbox_ids, struct krc_error *err)
{
    int64_t rid = 0;
    int64_t *oids;
    char *identity;
    int rc;

    if ((rc = check_restart(rec, err)) < 0) {
        return rc;
    }
    if (n_msgs > 0 && msgs == NULL) {
        return krc_error_set(err, KRC_EINVAL, "no notification to queue");
    }
    for (size_t i = 0; i < n_msgs; i++) {
        if ((rc = krc_store_check_outbox(&msgs[i], err)) < 0) {
            return rc;
        }
    }
    identity = krc_sql_identity(rec->finished_at, rec->container_id, rec->restart_count);
    oids = krc_calloc(n_msgs + 1, sizeof(*oids));
    if (identity == NULL || oids == NULL) {
        krc_free(identity);
        krc_free(oids);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (rec->incident != NULL) {
        rec->incident->ret_id = 0;
        rec->incident->ret_restarts = 0;
    }
    rc = record(s, rec, identity, msgs, n_msgs, &rid, oids, err);
    if (rc < 0 && rec->incident != NULL) {
        rec->incident->ret_id = 0; /* rolled back */
        rec->incident->ret_restarts = 0;
    } else if (rc == KRC_STORE_EXISTS && rec->incident != NULL) {
        rc = krc_store_incident_of(s, rec, rid, err);
        rc = rc < 0 ? rc : KRC_STORE_EXISTS;
    }
    if (rc >= 0) {
        if (ret_restart_id != NULL) {
            *ret_restart_id = rid;
        }
        for (size_t i = 0; ret_outbox_ids != NULL && i < n_msgs; i++) {
            ret_outbox_ids[i] = rc == KRC_STORE_EXISTS ? 0 : oids[i];
        }
    }
    krc_free(identity);
    krc_free(oids);
    return rc;
}

int krc_store_record(struct krc_store *s, const struct krc_store_restart *rec,
                     const struct krc_store_outbox *msg, int64_t *ret_restart_id,
                     int64_t *ret_outbox_id, struct krc_error *err)
{
    return krc_store_record_many(s, rec, msg, msg != NULL ? 1 : 0, ret_restart_id, ret_outbox_id,
                                 err);
}

int krc_store_find_restart(struct krc_store *s, const struct krc_restart_ident *id, int64_t *ret_id,
                           struct krc_error *err)
{
    int64_t found = 0;
    char *identity;
    int rc;

    if (id == NULL || !nonempty(id->uid) || !nonempty(id->container)) {
        return krc_error_set(err, KRC_EINVAL, "restart lookup needs pod_uid and container");
    }
    if ((identity = krc_sql_identity(id->finished_at, id->container_id, id->restart_count)) ==
        NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = find_by_identity(s, id->uid, id->container, identity, &found, err);
    krc_free(identity);
    if (rc < 0) {
        return rc;
    }
    if (found > 0) {
        *ret_id = found;
        return 1;
    }
    return 0;
}

/* One restart row updated in a transaction: statement `first` with the id as
 * $1 and texts as $2..; then, when text2 is given, statement `second` with
 * ($1 id, $2 text2). A row that is not there is KRC_ENOTFOUND. Retried once
 * when the driver says the failure was transient. */
struct restart_update {
    int first;
    const char *what;
    const char *texts[3];
    size_t n_texts;
    int second;
    const char *text2;
    const char *what2;
};

static int update_restart_tx(struct krc_store *s, int64_t restart_id,
                             const struct restart_update *u, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t changed = 0;
    int rc;

    if ((rc = krc_sql_prepare(s, u->first, &st, err)) < 0 || (rc = s->drv->begin(s->c, err)) < 0) {
        s->drv->done(st);
        return rc;
    }
    ST_INT(s, st, 1, restart_id);
    for (size_t i = 0; i < u->n_texts; i++) {
        ST_TEXT(s, st, (int)i + 2, u->texts[i]);
    }
    if ((rc = krc_sql_run(s, st, u->what, &changed, err)) < 0) {
        goto rollback;
    }
    if (changed == 0) {
        rc = not_found(s, "restart", restart_id, err);
        goto rollback;
    }
    if (u->text2 != NULL) {
        if ((rc = krc_sql_prepare(s, u->second, &st, err)) < 0) {
            goto rollback;
        }
        ST_INT(s, st, 1, restart_id);
        ST_TEXT(s, st, 2, u->text2);
        if ((rc = krc_sql_run(s, st, u->what2, NULL, err)) < 0) {
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

static int update_restart(struct krc_store *s, int64_t restart_id, const struct restart_update *u,
                          struct krc_error *err)
{
    int rc = update_restart_tx(s, restart_id, u, err);

    if (rc < 0 && s->drv->retryable != NULL && s->drv->retryable(s->c)) {
        rc = update_restart_tx(s, restart_id, u, err);
    }
    return rc;
}

int krc_store_set_decision(struct krc_store *s, int64_t restart_id, const char *decision,
                           const char *message, struct krc_error *err)
{
    const struct restart_update u = {
        KRC_SQL_SET_DECISION, "updating a decision", {decision}, 1, KRC_SQL_SET_MESSAGE, message,
        "updating a message"};

    if (!nonempty(decision)) {
        return krc_error_set(err, KRC_EINVAL, "decision is required");
    }
    return update_restart(s, restart_id, &u, err);
}

int krc_store_amend(struct krc_store *s, int64_t restart_id, const char *cause, const char *summary,
                    const char *confidence, const char *report_json, struct krc_error *err)
{
    const struct restart_update u = {
        KRC_SQL_AMEND_RESTART,   "amending a restart", {cause, summary, confidence}, 3,
        KRC_SQL_SET_REPORT_JSON, report_json,          "amending a report"};

    if (!nonempty(cause)) {
        return krc_error_set(err, KRC_EINVAL, "cause is required");
    }
    return update_restart(s, restart_id, &u, err);
}

/* ---- reading ------------------------------------------------------------------------ */

/* Fill row from the RESTART_COLS columns; strings copied into k or borrowed. */
static void read_row(struct krc_store *s, struct krc_sql_stmt *st, struct krc_store_row *r,
                     struct krc_sql_strings *k)
{
#define TXT(i) krc_sql_keep(k, COL_TEXT(s, st, i))
    memset(r, 0, sizeof(*r));
    r->id = COL_INT(s, st, 0);
    r->pod_uid = TXT(1);
    r->namespace = TXT(2);
    r->pod = TXT(3);
    r->container = TXT(4);
    r->restart_count = (int)COL_INT(s, st, 5);
    r->workload_kind = TXT(6);
    r->workload_name = TXT(7);
    r->node = TXT(8);
    r->cause = TXT(9);
    r->has_exit_code = !s->drv->col_null(st, 10);
    r->exit_code = (int)COL_INT(s, st, 10);
    r->signal = (int)COL_INT(s, st, 11);
    r->reason = TXT(12);
    r->started_at = COL_INT(s, st, 13);
    r->finished_at = COL_INT(s, st, 14);
    r->detected_at = COL_INT(s, st, 15);
    r->decision = TXT(16);
    r->summary = TXT(17);
    r->delivery = TXT(18);
    r->attempts = (int)COL_INT(s, st, 19);
    r->confidence = TXT(20);
    r->identity = TXT(21);
    r->cluster = TXT(22);
    r->incident_id = COL_INT(s, st, 23);
#undef TXT
}

/* The list query for the filters in use (so that the database picks the
 * index of the filter that is present); the pod prefix P is the range
 * [P, P || U+10FFFF) (byte order: SQLite's BINARY, PostgreSQL's pod column
 * is COLLATE "C"), pod_end its end. */
static void build_list(struct krc_sql_query *q, const struct krc_store_filter *f,
                       const char *pod_end)
{
    krc_sql_query_init(q, "SELECT " RESTART_COLS " FROM restarts r WHERE 1 = 1");
    if (f->cluster != NULL) {
        krc_sql_query_text(q, " AND r.cluster = ", f->cluster);
    }
    if (f->namespace != NULL) {
        krc_sql_query_text(q, " AND r.namespace = ", f->namespace);
    }
    if (f->pod != NULL && f->pod_exact) {
        krc_sql_query_text(q, " AND r.pod = ", f->pod);
    } else if (f->pod != NULL) {
        krc_sql_query_text(q, " AND r.pod >= ", f->pod);
        krc_sql_query_text(q, " AND r.pod < ", pod_end);
    }
    if (f->workload != NULL) {
        krc_sql_query_text(q, " AND r.workload_name = ", f->workload);
    }
    if (f->cause != NULL) {
        krc_sql_query_text(q, " AND r.cause = ", f->cause);
    }
    if (f->since > 0) {
        krc_sql_query_int(q, " AND r.detected_at >= ", f->since);
    }
    if (f->before_id > 0) {
        /* detected_at < A or (detected_at = A and id < B), with a range the
         * index can take */
        krc_sql_query_int(q, " AND r.detected_at <= ", f->before_at);
        krc_sql_query_int(q, " AND (r.detected_at < ", f->before_at);
        krc_sql_query_int(q, " OR r.id < ", f->before_id);
        krc_sql_query_add(q, ")");
    }
    krc_sql_query_add(q, " ORDER BY r.detected_at DESC, r.id DESC");
    if (f->limit > 0) {
        krc_sql_query_int(q, " LIMIT ", f->limit);
    }
}

int krc_store_list(struct krc_store *s, const struct krc_store_filter *f, krc_store_row_fn fn,
                   void *ud, struct krc_error *err)
{
    struct krc_store_filter none;
    struct krc_sql_stmt *st = NULL;
    struct krc_sql_query q;
    struct krc_buf pod_end;
    int rc = 0;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "list: no callback");
    }
    if (f == NULL) {
        memset(&none, 0, sizeof(none));
        f = &none;
    }
    krc_buf_init(&pod_end, 4096);
    if (f->pod != NULL && !f->pod_exact) {
        rc = krc_buf_printf(&pod_end, "%s\xf4\x8f\xbf\xbf", f->pod); /* P || U+10FFFF */
    }
    if (rc < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    } else {
        build_list(&q, f, krc_buf_str(&pod_end));
        rc = krc_sql_query_prepare(s, &q, &st, "listing restarts", err);
    }
    if (rc == 0) {
        while ((rc = s->drv->step(st, "listing restarts", err)) == 1) {
            struct krc_store_row row;
            read_row(s, st, &row, NULL);
            if ((rc = fn(&row, ud)) != 0) {
                break;
            }
        }
        s->drv->done(st);
    }
    krc_buf_cleanup(&pod_end);
    return rc;
}

int krc_store_window(struct krc_store *s, int64_t since, const char *cluster,
                     krc_store_window_fn fn, void *ud, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "window: no callback");
    }
    rc = krc_sql_prepare(s, cluster != NULL ? KRC_SQL_WINDOW_CLUSTER : KRC_SQL_WINDOW, &st, err);
    if (rc < 0) {
        return rc;
    }
    ST_INT(s, st, 1, since);
    if (cluster != NULL) {
        ST_TEXT(s, st, 2, cluster);
    }
    while ((rc = s->drv->step(st, "summarising restarts", err)) == 1) {
        struct krc_store_window_row r;
        r.id = COL_INT(s, st, 0);
        r.detected_at = COL_INT(s, st, 1);
        r.namespace = COL_TEXT(s, st, 2);
        r.workload_kind = COL_TEXT(s, st, 3);
        r.workload_name = COL_TEXT(s, st, 4);
        r.pod = COL_TEXT(s, st, 5);
        r.pod_uid = COL_TEXT(s, st, 6);
        r.cause = COL_TEXT(s, st, 7);
        r.node = COL_TEXT(s, st, 8);
        r.gpus = (long)COL_INT(s, st, 9);
        r.cluster = COL_TEXT(s, st, 10);
        r.intentional = COL_INT(s, st, 11) != 0;
        r.accel_seconds_lost = COL_INT(s, st, 12);
        if ((rc = fn(&r, ud)) != 0) {
            break;
        }
    }
    s->drv->done(st);
    return rc;
}

/* The restart's outbox rows into e (strings into k). */
static int get_messages(struct krc_store *s, int64_t id, struct krc_store_entry *e,
                        struct krc_sql_strings *k, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    size_t cap = 0;
    int rc = krc_sql_prepare(s, KRC_SQL_GET_MESSAGES, &st, err);

    if (rc < 0) {
        return rc;
    }
    ST_INT(s, st, 1, id);
    while ((rc = s->drv->step(st, "reading notifications", err)) == 1) {
        if (e->n_messages == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            struct krc_store_message *nm = krc_realloc(e->messages, ncap * sizeof(*nm));
            if (nm == NULL) {
                k->failed = 1;
                break;
            }
            e->messages = nm;
            cap = ncap;
        }
        krc_sql_read_message(s, st, &e->messages[e->n_messages++], k);
        if (k->failed) {
            break;
        }
    }
    s->drv->done(st);
    return k->failed ? krc_error_set(err, KRC_ENOMEM, "out of memory") : rc;
}

int krc_store_get(struct krc_store *s, int64_t id, struct krc_store_entry **ret,
                  struct krc_error *err)
{
    struct krc_store_entry *e = NULL;
    struct krc_sql_strings k;
    struct krc_sql_stmt *st = NULL;
    int rc;

    memset(&k, 0, sizeof(k));
    if ((rc = krc_sql_prepare(s, KRC_SQL_GET_RESTART, &st, err)) < 0) {
        return rc;
    }
    ST_INT(s, st, 1, id);
    if ((rc = s->drv->step(st, "reading a restart", err)) == 1 &&
        (e = krc_calloc(1, sizeof(*e))) != NULL) {
        read_row(s, st, &e->row, &k);
        e->message = krc_sql_keep(&k, COL_TEXT(s, st, N_RESTART_COLS));
        e->report_json = krc_sql_keep(&k, COL_TEXT(s, st, N_RESTART_COLS + 1));
    }
    s->drv->done(st);
    if (rc <= 0) {
        return rc < 0 ? rc : not_found(s, "restart", id, err);
    }
    if (e == NULL || k.failed) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    } else {
        rc = get_messages(s, id, e, &k, err);
    }
    if (rc < 0 || e == NULL) {
        krc_sql_strings_cleanup(&k);
        if (e != NULL) {
            krc_free(e->messages);
        }
        krc_free(e);
        return rc < 0 ? rc : KRC_ENOMEM;
    }
    e->strings_ = k.items;
    e->n_strings_ = k.n;
    *ret = e;
    return 0;
}

/* ---- retention and health -------------------------------------------------------- */

/* One batch, a DELETE in its own short transaction: $1 the cluster, $2 the
 * cutoff (or the pin time), $3 the batch size. */
static int prune_batch(struct krc_store *s, int id, int64_t cutoff, int64_t limit, int64_t *ret_n,
                       struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = krc_sql_prepare(s, id, &st, err);

    if (rc < 0 || (rc = s->drv->begin(s->c, err)) < 0) {
        s->drv->done(st);
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    ST_INT(s, st, 2, cutoff);
    ST_INT(s, st, 3, limit);
    if ((rc = krc_sql_run(s, st, "pruning the history", ret_n, err)) < 0 ||
        (rc = s->drv->commit(s->c, err)) < 0) {
        s->drv->rollback(s->c);
    }
    return rc;
}

static int count_restarts(struct krc_store *s, int id, int64_t *ret, const char *what,
                          struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = krc_sql_prepare(s, id, &st, err);

    if (rc < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    return krc_sql_int(s, st, ret, what, err);
}

/* Statement `id` batch after batch until a batch is not full; *counted
 * (may be NULL) adds what it deleted. */
static int prune_all(struct krc_store *s, int id, int64_t cutoff, int batch, int64_t *counted,
                     struct krc_error *err)
{
    int64_t n = 0;
    int rc;

    do {
        if ((rc = prune_batch(s, id, cutoff, batch, &n, err)) < 0) {
            return rc;
        }
        if (counted != NULL) {
            *counted += n;
        }
    } while (n == batch);
    return 0;
}

static int prune_locked(struct krc_store *s, int64_t max_age_seconds, int64_t max_rows, int batch,
                        int64_t *deleted, struct krc_error *err)
{
    int64_t now = krc_clock_now();
    /* a cutoff at or before 1970 deletes nothing */
    int64_t cutoff = max_age_seconds > 0 && now - max_age_seconds > 0 ? now - max_age_seconds : 0;
    /* an incident ended at or after `pin` keeps its first and latest restart;
     * without an age limit only an open one does */
    int64_t pin = max_age_seconds > 0 ? now - max_age_seconds : INT64_MAX;
    int64_t n = 0;
    int rc;

    if (cutoff > 0 && ((rc = prune_all(s, KRC_SQL_PRUNE_AGE, cutoff, batch, deleted, err)) < 0 ||
                       (rc = prune_all(s, KRC_SQL_PRUNE_ORPHANS, cutoff, batch, NULL, err)) < 0 ||
                       (rc = prune_all(s, KRC_SQL_PRUNE_CHANGES, cutoff, batch, NULL, err)) < 0)) {
        return rc;
    }
    while (max_rows > 0) {
        int64_t count = 0;
        int64_t excess;
        if ((rc = count_restarts(s, KRC_SQL_COUNT_RESTARTS, &count, "counting restarts", err)) <
            0) {
            return rc;
        }
        if ((excess = count - max_rows) <= 0) {
            break;
        }
        if ((rc = prune_batch(s, KRC_SQL_PRUNE_OLDEST, pin, excess < batch ? excess : batch, &n,
                              err)) < 0) {
            return rc;
        }
        *deleted += n;
        if (n == 0) {
            break; /* only restarts with pending notifications or pinned are left */
        }
    }
    /* ended incidents past the age limit, or whose restarts are all gone */
    return prune_all(s, KRC_SQL_PRUNE_INCIDENTS, cutoff, batch, NULL, err);
}

int krc_store_prune(struct krc_store *s, int64_t max_age_seconds, int64_t max_rows, int batch,
                    int64_t *ret_deleted, struct krc_error *err)
{
    int64_t deleted = 0;
    int rc = 1;

    if (batch <= 0 || max_age_seconds < 0 || max_rows < 0) {
        return krc_error_set(err, KRC_EINVAL, "prune: batch must be > 0 and limits >= 0");
    }
    /* shared: one replica at a time; the others prune nothing this round */
    if (s->drv->prune_lock != NULL && (rc = s->drv->prune_lock(s->c, 1, err)) < 0) {
        return rc;
    }
    if (rc == 1) {
        rc = prune_locked(s, max_age_seconds, max_rows, batch, &deleted, err);
        if (s->drv->prune_lock != NULL) {
            (void)s->drv->prune_lock(s->c, 0, rc < 0 ? NULL : err);
        }
    }
    if (rc == 0 && deleted == 0) {
        /* Nothing (more) to prune: the pass is over and the next one is a
         * minute away, so the pages it cached are not worth keeping. */
        krc_store_release_memory(s);
    }
    if (rc == 0 && ret_deleted != NULL) {
        *ret_deleted = deleted;
    }
    return rc;
}

void krc_store_release_memory(struct krc_store *s)
{
    if (s != NULL && s->drv->release_memory != NULL) {
        s->drv->release_memory(s->c);
    }
}

int krc_store_stats(struct krc_store *s, struct krc_store_stats *ret, struct krc_error *err)
{
    struct krc_store_stats out;
    struct krc_sql_stmt *st = NULL;
    int rc;

    memset(&out, 0, sizeof(out));
    if ((rc = count_restarts(s, KRC_SQL_COUNT_RESTARTS, &out.restarts, "counting restarts", err)) <
            0 ||
        (rc = count_restarts(s, KRC_SQL_STATS_OLDEST, &out.oldest_detected_at, "reading statistics",
                             err)) < 0 ||
        (rc = krc_sql_prepare(s, KRC_SQL_DB_BYTES, &st, err)) < 0 ||
        (rc = krc_sql_int(s, st, &out.db_bytes, "reading statistics", err)) < 0 ||
        (rc = krc_sql_prepare(s, KRC_SQL_STATS_OUTBOX, &st, err)) < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    while ((rc = s->drv->step(st, "reading statistics", err)) == 1) {
        int64_t c = COL_INT(s, st, 1);
        switch (krc_store_state_parse(COL_TEXT(s, st, 0))) {
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
    s->drv->done(st);
    if (rc < 0) {
        return rc;
    }
    out.wal_bytes = s->drv->wal_bytes != NULL ? s->drv->wal_bytes(s->c) : 0;
    *ret = out;
    return 0;
}
