/* Private to src/kube: what the credential loader's files share. kube_auth.c
 * (the in-cluster service account, the token source, krc_kube_auth_load),
 * kube_auth_kubeconfig.c (kubeconfig files) and kube_auth_exec.c (a user's
 * exec plugin). */
#ifndef KRC_KUBE_AUTH_PRIVATE_H
#define KRC_KUBE_AUTH_PRIVATE_H

#include <stddef.h>

#include <yaml.h>

#include "krc/kube/kube_auth.h"
#include "krc/util/error.h"

#define KUBECONFIG_MAX_BYTES (4 * 1024 * 1024)

/* kube_auth.c: small helpers */

/* Read a whole file (at most max bytes) into a NUL-terminated allocation.
 * KRC_EIO with *ret_errno set, KRC_ETOOBIG, or KRC_ENOMEM. */
int krc_auth_read_whole_file(const char *path, size_t max, char **ret_data, size_t *ret_len,
                             int *ret_errno);
/* Offset of the first byte of a token that is not visible ASCII (it goes
 * into an HTTP header), -1 when none. */
long krc_auth_bad_token_byte(const char *s, size_t len);
/* Read a bearer token file and check it (at most 64 KiB, not empty, no
 * whitespace or control character inside): 0 with *ret_token a krc
 * allocation, or the code with why the reason without the path ("Is a
 * directory", "the file is empty", ...). */
int krc_auth_read_token_file(const char *path, char **ret_token, char *why, size_t whysz);
/* dir + "/" (unless dir ends with one) + name, a krc allocation (NULL when
 * out of memory). */
char *krc_auth_join_path(const char *dir, const char *name);
/* The folder of a path ("." for a bare name, "/" at the root), a krc
 * allocation. */
char *krc_auth_dir_of(const char *path);

/* kube_auth_kubeconfig.c: one loaded kubeconfig file */
struct kc_file {
    char *path;
    char *dir;
    yaml_document_t doc;
    int have_doc;
};

/* Error about file f, with the node's position appended when n is given. */
int krc_kubeconfig_err(struct krc_error *err, int code, const struct kc_file *f,
                       const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* String field of a mapping: *ret is borrowed, NULL when absent, null or "". */
int krc_kubeconfig_get_str(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                           const char **ret, struct krc_error *err);
/* Mapping or sequence field: *ret NULL when absent or null. */
int krc_kubeconfig_get_node(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                            yaml_node_type_t type, yaml_node_t **ret, struct krc_error *err);
int krc_kubeconfig_get_bool(struct kc_file *f, yaml_node_t *map, const char *what, const char *key,
                            int *ret, struct krc_error *err);
/* A path of the file, relative to its folder unless absolute; a krc
 * allocation (NULL when out of memory). */
char *krc_kubeconfig_resolve_path(const struct kc_file *f, const char *p);
/* `list` is one path (single) or a ':'-separated $KUBECONFIG value. */
int krc_kubeconfig_load(const char *list, int single, const char *context,
                        struct krc_kube_auth_config *cfg, struct krc_error *err);

/* kube_auth_exec.c: a user with `exec`: check it now and make the plugin
 * (run at the first request). The cluster is loaded already
 * (provideClusterInfo needs it). */
int krc_kubeconfig_load_exec(struct kc_file *f, yaml_node_t *x, const char *name,
                             struct krc_kube_auth_config *cfg, struct krc_error *err);

#endif
