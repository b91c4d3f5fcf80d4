/* store: restart records, the outbox, queries, retention, schema and file
 * errors; report_json: the stored diagnostics document.
 *
 * The behaviour tests run on either backend (store_target.h): SQLite
 * (":memory:" or a file in a private temporary directory), or PostgreSQL
 * when KRC_TEST_PG_URL is set, each test in a schema of its own. Tests about
 * SQLite itself (files, modes, WAL, the journal, corruption, migrations of
 * old files, query plans) skip on PostgreSQL. They poke at the file with
 * SQLite directly (to fake an old or newer schema or hold a lock); krc
 * itself only reaches SQLite through driver_sqlite.c. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/model/report_json.h"
#include "krc/store/driver.h"
#include "krc/store/store.h"
#include "store_target.h"

#define NOW 1800000000LL /* 2027-01-15 */

static char tmpdir[256];

static void path_in_tmp(char *out, size_t outsz, const char *name)
{
    int n = snprintf(out, outsz, "%s/%s", tmpdir, name);
    assert_true(n > 0 && (size_t)n < outsz);
}

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/krc-test-store-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    krc_clock_set_fake_now(NOW);
    return 0;
}

static int teardown_tmp(void **state)
{
    char cmd[512];
    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
    test_store_target_cleanup();
    krc_clock_set_fake_now(0);
    return 0;
}

/* A test about SQLite itself: skipped on PostgreSQL, saying why. */
#define SQLITE_ONLY(why)                                                                           \
    do {                                                                                           \
        if (test_store_is_pg()) {                                                                  \
            print_message("skipped on PostgreSQL: %s\n", why);                                     \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* A fresh target of the backend under test into out (a file on SQLite). */
static void new_target(char *out, size_t n)
{
    assert_int_equal(test_store_target(out, n), 0);
}

/* An empty store: ":memory:" on SQLite, a fresh schema on PostgreSQL. */
static struct krc_store *open_mem(void)
{
    char target[1024] = ":memory:";
    struct krc_store *s = NULL;
    struct krc_error e;
    if (test_store_is_pg()) {
        new_target(target, sizeof(target));
    }
    krc_error_clear(&e);
    if (krc_store_open(target, 0, &s, &e) != 0) {
        fail_msg("%s", e.msg);
    }
    return s;
}

static struct krc_store_restart mkrec(const char *uid, const char *ns, const char *pod, int count,
                                      int64_t detected)
{
    struct krc_store_restart r;
    memset(&r, 0, sizeof(r));
    r.pod_uid = uid;
    r.container = "app";
    r.restart_count = count;
    r.namespace = ns;
    r.pod = pod;
    r.workload_kind = "Deployment";
    r.workload_name = "web";
    r.node = "node-1";
    r.cause = KRC_CAUSE_OOM_KILLED;
    r.has_exit_code = 1;
    r.exit_code = 137;
    r.signal = 9;
    r.reason = "OOMKilled";
    r.started_at = detected - 100;
    r.finished_at = detected - 2;
    r.detected_at = detected;
    r.decision = "alert";
    r.summary = "container app was OOM-killed";
    r.message = "web-1 OOMKilled &amp; restarted";
    r.report_json = "{\"version\":1}";
    return r;
}

static struct krc_store_outbox mkmsg(enum krc_store_kind kind, const char *thread_key)
{
    struct krc_store_outbox m;
    memset(&m, 0, sizeof(m));
    m.kind = kind;
    m.destination = "webhook:default";
    m.channel = "#alerts";
    m.thread_key = thread_key;
    m.body = "{\"text\":\"hello\"}";
    m.fallback = "{\"text\":\"hello (text)\"}";
    return m;
}

static int64_t stat_of(struct krc_store *s, int which)
{
    struct krc_store_stats st;
    assert_int_equal(krc_store_stats(s, &st, NULL), 0);
    switch (which) {
    case 0:
        return st.restarts;
    case 1:
        return st.pending;
    case 2:
        return st.delivered;
    case 4:
        return st.withdrawn;
    case 5:
        return st.superseded;
    default:
        return st.failed;
    }
}

/* ---- record and dedup ---------------------------------------------------------- */

/* One restart, one pending row per destination, all or nothing. */
static void test_record_many_destinations(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-m", "shop", "web-1", 3, NOW);
    struct krc_store_outbox m[3];
    int64_t ids[3] = {-1, -1, -1};
    int64_t rid = -1;
    struct krc_error e;

    (void)state;
    for (int i = 0; i < 3; i++) {
        m[i] = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    }
    m[1].destination = "dest:oncall";
    m[2].destination = "https://events.pagerduty.com/v2/enqueue"; /* refused: a URL */
    krc_error_clear(&e);
    assert_int_equal(krc_store_record_many(s, &r, m, 3, &rid, ids, &e), KRC_EINVAL);
    assert_int_equal(stat_of(s, 0), 0); /* nothing written, not even the restart */
    assert_int_equal(stat_of(s, 1), 0);
    m[2].destination = "dest:audit";
    assert_int_equal(krc_store_record_many(s, &r, m, 3, &rid, ids, NULL), 0);
    assert_true(rid > 0);
    assert_true(ids[0] > 0 && ids[1] > ids[0] && ids[2] > ids[1]);
    assert_int_equal(stat_of(s, 0), 1);
    assert_int_equal(stat_of(s, 1), 3);
    /* each row is delivered on its own */
    assert_int_equal(krc_store_mark_delivered(s, ids[1], NULL, NULL), 0);
    assert_int_equal(stat_of(s, 1), 2);
    assert_int_equal(stat_of(s, 2), 1);
    /* the same restart again: nothing, every id 0 */
    assert_int_equal(krc_store_record_many(s, &r, m, 3, NULL, ids, NULL), KRC_STORE_EXISTS);
    assert_true(ids[0] == 0 && ids[1] == 0 && ids[2] == 0);
    assert_int_equal(stat_of(s, 1), 2);
    krc_store_close(s);
}

/* The history's delivery column is a message's row; the implicit Kubernetes
 * Event's (written last) only when the restart has no other. */
static void test_delivery_prefers_a_message_to_the_event(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-e", "shop", "web-1", 3, NOW);
    struct krc_store_restart alone = mkrec("uid-f", "shop", "web-2", 1, NOW);
    struct krc_store_outbox m[2];
    struct krc_store_entry *ent = NULL;
    int64_t ids[2];
    int64_t rid = 0;

    (void)state;
    m[0] = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    m[1] = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    m[1].destination = "dest:kubernetes-event";
    assert_int_equal(krc_store_record_many(s, &r, m, 2, &rid, ids, NULL), 0);
    assert_int_equal(krc_store_mark_attempt(s, ids[1], "403", 1, NULL), 0);
    assert_int_equal(krc_store_get(s, rid, &ent, NULL), 0);
    assert_string_equal(ent->row.delivery, "pending"); /* the message's, not the failed Event's */
    krc_store_entry_free(ent);
    assert_int_equal(krc_store_mark_delivered(s, ids[0], NULL, NULL), 0);
    assert_int_equal(krc_store_get(s, rid, &ent, NULL), 0);
    assert_string_equal(ent->row.delivery, "delivered");
    krc_store_entry_free(ent);
    /* the Event alone: its row */
    assert_int_equal(krc_store_record_many(s, &alone, &m[1], 1, &rid, ids, NULL), 0);
    assert_int_equal(krc_store_mark_attempt(s, ids[0], "403", 1, NULL), 0);
    assert_int_equal(krc_store_get(s, rid, &ent, NULL), 0);
    assert_string_equal(ent->row.delivery, "failed");
    krc_store_entry_free(ent);
    krc_store_close(s);
}

/* The query builder binds each value to the parameter its condition took,
 * in both dialects, and refuses more parameters than it holds. */
static int query_rows(struct krc_store *s, const char *a, int64_t b, const char *c)
{
    struct krc_sql_query q;
    struct krc_sql_stmt *st = NULL;
    struct krc_error e;
    int rows = 0;
    int rc;

    krc_sql_query_init(&q, "SELECT 1 WHERE 1 = 1");
    krc_sql_query_text(&q, " AND CAST('alpha' AS TEXT) = ", a);
    krc_sql_query_int(&q, " AND (CAST(7 AS BIGINT) = ", b);
    krc_sql_query_add(&q, ")");
    krc_sql_query_text(&q, " AND CAST('gamma' AS TEXT) = ", c);
    assert_int_equal(krc_sql_query_prepare(s, &q, &st, "a test query", &e), 0);
    while ((rc = s->drv->step(st, "a test query", &e)) == 1) {
        rows++;
    }
    s->drv->done(st);
    assert_int_equal(rc, 0);
    return rows;
}

static void test_query_builder(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_sql_query q;
    struct krc_sql_stmt *st = NULL;
    struct krc_error e;

    (void)state;
    assert_true(query_rows(s, "alpha", 7, "gamma") > 0);
    assert_int_equal(query_rows(s, "gamma", 7, "alpha"), 0);
    assert_int_equal(query_rows(s, "alpha", 8, "gamma"), 0);

    krc_sql_query_init(&q, "SELECT 1 WHERE 1 = 1");
    for (int i = 0; i <= KRC_SQL_QUERY_PARAMS; i++) {
        krc_sql_query_int(&q, " AND 1 = ", 1);
    }
    assert_int_equal(krc_sql_query_prepare(s, &q, &st, "a long query", &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "a long query: more than 80 parameters"));
    krc_store_close(s);
}

static void test_record_and_duplicate(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 3, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    int64_t rid = -1;
    int64_t oid = -1;
    int64_t rid2 = -1;
    int64_t oid2 = -1;
    struct krc_error e;

    (void)state;
    assert_int_equal(krc_store_record(s, &r, &m, &rid, &oid, NULL), 0);
    assert_true(rid > 0);
    assert_true(oid > 0);
    assert_int_equal(stat_of(s, 0), 1);
    assert_int_equal(stat_of(s, 1), 1);

    /* same identity, different everything else: nothing written */
    r.namespace = "other";
    r.decision = "muted";
    assert_int_equal(krc_store_record(s, &r, &m, &rid2, &oid2, NULL), KRC_STORE_EXISTS);
    assert_int_equal(rid2, rid);
    assert_int_equal(oid2, 0);
    assert_int_equal(stat_of(s, 0), 1);
    assert_int_equal(stat_of(s, 1), 1);
    {
        struct krc_store_entry *en = NULL;
        assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
        assert_string_equal(en->row.namespace, "shop");
        assert_string_equal(en->row.decision, "alert");
        krc_store_entry_free(en);
    }

    /* another container or restart count is another restart */
    r.container = "sidecar";
    assert_int_equal(krc_store_record(s, &r, NULL, &rid2, NULL, NULL), 0);
    assert_true(rid2 != rid);
    r.container = "app";
    r.restart_count = 4; /* a later termination */
    r.finished_at += 30;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(stat_of(s, 0), 3);
    assert_int_equal(stat_of(s, 1), 1);

    /* bad input is refused with the field named, nothing written */
    krc_error_clear(&e);
    r.restart_count = 9;
    r.pod_uid = "";
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "pod_uid"));
    r.pod_uid = "uid-9";
    r.detected_at = 0;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, &e), KRC_EINVAL);
    r.detected_at = NOW;
    m.destination = "https://hooks.slack.com/services/T/B/x";
    assert_int_equal(krc_store_record(s, &r, &m, NULL, NULL, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "not a URL"));
    m.destination = "api:xoxb-1234-abcd";
    assert_int_equal(krc_store_record(s, &r, &m, NULL, NULL, &e), KRC_EINVAL);
    m.destination = "channel:#xoxo"; /* a channel name is fine */
    m.body = NULL;
    assert_int_equal(krc_store_record(s, &r, &m, NULL, NULL, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "body"));
    assert_int_equal(stat_of(s, 0), 3);
    m.body = "{}";
    assert_int_equal(krc_store_record(s, &r, &m, NULL, NULL, &e), 0);
    assert_int_equal(stat_of(s, 0), 4);

    /* set_decision */
    assert_int_equal(krc_store_set_decision(s, rid, "grouped", NULL, NULL), 0);
    {
        struct krc_store_entry *en = NULL;
        assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
        assert_string_equal(en->row.decision, "grouped");
        assert_string_equal(en->message, "web-1 OOMKilled &amp; restarted");
        krc_store_entry_free(en);
        assert_int_equal(krc_store_set_decision(s, rid, "alert", "new text", NULL), 0);
        assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
        assert_string_equal(en->row.decision, "alert");
        assert_string_equal(en->message, "new text");
        assert_string_equal(en->report_json, "{\"version\":1}");
        krc_store_entry_free(en);
    }
    assert_int_equal(krc_store_set_decision(s, 99999, "grouped", NULL, &e), KRC_ENOTFOUND);

    /* amend: a device reported Unhealthy after the restart (detect/dev_health.h) */
    {
        struct krc_store_entry *en = NULL;
        assert_int_equal(krc_store_amend(s, rid, "gpu_device_unhealthy", "device GPU-1 Unhealthy",
                                         "high", "{\"version\":1,\"amended\":1}", NULL),
                         0);
        assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
        assert_string_equal(en->row.cause, "gpu_device_unhealthy");
        assert_string_equal(en->row.summary, "device GPU-1 Unhealthy");
        assert_string_equal(en->row.confidence, "high");
        assert_string_equal(en->row.decision, "alert"); /* unchanged */
        assert_string_equal(en->message, "new text");   /* the first alert's, kept */
        assert_string_equal(en->report_json, "{\"version\":1,\"amended\":1}");
        krc_store_entry_free(en);
        /* without a report JSON, the stored one stays */
        assert_int_equal(
            krc_store_amend(s, rid, "gpu_device_unhealthy", "again", "medium", NULL, NULL), 0);
        assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
        assert_string_equal(en->row.summary, "again");
        assert_string_equal(en->report_json, "{\"version\":1,\"amended\":1}");
        krc_store_entry_free(en);
    }
    assert_int_equal(krc_store_amend(s, 99999, "gpu_device_unhealthy", "x", "high", NULL, &e),
                     KRC_ENOTFOUND);
    assert_int_equal(krc_store_amend(s, rid, "", "x", "high", NULL, &e), KRC_EINVAL);
    krc_store_close(s);
}

/* ---- outbox ---------------------------------------------------------------------- */

struct seen {
    int64_t ids[64];
    int attempts[64];
    char kinds[64][16];
    int n;
    struct krc_store *mark; /* mark each one delivered from inside the callback */
    int stop_after;
};

static int on_pending(const struct krc_store_message *m, void *ud)
{
    struct seen *sn = ud;
    assert_true(sn->n < 64);
    assert_int_equal(m->state, KRC_STORE_PENDING);
    assert_non_null(m->body);
    assert_non_null(m->destination);
    sn->ids[sn->n] = m->id;
    sn->attempts[sn->n] = m->attempts;
    snprintf(sn->kinds[sn->n], sizeof(sn->kinds[0]), "%s", krc_store_kind_name(m->kind));
    sn->n++;
    if (sn->mark != NULL) {
        assert_int_equal(krc_store_mark_delivered(sn->mark, m->id, "1.0", NULL), 0);
    }
    if (sn->stop_after > 0 && sn->n == sn->stop_after) {
        return 42;
    }
    return 0;
}

static void test_outbox_lifecycle(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    struct krc_store_entry *en = NULL;
    struct seen sn;
    int64_t rid;
    int64_t o1;
    int64_t o2;
    int64_t o3;
    struct krc_error e;

    (void)state;
    assert_int_equal(krc_store_record(s, &r, &m, &rid, &o1, NULL), 0);
    m.kind = KRC_STORE_KIND_SUMMARY;
    m.thread_key = NULL;
    m.channel = NULL;
    m.fallback = NULL;
    assert_int_equal(krc_store_add_outbox(s, 0, &m, &o2, NULL), 0);
    m.kind = KRC_STORE_KIND_RECOVERED;
    assert_int_equal(krc_store_add_outbox(s, rid, &m, &o3, NULL), 0);
    assert_int_equal(krc_store_add_outbox(s, 777, &m, NULL, &e), KRC_ENOTFOUND);
    assert_true(o1 < o2 && o2 < o3);

    krc_clock_set_fake_now(NOW + 5);
    assert_int_equal(krc_store_mark_attempt(s, o1, "HTTP 500 from Slack", 0, NULL), 0);
    assert_int_equal(krc_store_mark_attempt(s, o1, "HTTP 503 from Slack", 0, NULL), 0);
    assert_int_equal(krc_store_mark_attempt(s, o3, "HTTP 400 invalid_blocks", 1, NULL), 0);
    assert_int_equal(krc_store_mark_attempt(s, 12345, "x", 0, &e), KRC_ENOTFOUND);
    assert_int_equal(krc_store_mark_delivered(s, 12345, NULL, &e), KRC_ENOTFOUND);

    memset(&sn, 0, sizeof(sn));
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
    assert_int_equal(sn.n, 2); /* o3 failed for good */
    assert_int_equal(sn.ids[0], o1);
    assert_int_equal(sn.attempts[0], 2);
    assert_string_equal(sn.kinds[0], "alert");
    assert_int_equal(sn.ids[1], o2);
    assert_string_equal(sn.kinds[1], "summary");

    /* a callback may stop the iteration */
    memset(&sn, 0, sizeof(sn));
    sn.stop_after = 1;
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 42);
    assert_int_equal(sn.n, 1);

    krc_clock_set_fake_now(NOW + 9);
    assert_int_equal(krc_store_mark_delivered(s, o1, "1700000000.000100", NULL), 0);
    assert_int_equal(stat_of(s, 1), 1);
    assert_int_equal(stat_of(s, 2), 1);
    assert_int_equal(stat_of(s, 3), 1);

    assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
    assert_int_equal(en->n_messages, 2);
    assert_int_equal(en->messages[0].id, o1);
    assert_int_equal(en->messages[0].state, KRC_STORE_DELIVERED);
    assert_int_equal(en->messages[0].attempts, 3);
    assert_string_equal(en->messages[0].last_error, "HTTP 503 from Slack");
    assert_string_equal(en->messages[0].message_ref, "1700000000.000100");
    assert_int_equal(en->messages[0].created_at, NOW);
    assert_int_equal(en->messages[0].delivered_at, NOW + 9);
    assert_int_equal(en->messages[0].updated_at, NOW + 9);
    assert_string_equal(en->messages[0].channel, "#alerts");
    assert_string_equal(en->messages[0].thread_key, "shop/web-1");
    assert_string_equal(en->messages[0].fallback, "{\"text\":\"hello (text)\"}");
    assert_int_equal(en->messages[1].id, o3);
    assert_int_equal(en->messages[1].kind, KRC_STORE_KIND_RECOVERED);
    assert_int_equal(en->messages[1].state, KRC_STORE_FAILED);
    assert_int_equal(en->messages[1].delivered_at, 0);
    assert_null(en->messages[1].message_ref);
    /* the row shows the latest notification's state */
    assert_string_equal(en->row.delivery, "failed");
    krc_store_entry_free(en);

    /* marking from inside the pending callback works */
    memset(&sn, 0, sizeof(sn));
    sn.mark = s;
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
    assert_int_equal(sn.n, 1);
    assert_int_equal(stat_of(s, 1), 0);
    krc_clock_set_fake_now(NOW);
    krc_store_close(s);
}

