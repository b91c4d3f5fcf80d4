/* The pod watch loop against a small in-process API server (plain HTTP):
 * an expired continue token on a LIST page falls back to one full list,
 * as client-go's pager does (issue 12), instead of paging from page 1 again
 * and again; one bad object (over the line limit, or undecodable) in a LIST
 * or a watch stream is skipped, named and counted, and the rest is read
 * (issue 24). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/util/http.h"
#include "krc/serve/http_server.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/watch.h"
#include "krc/util/log.h"
#include "api_fixture.h"
#include "krc_test.h"

#define POD(n)                                                                                     \
    "{\"metadata\":{\"name\":\"p" #n "\",\"namespace\":\"ns\",\"uid\":\"u" #n "\","                \
    "\"resourceVersion\":\"10" #n "\"},\"status\":{\"containerStatuses\":[{\"name\":\"app\","      \
    "\"restartCount\":0}]}}"

struct fake {
    pthread_mutex_t lock;
    int pages;      /* paginated page-1 requests */
    int continues;  /* requests with a continue token */
    int full_lists; /* requests with neither limit nor continue */
    int watches;
    atomic_int *cancel; /* ends a loop that would page from page 1 forever */
};

static int pods_handler(const struct krc_http_server_request *req,
                        struct krc_http_server_response *resp, void *ud)
{
    struct fake *f = ud;
    const char *limit = krc_http_server_request_query(req, "limit");
    const char *cont = krc_http_server_request_query(req, "continue");
    const char *watch = krc_http_server_request_query(req, "watch");
    const char *body;

    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    pthread_mutex_lock(&f->lock);
    if (watch != NULL) {
        f->watches++;
        body = "";
    } else if (cont != NULL) {
        f->continues++;
        resp->status = 410;
        body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
               "\"message\":\"The provided continue parameter is too old to display a "
               "consistent list result.\",\"reason\":\"Expired\",\"code\":410}";
    } else if (limit != NULL) {
        if (++f->pages > 3) {
            atomic_store(f->cancel, 1);
        }
        body = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
               "\"200\",\"continue\":\"tok1\",\"remainingItemCount\":2},\"items\":[" POD(1) "," POD(
                   2) "]}";
    } else {
        f->full_lists++;
        body = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
               "\"300\"},\"items\":[" POD(1) "," POD(2) "," POD(3) "," POD(4) "]}";
    }
    pthread_mutex_unlock(&f->lock);
    return krc_buf_append_str(&resp->body, body) < 0 ? -1 : 0;
}

struct seen {
    atomic_int cancel;
    int syncs;
    int pods;
    char uids[16][8];
};

static void on_sync_begin(void *ud)
{
    (void)ud;
}

static void on_pod(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *ud)
{
    struct seen *s = ud;
    (void)type;
    if (s->pods < 16) {
        snprintf(s->uids[s->pods], sizeof(s->uids[0]), "%s", pod->uid);
    }
    s->pods++;
}

static void on_sync_end(void *ud)
{
    struct seen *s = ud;
    s->syncs++;
    atomic_store(&s->cancel, 1); /* the test is about the list: stop here */
}

static void test_expired_continue_falls_back_to_full_list(void **state)
{
    struct fake f;
    struct seen s;
    struct krc_test_api api;
    struct krc_kube_client *client;
    struct krc_watch_options o;
    struct krc_watch_handler h = {on_sync_begin, on_pod, on_sync_end, &s, NULL};
    struct krc_watch_stats stats;
    struct krc_error e;
    (void)state;

    memset(&f, 0, sizeof(f));
    pthread_mutex_init(&f.lock, NULL);
    memset(&s, 0, sizeof(s));
    memset(&stats, 0, sizeof(stats));
    f.cancel = &s.cancel;
    krc_test_api_new(&api);
    krc_test_api_get(&api, "/api/v1/pods", 0, pods_handler, &f);
    krc_test_api_start(&api, "t");
    client = krc_test_api_client(&api, 0);

    krc_watch_options_defaults(&o);
    o.streaming_list = 0;
    o.page_size = 2;
    o.cancel = &s.cancel;
    o.stats = &stats;
    o.backoff_initial_ms = 10;
    o.backoff_max_ms = 20;
    krc_error_clear(&e);
    assert_int_equal(krc_watch_run(client, &o, &h, &e), 0);

    /* page 1, its continuation expired, then one full list: synced once */
    assert_int_equal(s.syncs, 1);
    assert_int_equal(f.pages, 1);
    assert_int_equal(f.continues, 1);
    assert_int_equal(f.full_lists, 1);
    assert_int_equal(atomic_load(&stats.expired), 1);
    /* the first page's pods were applied, then all four of the full list */
    assert_int_equal(s.pods, 6);
    assert_string_equal(s.uids[5], "u4");

    krc_kube_client_free(client);
    krc_test_api_free(&api);
    pthread_mutex_destroy(&f.lock);
}

