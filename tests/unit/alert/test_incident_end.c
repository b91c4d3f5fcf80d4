/* The end of incidents (issue 27, src/alert/deliver_incident.c), driven directly: the
 * sender's check (krc_deliver_incidents_check, which its loop runs once a second) with a
 * fake clock (krc_clock_set_fake_now), the watch's pod events (krc_sender_pod_event) and a
 * real SQLite store as the main sender thread's connection. The sender loop is not run: the
 * lanes' queues are read (their resolved items) and a first alert's delivery is settled by
 * hand, as a lane settles it. This test includes the sender's private header
 * (src/alert/sender_int.h) for that: the check, the store connection and the queues are
 * private to the sender.
 *
 * What it checks: the container ran ready for recoveredAfter: one resolved item per
 * destination of the first alert, the incident ended in the store with its message, and only
 * once its first alert was settled; the last pod went away and no restart came for the
 * settle time: resolved, "went away"; a restart while settling restarts the settle time; an
 * incident whose first record is not written is not ended until it is; one another leader
 * ended (KRC_STORE_EXISTS) sends nothing; a destination whose first alert was never its alert
 * (withdrawn, not_sent) gets no resolved message; an incident loaded from the history ends
 * as one recorded here; the count told is the stored incident's (another leader's restarts
 * too; a new stored incident's when the known one had ended); recoveredAfter 0 ends without a
 * message at the first ready. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../../src/alert/sender_int.h"
#include "krc/alert/route.h"
#include "krc/alert/sender.h"
#include "krc/model/report_json.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "fake_sink.h"
#include "krc_test.h"

#define HOOK "https://hooks.example.test/services/T1/B1/incident-end"
#define TEAMS "https://example.webhook.office.com/webhookb2/incident-end"
#define T0 1800000000LL
#define SETTLE 600

static char dir[] = "/tmp/krc-test-incident-end-XXXXXX";
static char db[256];

/* --- the fake sink of the Go tool's destination: what a resolved message said -------- */

static struct {
    int calls;
    long restarts;
    int64_t ready_seconds;
    int moved_on;
    int64_t incident_id;
    char pod[64];
} told;

static const struct krc_sink_ops fake_ops;

static struct krc_sink *fk_create(const struct krc_sink_options *o, const char *target,
                                  struct krc_error *err)
{
    struct krc_sink *s = krc_calloc(1, sizeof(*s));
    (void)o;
    (void)target;
    (void)err;
    assert_non_null(s);
    s->ops = &fake_ops;
    s->limits.max_payload = 1 << 20;
    return s;
}

static int fk_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err)
{
    (void)fo;
    (void)err;
    told.calls++;
    told.restarts = rec->restarts;
    told.ready_seconds = rec->ready_seconds;
    told.moved_on = rec->moved_on;
    told.incident_id = rec->incident_id;
    snprintf(told.pod, sizeof(told.pod), "%s", rec->pod != NULL ? rec->pod : "");
    *ret_body = krc_strdup("{\"text\":\"resolved\"}");
    return *ret_body != NULL ? 0 : KRC_ENOMEM;
}

static int fk_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    (void)s;
    (void)m;
    (void)res;
    fail_msg("the sender loop is not run: nothing is sent");
    return krc_error_set(err, KRC_EIO, "not sent");
}

static void fk_free(struct krc_sink *s)
{
    krc_free(s);
}

static const struct krc_sink_ops fake_ops = {
    .name = "fake",
    .create = fk_create,
    .format_restart = krc_test_sink_format_restart,
    .format_summary = krc_test_sink_format_summary,
    .format_recovered = fk_format_recovered,
    .send = fk_send,
    .upload = NULL,
    .free = fk_free,
};

/* --- set-up ------------------------------------------------------------------------ */

static const struct krc_route_incident API_OOM = {"Deployment", "api", KRC_CAUSE_OOM_KILLED};

