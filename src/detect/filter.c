#include "krc/detect/filter.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/pattern.h"

struct list {
    struct krc_pattern *e;
    size_t n;
};

struct krc_filter {
    struct list watched_ns;
    struct list ignored_ns;
    struct list watched_pods;
    struct list ignored_pods;
    const char **plain_ns; /* names of watched_ns when all are plain */
    size_t n_plain_ns;
};

static void list_free(struct list *l)
{
    krc_pattern_list_free(l->e, l->n);
    l->e = NULL;
    l->n = 0;
}

void krc_filter_free(struct krc_filter *f)
{
    if (f == NULL) {
        return;
    }
    list_free(&f->watched_ns);
    list_free(&f->ignored_ns);
    list_free(&f->watched_pods);
    list_free(&f->ignored_pods);
    krc_free(f->plain_ns);
    krc_free(f);
}

static int parse_list(const char *var, const char *value, enum krc_pattern_field field,
                      struct list *l, struct krc_error *err)
{
    return krc_pattern_list_compile(value, field, var, &l->e, &l->n, err);
}

int krc_filter_new(const char *watched_ns, const char *ignored_ns, const char *watched_prefixes,
                   const char *ignored_prefixes, struct krc_filter **ret, struct krc_error *err)
{
    struct krc_filter *f = krc_calloc(1, sizeof(*f));
    int rc;

    if (f == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if ((rc = parse_list("WATCHED_NAMESPACES", watched_ns, KRC_PATTERN_NAMESPACE, &f->watched_ns,
                         err)) < 0 ||
        (rc = parse_list("IGNORED_NAMESPACES", ignored_ns, KRC_PATTERN_NAMESPACE, &f->ignored_ns,
                         err)) < 0 ||
        (rc = parse_list("WATCHED_POD_NAME_PREFIXES", watched_prefixes, KRC_PATTERN_POD,
                         &f->watched_pods, err)) < 0 ||
        (rc = parse_list("IGNORED_POD_NAME_PREFIXES", ignored_prefixes, KRC_PATTERN_POD,
                         &f->ignored_pods, err)) < 0) {
        krc_filter_free(f);
        return rc;
    }
    if (f->watched_ns.n > 0) {
        int all_plain = 1;
        for (size_t i = 0; i < f->watched_ns.n; i++) {
            all_plain &= krc_pattern_is_plain(f->watched_ns.e[i].text, KRC_PATTERN_NAMESPACE);
        }
        if (all_plain) {
            f->plain_ns = krc_calloc(f->watched_ns.n, sizeof(char *));
            if (f->plain_ns == NULL) {
                krc_filter_free(f);
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
            for (size_t i = 0; i < f->watched_ns.n; i++) {
                f->plain_ns[i] = f->watched_ns.e[i].text;
            }
            f->n_plain_ns = f->watched_ns.n;
        }
    }
    *ret = f;
    return 0;
}

static int list_matches(const struct list *l, const char *v)
{
    for (size_t i = 0; i < l->n; i++) {
        if (krc_pattern_match(&l->e[i], v)) {
            return 1;
        }
    }
    return 0;
}

const char *krc_filter_excluded_by(const struct krc_filter *f, const char *ns, const char *pod)
{
    if (list_matches(&f->ignored_ns, ns)) {
        return "ignoredNamespaces";
    }
    if (f->watched_ns.n > 0 && !list_matches(&f->watched_ns, ns)) {
        return "watchedNamespaces";
    }
    if (pod == NULL) {
        return NULL;
    }
    if (list_matches(&f->ignored_pods, pod)) {
        return "ignoredPodNamePrefixes";
    }
    if (f->watched_pods.n > 0 && !list_matches(&f->watched_pods, pod)) {
        return "watchedPodNamePrefixes";
    }
    return NULL;
}

/* The one rule: allowed is "no setting keeps it out". */
int krc_filter_namespace_allowed(const struct krc_filter *f, const char *ns)
{
    return krc_filter_excluded_by(f, ns, NULL) == NULL;
}

int krc_filter_pod_allowed(const struct krc_filter *f, const char *ns, const char *name)
{
    return krc_filter_excluded_by(f, ns, name) == NULL;
}

int krc_filter_allows_all(const struct krc_filter *f)
{
    return f->watched_ns.n == 0 && f->ignored_ns.n == 0 && f->watched_pods.n == 0 &&
           f->ignored_pods.n == 0;
}

size_t krc_filter_plain_namespaces(const struct krc_filter *f, const char *const **ret_names)
{
    *ret_names = (const char *const *)f->plain_ns;
    return f->n_plain_ns;
}
