/* The worker pipeline (include/krc/daemon/pipeline.h): route, collect,
 * diagnose, render, record with the outbox, deliver. */
#include "krc/daemon/pipeline.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "krc/analyse/analyse.h"
#include "krc/collect/config_changes.h"
#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"
#include "krc/model/report_json.h"
#include "krc/track/track.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

void krc_pipeline_status_init(struct krc_pipeline_status *s)
{
    atomic_init(&s->store_errors, 0);
    atomic_init(&s->not_posted, 0);
    atomic_init(&s->intentional, 0);
    atomic_init(&s->store_fault, 0);
    atomic_init(&s->unwritten, 0);
    pthread_mutex_init(&s->fault_lock, NULL);
    s->store_fault_msg[0] = '\0';
}

void krc_pipeline_status_cleanup(struct krc_pipeline_status *s)
{
    pthread_mutex_destroy(&s->fault_lock);
}

void krc_pipeline_store_failed(struct krc_pipeline_status *s, const char *msg)
{
    atomic_fetch_add(&s->store_errors, 1);
    pthread_mutex_lock(&s->fault_lock);
    snprintf(s->store_fault_msg, sizeof(s->store_fault_msg), "%s", msg);
    pthread_mutex_unlock(&s->fault_lock);
    atomic_store(&s->store_fault, 1);
}

void krc_pipeline_store_fault(struct krc_pipeline_status *s, char *buf, size_t size)
{
    pthread_mutex_lock(&s->fault_lock);
    snprintf(buf, size, "%s", s->store_fault_msg);
    pthread_mutex_unlock(&s->fault_lock);
}

/* One history record kept while the database cannot be written: the
 * strings are owned copies. */
struct deferred_rec {
    struct krc_store_restart rec;
    struct krc_store_incident_ref incident; /* rec.incident points here when it has one */
    uint64_t seq; /* the sender's handle of that incident (0: none): told its id when written */
    size_t bytes;
    struct deferred_rec *next;
};

struct krc_pipeline_deferred {
    struct deferred_rec *head, *tail;
    size_t n, bytes;
};

struct krc_pipeline_deferred *krc_pipeline_deferred_new(void)
{
    return krc_calloc(1, sizeof(struct krc_pipeline_deferred));
}

/* The string fields of a history record: owned copies in a deferred one. */
#define REC_STRINGS 13
static void rec_strings(struct krc_store_restart *r, const char **f[REC_STRINGS])
{
    const char **all[REC_STRINGS] = {
        &r->pod_uid,       &r->container, &r->namespace,  &r->pod,          &r->workload_kind,
        &r->workload_name, &r->node,      &r->reason,     &r->container_id, &r->decision,
        &r->summary,       &r->message,   &r->report_json};
    memcpy(f, all, sizeof(all));
}

static void deferred_rec_free(struct deferred_rec *x)
{
    const char **f[REC_STRINGS];

    rec_strings(&x->rec, f);
    for (size_t i = 0; i < REC_STRINGS; i++) {
        krc_free((void *)*f[i]);
    }
    krc_free((void *)x->incident.thread_key);
    krc_free(x);
}

void krc_pipeline_deferred_free(struct krc_pipeline_deferred *d)
{
    if (d == NULL) {
        return;
    }
    while (d->head != NULL) {
        struct deferred_rec *x = d->head;
        d->head = x->next;
        deferred_rec_free(x);
    }
    krc_free(d);
}

size_t krc_pipeline_deferred_count(const struct krc_pipeline_deferred *d)
{
    return d != NULL ? d->n : 0;
}

static struct deferred_rec *deferred_pop(struct krc_pipeline_deferred *d)
{
    struct deferred_rec *x = d->head;
    if (x != NULL) {
        d->head = x->next;
        if (d->head == NULL) {
            d->tail = NULL;
        }
        d->n--;
        d->bytes -= x->bytes;
    }
    return x;
}

/* Copy rec (without its notifications; seq: its incident's handle) to the end of d; the
 * oldest records go when d is over its bounds. Returns 0, or < 0 when out of memory. */
static int deferred_push(struct krc_pipeline_deferred *d, const struct krc_store_restart *rec,
                         uint64_t seq)
{
    struct deferred_rec *x = krc_calloc(1, sizeof(*x));
    int ok = x != NULL;

    if (x != NULL) {
        const char **f[REC_STRINGS];
        x->rec = *rec;
        x->seq = seq;
        if (rec->incident != NULL) {
            /* joined or opened when it is written (its id, if known, stays) */
            x->incident = *rec->incident;
            x->incident.update_at = 0;
            x->incident.thread_key =
                rec->incident->thread_key != NULL ? krc_strdup(rec->incident->thread_key) : NULL;
            ok = rec->incident->thread_key == NULL || x->incident.thread_key != NULL;
            x->rec.incident = &x->incident;
        }
        rec_strings(&x->rec, f);
        x->bytes = sizeof(*x);
        for (size_t i = 0; i < REC_STRINGS; i++) {
            if (*f[i] != NULL) {
                x->bytes += strlen(*f[i]) + 1;
                *f[i] = krc_strdup(*f[i]);
                ok = ok && *f[i] != NULL;
            }
        }
    }
    if (!ok) {
        if (x != NULL) {
            deferred_rec_free(x);
        }
        return KRC_ENOMEM;
    }
    while (d->n > 0 && (d->n >= KRC_PIPELINE_DEFERRED_MAX ||
                        d->bytes + x->bytes > KRC_PIPELINE_DEFERRED_BYTES)) {
        struct deferred_rec *old = deferred_pop(d);
        krc_log(KRC_LOG_ERROR,
                "history: restart of %s/%s container %s (count %d) lost: the database has not "
                "accepted writes for too long (%zu records waiting)",
                old->rec.namespace, old->rec.pod, old->rec.container, old->rec.restart_count,
                d->n + 1);
        deferred_rec_free(old);
    }
    if (d->tail != NULL) {
        d->tail->next = x;
    } else {
        d->head = x;
    }
    d->tail = x;
    d->n++;
    d->bytes += x->bytes;
    return 0;
}

/* The store's record_many, or the test's. */
static int record_many(const struct krc_pipeline_deps *p, const struct krc_store_restart *rec,
                       const struct krc_store_outbox *msgs, size_t n_msgs, int64_t *ret_restart_id,
                       int64_t *ret_outbox_ids, struct krc_error *err)
{
    return (p->record != NULL ? p->record : krc_store_record_many)(
        p->store, rec, msgs, n_msgs, ret_restart_id, ret_outbox_ids, err);
}

/* The records this worker holds changed from `before`: the sum over the
 * workers is krc_store_unwritten_records. */
static void unwritten_changed(const struct krc_pipeline_deps *p, size_t before)
{
    atomic_fetch_add(&p->status->unwritten,
                     (long long)krc_pipeline_deferred_count(p->deferred) - (long long)before);
}

