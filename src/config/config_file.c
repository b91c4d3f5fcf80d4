/* The YAML file (--config): keys, scalar and list values, routes, silences
 * and destinations; every mistake names the file, line, column and key. */
#include "krc/config/config_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/util/yaml_doc.h"

struct file_errors {
    struct krc_buf text;
    int first;
    int count;
    struct krc_buf *notes; /* krc config check: what is not the file's mistake, or NULL */
    struct krc_error *err; /* for the destinations' reports */
};

static void add_error(struct file_errors *fe, int code, struct krc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(struct file_errors *fe, int code, struct krc_error *err, const char *fmt, ...)
{
    char msg[KRC_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (fe->count == 0) {
        fe->first = code;
        krc_error_set(err, code, "%s", msg);
    }
    fe->count++;
    krc_buf_printf(&fe->text, "%s\n", msg);
}

static const struct krc_config_option *find_key(const char *key)
{
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        if (strcmp(o->key, key) == 0) {
            return o;
        }
    }
    return NULL;
}

void krc_config_routes_free(struct krc_config *cfg)
{
    for (size_t i = 0; i < cfg->n_routes; i++) {
        struct krc_route *r = &cfg->routes[i];
        krc_pattern_cleanup(&r->namespace);
        krc_pattern_cleanup(&r->pod);
        krc_pattern_cleanup(&r->container);
        krc_free(r->webhook_url);
        krc_free(r->channel);
        krc_route_dests_free(r->dests, r->n_dests);
    }
    krc_free(cfg->routes);
    cfg->routes = NULL;
    cfg->n_routes = 0;
}

void krc_config_silences_free(struct krc_config *cfg)
{
    for (size_t i = 0; i < cfg->n_silences; i++) {
        struct krc_silence *x = &cfg->silences[i];
        krc_pattern_cleanup(&x->namespace);
        krc_pattern_cleanup(&x->pod);
        krc_pattern_cleanup(&x->container);
        krc_free(x->reason);
    }
    krc_free(cfg->silences);
    cfg->silences = NULL;
    cfg->n_silences = 0;
}

/* Scalar value of `key` in mapping `m`; NULL when absent. Errors on a
 * non-scalar and on unknown keys are reported by the callers' key walk. */
static const char *map_scalar(yaml_document_t *doc, yaml_node_t *m, const char *key,
                              yaml_node_t **ret_node)
{
    yaml_node_t *v = krc_yaml_doc_map_get(doc, m, key);

    if (v == NULL) {
        return NULL; /* so a value always comes with its node (clang-tidy) */
    }
    if (ret_node != NULL) {
        *ret_node = v;
    }
    return krc_yaml_doc_scalar(v);
}

/* `key` is one of `allowed` ("a|b|c"), case and all: the mapping's values
 * are looked up by their exact key, so "webhookURL" is not "webhookUrl". */
static int key_in(const char *allowed, const char *key)
{
    size_t n = strlen(key);

    for (const char *p = allowed; p != NULL && *p != '\0';) {
        const char *bar = strchr(p, '|');
        size_t l = bar != NULL ? (size_t)(bar - p) : strlen(p);
        if (l == n && strncmp(p, key, n) == 0) {
            return 1;
        }
        p = bar != NULL ? bar + 1 : NULL;
    }
    return 0;
}

/* Every key of mapping `m` must be in `allowed` ("a|b|c") and scalar. */
static int check_keys(yaml_document_t *doc, yaml_node_t *m, const char *allowed, const char *path,
                      const char *what, size_t index, struct file_errors *fe, struct krc_error *err)
{
    int bad = 0;
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(doc, pr->value);
        const char *key =
            k != NULL && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
        if (!key_in(allowed, key)) {
            char mean[160];
            add_error(fe, KRC_EINVAL, err,
                      "%s:%zu:%zu: %s[%zu]: unknown key \"%s\" (%sallowed: %s)", path,
                      k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0, what, index,
                      key, krc_config_suggest_allowed(key, allowed, mean, sizeof(mean)), allowed);
            bad = 1;
        } else if (v == NULL || (v->type != YAML_SCALAR_NODE && strcmp(key, "destinations") != 0)) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: %s[%zu].%s must be a single value", path,
                      v ? v->start_mark.line + 1 : 0, v ? v->start_mark.column + 1 : 0, what, index,
                      key);
            bad = 1;
        }
    }
    return bad ? KRC_EINVAL : 0;
}

