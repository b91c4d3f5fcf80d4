#include "krc/alert/dest/slack.h"
#include "slack_blocks.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/detect/accel_time.h"
#include "krc/util/logtail.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

/* ---- severity and titles -------------------------------------------------- */

const char *krc_slack_severity_emoji(enum krc_alert_severity sev)
{
    switch (sev) {
    case KRC_ALERT_SEV_CRITICAL:
        return ":red_circle:";
    case KRC_ALERT_SEV_WARNING:
        return ":large_orange_circle:";
    default:
        return ":white_circle:";
    }
}

const char *krc_slack_severity_color(enum krc_alert_severity sev)
{
    switch (sev) {
    case KRC_ALERT_SEV_CRITICAL:
        return "#E01E5A";
    case KRC_ALERT_SEV_WARNING:
        return "#F2A33A";
    default:
        return "#9E9EA6";
    }
}

/* ---- lengths and escaping ------------------------------------------------- */

size_t krc_slack_text_length(const char *s, size_t len)
{
    return krc_text_utf16_len(s, len);
}

size_t krc_slack_buf_units(const struct krc_buf *b)
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

void krc_slack_fmt_init(struct fmt *f, const struct krc_alert_options *o)
{
    f->o = o;
    f->rc = 0;
    f->redactions = o->redactions_done > 0 ? o->redactions_done : 0;
    krc_buf_init(&f->red, 0);
}

void krc_slack_fail(struct fmt *f, int rc)
{
    if (f->rc == 0 && rc < 0) {
        f->rc = rc;
    }
}

/* Our own markup or trusted text (numbers, fixed words). */
void krc_slack_lit(struct fmt *f, struct krc_buf *b, const char *s)
{
    if (f->rc == 0) {
        krc_slack_fail(f, krc_buf_append_str(b, s));
    }
}

void krc_slack_litf(struct fmt *f, struct krc_buf *b, const char *fmt, ...)
{
    va_list ap;

    if (f->rc != 0) {
        return;
    }
    va_start(ap, fmt);
    krc_slack_fail(f, krc_buf_vprintf(b, fmt, ap));
    va_end(ap);
}

/* Untrusted bytes, escaped, at most max_units (cut with "…"). Returns 1
 * when cut. */
int krc_slack_put_n(struct fmt *f, struct krc_buf *b, const void *s, size_t len, unsigned flags,
                    size_t max_units)
{
    size_t mark = b->len;
    size_t consumed = 0;
    size_t units = 0;

    if (f->rc != 0 || max_units == 0) {
        return max_units == 0 && len > 0;
    }
    krc_slack_fail(f, escape_into(b, s, len, flags, max_units, &consumed, &units));
    if (consumed < len && f->rc == 0) {
        /* cut: redo with room for the ellipsis (pieces are whole, so no
         * UTF-8 sequence or entity is ever split) */
        b->len = mark;
        if (b->data != NULL) {
            b->data[mark] = '\0';
        }
        krc_slack_fail(f, escape_into(b, s, len, flags, max_units - 1, &consumed, &units));
        krc_slack_lit(f, b, ELLIPSIS);
        return 1;
    }
    return 0;
}

int krc_slack_put(struct fmt *f, struct krc_buf *b, const char *s, size_t max_units)
{
    if (s == NULL) {
        s = "?";
    }
    return krc_slack_put_n(f, b, s, strlen(s), ESC_MRKDWN, max_units);
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
const unsigned char *krc_slack_redact(struct fmt *f, const void *data, size_t len, size_t *ret_len)
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
        krc_slack_fail(f, n);
        return data;
    }
    f->redactions += count_marks(krc_buf_str(&f->red), f->red.len);
    *ret_len = f->red.len;
    return (const unsigned char *)krc_buf_str(&f->red);
}

/* Untrusted text after redaction. */
void krc_slack_put_red(struct fmt *f, struct krc_buf *b, const char *s, size_t max_units)
{
    size_t n;
    const unsigned char *t;

    if (s == NULL) {
        return;
    }
    t = krc_slack_redact(f, s, strlen(s), &n);
    krc_slack_put_n(f, b, t, n, ESC_MRKDWN, max_units);
}

