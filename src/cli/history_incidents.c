/* `krc history incidents`, `krc history incident ID`, `krc history changes
 * --workload NS/KIND/NAME`: the incidents and the recorded changes (issue 27),
 * read-only, with the keys of the MCP tools (krc/mcp/incident_json.h). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history_int.h"
#include "krc/mcp/incident_json.h"
#include "krc/model/report_json.h"
#include "krc/store/row_json.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define USAGE KRC_HISTORY_EXIT_USAGE
#define CELL_MAX 512
#define INCIDENTS_DEFAULT 50
#define CHANGES_DEFAULT 50
#define INCIDENT_CHANGES_MAX 20

enum opt {
    O_DB,
    O_PASSWORD,
    O_CLUSTER,
    O_NAMESPACE,
    O_WORKLOAD,
    O_OPEN,
    O_SINCE,
    O_LIMIT,
    O_FORMAT,
    N_OPTS
};

static const char *const opt_names[N_OPTS] = {"--db",       "--db-password-file",
                                              "--cluster",  "--namespace",
                                              "--workload", "--open",
                                              "--since",    "--limit",
                                              "--format"};

/* The options each subcommand takes. */
static int allowed(const char *what, enum opt k)
{
    if (k == O_DB || k == O_PASSWORD || k == O_FORMAT) {
        return 1;
    }
    if (strcmp(what, "incidents") == 0) {
        return 1;
    }
    if (strcmp(what, "changes") == 0) {
        return k == O_WORKLOAD || k == O_SINCE || k == O_LIMIT || k == O_CLUSTER;
    }
    return 0; /* incident ID */
}

struct args {
    const char *val[N_OPTS];
    const char *id; /* incident ID */
    int open;
};

static int parse_args(int argc, char **argv, const char *what, struct args *a)
{
    int seen = 0;

    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        int k;

        if (strncmp(arg, "--", 2) != 0) {
            if (!seen && strcmp(arg, what) == 0) {
                seen = 1;
            } else if (strcmp(what, "incident") == 0 && a->id == NULL) {
                a->id = arg;
            } else {
                fprintf(stderr, "krc history %s: unexpected argument '%s'\n", what, arg);
                return USAGE;
            }
            continue;
        }
        for (k = 0; k < N_OPTS; k++) {
            if (strlen(opt_names[k]) == nl && strncmp(arg, opt_names[k], nl) == 0) {
                break;
            }
        }
        if (k == N_OPTS || !allowed(what, (enum opt)k)) {
            fprintf(stderr, "krc history %s: unknown option '%s' (krc history --help)\n", what,
                    arg);
            return USAGE;
        }
        if (k == O_OPEN) {
            if (eq != NULL) {
                fprintf(stderr, "krc history %s: --open takes no value\n", what);
                return USAGE;
            }
            a->open = 1;
            continue;
        }
        if (a->val[k] != NULL) {
            fprintf(stderr, "krc history %s: %s given twice\n", what, opt_names[k]);
            return USAGE;
        }
        if (eq != NULL) {
            a->val[k] = eq + 1;
        } else if (i + 1 < argc) {
            a->val[k] = argv[++i];
        } else {
            fprintf(stderr, "krc history %s: %s needs a value\n", what, opt_names[k]);
            return USAGE;
        }
        if (a->val[k][0] == '\0') {
            fprintf(stderr, "krc history %s: %s needs a non-empty value\n", what, opt_names[k]);
            return USAGE;
        }
    }
    return 0;
}

/* --format: 0 text/table, 1 json; -1 after saying why. */
static int parse_format(const char *what, const char *v, const char *plain)
{
    if (v == NULL || strcmp(v, plain) == 0) {
        return 0;
    }
    if (strcmp(v, "json") == 0) {
        return 1;
    }
    fprintf(stderr, "krc history %s: --format must be %s or json, not '%s'\n", what, plain, v);
    return -1;
}