static void test_pending_survives_close_and_kill(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    struct seen sn;
    int64_t o1;
    int64_t rid;
    pid_t pid;
    int status;

    (void)state;
    if (test_store_is_pg()) {
        new_target(path, sizeof(path));
    } else {
        path_in_tmp(path, sizeof(path), "crash/state/krc.db");
    }
    /* close without marking */
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, &m, &rid, &o1, NULL), 0);
    krc_store_close(s);

    /* a writer killed with SIGKILL right after its commit */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct krc_store *c = NULL;
        struct krc_store_restart r2 = mkrec("uid-2", "shop", "web-2", 1, NOW + 1);
        if (krc_store_open(path, 0, &c, NULL) != 0 ||
            krc_store_record(c, &r2, &m, NULL, NULL, NULL) != 0) {
            _exit(3);
        }
        kill(getpid(), SIGKILL);
        _exit(4);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    memset(&sn, 0, sizeof(sn));
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
    assert_int_equal(sn.n, 2);
    assert_int_equal(sn.ids[0], o1);
    /* and the dedup identity survived too */
    assert_int_equal(krc_store_record(s, &r, &m, NULL, NULL, NULL), KRC_STORE_EXISTS);
    r.pod_uid = "uid-2";
    r.pod = "web-2";
    r.finished_at = NOW + 1 - 2; /* the child's restart */
    assert_int_equal(krc_store_record(s, &r, &m, NULL, NULL, NULL), KRC_STORE_EXISTS);
    krc_store_close(s);

    /* files are private */
    if (!test_store_is_pg()) {
        struct stat sb;
        char dir[512];
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0600);
        path_in_tmp(dir, sizeof(dir), "crash/state");
        assert_int_equal(stat(dir, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0700);
    }
}

static void test_thread_ts(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    int64_t o1;
    int64_t o2;
    int64_t o3;
    int64_t o4;
    char *ts = (char *)"unset";
    char *ch = NULL;

    (void)state;
    assert_int_equal(krc_store_thread_ts(s, "shop/web-1", &ts, &ch, NULL), 0);
    assert_null(ts);
    assert_null(ch);

    assert_int_equal(krc_store_record(s, &r, &m, NULL, &o1, NULL), 0);
    assert_int_equal(krc_store_thread_ts(s, "shop/web-1", &ts, NULL, NULL), 0);
    assert_null(ts); /* pending is not a thread yet */
    assert_int_equal(krc_store_mark_delivered(s, o1, "100.1", NULL), 0);

    krc_clock_set_fake_now(NOW + 60);
    r.restart_count = 2;
    r.finished_at += 60;
    m.channel = "#gpu";
    assert_int_equal(krc_store_record(s, &r, &m, NULL, &o2, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, o2, "200.2", NULL), 0);
    /* a later reply is not a parent */
    r.restart_count = 3;
    r.finished_at += 60;
    m.kind = KRC_STORE_KIND_REPLY;
    assert_int_equal(krc_store_record(s, &r, &m, NULL, &o3, NULL), 0);
    krc_clock_set_fake_now(NOW + 120);
    assert_int_equal(krc_store_mark_delivered(s, o3, "300.3", NULL), 0);
    /* another pod */
    r = mkrec("uid-2", "shop", "web-2", 1, NOW);
    m.kind = KRC_STORE_KIND_ALERT;
    m.thread_key = "shop/web-2";
    assert_int_equal(krc_store_record(s, &r, &m, NULL, &o4, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, o4, "400.4", NULL), 0);
    /* a webhook delivery has no ts */
    r.restart_count = 2;
    r.finished_at += 60;
    m.thread_key = "shop/web-1";
    assert_int_equal(krc_store_record(s, &r, &m, NULL, &o4, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, o4, NULL, NULL), 0);

    assert_int_equal(krc_store_thread_ts(s, "shop/web-1", &ts, &ch, NULL), 0);
    assert_string_equal(ts, "200.2");
    assert_string_equal(ch, "#gpu");
    krc_free(ts);
    krc_free(ch);
    assert_int_equal(krc_store_thread_ts(s, "shop/web-2", &ts, NULL, NULL), 0);
    assert_string_equal(ts, "400.4");
    krc_free(ts);
    assert_int_equal(krc_store_thread_ts(s, NULL, &ts, NULL, NULL), KRC_EINVAL);
    krc_clock_set_fake_now(NOW);
    krc_store_close(s);
}

/* ---- queries ------------------------------------------------------------------------ */

struct listed {
    int64_t ids[256];
    int64_t detected[256];
    char delivery[256][16];
    int n;
};

static int on_row(const struct krc_store_row *r, void *ud)
{
    struct listed *l = ud;
    assert_true(l->n < 256);
    assert_non_null(r->namespace);
    assert_non_null(r->pod);
    assert_non_null(r->cause);
    l->ids[l->n] = r->id;
    l->detected[l->n] = r->detected_at;
    snprintf(l->delivery[l->n], sizeof(l->delivery[0]), "%s", r->delivery ? r->delivery : "-");
    l->n++;
    return 0;
}

static int list(struct krc_store *s, const char *ns, const char *pod, const char *cause,
                int64_t since, long limit, struct listed *out)
{
    struct krc_store_filter f;
    memset(&f, 0, sizeof(f));
    f.namespace = ns;
    f.pod = pod;
    f.cause = cause;
    f.since = since;
    f.limit = limit;
    memset(out, 0, sizeof(*out));
    assert_int_equal(krc_store_list(s, &f, on_row, out, NULL), 0);
    return out->n;
}

/* Keyset pages, exact pod names and the workload filter (the MCP tools). */
static void test_list_pages_pod_workload(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_filter f;
    struct listed all;
    struct listed page;
    int seen = 0;
    char uid[32];

    (void)state;
    for (int i = 0; i < 12; i++) {
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "uid-%d", i % 3);
        /* pods web-1, web-10, api-2; two restarts share each detected time */
        r = mkrec(uid, "shop", i % 3 == 0 ? "web-1" : (i % 3 == 1 ? "web-10" : "api-2"), i,
                  NOW - 600 + (i / 2) * 60);
        r.workload_name = i % 3 == 2 ? "api" : "web";
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    assert_int_equal(list(s, NULL, NULL, NULL, 0, 0, &all), 12);
    memset(&f, 0, sizeof(f));
    f.limit = 5;
    while (seen < 12) {
        memset(&page, 0, sizeof(page));
        assert_int_equal(krc_store_list(s, &f, on_row, &page, NULL), 0);
        assert_true(page.n > 0);
        for (int i = 0; i < page.n; i++) {
            assert_int_equal(page.ids[i], all.ids[seen + i]); /* no gap, no repeat */
        }
        seen += page.n;
        f.before_at = page.detected[page.n - 1];
        f.before_id = page.ids[page.n - 1];
    }
    memset(&page, 0, sizeof(page));
    assert_int_equal(krc_store_list(s, &f, on_row, &page, NULL), 0);
    assert_int_equal(page.n, 0);

    memset(&f, 0, sizeof(f));
    f.pod = "web-1";
    memset(&page, 0, sizeof(page));
    assert_int_equal(krc_store_list(s, &f, on_row, &page, NULL), 0);
    assert_int_equal(page.n, 8); /* prefix: web-1 and web-10 */
    f.pod_exact = 1;
    memset(&page, 0, sizeof(page));
    assert_int_equal(krc_store_list(s, &f, on_row, &page, NULL), 0);
    assert_int_equal(page.n, 4);
    memset(&f, 0, sizeof(f));
    f.workload = "api";
    memset(&page, 0, sizeof(page));
    assert_int_equal(krc_store_list(s, &f, on_row, &page, NULL), 0);
    assert_int_equal(page.n, 4);
    krc_store_close(s);
}

