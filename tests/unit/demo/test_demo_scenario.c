/* The demo's scenario table against the repository's copies of the cases it
 * takes its facts from (KRC_FIXTURES): every fact in the table is in the
 * case's files, the expected cause is one the case accepts, and the objects
 * built from the table are well-formed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/demo/scenario.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/cause.h"
#include "krc/model/diagnosis.h"
#include "krc/model/report.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc_test.h"

#define PREFIX "tests/fixtures/"

/* The whole file, or NULL if it cannot be opened. */
static char *read_all(const char *path)
{
    size_t len;

    return krc_test_read_file(path, &len);
}

/* Every file of a case's directory but its description (case.json), concatenated. */
static char *case_text(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t len = 0;
    char *all = calloc(1, 1);

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[1024];
        char *t;
        if (e->d_name[0] == '.' || strcmp(e->d_name, "case.json") == 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        t = read_all(path);
        assert_non_null(t);
        all = realloc(all, len + strlen(t) + 2);
        memcpy(all + len, t, strlen(t));
        len += strlen(t);
        all[len++] = '\n';
        all[len] = '\0';
        free(t);
    }
    closedir(d);
    return all;
}

static void fixture_dir(const struct krc_demo_case *c, char *out, size_t outsz)
{
    assert_memory_equal(c->fixture, PREFIX, strlen(PREFIX));
    snprintf(out, outsz, "%s/%s", KRC_FIXTURES, c->fixture + strlen(PREFIX));
}

/* The cause is one the case accepts (realworld) or names (corpus), and the
 * source is the case's. */
static void check_verdict(const struct krc_demo_case *c, const char *dir)
{
    char path[1024];
    char *text;
    cJSON *j;
    enum krc_cause cause;
    int found = 0;

    assert_int_equal(krc_cause_parse(c->expect, &cause), 0);
    snprintf(path, sizeof(path), "%s/case.json", dir);
    text = read_all(path);
    if (text != NULL) {
        const cJSON *a;
        j = cJSON_Parse(text);
        assert_non_null(j);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "source")), c->source);
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "accept"))
        {
            found |= strcmp(a->valuestring, c->expect) == 0;
        }
    } else {
        snprintf(path, sizeof(path), "%s/expected.json", dir);
        text = read_all(path);
        assert_non_null(text);
        j = cJSON_Parse(text);
        assert_non_null(j);
        found = strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "cause")), c->expect) == 0;
        assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "exit_code")),
                         c->exit_code);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "container")),
                            c->container);
    }
    if (!found) {
        fail_msg("%s: cause %s is not what %s accepts", c->key, c->expect, dir);
    }
    cJSON_Delete(j);
    free(text);
}

/* Every log line, the termination reason and message and the kubelet's event
 * texts are in the case's files. */
static void check_facts(const struct krc_demo_case *c, const char *dir)
{
    char *all = case_text(dir);
    char exit_s[64];

    if (c->log != NULL) {
        const char *p = c->log;
        while (*p != '\0') {
            const char *nl = strchr(p, '\n');
            size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
            char line[1024];
            assert_true(n < sizeof(line));
            memcpy(line, p, n);
            line[n] = '\0';
            if (strstr(all, line) == NULL) {
                fail_msg("%s: log line not in %s: %s", c->key, dir, line);
            }
            p += n + (nl != NULL ? 1 : 0);
        }
    }
    if (c->t_message != NULL && strstr(all, c->t_message) == NULL) {
        fail_msg("%s: termination message not in %s", c->key, dir);
    }
    if (c->args_json != NULL) {
        /* each posted argument, as a YAML list item ("- ARG") */
        cJSON *args = cJSON_Parse(c->args_json);
        const cJSON *a;
        assert_true(cJSON_IsArray(args));
        assert_true(cJSON_GetArraySize(args) > 0);
        cJSON_ArrayForEach(a, args)
        {
            char item[512];
            snprintf(item, sizeof(item), "- %s\n", cJSON_GetStringValue(a));
            if (strstr(all, item) == NULL) {
                fail_msg("%s: argument not in %s: %s", c->key, dir, cJSON_GetStringValue(a));
            }
        }
        cJSON_Delete(args);
    }
    if (c->restart_policy != NULL) {
        char json[128];
        char yaml[128];
        snprintf(json, sizeof(json), "\"restartPolicy\": \"%s\"", c->restart_policy);
        snprintf(yaml, sizeof(yaml), "restartPolicy: %s", c->restart_policy);
        if (strstr(all, json) == NULL && strstr(all, yaml) == NULL) {
            fail_msg("%s: restartPolicy %s not in %s", c->key, c->restart_policy, dir);
        }
    }
    if (strcmp(c->t_reason, "Error") != 0 && strstr(all, c->t_reason) == NULL) {
        fail_msg("%s: reason %s not in %s", c->key, c->t_reason, dir);
    }
    for (size_t k = 0; k < c->n_events; k++) {
        /* the node controller's texts are Kubernetes' own (docs/demo.md) */
        if (strcmp(c->events[k].component, "kubelet") == 0 &&
            strstr(all, c->events[k].message) == NULL) {
            fail_msg("%s: event message not in %s: %s", c->key, dir, c->events[k].message);
        }
    }
    /* a posted exit code is the one used */
    snprintf(exit_s, sizeof(exit_s), "%d", c->exit_code);
    for (const char *p = all; (p = strstr(p, "xit")) != NULL; p++) {
        if (strncmp(p, "xitCode: ", 9) == 0 || strncmp(p, "xit Code: ", 10) == 0 ||
            strncmp(p, "xitCode\": ", 10) == 0 || strncmp(p, "xit code ", 9) == 0) {
            const char *v = strncmp(p, "xit code ", 9) == 0 ? p + 9 : strchr(p, ':') + 1;
            while (*v == ' ') {
                v++;
            }
            if (strncmp(v, exit_s, strlen(exit_s)) != 0) {
                fail_msg("%s: the case posts another exit code: %.20s", c->key, v);
            }
        }
    }
    free(all);
}

