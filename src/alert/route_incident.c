/* The route stage's incidents (include/krc/alert/route.h, alert/incident.h): what a
 * repeat carries from its incident's first failure, the words of a paced message, what the
 * first alert leaves in the incident, and the store's id of it. The table is the sender's,
 * under its lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/incident.h"
#include "krc/alert/render.h"
#include "krc/alert/route.h"
#include "sender_int.h"

int krc_route_incident_first(struct krc_sender *n, const char *ns, const char *kind,
                             const char *name, const char *container,
                             struct krc_diagnosis_history *ret)
{
    struct krc_incident *x;
    int found = 0;

    pthread_mutex_lock(&n->lock);
    x = krc_incident_latest(&n->incidents, ns, kind, name, container);
    if (x != NULL && x->first_diagnosed) {
        *ret = x->first;
        found = 1;
    }
    pthread_mutex_unlock(&n->lock);
    return found;
}

/* One failure's facts from its report and diagnosis. */
static void facts_of(const struct krc_restart *r, const struct krc_report *rep,
                     const struct krc_diagnosis *dg, struct krc_incident_facts *f)
{
    const char *reason = dg != NULL && dg->reason != NULL ? dg->reason : r->reason;
    const char *node = rep != NULL && rep->node_name != NULL ? rep->node_name : r->node;

    memset(f, 0, sizeof(*f));
    if (dg != NULL && dg->has_termination) {
        f->has_exit_code = 1;
        f->exit_code = dg->exit_code;
        f->signal = dg->signal;
    } else if (r->has_exit_code) {
        f->has_exit_code = 1;
        f->exit_code = r->exit_code;
        f->signal = r->signal;
    }
    snprintf(f->reason, sizeof(f->reason), "%s", reason != NULL ? reason : "");
    snprintf(f->node, sizeof(f->node), "%s", node != NULL ? node : "");
    if (dg != NULL) {
        f->has_confidence = 1;
        f->confidence = dg->confidence;
    }
}

void krc_route_incident_headlines(struct krc_sender *n, const struct krc_route_plan *plan,
                                  const struct krc_restart *r, const struct krc_report *rep,
                                  const struct krc_diagnosis *dg, char *reply, char *update,
                                  size_t size)
{
    struct krc_incident_facts now, first;
    struct krc_incident *x;
    char line[200];
    char differs[1024];

    reply[0] = update[0] = '\0';
    facts_of(r, rep, dg, &now);
    pthread_mutex_lock(&n->lock);
    x = krc_incident_by_seq(&n->incidents, plan->incident);
    if (x != NULL) {
        krc_incident_log_differs(x->first_log, rep != NULL ? (const char *)rep->log : NULL,
                                 rep != NULL ? rep->log_len : 0, line, sizeof(line));
        krc_incident_first_facts(x, &first);
        krc_incident_differs(&first, &now, line, differs, sizeof(differs));
        /* the counts since the message before, as the route took them (pace_repeat) */
        krc_incident_headline(x, plan->since_last_reply, differs, reply, size);
        krc_incident_headline(x, plan->since_last_update, differs, update, size);
    }
    pthread_mutex_unlock(&n->lock);
}

/* x's first failure from its first alert's restart, report and diagnosis (dg NULL: its
 * termination, reason and node only). Keeps its restart's id when known. */
static void first_of(struct krc_incident *x, const struct krc_restart *r,
                     const struct krc_report *rep, const struct krc_diagnosis *dg)
{
    struct krc_incident_facts f;
    int64_t id = x->first.id;

    facts_of(r, rep, dg, &f);
    memset(&x->first, 0, sizeof(x->first));
    x->first.id = id;
    x->first.has_exit_code = f.has_exit_code;
    x->first.exit_code = f.exit_code;
    x->first.signal = f.signal;
    x->first.has_reason = f.reason[0] != '\0';
    snprintf(x->first.reason, sizeof(x->first.reason), "%s", f.reason);
    x->first.log_collected = rep != NULL && rep->log != NULL && rep->log_len > 0;
    snprintf(x->first_node, sizeof(x->first_node), "%s", f.node);
    krc_incident_keep_log(rep != NULL ? (const char *)rep->log : NULL,
                          rep != NULL ? rep->log_len : 0, x->first_log, sizeof(x->first_log));
    x->first_diagnosed = dg != NULL;
    if (dg != NULL) {
        x->first.cause = dg->cause;
        x->first.confidence = dg->confidence;
    }
}

