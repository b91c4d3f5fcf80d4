/* What the simulated API server (sim.c) checks and computes, without a
 * server: request paths, field selectors, Event validation as the API
 * server does it, and previous-log windows (see sim.h). */
#include "krc/demo/sim.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"

static int copy_seg(char *dst, size_t dsz, const char *s, size_t len)
{
    if (len == 0 || len >= dsz) {
        return KRC_EINVAL;
    }
    memcpy(dst, s, len);
    dst[len] = '\0';
    return 0;
}

static const struct krc_demo_resource_info RESOURCES[KRC_DEMO_RES_N] = {
    [KRC_DEMO_RES_NODES] = {"nodes", "v1", "Node", 0},
    [KRC_DEMO_RES_DEPLOYMENTS] = {"deployments", "apps/v1", "Deployment", 1},
    [KRC_DEMO_RES_REPLICASETS] = {"replicasets", "apps/v1", "ReplicaSet", 1},
    [KRC_DEMO_RES_STATEFULSETS] = {"statefulsets", "apps/v1", "StatefulSet", 1},
    [KRC_DEMO_RES_DAEMONSETS] = {"daemonsets", "apps/v1", "DaemonSet", 1},
    [KRC_DEMO_RES_CONTROLLERREVISIONS] = {"controllerrevisions", "apps/v1", "ControllerRevision",
                                          1},
    [KRC_DEMO_RES_JOBS] = {"jobs", "batch/v1", "Job", 1},
    [KRC_DEMO_RES_CRONJOBS] = {"cronjobs", "batch/v1", "CronJob", 1},
};

const struct krc_demo_resource_info *krc_demo_resource_info(enum krc_demo_resource res)
{
    return res > KRC_DEMO_RES_NONE && res < KRC_DEMO_RES_N ? &RESOURCES[res] : NULL;
}

/* The resource of group/version `gv` named by the segment (len bytes). */
static enum krc_demo_resource resource_named(const char *gv, const char *seg, size_t len)
{
    for (int i = KRC_DEMO_RES_NODES; i < KRC_DEMO_RES_N; i++) {
        if (strcmp(RESOURCES[i].api_version, gv) == 0 && strlen(RESOURCES[i].plural) == len &&
            strncmp(RESOURCES[i].plural, seg, len) == 0) {
            return (enum krc_demo_resource)i;
        }
    }
    return KRC_DEMO_RES_NONE;
}

/* /apis/GROUP/v1/RES, /apis/GROUP/v1/namespaces/NS/RES[/NAME] (seg[0..n):
 * "apis", GROUP, "v1", ...) */
static int route_group(const char *const *seg, const size_t *len, size_t n,
                       struct krc_demo_route *r)
{
    char gv[64];
    enum krc_demo_resource res;
    int namespaced;

    if (n < 4 || len[1] + 3 >= sizeof(gv) || len[2] != 2 || strncmp(seg[2], "v1", 2) != 0) {
        return 0;
    }
    snprintf(gv, sizeof(gv), "%.*s/v1", (int)len[1], seg[1]);
    namespaced = n >= 6 && len[3] == 10 && strncmp(seg[3], "namespaces", 10) == 0;
    res = resource_named(gv, seg[namespaced ? 5 : 3], len[namespaced ? 5 : 3]);
    if (res == KRC_DEMO_RES_NONE || (namespaced ? n > 7 : n > 4)) {
        return 0;
    }
    if (namespaced && copy_seg(r->ns, sizeof(r->ns), seg[4], len[4]) < 0) {
        return KRC_EINVAL;
    }
    r->res = res;
    r->kind = KRC_DEMO_ROUTE_LIST;
    if (namespaced && n == 7) {
        r->kind = KRC_DEMO_ROUTE_OBJECT;
        return copy_seg(r->name, sizeof(r->name), seg[6], len[6]);
    }
    return 0;
}

