/* Views of the Slack messages `krc demo` receives: the terminal text of one
 * message as it arrives, and a static HTML page of all of them laid out the
 * way Slack shows them (bot name and time, the text, the attachment's colour
 * bar, header, sections, fields in two columns, small grey context, code
 * blocks, mrkdwn *bold* _italic_ ~strike~ `code` <url|label>, emoji).
 *
 * The input is a raw POST body as krc's Slack sinks send it (Block Kit
 * `blocks`, or `attachments` with a colour and blocks, `text`, `thread_ts`),
 * and every byte of it is untrusted (log lines):
 *   - HTML: everything from the payload is escaped (& < > " '), invalid UTF-8
 *     becomes U+FFFD, control characters become visible symbols, links keep
 *     only http(s)/mailto targets, colours must be #hex; the page is
 *     self-contained (inline CSS, no script, nothing loaded: a
 *     Content-Security-Policy of default-src 'none' says so to the browser);
 *   - terminal: control characters (ESC among them) and C1 / bidi controls
 *     are shown as visible symbols, so no log line can move the cursor,
 *     retitle the terminal or change colours.
 * A body that is not JSON, not an object or larger than
 * KRC_DEMO_VIEW_MAX_BODY is shown as a visible "could not parse" /
 * "too large" entry; a block type the view does not know is shown as an
 * "unsupported block" note, never dropped. */
#ifndef KRC_DEMO_SLACK_VIEW_H
#define KRC_DEMO_SLACK_VIEW_H

#include <stddef.h>

#include "krc/util/error.h"

#define KRC_DEMO_VIEW_MAX_BODY (1024 * 1024) /* a larger body is not rendered */

/* One message as a Slack-compatible endpoint received it. */
struct krc_demo_msg {
    const char *body;   /* raw JSON POST body (Block Kit payload or attachments) */
    double received_at; /* unix seconds */
    const char *note;   /* the demo's own words shown above the message, or NULL */
};

/* Terminal text for one message (ANSI colours when `colour`), caller frees
 * with krc_free. NULL only when memory runs out. */
char *krc_demo_term_render(const char *body, int colour);

/* A self-contained static HTML page rendering every message the way Slack
 * shows it, written to `path` (a temporary file in the same folder renamed
 * over it, so a reader never sees half a page). Message i has the element id
 * "m<i+1>"; opening the page with the fragment #m<i+1> shows that message
 * alone. 0, or KRC_EIO (err names the path) / KRC_ENOMEM. */
int krc_demo_html_write(const char *path, const struct krc_demo_msg *msgs, size_t n,
                        const char *title, struct krc_error *err);

/* The page as a string (what krc_demo_html_write writes); caller frees with
 * krc_free. NULL only when memory runs out. */
char *krc_demo_html_render(const struct krc_demo_msg *msgs, size_t n, const char *title);

#endif