void krc_route_incident_settle(struct krc_sender *n, const struct krc_route_plan *plan,
                               const struct krc_restart *r, const struct krc_report *rep,
                               const struct krc_diagnosis *dg, enum krc_policy_decision decision,
                               const struct krc_sender_message *msg)
{
    struct krc_incident *x;
    int posted = (decision == KRC_POLICY_ALERT || decision == KRC_POLICY_THREAD) && msg != NULL &&
                 msg->body != NULL;

    if (plan->incident == 0 || plan->repeat) {
        return;
    }
    pthread_mutex_lock(&n->lock);
    x = krc_incident_by_seq(&n->incidents, plan->incident);
    if (x != NULL) {
        if (dg != NULL) {
            x->cause = dg->cause; /* the incident's: its first alert's full diagnosis */
        }
        first_of(x, r, rep, dg);
        snprintf(x->first_pod, sizeof(x->first_pod), "%s", r->pod);
        x->alerted = posted;
        x->n_dests = 0;
        x->unsettled = 0;
        for (const struct krc_sender_message *m = posted ? msg : NULL;
             m != NULL && m->body != NULL && x->n_dests < KRC_INCIDENT_MAX_DESTS; m = m->next) {
            x->dests[x->n_dests] = m->dest;
            snprintf(x->dest_keys[x->n_dests], sizeof(x->dest_keys[0]), "%s", m->destination);
            x->n_dests++;
            x->unsettled++;
            if (x->thread_key[0] == '\0') {
                snprintf(x->thread_key, sizeof(x->thread_key), "%s", m->thread_key);
            }
        }
    }
    pthread_mutex_unlock(&n->lock);
}

int krc_route_incident_recorded(struct krc_sender *n, uint64_t incident, int64_t id,
                                int64_t restarts, int64_t restart_id)
{
    struct krc_incident *x;

    pthread_mutex_lock(&n->lock);
    x = krc_incident_by_seq(&n->incidents, incident);
    if (x != NULL) {
        if (id > 0 && restarts > 0) {
            /* the store's count: another leader's or worker's restarts of a joined incident
             * too. Never below the restarts routed here (counted before they are recorded,
             * some of them still on their way), unless the stored incident is another one
             * (the known one had ended: this restart opened a new one) */
            if ((x->id > 0 && x->id != id) || restarts > x->restarts) {
                x->restarts = restarts;
            }
        }
        if (id > 0) {
            x->id = id;
        }
        if (restart_id > 0) {
            x->latest_restart_id = restart_id;
            if (!x->recorded) {
                x->first.id = restart_id;
            }
        }
        x->recorded = 1;
    }
    pthread_mutex_unlock(&n->lock);
    return x != NULL;
}

void krc_route_incident_drop(struct krc_sender *n, uint64_t incident)
{
    struct krc_incident *x;

    pthread_mutex_lock(&n->lock);
    x = krc_incident_by_seq(&n->incidents, incident);
    if (x != NULL && x->id == 0 && !x->recorded && !x->ending) {
        krc_incident_remove(&n->incidents, x);
    }
    pthread_mutex_unlock(&n->lock);
}

int64_t krc_route_incident_id(struct krc_sender *n, uint64_t incident)
{
    struct krc_incident *x;
    int64_t id = 0;

    pthread_mutex_lock(&n->lock);
    x = krc_incident_by_seq(&n->incidents, incident);
    if (x != NULL) {
        id = x->id;
    }
    pthread_mutex_unlock(&n->lock);
    return id;
}

size_t krc_sender_incidents_open(struct krc_sender *n)
{
    size_t k;

    pthread_mutex_lock(&n->lock);
    k = n->incidents.n;
    pthread_mutex_unlock(&n->lock);
    return k;
}
