/* `krc history`: list and show recorded restarts (read-only). */
#include "krc/cli/history.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/cli/db_target.h"
#include "history_int.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/config/config.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/util/json_indent.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc/model/report_json.h"
#include "krc/store/row_json.h"
#include "krc/store/store.h"

#define EXIT_USAGE 2
#define CELL_MAX 256 /* bytes of one table cell */

enum format { FMT_TABLE, FMT_JSON, FMT_TEXT };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: krc history [--db FILE|URL] [--db-password-file FILE] [--cluster NAME]\n"
            "                   [--namespace NS] [--pod NAME] [--cause CODE]\n"
            "                   [--since DURATION|TIME] [--limit N] [--format table|json]\n"
            "       krc history show ID [--db FILE|URL] [--db-password-file FILE]\n"
            "                   [--format text|json]\n"
            "  List the restarts krc run recorded, newest first, or show one in full.\n"
            "    --db FILE|URL    database: a SQLite file or a PostgreSQL URL\n"
            "                     (postgres://USER@HOST:PORT/DB) shared by replicas and\n"
            "                     clusters (default: $KRC_DB, else /var/lib/krc/krc.db in a\n"
            "                     cluster, else $XDG_STATE_HOME or ~/.local/state/krc/krc.db)\n"
            "    --db-password-file FILE\n"
            "                     PostgreSQL password: the first line of FILE (default:\n"
            "                     $KRC_DB_PASSWORD_FILE, else the URL's or libpq's own)\n"
            "    --cluster NAME   only restarts recorded by the krc whose clusterName is NAME\n"
            "    --namespace NS   only this namespace\n"
            "    --pod NAME       only pods whose name starts with NAME\n"
            "    --cause CODE     only this probable cause (oom_killed, app_error, ...)\n"
            "    --since D        only restarts detected in the last D (90s, 10m, 2h, 1d) or\n"
            "                     since the RFC 3339 time D (2026-12-03T08:00:00Z)\n"
            "    --limit N        at most N rows (default %d)\n"
            "    --format F       table (default) or json; for show: text or json\n"
            "\n"
            "       krc history incidents [--namespace NS] [--workload KIND/NAME] [--open]\n"
            "                   [--cluster NAME] [--since DURATION|TIME] [--limit N]\n"
            "                   [--format table|json]\n"
            "  Incidents (restarts of one workload's container with the same cause), newest\n"
            "  first: those open or ended in the last 24h, or since D (--since D); --open:\n"
            "  the open ones only.\n"
            "       krc history incident ID [--format text|json]\n"
            "  One incident: its counts, the changes before it, the first and the latest\n"
            "  failure (last state, events, node, log tail) and the messages sent about it.\n"
            "       krc history changes --workload NS/KIND/NAME [--since DURATION|TIME]\n"
            "                   [--cluster NAME] [--limit N] [--format table|json]\n"
            "  The changes recorded to a workload (shop/Deployment/api) and to the nodes of\n"
            "  its newest recorded restarts, newest first.\n"
            "  All take --db and --db-password-file as above.\n",
            KRC_HISTORY_DEFAULT_LIMIT);
}

/* Terminal-safe copy of s (krc_text_safe: control characters and escape
 * sequences shown as visible symbols, newlines kept when asked), at most max
 * bytes. NULL for NULL or out of memory. */
static char *safe(const char *s, size_t max, int keep_newlines)
{
    return krc_text_safe(s, max, keep_newlines ? KRC_TEXT_LINES : 0);
}

void krc_history_time_utc(int64_t t, char *out, size_t outsz)
{
    char ts[40];
    if (t <= 0) {
        snprintf(out, outsz, "-");
        return;
    }
    krc_clock_format_rfc3339(t, ts, sizeof(ts));
    /* "2026-12-02T17:30:05Z" -> "2026-12-02 17:30:05" */
    if (strlen(ts) == 20) {
        ts[10] = ' ';
        ts[19] = '\0';
    }
    snprintf(out, outsz, "%s", ts);
}

/* JSON for people: two spaces a level, as krc explain, jq and kubectl
 * print it. 0, or KRC_ENOMEM. */
int krc_history_print_json(const cJSON *o)
{
    char *compact = cJSON_PrintUnformatted(o);
    char *text = NULL;
    int rc = compact != NULL ? krc_json_indent(compact, strlen(compact), &text) : KRC_ENOMEM;
    cJSON_free(compact);
    if (rc < 0) {
        return KRC_ENOMEM;
    }
    printf("%s\n", text);
    krc_free(text);
    return 0;
}

