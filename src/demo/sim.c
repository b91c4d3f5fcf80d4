/* The `krc demo` simulated cluster: Kubernetes API + Slack webhook on
 * 127.0.0.1 (see sim.h). libmicrohttpd, one thread per connection: a watch
 * stream's content callback waits on a condition variable for changes. */
#include "krc/demo/sim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define MAX_BODY (1024 * 1024)
#define MAX_OBJECTS 4096
#define BOOKMARK_EVERY_MS 5000
#define WATCH_POLL_MS 200
#define PAGE_DEFAULT 500

struct sim_pod {
    char *ns;
    char *name;
    char *json; /* with its resourceVersion */
    char *log;  /* previous instance's log, or NULL */
    int64_t log_ended;
};

/* An object of a resource other than pods and nodes (change tracking's). */
struct sim_obj {
    enum krc_demo_resource res;
    char *ns; /* "" for a cluster-scoped one */
    char *name;
    char *json; /* with its resourceVersion */
};

struct sim_change {
    long rv;
    enum krc_demo_resource res; /* NONE: a pod */
    char *ns;
    char *line;      /* {"type":...,"object":...}\n */
    char *meta_line; /* the same with the object's PartialObjectMetadata (not pods) */
};

struct krc_demo_sim {
    struct MHD_Daemon *daemon;
    int port;
    char *token;
    krc_demo_sim_message_fn on_message;
    krc_demo_sim_kube_event_fn on_kube_event;
    krc_demo_sim_note_fn note_for;
    void *userdata;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    atomic_int stopping;
    atomic_int watchers;
    long rv;
    struct sim_pod *pods;
    size_t n_pods;
    char **nodes; /* node JSON texts */
    char **node_names;
    size_t n_nodes;
    cJSON **events;
    size_t n_events;
    cJSON **kube_events; /* created events.k8s.io/v1 Events (under msg_lock) */
    size_t n_kube_events;
    struct sim_obj *objs;
    size_t n_objs;
    atomic_int listed; /* bit res: a whole list of res was served */
    struct sim_change *changes;
    size_t n_changes;
    pthread_mutex_t msg_lock;
    struct krc_demo_msg *msgs;
    size_t n_msgs;
    int64_t last_msg_mono_ms;
};

