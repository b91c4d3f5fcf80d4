/* The Slack messages (alert/dest/slack.h): the restart alert (the report's
 * sections after the diagnosis: pod events, the node, collection notes, the
 * log tail, the context line), its text-only fallback, the storm summary
 * and the "recovered" reply, built from slack_format.c's blocks. */
#include "krc/alert/dest/slack.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slack_blocks.h"
#include "krc/util/logtail.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

struct ev_group {
    const struct krc_report_event *e; /* newest of the group */
    const char *msg;                  /* without "(combined from similar events): " */
    long count;
    int node; /* an event of the node (else of the pod) */
    int64_t last;
};

static const char *strip_combined(const char *m)
{
    static const char prefix[] = "(combined from similar events): ";

    if (m != NULL && strncmp(m, prefix, sizeof(prefix) - 1) == 0) {
        return m + sizeof(prefix) - 1;
    }
    return m;
}

static int str_same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int ev_cmp(const void *pa, const void *pb)
{
    const struct ev_group *a = pa;
    const struct ev_group *b = pb;
    int c;

    if (a->node != b->node) {
        return a->node - b->node;
    }
    if (a->last != b->last) {
        return a->last < b->last ? 1 : -1;
    }
    c = strcmp(a->e->reason ? a->e->reason : "", b->e->reason ? b->e->reason : "");
    return c != 0 ? c : strcmp(a->msg ? a->msg : "", b->msg ? b->msg : "");
}

static int64_t ev_time(const struct krc_report_event *e)
{
    return e->last_timestamp > 0 ? e->last_timestamp : e->first_timestamp;
}

/* Group the events the message shows by reason+message: the pod's
 * (krc_alert_event_shown) and the node's warnings. Caller frees *ret with
 * krc_free. */
static size_t group_events(struct fmt *f, const struct krc_report *r, const struct krc_diagnosis *d,
                           int node_leads, struct ev_group **ret)
{
    struct ev_group *g;
    size_t n = 0;
    size_t i;
    size_t k;

    *ret = NULL;
    if (f->rc != 0 || r->n_events == 0) {
        return 0;
    }
    g = krc_calloc(r->n_events, sizeof(*g));
    if (g == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
        return 0;
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        const char *msg = strip_combined(e->message);
        long cnt = e->count > 0 ? e->count : 1;
        int node = e->object_kind != NULL && strcmp(e->object_kind, "Node") == 0;
        if (node ? e->type == NULL || strcmp(e->type, "Warning") != 0
                 : !krc_report_event_is_pod(r, e) || !krc_alert_event_shown(r, d, e, node_leads)) {
            continue;
        }
        for (k = 0; k < n; k++) {
            if (g[k].node == node && str_same(g[k].e->reason, e->reason) &&
                str_same(g[k].msg, msg)) {
                break;
            }
        }
        if (k == n) {
            g[n].e = e;
            g[n].msg = msg;
            g[n].last = ev_time(e);
            g[n].node = node;
            n++;
        } else if (ev_time(e) > g[k].last) {
            g[k].e = e;
            g[k].last = ev_time(e);
        }
        g[k].count += cnt;
    }
    qsort(g, n, sizeof(*g), ev_cmp);
    *ret = g;
    return n;
}

/* "• *Unhealthy* ×3 · 5m ago: Liveness probe failed ..." (the node's: "• node
 * *SystemOOM* ..."); an age under AGE_SHOWN is not said. */
static void event_line(struct fmt *f, struct krc_buf *line, const struct ev_group *g)
{
    char age[32];

    krc_buf_reset(line);
    krc_slack_lit(f, line, BULLET " ");
    krc_slack_lit(f, line, g->node ? "node *" : "*");
    krc_slack_put(f, line, g->e->reason ? g->e->reason : "(no reason)", 100);
    krc_slack_lit(f, line, "*");
    if (g->count > 1) {
        krc_slack_litf(f, line, " \xc3\x97%ld", g->count);
    }
    krc_slack_age_of(f, g->last, age, sizeof(age));
    if (age[0] != '\0' && f->o->now - g->last >= AGE_SHOWN) {
        krc_slack_litf(f, line, DOT "%s ago", age);
    }
    if (g->msg != NULL && g->msg[0] != '\0') {
        krc_slack_lit(f, line, ": ");
        krc_slack_put_red(f, line, g->msg, EVENT_MSG_MAX);
    }
}

