/* The key rule and key=value (include/krc/util/redact.h, docs/configuration.md
 * "Redaction"): whether a key names a secret (krc_redact_secret_key,
 * krc_redact_field), and the value after such a key in key=value, key: value,
 * JSON and name/value pairs, found by the built-in pass (redact.c). */
#include <stdint.h>
#include <string.h>

#include "krc/util/buf.h"
#include "redact_private.h"

/* The key rule (docs/configuration.md, "Redaction"). A key is split into
 * words: runs of letters, cut at every other character ('_', '-', '.', '/',
 * ':', digits, ...) and at camelCase steps ("dbPassword" -> db password,
 * "APIKey" -> api key); digit runs are words of their own. Trailing words
 * that only qualify the one before (a digit run, a single letter, "value",
 * "raw", "base", "hex", "encoded": DB_PASS_2, TOKEN_V2, password_b64,
 * secret_value) are passed over. The last word left decides:
 *   - one of secret_words, except "key" after one of plain_key_words
 *     (public_key, cache_key, sort_key are not secrets);
 *   - or it ends with one of secret_suffixes (PGPASSWORD, csrftoken,
 *     clientsecret, JSESSIONID);
 *   - or it and the word before spell "sessionid"/"sessid" (session_id).
 * So passed, bypass, compass, author, keyboard, monkey, tokens, max_tokens,
 * session_count, secret_name, password_file and token_expiry are not
 * secrets: the last word is another word. */
/* Each list is sorted by length: word_in and the suffix check stop at the
 * first word longer than the one they look for (test_key_rule_lists checks
 * every word). */
static const struct lit secret_words[] = {
    LIT("pwd"),         LIT("sid"),           LIT("key"),        LIT("sig"),
    LIT("jwt"),         LIT("pass"),          LIT("auth"),       LIT("token"),
    LIT("creds"),       LIT("passwd"),        LIT("secret"),     LIT("cookie"),
    LIT("sessid"),      LIT("apikey"),        LIT("session"),    LIT("private"),
    LIT("password"),    LIT("sessionid"),     LIT("accesskey"),  LIT("secretkey"),
    LIT("signature"),   LIT("passphrase"),    LIT("privatekey"), LIT("credential"),
    LIT("credentials"), LIT("authorization"),
};

static const struct lit secret_suffixes[] = {
    LIT("pwd"),        LIT("token"),       LIT("passwd"),        LIT("secret"),
    LIT("apikey"),     LIT("sessid"),      LIT("password"),      LIT("secretkey"),
    LIT("accesskey"),  LIT("sessionid"),   LIT("passphrase"),    LIT("privatekey"),
    LIT("credential"), LIT("credentials"), LIT("authorization"),
};

/* "<word> key" that names a key of a table, a cache or a public key */
static const struct lit plain_key_words[] = {
    LIT("pub"),     LIT("row"),     LIT("map"),       LIT("sort"),        LIT("hash"),
    LIT("cache"),   LIT("shard"),   LIT("dedup"),     LIT("range"),       LIT("index"),
    LIT("group"),   LIT("public"),  LIT("object"),    LIT("lookup"),      LIT("unique"),
    LIT("primary"), LIT("foreign"), LIT("partition"), LIT("idempotency"),
};

static const struct lit qualifier_words[] = {
    LIT("raw"), LIT("hex"), LIT("base"), LIT("value"), LIT("encoded"),
};

#define KEY_WORDS_MAX 8 /* the last words of a key kept while splitting it */

struct key_word {
    const unsigned char *p;
    size_t n;
};

/* Is p[0..n) the lower-case word s[0..n), ignoring case? */
static int eq_ci(const unsigned char *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (lower(p[i]) != (unsigned char)s[i]) {
            return 0;
        }
    }
    return 1;
}

static int word_is(const struct key_word *w, const char *s, size_t n)
{
    return w->n == n && eq_ci(w->p, s, n);
}

#define WORD_IS(w, s) word_is((w), (s), sizeof(s) - 1)

/* Is w one of the n words of `list` (sorted by length)? */
static int word_in(const struct key_word *w, const struct lit *list, size_t n)
{
    for (size_t i = 0; i < n && list[i].n <= w->n; i++) {
        if (word_is(w, list[i].s, list[i].n)) {
            return 1;
        }
    }
    return 0;
}

#define IN_LIST(w, list) word_in((w), (list), LIST_LEN(list))

static int word_ends_with(const struct key_word *w, const struct lit *s)
{
    return w->n > s->n && eq_ci(w->p + w->n - s->n, s->s, s->n);
}

