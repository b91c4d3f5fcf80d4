/* Kubernetes API location and credentials: in-cluster service account or
 * kubeconfig (parsed with libyaml's document API), and a token source that
 * re-reads rotating token files the way client-go does. */
#include "krc/kube/kube_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <yaml.h>

#include "krc/kube/kube_exec.h"
#include "krc/util/base64.h"
#include "krc/util/buf.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/yaml_doc.h"

#define KUBECONFIG_MAX_BYTES (4 * 1024 * 1024)
#define TOKEN_MAX_BYTES (64 * 1024)
#define NAMESPACE_MAX_BYTES 1024
#define KUBECONFIG_MAX_FILES 64

static const char unsupported_hint[] =
    "use a service-account token (token or tokenFile), client certificates or an exec "
    "credential plugin";

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Read a whole file (at most max bytes) into a NUL-terminated allocation.
 * KRC_EIO with *ret_errno set, KRC_ETOOBIG, or KRC_ENOMEM. */
static int read_whole_file(const char *path, size_t max, char **ret_data, size_t *ret_len,
                           int *ret_errno)
{
    struct krc_buf b;
    char chunk[4096];
    int fd;
    int rc = 0;

    *ret_errno = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *ret_errno = errno;
        return KRC_EIO;
    }
    krc_buf_init(&b, max);
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            *ret_errno = errno;
            rc = KRC_EIO;
            goto out_buf;
        }
        if (n == 0) {
            break;
        }
        rc = krc_buf_append(&b, chunk, (size_t)n);
        if (rc < 0) {
            goto out_buf;
        }
    }
    *ret_len = b.len;
    *ret_data = krc_buf_take(&b);
    if (*ret_data == NULL) {
        rc = KRC_ENOMEM;
    }
out_buf:
    krc_buf_cleanup(&b);
    close(fd);
    return rc;
}

/* Trim whitespace in place; returns the start inside s and sets *ret_len. */
static char *trim(char *s, size_t len, size_t *ret_len)
{
    while (len > 0 && is_space((unsigned char)s[0])) {
        s++;
        len--;
    }
    while (len > 0 && is_space((unsigned char)s[len - 1])) {
        len--;
    }
    s[len] = '\0';
    *ret_len = len;
    return s;
}

/* A bearer token goes into an HTTP header: refuse anything that is not
 * visible ASCII so a stray newline cannot inject headers. Returns the offset
 * of the first bad byte, or -1. The token itself never reaches a message. */
static long bad_token_byte(const char *t, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c <= 0x20 || c >= 0x7f) {
            return (long)i;
        }
    }
    return -1;
}

static char *join_path(const char *dir, const char *name)
{
    struct krc_buf b;
    size_t dl = strlen(dir);

    krc_buf_init(&b, 4096 + strlen(name) + dl);
    if (krc_buf_append_str(&b, dir) < 0 ||
        (dl > 0 && dir[dl - 1] != '/' && krc_buf_append_char(&b, '/') < 0) ||
        krc_buf_append_str(&b, name) < 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    return krc_buf_take(&b);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL) {
        return krc_strdup(".");
    }
    if (slash == path) {
        return krc_strdup("/");
    }
    return krc_strndup(path, (size_t)(slash - path));
}

/* ---------------------------------------------------------------------- */
/* Token source                                                           */

struct krc_token_source {
    pthread_mutex_t lock;
    char *static_token;
    char *file;
    int refresh_seconds;
    char *cached; /* last good token read from file */
    struct timespec read_at;
    int stale;
};

/* Read and validate a token file; *ret_token is a krc allocation. */
static int read_token_file(const char *path, char **ret_token, struct krc_error *err)
{
    char ebuf[128];
    char *data = NULL;
    char *t;
    size_t len = 0;
    size_t tlen;
    int e;
    long bad;
    int rc;

    rc = read_whole_file(path, TOKEN_MAX_BYTES, &data, &len, &e);
    if (rc == KRC_EIO) {
        return krc_error_set(err, KRC_EIO, "token file %s: %s", path,
                             krc_errno_str(e, ebuf, sizeof(ebuf)));
    }
    if (rc == KRC_ETOOBIG) {
        return krc_error_set(err, KRC_ETOOBIG, "token file %s is larger than %d bytes", path,
                             TOKEN_MAX_BYTES);
    }
    if (rc < 0) {
        return krc_error_set(err, rc, "token file %s: out of memory", path);
    }
    t = trim(data, len, &tlen);
    if (tlen == 0) {
        krc_free(data);
        return krc_error_set(err, KRC_EIO, "token file %s is empty", path);
    }
    bad = bad_token_byte(t, tlen);
    if (bad >= 0) {
        krc_free(data);
        return krc_error_set(err, KRC_EINVAL,
                             "token file %s: the token contains whitespace or a control "
                             "character at offset %ld",
                             path, bad);
    }
    if (t != data) {
        memmove(data, t, tlen + 1);
    }
    *ret_token = data;
    return 0;
}

