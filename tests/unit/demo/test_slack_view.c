/* slack_view: krc's own Slack messages (every corpus case through the
 * webhook sink's format function, with and without the colour bar, a storm
 * summary, an incident's "resolved" reply) rendered to the HTML page and the
 * terminal; hostile payloads (script tags, quotes, invalid UTF-8, terminal
 * escape sequences, bad links and colours) escaped; unknown blocks, invalid JSON and
 * huge bodies shown as notes; the page written atomically. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/alert/sink.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/slack.h"
#include "krc/demo/slack_view.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc_test.h"

#define CORPUS KRC_FIXTURES "/corpus"
#define AT 1764774000.0 /* 2025-12-03T15:00:00Z */

/* ---- helpers ---------------------------------------------------------------------------- */

/* A corpus case through the webhook sink's format function, as krc posts it. */
static char *corpus_body(const char *name, int colour_bar)
{
    char dir[1024];
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    char *body = NULL;
    char *fallback = NULL;

    snprintf(dir, sizeof(dir), "%s/%s", CORPUS, name);
    krc_test_load_case(dir, &r, &d);
    krc_alert_options_init(&o);
    o.cluster = "prod-eu";
    o.now = d.finished_at + 150;
    o.color_bar = colour_bar;
    assert_int_equal(krc_dest_kind_find("slack-webhook")
                         ->ops->format_restart(&r, &d, &o, &body, &fallback, NULL),
                     0);
    krc_free(fallback);
    krc_test_unload_case(&r, &d);
    return body;
}

static char *page_of(const char *body)
{
    struct krc_demo_msg m = {body, AT, NULL};
    char *page = krc_demo_html_render(&m, 1, "#alerts");

    assert_non_null(page);
    return page;
}

static size_t count(const char *hay, const char *needle)
{
    size_t hl = strlen(hay);
    size_t nl = strlen(needle);
    size_t n = 0;
    size_t i;

    /* not strstr in a loop: ASan's strict_string_checks makes that quadratic */
    for (i = 0; i + nl <= hl; i++) {
        if (memcmp(hay + i, needle, nl) == 0) {
            n++;
            i += nl - 1;
        }
    }
    return n;
}

/* s as Slack shows it (its three entities decoded) and then HTML-escaped as
 * the page must have it. */
static char *html_of(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n * 6 + 1);
    char *o = out;

    assert_non_null(out);
    while (*s) {
        const char *e = NULL;
        char c = *s;
        if (strncmp(s, "&amp;", 5) == 0 || strncmp(s, "&lt;", 4) == 0 ||
            strncmp(s, "&gt;", 4) == 0) {
            c = s[1] == 'a' ? '&' : s[1] == 'l' ? '<' : '>';
            s += s[1] == 'a' ? 5 : 4;
        } else {
            s++;
        }
        e = c == '&'    ? "&amp;"
            : c == '<'  ? "&lt;"
            : c == '>'  ? "&gt;"
            : c == '"'  ? "&quot;"
            : c == '\'' ? "&#39;"
                        : NULL;
        if (e != NULL) {
            memcpy(o, e, strlen(e));
            o += strlen(e);
        } else {
            *o++ = c;
        }
    }
    *o = '\0';
    return out;
}

/* Every tag of the page is one the renderer writes, with its attributes;
 * style attributes are only the validated colour bar; links only http(s);
 * the page is valid UTF-8 without control characters but \n and \t. */