/* Split k[0..n) into words; keeps the last KEY_WORDS_MAX in w (oldest
 * first) and returns how many were kept. */
static size_t key_words(const unsigned char *k, size_t n, struct key_word *w)
{
    size_t nw = 0;
    size_t i = 0;

    while (i < n) {
        size_t s = i;
        if (!is_alnum(k[i])) {
            i++;
            continue;
        }
        if (is_digit(k[i])) {
            while (i < n && is_digit(k[i])) {
                i++;
            }
        } else {
            for (i++; i < n && is_alpha(k[i]); i++) {
                if (is_upper(k[i]) &&
                    (is_lower(k[i - 1]) || (i + 1 < n && is_lower(k[i + 1]) && i - 1 > s))) {
                    break; /* "dbPassword", "APIKey" */
                }
            }
        }
        if (nw == KEY_WORDS_MAX) {
            memmove(w, w + 1, (KEY_WORDS_MAX - 1) * sizeof(*w));
            nw--;
        }
        w[nw].p = k + s;
        w[nw].n = i - s;
        nw++;
    }
    return nw;
}

static int is_qualifier(const struct key_word *w)
{
    size_t i;

    for (i = 0; i < w->n && is_digit(w->p[i]); i++) {
    }
    return i == w->n || w->n == 1 || IN_LIST(w, qualifier_words);
}

/* Does the key k[0..n) name a secret? (the rule above) */
static int is_secret_key(const unsigned char *k, size_t n)
{
    struct key_word w[KEY_WORDS_MAX];
    size_t nw = key_words(k, n, w);
    const struct key_word *last;
    const struct key_word *prev;
    size_t i;

    while (nw > 1 && is_qualifier(&w[nw - 1])) {
        nw--;
    }
    if (nw == 0) {
        return 0;
    }
    last = &w[nw - 1];
    prev = nw > 1 ? &w[nw - 2] : NULL;
    if (IN_LIST(last, secret_words)) {
        return !(WORD_IS(last, "key") && prev != NULL && IN_LIST(prev, plain_key_words));
    }
    for (i = 0; i < LIST_LEN(secret_suffixes) && secret_suffixes[i].n < last->n; i++) {
        if (word_ends_with(last, &secret_suffixes[i])) {
            return 1;
        }
    }
    return prev != NULL && WORD_IS(last, "id") &&
           (WORD_IS(prev, "session") || WORD_IS(prev, "sess"));
}

/* Is the last word of k[0..n) (qualifiers passed over) `s`? */
static int key_last_word_is(const unsigned char *k, size_t n, const char *s, size_t sn)
{
    struct key_word w[KEY_WORDS_MAX];
    size_t nw = key_words(k, n, w);

    while (nw > 1 && is_qualifier(&w[nw - 1])) {
        nw--;
    }
    return nw > 0 && word_is(&w[nw - 1], s, sn);
}

static int is_value_end(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == ' ' || c == ',' || c == ';' || c == '&' || c == '"' ||
           c == '\'' || c == ')' || c == '}' || c == ']' || c == '<' || c == '>' || c == '\\';
}

#define ESC_MAX 16 /* backslashes before a quote: JSON in JSON in JSON ... */

/* Is there a double quote escaped by exactly nb backslashes at j (\" in a
 * JSON string, \\\" one level deeper, ...; nb 0: a plain quote)? */
static int esc_quote_at(const unsigned char *p, size_t len, size_t j, size_t nb)
{
    size_t k;

    for (k = 0; k < nb; k++) {
        if (j + k >= len || p[j + k] != '\\') {
            return 0;
        }
    }
    return j + nb < len && p[j + nb] == '"';
}

/* The number of backslashes right before p[i] (at most ESC_MAX + 1). */
static size_t backslashes_before(const unsigned char *p, size_t i)
{
    size_t n = 0;

    while (i > n && n <= ESC_MAX && p[i - 1 - n] == '\\') {
        n++;
    }
    return n;
}

static int is_mark_at(const unsigned char *p, size_t len, size_t j)
{
    return len - j >= MARK_LEN && memcmp(p + j, MARK, MARK_LEN) == 0;
}

/* The value starting at j (after the separator and its blanks): quoted
 * ('...', "...", or a quote escaped by backslashes: \"...\" in a JSON
 * string, closed by as many) or bare. Sets [*vs, *ve); *ret_end is past a
 * closing quote. With `scheme`, a leading auth scheme word ("Bearer abc")
 * stays out of the value. */
