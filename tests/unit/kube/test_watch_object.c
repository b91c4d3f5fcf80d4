/* The list-then-watch loop for other resources than pods (issue 27: the
 * change tracker watches apps/v1 replicasets, v1 nodes, ...), against a
 * small in-process API server (plain HTTP) that answers each request with
 * the next step of a script and records what it was asked: the streaming
 * list and its end marker, a paginated LIST, the namespace scope path, the
 * resourceVersion taken from objects and bookmarks, 410 (in-band and HTTP)
 * and the relist, the metadata-only Accept headers, undecodable objects
 * skipped, bad options refused, a 403 logged once. */
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

#define MAX_STEPS 12
#define MAX_LINE 4096

#define ACCEPT_JSON "application/json"
#define ACCEPT_META_LIST "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#define ACCEPT_META "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

/* ---- the scripted API server -------------------------------------------- */

struct step {
    int status; /* 0: 200 */
    const char *body;
};

/* What one request asked for. */
struct asked {
    char path[160];
    char accept[160];
    int watch;
    char rv[32];    /* resourceVersion */
    char limit[16]; /* limit */
    char cont[32];  /* continue */
    int send_initial;
    char rv_match[32]; /* resourceVersionMatch */
    int bookmarks;     /* allowWatchBookmarks=true */
};

struct fake {
    pthread_mutex_t lock;
    struct step steps[MAX_STEPS];
    int n_steps;
    int n_asked;
    struct asked asked[MAX_STEPS + 4];
    atomic_int *cancel; /* set when the script is done */
};

static int handler(const struct krc_http_server_request *req, struct krc_http_server_response *resp,
                   void *ud)
{
    struct fake *f = ud;
    const char *accept = krc_http_server_request_header(req, "Accept");
    const char *body = "";
    const char *v;
    char tmp[16];

    snprintf(resp->content_type, sizeof(resp->content_type), "application/json");
    pthread_mutex_lock(&f->lock);
    if (f->n_asked < MAX_STEPS + 4) {
        struct asked *a = &f->asked[f->n_asked];
        snprintf(a->path, sizeof(a->path), "%s", req->path);
        snprintf(a->accept, sizeof(a->accept), "%s", accept != NULL ? accept : "");
        a->watch = krc_http_server_request_query(req, "watch") != NULL;
        krc_test_api_query(req, "resourceVersion", "", a->rv, sizeof(a->rv));
        krc_test_api_query(req, "limit", "", a->limit, sizeof(a->limit));
        krc_test_api_query(req, "continue", "", a->cont, sizeof(a->cont));
        krc_test_api_query(req, "resourceVersionMatch", "", a->rv_match, sizeof(a->rv_match));
        krc_test_api_query(req, "sendInitialEvents", "", tmp, sizeof(tmp));
        a->send_initial = strcmp(tmp, "true") == 0;
        v = krc_http_server_request_query(req, "allowWatchBookmarks");
        a->bookmarks = v != NULL && strcmp(v, "true") == 0;
    }
    if (f->n_asked < f->n_steps) {
        if (f->steps[f->n_asked].status != 0) {
            resp->status = f->steps[f->n_asked].status;
        }
        body = f->steps[f->n_asked].body;
    }
    f->n_asked++;
    if (f->n_asked >= f->n_steps) {
        atomic_store(f->cancel, 1); /* the loop ends after this answer */
    }
    pthread_mutex_unlock(&f->lock);
    return krc_buf_append_str(&resp->body, body) < 0 ? -1 : 0;
}

/* ---- what the handler saw ------------------------------------------------- */

struct seen {
    atomic_int cancel;
    int sync_begins;
    int sync_ends;
    int pods;         /* the pod callback: never for another resource */
    char order[1024]; /* "A:rs1 M:rs1 D:rs2 " */
    char *texts[16];  /* each object's JSON text as handed over */
    int n_texts;
};

static void on_sync_begin(void *ud)
{
    struct seen *s = ud;
    s->sync_begins++;
}

static void on_sync_end(void *ud)
{
    struct seen *s = ud;
    s->sync_ends++;
}

static void on_pod(enum krc_watch_event_type type, const struct krc_pod_info *pod, void *ud)
{
    struct seen *s = ud;
    (void)type;
    (void)pod;
    s->pods++;
}