/* ---- list ------------------------------------------------------------------------- */

#define N_COLS 10
#define COL_CLUSTER 1

struct table {
    char **cells; /* N_COLS per row */
    size_t rows;
    size_t cap;
    cJSON *json; /* FMT_JSON: the array */
    enum format fmt;
    int oom;
    int show_cluster; /* a shared store, or rows of more than one cluster */
};

static int collect_row(const struct krc_store_row *r, void *ud)
{
    struct table *t = ud;
    char buf[N_COLS][CELL_MAX];
    char ts[40];

    if (t->fmt == FMT_JSON) {
        cJSON *o = krc_store_row_json(r, KRC_ROW_JSON_FULL);
        if (o == NULL || !cJSON_AddItemToArray(t->json, o)) {
            cJSON_Delete(o);
            t->oom = 1;
            return 1;
        }
        return 0;
    }
    if (t->rows == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        char **nc = krc_realloc(t->cells, ncap * N_COLS * sizeof(char *));
        if (nc == NULL) {
            t->oom = 1;
            return 1;
        }
        t->cells = nc;
        t->cap = ncap;
    }
    krc_history_time_utc(r->detected_at, ts, sizeof(ts));
    snprintf(buf[0], CELL_MAX, "%lld", (long long)r->id);
    snprintf(buf[COL_CLUSTER], CELL_MAX, "%s",
             r->cluster != NULL && r->cluster[0] != '\0' ? r->cluster : "-"); /* "-": unnamed */
    snprintf(buf[2], CELL_MAX, "%s", ts);
    snprintf(buf[3], CELL_MAX, "%s/%s", r->namespace ? r->namespace : "?", r->pod ? r->pod : "?");
    snprintf(buf[4], CELL_MAX, "%s", r->container ? r->container : "-");
    snprintf(buf[5], CELL_MAX, "%d", r->restart_count);
    if (r->has_exit_code && krc_signal_name(r->signal) != NULL) {
        snprintf(buf[6], CELL_MAX, "%d (%s)", r->exit_code, krc_signal_name(r->signal));
    } else if (r->has_exit_code) {
        snprintf(buf[6], CELL_MAX, "%d", r->exit_code);
    } else {
        snprintf(buf[6], CELL_MAX, "-");
    }
    snprintf(buf[7], CELL_MAX, "%s", r->cause ? r->cause : "-");
    snprintf(buf[8], CELL_MAX, "%s", r->confidence ? r->confidence : "-");
    if (r->delivery == NULL) {
        snprintf(buf[9], CELL_MAX, "%s", r->decision ? r->decision : "-");
    } else if (strcmp(r->delivery, "delivered") == 0 || strcmp(r->delivery, "withdrawn") == 0 ||
               strcmp(r->delivery, "superseded") == 0) {
        /* withdrawn: folded into a storm summary before it was posted, never attempted;
         * superseded: the previous leader posted it, this replica did not try */
        snprintf(buf[9], CELL_MAX, "%s/%s", r->decision ? r->decision : "-", r->delivery);
    } else {
        snprintf(buf[9], CELL_MAX, "%s/%s (%d attempt%s)", r->decision ? r->decision : "-",
                 r->delivery, r->attempts, r->attempts == 1 ? "" : "s");
    }
    for (int i = 0; i < N_COLS; i++) {
        char *c = safe(buf[i], CELL_MAX, 0);
        if (c == NULL) {
            for (int j = 0; j < i; j++) {
                krc_free(t->cells[t->rows * N_COLS + (size_t)j]);
            }
            t->oom = 1;
            return 1;
        }
        t->cells[t->rows * N_COLS + (size_t)i] = c;
    }
    if (t->rows > 0 &&
        strcmp(t->cells[t->rows * N_COLS + COL_CLUSTER], t->cells[COL_CLUSTER]) != 0) {
        t->show_cluster = 1; /* rows of more than one cluster */
    }
    t->rows++;
    return 0;
}

/* Display width of UTF-8 text (code points; good enough for names). */
static size_t width(const char *s)
{
    return krc_text_utf8_count(s, strlen(s));
}

