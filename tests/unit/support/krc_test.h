/* What several unit tests share (tests/unit/support, linked into every unit
 * test as the static library krc_test_support; only what a test calls is
 * pulled in). */
#ifndef KRC_TEST_H
#define KRC_TEST_H

#include <stddef.h>
#include <stdio.h>

#include "krc/alert/policy.h"
#include "krc/alert/sender.h"
#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"

/* The allocation-failure sweep: run(ud, n) for n = 0, 1, 2, ... With n, the
 * scenario sets itself up, calls krc_mem_fail_after(n) right before the code
 * under test (the Nth allocation and every one after it fail), and returns
 * what krc_mem_fail_after(-1) says after it (the allocations attempted),
 * before its own clean-up. The sweep ends with the first run that attempted
 * no more than n, i.e. needed no failing allocation. Returns the number of
 * runs. */
long krc_test_alloc_sweep(long (*run)(void *ud, long n), void *ud);

/* The alert settings the policy, sender and pipeline tests start from: one
 * incoming webhook, a mute of 600 s, no storm threshold, a storm window of
 * 30 s and a first summary after 10 s. */
#define KRC_TEST_MUTE_S 600
#define KRC_TEST_STORM_WINDOW_S 30
#define KRC_TEST_STORM_DELAY_S 10
struct krc_policy krc_test_policy(const char *webhook_url);
struct krc_sender_options krc_test_sender_options(const char *webhook_url);

/* Remove a database file and its -wal, -shm and -delivered companions
 * (missing ones are fine). */
void krc_test_remove_db(const char *path);

/* The whole file at path, NUL-terminated, its size in *len (free() it);
 * NULL if it cannot be opened. A read error fails the test. */
char *krc_test_read_file(const char *path, size_t *len);

/* A new directory /tmp/krc-test-NAME-XXXXXX, its path in dir; krc_test_rmtree
 * removes it with all it holds. A failure fails the test. */
void krc_test_tmpdir(char *dir, size_t size, const char *name);
void krc_test_rmtree(const char *dir);

/* Run main_fn(argc, argv) (a command's main, argv NULL-terminated) with its
 * stdout going to DIR/stdout: what it wrote as an owned string in *out
 * (free()); its exit status returned. */
int krc_test_stdout_of(const char *dir, int (*main_fn)(int, char **), int argc, char **argv,
                       char **out);

/* The text written to f so far (from its start, e.g. a tmpfile() the log goes
 * to), in a static buffer of 32 KiB: what does not fit is left out. */
const char *krc_test_file_text(FILE *f);

/* The group setup and teardown of the tests that make HTTP requests (libcurl's
 * global state: krc_http_global_init and krc_http_global_cleanup). */
int krc_test_http_init(void **state);
int krc_test_http_cleanup(void **state);

/* Whether one of r's notes contains text. */
int krc_test_has_note(const struct krc_report *r, const char *text);

/* The value of one sample of m as /metrics renders it: `series` is the name
 * and labels exactly as written, e.g. krc_x_total{reason="a"}; -1 when there
 * is no such line. A render error fails the test. */
struct krc_metrics;
double krc_test_metric(struct krc_metrics *m, const char *series);

/* Load a corpus case (tests/fixtures/corpus/NAME) the way `krc explain`
 * does: pod.json (required), events.json and node.json (if there), the pod's
 * own events retained, logs.txt as the previous log (if there); then
 * diagnose it. A parse or diagnosis failure fails the test, naming the file.
 * Free with krc_test_unload_case. */
void krc_test_load_case(const char *dir, struct krc_report *r, struct krc_diagnosis *d);
void krc_test_unload_case(struct krc_report *r, struct krc_diagnosis *d);

/* The names of the cases in a corpus directory (those with a pod.json),
 * sorted; free() each and the array. */
size_t krc_test_case_names(const char *corpus, char ***ret);

#endif