static void on_object(enum krc_watch_event_type type, const char *json, size_t len, void *ud)
{
    struct seen *s = ud;
    const char *name = NULL;
    size_t i;
    size_t n = strlen(s->order);
    size_t name_len = 0;
    static const char key[] = "\"name\":\"";

    /* the first "name" of these test objects is metadata.name */
    for (i = 0; i + sizeof(key) - 1 <= len; i++) {
        if (memcmp(json + i, key, sizeof(key) - 1) == 0) {
            name = json + i + sizeof(key) - 1;
            while (name + name_len < json + len && name[name_len] != '"') {
                name_len++;
            }
            break;
        }
    }
    snprintf(s->order + n, sizeof(s->order) - n, "%c:%.*s ",
             type == KRC_WATCH_ADDED      ? 'A'
             : type == KRC_WATCH_MODIFIED ? 'M'
             : type == KRC_WATCH_DELETED  ? 'D'
                                          : '?',
             (int)name_len, name != NULL ? name : "");
    if (s->n_texts < 16) {
        s->texts[s->n_texts] = malloc(len + 1);
        assert_non_null(s->texts[s->n_texts]);
        memcpy(s->texts[s->n_texts], json, len);
        s->texts[s->n_texts][len] = '\0';
        s->n_texts++;
    }
}

static void seen_free(struct seen *s)
{
    int i;
    for (i = 0; i < s->n_texts; i++) {
        free(s->texts[i]);
    }
}

/* ---- running the loop ------------------------------------------------------ */

/* One run of the loop against a script: the scripted server, what the
 * handler saw, the loop's options, stats and log. */
struct rig {
    struct fake f;
    struct seen s;
    struct krc_watch_options o;
    struct krc_watch_stats stats;
    struct krc_test_api api;
    struct krc_kube_client *client;
    FILE *log;
};

static void options(struct krc_watch_options *o, struct seen *s, struct krc_watch_stats *stats,
                    const char *resource, int streaming)
{
    krc_watch_options_defaults(o);
    o->resource = resource;
    o->streaming_list = streaming;
    o->max_line = MAX_LINE;
    o->cancel = &s->cancel;
    o->stats = stats;
    o->backoff_initial_ms = 5;
    o->backoff_max_ms = 10;
}

/* Options to watch `resource`; the test then writes the script (r->f.steps,
 * r->f.n_steps) and may change the options. */
static void rig_init(struct rig *r, const char *resource, int streaming)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->f.lock, NULL);
    r->f.cancel = &r->s.cancel;
    options(&r->o, &r->s, &r->stats, resource, streaming);
}

/* A loop that never reaches the end of its script (it asks for a path the
 * server does not route, say) is stopped after 10 s; the test then fails on
 * what was asked. */
struct watchdog {
    atomic_int *cancel;
    atomic_int done;
};