static char *dup_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? krc_strdup(s) : NULL;
}

/* Compile the pattern of `key` (namespace, pod or container: util/pattern.h
 * says which patterns are plain for each) once, at load. */
static int pattern_field(yaml_document_t *doc, yaml_node_t *m, const char *key,
                         struct krc_pattern *dst, const char *path, const char *what, size_t index,
                         struct file_errors *fe, struct krc_error *err)
{
    yaml_node_t *vn = NULL;
    const char *v = map_scalar(doc, m, key, &vn);
    enum krc_pattern_field field = strcmp(key, "pod") == 0         ? KRC_PATTERN_POD
                                   : strcmp(key, "container") == 0 ? KRC_PATTERN_CONTAINER
                                                                   : KRC_PATTERN_NAMESPACE;
    char where[512];
    struct krc_error pe;
    int rc;

    memset(dst, 0, sizeof(*dst));
    if (v == NULL || v[0] == '\0') {
        return 0;
    }
    snprintf(where, sizeof(where), "%s:%zu:%zu: %s[%zu].%s", path, vn->start_mark.line + 1,
             vn->start_mark.column + 1, what, index, key);
    krc_error_clear(&pe);
    rc = krc_pattern_compile(dst, v, field, 0, where, &pe);
    if (rc == KRC_EINVAL) {
        add_error(fe, KRC_EINVAL, err, "%s", pe.msg);
    } else if (rc < 0) {
        krc_error_set(err, rc, "%s", pe.msg);
    }
    return rc;
}

static void dest_error(void *ctx, const char *msg)
{
    struct file_errors *fe = ctx;

    add_error(fe, KRC_EINVAL, fe->err, "%s", msg);
}

/* A route's named destinations (resolved once the whole file is read). */
static int route_dests(struct krc_route *r, yaml_document_t *doc, yaml_node_t *m, const char *path,
                       size_t idx, struct file_errors *fe, struct krc_error *err)
{
    yaml_node_t *v = krc_yaml_doc_map_get(doc, m, "destinations");
    struct krc_dest_report rep = {dest_error, fe, fe->notes};

    fe->err = err;
    if (v == NULL) {
        return 0;
    }
    if (krc_route_dests_load(doc, v, path, idx, &rep, &r->dests, &r->n_dests) < 0) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    return 0;
}

static int load_destinations(struct krc_config *cfg, yaml_document_t *doc, yaml_node_t *seq,
                             const char *path, struct file_errors *fe, struct krc_error *err)
{
    struct krc_dest_report rep = {dest_error, fe, fe->notes};

    fe->err = err;
    krc_destinations_free(cfg->destinations, cfg->n_destinations);
    cfg->destinations = NULL;
    cfg->n_destinations = 0;
    if (krc_destinations_load(doc, seq, path, &rep, &cfg->destinations, &cfg->n_destinations) < 0) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    return 0;
}

/* Every destination a route names exists (checked once the whole file is
 * read: the two lists may come in either order). */
static void resolve_route_dests(struct krc_config *cfg, const char *path, struct file_errors *fe,
                                struct krc_error *err)
{
    struct krc_dest_report rep = {dest_error, fe, fe->notes};

    fe->err = err;
    for (size_t i = 0; i < cfg->n_routes; i++) {
        krc_route_dests_resolve(cfg->routes[i].dests, cfg->routes[i].n_dests, i, cfg->destinations,
                                cfg->n_destinations, path, &rep);
    }
}

