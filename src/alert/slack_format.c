#include "krc/alert/slack_format.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/logtail.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define ZWSP "\xe2\x80\x8b"
#define BULLET "\xe2\x80\xa2"
#define DOT " \xc2\xb7 "
#define FENCE "```"

/* byte capacity of a buffer holding `units` UTF-16 units of text (a unit
 * is at most 3 bytes: BMP code points; astral ones are 4 bytes for 2) */
#define BYTES_FOR(units) ((units)*3u + 64u)

#define CODE_BUDGET (KRC_SLACK_SECTION_MAX - 8) /* "```\n" + "\n```" */
#define EVIDENCE_LINE_MAX 600
#define EVENT_MSG_MAX 400
#define NOTE_MAX 400
#define NAME_MAX_UNITS 300
#define MORE_RESERVE 60 /* room kept for an "… and K more" line */
#define NEXT_STEP_MAX 600
#define COMMAND_MAX 400 /* one kubectl command */

/* escape flags */
enum {
    ESC_MRKDWN = 1u << 0,   /* & < > entities, backtick runs broken */
    ESC_NEWLINES = 1u << 1, /* keep \n and \t (else spaces) */
};

/* ---- severity and titles -------------------------------------------------- */

enum krc_slack_severity krc_slack_cause_severity(enum krc_cause cause)
{
    switch (cause) {
    case KRC_CAUSE_OOM_KILLED:
    case KRC_CAUSE_SEGFAULT:
    case KRC_CAUSE_GPU_OUT_OF_MEMORY:
    case KRC_CAUSE_GPU_ERROR:
    case KRC_CAUSE_COMMAND_NOT_FOUND:
    case KRC_CAUSE_PERMISSION_DENIED:
    case KRC_CAUSE_APP_ERROR:
        return KRC_SLACK_SEV_CRITICAL;
    case KRC_CAUSE_LIVENESS_PROBE_FAILED:
    case KRC_CAUSE_STARTUP_PROBE_FAILED:
    case KRC_CAUSE_DEPENDENCY_UNREACHABLE:
    case KRC_CAUSE_KILLED:
        return KRC_SLACK_SEV_WARNING;
    default:
        return KRC_SLACK_SEV_INFO;
    }
}

const char *krc_slack_severity_emoji(enum krc_slack_severity sev)
{
    switch (sev) {
    case KRC_SLACK_SEV_CRITICAL:
        return ":red_circle:";
    case KRC_SLACK_SEV_WARNING:
        return ":large_orange_circle:";
    default:
        return ":white_circle:";
    }
}

const char *krc_slack_severity_color(enum krc_slack_severity sev)
{
    switch (sev) {
    case KRC_SLACK_SEV_CRITICAL:
        return "#E01E5A";
    case KRC_SLACK_SEV_WARNING:
        return "#F2A33A";
    default:
        return "#9E9EA6";
    }
}

const char *krc_slack_cause_title(enum krc_cause cause)
{
    static const char *const titles[KRC_CAUSE_COUNT] = {
        "Restarted",
        "OOMKilled",
        "Liveness probe failed",
        "Startup probe failed",
        "Command not found",
        "Permission denied",
        "Segmentation fault",
        "GPU out of memory",
        "GPU error",
        "Dependency unreachable",
        "Application error",
        "Completed",
        "Killed",
        "Terminated",
        "Container failed to start",
        "Exec format error",
        "Illegal instruction",
        "Aborted",
        "Application out of memory",
        "Disk full",
        "Evicted",
    };

    if ((int)cause < 0 || (int)cause >= KRC_CAUSE_COUNT) {
        return titles[0];
    }
    return titles[cause];
}

void krc_slack_options_init(struct krc_slack_options *o)
{
    memset(o, 0, sizeof(*o));
    o->max_log_lines = KRC_SLACK_DEFAULT_LOG_LINES;
}

/* ---- lengths and escaping ------------------------------------------------- */

size_t krc_slack_text_length(const char *s, size_t len)
{
    return krc_text_utf16_len(s, len);
}

static size_t buf_units(const struct krc_buf *b)
{
    return krc_slack_text_length(krc_buf_str(b), b->len);
}

/* Code points never shown: C1 controls, bidirectional overrides/isolates
 * (they can make a line read differently from what it is), BOM. */
