/* Differential: the watch's jscan decoder (kube_pod) and the collector's
 * cJSON decoder (kube_parse) read the same pod JSON. When both accept it,
 * they must agree on every field both extract: identity, node, phase,
 * creation time, the Slack channel, and per container with a status its
 * restart count, readiness, sidecar flag, state, reason and exit code, and
 * the last termination. Documents with a duplicate key are left out: JSON
 * does not say which copy counts (kube_pod keeps the last, as Go does;
 * cJSON finds the first). So are status lists that name a container twice,
 * which the API server's validation never lets through: kube_pod keeps each
 * entry (detection sees both), kube_parse merges them into one container;
 * neither is more right (found by a 10-minute run, kept as
 * tests/fuzz/regressions/pod_diff/repeated-status-name). */
#include <cjson/cJSON.h>
#include <string.h>

#include "fuzz.h"
#include "krc/kube/kube_parse.h"
#include "krc/kube/kube_pod.h"
#include "krc/model/report.h"

static int has_duplicate_key(const cJSON *n)
{
    for (const cJSON *c = n != NULL ? n->child : NULL; c != NULL; c = c->next) {
        if (cJSON_IsObject(n)) {
            for (const cJSON *d = c->next; d != NULL; d = d->next) {
                if (strcmp(c->string, d->string) == 0) {
                    return 1;
                }
            }
        }
        if (has_duplicate_key(c)) {
            return 1;
        }
    }
    return 0;
}

static int repeats_a_name(const cJSON *list)
{
    for (const cJSON *c = cJSON_IsArray(list) ? list->child : NULL; c != NULL; c = c->next) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "name");
        for (const cJSON *d = c->next; cJSON_IsString(n) && d != NULL; d = d->next) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "name");
            if (cJSON_IsString(m) && strcmp(n->valuestring, m->valuestring) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

static int repeated_status_name(const cJSON *tree)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(tree, "status");

    return repeats_a_name(cJSON_GetObjectItemCaseSensitive(st, "containerStatuses")) ||
           repeats_a_name(cJSON_GetObjectItemCaseSensitive(st, "initContainerStatuses")) ||
           repeats_a_name(cJSON_GetObjectItemCaseSensitive(st, "ephemeralContainerStatuses"));
}

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

#define SAME_STR(a, b, what)                                                                       \
    FUZZ_CHECK(same(a, b), "%s: kube_pod \"%s\", kube_parse \"%s\"", what, a ? a : "(null)",       \
               b ? b : "(null)")
#define SAME_INT(a, b, what)                                                                       \
    FUZZ_CHECK((long long)(a) == (long long)(b), "%s: kube_pod %lld, kube_parse %lld", what,       \
               (long long)(a), (long long)(b))

static void compare_container(const struct krc_container_info *c, const struct krc_report *r)
{
    const struct krc_report_container *rc = NULL;

    for (size_t i = 0; i < r->n_containers; i++) {
        if (strcmp(r->containers[i].name, c->name) == 0 && r->containers[i].is_init == c->is_init) {
            rc = &r->containers[i];
            break;
        }
    }
    FUZZ_CHECK(rc != NULL && rc->has_status, "container %s: kube_parse has no status", c->name);
    SAME_INT(c->restart_count, rc->restart_count, "restartCount");
    SAME_INT(c->ready, rc->ready, "ready");
    SAME_INT(c->is_sidecar, rc->is_sidecar, "sidecar");
    SAME_INT(c->state_running, rc->state == KRC_REPORT_STATE_RUNNING, "state running");
    SAME_INT(c->state_waiting, rc->state == KRC_REPORT_STATE_WAITING, "state waiting");
    SAME_INT(c->state_terminated, rc->state == KRC_REPORT_STATE_TERMINATED, "state terminated");
    SAME_STR(c->state_reason, rc->state_reason, "state reason");
    if (c->state_terminated) {
        SAME_INT(c->state_exit_code, rc->state_term.exit_code, "state exitCode");
    }
    SAME_INT(c->has_last_terminated, rc->last.present, "lastState.terminated");
    if (c->has_last_terminated) {
        SAME_INT(c->last_exit_code, rc->last.exit_code, "last exitCode");
        SAME_INT(c->last_signal, rc->last.signal, "last signal");
        SAME_STR(c->last_reason, rc->last.reason, "last reason");
        SAME_INT(c->last_started_at, rc->last.started_at, "last startedAt");
        SAME_INT(c->last_finished_at, rc->last.finished_at, "last finishedAt");
        SAME_STR(c->last_container_id, rc->last.container_id, "last containerID");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct krc_pod_info pod;
    static int ready;
    struct krc_report r;
    struct krc_error err;
    cJSON *tree;
    int a;
    int b;

    if (!ready) {
        krc_pod_info_init(&pod);
        ready = 1;
    }
    tree = cJSON_ParseWithLength((const char *)data, size);
    if (tree == NULL || !cJSON_IsObject(tree) || has_duplicate_key(tree) ||
        repeated_status_name(tree)) {
        cJSON_Delete(tree);
        return 0;
    }
    /* a List of one Pod is kube_parse's only: compare Pods */
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(tree, "kind")) ||
        strcmp(cJSON_GetObjectItemCaseSensitive(tree, "kind")->valuestring, "Pod") != 0) {
        cJSON_Delete(tree);
        return 0;
    }
    cJSON_Delete(tree);
    krc_report_init(&r);
    a = krc_pod_info_parse((const char *)data, size, &pod, &err);
    b = krc_kube_parse_pod((const char *)data, size, &r, &err);
    if (a == 0 && b == 0) {
        SAME_STR(pod.uid, r.uid, "uid");
        SAME_STR(pod.namespace, r.namespace, "namespace");
        SAME_STR(pod.name, r.name, "name");
        SAME_STR(pod.node_name, r.node_name, "nodeName");
        SAME_STR(pod.phase, r.phase, "phase");
        SAME_INT(pod.creation_timestamp, r.created_at, "creationTimestamp");
        SAME_STR(pod.slack_channel, r.slack_channel, "alert-slack-channel");
        for (size_t i = 0; i < pod.n_containers; i++) {
            compare_container(&pod.containers[i], &r);
        }
    }
    krc_report_cleanup(&r);
    return 0;
}
