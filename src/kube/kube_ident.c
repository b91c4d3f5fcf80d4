/* Naming a skipped object (include/krc/kube/kube_pod.h, krc_kube_ident_scan):
 * the name, namespace, uid, resourceVersion and watch event type of an
 * object the watch skipped, read from its bounded beginning so that the
 * warning about it can say which object it was. */
#include <string.h>

#include "krc/kube/kube_pod.h"
#include "krc/util/jscan.h"

#define EQ(k, lit) KRC_JSCAN_EQ(k, lit)

/* A scanned string into out (size cap) when it is printable ASCII without
 * spaces and fits; otherwise out stays "". */
static void ident_copy(const struct krc_jscan_str *v, char *out, size_t cap)
{
    char tmp[256];
    size_t n;

    out[0] = '\0';
    if (v->raw_len >= sizeof(tmp)) {
        return; /* too long for any of the fields (decoding never lengthens) */
    }
    n = krc_jscan_unescape(v, tmp);
    if (n == 0 || n >= cap) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)tmp[i] <= 0x20 || (unsigned char)tmp[i] >= 0x7f) {
            return;
        }
    }
    memcpy(out, tmp, n);
    out[n] = '\0';
}

/* A string value into out, any other value skipped. */
static int ident_string(struct krc_jscan *s, char *out, size_t cap, struct krc_error *err)
{
    struct krc_jscan_str v;
    int rc;

    if (krc_jscan_peek(s, err) != KRC_JSON_STRING) {
        return krc_jscan_skip(s, NULL, err);
    }
    rc = krc_jscan_string(s, &v, err);
    if (rc == 0) {
        ident_copy(&v, out, cap);
    }
    return rc;
}

static int ident_metadata(struct krc_jscan *s, struct krc_kube_ident *id, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc;

    if (krc_jscan_peek(s, err) != KRC_JSON_OBJECT) {
        return krc_jscan_skip(s, NULL, err);
    }
    rc = krc_jscan_object_begin(s, err);
    while (rc >= 0 && (rc = krc_jscan_object_next(s, &k, err)) > 0) {
        if (EQ(&k, "name")) {
            rc = ident_string(s, id->name, sizeof(id->name), err);
        } else if (EQ(&k, "namespace")) {
            rc = ident_string(s, id->namespace, sizeof(id->namespace), err);
        } else if (EQ(&k, "uid")) {
            rc = ident_string(s, id->uid, sizeof(id->uid), err);
        } else if (EQ(&k, "resourceVersion")) {
            rc = ident_string(s, id->resource_version, sizeof(id->resource_version), err);
        } else {
            rc = krc_jscan_skip(s, NULL, err);
        }
    }
    return rc;
}

/* The members of an object: "metadata" is read, "object" (a watch event's)
 * is entered when `event`, "type" is read when `event`. */
static int ident_object(struct krc_jscan *s, struct krc_kube_ident *id, int event,
                        struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc;

    if (krc_jscan_peek(s, err) != KRC_JSON_OBJECT) {
        return krc_jscan_skip(s, NULL, err);
    }
    rc = krc_jscan_object_begin(s, err);
    while (rc >= 0 && (rc = krc_jscan_object_next(s, &k, err)) > 0) {
        if (EQ(&k, "metadata")) {
            rc = ident_metadata(s, id, err);
        } else if (event && EQ(&k, "object")) {
            rc = ident_object(s, id, 0, err);
        } else if (event && EQ(&k, "type")) {
            rc = ident_string(s, id->type, sizeof(id->type), err);
        } else {
            rc = krc_jscan_skip(s, NULL, err);
        }
    }
    return rc;
}

void krc_kube_ident_scan(const char *text, size_t len, struct krc_kube_ident *ret)
{
    struct krc_jscan s;
    struct krc_error err;

    memset(ret, 0, sizeof(*ret));
    if (text == NULL) {
        return;
    }
    krc_jscan_init(&s, text, len < KRC_KUBE_IDENT_SCAN ? len : KRC_KUBE_IDENT_SCAN, "object");
    krc_error_clear(&err);
    /* a cut text ends in a parse error: what was read before it stays */
    (void)ident_object(&s, ret, 1, &err);
}
