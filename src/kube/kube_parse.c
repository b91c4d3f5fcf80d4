#include "krc/kube/kube_parse.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kube_parse_private.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

/* ---- JSON helpers ----------------------------------------------------- */

static const char *type_name(const cJSON *v)
{
    if (v == NULL) {
        return "nothing";
    }
    if (cJSON_IsString(v)) {
        return "a string";
    }
    if (cJSON_IsNumber(v)) {
        return "a number";
    }
    if (cJSON_IsBool(v)) {
        return "a boolean";
    }
    if (cJSON_IsNull(v)) {
        return "null";
    }
    if (cJSON_IsArray(v)) {
        return "an array";
    }
    if (cJSON_IsObject(v)) {
        return "an object";
    }
    return "an invalid value";
}

const char *krc_kube_parse_type_name(const cJSON *v)
{
    return type_name(v);
}

static int is_absent(const cJSON *v)
{
    return v == NULL || cJSON_IsNull(v);
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj)) {
        return NULL;
    }
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Does the text end inside a string or an open object/array? Then a parse
 * error is best reported as a truncated document. */
static int ends_open(const char *json, size_t len)
{
    size_t i;
    long depth = 0;
    int in_str = 0;

    for (i = 0; i < len; i++) {
        char ch = json[i];
        if (in_str) {
            if (ch == '\\') {
                i++;
            } else if (ch == '"') {
                in_str = 0;
            }
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return in_str || depth > 0;
}

/* Parse with an error position converted to line/column. */
static cJSON *parse_json(const char *json, size_t len, struct krc_error *err)
{
    const char *end = NULL;
    cJSON *root;
    size_t i;
    size_t off;
    unsigned long line = 1;
    unsigned long col = 1;
    char near[32];
    size_t nn = 0;
    int trailing = 0;

    if (len > KRC_KUBE_PARSE_MAX) {
        krc_error_set(err, KRC_ETOOBIG, "document of %zu bytes exceeds the %u byte limit", len,
                      KRC_KUBE_PARSE_MAX);
        return NULL;
    }
    for (i = 0;
         i < len && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t');
         i++) {
    }
    if (i == len) {
        krc_error_set(err, KRC_EPARSE, "not JSON: the input is empty");
        return NULL;
    }
    root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (root != NULL) {
        /* Trailing data after the value? */
        off = (size_t)(end - json);
        while (off < len && (json[off] == ' ' || json[off] == '\n' || json[off] == '\r' ||
                             json[off] == '\t' || json[off] == '\0')) {
            off++;
        }
        if (off >= len) {
            return root;
        }
        cJSON_Delete(root);
        trailing = 1;
    } else {
        off = (end != NULL && end >= json && end <= json + len) ? (size_t)(end - json) : len;
    }
    for (i = 0; i < off && i < len; i++) {
        if (json[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    for (i = off; i < len && nn < sizeof(near) - 1 && nn < 16; i++) {
        unsigned char ch = (unsigned char)json[i];
        if (ch == '\n' || ch == '\r') {
            break;
        }
        near[nn++] = (ch >= 0x20 && ch < 0x7f && ch != '\'') ? (char)ch : '?';
    }
    near[nn] = '\0';
    if (off >= len || (!trailing && off + 1 >= len && ends_open(json, len))) {
        krc_error_set(err, KRC_EPARSE, "not JSON at line %lu, column %lu: unexpected end of input",
                      line, col);
    } else if (trailing || nn == 0) {
        krc_error_set(err, KRC_EPARSE, "not JSON at line %lu, column %lu: trailing data", line,
                      col);
    } else {
        krc_error_set(err, KRC_EPARSE, "not JSON at line %lu, column %lu near '%s'", line, col,
                      near);
    }
    return NULL;
}

/* A context for field errors: the path of the object being read. */
struct ctx {
    struct krc_error *err;
    char path[160];
};

static int field_error(struct ctx *cx, const char *key, const char *want, const cJSON *got)
{
    return krc_error_set(cx->err, KRC_EINVAL, "%s%s%s: expected %s, got %s", cx->path,
                         cx->path[0] ? "." : "", key, want, type_name(got));
}

/* Copy an optional string member; absent/null -> NULL. */
static int get_str(struct ctx *cx, const cJSON *obj, const char *key, char **ret)
{
    const cJSON *v = member(obj, key);
    char *s;

    if (is_absent(v)) {
        return 0;
    }
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        return field_error(cx, key, "a string", v);
    }
    s = krc_strdup(v->valuestring);
    if (s == NULL) {
        return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
    }
    krc_free(*ret);
    *ret = s;
    return 0;
}

static int get_int(struct ctx *cx, const cJSON *obj, const char *key, int *ret)
{
    const cJSON *v = member(obj, key);
    double d;

    if (is_absent(v)) {
        return 0;
    }
    if (!cJSON_IsNumber(v)) {
        return field_error(cx, key, "a number", v);
    }
    d = v->valuedouble;
    if (d < (double)INT_MIN || d > (double)INT_MAX) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s.%s: %g is out of range", cx->path, key, d);
    }
    *ret = (int)d;
    return 0;
}

static int get_bool(struct ctx *cx, const cJSON *obj, const char *key, int *ret)
{
    const cJSON *v = member(obj, key);

    if (is_absent(v)) {
        return 0;
    }
    if (!cJSON_IsBool(v)) {
        return field_error(cx, key, "a boolean", v);
    }
    *ret = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

/* Timestamp member; absent/null -> leaves *ret, sets *present 0. */
static int get_time(struct ctx *cx, const cJSON *obj, const char *key, int64_t *ret, int *present)
{
    const cJSON *v = member(obj, key);
    int64_t t;

    if (present != NULL) {
        *present = 0;
    }
    if (is_absent(v)) {
        return 0;
    }
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        return field_error(cx, key, "an RFC 3339 timestamp string", v);
    }
    if (v->valuestring[0] == '\0') {
        return 0;
    }
    if (krc_parse_rfc3339(v->valuestring, strlen(v->valuestring), &t) < 0) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s%s%s: bad timestamp \"%.40s\"", cx->path,
                             cx->path[0] ? "." : "", key, v->valuestring);
    }
    *ret = t < 0 ? 0 : t;
    if (present != NULL) {
        *present = 1;
    }
    return 0;
}

/* Object member that must be an object when present. */
static int get_obj(struct ctx *cx, const cJSON *obj, const char *key, const cJSON **ret)
{
    const cJSON *v = member(obj, key);

    *ret = NULL;
    if (is_absent(v)) {
        return 0;
    }
    if (!cJSON_IsObject(v)) {
        return field_error(cx, key, "an object", v);
    }
    *ret = v;
    return 0;
}

static int get_arr(struct ctx *cx, const cJSON *obj, const char *key, const cJSON **ret)
{
    const cJSON *v = member(obj, key);

    *ret = NULL;
    if (is_absent(v)) {
        return 0;
    }
    if (!cJSON_IsArray(v)) {
        return field_error(cx, key, "an array", v);
    }
    *ret = v;
    return 0;
}

/* string map (labels, limits) -> kv list; numbers are accepted as values
 * because quantities written by hand are often bare numbers. */
static int get_map(struct ctx *cx, const cJSON *obj, const char *key, struct krc_kv_list *l)
{
    const cJSON *m;
    const cJSON *it;
    int rc = get_obj(cx, obj, key, &m);
    char num[64];

    if (rc < 0 || m == NULL) {
        return rc;
    }
    cJSON_ArrayForEach(it, m)
    {
        const char *val;
        if (it->string == NULL) {
            continue;
        }
        if (cJSON_IsString(it) && it->valuestring != NULL) {
            val = it->valuestring;
        } else if (cJSON_IsNumber(it)) {
            snprintf(num, sizeof(num), "%.17g", it->valuedouble);
            val = num;
        } else {
            return krc_error_set(cx->err, KRC_EINVAL, "%s.%s.%s: expected a string, got %s",
                                 cx->path, key, it->string, type_name(it));
        }
        if (krc_kv_list_put(l, it->string, val) < 0) {
            return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static void ctx_path(struct ctx *cx, const char *fmt, const char *a, int idx)
{
    snprintf(cx->path, sizeof(cx->path), fmt, a, idx);
}

/* ---- pod -------------------------------------------------------------- */

static int parse_term(struct ctx *cx, const cJSON *t, struct krc_report_term *out)
{
    int rc;
    int has;

    out->present = 1;
    /* A pasted status often lacks exitCode: keep the rest, diagnose says so. */
    out->exit_code_missing = is_absent(member(t, "exitCode"));
    if ((rc = get_int(cx, t, "exitCode", &out->exit_code)) < 0 ||
        (rc = get_int(cx, t, "signal", &out->signal)) < 0 ||
        (rc = get_str(cx, t, "reason", &out->reason)) < 0 ||
        (rc = get_str(cx, t, "message", &out->message)) < 0 ||
        (rc = get_str(cx, t, "containerID", &out->container_id)) < 0 ||
        (rc = get_time(cx, t, "startedAt", &out->started_at, &has)) < 0 ||
        (rc = get_time(cx, t, "finishedAt", &out->finished_at, &has)) < 0) {
        return rc;
    }
    return 0;
}

static struct krc_report_container *find_container(struct krc_report *r, const char *name,
                                                   int is_init)
{
    size_t i;

    for (i = 0; i < r->n_containers; i++) {
        struct krc_report_container *c = &r->containers[i];
        if (c->is_init == is_init && c->name != NULL && strcmp(c->name, name) == 0) {
            return c;
        }
    }
    return NULL;
}

/* A probe with the Kubernetes defaults applied; only what diagnose needs. */
static int parse_probe(struct ctx *cx, const cJSON *js, const char *key, const char *base,
                       struct krc_report_probe *p)
{
    static const char *const handlers[] = {"exec", "httpGet", "tcpSocket", "grpc"};
    const cJSON *o;
    int grace = -1;
    int rc;
    size_t i;

    memset(p, 0, sizeof(*p));
    if ((rc = get_obj(cx, js, key, &o)) < 0 || o == NULL) {
        return rc;
    }
    p->present = 1;
    p->handler = "unknown";
    p->period = 10;
    p->timeout = 1;
    p->failure_threshold = 3;
    snprintf(cx->path, sizeof(cx->path), "%s.%s", base, key);
    if ((rc = get_int(cx, o, "initialDelaySeconds", &p->initial_delay)) < 0 ||
        (rc = get_int(cx, o, "periodSeconds", &p->period)) < 0 ||
        (rc = get_int(cx, o, "timeoutSeconds", &p->timeout)) < 0 ||
        (rc = get_int(cx, o, "failureThreshold", &p->failure_threshold)) < 0 ||
        (rc = get_int(cx, o, "terminationGracePeriodSeconds", &grace)) < 0) {
        return rc;
    }
    for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
        if (!is_absent(member(o, handlers[i]))) {
            p->handler = handlers[i];
            break;
        }
    }
    /* Nonsense values (hand-edited YAML) fall back to the defaults. */
    p->initial_delay = p->initial_delay < 0 ? 0 : p->initial_delay;
    p->period = p->period < 1 ? 10 : p->period;
    p->timeout = p->timeout < 1 ? 1 : p->timeout;
    p->failure_threshold = p->failure_threshold < 1 ? 3 : p->failure_threshold;
    p->grace_period = grace;
    return 0;
}

/* A container's name, when given, must be a non-empty string. */
static int check_name(struct ctx *cx, const cJSON *js)
{
    const cJSON *name = member(js, "name");

    if (is_absent(name)) {
        return 0;
    }
    if (!cJSON_IsString(name) || name->valuestring == NULL || name->valuestring[0] == '\0') {
        return krc_error_set(cx->err, KRC_EINVAL, "%s.name: expected a non-empty string, got %s",
                             cx->path, type_name(name));
    }
    return 0;
}

/* The name of a container entry. A pasted partial Pod (krc explain) may
 * leave names out: a status entry without one belongs to the only spec
 * container of its kind when both lists hold exactly one; otherwise the
 * entry is called "(unnamed)" ("(unnamed 2)", ... by position), which the
 * spec and status entries at the same position share. Never a real name, so
 * no kubectl command is built from it. */
static const char *entry_name(const cJSON *js, int is_init, int idx, int n, int status,
                              const struct krc_report *r, char *buf, size_t bufsz)
{
    const cJSON *name = member(js, "name");
    const struct krc_report_container *only = NULL;
    size_t i;
    int kind = 0;

    if (cJSON_IsString(name) && name->valuestring != NULL && name->valuestring[0] != '\0') {
        return name->valuestring;
    }
    if (status && n == 1) {
        for (i = 0; i < r->n_containers; i++) {
            if (r->containers[i].is_init == is_init && r->containers[i].has_spec) {
                only = &r->containers[i];
                kind++;
            }
        }
        if (kind == 1 && only->name != NULL && only->name[0] != '(') {
            return only->name;
        }
    }
    if (idx == 0) {
        snprintf(buf, bufsz, "(unnamed%s)", is_init ? " init" : "");
    } else {
        snprintf(buf, bufsz, "(unnamed%s %d)", is_init ? " init" : "", idx + 1);
    }
    return buf;
}

/* The JVM heap options in `text` (an environment value, a command or an
 * argument, which may be a whole `sh -c` line), appended to *acc
 * space-separated: -Xmx, -XX:MaxHeapSize, -XX:MaxRAMPercentage,
 * -XX:MaxRAMFraction. 0 or KRC_ENOMEM. */
static int jvm_heap_tokens(const char *text, struct krc_buf *acc)
{
    static const char *const opts[] = {
        "-Xmx", "-XX:MaxHeapSize=", "-XX:MaxRAMPercentage=", "-XX:MaxRAMFraction="};
    const char *p = text;

    while (p != NULL && (p = strchr(p, '-')) != NULL) {
        size_t n = 0;
        int hit = 0;
        for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]) && !hit; i++) {
            hit = strncmp(p, opts[i], strlen(opts[i])) == 0 &&
                  (p == text || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '"' || p[-1] == '\'' ||
                   p[-1] == '=');
        }
        if (!hit) {
            p++;
            continue;
        }
        while (p[n] != '\0' && p[n] != ' ' && p[n] != '\t' && p[n] != '"' && p[n] != '\'' &&
               p[n] != '\n' && n < 64) {
            n++;
        }
        /* bounded: a text with more options than fit keeps the last ones
         * (the JVM takes the last of each) */
        if (acc->len + n + 2 > acc->max) {
            acc->len = 0;
        }
        if ((acc->len > 0 && krc_buf_append_str(acc, " ") < 0) || krc_buf_append(acc, p, n) < 0) {
            return KRC_ENOMEM;
        }
        p += n;
    }
    return 0;
}