static void *watchdog_main(void *arg)
{
    struct watchdog *wd = arg;
    int i;

    for (i = 0; i < 1000 && !atomic_load(&wd->done); i++) {
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    atomic_store(wd->cancel, 1);
    return NULL;
}

/* Serve the script at `path` and run the loop until the script is done; its
 * messages at `level` and above go to a file the test reads (rig_log). */
static void rig_run(struct rig *r, const char *path, enum krc_log_level level)
{
    struct krc_watch_handler h = {on_sync_begin, on_pod, on_sync_end, &r->s, on_object};
    struct krc_error e;
    struct watchdog wd;
    pthread_t t;

    krc_test_api_new(&r->api);
    krc_test_api_get(&r->api, path, 1024 * 1024, handler, &r->f);
    krc_test_api_start(&r->api, "t");
    r->client = krc_test_api_client(&r->api, 0);
    r->log = tmpfile();
    assert_non_null(r->log);
    wd.cancel = &r->s.cancel;
    atomic_init(&wd.done, 0);
    assert_int_equal(pthread_create(&t, NULL, watchdog_main, &wd), 0);
    krc_error_clear(&e);
    krc_log_setup(level, KRC_LOG_TEXT, fileno(r->log));
    assert_int_equal(krc_watch_run(r->client, &r->o, &h, &e), 0);
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    atomic_store(&wd.done, 1);
    pthread_join(t, NULL);
}

static const char *rig_log(struct rig *r)
{
    return krc_test_file_text(r->log);
}

static void rig_free(struct rig *r)
{
    fclose(r->log);
    krc_kube_client_free(r->client);
    krc_test_api_free(&r->api);
    pthread_mutex_destroy(&r->f.lock);
    seen_free(&r->s);
}

/* The request i, read under the lock (the server's threads wrote it). */
static struct asked asked(struct fake *f, int i)
{
    struct asked a;
    pthread_mutex_lock(&f->lock);
    assert_true(i < f->n_asked);
    a = f->asked[i];
    pthread_mutex_unlock(&f->lock);
    return a;
}

static int n_asked(struct fake *f)
{
    int n;
    pthread_mutex_lock(&f->lock);
    n = f->n_asked;
    pthread_mutex_unlock(&f->lock);
    return n;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    const char *p = hay;
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

/* ---- objects ------------------------------------------------------------- */

#define RS(name, rv)                                                                               \
    "{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"" name           \
    "\",\"namespace\":\"shop\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"" rv                 \
    "\",\"labels\":{\"pod-template-hash\":\"5d9c\"}},\"spec\":{\"replicas\":3,\"template\":{"      \
    "\"spec\":{\"containers\":[{\"name\":\"api\",\"image\":\"api:1.4.3\"}]}}},\"status\":{"        \
    "\"replicas\":3,\"readyReplicas\":3}}"

#define NODE(name, rv)                                                                             \
    "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name                      \
    "\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"" rv                                        \
    "\"},\"status\":{\"nodeInfo\":{\"kubeletVersion\":"                                            \
    "\"v1.33.1\"}}}"

#define META(name, rv)                                                                             \
    "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{"         \
    "\"name\":\"" name "\",\"namespace\":\"shop\",\"uid\":\"uid-" name                             \
    "\",\"resourceVersion\":\"" rv "\",\"managedFields\":[{\"manager\":\"kubectl\","               \
    "\"operation\":\"Update\",\"time\":\"2026-12-06T03:52:00Z\",\"fieldsType\":\"FieldsV1\","      \
    "\"fieldsV1\":{\"f:data\":{\".\":{}}}}]}}"

#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"

#define BOOKMARK(rv)                                                                               \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\","       \
    "\"metadata\":{\"resourceVersion\":\"" rv "\"}}}\n"

#define BOOKMARK_END(rv)                                                                           \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\","       \
    "\"metadata\":{\"resourceVersion\":\"" rv "\",\"annotations\":{"                               \
    "\"k8s.io/initial-events-end\":\"true\"}}}}\n"

#define LIST(kind, rv, cont, items)                                                                \
    "{\"kind\":\"" kind "\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv         \
    "\"" cont "},\"items\":[" items "]}"

#define EXPIRED                                                                                    \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","           \
    "\"message\":\"too old resource version: 60 (65)\",\"reason\":\"Expired\",\"code\":410}"

/* ---- tests ---------------------------------------------------------------- */

/* A streaming list of ReplicaSets ends at its marker bookmark; the watch
 * resumes from the marker's resourceVersion, then from an ordinary
 * bookmark's, then from an object's; each object is handed over as its own
 * JSON text (also when "object" comes before "type"), the pod callback is
 * never used. */
static void test_streaming_list_and_bookmarks(void **state)
{
    struct rig r;
    struct asked a;
    (void)state;

    rig_init(&r, "apis/apps/v1/replicasets", 1);
    /* the initial burst is not ordered by resourceVersion: only the marker's counts */
    r.f.steps[0].body = EV("ADDED", RS("rs1", "9")) EV("ADDED", RS("rs2", "7")) BOOKMARK_END("10");
    r.f.steps[1].body = EV("MODIFIED", RS("rs1", "11")) BOOKMARK("15");
    r.f.steps[2].body = "{\"object\":" RS("rs2", "16") ",\"type\":\"DELETED\"}\n";
    r.f.steps[3].body = "";
    r.f.n_steps = 4;
    rig_run(&r, "/apis/apps/v1/replicasets", KRC_LOG_INFO);

    assert_int_equal(n_asked(&r.f), 4);
    a = asked(&r.f, 0);
    assert_string_equal(a.path, "/apis/apps/v1/replicasets");
    assert_true(a.watch);
    assert_true(a.send_initial);
    assert_true(a.bookmarks);
    assert_string_equal(a.rv_match, "NotOlderThan");
    assert_string_equal(a.accept, ACCEPT_JSON);
    a = asked(&r.f, 1);
    assert_string_equal(a.path, "/apis/apps/v1/replicasets");
    assert_false(a.send_initial);
    assert_true(a.bookmarks);
    assert_string_equal(a.rv, "10");              /* the end marker's */
    assert_string_equal(asked(&r.f, 2).rv, "15"); /* the ordinary bookmark's */
    assert_string_equal(asked(&r.f, 3).rv, "16"); /* the deleted object's */

    assert_int_equal(r.s.sync_begins, 1);
    assert_int_equal(r.s.sync_ends, 1);
    assert_int_equal(r.s.pods, 0);
    assert_string_equal(r.s.order, "A:rs1 A:rs2 M:rs1 D:rs2 ");
    assert_int_equal(r.s.n_texts, 4);
    assert_string_equal(r.s.texts[0], RS("rs1", "9"));
    assert_string_equal(r.s.texts[2], RS("rs1", "11"));
    assert_string_equal(r.s.texts[3], RS("rs2", "16"));
    assert_int_equal(atomic_load(&r.stats.events_added), 2);
    assert_int_equal(atomic_load(&r.stats.events_modified), 1);
    assert_int_equal(atomic_load(&r.stats.events_deleted), 1);
    assert_int_equal(atomic_load(&r.stats.events_bookmark), 2);
    assert_int_equal(atomic_load(&r.stats.synced), 1);
    assert_true(atomic_load(&r.stats.last_ok_mono_ms) > 0);
    assert_non_null(strstr(rig_log(&r), "apps/v1 replicasets sync complete (streaming list, "
                                        "all namespaces) at resourceVersion 10"));
    rig_free(&r);
}

/* A paginated LIST in one namespace (the scope path
 * /apis/apps/v1/namespaces/shop/replicasets), then the watch from the
 * list's resourceVersion and from a bookmark's. */
static void test_paginated_list_in_a_namespace(void **state)
{
    struct rig r;
    struct asked a;
    int i;
    (void)state;

    rig_init(&r, "apis/apps/v1/replicasets", 0);
    r.f.steps[0].body =
        LIST("ReplicaSetList", "39", ",\"continue\":\"tok1\"", RS("rs1", "31") "," RS("rs2", "32"));
    r.f.steps[1].body = LIST("ReplicaSetList", "40", "", RS("rs3", "33"));
    r.f.steps[2].body = EV("ADDED", RS("rs4", "41")) BOOKMARK("45");
    r.f.steps[3].body = "";
    r.f.n_steps = 4;
    r.o.namespace = "shop";
    r.o.page_size = 2;
    rig_run(&r, "/apis/apps/v1/namespaces/shop/replicasets", KRC_LOG_INFO);

    assert_int_equal(n_asked(&r.f), 4);
    for (i = 0; i < 4; i++) {
        a = asked(&r.f, i);
        assert_string_equal(a.path, "/apis/apps/v1/namespaces/shop/replicasets");
        assert_string_equal(a.accept, ACCEPT_JSON);
    }
    a = asked(&r.f, 0);
    assert_false(a.watch);
    assert_string_equal(a.limit, "2");
    assert_string_equal(a.cont, "");
    a = asked(&r.f, 1);
    assert_false(a.watch);
    assert_string_equal(a.limit, "2");
    assert_string_equal(a.cont, "tok1");
    a = asked(&r.f, 2);
    assert_true(a.watch);
    assert_string_equal(a.rv, "40"); /* the last page's */
    assert_string_equal(asked(&r.f, 3).rv, "45");

    assert_int_equal(r.s.sync_begins, 1);
    assert_int_equal(r.s.sync_ends, 1);
    assert_int_equal(r.s.pods, 0);
    assert_string_equal(r.s.order, "A:rs1 A:rs2 A:rs3 A:rs4 ");
    assert_string_equal(r.s.texts[1], RS("rs2", "32"));
    assert_string_equal(r.s.texts[3], RS("rs4", "41"));
    assert_non_null(strstr(rig_log(&r), "apps/v1 replicasets sync complete (list, shop): 3 "
                                        "objects in 2 pages, resourceVersion 40"));
    rig_free(&r);
}

/* metadata_only: the LIST asks for a PartialObjectMetadataList, the watch
 * and the streaming list for PartialObjectMetadata; the objects are handed
 * over as they came. */
static void test_metadata_only_accept(void **state)
{
    struct rig r;
    struct asked a;
    (void)state;

    /* LIST, then watch */
    rig_init(&r, "api/v1/configmaps", 0);
    r.f.steps[0].body = LIST("PartialObjectMetadataList", "50", "", META("cm1", "48"));
    r.f.steps[1].body = EV("MODIFIED", META("cm1", "51"));
    r.f.steps[2].body = "";
    r.f.n_steps = 3;
    r.o.namespace = "shop";
    r.o.metadata_only = 1;
    rig_run(&r, "/api/v1/namespaces/shop/configmaps", KRC_LOG_WARN);
    assert_int_equal(n_asked(&r.f), 3);
    a = asked(&r.f, 0);
    assert_false(a.watch);
    assert_string_equal(a.path, "/api/v1/namespaces/shop/configmaps");
    assert_string_equal(a.accept, ACCEPT_META_LIST);
    a = asked(&r.f, 1);
    assert_true(a.watch);
    assert_string_equal(a.rv, "50");
    assert_string_equal(a.accept, ACCEPT_META);
    assert_string_equal(asked(&r.f, 2).rv, "51");
    assert_string_equal(r.s.order, "A:cm1 M:cm1 ");
    assert_string_equal(r.s.texts[0], META("cm1", "48"));
    assert_string_equal(r.s.texts[1], META("cm1", "51"));
    rig_free(&r);

    /* the streaming list is a watch: PartialObjectMetadata */
    rig_init(&r, "api/v1/configmaps", 1);
    r.f.steps[0].body = EV("ADDED", META("cm2", "60")) BOOKMARK_END("61");
    r.f.steps[1].body = "";
    r.f.n_steps = 2;
    r.o.namespace = "shop";
    r.o.metadata_only = 1;
    rig_run(&r, "/api/v1/namespaces/shop/configmaps", KRC_LOG_WARN);
    assert_int_equal(n_asked(&r.f), 2);
    a = asked(&r.f, 0);
    assert_true(a.send_initial);
    assert_string_equal(a.accept, ACCEPT_META);
    a = asked(&r.f, 1);
    assert_string_equal(a.rv, "61");
    assert_string_equal(a.accept, ACCEPT_META);
    assert_string_equal(r.s.order, "A:cm2 ");
    assert_int_equal(r.s.sync_ends, 1);
    rig_free(&r);
}

/* Nodes (cluster-scoped): a 410 ERROR event in the watch and a 410 answer
 * to a watch request each bring a relist, and the watch goes on from the
 * new list's resourceVersion. */
static void test_expired_relists(void **state)
{
    struct rig r;
    (void)state;

    rig_init(&r, "api/v1/nodes", 0);
    r.f.steps[0].body = LIST("NodeList", "60", "", NODE("node-a", "55"));
    r.f.steps[1].body = EV("MODIFIED", NODE("node-a", "62")) EV("ERROR", EXPIRED);
    r.f.steps[2].body = LIST("NodeList", "70", "", NODE("node-a", "62") "," NODE("node-b", "66"));
    r.f.steps[3].status = 410;
    r.f.steps[3].body = EXPIRED;
    r.f.steps[4].body = LIST("NodeList", "80", "", NODE("node-b", "66"));
    r.f.steps[5].body = "";
    r.f.n_steps = 6;
    rig_run(&r, "/api/v1/nodes", KRC_LOG_INFO);

    assert_int_equal(n_asked(&r.f), 6);
    assert_string_equal(asked(&r.f, 0).path, "/api/v1/nodes");
    assert_false(asked(&r.f, 0).watch);
    assert_string_equal(asked(&r.f, 1).rv, "60");
    assert_false(asked(&r.f, 2).watch); /* the relist */
    assert_string_equal(asked(&r.f, 3).rv, "70");
    assert_false(asked(&r.f, 4).watch); /* the relist */
    assert_string_equal(asked(&r.f, 5).rv, "80");
    assert_string_equal(asked(&r.f, 5).path, "/api/v1/nodes");
    assert_int_equal(r.s.sync_begins, 3);
    assert_int_equal(r.s.sync_ends, 3);
    assert_string_equal(r.s.order, "A:node-a M:node-a A:node-a A:node-b A:node-b ");
    assert_int_equal(atomic_load(&r.stats.expired), 2);
    assert_int_equal(atomic_load(&r.stats.relists), 2);
    assert_int_equal(atomic_load(&r.stats.events_error), 1);
    assert_non_null(strstr(rig_log(&r), "v1 nodes watch (all namespaces): watch expired: too "
                                        "old resource version: 60 (65); relisting"));
    rig_free(&r);
}

/* Objects that do not decode (no metadata.name, not an object, bad JSON)
 * or are over the line limit are skipped, named as objects and counted; the
 * list and the stream go on, and the resourceVersion moves past a complete
 * oversized event, not past an undecodable one. */
static void test_undecodable_objects_skipped(void **state)
{
    static char big[3 * MAX_LINE];
    static char watch[6 * MAX_LINE];
    struct rig r;
    const char *log;
    (void)state;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    /* good, good, oversized (complete), no name, not an object, bad JSON */
    snprintf(watch, sizeof(watch),
             "%s%s"
             "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"giant\",\"namespace\":"
             "\"shop\",\"uid\":\"uid-giant\",\"resourceVersion\":\"36\"},\"pad\":\"%s\"}}\n"
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"shop\","
             "\"resourceVersion\":\"37\"}}}\n"
             "{\"type\":\"ADDED\",\"object\":[1,2]}\n"
             "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"bad\",\"namespace\":"
             "\"shop\",\"resourceVersion\":\"38\"},\"spec\":[1,]}}\n",
             EV("MODIFIED", RS("rs1", "34")), EV("MODIFIED", RS("rs3", "35")), big);
    rig_init(&r, "apis/apps/v1/replicasets", 0);
    r.f.steps[0].body =
        LIST("ReplicaSetList", "30", "",
             RS("rs1", "21") ",{\"metadata\":{\"namespace\":\"shop\"}}," RS("rs3", "23"));
    r.f.steps[1].body = watch;
    r.f.steps[2].body = "";
    r.f.n_steps = 3;
    rig_run(&r, "/apis/apps/v1/replicasets", KRC_LOG_WARN);

    assert_int_equal(n_asked(&r.f), 3);
    assert_string_equal(r.s.order, "A:rs1 A:rs3 M:rs1 M:rs3 ");
    assert_int_equal(r.s.sync_ends, 1);
    assert_int_equal(atomic_load(&r.stats.skipped_undecodable), 4);
    assert_int_equal(atomic_load(&r.stats.skipped_oversized), 1);
    assert_int_equal(atomic_load(&r.stats.malformed_lists), 0);
    assert_string_equal(asked(&r.f, 1).rv, "30");
    /* past the complete oversized event (36), not past the undecodable ones */
    assert_string_equal(asked(&r.f, 2).rv, "36");
    log = rig_log(&r);
    assert_non_null(strstr(log, "apps/v1 replicasets list (all namespaces): skipped items[1], "
                                "an unknown object (no metadata.name in its first bytes): "
                                "undecodable ("));
    assert_non_null(strstr(log, "object: metadata.name missing"));
    assert_non_null(strstr(log, "skipped the ADDED event of an unknown object (no metadata.name "
                                "in its first bytes): undecodable (31 bytes): watch event: "
                                "expected an object, got array at offset 25"));
    assert_non_null(strstr(log, "apps/v1 replicasets watch (all namespaces): skipped the "
                                "MODIFIED event of object shop/bad (resourceVersion 38): "
                                "undecodable"));
    assert_non_null(strstr(log, "watch event: object: metadata.name missing"));
    assert_non_null(strstr(log, "skipped the MODIFIED event of object shop/giant (uid "
                                "uid-giant, resourceVersion 36): "));
    assert_non_null(strstr(log, "krc does not know this object's state until a version of it "
                                "within the limit arrives"));
    rig_free(&r);
}

/* A 403 is logged once as a warning, the retries that follow only at
 * debug level; the watch goes on when the permission comes. */
static void test_forbidden_logged_once(void **state)
{
    static const char forbidden[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"replicasets.apps is forbidden: User \\\"system:serviceaccount:krc:krc\\\" "
        "cannot list resource \\\"replicasets\\\" in API group \\\"apps\\\" at the cluster "
        "scope\",\"reason\":\"Forbidden\",\"details\":{\"group\":\"apps\",\"kind\":"
        "\"replicasets\"},\"code\":403}";
    struct rig r;
    const char *log;
    int i;
    (void)state;

    rig_init(&r, "apis/apps/v1/replicasets", 0);
    for (i = 0; i < 3; i++) { /* refused three times, then allowed */
        r.f.steps[i].status = 403;
        r.f.steps[i].body = forbidden;
    }
    r.f.steps[3].body = LIST("ReplicaSetList", "90", "", RS("rs1", "88"));
    r.f.steps[4].body = "";
    r.f.n_steps = 5;
    rig_run(&r, "/apis/apps/v1/replicasets", KRC_LOG_INFO);

    assert_int_equal(n_asked(&r.f), 5);
    assert_string_equal(asked(&r.f, 4).rv, "90");
    assert_int_equal(r.s.sync_ends, 1);
    assert_int_equal(atomic_load(&r.stats.request_errors), 3);
    log = rig_log(&r);
    assert_int_equal(count(log, " failed: "), 1);
    assert_int_equal(count(log, "cannot list replicasets at cluster scope"), 1);
    assert_non_null(strstr(log, " warn  apps/v1 replicasets list (all namespaces) failed: "));
    assert_null(strstr(log, " error "));
    rig_free(&r);
}

/* Options the loop cannot work with end it at once, named. */
static void test_bad_options(void **state)
{
    static const char *const bad[] = {
        "/api/v1/nodes",
        "apis/apps/replicasets",
        "api/v1",
        "apis/apps/v1/replicasets/",
        "apis/apps//v1/x",
        "api/v1/nodes?watch=1",
        "apps/v1/deployments",
        "",
    };
    struct krc_kube_auth_config ac;
    struct krc_token_source *ts;
    struct krc_kube_client *client;
    struct krc_watch_options o;
    struct krc_watch_handler h = {on_sync_begin, on_pod, on_sync_end, NULL, on_object};
    struct seen s;
    struct krc_error e;
    size_t i;
    (void)state;

    memset(&s, 0, sizeof(s));
    h.userdata = &s;
    memset(&ac, 0, sizeof(ac));
    ac.server = "http://127.0.0.1:9"; /* never asked */
    ac.token = (char *)"t";
    ac.source = (char *)"test";
    ts = krc_token_source_new("t", NULL, 0);
    assert_non_null(ts);
    krc_error_clear(&e);
    client = krc_kube_client_new(&ac, ts, &e);
    assert_non_null(client);

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        options(&o, &s, NULL, bad[i], 0);
        krc_error_clear(&e);
        assert_int_equal(krc_watch_run(client, &o, &h, &e), KRC_EINVAL);
        assert_non_null(strstr(e.msg, "is not a collection path like"));
        assert_non_null(strstr(e.msg, bad[i]));
    }
    options(&o, &s, NULL, "apis/apps/v1/replicasets", 0);
    h.object = NULL;
    krc_error_clear(&e);
    assert_int_equal(krc_watch_run(client, &o, &h, &e), KRC_EINVAL);
    assert_string_equal(e.msg, "watch of apis/apps/v1/replicasets: no object callback");
    h.object = on_object;
    options(&o, &s, NULL, NULL, 0);
    o.metadata_only = 1;
    krc_error_clear(&e);
    assert_int_equal(krc_watch_run(client, &o, &h, &e), KRC_EINVAL);
    assert_non_null(strstr(e.msg, "metadata_only"));
    assert_int_equal(s.sync_begins, 0);
    krc_kube_client_free(client);
    krc_token_source_free(ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streaming_list_and_bookmarks),
        cmocka_unit_test(test_paginated_list_in_a_namespace),
        cmocka_unit_test(test_metadata_only_accept),
        cmocka_unit_test(test_expired_relists),
        cmocka_unit_test(test_undecodable_objects_skipped),
        cmocka_unit_test(test_forbidden_logged_once),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, krc_test_http_init, krc_test_http_cleanup);
}