/* A deferred record was written into stored incident x->incident.ret_id: the sender learns
 * its id (the end ends the stored one by it). When the sender no longer holds the incident
 * (it ended while the database was down, or was forgotten), the stored one would stay open
 * for ever: it is ended here, without a message (the resolved messages, if any, were sent
 * when it ended). */
static void deferred_incident(const struct krc_pipeline_deps *p, const struct deferred_rec *x,
                              int64_t restart_id)
{
    const struct krc_store_incident_ref *ref = &x->incident;
    struct krc_error e;
    int rc;

    if (p->sender == NULL || x->seq == 0 || x->rec.incident == NULL || ref->ret_id <= 0 ||
        krc_route_incident_recorded(p->sender, x->seq, ref->ret_id, ref->ret_restarts,
                                    restart_id)) {
        return;
    }
    krc_error_clear(&e);
    rc = krc_store_incident_end(p->store, ref->ret_id, krc_clock_now(), NULL, 0, NULL, &e);
    if (rc == 0) {
        krc_log(KRC_LOG_INFO,
                "incident #%lld (%s/%s container %s) ended in the history: this process ended "
                "(or forgot) it while the database did not accept writes",
                (long long)ref->ret_id, x->rec.namespace, x->rec.pod, x->rec.container);
    } else if (rc < 0 && rc != KRC_STORE_EXISTS) {
        atomic_fetch_add(&p->status->store_errors, 1);
        krc_log(KRC_LOG_ERROR, "history: incident #%lld not ended: %s", (long long)ref->ret_id,
                e.msg);
    }
}

/* Write the deferred records, oldest first, until one fails. */
static void deferred_flush(const struct krc_pipeline_deps *p)
{
    struct krc_pipeline_deferred *d = p->deferred;
    size_t written = 0;
    size_t before = krc_pipeline_deferred_count(d);

    while (d != NULL && d->head != NULL && p->store != NULL) {
        struct krc_error e;
        int64_t id = 0;
        int rc;
        krc_error_clear(&e);
        rc = record_many(p, &d->head->rec, NULL, 0, &id, NULL, &e);
        if (rc < 0 && rc != KRC_STORE_EXISTS) {
            krc_pipeline_store_failed(p->status, e.msg);
            unwritten_changed(p, before);
            return;
        }
        deferred_incident(p, d->head, id);
        deferred_rec_free(deferred_pop(d));
        written += rc == KRC_STORE_EXISTS ? 0 : 1;
    }
    if (written > 0) {
        krc_log(KRC_LOG_INFO,
                "history: %zu restart(s) recorded late (the database accepts "
                "writes again)",
                written);
    }
    unwritten_changed(p, before);
    if (krc_pipeline_deferred_count(d) == 0) {
        atomic_store(&p->status->store_fault, 0);
    }
}

/* Shutdown: a last try; the records the database still refuses are said
 * to be lost, not dropped silently with the memory. */
static void deferred_last_try(const struct krc_pipeline_deps *p)
{
    size_t n;

    if (krc_pipeline_deferred_count(p->deferred) == 0) {
        return;
    }
    deferred_flush(p);
    n = krc_pipeline_deferred_count(p->deferred);
    if (n > 0) {
        krc_log(KRC_LOG_ERROR,
                "history: %zu restart(s) not recorded: the database did not accept writes "
                "before shutdown (they were alerted)",
                n);
    }
}

/* A history write failed: shown on /readyz, and the record kept to be
 * written later (rec is copied: its strings are the caller's). */
static void record_failed(const struct krc_pipeline_deps *p, const struct krc_restart *r,
                          const struct krc_store_restart *rec, uint64_t seq, const char *msg)
{
    size_t before = krc_pipeline_deferred_count(p->deferred);
    int kept = p->deferred != NULL && deferred_push(p->deferred, rec, seq) == 0;

    krc_pipeline_store_failed(p->status, msg);
    unwritten_changed(p, before);
    if (kept) {
        krc_log(KRC_LOG_ERROR,
                "history: restart of %s/%s not recorded yet: %s; alerting anyway, kept in "
                "memory to be recorded when the database accepts writes",
                r->namespace, r->pod, msg);
    } else {
        krc_log(KRC_LOG_ERROR, "history: restart of %s/%s not recorded: %s; alerting anyway",
                r->namespace, r->pod, msg);
    }
}

static const struct krc_config *live_cfg(const struct krc_pipeline_deps *p)
{
    return atomic_load(p->config);
}

static int lease_lost(const struct krc_pipeline_deps *p)
{
    return p->lost != NULL && atomic_load(p->lost);
}

static int64_t mono_ms(const struct krc_pipeline_deps *p)
{
    return p->mono_ms != NULL ? p->mono_ms() : krc_clock_mono_ms();
}

static void log_detected(const struct krc_restart *r)
{
    char count[16], prev[16], exit_code[16], fin[32], missed[16];
    struct krc_log_field f[12];
    size_t n = 0;

    snprintf(count, sizeof(count), "%d", r->ident.restart_count);
    snprintf(prev, sizeof(prev), "%d", r->previous_count);
    snprintf(exit_code, sizeof(exit_code), "%d", r->exit_code);
    snprintf(missed, sizeof(missed), "%d", r->missed);
    if (r->ident.finished_at != 0) {
        krc_clock_format_rfc3339(r->ident.finished_at, fin, sizeof(fin));
    } else {
        fin[0] = '\0';
    }
    f[n++] = (struct krc_log_field){"namespace", r->namespace, 0};
    f[n++] = (struct krc_log_field){"pod", r->pod, 0};
    f[n++] = (struct krc_log_field){"pod_uid", r->ident.uid, 0};
    f[n++] = (struct krc_log_field){"container", r->ident.container, 0};
    f[n++] = (struct krc_log_field){"restart_count", count, 1};
    f[n++] = (struct krc_log_field){"exit_code", r->has_exit_code ? exit_code : "", 1};
    f[n++] = (struct krc_log_field){"reason", r->reason ? r->reason : "", 0};
    f[n++] = (struct krc_log_field){"finished_at", fin, 0};
    f[n++] = (struct krc_log_field){"node", r->node ? r->node : "", 0};
    f[n++] = (struct krc_log_field){"previous_count", prev, 1};
    if (r->missed > 0) {
        f[n++] = (struct krc_log_field){"missed_restarts", missed, 1};
    }
    if (r->is_init) {
        f[n++] = (struct krc_log_field){"init_container", r->is_sidecar ? "sidecar" : "init", 0};
    }
    krc_log_fields(KRC_LOG_INFO, "restart detected", f, n);
}