static void check_page(const char *page)
{
    static const char *const tags[] = {"!DOCTYPE", "html", "head", "meta", "title", "style",
                                       "body",     "div",  "span", "pre",  "code",  "b",
                                       "i",        "s",    "a",    "time", "hr",    NULL};
    const char *p = page;
    const char *style_end = strstr(page, "</style>");
    const char *limit = page + strlen(page);
    size_t k;

    assert_true(krc_text_utf8_valid(page, strlen(page)));
    for (k = 0; page[k]; k++) {
        unsigned char c = (unsigned char)page[k];
        assert_true(c >= 0x20 || c == '\n' || c == '\t');
    }
    assert_non_null(style_end);
    assert_non_null(strstr(page, "default-src 'none'"));
    /* memchr with lengths, not strchr: ASan's strict_string_checks makes that quadratic */
    while ((p = memchr(p, '<', (size_t)(limit - p))) != NULL) {
        const char *end = memchr(p, '>', (size_t)(limit - p));
        char tag[16];
        size_t n = 0;
        int ok = 0;
        assert_non_null(end);
        p += p[1] == '/' ? 2 : 1;
        while (n < sizeof(tag) - 1 && p[n] != ' ' && p[n] != '>') {
            tag[n] = p[n];
            n++;
        }
        tag[n] = '\0';
        for (k = 0; tags[k] != NULL; k++) {
            ok |= strcmp(tag, tags[k]) == 0;
        }
        if (!ok) {
            print_error("unexpected tag <%s> at: %.80s\n", tag, p);
        }
        assert_true(ok);
        /* attributes: no event handlers, no script URLs, styles only the bar */
        for (const char *a = p; a < end; a++) {
            assert_false(strncmp(a, " on", 3) == 0);
            if (strncmp(a, "style=\"", 7) == 0) {
                assert_true(strncmp(a + 7, "border-left-color:#", 19) == 0);
                assert_int_equal(a[19 + 7 + 6], '"');
            }
            if (strncmp(a, "href=\"", 6) == 0) {
                assert_true(strncmp(a + 6, "https://", 8) == 0 ||
                            strncmp(a + 6, "http://", 7) == 0 || strncmp(a + 6, "mailto:", 7) == 0);
            }
        }
        p = end;
    }
    assert_non_null(strstr(page, "</html>\n"));
}

/* Terminal text of plain mode: no escape or other control byte. */
static void check_plain(const char *t)
{
    for (; *t; t++) {
        unsigned char c = (unsigned char)*t;
        assert_true(c >= 0x20 || c == '\n');
        assert_true(c != 0x7f);
    }
}

/* Terminal text in colour: every ESC starts one of our SGR sequences. */
static void check_colour(const char *t)
{
    for (; *t; t++) {
        unsigned char c = (unsigned char)*t;
        if (c == 0x1b) {
            t++;
            assert_int_equal(*t, '[');
            t++;
            while ((*t >= '0' && *t <= '9') || *t == ';') {
                t++;
            }
            assert_int_equal(*t, 'm');
            continue;
        }
        assert_true(c >= 0x20 || c == '\n');
    }
}

/* ---- krc's own messages ----------------------------------------------------------------- */