/* The JVM's own environment variables, and JAVA_OPTS (the start scripts'
 * convention). */
static int is_jvm_env(const char *name)
{
    return strcmp(name, "JAVA_TOOL_OPTIONS") == 0 || strcmp(name, "JDK_JAVA_OPTIONS") == 0 ||
           strcmp(name, "_JAVA_OPTIONS") == 0 || strcmp(name, "JAVA_OPTS") == 0;
}

static int put_heap(struct ctx *cx, struct krc_report_container *c, const char *where,
                    struct krc_buf *b)
{
    if (b->len > 0 && krc_kv_list_put(&c->jvm_heap, where, b->data) < 0) {
        return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
    }
    return 0;
}

/* spec.containers[].env / envFrom / command / args: where each variable comes
 * from (never a literal value) and the JVM heap options. */
static int parse_env(struct ctx *cx, const cJSON *js, struct krc_report_container *c)
{
    static const char *const refs[][2] = {{"secretKeyRef", "secret"},
                                          {"configMapKeyRef", "configMap"}};
    const cJSON *env;
    const cJSON *from;
    const cJSON *it;
    struct krc_buf b;
    char src[400];
    int rc;

    if ((rc = get_arr(cx, js, "env", &env)) < 0 || (rc = get_arr(cx, js, "envFrom", &from)) < 0) {
        return rc;
    }
    c->env_known = env != NULL || from != NULL;
    krc_buf_init(&b, 4096);
    cJSON_ArrayForEach(it, env)
    {
        const cJSON *name = member(it, "name");
        const cJSON *value = member(it, "value");
        const cJSON *vf = member(it, "valueFrom");
        if (!cJSON_IsString(name) || name->valuestring[0] == '\0') {
            continue; /* the API server refuses it; a paste may hold anything */
        }
        snprintf(src, sizeof(src), "value");
        if (cJSON_IsObject(vf)) {
            snprintf(src, sizeof(src), "%s", "fieldRef");
            for (size_t i = 0; i < 2; i++) {
                const cJSON *ref = member(vf, refs[i][0]);
                const cJSON *rn = member(ref, "name");
                const cJSON *rk = member(ref, "key");
                if (cJSON_IsObject(ref)) {
                    snprintf(src, sizeof(src), "%s %.120s key %.120s", refs[i][1],
                             cJSON_IsString(rn) ? rn->valuestring : "?",
                             cJSON_IsString(rk) ? rk->valuestring : "?");
                }
            }
            if (cJSON_IsObject(member(vf, "resourceFieldRef"))) {
                snprintf(src, sizeof(src), "resourceFieldRef");
            }
        } else if (is_jvm_env(name->valuestring) && cJSON_IsString(value)) {
            b.len = 0;
            if (jvm_heap_tokens(value->valuestring, &b) < 0 ||
                (rc = put_heap(cx, c, name->valuestring, &b)) < 0) {
                krc_buf_cleanup(&b);
                return rc < 0 ? rc : krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
            }
        }
        if (krc_kv_list_put(&c->env, name->valuestring, src) < 0) {
            krc_buf_cleanup(&b);
            return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
        }
    }
    cJSON_ArrayForEach(it, from)
    {
        const cJSON *pre = member(it, "prefix");
        for (size_t i = 0; i < 2; i++) {
            const cJSON *ref = member(it, i == 0 ? "secretRef" : "configMapRef");
            const cJSON *rn = member(ref, "name");
            if (!cJSON_IsObject(ref)) {
                continue;
            }
            snprintf(src, sizeof(src), "%s %.200s", i == 0 ? "secret" : "configMap",
                     cJSON_IsString(rn) ? rn->valuestring : "?");
            if (krc_kv_list_put(&c->env_from, src, cJSON_IsString(pre) ? pre->valuestring : "") <
                0) {
                krc_buf_cleanup(&b);
                return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
            }
        }
    }
    b.len = 0;
    for (size_t k = 0; k < 2; k++) {
        const cJSON *arr = member(js, k == 0 ? "command" : "args");
        if (!cJSON_IsArray(arr)) {
            continue;
        }
        cJSON_ArrayForEach(it, arr)
        {
            if (cJSON_IsString(it) && jvm_heap_tokens(it->valuestring, &b) < 0) {
                krc_buf_cleanup(&b);
                return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
            }
        }
    }
    rc = put_heap(cx, c, "command/args", &b);
    krc_buf_cleanup(&b);
    return rc;
}

