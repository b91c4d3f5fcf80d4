/* text: the UTF-8 decoder (every invalid class: stray continuation bytes,
 * bad leads, overlongs, surrogates, > U+10FFFF, sequences cut at the end),
 * counting, the escape-sequence reader (CSI, OSC with BEL and ST, short
 * escapes, cut sequences), truncation on code-point boundaries and the
 * terminal sanitiser (shown and stripped forms, lines, C1 controls, bidi
 * controls, invalid UTF-8, the size limit). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

/* decode s (len bytes): the length, and the code point when valid */
static size_t dec(const char *s, size_t len, uint32_t *cp)
{
    *cp = 0xdeadbeef;
    return krc_text_utf8_decode(s, len, cp);
}

static void test_decode_valid(void **state)
{
    uint32_t cp;

    (void)state;
    assert_int_equal(dec("A", 1, &cp), 1);
    assert_int_equal(cp, 0x41);
    assert_int_equal(dec("\0x", 2, &cp), 1); /* NUL is a code point */
    assert_int_equal(cp, 0);
    assert_int_equal(dec("\x7f", 1, &cp), 1);
    assert_int_equal(cp, 0x7f);
    /* the smallest and largest of each length */
    assert_int_equal(dec("\xc2\x80", 2, &cp), 2);
    assert_int_equal(cp, 0x80);
    assert_int_equal(dec("\xdf\xbf", 2, &cp), 2);
    assert_int_equal(cp, 0x7ff);
    assert_int_equal(dec("\xe0\xa0\x80", 3, &cp), 3);
    assert_int_equal(cp, 0x800);
    assert_int_equal(dec("\xef\xbf\xbf", 3, &cp), 3);
    assert_int_equal(cp, 0xffff);
    assert_int_equal(dec("\xf0\x90\x80\x80", 4, &cp), 4);
    assert_int_equal(cp, 0x10000);
    assert_int_equal(dec("\xf4\x8f\xbf\xbf", 4, &cp), 4);
    assert_int_equal(cp, 0x10ffff);
    /* around the surrogates */
    assert_int_equal(dec("\xed\x9f\xbf", 3, &cp), 3);
    assert_int_equal(cp, 0xd7ff);
    assert_int_equal(dec("\xee\x80\x80", 3, &cp), 3);
    assert_int_equal(cp, 0xe000);
    /* only the first sequence is read */
    assert_int_equal(dec("\xe2\x80\xa6rest", 7, &cp), 3);
    assert_int_equal(cp, 0x2026);
}

