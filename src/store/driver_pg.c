/* The PostgreSQL driver of the store's SQL layer (krc/store/driver.h): one
 * database shared by many replicas and clusters, every restart and outbox
 * row carrying its cluster. The only file that sees libpq. A statement is
 * sent with PQexecParams and text parameters when it is first stepped (a
 * hot one, KRC_SQL_PREPARE_SERVER, as a statement prepared once per
 * connection), and its rows are read from the result.
 *
 * Connection: the URL as given (a libpq URI), the password from
 * options->password_file (read at every connection, passed as libpq's
 * `password` keyword, never put into a string that is shown),
 * application_name krc, connect_timeout, TCP keepalives and
 * statement_timeout so that a stuck server or network never holds a
 * worker forever. A lost connection fails the call with KRC_EIO naming the
 * server; the next call connects again (once, bounded by connect_timeout).
 *
 * KRC_STORE_DEFER_CONNECT (the daemon): a server that does not answer at
 * open (PQping: no response, or rejecting connections while it starts or
 * stops) is not fatal: the open returns KRC_STORE_DEFERRED and every call
 * fails with KRC_EIO naming the server until one connects; the schema is
 * created or migrated then. Attempts after a failed one are at least
 * CONNECT_RETRY_MS apart, so a worker's loop does not hammer a dead server.
 * With KRC_STORE_CONNECT_ON_USE too, the open does not even try. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "krc/store/driver.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

/* Advisory lock key ("krcprune" in ASCII): retention's session lock, so
 * that one replica prunes at a time. */
#define LOCK_PRUNE "7741542380882244965"
/* Every session: a statement that runs longer fails (57014, KRC_ETIMEOUT)
 * instead of holding its worker; lock waits count in it. */
#define STATEMENT_TIMEOUT_MS 10000
/* A peer that stops acknowledging (cable pulled, node gone) is declared
 * dead after this long instead of TCP's ~15 minutes. */
#define TCP_USER_TIMEOUT_MS "30000"

/* ---- the connection ------------------------------------------------------------------ */

struct krc_sql {
    PGconn *conn;
    struct krc_store *store; /* target, display, flags; whose schema a connection migrates */
    char *password_file;
    char *password; /* the file's, while connecting and to scrub messages */
    int connect_timeout_s;
    int lost;      /* the connection broke: connect again on the next call */
    int retryable; /* the last failure was a serialization failure or deadlock */
    /* bit id: statement id is prepared on this connection (krc_s_<id>);
     * cleared with every new connection */
    uint64_t prepared;
    int no_statement; /* the last failure was 26000: no such prepared statement */
    int unprepared;   /* prepare nothing (a pooler in transaction mode) */
    /* KRC_STORE_DEFER_CONNECT */
    int connect_failed;   /* the last attempt failed in PQconnectdbParams itself */
    int unmigrated;       /* the schema is created/migrated at the first connection */
    int64_t last_fail_ms; /* monotonic time of the last failed attempt; 0: none */
    char last_error[400]; /* its message (no password), repeated until the next */
};

/* KRC_STORE_DEFER_CONNECT: at most one connection attempt per second after
 * a failed one. */
#define CONNECT_RETRY_MS 1000

/* The most parameters of a statement: record_one's 23 for the restart, 2
 * for its report, 7 per notification. */
#define MAX_PARAMS (25 + 7 * KRC_SQL_RECORD_ONE_MAX)
/* `prepared` has a bit per statement id */
_Static_assert(KRC_SQL_CACHED <= 64, "statement ids fit the prepared bits");

struct krc_sql_stmt {
    struct krc_sql *c;
    char *sql;
    int id;
    unsigned flags;
    const char *v[MAX_PARAMS];
    char num[MAX_PARAMS][24];
    int n;
    PGresult *res; /* once stepped */
    int row;       /* the next row of res */
};

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* Where the server is, for messages: "host:port database db". */
static void server_name(const struct krc_sql *b, char *out, size_t outsz)
{
    const char *h = b->conn != NULL ? PQhost(b->conn) : NULL;
    const char *port = b->conn != NULL ? PQport(b->conn) : NULL;
    const char *db = b->conn != NULL ? PQdb(b->conn) : NULL;
    snprintf(out, outsz, "server %s:%s database %s", nonempty(h) ? h : "?",
             nonempty(port) ? port : "5432", nonempty(db) ? db : "?");
}

