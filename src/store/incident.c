/* Incidents and recorded changes above the SQL driver (krc/store/incident.h):
 * a restart joining or opening its incident inside the transaction that
 * records it (history.c calls krc_store_incident_record), the open ones, the
 * end with its resolved messages, the list and one incident whole; changes
 * recorded once per revision and listed for a workload and its nodes. */
#include <string.h>

#include "krc/model/report.h"
#include "krc/store/driver.h"
#include "krc/store/incident.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

/* krc_store_changes_list: at most this many nodes */
#define MAX_NODES 64

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* ---- a restart's incident ---------------------------------------------------------- */

/* The incident statement's "RETURNING id, restarts" into ref: 1 a row, 0 none. */
static int returned(struct krc_store *s, struct krc_sql_stmt *st,
                    struct krc_store_incident_ref *ref, const char *what, struct krc_error *err)
{
    int rc = s->drv->step(st, what, err);

    if (rc == 1) {
        ref->ret_id = COL_INT(s, st, 0);
        ref->ret_restarts = COL_INT(s, st, 1);
    }
    s->drv->done(st);
    return rc;
}

/* INCIDENT_COUNT_SET's $2..$5. */
static void bind_count(struct krc_store *s, struct krc_sql_stmt *st,
                       const struct krc_store_restart *rec, int64_t restart_id)
{
    const struct krc_store_incident_ref *ref = rec->incident;
    int64_t at = ref->update_at > 0 ? ref->update_at : 0;

    ST_INT(s, st, 2, restart_id);
    ST_INT(s, st, 3, rec->detected_at);
    ST_INT(s, st, 4, at > 0 && (!ref->thread_reply || ref->and_update) ? at : 0);
    ST_INT(s, st, 5, at > 0 && ref->thread_reply ? at : 0);
}

/* The incident's key: $1 the cluster, $6..$10 namespace, workload kind and
 * name, container, cause; $11 a new incident's thread. */
static void bind_key(struct krc_store *s, struct krc_sql_stmt *st,
                     const struct krc_store_restart *rec)
{
    const char *kind;
    const char *name;

    krc_workload_or_pod(rec->workload_kind, rec->workload_name, rec->pod, &kind, &name);
    ST_TEXT(s, st, 1, s->cluster);
    ST_TEXT(s, st, 6, rec->namespace);
    ST_TEXT(s, st, 7, kind);
    ST_TEXT(s, st, 8, name);
    ST_TEXT(s, st, 9, rec->container);
    ST_TEXT(s, st, 10, krc_cause_name(rec->cause));
    ST_TEXT(s, st, 11, rec->incident->thread_key);
}

/* Open an incident for the restart, or join the open one of its key. */
static int incident_open(struct krc_store *s, const struct krc_store_restart *rec,
                         int64_t restart_id, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = krc_sql_prepare(s, KRC_SQL_INCIDENT_OPEN, &st, err);

    if (rc < 0) {
        return rc;
    }
    bind_key(s, st, rec);
    bind_count(s, st, rec, restart_id);
    rc = returned(s, st, rec->incident, "opening an incident", err);
    if (rc == 0) {
        rc = krc_error_set(err, KRC_EIO, "%s: opening an incident returned no row", s->display);
    }
    return rc < 0 ? rc : 0;
}

