#include "krc/filter.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "krc/buf.h"
#include "krc/mem.h"

enum match_kind { MATCH_EXACT, MATCH_PREFIX, MATCH_REGEX };

struct entry {
    char *text;
    enum match_kind kind;
    regex_t re;
};

struct list {
    struct entry *e;
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
    for (size_t i = 0; i < l->n; i++) {
        if (l->e[i].kind == MATCH_REGEX) {
            regfree(&l->e[i].re);
        }
        krc_free(l->e[i].text);
    }
    krc_free(l->e);
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

static int is_plain(const char *s, int allow_dot)
{
    for (; *s != '\0'; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              (allow_dot && c == '.'))) {
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

static int parse_list(const char *var, const char *value, int pod_names, struct list *l,
                      struct krc_error *err)
{
    const char *p = value;
    size_t cap = 0;

    if (value == NULL) {
        return 0;
    }
    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char *tok;
        struct entry *e;

        /* trim spaces around entries */
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) {
            len--;
        }
        if (len > 0) {
            if (l->n == cap) {
                size_t ncap = cap ? cap * 2 : 4;
                struct entry *ne = krc_realloc(l->e, ncap * sizeof(*ne));
                if (ne == NULL) {
                    return krc_error_set(err, KRC_ENOMEM, "out of memory");
                }
                l->e = ne;
                cap = ncap;
            }
            tok = krc_strndup(p, len);
            if (tok == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
            e = &l->e[l->n];
            e->text = tok;
            if (is_plain(tok, pod_names)) {
                e->kind = pod_names ? MATCH_PREFIX : MATCH_EXACT;
            } else {
                struct krc_buf rx;
                int rrc;
                krc_buf_init(&rx, 4096);
                rrc = translate_regex(tok, &rx);
                if (rrc < 0) {
                    krc_buf_cleanup(&rx);
                    krc_free(tok);
                    if (rrc == KRC_ENOMEM) {
                        return krc_error_set(err, KRC_ENOMEM, "out of memory");
                    }
                    return krc_error_set(err, KRC_EINVAL, "%s: entry \"%.200s\" is too long", var,
                                         p);
                }
                rrc = regcomp(&e->re, krc_buf_str(&rx), REG_EXTENDED | REG_NOSUB);
                krc_buf_cleanup(&rx);
                if (rrc != 0) {
                    char why[128];
                    regerror(rrc, &e->re, why, sizeof(why));
                    krc_error_set(err, KRC_EINVAL, "%s: invalid regular expression \"%s\": %s", var,
                                  tok, why);
                    krc_free(tok);
                    return KRC_EINVAL;
                }
                e->kind = MATCH_REGEX;
            }
            l->n++;
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    return 0;
}

int krc_filter_new(const char *watched_ns, const char *ignored_ns, const char *watched_prefixes,
                   const char *ignored_prefixes, struct krc_filter **ret, struct krc_error *err)
{
    struct krc_filter *f = krc_calloc(1, sizeof(*f));
    int rc;

    if (f == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if ((rc = parse_list("WATCHED_NAMESPACES", watched_ns, 0, &f->watched_ns, err)) < 0 ||
        (rc = parse_list("IGNORED_NAMESPACES", ignored_ns, 0, &f->ignored_ns, err)) < 0 ||
        (rc = parse_list("WATCHED_POD_NAME_PREFIXES", watched_prefixes, 1, &f->watched_pods, err)) <
            0 ||
        (rc = parse_list("IGNORED_POD_NAME_PREFIXES", ignored_prefixes, 1, &f->ignored_pods, err)) <
            0) {
        krc_filter_free(f);
        return rc;
    }
    if (f->watched_ns.n > 0) {
        int all_plain = 1;
        for (size_t i = 0; i < f->watched_ns.n; i++) {
            all_plain &= f->watched_ns.e[i].kind == MATCH_EXACT;
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

static int entry_matches(const struct entry *e, const char *v)
{
    switch (e->kind) {
    case MATCH_EXACT:
        return strcmp(e->text, v) == 0;
    case MATCH_PREFIX:
        return strncmp(e->text, v, strlen(e->text)) == 0;
    case MATCH_REGEX:
        return regexec(&e->re, v, 0, NULL, 0) == 0;
    }
    return 0;
}

static int list_matches(const struct list *l, const char *v)
{
    for (size_t i = 0; i < l->n; i++) {
        if (entry_matches(&l->e[i], v)) {
            return 1;
        }
    }
    return 0;
}

int krc_filter_namespace_allowed(const struct krc_filter *f, const char *ns)
{
    if (list_matches(&f->ignored_ns, ns)) {
        return 0;
    }
    return f->watched_ns.n == 0 || list_matches(&f->watched_ns, ns);
}

int krc_filter_pod_allowed(const struct krc_filter *f, const char *ns, const char *name)
{
    if (!krc_filter_namespace_allowed(f, ns)) {
        return 0;
    }
    if (list_matches(&f->ignored_pods, name)) {
        return 0;
    }
    return f->watched_pods.n == 0 || list_matches(&f->watched_pods, name);
}

size_t krc_filter_plain_namespaces(const struct krc_filter *f, const char *const **ret_names)
{
    *ret_names = (const char *const *)f->plain_ns;
    return f->n_plain_ns;
}