/* --- responses ------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, const char *ctype,
                               const char *body, size_t len)
{
    /* clang-tidy: the cast only drops const (-Wcast-qual); MUST_COPY never writes to it */
    /* NOLINTNEXTLINE(performance-no-int-to-ptr) */
    void *data = (void *)(uintptr_t)body;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    if (r == NULL) {
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond_json(struct MHD_Connection *conn, unsigned status, const char *json)
{
    return respond(conn, status, "application/json", json, strlen(json));
}

/* A v1 Status, as kube-apiserver answers a failure. */
static enum MHD_Result status_fail(struct MHD_Connection *conn, unsigned code, const char *reason,
                                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result status_fail(struct MHD_Connection *conn, unsigned code, const char *reason,
                                   const char *fmt, ...)
{
    char msg[1024];
    struct krc_buf b;
    enum MHD_Result ret = MHD_NO;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    krc_buf_init(&b, 8192);
    if (krc_buf_append_str(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"") == 0 &&
        krc_buf_append_json_str(&b, msg, strlen(msg)) == 0 &&
        krc_buf_printf(&b, "\",\"reason\":\"%s\",\"code\":%u}", reason, code) == 0) {
        ret = respond_json(conn, code, krc_buf_str(&b));
    }
    krc_buf_cleanup(&b);
    return ret;
}

static const char *arg(struct MHD_Connection *conn, const char *key)
{
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

static int arg_true(struct MHD_Connection *conn, const char *key)
{
    const char *v = arg(conn, key);
    return v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

/* A non-negative integer argument; -1 when absent, -2 when malformed. */
static long arg_long(struct MHD_Connection *conn, const char *key)
{
    const char *v = arg(conn, key);
    char *end;
    long n;

    if (v == NULL) {
        return -1;
    }
    errno = 0;
    n = strtol(v, &end, 10);
    return (errno != 0 || end == v || *end != '\0' || n < 0) ? -2 : n;
}

/* --- state ------------------------------------------------------------------ */

static struct sim_pod *find_pod(struct krc_demo_sim *s, const char *ns, const char *name)
{
    for (size_t i = 0; i < s->n_pods; i++) {
        if (strcmp(s->pods[i].ns, ns) == 0 && strcmp(s->pods[i].name, name) == 0) {
            return &s->pods[i];
        }
    }
    return NULL;
}

/* Stamp a new resourceVersion into the object's metadata; the text or NULL. */
static char *stamp(cJSON *obj, long rv)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    char num[32];

    snprintf(num, sizeof(num), "%ld", rv);
    if (m == NULL || !cJSON_ReplaceItemInObject(m, "resourceVersion", cJSON_CreateString(num))) {
        return NULL;
    }
    return cJSON_PrintUnformatted(obj);
}

static int add_change(struct krc_demo_sim *s, enum krc_demo_resource res, const char *type,
                      const char *ns, const char *json)
{
    struct krc_buf b;
    struct sim_change *grown;
    char *meta = NULL;

    if (s->n_changes >= MAX_OBJECTS) {
        return KRC_ETOOBIG;
    }
    grown = krc_realloc(s->changes, (s->n_changes + 1) * sizeof(*grown));
    if (grown == NULL) {
        return KRC_ENOMEM;
    }
    s->changes = grown;
    krc_buf_init(&b, (size_t)64 << 20);
    if (krc_buf_printf(&b, "{\"type\":\"%s\",\"object\":%s}\n", type, json) < 0) {
        krc_buf_cleanup(&b);
        return KRC_ENOMEM;
    }
    grown[s->n_changes].rv = s->rv;
    grown[s->n_changes].res = res;
    grown[s->n_changes].ns = krc_strdup(ns);
    grown[s->n_changes].line = krc_buf_take(&b);
    grown[s->n_changes].meta_line = NULL;
    if (res != KRC_DEMO_RES_NONE && (meta = krc_demo_partial_metadata(json)) != NULL &&
        krc_buf_printf(&b, "{\"type\":\"%s\",\"object\":%s}\n", type, meta) == 0) {
        grown[s->n_changes].meta_line = krc_buf_take(&b);
    }
    cJSON_free(meta);
    krc_buf_cleanup(&b);
    if (grown[s->n_changes].ns == NULL || grown[s->n_changes].line == NULL ||
        (res != KRC_DEMO_RES_NONE && grown[s->n_changes].meta_line == NULL)) {
        krc_free(grown[s->n_changes].ns);
        krc_free(grown[s->n_changes].line);
        krc_free(grown[s->n_changes].meta_line);
        return KRC_ENOMEM;
    }
    s->n_changes++;
    return 0;
}

/* arr (n elements of size bytes) with room for one more, zeroed, at the
 * end; NULL with *rc KRC_ETOOBIG past MAX_OBJECTS or KRC_ENOMEM (arr kept). */
static void *grow(void *arr, size_t n, size_t size, int *rc)
{
    char *grown;

    if (n >= MAX_OBJECTS) {
        *rc = KRC_ETOOBIG;
        return NULL;
    }
    grown = krc_realloc(arr, (n + 1) * size);
    if (grown == NULL) {
        *rc = KRC_ENOMEM;
        return NULL;
    }
    memset(grown + n * size, 0, size);
    return grown;
}

/* Copies of an object's namespace and name; KRC_ENOMEM keeps neither. */
static int copy_names(char **ns_out, char **name_out, const char *ns, const char *name)
{
    *ns_out = krc_strdup(ns);
    *name_out = krc_strdup(name);
    if (*ns_out == NULL || *name_out == NULL) {
        krc_free(*ns_out);
        krc_free(*name_out);
        *ns_out = *name_out = NULL;
        return KRC_ENOMEM;
    }
    return 0;
}

static int put_pod_locked(struct krc_demo_sim *s, cJSON *pod, const char *log, int64_t ended)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
    struct sim_pod *p;
    char *json;
    char *log_copy = NULL;
    int added = 0;

    if (ns == NULL || name == NULL) {
        return KRC_EINVAL;
    }
    p = find_pod(s, ns, name);
    if (p == NULL) {
        int rc = 0;
        struct sim_pod *grown = grow(s->pods, s->n_pods, sizeof(*grown), &rc);

        if (grown == NULL) {
            return rc;
        }
        s->pods = grown;
        p = &grown[s->n_pods];
        if (copy_names(&p->ns, &p->name, ns, name) < 0) {
            return KRC_ENOMEM;
        }
        s->n_pods++;
        added = 1;
    }
    json = stamp(pod, s->rv + 1);
    if (json == NULL || (log != NULL && (log_copy = krc_strdup(log)) == NULL)) {
        krc_free(json);
        return KRC_ENOMEM;
    }
    s->rv++;
    if (add_change(s, KRC_DEMO_RES_NONE, added ? "ADDED" : "MODIFIED", ns, json) < 0) {
        krc_free(json);
        krc_free(log_copy);
        return KRC_ENOMEM;
    }
    krc_free(p->json);
    krc_free(p->log);
    p->json = json;
    p->log = log_copy;
    p->log_ended = ended;
    return 0;
}

int krc_demo_sim_put_pod(struct krc_demo_sim *s, cJSON *pod, const char *previous_log,
                         int64_t log_ended)
{
    int rc;

    if (pod == NULL) {
        return KRC_ENOMEM;
    }
    pthread_mutex_lock(&s->lock);
    rc = put_pod_locked(s, pod, previous_log, log_ended);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    cJSON_Delete(pod);
    return rc;
}

static int put_node_locked(struct krc_demo_sim *s, cJSON *node)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(node, "metadata"), "name"));
    char *json;
    size_t i;
    int added;

    if (name == NULL) {
        return KRC_EINVAL;
    }
    for (i = 0; i < s->n_nodes && strcmp(s->node_names[i], name) != 0; i++) {
    }
    added = i == s->n_nodes;
    if (i == s->n_nodes) {
        char **a = krc_realloc(s->nodes, (i + 1) * sizeof(*a));
        char **b = a != NULL ? krc_realloc(s->node_names, (i + 1) * sizeof(*b)) : NULL;
        if (a != NULL) {
            s->nodes = a;
        }
        if (b == NULL || i >= MAX_OBJECTS) {
            return KRC_ENOMEM;
        }
        s->node_names = b;
        s->nodes[i] = NULL;
        s->node_names[i] = krc_strdup(name);
        if (s->node_names[i] == NULL) {
            return KRC_ENOMEM;
        }
        s->n_nodes++;
    }
    json = stamp(node, s->rv + 1);
    if (json == NULL) {
        return KRC_ENOMEM;
    }
    s->rv++;
    if (add_change(s, KRC_DEMO_RES_NODES, added ? "ADDED" : "MODIFIED", "", json) < 0) {
        krc_free(json);
        return KRC_ENOMEM;
    }
    krc_free(s->nodes[i]);
    s->nodes[i] = json;
    return 0;
}

int krc_demo_sim_put_node(struct krc_demo_sim *s, cJSON *node)
{
    int rc;

    if (node == NULL) {
        return KRC_ENOMEM;
    }
    pthread_mutex_lock(&s->lock);
    rc = put_node_locked(s, node);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    cJSON_Delete(node);
    return rc;
}

static struct sim_obj *find_obj(struct krc_demo_sim *s, enum krc_demo_resource res, const char *ns,
                                const char *name)
{
    for (size_t i = 0; i < s->n_objs; i++) {
        if (s->objs[i].res == res && strcmp(s->objs[i].ns, ns) == 0 &&
            strcmp(s->objs[i].name, name) == 0) {
            return &s->objs[i];
        }
    }
    return NULL;
}

