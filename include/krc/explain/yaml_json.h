/* YAML text (what `kubectl get ... -o yaml` prints) -> JSON text, so that the
 * JSON decoders (kube_parse) read both without a second code path.
 *
 * Scalars are typed like YAML 1.2's core schema, which is what kubectl
 * writes: quoted and block scalars, and any scalar tagged !!str, are
 * strings; plain `null`, `~` and empty values are null; `true`/`false` are
 * booleans; plain decimal, 0x and 0o integers and decimal floats are
 * numbers (.inf/.nan, which JSON cannot hold, stay strings); everything else
 * is a string. Mapping keys become strings. Anchors and aliases are
 * refused (kubectl never writes them, and an alias bomb would expand
 * without bound), as are non-scalar keys.
 *
 * Several documents (`---`): empty ones are skipped; one left is returned
 * as it is; more become one `{"apiVersion":"v1","kind":"List","items":[...]}`
 * holding, when `want_kind` is given and some documents have that top-level
 * `kind`, only those (a Pod among other manifests), else all of them.
 *
 * Errors (the caller prefixes the file name): KRC_EPARSE "not valid YAML at
 * line L, column C: <libyaml's problem>", "binary data, not JSON or YAML"
 * (a NUL byte), "no document (the file is empty)", "not JSON or YAML: line
 * L is plain text, not a mapping"; KRC_EUNSUPPORTED for aliases and complex
 * keys; KRC_ETOOBIG when nesting is deeper than KRC_YAML_JSON_DEPTH_MAX or
 * the JSON would exceed `max` bytes; KRC_ENOMEM. */
#ifndef KRC_YAML_JSON_H
#define KRC_YAML_JSON_H

#include <stddef.h>

#include "krc/util/error.h"

#define KRC_YAML_JSON_DEPTH_MAX 128

/* 1 when the text, after a UTF-8 byte order mark and white space, starts
 * with '{' or '[' (JSON; YAML documents from kubectl never do), else 0. */
int krc_yaml_json_is_json(const char *data, size_t len);

/* Convert `len` bytes of YAML (not necessarily NUL-terminated) into JSON.
 * *ret_json (NUL-terminated, caller frees with krc_free) and *ret_len are
 * set on success. */
int krc_yaml_json_convert(const char *data, size_t len, const char *want_kind, size_t max,
                          char **ret_json, size_t *ret_len, struct krc_error *err);

#endif
