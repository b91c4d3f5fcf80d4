/* clock: the one RFC 3339 parser (whole strings as Kubernetes and the
 * configuration write them; the kubelet's log stamps as a prefix), and the
 * formatter. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/error.h"

static void test_rfc3339(void **state)
{
    static const struct {
        const char *s;
        int ok;
        int64_t v;
    } cases[] = {
        {"1970-01-01T00:00:00Z", 1, 0},
        {"2026-07-30T08:14:05Z", 1, 1785399245},
        {"2026-07-30T08:14:05z", 1, 1785399245},
        {"2026-07-30t08:14:05Z", 1, 1785399245},
        {"2026-07-30T08:14:05.123456Z", 1, 1785399245},
        {"2026-07-30T08:14:05.999999999Z", 1, 1785399245},
        {"2026-07-30T10:14:05+02:00", 1, 1785399245},
        {"2026-07-30T10:14:05.5+02:00", 1, 1785399245},
        {"2026-07-30T03:44:05-04:30", 1, 1785399245},
        {"2000-02-29T00:00:00Z", 1, 951782400},
        {"1969-12-31T23:59:59Z", 1, -1},
        {"2038-01-19T03:14:08Z", 1, 2147483648LL},
        {"9999-12-31T23:59:59Z", 1, 253402300799LL},
        {"2026-07-30T08:14:05", 0, 0},
        {"2026-07-30 08:14:05", 0, 0},
        {"2026-07-30T08:14:05.Z", 0, 0},
        {"2026-07-30T08:14:05+0200", 0, 0},
        {"2026-07-30T08:14:05+02:00x", 0, 0},
        {"2026-07-30T08:14:05ZZ", 0, 0},
        {"2026-13-30T08:14:05Z", 0, 0},
        {"2026-00-30T08:14:05Z", 0, 0},
        {"2026-02-29T00:00:00Z", 0, 0},
        {"1900-02-29T00:00:00Z", 0, 0},
        {"2026-04-31T00:00:00Z", 0, 0},
        {"2026-07-30T24:00:00Z", 0, 0},
        {"2026-07-30T23:60:00Z", 0, 0},
        {"2026-07-30T23:59:61Z", 0, 0},
        {"2026-07-30T08:14:05+24:00", 0, 0},
        {"2026-7-30T08:14:05Z", 0, 0},
        {"garbage", 0, 0},
        {"", 0, 0},
        {"null", 0, 0},
        {"2026-07-30T08:1a:05Z", 0, 0},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = 12345;
        int rc = krc_parse_rfc3339(cases[i].s, strlen(cases[i].s), &v);
        if (cases[i].ok) {
            if (rc != 0 || v != cases[i].v) {
                fail_msg("%s: rc %d v %lld", cases[i].s, rc, (long long)v);
            }
        } else if (rc != KRC_EINVAL || v != 12345) {
            fail_msg("%s accepted", cases[i].s);
        }
    }
    /* the length bounds the read: a valid prefix inside a longer buffer */
    {
        int64_t v;
        assert_int_equal(krc_parse_rfc3339("2026-07-30T08:14:05Zjunk", 20, &v), 0);
        assert_int_equal(v, 1785399245);
        assert_int_equal(krc_parse_rfc3339("2026-07-30T08:14:05Z", 19, &v), KRC_EINVAL);
    }
}

