/* The answer to "what changed before this crash" (krc_track_describe): the
 * workload's revisions, its node's changes and the ConfigMaps/Secrets the
 * collector saw, within the lookback, nearest first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "track_private.h"

#define CANDIDATES 64
#define LINE_MAX_BYTES (16 * 1024)
#define JSON_MAX_BYTES (256 * 1024)

/* One change that may be listed: a revision, a ring entry or a note. */
struct cand {
    int64_t at;
    const struct rev *rev;
    const struct change *change;
    const struct config_note *note;
};

int track_change_json(struct krc_buf *b, const char *kind, const char *ns, const char *name,
                      const char *revision, int64_t at, const char *manager, const char *items,
                      int64_t prev_revision, int32_t prev_ready)
{
    char when[32];
    const char *p = items;
    int first = 1;
    int rc = 0;

    krc_clock_format_rfc3339(at, when, sizeof(when));
    rc |= krc_buf_append_str(b, "{\"kind\": \"");
    rc |= krc_buf_append_json_str(b, kind, strlen(kind));
    rc |= krc_buf_append_str(b, "\", \"namespace\": \"");
    rc |= krc_buf_append_json_str(b, ns, strlen(ns));
    rc |= krc_buf_append_str(b, "\", \"name\": \"");
    rc |= krc_buf_append_json_str(b, name, strlen(name));
    rc |= krc_buf_append_str(b, "\", \"revision\": \"");
    rc |= krc_buf_append_json_str(b, revision, strlen(revision));
    rc |= krc_buf_printf(b, "\", \"at\": \"%s\", \"manager\": ", when);
    if (manager != NULL) {
        rc |= krc_buf_append_char(b, '"');
        rc |= krc_buf_append_json_str(b, manager, strlen(manager));
        rc |= krc_buf_append_char(b, '"');
    } else {
        rc |= krc_buf_append_str(b, "null");
    }
    rc |= krc_buf_append_str(b, ", \"items\": [");
    while (*p != '\0') {
        size_t n = strcspn(p, "\n");
        rc |= krc_buf_append_str(b, first ? "\"" : ", \"");
        rc |= krc_buf_append_json_str(b, p, n);
        rc |= krc_buf_append_char(b, '"');
        first = 0;
        p += n + (p[n] == '\n');
    }
    rc |= krc_buf_append_char(b, ']');
    if (prev_revision >= 0) {
        rc |= krc_buf_printf(b, ", \"previous_revision\": \"%lld\"", (long long)prev_revision);
    }
    if (prev_ready >= 0) {
        rc |= krc_buf_printf(b, ", \"previous_ready\": %d", (int)prev_ready);
    }
    rc |= krc_buf_append_char(b, '}');
    return rc != 0 ? KRC_ENOMEM : 0;
}

/* "03:52" (UTC). */
static void clock_time(int64_t at, char *out, size_t outsz)
{
    time_t tt = (time_t)at;
    struct tm tm;

    if (gmtime_r(&tt, &tm) == NULL) {
        snprintf(out, outsz, "?");
        return;
    }
    snprintf(out, outsz, "%02d:%02d", tm.tm_hour, tm.tm_min);
}

/* "45 s", "4 min", "3 h", "5 days" (a lookback longer than the default). */
static void span(int64_t d, char *out, size_t outsz)
{
    if (d < 60) {
        snprintf(out, outsz, "%lld s", (long long)d);
    } else if (d < 2 * 3600) {
        snprintf(out, outsz, "%lld min", (long long)(d / 60));
    } else if (d < 48 * 3600) {
        snprintf(out, outsz, "%lld h", (long long)(d / 3600));
    } else {
        snprintf(out, outsz, "%lld days", (long long)(d / 86400));
    }
}

struct answer {
    struct krc_track *t;
    const struct krc_track_query *q;
    int64_t before;
    int64_t since;
    struct cand c[CANDIDATES];
    size_t n;
    struct krc_buf line;
    struct krc_buf json;
    size_t listed;
};

static void add_cand(struct answer *a, int64_t at, const struct rev *r, const struct change *ch,
                     const struct config_note *note)
{
    if (at > a->before || at <= a->since || a->n >= CANDIDATES) {
        return;
    }
    a->c[a->n++] = (struct cand){at, r, ch, note};
}

static uint8_t rev_kind(uint8_t kind)
{
    return kind == TK_DEPLOYMENT || kind == TK_STATEFULSET || kind == TK_DAEMONSET ? kind : TK_NONE;
}

