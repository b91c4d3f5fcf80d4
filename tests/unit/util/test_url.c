/* krc_url_mask_password: the one URL-masking function (the cases of the
 * store's, the configuration's and `krc history`'s former copies). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/mem.h"
#include "krc/util/url.h"

static void masked(const char *in, const char *want)
{
    char *got = krc_url_mask_password(in);
    assert_non_null(got);
    assert_string_equal(got, want);
    krc_free(got);
}

/* Not a URL: as it is (SQLite paths, even with ':' and '@'). */
static void test_not_a_url(void **state)
{
    (void)state;
    assert_null(krc_url_mask_password(NULL));
    masked("", "");
    masked("/var/lib/krc/krc.db", "/var/lib/krc/krc.db");
    masked("./a:b@c.db", "./a:b@c.db");
    masked(":memory:", ":memory:");
    masked("postgres:/h", "postgres:/h");
    masked("1x://u:pw@h", "1x://u:pw@h"); /* a scheme starts with a letter */
}

/* The password of the user information. */
static void test_userinfo(void **state)
{
    (void)state;
    masked("postgres://krc:s3cret@db.example:5432/krc", "postgres://krc:****@db.example:5432/krc");
    masked("postgres://krc:hunter2@db:5432/krc", "postgres://krc:****@db:5432/krc");
    masked("postgresql://krc@db/krc", "postgresql://krc@db/krc");
    masked("postgres://krc@db:5432/krc", "postgres://krc@db:5432/krc");
    masked("postgres://db/krc", "postgres://db/krc");
    masked("postgres://krc:@db/krc", "postgres://krc:****@db/krc");
    masked("postgres://krc:x@db", "postgres://krc:****@db");
    masked("postgres://u:pw@[::1]:5432/krc", "postgres://u:****@[::1]:5432/krc");
    masked("postgres://", "postgres://");
    /* unencoded '@' or '/' in the password: masked up to the last '@' */
    masked("postgres://krc:p@ss/w@db/krc?sslmode=require",
           "postgres://krc:****@db/krc?sslmode=require");
    masked("postgresql://krc:p@ss:w0rd@db/krc?sslmode=require",
           "postgresql://krc:****@db/krc?sslmode=require");
    /* any scheme */
    masked("https://user:tok@example.com/x", "https://user:****@example.com/x");
}

/* password= parameters, exactly that key, wherever in the query. */
static void test_query_password(void **state)
{
    (void)state;
    masked("postgres://db/krc?password=pw", "postgres://db/krc?password=****");
    masked("postgres://u@h/d?sslmode=require&password=hunter22&x=1",
           "postgres://u@h/d?sslmode=require&password=****&x=1");
    masked("postgres://db/krc?sslmode=require&password=hunter2&application_name=krc",
           "postgres://db/krc?sslmode=require&password=****&application_name=krc");
    masked("postgres://krc:s3cret@db/krc?sslmode=require&password=other&x=1#frag",
           "postgres://krc:****@db/krc?sslmode=require&password=****&x=1#frag");
    masked("postgres://:x@db?password=y", "postgres://:****@db?password=****");
    masked("postgres://db/krc?password=a&password=b",
           "postgres://db/krc?password=****&password=****");
    masked("postgres://db/krc?passwordx=1&user=u", "postgres://db/krc?passwordx=1&user=u");
    masked("postgres://db/krc?xpassword=1", "postgres://db/krc?xpassword=1");
    masked("postgres://db/krc?password", "postgres://db/krc?password");
}

/* Out of memory: NULL, nothing leaked (cmocka checks the heap). */
static void test_out_of_memory(void **state)
{
    (void)state;
    for (long n = 0; n < 3; n++) {
        char *got;
        krc_mem_fail_after(n);
        got = krc_url_mask_password("postgres://krc:pw@db/krc");
        krc_mem_fail_after(-1);
        if (got != NULL) {
            assert_string_equal(got, "postgres://krc:****@db/krc");
            krc_free(got);
        }
    }
    krc_mem_fail_after(0);
    assert_null(krc_url_mask_password("postgres://krc:pw@db/krc"));
    krc_mem_fail_after(-1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_a_url),
        cmocka_unit_test(test_userinfo),
        cmocka_unit_test(test_query_password),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
