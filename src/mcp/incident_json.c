/* Incidents and recorded changes as JSON (krc/mcp/incident_json.h). */
#include "krc/mcp/incident_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/kube/kube_name.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define PUT krc_report_json_put
#define STR krc_report_json_str
#define TIME krc_report_json_time

cJSON *krc_incident_json(const struct krc_store_incident *inc)
{
    cJSON *o = cJSON_CreateObject();
    char workload[320];
    int ok = o != NULL;

    snprintf(workload, sizeof(workload), "%s/%s",
             inc->workload_kind != NULL ? inc->workload_kind : "?",
             inc->workload_name != NULL ? inc->workload_name : "?");
    ok = ok && PUT(o, "id", cJSON_CreateNumber((double)inc->id));
    ok = ok && PUT(o, "cluster", cJSON_CreateString(inc->cluster != NULL ? inc->cluster : ""));
    ok = ok && PUT(o, "namespace", STR(inc->namespace));
    ok = ok && PUT(o, "workload", cJSON_CreateString(workload));
    ok = ok && PUT(o, "container", STR(inc->container));
    ok = ok && PUT(o, "cause", STR(inc->cause));
    ok = ok && PUT(o, "restarts", cJSON_CreateNumber((double)inc->restarts));
    ok = ok && PUT(o, "first_at", TIME(inc->first_at));
    ok = ok && PUT(o, "last_at", TIME(inc->last_at));
    ok = ok && PUT(o, "ended_at", TIME(inc->ended_at));
    ok = ok && PUT(o, "open", cJSON_CreateBool(inc->ended_at <= 0));
    ok = ok && PUT(o, "first_restart_id", cJSON_CreateNumber((double)inc->first_restart_id));
    ok = ok && PUT(o, "latest_restart_id", cJSON_CreateNumber((double)inc->latest_restart_id));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Replace (or add) key k of o with item: 1, or 0 (item released). */
static int set(cJSON *o, const char *k, cJSON *item)
{
    if (item == NULL) {
        return 0;
    }
    if (cJSON_GetObjectItemCaseSensitive(o, k) != NULL) {
        return cJSON_ReplaceItemInObjectCaseSensitive(o, k, item) ? 1 : (cJSON_Delete(item), 0);
    }
    return PUT(o, k, item);
}

/* The items of a stored change object: an array of strings, at most
 * KRC_CHANGE_ITEMS_MAX of them (anything else in it dropped). */
static int keep_items(cJSON *o)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(o, "items");
    cJSON *clean = cJSON_CreateArray();
    const cJSON *it;

    if (clean == NULL) {
        return 0;
    }
    cJSON_ArrayForEach(it, items)
    {
        if (cJSON_GetArraySize(clean) >= KRC_CHANGE_ITEMS_MAX) {
            break;
        }
        if (cJSON_IsString(it) &&
            !cJSON_AddItemToArray(clean, cJSON_CreateString(it->valuestring))) {
            cJSON_Delete(clean);
            return 0;
        }
    }
    return set(o, "items", clean);
}

cJSON *krc_change_json(const struct krc_store_change *c)
{
    cJSON *o = c->detail_json != NULL ? cJSON_Parse(c->detail_json) : NULL;
    int ok;

    if (o != NULL && !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        o = NULL;
    }
    if (o == NULL && (o = cJSON_CreateObject()) == NULL) {
        return NULL;
    }
    /* the row's columns are what was recorded: over whatever the document says */
    ok = set(o, "id", cJSON_CreateNumber((double)c->id));
    ok = ok && set(o, "cluster", cJSON_CreateString(c->cluster != NULL ? c->cluster : ""));
    ok = ok && set(o, "kind", STR(c->kind));
    ok = ok && set(o, "namespace", cJSON_CreateString(c->namespace != NULL ? c->namespace : ""));
    ok = ok && set(o, "name", STR(c->name));
    ok = ok && set(o, "revision", STR(c->revision));
    ok = ok && set(o, "at", TIME(c->at));
    ok = ok && set(o, "manager", STR(c->manager));
    ok = ok && set(o, "summary", STR(c->summary));
    ok = ok && set(o, "recorded_at", TIME(c->recorded_at));
    ok = ok && keep_items(o);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* What a person read of a message body: Slack's and Google Chat's "text",
 * PagerDuty's payload.summary, a webhook restart event's diagnosis summary;
 * NULL for others (Teams' cards, storm summaries of webhooks). */
static const cJSON *readable(const cJSON *doc)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "text");

    if (!cJSON_IsString(t)) {
        t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "payload"),
                                             "summary");
    }
    if (!cJSON_IsString(t)) {
        t = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "report"),
                                             "diagnosis"),
            "summary");
    }
    return cJSON_IsString(t) ? t : NULL;
}

