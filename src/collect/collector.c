#include "krc/collect/collector.h"

#include <stdio.h>
#include <string.h>

#include "krc/collect/config_changes.h"
#include "krc/util/buf.h"
#include "krc/util/http.h"
#include "krc/kube/kube_name.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/log.h"
#include "krc/util/logtail.h"
#include "krc/util/mem.h"

#define JSON_MAX (8 * 1024 * 1024)
#define PATH_MAX_LEN 4096

enum { REQ_EVENTS, REQ_NODE, REQ_NODE_EVENTS, REQ_LOGS, REQ_CLAIM, REQ_COUNT };

/* The pod's ResourceClaims read at most (status.resourceClaimStatuses; the
 * rest named in a note), and the bytes of one read at most: with the four
 * other requests, KRC_HTTP_MAX_PARALLEL at once. */
#define CLAIMS_MAX 4
#define CLAIM_JSON_MAX (1024 * 1024)
#define REQ_MAX (REQ_CLAIM + CLAIMS_MAX)

void krc_collector_options_defaults(struct krc_collector_options *o)
{
    o->tail_lines = 50;
    o->limit_bytes = 64 * 1024;
    o->transfer_limit_bytes = 4 * 1024 * 1024;
    o->timestamps = 1;
    o->fetch_logs = 1;
    o->fetch_events = 1;
    o->fetch_node = 1;
    o->track_configs = 0;
    o->track = NULL;
}

/* Minimal identity from the restart record. */
static int fill_identity(const struct krc_restart *r, struct krc_report *rep)
{
    struct krc_report_container *c;

    rep->namespace = krc_strdup(r->namespace);
    rep->name = krc_strdup(r->pod);
    rep->uid = krc_strdup(r->ident.uid);
    rep->node_name = r->node != NULL ? krc_strdup(r->node) : NULL;
    rep->slack_channel = r->slack_channel != NULL ? krc_strdup(r->slack_channel) : NULL;
    /* the workload, from what the watch kept of the pod (detect/restart.h) */
    if (r->owner_kind != NULL && r->owner_name != NULL &&
        ((rep->owner_kind = krc_strdup(r->owner_kind)) == NULL ||
         (rep->owner_name = krc_strdup(r->owner_name)) == NULL ||
         (r->template_hash != NULL &&
          krc_kv_list_put(&rep->labels, "pod-template-hash", r->template_hash) < 0) ||
         krc_report_resolve_workload(rep) < 0)) {
        return KRC_ENOMEM;
    }
    c = krc_report_add_container(rep);
    if (rep->namespace == NULL || rep->name == NULL || rep->uid == NULL || c == NULL ||
        (r->node != NULL && rep->node_name == NULL) ||
        (r->slack_channel != NULL && rep->slack_channel == NULL)) {
        return KRC_ENOMEM;
    }
    c->name = krc_strdup(r->ident.container);
    if (c->name == NULL) {
        return KRC_ENOMEM;
    }
    c->is_init = r->is_init;
    c->is_sidecar = r->is_sidecar;
    c->has_status = 1;
    c->restart_count = r->ident.restart_count;
    if (r->has_exit_code) {
        c->last.present = 1;
        c->last.exit_code = r->exit_code;
        c->last.signal = r->signal;
        c->last.started_at = r->started_at;
        c->last.finished_at = r->ident.finished_at;
        if (r->reason != NULL && (c->last.reason = krc_strdup(r->reason)) == NULL) {
            return KRC_ENOMEM;
        }
    }
    return 0;
}

int krc_collect_minimal(const struct krc_restart *r, struct krc_report *rep, struct krc_error *err)
{
    struct krc_error pe;

    krc_error_clear(&pe);
    if (r->pod_json != NULL && krc_kube_parse_pod(r->pod_json, r->pod_json_len, rep, &pe) == 0) {
        return 0;
    }
    krc_report_clear_pod(rep);
    if (fill_identity(r, rep) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory building a report");
    }
    return 0;
}

/* The previous log's streamed body goes through a bounded tail. */
struct log_sink {
    struct krc_logtail tail;
    int nomem;
    int over; /* stopped at the transfer cap */
};

/* Keep the last `keep` bytes, read at most `cap` (raised to keep); returns
 * the cap used, to ask for limitBytes = cap + 1. */
static long sink_init(struct log_sink *s, size_t keep, long cap)
{
    if (cap < (long)keep) {
        cap = (long)keep;
    }
    memset(s, 0, sizeof(*s));
    krc_logtail_init(&s->tail, keep, (uint64_t)cap);
    return cap;
}

