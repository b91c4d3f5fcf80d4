/* Newline framing for the watch stream, with a hard cap on line length.
 *
 * Bytes arrive in arbitrary chunks; every complete line is handed to a
 * callback once. Lines that lie entirely inside one chunk are passed straight
 * from the caller's data (no copy); only the unfinished tail of a chunk is
 * buffered. Each byte is examined once (memchr), so framing is linear in
 * the stream length whatever the chunking.
 *
 * A line longer than max_line bytes (not counting "\n" or "\r\n") is not
 * delivered: its first bytes (its head: at most KRC_LINEBUF_HEAD, and at
 * most max_line) are kept so that the caller can say what it was, the rest
 * is discarded up to the next newline without being buffered, and the line
 * is reported once to on_oversize when it ends. Memory stays bounded by
 * max_line + 1 bytes. Empty lines (also "\r\n" alone) are skipped. */
#ifndef KRC_LINEBUF_H
#define KRC_LINEBUF_H

#include <stddef.h>

/* Called for each complete line; `line` (not NUL-terminated, without the
 * line ending) is borrowed for the duration of the call. Return non-zero to
 * stop: krc_linebuf_feed() then returns that value at once, the rest of the
 * chunk is dropped and the buffer is reset (the stream is to be abandoned). */
typedef int (*krc_linebuf_line_cb)(const char *line, size_t len, void *userdata);
/* Largest head of an over-long line kept for on_oversize. */
#define KRC_LINEBUF_HEAD 65536

/* Called once per over-long line when it ends (at its newline, or at
 * krc_linebuf_finish for a last line without one): `head` (borrowed for the
 * call, not NUL-terminated) holds its first head_len bytes, and `size` is
 * the whole line's length before its newline (> max_line; a '\r' before the
 * newline is counted). head_len is smaller than min(KRC_LINEBUF_HEAD,
 * max_line) only when memory for the head could not be had. A line cut by
 * krc_linebuf_reset (a broken connection) is not reported. May be NULL. */
typedef void (*krc_linebuf_oversize_cb)(const char *head, size_t head_len, size_t size,
                                        void *userdata);

struct krc_linebuf {
    char *buf; /* partial line carried over between feeds */
    size_t len;
    size_t cap;
    size_t max_line;
    int discarding;  /* inside a dropped line: drop bytes until '\n' */
    int report;      /* the dropped line is over-long: report it when it ends */
    size_t overlong; /* bytes of the current dropped line seen so far */
    size_t head_len; /* while discarding: its head, kept in buf[0, head_len) */
};

/* Embedded init/cleanup. max_line >= 1. Never allocates; returns 0, or
 * KRC_EINVAL for max_line 0. */
int krc_linebuf_init(struct krc_linebuf *lb, size_t max_line);
void krc_linebuf_cleanup(struct krc_linebuf *lb);
/* Forget any partial line (new connection); keeps the allocation. */
void krc_linebuf_reset(struct krc_linebuf *lb);

/* Frame `len` bytes of `data`. Returns 0, the first non-zero value returned
 * by on_line, or KRC_ENOMEM when the partial-line buffer cannot grow; that
 * line is then lost (its bytes are dropped up to the next newline) and the
 * caller should treat the stream as broken. */
int krc_linebuf_feed(struct krc_linebuf *lb, const char *data, size_t len,
                     krc_linebuf_line_cb on_line, krc_linebuf_oversize_cb on_oversize,
                     void *userdata);

/* End of stream: deliver a final line that had no newline (or report it
 * to on_oversize when it is over-long), then reset. Returns 0 or on_line's
 * non-zero value. */
int krc_linebuf_finish(struct krc_linebuf *lb, krc_linebuf_line_cb on_line,
                       krc_linebuf_oversize_cb on_oversize, void *userdata);

/* Bytes of an unfinished line currently buffered. */
size_t krc_linebuf_pending(const struct krc_linebuf *lb);

#endif