static int parse_spec_container(struct ctx *cx, const cJSON *js, int is_init, int idx, int n,
                                struct krc_report *r)
{
    struct krc_report_container *c;
    const cJSON *res;
    char nbuf[32];
    const char *name;
    char *policy = NULL;
    char base[160];
    int rc;

    if (!cJSON_IsObject(js)) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s: expected an object, got %s", cx->path,
                             type_name(js));
    }
    if ((rc = check_name(cx, js)) < 0) {
        return rc;
    }
    name = entry_name(js, is_init, idx, n, 0, r, nbuf, sizeof(nbuf));
    c = krc_report_add_container(r);
    if (c == NULL || (c->name = krc_strdup(name)) == NULL) {
        return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
    }
    c->is_init = is_init;
    if ((rc = get_str(cx, js, "image", &c->image)) < 0 ||
        (rc = get_str(cx, js, "terminationMessagePolicy", &c->termination_message_policy)) < 0 ||
        (rc = get_str(cx, js, "restartPolicy", &policy)) < 0) {
        krc_free(policy);
        return rc;
    }
    c->is_sidecar = krc_kube_is_sidecar(is_init, policy);
    krc_free(policy);
    c->has_spec = 1;
    c->has_readiness = !is_absent(member(js, "readinessProbe"));
    memcpy(base, cx->path, sizeof(base));
    if ((rc = parse_probe(cx, js, "livenessProbe", base, &c->liveness)) < 0 ||
        (rc = parse_probe(cx, js, "startupProbe", base, &c->startup)) < 0) {
        return rc;
    }
    memcpy(cx->path, base, sizeof(base));
    c->has_liveness = c->liveness.present;
    c->has_startup = c->startup.present;
    if ((rc = parse_env(cx, js, c)) < 0) {
        return rc;
    }
    if ((rc = get_obj(cx, js, "resources", &res)) < 0) {
        return rc;
    }
    if (res != NULL) {
        memcpy(base, cx->path, sizeof(base));
        snprintf(cx->path, sizeof(cx->path), "%s.resources", base);
        if ((rc = get_map(cx, res, "limits", &c->limits)) < 0 ||
            (rc = get_map(cx, res, "requests", &c->requests)) < 0) {
            return rc;
        }
        memcpy(cx->path, base, sizeof(base));
    }
    return 0;
}

