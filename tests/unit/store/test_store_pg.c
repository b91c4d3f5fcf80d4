/* The store on PostgreSQL (driver_pg.c under the SQL layer), opened with a
 * display name of the test's (krc_store_open_as) against a real server: tests/tools/pg_server.py,
 * started by the ctest fixture pg_server_start, whose directory
 * KRC_TEST_PG_DIR holds `url` and `password`. KRC_TEST_PG_SERVER is the
 * pg_server.py that the reconnection test stops and starts the server with.
 *
 * The test holds its own libpq connection to do what krc never does: lock a
 * row in an open transaction, fake a newer schema, make and drop schemas.
 * Every test writes under its own cluster name (unique per run), so runs and
 * tests do not see each other's rows. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "krc/store/driver.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

static char pg_dir[512];
static char url[512];
static char password_file[600];
static char run_id[64];

/* ---- helpers ------------------------------------------------------------------ */

static int setup_pg(void **state)
{
    const char *dir = getenv("KRC_TEST_PG_DIR");
    FILE *f;
    (void)state;
    if (dir == NULL || dir[0] == '\0') {
        fprintf(stderr, "KRC_TEST_PG_DIR is not set: run through ctest (fixture "
                        "pg_server_start) or `tests/tools/pg_server.py start DIR` first\n");
        return -1;
    }
    snprintf(pg_dir, sizeof(pg_dir), "%s", dir);
    snprintf(password_file, sizeof(password_file), "%s/password", dir);
    {
        char path[600];
        snprintf(path, sizeof(path), "%s/url", dir);
        f = fopen(path, "r");
        if (f == NULL || fgets(url, sizeof(url), f) == NULL) {
            fprintf(stderr, "%s: cannot read\n", path);
            if (f != NULL) {
                fclose(f);
            }
            return -1;
        }
        fclose(f);
        url[strcspn(url, "\r\n")] = '\0';
    }
    snprintf(run_id, sizeof(run_id), "%ld-%ld", (long)getpid(), (long)time(NULL));
    return 0;
}

/* A cluster name of this run. */
static const char *cluster_name(char *out, size_t outsz, const char *test)
{
    snprintf(out, outsz, "%s-%s", test, run_id);
    return out;
}

static struct krc_store *open_as(const char *target, const char *cluster)
{
    struct krc_store_options o = {.cluster = cluster, .password_file = password_file};
    struct krc_store *b = NULL;
    struct krc_error err = {0};
    int rc = krc_store_open_as(target, "pg-test", 0, &o, &b, &err);
    if (rc != 0) {
        fail_msg("open %s: %s", target, err.msg);
    }
    return b;
}

/* The test's own connection (the password from the file). */
static PGconn *raw_conn(void)
{
    char pw[256] = "";
    FILE *f = fopen(password_file, "r");
    const char *keys[] = {"dbname", "password", NULL};
    const char *vals[] = {url, pw, NULL};
    PGconn *c;
    assert_non_null(f);
    assert_non_null(fgets(pw, sizeof(pw), f));
    fclose(f);
    pw[strcspn(pw, "\r\n")] = '\0';
    c = PQconnectdbParams(keys, vals, 1);
    if (PQstatus(c) != CONNECTION_OK) {
        fail_msg("raw connection: %s", PQerrorMessage(c));
    }
    return c;
}

static void raw_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    }
    PQclear(r);
}

static long raw_int(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    long v;
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    }
    v = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

static struct krc_store_restart restart(const char *uid, int count, int64_t detected)
{
    struct krc_store_restart r;
    memset(&r, 0, sizeof(r));
    r.pod_uid = uid;
    r.container = "app";
    r.restart_count = count;
    r.namespace = "prod";
    r.pod = "api_1-abc";
    r.workload_kind = "Deployment";
    r.workload_name = "api";
    r.node = "node-1";
    r.cause = KRC_CAUSE_OOM_KILLED;
    r.has_exit_code = 1;
    r.exit_code = 137;
    r.reason = "OOMKilled";
    r.finished_at = detected - 1;
    r.container_id = "containerd://abc";
    r.detected_at = detected;
    r.decision = "alert";
    r.summary = "out of memory";
    r.confidence = KRC_CONFIDENCE_HIGH;
    r.message = "the alert";
    r.report_json = "{\"log\":{\"bytes\":12}}";
    r.gpus = 2;
    return r;
}

static struct krc_store_outbox message(const char *dest)
{
    struct krc_store_outbox m;
    memset(&m, 0, sizeof(m));
    m.kind = KRC_STORE_KIND_ALERT;
    m.destination = dest;
    m.channel = "#ops";
    m.thread_key = "prod/api_1-abc";
    m.body = "{\"text\":\"hi\"}";
    return m;
}

static int64_t record(struct krc_store *b, const struct krc_store_restart *r,
                      const struct krc_store_outbox *m, int64_t *oid)
{
    struct krc_error err = {0};
    int64_t rid = 0;
    int rc = krc_store_record_many(b, r, m, m != NULL ? 1 : 0, &rid, oid, &err);
    if (rc != 0) {
        fail_msg("record: %d %s", rc, err.msg);
    }
    return rid;
}

struct collect {
    int n;
    int64_t ids[64];
    char clusters[64][64];
};

static int collect_row(const struct krc_store_row *row, void *ud)
{
    struct collect *c = ud;
    if (c->n < 64) {
        c->ids[c->n] = row->id;
        snprintf(c->clusters[c->n], sizeof(c->clusters[0]), "%s", row->cluster);
    }
    c->n++;
    return 0;
}

static int collect_window(const struct krc_store_window_row *row, void *ud)
{
    struct collect *c = ud;
    if (c->n < 64) {
        c->ids[c->n] = row->id;
        snprintf(c->clusters[c->n], sizeof(c->clusters[0]), "%s", row->cluster);
    }
    c->n++;
    return 0;
}

