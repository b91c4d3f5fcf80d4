/* explain_pod: a live diagnosis through the Kubernetes API. */
#include "krc/serve/mcp_explain.h"

#include <stdio.h>
#include <string.h>

#include "krc/collect/collector.h"
#include "krc/detect/pod_state.h"
#include "krc/detect/restart.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_name.h"
#include "krc/kube/kube_pod.h"
#include "krc/model/report.h"
#include "krc/serve/mcp.h"
#include "krc/model/report_json.h"
#include "krc/util/mem.h"

#define POD_MAX_BYTES (4u * 1024u * 1024u)

static const struct krc_container_info *pick(const struct krc_pod_info *p, const char *name)
{
    const struct krc_container_info *best = NULL;
    for (size_t i = 0; i < p->n_containers; i++) {
        const struct krc_container_info *c = &p->containers[i];
        if (name != NULL) {
            if (strcmp(c->name, name) == 0) {
                return c;
            }
        } else if (best == NULL || c->restart_count > best->restart_count) {
            best = c;
        }
    }
    return best;
}

/* The one item of a pod LIST answer (the pod as JSON, owned), or NULL with
 * *none set when the list is empty. */
static char *only_item(const char *body, size_t len, int *none)
{
    cJSON *list = cJSON_ParseWithLength(body, len);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    const cJSON *item = cJSON_IsArray(items) ? cJSON_GetArrayItem(items, 0) : NULL;
    char *out = NULL;

    *none = cJSON_IsArray(items) && item == NULL;
    if (cJSON_IsObject(item)) {
        char *printed = cJSON_PrintUnformatted(item);
        out = printed != NULL ? krc_strdup(printed) : NULL;
        cJSON_free(printed);
    }
    cJSON_Delete(list);
    return out;
}

/* The pod: a GET, or with a label selector a LIST of the namespace's pods
 * that the API server selects by name and by labels (the daemon's watch is
 * selected the same way). */
static int get_pod(struct krc_kube_client *kube, const char *selector, const char *ns,
                   const char *pod, char **body, size_t *len, char *msg, size_t msgsz,
                   struct krc_error *err)
{
    char name[300];
    struct krc_buf path;
    struct krc_error e;
    char *list = NULL;
    size_t list_len = 0;
    int none = 0;
    int rc;

    krc_buf_init(&path, 8192);
    if (selector == NULL || *selector == '\0') {
        rc = krc_buf_printf(&path, "/api/v1/namespaces/%s/pods/%s", ns, pod);
    } else {
        struct krc_buf q;

        krc_buf_init(&q, 8192);
        snprintf(name, sizeof(name), "metadata.name=%s", pod);
        rc = krc_kube_query_add(&q, "fieldSelector", name);
        rc |= krc_kube_query_add(&q, "labelSelector", selector);
        rc |= krc_kube_query_add(&q, "limit", "1");
        if (rc == 0) {
            rc = krc_buf_printf(&path, "/api/v1/namespaces/%s/pods?%s", ns, krc_buf_str(&q));
        }
        krc_buf_cleanup(&q);
    }
    if (rc < 0) {
        krc_buf_cleanup(&path);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    krc_error_clear(&e);
    rc = krc_kube_get(kube, krc_buf_str(&path), POD_MAX_BYTES, selector != NULL ? &list : body,
                      selector != NULL ? &list_len : len, &e);
    krc_buf_cleanup(&path);
    if (rc == KRC_ENOTFOUND) {
        snprintf(msg, msgsz, "pod %s/%s not found", ns, pod);
        return KRC_MCP_TOOL_FAILED;
    }
    if (rc < 0) {
        snprintf(msg, msgsz, "cannot read pod %s/%s from the Kubernetes API: %s", ns, pod, e.msg);
        return KRC_MCP_TOOL_FAILED;
    }
    if (selector == NULL) {
        return 0;
    }
    *body = only_item(list, list_len, &none);
    krc_free(list);
    if (*body == NULL) {
        if (none) {
            snprintf(msg, msgsz,
                     "pod %s/%s is outside what this MCP server answers about (labelSelector): "
                     "no such pod matches the labelSelector krc watches with",
                     ns, pod);
        } else {
            snprintf(msg, msgsz, "pod %s/%s: the API answered an unreadable pod list", ns, pod);
        }
        return KRC_MCP_TOOL_FAILED;
    }
    *len = strlen(*body);
    return 0;
}

/* Collect, diagnose and turn into JSON; *ret_json owned. */
static int analyse(struct krc_kube_client *kube, const struct krc_redactor *rd,
                   const struct krc_restart *r, char **ret_json, char *msg, size_t msgsz,
                   struct krc_error *err)
{
    struct krc_collector_options co;
    struct krc_report rep;
    struct krc_diagnosis dg;
    struct krc_error e;
    int rc;

