/* The end of incidents (alert/incident.h, docs/design/incidents.md): once a second the
 * main sender thread asks the recovery tracker (what the watch saw, alert/recovery.h)
 * whether an open incident's latest pod has run ready for the settle time (recoveredAfter),
 * or went away with no restart since; then the incident ends in the store together with
 * its resolved messages (one per destination its first alert went to: a thread reply, a
 * PagerDuty resolve, a webhook "resolved" event, a Teams message), and they are queued.
 * Another leader that ended it first (KRC_STORE_EXISTS) means nothing is sent here.
 * Loading (krc_sender_load_incidents) brings the open incidents of the store back into the
 * table at start-up and at a take-over. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/incident.h"
#include "krc/alert/recovery.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "sender_int.h"

/* Incidents ended per check (the rest wait a second). */
#define ENDS_PER_CHECK 16

/* An ending incident, copied out of the table (its lock is not held while it ends). */
struct ending {
    struct krc_incident x;
    int64_t ready_seconds;
    int moved_on;
    uint64_t awaited; /* the tracker's entry of its latest pod, as asked (0: none) */
};

/* Is x over at now? 1 with *ready_s (how long it has run ready), *moved_on and *awaited
 * (krc_recovery_ready's generation of its latest pod's entry, for its end). Caller holds
 * the lock. */
static int is_over(struct krc_sender *n, const struct krc_incident *x, int64_t now,
                   int64_t *ready_s, int *moved_on, uint64_t *awaited)
{
    int64_t settle = n->o.recovered_after_s;
    int64_t since = 0;
    int tracked =
        krc_recovery_ready(n->recovery, x->latest_uid, x->container, now, &since, awaited);

    *ready_s = 0;
    *moved_on = 0;
    if (tracked) {
        if (since == 0 || now - since < settle) {
            return 0;
        }
        *ready_s = now - since;
        return 1;
    }
    /* its last pod went away (deleted, replaced), or is not watched: the workload moved
     * on once no restart of the incident came within the settle time */
    if (now - x->last_at < settle || now - x->last_at < 1) {
        return 0;
    }
    *moved_on = 1;
    return 1;
}

/* Take the incidents that are over out of the table's way (marked ending). */
static size_t take_over(struct krc_sender *n, int64_t now, struct ending *out, size_t max)
{
    size_t k = 0;

    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < n->incidents.n && k < max; i++) {
        struct krc_incident *x = &n->incidents.v[i];
        if (x->ending || (n->store != NULL && !x->recorded) || x->unsettled > 0) {
            continue; /* its first record is still being written, or its first alert is
                       * still on its way: the resolved message comes after it */
        }
        if (is_over(n, x, now, &out[k].ready_seconds, &out[k].moved_on, &out[k].awaited)) {
            x->ending = 1;
            out[k].x = *x;
            k++;
        }
    }
    pthread_mutex_unlock(&n->lock);
    return k;
}

/* The resolved message of x to destination d in *body (NULL: d has none, e.g. an Event). */
static int format_resolved(struct krc_sender *n, const struct ending *en, struct dest *d,
                           char **body)
{
    const struct krc_incident *x = &en->x;
    struct krc_alert_recovered rec;
    struct krc_alert_options fo;
    struct krc_error e;
    int rc;

    memset(&rec, 0, sizeof(rec));
    rec.namespace = x->namespace;
    rec.pod = x->first_pod[0] ? x->first_pod : x->latest_pod;
    rec.container = x->container;
    rec.ready_seconds = en->ready_seconds;
    rec.last_pod = x->latest_pod;
    rec.incident_id = x->id;
    rec.workload_kind = x->workload_kind;
    rec.workload_name = x->workload_name;
    rec.cause = krc_cause_name(x->cause);
    rec.restarts = x->restarts;
    rec.first_at = x->first_at;
    rec.last_at = x->last_at;
    rec.moved_on = en->moved_on;
    pthread_mutex_lock(&n->lock);
    krc_render_format_options(n, d, &fo);
    pthread_mutex_unlock(&n->lock);
    *body = NULL;
    krc_error_clear(&e);
    rc = d->ops->format_recovered(&rec, &fo, body, &e);
    if (rc == KRC_EUNSUPPORTED) {
        *body = NULL; /* a destination without such messages (a Kubernetes Event) */
        return 0;
    }
    if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the resolved message of incident #%lld: %s",
                (long long)x->id, e.msg);
        *body = NULL;
    }
    return rc;
}

