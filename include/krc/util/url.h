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

#include <stddef.h>

/* What krc_url_split found wrong with a URL (0: nothing). */
enum krc_url_problem {
    KRC_URL_OK = 0,
    KRC_URL_NO_SCHEME,  /* no "scheme://" at the start ("hooks.slack.com/services/...") */
    KRC_URL_BAD_SCHEME, /* "scheme://" with a scheme that is not RFC 3986's shape */
    KRC_URL_NO_HOST,    /* "https:///path", "https://:443/" */
    KRC_URL_BAD_PORT,   /* a port that is not 1..65535 */
    KRC_URL_BAD_CHAR,   /* a space or a control character anywhere */
};

/* The parts of an absolute URL, pointing into it (not terminated): the
 * scheme (lower or upper case, as written), the host (an IPv6 literal with
 * its brackets), the path (from its '/', may be empty) and the query (after
 * '?', up to '#'; NULL when there is none). Pure; no look-up, no decoding. */
struct krc_url_parts {
    const char *scheme;
    size_t scheme_len;
    const char *host;
    size_t host_len;
    long port; /* 0: none given */
    const char *path;
    size_t path_len;
    const char *query;
    size_t query_len;
};

/* Split `url` into *ret; returns KRC_URL_OK or the first problem (*ret then
 * holds what was found before it, the scheme at least when it is
 * KRC_URL_BAD_SCHEME or later). */
enum krc_url_problem krc_url_split(const char *url, struct krc_url_parts *ret);

/* 1 when host[0..len) is a loopback host: localhost, 127.0.0.0/8 (dotted
 * digits) or [::1]. */
int krc_url_host_is_loopback(const char *host, size_t len);

/* 1 when u's host is `name` (case ignored); with a leading '.', when it
 * ends with it ("*.logic.azure.com"). */
int krc_url_host_is(const struct krc_url_parts *u, const char *name);
/* 1 when u's query has a parameter `key` with a non-empty value. */
int krc_url_query_has(const struct krc_url_parts *u, const char *key);

#endif
