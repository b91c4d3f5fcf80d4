/* The read-only MCP tools of `krc mcp` and the daemon's /mcp endpoint.
 *
 *   list_restarts         recent restarts, newest first, filtered by cluster,
 *                         namespace, workload, pod name prefix, cause and since;
 *                         cursor pages
 *   get_restart_report    one stored report: status, cause, confidence, evidence,
 *                         next step, events, node, log tail (last log_bytes)
 *   pod_restart_timeline  every restart of one pod or workload (of one cluster
 *                         when asked), newest first, with causes; cursor pages
 *   restart_summary       since a time (of one cluster when asked): top
 *                         restarting workloads (with their most frequent
 *                         cause), causes, nodes, and GPUs held by crash-looping
 *                         pods (2 or more restarts in the window)
 *   explain_pod           live: reads the pod, its events, node and previous
 *                         log through the Kubernetes API and diagnoses it now
 *                         (only with a Kubernetes client)
 *
 * Scope (mcp_scope.h): a namespace or pod argument outside what krc watches
 * (or outside mcpNamespaces) is refused with a tool error naming the setting,
 * before any query or API request; rows outside it are left out of lists,
 * timelines and summaries (pages stay keyset-consistent: a page may then hold
 * fewer rows than asked for, with a next_cursor, after scan_budget rows read).
 * Names are checked as Kubernetes names (kube/kube_name.h) first.
 * Untrusted text (mcp_untrusted.h): every answer lists in "untrusted_fields"
 * the JSON Pointers of its text from the cluster.
 *
 * Every tool is read-only: none writes to the cluster or the database (the
 * history is opened read-only), runs a command or returns a pod's environment
 * values; log text, messages and evidence went through the redactor when the
 * report was built (krc_report_json_build: by krc run for a stored report, by
 * explain_pod with the redactor given here for a live one).
 * Every restart returned carries "cluster", the clusterName of the krc that
 * recorded it ("" when unnamed): a PostgreSQL history may hold many clusters.
 * Output is bounded: at most 200 rows a page (500 for a timeline), a log tail
 * of at most 64 KiB.
 *
 * Threads: the tools share one read-only database connection behind a mutex,
 * so they may be called from several threads. */
#ifndef KRC_MCP_TOOLS_H
#define KRC_MCP_TOOLS_H

#include "krc/kube/kube_client.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_scope.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

struct krc_mcp_tools_config {
    const char *db_path;                 /* required (copied): a SQLite file or PostgreSQL URL */
    const char *db_password_file;        /* PostgreSQL password file (copied); NULL: none */
    struct krc_kube_client *kube;        /* borrowed; NULL: explain_pod says it has no cluster */
    const struct krc_redactor *redactor; /* borrowed; NULL: the built-in patterns */
    /* what the tools answer about (mcp_scope.h; strings borrowed for the
     * call); NULL: everything */
    const struct krc_mcp_scope_config *scope;
    /* rows read per query when the scope leaves rows out, and at most per
     * list call; 0: 1000 and 50000 (tests set them small) */
    long scan_chunk;
    long scan_budget;
};

struct krc_mcp_tools;

/* The database is opened on first use (and again after a failure), so the
 * tools work once `krc run` has created it. KRC_EINVAL (also: a scope
 * setting with an invalid regular expression, named); KRC_ENOMEM. */
int krc_mcp_tools_new(const struct krc_mcp_tools_config *cfg, struct krc_mcp_tools **ret,
                      struct krc_error *err);

/* Replace the scope (SIGHUP): calls that already started finish with the old
 * one. On error the old one stays. */
int krc_mcp_tools_set_scope(struct krc_mcp_tools *t, const struct krc_mcp_scope_config *scope,
                            struct krc_error *err);
void krc_mcp_tools_free(struct krc_mcp_tools *t);

/* An MCP server (krc_mcp_new) serving these tools as "krc". Free it before
 * the tools. */
int krc_mcp_tools_server(struct krc_mcp_tools *t, struct krc_mcp **ret, struct krc_error *err);

#endif