/* End one incident: its resolved messages recorded with the end, then queued. */
static void end_one(struct krc_sender *n, const struct ending *en)
{
    const struct krc_incident *x = &en->x;
    struct krc_store_outbox ob[KRC_INCIDENT_MAX_DESTS];
    int64_t ids[KRC_INCIDENT_MAX_DESTS] = {0};
    char *bodies[KRC_INCIDENT_MAX_DESTS] = {0};
    struct dest *dests[KRC_INCIDENT_MAX_DESTS];
    size_t k = 0;
    int rc = 0;
    struct krc_error e;

    /* recoveredAfter 0: the incident ends without a message */
    for (size_t i = 0; x->alerted && n->o.recovered_after_s > 0 && i < x->n_dests; i++) {
        struct dest *d = x->dests[i];
        if (d == NULL || format_resolved(n, en, d, &bodies[k]) < 0 || bodies[k] == NULL) {
            continue;
        }
        memset(&ob[k], 0, sizeof(ob[k]));
        ob[k].kind = KRC_STORE_KIND_RECOVERED;
        ob[k].destination = d->store_key;
        ob[k].channel = d->channel;
        ob[k].thread_key = x->thread_key[0] ? x->thread_key : NULL;
        ob[k].body = bodies[k];
        dests[k] = d;
        k++;
    }
    if (n->store != NULL && x->id > 0) {
        krc_error_clear(&e);
        rc = krc_store_incident_end(n->store, x->id, krc_clock_now(), ob, k, ids, &e);
        if (rc == KRC_STORE_EXISTS) {
            krc_log(KRC_LOG_INFO,
                    "incident #%lld of %s %s/%s container %s was ended already (by another "
                    "leader); its resolved message is not sent again",
                    (long long)x->id, x->workload_kind, x->namespace, x->workload_name,
                    x->container);
            k = 0;
        } else if (rc < 0) {
            krc_log(KRC_LOG_ERROR,
                    "history: incident #%lld not ended: %s; its resolved message is posted "
                    "directly",
                    (long long)x->id, e.msg);
            memset(ids, 0, sizeof(ids));
        }
    }
    krc_log(KRC_LOG_INFO,
            "incident%s%lld of %s %s/%s container %s (%s) ended after %ld restart(s): %s; %zu "
            "resolved message(s)",
            x->id > 0 ? " #" : " ", (long long)x->id, x->workload_kind, x->namespace,
            x->workload_name, x->container, krc_cause_name(x->cause), x->restarts,
            en->moved_on ? "its last pod went away and no restart followed"
                         : "the container has run ready for the settle time",
            k);
    for (size_t i = 0; i < k; i++) {
        struct item *it = krc_calloc(1, sizeof(*it));
        if (it == NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: resolved message of incident #%lld dropped",
                    (long long)x->id);
            continue;
        }
        it->kind = ITEM_RECOVERED;
        it->dest = dests[i];
        it->body = bodies[i];
        bodies[i] = NULL;
        it->outbox_id = ids[i];
        it->restart_id = x->latest_restart_id;
        if (ids[i] > 0) {
            krc_deliver_note_own_outbox(n, ids[i]);
        }
        snprintf(it->pod_key, sizeof(it->pod_key), "%s", x->thread_key);
        snprintf(it->what, sizeof(it->what),
                 "resolved message of incident #%lld (%s %s/%s, pod %s)", (long long)x->id,
                 x->workload_kind, x->namespace, x->workload_name, x->latest_pod);
        krc_deliver_queue(n, it);
    }
    for (size_t i = 0; i < KRC_INCIDENT_MAX_DESTS; i++) {
        krc_free(bodies[i]);
    }
    pthread_mutex_lock(&n->lock);
    {
        struct krc_incident *still = krc_incident_by_seq(&n->incidents, x->seq);
        if (still != NULL) {
            krc_incident_remove(&n->incidents, still);
        }
        /* its latest pod's entry in the tracker goes with it */
        krc_deliver_recovery_release(n, x->latest_uid, x->container, en->awaited);
    }
    pthread_mutex_unlock(&n->lock);
}