/* libpq's message on one line, with the password (should a message ever
 * quote it) replaced. */
static void clean_message(const struct krc_sql *b, const char *in, char *out, size_t outsz)
{
    size_t n = 0;
    size_t pl = b->password != NULL ? strlen(b->password) : 0;

    for (const char *p = in != NULL ? in : ""; *p != '\0' && n + 1 < outsz;) {
        if (pl > 0 && strncmp(p, b->password, pl) == 0) {
            for (const char *m = "****"; *m != '\0' && n + 1 < outsz; m++) {
                out[n++] = *m;
            }
            p += pl;
            continue;
        }
        out[n++] = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
        p++;
    }
    while (n > 0 && out[n - 1] == ' ') {
        n--;
    }
    out[n] = '\0';
}

/* The first line of the password file into b->password. */
static int read_password(struct krc_sql *b, struct krc_error *err)
{
    char line[1024];
    FILE *f;
    size_t n;

    krc_free(b->password);
    b->password = NULL;
    if (b->password_file == NULL) {
        return 0;
    }
    f = fopen(b->password_file, "re");
    if (f == NULL) {
        return krc_error_set(err, KRC_EIO, "%s: cannot read the password file %s: %s",
                             b->store->display, b->password_file, KRC_ERRNO_STR(errno));
    }
    if (fgets(line, sizeof(line), f) == NULL) {
        line[0] = '\0';
    }
    fclose(f);
    n = strcspn(line, "\r\n");
    line[n] = '\0';
    if (n == 0) {
        return krc_error_set(err, KRC_EINVAL, "%s: the password file %s is empty",
                             b->store->display, b->password_file);
    }
    b->password = krc_strdup(line);
    memset(line, 0, sizeof(line));
    return b->password != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

/* The server's notices ("relation already exists, skipping") are not
 * krc's to print: libpq's default writes them to stderr. */
static void drop_notice(void *arg, const char *message)
{
    (void)arg, (void)message;
}

/* Session settings, sent after connecting rather than as the `options`
 * keyword, which would replace the options of the URL (a search_path). */
static int session_setup(struct krc_sql *b, struct krc_error *err)
{
    char sql[160];
    PGresult *res;

    PQsetNoticeProcessor(b->conn, drop_notice, NULL);
    snprintf(sql, sizeof(sql), "SET statement_timeout = %d%s", STATEMENT_TIMEOUT_MS,
             (b->store->flags & KRC_STORE_READONLY) ? "; SET default_transaction_read_only = on"
                                                    : "");
    res = PQexec(b->conn, sql);
    if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
        char msg[400];
        char where[300];
        server_name(b, where, sizeof(where));
        clean_message(b, res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(b->conn), msg,
                      sizeof(msg));
        PQclear(res);
        return krc_error_set(err, KRC_EIO, "%s (%s): cannot configure the session: %s",
                             b->store->display, where, msg);
    }
    PQclear(res);
    return 0;
}

/* libpq's keywords for a connection to b's target; `timeout` holds the
 * connect_timeout text. */
static void conn_params(const struct krc_sql *b, char *timeout, size_t timeoutsz, const char **keys,
                        const char **vals)
{
    int k = 0;

    snprintf(timeout, timeoutsz, "%d", b->connect_timeout_s);
    /* dbname first: the URL expands there and the keywords after it win */
    keys[k] = "dbname", vals[k++] = b->store->target;
    keys[k] = "application_name", vals[k++] = "krc";
    keys[k] = "connect_timeout", vals[k++] = timeout;
    keys[k] = "keepalives", vals[k++] = "1";
    keys[k] = "keepalives_idle", vals[k++] = "30";
    keys[k] = "keepalives_interval", vals[k++] = "10";
    keys[k] = "keepalives_count", vals[k++] = "3";
    keys[k] = "tcp_user_timeout", vals[k++] = TCP_USER_TIMEOUT_MS;
    if (b->password != NULL) {
        keys[k] = "password", vals[k++] = b->password;
    }
    keys[k] = NULL, vals[k] = NULL;
}