static int parse_status_container(struct ctx *cx, const cJSON *js, int is_init, int idx, int n,
                                  struct krc_report *r)
{
    struct krc_report_container *c;
    char nbuf[32];
    const char *name;
    const cJSON *state;
    const cJSON *last;
    const cJSON *sub;
    char base[160];
    int rc;

    if (!cJSON_IsObject(js)) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s: expected an object, got %s", cx->path,
                             type_name(js));
    }
    if ((rc = check_name(cx, js)) < 0) {
        return rc;
    }
    name = entry_name(js, is_init, idx, n, 1, r, nbuf, sizeof(nbuf));
    c = find_container(r, name, is_init);
    if (c == NULL) {
        /* In status but not in spec (partial object): keep it anyway. */
        c = krc_report_add_container(r);
        if (c == NULL || (c->name = krc_strdup(name)) == NULL) {
            return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
        }
        c->is_init = is_init;
    }
    c->has_status = 1;
    c->status_index = idx;
    c->restart_count_known = !is_absent(member(js, "restartCount"));
    if ((rc = get_int(cx, js, "restartCount", &c->restart_count)) < 0 ||
        (rc = get_bool(cx, js, "ready", &c->ready)) < 0) {
        return rc;
    }
    if (c->image == NULL && (rc = get_str(cx, js, "image", &c->image)) < 0) {
        return rc;
    }
    memcpy(base, cx->path, sizeof(base));
    if ((rc = get_obj(cx, js, "state", &state)) < 0 ||
        (rc = get_obj(cx, js, "lastState", &last)) < 0) {
        return rc;
    }
    if (state != NULL) {
        snprintf(cx->path, sizeof(cx->path), "%s.state", base);
        if ((rc = get_obj(cx, state, "terminated", &sub)) < 0) {
            return rc;
        }
        if (sub != NULL) {
            c->state = KRC_REPORT_STATE_TERMINATED;
            snprintf(cx->path, sizeof(cx->path), "%s.state.terminated", base);
            if ((rc = parse_term(cx, sub, &c->state_term)) < 0) {
                return rc;
            }
            c->state_started_at = c->state_term.started_at;
            /* a status that names the container again (the API refuses it; krc explain
             * may read one) replaces what the first one set */
            krc_free(c->state_reason);
            krc_free(c->state_message);
            c->state_reason = NULL;
            c->state_message = NULL;
            if ((c->state_term.reason &&
                 (c->state_reason = krc_strdup(c->state_term.reason)) == NULL) ||
                (c->state_term.message &&
                 (c->state_message = krc_strdup(c->state_term.message)) == NULL)) {
                return krc_error_set(cx->err, KRC_ENOMEM, "out of memory");
            }
        } else {
            snprintf(cx->path, sizeof(cx->path), "%s.state", base);
            if ((rc = get_obj(cx, state, "waiting", &sub)) < 0) {
                return rc;
            }
            if (sub != NULL) {
                c->state = KRC_REPORT_STATE_WAITING;
                snprintf(cx->path, sizeof(cx->path), "%s.state.waiting", base);
                if ((rc = get_str(cx, sub, "reason", &c->state_reason)) < 0 ||
                    (rc = get_str(cx, sub, "message", &c->state_message)) < 0) {
                    return rc;
                }
            } else {
                if ((rc = get_obj(cx, state, "running", &sub)) < 0) {
                    return rc;
                }
                if (sub != NULL) {
                    c->state = KRC_REPORT_STATE_RUNNING;
                    snprintf(cx->path, sizeof(cx->path), "%s.state.running", base);
                    if ((rc = get_time(cx, sub, "startedAt", &c->state_started_at, NULL)) < 0) {
                        return rc;
                    }
                }
            }
        }
    }
    if (last != NULL) {
        snprintf(cx->path, sizeof(cx->path), "%s.lastState", base);
        if ((rc = get_obj(cx, last, "terminated", &sub)) < 0) {
            return rc;
        }
        if (sub != NULL) {
            snprintf(cx->path, sizeof(cx->path), "%s.lastState.terminated", base);
            if ((rc = parse_term(cx, sub, &c->last)) < 0) {
                return rc;
            }
        }
    }
    memcpy(cx->path, base, sizeof(base));
    return 0;
}

