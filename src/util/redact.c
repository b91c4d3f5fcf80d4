#include "krc/util/redact.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/mem.h"
#include "krc/util/pattern.h"

struct krc_redactor {
    struct krc_pattern *extra;
    size_t n_extra;
};

#define MARK KRC_REDACT_MARK
#define MARK_LEN (sizeof(MARK) - 1)
#define KEY_MAX 96          /* longest key name looked at in key=value */
#define QUOTED_MAX 4096     /* longest quoted value redacted */
#define USERINFO_MAX 512    /* longest user:password looked at in a URL */
#define PEM_LABEL_MAX 64    /* "RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY", ... */
#define EXTRA_LINE_MAX 8192 /* longer lines are matched on their first bytes */

/* ---- character classes ------------------------------------------------ */

static int is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_alnum(unsigned char c)
{
    return is_alpha(c) || is_digit(c);
}

static int is_word(unsigned char c)
{
    return is_alnum(c) || c == '_';
}

static int is_upper_alnum(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || is_digit(c);
}

static int is_b64url(unsigned char c)
{
    return is_word(c) || c == '-';
}

/* characters of an opaque token (bearer values, base64, base64url) */
static int is_tok(unsigned char c)
{
    return is_word(c) || c == '-' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

static int is_key_char(unsigned char c)
{
    return is_word(c) || c == '-' || c == '.';
}

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static int has_prefix(const unsigned char *p, size_t len, size_t i, const char *s)
{
    size_t n = strlen(s);

    return len - i >= n && memcmp(p + i, s, n) == 0;
}

static int has_prefix_ci(const unsigned char *p, size_t len, size_t i, const char *s)
{
    size_t n = strlen(s);
    size_t k;

    if (len - i < n) {
        return 0;
    }
    for (k = 0; k < n; k++) {
        if (lower(p[i + k]) != (unsigned char)s[k]) {
            return 0;
        }
    }
    return 1;
}

/* End of the run of bytes of class `cls` starting at i (at most `max` long). */
static size_t run_end(const unsigned char *p, size_t len, size_t i, int (*cls)(unsigned char),
                      size_t max)
{
    size_t lim = len - i > max ? i + max : len;

    while (i < lim && cls(p[i])) {
        i++;
    }
    return i;
}

/* First occurrence of s in p[from..len), or SIZE_MAX. */
static size_t find(const unsigned char *p, size_t len, size_t from, const char *s)
{
    size_t n = strlen(s);
    size_t i;

    for (i = from; i + n <= len; i++) {
        const unsigned char *q = memchr(p + i, s[0], len - n + 1 - i);
        if (q == NULL) {
            return SIZE_MAX;
        }
        i = (size_t)(q - p);
        if (memcmp(q, s, n) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* ---- output ------------------------------------------------------------ */

struct out {
    const unsigned char *p;
    size_t copied; /* input bytes up to here are already in `b` */
    struct krc_buf *b;
    int count;
    int rc;
};

/* Copy the input up to `upto`, then the mark; the input resumes at `resume`. */
static void replace(struct out *o, size_t upto, size_t resume)
{
    if (o->rc == 0 && upto > o->copied) {
        o->rc = krc_buf_append(o->b, o->p + o->copied, upto - o->copied);
    }
    if (o->rc == 0) {
        o->rc = krc_buf_append(o->b, MARK, MARK_LEN);
    }
    o->copied = resume;
    o->count++;
}

/* ---- private key blocks -------------------------------------------------- */

/* At "-----BEGIN ": the end of the header line "-----BEGIN X PRIVATE KEY-----"
 * (index after the dashes), or 0 when it is not a private key header. */
static size_t pem_header_end(const unsigned char *p, size_t len, size_t i, const char *kw)
{
    size_t j = i + strlen(kw);
    size_t lim = len - j > PEM_LABEL_MAX ? j + PEM_LABEL_MAX : len;
    size_t k;

    for (k = j; k < lim && p[k] != '\n' && p[k] != '-'; k++) {
    }
    if (k >= lim || !has_prefix(p, len, k, "-----")) {
        return 0;
    }
    /* the label must end with PRIVATE KEY (or PRIVATE KEY BLOCK for PGP) */
    if ((k - j >= 11 && memcmp(p + k - 11, "PRIVATE KEY", 11) == 0) ||
        (k - j >= 17 && memcmp(p + k - 17, "PRIVATE KEY BLOCK", 17) == 0)) {
        return k + 5;
    }
    return 0;
}

static int is_b64(unsigned char c)
{
    return is_alnum(c) || c == '+' || c == '/' || c == '=';
}

/* Is p[s..e) a line of base64 key material? Full PEM lines are 64
 * characters; a shorter one is accepted only as the last line of the body
 * (`last`) or as the first line of the input (cut there by truncation). */
static int is_b64_line(const unsigned char *p, size_t s, size_t e, int last)
{
    size_t k;

    if (e > s && p[e - 1] == '\r') {
        e--;
    }
    if (e == s || (e - s < 40 && s != 0 && !last)) {
        return 0;
    }
    for (k = s; k < e; k++) {
        if (!is_b64(p[k])) {
            return 0;
        }
    }
    return 1;
}

/* An END line with no BEGIN before it: the start of the key material before
 * it (SIZE_MAX when there is no such END). Within the END's line, base64 and
 * "\n" escapes (JSON logs) are key material; above it, whole base64 lines. */
static size_t orphan_pem_start(const unsigned char *p, size_t len, size_t *ret_end_at)
{
    size_t end_at = find(p, len, 0, "-----END ");
    size_t begin_at = find(p, len, 0, "-----BEGIN ");
    size_t s;

    if (end_at == SIZE_MAX || (begin_at != SIZE_MAX && begin_at < end_at) ||
        pem_header_end(p, len, end_at, "-----END ") == 0) {
        return SIZE_MAX;
    }
    s = end_at;
    while (s > 0 && (is_b64(p[s - 1]) || p[s - 1] == '\\')) {
        s--;
    }
    if (s == 0 || p[s - 1] == '\n') {
        int last = s == end_at;
        for (; s > 0; last = 0) {
            size_t ls = s - 1; /* p[ls] is the newline ending the line above */
            while (ls > 0 && p[ls - 1] != '\n') {
                ls--;
            }
            if (!is_b64_line(p, ls, s - 1, last)) {
                break;
            }
            s = ls;
        }
    }
    if (s == end_at) {
        return SIZE_MAX;
    }
    *ret_end_at = end_at;
    return s;
}

/* ---- key=value ------------------------------------------------------------ */

static const char *const secret_keys[] = {
    "password",    "passwd",     "pwd",         "secret",        "token",
    "api_key",     "apikey",     "access_key",  "secret_key",    "client_secret",
    "private_key", "credential", "credentials", "authorization",
};

/* Does key k[0..n) name a secret? Compared lowercase with '-' as '_'. A key
 * matches when equal to a name or ending in one after '_', '.', '-' or a
 * lower-to-upper camelCase step. */
static int is_secret_key(const unsigned char *k, size_t n)
{
    char low[KEY_MAX];
    size_t i;
    size_t w;

    if (n == 0 || n > KEY_MAX) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        low[i] = (char)(k[i] == '-' ? '_' : lower(k[i]));
    }
    for (w = 0; w < sizeof(secret_keys) / sizeof(secret_keys[0]); w++) {
        size_t wl = strlen(secret_keys[w]);
        size_t at;
        if (wl > n || memcmp(low + n - wl, secret_keys[w], wl) != 0) {
            continue;
        }
        at = n - wl;
        if (at == 0 || k[at - 1] == '_' || k[at - 1] == '-' || k[at - 1] == '.') {
            return 1;
        }
        if (k[at] >= 'A' && k[at] <= 'Z' && k[at - 1] >= 'a' && k[at - 1] <= 'z') {
            return 1;
        }
    }
    return 0;
}

static int is_value_end(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == ' ' || c == ',' || c == ';' || c == '&' || c == '"' ||
           c == '\'' || c == ')' || c == '}' || c == ']' || c == '<' || c == '>' || c == '\\';
}

/* Try key=value at i (a word boundary). Returns 1 and redacts on a match;
 * otherwise 0 with *ret_skip = end of the key (no pair can start inside). */
static int try_key_value(struct out *o, size_t len, size_t i, size_t *ret_skip)
{
    const unsigned char *p = o->p;
    size_t kend = run_end(p, len, i, is_key_char, KEY_MAX + 1);
    size_t j = kend;
    size_t vs;
    size_t ve;
    unsigned char q = 0;
    int is_auth;

    *ret_skip = kend;
    /* The separator first: most words are not followed by one, and it is
     * cheaper than comparing the word with every secret name. */
    /* "key": closing quote of a quoted key */
    if (i > 0 && (p[i - 1] == '"' || p[i - 1] == '\'') && j < len && p[j] == p[i - 1]) {
        j++;
    }
    while (j < len && is_blank(p[j])) {
        j++;
    }
    if (j < len && p[j] == ':') {
        j++;
        if (j < len && p[j] == '=') {
            j++;
        }
    } else if (j < len && p[j] == '=') {
        /* "k = v" but not "k= v": an empty value followed by other text */
        int spaced = is_blank(p[j - 1]);
        j++;
        if (!spaced && j < len && is_blank(p[j])) {
            return 0;
        }
    } else {
        return 0;
    }
    if (!is_secret_key(p + i, kend - i)) {
        return 0;
    }
    is_auth = kend - i >= 13 && has_prefix_ci(p, len, kend - 13, "authorization");
    while (j < len && is_blank(p[j])) {
        j++;
    }
    if (j < len && (p[j] == '"' || p[j] == '\'')) {
        q = p[j++];
    }
    vs = j;
    if (is_auth) {
        /* keep the scheme: "Bearer abc" -> "Bearer [REDACTED]", also when
         * the token is already the mark (else a second pass redacted the
         * scheme: "[REDACTED] [REDACTED]"; found by tests/fuzz/fuzz_redact) */
        size_t w = run_end(p, len, vs, is_alpha, 32);
        if (w > vs && w < len && p[w] == ' ' && w + 1 < len &&
            (is_tok(p[w + 1]) ||
             (len - (w + 1) >= MARK_LEN && memcmp(p + w + 1, MARK, MARK_LEN) == 0))) {
            vs = w + 1;
        }
    }
    if (q != 0) {
        size_t lim = len - vs > QUOTED_MAX ? vs + QUOTED_MAX : len;
        for (ve = vs; ve < lim && p[ve] != q && p[ve] != '\n'; ve++) {
            if (p[ve] == '\\' && ve + 1 < lim) {
                ve++;
            }
        }
    } else {
        for (ve = vs; ve < len && !is_value_end(p[ve]); ve++) {
        }
    }
    if (ve == vs || (ve - vs == 4 && memcmp(p + vs, "null", 4) == 0) ||
        (len - vs >= MARK_LEN && memcmp(p + vs, MARK, MARK_LEN) == 0)) {
        /* already redacted: "[REDACTED]" ends the value at its ']' (a value
         * end), so compare the mark past ve, or a second pass would make it
         * "[REDACTED]]" */
        return 0;
    }
    replace(o, vs, ve);
    *ret_skip = ve;
    return 1;
}

/* ---- token shapes ---------------------------------------------------------- */

/* JWT at i ("eyJ"): header.payload.signature, base64url. Returns its end or
 * 0; *ret_skip is where the next attempt may start. */
static size_t jwt_end(const unsigned char *p, size_t len, size_t i, size_t *ret_skip)
{
    size_t a = run_end(p, len, i, is_b64url, SIZE_MAX);
    size_t b;
    size_t c;

    *ret_skip = a;
    if (a - i < 10 || a >= len || p[a] != '.') {
        return 0;
    }
    b = run_end(p, len, a + 1, is_b64url, SIZE_MAX);
    if (b - a - 1 < 2 || b >= len || p[b] != '.') {
        return 0;
    }
    c = run_end(p, len, b + 1, is_b64url, SIZE_MAX);
    return c;
}

/* A fixed-shape token: prefix then at least `min` (at most `max`, 0: no
 * limit) characters of `cls`, not followed by another one. */
static size_t shaped_end(const unsigned char *p, size_t len, size_t i, const char *prefix,
                         int (*cls)(unsigned char), size_t min, size_t max)
{
    size_t s = i + strlen(prefix);
    size_t e;

    if (!has_prefix(p, len, i, prefix)) {
        return 0;
    }
    e = run_end(p, len, s, cls, max ? max + 1 : SIZE_MAX);
    if (e - s < min || (max && e - s > max)) {
        return 0;
    }
    return e;
}

static int is_slack_tok(unsigned char c)
{
    return is_alnum(c) || c == '-';
}

static size_t token_end(const unsigned char *p, size_t len, size_t i)
{
    static const char *const aws[] = {"AKIA", "ASIA", "AGPA", "AIDA", "AROA",
                                      "AIPA", "ANPA", "ANVA", "ABIA", "ACCA"};
    static const char *const gh[] = {"ghp_", "gho_", "ghs_", "ghu_", "ghr_"};
    size_t k;
    size_t e;

    switch (p[i]) {
    case 'A':
        for (k = 0; k < sizeof(aws) / sizeof(aws[0]); k++) {
            if ((e = shaped_end(p, len, i, aws[k], is_upper_alnum, 16, 16)) != 0 &&
                (e == len || !is_alnum(p[e]))) {
                return e;
            }
        }
        return shaped_end(p, len, i, "AIza", is_b64url, 35, 35);
    case 'x':
        if (has_prefix(p, len, i, "xox") && len - i > 4 && strchr("abposr", p[i + 3]) != NULL &&
            p[i + 3] != '\0' && p[i + 4] == '-') {
            return shaped_end(p, len, i, "xox", is_slack_tok, 12, 0);
        }
        return shaped_end(p, len, i, "xapp-", is_slack_tok, 12, 0);
    case 'g':
        for (k = 0; k < sizeof(gh) / sizeof(gh[0]); k++) {
            if ((e = shaped_end(p, len, i, gh[k], is_alnum, 30, 0)) != 0) {
                return e;
            }
        }
        return shaped_end(p, len, i, "github_pat_", is_word, 20, 0);
    default:
        return 0;
    }
}

/* "bearer TOKEN": the token's [start, end) or 0. */
static size_t bearer_token(const unsigned char *p, size_t len, size_t i, size_t *ret_start)
{
    size_t s = i + 6;
    size_t e;
    size_t k;
    int strong = 0;

    if (!has_prefix_ci(p, len, i, "bearer") || s >= len || !is_blank(p[s])) {
        return 0;
    }
    while (s < len && is_blank(p[s])) {
        s++;
    }
    e = run_end(p, len, s, is_tok, SIZE_MAX);
    if (e - s < 8 || (e < len && is_tok(p[e]))) {
        return 0;
    }
    for (k = s; k < e && !strong; k++) {
        strong = !is_alpha(p[k]);
    }
    if (!strong || (e - s >= MARK_LEN && memcmp(p + s, MARK, MARK_LEN) == 0)) {
        return 0;
    }
    *ret_start = s;
    return e;
}

/* ---- the built-in pass ----------------------------------------------------- */

static int builtin(const unsigned char *p, size_t len, struct krc_buf *b, int *ret_count)
{
    struct out o = {p, 0, b, 0, 0};
    size_t skip_kv = 0;
    size_t skip_jwt = 0;
    size_t skip_tok = 0;
    size_t orphan_end = 0;
    size_t orphan = orphan_pem_start(p, len, &orphan_end);
    size_t i = 0;

    while (i < len && o.rc == 0) {
        unsigned char c = p[i];
        size_t e;
        size_t s;

        if (orphan != SIZE_MAX && i >= orphan && i < orphan_end) {
            replace(&o, i, orphan_end);
            i = orphan_end;
            continue;
        }
        if (c == '-' && has_prefix(p, len, i, "-----BEGIN ") &&
            (e = pem_header_end(p, len, i, "-----BEGIN ")) != 0) {
            size_t end = find(p, len, e, "-----END ");
            if (end == SIZE_MAX) {
                replace(&o, e, len);
                i = len;
            } else {
                replace(&o, e, end);
                i = end + 9;
            }
            continue;
        }
        if (c == ':' && has_prefix(p, len, i, "://")) {
            /* scheme://user:password@host */
            size_t lim = len - i - 3 > USERINFO_MAX ? i + 3 + USERINFO_MAX : len;
            size_t colon = 0;
            size_t k;
            for (k = i + 3; k < lim; k++) {
                unsigned char u = p[k];
                if (u == '@' || u == '/' || u == '?' || u == '#' || u <= ' ' || u == '"' ||
                    u == '\'' || u == '<' || u == '>' || u == '\\') {
                    break;
                }
                if (u == ':' && colon == 0) {
                    colon = k;
                }
            }
            if (k < lim && p[k] == '@' && colon != 0 && k > colon + 1 &&
                !(k - colon - 1 == MARK_LEN && memcmp(p + colon + 1, MARK, MARK_LEN) == 0)) {
                replace(&o, colon + 1, k);
                i = k;
                continue;
            }
            i += 3;
            continue;
        }
        if (c == 'h' && has_prefix(p, len, i, "hooks.slack.com/services/")) {
            s = i + 25;
            e = run_end(p, len, s, is_tok, 256);
            if (e > s) {
                replace(&o, s, e);
                i = e;
                continue;
            }
        }
        if (!is_word(c) || (i > 0 && is_word(p[i - 1]))) {
            i++;
            continue;
        }
        /* at the start of a word */
        if ((c == 'b' || c == 'B') && (e = bearer_token(p, len, i, &s)) != 0) {
            replace(&o, s, e);
            i = e;
            continue;
        }
        if (i >= skip_kv) {
            if (try_key_value(&o, len, i, &skip_kv)) {
                i = skip_kv;
                continue;
            }
        }
        if (c == 'e' && i >= skip_jwt && has_prefix(p, len, i, "eyJ")) {
            if ((e = jwt_end(p, len, i, &skip_jwt)) != 0) {
                replace(&o, i, e);
                i = e;
                continue;
            }
        }
        if (i >= skip_tok && (e = token_end(p, len, i)) != 0) {
            replace(&o, i, e);
            i = e;
            continue;
        }
        if (c == 'x' || c == 'g') {
            /* no token can start inside this run either */
            skip_tok = run_end(p, len, i, is_slack_tok, SIZE_MAX);
        }
        i++;
    }
    if (o.rc == 0 && o.copied < len) {
        o.rc = krc_buf_append(b, p + o.copied, len - o.copied);
    }
    *ret_count += o.count;
    return o.rc;
}

/* ---- extra regexes, line by line -------------------------------------------- */

/* Apply every extra regex to the line in `cur` (NUL-terminated, no NUL
 * inside), each on the result of the previous one. */
static int extra_line(const struct krc_redactor *rd, struct krc_buf *cur, int *count)
{
    size_t r;
    int rc = 0;

    for (r = 0; r < rd->n_extra && rc == 0 && cur->len > 0; r++) {
        struct krc_buf next;
        const char *line = krc_buf_str(cur);
        size_t n = cur->len;
        size_t pos = 0;
        int changed = 0;

        /* every byte could become a mark */
        krc_buf_init(&next, n * (MARK_LEN + 1) + 1);
        while (pos < n && rc == 0) {
            size_t so;
            size_t eo;
            if (!krc_pattern_search(&rd->extra[r], line, pos, &so, &eo)) {
                break;
            }
            if (eo == so) {
                /* empty match: keep one byte and go on */
                rc = krc_buf_append(&next, line + pos, so - pos + 1);
                pos = so + 1;
                continue;
            }
            rc = krc_buf_append(&next, line + pos, so - pos);
            rc = rc ? rc : krc_buf_append(&next, MARK, MARK_LEN);
            pos = eo;
            (*count)++;
            changed = 1;
        }
        if (rc == 0 && changed) {
            rc = krc_buf_append(&next, line + pos, n - pos);
            if (rc == 0) {
                struct krc_buf t = *cur;
                *cur = next;
                /* keep the caller's limit: `cur` is reused for the next lines, and
                 * a limit sized for this short line made a longer one fail with
                 * KRC_ETOOBIG (found by fuzz_redact) */
                cur->max = t.max > cur->max ? t.max : cur->max;
                next = t;
            }
        }
        krc_buf_cleanup(&next);
    }
    return rc;
}

static int extras(const struct krc_redactor *rd, const char *s, size_t len, struct krc_buf *b,
                  int *count)
{
    struct krc_buf cur;
    size_t i = 0;
    int rc = 0;

    krc_buf_init(&cur, EXTRA_LINE_MAX);
    while (i < len && rc == 0) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t ll = nl ? (size_t)(nl - (s + i)) : len - i;
        size_t head = ll > EXTRA_LINE_MAX ? EXTRA_LINE_MAX : ll;
        const char *z = memchr(s + i, '\0', head);

        /* regexec stops at a NUL byte: match the line up to it (and only
         * its first EXTRA_LINE_MAX bytes), copy the rest as it is */
        if (z != NULL) {
            head = (size_t)(z - (s + i));
        }
        krc_buf_reset(&cur);
        rc = krc_buf_append(&cur, s + i, head);
        rc = rc ? rc : extra_line(rd, &cur, count);
        rc = rc ? rc : krc_buf_append(b, krc_buf_str(&cur), cur.len);
        if (rc == 0 && ll > head) {
            rc = krc_buf_append(b, s + i + head, ll - head);
        }
        if (rc == 0 && nl != NULL) {
            rc = krc_buf_append_char(b, '\n');
        }
        i += ll + (nl != NULL);
    }
    krc_buf_cleanup(&cur);
    return rc;
}

/* ---- public -------------------------------------------------------------------- */

int krc_redact_new(const char *const *extra, size_t n_extra, struct krc_redactor **ret,
                   struct krc_error *err)
{
    struct krc_redactor *rd;
    size_t i;

    if (n_extra > KRC_REDACT_MAX_EXTRA) {
        return krc_error_set(err, KRC_EINVAL, "too many redaction patterns (%zu, at most %d)",
                             n_extra, KRC_REDACT_MAX_EXTRA);
    }
    rd = krc_calloc(1, sizeof(*rd));
    if (rd == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (n_extra > 0) {
        rd->extra = krc_calloc(n_extra, sizeof(*rd->extra));
        if (rd->extra == NULL) {
            krc_free(rd);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    for (i = 0; i < n_extra; i++) {
        char what[64];
        size_t so;
        size_t eo;
        int rc;
        if (extra[i] == NULL || extra[i][0] == '\0') {
            krc_redact_free(rd);
            return krc_error_set(err, KRC_EINVAL, "redaction pattern %zu is empty", i + 1);
        }
        snprintf(what, sizeof(what), "redaction pattern %zu is not a valid extended regex", i + 1);
        rc = krc_pattern_compile(&rd->extra[i], extra[i], KRC_PATTERN_TEXT, KRC_PATTERN_OFFSETS,
                                 what, err);
        if (rc != 0) {
            krc_redact_free(rd);
            return rc;
        }
        rd->n_extra++;
        if (krc_pattern_search(&rd->extra[i], "", 0, &so, &eo)) {
            krc_redact_free(rd);
            return krc_error_set(err, KRC_EINVAL,
                                 "redaction pattern %zu matches the empty string, so it would "
                                 "redact nothing useful; make it match at least one character",
                                 i + 1);
        }
    }
    *ret = rd;
    return 0;
}

void krc_redact_free(struct krc_redactor *rd)
{
    size_t i;

    if (rd == NULL) {
        return;
    }
    for (i = 0; i < rd->n_extra; i++) {
        krc_pattern_cleanup(&rd->extra[i]);
    }
    krc_free(rd->extra);
    krc_free(rd);
}

/* The built-in scanners, then the extra patterns. A mark of an extra pattern
 * can open a word boundary that the scanners did not see ("pin:1234Authorization:
 * Bearer x" -> "[REDACTED]Authorization: Bearer x"), so the rounds repeat while
 * one still redacts something (at most 3: the text only shrinks into marks), and
 * a second redaction of the output changes nothing (found by fuzz_redact). */
static int with_extras(const struct krc_redactor *rd, const void *data, size_t len,
                       struct krc_buf *out, int *count)
{
    struct krc_buf cur;
    struct krc_buf a;
    struct krc_buf b;
    const unsigned char *in = data;
    size_t in_len = len;
    int rc = 0;

    krc_buf_init(&cur, out->max);
    krc_buf_init(&a, out->max);
    krc_buf_init(&b, out->max);
    for (int round = 0; round < 3 && rc == 0; round++) {
        int before = *count;
        struct krc_buf t;
        krc_buf_reset(&a);
        krc_buf_reset(&b);
        rc = builtin(in, in_len, &a, count);
        if (rc == 0) {
            rc = extras(rd, a.data ? a.data : "", a.len, &b, count);
        }
        if (rc != 0 || *count == before) {
            break; /* nothing redacted in this round: `in` is the result */
        }
        t = cur;
        cur = b;
        b = t;
        in = (const unsigned char *)(cur.data ? cur.data : "");
        in_len = cur.len;
    }
    if (rc == 0) {
        rc = krc_buf_append(out, in, in_len);
    }
    krc_buf_cleanup(&cur);
    krc_buf_cleanup(&a);
    krc_buf_cleanup(&b);
    return rc;
}

int krc_redact_apply(const struct krc_redactor *rd, const void *data, size_t len,
                     struct krc_buf *out, struct krc_error *err)
{
    int count = 0;
    int rc;

    if (rd == NULL || rd->n_extra == 0) {
        rc = builtin(data, len, out, &count);
    } else {
        rc = with_extras(rd, data, len, out, &count);
    }
    if (rc < 0) {
        return krc_error_set(err, rc, "redaction: %s",
                             rc == KRC_ETOOBIG ? "output larger than its limit" : "out of memory");
    }
    return count;
}
