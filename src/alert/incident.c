/* The incident table (include/krc/alert/incident.h): pure, bounded, the
 * time passed in. */
#include "krc/alert/incident.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

int krc_incidents_init(struct krc_incidents *t, size_t cap)
{
    memset(t, 0, sizeof(*t));
    t->cap = cap > 0 ? cap : 1;
    t->next_seq = 1;
    return 0;
}

void krc_incidents_cleanup(struct krc_incidents *t)
{
    krc_free(t->v);
    memset(t, 0, sizeof(*t));
}

static int key_is(const struct krc_incident *x, const char *ns, const char *kind, const char *name,
                  const char *container)
{
    return strcmp(x->namespace, ns) == 0 && strcmp(x->workload_kind, kind) == 0 &&
           strcmp(x->workload_name, name) == 0 && strcmp(x->container, container) == 0;
}

struct krc_incident *krc_incident_match(struct krc_incidents *t, const char *ns, const char *kind,
                                        const char *name, const char *container,
                                        enum krc_cause cause)
{
    struct krc_incident *best = NULL;

    for (size_t i = 0; i < t->n; i++) {
        struct krc_incident *x = &t->v[i];
        if (x->ending || !key_is(x, ns, kind, name, container)) {
            continue;
        }
        if (x->cause == cause) {
            return x;
        }
        if (x->first_cheap == cause && best == NULL) {
            best = x;
        }
    }
    return best;
}

struct krc_incident *krc_incident_latest(struct krc_incidents *t, const char *ns, const char *kind,
                                         const char *name, const char *container)
{
    struct krc_incident *best = NULL;

    for (size_t i = 0; i < t->n; i++) {
        struct krc_incident *x = &t->v[i];
        if (!x->ending && key_is(x, ns, kind, name, container) &&
            (best == NULL || x->last_at > best->last_at)) {
            best = x;
        }
    }
    return best;
}

struct krc_incident *krc_incident_by_seq(struct krc_incidents *t, uint64_t seq)
{
    for (size_t i = 0; seq != 0 && i < t->n; i++) {
        if (t->v[i].seq == seq) {
            return &t->v[i];
        }
    }
    return NULL;
}

struct krc_incident *krc_incident_by_id(struct krc_incidents *t, int64_t id)
{
    for (size_t i = 0; id > 0 && i < t->n; i++) {
        if (t->v[i].id == id) {
            return &t->v[i];
        }
    }
    return NULL;
}

void krc_incident_remove(struct krc_incidents *t, struct krc_incident *inc)
{
    size_t i = (size_t)(inc - t->v);

    if (i < t->n) {
        t->v[i] = t->v[t->n - 1];
        t->n--;
    }
}

struct krc_incident *krc_incident_open(struct krc_incidents *t, const char *ns, const char *kind,
                                       const char *name, const char *container,
                                       enum krc_cause cause, int64_t now_s)
{
    struct krc_incident *x;

    if (t->cap == 0) {
        return NULL; /* not initialised */
    }
    if (t->n == t->cap) {
        struct krc_incident *old = &t->v[0];
        for (size_t i = 1; i < t->n; i++) {
            if (t->v[i].last_at < old->last_at) {
                old = &t->v[i];
            }
        }
        krc_incident_remove(t, old);
    }
    if (t->n == t->capacity) {
        size_t grown = t->capacity == 0 ? 16 : t->capacity * 2;
        struct krc_incident *v;
        if (grown > t->cap) {
            grown = t->cap;
        }
        v = krc_realloc(t->v, grown * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        t->v = v;
        t->capacity = grown;
    }
    x = &t->v[t->n++];
    memset(x, 0, sizeof(*x));
    x->seq = t->next_seq++;
    snprintf(x->namespace, sizeof(x->namespace), "%s", ns);
    snprintf(x->workload_kind, sizeof(x->workload_kind), "%s", kind);
    snprintf(x->workload_name, sizeof(x->workload_name), "%s", name);
    snprintf(x->container, sizeof(x->container), "%s", container);
    x->cause = cause;
    x->first_cheap = cause;
    x->restarts = 1;
    x->first_at = x->last_at = now_s;
    x->last_reply_at = x->last_update_at = now_s;
    x->told_reply = x->told_update = 1;
    return x;
}

void krc_incident_count(struct krc_incident *inc, int64_t now_s)
{
    inc->restarts++;
    if (now_s > inc->last_at) {
        inc->last_at = now_s;
    }
}

int krc_incident_reply_due(const struct krc_incident *inc, int64_t now_s, long reply_s)
{
    return now_s - inc->last_reply_at >= reply_s;
}

int krc_incident_update_due(const struct krc_incident *inc, int64_t now_s, long update_s)
{
    return now_s - inc->last_update_at >= update_s;
}

void krc_incident_told(struct krc_incident *inc, int reply, int64_t now_s)
{
    if (reply) {
        inc->last_reply_at = now_s;
        inc->told_reply = inc->restarts;
    } else {
        inc->last_update_at = now_s;
        inc->told_update = inc->restarts;
    }
}

/* Does `hay` (NUL-terminated lines) hold the line line[len]? */
static int has_line(const char *hay, const char *line, size_t len)
{
    const char *p = hay;

    while (*p != '\0') {
        const char *e = strchr(p, '\n');
        size_t l = e != NULL ? (size_t)(e - p) : strlen(p);
        while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' ')) {
            l--;
        }
        if (l == len && memcmp(p, line, len) == 0) {
            return 1;
        }
        if (e == NULL) {
            break;
        }
        p = e + 1;
    }
    return 0;
}