static void gather(struct answer *a, uint8_t kind, uint32_t ns, uint32_t name, uint32_t node)
{
    struct krc_track *t = a->t;

    if (rev_kind(kind) != TK_NONE && name != 0) {
        struct rev *revs[32];
        size_t n = track_revs_of(t, ns, kind, name, revs, 32);
        for (size_t i = 0; i < n; i++) {
            add_cand(a, revs[i]->at, revs[i], NULL, NULL);
        }
    }
    for (size_t i = 0; i < t->ring_cap; i++) {
        const struct change *c = &t->ring[i];
        if (c->seq == 0) {
            continue;
        }
        if ((kind == TK_CRONJOB && c->kind == TK_CRONJOB && c->ns == ns && c->name == name &&
             name != 0) ||
            (node != 0 && c->kind == TK_NODE && c->name == node)) {
            add_cand(a, c->at, NULL, c, NULL);
        }
    }
    for (size_t i = 0; i < KRC_TRACK_CONFIG_NOTES; i++) {
        const struct config_note *n = &t->notes[i];
        if (n->ns != 0 && n->ns == ns && n->wl_kind == kind && n->wl_name == name && name != 0) {
            add_cand(a, n->at, NULL, NULL, n);
        }
    }
}

static int cand_cmp(const void *x, const void *y)
{
    const struct cand *a = x;
    const struct cand *b = y;
    return a->at < b->at ? 1 : a->at > b->at ? -1 : 0;
}

int track_items_join(struct krc_buf *b, const char *items, size_t more, const char *lead)
{
    const char *p = items;
    int first = 1;
    int rc = 0;

    while (*p != '\0') {
        size_t n = strcspn(p, "\n");
        rc |= krc_buf_append_str(b, first ? lead : "; ");
        rc |= krc_buf_append(b, p, n);
        first = 0;
        p += n + (p[n] == '\n');
    }
    if (more > 0) {
        rc |= krc_buf_printf(b, "%sand %zu more", first ? lead : "; ", more);
    }
    return rc != 0 ? KRC_ENOMEM : 0;
}

/* The revision before r and its ready pods (Deployments). */
static int rev_segment(struct answer *a, const struct rev *r, int newest)
{
    struct krc_track *t = a->t;
    const struct rev *prev = track_rev_before(t, r);
    struct krc_track_items it;
    char when[16], ago[32], revision[24];
    const char *ns = krc_intern_str(t->in, r->ns, NULL);
    const char *name = krc_intern_str(t->in, r->owner, NULL);
    const char *kind = track_kind_name((enum track_kind)r->owner_kind);
    int32_t ready = prev != NULL && r->owner_kind == TK_DEPLOYMENT ? prev->ready : -1;
    int rc;

    krc_track_items_init(&it, KRC_TRACK_ITEMS);
    rc = track_rev_items(t, prev, r, &it);
    clock_time(r->at, when, sizeof(when));
    span(a->before - r->at, ago, sizeof(ago));
    snprintf(revision, sizeof(revision), "%lld", (long long)r->revision);
    rc |=
        krc_buf_printf(&a->line, "%s %s/%s rolled out revision %s at %s, %s before the first crash",
                       kind, ns, name, revision, when, ago);
    rc |= track_items_join(&a->line, krc_buf_str(&it.buf), it.more, ": ");
    if (newest && ready > 0) {
        rc |= krc_buf_printf(&a->line, "; %d pod%s of revision %lld %s still ready", (int)ready,
                             ready == 1 ? "" : "s", (long long)prev->revision,
                             ready == 1 ? "is" : "are");
    }
    rc |= track_change_json(&a->json, kind, ns, name, revision, r->at,
                            r->manager ? krc_intern_str(t->in, r->manager, NULL) : NULL,
                            krc_buf_str(&it.buf), prev != NULL ? prev->revision : -1, ready);
    krc_track_items_cleanup(&it);
    return rc != 0 ? KRC_ENOMEM : 0;
}

static int change_segment(struct answer *a, const struct change *c)
{
    struct krc_track *t = a->t;
    char when[16], ago[32];
    const char *ns = krc_intern_str(t->in, c->ns, NULL);
    const char *name = krc_intern_str(t->in, c->name, NULL);
    const char *kind = track_kind_name((enum track_kind)c->kind);
    int rc = 0;

    clock_time(c->at, when, sizeof(when));
    span(a->before - c->at, ago, sizeof(ago));
    if (c->kind == TK_NODE) {
        rc |= krc_buf_printf(&a->line, "Node %s changed at %s, %s before the first crash", name,
                             when, ago);
    } else {
        rc |= krc_buf_printf(&a->line,
                             "%s %s/%s changed its pod template at %s (generation %s), %s before "
                             "the first crash",
                             kind, ns, name, when, c->revision, ago);
    }
    rc |= track_items_join(&a->line, c->items, c->more, ": ");
    rc |= track_change_json(&a->json, kind, ns, name, c->revision, c->at,
                            c->manager ? krc_intern_str(t->in, c->manager, NULL) : NULL, c->items,
                            c->kind == TK_NODE ? -1 : c->prev_revision, -1);
    return rc != 0 ? KRC_ENOMEM : 0;
}

