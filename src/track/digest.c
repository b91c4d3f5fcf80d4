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

static int skip(struct krc_jscan *s, struct krc_error *err)
{
    return krc_jscan_skip(s, NULL, err) < 0 ? KRC_EPARSE : 0;
}

/* Text joined from array items (read_str_array). */
struct joined {
    char *out;
    size_t outsz, len;
};

static int join_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct joined *j = ctx;
    char item[VAL_TMP_MAX];
    size_t n;

    if (read_scalar(s, item, sizeof(item), &n, err) < 0) {
        return KRC_EPARSE;
    }
    if (j->len > 0 && j->len + 1 < j->outsz) {
        j->out[j->len++] = ' ';
    }
    if (n > j->outsz - 1 - j->len) {
        n = utf8_cut(item, n, j->outsz - 1 - j->len);
    }
    memcpy(j->out + j->len, item, n);
    j->len += n;
    j->out[j->len] = '\0';
    return 0;
}

/* An array of strings joined by spaces (command, args). */
static int read_str_array(struct krc_jscan *s, char *out, size_t outsz, size_t *ret_len,
                          struct krc_error *err)
{
    struct joined j = {out, outsz, 0};
    int rc;

    out[0] = '\0';
    *ret_len = 0;
    rc = krc_jscan_each_item(s, join_item, &j, err);
    if (rc < 0) {
        return rc;
    }
    *ret_len = j.len;
    return 0;
}

/* ---- containers --------------------------------------------------------- */

struct ref {
    const char *name_key;
    char name[256];
    char key[256];
};

static int ref_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                   struct krc_error *err)
{
    struct ref *r = ctx;
    size_t n;

    if (krc_jscan_str_eq(k, r->name_key, strlen(r->name_key))) {
        return read_str(s, r->name, sizeof(r->name), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "key") || KRC_JSCAN_EQ(k, "fieldPath") || KRC_JSCAN_EQ(k, "resource")) {
        return read_str(s, r->key, sizeof(r->key), &n, err);
    }
    return skip(s, err);
}

/* {"name": N, "key": K} of a key reference; writes "N/K" (or "N"). */
static int read_ref(struct krc_jscan *s, const char *name_key, char *out, size_t outsz,
                    struct krc_error *err)
{
    struct ref r = {name_key, "", ""};
    int rc;

    out[0] = '\0';
    rc = krc_jscan_each_key(s, ref_key, &r, err);
    if (rc <= 0) {
        return rc;
    }
    if (r.name[0] != '\0' && r.key[0] != '\0') {
        snprintf(out, outsz, "%s/%s", r.name, r.key);
    } else {
        snprintf(out, outsz, "%s", r.name[0] != '\0' ? r.name : r.key);
    }
    return 0;
}

/* A text written by a walk: out, outsz. */
struct text {
    char *out;
    size_t outsz;
};

static int value_from_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                          struct krc_error *err)
{
    struct text *t = ctx;
    const char *what = NULL;
    char ref[520];
    int rc;

    if (KRC_JSCAN_EQ(k, "secretKeyRef")) {
        what = "secret";
    } else if (KRC_JSCAN_EQ(k, "configMapKeyRef")) {
        what = "configMap";
    } else if (KRC_JSCAN_EQ(k, "fieldRef")) {
        what = "field";
    } else if (KRC_JSCAN_EQ(k, "resourceFieldRef")) {
        what = "resource";
    }
    if (what == NULL) {
        return skip(s, err);
    }
    rc = read_ref(s, "name", ref, sizeof(ref), err);
    snprintf(t->out, t->outsz, "%s %s", what, ref);
    return rc;
}

/* env[].valueFrom -> "secret NAME/KEY", "configMap NAME/KEY", "field PATH",
 * "resource RES" (never a value). */
static int read_value_from(struct krc_jscan *s, char *out, size_t outsz, struct krc_error *err)
{
    struct text t = {out, outsz};

    out[0] = '\0';
    return krc_jscan_each_key(s, value_from_key, &t, err);
}