struct krc_token_source *krc_token_source_new(const char *static_token, const char *token_file,
                                              int refresh_seconds)
{
    struct krc_token_source *ts = krc_calloc(1, sizeof(*ts));

    if (ts == NULL) {
        return NULL;
    }
    if (pthread_mutex_init(&ts->lock, NULL) != 0) {
        krc_free(ts);
        return NULL;
    }
    ts->refresh_seconds = refresh_seconds;
    if (static_token != NULL) {
        ts->static_token = krc_strdup(static_token);
        if (ts->static_token == NULL) {
            goto fail;
        }
        krc_log_add_secret(static_token);
    }
    if (token_file != NULL) {
        ts->file = krc_strdup(token_file);
        if (ts->file == NULL) {
            goto fail;
        }
    }
    return ts;
fail:
    krc_token_source_free(ts);
    return NULL;
}

void krc_token_source_free(struct krc_token_source *ts)
{
    if (ts == NULL) {
        return;
    }
    pthread_mutex_destroy(&ts->lock);
    krc_free(ts->static_token);
    krc_free(ts->file);
    krc_free(ts->cached);
    krc_free(ts);
}

void krc_token_source_invalidate(struct krc_token_source *ts)
{
    if (ts == NULL) {
        return;
    }
    pthread_mutex_lock(&ts->lock);
    ts->stale = 1;
    pthread_mutex_unlock(&ts->lock);
}

static int needs_reread(const struct krc_token_source *ts, const struct timespec *now)
{
    time_t age;

    if (ts->cached == NULL || ts->stale || ts->refresh_seconds <= 0) {
        return 1;
    }
    age = now->tv_sec - ts->read_at.tv_sec;
    if (now->tv_nsec < ts->read_at.tv_nsec) {
        age--;
    }
    return age >= (time_t)ts->refresh_seconds;
}

int krc_token_source_get(struct krc_token_source *ts, char *out, size_t outsz,
                         struct krc_error *err)
{
    struct krc_error read_err = {0};
    const char *tok;
    size_t len;
    int rc = 0;

    pthread_mutex_lock(&ts->lock);
    if (ts->file != NULL) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (needs_reread(ts, &now)) {
            char *fresh = NULL;
            if (read_token_file(ts->file, &fresh, &read_err) == 0) {
                krc_free(ts->cached);
                ts->cached = fresh;
                ts->read_at = now;
                ts->stale = 0;
                krc_log_add_secret(fresh);
            }
            /* On failure the last good token stays in use (as in client-go)
             * and the next call tries again. */
        }
    }
    tok = ts->cached != NULL ? ts->cached : ts->static_token;
    if (tok == NULL) {
        if (ts->file != NULL) {
            rc = krc_error_set(err, read_err.code == KRC_ENOMEM ? KRC_ENOMEM : KRC_EIO, "%s",
                               read_err.msg);
            goto out_unlock;
        }
        tok = "";
    }
    len = strlen(tok);
    if (len >= outsz) {
        rc = krc_error_set(err, KRC_ETOOBIG, "bearer token of %zu bytes does not fit in %zu bytes",
                           len, outsz);
        goto out_unlock;
    }
    memcpy(out, tok, len + 1);
out_unlock:
    pthread_mutex_unlock(&ts->lock);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* kubeconfig documents                                                   */

struct kc_file {
    char *path;
    char *dir;
    yaml_document_t doc;
    int have_doc;
};

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

