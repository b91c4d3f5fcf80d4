/* untrusted_fields: where an MCP answer holds text from the cluster. */
#include "krc/mcp/mcp_untrusted.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#define PTR_MAX 256

/* Paths of free text in a stored or live report (store/report_json.c), '*'
 * standing for every index of an array. */
static const char *const report_paths[] = {
    "pod/message",
    "pod/annotations",
    "containers/*/state_message",
    "containers/*/last/message",
    "events/*/message",
    "node/conditions/*/message",
    "diagnosis/summary",
    "diagnosis/evidence",
    "log/text",
    "notes",
    /* the what-changed line and its changes (issue 27): images, managers and
     * taints are written by whoever changes the workload or node */
    "what_changed/summary",
    "what_changed/changes/*/items",
    "what_changed/changes/*/manager",
    "what_changed/changes/*/summary",
};

/* Paths of free text in a recorded change (incident_json.h). */
static const char *const change_paths[] = {"items", "manager", "summary"};

static int present(const cJSON *v)
{
    if (cJSON_IsString(v)) {
        return v->valuestring[0] != '\0';
    }
    return (cJSON_IsArray(v) || cJSON_IsObject(v)) && v->child != NULL;
}

/* Add the pointer of every value at `path` under node (whose pointer is
 * ptr[0..len)) to list. -1 when out of memory. */
static int walk(cJSON *list, const cJSON *node, const char *path, char *ptr, size_t len)
{
    const char *slash = strchr(path, '/');
    size_t seg = slash != NULL ? (size_t)(slash - path) : strlen(path);
    const char *rest = path + seg + (slash != NULL);
    const cJSON *item;
    int n;

    if (*path == '\0') {
        return !present(node) || cJSON_AddItemToArray(list, cJSON_CreateString(ptr)) ? 0 : -1;
    }
    if (seg == 1 && path[0] == '*') {
        int i = 0;
        if (!cJSON_IsArray(node)) {
            return 0;
        }
        cJSON_ArrayForEach(item, node)
        {
            n = snprintf(ptr + len, PTR_MAX - len, "/%d", i++);
            if (n < 0 || (size_t)n >= PTR_MAX - len || walk(list, item, rest, ptr, len + n) < 0) {
                return -1;
            }
        }
        ptr[len] = '\0';
        return 0;
    }
    if (!cJSON_IsObject(node)) {
        return 0;
    }
    /* the keys are ours: no '~' or '/' to escape */
    n = snprintf(ptr + len, PTR_MAX - len, "/%.*s", (int)seg, path);
    if (n < 0 || (size_t)n >= PTR_MAX - len) {
        return -1;
    }
    item = cJSON_GetObjectItemCaseSensitive(node, ptr + len + 1);
    n = item != NULL ? walk(list, item, rest, ptr, len + n) : 0;
    ptr[len] = '\0';
    return n;
}

static int mark(cJSON *list, const cJSON *answer, const char *prefix, const char *path)
{
    char ptr[PTR_MAX];
    char full[PTR_MAX];

    ptr[0] = '\0';
    snprintf(full, sizeof(full), "%s%s", prefix, path);
    return walk(list, answer, full, ptr, 0);
}

static int mark_report(cJSON *list, const cJSON *answer, const char *prefix)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(report_paths) / sizeof(report_paths[0]); i++) {
        rc = mark(list, answer, prefix, report_paths[i]);
    }
    return rc;
}

static int mark_changes(cJSON *list, const cJSON *answer)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(change_paths) / sizeof(change_paths[0]); i++) {
        rc = mark(list, answer, "changes/*/", change_paths[i]);
    }
    return rc;
}

/* get_incident: the restarts' summaries, both reports, the changes, the
 * messages' text and the destinations' errors. */
static int mark_incident(cJSON *list, const cJSON *answer)
{
    int rc = mark(list, answer, "", "first/restart/summary");
    rc = rc < 0 ? rc : mark_report(list, answer, "first/report/");
    rc = rc < 0 ? rc : mark(list, answer, "", "latest/restart/summary");
    rc = rc < 0 ? rc : mark_report(list, answer, "latest/report/");
    rc = rc < 0 ? rc : mark_changes(list, answer);
    rc = rc < 0 ? rc : mark(list, answer, "", "messages/*/text");
    return rc < 0 ? rc : mark(list, answer, "", "messages/*/last_error");
}

int krc_mcp_untrusted_add(cJSON *answer, enum krc_mcp_answer kind)
{
    cJSON *list = cJSON_CreateArray();
    int rc = 0;

    if (list == NULL || !cJSON_AddItemToObject(answer, "untrusted_fields", list)) {
        cJSON_Delete(list);
        return -1;
    }
    if (kind == KRC_MCP_ANSWER_ROWS) {
        rc = mark(list, answer, "", "restarts/*/summary");
    } else if (kind == KRC_MCP_ANSWER_REPORT) {
        rc = mark(list, answer, "", "restart/summary");
    }
    if (rc == 0 && (kind == KRC_MCP_ANSWER_REPORT || kind == KRC_MCP_ANSWER_EXPLAIN)) {
        rc = mark_report(list, answer, "report/");
    }
    if (kind == KRC_MCP_ANSWER_INCIDENT) {
        rc = mark_incident(list, answer);
    } else if (kind == KRC_MCP_ANSWER_CHANGES) {
        rc = mark_changes(list, answer);
    }
    return rc;
}