static int parse_since(const char *what, const char *v, int64_t *ret)
{
    *ret = 0;
    if (v != NULL && krc_parse_since(v, krc_clock_now(), ret) < 0) {
        fprintf(stderr,
                "krc history %s: --since '%s' is neither a duration such as 90s, 10m, 2h, 1d or "
                "1h30m nor an RFC 3339 time such as 2026-12-03T08:00:00Z\n",
                what, v);
        return USAGE;
    }
    return 0;
}

/* ---- a table ----------------------------------------------------------------------------------
 */

#define MAX_COLS 10
#define COL_CLUSTER 1 /* incidents: shown for a shared store or rows of several clusters */

struct table {
    const char *const *head;
    int cols;
    int hide; /* a column not printed; -1: none */
    char **cells;
    size_t rows;
    size_t cap;
    int oom;
};

/* Add a row of t->cols cells (terminal-safe copies). */
static int table_add(struct table *t, char cells[][CELL_MAX])
{
    if (t->rows == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        char **nc = krc_realloc(t->cells, ncap * (size_t)t->cols * sizeof(char *));
        if (nc == NULL) {
            t->oom = 1;
            return 1;
        }
        t->cells = nc;
        t->cap = ncap;
    }
    for (int i = 0; i < t->cols; i++) {
        char *c = krc_text_safe(cells[i], CELL_MAX, 0);
        if (c == NULL) {
            for (int j = 0; j < i; j++) {
                krc_free(t->cells[t->rows * (size_t)t->cols + (size_t)j]);
            }
            t->oom = 1;
            return 1;
        }
        t->cells[t->rows * (size_t)t->cols + (size_t)i] = c;
    }
    t->rows++;
    return 0;
}

static size_t width(const char *s)
{
    return krc_text_utf8_count(s, strlen(s));
}

static void table_print(const struct table *t)
{
    size_t w[MAX_COLS];

    for (int i = 0; i < t->cols; i++) {
        w[i] = strlen(t->head[i]);
        for (size_t r = 0; r < t->rows; r++) {
            size_t cw = width(t->cells[r * (size_t)t->cols + (size_t)i]);
            w[i] = cw > w[i] ? cw : w[i];
        }
    }
    for (size_t r = 0; r <= t->rows; r++) {
        for (int i = 0; i < t->cols; i++) {
            const char *c = r == 0 ? t->head[i] : t->cells[(r - 1) * (size_t)t->cols + (size_t)i];
            if (i == t->hide) {
                continue;
            }
            if (i == t->cols - 1) {
                printf("%s\n", c);
            } else {
                printf("%s%*s", c, (int)(w[i] - width(c) + 2), "");
            }
        }
    }
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->rows * (size_t)t->cols; i++) {
        krc_free(t->cells[i]);
    }
    krc_free(t->cells);
}

/* ---- incidents ------------------------------------------------------------------------------ */

static const char *const incident_head[] = {"ID",         "CLUSTER",    "NAMESPACE", "WORKLOAD",
                                            "CONTAINER",  "CAUSE",      "RESTARTS",  "FIRST (UTC)",
                                            "LAST (UTC)", "ENDED (UTC)"};

struct list {
    struct table t;
    cJSON *json; /* --format json: the array */
    char first_cluster[CELL_MAX];
};