static void log_diagnosed(const struct krc_restart *r, const struct krc_diagnosis *dg,
                          enum krc_policy_decision decision, int64_t collect_ms)
{
    char ms[24];
    char gpus[24];
    struct krc_log_field f[9];
    size_t n = 0;

    snprintf(ms, sizeof(ms), "%lld", (long long)collect_ms);
    snprintf(gpus, sizeof(gpus), "%ld", dg->gpus);
    f[n++] = (struct krc_log_field){"namespace", r->namespace, 0};
    f[n++] = (struct krc_log_field){"pod", r->pod, 0};
    f[n++] = (struct krc_log_field){"container", r->ident.container, 0};
    f[n++] = (struct krc_log_field){"cause", krc_cause_name(dg->cause), 0};
    f[n++] = (struct krc_log_field){"summary", dg->summary ? dg->summary : "", 0};
    f[n++] = (struct krc_log_field){"decision", krc_policy_decision_name(decision), 0};
    f[n++] = (struct krc_log_field){"collect_ms", ms, 1};
    if (dg->gpus > 0) {
        f[n++] = (struct krc_log_field){"gpus", gpus, 1};
    }
    krc_log_fields(KRC_LOG_INFO, "restart diagnosed", f, n);
}

/* One outbox row per destination of the restart (msg and its chain). */
#define MAX_MESSAGES 16

/* Record the restart with its messages and its incident (seq: the sender's handle of it, kept
 * with a record that waits for the database). 0 (*ret_restart_id: its row, 0 when it waits),
 * or KRC_STORE_EXISTS when it was recorded already (*ret_restart_id: that row; incident's
 * ret_id and ret_restarts: its incident's). */
static int record(const struct krc_pipeline_deps *p, const struct krc_restart *r,
                  const struct krc_report *rep, const struct krc_diagnosis *dg,
                  enum krc_policy_decision decision, struct krc_sender_message *msg,
                  struct krc_store_incident_ref *incident, uint64_t seq, int64_t *ret_restart_id,
                  int64_t *ret_outbox_ids)
{
    struct krc_store_restart rec;
    struct krc_store_outbox ob[MAX_MESSAGES];
    size_t n_ob = 0;
    struct krc_error e;
    char *json = NULL;
    int64_t restart_id = 0;
    int rc;

    if (p->store == NULL) {
        return 0;
    }
    krc_error_clear(&e);
    if (krc_report_json_build(rep, dg, p->redactor, &json, &e) < 0) {
        krc_log(KRC_LOG_WARN, "history: report of %s/%s not serialised: %s", r->namespace, r->pod,
                e.msg);
        json = NULL;
    }
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = r->ident.uid;
    rec.container = r->ident.container;
    rec.restart_count = r->ident.restart_count;
    rec.namespace = r->namespace;
    rec.pod = r->pod;
    rec.workload_kind = rep->workload_kind;
    rec.workload_name = rep->workload_name;
    rec.node = r->node;
    rec.cause = dg->cause;
    rec.has_exit_code = r->has_exit_code;
    rec.exit_code = r->exit_code;
    rec.signal = dg->signal;
    rec.reason = r->reason;
    rec.started_at = r->started_at;
    rec.finished_at = r->ident.finished_at;
    rec.container_id = krc_restart_ident_container_id(&r->ident);
    rec.detected_at = r->detected_at;
    rec.decision = krc_policy_decision_name(decision);
    rec.summary = dg->summary;
    rec.confidence = dg->confidence;
    rec.message = msg != NULL ? msg->body : NULL;
    rec.report_json = json;
    rec.gpus = dg->gpus;
    rec.intentional = dg->intentional;
    rec.incident = incident;
    rec.accel_seconds_lost = r->accel.devices > 0
                                 ? ((int64_t)r->accel.devices * r->accel.since_last_ms + 500) / 1000
                                 : 0;
    for (const struct krc_sender_message *m = msg;
         m != NULL && m->body != NULL && n_ob < MAX_MESSAGES; m = m->next) {
        struct krc_store_outbox *o = &ob[n_ob++];
        memset(o, 0, sizeof(*o));
        o->kind = m->kind;
        o->destination = m->destination;
        o->channel = m->channel[0] ? m->channel : NULL;
        o->thread_key = m->thread_key;
        o->body = m->body;
        o->fallback = m->fallback;
    }
    krc_error_clear(&e);
    rc = record_many(p, &rec, ob, n_ob, &restart_id, ret_outbox_ids, &e);
    if (rc < 0 && rc != KRC_STORE_EXISTS) {
        record_failed(p, r, &rec, seq, e.msg);
    }
    krc_free(json);
    if (rc == KRC_STORE_EXISTS) {
        krc_log(KRC_LOG_INFO,
                "restart of %s/%s container %s (count %d) already recorded; not "
                "alerted again",
                r->namespace, r->pod, r->ident.container, r->ident.restart_count);
        if (ret_restart_id != NULL) {
            *ret_restart_id = restart_id;
        }
        return rc;
    }
    if (rc < 0) {
        return 0;
    }
    deferred_flush(p); /* clears the fault once nothing is waiting */
    for (struct krc_sender_message *m = msg; m != NULL; m = m->next) {
        m->restart_id = restart_id;
    }
    if (ret_restart_id != NULL) {
        *ret_restart_id = restart_id;
    }
    return 0;
}

static void left_to_next_leader(const struct krc_restart *r)
{
    krc_log(KRC_LOG_INFO,
            "restart of %s/%s container %s (count %d) not alerted by this replica: leadership "
            "lost; the next leader reports it",
            r->namespace, r->pod, r->ident.container, r->ident.restart_count);
}

/* Did this replica, its predecessor or an earlier process handle the restart
 * already, or is it the next leader's? Then it is not processed (logged). */
static int not_ours(const struct krc_pipeline_deps *p, const struct krc_restart *r)
{
    struct krc_error e;

    if (lease_lost(p)) {
        left_to_next_leader(r);
        return 1;
    }
    if (p->leader != NULL && krc_leader_was_handled(p->leader, &r->ident)) {
        /* re-detected by a new leader: its predecessor handled it */
        krc_log(KRC_LOG_INFO,
                "restart of %s/%s container %s (count %d) already handled by the previous "
                "leader; not alerted again",
                r->namespace, r->pod, r->ident.container, r->ident.restart_count);
        return 1;
    }
    if (p->store != NULL) {
        int64_t id = 0;
        int found;
        krc_error_clear(&e);
        found = krc_store_find_restart(p->store, &r->ident, &id, &e);
        if (found == 1) {
            /* e.g. re-detected after a restart of krc: it was handled then */
            krc_log(KRC_LOG_INFO,
                    "restart of %s/%s container %s (count %d) already recorded as "
                    "#%lld; not alerted again",
                    r->namespace, r->pod, r->ident.container, r->ident.restart_count,
                    (long long)id);
            return 1;
        }
        if (found < 0) {
            atomic_fetch_add(&p->status->store_errors, 1);
            krc_log(KRC_LOG_ERROR, "history: %s", e.msg);
        }
    }
    return 0;
}