/* What the page and the terminal must show of one of krc's messages. */
static void check_corpus_message(const char *body, int colour_bar)
{
    cJSON *root = cJSON_Parse(body);
    cJSON *blocks;
    cJSON *blk;
    char *page = page_of(body);
    char *plain = krc_demo_term_render(body, 0);
    char *colour = krc_demo_term_render(body, 1);
    size_t fences = 0;
    size_t fields = 0;

    assert_non_null(root);
    assert_non_null(plain);
    assert_non_null(colour);
    check_page(page);
    check_plain(plain);
    check_colour(colour);
    blocks = colour_bar
                 ? cJSON_GetObjectItem(
                       cJSON_GetArrayItem(cJSON_GetObjectItem(root, "attachments"), 0), "blocks")
                 : cJSON_GetObjectItem(root, "blocks");
    assert_non_null(blocks);
    cJSON_ArrayForEach(blk, blocks)
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(blk, "type"));
        cJSON *t = cJSON_GetObjectItem(blk, "text");
        if (strcmp(type, "header") == 0) {
            const char *h = cJSON_GetStringValue(cJSON_GetObjectItem(t, "text"));
            char *want = html_of(h);
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(blk, "block_id"));
            size_t sz = strlen(want) + 40;
            char *line = malloc(sz);
            assert_non_null(line);
            snprintf(line, sz, "\">%s</div>", want);
            assert_non_null(strstr(page, line));
            /* a restart's header carries its cause code for tools, not for the eye */
            assert_non_null(id);
            assert_true(strncmp(id, "cause:", 6) == 0);
            snprintf(line, sz, "<div class=\"header\" data-block-id=\"%s\">", id);
            assert_non_null(strstr(page, line));
            /* the terminal has the header as a line of its own */
            assert_non_null(strstr(plain, h));
            free(line);
            free(want);
        }
        if (t != NULL) {
            fences += count(cJSON_GetStringValue(cJSON_GetObjectItem(t, "text")), "```");
        }
        fields += (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(blk, "fields"));
    }
    assert_true(fences % 2 == 0 && fences >= 2);
    assert_int_equal(count(page, "<pre class=\"code\">"), fences / 2);
    assert_int_equal(count(page, "<div class=\"field\">"), fields);
    assert_int_equal(count(page, "<div class=\"context\">"), 1);
    assert_null(strstr(page, "unsupported"));
    assert_null(strstr(page, "could not parse"));
    /* no mrkdwn marker or shortcode is left raw in the headline of the cause */
    assert_int_equal(count(page, ":red_circle:"), count(page, "title=\":red_circle:\""));
    assert_int_equal(count(page, ":large_orange_circle:"),
                     count(page, "title=\":large_orange_circle:\""));
    assert_int_equal(count(page, ":white_circle:"), count(page, "title=\":white_circle:\""));
    assert_int_equal(count(page, ":warning:"), count(page, "title=\":warning:\""));
    assert_true(strstr(page, "\xf0\x9f\x94\xb4") != NULL || strstr(page, "\xf0\x9f\x9f\xa0") ||
                strstr(page, "\xe2\x9a\xaa"));
    /* the facts line, code indented */
    assert_non_null(strstr(plain, "Workload "));
    assert_non_null(strstr(plain, "    kubectl "));
    assert_non_null(strstr(colour, "\x1b[0;1m"));
    if (colour_bar) {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(root, "attachments"), 0), "color"));
        char want[64];
        snprintf(want, sizeof(want), "border-left-color:%s\"", c);
        assert_non_null(strstr(page, want));
        assert_non_null(strstr(colour, "\xe2\x96\x8c\x1b[0m "));
        assert_non_null(strstr(plain, "\n| Workload ") != NULL || strstr(plain, " Workload "));
        assert_non_null(strstr(plain, "\n| krc\n"));
        /* Slack shows the text of a message with attachments above them */
        assert_true(strstr(page, "<div class=\"section\">") < strstr(page, "class=\"attachment\""));
    } else {
        assert_null(strstr(page, "class=\"attachment\""));
        assert_null(strstr(plain, "\n| "));
    }
    cJSON_Delete(root);
    krc_free(page);
    krc_free(plain);
    krc_free(colour);
}

static void test_corpus(void **state)
{
    char **names;
    size_t n = krc_test_case_names(CORPUS, &names);
    size_t i;

    (void)state;
    assert_true(n >= 20);
    for (i = 0; i < n; i++) {
        for (int bar = 0; bar <= 1; bar++) {
            char *body = corpus_body(names[i], bar);
            check_corpus_message(body, bar);
            krc_free(body);
        }
        free(names[i]);
    }
    free(names);
}

