/* A stored restart as JSON, for `krc history --format json` and the MCP
 * tools (src/store/row_json.c). */
#ifndef KRC_STORE_ROW_JSON_H
#define KRC_STORE_ROW_JSON_H

#include <cjson/cJSON.h>

#include "krc/store/store.h"

/* A stored restart (a list row) as JSON: id, cluster (the cluster that
 * recorded it, "" when unnamed or not known), time, namespace, pod, container,
 * restart_count, workload {kind, name}, node, exit_code, signal, reason,
 * cause, confidence, summary; with KRC_ROW_JSON_FULL also detected_at (unix
 * seconds), pod_uid, started_at, finished_at, decision, delivery, attempts
 * (the keys of `krc history --format json`, a public contract; the MCP
 * tools' output schemas list the brief ones). NULL when out of memory. */
#define KRC_ROW_JSON_FULL 1u
cJSON *krc_store_row_json(const struct krc_store_row *r, unsigned flags);

#endif