static int load_routes(struct krc_config *cfg, yaml_document_t *doc, yaml_node_t *seq,
                       const char *path, struct file_errors *fe, struct krc_error *err)
{
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    size_t idx = 0;

    krc_config_routes_free(cfg);
    if (n == 0) {
        return 0;
    }
    cfg->routes = krc_calloc(n, sizeof(struct krc_route));
    if (cfg->routes == NULL) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, idx++) {
        yaml_node_t *m = yaml_document_get_node(doc, *it);
        struct krc_route *r = &cfg->routes[cfg->n_routes];
        const char *hook;
        const char *hook_env;
        const char *channel;
        yaml_node_t *hn = NULL;

        if (m == NULL || m->type != YAML_MAPPING_NODE) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: routes[%zu] must be a mapping", path,
                      m ? m->start_mark.line + 1 : 0, m ? m->start_mark.column + 1 : 0, idx);
            continue;
        }
        if (check_keys(doc, m,
                       "namespace|pod|container|webhookUrl|webhookUrlEnv|channel|destinations",
                       path, "routes", idx, fe, err) < 0) {
            continue;
        }
        memset(r, 0, sizeof(*r));
        if (pattern_field(doc, m, "namespace", &r->namespace, path, "routes", idx, fe, err) < 0 ||
            pattern_field(doc, m, "pod", &r->pod, path, "routes", idx, fe, err) < 0 ||
            pattern_field(doc, m, "container", &r->container, path, "routes", idx, fe, err) < 0) {
            krc_pattern_cleanup(&r->namespace);
            krc_pattern_cleanup(&r->pod);
            krc_pattern_cleanup(&r->container);
            memset(r, 0, sizeof(*r));
            continue;
        }
        if (route_dests(r, doc, m, path, idx, fe, err) < 0) {
            krc_pattern_cleanup(&r->namespace);
            krc_pattern_cleanup(&r->pod);
            krc_pattern_cleanup(&r->container);
            memset(r, 0, sizeof(*r));
            return KRC_ENOMEM;
        }
        hook = map_scalar(doc, m, "webhookUrl", &hn);
        hook_env = map_scalar(doc, m, "webhookUrlEnv", &hn);
        channel = map_scalar(doc, m, "channel", NULL);
        if (hook_env != NULL && hook_env[0] != '\0') {
            /* One mistake, one error: an unset variable is not also "needs
             * webhookUrl, webhookUrlEnv or channel". */
            hook = getenv(hook_env);
            if ((hook == NULL || hook[0] == '\0') && fe->notes != NULL) {
                krc_buf_printf(fe->notes,
                               "%s:%zu:%zu: routes[%zu].webhookUrlEnv: environment variable %s is "
                               "not set here; krc run will need it\n",
                               path, hn->start_mark.line + 1, hn->start_mark.column + 1, idx,
                               hook_env);
            } else if (hook == NULL || hook[0] == '\0') {
                add_error(fe, KRC_EINVAL, err,
                          "%s:%zu:%zu: routes[%zu].webhookUrlEnv: environment variable %s is not "
                          "set",
                          path, hn->start_mark.line + 1, hn->start_mark.column + 1, idx, hook_env);
            }
        } else if ((hook == NULL || hook[0] == '\0') && (channel == NULL || channel[0] == '\0') &&
                   r->n_dests == 0) {
            add_error(fe, KRC_EINVAL, err,
                      "%s:%zu:%zu: routes[%zu] needs webhookUrl, webhookUrlEnv, channel or "
                      "destinations",
                      path, m->start_mark.line + 1, m->start_mark.column + 1, idx);
        }
        r->webhook_url = dup_or_null(hook);
        r->channel = dup_or_null(channel);
        if (hn != NULL) {
            r->line = hn->start_mark.line + 1;
            r->column = hn->start_mark.column + 1;
            r->webhook_env = hook_env != NULL && hook_env[0] != '\0';
        }
        cfg->n_routes++;
    }
    return 0;
}

