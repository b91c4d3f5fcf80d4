/* kubeconfig files (include/krc/kube/kube_auth.h): one file or a $KUBECONFIG
 * list read with libyaml's document API, merged the way kubectl merges them,
 * the context resolved to a cluster (server, CA, TLS name) and a user
 * (client certificate, token or token file; an exec plugin by
 * kube_auth_exec.c); every mistake named with its file, line and column. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "krc/util/base64.h"
#include "krc/util/buf.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/yaml_doc.h"

#include "kube_auth_private.h"

#define KUBECONFIG_MAX_FILES 64

static const char unsupported_hint[] =
    "use a service-account token (token or tokenFile), client certificates or an exec "
    "credential plugin";

/* ---------------------------------------------------------------------- */
/* kubeconfig documents                                                   */

struct kc_set {
    struct kc_file files[KUBECONFIG_MAX_FILES];
    size_t n;
};

static void kc_set_cleanup(struct kc_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        if (set->files[i].have_doc) {
            yaml_document_delete(&set->files[i].doc);
        }
        krc_free(set->files[i].path);
        krc_free(set->files[i].dir);
    }
    set->n = 0;
}

int krc_kubeconfig_err(struct krc_error *err, int code, const struct kc_file *f,
                       const yaml_node_t *n, const char *fmt, ...)
{
    char msg[KRC_ERROR_MSG_MAX];
    char loc[64] = "";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n != NULL) {
        snprintf(loc, sizeof(loc), " (line %zu, column %zu)", krc_yaml_doc_line(n),
                 krc_yaml_doc_column(n));
    }
    return krc_error_set(err, code, "kubeconfig %s: %s%s", f->path, msg, loc);
}

/* String field of a mapping: *ret is borrowed, NULL when absent, null or "". */
int krc_kubeconfig_get_str(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                           const char **ret, struct krc_error *err)
{
    yaml_node_t *n = krc_yaml_doc_map_get(&f->doc, map, key);

    *ret = NULL;
    if (krc_yaml_doc_is_null(n, 1)) {
        return 0;
    }
    if (n->type != YAML_SCALAR_NODE) {
        return krc_kubeconfig_err(err, KRC_EPARSE, f, n, "%s: %s must be a string", what, key);
    }
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        return krc_kubeconfig_err(err, KRC_EPARSE, f, n, "%s: %s contains a NUL character", what,
                                  key);
    }
    if (n->data.scalar.length > 0) {
        *ret = (const char *)n->data.scalar.value;
    }
    return 0;
}

/* Mapping or sequence field: *ret NULL when absent or null. */
int krc_kubeconfig_get_node(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                            yaml_node_type_t type, yaml_node_t **ret, struct krc_error *err)
{
    yaml_node_t *n = krc_yaml_doc_map_get(&f->doc, map, key);

    *ret = NULL;
    if (krc_yaml_doc_is_null(n, 1)) {
        return 0;
    }
    if (n->type != type) {
        return krc_kubeconfig_err(err, KRC_EPARSE, f, n, "%s: %s must be a %s", what, key,
                                  type == YAML_MAPPING_NODE ? "mapping" : "list");
    }
    *ret = n;
    return 0;
}

int krc_kubeconfig_get_bool(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                            int *ret, struct krc_error *err)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    yaml_node_t *n = krc_yaml_doc_map_get(&f->doc, map, key);
    const char *v;

    *ret = 0;
    if (krc_yaml_doc_is_null(n, 1)) {
        return 0;
    }
    if (n->type == YAML_SCALAR_NODE) {
        v = (const char *)n->data.scalar.value;
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
            if (strcmp(v, yes[i]) == 0) {
                *ret = 1;
                return 0;
            }
            if (strcmp(v, no[i]) == 0) {
                return 0;
            }
        }
    }
    return krc_kubeconfig_err(err, KRC_EPARSE, f, n, "%s: %s must be true or false", what, key);
}

