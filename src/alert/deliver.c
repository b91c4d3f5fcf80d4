/* The deliver stage (include/krc/alert/deliver.h): the lanes, one thread
 * per destination, that post a restart's recorded messages, the storm
 * summaries and the "recovered" replies; the outbox's resume, delivered
 * marks and claims are in deliver_outbox.c. */
#include "krc/alert/deliver.h"
#include "krc/alert/dest.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "krc/alert/policy.h"
#include "krc/alert/recovery.h"
#include "krc/alert/sender.h"
#include "krc/alert/sink.h"
#include "krc/alert/format.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "sender_int.h"

/* on_posted for a restart (a message, or the last of its siblings, was
 * settled): the leader hand-over learns it was handled. */
static void publish_handled(const struct krc_sender *n, const struct krc_restart_ident *id)
{
    if (n->o.on_posted != NULL && id->uid[0] != '\0') {
        n->o.on_posted(id, n->o.on_delivered_userdata);
    }
}

void krc_deliver_item_free(struct item *it)
{
    if (it == NULL) {
        return;
    }
    krc_free(it->body);
    krc_free(it->fallback);
    krc_report_free(it->rep);
    if (it->diag != NULL) {
        krc_diagnosis_cleanup(it->diag);
        krc_free(it->diag);
    }
    krc_free(it->full_log);
    krc_siblings_unref(it->group);
    krc_free(it);
}

static void lane_cleanup(struct lane *l)
{
    while (l->head != NULL) {
        struct item *it = l->head;
        l->head = it->next;
        krc_deliver_item_free(it);
    }
    krc_sink_free(l->sink);
    pthread_cond_destroy(&l->wake);
}

void krc_deliver_lanes_free(struct krc_sender *n)
{
    for (size_t i = 0; i < n->n_lanes; i++) {
        lane_cleanup(&n->lanes[i]);
    }
}

size_t krc_sender_pending(struct krc_sender *n)
{
    size_t k;
    pthread_mutex_lock(&n->lock);
    k = n->n_items;
    /* at shutdown, an owed storm summary counts as pending too */
    if (n->o.cancel != NULL && *n->o.cancel) {
        for (size_t i = 0; i < n->n_dests; i++) {
            k += n->dests[i].storm.active && n->dests[i].grouped_total > 0;
        }
    }
    pthread_mutex_unlock(&n->lock);
    return k;
}

/* --- lanes ---------------------------------------------------------------- */

static void *lane_main(void *arg);

/* Start a lane's thread once the sender runs. Caller holds the lock. */
static void lane_start(struct krc_sender *n, struct lane *l)
{
    if (!n->running || l->started || atomic_load(&n->abort)) {
        return;
    }
    atomic_store(&l->heartbeat_ms, krc_clock_mono_ms());
    if (pthread_create(&l->thread, NULL, lane_main, l) != 0) {
        krc_log(KRC_LOG_ERROR, "sender: cannot start a delivery thread; retrying in %ds",
                LANE_RETRY_MS / 1000);
        return;
    }
    l->started = 1;
}

/* The lane of target t (its lane: a webhook URL, "api", "dest:NAME"),
 * made with these settings when new. Caller holds the lock. */
struct lane *krc_deliver_lane_get(struct krc_sender *n, const struct krc_dest_target *t,
                                  const struct krc_sink_ops *ops,
                                  const struct krc_destination *named)
{
    struct lane *l;

    for (size_t i = 0; i < n->n_lanes; i++) {
        if (strcmp(n->lanes[i].key, t->lane) == 0) {
            return &n->lanes[i];
        }
    }
    if (n->n_lanes == MAX_LANES) {
        return &n->lanes[MAX_LANES - 1]; /* pathological: share the last lane */
    }
    l = &n->lanes[n->n_lanes++];
    l->n = n;
    snprintf(l->key, sizeof(l->key), "%s", t->lane);
    l->url = t->url;
    l->ops = ops;
    l->named = named;
    pthread_cond_init(&l->wake, NULL);
    lane_start(n, l);
    return l;
}

/* Caller holds the lock. */
static void lane_push(struct krc_sender *n, struct lane *l, struct item *it)
{
    if (l->tail != NULL) {
        l->tail->next = it;
    } else {
        l->head = it;
    }
    l->tail = it;
    l->n_items++;
    n->n_items++;
    pthread_cond_signal(&l->wake);
}

