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

/* Is p[s..e) a label as private key headers have them: upper-case letters
 * and digits, words joined by one space ("RSA PRIVATE KEY", "OPENSSH PRIVATE
 * KEY", "PGP PRIVATE KEY BLOCK")? A header with any other label (RFC 7468
 * allows more) may hold text that is not key material: "-----BEGIN RSA
 * client_secret: x PRIVATE KEY-----" (fuzz_redact). */
static int pem_label_plain(const unsigned char *p, size_t s, size_t e)
{
    for (size_t k = s; k < e; k++) {
        if (!(is_upper_alnum(p[k]) || (p[k] == ' ' && k > s && p[k - 1] != ' '))) {
            return 0;
        }
    }
    return 1;
}

/* At "-----BEGIN ": the end of the header line "-----BEGIN X PRIVATE KEY-----"
 * (index after the dashes), or 0 when it is not a private key header.
 * *ret_plain: the label is pem_label_plain (else the caller redacts it too). */
static size_t pem_header_end(const unsigned char *p, size_t len, size_t i, const char *kw,
                             int *ret_plain)
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
        *ret_plain = pem_label_plain(p, j, k);
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
    int plain;

    if (end_at == SIZE_MAX || (begin_at != SIZE_MAX && begin_at < end_at) ||
        pem_header_end(p, len, end_at, "-----END ", &plain) == 0) {
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

/* A word of a list with its length (the lists are compared with every key
 * followed by a separator: no strlen per comparison). */
struct lit {
    const char *s;
    size_t n;
};

/* clang-format off */
#define LIT(s) {(s), sizeof(s) - 1}
#define LIST_LEN(list) (sizeof(list) / sizeof((list)[0]))
/* clang-format on */

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

static int is_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

static int is_lower(unsigned char c)
{
    return c >= 'a' && c <= 'z';
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
static int try_key_value(struct out *o, size_t len, size_t i, size_t *ret_skip)
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

/* The end of a token body of class `cls` starting at s: at least `min` (at
 * most `max`, 0: no limit) characters, not followed by another one; or 0. */
static size_t body_end(const unsigned char *p, size_t len, size_t s, int (*cls)(unsigned char),
                       size_t min, size_t max)
{
    size_t e = run_end(p, len, s, cls, max ? max + 1 : SIZE_MAX);

    if (e - s < min || (max && e - s > max)) {
        return 0;
    }
    return e;
}

/* A fixed-shape token: prefix then a body (body_end). */
static size_t shaped_end(const unsigned char *p, size_t len, size_t i, const char *prefix,
                         int (*cls)(unsigned char), size_t min, size_t max)
{
    if (!has_prefix(p, len, i, prefix)) {
        return 0;
    }
    return body_end(p, len, i + strlen(prefix), cls, min, max);
}

static int is_slack_tok(unsigned char c)
{
    return is_alnum(c) || c == '-';
}

static int is_tok_body(unsigned char c)
{
    return is_word(c) || c == '-';
}

/* Provider tokens: a prefix followed by at least `min` characters of
 * [A-Za-z0-9_-], listed by the prefix's first character (token_end
 * dispatches on it; within a list the first matching prefix wins). */
struct prefixed {
    struct lit prefix;
    size_t min;
};

static const struct prefixed tokens_d[] = {
    {LIT("dckr_pat_"), 20}, /* Docker Hub */
    {LIT("dop_v1_"), 64},   /* DigitalOcean */
};
static const struct prefixed tokens_g[] = {
    {LIT("glpat-"), 20},  /* GitLab personal, project and group access tokens */
    {LIT("glptt-"), 20},  /* GitLab pipeline trigger */
    {LIT("gldt-"), 20},   /* GitLab deploy token */
    {LIT("glrt-"), 20},   /* GitLab runner */
    {LIT("glcbt-"), 20},  /* GitLab CI/CD job */
    {LIT("glsoat-"), 20}, /* GitLab OAuth application secret */
};
static const struct prefixed tokens_h[] = {
    {LIT("hvs."), 20}, /* HashiCorp Vault service, batch and recovery tokens */
    {LIT("hvb."), 20},
    {LIT("hvr."), 20},
};
static const struct prefixed tokens_n[] = {{LIT("npm_"), 36}};     /* npm access token */
static const struct prefixed tokens_p[] = {{LIT("pypi-AgE"), 50}}; /* PyPI API token */
static const struct prefixed tokens_r[] = {
    {LIT("rk_live_"), 16}, /* Stripe restricted keys */
    {LIT("rk_test_"), 16}, /* (test mode) */
};
static const struct prefixed tokens_s[] = {
    {LIT("sk_live_"), 16}, /* Stripe secret keys */
    {LIT("sk_test_"), 16}, /* (test mode) */
    {LIT("sk-ant-"), 32},  /* Anthropic */
    {LIT("sk-proj-"), 32}, /* OpenAI */
    {LIT("shpat_"), 32},   /* Shopify */
};
static const struct prefixed tokens_w[] = {{LIT("whsec_"), 24}}; /* Stripe webhook signing */
static const struct prefixed tokens_y[] = {{LIT("ya29."), 20}};  /* Google OAuth access token */
static const struct prefixed tokens_S[] = {{LIT("SG."), 20}};    /* SendGrid: SG.<id>.<secret> */

/* A token of one of the n prefixes of `list` at i, or 0. */
static size_t prefixed_end(const unsigned char *p, size_t len, size_t i,
                           const struct prefixed *list, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const struct lit *pre = &list[k].prefix;
        size_t e;
        if (len - i < pre->n || memcmp(p + i, pre->s, pre->n) != 0) {
            continue;
        }
        e = body_end(p, len, i + pre->n, is_tok_body, list[k].min, 0);
        if (e != 0 && pre->s[0] == 'S' && e < len && p[e] == '.') {
            e = run_end(p, len, e + 1, is_tok_body, SIZE_MAX); /* SendGrid's second part */
        }
        if (e != 0) {
            return e;
        }
    }
    return 0;
}

#define PREFIXED_END(p, len, i, list) prefixed_end((p), (len), (i), (list), LIST_LEN(list))

static int is_b64_std(unsigned char c)
{
    return is_alnum(c) || c == '+' || c == '/';
}

/* An AWS secret access key standing alone: exactly 40 characters of
 * [A-Za-z0-9+/] with an upper-case letter, a lower-case letter and a digit
 * (a git SHA-1 is 40 lower-case hex digits: not one), at most 3 '/' and not
 * ending in one (a relative path is not one either), with no token
 * character on either side. */
static size_t aws_secret_end(const unsigned char *p, size_t len, size_t i)
{
    size_t e;
    int up = 0;
    int lo = 0;
    int dig = 0;
    int slashes = 0;

    if (i > 0 && (p[i - 1] == '/' || p[i - 1] == '+' || p[i - 1] == '=' || p[i - 1] == '.' ||
                  p[i - 1] == '-' || p[i - 1] == '~')) {
        return 0;
    }
    /* the 40th character and the one after it first: at most word starts
     * they rule the key out without a scan of the 40 */
    if (len - i < 40 || !is_b64_std(p[i + 39]) || p[i + 39] == '/' ||
        (len - i > 40 && is_tok(p[i + 40]))) {
        return 0;
    }
    e = run_end(p, len, i, is_b64_std, 41);
    if (e - i != 40 || (e < len && is_tok(p[e]))) {
        return 0;
    }
    for (size_t k = i; k < e; k++) {
        up |= is_upper(p[k]);
        lo |= is_lower(p[k]);
        dig |= is_digit(p[k]);
        slashes += p[k] == '/';
    }
    return up && lo && dig && slashes <= 3 && p[e - 1] != '/' ? e : 0;
}

/* AWS access key ids and GCP API keys at an 'A'. */
static size_t aws_gcp_end(const unsigned char *p, size_t len, size_t i)
{
    static const char *const aws[] = {"AKIA", "ASIA", "AGPA", "AIDA", "AROA",
                                      "AIPA", "ANPA", "ANVA", "ABIA", "ACCA"};
    size_t e;

    for (size_t k = 0; k < LIST_LEN(aws); k++) {
        if ((e = shaped_end(p, len, i, aws[k], is_upper_alnum, 16, 16)) != 0 &&
            (e == len || !is_alnum(p[e]))) {
            return e;
        }
    }
    return shaped_end(p, len, i, "AIza", is_b64url, 35, 35);
}

/* GitHub tokens at a 'g'. */
static size_t github_end(const unsigned char *p, size_t len, size_t i)
{
    static const char *const gh[] = {"ghp_", "gho_", "ghs_", "ghu_", "ghr_"};
    size_t e;

    for (size_t k = 0; k < LIST_LEN(gh); k++) {
        if ((e = shaped_end(p, len, i, gh[k], is_alnum, 30, 0)) != 0) {
            return e;
        }
    }
    return shaped_end(p, len, i, "github_pat_", is_word, 20, 0);
}

/* A token of a known shape starting at i (a word start): dispatched on its
 * first character, so most words cost one switch, and an AWS secret key. */
static size_t token_end(const unsigned char *p, size_t len, size_t i)
{
    size_t e = 0;

    switch (p[i]) {
    case 'A':
        e = aws_gcp_end(p, len, i);
        break;
    case 'x':
        if (has_prefix(p, len, i, "xox") && len - i > 4 && strchr("abposr", p[i + 3]) != NULL &&
            p[i + 3] != '\0' && p[i + 4] == '-') {
            return shaped_end(p, len, i, "xox", is_slack_tok, 12, 0);
        }
        e = shaped_end(p, len, i, "xapp-", is_slack_tok, 12, 0);
        break;
    case 'g':
        e = PREFIXED_END(p, len, i, tokens_g);
        e = e != 0 ? e : github_end(p, len, i);
        break;
    case 'd':
        e = PREFIXED_END(p, len, i, tokens_d);
        break;
    case 'h':
        e = PREFIXED_END(p, len, i, tokens_h);
        break;
    case 'n':
        e = PREFIXED_END(p, len, i, tokens_n);
        break;
    case 'p':
        e = PREFIXED_END(p, len, i, tokens_p);
        break;
    case 'r':
        e = PREFIXED_END(p, len, i, tokens_r);
        break;
    case 's':
        e = PREFIXED_END(p, len, i, tokens_s);
        break;
    case 'w':
        e = PREFIXED_END(p, len, i, tokens_w);
        break;
    case 'y':
        e = PREFIXED_END(p, len, i, tokens_y);
        break;
    case 'S':
        e = PREFIXED_END(p, len, i, tokens_S);
        break;
    default:
        break;
    }
    if (e != 0) {
        return e;
    }
    return is_alnum(p[i]) ? aws_secret_end(p, len, i) : 0;
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
    /* "Bearer aws_secret_access_key = x": the word is the key of a pair,
     * whose value the key rule takes (fuzz_redact) */
    for (k = e; k < len && (p[k] == ' ' || p[k] == '\t'); k++) {
    }
    if (k < len && (p[k] == '=' || p[k] == ':')) {
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
    size_t orphan_end = 0;
    size_t orphan = orphan_pem_start(p, len, &orphan_end);
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
            (e = pem_header_end(p, len, i, "-----BEGIN ", &plain)) != 0) {
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
        if ((e = token_end(p, len, i)) != 0) {
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
