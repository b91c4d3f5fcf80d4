#include "krc/util/logtail.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

#define FIRST_ALLOC 4096u

void krc_logtail_init(struct krc_logtail *t, size_t keep, uint64_t cap)
{
    memset(t, 0, sizeof(*t));
    t->keep = keep > 0 ? keep : 1;
    t->cap = cap > 0 && cap < (uint64_t)t->keep ? (uint64_t)t->keep : cap;
}

void krc_logtail_cleanup(struct krc_logtail *t)
{
    krc_free(t->buf);
    t->buf = NULL;
    t->alloc = 0;
    t->head = 0;
    t->len = 0;
}

/* Append to the ring (or the linear buffer, where head is 0 and it fits). */
static void ring_append(struct krc_logtail *t, const unsigned char *p, size_t n)
{
    size_t pos = (t->head + t->len) % t->alloc;
    size_t first = n < t->alloc - pos ? n : t->alloc - pos;

    memcpy(t->buf + pos, p, first);
    memcpy(t->buf, p + first, n - first);
    t->len += n;
}

/* Grow the buffer to hold `need` bytes (<= keep). Only called while the
 * buffer is linear (head 0), i.e. before anything was dropped. */
static int grow(struct krc_logtail *t, size_t need)
{
    size_t n = t->alloc > 0 ? t->alloc : FIRST_ALLOC;
    unsigned char *nb;

    while (n < need) {
        n = n > t->keep / 2 ? t->keep : n * 2;
    }
    if (n > t->keep) {
        n = t->keep;
    }
    nb = krc_realloc(t->buf, n);
    if (nb == NULL) {
        return KRC_ENOMEM;
    }
    t->buf = nb;
    t->alloc = n;
    return 0;
}

void krc_logtail_skip(struct krc_logtail *t, uint64_t n)
{
    t->received += n;
}

int krc_logtail_feed(struct krc_logtail *t, const void *data, size_t len)
{
    const unsigned char *p = data;
    int over = 0;

    if (t->cap > 0 && t->received + len > t->cap) {
        len = t->received < t->cap ? (size_t)(t->cap - t->received) : 0;
        over = 1;
        t->capped = 1;
    }
    if (len == 0) {
        return over;
    }
    if (t->len + len <= t->keep) {
        if (t->alloc < t->len + len && grow(t, t->len + len) < 0) {
            return KRC_ENOMEM;
        }
        ring_append(t, p, len);
    } else {
        size_t drop = t->len + len - t->keep;
        if (t->alloc < t->keep && grow(t, t->keep) < 0) {
            return KRC_ENOMEM;
        }
        if (drop >= t->len) {
            /* all kept bytes go, and the front of the new ones */
            size_t skip = drop - t->len;
            t->last_dropped = skip > 0 ? p[skip - 1] : t->buf[(t->head + t->len - 1) % t->alloc];
            memcpy(t->buf, p + skip, t->keep);
            t->head = 0;
            t->len = t->keep;
        } else {
            t->last_dropped = t->buf[(t->head + drop - 1) % t->alloc];
            t->head = (t->head + drop) % t->alloc;
            t->len -= drop;
            ring_append(t, p, len);
        }
    }
    t->received += len;
    return over;
}

static void reverse(unsigned char *p, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        unsigned char c = p[i];
        p[i] = p[j - 1];
        p[j - 1] = c;
    }
}

void krc_logtail_finish(struct krc_logtail *t, unsigned char **ret, size_t *ret_len,
                        struct krc_logtail_cut *ret_cut)
{
    struct krc_logtail_cut cut;
    unsigned char *out;
    size_t len = t->len;