struct env {
    struct krc_sender_options o;
    struct krc_destination teams;
    struct krc_sender *n;
    struct krc_store *s;
};

/* A sender whose Go-tool destination has the fake formats, its main thread's connection to a
 * fresh store (as krc_sender_run opens it); with_teams: a Teams destination as well. */
static void env_init(struct env *v, long recovered_after, int with_teams)
{
    memset(v, 0, sizeof(*v));
    memset(&told, 0, sizeof(told));
    v->o = krc_test_sender_options(HOOK);
    v->o.sink_ops = &fake_ops;
    v->o.recovered_after_s = recovered_after;
    if (with_teams) {
        v->teams.name = (char *)"teams";
        v->teams.kind = &krc_dest_kind_find("teams")->schema;
        v->teams.url = (char *)TEAMS;
        v->teams.is_default = 1;
        v->o.destinations = &v->teams;
        v->o.n_destinations = 1;
    }
    krc_test_remove_db(db);
    assert_int_equal(krc_store_open(db, 0, &v->s, NULL), 0);
    v->n = krc_sender_new(&v->o, NULL);
    assert_non_null(v->n);
    v->n->store = v->s;
    krc_clock_set_fake_now(T0);
}

static void env_cleanup(struct env *v)
{
    v->n->store = NULL; /* the test's */
    krc_sender_free(v->n);
    krc_store_close(v->s);
    krc_clock_set_fake_now(0);
}

static struct krc_restart mk(const char *pod, int count)
{
    struct krc_restart r;
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)pod;
    (void)krc_restart_ident_set(&r.ident, pod, "app", count, 0, NULL); /* uid: the pod's name */
    r.has_exit_code = 1;
    r.exit_code = 137;
    r.reason = (char *)"OOMKilled";
    r.node = (char *)"node-a";
    r.detected_at = krc_clock_now();
    return r;
}

/* The first alert's previous log. */
#define FIRST_LOG "starting\nconnecting to db\nkilled\n"

/* The incident's first alert, as the pipeline makes it: the watch awaits the pod, the restart
 * is routed (a new incident) and rendered, recorded with its outbox rows into a new stored
 * incident (unless record is 0) and queued; its messages are not settled yet. Returns the
 * incident's handle; *ret_id its stored id (0 unless recorded). */
static uint64_t first_alert(struct env *v, const char *pod, int record, int64_t *ret_id)
{
    struct krc_restart r = mk(pod, 1);
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_route_plan plan;
    struct krc_sender_message msg;
    struct krc_store_restart rec;
    struct krc_store_incident_ref ref;
    struct krc_store_outbox ob[4];
    int64_t oids[4] = {0};
    int64_t rid = 0;
    size_t k = 0;
    char *report_json = NULL;

    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    rep->namespace = krc_strdup("shop");
    rep->name = krc_strdup(pod);
    rep->log = (unsigned char *)krc_strdup(FIRST_LOG);
    rep->log_len = strlen(FIRST_LOG);
    dg->container = krc_strdup("app");
    dg->cause = KRC_CAUSE_OOM_KILLED;
    dg->summary = krc_strdup("Container app was OOM-killed");
    dg->summary_unquoted = krc_strdup("Container app was OOM-killed");
    krc_sender_restart_seen(v->n, r.ident.uid, "shop", pod, "app", 1);
    assert_int_equal(krc_route_restart_in(v->n, &r, &API_OOM, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.repeat, 0);
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, krc_clock_now(), &msg),
                     KRC_POLICY_ALERT);
    krc_route_incident_settle(v->n, &plan, &r, rep, dg, KRC_POLICY_ALERT, &msg);
    *ret_id = 0;
    if (record) {
        memset(&rec, 0, sizeof(rec));
        rec.pod_uid = r.ident.uid;
        rec.container = "app";
        rec.restart_count = 1;
        rec.namespace = "shop";
        rec.pod = pod;
        rec.workload_kind = "Deployment";
        rec.workload_name = "api";
        rec.node = "node-a";
        rec.cause = KRC_CAUSE_OOM_KILLED;
        rec.has_exit_code = 1;
        rec.exit_code = 137;
        rec.reason = "OOMKilled";
        rec.detected_at = krc_clock_now();
        rec.decision = "alert";
        assert_int_equal(krc_report_json_build(rep, dg, NULL, &report_json, NULL), 0);
        rec.report_json = report_json;
        memset(&ref, 0, sizeof(ref));
        ref.thread_key = msg.thread_key;
        rec.incident = &ref;
        for (struct krc_sender_message *m = &msg; m != NULL && m->body != NULL && k < 4;
             m = m->next, k++) {
            memset(&ob[k], 0, sizeof(ob[k]));
            ob[k].kind = m->kind;
            ob[k].destination = m->destination;
            ob[k].thread_key = m->thread_key;
            ob[k].body = m->body;
        }
        assert_int_equal(krc_store_record_many(v->s, &rec, ob, k, &rid, oids, NULL), 0);
        assert_true(ref.ret_id > 0);
        assert_int_equal(
            krc_route_incident_recorded(v->n, plan.incident, ref.ret_id, ref.ret_restarts, rid), 1);
        *ret_id = ref.ret_id;
        krc_free(report_json);
    }
    krc_deliver_restart(v->n, &plan, &r, &msg, oids, 1, rep, dg, NULL, 0);
    return plan.incident;
}

