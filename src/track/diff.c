/* Fact lists -> the items of a change (diff.h). */
#include "krc/track/diff.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "krc/track/digest.h"
#include "krc/util/mem.h"

#define ARROW " \xe2\x86\x92 " /* " → " */
#define ITEMS_BYTES (64 * 1024)
#define SHORT_MAX 60 /* command/args shown when both sides fit */

void krc_track_items_init(struct krc_track_items *it, size_t max)
{
    memset(it, 0, sizeof(*it));
    krc_buf_init(&it->buf, ITEMS_BYTES);
    it->max = max;
}

void krc_track_items_cleanup(struct krc_track_items *it)
{
    krc_buf_cleanup(&it->buf);
}

int krc_track_items_add(struct krc_track_items *it, const char *fmt, ...)
{
    va_list ap;
    int rc;

    if (it->n >= it->max) {
        it->more++;
        return 0;
    }
    va_start(ap, fmt);
    rc = krc_buf_vprintf(&it->buf, fmt, ap);
    va_end(ap);
    if (rc == 0) {
        rc = krc_buf_append_char(&it->buf, '\n');
    }
    if (rc == 0) {
        it->n++;
    }
    return rc;
}

void krc_track_short_image(const char *image, char *out, size_t outsz)
{
    const char *at = strchr(image, '@');
    size_t name_end = at != NULL ? (size_t)(at - image) : strlen(image);
    const char *slash = NULL;

    for (size_t i = 0; i < name_end; i++) {
        if (image[i] == '/') {
            slash = image + i;
        }
    }
    const char *start = slash != NULL ? slash + 1 : image;
    if (at != NULL) {
        const char *hex = strchr(at, ':');
        hex = hex != NULL ? hex + 1 : at + 1;
        snprintf(out, outsz, "%.*s@%.12s", (int)(at - start), start, hex);
    } else {
        snprintf(out, outsz, "%s", start);
    }
}

/* A fact split: type, container, sub, value (views into the fact). */
struct fact {
    char type;
    const char *container;
    size_t clen;
    const char *sub;
    size_t slen;
    const char *value;
    size_t key_len;
};

static void split(const char *f, struct fact *out)
{
    const char *c = f + 1;
    const char *s1 = strchr(c, KRC_FACT_SEP);
    const char *s2 = s1 != NULL ? strchr(s1 + 1, KRC_FACT_SEP) : NULL;

    memset(out, 0, sizeof(*out));
    out->type = f[0];
    if (s1 == NULL || s2 == NULL) { /* not a fact: read as a bare value */
        out->container = out->sub = out->value = c;
        out->key_len = 1;
        out->value = f + 1;
        return;
    }
    out->container = c;
    out->clen = (size_t)(s1 - c);
    out->sub = s1 + 1;
    out->slen = (size_t)(s2 - s1 - 1);
    out->value = s2 + 1;
    out->key_len = (size_t)(s2 - f);
}

static int key_cmp(const char *a, const struct fact *fa, const char *b, const struct fact *fb)
{
    size_t n = fa->key_len < fb->key_len ? fa->key_len : fb->key_len;
    int c = memcmp(a, b, n);
    if (c != 0) {
        return c;
    }
    return fa->key_len < fb->key_len ? -1 : fa->key_len > fb->key_len;
}

/* The containers: names of the image facts (one per container). */
struct containers {
    const char *name[64];
    size_t len[64];
    int side[64]; /* bit 1: old, bit 2: new */
    size_t n;
    int init; /* an init container on either side */
};

static void add_container(struct containers *cs, const struct fact *f, int side)
{
    if (f->slen != 0) {
        return; /* the image's tag fact: its repository fact names the container */
    }
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->len[i] == f->clen && memcmp(cs->name[i], f->container, f->clen) == 0) {
            cs->side[i] |= side;
            return;
        }
    }
    if (cs->n < 64) {
        cs->name[cs->n] = f->container;
        cs->len[cs->n] = f->clen;
        cs->side[cs->n++] = side;
    }
    if (f->clen >= 5 && memcmp(f->container, "init:", 5) == 0) {
        cs->init = 1;
    }
}

static int container_side(const struct containers *cs, const struct fact *f)
{
    if (f->clen == 0) {
        return 3; /* pod-level */
    }
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->len[i] == f->clen && memcmp(cs->name[i], f->container, f->clen) == 0) {
            return cs->side[i];
        }
    }
    return 3;
}