static int parse_hhmm(const char *s, int *ret_minutes)
{
    int h;
    int m;
    if (strlen(s) != 5 || s[2] != ':' || s[0] < '0' || s[0] > '2' || s[1] < '0' || s[1] > '9' ||
        s[3] < '0' || s[3] > '5' || s[4] < '0' || s[4] > '9') {
        return KRC_EINVAL;
    }
    h = (s[0] - '0') * 10 + (s[1] - '0');
    m = (s[3] - '0') * 10 + (s[4] - '0');
    if (h > 23) {
        return KRC_EINVAL;
    }
    *ret_minutes = h * 60 + m;
    return 0;
}

static int load_silences(struct krc_config *cfg, yaml_document_t *doc, yaml_node_t *seq,
                         const char *path, struct file_errors *fe, struct krc_error *err)
{
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    size_t idx = 0;

    krc_config_silences_free(cfg);
    if (n == 0) {
        return 0;
    }
    cfg->silences = krc_calloc(n, sizeof(struct krc_silence));
    if (cfg->silences == NULL) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, idx++) {
        yaml_node_t *m = yaml_document_get_node(doc, *it);
        struct krc_silence *x = &cfg->silences[cfg->n_silences];
        const char *names[2] = {"start", "end"};
        int64_t *dst[2];
        const char *daily;
        yaml_node_t *vn = NULL;
        int bad = 0;

        if (m == NULL || m->type != YAML_MAPPING_NODE) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: silences[%zu] must be a mapping", path,
                      m ? m->start_mark.line + 1 : 0, m ? m->start_mark.column + 1 : 0, idx);
            continue;
        }
        if (check_keys(doc, m, "namespace|pod|container|start|end|daily|reason", path, "silences",
                       idx, fe, err) < 0) {
            continue;
        }
        memset(x, 0, sizeof(*x));
        dst[0] = &x->start;
        dst[1] = &x->end;
        for (int k = 0; k < 2; k++) {
            const char *t = map_scalar(doc, m, names[k], &vn);
            if (t != NULL && t[0] != '\0' && krc_parse_rfc3339(t, strlen(t), dst[k]) < 0) {
                add_error(fe, KRC_EINVAL, err,
                          "%s:%zu:%zu: silences[%zu].%s must be an RFC 3339 time such as "
                          "2026-12-24T18:00:00Z, not \"%s\"",
                          path, vn->start_mark.line + 1, vn->start_mark.column + 1, idx, names[k],
                          t);
                bad = 1;
            }
        }
        daily = map_scalar(doc, m, "daily", &vn);
        if (daily != NULL && daily[0] != '\0') {
            char a[8];
            char b[8];
            const char *dash = strchr(daily, '-');
            if (dash == NULL || dash - daily > 5 || strlen(dash + 1) > 5) {
                bad = 2;
            } else {
                snprintf(a, sizeof(a), "%.*s", (int)(dash - daily), daily);
                snprintf(b, sizeof(b), "%s", dash + 1);
                if (parse_hhmm(a, &x->daily_from) < 0 || parse_hhmm(b, &x->daily_to) < 0 ||
                    x->daily_from == x->daily_to) {
                    bad = 2;
                }
            }
            if (bad == 2) {
                add_error(fe, KRC_EINVAL, err,
                          "%s:%zu:%zu: silences[%zu].daily must look like \"22:00-06:00\" (UTC), "
                          "not \"%s\"",
                          path, vn->start_mark.line + 1, vn->start_mark.column + 1, idx, daily);
            }
        }
        if (!bad && x->start != 0 && x->end != 0 && x->end <= x->start) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: silences[%zu]: end is not after start",
                      path, m->start_mark.line + 1, m->start_mark.column + 1, idx);
            bad = 1;
        }
        if (bad ||
            pattern_field(doc, m, "namespace", &x->namespace, path, "silences", idx, fe, err) < 0 ||
            pattern_field(doc, m, "pod", &x->pod, path, "silences", idx, fe, err) < 0 ||
            pattern_field(doc, m, "container", &x->container, path, "silences", idx, fe, err) < 0) {
            krc_pattern_cleanup(&x->namespace);
            krc_pattern_cleanup(&x->pod);
            krc_pattern_cleanup(&x->container);
            memset(x, 0, sizeof(*x));
            continue;
        }
        x->reason = dup_or_null(map_scalar(doc, m, "reason", NULL));
        cfg->n_silences++;
    }
    return 0;
}

