/* The HTML page of `krc demo`'s Slack messages: the channel's look (inline
 * CSS, nothing loaded), each message's bot line and time, its content by
 * the walker of slack_view.c, and the atomic write of the file. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/demo/slack_view.h"
#include "krc/demo/slack_view_internal.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"

#define PAGE_MAX ((size_t)512 * 1024 * 1024) /* the whole page (bodies are capped) */

/* ---- the page ------------------------------------------------------------------------------- */

static const char CSS[] =
    "*{box-sizing:border-box}"
    "body{margin:0;background:#fff;color:#1d1c1d;font:15px/1.46668 Lato,'Helvetica Neue',"
    "Helvetica,'Segoe UI',Arial,sans-serif;-webkit-font-smoothing:antialiased}"
    ".channel{max-width:960px;margin:0 auto}"
    ".chan-head{padding:14px 20px;border-bottom:1px solid #dddddd;font-weight:900;font-size:18px}"
    ".chan-head .sub{display:block;font-weight:400;font-size:13px;color:#616061}"
    ".msg{display:flex;padding:8px 20px 8px 20px}"
    ".msg:hover{background:#f8f8f8}"
    ".avatar{flex:0 0 36px;height:36px;margin-right:8px;border-radius:4px;background:#4a154b;"
    "color:#fff;font-weight:900;font-size:20px;line-height:36px;text-align:center}"
    ".avatar.emo{background:#f2f2f2}"
    ".mbody{flex:1 1 auto;min-width:0}"
    ".meta{line-height:22px}"
    ".name{font-weight:900;margin-right:4px}"
    ".app{display:inline-block;background:rgba(29,28,29,.13);color:rgba(29,28,29,.7);"
    "font-size:10px;font-weight:700;line-height:14px;padding:0 3px;border-radius:2px;"
    "margin-right:6px;vertical-align:1px}"
    "time{color:#616061;font-size:12px}"
    ".section,.header,.field,.context,.note,.thread{white-space:pre-wrap;"
    "overflow-wrap:anywhere}"
    ".header{font-size:18px;font-weight:900;line-height:1.33;margin:4px 0 6px}"
    ".section{margin:4px 0}"
    ".fields{display:grid;grid-template-columns:1fr 1fr;gap:8px 16px;margin:8px 0}"
    ".context{font-size:12px;color:#616061;margin:6px 0}"
    ".context span{margin-right:8px}"
    ".attachment{border-left:4px solid #dddddd;border-radius:4px 0 0 4px;padding:2px 0 2px 12px;"
    "margin:6px 0}"
    "pre.code{font:12px/1.50001 Monaco,Menlo,Consolas,'Courier New',monospace;"
    "background:#f8f8f8;border:1px solid #dddddd;border-radius:4px;padding:8px;margin:4px 0;"
    "white-space:pre-wrap;overflow-wrap:anywhere}"
    "code{font:12px Monaco,Menlo,Consolas,'Courier New',monospace;color:#e01e5a;"
    "background:rgba(29,28,29,.04);border:1px solid rgba(29,28,29,.13);border-radius:3px;"
    "padding:2px 3px 1px}"
    ".emoji{font-family:'Apple Color Emoji','Segoe UI Emoji','Noto Color Emoji',sans-serif;"
    "font-style:normal}"
    "a{color:#1264a3;text-decoration:none}"
    ".mention{color:#1264a3;background:rgba(29,155,209,.1);border-radius:3px;padding:0 2px}"
    ".note{color:#616061;font-style:italic;font-size:13px;border:1px dashed #dddddd;"
    "border-radius:4px;padding:4px 8px;margin:4px 0}"
    ".thread{color:#616061;font-size:12px}"
    ".reply{margin-left:44px;border-left:2px solid #dddddd}"
    "hr.divider{border:0;border-top:1px solid #dddddd;margin:8px 0}"
    "body:has(.msg:target) .msg:not(:target),body:has(.msg:target) .chan-head{display:none}"
    ".msg:target{background:#fff}";

