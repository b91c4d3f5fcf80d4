/* The wording of a diagnosis (src/diagnose/diagnose_private.h): display-safe
 * text, evidence and "not checked" lines, quoted clauses and the summary
 * with and without them, the termination line, the node's conditions, the
 * kubectl commands, and what every diagnosis says whatever its rule. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

size_t krc_diagnose_sanitize(const void *data, size_t len, char *out, size_t outsz)
{
    const unsigned char *p = data;
    size_t i = 0;
    size_t o = 0;
    int last_space = 1; /* drop leading blanks */

    if (outsz == 0) {
        return 0;
    }
    while (i < len) {
        unsigned char c = p[i];
        size_t need;
        size_t seq = 1;
        const char *put = NULL;
        char one[4];

        if (c == 0x1b) {
            i += krc_text_ansi_len(p + i, len - i);
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            one[0] = ' ';
            one[1] = '\0';
            put = one;
            seq = 1;
        } else if (c < 0x80) {
            one[0] = (char)c;
            one[1] = '\0';
            put = one;
        } else {
            uint32_t cp;
            seq = krc_text_utf8_decode(p + i, len - i, &cp);
            if (seq == 0) {
                put = KRC_TEXT_REPLACEMENT;
                seq = 1;
            }
        }
        if (put != NULL && put[0] == ' ' && put[1] == '\0') {
            if (last_space) {
                i += seq;
                continue;
            }
            last_space = 1;
        } else {
            last_space = 0;
        }
        need = put != NULL ? strlen(put) : seq;
        if (o + need + 1 > outsz) {
            /* Cut: make room for "..." */
            return krc_text_truncate(out, o, outsz, "...");
        }
        if (put != NULL) {
            memcpy(out + o, put, need);
        } else {
            memcpy(out + o, p + i, need);
        }
        o += need;
        i += seq;
    }
    while (o > 0 && out[o - 1] == ' ') {
        o--;
    }
    out[o] = '\0';
    return o;
}

void krc_diagnose_format_duration(int64_t s, char *out, size_t outsz)
{
    if (s < 0) {
        s = 0;
    }
    if (s < 60) {
        snprintf(out, outsz, "%llds", (long long)s);
    } else if (s < 3600) {
        snprintf(out, outsz, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
    } else {
        snprintf(out, outsz, "%lldh%lldm%llds", (long long)(s / 3600), (long long)(s % 3600 / 60),
                 (long long)(s % 60));
    }
}

static void format_time(int64_t t, char *out, size_t outsz)
{
    int64_t days = t / 86400;
    int64_t rem = t % 86400;
    int64_t z, era, doe, yoe, y, doy, mp, d, m;

    if (t <= 0) {
        snprintf(out, outsz, "?");
        return;
    }
    /* civil_from_days (H. Hinnant) */
    z = days + 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    snprintf(out, outsz, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)y, (long long)m,
             (long long)d, (long long)(rem / 3600), (long long)(rem % 3600 / 60),
             (long long)(rem % 60));
}

/* Display text for a hit: the CR-separated segment holding the match,
 * centred on it when the line is long. */
static void hit_text(const struct hit *h, char *out, size_t outsz)
{
    size_t s = 0;
    size_t e = h->line.len;
    size_t i;
    size_t budget = KRC_DIAG_EVIDENCE_MAX - 40;
    int cut_front = 0;
    size_t o = 0;

    for (i = h->at; i > 0; i--) {
        if (h->line.p[i - 1] == '\r') {
            s = i;
            break;
        }
    }
    for (i = h->at; i < h->line.len; i++) {
        if (h->line.p[i] == '\r') {
            e = i;
            break;
        }
    }
    {
        struct span seg = krc_diag_strip_ts((struct span){h->line.p + s, e - s});
        s = (size_t)(seg.p - h->line.p);
    }
    if (e - s > budget && h->at > s + 60) {
        s = h->at - 60;
        /* start on a character, not inside a UTF-8 sequence */
        for (int k = 0; k < 3 && s < h->at && ((unsigned char)h->line.p[s] & 0xc0) == 0x80; k++) {
            s++;
        }
        cut_front = 1;
    }
    if (cut_front && outsz > 4) {
        /* clang-tidy: the "..." is a prefix: krc_diagnose_sanitize writes the rest and the NUL */
        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
        memcpy(out, "...", 3);
        o = 3;
    }
    if (e - s > budget + 8) {
        e = s + budget + 8; /* sanitize adds the trailing "..." */
    }
    krc_diagnose_sanitize(h->line.p + s, e - s, out + o, outsz - o < budget ? outsz - o : budget);
}

