/* Base64 decoding (util/base64.c, the kubeconfig's *-data fields): any
 * text decodes or is refused with a reason; the decoded bytes fit the
 * promise (NUL after them); and for the first byte odd, the rest is taken as
 * binary data, encoded (with line breaks and padding dropped or not) and
 * must decode back to itself. */
#include <string.h>

#include "fuzz.h"
#include "krc/util/base64.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t encode(const uint8_t *in, size_t n, char *out, int pad, size_t wrap)
{
    size_t o = 0;
    size_t col = 0;

    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        size_t k = n - i < 3 ? n - i : 3;
        char q[4];
        if (k > 1) {
            v |= (unsigned)in[i + 1] << 8;
        }
        if (k > 2) {
            v |= in[i + 2];
        }
        q[0] = alphabet[(v >> 18) & 63];
        q[1] = alphabet[(v >> 12) & 63];
        q[2] = k > 1 ? alphabet[(v >> 6) & 63] : '=';
        q[3] = k > 2 ? alphabet[v & 63] : '=';
        for (size_t j = 0; j < 4; j++) {
            if (q[j] == '=' && !pad) {
                break;
            }
            out[o++] = q[j];
            if (wrap > 0 && ++col == wrap) {
                out[o++] = '\n';
                col = 0;
            }
        }
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *out = NULL;
    size_t out_len = 0;
    char why[128];
    int rc;

    if (size < 1) {
        return 0;
    }
    if (data[0] & 1) {
        size_t n = size - 1;
        /* calloc: with n == 0 nothing is encoded, and gcc -O3 warns that the
         * empty text may be read uninitialised. */
        char *text = calloc(1, n / 3 * 4 + 4 + (n / 3 * 4 + 4) + 1);
        size_t tlen;
        if (text == NULL) {
            return 0;
        }
        tlen = encode(data + 1, n, text, data[0] & 2, (data[0] >> 2) & 63);
        rc = krc_base64_decode(text, tlen, &out, &out_len, why, sizeof(why));
        if (n == 0) {
            FUZZ_CHECK(rc == KRC_EINVAL, "nothing decoded to something");
        } else {
            FUZZ_CHECK(rc == 0, "encoded data refused: %s", why);
            FUZZ_CHECK(out_len == n && memcmp(out, data + 1, n) == 0, "round trip differs");
        }
        free(text);
    } else {
        char *text = malloc(size - 1 > 0 ? size - 1 : 1);
        if (text == NULL) {
            return 0;
        }
        memcpy(text, data + 1, size - 1);
        rc = krc_base64_decode(text, size - 1, &out, &out_len, why, sizeof(why));
        if (rc == 0) {
            FUZZ_CHECK(out_len > 0 && out_len <= (size - 1) / 4 * 3 + 2, "%zu bytes from %zu",
                       out_len, size - 1);
            FUZZ_CHECK(out[out_len] == '\0', "no NUL after the data");
        } else {
            FUZZ_CHECK(rc == KRC_EINVAL && why[0] != '\0', "refused without a reason");
        }
        free(text);
    }
    krc_free(out);
    return 0;
}
