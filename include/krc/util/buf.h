/* Growable byte/string buffer with a hard maximum (like curl's dynbuf).
 * The content is always NUL-terminated after a successful append. */
#ifndef KRC_BUF_H
#define KRC_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct krc_buf {
    char *data; /* NULL until the first append */
    size_t len; /* bytes used, excluding the terminating NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* hard limit on len */
};

/* Embedded init/cleanup. `max` is the largest length the buffer may reach. */
void krc_buf_init(struct krc_buf *b, size_t max);
void krc_buf_cleanup(struct krc_buf *b);
/* Forget the content, keep the allocation. */
void krc_buf_reset(struct krc_buf *b);

/* Append; KRC_ETOOBIG when max would be exceeded (buffer unchanged),
 * KRC_ENOMEM on allocation failure. */
int krc_buf_append(struct krc_buf *b, const void *data, size_t len);
int krc_buf_append_str(struct krc_buf *b, const char *s);
int krc_buf_append_char(struct krc_buf *b, char c);
int krc_buf_printf(struct krc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int krc_buf_vprintf(struct krc_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Append s as the inside of a JSON string (escaped, without quotes). */
int krc_buf_append_json_str(struct krc_buf *b, const char *s, size_t len);

/* Remove the first n bytes. */
void krc_buf_consume(struct krc_buf *b, size_t n);

/* Hand the string out; the caller frees it with krc_free. Returns an empty
 * allocated string when the buffer is empty, NULL on allocation failure.
 * The buffer is left empty. */
char *krc_buf_take(struct krc_buf *b);

/* Borrowed, NUL-terminated view ("" when empty). */
const char *krc_buf_str(const struct krc_buf *b);

#endif
