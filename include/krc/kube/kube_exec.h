/* Kubeconfig exec credential plugins (client.authentication.k8s.io v1 and
 * v1beta1 ExecCredential), the way client-go runs them: the command with its
 * args and env, no shell, stdin /dev/null, KUBERNETES_EXEC_INFO holding the
 * request ({"spec":{"interactive":false}} plus spec.cluster when the
 * kubeconfig sets provideClusterInfo); stdout is the ExecCredential, stderr
 * goes to krc's log, redacted. Unlike client-go, the plugin gets only an
 * allow-list of krc's environment (krc_exec_env_allowed) plus the
 * kubeconfig's env, never krc's own secrets; a plugin that exits while a
 * process it started holds its stdout is not waited for. The credential (a bearer token, or a
 * client certificate and key) is cached until its expirationTimestamp and after an invalidate() (a
 * 401) the next get() runs the plugin again.
 *
 * A plugin object is reference counted and thread-safe: the kubeconfig
 * loader creates it and every Kubernetes client made from that configuration
 * shares it (and its cache). */
#ifndef KRC_KUBE_EXEC_H
#define KRC_KUBE_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"

/* Defaults: the plugin is killed after this long, and stdout beyond this
 * many bytes is an error. */
#define KRC_EXEC_TIMEOUT_MS 60000L
#define KRC_EXEC_MAX_OUTPUT (1024 * 1024)

/* Everything is copied by krc_exec_plugin_new. */
struct krc_exec_spec {
    const char *origin;      /* for messages: "kubeconfig FILE: user \"NAME\"" */
    const char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 */
    const char *command;     /* a path (has a '/') or a name looked up in $PATH */
    const char *const *args; /* nargs arguments after the command */
    size_t nargs;
    const char *const *env; /* nenv "NAME=value" entries added to krc's environment */
    size_t nenv;
    const char *install_hint; /* shown when the command is missing, or NULL */
    const char *cluster_json; /* spec.cluster as a JSON object, or NULL */
};

struct krc_exec_creds {
    char *token; /* bearer token or NULL */
    unsigned char *cert_pem;
    size_t cert_pem_len;
    unsigned char *key_pem;
    size_t key_pem_len;
    int64_t expires;     /* unix seconds, 0: no expirationTimestamp */
    unsigned generation; /* counts plugin runs: a new value means new credentials */
};

struct krc_exec_plugin;

struct krc_exec_plugin *krc_exec_plugin_new(const struct krc_exec_spec *spec,
                                            struct krc_error *err);
/* Returns p. */
struct krc_exec_plugin *krc_exec_plugin_ref(struct krc_exec_plugin *p);
/* Frees p when the last reference goes; NULL is fine. */
void krc_exec_plugin_unref(struct krc_exec_plugin *p);
/* Test seam: a shorter timeout or a smaller output cap. */
void krc_exec_plugin_set_limits(struct krc_exec_plugin *p, long timeout_ms, size_t max_output);

/* The current credentials (copies; free with krc_exec_creds_cleanup): the
 * cached ones while they have not expired (krc_clock_now()) and no
 * invalidate() came since, else the plugin's fresh answer. Errors name the
 * kubeconfig user and what went wrong (command missing, with the install
 * hint; exit status and the first line of stderr; killed after the
 * timeout; output that is not an ExecCredential of the configured
 * apiVersion). After a failure the next get() runs the plugin again. */
int krc_exec_plugin_get(struct krc_exec_plugin *p, struct krc_exec_creds *ret,
                        struct krc_error *err);
void krc_exec_creds_cleanup(struct krc_exec_creds *c);
/* After a 401: the next get() runs the plugin. */
void krc_exec_plugin_invalidate(struct krc_exec_plugin *p);
/* 1 when the variable `name` (len bytes) of krc's environment is passed
 * to plugins: PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TZ, TMPDIR,
 * the proxy variables, SSL_CERT_FILE/DIR, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE,
 * the XDG folders, KUBECACHEDIR,
 * and the cloud credential chains AWS_*, GOOGLE_*, CLOUDSDK_*,
 * GCE_METADATA_*, AZURE_*, AAD_*. Nothing else of krc's environment (its
 * secrets) reaches a plugin; the kubeconfig's env adds to it. */
int krc_exec_env_allowed(const char *name, size_t len);
/* For messages: "the exec credential plugin CMD of kubeconfig F: user \"U\"". */
const char *krc_exec_plugin_describe(const struct krc_exec_plugin *p);
/* Number of attempts to start the plugin (tests). */
unsigned krc_exec_plugin_runs(struct krc_exec_plugin *p);

#endif
