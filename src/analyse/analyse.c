/* One restart analysed (include/krc/analyse/analyse.h): the report, its
 * redaction, the diagnosis and its redaction, the report JSON. */
#define _GNU_SOURCE /* memmem */
#include "krc/analyse/analyse.h"

#include <string.h>

#include "krc/kube/kube_parse.h"
#include "krc/model/report_json.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

/* One analysis under way: the request, the result, the first failure. */
struct run {
    const struct krc_analyse_request *q;
    struct krc_analysis *res;
    struct krc_error first;
};

/* A step failed with e: the first failure is kept; with a warn hook it is
 * handed over and the analysis goes on (returns 0), else it ends (1). */
static int failed(struct run *x, enum krc_analyse_step step, const struct krc_error *e)
{
    if (x->res->failed == KRC_ANALYSE_DONE) {
        x->res->failed = step;
        x->first = *e;
        if (x->first.code >= 0) {
            x->first.code = KRC_ENOMEM; /* a failed step always has a code */
        }
    }
    if (x->q->warn == NULL) {
        return 1;
    }
    x->q->warn(x->q->ud, step, e);
    return 0;
}

/* The container explain_pod diagnoses: the one named, else the one with the
 * most restarts; among those with a status, in status order, containers
 * before init containers (as the pod's status lists them). */
static const struct krc_report_container *pick(const struct krc_report *rep, const char *name)
{
    const struct krc_report_container *best = NULL;

    for (int init = 0; init <= 1; init++) {
        for (size_t i = 0; i < rep->n_containers; i++) {
            const struct krc_report_container *c = &rep->containers[i];
            if (!c->has_status || c->is_init != init) {
                continue;
            }
            if (name != NULL) {
                if (c->name != NULL && strcmp(c->name, name) == 0) {
                    return c;
                }
            } else if (best == NULL || c->restart_count > best->restart_count ||
                       (c->restart_count == best->restart_count && c->is_init == best->is_init &&
                        c->status_index < best->status_index)) {
                best = c;
            }
        }
    }
    return best;
}

/* The pod part of the report from a pod's JSON, parsed once, and the
 * container to diagnose picked from it. */
static int from_pod(const struct krc_analyse_request *q, struct krc_analysis *res,
                    struct krc_error *e)
{
    struct krc_report *rep = res->report;
    const struct krc_report_container *c;
    static const char *const must[] = {"metadata.uid", "metadata.namespace", "metadata.name"};
    int rc = krc_kube_parse_pod(q->pod_json, q->pod_json_len, rep, e);

    if (rc < 0) {
        return rc;
    }
    /* the API server always sends them; the requests need them */
    for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
        const char *v = i == 0 ? rep->uid : i == 1 ? rep->namespace : rep->name;
        if (v == NULL || v[0] == '\0') {
            return krc_error_set(e, KRC_EPARSE, "pod: %s missing", must[i]);
        }
    }
    if ((c = pick(rep, q->container)) == NULL) {
        return krc_error_set(e, KRC_ENOTFOUND, "the pod has no container %s",
                             q->container != NULL ? q->container : "with a status yet");
    }
    res->container = krc_strdup(c->name);
    if (res->container == NULL) {
        return krc_error_set(e, KRC_ENOMEM, "out of memory");
    }
    res->restart_count = c->restart_count;
    return 0;
}

/* The report from a restart record: collected (or only what the watch
 * saw), and the log file when asked for. */
static int from_restart(const struct krc_analyse_request *q, const struct krc_collector_options *o,
                        struct krc_analysis *res, struct krc_error *e)
{
    const struct krc_restart *r = q->restart;
    struct krc_error fe;
    int rc;

    if (q->minimal) {
        return krc_collect_minimal(r, res->report, e);
    }
    rc = (q->collect != NULL ? q->collect : krc_collect)(q->client, r, o, res->report, e);
    if (rc < 0 || !q->want_log_file || res->report->log == NULL) {
        return rc;
    }
    krc_error_clear(&fe);
    if ((q->log_file != NULL ? q->log_file : krc_collect_log_file)(q->client, r, &res->log_file,
                                                                   &res->log_file_len, &fe) < 0) {
        krc_log(KRC_LOG_DEBUG, "log file of %s/%s container %s not fetched: %s", r->namespace,
                r->pod, r->ident.container, fe.msg);
        res->log_file = NULL;
        res->log_file_len = 0;
    }
    return 0;
}

