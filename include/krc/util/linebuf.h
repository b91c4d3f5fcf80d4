/* Newline framing for the watch stream, with a hard cap on line length.
 *
 * Bytes arrive in arbitrary chunks; every complete line is handed to a
 * callback once. Lines that lie entirely inside one chunk are passed straight
 * from the caller's data (no copy); only the unfinished tail of a chunk is
 * buffered. Each byte is examined once (memchr), so framing is linear in
 * the stream length whatever the chunking.
 *
 * A line longer than max_line bytes (not counting "\n" or "\r\n") is
 * reported once to on_oversize and its remaining bytes are discarded up to
 * the next newline without being buffered: memory stays bounded by
 * max_line + 1 bytes. Empty lines (also "\r\n" alone) are skipped. */
#ifndef KRC_LINEBUF_H
#define KRC_LINEBUF_H

#include <stddef.h>

/* Called for each complete line; `line` (not NUL-terminated, without the
 * line ending) is borrowed for the duration of the call. Return non-zero to
 * stop: krc_linebuf_feed() then returns that value at once, the rest of the
 * chunk is dropped and the buffer is reset (the stream is to be abandoned). */
typedef int (*krc_linebuf_line_cb)(const char *line, size_t len, void *userdata);
/* Called once per over-long line with the number of bytes seen so far
 * (> max_line). May be NULL. */
typedef void (*krc_linebuf_oversize_cb)(size_t size_so_far, void *userdata);

struct krc_linebuf {
    char *buf; /* partial line carried over between feeds */
    size_t len;
    size_t cap;
    size_t max_line;
    int discarding;  /* inside an over-long line: drop bytes until '\n' */
    size_t overlong; /* bytes of the current over-long line seen so far */
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

/* End of stream: deliver a final line that had no newline, then reset.
 * Returns 0 or on_line's non-zero value. */
int krc_linebuf_finish(struct krc_linebuf *lb, krc_linebuf_line_cb on_line,
                       krc_linebuf_oversize_cb on_oversize, void *userdata);

/* Bytes of an unfinished line currently buffered. */
size_t krc_linebuf_pending(const struct krc_linebuf *lb);

#endif