static int log_on_data(const char *data, size_t len, void *ud)
{
    struct log_sink *s = ud;
    int rc = krc_logtail_feed(&s->tail, data, len);

    if (rc < 0) {
        s->nomem = 1;
        return 1;
    }
    if (rc == 1) {
        s->over = 1;
        return 1;
    }
    return 0;
}

/* Keep what the tail holds as the report's log, with what was cut. A 2xx
 * body is always streamed to log_on_data (on_data set), never collected. */
static int store_log(struct log_sink *s, struct krc_report *rep, const char *container,
                     struct krc_error *err)
{
    unsigned char *data = NULL;
    size_t len = 0;
    struct krc_logtail_cut cut;
    int rc;

    if (s->nomem) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory storing the log");
    }
    krc_logtail_finish(&s->tail, &data, &len, &cut);
    rc = krc_report_take_log(rep, container, data, len, err);
    if (rc == 0) {
        krc_report_set_log_cut(rep, &cut);
    }
    return rc;
}

static int add_query_path(struct krc_buf *b, const char *fmt_path, const char *a,
                          const char *const *kv)
{
    struct krc_buf q;
    int rc;

    krc_buf_init(&q, PATH_MAX_LEN);
    rc = krc_buf_printf(b, fmt_path, a);
    for (size_t i = 0; rc == 0 && kv != NULL && kv[i] != NULL; i += 2) {
        rc = krc_kube_query_add(&q, kv[i], kv[i + 1]);
    }
    if (rc == 0 && q.len > 0) {
        rc = krc_buf_printf(b, "?%s", krc_buf_str(&q));
    }
    krc_buf_cleanup(&q);
    return rc;
}

/* A ResourceClaim's body, read up to CLAIM_JSON_MAX bytes. */
struct claim_sink {
    struct krc_buf body;
    int over; /* stopped at the cap */
    int nomem;
};

static int claim_on_data(const char *data, size_t len, void *ud)
{
    struct claim_sink *s = ud;
    int rc = krc_buf_append(&s->body, data, len);

    if (rc == KRC_ETOOBIG) {
        s->over = 1;
        return 1;
    }
    if (rc < 0) {
        s->nomem = 1;
        return 1;
    }
    return 0;
}

/* The parallel requests of one collection and their answers. */
struct fetch {
    struct krc_buf paths[REQ_MAX];
    const char *path_ptrs[REQ_MAX];
    int which[REQ_MAX];
    size_t claim[REQ_MAX]; /* REQ_CLAIM: the index in rep->claim_statuses */
    struct krc_http_response resps[REQ_MAX];
    krc_http_data_cb on_data[REQ_MAX];
    void *userdata[REQ_MAX];
    struct krc_error errs[REQ_MAX];
    int rets[REQ_MAX];
    size_t n;
    struct log_sink sink; /* the previous log */
    long cap;             /* its transfer cap */
    struct claim_sink claims[CLAIMS_MAX];
    size_t n_claims;
};

static void fetch_init(struct fetch *f, const struct krc_collector_options *o)
{
    size_t keep;

    for (size_t i = 0; i < REQ_MAX; i++) {
        krc_buf_init(&f->paths[i], PATH_MAX_LEN);
        krc_http_response_init(&f->resps[i]);
        krc_error_clear(&f->errs[i]);
        f->on_data[i] = NULL;
        f->userdata[i] = NULL;
        f->claim[i] = 0;
    }
    for (size_t i = 0; i < CLAIMS_MAX; i++) {
        krc_buf_init(&f->claims[i].body, CLAIM_JSON_MAX);
        f->claims[i].over = f->claims[i].nomem = 0;
    }
    f->n = 0;
    f->n_claims = 0;
    keep = o->limit_bytes > 0 ? (size_t)o->limit_bytes : 1;
    if (keep > KRC_REPORT_LOG_MAX) {
        keep = KRC_REPORT_LOG_MAX;
    }
    f->cap = sink_init(&f->sink, keep, o->transfer_limit_bytes);
}

static void fetch_cleanup(struct fetch *f)
{
    for (size_t i = 0; i < REQ_MAX; i++) {
        krc_buf_cleanup(&f->paths[i]);
        krc_http_response_cleanup(&f->resps[i]);
    }
    for (size_t i = 0; i < CLAIMS_MAX; i++) {
        krc_buf_cleanup(&f->claims[i].body);
    }
    krc_logtail_cleanup(&f->sink.tail);
}

