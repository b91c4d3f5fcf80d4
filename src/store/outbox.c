/* The notification outbox above the SQL driver (krc/store/driver.h):
 * queueing, the delivery marks, the delivery journal (drivers that write
 * one: SQLite), the fence and the claim of a shared outbox (PostgreSQL),
 * the resume list and the thread lookup, and the mapping of an outbox row,
 * written once for both databases. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "krc/store/driver.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* A URL or a Slack token (xoxb-, xoxp-, xapp-...). */
static int looks_secret(const char *v)
{
    if (strstr(v, "://") != NULL) {
        return 1;
    }
    for (const char *p = v; (p = strstr(p, "x")) != NULL; p++) {
        if ((strncmp(p, "xox", 3) == 0 && p[3] != '\0' && p[4] == '-') ||
            strncmp(p, "xapp-", 5) == 0) {
            return 1;
        }
    }
    return 0;
}

int krc_store_check_outbox(const struct krc_store_outbox *m, struct krc_error *err)
{
    if (m == NULL) {
        return krc_error_set(err, KRC_EINVAL, "no notification to queue");
    }
    if ((unsigned)m->kind >= KRC_STORE_KIND_COUNT) {
        return krc_error_set(err, KRC_EINVAL, "outbox: unknown kind %d", (int)m->kind);
    }
    if (!nonempty(m->destination) || !nonempty(m->body)) {
        return krc_error_set(err, KRC_EINVAL, "outbox: %s is required",
                             nonempty(m->destination) ? "body" : "destination");
    }
    /* Webhook URLs and tokens are secrets and must not be written to disk. */
    if (looks_secret(m->destination)) {
        return krc_error_set(err, KRC_EINVAL,
                             "outbox: destination must be a configuration key such as "
                             "\"webhook:default\", not a URL or token");
    }
    return 0;
}

/* A message reference as the journal can hold it: printable, no space, short. */
static int valid_ref(const char *ref)
{
    for (const char *p = ref; *p != '\0'; p++) {
        if (*p <= ' ' || *p > '~') {
            return 0;
        }
    }
    return ref[0] != '\0' && strlen(ref) < 64;
}

static int not_found(struct krc_store *s, const char *what, int64_t id, struct krc_error *err)
{
    return krc_error_set(err, KRC_ENOTFOUND, "%s: no %s with id %lld", s->display, what,
                         (long long)id);
}

/* ---- writing ------------------------------------------------------------------------ */

int krc_store_add_outbox(struct krc_store *s, int64_t restart_id,
                         const struct krc_store_outbox *msg, int64_t *ret_outbox_id,
                         struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t oid = 0;
    int rc = krc_store_check_outbox(msg, err);

    if (rc < 0) {
        return rc;
    }
    if (restart_id > 0) {
        int64_t found = 0;
        if ((rc = krc_sql_prepare(s, KRC_SQL_RESTART_EXISTS, &st, err)) < 0) {
            return rc;
        }
        ST_INT(s, st, 1, restart_id);
        if ((rc = krc_sql_int(s, st, &found, "looking up a restart", err)) < 0) {
            return rc;
        }
        if (!found) {
            return not_found(s, "restart", restart_id, err);
        }
    }
    /* a single INSERT is its own transaction */
    if ((rc = krc_store_insert_outbox(s, restart_id, msg, &oid, err)) < 0) {
        return rc;
    }
    if (ret_outbox_id != NULL) {
        *ret_outbox_id = oid;
    }
    return 0;
}

/* An UPDATE of one outbox row by id ($1) and now ($2), with text ($3) and
 * a flag ($4) when nargs says so; KRC_ENOTFOUND naming `which` when it
 * changed nothing. */
