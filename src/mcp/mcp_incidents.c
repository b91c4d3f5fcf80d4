/* The incident tools of the MCP server (issue 27):
 *
 *   list_incidents  incidents newest first (open, or ended since a time),
 *                   filtered by namespace, workload and open; cursor pages
 *   get_incident    one incident: the first and the latest failure's
 *                   evidence (restart row and stored report, log tail
 *                   bounded), the recorded changes of its workload and nodes
 *                   in the 24 h before its first restart, and its messages
 *   what_changed    the recorded changes of a workload (Kind/name, or a pod's
 *                   workload from its newest recorded restart) and of the
 *                   nodes its pods ran on, since a time
 *
 * Scope (mcp_scope.h), as the restart tools: a namespace or pod argument
 * outside it is refused before any query; an incident is in scope when its
 * namespace is and, with pod name settings, when the pods of its first and
 * latest restarts are; one outside it is left out of lists and refused by id
 * without its names. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/mcp/incident_json.h"
#include "krc/model/report_json.h"
#include "krc/store/row_json.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "mcp_tools_int.h"

#define INCIDENTS_DEFAULT 50
#define CHANGES_DEFAULT 50
/* get_incident: the changes before the first restart, the messages (the
 * first ones and the latest ones of those the store returns) and the length
 * of a message's text */
#define INCIDENT_CHANGES_MAX 20
#define MESSAGES_HEAD 10
#define MESSAGES_TAIL 40
#define MESSAGE_TEXT_MAX 2000
/* incidents read per call when their pods must be looked up (pod name
 * settings): two restarts read each */
#define POD_CHECK_BUDGET 500

/* ---- schemas ------------------------------------------------------------------------------ */

#define UNTRUSTED_STR                                                                              \
    "{\"type\":[\"string\",\"null\"],\"description\":\"" KRC_MCP_UNTRUSTED_DESC "\"}"
#define WORKLOAD_DESC "Kind/name, e.g. Deployment/api (Pod/NAME for a pod without a controller)"
#define INCIDENT_SCHEMA                                                                            \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"id\":{\"type\":\"integer\",\"description\":\"incident id for get_incident\"},"              \
    "\"cluster\":{\"type\":\"string\",\"description\":\"clusterName of the krc that recorded "     \
    "it (empty: unnamed)\"},"                                                                      \
    "\"namespace\":{\"type\":\"string\"},"                                                         \
    "\"workload\":{\"type\":\"string\",\"description\":\"" WORKLOAD_DESC "\"},"                    \
    "\"container\":{\"type\":\"string\"},\"cause\":{\"type\":\"string\"},"                         \
    "\"restarts\":{\"type\":\"integer\",\"description\":\"restarts counted into it, across the "   \
    "workload's pods\"},"                                                                          \
    "\"first_at\":{\"type\":\"string\",\"description\":\"its first restart (UTC)\"},"              \
    "\"last_at\":{\"type\":\"string\",\"description\":\"its latest restart (UTC)\"},"              \
    "\"ended_at\":{\"type\":[\"string\",\"null\"],\"description\":\"when it ended (the container " \
    "ran ready for the settle time); null while open\"},"                                          \
    "\"open\":{\"type\":\"boolean\"},"                                                             \
    "\"first_restart_id\":{\"type\":\"integer\",\"description\":\"restart id for "                 \
    "get_restart_report\"},"                                                                       \
    "\"latest_restart_id\":{\"type\":\"integer\",\"description\":\"restart id for "                \
    "get_restart_report\"}},"                                                                      \
    "\"required\":[\"id\",\"namespace\",\"workload\",\"container\",\"cause\",\"restarts\","        \
    "\"first_at\",\"last_at\",\"ended_at\",\"open\",\"first_restart_id\",\"latest_restart_id\"]}"