static int parse_containers(struct ctx *cx, const cJSON *parent, const char *key,
                            const char *prefix, int is_init, int status, struct krc_report *r)
{
    const cJSON *arr;
    const cJSON *it;
    int i = 0;
    int n;
    int rc;

    if ((rc = get_arr(cx, parent, key, &arr)) < 0 || arr == NULL) {
        return rc;
    }
    n = cJSON_GetArraySize(arr);
    cJSON_ArrayForEach(it, arr)
    {
        char full[64];
        snprintf(full, sizeof(full), "%s.%s", prefix, key);
        ctx_path(cx, "%s[%d]", full, i);
        rc = status ? parse_status_container(cx, it, is_init, i, n, r)
                    : parse_spec_container(cx, it, is_init, i, n, r);
        if (rc < 0) {
            return rc;
        }
        i++;
    }
    return 0;
}

static int slack_channel_from(const struct krc_kv_list *l, char **ret)
{
    const char *v = krc_kv_list_get(l, "alert-slack-channel");
    size_t i;

    for (i = 0; v == NULL && i < l->n; i++) {
        const char *k = l->items[i].key;
        const char *slash = strrchr(k, '/');
        if (slash != NULL && strcmp(slash + 1, "alert-slack-channel") == 0) {
            v = l->items[i].value;
        }
    }
    if (v == NULL || v[0] == '\0') {
        return 0;
    }
    *ret = krc_strdup(v);
    return *ret == NULL ? KRC_ENOMEM : 0;
}

