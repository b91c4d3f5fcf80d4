/* Next steps that follow the evidence (src/diagnose/diagnose_private.h): a
 * rule's say function calls these to replace the rule's generic next step
 * when the evidence says more (docs/causes.md):
 * - an OOM kill of a container without a memory limit: the pod-level limit
 *   (KEP-2837) when there is one, else the node's memory, and a limit to set;
 * - the JVM's maximum heap (-Xmx, -XX:MaxRAMPercentage, -XX:MaxRAMFraction
 *   from the spec's environment or command line) at or near the container's
 *   memory limit in effect (the actuated one when the status shows it);
 * - a setting the log names as missing (an environment variable, a
 *   configuration key or property, a module), and what the container spec
 *   shows about it;
 * - the node's Ready condition and NodeNotReady events around the kill. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/mem.h"

/* ---- sizes ----------------------------------------------------------------- */

/* Bytes of a Kubernetes quantity ("2Gi", "512M", "1.5Gi", "2147483648",
 * "1e9", "500m"); -1 when it cannot be read. */
int64_t krc_diag_quantity_bytes(const char *q)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"Ki", 1024.0},
        {"Mi", 1048576.0},
        {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0},
        {"Pi", 1125899906842624.0},
        {"Ei", 1152921504606846976.0},
        {"k", 1e3},
        {"M", 1e6},
        {"G", 1e9},
        {"T", 1e12},
        {"P", 1e15},
        {"E", 1e18},
        {"m", 1e-3},
        {"", 1.0},
    };
    char *end = NULL;
    double v;

    if (q == NULL || !(isdigit((unsigned char)q[0]) || q[0] == '.')) {
        return -1;
    }
    v = strtod(q, &end);
    if (end == q || v < 0) {
        return -1;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            v *= units[i].mult;
            return v >= 9.0e18 ? -1 : (int64_t)v;
        }
    }
    return -1;
}

/* Bytes of a JVM size ("2g", "2048m", "1024k", "2147483648"); -1 unknown. */
static int64_t jvm_size(const char *p)
{
    char *end = NULL;
    unsigned long long v;

    if (!isdigit((unsigned char)p[0])) {
        return -1;
    }
    v = strtoull(p, &end, 10);
    if (v > (1ull << 50)) {
        return -1;
    }
    switch (*end) {
    case '\0':
        return (int64_t)v;
    case 'k':
    case 'K':
        return end[1] == '\0' ? (int64_t)v << 10 : -1;
    case 'm':
    case 'M':
        return end[1] == '\0' ? (int64_t)v << 20 : -1;
    case 'g':
    case 'G':
        return end[1] == '\0' ? (int64_t)v << 30 : -1;
    case 't':
    case 'T':
        return end[1] == '\0' && v < (1ull << 20) ? (int64_t)v << 40 : -1;
    default:
        return -1;
    }
}

/* "2Gi", "1.5Gi", "512Mi", "900Ki" */
static void fmt_bytes(int64_t n, char *out, size_t outsz)
{
    static const char *const units[] = {"Ki", "Mi", "Gi", "Ti"};
    double v = (double)n;
    int u = -1;

    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        u++;
    }
    if (u < 0) {
        snprintf(out, outsz, "%lld bytes", (long long)n);
    } else if (v == (double)(int64_t)v || v >= 100.0) {
        snprintf(out, outsz, "%.0f%s", v, units[u]);
    } else {
        snprintf(out, outsz, "%.1f%s", v, units[u]);
    }
}

/* ---- the JVM's heap ---------------------------------------------------------- */

struct heap {
    char opt[72];      /* the option as written */
    const char *where; /* where it was found */
    int64_t bytes;     /* the maximum heap it gives; -1 unknown */
    int64_t limit;     /* the container's memory limit; -1 none or unreadable */
    char lim_text[32]; /* the limit as written in the spec */
};

/* Where the JVM reads its options, the one read last (that wins) first:
 * _JAVA_OPTIONS overrides the command line, the command line overrides
 * JDK_JAVA_OPTIONS and JAVA_TOOL_OPTIONS; JAVA_OPTS is what start scripts
 * put on the command line. */
static const char *const heap_sources[] = {"_JAVA_OPTIONS", "command/args", "JAVA_OPTS",
                                           "JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS"};