/* The liveness case, looked at closely. */
static void test_liveness_details(void **state)
{
    char *body = corpus_body("03-checkout-liveness-503", 1);
    char *page = page_of(body);
    char *plain = krc_demo_term_render(body, 0);

    (void)state;
    /* the cause once: the header's title; its code only in the header's block_id */
    assert_non_null(strstr(page,
                           "<div class=\"header\" data-block-id=\"cause:liveness_probe_failed\">"
                           "[prod-eu] Liveness probe failed: payments/checkout-5f7d9c8b6d-w9j4h"
                           " (checkout)</div>"));
    assert_int_equal(count(page, "liveness_probe_failed"), 1);
    assert_non_null(strstr(page, "<span class=\"emoji\" title=\":large_orange_circle:\">"
                                 "\xf0\x9f\x9f\xa0</span> Liveness probe failed (HTTP probe"));
    assert_non_null(strstr(page, "<b>Reason</b> Error"));
    /* a Normal event (Pulled: "Container image ... already present") is not shown */
    assert_null(strstr(page, "Container image &quot;acrprodweu.azurecr.io/payments/"));
    assert_non_null(strstr(page, "Readiness probe failed: HTTP probe failed with statuscode: 503"));
    assert_non_null(strstr(page, "<span class=\"name\">krc</span><span class=\"app\">APP</span>"
                                 "<time datetime=\"2025-12-03T15:00:00Z\""));
    assert_non_null(strstr(page, "border-left-color:#F2A33A"));
    assert_non_null(strstr(plain, "| [prod-eu] Liveness probe failed: "
                                  "payments/checkout-5f7d9c8b6d-w9j4h (checkout)\n"));
    assert_non_null(strstr(plain, "| \xf0\x9f\x9f\xa0 Liveness probe failed (HTTP probe failed"));
    assert_non_null(strstr(plain, "| Reason Error \xc2\xb7 "));
    /* no kubectl table repeating the restarts and age, no pod uid */
    assert_null(strstr(plain, "NAME                        READY"));
    assert_null(strstr(plain, "pod uid"));
    krc_free(plain);
    krc_free(page);
    krc_free(body);
}

static void test_summary_and_resolved(void **state)
{
    struct krc_alert_group causes[] = {{"dependency_unreachable", 9, NULL},
                                       {"oom_killed", 2, NULL}};
    struct krc_alert_group nodes[] = {{"node-1", 11, NULL}};
    /* an incident's end, as deliver_incident.c fills it */
    struct krc_alert_recovered rec = {.namespace = "shop",
                                      .pod = "web-1",
                                      .container = "app",
                                      .ready_seconds = 600,
                                      .incident_id = 7,
                                      .workload_kind = "StatefulSet",
                                      .workload_name = "web",
                                      .cause = "oom_killed",
                                      .restarts = 5,
                                      .first_at = 1764773400, /* 2025-12-03T14:50:00Z */
                                      .last_at = 1764774000,
                                      .last_pod = "web-1"};
    struct krc_alert_summary s;
    struct krc_alert_options o;
    struct krc_demo_msg m[2] = {{NULL, 0, NULL}};
    char *sum = NULL;
    char *recov = NULL;
    char *page;
    char *plain;

    (void)state;
    memset(&s, 0, sizeof(s));
    s.restarts = 11;
    s.pods = 9;
    s.window_seconds = 60;
    s.by_cause = causes;
    s.n_by_cause = 2;
    s.by_node = nodes;
    s.n_by_node = 1;
    krc_alert_options_init(&o);
    o.cluster = "prod-eu";
    assert_int_equal(krc_dest_kind_find("slack-webhook")->ops->format_summary(&s, &o, &sum, NULL),
                     0);
    o.thread_ts = "1722325372.001200";
    assert_int_equal(
        krc_dest_kind_find("slack-webhook")->ops->format_recovered(&rec, &o, &recov, NULL), 0);
    m[0].body = sum;
    m[0].received_at = AT;
    m[1].body = recov;
    m[1].received_at = AT + 600;
    page = krc_demo_html_render(m, 2, "#alerts");
    assert_non_null(page);
    check_page(page);
    assert_non_null(
        strstr(page, "<div class=\"header\">[prod-eu] Restart storm: 11 restarts of 9 pods in 1m"));
    /* every grouped restart on one node: said once, not as a one-line grouping */
    assert_non_null(strstr(page, "on node <code>node-1</code>"));
    assert_null(strstr(page, "<b>By node</b>"));
    assert_non_null(
        strstr(page, "<b>By cause</b>\n\xe2\x80\xa2 <code>dependency_unreachable</code> 9"));
    assert_non_null(strstr(page, "<div class=\"msg reply\" id=\"m2\">"));
    assert_non_null(strstr(page, "reply in a thread"));
    assert_non_null(strstr(page, "\xf0\x9f\x9f\xa2</span> [prod-eu] Resolved: incident #7 of "
                                 "StatefulSet shop/web container app (oom_killed), 5 restarts "
                                 "from 14:50 to 15:00 UTC; the container has run ready for 10m0s "
                                 "in pod web-1."));
    assert_non_null(strstr(page, "2 messages"));
    assert_non_null(strstr(page, "<time datetime=\"2025-12-03T15:10:00Z\""));
    plain = krc_demo_term_render(sum, 0);
    assert_non_null(strstr(plain, "By cause: \xe2\x80\xa2 dependency_unreachable 9\n"));
    krc_free(plain);
    plain = krc_demo_term_render(recov, 0);
    assert_string_equal(plain,
                        "\xe2\x86\xb3 reply in a thread\n\xf0\x9f\x9f\xa2 [prod-eu] Resolved: "
                        "incident #7 of StatefulSet shop/web container app (oom_killed), 5 "
                        "restarts from 14:50 to 15:00 UTC; the container has run ready for "
                        "10m0s in pod web-1.\n");
    krc_free(plain);
    krc_free(page);
    krc_free(sum);
    krc_free(recov);
}