static int parse_pod_object(const cJSON *pod, struct krc_report *r, struct krc_error *err)
{
    struct ctx cx = {err, ""};
    const cJSON *meta;
    const cJSON *spec;
    const cJSON *status;
    const cJSON *owners;
    const cJSON *it;
    int grace = -1;
    int rc;

    if ((rc = get_obj(&cx, pod, "metadata", &meta)) < 0 ||
        (rc = get_obj(&cx, pod, "spec", &spec)) < 0 ||
        (rc = get_obj(&cx, pod, "status", &status)) < 0) {
        return rc;
    }
    if (meta == NULL && spec == NULL && status == NULL) {
        return krc_error_set(err, KRC_EINVAL, "not a Pod: no metadata, spec or status");
    }
    snprintf(cx.path, sizeof(cx.path), "metadata");
    owners = NULL;
    /* meta is NULL for a pasted partial Pod (status or spec only) */
    if (meta != NULL &&
        ((rc = get_str(&cx, meta, "name", &r->name)) < 0 ||
         (rc = get_str(&cx, meta, "namespace", &r->namespace)) < 0 ||
         (rc = get_str(&cx, meta, "uid", &r->uid)) < 0 ||
         (rc = get_time(&cx, meta, "creationTimestamp", &r->created_at, NULL)) < 0 ||
         (rc = get_map(&cx, meta, "labels", &r->labels)) < 0 ||
         (rc = get_map(&cx, meta, "annotations", &r->annotations)) < 0 ||
         (rc = get_arr(&cx, meta, "ownerReferences", &owners)) < 0)) {
        return rc;
    }
    /* A pasted partial Pod may have no name (krc explain); the API server
     * always sends one. Everything that shows it copes with NULL. */
    if (owners != NULL) {
        const cJSON *pick = NULL;
        cJSON_ArrayForEach(it, owners)
        {
            if (pick == NULL || cJSON_IsTrue(member(it, "controller"))) {
                pick = it;
            }
        }
        snprintf(cx.path, sizeof(cx.path), "metadata.ownerReferences[]");
        if (pick != NULL && ((rc = get_str(&cx, pick, "kind", &r->owner_kind)) < 0 ||
                             (rc = get_str(&cx, pick, "name", &r->owner_name)) < 0)) {
            return rc;
        }
    }
    if (krc_report_resolve_workload(r) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if ((rc = slack_channel_from(&r->annotations, &r->slack_channel)) < 0 ||
        (r->slack_channel == NULL &&
         (rc = slack_channel_from(&r->labels, &r->slack_channel)) < 0)) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (spec != NULL) {
        snprintf(cx.path, sizeof(cx.path), "spec");
        if ((rc = get_str(&cx, spec, "nodeName", &r->node_name)) < 0 ||
            (rc = get_str(&cx, spec, "restartPolicy", &r->restart_policy)) < 0 ||
            (rc = get_int(&cx, spec, "terminationGracePeriodSeconds", &grace)) < 0) {
            return rc;
        }
        if (grace >= 0) {
            r->grace_period = grace;
        }
        if ((rc = parse_containers(&cx, spec, "initContainers", "spec", 1, 0, r)) < 0 ||
            (rc = parse_containers(&cx, spec, "containers", "spec", 0, 0, r)) < 0) {
            return rc;
        }
        /* an object the API server served: a container without env has none */
        r->api_object = cJSON_IsString(member(meta, "resourceVersion"));
        if (r->api_object) {
            for (size_t i = 0; i < r->n_containers; i++) {
                r->containers[i].env_known |= r->containers[i].has_spec;
            }
        }
    }
    if (status != NULL) {
        snprintf(cx.path, sizeof(cx.path), "status");
        if ((rc = get_str(&cx, status, "phase", &r->phase)) < 0 ||
            (rc = get_str(&cx, status, "reason", &r->pod_reason)) < 0 ||
            (rc = get_str(&cx, status, "message", &r->pod_message)) < 0) {
            return rc;
        }
        if ((rc = parse_containers(&cx, status, "initContainerStatuses", "status", 1, 1, r)) < 0 ||
            (rc = parse_containers(&cx, status, "containerStatuses", "status", 0, 1, r)) < 0) {
            return rc;
        }
    }
    /* Kubernetes 1.33+: restart rules, resize, stop signal, device health, ... */
    return krc_kube_parse_pod_fields(pod, r, err);
}

static const char *kind_of(const cJSON *root)
{
    const cJSON *k = member(root, "kind");

    return cJSON_IsString(k) && k->valuestring != NULL ? k->valuestring : NULL;
}

int krc_kube_parse_pod(const char *json, size_t len, struct krc_report *r, struct krc_error *err)
{
    cJSON *root = parse_json(json, len, err);
    const cJSON *pod;
    const char *kind;
    int rc;

    krc_report_clear_pod(r);
    if (root == NULL) {
        return err != NULL ? err->code : KRC_EPARSE;
    }
    pod = root;
    kind = kind_of(root);
    if (!cJSON_IsObject(root)) {
        rc = krc_error_set(err, KRC_EINVAL, "not a Pod (the document is %s)", type_name(root));
        goto out;
    }
    if (kind != NULL && strcmp(kind, "List") == 0) {
        const cJSON *items = member(root, "items");
        int n = cJSON_IsArray(items) ? cJSON_GetArraySize(items) : 0;
        if (n != 1) {
            rc = krc_error_set(err, KRC_EINVAL, "not a Pod (a List of %d items; give one Pod)", n);
            goto out;
        }
        pod = cJSON_GetArrayItem(items, 0);
        kind = kind_of(pod);
    }
    if (kind != NULL && strcmp(kind, "Pod") != 0) {
        rc = krc_error_set(err, KRC_EINVAL, "not a Pod (kind \"%.60s\")", kind);
        goto out;
    }
    if (kind == NULL && member(pod, "spec") == NULL && member(pod, "status") == NULL) {
        rc = krc_error_set(err, KRC_EINVAL, "not a Pod (no kind, spec or status)");
        goto out;
    }
    rc = parse_pod_object(pod, r, err);
out:
    if (rc < 0) {
        krc_report_clear_pod(r);
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- events ----------------------------------------------------------- */

static int parse_event(struct ctx *cx, const cJSON *e, struct krc_report_event *ev)
{
    const cJSON *io;
    const cJSON *src;
    const cJSON *series;
    const cJSON *meta;
    char base[160];
    int64_t created = 0;
    int64_t event_time = 0;
    int64_t series_last = 0;
    int64_t t = 0;
    int has;
    int count = 0;
    int series_count = 0;
    int rc;

    if (!cJSON_IsObject(e)) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s: expected an Event object, got %s", cx->path,
                             type_name(e));
    }
    if (kind_of(e) != NULL && strcmp(kind_of(e), "Event") != 0) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s: not an Event (kind \"%.60s\")", cx->path,
                             kind_of(e));
    }
    memcpy(base, cx->path, sizeof(base));
    if ((rc = get_obj(cx, e, "involvedObject", &io)) < 0 ||
        (io == NULL && (rc = get_obj(cx, e, "regarding", &io)) < 0) ||
        (rc = get_obj(cx, e, "source", &src)) < 0 ||
        (src == NULL && (rc = get_obj(cx, e, "deprecatedSource", &src)) < 0) ||
        (rc = get_obj(cx, e, "series", &series)) < 0 ||
        (rc = get_obj(cx, e, "metadata", &meta)) < 0 ||
        (rc = get_str(cx, e, "type", &ev->type)) < 0 ||
        (rc = get_str(cx, e, "reason", &ev->reason)) < 0 ||
        (rc = get_str(cx, e, "message", &ev->message)) < 0 ||
        (ev->message == NULL && (rc = get_str(cx, e, "note", &ev->message)) < 0) ||
        (rc = get_int(cx, e, "count", &count)) < 0 ||
        (count == 0 && (rc = get_int(cx, e, "deprecatedCount", &count)) < 0) ||
        (rc = get_time(cx, e, "eventTime", &event_time, NULL)) < 0) {
        return rc;
    }
    if (io == NULL) {
        return krc_error_set(cx->err, KRC_EINVAL, "%s: involvedObject is missing", cx->path);
    }
    snprintf(cx->path, sizeof(cx->path), "%s.involvedObject", base);
    if ((rc = get_str(cx, io, "kind", &ev->object_kind)) < 0 ||
        (rc = get_str(cx, io, "namespace", &ev->object_namespace)) < 0 ||
        (rc = get_str(cx, io, "name", &ev->object_name)) < 0 ||
        (rc = get_str(cx, io, "uid", &ev->object_uid)) < 0 ||
        (rc = get_str(cx, io, "fieldPath", &ev->field_path)) < 0) {
        return rc;
    }
    if (src != NULL) {
        snprintf(cx->path, sizeof(cx->path), "%s.source", base);
        if ((rc = get_str(cx, src, "component", &ev->source_component)) < 0 ||
            (rc = get_str(cx, src, "host", &ev->source_host)) < 0) {
            return rc;
        }
    }
    memcpy(cx->path, base, sizeof(base));
    if (ev->source_component == NULL || ev->source_component[0] == '\0') {
        krc_free(ev->source_component);
        ev->source_component = NULL;
        if ((rc = get_str(cx, e, "reportingComponent", &ev->source_component)) < 0 ||
            (ev->source_component == NULL &&
             (rc = get_str(cx, e, "reportingController", &ev->source_component)) < 0)) {
            return rc;
        }
    }
    if (ev->source_host == NULL || ev->source_host[0] == '\0') {
        krc_free(ev->source_host);
        ev->source_host = NULL;
        if ((rc = get_str(cx, e, "reportingInstance", &ev->source_host)) < 0) {
            return rc;
        }
    }
    if (series != NULL) {
        snprintf(cx->path, sizeof(cx->path), "%s.series", base);
        if ((rc = get_time(cx, series, "lastObservedTime", &series_last, NULL)) < 0 ||
            (rc = get_int(cx, series, "count", &series_count)) < 0) {
            return rc;
        }
        memcpy(cx->path, base, sizeof(base));
    }
    if (meta != NULL) {
        snprintf(cx->path, sizeof(cx->path), "%s.metadata", base);
        if ((rc = get_time(cx, meta, "creationTimestamp", &created, NULL)) < 0) {
            return rc;
        }
        memcpy(cx->path, base, sizeof(base));
    }
    /* first: firstTimestamp, deprecatedFirstTimestamp, eventTime, creation */
    if ((rc = get_time(cx, e, "firstTimestamp", &t, &has)) < 0) {
        return rc;
    }
    if (!has && (rc = get_time(cx, e, "deprecatedFirstTimestamp", &t, &has)) < 0) {
        return rc;
    }
    ev->first_timestamp = has ? t : (event_time ? event_time : created);
    /* last: lastTimestamp, deprecatedLastTimestamp, series.lastObservedTime,
     * eventTime, creation (protocols.md 1.6.2) */
    if ((rc = get_time(cx, e, "lastTimestamp", &t, &has)) < 0) {
        return rc;
    }
    if (!has && (rc = get_time(cx, e, "deprecatedLastTimestamp", &t, &has)) < 0) {
        return rc;
    }
    if (has) {
        ev->last_timestamp = t;
    } else if (series_last) {
        ev->last_timestamp = series_last;
    } else if (event_time) {
        ev->last_timestamp = event_time;
    } else {
        ev->last_timestamp = created;
    }
    if (ev->first_timestamp == 0 || ev->first_timestamp > ev->last_timestamp) {
        ev->first_timestamp = ev->first_timestamp ? ev->last_timestamp : ev->last_timestamp;
    }
    ev->count = count > 0 ? count : (series_count > 0 ? series_count : 1);
    return 0;
}