static int collect_msg(const struct krc_store_message *m, void *ud)
{
    struct collect *c = ud;
    if (c->n < 64) {
        c->ids[c->n] = m->id;
    }
    c->n++;
    return 0;
}

/* ---- schema ------------------------------------------------------------------- */

struct opener {
    const char *target;
    const char *cluster;
    pthread_barrier_t *go;
    int rc;
    char msg[KRC_ERROR_MSG_MAX];
};

static void *open_thread(void *arg)
{
    struct opener *o = arg;
    struct krc_store_options opt = {.cluster = o->cluster, .password_file = password_file};
    struct krc_store *b = NULL;
    struct krc_error err = {0};
    pthread_barrier_wait(o->go);
    o->rc = krc_store_open_as(o->target, "pg-test", 0, &opt, &b, &err);
    snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
    krc_store_close(b);
    return NULL;
}

/* Four replicas start together on an empty schema: the advisory lock makes
 * one create it, the others find it done. Then a newer version is refused
 * and a read-only open of an empty schema says there is none. */
static void test_schema_concurrent(void **state)
{
    char schema[96];
    char target[1024];
    char sql[256];
    pthread_t th[4];
    struct opener op[4];
    pthread_barrier_t go;
    PGconn *c = raw_conn();
    struct krc_store *b = NULL;
    struct krc_store_options opt = {.password_file = password_file};
    struct krc_error err = {0};
    (void)state;

    snprintf(schema, sizeof(schema), "s_%ld_%ld", (long)getpid(), (long)time(NULL));
    snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
    raw_exec(c, sql);
    snprintf(target, sizeof(target), "%s?options=-csearch_path%%3D%s", url, schema);

    /* read-only on an empty schema: never creates it */
    assert_int_equal(krc_store_open_as(target, "pg-test", KRC_STORE_READONLY, &opt, &b, &err),
                     KRC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no krc schema"));

    pthread_barrier_init(&go, NULL, 4);
    for (int i = 0; i < 4; i++) {
        op[i] = (struct opener){.target = target, .cluster = "c", .go = &go};
        assert_int_equal(pthread_create(&th[i], NULL, open_thread, &op[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        if (op[i].rc != 0) {
            fail_msg("concurrent open %d: %s", i, op[i].msg);
        }
    }
    pthread_barrier_destroy(&go);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.krc_schema_version", schema);
    assert_int_equal(raw_int(c, sql), 1);
    snprintf(sql, sizeof(sql), "SELECT max(version) FROM %s.krc_schema_version", schema);
    /* 2: outbox.message_ref, 3: restarts.intentional, 4: incidents and changes */
    assert_int_equal(raw_int(c, sql), 4);

    /* read-only of the current schema works */
    assert_int_equal(krc_store_open_as(target, "pg-test", KRC_STORE_READONLY, &opt, &b, &err), 0);
    krc_store_close(b);

    /* a newer schema is refused, read-only or not */
    snprintf(sql, sizeof(sql), "UPDATE %s.krc_schema_version SET version = 99", schema);
    raw_exec(c, sql);
    b = NULL;
    assert_int_equal(krc_store_open_as(target, "pg-test", 0, &opt, &b, &err), KRC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "schema version 99 is newer"));
    assert_null(b);

    snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
    raw_exec(c, sql);
    PQfinish(c);
}

/* ---- the unique key across connections --------------------------------------------- */

struct recorder {
    struct krc_store *b;
    pthread_barrier_t *go;
    int round;
    int rc[20];
    int64_t rid[20];
    int64_t oid[20];
    char msg[KRC_ERROR_MSG_MAX];
};

static void *record_thread(void *arg)
{
    struct recorder *r = arg;
    for (int i = 0; i < 20; i++) {
        char uid[32];
        struct krc_store_restart rec;
        struct krc_store_outbox m = message("webhook:default");
        struct krc_error err = {0};
        snprintf(uid, sizeof(uid), "uid-%d", i);
        rec = restart(uid, 3, 1800000000 + i);
        pthread_barrier_wait(r->go);
        r->rc[i] = krc_store_record_many(r->b, &rec, &m, 1, &r->rid[i], &r->oid[i], &err);
        if (r->rc[i] < 0) {
            snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
        }
    }
    return NULL;
}

/* Two replicas record the same terminations at the same moment: each is
 * stored once; the other connection gets KRC_STORE_EXISTS and its id, and no
 * outbox row. */
static void test_unique_concurrent(void **state)
{
    char cl[128];
    struct recorder r[2];
    pthread_t th[2];
    pthread_barrier_t go;
    struct krc_store_filter f = {0};
    struct collect c = {0};
    struct krc_error err = {0};
    (void)state;

    cluster_name(cl, sizeof(cl), "unique");
    pthread_barrier_init(&go, NULL, 2);
    for (int t = 0; t < 2; t++) {
        memset(&r[t], 0, sizeof(r[t]));
        r[t].b = open_as(url, cl);
        r[t].go = &go;
    }
    for (int t = 0; t < 2; t++) {
        assert_int_equal(pthread_create(&th[t], NULL, record_thread, &r[t]), 0);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
    }
    pthread_barrier_destroy(&go);
    for (int i = 0; i < 20; i++) {
        if (r[0].rc[i] < 0 || r[1].rc[i] < 0) {
            fail_msg("round %d: %s%s", i, r[0].msg, r[1].msg);
        }
        /* exactly one wrote it */
        assert_int_equal(r[0].rc[i] + r[1].rc[i], KRC_STORE_EXISTS);
        assert_int_equal(r[0].rid[i], r[1].rid[i]);
        assert_true((r[0].oid[i] == 0) != (r[1].oid[i] == 0));
    }
    f.cluster = cl;
    assert_int_equal(krc_store_list(r[0].b, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 20);
    c.n = 0;
    assert_int_equal(krc_store_pending(r[1].b, collect_msg, &c, &err), 0);
    assert_int_equal(c.n, 20);
    krc_store_close(r[0].b);
    krc_store_close(r[1].b);
}

/* ---- incidents across connections ------------------------------------------------------ */

struct inc_recorder {
    struct krc_store *b;
    pthread_barrier_t *go;
    const char *uid; /* NULL: the same restarts as the other thread */
    int64_t incident;
    int rc[20];
    int64_t ret_id[20];
    int64_t ret_restarts[20];
    int end_rc;
    char msg[KRC_ERROR_MSG_MAX];
};

static void *inc_record_thread(void *arg)
{
    struct inc_recorder *r = arg;
    for (int i = 0; i < 20; i++) {
        struct krc_store_incident_ref inc = {.id = r->incident, .thread_key = "prod/api_1-abc"};
        struct krc_store_restart rec =
            restart(r->uid != NULL ? r->uid : "inc-same", 10 + i, 1800000000 + i);
        struct krc_error err = {0};
        rec.incident = &inc;
        pthread_barrier_wait(r->go);
        r->rc[i] = krc_store_record(r->b, &rec, NULL, NULL, NULL, &err);
        r->ret_id[i] = inc.ret_id;
        r->ret_restarts[i] = inc.ret_restarts;
        if (r->rc[i] < 0) {
            snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
        }
    }
    return NULL;
}

static void *inc_end_thread(void *arg)
{
    struct inc_recorder *r = arg;
    struct krc_store_outbox m = message("route:1");
    struct krc_error err = {0};
    m.kind = KRC_STORE_KIND_RECOVERED;
    pthread_barrier_wait(r->go);
    r->end_rc = krc_store_incident_end(r->b, r->incident, 1800000100, &m, 1, NULL, &err);
    if (r->end_rc < 0) {
        snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
    }
    return NULL;
}

static void run_pair(struct inc_recorder *r, void *(*fn)(void *))
{
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        assert_int_equal(pthread_create(&th[t], NULL, fn, &r[t]), 0);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
    }
}

/* Two leaders at once (a hand-over): restarts of different pods of one
 * workload recorded at the same moment form one incident, each counted
 * once; the same restarts recorded by both count once; both ending it at
 * the same moment end it once, with one resolved message. */
static void test_incidents_concurrent(void **state)
{
    char cl[128];
    struct inc_recorder r[2];
    pthread_barrier_t go;
    struct collect c = {0};
    struct krc_store_incident_detail *d = NULL;
    struct krc_error err = {0};
    int seen[41] = {0};
    int64_t id;
    (void)state;

    cluster_name(cl, sizeof(cl), "incidents");
    pthread_barrier_init(&go, NULL, 2);
    for (int t = 0; t < 2; t++) {
        memset(&r[t], 0, sizeof(r[t]));
        r[t].b = open_as(url, cl);
        r[t].go = &go;
        r[t].uid = t == 0 ? "inc-a" : "inc-b";
    }
    /* neither knows of an incident: they open one and join it */
    run_pair(r, inc_record_thread);
    id = r[0].ret_id[0];
    assert_true(id > 0);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < 20; i++) {
            if (r[t].rc[i] != 0) {
                fail_msg("round %d: %d %s", i, r[t].rc[i], r[t].msg);
            }
            assert_int_equal(r[t].ret_id[i], id);
            assert_true(r[t].ret_restarts[i] >= 1 && r[t].ret_restarts[i] <= 40);
            seen[r[t].ret_restarts[i]]++;
        }
    }
    for (int k = 1; k <= 40; k++) {
        assert_int_equal(seen[k], 1); /* each restart counted once */
    }
    /* the same restarts by both: each counted once more */
    for (int t = 0; t < 2; t++) {
        r[t].uid = NULL;
        r[t].incident = id;
    }
    run_pair(r, inc_record_thread);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(r[0].rc[i] + r[1].rc[i], KRC_STORE_EXISTS);
        assert_int_equal(r[0].ret_id[i], id);
        assert_int_equal(r[1].ret_id[i], id);
    }
    assert_int_equal(krc_store_incident_get(r[0].b, id, &d, &err), 0);
    assert_int_equal(d->inc.restarts, 60);
    assert_string_equal(d->inc.cluster, cl);
    krc_store_incident_detail_free(d);
    /* both end it */
    run_pair(r, inc_end_thread);
    if (r[0].end_rc < 0 || r[1].end_rc < 0) {
        fail_msg("end: %s%s", r[0].msg, r[1].msg);
    }
    assert_int_equal(r[0].end_rc + r[1].end_rc, KRC_STORE_EXISTS);
    assert_int_equal(krc_store_pending(r[1].b, collect_msg, &c, &err), 0);
    assert_int_equal(c.n, 1);
    pthread_barrier_destroy(&go);
    krc_store_close(r[0].b);
    krc_store_close(r[1].b);
}

