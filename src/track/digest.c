/* Pod templates and nodes -> facts (digest.h), with the allocation-free
 * JSON scanner: nothing but the facts is kept. */
#include "krc/track/digest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/mem.h"

#define VAL_TMP_MAX 2048 /* a scanned value is read up to this many bytes */

void krc_facts_init(struct krc_facts *f)
{
    memset(f, 0, sizeof(*f));
}

void krc_facts_cleanup(struct krc_facts *f)
{
    krc_free(f->buf);
    krc_free(f->off);
    memset(f, 0, sizeof(*f));
}

void krc_facts_reset(struct krc_facts *f)
{
    f->len = 0;
    f->n = 0;
    f->dropped = 0;
}

static int reserve(struct krc_facts *f, size_t more)
{
    if (f->len + more > f->cap) {
        size_t cap = f->cap ? f->cap : 1024;
        while (cap < f->len + more) {
            cap *= 2;
        }
        char *b = krc_realloc(f->buf, cap);
        if (b == NULL) {
            return KRC_ENOMEM;
        }
        f->buf = b;
        f->cap = cap;
    }
    if (f->n == f->cap_n) {
        size_t cap = f->cap_n ? f->cap_n * 2 : 32;
        uint32_t *o = krc_realloc(f->off, cap * sizeof(uint32_t));
        if (o == NULL) {
            return KRC_ENOMEM;
        }
        f->off = o;
        f->cap_n = cap;
    }
    return 0;
}

/* Append bytes, control bytes and the separators as spaces. */
static void put_clean(struct krc_facts *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        f->buf[f->len++] = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
    }
}

static uint32_t fnv(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* The cut of a long value: at a UTF-8 boundary. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max) {
        return len;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) {
        max--;
    }
    return max;
}

int krc_facts_add(struct krc_facts *f, char type, const char *container, size_t clen,
                  const char *sub, size_t slen, const char *value, size_t vlen)
{
    size_t vcut = utf8_cut(value, vlen, KRC_FACT_VALUE_MAX);
    char tail[24] = "";
    size_t tail_len = 0;

    if (f->n >= KRC_FACTS_MAX) {
        f->dropped++;
        return 0;
    }
    if (vcut < vlen) {
        /* the part kept, and the hash of the whole: "...#1a2b3c4d" */
        tail_len = (size_t)snprintf(tail, sizeof(tail), "...#%08x", (unsigned)fnv(value, vlen));
    }
    if (reserve(f, 1 + clen + 1 + slen + 1 + vcut + tail_len + 1) < 0) {
        return KRC_ENOMEM;
    }
    f->off[f->n++] = (uint32_t)f->len;
    f->buf[f->len++] = type;
    put_clean(f, container, clen);
    f->buf[f->len++] = KRC_FACT_SEP;
    put_clean(f, sub, slen);
    f->buf[f->len++] = KRC_FACT_SEP;
    for (size_t i = 0; i < vcut; i++) { /* the probe's part separators stay */
        /* value holds vlen written bytes (every caller copies them first); the analyzer loses
         * that through krc_digest_copy's allocation-failure path (0 bytes, nothing read) */
        /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign) */
        unsigned char c = (unsigned char)value[i];
        f->buf[f->len++] = (char)((c < 0x20 && c != KRC_FACT_PART_SEP) || c == 0x7f ? ' ' : c);
    }
    memcpy(f->buf + f->len, tail, tail_len);
    f->len += tail_len;
    f->buf[f->len++] = '\0';
    return 0;
}

size_t krc_fact_key_len(const char *fact, size_t len)
{
    const char *last = NULL;
    for (size_t i = 0; i < len; i++) {
        if (fact[i] == KRC_FACT_SEP) {
            last = fact + i;
        }
    }
    return last != NULL ? (size_t)(last - fact) : len;
}

static int cmp_key(const char *a, const char *b)
{
    size_t ka = krc_fact_key_len(a, strlen(a));
    size_t kb = krc_fact_key_len(b, strlen(b));
    int c = memcmp(a, b, ka < kb ? ka : kb);
    if (c != 0) {
        return c;
    }
    return ka < kb ? -1 : ka > kb;
}

/* A stable sort (insertion: a template has tens of facts), then the later
 * of equal keys kept. */
