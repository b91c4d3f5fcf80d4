/* The SQLite driver of the store's SQL layer (krc/store/driver.h): one
 * replica's own file. The only file that sees SQLite. Statements are
 * prepared once per connection (SQLITE_PREPARE_PERSISTENT) on first use and
 * reset after every use; the file is created private (0600, its
 * directories 0700), in WAL mode with a busy timeout, so that several
 * connections (threads, `krc history`) share it. */
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

#include "krc/store/driver.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"

struct krc_sql_stmt {
    struct krc_sql *c;
    sqlite3_stmt *st;
    int cached; /* kept prepared in c->st (reset after use), else finalized */
};

/* c->st beyond the statements of the SQL layer: the transaction's */
enum { ST_BEGIN = KRC_SQL_CACHED, ST_COMMIT, ST_ROLLBACK, N_STMT };

struct krc_sql {
    sqlite3 *db;
    const char *path; /* the store's target (the file, or ":memory:"): what messages name */
    unsigned flags;
    struct krc_store *store; /* whose schema connect_db brings up to date */
    struct krc_sql_stmt st[N_STMT];
};

/* ---- errors -------------------------------------------------------------------- */

/* Translate a SQLite result into a KRC code and a message naming the file,
 * what we were doing and what is wrong. */
static int db_fail(const struct krc_sql *s, int rc, const char *what, struct krc_error *err)
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

static int sq_prepare(struct krc_sql *c, int id, const char *sql, unsigned flags,
                      struct krc_sql_stmt **ret, struct krc_error *err)
{
    struct krc_sql_stmt *st;
    int rc;

    (void)flags;
    if (id >= 0 && id < N_STMT) {
        st = &c->st[id];
        if (st->st == NULL) {
            rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->st, NULL);
            if (rc != SQLITE_OK) {
                return db_fail(c, rc, "preparing a statement", err);
            }
            st->c = c;
            st->cached = 1;
        }
        *ret = st;
        return 0;
    }
    if ((st = krc_calloc(1, sizeof(*st))) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    st->c = c;
    if ((rc = sqlite3_prepare_v2(c->db, sql, -1, &st->st, NULL)) != SQLITE_OK) {
        krc_free(st);
        return db_fail(c, rc, "preparing a statement", err);
    }
    *ret = st;
    return 0;
}

static void sq_bind_text(struct krc_sql_stmt *st, int i, const char *v)
{
    (void)(v != NULL ? sqlite3_bind_text(st->st, i, v, -1, SQLITE_STATIC)
                     : sqlite3_bind_null(st->st, i));
}

static void sq_bind_int(struct krc_sql_stmt *st, int i, int64_t v)
{
    (void)sqlite3_bind_int64(st->st, i, v);
}

static int sq_step(struct krc_sql_stmt *st, const char *what, struct krc_error *err)
{
    int rc = sqlite3_step(st->st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : db_fail(st->c, rc, what, err);
}

static int64_t sq_col_int(struct krc_sql_stmt *st, int i)
{
    return sqlite3_column_int64(st->st, i);
}

static const char *sq_col_text(struct krc_sql_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st->st, i);
}

static int sq_col_null(struct krc_sql_stmt *st, int i)
{
    return sqlite3_column_type(st->st, i) == SQLITE_NULL;
}

static int64_t sq_changes(struct krc_sql_stmt *st)
{
    return sqlite3_changes(st->c->db);
}

static void sq_done(struct krc_sql_stmt *st)
{
    if (st == NULL) {
        return;
    }
    if (st->cached) {
        sqlite3_reset(st->st);
        sqlite3_clear_bindings(st->st);
        return;
    }
    sqlite3_finalize(st->st);
    krc_free(st);
}

static int sq_exec(struct krc_sql *c, const char *sql, const char *what, struct krc_error *err)
{
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : db_fail(c, rc, what, err);
}

static int run_tx(struct krc_sql *c, int id, const char *sql, const char *what,
                  struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int rc = sq_prepare(c, id, sql, 0, &st, err);

    if (rc == 0 && st != NULL) {
        rc = sq_step(st, what, err);
        sq_done(st);
    }
    return rc;
}

static int sq_begin(struct krc_sql *c, struct krc_error *err)
{
    return run_tx(c, ST_BEGIN, "BEGIN IMMEDIATE", "starting a transaction", err);
}

static int sq_commit(struct krc_sql *c, struct krc_error *err)
{
    return run_tx(c, ST_COMMIT, KRC_SQL_COMMIT, "committing", err);
}

