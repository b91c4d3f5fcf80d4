/* Secret redaction for text that leaves the cluster (log lines, event
 * messages, evidence) before it is posted to Slack.
 *
 * A redactor is built once from the built-in patterns plus optional extra
 * POSIX extended regular expressions (from the configuration), is immutable
 * afterwards and may be shared by any number of threads.
 *
 * Built-in patterns are hand-written scanners (no regex, no backtracking):
 * one pass over the input, every candidate examined in time bounded by its
 * own length, so a 64 KiB log costs well under a millisecond:
 *   - private key blocks "-----BEGIN ... PRIVATE KEY-----" .. "-----END ...":
 *     the body becomes [REDACTED]; a block cut by truncation (no END, or an
 *     END whose BEGIN was cut off the top) is redacted to the cut;
 *   - passwords in URLs: scheme://user:PASSWORD@host keeps user and host;
 *   - the values of pairs whose key names a secret (the key rule: the key
 *     split into words at '_', '-', '.', '/', digits and camelCase steps, its
 *     last word password, pass, pwd, secret, token, key (not after public,
 *     cache, sort, ...), auth, authorization, cookie, session, credential(s),
 *     private, passphrase, signature, ... or ending in password, token,
 *     secret, ...; docs/configuration.md "Redaction" has the whole rule and
 *     krc_redact_secret_key applies it), in the forms k=v, k: v, k = "v",
 *     "k": "v", 'k': 'v', \"k\":\"v\" (JSON in a JSON string), --k v (a
 *     command line) and "name": "K", "value": "v" (a pod's environment); the
 *     key and quotes are kept, and an auth scheme word ("Bearer", "Basic") is
 *     kept;
 *   - "Bearer TOKEN" anywhere (TOKEN of 8+ characters with a digit or a
 *     symbol, so prose such as "bearer authentication" survives);
 *   - JWTs (eyJ... . ... . ...), AWS access key ids (AKIA/ASIA + 16), AWS
 *     secret access keys standing alone (40 of [A-Za-z0-9+/] with upper,
 *     lower and a digit: a hex SHA-1 is not one), GCP API keys (AIza + 35),
 *     Slack tokens (xox[abposr]-..., xapp-...), Slack webhook paths, GitHub
 *     tokens (ghp_/gho_/ghs_/ghu_/ghr_, github_pat_), and the prefixed tokens
 *     of Stripe (sk_live_, rk_live_, sk_test_, rk_test_, whsec_), GitLab
 *     (glpat-, glptt-, gldt-, glrt-, glcbt-, glsoat-), HashiCorp Vault (hvs.,
 *     hvb., hvr.), OpenAI (sk-proj-), Anthropic (sk-ant-), npm (npm_), PyPI
 *     (pypi-AgE), Google OAuth (ya29.), Docker Hub (dckr_pat_), DigitalOcean
 *     (dop_v1_), Shopify (shpat_) and SendGrid (SG.).
 * Extra regexes are applied afterwards, line by line, each match replaced by
 * [REDACTED].
 *
 * Input is raw bytes: not NUL-terminated, maybe not UTF-8, maybe with NUL
 * bytes (a line holding a NUL is matched by the extra regexes only up to the
 * NUL). Bytes that are not part of a secret are copied unchanged. */
#ifndef KRC_REDACT_H
#define KRC_REDACT_H

#include <stddef.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"

#define KRC_REDACT_MARK "[REDACTED]"
#define KRC_REDACT_MAX_EXTRA 64 /* extra regexes accepted */

struct krc_redactor;

/* Build a redactor with the built-in patterns and `n_extra` extra text
 * patterns (krc/util/pattern.h: POSIX ERE with Go's \d \w \s; may be
 * 0 / NULL; borrowed, compiled here). KRC_EINVAL naming the pattern index,
 * quoting it, with regerror() text when one does not compile, or when a
 * pattern matches the empty string; KRC_ENOMEM. Caller frees *ret with
 * krc_redact_free(). */
int krc_redact_new(const char *const *extra, size_t n_extra, struct krc_redactor **ret,
                   struct krc_error *err);
/* Accepts NULL. */
void krc_redact_free(struct krc_redactor *rd);

/* Append a redacted copy of data[0..len) to `out`. Returns the number of
 * redactions made (>= 0), or KRC_ETOOBIG when `out` reaches its maximum
 * (out keeps what was appended so far), or KRC_ENOMEM. `rd` may be NULL:
 * the built-in patterns only. */
int krc_redact_apply(const struct krc_redactor *rd, const void *data, size_t len,
                     struct krc_buf *out, struct krc_error *err);

/* Does a key of this name (an annotation, a label, an environment variable,
 * the key of a key=value pair) hold a secret, by the key rule above? 1 or 0.
 * "example.com/db-password", "DB_PASS", "AccountKey", "x_key" do;
 * "passed", "bypass", "author", "keyboard", "public_key", "session_count",
 * "secret_name" do not. */
int krc_redact_secret_key(const char *key, size_t len);

/* Append the redacted value of a named field (a label or an annotation
 * value): the whole value becomes the mark when `key` (NUL-terminated; NULL:
 * no key) names a secret (an empty value stays empty), else the value goes
 * through krc_redact_apply. Same returns as krc_redact_apply. */
int krc_redact_field(const struct krc_redactor *rd, const char *key, const void *data, size_t len,
                     struct krc_buf *out, struct krc_error *err);

/* Redact a krc_malloc'd, NUL-terminated string in place: *s is replaced by
 * its redacted copy when something was redacted (as the value of a field
 * named `key` when key is not NULL: krc_redact_field). When redaction fails,
 * *s becomes the mark (NULL when even that cannot be allocated), so a text
 * is never left unredacted. Returns the number of redactions (0 with *s NULL
 * too), or KRC_ENOMEM (KRC_ETOOBIG: a guard that no text reaches). */
int krc_redact_in_place(const struct krc_redactor *rd, const char *key, char **s,
                        struct krc_error *err);

#endif