static int is_hidden(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

/* Append the display-safe, escaped form of p[0..len) to out, adding at most
 * max_units units. *ret_consumed: input bytes used (len when it all fit). */
static int escape_into(struct krc_buf *out, const unsigned char *p, size_t len, unsigned flags,
                       size_t max_units, size_t *ret_consumed, size_t *ret_units)
{
    size_t i = 0;
    size_t units = 0;
    int prev_tick = 0;
    int rc = 0;

    while (i < len && rc == 0) {
        unsigned char c = p[i];
        const char *piece = NULL;
        size_t plen = 0;
        size_t pu = 1;
        size_t seq = 1;
        uint32_t cp = 0;
        char one[2];
        const char *two_a = NULL; /* ZWSP before a backtick */

        if (c == 0x1b) {
            i += krc_text_ansi_len(p + i, len - i);
            continue;
        }
        if (c == '\n' || c == '\t') {
            one[0] = (flags & ESC_NEWLINES) ? (char)c : ' ';
            piece = one;
            plen = 1;
        } else if (c < 0x20 || c == 0x7f) {
            i++;
            continue;
        } else if ((flags & ESC_MRKDWN) && c == '&') {
            piece = "&amp;";
            plen = 5;
            pu = 5;
        } else if (c == '<') {
            piece = (flags & ESC_MRKDWN) ? "&lt;" : "\xe2\x80\xb9"; /* plain text: U+2039 */
            plen = strlen(piece);
            pu = (flags & ESC_MRKDWN) ? 4 : 1;
        } else if (c == '>') {
            piece = (flags & ESC_MRKDWN) ? "&gt;" : "\xe2\x80\xba";
            plen = strlen(piece);
            pu = (flags & ESC_MRKDWN) ? 4 : 1;
        } else if (c < 0x80) {
            one[0] = (char)c;
            piece = one;
            plen = 1;
            if (c == '`' && prev_tick && (flags & ESC_MRKDWN)) {
                two_a = ZWSP;
                pu = 2;
            }
        } else {
            seq = krc_text_utf8_decode(p + i, len - i, &cp);
            if (seq == 0) {
                seq = 1;
                piece = KRC_TEXT_REPLACEMENT;
                plen = 3;
            } else if (is_hidden(cp)) {
                i += seq;
                continue;
            } else {
                piece = (const char *)p + i;
                plen = seq;
                pu = seq == 4 ? 2 : 1;
            }
        }
        if (units + pu > max_units) {
            break;
        }
        if (two_a != NULL) {
            rc = krc_buf_append(out, two_a, strlen(two_a));
        }
        rc = rc ? rc : krc_buf_append(out, piece, plen);
        units += pu;
        prev_tick = c == '`';
        i += seq;
    }
    /* trailing bytes that would show nothing do not make a cut */
    while (i < len && (p[i] < 0x20 && p[i] != '\n' && p[i] != '\t')) {
        i++;
    }
    *ret_consumed = i;
    *ret_units = units;
    return rc;
}

int krc_slack_escape(struct krc_buf *out, const void *data, size_t len, int keep_newlines)
{
    size_t consumed;
    size_t units;

    return escape_into(out, data, len, ESC_MRKDWN | (keep_newlines ? ESC_NEWLINES : 0), SIZE_MAX,
                       &consumed, &units);
}

/* ---- formatting context ------------------------------------------------------ */

struct fmt {
    const struct krc_slack_options *o;
    int rc; /* first error, sticky: later steps do nothing */
    int redactions;
    struct krc_buf red; /* scratch for redacted copies */
};

static void fmt_init(struct fmt *f, const struct krc_slack_options *o)
{
    f->o = o;
    f->rc = 0;
    f->redactions = o->redactions_done > 0 ? o->redactions_done : 0;
    krc_buf_init(&f->red, 0);
}

static void fail(struct fmt *f, int rc)
{
    if (f->rc == 0 && rc < 0) {
        f->rc = rc;
    }
}

/* Our own markup or trusted text (numbers, fixed words). */
static void lit(struct fmt *f, struct krc_buf *b, const char *s)
{
    if (f->rc == 0) {
        fail(f, krc_buf_append_str(b, s));
    }
}

static void litf(struct fmt *f, struct krc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void litf(struct fmt *f, struct krc_buf *b, const char *fmt, ...)
{
    va_list ap;

    if (f->rc != 0) {
        return;
    }
    va_start(ap, fmt);
    fail(f, krc_buf_vprintf(b, fmt, ap));
    va_end(ap);
}

/* Untrusted bytes, escaped, at most max_units (cut with "…"). Returns 1
 * when cut. */
static int put_n(struct fmt *f, struct krc_buf *b, const void *s, size_t len, unsigned flags,
                 size_t max_units)
{
    size_t mark = b->len;
    size_t consumed = 0;
    size_t units = 0;

    if (f->rc != 0 || max_units == 0) {
        return max_units == 0 && len > 0;
    }
    fail(f, escape_into(b, s, len, flags, max_units, &consumed, &units));
    if (consumed < len && f->rc == 0) {
        /* cut: redo with room for the ellipsis (pieces are whole, so no
         * UTF-8 sequence or entity is ever split) */
        b->len = mark;
        if (b->data != NULL) {
            b->data[mark] = '\0';
        }
        fail(f, escape_into(b, s, len, flags, max_units - 1, &consumed, &units));
        lit(f, b, ELLIPSIS);
        return 1;
    }
    return 0;
}

static int put(struct fmt *f, struct krc_buf *b, const char *s, size_t max_units)
{
    if (s == NULL) {
        s = "?";
    }
    return put_n(f, b, s, strlen(s), ESC_MRKDWN, max_units);
}

/* The marks in s[0..len): secrets redacted here or before (the pipeline
 * redacts the report before it is formatted, krc_report_redact). */
static int count_marks(const char *s, size_t len)
{
    const size_t ml = sizeof(KRC_REDACT_MARK) - 1;
    int n = 0;

    for (size_t i = 0; i + ml <= len; i++) {
        if (s[i] == '[' && memcmp(s + i, KRC_REDACT_MARK, ml) == 0) {
            n++;
            i += ml - 1;
        }
    }
    return n;
}

/* Redact data with the configured redactor, counting the secrets redacted
 * in what is shown (marks of an earlier redaction too). Returns the text to
 * show: data itself, or a copy in f->red that stays valid until the next
 * call. */
static const unsigned char *redact(struct fmt *f, const void *data, size_t len, size_t *ret_len)
{
    int n;

    *ret_len = len;
    if (f->o->redactor == NULL || f->rc != 0 || len == 0) {
        return data;
    }
    krc_buf_cleanup(&f->red);
    krc_buf_init(&f->red, len * 11 + 64);
    n = krc_redact_apply(f->o->redactor, data, len, &f->red, NULL);
    if (n < 0) {
        fail(f, n);
        return data;
    }
    f->redactions += count_marks(krc_buf_str(&f->red), f->red.len);
    *ret_len = f->red.len;
    return (const unsigned char *)krc_buf_str(&f->red);
}

/* Untrusted text after redaction. */
static void put_red(struct fmt *f, struct krc_buf *b, const char *s, size_t max_units)
{
    size_t n;
    const unsigned char *t;

    if (s == NULL) {
        return;
    }
    t = redact(f, s, strlen(s), &n);
    put_n(f, b, t, n, ESC_MRKDWN, max_units);
}

/* Append `line` as a new line of `sec` if it fits in budget - reserve. */
static int add_line(struct fmt *f, struct krc_buf *sec, const struct krc_buf *line, size_t budget,
                    size_t reserve)
{
    size_t need = buf_units(line) + (sec->len > 0);

    if (f->rc != 0 || buf_units(sec) + need + reserve > budget) {
        return 0;
    }
    if (sec->len > 0) {
        lit(f, sec, "\n");
    }
    fail(f, krc_buf_append(sec, krc_buf_str(line), line->len));
    return f->rc == 0;
}

/* ---- ages (kubectl's HumanDuration) ------------------------------------------------ */

static void human_duration(int64_t s, char *out, size_t outsz)
{
    int64_t m;
    int64_t h;

    if (s < 0) {
        /* clock skew: kubectl says "<invalid>" below -1s; 0s reads better */
        s = 0;
    }
    if (s < 120) {
        snprintf(out, outsz, "%llds", (long long)s);
        return;
    }
    m = s / 60;
    if (m < 10) {
        if (s % 60 == 0) {
            snprintf(out, outsz, "%lldm", (long long)m);
        } else {
            snprintf(out, outsz, "%lldm%llds", (long long)m, (long long)(s % 60));
        }
        return;
    }
    if (m < 180) {
        snprintf(out, outsz, "%lldm", (long long)m);
        return;
    }
    h = s / 3600;
    if (h < 8) {
        if (m % 60 == 0) {
            snprintf(out, outsz, "%lldh", (long long)h);
        } else {
            snprintf(out, outsz, "%lldh%lldm", (long long)h, (long long)(m % 60));
        }
    } else if (h < 48) {
        snprintf(out, outsz, "%lldh", (long long)h);
    } else if (h < 24 * 8) {
        if (h % 24 == 0) {
            snprintf(out, outsz, "%lldd", (long long)(h / 24));
        } else {
            snprintf(out, outsz, "%lldd%lldh", (long long)(h / 24), (long long)(h % 24));
        }
    } else if (h < 24 * 365 * 2) {
        snprintf(out, outsz, "%lldd", (long long)(h / 24));
    } else if (h < 24 * 365 * 8) {
        int64_t dy = (h / 24) % 365;
        if (dy == 0) {
            snprintf(out, outsz, "%lldy", (long long)(h / 24 / 365));
        } else {
            snprintf(out, outsz, "%lldy%lldd", (long long)(h / 24 / 365), (long long)dy);
        }
    } else {
        snprintf(out, outsz, "%lldy", (long long)(h / 24 / 365));
    }
}

/* "2m" for a timestamp, "" when unknown */
static void age_of(const struct fmt *f, int64_t t, char *out, size_t outsz)
{
    if (f->o->now <= 0 || t <= 0) {
        out[0] = '\0';
        return;
    }
    human_duration(f->o->now - t, out, outsz);
}

/* ---- JSON helpers ------------------------------------------------------------------ */

static cJSON *new_obj(struct fmt *f)
{
    cJSON *o = f->rc == 0 ? cJSON_CreateObject() : NULL;

    if (o == NULL) {
        fail(f, KRC_ENOMEM);
    }
    return o;
}

static void set_str(struct fmt *f, cJSON *o, const char *k, const char *v)
{
    if (f->rc == 0 && o != NULL && cJSON_AddStringToObject(o, k, v) == NULL) {
        fail(f, KRC_ENOMEM);
    }
}

static void set_bool(struct fmt *f, cJSON *o, const char *k, int v)
{
    if (f->rc == 0 && o != NULL && cJSON_AddBoolToObject(o, k, v) == NULL) {
        fail(f, KRC_ENOMEM);
    }
}

static void push(struct fmt *f, cJSON *arr, cJSON *item)
{
    if (item == NULL) {
        return;
    }
    if (f->rc != 0 || arr == NULL || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        fail(f, KRC_ENOMEM);
    }
}

static void attach(struct fmt *f, cJSON *o, const char *k, cJSON *item)
{
    if (item == NULL) {
        return;
    }
    if (f->rc != 0 || o == NULL || !cJSON_AddItemToObject(o, k, item)) {
        cJSON_Delete(item);
        fail(f, KRC_ENOMEM);
    }
}

static cJSON *text_obj(struct fmt *f, const char *type, const char *text)
{
    cJSON *t = new_obj(f);

    set_str(f, t, "type", type);
    set_str(f, t, "text", text);
    if (f->rc != 0) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}

/* Last line of defence for a mrkdwn text built over budget: cut it at a
 * character boundary outside entities, close an open code block. The
 * builders below stay inside their budgets, so this only runs on a bug. */
static void fit(struct fmt *f, struct krc_buf *b, size_t max_units)
{
    size_t keep = 0;
    size_t units = 0;
    size_t fences = 0;
    size_t i;

    if (f->rc != 0 || buf_units(b) <= max_units) {
        return;
    }
    while (keep < b->len) {
        size_t next = krc_text_utf8_next(b->data, b->len, keep);
        units += krc_slack_text_length(b->data + keep, next - keep);
        if (units + 6 > max_units) {
            break;
        }
        keep = next;
    }
    for (i = keep; i > 0 && keep - i < 6; i--) {
        if (b->data[i - 1] == ';') {
            break;
        }
        if (b->data[i - 1] == '&') {
            keep = i - 1;
            break;
        }
    }
    b->len = keep;
    b->data[keep] = '\0';
    for (i = 0; i + 3 <= b->len; i++) {
        if (memcmp(b->data + i, FENCE, 3) == 0) {
            fences++;
            i += 2;
        }
    }
    lit(f, b, ELLIPSIS);
    if (fences % 2 == 1) {
        lit(f, b, "\n" FENCE);
    }
}

struct blocks {
    cJSON *arr;
    size_t n;
    size_t max; /* blocks this message may still use before the context */
};

static void block_header(struct fmt *f, struct blocks *bl, const char *plain)
{
    cJSON *h;

    if (f->rc != 0 || bl->n >= bl->max) {
        return;
    }
    h = new_obj(f);
    set_str(f, h, "type", "header");
    attach(f, h, "text", text_obj(f, "plain_text", plain));
    push(f, bl->arr, h);
    bl->n++;
}

static void block_section(struct fmt *f, struct blocks *bl, struct krc_buf *mrkdwn)
{
    cJSON *s;

    if (f->rc != 0 || bl->n >= bl->max || mrkdwn->len == 0) {
        return;
    }
    fit(f, mrkdwn, KRC_SLACK_SECTION_MAX);
    s = new_obj(f);
    set_str(f, s, "type", "section");
    attach(f, s, "text", text_obj(f, "mrkdwn", krc_buf_str(mrkdwn)));
    push(f, bl->arr, s);
    bl->n++;
}

static void block_fields(struct fmt *f, struct blocks *bl, struct krc_buf *fields, size_t n)
{
    cJSON *s;
    cJSON *arr;
    size_t i;

    if (f->rc != 0 || bl->n >= bl->max || n == 0) {
        return;
    }
    s = new_obj(f);
    set_str(f, s, "type", "section");
    arr = f->rc == 0 ? cJSON_CreateArray() : NULL;
    if (arr == NULL) {
        fail(f, KRC_ENOMEM);
    }
    for (i = 0; i < n && i < KRC_SLACK_FIELDS_MAX; i++) {
        fit(f, &fields[i], KRC_SLACK_FIELD_MAX);
        push(f, arr, text_obj(f, "mrkdwn", krc_buf_str(&fields[i])));
    }
    attach(f, s, "fields", arr);
    push(f, bl->arr, s);
    bl->n++;
}

static void block_context(struct fmt *f, cJSON *arr, struct krc_buf *mrkdwn)
{
    cJSON *c = new_obj(f);
    cJSON *el = f->rc == 0 ? cJSON_CreateArray() : NULL;

    if (el == NULL) {
        fail(f, KRC_ENOMEM);
    }
    fit(f, mrkdwn, KRC_SLACK_SECTION_MAX);
    set_str(f, c, "type", "context");
    push(f, el, text_obj(f, "mrkdwn", krc_buf_str(mrkdwn)));
    attach(f, c, "elements", el);
    push(f, arr, c);
}

/* channel, username, icon, thread_ts, no unfurling */
static void envelope(struct fmt *f, cJSON *root)
{
    const struct krc_slack_options *o = f->o;

    if (o->channel != NULL) {
        set_str(f, root, "channel", o->channel);
    }
    if (o->thread_ts != NULL) {
        set_str(f, root, "thread_ts", o->thread_ts);
    }
    if (o->username != NULL) {
        set_str(f, root, "username", o->username);
    }
    if (o->icon != NULL) {
        set_str(f, root, o->icon[0] == ':' ? "icon_emoji" : "icon_url", o->icon);
    }
    set_bool(f, root, "unfurl_links", 0);
    set_bool(f, root, "unfurl_media", 0);
}

/* Print root into a krc-allocated string. */
static int finish(struct fmt *f, cJSON *root, char **ret_json, struct krc_error *err)
{
    char *s = NULL;
    char *out = NULL;

    if (f->rc == 0) {
        s = cJSON_PrintUnformatted(root);
        if (s == NULL) {
            fail(f, KRC_ENOMEM);
        }
    }
    if (f->rc == 0) {
        out = krc_strdup(s);
        if (out == NULL) {
            fail(f, KRC_ENOMEM);
        }
    }
    if (s != NULL) {
        cJSON_free(s);
    }
    cJSON_Delete(root);
    krc_buf_cleanup(&f->red);
    if (f->rc != 0) {
        return krc_error_set(err, f->rc, "slack message: %s",
                             f->rc == KRC_ENOMEM ? "out of memory" : krc_strerror(f->rc));
    }
    *ret_json = out;
    return 0;
}

/* ---- the restart alert ------------------------------------------------------------- */

static const struct krc_report_container *diag_container(const struct krc_report *r,
                                                         const struct krc_diagnosis *d)
{
    return d->container != NULL ? krc_report_container_get(r, d->container, d->is_init) : NULL;
}

static const char *container_kind(const struct krc_diagnosis *d)
{
    return d->is_sidecar ? "sidecar container " : (d->is_init ? "init container " : "container ");
}

/* ":red_circle: [prod] OOMKilled: shop/web container app restarted (exit 137, 5 restarts)" */
static void headline(struct fmt *f, struct krc_buf *b, const struct krc_report *r,
                     const struct krc_diagnosis *d)
{
    const char *title = krc_slack_cause_title(d->cause);

    lit(f, b, krc_slack_severity_emoji(krc_slack_cause_severity(d->cause)));
    lit(f, b, " ");
    if (f->o->cluster != NULL) {
        lit(f, b, "[");
        put(f, b, f->o->cluster, 60);
        lit(f, b, "] ");
    }
    if (d->cause == KRC_CAUSE_UNKNOWN && d->reason != NULL) {
        put(f, b, d->reason, 60);
    } else {
        lit(f, b, title);
    }
    lit(f, b, ": ");
    put(f, b, r->namespace, NAME_MAX_UNITS);
    lit(f, b, "/");
    put(f, b, r->name, NAME_MAX_UNITS);
    if (d->container != NULL) {
        lit(f, b, " ");
        lit(f, b, container_kind(d));
        put(f, b, d->container, NAME_MAX_UNITS);
    }
    lit(f, b, " restarted (");
    if (d->has_termination) {
        litf(f, b, "exit %d", d->exit_code);
        if (d->signal_name != NULL) {
            litf(f, b, " %s", d->signal_name);
        }
        lit(f, b, ", ");
    }
    if (d->restart_count_known) {
        litf(f, b, "%d restart%s)", d->restart_count, d->restart_count == 1 ? "" : "s");
    } else {
        lit(f, b, "restart count not given)");
    }
}

/* Append a plain_text piece while the header has room; *cut stops it. */
static void header_piece(struct fmt *f, struct krc_buf *b, const char *s, int *cut)
{
    size_t used = buf_units(b);

    if (*cut || s == NULL) {
        return;
    }
    if (used >= KRC_SLACK_HEADER_MAX) {
        *cut = 1;
        return;
    }
    *cut = put_n(f, b, s, strlen(s), 0, KRC_SLACK_HEADER_MAX - used);
}

/* "[prod] shop/web-7d9c (app)", plain text, at most 150 units */
static void header_text(struct fmt *f, struct krc_buf *b, const struct krc_report *r,
                        const struct krc_diagnosis *d)
{
    int cut = 0;

    if (f->o->cluster != NULL) {
        header_piece(f, b, "[", &cut);
        header_piece(f, b, f->o->cluster, &cut);
        header_piece(f, b, "] ", &cut);
    }
    header_piece(f, b, r->namespace ? r->namespace : "?", &cut);
    header_piece(f, b, "/", &cut);
    header_piece(f, b, r->name ? r->name : "?", &cut);
    if (d->container != NULL) {
        header_piece(f, b, " (", &cut);
        header_piece(f, b, d->container, &cut);
        header_piece(f, b, ")", &cut);
    }
}

static void cause_section(struct fmt *f, struct blocks *bl, const struct krc_diagnosis *d)
{
    struct krc_buf b;

    krc_buf_init(&b, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    lit(f, &b, krc_slack_severity_emoji(krc_slack_cause_severity(d->cause)));
    lit(f, &b, " *");
    lit(f, &b, krc_slack_cause_title(d->cause));
    lit(f, &b, "* `");
    lit(f, &b, krc_cause_name(d->cause));
    lit(f, &b, "`" DOT "confidence: *");
    lit(f, &b, krc_confidence_name(d->confidence));
    lit(f, &b, "*\n");
    put_red(f, &b, d->summary, KRC_SLACK_SECTION_MAX - 200);
    block_section(f, bl, &b);
    krc_buf_cleanup(&b);
}

/* "*Title*" and one bullet per item, as many as fit, then "… and K more". */
static void list_section(struct fmt *f, struct blocks *bl, const char *title, char *const *items,
                         size_t n)
{
    struct krc_buf sec;
    struct krc_buf line;
    size_t i;

    if (n == 0) {
        return;
    }
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(EVIDENCE_LINE_MAX + 10));
    lit(f, &sec, title);
    for (i = 0; i < n && f->rc == 0; i++) {
        krc_buf_reset(&line);
        lit(f, &line, BULLET " ");
        put_red(f, &line, items[i], EVIDENCE_LINE_MAX);
        if (!add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
    }
    if (i < n) {
        krc_buf_reset(&line);
        litf(f, &line, "_" ELLIPSIS " and %zu more_", n - i);
        add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    block_section(f, bl, &sec);
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
}

static void evidence_section(struct fmt *f, struct blocks *bl, const struct krc_diagnosis *d)
{
    list_section(f, bl, "*Evidence*", d->evidence, d->n_evidence);
    list_section(f, bl, "*Not checked*", d->unchecked, d->n_unchecked);
}

/* The commands as one code block of whole lines (those that fit in
 * budget units), appended to b; returns how many were left out. */
static size_t commands_block(struct fmt *f, struct krc_buf *b, const struct krc_diagnosis *d,
                             size_t max_commands, size_t line_max, size_t budget)
{
    struct krc_buf code;
    struct krc_buf line;
    size_t i;

    krc_buf_init(&code, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(line_max + 10));
    for (i = 0; i < d->n_commands && i < max_commands && f->rc == 0; i++) {
        krc_buf_reset(&line);
        put_red(f, &line, d->commands[i], line_max);
        if (!add_line(f, &code, &line, budget > 8 ? budget - 8 : 0, 0)) {
            break;
        }
    }
    if (code.len > 0) {
        lit(f, b, FENCE "\n");
        fail(f, krc_buf_append(b, krc_buf_str(&code), code.len));
        lit(f, b, "\n" FENCE);
    }
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&code);
    return d->n_commands - i;
}

static void next_step_section(struct fmt *f, struct blocks *bl, const struct krc_diagnosis *d)
{
    struct krc_buf b;
    size_t left;

    if (d->next_step == NULL && d->n_commands == 0) {
        return;
    }
    krc_buf_init(&b, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    if (d->next_step != NULL) {
        lit(f, &b, "*Next step:* ");
        put_red(f, &b, d->next_step, NEXT_STEP_MAX);
    } else {
        lit(f, &b, "*To look further:*");
    }
    if (d->n_commands > 0) {
        lit(f, &b, "\n");
        left = commands_block(f, &b, d, SIZE_MAX, COMMAND_MAX,
                              KRC_SLACK_SECTION_MAX - buf_units(&b) - MORE_RESERVE);
        if (left > 0) {
            litf(f, &b, "\n_" ELLIPSIS " and %zu more command%s_", left, left == 1 ? "" : "s");
        }
    }
    block_section(f, bl, &b);
    krc_buf_cleanup(&b);
}

static void put_kv_list(struct fmt *f, struct krc_buf *b, const struct krc_kv_list *l)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        if (i > 0) {
            lit(f, b, ", ");
        }
        put(f, b, l->items[i].key, 100);
        lit(f, b, ": ");
        put(f, b, l->items[i].value, 60);
    }
}

static void fields_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                           const struct krc_diagnosis *d)
{
    const struct krc_report_container *c = diag_container(r, d);
    struct krc_buf fields[KRC_SLACK_FIELDS_MAX];
    size_t n = 0;
    size_t i;
    char age[32];

    for (i = 0; i < KRC_SLACK_FIELDS_MAX; i++) {
        krc_buf_init(&fields[i], BYTES_FOR(KRC_SLACK_FIELD_MAX));
    }
    if (d->has_termination) {
        lit(f, &fields[n], "*Last exit*\n");
        litf(f, &fields[n], "%d", d->exit_code);
        if (d->signal_name != NULL) {
            litf(f, &fields[n], " (%s)", d->signal_name);
        }
        if (d->reason != NULL) {
            lit(f, &fields[n], DOT);
            put(f, &fields[n], d->reason, 200);
        }
        n++;
    }
    if (d->restart_count_known) {
        litf(f, &fields[n++], "*Restarts*\n%d", d->restart_count);
    } else {
        lit(f, &fields[n++], "*Restarts*\nnot given");
    }
    lit(f, &fields[n], "*Node*\n");
    if (r->node_name != NULL) {
        put(f, &fields[n], r->node_name, NAME_MAX_UNITS);
    } else {
        lit(f, &fields[n], "_not scheduled_");
    }
    n++;
    lit(f, &fields[n], "*Workload*\n");
    if (r->workload_kind != NULL && r->workload_name != NULL) {
        put(f, &fields[n], r->workload_kind, 60);
        lit(f, &fields[n], " ");
        put(f, &fields[n], r->workload_name, NAME_MAX_UNITS);
    } else if (r->owner_kind != NULL && r->owner_name != NULL) {
        put(f, &fields[n], r->owner_kind, 60);
        lit(f, &fields[n], " ");
        put(f, &fields[n], r->owner_name, NAME_MAX_UNITS);
    } else {
        lit(f, &fields[n], "_bare pod_");
    }
    n++;
    if (c != NULL && c->image != NULL) {
        lit(f, &fields[n], "*Image*\n");
        put(f, &fields[n++], c->image, 600);
    }
    if (c != NULL) {
        lit(f, &fields[n], "*Limits*\n");
        if (c->limits.n > 0) {
            put_kv_list(f, &fields[n], &c->limits);
        } else {
            lit(f, &fields[n], "_none_");
        }
        n++;
        if (c->requests.n > 0) {
            lit(f, &fields[n], "*Requests*\n");
            put_kv_list(f, &fields[n++], &c->requests);
        }
    }
    if (d->gpus > 0) {
        litf(f, &fields[n++], "*GPUs*\n%ld held by the pod", d->gpus);
    }
    if (d->started_at > 0 && d->finished_at >= d->started_at) {
        char ran[32];
        krc_diagnose_format_duration(d->finished_at - d->started_at, ran, sizeof(ran));
        litf(f, &fields[n], "*Ran for*\n%s", ran);
        age_of(f, d->finished_at, age, sizeof(age));
        if (age[0] != '\0') {
            litf(f, &fields[n], ", ended %s ago", age);
        }
        n++;
    }
    age_of(f, r->created_at, age, sizeof(age));
    if (age[0] != '\0' && n < KRC_SLACK_FIELDS_MAX) {
        litf(f, &fields[n++], "*Pod age*\n%s", age);
    }
    block_fields(f, bl, fields, n);
    for (i = 0; i < KRC_SLACK_FIELDS_MAX; i++) {
        krc_buf_cleanup(&fields[i]);
    }
}

/* ---- kubectl get pod ------------------------------------------------------------------ */

struct pod_line {
    char ready[32];
    char status[160];
    char restarts[64];
    char age[32];
};

static void term_status(char *out, size_t outsz, const char *prefix,
                        const struct krc_report_term *t)
{
    if (t->reason != NULL && t->reason[0] != '\0') {
        snprintf(out, outsz, "%s%s", prefix, t->reason);
    } else if (t->signal != 0) {
        snprintf(out, outsz, "%sSignal:%d", prefix, t->signal);
    } else {
        snprintf(out, outsz, "%sExitCode:%d", prefix, t->exit_code);
    }
}

/* kubectl's printPod, from what the report holds (no pod conditions or
 * deletion timestamp: a completed pod with a running container shows
 * Running, a terminating pod its phase). */
static void kubectl_line(const struct fmt *f, const struct krc_report *r, struct pod_line *pl)
{
    const char *reason =
        r->pod_reason && r->pod_reason[0] ? r->pod_reason : (r->phase ? r->phase : "Unknown");
    char status[160];
    size_t n_init = 0;
    size_t i;
    int total = 0;
    int ready = 0;
    int restarts = 0;
    int init_idx = 0;
    int initializing = 0;
    int has_running = 0;
    int64_t last_restart = 0;

    snprintf(status, sizeof(status), "%s", reason);
    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        n_init += c->is_init;
        total += !c->is_init || c->is_sidecar;
    }
    for (i = 0; i < r->n_containers; i++) {
        const struct krc_report_container *c = &r->containers[i];
        if (!c->is_init || !c->has_status) {
            continue;
        }
        restarts += c->restart_count;
        if (c->last.present && c->last.finished_at > last_restart) {
            last_restart = c->last.finished_at;
        }
        init_idx++;
        if (c->state == KRC_REPORT_STATE_TERMINATED && c->state_term.exit_code == 0) {
            continue;
        }
        if (c->is_sidecar && c->state == KRC_REPORT_STATE_RUNNING) {
            ready += c->ready;
            continue;
        }
        if (c->state == KRC_REPORT_STATE_TERMINATED) {
            term_status(status, sizeof(status), "Init:", &c->state_term);
        } else if (c->state == KRC_REPORT_STATE_WAITING && c->state_reason != NULL &&
                   c->state_reason[0] != '\0' && strcmp(c->state_reason, "PodInitializing") != 0) {
            snprintf(status, sizeof(status), "Init:%s", c->state_reason);
        } else {
            snprintf(status, sizeof(status), "Init:%d/%zu", init_idx - 1, n_init);
        }
        initializing = 1;
        break;
    }
    if (!initializing) {
        for (i = r->n_containers; i-- > 0;) {
            const struct krc_report_container *c = &r->containers[i];
            if (c->is_init || !c->has_status) {
                continue;
            }
            restarts += c->restart_count;
            if (c->last.present && c->last.finished_at > last_restart) {
                last_restart = c->last.finished_at;
            }
            if (c->state == KRC_REPORT_STATE_WAITING && c->state_reason != NULL &&
                c->state_reason[0] != '\0') {
                snprintf(status, sizeof(status), "%s", c->state_reason);
            } else if (c->state == KRC_REPORT_STATE_TERMINATED) {
                term_status(status, sizeof(status), "", &c->state_term);
            } else if (c->ready && c->state == KRC_REPORT_STATE_RUNNING) {
                has_running = 1;
                ready++;
            }
        }
        if (strcmp(status, "Completed") == 0 && has_running) {
            snprintf(status, sizeof(status), "Running");
        }
    }
    snprintf(pl->ready, sizeof(pl->ready), "%d/%d", ready, total);
    snprintf(pl->status, sizeof(pl->status), "%s", status);
    if (last_restart > 0 && f->o->now > 0) {
        char ago[32];
        human_duration(f->o->now - last_restart, ago, sizeof(ago));
        snprintf(pl->restarts, sizeof(pl->restarts), "%d (%s ago)", restarts, ago);
    } else {
        snprintf(pl->restarts, sizeof(pl->restarts), "%d", restarts);
    }
    if (f->o->now > 0 && r->created_at > 0) {
        human_duration(f->o->now - r->created_at, pl->age, sizeof(pl->age));
    } else {
        snprintf(pl->age, sizeof(pl->age), "unknown");
    }
}