/* The messages of the chain share one struct siblings; without memory each
 * is published on its own, as a single message is. */
static void share_siblings(struct krc_sender_message *chain)
{
    struct siblings *g = krc_calloc(1, sizeof(*g));
    int k = 0;

    if (g == NULL) {
        return;
    }
    for (struct krc_sender_message *m = chain; m != NULL; m = m->next) {
        m->group = g;
        k++;
    }
    atomic_store(&g->pending, k);
    atomic_store(&g->refs, k);
}

void krc_deliver_queue(struct krc_sender *n, struct item *it)
{
    pthread_mutex_lock(&n->lock);
    lane_push(n, it->dest->lane, it);
    pthread_mutex_unlock(&n->lock);
}

/* The item of msg (its bodies and siblings taken), or NULL when out of
 * memory. */
static struct item *item_of(struct krc_sender_message *msg, int64_t outbox_id)
{
    struct item *it = krc_calloc(1, sizeof(*it));

    if (it == NULL) {
        return NULL;
    }
    it->kind = msg->kind == KRC_STORE_KIND_REPLY ? ITEM_REPLY : ITEM_ALERT;
    it->dest = msg->dest;
    it->group = msg->group;
    msg->group = NULL;
    snprintf(it->pod_key, sizeof(it->pod_key), "%s", msg->thread_key);
    snprintf(it->what, sizeof(it->what), "%s", msg->what);
    it->body = msg->body;
    it->fallback = msg->fallback;
    msg->body = msg->fallback = NULL;
    it->outbox_id = outbox_id;
    it->detected_mono_ms = msg->detected_mono_ms;
    it->restart_id = msg->restart_id;
    it->ident = msg->ident;
    it->incident = msg->incident;
    return it;
}

/* Queue one message of a restart (takes its bodies, rep, diag and
 * full_log). A destination whose storm began after the restart was routed
 * (another worker's restart started it) gets it withdrawn into the storm
 * summary, as the alerts queued when the storm began were. */
static void deliver_one(struct krc_sender *n, struct krc_sender_message *msg, int64_t outbox_id,
                        struct krc_report *rep, struct krc_diagnosis *diag, char *full_log,
                        size_t full_log_len)
{
    struct item *it = NULL;
    struct dest *d = msg->dest;

    if (msg->body == NULL || d == NULL || (it = item_of(msg, outbox_id)) == NULL) {
        if (msg->body != NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: %s dropped", msg->what);
            atomic_fetch_add(&n->stats.failed, 1);
        }
        /* dropped counts as settled for the restart's other destinations */
        krc_deliver_incident_settled(n, msg->incident, msg->dest, 1);
        if (msg->group != NULL && krc_siblings_settle(msg->group, 0)) {
            publish_handled(n, &msg->ident);
        }
        krc_sender_message_cleanup(msg);
        krc_report_free(rep);
        if (diag != NULL) {
            krc_diagnosis_cleanup(diag);
            krc_free(diag);
        }
        krc_free(full_log);
        return;
    }
    it->rep = rep;
    it->diag = diag;
    it->full_log = full_log;
    it->full_log_len = full_log_len;
    pthread_mutex_lock(&n->lock);
    if (d->storm.active) {
        /* settled as withdrawn by its lane: its outbox row must not be
         * posted after a restart of krc either */
        krc_route_group(d, it->rep, it->diag, NULL);
        atomic_fetch_add(&n->stats.grouped, 1);
        krc_log(KRC_LOG_INFO, "%s withdrawn: grouped into the storm summary", it->what);
        it->kind = ITEM_WITHDRAWN;
    }
    lane_push(n, d->lane, it);
    pthread_mutex_unlock(&n->lock);
}

/* Count the restart and group it into the storm summaries of the
 * destinations the plan (or render) grouped it into. */