    memset(&cut, 0, sizeof(cut));
    cut.known = 1;
    cut.received = t->received;
    cut.cap = t->cap;
    cut.capped = t->capped;
    cut.dropped = t->received - len;
    if (t->head != 0) {
        /* rotate the full ring in place: oldest byte first */
        reverse(t->buf, t->head);
        reverse(t->buf + t->head, t->alloc - t->head);
        reverse(t->buf, t->alloc);
        t->head = 0;
    }
    if (cut.dropped > 0 && t->last_dropped != '\n' && len > 0) {
        const unsigned char *nl = memchr(t->buf, '\n', len);
        size_t skip = nl != NULL ? (size_t)(nl - t->buf) + 1 : len;
        if (skip < len) {
            /* a later line starts in the kept part: begin there */
            memmove(t->buf, t->buf + skip, len - skip);
            len -= skip;
            cut.dropped += skip;
        } else {
            cut.head_cut = 1; /* the kept part is the end of one long line */
        }
    }
    out = t->buf;
    if (len == 0) {
        krc_free(out);
        out = NULL;
    } else if (len < t->alloc) {
        unsigned char *shrunk = krc_realloc(out, len);
        if (shrunk != NULL) {
            out = shrunk;
        }
    }
    t->buf = NULL;
    t->alloc = 0;
    t->len = 0;
    t->head = 0;
    *ret = out;
    *ret_len = len;
    *ret_cut = cut;
}

/* "812 bytes", "3.4 KB", "307 KB", "4.0 MB" (K = 1024). */
static void size_text(uint64_t b, char *out, size_t outsz)
{
    if (b < 1024) {
        snprintf(out, outsz, "%llu byte%s", (unsigned long long)b, b == 1 ? "" : "s");
    } else if (b < 10240) {
        snprintf(out, outsz, "%.1f KB", (double)b / 1024.0);
    } else if (b < 1024u * 1024u) {
        snprintf(out, outsz, "%llu KB", (unsigned long long)((b + 512) / 1024));
    } else if (b < 10u * 1024u * 1024u) {
        snprintf(out, outsz, "%.1f MB", (double)b / (1024.0 * 1024.0));
    } else {
        snprintf(out, outsz, "%llu MB", (unsigned long long)((b + 524288) / (1024u * 1024u)));
    }
}

size_t krc_logtail_describe(const struct krc_logtail_cut *cut, char *out, size_t outsz)
{
    char a[32];
    char b[32];
    char c[32];
    size_t n = 0;
    int w;

    if (outsz == 0) {
        return 0;
    }
    out[0] = '\0';
    if (cut == NULL || !cut->known) {
        return 0;
    }
    if (cut->dropped > 0) {
        size_text(cut->dropped, a, sizeof(a));
        size_text(cut->received, b, sizeof(b));
        size_text(cut->received - cut->dropped, c, sizeof(c));
        w = snprintf(out, outsz, "first %s of the %s read dropped to keep the last %s%s", a, b, c,
                     cut->head_cut ? ", the end of one longer line" : ", from a line start");
        n = w < 0 ? 0 : ((size_t)w < outsz ? (size_t)w : outsz - 1);
    }
    if (cut->capped && n + 1 < outsz) {
        size_text(cut->cap, a, sizeof(a));
        w = snprintf(out + n, outsz - n,
                     "%sreading stopped at the %s transfer cap: anything after byte %llu was "
                     "not fetched",
                     n > 0 ? "; " : "", a, (unsigned long long)cut->cap);
        n += w < 0 ? 0 : ((size_t)w < outsz - n ? (size_t)w : outsz - n - 1);
    }
    return n;
}

static int digits(const unsigned char *p, size_t len, size_t at, size_t n)
{
    if (at + n > len) {
        return 0;
    }
    for (size_t i = at; i < at + n; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return 0;
        }
    }
    return 1;
}

/* "2026-07-30T07:43" / "2026-07-30 07:43" / "2026/07/30 07:43" at p[at]. */
static int date_time_at(const unsigned char *p, size_t len, size_t at)
{
    return digits(p, len, at, 4) && at + 16 <= len && (p[at + 4] == '-' || p[at + 4] == '/') &&
           digits(p, len, at + 5, 2) && p[at + 7] == p[at + 4] && digits(p, len, at + 8, 2) &&
           (p[at + 10] == 'T' || p[at + 10] == ' ') && digits(p, len, at + 11, 2) &&
           p[at + 13] == ':' && digits(p, len, at + 14, 2);
}