static void print_table(const struct table *t)
{
    static const char *const head[N_COLS] = {
        "ID",       "CLUSTER", "TIME (UTC)", "NAMESPACE/POD", "CONTAINER",
        "RESTARTS", "EXIT",    "CAUSE",      "CONFIDENCE",    "DECISION/DELIVERY"};
    size_t w[N_COLS];

    for (int i = 0; i < N_COLS; i++) {
        w[i] = strlen(head[i]);
        for (size_t r = 0; r < t->rows; r++) {
            size_t cw = width(t->cells[r * N_COLS + (size_t)i]);
            w[i] = cw > w[i] ? cw : w[i];
        }
    }
    for (size_t r = 0; r <= t->rows; r++) {
        for (int i = 0; i < N_COLS; i++) {
            const char *c = r == 0 ? head[i] : t->cells[(r - 1) * N_COLS + (size_t)i];
            if (i == COL_CLUSTER && !t->show_cluster) {
                continue;
            }
            if (i == N_COLS - 1) {
                printf("%s\n", c);
            } else {
                printf("%s%*s", c, (int)(w[i] - width(c) + 2), "");
            }
        }
    }
}

/* ---- show ------------------------------------------------------------------------- */

void krc_history_print_field(const char *label, const char *v)
{
    char *s = safe(v, KRC_REPORT_JSON_TEXT_MAX, 0);
    if (s != NULL && s[0] != '\0') {
        printf("%-12s%s\n", label, s);
    }
    krc_free(s);
}

