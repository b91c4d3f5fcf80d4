/* gnutls_noinit: GnuTLS's load-time initialisations are skipped, later calls
 * reach the real library. This test program is linked like krc: with
 * libmicrohttpd (whose constructor calls gnutls_global_init) and libcurl
 * (which loads GnuTLS through librtmp on Debian). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <microhttpd.h>

#include "krc/util/gnutls_noinit.h"

int gnutls_global_init(void);
void gnutls_global_deinit(void);

static void *gnutls_symbol(const char *name)
{
    void *h = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_NOLOAD);
    void *sym = h != NULL ? dlsym(h, name) : NULL;
    if (h != NULL) {
        dlclose(h);
    }
    return sym;
}

static void test_libraries_loaded_like_krc(void **state)
{
    (void)state;
    /* keep both libraries in the link (--as-needed) */
    assert_non_null(curl_version());
    assert_non_null(MHD_get_version());
    assert_non_null(gnutls_symbol("gnutls_check_version"));
}

static void test_load_time_initialisations_skipped(void **state)
{
    (void)state;
    /* libmicrohttpd's constructor called gnutls_global_init once, and
     * GnuTLS's constructor asked _gnutls_global_init_skip. */
    assert_int_equal(krc_gnutls_noinit_skipped(), 2);
}

static void test_later_calls_reach_gnutls(void **state)
{
    const char *(*check_version)(const char *);
    void *sym = gnutls_symbol("gnutls_check_version");
    (void)state;
    assert_non_null(sym);
    memcpy(&check_version, &sym, sizeof(check_version));
    /* A run-time initialisation is forwarded (returns GnuTLS's 0) and not
     * counted as skipped. */
    assert_int_equal(gnutls_global_init(), 0);
    assert_int_equal(krc_gnutls_noinit_skipped(), 2);
    assert_non_null(check_version(NULL));
    /* The first deinit pairs with libmicrohttpd's skipped init (swallowed),
     * the second with ours (forwarded); libmicrohttpd's destructor at exit
     * then reaches GnuTLS with a count of 0, where deinit does nothing. */
    gnutls_global_deinit();
    gnutls_global_deinit();
    assert_int_equal(gnutls_global_init(), 0);
    gnutls_global_deinit();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libraries_loaded_like_krc),
        cmocka_unit_test(test_load_time_initialisations_skipped),
        cmocka_unit_test(test_later_calls_reach_gnutls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
