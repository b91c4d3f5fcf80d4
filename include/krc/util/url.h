/* The one function that hides the passwords of a URL (issue 17): a
 * database URL such as postgres://user:PASSWORD@host/db?password=PASSWORD,
 * for logs, errors, `krc config` and `krc history`. Pure. */
#ifndef KRC_UTIL_URL_H
#define KRC_UTIL_URL_H

/* An owned copy of `s` (krc_free) in which a URL (scheme://...) has the
 * password of its user information (what follows the first ':' before the
 * last '@' ahead of the query, so a password holding an unencoded '@' or '/'
 * is masked whole) and the value of every `password=` query parameter
 * replaced by "****"; anything that is not scheme://... (a file path,
 * ":memory:") is copied unchanged. NULL when s is NULL or out of memory. */
char *krc_url_mask_password(const char *s);

#endif
