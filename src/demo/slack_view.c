/* Views of Slack messages: one mrkdwn/Block Kit walker with two outputs,
 * HTML (the page, slack_view_page.c) and terminal text. See
 * include/krc/demo/slack_view.h. */
#include <cjson/cJSON.h>
#include <strings.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/demo/slack_view.h"
#include "krc/demo/slack_view_internal.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define TERM_MAX ((size_t)64 * 1024 * 1024) /* one message's terminal text */
#define MAX_DEPTH 6                         /* nested *_~ spans */
#define EMOJI_NAME_MAX 64
#define TYPE_SHOWN 64       /* bytes of an unknown block type shown */
#define BAD_BODY_SHOWN 2000 /* bytes of an unparsable body shown */
#define REPLACEMENT "\xef\xbf\xbd"

enum style {
    ST_BOLD = 1u,
    ST_ITALIC = 2u,
    ST_STRIKE = 4u,
    ST_CODE = 8u,
    ST_DIM = 16u,
};

/* ---- output primitives ----------------------------------------------------------------- */

static void raw_n(struct view *v, const char *s, size_t len)
{
    if (v->rc == 0) {
        v->rc = krc_buf_append(v->b, s, len);
    }
}

void krc_view_raw(struct view *v, const char *s)
{
    raw_n(v, s, strlen(s));
}

/* Terminal: the SGR sequence for the styles in effect (a reset first). */
static void sgr(struct view *v)
{
    if (v->html || !v->colour) {
        return;
    }
    krc_view_raw(v, "\x1b[0");
    if (v->style & ST_BOLD) {
        krc_view_raw(v, ";1");
    }
    if (v->style & ST_DIM) {
        krc_view_raw(v, ";2");
    }
    if (v->style & ST_ITALIC) {
        krc_view_raw(v, ";3");
    }
    if (v->style & ST_STRIKE) {
        krc_view_raw(v, ";9");
    }
    if (v->style & ST_CODE) {
        krc_view_raw(v, ";36");
    }
    krc_view_raw(v, "m");
}

/* Terminal: the marker and inset that begin every line. */
static void line_start(struct view *v)
{
    if (v->html || !v->bol) {
        return;
    }
    v->bol = 0;
    if (v->bar != NULL && v->colour) {
        krc_view_raw(v, "\x1b[0m");
        krc_view_raw(v, v->bar);
        krc_view_raw(v, "\xe2\x96\x8c\x1b[0m ");
    } else if (v->bar != NULL) {
        krc_view_raw(v, "| ");
    }
    if (v->inset != NULL) {
        krc_view_raw(v, v->inset);
    }
    if (v->style != 0) {
        sgr(v);
    }
}

static void newline(struct view *v)
{
    if (v->html) {
        krc_view_raw(v, "\n");
        return;
    }
    line_start(v);
    if (v->colour && v->style != 0) {
        krc_view_raw(v, "\x1b[0m");
    }
    krc_view_raw(v, "\n");
    v->bol = 1;
}

/* Terminal: end the current line unless it is empty. */
static void end_line(struct view *v)
{
    if (!v->html && !v->bol) {
        newline(v);
    }
}

static int is_bidi_control(uint32_t cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* One code point of untrusted text, made safe for the output. */
static void text_cp(struct view *v, const char *p, size_t n, uint32_t cp)
{
    char pic[4];

    if (cp == '\n') {
        newline(v);
        return;
    }
    line_start(v);
    if (cp == '\t') {
        krc_view_raw(v, v->html ? "\t" : "    ");
    } else if (cp < 0x20 || cp == 0x7f) {
        /* a visible Control Picture (U+2400 + c, DEL U+2421) */
        uint32_t pc = cp == 0x7f ? 0x2421 : 0x2400 + cp;
        pic[0] = (char)(0xe0 | (pc >> 12));
        pic[1] = (char)(0x80 | ((pc >> 6) & 0x3f));
        pic[2] = (char)(0x80 | (pc & 0x3f));
        raw_n(v, pic, 3);
    } else if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) {
        krc_view_raw(v, REPLACEMENT);
    } else if (v->html && cp == '&') {
        krc_view_raw(v, "&amp;");
    } else if (v->html && cp == '<') {
        krc_view_raw(v, "&lt;");
    } else if (v->html && cp == '>') {
        krc_view_raw(v, "&gt;");
    } else if (v->html && cp == '"') {
        krc_view_raw(v, "&quot;");
    } else if (v->html && cp == '\'') {
        krc_view_raw(v, "&#39;");
    } else {
        raw_n(v, p, n);
    }
}

