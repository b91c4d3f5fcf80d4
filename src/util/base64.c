/* Base64 decoding (see base64.h). */
#include "krc/util/base64.h"

#include <stdio.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

int krc_base64_decode(const char *in, size_t inlen, unsigned char **ret, size_t *ret_len, char *why,
                      size_t whysz)
{
    unsigned char *out;
    size_t o = 0;
    unsigned long acc = 0;
    int nacc = 0;    /* sextets in acc */
    size_t npad = 0; /* '=' seen */
    size_t nsig = 0; /* alphabet characters seen */

    out = krc_malloc(inlen / 4 * 3 + 3);
    if (out == NULL) {
        return KRC_ENOMEM;
    }
    for (size_t i = 0; i < inlen; i++) {
        unsigned char c = (unsigned char)in[i];
        int v;

        if (is_space(c)) {
            continue;
        }
        if (c == '=') {
            npad++;
            if (npad > 2) {
                snprintf(why, whysz, "too much padding at offset %zu", i);
                goto bad;
            }
            continue;
        }
        v = b64_value(c);
        if (v < 0) {
            if (c >= 0x21 && c < 0x7f) {
                snprintf(why, whysz, "invalid character '%c' at offset %zu", c, i);
            } else {
                snprintf(why, whysz, "invalid byte 0x%02x at offset %zu", c, i);
            }
            goto bad;
        }
        if (npad > 0) {
            snprintf(why, whysz, "data after padding at offset %zu", i);
            goto bad;
        }
        nsig++;
        acc = (acc << 6) | (unsigned long)v;
        nacc++;
        if (nacc == 4) {
            out[o++] = (unsigned char)(acc >> 16);
            out[o++] = (unsigned char)(acc >> 8);
            out[o++] = (unsigned char)acc;
            acc = 0;
            nacc = 0;
        }
    }
    if (nacc == 1) {
        snprintf(why, whysz, "truncated input (%zu characters is not a valid length)", nsig);
        goto bad;
    }
    if (npad > 0 && (nsig + npad) % 4 != 0) {
        snprintf(why, whysz, "wrong amount of padding");
        goto bad;
    }
    if (nacc == 2) {
        out[o++] = (unsigned char)(acc >> 4);
    } else if (nacc == 3) {
        out[o++] = (unsigned char)(acc >> 10);
        out[o++] = (unsigned char)(acc >> 2);
    }
    if (o == 0) {
        snprintf(why, whysz, "decodes to nothing");
        goto bad;
    }
    out[o] = '\0'; /* room: o <= inlen/4*3 + 2 */
    *ret = out;
    *ret_len = o;
    return 0;
bad:
    krc_free(out);
    return KRC_EINVAL;
}