static int update_outbox(struct krc_store *s, int id_sql, int64_t id, const char *a3, int nargs,
                         int final, const char *what, const char *which, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t changed = 0;
    int rc = krc_sql_prepare(s, id_sql, &st, err);

    if (rc < 0) {
        return rc;
    }
    ST_INT(s, st, 1, id);
    ST_INT(s, st, 2, krc_clock_now());
    if (nargs >= 3) {
        ST_TEXT(s, st, 3, a3);
    }
    if (nargs >= 4) {
        ST_INT(s, st, 4, final != 0);
    }
    if ((rc = krc_sql_run(s, st, what, &changed, err)) < 0) {
        return rc;
    }
    return changed == 0 ? not_found(s, which, id, err) : 0;
}

int krc_store_mark_delivered(struct krc_store *s, int64_t id, const char *message_ref,
                             struct krc_error *err)
{
    return update_outbox(s, KRC_SQL_MARK_DELIVERED, id, message_ref, 3, 0,
                         "marking a notification delivered", "notification", err);
}

int krc_store_mark_attempt(struct krc_store *s, int64_t id, const char *error_text, int final,
                           struct krc_error *err)
{
    return update_outbox(s, KRC_SQL_MARK_ATTEMPT, id, error_text, 4, final,
                         "recording a delivery attempt", "notification", err);
}

int krc_store_mark_withdrawn(struct krc_store *s, int64_t id, struct krc_error *err)
{
    return update_outbox(s, KRC_SQL_MARK_WITHDRAWN, id, NULL, 2, 0,
                         "marking a notification withdrawn", "pending notification", err);
}

int krc_store_mark_superseded(struct krc_store *s, int64_t id, struct krc_error *err)
{
    return update_outbox(s, KRC_SQL_MARK_SUPERSEDED, id, NULL, 2, 0,
                         "marking a notification superseded", "pending notification", err);
}

/* ---- fencing ------------------------------------------------------------------------ */