void krc_facts_finish(struct krc_facts *f)
{
    size_t w = 0;

    for (size_t i = 1; i < f->n; i++) {
        uint32_t o = f->off[i];
        size_t j = i;
        while (j > 0 && cmp_key(f->buf + f->off[j - 1], f->buf + o) > 0) {
            f->off[j] = f->off[j - 1];
            j--;
        }
        f->off[j] = o;
    }
    for (size_t i = 0; i < f->n; i++) {
        if (i + 1 < f->n && cmp_key(f->buf + f->off[i], f->buf + f->off[i + 1]) == 0) {
            continue; /* the next one has the same key and came later */
        }
        f->off[w++] = f->off[i];
    }
    f->n = w;
}

size_t krc_digest_copy(const struct krc_jscan_str *str, char *out, size_t outsz)
{
    size_t n;

    if (outsz == 0) {
        return 0;
    }
    if (!str->escaped) {
        n = utf8_cut(str->raw, str->raw_len, outsz - 1);
        memcpy(out, str->raw, n);
    } else if (str->raw_len < outsz) {
        n = krc_jscan_unescape(str, out);
    } else {
        char *tmp = krc_calloc(1, str->raw_len); /* rare (a long escaped string); zeroed,
                                                  * so the analyzer sees every byte written */
        if (tmp == NULL) {
            n = 0; /* not worth failing a digest for: the value reads as empty */
        } else {
            n = krc_jscan_unescape(str, tmp);
            n = utf8_cut(tmp, n, outsz - 1);
            memcpy(out, tmp, n);
            krc_free(tmp);
        }
    }
    out[n] = '\0';
    return n;
}

/* ---- small readers ------------------------------------------------------ */

/* Read a string value into out; a non-string value is skipped (""). */
static int read_str(struct krc_jscan *s, char *out, size_t outsz, size_t *ret_len,
                    struct krc_error *err)
{
    struct krc_jscan_str v;
    int t = krc_jscan_peek(s, err);

    if (t < 0) {
        return t;
    }
    *ret_len = 0;
    out[0] = '\0';
    if (t != KRC_JSON_STRING) {
        return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
    }
    if (krc_jscan_string(s, &v, err) < 0) {
        return KRC_EPARSE;
    }
    *ret_len = krc_digest_copy(&v, out, outsz);
    return 0;
}

/* A string or an integer (a port, an intOrString) as text. */
static int read_scalar(struct krc_jscan *s, char *out, size_t outsz, size_t *ret_len,
                       struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    size_t start;

    if (t < 0) {
        return t;
    }
    if (t == KRC_JSON_STRING) {
        return read_str(s, out, outsz, ret_len, err);
    }
    if (krc_jscan_skip(s, &start, err) < 0) {
        return KRC_EPARSE;
    }
    if (t == KRC_JSON_NUMBER || t == KRC_JSON_TRUE || t == KRC_JSON_FALSE) {
        size_t n = s->pos - start;
        if (n >= outsz) {
            n = outsz - 1;
        }
        memcpy(out, s->buf + start, n);
        out[n] = '\0';
        *ret_len = n;
    } else {
        out[0] = '\0';
        *ret_len = 0;
    }
    return 0;
}

static int read_int(struct krc_jscan *s, int64_t *ret, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_NUMBER) {
        return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
    }
    return krc_jscan_int64(s, ret, err) < 0 ? KRC_EPARSE : 0;
}

/* Begin an object, or skip a value of another type (returns 0: nothing to
 * read). 1: inside the object. */
static int begin_object(struct krc_jscan *s, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_OBJECT) {
        return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
    }
    return krc_jscan_object_begin(s, err) < 0 ? KRC_EPARSE : 1;
}

static int begin_array(struct krc_jscan *s, struct krc_error *err)
{
    int t = krc_jscan_peek(s, err);
    if (t < 0) {
        return t;
    }
    if (t != KRC_JSON_ARRAY) {
        return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
    }
    return krc_jscan_array_begin(s, err) < 0 ? KRC_EPARSE : 1;
}

static int skip(struct krc_jscan *s, struct krc_error *err)
{
    return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
}

