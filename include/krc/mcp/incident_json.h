/* Incidents and recorded changes as JSON, and the changes a workload's
 * question is about: shared by `krc history incidents | incident ID | changes`
 * (src/cli/history_incidents.c) and the MCP tools list_incidents,
 * get_incident and what_changed (src/mcp/mcp_incidents.c), so that both say
 * the same thing with the same keys (docs/mcp.md, docs/running.md: a public
 * contract). */
#ifndef KRC_MCP_INCIDENT_JSON_H
#define KRC_MCP_INCIDENT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "krc/store/store.h"
#include "krc/util/error.h"

struct cJSON;

/* Changes are looked for this far before an incident's first restart (the
 * alert's what-changed line looks back as far). */
#define KRC_INCIDENT_CHANGES_LOOKBACK (24 * 3600)
/* Nodes whose changes are listed with a workload's: those of its newest
 * recorded restarts, at most this many of them. */
#define KRC_CHANGE_NODES_MAX 8
#define KRC_CHANGE_ROWS_READ 50
/* Items of one change returned, whatever a stored row holds. */
#define KRC_CHANGE_ITEMS_MAX 16

/* An incident: id, cluster, namespace, workload ("Kind/name"), container,
 * cause, restarts, first_at, last_at, ended_at (RFC 3339 UTC; ended_at null
 * while open), open, first_restart_id, latest_restart_id. NULL: out of
 * memory. */
struct cJSON *krc_incident_json(const struct krc_store_incident *inc);

/* A recorded change: the stored change object (kind, namespace, name,
 * revision, at, manager, items, previous_revision, previous_ready) with the
 * row's columns over it (id, cluster, kind, namespace, name, revision, at,
 * manager, summary, recorded_at; items [] when the row has none, at most
 * KRC_CHANGE_ITEMS_MAX). NULL: out of memory. */
struct cJSON *krc_change_json(const struct krc_store_change *c);

/* An outbox row of an incident: id, restart_id, kind, destination, channel,
 * thread_key, state, attempts, created_at, delivered_at, message_ref,
 * last_error, and text: what a person read of the body (Slack's and Google
 * Chat's text, PagerDuty's summary, a webhook restart's diagnosis summary;
 * null for others), cut to text_max bytes (0: whole). With `bodies`, also body and fallback (the
 * JSON documents as stored). NULL: out of memory. */
struct cJSON *krc_incident_message_json(const struct krc_store_message *m, size_t text_max,
                                        int bodies);

/* What a "what changed" question is about: a workload (kind "Pod" for a bare
 * pod) and the nodes its pods ran on. */
struct krc_change_target {
    const char *cluster; /* exact clusterName of the restarts and changes; NULL: any */
    char kind[64];
    char name[254];
    char nodes[KRC_CHANGE_NODES_MAX][254];
    size_t n_nodes;
    int64_t restarts; /* of its recorded restarts read, those kept */
};

/* keep: 1 when a restart row may be used (the MCP scope), NULL: every row. */
typedef int (*krc_change_keep_fn)(const struct krc_store_row *r, void *ud);

/* Fill t for the workload kind/name of namespace ns, or (pod non-NULL, kind
 * and name NULL) for the workload of the pod's newest recorded restart: the
 * nodes of its newest KRC_CHANGE_ROWS_READ recorded restarts that keep()
 * allows (of cluster, when not NULL: t->cluster, borrowed), newest first,
 * distinct. 0; KRC_ENOTFOUND when the pod has no
 * recorded restart keep() allows (t->kind empty); < 0 a database error. */
int krc_change_target_resolve(struct krc_store *s, const char *cluster, const char *ns,
                              const char *kind, const char *name, const char *pod,
                              krc_change_keep_fn keep, void *ud, struct krc_change_target *t,
                              struct krc_error *err);

/* The changes of namespace ns's target and of its nodes (of t->cluster) with since <= at <
 * until (0: no bound), newest first, at most limit, as a JSON array in *ret
 * (krc_change_json). 0, or < 0 (KRC_ENOMEM, a database error). */
int krc_change_target_list(struct krc_store *s, const char *ns, const struct krc_change_target *t,
                           int64_t since, int64_t until, long limit, struct cJSON **ret,
                           struct krc_error *err);

/* Parse "Kind/name" (the MCP tools, the incidents' workload) into kind and
 * name: a kind of 1-63 letters and digits beginning with an upper-case letter
 * and a name that is an RFC 1123 DNS subdomain. NULL when it is one, else
 * what is wrong (a static sentence). */
const char *krc_workload_ref_parse(const char *s, char *kind, size_t kindsz, char *name,
                                   size_t namesz);

#endif
