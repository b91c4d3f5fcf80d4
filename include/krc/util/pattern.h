/* Patterns: one rule, everywhere a user names pods or matches text (the
 * Go tool's filters, routes, silences, log-ignore and redaction patterns).
 *
 * A name pattern is *plain* when it is made only of the characters the named
 * field can hold: a namespace or a container name is a DNS label ([a-z0-9-]),
 * a pod name a DNS subdomain ([a-z0-9.-]). A plain pattern matches the whole
 * value (namespace, container) or its beginning (pod name). Anything else is
 * a regular expression searched anywhere in the value, like Go's
 * regexp.MatchString (anchor it with ^...$ to match whole names): POSIX
 * extended syntax, with Go's \d \w \s \D \W \S accepted. An absent or empty
 * pattern, or "*", matches anything.
 *
 * Text patterns (log-ignore, redaction) are always regular expressions, with
 * the same syntax. Patterns are compiled once, when the configuration is
 * (re)loaded; matching allocates nothing and is safe from any thread. */
#ifndef KRC_PATTERN_H
#define KRC_PATTERN_H

#include <regex.h>
#include <stddef.h>

#include "krc/util/error.h"

enum krc_pattern_field {
    KRC_PATTERN_NAMESPACE, /* plain: exact name */
    KRC_PATTERN_POD,       /* plain: name prefix */
    KRC_PATTERN_CONTAINER, /* plain: exact name */
    KRC_PATTERN_TEXT,      /* always a regular expression */
};

/* compile flags for text patterns */
#define KRC_PATTERN_NEWLINE 1u /* '.' and [^...] do not match '\n'; ^ $ match at lines */
#define KRC_PATTERN_OFFSETS 2u /* krc_pattern_search reports where the match is */

struct krc_pattern {
    char *text; /* as written; NULL for "any" */
    int kind;   /* private */
    regex_t re; /* private: valid when the pattern is a regular expression */
};

/* 1 when `text` is plain for `field` (never for KRC_PATTERN_TEXT). */
int krc_pattern_is_plain(const char *text, enum krc_pattern_field field);

/* Compile `text` (NULL, "" or "*": match anything, except for a text
 * pattern, where it is an error). Errors name `what` and quote the
 * pattern: `what: invalid regular expression "x[": ...`. KRC_EINVAL,
 * KRC_ENOMEM. On error *p needs no cleanup. */
int krc_pattern_compile(struct krc_pattern *p, const char *text, enum krc_pattern_field field,
                        unsigned flags, const char *what, struct krc_error *err);
void krc_pattern_cleanup(struct krc_pattern *p);

/* A comma-separated list of name patterns ("a, b,^team-": blanks around
 * entries trimmed, empty entries skipped), each compiled as above with
 * `what` naming the setting. *ret (krc_pattern_list_free) holds *ret_n
 * patterns; NULL and 0 for a NULL or empty list. KRC_EINVAL, KRC_ENOMEM
 * (nothing to free then). */
int krc_pattern_list_compile(const char *list, enum krc_pattern_field field, const char *what,
                             struct krc_pattern **ret, size_t *ret_n, struct krc_error *err);
void krc_pattern_list_free(struct krc_pattern *list, size_t n);

/* 1 when the pattern matches `value` (NUL-terminated; NULL matches only an
 * "any" pattern). */
int krc_pattern_match(const struct krc_pattern *p, const char *value);

/* Text patterns compiled with KRC_PATTERN_OFFSETS: find the first match in
 * value at or after `from` (REG_NOTBOL when from > 0). 1 and *ret_start,
 * *ret_end (offsets into value), or 0. */
int krc_pattern_search(const struct krc_pattern *p, const char *value, size_t from,
                       size_t *ret_start, size_t *ret_end);

/* 1 when `value` matches all three (each may be NULL: any) of a route or a
 * silence. */
int krc_pattern_match_pod(const struct krc_pattern *ns, const struct krc_pattern *pod,
                          const struct krc_pattern *container, const char *v_ns, const char *v_pod,
                          const char *v_container);

#endif
