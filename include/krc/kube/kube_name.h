/* Kubernetes object names, checked as the API server checks them
 * (apimachinery's validation), before a name goes into a request path or a
 * query:
 *   - a DNS label (RFC 1123): namespaces, container names; 1 to 63
 *     characters, lower-case letters, digits and '-', beginning and ending
 *     with a letter or digit;
 *   - a DNS subdomain (RFC 1123): pod names and most other objects; 1 to 253
 *     characters, parts of lower-case letters, digits and '-' that begin and
 *     end with a letter or digit, joined by '.' (so "." and ".." never are;
 *     a part may be longer than 63, as the API server allows);
 *   - the beginning of a DNS subdomain (a pod name prefix): 1 to 253
 *     lower-case letters, digits, '-' and '.', beginning with a letter or
 *     digit. */
#ifndef KRC_KUBE_NAME_H
#define KRC_KUBE_NAME_H

enum krc_kube_name_kind {
    KRC_KUBE_NAME_LABEL,
    KRC_KUBE_NAME_SUBDOMAIN,
    KRC_KUBE_NAME_PREFIX,
};

/* NULL when s (may be NULL: "is empty") is a name of that kind; else what is
 * wrong with it, a static phrase that follows the name in a sentence: "is
 * empty", "is longer than 63 characters", "may hold only lower-case letters,
 * digits and '-'", ... */
const char *krc_kube_name_problem(const char *s, enum krc_kube_name_kind kind);

#endif
