/* "Did you mean": the nearest option key, flag or environment variable to
 * a mistyped one (an optimal-string-alignment distance, case ignored). */
#include "krc/config/config_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Optimal-string-alignment distance between a and b[0..blen), ignoring
 * case; KRC_SUGGEST_MAX_LEN + 1 for words longer than that. */
static size_t edit_distance(const char *a, const char *b, size_t blen)
{
    size_t alen = strlen(a);
    size_t d[KRC_SUGGEST_MAX_LEN + 2][KRC_SUGGEST_MAX_LEN + 2];

    if (alen > KRC_SUGGEST_MAX_LEN || blen > KRC_SUGGEST_MAX_LEN) {
        return KRC_SUGGEST_MAX_LEN + 1;
    }
    for (size_t i = 0; i <= alen; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= blen; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= alen; i++) {
        for (size_t j = 1; j <= blen; j++) {
            int ca = tolower((unsigned char)a[i - 1]);
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (ca != cb);

            if (d[i - 1][j] + 1 < best) {
                best = d[i - 1][j] + 1;
            }
            if (d[i][j - 1] + 1 < best) {
                best = d[i][j - 1] + 1;
            }
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[alen][blen];
}

void krc_config_suggest_init(struct krc_suggestion *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->best_len = 0;
    s->best_d = KRC_SUGGEST_MAX_LEN + 1;
}

void krc_config_suggest_consider(struct krc_suggestion *s, const char *cand, size_t len)
{
    size_t d = edit_distance(s->word, cand, len);
    size_t wl = strlen(s->word);
    /* Close enough to be a typo: 1 edit for short words, up to 3 for long ones. */
    size_t limit = wl / 4 < 1 ? 1 : wl / 4 > 3 ? 3 : wl / 4;

    if (d <= limit && d < s->best_d) {
        s->best = cand;
        s->best_len = len;
        s->best_d = d;
    }
}

/* " (did you mean \"clusterName\"?)" for a file key, or "" (static storage per call site). */
const char *krc_config_suggest_key(const char *word, char *out, size_t outsz)
{
    struct krc_suggestion s;

    krc_config_suggest_init(&s, word);
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        krc_config_suggest_consider(&s, o->key, strlen(o->key));
    }
    out[0] = '\0';
    if (s.best != NULL) {
        snprintf(out, outsz, " (did you mean \"%.*s\"?)", (int)s.best_len, s.best);
    }
    return out;
}

/* Same for a key of a route or silence, from its "a|b|c" list. */
const char *krc_config_suggest_allowed(const char *word, const char *allowed, char *out,
                                       size_t outsz)
{
    struct krc_suggestion s;

    krc_config_suggest_init(&s, word);
    for (const char *p = allowed; p != NULL && *p != '\0';) {
        const char *bar = strchr(p, '|');
        size_t l = bar != NULL ? (size_t)(bar - p) : strlen(p);
        krc_config_suggest_consider(&s, p, l);
        p = bar != NULL ? bar + 1 : NULL;
    }
    out[0] = '\0';
    if (s.best != NULL) {
        snprintf(out, outsz, "did you mean \"%.*s\"? ", (int)s.best_len, s.best);
    }
    return out;
}

/* "fooBarBaz" -> "foo-bar-baz" */
static void dashed(const char *key, char *out, size_t outsz)
{
    size_t o = 0;

    for (const char *k = key; *k != '\0' && o + 2 < outsz; k++) {
        if (isupper((unsigned char)*k)) {
            out[o++] = '-';
            out[o++] = (char)tolower((unsigned char)*k);
        } else {
            out[o++] = *k;
        }
    }
    out[o] = '\0';
}

/* For an unknown --flag: the nearest flag, or how to set an option that
 * has no flag (secrets, lists, routes). */
void krc_config_suggest_flag(const char *word, char *out, size_t outsz)
{
    static const char *const extra[] = {"kubeconfig", "context", "config"};
    struct krc_suggestion s;
    char d[128];

    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        dashed(o->key, d, sizeof(d));
        if (o->flag == NULL && strcasecmp(d, word) == 0) {
            if (o->env != NULL) {
                snprintf(out, outsz,
                         "; %s has no flag: set the environment variable %s or the key "
                         "%s in the --config file",
                         o->key, o->env, o->key);
            } else {
                snprintf(out, outsz, "; %s has no flag: set it in the --config file", o->key);
            }
            return;
        }
    }
    krc_config_suggest_init(&s, word);
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        if (o->flag != NULL) {
            krc_config_suggest_consider(&s, o->flag, strlen(o->flag));
        }
    }
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
        krc_config_suggest_consider(&s, extra[i], strlen(extra[i]));
    }
    out[0] = '\0';
    if (s.best != NULL) {
        snprintf(out, outsz, "; did you mean --%.*s?", (int)s.best_len, s.best);
    }
}