static int incident_row(const struct krc_store_incident *inc, void *ud)
{
    struct list *l = ud;
    char c[MAX_COLS][CELL_MAX];

    if (l->json != NULL) {
        cJSON *o = krc_incident_json(inc);
        if (o == NULL || !cJSON_AddItemToArray(l->json, o)) {
            cJSON_Delete(o);
            l->t.oom = 1;
            return 1;
        }
        return 0;
    }
    snprintf(c[0], CELL_MAX, "%lld", (long long)inc->id);
    snprintf(c[COL_CLUSTER], CELL_MAX, "%s",
             inc->cluster != NULL && inc->cluster[0] != '\0' ? inc->cluster : "-");
    snprintf(c[2], CELL_MAX, "%s", inc->namespace != NULL ? inc->namespace : "?");
    snprintf(c[3], CELL_MAX, "%s/%s", inc->workload_kind != NULL ? inc->workload_kind : "?",
             inc->workload_name != NULL ? inc->workload_name : "?");
    snprintf(c[4], CELL_MAX, "%s", inc->container != NULL ? inc->container : "-");
    snprintf(c[5], CELL_MAX, "%s", inc->cause != NULL ? inc->cause : "-");
    snprintf(c[6], CELL_MAX, "%lld", (long long)inc->restarts);
    krc_history_time_utc(inc->first_at, c[7], CELL_MAX);
    krc_history_time_utc(inc->last_at, c[8], CELL_MAX);
    if (inc->ended_at > 0) {
        krc_history_time_utc(inc->ended_at, c[9], CELL_MAX);
    } else {
        snprintf(c[9], CELL_MAX, "open");
    }
    if (l->t.rows > 0 && strcmp(l->first_cluster, c[COL_CLUSTER]) != 0) {
        l->t.hide = -1; /* rows of more than one cluster */
    } else if (l->t.rows == 0) {
        snprintf(l->first_cluster, sizeof(l->first_cluster), "%s", c[COL_CLUSTER]);
    }
    return table_add(&l->t, c);
}

static int run_incidents(const struct args *a)
{
    struct krc_store_incident_filter f;
    struct krc_store *s = NULL;
    struct krc_error err;
    struct list l;
    char kind[64];
    char name[254];
    long n = INCIDENTS_DEFAULT;
    int json = parse_format("incidents", a->val[O_FORMAT], "table");
    int status;
    int rc;

    memset(&f, 0, sizeof(f));
    memset(&l, 0, sizeof(l));
    /* open and recent: by default the open ones and those ended in the last 24 h */
    if (json < 0 ||
        parse_since("incidents", a->val[O_SINCE] != NULL ? a->val[O_SINCE] : "24h", &f.since) !=
            0 ||
        (a->val[O_LIMIT] != NULL &&
         krc_history_parse_long("--limit", a->val[O_LIMIT], 1, 1000000, &n) != 0)) {
        return USAGE;
    }
    if (a->val[O_WORKLOAD] != NULL) {
        const char *why =
            krc_workload_ref_parse(a->val[O_WORKLOAD], kind, sizeof(kind), name, sizeof(name));
        if (why != NULL) {
            fprintf(stderr, "krc history incidents: --workload '%s' %s\n", a->val[O_WORKLOAD], why);
            return USAGE;
        }
        f.workload_kind = kind;
        f.workload_name = name;
    }
    f.cluster = a->val[O_CLUSTER];
    f.namespace = a->val[O_NAMESPACE];
    f.open_only = a->open;
    f.limit = n;
    l.t.head = incident_head;
    l.t.cols = MAX_COLS;
    if ((status = krc_history_open_db(a->val[O_DB], a->val[O_PASSWORD], &s)) != 0) {
        return status;
    }
    l.t.hide = krc_store_shared(s) ? -1 : COL_CLUSTER; /* as krc history's CLUSTER column */
    if (json && (l.json = cJSON_CreateArray()) == NULL) {
        krc_store_close(s);
        fprintf(stderr, "krc history: out of memory\n");
        return 1;
    }
    krc_error_clear(&err);
    rc = krc_store_incidents_list(s, &f, incident_row, &l, &err);
    krc_store_close(s);
    if (l.t.oom) {
        fprintf(stderr, "krc history: out of memory\n");
        status = 1;
    } else if (rc < 0) {
        fprintf(stderr, "krc history: %s\n", err.msg);
        status = 1;
    } else if (json) {
        status = krc_history_print_json(l.json) < 0 ? 1 : 0;
    } else if (l.t.rows == 0) {
        int narrowed = f.cluster || f.namespace || f.workload_kind;
        char t[40];
        krc_history_time_utc(f.since, t, sizeof(t));
        if (f.open_only) {
            printf("no open incidents%s\n", narrowed ? " that match" : "");
        } else {
            printf("no incidents%s open or ended since %s UTC\n", narrowed ? " that match" : "", t);
        }
    } else {
        table_print(&l.t);
    }
    table_free(&l.t);
    cJSON_Delete(l.json);
    return krc_history_finish(status);
}