static void deliver_count(struct krc_sender *n, const struct krc_route_plan *plan,
                          const struct krc_sender_message *msg, const struct krc_restart *r,
                          const struct krc_report *rep, const struct krc_diagnosis *diag)
{
    enum krc_policy_decision d = msg->decision;
    int posting = d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD;
    size_t rendered = 0;
    size_t formats = 0;

    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < plan->n_dests; i++) {
        if (d == KRC_POLICY_GROUPED || (posting && plan->dests[i].storming)) {
            krc_route_group(plan->dests[i].dest, rep, diag, r);
        } else if (posting) {
            formats++;
        }
    }
    pthread_mutex_unlock(&n->lock);
    if (d == KRC_POLICY_GROUPED && plan->n_dests > 0) {
        atomic_fetch_add(&n->stats.grouped, 1);
    }
    if ((plan->decision == KRC_POLICY_ALERT || plan->decision == KRC_POLICY_THREAD) &&
        d == KRC_POLICY_SILENCED) {
        atomic_fetch_add(&n->stats.log_ignored, 1);
    }
    for (const struct krc_sender_message *m = msg->body != NULL ? msg : NULL; m != NULL;
         m = m->next) {
        rendered++;
    }
    if (formats > rendered) {
        /* formats that failed (render logged them) */
        atomic_fetch_add(&n->stats.failed, (long long)(formats - rendered));
    }
}

void krc_deliver_restart(struct krc_sender *n, const struct krc_route_plan *plan,
                         const struct krc_restart *r, struct krc_sender_message *msg,
                         const int64_t *outbox_ids, int post, struct krc_report *rep,
                         struct krc_diagnosis *diag, char *full_log, size_t full_log_len)
{
    struct krc_sender_message *next;
    size_t k = 0;

    deliver_count(n, plan, msg, r, rep, diag);
    if (!post || msg->body == NULL) {
        /* not queued: an incident's first alert that is not sent holds its end back no
         * longer */
        for (const struct krc_sender_message *m = msg; m != NULL && m->body != NULL; m = m->next) {
            krc_deliver_incident_settled(n, m->incident, m->dest, 0);
        }
        krc_sender_message_cleanup(msg);
        krc_report_free(rep);
        if (diag != NULL) {
            krc_diagnosis_cleanup(diag);
            krc_free(diag);
        }
        krc_free(full_log);
        return;
    }
    if (msg->next != NULL) {
        share_siblings(msg);
    }
    /* the first destination (Slack when it is one) gets the report, the
     * diagnosis and the log file; the others their formatted message */
    next = msg->next;
    msg->next = NULL;
    for (struct krc_sender_message *m = msg; m != NULL; k++) {
        int64_t id = outbox_ids != NULL && k < KRC_POLICY_MAX_ROUTED ? outbox_ids[k] : 0;
        krc_deliver_note_own_outbox(n, id);
        if (m == msg) {
            deliver_one(n, m, id, rep, diag, full_log, full_log_len);
        } else {
            deliver_one(n, m, id, NULL, NULL, NULL, 0);
            krc_free(m);
        }
        m = next;
        if (next != NULL) {
            next = next->next;
            m->next = NULL;
        }
    }
}

/* --- the sender -----------------------------------------------------------
 * One thread per lane (lane_main) posts that lane's queue and storm
 * summaries with the lane's own sink and store connection; the main sender
 * thread (krc_sender_run) starts the lanes, retries delivered marks and
 * checks recoveries. */

/* The thread parent of a pod: from memory, else from the store (threads
 * survive a daemon restart). */
static void thread_parent(struct krc_sender *n, struct krc_store *store, const char *pod_key,
                          char *ts, size_t tssz, char *channel, size_t chsz)
{
    struct krc_policy_mute *mt;

    ts[0] = '\0';
    channel[0] = '\0';
    pthread_mutex_lock(&n->lock);
    mt = krc_policy_mute_find(&n->mutes, pod_key, 0, 0);
    if (mt != NULL && mt->ts[0] != '\0') {
        snprintf(ts, tssz, "%s", mt->ts);
        snprintf(channel, chsz, "%s", mt->channel);
    }
    pthread_mutex_unlock(&n->lock);
    if (ts[0] == '\0' && store != NULL) {
        char *t = NULL;
        char *c = NULL;
        if (krc_store_thread_ts(store, pod_key, &t, &c, NULL) == 0 && t != NULL) {
            snprintf(ts, tssz, "%s", t);
            snprintf(channel, chsz, "%s", c ? c : "");
        }
        krc_free(t);
        krc_free(c);
    }
}

