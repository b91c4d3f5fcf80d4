#include "krc/util/pattern.h"

#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"

enum kind { K_ANY, K_EXACT, K_PREFIX, K_REGEX };

#define PATTERN_MAX 4096 /* bytes of a translated regular expression */

int krc_pattern_is_plain(const char *text, enum krc_pattern_field field)
{
    if (text == NULL || text[0] == '\0' || field == KRC_PATTERN_TEXT) {
        return 0;
    }
    for (const char *s = text; *s != '\0'; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              (c == '.' && field == KRC_PATTERN_POD))) {
            return 0;
        }
    }
    return 1;
}

/* Translate Go/Perl shorthand classes, which POSIX ERE lacks. Inside a
 * bracket expression only the class body is emitted ("[\\d.]" -> "[0-9.]"). */
static int translate_regex(const char *in, struct krc_buf *out)
{
    int rc = 0;
    int in_bracket = 0;

    for (const char *p = in; *p != '\0' && rc == 0; p++) {
        if (p[0] == '\\' && p[1] != '\0') {
            const char *rep = NULL;
            const char *inner = NULL;
            switch (p[1]) {
            case 'd':
                rep = "[0-9]";
                inner = "0-9";
                break;
            case 'D':
                rep = "[^0-9]";
                break;
            case 'w':
                rep = "[A-Za-z0-9_]";
                inner = "A-Za-z0-9_";
                break;
            case 'W':
                rep = "[^A-Za-z0-9_]";
                break;
            case 's':
                rep = "[[:space:]]";
                inner = "[:space:]";
                break;
            case 'S':
                rep = "[^[:space:]]";
                break;
            default:
                break;
            }
            if (in_bracket && inner != NULL) {
                rc = krc_buf_append_str(out, inner);
            } else if (rep != NULL && !in_bracket) {
                rc = krc_buf_append_str(out, rep);
            } else {
                rc = krc_buf_append(out, p, 2);
            }
            p++;
            continue;
        }
        if (!in_bracket && p[0] == '[') {
            in_bracket = 1;
            rc = krc_buf_append_char(out, *p);
            /* a ']' right after '[' or '[^' is a literal member */
            if (rc == 0 && p[1] == '^') {
                rc = krc_buf_append_char(out, *++p);
            }
            if (rc == 0 && p[1] == ']') {
                rc = krc_buf_append_char(out, *++p);
            }
            continue;
        }
        if (in_bracket && p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
            /* [:class:] inside a bracket: copy through its closing ":]" */
            const char *end = strstr(p + 2, (char[]){p[1], ']', '\0'});
            if (end != NULL) {
                rc = krc_buf_append(out, p, (size_t)(end + 2 - p));
                p = end + 1;
                continue;
            }
        }
        if (in_bracket && p[0] == ']') {
            in_bracket = 0;
        }
        rc = krc_buf_append_char(out, *p);
    }
    return rc;
}

