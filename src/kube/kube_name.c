/* Kubernetes object names: DNS labels, subdomains and their prefixes. */
#include "krc/kube/kube_name.h"

#include <string.h>

#define LABEL_MAX 63
#define SUBDOMAIN_MAX 253

static int alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A part of len bytes begins and ends with a letter or digit (its characters
 * are checked): a label, or a part of a subdomain between dots, which has no
 * length limit of its own (apimachinery's IsDNS1123Subdomain). */
static int part_ok(const char *s, size_t len)
{
    return len > 0 && alnum(s[0]) && alnum(s[len - 1]);
}

const char *krc_kube_name_problem(const char *s, enum krc_kube_name_kind kind)
{
    size_t n = s != NULL ? strlen(s) : 0;
    int dots = kind != KRC_KUBE_NAME_LABEL;

    if (n == 0) {
        return "is empty";
    }
    if (n > (kind == KRC_KUBE_NAME_LABEL ? LABEL_MAX : SUBDOMAIN_MAX)) {
        return kind == KRC_KUBE_NAME_LABEL ? "is longer than 63 characters"
                                           : "is longer than 253 characters";
    }
    for (size_t i = 0; i < n; i++) {
        if (!alnum(s[i]) && s[i] != '-' && !(dots && s[i] == '.')) {
            return dots ? "may hold only lower-case letters, digits, '-' and '.'"
                        : "may hold only lower-case letters, digits and '-'";
        }
    }
    if (kind == KRC_KUBE_NAME_PREFIX) {
        return alnum(s[0]) ? NULL : "must begin with a lower-case letter or a digit";
    }
    if (kind == KRC_KUBE_NAME_LABEL) {
        return part_ok(s, n) ? NULL : "must begin and end with a lower-case letter or a digit";
    }
    for (const char *p = s;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);
        if (!part_ok(p, len)) {
            return "must be parts of lower-case letters, digits and '-' joined by '.', each "
                   "beginning and ending with a letter or digit";
        }
        if (dot == NULL) {
            return NULL;
        }
        p = dot + 1;
    }
}