void krc_deliver_incident_settled(struct krc_sender *n, uint64_t incident, void *dest, int not_sent)
{
    struct krc_incident *x;

    if (incident == 0) {
        return;
    }
    pthread_mutex_lock(&n->lock);
    x = krc_incident_by_seq(&n->incidents, incident);
    if (x != NULL && x->unsettled > 0) {
        x->unsettled--;
    }
    for (size_t i = 0; x != NULL && not_sent && i < x->n_dests; i++) {
        if (x->dests[i] == dest) {
            x->n_dests--;
            x->dests[i] = x->dests[x->n_dests];
            memcpy(x->dest_keys[i], x->dest_keys[x->n_dests], sizeof(x->dest_keys[i]));
            break;
        }
    }
    pthread_mutex_unlock(&n->lock);
}

void krc_deliver_incidents_check(struct krc_sender *n)
{
    struct ending due[ENDS_PER_CHECK];
    size_t k;

    k = take_over(n, krc_clock_now(), due, ENDS_PER_CHECK);
    krc_recovery_expire(n->recovery, krc_clock_now());
    for (size_t i = 0; i < k; i++) {
        end_one(n, &due[i]);
    }
}

/* --- loading ----------------------------------------------------------------- */

struct load {
    struct krc_sender *n;
    struct krc_store *store;
    size_t loaded;
};

/* The destination of an outbox row's key, made when new; NULL when the configuration no
 * longer has it. */
static struct dest *dest_of_key(struct krc_sender *n, const struct krc_store_message *m)
{
    const struct krc_destination *nd = NULL;
    struct krc_dest_target t;
    struct dest *d;
    const char *channel = m->channel != NULL && m->channel[0] != '\0' ? m->channel : NULL;

    if (krc_deliver_row_target(n, m, channel, &nd, &t) < 0) {
        return NULL;
    }
    pthread_mutex_lock(&n->lock);
    d = krc_route_dest_get(n, nd, &t);
    pthread_mutex_unlock(&n->lock);
    return d;
}

/* x's first failure (for a repeat to carry and a paced message to compare with) from its
 * first restart's record: the row's termination, cause and confidence, and from its stored
 * report (store/report_json's document) the log's tail and whether it was collected. A
 * report that is missing or does not parse leaves no log: "" and not collected. */
static void first_from(struct krc_incident *x, const struct krc_store_entry *first)
{
    const struct krc_store_row *row = &first->row;
    enum krc_cause cause;
    cJSON *doc = first->report_json != NULL ? cJSON_Parse(first->report_json) : NULL;
    const cJSON *log = cJSON_GetObjectItemCaseSensitive(doc, "log");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(log, "text");

    memset(&x->first, 0, sizeof(x->first));
    x->first.id = row->id;
    x->first.cause = krc_cause_parse(row->cause, &cause) == 0 ? cause : x->cause;
    x->first.confidence = KRC_CONFIDENCE_LOW;
    if (row->confidence != NULL) {
        (void)krc_confidence_parse(row->confidence, &x->first.confidence);
    }
    x->first.has_exit_code = row->has_exit_code;
    x->first.exit_code = row->exit_code;
    x->first.signal = row->signal;
    x->first.has_reason = row->reason != NULL;
    snprintf(x->first.reason, sizeof(x->first.reason), "%s", row->reason ? row->reason : "");
    x->first_diagnosed = 1;
    snprintf(x->first_node, sizeof(x->first_node), "%s", row->node ? row->node : "");
    x->first_log[0] = '\0';
    if (cJSON_IsString(text) && text->valuestring != NULL) {
        krc_incident_keep_log(text->valuestring, strlen(text->valuestring), x->first_log,
                              sizeof(x->first_log));
        x->first.log_collected = text->valuestring[0] != '\0';
    }
    cJSON_Delete(doc);
    snprintf(x->first_pod, sizeof(x->first_pod), "%s", row->pod ? row->pod : "");
}

/* Does the table hold stored incident si (of cause `cause`) already? By its id (this process
 * recorded it), or as an incident of its key and cause that this process opened and has not
 * recorded yet (the database was down: its record joins si when it is written, and tells it
 * si's id). Caller holds the lock. */
static int held(struct krc_sender *n, const struct krc_store_incident *si, enum krc_cause cause)
{
    const struct krc_incident *same;

    if (krc_incident_by_id(&n->incidents, si->id) != NULL) {
        return 1;
    }
    same = krc_incident_match(&n->incidents, si->namespace, si->workload_kind, si->workload_name,
                              si->container, cause);
    return same != NULL && same->cause == cause && same->id == 0;
}

