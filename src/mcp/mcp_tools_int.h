/* The MCP tools' private state and helpers, shared by their files: mcp_tools.c
 * (the restart tools, the table, set-up) and mcp_incidents.c (list_incidents,
 * get_incident, what_changed). Not a public header: nothing outside src/mcp/
 * includes it. */
#ifndef KRC_MCP_TOOLS_INT_H
#define KRC_MCP_TOOLS_INT_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/kube/kube_name.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_scope.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/mcp/mcp_untrusted.h"
#include "krc/store/store.h"
#include "krc/util/error.h"

#define LIST_DEFAULT 50
#define LIST_MAX 200
#define TIMELINE_DEFAULT 100
#define TIMELINE_MAX 500
#define LOG_DEFAULT 8192
#define LOG_MAX 65536
#define SUMMARY_DEFAULT 10
#define SUMMARY_MAX 50
/* Rows read per query when the scope leaves some out, and at most per call:
 * past that a page may hold fewer rows than asked for, with a next_cursor. */
#define SCAN_CHUNK 1000
#define SCAN_BUDGET 50000

struct krc_mcp_tools {
    char *db_path;
    char *db_password_file; /* NULL: none */
    struct krc_kube_client *kube;
    const struct krc_redactor *rd;
    pthread_mutex_t mu; /* guards db */
    struct krc_store *db;
    pthread_mutex_t kube_mu;  /* one explain_pod at a time on the client */
    pthread_mutex_t scope_mu; /* guards scope (replaced by a reload); taken after mu */
    struct krc_mcp_scope *scope;
    long scan_chunk;
    long scan_budget;
};

/* ---- schemas ------------------------------------------------------------------------------ */

#define NSTR "{\"type\":[\"string\",\"null\"]}"
#define STR(max, desc) "{\"type\":\"string\",\"maxLength\":" #max ",\"description\":\"" desc "\"}"
#define ROW_SCHEMA                                                                                 \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    "\"id\":{\"type\":\"integer\",\"description\":\"restart id for get_restart_report\"},"         \
    "\"cluster\":{\"type\":\"string\",\"description\":\"clusterName of the krc that recorded "     \
    "it (empty: unnamed)\"},"                                                                      \
    "\"time\":{\"type\":\"string\",\"description\":\"when krc detected it (UTC)\"},"               \
    "\"namespace\":{\"type\":\"string\"},\"pod\":{\"type\":\"string\"},"                           \
    "\"container\":{\"type\":\"string\"},\"restart_count\":{\"type\":\"integer\"},"                \
    "\"workload\":{\"type\":\"object\",\"properties\":{\"kind\":" NSTR ",\"name\":" NSTR "}},"     \
    "\"node\":" NSTR ",\"exit_code\":{\"type\":[\"integer\",\"null\"]},\"signal\":" NSTR           \
    ",\"reason\":" NSTR ",\"cause\":{\"type\":\"string\"},\"confidence\":" NSTR                    \
    ",\"summary\":{\"type\":[\"string\",\"null\"],\"description\":\"" KRC_MCP_UNTRUSTED_DESC       \
    "\"}},"                                                                                        \
    "\"required\":[\"id\",\"cluster\",\"time\",\"namespace\",\"pod\",\"container\",\"restart_"     \
    "count\","                                                                                     \
    "\"cause\"]}"
#define SINCE_DESC "RFC 3339 time, or a duration back from now: 90s, 10m, 2h, 1d, 1h30m"
#define NS_WHAT "namespaces are RFC 1123 DNS labels"
#define POD_WHAT "pod names are RFC 1123 DNS subdomains"
#define WORKLOAD_WHAT "workload names are RFC 1123 DNS subdomains"

/* The string argument k, NULL when absent or "". */
const char *krc_mcp_arg_str(const cJSON *args, const char *k);
/* The integer argument k (checked against the schema by the core), else dflt. */
long krc_mcp_arg_long(const cJSON *args, const char *k, long dflt);
/* The name argument k (NULL when absent, or "" unless required): a tool error
 * (-1, msg) when it is not a Kubernetes name of that kind, which `what` says. */
int krc_mcp_arg_name(const cJSON *args, const char *k, enum krc_kube_name_kind kind, int required,
                     const char *what, const char **ret, char *msg, size_t msgsz);
/* The setting that keeps the namespace (pod NULL) or the pod out of the
 * scope; NULL when it is in. */
const char *krc_mcp_excluded(struct krc_mcp_tools *t, const char *ns, const char *pod);
/* -1 with the tool error in msg when the namespace (pod NULL) or the pod is
 * out of scope. */
int krc_mcp_check_scope(struct krc_mcp_tools *t, const char *ns, const char *pod, char *msg,
                        size_t msgsz);
/* Add untrusted_fields to a tool's answer; KRC_MCP_TOOL_OK, or out of memory
 * (the answer deleted). */
int krc_mcp_finish(cJSON **ret, enum krc_mcp_answer kind, struct krc_error *err);
/* since (NULL: *ret 0) as an RFC 3339 time or a duration back from now; -1
 * with the tool error in msg. */
int krc_mcp_parse_since(const char *s, int64_t *ret, char *msg, size_t msgsz);
/* Lock t->mu and make sure the database is open. KRC_MCP_TOOL_FAILED
 * (unlocked) with msg when it is not there or cannot be read. */
int krc_mcp_lock_db(struct krc_mcp_tools *t, char *msg, size_t msgsz);
/* After a database error (t->mu held): say so, close the connection
 * (reopened next time). KRC_MCP_TOOL_FAILED. */
int krc_mcp_db_failed(struct krc_mcp_tools *t, const struct krc_error *err, char *msg,
                      size_t msgsz);
/* Keep the last max bytes of report.log.text (from a line start) and count
 * what was cut in log.omitted_bytes. 0, or KRC_ENOMEM. */
int krc_mcp_trim_log(cJSON *report, size_t max, struct krc_error *err);

/* mcp_incidents.c: the incident tools (krc_mcp_tool_fn) and their schemas. */
extern const char krc_mcp_incidents_in[];
extern const char krc_mcp_incidents_out[];
extern const char krc_mcp_incident_in[];
/* get_incident's output schema: filled by krc_mcp_incidents_init, which
 * krc_mcp_tools_server calls before it builds a server (any thread, once) */
#define KRC_MCP_INCIDENT_OUT_MAX 16384
extern char krc_mcp_incident_out[KRC_MCP_INCIDENT_OUT_MAX];
void krc_mcp_incidents_init(void);
extern const char krc_mcp_changes_in[];
extern const char krc_mcp_changes_out[];
int krc_mcp_tool_incidents(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                           struct krc_error *err);
int krc_mcp_tool_incident(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                          struct krc_error *err);
int krc_mcp_tool_what_changed(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                              struct krc_error *err);

#endif