/* The body's readable text, at most max bytes (0: whole), cut on a character
 * boundary; null when it has none. */
static cJSON *body_text(const char *body, size_t max)
{
    cJSON *doc = body != NULL ? cJSON_Parse(body) : NULL;
    const cJSON *t = readable(doc);
    cJSON *out;

    if (t == NULL) {
        cJSON_Delete(doc);
        return cJSON_CreateNull();
    }
    if (max > 0 && strlen(t->valuestring) > max) {
        char *cut = krc_malloc(max + 1);
        if (cut == NULL) {
            cJSON_Delete(doc);
            return NULL;
        }
        memcpy(cut, t->valuestring, max);
        cut[max] = '\0';
        krc_text_truncate(cut, max, max + 1, "\xe2\x80\xa6");
        out = cJSON_CreateString(cut);
        krc_free(cut);
    } else {
        out = cJSON_CreateString(t->valuestring);
    }
    cJSON_Delete(doc);
    return out;
}

cJSON *krc_incident_message_json(const struct krc_store_message *m, size_t text_max, int bodies)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL;

    ok = ok && PUT(o, "id", cJSON_CreateNumber((double)m->id));
    ok = ok &&
         PUT(o, "restart_id",
             m->restart_id > 0 ? cJSON_CreateNumber((double)m->restart_id) : cJSON_CreateNull());
    ok = ok && PUT(o, "kind", STR(krc_store_kind_name(m->kind)));
    ok = ok && PUT(o, "destination", STR(m->destination));
    ok = ok && PUT(o, "channel", STR(m->channel));
    ok = ok && PUT(o, "thread_key", STR(m->thread_key));
    ok = ok && PUT(o, "state", STR(krc_store_state_name(m->state)));
    ok = ok && PUT(o, "attempts", cJSON_CreateNumber(m->attempts));
    ok = ok && PUT(o, "created_at", TIME(m->created_at));
    ok = ok && PUT(o, "delivered_at", TIME(m->delivered_at));
    ok = ok && PUT(o, "message_ref", STR(m->message_ref));
    ok = ok && PUT(o, "last_error", STR(m->last_error));
    ok = ok && PUT(o, "text", body_text(m->body, text_max));
    if (ok && bodies) {
        ok = PUT(o, "body", krc_report_json_doc(m->body)) &&
             PUT(o, "fallback", krc_report_json_doc(m->fallback));
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- what a change question is about ------------------------------------------------------- */

struct resolve {
    struct krc_change_target *t;
    const char *kind; /* NULL: take the first kept row's workload */
    krc_change_keep_fn keep;
    void *ud;
};

static void add_node(struct krc_change_target *t, const char *node)
{
    if (node == NULL || node[0] == '\0' || t->n_nodes == KRC_CHANGE_NODES_MAX ||
        strlen(node) >= sizeof(t->nodes[0])) {
        return;
    }
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (strcmp(t->nodes[i], node) == 0) {
            return;
        }
    }
    snprintf(t->nodes[t->n_nodes++], sizeof(t->nodes[0]), "%s", node);
}

static int resolve_row(const struct krc_store_row *r, void *ud)
{
    struct resolve *rs = ud;
    const char *kind;
    const char *name;

    krc_workload_or_pod(r->workload_kind, r->workload_name, r->pod, &kind, &name);
    if (rs->keep != NULL && !rs->keep(r, rs->ud)) {
        return 0;
    }
    if (rs->kind == NULL) { /* a pod's: its newest restart names the workload */
        snprintf(rs->t->kind, sizeof(rs->t->kind), "%s", kind);
        snprintf(rs->t->name, sizeof(rs->t->name), "%s", name != NULL ? name : "");
        rs->kind = rs->t->kind;
    } else if (strcmp(kind, rs->t->kind) != 0) {
        return 0; /* the same name, another kind of workload */
    }
    rs->t->restarts++;
    add_node(rs->t, r->node);
    return 0;
}