/* ---- mrkdwn ------------------------------------------------------------------------------ */

static void test_mrkdwn(void **state)
{
    const char *body =
        "{\"text\":\"*bold* _it_ ~st~ `co*de*` <https://x.example/a?b=1&amp;c=2|lbl> "
        ":red_circle: :nope: a_b_c 09:02:01 &lt;!here&gt; <!here> snake_case_word 2 * 3 "
        "_*both*_ ```pre *x*``` x*y*z <javascript:alert(1)|bad>\"}";
    char *page = page_of(body);
    char *plain = krc_demo_term_render(body, 0);

    (void)state;
    check_page(page);
    assert_non_null(strstr(page, "<b>bold</b> <i>it</i> <s>st</s> <code>co*de*</code> "
                                 "<a href=\"https://x.example/a?b=1&amp;c=2\" "
                                 "rel=\"noopener noreferrer nofollow\">lbl</a> "
                                 "<span class=\"emoji\" title=\":red_circle:\">"
                                 "\xf0\x9f\x94\xb4</span> :nope: a_b_c 09:02:01 &lt;!here&gt; "
                                 "<span class=\"mention\">@here</span> snake_case_word "
                                 "2 * 3 <i><b>both</b></i>"));
    assert_non_null(strstr(page, "<pre class=\"code\">pre *x*</pre> x*y*z "
                                 "&lt;javascript:alert(1)|bad&gt;"));
    assert_string_equal(plain, "bold it st co*de* lbl (https://x.example/a?b=1&c=2) "
                               "\xf0\x9f\x94\xb4 :nope: a_b_c 09:02:01 <!here> @here "
                               "snake_case_word 2 * 3 both \n    pre *x*\n x*y*z "
                               "<javascript:alert(1)|bad>\n");
    krc_free(plain);
    krc_free(page);
}

/* ---- untrusted payloads ------------------------------------------------------------------ */