/* "container api " / "init container setup " / "" when the pod has one. */
static void prefix(const struct containers *cs, const struct fact *f, char *out, size_t outsz)
{
    out[0] = '\0';
    if (f->clen == 0 || (cs->n == 1 && !cs->init)) {
        return;
    }
    if (f->clen >= 5 && memcmp(f->container, "init:", 5) == 0) {
        snprintf(out, outsz, "init container %.*s ", (int)(f->clen - 5), f->container + 5);
    } else {
        snprintf(out, outsz, "container %.*s ", (int)f->clen, f->container);
    }
}

/* A probe's value, part by part: only the parts that differ. */
static int probe_changed(struct krc_track_items *out, const char *p, const struct fact *o,
                         const struct fact *n)
{
    char text[1024];
    size_t len = 0;
    const char *a = o->value;
    const char *b = n->value;

    text[0] = '\0';
    while (*a != '\0' || *b != '\0') {
        size_t al = strcspn(a, "\x1e");
        size_t bl = strcspn(b, "\x1e");
        if (al != bl || memcmp(a, b, al) != 0) {
            int w = snprintf(text + len, sizeof(text) - len, "%s%.*s" ARROW "%.*s", len ? ", " : "",
                             (int)al, a, (int)bl, b);
            if (w > 0 && (size_t)w < sizeof(text) - len) {
                len += (size_t)w;
            }
        }
        a += al + (a[al] != '\0');
        b += bl + (b[bl] != '\0');
    }
    return krc_track_items_add(out, "%s%.*s probe %s", p, (int)n->slen, n->sub, text);
}

/* The probe's handler (its first part) for "added" / "removed". */
static int handler_len(const char *value)
{
    return (int)strcspn(value, "\x1e");
}

/* "image api:1.4.2 → api:1.4.3"; the whole names when the short ones are
 * the same (another registry). */
static int image_item(struct krc_track_items *out, const char *p, const char *old, const char *cur)
{
    char a[128];
    char b[128];

    krc_track_short_image(old, a, sizeof(a));
    krc_track_short_image(cur, b, sizeof(b));
    if (strcmp(a, b) == 0) {
        return krc_track_items_add(out, "%simage %s" ARROW "%s", p, old, cur);
    }
    return krc_track_items_add(out, "%simage %s" ARROW "%s", p, a, b);
}

static int changed(struct krc_track_items *out, const char *p, const struct fact *o,
                   const struct fact *n)
{
    int sl = (int)n->slen;

    switch (n->type) {
    case KRC_FACT_LIMIT:
    case KRC_FACT_REQUEST:
        return krc_track_items_add(out, "%s%.*s %s %s" ARROW "%s", p, sl, n->sub,
                                   n->type == KRC_FACT_LIMIT ? "limit" : "request", o->value,
                                   n->value);
    case KRC_FACT_COMMAND:
    case KRC_FACT_ARGS: {
        const char *what = n->type == KRC_FACT_COMMAND ? "command" : "args";
        if (strlen(o->value) <= SHORT_MAX && strlen(n->value) <= SHORT_MAX) {
            return krc_track_items_add(out, "%s%s %s" ARROW "%s", p, what, o->value, n->value);
        }
        return krc_track_items_add(out, "%s%s changed", p, what);
    }
    case KRC_FACT_ENV:
        return krc_track_items_add(out, "%senv %.*s %s" ARROW "%s", p, sl, n->sub,
                                   o->value[0] ? o->value : "a value",
                                   n->value[0] ? n->value : "a value");
    case KRC_FACT_ENV_FROM:
        return krc_track_items_add(out, "%senvFrom %.*s prefix \"%s\"" ARROW "\"%s\"", p, sl,
                                   n->sub, o->value, n->value);
    case KRC_FACT_PROBE:
        return probe_changed(out, p, o, n);
    case KRC_FACT_VOLUME:
        return krc_track_items_add(out, "volume %.*s %s" ARROW "%s", sl, n->sub, o->value,
                                   n->value);
    case KRC_FACT_SERVICE_ACCOUNT:
        return krc_track_items_add(out, "service account %s" ARROW "%s", o->value, n->value);
    case KRC_FACT_NODE_SELECTOR:
        return krc_track_items_add(out, "node selector %.*s %s" ARROW "%s", sl, n->sub, o->value,
                                   n->value);
    case KRC_FACT_KUBELET:
        return krc_track_items_add(out, "kubelet %s" ARROW "%s", o->value, n->value);
    case KRC_FACT_RUNTIME:
        return krc_track_items_add(out, "container runtime %s" ARROW "%s", o->value, n->value);
    case KRC_FACT_KERNEL:
        return krc_track_items_add(out, "kernel %s" ARROW "%s", o->value, n->value);
    case KRC_FACT_OS:
        return krc_track_items_add(out, "OS image %s" ARROW "%s", o->value, n->value);
    case KRC_FACT_CONDITION:
        return krc_track_items_add(out, "condition %.*s %s" ARROW "%s", sl, n->sub, o->value,
                                   n->value);
    case KRC_FACT_LABEL:
        return krc_track_items_add(out, "label %.*s %s" ARROW "%s", sl, n->sub, o->value, n->value);
    default: /* tolerations and taints are their own keys: never "changed" */
        return krc_track_items_add(out, "%.*s %s" ARROW "%s", sl, n->sub, o->value, n->value);
    }
}