/* Indented block of (possibly multi-line) text. */
void krc_history_print_block(const char *indent, const char *text, size_t max)
{
    char *s = safe(text, max, 1);
    const char *p = s;

    while (p != NULL && *p != '\0') {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        printf("%s%.*s\n", indent, len, p);
        p = nl ? nl + 1 : NULL;
    }
    krc_free(s);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Slack mrkdwn entities back to characters, for a terminal. */
static char *unescape_mrkdwn(const char *s)
{
    struct krc_buf b;
    char *out;

    krc_buf_init(&b, strlen(s) + 1);
    for (const char *p = s; *p != '\0'; p++) {
        int rc;
        if (strncmp(p, "&amp;", 5) == 0) {
            rc = krc_buf_append_char(&b, '&');
            p += 4;
        } else if (strncmp(p, "&lt;", 4) == 0) {
            rc = krc_buf_append_char(&b, '<');
            p += 3;
        } else if (strncmp(p, "&gt;", 4) == 0) {
            rc = krc_buf_append_char(&b, '>');
            p += 3;
        } else {
            rc = krc_buf_append_char(&b, *p);
        }
        if (rc < 0) {
            krc_buf_cleanup(&b);
            return NULL;
        }
    }
    out = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    return out;
}

/* The alert text: the stored message, else the "text" of the first
 * notification body. */
static void print_message(const struct krc_store_entry *e)
{
    const char *text = e->message;
    cJSON *body = NULL;
    char *plain;

    if (text == NULL && e->n_messages > 0 && e->messages[0].body != NULL) {
        body = cJSON_Parse(e->messages[0].body);
        text = jstr(body, "text");
    }
    if (text != NULL && (plain = unescape_mrkdwn(text)) != NULL) {
        printf("\nMessage (as sent to Slack):\n");
        krc_history_print_block("  ", plain, 64 * 1024);
        krc_free(plain);
    }
    cJSON_Delete(body);
}

static void print_strings(const char *title, const cJSON *a, const char *bullet)
{
    const cJSON *it;

    if (cJSON_GetArraySize(a) == 0) {
        return;
    }
    printf("%s\n", title);
    cJSON_ArrayForEach(it, a)
    {
        if (cJSON_IsString(it)) {
            krc_history_print_block(bullet, it->valuestring, 4096);
        }
    }
}

void krc_history_print_report(const cJSON *rep)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(rep, "diagnosis");
    const cJSON *a;
    const cJSON *it;
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(rep, "node");
    const cJSON *log = cJSON_GetObjectItemCaseSensitive(rep, "log");
    char line[1024];

    a = cJSON_GetObjectItemCaseSensitive(d, "evidence");
    if (cJSON_GetArraySize(a) > 0) {
        printf("\nEvidence:\n");
        cJSON_ArrayForEach(it, a)
        {
            if (cJSON_IsString(it)) {
                krc_history_print_block("  - ", it->valuestring, 4096);
            }
        }
    }
    print_strings("\nNot checked:", cJSON_GetObjectItemCaseSensitive(d, "unchecked"), "  - ");
    a = cJSON_GetObjectItemCaseSensitive(rep, "containers");
    if (cJSON_GetArraySize(a) > 0) {
        printf("\nContainers:\n");
        cJSON_ArrayForEach(it, a)
        {
            const cJSON *last = cJSON_GetObjectItemCaseSensitive(it, "last");
            int n = snprintf(
                line, sizeof(line), "%s%s: %s, %d restarts, %s%s%s",
                jstr(it, "name") ? jstr(it, "name") : "?",
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "is_init")) ? " (init)" : "",
                jstr(it, "image") ? jstr(it, "image") : "?", (int)jnum(it, "restart_count"),
                jstr(it, "state") ? jstr(it, "state") : "unknown",
                jstr(it, "state_reason") ? " " : "",
                jstr(it, "state_reason") ? jstr(it, "state_reason") : "");
            if (cJSON_IsObject(last) && n > 0 && (size_t)n < sizeof(line)) {
                snprintf(line + n, sizeof(line) - (size_t)n, "; last exit %d%s%s",
                         (int)jnum(last, "exit_code"), jstr(last, "reason") ? " " : "",
                         jstr(last, "reason") ? jstr(last, "reason") : "");
            }
            krc_history_print_block("  ", line, sizeof(line));
            if (jstr(it, "state_message") != NULL) {
                krc_history_print_block("      ", jstr(it, "state_message"), 4096);
            }
            if (cJSON_IsObject(last) && jstr(last, "message") != NULL) {
                krc_history_print_block("      last message: ", jstr(last, "message"), 4096);
            }
        }
    }
    a = cJSON_GetObjectItemCaseSensitive(rep, "events");
    if (cJSON_GetArraySize(a) > 0) {
        printf("\nEvents:\n");
        cJSON_ArrayForEach(it, a)
        {
            const char *last = jstr(it, "last");
            snprintf(line, sizeof(line), "%s %s %s (x%d): %s", last ? last : "-",
                     jstr(it, "type") ? jstr(it, "type") : "?",
                     jstr(it, "reason") ? jstr(it, "reason") : "?", (int)jnum(it, "count"),
                     jstr(it, "message") ? jstr(it, "message") : "");
            krc_history_print_block("  ", line, sizeof(line));
        }
    }
    if (cJSON_IsObject(node)) {
        snprintf(line, sizeof(line), "Node %s:%s%s", jstr(node, "name") ? jstr(node, "name") : "?",
                 jstr(node, "kubelet_version") != NULL ? " kubelet " : "",
                 jstr(node, "kubelet_version") != NULL ? jstr(node, "kubelet_version") : "");
        printf("\n");
        krc_history_print_block("", line, sizeof(line));
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "conditions"))
        {
            snprintf(line, sizeof(line), "%s=%s %s %s", jstr(it, "type") ? jstr(it, "type") : "?",
                     jstr(it, "status") ? jstr(it, "status") : "?",
                     jstr(it, "reason") ? jstr(it, "reason") : "",
                     jstr(it, "message") ? jstr(it, "message") : "");
            krc_history_print_block("  ", line, sizeof(line));
        }
    }
    a = cJSON_GetObjectItemCaseSensitive(rep, "notes");
    if (cJSON_GetArraySize(a) > 0) {
        printf("\nCollection notes:\n");
        cJSON_ArrayForEach(it, a)
        {
            if (cJSON_IsString(it)) {
                krc_history_print_block("  - ", it->valuestring, 4096);
            }
        }
    }
    if (cJSON_IsObject(log)) {
        const char *text = jstr(log, "text");
        if (text != NULL) {
            double omitted = jnum(log, "omitted_bytes");
            snprintf(line, sizeof(line), "Previous log of %s (%.0f bytes%s%s):",
                     jstr(log, "container") ? jstr(log, "container") : "?", jnum(log, "bytes"),
                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(log, "truncated"))
                         ? ", cut by the collector"
                         : "",
                     omitted > 0 ? ", earlier part not stored" : "");
            printf("\n");
            krc_history_print_block("", line, sizeof(line));
            const cJSON *cut = cJSON_GetObjectItemCaseSensitive(log, "cut");
            if (cJSON_IsObject(cut) && jstr(cut, "note") != NULL) {
                snprintf(line, sizeof(line), "(%s)", jstr(cut, "note"));
                krc_history_print_block("  ", line, sizeof(line));
            }
            krc_history_print_block("  | ", text, KRC_REPORT_JSON_LOG_MAX + 1024);
        } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(log, "empty"))) {
            printf("\nPrevious log: empty\n");
        } else {
            printf("\nPrevious log: not captured\n");
        }
    }
}

