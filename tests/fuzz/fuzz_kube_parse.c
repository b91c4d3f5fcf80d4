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
            FUZZ_CHECK(r.n_containers == 0 && r.uid == NULL && r.name == NULL,
                       "failed pod parse left a pod part");
        }
        for (size_t i = 0; i < r.n_containers; i++) {
            FUZZ_CHECK(r.containers[i].name != NULL, "container %zu without a name", i);
            FUZZ_CHECK(!r.containers[i].is_sidecar || r.containers[i].is_init, "sidecar");
        }
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