static void test_summary_counts(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_summary *sum = NULL;
    (void)state;
    /* trainer-0 (4 GPUs): 3 restarts, oom; web-1: 2 app errors + 1 oom; old: before since */
    for (int i = 0; i < 3; i++) {
        struct krc_store_restart r = mkrec("uid-t", "ml", "trainer-0", i, NOW - 100 + i);
        r.workload_kind = "StatefulSet";
        r.workload_name = "trainer";
        r.node = "gpu-1";
        r.gpus = 4;
        r.accel_seconds_lost = 40 * (i + 1); /* GPU time lost: 4 GPUs x 10, 20, 30 s */
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    for (int i = 0; i < 3; i++) {
        struct krc_store_restart r =
            mkrec(i == 2 ? "uid-w2" : "uid-w", "shop", "web-1", i, NOW - 50 + i);
        r.cause = i == 2 ? KRC_CAUSE_OOM_KILLED : KRC_CAUSE_APP_ERROR;
        r.node = i == 2 ? "node-1" : NULL;
        r.intentional = i == 1; /* counted apart, whatever its cause */
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    {
        struct krc_store_restart r = mkrec("uid-old", "ml", "trainer-0", 9, NOW - 5000);
        r.gpus = 8;
        r.intentional = 1;            /* before the window */
        r.accel_seconds_lost = 10000; /* before the window too */
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    /* a bare pod (no workload) with GPUs held on its first restart only:
     * its latest restart holds none, so it is not a GPU pod */
    for (int i = 0; i < 2; i++) {
        struct krc_store_restart r = mkrec("uid-b", "ml", "bare", i, NOW - 10 + i);
        r.workload_kind = NULL;
        r.workload_name = NULL;
        r.cause = i == 0 ? KRC_CAUSE_SEGFAULT : KRC_CAUSE_APP_ERROR;
        r.gpus = i == 0 ? 2 : 0;
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    assert_int_equal(krc_store_summarize(s, NOW - 1000, NULL, 10, &sum, NULL), 0);
    assert_int_equal(sum->restarts, 8);
    assert_int_equal(sum->intentional, 1);
    assert_int_equal(sum->accel_seconds_lost, 240); /* summed, the window's only */
    assert_int_equal(sum->gpus_held, 4);
    assert_int_equal(sum->n_workloads, 3);
    /* equal counts: the latest first */
    assert_string_equal(sum->workloads[0].key[2], "web");
    assert_string_equal(sum->workloads[0].key[1], "Deployment");
    assert_int_equal(sum->workloads[0].restarts, 3);
    assert_int_equal(sum->workloads[0].pods, 2);
    assert_int_equal(sum->workloads[0].last_at, NOW - 48);
    assert_string_equal(sum->workloads[0].top_cause, "app_error");
    assert_string_equal(sum->workloads[1].key[0], "ml");
    assert_string_equal(sum->workloads[1].top_cause, "oom_killed");
    /* no workload: the pod is its own, of kind Pod; a tie of causes goes by name */
    assert_string_equal(sum->workloads[2].key[1], "Pod");
    assert_string_equal(sum->workloads[2].key[2], "bare");
    assert_string_equal(sum->workloads[2].top_cause, "app_error");
    assert_int_equal(sum->n_causes, 3);
    assert_string_equal(sum->causes[0].key[0], "oom_killed");
    assert_int_equal(sum->causes[0].restarts, 4);
    assert_int_equal(sum->causes[0].pods, 2);
    assert_null(sum->causes[0].key[1]);
    assert_int_equal(sum->n_nodes, 3);
    assert_string_equal(sum->nodes[0].key[0], "node-1");
    assert_int_equal(sum->nodes[0].restarts, 3);
    assert_string_equal(sum->nodes[1].key[0], "gpu-1");
    assert_string_equal(sum->nodes[2].key[0], "");
    assert_int_equal(sum->nodes[2].restarts, 2);
    assert_int_equal(sum->n_gpu_pods, 1);
    assert_string_equal(sum->gpu_pods[0].key[0], "ml");
    assert_string_equal(sum->gpu_pods[0].key[1], "trainer-0");
    assert_int_equal(sum->gpu_pods[0].gpus, 4);
    assert_int_equal(sum->gpu_pods[0].restarts, 3);
    krc_store_summary_free(sum);
    /* a limit cuts the lists, not the totals */
    assert_int_equal(krc_store_summarize(s, NOW - 1000, NULL, 1, &sum, NULL), 0);
    assert_int_equal(sum->n_workloads, 1);
    assert_int_equal(sum->n_causes, 1);
    assert_int_equal(sum->n_nodes, 1);
    assert_int_equal(sum->restarts, 8);
    krc_store_summary_free(sum);
    /* everything: the old restart's pod now has 4 restarts, the latest with 4 GPUs */
    assert_int_equal(krc_store_summarize(s, 0, NULL, 0, &sum, NULL), 0);
    assert_int_equal(sum->restarts, 9);
    assert_int_equal(sum->gpus_held, 4);
    krc_store_summary_free(sum);
    /* an empty window */
    assert_int_equal(krc_store_summarize(s, NOW + 1, NULL, 10, &sum, NULL), 0);
    assert_int_equal(sum->restarts, 0);
    assert_int_equal(sum->n_workloads + sum->n_causes + sum->n_nodes + sum->n_gpu_pods, 0);
    krc_store_summary_free(sum);
    krc_store_summary_free(NULL);
    krc_store_close(s);
}

/* The one pass agrees with SQL's GROUP BY on a larger history (the queries
 * restart_summary ran before schema 4), list by list. */
static void test_summary_matches_sql(void **state)
{
    static const enum krc_cause causes[] = {KRC_CAUSE_OOM_KILLED, KRC_CAUSE_APP_ERROR,
                                            KRC_CAUSE_SEGFAULT};
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_summary *sum = NULL;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    unsigned seed = 7;
    size_t i = 0;

    (void)state;
    SQLITE_ONLY("compares with SQL run on the file");
    path_in_tmp(path, sizeof(path), "summary.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    for (int n = 0; n < 3000; n++) {
        char uid[32], pod[32], wl[32], node[32], ns[16];
        struct krc_store_restart r;
        unsigned w;
        seed = seed * 1103515245u + 12345u;
        w = (seed >> 8) % 97;
        snprintf(uid, sizeof(uid), "uid-%u-%u", w, (seed >> 20) % 3);
        snprintf(pod, sizeof(pod), "w%u-%u", w, (seed >> 20) % 3);
        snprintf(wl, sizeof(wl), "w%u", w);
        snprintf(node, sizeof(node), "node-%u", (seed >> 4) % 13);
        snprintf(ns, sizeof(ns), "ns-%u", w % 7);
        r = mkrec(uid, ns, pod, n, NOW - (int64_t)((seed >> 3) % 5000));
        r.workload_name = w % 11 == 0 ? NULL : wl;
        /* a pod now and then under another workload kind, and on many
         * nodes: counted once in each */
        r.workload_kind = (seed >> 24) % 17 == 0 ? "ReplicaSet" : "Deployment";
        r.node = w % 13 == 0 ? NULL : node;
        r.cause = causes[(seed >> 12) % 3];
        r.gpus = w % 5 == 0 ? (long)((seed >> 16) % 3) : 0;
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    assert_int_equal(krc_store_summarize(s, NOW - 2500, NULL, 0, &sum, NULL), 0);
    krc_store_close(s);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    /* workloads: the SQL orders ties by the key as the pass does */
    assert_int_equal(
        sqlite3_prepare_v2(
            db,
            "SELECT namespace, COALESCE(workload_kind, 'Pod'), COALESCE(workload_name, pod),"
            " COUNT(*), COUNT(DISTINCT pod_uid), MAX(detected_at) FROM restarts"
            " WHERE detected_at >= ?1 GROUP BY 1, 2, 3"
            " ORDER BY 4 DESC, 6 DESC, 1, 2, 3",
            -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_int64(st, 1, NOW - 2500);
    for (i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
        assert_true(i < sum->n_workloads);
        assert_int_equal(sum->workloads[i].restarts, sqlite3_column_int64(st, 3));
        assert_int_equal(sum->workloads[i].pods, sqlite3_column_int64(st, 4));
        assert_int_equal(sum->workloads[i].last_at, sqlite3_column_int64(st, 5));
        assert_string_equal(sum->workloads[i].key[2], (const char *)sqlite3_column_text(st, 2));
    }
    assert_int_equal(i, sum->n_workloads);
    sqlite3_finalize(st);
    /* nodes */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT COALESCE(node, ''), COUNT(*), COUNT(DISTINCT "
                                        "pod_uid) FROM restarts WHERE detected_at >= ?1"
                                        " GROUP BY 1 ORDER BY 2 DESC, MAX(detected_at) DESC, 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, NOW - 2500);
    for (i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
        assert_true(i < sum->n_nodes);
        assert_string_equal(sum->nodes[i].key[0], (const char *)sqlite3_column_text(st, 0));
        assert_int_equal(sum->nodes[i].restarts, sqlite3_column_int64(st, 1));
        assert_int_equal(sum->nodes[i].pods, sqlite3_column_int64(st, 2));
    }
    assert_int_equal(i, sum->n_nodes);
    sqlite3_finalize(st);
    /* GPU pods and the GPUs they hold: the latest restart's */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT count(*), coalesce(sum(x.gpus), 0) FROM (SELECT MAX(id) AS"
                           " last FROM restarts WHERE detected_at >= ?1 GROUP BY pod_uid HAVING"
                           " COUNT(*) >= 2) l JOIN restarts x ON x.id = l.last WHERE x.gpus > 0",
                           -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_int64(st, 1, NOW - 2500);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_true(sqlite3_column_int64(st, 0) > 3);
    assert_int_equal(sum->n_gpu_pods, sqlite3_column_int64(st, 0));
    assert_int_equal(sum->gpus_held, sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(sum->n_causes, 3);
    assert_int_equal(sum->causes[0].restarts + sum->causes[1].restarts + sum->causes[2].restarts,
                     sum->restarts);
    krc_store_summary_free(sum);
}

static void test_list_filters_and_order(void **state)
{
    struct krc_store *s = open_mem();
    static const char *const ns[] = {"shop", "batch", "shop"};
    static const char *const pods[] = {"web-1", "job-7", "worker-2"};
    static const enum krc_cause causes[] = {KRC_CAUSE_OOM_KILLED, KRC_CAUSE_APP_ERROR,
                                            KRC_CAUSE_LIVENESS_PROBE_FAILED};
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, NULL);
    struct listed l;
    int64_t oid;
    char uid[32];

    (void)state;
    /* 30 restarts, one every minute, detected out of insertion order */
    for (int i = 0; i < 30; i++) {
        int k = i % 3;
        int64_t when = NOW - 1800 + (int64_t)((i * 7) % 30) * 60;
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "uid-%d", k);
        r = mkrec(uid, ns[k], pods[k], i, when);
        r.cause = causes[k];
        if (k == 1) {
            r.decision = "muted";
            assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
        } else {
            assert_int_equal(krc_store_record(s, &r, &m, NULL, &oid, NULL), 0);
            if (i % 2 == 0) {
                assert_int_equal(krc_store_mark_delivered(s, oid, NULL, NULL), 0);
            }
        }
    }
    assert_int_equal(list(s, NULL, NULL, NULL, 0, 0, &l), 30);
    for (int i = 1; i < l.n; i++) {
        assert_true(l.detected[i - 1] > l.detected[i] ||
                    (l.detected[i - 1] == l.detected[i] && l.ids[i - 1] > l.ids[i]));
    }
    assert_int_equal(list(s, NULL, NULL, NULL, 0, 5, &l), 5);
    assert_int_equal(l.detected[0], NOW - 1800 + 29 * 60);
    assert_int_equal(list(s, "shop", NULL, NULL, 0, 0, &l), 20);
    assert_int_equal(list(s, "batch", NULL, NULL, 0, 0, &l), 10);
    for (int i = 0; i < l.n; i++) {
        assert_string_equal(l.delivery[i], "-");
    }
    assert_int_equal(list(s, NULL, "w", NULL, 0, 0, &l), 20);     /* web-1, worker-2 */
    assert_int_equal(list(s, NULL, "wor", NULL, 0, 0, &l), 10);   /* prefix, not substring */
    assert_int_equal(list(s, NULL, "orker", NULL, 0, 0, &l), 0);  /* no substring matches */
    assert_int_equal(list(s, NULL, "web-1", NULL, 0, 0, &l), 10); /* exact name */
    assert_int_equal(list(s, "shop", "job", NULL, 0, 0, &l), 0);
    assert_int_equal(list(s, NULL, NULL, "app_error", 0, 0, &l), 10);
    assert_int_equal(list(s, "shop", NULL, "oom_killed", 0, 0, &l), 10);
    assert_int_equal(list(s, NULL, NULL, "segfault", 0, 0, &l), 0);
    /* since: the last 10 minutes hold minutes 20..29 */
    assert_int_equal(list(s, NULL, NULL, NULL, NOW - 1800 + 20 * 60, 0, &l), 10);
    assert_int_equal(list(s, "shop", "web", "oom_killed", NOW - 1800 + 20 * 60, 2, &l), 2);
    /* delivery state of the alert rows */
    assert_int_equal(list(s, "shop", NULL, NULL, 0, 0, &l), 20);
    {
        int delivered = 0;
        int pending = 0;
        for (int i = 0; i < l.n; i++) {
            delivered += strcmp(l.delivery[i], "delivered") == 0;
            pending += strcmp(l.delivery[i], "pending") == 0;
        }
        assert_int_equal(delivered + pending, 20);
        assert_int_equal(delivered, 10);
    }
    assert_int_equal(krc_store_list(s, NULL, on_row, &l, NULL), 0);
    krc_store_close(s);
}

static void test_get(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 3, NOW);
    struct krc_store_entry *en = NULL;
    struct krc_error e;
    int64_t rid;

    (void)state;
    r.has_exit_code = 0;
    r.signal = 0;
    r.workload_kind = NULL;
    r.workload_name = NULL;
    assert_int_equal(krc_store_record(s, &r, NULL, &rid, NULL, NULL), 0);
    assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
    assert_int_equal(en->row.id, rid);
    assert_string_equal(en->row.pod_uid, "uid-1");
    assert_string_equal(en->row.namespace, "shop");
    assert_string_equal(en->row.pod, "web-1");
    assert_string_equal(en->row.container, "app");
    assert_int_equal(en->row.restart_count, 3);
    assert_null(en->row.workload_kind);
    assert_string_equal(en->row.node, "node-1");
    assert_string_equal(en->row.cause, "oom_killed");
    assert_int_equal(en->row.has_exit_code, 0);
    assert_string_equal(en->row.reason, "OOMKilled");
    assert_int_equal(en->row.started_at, NOW - 100);
    assert_int_equal(en->row.finished_at, NOW - 2);
    assert_int_equal(en->row.detected_at, NOW);
    assert_string_equal(en->row.decision, "alert");
    assert_string_equal(en->row.summary, "container app was OOM-killed");
    assert_null(en->row.delivery);
    assert_string_equal(en->message, "web-1 OOMKilled &amp; restarted");
    assert_string_equal(en->report_json, "{\"version\":1}");
    assert_int_equal(en->n_messages, 0);
    krc_store_entry_free(en);
    krc_store_entry_free(NULL);
    krc_error_clear(&e);
    assert_int_equal(krc_store_get(s, rid + 1, &en, &e), KRC_ENOTFOUND);
    assert_non_null(strstr(e.msg, test_store_is_pg() ? "no restart" : ":memory:"));
    krc_store_close(s);
}

/* ---- retention ---------------------------------------------------------------------- */

static void test_prune_age_and_count(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, NULL);
    struct listed l;
    int64_t deleted = -1;
    int64_t oid;
    int64_t keep_pending_old = 0;
    char uid[32];
    struct krc_error e;

    (void)state;
    /* 100 restarts, one per hour, the oldest 100 h ago; every 10th has a
     * pending alert, the others a delivered one */
    for (int i = 0; i < 100; i++) {
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "uid-%d", i);
        r = mkrec(uid, "ns", "pod", 1, NOW - (100 - i) * 3600);
        assert_int_equal(krc_store_record(s, &r, &m, NULL, &oid, NULL), 0);
        if (i % 10 != 0) {
            assert_int_equal(krc_store_mark_delivered(s, oid, NULL, NULL), 0);
        } else if (keep_pending_old == 0) {
            keep_pending_old = oid;
        }
    }
    /* delivered summaries, one old and one new, and an old pending one */
    m.kind = KRC_STORE_KIND_SUMMARY;
    m.created_at = NOW - 90 * 3600;
    assert_int_equal(krc_store_add_outbox(s, 0, &m, &oid, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, oid, NULL, NULL), 0);
    assert_int_equal(krc_store_add_outbox(s, 0, &m, &oid, NULL), 0);
    m.created_at = NOW;
    assert_int_equal(krc_store_add_outbox(s, 0, &m, &oid, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, oid, NULL, NULL), 0);
    assert_int_equal(stat_of(s, 2), 90 + 2);

    krc_error_clear(&e);
    assert_int_equal(krc_store_prune(s, 0, 0, 0, NULL, &e), KRC_EINVAL);

    /* older than 50 h (restarts 0..49, 50 h ago is not older): 45 go, the 5
     * with a pending alert stay; batches of 7 */
    assert_int_equal(krc_store_prune(s, 50 * 3600, 0, 7, &deleted, NULL), 0);
    assert_int_equal(deleted, 45);
    assert_int_equal(stat_of(s, 0), 55);
    assert_int_equal(stat_of(s, 1), 10 + 1); /* pending alerts and the pending summary */
    assert_int_equal(stat_of(s, 2), 45 + 1); /* the old delivered summary went */
    {
        struct krc_store_stats st;
        assert_int_equal(krc_store_stats(s, &st, NULL), 0);
        assert_int_equal(st.oldest_detected_at, NOW - 100 * 3600);
        assert_true(st.db_bytes > 0);
    }
    /* idempotent */
    assert_int_equal(krc_store_prune(s, 50 * 3600, 0, 7, &deleted, NULL), 0);
    assert_int_equal(deleted, 0);

    /* at most 20 rows: the oldest prunable go first (batches of 3) */
    assert_int_equal(krc_store_prune(s, 0, 20, 3, &deleted, NULL), 0);
    assert_int_equal(deleted, 35);
    assert_int_equal(stat_of(s, 0), 20);
    assert_int_equal(list(s, NULL, NULL, NULL, 0, 0, &l), 20);
    /* survivors: the 10 with pending alerts and the 10 newest */
    {
        int pending = 0;
        for (int i = 0; i < l.n; i++) {
            pending += strcmp(l.delivery[i], "pending") == 0;
            if (strcmp(l.delivery[i], "pending") != 0) {
                assert_true(l.detected[i] >= NOW - 11 * 3600); /* 90 is pending */
            }
        }
        assert_int_equal(pending, 10);
    }
    /* below the pending ones it cannot go */
    assert_int_equal(krc_store_prune(s, 0, 1, 100, &deleted, NULL), 0);
    assert_int_equal(deleted, 10);
    assert_int_equal(stat_of(s, 0), 10);
    /* once delivered they can */
    assert_int_equal(krc_store_mark_attempt(s, keep_pending_old, "gone", 1, NULL), 0);
    assert_int_equal(krc_store_prune(s, 0, 1, 100, &deleted, NULL), 0);
    assert_int_equal(deleted, 1);
    krc_store_close(s);
}

/* ---- incidents and changes ------------------------------------------------------------ */

struct incidents_seen {
    int64_t ids[64];
    int64_t restarts[64];
    int64_t ended[64];
    char key[64][96];
    int n;
};

static int on_incident(const struct krc_store_incident *i, void *ud)
{
    struct incidents_seen *sn = ud;
    assert_true(sn->n < 64);
    sn->ids[sn->n] = i->id;
    sn->restarts[sn->n] = i->restarts;
    sn->ended[sn->n] = i->ended_at;
    snprintf(sn->key[sn->n], sizeof(sn->key[0]), "%s/%s/%s/%s/%s", i->namespace, i->workload_kind,
             i->workload_name, i->container, i->cause);
    sn->n++;
    return 0;
}

static int incidents(struct krc_store *s, const struct krc_store_incident_filter *f,
                     struct incidents_seen *out)
{
    memset(out, 0, sizeof(*out));
    if (f == NULL) {
        assert_int_equal(krc_store_incidents_open(s, on_incident, out, NULL), 0);
    } else {
        assert_int_equal(krc_store_incidents_list(s, f, on_incident, out, NULL), 0);
    }
    return out->n;
}

/* Record restart r into incident `id` (0: a new one); the incident's id. */
static int64_t record_in(struct krc_store *s, struct krc_store_restart *r, int64_t id,
                         int64_t *ret_restarts, int64_t *ret_restart_id)
{
    struct krc_store_incident_ref inc;
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "ns/web-1");
    struct krc_error e;
    memset(&inc, 0, sizeof(inc));
    inc.id = id;
    inc.thread_key = "ns/web-1";
    r->incident = &inc;
    krc_error_clear(&e);
    if (krc_store_record(s, r, &m, ret_restart_id, NULL, &e) != 0) {
        fail_msg("record: %s", e.msg);
    }
    r->incident = NULL;
    if (ret_restarts != NULL) {
        *ret_restarts = inc.ret_restarts;
    }
    return inc.ret_id;
}

static struct krc_store_incident_detail *incident_of(struct krc_store *s, int64_t id)
{
    struct krc_store_incident_detail *d = NULL;
    struct krc_error e;
    krc_error_clear(&e);
    if (krc_store_incident_get(s, id, &d, &e) != 0) {
        fail_msg("incident %lld: %s", (long long)id, e.msg);
    }
    return d;
}

/* A restart joins or opens its incident in the transaction that records it:
 * one open incident per (workload, container, cause) across pods, a repeat
 * that is already recorded changes nothing, a stale "open a new one" joins
 * the open one, another cause or a bare pod is another incident, the
 * counters of updates and replies, and a joined incident that ended opens a
 * new one. */
static void test_incident_join_and_open(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r1 = mkrec("u1", "ns", "web-1", 1, NOW - 600);
    struct krc_store_restart r2 = mkrec("u2", "ns", "web-2", 1, NOW - 500);
    struct krc_store_restart r;
    struct krc_store_incident_ref inc;
    struct krc_store_incident_detail *d;
    struct krc_store_entry *en = NULL;
    struct incidents_seen seen;
    int64_t x, y, pod_inc, n = 0, rid1 = 0, rid2 = 0, rid = 0;
    int64_t before_outbox;

    (void)state;
    x = record_in(s, &r1, 0, &n, &rid1);
    assert_true(x > 0);
    assert_int_equal(n, 1);
    assert_int_equal(krc_store_get(s, rid1, &en, NULL), 0);
    assert_int_equal(en->row.incident_id, x);
    krc_store_entry_free(en);
    /* another pod of the workload (a replacement) joins it */
    assert_int_equal(record_in(s, &r2, x, &n, &rid2), x);
    assert_int_equal(n, 2);

    /* the same restart again (a relist, another leader): nothing changes,
     * ret_id says which incident holds it */
    before_outbox = stat_of(s, 1);
    memset(&inc, 0, sizeof(inc));
    inc.id = x;
    r2.incident = &inc;
    assert_int_equal(krc_store_record(s, &r2, NULL, &rid, NULL, NULL), KRC_STORE_EXISTS);
    r2.incident = NULL;
    assert_int_equal(rid, rid2);
    assert_int_equal(inc.ret_id, x);
    assert_int_equal(inc.ret_restarts, 2);
    assert_int_equal(stat_of(s, 1), before_outbox);
    d = incident_of(s, x);
    assert_int_equal(d->inc.restarts, 2);
    assert_int_equal(d->inc.latest_restart_id, rid2);
    krc_store_incident_detail_free(d);

    /* a caller that believes none is open (0) joins the open one */
    r = mkrec("u1", "ns", "web-1", 2, NOW - 400);
    assert_int_equal(record_in(s, &r, 0, &n, NULL), x);
    assert_int_equal(n, 3);
    /* another cause, another incident; a bare pod is its own workload */
    r = mkrec("u1", "ns", "web-1", 3, NOW - 390);
    r.cause = KRC_CAUSE_APP_ERROR;
    y = record_in(s, &r, 0, &n, NULL);
    assert_true(y > x);
    assert_int_equal(n, 1);
    r = mkrec("u9", "ns", "solo", 1, NOW - 380);
    r.workload_kind = NULL;
    r.workload_name = NULL;
    pod_inc = record_in(s, &r, 0, &n, NULL);
    assert_true(pod_inc > y);
    assert_int_equal(incidents(s, NULL, &seen), 3);
    assert_int_equal(seen.ids[0], x); /* oldest first */
    assert_string_equal(seen.key[0], "ns/Deployment/web/app/oom_killed");
    assert_string_equal(seen.key[1], "ns/Deployment/web/app/app_error");
    assert_string_equal(seen.key[2], "ns/Pod/solo/app/oom_killed");

    /* the pacing counters: a thread reply, then an update, then both */
    memset(&inc, 0, sizeof(inc));
    inc.id = x;
    inc.update_at = NOW - 300;
    inc.thread_reply = 1;
    r = mkrec("u2", "ns", "web-2", 2, NOW - 300);
    r.incident = &inc;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    d = incident_of(s, x);
    assert_int_equal(d->inc.restarts, 4);
    assert_int_equal(d->inc.told_restarts, 4);
    assert_int_equal(d->inc.last_reply_at, NOW - 300);
    assert_int_equal(d->inc.last_update_at, 0);
    assert_string_equal(d->inc.thread_key, "ns/web-1");
    assert_int_equal(d->inc.first_at, NOW - 600);
    assert_int_equal(d->inc.last_at, NOW - 300);
    krc_store_incident_detail_free(d);
    inc.thread_reply = 0;
    inc.update_at = NOW - 200;
    r = mkrec("u2", "ns", "web-2", 3, NOW - 200);
    r.incident = &inc;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    r = mkrec("u2", "ns", "web-2", 4, NOW - 150); /* no message: counted, not told */
    assert_int_equal(record_in(s, &r, x, &n, NULL), x);
    d = incident_of(s, x);
    assert_int_equal(d->inc.restarts, 6);
    assert_int_equal(d->inc.told_restarts, 5);
    assert_int_equal(d->inc.last_reply_at, NOW - 300);
    assert_int_equal(d->inc.last_update_at, NOW - 200);
    krc_store_incident_detail_free(d);
    inc.update_at = NOW - 100;
    inc.thread_reply = 1;
    inc.and_update = 1;
    r = mkrec("u2", "ns", "web-2", 5, NOW - 100);
    r.incident = &inc;
    assert_int_equal(krc_store_record(s, &r, NULL, &rid, NULL, NULL), 0);
    assert_int_equal(inc.ret_restarts, 7);
    d = incident_of(s, x);
    assert_int_equal(d->inc.told_restarts, 7);
    assert_int_equal(d->inc.last_reply_at, NOW - 100);
    assert_int_equal(d->inc.last_update_at, NOW - 100);
    assert_int_equal(d->inc.first_restart_id, rid1);
    assert_int_equal(d->inc.latest_restart_id, rid);
    krc_store_incident_detail_free(d);

    /* it ends; a restart that still names it opens a new one */
    assert_int_equal(krc_store_incident_end(s, x, NOW - 50, NULL, 0, NULL, NULL), 0);
    r = mkrec("u2", "ns", "web-2", 6, NOW - 10);
    y = record_in(s, &r, x, &n, &rid);
    assert_true(y > pod_inc);
    assert_int_equal(n, 1);
    d = incident_of(s, y);
    assert_int_equal(d->inc.first_restart_id, rid);
    assert_int_equal(d->inc.ended_at, 0);
    krc_store_incident_detail_free(d);
    assert_int_equal(incidents(s, NULL, &seen), 3);
    for (int i = 0; i < seen.n; i++) {
        assert_true(seen.ids[i] != x);
    }
    krc_store_close(s);
}

/* The end: exactly once (a second end, another leader's, writes nothing and
 * says so), with its resolved messages tied to the latest restart; the
 * detail holds the first and latest evidence and the messages. */
static void test_incident_end_and_get(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r1 = mkrec("u1", "ns", "web-1", 1, NOW - 600);
    struct krc_store_restart r2 = mkrec("u2", "ns", "web-2", 1, NOW - 300);
    struct krc_store_outbox res[2] = {mkmsg(KRC_STORE_KIND_RECOVERED, "ns/web-1"),
                                      mkmsg(KRC_STORE_KIND_RECOVERED, NULL)};
    struct krc_store_incident_detail *d;
    struct krc_error e;
    int64_t x, rid1 = 0, rid2 = 0, oids[2] = {0, 0}, pending;

    (void)state;
    r1.report_json = "{\"version\":1,\"log\":{\"tail\":\"first failure\"}}";
    x = record_in(s, &r1, 0, NULL, &rid1);
    assert_int_equal(record_in(s, &r2, x, NULL, &rid2), x);
    res[1].destination = "pagerduty:default";
    pending = stat_of(s, 1);
    assert_int_equal(krc_store_incident_end(s, x, NOW - 60, res, 2, oids, NULL), 0);
    assert_true(oids[0] > 0 && oids[1] > oids[0]);
    assert_int_equal(stat_of(s, 1), pending + 2);

    /* another leader ends it too: nothing written */
    oids[0] = oids[1] = -1;
    krc_error_clear(&e);
    assert_int_equal(krc_store_incident_end(s, x, NOW - 30, res, 2, oids, &e), KRC_STORE_EXISTS);
    assert_int_equal(oids[0], 0);
    assert_int_equal(oids[1], 0);
    assert_int_equal(stat_of(s, 1), pending + 2);
    assert_int_equal(krc_store_incident_end(s, 999999, NOW, NULL, 0, NULL, &e), KRC_ENOTFOUND);
    assert_int_equal(krc_store_incident_end(s, 0, NOW, NULL, 0, NULL, &e), KRC_EINVAL);
    assert_int_equal(krc_store_incident_end(s, x, NOW, NULL, 1, NULL, &e), KRC_EINVAL);

    d = incident_of(s, x);
    assert_int_equal(d->inc.ended_at, NOW - 60);
    assert_int_equal(d->inc.restarts, 2);
    assert_non_null(d->first);
    assert_non_null(d->latest);
    assert_int_equal(d->first->row.id, rid1);
    assert_string_equal(d->first->report_json,
                        "{\"version\":1,\"log\":{\"tail\":\"first failure\"}}");
    assert_int_equal(d->latest->row.id, rid2);
    assert_string_equal(d->latest->row.pod, "web-2");
    /* the two alerts and the two resolved messages, oldest first */
    assert_int_equal(d->n_messages_total, 4);
    assert_int_equal(d->n_messages, 4);
    assert_int_equal(d->messages[0].restart_id, rid1);
    assert_int_equal(d->messages[0].kind, KRC_STORE_KIND_ALERT);
    assert_int_equal(d->messages[2].kind, KRC_STORE_KIND_RECOVERED);
    assert_int_equal(d->messages[2].restart_id, rid2);
    assert_string_equal(d->messages[3].destination, "pagerduty:default");
    krc_store_incident_detail_free(d);
    krc_error_clear(&e);
    assert_int_equal(krc_store_incident_get(s, 999999, &d, &e), KRC_ENOTFOUND);
    assert_non_null(strstr(e.msg, "999999"));
    krc_store_incident_detail_free(NULL);
    krc_store_close(s);
}

struct loader {
    struct krc_store *s;
    int n;
    int64_t first_restart[8];
};

/* A new leader's load: for each open incident, its evidence, and the first
 * one ended on the spot, all on the store being iterated. */
static int load_open(const struct krc_store_incident *i, void *ud)
{
    struct loader *ld = ud;
    struct krc_store_incident_detail *d = NULL;
    struct krc_error e;
    krc_error_clear(&e);
    if (krc_store_incident_get(ld->s, i->id, &d, &e) != 0) {
        fail_msg("incident %lld: %s", (long long)i->id, e.msg);
    }
    assert_non_null(d->first);
    ld->first_restart[ld->n] = d->first->row.id;
    krc_store_incident_detail_free(d);
    if (ld->n == 0 && krc_store_incident_end(ld->s, i->id, NOW - 1, NULL, 0, NULL, &e) != 0) {
        fail_msg("end %lld: %s", (long long)i->id, e.msg);
    }
    ld->n++;
    return 0;
}

/* The open incidents are read before the first callback: the callback may
 * read and end incidents on the same store (the daemon's load at
 * take-over does). */
static void test_incidents_open_callback_uses_store(void **state)
{
    struct krc_store *s = open_mem();
    struct loader ld;
    struct incidents_seen seen;
    int64_t rids[3];

    (void)state;
    for (int i = 0; i < 3; i++) {
        char uid[16], wl[16];
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "u%d", i);
        snprintf(wl, sizeof(wl), "w%d", i);
        r = mkrec(uid, "ns", uid, 1, NOW - 100 + i);
        r.workload_name = wl;
        (void)record_in(s, &r, 0, NULL, &rids[i]);
    }
    memset(&ld, 0, sizeof(ld));
    ld.s = s;
    assert_int_equal(krc_store_incidents_open(s, load_open, &ld, NULL), 0);
    assert_int_equal(ld.n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ld.first_restart[i], rids[i]);
    }
    assert_int_equal(incidents(s, NULL, &seen), 2);
    krc_store_close(s);
}

/* The list: newest first, filters, keyset pages. */
static void test_incident_list(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_incident_filter f;
    struct incidents_seen seen;
    int64_t ids[6];

    (void)state;
    /* 6 incidents of 3 workloads in 2 namespaces, 0..2 ended at NOW - 1000 + i */
    for (int i = 0; i < 6; i++) {
        char uid[16], pod[16];
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "u%d", i);
        snprintf(pod, sizeof(pod), "p%d", i);
        r = mkrec(uid, i % 2 ? "b" : "a", pod, 1, NOW - 2000 + i);
        r.workload_name = i < 2 ? "w0" : i < 4 ? "w1" : "w2";
        r.cause = i % 3 == 0 ? KRC_CAUSE_OOM_KILLED : KRC_CAUSE_APP_ERROR;
        r.restart_count = i;
        ids[i] = record_in(s, &r, 0, NULL, NULL);
        if (i < 3) {
            assert_int_equal(krc_store_incident_end(s, ids[i], NOW - 1000 + i, NULL, 0, NULL, NULL),
                             0);
        }
    }
    memset(&f, 0, sizeof(f));
    assert_int_equal(incidents(s, &f, &seen), 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(seen.ids[i], ids[5 - i]);
    }
    f.open_only = 1;
    assert_int_equal(incidents(s, &f, &seen), 3);
    assert_int_equal(seen.ids[2], ids[3]);
    f.open_only = 0;
    f.since = NOW - 999; /* open, or ended at or after: 1 and 2 */
    assert_int_equal(incidents(s, &f, &seen), 5);
    assert_int_equal(seen.ids[4], ids[1]);
    f.since = 0;
    f.namespace = "b";
    assert_int_equal(incidents(s, &f, &seen), 3);
    f.namespace = NULL;
    f.workload_kind = "Deployment";
    f.workload_name = "w1";
    assert_int_equal(incidents(s, &f, &seen), 2);
    assert_int_equal(seen.ids[0], ids[3]);
    f.workload_kind = "StatefulSet";
    assert_int_equal(incidents(s, &f, &seen), 0);
    /* pages of 4: no repeat, no gap */
    memset(&f, 0, sizeof(f));
    f.limit = 4;
    assert_int_equal(incidents(s, &f, &seen), 4);
    f.before_id = seen.ids[3];
    assert_int_equal(incidents(s, &f, &seen), 2);
    assert_int_equal(seen.ids[0], ids[1]);
    assert_int_equal(seen.ids[1], ids[0]);
    f.before_id = 0;
    f.cluster = "elsewhere";
    assert_int_equal(incidents(s, &f, &seen), 0);
    f.cluster = "";
    assert_int_equal(incidents(s, &f, &seen), 4);
    krc_store_close(s);
}

struct changes_seen {
    int64_t at[32];
    char what[32][128];
    int n;
};

static int on_change(const struct krc_store_change *c, void *ud)
{
    struct changes_seen *sn = ud;
    assert_true(sn->n < 32);
    assert_true(c->id > 0);
    assert_true(c->recorded_at > 0);
    sn->at[sn->n] = c->at;
    snprintf(sn->what[sn->n], sizeof(sn->what[0]), "%s/%s/%s@%s %s", c->namespace, c->kind, c->name,
             c->revision, c->summary != NULL ? c->summary : "-");
    sn->n++;
    return 0;
}

static int changes(struct krc_store *s, const struct krc_store_change_filter *f,
                   struct changes_seen *out)
{
    memset(out, 0, sizeof(*out));
    assert_int_equal(krc_store_changes_list(s, f, on_change, out, NULL), 0);
    return out->n;
}

/* Changes: once per revision, a workload's and its nodes' newest first,
 * bounded by time and count. */
static void test_changes(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_change c;
    struct krc_store_change_filter f;
    struct changes_seen seen;
    const char *nodes[] = {"node-1", "node-2"};
    char rev[8], sum[64];
    struct krc_error e;

    (void)state;
    memset(&c, 0, sizeof(c));
    c.namespace = "shop";
    c.kind = "Deployment";
    c.name = "api";
    c.manager = "kubectl-client-side-apply";
    for (int i = 11; i <= 13; i++) {
        snprintf(rev, sizeof(rev), "%d", i);
        snprintf(sum, sizeof(sum), "image api:1.4.%d", i);
        c.revision = rev;
        c.summary = sum;
        c.detail_json = "{\"kind\":\"Deployment\"}";
        c.at = NOW - 3600 * (14 - i);
        assert_int_equal(krc_store_record_change(s, &c, NULL), 0);
    }
    /* the same revision again (a relist, a restart of krc): nothing */
    c.summary = "again";
    assert_int_equal(krc_store_record_change(s, &c, NULL), KRC_STORE_EXISTS);
    c.name = "web";
    c.revision = "1";
    c.at = NOW - 60;
    assert_int_equal(krc_store_record_change(s, &c, NULL), 0);
    c.namespace = "";
    c.kind = "Node";
    c.name = "node-1";
    c.revision = "98765";
    c.summary = "kubelet v1.33.1 → v1.34.0";
    c.at = NOW - 5400;
    assert_int_equal(krc_store_record_change(s, &c, NULL), 0);
    c.name = "node-3";
    assert_int_equal(krc_store_record_change(s, &c, NULL), 0);
    krc_error_clear(&e);
    c.revision = "";
    assert_int_equal(krc_store_record_change(s, &c, &e), KRC_EINVAL);
    c.namespace = NULL;
    c.revision = "1";
    assert_int_equal(krc_store_record_change(s, &c, &e), KRC_EINVAL);

    memset(&f, 0, sizeof(f));
    f.namespace = "shop";
    f.kind = "Deployment";
    f.name = "api";
    assert_int_equal(changes(s, &f, &seen), 3);
    assert_string_equal(seen.what[0], "shop/Deployment/api@13 image api:1.4.13");
    assert_string_equal(seen.what[2], "shop/Deployment/api@11 image api:1.4.11");
    /* with its nodes: node-1's change between revisions 12 and 13 */
    f.nodes = nodes;
    f.n_nodes = 2;
    assert_int_equal(changes(s, &f, &seen), 4);
    assert_string_equal(seen.what[1], "/Node/node-1@98765 kubelet v1.33.1 → v1.34.0");
    /* before the first crash, within the lookback, the nearest 2 */
    f.until = NOW - 3600 + 1;
    f.since = NOW - 86400;
    f.limit = 2;
    assert_int_equal(changes(s, &f, &seen), 2);
    assert_int_equal(seen.at[0], NOW - 3600);
    assert_int_equal(seen.at[1], NOW - 5400);
    /* nodes alone */
    memset(&f, 0, sizeof(f));
    f.nodes = nodes;
    f.n_nodes = 1;
    assert_int_equal(changes(s, &f, &seen), 1);
    /* everything */
    f.n_nodes = 0;
    assert_int_equal(changes(s, &f, &seen), 6);
    f.cluster = "elsewhere";
    assert_int_equal(changes(s, &f, &seen), 0);
    f.cluster = NULL;
    f.n_nodes = 65;
    krc_error_clear(&e);
    assert_int_equal(krc_store_changes_list(s, &f, on_change, &seen, &e), KRC_EINVAL);
    krc_store_close(s);
}

/* Retention keeps an incident's first and latest restart while the incident
 * is open or ended less than the age limit ago (its first failure's
 * evidence), prunes the restarts between them, and prunes ended incidents
 * and changes past the age limit; without an age limit only open incidents
 * pin, and an ended one goes with its last restart. */
static void test_prune_incidents(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_change c;
    struct krc_store_entry *en = NULL;
    struct krc_store_incident_detail *d;
    struct incidents_seen seen;
    struct changes_seen cs;
    int64_t open_inc, old_inc, recent_inc, first = 0, latest = 0, rid = 0, deleted = 0;

    (void)state;
    /* an open incident of 5 restarts, the first 100 h ago */
    for (int i = 0; i < 5; i++) {
        struct krc_store_restart r = mkrec("u-open", "ns", "web-1", i, NOW - (100 - 20 * i) * 3600);
        open_inc = record_in(s, &r, 0, NULL, &rid);
        first = i == 0 ? rid : first;
        latest = rid;
    }
    /* an incident ended 60 h ago (its restarts older), one ended 1 h ago
     * whose restarts are 70 h old */
    {
        struct krc_store_restart r = mkrec("u-old", "ns", "old-1", 1, NOW - 80 * 3600);
        r.workload_name = "old";
        old_inc = record_in(s, &r, 0, NULL, NULL);
        assert_int_equal(krc_store_incident_end(s, old_inc, NOW - 60 * 3600, NULL, 0, NULL, NULL),
                         0);
        r = mkrec("u-recent", "ns", "recent-1", 1, NOW - 70 * 3600);
        r.workload_name = "recent";
        recent_inc = record_in(s, &r, 0, NULL, NULL);
        r.restart_count = 2;
        r.detected_at = NOW - 69 * 3600;
        assert_int_equal(record_in(s, &r, recent_inc, NULL, NULL), recent_inc);
        assert_int_equal(krc_store_incident_end(s, recent_inc, NOW - 3600, NULL, 0, NULL, NULL), 0);
    }
    /* changes recorded 60 h ago and now */
    memset(&c, 0, sizeof(c));
    c.namespace = "ns";
    c.kind = "Deployment";
    c.name = "web";
    c.revision = "1";
    c.at = NOW - 61 * 3600;
    c.recorded_at = NOW - 60 * 3600;
    assert_int_equal(krc_store_record_change(s, &c, NULL), 0);
    c.revision = "2";
    c.recorded_at = 0; /* now */
    assert_int_equal(krc_store_record_change(s, &c, NULL), 0);
    /* deliver every alert: only the pins hold restarts */
    {
        struct seen sn;
        memset(&sn, 0, sizeof(sn));
        sn.mark = s;
        assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
        assert_int_equal(sn.n, 8);
    }

    /* 48 h: the open incident keeps its first (100 h ago) and the restarts
     * newer than the limit (40 h, 20 h); 80 h and 60 h go. The incident
     * ended 60 h ago goes with its restart; the one ended 1 h ago keeps its
     * first and latest (70 h, 69 h). The change recorded 60 h ago goes. */
    assert_int_equal(krc_store_prune(s, 48 * 3600, 0, 2, &deleted, NULL), 0);
    assert_int_equal(deleted, 3);
    assert_int_equal(stat_of(s, 0), 5);
    assert_int_equal(krc_store_get(s, first, &en, NULL), 0);
    krc_store_entry_free(en);
    d = incident_of(s, open_inc);
    assert_non_null(d->first);
    assert_int_equal(d->first->row.id, first);
    assert_non_null(d->latest);
    assert_int_equal(d->latest->row.id, latest);
    krc_store_incident_detail_free(d);
    memset(&seen, 0, sizeof(seen));
    {
        struct krc_store_incident_filter f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(incidents(s, &f, &seen), 2);
        assert_int_equal(seen.ids[0], recent_inc);
        assert_int_equal(seen.ids[1], open_inc);
    }
    assert_int_equal(changes(s, NULL, &cs), 1);
    assert_string_equal(cs.what[0], "ns/Deployment/web@2 -");

    /* at most 1 row: only the unpinned 40 h restart can go */
    assert_int_equal(krc_store_prune(s, 48 * 3600, 1, 100, &deleted, NULL), 0);
    assert_int_equal(deleted, 1);
    assert_int_equal(stat_of(s, 0), 4);
    /* without an age limit an ended incident pins nothing: its restarts go,
     * and then the incident */
    assert_int_equal(krc_store_prune(s, 0, 1, 100, &deleted, NULL), 0);
    assert_int_equal(deleted, 2);
    assert_int_equal(stat_of(s, 0), 2);
    assert_int_equal(incidents(s, NULL, &seen), 1);
    {
        struct krc_store_incident_filter f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(incidents(s, &f, &seen), 1);
        assert_int_equal(seen.ids[0], open_inc);
    }
    /* once it ended too, its oldest goes; the incident stays while a
     * restart of it is left */
    assert_int_equal(krc_store_incident_end(s, open_inc, NOW, NULL, 0, NULL, NULL), 0);
    assert_int_equal(krc_store_prune(s, 0, 1, 100, &deleted, NULL), 0);
    assert_int_equal(deleted, 1);
    d = incident_of(s, open_inc);
    assert_null(d->first);
    assert_non_null(d->latest);
    krc_store_incident_detail_free(d);
    krc_store_close(s);
}

/* ---- files: schema, corruption, permissions -------------------------------------------- */

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void sql_poke(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The schema of version 1 as krc 1.x created it (migration 0 -> 1, kept here
 * verbatim as a fixture: the test must not follow later edits). */
static const char *const schema_v1 =
    "CREATE TABLE schema_version (version INTEGER NOT NULL);"
    "INSERT INTO schema_version VALUES (1);"
    "CREATE TABLE restarts ("
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
    "  WHERE slack_ts IS NOT NULL;";

static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Scenario 5 of issue 12: the identity is the termination. */
static void test_identity_is_the_termination(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 3, NOW);
    struct krc_restart_ident id;
    int64_t rid = 0;
    int64_t found = 0;

    (void)state;
    (void)krc_restart_ident_set(&id, "uid-1", "app", 3, NOW - 2, NULL);
    assert_int_equal(krc_store_record(s, &r, NULL, &rid, NULL, NULL), 0);
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), 1);
    assert_int_equal(found, rid);
    /* the same termination seen again (relist, replay): recorded already */
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), KRC_STORE_EXISTS);
    /* same count, newer finishedAt: a new crash */
    r.finished_at = NOW + 50;
    id.finished_at = NOW + 50;
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), 1);
    /* the count went down and climbed back to 3: a new crash */
    r.finished_at = NOW + 500;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    /* the same second, another container id: a new crash; then it again */
    r.container_id = "containerd://aaaa";
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), KRC_STORE_EXISTS);
    id.finished_at = NOW + 500;
    snprintf(id.container_id, sizeof(id.container_id), "containerd://aaaa");
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), 1);
    snprintf(id.container_id, sizeof(id.container_id), "containerd://bbbb");
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), 0);
    /* the count is part of it: two restarts that report the same termination
     * (a status that did not catch up) are still two */
    r.restart_count = 4;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    r.restart_count = 3;
    /* no finishedAt: the count is all there is */
    r.finished_at = 0;
    r.container_id = NULL;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), KRC_STORE_EXISTS);
    r.restart_count = 4;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    id.finished_at = 0;
    id.restart_count = 4;
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), 1);
    assert_int_equal(stat_of(s, 0), 7);
    id.uid[0] = '\0';
    assert_int_equal(krc_store_find_restart(s, &id, &found, NULL), KRC_EINVAL);
    krc_store_close(s);
}