void krc_incident_first_facts(const struct krc_incident *inc, struct krc_incident_facts *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->has_exit_code = inc->first.has_exit_code;
    ret->exit_code = inc->first.exit_code;
    ret->signal = inc->first.signal;
    snprintf(ret->reason, sizeof(ret->reason), "%.*s", (int)sizeof(ret->reason) - 1,
             inc->first.reason);
    snprintf(ret->node, sizeof(ret->node), "%s", inc->first_node);
    ret->has_confidence = inc->first_diagnosed;
    ret->confidence = inc->first.confidence;
}

void krc_incident_keep_log(const char *log, size_t len, char *out, size_t size)
{
    size_t from = 0;

    if (size == 0) {
        return;
    }
    out[0] = '\0';
    if (log == NULL || len == 0) {
        return;
    }
    if (len >= size) {
        const char *nl;
        from = len - (size - 1);
        nl = memchr(log + from, '\n', len - from);
        from = nl != NULL ? (size_t)(nl - log) + 1 : from;
    }
    memcpy(out, log + from, len - from);
    out[len - from] = '\0';
    /* a NUL inside the log ends the kept text early: fine for a comparison of lines */
}

void krc_incident_log_differs(const char *first_log, const char *log, size_t len, char *out,
                              size_t size)
{
    size_t i = 0;

    out[0] = '\0';
    if (first_log == NULL || first_log[0] == '\0' || log == NULL || len == 0 || size == 0) {
        return;
    }
    while (i < len) {
        const char *p = log + i;
        const char *e = memchr(p, '\n', len - i);
        size_t l = e != NULL ? (size_t)(e - p) : len - i;
        size_t k = l;
        while (k > 0 && (p[k - 1] == '\r' || p[k - 1] == ' ')) {
            k--;
        }
        if (k > 0 && !has_line(first_log, p, k)) {
            if (k >= size) {
                k = size - 1;
            }
            memcpy(out, p, k);
            out[k] = '\0';
            return;
        }
        i += l + 1;
    }
}

static void append(char *out, size_t size, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(out);

    if (used + 1 < size) {
        snprintf(out + used, size - used, fmt, used > 0 ? "; " : "", a, b);
    }
}

void krc_incident_differs(const struct krc_incident_facts *first,
                          const struct krc_incident_facts *now, const char *log_line, char *out,
                          size_t size)
{
    char a[32], b[32];

    if (size == 0) {
        return;
    }
    out[0] = '\0';
    if (first->has_exit_code && now->has_exit_code &&
        (first->exit_code != now->exit_code || first->signal != now->signal)) {
        snprintf(a, sizeof(a), "%d", first->exit_code);
        snprintf(b, sizeof(b), "%d", now->exit_code);
        append(out, size, "%sexit code %s \xe2\x86\x92 %s", a, b);
    }
    if (strcmp(first->reason, now->reason) != 0 && (first->reason[0] || now->reason[0])) {
        append(out, size, "%sreason %s \xe2\x86\x92 %s", first->reason[0] ? first->reason : "none",
               now->reason[0] ? now->reason : "none");
    }
    if (first->node[0] && now->node[0] && strcmp(first->node, now->node) != 0) {
        append(out, size, "%snode %s \xe2\x86\x92 %s", first->node, now->node);
    }
    if (first->has_confidence && now->has_confidence && first->confidence != now->confidence) {
        append(out, size, "%scause confidence %s \xe2\x86\x92 %s",
               krc_confidence_name(first->confidence), krc_confidence_name(now->confidence));
    }
    if (log_line != NULL && log_line[0] != '\0') {
        append(out, size, "%s%slog: %s", "", log_line);
    }
}

void krc_incident_headline(const struct krc_incident *inc, long since_last, const char *differs,
                           char *out, size_t size)
{
    char id[32] = "";
    char since[32];

    if (inc->id > 0) {
        snprintf(id, sizeof(id), " #%lld", (long long)inc->id);
    }
    krc_clock_format_rfc3339(inc->first_at, since, sizeof(since));
    snprintf(out, size,
             "Incident%s of %s %s/%s container %s (%s): %ld more restart%s since the last "
             "message, %ld since %s. %s%s",
             id, inc->workload_kind, inc->namespace, inc->workload_name, inc->container,
             krc_cause_name(inc->cause), since_last, since_last == 1 ? "" : "s", inc->restarts,
             since, differs != NULL && differs[0] ? "Differs from the first failure: " : "",
             differs != NULL && differs[0] ? differs : "The same as the first failure.");
}