/* Each message of the incident's first alert is settled as its lane settles it: posted
 * (not_sent 0), or withdrawn / dropped (not_sent 1) for the destination `withdrawn` names
 * (a store key; NULL: none). */
static void settle_first_alert(struct env *v, uint64_t incident, const char *withdrawn)
{
    void *dests[KRC_INCIDENT_MAX_DESTS];
    int not_sent[KRC_INCIDENT_MAX_DESTS];
    size_t k = 0;

    pthread_mutex_lock(&v->n->lock);
    for (size_t i = 0; i < v->n->n_lanes; i++) {
        for (struct item *it = v->n->lanes[i].head; it != NULL; it = it->next) {
            if (it->incident == incident && k < KRC_INCIDENT_MAX_DESTS) {
                dests[k] = it->dest;
                not_sent[k] = withdrawn != NULL && strcmp(it->dest->store_key, withdrawn) == 0;
                k++;
            }
        }
    }
    pthread_mutex_unlock(&v->n->lock);
    assert_true(k > 0);
    for (size_t i = 0; i < k; i++) {
        krc_deliver_incident_settled(v->n, incident, dests[i], not_sent[i]);
    }
}

/* The resolved items queued (all lanes); *ret_outbox, *ret_thread: the last one's;
 * ret_dest (may be NULL): its destination's store key. */
static int resolved(struct env *v, int64_t *ret_outbox, char *ret_thread, size_t size,
                    char *ret_dest)
{
    int k = 0;

    pthread_mutex_lock(&v->n->lock);
    for (size_t i = 0; i < v->n->n_lanes; i++) {
        for (struct item *it = v->n->lanes[i].head; it != NULL; it = it->next) {
            if (it->kind != ITEM_RECOVERED) {
                continue;
            }
            k++;
            *ret_outbox = it->outbox_id;
            snprintf(ret_thread, size, "%s", it->pod_key);
            if (ret_dest != NULL) {
                snprintf(ret_dest, 64, "%s", it->dest->store_key);
            }
        }
    }
    pthread_mutex_unlock(&v->n->lock);
    return k;
}

static int count_resolved(struct env *v)
{
    int64_t b;
    char t[512];
    return resolved(v, &b, t, sizeof(t), NULL);
}