/* ---- fencing --------------------------------------------------------------------- */

static void test_fence_claim(void **state)
{
    char cl[128];
    char sql[256];
    struct krc_store *a;
    struct krc_store *b;
    struct krc_store_restart r1;
    struct krc_store_restart r2;
    struct krc_store_outbox m = message("webhook:default");
    struct krc_error err = {0};
    int64_t o1 = 0;
    int64_t o2 = 0;
    PGconn *c;
    int64_t t0;
    (void)state;

    cluster_name(cl, sizeof(cl), "fence");
    a = open_as(url, cl);
    b = open_as(url, cl);
    r1 = restart("fence-1", 1, 1800000000);
    r2 = restart("fence-2", 1, 1800000001);
    record(a, &r1, &m, &o1);
    record(a, &r2, &m, &o2);

    /* replica a leads with token 1 and claims o1 */
    assert_int_equal(krc_store_fence(a, 1, &err), 0);
    assert_int_equal(krc_store_claim(a, o1, 1, &err), 0);
    /* b takes over with token 2: a is deposed */
    assert_int_equal(krc_store_fence(b, 2, &err), 0);
    assert_int_equal(krc_store_fence(a, 1, &err), KRC_STORE_FENCED);
    assert_int_equal(krc_store_claim(a, o1, 1, &err), KRC_STORE_FENCED);
    assert_int_equal(krc_store_claim(a, o2, 1, &err), KRC_STORE_FENCED);
    /* the new leader claims the row a had claimed */
    assert_int_equal(krc_store_claim(b, o1, 2, &err), 0);
    /* raising to the same token again is fine */
    assert_int_equal(krc_store_fence(b, 2, &err), 0);

    /* a row locked by another open transaction is skipped, not waited for */
    c = raw_conn();
    raw_exec(c, "BEGIN");
    snprintf(sql, sizeof(sql), "SELECT id FROM outbox WHERE id = %lld FOR UPDATE", (long long)o2);
    raw_exec(c, sql);
    t0 = krc_clock_now();
    assert_int_equal(krc_store_claim(b, o2, 2, &err), KRC_STORE_FENCED);
    assert_true(krc_clock_now() - t0 < 5);
    raw_exec(c, "COMMIT");
    assert_int_equal(krc_store_claim(b, o2, 2, &err), 0);
    snprintf(sql, sizeof(sql), "SELECT claim_token FROM outbox WHERE id = %lld", (long long)o2);
    assert_int_equal(raw_int(c, sql), 2);

    /* a row that is no longer pending cannot be claimed */
    assert_int_equal(krc_store_mark_delivered(b, o2, "1700000000.000100", &err), 0);
    assert_int_equal(krc_store_claim(b, o2, 2, &err), KRC_STORE_FENCED);
    /* another cluster's fence is its own */
    {
        char other[128];
        struct krc_store *x = open_as(url, cluster_name(other, sizeof(other), "fence-other"));
        assert_int_equal(krc_store_fence(x, 1, &err), 0);
        krc_store_close(x);
    }
    PQfinish(c);
    krc_store_close(a);
    krc_store_close(b);
}