static void test_cases_match_their_sources(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);

    (void)state;
    assert_true(n >= 8);
    for (size_t i = 0; i < n; i++) {
        char dir[1024];
        if (cases[i].field != NULL) {
            continue; /* test_field_demonstrations */
        }
        fixture_dir(&cases[i], dir, sizeof(dir));
        check_verdict(&cases[i], dir);
        check_facts(&cases[i], dir);
    }
}

static const cJSON *status_of(const cJSON *pod)
{
    return cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "status"), "containerStatuses"), 0);
}

static int exit_code_of(const cJSON *pod, int restarts)
{
    const cJSON *st = status_of(pod);
    const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(st, "lastState"), "terminated");

    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(st, "restartCount")), restarts);
    return (int)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "exitCode"));
}

/* metadata.ownerReferences[0] is the case's owner (a ReplicaSet's pods carry
 * its hash label); no owner, no ownerReferences. */
static void check_owner(const struct krc_demo_case *c, const cJSON *pod)
{
    const cJSON *m = cJSON_GetObjectItem(pod, "metadata");
    const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "ownerReferences"), 0);
    const char *hash = cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(m, "labels"), "pod-template-hash"));

    if (c->owner_kind == NULL) {
        assert_null(o);
        return;
    }
    assert_non_null(o);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind")), c->owner_kind);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "name")), c->owner_name);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "controller")));
    if (strcmp(c->owner_kind, "ReplicaSet") == 0) {
        assert_non_null(hash);
        assert_string_equal(hash, strrchr(c->owner_name, '-') + 1);
    } else {
        assert_null(hash);
    }
}

static void test_objects(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);
    char uids[64][37];
    size_t n_uids = 0;
    int storm = 0;

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const struct krc_demo_case *c = &cases[i];
        assert_non_null(krc_demo_node_named(c->node));
        assert_true(c->replicas >= 1);
        storm |= c->replicas > 1 && strcmp(c->node, krc_demo_storm_node()) == 0;
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(cases[j].key, c->key);
        }
        for (int r = 0; r < c->replicas; r++) {
            cJSON *ok = krc_demo_pod_json(c, r, 0, 1700000000, 0, 0);
            cJSON *bad = krc_demo_pod_json(c, r, 1, 1700000000, 1700003000 - c->run_s, 1700003000);
            const char *uid = cJSON_GetStringValue(
                cJSON_GetObjectItem(cJSON_GetObjectItem(bad, "metadata"), "uid"));
            const char *list = "containerStatuses";
            assert_non_null(ok);
            assert_non_null(bad);
            assert_int_equal(strlen(uid), 36);
            assert_int_equal(uid[14], '4');
            for (size_t k = 0; k < n_uids; k++) {
                assert_string_not_equal(uids[k], uid);
            }
            assert_true(n_uids < 64);
            snprintf(uids[n_uids++], 37, "%s", uid);
            assert_int_equal(exit_code_of(bad, 1), c->exit_code);
            check_owner(c, bad);
            assert_int_equal(
                (int)cJSON_GetNumberValue(cJSON_GetObjectItem(
                    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(ok, "status"), list),
                                       0),
                    "restartCount")),
                0);
            cJSON_Delete(ok);
            cJSON_Delete(bad);
        }
    }
    assert_true(storm);
}