/* One env[] item. */
struct env {
    char name[256];
    char from[600];
};

static int env_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                   struct krc_error *err)
{
    struct env *e = ctx;
    size_t n = 0;

    if (KRC_JSCAN_EQ(k, "name")) {
        return read_str(s, e->name, sizeof(e->name), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "valueFrom")) {
        return read_value_from(s, e->from, sizeof(e->from), err);
    }
    return skip(s, err); /* "value": never read */
}

static int env_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct krc_facts *cf = ctx;
    struct env e = {"", ""};
    int rc = krc_jscan_each_key(s, env_key, &e, err);

    if (rc < 0) {
        return rc;
    }
    if (e.name[0] != '\0' && krc_facts_add(cf, KRC_FACT_ENV, "", 0, e.name, strlen(e.name), e.from,
                                           strlen(e.from)) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

/* One envFrom[] item. */
struct env_from {
    char ref[600];
    char prefix[256];
};

static int env_from_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                        struct krc_error *err)
{
    struct env_from *e = ctx;
    char name[520];
    size_t n;
    int rc;

    if (KRC_JSCAN_EQ(k, "configMapRef") || KRC_JSCAN_EQ(k, "secretRef")) {
        int cm = KRC_JSCAN_EQ(k, "configMapRef");
        rc = read_ref(s, "name", name, sizeof(name), err);
        snprintf(e->ref, sizeof(e->ref), "%s %s", cm ? "configMap" : "secret", name);
        return rc;
    }
    if (KRC_JSCAN_EQ(k, "prefix")) {
        return read_str(s, e->prefix, sizeof(e->prefix), &n, err);
    }
    return skip(s, err);
}

static int env_from_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct krc_facts *cf = ctx;
    struct env_from e = {"", ""};
    int rc = krc_jscan_each_key(s, env_from_key, &e, err);

    if (rc < 0) {
        return rc;
    }
    if (e.ref[0] != '\0' && krc_facts_add(cf, KRC_FACT_ENV_FROM, "", 0, e.ref, strlen(e.ref),
                                          e.prefix, strlen(e.prefix)) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

/* Facts of one type in a list (a container's, a pod's or a node's). */
struct typed {
    char type;
    struct krc_facts *f;
};

static int quantity_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                        struct krc_error *err)
{
    struct typed *q = ctx;
    char key[256];
    char val[128];
    size_t kn = krc_digest_copy(k, key, sizeof(key));
    size_t vn;

    if (read_scalar(s, val, sizeof(val), &vn, err) < 0) {
        return KRC_EPARSE;
    }
    if (krc_facts_add(q->f, q->type, "", 0, key, kn, val, vn) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

static int resources_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    struct typed q = {0, ctx};

    if (KRC_JSCAN_EQ(k, "limits")) {
        q.type = KRC_FACT_LIMIT;
    } else if (KRC_JSCAN_EQ(k, "requests")) {
        q.type = KRC_FACT_REQUEST;
    } else {
        return skip(s, err);
    }
    return krc_jscan_each_key(s, quantity_key, &q, err);
}

/* A probe's handler. */
struct handler {
    char path[512];
    char port[64];
    char cmd[600];
};

static int handler_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                       struct krc_error *err)
{
    struct handler *h = ctx;
    size_t n;

    if (KRC_JSCAN_EQ(k, "path")) {
        return read_str(s, h->path, sizeof(h->path), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "port")) {
        return read_scalar(s, h->port, sizeof(h->port), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "command")) {
        return read_str_array(s, h->cmd, sizeof(h->cmd), &n, err);
    }
    return skip(s, err);
}

/* The handler of a probe: "http /healthz:8080", "tcp 5432", "grpc 9000",
 * "exec CMD". */