/* One restart on its way: what it owns until deliver takes it. */
struct job {
    const struct krc_restart *r;
    struct krc_route_plan plan; /* the route stage's answer */
    enum krc_policy_decision decision;
    struct krc_report *rep;
    struct krc_diagnosis *dg;
    char *log_file; /* Web API: the previous log as a file, or NULL */
    size_t log_file_len;
    int64_t t0;        /* monotonic ms at the start */
    int cheap;         /* the analysis is the cheap look before routing (no request) */
    int no_carry;      /* the cheap look again, without a carried cause */
    int carried;       /* the cheap look carried a cause (krc_diagnosis_carry) */
    int analysed_full; /* the analysis so far collected everything */
    /* the analysis looks no ConfigMap or Secret up (trackConfigChanges): it runs before the
     * restart is routed (config_changes after it), or for an amendment (no first alert) */
    int no_configs;
    /* a paced message of an incident's repeat starts with these (plan.headline_*) */
    char headline_reply[1024];
    char headline_update[1024];
};

/* A repeat that is not collected (a crash loop must not cost requests) carries its
 * incident's cause when its termination matches the incident's first failure
 * (krc_diagnosis_carry; the open incidents are loaded from the history at start-up and at
 * a take-over, so this holds across a restart of krc or a new leader). Asked in the cheap
 * look before routing: the carried cause decides whether the restart repeats its incident
 * (alert/route.h). */
static void carry_repeat(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_restart *r = j->r;
    struct krc_diagnosis_history first;
    const char *kind = j->rep->workload_kind;
    const char *name = j->rep->workload_name;
    int rc;

    if (!j->cheap || j->no_carry || p->sender == NULL || j->dg->container == NULL ||
        strcmp(j->dg->container, r->ident.container) != 0) {
        return;
    }
    krc_workload_or_pod(kind, name, r->pod, &kind, &name);
    if (krc_route_incident_first(p->sender, r->namespace, kind, name, r->ident.container, &first) !=
        1) {
        return;
    }
    rc = krc_diagnosis_carry(j->dg, &first);
    j->carried = rc == 1;
    if (rc < 0) {
        krc_log(KRC_LOG_WARN,
                "restart of %s/%s container %s: out of memory carrying restart #%lld's cause",
                r->namespace, r->pod, r->ident.container, (long long)first.id);
    }
}

/* The job in the analysis's hooks. */
struct analysis_ud {
    const struct krc_pipeline_deps *p;
    struct job *j;
};

static void on_amend(void *ud, struct krc_diagnosis *dg)
{
    struct analysis_ud *u = ud;

    (void)dg; /* the job's */
    carry_repeat(u->p, u->j);
}

/* A step that failed is logged; the restart goes on with what could be had. */
static void on_warn(void *ud, enum krc_analyse_step step, const struct krc_error *e)
{
    const struct krc_restart *r = ((struct analysis_ud *)ud)->j->r;

    if (step == KRC_ANALYSE_COLLECT) {
        krc_log(KRC_LOG_ERROR, "restart of %s/%s container %s: %s", r->namespace, r->pod,
                r->ident.container, e->msg);
    } else if (step == KRC_ANALYSE_DIAGNOSE) {
        krc_log(KRC_LOG_WARN, "restart of %s/%s container %s not diagnosed: %s", r->namespace,
                r->pod, r->ident.container, e->msg);
    } else {
        krc_log(KRC_LOG_WARN, "restart of %s/%s container %s: %s", r->namespace, r->pod,
                r->ident.container, e->msg);
    }
}

/* The analysis (analyse/analyse.h): collect what the decision needs
 * (everything for an alert, and the log file when the plan wants one;
 * only what the watch saw for a muted, grouped or silenced restart: no
 * requests), then redact the report, diagnose it (a muted repeat carries
 * the container's last diagnosed restart's cause from the history) and
 * redact the diagnosis. Redaction happens once, there, before anything
 * reads the report: every output (the log line, the store, every
 * destination, MCP) starts from redacted text. */
static void count_restart(const struct krc_pipeline_deps *p, const struct job *j);

static void analyse(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_config *cfg = live_cfg(p);
    struct krc_collector_options co;
    struct analysis_ud ud = {p, j};
    struct krc_analyse_request q;
    struct krc_analysis a;

    krc_collector_options_defaults(&co);
    co.tail_lines = (int)cfg->log_tail_lines;
    co.limit_bytes = cfg->log_limit_bytes;
    co.transfer_limit_bytes = cfg->log_transfer_limit_bytes;
    /* trackConfigChanges: the ConfigMaps and Secrets of an incident's first restart (a
     * repeat's paced message does not ask again), for what changed (track/track.h) */
    co.track = p->track;
    co.track_configs =
        p->track != NULL && cfg->track_config_changes && !j->plan.repeat && !j->no_configs;
    memset(&q, 0, sizeof(q));
    q.restart = j->r;
    q.client = p->client;
    q.options = &co;
    q.collect = p->collect;
    q.minimal = !j->plan.collect;
    q.want_log_file = j->plan.wants_full_log;
    q.log_file = p->log_file;
    q.container = j->r->ident.container;
    q.any_container = 1;
    q.redactor = p->redactor;
    q.amend = on_amend;
    q.warn = on_warn;
    q.ud = &ud;
    a.report = j->rep;
    a.diagnosis = j->dg;
    krc_analyse(&q, &a, NULL);
    j->log_file = a.log_file; /* the job's now */
    j->log_file_len = a.log_file_len;
    a.log_file = NULL;
    krc_analysis_cleanup(&a);
    if (j->r->amend || j->cheap) {
        return; /* counted when it was detected; the cheap look: when it is final */
    }
    j->analysed_full = j->plan.collect;
    count_restart(p, j);
}

/* The restart in krc_restarts_total (by its final diagnosis). */
static void count_restart(const struct krc_pipeline_deps *p, const struct job *j)
{
    if (p->restarts_detected != NULL) {
        krc_metric_inc(p->restarts_detected,
                       (const char *[]){j->r->namespace, krc_cause_name(j->dg->cause)});
    }
    if (p->restarts_intentional != NULL && j->dg->intentional) {
        krc_metric_inc(p->restarts_intentional,
                       (const char *[]){j->r->namespace, krc_cause_name(j->dg->cause)});
    }
}

/* The previous log as a file, when the plan wants one and the analysis ran
 * before the plan was made (an intentional candidate that was not). */
