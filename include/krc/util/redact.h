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
 *   - key=value pairs whose key is (or ends in) password, passwd, pwd, secret,
 *     token, api_key, apikey, access_key, secret_key, client_secret,
 *     private_key, credential(s), authorization (case-insensitive, '-', '.'
 *     or camelCase boundaries, so DB_PASSWORD, x-api-key, accessToken match)
 *     in the forms k=v, k: v, k = "v", "k": "v" and 'k': 'v'; the key and
 *     quotes are kept, and an auth scheme word ("Bearer", "Basic") is kept;
 *   - "Bearer TOKEN" anywhere (TOKEN of 8+ characters with a digit or a
 *     symbol, so prose such as "bearer authentication" survives);
 *   - JWTs (eyJ... . ... . ...), AWS access key ids (AKIA/ASIA + 16),
 *     GCP API keys (AIza + 35), Slack tokens (xox[abposr]-..., xapp-...),
 *     Slack webhook paths, GitHub tokens (ghp_/gho_/ghs_/ghu_/ghr_, github_pat_).
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

#endif