/* Whether outbox row `outbox` is one of the stored incident `id`'s messages. */
static int incident_has_message(struct env *v, int64_t id, int64_t outbox)
{
    struct krc_store_incident_detail *det = NULL;
    int found = 0;

    assert_int_equal(krc_store_incident_get(v->s, id, &det, NULL), 0);
    for (size_t i = 0; i < det->n_messages; i++) {
        found |= det->messages[i].id == outbox;
    }
    krc_store_incident_detail_free(det);
    return found;
}

/* A watch event of pod (uid: its name) with container app running and ready (or not), its
 * restart count `count`; deleted: a DELETED event. */
static void pod_event(struct env *v, const char *pod, int count, int ready, int deleted)
{
    struct krc_container_info c;
    struct krc_pod_info p;

    memset(&c, 0, sizeof(c));
    memset(&p, 0, sizeof(p));
    c.name = "app";
    c.restart_count = count;
    c.ready = ready;
    c.state_running = ready;
    c.state_waiting = !ready;
    p.uid = pod;
    p.namespace = "shop";
    p.name = pod;
    p.resource_version = "1";
    p.containers = &c;
    p.n_containers = 1;
    krc_sender_pod_event(v->n, &p, deleted);
}

static void check_at(struct env *v, int64_t now)
{
    krc_clock_set_fake_now(now);
    krc_deliver_incidents_check(v->n);
}

/* The stored incident's end (0: open) and its outbox rows of kind recovered. */
static int64_t stored_end(struct env *v, int64_t id, size_t *ret_recovered)
{
    struct krc_store_incident_detail *det = NULL;
    int64_t ended;

    assert_int_equal(krc_store_incident_get(v->s, id, &det, NULL), 0);
    ended = det->inc.ended_at;
    *ret_recovered = 0;
    for (size_t i = 0; i < det->n_messages; i++) {
        *ret_recovered += det->messages[i].kind == KRC_STORE_KIND_RECOVERED;
    }
    krc_store_incident_detail_free(det);
    return ended;
}

/* --- tests ------------------------------------------------------------------------- */

/* The container has run ready for the settle time: one resolved item (the destination of
 * the first alert, in its thread), the incident ended in the store with that message, in
 * one transaction; not before the settle time, not before the first alert was settled, and
 * only once. */
static void test_ready_for_the_settle_time_ends_once(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0, outbox = 0;
    char thread[512];
    size_t recovered = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    pod_event(&v, "api-1", 1, 1, 0); /* running and ready at T0 */
    check_at(&v, T0 + SETTLE + 5);
    assert_int_equal(count_resolved(&v), 0); /* its first alert is still on its way */
    settle_first_alert(&v, inc, NULL);
    check_at(&v, T0 + SETTLE - 1);
    assert_int_equal(count_resolved(&v), 0);
    assert_int_equal(stored_end(&v, id, &recovered), 0);
    check_at(&v, T0 + SETTLE);
    assert_int_equal(resolved(&v, &outbox, thread, sizeof(thread), NULL), 1);
    assert_true(incident_has_message(&v, id, outbox));
    assert_true(outbox > 0); /* recorded with the end */
    assert_string_equal(thread, "shop/api-1");
    assert_int_equal(told.calls, 1);
    assert_int_equal(told.moved_on, 0);
    assert_int_equal(told.ready_seconds, SETTLE);
    assert_int_equal(told.restarts, 1);
    assert_int_equal(told.incident_id, id);
    assert_int_equal(stored_end(&v, id, &recovered), T0 + SETTLE);
    assert_int_equal(recovered, 1);
    assert_int_equal(krc_sender_incidents_open(v.n), 0);
    check_at(&v, T0 + 2 * SETTLE);
    assert_int_equal(count_resolved(&v), 1);
    env_cleanup(&v);
}

/* The incident's last pod went away (deleted) and no restart of it came for the settle time:
 * the workload moved on, resolved ("went away"). */