static void fetch_log_file(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_restart *r = j->r;
    struct krc_error e;

    if (!j->plan.wants_full_log || j->log_file != NULL || j->rep->log == NULL) {
        return;
    }
    krc_error_clear(&e);
    if ((p->log_file != NULL ? p->log_file : krc_collect_log_file)(p->client, r, &j->log_file,
                                                                   &j->log_file_len, &e) < 0) {
        krc_log(KRC_LOG_DEBUG, "log file of %s/%s container %s not fetched: %s", r->namespace,
                r->pod, r->ident.container, e.msg);
        j->log_file = NULL;
        j->log_file_len = 0;
    }
}

/* An intentional restart held back: never routed (no mute mark, no storm
 * arrival), recorded with its cause and reason. */
static void log_intentional(const struct krc_restart *r, const struct krc_diagnosis *dg)
{
    struct krc_log_field f[5];
    size_t n = 0;

    f[n++] = (struct krc_log_field){"namespace", r->namespace, 0};
    f[n++] = (struct krc_log_field){"pod", r->pod, 0};
    f[n++] = (struct krc_log_field){"container", r->ident.container, 0};
    f[n++] = (struct krc_log_field){"cause", krc_cause_name(dg->cause), 0};
    f[n++] = (struct krc_log_field){"summary", dg->summary ? dg->summary : "", 0};
    krc_log_fields(KRC_LOG_INFO,
                   "restart not alerted: intentional (pageIntentionalRestarts alerts them)", f, n);
}

/* trackConfigChanges for a restart analysed before it was routed (an intentional
 * candidate that was not): its pod's ConfigMaps and Secrets, looked up as krc_collect looks
 * them up, only when the plan collects it fully as an incident's first restart (a repeat,
 * muted or paced, asks nothing: a crash loop costs no such request). What the look-up notes
 * in the report (a 403) is redacted as the collection's notes are. */
static void config_changes(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_restart *r = j->r;
    struct krc_report *rep = j->rep;
    size_t notes = rep->n_notes;
    struct krc_error e;

    if (p->track == NULL || !live_cfg(p)->track_config_changes || !j->plan.collect ||
        j->plan.repeat) {
        return;
    }
    if (krc_collect_config_changes(p->client, p->track, r->pod_json, r->pod_json_len, rep) ==
        KRC_ENOMEM) {
        krc_log(KRC_LOG_WARN,
                "restart of %s/%s: out of memory reading its ConfigMaps' and Secrets' metadata",
                r->namespace, r->pod);
    }
    for (size_t i = notes; i < rep->n_notes; i++) {
        krc_error_clear(&e);
        (void)krc_redact_in_place(p->redactor, NULL, &rep->notes[i], &e);
    }
}

/* Before routing: when the pod the watch delivered already shows an
 * intentional restart (and those are not paged), the restart is analysed
 * fully first. Intentional in the end: decided here, never routed, so that
 * it neither marks the pod's mute (which would hold back the pod's next
 * real crash) nor counts in a destination's storm. Otherwise it is routed
 * as any other (its analysis is done). 1 when it was analysed. */
static void route_job(const struct krc_pipeline_deps *p, struct job *j);

static int intentional_first(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_config *cfg = live_cfg(p);
    int rc;

    if (cfg->page_intentional_restarts) {
        return 0;
    }
    rc = krc_analyse_intentional_candidate(j->r);
    if (rc <= 0) {
        return 0; /* out of memory: the ordinary path, where render still holds it back */
    }
    j->no_configs = 1; /* not before the plan says it is an incident's first alert */
    analyse(p, j);
    j->no_configs = 0;
    if (j->dg->intentional) {
        memset(&j->plan, 0, sizeof(j->plan));
        j->plan.decision = KRC_POLICY_INTENTIONAL;
        j->plan.collect = 1;
        j->decision = KRC_POLICY_INTENTIONAL;
        return 1;
    }
    route_job(p, j);
    fetch_log_file(p, j);
    config_changes(p, j);
    return 1;
}

/* Route the restart with its incident (alert/route.h): its workload from the report and
 * its cause from the diagnosis so far (the cheap look's, or the full one's). */
static void route_job(const struct krc_pipeline_deps *p, struct job *j)
{
    struct krc_route_incident ri;

    ri.workload_kind = j->rep->workload_kind;
    ri.workload_name = j->rep->workload_name;
    ri.cause = j->dg->cause;
    j->decision = krc_route_restart_in(p->sender, j->r, &ri, &j->plan);
    j->plan.page_intentional = live_cfg(p)->page_intentional_restarts;
}

/* Forget the analysis so far (the report and diagnosis are empty again). */
static void analysis_reset(struct job *j)
{
    krc_report_cleanup(j->rep);
    krc_diagnosis_cleanup(j->dg);
    krc_diagnosis_init(j->dg);
    j->carried = 0;
}

/* The cheap look before routing: the pod as the watch delivered it (no request), diagnosed;
 * a repeat carries its incident's cause. */
static void analyse_cheap(const struct krc_pipeline_deps *p, struct job *j)
{
    j->cheap = 1;
    j->plan.collect = 0;
    j->plan.wants_full_log = 0;
    analyse(p, j);
    j->cheap = 0;
}

/* After routing: what the plan wants beyond the cheap look. Collected (an alert, a paced
 * message, no destination): analysed again, fully. Otherwise the cheap look is final; a
 * cause it carried stays only on a muted repeat (a silenced or grouped restart says what
 * the watch saw). */
static void analyse_planned(const struct krc_pipeline_deps *p, struct job *j)
{
    if (j->plan.collect) {
        analysis_reset(j);
        analyse(p, j);
        return;
    }
    if (j->carried && j->decision != KRC_POLICY_MUTED) {
        analysis_reset(j);
        j->no_carry = 1;
        analyse_cheap(p, j);
        j->no_carry = 0;
    }
    count_restart(p, j);
}

/* The incident's first alert says what changed before it (track/track.h): from the
 * tracker's memory, into the report, so every destination, the stored report JSON and
 * get_incident show it. Nothing when the tracker cannot say. */
static void what_changed(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_restart *r = j->r;
    struct krc_track_query q;
    struct krc_error e;
    char *line = NULL;
    char *json = NULL;
    int rc;

    if (p->track == NULL || j->plan.incident == 0 || j->plan.repeat ||
        j->decision == KRC_POLICY_INTENTIONAL) {
        return;
    }
    memset(&q, 0, sizeof(q));
    q.namespace = r->namespace;
    krc_workload_or_pod(j->rep->workload_kind, j->rep->workload_name, r->pod, &q.workload_kind,
                        &q.workload_name);
    q.pod_template_hash = krc_kv_list_get(&j->rep->labels, "pod-template-hash");
    q.controller_revision_hash = krc_kv_list_get(&j->rep->labels, "controller-revision-hash");
    q.node = j->rep->node_name != NULL ? j->rep->node_name : r->node;
    q.before = r->ident.finished_at > 0 ? r->ident.finished_at : r->detected_at;
    krc_error_clear(&e);
    rc = krc_track_describe(p->track, &q, krc_clock_now(), &line, &json, &e);
    if (rc < 0) {
        krc_log(KRC_LOG_WARN, "restart of %s/%s: what changed before it is not known: %s",
                r->namespace, r->pod, e.msg);
        return;
    }
    if (rc == 1) {
        krc_report_clear_changes(j->rep);
        j->rep->what_changed = line;
        j->rep->changes_json = json;
    } else {
        krc_free(line);
        krc_free(json);
    }
}