    krc_collector_options_defaults(&co);
    co.limit_bytes = KRC_MCP_EXPLAIN_LOG_BYTES;
    krc_report_init(&rep);
    krc_diagnosis_init(&dg);
    krc_error_clear(&e);
    rc = krc_collect(kube, r, &co, &rep, &e);
    if (rc == 0 && krc_report_redact(&rep, rd, &e) < 0) {
        rc = KRC_ENOMEM; /* said as a tool failure below */
    }
    if (rc < 0) {
        /* clang-tidy: as below: r is not NULL when rc == 0 */
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
        snprintf(msg, msgsz, "cannot collect %s/%s: %s", r->namespace, r->pod, e.msg);
        rc = KRC_MCP_TOOL_FAILED;
        /* clang-tidy: r is set whenever rc == 0: krc_error_set() returns its (negative) code, which
         * the analyzer cannot see */
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
    } else if (krc_diagnose(&rep, r->ident.container, &dg, &e) < 0 &&
               krc_diagnose(&rep, NULL, &dg, &e) < 0) {
        snprintf(msg, msgsz, "cannot diagnose %s/%s: %s", r->namespace, r->pod, e.msg);
        rc = KRC_MCP_TOOL_FAILED;
    } else if (krc_diagnosis_redact(&dg, rd, &e) < 0) {
        snprintf(msg, msgsz, "cannot diagnose %s/%s: %s", r->namespace, r->pod, e.msg);
        rc = KRC_MCP_TOOL_FAILED;
    } else {
        rc = krc_report_json_build(&rep, &dg, rd, ret_json, err);
    }
    krc_diagnosis_cleanup(&dg);
    krc_report_cleanup(&rep);
    return rc;
}

static int result(const struct krc_restart *r, const char *json, cJSON **ret, struct krc_error *err)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *rep = cJSON_Parse(json);
    int ok = out != NULL && rep != NULL &&
             cJSON_AddStringToObject(out, "namespace", r->namespace) != NULL &&
             cJSON_AddStringToObject(out, "pod", r->pod) != NULL &&
             cJSON_AddStringToObject(out, "container", r->ident.container) != NULL &&
             cJSON_AddNumberToObject(out, "restart_count", r->ident.restart_count) != NULL &&
             cJSON_AddItemToObject(out, "report", rep);
    if (!ok) {
        if (out == NULL || cJSON_GetObjectItemCaseSensitive(out, "report") != rep) {
            cJSON_Delete(rep);
        }
        cJSON_Delete(out);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    *ret = out;
    return KRC_MCP_TOOL_OK;
}

int krc_mcp_explain_pod(struct krc_kube_client *kube, const struct krc_redactor *rd,
                        const char *label_selector, const char *namespace, const char *pod,
                        const char *container, cJSON **ret, char *msg, size_t msgsz,
                        struct krc_error *err)
{
    struct krc_pod_info info;
    struct krc_restart_delta d;
    struct krc_restart *r = NULL;
    struct krc_error e;
    char *body = NULL;
    char *json = NULL;
    size_t len = 0;
    int rc;

    /* what goes into the request path: never "." or ".." (GET /api/v1/) */
    if (krc_kube_name_problem(namespace, KRC_KUBE_NAME_LABEL) != NULL ||
        krc_kube_name_problem(pod, KRC_KUBE_NAME_SUBDOMAIN) != NULL ||
        (container != NULL && krc_kube_name_problem(container, KRC_KUBE_NAME_LABEL) != NULL)) {
        snprintf(msg, msgsz,
                 "invalid arguments: the namespace and the container must be RFC 1123 DNS "
                 "labels, the pod an RFC 1123 DNS subdomain");
        return KRC_MCP_TOOL_FAILED;
    }
    if (label_selector != NULL && *label_selector == '\0') {
        label_selector = NULL;
    }
    if ((rc = get_pod(kube, label_selector, namespace, pod, &body, &len, msg, msgsz, err)) != 0) {
        return rc;
    }
    krc_pod_info_init(&info);
    krc_error_clear(&e);
    if (krc_pod_info_parse(body, len, &info, &e) < 0) {
        snprintf(msg, msgsz, "pod %s/%s: the API answered an unreadable pod: %s", namespace, pod,
                 e.msg);
        rc = KRC_MCP_TOOL_FAILED;
    } else if ((d.container = pick(&info, container)) == NULL) {
        snprintf(msg, msgsz, "pod %s/%s has no container %s", namespace, pod,
                 container != NULL ? container : "with a status yet");
        rc = KRC_MCP_TOOL_FAILED;
    } else {
        d.pod = &info;
        d.previous_count = -1;
        d.missed = 0;
        r = krc_restart_from_delta(&d, 1);
        rc = r == NULL ? krc_error_set(err, KRC_ENOMEM, "out of memory") : 0;
    }
    krc_pod_info_cleanup(&info);
    krc_free(body);
    if (rc == 0) {
        rc = analyse(kube, rd, r, &json, msg, msgsz, err);
    }
    if (rc == 0) {
        rc = result(r, json, ret, err);
    }
    krc_free(json);
    krc_restart_free(r);
    return rc;
}