static void pad(struct fmt *f, struct krc_buf *b, size_t have, size_t width)
{
    while (have++ < width + 3) {
        lit(f, b, " ");
    }
}

static void pod_section(struct fmt *f, struct blocks *bl, const struct krc_report *r)
{
    struct pod_line pl;
    struct krc_buf b;
    struct krc_buf name;
    size_t nw;
    size_t w[3];
    size_t mark;

    kubectl_line(f, r, &pl);
    krc_buf_init(&b, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&name, BYTES_FOR(NAME_MAX_UNITS));
    put(f, &name, r->name, NAME_MAX_UNITS);
    nw = buf_units(&name) > 4 ? buf_units(&name) : 4;
    w[0] = strlen(pl.ready) > 5 ? strlen(pl.ready) : 5;
    w[1] = strlen(pl.status) > 6 ? strlen(pl.status) : 6;
    w[2] = strlen(pl.restarts) > 8 ? strlen(pl.restarts) : 8;
    lit(f, &b, FENCE "\nNAME");
    pad(f, &b, 4, nw);
    lit(f, &b, "READY");
    pad(f, &b, 5, w[0]);
    lit(f, &b, "STATUS");
    pad(f, &b, 6, w[1]);
    lit(f, &b, "RESTARTS");
    pad(f, &b, 8, w[2]);
    lit(f, &b, "AGE\n");
    lit(f, &b, krc_buf_str(&name));
    pad(f, &b, buf_units(&name), nw);
    lit(f, &b, pl.ready);
    pad(f, &b, strlen(pl.ready), w[0]);
    mark = b.len;
    put(f, &b, pl.status, 150);
    pad(f, &b, krc_slack_text_length(b.data + mark, b.len - mark), w[1]);
    lit(f, &b, pl.restarts);
    pad(f, &b, strlen(pl.restarts), w[2]);
    lit(f, &b, pl.age);
    lit(f, &b, "\n" FENCE);
    block_section(f, bl, &b);
    krc_buf_cleanup(&name);
    krc_buf_cleanup(&b);
}