/* Untrusted bytes as text: invalid UTF-8 becomes U+FFFD. */
static void text(struct view *v, const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && v->rc == 0) {
        uint32_t cp = 0;
        size_t n = krc_text_utf8_decode(s + i, len - i, &cp);
        if (n == 0) {
            line_start(v);
            krc_view_raw(v, REPLACEMENT);
            i++;
            continue;
        }
        text_cp(v, s + i, n, cp);
        i += n;
    }
}

void krc_view_text_str(struct view *v, const char *s)
{
    text(v, s, strlen(s));
}

/* Slack's three entities (&amp; &lt; &gt;): the length of the one at s, and its character. */
static size_t entity(const char *s, size_t len, char *ret_c)
{
    static const struct {
        const char *name;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}};
    size_t k;

    for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
        size_t n = strlen(ents[k].name);
        if (len >= n && memcmp(s, ents[k].name, n) == 0) {
            *ret_c = ents[k].c;
            return n;
        }
    }
    return 0;
}

/* Text as Slack shows it: the entities decoded, no other markup. */
static void text_decoded(struct view *v, const char *s, size_t len)
{
    size_t i = 0;
    size_t start = 0;

    while (i < len) {
        char c;
        size_t n = s[i] == '&' ? entity(s + i, len - i, &c) : 0;
        if (n == 0) {
            i++;
            continue;
        }
        text(v, s + start, i - start);
        text(v, &c, 1);
        i += n;
        start = i;
    }
    text(v, s + start, len - start);
}

/* Open (on) or close a style: an HTML element or terminal SGR. */
static void style(struct view *v, unsigned st, int on)
{
    if (v->html) {
        const char *tag = st == ST_BOLD     ? "b"
                          : st == ST_ITALIC ? "i"
                          : st == ST_STRIKE ? "s"
                                            : "code";
        krc_view_raw(v, on ? "<" : "</");
        krc_view_raw(v, tag);
        krc_view_raw(v, ">");
        return;
    }
    line_start(v);
    v->style = on ? v->style | st : v->style & ~st;
    sgr(v);
}

/* ---- emoji ------------------------------------------------------------------------------ */

/* The shortcodes krc's messages use, and a few common ones. */
static const struct {
    const char *name;
    const char *utf8;
} EMOJI[] = {
    {"red_circle", "\xf0\x9f\x94\xb4"},
    {"large_orange_circle", "\xf0\x9f\x9f\xa0"},
    {"large_yellow_circle", "\xf0\x9f\x9f\xa1"},
    {"large_green_circle", "\xf0\x9f\x9f\xa2"},
    {"large_blue_circle", "\xf0\x9f\x94\xb5"},
    {"white_circle", "\xe2\x9a\xaa"},
    {"black_circle", "\xe2\x9a\xab"},
    {"rotating_light", "\xf0\x9f\x9a\xa8"},
    {"warning", "\xe2\x9a\xa0\xef\xb8\x8f"},
    {"lock", "\xf0\x9f\x94\x92"},
    {"white_check_mark", "\xe2\x9c\x85"},
    {"heavy_check_mark", "\xe2\x9c\x94\xef\xb8\x8f"},
    {"x", "\xe2\x9d\x8c"},
    {"fire", "\xf0\x9f\x94\xa5"},
    {"boom", "\xf0\x9f\x92\xa5"},
    {"skull", "\xf0\x9f\x92\x80"},
    {"information_source", "\xe2\x84\xb9\xef\xb8\x8f"},
    {"bell", "\xf0\x9f\x94\x94"},
    {"mag", "\xf0\x9f\x94\x8d"},
    {"hourglass", "\xe2\x8c\x9b"},
    {"repeat", "\xf0\x9f\x94\x81"},
    {"robot_face", "\xf0\x9f\xa4\x96"},
};