static void test_rfc3339_kube_times(void **state)
{
    int64_t t;

    (void)state;
    assert_int_equal(krc_parse_rfc3339("1970-01-01T00:00:00Z", 20, &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(krc_parse_rfc3339("2024-10-22T09:02:31Z", 20, &t), 0);
    assert_int_equal(t, 1729587751);
    assert_int_equal(krc_parse_rfc3339("2025-02-11T07:31:16.404092Z", 27, &t), 0);
    assert_int_equal(t, 1739259076);
    assert_int_equal(krc_parse_rfc3339("2025-02-11T09:31:16+02:00", 25, &t), 0);
    assert_int_equal(t, 1739259076);
    assert_int_equal(krc_parse_rfc3339("2000-02-29T00:00:00Z", 20, &t), 0);
    assert_int_equal(t, 951782400);
    assert_int_equal(krc_parse_rfc3339("2025-02-11T07:31:16", 19, &t), KRC_EINVAL);
    assert_int_equal(krc_parse_rfc3339("2025-13-11T07:31:16Z", 20, &t), KRC_EINVAL);
    assert_int_equal(krc_parse_rfc3339("2025-02-11T07:31:16.Z", 21, &t), KRC_EINVAL);
    assert_int_equal(krc_parse_rfc3339("2025-02-11T07:31:16Zjunk", 24, &t), KRC_EINVAL);
}

static size_t scan(const char *s, unsigned flags, int64_t *ret_v, size_t *ret_zone)
{
    return krc_clock_scan_rfc3339(s, strlen(s), flags, ret_v, ret_zone);
}

static void test_scan_prefix(void **state)
{
    int64_t v = 0;
    size_t z = 0;

    (void)state;
    /* a prefix: the length of the time, the rest is left alone */
    assert_int_equal(scan("2026-07-30T08:14:05Z rest", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 20);
    assert_int_equal(v, 1785399245);
    assert_int_equal(z, 19);
    assert_int_equal(scan("2026-07-30T10:14:05.25+02:00x", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 28);
    assert_int_equal(v, 1785399245);
    assert_int_equal(z, 22);
    /* without the flag the time must be all of it */
    assert_int_equal(scan("2026-07-30T08:14:05Z rest", 0, &v, &z), 0);
    assert_int_equal(scan("2026-07-30T08:14:05Z", 0, &v, &z), 20);
    /* a prefix must still be a whole, valid time */
    v = 7;
    z = 7;
    assert_int_equal(scan("2026-07-30T08:14:05 rest", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 0);
    assert_int_equal(scan("2026-07-30T08:14:05+02:0 x", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 0);
    assert_int_equal(scan("2026-07-30T08:14:05+02:0", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 0);
    assert_int_equal(scan("2026-02-30T08:14:05Z x", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 0);
    assert_int_equal(v, 7); /* untouched on failure */
    assert_int_equal(z, 7);
    /* the outputs may be NULL */
    assert_int_equal(scan("2026-07-30T08:14:05Z", 0, NULL, NULL), 20);
}

static void test_scan_kubelet_form(void **state)
{
    const unsigned k = KRC_CLOCK_RFC3339_PREFIX | KRC_CLOCK_RFC3339_KUBELET;
    int64_t v = 0;
    size_t z = 0;

    (void)state;
    assert_int_equal(scan("2026-07-30T08:14:05.123456789Z x", k, &v, &z), 30);
    assert_int_equal(v, 1785399245);
    assert_int_equal(z, 29);
    assert_int_equal(scan("2022-10-29T16:10:22.592603036-05:00 x", k, &v, &z), 35);
    assert_int_equal(z, 29);
    /* what the general form accepts and the kubelet never writes */
    assert_int_equal(scan("2026-07-30T08:14:05.1234567891Z x", k, &v, &z), 0);
    assert_int_equal(scan("2026-07-30T08:14:05.1234567891Z x", KRC_CLOCK_RFC3339_PREFIX, &v, &z),
                     31);
    assert_int_equal(scan("2026-07-30t08:14:05Z x", k, &v, &z), 0);
    assert_int_equal(scan("2026-07-30 08:14:05Z x", k, &v, &z), 0);
    assert_int_equal(scan("2026-07-30T08:14:05z x", k, &v, &z), 0);
    assert_int_equal(scan("2026-07-30 08:14:05z x", KRC_CLOCK_RFC3339_PREFIX, &v, &z), 20);
}

static void test_format(void **state)
{
    char out[32];
    int64_t v = 0;

    (void)state;
    krc_clock_format_rfc3339(1785399245, out, sizeof(out));
    assert_string_equal(out, "2026-07-30T08:14:05Z");
    assert_int_equal(krc_parse_rfc3339(out, strlen(out), &v), 0);
    assert_int_equal(v, 1785399245);
    krc_clock_format_rfc3339(0, out, sizeof(out));
    assert_string_equal(out, "1970-01-01T00:00:00Z");
}

/* `krc history --since` and the MCP tools' since: a duration back from now,
 * or an RFC 3339 time as it is. */
static void test_parse_since(void **state)
{
    int64_t t = 0;
    long secs = 0;
    (void)state;
    assert_int_equal(krc_parse_since("2h", 1800000000, &t), 0);
    assert_int_equal(t, 1800000000 - 7200);
    assert_int_equal(krc_parse_since("1h30m", 1800000000, &t), 0);
    assert_int_equal(t, 1800000000 - 5400);
    assert_int_equal(krc_parse_since("90", 1800000000, &t), 0);
    assert_int_equal(t, 1800000000 - 90);
    assert_int_equal(krc_parse_since("2027-01-15T08:00:00Z", 1800000000, &t), 0);
    assert_int_equal(t, 1800000000);
    assert_int_equal(krc_parse_since("2027-01-15T09:00:00+01:00", 1, &t), 0);
    assert_int_equal(t, 1800000000);
    /* further back than the epoch: the start of time, not 0 (0 is "no filter") */
    assert_int_equal(krc_parse_since("1000d", 1000, &t), 0);
    assert_int_equal(t, 1);
    t = 42;
    static const char *const bad[] = {"",
                                      "0",
                                      "0s",
                                      "soon",
                                      "-1h",
                                      "1h30",
                                      "2h ",
                                      "2027-01-15",
                                      "2027-01-15 08:00:00",
                                      "2027-13-01T00:00:00Z"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (krc_parse_since(bad[i], 1800000000, &t) != KRC_EINVAL) {
            fail_msg("'%s' was accepted", bad[i]);
        }
    }
    assert_int_equal(t, 42);
    assert_int_equal(krc_parse_since(NULL, 1800000000, &t), KRC_EINVAL);
    assert_int_equal(krc_parse_duration("1d2h3m4s", &secs), 0);
    assert_int_equal(secs, 86400 + 7200 + 180 + 4);
    assert_int_equal(krc_parse_duration("100000001s", &secs), KRC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339),     cmocka_unit_test(test_rfc3339_kube_times),
        cmocka_unit_test(test_scan_prefix), cmocka_unit_test(test_scan_kubelet_form),
        cmocka_unit_test(test_format),      cmocka_unit_test(test_parse_since),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