/* 1. The pod: as the watch saw it at the restart, else a GET; else the
 * restart record's identity with a note (*ret_pod_gone when deleted). A
 * pod that was GOT: its JSON in *ret_body (caller frees; else NULL). */
static int collect_pod(struct krc_kube_client *c, const struct krc_restart *r,
                       struct krc_report *rep, int *ret_pod_gone, char **ret_body, size_t *ret_len,
                       struct krc_error *err)
{
    struct krc_error pe;
    char *body = NULL;
    size_t len = 0;
    struct krc_buf p;
    int rc = 0;

    krc_error_clear(&pe);
    if (r->pod_json != NULL && krc_kube_parse_pod(r->pod_json, r->pod_json_len, rep, &pe) == 0) {
        return 0;
    }
    krc_buf_init(&p, PATH_MAX_LEN);
    krc_report_clear_pod(rep);
    if (krc_buf_printf(&p, "/api/v1/namespaces/%s/pods/%s", r->namespace, r->pod) == 0 &&
        krc_kube_get(c, krc_buf_str(&p), JSON_MAX, &body, &len, &pe) == 0 &&
        krc_kube_parse_pod(body, len, rep, &pe) == 0) {
        *ret_body = body; /* got it */
        *ret_len = len;
        body = NULL;
        goto out;
    }
    krc_report_clear_pod(rep);
    if (fill_identity(r, rep) < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory building a report");
        goto out;
    }
    if (pe.code == KRC_ENOTFOUND) {
        *ret_pod_gone = 1;
        krc_report_add_note(rep, "the pod was deleted before it could be collected");
    } else {
        krc_report_add_note(rep, "pod details unavailable: %s", pe.msg);
    }
out:
    krc_free(body);
    krc_buf_cleanup(&p);
    return rc;
}

/* 2b. The ResourceClaims status.resourceClaimStatuses names (DRA): GET
 * resource.k8s.io/v1 .../resourceclaims/NAME, at most CLAIMS_MAX. */
static void plan_claims(struct fetch *f, const struct krc_collect_target *r, struct krc_report *rep)
{
    size_t skipped = 0;
    const char *bad;

    for (size_t i = 0; i < rep->n_claim_statuses; i++) {
        const char *name = rep->claim_statuses[i].resource_claim_name;
        struct krc_buf *p = &f->paths[f->n];
        if (name == NULL || name[0] == '\0') {
            continue; /* no ResourceClaim was needed for it */
        }
        if (f->n_claims == CLAIMS_MAX) {
            skipped++;
            continue;
        }
        if ((bad = krc_kube_name_problem(name, KRC_KUBE_NAME_SUBDOMAIN)) != NULL) {
            krc_report_add_note(rep, "ResourceClaim \"%.100s\" not read: the name %s", name, bad);
            continue;
        }
        if (krc_buf_printf(p, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
                           r->namespace, name) < 0) {
            krc_report_add_note(rep, "ResourceClaim %.200s not read: its name is too long", name);
            krc_buf_reset(p);
            continue;
        }
        f->claim[f->n] = i;
        f->on_data[f->n] = claim_on_data;
        f->userdata[f->n] = &f->claims[f->n_claims++];
        f->which[f->n++] = REQ_CLAIM;
    }
    if (skipped > 0) {
        krc_report_add_note(rep, "%zu more ResourceClaims of the pod not read (at most %d are)",
                            skipped, CLAIMS_MAX);
    }
}