/* krc's own RestartDiagnosed Events are its earlier diagnoses, not
 * evidence (their notes would be quoted in the next alert and could feed the
 * rules): the event just parsed is removed when it is one. */
static void drop_if_own(struct krc_report *r)
{
    const struct krc_report_event *ev = &r->events[r->n_events - 1];

    if (ev->source_component != NULL &&
        strcmp(ev->source_component, KRC_REPORTING_CONTROLLER) == 0) {
        krc_report_drop_last_event(r);
    }
}

int krc_kube_parse_events(const char *json, size_t len, struct krc_report *r, struct krc_error *err)
{
    struct ctx cx = {err, ""};
    cJSON *root = parse_json(json, len, err);
    const cJSON *items = NULL;
    const cJSON *it;
    const char *kind;
    size_t before = r->n_events;
    int i = 0;
    int rc = 0;

    if (root == NULL) {
        return err != NULL ? err->code : KRC_EPARSE;
    }
    kind = kind_of(root);
    if (cJSON_IsArray(root)) {
        items = root;
    } else if (cJSON_IsObject(root) && kind != NULL && strcmp(kind, "Event") == 0) {
        struct krc_report_event *ev = krc_report_add_event(r);
        if (ev == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = parse_event(&cx, root, ev)) == 0) {
            drop_if_own(r);
        }
        goto out;
    } else if (cJSON_IsObject(root)) {
        if (kind != NULL && strcmp(kind, "List") != 0 && strcmp(kind, "EventList") != 0) {
            rc = krc_error_set(err, KRC_EINVAL, "not an event list (kind \"%.60s\")", kind);
            goto out;
        }
        items = member(root, "items");
        if (is_absent(items) && kind != NULL) {
            goto out; /* an empty list serialized with items: null */
        }
        if (!cJSON_IsArray(items)) {
            rc =
                krc_error_set(err, KRC_EINVAL, "not an event list (items is %s)", type_name(items));
            goto out;
        }
    } else {
        rc = krc_error_set(err, KRC_EINVAL, "not an event list (the document is %s)",
                           type_name(root));
        goto out;
    }
    cJSON_ArrayForEach(it, items)
    {
        struct krc_report_event *ev = krc_report_add_event(r);
        if (ev == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
            goto out;
        }
        ctx_path(&cx, "%sitems[%d]", "", i);
        if ((rc = parse_event(&cx, it, ev)) < 0) {
            goto out;
        }
        drop_if_own(r);
        i++;
    }