int krc_store_incident_record(struct krc_store *s, const struct krc_store_restart *rec,
                              int64_t restart_id, struct krc_error *err)
{
    struct krc_store_incident_ref *ref = rec->incident;
    struct krc_sql_stmt *st = NULL;
    int rc;

    ref->ret_id = 0;
    ref->ret_restarts = 0;
    if (s->drv->one_statement_record) {
        /* one round trip: KRC_SQL_INCIDENT_RECORD */
        if ((rc = krc_sql_prepare_as(s, KRC_SQL_INCIDENT_RECORD, KRC_SQL_PREPARE_SERVER, &st,
                                     err)) < 0) {
            return rc;
        }
        bind_key(s, st, rec);
        bind_count(s, st, rec, restart_id);
        ST_INT(s, st, 12, ref->id > 0 ? ref->id : 0);
        rc = returned(s, st, ref, "recording a restart's incident", err);
        if (rc == 0) {
            rc = krc_error_set(err, KRC_EIO, "%s: recording a restart's incident returned no row",
                               s->display);
        }
        return rc < 0 ? rc : 0;
    }
    if (ref->id > 0) {
        if ((rc = krc_sql_prepare(s, KRC_SQL_INCIDENT_JOIN, &st, err)) < 0) {
            return rc;
        }
        ST_INT(s, st, 1, ref->id);
        bind_count(s, st, rec, restart_id);
        if ((rc = returned(s, st, ref, "joining an incident", err)) < 0) {
            return rc;
        }
    }
    /* none asked for, or it ended meanwhile */
    if (ref->ret_id == 0 && (rc = incident_open(s, rec, restart_id, err)) < 0) {
        return rc;
    }
    if ((rc = krc_sql_prepare(s, KRC_SQL_SET_INCIDENT, &st, err)) < 0) {
        return rc;
    }
    ST_INT(s, st, 1, restart_id);
    ST_INT(s, st, 2, ref->ret_id);
    return krc_sql_run(s, st, "recording a restart's incident", NULL, err);
}

int krc_store_incident_of(struct krc_store *s, const struct krc_store_restart *rec,
                          int64_t restart_id, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = krc_sql_prepare(s, KRC_SQL_RESTART_INCIDENT, &st, err);

    rec->incident->ret_id = 0;
    rec->incident->ret_restarts = 0;
    if (rc < 0) {
        return rc;
    }
    ST_INT(s, st, 1, restart_id);
    rc = returned(s, st, rec->incident, "reading a restart's incident", err);
    return rc < 0 ? rc : 0;
}

/* ---- reading incidents ------------------------------------------------------------- */

/* An INCIDENT_COLS row (strings copied into k, or borrowed when k is NULL). */
static void read_incident(struct krc_store *s, struct krc_sql_stmt *st,
                          struct krc_store_incident *i, struct krc_sql_strings *k)
{
#define TXT(n) krc_sql_keep(k, COL_TEXT(s, st, n))
    memset(i, 0, sizeof(*i));
    i->id = COL_INT(s, st, 0);
    i->namespace = TXT(1);
    i->workload_kind = TXT(2);
    i->workload_name = TXT(3);
    i->container = TXT(4);
    i->cause = TXT(5);
    i->thread_key = TXT(6);
    i->restarts = COL_INT(s, st, 7);
    i->first_restart_id = COL_INT(s, st, 8);
    i->latest_restart_id = COL_INT(s, st, 9);
    i->first_at = COL_INT(s, st, 10);
    i->last_at = COL_INT(s, st, 11);
    i->ended_at = COL_INT(s, st, 12);
    i->last_reply_at = COL_INT(s, st, 13);
    i->last_update_at = COL_INT(s, st, 14);
    i->told_restarts = COL_INT(s, st, 15);
    i->cluster = TXT(16);
#undef TXT
}

/* Every row of st through fn (borrowed strings), then done it. */
static int each_incident(struct krc_store *s, struct krc_sql_stmt *st, krc_store_incident_fn fn,
                         void *ud, const char *what, struct krc_error *err)
{
    int rc;

    while ((rc = s->drv->step(st, what, err)) == 1) {
        struct krc_store_incident i;
        read_incident(s, st, &i, NULL);
        if ((rc = fn(&i, ud)) != 0) {
            break;
        }
    }
    s->drv->done(st);
    return rc;
}

/* The open incidents, copied (strings into k): no statement stays active
 * while the caller's callback runs. */
static int read_open(struct krc_store *s, struct krc_store_incident **ret, size_t *ret_n,
                     struct krc_sql_strings *k, struct krc_error *err)
{
    struct krc_store_incident *v = NULL;
    struct krc_sql_stmt *st = NULL;
    size_t n = 0, cap = 0;
    int rc;

