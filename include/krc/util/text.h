/* Text: the one UTF-8 decoder, the one terminal (ANSI) escape-sequence
 * reader, truncation on a code-point boundary, and the one sanitiser of
 * untrusted text for a terminal, for every module that shows untrusted
 * bytes (Slack messages, diagnosis summaries, the stored report, metric
 * labels, `krc explain`, `krc history`, the log). Pure functions on byte
 * ranges; only the sanitiser allocates (into a krc_buf). */
#ifndef KRC_TEXT_H
#define KRC_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "krc/util/buf.h"

#define KRC_TEXT_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD, shown for an invalid byte */

/* Length (1 to 4) of the valid UTF-8 sequence at p[0] (len >= 1 bytes
 * available) and its code point in *ret_cp; 0 when it is invalid: a byte
 * that cannot start a sequence (0x80-0xc1, 0xf5-0xff), a missing
 * continuation byte, a sequence cut by the end of the range, an overlong
 * form, a surrogate (U+D800-U+DFFF) or a code point above U+10FFFF.
 * *ret_cp is written only when the result is not 0. */
size_t krc_text_utf8_decode(const void *p, size_t len, uint32_t *ret_cp);

/* 1 when s[0..len) is valid UTF-8 as a whole (len 0: 1). */
int krc_text_utf8_valid(const void *s, size_t len);

/* Code points in s[0..len): the bytes that are not continuation bytes
 * (10xxxxxx). For valid text the number of code points; a display width
 * good enough for names. */
size_t krc_text_utf8_count(const void *s, size_t len);

/* UTF-16 code units of s[0..len): code points, plus one more for each
 * 4-byte lead byte (a surrogate pair). Slack measures its limits so. */
size_t krc_text_utf16_len(const void *s, size_t len);

/* Index of the first byte after the code point that starts at s[i]
 * (i < len): i + 1 plus the continuation bytes that follow, at most len. */
size_t krc_text_utf8_next(const void *s, size_t len, size_t i);

/* Length of the terminal escape sequence that starts at p[0] (ESC, 0x1b;
 * len >= 1 bytes available), so a caller can skip it:
 *   - CSI, ESC [ parameters/intermediates and a final byte 0x40-0x7e;
 *   - OSC, ESC ] ... ended by BEL (0x07) or ST (ESC \), both included;
 *   - any other escape, ESC and the byte after it.
 * A sequence cut by the end of the range runs to the end (len). */
size_t krc_text_ansi_len(const void *p, size_t len);

/* Cut the text s[0..len) (a code-point-aligned result: valid UTF-8 or a
 * copy of it with U+FFFD) so that it, `ellipsis` and a NUL fit in `size`
 * bytes, on a code-point boundary, append `ellipsis` when it fits and
 * NUL-terminate (size > 0). Nothing is cut when there is room already.
 * Returns the new length. Used when the next piece of a text does not fit:
 * "...", or "…" ("\xe2\x80\xa6"). */
size_t krc_text_truncate(char *s, size_t len, size_t size, const char *ellipsis);

/* A code point a terminal may obey although it prints nothing: a C1 control
 * (U+0080-U+009F, 8-bit CSI, OSC...) or a bidirectional control
 * (U+202A-U+202E, U+2066-U+2069). 1 or 0. */
int krc_text_unsafe_cp(uint32_t cp);

/* krc_text_sanitize's flags. */
#define KRC_TEXT_LINES 0x1u /* keep \n and \t (\r\n and a lone \r become \n); else spaces */
#define KRC_TEXT_STRIP 0x2u /* remove controls instead of showing them (the store's form) */

/* Append a copy of the untrusted text data[0..len) to out that is safe to
 * write to a terminal: nothing in it can move the cursor, change colours or
 * titles, or start a sequence, and it is valid UTF-8.
 *   - printable ASCII and valid UTF-8 are copied;
 *   - \n, \r and \t: see KRC_TEXT_LINES;
 *   - invalid UTF-8: U+FFFD for each byte that does not start a valid
 *     sequence;
 *   - without KRC_TEXT_STRIP (the renderers: `krc explain`, `krc history`,
 *     `krc demo`, `krc config`, the log): ESC, the other C0 controls and DEL
 *     are shown as their Control Picture (U+2400 + c, DEL U+2421: ESC is
 *     "\xe2\x90\x9b"), so an escape sequence is visible as text and does
 *     nothing; C1 controls (U+0080-U+009F, which some terminals obey as
 *     8-bit CSI, OSC...) and the bidirectional controls (U+202A-U+202E,
 *     U+2066-U+2069) become U+FFFD. `krc demo`'s Slack view shows them the
 *     same way;
 *   - with KRC_TEXT_STRIP (the stored report): escape sequences
 *     (krc_text_ansi_len) are removed whole, other C0 controls, DEL and C1
 *     controls are dropped.
 * 0, KRC_ETOOBIG (out keeps what fitted, cut at a character boundary) or
 * KRC_ENOMEM. */
int krc_text_sanitize(struct krc_buf *out, const void *data, size_t len, unsigned flags);

/* A new NUL-terminated sanitised copy of s (krc_text_sanitize), at most max
 * bytes: a longer result is cut. NULL when s is NULL or memory runs out;
 * the caller frees it with krc_free. */
char *krc_text_safe(const char *s, size_t max, unsigned flags);

/* Write the sanitised s to f (krc_text_sanitize; NULL writes nothing), at
 * most max bytes of it. 0, or KRC_ENOMEM (nothing written). */
int krc_text_fputs(const char *s, size_t max, unsigned flags, FILE *f);

#endif