static void test_decode_invalid(void **state)
{
    static const struct {
        const char *s;
        size_t len;
        const char *why;
    } bad[] = {
        {"\x80", 1, "a lone continuation byte"},
        {"\xbf\x41", 2, "a lone continuation byte"},
        {"\xc0\x80", 2, "overlong NUL (C0 lead)"},
        {"\xc1\xbf", 2, "overlong 2-byte (C1 lead)"},
        {"\xe0\x80\x80", 3, "overlong 3-byte"},
        {"\xe0\x9f\xbf", 3, "overlong 3-byte (U+07FF)"},
        {"\xf0\x80\x80\x80", 4, "overlong 4-byte"},
        {"\xf0\x8f\xbf\xbf", 4, "overlong 4-byte (U+FFFF)"},
        {"\xed\xa0\x80", 3, "surrogate U+D800"},
        {"\xed\xbf\xbf", 3, "surrogate U+DFFF"},
        {"\xf4\x90\x80\x80", 4, "U+110000"},
        {"\xf5\x80\x80\x80", 4, "F5 lead"},
        {"\xff", 1, "FF"},
        {"\xfe\x80", 2, "FE"},
        {"\xc3\x41", 2, "continuation missing"},
        {"\xe2\x80\x41", 3, "third byte not a continuation"},
        {"\xf0\x9f\x9a\xc0", 4, "fourth byte a lead"},
        {"\xe2\x80\xa6\xa6", 2, "3-byte cut by the end of the range"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint32_t cp = 7;
        if (krc_text_utf8_decode(bad[i].s, bad[i].len, &cp) != 0) {
            print_error("accepted: %s\n", bad[i].why);
            fail();
        }
        assert_int_equal(cp, 7); /* untouched */
        assert_false(krc_text_utf8_valid(bad[i].s, bad[i].len));
    }
}

static void test_decode_truncated_at_end(void **state)
{
    static const char rocket[] = "\xf0\x9f\x9a\x80";
    static const char ellipsis[] = "\xe2\x80\xa6";
    uint32_t cp;

    (void)state;
    /* every prefix of a sequence is invalid: the range ends inside it */
    for (size_t n = 1; n < 4; n++) {
        assert_int_equal(dec(rocket, n, &cp), 0);
        assert_false(krc_text_utf8_valid(rocket, n));
    }
    assert_int_equal(dec(rocket, 4, &cp), 4);
    assert_int_equal(cp, 0x1f680);
    for (size_t n = 1; n < 3; n++) {
        assert_int_equal(dec(ellipsis, n, &cp), 0);
    }
    assert_int_equal(dec("\xc3\xa9", 1, &cp), 0);
    /* valid text that ends with a cut sequence */
    assert_true(krc_text_utf8_valid("ab\xc3\xa9", 4));
    assert_false(krc_text_utf8_valid("ab\xc3\xa9\xc3", 5));
}

static void test_valid_whole(void **state)
{
    (void)state;
    assert_true(krc_text_utf8_valid("", 0));
    assert_true(krc_text_utf8_valid("plain ascii", 11));
    assert_true(krc_text_utf8_valid("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x9a\x80", 14));
    assert_false(krc_text_utf8_valid("caf\xc3\xa9 \xed\xa0\x80", 9));
    assert_false(krc_text_utf8_valid("x\x80y", 3));
}

static void test_count(void **state)
{
    (void)state;
    assert_int_equal(krc_text_utf8_count("", 0), 0);
    assert_int_equal(krc_text_utf8_count("abc", 3), 3);
    assert_int_equal(krc_text_utf8_count("caf\xc3\xa9", 5), 4);
    assert_int_equal(krc_text_utf8_count("\xe2\x80\xa6\xf0\x9f\x9a\x80", 7), 2);
    /* a stray lead byte counts as one; stray continuation bytes as none */
    assert_int_equal(krc_text_utf8_count("\xc3x", 2), 2);
    assert_int_equal(krc_text_utf8_count("\x80\x80", 2), 0);
    /* UTF-16 units: astral code points are two */
    assert_int_equal(krc_text_utf16_len("\xf0\x9f\x9a\x80", 4), 2);
    assert_int_equal(krc_text_utf16_len("a\xc3\xa9\xe2\x80\xa6", 6), 3);
    assert_int_equal(krc_text_utf16_len("a\xf0\x9f\x9a\x80z", 6), 4);
}

static void test_next(void **state)
{
    static const char s[] = "a\xc3\xa9\xf0\x9f\x9a\x80\x80z";
    size_t len = sizeof(s) - 1;

    (void)state;
    assert_int_equal(krc_text_utf8_next(s, len, 0), 1);
    assert_int_equal(krc_text_utf8_next(s, len, 1), 3);
    /* a stray continuation byte stays with the sequence before it */
    assert_int_equal(krc_text_utf8_next(s, len, 3), 8);
    assert_int_equal(krc_text_utf8_next(s, len, 7), 8);
    assert_int_equal(krc_text_utf8_next(s, len, 8), len);
    /* never past the end of a cut sequence */
    assert_int_equal(krc_text_utf8_next(s, 5, 3), 5);
}

static size_t ansi(const char *s)
{
    return krc_text_ansi_len(s, strlen(s));
}

static void test_ansi_csi(void **state)
{
    (void)state;
    assert_int_equal(ansi("\x1b[31mred"), 5);
    assert_int_equal(ansi("\x1b[0m"), 4);
    assert_int_equal(ansi("\x1b[1;38;5;208mX"), 13);
    assert_int_equal(ansi("\x1b[?25lX"), 6); /* private parameter */
    assert_int_equal(ansi("\x1b[2 qX"), 5);  /* intermediate byte */
    assert_int_equal(ansi("\x1b[Krest"), 3); /* no parameters */
    assert_int_equal(ansi("\x1b[@"), 3);     /* 0x40 is a final byte */
    assert_int_equal(ansi("\x1b[~"), 3);     /* 0x7e too */
    assert_int_equal(ansi("\x1b[12;34"), 7); /* cut: to the end */
    assert_int_equal(ansi("\x1b["), 2);
}

static void test_ansi_osc(void **state)
{
    (void)state;
    /* ended by BEL */
    assert_int_equal(ansi("\x1b]0;title\x07text"), 10);
    /* ended by ST (ESC \) */
    assert_int_equal(ansi("\x1b]0;title\x1b\\text"), 11);
    /* a hyperlink: two OSCs around the text */
    {
        static const char link[] = "\x1b]8;;http://x\x1b\\label\x1b]8;;\x1b\\";
        assert_int_equal(krc_text_ansi_len(link, sizeof(link) - 1), 15);
        assert_int_equal(krc_text_ansi_len(link + 20, sizeof(link) - 1 - 20), 7);
    }
    /* an ESC not followed by '\' does not end it */
    assert_int_equal(ansi("\x1b]0;a\x1b[b\x07z"), 9);
    /* cut: to the end, also with a lone ESC last */
    assert_int_equal(ansi("\x1b]0;title"), 9);
    assert_int_equal(ansi("\x1b]0;title\x1b"), 10);
    assert_int_equal(ansi("\x1b]"), 2);
}

static void test_ansi_other(void **state)
{
    (void)state;
    assert_int_equal(ansi("\x1b(Bx"), 2); /* charset designation: ESC and one byte */
    assert_int_equal(ansi("\x1b"
                          "7x"),
                     2);
    assert_int_equal(ansi("\x1b\x1b[m"), 2);
    assert_int_equal(krc_text_ansi_len("\x1b", 1), 1); /* ESC last */
}

static void test_truncate(void **state)
{
    char b[32];

    (void)state;
    /* room for all: the ellipsis is appended */
    memcpy(b, "abc", 3);
    assert_int_equal(krc_text_truncate(b, 3, 8, "..."), 6);
    assert_string_equal(b, "abc...");
    /* the text is cut to make room */
    memcpy(b, "abcdefgh", 8);
    assert_int_equal(krc_text_truncate(b, 8, 8, "..."), 7);
    assert_string_equal(b, "abcd...");
    /* never inside a sequence: "é" (2 bytes) at 3..4 */
    memcpy(b, "abc\xc3\xa9xyz", 8);
    assert_int_equal(krc_text_truncate(b, 8, 8, "..."), 6);
    assert_string_equal(b, "abc...");
    assert_int_equal(krc_text_truncate(memcpy(b, "abc\xc3\xa9xyz", 8), 8, 9, "..."), 8);
    assert_string_equal(b, "abc\xc3\xa9...");
    /* a 4-byte sequence */
    memcpy(b, "a\xf0\x9f\x9a\x80z", 6);
    for (size_t size = 5; size < 9; size++) {
        assert_int_equal(krc_text_truncate(memcpy(b, "a\xf0\x9f\x9a\x80z", 6), 6, size, "..."), 4);
        assert_string_equal(b, "a...");
    }
    assert_int_equal(krc_text_truncate(memcpy(b, "a\xf0\x9f\x9a\x80z", 6), 6, 9, "..."), 8);
    assert_string_equal(b, "a\xf0\x9f\x9a\x80...");
    /* "…" is 3 bytes too */
    memcpy(b, "\xc3\xa9\xc3\xa9\xc3\xa9", 6);
    assert_int_equal(krc_text_truncate(b, 6, 7, "\xe2\x80\xa6"), 5);
    assert_string_equal(b, "\xc3\xa9\xe2\x80\xa6");
    /* room for the ellipsis alone */
    memcpy(b, "abcdef", 6);
    assert_int_equal(krc_text_truncate(b, 6, 4, "..."), 3);
    assert_string_equal(b, "...");
    /* too small for the ellipsis: nothing but the NUL */
    memcpy(b, "abcdef", 6);
    assert_int_equal(krc_text_truncate(b, 6, 3, "..."), 0);
    assert_string_equal(b, "");
    assert_int_equal(krc_text_truncate(b, 0, 1, "..."), 0);
    assert_string_equal(b, "");
    /* one character and the ellipsis */
    memcpy(b, "abcdef", 6);
    assert_int_equal(krc_text_truncate(b, 6, 5, "..."), 4);
    assert_string_equal(b, "a...");
}

/* krc_text_sanitize of the NUL-terminated s (the whole result must fit) */
static char *san(const char *s, unsigned flags)
{
    static char out[512];
    struct krc_buf b;

    krc_buf_init(&b, sizeof(out) - 1);
    assert_int_equal(krc_text_sanitize(&b, s, strlen(s), flags), 0);
    assert_true(krc_text_utf8_valid(krc_buf_str(&b), b.len));
    snprintf(out, sizeof(out), "%s", krc_buf_str(&b));
    krc_buf_cleanup(&b);
    return out;
}

#define PIC_ESC "\xe2\x90\x9b" /* U+241B, the Control Picture of ESC */
#define PIC_BEL "\xe2\x90\x87"
#define PIC_NUL "\xe2\x90\x80"
#define PIC_DEL "\xe2\x90\xa1"
#define FFFD KRC_TEXT_REPLACEMENT

static void test_sanitize_shown(void **state)
{
    static const char nul_in[] = "a\0b";
    struct krc_buf b;

    (void)state;
    assert_string_equal(san("plain text, é ✓ 🚀", 0), "plain text, é ✓ 🚀");
    /* every escape sequence is left visible and inert: no ESC byte survives */
    assert_string_equal(san("\x1b[31mred\x1b[0m", 0), PIC_ESC "[31mred" PIC_ESC "[0m");
    assert_string_equal(san("\x1b]0;pwned\x07title", 0), PIC_ESC "]0;pwned" PIC_BEL "title");
    assert_string_equal(san("\x1b]8;;http://x\x1b\\link", 0),
                        PIC_ESC "]8;;http://x" PIC_ESC "\\link");
    assert_string_equal(san("a\x7f\x01z", 0), "a" PIC_DEL "\xe2\x90\x81z");
    /* lines: spaces by default, kept with KRC_TEXT_LINES (CR LF and a lone CR: LF) */
    assert_string_equal(san("a\nb\tc\r\nd\re", 0), "a b c d e");
    assert_string_equal(san("a\nb\tc\r\nd\re", KRC_TEXT_LINES), "a\nb\tc\nd\ne");
    /* C1 controls written as UTF-8 (U+009B is an 8-bit CSI), bidi controls */
    assert_string_equal(san("a\xc2\x9b"
                            "31mb\xc2\x85",
                            0),
                        "a" FFFD "31mb" FFFD);
    assert_string_equal(san("x\xe2\x80\xaey\xe2\x81\xa6z", 0), "x" FFFD "y" FFFD "z");
    /* invalid UTF-8: a raw 8-bit CSI byte, a cut sequence, an overlong ESC */
    assert_string_equal(san("a\x9b"
                            "31m",
                            0),
                        "a" FFFD "31m");
    assert_string_equal(san("a\xe2\x82", 0), "a" FFFD FFFD);
    assert_string_equal(san("\xc0\x9b", 0), FFFD FFFD);
    /* NUL inside the range */
    krc_buf_init(&b, 64);
    assert_int_equal(krc_text_sanitize(&b, nul_in, sizeof(nul_in) - 1, 0), 0);
    assert_string_equal(krc_buf_str(&b), "a" PIC_NUL "b");
    krc_buf_cleanup(&b);
}

static void test_sanitize_stripped(void **state)
{
    (void)state;
    /* the store's form: sequences and controls removed, C1 dropped, bidi kept */
    assert_string_equal(san("\x1b[31mred\x1b[0m \x1b]0;t\x07ok\x7f\x01", KRC_TEXT_STRIP), "red ok");
    assert_string_equal(san("a\xc2\x9b"
                            "b\xe2\x80\xae"
                            "c\xff",
                            KRC_TEXT_STRIP),
                        "ab\xe2\x80\xae"
                        "c" FFFD);
    assert_string_equal(san("a\r\nb\tc", KRC_TEXT_STRIP | KRC_TEXT_LINES), "a\nb\tc");
    assert_string_equal(san("a\r\nb\tc", KRC_TEXT_STRIP), "a b c");
}

static void test_sanitize_limit(void **state)
{
    struct krc_buf b;
    char *s;

    (void)state;
    /* a run is cut to fit; a picture (3 bytes) is all or nothing */
    krc_buf_init(&b, 5);
    assert_int_equal(krc_text_sanitize(&b, "abcdefgh", 8, 0), KRC_ETOOBIG);
    assert_string_equal(krc_buf_str(&b), "abcde");
    krc_buf_cleanup(&b);
    krc_buf_init(&b, 5);
    assert_int_equal(krc_text_sanitize(&b, "abc\x1b", 4, 0), KRC_ETOOBIG);
    assert_string_equal(krc_buf_str(&b), "abc");
    krc_buf_cleanup(&b);
    /* krc_text_safe: a copy, cut at max, NULL for NULL */
    s = krc_text_safe("pod-\x1b[2J", 64, 0);
    assert_string_equal(s, "pod-" PIC_ESC "[2J");
    krc_free(s);
    s = krc_text_safe("abcdef", 3, 0);
    assert_string_equal(s, "abc");
    krc_free(s);
    assert_null(krc_text_safe(NULL, 64, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_valid),
        cmocka_unit_test(test_decode_invalid),
        cmocka_unit_test(test_decode_truncated_at_end),
        cmocka_unit_test(test_valid_whole),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_next),
        cmocka_unit_test(test_ansi_csi),
        cmocka_unit_test(test_ansi_osc),
        cmocka_unit_test(test_ansi_other),
        cmocka_unit_test(test_truncate),
        cmocka_unit_test(test_sanitize_shown),
        cmocka_unit_test(test_sanitize_stripped),
        cmocka_unit_test(test_sanitize_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