    if ((rc = krc_sql_prepare(s, KRC_SQL_INCIDENTS_OPEN, &st, err)) < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    while ((rc = s->drv->step(st, "reading the open incidents", err)) == 1) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct krc_store_incident *nv = krc_realloc(v, ncap * sizeof(*nv));
            if (nv == NULL) {
                k->failed = 1;
                break;
            }
            v = nv;
            cap = ncap;
        }
        read_incident(s, st, &v[n++], k);
        if (k->failed) {
            break;
        }
    }
    s->drv->done(st);
    if (rc >= 0 && k->failed) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        krc_free(v);
        return rc;
    }
    *ret = v;
    *ret_n = n;
    return 0;
}

int krc_store_incidents_open(struct krc_store *s, krc_store_incident_fn fn, void *ud,
                             struct krc_error *err)
{
    struct krc_store_incident *v = NULL;
    struct krc_sql_strings k;
    size_t n = 0;
    int rc;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "open incidents: no callback");
    }
    memset(&k, 0, sizeof(k));
    rc = read_open(s, &v, &n, &k, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = fn(&v[i], ud);
    }
    krc_free(v);
    krc_sql_strings_cleanup(&k);
    return rc;
}

/* The list query for the filters in use. */
static void build_incident_list(struct krc_sql_query *q, const struct krc_store_incident_filter *f)
{
    krc_sql_query_init(q, "SELECT " INCIDENT_COLS " FROM incidents WHERE 1 = 1");
    if (f->cluster != NULL) {
        krc_sql_query_text(q, " AND cluster = ", f->cluster);
    }
    if (f->namespace != NULL) {
        krc_sql_query_text(q, " AND namespace = ", f->namespace);
    }
    if (f->workload_kind != NULL) {
        krc_sql_query_text(q, " AND workload_kind = ", f->workload_kind);
    }
    if (f->workload_name != NULL) {
        krc_sql_query_text(q, " AND workload_name = ", f->workload_name);
    }
    if (f->open_only) {
        krc_sql_query_add(q, " AND ended_at IS NULL");
    }
    if (f->since > 0) {
        krc_sql_query_int(q, " AND (ended_at IS NULL OR ended_at >= ", f->since);
        krc_sql_query_add(q, ")");
    }
    if (f->before_id > 0) {
        krc_sql_query_int(q, " AND id < ", f->before_id);
    }
    krc_sql_query_add(q, " ORDER BY id DESC");
    if (f->limit > 0) {
        krc_sql_query_int(q, " LIMIT ", f->limit);
    }
}

int krc_store_incidents_list(struct krc_store *s, const struct krc_store_incident_filter *f,
                             krc_store_incident_fn fn, void *ud, struct krc_error *err)
{
    struct krc_store_incident_filter none;
    struct krc_sql_stmt *st = NULL;
    struct krc_sql_query q;
    int rc;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "incident list: no callback");
    }
    if (f == NULL) {
        memset(&none, 0, sizeof(none));
        f = &none;
    }
    build_incident_list(&q, f);
    if ((rc = krc_sql_query_prepare(s, &q, &st, "listing incidents", err)) < 0) {
        return rc;
    }
    return each_incident(s, st, fn, ud, "listing incidents", err);
}

/* The incident's outbox rows (the oldest KRC_STORE_INCIDENT_MESSAGES_MAX)
 * and their count into d. */