/* ---- changes -------------------------------------------------------------------------------- */

static const char *const change_head[] = {"TIME (UTC)", "CHANGED", "REVISION", "MANAGER", "WHAT"};

/* The table row of a change (its JSON, krc_change_json). */
static int change_cells(struct table *t, const cJSON *c)
{
    char cell[MAX_COLS][CELL_MAX];
    const cJSON *it;
    size_t n = 0;
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "namespace"));
    const char *at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "at"));
    const char *rev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "revision"));
    const char *mgr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "manager"));
    const char *sum = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "summary"));

    snprintf(cell[0], CELL_MAX, "%s", at != NULL ? at : "-");
    if (strlen(cell[0]) == 20 && cell[0][10] == 'T') { /* as the other tables: "... 17:44:37" */
        cell[0][10] = ' ';
        cell[0][19] = '\0';
    }
    snprintf(cell[1], CELL_MAX, "%s %s%s%s",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "kind")),
             ns != NULL && ns[0] != '\0' ? ns : "", ns != NULL && ns[0] != '\0' ? "/" : "",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name")));
    snprintf(cell[2], CELL_MAX, "%s", rev != NULL ? rev : "-");
    snprintf(cell[3], CELL_MAX, "%s", mgr != NULL ? mgr : "-");
    cell[4][0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(c, "items"))
    {
        if (cJSON_IsString(it) && n < CELL_MAX) {
            n += (size_t)snprintf(cell[4] + n, CELL_MAX - n, "%s%s", n > 0 ? "; " : "",
                                  it->valuestring);
        }
    }
    if (n == 0) {
        snprintf(cell[4], CELL_MAX, "%s", sum != NULL ? sum : "-");
    }
    return table_add(t, cell);
}

/* Print changes (a JSON array) as a table under the indent-less header. */
static int print_changes(const cJSON *changes)
{
    struct table t;
    const cJSON *c;
    int ok = 1;

    memset(&t, 0, sizeof(t));
    t.head = change_head;
    t.cols = 5;
    t.hide = -1;
    cJSON_ArrayForEach(c, changes)
    {
        if (change_cells(&t, c) != 0) {
            ok = 0;
            break;
        }
    }
    if (ok) {
        table_print(&t);
    }
    table_free(&t);
    return ok ? 0 : KRC_ENOMEM;
}

/* "NS/KIND/NAME" into ns, and kind/name. USAGE after saying why. */
static int parse_workload3(const char *v, char *ns, size_t nssz, char *kind, char *name)
{
    const char *slash = strchr(v, '/');
    const char *why;

    if (slash == NULL || (size_t)(slash - v) >= nssz || slash == v ||
        strchr(slash + 1, '/') == NULL) {
        fprintf(stderr,
                "krc history changes: --workload '%s' must be NAMESPACE/KIND/NAME, e.g. "
                "shop/Deployment/api\n",
                v);
        return USAGE;
    }
    memcpy(ns, v, (size_t)(slash - v));
    ns[slash - v] = '\0';
    if ((why = krc_workload_ref_parse(slash + 1, kind, 64, name, 254)) != NULL) {
        fprintf(stderr, "krc history changes: --workload '%s': KIND/NAME %s\n", v, why);
        return USAGE;
    }
    return 0;
}