/* Step 1: the report. 0, or 1 when the analysis ends here. */
static int report(struct run *x, const struct krc_collector_options *o)
{
    const struct krc_analyse_request *q = x->q;
    struct krc_analysis *res = x->res;
    struct krc_error e;

    krc_error_clear(&e);
    if (q->pod_json != NULL) {
        struct krc_collect_target t;
        if (from_pod(q, res, &e) < 0) {
            failed(x, KRC_ANALYSE_POD, &e); /* no pod, no report: nothing to go on with */
            return 1;
        }
        t = (struct krc_collect_target){res->report->namespace, res->report->name, res->report->uid,
                                        res->container};
        if (krc_collect_around_pod(q->client, &t, o, res->report, &e) < 0) {
            return failed(x, KRC_ANALYSE_COLLECT, &e);
        }
    } else if (q->restart != NULL && from_restart(q, o, res, &e) < 0) {
        return failed(x, KRC_ANALYSE_COLLECT, &e);
    }
    return 0;
}

/* Steps 2 to 5: redact the report, diagnose, amend, redact the diagnosis.
 * 0, or 1 when the analysis ends. */
static int diagnose(struct run *x)
{
    const struct krc_analyse_request *q = x->q;
    struct krc_analysis *res = x->res;
    const char *container = q->pod_json != NULL ? res->container : q->container;
    struct krc_error e;

    krc_error_clear(&e);
    if (krc_report_redact(res->report, q->redactor, &e) < 0 &&
        failed(x, KRC_ANALYSE_REDACT_REPORT, &e)) {
        return 1;
    }
    krc_error_clear(&e);
    if (krc_diagnose(res->report, container, res->diagnosis, &e) < 0 &&
        (!q->any_container || krc_diagnose(res->report, NULL, res->diagnosis, &e) < 0) &&
        failed(x, KRC_ANALYSE_DIAGNOSE, &e)) {
        return 1;
    }
    if (q->amend != NULL) {
        q->amend(q->ud, res->diagnosis);
    }
    krc_error_clear(&e);
    if (krc_diagnosis_redact(res->diagnosis, q->redactor, &e) < 0 &&
        failed(x, KRC_ANALYSE_REDACT_DIAGNOSIS, &e)) {
        return 1;
    }
    return 0;
}

int krc_analyse(const struct krc_analyse_request *q, struct krc_analysis *res,
                struct krc_error *err)
{
    struct run x = {q, res, {0}};
    struct krc_collector_options co;
    const struct krc_collector_options *o = q->options;

    res->container = NULL;
    res->restart_count = 0;
    res->json = NULL;
    res->log_file = NULL;
    res->log_file_len = 0;
    res->failed = KRC_ANALYSE_DONE;
    krc_error_clear(&x.first);
    if (o == NULL) {
        krc_collector_options_defaults(&co);
        o = &co;
    }
    if (report(&x, o) == 0 && diagnose(&x) == 0 && q->want_json) {
        struct krc_error e;
        krc_error_clear(&e);
        if (krc_report_json_build(res->report, res->diagnosis, q->redactor, &res->json, &e) < 0) {
            res->json = NULL;
            failed(&x, KRC_ANALYSE_JSON, &e);
        }
    }
    if (res->failed == KRC_ANALYSE_DONE) {
        return 0;
    }
    if (err != NULL) {
        *err = x.first;
    }
    return x.first.code;
}

void krc_analysis_cleanup(struct krc_analysis *res)
{
    krc_free(res->container);
    krc_free(res->json);
    krc_free(res->log_file);
    res->container = NULL;
    res->json = NULL;
    res->log_file = NULL;
    res->log_file_len = 0;
}

/* Every intentional verdict rests on one of these fields of the Pod
 * (src/diagnose/rules_intentional.c): a Pod that names none of them (every
 * Pod of a cluster before 1.33, and most after) cannot be one, and is not
 * parsed twice. The API server writes object keys unescaped. */
static int names_an_intent_field(const char *json, size_t len)
{
    static const char *const keys[] = {"\"restartPolicyRules\"", "\"stopSignal\"",
                                       "\"resizePolicy\"", "\"deletionTimestamp\""};

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (memmem(json, len, keys[i], strlen(keys[i])) != NULL) {
            return 1;
        }
    }
    return 0;
}

int krc_analyse_intentional_candidate(const struct krc_restart *r)
{
    struct krc_report *rep;
    struct krc_diagnosis dg;
    struct krc_error e;
    int rc = 0;

    if (r->pod_json == NULL || r->pod_json_len == 0 ||
        !names_an_intent_field(r->pod_json, r->pod_json_len)) {
        return 0;
    }
    rep = krc_report_new();
    if (rep == NULL) {
        return KRC_ENOMEM;
    }
    krc_diagnosis_init(&dg);
    krc_error_clear(&e);
    if (krc_kube_parse_pod(r->pod_json, r->pod_json_len, rep, &e) == 0 &&
        krc_diagnose(rep, r->ident.container, &dg, &e) == 0) {
        rc = dg.intentional != 0;
    } else if (e.code == KRC_ENOMEM) {
        rc = KRC_ENOMEM;
    }
    krc_diagnosis_cleanup(&dg);
    krc_report_free(rep);
    return rc;
}