static int note_segment(struct answer *a, const struct config_note *n)
{
    struct krc_track *t = a->t;
    char when[16], ago[32];
    const char *ns = krc_intern_str(t->in, n->ns, NULL);
    const char *name = krc_intern_str(t->in, n->name, NULL);
    const char *kind = track_kind_name((enum track_kind)n->kind);
    const char *manager = n->manager ? krc_intern_str(t->in, n->manager, NULL) : NULL;
    int rc = 0;

    clock_time(n->at, when, sizeof(when));
    span(a->before - n->at, ago, sizeof(ago));
    rc |= krc_buf_printf(&a->line, "%s %s/%s data changed at %s%s%s, %s before the first crash",
                         kind, ns, name, when, manager ? " by " : "", manager ? manager : "", ago);
    rc |= track_change_json(&a->json, kind, ns, name, n->revision, n->at, manager, "data changed\n",
                            -1, -1);
    return rc != 0 ? KRC_ENOMEM : 0;
}

/* Can the tracker answer for this kind? (its resources have synced) */
static int answerable(struct krc_track *t, uint8_t kind, const char *ns, int have_node)
{
    switch (kind) {
    case TK_DEPLOYMENT:
        return track_scope_synced(t, KRC_TRACK_REPLICASETS, ns);
    case TK_STATEFULSET:
    case TK_DAEMONSET:
        return track_scope_synced(t, KRC_TRACK_CONTROLLERREVISIONS, ns);
    case TK_CRONJOB:
        return track_scope_synced(t, KRC_TRACK_CRONJOBS, ns);
    case TK_JOB:
        return track_scope_synced(t, KRC_TRACK_JOBS, ns);
    case TK_POD:
        return have_node;
    default:
        return 0;
    }
}

static int compose(struct answer *a, int node_known, uint8_t kind)
{
    int rc = krc_buf_append_char(&a->json, '[');

    qsort(a->c, a->n, sizeof(a->c[0]), cand_cmp);
    for (size_t i = 0; i < a->n && a->listed < KRC_TRACK_DESCRIBE_CHANGES && rc == 0; i++) {
        if (a->listed > 0) {
            rc |= krc_buf_append_str(&a->line, ". ");
            rc |= krc_buf_append_str(&a->json, ", ");
        }
        if (a->c[i].rev != NULL) {
            rc |= rev_segment(a, a->c[i].rev, a->listed == 0);
        } else if (a->c[i].change != NULL) {
            rc |= change_segment(a, a->c[i].change);
        } else {
            rc |= note_segment(a, a->c[i].note);
        }
        a->listed++;
    }
    rc |= krc_buf_append_char(&a->json, ']');
    if (a->listed == 0) {
        long lb = a->t->opt.lookback_s;
        char window[32];
        if (lb % 3600 == 0) {
            snprintf(window, sizeof(window), "%ld h", lb / 3600);
        } else {
            snprintf(window, sizeof(window), "%ld min", lb / 60);
        }
        rc |= krc_buf_printf(&a->line, "No change to %s in the %s before the first crash.",
                             kind == TK_POD ? "its node"
                             : node_known   ? "the workload or its node"
                                            : "the workload",
                             window);
    }
    return rc != 0 ? KRC_ENOMEM : 0;
}

static uint32_t find(struct krc_track *t, const char *s)
{
    return s != NULL && s[0] != '\0' ? krc_intern_find(t->in, s, strlen(s)) : 0;
}

int krc_track_describe(struct krc_track *t, const struct krc_track_query *q, int64_t now,
                       char **ret_line, char **ret_json, struct krc_error *err)
{
    struct answer *a;
    uint8_t kind;
    int node_known;
    int rc = 1;

    if (t == NULL) {
        return 0;
    }
    if (q == NULL || q->namespace == NULL || q->workload_kind == NULL || q->workload_name == NULL) {
        return krc_error_set(err, KRC_EINVAL,
                             "what changed: a query needs a namespace and a "
                             "workload");
    }
    a = krc_calloc(1, sizeof(*a));
    if (a == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    a->t = t;
    a->q = q;
    a->before = q->before > 0 ? q->before : now;
    a->since = a->before - t->opt.lookback_s;
    krc_buf_init(&a->line, LINE_MAX_BYTES);
    krc_buf_init(&a->json, JSON_MAX_BYTES);
    kind = (uint8_t)track_kind_of(q->workload_kind);
    pthread_mutex_lock(&t->lock);
    node_known =
        q->node != NULL && q->node[0] != '\0' && track_scope_synced(t, KRC_TRACK_NODES, NULL);
    if (!answerable(t, kind, q->namespace, node_known)) {
        rc = 0;
    } else {
        gather(a, kind, find(t, q->namespace), find(t, q->workload_name),
               node_known ? find(t, q->node) : 0);
        if (compose(a, node_known, kind) < 0) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory describing what changed");
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (rc == 1) {
        char *line = krc_buf_take(&a->line);
        char *json = krc_buf_take(&a->json);
        if (line == NULL || json == NULL) {
            krc_free(line);
            krc_free(json);
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory describing what changed");
        } else {
            *ret_line = line;
            *ret_json = json;
        }
    }
    krc_buf_cleanup(&a->line);
    krc_buf_cleanup(&a->json);
    krc_free(a);
    return rc;
}