/* The last option starting with `prefix` in the space-separated list. */
static int last_opt(const char *list, const char *prefix, char *out, size_t outsz)
{
    size_t pl = strlen(prefix);
    const char *p = list;
    int found = 0;

    while (*p != '\0') {
        size_t n = strcspn(p, " ");
        if (n >= pl && strncmp(p, prefix, pl) == 0 && n < outsz) {
            memcpy(out, p, n);
            out[n] = '\0';
            found = 1;
        }
        p += n;
        p += *p == ' ';
    }
    return found;
}

/* The JVM's maximum heap from the spec: -Xmx / MaxHeapSize wins over the
 * RAM percentage, which wins over the RAM fraction. 0 when none is set. */
static int jvm_heap(const struct dctx *x, struct heap *h)
{
    static const char *const kinds[][2] = {
        {"-Xmx", "-XX:MaxHeapSize="},
        {"-XX:MaxRAMPercentage=", NULL},
        {"-XX:MaxRAMFraction=", NULL},
    };
    struct krc_diag_memlim m;
    const char *lim;

    krc_diag_mem_limits(x, &m);
    lim = m.limit;
    memset(h, 0, sizeof(*h));
    h->limit = lim != NULL ? krc_diag_quantity_bytes(lim) : -1;
    snprintf(h->lim_text, sizeof(h->lim_text), "%s", lim != NULL ? lim : "");
    for (size_t k = 0; k < 3; k++) {
        for (size_t s = 0; s < sizeof(heap_sources) / sizeof(heap_sources[0]); s++) {
            const char *list = krc_kv_list_get(&x->c->jvm_heap, heap_sources[s]);
            char a[72];
            char b[72];
            int fa;
            int fb;
            if (list == NULL) {
                continue;
            }
            fa = last_opt(list, kinds[k][0], a, sizeof(a));
            fb = kinds[k][1] != NULL && last_opt(list, kinds[k][1], b, sizeof(b));
            if (!fa && !fb) {
                continue;
            }
            /* both spellings in one place: the later one counts */
            snprintf(h->opt, sizeof(h->opt), "%s",
                     fa && (!fb || strstr(list, a) > strstr(list, b)) ? a : b);
            h->where = heap_sources[s];
            h->bytes = -1;
            if (k == 0) {
                h->bytes = jvm_size(h->opt + (h->opt[1] == 'X' && h->opt[2] == 'm' ? 4 : 16));
            } else if (h->limit > 0) {
                double v = strtod(strchr(h->opt, '=') + 1, NULL);
                if (k == 1 && v > 0 && v <= 100) {
                    h->bytes = (int64_t)((double)h->limit * v / 100.0);
                } else if (k == 2 && v >= 1) {
                    h->bytes = (int64_t)((double)h->limit / v);
                }
            }
            return 1;
        }
    }
    return 0;
}

/* The heap's evidence line; returns 2 when the heap is at or above the
 * limit, 1 when it leaves less than a quarter of it, 0 otherwise or when
 * it cannot be compared. */
static int heap_evidence(const struct heap *h, struct builder *b)
{
    char heap[32];
    char left[32];

    if (h->bytes < 0 || h->limit <= 0) {
        if (h->bytes >= 0) {
            fmt_bytes(h->bytes, heap, sizeof(heap));
            krc_diag_add_evidence(b, "%s in %s: a JVM heap of up to %s; no memory limit", h->opt,
                                  h->where, heap);
        }
        return 0;
    }
    fmt_bytes(h->bytes, heap, sizeof(heap));
    if (h->bytes >= h->limit) {
        krc_diag_add_evidence(b,
                              "%s in %s: a JVM heap of up to %s, at or above the %s memory limit: "
                              "no room for non-heap memory (metaspace, thread stacks, code cache, "
                              "direct buffers)",
                              h->opt, h->where, heap, h->lim_text);
        return 2;
    }
    fmt_bytes(h->limit - h->bytes, left, sizeof(left));
    krc_diag_add_evidence(b,
                          "%s in %s: a JVM heap of up to %s of the %s memory limit, %s left for "
                          "non-heap memory (metaspace, thread stacks, code cache, direct buffers)",
                          h->opt, h->where, heap, h->lim_text, left);
    return h->limit - h->bytes < h->limit / 4 ? 1 : 0;
}

/* ---- memory ----------------------------------------------------------------- */