static void test_pod_gone_and_no_restart_ends_it(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0;
    size_t recovered = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    krc_clock_set_fake_now(T0 + 30);
    pod_event(&v, "api-1", 1, 0, 1); /* deleted, never ready */
    check_at(&v, T0 + SETTLE - 1);   /* the settle time from its last restart (T0) */
    assert_int_equal(count_resolved(&v), 0);
    check_at(&v, T0 + SETTLE);
    assert_int_equal(count_resolved(&v), 1);
    assert_int_equal(told.moved_on, 1);
    assert_int_equal(told.ready_seconds, 0);
    assert_int_equal(stored_end(&v, id, &recovered), T0 + SETTLE);
    assert_int_equal(recovered, 1);
    env_cleanup(&v);
}

/* A restart while the container settles: the settle time starts again from the restart,
 * and the resolved message counts it. */
static void test_restart_while_settling_is_not_resolved(void **state)
{
    struct env v;
    struct krc_route_plan plan;
    struct krc_restart again;
    uint64_t inc;
    int64_t id = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    pod_event(&v, "api-1", 1, 1, 0); /* ready at T0 */
    /* restarted at T0 + 300: the watch sees it, the route counts it (muted), it runs ready */
    krc_clock_set_fake_now(T0 + 300);
    again = mk("api-1", 2);
    krc_sender_restart_seen(v.n, again.ident.uid, "shop", "api-1", "app", 2);
    assert_int_equal(krc_route_restart_in(v.n, &again, &API_OOM, &plan), KRC_POLICY_MUTED);
    assert_int_equal(plan.incident, inc);
    pod_event(&v, "api-1", 2, 1, 0);
    check_at(&v, T0 + SETTLE); /* ready for the settle time before the restart: not over */
    assert_int_equal(count_resolved(&v), 0);
    check_at(&v, T0 + 300 + SETTLE - 1);
    assert_int_equal(count_resolved(&v), 0);
    assert_int_equal(krc_sender_incidents_open(v.n), 1);
    check_at(&v, T0 + 300 + SETTLE);
    assert_int_equal(count_resolved(&v), 1);
    assert_int_equal(told.restarts, 2);
    assert_int_equal(told.ready_seconds, SETTLE);
    env_cleanup(&v);
}

/* With a store, an incident whose first record is not written yet (its id not final) is not
 * ended at the check: it waits for the record, then ends in the store. */
static void test_unrecorded_incident_waits_for_its_record(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0, outbox = 0;
    char thread[512];
    size_t recovered = 0;
    struct krc_store_restart rec;
    struct krc_store_incident_ref ref;
    struct krc_restart r = mk("api-1", 1);
    int64_t rid = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 0, &id);
    settle_first_alert(&v, inc, NULL);
    pod_event(&v, "api-1", 1, 1, 0);
    check_at(&v, T0 + 2 * SETTLE);
    assert_int_equal(count_resolved(&v), 0);
    assert_int_equal(krc_sender_incidents_open(v.n), 1);
    /* the record is written (a worker, late): the end follows at the next check */
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = r.ident.uid;
    rec.container = "app";
    rec.restart_count = 1;
    rec.namespace = "shop";
    rec.pod = "api-1";
    rec.workload_kind = "Deployment";
    rec.workload_name = "api";
    rec.cause = KRC_CAUSE_OOM_KILLED;
    rec.detected_at = T0;
    rec.decision = "alert";
    memset(&ref, 0, sizeof(ref));
    ref.thread_key = "shop/api-1";
    rec.incident = &ref;
    assert_int_equal(krc_store_record_many(v.s, &rec, NULL, 0, &rid, NULL, NULL), 0);
    assert_int_equal(krc_route_incident_recorded(v.n, inc, ref.ret_id, ref.ret_restarts, rid), 1);
    check_at(&v, T0 + 2 * SETTLE + 1);
    assert_int_equal(resolved(&v, &outbox, thread, sizeof(thread), NULL), 1);
    assert_true(incident_has_message(&v, ref.ret_id, outbox));
    assert_int_equal(stored_end(&v, ref.ret_id, &recovered), T0 + 2 * SETTLE + 1);
    assert_int_equal(recovered, 1);
    env_cleanup(&v);
}