/* 2. Which of events, node, node events and the previous log to request. */
static void plan_requests(struct fetch *f, const struct krc_collect_target *r,
                          const struct krc_collector_options *o, struct krc_report *rep,
                          int pod_gone)
{
    char sel[1024];

    if (o->fetch_events) {
        const char *kv[] = {"fieldSelector", sel, NULL};
        snprintf(sel, sizeof(sel), "involvedObject.uid=%s", r->uid);
        if (add_query_path(&f->paths[f->n], "/api/v1/namespaces/%s/events", r->namespace, kv) ==
            0) {
            f->which[f->n++] = REQ_EVENTS;
        }
    }
    if (o->fetch_node && rep->node_name != NULL && rep->node_name[0] != '\0') {
        const char *kv[] = {"fieldSelector", sel, NULL};
        if (add_query_path(&f->paths[f->n], "/api/v1/nodes/%s", rep->node_name, NULL) == 0) {
            f->which[f->n++] = REQ_NODE;
        }
        /* The kubelet writes node events to "default" (cluster-scoped object). */
        snprintf(sel, sizeof(sel), "involvedObject.kind=Node,involvedObject.name=%s,type!=Normal",
                 rep->node_name);
        if (add_query_path(&f->paths[f->n], "/api/v1/namespaces/%s/events", "default", kv) == 0) {
            f->which[f->n++] = REQ_NODE_EVENTS;
        }
    }
    if (o->fetch_logs && !pod_gone) {
        char num[32];
        char num2[32];
        const char *kv[] = {
            "container", r->container, "previous", "true",       "tailLines",
            num,         "limitBytes", num2,       "timestamps", o->timestamps ? "true" : "false",
            NULL};
        struct krc_buf p;
        snprintf(num, sizeof(num), "%d", o->tail_lines);
        /* one byte more than we read: a server that sends it shows the
         * window goes on past the cap */
        snprintf(num2, sizeof(num2), "%ld", f->cap + 1);
        krc_buf_init(&p, PATH_MAX_LEN);
        if (krc_buf_printf(&p, "/api/v1/namespaces/%s/pods/%s/log", r->namespace, r->pod) == 0 &&
            add_query_path(&f->paths[f->n], "%s", krc_buf_str(&p), kv) == 0) {
            f->on_data[f->n] = log_on_data;
            f->userdata[f->n] = &f->sink;
            f->which[f->n++] = REQ_LOGS;
        }
        krc_buf_cleanup(&p);
    } else if (pod_gone) {
        krc_report_add_note(rep, "no previous log: the pod no longer exists");
    }
    plan_claims(f, r, rep);
}

/* The previous log's answer: kept, or a note saying why there is none. */
static int apply_log(struct fetch *f, size_t i, const char *msg, int ok, const char *container,
                     const struct krc_collector_options *o, struct krc_report *rep,
                     struct krc_error *err)
{
    const struct krc_http_response *resp = &f->resps[i];
    struct krc_error pe;

    krc_error_clear(&pe);
    if (ok && resp->status == 204) {
        krc_report_add_note(rep, "no previous log: the pod has no node");
    } else if (ok) {
        if (store_log(&f->sink, rep, container, &pe) < 0) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory storing the log");
        }
        if (o->timestamps) {
            rep->log_flags |= KRC_REPORT_LOG_TIMESTAMPS;
        }
    } else if (f->rets[i] == 0 && resp->status == 400) {
        krc_report_add_note(rep, "no previous log: %s", msg);
    } else if (f->rets[i] == 0 && resp->status == 404) {
        krc_report_add_note(rep, "no previous log: the pod no longer exists");
    } else {
        krc_report_add_note(rep, "previous log unavailable: %s", msg);
    }
    return 0;
}

/* A ResourceClaim's answer: its devices in the claim status, or a note
 * naming the claim (a 403 or a 404 is not a failure of the collection). */
static int apply_claim(struct fetch *f, size_t i, const char *msg, int ok, struct krc_report *rep,
                       struct krc_error *err)
{
    struct krc_report_claim_status *cs = &rep->claim_statuses[f->claim[i]];
    struct claim_sink *s = f->userdata[i];
    const char *name = cs->resource_claim_name;
    struct krc_error pe;

    krc_error_clear(&pe);
    if (s->nomem) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory reading ResourceClaim %s", name);
    }
    if (f->rets[i] == KRC_ECANCELED && s->over) {
        krc_report_add_note(rep, "ResourceClaim %s not read: larger than %d bytes", name,
                            CLAIM_JSON_MAX);
    } else if (f->rets[i] == 0 && f->resps[i].status == 404) {
        krc_report_add_note(rep, "ResourceClaim %s no longer exists", name);
    } else if (f->rets[i] == 0 && f->resps[i].status == 403) {
        krc_report_add_note(rep,
                            "ResourceClaim %s not readable (403: krc needs get on "
                            "resourceclaims.resource.k8s.io): %s",
                            name, msg);
    } else if (!ok) {
        krc_report_add_note(rep, "ResourceClaim %s unavailable: %s", name, msg);
    } else if (krc_kube_parse_resource_claim(s->body.data ? s->body.data : "", s->body.len, rep,
                                             f->claim[i], &pe) < 0) {
        if (pe.code == KRC_ENOMEM) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory reading ResourceClaim %s", name);
        }
        krc_report_add_note(rep, "ResourceClaim %s unreadable: %s", name, pe.msg);
    }
    return 0;
}