/* After a failed connection: did the server not answer at all, or reject
 * connections while it starts up or shuts down (PQping; no
 * authentication)? Then it may answer later. A server that answered with
 * an error (authentication, no such database, TLS) or a URL libpq cannot
 * use is a configuration error. */
static int server_unreachable(const struct krc_sql *b)
{
    char timeout[16];
    const char *keys[12];
    const char *vals[12];
    PGPing ping;

    conn_params(b, timeout, sizeof(timeout), keys, vals);
    ping = PQpingParams(keys, vals, 1);
    return ping == PQPING_NO_RESPONSE || ping == PQPING_REJECT;
}

/* Connect (again): a new connection rather than PQreset, so that the
 * password file is read again (a rotated Secret). Bounded by
 * connect_timeout; never retried here. */
static int pg_connect(struct krc_sql *b, struct krc_error *err)
{
    char timeout[16];
    char msg[400];
    char where[300];
    const char *keys[12];
    const char *vals[12];
    int rc;

    if (b->conn != NULL) {
        PQfinish(b->conn);
        b->conn = NULL;
    }
    b->lost = 1;
    b->connect_failed = 0;
    if ((rc = read_password(b, err)) < 0) {
        return rc;
    }
    conn_params(b, timeout, sizeof(timeout), keys, vals);
    b->conn = PQconnectdbParams(keys, vals, 1);
    if (b->conn == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "%s: out of memory connecting", b->store->display);
    }
    if (PQstatus(b->conn) != CONNECTION_OK) {
        server_name(b, where, sizeof(where));
        clean_message(b, PQerrorMessage(b->conn), msg, sizeof(msg));
        PQfinish(b->conn);
        b->conn = NULL;
        b->connect_failed = 1; /* pg_open asks the server (server_unreachable) */
        return krc_error_set(err, KRC_EIO, "%s: cannot connect to PostgreSQL (%s): %s",
                             b->store->display, where, msg);
    }
    if ((rc = session_setup(b, err)) < 0) {
        return rc;
    }
    b->prepared = 0;
    b->lost = 0;
    return 0;
}

/* KRC_STORE_DEFER_CONNECT: connect, and create or migrate the schema the
 * first time; a failure is remembered for CONNECT_RETRY_MS. */
static int connect_deferred(struct krc_sql *b, struct krc_error *err)
{
    int64_t now = krc_clock_mono_ms();
    struct krc_error e;
    int rc;

    if (b->last_fail_ms != 0 && now - b->last_fail_ms < CONNECT_RETRY_MS) {
        return krc_error_set(err, KRC_EIO, "%s (tried %lld ms ago; again within 1 s)",
                             b->last_error, (long long)(now - b->last_fail_ms));
    }
    krc_error_clear(&e);
    rc = pg_connect(b, &e);
    if (rc == 0 && b->unmigrated) {
        rc = krc_store_migrate(b->store, &e);
        if (rc == 0) {
            b->unmigrated = 0;
        } else if (b->conn != NULL) {
            PQfinish(b->conn);
            b->conn = NULL;
            b->lost = 1;
        }
    }
    if (rc < 0) {
        b->last_fail_ms = krc_clock_mono_ms();
        b->last_fail_ms = b->last_fail_ms != 0 ? b->last_fail_ms : 1;
        snprintf(b->last_error, sizeof(b->last_error), "%s", e.msg);
        return krc_error_set(err, rc, "%s", e.msg);
    }
    b->last_fail_ms = 0;
    return 0;
}

static int ensure_connected(struct krc_sql *b, struct krc_error *err)
{
    if (b->conn != NULL && !b->lost && PQstatus(b->conn) == CONNECTION_OK) {
        return 0;
    }
    if (b->store->flags & KRC_STORE_DEFER_CONNECT) {
        return connect_deferred(b, err);
    }
    return pg_connect(b, err);
}

static int sqlstate_is(const char *st, const char *code)
{
    return st != NULL && strcmp(st, code) == 0;
}