/* ---- password ---------------------------------------------------------------------- */

static void test_password(void **state)
{
    static const char wrong[] = "Wr0ngSecretValue-d41d8cd9";
    char file[700];
    char port[16];
    struct krc_store_options o = {.cluster = "x", .password_file = file};
    struct krc_store *b = NULL;
    struct krc_error err = {0};
    FILE *f;
    const char *p;
    (void)state;

    snprintf(file, sizeof(file), "%s/wrong-password", pg_dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fprintf(f, "%s\nsecond line ignored\n", wrong);
    fclose(f);
    assert_int_equal(krc_store_open_as(url, "postgres://krc:****@db/krc", 0, &o, &b, &err),
                     KRC_EIO);
    assert_null(b);
    assert_null(strstr(err.msg, wrong));
    assert_non_null(strstr(err.msg, "postgres://krc:****@db/krc"));
    assert_non_null(strstr(err.msg, "127.0.0.1"));
    assert_non_null(strstr(err.msg, "password authentication failed"));
    /* the port of the URL is named */
    p = strrchr(url, ':');
    assert_non_null(p);
    snprintf(port, sizeof(port), ":%.*s", (int)strcspn(p + 1, "/"), p + 1);
    assert_non_null(strstr(err.msg, port));
    unlink(file);

    /* a missing file is named */
    assert_int_equal(krc_store_open_as(url, "pg-test", 0, &o, &b, &err), KRC_EIO);
    assert_non_null(strstr(err.msg, file));
    assert_non_null(strstr(err.msg, "password file"));
}

/* ---- reconnection ------------------------------------------------------------------ */

static void server_cmd(const char *what)
{
    const char *tool = getenv("KRC_TEST_PG_SERVER");
    char cmd[1400];
    assert_non_null(tool);
    snprintf(cmd, sizeof(cmd), "python3 '%s' %s '%s' >/dev/null", tool, what, pg_dir);
    assert_int_equal(system(cmd), 0);
}

static void test_reconnect(void **state)
{
    char cl[128];
    struct krc_store *b;
    struct krc_store_restart r = restart("reconnect-1", 1, 1800000000);
    struct krc_store_filter f = {0};
    struct collect c = {0};
    struct krc_error err = {0};
    (void)state;

    cluster_name(cl, sizeof(cl), "reconnect");
    b = open_as(url, cl);
    record(b, &r, NULL, NULL);
    server_cmd("stop");
    f.cluster = cl;
    /* the call that finds the connection gone fails naming the server */
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), KRC_EIO);
    assert_non_null(strstr(err.msg, "pg-test"));
    assert_non_null(strstr(err.msg, "127.0.0.1"));
    /* the next one tries to connect, once, and fails fast while it is down */
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), KRC_EIO);
    assert_non_null(strstr(err.msg, "cannot connect"));
    server_cmd("start");
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 1);
    /* the session settings came back with the connection */
    r = restart("reconnect-2", 1, 1800000001);
    record(b, &r, NULL, NULL);
    krc_store_close(b);
}

/* KRC_STORE_DEFER_CONNECT: the server is down at open. The store is made
 * (KRC_STORE_DEFERRED, the reason naming the server), every call fails with
 * KRC_EIO naming it, attempts are at most one per second, and once the
 * server answers the next attempt connects and creates the schema. */