static int put_object_locked(struct krc_demo_sim *s, enum krc_demo_resource res, cJSON *obj)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
    const struct krc_demo_resource_info *ri = krc_demo_resource_info(res);
    struct sim_obj *o;
    char *json;
    int added = 0;

    if (ri == NULL || res == KRC_DEMO_RES_NODES || name == NULL || (ri->namespaced && ns == NULL)) {
        return KRC_EINVAL;
    }
    o = find_obj(s, res, ns != NULL ? ns : "", name);
    if (o == NULL) {
        int rc = 0;
        struct sim_obj *grown = grow(s->objs, s->n_objs, sizeof(*grown), &rc);

        if (grown == NULL) {
            return rc;
        }
        s->objs = grown;
        o = &grown[s->n_objs];
        o->res = res;
        if (copy_names(&o->ns, &o->name, ns != NULL ? ns : "", name) < 0) {
            return KRC_ENOMEM;
        }
        s->n_objs++;
        added = 1;
    }
    json = stamp(obj, s->rv + 1);
    if (json == NULL) {
        return KRC_ENOMEM;
    }
    s->rv++;
    if (add_change(s, res, added ? "ADDED" : "MODIFIED", o->ns, json) < 0) {
        krc_free(json);
        return KRC_ENOMEM;
    }
    krc_free(o->json);
    o->json = json;
    return 0;
}

int krc_demo_sim_put_object(struct krc_demo_sim *s, enum krc_demo_resource res, cJSON *obj)
{
    int rc;

    if (obj == NULL) {
        return KRC_ENOMEM;
    }
    pthread_mutex_lock(&s->lock);
    rc = put_object_locked(s, res, obj);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    cJSON_Delete(obj);
    return rc;
}

/* metadata.namespace and metadata.name of an object ("" when absent). */
static const char *meta_str(const cJSON *o, const char *key)
{
    const char *v = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), key));
    return v != NULL ? v : "";
}

/* The index of the stored event with event's namespace and name, or -1. */
static long find_event(const struct krc_demo_sim *s, const cJSON *event)
{
    const char *ns = meta_str(event, "namespace");
    const char *name = meta_str(event, "name");

    for (size_t i = 0; i < s->n_events; i++) {
        if (strcmp(meta_str(s->events[i], "name"), name) == 0 &&
            strcmp(meta_str(s->events[i], "namespace"), ns) == 0) {
            return (long)i;
        }
    }
    return -1;
}

