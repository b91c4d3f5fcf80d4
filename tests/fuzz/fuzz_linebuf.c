/* linebuf: any bytes, fed in chunks whose sizes come from the first byte.
 * Each line handed out has no '\n', no trailing '\r', is not empty and is
 * at most max_line bytes; the lines joined with the dropped over-long ones
 * are exactly the input's non-empty lines, each over-long one reported
 * once, in order, with its size and head; memory stays within max_line. */
#include <string.h>

#include "fuzz.h"
#include "krc/util/linebuf.h"

struct expect {
    const uint8_t *data;
    size_t size;
    size_t max;
    size_t pos;   /* where the next expected line starts in data */
    size_t lines; /* lines delivered or reported so far */
};

/* The next non-empty line of the input (reference framing): 1 with
 * [*s, *s+*n) (the line ending removed) and *size (its bytes before the
 * newline, a '\r' included), or 0 at the end. */
static int next_line(struct expect *x, const uint8_t **s, size_t *n, size_t *size)
{
    while (x->pos < x->size) {
        const uint8_t *p = x->data + x->pos;
        const uint8_t *nl = memchr(p, '\n', x->size - x->pos);
        size_t len = nl != NULL ? (size_t)(nl - p) : x->size - x->pos;
        size_t body = len > 0 && p[len - 1] == '\r' ? len - 1 : len;
        x->pos += len + (nl != NULL);
        if (body == 0) {
            continue;
        }
        *s = p;
        *n = body;
        *size = len;
        return 1;
    }
    return 0;
}

static int on_line(const char *line, size_t len, void *ud)
{
    struct expect *x = ud;
    const uint8_t *s;
    size_t n;
    size_t size;

    FUZZ_CHECK(len > 0 && len <= x->max, "line of %zu bytes (max %zu)", len, x->max);
    FUZZ_CHECK(memchr(line, '\n', len) == NULL, "newline inside a line");
    FUZZ_CHECK(next_line(x, &s, &n, &size), "extra line");
    FUZZ_CHECK(n <= x->max, "line %zu (%zu bytes) delivered instead of reported", x->lines, n);
    FUZZ_CHECK(n == len && memcmp(s, line, n) == 0, "line %zu differs", x->lines);
    x->lines++;
    return 0;
}

static void on_oversize(const char *head, size_t head_len, size_t size, void *ud)
{
    struct expect *x = ud;
    size_t want = x->max < KRC_LINEBUF_HEAD ? x->max : KRC_LINEBUF_HEAD;
    const uint8_t *s;
    size_t n;
    size_t ref_size;

    FUZZ_CHECK(next_line(x, &s, &n, &ref_size), "extra over-long line");
    FUZZ_CHECK(n > x->max, "line %zu of %zu bytes reported as over-long", x->lines, n);
    FUZZ_CHECK(size == ref_size, "over-long line of %zu bytes reported as %zu", ref_size, size);
    FUZZ_CHECK(head_len == want && memcmp(head, s, want) == 0, "head of line %zu differs",
               x->lines);
    x->lines++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct krc_linebuf lb;
    struct expect x;
    size_t chunk;
    const uint8_t *s;
    size_t n;
    size_t line_size;

    if (size < 2) {
        return 0;
    }
    memset(&x, 0, sizeof(x));
    x.max = 1 + data[0] % 64;
    chunk = 1 + data[1] % 16;
    x.data = data + 2;
    x.size = size - 2;
    if (krc_linebuf_init(&lb, x.max) != 0) {
        abort();
    }
    for (size_t off = 0; off < x.size; off += chunk) {
        size_t k = x.size - off < chunk ? x.size - off : chunk;
        FUZZ_CHECK(krc_linebuf_feed(&lb, (const char *)x.data + off, k, on_line, on_oversize, &x) ==
                       0,
                   "feed failed");
        FUZZ_CHECK(krc_linebuf_pending(&lb) <= x.max + 1, "%zu bytes buffered",
                   krc_linebuf_pending(&lb));
    }
    FUZZ_CHECK(krc_linebuf_finish(&lb, on_line, on_oversize, &x) == 0, "finish failed");
    FUZZ_CHECK(!next_line(&x, &s, &n, &line_size), "line missing after %zu lines", x.lines);
    krc_linebuf_cleanup(&lb);
    return 0;
}