static void test_defer_connect(void **state)
{
    char cl[128];
    char schema[96];
    char target[700];
    char sql[300];
    struct krc_store_options o = {.password_file = password_file};
    struct krc_store *b = NULL;
    struct krc_store_restart r = restart("deferred-1", 1, 1800000000);
    struct krc_store_filter f = {0};
    struct collect c = {0};
    struct krc_error err = {0};
    int64_t t0;
    int64_t id = 0;
    int rc;
    PGconn *raw;
    (void)state;

    /* a schema of its own: the first connection must create the tables */
    snprintf(schema, sizeof(schema), "deferred_%ld", (long)getpid());
    snprintf(target, sizeof(target), "%s%soptions=-csearch_path%%3D%s", url,
             strchr(url, '?') != NULL ? "&" : "?", schema);
    raw = raw_conn();
    snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema,
             schema);
    raw_exec(raw, sql);
    PQfinish(raw);
    o.cluster = cluster_name(cl, sizeof(cl), "deferred");

    server_cmd("stop");
    /* without the flag: fatal, as for krc history */
    assert_int_equal(krc_store_open_as(target, "pg-test", 0, &o, &b, &err), KRC_EIO);
    assert_null(b);
    assert_non_null(strstr(err.msg, "127.0.0.1"));
    rc = krc_store_open_as(target, "pg-test", KRC_STORE_DEFER_CONNECT, &o, &b, &err);
    assert_int_equal(rc, KRC_STORE_DEFERRED);
    assert_non_null(b);
    assert_non_null(strstr(err.msg, "cannot connect"));
    assert_non_null(strstr(err.msg, "127.0.0.1"));
    assert_null(strstr(err.msg, "scram")); /* no password anywhere near */
    /* calls fail naming the server; within a second without trying again */
    t0 = krc_clock_mono_ms();
    assert_int_equal(krc_store_record_many(b, &r, NULL, 0, &id, NULL, &err), KRC_EIO);
    assert_non_null(strstr(err.msg, "pg-test"));
    assert_non_null(strstr(err.msg, "127.0.0.1"));
    if (krc_clock_mono_ms() - t0 < 500) {
        assert_non_null(strstr(err.msg, "again within 1 s"));
    }
    f.cluster = cl;
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), KRC_EIO);
    /* KRC_STORE_CONNECT_ON_USE: no attempt at open, the first call makes one */
    {
        struct krc_store *lazy = NULL;
        assert_int_equal(krc_store_open_as(target, "pg-lazy",
                                           KRC_STORE_DEFER_CONNECT | KRC_STORE_CONNECT_ON_USE, &o,
                                           &lazy, &err),
                         KRC_STORE_DEFERRED);
        assert_non_null(strstr(err.msg, "not connected yet"));
        assert_int_equal(krc_store_list(lazy, &f, collect_row, &c, &err), KRC_EIO);
        assert_non_null(strstr(err.msg, "cannot connect"));
        assert_non_null(strstr(err.msg, "pg-lazy"));
        krc_store_close(lazy);
    }

    server_cmd("start");
    krc_clock_sleep_ms(1100, NULL); /* past the one attempt per second */
    assert_int_equal(krc_store_record_many(b, &r, NULL, 0, &id, NULL, &err), 0);
    assert_true(id > 0);
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 1);
    krc_store_close(b);

    /* the schema was created in the URL's search_path at that connection */
    raw = raw_conn();
    snprintf(sql, sizeof(sql), "SELECT max(version) FROM %s.krc_schema_version", schema);
    assert_true(raw_int(raw, sql) >= 1);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.restarts WHERE cluster = '%s'", schema, cl);
    assert_int_equal(raw_int(raw, sql), 1);
    snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
    raw_exec(raw, sql);
    PQfinish(raw);
}

/* A server that answers but refuses the login stays fatal with the flag. */
static void test_defer_auth_fatal(void **state)
{
    char bad[600];
    struct krc_store_options o = {.cluster = "auth"};
    struct krc_store *b = NULL;
    struct krc_error err = {0};
    FILE *f;
    (void)state;

    snprintf(bad, sizeof(bad), "%s/wrong-password", pg_dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("not-the-password\n", f);
    fclose(f);
    o.password_file = bad;
    assert_int_equal(krc_store_open_as(url, "pg-test", KRC_STORE_DEFER_CONNECT, &o, &b, &err),
                     KRC_EIO);
    assert_null(b);
    assert_non_null(strstr(err.msg, "cannot connect"));
    assert_null(strstr(err.msg, "not-the-password"));
    unlink(bad);
    /* a URL libpq cannot parse: fatal too */
    o.password_file = password_file;
    assert_true(
        krc_store_open_as("postgres://[::1", "pg-test", KRC_STORE_DEFER_CONNECT, &o, &b, &err) < 0);
    assert_null(b);
}

/* ---- clusters and the operations' semantics --------------------------------------------- */

static void test_clusters(void **state)
{
    char ca[128];
    char cb[128];
    struct krc_store *a;
    struct krc_store *b;
    struct krc_store_restart r = restart("shared-uid", 1, 1800000000);
    struct krc_store_outbox m = message("webhook:default");
    struct krc_store_filter f = {0};
    struct krc_store_stats st;
    struct krc_restart_ident id;
    struct collect c = {0};
    struct krc_error err = {0};
    int64_t ra;
    int64_t rb;
    int64_t oa = 0;
    int64_t ob = 0;
    int64_t found = 0;
    char *ts = NULL;
    char *ch = NULL;
    (void)state;

    (void)krc_restart_ident_set(&id, "shared-uid", "app", 1, 1799999999, "containerd://abc");
    a = open_as(url, cluster_name(ca, sizeof(ca), "clA"));
    b = open_as(url, cluster_name(cb, sizeof(cb), "clB"));
    /* the same identity in two clusters is two restarts */
    ra = record(a, &r, &m, &oa);
    rb = record(b, &r, &m, &ob);
    assert_true(ra != rb);
    assert_int_equal(krc_store_find_restart(a, &id, &found, &err), 1);
    assert_int_equal(found, ra);
    assert_int_equal(krc_store_find_restart(b, &id, &found, &err), 1);
    assert_int_equal(found, rb);

    f.cluster = ca;
    assert_int_equal(krc_store_list(a, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.ids[0], ra);
    assert_string_equal(c.clusters[0], ca);
    /* NULL: every cluster (this run's two among others) */
    memset(&c, 0, sizeof(c));
    f.cluster = NULL;
    f.since = 1800000000;
    f.pod = "api_1-"; /* '_' is a literal, not LIKE's wildcard */
    f.pod_exact = 0;
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), 0);
    assert_true(c.n >= 2);
    f.pod = "api%"; /* nor is '%' */
    memset(&c, 0, sizeof(c));
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 0);

    memset(&c, 0, sizeof(c));
    assert_int_equal(krc_store_window(a, 1800000000, cb, collect_window, &c, &err), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.ids[0], rb);

    /* pending and stats are the store's cluster's */
    memset(&c, 0, sizeof(c));
    assert_int_equal(krc_store_pending(a, collect_msg, &c, &err), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.ids[0], oa);
    assert_int_equal(krc_store_stats(b, &st, &err), 0);
    assert_int_equal(st.restarts, 1);
    assert_int_equal(st.pending, 1);
    assert_true(st.db_bytes > 0);
    assert_int_equal(st.wal_bytes, 0);

    /* threads: a's delivered alert is not b's */
    assert_int_equal(krc_store_mark_delivered(a, oa, "1.2", &err), 0);
    assert_int_equal(krc_store_thread_ts(a, "prod/api_1-abc", &ts, &ch, &err), 0);
    assert_non_null(ts);
    assert_string_equal(ts, "1.2");
    assert_string_equal(ch, "#ops");
    krc_free(ts);
    krc_free(ch);
    assert_int_equal(krc_store_thread_ts(b, "prod/api_1-abc", &ts, &ch, &err), 0);
    assert_null(ts);

    /* retention: b's restart (pending) stays; a's prunes a's only */
    {
        int64_t deleted = -1;
        assert_int_equal(krc_store_prune(a, 0, 0 + 0, 10, &deleted, &err), 0);
        assert_int_equal(deleted, 0);
        krc_clock_set_fake_now(1800000000 + 100 * 86400);
        assert_int_equal(krc_store_prune(a, 86400, 0, 10, &deleted, &err), 0);
        assert_int_equal(deleted, 1);
        assert_int_equal(krc_store_prune(b, 86400, 0, 10, &deleted, &err), 0);
        assert_int_equal(deleted, 0); /* pending notification */
        krc_clock_set_fake_now(0);
    }
    krc_store_close(a);
    krc_store_close(b);
}