/* A stored row gives back the identity it was recorded with (the outbox's
 * resume and the hand-over check read it so): the containerID, '/' in it
 * and all, and the finishedAt, or the count alone without a finishedAt. */
static void test_row_ident_is_the_recorded_identity(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 3, NOW);
    struct krc_store_entry *ent = NULL;
    struct krc_store_row empty;
    struct krc_restart_ident id;
    int64_t rid = 0;

    (void)state;
    r.container_id = "containerd://aaaa/b";
    assert_int_equal(krc_store_record(s, &r, NULL, &rid, NULL, NULL), 0);
    assert_int_equal(krc_store_get(s, rid, &ent, NULL), 0);
    assert_int_equal(krc_store_row_ident(&ent->row, &id), 1);
    assert_string_equal(id.uid, "uid-1");
    assert_string_equal(id.container, "app");
    assert_int_equal(id.restart_count, 3);
    assert_int_equal(id.finished_at, NOW - 2);
    assert_string_equal(id.container_id, "containerd://aaaa/b");
    krc_store_entry_free(ent);
    /* no finishedAt: the count alone, no containerID */
    r.restart_count = 4;
    r.finished_at = 0;
    assert_int_equal(krc_store_record(s, &r, NULL, &rid, NULL, NULL), 0);
    assert_int_equal(krc_store_get(s, rid, &ent, NULL), 0);
    assert_int_equal(krc_store_row_ident(&ent->row, &id), 1);
    assert_int_equal(id.restart_count, 4);
    assert_int_equal(id.finished_at, 0);
    assert_string_equal(id.container_id, "");
    /* and it finds the row it came from */
    assert_int_equal(krc_store_find_restart(s, &id, &rid, NULL), 1);
    assert_int_equal(rid, ent->row.id);
    krc_store_entry_free(ent);
    /* a row without its pod: no identity */
    memset(&empty, 0, sizeof(empty));
    assert_int_equal(krc_store_row_ident(&empty, &id), 0);
    assert_string_equal(id.uid, "");
    krc_store_close(s);
}