/* Append `line` as a new line of `sec` if it fits in budget - reserve. */
int krc_slack_add_line(struct fmt *f, struct krc_buf *sec, const struct krc_buf *line,
                       size_t budget, size_t reserve)
{
    size_t need = krc_slack_buf_units(line) + (sec->len > 0);

    if (f->rc != 0 || krc_slack_buf_units(sec) + need + reserve > budget) {
        return 0;
    }
    if (sec->len > 0) {
        krc_slack_lit(f, sec, "\n");
    }
    krc_slack_fail(f, krc_buf_append(sec, krc_buf_str(line), line->len));
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
void krc_slack_age_of(const struct fmt *f, int64_t t, char *out, size_t outsz)
{
    if (f->o->now <= 0 || t <= 0) {
        out[0] = '\0';
        return;
    }
    human_duration(f->o->now - t, out, outsz);
}

/* ---- JSON helpers ------------------------------------------------------------------ */

cJSON *krc_slack_new_obj(struct fmt *f)
{
    cJSON *o = f->rc == 0 ? cJSON_CreateObject() : NULL;

    if (o == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
    }
    return o;
}

void krc_slack_set_str(struct fmt *f, cJSON *o, const char *k, const char *v)
{
    if (f->rc == 0 && o != NULL && cJSON_AddStringToObject(o, k, v) == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
    }
}

static void set_bool(struct fmt *f, cJSON *o, const char *k, int v)
{
    if (f->rc == 0 && o != NULL && cJSON_AddBoolToObject(o, k, v) == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
    }
}

void krc_slack_push(struct fmt *f, cJSON *arr, cJSON *item)
{
    if (item == NULL) {
        return;
    }
    if (f->rc != 0 || arr == NULL || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        krc_slack_fail(f, KRC_ENOMEM);
    }
}

void krc_slack_attach(struct fmt *f, cJSON *o, const char *k, cJSON *item)
{
    if (item == NULL) {
        return;
    }
    if (f->rc != 0 || o == NULL || !cJSON_AddItemToObject(o, k, item)) {
        cJSON_Delete(item);
        krc_slack_fail(f, KRC_ENOMEM);
    }
}

static cJSON *text_obj(struct fmt *f, const char *type, const char *text)
{
    cJSON *t = krc_slack_new_obj(f);

    krc_slack_set_str(f, t, "type", type);
    krc_slack_set_str(f, t, "text", text);
    if (f->rc != 0) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}

/* Last line of defence for a mrkdwn text built over budget: cut it at a
 * character boundary outside entities, close an open code block. The
 * builders below stay inside their budgets, so this only runs on a bug. */
void krc_slack_fit(struct fmt *f, struct krc_buf *b, size_t max_units)
{
    size_t keep = 0;
    size_t units = 0;
    size_t fences = 0;
    size_t i;

    if (f->rc != 0 || krc_slack_buf_units(b) <= max_units) {
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
    krc_slack_lit(f, b, ELLIPSIS);
    if (fences % 2 == 1) {
        krc_slack_lit(f, b, "\n" FENCE);
    }
}

void krc_slack_block_header(struct fmt *f, struct blocks *bl, const char *plain,
                            const char *block_id)
{
    cJSON *h;

    if (f->rc != 0 || bl->n >= bl->max) {
        return;
    }
    h = krc_slack_new_obj(f);
    krc_slack_set_str(f, h, "type", "header");
    if (block_id != NULL) {
        krc_slack_set_str(f, h, "block_id", block_id);
    }
    krc_slack_attach(f, h, "text", text_obj(f, "plain_text", plain));
    krc_slack_push(f, bl->arr, h);
    bl->n++;
}

void krc_slack_block_section(struct fmt *f, struct blocks *bl, struct krc_buf *mrkdwn)
{
    cJSON *s;

    if (f->rc != 0 || bl->n >= bl->max || mrkdwn->len == 0) {
        return;
    }
    krc_slack_fit(f, mrkdwn, KRC_SLACK_SECTION_MAX);
    s = krc_slack_new_obj(f);
    krc_slack_set_str(f, s, "type", "section");
    krc_slack_attach(f, s, "text", text_obj(f, "mrkdwn", krc_buf_str(mrkdwn)));
    krc_slack_push(f, bl->arr, s);
    bl->n++;
}

void krc_slack_block_fields(struct fmt *f, struct blocks *bl, struct krc_buf *fields, size_t n)
{
    cJSON *s;
    cJSON *arr;
    size_t i;

    if (f->rc != 0 || bl->n >= bl->max || n == 0) {
        return;
    }
    s = krc_slack_new_obj(f);
    krc_slack_set_str(f, s, "type", "section");
    arr = f->rc == 0 ? cJSON_CreateArray() : NULL;
    if (arr == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
    }
    for (i = 0; i < n && i < KRC_SLACK_FIELDS_MAX; i++) {
        krc_slack_fit(f, &fields[i], KRC_SLACK_FIELD_MAX);
        krc_slack_push(f, arr, text_obj(f, "mrkdwn", krc_buf_str(&fields[i])));
    }
    krc_slack_attach(f, s, "fields", arr);
    krc_slack_push(f, bl->arr, s);
    bl->n++;
}

void krc_slack_block_context(struct fmt *f, cJSON *arr, struct krc_buf *mrkdwn)
{
    cJSON *c = krc_slack_new_obj(f);
    cJSON *el = f->rc == 0 ? cJSON_CreateArray() : NULL;

    if (el == NULL) {
        krc_slack_fail(f, KRC_ENOMEM);
    }
    krc_slack_fit(f, mrkdwn, KRC_SLACK_SECTION_MAX);
    krc_slack_set_str(f, c, "type", "context");
    krc_slack_push(f, el, text_obj(f, "mrkdwn", krc_buf_str(mrkdwn)));
    krc_slack_attach(f, c, "elements", el);
    krc_slack_push(f, arr, c);
}

/* channel, username, icon, thread_ts, no unfurling */
void krc_slack_envelope(struct fmt *f, cJSON *root)
{
    const struct krc_alert_options *o = f->o;

    if (o->channel != NULL) {
        krc_slack_set_str(f, root, "channel", o->channel);
    }
    if (o->thread_ts != NULL) {
        krc_slack_set_str(f, root, "thread_ts", o->thread_ts);
    }
    if (o->username != NULL) {
        krc_slack_set_str(f, root, "username", o->username);
    }
    if (o->icon != NULL) {
        krc_slack_set_str(f, root, o->icon[0] == ':' ? "icon_emoji" : "icon_url", o->icon);
    }
    set_bool(f, root, "unfurl_links", 0);
    set_bool(f, root, "unfurl_media", 0);
}

/* Print root into a krc-allocated string. */
int krc_slack_finish(struct fmt *f, cJSON *root, char **ret_json, struct krc_error *err)
{
    char *s = NULL;
    char *out = NULL;

    if (f->rc == 0) {
        s = cJSON_PrintUnformatted(root);
        if (s == NULL) {
            krc_slack_fail(f, KRC_ENOMEM);
        }
    }
    if (f->rc == 0) {
        out = krc_strdup(s);
        if (out == NULL) {
            krc_slack_fail(f, KRC_ENOMEM);
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

/* Does the header name the container? When the summary does not. */
static int header_names_container(const struct krc_diagnosis *d)
{
    return d->container != NULL && !krc_alert_summary_names(d, d->container);
}

/* The failing node's state and its condition's words, "" when the node is
 * fine: a failing node leads the message. */
void krc_slack_node_lead(const struct krc_report *r, struct krc_slack_node *nl)
{
    nl->leads =
        krc_alert_node_state(r, nl->state, sizeof(nl->state), nl->detail, sizeof(nl->detail));
    nl->name = r->node.name != NULL ? r->node.name : r->node_name;
    if (nl->name == NULL) {
        nl->leads = 0;
    }
}

/* The display length of a text: its UTF-16 units, an emoji code such as
 * :red_circle: counted as the one character a phone shows. */
static size_t shown_units(const struct krc_buf *b)
{
    size_t units = krc_slack_buf_units(b);
    const char *p = krc_buf_str(b);

    if (p[0] == ':') {
        const char *q = strchr(p + 1, ':');
        if (q != NULL && (size_t)(q - p) + 1 < units) {
            units -= (size_t)(q - p); /* ":name:" shows as one character */
        }
    }
    return units;
}

/* The notification (the message's `text`, what a phone shows): the severity,
 * "[prod] Node n NotReady · OOMKilled: shop/web-7d9c (app)", then the
 * summary in krc's own words, all within KRC_SLACK_NOTIFY_MAX characters
 * (the summary cut at a word with "…"). */
void krc_slack_headline(struct fmt *f, struct krc_buf *b, const struct krc_report *r,
                        const struct krc_diagnosis *d)
{
    struct krc_slack_node nl;
    struct krc_buf hdr;
    size_t used;

    krc_slack_node_lead(r, &nl);
    krc_buf_init(&hdr, BYTES_FOR(KRC_SLACK_HEADER_MAX));
    krc_slack_lit(f, b, krc_slack_severity_emoji(krc_alert_cause_severity(d->cause)));
    krc_slack_lit(f, b, " ");
    krc_slack_header_text(f, &hdr, r, d);
    /* the header is plain text; the notification is mrkdwn */
    krc_slack_put(f, b, krc_buf_str(&hdr), KRC_SLACK_HEADER_MAX);
    krc_buf_cleanup(&hdr);
    used = shown_units(b);
    if (d->summary_unquoted != NULL && used + 3 + 12 < KRC_SLACK_NOTIFY_MAX && f->rc == 0) {
        size_t room = KRC_SLACK_NOTIFY_MAX - used - 3;
        size_t mark;
        krc_slack_lit(f, b, " \xe2\x80\x94 ");
        mark = b->len;
        if (krc_slack_put_n(f, b, d->summary_unquoted, strlen(d->summary_unquoted), ESC_MRKDWN,
                            room) &&
            f->rc == 0) {
            /* cut at the last space before the ellipsis */
            size_t k = b->len - strlen(ELLIPSIS);
            while (k > mark && b->data[k - 1] != ' ') {
                k--;
            }
            while (k > mark && (b->data[k - 1] == ' ' || b->data[k - 1] == ',' ||
                                b->data[k - 1] == ';' || b->data[k - 1] == '(')) {
                k--;
            }
            if (k > mark) {
                b->len = k;
                b->data[k] = '\0';
                krc_slack_lit(f, b, ELLIPSIS);
            }
        }
    }
}

/* Append a plain_text piece while the header has room; *cut stops it. */
static void header_piece(struct fmt *f, struct krc_buf *b, const char *s, int *cut)
{
    size_t used = krc_slack_buf_units(b);

    if (*cut || s == NULL) {
        return;
    }
    if (used >= KRC_SLACK_HEADER_MAX) {
        *cut = 1;
        return;
    }
    *cut = krc_slack_put_n(f, b, s, strlen(s), 0, KRC_SLACK_HEADER_MAX - used);
}

/* "[prod] OOMKilled: shop/web-7d9c", with " (app)" when the summary does not
 * name the container, and "Node n NotReady · " first when the node fails;
 * plain text, at most 150 units */
void krc_slack_header_text(struct fmt *f, struct krc_buf *b, const struct krc_report *r,
                           const struct krc_diagnosis *d)
{
    struct krc_slack_node nl;
    int cut = 0;

    krc_slack_node_lead(r, &nl);
    if (f->o->cluster != NULL) {
        header_piece(f, b, "[", &cut);
        header_piece(f, b, f->o->cluster, &cut);
        header_piece(f, b, "] ", &cut);
    }
    if (nl.leads) {
        header_piece(f, b, "Node ", &cut);
        header_piece(f, b, nl.name, &cut);
        header_piece(f, b, " ", &cut);
        header_piece(f, b, nl.state, &cut);
        /* node_not_ready's title would say the node's state twice */
        header_piece(f, b, d->cause == KRC_CAUSE_NODE_NOT_READY ? "" : DOT, &cut);
    }
    if (nl.leads && d->cause == KRC_CAUSE_NODE_NOT_READY) {
        /* "Node n NotReady: ns/pod" */
    } else if (d->cause == KRC_CAUSE_UNKNOWN && d->reason != NULL) {
        header_piece(f, b, d->reason, &cut);
    } else {
        header_piece(f, b, krc_alert_cause_title(d->cause), &cut);
    }
    header_piece(f, b, ": ", &cut);
    header_piece(f, b, r->namespace ? r->namespace : "?", &cut);
    header_piece(f, b, "/", &cut);
    header_piece(f, b, r->name ? r->name : "?", &cut);
    if (header_names_container(d)) {
        header_piece(f, b,
                     d->is_sidecar ? " (sidecar "
                     : d->is_init  ? " (init container "
                                   : " (",
                     &cut);
        header_piece(f, b, d->container, &cut);
        header_piece(f, b, ")", &cut);
    }
}

/* The failing node's line (when it leads) and the summary with the
 * confidence: the cause itself is the header's. */
void krc_slack_cause_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                             const struct krc_diagnosis *d)
{
    struct krc_slack_node nl;
    struct krc_buf b;

    krc_slack_node_lead(r, &nl);
    krc_buf_init(&b, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    if (nl.leads) {
        /* the header names the node and its state: here, its words */
        krc_slack_lit(f, &b, ":warning: ");
        krc_slack_put_red(f, &b, nl.detail[0] != '\0' ? nl.detail : "(no message)", NOTE_MAX);
        if (r->node.unschedulable) {
            krc_slack_lit(f, &b, "; the node is cordoned");
        }
        krc_slack_lit(f, &b, "\n");
    }
    krc_slack_lit(f, &b, krc_slack_severity_emoji(krc_alert_cause_severity(d->cause)));
    krc_slack_lit(f, &b, " ");
    krc_slack_put_red(f, &b, d->summary, KRC_SLACK_SECTION_MAX - 600);
    krc_slack_litf(f, &b, DOT "_confidence: %s_", krc_confidence_name(d->confidence));
    krc_slack_block_section(f, bl, &b);
    krc_buf_cleanup(&b);
}

/* One bullet per item that `shown` keeps (all when NULL), as many as fit,
 * then "… and K more"; appended to sec under its title. */
static void list_lines(struct fmt *f, struct krc_buf *sec, const char *title, char *const *items,
                       size_t n, const struct krc_report *r, const struct krc_diagnosis *d,
                       int evidence)
{
    struct krc_buf line;
    char shown_line[2048];
    size_t i;
    size_t left = 0;
    size_t shown = 0;

    for (i = 0; i < n; i++) {
        shown += !evidence || krc_alert_evidence_shown(r, d, i);
    }
    if (shown == 0) {
        return;
    }
    krc_buf_init(&line, BYTES_FOR(EVIDENCE_LINE_MAX + 10));
    if (sec->len > 0) {
        krc_slack_lit(f, sec, "\n");
    }
    krc_slack_lit(f, sec, title);
    for (i = 0; i < n && f->rc == 0; i++) {
        if (evidence && !krc_alert_evidence_shown(r, d, i)) {
            continue;
        }
        krc_buf_reset(&line);
        krc_slack_lit(f, &line, BULLET " ");
        krc_slack_put_red(f, &line,
                          evidence
                              ? krc_alert_evidence_text(r, items[i], shown_line, sizeof(shown_line))
                              : items[i],
                          EVIDENCE_LINE_MAX);
        if (!krc_slack_add_line(f, sec, &line, KRC_SLACK_SECTION_MAX, MORE_RESERVE)) {
            break;
        }
    }
    for (; i < n; i++) {
        left += !evidence || krc_alert_evidence_shown(r, d, i);
    }
    if (left > 0) {
        krc_buf_reset(&line);
        krc_slack_litf(f, &line, "_" ELLIPSIS " and %zu more_", left);
        krc_slack_add_line(f, sec, &line, KRC_SLACK_SECTION_MAX, 0);
    }
    krc_buf_cleanup(&line);
}

/* The evidence the message does not already say (krc_alert_evidence_shown)
 * and what could not be checked, in one section. */
void krc_slack_evidence_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                                const struct krc_diagnosis *d)
{
    struct krc_buf sec;

    krc_buf_init(&sec, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    list_lines(f, &sec, "*Evidence*", d->evidence, d->n_evidence, r, d, 1);
    list_lines(f, &sec, "*Not checked*", d->unchecked, d->n_unchecked, r, d, 0);
    krc_slack_block_section(f, bl, &sec);
    krc_buf_cleanup(&sec);
}

/* The commands as one code block of whole lines (those that fit in
 * budget units), appended to b; returns how many were left out. */
size_t krc_slack_commands_block(struct fmt *f, struct krc_buf *b, const struct krc_diagnosis *d,
                                size_t max_commands, size_t line_max, size_t budget)
{
    struct krc_buf code;
    struct krc_buf line;
    size_t i;

    krc_buf_init(&code, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    krc_buf_init(&line, BYTES_FOR(line_max + 10));
    for (i = 0; i < d->n_commands && i < max_commands && f->rc == 0; i++) {
        krc_buf_reset(&line);
        krc_slack_put_red(f, &line, d->commands[i], line_max);
        if (!krc_slack_add_line(f, &code, &line, budget > 8 ? budget - 8 : 0, 0)) {
            break;
        }
    }
    if (code.len > 0) {
        krc_slack_lit(f, b, FENCE "\n");
        krc_slack_fail(f, krc_buf_append(b, krc_buf_str(&code), code.len));
        krc_slack_lit(f, b, "\n" FENCE);
    }
    krc_buf_cleanup(&line);
    krc_buf_cleanup(&code);
    return d->n_commands - i;
}

void krc_slack_next_step_section(struct fmt *f, struct blocks *bl, const struct krc_diagnosis *d)
{
    struct krc_buf b;
    size_t left;

    if (d->next_step == NULL && d->n_commands == 0) {
        return;
    }
    krc_buf_init(&b, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    if (d->next_step != NULL) {
        krc_slack_lit(f, &b, "*Next step:* ");
        krc_slack_put_red(f, &b, d->next_step, NEXT_STEP_MAX);
    } else {
        krc_slack_lit(f, &b, "*To look further:*");
    }
    if (d->n_commands > 0) {
        krc_slack_lit(f, &b, "\n");
        left = krc_slack_commands_block(f, &b, d, SIZE_MAX, COMMAND_MAX,
                                        KRC_SLACK_SECTION_MAX - krc_slack_buf_units(&b) -
                                            MORE_RESERVE);
        if (left > 0) {
            krc_slack_litf(f, &b, "\n_" ELLIPSIS " and %zu more command%s_", left,
                           left == 1 ? "" : "s");
        }
    }
    krc_slack_block_section(f, bl, &b);
    krc_buf_cleanup(&b);
}

static void put_kv_list(struct fmt *f, struct krc_buf *b, const struct krc_kv_list *l)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        if (i > 0) {
            krc_slack_lit(f, b, ", ");
        }
        krc_slack_put(f, b, l->items[i].key, 100);
        krc_slack_lit(f, b, ": ");
        krc_slack_put(f, b, l->items[i].value, 60);
    }
}

/* Start one fact of the facts line: " · *Label* ". */
static void fact(struct fmt *f, struct krc_buf *b, const char *label)
{
    if (b->len > 0) {
        krc_slack_lit(f, b, DOT);
    }
    krc_slack_litf(f, b, "*%s* ", label);
}

/* The termination's facts: exit code, reason, restarts, run time and end,
 * each unless the summary says it. */
static void termination_facts(struct fmt *f, struct krc_buf *b, const struct krc_diagnosis *d)
{
    char say[96];
    char age[32];

    if (d->has_termination) {
        char e1[32], e2[32], e3[40];
        snprintf(e1, sizeof(e1), "exit %d", d->exit_code);
        snprintf(e2, sizeof(e2), "exited %d", d->exit_code);
        snprintf(e3, sizeof(e3), "code %d", d->exit_code);
        if (!krc_alert_summary_says(d, e1) && !krc_alert_summary_says(d, e2) &&
            !krc_alert_summary_says(d, e3)) {
            fact(f, b, "Exit");
            krc_slack_litf(f, b, "%d", d->exit_code);
            if (d->signal_name != NULL) {
                krc_slack_litf(f, b, " (%s)", d->signal_name);
            }
        }
        snprintf(say, sizeof(say), "reason %.60s", d->reason != NULL ? d->reason : "");
        if (d->reason != NULL && !krc_alert_summary_says(d, say) &&
            strcmp(d->reason, krc_alert_cause_title(d->cause)) != 0) {
            fact(f, b, "Reason");
            krc_slack_put(f, b, d->reason, 200);
        }
    }
    snprintf(say, sizeof(say), "%d restart", d->restart_count);
    if (!d->restart_count_known) {
        fact(f, b, "Restarts");
        krc_slack_lit(f, b, "not given");
    } else if (!krc_alert_summary_says(d, say) &&
               !(snprintf(say, sizeof(say), "%d restarts", d->restart_count) > 0 &&
                 krc_alert_summary_says(d, say))) {
        fact(f, b, "Restarts");
        krc_slack_litf(f, b, "%d", d->restart_count);
    }
    if (d->started_at > 0 && d->finished_at >= d->started_at) {
        char ran[32];
        krc_diagnose_format_duration(d->finished_at - d->started_at, ran, sizeof(ran));
        snprintf(say, sizeof(say), "after %s", ran);
        krc_slack_age_of(f, d->finished_at, age, sizeof(age));
        /* a few seconds after it ended is when the alert arrives: not said */
        if (f->o->now - d->finished_at < AGE_SHOWN) {
            age[0] = '\0';
        }
        if (!krc_alert_summary_says(d, say)) {
            fact(f, b, "Ran");
            krc_slack_lit(f, b, ran);
            if (age[0] != '\0') {
                krc_slack_litf(f, b, ", ended %s ago", age);
            }
        } else if (age[0] != '\0') {
            fact(f, b, "Ended");
            krc_slack_litf(f, b, "%s ago", age);
        }
    }
}

/* One line of facts, each said once: what the summary (or the header)
 * already says is left out. */
void krc_slack_facts_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                             const struct krc_diagnosis *d)
{
    const struct krc_report_container *c = diag_container(r, d);
    struct krc_slack_node nl;
    struct krc_buf b;
    char age[32];
    char line[KRC_ACCEL_NAME_MAX + 96];

    krc_slack_node_lead(r, &nl);
    krc_buf_init(&b, BYTES_FOR(KRC_SLACK_SECTION_MAX));
    termination_facts(f, &b, d);
    if (!nl.leads) {
        fact(f, &b, "Node");
        if (r->node_name != NULL) {
            krc_slack_put(f, &b, r->node_name, NAME_MAX_UNITS);
        } else {
            krc_slack_lit(f, &b, "_not scheduled_");
        }
    }
    fact(f, &b, "Workload");
    if (r->workload_kind != NULL && r->workload_name != NULL) {
        krc_slack_put(f, &b, r->workload_kind, 60);
        krc_slack_lit(f, &b, " ");
        krc_slack_put(f, &b, r->workload_name, NAME_MAX_UNITS);
    } else if (r->owner_kind != NULL && r->owner_name != NULL) {
        krc_slack_put(f, &b, r->owner_kind, 60);
        krc_slack_lit(f, &b, " ");
        krc_slack_put(f, &b, r->owner_name, NAME_MAX_UNITS);
    } else {
        krc_slack_lit(f, &b, "_bare pod_");
    }
    if (c != NULL && c->image != NULL) {
        fact(f, &b, "Image");
        krc_slack_put(f, &b, c->image, 600);
    }
    if (c != NULL && c->limits.n > 0) {
        fact(f, &b, "Limits");
        put_kv_list(f, &b, &c->limits);
    } else if (c != NULL && !krc_alert_summary_says(d, "limit")) {
        fact(f, &b, "Limits");
        krc_slack_lit(f, &b, "none");
    }
    if (c != NULL && c->requests.n > 0) {
        fact(f, &b, "Requests");
        put_kv_list(f, &b, &c->requests);
    }
    if (d->gpus > 0 && !krc_alert_summary_says(d, "GPU")) {
        fact(f, &b, "GPUs");
        krc_slack_litf(f, &b, "%ld held by the pod", d->gpus);
    }
    if (krc_alert_accel_text(f->o, line, sizeof(line)) != NULL) {
        fact(f, &b, "GPU time");
        krc_slack_put(f, &b, line, 200);
    }
    if (r->node.present && d->gpus > 0) {
        for (size_t i = 0; i < r->node.capacity.n; i++) {
            const char *k = r->node.capacity.items[i].key;
            const char *alloc = krc_kv_list_get(&r->node.allocatable, k);
            if (!krc_report_is_gpu_resource(k)) {
                continue;
            }
            fact(f, &b, "Node GPUs");
            krc_slack_put(f, &b, alloc ? alloc : "0", 30);
            krc_slack_lit(f, &b, " of ");
            krc_slack_put(f, &b, r->node.capacity.items[i].value, 30);
            krc_slack_lit(f, &b, " ");
            krc_slack_put(f, &b, k, 100);
            krc_slack_lit(f, &b, " allocatable");
        }
    }
    krc_slack_age_of(f, r->created_at, age, sizeof(age));
    if (age[0] != '\0') {
        fact(f, &b, "Pod age");
        krc_slack_lit(f, &b, age);
    }
    krc_slack_block_section(f, bl, &b);
    krc_buf_cleanup(&b);
}

/* ---- events -------------------------------------------------------------------------- */
