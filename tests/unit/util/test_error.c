/* krc_errno_str: errno's text without strerror's shared buffer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/error.h"

static void test_errno_str(void **state)
{
    char buf[128];
    char tiny[4];
    (void)state;
    assert_ptr_equal(krc_errno_str(ENOENT, buf, sizeof(buf)), buf);
    assert_string_equal(buf, "No such file or directory");
    assert_string_equal(KRC_ERRNO_STR(EACCES), "Permission denied");
    /* too small for the text: cut, still terminated */
    krc_errno_str(ENOENT, tiny, sizeof(tiny));
    assert_int_equal(strlen(tiny), 3);
    assert_string_equal(krc_errno_str(ENOENT, buf, 0), "");
}

static void test_error_set_with_errno(void **state)
{
    struct krc_error e;
    (void)state;
    krc_error_clear(&e);
    assert_int_equal(krc_error_set(&e, KRC_EIO, "%s: cannot open: %s", "/x", KRC_ERRNO_STR(ENOSPC)),
                     KRC_EIO);
    assert_string_equal(e.msg, "/x: cannot open: No space left on device");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errno_str),
        cmocka_unit_test(test_error_set_with_errno),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