/* DROPPED: another leader owns the row (a shared outbox): not posted, not
 * marked, not retried. */
enum send_result { SENT, RETRY_LATER, GIVEN_UP, DROPPED };

static void remember_thread(struct krc_sender *n, struct item *it,
                            const struct krc_sink_result *res)
{
    struct krc_policy_mute *mt;

    pthread_mutex_lock(&n->lock);
    mt = krc_policy_mute_find(&n->mutes, it->pod_key, 1, krc_clock_now());
    snprintf(mt->ts, sizeof(mt->ts), "%s", res->ts);
    snprintf(mt->channel, sizeof(mt->channel), "%s", res->channel);
    pthread_mutex_unlock(&n->lock);
}

static void upload_log(struct krc_sender *n, struct lane *l, struct item *it, const char *channel,
                       const char *thread)
{
    char fname[300];
    struct krc_buf red;
    struct krc_error e;
    const char *data;
    size_t len;

    if (l->sink->ops->upload == NULL) {
        return;
    }
    /* a limit, not an allocation: every byte could become a mark */
    krc_buf_init(&red, it->full_log_len * 11 + 1024);
    /* Always redact (built-in patterns at least): the file leaves the cluster, so
     * when redaction fails the file is not sent at all (it used to go unredacted). */
    if (krc_redact_apply(n->o.redactor, it->full_log, it->full_log_len, &red, NULL) < 0) {
        krc_log(KRC_LOG_WARN, "log file for %s not uploaded: redaction failed", it->pod_key);
        krc_buf_cleanup(&red);
        return;
    }
    data = krc_buf_str(&red);
    len = red.len;
    snprintf(fname, sizeof(fname), "%s-%s-previous.log",
             it->rep != NULL && it->rep->name ? it->rep->name : "pod",
             it->diag != NULL && it->diag->container ? it->diag->container : "container");
    krc_error_clear(&e);
    if (l->sink->ops->upload(l->sink, channel, thread, fname, "Previous container log", data, len,
                             &e) == 0) {
        atomic_fetch_add(&n->stats.files_uploaded, 1);
    } else {
        krc_log(KRC_LOG_WARN, "log file for %s not uploaded: %s", it->pod_key, e.msg);
    }
    krc_buf_cleanup(&red);
}

/* An alert grouped into a storm before it was sent: its outbox row is
 * settled as withdrawn (not failed: nothing was attempted, and the storm
 * summary carries the restart), never posted. */
static void settle_withdrawn(struct lane *l, const struct item *it)
{
    struct krc_error e;

    krc_error_clear(&e);
    if (l->store != NULL && it->outbox_id > 0 &&
        krc_store_mark_withdrawn(l->store, it->outbox_id, &e) < 0) {
        krc_log(KRC_LOG_WARN, "%s withdrawn, but its outbox row could not be marked so: %s",
                it->what, e.msg);
    }
    if (l->store != NULL && it->restart_id > 0) {
        krc_store_set_decision(l->store, it->restart_id, "grouped", NULL, NULL);
    }
}

/* Slack refused it for good (4xx) or kept failing: a 4xx will never
 * succeed; anything else is tried again later, the outbox keeps it. */
static enum send_result send_failed(struct krc_sender *n, struct lane *l, const struct item *it,
                                    int rc, const struct krc_sink_result *res,
                                    const struct krc_error *e)
{
    long http_status = res->http_status;
    int final = rc == KRC_EHTTP && http_status >= 400 && http_status < 500;
    char why[400] = "";

    if (l->store != NULL && it->outbox_id > 0) {
        krc_store_mark_attempt(l->store, it->outbox_id, e->msg, final, NULL);
    }
    if (!krc_dest_is_event(it->dest)) {
        /* krc_notifications_total counts messages; Events are counted apart */
        atomic_fetch_add(&n->stats.failed, 1);
    }
    krc_sender_count_outcome(n, l->named, rc, res, e);
    if (http_status != 0) {
        /* the answer explained by its kind: "404 no_service: this webhook was revoked ..." */
        size_t k;
        snprintf(why, sizeof(why), " (");
        k = strlen(why);
        krc_sink_explain(l->sink != NULL ? l->sink->ops : l->ops, http_status, res->error, why + k,
                         sizeof(why) - k - 1);
        k = strlen(why);
        snprintf(why + k, sizeof(why) - k, ")");
    }
    krc_log(KRC_LOG_ERROR, "%s not delivered: %s%s%s", it->what, e->msg, why,
            final ? "" : "; it stays in the outbox and is retried in 60s");
    return final ? GIVEN_UP : RETRY_LATER;
}

