/* krc/util/url.h: a URL without its passwords. */
#include "krc/util/url.h"

#include <ctype.h>
#include <string.h>

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