int krc_demo_route_parse(const char *path, struct krc_demo_route *r)
{
    const char *seg[8];
    size_t len[8];
    size_t n = 0;
    const char *p = path;

    memset(r, 0, sizeof(*r));
    if (strncmp(path, "/services/", 10) == 0) {
        r->kind = KRC_DEMO_ROUTE_WEBHOOK;
        return 0;
    }
    if (*p != '/') {
        return 0;
    }
    if (strncmp(path, "/apis/events.k8s.io/v1/namespaces/", 34) == 0) {
        const char *ns = path + 34;
        const char *slash = strchr(ns, '/');
        if (slash != NULL && strcmp(slash, "/events") == 0) {
            r->kind = KRC_DEMO_ROUTE_KUBE_EVENTS;
            return copy_seg(r->ns, sizeof(r->ns), ns, (size_t)(slash - ns));
        }
        return 0;
    }
    while (*p == '/' && n < 8) {
        const char *e = strchr(p + 1, '/');
        seg[n] = p + 1;
        len[n] = e != NULL ? (size_t)(e - p - 1) : strlen(p + 1);
        if (len[n] == 0) {
            return KRC_EINVAL;
        }
        n++;
        p = e != NULL ? e : p + 1 + len[n - 1];
    }
    if (*p == '\0' && len[0] == 4 && strncmp(seg[0], "apis", 4) == 0) {
        int rc = route_group(seg, len, n, r);
        if (rc < 0 || r->kind == KRC_DEMO_ROUTE_NONE) {
            memset(r, 0, sizeof(*r));
        }
        return rc;
    }
    if (*p != '\0' || n < 3 || len[0] != 3 || strncmp(seg[0], "api", 3) != 0 || len[1] != 2 ||
        strncmp(seg[1], "v1", 2) != 0) {
        return 0;
    }
#define SEG_IS(i, s) (len[i] == strlen(s) && strncmp(seg[i], s, len[i]) == 0)
    if (n == 3 && SEG_IS(2, "pods")) {
        r->kind = KRC_DEMO_ROUTE_PODS;
    } else if (n == 3 && SEG_IS(2, "events")) {
        r->kind = KRC_DEMO_ROUTE_EVENTS;
    } else if (n == 3 && SEG_IS(2, "nodes")) {
        r->kind = KRC_DEMO_ROUTE_LIST;
        r->res = KRC_DEMO_RES_NODES;
    } else if (n == 4 && SEG_IS(2, "nodes")) {
        r->kind = KRC_DEMO_ROUTE_NODE;
        return copy_seg(r->name, sizeof(r->name), seg[3], len[3]);
    } else if (n >= 5 && SEG_IS(2, "namespaces")) {
        if (copy_seg(r->ns, sizeof(r->ns), seg[3], len[3]) < 0) {
            return KRC_EINVAL;
        }
        if (n == 5 && SEG_IS(4, "pods")) {
            r->kind = KRC_DEMO_ROUTE_PODS;
        } else if (n == 5 && SEG_IS(4, "events")) {
            r->kind = KRC_DEMO_ROUTE_EVENTS;
        } else if (n == 6 && SEG_IS(4, "pods")) {
            r->kind = KRC_DEMO_ROUTE_POD;
        } else if (n == 7 && SEG_IS(4, "pods") && SEG_IS(6, "log")) {
            r->kind = KRC_DEMO_ROUTE_POD_LOG;
        } else {
            r->ns[0] = '\0';
            return 0;
        }
        if (n >= 6) {
            return copy_seg(r->name, sizeof(r->name), seg[5], len[5]);
        }
    }
#undef SEG_IS
    return 0;
}

int krc_demo_accept_meta(const char *accept)
{
    const char *p = accept != NULL ? accept : "";

    while (*p != '\0') {
        size_t clen = strcspn(p, ",");
        char clause[512];
        char *save = NULL;
        char *f;
        const char *as = NULL;
        const char *g = NULL;
        const char *v = NULL;
        int json = 0;

        if (clen < sizeof(clause)) {
            memcpy(clause, p, clen);
            clause[clen] = '\0';
            for (f = strtok_r(clause, ";", &save); f != NULL; f = strtok_r(NULL, ";", &save)) {
                char *eq;
                while (*f == ' ') {
                    f++;
                }
                eq = strchr(f, '=');
                if (eq == NULL) {
                    /* the media type (the first field) */
                    json = strcmp(f, "application/json") == 0 || strcmp(f, "*/*") == 0 ||
                           strcmp(f, "application/*") == 0;
                    continue;
                }
                *eq = '\0';
                if (strcmp(f, "as") == 0) {
                    as = eq + 1;
                } else if (strcmp(f, "g") == 0) {
                    g = eq + 1;
                } else if (strcmp(f, "v") == 0) {
                    v = eq + 1;
                }
            }
            if (json) {
                int meta =
                    g != NULL && v != NULL && strcmp(g, "meta.k8s.io") == 0 && strcmp(v, "v1") == 0;
                if (as == NULL || strcmp(as, "Table") == 0) {
                    return 0; /* plain JSON (a Table falls back to it, as kubectl accepts) */
                }
                if (meta && strcmp(as, "PartialObjectMetadata") == 0) {
                    return 1;
                }
                if (meta && strcmp(as, "PartialObjectMetadataList") == 0) {
                    return 2;
                }
                /* another conversion: the negotiation tries the next clause */
            }
        }
        p += clen + (p[clen] == ',');
        while (*p == ' ') {
            p++;
        }
    }
    return accept != NULL && strstr(accept, "as=") != NULL ? KRC_EINVAL : 0;
}