/* ---- one bad object -------------------------------------------------- */

#define MAX_LINE 2048

/* A scripted server: one LIST body, then watch bodies in turn; after the
 * last, the loop is cancelled (also at a fourth LIST: a list that fails for
 * good would be retried forever). The resourceVersion of each watch is
 * kept. */
struct script {
    pthread_mutex_t lock;
    const char *list;
    int lists;
    const char *watch[4];
    int n_watch;
    int watches;
    char watch_rv[4][32];
    int first_watch_delay_ms; /* the first watch answers this late */
    atomic_int *cancel;
};

static int script_handler(const struct krc_http_server_request *req,
                          struct krc_http_server_response *resp, void *ud)
{
    struct script *f = ud;
    const char *body = "";
    int delay_ms = 0;

    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    pthread_mutex_lock(&f->lock);
    if (krc_http_server_request_query(req, "watch") == NULL) {
        body = f->list;
        if (++f->lists > 3) {
            atomic_store(f->cancel, 1);
        }
    } else {
        const char *rv = krc_http_server_request_query(req, "resourceVersion");
        if (f->watches < 4) {
            snprintf(f->watch_rv[f->watches], sizeof(f->watch_rv[0]), "%s", rv ? rv : "");
        }
        if (f->watches == 0) {
            delay_ms = f->first_watch_delay_ms;
        }
        if (f->watches < f->n_watch) {
            body = f->watch[f->watches];
        } else {
            atomic_store(f->cancel, 1);
        }
        f->watches++;
    }
    pthread_mutex_unlock(&f->lock);
    if (delay_ms > 0) {
        struct timespec ts = {0, (long)delay_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    return krc_buf_append_str(&resp->body, body) < 0 ? -1 : 0;
}

struct events {
    atomic_int cancel;
    int syncs;
    char seen[1024]; /* "A:p1 M:p2 D:p3 " */
    long long ok_at_sync;
    struct krc_watch_stats *stats;
};

static void ev_sync_begin(void *ud)
{
    (void)ud;
}

static void ev_pod(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *ud)
{
    struct events *s = ud;
    size_t n = strlen(s->seen);
    snprintf(s->seen + n, sizeof(s->seen) - n, "%c:%s ",
             type == KRC_WATCH_ADDED      ? 'A'
             : type == KRC_WATCH_MODIFIED ? 'M'
                                          : 'D',
             pod->name);
}

static void ev_sync_end(void *ud)
{
    struct events *s = ud;
    s->syncs++;
    s->ok_at_sync = atomic_load(&s->stats->last_ok_mono_ms);
}

/* A pod of about `pad` bytes (its annotation), with the API server's order
 * of metadata fields. */
static char *pod_json(const char *name, const char *rv, size_t pad)
{
    char *pad_s = malloc(pad + 1);
    char *out;
    size_t n = pad + 512;

    assert_non_null(pad_s);
    memset(pad_s, 'x', pad);
    pad_s[pad] = '\0';
    out = malloc(n);
    assert_non_null(out);
    snprintf(out, n,
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"uid-%s\","
             "\"resourceVersion\":\"%s\",\"annotations\":{\"pad\":\"%s\"}},\"status\":{"
             "\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":0}]}}",
             name, name, rv, pad_s);
    free(pad_s);
    return out;
}

static char *event_line(const char *type, const char *name, const char *rv, size_t pad)
{
    char *pod = pod_json(name, rv, pad);
    size_t n = strlen(pod) + 64;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "{\"type\":\"%s\",\"object\":%s}\n", type, pod);
    free(pod);
    return out;
}

struct run_env {
    struct krc_test_api api;
    struct krc_kube_client *client;
    FILE *log;
};

static void run_script(struct script *f, struct events *s, struct krc_watch_stats *stats,
                       int streaming, struct run_env *env)
{
    struct krc_watch_options o;
    struct krc_watch_handler h = {ev_sync_begin, ev_pod, ev_sync_end, s, NULL};
    struct krc_error e;

    memset(env, 0, sizeof(*env));
    f->cancel = &s->cancel;
    s->stats = stats;
    krc_test_api_new(&env->api);
    krc_test_api_get(&env->api, "/api/v1/pods", 0, script_handler, f);
    krc_test_api_start(&env->api, "t");
    env->client = krc_test_api_client(&env->api, 0);
    /* the warnings go to a file the test reads */
    env->log = tmpfile();
    assert_non_null(env->log);
    krc_log_setup(KRC_LOG_WARN, KRC_LOG_TEXT, fileno(env->log));

    krc_watch_options_defaults(&o);
    o.streaming_list = streaming;
    o.max_line = MAX_LINE;
    o.cancel = &s->cancel;
    o.stats = stats;
    o.backoff_initial_ms = 10;
    o.backoff_max_ms = 20;
    krc_error_clear(&e);
    assert_int_equal(krc_watch_run(env->client, &o, &h, &e), 0);
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
}