/* A paced message of an incident's repeat starts with its headline: the count since the
 * last message and what differs from the first failure. */
static void headlines(const struct krc_pipeline_deps *p, struct job *j)
{
    if (j->plan.incident == 0 || !j->plan.repeat || j->plan.decision != KRC_POLICY_THREAD) {
        return;
    }
    krc_route_incident_headlines(p->sender, &j->plan, j->r, j->rep, j->dg, j->headline_reply,
                                 j->headline_update, sizeof(j->headline_reply));
    j->plan.headline_reply = j->headline_reply;
    j->plan.headline_update = j->headline_update;
}

/* Leader election: the restart is handled, published in the hand-over list. */
static void note_handled(const struct krc_pipeline_deps *p, const struct krc_restart *r)
{
    if (p->leader != NULL) {
        krc_leader_note_handled(p->leader, &r->ident);
    }
}

/* A sandbox change is one alert per pod (issue 26): every container of
 * the pod restarts for it, and whatever the mute (muteSeconds 0, or a thread
 * reply per restart) the containers after the first one alerted are held
 * back, recorded with their cause. Decided after the diagnosis (the route
 * stage cannot know the cause), under the sender's lock, so that parallel
 * workers let exactly one through. */
static void sandbox_once(const struct krc_pipeline_deps *p, struct job *j)
{
    char alerted[KRC_RESTART_IDENT_CONTAINER_MAX];

    if (j->dg->cause != KRC_CAUSE_SANDBOX_CHANGED ||
        (j->plan.decision != KRC_POLICY_ALERT && j->plan.decision != KRC_POLICY_THREAD)) {
        return;
    }
    if (krc_route_sandbox_alerted(p->sender, j->r, alerted, sizeof(alerted)) == 1) {
        krc_log(KRC_LOG_INFO,
                "restart of %s/%s container %s not alerted: the pod's sandbox change was "
                "alerted with container %s",
                j->r->namespace, j->r->pod, j->r->ident.container, alerted);
        j->plan.decision = KRC_POLICY_MUTED;
    }
}

/* What the restart's record does to its incident (store/incident.h): a repeat joins the
 * incident by its id (0 while its first record is still being written: the store joins the
 * open incident of the key), a first restart opens it with its thread; a paced message is
 * the incident's reply or update. */
static void incident_ref(const struct krc_pipeline_deps *p, const struct job *j,
                         const struct krc_sender_message *msg, struct krc_store_incident_ref *ref)
{
    memset(ref, 0, sizeof(*ref));
    if (j->plan.incident == 0) {
        return;
    }
    if (j->plan.repeat) {
        ref->id = krc_route_incident_id(p->sender, j->plan.incident);
    } else if (msg->body != NULL) {
        ref->thread_key = msg->thread_key;
    }
    if (j->plan.repeat && j->decision == KRC_POLICY_THREAD && msg->body != NULL) {
        ref->update_at = krc_clock_now();
        /* what the route decided (pace_repeat); an update only: last_update_at */
        ref->thread_reply = j->plan.replied;
        ref->and_update = j->plan.replied && j->plan.updated;
    }
}

/* The restart's record told its incident (ref: what the store did). Recorded already
 * (another worker or leader recorded it first): the incident it is in, when it has one;
 * else an incident this restart opened is forgotten (nothing of it is in the store, and this
 * process posts nothing of it). */
static void recorded(const struct krc_pipeline_deps *p, const struct job *j,
                     const struct krc_store_incident_ref *ref, int rc, int64_t restart_id)
{
    if (j->plan.incident == 0) {
        return;
    }
    if (rc == KRC_STORE_EXISTS && ref->ret_id <= 0) {
        if (!j->plan.repeat) {
            krc_route_incident_drop(p->sender, j->plan.incident);
        }
        return;
    }
    (void)krc_route_incident_recorded(p->sender, j->plan.incident, ref->ret_id, ref->ret_restarts,
                                      restart_id);
}

/* Render, record with the outbox, deliver (which takes the job's report,
 * diagnosis and log file). */
static void hand_over(const struct krc_pipeline_deps *p, struct job *j)
{
    const struct krc_restart *r = j->r;
    struct krc_sender_message msg;
    int64_t outbox_ids[MAX_MESSAGES] = {0};
    int rc = 0;
    int post = 0;

    sandbox_once(p, j);
    j->decision = krc_render_restart(&j->plan, r, j->rep, j->dg, krc_clock_now(), &msg);
    if (j->decision == KRC_POLICY_NO_DESTINATION) {
        atomic_fetch_add(&p->status->not_posted, 1);
    }
    if (j->decision == KRC_POLICY_INTENTIONAL) {
        atomic_fetch_add(&p->status->intentional, 1);
        log_intentional(r, j->dg);
    }
    log_diagnosed(r, j->dg, j->decision, mono_ms(p) - j->t0);
    if (lease_lost(p)) {
        /* lost the Lease while collecting: not recorded, not posted */
        left_to_next_leader(r);
    } else {
        /* Recorded with its pending notification in one transaction before
         * anything is sent: a crash cannot lose or repeat it. */
        struct krc_store_incident_ref ref;
        int64_t restart_id = 0;
        incident_ref(p, j, &msg, &ref);
        krc_route_incident_settle(p->sender, &j->plan, r, j->rep, j->dg, j->decision, &msg);
        rc = record(p, r, j->rep, j->dg, j->decision, &msg, j->plan.incident ? &ref : NULL,
                    j->plan.incident, &restart_id, outbox_ids);
        recorded(p, j, &ref, rc, restart_id);
        if (rc != KRC_STORE_EXISTS && msg.body == NULL) {
            /* nothing to post (muted, grouped, silenced): handled now; a
             * message is published as handled once it was accepted
             * (on_posted), so that a new leader posts what this one could
             * not */
            note_handled(p, r);
        }
        post = rc != KRC_STORE_EXISTS;
    }
    krc_deliver_restart(p->sender, &j->plan, r, &msg, outbox_ids, post, j->rep, j->dg, j->log_file,
                        j->log_file_len);
}