int krc_pattern_compile(struct krc_pattern *p, const char *text, enum krc_pattern_field field,
                        unsigned flags, const char *what, struct krc_error *err)
{
    struct krc_buf rx;
    int cflags = REG_EXTENDED;
    int rc;

    memset(p, 0, sizeof(*p));
    if (text == NULL || text[0] == '\0' || strcmp(text, "*") == 0) {
        if (field == KRC_PATTERN_TEXT) {
            return krc_error_set(err, KRC_EINVAL, "%s: empty pattern", what);
        }
        p->kind = K_ANY;
        return 0;
    }
    p->text = krc_strdup(text);
    if (p->text == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (krc_pattern_is_plain(text, field)) {
        p->kind = field == KRC_PATTERN_POD ? K_PREFIX : K_EXACT;
        return 0;
    }
    krc_buf_init(&rx, PATTERN_MAX);
    rc = translate_regex(text, &rx);
    if (rc < 0) {
        krc_buf_cleanup(&rx);
        krc_pattern_cleanup(p);
        if (rc == KRC_ENOMEM) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        return krc_error_set(err, KRC_EINVAL, "%s: pattern \"%.200s\" is too long", what, text);
    }
    if ((flags & KRC_PATTERN_OFFSETS) == 0) {
        cflags |= REG_NOSUB;
    }
    if (flags & KRC_PATTERN_NEWLINE) {
        cflags |= REG_NEWLINE;
    }
    rc = regcomp(&p->re, krc_buf_str(&rx), cflags);
    krc_buf_cleanup(&rx);
    if (rc != 0) {
        char why[128];
        regerror(rc, &p->re, why, sizeof(why));
        krc_free(p->text);
        p->text = NULL;
        return krc_error_set(err, rc == REG_ESPACE ? KRC_ENOMEM : KRC_EINVAL,
                             "%s: invalid regular expression \"%.200s\": %s", what, text, why);
    }
    p->kind = K_REGEX;
    return 0;
}

void krc_pattern_cleanup(struct krc_pattern *p)
{
    if (p == NULL) {
        return;
    }
    if (p->kind == K_REGEX) {
        regfree(&p->re);
    }
    krc_free(p->text);
    memset(p, 0, sizeof(*p));
}

int krc_pattern_match(const struct krc_pattern *p, const char *value)
{
    if (p == NULL || p->kind == K_ANY) {
        return 1;
    }
    if (value == NULL) {
        return 0;
    }
    switch (p->kind) {
    case K_EXACT:
        return strcmp(p->text, value) == 0;
    case K_PREFIX:
        return strncmp(p->text, value, strlen(p->text)) == 0;
    case K_REGEX:
        return regexec(&p->re, value, 0, NULL, 0) == 0;
    default:
        return 0;
    }
}

int krc_pattern_search(const struct krc_pattern *p, const char *value, size_t from,
                       size_t *ret_start, size_t *ret_end)
{
    regmatch_t m;

    if (p == NULL || p->kind != K_REGEX || value == NULL) {
        return 0;
    }
    if (regexec(&p->re, value + from, 1, &m, from > 0 ? REG_NOTBOL : 0) != 0 || m.rm_so < 0) {
        return 0;
    }
    *ret_start = from + (size_t)m.rm_so;
    *ret_end = from + (size_t)m.rm_eo;
    return 1;
}

int krc_pattern_match_pod(const struct krc_pattern *ns, const struct krc_pattern *pod,
                          const struct krc_pattern *container, const char *v_ns, const char *v_pod,
                          const char *v_container)
{
    return krc_pattern_match(ns, v_ns) && krc_pattern_match(pod, v_pod) &&
           krc_pattern_match(container, v_container);
}

void krc_pattern_list_free(struct krc_pattern *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        krc_pattern_cleanup(&list[i]);
    }
    krc_free(list);
}

int krc_pattern_list_compile(const char *list, enum krc_pattern_field field, const char *what,
                             struct krc_pattern **ret, size_t *ret_n, struct krc_error *err)
{
    struct krc_pattern *e = NULL;
    size_t n = 0;
    size_t cap = 1;

    *ret = NULL;
    *ret_n = 0;
    if (list == NULL || *list == '\0') {
        return 0;
    }
    for (const char *p = list; *p != '\0'; p++) {
        cap += *p == ',';
    }
    if ((e = krc_calloc(cap, sizeof(*e))) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (const char *p = list; p != NULL;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) {
            len--;
        }
        if (len > 0) {
            char *entry = krc_strndup(p, len);
            int rc = entry == NULL ? krc_error_set(err, KRC_ENOMEM, "out of memory")
                                   : krc_pattern_compile(&e[n], entry, field, 0, what, err);

            krc_free(entry);
            if (rc < 0) {
                krc_pattern_list_free(e, n);
                return rc;
            }
            n++;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    if (n == 0) {
        krc_free(e);
        e = NULL;
    }
    *ret = e;
    *ret_n = n;
    return 0;
}