/* ---- events -------------------------------------------------------------------------- */

struct ev_group {
    const struct krc_report_event *e; /* newest of the group */
    const char *msg;                  /* without "(combined from similar events): " */
    long count;
    int warning;
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

    if (a->warning != b->warning) {
        return b->warning - a->warning;
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

/* Group events (node: warning events of the node; else pod events) by
 * reason+message. Caller frees *ret with krc_free. */
static size_t group_events(struct fmt *f, const struct krc_report *r, int node,
                           struct ev_group **ret)
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
        fail(f, KRC_ENOMEM);
        return 0;
    }
    for (i = 0; i < r->n_events; i++) {
        const struct krc_report_event *e = &r->events[i];
        const char *msg = strip_combined(e->message);
        long cnt = e->count > 0 ? e->count : 1;
        int warn = e->type != NULL && strcmp(e->type, "Warning") == 0;
        if (node) {
            if (!warn || e->object_kind == NULL || strcmp(e->object_kind, "Node") != 0) {
                continue;
            }
        } else if (!krc_report_event_is_pod(r, e)) {
            continue;
        }
        for (k = 0; k < n; k++) {
            if (str_same(g[k].e->reason, e->reason) && str_same(g[k].msg, msg)) {
                break;
            }
        }
        if (k == n) {
            g[n].e = e;
            g[n].msg = msg;
            g[n].last = ev_time(e);
            n++;
        } else if (ev_time(e) > g[k].last) {
            g[k].e = e;
            g[k].last = ev_time(e);
        }
        g[k].count += cnt;
        g[k].warning |= warn;
    }
    qsort(g, n, sizeof(*g), ev_cmp);
    *ret = g;
    return n;
}

