/* Namespace and pod-name filters, compatible with the Go tool's
 * WATCHED_NAMESPACES, IGNORED_NAMESPACES, WATCHED_POD_NAME_PREFIXES and
 * IGNORED_POD_NAME_PREFIXES: comma-separated lists whose entries are plain
 * names/prefixes or regular expressions.
 *
 * - namespace entry that is a plain name ([a-z0-9-]): exact match;
 * - pod-name entry that is a plain prefix ([a-z0-9.-]): literal prefix match;
 * - any other entry: a regular expression searched anywhere in the value, like
 *   Go's regexp.MatchString (anchor it with ^...$ to match whole names).
 *   POSIX extended syntax, with \d \w \s \D \W \S accepted as in Go.
 * An empty watched list means "all". Ignored lists win over watched lists. */
#ifndef KRC_FILTER_H
#define KRC_FILTER_H

#include <stddef.h>

#include "krc/util/error.h"

struct krc_filter;

/* Any argument may be NULL or "". Errors name the variable and the entry,
 * e.g. "WATCHED_NAMESPACES: invalid regular expression \"team-[\": ...".
 * Caller frees with krc_filter_free. */
int krc_filter_new(const char *watched_ns, const char *ignored_ns, const char *watched_prefixes,
                   const char *ignored_prefixes, struct krc_filter **ret, struct krc_error *err);
void krc_filter_free(struct krc_filter *f);

int krc_filter_namespace_allowed(const struct krc_filter *f, const char *ns);
int krc_filter_pod_allowed(const struct krc_filter *f, const char *ns, const char *name);

/* Why (ns, pod) is not allowed: the setting that keeps it out, by its
 * configuration key ("ignoredNamespaces", "watchedNamespaces",
 * "ignoredPodNamePrefixes", "watchedPodNamePrefixes"), in the order the
 * rules apply; NULL when krc_filter_pod_allowed would say 1. pod NULL: the
 * namespace alone (krc_filter_namespace_allowed). */
const char *krc_filter_excluded_by(const struct krc_filter *f, const char *ns, const char *pod);

/* 1 when no list is set: every namespace and pod is allowed. */
int krc_filter_allows_all(const struct krc_filter *f);

/* When every watched-namespace entry is a plain name, the daemon can watch
 * just those namespaces (namespace-scoped RBAC suffices): returns their number
 * and sets *ret_names (borrowed). Returns 0 when the whole cluster must be
 * watched. */
size_t krc_filter_plain_namespaces(const struct krc_filter *f, const char *const **ret_names);

#endif
