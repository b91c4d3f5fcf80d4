/* Base64 decoding for kubeconfig `*-data` fields: the standard alphabet,
 * whitespace anywhere, padding optional (but, when present, correct). */
#ifndef KRC_BASE64_H
#define KRC_BASE64_H

#include <stddef.h>

/* Decode in[0..inlen) into a new allocation (*ret, NUL-terminated after
 * *ret_len bytes; caller frees with krc_free). KRC_EINVAL with a reason
 * naming the offset (never the data) in why when the input is not base64 or
 * decodes to nothing; KRC_ENOMEM. */
int krc_base64_decode(const char *in, size_t inlen, unsigned char **ret, size_t *ret_len, char *why,
                      size_t whysz);

#endif
