/* The pod watch loop against a small in-process API server (plain HTTP):
 * an expired continue token on a LIST page falls back to one full list,
 * as client-go's pager does (issue 12), instead of paging from page 1 again
 * and again. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/http.h"
#include "krc/serve/http_server.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/kube/watch.h"

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
    struct krc_http_server_config sc;
    struct krc_http_server *srv = NULL;
    struct krc_kube_auth_config ac;
    struct krc_token_source *ts;
    struct krc_kube_client *client;
    struct krc_watch_options o;
    struct krc_watch_handler h = {on_sync_begin, on_pod, on_sync_end, &s};
    struct krc_watch_stats stats;
    struct krc_error e;
    char server[64];
    (void)state;

    memset(&f, 0, sizeof(f));
    pthread_mutex_init(&f.lock, NULL);
    memset(&s, 0, sizeof(s));
    memset(&stats, 0, sizeof(stats));
    f.cancel = &s.cancel;
    memset(&sc, 0, sizeof(sc));
    sc.listen = "127.0.0.1:0";
    krc_error_clear(&e);
    assert_int_equal(krc_http_server_new(&sc, &srv, &e), 0);
    assert_int_equal(
        krc_http_server_route(srv, "/api/v1/pods", KRC_HTTP_METHOD_GET, 0, 0, pods_handler, &f, &e),
        0);
    assert_int_equal(krc_http_server_start(srv, &e), 0);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", krc_http_server_port(srv));

    memset(&ac, 0, sizeof(ac));
    ac.server = server;
    ac.token = (char *)"t";
    ac.source = (char *)"test";
    ts = krc_token_source_new("t", NULL, 0);
    assert_non_null(ts);
    client = krc_kube_client_new(&ac, ts, &e);
    assert_non_null(client);

    krc_watch_options_defaults(&o);
    o.streaming_list = 0;
    o.page_size = 2;
    o.cancel = &s.cancel;
    o.stats = &stats;
    o.backoff_initial_ms = 10;
    o.backoff_max_ms = 20;
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
    krc_token_source_free(ts);
    krc_http_server_stop(srv);
    krc_http_server_free(srv);
    pthread_mutex_destroy(&f.lock);
}

static int group_setup(void **state)
{
    (void)state;
    return krc_http_global_init(NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    krc_http_global_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expired_continue_falls_back_to_full_list),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