/* A fact only on one side: added (1) or removed (0). */
static int one_side(struct krc_track_items *out, const char *p, const struct fact *f, int added)
{
    const char *verb = added ? "added" : "removed";
    int sl = (int)f->slen;

    switch (f->type) {
    case KRC_FACT_LIMIT:
    case KRC_FACT_REQUEST:
        return krc_track_items_add(out, "%s%.*s %s %s %s", p, sl, f->sub,
                                   f->type == KRC_FACT_LIMIT ? "limit" : "request", f->value, verb);
    case KRC_FACT_COMMAND:
        return krc_track_items_add(out, "%scommand %s", p, added ? "set" : "removed");
    case KRC_FACT_ARGS:
        return krc_track_items_add(out, "%sargs %s", p, added ? "set" : "removed");
    case KRC_FACT_ENV:
        if (f->value[0] != '\0') {
            return krc_track_items_add(out, "%senv %.*s (from %s) %s", p, sl, f->sub, f->value,
                                       verb);
        }
        return krc_track_items_add(out, "%senv %.*s %s", p, sl, f->sub, verb);
    case KRC_FACT_ENV_FROM:
        return krc_track_items_add(out, "%senvFrom %.*s %s", p, sl, f->sub, verb);
    case KRC_FACT_PROBE:
        return krc_track_items_add(out, "%s%.*s probe %s (%.*s)", p, sl, f->sub, verb,
                                   handler_len(f->value), f->value);
    case KRC_FACT_VOLUME:
        return krc_track_items_add(out, "volume %.*s (%s) %s", sl, f->sub, f->value, verb);
    case KRC_FACT_SERVICE_ACCOUNT:
        return krc_track_items_add(out, "service account %s %s", f->value, verb);
    case KRC_FACT_NODE_SELECTOR:
    case KRC_FACT_LABEL:
        if (added) {
            return krc_track_items_add(out, "%s %.*s=%s added",
                                       f->type == KRC_FACT_LABEL ? "label" : "node selector", sl,
                                       f->sub, f->value);
        }
        return krc_track_items_add(out, "%s %.*s removed",
                                   f->type == KRC_FACT_LABEL ? "label" : "node selector", sl,
                                   f->sub);
    case KRC_FACT_TOLERATION:
        return krc_track_items_add(out, "toleration %.*s %s", sl, f->sub, verb);
    case KRC_FACT_TAINT:
        return krc_track_items_add(out, "taint %.*s %s", sl, f->sub, verb);
    case KRC_FACT_CONDITION:
        return krc_track_items_add(out, "condition %.*s %s%s", sl, f->sub, added ? f->value : "",
                                   added ? " (new)" : "removed");
    case KRC_FACT_KUBELET:
        return krc_track_items_add(out, "kubelet %s %s", f->value, verb);
    case KRC_FACT_RUNTIME:
        return krc_track_items_add(out, "container runtime %s %s", f->value, verb);
    case KRC_FACT_KERNEL:
        return krc_track_items_add(out, "kernel %s %s", f->value, verb);
    default:
        return krc_track_items_add(out, "%.*s %s", sl, f->sub, verb);
    }
}

/* A container's image: its repository and tag facts put together. */
static void image_of(const char *const *facts, size_t n, const char *container, size_t clen,
                     char *out, size_t outsz)
{
    const char *repo = "";
    const char *tag = "";

    for (size_t j = 0; j < n; j++) {
        struct fact f;
        split(facts[j], &f);
        if (f.type != KRC_FACT_IMAGE || f.clen != clen ||
            memcmp(f.container, container, clen) != 0) {
            continue;
        }
        if (f.slen == 0) {
            repo = f.value;
        } else {
            tag = f.value;
        }
    }
    snprintf(out, outsz, "%s%s", repo, tag);
}