/* Another leader ended the stored incident first (KRC_STORE_EXISTS): nothing is sent here,
 * and the incident is forgotten. */
static void test_ended_by_another_leader_sends_nothing(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0;
    size_t recovered = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    pod_event(&v, "api-1", 1, 1, 0);
    assert_int_equal(krc_store_incident_end(v.s, id, T0 + 100, NULL, 0, NULL, NULL), 0);
    check_at(&v, T0 + SETTLE);
    assert_int_equal(count_resolved(&v), 0);
    assert_int_equal(krc_sender_incidents_open(v.n), 0);
    assert_int_equal(stored_end(&v, id, &recovered), T0 + 100);
    assert_int_equal(recovered, 0);
    env_cleanup(&v);
}

/* Two destinations; the first alert to one was withdrawn (not_sent: never its alert): only the
 * other gets a resolved message. */
static void test_not_sent_destination_gets_no_resolved_message(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0, outbox = 0;
    char thread[512];
    char dest[64];
    size_t recovered = 0;
    (void)state;

    env_init(&v, SETTLE, 1);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, "dest:teams");
    pod_event(&v, "api-1", 1, 1, 0);
    check_at(&v, T0 + SETTLE);
    assert_int_equal(resolved(&v, &outbox, thread, sizeof(thread), dest), 1);
    assert_string_not_equal(dest, "dest:teams");
    assert_int_equal(stored_end(&v, id, &recovered), T0 + SETTLE);
    assert_int_equal(recovered, 1);
    env_cleanup(&v);

    /* both posted: both get one */
    env_init(&v, SETTLE, 1);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    pod_event(&v, "api-1", 1, 1, 0);
    check_at(&v, T0 + SETTLE);
    assert_int_equal(count_resolved(&v), 2);
    assert_int_equal(stored_end(&v, id, &recovered), T0 + SETTLE);
    assert_int_equal(recovered, 2);
    env_cleanup(&v);
}

/* An incident loaded from the history (a new leader) is final at once: its latest pod is
 * awaited and, once it ran ready for the settle time, it ends in the store with a resolved
 * message to its first alert's destination, in its thread. */
static void test_loaded_incident_ends(void **state)
{
    struct env v;
    struct krc_sender *old;
    uint64_t inc;
    int64_t id = 0, outbox = 0;
    char thread[512];
    size_t recovered = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    (void)inc;
    /* the leader is gone; a new one loads the open incident */
    old = v.n;
    old->store = NULL;
    v.n = krc_sender_new(&v.o, NULL);
    assert_non_null(v.n);
    v.n->store = v.s;
    krc_sender_free(old);
    assert_int_equal(krc_sender_load_incidents(v.n, v.s), 1);
    pod_event(&v, "api-1", 1, 1, 0);
    check_at(&v, T0 + SETTLE);
    assert_int_equal(resolved(&v, &outbox, thread, sizeof(thread), NULL), 1);
    assert_true(incident_has_message(&v, id, outbox));
    assert_string_equal(thread, "shop/api-1");
    assert_int_equal(stored_end(&v, id, &recovered), T0 + SETTLE);
    assert_int_equal(recovered, 1);
    env_cleanup(&v);
}

/* An incident loaded from the history keeps its first failure as the first alert's record
 * has it: a repeat carries a cause diagnosed with its log (it was collected), and a paced
 * message names the repeat's first log line the first failure's log does not have. */
