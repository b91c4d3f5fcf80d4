/* The MCP tools' scope: the daemon's filters and mcpNamespaces. */
#include "krc/mcp/mcp_scope.h"

#include <stdio.h>
#include <string.h>

#include "krc/config/config.h"
#include "krc/detect/filter.h"
#include "krc/util/mem.h"
#include "krc/util/pattern.h"

struct krc_mcp_scope {
    struct krc_filter *filter;   /* the daemon's */
    struct krc_pattern *allowed; /* mcpNamespaces; n_allowed 0: no further limit */
    size_t n_allowed;
    char *label_selector; /* NULL: none */
    int pod_rules;        /* watchedPodNamePrefixes or ignoredPodNamePrefixes is set */
};

void krc_mcp_scope_config_from(const struct krc_config *cfg, struct krc_mcp_scope_config *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->watched_namespaces = cfg->watched_namespaces;
    ret->ignored_namespaces = cfg->ignored_namespaces;
    ret->watched_pod_name_prefixes = cfg->watched_pod_name_prefixes;
    ret->ignored_pod_name_prefixes = cfg->ignored_pod_name_prefixes;
    ret->mcp_namespaces = cfg->mcp_namespaces;
    ret->label_selector = cfg->label_selector;
}

void krc_mcp_scope_free(struct krc_mcp_scope *s)
{
    if (s == NULL) {
        return;
    }
    krc_filter_free(s->filter);
    krc_pattern_list_free(s->allowed, s->n_allowed);
    krc_free(s->label_selector);
    krc_free(s);
}

int krc_mcp_scope_new(const struct krc_mcp_scope_config *cfg, struct krc_mcp_scope **ret,
                      struct krc_error *err)
{
    struct krc_mcp_scope *s = krc_calloc(1, sizeof(*s));
    int rc;

    *ret = NULL;
    if (s == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = cfg == NULL ? krc_filter_new(NULL, NULL, NULL, NULL, &s->filter, err)
                     : krc_filter_new(cfg->watched_namespaces, cfg->ignored_namespaces,
                                      cfg->watched_pod_name_prefixes,
                                      cfg->ignored_pod_name_prefixes, &s->filter, err);
    if (rc == 0 && cfg != NULL && cfg->mcp_namespaces != NULL) {
        rc = krc_pattern_list_compile(cfg->mcp_namespaces, KRC_PATTERN_NAMESPACE, "mcpNamespaces",
                                      &s->allowed, &s->n_allowed, err);
    }
    if (rc == 0 && cfg != NULL && cfg->label_selector != NULL && *cfg->label_selector != '\0' &&
        (s->label_selector = krc_strdup(cfg->label_selector)) == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        krc_mcp_scope_free(s);
        return rc;
    }
    s->pod_rules =
        cfg != NULL &&
        ((cfg->watched_pod_name_prefixes != NULL && cfg->watched_pod_name_prefixes[0] != '\0') ||
         (cfg->ignored_pod_name_prefixes != NULL && cfg->ignored_pod_name_prefixes[0] != '\0'));
    *ret = s;
    return 0;
}

int krc_mcp_scope_all(const struct krc_mcp_scope *s)
{
    return s == NULL || (s->n_allowed == 0 && krc_filter_allows_all(s->filter));
}

int krc_mcp_scope_pod_rules(const struct krc_mcp_scope *s)
{
    return s != NULL && s->pod_rules;
}

const char *krc_mcp_scope_label_selector(const struct krc_mcp_scope *s)
{
    return s != NULL ? s->label_selector : NULL;
}

const char *krc_mcp_scope_excludes(const struct krc_mcp_scope *s, const char *ns, const char *pod)
{
    const char *why;

    if (s == NULL) {
        return NULL;
    }
    if (ns == NULL) {
        ns = "";
    }
    if ((why = krc_filter_excluded_by(s->filter, ns, pod)) != NULL) {
        return why;
    }
    for (size_t i = 0; i < s->n_allowed; i++) {
        if (krc_pattern_match(&s->allowed[i], ns)) {
            return NULL;
        }
    }
    return s->n_allowed > 0 ? "mcpNamespaces" : NULL;
}

void krc_mcp_scope_refusal(char *msg, size_t msgsz, const char *setting, const char *ns,
                           const char *pod)
{
    const char *how = "not in";

    if (strcmp(setting, "ignoredNamespaces") == 0) {
        how = "listed in";
    } else if (strcmp(setting, "ignoredPodNamePrefixes") == 0) {
        how = "matched by";
    } else if (strcmp(setting, "watchedPodNamePrefixes") == 0) {
        how = "not matched by";
    }
    if (pod != NULL && strstr(setting, "Pod") != NULL) {
        snprintf(msg, msgsz,
                 "pod %s in namespace %s is outside what this MCP server answers about: its name "
                 "is %s %s (krc answers only about the pods it watches)",
                 pod, ns, how, setting);
    } else {
        snprintf(msg, msgsz,
                 "namespace %s is outside what this MCP server answers about: it is %s %s (krc "
                 "answers only about the namespaces it watches%s)",
                 ns, how, setting,
                 strcmp(setting, "mcpNamespaces") == 0 ? ", and of those only mcpNamespaces" : "");
    }
}