void krc_history_print_outbox(const struct krc_store_message *m)
{
    char t1[40];
    char t2[40];
    char line[1024];

    krc_history_time_utc(m->created_at, t1, sizeof(t1));
    krc_history_time_utc(m->delivered_at, t2, sizeof(t2));
    snprintf(line, sizeof(line), "#%lld %s to %s%s%s: %s, %d attempt%s, queued %s%s%s%s%s",
             (long long)m->id, krc_store_kind_name(m->kind), m->destination,
             m->channel ? " channel " : "", m->channel ? m->channel : "",
             krc_store_state_name(m->state), m->attempts, m->attempts == 1 ? "" : "s", t1,
             m->delivered_at > 0 ? ", delivered " : "", m->delivered_at > 0 ? t2 : "",
             m->message_ref ? ", ts " : "", m->message_ref ? m->message_ref : "");
    krc_history_print_block("  ", line, sizeof(line));
    if (m->state == KRC_STORE_WITHDRAWN) {
        printf("      not posted: grouped into the alert-storm summary\n");
    } else if (m->state == KRC_STORE_SUPERSEDED) {
        printf("      not posted by this replica: the previous leader posted this restart\n");
    }
    if (m->last_error != NULL) {
        krc_history_print_block("      last error: ", m->last_error, 1024);
    }
}

static void print_delivery(const struct krc_store_entry *e)
{
    if (e->n_messages == 0) {
        char line[256];
        snprintf(line, sizeof(line), "nothing to send (decision %s)",
                 e->row.decision ? e->row.decision : "-");
        printf("\n");
        krc_history_print_field("Delivery:", line);
        return;
    }
    printf("\nDelivery:\n");
    for (size_t i = 0; i < e->n_messages; i++) {
        krc_history_print_outbox(&e->messages[i]);
    }
}

/* The next step and the commands, from the stored diagnosis (restarts
 * recorded before issue 11 have none). */
static void print_next_step(const cJSON *rep)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(rep, "diagnosis");

    krc_history_print_field("Next step:", jstr(d, "next_step"));
    print_strings("Commands:", cJSON_GetObjectItemCaseSensitive(d, "commands"), "  $ ");
}

static void print_show_text(const struct krc_store_entry *e)
{
    const struct krc_store_row *r = &e->row;
    cJSON *rep = e->report_json != NULL ? cJSON_Parse(e->report_json) : NULL;
    char line[1024];
    char t1[40];
    char t2[40];

    snprintf(line, sizeof(line), "%s/%s container %s, restart %d", r->namespace, r->pod,
             r->container, r->restart_count);
    printf("Restart #%lld\n", (long long)r->id);
    krc_history_print_field("Cluster:", r->cluster);
    krc_history_print_field("Pod:", line);
    krc_history_print_field("Pod UID:", r->pod_uid);
    if (r->workload_kind != NULL && r->workload_name != NULL) {
        snprintf(line, sizeof(line), "%s %s", r->workload_kind, r->workload_name);
        krc_history_print_field("Workload:", line);
    }
    krc_history_print_field("Node:", r->node);
    krc_history_time_utc(r->detected_at, t1, sizeof(t1));
    snprintf(line, sizeof(line), "%s UTC", t1);
    krc_history_print_field("Detected:", line);
    krc_history_time_utc(r->started_at, t1, sizeof(t1));
    krc_history_time_utc(r->finished_at, t2, sizeof(t2));
    if (r->has_exit_code) {
        const char *sig = krc_signal_name(r->signal);
        snprintf(line, sizeof(line), "code %d%s%s%s, reason %s, ran %s .. %s UTC", r->exit_code,
                 sig ? " (" : "", sig ? sig : "", sig ? ")" : "", r->reason ? r->reason : "-", t1,
                 t2);
    } else {
        snprintf(line, sizeof(line), "unknown");
    }
    krc_history_print_field("Last exit:", line);
    if (r->confidence != NULL && r->cause != NULL) {
        /* "intentional" is in the stored diagnosis only (issue 26), not a column */
        snprintf(line, sizeof(line), "%s (confidence: %s%s)", r->cause, r->confidence,
                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
                     cJSON_GetObjectItemCaseSensitive(rep, "diagnosis"), "intentional"))
                     ? "; intentional"
                     : "");
        krc_history_print_field("Cause:", line);
    } else {
        krc_history_print_field("Cause:", r->cause);
    }
    krc_history_print_field("Summary:", r->summary);
    print_next_step(rep);
    krc_history_print_field("Decision:", r->decision);
    print_message(e);
    if (rep != NULL) {
        krc_history_print_report(rep);
    } else if (e->report_json != NULL) {
        printf("\n(the stored diagnostics are not valid JSON)\n");
    } else {
        printf("\n(no diagnostics were stored for this restart)\n");
    }
    print_delivery(e);
    cJSON_Delete(rep);
}

