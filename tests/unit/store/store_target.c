/* tests/unit/store/store_target.h. libpq only when the build found it
 * (KRC_TEST_HAVE_LIBPQ): without it, KRC_TEST_PG_URL is refused. */
#include "store_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef KRC_TEST_HAVE_LIBPQ
#include <libpq-fe.h>
#endif

static char dir[256];
static unsigned counter;
/* krc_t_<pid>_<dropped + 1> .. krc_t_<pid>_<schemas> may exist */
static unsigned schemas;
static unsigned dropped;

int test_store_is_pg(void)
{
    const char *url = getenv("KRC_TEST_PG_URL");
    return url != NULL && url[0] != '\0';
}

#ifdef KRC_TEST_HAVE_LIBPQ
static void quiet(void *arg, const char *message)
{
    (void)arg, (void)message; /* NOTICEs such as "drop cascades to ..." */
}

/* Run one statement on the server of `url`; 0 or -1 with the server's
 * message on stderr. */
static int pg_exec(const char *url, const char *sql)
{
    PGconn *c = PQconnectdb(url);
    PGresult *r;
    int rc = -1;

    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "store_target: KRC_TEST_PG_URL: cannot connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    PQsetNoticeProcessor(c, quiet, NULL);
    r = PQexec(c, sql);
    if (PQresultStatus(r) == PGRES_COMMAND_OK) {
        rc = 0;
    } else {
        fprintf(stderr, "store_target: %s: %s", sql, PQerrorMessage(c));
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}
#endif

static int pg_target(char *out, size_t n)
{
#ifdef KRC_TEST_HAVE_LIBPQ
    const char *url = getenv("KRC_TEST_PG_URL");
    char schema[64];
    char sql[128];
    int len;

    snprintf(schema, sizeof(schema), "krc_t_%ld_%u", (long)getpid(), ++counter);
    snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
    if (pg_exec(url, sql) < 0) {
        return -1;
    }
    schemas = counter;
    /* libpq's URI syntax: options is a connection parameter; '=' inside a
     * value is percent-encoded */
    len = snprintf(out, n, "%s%soptions=-csearch_path%%3D%s", url,
                   strchr(url, '?') != NULL ? "&" : "?", schema);
    if (len < 0 || (size_t)len >= n) {
        fprintf(stderr, "store_target: KRC_TEST_PG_URL is too long\n");
        return -1;
    }
    return 0;
#else
    (void)out, (void)n;
    fprintf(stderr, "store_target: KRC_TEST_PG_URL is set but this test was built without "
                    "libpq (pkg-config libpq found nothing)\n");
    return -1;
#endif
}

int test_store_target(char *out, size_t n)
{
    int len;

    if (test_store_is_pg()) {
        return pg_target(out, n);
    }
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/krc-test-target-XXXXXX");
        if (mkdtemp(dir) == NULL) {
            dir[0] = '\0';
            perror("store_target: mkdtemp");
            return -1;
        }
    }
    len = snprintf(out, n, "%s/t%u.db", dir, ++counter);
    return len > 0 && (size_t)len < n ? 0 : -1;
}

void test_store_target_cleanup(void)
{
    if (dir[0] != '\0') {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0) {
            fprintf(stderr, "store_target: could not remove %s\n", dir);
        }
        dir[0] = '\0';
    }
#ifdef KRC_TEST_HAVE_LIBPQ
    for (unsigned i = dropped + 1; i <= schemas && test_store_is_pg(); i++) {
        char sql[128];
        snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS krc_t_%ld_%u CASCADE", (long)getpid(), i);
        (void)pg_exec(getenv("KRC_TEST_PG_URL"), sql);
    }
    dropped = schemas;
#endif
}