/* A crash-looping case: its files show the crash loop, each crash k has
 * restartCount k and the kubelet's back-off for it (10 s doubled), and where
 * the case posted its pod's waiting message, its BackOff event or its owner,
 * the objects carry the same words. */
static void test_crash_loops(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);
    int loops = 0;

    (void)state;
    assert_int_equal(krc_demo_backoff_s(1), 10);
    assert_int_equal(krc_demo_backoff_s(2), 20);
    assert_int_equal(krc_demo_backoff_s(3), 40);
    assert_int_equal(krc_demo_backoff_s(9), 300);
    for (size_t i = 0; i < n; i++) {
        const struct krc_demo_case *c = &cases[i];
        char dir[1024];
        char *all;
        if (c->field != NULL) {
            assert_true(c->restarts <= 1);
            continue;
        }
        fixture_dir(c, dir, sizeof(dir));
        all = case_text(dir);
        if (c->owner_name != NULL && strstr(all, "ownerReferences") != NULL &&
            strstr(all, c->owner_name) == NULL) {
            fail_msg("%s: the case posts another owner than %s", c->key, c->owner_name);
        }
        if (c->restarts <= 1) {
            free(all);
            continue;
        }
        loops++;
        if (strstr(all, "CrashLoopBackOff") == NULL) {
            fail_msg("%s: the case shows no crash loop", c->key);
        }
        for (int k = 1; k <= c->restarts; k++) {
            cJSON *pod = krc_demo_pod_json(c, 0, k, 1700000000, 1700002990, 1700003000);
            cJSON *ev = krc_demo_backoff_event_json(c, 0, k - 1, 1700000100, 1700003000);
            const char *wait = cJSON_GetStringValue(cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(status_of(pod), "state"), "waiting"),
                "message"));
            const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "message"));
            char want[64];
            assert_non_null(pod);
            assert_non_null(ev);
            assert_int_equal(exit_code_of(pod, k), c->exit_code);
            snprintf(want, sizeof(want),
                     "back-off %ds restarting failed container=", krc_demo_backoff_s(k));
            assert_non_null(wait);
            assert_memory_equal(wait, want, strlen(want));
            /* the case's own words, up to the UID (the simulation's) */
            if (strstr(all, "restartCount\": 2") != NULL && k == 2) {
                size_t upto = (size_t)(strchr(wait, '(') - wait);
                char *head = strndup(wait, upto);
                if (strstr(all, head) == NULL) {
                    fail_msg("%s: waiting message not in the case: %s", c->key, head);
                }
                free(head);
            }
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "reason")), "BackOff");
            if (strstr(all, "\"BackOff\"") != NULL) {
                char *head = strndup(msg, (size_t)(strchr(msg, '(') - msg));
                if (strstr(all, head) == NULL) {
                    fail_msg("%s: BackOff event text not in the case: %s", c->key, head);
                }
                free(head);
            }
            cJSON_Delete(pod);
            cJSON_Delete(ev);
        }
        free(all);
    }
    assert_int_equal(loops, 2);
}

/* Every member name of `o` (recursively) is a field name of the composed
 * 1.35 pod `fixture` follows (quoted: "name"). */
static void check_field_names(const struct krc_demo_case *c, const cJSON *o, const char *fixture)
{
    const cJSON *k;

    cJSON_ArrayForEach(k, o)
    {
        if (k->string != NULL) {
            char quoted[256];
            snprintf(quoted, sizeof(quoted), "\"%s\"", k->string);
            if (strstr(fixture, quoted) == NULL) {
                fail_msg("%s: field %s is not in %s", c->key, quoted, c->fixture);
            }
        }
        check_field_names(c, k, fixture);
    }
}

static void check_json_fields(const struct krc_demo_case *c, const char *json, const char *fixture)
{
    cJSON *o;

    if (json == NULL) {
        return;
    }
    o = cJSON_Parse(json);
    if (o == NULL) {
        fail_msg("%s: not JSON: %s", c->key, json);
    }
    check_field_names(c, o, fixture);
    cJSON_Delete(o);
}

/* krc's own parser and diagnosis, on the pod the demo serves after the
 * crash, name `cause` for `container` (intentional or not). */
static void check_diagnosis(const struct krc_demo_case *c, const char *container, const char *cause,
                            int intentional)
{
    cJSON *pod = krc_demo_pod_json(c, 0, 1, 1700000000, 1700003000 - c->run_s, 1700003000);
    char *text = cJSON_PrintUnformatted(pod);
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error e;
    enum krc_cause want;

    assert_non_null(text);
    krc_report_init(&r);
    krc_diagnosis_init(&d);
    krc_error_clear(&e);
    if (krc_kube_parse_pod(text, strlen(text), &r, &e) < 0) {
        fail_msg("%s: krc cannot parse the demo's pod: %s", c->key, e.msg);
    }
    assert_int_equal(krc_diagnose(&r, container, &d, &e), 0);
    assert_int_equal(krc_cause_parse(cause, &want), 0);
    if (d.cause != want || d.intentional != intentional) {
        fail_msg("%s/%s: cause %s intentional %d, want %s intentional %d: %s", c->key, container,
                 krc_cause_name(d.cause), d.intentional, cause, intentional, d.summary);
    }
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    cJSON_free(text);
    cJSON_Delete(pod);
}