static int print_show_json(const struct krc_store_entry *e)
{
    cJSON *o = krc_store_row_json(&e->row, KRC_ROW_JSON_FULL);
    cJSON *msgs = NULL;
    int ok = o != NULL;

    ok = ok && krc_report_json_put(o, "message", krc_report_json_str(e->message));
    ok = ok && krc_report_json_put(o, "report", krc_report_json_doc(e->report_json));
    msgs = ok ? cJSON_CreateArray() : NULL;
    ok = ok && krc_report_json_put(o, "notifications", msgs);
    for (size_t i = 0; ok && i < e->n_messages; i++) {
        const struct krc_store_message *m = &e->messages[i];
        cJSON *n = cJSON_CreateObject();
        ok = n != NULL && cJSON_AddItemToArray(msgs, n);
        if (!ok) {
            cJSON_Delete(n);
            break;
        }
        ok = ok && krc_report_json_put(n, "id", cJSON_CreateNumber((double)m->id));
        ok =
            ok && krc_report_json_put(n, "kind", krc_report_json_str(krc_store_kind_name(m->kind)));
        ok = ok && krc_report_json_put(n, "destination", krc_report_json_str(m->destination));
        ok = ok && krc_report_json_put(n, "channel", krc_report_json_str(m->channel));
        ok = ok && krc_report_json_put(n, "thread_key", krc_report_json_str(m->thread_key));
        ok = ok &&
             krc_report_json_put(n, "state", krc_report_json_str(krc_store_state_name(m->state)));
        ok = ok && krc_report_json_put(n, "attempts", cJSON_CreateNumber(m->attempts));
        ok = ok && krc_report_json_put(n, "last_error", krc_report_json_str(m->last_error));
        ok = ok && krc_report_json_put(n, "created_at", krc_report_json_time(m->created_at));
        ok = ok && krc_report_json_put(n, "updated_at", krc_report_json_time(m->updated_at));
        ok = ok && krc_report_json_put(n, "delivered_at", krc_report_json_time(m->delivered_at));
        ok = ok && krc_report_json_put(n, "slack_ts", krc_report_json_str(m->message_ref));
        ok = ok && krc_report_json_put(n, "body", krc_report_json_doc(m->body));
        ok = ok && krc_report_json_put(n, "fallback", krc_report_json_doc(m->fallback));
    }
    ok = ok && krc_history_print_json(o) == 0;
    cJSON_Delete(o);
    if (!ok) {
        fprintf(stderr, "krc history: out of memory\n");
        return 1;
    }
    return 0;
}

/* ---- main ---------------------------------------------------------------------------- */

/* The database of --db and --db-password-file (NULL: their defaults),
 * read-only. 0, or 1 after saying why. */