static const char *emoji_lookup(const char *name, size_t len)
{
    size_t k;

    for (k = 0; k < sizeof(EMOJI) / sizeof(EMOJI[0]); k++) {
        if (strlen(EMOJI[k].name) == len && memcmp(EMOJI[k].name, name, len) == 0) {
            return EMOJI[k].utf8;
        }
    }
    return NULL;
}

static int emoji_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
}

/* ":name:" at s[0]: its length when the name is known (*ret set), else 0. */
size_t krc_view_emoji_at(const char *s, size_t len, const char **ret)
{
    size_t j = 1;

    while (j < len && j <= EMOJI_NAME_MAX && emoji_char(s[j])) {
        j++;
    }
    if (j == 1 || j >= len || s[j] != ':') {
        return 0;
    }
    *ret = emoji_lookup(s + 1, j - 1);
    return *ret != NULL ? j + 1 : 0;
}

static void emoji_out(struct view *v, const char *name, size_t len, const char *utf8)
{
    line_start(v);
    if (v->html) {
        krc_view_raw(v, "<span class=\"emoji\" title=\":");
        raw_n(v, name, len); /* [a-z0-9_+-] only */
        krc_view_raw(v, ":\">");
        krc_view_raw(v, utf8);
        krc_view_raw(v, "</span>");
    } else {
        krc_view_raw(v, utf8);
    }
}

/* ---- mrkdwn ------------------------------------------------------------------------------ */

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

/* Where inline_text is in its text. Searches for a closing marker stop at
 * the end of the line, and a search that failed is not repeated for a later
 * marker of the same kind on that line (none[]): each byte is looked at a
 * bounded number of times, whatever the text. */
#define MARKERS "`<*_~"

struct scan {
    const char *s;
    size_t len;
    size_t eol;                       /* end of the current line ('\n' or len) */
    size_t none[sizeof(MARKERS) - 1]; /* no closer of this marker before here */
    int depth;
};

/* 1 when the marker at s[i] can open a *bold* / _italic_ / ~strike~ span:
 * not inside a word, followed by text. */
static int span_opens(const struct scan *sc, size_t i)
{
    const char *s = sc->s;

    return !(i > 0 && is_alnum(s[i - 1])) && i + 2 < sc->eol && !is_space(s[i + 1]) &&
           s[i + 1] != s[i];
}

/* The index of the marker that closes the span opened at s[i], or 0. */
static size_t span_end(const struct scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t j;

    for (j = i + 2; j < sc->eol; j++) {
        if (s[j] == s[i] && !is_space(s[j - 1]) && (j + 1 == sc->len || !is_alnum(s[j + 1]))) {
            return j;
        }
    }
    return 0;
}

/* The closer of the marker at s[i] on its line, 0 when there is none. */
static size_t closer(struct scan *sc, size_t i)
{
    size_t k = (size_t)(strchr(MARKERS, sc->s[i]) - MARKERS);
    const char *c;
    size_t at = 0;

    if (i < sc->none[k]) {
        return 0;
    }
    if (sc->s[i] == '`' || sc->s[i] == '<') {
        c = i + 1 < sc->eol ? memchr(sc->s + i + 1, sc->s[i] == '`' ? '`' : '>', sc->eol - i - 1)
                            : NULL;
        at = c != NULL ? (size_t)(c - sc->s) : 0;
    } else if (sc->depth < MAX_DEPTH && span_opens(sc, i)) {
        at = span_end(sc, i);
    } else {
        return 0;
    }
    if (at == 0) {
        sc->none[k] = sc->eol;
    }
    return at;
}

