/* The end of a streamed log, in bounded memory.
 *
 * The API server applies `limitBytes` from the START of the `tailLines`
 * window, so a request bounded by limitBytes alone loses the last lines as
 * soon as one early line is long. The collector therefore asks for the
 * window with a much larger transfer cap and streams it into a krc_logtail,
 * which keeps only the last `keep` bytes (starting at a line when the kept
 * part holds a line start) and counts what it dropped, so that the reader
 * can be told exactly what was cut and nothing more.
 *
 * Memory: at most `keep` bytes, whatever the peer sends (the buffer grows by
 * doubling up to `keep`, then works as a ring). */
#ifndef KRC_LOGTAIL_H
#define KRC_LOGTAIL_H

#include <stddef.h>
#include <stdint.h>

/* What was cut from a log before it was kept, as far as the producer
 * counted it. All zero: nothing is known to have been cut. */
struct krc_logtail_cut {
    int known;         /* the fields below were counted by a producer */
    uint64_t received; /* bytes read (the window, or the file) */
    uint64_t dropped;  /* bytes at the front not kept, incl. a partial first line */
    int head_cut;      /* the first kept line lost its beginning (no line start was kept) */
    int capped;        /* reading stopped at the transfer cap: more bytes followed */
    uint64_t cap;      /* the transfer cap in bytes (0: none) */
};

struct krc_logtail {
    unsigned char *buf; /* linear until full, then a ring of `keep` bytes */
    size_t alloc;
    size_t keep;
    size_t head; /* index of the oldest kept byte */
    size_t len;  /* bytes kept */
    uint64_t received;
    uint64_t cap;
    int capped;
    unsigned char last_dropped; /* the byte just before the kept ones */
};

/* keep >= 1: bytes kept; cap: bytes accepted at most (0: no cap; a cap
 * below keep is raised to keep). Allocates nothing yet. */
void krc_logtail_init(struct krc_logtail *t, size_t keep, uint64_t cap);
void krc_logtail_cleanup(struct krc_logtail *t);

/* Count `n` bytes of the source that were skipped without being read (a
 * reader that seeks close to the end of a file); before the first feed. */
void krc_logtail_skip(struct krc_logtail *t, uint64_t n);

/* Take `len` more bytes. Returns 0; 1 when the cap is reached (the bytes
 * past it are not taken and the caller should stop the transfer);
 * KRC_ENOMEM. */
int krc_logtail_feed(struct krc_logtail *t, const void *data, size_t len);

/* Hand out the kept bytes, line-aligned: when bytes were dropped and the
 * kept part starts inside a line that is followed by another line, that
 * fragment is dropped too. `capped` is set when bytes past the cap were
 * offered, i.e. the window is known to continue (ask a server for
 * limitBytes = cap + 1 to know it). *ret (caller frees with krc_free; NULL when
 * *ret_len is 0) and *ret_cut. The tail is empty afterwards (cleanup is
 * still needed). */
void krc_logtail_finish(struct krc_logtail *t, unsigned char **ret, size_t *ret_len,
                        struct krc_logtail_cut *ret_cut);

/* One sentence, without a final period, saying what was cut, e.g. "first
 * 307 KB of the 319 KB read dropped to keep the last 12 KB, from a line
 * start; transfer stopped at the 4 MB cap: anything after byte 4194304 was
 * not fetched". "" when nothing is known to have been cut. Returns the
 * length written. */
size_t krc_logtail_describe(const struct krc_logtail_cut *cut, char *out, size_t outsz);

/* Length of the kubelet's timestamp prefix of a log line ("2026-07-30T07:
 * 43:51.123456789Z " as `timestamps=true` and `kubectl logs --timestamps`
 * write it: an RFC 3339 time read by krc_clock_scan_rfc3339's kubelet form,
 * 'T', 0 to 9 fraction digits, "Z" or a "-05:00" offset when the node's
 * runtime writes local time, then one space), 0 when the line does not start
 * with one. */
size_t krc_logtail_stamp_len(const unsigned char *p, size_t len);

/* The compact form of a stamp of stamp_len bytes (from
 * krc_logtail_stamp_len): time of day and zone as written, "07:43:51Z" or
 * "16:10:22-05:00". Returns the length written ("" when p holds no stamp). */
size_t krc_logtail_stamp_short(const unsigned char *p, size_t stamp_len, char *out, size_t outsz);

/* Does the text start with the application's own time stamp? Recognised:
 * an ISO 8601 date and time ("2026-07-30T07:43:51", "2026-07-30 07:43:51",
 * also inside "[" or after "time=\"" / "ts="), klog's "I0730 07:43:51",
 * syslog-style "Jul 30 07:43:51", and a JSON object whose first key is
 * "time", "ts", "timestamp" or "@timestamp". */
int krc_logtail_has_app_stamp(const unsigned char *p, size_t len);

#endif