static int read_probe_handler(struct krc_jscan *s, const char *kind, char *out, size_t outsz,
                              struct krc_error *err)
{
    struct handler h = {"", "", ""};
    int rc = krc_jscan_each_key(s, handler_key, &h, err);

    if (rc <= 0) {
        return rc;
    }
    if (strcmp(kind, "exec") == 0) {
        snprintf(out, outsz, "exec %s", h.cmd);
    } else if (strcmp(kind, "http") == 0) {
        snprintf(out, outsz, "http %s:%s", h.path[0] ? h.path : "/", h.port);
    } else {
        snprintf(out, outsz, "%s %s", kind, h.port);
    }
    return 0;
}

/* A probe's parts. */
struct probe {
    char handler[700];
    int64_t delay, period, timeout, failures;
};

static int probe_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                     struct krc_error *err)
{
    struct probe *p = ctx;
    const char *kind = NULL;

    if (KRC_JSCAN_EQ(k, "httpGet")) {
        kind = "http";
    } else if (KRC_JSCAN_EQ(k, "tcpSocket")) {
        kind = "tcp";
    } else if (KRC_JSCAN_EQ(k, "grpc")) {
        kind = "grpc";
    } else if (KRC_JSCAN_EQ(k, "exec")) {
        kind = "exec";
    }
    if (kind != NULL) {
        return read_probe_handler(s, kind, p->handler, sizeof(p->handler), err);
    }
    if (KRC_JSCAN_EQ(k, "initialDelaySeconds")) {
        return read_int(s, &p->delay, err);
    }
    if (KRC_JSCAN_EQ(k, "periodSeconds")) {
        return read_int(s, &p->period, err);
    }
    if (KRC_JSCAN_EQ(k, "timeoutSeconds")) {
        return read_int(s, &p->timeout, err);
    }
    if (KRC_JSCAN_EQ(k, "failureThreshold")) {
        return read_int(s, &p->failures, err);
    }
    return skip(s, err);
}

/* A probe as parts: handler, delay, period, timeout, failures (Kubernetes
 * defaults applied, so that a change to a default shows as one). */
static int read_probe(struct krc_jscan *s, const char *which, struct krc_facts *cf,
                      struct krc_error *err)
{
    struct probe p = {"", 0, 10, 1, 3};
    char value[900];
    int rc = krc_jscan_each_key(s, probe_key, &p, err);

    if (rc <= 0) {
        return rc;
    }
    snprintf(value, sizeof(value),
             "%s\x1e"
             "delay %llds\x1e"
             "period %llds\x1e"
             "timeout %llds\x1e"
             "failures %lld",
             p.handler[0] ? p.handler : "no handler", (long long)p.delay, (long long)p.period,
             (long long)p.timeout, (long long)p.failures);
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

/* One container being read: its facts (without the container's name) in cf. */
struct container {
    int init;
    struct krc_facts *cf;
    char cname[320];
};

static int container_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    struct container *c = ctx;
    char tmp[VAL_TMP_MAX];
    size_t n;
    int rc;

    if (KRC_JSCAN_EQ(k, "name")) {
        char name[300] = "";
        rc = read_str(s, name, sizeof(name), &n, err);
        snprintf(c->cname, sizeof(c->cname), "%s%s", c->init ? "init:" : "", name);
        return rc;
    }
    if (KRC_JSCAN_EQ(k, "image")) {
        rc = read_str(s, tmp, sizeof(tmp), &n, err);
        return rc == 0 ? add_image(c->cf, tmp, n) : rc;
    }
    if (KRC_JSCAN_EQ(k, "command") || KRC_JSCAN_EQ(k, "args")) {
        char type = KRC_JSCAN_EQ(k, "command") ? KRC_FACT_COMMAND : KRC_FACT_ARGS;
        rc = read_str_array(s, tmp, sizeof(tmp), &n, err);
        return rc == 0 ? krc_facts_add(c->cf, type, "", 0, "", 0, tmp, n) : rc;
    }
    if (KRC_JSCAN_EQ(k, "env")) {
        return krc_jscan_each_item(s, env_item, c->cf, err);
    }
    if (KRC_JSCAN_EQ(k, "envFrom")) {
        return krc_jscan_each_item(s, env_from_item, c->cf, err);
    }
    if (KRC_JSCAN_EQ(k, "resources")) {
        return krc_jscan_each_key(s, resources_key, c->cf, err);
    }
    if (KRC_JSCAN_EQ(k, "livenessProbe")) {
        return read_probe(s, "liveness", c->cf, err);
    }
    if (KRC_JSCAN_EQ(k, "readinessProbe")) {
        return read_probe(s, "readiness", c->cf, err);
    }
    if (KRC_JSCAN_EQ(k, "startupProbe")) {
        return read_probe(s, "startup", c->cf, err);
    }
    return skip(s, err);
}