static int run_changes(const struct args *a)
{
    struct krc_change_target ct;
    struct krc_store *s = NULL;
    struct krc_error err;
    char ns[64];
    char kind[64];
    char name[254];
    int64_t since;
    long n = CHANGES_DEFAULT;
    cJSON *changes = NULL;
    int json = parse_format("changes", a->val[O_FORMAT], "table");
    int status;
    int rc;

    if (a->val[O_WORKLOAD] == NULL) {
        fprintf(stderr, "krc history changes: --workload NAMESPACE/KIND/NAME is required, e.g. "
                        "shop/Deployment/api\n");
        return USAGE;
    }
    if (json < 0 || parse_workload3(a->val[O_WORKLOAD], ns, sizeof(ns), kind, name) != 0 ||
        parse_since("changes", a->val[O_SINCE], &since) != 0 ||
        (a->val[O_LIMIT] != NULL &&
         krc_history_parse_long("--limit", a->val[O_LIMIT], 1, 1000000, &n) != 0)) {
        return USAGE;
    }
    if ((status = krc_history_open_db(a->val[O_DB], a->val[O_PASSWORD], &s)) != 0) {
        return status;
    }
    krc_error_clear(&err);
    rc = krc_change_target_resolve(s, a->val[O_CLUSTER], ns, kind, name, NULL, NULL, NULL, &ct,
                                   &err);
    if (rc == 0) {
        rc = krc_change_target_list(s, ns, &ct, since, 0, n, &changes, &err);
    }
    krc_store_close(s);
    if (rc < 0) {
        fprintf(stderr, "krc history: %s\n", err.msg);
        return 1;
    }
    if (json) {
        status = krc_history_print_json(changes) < 0 ? 1 : 0;
    } else if (cJSON_GetArraySize(changes) == 0) {
        printf("no changes of %s/%s in namespace %s%s recorded%s\n", kind, name, ns,
               ct.n_nodes > 0 ? " or its nodes" : "", since > 0 ? " in that time" : "");
    } else {
        status = print_changes(changes) < 0 ? 1 : 0;
    }
    if (status != 0) {
        fprintf(stderr, "krc history: out of memory\n");
    }
    cJSON_Delete(changes);
    return krc_history_finish(status);
}

/* ---- incident ID ---------------------------------------------------------------------------- */

/* {restart (all keys), message, report} of a stored restart; null when it is
 * gone (pruned). */
static cJSON *evidence_json(const struct krc_store_entry *e)
{
    cJSON *o;
    cJSON *rep;

    if (e == NULL) {
        return cJSON_CreateNull();
    }
    o = cJSON_CreateObject();
    rep = e->report_json != NULL ? cJSON_Parse(e->report_json) : NULL;
    if (!krc_report_json_put(o, "restart", krc_store_row_json(&e->row, KRC_ROW_JSON_FULL)) ||
        !krc_report_json_put(o, "message", krc_report_json_str(e->message)) ||
        !krc_report_json_put(o, "report",
                             rep != NULL              ? rep
                             : e->report_json != NULL ? cJSON_CreateString(e->report_json)
                                                      : cJSON_CreateNull())) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int print_incident_json(const struct krc_store_incident_detail *d, cJSON *changes)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *msgs = cJSON_CreateArray();
    int ok =
        krc_report_json_put(o, "incident", krc_incident_json(&d->inc)) &&
        krc_report_json_put(o, "first", evidence_json(d->first)) &&
        krc_report_json_put(o, "latest", evidence_json(d->latest)) &&
        krc_report_json_put(o, "changes", cJSON_Duplicate(changes, 1)) &&
        krc_report_json_put(o, "messages", msgs) &&
        krc_report_json_put(o, "messages_total",
                            cJSON_CreateNumber((double)(d->n_messages_total > (int64_t)d->n_messages
                                                            ? d->n_messages_total
                                                            : (int64_t)d->n_messages)));

    if (!ok && cJSON_GetObjectItemCaseSensitive(o, "messages") == NULL) {
        cJSON_Delete(msgs);
    }
    for (size_t i = 0; ok && i < d->n_messages; i++) {
        cJSON *m = krc_incident_message_json(&d->messages[i], 0, 1);
        ok = m != NULL && cJSON_AddItemToArray(msgs, m);
        if (!ok) {
            cJSON_Delete(m);
        }
    }
    ok = ok && krc_history_print_json(o) == 0;
    cJSON_Delete(o);
    return ok ? 0 : KRC_ENOMEM;
}