/* After Slack accepted an item: callbacks, storm bookkeeping, statistics,
 * thread state and the log file. */
static void after_sent(struct krc_sender *n, struct lane *l, struct item *it,
                       const struct krc_sink_result *res, const char *parent_ts,
                       const char *channel)
{
    int restart_msg = it->kind == ITEM_ALERT || it->kind == ITEM_REPLY;
    int counted;

    if (n->o.on_delivered != NULL && it->detected_mono_ms > 0 && restart_msg) {
        n->o.on_delivered((double)(krc_clock_mono_ms() - it->detected_mono_ms) / 1000.0,
                          n->o.on_delivered_userdata);
    }
    if (restart_msg && it->group == NULL) {
        publish_handled(n, &it->ident);
    }
    if (it->kind == ITEM_ALERT) {
        pthread_mutex_lock(&n->lock);
        krc_policy_storm_sent(&it->dest->storm, krc_clock_mono_ms());
        pthread_mutex_unlock(&n->lock);
    }
    /* an Event is no notification: krc_kube_events_total counts it */
    counted = !krc_dest_is_event(it->dest);
    switch (it->kind) {
    case ITEM_ALERT:
        atomic_fetch_add(&n->stats.alerts_sent, counted);
        if (l->sink->limits.threads && res->ts[0] != '\0') {
            remember_thread(n, it, res); /* the thread of its incident's replies */
        }
        break;
    case ITEM_REPLY:
        atomic_fetch_add(&n->stats.replies_sent, counted);
        break;
    case ITEM_RECOVERED:
        atomic_fetch_add(&n->stats.recovered_sent, counted);
        break;
    case ITEM_SUMMARY:
        atomic_fetch_add(&n->stats.summaries_sent, counted);
        break;
    case ITEM_WITHDRAWN:
        break;
    }
    /* Web API: the full previous log goes into the thread as a file. */
    if (l->sink->limits.files && it->full_log != NULL && it->full_log_len > 0 && restart_msg) {
        const char *thread = it->kind == ITEM_ALERT ? res->ts : parent_ts;
        upload_log(n, l, it, res->channel[0] ? res->channel : channel, thread);
    }
}

static enum send_result send_one(struct krc_sender *n, struct lane *l, struct item *it)
{
    struct krc_sink_message m;
    struct krc_sink_result res;
    struct krc_error e;
    char parent_ts[64] = "";
    char parent_channel[64] = "";
    int rc;

    krc_error_clear(&e);
    memset(&res, 0, sizeof(res));
    if (it->kind == ITEM_WITHDRAWN) {
        settle_withdrawn(l, it);
        return GIVEN_UP;
    }
    memset(&m, 0, sizeof(m));
    m.body = it->body;
    m.fallback = it->fallback;
    if ((it->kind == ITEM_REPLY || it->kind == ITEM_RECOVERED) && l->sink->limits.threads) {
        thread_parent(n, l->store, it->pod_key, parent_ts, sizeof(parent_ts), parent_channel,
                      sizeof(parent_channel));
        m.thread_ts = parent_ts[0] != '\0' ? parent_ts : NULL;
    }
    m.channel = parent_channel[0] ? parent_channel : it->dest->channel;
    if (strlen(m.body) > l->sink->limits.max_payload) {
        rc = krc_error_set(&e, KRC_EHTTP, "%s: %zu bytes, more than the %zu the destination takes",
                           l->sink->ops->name, strlen(m.body), l->sink->limits.max_payload);
        res.http_status = 413; /* krc's own refusal: what a service would answer */
        return send_failed(n, l, it, rc, &res, &e);
    }
    if (!krc_deliver_claimed(n, l, it)) {
        return DROPPED;
    }
    rc = l->sink->ops->send(l->sink, &m, &res, &e);
    atomic_fetch_add(&n->stats.rate_limited, res.rate_limited);
    if (rc == KRC_ECANCELED) {
        return RETRY_LATER; /* shutdown: it stays pending in the outbox */
    }
    if (rc < 0) {
        return send_failed(n, l, it, rc, &res, &e);
    }
    krc_sender_count_outcome(n, l->named, 0, &res, NULL);
    if (l->store != NULL && it->outbox_id > 0) {
        krc_deliver_mark_delivered(n, l->store, it->outbox_id, res.ts[0] ? res.ts : NULL, it->what);
    }
    /* "posted (" is the mark of a message; an Event is written */
    krc_log(KRC_LOG_INFO, "%s %s%s (%d attempt%s)", it->what,
            !krc_dest_is_event(it->dest) ? "posted"
            : res.already_exists         ? "there already, not written again"
                                         : "written",
            res.used_fallback ? " as plain text" : "", res.attempts, res.attempts == 1 ? "" : "s");
    after_sent(n, l, it, &res, parent_ts, m.channel);
    return SENT;
}

