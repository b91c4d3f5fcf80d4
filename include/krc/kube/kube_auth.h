/* Where the Kubernetes API is and how to authenticate to it: in-cluster
 * service account or kubeconfig (libyaml), plus a token source that re-reads
 * rotating token files the way client-go does. */
#ifndef KRC_KUBE_AUTH_H
#define KRC_KUBE_AUTH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"

struct krc_exec_plugin;

/* Default service-account directory of in-cluster pods. */
#define KRC_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct krc_kube_auth_options {
    const char *kubeconfig; /* --kubeconfig; NULL: $KUBECONFIG, then ~/.kube/config */
    const char *context;    /* --context; NULL: current-context */
    const char *sa_dir;     /* NULL: KRC_SA_DIR (tests point it elsewhere) */
};

/* Everything needed to reach the API server. All strings and blobs owned;
 * free with krc_kube_auth_config_cleanup. */
struct krc_kube_auth_config {
    char *server;          /* "https://host:port" without trailing slash */
    char *ca_file;         /* path, or NULL */
    unsigned char *ca_pem; /* PEM bytes (decoded certificate-authority-data), or NULL */
    size_t ca_pem_len;
    char *client_cert_file;
    unsigned char *client_cert_pem;
    size_t client_cert_pem_len;
    char *client_key_file;
    unsigned char *client_key_pem;
    size_t client_key_pem_len;
    char *token;      /* static bearer token, or NULL */
    char *token_file; /* token file re-read periodically (wins over token), or NULL */
    int insecure_skip_tls_verify;
    char *tls_server_name; /* or NULL */
    char *namespace;       /* context namespace / in-cluster namespace file; NULL if unknown */
    int in_cluster;
    char *source; /* for messages: "in-cluster" or "kubeconfig FILE context NAME" */
    /* The user's exec credential plugin (one reference, dropped by cleanup),
     * or NULL. Its token or client certificate is used instead of the fields
     * above; it runs at the first request, see kube_exec.h. */
    struct krc_exec_plugin *exec;
};

/* Resolve the configuration: an explicit kubeconfig (option or $KUBECONFIG)
 * wins; otherwise in-cluster when KUBERNETES_SERVICE_HOST/PORT are set;
 * otherwise ~/.kube/config. Errors name the file and the field, e.g.
 * "kubeconfig /x: user \"gke\": exec.interactiveMode must be set with
 * client.authentication.k8s.io/v1 ..." (line, column). */
int krc_kube_auth_load(const struct krc_kube_auth_options *opts, struct krc_kube_auth_config *ret,
                       struct krc_error *err);
void krc_kube_auth_config_cleanup(struct krc_kube_auth_config *cfg);

/* Bearer token provider; thread-safe. Re-reads token_file when it is older
 * than `refresh_seconds` (60 in production) and right after invalidate(); if a
 * re-read fails the last good token stays in use. */
struct krc_token_source;

/* Either argument may be NULL; with both NULL, get() returns an empty token. */
struct krc_token_source *krc_token_source_new(const char *static_token, const char *token_file,
                                              int refresh_seconds);
void krc_token_source_free(struct krc_token_source *ts);
/* Copy the current token into out (NUL-terminated). KRC_ETOOBIG when it does
 * not fit, KRC_EIO when no token could ever be read (message names the file). */
int krc_token_source_get(struct krc_token_source *ts, char *out, size_t outsz,
                         struct krc_error *err);
/* After a 401: the next get() re-reads the file. */
void krc_token_source_invalidate(struct krc_token_source *ts);

#endif