/* A failed result into a KRC code and a message naming the server. */
static int pg_fail(struct krc_sql *b, const PGresult *res, const char *what, struct krc_error *err)
{
    const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    char msg[400];
    char where[300];

    clean_message(b, res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(b->conn), msg,
                  sizeof(msg));
    server_name(b, where, sizeof(where));
    b->retryable = sqlstate_is(st, "40001") || sqlstate_is(st, "40P01");
    b->no_statement = sqlstate_is(st, "26000");
    if (PQstatus(b->conn) != CONNECTION_OK || (st != NULL && strncmp(st, "08", 2) == 0) ||
        sqlstate_is(st, "57P01") || sqlstate_is(st, "57P02") || sqlstate_is(st, "57P03")) {
        b->lost = 1;
        return krc_error_set(err, KRC_EIO,
                             "%s (%s): connection lost while %s: %s (connecting again on the "
                             "next call)",
                             b->store->display, where, what, msg);
    }
    if (sqlstate_is(st, "53100")) {
        return krc_error_set(err, KRC_ETOOBIG, "%s (%s): disk full while %s: %s", b->store->display,
                             where, what, msg);
    }
    if (sqlstate_is(st, "57014")) {
        return krc_error_set(err, KRC_ETIMEOUT, "%s (%s): statement timed out (%d ms) while %s",
                             b->store->display, where, STATEMENT_TIMEOUT_MS, what);
    }
    if (sqlstate_is(st, "53300")) {
        return krc_error_set(err, KRC_EIO, "%s (%s): too many connections while %s: %s",
                             b->store->display, where, what, msg);
    }
    if (st != NULL && strncmp(st, "23", 2) == 0) {
        return krc_error_set(err, KRC_EINVAL, "%s (%s): constraint failed while %s: %s",
                             b->store->display, where, what, msg);
    }
    if (sqlstate_is(st, "25006")) {
        return krc_error_set(err, KRC_EIO, "%s (%s): read-only connection while %s",
                             b->store->display, where, what);
    }
    return krc_error_set(err, KRC_EIO, "%s (%s): %s while %s", b->store->display, where, msg, what);
}

/* Run one statement: the one prepared as `name`, or sql with p's
 * parameters, or (p NULL) a script in the simple protocol, which takes
 * several statements (the migrations); *ret gets the result (caller
 * PQclear). A serialization failure or deadlock of a statement outside a
 * transaction is tried once more. */
static int q_exec(struct krc_sql *b, const char *what, const char *sql, const char *name,
                  const struct krc_sql_stmt *p, PGresult **ret, struct krc_error *err)
{
    int rc;

    *ret = NULL;
    if ((rc = ensure_connected(b, err)) < 0) {
        return rc;
    }
    for (int attempt = 0;; attempt++) {
        int idle = PQtransactionStatus(b->conn) == PQTRANS_IDLE;
        PGresult *res = name != NULL ? PQexecPrepared(b->conn, name, p->n, p->v, NULL, NULL, 0)
                        : p != NULL  ? PQexecParams(b->conn, sql, p->n, NULL, p->v, NULL, NULL, 0)
                                     : PQexec(b->conn, sql);
        ExecStatusType es = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
        if (es == PGRES_COMMAND_OK || es == PGRES_TUPLES_OK) {
            b->retryable = 0;
            *ret = res;
            return 0;
        }
        rc = pg_fail(b, res, what, err);
        PQclear(res);
        if (!(b->retryable && idle && attempt == 0)) {
            return rc;
        }
    }
}

static int pg_exec(struct krc_sql *b, const char *sql, const char *what, struct krc_error *err)
{
    PGresult *res = NULL;
    int rc = q_exec(b, what, sql, NULL, NULL, &res, err);
    PQclear(res);
    return rc;
}

static void pg_rollback(struct krc_sql *b)
{
    if (b->conn != NULL && !b->lost && PQtransactionStatus(b->conn) != PQTRANS_IDLE) {
        PGresult *res = PQexec(b->conn, KRC_SQL_ROLLBACK);
        PQclear(res);
    }
}

static int pg_begin(struct krc_sql *b, struct krc_error *err)
{
    return pg_exec(b, "BEGIN", "starting a transaction", err);
}

static int pg_commit(struct krc_sql *b, struct krc_error *err)
{
    return pg_exec(b, KRC_SQL_COMMIT, "committing", err);
}

static int pg_retryable(struct krc_sql *b)
{
    return b->retryable;
}

/* ---- statements ------------------------------------------------------------------ */