static int incident_messages(struct krc_store *s, struct krc_store_incident_detail *d,
                             struct krc_sql_strings *k, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc;

    if ((rc = krc_sql_prepare(s, KRC_SQL_INCIDENT_MESSAGE_COUNT, &st, err)) < 0) {
        return rc;
    }
    ST_INT(s, st, 1, d->inc.id);
    if ((rc = krc_sql_int(s, st, &d->n_messages_total, "counting an incident's messages", err)) <
        0) {
        return rc;
    }
    if (d->n_messages_total == 0) {
        return 0;
    }
    d->messages = krc_calloc(d->n_messages_total < KRC_STORE_INCIDENT_MESSAGES_MAX
                                 ? (size_t)d->n_messages_total
                                 : KRC_STORE_INCIDENT_MESSAGES_MAX,
                             sizeof(*d->messages));
    if (d->messages == NULL || (rc = krc_sql_prepare(s, KRC_SQL_INCIDENT_MESSAGES, &st, err)) < 0) {
        return d->messages == NULL ? krc_error_set(err, KRC_ENOMEM, "out of memory") : rc;
    }
    ST_INT(s, st, 1, d->inc.id);
    ST_INT(s, st, 2, KRC_STORE_INCIDENT_MESSAGES_MAX);
    /* rows written since the count are left out */
    while ((rc = s->drv->step(st, "reading an incident's messages", err)) == 1 &&
           d->n_messages < (size_t)d->n_messages_total) {
        krc_sql_read_message(s, st, &d->messages[d->n_messages++], k);
    }
    s->drv->done(st);
    if (rc >= 0 && k->failed) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return rc < 0 ? rc : 0;
}

/* Restart `id` whole into *ret; NULL when it is gone (pruned) or id is 0. */
static int incident_restart(struct krc_store *s, int64_t id, struct krc_store_entry **ret,
                            struct krc_error *err)
{
    int rc;

    *ret = NULL;
    if (id <= 0) {
        return 0;
    }
    rc = krc_store_get(s, id, ret, err);
    return rc == KRC_ENOTFOUND ? 0 : rc;
}

int krc_store_incident_get(struct krc_store *s, int64_t id, struct krc_store_incident_detail **ret,
                           struct krc_error *err)
{
    struct krc_store_incident_detail *d;
    struct krc_sql_strings k;
    struct krc_sql_stmt *st = NULL;
    int rc;

    if (ret == NULL) {
        return krc_error_set(err, KRC_EINVAL, "incident: nowhere to put it");
    }
    if ((d = krc_calloc(1, sizeof(*d))) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    memset(&k, 0, sizeof(k));
    if ((rc = krc_sql_prepare(s, KRC_SQL_GET_INCIDENT, &st, err)) < 0) {
        krc_free(d);
        return rc;
    }
    ST_INT(s, st, 1, id);
    if ((rc = s->drv->step(st, "reading an incident", err)) == 1) {
        read_incident(s, st, &d->inc, &k);
        rc = k.failed ? krc_error_set(err, KRC_ENOMEM, "out of memory") : 1;
    }
    s->drv->done(st);
    if (rc == 0) {
        rc = krc_error_set(err, KRC_ENOTFOUND, "%s: no incident with id %lld", s->display,
                           (long long)id);
    }
    if (rc == 1 && (rc = incident_restart(s, d->inc.first_restart_id, &d->first, err)) == 0 &&
        (rc = incident_restart(s, d->inc.latest_restart_id, &d->latest, err)) == 0) {
        rc = incident_messages(s, d, &k, err);
    }
    d->strings_ = k.items;
    d->n_strings_ = k.n;
    if (rc < 0) {
        krc_store_incident_detail_free(d);
        return rc;
    }
    *ret = d;
    return 0;
}

void krc_store_incident_detail_free(struct krc_store_incident_detail *d)
{
    if (d == NULL) {
        return;
    }
    krc_store_entry_free(d->first);
    krc_store_entry_free(d->latest);
    for (size_t i = 0; i < d->n_strings_; i++) {
        krc_free(d->strings_[i]);
    }
    krc_free(d->strings_);
    krc_free(d->messages);
    krc_free(d);
}

/* ---- the end ----------------------------------------------------------------------- */

/* One attempt of the end's transaction. */
static int end_tx(struct krc_store *s, int64_t id, int64_t ended_at,
                  const struct krc_store_outbox *msgs, size_t n, int64_t *oids,
                  struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t latest = 0;
    int rc;

    if ((rc = krc_sql_prepare(s, KRC_SQL_INCIDENT_END, &st, err)) < 0 ||
        (rc = s->drv->begin(s->c, err)) < 0) {
        s->drv->done(st);
        return rc;
    }
    ST_INT(s, st, 1, id);
    ST_INT(s, st, 2, ended_at);
    if ((rc = s->drv->step(st, "ending an incident", err)) == 1) {
        latest = COL_INT(s, st, 0);
    }
    s->drv->done(st);
    if (rc == 0) {
        /* ended already (by another leader), or no such incident */
        s->drv->rollback(s->c);
        if ((rc = krc_sql_prepare(s, KRC_SQL_INCIDENT_EXISTS, &st, err)) < 0) {
            return rc;
        }
        ST_INT(s, st, 1, id);
        if ((rc = krc_sql_int(s, st, &latest, "ending an incident", err)) < 0) {
            return rc;
        }
        return latest ? KRC_STORE_EXISTS
                      : krc_error_set(err, KRC_ENOTFOUND, "%s: no incident with id %lld",
                                      s->display, (long long)id);
    }
    for (size_t i = 0; rc == 1 && i < n; i++) {
        rc = krc_store_insert_outbox(s, latest, &msgs[i], &oids[i], err);
        rc = rc < 0 ? rc : 1;
    }
    if (rc == 1 && (rc = s->drv->commit(s->c, err)) == 0) {
        return 0;
    }
    s->drv->rollback(s->c);
    return rc;
}

int krc_store_incident_end(struct krc_store *s, int64_t id, int64_t ended_at,
                           const struct krc_store_outbox *msgs, size_t n, int64_t *ret_outbox_ids,
                           struct krc_error *err)
{
    int64_t *oids;
    int rc;

