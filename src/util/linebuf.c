#include "krc/util/linebuf.h"

#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

int krc_linebuf_init(struct krc_linebuf *lb, size_t max_line)
{
    memset(lb, 0, sizeof(*lb));
    if (max_line == 0 || max_line == (size_t)-1) {
        return KRC_EINVAL;
    }
    lb->max_line = max_line;
    return 0;
}

void krc_linebuf_cleanup(struct krc_linebuf *lb)
{
    if (lb == NULL) {
        return;
    }
    krc_free(lb->buf);
    lb->buf = NULL;
    lb->len = 0;
    lb->cap = 0;
    lb->discarding = 0;
    lb->report = 0;
    lb->overlong = 0;
    lb->head_len = 0;
}

void krc_linebuf_reset(struct krc_linebuf *lb)
{
    lb->len = 0;
    lb->discarding = 0;
    lb->report = 0;
    lb->overlong = 0;
    lb->head_len = 0;
}

size_t krc_linebuf_pending(const struct krc_linebuf *lb)
{
    return lb->len;
}

/* Room for `need` bytes in buf (need <= max_line + 1). */
static int reserve(struct krc_linebuf *lb, size_t need)
{
    if (lb->cap < need) {
        size_t cap = lb->cap ? lb->cap : 4096;
        char *nb;

        while (cap < need) {
            cap *= 2;
        }
        if (cap > lb->max_line + 1) {
            cap = lb->max_line + 1;
        }
        nb = krc_realloc(lb->buf, cap);
        if (nb == NULL) {
            return KRC_ENOMEM;
        }
        lb->buf = nb;
        lb->cap = cap;
    }
    return 0;
}

/* Append to the partial line; the caller has checked the cap. */
static int append(struct krc_linebuf *lb, const char *data, size_t n)
{
    if (reserve(lb, lb->len + n) < 0) {
        return KRC_ENOMEM;
    }
    memcpy(lb->buf + lb->len, data, n);
    lb->len += n;
    return 0;
}

static size_t head_max(const struct krc_linebuf *lb)
{
    return lb->max_line < KRC_LINEBUF_HEAD ? lb->max_line : KRC_LINEBUF_HEAD;
}

/* The line buffered so far (buf[0, len)) followed by seg[0, n) is over-long:
 * keep its head in buf[0, head_len) and drop the rest. Without memory for
 * the head, what is already buffered is all the head there is. */
static void keep_head(struct krc_linebuf *lb, const char *seg, size_t n)
{
    size_t h = head_max(lb);

    if (lb->len < h && reserve(lb, h) == 0) {
        size_t more = h - lb->len < n ? h - lb->len : n;
        memcpy(lb->buf + lb->len, seg, more);
        lb->len += more;
    }
    lb->head_len = lb->len < h ? lb->len : h;
    lb->len = 0;
}

/* An over-long line of `size` bytes ended: report it with its head and
 * forget it. */
static void report_oversize(struct krc_linebuf *lb, size_t size,
                            krc_linebuf_oversize_cb on_oversize, void *userdata)
{
    size_t head_len = lb->head_len;

    lb->head_len = 0;
    lb->discarding = 0;
    lb->report = 0;
    lb->overlong = 0;
    if (on_oversize != NULL) {
        on_oversize(lb->buf, head_len, size, userdata);
    }
}

/* Deliver one complete line (ending removed); 0 or the callback's value. */
static int deliver(struct krc_linebuf *lb, const char *line, size_t n, krc_linebuf_line_cb on_line,
                   krc_linebuf_oversize_cb on_oversize, void *userdata)
{
    size_t size = n;
    int rc;

    if (n > 0 && line[n - 1] == '\r') {
        n--;
    }
    if (n > lb->max_line) {
        /* max_line + 1 bytes without a '\r': the whole line is at hand */
        lb->len = 0;
        if (on_oversize != NULL) {
            on_oversize(line, n < head_max(lb) ? n : head_max(lb), size, userdata);
        }
        return 0;
    }
    if (n == 0) {
        lb->len = 0;
        return 0;
    }
    rc = on_line(line, n, userdata);
    lb->len = 0;
    if (rc != 0) {
        krc_linebuf_reset(lb);
    }
    return rc;
}

int krc_linebuf_feed(struct krc_linebuf *lb, const char *data, size_t len,
                     krc_linebuf_line_cb on_line, krc_linebuf_oversize_cb on_oversize,
                     void *userdata)
{
    const char *p = data;
    const char *end = data + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t seg = (size_t)((nl != NULL ? nl : end) - p);
        int rc;

        if (lb->discarding) {
            lb->overlong += seg;
            if (nl == NULL) {
                return 0;
            }
            if (lb->report) {
                report_oversize(lb, lb->overlong, on_oversize, userdata);
            }
            lb->discarding = 0;
            lb->overlong = 0;
            p = nl + 1;
            continue;
        }
        /* max_line + 1 leaves room for a '\r' before the newline */
        if (seg > lb->max_line + 1 - lb->len) {
            size_t seen = lb->len + seg;
            keep_head(lb, p, seg);
            if (nl == NULL) {
                lb->discarding = 1;
                lb->report = 1;
                lb->overlong = seen;
                return 0;
            }
            report_oversize(lb, seen, on_oversize, userdata);
            p = nl + 1;
            continue;
        }
        if (nl == NULL) {
            rc = append(lb, p, seg);
            if (rc < 0) {
                /* the line is lost: dropped up to its newline, not reported */
                lb->len = 0;
                lb->discarding = 1;
                lb->report = 0;
                lb->overlong = seg;
                return rc;
            }
            return 0;
        }
        if (lb->len == 0) {
            rc = deliver(lb, p, seg, on_line, on_oversize, userdata);
        } else {
            rc = append(lb, p, seg);
            if (rc < 0) {
                lb->len = 0;
                return rc; /* the line is lost; the rest of the chunk too */
            }
            rc = deliver(lb, lb->buf, lb->len, on_line, on_oversize, userdata);
        }
        if (rc != 0) {
            return rc;
        }
        p = nl + 1;
    }
    return 0;
}

int krc_linebuf_finish(struct krc_linebuf *lb, krc_linebuf_line_cb on_line,
                       krc_linebuf_oversize_cb on_oversize, void *userdata)
{
    int rc = 0;

    if (lb->discarding && lb->report) {
        report_oversize(lb, lb->overlong, on_oversize, userdata);
    } else if (!lb->discarding && lb->len > 0) {
        rc = deliver(lb, lb->buf, lb->len, on_line, on_oversize, userdata);
    }
    krc_linebuf_reset(lb);
    return rc;
}