void krc_diag_add_evidence(struct builder *b, const char *fmt, ...)
{
    char raw[1024];
    char clean[KRC_DIAG_EVIDENCE_MAX];
    char **p;
    va_list ap;
    size_t n;

    if (b->d->n_evidence >= KRC_DIAG_MAX_EVIDENCE) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    n = krc_diagnose_sanitize(raw, strlen(raw), clean, sizeof(clean));
    if (n == 0) {
        return;
    }
    p = krc_realloc(b->d->evidence, (b->d->n_evidence + 1) * sizeof(*p));
    if (p == NULL) {
        b->oom = 1;
        return;
    }
    b->d->evidence = p;
    p[b->d->n_evidence] = krc_strdup(clean);
    if (p[b->d->n_evidence] == NULL) {
        b->oom = 1;
        return;
    }
    b->d->n_evidence++;
}

void krc_diag_evidence_event(struct builder *b, const struct krc_report_event *e)
{
    char when[32];

    format_time(e->last_timestamp, when, sizeof(when));
    if (e->count > 1) {
        krc_diag_add_evidence(b, "event %s x%d (last %s): %s", e->reason ? e->reason : "?",
                              e->count, when, krc_diag_strip_combined(e->message));
    } else {
        krc_diag_add_evidence(b, "event %s (%s): %s", e->reason ? e->reason : "?", when,
                              krc_diag_strip_combined(e->message));
    }
}

/* Text quoted into a summary from the pod (a log line, an event, runtime or
 * termination message) is written with the words that introduce it between
 * Q_OPEN and Q_CLOSE, so that krc_diag_summary_set can also make the summary without
 * it (summary_unquoted). Quoted text is sanitized first: control characters
 * become spaces, so no quoted byte is a marker. */
#define Q_OPEN '\x01'
#define Q_CLOSE '\x02'

/* lead + line + tail as one quoted clause; line is sanitized already. */
void krc_diag_quote_clean(struct krc_buf *s, const char *lead, const char *line, const char *tail)
{
    krc_buf_printf(s, "%c%s%s%s%c", Q_OPEN, lead, line, tail, Q_CLOSE);
}

/* lead + the first `max` bytes of text (sanitized) + tail, quoted. */
void krc_diag_quote(struct krc_buf *s, const char *lead, const char *text, size_t max,
                    const char *tail)
{
    char line[KRC_DIAG_EVIDENCE_MAX];
    size_t n = strlen(text);

    krc_diagnose_sanitize(text, n < max ? n : max, line, sizeof(line));
    krc_diag_quote_clean(s, lead, line, tail);
}

/* text with its quoted clauses (keep: only their markers) left out,
 * sanitized, in a new string; NULL when out of memory. */
static char *summary_form(const char *text, size_t n, int keep)
{
    size_t cap = n * 3 + 4 > 2048 ? 2048 : n * 3 + 4;
    char *plain = krc_malloc(n + 1);
    char *clean = krc_malloc(cap);
    size_t o = 0;
    int in_quote = 0;

    if (plain == NULL || clean == NULL) {
        krc_free(plain);
        krc_free(clean);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (text[i] == Q_OPEN || text[i] == Q_CLOSE) {
            in_quote = text[i] == Q_OPEN;
        } else if (keep || !in_quote) {
            plain[o++] = text[i];
        }
    }
    krc_diagnose_sanitize(plain, o, clean, cap);
    krc_free(plain);
    return clean;
}

void krc_diag_summary_set(struct builder *b, struct krc_buf *s)
{
    char *text = krc_buf_take(s);
    char *full;
    char *unquoted;
    size_t n;

    if (text == NULL) {
        b->oom = 1;
        return;
    }
    n = strlen(text);
    full = summary_form(text, n, 1);
    unquoted = summary_form(text, n, 0);
    krc_free(text);
    if (full == NULL || unquoted == NULL) {
        krc_free(full);
        krc_free(unquoted);
        b->oom = 1;
        return;
    }
    krc_free(b->d->summary);
    krc_free(b->d->summary_unquoted);
    b->d->summary = full;
    b->d->summary_unquoted = unquoted;
}

