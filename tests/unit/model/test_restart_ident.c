/* struct krc_restart_ident: one restart's identity, filled from loose
 * values, cut (and said so) when a value does not fit, a container ID of ""
 * handed on as "none". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "krc/model/report.h"
#include "krc/model/restart_ident.h"

static void test_set_copies_every_field(void **state)
{
    struct krc_restart_ident id;
    (void)state;

    memset(&id, 'x', sizeof(id)); /* whatever was there before goes */
    assert_int_equal(krc_restart_ident_set(&id, "0b5e-uid", "app", 3, 1796239000,
                                           "containerd://0123456789abcdef"),
                     0);
    assert_string_equal(id.uid, "0b5e-uid");
    assert_string_equal(id.container, "app");
    assert_int_equal(id.restart_count, 3);
    assert_int_equal(id.finished_at, 1796239000);
    assert_string_equal(id.container_id, "containerd://0123456789abcdef");
    assert_string_equal(krc_restart_ident_container_id(&id), "containerd://0123456789abcdef");
    assert_true(krc_restart_ident_known(&id));
}

static void test_no_container_id_is_none(void **state)
{
    struct krc_restart_ident id;
    (void)state;

    assert_int_equal(krc_restart_ident_set(&id, "u", "app", 1, 0, NULL), 0);
    assert_string_equal(id.container_id, "");
    assert_null(krc_restart_ident_container_id(&id));
    assert_int_equal(krc_restart_ident_set(&id, "u", "app", 1, 0, ""), 0);
    assert_null(krc_restart_ident_container_id(&id));
}

static void test_unknown_without_uid_or_container(void **state)
{
    struct krc_restart_ident id;
    (void)state;

    (void)krc_restart_ident_set(&id, NULL, NULL, 0, 0, NULL);
    assert_false(krc_restart_ident_known(&id));
    (void)krc_restart_ident_set(&id, "u", NULL, 0, 0, NULL);
    assert_false(krc_restart_ident_known(&id));
    (void)krc_restart_ident_set(&id, NULL, "app", 0, 0, NULL);
    assert_false(krc_restart_ident_known(&id));
}

static void test_too_long_is_cut_and_said(void **state)
{
    struct krc_restart_ident id;
    char uid[KRC_RESTART_IDENT_UID_MAX + 8];
    char cid[KRC_RESTART_IDENT_CONTAINER_ID_MAX];
    (void)state;

    memset(uid, 'a', sizeof(uid) - 1);
    uid[sizeof(uid) - 1] = '\0';
    assert_int_equal(krc_restart_ident_set(&id, uid, "app", 1, 0, NULL), 1);
    assert_int_equal(strlen(id.uid), KRC_RESTART_IDENT_UID_MAX - 1);
    assert_string_equal(id.container, "app"); /* the others are whole */
    /* exactly the room there is: whole */
    memset(cid, 'c', sizeof(cid) - 1);
    cid[sizeof(cid) - 1] = '\0';
    assert_int_equal(krc_restart_ident_set(&id, "u", "app", 1, 5, cid), 0);
    assert_string_equal(id.container_id, cid);
}

/* A restart counts under its workload when both its kind and name are known, else under its
 * pod (a bare pod; an owner not resolved): never a mix of the two. */
static void test_workload_or_pod(void **state)
{
    const char *kind = NULL;
    const char *name = NULL;

    (void)state;
    krc_workload_or_pod("Deployment", "api", "api-7d9-x", &kind, &name);
    assert_string_equal(kind, "Deployment");
    assert_string_equal(name, "api");
    krc_workload_or_pod(NULL, NULL, "solo", &kind, &name);
    assert_string_equal(kind, "Pod");
    assert_string_equal(name, "solo");
    krc_workload_or_pod("ReplicaSet", NULL, "rs-x", &kind, &name);
    assert_string_equal(kind, "Pod");
    assert_string_equal(name, "rs-x");
    krc_workload_or_pod(NULL, "api", "api-y", &kind, &name);
    assert_string_equal(kind, "Pod");
    assert_string_equal(name, "api-y");
    krc_workload_or_pod("", "api", "api-z", &kind, &name);
    assert_string_equal(kind, "Pod");
    assert_string_equal(name, "api-z");
    krc_workload_or_pod("Job", "", "job-1", &kind, &name);
    assert_string_equal(kind, "Pod");
    assert_string_equal(name, "job-1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_copies_every_field),
        cmocka_unit_test(test_workload_or_pod),
        cmocka_unit_test(test_no_container_id_is_none),
        cmocka_unit_test(test_unknown_without_uid_or_container),
        cmocka_unit_test(test_too_long_is_cut_and_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
