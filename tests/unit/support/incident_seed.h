/* A history with incidents and recorded changes, written through the store
 * API (krc_store_record with an incident ref, krc_store_incident_end,
 * krc_store_record_change), for the tests of `krc history incidents |
 * incident | changes` and of the MCP tools list_incidents, get_incident and
 * what_changed: tests/unit/mcp/test_mcp_incidents.c directly, the
 * integration tests through tests/tools/incident_seed.
 *
 * Relative to `now` (all times unix seconds, T = now - 3600, the api
 * incident's first restart):
 *   api     shop, Deployment/api, container app, oom_killed, open: restarts of
 *           pods api-7d9f-1 (T, node node-a, the first: report with the log
 *           line "FIRST-CRASH-LOG" and a what_changed line), api-7d9f-2
 *           (T+600, node node-a) and api-7d9f-3 (T+1200, node node-b, the
 *           latest: log "LATEST-CRASH-LOG"); an alert (delivered, ts) and a
 *           thread reply (pending) recorded with them
 *   canary  shop, Deployment/web-canary (pod web-canary-1), app_error, open,
 *           one restart at T+300
 *   dns     kube-system, Deployment/coredns (pod coredns-1), app_error, open,
 *           one restart at T+400
 *   trainer ml, Pod/trainer-0 (no controller), gpu_out_of_memory: two
 *           restarts at T-7200 and T-7000 on gpu-1, ended at T-6000
 *   changes Deployment shop/api revision 12 at T-240 (image and memory limit,
 *           previous revision 11 with 3 ready), revision 11 at T-2d, revision
 *           13 at T+1800 (after the first restart); Node node-a kubelet at
 *           T-600; Node node-z (no pod of api ran there) at T-300; Deployment
 *           kube-system/coredns revision 4 at T-100
 * The incidents are written in that order (their ids grow so). */
#ifndef KRC_TEST_INCIDENT_SEED_H
#define KRC_TEST_INCIDENT_SEED_H

#include <stdint.h>

struct krc_test_incidents {
    int64_t t;                            /* T */
    int64_t api, canary, dns, trainer;    /* incident ids */
    int64_t api_first, api_2, api_latest; /* restart ids */
    int64_t canary_first, dns_first, trainer_first, trainer_latest;
};

/* Write the history above into the SQLite file or PostgreSQL URL `db`
 * (created when missing). 0, or -1 after printing why to stderr. */
int krc_test_seed_incidents(const char *db, int64_t now, struct krc_test_incidents *ret);

/* The group fixture of the unit tests on that history: a new temporary
 * directory (krc_test_tmpdir with NAME) holding it in krc.db, written at the
 * current time; a failure fails the test. krc_test_incident_db_remove removes
 * the directory. */
struct krc_test_incident_db {
    char dir[256];
    char db[512]; /* DIR/krc.db */
    struct krc_test_incidents ids;
};
void krc_test_incident_db_make(struct krc_test_incident_db *h, const char *name);
void krc_test_incident_db_remove(struct krc_test_incident_db *h);

#endif