static void page_head(struct view *v, const char *title, size_t n)
{
    char count[64];

    krc_view_raw(
        v, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "style-src 'unsafe-inline'\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    krc_view_text_str(v, title);
    krc_view_raw(v, "</title>\n<style>");
    krc_view_raw(v, CSS);
    krc_view_raw(v,
                 "</style>\n</head>\n<body>\n<div class=\"channel\">\n<div class=\"chan-head\">");
    krc_view_text_str(v, title);
    snprintf(count, sizeof(count), "%zu message%s", n, n == 1 ? "" : "s");
    krc_view_raw(v, "<span class=\"sub\">");
    krc_view_text_str(v, count);
    krc_view_text_str(v,
                      " as the Slack-compatible endpoint received them, shown the way Slack shows "
                      "them (times in UTC)");
    krc_view_raw(v, "</span></div>\n");
}

/* Bot name, APP badge and time. */
static void message_meta(struct view *v, const cJSON *root, double at)
{
    const char *user = root != NULL ? krc_view_str_of(root, "username") : NULL;
    const char *icon = root != NULL ? krc_view_str_of(root, "icon_emoji") : NULL;
    const char *utf8 = NULL;
    char stamp[64];
    char shown[16];
    struct tm tm;
    time_t t = isfinite(at) && at > 0 && at < 253402300800.0 ? (time_t)at : 0;

    if (icon != NULL && krc_view_emoji_at(icon, strlen(icon), &utf8) == strlen(icon) &&
        utf8 != NULL) {
        krc_view_raw(v, "<div class=\"avatar emo\"><span class=\"emoji\">");
        krc_view_raw(v, utf8);
        krc_view_raw(v, "</span></div>");
    } else {
        krc_view_raw(v, "<div class=\"avatar\">k</div>");
    }
    krc_view_raw(v, "<div class=\"mbody\"><div class=\"meta\"><span class=\"name\">");
    krc_view_text_str(v, user != NULL && user[0] != '\0' ? user : "krc");
    krc_view_raw(v, "</span><span class=\"app\">APP</span>");
    if (t != 0 && gmtime_r(&t, &tm) != NULL) {
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
        strftime(shown, sizeof(shown), "%H:%M:%S", &tm);
        krc_view_raw(v, "<time datetime=\"");
        krc_view_raw(v, stamp);
        krc_view_raw(v, "\" title=\"");
        krc_view_raw(v, stamp);
        krc_view_raw(v, "\">");
        krc_view_raw(v, shown);
        krc_view_raw(v, "</time>");
    }
    krc_view_raw(v, "</div>\n");
}

static void page_message(struct view *v, const struct krc_demo_msg *m, size_t i)
{
    char id[40];
    size_t mark = v->b->len;
    cJSON *root = NULL;
    int reply;

    if (m->body != NULL && strlen(m->body) <= KRC_DEMO_VIEW_MAX_BODY) {
        root = cJSON_ParseWithLength(m->body, strlen(m->body));
    }
    reply = cJSON_IsObject(root) && krc_view_str_of(root, "thread_ts") != NULL;
    snprintf(id, sizeof(id), "<div class=\"msg%s\" id=\"m%zu\">", reply ? " reply" : "", i + 1);
    krc_view_raw(v, id);
    message_meta(v, cJSON_IsObject(root) ? root : NULL, m->received_at);
    if (m->note != NULL) {
        krc_view_raw(v, "<div class=\"note\">");
        krc_view_text_str(v, m->note);
        krc_view_raw(v, "</div>");
    }
    if (cJSON_IsObject(root)) {
        krc_view_message_content(v, root);
    } else {
        cJSON_Delete(krc_view_parse_body(v, m->body));
    }
    krc_view_raw(v, "</div></div>\n");
    cJSON_Delete(root);
    if (v->rc == KRC_ETOOBIG && mark < v->b->len) {
        /* this message does not fit: say so in its place */
        v->b->len = mark;
        v->b->data[mark] = '\0';
        v->rc = 0;
        snprintf(id, sizeof(id), "<div class=\"msg\" id=\"m%zu\">", i + 1);
        krc_view_raw(v, id);
        krc_view_raw(v,
                     "<div class=\"note\">message not shown: the page is too large</div></div>\n");
    }
}

char *krc_demo_html_render(const struct krc_demo_msg *msgs, size_t n, const char *title)
{
    struct krc_buf b;
    struct view v = {&b, 1, 0, 0, 0, NULL, NULL, 0};
    size_t i;

    krc_buf_init(&b, PAGE_MAX);
    page_head(&v, title != NULL ? title : "krc demo", n);
    for (i = 0; i < n && v.rc == 0; i++) {
        page_message(&v, &msgs[i], i);
    }
    if (n == 0) {
        krc_view_raw(&v, "<div class=\"msg\"><div class=\"note\">no messages</div></div>\n");
    }
    krc_view_raw(&v, "</div>\n</body>\n</html>\n");
    if (v.rc != 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    return krc_buf_take(&b);
}

static int write_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        s += w;
        len -= (size_t)w;
    }
    return 0;
}

int krc_demo_html_write(const char *path, const struct krc_demo_msg *msgs, size_t n,
                        const char *title, struct krc_error *err)
{
    char *page = krc_demo_html_render(msgs, n, title);
    struct krc_buf tmp;
    int fd = -1;
    int rc = 0;

    if (page == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "%s: out of memory rendering the page", path);
    }
    krc_buf_init(&tmp, 8192);
    if (krc_buf_printf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
        krc_free(page);
        return krc_error_set(err, KRC_ENOMEM, "%s: out of memory", path);
    }
    fd = mkstemp(tmp.data);
    if (fd < 0) {
        rc = krc_error_set(err, KRC_EIO, "%s: cannot create a file next to it: %s", path,
                           KRC_ERRNO_STR(errno));
    } else if (write_all(fd, page, strlen(page)) < 0) {
        rc = krc_error_set(err, KRC_EIO, "%s: write: %s", path, KRC_ERRNO_STR(errno));
    }
    if (fd >= 0 && close(fd) < 0 && rc == 0) {
        rc = krc_error_set(err, KRC_EIO, "%s: write: %s", path, KRC_ERRNO_STR(errno));
    }
    if (fd >= 0 && rc == 0 && rename(tmp.data, path) < 0) {
        rc = krc_error_set(err, KRC_EIO, "%s: %s", path, KRC_ERRNO_STR(errno));
    }
    if (fd >= 0 && rc != 0) {
        unlink(tmp.data);
    }
    krc_buf_cleanup(&tmp);
    krc_free(page);
    return rc;
}