/* Error about file f, with the node's position appended when n is given. */
static int kc_err(struct krc_error *err, int code, const struct kc_file *f, const yaml_node_t *n,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int kc_err(struct krc_error *err, int code, const struct kc_file *f, const yaml_node_t *n,
                  const char *fmt, ...)
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
static int get_str(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                   const char **ret, struct krc_error *err)
{
    yaml_node_t *n = krc_yaml_doc_map_get(&f->doc, map, key);

    *ret = NULL;
    if (krc_yaml_doc_is_null(n, 1)) {
        return 0;
    }
    if (n->type != YAML_SCALAR_NODE) {
        return kc_err(err, KRC_EPARSE, f, n, "%s: %s must be a string", what, key);
    }
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        return kc_err(err, KRC_EPARSE, f, n, "%s: %s contains a NUL character", what, key);
    }
    if (n->data.scalar.length > 0) {
        *ret = (const char *)n->data.scalar.value;
    }
    return 0;
}

/* Mapping or sequence field: *ret NULL when absent or null. */
static int get_node(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                    yaml_node_type_t type, yaml_node_t **ret, struct krc_error *err)
{
    yaml_node_t *n = krc_yaml_doc_map_get(&f->doc, map, key);

    *ret = NULL;
    if (krc_yaml_doc_is_null(n, 1)) {
        return 0;
    }
    if (n->type != type) {
        return kc_err(err, KRC_EPARSE, f, n, "%s: %s must be a %s", what, key,
                      type == YAML_MAPPING_NODE ? "mapping" : "list");
    }
    *ret = n;
    return 0;
}

static int get_bool(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
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
    return kc_err(err, KRC_EPARSE, f, n, "%s: %s must be true or false", what, key);
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

    rc = read_whole_file(f->path, KUBECONFIG_MAX_BYTES, &data, &len, &e);
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
        return kc_err(err, KRC_EPARSE, f, root, "the top level must be a mapping");
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
    f->dir = dir_of(f->path);
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

        rc = get_node(f, kc_root(f), "top level", section, YAML_SEQUENCE_NODE, &seq, err);
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
                return kc_err(err, KRC_EPARSE, f, entry, "%s: every entry must be a mapping",
                              section);
            }
            rc = get_str(f, entry, section, "name", &entry_name, err);
            if (rc < 0) {
                return rc;
            }
            if (entry_name == NULL || strcmp(entry_name, name) != 0) {
                continue;
            }
            rc = get_node(f, entry, section, body, YAML_MAPPING_NODE, ret_body, err);
            if (rc < 0) {
                return rc;
            }
            *ret_file = i;
            return 0;
        }
    }
    return KRC_ENOTFOUND;
}

