/* RFC 3339 parsing (util/clock.c): the first byte picks the flags of
 * krc_clock_scan_rfc3339; the rest is the text. A scan never claims more
 * than the input, agrees with krc_parse_rfc3339 on the whole text, puts the
 * zone index inside the time, and a parsed time formats back to a text that
 * parses to the same second. */
#include <string.h>

#include "fuzz.h"
#include "krc/util/clock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s;
    size_t len;
    unsigned flags;
    int64_t t = 0;
    int64_t t2 = 0;
    size_t zone = 0;
    size_t n;
    char *copy;

    if (size < 1) {
        return 0;
    }
    flags = data[0] & 3u;
    len = size - 1;
    copy = malloc(len > 0 ? len : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data + 1, len);
    s = copy;
    n = krc_clock_scan_rfc3339(s, len, flags, &t, &zone);
    FUZZ_CHECK(n <= len, "scanned %zu of %zu bytes", n, len);
    if (n > 0) {
        FUZZ_CHECK(zone < n, "zone index %zu outside the time of %zu bytes", zone, n);
        FUZZ_CHECK(s[zone] == 'Z' || s[zone] == 'z' || s[zone] == '+' || s[zone] == '-',
                   "zone index at '%c'", s[zone]);
        if (!(flags & KRC_CLOCK_RFC3339_PREFIX)) {
            FUZZ_CHECK(n == len, "whole-text scan took %zu of %zu", n, len);
        }
        /* the same time alone parses to the same second */
        FUZZ_CHECK(krc_clock_scan_rfc3339(s, n, flags & ~KRC_CLOCK_RFC3339_PREFIX, &t2, NULL) == n,
                   "the time alone does not scan");
        FUZZ_CHECK(t2 == t, "%lld alone, %lld in the text", (long long)t2, (long long)t);
        /* years 0001..9998: the formatter's range */
        if (t >= -62135596800LL && t < 253370764800LL) {
            char out[64];
            krc_clock_format_rfc3339(t, out, sizeof(out));
            FUZZ_CHECK(krc_parse_rfc3339(out, strlen(out), &t2) == 0, "formatted %s", out);
            FUZZ_CHECK(t2 == t, "%s parses to %lld, not %lld", out, (long long)t2, (long long)t);
        }
    }
    if (!(flags & KRC_CLOCK_RFC3339_KUBELET)) {
        int rc = krc_parse_rfc3339(s, len, &t2);
        size_t whole = krc_clock_scan_rfc3339(s, len, 0, &t, NULL);
        FUZZ_CHECK((rc == 0) == (whole > 0), "parse %d, scan %zu", rc, whole);
        FUZZ_CHECK(rc != 0 || t2 == t, "parse and scan differ");
    }
    free(copy);
    return 0;
}