/* An array of strings joined by spaces (command, args). */
static int read_str_array(struct krc_jscan *s, char *out, size_t outsz, size_t *ret_len,
                          struct krc_error *err)
{
    size_t len = 0;
    int rc = begin_array(s, err);

    out[0] = '\0';
    *ret_len = 0;
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        char item[VAL_TMP_MAX];
        size_t n;
        if (read_scalar(s, item, sizeof(item), &n, err) < 0) {
            return KRC_EPARSE;
        }
        if (len > 0 && len + 1 < outsz) {
            out[len++] = ' ';
        }
        if (n > outsz - 1 - len) {
            n = utf8_cut(item, n, outsz - 1 - len);
        }
        memcpy(out + len, item, n);
        len += n;
        out[len] = '\0';
    }
    *ret_len = len;
    return rc < 0 ? KRC_EPARSE : 0;
}

/* ---- containers --------------------------------------------------------- */

/* {"name": N, "key": K} of a key reference; writes "N/K" (or "N"). */
static int read_ref(struct krc_jscan *s, const char *name_key, char *out, size_t outsz,
                    struct krc_error *err)
{
    struct krc_jscan_str k;
    char name[256] = "";
    char key[256] = "";
    size_t n;
    int rc = begin_object(s, err);

    out[0] = '\0';
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        if (krc_jscan_str_eq(&k, name_key, strlen(name_key))) {
            rc = read_str(s, name, sizeof(name), &n, err);
        } else if (KRC_JSCAN_EQ(&k, "key") || KRC_JSCAN_EQ(&k, "fieldPath") ||
                   KRC_JSCAN_EQ(&k, "resource")) {
            rc = read_str(s, key, sizeof(key), &n, err);
        } else {
            rc = skip(s, err);
        }
        if (rc < 0) {
            return rc;
        }
    }
    if (rc < 0) {
        return KRC_EPARSE;
    }
    if (name[0] != '\0' && key[0] != '\0') {
        snprintf(out, outsz, "%s/%s", name, key);
    } else {
        snprintf(out, outsz, "%s", name[0] != '\0' ? name : key);
    }
    return 0;
}

/* env[].valueFrom -> "secret NAME/KEY", "configMap NAME/KEY", "field PATH",
 * "resource RES" (never a value). */