static char *resolve_path(const struct kc_file *f, const char *p)
{
    if (p[0] == '/') {
        return krc_strdup(p);
    }
    return join_path(f->dir, p);
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

    rc = get_str(f, map, what, key, &v, err);
    if (rc < 0 || v == NULL) {
        return rc;
    }
    p = resolve_path(f, v);
    if (p == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (access(p, R_OK) != 0) {
        int e = errno;
        rc = kc_err(err, KRC_EIO, f, krc_yaml_doc_map_get(&f->doc, map, key), "%s: %s %s: %s", what,
                    key, p, krc_errno_str(e, ebuf, sizeof(ebuf)));
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

    rc = get_str(f, map, what, key, &v, err);
    if (rc < 0 || v == NULL) {
        return rc;
    }
    rc = krc_base64_decode(v, strlen(v), ret, ret_len, why, sizeof(why));
    if (rc == KRC_ENOMEM) {
        return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (rc < 0) {
        return kc_err(err, KRC_EPARSE, f, krc_yaml_doc_map_get(&f->doc, map, key),
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
        return kc_err(err, KRC_EINVAL, f, node, "%s: server \"%s\" must be an http(s) URL", what,
                      server);
    }
    while (len > 0 && server[len - 1] == '/') {
        len--;
    }
    if (len == 0 || (sep != NULL && len <= (size_t)(sep - server) + 3)) {
        return kc_err(err, KRC_EINVAL, f, node, "%s: server \"%s\" has no host", what, server);
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
    rc = get_str(f, c, what, "server", &server, err);
    if (rc < 0) {
        return rc;
    }
    if (server == NULL) {
        return kc_err(err, KRC_EINVAL, f, c, "%s has no server", what);
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
    rc = get_bool(f, c, what, "insecure-skip-tls-verify", &cfg->insecure_skip_tls_verify, err);
    if (rc < 0) {
        return rc;
    }
    if (cfg->insecure_skip_tls_verify && (cfg->ca_pem != NULL || cfg->ca_file != NULL)) {
        /* client-go refuses this combination too. */
        return kc_err(err, KRC_EINVAL, f, c,
                      "%s sets both insecure-skip-tls-verify and a certificate authority; "
                      "remove one of them",
                      what);
    }
    rc = get_str(f, c, what, "tls-server-name", &v, err);
    if (rc == 0) {
        rc = dup_field(v, &cfg->tls_server_name, err);
    }
    if (rc < 0) {
        return rc;
    }
    rc = get_str(f, c, what, "proxy-url", &v, err);
    if (rc < 0) {
        return rc;
    }
    if (v != NULL) {
        KRC_DEBUG("kubeconfig %s: %s sets proxy-url, which krc ignores", f->path, what);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* exec credential plugins (the running is in kube_exec.c)                */

#define EXEC_API_V1 "client.authentication.k8s.io/v1"
#define EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define EXEC_MAX_ITEMS 256

struct exec_parts {
    const char *args[EXEC_MAX_ITEMS];
    size_t nargs;
    char *env[EXEC_MAX_ITEMS];
    size_t nenv;
};

static void exec_parts_cleanup(struct exec_parts *ep)
{
    for (size_t i = 0; i < ep->nenv; i++) {
        krc_free(ep->env[i]);
    }
    ep->nenv = 0;
}

static int b64_encode(struct krc_buf *b, const unsigned char *in, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    for (size_t i = 0; i < len; i += 3) {
        unsigned long v = (unsigned long)in[i] << 16;
        char q[4];

        v |= i + 1 < len ? (unsigned long)in[i + 1] << 8 : 0;
        v |= i + 2 < len ? (unsigned long)in[i + 2] : 0;
        q[0] = abc[(v >> 18) & 63];
        q[1] = abc[(v >> 12) & 63];
        q[2] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
        q[3] = i + 2 < len ? abc[v & 63] : '=';
        if (krc_buf_append(b, q, 4) < 0) {
            return KRC_ENOMEM;
        }
    }
    return 0;
}

/* spec.cluster of the ExecCredential request (provideClusterInfo: true):
 * server, tls-server-name, insecure-skip-tls-verify and the CA as base64. */
static int exec_cluster_json(const struct krc_kube_auth_config *cfg, struct krc_buf *b,
                             struct krc_error *err)
{
    unsigned char *ca = cfg->ca_pem;
    size_t ca_len = cfg->ca_pem_len;
    char *file_data = NULL;
    char ebuf[128];
    int e;
    int rc;

    if (ca == NULL && cfg->ca_file != NULL) {
        rc = read_whole_file(cfg->ca_file, KUBECONFIG_MAX_BYTES, &file_data, &ca_len, &e);
        if (rc < 0) {
            return krc_error_set(err, rc, "certificate-authority %s: %s", cfg->ca_file,
                                 rc == KRC_EIO ? krc_errno_str(e, ebuf, sizeof(ebuf))
                                               : "too large or out of memory");
        }
        ca = (unsigned char *)file_data;
    }
    rc = krc_buf_append_str(b, "{\"server\":\"");
    if (rc == 0) {
        rc = krc_buf_append_json_str(b, cfg->server, strlen(cfg->server));
    }
    if (rc == 0 && cfg->tls_server_name != NULL) {
        rc = krc_buf_append_str(b, "\",\"tls-server-name\":\"");
        if (rc == 0) {
            rc = krc_buf_append_json_str(b, cfg->tls_server_name, strlen(cfg->tls_server_name));
        }
    }
    if (rc == 0 && cfg->insecure_skip_tls_verify) {
        rc = krc_buf_append_str(b, "\",\"insecure-skip-tls-verify\":true");
    } else if (rc == 0) {
        rc = krc_buf_append_str(b, "\"");
    }
    if (rc == 0 && ca != NULL) {
        rc = krc_buf_append_str(b, ",\"certificate-authority-data\":\"");
        if (rc == 0) {
            rc = b64_encode(b, ca, ca_len);
        }
        if (rc == 0) {
            rc = krc_buf_append_str(b, "\"");
        }
    }
    if (rc == 0) {
        rc = krc_buf_append_str(b, "}");
    }
    krc_free(file_data);
    return rc < 0 ? krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory") : 0;
}

/* apiVersion and interactiveMode; *ret_api borrowed. */
static int exec_mode(struct kc_file *f, yaml_node_t *x, const char *what, const char **ret_api,
                     struct krc_error *err)
{
    const char *api;
    const char *mode;
    int rc = get_str(f, x, what, "apiVersion", &api, err);

    if (rc == 0) {
        rc = get_str(f, x, what, "interactiveMode", &mode, err);
    }
    if (rc < 0) {
        return rc;
    }
    if (api == NULL || (strcmp(api, EXEC_API_V1) != 0 && strcmp(api, EXEC_API_V1BETA1) != 0)) {
        return kc_err(err, api == NULL ? KRC_EINVAL : KRC_EUNSUPPORTED, f,
                      api != NULL ? krc_yaml_doc_map_get(&f->doc, x, "apiVersion") : x,
                      "%s: exec.apiVersion %s%s%s; krc supports " EXEC_API_V1
                      " and " EXEC_API_V1BETA1,
                      what, api != NULL ? "\"" : "is not set", api != NULL ? api : "",
                      api != NULL ? "\" is not supported" : "");
    }
    *ret_api = api;
    if (mode == NULL && strcmp(api, EXEC_API_V1) == 0) {
        return kc_err(err, KRC_EINVAL, f, x,
                      "%s: exec.interactiveMode must be set with " EXEC_API_V1
                      " (Never, IfAvailable or Always)",
                      what);
    }
    if (mode == NULL || strcmp(mode, "Never") == 0 || strcmp(mode, "IfAvailable") == 0) {
        return 0; /* krc never gives the plugin a terminal: spec.interactive is false */
    }
    if (strcmp(mode, "Always") == 0) {
        return kc_err(err, KRC_EUNSUPPORTED, f, krc_yaml_doc_map_get(&f->doc, x, "interactiveMode"),
                      "%s: exec.interactiveMode is Always, but krc runs the plugin without a "
                      "terminal (stdin is /dev/null); use a plugin mode that needs no input "
                      "(Never or IfAvailable)",
                      what);
    }
    return kc_err(err, KRC_EINVAL, f, krc_yaml_doc_map_get(&f->doc, x, "interactiveMode"),
                  "%s: exec.interactiveMode \"%s\" is not Never, IfAvailable or Always", what,
                  mode);
}

/* exec.args (strings) and exec.env ([{name, value}]) into ep. */
static int exec_lists(struct kc_file *f, yaml_node_t *x, const char *what, struct exec_parts *ep,
                      struct krc_error *err)
{
    yaml_node_t *seq;
    int rc = get_node(f, x, what, "args", YAML_SEQUENCE_NODE, &seq, err);

    for (size_t i = 0; rc == 0 && seq != NULL && i < krc_yaml_doc_seq_len(seq); i++) {
        yaml_node_t *a = krc_yaml_doc_seq_item(&f->doc, seq, i);
        if (a == NULL || a->type != YAML_SCALAR_NODE || i >= EXEC_MAX_ITEMS) {
            return kc_err(err, KRC_EPARSE, f, a,
                          "%s: exec.args must be a list of at most %d strings", what,
                          EXEC_MAX_ITEMS);
        }
        ep->args[ep->nargs++] = (const char *)a->data.scalar.value;
    }
    if (rc == 0) {
        rc = get_node(f, x, what, "env", YAML_SEQUENCE_NODE, &seq, err);
    }
    for (size_t i = 0; rc == 0 && seq != NULL && i < krc_yaml_doc_seq_len(seq); i++) {
        yaml_node_t *e = krc_yaml_doc_seq_item(&f->doc, seq, i);
        const char *n = NULL;
        const char *v = NULL;
        struct krc_buf b;

        if (e == NULL || e->type != YAML_MAPPING_NODE || i >= EXEC_MAX_ITEMS) {
            return kc_err(err, KRC_EPARSE, f, e,
                          "%s: exec.env must be a list of at most %d {name, value} mappings", what,
                          EXEC_MAX_ITEMS);
        }
        rc = get_str(f, e, what, "name", &n, err);
        if (rc == 0) {
            rc = get_str(f, e, what, "value", &v, err);
        }
        if (rc == 0 && (n == NULL || strchr(n, '=') != NULL)) {
            return kc_err(err, KRC_EINVAL, f, e, "%s: exec.env[%zu] needs a name without '='", what,
                          i);
        }
        krc_buf_init(&b, 1024 * 1024);
        if (rc == 0 && krc_buf_printf(&b, "%s=%s", n, v != NULL ? v : "") == 0) {
            ep->env[ep->nenv] = krc_buf_take(&b);
            if (ep->env[ep->nenv] != NULL) {
                ep->nenv++;
            } else {
                rc = krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
            }
        } else if (rc == 0) {
            rc = krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
        }
        krc_buf_cleanup(&b);
    }
    return rc;
}

/* A user with `exec`: check it now and make the plugin (run at the first
 * request). The cluster is loaded already (provideClusterInfo needs it). */
static int load_exec(struct kc_file *f, yaml_node_t *x, const char *name,
                     struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    struct krc_exec_spec spec;
    struct exec_parts ep;
    struct krc_buf origin;
    struct krc_buf cluster;
    const char *cmd = NULL;
    char *cmd_path = NULL;
    char what[300];
    int provide = 0;
    int rc;

    memset(&spec, 0, sizeof(spec));
    memset(&ep, 0, sizeof(ep));
    krc_buf_init(&origin, 64 * 1024);
    krc_buf_init(&cluster, 8 * 1024 * 1024);
    snprintf(what, sizeof(what), "user \"%s\"", name);
    rc = exec_mode(f, x, what, &spec.api_version, err);
    if (rc == 0) {
        rc = get_str(f, x, what, "command", &cmd, err);
    }
    if (rc == 0 && cmd == NULL) {
        rc = kc_err(err, KRC_EINVAL, f, x, "%s: exec has no command", what);
    }
    if (rc == 0) {
        rc = get_str(f, x, what, "installHint", &spec.install_hint, err);
    }
    if (rc == 0) {
        rc = get_bool(f, x, what, "provideClusterInfo", &provide, err);
    }
    if (rc == 0) {
        rc = exec_lists(f, x, what, &ep, err);
    }
    if (rc == 0 && provide) {
        rc = exec_cluster_json(cfg, &cluster, err);
        spec.cluster_json = krc_buf_str(&cluster);
    }
    if (rc == 0 && cmd != NULL && strchr(cmd, '/') != NULL) {
        /* A path relative to the kubeconfig's folder, as in client-go; a bare
         * name is looked up in $PATH. */
        cmd_path = resolve_path(f, cmd);
        if (cmd_path == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
        }
    }
    if (rc == 0 && krc_buf_printf(&origin, "kubeconfig %s: user \"%s\"", f->path, name) < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
    }
    if (rc == 0) {
        spec.origin = krc_buf_str(&origin);
        spec.command = cmd_path != NULL ? cmd_path : cmd;
        spec.args = ep.args;
        spec.nargs = ep.nargs;
        spec.env = (const char *const *)ep.env;
        spec.nenv = ep.nenv;
        cfg->exec = krc_exec_plugin_new(&spec, err);
        rc = cfg->exec == NULL ? KRC_ENOMEM : 0;
    }
    exec_parts_cleanup(&ep);
    krc_free(cmd_path);
    krc_buf_cleanup(&origin);
    krc_buf_cleanup(&cluster);
    return rc;
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
    rc = get_node(f, u, what, "exec", YAML_MAPPING_NODE, &plugin, err);
    if (rc < 0) {
        return rc;
    }
    if (plugin != NULL) {
        return load_exec(f, plugin, name, cfg, err);
    }
    rc = get_node(f, u, what, "auth-provider", YAML_MAPPING_NODE, &plugin, err);
    if (rc < 0) {
        return rc;
    }
    if (plugin != NULL) {
        rc = get_str(f, plugin, what, "name", &v, err);
        if (rc < 0) {
            return rc;
        }
        return krc_error_set(err, KRC_EUNSUPPORTED,
                             "kubeconfig %s: user \"%s\" uses the auth-provider plugin \"%s\", "
                             "which krc does not support; %s",
                             f->path, name, v != NULL ? v : "", unsupported_hint);
    }
    rc = get_str(f, u, what, "username", &v, err);
    if (rc == 0) {
        rc = get_str(f, u, what, "password", &pw, err);
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
        return kc_err(err, KRC_EINVAL, f, u,
                      "%s needs both a client certificate and a client key "
                      "(client-certificate(-data) and client-key(-data))",
                      what);
    }

    rc = get_str(f, u, what, "token", &v, err);
    if (rc < 0) {
        return rc;
    }
    if (v != NULL) {
        bad = bad_token_byte(v, strlen(v));
        if (bad >= 0) {
            return kc_err(err, KRC_EINVAL, f, krc_yaml_doc_map_get(&f->doc, u, "token"),
                          "%s: token contains whitespace or a control character at offset %ld",
                          what, bad);
        }
        rc = dup_field(v, &cfg->token, err);
        if (rc < 0) {
            return rc;
        }
    }
    /* tokenFile (camelCase, unlike the other keys) wins over token at request time. */
    return path_field(f, u, what, "tokenFile", &cfg->token_file, err);
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
            rc = get_str(&set->files[i], kc_root(&set->files[i]), "top level", "current-context",
                         &ctx_name, err);
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
            return kc_err(
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
        rc = get_str(cf, ctx, what, "cluster", &cluster_name, err);
        if (rc == 0) {
            rc = get_str(cf, ctx, what, "user", &user_name, err);
        }
        if (rc == 0) {
            rc = get_str(cf, ctx, what, "namespace", &ns, err);
        }
        if (rc < 0) {
            return rc;
        }
        if (cluster_name == NULL) {
            return kc_err(err, KRC_EINVAL, cf, ctx, "%s has no cluster", what);
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
            return kc_err(err, KRC_ENOTFOUND, cf, krc_yaml_doc_map_get(&cf->doc, ctx, "cluster"),
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
            return kc_err(err, KRC_ENOTFOUND, cf, krc_yaml_doc_map_get(&cf->doc, ctx, "user"),
                          "%s refers to user \"%s\", which is not defined in users", what,
                          user_name);
        }
        if (rc == 0) {
            rc = load_user(&set->files[ui], body, user_name, cfg, err);
        }
    }
    return rc;
}

/* `list` is one path (single) or a ':'-separated $KUBECONFIG value. */
static int load_kubeconfig(const char *list, int single, const char *context,
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

/* ---------------------------------------------------------------------- */
/* In-cluster                                                             */

static int load_in_cluster(const char *host, const char *port, const char *sa_dir,
                           struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    static const char src[] = "in-cluster service account";
    struct krc_buf b;
    char ebuf[128];
    char *endp;
    char *ca = NULL;
    char *ns_path = NULL;
    char *data = NULL;
    size_t len = 0;
    long portnum;
    int e;
    int rc;

    errno = 0;
    portnum = strtol(port, &endp, 10);
    if (errno != 0 || *endp != '\0' || endp == port || portnum < 1 || portnum > 65535) {
        return krc_error_set(err, KRC_EINVAL, "%s: KUBERNETES_SERVICE_PORT \"%s\" is not a port",
                             src, port);
    }
    if (strchr(host, '/') != NULL || strchr(host, '@') != NULL) {
        return krc_error_set(err, KRC_EINVAL,
                             "%s: KUBERNETES_SERVICE_HOST \"%s\" is not a host name", src, host);
    }
    krc_buf_init(&b, strlen(host) + 32);
    /* An IPv6 literal needs brackets in a URL (net.JoinHostPort in client-go). */
    if (strchr(host, ':') != NULL && host[0] != '[') {
        rc = krc_buf_printf(&b, "https://[%s]:%ld", host, portnum);
    } else {
        rc = krc_buf_printf(&b, "https://%s:%ld", host, portnum);
    }
    if (rc == 0) {
        cfg->server = krc_buf_take(&b);
    }
    krc_buf_cleanup(&b);
    cfg->source = krc_strdup(src);
    cfg->token_file = join_path(sa_dir, "token");
    ca = join_path(sa_dir, "ca.crt");
    ns_path = join_path(sa_dir, "namespace");
    if (cfg->server == NULL || cfg->source == NULL || cfg->token_file == NULL || ca == NULL ||
        ns_path == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "%s: out of memory", src);
        goto out;
    }
    cfg->in_cluster = 1;
    if (access(cfg->token_file, R_OK) != 0) {
        e = errno;
        rc = krc_error_set(err, KRC_EIO,
                           "%s: token file %s: %s (is a service-account token mounted? check "
                           "automountServiceAccountToken)",
                           src, cfg->token_file, krc_errno_str(e, ebuf, sizeof(ebuf)));
        goto out;
    }
    if (access(ca, R_OK) != 0) {
        e = errno;
        rc = krc_error_set(err, KRC_EIO,
                           "%s: CA certificate %s: %s; refusing to talk to the API server "
                           "without verifying it",
                           src, ca, krc_errno_str(e, ebuf, sizeof(ebuf)));
        goto out;
    }
    cfg->ca_file = ca;
    ca = NULL;

    rc = read_whole_file(ns_path, NAMESPACE_MAX_BYTES, &data, &len, &e);
    if (rc == KRC_EIO && e == ENOENT) {
        rc = 0; /* namespace stays unknown */
    } else if (rc == KRC_EIO) {
        rc = krc_error_set(err, KRC_EIO, "%s: namespace file %s: %s", src, ns_path,
                           krc_errno_str(e, ebuf, sizeof(ebuf)));
    } else if (rc == KRC_ETOOBIG) {
        rc = krc_error_set(err, KRC_ETOOBIG, "%s: namespace file %s is larger than %d bytes", src,
                           ns_path, NAMESPACE_MAX_BYTES);
    } else if (rc < 0) {
        rc = krc_error_set(err, rc, "%s: out of memory", src);
    } else {
        size_t nslen;
        char *ns = trim(data, len, &nslen);
        if (nslen > 0) {
            cfg->namespace = krc_strdup(ns);
            if (cfg->namespace == NULL) {
                rc = krc_error_set(err, KRC_ENOMEM, "%s: out of memory", src);
            }
        }
    }
out:
    krc_free(data);
    krc_free(ns_path);
    krc_free(ca);
    return rc;
}

/* ---------------------------------------------------------------------- */

int krc_kube_auth_load(const struct krc_kube_auth_options *opts, struct krc_kube_auth_config *ret,
                       struct krc_error *err)
{
    struct krc_kube_auth_config cfg;
    const char *context = opts != NULL ? opts->context : NULL;
    const char *sa_dir = opts != NULL && opts->sa_dir != NULL ? opts->sa_dir : KRC_SA_DIR;
    const char *env = getenv("KUBECONFIG");
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *home = getenv("HOME");
    int rc;

    memset(&cfg, 0, sizeof(cfg));
    if (opts != NULL && opts->kubeconfig != NULL && opts->kubeconfig[0] != '\0') {
        rc = load_kubeconfig(opts->kubeconfig, 1, context, &cfg, err);
    } else if (env != NULL && env[0] != '\0') {
        rc = load_kubeconfig(env, 0, context, &cfg, err);
    } else if (host != NULL && host[0] != '\0' && port != NULL && port[0] != '\0') {
        rc = load_in_cluster(host, port, sa_dir, &cfg, err);
    } else {
        char *path = NULL;
        if (home != NULL && home[0] != '\0') {
            path = join_path(home, ".kube/config");
            if (path == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
            }
        }
        if (path != NULL && (access(path, F_OK) == 0 || errno != ENOENT)) {
            rc = load_kubeconfig(path, 1, context, &cfg, err);
        } else {
            rc = krc_error_set(err, KRC_ENOTFOUND,
                               "no Kubernetes API configuration found: pass --kubeconfig FILE, "
                               "set $KUBECONFIG, or run in a pod with a service account "
                               "(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
                               "set; %s%s)",
                               path != NULL ? path : "$HOME is not set",
                               path != NULL ? " does not exist" : "");
        }
        krc_free(path);
    }
    if (rc < 0) {
        krc_kube_auth_config_cleanup(&cfg);
        return rc;
    }
    *ret = cfg;
    return 0;
}

void krc_kube_auth_config_cleanup(struct krc_kube_auth_config *cfg)
{
    if (cfg == NULL) {
        return;
    }
    krc_free(cfg->server);
    krc_free(cfg->ca_file);
    krc_free(cfg->ca_pem);
    krc_free(cfg->client_cert_file);
    krc_free(cfg->client_cert_pem);
    krc_free(cfg->client_key_file);
    krc_free(cfg->client_key_pem);
    krc_free(cfg->token);
    krc_free(cfg->token_file);
    krc_free(cfg->tls_server_name);
    krc_free(cfg->namespace);
    krc_free(cfg->source);
    krc_exec_plugin_unref(cfg->exec);
    memset(cfg, 0, sizeof(*cfg));
}