static void test_loaded_incident_keeps_the_first_log(void **state)
{
    struct env v;
    struct krc_sender *old;
    struct krc_diagnosis_history h;
    struct krc_restart r = mk("api-1", 2);
    struct krc_report *rep = krc_report_new();
    struct krc_route_plan plan;
    char reply[2048], update[2048];
    int64_t id = 0;
    static const char log[] = "starting\nconnecting to db\npanic: heap exhausted\n";
    (void)state;

    assert_non_null(rep);
    env_init(&v, SETTLE, 0);
    (void)first_alert(&v, "api-1", 1, &id);
    old = v.n;
    old->store = NULL;
    v.n = krc_sender_new(&v.o, NULL);
    assert_non_null(v.n);
    v.n->store = v.s;
    krc_sender_free(old);
    assert_int_equal(krc_sender_load_incidents(v.n, v.s), 1);

    memset(&h, 0, sizeof(h));
    assert_int_equal(krc_route_incident_first(v.n, "shop", "Deployment", "api", "app", &h), 1);
    assert_int_equal(h.cause, KRC_CAUSE_OOM_KILLED);
    assert_true(h.log_collected);
    assert_int_equal(h.exit_code, 137);
    assert_true(h.id > 0);

    krc_sender_restart_seen(v.n, r.ident.uid, "shop", "api-1", "app", 2);
    (void)krc_route_restart_in(v.n, &r, &API_OOM, &plan);
    assert_int_equal(plan.repeat, 1);
    rep->log = (unsigned char *)krc_strdup(log);
    rep->log_len = strlen(log);
    krc_route_incident_headlines(v.n, &plan, &r, rep, NULL, reply, update, sizeof(reply));
    assert_non_null(strstr(reply, "panic: heap exhausted"));
    assert_null(strstr(reply, "connecting to db"));
    assert_non_null(strstr(update, "panic: heap exhausted"));
    krc_report_free(rep);
    env_cleanup(&v);
}

/* A repeat of the incident at now (routed: muted), recorded into stored incident `id` as the
 * pipeline records it (ref.id: the incident's id); the store's answer goes to the incident.
 * Returns the stored incident it went into. */
static int64_t repeat(struct env *v, uint64_t inc, int count, int64_t id)
{
    struct krc_restart r = mk("api-1", count);
    struct krc_route_plan plan;
    struct krc_store_restart rec;
    struct krc_store_incident_ref ref;
    int64_t rid = 0;

    krc_sender_restart_seen(v->n, r.ident.uid, "shop", "api-1", "app", count);
    assert_int_equal(krc_route_restart_in(v->n, &r, &API_OOM, &plan), KRC_POLICY_MUTED);
    assert_int_equal(plan.incident, inc);
    memset(&rec, 0, sizeof(rec));
    rec.pod_uid = r.ident.uid;
    rec.container = "app";
    rec.restart_count = count;
    rec.namespace = "shop";
    rec.pod = "api-1";
    rec.workload_kind = "Deployment";
    rec.workload_name = "api";
    rec.cause = KRC_CAUSE_OOM_KILLED;
    rec.detected_at = krc_clock_now();
    rec.decision = "muted";
    memset(&ref, 0, sizeof(ref));
    ref.id = id;
    rec.incident = &ref;
    assert_int_equal(krc_store_record_many(v->s, &rec, NULL, 0, &rid, NULL, NULL), 0);
    assert_int_equal(krc_route_incident_recorded(v->n, inc, ref.ret_id, ref.ret_restarts, rid), 1);
    return ref.ret_id;
}

/* The count is the store's: restarts another leader recorded into the incident count; when
 * another leader ended the stored incident meanwhile, the next record opens a new one, whose
 * id and count the incident takes (its end ends that one, counting its restarts). */