#define CHANGE_SCHEMA                                                                              \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"id\":{\"type\":\"integer\",\"description\":\"recorded change id\"},"                        \
    "\"kind\":{\"type\":\"string\",\"description\":\"Deployment, StatefulSet, DaemonSet, Job, "    \
    "CronJob, Node, ConfigMap, Secret, ...\"},"                                                    \
    "\"namespace\":{\"type\":\"string\",\"description\":\"empty for a node\"},"                    \
    "\"name\":{\"type\":\"string\"},\"revision\":" NSTR ","                                        \
    "\"at\":{\"type\":[\"string\",\"null\"],\"description\":\"when it changed (UTC)\"},"           \
    "\"manager\":" UNTRUSTED_STR ",\"summary\":" UNTRUSTED_STR ","                                 \
    "\"items\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"what "        \
    "changed, e.g. image api:1.4.2 \\u2192 api:1.4.3 (never a value of a ConfigMap, Secret or "    \
    "environment variable). " KRC_MCP_UNTRUSTED_DESC "\"},"                                        \
    "\"previous_revision\":{\"type\":[\"string\",\"null\"]},"                                      \
    "\"previous_ready\":{\"type\":[\"integer\",\"null\"],\"description\":\"pods of the previous "  \
    "revision still ready when it was recorded\"}},"                                               \
    "\"required\":[\"id\",\"kind\",\"namespace\",\"name\",\"items\"]}"
#define MESSAGE_SCHEMA                                                                             \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"id\":{\"type\":\"integer\"},\"restart_id\":{\"type\":[\"integer\",\"null\"]},"              \
    "\"kind\":{\"type\":\"string\",\"description\":\"alert, reply, summary or recovered\"},"       \
    "\"destination\":{\"type\":\"string\"},\"channel\":" NSTR ",\"thread_key\":" NSTR ","          \
    "\"state\":{\"type\":\"string\",\"description\":\"pending, delivered, failed, withdrawn or "   \
    "superseded\"},"                                                                               \
    "\"attempts\":{\"type\":\"integer\"},\"created_at\":" NSTR ",\"delivered_at\":" NSTR ","       \
    "\"message_ref\":" NSTR ",\"last_error\":" UNTRUSTED_STR ",\"text\":" UNTRUSTED_STR "},"       \
    "\"required\":[\"id\",\"kind\",\"destination\",\"state\",\"attempts\"]}"
#define EVIDENCE_SCHEMA                                                                            \
    "{\"type\":[\"object\",\"null\"],\"properties\":{\"restart\":" ROW_SCHEMA ","                  \
    "\"report\":{\"type\":[\"object\",\"null\"],\"description\":\"the stored report, as "          \
    "get_restart_report returns it\"," KRC_MCP_REPORT_UNTRUSTED_PROPS "}},"                        \
    "\"required\":[\"restart\",\"report\"]}"

/* the arguments, one macro each (the schemas below join them) */
#define ARG_NAMESPACE_ANY "\"namespace\":" STR(253, "exact namespace; omit for all")
#define ARG_NAMESPACE "\"namespace\":" STR(253, "the namespace")
#define ARG_WORKLOAD "\"workload\":" STR(320, WORKLOAD_DESC)
#define ARG_WORKLOAD_OR "\"workload\":" STR(320, WORKLOAD_DESC " (this or pod)")
#define ARG_POD_OR                                                                                 \
    "\"pod\":" STR(253, "exact pod name: its workload from its newest recorded restart (this "     \
                        "or workload)")
#define ARG_OPEN                                                                                   \
    "\"open\":{\"type\":\"boolean\",\"description\":\"true: only incidents still open\"}"
#define ARG_SINCE_INCIDENTS                                                                        \
    "\"since\":" STR(64, SINCE_DESC "; keeps the incidents still open or ended since; default "    \
                                    "24h (open and recent)")
#define ARG_SINCE_24H "\"since\":" STR(64, SINCE_DESC "; default 24h")
#define ARG_LIMIT "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":200,\"default\":50}"
#define ARG_CURSOR "\"cursor\":" STR(64, "next_cursor of the previous page")
#define ARG_CLUSTER                                                                                \
    "\"cluster\":" STR(253,                                                                        \
                       "exact clusterName of the krc that recorded them (a database shared by "    \
                       "clusters); omit for all")

const char krc_mcp_incidents_in[] =
    "{\"type\":\"object\",\"properties\":{" ARG_CLUSTER "," ARG_NAMESPACE_ANY "," ARG_WORKLOAD
    "," ARG_OPEN "," ARG_SINCE_INCIDENTS "," ARG_LIMIT "," ARG_CURSOR
    "},\"additionalProperties\":false}";
const char krc_mcp_incidents_out[] =
    "{\"type\":\"object\",\"properties\":{\"incidents\":{\"type\":\"array\","
    "\"items\":" INCIDENT_SCHEMA "},\"next_cursor\":{\"type\":\"string\"},"
    "\"since\":{\"type\":\"string\",\"description\":\"open ones and those ended since this "
    "time (UTC)\"},"
    "\"untrusted_fields\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
    "\"description\":\"always empty: incidents are names, causes, counts and times\"}},"
    "\"required\":[\"incidents\",\"untrusted_fields\"]}";