static int pg_prepare(struct krc_sql *c, int id, const char *sql, unsigned flags,
                      struct krc_sql_stmt **ret, struct krc_error *err)
{
    struct krc_sql_stmt *st = krc_calloc(1, sizeof(*st));

    if (st == NULL || (st->sql = krc_strdup(sql)) == NULL) {
        krc_free(st);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    st->c = c;
    st->id = id;
    st->flags = flags;
    *ret = st;
    return 0;
}

static void pg_bind_text(struct krc_sql_stmt *st, int i, const char *v)
{
    if (i >= 1 && i <= MAX_PARAMS) {
        st->v[i - 1] = v;
        st->n = i > st->n ? i : st->n;
    }
}

static void pg_bind_int(struct krc_sql_stmt *st, int i, int64_t v)
{
    if (i >= 1 && i <= MAX_PARAMS) {
        snprintf(st->num[i - 1], sizeof(st->num[i - 1]), "%" PRId64, v);
        pg_bind_text(st, i, st->num[i - 1]);
    }
}

/* Prepare st on this connection unless it is (the planning of a hot
 * statement costs as much as its execution); its name into name. A new
 * connection prepares again. */
static int prepare_once(struct krc_sql *b, const struct krc_sql_stmt *st, char *name, size_t namesz,
                        struct krc_error *err)
{
    PGresult *res;
    int rc;

    snprintf(name, namesz, "krc_s_%d", st->id);
    if ((rc = ensure_connected(b, err)) < 0 || (b->prepared & (UINT64_C(1) << st->id))) {
        return rc;
    }
    res = PQprepare(b->conn, name, st->sql, 0, NULL);
    if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
        rc = pg_fail(b, res, "preparing a statement", err);
        PQclear(res);
        return rc;
    }
    PQclear(res);
    b->prepared |= UINT64_C(1) << st->id;
    return 0;
}

static int execute(struct krc_sql_stmt *st, const char *what, struct krc_error *err)
{
    struct krc_sql *b = st->c;
    char name[32];
    int rc = 0;

    if ((st->flags & KRC_SQL_PREPARE_SERVER) && st->id >= 0 && st->id < 64 && !b->unprepared) {
        rc = prepare_once(b, st, name, sizeof(name), err);
        if (rc == 0) {
            rc = q_exec(b, what, NULL, name, st, &st->res, err);
        }
        /* 26000: the statement is gone although this connection prepared
         * it: a pooler in transaction mode (PgBouncer) runs the calls on
         * different server sessions. No more prepared statements then. */
        b->unprepared = rc < 0 && b->no_statement;
        if (!b->unprepared) {
            return rc;
        }
    }
    return q_exec(b, what, st->sql, NULL, st, &st->res, err);
}

static int pg_step(struct krc_sql_stmt *st, const char *what, struct krc_error *err)
{
    int rc;

    if (st->res == NULL && (rc = execute(st, what, err)) < 0) {
        return rc;
    }
    if (st->row < PQntuples(st->res)) {
        st->row++;
        return 1;
    }
    return 0;
}

static int64_t pg_col_int(struct krc_sql_stmt *st, int i)
{
    return PQgetisnull(st->res, st->row - 1, i)
               ? 0
               : strtoll(PQgetvalue(st->res, st->row - 1, i), NULL, 10);
}

static const char *pg_col_text(struct krc_sql_stmt *st, int i)
{
    return PQgetisnull(st->res, st->row - 1, i) ? NULL : PQgetvalue(st->res, st->row - 1, i);
}

static int pg_col_null(struct krc_sql_stmt *st, int i)
{
    return PQgetisnull(st->res, st->row - 1, i);
}

static int64_t pg_changes(struct krc_sql_stmt *st)
{
    return st->res != NULL ? strtoll(PQcmdTuples(st->res), NULL, 10) : 0;
}

static void pg_done(struct krc_sql_stmt *st)
{
    if (st != NULL) {
        PQclear(st->res);
        krc_free(st->sql);
        krc_free(st);
    }
}

/* ---- open ------------------------------------------------------------------------ */

static void pg_close(struct krc_sql *b)
{
    if (b == NULL) {
        return;
    }
    if (b->conn != NULL) {
        PQfinish(b->conn);
    }
    if (b->password != NULL) {
        memset(b->password, 0, strlen(b->password));
    }
    krc_free(b->password);
    krc_free(b->password_file);
    krc_free(b);
}