/* The scalar items of the sequence v joined (by newlines for a list option,
 * by commas for a string) and set as the value of o: a list is accepted where
 * the Go tool took a comma-separated string. */
static int set_joined_value(struct krc_config *cfg, const struct krc_config_option *o,
                            yaml_document_t *doc, yaml_node_t *v, const char *key,
                            const char *where, struct krc_error *e)
{
    struct krc_buf joined;
    int rc = 0;

    krc_buf_init(&joined, 64 * 1024);
    for (yaml_node_item_t *it = v->data.sequence.items.start;
         it < v->data.sequence.items.top && rc == 0; it++) {
        yaml_node_t *item = yaml_document_get_node(doc, *it);
        if (item == NULL || item->type != YAML_SCALAR_NODE) {
            rc = krc_error_set(e, KRC_EINVAL, "%s: %s: list items must be strings", where, key);
            break;
        }
        if (joined.len > 0) {
            krc_buf_append_char(&joined, o->type == KRC_CONFIG_STRING ? ',' : '\n');
        }
        rc = krc_buf_append_str(&joined, (const char *)item->data.scalar.value);
    }
    if (rc == 0) {
        rc = krc_config_set_value(cfg, o, krc_buf_str(&joined), where, e);
    }
    krc_buf_cleanup(&joined);
    return rc;
}

static int load_file(struct krc_config *cfg, const char *path, struct krc_buf *notes,
                     char **ret_errors, struct krc_error *err);

int krc_config_load_file(struct krc_config *cfg, const char *path, char **ret_errors,
                         struct krc_error *err)
{
    return load_file(cfg, path, NULL, ret_errors, err);
}

int krc_config_check_file(struct krc_config *cfg, const char *path, char **ret_errors,
                          char **ret_notes, struct krc_error *err)
{
    struct krc_buf notes;
    int rc;

    krc_buf_init(&notes, 64 * 1024);
    rc = load_file(cfg, path, &notes, ret_errors, err);
    *ret_notes = notes.len > 0 ? krc_buf_take(&notes) : NULL;
    krc_buf_cleanup(&notes);
    return rc;
}