static int kc_load_file(struct kc_file *f, struct krc_error *err)
{
    struct krc_yaml_problem yp;
    yaml_node_t *root;
    char ebuf[128];
    char *data = NULL;
    size_t len = 0;
    int e;
    int rc;

    rc = krc_auth_read_whole_file(f->path, KUBECONFIG_MAX_BYTES, &data, &len, &e);
    if (rc == KRC_EIO) {
        return krc_error_set(err, KRC_EIO, "kubeconfig %s: cannot read: %s", f->path,
                             krc_errno_str(e, ebuf, sizeof(ebuf)));
    }
    if (rc == KRC_ETOOBIG) {
        return krc_error_set(err, KRC_ETOOBIG, "kubeconfig %s is larger than %d bytes", f->path,
                             KUBECONFIG_MAX_BYTES);
    }
    if (rc < 0) {
        return krc_error_set(err, rc, "kubeconfig %s: out of memory", f->path);
    }
    rc = krc_yaml_doc_load(&f->doc, data, len, &yp);
    krc_free(data);
    if (rc < 0) {
        const char *problem = yp.problem != NULL ? yp.problem : "unknown error";
        switch (yp.kind) {
        case KRC_YAML_NO_PARSER:
        case KRC_YAML_OUT_OF_MEMORY:
            return krc_error_set(err, KRC_ENOMEM, "kubeconfig %s: out of memory", f->path);
        case KRC_YAML_UNREADABLE:
            return krc_error_set(err, KRC_EPARSE, "kubeconfig %s: malformed YAML at byte %zu: %s",
                                 f->path, yp.offset, problem);
        default:
            return krc_error_set(
                err, KRC_EPARSE, "kubeconfig %s: malformed YAML at line %zu, column %zu: %s%s%s",
                f->path, yp.line, yp.column, problem, yp.context != NULL ? " " : "",
                yp.context != NULL ? yp.context : "");
        }
    }
    f->have_doc = 1;
    root = yaml_document_get_root_node(&f->doc);
    if (root != NULL && !krc_yaml_doc_is_null(root, 1) && root->type != YAML_MAPPING_NODE) {
        return krc_kubeconfig_err(err, KRC_EPARSE, f, root, "the top level must be a mapping");
    }
    return 0;
}

/* Add path to the set (duplicates are ignored, like kubectl). With
 * skip_missing, a file that does not exist is silently left out. */
static int kc_add(struct kc_set *set, const char *path, size_t len, int skip_missing,
                  struct krc_error *err)
{
    struct kc_file *f;
    int rc;

