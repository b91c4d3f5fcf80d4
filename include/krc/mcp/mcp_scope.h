/* What the MCP tools answer about: the namespaces and pods krc watches (the
 * daemon's filters, detect/filter.h: watchedNamespaces, ignoredNamespaces,
 * watchedPodNamePrefixes, ignoredPodNamePrefixes), narrowed further by the
 * optional mcpNamespaces allow-list. A tool asked about a namespace or pod
 * outside the scope refuses (a tool error naming the setting); rows of the
 * history outside it are left out of every answer (docs/mcp.md, "Scope").
 *
 * mcpNamespaces is a comma-separated list with the filters' one rule
 * (util/pattern.h): a plain name matches exactly, anything else is a regular
 * expression searched anywhere in the name. Empty: no further limit.
 *
 * Immutable once built: may be read from any thread. */
#ifndef KRC_MCP_SCOPE_H
#define KRC_MCP_SCOPE_H

#include <stddef.h>

#include "krc/util/error.h"

struct krc_mcp_scope_config {
    const char *watched_namespaces; /* each may be NULL or "" */
    const char *ignored_namespaces;
    const char *watched_pod_name_prefixes;
    const char *ignored_pod_name_prefixes;
    const char *mcp_namespaces;
    /* labelSelector: the daemon's watch asks the API server for these pods only;
     * explain_pod asks it the same (krc_mcp_explain_pod). NULL or "": none. */
    const char *label_selector;
};

struct krc_mcp_scope;
struct krc_config;

/* The scope settings of a configuration (the strings borrowed from cfg):
 * the one builder of krc run (start and reload) and krc mcp, so that both
 * answer about the same pods. */
void krc_mcp_scope_config_from(const struct krc_config *cfg, struct krc_mcp_scope_config *ret);

/* cfg NULL: every namespace and pod. Errors name the setting and quote the
 * entry (an invalid regular expression); KRC_EINVAL, KRC_ENOMEM. */
int krc_mcp_scope_new(const struct krc_mcp_scope_config *cfg, struct krc_mcp_scope **ret,
                      struct krc_error *err);
/* Accepts NULL. */
void krc_mcp_scope_free(struct krc_mcp_scope *s);

/* 1 when nothing is left out (no setting above is set). */
int krc_mcp_scope_all(const struct krc_mcp_scope *s);

/* 1 when a pod name setting (watchedPodNamePrefixes, ignoredPodNamePrefixes)
 * is set: a namespace in scope may then hold pods that are not. */
int krc_mcp_scope_pod_rules(const struct krc_mcp_scope *s);

/* NULL when the pod (pod NULL: any pod of the namespace, i.e. the namespace
 * is in scope) is in scope; else the configuration key of the setting that
 * keeps it out: "mcpNamespaces", "ignoredNamespaces", "watchedNamespaces",
 * "ignoredPodNamePrefixes" or "watchedPodNamePrefixes". s NULL: in scope. */
const char *krc_mcp_scope_excludes(const struct krc_mcp_scope *s, const char *ns, const char *pod);

/* The labelSelector of the scope, NULL when it has none (borrowed: valid
 * while s lives). */
const char *krc_mcp_scope_label_selector(const struct krc_mcp_scope *s);

/* The tool error for a namespace (pod NULL) or a pod that `setting`
 * (krc_mcp_scope_excludes) keeps out, into msg: "namespace kube-system is
 * outside what this MCP server answers about (ignoredNamespaces): ...". */
void krc_mcp_scope_refusal(char *msg, size_t msgsz, const char *setting, const char *ns,
                           const char *pod);

#endif
