/* The Slack message walker's state and the parts of it the HTML page
 * (slack_view_page.c) uses; private to src/demo/slack_view*.c. */
#ifndef KRC_DEMO_SLACK_VIEW_INTERNAL_H
#define KRC_DEMO_SLACK_VIEW_INTERNAL_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "krc/util/buf.h"

struct view {
    struct krc_buf *b;
    int html;          /* else terminal text */
    int colour;        /* terminal: ANSI escapes */
    int rc;            /* first append error */
    unsigned style;    /* terminal: styles in effect */
    const char *bar;   /* terminal: the left marker of an attachment, or NULL */
    const char *inset; /* terminal: after the marker ("    " in a code block) */
    int bol;           /* terminal: at the beginning of a line */
};

/* Append s as it is (markup); the first error stays in v->rc. */
void krc_view_raw(struct view *v, const char *s);
/* Append untrusted text, escaped for the output (HTML or terminal). */
void krc_view_text_str(struct view *v, const char *s);
/* The string member `key` of o, or NULL. */
const char *krc_view_str_of(const cJSON *o, const char *key);
/* ":name:" at s[0]: its length when the name is known (*ret set), else 0. */
size_t krc_view_emoji_at(const char *s, size_t len, const char **ret);
/* The content of one message (no bot line): text, blocks, attachments. */
void krc_view_message_content(struct view *v, const cJSON *root);
/* Parse a body, or say visibly why not; NULL when it is not shown. */
cJSON *krc_view_parse_body(struct view *v, const char *body);

#endif