int krc_demo_sim_add_event(struct krc_demo_sim *s, cJSON *event)
{
    cJSON **grown = NULL;
    char num[32];
    long same;
    int rc = 0;

    if (event == NULL) {
        return KRC_ENOMEM;
    }
    pthread_mutex_lock(&s->lock);
    same = find_event(s, event);
    if (same < 0) {
        grown = s->n_events < MAX_OBJECTS
                    ? krc_realloc(s->events, (s->n_events + 1) * sizeof(*grown))
                    : NULL;
        if (grown != NULL) {
            s->events = grown;
        }
    }
    snprintf(num, sizeof(num), "%ld", s->rv + 1);
    if ((same < 0 && grown == NULL) ||
        !cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(event, "metadata"),
                                   "resourceVersion", cJSON_CreateString(num))) {
        cJSON_Delete(event);
        rc = KRC_ENOMEM;
    } else if (same >= 0) {
        /* the same event again (the recorder's count and lastTimestamp grew) */
        cJSON_Delete(s->events[same]);
        s->events[same] = event;
        s->rv++;
    } else {
        s->events[s->n_events++] = event;
        s->rv++;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int krc_demo_sim_watchers(struct krc_demo_sim *s)
{
    return atomic_load(&s->watchers);
}

int krc_demo_sim_listed_resources(struct krc_demo_sim *s)
{
    unsigned bits = (unsigned)atomic_load(&s->listed);
    int n = 0;

    for (; bits != 0; bits &= bits - 1) {
        n++;
    }
    return n;
}

static void mark_listed(struct krc_demo_sim *s, enum krc_demo_resource res)
{
    if (res != KRC_DEMO_RES_NONE) {
        atomic_fetch_or(&s->listed, 1 << res);
    }
}

size_t krc_demo_sim_message_count(struct krc_demo_sim *s, int64_t *ret_last_mono_ms)
{
    size_t n;

    pthread_mutex_lock(&s->msg_lock);
    n = s->n_msgs;
    if (ret_last_mono_ms != NULL) {
        *ret_last_mono_ms = s->last_msg_mono_ms;
    }
    pthread_mutex_unlock(&s->msg_lock);
    return n;
}

const struct krc_demo_msg *krc_demo_sim_messages(const struct krc_demo_sim *s, size_t *ret_n)
{
    *ret_n = s->n_msgs;
    return s->msgs;
}

/* --- the resources of change tracking ------------------------------------------- */

/* What the Accept header asks of a LIST or OBJECT route (krc_demo_accept_meta);
 * the pod routes serve whole objects. */
static int accept_meta(struct MHD_Connection *conn, const struct krc_demo_route *r)
{
    if (r->kind != KRC_DEMO_ROUTE_LIST && r->kind != KRC_DEMO_ROUTE_OBJECT) {
        return 0;
    }
    return krc_demo_accept_meta(
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
}

static enum MHD_Result not_acceptable(struct MHD_Connection *conn, const struct krc_demo_route *r,
                                      int list);

/* --- watch streams ------------------------------------------------------------ */

struct watch {
    struct krc_demo_sim *s;
    enum krc_demo_resource res; /* NONE: pods */
    int meta;                   /* objects as PartialObjectMetadata */
    char ns[254];
    long rv;          /* events after this one */
    size_t next;      /* the next change to look at */
    int64_t deadline; /* monotonic ms: timeoutSeconds */
    int64_t last_sent;
    struct krc_buf out;
    size_t off;
};

/* The kind and apiVersion of a watch's objects (bookmarks included). */
static void watch_kind(const struct watch *w, const char **kind, const char **api)
{
    const struct krc_demo_resource_info *ri = krc_demo_resource_info(w->res);

    *kind = w->meta ? "PartialObjectMetadata" : ri != NULL ? ri->kind : "Pod";
    *api = w->meta ? "meta.k8s.io/v1" : ri != NULL ? ri->api_version : "v1";
}

static int watch_bookmark(struct watch *w, long rv, int initial_end)
{
    const char *kind;
    const char *api;

    watch_kind(w, &kind, &api);
    return krc_buf_printf(&w->out,
                          "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":"
                          "\"%s\",\"metadata\":{\"resourceVersion\":\"%ld\"%s}}}\n",
                          kind, api, rv,
                          initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"
                                      : "");
}

/* One initial ADDED event of the object text json (converted for a metadata
 * watch). */
static int watch_added(struct watch *w, const char *json)
{
    char *meta = w->meta ? krc_demo_partial_metadata(json) : NULL;
    int rc;

    if (w->meta && meta == NULL) {
        return KRC_ENOMEM;
    }
    rc = krc_buf_printf(&w->out, "{\"type\":\"ADDED\",\"object\":%s}\n", w->meta ? meta : json);
    cJSON_free(meta);
    return rc;
}

/* Under the lock: the initial ADDED events of every object in scope. */
static int watch_initial(struct watch *w)
{
    struct krc_demo_sim *s = w->s;

    for (size_t i = 0; w->res == KRC_DEMO_RES_NONE && i < s->n_pods; i++) {
        if ((w->ns[0] == '\0' || strcmp(w->ns, s->pods[i].ns) == 0) &&
            watch_added(w, s->pods[i].json) < 0) {
            return KRC_ENOMEM;
        }
    }
    for (size_t i = 0; w->res == KRC_DEMO_RES_NODES && i < s->n_nodes; i++) {
        if (watch_added(w, s->nodes[i]) < 0) {
            return KRC_ENOMEM;
        }
    }
    for (size_t i = 0; i < s->n_objs; i++) {
        if (s->objs[i].res == w->res && (w->ns[0] == '\0' || strcmp(w->ns, s->objs[i].ns) == 0) &&
            watch_added(w, s->objs[i].json) < 0) {
            return KRC_ENOMEM;
        }
    }
    w->rv = s->rv;
    w->next = s->n_changes;
    return 0;
}

/* Under the lock: the changes since w->next in scope. */
static int watch_collect(struct watch *w)
{
    struct krc_demo_sim *s = w->s;

    for (; w->next < s->n_changes; w->next++) {
        const struct sim_change *c = &s->changes[w->next];
        if (c->rv <= w->rv || c->res != w->res || (w->ns[0] != '\0' && strcmp(w->ns, c->ns) != 0)) {
            continue;
        }
        if (krc_buf_append_str(&w->out, w->meta ? c->meta_line : c->line) < 0) {
            return KRC_ENOMEM;
        }
        w->rv = c->rv;
    }
    return 0;
}

static int64_t timespec_after_ms(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
    return ms;
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct watch *w = cls;
    size_t n;

    (void)pos;
    while (w->off >= w->out.len) {
        struct timespec ts;
        int64_t now = krc_clock_mono_ms();
        int rc;

        krc_buf_reset(&w->out);
        w->off = 0;
        if (atomic_load(&w->s->stopping) || now >= w->deadline) {
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        pthread_mutex_lock(&w->s->lock);
        rc = watch_collect(w);
        if (rc == 0 && w->out.len == 0) {
            if (now - w->last_sent >= BOOKMARK_EVERY_MS) {
                rc = watch_bookmark(w, w->s->rv > w->rv ? w->rv : w->s->rv, 0);
            } else {
                timespec_after_ms(&ts, WATCH_POLL_MS);
                pthread_cond_timedwait(&w->s->changed, &w->s->lock, &ts);
            }
        }
        pthread_mutex_unlock(&w->s->lock);
        if (rc < 0) {
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    n = w->out.len - w->off < max ? w->out.len - w->off : max;
    memcpy(buf, w->out.data + w->off, n);
    w->off += n;
    w->last_sent = krc_clock_mono_ms();
    return (ssize_t)n;
}

static void watch_free(void *cls)
{
    struct watch *w = cls;

    if (w->res == KRC_DEMO_RES_NONE) {
        atomic_fetch_sub(&w->s->watchers, 1);
    }
    krc_buf_cleanup(&w->out);
    krc_free(w);
}

static enum MHD_Result serve_watch(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                   const struct krc_demo_route *r)
{
    const char *rv = arg(conn, "resourceVersion");
    long timeout = arg_long(conn, "timeoutSeconds");
    int initial = arg_true(conn, "sendInitialEvents");
    int meta = accept_meta(conn, r);
    struct watch *w;
    struct MHD_Response *resp;
    enum MHD_Result ret;
    int rc = 0;

    if (timeout == -2) {
        return status_fail(conn, 400, "BadRequest", "invalid timeoutSeconds");
    }
    /* resourceVersion may be absent or "" (the latest) with sendInitialEvents */
    if (initial &&
        (!arg_true(conn, "allowWatchBookmarks") ||
         strcmp(arg(conn, "resourceVersionMatch") ? arg(conn, "resourceVersionMatch") : "",
                "NotOlderThan") != 0)) {
        return status_fail(conn, 422, "Invalid",
                           "sendInitialEvents requires allowWatchBookmarks=true and "
                           "resourceVersionMatch=NotOlderThan");
    }
    if (meta == 2 || meta == KRC_EINVAL) {
        return not_acceptable(conn, r, 0);
    }
    w = krc_calloc(1, sizeof(*w));
    if (w == NULL) {
        return MHD_NO;
    }
    w->s = s;
    w->res = r->kind == KRC_DEMO_ROUTE_LIST ? r->res : KRC_DEMO_RES_NONE;
    w->meta = meta == 1;
    snprintf(w->ns, sizeof(w->ns), "%s", r->ns);
    krc_buf_init(&w->out, (size_t)256 << 20);
    w->deadline = krc_clock_mono_ms() + (timeout > 0 ? timeout : 1800) * 1000;
    w->last_sent = krc_clock_mono_ms();
    if (w->res == KRC_DEMO_RES_NONE) {
        atomic_fetch_add(&s->watchers, 1);
    }
    pthread_mutex_lock(&s->lock);
    if (initial || rv == NULL || strcmp(rv, "") == 0 || strcmp(rv, "0") == 0) {
        rc = watch_initial(w);
        if (rc == 0 && initial) {
            rc = watch_bookmark(w, w->rv, 1);
        }
        if (rc == 0 && initial) {
            mark_listed(s, w->res);
        }
    } else {
        char *end;
        w->rv = strtol(rv, &end, 10);
        if (*end != '\0' || w->rv < 0) {
            rc = KRC_EINVAL;
        }
    }
    pthread_mutex_unlock(&s->lock);
    resp = rc == 0 ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, watch_read, w,
                                                       watch_free)
                   : NULL;
    if (resp == NULL) {
        watch_free(w);
        return rc == KRC_EINVAL
                   ? status_fail(conn, 400, "BadRequest", "invalid resourceVersion \"%s\"", rv)
                   : MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    ret = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* --- GET handlers ------------------------------------------------------------- */

/* 406 as the API server words a conversion it cannot do for this request. */
static enum MHD_Result not_acceptable(struct MHD_Connection *conn, const struct krc_demo_route *r,
                                      int list)
{
    const struct krc_demo_resource_info *ri = krc_demo_resource_info(r->res);

    return status_fail(conn, 406, "NotAcceptable",
                       "only the object, or its metadata as=PartialObjectMetadata%s;g=meta.k8s.io;"
                       "v=v1 (application/json), is served for %s %s",
                       list ? "List" : "", ri != NULL ? ri->api_version : "v1",
                       ri != NULL ? ri->plural : "pods");
}

/* A label or field selector on a resource of change tracking: krc's
 * tracking asks for none, and this server filters none (400 rather than
 * an unfiltered answer). */
static int selector_refused(struct MHD_Connection *conn, const struct krc_demo_route *r,
                            enum MHD_Result *ret)
{
    static const char *const keys[] = {"labelSelector", "fieldSelector"};

    for (size_t k = 0; k < 2; k++) {
        const char *v = arg(conn, keys[k]);
        if (v != NULL && v[0] != '\0') {
            *ret = status_fail(conn, 400, "BadRequest",
                               "the krc demo server does not filter %s by %s (\"%s\")",
                               krc_demo_resource_info(r->res)->plural, keys[k], v);
            return 1;
        }
    }
    return 0;
}

/* The index i of the objects of resource res in scope (nodes: the node
 * texts), its text in *json; 0 when there is none. */
static int nth_in_scope(const struct krc_demo_sim *s, const struct krc_demo_route *r, size_t i,
                        const char **json)
{
    if (r->res == KRC_DEMO_RES_NODES) {
        if (i >= s->n_nodes) {
            return 0;
        }
        *json = s->nodes[i];
        return 1;
    }
    if (i >= s->n_objs) {
        return 0;
    }
    *json = s->objs[i].res == r->res && (r->ns[0] == '\0' || strcmp(r->ns, s->objs[i].ns) == 0)
                ? s->objs[i].json
                : NULL;
    return 1;
}

/* LIST of a resource of change tracking (limit/continue as the pods'). */
static enum MHD_Result serve_list(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                  const struct krc_demo_route *r)
{
    const struct krc_demo_resource_info *ri = krc_demo_resource_info(r->res);
    int meta = accept_meta(conn, r);
    long limit = arg_long(conn, "limit");
    const char *cont = arg(conn, "continue");
    long from = 0;
    long count = 0;
    struct krc_buf items;
    struct krc_buf b;
    enum MHD_Result ret = MHD_NO;
    const char *json;
    int rc = 0;
    int more = 0;
    size_t i;

    if (meta == 1 || meta == KRC_EINVAL) {
        return not_acceptable(conn, r, 1);
    }
    if (limit == -2 || (cont != NULL && (from = strtol(cont, NULL, 10)) <= 0)) {
        return status_fail(conn, 400, "BadRequest", "invalid limit or continue token");
    }
    krc_buf_init(&items, (size_t)256 << 20);
    krc_buf_init(&b, (size_t)256 << 20);
    pthread_mutex_lock(&s->lock);
    for (i = (size_t)from; rc == 0 && nth_in_scope(s, r, i, &json); i++) {
        char *m;
        if (json == NULL) {
            continue;
        }
        if (limit > 0 && count == limit) {
            more = 1;
            break;
        }
        m = meta == 2 ? krc_demo_partial_metadata(json) : NULL;
        rc = meta == 2 && m == NULL
                 ? KRC_ENOMEM
                 : krc_buf_printf(&items, "%s%s", count == 0 ? "" : ",", m != NULL ? m : json);
        cJSON_free(m);
        count++;
    }
    if (rc == 0) {
        rc = krc_buf_printf(&b,
                            "{\"kind\":\"%s%s\",\"apiVersion\":\"%s\",\"metadata\":"
                            "{\"resourceVersion\":\"%ld\"",
                            meta == 2 ? "PartialObjectMetadata" : ri->kind, "List",
                            meta == 2 ? "meta.k8s.io/v1" : ri->api_version, s->rv);
    }
    if (rc == 0 && more) {
        rc = krc_buf_printf(&b, ",\"continue\":\"%zu\"", i);
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == 0 && !more) {
        mark_listed(s, r->res);
    }
    if (rc == 0 && krc_buf_printf(&b, "},\"items\":[%s]}", krc_buf_str(&items)) == 0) {
        ret = respond_json(conn, 200, krc_buf_str(&b));
    }
    krc_buf_cleanup(&items);
    krc_buf_cleanup(&b);
    return ret;
}

/* GET of one object of a resource of change tracking. */
static enum MHD_Result serve_object(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                    const struct krc_demo_route *r)
{
    const struct krc_demo_resource_info *ri = krc_demo_resource_info(r->res);
    int meta = accept_meta(conn, r);
    const struct sim_obj *o;
    char *text = NULL;
    enum MHD_Result ret;

    if (meta == 2 || meta == KRC_EINVAL) {
        return not_acceptable(conn, r, 0);
    }
    pthread_mutex_lock(&s->lock);
    o = find_obj(s, r->res, r->ns, r->name);
    if (o != NULL) {
        text = meta == 1 ? krc_demo_partial_metadata(o->json) : krc_strdup(o->json);
    }
    pthread_mutex_unlock(&s->lock);
    if (o == NULL) {
        return status_fail(conn, 404, "NotFound", "%s.%.*s \"%s\" not found", ri->plural,
                           (int)strcspn(ri->api_version, "/"), ri->api_version, r->name);
    }
    if (text == NULL) {
        return MHD_NO;
    }
    ret = respond_json(conn, 200, text);
    if (meta == 1) {
        cJSON_free(text);
    } else {
        krc_free(text);
    }
    return ret;
}

static enum MHD_Result serve_pod_list(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                      const struct krc_demo_route *r)
{
    long limit = arg_long(conn, "limit");
    const char *cont = arg(conn, "continue");
    long from = 0;
    long count = 0;
    struct krc_buf items;
    struct krc_buf b;
    enum MHD_Result ret = MHD_NO;
    int rc = 0;
    size_t i;
    long rv;

    /* continue: the index where the next page starts (pods are never removed) */
    if (limit == -2 || (cont != NULL && (from = strtol(cont, NULL, 10)) <= 0)) {
        return status_fail(conn, 400, "BadRequest", "invalid limit or continue token");
    }
    krc_buf_init(&items, (size_t)256 << 20);
    krc_buf_init(&b, (size_t)256 << 20);
    pthread_mutex_lock(&s->lock);
    rv = s->rv;
    for (i = (size_t)from; rc == 0 && i < s->n_pods; i++) {
        if (r->ns[0] != '\0' && strcmp(r->ns, s->pods[i].ns) != 0) {
            continue;
        }
        if (limit > 0 && count == limit) {
            break;
        }
        rc = krc_buf_printf(&items, "%s%s", count == 0 ? "" : ",", s->pods[i].json);
        count++;
    }
    rc = rc == 0 ? krc_buf_printf(&b,
                                  "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                                  "{\"resourceVersion\":\"%ld\"",
                                  rv)
                 : rc;
    if (rc == 0 && i < s->n_pods) {
        rc = krc_buf_printf(&b, ",\"continue\":\"%zu\"", i);
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == 0 && krc_buf_printf(&b, "},\"items\":[%s]}", krc_buf_str(&items)) == 0) {
        ret = respond_json(conn, 200, krc_buf_str(&b));
    }
    krc_buf_cleanup(&items);
    krc_buf_cleanup(&b);
    return ret;
}

static enum MHD_Result serve_events(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                    const struct krc_demo_route *r)
{
    const char *sel = arg(conn, "fieldSelector");
    struct krc_buf b;
    enum MHD_Result ret = MHD_NO;
    char bad[128] = "";
    int rc;
    int first = 1;

    krc_buf_init(&b, (size_t)256 << 20);
    pthread_mutex_lock(&s->lock);
    rc = krc_buf_printf(&b,
                        "{\"kind\":\"EventList\",\"apiVersion\":\"v1\",\"metadata\":"
                        "{\"resourceVersion\":\"%ld\"},\"items\":[",
                        s->rv);
    for (size_t i = 0; rc == 0 && i < s->n_events; i++) {
        const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(s->events[i], "metadata"), "namespace"));
        int m = krc_demo_field_selector_match(sel, s->events[i], bad, sizeof(bad));
        char *json;
        if (m < 0) {
            rc = m;
            break;
        }
        if (m == 0 || (r->ns[0] != '\0' && (ns == NULL || strcmp(ns, r->ns) != 0))) {
            continue;
        }
        json = cJSON_PrintUnformatted(s->events[i]);
        rc = json != NULL ? krc_buf_printf(&b, "%s%s", first ? "" : ",", json) : KRC_ENOMEM;
        cJSON_free(json);
        first = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == KRC_EINVAL) {
        ret = status_fail(conn, 400, "BadRequest",
                          "unable to parse requirement: field label not supported: %s", bad);
    } else if (rc == 0 && krc_buf_append_str(&b, "]}") == 0) {
        ret = respond_json(conn, 200, krc_buf_str(&b));
    }
    krc_buf_cleanup(&b);
    return ret;
}

static enum MHD_Result serve_node(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                  const char *name)
{
    char *json = NULL;
    enum MHD_Result ret;

    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (strcmp(s->node_names[i], name) == 0) {
            json = krc_strdup(s->nodes[i]);
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (json == NULL) {
        return status_fail(conn, 404, "NotFound", "nodes \"%s\" not found", name);
    }
    ret = respond_json(conn, 200, json);
    krc_free(json);
    return ret;
}

static enum MHD_Result serve_pod(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                 const struct krc_demo_route *r)
{
    struct sim_pod *p;
    char *json = NULL;
    enum MHD_Result ret;

    pthread_mutex_lock(&s->lock);
    p = find_pod(s, r->ns, r->name);
    if (p != NULL) {
        json = krc_strdup(p->json);
    }
    pthread_mutex_unlock(&s->lock);
    if (json == NULL) {
        return p == NULL ? status_fail(conn, 404, "NotFound", "pods \"%s\" not found", r->name)
                         : MHD_NO;
    }
    ret = respond_json(conn, 200, json);
    krc_free(json);
    return ret;
}

/* Whether the pod's spec has a container `name` (regular or init). */
static int pod_has_container(const char *pod_json, const char *name)
{
    cJSON *pod = cJSON_Parse(pod_json);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    static const char *const lists[] = {"containers", "initContainers"};
    int found = 0;

    for (size_t k = 0; k < 2 && !found; k++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[k]))
        {
            const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name"));
            found |= n != NULL && strcmp(n, name) == 0;
        }
    }
    cJSON_Delete(pod);
    return found;
}

static enum MHD_Result serve_log(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                 const struct krc_demo_route *r)
{
    const char *container = arg(conn, "container");
    long tail = arg_long(conn, "tailLines");
    long limit = arg_long(conn, "limitBytes");
    struct sim_pod *p;
    char *text = NULL;
    int has = 0;
    int has_log = 0;
    enum MHD_Result ret;

    if (tail == -2 || limit == -2 || limit == 0) {
        return status_fail(conn, 400, "BadRequest", "invalid tailLines or limitBytes");
    }
    if (container == NULL) {
        return status_fail(conn, 400, "BadRequest", "a container name must be specified for pod %s",
                           r->name);
    }
    pthread_mutex_lock(&s->lock);
    p = find_pod(s, r->ns, r->name);
    if (p != NULL) {
        has = pod_has_container(p->json, container);
        has_log = p->log != NULL;
        if (has && has_log && arg_true(conn, "previous")) {
            text = krc_demo_log_window(p->log, tail, arg_true(conn, "timestamps"), p->log_ended,
                                       limit);
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (p == NULL) {
        return status_fail(conn, 404, "NotFound", "pods \"%s\" not found", r->name);
    }
    if (!has) {
        return status_fail(conn, 400, "BadRequest", "container %s is not valid for pod %s",
                           container, r->name);
    }
    if (!arg_true(conn, "previous")) {
        /* the running instances print nothing in this simulation */
        return respond(conn, 200, "text/plain", "", 0);
    }
    if (!has_log) {
        return status_fail(conn, 400, "BadRequest",
                           "previous terminated container \"%s\" in pod \"%s\" not found",
                           container, r->name);
    }
    if (text == NULL) {
        return MHD_NO;
    }
    ret = respond(conn, 200, "text/plain", text, strlen(text));
    krc_free(text);
    return ret;
}

/* --- the webhook ------------------------------------------------------------------ */

static enum MHD_Result serve_webhook(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                     const char *url, struct krc_buf *body)
{
    struct krc_demo_msg *grown;
    struct timespec now;
    cJSON *parsed = cJSON_ParseWithLength(body->data != NULL ? body->data : "", body->len);
    int ok = parsed != NULL && cJSON_IsObject(parsed);

    cJSON_Delete(parsed);
    if (!ok) {
        return respond(conn, 400, "text/plain", "invalid_payload", 15);
    }
    clock_gettime(CLOCK_REALTIME, &now);
    pthread_mutex_lock(&s->msg_lock);
    grown = s->n_msgs < MAX_OBJECTS ? krc_realloc(s->msgs, (s->n_msgs + 1) * sizeof(*grown)) : NULL;
    if (grown == NULL) {
        pthread_mutex_unlock(&s->msg_lock);
        return respond(conn, 500, "text/plain", "too_many_messages", 17);
    }
    s->msgs = grown;
    grown[s->n_msgs].body = krc_buf_take(body);
    grown[s->n_msgs].received_at = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    grown[s->n_msgs].note = s->note_for != NULL ? s->note_for(url, s->userdata) : NULL;
    if (grown[s->n_msgs].body == NULL) {
        pthread_mutex_unlock(&s->msg_lock);
        return MHD_NO;
    }
    s->n_msgs++;
    s->last_msg_mono_ms = krc_clock_mono_ms();
    if (s->on_message != NULL) {
        s->on_message(&grown[s->n_msgs - 1], s->userdata);
    }
    pthread_mutex_unlock(&s->msg_lock);
    return respond(conn, 200, "text/html", "ok", 2);
}

/* --- Kubernetes Events (events.k8s.io/v1) ------------------------------------------- */

static enum MHD_Result serve_kube_event(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                        const struct krc_demo_route *r, struct krc_buf *body)
{
    cJSON *ev = cJSON_ParseWithLength(body->data != NULL ? body->data : "", body->len);
    char why[512];
    char *text;
    cJSON **grown;
    int code;
    enum MHD_Result ret;

    if (ev == NULL) {
        return status_fail(conn, 400, "BadRequest", "the body is not JSON");
    }
    code = krc_demo_kube_event_check(ev, r->ns, why, sizeof(why));
    if (code != 0) {
        cJSON_Delete(ev);
        return status_fail(conn, (unsigned)code, code == 422 ? "Invalid" : "BadRequest", "%s", why);
    }
    /* the API server takes the namespace from the URL (the check refused another one) */
    if (krc_demo_json_str(cJSON_GetObjectItemCaseSensitive(ev, "metadata"), "namespace") == NULL &&
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(ev, "metadata"), "namespace",
                                r->ns) == NULL) {
        cJSON_Delete(ev);
        return MHD_NO;
    }
    pthread_mutex_lock(&s->msg_lock);
    for (size_t i = 0; i < s->n_kube_events; i++) {
        /* names are unique within a namespace */
        if (strcmp(meta_str(s->kube_events[i], "name"), meta_str(ev, "name")) == 0 &&
            strcmp(meta_str(s->kube_events[i], "namespace"), r->ns) == 0) {
            pthread_mutex_unlock(&s->msg_lock);
            cJSON_Delete(ev);
            return status_fail(conn, 409, "AlreadyExists", "events.events.k8s.io already exists");
        }
    }
    grown = s->n_kube_events < MAX_OBJECTS
                ? krc_realloc(s->kube_events, (s->n_kube_events + 1) * sizeof(*grown))
                : NULL;
    if (grown == NULL) {
        pthread_mutex_unlock(&s->msg_lock);
        cJSON_Delete(ev);
        return status_fail(conn, 500, "InternalError", "too many events");
    }
    s->kube_events = grown;
    s->kube_events[s->n_kube_events++] = ev;
    if (s->on_kube_event != NULL) {
        s->on_kube_event(ev, s->userdata);
    }
    text = cJSON_PrintUnformatted(ev);
    pthread_mutex_unlock(&s->msg_lock);
    if (text == NULL) {
        return MHD_NO;
    }
    ret = respond_json(conn, 201, text);
    cJSON_free(text);
    return ret;
}

/* --- dispatch ------------------------------------------------------------------------ */

struct req {
    struct krc_buf body;
    int too_big;
};

static int authorized(struct krc_demo_sim *s, struct MHD_Connection *conn)
{
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    size_t n = strlen(s->token);

    return h != NULL && strncmp(h, "Bearer ", 7) == 0 && strlen(h + 7) == n &&
           memcmp(h + 7, s->token, n) == 0;
}

static enum MHD_Result dispatch(struct krc_demo_sim *s, struct MHD_Connection *conn,
                                const char *url, const char *method, struct req *rq)
{
    struct krc_demo_route r;

    if (krc_demo_route_parse(url, &r) < 0) {
        return status_fail(conn, 404, "NotFound",
                           "the server could not find the requested "
                           "resource");
    }
    if (r.kind == KRC_DEMO_ROUTE_WEBHOOK) {
        if (strcmp(method, "POST") != 0) {
            return respond(conn, 405, "text/plain", "invalid_method", 14);
        }
        return rq->too_big ? respond(conn, 413, "text/plain", "request_too_large", 17)
                           : serve_webhook(s, conn, url, &rq->body);
    }
    if (strncmp(url, "/api", 4) == 0 && !authorized(s, conn)) {
        return status_fail(conn, 401, "Unauthorized", "Unauthorized");
    }
    if (r.kind == KRC_DEMO_ROUTE_NONE) {
        return status_fail(conn, 404, "NotFound",
                           "the server could not find the requested resource");
    }
    if (r.kind == KRC_DEMO_ROUTE_KUBE_EVENTS) {
        if (strcmp(method, "POST") != 0) {
            return status_fail(conn, 405, "MethodNotAllowed",
                               "the krc demo server only creates events (%s is not served)",
                               method);
        }
        return rq->too_big ? status_fail(conn, 413, "RequestEntityTooLarge", "request too large")
                           : serve_kube_event(s, conn, &r, &rq->body);
    }
    if (strcmp(method, "GET") != 0) {
        return status_fail(conn, 405, "MethodNotAllowed",
                           "the krc demo server only reads (%s is not served)", method);
    }
    switch (r.kind) {
    case KRC_DEMO_ROUTE_PODS:
        return arg_true(conn, "watch") ? serve_watch(s, conn, &r) : serve_pod_list(s, conn, &r);
    case KRC_DEMO_ROUTE_POD:
        return serve_pod(s, conn, &r);
    case KRC_DEMO_ROUTE_POD_LOG:
        return serve_log(s, conn, &r);
    case KRC_DEMO_ROUTE_EVENTS:
        return serve_events(s, conn, &r);
    case KRC_DEMO_ROUTE_NODE:
        return serve_node(s, conn, r.name);
    case KRC_DEMO_ROUTE_LIST: {
        enum MHD_Result ret;
        if (selector_refused(conn, &r, &ret)) {
            return ret;
        }
        return arg_true(conn, "watch") ? serve_watch(s, conn, &r) : serve_list(s, conn, &r);
    }
    case KRC_DEMO_ROUTE_OBJECT:
        return serve_object(s, conn, &r);
    default:
        return status_fail(conn, 404, "NotFound",
                           "the server could not find the requested resource");
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    struct krc_demo_sim *s = cls;
    struct req *rq = *con_cls;

    (void)version;
    if (rq == NULL) {
        rq = krc_calloc(1, sizeof(*rq));
        if (rq == NULL) {
            return MHD_NO;
        }
        krc_buf_init(&rq->body, MAX_BODY);
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (krc_buf_append(&rq->body, upload_data, *upload_size) < 0) {
            rq->too_big = 1;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return dispatch(s, conn, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct req *rq = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (rq != NULL) {
        krc_buf_cleanup(&rq->body);
        krc_free(rq);
        *con_cls = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    krc_log(KRC_LOG_DEBUG, "demo server: %s", line);
}

/* --- life cycle ------------------------------------------------------------------------ */

static int bind_loopback(int *ret_fd, int *ret_port, struct krc_error *err)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int saved;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        saved = errno;
        if (fd >= 0) {
            close(fd);
        }
        return krc_error_set(err, KRC_EIO, "demo server: cannot listen on 127.0.0.1: %s",
                             KRC_ERRNO_STR(saved));
    }
    *ret_fd = fd;
    *ret_port = ntohs(a.sin_port);
    return 0;
}

int krc_demo_sim_start(const struct krc_demo_sim_options *o, struct krc_demo_sim **ret,
                       struct krc_error *err)
{
    const unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                               MHD_USE_ITC | MHD_USE_ERROR_LOG;
    struct krc_demo_sim *s = krc_calloc(1, sizeof(*s));
    int fd = -1;

    *ret = NULL;
    if (s == NULL || (s->token = krc_strdup(o->token)) == NULL) {
        krc_free(s);
        return krc_error_set(err, KRC_ENOMEM, "demo server: out of memory");
    }
    s->on_message = o->on_message;
    s->userdata = o->userdata;
    s->on_kube_event = o->on_kube_event;
    s->note_for = o->note_for;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->msg_lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    if (bind_loopback(&fd, &s->port, err) < 0) {
        krc_demo_sim_free(s);
        return err->code;
    }
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET,
                                 (MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT, 64u,
                                 MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_NOTIFY_COMPLETED,
                                 on_completed, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        close(fd);
        krc_demo_sim_free(s);
        return krc_error_set(err, KRC_EIO,
                             "demo server: libmicrohttpd could not start on "
                             "127.0.0.1");
    }
    *ret = s;
    return 0;
}

int krc_demo_sim_port(const struct krc_demo_sim *s)
{
    return s->port;
}

void krc_demo_sim_stop(struct krc_demo_sim *s)
{
    if (s == NULL || s->daemon == NULL) {
        return;
    }
    atomic_store(&s->stopping, 1);
    pthread_mutex_lock(&s->lock);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    /* closes the listening socket it was given, ends every connection, joins */
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
}

void krc_demo_sim_free(struct krc_demo_sim *s)
{
    if (s == NULL) {
        return;
    }
    krc_demo_sim_stop(s);
    for (size_t i = 0; i < s->n_pods; i++) {
        krc_free(s->pods[i].ns);
        krc_free(s->pods[i].name);
        krc_free(s->pods[i].json);
        krc_free(s->pods[i].log);
    }
    for (size_t i = 0; i < s->n_nodes; i++) {
        krc_free(s->nodes[i]);
        krc_free(s->node_names[i]);
    }
    for (size_t i = 0; i < s->n_events; i++) {
        cJSON_Delete(s->events[i]);
    }
    for (size_t i = 0; i < s->n_kube_events; i++) {
        cJSON_Delete(s->kube_events[i]);
    }
    krc_free(s->kube_events);
    for (size_t i = 0; i < s->n_objs; i++) {
        krc_free(s->objs[i].ns);
        krc_free(s->objs[i].name);
        krc_free(s->objs[i].json);
    }
    krc_free(s->objs);
    for (size_t i = 0; i < s->n_changes; i++) {
        krc_free(s->changes[i].ns);
        krc_free(s->changes[i].line);
        krc_free(s->changes[i].meta_line);
    }
    for (size_t i = 0; i < s->n_msgs; i++) {
        /* clang-tidy: the cast only drops const (-Wcast-qual) of a body this file allocated */
        /* NOLINTNEXTLINE(performance-no-int-to-ptr) */
        krc_free((char *)(uintptr_t)s->msgs[i].body);
    }
    krc_free(s->pods);
    krc_free(s->nodes);
    krc_free(s->node_names);
    krc_free(s->events);
    krc_free(s->changes);
    krc_free(s->msgs);
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->msg_lock);
    krc_free(s->token);
    krc_free(s);
}
