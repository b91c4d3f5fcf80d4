/* krc/util/url.h: a URL without its passwords. */
#include "krc/util/url.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"

#define MASK "****"

/* The start of what follows "scheme://", NULL when s does not begin with a
 * URL scheme (RFC 3986: a letter, then letters, digits, '+', '-', '.'). */
static const char *after_scheme(const char *s)
{
    const char *p = s;

    if (!isalpha((unsigned char)*p)) {
        return NULL;
    }
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.') {
        p++;
    }
    return strncmp(p, "://", 3) == 0 ? p + 3 : NULL;
}

/* Append [p, end) to b with the value of every password=... parameter of a
 * query (p at its first key) masked. */
static int mask_query(struct krc_buf *b, const char *p, const char *end)
{
    int rc = 0;

    while (rc == 0 && p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp != NULL ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(stop - p));
        if (eq != NULL && (size_t)(eq - p) == strlen("password") &&
            strncmp(p, "password", strlen("password")) == 0) {
            rc = krc_buf_append(b, p, (size_t)(eq - p) + 1);
            if (rc == 0) {
                rc = krc_buf_append_str(b, MASK);
            }
        } else {
            rc = krc_buf_append(b, p, (size_t)(stop - p));
        }
        if (rc == 0 && amp != NULL) {
            rc = krc_buf_append_char(b, '&');
        }
        p = amp != NULL ? amp + 1 : end;
    }
    return rc;
}

char *krc_url_mask_password(const char *s)
{
    struct krc_buf b;
    const char *auth;
    const char *query;
    const char *frag;
    const char *at = NULL;
    const char *colon;
    char *out = NULL;
    int rc = 0;

    if (s == NULL) {
        return NULL;
    }
    if ((auth = after_scheme(s)) == NULL) {
        return krc_strdup(s);
    }
    frag = strchr(auth, '#');
    if (frag == NULL) {
        frag = auth + strlen(auth);
    }
    query = memchr(auth, '?', (size_t)(frag - auth));
    if (query == NULL) {
        query = frag;
    }
    for (const char *p = auth; p < query; p++) {
        if (*p == '@') {
            at = p;
        }
    }
    krc_buf_init(&b, strlen(s) + 64);
    colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon != NULL) {
        rc = krc_buf_append(&b, s, (size_t)(colon + 1 - s));
        if (rc == 0) {
            rc = krc_buf_append_str(&b, MASK);
        }
        if (rc == 0) {
            rc = krc_buf_append(&b, at, (size_t)(query - at));
        }
    } else {
        rc = krc_buf_append(&b, s, (size_t)(query - s));
    }
    if (rc == 0 && query < frag) {
        rc = krc_buf_append_char(&b, '?');
        if (rc == 0) {
            rc = mask_query(&b, query + 1, frag);
        }
    }
    if (rc == 0) {
        rc = krc_buf_append_str(&b, frag);
    }
    if (rc == 0) {
        out = krc_buf_take(&b);
    }
    krc_buf_cleanup(&b);
    return out;
}

enum krc_url_problem krc_url_split(const char *url, struct krc_url_parts *ret)
{
    const char *p = url;
    const char *sep;
    const char *auth;
    size_t auth_len;
    const char *at = NULL;
    const char *host;
    const char *host_end;

    memset(ret, 0, sizeof(*ret));
    for (const char *c = url; *c != '\0'; c++) {
        if ((unsigned char)*c <= 0x20 || *c == 0x7f) {
            return KRC_URL_BAD_CHAR;
        }
    }
    sep = strstr(url, "://");
    if (sep == NULL || sep == url || memchr(url, '/', (size_t)(sep - url)) != NULL ||
        memchr(url, '.', (size_t)(sep - url)) != NULL) {
        /* "hooks.slack.com/services/...", "//host/x", "host:443/x" */
        return KRC_URL_NO_SCHEME;
    }
    ret->scheme = url;
    ret->scheme_len = (size_t)(sep - url);
    if (!isalpha((unsigned char)*p)) {
        return KRC_URL_BAD_SCHEME;
    }
    for (; p < sep; p++) {
        if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-') {
            return KRC_URL_BAD_SCHEME;
        }
    }
    auth = sep + 3;
    auth_len = strcspn(auth, "/?#");
    for (size_t i = 0; i < auth_len; i++) {
        if (auth[i] == '@') {
            at = auth + i; /* the last '@' ends the user information */
        }
    }
    host = at != NULL ? at + 1 : auth;
    host_end = auth + auth_len;
    if (*host == '[') {
        const char *close = memchr(host, ']', (size_t)(host_end - host));
        if (close == NULL) {
            return KRC_URL_NO_HOST;
        }
        ret->host = host;
        ret->host_len = (size_t)(close - host) + 1;
        p = close + 1;
    } else {
        const char *colon = memchr(host, ':', (size_t)(host_end - host));
        ret->host = host;
        ret->host_len = (size_t)((colon != NULL ? colon : host_end) - host);
        p = colon != NULL ? colon : host_end;
    }
    if (ret->host_len == 0 || (ret->host_len == 2 && host[0] == '[')) {
        return KRC_URL_NO_HOST;
    }
    if (p < host_end) {
        long port = 0;
        if (*p != ':' || p + 1 == host_end) {
            return KRC_URL_BAD_PORT;
        }
        for (p++; p < host_end; p++) {
            if (!isdigit((unsigned char)*p) || (port = port * 10 + (*p - '0')) > 65535) {
                return KRC_URL_BAD_PORT;
            }
        }
        if (port == 0) {
            return KRC_URL_BAD_PORT;
        }
        ret->port = port;
    }
    ret->path = host_end;
    ret->path_len = strcspn(host_end, "?#");
    if (host_end[ret->path_len] == '?') {
        ret->query = host_end + ret->path_len + 1;
        ret->query_len = strcspn(ret->query, "#");
    }
    return KRC_URL_OK;
}

int krc_url_host_is_loopback(const char *host, size_t len)
{
    if (len == 9 && strncasecmp(host, "localhost", 9) == 0) {
        return 1;
    }
    if (len == 5 && strncmp(host, "[::1]", 5) == 0) {
        return 1;
    }
    if (len >= 7 && strncmp(host, "127.", 4) == 0) {
        int dots = 0;
        for (size_t i = 0; i < len; i++) {
            if (host[i] == '.') {
                dots++;
            } else if (!isdigit((unsigned char)host[i])) {
                return 0;
            }
        }
        return dots == 3;
    }
    return 0;
}

int krc_url_host_is(const struct krc_url_parts *u, const char *name)
{
    size_t n = strlen(name);

    if (name[0] == '.') {
        return u->host_len > n && strncasecmp(u->host + u->host_len - n, name, n) == 0;
    }
    return u->host_len == n && strncasecmp(u->host, name, n) == 0;
}

int krc_url_query_has(const struct krc_url_parts *u, const char *key)
{
    size_t kl = strlen(key);
    const char *end = u->query != NULL ? u->query + u->query_len : NULL;

    for (const char *p = u->query; p != NULL && p < end;) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp != NULL ? amp : end;
        if ((size_t)(stop - p) > kl + 1 && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            return 1;
        }
        p = amp != NULL ? amp + 1 : NULL;
    }
    return 0;
}