/* "07:43:51" at p[at]. */
static int clock_at(const unsigned char *p, size_t len, size_t at)
{
    return digits(p, len, at, 2) && at + 8 <= len && p[at + 2] == ':' &&
           digits(p, len, at + 3, 2) && p[at + 5] == ':' && digits(p, len, at + 6, 2);
}

/* The kubelet's stamp at p: its RFC 3339 time (the zone at *ret_zone)
 * followed by one space; the length with the space, 0 if none. */
static size_t kubelet_stamp(const unsigned char *p, size_t len, size_t *ret_zone)
{
    size_t n = krc_clock_scan_rfc3339(
        (const char *)p, len, KRC_CLOCK_RFC3339_PREFIX | KRC_CLOCK_RFC3339_KUBELET, NULL, ret_zone);

    return n > 0 && n < len && p[n] == ' ' ? n + 1 : 0;
}

size_t krc_logtail_stamp_len(const unsigned char *p, size_t len)
{
    size_t z;

    return kubelet_stamp(p, len, &z);
}

size_t krc_logtail_stamp_short(const unsigned char *p, size_t stamp_len, char *out, size_t outsz)
{
    size_t z = 0;
    int n;

    if (outsz == 0) {
        return 0;
    }
    out[0] = '\0';
    if (kubelet_stamp(p, stamp_len, &z) != stamp_len || stamp_len == 0) {
        return 0;
    }
    n = snprintf(out, outsz, "%.8s%.*s", (const char *)p + 11, (int)(stamp_len - 1 - z),
                 (const char *)p + z);
    return n < 0 ? 0 : ((size_t)n < outsz ? (size_t)n : outsz - 1);
}

static int starts_with(const unsigned char *p, size_t len, const char *s)
{
    size_t n = strlen(s);
    return len >= n && memcmp(p, s, n) == 0;
}

static int json_time_key(const unsigned char *p, size_t len)
{
    static const char *const keys[] = {
        "\"time\":", "\"ts\":", "\"timestamp\":", "\"@timestamp\":", NULL};
    size_t n = len < 200 ? len : 200;

    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; keys[k] != NULL; k++) {
            if (starts_with(p + i, n - i, keys[k])) {
                return 1;
            }
        }
    }
    return 0;
}

int krc_logtail_has_app_stamp(const unsigned char *p, size_t len)
{
    static const char *const months[] = {"Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ", "Jul ",
                                         "Aug ", "Sep ", "Oct ", "Nov ", "Dec ", NULL};
    static const char *const prefixes[] = {"time=\"", "time=", "ts=", "timestamp=", "[", NULL};
    size_t at = 0;

    while (at < len && p[at] == ' ') {
        at++;
    }
    p += at;
    len -= at;
    if (len > 0 && p[0] == '{') {
        return json_time_key(p, len);
    }
    for (size_t k = 0; prefixes[k] != NULL; k++) {
        if (starts_with(p, len, prefixes[k])) {
            size_t n = strlen(prefixes[k]);
            if (date_time_at(p, len, n) || clock_at(p, len, n)) {
                return 1;
            }
        }
    }
    if (date_time_at(p, len, 0) || clock_at(p, len, 0)) {
        return 1;
    }
    /* klog: "I0730 07:43:51.123456    1 main.go:12] ..." */
    if (len > 5 && p[0] != '\0' && strchr("IWEF", p[0]) != NULL && digits(p, len, 1, 4) &&
        p[5] == ' ' && clock_at(p, len, 6)) {
        return 1;
    }
    for (size_t k = 0; months[k] != NULL; k++) {
        if (starts_with(p, len, months[k])) {
            size_t i = 4;
            if (i < len && p[i] == ' ') {
                i++;
            }
            if (digits(p, len, i, 1)) {
                i += digits(p, len, i, 2) ? 2 : 1;
                if (i < len && p[i] == ' ' && clock_at(p, len, i + 1)) {
                    return 1;
                }
            }
        }
    }
    return 0;
}