/* Whole containers first: added (with their image) or removed; then the
 * images of the others. */
static int images_changed(struct krc_track_items *out, const struct containers *cs,
                          const char *const *old, size_t n_old, const char *const *cur,
                          size_t n_cur)
{
    for (size_t i = 0; i < cs->n; i++) {
        char a[512], b[512], p[300];
        struct fact f;
        int rc;
        if (cs->side[i] != 3) {
            continue;
        }
        image_of(old, n_old, cs->name[i], cs->len[i], a, sizeof(a));
        image_of(cur, n_cur, cs->name[i], cs->len[i], b, sizeof(b));
        if (strcmp(a, b) == 0) {
            continue;
        }
        memset(&f, 0, sizeof(f));
        f.container = cs->name[i];
        f.clen = cs->len[i];
        prefix(cs, &f, p, sizeof(p));
        rc = image_item(out, p, a, b);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

static int containers_items(struct krc_track_items *out, const struct containers *cs,
                            const char *const *cur, size_t n_cur)
{
    for (size_t i = 0; i < cs->n; i++) {
        int init = cs->len[i] >= 5 && memcmp(cs->name[i], "init:", 5) == 0;
        const char *nm = cs->name[i] + (init ? 5 : 0);
        int nl = (int)cs->len[i] - (init ? 5 : 0);
        int rc = 0;
        if (cs->side[i] == 1) {
            rc = krc_track_items_add(out, "%scontainer %.*s removed", init ? "init " : "", nl, nm);
        } else if (cs->side[i] == 2) {
            char image[512];
            char shown[128];
            image_of(cur, n_cur, cs->name[i], cs->len[i], image, sizeof(image));
            krc_track_short_image(image, shown, sizeof(shown));
            rc = krc_track_items_add(out, "%scontainer %.*s added (%s)", init ? "init " : "", nl,
                                     nm, shown);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

int krc_track_diff(const char *const *old, size_t n_old, const char *const *cur, size_t n_cur,
                   struct krc_track_items *out)
{
    struct containers cs;
    size_t i = 0, j = 0;
    int rc;

    memset(&cs, 0, sizeof(cs));
    for (size_t k = 0; k < n_old; k++) {
        struct fact f;
        split(old[k], &f);
        if (f.type == KRC_FACT_IMAGE) {
            add_container(&cs, &f, 1);
        }
    }
    for (size_t k = 0; k < n_cur; k++) {
        struct fact f;
        split(cur[k], &f);
        if (f.type == KRC_FACT_IMAGE) {
            add_container(&cs, &f, 2);
        }
    }
    if ((rc = containers_items(out, &cs, cur, n_cur)) < 0 ||
        (rc = images_changed(out, &cs, old, n_old, cur, n_cur)) < 0) {
        return rc;
    }
    while (i < n_old || j < n_cur) {
        struct fact fo = {0};
        struct fact fn = {0};
        char p[300];
        int c;
        if (i < n_old) {
            split(old[i], &fo);
        }
        if (j < n_cur) {
            split(cur[j], &fn);
        }
        c = i >= n_old ? 1 : j >= n_cur ? -1 : key_cmp(old[i], &fo, cur[j], &fn);
        if ((c <= 0 && fo.type == KRC_FACT_IMAGE) || (c >= 0 && fn.type == KRC_FACT_IMAGE)) {
            /* images: images_changed, above */
            i += c <= 0;
            j += c >= 0;
            continue;
        }
        if (c == 0) {
            if (strcmp(fo.value, fn.value) != 0 && container_side(&cs, &fn) == 3) {
                prefix(&cs, &fn, p, sizeof(p));
                rc = changed(out, p, &fo, &fn);
            }
            i++;
            j++;
        } else if (c < 0) {
            if (container_side(&cs, &fo) == 3) {
                prefix(&cs, &fo, p, sizeof(p));
                rc = one_side(out, p, &fo, 0);
            }
            i++;
        } else {
            if (container_side(&cs, &fn) == 3) {
                prefix(&cs, &fn, p, sizeof(p));
                rc = one_side(out, p, &fn, 1);
            }
            j++;
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}
