/* kube_parse: the first byte picks Pod, Event list or Node; the rest is
 * the document. Every container has a name, a failed pod parse leaves the
 * pod part empty, a failed events/node parse leaves the report unchanged,
 * and the report is released without leaks. */
#include <string.h>

#include "fuzz.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct krc_report r;
    struct krc_error err;
    uint8_t *copy;
    size_t n;
    int rc;

    if (size < 1) {
        return 0;
    }
    n = size - 1;
    copy = malloc(n > 0 ? n : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data + 1, n);
    krc_report_init(&r);
    switch (data[0] % 3) {
    case 0:
        rc = krc_kube_parse_pod((const char *)copy, n, &r, &err);
        if (rc != 0) {
            FUZZ_CHECK(r.n_containers == 0 && r.uid == NULL && r.name == NULL &&
                           r.n_conditions == 0 && r.n_claim_statuses == 0 && !r.has_pod_resources,
                       "failed pod parse left a pod part");
        }
        for (size_t i = 0; i < r.n_containers; i++) {
            const struct krc_report_container *c = &r.containers[i];
            FUZZ_CHECK(c->name != NULL, "container %zu without a name", i);
            FUZZ_CHECK(!c->is_sidecar || c->is_init, "sidecar");
            /* the Kubernetes 1.33+ fields stay within their caps */
            FUZZ_CHECK(c->n_restart_rules <= KRC_REPORT_RULES_MAX &&
                           c->n_resize_policy <= KRC_REPORT_RESIZE_MAX &&
                           c->n_resource_health <= KRC_REPORT_HEALTH_MAX,
                       "container %zu over a cap", i);
            for (size_t j = 0; j < c->n_restart_rules; j++) {
                FUZZ_CHECK(c->restart_rules[j].n_values <= KRC_REPORT_RULE_CODES_MAX, "codes");
            }
            for (size_t j = 0; j < c->n_resource_health; j++) {
                FUZZ_CHECK(c->resource_health[j].n_resources <= KRC_REPORT_DEVICES_MAX, "devices");
            }
            FUZZ_CHECK(c->stop_signal == NULL ||
                           strlen(c->stop_signal) <= KRC_REPORT_FIELD_TEXT_MAX,
                       "stop signal over the text cap");
        }
        FUZZ_CHECK(r.n_conditions <= KRC_REPORT_CONDITIONS_MAX &&
                       r.n_claim_statuses <= KRC_REPORT_CLAIMS_MAX,
                   "pod over a cap");
        (void)krc_report_resolve_workload(&r);
        break;
    case 1:
        rc = krc_kube_parse_events((const char *)copy, n, &r, &err);
        if (rc != 0) {
            FUZZ_CHECK(r.n_events == 0, "failed events parse left %zu events", r.n_events);
        }
        krc_report_retain_pod_events(&r);
        break;
    default:
        rc = krc_kube_parse_node((const char *)copy, n, &r, &err);
        if (rc != 0) {
            FUZZ_CHECK(!r.node.present, "failed node parse left a node");
        }
        break;
    }
    if (rc != 0) {
        FUZZ_CHECK(err.msg[0] != '\0', "error %d without a message", rc);
    }
    krc_report_cleanup(&r);
    free(copy);
    return 0;
}
