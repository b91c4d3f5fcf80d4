/* Credentials (kube/kube_auth.c). Parts split at FUZZ_SEP:
 *   first byte even: kubeconfig | ca.crt | token | cert.pem | key.pem, the
 *     kubeconfig loaded with --kubeconfig (its relative paths point at the
 *     other parts, in the same folder);
 *   first byte odd: host | port | token | ca.crt | namespace, in-cluster
 *     (KUBERNETES_SERVICE_HOST/PORT and a service-account folder).
 * A load that succeeds has a server; a failure has a message; the token
 * (part 3) never appears in an error message. */
#include <string.h>

#include "fuzz.h"
#include "krc/kube/kube_auth.h"
#include "krc/util/log.h"

static char *dup_part(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static int contains(const uint8_t *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) {
        if (memcmp(hay + i, needle, k) == 0) {
            return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *parts[5];
    size_t lens[5];
    size_t n;
    struct krc_kube_auth_options opts;
    struct krc_kube_auth_config cfg;
    struct krc_error err;
    char *token;
    int rc;

    if (size < 1) {
        return 0;
    }
    krc_log_set_level(KRC_LOG_ERROR);
    n = fuzz_split(data + 1, size - 1, parts, lens, 5);
    for (size_t i = n; i < 5; i++) {
        parts[i] = data;
        lens[i] = 0;
    }
    memset(&opts, 0, sizeof(opts));
    memset(&cfg, 0, sizeof(cfg));
    unsetenv("KUBECONFIG");
    if (data[0] & 1) {
        char *host = dup_part(parts[0], lens[0]);
        char *port = dup_part(parts[1], lens[1]);
        if (host == NULL || port == NULL || memchr(parts[0], '\0', lens[0]) != NULL ||
            memchr(parts[1], '\0', lens[1]) != NULL) {
            free(host);
            free(port);
            return 0;
        }
        setenv("KUBERNETES_SERVICE_HOST", host, 1);
        setenv("KUBERNETES_SERVICE_PORT", port, 1);
        free(host);
        free(port);
        fuzz_write(0, "token", parts[2], lens[2]);
        fuzz_write(1, "ca.crt", parts[3], lens[3]);
        fuzz_write(2, "namespace", parts[4], lens[4]);
        opts.sa_dir = fuzz_tmpdir();
    } else {
        unsetenv("KUBERNETES_SERVICE_HOST");
        unsetenv("KUBERNETES_SERVICE_PORT");
        opts.kubeconfig = fuzz_write(0, "kubeconfig", parts[0], lens[0]);
        fuzz_write(1, "ca.crt", parts[1], lens[1]);
        fuzz_write(2, "token", parts[2], lens[2]);
        fuzz_write(3, "cert.pem", parts[3], lens[3]);
        fuzz_write(3, "key.pem", parts[4], lens[4]);
        opts.sa_dir = "/nonexistent";
    }
    token = dup_part(parts[2], lens[2]);
    rc = krc_kube_auth_load(&opts, &cfg, &err);
    if (rc == 0) {
        FUZZ_CHECK(cfg.server != NULL && cfg.server[0] != '\0', "no server");
        krc_kube_auth_config_cleanup(&cfg);
    } else {
        FUZZ_CHECK(err.msg[0] != '\0', "error %d without a message", rc);
        /* the token file's content (8+ characters found nowhere else in the
         * input or the paths) must not leak into the message */
        if (token != NULL && strlen(token) >= 8 && !contains(parts[0], lens[0], token) &&
            !contains(parts[1], lens[1], token) && strstr(fuzz_tmpdir(), token) == NULL &&
            !contains(parts[3], lens[3], token) && !contains(parts[4], lens[4], token)) {
            FUZZ_CHECK(strstr(err.msg, token) == NULL, "token in the error: %s", err.msg);
        }
    }
    free(token);
    return 0;
}