/* The warnings logged during the run. */
static const char *run_log(struct run_env *env)
{
    return krc_test_file_text(env->log);
}

static void run_env_free(struct run_env *env)
{
    fclose(env->log);
    krc_kube_client_free(env->client);
    krc_test_api_free(&env->api);
}

/* A LIST with a pod over the line limit and one that is no pod (no uid):
 * both skipped and named, the others applied, the sync completes (it used
 * to fail, and be retried, forever). */
static void test_list_skips_oversized_and_undecodable_items(void **state)
{
    struct script f;
    struct events s;
    struct krc_watch_stats stats;
    struct run_env env;
    char *p1 = pod_json("p1", "11", 10);
    char *big = pod_json("giant", "12", 3 * MAX_LINE);
    char *p3 = pod_json("p3", "13", 10);
    char *list = malloc(8 * MAX_LINE);
    const char *log;
    (void)state;

    assert_non_null(list);
    snprintf(list, 8 * MAX_LINE,
             "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[%s,%s,"
             "{\"metadata\":{\"name\":\"nouid\",\"namespace\":\"ns\"}},%s]}",
             p1, big, p3);
    memset(&f, 0, sizeof(f));
    pthread_mutex_init(&f.lock, NULL);
    f.list = list;
    memset(&s, 0, sizeof(s));
    memset(&stats, 0, sizeof(stats));
    run_script(&f, &s, &stats, 0, &env);

    pthread_mutex_lock(&f.lock); /* written by the server's threads */
    assert_int_equal(f.lists, 1);
    pthread_mutex_unlock(&f.lock);
    assert_int_equal(s.syncs, 1);
    assert_string_equal(s.seen, "A:p1 A:p3 ");
    assert_int_equal(atomic_load(&stats.skipped_oversized), 1);
    assert_int_equal(atomic_load(&stats.skipped_undecodable), 1);
    assert_int_equal(atomic_load(&stats.malformed_lists), 0);
    /* the watch went on from the list's resourceVersion */
    pthread_mutex_lock(&f.lock);
    assert_string_equal(f.watch_rv[0], "20");
    pthread_mutex_unlock(&f.lock);
    log = run_log(&env);
    assert_non_null(strstr(log, "pod list (all namespaces): skipped items[1], pod ns/giant "
                                "(uid uid-giant, resourceVersion 12): "));
    assert_non_null(strstr(log, "larger than the 2048-byte limit; krc does not know this "
                                "pod's state"));
    assert_non_null(strstr(log, "skipped items[2], pod ns/nouid: undecodable ("));
    assert_non_null(strstr(log, "metadata.uid"));
    run_env_free(&env);
    pthread_mutex_destroy(&f.lock);
    free(p1);
    free(big);
    free(p3);
    free(list);
}

/* A watch stream with an oversized event and a line that is not JSON: both
 * skipped and named, the events around them delivered in the same stream;
 * the resourceVersion moves past the complete oversized event (named in its
 * head), not past the undecodable line; readiness's clock moves only on
 * delivered events. */