/* Every member of the JSON object `json` is in `o`, equal. */
static void check_merged(const struct krc_demo_case *c, const cJSON *o, const char *json)
{
    cJSON *want = json != NULL ? cJSON_Parse(json) : NULL;
    const cJSON *k;

    cJSON_ArrayForEach(k, want)
    {
        if (!cJSON_Compare(k, cJSON_GetObjectItemCaseSensitive(o, k->string), 1)) {
            fail_msg("%s: %s is not as the table says in the pod", c->key, k->string);
        }
    }
    cJSON_Delete(want);
}

/* The field demonstrations (issue 26): labelled as such, with their KEP as
 * source; the fields they add have the names of the composed 1.35 pod of
 * tests/fixtures/k8s-1.35 they follow; krc's diagnosis of the pod the demo
 * serves names the cause the demo promises, and the restart-all's other
 * containers are restarted_with_others, intentional. */
static void test_field_demonstrations(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);
    const char *kep = "https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/";
    int fields = 0;
    int others = 0;
    int public_seen_after = 0;

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const struct krc_demo_case *c = &cases[i];
        char path[1024];
        char num[16];
        char *fixture;
        enum krc_cause cause;
        if (c->field == NULL) {
            public_seen_after |= fields > 0;
            assert_null(c->pod_spec_json);
            assert_null(c->container_spec_json);
            assert_null(c->crashed_status_json);
            assert_null(c->others);
            continue;
        }
        fields++;
        /* the KEP the label names is the source */
        assert_memory_equal(c->source, kep, strlen(kep));
        snprintf(num, sizeof(num), "KEP-%.4s", c->source + strlen(kep));
        if (strstr(c->field, num) == NULL) {
            fail_msg("%s: the label does not name %s: %s", c->key, num, c->field);
        }
        assert_non_null(strstr(c->field, "in 1."));
        assert_memory_equal(c->fixture, PREFIX "k8s-1.35/", strlen(PREFIX "k8s-1.35/"));
        snprintf(path, sizeof(path), "%s/%s", KRC_FIXTURES, c->fixture + strlen(PREFIX));
        fixture = read_all(path);
        assert_non_null(fixture);
        check_json_fields(c, c->pod_spec_json, fixture);
        check_json_fields(c, c->container_spec_json, fixture);
        check_json_fields(c, c->crashed_status_json, fixture);
        check_json_fields(c, c->conditions_json, fixture);
        free(fixture);
        {
            cJSON *pod = krc_demo_pod_json(c, 0, 1, 1700000000, 1700000000, 1700003000);
            const cJSON *spec = cJSON_GetObjectItem(pod, "spec");
            check_merged(c, spec, c->pod_spec_json);
            check_merged(c, cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0),
                         c->container_spec_json);
            check_merged(c, status_of(pod), c->crashed_status_json);
            cJSON_Delete(pod);
        }
        assert_int_equal(krc_cause_parse(c->expect, &cause), 0);
        check_diagnosis(c, c->container, c->expect,
                        strcmp(c->expect, "restart_rule") == 0 ||
                            strcmp(c->expect, "restarted_with_others") == 0);
        for (size_t k = 0; c->others != NULL && c->others[k] != NULL; k++) {
            check_diagnosis(c, c->others[k], "restarted_with_others", 1);
            others++;
        }
    }
    /* the four of the issue, after every public case */
    assert_int_equal(fields, 4);
    assert_int_equal(others, 3);
    assert_false(public_seen_after);
}

static void test_node_states(void **state)
{
    const struct krc_demo_node *gpu = krc_demo_node_named("gpu-a100-07");
    cJSON *ready;
    cJSON *lost;
    const cJSON *c;
    int unknown = 0;

    (void)state;
    assert_non_null(gpu);
    assert_string_equal(gpu->name, "gpu-a100-07");
    assert_null(krc_demo_node_named("gpu-a100-0"));
    ready = krc_demo_node_json(gpu, 1, 1700000000, 1700000100);
    lost = krc_demo_node_json(gpu, 0, 1700000000, 1700000100);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                            cJSON_GetObjectItem(cJSON_GetObjectItem(ready, "status"), "capacity"),
                            "nvidia.com/gpu")),
                        "8");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(lost, "status"), "conditions"))
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), "Ready") == 0) {
            unknown =
                strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "status")), "Unknown") == 0 &&
                strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "reason")),
                       "NodeStatusUnknown") == 0;
        }
    }
    assert_true(unknown);
    cJSON_Delete(ready);
    cJSON_Delete(lost);
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(o, a);
    return cJSON_GetStringValue(b != NULL ? cJSON_GetObjectItem(v, b) : v);
}