static void value_span(const unsigned char *p, size_t len, size_t j, int scheme, size_t *vs,
                       size_t *ve, size_t *ret_end)
{
    unsigned char q = 0;
    int escq = 0;
    size_t esc;
    size_t e;

    /* the value's own quote decides, whatever the key's was: a key=\"v w\"
     * pair inside a JSON string has a bare key and an escaped quote */
    for (esc = 0; j + esc < len && esc <= ESC_MAX && p[j + esc] == '\\'; esc++) {
    }
    if (esc > 0 && esc <= ESC_MAX && esc_quote_at(p, len, j, esc)) {
        escq = 1;
        j += esc + 1;
    } else if (j < len && (p[j] == '"' || p[j] == '\'')) {
        q = p[j++];
    }
    *vs = j;
    if (scheme) {
        /* keep the scheme: "Bearer abc" -> "Bearer [REDACTED]", also when
         * the token is already the mark (else a second pass redacted the
         * scheme: "[REDACTED] [REDACTED]"; found by tests/fuzz/fuzz_redact) */
        size_t w = run_end(p, len, j, is_alpha, 32);
        if (w > j && w < len && p[w] == ' ' && w + 1 < len &&
            (is_tok(p[w + 1]) || is_mark_at(p, len, w + 1))) {
            *vs = w + 1;
        }
    }
    if (q != 0 || escq) {
        size_t lim = len - *vs > QUOTED_MAX ? *vs + QUOTED_MAX : len;
        for (e = *vs; e < lim && p[e] != '\n'; e++) {
            if (escq) {
                /* the closing quote has exactly esc backslashes before it
                 * (more: a quote escaped deeper, inside the value) */
                if (p[e] == '"' && e - *vs >= esc && backslashes_before(p, e) == esc) {
                    e -= esc;
                    break;
                }
                continue;
            }
            if (p[e] == q) {
                break;
            }
            if (p[e] == '\\' && e + 1 < lim) {
                e++;
            }
        }
        *ve = e;
        *ret_end = e < lim && p[e] != '\n' ? e + (escq ? esc + 1 : 1) : e;
    } else {
        for (e = *vs; e < len && !is_value_end(p[e]); e++) {
        }
        *ve = e;
        *ret_end = e;
    }
}

/* A value not worth redacting: empty, null, or already the mark ("[REDACTED]"
 * ends a bare value at its ']', a value end, so the mark is compared past
 * ve, or a second pass would make it "[REDACTED]]"). */
static int value_is_empty(const unsigned char *p, size_t len, size_t vs, size_t ve)
{
    return ve == vs || (ve - vs == 4 && memcmp(p + vs, "null", 4) == 0) || is_mark_at(p, len, vs);
}

/* "session = ort.InferenceSession(path)": a line of source code (a
 * traceback shows them), not a secret: a bare value after a spaced '=' or
 * ':' that is a (dotted) name called with '('. */
static int is_code_call(const unsigned char *p, size_t len, size_t kend, size_t vs, size_t ve)
{
    size_t k = vs;

    if (kend >= len || !is_blank(p[kend]) || vs == 0 || !is_blank(p[vs - 1])) {
        return 0;
    }
    while (k < ve && (is_word(p[k]) || p[k] == '.')) {
        k++;
    }
    return k > vs && k < ve && p[k] == '(' && !is_digit(p[vs]);
}

/* At j, past the end of a key: its closing quote (when it was opened by one
 * at i - 1 or by \" at i - 2), blanks and a separator (':', ':=', '=', or a
 * blank for "--key value"). Returns the index past the separator and its
 * blanks, or 0 when there is none. */
