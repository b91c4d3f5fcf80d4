/* Linked into the unit tests of a cross build only (CMakeLists.txt, when
 * CMAKE_CROSSCOMPILING_EMULATOR is set), with -Wl,--wrap=_cmocka_run_group_tests:
 * leaves out the test cases that $KRC_EMULATOR_SKIP names, because they check
 * what qemu's user-mode emulation does not provide (scripts/test, the arm64
 * stage, lists them with the reason). Entries are PROGRAM/CASE, separated by
 * spaces; each case left out is printed, and an entry naming a case this
 * program does not have fails the run (a renamed test must not be skipped
 * silently by a stale list). Plain calloc/free: krc_malloc's failure injection
 * (the allocation sweeps of the tests) must not reach this list. */
#define _GNU_SOURCE
#include <errno.h> /* program_invocation_short_name */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);

/* Does the space-separated list name PROGRAM/CASE? */
static int listed(const char *list, const char *program, const char *name)
{
    size_t plen = strlen(program);
    size_t nlen = strlen(name);
    const char *p = list;

    while (*p != '\0') {
        size_t len = strcspn(p, " ");

        if (len == plen + 1 + nlen && strncmp(p, program, plen) == 0 && p[plen] == '/' &&
            strncmp(p + plen + 1, name, nlen) == 0) {
            return 1;
        }
        p += len;
        p += strspn(p, " ");
    }
    return 0;
}

/* The entries of the list for PROGRAM that name none of its cases. */
static int stale_entries(const char *list, const char *program, const struct CMUnitTest *tests,
                         size_t num_tests)
{
    size_t plen = strlen(program);
    const char *p = list;
    int stale = 0;

    while (*p != '\0') {
        size_t len = strcspn(p, " ");

        if (len > plen + 1 && strncmp(p, program, plen) == 0 && p[plen] == '/') {
            int found = 0;

            for (size_t i = 0; i < num_tests; i++) {
                if (strlen(tests[i].name) == len - plen - 1 &&
                    strncmp(p + plen + 1, tests[i].name, len - plen - 1) == 0) {
                    found = 1;
                }
            }
            if (!found) {
                fprintf(stderr, "KRC_EMULATOR_SKIP: %.*s: %s has no such test\n", (int)len, p,
                        program);
                stale++;
            }
        }
        p += len;
        p += strspn(p, " ");
    }
    return stale;
}

int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown)
{
    const char *list = getenv("KRC_EMULATOR_SKIP");
    const char *program = program_invocation_short_name;
    struct CMUnitTest *kept;
    size_t n = 0;
    int rc;

    if (list == NULL || *list == '\0') {
        return __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
                                              group_teardown);
    }
    if (stale_entries(list, program, tests, num_tests) != 0) {
        return 1;
    }
    kept = calloc(num_tests == 0 ? 1 : num_tests, sizeof(*kept));
    if (kept == NULL) {
        fprintf(stderr, "KRC_EMULATOR_SKIP: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < num_tests; i++) {
        if (listed(list, program, tests[i].name)) {
            printf("[ SKIPPED  ] %s (KRC_EMULATOR_SKIP: left out under the emulator; scripts/test "
                   "says why)\n",
                   tests[i].name);
        } else {
            kept[n++] = tests[i];
        }
    }
    rc = __real__cmocka_run_group_tests(group_name, kept, n, group_setup, group_teardown);
    free(kept);
    return rc;
}