char *krc_demo_partial_metadata(const char *json)
{
    cJSON *obj = cJSON_Parse(json);
    cJSON *meta = cJSON_DetachItemFromObjectCaseSensitive(obj, "metadata");
    cJSON *out = cJSON_CreateObject();
    char *text = NULL;

    if (cJSON_IsObject(obj) && out != NULL &&
        cJSON_AddStringToObject(out, "kind", "PartialObjectMetadata") != NULL &&
        cJSON_AddStringToObject(out, "apiVersion", "meta.k8s.io/v1") != NULL) {
        if (meta == NULL) {
            meta = cJSON_CreateObject();
        }
        if (meta != NULL && cJSON_AddItemToObject(out, "metadata", meta)) {
            meta = NULL;
            text = cJSON_PrintUnformatted(out);
        }
    }
    cJSON_Delete(meta);
    cJSON_Delete(out);
    cJSON_Delete(obj);
    return text;
}

static int field_supported(const char *f)
{
    static const char *const ok[] = {"involvedObject.kind",
                                     "involvedObject.namespace",
                                     "involvedObject.name",
                                     "involvedObject.uid",
                                     "involvedObject.apiVersion",
                                     "involvedObject.resourceVersion",
                                     "involvedObject.fieldPath",
                                     "reason",
                                     "reportingComponent",
                                     "source",
                                     "type",
                                     "metadata.name",
                                     "metadata.namespace",
                                     NULL};

    for (size_t i = 0; ok[i] != NULL; i++) {
        if (strcmp(ok[i], f) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The string value of a supported field ("" when absent). */
static const char *field_value(const cJSON *obj, const char *f)
{
    const cJSON *v;
    char head[64];
    const char *dot = strchr(f, '.');

    if (strcmp(f, "source") == 0) {
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "source"),
                                             "component");
    } else if (dot != NULL && (size_t)(dot - f) < sizeof(head)) {
        memcpy(head, f, (size_t)(dot - f));
        head[dot - f] = '\0';
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, head), dot + 1);
    } else {
        v = cJSON_GetObjectItemCaseSensitive(obj, f);
    }
    return cJSON_IsString(v) ? v->valuestring : "";
}

int krc_demo_field_selector_match(const char *selector, const cJSON *obj, char *bad,
                                  size_t bad_size)
{
    const char *p = selector != NULL ? selector : "";
    int match = 1;

    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char term[512];
        char *op;
        char *val;
        int neg;

        if (len == 0 || len >= sizeof(term)) {
            snprintf(bad, bad_size, "%.*s", (int)(len < 100 ? len : 100), p);
            return KRC_EINVAL;
        }
        memcpy(term, p, len);
        term[len] = '\0';
        op = strstr(term, "!=");
        neg = op != NULL;
        if (op == NULL) {
            op = strchr(term, '=');
        }
        if (op == NULL || op == term) {
            snprintf(bad, bad_size, "%s", term);
            return KRC_EINVAL;
        }
        val = op + (neg ? 2 : (op[1] == '=' ? 2 : 1));
        *op = '\0';
        if (!field_supported(term)) {
            snprintf(bad, bad_size, "%s", term);
            return KRC_EINVAL;
        }
        if ((strcmp(field_value(obj, term), val) == 0) == neg) {
            match = 0;
        }
        p += len + (end != NULL ? 1 : 0);
    }
    return match;
}

