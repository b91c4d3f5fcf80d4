/* kube_auth: kubeconfig parsing and merging, in-cluster configuration,
 * precedence, and the rotating token source. Every test writes its own
 * fixtures into a fresh temporary directory and points HOME there. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "krc/util/error.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_exec.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define CA_PEM                                                                                     \
    "-----BEGIN CERTIFICATE-----\nMIIBfakeCAforkrcunittests==\n-----END CERTIFICATE-----\n"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIBclientcertificate\n-----END CERTIFICATE-----\n"
#define KEY_PEM "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIfakekey\n-----END EC PRIVATE KEY-----\n"

struct env {
    char dir[256];
};

/* ---- helpers ---------------------------------------------------------- */

static void rm_rf(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    char child[1024];

    if (lstat(path, &st) != 0) {
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        d = opendir(path);
        if (d != NULL) {
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                    continue;
                }
                snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
                rm_rf(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static const char *path_in(const struct env *env, const char *name)
{
    static char buf[4][1024];
    static int next;
    char *p = buf[next++ % 4];

    snprintf(p, sizeof(buf[0]), "%s/%s", env->dir, name);
    return p;
}

static void write_file(const struct env *env, const char *name, const char *content)
{
    const char *p = path_in(env, name);
    char tmp[1100];
    FILE *f;

    /* Replace atomically, as the kubelet does when it rotates a token. */
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    f = fopen(tmp, "w");
    assert_non_null(f);
    assert_int_equal(fputs(content, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, p), 0);
}

static void make_dir(const struct env *env, const char *name)
{
    assert_int_equal(mkdir(path_in(env, name), 0700), 0);
}

static char *b64(const char *s)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = strlen(s);
    char *out = malloc(len / 3 * 4 + 5);
    size_t o = 0;
    size_t i;

    assert_non_null(out);
    for (i = 0; i + 2 < len; i += 3) {
        unsigned v =
            (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8 | (unsigned char)s[i + 2];
        out[o++] = tbl[v >> 18 & 63];
        out[o++] = tbl[v >> 12 & 63];
        out[o++] = tbl[v >> 6 & 63];
        out[o++] = tbl[v & 63];
    }
    if (len - i == 1) {
        unsigned v = (unsigned char)s[i] << 16;
        out[o++] = tbl[v >> 18 & 63];
        out[o++] = tbl[v >> 12 & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (len - i == 2) {
        unsigned v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8;
        out[o++] = tbl[v >> 18 & 63];
        out[o++] = tbl[v >> 12 & 63];
        out[o++] = tbl[v >> 6 & 63];
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

/* Insert "\n" + indent every `every` characters (for YAML block scalars). */
static char *wrap(const char *s, size_t every, const char *indent)
{
    size_t len = strlen(s);
    char *out = malloc(len + (len / every + 1) * (strlen(indent) + 1) + 1);
    size_t o = 0;

    assert_non_null(out);
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && i % every == 0) {
            out[o++] = '\n';
            memcpy(out + o, indent, strlen(indent));
            o += strlen(indent);
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return out;
}

static int load(const char *kubeconfig, const char *context, const char *sa_dir,
                struct krc_kube_auth_config *cfg, struct krc_error *err)
{
    struct krc_kube_auth_options opts = {kubeconfig, context, sa_dir};

    memset(cfg, 0, sizeof(*cfg));
    krc_error_clear(err);
    return krc_kube_auth_load(&opts, cfg, err);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (strstr(hay, needle) == NULL) {
        fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
    }
}

static int setup(void **state)
{
    struct env *env = calloc(1, sizeof(*env));
    const char *tmp = getenv("TMPDIR");

    assert_non_null(env);
    snprintf(env->dir, sizeof(env->dir), "%s/krc-auth-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(env->dir));
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    setenv("HOME", env->dir, 1);
    *state = env;
    return 0;
}

static int teardown(void **state)
{
    struct env *env = *state;

    krc_mem_fail_after(-1);
    rm_rf(env->dir);
    free(env);
    krc_log_clear_secrets();
    return 0;
}

/* ---- kubeconfig ------------------------------------------------------- */

static void test_token_and_inline_ca(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    char *ca = b64(CA_PEM);
    char *wrapped = wrap(ca, 20, "      ");
    char yaml[4096];
    char expect_source[600];

    /* Base64 split over lines inside a literal block: whitespace is tolerated. */
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\n"
             "kind: Config\n"
             "current-context: test\n"
             "clusters:\n"
             "- name: fake\n"
             "  cluster:\n"
             "    server: https://127.0.0.1:6443/\n"
             "    tls-server-name: api.internal\n"
             "    certificate-authority-data: |\n"
             "      %s\n"
             "contexts:\n"
             "- name: test\n"
             "  context: {cluster: fake, user: collector, namespace: monitoring}\n"
             "users:\n"
             "- name: collector\n"
             "  user:\n"
             "    token: abc.def-123\n",
             wrapped);
    write_file(env, "config", yaml);
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://127.0.0.1:6443");
    assert_non_null(cfg.ca_pem);
    assert_int_equal(cfg.ca_pem_len, strlen(CA_PEM));
    assert_memory_equal(cfg.ca_pem, CA_PEM, strlen(CA_PEM));
    assert_null(cfg.ca_file);
    assert_string_equal(cfg.token, "abc.def-123");
    assert_null(cfg.token_file);
    assert_null(cfg.client_cert_pem);
    assert_null(cfg.client_cert_file);
    assert_int_equal(cfg.insecure_skip_tls_verify, 0);
    assert_string_equal(cfg.tls_server_name, "api.internal");
    assert_string_equal(cfg.namespace, "monitoring");
    assert_int_equal(cfg.in_cluster, 0);
    snprintf(expect_source, sizeof(expect_source), "kubeconfig %s, context test",
             path_in(env, "config"));
    assert_string_equal(cfg.source, expect_source);
    krc_kube_auth_config_cleanup(&cfg);
    assert_null(cfg.server);
    free(wrapped);
    free(ca);
}

static void test_token_file_and_relative_paths(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    char expect[1100];

    make_dir(env, "kube");
    make_dir(env, "kube/certs");
    write_file(env, "kube/certs/ca.crt", CA_PEM);
    write_file(env, "kube/certs/client.crt", CERT_PEM);
    write_file(env, "kube/client.key", KEY_PEM);
    write_file(env, "kube/token", "tok-from-file\n");
    write_file(env, "kube/config",
               "current-context: c\n"
               "clusters:\n"
               "- name: k\n"
               "  cluster:\n"
               "    server: https://kube.example:443\n"
               "    certificate-authority: certs/ca.crt\n"
               "    proxy-url: http://proxy:3128\n"
               "contexts:\n"
               "- name: c\n"
               "  context:\n"
               "    cluster: k\n"
               "    user: u\n"
               "users:\n"
               "- name: u\n"
               "  user:\n"
               "    token: static-token\n"
               "    tokenFile: token\n"
               "    client-certificate: certs/client.crt\n"
               "    client-key: ./client.key\n");
    assert_int_equal(load(path_in(env, "kube/config"), NULL, NULL, &cfg, &err), 0);
    snprintf(expect, sizeof(expect), "%s/kube/certs/ca.crt", env->dir);
    assert_string_equal(cfg.ca_file, expect);
    assert_null(cfg.ca_pem);
    snprintf(expect, sizeof(expect), "%s/kube/certs/client.crt", env->dir);
    assert_string_equal(cfg.client_cert_file, expect);
    snprintf(expect, sizeof(expect), "%s/kube/./client.key", env->dir);
    assert_string_equal(cfg.client_key_file, expect);
    snprintf(expect, sizeof(expect), "%s/kube/token", env->dir);
    assert_string_equal(cfg.token_file, expect);
    assert_string_equal(cfg.token, "static-token");
    assert_null(cfg.namespace);

    /* tokenFile wins over token once a token source is built from the config. */
    {
        struct krc_token_source *ts = krc_token_source_new(cfg.token, cfg.token_file, 60);
        char tok[64];
        assert_non_null(ts);
        assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
        assert_string_equal(tok, "tok-from-file");
        krc_token_source_free(ts);
    }
    krc_kube_auth_config_cleanup(&cfg);

    /* A relative path that does not exist is reported with the resolved path. */
    unlink(path_in(env, "kube/client.key"));
    assert_int_equal(load(path_in(env, "kube/config"), NULL, NULL, &cfg, &err), KRC_EIO);
    assert_contains(err.msg, path_in(env, "kube/config"));
    assert_contains(err.msg, "user \"u\": client-key");
    assert_contains(err.msg, "kube/./client.key");
    assert_contains(err.msg, "No such file");
}

static void test_inline_client_cert_and_insecure(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    char *cert = b64(CERT_PEM);
    char *key = b64(KEY_PEM);
    char yaml[4096];

    write_file(env, "unused.crt", CERT_PEM);
    snprintf(yaml, sizeof(yaml),
             "current-context: c\n"
             "clusters:\n"
             "- name: k\n"
             "  cluster:\n"
             "    server: kube.example:6443\n"
             "    insecure-skip-tls-verify: true\n"
             "contexts:\n"
             "- name: c\n"
             "  context: {cluster: k, user: u}\n"
             "users:\n"
             "- name: u\n"
             "  user:\n"
             "    client-certificate-data: %s\n"
             "    client-certificate: /nonexistent/ignored/because/data/wins\n"
             "    client-key-data: \"%s\"\n",
             cert, key);
    write_file(env, "config", yaml);
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://kube.example:6443");
    assert_int_equal(cfg.insecure_skip_tls_verify, 1);
    assert_int_equal(cfg.client_cert_pem_len, strlen(CERT_PEM));
    assert_memory_equal(cfg.client_cert_pem, CERT_PEM, strlen(CERT_PEM));
    assert_null(cfg.client_cert_file);
    assert_int_equal(cfg.client_key_pem_len, strlen(KEY_PEM));
    assert_memory_equal(cfg.client_key_pem, KEY_PEM, strlen(KEY_PEM));
    assert_null(cfg.token);
    assert_null(cfg.token_file);
    krc_kube_auth_config_cleanup(&cfg);

    /* A certificate without a key is refused. */
    snprintf(yaml, sizeof(yaml),
             "current-context: c\n"
             "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
             "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
             "users: [{name: u, user: {client-certificate-data: %s}}]\n",
             cert);
    write_file(env, "config", yaml);
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "user \"u\" needs both a client certificate and a client key");

    /* A bool that is not a bool. */
    write_file(env, "config",
               "current-context: c\n"
               "clusters: [{name: k, cluster: {server: 'https://h', "
               "insecure-skip-tls-verify: maybe}}]\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, "cluster \"k\": insecure-skip-tls-verify must be true or false");
    assert_contains(err.msg, "line 2");
    free(cert);
    free(key);
}

static const char two_contexts[] = "current-context: one\n"
                                   "clusters:\n"
                                   "- name: a\n"
                                   "  cluster: {server: 'https://a:1'}\n"
                                   "- name: b\n"
                                   "  cluster: {server: 'https://b:2'}\n"
                                   "contexts:\n"
                                   "- name: one\n"
                                   "  context: {cluster: a, namespace: ns1}\n"
                                   "- name: two\n"
                                   "  context: {cluster: b, namespace: ns2}\n";

static void test_context_override(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_file(env, "config", two_contexts);
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://a:1");
    assert_string_equal(cfg.namespace, "ns1");
    assert_null(cfg.token);
    krc_kube_auth_config_cleanup(&cfg);

    assert_int_equal(load(path_in(env, "config"), "two", NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://b:2");
    assert_string_equal(cfg.namespace, "ns2");
    assert_contains(cfg.source, "context two");
    krc_kube_auth_config_cleanup(&cfg);

    assert_int_equal(load(path_in(env, "config"), "three", NULL, &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, path_in(env, "config"));
    assert_contains(err.msg, "context \"three\" (from --context) is not defined");
}

static void test_missing_current_context(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_file(env, "config",
               "clusters: []\n"
               "contexts: []\n"
               "current-context: gone\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, path_in(env, "config"));
    assert_contains(err.msg, "current-context \"gone\" is not defined in contexts");
    assert_contains(err.msg, "line 3");

    write_file(env, "config", "clusters: []\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "current-context is not set");
    assert_contains(err.msg, "--context");

    /* An empty file is an empty config, not a crash. */
    write_file(env, "config", "");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "current-context is not set");
}

static void test_dangling_references(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_file(env, "config",
               "current-context: c\n"
               "contexts:\n"
               "- name: c\n"
               "  context: {cluster: nowhere, user: u}\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, "context \"c\" refers to cluster \"nowhere\", which is not defined");
    assert_contains(err.msg, path_in(env, "config"));

    write_file(env, "config",
               "current-context: c\n"
               "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
               "contexts:\n"
               "- name: c\n"
               "  context: {cluster: k, user: nobody}\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, "context \"c\" refers to user \"nobody\", which is not defined");

    write_file(env, "config",
               "current-context: c\n"
               "clusters:\n"
               "- name: k\n"
               "  cluster:\n"
               "    certificate-authority-data: Zm9v\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "cluster \"k\" has no server");
    assert_contains(err.msg, "line 5");

    write_file(env, "config",
               "current-context: c\n"
               "contexts: [{name: c, context: {user: u}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "context \"c\" has no cluster");

    write_file(env, "config",
               "current-context: c\n"
               "clusters: {k: {server: 'https://h'}}\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, "clusters must be a list");
    assert_contains(err.msg, "line 2");

    write_file(env, "config",
               "current-context: c\n"
               "clusters: [{name: k, cluster: {server: 'ftp://h'}}]\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "server \"ftp://h\" must be an http(s) URL");
}

/* ---- exec credential plugins ---------------------------------------- */

/* A kubeconfig whose user runs `command` (written into the env's folder
 * when it is a script) with the extra exec keys `more`. */
static void write_exec_config(const struct env *env, const char *command, const char *more)
{
    char yaml[4096];

    snprintf(yaml, sizeof(yaml),
             "current-context: eks\n"
             "clusters: [{name: k, cluster: {server: 'https://h:6443', "
             "certificate-authority-data: '%s'}}]\n"
             "contexts: [{name: eks, context: {cluster: k, user: eks-admin}}]\n"
             "users:\n"
             "- name: eks-admin\n"
             "  user:\n"
             "    exec:\n"
             "      command: %s\n"
             "%s",
             "Q0EtUEVN", command, more);
    write_file(env, "config", yaml);
}

/* The fake plugin: counts its runs in DIR/runs, saves its environment's
 * KUBERNETES_EXEC_INFO and argument list, says something on stderr and
 * prints the credential in DIR/answer with RUN replaced by the run count. */
static void write_plugin(const struct env *env, const char *answer)
{
    char script[2048];

    snprintf(script, sizeof(script),
             "#!/bin/sh\n"
             "d='%s'\n"
             "n=$(( $(cat \"$d/runs\" 2>/dev/null || echo 0) + 1 ))\n"
             "echo $n > \"$d/runs\"\n"
             "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info\"\n"
             "echo \"$* AWS_PROFILE=$AWS_PROFILE\" > \"$d/argv\"\n"
             "echo \"plugin says hello on stderr\" >&2\n"
             "sed \"s/RUN/$n/\" \"$d/answer\"\n",
             env->dir);
    write_file(env, "plugin", script);
    assert_int_equal(chmod(path_in(env, "plugin"), 0755), 0);
    write_file(env, "answer", answer);
}

static const char exec_v1[] = "      apiVersion: client.authentication.k8s.io/v1\n"
                              "      interactiveMode: Never\n"
                              "      args: [eks, get-token]\n"
                              "      env: [{name: AWS_PROFILE, value: prod}]\n"
                              "      provideClusterInfo: true\n";

static char *read_all(const struct env *env, const char *name)
{
    static char buf[8192];
    FILE *f = fopen(path_in(env, name), "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_exec_config_errors(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_exec_config(env, "aws", "      apiVersion: client.authentication.k8s.io/v1\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "user \"eks-admin\": exec.interactiveMode must be set with "
                             "client.authentication.k8s.io/v1 (Never, IfAvailable or Always)");
    assert_contains(err.msg, path_in(env, "config"));

    write_exec_config(env, "aws",
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      interactiveMode: Always\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EUNSUPPORTED);
    assert_contains(err.msg, "exec.interactiveMode is Always, but krc runs the plugin without a "
                             "terminal");

    write_exec_config(env, "aws", "      apiVersion: client.authentication.k8s.io/v1alpha1\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EUNSUPPORTED);
    assert_contains(err.msg, "exec.apiVersion \"client.authentication.k8s.io/v1alpha1\" is not "
                             "supported");

    write_exec_config(env, "''", "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "user \"eks-admin\": exec has no command");

    /* v1beta1 without interactiveMode is IfAvailable: accepted, run without a terminal. */
    write_exec_config(env, "aws", "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_non_null(cfg.exec);
    assert_null(cfg.token);
    krc_kube_auth_config_cleanup(&cfg);
}

static void test_exec_token_cached_until_expiry(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_exec_creds cr;
    struct krc_error err;
    int64_t expiry;

    /* A relative command path is resolved against the kubeconfig's folder. */
    write_exec_config(env, "./plugin", exec_v1);
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{\"token\":\"exec-token-RUN\","
                      "\"expirationTimestamp\":\"2030-01-01T00:00:00Z\"}}\n");
    assert_int_equal(krc_parse_rfc3339("2030-01-01T00:00:00Z", 20, &expiry), 0);
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_non_null(cfg.exec);
    assert_int_equal(krc_exec_plugin_runs(cfg.exec), 0); /* runs at the first request */

    krc_clock_set_fake_now(expiry - 100);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_string_equal(cr.token, "exec-token-1");
    assert_int_equal(cr.expires, expiry);
    krc_exec_creds_cleanup(&cr);
    /* What the plugin was given: args, env, and the request without a terminal. */
    assert_string_equal(read_all(env, "argv"), "eks get-token AWS_PROFILE=prod\n");
    assert_string_equal(read_all(env, "info"),
                        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                        "\"ExecCredential\",\"spec\":{\"interactive\":false,\"cluster\":"
                        "{\"server\":\"https://h:6443\",\"certificate-authority-data\":"
                        "\"Q0EtUEVN\"}}}");

    /* Cached while it is valid. */
    krc_clock_set_fake_now(expiry - 1);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_string_equal(cr.token, "exec-token-1");
    krc_exec_creds_cleanup(&cr);
    assert_int_equal(krc_exec_plugin_runs(cfg.exec), 1);

    /* Expired: run again. */
    krc_clock_set_fake_now(expiry);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_string_equal(cr.token, "exec-token-2");
    krc_exec_creds_cleanup(&cr);

    /* A 401 (invalidate) runs it again though the token has not expired. */
    krc_clock_set_fake_now(expiry - 100);
    krc_exec_plugin_invalidate(cfg.exec);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_string_equal(cr.token, "exec-token-3");
    krc_exec_creds_cleanup(&cr);
    assert_int_equal(krc_exec_plugin_runs(cfg.exec), 3);
    krc_clock_set_fake_now(0);
    krc_kube_auth_config_cleanup(&cfg);
}

static void test_exec_client_certificate(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_exec_creds cr;
    struct krc_error err;

    write_exec_config(env, path_in(env, "plugin"),
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{\"clientCertificateData\":"
                      "\"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n\","
                      "\"clientKeyData\":\"-----BEGIN EC PRIVATE KEY-----\\nMHc\\n"
                      "-----END EC PRIVATE KEY-----\\n\"}}\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_null(cr.token);
    assert_int_equal(cr.expires, 0);
    assert_string_equal((const char *)cr.cert_pem,
                        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    assert_int_equal(cr.cert_pem_len, strlen((const char *)cr.cert_pem));
    assert_string_equal((const char *)cr.key_pem,
                        "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n");
    krc_exec_creds_cleanup(&cr);
    /* No provideClusterInfo: no spec.cluster. */
    assert_string_equal(read_all(env, "info"),
                        "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
                        "\"ExecCredential\",\"spec\":{\"interactive\":false}}");
    krc_kube_auth_config_cleanup(&cfg);
}

/* Load the env's kubeconfig and expect the first get() to fail with code
 * and a message containing `want`. */
static void expect_exec_failure(const struct env *env, int code, const char *want)
{
    struct krc_kube_auth_config cfg;
    struct krc_exec_creds cr;
    struct krc_error err;

    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    krc_exec_plugin_set_limits(cfg.exec, 500, 4096);
    krc_error_clear(&err);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), code);
    assert_contains(err.msg, want);
    assert_contains(err.msg, "user \"eks-admin\"");
    assert_null(cr.token);
    krc_kube_auth_config_cleanup(&cfg);
}

static void test_exec_failures(void **state)
{
    struct env *env = *state;
    char want[1024];

    /* Missing command: the install hint is shown. */
    write_exec_config(env, "krc-no-such-plugin",
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      interactiveMode: IfAvailable\n"
                      "      installHint: Install it with apt-get install krc-plugin\n");
    expect_exec_failure(env, KRC_ENOTFOUND,
                        "exec credential plugin \"krc-no-such-plugin\" not found (not in $PATH); "
                        "Install it with apt-get install krc-plugin");

    /* Exit status and the first stderr line. */
    write_file(env, "fail.sh",
               "#!/bin/sh\necho\necho 'error: no SSO session' >&2\n"
               "echo 'second line' >&2\nexit 3\n");
    assert_int_equal(chmod(path_in(env, "fail.sh"), 0755), 0);
    write_exec_config(env, path_in(env, "fail.sh"),
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    snprintf(want, sizeof(want), "exec plugin %s failed with exit status 3: error: no SSO session",
             path_in(env, "fail.sh"));
    expect_exec_failure(env, KRC_EIO, want);

    /* Garbage on stdout (never echoed: it could be a secret). */
    write_file(env, "garbage.sh", "#!/bin/sh\necho 'sekrit-bare-token'\n");
    assert_int_equal(chmod(path_in(env, "garbage.sh"), 0755), 0);
    write_exec_config(env, path_in(env, "garbage.sh"),
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    expect_exec_failure(env, KRC_EPARSE,
                        "printed 18 bytes that are not an ExecCredential JSON "
                        "object");

    /* Wrong apiVersion and kind, no credential, half a key pair. */
    write_exec_config(env, path_in(env, "plugin"),
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{\"token\":\"t0123\"}}");
    expect_exec_failure(env, KRC_EPARSE,
                        "printed apiVersion \"client.authentication.k8s.io/v1\", but the "
                        "kubeconfig asks for \"client.authentication.k8s.io/v1beta1\"");
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
                      "\"Status\",\"status\":{\"token\":\"t0123\"}}");
    expect_exec_failure(env, KRC_EPARSE, "printed kind \"Status\", expected \"ExecCredential\"");
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{}}");
    expect_exec_failure(env, KRC_EPARSE, "neither a token nor clientCertificateData");
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"x\"}}");
    expect_exec_failure(env, KRC_EPARSE, "printed only clientCertificateData");

    /* Too much output, and a plugin that hangs. */
    write_file(env, "big.sh", "#!/bin/sh\nexec yes 'xxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n");
    assert_int_equal(chmod(path_in(env, "big.sh"), 0755), 0);
    write_exec_config(env, path_in(env, "big.sh"),
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    expect_exec_failure(env, KRC_ETOOBIG, "printed more than 4096 bytes and was killed");
    write_file(env, "hang.sh", "#!/bin/sh\necho 'waiting for a browser' >&2\nexec sleep 30\n");
    assert_int_equal(chmod(path_in(env, "hang.sh"), 0755), 0);
    write_exec_config(env, path_in(env, "hang.sh"),
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    expect_exec_failure(env, KRC_ETIMEOUT,
                        "did not finish within 500 ms and was killed: waiting for a browser");
}

/* A plugin script in the env's folder (chmod 755) and a kubeconfig that runs it. */
static void write_exec_script(const struct env *env, const char *name, const char *script,
                              const char *more)
{
    write_file(env, name, script);
    assert_int_equal(chmod(path_in(env, name), 0755), 0);
    write_exec_config(env, path_in(env, name), more);
}

/* Does the dump of an environment (env's output) hold the line `want`? */
static int has_line(const char *dump, const char *want)
{
    size_t n = strlen(want);

    for (const char *p = dump; p != NULL && *p != '\0';) {
        if (strncmp(p, want, n) == 0 && (p[n] == '\n' || p[n] == '\0')) {
            return 1;
        }
        p = strchr(p, '\n');
        p = p != NULL ? p + 1 : NULL;
    }
    return 0;
}

/* The plugin gets the allow-list of krc's environment and the kubeconfig's
 * env, never krc's secrets (client-go would pass them all). */
static void test_exec_environment(void **state)
{
    static const char *const secret[] = {"SLACK_WEBHOOK_URL",
                                         "SLACK_BOT_TOKEN",
                                         "PGPASSWORD",
                                         "KRC_DB",
                                         "KRC_DB_PASSWORD_FILE",
                                         "KRC_MCP_TOKEN_FILE",
                                         "PAGERDUTY_ROUTING_KEY",
                                         "GITHUB_TOKEN",
                                         "MY_API_SECRET",
                                         "DB_PASSWORD"};
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_exec_creds cr;
    struct krc_error err;
    char script[1024];
    const char *dump;

    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++) {
        assert_int_equal(setenv(secret[i], "krc-secret-value-0123456789", 1), 0);
    }
    setenv("AWS_PROFILE", "default", 1); /* the kubeconfig's env wins */
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/krc", 1);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/eks.amazonaws.com/token", 1);
    setenv("GOOGLE_APPLICATION_CREDENTIALS", "/etc/gcp/key.json", 1);
    setenv("CLOUDSDK_CONFIG", "/etc/gcloud", 1);
    setenv("AZURE_FEDERATED_TOKEN_FILE", "/var/run/secrets/azure/tokens/azure-identity-token", 1);
    setenv("AAD_LOGIN_METHOD", "workloadidentity", 1);
    setenv("HTTPS_PROXY", "http://proxy:3128", 1);
    setenv("no_proxy", "10.0.0.0/8", 1);
    setenv("LC_ALL", "C.UTF-8", 1);
    setenv("KUBERNETES_EXEC_INFO", "{\"stale\":true}", 1); /* replaced by krc's request */
    snprintf(script, sizeof(script),
             "#!/bin/sh\nenv > '%s'\n"
             "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
             "\"ExecCredential\",\"status\":{\"token\":\"env-token-1\"}}'\n",
             path_in(env, "env.out"));
    write_exec_script(
        env, "dump-env", script,
        "      apiVersion: client.authentication.k8s.io/v1\n"
        "      interactiveMode: Never\n"
        "      env: [{name: AWS_PROFILE, value: prod},\n"
        "            {name: PAGERDUTY_ROUTING_KEY, value: given-by-the-kubeconfig}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_string_equal(cr.token, "env-token-1");
    krc_exec_creds_cleanup(&cr);
    dump = read_all(env, "env.out");
    assert_null(strstr(dump, "krc-secret-value"));
    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "\n%s=", secret[i]);
        if (strcmp(secret[i], "PAGERDUTY_ROUTING_KEY") != 0) {
            assert_null(strstr(dump, name));
        }
    }
    /* the kubeconfig's env, the allow-list, the request */
    assert_true(has_line(dump, "AWS_PROFILE=prod"));
    assert_true(has_line(dump, "PAGERDUTY_ROUTING_KEY=given-by-the-kubeconfig"));
    assert_true(has_line(dump, "AWS_ROLE_ARN=arn:aws:iam::123456789012:role/krc"));
    assert_true(
        has_line(dump, "AWS_WEB_IDENTITY_TOKEN_FILE=/var/run/secrets/eks.amazonaws.com/token"));
    assert_true(has_line(dump, "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/key.json"));
    assert_true(has_line(dump, "CLOUDSDK_CONFIG=/etc/gcloud"));
    assert_true(has_line(dump, "AZURE_FEDERATED_TOKEN_FILE=/var/run/secrets/azure/tokens/"
                               "azure-identity-token"));
    assert_true(has_line(dump, "AAD_LOGIN_METHOD=workloadidentity"));
    assert_true(has_line(dump, "HTTPS_PROXY=http://proxy:3128"));
    assert_true(has_line(dump, "no_proxy=10.0.0.0/8"));
    assert_true(has_line(dump, "LC_ALL=C.UTF-8"));
    assert_non_null(getenv("PATH"));
    {
        char want[8192];
        snprintf(want, sizeof(want), "PATH=%s", getenv("PATH"));
        assert_true(has_line(dump, want));
    }
    assert_true(has_line(dump, "KUBERNETES_EXEC_INFO={\"apiVersion\":\"client.authentication.k8s."
                               "io/v1\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":"
                               "false}}"));
    krc_kube_auth_config_cleanup(&cfg);

    /* the rule itself: names and prefixes, whole names only */
    assert_true(krc_exec_env_allowed("HOME", 4));
    assert_true(krc_exec_env_allowed("AWS_SESSION_TOKEN", 17));
    assert_false(krc_exec_env_allowed("AWS_", 4));
    assert_false(krc_exec_env_allowed("HOMEX", 5));
    assert_false(krc_exec_env_allowed("HOM", 3));
    assert_false(krc_exec_env_allowed("SLACK_BOT_TOKEN", 15));
    assert_false(krc_exec_env_allowed("KRC_DB", 6));
    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++) {
        unsetenv(secret[i]);
    }
    unsetenv("AWS_PROFILE");
    unsetenv("AWS_ROLE_ARN");
    unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
    unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    unsetenv("CLOUDSDK_CONFIG");
    unsetenv("AZURE_FEDERATED_TOKEN_FILE");
    unsetenv("AAD_LOGIN_METHOD");
    unsetenv("HTTPS_PROXY");
    unsetenv("no_proxy");
    unsetenv("LC_ALL");
    unsetenv("KUBERNETES_EXEC_INFO");
}

/* A secret on the plugin's stderr is redacted in the error that quotes it
 * (and in the log: tests/integration/test_exec_plugin.py). */
static void test_exec_stderr_redacted(void **state)
{
    struct env *env = *state;

    write_exec_script(env, "leaky.sh",
                      "#!/bin/sh\n"
                      "echo 'error: refresh failed: Authorization: Bearer "
                      "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrcmMifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ "
                      "password=hunter2-hunter2' >&2\n"
                      "exit 1\n",
                      "      apiVersion: client.authentication.k8s.io/v1beta1\n");
    expect_exec_failure(env, KRC_EIO,
                        "failed with exit status 1: error: refresh failed: "
                        "Authorization: Bearer [REDACTED] password=[REDACTED]");
}

/* A plugin that leaves a process holding its stdout (a background helper):
 * its credential is used once it has exited, the helper is killed and
 * reaped (krc as PID 1: the test process is a subreaper here), no 60 s
 * wait. */
static void test_exec_child_holds_stdout(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_exec_creds cr;
    struct krc_error err;
    char script[1024];
    int status;
    long bg;

    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    snprintf(script, sizeof(script),
             "#!/bin/sh\n"
             "sleep 30 &\n"
             "echo $! > '%s'\n"
             "echo 'helper started' >&2\n"
             "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
             "\"ExecCredential\",\"status\":{\"token\":\"held-token-1\"}}'\n",
             path_in(env, "bgpid"));
    write_exec_script(env, "holder.sh", script,
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      interactiveMode: Never\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    /* the old reader waited for the end of stdout: here, a timeout error */
    krc_exec_plugin_set_limits(cfg.exec, 15000, 4096);
    krc_error_clear(&err);
    assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
    assert_string_equal(cr.token, "held-token-1");
    krc_exec_creds_cleanup(&cr);
    bg = strtol(read_all(env, "bgpid"), NULL, 10);
    assert_true(bg > 1);
    /* killed and already reaped by krc: not a zombie left to this process */
    errno = 0;
    assert_int_equal(waitpid((pid_t)bg, &status, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    krc_kube_auth_config_cleanup(&cfg);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

static void test_auth_provider_and_basic_auth(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_file(env, "config",
               "current-context: g\n"
               "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
               "contexts: [{name: g, context: {cluster: k, user: gke}}]\n"
               "users:\n"
               "- name: gke\n"
               "  user:\n"
               "    auth-provider:\n"
               "      name: gcp\n"
               "      config: {cmd-path: gcloud}\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EUNSUPPORTED);
    assert_contains(err.msg, path_in(env, "config"));
    assert_contains(err.msg, "user \"gke\" uses the auth-provider plugin \"gcp\"");
    assert_contains(err.msg, "tokenFile");

    write_file(env, "config",
               "current-context: b\n"
               "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
               "contexts: [{name: b, context: {cluster: k, user: admin}}]\n"
               "users:\n"
               "- name: admin\n"
               "  user: {username: admin, password: hunter2}\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EUNSUPPORTED);
    assert_contains(err.msg, "user \"admin\" uses basic auth");
    assert_contains(err.msg, "not supported");
    assert_null(strstr(err.msg, "hunter2"));
}

static void test_malformed_yaml(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_file(env, "config",
               "current-context: c\n"
               "clusters:\n"
               "- name: k\n"
               "  cluster: {server: [unclosed\n"
               "contexts: []\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, path_in(env, "config"));
    assert_contains(err.msg, "malformed YAML at line 5");

    write_file(env, "config", "a: b\n  c: d\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, "malformed YAML at line 2, column");

    write_file(env, "config", "- just\n- a list\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, "top level must be a mapping");
}

static void test_bad_base64(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    write_file(env, "config",
               "current-context: c\n"
               "clusters:\n"
               "- name: k\n"
               "  cluster:\n"
               "    server: https://h\n"
               "    certificate-authority-data: LS0t!LS1\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, path_in(env, "config"));
    assert_contains(err.msg,
                    "cluster \"k\": certificate-authority-data is not valid base64: invalid "
                    "character '!' at offset 4");
    assert_contains(err.msg, "line 6");

    write_file(env, "config",
               "current-context: c\n"
               "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
               "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
               "users: [{name: u, user: {client-certificate-data: QUJDRA=x, "
               "client-key-data: QUJD}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, "client-certificate-data is not valid base64: data after padding");

    write_file(env, "config",
               "current-context: c\n"
               "clusters: [{name: k, cluster: {server: 'https://h', "
               "certificate-authority-data: QUJDR}}]\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, "truncated");

    /* Unpadded but complete input is accepted ("ABC" + "D" -> QUJDRA). */
    write_file(env, "config",
               "current-context: c\n"
               "clusters: [{name: k, cluster: {server: 'https://h', "
               "certificate-authority-data: QUJDRA}}]\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(path_in(env, "config"), NULL, NULL, &cfg, &err), 0);
    assert_int_equal(cfg.ca_pem_len, 4);
    assert_memory_equal(cfg.ca_pem, "ABCD", 4);
    krc_kube_auth_config_cleanup(&cfg);
}

static void test_kubeconfig_merge(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    char list[4096];

    /* a: current-context and the context; b: a second current-context (ignored),
     * the cluster and a user that a also defines (a's wins). */
    write_file(env, "a",
               "current-context: main\n"
               "contexts: [{name: main, context: {cluster: shared, user: u, "
               "namespace: from-a}}]\n"
               "users: [{name: u, user: {token: token-from-a}}]\n");
    write_file(env, "b",
               "current-context: other\n"
               "clusters: [{name: shared, cluster: {server: 'https://b.example'}}]\n"
               "contexts: [{name: other, context: {cluster: shared}}, "
               "{name: main, context: {cluster: nope}}]\n"
               "users: [{name: u, user: {token: token-from-b}}]\n");
    snprintf(list, sizeof(list), "%s::%s:%s:%s", path_in(env, "missing"), path_in(env, "a"),
             path_in(env, "b"), path_in(env, "a"));
    setenv("KUBECONFIG", list, 1);
    assert_int_equal(load(NULL, NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://b.example");
    assert_string_equal(cfg.token, "token-from-a");
    assert_string_equal(cfg.namespace, "from-a");
    assert_contains(cfg.source, path_in(env, "a"));
    krc_kube_auth_config_cleanup(&cfg);

    /* Order matters: with b first, its current-context wins. */
    snprintf(list, sizeof(list), "%s:%s", path_in(env, "b"), path_in(env, "a"));
    setenv("KUBECONFIG", list, 1);
    assert_int_equal(load(NULL, NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://b.example");
    assert_null(cfg.token);
    assert_null(cfg.namespace);
    assert_contains(cfg.source, "context other");
    assert_contains(cfg.source, path_in(env, "b"));
    krc_kube_auth_config_cleanup(&cfg);
}

static void test_kubeconfig_merge_errors(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    char list[4096];

    /* Only missing files: a clear error instead of silently going elsewhere. */
    snprintf(list, sizeof(list), "%s:%s", path_in(env, "x"), path_in(env, "y"));
    setenv("KUBECONFIG", list, 1);
    assert_int_equal(load(NULL, NULL, NULL, &cfg, &err), KRC_EIO);
    assert_contains(err.msg, "none of the files in $KUBECONFIG");
    assert_contains(err.msg, path_in(env, "y"));

    /* A malformed file in the list names that file. */
    write_file(env, "good", "current-context: c\n");
    write_file(env, "bad", "x: [\n");
    snprintf(list, sizeof(list), "%s:%s", path_in(env, "good"), path_in(env, "bad"));
    setenv("KUBECONFIG", list, 1);
    assert_int_equal(load(NULL, NULL, NULL, &cfg, &err), KRC_EPARSE);
    assert_contains(err.msg, path_in(env, "bad"));

    /* The missing cluster is reported against the file with the context. */
    write_file(env, "bad", "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(load(NULL, NULL, NULL, &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, path_in(env, "bad"));
    assert_contains(err.msg, "cluster \"k\"");
}

static void test_unreadable_kubeconfig(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    assert_int_equal(load(path_in(env, "nope"), NULL, NULL, &cfg, &err), KRC_EIO);
    assert_contains(err.msg, path_in(env, "nope"));
    assert_contains(err.msg, "cannot read");

    /* A directory is not a file. */
    make_dir(env, "dir");
    assert_int_equal(load(path_in(env, "dir"), NULL, NULL, &cfg, &err), KRC_EIO);
    assert_contains(err.msg, path_in(env, "dir"));
}

/* ---- in-cluster and precedence ---------------------------------------- */

static void make_sa_dir(const struct env *env, int with_ca)
{
    make_dir(env, "sa");
    write_file(env, "sa/token", "eyJhbGciOiJSUzI1NiJ9.payload.sig\n");
    write_file(env, "sa/namespace", "  monitoring \n");
    if (with_ca) {
        write_file(env, "sa/ca.crt", CA_PEM);
    }
}

static void test_in_cluster(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    make_sa_dir(env, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    assert_string_equal(cfg.ca_file, path_in(env, "sa/ca.crt"));
    assert_string_equal(cfg.token_file, path_in(env, "sa/token"));
    assert_null(cfg.token);
    assert_string_equal(cfg.namespace, "monitoring");
    assert_int_equal(cfg.in_cluster, 1);
    assert_string_equal(cfg.source, "in-cluster service account");
    krc_kube_auth_config_cleanup(&cfg);

    /* IPv6 service host. */
    setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://[fd00:10:96::1]:6443");
    krc_kube_auth_config_cleanup(&cfg);

    /* No namespace file: namespace unknown, not an error. */
    unlink(path_in(env, "sa/namespace"));
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_null(cfg.namespace);
    krc_kube_auth_config_cleanup(&cfg);

    setenv("KUBERNETES_SERVICE_PORT", "https", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_EINVAL);
    assert_contains(err.msg, "KUBERNETES_SERVICE_PORT \"https\"");
    setenv("KUBERNETES_SERVICE_PORT", "70000", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_EINVAL);
}

static void test_in_cluster_missing_files(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    make_sa_dir(env, 0);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_EIO);
    assert_contains(err.msg, "in-cluster service account");
    assert_contains(err.msg, path_in(env, "sa/ca.crt"));

    write_file(env, "sa/ca.crt", CA_PEM);
    unlink(path_in(env, "sa/token"));
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_EIO);
    assert_contains(err.msg, path_in(env, "sa/token"));
}

static void test_precedence(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    make_sa_dir(env, 1);
    make_dir(env, ".kube");
    write_file(env, ".kube/config",
               "current-context: home\n"
               "clusters: [{name: k, cluster: {server: 'https://home'}}]\n"
               "contexts: [{name: home, context: {cluster: k}}]\n");
    write_file(env, "env-config",
               "current-context: env\n"
               "clusters: [{name: k, cluster: {server: 'https://env'}}]\n"
               "contexts: [{name: env, context: {cluster: k}}]\n");
    write_file(env, "opt-config",
               "current-context: opt\n"
               "clusters: [{name: k, cluster: {server: 'https://opt'}}]\n"
               "contexts: [{name: opt, context: {cluster: k}}]\n");

    /* Nothing set but HOME: ~/.kube/config. */
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://home");
    krc_kube_auth_config_cleanup(&cfg);

    /* In-cluster beats ~/.kube/config. */
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://10.0.0.1:443");
    krc_kube_auth_config_cleanup(&cfg);

    /* Only one of the two variables: not in-cluster. */
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://home");
    krc_kube_auth_config_cleanup(&cfg);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);

    /* $KUBECONFIG beats in-cluster; an empty $KUBECONFIG counts as unset. */
    setenv("KUBECONFIG", path_in(env, "env-config"), 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://env");
    krc_kube_auth_config_cleanup(&cfg);
    setenv("KUBECONFIG", "", 1);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_int_equal(cfg.in_cluster, 1);
    krc_kube_auth_config_cleanup(&cfg);
    setenv("KUBECONFIG", path_in(env, "env-config"), 1);

    /* --kubeconfig beats everything. */
    assert_int_equal(load(path_in(env, "opt-config"), NULL, path_in(env, "sa"), &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://opt");
    krc_kube_auth_config_cleanup(&cfg);

    /* NULL options behave like empty ones. */
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(krc_kube_auth_load(NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://env");
    krc_kube_auth_config_cleanup(&cfg);
}

static void test_nothing_configured(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;

    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, "--kubeconfig");
    assert_contains(err.msg, "$KUBECONFIG");
    assert_contains(err.msg, "KUBERNETES_SERVICE_HOST");
    assert_contains(err.msg, path_in(env, ".kube/config"));

    unsetenv("HOME");
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_ENOTFOUND);
    assert_contains(err.msg, "$HOME is not set");
}

/* ---- token source ----------------------------------------------------- */

static void test_token_source_static(void **state)
{
    struct krc_token_source *ts;
    struct krc_error err;
    char tok[16];

    (void)state;
    ts = krc_token_source_new(NULL, NULL, 60);
    assert_non_null(ts);
    memcpy(tok, "junk", 5);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "");
    krc_token_source_free(ts);

    ts = krc_token_source_new("static-token", NULL, 60);
    assert_non_null(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "static-token");
    krc_token_source_invalidate(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "static-token");
    /* 12 bytes + NUL do not fit in 12. */
    assert_int_equal(krc_token_source_get(ts, tok, 12, &err), KRC_ETOOBIG);
    assert_null(strstr(err.msg, "static-token"));
    krc_token_source_free(ts);
    krc_token_source_free(NULL);
}

static void test_token_rotation(void **state)
{
    struct env *env = *state;
    struct krc_token_source *ts;
    struct krc_error err;
    char tok[64];

    write_file(env, "token", "\n  first-token \n\n");
    ts = krc_token_source_new(NULL, path_in(env, "token"), 3600);
    assert_non_null(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "first-token");

    /* Rotated on disk: the cached copy is still fresh. */
    write_file(env, "token", "second-token");
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "first-token");

    /* After a 401 the file is re-read at once. */
    krc_token_source_invalidate(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "second-token");

    /* A failed re-read keeps the last good token. */
    unlink(path_in(env, "token"));
    krc_token_source_invalidate(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "second-token");
    write_file(env, "token", "   \n");
    krc_token_source_invalidate(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "second-token");
    /* ... and the file is tried again on the next call until it is good. */
    write_file(env, "token", "third-token\n");
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "third-token");
    krc_token_source_free(ts);

    /* refresh_seconds = 0: every get() re-reads. */
    ts = krc_token_source_new(NULL, path_in(env, "token"), 0);
    assert_non_null(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "third-token");
    write_file(env, "token", "fourth-token");
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "fourth-token");
    krc_token_source_free(ts);
}

/* The timer path: with refresh_seconds = 1 a rotated file is picked up
 * without invalidate(), not at once but within a deadline. */
static void test_token_refresh_timer(void **state)
{
    struct env *env = *state;
    struct krc_token_source *ts;
    struct krc_error err;
    struct timespec start, now, pause = {0, 20 * 1000 * 1000};
    char tok[64];

    write_file(env, "token", "old-token");
    ts = krc_token_source_new(NULL, path_in(env, "token"), 1);
    assert_non_null(ts);
    clock_gettime(CLOCK_MONOTONIC, &start);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "old-token");
    write_file(env, "token", "new-token");
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec < 1) {
        assert_string_equal(tok, "old-token");
    }
    for (;;) {
        assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
        if (strcmp(tok, "new-token") == 0) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        /* Picked up soon after the interval, not much later. */
        assert_true((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 <
                    2900);
        nanosleep(&pause, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* Not before the refresh interval has passed (allow for rounding). */
    assert_true((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
                900);
    krc_token_source_free(ts);
}

static void test_token_file_errors(void **state)
{
    struct env *env = *state;
    struct krc_token_source *ts;
    struct krc_error err;
    char tok[64];

    /* Never readable: KRC_EIO naming the file. */
    ts = krc_token_source_new(NULL, path_in(env, "absent"), 60);
    assert_non_null(ts);
    krc_error_clear(&err);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), KRC_EIO);
    assert_contains(err.msg, path_in(env, "absent"));
    krc_token_source_free(ts);

    write_file(env, "empty", " \n");
    ts = krc_token_source_new(NULL, path_in(env, "empty"), 60);
    assert_non_null(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), KRC_EIO);
    assert_contains(err.msg, "is empty");
    krc_token_source_free(ts);

    /* A token with inner whitespace would break the header; its value never
     * appears in the message. */
    write_file(env, "two-words", "secretpart1 secretpart2\n");
    ts = krc_token_source_new(NULL, path_in(env, "two-words"), 60);
    assert_non_null(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), KRC_EIO);
    assert_contains(err.msg, "offset 11");
    assert_null(strstr(err.msg, "secretpart"));
    krc_token_source_free(ts);

    /* Unreadable file but a static token: the static one is used (client-go). */
    ts = krc_token_source_new("fallback", path_in(env, "absent"), 60);
    assert_non_null(ts);
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "fallback");
    write_file(env, "absent", "now-there");
    assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
    assert_string_equal(tok, "now-there");
    krc_token_source_free(ts);
}

/* A tokenFile that cannot work stops the start like a missing one, with the
 * file, position, path and reason (issue 25): a directory, an empty file, a
 * token with a space; in-cluster too. */
static void test_token_file_checked_at_load(void **state)
{
    struct env *env = *state;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    const char *const cases[][2] = {
        {"tokdir", "Is a directory"},
        {"tokempty", "the file is empty"},
        {"tokspace", "whitespace or a control character at offset 6"},
        {"tokabsent", "No such file or directory"},
    };
    char yaml[1024];

    make_dir(env, "tokdir");
    write_file(env, "tokempty", "\n");
    write_file(env, "tokspace", "secret token\n");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(yaml, sizeof(yaml),
                 "current-context: c\n"
                 "clusters: [{name: k, cluster: {server: 'https://h'}}]\n"
                 "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                 "users:\n"
                 "- name: u\n"
                 "  user:\n"
                 "    tokenFile: %s\n",
                 cases[i][0]);
        write_file(env, "config", yaml);
        krc_error_clear(&err);
        assert_true(load(path_in(env, "config"), NULL, NULL, &cfg, &err) < 0);
        assert_contains(err.msg, path_in(env, "config"));
        assert_contains(err.msg, "user \"u\": tokenFile ");
        assert_contains(err.msg, path_in(env, cases[i][0]));
        assert_contains(err.msg, cases[i][1]);
        assert_contains(err.msg, "(line 7, column 16)"); /* the tokenFile value */
        assert_null(strstr(err.msg, "secret"));
    }

    /* in-cluster: the token mounted as a directory */
    make_sa_dir(env, 1);
    unlink(path_in(env, "sa/token"));
    make_dir(env, "sa/token");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    krc_error_clear(&err);
    assert_int_equal(load(NULL, NULL, path_in(env, "sa"), &cfg, &err), KRC_EIO);
    assert_contains(err.msg, "in-cluster service account: token file");
    assert_contains(err.msg, path_in(env, "sa/token"));
    assert_contains(err.msg, "Is a directory");
    rmdir(path_in(env, "sa/token"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

struct reader_arg {
    struct krc_token_source *ts;
    int bad;
};

static void *reader(void *p)
{
    struct reader_arg *a = p;
    char tok[64];

    for (int i = 0; i < 2000; i++) {
        if (krc_token_source_get(a->ts, tok, sizeof(tok), NULL) != 0 ||
            (strcmp(tok, "token-aaaa") != 0 && strcmp(tok, "token-bbbb") != 0)) {
            a->bad++;
        }
        if (i % 7 == 0) {
            krc_token_source_invalidate(a->ts);
        }
    }
    return NULL;
}

static void test_token_source_threads(void **state)
{
    struct env *env = *state;
    struct reader_arg args[4];
    pthread_t th[4];

    write_file(env, "token", "token-aaaa\n");
    struct krc_token_source *ts = krc_token_source_new(NULL, path_in(env, "token"), 0);
    assert_non_null(ts);
    for (int i = 0; i < 4; i++) {
        args[i].ts = ts;
        args[i].bad = 0;
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    for (int i = 0; i < 200; i++) {
        write_file(env, "token", i % 2 ? "token-aaaa\n" : "token-bbbb\n");
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].bad, 0);
    }
    krc_token_source_free(ts);
}

/* ---- allocation-failure sweeps ---------------------------------------- */

/* Run load() with the Nth allocation failing for N = 0, 1, ... until it
 * succeeds; every failure must be KRC_ENOMEM and leak nothing (ASan). */
static void sweep_load(const char *kubeconfig, const char *sa_dir)
{
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    long n;
    int rc;

    for (n = 0; n < 10000; n++) {
        krc_mem_fail_after(n);
        rc = load(kubeconfig, NULL, sa_dir, &cfg, &err);
        krc_mem_fail_after(-1);
        if (rc == 0) {
            assert_non_null(cfg.server);
            krc_kube_auth_config_cleanup(&cfg);
            break;
        }
        if (rc != KRC_ENOMEM) {
            fail_msg("allocation %ld failing gave %d (%s), not KRC_ENOMEM", n, rc, err.msg);
        }
    }
    assert_true(n > 3);
    assert_true(n < 10000);
}

static void test_alloc_failure_sweep(void **state)
{
    struct env *env = *state;
    char *ca = b64(CA_PEM);
    char *cert = b64(CERT_PEM);
    char *key = b64(KEY_PEM);
    char yaml[8192];
    char list[4096];

    write_file(env, "tok", "file-token\n");
    snprintf(yaml, sizeof(yaml),
             "current-context: c\n"
             "clusters: [{name: k, cluster: {server: 'https://h:1/', "
             "certificate-authority-data: %s, tls-server-name: n}}]\n"
             "contexts: [{name: c, context: {cluster: k, user: u, namespace: ns}}]\n"
             "users: [{name: u, user: {token: t0k3n, tokenFile: tok, "
             "client-certificate-data: %s, client-key-data: %s}}]\n",
             ca, cert, key);
    write_file(env, "full", yaml);
    sweep_load(path_in(env, "full"), NULL);

    /* Multi-file $KUBECONFIG. */
    write_file(env, "part1",
               "current-context: c\n"
               "contexts: [{name: c, context: {cluster: k, user: u}}]\n");
    write_file(env, "part2",
               "clusters: [{name: k, cluster: {server: h, "
               "certificate-authority: tok}}]\n"
               "users: [{name: u, user: {tokenFile: tok}}]\n");
    snprintf(list, sizeof(list), "%s:%s:%s", path_in(env, "part1"), path_in(env, "missing"),
             path_in(env, "part2"));
    setenv("KUBECONFIG", list, 1);
    sweep_load(NULL, NULL);
    unsetenv("KUBECONFIG");

    /* In-cluster. */
    make_sa_dir(env, 1);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    sweep_load(NULL, path_in(env, "sa"));

    free(ca);
    free(cert);
    free(key);
}

/* Allocation failures anywhere in loading an exec user and running its
 * plugin: a clean error, no leak, and success once memory is back. */
static void test_alloc_failure_exec(void **state)
{
    struct env *env = *state;
    long n;

    write_exec_config(env, "./plugin", exec_v1);
    write_plugin(env, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{\"token\":\"exec-token-RUN\"}}\n");
    for (n = 0; n < 2000; n++) {
        struct krc_kube_auth_config cfg;
        struct krc_exec_creds cr;
        struct krc_error err;
        int rc;

        krc_mem_fail_after(n);
        rc = load(path_in(env, "config"), NULL, NULL, &cfg, &err);
        if (rc == 0) {
            rc = krc_exec_plugin_get(cfg.exec, &cr, &err);
            krc_exec_creds_cleanup(&cr);
        }
        krc_mem_fail_after(-1);
        if (rc == 0) {
            krc_kube_auth_config_cleanup(&cfg);
            break;
        }
        assert_int_equal(rc, KRC_ENOMEM);
        if (cfg.exec != NULL) {
            /* the plugin object works once memory is back */
            assert_int_equal(krc_exec_plugin_get(cfg.exec, &cr, &err), 0);
            assert_non_null(strstr(cr.token, "exec-token-"));
            krc_exec_creds_cleanup(&cr);
        }
        krc_kube_auth_config_cleanup(&cfg);
    }
    assert_true(n > 5);
    assert_true(n < 2000);
}

static void test_alloc_failure_token_source(void **state)
{
    struct env *env = *state;
    struct krc_error err;
    char tok[64];
    long n;

    write_file(env, "token", "rotating-token\n");
    for (n = 0; n < 1000; n++) {
        struct krc_token_source *ts;
        int rc;

        krc_mem_fail_after(n);
        ts = krc_token_source_new("static-tok", path_in(env, "token"), 60);
        if (ts == NULL) {
            krc_mem_fail_after(-1);
            continue;
        }
        rc = krc_token_source_get(ts, tok, sizeof(tok), &err);
        krc_mem_fail_after(-1);
        /* Reading the file may fail for lack of memory: the static token is the fallback. */
        assert_int_equal(rc, 0);
        if (strcmp(tok, "rotating-token") == 0) {
            krc_token_source_free(ts);
            break;
        }
        assert_string_equal(tok, "static-tok");
        /* Once memory is back, the file is read. */
        assert_int_equal(krc_token_source_get(ts, tok, sizeof(tok), &err), 0);
        assert_string_equal(tok, "rotating-token");
        krc_token_source_free(ts);
    }
    assert_true(n > 2);
    assert_true(n < 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_token_and_inline_ca, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_and_relative_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline_client_cert_and_insecure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context_override, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_current_context, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dangling_references, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_config_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_token_cached_until_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_client_certificate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_stderr_redacted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_child_holds_stdout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auth_provider_and_basic_auth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_yaml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_base64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig_merge_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_kubeconfig, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster_missing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_checked_at_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_configured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_source_static, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_refresh_timer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_source_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failure_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failure_token_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failure_exec, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
