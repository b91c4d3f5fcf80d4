/* The live explain_pod MCP tool: GET a pod through the Kubernetes API and
 * analyse it as the daemon does (analyse/analyse.h: the pod parsed once, its
 * container picked: the one named, else the one with the most restarts;
 * events, node and previous log collected; redacted, diagnosed) and return
 * the report as JSON (krc_report_json_build, redacted, log tail at most
 * 16 KiB). Reads only: a GET of the pod and what the collector reads. */
#ifndef KRC_MCP_EXPLAIN_H
#define KRC_MCP_EXPLAIN_H

#include <stddef.h>

#include "krc/kube/kube_client.h"
#include "krc/mcp/mcp_untrusted.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

/* cJSON's type, declared only: its library stays inside mcp/ (the tools and the core
 * include <cjson/cJSON.h>). */
struct cJSON;

#define KRC_MCP_EXPLAIN_INPUT_SCHEMA                                                               \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"namespace\":{\"type\":\"string\",\"maxLength\":63,\"description\":\"the pod's "             \
    "namespace\"},"                                                                                \
    "\"pod\":{\"type\":\"string\",\"maxLength\":253,\"description\":\"the pod's name\"},"          \
    "\"container\":{\"type\":\"string\",\"maxLength\":63,\"description\":\"container; default "    \
    "the one with the most restarts\"}},"                                                          \
    "\"required\":[\"namespace\",\"pod\"],\"additionalProperties\":false}"
#define KRC_MCP_EXPLAIN_OUTPUT_SCHEMA                                                              \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"namespace\":{\"type\":\"string\"},\"pod\":{\"type\":\"string\"},"                           \
    "\"container\":{\"type\":\"string\"},\"restart_count\":{\"type\":\"integer\"},"                \
    "\"report\":{\"type\":\"object\",\"description\":\"pod, diagnosis (cause, confidence, "        \
    "evidence, next_step; intentional: true only for an intended restart or stop), containers, "   \
    "events, node, notes, log; the fields untrusted_fields lists hold text from the "              \
    "cluster\"," KRC_MCP_REPORT_UNTRUSTED_PROPS "}," KRC_MCP_UNTRUSTED_FIELDS_PROP "},"            \
    "\"required\":[\"namespace\",\"pod\",\"container\",\"report\",\"untrusted_fields\"]}"

#define KRC_MCP_EXPLAIN_LOG_BYTES 16384

/* KRC_MCP_TOOL_OK with *ret, KRC_MCP_TOOL_FAILED with msg (a namespace or
 * container that is not a DNS label, a pod name that is not a DNS subdomain,
 * kube/kube_name.h: checked before any request; no such pod or container;
 * a pod that label_selector does not select; API errors), or a negative code
 * (out of memory). The caller checks the rest of the scope (mcp_scope.h) and
 * adds untrusted_fields.
 *
 * label_selector (the daemon's labelSelector; NULL or "": none): the pod is
 * read with a LIST of its namespace's pods selected by its name and by
 * label_selector, so the API server applies the selector as it does to the
 * daemon's watch, and a pod the daemon does not watch is refused. */
int krc_mcp_explain_pod(struct krc_kube_client *kube, const struct krc_redactor *rd,
                        const char *label_selector, const char *namespace, const char *pod,
                        const char *container, struct cJSON **ret, char *msg, size_t msgsz,
                        struct krc_error *err);

#endif