static void sq_rollback(struct krc_sql *c)
{
    if (!sqlite3_get_autocommit(c->db)) {
        (void)run_tx(c, ST_ROLLBACK, KRC_SQL_ROLLBACK, "rolling back", NULL);
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

static int quick_check(struct krc_sql *s, struct krc_error *err)
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

static int set_pragmas(struct krc_sql *s, struct krc_error *err)
{
    char sql[160];
    int rc;

    /* A small page cache per connection (the default is 2 MB each, and the
     * daemon holds one connection per thread): the working set is a few
     * index pages and the rows being written. */
    snprintf(sql, sizeof(sql),
             "PRAGMA busy_timeout = %d; " KRC_SQL_FOREIGN_KEYS_ON "; PRAGMA cache_size = -256;",
             KRC_STORE_BUSY_MS);
    if ((rc = sq_exec(s, sql, "configuring the connection", err)) < 0) {
        return rc;
    }
    if (s->flags & KRC_STORE_READONLY) {
        return 0;
    }
    /* No auto_vacuum: pages freed by pruning are reused by new rows, so
     * retention bounds the file at its high-water mark without the cost
     * of moving pages inside the writers' lock. */
    rc = sq_exec(s, "PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = 67108864;",
                 "switching to WAL", err);
    if (rc < 0) {
        return rc;
    }
    return sq_exec(s,
                   (s->flags & KRC_STORE_SYNC_FULL) ? "PRAGMA synchronous = FULL"
                                                    : "PRAGMA synchronous = NORMAL",
                   "configuring the connection", err);
}

static void disconnect(struct krc_sql *s)
{
    for (int i = 0; i < N_STMT; i++) {
        sqlite3_finalize(s->st[i].st);
        s->st[i].st = NULL;
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
static int connect_db(struct krc_sql *s, int immutable, struct krc_error *err)
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
    return krc_store_migrate(s->store, err);
}

/* A reader that may not create the -shm file (a directory it cannot write)
 * cannot open a WAL database normally. When no -wal file exists, no writer
 * is active and the file is complete: read it as immutable. */
static int can_read_immutable(const struct krc_sql *s)
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

static void sq_close(struct krc_sql *s)
{
    if (s != NULL) {
        disconnect(s);
        krc_free(s);
    }
}

static int sq_open(struct krc_store *store, const struct krc_store_options *o,
                   struct krc_error *err)
{
    static pthread_once_t configured = PTHREAD_ONCE_INIT;
    const char *path = store->target;
    struct krc_sql *s;
    int rc;

    (void)o;
    pthread_once(&configured, configure_sqlite);
    if (strcmp(path, ":memory:") != 0 && (rc = prepare_file(path, store->flags, err)) < 0) {
        return rc;
    }
    if ((s = krc_calloc(1, sizeof(*s))) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    s->path = path;
    s->flags = store->flags;
    s->store = store;
    store->c = s;
    rc = connect_db(s, 0, err);
    if (rc == KRC_EIO && (s->flags & KRC_STORE_READONLY) && can_read_immutable(s)) {
        disconnect(s);
        rc = connect_db(s, 1, err);
    }
    if (rc < 0) {
        sq_close(s);
        store->c = NULL;
        return rc;
    }
    return 0;
}

static void sq_release_memory(struct krc_sql *c)
{
    if (c != NULL && c->db != NULL) {
        sqlite3_db_release_memory(c->db);
    }
}

static int64_t sq_wal_bytes(struct krc_sql *c)
{
    struct krc_buf wal;
    struct stat sb;
    int64_t n = 0;

    if (strcmp(c->path, ":memory:") == 0) {
        return 0;
    }
    krc_buf_init(&wal, PATH_MAX + 8);
    if (krc_buf_printf(&wal, "%s-wal", c->path) == 0 && stat(krc_buf_str(&wal), &sb) == 0) {
        n = (int64_t)sb.st_size;
    }
    krc_buf_cleanup(&wal);
    return n;
}

static int64_t sq_last_insert_id(struct krc_sql *c)
{
    return sqlite3_last_insert_rowid(c->db);
}

static const char *const sq_frags[KRC_SQL_N_FRAGS] = {
    [KRC_SQL_F_SCOPE] = "",
    [KRC_SQL_F_RSCOPE] = "",
    [KRC_SQL_F_WHERE_SCOPE] = "",
    [KRC_SQL_F_OUTBOX_COL] = "",
    [KRC_SQL_F_OUTBOX_VAL] = "",
    [KRC_SQL_F_LOG_BYTES] =
        "CASE WHEN json_valid(p.report_json) THEN json_extract(p.report_json, '$.log.bytes') END",
    [KRC_SQL_F_WINDOW_HINT] = " INDEXED BY restarts_window",
    [KRC_SQL_F_DB_BYTES] =
        "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
    [KRC_SQL_F_RETURNING_ID] = "",
};

const struct krc_sql_driver krc_sql_sqlite = {
    .name = "sqlite",
    .dialect = KRC_SQL_SQLITE,
    .shared = 0,
    .journal = 1,
    .one_statement_record = 0,
    .frags = sq_frags,
    .open = sq_open,
    .close = sq_close,
    .prepare = sq_prepare,
    .bind_text = sq_bind_text,
    .bind_int = sq_bind_int,
    .step = sq_step,
    .col_int = sq_col_int,
    .col_text = sq_col_text,
    .col_null = sq_col_null,
    .changes = sq_changes,
    .done = sq_done,
    .exec = sq_exec,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .retryable = NULL,
    .prune_lock = NULL,
    .release_memory = sq_release_memory,
    .wal_bytes = sq_wal_bytes,
    .last_insert_id = sq_last_insert_id,
};