int krc_store_fence(struct krc_store *s, int64_t token, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t stored = 0;
    int rc;

    if (token < 0) {
        return krc_error_set(err, KRC_EINVAL, "fence: token %lld is negative", (long long)token);
    }
    if (!s->drv->shared) {
        return 0;
    }
    if ((rc = krc_sql_prepare(s, KRC_SQL_FENCE, &st, err)) < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    ST_INT(s, st, 2, token);
    if ((rc = krc_sql_int(s, st, &stored, "raising the fence", err)) < 0) {
        return rc;
    }
    return stored > token ? KRC_STORE_FENCED : 0;
}

int krc_store_claim(struct krc_store *s, int64_t id, int64_t token, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    int64_t claimed = 0;
    int rc;

    if (id <= 0 || token < 0) {
        return krc_error_set(err, KRC_EINVAL, "claim: outbox id %lld or token %lld is out of range",
                             (long long)id, (long long)token);
    }
    if (!s->drv->shared) {
        return 0;
    }
    if ((rc = krc_sql_prepare(s, KRC_SQL_CLAIM, &st, err)) < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    ST_INT(s, st, 2, id);
    ST_INT(s, st, 3, token);
    ST_INT(s, st, 4, krc_clock_now());
    if ((rc = krc_sql_int(s, st, &claimed, "claiming a notification", err)) < 0) {
        return rc;
    }
    return claimed > 0 ? 0 : KRC_STORE_FENCED;
}

/* ---- reading ------------------------------------------------------------------------ */

void krc_sql_read_message(struct krc_store *s, struct krc_sql_stmt *st, struct krc_store_message *m,
                          struct krc_sql_strings *k)
{
#define TXT(i) krc_sql_keep(k, COL_TEXT(s, st, i))
    memset(m, 0, sizeof(*m));
    m->id = COL_INT(s, st, 0);
    m->restart_id = COL_INT(s, st, 1);
    m->kind = krc_store_kind_parse(COL_TEXT(s, st, 2));
    m->destination = TXT(3);
    m->channel = TXT(4);
    m->thread_key = TXT(5);
    m->body = TXT(6);
    m->fallback = TXT(7);
    m->state = krc_store_state_parse(COL_TEXT(s, st, 8));
    m->attempts = (int)COL_INT(s, st, 9);
    m->last_error = TXT(10);
    m->created_at = COL_INT(s, st, 11);
    m->updated_at = COL_INT(s, st, 12);
    m->delivered_at = COL_INT(s, st, 13);
    m->message_ref = TXT(14);
#undef TXT
}

/* This cluster's pending rows oldest first, one query per row, none active
 * during the callback (which may mark rows), after the delivery journal. */
int krc_store_pending(struct krc_store *s, krc_store_message_fn fn, void *ud, struct krc_error *err)
{
    int64_t last = 0;
    int rc;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "pending: no callback");
    }
    /* resuming when that fails could post again what was accepted */
    if (s->drv->journal && (rc = krc_store_journal_apply(s, err)) < 0) {
        return rc;
    }
    for (;;) {
        struct krc_store_message m;
        struct krc_sql_strings k;
        struct krc_sql_stmt *st = NULL;

        if ((rc = krc_sql_prepare(s, KRC_SQL_PENDING_NEXT, &st, err)) < 0) {
            return rc;
        }
        ST_TEXT(s, st, 1, s->cluster);
        ST_INT(s, st, 2, last);
        memset(&k, 0, sizeof(k));
        memset(&m, 0, sizeof(m));
        if ((rc = s->drv->step(st, "reading pending notifications", err)) == 1) {
            krc_sql_read_message(s, st, &m, &k);
        }
        s->drv->done(st);
        if (rc <= 0 || k.failed) {
            krc_sql_strings_cleanup(&k);
            return rc <= 0 ? rc : krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        last = m.id;
        rc = fn(&m, ud);
        krc_sql_strings_cleanup(&k);
        if (rc != 0) {
            return rc;
        }
    }
}

int krc_store_thread_ts(struct krc_store *s, const char *thread_key, char **ret_ref,
                        char **ret_channel, struct krc_error *err)
{
    struct krc_sql_stmt *st = NULL;
    char *ref = NULL;
    char *ch = NULL;
    int rc;

    if (thread_key == NULL) {
        return krc_error_set(err, KRC_EINVAL, "thread key is required");
    }
    if ((rc = krc_sql_prepare(s, KRC_SQL_THREAD_REF, &st, err)) < 0) {
        return rc;
    }
    ST_TEXT(s, st, 1, s->cluster);
    ST_TEXT(s, st, 2, thread_key);
    if ((rc = s->drv->step(st, "looking up a thread", err)) == 1) {
        const char *c = COL_TEXT(s, st, 1);
        ref = krc_strdup(COL_TEXT(s, st, 0));
        ch = c != NULL ? krc_strdup(c) : NULL;
        if (ref == NULL || (c != NULL && ch == NULL)) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    s->drv->done(st);
    if (rc < 0) {
        krc_free(ref);
        krc_free(ch);
        return rc;
    }
    *ret_ref = ref;
    if (ret_channel != NULL) {
        *ret_channel = ch;
    } else {
        krc_free(ch);
    }
    return 0;
}

/* ---- delivery journal ---------------------------------------------------------- */

/* PATH-delivered; NULL for an in-memory database (it has no journal). */
static char *journal_path(const struct krc_store *s)
{
    struct krc_buf b;
    char *out = NULL;

    if (strcmp(s->target, ":memory:") == 0) {
        return NULL;
    }
    krc_buf_init(&b, strlen(s->target) + 16);
    if (krc_buf_printf(&b, "%s-delivered", s->target) == 0) {
        out = krc_buf_take(&b);
    }
    krc_buf_cleanup(&b);
    return out;
}

static int no_journal(struct krc_store *s, struct krc_error *err)
{
    return krc_error_set(err, KRC_EUNSUPPORTED,
                         "%s: no delivery journal with PostgreSQL: the fact stays in the "
                         "sender's memory until the mark succeeds",
                         s->display);
}

int krc_store_journal_delivered(struct krc_store *s, int64_t id, const char *message_ref,
                                struct krc_error *err)
{
    char line[128];
    char *path;
    int fd;
    int n;
    int rc = 0;

    if (id <= 0 || (message_ref != NULL && !valid_ref(message_ref))) {
        return krc_error_set(err, KRC_EINVAL, "delivery journal: bad outbox id or slack ts");
    }
    if (!s->drv->journal) {
        return no_journal(s, err);
    }
    if (strcmp(s->target, ":memory:") == 0) {
        return krc_error_set(err, KRC_EINVAL, "an in-memory database has no delivery journal");
    }
    if ((path = journal_path(s)) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    n = snprintf(line, sizeof(line), "%lld %s\n", (long long)id,
                 message_ref != NULL ? message_ref : "-");
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

int krc_store_journal_clear(struct krc_store *s, struct krc_error *err)
{
    char *path;
    int rc = 0;

    if (!s->drv->journal) {
        return no_journal(s, err);
    }
    if (strcmp(s->target, ":memory:") == 0) {
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

/* The journal's text into *text; 0 with an empty text when there is none. */
static int journal_read(const char *path, struct krc_buf *text, struct krc_error *err)
{
    char chunk[4096];
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        return errno == ENOENT
                   ? 0
                   : krc_error_set(err, KRC_EIO, "%s: cannot open: %s", path, KRC_ERRNO_STR(errno));
    }
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n == 0) {
            break;
        }
        if (n < 0) {
            rc = krc_error_set(err, KRC_EIO, "%s: cannot read: %s", path, KRC_ERRNO_STR(errno));
            break;
        }
        if (krc_buf_append(text, chunk, (size_t)n) < 0) {
            rc = krc_error_set(err, KRC_ETOOBIG, "%s: larger than %d bytes", path, JOURNAL_MAX);
            break;
        }
    }
    close(fd);
    return rc;
}

/* Its lines as delivered marks, in one transaction. */
static int journal_mark(struct krc_store *s, char *p, struct krc_error *err)
{
    int64_t now = krc_clock_now();
    int rc = s->drv->begin(s->c, err);

    while (rc == 0 && *p != '\0') {
        char *nl = strchr(p, '\n');
        struct krc_sql_stmt *st = NULL;
        long long id;
        char ref[64];
        char extra;
        if (nl == NULL) {
            break; /* torn last line: the write did not finish */
        }
        *nl = '\0';
        /* clang-tidy: %18lld cannot overflow (krc's own journal file); id > 0 checked */
        /* NOLINTNEXTLINE(cert-err34-c) */
        if (sscanf(p, "%18lld %63s %c", &id, ref, &extra) == 2 && id > 0 &&
            (rc = krc_sql_prepare(s, KRC_SQL_JOURNAL_APPLY, &st, err)) == 0) {
            ST_INT(s, st, 1, id);
            ST_INT(s, st, 2, now);
            ST_TEXT(s, st, 3, strcmp(ref, "-") == 0 ? NULL : ref);
            rc = krc_sql_run(s, st, "applying the delivery journal", NULL, err);
        }
        p = nl + 1;
    }
    if (rc == 0) {
        rc = s->drv->commit(s->c, err);
    }
    if (rc < 0) {
        s->drv->rollback(s->c);
    }
    return rc;
}

/* Mark delivered what the journal says was accepted, then remove it. */
int krc_store_journal_apply(struct krc_store *s, struct krc_error *err)
{
    char *path = journal_path(s);
    struct krc_buf text;
    int rc;

    if (path == NULL) {
        return strcmp(s->target, ":memory:") == 0 ? 0
                                                  : krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_buf_init(&text, JOURNAL_MAX);
    rc = journal_read(path, &text, err);
    if (rc == 0 && text.len > 0) {
        rc = journal_mark(s, (char *)krc_buf_str(&text), err);
    }
    krc_buf_cleanup(&text);
    if (rc == 0 && unlink(path) != 0 && errno != ENOENT) {
        rc = krc_error_set(err, KRC_EIO, "%s: cannot remove: %s", path, KRC_ERRNO_STR(errno));
    }
    krc_free(path);
    return rc;
}