/* A database written by krc with schema 1 is migrated: rows, reports and
 * outbox rows stay (foreign keys must not cascade), every row gets the
 * identity of its termination, and a later termination at a count already
 * stored is a new restart. */
static void test_migrate_v1_database(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 2, NOW);
    struct krc_store_entry *en = NULL;
    struct krc_error e;
    struct seen sn;

    (void)state;
    SQLITE_ONLY("migrates old SQLite files");
    path_in_tmp(path, sizeof(path), "v1-identity.db");
    sql_poke(path, schema_v1);
    sql_poke(path,
             "PRAGMA journal_mode = WAL;"
             "INSERT INTO restarts (id, pod_uid, container, restart_count, namespace, pod, cause, "
             "finished_at, detected_at, decision) VALUES "
             "(1, 'uid-1', 'app', 1, 'shop', 'web-1', 'oom_killed', 1799999000, 1799999001, "
             "'alert'), "
             "(2, 'uid-1', 'app', 2, 'shop', 'web-1', 'oom_killed', 1799999998, 1800000000, "
             "'alert'), "
             /* the same termination recorded twice under the old key (count rewritten) */
             "(3, 'uid-1', 'app', 7, 'shop', 'web-1', 'oom_killed', 1799999998, 1800000001, "
             "'alert'), "
             "(4, 'uid-2', 'app', 1, 'shop', 'web-2', 'unknown', 0, 1800000002, 'alert');"
             "INSERT INTO reports VALUES (1, 'msg 1', '{}'), (2, 'msg 2', '{}');"
             "INSERT INTO outbox (id, restart_id, kind, destination, body, created_at, "
             "updated_at) VALUES (10, 2, 'alert', 'webhook:default', '{}', 1, 1);"
             "INSERT INTO outbox (id, restart_id, kind, destination, body, state, created_at, "
             "updated_at, delivered_at) VALUES (11, 1, 'alert', 'webhook:default', '{}', "
             "'delivered', 1, 1, 1);");
    krc_error_clear(&e);
    /* a reader cannot migrate */
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_EUNSUPPORTED);
    assert_int_equal(krc_store_open(path, KRC_STORE_QUICK_CHECK, &s, &e), 0);
    assert_int_equal(stat_of(s, 0), 4);
    assert_int_equal(stat_of(s, 1), 1);
    assert_int_equal(stat_of(s, 2), 1);
    assert_int_equal(krc_store_get(s, 1, &en, NULL), 0);
    assert_string_equal(en->message, "msg 1");
    assert_int_equal(en->n_messages, 1);
    krc_store_entry_free(en);
    memset(&sn, 0, sizeof(sn));
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
    assert_int_equal(sn.n, 1);
    assert_int_equal(sn.ids[0], 10);
    /* restart 2 (finishedAt NOW - 2, count 2) is recognised by its termination */
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), KRC_STORE_EXISTS);
    /* count 1 again, with a newer termination: new (the old key said "exists") */
    r.restart_count = 1;
    r.finished_at = NOW + 10;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    /* restart 4 had no finishedAt: its count is its identity */
    r = mkrec("uid-2", "shop", "web-2", 1, NOW);
    r.finished_at = 0;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), KRC_STORE_EXISTS);
    krc_store_close(s);
    assert_int_equal(sql_int(path, "SELECT max(version) FROM schema_version"),
                     KRC_STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                                   "name IN ('restarts_detected', 'restarts_namespace', "
                                   "'restarts_cause', 'restarts_pod')"),
                     4);
    assert_int_equal(
        sql_int(path, "SELECT count(*) FROM restarts WHERE identity = 't1799999998//2'"), 1);
    assert_int_equal(
        sql_int(path, "SELECT count(*) FROM restarts WHERE identity = 't1799999998//7'"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM restarts WHERE identity = 'c1'"), 1);
    /* foreign keys still hold: deleting a restart takes its outbox rows */
    sql_poke(path, "PRAGMA foreign_keys = ON; DELETE FROM restarts WHERE id = 1;");
    assert_int_equal(sql_int(path, "SELECT count(*) FROM outbox WHERE id = 11"), 0);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), 0);
    krc_store_close(s);

    /* columns an earlier migration added (schema 2: issue 11's confidence,
     * by ALTER TABLE) are kept with their values */
    path_in_tmp(path, sizeof(path), "v2-extra.db");
    sql_poke(path, schema_v1);
    sql_poke(path, "ALTER TABLE restarts ADD COLUMN confidence TEXT;"
                   "UPDATE schema_version SET version = 2;"
                   "INSERT INTO restarts (id, pod_uid, container, restart_count, namespace, pod, "
                   "cause, finished_at, detected_at, decision, confidence) VALUES (1, 'u', 'app', "
                   "1, 'shop', 'web-1', 'oom_killed', 1799999000, 1799999001, 'alert', 'high');");
    assert_int_equal(krc_store_open(path, 0, &s, &e), 0);
    krc_store_close(s);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM restarts WHERE confidence = 'high' AND "
                                   "identity = 't1799999000//1'"),
                     1);

    /* a restarts table krc did not make is refused with the file named */
    path_in_tmp(path, sizeof(path), "v1-odd.db");
    sql_poke(path, "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                   "INSERT INTO schema_version VALUES (1);"
                   "CREATE TABLE restarts (id INTEGER PRIMARY KEY, pod_uid TEXT);");
    assert_int_equal(krc_store_open(path, 0, &s, &e), KRC_EPARSE);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "restarts"));
    assert_int_equal(sql_int(path, "SELECT max(version) FROM schema_version"), 1);
}

static int count_in_other_process(const char *path)
{
    char cmd[1024];
    char out[32] = "";
    FILE *p;

    snprintf(cmd, sizeof(cmd), "/proc/%d/exe --count-restarts '%s'", (int)getpid(), path);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(out, sizeof(out), p));
    assert_int_equal(pclose(p), 0);
    return (int)strtol(out, NULL, 10);
}

/* Opening a second connection in the same process must not drop the first
 * one's POSIX locks (a close() of any descriptor of the file does): SQLite
 * would then delete the -wal file under the first connection when the
 * second closes, and other processes would no longer see its writes. */
static void test_second_connection_keeps_the_wal(void **state)
{
    char path[512];
    char wal[600];
    struct krc_store *a = NULL;
    struct krc_store *b = NULL;
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct stat sb;

    (void)state;
    SQLITE_ONLY("SQLite WAL files");
    path_in_tmp(path, sizeof(path), "two/krc.db");
    snprintf(wal, sizeof(wal), "%s-wal", path);
    assert_int_equal(krc_store_open(path, 0, &a, NULL), 0);
    assert_int_equal(krc_store_open(path, 0, &b, NULL), 0);
    krc_store_close(b);
    /* another process opens and closes the file: it is not the last one */
    assert_int_equal(count_in_other_process(path), 0);
    assert_int_equal(stat(wal, &sb), 0);
    assert_int_equal(krc_store_record(a, &r, NULL, NULL, NULL, NULL), 0);
    /* and another one sees the row while `a` is open */
    assert_int_equal(count_in_other_process(path), 1);
    krc_store_close(a);
}

/* Scenario 4 of issue 12: Slack accepted, the delivered mark failed. */
static void test_delivery_journal(void **state)
{
    char path[512];
    char jpath[600];
    struct krc_store *s = NULL;
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    struct krc_store_entry *en = NULL;
    struct krc_error e;
    struct seen sn;
    struct stat sb;
    int64_t o1;
    int64_t o2;
    int64_t rid;

    (void)state;
    SQLITE_ONLY("the delivery journal is a file next to a SQLite database");
    path_in_tmp(path, sizeof(path), "journal/krc.db");
    snprintf(jpath, sizeof(jpath), "%s-delivered", path);
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, &m, &rid, &o1, NULL), 0);
    r.restart_count = 2;
    r.finished_at += 30;
    assert_int_equal(krc_store_record(s, &r, &m, NULL, &o2, NULL), 0);
    /* o1 was accepted with a ts; the journal has it (and a torn line) */
    assert_int_equal(krc_store_journal_delivered(s, o1, "123.456", NULL), 0);
    assert_int_equal(stat(jpath, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    {
        int fd = open(jpath, O_WRONLY | O_APPEND);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "99", 2), 2);
        close(fd);
    }
    krc_error_clear(&e);
    assert_int_equal(krc_store_journal_delivered(s, 0, NULL, &e), KRC_EINVAL);
    assert_int_equal(krc_store_journal_delivered(s, o1, "bad ts", &e), KRC_EINVAL);
    krc_store_close(s);

    /* the next start resumes only o2, and o1 is delivered with its ts */
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    memset(&sn, 0, sizeof(sn));
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
    assert_int_equal(sn.n, 1);
    assert_int_equal(sn.ids[0], o2);
    assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
    assert_string_equal(en->row.delivery, "delivered");
    assert_string_equal(en->messages[0].message_ref, "123.456");
    krc_store_entry_free(en);
    assert_int_equal(stat(jpath, &sb), -1); /* applied and removed */

    /* a journal entry for a row marked since changes nothing */
    assert_int_equal(krc_store_journal_delivered(s, o2, NULL, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, o2, "7.7", NULL), 0);
    memset(&sn, 0, sizeof(sn));
    assert_int_equal(krc_store_pending(s, on_pending, &sn, NULL), 0);
    assert_int_equal(sn.n, 0);
    assert_int_equal(stat_of(s, 2), 2);
    /* clear removes it; clearing twice is fine */
    assert_int_equal(krc_store_journal_delivered(s, o2, NULL, NULL), 0);
    assert_int_equal(krc_store_journal_clear(s, NULL), 0);
    assert_int_equal(stat(jpath, &sb), -1);
    assert_int_equal(krc_store_journal_clear(s, NULL), 0);

    /* a journal that cannot be applied stops the resume (posting again
     * could repeat what Slack accepted) */
    assert_int_equal(krc_store_journal_delivered(s, o2, NULL, NULL), 0);
    assert_int_equal(chmod(jpath, 0), 0);
    if (geteuid() != 0) {
        memset(&sn, 0, sizeof(sn));
        krc_error_clear(&e);
        assert_int_equal(krc_store_pending(s, on_pending, &sn, &e), KRC_EIO);
        assert_non_null(strstr(e.msg, "-delivered"));
        assert_int_equal(sn.n, 0);
    }
    krc_store_close(s);

    /* in memory there is no journal */
    s = open_mem();
    assert_int_equal(krc_store_journal_delivered(s, 1, NULL, &e), KRC_EINVAL);
    assert_int_equal(krc_store_journal_clear(s, NULL), 0);
    krc_store_close(s);
}

static void test_migrations_and_versions(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_error e;

    (void)state;
    SQLITE_ONLY("schema versions of SQLite files");
    /* an empty (0-byte) file becomes a current database */
    path_in_tmp(path, sizeof(path), "empty.db");
    write_file(path, "", 0);
    krc_error_clear(&e);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_ENOTFOUND);
    assert_int_equal(krc_store_open(path, KRC_STORE_QUICK_CHECK, &s, &e), 0);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    krc_store_close(s);
    /* reopening does not migrate again; read-only works and cannot write */
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), KRC_STORE_EXISTS);
    krc_store_close(s);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), 0);
    assert_int_equal(stat_of(s, 0), 1);
    r.restart_count = 2;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, &e), KRC_EIO);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "read-only"));
    krc_store_close(s);

    /* a newer schema is refused, read-only or not, and left untouched */
    sql_poke(path, "UPDATE schema_version SET version = 99");
    assert_int_equal(krc_store_open(path, 0, &s, &e), KRC_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "99"));
    assert_non_null(strstr(e.msg, "newer"));
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_EUNSUPPORTED);

    /* version 0 (a schema_version table and nothing else) is empty for a
     * reader and migrated by a writer */
    path_in_tmp(path, sizeof(path), "v0.db");
    sql_poke(path, "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                   "INSERT INTO schema_version VALUES (0);");
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_ENOTFOUND);
    assert_non_null(strstr(e.msg, "empty"));
    assert_int_equal(krc_store_open(path, 0, &s, &e), 0);
    r.restart_count = 1;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    krc_store_close(s);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), 0);
    assert_int_equal(stat_of(s, 0), 1);
    krc_store_close(s);

    /* somebody else's SQLite database */
    path_in_tmp(path, sizeof(path), "other.db");
    sql_poke(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    assert_int_equal(krc_store_open(path, 0, &s, &e), KRC_EPARSE);
    assert_non_null(strstr(e.msg, "not krc's"));
    assert_non_null(strstr(e.msg, path));

    /* read-only open of a missing file */
    path_in_tmp(path, sizeof(path), "missing.db");
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_ENOTFOUND);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(krc_store_open("", 0, &s, &e), KRC_EINVAL);
    path_in_tmp(path, sizeof(path), "");
    assert_int_equal(krc_store_open(path, 0, &s, &e), KRC_EIO); /* a directory */
    assert_non_null(strstr(e.msg, "directory"));
}