static void event_line(struct fmt *f, struct krc_buf *line, const struct ev_group *g)
{
    char age[32];

    krc_buf_reset(line);
    lit(f, line, BULLET " ");
    lit(f, line, g->warning ? ":warning: *" : "*");
    put(f, line, g->e->reason ? g->e->reason : "(no reason)", 100);
    lit(f, line, "*");
    if (g->count > 1) {
        litf(f, line, " \xc3\x97%ld", g->count);
    }
    age_of(f, g->last, age, sizeof(age));
    if (age[0] != '\0') {
        litf(f, line, DOT "%s ago", age);
    }
    if (g->msg != NULL && g->msg[0] != '\0') {
        lit(f, line, ": ");
        put_red(f, line, g->msg, EVENT_MSG_MAX);
    }
}

static void events_section(struct fmt *f, struct blocks *bl, const struct krc_report *r)
{
    struct ev_group *g = NULL;
    size_t n = group_events(f, r, 0, &g);
    struct krc_buf sec;
    struct krc_buf line;
    size_t i;

    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(EVENT_MSG_MAX + 200));
    lit(f, &sec, "*Pod events*");
    if (n == 0) {
        lit(f, &sec, "\n_none found (events expire after one hour by default)_");
    }
    for (i = 0; i < n && i < KRC_SLACK_EVENTS_MAX && f->rc == 0; i++) {
        event_line(f, &line, &g[i]);
        if (!add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
    }
    if (i < n) {
        krc_buf_reset(&line);
        litf(f, &line, "_" ELLIPSIS " and %zu more_", n - i);
        add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    block_section(f, bl, &sec);
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
    krc_free(g);
}

static void node_section(struct fmt *f, struct blocks *bl, const struct krc_report *r)
{
    const struct krc_report_node *nd = &r->node;
    struct ev_group *g = NULL;
    size_t n = group_events(f, r, 1, &g);
    struct krc_buf sec;
    struct krc_buf line;
    size_t i;

    if (!nd->present && n == 0) {
        krc_free(g);
        return;
    }
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(EVENT_MSG_MAX + 400));
    lit(f, &sec, "*Node* `");
    put(f, &sec, nd->present && nd->name ? nd->name : r->node_name, NAME_MAX_UNITS);
    lit(f, &sec, "`");
    if (nd->present) {
        const char *ready = "Unknown";
        for (i = 0; i < nd->n_conditions; i++) {
            const struct krc_report_node_condition *c = &nd->conditions[i];
            if (c->type != NULL && strcmp(c->type, "Ready") == 0 && c->status != NULL) {
                ready = strcmp(c->status, "True") == 0
                            ? "Ready"
                            : (strcmp(c->status, "False") == 0 ? "NotReady" : "Unknown");
            }
        }
        lit(f, &sec, ": ");
        lit(f, &sec, strcmp(ready, "Ready") == 0 ? ready : ":warning: ");
        if (strcmp(ready, "Ready") != 0) {
            litf(f, &sec, "*%s*", ready);
        }
        if (nd->unschedulable) {
            lit(f, &sec, ",SchedulingDisabled");
        }
        if (nd->kubelet_version != NULL) {
            lit(f, &sec, DOT "kubelet ");
            put(f, &sec, nd->kubelet_version, 60);
        }
        for (i = 0; i < nd->capacity.n; i++) {
            const char *k = nd->capacity.items[i].key;
            const char *alloc = krc_kv_list_get(&nd->allocatable, k);
            if (!krc_report_is_gpu_resource(k)) {
                continue;
            }
            lit(f, &sec, DOT);
            put(f, &sec, k, 100);
            lit(f, &sec, ": ");
            put(f, &sec, alloc ? alloc : "0", 30);
            lit(f, &sec, " allocatable / ");
            put(f, &sec, nd->capacity.items[i].value, 30);
            lit(f, &sec, " capacity");
        }
        for (i = 0; i < nd->n_conditions; i++) {
            const struct krc_report_node_condition *c = &nd->conditions[i];
            if (c->type == NULL || strcmp(c->type, "Ready") == 0 || c->status == NULL ||
                strcmp(c->status, "True") != 0) {
                continue;
            }
            krc_buf_reset(&line);
            lit(f, &line, BULLET " :warning: *");
            put(f, &line, c->type, 60);
            lit(f, &line, "*");
            if (c->message != NULL) {
                lit(f, &line, ": ");
                put_red(f, &line, c->message, EVENT_MSG_MAX);
            }
            add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE);
        }
    }
    for (i = 0; i < n && i < KRC_SLACK_NODE_EVENTS_MAX && f->rc == 0; i++) {
        event_line(f, &line, &g[i]);
        if (!add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
    }
    if (i < n) {
        krc_buf_reset(&line);
        litf(f, &line, "_" ELLIPSIS " and %zu more node warnings_", n - i);
        add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    block_section(f, bl, &sec);
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
    krc_free(g);
}

static void notes_section(struct fmt *f, struct blocks *bl, const struct krc_report *r)
{
    struct krc_buf sec;
    struct krc_buf line;
    size_t i;

    if (r->n_notes == 0) {
        return;
    }
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(NOTE_MAX + 10));
    lit(f, &sec, "*Collection notes*");
    for (i = 0; i < r->n_notes && f->rc == 0; i++) {
        krc_buf_reset(&line);
        lit(f, &line, BULLET " ");
        put(f, &line, r->notes[i], NOTE_MAX);
        if (!add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
    }
    if (i < r->n_notes) {
        krc_buf_reset(&line);
        litf(f, &line, "_" ELLIPSIS " and %zu more_", r->n_notes - i);
        add_line(f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    block_section(f, bl, &sec);
    krc_buf_cleanup(&line);
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
            litf(f, out, "%s ", hms);
        }
    }
    if (put_n(f, out, p, len, ESC_MRKDWN, KRC_SLACK_LOG_LINE_MAX)) {
        lit(f, out, " [line cut]");
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
        size_t u = buf_units(&t->lines[i]) + 1;
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
    rp = redact(f, p + start, end - start, &rl);
    t->redactions = f->redactions - before_red;
    t->n = 1;
    for (i = 0; i < rl; i++) {
        t->n += rp[i] == '\n';
    }
    t->lines = krc_calloc(t->n, sizeof(*t->lines));
    if (t->lines == NULL) {
        t->n = 0;
        fail(f, KRC_ENOMEM);
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
            lit(f, &t->lines[k], ELLIPSIS);
        }
        log_line(f, &t->lines[k], rp + s, e - s, (r->log_flags & KRC_REPORT_LOG_TIMESTAMPS) != 0);
        u = buf_units(&t->lines[k]) + 1;
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

    lit(f, out, FENCE "\n");
    for (i = t->cut[s]; i < hi && f->rc == 0; i++) {
        fail(f, krc_buf_append(out, krc_buf_str(&t->lines[i]), t->lines[i].len));
        lit(f, out, "\n");
    }
    lit(f, out, FENCE);
}

static void log_blocks(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                       const struct krc_diagnosis *d)
{
    struct krc_buf head;
    struct log_tail t;
    size_t max_lines =
        f->o->max_log_lines > 0 ? (size_t)f->o->max_log_lines : KRC_SLACK_DEFAULT_LOG_LINES;
    size_t sections = bl->max - bl->n > 1 ? bl->max - bl->n - 1 : 0;
    size_t s;

    krc_buf_init(&head, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    lit(f, &head, "*Previous log*");
    if (r->log_container != NULL || d->container != NULL) {
        lit(f, &head, " of `");
        put(f, &head, r->log_container ? r->log_container : d->container, NAME_MAX_UNITS);
        lit(f, &head, "`");
    }
    if (f->o->omit_log) {
        lit(f, &head, ": _not included (disabled by configuration)_");
        block_section(f, bl, &head);
        krc_buf_cleanup(&head);
        return;
    }
    if (r->log == NULL || r->log_len == 0 || sections == 0) {
        lit(f, &head,
            (r->log_flags & KRC_REPORT_LOG_EMPTY) || (r->log != NULL && r->log_len == 0)
                ? ": _empty, the container wrote nothing_"
                : ": _not available_");
        block_section(f, bl, &head);
        krc_buf_cleanup(&head);
        return;
    }
    if (max_lines > 1000) {
        max_lines = 1000;
    }
    log_tail_build(f, r, max_lines, sections, CODE_BUDGET, &t);
    if (f->rc == 0) {
        size_t shown = t.n - t.first;
        litf(f, &head, DOT "last %zu line%s", shown, shown == 1 ? "" : "s");
        if (t.omitted > 0) {
            litf(f, &head, DOT "_" ELLIPSIS " %zu earlier line%s omitted_", t.omitted,
                 t.omitted == 1 ? "" : "s");
        }
        char cut[320];
        if (krc_logtail_describe(&r->log_cut, cut, sizeof(cut)) > 0) {
            litf(f, &head, DOT "_%s_", cut);
        } else if (r->log_flags & KRC_REPORT_LOG_TRUNCATED) {
            lit(f, &head, DOT "_only the end of the log was kept_");
        }
        if (t.redactions > 0) {
            litf(f, &head, DOT ":lock: %d secret%s redacted", t.redactions,
                 t.redactions == 1 ? "" : "s");
        }
        block_section(f, bl, &head);
    }
    for (s = t.n_sections; s-- > 0 && f->rc == 0;) {
        struct krc_buf sec;
        krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
        log_section_text(f, &t, s, &sec);
        block_section(f, bl, &sec);
        krc_buf_cleanup(&sec);
    }
    log_tail_cleanup(&t);
    krc_buf_cleanup(&head);
}

static void context_text(struct fmt *f, struct krc_buf *b, const struct krc_report *r)
{
    if (f->o->cluster != NULL) {
        lit(f, b, "cluster *");
        put(f, b, f->o->cluster, 100);
        lit(f, b, "*" DOT);
    }
    if (r != NULL && r->uid != NULL) {
        lit(f, b, "pod uid `");
        put(f, b, r->uid, 100);
        lit(f, b, "`" DOT);
    }
    lit(f, b, "krc");
    if (f->redactions > 0) {
        litf(f, b, DOT ":lock: %d secret%s redacted", f->redactions, f->redactions == 1 ? "" : "s");
    }
}

/* Build the blocks array into root (at the top or in a coloured attachment)
 * and return it. */
static cJSON *blocks_root(struct fmt *f, cJSON *root, const char *fallback,
                          enum krc_slack_severity sev)
{
    cJSON *arr = f->rc == 0 ? cJSON_CreateArray() : NULL;

    if (arr == NULL) {
        fail(f, KRC_ENOMEM);
        return NULL;
    }
    if (f->o->color_bar) {
        cJSON *atts = cJSON_CreateArray();
        cJSON *a = new_obj(f);
        if (atts == NULL) {
            fail(f, KRC_ENOMEM);
        }
        set_str(f, a, "color", krc_slack_severity_color(sev));
        set_str(f, a, "fallback", fallback);
        attach(f, a, "blocks", arr);
        push(f, atts, a);
        attach(f, root, "attachments", atts);
    } else {
        attach(f, root, "blocks", arr);
    }
    return f->rc == 0 ? arr : NULL;
}

int krc_slack_format_restart(const struct krc_report *r, const struct krc_diagnosis *d,
                             const struct krc_slack_options *o, char **ret_json,
                             int *ret_redactions, struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    struct krc_buf hdr;
    struct krc_buf ctx;
    struct blocks bl = {NULL, 0, KRC_SLACK_MAX_BLOCKS - 1};
    cJSON *root;
    int rc;

    fmt_init(&f, o);
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_buf_init(&hdr, BYTES_FOR(KRC_SLACK_HEADER_MAX));
    krc_buf_init(&ctx, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    root = new_obj(&f);
    envelope(&f, root);
    headline(&f, &text, r, d);
    set_str(&f, root, "text", krc_buf_str(&text));
    bl.arr = blocks_root(&f, root, krc_buf_str(&text), krc_slack_cause_severity(d->cause));
    header_text(&f, &hdr, r, d);
    block_header(&f, &bl, krc_buf_str(&hdr));
    cause_section(&f, &bl, d);
    evidence_section(&f, &bl, d);
    next_step_section(&f, &bl, d);
    fields_section(&f, &bl, r, d);
    pod_section(&f, &bl, r);
    events_section(&f, &bl, r);
    node_section(&f, &bl, r);
    notes_section(&f, &bl, r);
    log_blocks(&f, &bl, r, d);
    context_text(&f, &ctx, r);
    block_context(&f, bl.arr, &ctx);
    krc_buf_cleanup(&ctx);
    krc_buf_cleanup(&hdr);
    krc_buf_cleanup(&text);
    rc = finish(&f, root, ret_json, err);
    if (rc == 0 && ret_redactions != NULL) {
        *ret_redactions = f.redactions;
    }
    return rc;
}

int krc_slack_format_text_only(const struct krc_report *r, const struct krc_diagnosis *d,
                               const struct krc_slack_options *o, char **ret_json,
                               int *ret_redactions, struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    struct krc_buf part;
    struct log_tail t;
    cJSON *root;
    size_t i;
    int rc;

    fmt_init(&f, o);
    memset(&t, 0, sizeof(t));
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_buf_init(&part, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    root = new_obj(&f);
    envelope(&f, root);
    headline(&f, &text, r, d);
    lit(&f, &part, "\n");
    put_red(&f, &part, d->summary, 1000);
    litf(&f, &part, " _(confidence: %s)_", krc_confidence_name(d->confidence));
    add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 0);
    for (i = 0; i < d->n_evidence && i < 5; i++) {
        krc_buf_reset(&part);
        lit(&f, &part, BULLET " ");
        put_red(&f, &part, d->evidence[i], 300);
        add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    for (i = 0; i < d->n_unchecked && i < 3; i++) {
        krc_buf_reset(&part);
        lit(&f, &part, BULLET " not checked: ");
        put_red(&f, &part, d->unchecked[i], 300);
        add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    if (d->next_step != NULL) {
        krc_buf_reset(&part);
        lit(&f, &part, "*Next step:* ");
        put_red(&f, &part, d->next_step, 400);
        add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    if (d->n_commands > 0) {
        krc_buf_reset(&part);
        commands_block(&f, &part, d, 3, 300, 1000);
        add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 200);
    }
    if (!o->omit_log && r->log != NULL && r->log_len > 0) {
        /* the code block (fences: 9 units) and a redaction line (40) must fit */
        size_t room = buf_units(&text) + 60 < KRC_SLACK_TEXT_MAX
                          ? KRC_SLACK_TEXT_MAX - buf_units(&text) - 60
                          : 0;
        log_tail_build(&f, r, 15, 1, room, &t);
        if (f.rc == 0 && t.n_sections == 1) {
            krc_buf_reset(&part);
            lit(&f, &part, "\n");
            log_section_text(&f, &t, 0, &part);
            add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 40);
        }
        log_tail_cleanup(&t);
    }
    if (f.redactions > 0) {
        krc_buf_reset(&part);
        litf(&f, &part, ":lock: %d secret%s redacted", f.redactions, f.redactions == 1 ? "" : "s");
        add_line(&f, &text, &part, KRC_SLACK_TEXT_MAX, 0);
    }
    fit(&f, &text, KRC_SLACK_TEXT_MAX);
    set_str(&f, root, "text", krc_buf_str(&text));
    krc_buf_cleanup(&part);
    krc_buf_cleanup(&text);
    rc = finish(&f, root, ret_json, err);
    if (rc == 0 && ret_redactions != NULL) {
        *ret_redactions = f.redactions;
    }
    return rc;
}

/* ---- storm summary ----------------------------------------------------------------------- */

static int group_cmp(const void *pa, const void *pb)
{
    const struct krc_slack_group *a = *(const struct krc_slack_group *const *)pa;
    const struct krc_slack_group *b = *(const struct krc_slack_group *const *)pb;

    if (a->count != b->count) {
        return a->count < b->count ? 1 : -1;
    }
    return strcmp(a->key ? a->key : "", b->key ? b->key : "");
}

static void group_field(struct fmt *f, struct krc_buf *b, const char *title,
                        const struct krc_slack_group *g, size_t n)
{
    const struct krc_slack_group **sorted;
    struct krc_buf line;
    size_t i;

    litf(f, b, "*%s*", title);
    if (n == 0) {
        lit(f, b, "\n_unknown_");
        return;
    }
    sorted = krc_calloc(n, sizeof(*sorted));
    if (sorted == NULL) {
        fail(f, KRC_ENOMEM);
        return;
    }
    for (i = 0; i < n; i++) {
        sorted[i] = &g[i];
    }
    qsort(sorted, n, sizeof(*sorted), group_cmp);
    krc_buf_init(&line, BYTES_FOR(400));
    for (i = 0; i < n && i < KRC_SLACK_GROUPS_SHOWN && f->rc == 0; i++) {
        krc_buf_reset(&line);
        lit(f, &line, BULLET " `");
        put(f, &line, sorted[i]->key ? sorted[i]->key : "(none)", 150);
        litf(f, &line, "` %zu", sorted[i]->count);
        if (!add_line(f, b, &line, KRC_SLACK_FIELD_MAX, MORE_RESERVE)) {
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
        litf(f, &line, "_" ELLIPSIS " and %zu more (%zu restarts)_", n - i, rest);
        add_line(f, b, &line, KRC_SLACK_FIELD_MAX, 0);
    }
    krc_buf_cleanup(&line);
    krc_free(sorted);
}

int krc_slack_format_summary(const struct krc_slack_summary *s, const struct krc_slack_options *o,
                             char **ret_json, struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    struct krc_buf hdr;
    struct krc_buf sec;
    struct krc_buf line;
    struct krc_buf fields[3];
    struct blocks bl = {NULL, 0, KRC_SLACK_MAX_BLOCKS - 1};
    char win[32];
    cJSON *root;
    size_t i;

    fmt_init(&f, o);
    krc_diagnose_format_duration(s->window_seconds, win, sizeof(win));
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_buf_init(&hdr, BYTES_FOR(KRC_SLACK_HEADER_MAX));
    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(800));
    for (i = 0; i < 3; i++) {
        krc_buf_init(&fields[i], BYTES_FOR(KRC_SLACK_FIELD_MAX));
    }
    root = new_obj(&f);
    envelope(&f, root);
    lit(&f, &text, ":rotating_light: ");
    if (o->cluster != NULL) {
        lit(&f, &text, "[");
        put(&f, &text, o->cluster, 60);
        lit(&f, &text, "] ");
    }
    litf(&f, &text, "Restart storm: %zu restarts", s->restarts);
    if (s->pods > 0) {
        litf(&f, &text, " of %zu pod%s", s->pods, s->pods == 1 ? "" : "s");
    }
    litf(&f, &text, " in the last %s", win);
    set_str(&f, root, "text", krc_buf_str(&text));
    bl.arr = blocks_root(&f, root, krc_buf_str(&text), KRC_SLACK_SEV_CRITICAL);

    {
        struct krc_buf raw;
        krc_buf_init(&raw, 512);
        if (o->cluster != NULL) {
            fail(&f, krc_buf_printf(&raw, "[%.100s] ", o->cluster));
        }
        fail(&f, krc_buf_printf(&raw, "Restart storm: %zu restarts in %s", s->restarts, win));
        put_n(&f, &hdr, krc_buf_str(&raw), raw.len, 0, KRC_SLACK_HEADER_MAX);
        krc_buf_cleanup(&raw);
    }
    block_header(&f, &bl, krc_buf_str(&hdr));

    litf(&f, &sec, ":rotating_light: *%zu restarts*", s->restarts);
    if (s->pods > 0) {
        litf(&f, &sec, " of *%zu pod%s*", s->pods, s->pods == 1 ? "" : "s");
    }
    litf(&f, &sec, " in the last *%s*. ", win);
    if (s->alerted > 0) {
        litf(&f, &sec,
             "%zu %s alerted one by one before the storm began; the other %zu restarts are "
             "grouped here instead of one message each. ",
             s->alerted, s->alerted == 1 ? "was" : "were",
             s->restarts > s->alerted ? s->restarts - s->alerted : 0);
    } else {
        lit(&f, &sec, "They are grouped here instead of one message each. ");
    }
    lit(&f, &sec, "Every restart is still diagnosed and recorded.");
    block_section(&f, &bl, &sec);

    group_field(&f, &fields[0], "By cause", s->by_cause, s->n_by_cause);
    group_field(&f, &fields[1], "By node", s->by_node, s->n_by_node);
    group_field(&f, &fields[2], "By workload", s->by_workload, s->n_by_workload);
    block_fields(&f, &bl, fields, 3);

    if (s->n_examples > 0) {
        krc_buf_reset(&sec);
        lit(&f, &sec, "*Examples*");
        for (i = 0; i < s->n_examples && i < KRC_SLACK_EXAMPLES_SHOWN; i++) {
            const struct krc_slack_example *e = &s->examples[i];
            krc_buf_reset(&line);
            lit(&f, &line, BULLET " `");
            put(&f, &line, e->namespace, 100);
            lit(&f, &line, "/");
            put(&f, &line, e->pod, 150);
            lit(&f, &line, "`");
            if (e->container != NULL) {
                lit(&f, &line, " container ");
                put(&f, &line, e->container, 100);
            }
            if (e->cause != NULL) {
                lit(&f, &line, DOT);
                put(&f, &line, e->cause, 60);
            }
            if (e->node != NULL) {
                lit(&f, &line, DOT "node ");
                put(&f, &line, e->node, 150);
            }
            litf(&f, &line, DOT "%d restart%s", e->restart_count, e->restart_count == 1 ? "" : "s");
            if (!add_line(&f, &sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
                break;
            }
        }
        if (i < s->n_examples) {
            krc_buf_reset(&line);
            litf(&f, &line, "_" ELLIPSIS " and %zu more_", s->n_examples - i);
            add_line(&f, &sec, &line, KRC_SLACK_SECTION_MAX, 0);
        }
        block_section(&f, &bl, &sec);
    }
    krc_buf_reset(&sec);
    context_text(&f, &sec, NULL);
    block_context(&f, bl.arr, &sec);
    for (i = 0; i < 3; i++) {
        krc_buf_cleanup(&fields[i]);
    }
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&sec);
    krc_buf_cleanup(&hdr);
    krc_buf_cleanup(&text);
    return finish(&f, root, ret_json, err);
}

/* ---- recovered --------------------------------------------------------------------------- */

int krc_slack_format_recovered(const struct krc_slack_recovered *rc,
                               const struct krc_slack_options *o, char **ret_json,
                               struct krc_error *err)
{
    struct fmt f;
    struct krc_buf text;
    char dur[32];
    cJSON *root;

    fmt_init(&f, o);
    krc_buf_init(&text, BYTES_FOR(KRC_SLACK_TEXT_MAX));
    krc_diagnose_format_duration(rc->ready_seconds, dur, sizeof(dur));
    root = new_obj(&f);
    envelope(&f, root);
    lit(&f, &text, ":large_green_circle: ");
    if (o->cluster != NULL) {
        lit(&f, &text, "[");
        put(&f, &text, o->cluster, 60);
        lit(&f, &text, "] ");
    }
    if (rc->container != NULL) {
        lit(&f, &text, "container `");
        put(&f, &text, rc->container, NAME_MAX_UNITS);
        lit(&f, &text, "` of ");
    }
    lit(&f, &text, "`");
    put(&f, &text, rc->namespace, NAME_MAX_UNITS);
    lit(&f, &text, "/");
    put(&f, &text, rc->pod, NAME_MAX_UNITS);
    litf(&f, &text, "` has run ready for %s after %d restart%s", dur, rc->restart_count,
         rc->restart_count == 1 ? "" : "s");
    set_str(&f, root, "text", krc_buf_str(&text));
    krc_buf_cleanup(&text);
    return finish(&f, root, ret_json, err);
}