/* The containers (or init containers) of a pod: cf, scratch for each. */
struct containers {
    int init;
    struct krc_facts cf;
    struct krc_facts *f;
};

/* One container: its facts with the container's name. */
static int container_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct containers *cs = ctx;
    struct container c = {cs->init, &cs->cf, ""};
    int rc;

    krc_facts_reset(&cs->cf);
    rc = krc_jscan_each_key(s, container_key, &c, err);
    if (rc <= 0) {
        return rc;
    }
    /* the container's facts, now that its name is known */
    for (size_t i = 0; i < cs->cf.n; i++) {
        const char *fact = krc_facts_get(&cs->cf, i);
        const char *sub = fact + 2; /* type, "" container, separator */
        const char *val = strchr(sub, KRC_FACT_SEP);
        if (krc_facts_add(cs->f, fact[0], c.cname, strlen(c.cname), sub, (size_t)(val - sub),
                          val + 1, strlen(val + 1)) < 0) {
            return KRC_ENOMEM;
        }
    }
    return 0;
}

static int read_containers(struct krc_jscan *s, int init, struct krc_facts *f,
                           struct krc_error *err)
{
    struct containers cs = {.init = init, .f = f};
    int rc;

    krc_facts_init(&cs.cf);
    rc = krc_jscan_each_item(s, container_item, &cs, err);
    krc_facts_cleanup(&cs.cf);
    return rc;
}

/* ---- pod-level ----------------------------------------------------------- */

/* projected.sources[]: "configMap a, secret b" (out, outsz, len so far). */
struct sources {
    char *out;
    size_t outsz, len;
};

static int source_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                      struct krc_error *err)
{
    struct sources *src = ctx;
    char name[520];
    int cm = KRC_JSCAN_EQ(k, "configMap");
    int w;

    if (!cm && !KRC_JSCAN_EQ(k, "secret")) {
        return skip(s, err);
    }
    if (read_ref(s, "name", name, sizeof(name), err) < 0) {
        return KRC_EPARSE;
    }
    w = snprintf(src->out + src->len, src->outsz - src->len, "%s%s %s", src->len ? ", " : "",
                 cm ? "configMap" : "secret", name);
    if (w > 0 && (size_t)w < src->outsz - src->len) {
        src->len += (size_t)w;
    }
    return 0;
}

static int source_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    return krc_jscan_each_key(s, source_key, ctx, err);
}

static int projected_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    if (!KRC_JSCAN_EQ(k, "sources")) {
        return skip(s, err);
    }
    return krc_jscan_each_item(s, source_item, ctx, err);
}

/* One volumes[] item. */
struct volume {
    char name[256];
    char value[1024];
};