/* The amendment's words before the new summary: which alert it updates. */
static char *amend_text(const struct krc_restart *r, const struct krc_store_entry *e,
                        const char *summary)
{
    char when[32] = "";
    struct krc_buf b;

    if (e != NULL && e->row.detected_at > 0) {
        krc_clock_format_rfc3339(e->row.detected_at, when, sizeof(when));
    }
    krc_buf_init(&b, 64 * 1024);
    krc_buf_printf(&b, "Update to the alert of %s/%s container %s (restart %d%s%s): ", r->namespace,
                   r->pod, r->ident.container, r->ident.restart_count,
                   when[0] ? ", alerted at " : "", when);
    krc_buf_printf(&b, "the kubelet reported a device Unhealthy %llds after the restart. %s",
                   (long long)(r->amend_after_ms / 1000), summary != NULL ? summary : "");
    return krc_buf_take(&b);
}

/* Put the amendment's words before the summaries (the messages say what
 * they update); 0, or -1 out of memory. */
static int prefix_summaries(const struct krc_restart *r, const struct krc_store_entry *e,
                            struct krc_diagnosis *dg)
{
    char *s = amend_text(r, e, dg->summary);
    char *u = amend_text(r, e, dg->summary_unquoted);

    if (s == NULL || u == NULL) {
        krc_free(s);
        krc_free(u);
        return -1;
    }
    krc_free(dg->summary);
    krc_free(dg->summary_unquoted);
    dg->summary = s;
    dg->summary_unquoted = u;
    return 0;
}

/* The amendment's evidence line in the stored report: what was first said. */
static void add_amend_evidence(const struct krc_restart *r, const struct krc_store_entry *e,
                               struct krc_diagnosis *dg)
{
    char line[512];
    char **v = krc_realloc(dg->evidence, (dg->n_evidence + 1) * sizeof(*v));

    if (v == NULL) {
        return;
    }
    dg->evidence = v;
    snprintf(line, sizeof(line),
             "amended: the kubelet reported the device Unhealthy (allocatedResourcesStatus) "
             "%llds after the restart was detected; first diagnosed as %s",
             (long long)(r->amend_after_ms / 1000),
             e != NULL && e->row.cause != NULL ? e->row.cause : "(not recorded)");
    if ((v[dg->n_evidence] = krc_strdup(line)) != NULL) {
        dg->n_evidence++;
    }
}

/* The stored restart of r (1 and *ret), 0 when not recorded (yet), < 0 on a
 * database error (logged). */
static int stored_restart(const struct krc_pipeline_deps *p, const struct krc_restart *r,
                          struct krc_store_entry **ret)
{
    struct krc_error e;
    int64_t id = 0;
    int rc;

    *ret = NULL;
    krc_error_clear(&e);
    rc = krc_store_find_restart(p->store, &r->ident, &id, &e);
    if (rc == 1) {
        rc = krc_store_get(p->store, id, ret, &e) == 0 ? 1 : -1;
    }
    if (rc < 0) {
        atomic_fetch_add(&p->status->store_errors, 1);
        krc_log(KRC_LOG_ERROR, "history: %s", e.msg);
    }
    return rc;
}

/* Was the restart's first diagnosis posted (so the amendment updates an
 * alert)? Without a history: assumed so. */
static int was_alerted(const struct krc_store_entry *e)
{
    return e == NULL || (e->row.decision != NULL && (strcmp(e->row.decision, "alert") == 0 ||
                                                     strcmp(e->row.decision, "thread_reply") == 0));
}

/* Record the amended diagnosis over the stored one. */
static void store_amend(const struct krc_pipeline_deps *p, const struct krc_restart *r,
                        const struct krc_store_entry *se, const struct krc_report *rep,
                        const struct krc_diagnosis *dg)
{
    struct krc_error e;
    char *json = NULL;

    if (p->store == NULL || se == NULL) {
        return;
    }
    krc_error_clear(&e);
    if (krc_report_json_build(rep, dg, p->redactor, &json, &e) < 0) {
        krc_log(KRC_LOG_WARN, "history: amended report of %s/%s not serialised: %s", r->namespace,
                r->pod, e.msg);
        json = NULL;
    }
    krc_error_clear(&e);
    if (krc_store_amend(p->store, se->row.id, krc_cause_name(dg->cause), dg->summary,
                        krc_confidence_name(dg->confidence), json, &e) < 0) {
        atomic_fetch_add(&p->status->store_errors, 1);
        krc_log(KRC_LOG_ERROR, "history: restart #%lld of %s/%s not amended: %s",
                (long long)se->row.id, r->namespace, r->pod, e.msg);
    }
    krc_free(json);
}

/* Post the amendment (a reply in the pod's Slack thread, else a message of
 * its own, a second Kubernetes Event), its rows in the outbox first. Takes
 * the job's report, diagnosis and log file. */
static void send_amend(const struct krc_pipeline_deps *p, struct job *j, int64_t restart_id)
{
    struct krc_sender_message msg;
    int64_t outbox_ids[MAX_MESSAGES] = {0};
    struct krc_route_plan plan;
    size_t k = 0;

    krc_route_amend(p->sender, j->r, &plan);
    j->decision = krc_render_restart(&plan, j->r, j->rep, j->dg, krc_clock_now(), &msg);
    for (struct krc_sender_message *m = &msg;
         p->store != NULL && restart_id > 0 && m != NULL && m->body != NULL && k < MAX_MESSAGES;
         m = m->next, k++) {
        struct krc_store_outbox o;
        memset(&o, 0, sizeof(o));
        o.kind = m->kind;
        o.destination = m->destination;
        o.channel = m->channel[0] ? m->channel : NULL;
        o.thread_key = m->thread_key;
        o.body = m->body;
        o.fallback = m->fallback;
        m->restart_id = restart_id;
        if (krc_store_add_outbox(p->store, restart_id, &o, &outbox_ids[k], NULL) < 0) {
            outbox_ids[k] = 0; /* posted all the same, as when the database is down */
        }
    }
    krc_deliver_restart(p->sender, &plan, j->r, &msg, outbox_ids, 1, j->rep, j->dg, NULL, 0);
    j->rep = NULL;
    j->dg = NULL;
}

/* A device of an alerted restart's container reported Unhealthy after the
 * restart (krc_restart.amend): diagnosed again from the newer pod (same
 * rules); when that names gpu_device_unhealthy and the first diagnosis did
 * not, the stored restart is amended and, if it was alerted, one amendment
 * is posted. */