    if (id <= 0 || ended_at <= 0 || (n > 0 && msgs == NULL)) {
        return krc_error_set(err, KRC_EINVAL,
                             "ending an incident needs its id, the time and the messages");
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = krc_store_check_outbox(&msgs[i], err)) < 0) {
            return rc;
        }
    }
    if ((oids = krc_calloc(n + 1, sizeof(*oids))) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = end_tx(s, id, ended_at, msgs, n, oids, err);
    if (rc < 0 && s->drv->retryable != NULL && s->drv->retryable(s->c)) {
        rc = end_tx(s, id, ended_at, msgs, n, oids, err);
    }
    for (size_t i = 0; ret_outbox_ids != NULL && i < n; i++) {
        ret_outbox_ids[i] = rc == 0 ? oids[i] : 0;
    }
    krc_free(oids);
    return rc;
}

/* ---- changes ----------------------------------------------------------------------- */

int krc_store_record_change(struct krc_store *s, const struct krc_store_change *c,
                            struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t id = 0;
    int rc;

    if (c == NULL || c->namespace == NULL || !nonempty(c->kind) || !nonempty(c->name) ||
        !nonempty(c->revision)) {
        return krc_error_set(err, KRC_EINVAL,
                             "a change needs its namespace (\"\" for a node), kind, name and "
                             "revision");
    }
    /* the tracker's first drain after a start may hand over thousands */
    if ((rc = krc_sql_prepare_as(s, KRC_SQL_INSERT_CHANGE, KRC_SQL_PREPARE_SERVER, &st, err)) < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    ST_TEXT(s, st, 2, c->namespace);
    ST_TEXT(s, st, 3, c->kind);
    ST_TEXT(s, st, 4, c->name);
    ST_TEXT(s, st, 5, c->revision);
    ST_INT(s, st, 6, c->at);
    ST_TEXT(s, st, 7, c->manager);
    ST_TEXT(s, st, 8, c->summary);
    ST_TEXT(s, st, 9, c->detail_json);
    ST_INT(s, st, 10, c->recorded_at > 0 ? c->recorded_at : krc_clock_now());
    if ((rc = krc_sql_insert(s, st, &id, "recording a change", err)) < 0) {
        return rc;
    }
    return id > 0 ? 0 : KRC_STORE_EXISTS;
}

/* The change list's query: the object (what of namespace, kind, name is
 * given) or the nodes, then the times. */
static void build_change_list(struct krc_sql_query *q, const struct krc_store_change_filter *f)
{
    int obj = f->namespace != NULL || f->kind != NULL || f->name != NULL;

    krc_sql_query_init(q, "SELECT id, namespace, kind, name, revision, manager, summary, "
                          "detail_json, at, recorded_at, cluster FROM changes WHERE 1 = 1");
    if (f->cluster != NULL) {
        krc_sql_query_text(q, " AND cluster = ", f->cluster);
    }
    if (obj || f->n_nodes > 0) {
        krc_sql_query_add(q, " AND ((1 = 1");
        if (f->namespace != NULL) {
            krc_sql_query_text(q, " AND namespace = ", f->namespace);
        }
        if (f->kind != NULL) {
            krc_sql_query_text(q, " AND kind = ", f->kind);
        }
        if (f->name != NULL) {
            krc_sql_query_text(q, " AND name = ", f->name);
        }
        krc_sql_query_add(q, obj ? ")" : " AND 1 = 0)");
        if (f->n_nodes > 0) {
            krc_sql_query_add(q, " OR (namespace = '' AND kind = 'Node' AND name IN (");
            for (size_t i = 0; i < f->n_nodes; i++) {
                krc_sql_query_text(q, i == 0 ? "" : ", ", f->nodes[i]);
            }
            krc_sql_query_add(q, "))");
        }
        krc_sql_query_add(q, ")");
    }
    if (f->since > 0) {
        krc_sql_query_int(q, " AND at >= ", f->since);
    }
    if (f->until > 0) {
        krc_sql_query_int(q, " AND at < ", f->until);
    }
    krc_sql_query_add(q, " ORDER BY at DESC, id DESC");
    if (f->limit > 0) {
        krc_sql_query_int(q, " LIMIT ", f->limit);
    }
}

static int each_change(struct krc_store *s, struct krc_sql_stmt *st, krc_store_change_fn fn,
                       void *ud, struct krc_error *err)
{
    int rc;

    while ((rc = s->drv->step(st, "listing changes", err)) == 1) {
        struct krc_store_change c;
        c.id = COL_INT(s, st, 0);
        c.namespace = COL_TEXT(s, st, 1);
        c.kind = COL_TEXT(s, st, 2);
        c.name = COL_TEXT(s, st, 3);
        c.revision = COL_TEXT(s, st, 4);
        c.manager = COL_TEXT(s, st, 5);
        c.summary = COL_TEXT(s, st, 6);
        c.detail_json = COL_TEXT(s, st, 7);
        c.at = COL_INT(s, st, 8);
        c.recorded_at = COL_INT(s, st, 9);
        c.cluster = COL_TEXT(s, st, 10);
        if ((rc = fn(&c, ud)) != 0) {
            break;
        }
    }
    s->drv->done(st);
    return rc;
}

int krc_store_changes_list(struct krc_store *s, const struct krc_store_change_filter *f,
                           krc_store_change_fn fn, void *ud, struct krc_error *err)
{
    struct krc_store_change_filter none;
    struct krc_sql_stmt *st = NULL;
    struct krc_sql_query q;
    int rc;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "change list: no callback");
    }
    if (f == NULL) {
        memset(&none, 0, sizeof(none));
        f = &none;
    }
    if (f->n_nodes > MAX_NODES || (f->n_nodes > 0 && f->nodes == NULL)) {
        return krc_error_set(err, KRC_EINVAL, "change list: at most %d nodes (%zu given)",
                             MAX_NODES, f->n_nodes);
    }
    for (size_t i = 0; i < f->n_nodes; i++) {
        if (f->nodes[i] == NULL) {
            return krc_error_set(err, KRC_EINVAL, "change list: node %zu is NULL", i);
        }
    }
    build_change_list(&q, f);
    if ((rc = krc_sql_query_prepare(s, &q, &st, "listing changes", err)) < 0) {
        return rc;
    }
    return each_change(s, st, fn, ud, err);
}