static void send_summary(struct krc_sender *n, struct lane *l, struct dest *d, char *body,
                         long total)
{
    struct item it;
    int64_t id = 0;

    memset(&it, 0, sizeof(it));
    it.kind = ITEM_SUMMARY;
    it.dest = d;
    it.body = body;
    snprintf(it.what, sizeof(it.what), "storm summary of %ld restarts", total);
    if (l->store != NULL) {
        struct krc_store_outbox ob;
        memset(&ob, 0, sizeof(ob));
        ob.kind = KRC_STORE_KIND_SUMMARY;
        ob.destination = d->store_key;
        ob.channel = d->channel;
        ob.body = body;
        if (krc_store_add_outbox(l->store, 0, &ob, &id, NULL) == 0) {
            krc_deliver_note_own_outbox(n, id);
            it.outbox_id = id;
        }
    }
    if (send_one(n, l, &it) == RETRY_LATER && it.outbox_id > 0) {
        krc_log(KRC_LOG_WARN, "storm summary kept in the outbox for a later retry");
    }
}

/* A due storm summary of this lane, if any (caller holds the lock); the
 * storm ends once a whole window passed without a restart. At shutdown a
 * summary still owed is due at once. */
static struct dest *due_summary(struct krc_sender *n, const struct lane *l, int64_t now_ms,
                                int stopping)
{
    for (size_t i = 0; i < n->n_dests; i++) {
        struct dest *d = &n->dests[i];
        if (d->lane != l) {
            continue;
        }
        if (krc_policy_storm_summary_due(&d->storm, d->grouped_total, stopping, now_ms)) {
            return d;
        }
        if (krc_policy_storm_over(&n->pol, &d->storm, d->grouped_total, now_ms)) {
            krc_log(KRC_LOG_INFO, "alert storm over: %ld restarts were grouped", d->storm_total);
        }
    }
    return NULL;
}

void krc_sender_restart_seen(struct krc_sender *n, const char *uid, const char *ns,
                             const char *name, const char *container, int restart_count)
{
    if (n != NULL) {
        krc_recovery_await(n->recovery, uid, ns, name, container, restart_count, krc_clock_now());
    }
}

void krc_sender_pod_event(struct krc_sender *n, const struct krc_pod_info *pod, int deleted)
{
    struct krc_recovery_probe p;

    /* an event of a pod nothing waits for (the common case): no lock, no clock read */
    if (n != NULL && krc_recovery_wants(n->recovery, pod, deleted, &p)) {
        krc_recovery_apply(n->recovery, pod, deleted, &p, krc_clock_now());
    }
}

size_t krc_sender_awaited(const struct krc_sender *n)
{
    return krc_recovery_count(n->recovery);
}

void krc_deliver_recovery_release(struct krc_sender *n, const char *uid, const char *container,
                                  uint64_t gen)
{
    for (size_t i = 0; i < n->incidents.n; i++) {
        const struct krc_incident *x = &n->incidents.v[i];
        if (strcmp(x->latest_uid, uid) == 0 && strcmp(x->container, container) == 0) {
            return; /* another open incident (another cause) still waits for it */
        }
    }
    krc_recovery_forget(n->recovery, uid, container, gen);
}