static int64_t schema_version_of(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT max(version) FROM schema_version", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static int on_confidence(const struct krc_store_row *r, void *ud)
{
    char(*out)[16] = ud;
    snprintf(out[r->id - 1], sizeof(out[0]), "%s", r->confidence ? r->confidence : "(null)");
    return 0;
}

/* The details of EXPLAIN QUERY PLAN for sql on the file, one line each. */
static void plan_of(const char *path, const char *sql, char *out, size_t outsz)
{
    char q[2048];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    size_t n = 0;

    snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
    out[0] = '\0';
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW && n < outsz) {
        n += (size_t)snprintf(out + n, outsz - n, "%s\n", (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A version-3 database (what krc before issue 14's schema 4 left behind:
 * made here by taking schema 4's additions off a new file, as migrations
 * 0..3 never change) upgrades in place: every row gets the GPUs of its
 * report, the covering indexes exist, and the summary and the workload
 * filter read through them. */
static void test_migration_v3_to_v4(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_summary *sum = NULL;
    struct krc_store_filter f;
    struct krc_error e;
    struct listed l;
    char plan[1024];

    (void)state;
    SQLITE_ONLY("migrates an old SQLite file and reads its query plans");
    path_in_tmp(path, sizeof(path), "v3.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    krc_store_close(s);
    sql_poke(path, "DROP INDEX restarts_window; DROP INDEX restarts_workload;"
                   "DROP TABLE incidents; DROP TABLE changes; DROP INDEX restarts_incident;"
                   "ALTER TABLE restarts DROP COLUMN incident_id;"
                   "ALTER TABLE restarts DROP COLUMN intentional;"
                   "ALTER TABLE restarts DROP COLUMN accel_seconds_lost;"
                   "ALTER TABLE restarts DROP COLUMN cluster;"
                   "ALTER TABLE restarts DROP COLUMN gpus;"
                   "ALTER TABLE outbox RENAME COLUMN message_ref TO slack_ts;"
                   "UPDATE schema_version SET version = 3;");
    assert_int_equal(schema_version_of(path), 3);
    sql_poke(path,
             "INSERT INTO restarts (id, pod_uid, container, restart_count, namespace, pod, "
             "workload_kind, workload_name, cause, finished_at, detected_at, decision, identity) "
             "VALUES (1, 'u-t', 'app', 1, 'ml', 'trainer-0', 'StatefulSet', 'trainer', "
             "'oom_killed', 1799999000, 1799999001, 'alert', 't1799999000//1'), "
             "(2, 'u-t', 'app', 2, 'ml', 'trainer-0', 'StatefulSet', 'trainer', 'oom_killed', "
             "1799999100, 1799999101, 'alert', 't1799999100//2'), "
             "(3, 'u-w', 'app', 1, 'shop', 'web-1', 'Deployment', 'web', 'app_error', "
             "1799999200, 1799999201, 'alert', 't1799999200//1'), "
             "(4, 'u-w', 'app', 2, 'shop', 'web-1', 'Deployment', 'web', 'app_error', "
             "1799999300, 1799999301, 'alert', 't1799999300//2'), "
             "(5, 'u-x', 'app', 1, 'shop', 'x', NULL, NULL, 'unknown', 0, 1799999400, 'alert', "
             "'c1');"
             "INSERT INTO reports VALUES "
             "(1, 'm', '{\"version\":1,\"diagnosis\":{\"gpus\":4}}'),"
             "(2, 'm', '{\"version\":1,\"diagnosis\":{\"gpus\":4}}'),"
             "(3, 'm', 'not json'), (4, 'm', '{\"version\":1}'), (5, 'm', NULL);");
    /* a reader cannot migrate */
    krc_error_clear(&e);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_EUNSUPPORTED);
    assert_int_equal(schema_version_of(path), 3);
    assert_int_equal(krc_store_open(path, KRC_STORE_QUICK_CHECK, &s, &e), 0);
    krc_store_close(s);
    assert_int_equal(schema_version_of(path), KRC_STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(path, "SELECT sum(gpus) FROM restarts WHERE id IN (1, 2)"), 8);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM restarts WHERE id > 2 AND gpus = 0"), 3);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                                   "name IN ('restarts_window', 'restarts_workload')"),
                     2);
    /* the plans: the summary never reads the table, the workload filter
     * without a namespace has its index */
    plan_of(path,
            "SELECT r.id, r.detected_at, r.namespace, r.workload_kind, r.workload_name, r.pod,"
            " r.pod_uid, r.cause, r.node, r.gpus FROM restarts r WHERE r.detected_at >= 1",
            plan, sizeof(plan));
    assert_non_null(strstr(plan, "COVERING INDEX restarts_window"));
    plan_of(path,
            "SELECT r.id, r.detected_at, r.namespace, r.workload_kind, r.workload_name, r.pod,"
            " r.pod_uid, r.cause, r.node, r.gpus, r.cluster, r.intentional,"
            " r.accel_seconds_lost FROM restarts r WHERE r.detected_at >= 1",
            plan, sizeof(plan));
    assert_non_null(strstr(plan, "COVERING INDEX restarts_window"));
    /* history.c's list query with only the workload filter */
    plan_of(path,
            "SELECT * FROM restarts r WHERE 1 = 1 AND r.workload_name = 'web'"
            " ORDER BY r.detected_at DESC, r.id DESC LIMIT 50",
            plan, sizeof(plan));
    assert_non_null(strstr(plan, "USING INDEX restarts_workload"));
    assert_null(strstr(plan, "TEMP B-TREE"));
    /* the migrated rows read as before, through the new indexes */
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), 0);
    assert_int_equal(krc_store_summarize(s, 0, NULL, 10, &sum, &e), 0);
    assert_int_equal(sum->restarts, 5);
    assert_int_equal(sum->intentional, 0);        /* recorded before schema 8 */
    assert_int_equal(sum->accel_seconds_lost, 0); /* as well */
    assert_int_equal(sum->n_gpu_pods, 1);
    assert_string_equal(sum->gpu_pods[0].key[1], "trainer-0");
    assert_int_equal(sum->gpus_held, 4);
    assert_int_equal(sum->n_workloads, 3);
    krc_store_summary_free(sum);
    memset(&f, 0, sizeof(f));
    f.workload = "web";
    memset(&l, 0, sizeof(l));
    assert_int_equal(krc_store_list(s, &f, on_row, &l, NULL), 0);
    assert_int_equal(l.n, 2);
    krc_store_close(s);
}

typedef int (*mark_fn)(struct krc_store *s, int64_t id, struct krc_error *err);

/* A pending row settled without an attempt by `mark` (state `st`, counted
 * in stat_of(which)): neither pending nor failed, no attempt, no error;
 * only a pending row can be settled so, by either mark, and a delivered
 * row cannot. */
static void check_settled(mark_fn mark, enum krc_store_state st, int which)
{
    static const mark_fn marks[] = {krc_store_mark_withdrawn, krc_store_mark_superseded};
    struct krc_store *s = open_mem();
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_store_restart r2 = mkrec("uid-2", "shop", "web-2", 1, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    struct krc_store_entry *en = NULL;
    struct krc_error e;
    int64_t rid;
    int64_t o1;
    int64_t o2;

    assert_int_equal(krc_store_record(s, &r, &m, &rid, &o1, NULL), 0);
    assert_int_equal(mark(s, o1, NULL), 0);
    assert_int_equal(stat_of(s, 1), 0);
    assert_int_equal(stat_of(s, 3), 0);
    assert_int_equal(stat_of(s, 4), which == 4);
    assert_int_equal(stat_of(s, 5), which == 5);
    /* settled: it cannot be settled again, by either mark */
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        krc_error_clear(&e);
        assert_int_equal(marks[i](s, o1, &e), KRC_ENOTFOUND);
        assert_non_null(strstr(e.msg, "no pending notification"));
    }
    assert_int_equal(krc_store_get(s, rid, &en, NULL), 0);
    assert_int_equal(en->n_messages, 1);
    assert_int_equal(en->messages[0].state, st);
    assert_int_equal(en->messages[0].attempts, 0);
    assert_null(en->messages[0].last_error);
    assert_string_equal(en->row.delivery, krc_store_state_name(st));
    krc_store_entry_free(en);
    /* nor can a delivered row: it stays delivered */
    assert_int_equal(krc_store_record(s, &r2, &m, NULL, &o2, NULL), 0);
    assert_int_equal(krc_store_mark_delivered(s, o2, "1.2", NULL), 0);
    assert_int_equal(mark(s, o2, NULL), KRC_ENOTFOUND);
    assert_int_equal(stat_of(s, 2), 1);
    assert_int_equal(stat_of(s, which), 1);
    /* nothing pending is left to resume */
    assert_int_equal(stat_of(s, 1), 0);
    krc_store_close(s);
}

/* An alert withdrawn into a storm summary. */
static void test_withdrawn(void **state)
{
    (void)state;
    check_settled(krc_store_mark_withdrawn, KRC_STORE_WITHDRAWN, 4);
    assert_string_equal(krc_store_state_name(KRC_STORE_WITHDRAWN), "withdrawn");
}

/* A row a new leader found already posted by the previous leader. */
static void test_superseded(void **state)
{
    (void)state;
    check_settled(krc_store_mark_superseded, KRC_STORE_SUPERSEDED, 5);
    assert_string_equal(krc_store_state_name(KRC_STORE_SUPERSEDED), "superseded");
}

/* Schema 4 stored a withdrawn alert, and a row the previous leader had
 * posted, as failed with a fixed last_error: migration 4 -> 5 turns exactly
 * those rows into withdrawn and superseded, leaves real
 * failures alone, and the new CHECK takes the new state. */
static void test_migration_v4_to_v5(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_entry *en = NULL;
    struct krc_error e;

    (void)state;
    SQLITE_ONLY("migrates an old SQLite file");
    path_in_tmp(path, sizeof(path), "v4.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    krc_store_close(s);
    sql_poke(path,
             "DROP TABLE outbox;"
             "CREATE TABLE outbox (id INTEGER PRIMARY KEY, restart_id INTEGER REFERENCES "
             "restarts (id) ON DELETE CASCADE, kind TEXT NOT NULL CHECK (kind IN ('alert', "
             "'reply', 'summary', 'recovered')), destination TEXT NOT NULL, channel TEXT, "
             "thread_key TEXT, body TEXT NOT NULL, fallback TEXT, state TEXT NOT NULL DEFAULT "
             "'pending' CHECK (state IN ('pending', 'delivered', 'failed')), attempts INTEGER "
             "NOT NULL DEFAULT 0, last_error TEXT, created_at INTEGER NOT NULL, updated_at "
             "INTEGER NOT NULL, delivered_at INTEGER, slack_ts TEXT);"
             "CREATE INDEX outbox_restart ON outbox (restart_id);"
             "CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending';"
             "CREATE INDEX outbox_thread ON outbox (thread_key, delivered_at) WHERE slack_ts IS "
             "NOT NULL;"
             "DROP INDEX restarts_window; ALTER TABLE restarts DROP COLUMN intentional;"
             "DROP TABLE incidents; DROP TABLE changes; DROP INDEX restarts_incident;"
             "ALTER TABLE restarts DROP COLUMN incident_id;"
             "ALTER TABLE restarts DROP COLUMN accel_seconds_lost;"
             "ALTER TABLE restarts DROP COLUMN cluster;"
             "CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,"
             " workload_name, pod, pod_uid, cause, node, gpus);"
             "UPDATE schema_version SET version = 4;"
             "INSERT INTO restarts (id, pod_uid, container, restart_count, namespace, pod, cause, "
             "detected_at, decision, identity) VALUES "
             "(1, 'u1', 'app', 1, 'batch', 'job-1', 'killed', 1799999001, 'grouped', 'c1'),"
             "(2, 'u2', 'app', 1, 'batch', 'job-2', 'killed', 1799999002, 'alert', 'c1'),"
             "(3, 'u3', 'app', 1, 'batch', 'job-3', 'killed', 1799999004, 'alert', 'c1');"
             "INSERT INTO outbox (id, restart_id, kind, destination, body, state, attempts, "
             "last_error, created_at, updated_at) VALUES "
             "(1, 1, 'alert', 'webhook:default', '{}', 'failed', 1, "
             "'withdrawn: grouped into an alert-storm summary', 1799999001, 1799999003),"
             "(2, 2, 'alert', 'webhook:default', '{}', 'failed', 8, 'HTTP 404 no_service', "
             "1799999002, 1799999009),"
             "(3, 3, 'alert', 'webhook:default', '{}', 'failed', 1, "
             "'superseded: the previous leader posted this restart', 1799999004, 1799999005);");
    assert_int_equal(schema_version_of(path), 4);
    krc_error_clear(&e);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_EUNSUPPORTED);
    assert_int_equal(krc_store_open(path, 0, &s, &e), 0);
    assert_int_equal(schema_version_of(path), KRC_STORE_SCHEMA_VERSION);
    assert_int_equal(krc_store_get(s, 1, &en, NULL), 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_WITHDRAWN);
    assert_int_equal(en->messages[0].attempts, 0);
    assert_null(en->messages[0].last_error);
    assert_int_equal(en->messages[0].updated_at, 1799999003);
    assert_string_equal(en->row.delivery, "withdrawn");
    krc_store_entry_free(en);
    assert_int_equal(krc_store_get(s, 2, &en, NULL), 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_FAILED);
    assert_int_equal(en->messages[0].attempts, 8);
    assert_string_equal(en->messages[0].last_error, "HTTP 404 no_service");
    krc_store_entry_free(en);
    assert_int_equal(krc_store_get(s, 3, &en, NULL), 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_SUPERSEDED);
    assert_int_equal(en->messages[0].attempts, 0);
    assert_null(en->messages[0].last_error);
    assert_string_equal(en->row.delivery, "superseded");
    krc_store_entry_free(en);
    assert_int_equal(stat_of(s, 3), 1);
    assert_int_equal(stat_of(s, 4), 1);
    assert_int_equal(stat_of(s, 5), 1);
    krc_store_close(s);
    /* the indexes are back */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                                   "tbl_name = 'outbox'"),
                     3);
}

/* A version-5 database (before issue 17: no cluster; made by taking schema
 * 6's addition off a new file) upgrades in place: old rows belong to the
 * unnamed cluster "", new ones to the store's, and a window of one cluster
 * is still read from the covering index alone. */
static void test_migration_v5_to_v6(void **state)
{
    char path[512];
    char plan[1024];
    struct krc_store *s = NULL;
    struct krc_store_options o = {.cluster = "east"};
    struct krc_store_restart r = mkrec("uid-new", "shop", "web-9", 1, NOW);
    struct krc_store_filter f;
    struct krc_store_entry *en = NULL;
    struct krc_error e;
    struct listed l;

    (void)state;
    SQLITE_ONLY("migrates an old SQLite file and reads its query plan");
    path_in_tmp(path, sizeof(path), "v5.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    krc_store_close(s);
    sql_poke(path, "DROP INDEX restarts_window; ALTER TABLE restarts DROP COLUMN intentional;"
                   "DROP TABLE incidents; DROP TABLE changes; DROP INDEX restarts_incident;"
                   "ALTER TABLE restarts DROP COLUMN incident_id;"
                   "ALTER TABLE restarts DROP COLUMN accel_seconds_lost;"
                   "ALTER TABLE restarts DROP COLUMN cluster;"
                   "CREATE INDEX restarts_window ON restarts (detected_at, namespace, "
                   "workload_kind, workload_name, pod, pod_uid, cause, node, gpus);"
                   "ALTER TABLE outbox RENAME COLUMN message_ref TO slack_ts;"
                   "UPDATE schema_version SET version = 5;"
                   "INSERT INTO restarts (id, pod_uid, container, restart_count, namespace, pod, "
                   "cause, detected_at, decision, identity) VALUES "
                   "(1, 'u1', 'app', 1, 'batch', 'job-1', 'killed', 1799999001, 'alert', 'c1');"
                   "INSERT INTO outbox (id, restart_id, kind, destination, body, created_at, "
                   "updated_at) VALUES (1, 1, 'alert', 'webhook:default', '{}', 1799999001, "
                   "1799999001);");
    assert_int_equal(schema_version_of(path), 5);
    krc_error_clear(&e);
    assert_int_equal(krc_store_open_with(path, KRC_STORE_READONLY, &o, &s, &e), KRC_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, path));
    assert_int_equal(schema_version_of(path), 5);
    assert_int_equal(krc_store_open_with(path, 0, &o, &s, &e), 0);
    assert_int_equal(schema_version_of(path), KRC_STORE_SCHEMA_VERSION);
    assert_int_equal(krc_store_get(s, 1, &en, NULL), 0);
    assert_string_equal(en->row.cluster, "");
    assert_int_equal(en->n_messages, 1);
    assert_int_equal(en->messages[0].state, KRC_STORE_PENDING);
    krc_store_entry_free(en);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    memset(&f, 0, sizeof(f));
    f.cluster = "";
    memset(&l, 0, sizeof(l));
    assert_int_equal(krc_store_list(s, &f, on_row, &l, NULL), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.ids[0], 1);
    f.cluster = "east";
    memset(&l, 0, sizeof(l));
    assert_int_equal(krc_store_list(s, &f, on_row, &l, NULL), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.ids[0], 2);
    krc_store_close(s);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_index_info('restarts_window') "
                                   "WHERE name = 'cluster'"),
                     1);
    /* sql.c's window query (KRC_SQL_WINDOW_CLUSTER) as SQLite reads it, one
     * cluster: the index alone */
    plan_of(path,
            "SELECT r.id, r.detected_at, r.namespace, r.workload_kind, r.workload_name, r.pod,"
            " r.pod_uid, r.cause, r.node, r.gpus, r.cluster FROM restarts r INDEXED BY"
            " restarts_window WHERE r.detected_at >= 1 AND r.cluster = 'east'",
            plan, sizeof(plan));
    assert_non_null(strstr(plan, "COVERING INDEX restarts_window"));
}

/* ---- clusters ------------------------------------------------------------------------ */

struct windowed {
    int n;
    int east;
    int west;
};

static int on_window(const struct krc_store_window_row *r, void *ud)
{
    struct windowed *w = ud;
    assert_non_null(r->cluster);
    w->n++;
    w->east += strcmp(r->cluster, "east") == 0;
    w->west += strcmp(r->cluster, "west") == 0;
    return 0;
}

static int listed_in(struct krc_store *s, const char *cluster)
{
    struct krc_store_filter f;
    struct listed l;
    memset(&f, 0, sizeof(f));
    f.cluster = cluster;
    memset(&l, 0, sizeof(l));
    assert_int_equal(krc_store_list(s, &f, on_row, &l, NULL), 0);
    return l.n;
}

static int64_t summarized(struct krc_store *s, const char *cluster, size_t *n_workloads)
{
    struct krc_store_summary *sum = NULL;
    int64_t n;
    assert_int_equal(krc_store_summarize(s, NOW - 1000, cluster, 10, &sum, NULL), 0);
    n = sum->restarts;
    *n_workloads = sum->n_workloads;
    krc_store_summary_free(sum);
    return n;
}

struct pending_seen {
    int n;
};

static int count_pending(const struct krc_store_message *m, void *ud)
{
    (void)m;
    ((struct pending_seen *)ud)->n++;
    return 0;
}

/* Two clusters (options.cluster) record into the same database: every row
 * names its cluster; list, window and summary filter by one cluster or read
 * them together; counts and retention are the store's own cluster's. */
static void test_clusters_share_a_history(void **state)
{
    char target[1024];
    struct krc_store *east = NULL;
    struct krc_store *west = NULL;
    struct krc_store *anon = NULL;
    struct krc_store_options oe = {.cluster = "east"};
    struct krc_store_options ow = {.cluster = "west"};
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, NULL);
    struct krc_store_entry *en = NULL;
    struct windowed w;
    struct pending_seen ps;
    size_t nw = 0;
    int64_t rid = 0;
    int64_t deleted = -1;

    (void)state;
    new_target(target, sizeof(target));
    assert_int_equal(krc_store_open_with(target, 0, &oe, &east, NULL), 0);
    assert_int_equal(krc_store_open_with(target, 0, &ow, &west, NULL), 0);
    assert_int_equal(krc_store_open_with(target, 0, NULL, &anon, NULL), 0);
    /* east: 3 restarts of web (one with an alert), west: 2 of api, unnamed: 1 */
    for (int i = 0; i < 3; i++) {
        char uid[16];
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "e-%d", i);
        r = mkrec(uid, "shop", "web-1", 1, NOW - 10 + i);
        assert_int_equal(
            krc_store_record(east, &r, i == 0 ? &m : NULL, i == 0 ? &rid : NULL, NULL, NULL), 0);
    }
    for (int i = 0; i < 2; i++) {
        char uid[16];
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "w-%d", i);
        r = mkrec(uid, "shop", "api-1", 1, NOW - 20 + i);
        r.workload_name = "api";
        assert_int_equal(krc_store_record(west, &r, &m, NULL, NULL, NULL), 0);
    }
    {
        struct krc_store_restart r = mkrec("a-0", "ops", "tool", 1, NOW - 30);
        assert_int_equal(krc_store_record(anon, &r, NULL, NULL, NULL, NULL), 0);
    }
    /* every connection reads every row; rows name their cluster */
    assert_int_equal(krc_store_get(west, rid, &en, NULL), 0);
    assert_string_equal(en->row.cluster, "east");
    krc_store_entry_free(en);
    assert_int_equal(listed_in(west, NULL), 6);
    assert_int_equal(listed_in(west, "east"), 3);
    assert_int_equal(listed_in(east, "west"), 2);
    assert_int_equal(listed_in(east, ""), 1);
    assert_int_equal(listed_in(east, "north"), 0);
    memset(&w, 0, sizeof(w));
    assert_int_equal(krc_store_window(anon, NOW - 1000, NULL, on_window, &w, NULL), 0);
    assert_int_equal(w.n, 6);
    assert_int_equal(w.east, 3);
    assert_int_equal(w.west, 2);
    memset(&w, 0, sizeof(w));
    assert_int_equal(krc_store_window(anon, NOW - 1000, "west", on_window, &w, NULL), 0);
    assert_int_equal(w.n, 2);
    assert_int_equal(w.west, 2);
    assert_int_equal(summarized(anon, NULL, &nw), 6);
    assert_int_equal(nw, 3); /* shop/web, shop/api, ops/web */
    assert_int_equal(summarized(anon, "east", &nw), 3);
    assert_int_equal(nw, 1);
    assert_int_equal(summarized(east, "west", &nw), 2);
    assert_int_equal(nw, 1);
    /* pending, counts and retention: a shared database (PostgreSQL) gives
     * each cluster its own; a SQLite file is one replica's own, all of it
     * whatever cluster recorded a row (rows of before schema 6, or of a
     * renamed cluster, are pruned as before) */
    memset(&ps, 0, sizeof(ps));
    assert_int_equal(krc_store_pending(west, count_pending, &ps, NULL), 0);
    assert_int_equal(ps.n, test_store_is_pg() ? 2 : 3);
    assert_int_equal(stat_of(east, 0), test_store_is_pg() ? 3 : 6);
    assert_int_equal(stat_of(west, 0), test_store_is_pg() ? 2 : 6);
    assert_int_equal(stat_of(anon, 0), test_store_is_pg() ? 1 : 6);
    /* west's alerts delivered, west keeps at most 1 restart */
    {
        struct krc_store_filter f;
        struct listed l;
        memset(&f, 0, sizeof(f));
        f.cluster = "west";
        memset(&l, 0, sizeof(l));
        assert_int_equal(krc_store_list(west, &f, on_row, &l, NULL), 0);
        for (int i = 0; i < l.n; i++) {
            assert_int_equal(krc_store_get(west, l.ids[i], &en, NULL), 0);
            assert_int_equal(krc_store_mark_delivered(west, en->messages[0].id, NULL, NULL), 0);
            krc_store_entry_free(en);
        }
    }
    assert_int_equal(krc_store_prune(west, 0, 1, 10, &deleted, NULL), 0);
    if (test_store_is_pg()) {
        assert_int_equal(deleted, 1); /* west's older one */
        assert_int_equal(listed_in(anon, "west"), 1);
        assert_int_equal(listed_in(anon, "east"), 3);
        /* by age: older than 5 s are the unnamed row and all of east's, but
         * only the unnamed one is anon's */
        assert_int_equal(krc_store_prune(anon, 5, 0, 10, &deleted, NULL), 0);
        assert_int_equal(deleted, 1);
        assert_int_equal(listed_in(anon, NULL), 4);
        assert_int_equal(listed_in(anon, "east"), 3);
    } else {
        /* oldest first, all clusters; east's first restart has a pending alert */
        assert_int_equal(deleted, 5);
        assert_int_equal(listed_in(anon, NULL), 1);
        assert_int_equal(listed_in(anon, "east"), 1);
    }
    krc_store_close(anon);
    krc_store_close(west);
    krc_store_close(east);
}

/* ---- the dispatcher -------------------------------------------------------------------- */

/* Which backend a target is for (its display form: krc_url_mask_password,
 * tests/unit/util/test_url.c). */
static void test_display(void **state)
{
    (void)state;
    assert_int_equal(krc_store_is_url("postgres://h/db"), 1);
    assert_int_equal(krc_store_is_url("postgresql://h/db"), 1);
    assert_int_equal(krc_store_is_url("/var/lib/krc/krc.db"), 0);
    assert_int_equal(krc_store_is_url("postgres:/h"), 0);
    assert_int_equal(krc_store_is_url(":memory:"), 0);
    assert_int_equal(krc_store_is_url(NULL), 0);
}