static int volume_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                      struct krc_error *err)
{
    struct volume *v = ctx;
    char ref[520];
    size_t n;
    int rc;

    if (KRC_JSCAN_EQ(k, "name")) {
        return read_str(s, v->name, sizeof(v->name), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "configMap")) {
        rc = read_ref(s, "name", ref, sizeof(ref), err);
        snprintf(v->value, sizeof(v->value), "configMap %s", ref);
        return rc;
    }
    if (KRC_JSCAN_EQ(k, "secret")) {
        rc = read_ref(s, "secretName", ref, sizeof(ref), err);
        snprintf(v->value, sizeof(v->value), "secret %s", ref);
        return rc;
    }
    if (KRC_JSCAN_EQ(k, "projected")) {
        struct sources src = {v->value, sizeof(v->value), 0};
        v->value[0] = '\0';
        return krc_jscan_each_key(s, projected_key, &src, err);
    }
    return skip(s, err);
}

static int volume_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct krc_facts *f = ctx;
    struct volume v = {"", ""};
    int rc = krc_jscan_each_key(s, volume_key, &v, err);

    if (rc < 0) {
        return rc;
    }
    if (v.name[0] != '\0' && v.value[0] != '\0' &&
        krc_facts_add(f, KRC_FACT_VOLUME, "", 0, v.name, strlen(v.name), v.value, strlen(v.value)) <
            0) {
        return KRC_ENOMEM;
    }
    return 0;
}

/* A string map's entries as facts of one type (nodeSelector; a node's
 * driver labels with `labels`). */