static int load_file(struct krc_config *cfg, const char *path, struct krc_buf *notes,
                     char **ret_errors, struct krc_error *err)
{
    FILE *fp;
    yaml_document_t doc;
    yaml_node_t *root;
    struct krc_yaml_problem yp;
    struct file_errors fe;
    int rc = 0;

    memset(&fe, 0, sizeof(fe));
    fe.notes = notes;
    krc_buf_init(&fe.text, 64 * 1024);
    fp = fopen(path, "rb");
    if (fp == NULL) {
        add_error(&fe, KRC_EIO, err, "%s: cannot open: %s", path, KRC_ERRNO_STR(errno));
        goto out;
    }
    if (krc_yaml_doc_load_file(&doc, fp, &yp) < 0) {
        if (yp.kind == KRC_YAML_NO_PARSER) {
            add_error(&fe, KRC_ENOMEM, err, "%s: cannot initialise the YAML parser", path);
        } else {
            add_error(&fe, KRC_EPARSE, err, "%s:%zu:%zu: invalid YAML: %s", path, yp.line,
                      yp.column, yp.problem ? yp.problem : "syntax error");
        }
        fclose(fp);
        goto out;
    }
    root = yaml_document_get_root_node(&doc);
    if (root == NULL) {
        /* An empty file sets nothing. */
    } else if (root->type != YAML_MAPPING_NODE) {
        add_error(&fe, KRC_EINVAL, err, "%s:%zu:%zu: the configuration must be a mapping of keys",
                  path, root->start_mark.line + 1, root->start_mark.column + 1);
    } else {
        for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
             pair < root->data.mapping.pairs.top; pair++) {
            yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
            yaml_node_t *v = yaml_document_get_node(&doc, pair->value);
            const struct krc_config_option *o;
            char where[512];
            const char *key;
            struct krc_error e;

            if (k == NULL || v == NULL || k->type != YAML_SCALAR_NODE) {
                add_error(&fe, KRC_EINVAL, err, "%s:%zu:%zu: keys must be plain strings", path,
                          k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0);
                continue;
            }
            key = (const char *)k->data.scalar.value;
            o = find_key(key);
            if (o == NULL) {
                char mean[160];
                add_error(&fe, KRC_EINVAL, err, "%s:%zu:%zu: unknown key \"%s\"%s", path,
                          k->start_mark.line + 1, k->start_mark.column + 1, key,
                          krc_config_suggest_key(key, mean, sizeof(mean)));
                continue;
            }
            snprintf(where, sizeof(where), "%s:%zu:%zu", path, v->start_mark.line + 1,
                     v->start_mark.column + 1);
            krc_error_clear(&e);
            if (o->type == KRC_CONFIG_DESTINATIONS) {
                if (v->type != YAML_SEQUENCE_NODE) {
                    rc = krc_error_set(&e, KRC_EINVAL, "%s: %s must be a list of mappings", where,
                                       key);
                } else {
                    rc = load_destinations(cfg, &doc, v, path, &fe, err);
                    continue;
                }
            } else if (o->type == KRC_CONFIG_ROUTES || o->type == KRC_CONFIG_SILENCES) {
                if (v->type != YAML_SEQUENCE_NODE) {
                    rc = krc_error_set(&e, KRC_EINVAL, "%s: %s must be a list of mappings", where,
                                       key);
                } else {
                    rc = o->type == KRC_CONFIG_ROUTES ? load_routes(cfg, &doc, v, path, &fe, err)
                                                      : load_silences(cfg, &doc, v, path, &fe, err);
                    continue; /* errors were added per entry */
                }
            } else if (v->type == YAML_SCALAR_NODE) {
                const char *text = (const char *)v->data.scalar.value;
                /* A plain (unquoted) null means "unset", as in any YAML reader. */
                if (krc_yaml_doc_is_null(v, 0)) {
                    text = o->type == KRC_CONFIG_STRING || o->type == KRC_CONFIG_SECRET
                               ? ""
                               : o->default_value;
                }
                rc = krc_config_set_value(cfg, o, text, where, &e);
            } else if (v->type == YAML_SEQUENCE_NODE &&
                       (o->type == KRC_CONFIG_STRING || o->type == KRC_CONFIG_LIST ||
                        o->type == KRC_CONFIG_PATTERNS) &&
                       o->allowed == NULL) {
                rc = set_joined_value(cfg, o, &doc, v, key, where, &e);
            } else {
                rc = krc_error_set(&e, KRC_EINVAL, "%s: %s must be a single value", where, key);
            }
            if (rc < 0) {
                add_error(&fe, rc, err, "%s", e.msg);
            }
        }
    }
    resolve_route_dests(cfg, path, &fe, err);
    yaml_document_delete(&doc);
    fclose(fp);
out:
    if (ret_errors != NULL) {
        *ret_errors = fe.count > 0 ? krc_buf_take(&fe.text) : NULL;
    }
    krc_buf_cleanup(&fe.text);
    return fe.count > 0 ? fe.first : 0;
}