/* The warnings the evidence does not already show (nothing when none). */
static void events_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                           const struct krc_diagnosis *d)
{
    struct krc_slack_node nl;
    struct ev_group *g = NULL;
    size_t n;
    struct krc_buf sec;
    struct krc_buf line;
    size_t i;

    krc_slack_node_lead(r, &nl);
    n = group_events(f, r, d, nl.leads, &g);
    if (n == 0) {
        krc_free(g);
        return;
    }
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(EVENT_MSG_MAX + 200));
    krc_slack_lit(f, &sec, "*Warning events*");
    for (i = 0; i < n && i < KRC_SLACK_EVENTS_MAX && f->rc == 0; i++) {
        event_line(f, &line, &g[i]);
        if (!krc_slack_add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
    }
    if (i < n) {
        krc_buf_reset(&line);
        krc_slack_litf(f, &line, "_" ELLIPSIS " and %zu more_", n - i);
        krc_slack_add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    krc_slack_block_section(f, bl, &sec);
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
    krc_free(g);
}

/* The collection notes that change what the reader does (an API error, a
 * node that is gone: krc_alert_note_shown). */
static void notes_section(struct fmt *f, struct blocks *bl, const struct krc_report *r)
{
    struct krc_buf sec;
    struct krc_buf line;
    size_t i;
    size_t shown = 0;

    for (i = 0; i < r->n_notes; i++) {
        shown += krc_alert_note_shown(r->notes[i]);
    }
    if (shown == 0) {
        return;
    }
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(NOTE_MAX + 10));
    krc_slack_lit(f, &sec, "*Collection notes*");
    for (i = 0; i < r->n_notes && f->rc == 0; i++) {
        if (!krc_alert_note_shown(r->notes[i])) {
            continue;
        }
        krc_buf_reset(&line);
        krc_slack_lit(f, &line, BULLET " ");
        krc_slack_put(f, &line, r->notes[i], NOTE_MAX);
        if (!krc_slack_add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
        shown--;
    }
    if (shown > 0) {
        krc_buf_reset(&line);
        krc_slack_litf(f, &line, "_" ELLIPSIS " and %zu more_", shown);
        krc_slack_add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    krc_slack_block_section(f, bl, &sec);
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
}

/* What changed before the incident's first restart (the change tracker's line, on an
 * incident's first alert only: krc_report.what_changed). */
static void what_changed_section(struct fmt *f, struct blocks *bl, const struct krc_report *r)
{
    struct krc_buf sec;

    if (r->what_changed == NULL || r->what_changed[0] == '\0') {
        return;
    }
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_slack_lit(f, &sec, "*What changed:* ");
    krc_slack_put_red(f, &sec, r->what_changed, KRC_SLACK_SECTION_MAX - 40);
    krc_slack_block_section(f, bl, &sec);
    krc_buf_cleanup(&sec);
}

/* ---- the log tail ---------------------------------------------------------------------- */

struct log_tail {
    struct krc_buf *lines; /* escaped lines, oldest first, [first, n) used */
    size_t n;
    size_t first;   /* index of the first line shown */
    size_t omitted; /* earlier lines not shown */
    int redactions; /* found in the log */
    /* code blocks, numbered from the bottom: block s holds lines
     * [cut[s], s ? cut[s - 1] : n) */
    size_t cut[KRC_SLACK_LOG_SECTIONS];
    size_t n_sections;
};

/* One log line for display: after the last carriage return (what a
 * terminal shows of a progress bar), escaped, cut at KRC_SLACK_LOG_LINE_MAX.
 * One time stamp per line: in a log fetched with timestamps=true (`stamps`),
 * the kubelet's prefix ("2026-07-30T07:43:51.123456789Z ") is dropped when
 * the application's line starts with a time of its own, else shown as its
 * time of day and zone ("07:43:51Z"). Other logs are shown as they are. */
static void log_line(struct fmt *f, struct krc_buf *out, const unsigned char *p, size_t len,
                     int stamps)
{
    size_t i;
    const unsigned char *stamp = p;
    size_t stamp_len = stamps ? krc_logtail_stamp_len(p, len) : 0;

    p += stamp_len;
    len -= stamp_len;
    while (len > 0 && p[len - 1] == '\r') {
        len--;
    }
    for (i = len; i > 0; i--) {
        if (p[i - 1] == '\r') {
            p += i;
            len -= i;
            break;
        }
    }
    if (stamp_len > 0 && !krc_logtail_has_app_stamp(p, len)) {
        char hms[24];
        if (krc_logtail_stamp_short(stamp, stamp_len, hms, sizeof(hms)) > 0) {
            krc_slack_litf(f, out, "%s ", hms);
        }
    }
    if (krc_slack_put_n(f, out, p, len, ESC_MRKDWN, KRC_SLACK_LOG_LINE_MAX)) {
        krc_slack_lit(f, out, " [line cut]");
    }
}

static void log_tail_cleanup(struct log_tail *t)
{
    size_t i;

    for (i = 0; t->lines != NULL && i < t->n; i++) {
        krc_buf_cleanup(&t->lines[i]);
    }
    krc_free(t->lines);
    t->lines = NULL;
}

/* The same lines packed from the top read better (full blocks first): packs
 * t's lines so when that needs no more blocks than t has. */
static void log_tail_pack_from_top(struct log_tail *t, size_t per_section)
{
    size_t tops[KRC_SLACK_LOG_SECTIONS];
    size_t ns = 0;
    size_t used = 0;
    size_t i;
    size_t k;

    for (i = t->first; i < t->n; i++) {
        size_t u = krc_slack_buf_units(&t->lines[i]) + 1;
        if (ns == 0 || used + u > per_section) {
            if (ns == t->n_sections) {
                break;
            }
            tops[ns++] = i;
            used = 0;
        }
        used += u;
    }
    if (i == t->n) {
        for (k = 0; k < ns; k++) {
            t->cut[ns - 1 - k] = tops[k];
        }
        t->n_sections = ns;
    }
}

/* Select, redact and escape the last lines of the log: at most max_lines,
 * packed from the bottom into at most `sections` code blocks of
 * `per_section` units each (a line never spans two blocks). */
static void log_tail_build(struct fmt *f, const struct krc_report *r, size_t max_lines,
                           size_t sections, size_t per_section, struct log_tail *t)
{
    const unsigned char *p = r->log;
    size_t end = r->log_len;
    size_t lo;
    size_t start;
    size_t nl = 0;
    size_t before = 0;
    size_t i;
    size_t rl;
    const unsigned char *rp;
    int partial_head = 0;
    int before_red = f->redactions;
    size_t e;
    size_t k;
    size_t shown = 0;
    size_t used = 0;

    memset(t, 0, sizeof(*t));
    if (f->rc != 0 || sections == 0) {
        return;
    }
    if (sections > KRC_SLACK_LOG_SECTIONS) {
        sections = KRC_SLACK_LOG_SECTIONS;
    }
    if (end > 0 && p[end - 1] == '\n') {
        end--;
    }
    /* the last max_lines lines, within the last KRC_SLACK_LOG_WINDOW bytes */
    lo = end > KRC_SLACK_LOG_WINDOW ? end - KRC_SLACK_LOG_WINDOW : 0;
    for (start = end; start > lo; start--) {
        if (p[start - 1] == '\n' && ++nl == max_lines) {
            break;
        }
    }
    if (start == lo && lo > 0 && p[lo - 1] != '\n') {
        /* the window begins inside a line: drop that piece unless it is all */
        const unsigned char *q = memchr(p + lo, '\n', end - lo);
        if (q != NULL) {
            start = (size_t)(q - p) + 1;
        } else {
            partial_head = 1;
        }
    }
    if (start == 0 && r->log_cut.known && r->log_cut.head_cut) {
        partial_head = 1; /* the collector kept only the end of this line */
    }
    for (i = 0; i < start; i++) {
        before += p[i] == '\n';
    }
    rp = krc_slack_redact(f, p + start, end - start, &rl);
    t->redactions = f->redactions - before_red;
    t->n = 1;
    for (i = 0; i < rl; i++) {
        t->n += rp[i] == '\n';
    }
    t->lines = krc_calloc(t->n, sizeof(*t->lines));
    if (t->lines == NULL) {
        t->n = 0;
        krc_slack_fail(f, KRC_ENOMEM);
        return;
    }
    /* walk the lines from the last one up */
    e = rl;
    k = t->n;
    t->n_sections = 1;
    t->cut[0] = t->n;
    while (k > 0 && shown < max_lines && f->rc == 0) {
        size_t s = e;
        size_t u;
        while (s > 0 && rp[s - 1] != '\n') {
            s--;
        }
        k--;
        krc_buf_init(&t->lines[k], BYTES_FOR(KRC_SLACK_LOG_LINE_MAX + 40));
        if (k == 0 && partial_head) {
            krc_slack_lit(f, &t->lines[k], ELLIPSIS);
        }
        log_line(f, &t->lines[k], rp + s, e - s, (r->log_flags & KRC_REPORT_LOG_TIMESTAMPS) != 0);
        u = krc_slack_buf_units(&t->lines[k]) + 1;
        if (used + u > per_section) {
            if (t->n_sections == sections || used == 0) {
                krc_buf_cleanup(&t->lines[k]);
                k++;
                break;
            }
            t->n_sections++;
            used = 0;
        }
        used += u;
        t->cut[t->n_sections - 1] = k;
        shown++;
        e = s > 0 ? s - 1 : 0;
    }
    if (shown == 0) {
        t->n_sections = 0;
    }
    t->first = k;
    t->omitted = before + k;
    if (t->n_sections > 1 && f->rc == 0) {
        log_tail_pack_from_top(t, per_section);
    }
}

/* The lines of code block s (numbered from the bottom) as one text. */
static void log_section_text(struct fmt *f, const struct log_tail *t, size_t s, struct krc_buf *out)
{
    size_t hi = s > 0 ? t->cut[s - 1] : t->n;
    size_t i;

    krc_slack_lit(f, out, FENCE "\n");
    for (i = t->cut[s]; i < hi && f->rc == 0; i++) {
        krc_slack_fail(f, krc_buf_append(out, krc_buf_str(&t->lines[i]), t->lines[i].len));
        krc_slack_lit(f, out, "\n");
    }
    krc_slack_lit(f, out, FENCE);
}

/* Does the message already say the previous log is missing? The
 * diagnosis' "not checked" does; a start error ran nothing to log. */
static int log_absence_said(const struct krc_report *r, const struct krc_diagnosis *d)
{
    (void)r;
    for (size_t i = 0; i < d->n_unchecked; i++) {
        if (d->unchecked[i] != NULL && strstr(d->unchecked[i], "log") != NULL) {
            return 1;
        }
    }
    return d->has_termination && d->started_at == 0 && d->reason != NULL &&
           (strcmp(d->reason, "StartError") == 0 || strcmp(d->reason, "ContainerCannotRun") == 0);
}

/* The log tail: one section, "*Previous log* · last N lines" and the code
 * block of the last lines that fit LOG_LINES_SHOWN and LOG_UNITS_SHOWN. */
static void log_blocks(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                       const struct krc_diagnosis *d)
{
    struct krc_buf head;
    struct log_tail t;
    size_t max_lines =
        f->o->max_log_lines > 0 ? (size_t)f->o->max_log_lines : KRC_ALERT_DEFAULT_LOG_LINES;
    const char *other = r->log_container != NULL && d->container != NULL &&
                                strcmp(r->log_container, d->container) != 0
                            ? r->log_container
                            : NULL;

    if (bl->max - bl->n < 1) {
        return;
    }
    krc_buf_init(&head, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_slack_lit(f, &head, "*Previous log*");
    if (other != NULL) {
        krc_slack_lit(f, &head, " of `");
        krc_slack_put(f, &head, other, NAME_MAX_UNITS);
        krc_slack_lit(f, &head, "`");
    }
    if (f->o->omit_log) {
        krc_slack_lit(f, &head, ": _not included (disabled by configuration)_");
        krc_slack_block_section(f, bl, &head);
        krc_buf_cleanup(&head);
        return;
    }
    if (r->log == NULL || r->log_len == 0) {
        int empty = (r->log_flags & KRC_REPORT_LOG_EMPTY) || (r->log != NULL && r->log_len == 0);
        if (empty || !log_absence_said(r, d)) {
            /* why the API had none ("previous terminated container ... not
             * found") changes nothing for the reader: not said */
            krc_slack_lit(f, &head,
                          empty ? ": _empty, the container wrote nothing_" : ": _not available_");
            krc_slack_block_section(f, bl, &head);
        }
        krc_buf_cleanup(&head);
        return;
    }
    if (max_lines > LOG_LINES_SHOWN) {
        max_lines = LOG_LINES_SHOWN;
    }
    log_tail_build(f, r, max_lines, 1, LOG_UNITS_SHOWN, &t);
    if (f->rc == 0 && t.n_sections == 1) {
        size_t shown = t.n - t.first;
        krc_slack_litf(f, &head, DOT "last %zu line%s", shown, shown == 1 ? "" : "s");
        if (t.omitted > 0) {
            krc_slack_litf(f, &head, DOT "_%zu earlier line%s not shown_", t.omitted,
                           t.omitted == 1 ? "" : "s");
        }
        char cut[320];
        if (krc_logtail_describe(&r->log_cut, cut, sizeof(cut)) > 0) {
            krc_slack_litf(f, &head, DOT "_%s_", cut);
        } else if (r->log_flags & KRC_REPORT_LOG_TRUNCATED) {
            krc_slack_lit(f, &head, DOT "_only the end of the log was kept_");
        }
        if (t.redactions > 0) {
            krc_slack_litf(f, &head, DOT ":lock: %d secret%s redacted", t.redactions,
                           t.redactions == 1 ? "" : "s");
        }
        krc_slack_lit(f, &head, "\n");
        log_section_text(f, &t, 0, &head);
        krc_slack_block_section(f, bl, &head);
    }
    log_tail_cleanup(&t);
    krc_buf_cleanup(&head);
}

static void context_text(struct fmt *f, struct krc_buf *b, const struct krc_report *r)
{
    /* the cluster is in the header; the pod's uid is for machines (the
     * webhook's JSON, the history), not the chat */
    (void)r;
    krc_slack_lit(f, b, "krc");
    if (f->redactions > 0) {
        krc_slack_litf(f, b, DOT ":lock: %d secret%s redacted", f->redactions,
                       f->redactions == 1 ? "" : "s");
    }
}

/* Build the blocks array into root (at the top or in a coloured attachment)
 * and return it. */
static cJSON *blocks_root(struct fmt *f, cJSON *root, const char *fallback,
                          enum krc_alert_severity sev)
{
    cJSON *arr = f->rc == 0 ? cJSON_CreateArray() : NULL;

    if (arr == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
        return NULL;
    }
    if (f->o->color_bar) {
        cJSON *atts = cJSON_CreateArray();
        cJSON *a = krc_slack_new_obj(f);
        if (atts == NULL) {
            krc_slack_fail(f, KRC_ENOMEM);
        }
        krc_slack_set_str(f, a, "color", krc_slack_severity_color(sev));
        krc_slack_set_str(f, a, "fallback", fallback);
        krc_slack_attach(f, a, "blocks", arr);
        krc_slack_push(f, atts, a);
        krc_slack_attach(f, root, "attachments", atts);
    } else {
        krc_slack_attach(f, root, "blocks", arr);
    }
    return f->rc == 0 ? arr : NULL;
}

int krc_slack_format_restart(const struct krc_report *r, const struct krc_diagnosis *d,
                             const struct krc_alert_options *o, char **ret_json,
                             int *ret_redactions, struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    struct krc_buf hdr;
    struct krc_buf ctx;
    struct blocks bl = {NULL, 0, KRC_SLACK_MAX_BLOCKS - 1};
    char block_id[64];
    cJSON *root;
    int rc;

    krc_slack_fmt_init(&f, o);
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_buf_init(&hdr, BYTES_FOR(KRC_SLACK_HEADER_MAX));
    krc_buf_init(&ctx, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    root = krc_slack_new_obj(&f);
    krc_slack_envelope(&f, root);
    krc_slack_headline(&f, &text, r, d);
    krc_slack_set_str(&f, root, "text", krc_buf_str(&text));
    bl.arr = blocks_root(&f, root, krc_buf_str(&text), krc_alert_cause_severity(d->cause));
    krc_slack_header_text(&f, &hdr, r, d);
    snprintf(block_id, sizeof(block_id), "cause:%s", krc_cause_name(d->cause));
    krc_slack_block_header(&f, &bl, krc_buf_str(&hdr), block_id);
    krc_slack_cause_section(&f, &bl, r, d);
    krc_slack_facts_section(&f, &bl, r, d);
    what_changed_section(&f, &bl, r);
    krc_slack_evidence_section(&f, &bl, r, d);
    krc_slack_next_step_section(&f, &bl, d);
    events_section(&f, &bl, r, d);
    notes_section(&f, &bl, r);
    log_blocks(&f, &bl, r, d);
    context_text(&f, &ctx, r);
    krc_slack_block_context(&f, bl.arr, &ctx);
    krc_buf_cleanup(&ctx);
    krc_buf_cleanup(&hdr);
    krc_buf_cleanup(&text);
    rc = krc_slack_finish(&f, root, ret_json, err);
    if (rc == 0 && ret_redactions != NULL) {
        *ret_redactions = f.redactions;
    }
    return rc;
}

int krc_slack_format_text_only(const struct krc_report *r, const struct krc_diagnosis *d,
                               const struct krc_alert_options *o, char **ret_json,
                               int *ret_redactions, struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    struct krc_buf part;
    struct log_tail t;
    cJSON *root;
    char shown_line[2048];
    size_t i;
    size_t shown;
    int rc;

    krc_slack_fmt_init(&f, o);
    memset(&t, 0, sizeof(t));
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_buf_init(&part, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    root = krc_slack_new_obj(&f);
    krc_slack_envelope(&f, root);
    /* the headline without the notification's summary: the summary follows */
    krc_slack_lit(&f, &text, krc_slack_severity_emoji(krc_alert_cause_severity(d->cause)));
    krc_slack_lit(&f, &text, " ");
    {
        struct krc_buf hdr;
        krc_buf_init(&hdr, BYTES_FOR(KRC_SLACK_HEADER_MAX));
        krc_slack_header_text(&f, &hdr, r, d);
        krc_slack_put(&f, &text, krc_buf_str(&hdr), KRC_SLACK_HEADER_MAX);
        krc_buf_cleanup(&hdr);
    }
    krc_slack_lit(&f, &part, "\n");
    krc_slack_put_red(&f, &part, d->summary, 1000);
    krc_slack_litf(&f, &part, " _(confidence: %s)_", krc_confidence_name(d->confidence));
    krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 0);
    if (r->what_changed != NULL && r->what_changed[0] != '\0') {
        krc_buf_reset(&part);
        krc_slack_lit(&f, &part, "*What changed:* ");
        krc_slack_put_red(&f, &part, r->what_changed, 1000);
        krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    for (i = 0, shown = 0; i < d->n_evidence && shown < 5; i++) {
        /* no facts line here: the termination line stays */
        if (!krc_alert_evidence_shown(r, d, i) &&
            strncmp(d->evidence[i], "lastState.terminated: ", 22) != 0 &&
            strncmp(d->evidence[i], "state.terminated: ", 18) != 0) {
            continue;
        }
        shown++;
        krc_buf_reset(&part);
        krc_slack_lit(&f, &part, BULLET " ");
        krc_slack_put_red(
            &f, &part, krc_alert_evidence_text(r, d->evidence[i], shown_line, sizeof(shown_line)),
            300);
        krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    for (i = 0; i < d->n_unchecked && i < 3; i++) {
        krc_buf_reset(&part);
        krc_slack_lit(&f, &part, BULLET " not checked: ");
        krc_slack_put_red(&f, &part, d->unchecked[i], 300);
        krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    if (d->next_step != NULL) {
        krc_buf_reset(&part);
        krc_slack_lit(&f, &part, "*Next step:* ");
        krc_slack_put_red(&f, &part, d->next_step, 400);
        krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    if (d->n_commands > 0) {
        krc_buf_reset(&part);
        krc_slack_commands_block(&f, &part, d, 3, 300, 1000);
        krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    if (!o->omit_log && r->log != NULL && r->log_len > 0) {
        /* the code block (fences: 9 units) and a redaction line (40) must fit */
        size_t room = krc_slack_buf_units(&text) + 60 < KRC_SLACK_TEXT_MAX
                          ? KRC_SLACK_TEXT_MAX - krc_slack_buf_units(&text) - 60
                          : 0;
        log_tail_build(&f, r, 15, 1, room, &t);
        if (f.rc == 0 && t.n_sections == 1) {
            krc_buf_reset(&part);
            krc_slack_lit(&f, &part, "\n");
            log_section_text(&f, &t, 0, &part);
            krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 40);
        }
        log_tail_cleanup(&t);
    }
    if (f.redactions > 0) {
        krc_buf_reset(&part);
        krc_slack_litf(&f, &part, ":lock: %d secret%s redacted", f.redactions,
                       f.redactions == 1 ? "" : "s");
        krc_slack_add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 0);
    }
    krc_slack_fit(&f, &text, KRC_SLACK_TEXT_MAX);
    krc_slack_set_str(&f, root, "text", krc_buf_str(&text));
    krc_buf_cleanup(&part);
    krc_buf_cleanup(&text);
    rc = krc_slack_finish(&f, root, ret_json, err);
    if (rc == 0 && ret_redactions != NULL) {
        *ret_redactions = f.redactions;
    }
    return rc;
}

/* ---- storm summary ----------------------------------------------------------------------- */

static int group_cmp(const void *pa, const void *pb)
{
    const struct krc_alert_group *a = *(const struct krc_alert_group *const *)pa;
    const struct krc_alert_group *b = *(const struct krc_alert_group *const *)pb;

    if (a->count != b->count) {
        return a->count < b->count ? 1 : -1;
    }
    return strcmp(a->key ? a->key : "", b->key ? b->key : "");
}

static void group_field(struct fmt *f, struct krc_buf *b, const char *title,
                        const struct krc_alert_group *g, size_t n)
{
    const struct krc_alert_group **sorted;
    struct krc_buf line;
    size_t i;

    krc_slack_litf(f, b, "*%s*", title);
    if (n == 0) {
        krc_slack_lit(f, b, "\n_unknown_");
        return;
    }
    sorted = krc_calloc(n, sizeof(*sorted));
    if (sorted == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
        return;
    }
    for (i = 0; i < n; i++) {
        sorted[i] = &g[i];
    }
    qsort(sorted, n, sizeof(*sorted), group_cmp);
    krc_buf_init(&line, BYTES_FOR(400));
    for (i = 0; i < n && i < KRC_ALERT_GROUPS_SHOWN && f->rc == 0; i++) {
        krc_buf_reset(&line);
        krc_slack_lit(f, &line, BULLET " `");
        krc_slack_put(f, &line, sorted[i]->key ? sorted[i]->key : "(none)", 150);
        krc_slack_litf(f, &line, "` %zu", sorted[i]->count);
        if (!krc_slack_add_line(f, b, &line, KRC_SLACK_FIELD_MAX, MORE_RESERVE)) {
            break;
        }
    }
    if (i < n) {
        size_t rest = 0;
        size_t k;
        for (k = i; k < n; k++) {
            rest += sorted[k]->count;
        }
        krc_buf_reset(&line);
        krc_slack_litf(f, &line, "_" ELLIPSIS " and %zu more (%zu restarts)_", n - i, rest);
        krc_slack_add_line(f, b, &line, KRC_SLACK_FIELD_MAX, 0);
    }
    krc_buf_cleanup(&line);
    krc_free(sorted);
}

/* The group every grouped restart is in (the grouping's only one), or NULL. */
static const struct krc_alert_group *shared(const struct krc_alert_group *g, size_t n)
{
    return n == 1 && g[0].key != NULL && strcmp(g[0].key, "(unknown)") != 0 ? &g[0] : NULL;
}

/* What the grouped restarts share, in words: "all `killed`, on node `n`,
 * which is *NotReady*, in StatefulSet cache/memcached" (mrkdwn, or plain for
 * the notification). Nothing when they share nothing. */
static void shared_words(struct fmt *f, struct krc_buf *b, const struct krc_alert_summary *s,
                         int mrkdwn)
{
    const struct krc_alert_group *cause = shared(s->by_cause, s->n_by_cause);
    const struct krc_alert_group *node = shared(s->by_node, s->n_by_node);
    const struct krc_alert_group *wl = shared(s->by_workload, s->n_by_workload);
    const char *tick = mrkdwn ? "`" : "";

    if (cause != NULL) {
        krc_slack_litf(f, b, "all %s", tick);
        krc_slack_put(f, b, cause->key, 60);
        krc_slack_lit(f, b, tick);
    }
    if (node != NULL) {
        krc_slack_litf(f, b, "%son node %s", cause != NULL ? ", " : "", tick);
        krc_slack_put(f, b, node->key, 150);
        krc_slack_lit(f, b, tick);
        if (node->condition != NULL) {
            krc_slack_litf(f, b, ", which is %s", mrkdwn ? "*" : "");
            krc_slack_put(f, b, node->condition, 100);
            krc_slack_lit(f, b, mrkdwn ? "*" : "");
        }
    }
    if (wl != NULL && mrkdwn) {
        krc_slack_lit(f, b, cause != NULL || node != NULL ? ", in " : "in ");
        krc_slack_put(f, b, wl->key, 300);
    }
}

/* One example pod of a storm summary: "`ns/pod`" and what it does not share
 * with the others (container, cause, node; restarts when more than one). */
static void example_line(struct fmt *f, struct krc_buf *line, const struct krc_alert_summary *s,
                         const struct krc_alert_example *e, int same_container)
{
    krc_buf_reset(line);
    krc_slack_lit(f, line, "`");
    krc_slack_put(f, line, e->namespace, 100);
    krc_slack_lit(f, line, "/");
    krc_slack_put(f, line, e->pod, 150);
    krc_slack_lit(f, line, "`");
    if (e->container != NULL && !same_container) {
        krc_slack_lit(f, line, " (");
        krc_slack_put(f, line, e->container, 100);
        krc_slack_lit(f, line, ")");
    }
    if (e->cause != NULL && shared(s->by_cause, s->n_by_cause) == NULL) {
        krc_slack_lit(f, line, " ");
        krc_slack_put(f, line, e->cause, 60);
    }
    if (e->node != NULL && shared(s->by_node, s->n_by_node) == NULL) {
        krc_slack_lit(f, line, " on ");
        krc_slack_put(f, line, e->node, 150);
    }
    if (e->restart_count > 1) {
        krc_slack_litf(f, line, " \xc3\x97%d", e->restart_count);
    }
}

/* The storm's notification: its size and what its grouped restarts share
 * ("...; 6 grouped, all killed, on node n, which is NotReady"). */
static void summary_notification(struct fmt *f, struct krc_buf *text,
                                 const struct krc_alert_summary *s, size_t grouped, const char *win)
{
    /* the notification: the storm and what its restarts share */
    krc_slack_lit(f, text, ":rotating_light: ");
    if (f->o->cluster != NULL) {
        krc_slack_lit(f, text, "[");
        krc_slack_put(f, text, f->o->cluster, 60);
        krc_slack_lit(f, text, "] ");
    }
    krc_slack_litf(f, text, "Restart storm: %zu restarts", s->restarts);
    if (s->pods > 0) {
        krc_slack_litf(f, text, " of %zu pod%s", s->pods, s->pods == 1 ? "" : "s");
    }
    krc_slack_litf(f, text, " in %s", win);
    {
        struct krc_buf why;
        krc_buf_init(&why, BYTES_FOR(600));
        shared_words(f, &why, s, 0);
        if (why.len > 0 && f->rc == 0) {
            krc_slack_litf(f, text, "; %zu grouped, ", grouped);
            krc_slack_put(f, text, krc_buf_str(&why), 600);
        }
        krc_buf_cleanup(&why);
    }
    krc_slack_fit(f, text, KRC_SLACK_NOTIFY_MAX + 15);
}

int krc_slack_format_summary(const struct krc_alert_summary *s, const struct krc_alert_options *o,
                             char **ret_json, struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    struct krc_buf hdr;
    struct krc_buf sec;
    struct krc_buf line;
    struct krc_buf fields[3];
    struct blocks bl = {NULL, 0, KRC_SLACK_MAX_BLOCKS - 1};
    const struct krc_alert_group *groups[3] = {s->by_cause, s->by_node, s->by_workload};
    const size_t n_groups[3] = {s->n_by_cause, s->n_by_node, s->n_by_workload};
    const char *titles[3] = {"By cause", "By node", "By workload"};
    size_t grouped = s->restarts > s->alerted ? s->restarts - s->alerted : 0;
    size_t n_fields = 0;
    int same_container = 1;
    char win[32];
    cJSON *root;
    size_t i;

    krc_slack_fmt_init(&f, o);
    krc_diagnose_format_duration(s->window_seconds, win, sizeof(win));
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_buf_init(&hdr, BYTES_FOR(KRC_SLACK_HEADER_MAX));
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(800));
    for (i = 0; i < 3; i++) {
        krc_buf_init(&fields[i], BYTES_FOR(KRC_SLACK_FIELD_MAX));
    }
    root = krc_slack_new_obj(&f);
    krc_slack_envelope(&f, root);
    summary_notification(&f, &text, s, grouped, win);
    krc_slack_set_str(&f, root, "text", krc_buf_str(&text));
    bl.arr = blocks_root(&f, root, krc_buf_str(&text), KRC_ALERT_SEV_CRITICAL);

    {
        struct krc_buf raw;
        krc_buf_init(&raw, 512);
        if (o->cluster != NULL) {
            krc_slack_fail(&f, krc_buf_printf(&raw, "[%.100s] ", o->cluster));
        }
        krc_slack_fail(&f, krc_buf_printf(&raw, "Restart storm: %zu restarts", s->restarts));
        if (s->pods > 0) {
            krc_slack_fail(&f,
                           krc_buf_printf(&raw, " of %zu pod%s", s->pods, s->pods == 1 ? "" : "s"));
        }
        krc_slack_fail(&f, krc_buf_printf(&raw, " in %s", win));
        krc_slack_put_n(&f, &hdr, krc_buf_str(&raw), raw.len, 0, KRC_SLACK_HEADER_MAX);
        krc_buf_cleanup(&raw);
    }
    krc_slack_block_header(&f, &bl, krc_buf_str(&hdr), NULL);

    krc_slack_litf(&f, &sec, ":rotating_light: *%zu restart%s grouped here*", grouped,
                   grouped == 1 ? "" : "s");
    krc_buf_reset(&line);
    shared_words(&f, &line, s, 1);
    if (line.len > 0) {
        krc_slack_lit(&f, &sec, ": ");
        krc_slack_fail(&f, krc_buf_append(&sec, krc_buf_str(&line), line.len));
    }
    krc_slack_lit(&f, &sec, ".\n_");
    if (s->alerted > 0) {
        krc_slack_litf(&f, &sec, "%zu %s alerted one by one before the storm began. ", s->alerted,
                       s->alerted == 1 ? "was" : "were");
    }
    krc_slack_lit(&f, &sec, "Every restart is still diagnosed and recorded._");
    krc_slack_block_section(&f, &bl, &sec);

    for (i = 0; i < 3; i++) {
        if (n_groups[i] > 1 || (n_groups[i] == 1 && shared(groups[i], n_groups[i]) == NULL)) {
            group_field(&f, &fields[n_fields++], titles[i], groups[i], n_groups[i]);
        }
    }
    krc_slack_block_fields(&f, &bl, fields, n_fields);

    for (i = 1; i < s->n_examples; i++) {
        const char *a = s->examples[0].container;
        const char *b = s->examples[i].container;
        if (a == NULL || b == NULL || strcmp(a, b) != 0) {
            same_container = 0;
        }
    }
    if (s->n_examples > 0) {
        krc_buf_reset(&sec);
        krc_slack_lit(&f, &sec, "*Pods:* ");
        for (i = 0; i < s->n_examples && i < KRC_ALERT_EXAMPLES_SHOWN && f.rc == 0; i++) {
            example_line(&f, &line, s, &s->examples[i], same_container);
            if (krc_slack_buf_units(&sec) + krc_slack_buf_units(&line) + MORE_RESERVE >
                KRC_SLACK_SECTION_MAX) {
                break;
            }
            krc_slack_lit(&f, &sec, i > 0 ? ", " : "");
            krc_slack_fail(&f, krc_buf_append(&sec, krc_buf_str(&line), line.len));
        }
        if (i < s->n_examples) {
            krc_slack_litf(&f, &sec, " _" ELLIPSIS " and %zu more_", s->n_examples - i);
        }
        krc_slack_block_section(&f, &bl, &sec);
    }
    krc_buf_reset(&sec);
    context_text(&f, &sec, NULL);
    krc_slack_block_context(&f, bl.arr, &sec);
    for (i = 0; i < 3; i++) {
        krc_buf_cleanup(&fields[i]);
    }
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
    krc_buf_cleanup(&hdr);
    krc_buf_cleanup(&text);
    return krc_slack_finish(&f, root, ret_json, err);
}

/* ---- an incident's end ("resolved") ------------------------------------------------------ */

int krc_slack_format_recovered(const struct krc_alert_recovered *rc,
                               const struct krc_alert_options *o, char **ret_json,
                               struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    char line[1024];
    cJSON *root;

    krc_slack_fmt_init(&f, o);
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    root = krc_slack_new_obj(&f);
    krc_slack_envelope(&f, root);
    krc_slack_lit(&f, &text, ":large_green_circle: ");
    if (o->cluster != NULL) {
        krc_slack_lit(&f, &text, "[");
        krc_slack_put(&f, &text, o->cluster, 60);
        krc_slack_lit(&f, &text, "] ");
    }
    krc_alert_resolved_line(rc, line, sizeof(line));
    krc_slack_put(&f, &text, line, KRC_SLACK_TEXT_MAX / 2);
    krc_slack_set_str(&f, root, "text", krc_buf_str(&text));
    krc_buf_cleanup(&text);
    return krc_slack_finish(&f, root, ret_json, err);
}

int krc_slack_sink_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                  const struct krc_alert_options *fo, char **ret_body,
                                  char **ret_fallback, struct krc_error *err)
{
    char *body = NULL;
    char *fallback = NULL;

    if (krc_slack_format_restart(rep, diag, fo, &body, NULL, err) < 0 ||
        krc_slack_format_text_only(rep, diag, fo, &fallback, NULL, err) < 0) {
        krc_free(body);
        return err != NULL && err->code < 0 ? err->code : KRC_ENOMEM;
    }
    *ret_body = body;
    *ret_fallback = fallback;
    return 0;
}
