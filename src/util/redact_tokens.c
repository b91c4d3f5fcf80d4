/* The shapes of secrets that need no key (include/krc/util/redact.h): private
 * key blocks (with or without their BEGIN line), JWTs, bearer tokens,
 * provider tokens by their prefix, cloud keys; each scanner returns where
 * the secret ends, for the built-in pass (redact.c) to replace. */
#include <stdint.h>
#include <string.h>

#include "redact_private.h"

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
size_t krc_redact_pem_header_end(const unsigned char *p, size_t len, size_t i, const char *kw,
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
size_t krc_redact_orphan_pem_start(const unsigned char *p, size_t len, size_t *ret_end_at)
{
    size_t end_at = find(p, len, 0, "-----END ");
    size_t begin_at = find(p, len, 0, "-----BEGIN ");
    size_t s;
    int plain;

    if (end_at == SIZE_MAX || (begin_at != SIZE_MAX && begin_at < end_at) ||
        krc_redact_pem_header_end(p, len, end_at, "-----END ", &plain) == 0) {
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

/* ---- token shapes ---------------------------------------------------------- */

/* JWT at i ("eyJ"): header.payload.signature, base64url. Returns its end or
 * 0; *ret_skip is where the next attempt may start. */
size_t krc_redact_jwt_end(const unsigned char *p, size_t len, size_t i, size_t *ret_skip)
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
size_t krc_redact_token_end(const unsigned char *p, size_t len, size_t i)
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
size_t krc_redact_bearer_token(const unsigned char *p, size_t len, size_t i, size_t *ret_start)
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