int krc_history_open_db(const char *db, const char *password_file, struct krc_store **ret)
{
    struct krc_db_target t;
    struct krc_store_options o;
    struct krc_error err;
    int rc;

    if (krc_db_target_resolve("krc history", db, password_file, &t) != 0) {
        return 1;
    }
    memset(&o, 0, sizeof(o));
    o.password_file = t.password_file; /* the cluster of o is no filter when reading */
    krc_error_clear(&err);
    rc = krc_store_open_with(t.target, KRC_STORE_READONLY, &o, ret, &err);
    if (rc == KRC_ENOTFOUND) {
        fprintf(stderr, "krc history: no history at %s: krc run has not recorded anything yet\n",
                t.display);
        return 1;
    }
    if (rc < 0 && krc_store_is_url(t.target)) {
        /* named without its password, whatever the backend's message says */
        fprintf(stderr, "krc history: cannot open %s: %s\n", t.display, err.msg);
        return 1;
    }
    if (rc < 0) {
        fprintf(stderr, "krc history: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int krc_history_parse_long(const char *opt, const char *v, long min, long max, long *ret)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < min || n > max) {
        fprintf(stderr, "krc history: %s must be a number from %ld to %ld, not '%s'\n", opt, min,
                max, v);
        return EXIT_USAGE;
    }
    *ret = n;
    return 0;
}

int krc_history_finish(int status)
{
    if (fflush(stdout) != 0) {
        fprintf(stderr, "krc history: cannot write the output: %s\n", KRC_ERRNO_STR(errno));
        return 1;
    }
    return status;
}

static int run_show(const char *const *val, const char *id_text, enum format fmt)
{
    struct krc_store *s = NULL;
    struct krc_store_entry *e = NULL;
    struct krc_error err;
    long id;
    int status;

    if (krc_history_parse_long("ID", id_text, 1, LONG_MAX, &id) != 0) {
        return EXIT_USAGE;
    }
    if ((status = krc_history_open_db(val[0], val[8], &s)) != 0) {
        return status;
    }
    krc_error_clear(&err);
    if (krc_store_get(s, id, &e, &err) < 0) {
        fprintf(stderr, "krc history: %s\n", err.msg);
        krc_store_close(s);
        return 1;
    }
    if (fmt == FMT_JSON) {
        status = print_show_json(e);
    } else {
        print_show_text(e);
        status = 0;
    }
    krc_store_entry_free(e);
    krc_store_close(s);
    return krc_history_finish(status);
}

static int run_list(const char *const *val, const struct krc_store_filter *f, enum format fmt)
{
    struct krc_store *s = NULL;
    struct krc_error err;
    struct table t;
    int status;
    int rc;

    memset(&t, 0, sizeof(t));
    t.fmt = fmt;
    if ((status = krc_history_open_db(val[0], val[8], &s)) != 0) {
        return status;
    }
    t.show_cluster = krc_store_shared(s);
    if (fmt == FMT_JSON && (t.json = cJSON_CreateArray()) == NULL) {
        krc_store_close(s);
        fprintf(stderr, "krc history: out of memory\n");
        return 1;
    }
    krc_error_clear(&err);
    rc = krc_store_list(s, f, collect_row, &t, &err);
    krc_store_close(s);
    if (t.oom) {
        fprintf(stderr, "krc history: out of memory\n");
        status = 1;
    } else if (rc < 0) {
        fprintf(stderr, "krc history: %s\n", err.msg);
        status = 1;
    } else if (fmt == FMT_JSON) {
        if (krc_history_print_json(t.json) < 0) {
            fprintf(stderr, "krc history: out of memory\n");
            status = 1;
        }
    } else if (t.rows == 0) {
        printf("no restarts recorded%s\n",
               f->cluster || f->namespace || f->pod || f->cause || f->since ? " that match" : "");
    } else {
        print_table(&t);
    }
    for (size_t i = 0; i < t.rows * N_COLS; i++) {
        krc_free(t.cells[i]);
    }
    krc_free(t.cells);
    cJSON_Delete(t.json);
    return krc_history_finish(status);
}

/* The list filter of the options val[1..5] and val[7] (--namespace, --pod,
 * --cause, --since, --limit, --cluster; borrowed). Returns 0, or EXIT_USAGE
 * after saying why. */
static int list_filter(const char *const *val, struct krc_store_filter *f)
{
    long n;

    memset(f, 0, sizeof(*f));
    f->cluster = val[7];
    f->namespace = val[1];
    f->pod = val[2];
    f->limit = KRC_HISTORY_DEFAULT_LIMIT;
    if (val[3] != NULL) {
        enum krc_cause c;
        if (krc_cause_parse(val[3], &c) < 0) {
            fprintf(stderr, "krc history: --cause '%s' is not a cause code; one of:", val[3]);
            for (int i = 0; i < KRC_CAUSE_COUNT; i++) {
                fprintf(stderr, " %s", krc_cause_name((enum krc_cause)i));
            }
            fprintf(stderr, "\n");
            return EXIT_USAGE;
        }
        f->cause = krc_cause_name(c);
    }
    if (val[4] != NULL && krc_parse_since(val[4], krc_clock_now(), &f->since) < 0) {
        fprintf(stderr,
                "krc history: --since '%s' is neither a duration such as 90s, 10m, 2h, 1d or "
                "1h30m nor an RFC 3339 time such as 2026-12-03T08:00:00Z\n",
                val[4]);
        return EXIT_USAGE;
    }
    if (val[5] != NULL) {
        if (krc_history_parse_long("--limit", val[5], 1, 1000000, &n) != 0) {
            return EXIT_USAGE;
        }
        f->limit = n;
    }
    return 0;
}

/* The first argument that is neither an option nor an option's value, when
 * it is incidents, incident or changes (history_incidents.c); else NULL. */
static const char *subcommand(int argc, char **argv)
{
    static const char *const subs[] = {"incidents", "incident", "changes"};

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--open") == 0) {
            continue; /* incidents' flag: takes no value */
        }
        if (strncmp(argv[i], "--", 2) == 0) {
            i += strchr(argv[i], '=') == NULL; /* its value */
            continue;
        }
        for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
            if (strcmp(argv[i], subs[k]) == 0) {
                return subs[k];
            }
        }
        return NULL;
    }
    return NULL;
}