static int condition_bad(const struct krc_report_node_condition *c)
{
    if (c->type == NULL || c->status == NULL) {
        return 0;
    }
    return strcmp(c->type, "Ready") == 0 ? strcmp(c->status, "True") != 0
                                         : strcmp(c->status, "False") != 0;
}

static int same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void node_evidence(struct builder *b, const struct krc_report *r)
{
    const struct krc_report_node *n = &r->node;
    size_t i;

    if (!n->present) {
        return;
    }
    /* One line per distinct status, reason and message: a node that stops
     * posting status turns every condition Unknown with the same words. */
    for (i = 0; i < n->n_conditions; i++) {
        const struct krc_report_node_condition *c = &n->conditions[i];
        char types[256];
        size_t o = 0;
        size_t j;
        int dup = 0;
        int msg;
        if (!condition_bad(c)) {
            continue;
        }
        for (j = 0; j < i && !dup; j++) {
            const struct krc_report_node_condition *e = &n->conditions[j];
            dup = condition_bad(e) && strcmp(e->status, c->status) == 0 &&
                  same_text(e->reason, c->reason) && same_text(e->message, c->message);
        }
        if (dup) {
            continue;
        }
        types[0] = '\0';
        for (j = i; j < n->n_conditions && o + 1 < sizeof(types); j++) {
            const struct krc_report_node_condition *e = &n->conditions[j];
            if (condition_bad(e) && strcmp(e->status, c->status) == 0 &&
                same_text(e->reason, c->reason) && same_text(e->message, c->message)) {
                int k = snprintf(types + o, sizeof(types) - o, "%s%s", o ? ", " : "", e->type);
                o += k > 0 ? (size_t)k : 0;
            }
        }
        msg = c->message != NULL && c->message[0] != '\0';
        krc_diag_add_evidence(b, "node %s: %s %s=%s%s%s%s%s%s", n->name ? n->name : "?",
                              strchr(types, ',') ? "conditions" : "condition", types, c->status,
                              c->reason ? " (" : "", c->reason ? c->reason : "",
                              c->reason ? ")" : "", msg ? ": " : "", msg ? c->message : "");
    }
    if (n->unschedulable) {
        krc_diag_add_evidence(b, "node %s is cordoned (unschedulable)", n->name ? n->name : "?");
    }
    for (i = 0; i < n->capacity.n; i++) {
        const char *key = n->capacity.items[i].key;
        const char *cap = n->capacity.items[i].value;
        const char *alloc = krc_kv_list_get(&n->allocatable, key);
        if (krc_report_is_gpu_resource(key) && alloc != NULL && strcmp(cap, alloc) != 0) {
            krc_diag_add_evidence(
                b,
                "node %s: %s allocatable %s < capacity %s (the device plugin marked a "
                "GPU unhealthy)",
                n->name ? n->name : "?", key, alloc, cap);
        }
    }
}

static void add_line(struct builder *b, char ***arr, size_t *n, const char *text)
{
    char clean[KRC_DIAG_EVIDENCE_MAX * 2];
    char **p;
    size_t i;

    if (*n >= KRC_DIAG_MAX_EVIDENCE ||
        krc_diagnose_sanitize(text, strlen(text), clean, sizeof(clean)) == 0) {
        return;
    }
    for (i = 0; i < *n; i++) {
        if (strcmp((*arr)[i], clean) == 0) {
            return;
        }
    }
    p = krc_realloc(*arr, (*n + 1) * sizeof(*p));
    if (p == NULL) {
        b->oom = 1;
        return;
    }
    *arr = p;
    p[*n] = krc_strdup(clean);
    if (p[*n] == NULL) {
        b->oom = 1;
        return;
    }
    (*n)++;
}

