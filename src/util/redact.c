/* Redaction (include/krc/util/redact.h, docs/configuration.md "Redaction"):
 * the built-in pass over a text (private key blocks, URL passwords, Slack
 * webhooks, bearer tokens, key=value by the key rule in redact_keys.c, JWTs
 * and token shapes in redact_tokens.c), then the configured patterns line by
 * line; and the redactor's life cycle. */
#include "krc/util/redact.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/mem.h"
#include "krc/util/pattern.h"
#include "redact_private.h"

struct krc_redactor {
    struct krc_pattern *extra;
    size_t n_extra;
};

#define EXTRA_LINE_MAX 8192 /* longer lines are matched on their first bytes */

/* ---- the built-in pass ----------------------------------------------------- */

static int builtin(const unsigned char *p, size_t len, struct krc_buf *b, int *ret_count)
{
    struct out o = {p, 0, b, 0, 0};
    size_t skip_kv = 0;
    size_t skip_jwt = 0;
    size_t orphan_end = 0;
    size_t orphan = krc_redact_orphan_pem_start(p, len, &orphan_end);
    size_t i = 0;
    int plain = 1;

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
            (e = krc_redact_pem_header_end(p, len, i, "-----BEGIN ", &plain)) != 0) {
            size_t end = find(p, len, e, "-----END ");
            if (!plain) {
                e = i + 11; /* the label is no label: it goes with the key */
            }
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
        if ((c == 'b' || c == 'B') && (e = krc_redact_bearer_token(p, len, i, &s)) != 0) {
            replace(&o, s, e);
            i = e;
            continue;
        }
        if (i >= skip_kv) {
            if (krc_redact_try_key_value(&o, len, i, &skip_kv)) {
                i = skip_kv;
                continue;
            }
        }
        if (c == 'e' && i >= skip_jwt && has_prefix(p, len, i, "eyJ")) {
            if ((e = krc_redact_jwt_end(p, len, i, &skip_jwt)) != 0) {
                replace(&o, i, e);
                i = e;
                continue;
            }
        }
        if ((e = krc_redact_token_end(p, len, i)) != 0) {
            replace(&o, i, e);
            i = e;
            continue;
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

int krc_redact_in_place(const struct krc_redactor *rd, const char *key, char **s,
                        struct krc_error *err)
{
    struct krc_buf b;
    size_t len;
    int n;

    if (*s == NULL) {
        return 0;
    }
    len = strlen(*s);
    /* a redaction turns at least 1 byte into MARK_LEN; 3x is past any text's
     * worst case (a run of "pwd=a "), so ETOOBIG is only a guard */
    krc_buf_init(&b, 3 * len + 1024);
    n = key != NULL ? krc_redact_field(rd, key, *s, len, &b, err)
                    : krc_redact_apply(rd, *s, len, &b, err);
    if (n > 0) {
        char *red = krc_buf_take(&b);
        if (red == NULL) {
            n = krc_error_set(err, KRC_ENOMEM, "redaction: out of memory");
        } else {
            krc_free(*s);
            *s = red;
        }
    }
    krc_buf_cleanup(&b);
    if (n < 0) {
        krc_free(*s);
        *s = krc_strdup(MARK);
    }
    return n;
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
