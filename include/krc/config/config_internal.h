/* The configuration loader's parts, private to src/config/config*.c (the
 * interface is config/config.h):
 *   config.c          the option table, values, defaults, flags, `krc run`'s
 *                     arguments and the redactor of a configuration
 *   config_env.c      the environment (the Go tool's variables) and its typos
 *   config_file.c     the YAML file: keys, routes, silences, destinations
 *   config_check.c    rules between options, the database URL and password
 *   config_suggest.c  "did you mean" for keys, flags and variables */
#ifndef KRC_CONFIG_INTERNAL_H
#define KRC_CONFIG_INTERNAL_H

#include <stddef.h>

#include "krc/config/config.h"
#include "krc/util/error.h"

/* Set one option from text; `where` names the source for messages. */
int krc_config_set_value(struct krc_config *cfg, const struct krc_config_option *o, const char *v,
                         const char *where, struct krc_error *err);
/* 1 when v is one of `allowed` ("a|b|c"), ignoring case. */
int krc_config_allowed_value(const char *allowed, const char *v);

/* Free cfg's routes and silences (config_file.c). */
void krc_config_routes_free(struct krc_config *cfg);
void krc_config_silences_free(struct krc_config *cfg);

/* --- "did you mean" (config_suggest.c) --- */
#define KRC_SUGGEST_MAX_LEN 63

struct krc_suggestion {
    const char *word;
    const char *best;
    size_t best_len;
    size_t best_d;
};

void krc_config_suggest_init(struct krc_suggestion *s, const char *word);
/* cand[0..len) becomes the suggestion when it is close enough to the word
 * to be a typo and closer than the best so far. */
void krc_config_suggest_consider(struct krc_suggestion *s, const char *cand, size_t len);
/* " (did you mean \"clusterName\"?)" for a file key, or "". */
const char *krc_config_suggest_key(const char *word, char *out, size_t outsz);
/* "did you mean \"x\"? " among `allowed` ("a|b|c"), or "". */
const char *krc_config_suggest_allowed(const char *word, const char *allowed, char *out,
                                       size_t outsz);
/* "; did you mean --flag?" for an unknown flag, or "". */
void krc_config_suggest_flag(const char *word, char *out, size_t outsz);

#endif