void krc_diag_advise_oom_killed(struct dctx *x, struct builder *b)
{
    struct krc_diag_memlim m;
    struct heap h;

    krc_diag_mem_limits(x, &m);
    /* no limit of its own under a pod-level limit (KEP-2837) */
    if (m.limit == NULL && m.pod != NULL) {
        snprintf(x->next, sizeof(x->next),
                 "The pod-level memory limit %s (spec.resources) holds the containers of the pod "
                 "together: compare their memory use (kubectl top pod --containers) with it, and "
                 "raise it or give the container that grows a memory limit of its own",
                 m.pod);
        x->cmds |= CMD_TOP;
        return;
    }
    /* no limit: only an object the API server served says so (a pasted or
     * cut spec may just not show it) */
    if (m.limit == NULL && m.whole) {
        const char *alloc = krc_kv_list_get(&x->r->node.allocatable, "memory");
        const char *cap = krc_kv_list_get(&x->r->node.capacity, "memory");
        if (x->r->node.present && alloc != NULL) {
            krc_diag_add_evidence(b, "node %s: memory allocatable %s%s%s%s",
                                  x->r->node.name ? x->r->node.name : "?", alloc,
                                  cap ? " (capacity " : "", cap ? cap : "", cap ? ")" : "");
        }
        snprintf(x->next, sizeof(x->next),
                 "The container and the pod have no memory limit: an OOM kill then comes from the "
                 "node running out of memory. Check the memory of the pod's node "
                 "(allocatable, MemoryPressure, what the other pods use) and set a memory request "
                 "and limit for this container from its real use");
        x->cmds |= CMD_NODE | CMD_TOP;
        return;
    }
    if (!jvm_heap(x, &h)) {
        return;
    }
    switch (heap_evidence(&h, b)) {
    case 2:
        snprintf(x->next, sizeof(x->next),
                 "Lower the JVM heap (%s in %s) below the memory limit, leaving room for non-heap "
                 "memory (e.g. -XX:MaxRAMPercentage=75 instead of a fixed -Xmx), or raise the "
                 "memory limit well above the heap",
                 h.opt, h.where);
        break;
    case 1:
        snprintf(x->next, sizeof(x->next),
                 "Lower the JVM heap (%s in %s) or raise the memory limit, so that heap and "
                 "non-heap memory (metaspace, thread stacks, direct buffers) both fit",
                 h.opt, h.where);
        break;
    default:
        break;
    }
}

void krc_diag_advise_app_oom(struct dctx *x, struct builder *b)
{
    struct heap h;

    /* only the JVM's own OutOfMemoryError is about the heap options */
    if (!x->h.found || !krc_diag_has_ci(x->h.line.p, x->h.line.len, "outofmemoryerror") ||
        !jvm_heap(x, &h)) {
        return;
    }
    switch (heap_evidence(&h, b)) {
    case 2:
        snprintf(x->next, sizeof(x->next),
                 "Do not raise the heap (%s in %s): it is already at or above the memory limit, "
                 "and the kernel would OOM-kill the container first; find what fills it (a heap "
                 "dump: -XX:+HeapDumpOnOutOfMemoryError) or raise the memory limit and the heap "
                 "together",
                 h.opt, h.where);
        break;
    case 1:
        snprintf(x->next, sizeof(x->next),
                 "A larger heap (%s in %s) needs a higher memory limit too, since non-heap memory "
                 "has little room left; or find what fills the heap (a heap dump: "
                 "-XX:+HeapDumpOnOutOfMemoryError)",
                 h.opt, h.where);
        break;
    default:
        if (h.bytes >= 0 && h.limit > 0) {
            snprintf(x->next, sizeof(x->next),
                     "Raise the heap (%s in %s) within the memory limit, keeping room for "
                     "non-heap memory, or find what fills it (a heap dump: "
                     "-XX:+HeapDumpOnOutOfMemoryError)",
                     h.opt, h.where);
        }
        break;
    }
}

/* ---- a missing setting ---------------------------------------------------------- */

enum missing_kind {
    MISSING_ENV,      /* an environment variable */
    MISSING_KEY,      /* a key the application looked up (maybe an environment variable) */
    MISSING_PROPERTY, /* a configuration property (Spring) */
    MISSING_MODULE,   /* a module or file the runtime could not load (Node) */
    MISSING_PYMODULE, /* a Python module that is not installed */
    MISSING_LIBRARY,  /* a shared library the dynamic loader could not find */
    MISSING_GLIBC,    /* a glibc symbol version newer than the image's libc */
};

