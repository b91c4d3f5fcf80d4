/* linebuf: any bytes, fed in chunks whose sizes come from the first byte.
 * Each line handed out has no '\n', no trailing '\r', is not empty and is
 * at most max_line bytes; the lines joined with the dropped over-long ones
 * are exactly the input's non-empty lines, each over-long one reported
 * once; memory stays within max_line. */
#include <string.h>

#include "fuzz.h"
#include "krc/util/linebuf.h"

struct expect {
    const uint8_t *data;
    size_t size;
    size_t max;
    size_t pos; /* where the next expected line starts in data */
    size_t lines;
    size_t oversize; /* over-long lines in the input (reference framing) */
    size_t reported; /* on_oversize calls */
};

/* The next line of the input (reference framing), skipping empty ones and
 * counting over-long ones as dropped. Returns 1 with [*s, *s+*n), or 0. */
static int next_line(struct expect *x, const uint8_t **s, size_t *n)
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
        if (body > x->max) {
            x->oversize++;
            continue;
        }
        *s = p;
        *n = body;
        return 1;
    }
    return 0;
}

static int on_line(const char *line, size_t len, void *ud)
{
    struct expect *x = ud;
    const uint8_t *s;
    size_t n;

    FUZZ_CHECK(len > 0 && len <= x->max, "line of %zu bytes (max %zu)", len, x->max);
    FUZZ_CHECK(memchr(line, '\n', len) == NULL, "newline inside a line");
    FUZZ_CHECK(next_line(x, &s, &n), "extra line");
    FUZZ_CHECK(n == len && memcmp(s, line, n) == 0, "line %zu differs", x->lines);
    x->lines++;
    return 0;
}

static void on_oversize(size_t so_far, void *ud)
{
    struct expect *x = ud;
    FUZZ_CHECK(so_far > x->max, "oversize at %zu <= %zu", so_far, x->max);
    x->reported++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct krc_linebuf lb;
    struct expect x;
    size_t chunk;
    const uint8_t *s;
    size_t n;

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
    FUZZ_CHECK(!next_line(&x, &s, &n), "line missing after %zu lines", x.lines);
    FUZZ_CHECK(x.reported == x.oversize, "%zu over-long lines reported, %zu in the input",
               x.reported, x.oversize);
    krc_linebuf_cleanup(&lb);
    return 0;
}