static int64_t time_at(const cJSON *o, const char *key)
{
    const char *v = str_at(cJSON_GetObjectItem(o, "metadata"), key, NULL);
    int64_t t = 0;

    assert_non_null(v);
    assert_int_equal(krc_parse_rfc3339(v, strlen(v), &t), 0);
    return t;
}

/* The container args of a pod spec or a template ("" when none), joined. */
static void args_of(const cJSON *spec, char *out, size_t outsz)
{
    const cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0);
    const cJSON *a;
    size_t n = 0;

    out[0] = '\0';
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(k, "args"))
    {
        n += (size_t)snprintf(out + n, outsz - n, "%s%s", n ? " " : "", cJSON_GetStringValue(a));
    }
}

/* The ReplicaSet cases' Deployments and ReplicaSets (change tracking): names,
 * the revision annotation, pod-template-hash, the owner reference, times
 * and managedFields; the pod's template is its ReplicaSet's; a rollout's
 * previous ReplicaSet differs in its args only and is older than the pod;
 * without a rollout the one revision is older than the 24 h krc looks back.
 * Other owners get none. */
static void test_deployments(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);
    const int64_t t0 = 1700000000;
    int rollouts = 0;
    int deployments = 0;

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const struct krc_demo_case *c = &cases[i];
        char name[254];
        cJSON *d;
        cJSON *rs;
        cJSON *prev;
        cJSON *pod;
        char want[64];
        char a[512];
        char b[512];
        const cJSON *owner;
        if (krc_demo_deployment_name(c, name, sizeof(name)) < 0) {
            assert_null(krc_demo_deployment_json(c, t0));
            assert_null(krc_demo_replicaset_json(c, 0, t0));
            assert_null(c->rollout);
            continue;
        }
        deployments++;
        d = krc_demo_deployment_json(c, t0);
        rs = krc_demo_replicaset_json(c, 0, t0);
        prev = krc_demo_replicaset_json(c, 1, t0);
        pod = krc_demo_pod_json(c, 0, 0, krc_demo_pod_created(c, t0), 0, 0);
        assert_non_null(d);
        assert_non_null(rs);
        assert_non_null(pod);
        assert_string_equal(str_at(d, "kind", NULL), "Deployment");
        assert_string_equal(str_at(d, "metadata", "name"), name);
        assert_string_equal(str_at(d, "metadata", "namespace"), c->ns);
        assert_string_equal(str_at(rs, "metadata", "name"), c->owner_name);
        snprintf(want, sizeof(want), "%d", c->rollout != NULL ? 2 : 1);
        assert_string_equal(str_at(cJSON_GetObjectItem(rs, "metadata"), "annotations",
                                   "deployment.kubernetes.io/revision"),
                            want);
        assert_string_equal(str_at(cJSON_GetObjectItem(d, "metadata"), "annotations",
                                   "deployment.kubernetes.io/revision"),
                            want);
        assert_string_equal(
            str_at(cJSON_GetObjectItem(rs, "metadata"), "labels", "pod-template-hash"),
            strrchr(c->owner_name, '-') + 1);
        owner = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(rs, "metadata"), "ownerReferences"), 0);
        assert_string_equal(str_at(owner, "kind", NULL), "Deployment");
        assert_string_equal(str_at(owner, "name", NULL), name);
        assert_string_equal(str_at(owner, "uid", NULL), str_at(d, "metadata", "uid"));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(owner, "controller")));
        /* the template's manager and when it wrote it */
        assert_string_equal(
            str_at(cJSON_GetArrayItem(
                       cJSON_GetObjectItem(cJSON_GetObjectItem(d, "metadata"), "managedFields"), 0),
                   "manager", NULL),
            c->rollout != NULL ? c->rollout->manager : "kubectl-client-side-apply");
        /* the pod is the current template's: its args and labels */
        args_of(cJSON_GetObjectItem(pod, "spec"), a, sizeof(a));
        args_of(cJSON_GetObjectItem(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(rs, "spec"), "template"), "spec"),
                b, sizeof(b));
        assert_string_equal(a, b);
        assert_null(cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(rs, "spec"), "template"),
                                "spec"),
            "nodeName"));
        assert_true(time_at(rs, "creationTimestamp") <= time_at(pod, "creationTimestamp"));
        if (c->rollout == NULL) {
            assert_null(prev);
            assert_true(time_at(rs, "creationTimestamp") < t0 - 86400);
        } else {
            char pa[512];
            cJSON *pt;
            cJSON *ct;
            rollouts++;
            assert_non_null(prev);
            assert_string_equal(str_at(cJSON_GetObjectItem(prev, "metadata"), "annotations",
                                       "deployment.kubernetes.io/revision"),
                                "1");
            assert_string_equal(
                str_at(cJSON_GetObjectItem(prev, "metadata"), "labels", "pod-template-hash"),
                c->rollout->prev_hash);
            assert_true(time_at(prev, "creationTimestamp") < time_at(rs, "creationTimestamp"));
            assert_int_equal(time_at(rs, "creationTimestamp"), t0 - c->rollout->before_s);
            /* within the lookback, before the pod */
            assert_true(c->rollout->before_s > 0 && c->rollout->before_s < 86400);
            pt = cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(prev, "spec"), "template"),
                                 1);
            ct = cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(rs, "spec"), "template"),
                                 1);
            args_of(cJSON_GetObjectItem(pt, "spec"), pa, sizeof(pa));
            assert_string_not_equal(pa, b);
            /* nothing else differs: the hash label, then the args */
            cJSON_DeleteItemFromObject(
                cJSON_GetObjectItem(cJSON_GetObjectItem(pt, "metadata"), "labels"),
                "pod-template-hash");
            cJSON_DeleteItemFromObject(
                cJSON_GetObjectItem(cJSON_GetObjectItem(ct, "metadata"), "labels"),
                "pod-template-hash");
            assert_false(cJSON_Compare(pt, ct, 1));
            cJSON_DeleteItemFromObject(
                cJSON_GetArrayItem(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(pt, "spec"), "containers"), 0),
                "args");
            cJSON_DeleteItemFromObject(
                cJSON_GetArrayItem(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(ct, "spec"), "containers"), 0),
                "args");
            assert_true(cJSON_Compare(pt, ct, 1));
            cJSON_Delete(pt);
            cJSON_Delete(ct);
        }
        cJSON_Delete(d);
        cJSON_Delete(rs);
        cJSON_Delete(prev);
        cJSON_Delete(pod);
    }
    /* lightspeed-core, backstage-backend, report-builder; one rollout */
    assert_int_equal(deployments, 3);
    assert_int_equal(rollouts, 1);
}

