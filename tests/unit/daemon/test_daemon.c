/* Allocation-failure sweep over krc_daemon_run: the Nth allocation and every
 * one after it fail, for every N until a run needs no more, with and without
 * leader election. Each run ends at once: SIGTERM is made pending before the
 * call (blocked in this thread, so the daemon's sigtimedwait takes it). The
 * API server and Slack are unreachable (127.0.0.1 port 1), so the threads
 * fail and retry quickly; a run must only clean up whatever it built: ASan
 * and LeakSanitizer find what it does not. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/config/config.h"
#include "krc/daemon/daemon.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc_test.h"

static char dir[] = "/tmp/krc-test-daemon-XXXXXX";
static char kubeconfig[256];
static char db[256];

static int setup(void **state)
{
    FILE *f;
    (void)state;
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
    snprintf(db, sizeof(db), "%s/krc.db", dir);
    f = fopen(kubeconfig, "w");
    if (f == NULL) {
        return -1;
    }
    fputs("apiVersion: v1\nkind: Config\ncurrent-context: t\n"
          "clusters:\n- name: t\n  cluster:\n    server: https://127.0.0.1:1\n"
          "users:\n- name: t\n  user:\n    token: sweep-token\n"
          "contexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n    namespace: krc\n",
          f);
    fclose(f);
    /* the webhook has no flag (a secret) */
    setenv("SLACK_WEBHOOK_URL", "http://127.0.0.1:1/services/T0/B0/sweep", 1);
    /* thousands of "out of memory" lines otherwise */
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(kubeconfig);
    krc_test_remove_db(db);
    rmdir(dir);
    return 0;
}

/* One krc_daemon_run that SIGTERM ends at once, with allocations failing
 * after fail_after more (< 0: none); returns its exit code and, in
 * *ret_attempts, the allocations it attempted. */
static int run_once(int leader_elect, long fail_after, long *ret_attempts)
{
    char *argv[16] = {"run",         "--kubeconfig",         kubeconfig, "--db", db, "--listen",
                      "127.0.0.1:0", "--watched-namespaces", "shop,web"};
    int argc = 9;
    struct krc_config cfg;
    struct krc_error err;
    char *errors = NULL;
    sigset_t term;
    int rc;

    if (leader_elect) {
        argv[argc++] = "--leader-elect";
        argv[argc++] = "--lease-namespace";
        argv[argc++] = "krc";
    }
    krc_config_init(&cfg);
    krc_error_clear(&err);
    rc = krc_config_from_args(&cfg, argc, argv, &errors, &err);
    if (rc != 0) {
        fprintf(stderr, "config: %s %s\n", errors ? errors : "", err.msg);
    }
    assert_int_equal(rc, 0);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    kill(getpid(), SIGTERM);
    krc_mem_fail_after(fail_after);
    rc = krc_daemon_run(&cfg);
    *ret_attempts = krc_mem_fail_after(-1);
    krc_config_cleanup(&cfg);
    return rc;
}

struct sweep {
    int leader_elect;
    long failed;
};

static long sweep_run(void *ud, long n)
{
    struct sweep *sw = ud;
    long attempts = 0;
    int rc = run_once(sw->leader_elect, n, &attempts);
    assert_true(rc == 0 || rc == 1);
    sw->failed += rc == 1;
    return attempts;
}

static void sweep(int leader_elect)
{
    struct sweep sw = {leader_elect, 0};
    long attempts = 0;
    long runs;
    struct timespec zero = {0, 0};
    sigset_t term;

    /* without injection the run works and stops cleanly on SIGTERM */
    assert_int_equal(run_once(leader_elect, -1, &attempts), 0);
    runs = krc_test_alloc_sweep(sweep_run, &sw);
    fprintf(stderr, "sweep (leader election %s): %ld runs, %ld failed\n",
            leader_elect ? "on" : "off", runs, sw.failed);
    assert_true(runs > 101);
    assert_true(sw.failed > 0);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    while (sigtimedwait(&term, NULL, &zero) == SIGTERM) {
    }
}

static void test_sweep_single(void **state)
{
    (void)state;
    sweep(0);
}

static void test_sweep_leader_elect(void **state)
{
    (void)state;
    sweep(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_single),
        cmocka_unit_test(test_sweep_leader_elect),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