static int safe_url(const char *s, size_t len)
{
    static const char *const schemes[] = {"https://", "http://", "mailto:"};
    size_t k;

    for (k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++) {
        size_t n = strlen(schemes[k]);
        if (len > n && strncasecmp(s, schemes[k], n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* <url|label>, <!here>, <@U123>, <#C123|name> (the inside, without < >). */
static void angle(struct view *v, const char *s, size_t len)
{
    const char *bar = memchr(s, '|', len);
    size_t target = bar != NULL ? (size_t)(bar - s) : len;
    const char *label = bar != NULL ? bar + 1 : s;
    size_t label_len = bar != NULL ? len - target - 1 : len;

    if (len > 0 && (s[0] == '!' || s[0] == '@' || s[0] == '#')) {
        if (v->html) {
            krc_view_raw(v, "<span class=\"mention\">");
        }
        text(v, s[0] == '#' ? "#" : "@", 1);
        text_decoded(v, bar != NULL ? label : s + 1, bar != NULL ? label_len : len - 1);
        if (v->html) {
            krc_view_raw(v, "</span>");
        }
        return;
    }
    if (!safe_url(s, target)) {
        text(v, "<", 1);
        text_decoded(v, s, len);
        text(v, ">", 1);
        return;
    }
    if (v->html) {
        krc_view_raw(v, "<a href=\"");
        text_decoded(v, s, target);
        krc_view_raw(v, "\" rel=\"noopener noreferrer nofollow\">");
        text_decoded(v, label, label_len);
        krc_view_raw(v, "</a>");
    } else {
        text_decoded(v, label, label_len);
        if (bar != NULL) {
            text(v, " (", 2);
            text_decoded(v, s, target);
            text(v, ")", 1);
        }
    }
}

static void inline_text(struct view *v, const char *s, size_t len, int depth);

/* One piece of markup at s[i] (*ret_used bytes); 0 when s[i] is plain text. */
static int markup(struct view *v, struct scan *sc, size_t i, size_t *ret_used)
{
    const char *p = sc->s + i;
    size_t rest = sc->len - i;
    const char *utf8 = NULL;
    size_t n = 0;
    char c = p[0];

    if (c == ':' || c == '&') {
        n = c == ':' ? krc_view_emoji_at(p, rest, &utf8) : entity(p, rest, &c);
        if (n > 0 && utf8 != NULL) {
            emoji_out(v, p + 1, n - 2, utf8);
        } else if (n > 0) {
            text(v, &c, 1);
        }
        *ret_used = n;
        return n > 0;
    }
    n = closer(sc, i);
    if (n == 0 || (c == '`' && n == i + 1)) {
        return 0;
    }
    if (c == '`') {
        style(v, ST_CODE, 1);
        text_decoded(v, p + 1, n - i - 1);
        style(v, ST_CODE, 0);
    } else if (c == '<') {
        angle(v, p + 1, n - i - 1);
    } else {
        unsigned st = c == '*' ? ST_BOLD : c == '_' ? ST_ITALIC : ST_STRIKE;
        style(v, st, 1);
        inline_text(v, p + 1, n - i - 1, sc->depth + 1);
        style(v, st, 0);
    }
    *ret_used = n - i + 1;
    return 1;
}

/* mrkdwn without code blocks: spans, links, emoji, entities, newlines. */
static void inline_text(struct view *v, const char *s, size_t len, int depth)
{
    struct scan sc;
    size_t i = 0;
    size_t start = 0;

    memset(&sc, 0, sizeof(sc));
    sc.s = s;
    sc.len = len;
    sc.depth = depth;
    while (i < len && v->rc == 0) {
        size_t used = 0;
        if (i >= sc.eol) {
            const char *nl = memchr(s + i, '\n', len - i);
            sc.eol = nl != NULL ? (size_t)(nl - s) : len;
        }
        if (s[i] == '\0' || strchr("`*_~<:&", s[i]) == NULL) {
            i++;
            continue;
        }
        text(v, s + start, i - start); /* the plain run before it */
        start = i;
        if (markup(v, &sc, i, &used)) {
            i += used;
            start = i;
        } else {
            i++;
        }
    }
    text(v, s + start, len - start);
}

static void code_block(struct view *v, const char *s, size_t len)
{
    if (len > 0 && s[0] == '\n') {
        s++;
        len--;
    }
    if (len > 0 && s[len - 1] == '\n') {
        len--;
    }
    if (v->html) {
        /* an HTML parser drops a newline right after <pre>: a text that
         * starts with an empty line needs one more */
        krc_view_raw(v,
                     len > 0 && s[0] == '\n' ? "<pre class=\"code\">\n" : "<pre class=\"code\">");
        text_decoded(v, s, len);
        krc_view_raw(v, "</pre>");
        return;
    }
    end_line(v);
    v->inset = "    ";
    v->style |= ST_DIM;
    text_decoded(v, s, len);
    end_line(v);
    v->style &= ~(unsigned)ST_DIM;
    v->inset = NULL;
}

/* A mrkdwn text: ``` code blocks ```, the rest inline. */
/* The first ``` in s[from..len), or NULL. */
static const char *fence(const char *s, size_t from, size_t len)
{
    while (from + 3 <= len) {
        const char *p = memchr(s + from, '`', len - from - 2);
        if (p == NULL) {
            return NULL;
        }
        if (p[1] == '`' && p[2] == '`') {
            return p;
        }
        from = (size_t)(p - s) + 1;
    }
    return NULL;
}

static void mrkdwn(struct view *v, const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && v->rc == 0) {
        const char *open = fence(s, i, len);
        const char *close = open != NULL ? fence(s, (size_t)(open - s) + 3, len) : NULL;
        size_t before;
        if (close == NULL) {
            break;
        }
        before = (size_t)(open - (s + i));
        if (before > 0 && s[i + before - 1] == '\n') {
            before--; /* the block starts its own line */
        }
        inline_text(v, s + i, before, 0);
        code_block(v, open + 3, (size_t)(close - open) - 3);
        i = (size_t)(close - s) + 3;
        if (i < len && s[i] == '\n') {
            i++;
        }
    }
    if (i < len) {
        inline_text(v, s + i, len - i, 0);
    }
}

/* ---- Block Kit ---------------------------------------------------------------------------- */

const char *krc_view_str_of(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(it) && it->valuestring != NULL ? it->valuestring : NULL;
}

/* A note of ours, visible in both outputs ("unsupported block ..."). */
static void note(struct view *v, const char *what, const char *detail)
{
    end_line(v);
    if (v->html) {
        krc_view_raw(v, "<div class=\"note\">");
    } else {
        style(v, ST_DIM, 1);
        text(v, "[", 1);
    }
    krc_view_text_str(v, what);
    if (detail != NULL) {
        size_t dl = strlen(detail);
        text(v, " \"", 2);
        text(v, detail, dl > TYPE_SHOWN ? TYPE_SHOWN : dl);
        text(v, dl > TYPE_SHOWN ? "\xe2\x80\xa6\"" : "\"", dl > TYPE_SHOWN ? 4 : 1);
    }
    if (v->html) {
        krc_view_raw(v, "</div>");
    } else {
        text(v, "]", 1);
        style(v, ST_DIM, 0);
        end_line(v);
    }
}

/* A text object: {"type": "plain_text" | "mrkdwn", "text": ...}. */
static void text_object(struct view *v, const cJSON *t)
{
    const char *type = krc_view_str_of(t, "type");
    const char *s = krc_view_str_of(t, "text");

    if (s == NULL) {
        note(v, "text object without text", NULL);
        return;
    }
    if (type != NULL && strcmp(type, "mrkdwn") == 0) {
        mrkdwn(v, s, strlen(s));
    } else {
        text_decoded(v, s, strlen(s));
    }
}

static void block_header(struct view *v, const cJSON *blk)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
    const char *id = krc_view_str_of(blk, "block_id");

    end_line(v);
    if (v->html) {
        /* the block_id is not shown; it is kept for tools that read the page
         * (a restart's "cause:CODE": scripts/readme-picture --cause) */
        krc_view_raw(v, "<div class=\"header\"");
        if (id != NULL && strlen(id) <= 255) {
            krc_view_raw(v, " data-block-id=\"");
            krc_view_text_str(v, id);
            krc_view_raw(v, "\"");
        }
        krc_view_raw(v, ">");
        text_object(v, t);
        krc_view_raw(v, "</div>");
        return;
    }
    style(v, ST_BOLD, 1);
    text_object(v, t);
    style(v, ST_BOLD, 0);
    end_line(v);
}

/* Terminal: a field "*Label*\nvalue" as "Label: value". */
static void term_field(struct view *v, const char *s)
{
    size_t len = strlen(s);
    const char *nl = strchr(s, '\n');

    end_line(v);
    if (s[0] == '*' && nl != NULL && nl - s >= 2 && nl[-1] == '*' &&
        memchr(s + 1, '*', (size_t)(nl - s) - 2) == NULL) {
        style(v, ST_BOLD, 1);
        text_decoded(v, s + 1, (size_t)(nl - s) - 2);
        style(v, ST_BOLD, 0);
        text(v, ": ", 2);
        mrkdwn(v, nl + 1, len - (size_t)(nl + 1 - s));
    } else {
        mrkdwn(v, s, len);
    }
    end_line(v);
}

static void block_section(struct view *v, const cJSON *blk)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(blk, "fields");
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(blk, "accessory");
    const cJSON *f;

    end_line(v);
    if (t != NULL) {
        krc_view_raw(v, v->html ? "<div class=\"section\">" : "");
        text_object(v, t);
        krc_view_raw(v, v->html ? "</div>" : "");
        end_line(v);
    }
    if (cJSON_IsArray(fields)) {
        krc_view_raw(v, v->html ? "<div class=\"fields\">" : "");
        cJSON_ArrayForEach(f, fields)
        {
            const char *s = krc_view_str_of(f, "text");
            if (!v->html && s != NULL &&
                strcmp(krc_view_str_of(f, "type") ? krc_view_str_of(f, "type") : "", "mrkdwn") ==
                    0) {
                term_field(v, s);
                continue;
            }
            krc_view_raw(v, v->html ? "<div class=\"field\">" : "");
            text_object(v, f);
            krc_view_raw(v, v->html ? "</div>" : "");
            end_line(v);
        }
        krc_view_raw(v, v->html ? "</div>" : "");
    }
    if (acc != NULL) {
        note(v, "unsupported accessory",
             krc_view_str_of(acc, "type") ? krc_view_str_of(acc, "type") : "?");
    }
}

static void block_context(struct view *v, const cJSON *blk)
{
    const cJSON *els = cJSON_GetObjectItemCaseSensitive(blk, "elements");
    const cJSON *e;
    int first = 1;

    end_line(v);
    if (v->html) {
        krc_view_raw(v, "<div class=\"context\">");
    } else {
        style(v, ST_DIM, 1);
    }
    if (!cJSON_IsArray(els)) {
        els = NULL;
    }
    cJSON_ArrayForEach(e, els)
    {
        const char *type = krc_view_str_of(e, "type") ? krc_view_str_of(e, "type") : "";
        if (!first) {
            text(v, "  ", 2);
        }
        first = 0;
        if (strcmp(type, "mrkdwn") == 0 || strcmp(type, "plain_text") == 0) {
            krc_view_raw(v, v->html ? "<span>" : "");
            text_object(v, e);
            krc_view_raw(v, v->html ? "</span>" : "");
        } else if (strcmp(type, "image") == 0) {
            krc_view_text_str(v, "[image: ");
            krc_view_text_str(v,
                              krc_view_str_of(e, "alt_text") ? krc_view_str_of(e, "alt_text") : "");
            text(v, "]", 1);
        } else {
            krc_view_text_str(v, "[unsupported context element]");
        }
    }
    if (v->html) {
        krc_view_raw(v, "</div>");
    } else {
        style(v, ST_DIM, 0);
        end_line(v);
    }
}

static void blocks(struct view *v, const cJSON *arr)
{
    const cJSON *blk;

    cJSON_ArrayForEach(blk, arr)
    {
        const char *type = krc_view_str_of(blk, "type");
        if (v->rc != 0) {
            return;
        }
        if (type == NULL) {
            note(v, "unsupported block without a type", NULL);
        } else if (strcmp(type, "header") == 0) {
            block_header(v, blk);
        } else if (strcmp(type, "section") == 0) {
            block_section(v, blk);
        } else if (strcmp(type, "context") == 0) {
            block_context(v, blk);
        } else if (strcmp(type, "divider") == 0) {
            end_line(v);
            krc_view_raw(v, v->html ? "<hr class=\"divider\">" : "");
            if (!v->html) {
                krc_view_text_str(v,
                                  "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2"
                                  "\x94\x80\xe2\x94\x80\xe2\x94\x80\n");
            }
        } else if (strcmp(type, "image") == 0) {
            note(v, "image not shown; alt text",
                 krc_view_str_of(blk, "alt_text") ? krc_view_str_of(blk, "alt_text") : "");
        } else {
            note(v, "unsupported block", type);
        }
    }
}

/* ---- attachments ------------------------------------------------------------------------ */

static int hex_digit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A colour fit for CSS and ANSI: "#RRGGBB" from "#RRGGBB", "#RGB", the hex
 * digits alone or Slack's good/warning/danger; anything else is grey. */
static void colour_of(const char *c, char out[8])
{
    size_t n;
    size_t k;

    if (c == NULL) {
        c = "";
    } else if (strcmp(c, "good") == 0) {
        c = "#2EB67D";
    } else if (strcmp(c, "warning") == 0) {
        c = "#ECB22E";
    } else if (strcmp(c, "danger") == 0) {
        c = "#E01E5A";
    }
    if (c[0] == '#') {
        c++;
    }
    n = strlen(c);
    for (k = 0; k < n && hex_digit(c[k]); k++) {
    }
    if (k == n && n == 6) {
        snprintf(out, 8, "#%s", c);
    } else if (k == n && n == 3) {
        snprintf(out, 8, "#%c%c%c%c%c%c", c[0], c[0], c[1], c[1], c[2], c[2]);
    } else {
        memcpy(out, "#DDDDDD", 8);
    }
}

static void ansi_bar(const char *hex, char *out, size_t outsz)
{
    unsigned long rgb = strtoul(hex + 1, NULL, 16);

    snprintf(out, outsz, "\x1b[38;2;%lu;%lu;%lum", (rgb >> 16) & 0xff, (rgb >> 8) & 0xff,
             rgb & 0xff);
}

/* Legacy attachment fields: {"title", "value"}. */
static void attachment_fields(struct view *v, const cJSON *fields)
{
    const cJSON *f;

    krc_view_raw(v, v->html ? "<div class=\"fields\">" : "");
    cJSON_ArrayForEach(f, fields)
    {
        const char *t = krc_view_str_of(f, "title");
        const char *val = krc_view_str_of(f, "value");
        end_line(v);
        krc_view_raw(v, v->html ? "<div class=\"field\">" : "");
        if (t != NULL) {
            style(v, ST_BOLD, 1);
            text_decoded(v, t, strlen(t));
            style(v, ST_BOLD, 0);
            text(v, v->html ? "\n" : ": ", v->html ? 1 : 2);
        }
        if (val != NULL) {
            mrkdwn(v, val, strlen(val));
        }
        krc_view_raw(v, v->html ? "</div>" : "");
        end_line(v);
    }
    krc_view_raw(v, v->html ? "</div>" : "");
}

static void attachment_text(struct view *v, const cJSON *a, const char *key, const char *cls,
                            unsigned st)
{
    const char *s = krc_view_str_of(a, key);

    if (s == NULL) {
        return;
    }
    end_line(v);
    if (v->html) {
        krc_view_raw(v, "<div class=\"");
        krc_view_raw(v, cls);
        krc_view_raw(v, "\">");
    } else if (st != 0) {
        style(v, st, 1);
    }
    mrkdwn(v, s, strlen(s));
    if (v->html) {
        krc_view_raw(v, "</div>");
    } else {
        if (st != 0) {
            style(v, st, 0);
        }
        end_line(v);
    }
}

static void attachment(struct view *v, const cJSON *a)
{
    char hex[8];
    char bar[32];
    const cJSON *bl = cJSON_GetObjectItemCaseSensitive(a, "blocks");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(a, "fields");

    colour_of(krc_view_str_of(a, "color"), hex);
    attachment_text(v, a, "pretext", "section", 0);
    end_line(v);
    if (v->html) {
        krc_view_raw(v, "<div class=\"attachment\" style=\"border-left-color:");
        krc_view_raw(v, hex); /* validated: #RRGGBB */
        krc_view_raw(v, "\">");
    } else {
        ansi_bar(hex, bar, sizeof(bar));
        v->bar = bar;
    }
    attachment_text(v, a, "title", "header", ST_BOLD);
    attachment_text(v, a, "text", "section", 0);
    if (cJSON_IsArray(fields)) {
        attachment_fields(v, fields);
    }
    if (cJSON_IsArray(bl)) {
        blocks(v, bl);
    }
    attachment_text(v, a, "footer", "context", ST_DIM);
    end_line(v);
    v->bar = NULL;
    krc_view_raw(v, v->html ? "</div>" : "");
}

/* ---- one message ------------------------------------------------------------------------ */

/* The content of one message (no bot line): text, blocks, attachments. */
void krc_view_message_content(struct view *v, const cJSON *root)
{
    const cJSON *bl = cJSON_GetObjectItemCaseSensitive(root, "blocks");
    const cJSON *atts = cJSON_GetObjectItemCaseSensitive(root, "attachments");
    const char *text_s = krc_view_str_of(root, "text");
    int has_blocks = cJSON_IsArray(bl) && cJSON_GetArraySize(bl) > 0;
    int has_atts = cJSON_IsArray(atts) && cJSON_GetArraySize(atts) > 0;
    const cJSON *a;

    if (krc_view_str_of(root, "thread_ts") != NULL) {
        end_line(v);
        krc_view_raw(v, v->html ? "<div class=\"thread\">" : "");
        krc_view_text_str(v, "\xe2\x86\xb3 reply in a thread");
        krc_view_raw(v, v->html ? "</div>" : "");
        end_line(v);
    }
    /* Slack shows `text` only when there are no blocks (it is their notification fallback). */
    if (!has_blocks && text_s != NULL) {
        krc_view_raw(v, v->html ? "<div class=\"section\">" : "");
        mrkdwn(v, text_s, strlen(text_s));
        krc_view_raw(v, v->html ? "</div>" : "");
        end_line(v);
    }
    if (has_blocks) {
        blocks(v, bl);
    }
    if (!has_atts) {
        atts = NULL;
    }
    cJSON_ArrayForEach(a, atts)
    {
        attachment(v, a);
    }
    if (!has_blocks && !has_atts && text_s == NULL) {
        note(v, "empty message: no text, blocks or attachments", NULL);
    }
}

/* Parse a body, or say visibly why not; NULL when it is not shown. */
cJSON *krc_view_parse_body(struct view *v, const char *body)
{
    size_t len = body != NULL ? strlen(body) : 0;
    cJSON *root;
    char what[128];

    if (body == NULL) {
        note(v, "empty message: no body", NULL);
        return NULL;
    }
    if (len > KRC_DEMO_VIEW_MAX_BODY) {
        snprintf(what, sizeof(what),
                 "message not shown: its body is %zu bytes, over the %d-byte limit", len,
                 KRC_DEMO_VIEW_MAX_BODY);
        note(v, what, NULL);
        return NULL;
    }
    root = cJSON_ParseWithLength(body, len);
    if (cJSON_IsObject(root)) {
        return root;
    }
    cJSON_Delete(root);
    snprintf(what, sizeof(what),
             "could not parse this message: the %zu-byte body is not a JSON object", len);
    note(v, what, NULL);
    if (v->html) {
        krc_view_raw(v, "<pre class=\"code\">");
    }
    text(v, body, len > BAD_BODY_SHOWN ? BAD_BODY_SHOWN : len);
    if (len > BAD_BODY_SHOWN) {
        krc_view_text_str(v, "\xe2\x80\xa6");
    }
    krc_view_raw(v, v->html ? "</pre>" : "");
    end_line(v);
    return NULL;
}

char *krc_demo_term_render(const char *body, int colour)
{
    struct krc_buf b;
    struct view v = {&b, 0, colour, 0, 0, NULL, NULL, 1};
    cJSON *root;

    krc_buf_init(&b, TERM_MAX);
    root = krc_view_parse_body(&v, body);
    if (root != NULL) {
        krc_view_message_content(&v, root);
        cJSON_Delete(root);
    }
    end_line(&v);
    if (v.rc == KRC_ETOOBIG) {
        krc_buf_reset(&b);
        v.rc = krc_buf_append_str(&b, "[message not shown: its text is too large]\n");
    }
    if (v.rc != 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    return krc_buf_take(&b);
}