int krc_change_target_resolve(struct krc_store *s, const char *cluster, const char *ns,
                              const char *kind, const char *name, const char *pod,
                              krc_change_keep_fn keep, void *ud, struct krc_change_target *t,
                              struct krc_error *err)
{
    struct krc_store_filter f;
    struct resolve rs;
    int rc;

    memset(t, 0, sizeof(*t));
    memset(&f, 0, sizeof(f));
    memset(&rs, 0, sizeof(rs));
    rs.t = t;
    rs.keep = keep;
    rs.ud = ud;
    t->cluster = cluster;
    f.cluster = cluster;
    f.namespace = ns;
    f.limit = KRC_CHANGE_ROWS_READ;
    if (pod != NULL) {
        f.pod = pod;
        f.pod_exact = 1;
    } else {
        snprintf(t->kind, sizeof(t->kind), "%s", kind);
        snprintf(t->name, sizeof(t->name), "%s", name);
        rs.kind = t->kind;
        /* a bare pod's restarts have no workload: its pod is its name */
        if (strcmp(kind, "Pod") == 0) {
            f.pod = name;
            f.pod_exact = 1;
        } else {
            f.workload = name;
        }
    }
    if ((rc = krc_store_list(s, &f, resolve_row, &rs, err)) < 0) {
        return rc;
    }
    if (pod != NULL && rs.kind == NULL) {
        return krc_error_set(err, KRC_ENOTFOUND, "no restart of pod %s in namespace %s recorded",
                             pod, ns);
    }
    return 0;
}

struct change_list {
    cJSON *arr;
    int oom;
};

static int change_row(const struct krc_store_change *c, void *ud)
{
    struct change_list *cl = ud;
    cJSON *o = krc_change_json(c);

    if (o == NULL || !cJSON_AddItemToArray(cl->arr, o)) {
        cJSON_Delete(o);
        cl->oom = 1;
        return 1;
    }
    return 0;
}

int krc_change_target_list(struct krc_store *s, const char *ns, const struct krc_change_target *t,
                           int64_t since, int64_t until, long limit, cJSON **ret,
                           struct krc_error *err)
{
    struct krc_store_change_filter f;
    struct change_list cl;
    const char *nodes[KRC_CHANGE_NODES_MAX];
    int rc;

    *ret = NULL;
    memset(&f, 0, sizeof(f));
    memset(&cl, 0, sizeof(cl));
    for (size_t i = 0; i < t->n_nodes; i++) {
        nodes[i] = t->nodes[i];
    }
    f.cluster = t->cluster;
    f.namespace = ns;
    f.kind = t->kind;
    f.name = t->name;
    f.nodes = nodes;
    f.n_nodes = t->n_nodes;
    f.since = since;
    f.until = until;
    f.limit = limit;
    if ((cl.arr = cJSON_CreateArray()) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = krc_store_changes_list(s, &f, change_row, &cl, err);
    if (cl.oom) {
        cJSON_Delete(cl.arr);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        cJSON_Delete(cl.arr);
        return rc;
    }
    *ret = cl.arr;
    return 0;
}

const char *krc_workload_ref_parse(const char *s, char *kind, size_t kindsz, char *name,
                                   size_t namesz)
{
    const char *slash = strchr(s, '/');
    size_t klen = slash != NULL ? (size_t)(slash - s) : 0;

    if (slash == NULL) {
        return "must be Kind/name, e.g. Deployment/api";
    }
    if (klen == 0 || klen > 63 || klen >= kindsz || !(s[0] >= 'A' && s[0] <= 'Z')) {
        return "must begin with a kind of 1-63 letters and digits that begins with an upper-case "
               "letter (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod)";
    }
    for (size_t i = 0; i < klen; i++) {
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) {
            return "must begin with a kind of 1-63 letters and digits that begins with an "
                   "upper-case letter (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod)";
        }
    }
    if (krc_kube_name_problem(slash + 1, KRC_KUBE_NAME_SUBDOMAIN) != NULL ||
        strlen(slash + 1) >= namesz) {
        return "must end with a workload name that is an RFC 1123 DNS subdomain (lower-case "
               "letters, digits, '-' and '.')";
    }
    memcpy(kind, s, klen);
    kind[klen] = '\0';
    snprintf(name, namesz, "%s", slash + 1);
    return NULL;
}