static void test_escaping(void **state)
{
    const char *body =
        "{\"username\":\"<b>evil</b>\",\"icon_emoji\":\"\\\"><script>\","
        "\"attachments\":[{\"color\":\"red;background:url(http://x.example/)\",\"blocks\":["
        "{\"type\":\"header\",\"text\":{\"type\":\"plain_text\","
        "\"text\":\"<script>alert(1)</script>\"}},"
        "{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":\"```<img src=x "
        "onerror=alert(1)> \\\" ' \xff\xfe \xc0\xaf \xed\xa0\x80 end```\"},"
        "\"fields\":[{\"type\":\"mrkdwn\",\"text\":\"*a\\\"b*\\n</div><script>x</script>\"}]},"
        "{\"type\":\"context\",\"elements\":[{\"type\":\"mrkdwn\",\"text\":"
        "\"<https://ok.example/\\\"onmouseover=\\\"x|q\\\"uote> <data:text/html,x|d>\"}]},"
        "{\"type\":\"bogus<script>\"}]}]}";
    char *page = page_of(body);
    char *plain = krc_demo_term_render(body, 0);

    (void)state;
    check_page(page);
    assert_null(strstr(page, "<script"));
    assert_null(strstr(page, "<img"));
    assert_null(strstr(page, "<b>evil"));
    assert_null(strstr(page, "url("));
    assert_non_null(strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt; &quot; &#39; "
                                 "\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
                                 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end"));
    assert_non_null(strstr(page, "<span class=\"name\">&lt;b&gt;evil&lt;/b&gt;</span>"));
    assert_non_null(strstr(page, "border-left-color:#DDDDDD\""));
    assert_non_null(strstr(page, "<a href=\"https://ok.example/&quot;onmouseover=&quot;x\""));
    assert_non_null(strstr(page, "&lt;data:text/html,x|d&gt;"));
    assert_non_null(strstr(page, "unsupported block &quot;bogus&lt;script&gt;&quot;"));
    assert_non_null(strstr(plain, "| <script>alert(1)</script>\n"));
    check_plain(plain);
    krc_free(plain);
    krc_free(page);
}

static void test_terminal_escapes(void **state)
{
    const char *body = "{\"blocks\":[{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\","
                       "\"text\":\"a\\u001b[2J\\u001b]0;pwned\\u0007b\\r\\u007f \xc2\x9b"
                       "31m \xe2\x80\xae"
                       "evil \x1b[31m raw\\tt\"}},"
                       "{\"type\":\"header\",\"text\":{\"type\":\"plain_text\",\"text\":"
                       "\"\\u001b[1;31mRED\"}}]}";
    char *plain = krc_demo_term_render(body, 0);
    char *colour = krc_demo_term_render(body, 1);
    char *page = page_of(body);

    (void)state;
    check_plain(plain);
    check_colour(colour);
    check_page(page);
    assert_string_equal(plain, "a\xe2\x90\x9b[2J\xe2\x90\x9b]0;pwned\xe2\x90\x87"
                               "b\xe2\x90\x8d\xe2\x90\xa1 \xef\xbf\xbd"
                               "31m \xef\xbf\xbd"
                               "evil \xe2\x90\x9b[31m raw    t\n\xe2\x90\x9b[1;31mRED\n");
    assert_null(strstr(colour, "\x1b[2J"));
    assert_null(strstr(colour, "\x1b]"));
    assert_null(strstr(colour, "\x1b[31m"));
    assert_non_null(strstr(colour, "\x1b[0;1m\xe2\x90\x9b[1;31mRED\x1b[0m"));
    krc_free(page);
    krc_free(colour);
    krc_free(plain);
}

static void test_unknown_blocks(void **state)
{
    const char *body =
        "{\"blocks\":[{\"type\":\"rich_text\",\"elements\":[]},{\"type\":\"actions\"},"
        "{\"nope\":1},5,{\"type\":\"divider\"},{\"type\":\"image\",\"alt_text\":\"graph\","
        "\"image_url\":\"https://x.example/i.png\"},{\"type\":\"section\",\"text\":{\"type\":"
        "\"mrkdwn\",\"text\":\"after\"},\"accessory\":{\"type\":\"button\"}}]}";
    char *page = page_of(body);
    char *plain = krc_demo_term_render(body, 0);

    (void)state;
    check_page(page);
    assert_non_null(
        strstr(page, "<div class=\"note\">unsupported block &quot;rich_text&quot;</div>"));
    assert_non_null(strstr(page, "unsupported block &quot;actions&quot;"));
    assert_int_equal(count(page, "unsupported block without a type"), 2);
    assert_non_null(strstr(page, "<hr class=\"divider\">"));
    assert_non_null(strstr(page, "image not shown; alt text &quot;graph&quot;"));
    assert_null(strstr(page, "i.png"));
    assert_non_null(strstr(page, "<div class=\"section\">after</div>"));
    assert_non_null(strstr(page, "unsupported accessory &quot;button&quot;"));
    assert_non_null(strstr(plain, "[unsupported block \"rich_text\"]\n[unsupported block "
                                  "\"actions\"]\n"));
    assert_non_null(strstr(plain, "after\n[unsupported accessory \"button\"]\n"));
    krc_free(plain);
    krc_free(page);
}

static void test_invalid_bodies(void **state)
{
    const char *bad[] = {"{not json <script>", "[1,2]", "", "\"text\"", "{\"text\":5}", NULL};
    struct krc_demo_msg m[6] = {{NULL, 0, NULL}};
    char *page;
    size_t i;

    (void)state;
    for (i = 0; i < 6; i++) {
        m[i].body = bad[i];
        m[i].received_at = AT + (double)i;
    }
    page = krc_demo_html_render(m, 6, "<title>");
    assert_non_null(page);
    check_page(page);
    assert_int_equal(count(page, "could not parse this message"), 4);
    assert_non_null(strstr(page, "{not json &lt;script&gt;</pre>"));
    assert_non_null(strstr(page, "empty message: no text, blocks or attachments"));
    assert_non_null(strstr(page, "empty message: no body"));
    assert_non_null(strstr(page, "<title>&lt;title&gt;</title>"));
    for (i = 0; i < 6; i++) {
        char id[32];
        snprintf(id, sizeof(id), "id=\"m%zu\"", i + 1);
        assert_non_null(strstr(page, id));
    }
    for (i = 0; i < 6; i++) {
        char *t = krc_demo_term_render(bad[i], 0);
        assert_non_null(t);
        assert_non_null(strstr(t, i < 4 ? "could not parse" : "empty message"));
        krc_free(t);
    }
    krc_free(page);
    page = krc_demo_html_render(NULL, 0, NULL);
    check_page(page);
    assert_non_null(strstr(page, "no messages"));
    krc_free(page);
    /* an empty icon_emoji is no emoji (clang's analyser found it read as one, NULL) */
    m[0].body = "{\"icon_emoji\":\"\",\"text\":\"hi\"}";
    page = krc_demo_html_render(m, 1, NULL);
    check_page(page);
    assert_non_null(strstr(page, "<div class=\"avatar\">k</div>"));
    krc_free(page);
}

static void test_huge_bodies(void **state)
{
    size_t big = (size_t)KRC_DEMO_VIEW_MAX_BODY + 100;
    size_t under = (size_t)KRC_DEMO_VIEW_MAX_BODY - 100;
    char *body = malloc(big + 1);
    char *page;
    char *t;
    char note[128];

    (void)state;
    assert_non_null(body);
    /* too large: a note, not the text */
    memset(body, '<', big);
    memcpy(body, "{\"text\":\"", 9);
    memcpy(body + big - 2, "\"}", 2);
    body[big] = '\0';
    page = page_of(body);
    check_page(page);
    snprintf(note, sizeof(note), "its body is %zu bytes, over the %d-byte limit", big,
             KRC_DEMO_VIEW_MAX_BODY);
    assert_non_null(strstr(page, note));
    assert_true(strlen(page) < 20000);
    krc_free(page);
    t = krc_demo_term_render(body, 1);
    assert_non_null(strstr(t, note));
    krc_free(t);
    /* just under: shown whole, every '<' escaped, the output bounded */
    memcpy(body + under - 2, "\"}", 3);
    page = page_of(body);
    assert_int_equal(count(page, "&lt;"), under - 11);
    assert_true(strlen(page) < 5 * under);
    krc_free(page);
    /* every kind of marker on one line of ~1 MB: each byte is looked at a bounded number
     * of times (a quadratic scan would take minutes here, and ctest's timeout fails it) */
    for (size_t k = 9; k + 2 < under; k++) {
        body[k] = "`*_~<:&a `` ```"[k % 15];
    }
    memcpy(body + under - 2, "\"}", 3);
    page = page_of(body);
    check_page(page);
    krc_free(page);
    t = krc_demo_term_render(body, 1);
    check_colour(t);
    krc_free(t);
    free(body);
}

/* ---- the file ------------------------------------------------------------------------------ */

/* A message's note (the demo's own words, e.g. for a field demonstration) is
 * shown above its content, escaped; without one, nothing is added. */
static void test_note(void **state)
{
    struct krc_demo_msg m = {"{\"text\":\"hello\"}", AT, "composed <pod> & more"};
    char *page = krc_demo_html_render(&m, 1, "t");
    const char *note;

    (void)state;
    check_page(page);
    note = strstr(page, "<div class=\"note\">composed &lt;pod&gt; &amp; more</div>");
    assert_non_null(note);
    assert_non_null(strstr(note, "hello"));
    krc_free(page);
    m.note = NULL;
    page = krc_demo_html_render(&m, 1, "t");
    check_page(page);
    assert_null(strstr(page, "composed"));
    assert_null(strstr(page, "<div class=\"note\">"));
    krc_free(page);
}

static void test_write(void **state)
{
    char dir[] = "/tmp/krc-slack-view-XXXXXX";
    char path[128];
    char bad[160];
    struct krc_demo_msg m = {"{\"text\":\"hello *world*\"}", AT, NULL};
    struct krc_error err;
    char *want = krc_demo_html_render(&m, 1, "t");
    char *got;
    size_t len;
    DIR *d;
    struct dirent *de;
    int entries = 0;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/alerts.html", dir);
    assert_int_equal(krc_demo_html_write(path, &m, 1, "t", &err), 0);
    got = krc_test_read_file(path, &len);
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "hello <b>world</b>"));
    free(got);
    /* again over it: replaced, and no temporary file is left */
    assert_int_equal(krc_demo_html_write(path, &m, 1, "t", &err), 0);
    d = opendir(dir);
    while ((de = readdir(d)) != NULL) {
        entries += de->d_name[0] != '.';
    }
    closedir(d);
    assert_int_equal(entries, 1);
    snprintf(bad, sizeof(bad), "%s/missing/alerts.html", dir);
    assert_int_equal(krc_demo_html_write(bad, &m, 1, "t", &err), KRC_EIO);
    assert_non_null(strstr(err.msg, bad));
    assert_non_null(strstr(err.msg, "No such file"));
    unlink(path);
    rmdir(dir);
    krc_free(want);
}