out:
    if (rc < 0) {
        /* Roll back to the state before the call. */
        while (r->n_events > before) {
            krc_report_drop_last_event(r);
        }
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- node ------------------------------------------------------------- */

static int parse_node_object(const cJSON *node, struct krc_report_node *n, struct krc_error *err)
{
    struct ctx cx = {err, ""};
    const cJSON *meta;
    const cJSON *spec;
    const cJSON *status;
    const cJSON *conds;
    const cJSON *info;
    const cJSON *it;
    int rc;
    int i = 0;

    if ((rc = get_obj(&cx, node, "metadata", &meta)) < 0 ||
        (rc = get_obj(&cx, node, "spec", &spec)) < 0 ||
        (rc = get_obj(&cx, node, "status", &status)) < 0) {
        return rc;
    }
    if (meta == NULL) {
        return krc_error_set(err, KRC_EINVAL, "metadata is missing");
    }
    snprintf(cx.path, sizeof(cx.path), "metadata");
    if ((rc = get_str(&cx, meta, "name", &n->name)) < 0) {
        return rc;
    }
    if (n->name == NULL) {
        return krc_error_set(err, KRC_EINVAL, "metadata.name is missing");
    }
    if (spec != NULL) {
        snprintf(cx.path, sizeof(cx.path), "spec");
        if ((rc = get_bool(&cx, spec, "unschedulable", &n->unschedulable)) < 0) {
            return rc;
        }
    }
    if (status == NULL) {
        return 0;
    }
    snprintf(cx.path, sizeof(cx.path), "status");
    if ((rc = get_map(&cx, status, "capacity", &n->capacity)) < 0 ||
        (rc = get_map(&cx, status, "allocatable", &n->allocatable)) < 0 ||
        (rc = get_arr(&cx, status, "conditions", &conds)) < 0 ||
        (rc = get_obj(&cx, status, "nodeInfo", &info)) < 0) {
        return rc;
    }
    if (info != NULL) {
        snprintf(cx.path, sizeof(cx.path), "status.nodeInfo");
        if ((rc = get_str(&cx, info, "kubeletVersion", &n->kubelet_version)) < 0 ||
            (rc = get_str(&cx, info, "containerRuntimeVersion", &n->container_runtime_version)) <
                0 ||
            (rc = get_str(&cx, info, "kernelVersion", &n->kernel_version)) < 0 ||
            (rc = get_str(&cx, info, "osImage", &n->os_image)) < 0) {
            return rc;
        }
    }
    if (conds != NULL) {
        int total = cJSON_GetArraySize(conds);
        if (total > 0) {
            n->conditions = krc_calloc((size_t)total, sizeof(*n->conditions));
            if (n->conditions == NULL) {
                return krc_error_set(err, KRC_ENOMEM, "out of memory");
            }
        }
        cJSON_ArrayForEach(it, conds)
        {
            struct krc_report_node_condition *c = &n->conditions[n->n_conditions++];
            ctx_path(&cx, "%sstatus.conditions[%d]", "", i++);
            if ((rc = get_str(&cx, it, "type", &c->type)) < 0 ||
                (rc = get_str(&cx, it, "status", &c->status)) < 0 ||
                (rc = get_str(&cx, it, "reason", &c->reason)) < 0 ||
                (rc = get_str(&cx, it, "message", &c->message)) < 0 ||
                (rc = get_time(&cx, it, "lastTransitionTime", &c->last_transition, NULL)) < 0) {
                return rc;
            }
        }
    }
    return 0;
}

int krc_kube_parse_node(const char *json, size_t len, struct krc_report *r, struct krc_error *err)
{
    cJSON *root = parse_json(json, len, err);
    struct krc_report saved_shell;
    const char *kind;
    int rc;

    if (root == NULL) {
        return err != NULL ? err->code : KRC_EPARSE;
    }
    kind = kind_of(root);
    if (!cJSON_IsObject(root)) {
        rc = krc_error_set(err, KRC_EINVAL, "not a Node (the document is %s)", type_name(root));
        goto out;
    }
    if (kind != NULL && strcmp(kind, "Node") != 0) {
        rc = krc_error_set(err, KRC_EINVAL, "not a Node (kind \"%.60s\")", kind);
        goto out;
    }
    /* Parse into a scratch report so that a failure keeps the old node. */
    krc_report_init(&saved_shell);
    rc = parse_node_object(root, &saved_shell.node, err);
    if (rc == 0) {
        krc_report_clear_node(r);
        r->node = saved_shell.node;
        r->node.present = 1;
        memset(&saved_shell.node, 0, sizeof(saved_shell.node));
    }
    krc_report_cleanup(&saved_shell);
out:
    cJSON_Delete(root);
    return rc;
}

int krc_kube_parse_resource_claim(const char *json, size_t len, struct krc_report *r, size_t i,
                                  struct krc_error *err)
{
    cJSON *root;
    const char *kind;
    int rc;

    if (i >= r->n_claim_statuses) {
        return krc_error_set(err, KRC_EINVAL, "no resource claim status %zu", i);
    }
    root = parse_json(json, len, err);
    if (root == NULL) {
        return err != NULL ? err->code : KRC_EPARSE;
    }
    kind = kind_of(root);
    if (!cJSON_IsObject(root)) {
        rc = krc_error_set(err, KRC_EINVAL, "not a ResourceClaim (the document is %s)",
                           type_name(root));
    } else if (kind != NULL && strcmp(kind, "ResourceClaim") != 0) {
        rc = krc_error_set(err, KRC_EINVAL, "not a ResourceClaim (kind \"%.60s\")", kind);
    } else {
        rc = krc_kube_parse_claim_fields(root, r, &r->claim_statuses[i], err);
    }
    cJSON_Delete(root);
    return rc;
}
