/* The store a test runs against (tests/unit/store): SQLite by default, or
 * the PostgreSQL server of KRC_TEST_PG_URL (a postgres:// URL where the test
 * user may CREATE SCHEMA), so that one suite checks both backends.
 * Linked into test_store only. */
#ifndef KRC_TEST_STORE_TARGET_H
#define KRC_TEST_STORE_TARGET_H

#include <stddef.h>

/* 1 when KRC_TEST_PG_URL is set (the tests run on PostgreSQL). */
int test_store_is_pg(void);

/* A fresh, empty target into out: SQLite: a new file path in a private
 * temporary directory; PostgreSQL: KRC_TEST_PG_URL with
 * options=-csearch_path%3Dkrc_t_<pid>_<n> appended, after creating that
 * schema, so that each call is a database of its own. 0, or -1 (with a
 * message on stderr) when it cannot be made. */
int test_store_target(char *out, size_t n);

/* Remove what test_store_target made (the directory, the schemas). */
void test_store_target_cleanup(void);

#endif