/* The backend is chosen by the target; a store that cannot be opened names
 * its target without the password. */
static void test_backend_choice(void **state)
{
    struct krc_store *s = open_mem();
    struct krc_store_options o = {.cluster = "c", .connect_timeout_s = 2};
    struct krc_error e;

    (void)state;
    assert_string_equal(krc_store_backend_name(s), test_store_is_pg() ? "postgres" : "sqlite");
    assert_int_equal(krc_store_shared(s), test_store_is_pg());
    if (!test_store_is_pg()) {
        /* one replica's own file: nothing to fence, every row is ours */
        assert_int_equal(krc_store_fence(s, 7, NULL), 0);
        assert_int_equal(krc_store_claim(s, 1, 7, NULL), 0);
        assert_string_equal(krc_store_path(s), ":memory:");
    }
    krc_error_clear(&e);
    assert_int_equal(krc_store_fence(s, -1, &e), KRC_EINVAL);
    assert_int_equal(krc_store_claim(s, 0, 1, &e), KRC_EINVAL);
    krc_store_close(s);
    /* nothing listens on port 1 */
    krc_error_clear(&e);
    s = NULL;
    assert_true(krc_store_open_with("postgres://krc:s3cret@127.0.0.1:1/krc?password=s3cret", 0, &o,
                                    &s, &e) < 0);
    assert_null(s);
    assert_true(e.msg[0] != '\0');
    assert_null(strstr(e.msg, "s3cret"));
    assert_non_null(strstr(e.msg, "127.0.0.1"));
    assert_int_equal(krc_store_open_with("", 0, &o, &s, &e), KRC_EINVAL);
}

/* A version-1 database with a restart and a pending alert (what krc before
 * issue 11 left behind) migrates to version 2: the old row reads with no
 * confidence, its alert is still pending, new rows store their confidence. */
static void test_migration_v1_to_v2(void **state)
{
    char path[512];
    char sql[8192];
    char conf[2][16];
    struct krc_store *s = NULL;
    struct krc_store_entry *en = NULL;
    struct krc_store_restart r = mkrec("uid-2", "shop", "web-2", 4, NOW);
    struct krc_error e;
    struct listed l;

    (void)state;
    SQLITE_ONLY("migrates an old SQLite file");
    path_in_tmp(path, sizeof(path), "v1.db");
    snprintf(sql, sizeof(sql),
             "%s"
             "INSERT INTO restarts (pod_uid, container, restart_count, namespace, pod, cause, "
             "exit_code, detected_at, decision, summary) VALUES ('uid-1', 'app', 3, 'shop', "
             "'web-1', 'oom_killed', 137, %lld, 'alert', 'old one');"
             "INSERT INTO outbox (restart_id, kind, destination, body, created_at, updated_at) "
             "VALUES (1, 'alert', 'webhook:default', '{}', %lld, %lld);",
             schema_v1, (long long)NOW - 60, (long long)NOW - 60, (long long)NOW - 60);
    sql_poke(path, sql);
    assert_int_equal(schema_version_of(path), 1);

    /* a reader cannot migrate */
    krc_error_clear(&e);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "older"));
    assert_int_equal(schema_version_of(path), 1);

    /* a writer does, once */
    assert_int_equal(krc_store_open(path, KRC_STORE_QUICK_CHECK, &s, &e), 0);
    krc_store_close(s);
    assert_int_equal(schema_version_of(path), KRC_STORE_SCHEMA_VERSION);
    assert_int_equal(krc_store_open(path, 0, &s, &e), 0);
    assert_int_equal(stat_of(s, 0), 1);
    assert_int_equal(stat_of(s, 1), 1);
    r.confidence = KRC_CONFIDENCE_MEDIUM;
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, &e), 0);
    assert_int_equal(krc_store_get(s, 1, &en, &e), 0);
    assert_null(en->row.confidence);
    assert_string_equal(en->row.summary, "old one");
    assert_string_equal(en->row.delivery, "pending");
    krc_store_entry_free(en);
    assert_int_equal(krc_store_get(s, 2, &en, &e), 0);
    assert_string_equal(en->row.confidence, "medium");
    krc_store_entry_free(en);
    memset(conf, 0, sizeof(conf));
    assert_int_equal(krc_store_list(s, NULL, on_confidence, conf, NULL), 0);
    assert_string_equal(conf[0], "(null)");
    assert_string_equal(conf[1], "medium");
    assert_int_equal(list(s, "shop", NULL, NULL, 0, 0, &l), 2);
    krc_store_close(s);
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), 0);
    krc_store_close(s);
}

/* Every confidence is stored under its name. */
static void test_confidence_stored(void **state)
{
    static const enum krc_confidence all[] = {KRC_CONFIDENCE_LOW, KRC_CONFIDENCE_MEDIUM,
                                              KRC_CONFIDENCE_HIGH};
    struct krc_store *s = open_mem();
    struct krc_store_entry *en = NULL;

    (void)state;
    for (int i = 0; i < 3; i++) {
        struct krc_store_restart r = mkrec("uid-c", "shop", "web-1", i + 1, NOW);
        int64_t id = 0;
        r.confidence = all[i];
        assert_int_equal(krc_store_record(s, &r, NULL, &id, NULL, NULL), 0);
        assert_int_equal(krc_store_get(s, id, &en, NULL), 0);
        assert_string_equal(en->row.confidence, krc_confidence_name(all[i]));
        krc_store_entry_free(en);
    }
    krc_store_close(s);
}

static void test_corrupt_files(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_error e;
    char garbage[8192];

    (void)state;
    SQLITE_ONLY("corrupt SQLite files and quick_check");
    path_in_tmp(path, sizeof(path), "garbage.db");
    for (size_t i = 0; i < sizeof(garbage); i++) {
        garbage[i] = (char)(i * 131 + 7);
    }
    write_file(path, garbage, sizeof(garbage));
    krc_error_clear(&e);
    assert_int_equal(krc_store_open(path, 0, &s, &e), KRC_EPARSE);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "not a krc database or is corrupt"));
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &s, &e), KRC_EPARSE);
    assert_non_null(strstr(e.msg, path));

    /* a valid header with damaged pages: found by quick_check */
    path_in_tmp(path, sizeof(path), "damaged.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    for (int i = 0; i < 300; i++) {
        char uid[32];
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "uid-%d", i);
        r = mkrec(uid, "ns", "pod", 1, NOW);
        r.report_json = garbage + 4096; /* any text will do */
        garbage[8191] = '\0';
        assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    }
    krc_store_close(s); /* checkpoints the WAL into the file */
    {
        int fd = open(path, O_WRONLY);
        struct stat sb;
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &sb), 0);
        assert_true(sb.st_size > 64 * 1024);
        /* smash pages in the middle of the file */
        for (off_t off = 8192; off < sb.st_size - 4096; off += 16384) {
            assert_int_equal(pwrite(fd, garbage, 512, off), 512);
        }
        close(fd);
    }
    assert_int_equal(krc_store_open(path, KRC_STORE_QUICK_CHECK, &s, &e), KRC_EPARSE);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "corrupt"));
}

/* Run fn in a child that cannot override permissions (nobody when we are
 * root); returns its exit status. */
static int as_unprivileged(int (*fn)(const char *), const char *arg)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
            _exit(99);
        }
        _exit(fn(arg));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int try_write(const char *path)
{
    struct krc_store *s = NULL;
    struct krc_error e;
    int rc;

    krc_error_clear(&e);
    rc = krc_store_open(path, 0, &s, &e);
    if (rc == 0) {
        struct krc_store_restart r = mkrec("uid-x", "ns", "pod", 1, NOW);
        rc = krc_store_record(s, &r, NULL, NULL, NULL, &e);
        krc_store_close(s);
    }
    if (rc == 0) {
        return 10;
    }
    if (strstr(e.msg, path) == NULL || strstr(e.msg, "read-only") == NULL) {
        fprintf(stderr, "unexpected message: %s\n", e.msg);
        return 11;
    }
    return rc == KRC_EIO ? 0 : 12;
}

static int try_read(const char *path)
{
    struct krc_store *s = NULL;
    struct krc_error e;
    int64_t n = -1;
    struct krc_store_stats st;

    krc_error_clear(&e);
    if (krc_store_open(path, KRC_STORE_READONLY, &s, &e) != 0) {
        fprintf(stderr, "read-only open failed: %s\n", e.msg);
        return 20;
    }
    if (krc_store_stats(s, &st, &e) == 0) {
        n = st.restarts;
    }
    krc_store_close(s);
    return n == 1 ? 0 : 21;
}

static void test_read_only_file_and_dir(void **state)
{
    char dir[512];
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store_restart r = mkrec("uid-1", "ns", "pod", 1, NOW);

    (void)state;
    SQLITE_ONLY("file and directory permissions");
    assert_int_equal(chmod(tmpdir, 0755), 0);
    path_in_tmp(dir, sizeof(dir), "ro");
    assert_int_equal(mkdir(dir, 0755), 0);
    path_in_tmp(path, sizeof(path), "ro/krc.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    krc_store_close(s);
    assert_int_equal(chmod(path, 0644), 0);

    /* a file we may read but not write (the directory is not ours either) */
    assert_int_equal(as_unprivileged(try_write, path), 0);
    /* ... can still be read by krc history */
    assert_int_equal(as_unprivileged(try_read, path), 0);
    /* a new file in a directory we cannot write */
    path_in_tmp(path, sizeof(path), "ro/new.db");
    assert_int_equal(as_unprivileged(try_write, path), 0);
    path_in_tmp(path, sizeof(path), "ro/sub/new.db");
    assert_int_equal(as_unprivileged(try_write, path), 0);
    assert_int_equal(chmod(tmpdir, 0700), 0);
}

static void *hold_lock(const char *path, sqlite3 **ret)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    *ret = db;
    return db;
}

static void test_locked(void **state)
{
    char path[512];
    struct krc_store *s = NULL;
    struct krc_store *reader = NULL;
    struct krc_store_restart r = mkrec("uid-1", "ns", "pod", 1, NOW);
    struct krc_error e;
    sqlite3 *db = NULL;
    int64_t t0;

    (void)state;
    SQLITE_ONLY("SQLite file locks and the busy timeout");
    path_in_tmp(path, sizeof(path), "locked.db");
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0);
    hold_lock(path, &db);
    /* readers are not blocked by a writer (WAL) */
    assert_int_equal(krc_store_open(path, KRC_STORE_READONLY, &reader, NULL), 0);
    assert_int_equal(stat_of(reader, 0), 0);
    krc_store_close(reader);
    krc_error_clear(&e);
    t0 = krc_clock_mono_ms();
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, &e), KRC_ETIMEOUT);
    assert_true(krc_clock_mono_ms() - t0 >= KRC_STORE_BUSY_MS - 100);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "locked"));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    /* the failed transaction left nothing behind and the store works */
    assert_int_equal(krc_store_record(s, &r, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(stat_of(s, 0), 1);
    krc_store_close(s);
}

static int fill_until_full(const char *path)
{
    struct krc_store *s = NULL;
    struct krc_error e;
    struct rlimit rl;
    char *big = malloc(200000);
    int rc = 0;

    signal(SIGXFSZ, SIG_IGN);
    krc_error_clear(&e);
    if (big == NULL || krc_store_open(path, 0, &s, &e) != 0) {
        return 30;
    }
    memset(big, 'x', 199999);
    big[199999] = '\0';
    rl.rlim_cur = rl.rlim_max = 1024 * 1024;
    setrlimit(RLIMIT_FSIZE, &rl);
    for (int i = 0; i < 100 && rc == 0; i++) {
        char uid[32];
        struct krc_store_restart r;
        snprintf(uid, sizeof(uid), "uid-%d", i);
        r = mkrec(uid, "ns", "pod", 1, NOW);
        r.report_json = big;
        rc = krc_store_record(s, &r, NULL, NULL, NULL, &e);
    }
    krc_store_close(s);
    free(big);
    if (rc == 0) {
        return 31;
    }
    if (strstr(e.msg, path) == NULL) {
        fprintf(stderr, "message without the path: %s\n", e.msg);
        return 32;
    }
    if (strstr(e.msg, "disk full") == NULL) {
        fprintf(stderr, "unexpected message: %s\n", e.msg);
        return 34;
    }
    return rc == KRC_ETOOBIG ? 0 : rc == KRC_EIO ? 1 : 33;
}

static void test_disk_full(void **state)
{
    char path[512];
    pid_t pid;
    int status;

    (void)state;
    SQLITE_ONLY("a full disk under a SQLite file");
    path_in_tmp(path, sizeof(path), "full.db");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        _exit(fill_until_full(path));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    /* SQLite reports a short write as SQLITE_FULL, a refused one (EFBIG,
     * ENOSPC) as an I/O error: both are "disk full" naming the file */
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_default_path(void **state)
{
    char out[256];
    char tiny[8];
    struct krc_error e;

    (void)state;
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    assert_int_equal(krc_store_default_path(out, sizeof(out), NULL), 0);
    assert_string_equal(out, "/var/lib/krc/krc.db");
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("XDG_STATE_HOME", "/x/state", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(krc_store_default_path(out, sizeof(out), NULL), 0);
    assert_string_equal(out, "/x/state/krc/krc.db");
    setenv("XDG_STATE_HOME", "relative", 1); /* ignored, as the XDG spec says */
    assert_int_equal(krc_store_default_path(out, sizeof(out), NULL), 0);
    assert_string_equal(out, "/home/u/.local/state/krc/krc.db");
    unsetenv("XDG_STATE_HOME");
    assert_int_equal(krc_store_default_path(out, sizeof(out), NULL), 0);
    assert_string_equal(out, "/home/u/.local/state/krc/krc.db");
    assert_int_equal(krc_store_default_path(tiny, sizeof(tiny), &e), KRC_ETOOBIG);
    unsetenv("HOME");
    assert_int_equal(krc_store_default_path(out, sizeof(out), &e), KRC_ENOTFOUND);
    assert_non_null(strstr(e.msg, "--db"));
}

/* Several connections (threads) on one file record the same restarts at
 * once: each identity is stored exactly once, no write is lost to "database
 * is locked".
 * A write that waited out the whole lock timeout (KRC_STORE_BUSY_MS) is not
 * a locking fault but a starved machine: under qemu, niced beside a loaded
 * CI run, one thread can hold the lock for seconds while it is not
 * scheduled. The pipeline keeps such a record and writes it again
 * (test_pipeline); here it is counted apart and written again. Any other
 * failure, a lock refused before its wait was over (a deferred transaction
 * upgraded to a write, a missing busy timeout) among them, fails the test. */
struct writer {
    const char *path;
    int inserted;
    int existed;
    int failed;
    int starved;
    char error[256]; /* the first failure's message */
};

/* Record r until it is written or found, again after a lock wait that took the whole
 * timeout; a negative code for any other failure (w->error says which). */
static int record_waiting_out(struct krc_store *s, struct writer *w,
                              const struct krc_store_restart *r, const struct krc_store_outbox *m)
{
    for (;;) {
        struct krc_error e;
        int64_t t0 = krc_clock_mono_ms();
        int rc;
        krc_error_clear(&e);
        rc = krc_store_record(s, r, m, NULL, NULL, &e);
        if (rc == KRC_ETIMEOUT && krc_clock_mono_ms() - t0 >= KRC_STORE_BUSY_MS &&
            w->starved < 100) {
            w->starved++;
            continue;
        }
        if (rc < 0 && w->error[0] == '\0') {
            snprintf(w->error, sizeof(w->error), "%s (after %lld ms)", e.msg,
                     (long long)(krc_clock_mono_ms() - t0));
        }
        return rc;
    }
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct krc_store *s = NULL;
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, NULL);

    if (krc_store_open(w->path, 0, &s, NULL) != 0) {
        w->failed = 1000;
        return NULL;
    }
    for (int i = 0; i < 150; i++) {
        char uid[32];
        struct krc_store_restart r;
        int rc;
        snprintf(uid, sizeof(uid), "uid-%d", i);
        r = mkrec(uid, "ns", "pod", 1, NOW);
        rc = record_waiting_out(s, w, &r, &m);
        w->inserted += rc == 0;
        w->existed += rc == KRC_STORE_EXISTS;
        w->failed += rc < 0;
    }
    krc_store_close(s);
    return NULL;
}

static void test_concurrent_writers(void **state)
{
    char path[512];
    pthread_t th[4];
    struct writer w[4];
    struct krc_store *s = NULL;
    int inserted = 0;

    (void)state;
    new_target(path, sizeof(path));
    assert_int_equal(krc_store_open(path, 0, &s, NULL), 0); /* create before the race */
    for (int i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].path = path;
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        if (w[i].starved > 0) {
            print_message("writer %d: %d write(s) waited out the %d ms lock timeout (a starved "
                          "machine) and were written again\n",
                          i, w[i].starved, KRC_STORE_BUSY_MS);
        }
        if (w[i].failed != 0) {
            print_error("writer %d: %d write(s) failed, the first: %s\n", i, w[i].failed,
                        w[i].error);
        }
        assert_int_equal(w[i].failed, 0);
        assert_int_equal(w[i].inserted + w[i].existed, 150);
        inserted += w[i].inserted;
    }
    assert_int_equal(inserted, 150);
    assert_int_equal(stat_of(s, 0), 150);
    assert_int_equal(stat_of(s, 1), 150); /* one alert per restart */
    krc_store_close(s);
}

/* ---- allocation failures ---------------------------------------------------------------- */

static int scenario_ok;

static int noop_msg(const struct krc_store_message *m, void *ud)
{
    (void)m;
    (void)ud;
    return 0;
}

static int noop_row(const struct krc_store_row *r, void *ud)
{
    (void)r;
    (void)ud;
    return 0;
}

static int noop_incident(const struct krc_store_incident *i, void *ud)
{
    (void)i;
    (void)ud;
    return 0;
}

static int noop_change(const struct krc_store_change *c, void *ud)
{
    (void)c;
    (void)ud;
    return 0;
}

static void alloc_scenario(void)
{
    struct krc_store_incident_ref inc = {0};
    struct krc_store *s = NULL;
    struct krc_store_restart r = mkrec("uid-1", "shop", "web-1", 1, NOW);
    struct krc_store_outbox m = mkmsg(KRC_STORE_KIND_ALERT, "shop/web-1");
    struct krc_store_entry *en = NULL;
    struct krc_store_filter f;
    int64_t rid = 0;
    int64_t oid = 0;
    char *ts = NULL;
    int rc;

    memset(&f, 0, sizeof(f));
    f.namespace = "shop";
    scenario_ok = 0;
    if (krc_store_open(":memory:", 0, &s, NULL) != 0) {
        return;
    }
    inc.thread_key = "shop/web-1";
    r.incident = &inc;
    rc = krc_store_record(s, &r, &m, &rid, &oid, NULL);
    if (rc == 0) {
        struct krc_store_incident_detail *d = NULL;
        struct krc_store_change c = {.namespace = "shop",
                                     .kind = "Deployment",
                                     .name = "web",
                                     .revision = "2",
                                     .at = NOW - 60,
                                     .summary = "image a → b"};
        struct krc_store_change_filter cf = {
            .namespace = "shop", .kind = "Deployment", .name = "web", .limit = 5};
        if (krc_store_incident_get(s, inc.ret_id, &d, NULL) == 0) {
            assert_int_equal(d->n_messages, 1);
            assert_non_null(d->first);
            krc_store_incident_detail_free(d);
        } else {
            assert_null(d);
        }
        if (krc_store_incidents_list(s, NULL, noop_incident, NULL, NULL) < 0 ||
            krc_store_incident_end(s, inc.ret_id, NOW, &m, 1, NULL, NULL) < 0 ||
            krc_store_record_change(s, &c, NULL) < 0 ||
            krc_store_changes_list(s, &cf, noop_change, NULL, NULL) < 0) {
            krc_store_close(s);
            return;
        }
        krc_store_mark_delivered(s, oid, "1.2", NULL);
        if (krc_store_get(s, rid, &en, NULL) == 0) {
            assert_int_equal(en->n_messages, 2); /* the alert and the resolved message */
            krc_store_entry_free(en);
        }
        if (krc_store_thread_ts(s, "shop/web-1", &ts, NULL, NULL) == 0 && ts != NULL) {
            assert_string_equal(ts, "1.2");
            krc_free(ts);
        }
        krc_store_pending(s, noop_msg, NULL, NULL);
        if (krc_store_list(s, &f, noop_row, NULL, NULL) == 0) {
            scenario_ok = 1;
        }
    }
    krc_store_close(s);
}

static void test_alloc_failures(void **state)
{
    long n;
    (void)state;
    SQLITE_ONLY("the sweep reopens an in-memory database once per allocation; on a server "
                "every step would leave a schema behind");
    for (n = 0; n < 10000; n++) {
        long attempts;
        krc_mem_fail_after(n);
        alloc_scenario();
        attempts = krc_mem_fail_after(-1);
        if (attempts <= n) {
            break;
        }
    }
    assert_true(n > 3);
    assert_true(n < 10000);
    assert_int_equal(scenario_ok, 1);
}

/* ---- report_json ------------------------------------------------------------------------- */

static void test_sanitize(void **state)
{
    struct krc_buf b;
    static const char in[] = "\x1b[31mred\x1b[0m\tok\r\nnext\rprogress\x01\x7f"
                             "\xff\xc3\xa9\xc2\x85\xed\xa0\x80\x1b]0;title\x07"
                             "end";

    (void)state;
    krc_buf_init(&b, 1024);
    assert_int_equal(krc_report_json_sanitize(&b, in, sizeof(in) - 1, 1), 0);
    assert_string_equal(krc_buf_str(&b), "red\tok\nnext\nprogress\xef\xbf\xbd\xc3\xa9"
                                         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                         "end");
    krc_buf_reset(&b);
    assert_int_equal(krc_report_json_sanitize(&b, "a\nb\tc", 5, 0), 0);
    assert_string_equal(krc_buf_str(&b), "a b c");
    krc_buf_cleanup(&b);
    krc_buf_init(&b, 4);
    assert_int_equal(krc_report_json_sanitize(&b, "abcdef", 6, 1), KRC_ETOOBIG);
    assert_string_equal(krc_buf_str(&b), "abcd");
    krc_buf_cleanup(&b);
}

static void fill_report(struct krc_report *r, struct krc_diagnosis *d, size_t log_len)
{
    struct krc_report_container *c;
    struct krc_report_event *ev;
    char *log = malloc(log_len);

    assert_non_null(log);
    krc_report_init(r);
    krc_diagnosis_init(d);
    r->namespace = krc_strdup("shop");
    r->name = krc_strdup("web-1");
    r->uid = krc_strdup("uid-1");
    r->node_name = krc_strdup("node-1");
    assert_int_equal(krc_kv_list_put(&r->annotations, "note", "password=hunter22"), 0);
    assert_int_equal(
        krc_kv_list_put(&r->annotations, "kubectl.kubernetes.io/last-applied-configuration", "{}"),
        0);
    c = krc_report_add_container(r);
    assert_non_null(c);
    c->name = krc_strdup("app");
    c->restart_count = 3;
    c->last.present = 1;
    c->last.exit_code = 137;
    c->last.reason = krc_strdup("OOMKilled");
    ev = krc_report_add_event(r);
    assert_non_null(ev);
    ev->type = krc_strdup("Warning");
    ev->reason = krc_strdup("BackOff");
    ev->message = krc_strdup("Back-off restarting \x1b[1mfailed\x1b[0m container");
    assert_int_equal(krc_report_add_note(r, "node %s not found", "gpu-3"), 0);
    for (size_t i = 0; i < log_len; i++) {
        log[i] = (i % 80 == 79) ? '\n' : (char)('a' + i % 26);
    }
    memcpy(log + log_len - 40, "\ntoken=abcdef123456 \xff\n", 22);
    assert_int_equal(krc_report_set_log(r, "app", log, log_len, 0, NULL), 0);
    free(log);
    d->container = krc_strdup("app");
    d->cause = KRC_CAUSE_OOM_KILLED;
    d->has_termination = 1;
    d->exit_code = 137;
    d->summary = krc_strdup("OOM");
    d->confidence = KRC_CONFIDENCE_HIGH;
    d->next_step = krc_strdup("Raise the limit \x1b[1mnow\x1b[0m; password=hunter22");
    d->commands = krc_calloc(2, sizeof(char *));
    d->commands[0] = krc_strdup("kubectl logs -n shop web-1 -c app --previous");
    d->commands[1] = krc_strdup("kubectl describe node gpu-3");
    d->n_commands = 2;
    d->unchecked = krc_calloc(1, sizeof(char *));
    d->unchecked[0] = krc_strdup("no node was given, so node pressure cannot be ruled out");
    d->n_unchecked = 1;
}

static void test_report_json(void **state)
{
    struct krc_report r;
    struct krc_diagnosis d;
    char *json = NULL;
    cJSON *doc;
    const cJSON *log;
    const char *text;

    (void)state;
    fill_report(&r, &d, 600 * 1024);
    assert_int_equal(krc_report_json_build(&r, &d, NULL, &json, NULL), 0);
    doc = cJSON_Parse(json);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetObjectItem(doc, "version")->valueint, 1);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "pod"), "namespace")->valuestring, "shop");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "diagnosis"), "cause")->valuestring,
        "oom_killed");
    {
        const cJSON *dg = cJSON_GetObjectItem(doc, "diagnosis");
        const cJSON *cmds = cJSON_GetObjectItem(dg, "commands");
        const char *next = cJSON_GetObjectItem(dg, "next_step")->valuestring;
        assert_string_equal(cJSON_GetObjectItem(dg, "confidence")->valuestring, "high");
        assert_non_null(strstr(next, "Raise the limit now; password="));
        assert_null(strstr(next, "hunter22"));
        assert_int_equal(cJSON_GetArraySize(cmds), 2);
        assert_string_equal(cJSON_GetArrayItem(cmds, 1)->valuestring,
                            "kubectl describe node gpu-3");
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(dg, "unchecked")), 1);
        assert_string_equal(
            cJSON_GetArrayItem(cJSON_GetObjectItem(dg, "unchecked"), 0)->valuestring,
            "no node was given, so node pressure cannot be ruled out");
    }
    assert_null(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "pod"), "annotations"),
                            "kubectl.kubernetes.io/last-applied-configuration"));
    assert_null(strstr(json, "hunter22"));
    assert_null(strstr(json, "abcdef123456"));
    assert_null(strstr(json, "\\u001b"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "node")));
    log = cJSON_GetObjectItem(doc, "log");
    text = cJSON_GetObjectItem(log, "text")->valuestring;
    assert_true(strlen(text) <= KRC_REPORT_JSON_LOG_MAX);
    assert_true(strlen(text) > KRC_REPORT_JSON_LOG_MAX - 4096);
    assert_true(cJSON_GetObjectItem(log, "omitted_bytes")->valuedouble > 300 * 1024);
    assert_int_equal(cJSON_GetObjectItem(log, "bytes")->valuedouble, 600 * 1024);
    assert_non_null(strstr(text, "[REDACTED]"));
    assert_non_null(strstr(text, "\xef\xbf\xbd"));
    /* starts at a line */
    assert_true(text[0] ==
                'a' + (int)((cJSON_GetObjectItem(log, "omitted_bytes")->valuedouble)) % 26);
    cJSON_Delete(doc);
    krc_free(json);

    /* not diagnosed */
    assert_int_equal(krc_report_json_build(&r, NULL, NULL, &json, NULL), 0);
    doc = cJSON_Parse(json);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "diagnosis")));
    cJSON_Delete(doc);
    krc_free(json);

    /* allocation failures: clean error, nothing leaks */
    for (long n = 0; n < 100000; n++) {
        long attempts;
        int rc;
        json = NULL;
        krc_mem_fail_after(n);
        rc = krc_report_json_build(&r, &d, NULL, &json, NULL);
        attempts = krc_mem_fail_after(-1);
        if (rc == 0) {
            krc_free(json);
        } else {
            assert_int_equal(rc, KRC_ENOMEM);
        }
        if (attempts <= n) {
            assert_int_equal(rc, 0);
            break;
        }
    }
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
}