/* 3. One answer into the report; a failure becomes a note. KRC_ENOMEM. */
static int apply_response(struct fetch *f, size_t i, const char *container,
                          const struct krc_collector_options *o, struct krc_report *rep,
                          struct krc_error *err)
{
    const struct krc_http_response *resp = &f->resps[i];
    char msg[KRC_ERROR_MSG_MAX];
    int ok = f->rets[i] == 0 && resp->status >= 200 && resp->status < 300;
    struct krc_error pe;

    if (f->which[i] == REQ_LOGS && f->sink.nomem) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory reading the previous log");
    }
    if (f->which[i] == REQ_LOGS && f->rets[i] == KRC_ECANCELED && f->sink.over) {
        ok = 1; /* we stopped it at the transfer cap: what came is kept */
    }
    if (f->rets[i] == 0 && !ok) {
        krc_kube_status_message(resp, msg, sizeof(msg));
    } else {
        snprintf(msg, sizeof(msg), "%s", f->errs[i].msg);
    }
    krc_error_clear(&pe);
    switch (f->which[i]) {
    case REQ_EVENTS:
        if (!ok) {
            krc_report_add_note(rep, "pod events unavailable: %s", msg);
        } else if (krc_kube_parse_events(resp->body ? resp->body : "[]",
                                         resp->body ? resp->body_len : 2, rep, &pe) < 0) {
            krc_report_add_note(rep, "pod events unreadable: %s", pe.msg);
        }
        break;
    case REQ_NODE:
        if (ok && resp->body != NULL &&
            krc_kube_parse_node(resp->body, resp->body_len, rep, &pe) < 0) {
            krc_report_add_note(rep, "node %s unreadable: %s", rep->node_name, pe.msg);
        } else if (f->rets[i] == 0 && resp->status == 404) {
            krc_report_add_note(rep, "node %s no longer exists", rep->node_name);
        } else if (!ok) {
            krc_report_add_note(rep, "node %s unavailable: %s", rep->node_name, msg);
        }
        break;
    case REQ_NODE_EVENTS:
        if (!ok) {
            krc_report_add_note(rep, "node events unavailable: %s", msg);
        } else if (resp->body != NULL &&
                   krc_kube_parse_events(resp->body, resp->body_len, rep, &pe) < 0) {
            krc_report_add_note(rep, "node events unreadable: %s", pe.msg);
        }
        break;
    case REQ_LOGS:
        return apply_log(f, i, msg, ok, container, o, rep, err);
    case REQ_CLAIM:
        return apply_claim(f, i, msg, ok, rep, err);
    }
    return 0;
}

/* 2 and 3: everything after the pod, for the pod and container of t. */
static int collect_rest(struct krc_kube_client *c, const struct krc_collect_target *t,
                        const struct krc_collector_options *o, struct krc_report *rep, int pod_gone,
                        struct krc_error *err)
{
    struct fetch fetch;
    struct fetch *f = &fetch;
    int rc = 0;

    fetch_init(f, o);
    plan_requests(f, t, o, rep, pod_gone);
    for (size_t i = 0; i < f->n; i++) {
        f->path_ptrs[i] = krc_buf_str(&f->paths[i]);
    }
    if (f->n > 0 && krc_kube_get_many_stream(c, f->path_ptrs, f->n, JSON_MAX, f->on_data,
                                             f->userdata, f->resps, f->rets, f->errs) < 0) {
        for (size_t i = 0; i < f->n; i++) {
            f->rets[i] = KRC_ENOMEM;
            krc_error_set(&f->errs[i], KRC_ENOMEM, "out of memory");
        }
    }
    for (size_t i = 0; i < f->n && rc == 0; i++) {
        rc = apply_response(f, i, t->container, o, rep, err);
    }
    fetch_cleanup(f);
    return rc;
}

int krc_collect(struct krc_kube_client *c, const struct krc_restart *r,
                const struct krc_collector_options *o, struct krc_report *rep,
                struct krc_error *err)
{
    struct krc_collect_target t = {r->namespace, r->pod, r->ident.uid, r->ident.container};
    int pod_gone = 0;
    char *got = NULL;
    size_t got_len = 0;
    int rc = collect_pod(c, r, rep, &pod_gone, &got, &got_len, err);