void krc_diag_add_unchecked(struct builder *b, const char *fmt, ...)
{
    char raw[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    add_line(b, &b->d->unchecked, &b->d->n_unchecked, raw);
}

/* The evidence line of a text hit. */
void krc_diag_evidence_hit(struct builder *b, const struct dctx *x)
{
    char line[KRC_DIAG_EVIDENCE_MAX];

    if (x->ev != NULL) {
        krc_diag_evidence_event(b, x->ev);
        return;
    }
    if (!x->h.found) {
        return;
    }
    hit_text(&x->h, line, sizeof(line));
    krc_diag_add_evidence(b, "%s: %s", x->where ? x->where : "log", line);
}

/* The matched text for a summary, at most `max` bytes. */
void krc_diag_hit_short(const struct dctx *x, char *out, size_t outsz)
{
    if (x->ev != NULL) {
        krc_diagnose_sanitize(krc_diag_strip_combined(x->ev->message),
                              strlen(krc_diag_strip_combined(x->ev->message)), out, outsz);
    } else if (x->h.found) {
        hit_text(&x->h, out, outsz);
    } else {
        out[0] = '\0';
    }
}

void krc_diag_say_exit(const struct dctx *x, struct krc_buf *s)
{
    if (!x->has_exit) {
        krc_buf_append_str(s, "exit code unknown");
        return;
    }
    krc_buf_printf(s, "exit %d%s%s%s", x->exit_code, x->signal_name ? ", " : "",
                   x->signal_name ? x->signal_name : "", "");
}

/* "exited 137 (SIGKILL)" / "stopped (exit code unknown)" */
void krc_diag_say_exited(const struct dctx *x, struct krc_buf *s)
{
    if (!x->has_exit) {
        krc_buf_append_str(s, "stopped (exit code unknown)");
        return;
    }
    krc_buf_printf(s, "exited %d", x->exit_code);
    if (x->signal_name != NULL) {
        krc_buf_printf(s, " (%s)", x->signal_name);
    }
}

void krc_diag_say_after(const struct dctx *x, struct krc_buf *s)
{
    if (x->dur[0]) {
        krc_buf_printf(s, " after %s", x->dur);
    }
}

#define N_RULES (sizeof(rules) / sizeof(rules[0]))

/* A Kubernetes name that can be pasted into a shell unquoted. */
static int name_ok(const char *s)
{
    size_t i;

    if (s == NULL || s[0] == '\0' || s[0] == '-' || strlen(s) > 253) {
        return 0;
    }
    for (i = 0; s[i] != '\0'; i++) {
        if (!(is_alnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '.' || s[i] == '_')) {
            return 0;
        }
    }
    return 1;
}

void krc_diag_add_commands(struct builder *b, const struct dctx *x, unsigned cmds)
{
    const struct krc_report *r = x->r;
    int pod = name_ok(r->namespace) && name_ok(r->name);
    int node = name_ok(r->node_name);
    char line[800];

    if ((cmds & CMD_LOGS_PREV) && pod && name_ok(x->c->name)) {
        snprintf(line, sizeof(line), "kubectl logs -n %s %s -c %s --previous", r->namespace,
                 r->name, x->c->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_DESCRIBE) && pod) {
        snprintf(line, sizeof(line), "kubectl describe pod -n %s %s", r->namespace, r->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_EVENTS) && pod) {
        snprintf(line, sizeof(line),
                 "kubectl get events -n %s --field-selector involvedObject.name=%s "
                 "--sort-by=.lastTimestamp",
                 r->namespace, r->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_TOP) && pod) {
        snprintf(line, sizeof(line), "kubectl top pod -n %s %s --containers", r->namespace,
                 r->name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_NODE) && node) {
        snprintf(line, sizeof(line), "kubectl describe node %s", r->node_name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
    if ((cmds & CMD_ARCH) && node) {
        snprintf(line, sizeof(line), "kubectl get node %s -L kubernetes.io/arch", r->node_name);
        add_line(b, &b->d->commands, &b->d->n_commands, line);
    }
}

/* What could not be seen, for a diagnosis that is not already certain. */
void krc_diag_add_missing(struct builder *b, const struct dctx *x, const struct rule *rule)
{
    const struct krc_report *r = x->r;
    int sure = x->conf == KRC_CONFIDENCE_HIGH;

    if (x->t == NULL) {
        krc_diag_add_unchecked(b,
                               "no terminated state (lastState.terminated) was given: the previous "
                               "instance's exit code, reason and run time are unknown");
    } else if (!x->has_exit) {
        krc_diag_add_unchecked(
            b, "the terminated state has no exitCode: the rules that read exit codes "
               "could not be applied");
    } else if (x->t->started_at == 0 && !x->start_error) {
        krc_diag_add_unchecked(
            b, "start time unknown: how long the instance ran could not be checked");
    }
    if (sure) {
        return;
    }
    if (x->pod_events == 0) {
        krc_diag_add_unchecked(
            b, "no pod events were available, so a liveness or startup probe kill or "
               "an eviction cannot be ruled out");
    } else if (x->hi > 0 && x->window_events == 0) {
        krc_diag_add_unchecked(
            b, "no pod events from the time of this termination were available "
               "(events expire after about an hour), so a probe kill cannot be ruled "
               "out");
    }
    if (!r->node.present && rule->cause != KRC_CAUSE_COMPLETED) {
        krc_diag_add_unchecked(b,
                               "no node object was given: node pressure and the node's state were "
                               "not checked");
    }
    if (x->log == NULL && !x->start_error) {
        if (r->log != NULL && r->log_len > 0) {
            krc_diag_add_unchecked(
                b,
                "the previous log given is of container %s: the last messages of "
                "container %s were not read",
                r->log_container ? r->log_container : "?", x->c->name);
        } else if (r->log_flags & KRC_REPORT_LOG_EMPTY) {
            krc_diag_add_unchecked(
                b, "the previous log was empty: the application's last messages could "
                   "not be read");
        } else {
            krc_diag_add_unchecked(b,
                                   "no previous log was available: the application's last messages "
                                   "could not be read");
        }
    }
    if (!x->c->has_spec) {
        krc_diag_add_unchecked(b,
                               "the container spec was not given: probes and resource limits could "
                               "not be checked");
    }
}

void krc_diag_add_common_evidence(struct builder *b, const struct dctx *x)
{
    char when_s[32];
    char when_f[32];
    char code[48];

    if (x->t == NULL) {
        return;
    }
    format_time(x->t->started_at, when_s, sizeof(when_s));
    format_time(x->t->finished_at, when_f, sizeof(when_f));
    if (x->has_exit) {
        snprintf(code, sizeof(code), "exitCode=%d%s%s%s", x->exit_code, x->signal_name ? " (" : "",
                 x->signal_name ? x->signal_name : "", x->signal_name ? ")" : "");
    } else {
        snprintf(code, sizeof(code), "exitCode missing");
    }
    krc_diag_add_evidence(b, "%s: reason=%s %s, started %s, finished %s%s%s",
                          x->from_last ? "lastState.terminated" : "state.terminated",
                          x->t->reason ? x->t->reason : "(none)", code,
                          x->t->started_at > 0 ? when_s
                          : x->start_error     ? "never (a start error)"
                                               : "unknown",
                          x->t->finished_at > 0 ? when_f : "unknown", x->dur[0] ? ", ran " : "",
                          x->dur);
}

void krc_diag_finish(struct builder *b, struct dctx *x, struct krc_buf *s)
{
    const struct krc_report *r = x->r;
    const struct krc_report_container *c = x->c;
    struct krc_diagnosis *d = b->d;
    int crashloop =
        c->state == KRC_REPORT_STATE_WAITING && str_eq(c->state_reason, "CrashLoopBackOff");
    size_t i;

    krc_diag_kill_evidence(b, x);
    if (c->restart_count > 0) {
        krc_buf_printf(s, "; %d restart%s", c->restart_count, c->restart_count == 1 ? "" : "s");
    }
    if (d->gpus > 0) {
        krc_buf_printf(s, "; the pod holds %ld GPU%s%s", d->gpus, d->gpus == 1 ? "" : "s",
                       crashloop ? " while crash-looping" : "");
        krc_diag_add_evidence(b, "the pod holds %ld GPU%s%s", d->gpus, d->gpus == 1 ? "" : "s",
                              crashloop ? " while it crash-loops" : "");
    }
    if (c->state == KRC_REPORT_STATE_WAITING && c->state_reason != NULL) {
        krc_diag_add_evidence(b, "state: waiting %s%s%s", c->state_reason,
                              c->state_message ? ": " : "",
                              c->state_message ? c->state_message : "");
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        if (str_eq(e->reason, "BackOff") && krc_report_event_matches(r, e, c) &&
            krc_diag_str_has_ci(e->message, "restarting failed container")) {
            krc_diag_evidence_event(b, e);
            break;
        }
    }
    node_evidence(b, r);
    krc_diag_evidence_disruption(b, r);
    if (r->log_flags & KRC_REPORT_LOG_CAPPED) {
        krc_diag_add_evidence(b, "the previous log was read only up to the transfer cap; its last "
                                 "lines were not seen");
    } else if (r->log_flags & KRC_REPORT_LOG_TRUNCATED) {
        krc_diag_add_evidence(b, "the previous log was truncated; only its end was analysed");
    }
}

int krc_diag_set_str(struct builder *b, char **dst, const char *src)
{
    krc_free(*dst);
    *dst = krc_strdup(src);
    if (*dst == NULL) {
        b->oom = 1;
        return -1;
    }
    return 0;
}