/* test_second_connection_keeps_the_wal runs this binary again as another
 * process (a fork would inherit SQLite's in-process lock bookkeeping):
 * `test_store --count-restarts PATH` prints the row count and exits. */
static int count_restarts_main(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = -1;

    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM restarts", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    printf("%d\n", n);
    return n < 0 ? 1 : 0;
}

/* The container's last diagnosed restart: the newest collected one (alert,
 * thread_reply, not_posted) of that pod UID and container, muted, grouped and
 * silenced ones skipped, with whether its report held a log. */
/* Every row of a table as text, one line a row (the columns as SQLite gives them). */
static void table_text(const char *path, const char *table, char *out, size_t outsz)
{
    char q[128];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    size_t n = 0;

    snprintf(q, sizeof(q), "SELECT * FROM %s ORDER BY 1", table);
    out[0] = '\0';
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW && n < outsz) {
        for (int i = 0; i < sqlite3_column_count(st) && n < outsz; i++) {
            const char *v = (const char *)sqlite3_column_text(st, i);
            n += (size_t)snprintf(out + n, outsz - n, "%s|", v != NULL ? v : "NULL");
        }
        n += n < outsz ? (size_t)snprintf(out + n, outsz - n, "\n") : 0;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_true(n > 0 && n < outsz);
}

/* Load fixture `name` (tests/fixtures/store/) into a new file at path (its
 * schema `version`), open it with this krc (migrating it) and check that every
 * row is as it was: outbox and reports the same, each restart row the same
 * with `added` appended (the columns added since, as table_text prints
 * them). Returns the open store. */
static struct krc_store *upgrade_fixture(const char *name, int version, const char *added,
                                         char *path, size_t pathsz)
{
    static const char *const tables[] = {"restarts", "reports", "outbox"};
    static char before[3][8192], after[3][8192];
    struct krc_store *s = NULL;
    struct krc_error e = {0};
    char file[512];
    FILE *f;
    char *sql;
    long len;

    snprintf(file, sizeof(file), "%s/store/%s", KRC_FIXTURES, name);
    f = fopen(file, "r");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    rewind(f);
    sql = calloc(1, (size_t)len + 1);
    assert_non_null(sql);
    assert_int_equal(fread(sql, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    path_in_tmp(path, pathsz, name);
    sql_poke(path, sql);
    free(sql);
    assert_int_equal(schema_version_of(path), version);
    for (int i = 0; i < 3; i++) {
        table_text(path, tables[i], before[i], sizeof(before[i]));
    }
    assert_non_null(strstr(before[2], "1800000000.000100"));

    assert_int_equal(krc_store_open(path, 0, &s, &e), 0);
    assert_int_equal(schema_version_of(path), KRC_STORE_SCHEMA_VERSION);
    for (int i = 0; i < 3; i++) {
        table_text(path, tables[i], after[i], sizeof(after[i]));
        if (i == 0) {
            char want[sizeof(before[0]) + 1024];
            size_t n = 0;
            for (const char *p = before[0]; *p != '\0' && n + strlen(added) + 1 < sizeof(want);
                 p++) {
                if (*p == '\n') {
                    memcpy(want + n, added, strlen(added));
                    n += strlen(added);
                }
                want[n++] = *p;
            }
            want[n] = '\0';
            assert_string_equal(after[i], want);
        } else {
            assert_string_equal(after[i], before[i]);
        }
    }
    /* schema 9: no incident, no change, no restart in one */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM incidents"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM changes"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM restarts WHERE incident_id IS NOT NULL"),
                     0);
    return s;
}

/* A database as krc wrote it before the SQL layer (16884f4, schema 6:
 * tests/fixtures/store/sqlite_v6.sql, real rows of every outbox state and
 * two Slack ts) opens with this krc: restarts.intentional and
 * accel_seconds_lost 0 (schema 8), incident_id NULL (schema 9), every row as
 * it was, the reference in message_ref, read back through the store. */
static void test_upgrade_sqlite_v6(void **state)
{
    char path[512];
    char *ref = NULL, *channel = NULL;
    struct krc_store *s = NULL;
    struct krc_store_entry *en = NULL;
    struct krc_store_stats st;
    struct krc_error e = {0};

    (void)state;
    SQLITE_ONLY("an SQLite file of schema 6 (test_store_pg.c has PostgreSQL's)");
    s = upgrade_fixture("sqlite_v6.sql", 6, "0|0|NULL|", path, sizeof(path));
    assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_table_info('outbox') WHERE "
                                   "name = 'slack_ts'"),
                     0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = "
                                   "'outbox_thread' AND sql LIKE '%message_ref IS NOT NULL%'"),
                     1);
    assert_int_equal(krc_store_get(s, 1, &en, &e), 0);
    assert_string_equal(en->row.pod, "api-7d9f-x1");
    assert_string_equal(en->row.cluster, "prod-eu");
    assert_string_equal(en->row.delivery, "failed"); /* its latest message's */
    assert_string_equal(en->report_json,
                        "{\"version\":1,\"diagnosis\":{\"gpus\":2},\"log\":{\"bytes\":42}}");
    assert_int_equal(en->n_messages, 2);
    assert_string_equal(en->messages[0].message_ref, "1800000000.000100");
    assert_int_equal(en->messages[1].state, KRC_STORE_FAILED);
    assert_null(en->messages[1].message_ref);
    krc_store_entry_free(en);
    assert_int_equal(krc_store_thread_ts(s, "shop/api-7d9f-x1", &ref, &channel, &e), 0);
    assert_string_equal(ref, "1800000000.000100");
    assert_string_equal(channel, "#ops");
    krc_free(ref);
    krc_free(channel);
    assert_int_equal(krc_store_stats(s, &st, &e), 0);
    assert_int_equal(st.restarts, 3);
    assert_int_equal(st.pending, 1);
    assert_int_equal(st.delivered, 2);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.withdrawn, 1);
    krc_store_close(s);
}

/* A database of schema 8 as krc wrote it before issue 27 (fc308ef:
 * tests/fixtures/store/sqlite_v8.sql, every outbox state, intentional and
 * GPU time lost) opens with this krc: schema 9, every row as it was with no
 * incident; a restart of an old pod then opens an incident, the old
 * restarts stay in none, and retention and the thread work as before. */
static void test_upgrade_sqlite_v8(void **state)
{
    char path[512];
    char *ref = NULL, *channel = NULL;
    struct krc_store *s = NULL;
    struct krc_store_entry *en = NULL;
    struct krc_store_stats st;
    struct krc_store_incident_ref inc = {0};
    struct krc_store_restart r;
    struct krc_error e = {0};
    int64_t rid = 0;

    (void)state;
    SQLITE_ONLY("an SQLite file of schema 8 (test_store_pg.c has PostgreSQL's)");
    s = upgrade_fixture("sqlite_v8.sql", 8, "NULL|", path, sizeof(path));
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                                   "name IN ('incidents_open', 'restarts_incident', "
                                   "'changes_object')"),
                     3);
    assert_int_equal(krc_store_get(s, 4, &en, &e), 0);
    assert_null(en->row.workload_kind);
    assert_int_equal(en->row.incident_id, 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_SUPERSEDED);
    krc_store_entry_free(en);
    assert_int_equal(krc_store_thread_ts(s, "shop/api-7d9f-x1", &ref, &channel, &e), 0);
    assert_string_equal(ref, "1800000000.000100");
    krc_free(ref);
    krc_free(channel);
    assert_int_equal(krc_store_stats(s, &st, &e), 0);
    assert_int_equal(st.restarts, 4);
    assert_int_equal(st.superseded, 1);

    r = mkrec("uid-api-1", "shop", "api-7d9f-x1", 5, 1800000100);
    r.workload_kind = "Deployment";
    r.workload_name = "api";
    inc.thread_key = "shop/api-7d9f-x1";
    r.incident = &inc;
    assert_int_equal(krc_store_record(s, &r, NULL, &rid, NULL, &e), 0);
    assert_true(rid > 4);
    assert_true(inc.ret_id > 0);
    assert_int_equal(inc.ret_restarts, 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM restarts WHERE incident_id IS NULL"), 4);
    krc_store_close(s);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--count-restarts") == 0) {
        return count_restarts_main(argv[2]);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_builder),
        cmocka_unit_test(test_record_and_duplicate),
        cmocka_unit_test(test_record_many_destinations),
        cmocka_unit_test(test_delivery_prefers_a_message_to_the_event),
        cmocka_unit_test(test_outbox_lifecycle),
        cmocka_unit_test(test_pending_survives_close_and_kill),
        cmocka_unit_test(test_thread_ts),
        cmocka_unit_test(test_list_filters_and_order),
        cmocka_unit_test(test_list_pages_pod_workload),
        cmocka_unit_test(test_summary_counts),
        cmocka_unit_test(test_summary_matches_sql),
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_prune_age_and_count),
        cmocka_unit_test(test_incident_join_and_open),
        cmocka_unit_test(test_incident_end_and_get),
        cmocka_unit_test(test_incident_list),
        cmocka_unit_test(test_incidents_open_callback_uses_store),
        cmocka_unit_test(test_changes),
        cmocka_unit_test(test_prune_incidents),
        cmocka_unit_test(test_migrations_and_versions),
        cmocka_unit_test(test_migration_v1_to_v2),
        cmocka_unit_test(test_migration_v3_to_v4),
        cmocka_unit_test(test_withdrawn),
        cmocka_unit_test(test_superseded),
        cmocka_unit_test(test_migration_v4_to_v5),
        cmocka_unit_test(test_migration_v5_to_v6),
        cmocka_unit_test(test_clusters_share_a_history),
        cmocka_unit_test(test_display),
        cmocka_unit_test(test_backend_choice),
        cmocka_unit_test(test_confidence_stored),
        cmocka_unit_test(test_identity_is_the_termination),
        cmocka_unit_test(test_row_ident_is_the_recorded_identity),
        cmocka_unit_test(test_migrate_v1_database),
        cmocka_unit_test(test_upgrade_sqlite_v6),
        cmocka_unit_test(test_upgrade_sqlite_v8),
        cmocka_unit_test(test_delivery_journal),
        cmocka_unit_test(test_second_connection_keeps_the_wal),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_read_only_file_and_dir),
        cmocka_unit_test(test_locked),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_report_json),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