char *krc_demo_log_window(const char *log, long tail_lines, int timestamps, int64_t ended,
                          long limit_bytes)
{
    struct krc_buf b;
    const char *end = log + strlen(log);
    const char *start = end;
    long n_lines = 0;

    /* back from the end over at most tail_lines lines (a last line without
     * a newline counts) */
    while (start > log && (tail_lines < 0 || n_lines < tail_lines)) {
        const char *p = start - 1; /* the newline ending the previous line, or its last byte */
        if (start == end && *p != '\n') {
            p++; /* the last line has no newline */
        }
        while (p > log && p[-1] != '\n') {
            p--;
        }
        start = p;
        n_lines++;
    }
    krc_buf_init(&b, (size_t)1 << 30);
    if (krc_buf_append_str(&b, "") < 0) {
        return NULL;
    }
    for (long k = 0; start < end; k++) {
        const char *nl = memchr(start, '\n', (size_t)(end - start));
        size_t len = nl != NULL ? (size_t)(nl - start) + 1 : (size_t)(end - start);
        int rc = 0;
        if (timestamps) {
            int64_t ms = ended * 1000 - (n_lines - k);
            char ts[40];
            krc_clock_format_rfc3339(ms / 1000, ts, sizeof(ts));
            ts[strlen(ts) - 1] = '\0'; /* "...:SSZ" -> "...:SS.nnnnnnnnnZ" */
            rc = krc_buf_printf(&b, "%s.%09lldZ ", ts, (long long)(ms % 1000) * 1000000LL);
        }
        if (rc < 0 || krc_buf_append(&b, start, len) < 0) {
            krc_buf_cleanup(&b);
            return NULL;
        }
        start += len;
    }
    if (limit_bytes >= 0 && b.len > (size_t)limit_bytes) {
        b.len = (size_t)limit_bytes;
        b.data[b.len] = '\0';
    }
    return krc_buf_take(&b);
}

/* --- Kubernetes Events (events.k8s.io/v1) ------------------------------------------- */

const char *krc_demo_json_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int dns_label_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253) {
        return 0;
    }
    for (const char *p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.')) {
            return 0;
        }
    }
    return s[0] != '-' && s[0] != '.' && s[n - 1] != '-' && s[n - 1] != '.';
}

int krc_demo_kube_event_check(const cJSON *ev, const char *ns, char *why, size_t why_size)
{
    static const char *const required[] = {
        "eventTime", "reportingController", "reportingInstance", "action", "reason", NULL};
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev, "metadata");
    const char *name = krc_demo_json_str(meta, "name");
    const char *mns = krc_demo_json_str(meta, "namespace");
    const char *type = krc_demo_json_str(ev, "type");
    const char *note = krc_demo_json_str(ev, "note");
    const cJSON *regarding = cJSON_GetObjectItemCaseSensitive(ev, "regarding");

    if (!cJSON_IsObject(ev) || !cJSON_IsObject(meta)) {
        snprintf(why, why_size,
                 "Event in version \"v1\" cannot be handled as an Event: no metadata");
        return 400;
    }
    if (mns != NULL && strcmp(mns, ns) != 0) {
        snprintf(why, why_size,
                 "the namespace of the provided object does not match the namespace sent on the "
                 "request");
        return 400;
    }
    if (name == NULL || !dns_label_ok(name)) {
        snprintf(why, why_size,
                 "Event.events.k8s.io \"%s\" is invalid: metadata.name: Invalid value",
                 name != NULL ? name : "");
        return 422;
    }
    for (size_t i = 0; required[i] != NULL; i++) {
        const char *v = krc_demo_json_str(ev, required[i]);
        if (v == NULL || v[0] == '\0') {
            snprintf(why, why_size, "Event.events.k8s.io \"%s\" is invalid: %s: Required value",
                     name, required[i]);
            return 422;
        }
    }
    if (!cJSON_IsObject(regarding) || krc_demo_json_str(regarding, "name") == NULL) {
        snprintf(why, why_size, "Event.events.k8s.io \"%s\" is invalid: regarding: Required value",
                 name);
        return 422;
    }
    if (type == NULL || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0)) {
        snprintf(why, why_size,
                 "Event.events.k8s.io \"%s\" is invalid: type: Invalid value: \"%s\": has "
                 "invalid value: %s",
                 name, type != NULL ? type : "", type != NULL ? type : "");
        return 422;
    }
    if (note != NULL && strlen(note) > 1024) {
        snprintf(why, why_size,
                 "Event.events.k8s.io \"%s\" is invalid: note: Invalid value: \"\": can have at "
                 "most 1024 characters",
                 name);
        return 422;
    }
    return 0;
}
