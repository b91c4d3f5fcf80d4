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
    if (*p != '\0' || n < 3 || len[0] != 3 || strncmp(seg[0], "api", 3) != 0 || len[1] != 2 ||
        strncmp(seg[1], "v1", 2) != 0) {
        return 0;
    }
#define SEG_IS(i, s) (len[i] == strlen(s) && strncmp(seg[i], s, len[i]) == 0)
    if (n == 3 && SEG_IS(2, "pods")) {
        r->kind = KRC_DEMO_ROUTE_PODS;
    } else if (n == 3 && SEG_IS(2, "events")) {
        r->kind = KRC_DEMO_ROUTE_EVENTS;
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