static int load_one(const struct krc_store_incident *si, void *ud)
{
    struct load *ld = ud;
    struct krc_sender *n = ld->n;
    struct krc_store_incident_detail *det = NULL;
    struct krc_incident *x = NULL;
    struct krc_error e;
    enum krc_cause cause = KRC_CAUSE_UNKNOWN;
    int known;

    (void)krc_cause_parse(si->cause, &cause);
    pthread_mutex_lock(&n->lock);
    known = held(n, si, cause);
    pthread_mutex_unlock(&n->lock);
    if (known) {
        return 0;
    }
    krc_error_clear(&e);
    if (krc_store_incident_get(ld->store, si->id, &det, &e) < 0) {
        krc_log(KRC_LOG_WARN, "incident #%lld not loaded: %s", (long long)si->id, e.msg);
        return 0;
    }
    pthread_mutex_lock(&n->lock);
    if (!held(n, si, cause)) { /* a worker may have opened or recorded it meanwhile */
        x = krc_incident_open(&n->incidents, si->namespace, si->workload_kind, si->workload_name,
                              si->container, cause, si->first_at);
    }
    if (x != NULL) {
        x->id = si->id;
        x->recorded = 1;
        x->restarts = si->restarts;
        x->last_at = si->last_at;
        x->last_reply_at = si->last_reply_at > 0 ? si->last_reply_at : si->first_at;
        x->last_update_at = si->last_update_at > 0 ? si->last_update_at : si->first_at;
        x->told_reply = x->told_update = si->told_restarts > 0 ? si->told_restarts : 1;
        x->latest_restart_id = si->latest_restart_id;
        snprintf(x->thread_key, sizeof(x->thread_key), "%s", si->thread_key ? si->thread_key : "");
        if (det->first != NULL) {
            first_from(x, det->first);
        }
        if (det->latest != NULL) {
            snprintf(x->latest_uid, sizeof(x->latest_uid), "%s",
                     det->latest->row.pod_uid ? det->latest->row.pod_uid : "");
            snprintf(x->latest_pod, sizeof(x->latest_pod), "%s",
                     det->latest->row.pod ? det->latest->row.pod : "");
        }
    }
    pthread_mutex_unlock(&n->lock);
    if (x == NULL) {
        krc_store_incident_detail_free(det);
        return 0;
    }
    /* the destinations its first alert went to: its first restart's alert rows */
    for (size_t i = 0; i < det->n_messages; i++) {
        const struct krc_store_message *m = &det->messages[i];
        struct dest *d;
        if (m->kind != KRC_STORE_KIND_ALERT || m->restart_id != si->first_restart_id ||
            (d = dest_of_key(n, m)) == NULL) {
            continue;
        }
        pthread_mutex_lock(&n->lock);
        x = krc_incident_by_id(&n->incidents, si->id);
        if (x != NULL && x->n_dests < KRC_INCIDENT_MAX_DESTS) {
            x->dests[x->n_dests] = d;
            snprintf(x->dest_keys[x->n_dests], sizeof(x->dest_keys[0]), "%s", m->destination);
            x->n_dests++;
            x->alerted = 1;
        }
        pthread_mutex_unlock(&n->lock);
    }
    /* its latest pod is awaited: the watch (its relist) says when it runs ready */
    if (det->latest != NULL && det->latest->row.pod_uid != NULL) {
        const struct krc_store_row *lr = &det->latest->row;
        krc_recovery_await(n->recovery, lr->pod_uid, lr->namespace, lr->pod, lr->container,
                           lr->restart_count, krc_clock_now());
    }
    krc_store_incident_detail_free(det);
    ld->loaded++;
    return 0;
}

int krc_sender_load_incidents(struct krc_sender *n, struct krc_store *store)
{
    struct load ld = {n, store, 0};
    struct krc_error e;
    int rc;

    if (n == NULL || store == NULL) {
        return 0;
    }
    krc_error_clear(&e);
    rc = krc_store_incidents_open(store, load_one, &ld, &e);
    if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "history: open incidents not loaded: %s", e.msg);
        return rc;
    }
    if (ld.loaded > 0) {
        krc_log(KRC_LOG_INFO, "incidents: %zu open incident(s) continued from the history",
                ld.loaded);
    }
    return (int)ld.loaded;
}
