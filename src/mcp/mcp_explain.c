/* explain_pod: a live diagnosis through the Kubernetes API. */
#include "krc/mcp/mcp_explain.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/analyse/analyse.h"
#include "krc/kube/kube_name.h"
#include "krc/kube/list_framer.h"
#include "krc/mcp/mcp.h"
#include "krc/util/mem.h"

#define POD_MAX_BYTES (4u * 1024u * 1024u)

/* A pod LIST answer's first item, copied (*ret, owned). */
static int first_item(const char *json, size_t len, void *ud)
{
    char **ret = ud;

    *ret = krc_strndup(json, len);
    return *ret == NULL ? KRC_ENOMEM : 1;
}

/* The one item of a pod LIST answer (the pod as JSON, owned), or NULL with
 * *none set when the list is empty. */
static char *only_item(const char *body, size_t len, int *none)
{
    struct krc_list_framer lf;
    struct krc_error e;
    char *out = NULL;
    int rc;

    *none = 0;
    krc_error_clear(&e);
    if (krc_list_framer_init(&lf, len + 1) < 0) {
        return NULL;
    }
    rc = krc_list_framer_feed(&lf, body, len, first_item, &out, &e);
    if (rc == 0 && krc_list_framer_finish(&lf, &e) == 0) {
        *none = krc_list_framer_item_count(&lf) == 0;
    }
    krc_list_framer_cleanup(&lf);
    if (out != NULL && (rc != 1 || out[0] != '{')) {
        krc_free(out); /* not a list of objects: an unreadable answer */
        out = NULL;
    }
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

static int result(const char *ns, const char *pod, const char *container, int restart_count,
                  const char *json, cJSON **ret, struct krc_error *err)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *rep = cJSON_Parse(json);
    int ok = out != NULL && rep != NULL && cJSON_AddStringToObject(out, "namespace", ns) != NULL &&
             cJSON_AddStringToObject(out, "pod", pod) != NULL &&
             cJSON_AddStringToObject(out, "container", container) != NULL &&
             cJSON_AddNumberToObject(out, "restart_count", restart_count) != NULL &&
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

/* The analysis's failure as the tool's answer. */
static int failure(const struct krc_analysis *a, const struct krc_error *e, const char *ns,
                   const char *pod, const char *container, char *msg, size_t msgsz)
{
    switch (a->failed) {
    case KRC_ANALYSE_POD:
        if (e->code == KRC_ENOTFOUND) {
            snprintf(msg, msgsz, "pod %s/%s has no container %s", ns, pod,
                     container != NULL ? container : "with a status yet");
        } else {
            snprintf(msg, msgsz, "pod %s/%s: the API answered an unreadable pod: %s", ns, pod,
                     e->msg);
        }
        return KRC_MCP_TOOL_FAILED;
    case KRC_ANALYSE_COLLECT:
    case KRC_ANALYSE_REDACT_REPORT:
        snprintf(msg, msgsz, "cannot collect %s/%s: %s", ns, pod, e->msg);
        return KRC_MCP_TOOL_FAILED;
    case KRC_ANALYSE_DIAGNOSE:
    case KRC_ANALYSE_REDACT_DIAGNOSIS:
        snprintf(msg, msgsz, "cannot diagnose %s/%s: %s", ns, pod, e->msg);
        return KRC_MCP_TOOL_FAILED;
    default:
        return e->code < 0 ? e->code : KRC_ENOMEM; /* the report JSON: out of memory */
    }
}

int krc_mcp_explain_pod(struct krc_kube_client *kube, const struct krc_redactor *rd,
                        const char *label_selector, const char *namespace, const char *pod,
                        const char *container, cJSON **ret, char *msg, size_t msgsz,
                        struct krc_error *err)
{
    struct krc_collector_options co;
    struct krc_analyse_request q;
    struct krc_analysis a;
    struct krc_report rep;
    struct krc_diagnosis dg;
    struct krc_error e;
    char *body = NULL;
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
    krc_collector_options_defaults(&co);
    co.limit_bytes = KRC_MCP_EXPLAIN_LOG_BYTES;
    memset(&q, 0, sizeof(q));
    q.pod_json = body;
    q.pod_json_len = len;
    q.client = kube;
    q.options = &co;
    q.container = container;
    q.any_container = 1;
    q.redactor = rd;
    q.want_json = 1;
    krc_report_init(&rep);
    krc_diagnosis_init(&dg);
    a.report = &rep;
    a.diagnosis = &dg;
    krc_error_clear(&e);
    if (krc_analyse(&q, &a, &e) < 0) {
        rc = failure(&a, &e, namespace, pod, container, msg, msgsz);
        if (rc < 0) {
            krc_error_set(err, rc, "%s", e.msg);
        }
    } else {
        rc = result(rep.namespace, rep.name, a.container, a.restart_count, a.json, ret, err);
    }
    krc_analysis_cleanup(&a);
    krc_diagnosis_cleanup(&dg);
    krc_report_cleanup(&rep);
    krc_free(body);
    return rc;
}