static int pg_open(struct krc_store *s, const struct krc_store_options *o, struct krc_error *err)
{
    struct krc_sql *b = krc_calloc(1, sizeof(*b));
    int rc;

    if (b == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    b->store = s;
    b->connect_timeout_s = o != NULL && o->connect_timeout_s > 0 ? o->connect_timeout_s : 5;
    if (o != NULL && nonempty(o->password_file) &&
        (b->password_file = krc_strdup(o->password_file)) == NULL) {
        pg_close(b);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    s->c = b;
    if ((s->flags & KRC_STORE_DEFER_CONNECT) && (s->flags & KRC_STORE_CONNECT_ON_USE)) {
        b->unmigrated = 1;
        snprintf(b->last_error, sizeof(b->last_error), "%s: not connected yet", s->display);
        return krc_error_set(err, KRC_STORE_DEFERRED, "%s", b->last_error);
    }
    rc = pg_connect(b, err);
    if (rc == KRC_EIO && (s->flags & KRC_STORE_DEFER_CONNECT) && b->connect_failed &&
        server_unreachable(b)) {
        /* KRC_STORE_DEFER_CONNECT: a store that connects on a later call */
        b->unmigrated = 1;
        b->last_fail_ms = krc_clock_mono_ms();
        b->last_fail_ms = b->last_fail_ms != 0 ? b->last_fail_ms : 1;
        snprintf(b->last_error, sizeof(b->last_error), "%s", err != NULL ? err->msg : "");
        return KRC_STORE_DEFERRED;
    }
    if (rc < 0 || (rc = krc_store_migrate(s, err)) < 0) {
        pg_close(b);
        s->c = NULL;
        return rc;
    }
    return 0;
}

/* Retention's session lock: one replica at a time; a lost connection
 * released it with the session. */
static int pg_prune_lock(struct krc_sql *b, int take, struct krc_error *err)
{
    PGresult *res = NULL;
    int rc;

    if (!take) {
        return b->lost ? 0
                       : pg_exec(b, "SELECT pg_advisory_unlock(" LOCK_PRUNE ")",
                                 "releasing the retention lock", err);
    }
    rc = q_exec(b, "taking the retention lock", "SELECT pg_try_advisory_lock(" LOCK_PRUNE ")::int",
                NULL, NULL, &res, err);
    if (rc == 0) {
        rc = PQntuples(res) > 0 && strcmp(PQgetvalue(res, 0, 0), "1") == 0;
    }
    PQclear(res);
    return rc;
}

static const char *const pg_frags[KRC_SQL_N_FRAGS] = {
    [KRC_SQL_F_SCOPE] = "cluster = $1 AND ",
    [KRC_SQL_F_RSCOPE] = "r.cluster = $1 AND ",
    [KRC_SQL_F_WHERE_SCOPE] = " WHERE cluster = $1",
    [KRC_SQL_F_OUTBOX_COL] = "cluster, ",
    [KRC_SQL_F_OUTBOX_VAL] = "$1, ",
    [KRC_SQL_F_LOG_BYTES] = "krc_log_bytes(p.report_json)",
    [KRC_SQL_F_WINDOW_HINT] = "",
    [KRC_SQL_F_DB_BYTES] = "SELECT pg_database_size(current_database())",
    [KRC_SQL_F_RETURNING_ID] = " RETURNING id",
};

const struct krc_sql_driver krc_sql_pg = {
    .name = "postgres",
    .dialect = KRC_SQL_PG,
    .shared = 1,
    .journal = 0,
    .one_statement_record = 1,
    .frags = pg_frags,
    .open = pg_open,
    .close = pg_close,
    .prepare = pg_prepare,
    .bind_text = pg_bind_text,
    .bind_int = pg_bind_int,
    .step = pg_step,
    .col_int = pg_col_int,
    .col_text = pg_col_text,
    .col_null = pg_col_null,
    .changes = pg_changes,
    .done = pg_done,
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .retryable = pg_retryable,
    .prune_lock = pg_prune_lock,
    .release_memory = NULL,
    .wal_bytes = NULL,
    .last_insert_id = NULL,
};