/* The pod is its owner's template: its spec but the node, its labels but
 * those the controller adds to each pod (`added`, NULL-terminated). */
static void check_pod_of_template(const cJSON *pod, const cJSON *tmpl, const char *const *added)
{
    cJSON *spec = cJSON_Duplicate(cJSON_GetObjectItem(pod, "spec"), 1);
    cJSON *labels =
        cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "labels"), 1);

    assert_non_null(tmpl);
    assert_non_null(cJSON_GetObjectItem(spec, "nodeName"));
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
    assert_true(cJSON_Compare(spec, cJSON_GetObjectItem(tmpl, "spec"), 1));
    for (size_t k = 0; added != NULL && added[k] != NULL; k++) {
        assert_non_null(cJSON_GetObjectItem(labels, added[k]));
        cJSON_DeleteItemFromObjectCaseSensitive(labels, added[k]);
    }
    assert_true(cJSON_Compare(
        labels, cJSON_GetObjectItem(cJSON_GetObjectItem(tmpl, "metadata"), "labels"), 1));
    cJSON_Delete(spec);
    cJSON_Delete(labels);
}

/* Each matchLabels of the selector is a label of the pod. */
static void check_selects(const cJSON *selector, const cJSON *pod)
{
    const cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "labels");
    const cJSON *l;
    int n = 0;

    cJSON_ArrayForEach(l, cJSON_GetObjectItem(selector, "matchLabels"))
    {
        assert_string_equal(str_at(labels, l->string, NULL), cJSON_GetStringValue(l));
        n++;
    }
    assert_true(n > 0);
}

static const char *owner_uid(const cJSON *pod)
{
    return str_at(
        cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "ownerReferences"), 0),
        "uid", NULL);
}

static const char *const STS_POD_LABELS[] = {"controller-revision-hash",
                                             "statefulset.kubernetes.io/pod-name",
                                             "apps.kubernetes.io/pod-index", NULL};

