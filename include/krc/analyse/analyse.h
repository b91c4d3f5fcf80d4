/* One restart analysed, the same way for the daemon's worker, MCP's
 * explain_pod and `krc explain`:
 *
 *   the report      from the restart record (krc_collect: the pod as the watch
 *                   saw it, else a GET, then events, node and previous log),
 *                   from a pod's JSON (parsed once, here; the container picked
 *                   from it; then krc_collect_around_pod), or as the caller
 *                   filled it (krc explain's files)
 *   -> redacted     (krc_report_redact: before anything reads it, so the
 *                   diagnosis quotes only redacted text)
 *   -> diagnosed    (the container asked for; with any_container, when that
 *                   fails, the one krc_diagnose picks)
 *   -> amended      (the caller's hook: the daemon's muted repeat carries the
 *                   cause of its last diagnosed restart)
 *   -> redacted     (krc_diagnosis_redact: the patterns over what the
 *                   diagnosis wrote around its quotes)
 *   -> report JSON  (krc_report_json_build, when asked for).
 *
 * A failed step either stops the analysis (the tools: the failure is their
 * answer) or, with a warn hook, is handed to it and the analysis goes on
 * (the daemon: every restart is recorded and alerted, with what could be had;
 * a text that could not be redacted is replaced or left out, never kept). */
#ifndef KRC_ANALYSE_H
#define KRC_ANALYSE_H

#include <stddef.h>

#include "krc/collect/collector.h"
#include "krc/detect/restart.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_client.h"
#include "krc/model/report.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

/* The steps, as a failure names them. */
enum krc_analyse_step {
    KRC_ANALYSE_DONE = 0,
    KRC_ANALYSE_POD,              /* pod_json: not a readable Pod (KRC_EPARSE, KRC_EINVAL), or
                                     no such container (KRC_ENOTFOUND) */
    KRC_ANALYSE_COLLECT,          /* the collection (out of memory) */
    KRC_ANALYSE_REDACT_REPORT,    /* krc_report_redact */
    KRC_ANALYSE_DIAGNOSE,         /* krc_diagnose (KRC_ENOTFOUND: no such container) */
    KRC_ANALYSE_REDACT_DIAGNOSIS, /* krc_diagnosis_redact */
    KRC_ANALYSE_JSON,             /* krc_report_json_build */
};

/* krc_collect's signature: the daemon's seam for a fake collector. */
typedef int (*krc_analyse_collect_fn)(struct krc_kube_client *c, const struct krc_restart *r,
                                      const struct krc_collector_options *o, struct krc_report *rep,
                                      struct krc_error *err);

/* krc_collect_log_file's signature (the daemon's seam). */
typedef int (*krc_analyse_log_file_fn)(struct krc_kube_client *c, const struct krc_restart *r,
                                       char **ret, size_t *ret_len, struct krc_error *err);

struct krc_analyse_request {
    /* Where the report comes from: the restart record, a pod's JSON, or,
     * with neither, the report as the caller filled it. */
    const struct krc_restart *restart;
    const char *pod_json;
    size_t pod_json_len;
    struct krc_kube_client *client; /* the API for the collection */
    /* With a restart: no request, the record and the watch's pod only
     * (krc_collect_minimal: a muted, grouped or silenced restart). */
    int minimal;
    const struct krc_collector_options *options; /* NULL: the defaults */
    krc_analyse_collect_fn collect;              /* a restart's collection; NULL: krc_collect */
    /* With a restart (not minimal): also the whole previous log as a file
     * (Web API threads) when the collection found a previous log. */
    int want_log_file;
    krc_analyse_log_file_fn log_file; /* NULL: krc_collect_log_file */
    /* The container to diagnose. NULL: with pod_json the one with the most
     * restarts (on a tie the first in status order, containers before init
     * containers); else the one krc_diagnose picks. */
    const char *container;
    /* When the container cannot be diagnosed (not in the pod's report),
     * diagnose the one krc_diagnose picks instead. */
    int any_container;
    const struct krc_redactor *redactor; /* NULL: the built-in patterns */
    int want_json;                       /* build the report JSON (res->json) */
    /* Called between the diagnosis and its redaction; may be NULL. */
    void (*amend)(void *ud, struct krc_diagnosis *dg);
    /* NULL: a failed step ends the analysis. Else each failed step is
     * handed to it (e names the problem) and the analysis goes on. */
    void (*warn)(void *ud, enum krc_analyse_step step, const struct krc_error *e);
    void *ud; /* for amend and warn */
};

struct krc_analysis {
    struct krc_report *report;       /* borrowed: filled (pod_json, restart) or as given */
    struct krc_diagnosis *diagnosis; /* borrowed, initialised by the caller: filled */
    /* owned (krc_analysis_cleanup): */
    char *container;   /* pod_json: the container picked (NULL otherwise) */
    int restart_count; /* pod_json: its restartCount */
    char *json;        /* want_json: the report JSON */
    char *log_file;    /* want_log_file: the previous log as a file, or NULL */
    size_t log_file_len;
    enum krc_analyse_step failed; /* the first step that failed, KRC_ANALYSE_DONE when none */
};

/* res->report and res->diagnosis point at the caller's (empty) report and
 * initialised diagnosis; the rest of *res is reset here. Returns 0 when every
 * step succeeded; else the first failure's negative code, with res->failed
 * and err saying which step and why (with a warn hook the analysis went on
 * and every failure was handed to it as well). */
int krc_analyse(const struct krc_analyse_request *q, struct krc_analysis *res,
                struct krc_error *err);

/* Frees what krc_analyse allocated in res (not the report or diagnosis). */
void krc_analysis_cleanup(struct krc_analysis *res);

/* A cheap look before the daemon routes a restart: the pod as the watch
 * delivered it (r->pod_json; no request) diagnosed for r's container with no
 * events and no log. 1 when that diagnosis is intentional (a field of the
 * pod proves the restart intended: a restart rule, the stop signal), 0 when
 * it is not or cannot be told (no pod JSON, not a readable pod, no such
 * container), KRC_ENOMEM when out of memory. Nothing is logged or kept:
 * the restart's own analysis decides. */
int krc_analyse_intentional_candidate(const struct krc_restart *r);

#endif