/* get, set_decision, the marks, keyset pages, the journal. */
static void test_semantics(void **state)
{
    char cl[128];
    struct krc_store *b;
    struct krc_store_restart r = restart("sem-uid", 4, 1800000000);
    struct krc_store_outbox msgs[2] = {message("webhook:default"), message("route:2")};
    struct krc_store_entry *e = NULL;
    struct krc_store_filter f = {0};
    struct collect c = {0};
    struct krc_error err = {0};
    int64_t rid = 0;
    int64_t oids[2] = {0, 0};
    int64_t s_oid = 0;
    (void)state;

    b = open_as(url, cluster_name(cl, sizeof(cl), "sem"));
    assert_int_equal(krc_store_record_many(b, &r, msgs, 2, &rid, oids, &err), 0);
    assert_true(oids[0] > 0 && oids[1] > oids[0]);
    {
        int64_t again[2] = {-1, -1};
        int64_t rid2 = 0;
        assert_int_equal(krc_store_record_many(b, &r, msgs, 2, &rid2, again, &err),
                         KRC_STORE_EXISTS);
        assert_int_equal(rid2, rid);
        assert_int_equal(again[0], 0);
        assert_int_equal(again[1], 0);
    }

    assert_int_equal(krc_store_mark_attempt(b, oids[0], "HTTP 500", 0, &err), 0);
    assert_int_equal(krc_store_mark_attempt(b, oids[1], "HTTP 404", 1, &err), 0);
    assert_int_equal(krc_store_mark_withdrawn(b, oids[1], &err), KRC_ENOTFOUND);
    assert_int_equal(krc_store_mark_superseded(b, oids[0], &err), 0);
    assert_int_equal(krc_store_mark_delivered(b, 999999999, NULL, &err), KRC_ENOTFOUND);
    assert_int_equal(krc_store_set_decision(b, rid, "storm", "grouped", &err), 0);
    assert_int_equal(krc_store_set_decision(b, 999999999, "storm", NULL, &err), KRC_ENOTFOUND);
    assert_int_equal(krc_store_add_outbox(b, 999999999, &msgs[0], &s_oid, &err), KRC_ENOTFOUND);
    msgs[0].kind = KRC_STORE_KIND_SUMMARY;
    assert_int_equal(krc_store_add_outbox(b, 0, &msgs[0], &s_oid, &err), 0);
    assert_true(s_oid > oids[1]);

    assert_int_equal(krc_store_get(b, rid, &e, &err), 0);
    assert_string_equal(e->row.decision, "storm");
    assert_string_equal(e->message, "grouped");
    assert_string_equal(e->report_json, "{\"log\":{\"bytes\":12}}");
    assert_string_equal(e->row.identity, "t1799999999/containerd://abc/4");
    assert_string_equal(e->row.cluster, cl);
    /* delivery: the latest message's */
    assert_string_equal(e->row.delivery, "failed");
    assert_int_equal(e->n_messages, 2);
    assert_int_equal(e->messages[0].state, KRC_STORE_SUPERSEDED);
    assert_int_equal(e->messages[0].attempts, 1);
    assert_string_equal(e->messages[1].last_error, "HTTP 404");
    krc_store_entry_free(e);
    assert_int_equal(krc_store_get(b, 999999999, &e, &err), KRC_ENOTFOUND);

    /* keyset pages, newest first: three restarts at the same second */
    for (int i = 0; i < 3; i++) {
        struct krc_store_restart x = restart("page", i, 1800000500);
        x.finished_at = 0;
        record(b, &x, NULL, NULL);
    }
    f.cluster = cl;
    f.limit = 2;
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 2);
    assert_true(c.ids[0] > c.ids[1]);
    f.before_at = 1800000500;
    f.before_id = c.ids[1];
    f.limit = 0;
    memset(&c, 0, sizeof(c));
    assert_int_equal(krc_store_list(b, &f, collect_row, &c, &err), 0);
    assert_int_equal(c.n, 2); /* the third of the second, then the older restart */
    assert_int_equal(c.ids[1], rid);

    /* more notifications than one statement takes: the transaction path */
    {
        struct krc_store_outbox many[17];
        int64_t ids[17];
        struct krc_store_restart x = restart("many", 1, 1800000600);
        int64_t xr = 0;
        for (int i = 0; i < 17; i++) {
            many[i] = message("route:9");
        }
        assert_int_equal(krc_store_record_many(b, &x, many, 17, &xr, ids, &err), 0);
        for (int i = 1; i < 17; i++) {
            assert_true(ids[i] > ids[i - 1]);
        }
        assert_int_equal(krc_store_get(b, xr, &e, &err), 0);
        assert_int_equal(e->n_messages, 17);
        assert_string_equal(e->report_json, "{\"log\":{\"bytes\":12}}");
        krc_store_entry_free(e);
        assert_int_equal(krc_store_record_many(b, &x, many, 17, &rid, ids, &err), KRC_STORE_EXISTS);
        assert_int_equal(rid, xr);
        assert_int_equal(ids[16], 0);
    }

    assert_int_equal(krc_store_journal_delivered(b, oids[0], NULL, &err), KRC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "no delivery journal with PostgreSQL"));
    assert_int_equal(krc_store_journal_clear(b, &err), KRC_EUNSUPPORTED);
    krc_store_close(b);
}