static size_t separator_end(const unsigned char *p, size_t len, size_t i, size_t j, size_t *ret_esc)
{
    size_t s = i;
    size_t esc;

    /* a quoted key may hold '/' before the word at i ("example.com/db-password":
     * an annotation in a pod's JSON): its opening quote is before that path */
    if (j < len && (p[j] == '"' || p[j] == '\'' || p[j] == '\\')) {
        while (s > 0 && i - s < KEY_MAX && (is_key_char(p[s - 1]) || p[s - 1] == '/')) {
            s--;
        }
    }
    esc = s >= 1 && p[s - 1] == '"' ? backslashes_before(p, s - 1) : 0;
    if (esc > ESC_MAX) {
        esc = 0;
    }
    *ret_esc = esc;
    if (esc > 0 && esc_quote_at(p, len, j, esc)) {
        j += esc + 1;
    } else if (s > 0 && (p[s - 1] == '"' || p[s - 1] == '\'') && j < len && p[j] == p[s - 1]) {
        j++;
    } else if (i >= 2 && p[i - 1] == '-' && p[i - 2] == '-' && (i == 2 || is_blank(p[i - 3])) &&
               j + 1 < len && p[j] == ' ' && p[j + 1] != '-' && !is_blank(p[j + 1])) {
        /* a command line's "--password VALUE" */
        return j + 1;
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
    while (j < len && is_blank(p[j])) {
        j++;
    }
    return j;
}

/* An environment variable as a pod spec writes it: "name": "DB_PASSWORD",
 * "value": "x" (JSON) or name: DB_PASSWORD / value: x (YAML, on the next
 * line). j is where the name's value starts. Returns 1 and redacts the value
 * when the name is a secret's. */
static int try_name_value(struct out *o, size_t len, size_t j, size_t esc, size_t *ret_skip)
{
    const unsigned char *p = o->p;
    size_t ns;
    size_t ne;
    size_t k;
    size_t ks;
    size_t lim;
    size_t esc2;

    value_span(p, len, j, 0, &ns, &ne, &k);
    if (ne == ns || ne - ns > KEY_MAX || !is_secret_key(p + ns, ne - ns)) {
        return 0;
    }
    /* then, within a few bytes: a comma and white space (a newline too) */
    lim = len - k > 64 ? k + 64 : len;
    while (k < lim && (is_blank(p[k]) || p[k] == ',' || p[k] == '\n' || p[k] == '\r')) {
        k++;
    }
    if (esc > 0 && esc_quote_at(p, len, k, esc)) {
        k += esc + 1;
    } else if (k < len && (p[k] == '"' || p[k] == '\'')) {
        k++;
    }
    ks = k;
    if (!has_prefix_ci(p, len, ks, "value") || (ks + 5 < len && is_key_char(p[ks + 5]))) {
        return 0;
    }
    k = separator_end(p, len, ks, ks + 5, &esc2);
    if (k == 0 || k >= len) {
        return 0;
    }
    {
        size_t vs;
        size_t ve;
        size_t end;
        value_span(p, len, k, 0, &vs, &ve, &end);
        if (value_is_empty(p, len, vs, ve)) {
            return 0;
        }
        replace(o, vs, ve);
        *ret_skip = ve;
    }
    return 1;
}

/* Try key=value at i (a word boundary). Returns 1 and redacts on a match;
 * otherwise 0 with *ret_skip = end of the key (no pair can start inside). */
int krc_redact_try_key_value(struct out *o, size_t len, size_t i, size_t *ret_skip)
{
    const unsigned char *p = o->p;
    size_t kend = run_end(p, len, i, is_key_char, KEY_MAX + 1);
    size_t j;
    size_t vs;
    size_t ve;
    size_t end;
    size_t esc;
    int scheme;

    *ret_skip = kend;
    /* The separator first: most words are not followed by one, and it is
     * cheaper than comparing the word with every secret name. */
    j = separator_end(p, len, i, kend, &esc);
    if (j == 0) {
        return 0;
    }
    if (kend - i == 4 && has_prefix_ci(p, len, i, "name")) {
        return try_name_value(o, len, j, esc, ret_skip);
    }
    if (!is_secret_key(p + i, kend - i)) {
        return 0;
    }
    scheme = (kend - i >= 13 && has_prefix_ci(p, len, kend - 13, "authorization")) ||
             key_last_word_is(p + i, kend - i, "auth", 4);
    value_span(p, len, j, scheme, &vs, &ve, &end);
    if (value_is_empty(p, len, vs, ve) || is_code_call(p, len, kend, vs, ve)) {
        return 0;
    }
    if (end == ve && p[ve - 1] == ':' && is_secret_key(p + vs, ve - 1 - vs)) {
        /* "token: api-key: x": a bare "value" that is a secret's key and a
         * ':' is that key; redacting it would leave that key's value */
        return 0;
    }
    replace(o, vs, ve);
    *ret_skip = ve;
    return 1;
}

int krc_redact_secret_key(const char *key, size_t len)
{
    return key != NULL && is_secret_key((const unsigned char *)key, len);
}

int krc_redact_field(const struct krc_redactor *rd, const char *key, const void *data, size_t len,
                     struct krc_buf *out, struct krc_error *err)
{
    if (len > 0 && krc_redact_secret_key(key, key != NULL ? strlen(key) : 0) &&
        !(len == MARK_LEN && memcmp(data, MARK, MARK_LEN) == 0)) {
        int rc = krc_buf_append(out, MARK, MARK_LEN);
        if (rc < 0) {
            return krc_error_set(err, rc, "redaction: %s",
                                 rc == KRC_ETOOBIG ? "output larger than its limit"
                                                   : "out of memory");
        }
        return 1;
    }
    return krc_redact_apply(rd, data, len, out, err);
}