    for (size_t i = 0; i < set->n; i++) {
        if (strlen(set->files[i].path) == len && memcmp(set->files[i].path, path, len) == 0) {
            return 0;
        }
    }
    if (set->n == KUBECONFIG_MAX_FILES) {
        return krc_error_set(err, KRC_ETOOBIG, "$KUBECONFIG lists more than %d files",
                             KUBECONFIG_MAX_FILES);
    }
    f = &set->files[set->n];
    memset(f, 0, sizeof(*f));
    f->path = krc_strndup(path, len);
    if (f->path == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (skip_missing && access(f->path, F_OK) != 0 && errno == ENOENT) {
        krc_free(f->path);
        f->path = NULL;
        return 0;
    }
    set->n++; /* from here kc_set_cleanup owns the entry */
    f->dir = krc_auth_dir_of(f->path);
    if (f->dir == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    rc = kc_load_file(f, err);
    return rc;
}

static yaml_node_t *kc_root(struct kc_file *f)
{
    yaml_node_t *root;

    if (!f->have_doc) {
        return NULL;
    }
    root = yaml_document_get_root_node(&f->doc);
    return root != NULL && root->type == YAML_MAPPING_NODE ? root : NULL;
}

/* Look `name` up in the list `section` ("clusters") of every file in order;
 * the first definition wins. *ret_body is the entry's `body` mapping ("cluster"),
 * NULL when the entry has none. KRC_ENOTFOUND (err untouched) when absent. */
static int kc_find(struct kc_set *set, const char *section, const char *body, const char *name,
                   size_t *ret_file, yaml_node_t **ret_body, struct krc_error *err)
{
    for (size_t i = 0; i < set->n; i++) {
        struct kc_file *f = &set->files[i];
        yaml_node_t *seq;
        int rc;

        rc = krc_kubeconfig_get_node(f, kc_root(f), "top level", section, YAML_SEQUENCE_NODE, &seq,
                                     err);
        if (rc < 0) {
            return rc;
        }
        if (seq == NULL) {
            continue;
        }
        for (size_t k = 0; k < krc_yaml_doc_seq_len(seq); k++) {
            yaml_node_t *entry = krc_yaml_doc_seq_item(&f->doc, seq, k);
            const char *entry_name;

            if (entry == NULL || entry->type != YAML_MAPPING_NODE) {
                return krc_kubeconfig_err(err, KRC_EPARSE, f, entry,
                                          "%s: every entry must be a mapping", section);
            }
            rc = krc_kubeconfig_get_str(f, entry, section, "name", &entry_name, err);
            if (rc < 0) {
                return rc;
            }
            if (entry_name == NULL || strcmp(entry_name, name) != 0) {
                continue;
            }
            rc = krc_kubeconfig_get_node(f, entry, section, body, YAML_MAPPING_NODE, ret_body, err);
            if (rc < 0) {
                return rc;
            }
            *ret_file = i;
            return 0;
        }
    }
    return KRC_ENOTFOUND;
}

char *krc_kubeconfig_resolve_path(const struct kc_file *f, const char *p)
{
    if (p[0] == '/') {
        return krc_strdup(p);
    }
    return krc_auth_join_path(f->dir, p);
}

/* A file-path field: resolve it relative to the kubeconfig and check now that
 * it can be read, so a typo fails at start-up with the field's name. */
static int path_field(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                      char **ret, struct krc_error *err)
{
    const char *v;
    char ebuf[128];
    char *p;
    int rc;

    rc = krc_kubeconfig_get_str(f, map, what, key, &v, err);
    if (rc < 0 || v == NULL) {
        return rc;
    }
    p = krc_kubeconfig_resolve_path(f, v);
    if (p == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (access(p, R_OK) != 0) {
        int e = errno;
        rc =
            krc_kubeconfig_err(err, KRC_EIO, f, krc_yaml_doc_map_get(&f->doc, map, key),
                               "%s: %s %s: %s", what, key, p, krc_errno_str(e, ebuf, sizeof(ebuf)));
        krc_free(p);
        return rc;
    }
    *ret = p;
    return 0;
}

static int data_field(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                      unsigned char **ret, size_t *ret_len, struct krc_error *err)
{
    const char *v;
    char why[128];
    int rc;

    rc = krc_kubeconfig_get_str(f, map, what, key, &v, err);
    if (rc < 0 || v == NULL) {
        return rc;
    }
    rc = krc_base64_decode(v, strlen(v), ret, ret_len, why, sizeof(why));
    if (rc == KRC_ENOMEM) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (rc < 0) {
        return krc_kubeconfig_err(err, KRC_EPARSE, f, krc_yaml_doc_map_get(&f->doc, map, key),
                                  "%s: %s is not valid base64: %s", what, key, why);
    }
    return 0;
}

/* "https://h:p/" -> "https://h:p"; a bare host gets https://. */
static int normalize_server(struct kc_file *f, yaml_node_t *node, const char *what,
                            const char *server, char **ret, struct krc_error *err)
{
    const char *sep = strstr(server, "://");
    size_t len = strlen(server);
    struct krc_buf b;

    if (sep != NULL && !((sep - server == 5 && strncmp(server, "https", 5) == 0) ||
                         (sep - server == 4 && strncmp(server, "http", 4) == 0))) {
        return krc_kubeconfig_err(err, KRC_EINVAL, f, node,
                                  "%s: server \"%s\" must be an http(s) URL", what, server);
    }
    while (len > 0 && server[len - 1] == '/') {
        len--;
    }
    if (len == 0 || (sep != NULL && len <= (size_t)(sep - server) + 3)) {
        return krc_kubeconfig_err(err, KRC_EINVAL, f, node, "%s: server \"%s\" has no host", what,
                                  server);
    }
    krc_buf_init(&b, len + 16);
    if ((sep == NULL && krc_buf_append_str(&b, "https://") < 0) ||
        krc_buf_append(&b, server, len) < 0) {
        krc_buf_cleanup(&b);
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    *ret = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    if (*ret == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    return 0;
}

static int dup_field(const char *v, char **ret, struct krc_error *err)
{
    if (v == NULL) {
        return 0;
    }
    *ret = krc_strdup(v);
    if (*ret == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    return 0;
}

static int load_cluster(struct kc_file *f, yaml_node_t *c, const char *name,
                        struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    char what[300];
    const char *server;
    const char *v;
    int rc;

    snprintf(what, sizeof(what), "cluster \"%s\"", name);
    rc = krc_kubeconfig_get_str(f, c, what, "server", &server, err);
    if (rc < 0) {
        return rc;
    }
    if (server == NULL) {
        return krc_kubeconfig_err(err, KRC_EINVAL, f, c, "%s has no server", what);
    }
    rc = normalize_server(f, krc_yaml_doc_map_get(&f->doc, c, "server"), what, server, &cfg->server,
                          err);
    if (rc < 0) {
        return rc;
    }
    /* certificate-authority-data overrides certificate-authority. */
    rc = data_field(f, c, what, "certificate-authority-data", &cfg->ca_pem, &cfg->ca_pem_len, err);
    if (rc == 0 && cfg->ca_pem == NULL) {
        rc = path_field(f, c, what, "certificate-authority", &cfg->ca_file, err);
    }
    if (rc < 0) {
        return rc;
    }
    rc = krc_kubeconfig_get_bool(f, c, what, "insecure-skip-tls-verify",
                                 &cfg->insecure_skip_tls_verify, err);
    if (rc < 0) {
        return rc;
    }
    if (cfg->insecure_skip_tls_verify && (cfg->ca_pem != NULL || cfg->ca_file != NULL)) {
        /* client-go refuses this combination too. */
        return krc_kubeconfig_err(
            err, KRC_EINVAL, f, c,
            "%s sets both insecure-skip-tls-verify and a certificate authority; "
            "remove one of them",
            what);
    }
    rc = krc_kubeconfig_get_str(f, c, what, "tls-server-name", &v, err);
    if (rc == 0) {
        rc = dup_field(v, &cfg->tls_server_name, err);
    }
    if (rc < 0) {
        return rc;
    }
    rc = krc_kubeconfig_get_str(f, c, what, "proxy-url", &v, err);
    if (rc < 0) {
        return rc;
    }
    if (v != NULL) {
        KRC_DEBUG("kubeconfig %s: %s sets proxy-url, which krc ignores", f->path, what);
    }
    return 0;
}

static int load_user(struct kc_file *f, yaml_node_t *u, const char *name,
                     struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    char what[300];
    yaml_node_t *plugin;
    const char *v = NULL;
    const char *pw = NULL;
    long bad;
    int rc;

    snprintf(what, sizeof(what), "user \"%s\"", name);
    rc = krc_kubeconfig_get_node(f, u, what, "exec", YAML_MAPPING_NODE, &plugin, err);
    if (rc < 0) {
        return rc;
    }
    if (plugin != NULL) {
        return krc_kubeconfig_load_exec(f, plugin, name, cfg, err);
    }
    rc = krc_kubeconfig_get_node(f, u, what, "auth-provider", YAML_MAPPING_NODE, &plugin, err);
    if (rc < 0) {
        return rc;
    }
    if (plugin != NULL) {
        rc = krc_kubeconfig_get_str(f, plugin, what, "name", &v, err);
        if (rc < 0) {
            return rc;
        }
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "kubeconfig %s: user \"%s\" uses the auth-provider plugin \"%s\", "
                             "which krc does not support; %s",
                             f->path, name, v != NULL ? v : "", unsupported_hint);
    }
    rc = krc_kubeconfig_get_str(f, u, what, "username", &v, err);
    if (rc == 0) {
        rc = krc_kubeconfig_get_str(f, u, what, "password", &pw, err);
    }
    if (rc < 0) {
        return rc;
    }
    if (v != NULL || pw != NULL) {
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "kubeconfig %s: user \"%s\" uses basic auth (username/password), "
                             "which is not supported by krc; %s",
                             f->path, name, unsupported_hint);
    }

    rc = data_field(f, u, what, "client-certificate-data", &cfg->client_cert_pem,
                    &cfg->client_cert_pem_len, err);
    if (rc == 0 && cfg->client_cert_pem == NULL) {
        rc = path_field(f, u, what, "client-certificate", &cfg->client_cert_file, err);
    }
    if (rc == 0) {
        rc = data_field(f, u, what, "client-key-data", &cfg->client_key_pem,
                        &cfg->client_key_pem_len, err);
    }
    if (rc == 0 && cfg->client_key_pem == NULL) {
        rc = path_field(f, u, what, "client-key", &cfg->client_key_file, err);
    }
    if (rc < 0) {
        return rc;
    }
    if ((cfg->client_cert_pem != NULL || cfg->client_cert_file != NULL) !=
        (cfg->client_key_pem != NULL || cfg->client_key_file != NULL)) {
        return krc_kubeconfig_err(err, KRC_EINVAL, f, u,
                                  "%s needs both a client certificate and a client key "
                                  "(client-certificate(-data) and client-key(-data))",
                                  what);
    }

    rc = krc_kubeconfig_get_str(f, u, what, "token", &v, err);
    if (rc < 0) {
        return rc;
    }
    if (v != NULL) {
        bad = krc_auth_bad_token_byte(v, strlen(v));
        if (bad >= 0) {
            return krc_kubeconfig_err(
                err, KRC_EINVAL, f, krc_yaml_doc_map_get(&f->doc, u, "token"),
                "%s: token contains whitespace or a control character at offset %ld", what, bad);
        }
        rc = dup_field(v, &cfg->token, err);
        if (rc < 0) {
            return rc;
        }
    }
    /* tokenFile (camelCase, unlike the other keys) wins over token at request time. */
    rc = path_field(f, u, what, "tokenFile", &cfg->token_file, err);
    if (rc == 0 && cfg->token_file != NULL) {
        /* read now: one that cannot work (a directory, empty, a bad byte)
         * stops the start like a missing one; a read that fails later
         * (a rotating token) keeps the last token (krc_token_source_get) */
        char why[160];
        char *tok = NULL;
        rc = krc_auth_read_token_file(cfg->token_file, &tok, why, sizeof(why));
        krc_free(tok);
        if (rc < 0) {
            rc = krc_kubeconfig_err(err, rc, f, krc_yaml_doc_map_get(&f->doc, u, "tokenFile"),
                                    "%s: tokenFile %s: %s", what, cfg->token_file, why);
        }
    }
    return rc;
}

static int make_source(const char *path, const char *context, char **ret, struct krc_error *err)
{
    struct krc_buf b;

    krc_buf_init(&b, strlen(path) + strlen(context) + 64);
    if (krc_buf_printf(&b, "kubeconfig %s, context %s", path, context) < 0) {
        krc_buf_cleanup(&b);
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    *ret = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    if (*ret == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    return 0;
}

/* Resolve the context in a loaded set of files into cfg. `origin` names the
 * file list for messages that concern no single file. */
static int kc_resolve(struct kc_set *set, const char *origin, const char *context_opt,
                      struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    const char *ctx_name = context_opt;
    struct kc_file *cur_file = NULL; /* file that set current-context */
    const char *cluster_name = NULL;
    const char *user_name = NULL;
    const char *ns = NULL;
    yaml_node_t *ctx = NULL;
    yaml_node_t *body = NULL;
    size_t fi = 0;
    char what[300];
    int rc;

    if (ctx_name == NULL || ctx_name[0] == '\0') {
        ctx_name = NULL;
        for (size_t i = 0; i < set->n && ctx_name == NULL; i++) {
            rc = krc_kubeconfig_get_str(&set->files[i], kc_root(&set->files[i]), "top level",
                                        "current-context", &ctx_name, err);
            if (rc < 0) {
                return rc;
            }
            cur_file = &set->files[i];
        }
        if (ctx_name == NULL) {
            return krc_error_set(err, KRC_EINVAL,
                                 "kubeconfig %s: current-context is not set; set it "
                                 "(kubectl config use-context NAME) or pass --context NAME",
                                 origin);
        }
    }

    rc = kc_find(set, "contexts", "context", ctx_name, &fi, &ctx, err);
    if (rc == KRC_ENOTFOUND) {
        if (cur_file != NULL) {
            return krc_kubeconfig_err(
                err, KRC_ENOTFOUND, cur_file,
                krc_yaml_doc_map_get(&cur_file->doc, kc_root(cur_file), "current-context"),
                "current-context \"%s\" is not defined in contexts", ctx_name);
        }
        return krc_error_set(err, KRC_ENOTFOUND,
                             "kubeconfig %s: context \"%s\" (from --context) is not defined in "
                             "contexts",
                             origin, ctx_name);
    }
    if (rc < 0) {
        return rc;
    }
    snprintf(what, sizeof(what), "context \"%s\"", ctx_name);
    {
        struct kc_file *cf = &set->files[fi];
        rc = krc_kubeconfig_get_str(cf, ctx, what, "cluster", &cluster_name, err);
        if (rc == 0) {
            rc = krc_kubeconfig_get_str(cf, ctx, what, "user", &user_name, err);
        }
        if (rc == 0) {
            rc = krc_kubeconfig_get_str(cf, ctx, what, "namespace", &ns, err);
        }
        if (rc < 0) {
            return rc;
        }
        if (cluster_name == NULL) {
            return krc_kubeconfig_err(err, KRC_EINVAL, cf, ctx, "%s has no cluster", what);
        }
        rc = dup_field(ns, &cfg->namespace, err);
        if (rc == 0) {
            rc = make_source(cf->path, ctx_name, &cfg->source, err);
        }
        if (rc < 0) {
            return rc;
        }

        /* The named cluster and user may live in any file of the set. */
        size_t ci;
        rc = kc_find(set, "clusters", "cluster", cluster_name, &ci, &body, err);
        if (rc == KRC_ENOTFOUND) {
            return krc_kubeconfig_err(
                err, KRC_ENOTFOUND, cf, krc_yaml_doc_map_get(&cf->doc, ctx, "cluster"),
                "%s refers to cluster \"%s\", which is not defined in clusters", what,
                cluster_name);
        }
        if (rc == 0) {
            rc = load_cluster(&set->files[ci], body, cluster_name, cfg, err);
        }
        if (rc < 0 || user_name == NULL) {
            return rc;
        }
        size_t ui;
        rc = kc_find(set, "users", "user", user_name, &ui, &body, err);
        if (rc == KRC_ENOTFOUND) {
            return krc_kubeconfig_err(
                err, KRC_ENOTFOUND, cf, krc_yaml_doc_map_get(&cf->doc, ctx, "user"),
                "%s refers to user \"%s\", which is not defined in users", what, user_name);
        }
        if (rc == 0) {
            rc = load_user(&set->files[ui], body, user_name, cfg, err);
        }
    }
    return rc;
}

/* `list` is one path (single) or a ':'-separated $KUBECONFIG value. */
int krc_kubeconfig_load(const char *list, int single, const char *context,
                        struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    struct kc_set *set;
    int rc = 0;

    set = krc_calloc(1, sizeof(*set));
    if (set == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (single) {
        rc = kc_add(set, list, strlen(list), 0, err);
    } else {
        const char *p = list;
        while (rc == 0 && *p != '\0') {
            const char *end = strchr(p, ':');
            size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
            if (len > 0) {
                rc = kc_add(set, p, len, 1, err);
            }
            p += len;
            if (*p == ':') {
                p++;
            }
        }
        if (rc == 0 && set->n == 0) {
            rc = krc_error_set(err, KRC_EIO,
                               "none of the files in $KUBECONFIG (%s) exist; fix $KUBECONFIG, "
                               "unset it to use in-cluster or ~/.kube/config, or pass "
                               "--kubeconfig FILE",
                               list);
        }
    }
    if (rc == 0) {
        rc = kc_resolve(set, list, context, cfg, err);
    }
    kc_set_cleanup(set);
    krc_free(set);
    return rc;
}
