/* describe_node: `kubectl describe node` text -> Node JSON, read back by
 * kube_parse as the node of a report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "krc/explain/describe_node.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

static const char NODE[] =
    "Name:               node-3\n"
    "Roles:              <none>\n"
    "Taints:             node.kubernetes.io/memory-pressure:NoSchedule\n"
    "Unschedulable:      true\n"
    "Conditions:\n"
    "  Type            Status  LastHeartbeatTime                LastTransitionTime              "
    " Reason                        Message\n"
    "  ----            ------  -----------------                ------------------              "
    " ------                        -------\n"
    "  MemoryPressure  True    Wed, 02 Dec 2026 16:49:58 +0000  Wed, 02 Dec 2026 16:45:12 +0000 "
    " KubeletHasInsufficientMemory  kubelet has insufficient memory available\n"
    "  Ready           Unknown Wed, 02 Dec 2026 16:49:58 +0000  Wed, 02 Dec 2026 16:51:00 +0000 "
    " NodeStatusUnknown             Kubelet stopped posting node status.\n"
    "Addresses:\n"
    "  InternalIP:  10.0.0.7\n"
    "Capacity:\n"
    "  cpu:                4\n"
    "  memory:             16393220Ki\n"
    "Allocatable:\n"
    "  cpu:                3860m\n"
    "  memory:             13700100Ki\n"
    "System Info:\n"
    "  Machine ID:                 5f3c\n"
    "  Kernel Version:             5.15.0-1051-azure\n"
    "  OS Image:                   Ubuntu 22.04.3 LTS\n"
    "  Container Runtime Version:  containerd://1.7.5\n"
    "  Kubelet Version:            v1.28.3\n"
    "PodCIDR:                      10.244.3.0/24\n"
    "Events:\n"
    "  Type     Reason                Age   From     Message\n"
    "  ----     ------                ----  ----     -------\n"
    "  Warning  EvictionThresholdMet  5m    kubelet  Attempting to reclaim memory\n";

static char *convert(const char *text, int want_rc)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    char *json = NULL;
    struct krc_error err;

    assert_non_null(copy);
    memcpy(copy, text, n);
    krc_error_clear(&err);
    assert_int_equal(krc_describe_node(copy, n, &json, &err), want_rc);
    free(copy);
    return json;
}

static const char *cond(const struct krc_report *r, const char *type, const char *field)
{
    for (size_t i = 0; i < r->node.n_conditions; i++) {
        const struct krc_report_node_condition *c = &r->node.conditions[i];
        if (strcmp(c->type, type) == 0) {
            return strcmp(field, "status") == 0   ? c->status
                   : strcmp(field, "reason") == 0 ? c->reason
                                                  : c->message;
        }
    }
    return NULL;
}

static void test_whole_node(void **state)
{
    struct krc_report r;
    struct krc_error err;
    char *json = convert(NODE, 0);
    cJSON *o = cJSON_Parse(json);

    (void)state;
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, "Node");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "capacity"),
                            "memory")
            ->valuestring,
        "16393220Ki");
    /* the Events table's "Type" header is not a condition */
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions")), 2);
    cJSON_Delete(o);

    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_node(json, strlen(json), &r, &err), 0);
    assert_string_equal(r.node.name, "node-3");
    assert_true(r.node.unschedulable);
    assert_int_equal(r.node.n_conditions, 2);
    assert_string_equal(cond(&r, "MemoryPressure", "status"), "True");
    assert_string_equal(cond(&r, "MemoryPressure", "reason"), "KubeletHasInsufficientMemory");
    assert_string_equal(cond(&r, "MemoryPressure", "message"),
                        "kubelet has insufficient memory available");
    assert_string_equal(cond(&r, "Ready", "status"), "Unknown");
    assert_string_equal(cond(&r, "Ready", "reason"), "NodeStatusUnknown");
    assert_string_equal(r.node.kubelet_version, "v1.28.3");
    assert_string_equal(r.node.kernel_version, "5.15.0-1051-azure");
    assert_string_equal(r.node.os_image, "Ubuntu 22.04.3 LTS");
    assert_string_equal(r.node.container_runtime_version, "containerd://1.7.5");
    krc_report_cleanup(&r);
    krc_free(json);
}

static void test_squeezed_and_indented(void **state)
{
    /* pasted: a common indentation, CRLF, a condition row with its spaces squeezed */
    static const char text[] =
        "    Name: node-9\r\n"
        "    Conditions:\r\n"
        "      Type Status LastHeartbeatTime LastTransitionTime Reason Message\r\n"
        "      DiskPressure True Wed, 02 Dec 2026 16:49:58 +0000 Wed, 02 Dec 2026 16:45:12 +0000 "
        "KubeletHasDiskPressure kubelet has disk pressure\r\n"
        "    Unschedulable: false\r\n";
    struct krc_report r;
    struct krc_error err;
    char *json = convert(text, 0);

    (void)state;
    krc_report_init(&r);
    krc_error_clear(&err);
    assert_int_equal(krc_kube_parse_node(json, strlen(json), &r, &err), 0);
    assert_string_equal(r.node.name, "node-9");
    assert_false(r.node.unschedulable);
    assert_int_equal(r.node.n_conditions, 1);
    assert_string_equal(cond(&r, "DiskPressure", "status"), "True");
    assert_string_equal(cond(&r, "DiskPressure", "reason"), "KubeletHasDiskPressure");
    assert_string_equal(cond(&r, "DiskPressure", "message"), "kubelet has disk pressure");
    /* nothing shown, nothing claimed */
    assert_null(r.node.kubelet_version);
    assert_int_equal(r.node.capacity.n, 0);
    krc_report_cleanup(&r);
    krc_free(json);
}

static void test_detect_and_refuse(void **state)
{
    (void)state;
    assert_true(krc_describe_node_is(NODE, strlen(NODE)));
    assert_false(krc_describe_node_is("Name: web\nStatus: Running\nConditions:\n", 39));
    assert_false(krc_describe_node_is("Roles: admin\n", 13));
    assert_null(convert("Roles: <none>\nTaints: <none>\n", KRC_EINVAL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_node),
        cmocka_unit_test(test_squeezed_and_indented),
        cmocka_unit_test(test_detect_and_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