static void check_statefulset(const struct krc_demo_case *c, int64_t t0)
{
    cJSON *sts = krc_demo_statefulset_json(c, t0);
    cJSON *cr = krc_demo_controllerrevision_json(c, t0);
    const cJSON *tmpl = cJSON_GetObjectItem(cJSON_GetObjectItem(sts, "spec"), "template");
    const cJSON *owner;
    cJSON *data;
    char rev[300];
    char again[300];
    size_t n = strlen(c->owner_name);

    assert_non_null(sts);
    assert_non_null(cr);
    assert_int_equal(krc_demo_revision_name(c, rev, sizeof(rev)), 0);
    assert_int_equal(krc_demo_revision_name(c, again, sizeof(again)), 0);
    assert_string_equal(rev, again);
    /* NAME-HASH, HASH in SafeEncodeString's alphabet */
    assert_true(strncmp(rev, c->owner_name, n) == 0 && rev[n] == '-' && rev[n + 1] != '\0');
    assert_int_equal(strspn(rev + n + 1, "bcdfghjklmnpqrstvwxz2456789"), strlen(rev + n + 1));
    assert_string_equal(str_at(sts, "kind", NULL), "StatefulSet");
    assert_string_equal(str_at(sts, "apiVersion", NULL), "apps/v1");
    assert_string_equal(str_at(sts, "metadata", "name"), c->owner_name);
    assert_string_equal(str_at(sts, "metadata", "namespace"), c->ns);
    assert_int_equal((int)cJSON_GetNumberValue(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(sts, "spec"), "replicas")),
                     c->replicas);
    assert_string_equal(str_at(sts, "status", "currentRevision"), rev);
    assert_string_equal(str_at(sts, "status", "updateRevision"), rev);
    /* the ControllerRevision: revision 1, owned by the StatefulSet, made with it */
    assert_string_equal(str_at(cr, "kind", NULL), "ControllerRevision");
    assert_string_equal(str_at(cr, "metadata", "name"), rev);
    assert_string_equal(str_at(cr, "metadata", "namespace"), c->ns);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(cr, "revision")), 1);
    owner = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cr, "metadata"), "ownerReferences"), 0);
    assert_string_equal(str_at(owner, "kind", NULL), "StatefulSet");
    assert_string_equal(str_at(owner, "name", NULL), c->owner_name);
    assert_string_equal(str_at(owner, "uid", NULL), str_at(sts, "metadata", "uid"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(owner, "controller")));
    assert_int_equal(time_at(cr, "creationTimestamp"), time_at(sts, "creationTimestamp"));
    /* one revision, older than the 24 h krc looks back */
    assert_true(time_at(cr, "creationTimestamp") < t0 - 86400);
    /* its data: the StatefulSet's template, as a patch that replaces it */
    data = cJSON_Duplicate(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cr, "data"), "spec"),
                            "template"),
        1);
    assert_non_null(data);
    assert_string_equal(str_at(data, "$patch", NULL), "replace");
    cJSON_DeleteItemFromObjectCaseSensitive(data, "$patch");
    assert_true(cJSON_Compare(data, tmpl, 1));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cr, "data")), 1);
    for (int r = 0; r < c->replicas; r++) {
        for (int restarts = 0; restarts <= 1; restarts++) {
            cJSON *pod =
                krc_demo_pod_json(c, r, restarts, krc_demo_pod_created(c, t0), t0 - 60, t0 - 10);
            char name[256];
            char index[16];
            const cJSON *labels =
                cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "labels");
            assert_non_null(pod);
            krc_demo_pod_name(c, r, name, sizeof(name));
            /* NAME-ORDINAL, labelled with the revision, its name and ordinal */
            snprintf(index, sizeof(index), "%d", r);
            assert_true(strncmp(name, c->owner_name, n) == 0 && name[n] == '-');
            assert_string_equal(name + n + 1, index);
            assert_string_equal(str_at(labels, "controller-revision-hash", NULL), rev);
            assert_string_equal(str_at(labels, "statefulset.kubernetes.io/pod-name", NULL), name);
            assert_string_equal(str_at(labels, "apps.kubernetes.io/pod-index", NULL), index);
            assert_string_equal(owner_uid(pod), str_at(sts, "metadata", "uid"));
            check_pod_of_template(pod, tmpl, STS_POD_LABELS);
            check_selects(cJSON_GetObjectItem(cJSON_GetObjectItem(sts, "spec"), "selector"), pod);
            assert_true(time_at(sts, "creationTimestamp") < time_at(pod, "creationTimestamp"));
            cJSON_Delete(pod);
        }
    }
    cJSON_Delete(data);
    cJSON_Delete(sts);
    cJSON_Delete(cr);
}

