/* list_framer: a LIST body in chunks (sizes from the first byte). Every
 * item handed out is one complete JSON value (checked with jscan); every
 * item skipped is over max_item, with its head; the same body fed in one
 * piece gives the same items, the same skips and the same verdict; the
 * framer never keeps more than max_item bytes of one item. */
#include <string.h>

#include "fuzz.h"
#include "krc/kube/list_framer.h"
#include "krc/util/jscan.h"

struct items {
    size_t n;
    unsigned long long hash;
    size_t max;
    size_t skipped;
    size_t next_index; /* items and skips so far */
};

static int on_item(const char *json, size_t len, void *ud)
{
    struct items *it = ud;
    struct krc_jscan s;
    struct krc_error err;

    FUZZ_CHECK(len <= it->max, "item of %zu bytes (max %zu)", len, it->max);
    krc_jscan_init(&s, json, len, "item");
    FUZZ_CHECK(krc_jscan_skip(&s, NULL, &err) > 0 && krc_jscan_end(&s, &err) == 0,
               "item %zu is not JSON: %s", it->n, err.msg);
    for (size_t i = 0; i < len; i++) {
        it->hash = it->hash * 1099511628211ull + (unsigned char)json[i];
    }
    it->hash = it->hash * 31 + len;
    it->n++;
    it->next_index++;
    return 0;
}

static void on_skip(size_t index, const char *head, size_t head_len, size_t size, void *ud)
{
    struct items *it = ud;
    size_t want = it->max < KRC_LIST_FRAMER_HEAD ? it->max : KRC_LIST_FRAMER_HEAD;

    FUZZ_CHECK(size > it->max, "item of %zu bytes skipped (max %zu)", size, it->max);
    FUZZ_CHECK(head_len == want && head[0] == '{', "head of %zu bytes, want %zu", head_len, want);
    FUZZ_CHECK(index == it->next_index, "skipped index %zu, expected %zu", index, it->next_index);
    it->hash = it->hash * 1099511628211ull + size;
    it->skipped++;
    it->next_index++;
}

static int frame(const uint8_t *body, size_t size, size_t chunk, size_t max, struct items *it,
                 struct krc_list_framer *lf)
{
    struct krc_error err;
    int rc = 0;

    memset(it, 0, sizeof(*it));
    it->max = max;
    for (size_t off = 0; off < size && rc == 0; off += chunk) {
        size_t k = size - off < chunk ? size - off : chunk;
        rc = krc_list_framer_feed(lf, (const char *)body + off, k, on_item, it, &err);
    }
    if (rc == 0) {
        rc = krc_list_framer_finish(lf, &err);
    }
    FUZZ_CHECK(rc <= 0, "framer returned %d", rc);
    FUZZ_CHECK(krc_list_framer_item_count(lf) == it->n, "count %zu, items %zu",
               krc_list_framer_item_count(lf), it->n);
    FUZZ_CHECK(krc_list_framer_skipped_count(lf) == it->skipped, "skipped %zu, callbacks %zu",
               krc_list_framer_skipped_count(lf), it->skipped);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct krc_list_framer lf;
    struct items a;
    struct items b;
    size_t max;
    size_t chunk;
    int ra;
    int rb;

    if (size < 2) {
        return 0;
    }
    max = 16 + (size_t)data[0] * 64;
    chunk = 1 + data[1] % 32;
    if (krc_list_framer_init(&lf, max) != 0) {
        abort();
    }
    krc_list_framer_set_skip(&lf, on_skip);
    ra = frame(data + 2, size - 2, chunk, max, &a, &lf);
    krc_list_framer_reset(&lf);
    rb = frame(data + 2, size - 2, size, max, &b, &lf);
    FUZZ_CHECK(ra == rb, "chunked %d, whole %d", ra, rb);
    FUZZ_CHECK(a.n == b.n && a.skipped == b.skipped && a.hash == b.hash,
               "chunked and whole framing gave other items");
    if (ra == 0) {
        const char *rv = krc_list_framer_resource_version(&lf);
        const char *kind = krc_list_framer_kind(&lf);
        FUZZ_CHECK(rv == NULL || strlen(rv) <= size, "resourceVersion");
        FUZZ_CHECK(kind == NULL || strlen(kind) <= size, "kind");
    }
    krc_list_framer_cleanup(&lf);
    return 0;
}