static void test_watch_skips_bad_lines_and_goes_on(void **state)
{
    struct script f;
    struct events s;
    struct krc_watch_stats stats;
    struct run_env env;
    char *list = malloc(4096);
    char *m1 = event_line("MODIFIED", "p1", "31", 10);
    char *big = event_line("MODIFIED", "giant", "32", 3 * MAX_LINE);
    char *m3 = event_line("DELETED", "p3", "33", 10);
    char *big2 = event_line("MODIFIED", "giant", "34", 5 * MAX_LINE);
    char *w1 = malloc(16 * MAX_LINE);
    char *w2 = malloc(16 * MAX_LINE);
    const char *log;
    (void)state;

    assert_non_null(list);
    assert_non_null(w1);
    assert_non_null(w2);
    snprintf(list, 4096,
             "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"30\"},"
             "\"items\":[]}");
    /* stream 1: good, oversized, not JSON, good; then the oversized event is
     * the last: the next watch resumes after it (34) */
    snprintf(w1, 16 * MAX_LINE, "%s%s{\"type\":\"MODIFIED\",\"object\":{\"metadata\":\n%s%s", m1,
             big, m3, big2);
    /* stream 2: only lines that do not decode (the stream ends at once:
     * backoff), one naming a resourceVersion, which is not taken */
    snprintf(w2, 16 * MAX_LINE,
             "not json at all\n{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":"
             "\"x\",\"namespace\":\"ns\",\"resourceVersion\":\"99\"}}}\n");
    memset(&f, 0, sizeof(f));
    pthread_mutex_init(&f.lock, NULL);
    f.list = list;
    f.watch[0] = w1;
    f.watch[1] = w2;
    f.n_watch = 2;
    f.first_watch_delay_ms = 20; /* its deliveries come strictly after the sync */
    memset(&s, 0, sizeof(s));
    memset(&stats, 0, sizeof(stats));
    run_script(&f, &s, &stats, 0, &env);

    assert_string_equal(s.seen, "M:p1 D:p3 ");
    assert_int_equal(atomic_load(&stats.skipped_oversized), 2);
    assert_int_equal(atomic_load(&stats.skipped_undecodable), 3);
    assert_int_equal(atomic_load(&stats.events_modified), 1);
    assert_int_equal(atomic_load(&stats.events_deleted), 1);
    /* under the lock: the server's connection threads wrote them (ThreadSanitizer) */
    pthread_mutex_lock(&f.lock);
    assert_int_equal(f.watches, 3);
    assert_string_equal(f.watch_rv[0], "30");
    assert_string_equal(f.watch_rv[1], "34"); /* past the skipped last event */
    assert_string_equal(f.watch_rv[2], "34"); /* not past the undecodable line */
    pthread_mutex_unlock(&f.lock);
    /* delivered events moved readiness's clock, skipped lines did not: the
     * last stream delivered nothing */
    assert_true(atomic_load(&stats.last_ok_mono_ms) > s.ok_at_sync);
    log = run_log(&env);
    assert_non_null(strstr(log, "pod watch (all namespaces): skipped the MODIFIED event of pod "
                                "ns/giant (uid uid-giant, resourceVersion 32): "));
    assert_non_null(strstr(log, "skipped the MODIFIED event of an unknown pod (no "
                                "metadata.name in its first bytes): undecodable (40 bytes): "
                                "watch event: unexpected end of input at offset 40"));
    assert_non_null(strstr(log, "skipped an event (type unknown) of an unknown pod (no "
                                "metadata.name in its first bytes): undecodable (15 bytes)"));
    assert_non_null(strstr(log, "skipped the MODIFIED event of pod ns/x (resourceVersion 99): "
                                "undecodable (94 bytes): "));
    assert_non_null(strstr(log, "the stream goes on"));
    run_env_free(&env);
    pthread_mutex_destroy(&f.lock);
    free(list);
    free(m1);
    free(big);
    free(m3);
    free(big2);
    free(w1);
    free(w2);
}

/* A watch whose every line is skipped delivers nothing: last_ok (what
 * /readyz reads) stays at the sync, though bytes arrived. */
static void test_skipped_lines_are_not_deliveries(void **state)
{
    struct script f;
    struct events s;
    struct krc_watch_stats stats;
    struct run_env env;
    char *big = event_line("MODIFIED", "giant", "41", 3 * MAX_LINE);
    char *w = malloc(8 * MAX_LINE);
    (void)state;

    assert_non_null(w);
    snprintf(w, 8 * MAX_LINE, "%s{\"type\":\"ADDED\"}\n", big);
    memset(&f, 0, sizeof(f));
    pthread_mutex_init(&f.lock, NULL);
    f.list = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"40\"},\"items\":[]}";
    f.watch[0] = w;
    f.watch[1] = w;
    f.n_watch = 2;
    memset(&s, 0, sizeof(s));
    memset(&stats, 0, sizeof(stats));
    run_script(&f, &s, &stats, 0, &env);

    assert_int_equal(s.syncs, 1);
    assert_true(s.ok_at_sync > 0);
    assert_int_equal(atomic_load(&stats.last_ok_mono_ms), s.ok_at_sync);
    assert_true(atomic_load(&stats.bytes) > 6 * MAX_LINE);
    assert_int_equal(atomic_load(&stats.skipped_oversized), 2);
    assert_int_equal(atomic_load(&stats.skipped_undecodable), 2);
    run_env_free(&env);
    pthread_mutex_destroy(&f.lock);
    free(big);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expired_continue_falls_back_to_full_list),
        cmocka_unit_test(test_list_skips_oversized_and_undecodable_items),
        cmocka_unit_test(test_watch_skips_bad_lines_and_goes_on),
        cmocka_unit_test(test_skipped_lines_are_not_deliveries),
    };
    return cmocka_run_group_tests(tests, krc_test_http_init, krc_test_http_cleanup);
}