static int string_map_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                          struct krc_error *err)
{
    struct typed *m = ctx;
    char key[320] = "";
    char val[320] = "";
    size_t kn = krc_digest_copy(k, key, sizeof(key));
    size_t vn = 0;

    if (m->type == KRC_FACT_LABEL && !krc_digest_is_driver_label(key, kn)) {
        return skip(s, err);
    }
    if (read_str(s, val, sizeof(val), &vn, err) < 0) {
        return KRC_EPARSE;
    }
    if (krc_facts_add(m->f, m->type, "", 0, key, kn, val, vn) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

/* One toleration or taint. */
struct toleration {
    char key[320];
    char op[32];
    char value[320];
    char effect[64];
    int64_t secs;
};

static int toleration_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                          struct krc_error *err)
{
    struct toleration *t = ctx;
    size_t n;

    if (KRC_JSCAN_EQ(k, "key")) {
        return read_str(s, t->key, sizeof(t->key), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "operator")) {
        return read_str(s, t->op, sizeof(t->op), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "value")) {
        return read_str(s, t->value, sizeof(t->value), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "effect")) {
        return read_str(s, t->effect, sizeof(t->effect), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "tolerationSeconds")) {
        return read_int(s, &t->secs, err);
    }
    return skip(s, err);
}

/* tolerations[] and taints[]: key, operator, value, effect,
 * tolerationSeconds -> "key=value:effect" ("key:effect" for Exists, "*"
 * for an empty key). A toleration is its own key; so is a taint (ctx: the
 * facts and their type). */
static int toleration_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct typed *tf = ctx;
    struct toleration t = {"", "", "", "", -1};
    char text[800];
    size_t n;
    int rc = krc_jscan_each_key(s, toleration_key, &t, err);

    if (rc <= 0) {
        return rc;
    }
    if (strcmp(t.op, "Exists") == 0) {
        t.value[0] = '\0';
    }
    n = (size_t)snprintf(text, sizeof(text), "%s%s%s%s%s", t.key[0] ? t.key : "*",
                         t.value[0] ? "=" : "", t.value, t.effect[0] ? ":" : "", t.effect);
    if (t.secs >= 0 && n < sizeof(text)) {
        snprintf(text + n, sizeof(text) - n, " for %llds", (long long)t.secs);
    }
    if (krc_facts_add(tf->f, tf->type, "", 0, text, strlen(text), "", 0) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

static int pod_spec_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                        struct krc_error *err)
{
    struct krc_facts *f = ctx;
    struct typed selector = {KRC_FACT_NODE_SELECTOR, f};
    struct typed tolerations = {KRC_FACT_TOLERATION, f};
    char sa[320];
    size_t n;
    int rc;

    if (KRC_JSCAN_EQ(k, "containers")) {
        return read_containers(s, 0, f, err);
    }
    if (KRC_JSCAN_EQ(k, "initContainers")) {
        return read_containers(s, 1, f, err);
    }
    if (KRC_JSCAN_EQ(k, "volumes")) {
        return krc_jscan_each_item(s, volume_item, f, err);
    }
    if (KRC_JSCAN_EQ(k, "serviceAccountName")) {
        if ((rc = read_str(s, sa, sizeof(sa), &n, err)) == 0 && n > 0) {
            rc = krc_facts_add(f, KRC_FACT_SERVICE_ACCOUNT, "", 0, "", 0, sa, n);
        }
        return rc;
    }
    if (KRC_JSCAN_EQ(k, "nodeSelector")) {
        return krc_jscan_each_key(s, string_map_key, &selector, err);
    }
    if (KRC_JSCAN_EQ(k, "tolerations")) {
        return krc_jscan_each_item(s, toleration_item, &tolerations, err);
    }
    return skip(s, err);
}

/* 0 for any walk that did not fail (1: a container, 0: another value). */
static int walked(int rc)
{
    return rc < 0 ? rc : 0;
}

int krc_digest_pod_spec(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    return walked(krc_jscan_each_key(s, pod_spec_key, f, err));
}

/* ---- nodes ---------------------------------------------------------------- */

int krc_digest_node_taints(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    struct typed taints = {KRC_FACT_TAINT, f};

    return walked(krc_jscan_each_item(s, toleration_item, &taints, err));
}

static int node_info_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    struct krc_facts *f = ctx;
    char type = 0;
    char val[320];
    size_t n;

    if (KRC_JSCAN_EQ(k, "kubeletVersion")) {
        type = KRC_FACT_KUBELET;
    } else if (KRC_JSCAN_EQ(k, "containerRuntimeVersion")) {
        type = KRC_FACT_RUNTIME;
    } else if (KRC_JSCAN_EQ(k, "kernelVersion")) {
        type = KRC_FACT_KERNEL;
    } else if (KRC_JSCAN_EQ(k, "osImage")) {
        type = KRC_FACT_OS;
    }
    if (type == 0) {
        return skip(s, err);
    }
    if (read_str(s, val, sizeof(val), &n, err) < 0) {
        return KRC_EPARSE;
    }
    if (n > 0 && krc_facts_add(f, type, "", 0, "", 0, val, n) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

int krc_digest_node_info(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    return walked(krc_jscan_each_key(s, node_info_key, f, err));
}

/* One conditions[] item. */
struct condition {
    char type[128];
    char status[32];
};

static int condition_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                         struct krc_error *err)
{
    struct condition *c = ctx;
    size_t n;

    if (KRC_JSCAN_EQ(k, "type")) {
        return read_str(s, c->type, sizeof(c->type), &n, err);
    }
    if (KRC_JSCAN_EQ(k, "status")) {
        return read_str(s, c->status, sizeof(c->status), &n, err);
    }
    return skip(s, err); /* heartbeat times change all the time */
}

static int condition_item(struct krc_jscan *s, void *ctx, struct krc_error *err)
{
    struct krc_facts *f = ctx;
    struct condition c = {"", ""};
    int rc = krc_jscan_each_key(s, condition_key, &c, err);

    if (rc < 0) {
        return rc;
    }
    if (c.type[0] != '\0' && krc_facts_add(f, KRC_FACT_CONDITION, "", 0, c.type, strlen(c.type),
                                           c.status, strlen(c.status)) < 0) {
        return KRC_ENOMEM;
    }
    return 0;
}

int krc_digest_node_conditions(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err)
{
    return walked(krc_jscan_each_item(s, condition_item, f, err));
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
    struct typed labels = {KRC_FACT_LABEL, f};

    return walked(krc_jscan_each_key(s, string_map_key, &labels, err));
}
