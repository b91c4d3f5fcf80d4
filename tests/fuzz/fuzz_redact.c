/* redact: any bytes (logs, messages) through the built-in scanners plus two
 * text patterns. No redaction means an unchanged copy; a second pass over
 * the output changes nothing (a redacted text stays as it is, see
 * test_redact); and the output is never longer than the input plus one
 * mark per redaction. */
#include <string.h>

#include "fuzz.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct krc_redactor *rd;
    static const char *const extra[] = {"secret-[a-z]{4}", "pin:\\d{4,}"};
    struct krc_buf a;
    struct krc_buf b;
    struct krc_error err;
    int n;
    int m;

    if (rd == NULL && krc_redact_new(extra, 2, &rd, &err) != 0) {
        fprintf(stderr, "redact: %s\n", err.msg);
        abort();
    }
    krc_buf_init(&a, 1u << 24);
    krc_buf_init(&b, 1u << 24);
    n = krc_redact_apply(rd, data, size, &a, &err);
    FUZZ_CHECK(n >= 0, "redact failed: %d", n);
    if (n == 0) {
        FUZZ_CHECK(a.len == size && (size == 0 || memcmp(a.data, data, size) == 0),
                   "no redaction but the copy differs");
    }
    FUZZ_CHECK(a.len <= size + (size_t)n * sizeof(KRC_REDACT_MARK), "%zu bytes from %zu, %d marks",
               a.len, size, n);
    m = krc_redact_apply(rd, a.data, a.len, &b, &err);
    FUZZ_CHECK(m >= 0, "second pass failed: %d", m);
    FUZZ_CHECK(b.len == a.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0),
               "a second pass changed the text (%d more redactions)", m);
    krc_buf_cleanup(&a);
    krc_buf_cleanup(&b);
    return 0;
}