static int read_value_from(struct krc_jscan *s, char *out, size_t outsz, struct krc_error *err)
{
    struct krc_jscan_str k;
    char ref[520];
    int rc = begin_object(s, err);

    out[0] = '\0';
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        const char *what = NULL;
        if (KRC_JSCAN_EQ(&k, "secretKeyRef")) {
            what = "secret";
        } else if (KRC_JSCAN_EQ(&k, "configMapKeyRef")) {
            what = "configMap";
        } else if (KRC_JSCAN_EQ(&k, "fieldRef")) {
            what = "field";
        } else if (KRC_JSCAN_EQ(&k, "resourceFieldRef")) {
            what = "resource";
        }
        if (what == NULL) {
            rc = skip(s, err);
        } else {
            rc = read_ref(s, "name", ref, sizeof(ref), err);
            snprintf(out, outsz, "%s %s", what, ref);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int read_env(struct krc_jscan *s, struct krc_facts *cf, struct krc_error *err)
{
    int rc = begin_array(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        struct krc_jscan_str k;
        char name[256] = "";
        char from[600] = "";
        size_t n = 0;
        int r2 = begin_object(s, err);
        if (r2 < 0) {
            return r2;
        }
        while (r2 == 1 && (r2 = krc_jscan_object_next(s, &k, err)) == 1) {
            if (KRC_JSCAN_EQ(&k, "name")) {
                r2 = read_str(s, name, sizeof(name), &n, err);
            } else if (KRC_JSCAN_EQ(&k, "valueFrom")) {
                r2 = read_value_from(s, from, sizeof(from), err);
            } else {
                r2 = skip(s, err); /* "value": never read */
            }
            if (r2 < 0) {
                return r2;
            }
            r2 = 1;
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
        if (name[0] != '\0' &&
            krc_facts_add(cf, KRC_FACT_ENV, "", 0, name, strlen(name), from, strlen(from)) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int read_env_from(struct krc_jscan *s, struct krc_facts *cf, struct krc_error *err)
{
    int rc = begin_array(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        struct krc_jscan_str k;
        char ref[600] = "";
        char prefix[256] = "";
        size_t n;
        int r2 = begin_object(s, err);
        if (r2 < 0) {
            return r2;
        }
        while (r2 == 1 && (r2 = krc_jscan_object_next(s, &k, err)) == 1) {
            char name[520];
            if (KRC_JSCAN_EQ(&k, "configMapRef") || KRC_JSCAN_EQ(&k, "secretRef")) {
                int cm = KRC_JSCAN_EQ(&k, "configMapRef");
                r2 = read_ref(s, "name", name, sizeof(name), err);
                snprintf(ref, sizeof(ref), "%s %s", cm ? "configMap" : "secret", name);
            } else if (KRC_JSCAN_EQ(&k, "prefix")) {
                r2 = read_str(s, prefix, sizeof(prefix), &n, err);
            } else {
                r2 = skip(s, err);
            }
            if (r2 < 0) {
                return r2;
            }
            r2 = 1;
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
        if (ref[0] != '\0' && krc_facts_add(cf, KRC_FACT_ENV_FROM, "", 0, ref, strlen(ref), prefix,
                                            strlen(prefix)) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int read_quantities(struct krc_jscan *s, char type, struct krc_facts *cf,
                           struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        char key[256];
        char val[128];
        size_t kn = krc_digest_copy(&k, key, sizeof(key));
        size_t vn;
        if (read_scalar(s, val, sizeof(val), &vn, err) < 0) {
            return KRC_EPARSE;
        }
        if (krc_facts_add(cf, type, "", 0, key, kn, val, vn) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int read_resources(struct krc_jscan *s, struct krc_facts *cf, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (KRC_JSCAN_EQ(&k, "limits")) {
            r2 = read_quantities(s, KRC_FACT_LIMIT, cf, err);
        } else if (KRC_JSCAN_EQ(&k, "requests")) {
            r2 = read_quantities(s, KRC_FACT_REQUEST, cf, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

/* The handler of a probe: "http /healthz:8080", "tcp 5432", "grpc 9000",
 * "exec CMD". */
static int read_probe_handler(struct krc_jscan *s, const char *kind, char *out, size_t outsz,
                              struct krc_error *err)
{
    struct krc_jscan_str k;
    char path[512] = "";
    char port[64] = "";
    char cmd[600] = "";
    size_t n;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (KRC_JSCAN_EQ(&k, "path")) {
            r2 = read_str(s, path, sizeof(path), &n, err);
        } else if (KRC_JSCAN_EQ(&k, "port")) {
            r2 = read_scalar(s, port, sizeof(port), &n, err);
        } else if (KRC_JSCAN_EQ(&k, "command")) {
            r2 = read_str_array(s, cmd, sizeof(cmd), &n, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    if (rc < 0) {
        return KRC_EPARSE;
    }
    if (strcmp(kind, "exec") == 0) {
        snprintf(out, outsz, "exec %s", cmd);
    } else if (strcmp(kind, "http") == 0) {
        snprintf(out, outsz, "http %s:%s", path[0] ? path : "/", port);
    } else {
        snprintf(out, outsz, "%s %s", kind, port);
    }
    return 0;
}

/* A probe as parts: handler, delay, period, timeout, failures (Kubernetes
 * defaults applied, so that a change to a default shows as one). */
static int read_probe(struct krc_jscan *s, const char *which, struct krc_facts *cf,
                      struct krc_error *err)
{
    struct krc_jscan_str k;
    char handler[700] = "";
    char value[900];
    int64_t delay = 0, period = 10, timeout = 1, failures = 3;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (KRC_JSCAN_EQ(&k, "httpGet")) {
            r2 = read_probe_handler(s, "http", handler, sizeof(handler), err);
        } else if (KRC_JSCAN_EQ(&k, "tcpSocket")) {
            r2 = read_probe_handler(s, "tcp", handler, sizeof(handler), err);
        } else if (KRC_JSCAN_EQ(&k, "grpc")) {
            r2 = read_probe_handler(s, "grpc", handler, sizeof(handler), err);
        } else if (KRC_JSCAN_EQ(&k, "exec")) {
            r2 = read_probe_handler(s, "exec", handler, sizeof(handler), err);
        } else if (KRC_JSCAN_EQ(&k, "initialDelaySeconds")) {
            r2 = read_int(s, &delay, err);
        } else if (KRC_JSCAN_EQ(&k, "periodSeconds")) {
            r2 = read_int(s, &period, err);
        } else if (KRC_JSCAN_EQ(&k, "timeoutSeconds")) {
            r2 = read_int(s, &timeout, err);
        } else if (KRC_JSCAN_EQ(&k, "failureThreshold")) {
            r2 = read_int(s, &failures, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    if (rc < 0) {
        return KRC_EPARSE;
    }
    snprintf(value, sizeof(value),
             "%s\x1e"
             "delay %llds\x1e"
             "period %llds\x1e"
             "timeout %llds\x1e"
             "failures %lld",
             handler[0] ? handler : "no handler", (long long)delay, (long long)period,
             (long long)timeout, (long long)failures);
    return krc_facts_add(cf, KRC_FACT_PROBE, "", 0, which, strlen(which), value, strlen(value));
}

/* The image as two facts: the repository (shared by a workload's
 * revisions) and its tag and/or digest (":1.4.3", "@sha256:...", shared by
 * many workloads), so that a revision that changes only the tag costs no
 * new string of its repository. */
static int add_image(struct krc_facts *cf, const char *image, size_t n)
{
    size_t cut = krc_digest_image_split(image, n);
    int rc = krc_facts_add(cf, KRC_FACT_IMAGE, "", 0, "", 0, image, cut);

    if (rc == 0) {
        rc = krc_facts_add(cf, KRC_FACT_IMAGE, "", 0, KRC_FACT_IMAGE_TAG, 1, image + cut, n - cut);
    }
    return rc;
}

size_t krc_digest_image_split(const char *image, size_t n)
{
    size_t slash = 0;
    size_t cut = n;

    for (size_t i = 0; i < n; i++) {
        if (image[i] == '/') {
            slash = i + 1;
        } else if (image[i] == '@') {
            cut = i < cut ? i : cut;
            break;
        }
    }
    for (size_t i = slash; i < cut; i++) {
        if (image[i] == ':') { /* a tag: after the last '/' (a registry's port is before it) */
            return i;
        }
    }
    return cut;
}

/* One container: its facts with the container's name. */
static int read_container(struct krc_jscan *s, int init, struct krc_facts *cf, struct krc_facts *f,
                          struct krc_error *err)
{
    struct krc_jscan_str k;
    char name[300];
    char cname[320] = "";
    char tmp[VAL_TMP_MAX];
    size_t n;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    krc_facts_reset(cf);
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2 = 0;
        if (KRC_JSCAN_EQ(&k, "name")) {
            r2 = read_str(s, name, sizeof(name), &n, err);
            snprintf(cname, sizeof(cname), "%s%s", init ? "init:" : "", name);
        } else if (KRC_JSCAN_EQ(&k, "image")) {
            if ((r2 = read_str(s, tmp, sizeof(tmp), &n, err)) == 0) {
                r2 = add_image(cf, tmp, n);
            }
        } else if (KRC_JSCAN_EQ(&k, "command") || KRC_JSCAN_EQ(&k, "args")) {
            char type = KRC_JSCAN_EQ(&k, "command") ? KRC_FACT_COMMAND : KRC_FACT_ARGS;
            if ((r2 = read_str_array(s, tmp, sizeof(tmp), &n, err)) == 0) {
                r2 = krc_facts_add(cf, type, "", 0, "", 0, tmp, n);
            }
        } else if (KRC_JSCAN_EQ(&k, "env")) {
            r2 = read_env(s, cf, err);
        } else if (KRC_JSCAN_EQ(&k, "envFrom")) {
            r2 = read_env_from(s, cf, err);
        } else if (KRC_JSCAN_EQ(&k, "resources")) {
            r2 = read_resources(s, cf, err);
        } else if (KRC_JSCAN_EQ(&k, "livenessProbe")) {
            r2 = read_probe(s, "liveness", cf, err);
        } else if (KRC_JSCAN_EQ(&k, "readinessProbe")) {
            r2 = read_probe(s, "readiness", cf, err);
        } else if (KRC_JSCAN_EQ(&k, "startupProbe")) {
            r2 = read_probe(s, "startup", cf, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    if (rc < 0) {
        return KRC_EPARSE;
    }
    /* the container's facts, now that its name is known */
    for (size_t i = 0; i < cf->n; i++) {
        const char *fact = krc_facts_get(cf, i);
        const char *sub = fact + 2; /* type, "" container, separator */
        const char *val = strchr(sub, KRC_FACT_SEP);
        if (krc_facts_add(f, fact[0], cname, strlen(cname), sub, (size_t)(val - sub), val + 1,
                          strlen(val + 1)) < 0) {
            return KRC_ENOMEM;
        }
    }
    return 0;
}

static int read_containers(struct krc_jscan *s, int init, struct krc_facts *f,
                           struct krc_error *err)
{
    struct krc_facts cf;
    int rc = begin_array(s, err);

    if (rc <= 0) {
        return rc;
    }
    krc_facts_init(&cf);
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        int r2 = read_container(s, init, &cf, f, err);
        if (r2 < 0) {
            krc_facts_cleanup(&cf);
            return r2;
        }
    }
    krc_facts_cleanup(&cf);
    return rc < 0 ? KRC_EPARSE : 0;
}

/* ---- pod-level ----------------------------------------------------------- */

/* projected.sources[]: "configMap a, secret b". */
static int read_projected(struct krc_jscan *s, char *out, size_t outsz, struct krc_error *err)
{
    struct krc_jscan_str k;
    size_t len = 0;
    int rc = begin_object(s, err);

    out[0] = '\0';
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        if (!KRC_JSCAN_EQ(&k, "sources")) {
            if (skip(s, err) < 0) {
                return KRC_EPARSE;
            }
            continue;
        }
        int r2 = begin_array(s, err);
        if (r2 < 0) {
            return r2;
        }
        while (r2 == 1 && (r2 = krc_jscan_array_next(s, err)) == 1) {
            struct krc_jscan_str k2;
            int r3 = begin_object(s, err);
            if (r3 < 0) {
                return r3;
            }
            while (r3 == 1 && (r3 = krc_jscan_object_next(s, &k2, err)) == 1) {
                char name[520];
                if (KRC_JSCAN_EQ(&k2, "configMap") || KRC_JSCAN_EQ(&k2, "secret")) {
                    int cm = KRC_JSCAN_EQ(&k2, "configMap");
                    if (read_ref(s, "name", name, sizeof(name), err) < 0) {
                        return KRC_EPARSE;
                    }
                    int w = snprintf(out + len, outsz - len, "%s%s %s", len ? ", " : "",
                                     cm ? "configMap" : "secret", name);
                    if (w > 0 && (size_t)w < outsz - len) {
                        len += (size_t)w;
                    }
                } else if (skip(s, err) < 0) {
                    return KRC_EPARSE;
                }
                r3 = 1;
            }
            if (r3 < 0) {
                return KRC_EPARSE;
            }
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int read_volumes(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    int rc = begin_array(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        struct krc_jscan_str k;
        char name[256] = "";
        char value[1024] = "";
        size_t n;
        int r2 = begin_object(s, err);
        if (r2 < 0) {
            return r2;
        }
        while (r2 == 1 && (r2 = krc_jscan_object_next(s, &k, err)) == 1) {
            char ref[520];
            if (KRC_JSCAN_EQ(&k, "name")) {
                r2 = read_str(s, name, sizeof(name), &n, err);
            } else if (KRC_JSCAN_EQ(&k, "configMap")) {
                r2 = read_ref(s, "name", ref, sizeof(ref), err);
                snprintf(value, sizeof(value), "configMap %s", ref);
            } else if (KRC_JSCAN_EQ(&k, "secret")) {
                r2 = read_ref(s, "secretName", ref, sizeof(ref), err);
                snprintf(value, sizeof(value), "secret %s", ref);
            } else if (KRC_JSCAN_EQ(&k, "projected")) {
                r2 = read_projected(s, value, sizeof(value), err);
            } else {
                r2 = skip(s, err);
            }
            if (r2 < 0) {
                return r2;
            }
            r2 = 1;
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
        if (name[0] != '\0' && value[0] != '\0' &&
            krc_facts_add(f, KRC_FACT_VOLUME, "", 0, name, strlen(name), value, strlen(value)) <
                0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

static int read_node_selector(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        char key[320] = "";
        char val[320] = "";
        size_t kn = krc_digest_copy(&k, key, sizeof(key));
        size_t vn = 0;
        if (read_str(s, val, sizeof(val), &vn, err) < 0) {
            return KRC_EPARSE;
        }
        if (krc_facts_add(f, KRC_FACT_NODE_SELECTOR, "", 0, key, kn, val, vn) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

/* tolerations[] and taints[]: key, operator, value, effect,
 * tolerationSeconds -> "key=value:effect" ("key:effect" for Exists, "*"
 * for an empty key). */
static int read_toleration(struct krc_jscan *s, char *out, size_t outsz, char *value,
                           size_t valuesz, struct krc_error *err)
{
    struct krc_jscan_str k;
    char key[320] = "";
    char op[32] = "";
    char effect[64] = "";
    int64_t secs = -1;
    size_t n;
    int rc = begin_object(s, err);

    out[0] = '\0';
    value[0] = '\0';
    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        if (KRC_JSCAN_EQ(&k, "key")) {
            r2 = read_str(s, key, sizeof(key), &n, err);
        } else if (KRC_JSCAN_EQ(&k, "operator")) {
            r2 = read_str(s, op, sizeof(op), &n, err);
        } else if (KRC_JSCAN_EQ(&k, "value")) {
            r2 = read_str(s, value, valuesz, &n, err);
        } else if (KRC_JSCAN_EQ(&k, "effect")) {
            r2 = read_str(s, effect, sizeof(effect), &n, err);
        } else if (KRC_JSCAN_EQ(&k, "tolerationSeconds")) {
            r2 = read_int(s, &secs, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    if (rc < 0) {
        return KRC_EPARSE;
    }
    if (strcmp(op, "Exists") == 0) {
        value[0] = '\0';
    }
    n = (size_t)snprintf(out, outsz, "%s%s%s%s%s", key[0] ? key : "*", value[0] ? "=" : "", value,
                         effect[0] ? ":" : "", effect);
    if (secs >= 0 && n < outsz) {
        snprintf(out + n, outsz - n, " for %llds", (long long)secs);
    }
    return 1;
}

static int read_tolerations(struct krc_jscan *s, char type, struct krc_facts *f,
                            struct krc_error *err)
{
    int rc = begin_array(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        char text[800];
        char value[320];
        int r2 = read_toleration(s, text, sizeof(text), value, sizeof(value), err);
        if (r2 < 0) {
            return r2;
        }
        /* a toleration is its own key; a taint's key is key:effect, its
         * value the taint's value */
        if (r2 == 1 && type == KRC_FACT_TOLERATION &&
            krc_facts_add(f, type, "", 0, text, strlen(text), "", 0) < 0) {
            return KRC_ENOMEM;
        }
        if (r2 == 1 && type == KRC_FACT_TAINT &&
            krc_facts_add(f, type, "", 0, text, strlen(text), "", 0) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

int krc_digest_pod_spec(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        int r2;
        size_t n;
        if (KRC_JSCAN_EQ(&k, "containers")) {
            r2 = read_containers(s, 0, f, err);
        } else if (KRC_JSCAN_EQ(&k, "initContainers")) {
            r2 = read_containers(s, 1, f, err);
        } else if (KRC_JSCAN_EQ(&k, "volumes")) {
            r2 = read_volumes(s, f, err);
        } else if (KRC_JSCAN_EQ(&k, "serviceAccountName")) {
            char sa[320];
            if ((r2 = read_str(s, sa, sizeof(sa), &n, err)) == 0 && n > 0) {
                r2 = krc_facts_add(f, KRC_FACT_SERVICE_ACCOUNT, "", 0, "", 0, sa, n);
            }
        } else if (KRC_JSCAN_EQ(&k, "nodeSelector")) {
            r2 = read_node_selector(s, f, err);
        } else if (KRC_JSCAN_EQ(&k, "tolerations")) {
            r2 = read_tolerations(s, KRC_FACT_TOLERATION, f, err);
        } else {
            r2 = skip(s, err);
        }
        if (r2 < 0) {
            return r2;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

/* ---- nodes ---------------------------------------------------------------- */

int krc_digest_node_taints(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    return read_tolerations(s, KRC_FACT_TAINT, f, err);
}

int krc_digest_node_info(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        char type = 0;
        char val[320];
        size_t n;
        if (KRC_JSCAN_EQ(&k, "kubeletVersion")) {
            type = KRC_FACT_KUBELET;
        } else if (KRC_JSCAN_EQ(&k, "containerRuntimeVersion")) {
            type = KRC_FACT_RUNTIME;
        } else if (KRC_JSCAN_EQ(&k, "kernelVersion")) {
            type = KRC_FACT_KERNEL;
        } else if (KRC_JSCAN_EQ(&k, "osImage")) {
            type = KRC_FACT_OS;
        }
        if (type == 0) {
            if (skip(s, err) < 0) {
                return KRC_EPARSE;
            }
            continue;
        }
        if (read_str(s, val, sizeof(val), &n, err) < 0) {
            return KRC_EPARSE;
        }
        if (n > 0 && krc_facts_add(f, type, "", 0, "", 0, val, n) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

int krc_digest_node_conditions(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    int rc = begin_array(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_array_next(s, err)) == 1) {
        struct krc_jscan_str k;
        char type[128] = "";
        char status[32] = "";
        size_t n;
        int r2 = begin_object(s, err);
        if (r2 < 0) {
            return r2;
        }
        while (r2 == 1 && (r2 = krc_jscan_object_next(s, &k, err)) == 1) {
            if (KRC_JSCAN_EQ(&k, "type")) {
                r2 = read_str(s, type, sizeof(type), &n, err);
            } else if (KRC_JSCAN_EQ(&k, "status")) {
                r2 = read_str(s, status, sizeof(status), &n, err);
            } else {
                r2 = skip(s, err); /* heartbeat times change all the time */
            }
            if (r2 < 0) {
                return r2;
            }
            r2 = 1;
        }
        if (r2 < 0) {
            return KRC_EPARSE;
        }
        if (type[0] != '\0' && krc_facts_add(f, KRC_FACT_CONDITION, "", 0, type, strlen(type),
                                             status, strlen(status)) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}

/* Labels an accelerator's device plugin, operator or cloud sets to name its
 * driver: a vendor prefix and "driver" in the key (nvidia.com/cuda.driver.major,
 * nvidia.com/gpu.driver..., amd.com/gpu.driver-version,
 * cloud.google.com/gke-gpu-driver-version, ...). */
int krc_digest_is_driver_label(const char *key, size_t len)
{
    static const char *const prefixes[] = {
        "nvidia.com/",
        "amd.com/",
        "beta.amd.com/",
        "gpu.intel.com/",
        "habana.ai/",
        "aws.amazon.com/neuron",
        "cloud.google.com/gke-gpu",
    };
    int vendor = 0;

    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t pl = strlen(prefixes[i]);
        if (len >= pl && memcmp(key, prefixes[i], pl) == 0) {
            vendor = 1;
        }
    }
    if (!vendor) {
        return 0;
    }
    for (size_t i = 0; i + 6 <= len; i++) {
        if (memcmp(key + i, "driver", 6) == 0) {
            return 1;
        }
    }
    return 0;
}

int krc_digest_node_labels(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    struct krc_jscan_str k;
    int rc = begin_object(s, err);

    if (rc <= 0) {
        return rc;
    }
    while ((rc = krc_jscan_object_next(s, &k, err)) == 1) {
        char key[320];
        char val[320];
        size_t kn = krc_digest_copy(&k, key, sizeof(key));
        size_t vn;
        if (!krc_digest_is_driver_label(key, kn)) {
            if (skip(s, err) < 0) {
                return KRC_EPARSE;
            }
            continue;
        }
        if (read_str(s, val, sizeof(val), &vn, err) < 0) {
            return KRC_EPARSE;
        }
        if (krc_facts_add(f, KRC_FACT_LABEL, "", 0, key, kn, val, vn) < 0) {
            return KRC_ENOMEM;
        }
    }
    return rc < 0 ? KRC_EPARSE : 0;
}
