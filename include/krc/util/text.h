/* Text: the one UTF-8 decoder, the one terminal (ANSI) escape-sequence
 * reader and truncation on a code-point boundary, for every module that
 * shows untrusted bytes (Slack messages, diagnosis summaries, the stored
 * report, metric labels, `krc history`). Pure functions on byte ranges; no
 * allocation. */
#ifndef KRC_TEXT_H
#define KRC_TEXT_H

#include <stddef.h>
#include <stdint.h>

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

#endif
