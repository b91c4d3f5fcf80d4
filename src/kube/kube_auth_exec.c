/* A kubeconfig user with `exec` (include/krc/kube/kube_auth.h): its apiVersion,
 * interactiveMode, command, args and env checked when the kubeconfig is
 * loaded, and the plugin made (krc_exec_plugin_new; kube_exec.c runs it at
 * the first request), with the cluster's information when the user asks for
 * provideClusterInfo. */
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "krc/kube/kube_exec.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/yaml_doc.h"

#include "kube_auth_private.h"

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
        rc = krc_auth_read_whole_file(cfg->ca_file, KUBECONFIG_MAX_BYTES, &file_data, &ca_len, &e);
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
    const char *api = NULL;
    const char *mode = NULL;
    int rc = krc_kubeconfig_get_str(f, x, what, "apiVersion", &api, err);

    if (rc == 0) {
        rc = krc_kubeconfig_get_str(f, x, what, "interactiveMode", &mode, err);
    }
    if (rc < 0) {
        return rc;
    }
    if (api == NULL || (strcmp(api, EXEC_API_V1) != 0 && strcmp(api, EXEC_API_V1BETA1) != 0)) {
        return krc_kubeconfig_err(err, api == NULL ? KRC_EINVAL : KRC_EUNSUPPORTED, f,
                                  api != NULL ? krc_yaml_doc_map_get(&f->doc, x, "apiVersion") : x,
                                  "%s: exec.apiVersion %s%s%s; krc supports " EXEC_API_V1
                                  " and " EXEC_API_V1BETA1,
                                  what, api != NULL ? "\"" : "is not set", api != NULL ? api : "",
                                  api != NULL ? "\" is not supported" : "");
    }
    *ret_api = api;
    if (mode == NULL && strcmp(api, EXEC_API_V1) == 0) {
        return krc_kubeconfig_err(err, KRC_EINVAL, f, x,
                                  "%s: exec.interactiveMode must be set with " EXEC_API_V1
                                  " (Never, IfAvailable or Always)",
                                  what);
    }
    if (mode == NULL || strcmp(mode, "Never") == 0 || strcmp(mode, "IfAvailable") == 0) {
        return 0; /* krc never gives the plugin a terminal: spec.interactive is false */
    }
    if (strcmp(mode, "Always") == 0) {
        return krc_kubeconfig_err(
            err, KRC_EUNSUPPORTED, f, krc_yaml_doc_map_get(&f->doc, x, "interactiveMode"),
            "%s: exec.interactiveMode is Always, but krc runs the plugin without a "
            "terminal (stdin is /dev/null); use a plugin mode that needs no input "
            "(Never or IfAvailable)",
            what);
    }
    return krc_kubeconfig_err(
        err, KRC_EINVAL, f, krc_yaml_doc_map_get(&f->doc, x, "interactiveMode"),
        "%s: exec.interactiveMode \"%s\" is not Never, IfAvailable or Always", what, mode);
}

/* exec.args (strings) and exec.env ([{name, value}]) into ep. */
static int exec_lists(struct kc_file *f, yaml_node_t *x, const char *what, struct exec_parts *ep,
                      struct krc_error *err)
{
    yaml_node_t *seq;
    int rc = krc_kubeconfig_get_node(f, x, what, "args", YAML_SEQUENCE_NODE, &seq, err);

    for (size_t i = 0; rc == 0 && seq != NULL && i < krc_yaml_doc_seq_len(seq); i++) {
        yaml_node_t *a = krc_yaml_doc_seq_item(&f->doc, seq, i);
        if (a == NULL || a->type != YAML_SCALAR_NODE || i >= EXEC_MAX_ITEMS) {
            return krc_kubeconfig_err(err, KRC_EPARSE, f, a,
                                      "%s: exec.args must be a list of at most %d strings", what,
                                      EXEC_MAX_ITEMS);
        }
        ep->args[ep->nargs++] = (const char *)a->data.scalar.value;
    }
    if (rc == 0) {
        rc = krc_kubeconfig_get_node(f, x, what, "env", YAML_SEQUENCE_NODE, &seq, err);
    }
    for (size_t i = 0; rc == 0 && seq != NULL && i < krc_yaml_doc_seq_len(seq); i++) {
        yaml_node_t *e = krc_yaml_doc_seq_item(&f->doc, seq, i);
        const char *n = NULL;
        const char *v = NULL;
        struct krc_buf b;

        if (e == NULL || e->type != YAML_MAPPING_NODE || i >= EXEC_MAX_ITEMS) {
            return krc_kubeconfig_err(
                err, KRC_EPARSE, f, e,
                "%s: exec.env must be a list of at most %d {name, value} mappings", what,
                EXEC_MAX_ITEMS);
        }
        rc = krc_kubeconfig_get_str(f, e, what, "name", &n, err);
        if (rc == 0) {
            rc = krc_kubeconfig_get_str(f, e, what, "value", &v, err);
        }
        if (rc == 0 && (n == NULL || strchr(n, '=') != NULL)) {
            return krc_kubeconfig_err(err, KRC_EINVAL, f, e,
                                      "%s: exec.env[%zu] needs a name without '='", what, i);
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
int krc_kubeconfig_load_exec(struct kc_file *f, yaml_node_t *x, const char *name,
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
        rc = krc_kubeconfig_get_str(f, x, what, "command", &cmd, err);
    }
    if (rc == 0 && cmd == NULL) {
        rc = krc_kubeconfig_err(err, KRC_EINVAL, f, x, "%s: exec has no command", what);
    }
    if (rc == 0) {
        rc = krc_kubeconfig_get_str(f, x, what, "installHint", &spec.install_hint, err);
    }
    if (rc == 0) {
        rc = krc_kubeconfig_get_bool(f, x, what, "provideClusterInfo", &provide, err);
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
        cmd_path = krc_kubeconfig_resolve_path(f, cmd);
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