int krc_history_main(int argc, char **argv)
{
    static const char *const opts[] = {"--db",     "--namespace", "--pod",
                                       "--cause",  "--since",     "--limit",
                                       "--format", "--cluster",   "--db-password-file"};
    enum { N_OPTS = sizeof(opts) / sizeof(opts[0]) };
    const char *val[N_OPTS] = {0};
    const char *show_id = NULL;
    const char *sub;
    int show = 0;
    struct krc_store_filter f;
    enum format fmt;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
    }
    if ((sub = subcommand(argc, argv)) != NULL) {
        return krc_history_incidents_main(argc, argv, sub);
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *eq;
        size_t nl;
        int k;

        if (strncmp(a, "--", 2) != 0) {
            if (!show && strcmp(a, "show") == 0 && show_id == NULL) {
                show = 1;
            } else if (show && show_id == NULL) {
                show_id = a;
            } else {
                fprintf(stderr, "krc history: unexpected argument '%s'\n", a);
                usage(stderr);
                return EXIT_USAGE;
            }
            continue;
        }
        eq = strchr(a, '=');
        nl = eq ? (size_t)(eq - a) : strlen(a);
        for (k = 0; k < N_OPTS; k++) {
            if (strlen(opts[k]) == nl && strncmp(a, opts[k], nl) == 0) {
                break;
            }
        }
        if (k == N_OPTS) {
            fprintf(stderr, "krc history: unknown option '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
        if (val[k] != NULL) {
            fprintf(stderr, "krc history: %s given twice\n", opts[k]);
            return EXIT_USAGE;
        }
        if (eq != NULL) {
            val[k] = eq + 1;
        } else if (i + 1 < argc) {
            val[k] = argv[++i];
        } else {
            fprintf(stderr, "krc history: %s needs a value\n", opts[k]);
            return EXIT_USAGE;
        }
        if (val[k][0] == '\0') {
            fprintf(stderr, "krc history: %s needs a non-empty value\n", opts[k]);
            return EXIT_USAGE;
        }
    }

    fmt = show ? FMT_TEXT : FMT_TABLE;
    if (val[6] != NULL) {
        if (strcmp(val[6], "json") == 0) {
            fmt = FMT_JSON;
        } else if (!show && strcmp(val[6], "table") == 0) {
            fmt = FMT_TABLE;
        } else if (show && strcmp(val[6], "text") == 0) {
            fmt = FMT_TEXT;
        } else {
            fprintf(stderr, "krc history: --format must be %s or json, not '%s'\n",
                    show ? "text" : "table", val[6]);
            return EXIT_USAGE;
        }
    }
    if (show) {
        for (int k = 1; k <= 7; k++) {
            if (k != 6 && val[k] != NULL) {
                fprintf(stderr, "krc history show: %s applies to the list only\n", opts[k]);
                return EXIT_USAGE;
            }
        }
        if (show_id == NULL) {
            fprintf(stderr, "krc history show: which ID? (the first column of krc history)\n");
            return EXIT_USAGE;
        }
        return run_show(val, show_id, fmt);
    }

    if (list_filter(val, &f) != 0) {
        return EXIT_USAGE;
    }
    return run_list(val, &f, fmt);
}