static void check_job(const struct krc_demo_case *c, int64_t t0)
{
    cJSON *job = krc_demo_job_json(c, t0);
    const cJSON *spec = cJSON_GetObjectItem(job, "spec");
    const cJSON *tmpl = cJSON_GetObjectItem(spec, "template");
    const char *policy = str_at(cJSON_GetObjectItem(tmpl, "spec"), "restartPolicy", NULL);
    const char *uid = str_at(job, "metadata", "uid");
    const cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(tmpl, "metadata"), "labels");
    const char *start = str_at(job, "status", "startTime");
    int64_t started = 0;

    assert_non_null(job);
    assert_string_equal(str_at(job, "kind", NULL), "Job");
    assert_string_equal(str_at(job, "apiVersion", NULL), "batch/v1");
    assert_string_equal(str_at(job, "metadata", "name"), c->owner_name);
    assert_string_equal(str_at(job, "metadata", "namespace"), c->ns);
    /* a Job's pods restart OnFailure or Never, never Always */
    assert_non_null(policy);
    assert_true(strcmp(policy, "OnFailure") == 0 || strcmp(policy, "Never") == 0);
    /* the labels the API server adds and the selector it generates: its uid */
    assert_string_equal(str_at(labels, "batch.kubernetes.io/controller-uid", NULL), uid);
    assert_string_equal(str_at(labels, "controller-uid", NULL), uid);
    assert_string_equal(str_at(labels, "batch.kubernetes.io/job-name", NULL), c->owner_name);
    assert_string_equal(str_at(labels, "job-name", NULL), c->owner_name);
    assert_string_equal(str_at(cJSON_GetObjectItem(spec, "selector"), "matchLabels",
                               "batch.kubernetes.io/controller-uid"),
                        uid);
    assert_non_null(start);
    assert_int_equal(krc_parse_rfc3339(start, strlen(start), &started), 0);
    for (int restarts = 0; restarts <= 1; restarts++) {
        cJSON *pod =
            krc_demo_pod_json(c, 0, restarts, krc_demo_pod_created(c, t0), t0 - 60, t0 - 10);
        assert_non_null(pod);
        assert_string_equal(owner_uid(pod), uid);
        check_pod_of_template(pod, tmpl, NULL);
        check_selects(cJSON_GetObjectItem(spec, "selector"), pod);
        /* a Job's pod is not older than its Job, nor than its start */
        assert_true(time_at(job, "creationTimestamp") <= started);
        assert_true(started <= time_at(pod, "creationTimestamp"));
        cJSON_Delete(pod);
    }
    cJSON_Delete(job);
}

/* The StatefulSet cases' StatefulSets and ControllerRevisions and the Job
 * cases' Jobs (change tracking): each pod is its owner's template, the
 * ControllerRevision's data is that template, names, uids and labels link
 * them as the controllers do, and the times are consistent. Other owners
 * get none. */
static void test_statefulsets_and_jobs(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);
    const int64_t t0 = 1700000000;
    int statefulsets = 0;
    int jobs = 0;
    char rev[300];

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const struct krc_demo_case *c = &cases[i];
        if (c->owner_kind != NULL && strcmp(c->owner_kind, "StatefulSet") == 0) {
            statefulsets++;
            check_statefulset(c, t0);
        } else {
            assert_int_equal(krc_demo_revision_name(c, rev, sizeof(rev)), -1);
            assert_null(krc_demo_statefulset_json(c, t0));
            assert_null(krc_demo_controllerrevision_json(c, t0));
        }
        if (c->owner_kind != NULL && strcmp(c->owner_kind, "Job") == 0) {
            jobs++;
            check_job(c, t0);
        } else {
            assert_null(krc_demo_job_json(c, t0));
        }
    }
    /* es-zookeeper, airflow-worker, memcached, infer, vllm; the CUDA case's
     * Job and the restart rule's */
    assert_int_equal(statefulsets, 5);
    assert_int_equal(jobs, 2);
}

/* The revision's hash is of its data: another template, another name. */
static void test_revision_hash_follows_the_template(void **state)
{
    size_t n;
    const struct krc_demo_case *cases = krc_demo_cases(&n);
    char a[300];
    char b[300];

    (void)state;
    for (size_t i = 0; i < n; i++) {
        struct krc_demo_case other = cases[i];
        if (other.owner_kind == NULL || strcmp(other.owner_kind, "StatefulSet") != 0) {
            continue;
        }
        assert_int_equal(krc_demo_revision_name(&cases[i], a, sizeof(a)), 0);
        other.image = "registry.local/another:1";
        assert_int_equal(krc_demo_revision_name(&other, b, sizeof(b)), 0);
        assert_string_not_equal(a, b);
        /* too small a buffer: no name */
        assert_int_equal(krc_demo_revision_name(&cases[i], b, strlen(a)), -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases_match_their_sources),
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_crash_loops),
        cmocka_unit_test(test_field_demonstrations),
        cmocka_unit_test(test_node_states),
        cmocka_unit_test(test_deployments),
        cmocka_unit_test(test_statefulsets_and_jobs),
        cmocka_unit_test(test_revision_hash_follows_the_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