struct missing {
    enum missing_kind kind;
    const char *how; /* how the log says it */
    char name[128];
};

static int name_char(unsigned char c)
{
    return is_alnum(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '@';
}

/* Copy the name at p (up to `close`, or while name characters when close
 * is 0) into m->name; 0 when empty or cut by another character. */
static int take_name(const unsigned char *p, const unsigned char *end, char close,
                     struct missing *m)
{
    size_t n = 0;

    while (p + n < end && n + 1 < sizeof(m->name) && name_char(p[n])) {
        n++;
    }
    if (n == 0 || (close != 0 && (p + n >= end || p[n] != (unsigned char)close))) {
        return 0;
    }
    memcpy(m->name, p, n);
    m->name[n] = '\0';
    return 1;
}

static const unsigned char *find_in(struct span l, const char *needle)
{
    size_t at = krc_diag_find_ci(l.p, l.len, needle);

    return at < l.len ? l.p + at : NULL;
}

/* The traceback lines before line i name os.environ (the source line
 * `os.environ['X']`, or the frame of os.py's _Environ.__getitem__). */
static int python_environ(const struct tail *t, size_t i)
{
    for (size_t k = i; k > 0 && i - k < 8; k--) {
        struct span l = t->lines[k - 1];
        if (find_in(l, "environ") != NULL ||
            (find_in(l, "os.py\"") != NULL && find_in(l, "__getitem__") != NULL)) {
            return 1;
        }
    }
    return 0;
}

/* One line of the log tail naming a missing setting, in the runtimes' own
 * words (docs/causes.md lists the sources). */
static int missing_in_line(const struct tail *t, size_t i, struct missing *m)
{
    struct span l = krc_diag_strip_ts(t->lines[i]);
    const unsigned char *end = l.p + l.len;
    const unsigned char *p;

    while (l.len > 0 && (l.p[0] == ' ' || l.p[0] == '\t')) {
        l.p++;
        l.len--;
    }
    /* Ruby: "`fetch': key not found: "X" (KeyError)", "KeyError: key not found: "X"" */
    if ((p = find_in(l, "key not found: \"")) != NULL && find_in(l, "keyerror") != NULL &&
        take_name(p + 16, end, '"', m)) {
        m->kind = MISSING_KEY;
        m->how = "Ruby's KeyError from fetch (ENV.fetch or a Hash)";
        return 1;
    }
    /* Python: "KeyError: 'X'" ending a traceback (Python 2: "KeyError: u'X'") */
    {
        size_t q = starts_with(l.p, l.len, "KeyError: u'") ? 11 : 10;
        if (starts_with(l.p, l.len, "KeyError: ") && l.len > q + 1 &&
            (l.p[q] == '\'' || l.p[q] == '"') && take_name(l.p + q + 1, end, (char)l.p[q], m)) {
            int env = python_environ(t, i);
            m->kind = env ? MISSING_ENV : MISSING_KEY;
            m->how = env ? "Python's os.environ lookup raised KeyError"
                         : "Python's KeyError: a dictionary or configuration lookup";
            return 1;
        }
    }
    /* Go, kelseyhightower/envconfig: "required key X missing value" */
    if ((p = find_in(l, "required key ")) != NULL && find_in(l, " missing value") != NULL &&
        take_name(p + 13, end, ' ', m)) {
        m->kind = MISSING_ENV;
        m->how = "envconfig: required key missing value";
        return 1;
    }
    /* django-environ (and the idiom it comes from): "ImproperlyConfigured: Set
     * the X environment variable"; a hint of that wording in the middle of a
     * log is not the error, so only among the last three lines */
    if (t->n - i <= 3 && (p = find_in(l, "set the ")) != NULL && take_name(p + 8, end, ' ', m) &&
        find_in((struct span){p + 8, (size_t)(end - (p + 8))}, " environment variable") ==
            p + 8 + strlen(m->name)) {
        m->kind = MISSING_ENV;
        m->how = "the application asks to set it";
        return 1;
    }
    /* Spring: "Could not resolve placeholder 'x' in value "${x}"" */
    if ((p = find_in(l, "could not resolve placeholder '")) != NULL &&
        take_name(p + 31, end, '\'', m)) {
        m->kind = MISSING_PROPERTY;
        m->how = "Spring could not resolve the placeholder";
        return 1;
    }
    /* Node: "Error: Cannot find module 'x'" */
    if ((p = find_in(l, "error: cannot find module '")) != NULL &&
        take_name(p + 27, end, '\'', m)) {
        m->kind = MISSING_MODULE;
        m->how = "Node.js: Cannot find module";
        return 1;
    }
    /* Python 3.6+: "ModuleNotFoundError: No module named 'x'"; before:
     * "ImportError: No module named 'x'" (3.3-3.5), "... named x" (2) */
    if ((p = find_in(l, "no module named ")) != NULL &&
        (find_in(l, "modulenotfounderror") != NULL || find_in(l, "importerror") != NULL)) {
        const unsigned char *q = p + 16;
        int ok = q < end && (*q == '\'' || *q == '"') ? take_name(q + 1, end, (char)*q, m)
                                                      : take_name(q, end, 0, m);
        if (ok) {
            m->kind = MISSING_PYMODULE;
            m->how = "Python could not import it";
            return 1;
        }
    }
    /* The dynamic loader (ld.so): "prog: error while loading shared
     * libraries: libfoo.so.1: cannot open shared object file: ..." */
    if ((p = find_in(l, "error while loading shared libraries: ")) != NULL &&
        take_name(p + 38, end, ':', m)) {
        m->kind = MISSING_LIBRARY;
        m->how = "the dynamic loader could not find it";
        return 1;
    }
    /* ... and "prog: /lib64/libc.so.6: version `GLIBC_2.34' not found
     * (required by prog)" */
    if ((p = find_in(l, "version `glibc_")) != NULL && take_name(p + 9, end, '\'', m) &&
        find_in(l, "' not found") != NULL) {
        m->kind = MISSING_GLIBC;
        m->how = "the dynamic loader found an older glibc in the image";
        return 1;
    }
    /* a shell with set -u: "script.sh: line 165: X: unbound variable" */
    if ((p = find_in(l, ": unbound variable")) != NULL) {
        const unsigned char *s = p;
        while (s > l.p && name_char(s[-1])) {
            s--;
        }
        if (s < p && take_name(s, end, ':', m)) {
            m->kind = MISSING_ENV;
            m->how = "the shell stopped on an unset variable (set -u)";
            return 1;
        }
    }
    return 0;
}

/* Is "GLIBC_a.b[.c]" a newer version than "GLIBC_x.y[.z]"? */
static int glibc_newer(const char *a, const char *b)
{
    a += strlen("GLIBC_");
    b += strlen("GLIBC_");
    while (*a != '\0' || *b != '\0') {
        long x = strtol(a, NULL, 10);
        long y = strtol(b, NULL, 10);
        if (x != y) {
            return x > y;
        }
        a = strchr(a, '.') ? strchr(a, '.') + 1 : a + strlen(a);
        b = strchr(b, '.') ? strchr(b, '.') + 1 : b + strlen(b);
    }
    return 0;
}

/* The newest line of the log tail (or the termination message) naming a
 * missing setting. */
static int find_missing(const struct dctx *x, struct missing *m)
{
    const unsigned char *src[2] = {x->log, x->msg};
    size_t len[2] = {x->log_len, x->msg_len};
    struct tail *t = krc_malloc(sizeof(*t));
    int found = 0;

    if (t == NULL) {
        return 0;
    }
    for (size_t k = 0; k < 2 && !found; k++) {
        if (src[k] == NULL) {
            continue;
        }
        krc_diag_collect_tail(src[k], len[k], KRC_DIAG_TAIL_LINES, t);
        for (size_t i = t->n; i > 0 && !found; i--) {
            found = missing_in_line(t, i - 1, m);
            /* the loader lists each missing version: name the newest */
            for (size_t j = i - 1; found && m->kind == MISSING_GLIBC && j > 0; j--) {
                struct missing o;
                memset(&o, 0, sizeof(o));
                if (missing_in_line(t, j - 1, &o) && o.kind == MISSING_GLIBC &&
                    glibc_newer(o.name, m->name)) {
                    memcpy(m->name, o.name, sizeof(m->name));
                }
            }
        }
    }
    krc_free(t);
    return found;
}

/* Spring's relaxed binding: property a.b-c is also read from A_B_C. */
static void env_form(const char *prop, char *out, size_t outsz)
{
    size_t i;

    for (i = 0; prop[i] != '\0' && i + 1 < outsz; i++) {
        unsigned char c = (unsigned char)prop[i];
        out[i] = c == '.' || c == '-' ? '_' : (char)toupper(c);
    }
    out[i] = '\0';
}

/* What the container spec shows about variable `name`, as a clause. */
static void spec_says(const struct dctx *x, const char *name, char *out, size_t outsz)
{
    const char *src = krc_kv_list_get(&x->c->env, name);
    char from[300] = "";
    size_t o = 0;

    for (size_t i = 0; i < x->c->env_from.n && o + 1 < sizeof(from); i++) {
        int n = snprintf(from + o, sizeof(from) - o, "%s%s", o ? ", " : "",
                         x->c->env_from.items[i].key);
        o += n > 0 ? (size_t)n : 0;
    }
    if (!x->c->has_spec) {
        snprintf(out, outsz, "the container spec was not given: whether %s is set was not checked",
                 name);
    } else if (src != NULL && strcmp(src, "value") == 0) {
        snprintf(out, outsz, "the container's env sets %s (a literal value)", name);
    } else if (src != NULL) {
        snprintf(out, outsz, "the container's env takes %s from %s", name, src);
    } else if (from[0] != '\0') {
        snprintf(out, outsz,
                 "%s is not in the container's env; envFrom loads %s (their keys are not visible "
                 "to krc)",
                 name, from);
    } else if (!x->c->env_known) {
        snprintf(out, outsz,
                 "the pod given shows no env of the container (a pasted or converted spec may "
                 "leave it out): whether %s is set was not checked",
                 name);
    } else {
        snprintf(out, outsz,
                 "%s is not in the container's env and there is no envFrom (the image's own ENV "
                 "is not visible to krc)",
                 name);
    }
}

int krc_diag_advise_missing(struct dctx *x, struct builder *b)
{
    struct missing m;
    char spec[512];
    char envname[128];
    const char *src;

    memset(&m, 0, sizeof(m));
    if (!find_missing(x, &m)) {
        return 0;
    }
    switch (m.kind) {
    case MISSING_MODULE:
        krc_diag_add_evidence(b, "missing module: %s (%s)", m.name, m.how);
        snprintf(x->next, sizeof(x->next),
                 "Module '%s' could not be loaded: check that the image contains it (the build's "
                 "npm install or output directory) and that the container's command/args name "
                 "the right path",
                 m.name);
        return 1;
    case MISSING_PYMODULE: {
        char top[128];
        size_t n = strcspn(m.name, ".");
        snprintf(top, sizeof(top), "%.*s", (int)n, m.name);
        krc_diag_add_evidence(b, "missing module: %s (%s: an application/packaging error)", m.name,
                              m.how);
        snprintf(x->next, sizeof(x->next),
                 "Python module '%s' is not installed in the image: add the package that "
                 "provides '%s' to the image's build (requirements.txt, pip install), or check "
                 "PYTHONPATH and the Python environment the command runs in",
                 m.name, top);
        return 1;
    }
    case MISSING_LIBRARY:
        krc_diag_add_evidence(b, "missing shared library: %s (%s: the program never ran)", m.name,
                              m.how);
        snprintf(x->next, sizeof(x->next),
                 "Shared library %s is missing from the image: install the package that provides "
                 "it in the image, or build the program on the image's base (or statically)",
                 m.name);
        return 1;
    case MISSING_GLIBC:
        krc_diag_add_evidence(b,
                              "C library too old: the program needs %s (%s: the program never "
                              "ran)",
                              m.name, m.how);
        snprintf(x->next, sizeof(x->next),
                 "The program was built against a newer glibc than the image has (it needs %s): "
                 "build it on the image's base image, use a base image with that glibc, or link "
                 "it statically (Go: CGO_ENABLED=0)",
                 m.name);
        return 1;
    case MISSING_PROPERTY:
        env_form(m.name, envname, sizeof(envname));
        spec_says(x, envname, spec, sizeof(spec));
        krc_diag_add_evidence(b, "missing setting: property %s (%s); %s", m.name, m.how, spec);
        snprintf(x->next, sizeof(x->next),
                 "Define property %s for the container: in the application's configuration (an "
                 "application.properties/yaml, e.g. from a ConfigMap) or as environment variable "
                 "%s",
                 m.name, envname);
        return 1;
    case MISSING_KEY:
    case MISSING_ENV:
        break;
    }
    spec_says(x, m.name, spec, sizeof(spec));
    src = krc_kv_list_get(&x->c->env, m.name);
    krc_diag_add_evidence(b, "missing setting: %s %s (%s); %s",
                          m.kind == MISSING_ENV ? "environment variable" : "key", m.name, m.how,
                          spec);
    if (src != NULL && (strncmp(src, "secret ", 7) == 0 || strncmp(src, "configMap ", 10) == 0)) {
        snprintf(x->next, sizeof(x->next),
                 "Check %s, which the container's env reads into %s: a reference marked optional "
                 "leaves %s unset when the key is missing; the application stops without it",
                 src, m.name, m.name);
    } else if (m.kind == MISSING_ENV) {
        char from[300] = "";
        size_t o = 0;
        for (size_t i = 0; i < x->c->env_from.n && o + 1 < sizeof(from); i++) {
            int n = snprintf(from + o, sizeof(from) - o, "%s%s", o ? " or " : "",
                             x->c->env_from.items[i].key);
            o += n > 0 ? (size_t)n : 0;
        }
        if (from[0] != '\0') {
            snprintf(x->next, sizeof(x->next),
                     "Add %s to the container's env, or as a key of %s (loaded with envFrom): the "
                     "application stops without it",
                     m.name, from);
        } else if (!x->c->env_known) {
            snprintf(x->next, sizeof(x->next),
                     "Set environment variable %s for the container (in its env, or as a key of a "
                     "ConfigMap/Secret it loads with envFrom): the application stops without it",
                     m.name);
        } else {
            snprintf(x->next, sizeof(x->next),
                     "Add %s to the container's env (a value, or a key of a ConfigMap or Secret): "
                     "the application stops without it",
                     m.name);
        }
    } else {
        snprintf(x->next, sizeof(x->next),
                 "The application looked up '%s' and it was not there: check the configuration it "
                 "reads for %s (its environment, a ConfigMap or Secret, a config file)",
                 m.name, m.name);
    }
    x->cmds |= CMD_DESCRIBE;
    return 1;
}

/* ---- the node ------------------------------------------------------------------- */

/* Is e a NodeNotReady event of this pod (the node controller's "Node is not
 * ready") or of its node ("Node N status is now: NodeNotReady")? */
static int node_not_ready_event(const struct dctx *x, const struct krc_report_event *e)
{
    if (!str_eq(e->reason, "NodeNotReady")) {
        return 0;
    }
    if (krc_report_event_is_pod(x->r, e)) {
        return 1;
    }
    return str_eq(e->object_kind, "Node") && x->r->node_name != NULL &&
           str_eq(e->object_name, x->r->node_name);
}

/* The node's Ready condition when it is False or Unknown and did not turn so
 * only after the termination; *ev: a NodeNotReady event around the
 * termination (NULL when none). NULL and no event: nothing says the node
 * was down. */
const struct krc_report_node_condition *krc_diag_node_not_ready(const struct dctx *x,
                                                                const struct krc_report_event **ev)
{
    const struct krc_report_node_condition *ready = NULL;
    size_t i;

    *ev = NULL;
    for (i = 0; i < x->r->n_events; i++) {
        const struct krc_report_event *e = &x->r->events[i];
        /* the node controller marks a node NotReady some 40 s after its
         * last status; allow it two minutes past the window */
        if (node_not_ready_event(x, e) && krc_diag_ev_in_window(e, x->lo, x->hi + 120) &&
            (*ev == NULL || e->last_timestamp > (*ev)->last_timestamp)) {
            *ev = e;
        }
    }
    for (i = 0; x->r->node.present && i < x->r->node.n_conditions; i++) {
        const struct krc_report_node_condition *c = &x->r->node.conditions[i];
        if (str_eq(c->type, "Ready") && c->status != NULL && !str_eq(c->status, "True") &&
            (c->last_transition == 0 || x->hi == 0 || c->last_transition <= x->hi + 120)) {
            ready = c;
        }
    }
    return ready;
}