int64_t krc_sender_heartbeat(const struct krc_sender *n)
{
    int64_t hb = atomic_load(&n->heartbeat_ms);

    /* the oldest beat of the main loop and the running lanes */
    for (size_t i = 0; i < MAX_LANES; i++) {
        int64_t lb = atomic_load(&n->lanes[i].heartbeat_ms);
        if (lb != 0 && lb < hb) {
            hb = lb;
        }
    }
    return hb;
}

void krc_sender_abort_transfers(struct krc_sender *n)
{
    n->abort_hard = 1;
    krc_sender_abort(n);
}

void krc_sender_abort(struct krc_sender *n)
{
    atomic_store(&n->abort, 1);
    pthread_mutex_lock(&n->lock);
    pthread_cond_broadcast(&n->wake);
    for (size_t i = 0; i < n->n_lanes; i++) {
        pthread_cond_broadcast(&n->lanes[i].wake);
    }
    pthread_mutex_unlock(&n->lock);
}

static void wait_on(pthread_cond_t *c, pthread_mutex_t *m, long ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(c, m, &ts);
}

/* The next item of the lane that is due (NULL: none; the lane waited a
 * little). Items waiting for a retry rotate to the back. Caller holds the
 * lock. */
static struct item *lane_next(struct krc_sender *n, struct lane *l, int64_t now_ms)
{
    struct item *it = l->head;

    if (it != NULL && it->not_before_ms <= now_ms) {
        l->head = it->next;
        if (l->head == NULL) {
            l->tail = NULL;
        }
        it->next = NULL;
        l->n_items--;
        n->n_items--;
        return it;
    }
    if (it != NULL && it->next != NULL) {
        /* the head waits for a retry: rotate it to the back */
        l->head = it->next;
        it->next = NULL;
        l->tail->next = it;
        l->tail = it;
        if (l->head->not_before_ms <= now_ms) {
            return NULL; /* the new head is due: no wait */
        }
    }
    wait_on(&l->wake, &n->lock, it != NULL ? 100 : 200);
    return NULL;
}

/* A message of a restart with several destinations is done (accepted, or
 * given up): the restart is published as handled with the last one. */
static void settle(struct krc_sender *n, const struct item *it, enum send_result r)
{
    if (r == RETRY_LATER) {
        return;
    }
    /* a first alert withdrawn into a storm summary was not the destination's alert: its
     * incident's end sends it no resolved message */
    krc_deliver_incident_settled(n, it->incident, it->dest, it->kind == ITEM_WITHDRAWN);
    if (it->group == NULL) {
        return;
    }
    if (krc_siblings_settle(it->group, r == SENT)) {
        publish_handled(n, &it->ident);
    }
}

/* The lane's sink and store connection, made in its own thread. */
static int lane_open(struct krc_sender *n, struct lane *l)
{
    struct krc_error e;
    struct krc_sink_options so;

    krc_error_clear(&e);
    if (n->o.store_path != NULL && l->store == NULL &&
        krc_store_open_with(n->o.store_path, n->o.store_flags, n->o.store_options, &l->store, &e) <
            0) {
        krc_log(KRC_LOG_ERROR, "sender: outbox unavailable (%s); deliveries are not recorded",
                e.msg);
        l->store = NULL;
    }
    krc_error_clear(&e);
    so = n->sink_options;
    krc_dest_sink_options(l->named, &so);
    l->sink = l->ops->create(&so, l->url, &e);
    if (l->sink == NULL) {
        /* an implicit destination's name says nothing */
        const char *name = l->named->implicit ? NULL : l->named->name;
        krc_log(KRC_LOG_ERROR, "sender: cannot set up %s delivery%s%s (%s); retrying in %ds",
                l->ops->name, name != NULL ? " to " : "", name != NULL ? name : "", e.msg,
                LANE_RETRY_MS / 1000);
        return -1;
    }
    return 0;
}