/* Every allocation failure gives NULL or the whole page / terminal text, never a crash, a
 * part or a leak. */
struct alloc_run {
    const char *body;
    const struct krc_demo_msg *m;
    const char *full_page;
    const char *full_term;
};

static long render_failing_after(void *ud, long n)
{
    const struct alloc_run *a = ud;
    char *p;
    char *t;
    long used;

    krc_mem_fail_after(n);
    p = krc_demo_html_render(a->m, 1, "x");
    t = krc_demo_term_render(a->body, 1);
    used = krc_mem_fail_after(-1);
    if (p != NULL) {
        assert_string_equal(p, a->full_page);
    }
    if (t != NULL) {
        assert_string_equal(t, a->full_term);
    }
    krc_free(p);
    krc_free(t);
    return used;
}

static void test_allocation_failures(void **state)
{
    char *body = corpus_body("09-llama-finetune-cuda-oom", 1);
    struct krc_demo_msg m = {body, AT, NULL};
    char *full_page = krc_demo_html_render(&m, 1, "x");
    char *full_term = krc_demo_term_render(body, 1);
    struct alloc_run a = {body, &m, full_page, full_term};

    (void)state;
    assert_non_null(full_page);
    assert_non_null(full_term);
    assert_true(krc_test_alloc_sweep(render_failing_after, &a) > 1);
    krc_free(full_term);
    krc_free(full_page);
    krc_free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_liveness_details),
        cmocka_unit_test(test_summary_and_resolved),
        cmocka_unit_test(test_mrkdwn),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_terminal_escapes),
        cmocka_unit_test(test_unknown_blocks),
        cmocka_unit_test(test_invalid_bodies),
        cmocka_unit_test(test_huge_bodies),
        cmocka_unit_test(test_note),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_allocation_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