static void test_the_count_is_the_stored_incidents(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0, next;
    size_t recovered = 0;
    (void)state;

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    /* another leader records restarts 2 and 3 into it; this one then records 4 */
    for (int count = 2; count <= 3; count++) {
        struct krc_restart other = mk("api-1", count);
        struct krc_store_restart rec;
        struct krc_store_incident_ref ref;
        memset(&rec, 0, sizeof(rec));
        rec.pod_uid = other.ident.uid;
        rec.container = "app";
        rec.restart_count = count;
        rec.namespace = "shop";
        rec.pod = "api-1";
        rec.workload_kind = "Deployment";
        rec.workload_name = "api";
        rec.cause = KRC_CAUSE_OOM_KILLED;
        rec.detected_at = T0;
        rec.decision = "muted";
        memset(&ref, 0, sizeof(ref));
        ref.id = id;
        rec.incident = &ref;
        assert_int_equal(krc_store_record_many(v.s, &rec, NULL, 0, NULL, NULL, NULL), 0);
    }
    krc_clock_set_fake_now(T0 + 10);
    assert_int_equal(repeat(&v, inc, 4, id), id);
    pod_event(&v, "api-1", 4, 1, 0);
    check_at(&v, T0 + 10 + SETTLE);
    assert_int_equal(count_resolved(&v), 1);
    assert_int_equal(told.restarts, 4);
    env_cleanup(&v);

    env_init(&v, SETTLE, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    krc_clock_set_fake_now(T0 + 10);
    assert_int_equal(repeat(&v, inc, 2, id), id);
    assert_int_equal(krc_store_incident_end(v.s, id, T0 + 20, NULL, 0, NULL, NULL), 0);
    krc_clock_set_fake_now(T0 + 30);
    next = repeat(&v, inc, 3, id);
    assert_true(next > 0 && next != id);
    pod_event(&v, "api-1", 3, 1, 0);
    check_at(&v, T0 + 30 + SETTLE);
    assert_int_equal(count_resolved(&v), 1);
    assert_int_equal(told.incident_id, next);
    assert_int_equal(told.restarts, 1);
    assert_int_equal(stored_end(&v, next, &recovered), T0 + 30 + SETTLE);
    assert_int_equal(recovered, 1);
    env_cleanup(&v);
}

/* recoveredAfter 0: no resolved message; the incident ends when first seen ready. */
static void test_recovered_after_zero_ends_without_a_message(void **state)
{
    struct env v;
    uint64_t inc;
    int64_t id = 0;
    size_t recovered = 0;
    (void)state;

    env_init(&v, 0, 0);
    inc = first_alert(&v, "api-1", 1, &id);
    settle_first_alert(&v, inc, NULL);
    check_at(&v, T0 + 5); /* not ready yet, and its pod is still there */
    assert_int_equal(krc_sender_incidents_open(v.n), 1);
    krc_clock_set_fake_now(T0 + 10);
    pod_event(&v, "api-1", 1, 1, 0);
    check_at(&v, T0 + 10);
    assert_int_equal(count_resolved(&v), 0);
    assert_int_equal(krc_sender_incidents_open(v.n), 0);
    assert_int_equal(stored_end(&v, id, &recovered), T0 + 10);
    assert_int_equal(recovered, 0);
    env_cleanup(&v);
}

static int setup(void **state)
{
    (void)state;
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    snprintf(db, sizeof(db), "%s/krc.db", dir);
    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, -1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    krc_test_remove_db(db);
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_for_the_settle_time_ends_once),
        cmocka_unit_test(test_pod_gone_and_no_restart_ends_it),
        cmocka_unit_test(test_restart_while_settling_is_not_resolved),
        cmocka_unit_test(test_unrecorded_incident_waits_for_its_record),
        cmocka_unit_test(test_ended_by_another_leader_sends_nothing),
        cmocka_unit_test(test_not_sent_destination_gets_no_resolved_message),
        cmocka_unit_test(test_loaded_incident_ends),
        cmocka_unit_test(test_loaded_incident_keeps_the_first_log),
        cmocka_unit_test(test_the_count_is_the_stored_incidents),
        cmocka_unit_test(test_recovered_after_zero_ends_without_a_message),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