static void *lane_main(void *arg)
{
    struct lane *l = arg;
    struct krc_sender *n = l->n;

    while (!n->abort && lane_open(n, l) < 0) {
        atomic_store(&l->heartbeat_ms, krc_clock_mono_ms());
        krc_clock_sleep_ms(LANE_RETRY_MS, &n->abort);
    }
    while (!n->abort) {
        struct item *it = NULL;
        struct dest *d;
        char *summary = NULL;
        long total = 0;
        int64_t now_ms = krc_clock_mono_ms();
        int stopping = n->o.cancel != NULL && *n->o.cancel;

        atomic_store(&l->heartbeat_ms, now_ms);
        pthread_mutex_lock(&n->lock);
        d = due_summary(n, l, now_ms, stopping);
        if (d != NULL) {
            if (krc_render_summary(n, d, &summary, &total) < 0) {
                summary = NULL;
            }
            d->storm.next_summary_ms = now_ms + n->pol.storm_window_s * 1000;
        } else {
            it = lane_next(n, l, now_ms);
        }
        pthread_mutex_unlock(&n->lock);
        if (summary != NULL) {
            send_summary(n, l, d, summary, total);
            krc_free(summary);
        }
        if (it != NULL) {
            enum send_result r = send_one(n, l, it);
            if (r == RETRY_LATER && !n->abort) {
                it->not_before_ms = krc_clock_mono_ms() + 60000;
                krc_deliver_queue(n, it);
            } else {
                settle(n, it, r);
                krc_deliver_item_free(it);
            }
        }
    }
    atomic_store(&l->heartbeat_ms, 0);
    krc_store_close(l->store);
    l->store = NULL;
    return NULL;
}

/* Start the lanes that have no thread yet (at start, and after a failed
 * pthread_create). */
static void start_lanes(struct krc_sender *n)
{
    pthread_mutex_lock(&n->lock);
    n->running = 1;
    for (size_t i = 0; i < n->n_lanes; i++) {
        lane_start(n, &n->lanes[i]);
    }
    pthread_mutex_unlock(&n->lock);
}

static void join_lanes(struct krc_sender *n)
{
    size_t count;

    pthread_mutex_lock(&n->lock);
    n->running = 0; /* no lane starts from now on */
    count = n->n_lanes;
    pthread_mutex_unlock(&n->lock);
    for (size_t i = 0; i < count; i++) {
        if (n->lanes[i].started) {
            pthread_join(n->lanes[i].thread, NULL);
            n->lanes[i].started = 0;
        }
    }
}

void krc_sender_run(struct krc_sender *n)
{
    int64_t last_recovery_check = 0;

    if (n->o.store_path != NULL) {
        struct krc_error e;
        krc_error_clear(&e);
        if (krc_store_open_with(n->o.store_path, n->o.store_flags, n->o.store_options, &n->store,
                                &e) < 0) {
            krc_log(KRC_LOG_ERROR, "sender: outbox unavailable (%s); deliveries are not recorded",
                    e.msg);
            n->store = NULL;
        }
    }
    start_lanes(n);
    while (!n->abort) {
        int64_t now_ms = krc_clock_mono_ms();
        int stopping = n->o.cancel != NULL && *n->o.cancel;

        atomic_store(&n->heartbeat_ms, now_ms);
        if (n->store != NULL) {
            krc_deliver_retry_unmarked(n, 0);
        }
        if (!stopping && now_ms - last_recovery_check >= 1000) {
            last_recovery_check = now_ms;
            krc_deliver_incidents_check(n); /* their resolved messages */
        }
        pthread_mutex_lock(&n->lock);
        for (size_t i = 0; i < n->n_lanes; i++) {
            lane_start(n, &n->lanes[i]);
        }
        wait_on(&n->wake, &n->lock, 200);
        pthread_mutex_unlock(&n->lock);
    }
    join_lanes(n);
    /* What could not be sent in time is reported, not silently dropped: with
     * a store it stays in the outbox and is sent at the next start. */
    pthread_mutex_lock(&n->lock);
    if (n->n_items > 0) {
        krc_log(
            KRC_LOG_WARN,
            "shutdown: %zu message(s) (Slack, other destinations, Kubernetes Events) not sent%s",
            n->n_items,
            n->store != NULL ? "; they stay in the outbox (sent at the next start or, with "
                               "leader election, when this replica leads again and its "
                               "predecessor did not post them)"
                             : "");
    }
    pthread_mutex_unlock(&n->lock);
    if (n->store != NULL) {
        /* one last try; what fails is left to the delivery journal (the
         * marks whose journal write failed too were logged as such) */
        krc_deliver_retry_unmarked(n, 1);
    }
    krc_store_close(n->store);
    n->store = NULL;
}