/* One failure: the restart's facts and its stored report. */
static void print_evidence(const char *title, const struct krc_store_entry *e, int64_t id)
{
    const struct krc_store_row *r;
    cJSON *rep;
    char line[1024];
    char t1[40];

    if (e == NULL) {
        printf("\n== %s: restart #%lld is no longer in the history ==\n", title, (long long)id);
        return;
    }
    r = &e->row;
    krc_history_time_utc(r->detected_at, t1, sizeof(t1));
    snprintf(line, sizeof(line), "== %s: restart #%lld, pod %s/%s, node %s, %s UTC ==", title,
             (long long)r->id, r->namespace, r->pod, r->node != NULL ? r->node : "-", t1);
    printf("\n");
    krc_history_print_block("", line, sizeof(line));
    if (r->has_exit_code) {
        snprintf(line, sizeof(line), "code %d%s%s, reason %s, restart %d", r->exit_code,
                 krc_signal_name(r->signal) != NULL ? " " : "",
                 krc_signal_name(r->signal) != NULL ? krc_signal_name(r->signal) : "",
                 r->reason != NULL ? r->reason : "-", r->restart_count);
        krc_history_print_field("Last exit:", line);
    }
    snprintf(line, sizeof(line), "%s (confidence: %s)", r->cause != NULL ? r->cause : "-",
             r->confidence != NULL ? r->confidence : "-");
    krc_history_print_field("Cause:", line);
    krc_history_print_field("Summary:", r->summary);
    rep = e->report_json != NULL ? cJSON_Parse(e->report_json) : NULL;
    if (rep != NULL) {
        krc_history_print_report(rep);
    } else {
        printf("(no diagnostics were stored for this restart)\n");
    }
    cJSON_Delete(rep);
}

/* The what-changed line the first alert said (the first report's). */
static void print_alerted_change(const struct krc_store_entry *first)
{
    cJSON *rep =
        first != NULL && first->report_json != NULL ? cJSON_Parse(first->report_json) : NULL;
    const char *line = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(rep, "what_changed"), "summary"));

    if (line != NULL) {
        printf("\nWhat changed, as the first alert said:\n");
        krc_history_print_block("  ", line, 4096);
    }
    cJSON_Delete(rep);
}

static void print_incident_text(const struct krc_store_incident_detail *d, const cJSON *changes)
{
    const struct krc_store_incident *inc = &d->inc;
    char line[1024];
    char t1[40];

    printf("Incident #%lld\n", (long long)inc->id);
    if (inc->cluster != NULL && inc->cluster[0] != '\0') {
        krc_history_print_field("Cluster:", inc->cluster);
    }
    snprintf(line, sizeof(line), "%s %s/%s, container %s", inc->workload_kind, inc->namespace,
             inc->workload_name, inc->container);
    krc_history_print_field("Workload:", line);
    krc_history_print_field("Cause:", inc->cause);
    snprintf(line, sizeof(line), "%lld (first restart #%lld, latest #%lld: krc history show ID)",
             (long long)inc->restarts, (long long)inc->first_restart_id,
             (long long)inc->latest_restart_id);
    krc_history_print_field("Restarts:", line);
    krc_history_time_utc(inc->first_at, t1, sizeof(t1));
    snprintf(line, sizeof(line), "%s UTC", t1);
    krc_history_print_field("First:", line);
    krc_history_time_utc(inc->last_at, t1, sizeof(t1));
    snprintf(line, sizeof(line), "%s UTC", t1);
    krc_history_print_field("Last:", line);
    krc_history_time_utc(inc->ended_at, t1, sizeof(t1));
    snprintf(line, sizeof(line), "%s UTC", t1);
    krc_history_print_field("Ended:", inc->ended_at > 0 ? line : "still open");
    print_alerted_change(d->first);
    if (cJSON_GetArraySize(changes) > 0) {
        printf("\nChanges recorded in the 24 h before the first restart:\n");
        print_changes(changes);
    } else {
        printf("\nNo change of the workload or its nodes recorded in the 24 h before the first "
               "restart.\n");
    }
    print_evidence("First failure", d->first, inc->first_restart_id);
    if (d->latest != NULL && d->first != NULL && d->latest->row.id == d->first->row.id) {
        printf("\n(the latest failure is the first)\n");
    } else {
        print_evidence("Latest failure", d->latest, inc->latest_restart_id);
    }
    printf("\nMessages (%lld):\n",
           (long long)(d->n_messages_total > (int64_t)d->n_messages ? d->n_messages_total
                                                                    : (int64_t)d->n_messages));
    for (size_t i = 0; i < d->n_messages; i++) {
        krc_history_print_outbox(&d->messages[i]);
    }
    if (d->n_messages_total > (int64_t)d->n_messages) {
        printf("  ... and %lld later ones not shown\n",
               (long long)(d->n_messages_total - (int64_t)d->n_messages));
    }
}

