/* Kubernetes API location and credentials: in-cluster service account or
 * kubeconfig (kube_auth_kubeconfig.c, an exec user kube_auth_exec.c), and a
 * token source that re-reads rotating token files the way client-go does. */
#include "krc/kube/kube_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/kube/kube_exec.h"
#include "krc/util/buf.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#include "kube_auth_private.h"

#define TOKEN_MAX_BYTES (64 * 1024)
#define NAMESPACE_MAX_BYTES 1024

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Read a whole file (at most max bytes) into a NUL-terminated allocation.
 * KRC_EIO with *ret_errno set, KRC_ETOOBIG, or KRC_ENOMEM. */
int krc_auth_read_whole_file(const char *path, size_t max, char **ret_data, size_t *ret_len,
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
long krc_auth_bad_token_byte(const char *t, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c <= 0x20 || c >= 0x7f) {
            return (long)i;
        }
    }
    return -1;
}

char *krc_auth_join_path(const char *dir, const char *name)
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

char *krc_auth_dir_of(const char *path)
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
    int failing; /* the last read failed (warned once) */
};

int krc_auth_read_token_file(const char *path, char **ret_token, char *why, size_t whysz)
{
    char *data = NULL;
    char *t;
    size_t len = 0;
    size_t tlen;
    int e;
    long bad;
    int rc;

    *ret_token = NULL;
    rc = krc_auth_read_whole_file(path, TOKEN_MAX_BYTES, &data, &len, &e);
    if (rc == KRC_EIO) {
        /* a directory opens; its read says EISDIR */
        krc_errno_str(e, why, whysz);
        return KRC_EIO;
    }
    if (rc == KRC_ETOOBIG) {
        snprintf(why, whysz, "larger than %d bytes", TOKEN_MAX_BYTES);
        return KRC_ETOOBIG;
    }
    if (rc < 0) {
        snprintf(why, whysz, "out of memory");
        return rc;
    }
    t = trim(data, len, &tlen);
    if (tlen == 0) {
        krc_free(data);
        snprintf(why, whysz, "the file is empty");
        return KRC_EIO;
    }
    bad = krc_auth_bad_token_byte(t, tlen);
    if (bad >= 0) {
        krc_free(data);
        snprintf(why, whysz, "the token contains whitespace or a control character at offset %ld",
                 bad);
        return KRC_EINVAL;
    }
    if (t != data) {
        memmove(data, t, tlen + 1);
    }
    *ret_token = data;
    return 0;
}

/* Read and validate a token file; *ret_token is a krc allocation. */
static int read_token_file(const char *path, char **ret_token, struct krc_error *err)
{
    char why[160];
    int rc = krc_auth_read_token_file(path, ret_token, why, sizeof(why));

    return rc < 0 ? krc_error_set(err, rc, "token file %s: %s", path, why) : 0;
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
                if (ts->failing) {
                    ts->failing = 0;
                    krc_log(KRC_LOG_INFO, "token file %s read again", ts->file);
                }
            } else if (!ts->failing) {
                /* On failure the last good token stays in use (as in
                 * client-go) and the next call tries again: a projected
                 * token being replaced, or a mount gone. Said once per
                 * failing spell; start-up made sure it was readable. */
                ts->failing = 1;
                krc_log(KRC_LOG_WARN, "%s; %s", read_err.msg,
                        ts->cached != NULL
                            ? "the token read before stays in use, and the file is read again at "
                              "the next request"
                            : "requests fail until it can be read");
            }
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
    cfg->token_file = krc_auth_join_path(sa_dir, "token");
    ca = krc_auth_join_path(sa_dir, "ca.crt");
    ns_path = krc_auth_join_path(sa_dir, "namespace");
    if (cfg->server == NULL || cfg->source == NULL || cfg->token_file == NULL || ca == NULL ||
        ns_path == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "%s: out of memory", src);
        goto out;
    }
    cfg->in_cluster = 1;
    {
        char why[160];
        char *tok = NULL;
        rc = krc_auth_read_token_file(cfg->token_file, &tok, why, sizeof(why));
        krc_free(tok);
        if (rc < 0) {
            rc = krc_error_set(err, rc,
                               "%s: token file %s: %s (is a service-account token mounted? check "
                               "automountServiceAccountToken)",
                               src, cfg->token_file, why);
            goto out;
        }
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

    rc = krc_auth_read_whole_file(ns_path, NAMESPACE_MAX_BYTES, &data, &len, &e);
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
        rc = krc_kubeconfig_load(opts->kubeconfig, 1, context, &cfg, err);
    } else if (env != NULL && env[0] != '\0') {
        rc = krc_kubeconfig_load(env, 0, context, &cfg, err);
    } else if (host != NULL && host[0] != '\0' && port != NULL && port[0] != '\0') {
        rc = load_in_cluster(host, port, sa_dir, &cfg, err);
    } else {
        char *path = NULL;
        if (home != NULL && home[0] != '\0') {
            path = krc_auth_join_path(home, ".kube/config");
            if (path == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "kubeconfig: out of memory");
            }
        }
        if (path != NULL && (access(path, F_OK) == 0 || errno != ENOENT)) {
            rc = krc_kubeconfig_load(path, 1, context, &cfg, err);
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