/* Retention runs on one replica at a time: while another session holds the
 * lock, prune deletes nothing and says so without error. */
static void test_prune_lock(void **state)
{
    char cl[128];
    struct krc_store *b;
    struct krc_store_restart r = restart("prune-1", 1, 1800000000);
    struct krc_error err = {0};
    int64_t deleted = -1;
    PGconn *c = raw_conn();
    (void)state;

    b = open_as(url, cluster_name(cl, sizeof(cl), "prune"));
    record(b, &r, NULL, NULL);
    r = restart("prune-2", 1, 1800000001);
    record(b, &r, NULL, NULL);
    raw_exec(c, "SELECT pg_advisory_lock(7741542380882244965)");
    assert_int_equal(krc_store_prune(b, 0, 1, 10, &deleted, &err), 0);
    assert_int_equal(deleted, 0);
    raw_exec(c, "SELECT pg_advisory_unlock(7741542380882244965)");
    assert_int_equal(krc_store_prune(b, 0, 1, 10, &deleted, &err), 0);
    assert_int_equal(deleted, 1);
    PQfinish(c);
    krc_store_close(b);
}

/* Every row of schema.table as text, in id order. */
static char *raw_rows(PGconn *c, const char *schema, const char *table, const char *order)
{
    char sql[256];
    PGresult *r;
    char *out;
    snprintf(sql, sizeof(sql), "SELECT string_agg(t::text, E'\\n' ORDER BY t.%s) FROM %s.%s t",
             order, schema, table);
    r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    }
    out = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    assert_non_null(out);
    return out;
}

/* Load fixture `name` (tests/fixtures/store/, schema `version`) into a new
 * schema, open it with this krc for cluster prod-eu (migrating it) and check
 * that every row is as it was: outbox and reports the same, each restart row
 * with `added` (the columns added since, as row text) before its ")".
 * Returns the open store; *c the test's connection, schema its name. */
