/* A stored restart as JSON (krc/store/row_json.h): the keys of `krc history
 * --format json` and of the MCP tools. */
#include <cjson/cJSON.h>

#include "krc/model/diagnosis.h"
#include "krc/model/report_json.h"
#include "krc/store/row_json.h"

#define PUT krc_report_json_put
#define STR krc_report_json_str
#define TIME krc_report_json_time

cJSON *krc_store_row_json(const struct krc_store_row *r, unsigned flags)
{
    int full = (flags & KRC_ROW_JSON_FULL) != 0;
    cJSON *o = cJSON_CreateObject();
    cJSON *w = NULL;
    int ok = o != NULL;

    ok = ok && PUT(o, "id", cJSON_CreateNumber((double)r->id));
    ok = ok && PUT(o, "cluster", cJSON_CreateString(r->cluster != NULL ? r->cluster : ""));
    ok = ok && PUT(o, "time", TIME(r->detected_at));
    ok = ok && (!full || PUT(o, "detected_at", cJSON_CreateNumber((double)r->detected_at)));
    ok = ok && PUT(o, "namespace", STR(r->namespace));
    ok = ok && PUT(o, "pod", STR(r->pod));
    ok = ok && (!full || PUT(o, "pod_uid", STR(r->pod_uid)));
    ok = ok && PUT(o, "container", STR(r->container));
    ok = ok && PUT(o, "restart_count", cJSON_CreateNumber(r->restart_count));
    ok = ok && PUT(o, "workload", w = cJSON_CreateObject());
    ok = ok && PUT(w, "kind", STR(r->workload_kind));
    ok = ok && PUT(w, "name", STR(r->workload_name));
    ok = ok && PUT(o, "node", STR(r->node));
    ok = ok && PUT(o, "exit_code",
                   r->has_exit_code ? cJSON_CreateNumber(r->exit_code) : cJSON_CreateNull());
    ok = ok && PUT(o, "signal", STR(krc_signal_name(r->signal)));
    ok = ok && PUT(o, "reason", STR(r->reason));
    ok = ok && PUT(o, "cause", STR(r->cause));
    ok = ok && PUT(o, "confidence", STR(r->confidence));
    ok = ok && PUT(o, "summary", STR(r->summary));
    if (ok && full) {
        ok = PUT(o, "started_at", TIME(r->started_at)) &&
             PUT(o, "finished_at", TIME(r->finished_at)) && PUT(o, "decision", STR(r->decision)) &&
             PUT(o, "delivery", STR(r->delivery)) &&
             PUT(o, "attempts", cJSON_CreateNumber(r->attempts));
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
