/* `kubectl describe node` text -> Node JSON (describe_node.h). */
#include "krc/explain/describe_node.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/mem.h"

/* 1 when the line (len bytes) holds word. */
static int has_word(const char *line, size_t len, const char *word)
{
    size_t wl = strlen(word);

    for (size_t i = 0; i + wl <= len; i++) {
        if (memcmp(line + i, word, wl) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Lines only `kubectl describe node` prints (at the start of a line, after
 * indentation), and the conditions table's header (Type Status
 * LastHeartbeatTime ...). */
int krc_describe_node_is(const char *data, size_t len)
{
    static const char *const marks[] = {"Roles:",
                                        "Taints:",
                                        "Unschedulable:",
                                        "System Info:",
                                        "Kubelet Version:",
                                        "Kernel Version:",
                                        "Container Runtime Version:",
                                        "Non-terminated Pods:",
                                        "Allocated resources:",
                                        "PodCIDR:",
                                        "ProviderID:",
                                        "Lease:",
                                        "Type "};
    enum { N_MARKS = sizeof(marks) / sizeof(marks[0]) };
    int seen[N_MARKS] = {0};
    int n = 0;
    size_t i = 0;

    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl != NULL ? (size_t)(nl - data) : len;
        size_t s = i;

        while (s < end && (data[s] == ' ' || data[s] == '\t')) {
            s++;
        }
        for (size_t k = 0; k < N_MARKS; k++) {
            size_t ml = strlen(marks[k]);
            if (seen[k] || end - s < ml || memcmp(data + s, marks[k], ml) != 0) {
                continue;
            }
            if (k == N_MARKS - 1 && !has_word(data + s, end - s, "LastHeartbeatTime")) {
                continue;
            }
            seen[k] = 1;
            n++;
        }
        i = end + 1;
    }
    return n >= 2;
}

/* One line: its text without the indentation and the line end. */
struct line {
    const char *s;
    size_t len;
    size_t indent;
};

enum section { SEC_NONE, SEC_CONDITIONS, SEC_CAPACITY, SEC_ALLOCATABLE, SEC_SYSINFO };

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* "Key:" at the start of l: 1 and the value (trimmed) in *v, *vlen. */
static int key_value(const struct line *l, const char *key, const char **v, size_t *vlen)
{
    size_t kl = strlen(key);
    size_t i;

    if (l->len < kl || memcmp(l->s, key, kl) != 0) {
        return 0;
    }
    for (i = kl; i < l->len && is_blank(l->s[i]); i++) {
    }
    *v = l->s + i;
    *vlen = l->len - i;
    while (*vlen > 0 && is_blank((*v)[*vlen - 1])) {
        (*vlen)--;
    }
    return 1;
}

/* A JSON string of len bytes, or NULL (out of memory). */
static cJSON *str_n(const char *s, size_t len)
{
    char *copy = krc_malloc(len + 1);
    cJSON *j;

    if (copy == NULL) {
        return NULL;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    j = cJSON_CreateString(copy);
    krc_free(copy);
    return j;
}

/* Add key: s[0..len) to o; 0 or -1 (out of memory). */
static int add_str(cJSON *o, const char *key, const char *s, size_t len)
{
    cJSON *j = str_n(s, len);

    if (j == NULL || !cJSON_AddItemToObject(o, key, j)) {
        cJSON_Delete(j);
        return -1;
    }
    return 0;
}

/* The object member key of o, created when missing; NULL when out of memory. */
static cJSON *obj(cJSON *o, const char *key)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

    return m != NULL ? m : cJSON_AddObjectToObject(o, key);
}

/* "key:   value" under Capacity / Allocatable / System Info. */
static int split_colon(const struct line *l, const char **k, size_t *klen, const char **v,
                       size_t *vlen)
{
    const char *colon = memchr(l->s, ':', l->len);

    if (colon == NULL || colon == l->s) {
        return 0;
    }
    *k = l->s;
    *klen = (size_t)(colon - l->s);
    *v = colon + 1;
    *vlen = l->len - *klen - 1;
    while (*vlen > 0 && is_blank(**v)) {
        (*v)++;
        (*vlen)--;
    }
    return 1;
}

/* The cells of a conditions row: apart by two or more spaces (kubectl's
 * alignment), else word by word with the two times skipped. Up to 6. */
static size_t row_cells(const struct line *l, const char **cell, size_t *clen)
{
    size_t n = 0;
    size_t i = 0;
    const char *w[64];
    size_t wl[64];
    size_t nw = 0;

    while (i < l->len && n < 6) {
        size_t start = i;
        size_t end;
        while (i < l->len && !(is_blank(l->s[i]) && i + 1 < l->len && is_blank(l->s[i + 1])) &&
               l->s[i] != '\t') {
            i++;
        }
        end = i;
        if (n == 5) {
            end = l->len; /* the message: to the end of the line */
            i = l->len;
        }
        cell[n] = l->s + start;
        clen[n++] = end - start;
        while (i < l->len && is_blank(l->s[i])) {
            i++;
        }
    }
    if (n >= 5 && memchr(cell[0], ' ', clen[0]) == NULL && memchr(cell[1], ' ', clen[1]) == NULL) {
        return n; /* aligned: Type and Status are one word each */
    }
    /* squeezed: Type Status Day, DD Mon YYYY HH:MM:SS +ZZZZ (twice) Reason Message... */
    n = 0;
    for (i = 0; i < l->len && nw < 64;) {
        while (i < l->len && is_blank(l->s[i])) {
            i++;
        }
        if (i == l->len) {
            break;
        }
        w[nw] = l->s + i;
        while (i < l->len && !is_blank(l->s[i])) {
            i++;
        }
        wl[nw] = (size_t)(l->s + i - w[nw]);
        nw++;
    }
    if (nw >= 15 && wl[2] > 0 && w[2][wl[2] - 1] == ',' && wl[8] > 0 && w[8][wl[8] - 1] == ',') {
        cell[0] = w[0], clen[0] = wl[0];
        cell[1] = w[1], clen[1] = wl[1];
        cell[4] = w[14], clen[4] = wl[14];
        cell[5] = nw > 15 ? w[15] : w[14] + wl[14];
        clen[5] = nw > 15 ? (size_t)(l->s + l->len - w[15]) : 0;
        return 6;
    }
    if (nw >= 2) {
        cell[0] = w[0], clen[0] = wl[0];
        cell[1] = w[1], clen[1] = wl[1];
        return 2;
    }
    return 0;
}

static int add_condition(cJSON *conds, const struct line *l)
{
    const char *cell[6];
    size_t clen[6];
    size_t n = row_cells(l, cell, clen);
    cJSON *c;

    if (n < 2) {
        return 0; /* not a row */
    }
    c = cJSON_CreateObject();
    if (c == NULL || !cJSON_AddItemToArray(conds, c)) {
        cJSON_Delete(c);
        return -1;
    }
    if (add_str(c, "type", cell[0], clen[0]) < 0 || add_str(c, "status", cell[1], clen[1]) < 0) {
        return -1;
    }
    if (n >= 5 && clen[4] > 0 && add_str(c, "reason", cell[4], clen[4]) < 0) {
        return -1;
    }
    if (n >= 6 && clen[5] > 0) {
        while (clen[5] > 0 && is_blank(cell[5][clen[5] - 1])) {
            clen[5]--;
        }
        if (add_str(c, "message", cell[5], clen[5]) < 0) {
            return -1;
        }
    }
    return 0;
}

static const struct {
    const char *label;
    const char *key;
} SYSINFO[] = {{"Kernel Version", "kernelVersion"},
               {"OS Image", "osImage"},
               {"Container Runtime Version", "containerRuntimeVersion"},
               {"Kubelet Version", "kubeletVersion"}};

/* A line under a section; 0 or -1 (out of memory). */
static int section_line(enum section sec, const struct line *l, cJSON *status)
{
    const char *k;
    const char *v;
    size_t klen;
    size_t vlen;

    if (sec == SEC_CONDITIONS) {
        if ((l->len >= 4 && memcmp(l->s, "Type", 4) == 0) ||
            (l->len >= 4 && memcmp(l->s, "----", 4) == 0)) {
            return 0; /* the header and its rule */
        }
        cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
        if (conds == NULL && (conds = cJSON_AddArrayToObject(status, "conditions")) == NULL) {
            return -1;
        }
        return add_condition(conds, l);
    }
    if (!split_colon(l, &k, &klen, &v, &vlen)) {
        return 0;
    }
    if (sec == SEC_CAPACITY || sec == SEC_ALLOCATABLE) {
        cJSON *m = obj(status, sec == SEC_CAPACITY ? "capacity" : "allocatable");
        char key[256];
        if (m == NULL) {
            return -1;
        }
        snprintf(key, sizeof(key), "%.*s", (int)(klen < 255 ? klen : 255), k);
        return vlen > 0 ? add_str(m, key, v, vlen) : 0;
    }
    for (size_t i = 0; sec == SEC_SYSINFO && i < sizeof(SYSINFO) / sizeof(SYSINFO[0]); i++) {
        if (strlen(SYSINFO[i].label) == klen && memcmp(k, SYSINFO[i].label, klen) == 0 &&
            vlen > 0) {
            cJSON *info = obj(status, "nodeInfo");
            return info != NULL ? add_str(info, SYSINFO[i].key, v, vlen) : -1;
        }
    }
    return 0;
}

/* Cut the text into lines; *ret (krc_free) holds *n of them. */
static int cut_lines(const char *text, size_t len, struct line **ret, size_t *n,
                     struct krc_error *err)
{
    size_t cap = 0;
    size_t i = 0;
    struct line *l = NULL;

    *n = 0;
    for (size_t k = 0; k < len; k++) {
        cap += text[k] == '\n';
    }
    cap++;
    if (cap > KRC_DESCRIBE_NODE_MAX_LINES) {
        return krc_error_set(err, KRC_ETOOBIG, "more than %d lines", KRC_DESCRIBE_NODE_MAX_LINES);
    }
    l = krc_calloc(cap, sizeof(*l));
    if (l == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl != NULL ? (size_t)(nl - text) : len;
        size_t s = i;
        while (s < end && is_blank(text[s])) {
            s++;
        }
        l[*n].s = text + s;
        l[*n].indent = s - i;
        l[*n].len = end - s;
        while (l[*n].len > 0 &&
               (l[*n].s[l[*n].len - 1] == '\r' || is_blank(l[*n].s[l[*n].len - 1]))) {
            l[*n].len--;
        }
        (*n)++;
        i = end + 1;
    }
    *ret = l;
    return 0;
}

int krc_describe_node(const char *text, size_t len, char **ret_node_json, struct krc_error *err)
{
    struct line *l = NULL;
    size_t n = 0;
    size_t top = (size_t)-1;
    enum section sec = SEC_NONE;
    cJSON *node = NULL;
    cJSON *status;
    const char *v;
    size_t vlen;
    int named = 0;
    int rc = cut_lines(text, len, &l, &n, err);

    *ret_node_json = NULL;
    if (rc < 0) {
        return rc;
    }
    /* the top level: the indentation of the Name line */
    for (size_t i = 0; i < n && top == (size_t)-1; i++) {
        if (key_value(&l[i], "Name:", &v, &vlen) && vlen > 0) {
            top = l[i].indent;
        }
    }
    if (top == (size_t)-1) {
        rc = krc_error_set(err, KRC_EINVAL, "no \"Name:\" line (kubectl describe node NODE)");
        goto out;
    }
    node = cJSON_CreateObject();
    if (node == NULL || cJSON_AddStringToObject(node, "apiVersion", "v1") == NULL ||
        cJSON_AddStringToObject(node, "kind", "Node") == NULL ||
        (status = cJSON_AddObjectToObject(node, "status")) == NULL) {
        goto oom;
    }
    for (size_t i = 0; i < n; i++) {
        if (l[i].len == 0) {
            continue;
        }
        if (l[i].indent > top) {
            if (sec != SEC_NONE && section_line(sec, &l[i], status) < 0) {
                goto oom;
            }
            continue;
        }
        sec = SEC_NONE;
        if (!named && key_value(&l[i], "Name:", &v, &vlen) && vlen > 0) {
            cJSON *md = obj(node, "metadata");
            if (md == NULL || add_str(md, "name", v, vlen) < 0) {
                goto oom;
            }
            named = 1;
        } else if (key_value(&l[i], "Unschedulable:", &v, &vlen) &&
                   ((vlen == 4 && memcmp(v, "true", 4) == 0) ||
                    (vlen == 5 && memcmp(v, "false", 5) == 0))) {
            cJSON *spec = obj(node, "spec");
            if (spec == NULL || cJSON_AddBoolToObject(spec, "unschedulable", vlen == 4) == NULL) {
                goto oom;
            }
        } else if (key_value(&l[i], "Conditions:", &v, &vlen) && vlen == 0) {
            sec = SEC_CONDITIONS;
        } else if (key_value(&l[i], "Capacity:", &v, &vlen) && vlen == 0) {
            sec = SEC_CAPACITY;
        } else if (key_value(&l[i], "Allocatable:", &v, &vlen) && vlen == 0) {
            sec = SEC_ALLOCATABLE;
        } else if (key_value(&l[i], "System Info:", &v, &vlen) && vlen == 0) {
            sec = SEC_SYSINFO;
        }
    }
    *ret_node_json = cJSON_PrintUnformatted(node);
    if (*ret_node_json == NULL) {
        goto oom;
    }
    {
        /* hand out a krc_malloc'd copy (callers free with krc_free) */
        char *copy = krc_strdup(*ret_node_json);
        cJSON_free(*ret_node_json);
        *ret_node_json = copy;
        if (copy == NULL) {
            goto oom;
        }
    }
    rc = 0;
    goto out;
oom:
    rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
out:
    cJSON_Delete(node);
    krc_free(l);
    return rc;
}