static struct krc_store *upgrade_fixture(const char *name, int version, const char *added,
                                         PGconn **c, char *schema, size_t schemasz)
{
    static const char *const tables[][2] = {
        {"restarts", "id"}, {"reports", "restart_id"}, {"outbox", "id"}};
    char target[1024], sql[256], file[512];
    char *before[3], *fixture;
    struct krc_store *b;
    FILE *f;
    long len;

    *c = raw_conn();
    snprintf(file, sizeof(file), "%s/store/%s", KRC_FIXTURES, name);
    f = fopen(file, "r");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    rewind(f);
    fixture = calloc(1, (size_t)len + 1);
    assert_non_null(fixture);
    assert_int_equal(fread(fixture, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    snprintf(schema, schemasz, "up%d_%ld_%ld", version, (long)getpid(), (long)time(NULL));
    snprintf(sql, sizeof(sql), "CREATE SCHEMA %s; SET search_path = %s", schema, schema);
    raw_exec(*c, sql);
    raw_exec(*c, fixture);
    free(fixture);
    snprintf(sql, sizeof(sql), "SELECT max(version) FROM %s.krc_schema_version", schema);
    assert_int_equal(raw_int(*c, sql), version);
    for (int i = 0; i < 3; i++) {
        before[i] = raw_rows(*c, schema, tables[i][0], tables[i][1]);
    }
    assert_non_null(strstr(before[2], "1800000000.000100"));

    snprintf(target, sizeof(target), "%s?options=-csearch_path%%3D%s", url, schema);
    b = open_as(target, "prod-eu");
    snprintf(sql, sizeof(sql), "SELECT max(version) FROM %s.krc_schema_version", schema);
    assert_int_equal(raw_int(*c, sql), 4);
    for (int i = 0; i < 3; i++) {
        char *after = raw_rows(*c, schema, tables[i][0], tables[i][1]);
        if (i == 0) {
            char *want = malloc(strlen(before[0]) * (strlen(added) + 1) + 5);
            size_t n = 0;
            assert_non_null(want);
            for (const char *p = before[0]; *p != '\0'; p++) {
                if (*p == ')' && (p[1] == '\n' || p[1] == '\0')) {
                    memcpy(want + n, added, strlen(added));
                    n += strlen(added);
                }
                want[n++] = *p;
            }
            want[n] = '\0';
            assert_string_equal(after, want);
            free(want);
        } else {
            assert_string_equal(after, before[i]);
        }
        free(after);
        free(before[i]);
    }
    /* version 4: no incident, no change, no restart in one */
    snprintf(sql, sizeof(sql),
             "SELECT (SELECT count(*) FROM %s.incidents) + (SELECT count(*) FROM %s.changes) + "
             "(SELECT count(*) FROM %s.restarts WHERE incident_id IS NOT NULL)",
             schema, schema, schema);
    assert_int_equal(raw_int(*c, sql), 0);
    return b;
}

static void drop_schema(PGconn *c, const char *schema)
{
    char sql[256];
    snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
    raw_exec(c, sql);
    PQfinish(c);
}

/* A database as krc wrote it before the SQL layer (16884f4, version 1:
 * tests/fixtures/store/pg_v1.sql, real rows of every outbox state and two
 * Slack ts) opens with this krc: version 4 (restarts.intentional and
 * accel_seconds_lost 0, incident_id NULL), every row as it was, the reference
 * in message_ref, read back through the store. */
static void test_upgrade_pg_v1(void **state)
{
    char schema[96], sql[256];
    char *ref = NULL, *channel = NULL;
    struct krc_store_entry *en = NULL;
    struct krc_store_stats st;
    struct krc_error err = {0};
    struct krc_store *b;
    PGconn *c;
    (void)state;

    b = upgrade_fixture("pg_v1.sql", 1, ",0,0,", &c, schema, sizeof(schema));
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM information_schema.columns WHERE table_schema = '%s' AND "
             "table_name = 'outbox' AND column_name IN ('slack_ts', 'message_ref')",
             schema);
    assert_int_equal(raw_int(c, sql), 1);
    assert_int_equal(krc_store_get(b, 1, &en, &err), 0);
    assert_string_equal(en->row.pod, "api-7d9f-x1");
    assert_string_equal(en->row.cluster, "prod-eu");
    assert_int_equal(en->n_messages, 2);
    assert_string_equal(en->messages[0].message_ref, "1800000000.000100");
    assert_null(en->messages[1].message_ref);
    krc_store_entry_free(en);
    assert_int_equal(krc_store_thread_ts(b, "shop/api-7d9f-x1", &ref, &channel, &err), 0);
    assert_string_equal(ref, "1800000000.000100");
    assert_string_equal(channel, "#ops");
    krc_free(ref);
    krc_free(channel);
    assert_int_equal(krc_store_stats(b, &st, &err), 0);
    assert_int_equal(st.restarts, 3);
    assert_int_equal(st.pending, 1);
    assert_int_equal(st.delivered, 2);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.withdrawn, 1);
    krc_store_close(b);
    drop_schema(c, schema);
}

/* A database of version 3 as krc wrote it before issue 27 (fc308ef:
 * tests/fixtures/store/pg_v3.sql, every outbox state, intentional and GPU
 * time lost) opens with this krc: version 4, every row as it was with no
 * incident; a new restart of an old pod opens an incident and a second one
 * joins it, the old restarts stay in none. */
static void test_upgrade_pg_v3(void **state)
{
    char schema[96], sql[256];
    struct krc_store_entry *en = NULL;
    struct krc_store_stats st;
    struct krc_store_incident_ref inc = {0};
    struct krc_error err = {0};
    struct krc_store *b;
    int64_t rid = 0, first;
    PGconn *c;
    (void)state;

    b = upgrade_fixture("pg_v3.sql", 3, ",", &c, schema, sizeof(schema));
    assert_int_equal(krc_store_get(b, 4, &en, &err), 0);
    assert_null(en->row.workload_kind);
    assert_int_equal(en->row.incident_id, 0);
    assert_int_equal(en->messages[0].state, KRC_STORE_SUPERSEDED);
    krc_store_entry_free(en);
    assert_int_equal(krc_store_stats(b, &st, &err), 0);
    assert_int_equal(st.restarts, 4);
    assert_int_equal(st.superseded, 1);
    {
        struct krc_store_restart r = restart("uid-api-1", 5, 1800000100);
        r.incident = &inc;
        inc.thread_key = "shop/api-7d9f-x1";
        assert_int_equal(krc_store_record(b, &r, NULL, &rid, NULL, &err), 0);
        assert_true(rid > 4);
        assert_true(inc.ret_id > 0);
        assert_int_equal(inc.ret_restarts, 1);
        first = inc.ret_id;
        r = restart("uid-api-1", 6, 1800000200);
        r.incident = &inc;
        inc.id = first;
        assert_int_equal(krc_store_record(b, &r, NULL, &rid, NULL, &err), 0);
        assert_int_equal(inc.ret_id, first);
        assert_int_equal(inc.ret_restarts, 2);
    }
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM %s.restarts WHERE incident_id IS NULL AND id <= 4", schema);
    assert_int_equal(raw_int(c, sql), 4);
    krc_store_close(b);
    drop_schema(c, schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_concurrent),
        cmocka_unit_test(test_unique_concurrent),
        cmocka_unit_test(test_fence_claim),
        cmocka_unit_test(test_password),
        cmocka_unit_test(test_clusters),
        cmocka_unit_test(test_semantics),
        cmocka_unit_test(test_prune_lock),
        cmocka_unit_test(test_reconnect),
        cmocka_unit_test(test_defer_connect),
        cmocka_unit_test(test_defer_auth_fatal),
        cmocka_unit_test(test_upgrade_pg_v1),
        cmocka_unit_test(test_upgrade_pg_v3),
        cmocka_unit_test(test_incidents_concurrent),
    };
    return cmocka_run_group_tests(tests, setup_pg, NULL);
}