const char krc_mcp_incident_in[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"id\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"incident id from "
    "list_incidents\"},"
    "\"log_bytes\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":65536,\"default\":8192,"
    "\"description\":\"bytes of each log tail to return (its end)\"}},"
    "\"required\":[\"id\"],\"additionalProperties\":false}";
/* get_incident's output schema is longer than one string literal may be
 * (4095 bytes in ISO C): its parts, joined once by krc_mcp_incidents_init */
static const char incident_out_head[] =
    "{\"type\":\"object\",\"properties\":{\"incident\":" INCIDENT_SCHEMA ",";
static const char incident_out_first[] = "\"first\":" EVIDENCE_SCHEMA ",";
static const char incident_out_latest[] = "\"latest\":" EVIDENCE_SCHEMA ",";
static const char incident_out_changes[] =
    "\"changes\":{\"type\":\"array\",\"items\":" CHANGE_SCHEMA ",\"description\":\"recorded "
    "changes of the workload and of its nodes in the 24 h before the first restart, nearest "
    "first\"},";
static const char incident_out_tail[] =
    "\"messages\":{\"type\":\"array\",\"items\":" MESSAGE_SCHEMA ",\"description\":\"what was "
    "sent about it and whether it was delivered, oldest first (the first and the latest ones)\"},"
    "\"messages_total\":{\"type\":\"integer\"},\"messages_omitted\":{\"type\":\"integer\"}"
    "," KRC_MCP_UNTRUSTED_FIELDS_PROP "},"
    "\"required\":[\"incident\",\"first\",\"latest\",\"changes\",\"messages\","
    "\"messages_total\",\"untrusted_fields\"]}";
char krc_mcp_incident_out[KRC_MCP_INCIDENT_OUT_MAX];
static pthread_once_t incident_out_once = PTHREAD_ONCE_INIT;

static void incident_out_build(void)
{
    /* cut short it would not parse: krc_mcp_new refuses it, naming the tool */
    snprintf(krc_mcp_incident_out, sizeof(krc_mcp_incident_out), "%s%s%s%s%s", incident_out_head,
             incident_out_first, incident_out_latest, incident_out_changes, incident_out_tail);
}

void krc_mcp_incidents_init(void)
{
    pthread_once(&incident_out_once, incident_out_build);
}

const char krc_mcp_changes_in[] =
    "{\"type\":\"object\",\"properties\":{" ARG_CLUSTER "," ARG_NAMESPACE "," ARG_WORKLOAD_OR
    "," ARG_POD_OR "," ARG_SINCE_24H "," ARG_LIMIT
    "},\"required\":[\"namespace\"],\"additionalProperties\":false}";
const char krc_mcp_changes_out[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"cluster\":{\"type\":\"string\",\"description\":\"the cluster asked for\"},"
    "\"namespace\":{\"type\":\"string\"},"
    "\"workload\":{\"type\":\"string\",\"description\":\"" WORKLOAD_DESC "\"},"
    "\"pod\":{\"type\":\"string\"},"
    "\"nodes\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"the nodes "
    "of its newest recorded restarts, whose changes are listed too\"},"
    "\"since\":{\"type\":\"string\"},"
    "\"changes\":{\"type\":\"array\",\"items\":" CHANGE_SCHEMA ",\"description\":\"newest "
    "first\"}," KRC_MCP_UNTRUSTED_FIELDS_PROP "},"
    "\"required\":[\"namespace\",\"workload\",\"nodes\",\"since\",\"changes\","
    "\"untrusted_fields\"]}";

/* ---- scope ---------------------------------------------------------------------------------- */

/* The setting that keeps the pod of restart `id` out (t->mu held, scope s
 * read under t->scope_mu by the caller); NULL when it is in or gone. A
 * database error: -1 in *failed. */
static const char *restart_excluded(struct krc_mcp_tools *t, const struct krc_mcp_scope *s,
                                    const char *ns, int64_t id, int *failed, struct krc_error *err)
{
    struct krc_store_entry *e = NULL;
    const char *why;
    int rc;

    if (id <= 0) {
        return NULL;
    }
    rc = krc_store_get(t->db, id, &e, err);
    if (rc == KRC_ENOTFOUND) {
        return NULL; /* pruned: its namespace decides */
    }
    if (rc < 0) {
        *failed = rc;
        return NULL;
    }
    why = krc_mcp_scope_excludes(s, ns, e->row.pod);
    krc_store_entry_free(e);
    return why;
}

/* ---- list_incidents ------------------------------------------------------------------------- */

struct cand {
    int64_t id, first_id, latest_id;
    char ns[64];
    cJSON *o;
};

struct ipage {
    const struct krc_mcp_scope *scope; /* NULL: every incident is in scope */
    struct cand *c;                    /* the incidents of one query in scope by namespace */
    size_t nc;
    size_t cap;
    long scanned;    /* incidents the current query read */
    int64_t scan_id; /* the last one read */
    int oom;
};

static int page_incident(const struct krc_store_incident *inc, void *ud)
{
    struct ipage *p = ud;
    struct cand *c;

    p->scanned++;
    p->scan_id = inc->id;
    if (p->scope != NULL && krc_mcp_scope_excludes(p->scope, inc->namespace, NULL) != NULL) {
        return 0; /* never returned, never counted */
    }
    if (p->nc == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 64;
        struct cand *nc = krc_realloc(p->c, ncap * sizeof(*nc));
        if (nc == NULL) {
            p->oom = 1;
            return 1;
        }
        p->c = nc;
        p->cap = ncap;
    }
    c = &p->c[p->nc];
    memset(c, 0, sizeof(*c));
    c->id = inc->id;
    c->first_id = inc->first_restart_id;
    c->latest_id = inc->latest_restart_id;
    snprintf(c->ns, sizeof(c->ns), "%s", inc->namespace != NULL ? inc->namespace : "");
    if ((c->o = krc_incident_json(inc)) == NULL) {
        p->oom = 1;
        return 1;
    }
    p->nc++;
    return 0;
}

static void drop_cands(struct ipage *p)
{
    for (size_t i = 0; i < p->nc; i++) {
        cJSON_Delete(p->c[i].o);
    }
    p->nc = 0;
}

/* Move the candidates in scope to rows (at most want; *more when one more was
 * there), last_id the last one moved. t->mu and t->scope_mu held. */
static int take_cands(struct krc_mcp_tools *t, struct ipage *p, cJSON *rows, long want, long *n,
                      int *more, int64_t *last_id, struct krc_error *err)
{
    int failed = 0;

    for (size_t i = 0; i < p->nc && !*more; i++) {
        struct cand *c = &p->c[i];
        if (p->scope != NULL && krc_mcp_scope_pod_rules(p->scope) &&
            (restart_excluded(t, p->scope, c->ns, c->first_id, &failed, err) != NULL ||
             restart_excluded(t, p->scope, c->ns, c->latest_id, &failed, err) != NULL ||
             failed < 0)) {
            if (failed < 0) {
                drop_cands(p);
                return failed;
            }
            continue;
        }
        if (*n == want) {
            *more = 1;
            break;
        }
        if (!cJSON_AddItemToArray(rows, c->o)) {
            drop_cands(p);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        c->o = NULL;
        (*n)++;
        *last_id = c->id;
    }
    drop_cands(p);
    return 0;
}

struct iscan {
    long want;
    long n;
    int more;
    int cut;
    int64_t last_id;
    int64_t scan_id;
};

/* The incidents of f in scope into rows, as list_page does for restarts:
 * query after query when the scope leaves some out, until the page is full,
 * the history ends or the budget is read (s->cut). t->mu held. */
static int scan_incidents(struct krc_mcp_tools *t, struct krc_store_incident_filter *f, cJSON *rows,
                          struct iscan *s, struct krc_error *err)
{
    struct ipage p;
    long total = 0;
    long budget = t->scan_budget;
    int rc;

    memset(&p, 0, sizeof(p));
    pthread_mutex_lock(&t->scope_mu);
    p.scope = krc_mcp_scope_all(t->scope) ? NULL : t->scope;
    f->limit = s->want + 1;
    if (p.scope != NULL && krc_mcp_scope_pod_rules(p.scope)) {
        budget = budget < POD_CHECK_BUDGET ? budget : POD_CHECK_BUDGET;
    } else if (p.scope != NULL && f->limit < t->scan_chunk) {
        f->limit = t->scan_chunk;
    }
    for (;;) {
        p.scanned = 0;
        rc = krc_store_incidents_list(t->db, f, page_incident, &p, err);
        total += p.scanned;
        s->scan_id = p.scan_id;
        if (p.oom) {
            drop_cands(&p);
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        } else if (rc >= 0) {
            rc = take_cands(t, &p, rows, s->want, &s->n, &s->more, &s->last_id, err);
        } else {
            drop_cands(&p);
        }
        if (rc < 0 || s->more || p.scanned < f->limit) {
            break; /* an error, a full page, or the end */
        }
        if (total >= budget) {
            s->cut = 1;
            break;
        }
        f->before_id = p.scan_id;
    }
    pthread_mutex_unlock(&t->scope_mu);
    krc_free(p.c);
    return rc;
}

static int parse_id_cursor(const char *s, int64_t *ret, char *msg, size_t msgsz)
{
    char *end;
    long long id;

    *ret = 0;
    if (s == NULL) {
        return 0;
    }
    id = strtoll(s, &end, 10);
    if (end != s && *end == '\0' && id > 0 && id < INT64_MAX) {
        *ret = id;
        return 0;
    }
    snprintf(msg, msgsz, "invalid arguments: cursor '%.64s' is not a next_cursor of this tool", s);
    return -1;
}

/* The workload argument: kind and name, or both "" when absent. -1 with the
 * tool error in msg. */
static int arg_workload(const cJSON *args, char *kind, size_t kindsz, char *name, size_t namesz,
                        char *msg, size_t msgsz)
{
    const char *w = krc_mcp_arg_str(args, "workload");
    const char *why;

    kind[0] = name[0] = '\0';
    if (w == NULL) {
        return 0;
    }
    if ((why = krc_workload_ref_parse(w, kind, kindsz, name, namesz)) != NULL) {
        snprintf(msg, msgsz, "invalid arguments: workload '%.320s' %s", w, why);
        return -1;
    }
    return 0;
}

int krc_mcp_tool_incidents(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                           struct krc_error *err)
{
    struct krc_mcp_tools *t = ud;
    struct krc_store_incident_filter f;
    struct iscan s;
    char kind[64];
    char name[254];
    char cur[32];
    cJSON *out;
    cJSON *rows;
    int rc;

    memset(&f, 0, sizeof(f));
    memset(&s, 0, sizeof(s));
    if (krc_mcp_arg_name(args, "namespace", KRC_KUBE_NAME_LABEL, 0, NS_WHAT, &f.namespace, msg,
                         msgsz) < 0 ||
        arg_workload(args, kind, sizeof(kind), name, sizeof(name), msg, msgsz) < 0 ||
        (f.namespace != NULL && krc_mcp_check_scope(t, f.namespace, NULL, msg, msgsz) < 0) ||
        krc_mcp_parse_since(krc_mcp_arg_str(args, "since") != NULL ? krc_mcp_arg_str(args, "since")
                                                                   : "24h",
                            &f.since, msg, msgsz) < 0 ||
        parse_id_cursor(krc_mcp_arg_str(args, "cursor"), &f.before_id, msg, msgsz) < 0) {
        return KRC_MCP_TOOL_FAILED;
    }
    f.cluster = krc_mcp_arg_str(args, "cluster");
    f.workload_kind = kind[0] != '\0' ? kind : NULL;
    f.workload_name = name[0] != '\0' ? name : NULL;
    f.open_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "open"));
    s.want = krc_mcp_arg_long(args, "limit", INCIDENTS_DEFAULT);
    out = cJSON_CreateObject();
    rows = cJSON_CreateArray();
    if (!krc_report_json_put(out, "incidents", rows)) {
        cJSON_Delete(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if ((rc = krc_mcp_lock_db(t, msg, msgsz)) != 0) {
        cJSON_Delete(out);
        return rc;
    }
    rc = scan_incidents(t, &f, rows, &s, err);
    if (rc < 0 && rc != KRC_ENOMEM) {
        rc = krc_mcp_db_failed(t, err, msg, msgsz);
    }
    pthread_mutex_unlock(&t->mu);
    if (rc != 0) {
        cJSON_Delete(out);
        return rc;
    }
    if (!krc_report_json_put(out, "since", krc_report_json_time(f.since))) {
        cJSON_Delete(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    /* after the last incident returned; or, cut short, after the last one read */
    snprintf(cur, sizeof(cur), "%" PRId64, s.more ? s.last_id : s.scan_id);
    if ((s.more || s.cut) && !krc_report_json_put(out, "next_cursor", cJSON_CreateString(cur))) {
        cJSON_Delete(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    *ret = out;
    return krc_mcp_finish(ret, KRC_MCP_ANSWER_INCIDENTS, err);
}

/* ---- get_incident --------------------------------------------------------------------------- */

/* {restart, report} of a stored restart, the log tail cut to log_bytes; null
 * for NULL (pruned). */
static cJSON *evidence_json(const struct krc_store_entry *e, size_t log_bytes,
                            struct krc_error *err)
{
    cJSON *o;
    cJSON *report;

    if (e == NULL) {
        return cJSON_CreateNull();
    }
    o = cJSON_CreateObject();
    report = e->report_json != NULL ? cJSON_Parse(e->report_json) : NULL;
    if (report != NULL && !cJSON_IsObject(report)) {
        cJSON_Delete(report);
        report = NULL;
    }
    if (!krc_report_json_put(o, "restart", krc_store_row_json(&e->row, 0)) ||
        !krc_report_json_put(o, "report", report != NULL ? report : cJSON_CreateNull()) ||
        (report != NULL && krc_mcp_trim_log(report, log_bytes, err) < 0)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int put_messages(cJSON *out, const struct krc_store_incident_detail *d)
{
    cJSON *arr = cJSON_CreateArray();
    size_t kept = 0;
    int64_t total =
        d->n_messages_total > (int64_t)d->n_messages ? d->n_messages_total : (int64_t)d->n_messages;

    if (!krc_report_json_put(out, "messages", arr)) {
        return 0;
    }
    for (size_t i = 0; i < d->n_messages; i++) {
        cJSON *m;
        if (i >= MESSAGES_HEAD && i + MESSAGES_TAIL < d->n_messages) {
            continue; /* the first ones and the latest ones */
        }
        m = krc_incident_message_json(&d->messages[i], MESSAGE_TEXT_MAX, 0);
        if (m == NULL || !cJSON_AddItemToArray(arr, m)) {
            cJSON_Delete(m);
            return 0;
        }
        kept++;
    }
    return krc_report_json_put(out, "messages_total", cJSON_CreateNumber((double)total)) &&
           (total == (int64_t)kept ||
            krc_report_json_put(out, "messages_omitted",
                                cJSON_CreateNumber((double)(total - (int64_t)kept))));
}

/* The change question of an incident: its workload, the nodes of its first
 * and latest restart. */
static void incident_target(const struct krc_store_incident_detail *d, struct krc_change_target *ct)
{
    const struct krc_store_entry *e[2] = {d->first, d->latest};

    memset(ct, 0, sizeof(*ct));
    ct->cluster = d->inc.cluster; /* a shared database: that cluster's workload and nodes */
    snprintf(ct->kind, sizeof(ct->kind), "%s",
             d->inc.workload_kind != NULL ? d->inc.workload_kind : "");
    snprintf(ct->name, sizeof(ct->name), "%s",
             d->inc.workload_name != NULL ? d->inc.workload_name : "");
    for (int i = 0; i < 2; i++) {
        const char *node = e[i] != NULL ? e[i]->row.node : NULL;
        if (node != NULL && node[0] != '\0' && strlen(node) < sizeof(ct->nodes[0]) &&
            (ct->n_nodes == 0 || strcmp(ct->nodes[0], node) != 0)) {
            snprintf(ct->nodes[ct->n_nodes++], sizeof(ct->nodes[0]), "%s", node);
        }
    }
}

/* The setting that keeps incident d out of the scope, NULL when it is in:
 * its namespace, and the pods of its first and latest restarts. */
static const char *incident_excluded(struct krc_mcp_tools *t,
                                     const struct krc_store_incident_detail *d)
{
    const char *why = krc_mcp_excluded(t, d->inc.namespace, NULL);

    if (why == NULL && d->first != NULL) {
        why = krc_mcp_excluded(t, d->inc.namespace, d->first->row.pod);
    }
    if (why == NULL && d->latest != NULL) {
        why = krc_mcp_excluded(t, d->inc.namespace, d->latest->row.pod);
    }
    return why;
}

/* Read incident id and the changes before it (t->mu held): *ret_d and
 * *ret_changes, or a tool error. */
static int read_incident(struct krc_mcp_tools *t, int64_t id,
                         struct krc_store_incident_detail **ret_d, cJSON **ret_changes, char *msg,
                         size_t msgsz, struct krc_error *err)
{
    struct krc_change_target ct;
    const char *why;
    int rc = krc_store_incident_get(t->db, id, ret_d, err);

    if (rc == KRC_ENOTFOUND) {
        snprintf(msg, msgsz, "no incident with id %" PRId64 " (list_incidents gives the ids)", id);
        return KRC_MCP_TOOL_FAILED;
    }
    if (rc < 0) {
        return rc == KRC_ENOMEM ? rc : krc_mcp_db_failed(t, err, msg, msgsz);
    }
    if ((why = incident_excluded(t, *ret_d)) != NULL) {
        /* by its id only: the names of what is outside the scope are not told */
        snprintf(msg, msgsz,
                 "incident %" PRId64 " is outside what this MCP server answers about: its "
                 "namespace or pod is left out by %s",
                 id, why);
        return KRC_MCP_TOOL_FAILED;
    }
    incident_target(*ret_d, &ct);
    rc = krc_change_target_list(t->db, (*ret_d)->inc.namespace, &ct,
                                (*ret_d)->inc.first_at - KRC_INCIDENT_CHANGES_LOOKBACK,
                                (*ret_d)->inc.first_at + 1, INCIDENT_CHANGES_MAX, ret_changes, err);
    if (rc < 0) {
        return rc == KRC_ENOMEM ? rc : krc_mcp_db_failed(t, err, msg, msgsz);
    }
    return 0;
}

int krc_mcp_tool_incident(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                          struct krc_error *err)
{
    struct krc_mcp_tools *t = ud;
    struct krc_store_incident_detail *d = NULL;
    int64_t id = (int64_t)krc_mcp_arg_long(args, "id", 0);
    size_t log_bytes = (size_t)krc_mcp_arg_long(args, "log_bytes", LOG_DEFAULT);
    cJSON *changes = NULL;
    cJSON *out;
    int ok;
    int rc;

    if ((rc = krc_mcp_lock_db(t, msg, msgsz)) != 0) {
        return rc;
    }
    rc = read_incident(t, id, &d, &changes, msg, msgsz, err);
    pthread_mutex_unlock(&t->mu);
    if (rc != 0) {
        krc_store_incident_detail_free(d);
        return rc;
    }
    out = cJSON_CreateObject();
    ok = krc_report_json_put(out, "incident", krc_incident_json(&d->inc)) &&
         krc_report_json_put(out, "first", evidence_json(d->first, log_bytes, err)) &&
         krc_report_json_put(out, "latest",
                             d->latest != NULL && d->first != NULL &&
                                     d->latest->row.id == d->first->row.id
                                 ? cJSON_CreateNull()
                                 : evidence_json(d->latest, log_bytes, err)) &&
         krc_report_json_put(out, "changes", changes) && put_messages(out, d);
    krc_store_incident_detail_free(d);
    if (!ok) {
        if (cJSON_GetObjectItemCaseSensitive(out, "changes") == NULL) {
            cJSON_Delete(changes); /* not reached: still ours */
        }
        cJSON_Delete(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    *ret = out;
    return krc_mcp_finish(ret, KRC_MCP_ANSWER_INCIDENT, err);
}

/* ---- what_changed --------------------------------------------------------------------------- */

/* krc_change_target_resolve's row filter: the restarts in scope (the scope
 * read under t->scope_mu by the caller). */
static int row_in_scope(const struct krc_store_row *r, void *ud)
{
    return krc_mcp_scope_excludes(ud, r->namespace, r->pod) == NULL;
}

/* The arguments of what_changed: ns, and kind/name or pod; -1 with msg. */
static int changes_args(struct krc_mcp_tools *t, const cJSON *args, const char **ns,
                        const char **pod, char *kind, char *name, int64_t *since, char *msg,
                        size_t msgsz)
{
    const char *since_text = krc_mcp_arg_str(args, "since");
    const char *why;

    if (krc_mcp_arg_name(args, "namespace", KRC_KUBE_NAME_LABEL, 1, NS_WHAT, ns, msg, msgsz) < 0 ||
        krc_mcp_arg_name(args, "pod", KRC_KUBE_NAME_SUBDOMAIN, 0, POD_WHAT, pod, msg, msgsz) < 0 ||
        arg_workload(args, kind, 64, name, 254, msg, msgsz) < 0) {
        return -1;
    }
    if ((*pod == NULL) == (kind[0] == '\0')) {
        snprintf(msg, msgsz,
                 "invalid arguments: give either workload (Kind/name) or pod (one of them)");
        return -1;
    }
    if (*pod != NULL && krc_mcp_check_scope(t, *ns, *pod, msg, msgsz) < 0) {
        return -1;
    }
    /* a workload's pods are named after it: the pod name settings apply to its name */
    if (*pod == NULL && (why = krc_mcp_excluded(t, *ns, name)) != NULL) {
        if (strstr(why, "Pod") == NULL) {
            krc_mcp_scope_refusal(msg, msgsz, why, *ns, NULL);
        } else {
            snprintf(msg, msgsz,
                     "workload %s/%s in namespace %s is outside what this MCP server answers "
                     "about: the names of its pods (which begin with its name) are left out by "
                     "%s (krc answers only about the pods it watches)",
                     kind, name, *ns, why);
        }
        return -1;
    }
    return krc_mcp_parse_since(since_text != NULL ? since_text : "24h", since, msg, msgsz);
}

static int changes_answer(const char *ns, const char *pod, const struct krc_change_target *ct,
                          int64_t since, cJSON *changes, cJSON **ret)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *nodes = cJSON_CreateArray();
    char workload[320];
    int ok;

    snprintf(workload, sizeof(workload), "%s/%s", ct->kind, ct->name);
    ok = (ct->cluster == NULL ||
          krc_report_json_put(out, "cluster", cJSON_CreateString(ct->cluster))) &&
         krc_report_json_put(out, "namespace", cJSON_CreateString(ns)) &&
         krc_report_json_put(out, "workload", cJSON_CreateString(workload)) &&
         (pod == NULL || krc_report_json_put(out, "pod", cJSON_CreateString(pod))) &&
         krc_report_json_put(out, "nodes", nodes);
    for (size_t i = 0; ok && i < ct->n_nodes; i++) {
        ok = cJSON_AddItemToArray(nodes, cJSON_CreateString(ct->nodes[i]));
    }
    ok = ok && krc_report_json_put(out, "since", krc_report_json_time(since)) &&
         krc_report_json_put(out, "changes", changes);
    if (!ok) {
        if (cJSON_GetObjectItemCaseSensitive(out, "nodes") == NULL) {
            cJSON_Delete(nodes);
        }
        if (cJSON_GetObjectItemCaseSensitive(out, "changes") == NULL) {
            cJSON_Delete(changes); /* not reached: still ours */
        }
        cJSON_Delete(out);
        return -1;
    }
    *ret = out;
    return 0;
}

int krc_mcp_tool_what_changed(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                              struct krc_error *err)
{
    struct krc_mcp_tools *t = ud;
    struct krc_change_target ct;
    const char *ns = NULL;
    const char *pod = NULL;
    char kind[64];
    char name[254];
    int64_t since;
    cJSON *changes = NULL;
    int rc;

    if (changes_args(t, args, &ns, &pod, kind, name, &since, msg, msgsz) < 0) {
        return KRC_MCP_TOOL_FAILED;
    }
    if ((rc = krc_mcp_lock_db(t, msg, msgsz)) != 0) {
        return rc;
    }
    pthread_mutex_lock(&t->scope_mu);
    rc = krc_change_target_resolve(t->db, krc_mcp_arg_str(args, "cluster"), ns,
                                   pod != NULL ? NULL : kind, pod != NULL ? NULL : name, pod,
                                   krc_mcp_scope_all(t->scope) ? NULL : row_in_scope, t->scope, &ct,
                                   err);
    pthread_mutex_unlock(&t->scope_mu);
    if (rc == KRC_ENOTFOUND) {
        pthread_mutex_unlock(&t->mu);
        snprintf(msg, msgsz,
                 "no restart of pod %s in namespace %s is recorded: what_changed finds a pod's "
                 "workload from its newest recorded restart; give workload (Kind/name) instead",
                 pod, ns);
        return KRC_MCP_TOOL_FAILED;
    }
    if (rc == 0) {
        rc =
            krc_change_target_list(t->db, ns, &ct, since, 0,
                                   krc_mcp_arg_long(args, "limit", CHANGES_DEFAULT), &changes, err);
    }
    if (rc < 0 && rc != KRC_ENOMEM) {
        rc = krc_mcp_db_failed(t, err, msg, msgsz);
    }
    pthread_mutex_unlock(&t->mu);
    if (rc != 0) {
        return rc;
    }
    if (changes_answer(ns, pod, &ct, since, changes, ret) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return krc_mcp_finish(ret, KRC_MCP_ANSWER_CHANGES, err);
}