    if (rc == 0) {
        rc = collect_rest(c, &t, o, rep, pod_gone, err);
    }
    if (rc == 0 && o->track_configs && o->track != NULL && !pod_gone) {
        /* 4. what changed in its ConfigMaps and Secrets (metadata only) */
        const char *json = got != NULL ? got : r->pod_json;
        size_t len = got != NULL ? got_len : r->pod_json_len;
        if (krc_collect_config_changes(c, o->track, json, len, rep) == KRC_ENOMEM) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory reading ConfigMap metadata");
        }
    }
    krc_free(got);
    return rc;
}

int krc_collect_around_pod(struct krc_kube_client *c, const struct krc_collect_target *t,
                           const struct krc_collector_options *o, struct krc_report *rep,
                           struct krc_error *err)
{
    return collect_rest(c, t, o, rep, 0, err);
}

/* The end of the whole previous log: the last `keep` bytes, reading at most
 * `cap`; *ret (NULL when empty), *ret_len and what was cut. */
static int full_log(struct krc_kube_client *c, const struct krc_restart *r, size_t keep, long cap,
                    unsigned char **ret, size_t *ret_len, struct krc_logtail_cut *ret_cut,
                    struct krc_error *err)
{
    char num[32];
    const char *kv[] = {"container", r->ident.container, "previous", "true", "limitBytes",
                        num,         "timestamps",       "true",     NULL};
    struct krc_buf p;
    struct krc_buf path;
    struct krc_http_response resp;
    struct log_sink sink;
    krc_http_data_cb cb = log_on_data;
    void *ud = &sink;
    const char *path_ptr;
    struct krc_error ret_err; /* the request's detail: get_many takes an array, never NULL */
    int ret_rc = 0;
    int rc;

    krc_error_clear(&ret_err);
    cap = sink_init(&sink, keep, cap);
    snprintf(num, sizeof(num), "%ld", cap + 1);
    krc_http_response_init(&resp);
    krc_buf_init(&p, PATH_MAX_LEN);
    krc_buf_init(&path, PATH_MAX_LEN);
    if (krc_buf_printf(&p, "/api/v1/namespaces/%s/pods/%s/log", r->namespace, r->pod) < 0 ||
        add_query_path(&path, "%s", krc_buf_str(&p), kv) < 0) {
        rc = krc_error_set(err, KRC_ETOOBIG, "log request path too long");
        goto out;
    }
    path_ptr = krc_buf_str(&path);
    if (krc_kube_get_many_stream(c, &path_ptr, 1, JSON_MAX, &cb, &ud, &resp, &ret_rc, &ret_err) <
        0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        goto out;
    }
    rc = ret_rc;
    if (rc < 0 && err != NULL) {
        *err = ret_err;
    }
    if (sink.nomem) {
        /* log_on_data stopped the transfer: not a cancel, and not the cap */
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory reading the previous log");
    } else if (rc == KRC_ECANCELED && sink.over) {
        rc = 0; /* stopped at the cap: what came is kept */
    }
    if (rc == 0 && (resp.status < 200 || resp.status >= 300)) {
        char msg[KRC_ERROR_MSG_MAX];
        krc_kube_status_message(&resp, msg, sizeof(msg));
        rc = krc_error_set(err, KRC_EHTTP, "previous log: %s", msg);
    }
    if (rc == 0) {
        krc_logtail_finish(&sink.tail, ret, ret_len, ret_cut);
    }
out:
    krc_logtail_cleanup(&sink.tail);
    krc_http_response_cleanup(&resp);
    krc_buf_cleanup(&p);
    krc_buf_cleanup(&path);
    return rc;
}

int krc_collect_log_file(struct krc_kube_client *c, const struct krc_restart *r, char **ret,
                         size_t *ret_len, struct krc_error *err)
{
    unsigned char *out = NULL;
    size_t len = 0;
    struct krc_logtail_cut cut;
    int rc;

    memset(&cut, 0, sizeof(cut)); /* full_log fills it on success (clang-tidy) */
    rc = full_log(c, r, KRC_COLLECT_LOG_FILE_KEEP, KRC_COLLECT_LOG_FILE_CAP, &out, &len, &cut, err);
    if (rc < 0) {
        return rc;
    }
    if (cut.dropped > 0 || cut.capped) {
        char note[320];
        krc_logtail_describe(&cut, note, sizeof(note));
        krc_log(KRC_LOG_DEBUG, "log file of %s/%s container %s: %s", r->namespace, r->pod,
                r->ident.container, note);
    }
    *ret = (char *)out;
    *ret_len = len;
    return 0;
}