static void amend_restart(const struct krc_pipeline_deps *p, const struct krc_restart *r)
{
    struct krc_store_entry *se = NULL;
    struct job j;

    if (lease_lost(p)) {
        return;
    }
    /* the first diagnosis is recorded before its alert is sent: a worker
     * still on it (workers > 1) is waited for, briefly */
    for (int tries = 0; p->store != NULL && tries < 10; tries++) {
        if (stored_restart(p, r, &se) != 0) {
            break;
        }
        krc_clock_sleep_ms(500, p->lost);
    }
    if (p->store != NULL && se == NULL) {
        krc_log(KRC_LOG_WARN,
                "restart of %s/%s container %s (count %d) not found in the history: its "
                "amendment is posted, its record (if it comes) keeps the first diagnosis",
                r->namespace, r->pod, r->ident.container, r->ident.restart_count);
    }
    if (se != NULL && se->row.cause != NULL &&
        strcmp(se->row.cause, krc_cause_name(KRC_CAUSE_GPU_DEVICE_UNHEALTHY)) == 0) {
        krc_store_entry_free(se);
        return; /* its own diagnosis named the device */
    }
    memset(&j, 0, sizeof(j));
    j.r = r;
    j.plan.collect = 1;
    j.no_configs = 1;
    j.t0 = mono_ms(p);
    j.rep = krc_report_new();
    j.dg = krc_calloc(1, sizeof(*j.dg));
    if (j.rep == NULL || j.dg == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: restart of %s/%s not amended", r->namespace, r->pod);
        goto out;
    }
    krc_diagnosis_init(j.dg);
    analyse(p, &j);
    if (j.dg->cause != KRC_CAUSE_GPU_DEVICE_UNHEALTHY) {
        krc_log(KRC_LOG_INFO,
                "restart of %s/%s container %s (count %d) not amended: diagnosed again, still "
                "%s",
                r->namespace, r->pod, r->ident.container, r->ident.restart_count,
                krc_cause_name(j.dg->cause));
        goto out;
    }
    add_amend_evidence(r, se, j.dg);
    store_amend(p, r, se, j.rep, j.dg);
    if (p->restarts_amended != NULL) {
        krc_metric_inc(p->restarts_amended,
                       (const char *[]){r->namespace, krc_cause_name(j.dg->cause)});
    }
    krc_log(KRC_LOG_INFO, "restart of %s/%s container %s (count %d) amended: %s (was %s)",
            r->namespace, r->pod, r->ident.container, r->ident.restart_count,
            krc_cause_name(j.dg->cause),
            se != NULL && se->row.cause != NULL ? se->row.cause : "not recorded");
    if (p->sender == NULL || !was_alerted(se)) {
        goto out; /* recorded only: there is no alert to update */
    }
    if (prefix_summaries(r, se, j.dg) < 0) {
        krc_log(KRC_LOG_ERROR, "out of memory: amendment of %s/%s not posted", r->namespace,
                r->pod);
        goto out;
    }
    send_amend(p, &j, se != NULL ? se->row.id : 0);
out:
    krc_store_entry_free(se);
    krc_report_free(j.rep);
    if (j.dg != NULL) {
        krc_diagnosis_cleanup(j.dg);
        krc_free(j.dg);
    }
    krc_free(j.log_file);
}

/* route -> collect -> diagnose -> render -> record -> deliver: each stage
 * once. Without a sender nothing is routed, rendered or delivered (the
 * restart is collected, diagnosed and recorded). */
void krc_pipeline_process(const struct krc_pipeline_deps *p, const struct krc_restart *r)
{
    struct job j;

    memset(&j, 0, sizeof(j));
    j.r = r;
    j.decision = KRC_POLICY_NO_DESTINATION;
    j.plan.decision = KRC_POLICY_NO_DESTINATION;
    j.plan.collect = 1;
    j.t0 = mono_ms(p);
    if (r->amend) {
        amend_restart(p, r);
        return;
    }
    log_detected(r);
    if (not_ours(p, r)) {
        return;
    }
    /* allocated once the restart is known to be this replica's to handle */
    j.rep = krc_report_new();
    j.dg = krc_calloc(1, sizeof(*j.dg));
    if (j.rep == NULL || j.dg == NULL) {
        krc_log(KRC_LOG_ERROR, "out of memory: restart of %s/%s not diagnosed", r->namespace,
                r->pod);
        krc_report_free(j.rep);
        krc_free(j.dg);
        return;
    }
    krc_diagnosis_init(j.dg);
    if (p->sender != NULL && intentional_first(p, &j)) {
        what_changed(p, &j);
        headlines(p, &j);
        hand_over(p, &j);
        return;
    }
    if (p->sender != NULL) {
        analyse_cheap(p, &j);
        route_job(p, &j);
        analyse_planned(p, &j);
        what_changed(p, &j);
        headlines(p, &j);
        hand_over(p, &j); /* deliver owns the report, diagnosis and log file */
        return;
    }
    analyse(p, &j);
    log_diagnosed(r, j.dg, j.decision, mono_ms(p) - j.t0);
    {
        /* no sender: the restart joins or opens its incident in the store all the same */
        struct krc_store_incident_ref ref;
        memset(&ref, 0, sizeof(ref));
        record(p, r, j.rep, j.dg, j.decision, NULL, &ref, 0, NULL, NULL);
    }
    note_handled(p, r);
    krc_report_free(j.rep);
    krc_diagnosis_cleanup(j.dg);
    krc_free(j.dg);
    krc_free(j.log_file);
}

void krc_pipeline_run(const struct krc_pipeline_deps *p, struct krc_queue *q,
                      atomic_size_t *queued_pod_bytes, int idle_release_ms)
{
    int worked = 0; /* restarts processed since memory was last released */
    for (;;) {
        void *item;
        int tmo = worked ? idle_release_ms : -1;
        int rc;
        if (krc_pipeline_deferred_count(p->deferred) > 0 && (tmo < 0 || tmo > 1000)) {
            tmo = 1000; /* retry the deferred history records every second */
        }
        rc = krc_queue_pop(q, &item, tmo);
        if (rc == KRC_ECANCELED) {
            deferred_last_try(p);
            break;
        }
        if (rc == KRC_ETIMEOUT && krc_pipeline_deferred_count(p->deferred) > 0) {
            deferred_flush(p);
            if (!worked) {
                continue;
            }
        }
        if (rc == KRC_ETIMEOUT) {
            /* A burst is over (no restart for idle_release_ms): hand
             * the memory it used back to the system, the SQLite pages this
             * worker cached (the next restart may be hours away and reads
             * them again from the OS page cache), then glibc's free pages
             * (not under AddressSanitizer, where glibc is not the
             * allocator). Not after every restart: under a steady trickle
             * that cost ~0.7 ms of CPU per restart (docs/performance.md). */
            krc_store_release_memory(p->store);
#ifndef __SANITIZE_ADDRESS__
            malloc_trim(0);
#endif
            worked = 0;
            continue;
        }
        if (rc == 0) {
            atomic_fetch_sub(queued_pod_bytes, ((struct krc_restart *)item)->pod_json_len);
            krc_pipeline_process(p, item);
            krc_restart_free(item);
            worked = 1;
        }
    }
}