/* The changes of the workload and of the nodes of its first and latest
 * restart in the 24 h before its first restart. */
static int incident_changes(struct krc_store *s, const struct krc_store_incident_detail *d,
                            cJSON **ret, struct krc_error *err)
{
    struct krc_change_target ct;
    const struct krc_store_entry *e[2] = {d->first, d->latest};

    memset(&ct, 0, sizeof(ct));
    ct.cluster = d->inc.cluster; /* a shared database: that cluster's workload and nodes */
    snprintf(ct.kind, sizeof(ct.kind), "%s", d->inc.workload_kind ? d->inc.workload_kind : "");
    snprintf(ct.name, sizeof(ct.name), "%s", d->inc.workload_name ? d->inc.workload_name : "");
    for (int i = 0; i < 2; i++) {
        const char *node = e[i] != NULL ? e[i]->row.node : NULL;
        if (node != NULL && node[0] != '\0' && strlen(node) < sizeof(ct.nodes[0]) &&
            (ct.n_nodes == 0 || strcmp(ct.nodes[0], node) != 0)) {
            snprintf(ct.nodes[ct.n_nodes++], sizeof(ct.nodes[0]), "%s", node);
        }
    }
    return krc_change_target_list(s, d->inc.namespace, &ct,
                                  d->inc.first_at - KRC_INCIDENT_CHANGES_LOOKBACK,
                                  d->inc.first_at + 1, INCIDENT_CHANGES_MAX, ret, err);
}

static int run_incident(const struct args *a)
{
    struct krc_store_incident_detail *d = NULL;
    struct krc_store *s = NULL;
    struct krc_error err;
    cJSON *changes = NULL;
    long id;
    int json = parse_format("incident", a->val[O_FORMAT], "text");
    int status;
    int rc;

    if (json < 0) {
        return USAGE;
    }
    if (a->id == NULL) {
        fprintf(stderr, "krc history incident: which ID? (the first column of krc history "
                        "incidents)\n");
        return USAGE;
    }
    if (krc_history_parse_long("ID", a->id, 1, LONG_MAX, &id) != 0) {
        return USAGE;
    }
    if ((status = krc_history_open_db(a->val[O_DB], a->val[O_PASSWORD], &s)) != 0) {
        return status;
    }
    krc_error_clear(&err);
    rc = krc_store_incident_get(s, id, &d, &err);
    if (rc == 0) {
        rc = incident_changes(s, d, &changes, &err);
    }
    krc_store_close(s);
    if (rc < 0) {
        fprintf(stderr, "krc history: %s\n", err.msg);
        krc_store_incident_detail_free(d);
        return 1;
    }
    if (json) {
        status = print_incident_json(d, changes) < 0 ? 1 : 0;
    } else {
        print_incident_text(d, changes);
    }
    if (status != 0) {
        fprintf(stderr, "krc history: out of memory\n");
    }
    cJSON_Delete(changes);
    krc_store_incident_detail_free(d);
    return krc_history_finish(status);
}

int krc_history_incidents_main(int argc, char **argv, const char *what)
{
    struct args a;
    int rc = parse_args(argc, argv, what, &a);

    if (rc != 0) {
        return rc;
    }
    if (strcmp(what, "incidents") == 0) {
        return run_incidents(&a);
    }
    if (strcmp(what, "changes") == 0) {
        return run_changes(&a);
    }
    return run_incident(&a);
}
