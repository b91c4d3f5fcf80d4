/* The route stage (include/krc/alert/route.h): the destinations of a
 * restart, the decision and the storm guard, over the sender's memory
 * (the mute per pod, the destinations' storms) under its lock. */
#include "krc/alert/dest.h"
#include "krc/alert/route.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/policy.h"
#include "krc/alert/sender.h"
#include "krc/model/report.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "sender_int.h"

/* --- routing ------------------------------------------------------------- */

struct dest *krc_route_dest_get(struct krc_sender *n, const struct krc_destination *nd,
                                const struct krc_dest_target *t)
{
    struct dest *d;
    char key[1024];

    snprintf(key, sizeof(key), "%s|%s", t->lane, t->channel ? t->channel : "");
    for (size_t i = 0; i < n->n_dests; i++) {
        if (strcmp(n->dests[i].key, key) == 0) {
            return &n->dests[i];
        }
    }
    if (n->n_dests == MAX_DESTS) {
        return &n->dests[MAX_DESTS - 1]; /* pathological: share the last slot */
    }
    d = &n->dests[n->n_dests++];
    memset(d, 0, sizeof(*d));
    if (t->channel != NULL) {
        snprintf(d->channel_buf, sizeof(d->channel_buf), "%s", t->channel);
        d->channel = d->channel_buf;
    }
    snprintf(d->key, sizeof(d->key), "%s", key);
    snprintf(d->store_key, sizeof(d->store_key), "%s", t->key);
    d->ops = nd == n->env ? n->ops : krc_dest_ops(nd);
    d->named = nd;
    d->lane = krc_deliver_lane_get(n, t, d->ops, nd);
    return d;
}

/* The destination of restart target `t` at nd. Caller holds the lock. */
static struct dest *dest_of(struct krc_sender *n, const struct krc_destination *nd,
                            const struct krc_dest_route *r)
{
    struct krc_dest_target t;

    krc_dest_target_of(nd, r, &t);
    return krc_route_dest_get(n, nd, &t);
}

#define MAX_ROUTED KRC_POLICY_MAX_ROUTED

/* The running destination of that name (NULL: one a reload added; it
 * takes effect when krc is restarted, as the reload's warning says). */
const struct krc_destination *krc_route_fixed_named(const struct krc_sender *n, const char *name)
{
    for (size_t i = 0; i < n->n_fixed; i++) {
        if (strcmp(n->fixed[i].name, name) == 0) {
            return &n->fixed[i];
        }
    }
    if (n->has_implicit_event && strcmp(name, n->implicit_event.name) == 0) {
        return &n->implicit_event;
    }
    return NULL;
}

/* The destinations of a restart (the Go tool's settings' first, then the
 * named ones, then the implicit Kubernetes Event): how many were written to
 * out (0: nothing is configured for it). Caller holds the lock. */
static size_t route(struct krc_sender *n, const struct krc_restart *r, struct dest **out)
{
    struct krc_policy_target t;
    size_t k = 0;

    if (!krc_policy_route(&n->pol, r->namespace, r->pod, r->ident.container, r->slack_channel,
                          &t)) {
        t.slack = 0;
        t.n_named = 0;
    }
    if (t.slack) {
        struct krc_dest_route dr = {t.webhook_url, t.channel, t.route};
        out[k++] = dest_of(n, n->env, &dr);
    }
    for (size_t i = 0; i < t.n_named; i++) {
        const struct krc_destination *nd =
            krc_route_fixed_named(n, n->o.destinations[t.named[i]].name);
        if (nd != NULL && krc_dest_ops(nd) != NULL) {
            out[k++] = dest_of(n, nd, NULL);
        }
    }
    if (n->has_implicit_event) {
        out[k++] = dest_of(n, &n->implicit_event, NULL);
    }
    return k;
}

/* --- storm guard ---------------------------------------------------------- */

static struct group *group_add(struct group *g, size_t *n, const char *key)
{
    if (key == NULL || key[0] == '\0') {
        key = "(unknown)";
    }
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(g[i].key, key) == 0) {
            g[i].count++;
            return &g[i];
        }
    }
    if (*n < MAX_GROUPS) {
        snprintf(g[*n].key, sizeof(g[*n].key), "%s", key);
        g[*n].count = 1;
        g[*n].condition[0] = '\0';
        return &g[(*n)++];
    }
    g[MAX_GROUPS - 1].count++; /* folded into the last group */
    return NULL;
}

void krc_route_group(struct dest *d, const struct krc_report *rep, const struct krc_diagnosis *diag,
                     const struct krc_restart *r)
{
    char wl[512];
    const char *ns = rep != NULL && rep->namespace ? rep->namespace : r ? r->namespace : "";
    const char *pod = rep != NULL && rep->name ? rep->name : r ? r->pod : "";
    const char *node = rep != NULL && rep->node_name ? rep->node_name : r ? r->node : NULL;
    const char *container = diag != NULL && diag->container ? diag->container
                            : r != NULL                     ? r->ident.container
                                                            : "";
    const char *cause = diag != NULL ? krc_cause_name(diag->cause) : "unknown";
    struct group *ng;

    if (rep != NULL && rep->workload_kind != NULL) {
        snprintf(wl, sizeof(wl), "%s %s/%s", rep->workload_kind, ns,
                 rep->workload_name ? rep->workload_name : "");
    } else {
        snprintf(wl, sizeof(wl), "Pod %s/%s", ns, pod);
    }
    ng = group_add(d->by_node, &d->n_by_node, node);
    if (ng != NULL && rep != NULL && rep->node.present) {
        /* a collected report saw the node: its failure names the storm's cause */
        char detail[8];
        krc_alert_node_state(rep, ng->condition, sizeof(ng->condition), detail, sizeof(detail));
    }
    group_add(d->by_workload, &d->n_by_workload, wl);
    group_add(d->by_cause, &d->n_by_cause, cause);
    if (d->n_examples < MAX_EXAMPLES) {
        struct example *x = &d->examples[d->n_examples++];
        snprintf(x->namespace, sizeof(x->namespace), "%s", ns);
        snprintf(x->pod, sizeof(x->pod), "%s", pod);
        snprintf(x->container, sizeof(x->container), "%s", container);
        snprintf(x->cause, sizeof(x->cause), "%s", cause);
        snprintf(x->node, sizeof(x->node), "%s", node ? node : "");
        x->restart_count = diag != NULL ? diag->restart_count : r ? r->ident.restart_count : 0;
    }
    d->grouped_total++;
    d->storm_total++;
}

/* Count an arrival; start a storm when the window holds too many. Caller
 * holds the lock. Pending, unsent alerts of this destination are folded
 * into the summary so a burst never becomes a flood. */
static void storm_arrival(struct krc_sender *n, struct dest *d, int64_t now_ms)
{
    if (!krc_policy_storm_arrival(&n->pol, &d->storm, now_ms)) {
        return;
    }
    d->storm_total = 0;
    krc_log(KRC_LOG_WARN,
            "alert storm: more than %d restarts within %lds for one destination (%s); grouping "
            "further restarts into a summary%s",
            n->pol.storm_threshold, n->pol.storm_window_s, d->store_key,
            krc_dest_is_event(d) ? " (a Kubernetes Event has none: grouped restarts get no Event)"
                                 : "");
    /* withdraw queued alerts of this destination */
    for (struct item *it = d->lane->head; it != NULL; it = it->next) {
        if (it->dest == d && (it->kind == ITEM_ALERT || it->kind == ITEM_REPLY)) {
            /* Not posted: counted into the summary. The item stays queued as
             * WITHDRAWN so the sender settles its outbox row (it must not be
             * resent after a restart of krc). */
            krc_route_group(d, it->rep, it->diag, NULL);
            atomic_fetch_add(&n->stats.grouped, 1);
            krc_log(KRC_LOG_INFO, "%s withdrawn: grouped into the storm summary", it->what);
            it->kind = ITEM_WITHDRAWN;
        }
    }
}

/* The plan's view of destination d. Caller holds the lock. */
static void plan_dest(const struct krc_sender *n, struct dest *d, struct krc_plan_dest *pd)
{
    memset(pd, 0, sizeof(*pd));
    pd->dest = d;
    pd->ops = d->ops;
    snprintf(pd->store_key, sizeof(pd->store_key), "%s", d->store_key);
    pd->channel = d->channel;
    /* the implicit Event's name says nothing its "Kubernetes Event" does
     * not; the Go tool's settings have none */
    pd->name = d->named != NULL && !d->named->implicit && d->named != &n->implicit_event
                   ? d->named->name
                   : NULL;
    pd->is_event = krc_dest_is_event(d);
    pd->storming = d->storm.active != 0;
    pd->reply = !pd->is_event && (d->named == n->env ? n->threads : krc_dest_threads(d->named));
}

/* --- incidents ------------------------------------------------------------- */

/* The incident key of r: the workload inc names, else the pod. */
static void incident_key(const struct krc_restart *r, const struct krc_route_incident *inc,
                         const char **kind, const char **name)
{
    krc_workload_or_pod(inc != NULL ? inc->workload_kind : NULL,
                        inc != NULL ? inc->workload_name : NULL, r->pod, kind, name);
}

/* Count r into its open incident, or open one. Caller holds the lock. NULL: out of memory
 * (the restart is routed as an alert, with no incident). */
static struct krc_incident *incident_of(struct krc_sender *n, const struct krc_restart *r,
                                        const struct krc_route_incident *inc, int64_t now,
                                        int *ret_repeat)
{
    enum krc_cause cause = inc != NULL ? inc->cause : KRC_CAUSE_UNKNOWN;
    const char *kind;
    const char *name;
    struct krc_incident *x;

    incident_key(r, inc, &kind, &name);
    x = krc_incident_match(&n->incidents, r->namespace, kind, name, r->ident.container, cause);
    *ret_repeat = 0;
    if (x != NULL) {
        krc_incident_count(x, now);
        /* an incident none of whose restarts was alerted yet (silenced, held back): this
         * one is its first alert */
        *ret_repeat = x->alerted;
    } else {
        x = krc_incident_open(&n->incidents, r->namespace, kind, name, r->ident.container, cause,
                              now);
        if (x == NULL) {
            return NULL;
        }
        snprintf(x->first_pod, sizeof(x->first_pod), "%s", r->pod);
    }
    snprintf(x->latest_uid, sizeof(x->latest_uid), "%s", r->ident.uid);
    snprintf(x->latest_pod, sizeof(x->latest_pod), "%s", r->pod);
    return x;
}

/* A repeat of incident x with muteSeconds > 0: which destinations a message is due to
 * (the others held). KRC_POLICY_THREAD when one is, else KRC_POLICY_MUTED. Caller holds the
 * lock. */
static enum krc_policy_decision pace_repeat(struct krc_sender *n, struct krc_incident *x,
                                            struct krc_route_plan *plan, int64_t now)
{
    int reply_due = krc_incident_reply_due(x, now, n->o.incident_reply_interval_s);
    int update_due = krc_incident_update_due(x, now, n->o.incident_update_interval_s);
    int replied = 0;
    int updated = 0;

    for (size_t i = 0; i < plan->n_dests; i++) {
        struct krc_plan_dest *pd = &plan->dests[i];
        const struct dest *d = pd->dest;
        if (pd->reply) {
            pd->held = !reply_due;
            replied |= reply_due;
        } else {
            pd->held = !update_due || krc_dest_no_incident_updates(d->named);
            updated |= !pd->held;
        }
        pd->storming = 0; /* a repeat is no storm arrival: its destinations' storms are not
                           * asked; a storm that is on withdraws the message (deliver) */
    }
    /* the counts as told before this message: taken now, under the lock, before another
     * repeat's message is told */
    plan->replied = replied;
    plan->updated = updated;
    plan->since_last_reply = x->restarts - x->told_reply;
    plan->since_last_update = x->restarts - x->told_update;
    if (replied) {
        krc_incident_told(x, 1, now);
    }
    if (updated) {
        krc_incident_told(x, 0, now);
    }
    return replied || updated ? KRC_POLICY_THREAD : KRC_POLICY_MUTED;
}

/* The decision for r and its destinations dests[n_dests]. Caller holds the
 * lock. */
static enum krc_policy_decision decide(struct krc_sender *n, const struct krc_restart *r,
                                       struct dest **dests, size_t n_dests, struct krc_incident *x,
                                       int repeat, struct krc_route_plan *plan, int64_t now)
{
    size_t storming = 0;

    if (n_dests == 0) {
        return KRC_POLICY_NO_DESTINATION;
    }
    if (krc_policy_silenced(&n->pol, r->namespace, r->pod, r->ident.container, now)) {
        atomic_fetch_add(&n->stats.silenced, 1);
        return KRC_POLICY_SILENCED;
    }
    if (x != NULL && repeat && n->pol.mute_seconds > 0) {
        enum krc_policy_decision d = pace_repeat(n, x, plan, now);
        if (d == KRC_POLICY_MUTED) {
            atomic_fetch_add(&n->stats.muted, 1);
        }
        return d;
    }
    /* the storm guard is per destination: grouped when every one of them
     * is in a storm (the others get the alert; the storming ones count it
     * into their summaries) */
    for (size_t i = 0; i < n_dests; i++) {
        storm_arrival(n, dests[i], krc_clock_mono_ms());
        storming += dests[i]->storm.active != 0;
    }
    if (storming == n_dests) {
        return KRC_POLICY_GROUPED;
    }
    if (x != NULL) {
        x->alerted = 1; /* its repeats are paced from now (muted until the first alert is
                         * known not to be posted: krc_route_incident_settle) */
    }
    return KRC_POLICY_ALERT;
}

enum krc_policy_decision krc_route_restart_in(struct krc_sender *n, const struct krc_restart *r,
                                              const struct krc_route_incident *inc,
                                              struct krc_route_plan *plan)
{
    struct dest *dests[MAX_ROUTED];
    size_t n_dests;
    enum krc_policy_decision d;
    int64_t now = krc_clock_now();
    struct krc_incident *x;
    int repeat = 0;

    memset(plan, 0, sizeof(*plan));
    pthread_mutex_lock(&n->lock);
    n_dests = route(n, r, dests);
    for (size_t i = 0; i < n_dests; i++) {
        plan_dest(n, dests[i], &plan->dests[i]);
    }
    plan->n_dests = n_dests;
    x = incident_of(n, r, inc, now, &repeat);
    d = decide(n, r, dests, n_dests, x, repeat, plan, now);
    for (size_t i = 0; i < n_dests && !(repeat && n->pol.mute_seconds > 0); i++) {
        plan->dests[i].storming = dests[i]->storm.active != 0; /* as decide left them */
    }
    if (x != NULL) {
        plan->incident = x->seq;
        plan->repeat = repeat;
        if (repeat && n->pol.mute_seconds > 0 && x->thread_key[0] != '\0') {
            snprintf(plan->thread_key, sizeof(plan->thread_key), "%s", x->thread_key);
        }
    }
    krc_render_format_options(n, NULL, &plan->format);
    pthread_mutex_unlock(&n->lock);
    plan->decision = d;
    plan->collect =
        d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD || d == KRC_POLICY_NO_DESTINATION;
    plan->wants_full_log = n->threads && (d == KRC_POLICY_ALERT || d == KRC_POLICY_THREAD);
    if (d == KRC_POLICY_THREAD && plan->repeat) {
        /* a paced repeat: the log file goes into the thread only with a reply */
        plan->wants_full_log = plan->wants_full_log && plan->replied;
    }
    plan->log_ignore = n->o.log_ignore;
    plan->n_log_ignore = n->o.n_log_ignore;
    return d;
}

enum krc_policy_decision krc_route_amend(struct krc_sender *n, const struct krc_restart *r,
                                         struct krc_route_plan *plan)
{
    struct dest *dests[MAX_ROUTED];
    size_t n_dests;
    enum krc_policy_decision d = KRC_POLICY_NO_DESTINATION;

    memset(plan, 0, sizeof(*plan));
    pthread_mutex_lock(&n->lock);
    n_dests = route(n, r, dests);
    if (n_dests > 0) {
        d = krc_policy_silenced(&n->pol, r->namespace, r->pod, r->ident.container, krc_clock_now())
                ? KRC_POLICY_SILENCED
            : n->threads ? KRC_POLICY_THREAD
                         : KRC_POLICY_ALERT;
    }
    for (size_t i = 0; i < n_dests; i++) {
        plan_dest(n, dests[i], &plan->dests[i]);
        plan->dests[i].storming = 0; /* an amendment is not counted into a storm */
    }
    plan->n_dests = n_dests;
    krc_render_format_options(n, NULL, &plan->format);
    pthread_mutex_unlock(&n->lock);
    plan->decision = d;
    plan->collect = 1;
    plan->page_intentional = 1; /* the amended diagnosis is a device failure */
    return d;
}

/* --- one alert per sandbox change ------------------------------------------ */

int krc_route_sandbox_alerted(struct krc_sender *n, const struct krc_restart *r, char *alerted,
                              size_t size)
{
    int64_t at = r->ident.finished_at > 0 ? r->ident.finished_at : r->detected_at;
    struct sandbox_mark *slot = NULL;
    int found = 0;

    if (!krc_restart_ident_known(&r->ident)) {
        return 0; /* no uid to tell the pod's change by */
    }
    pthread_mutex_lock(&n->lock);
    for (size_t i = 0; i < n->n_sandbox; i++) {
        struct sandbox_mark *m = &n->sandbox[i];
        int64_t gap = m->stopped_at > at ? m->stopped_at - at : at - m->stopped_at;
        if (strcmp(m->uid, r->ident.uid) == 0 && gap <= KRC_ROUTE_SANDBOX_SECONDS) {
            snprintf(alerted, size, "%s", m->container);
            found = 1;
            break;
        }
        if (slot == NULL || m->stopped_at < slot->stopped_at) {
            slot = m; /* the oldest, replaced when the table is full */
        }
    }
    if (!found) {
        if (n->n_sandbox < MAX_SANDBOX_MARKS) {
            slot = &n->sandbox[n->n_sandbox++];
        }
        snprintf(slot->uid, sizeof(slot->uid), "%s", r->ident.uid);
        snprintf(slot->container, sizeof(slot->container), "%s", r->ident.container);
        slot->stopped_at = at;
    } else {
        atomic_fetch_add(&n->stats.muted, 1);
    }
    pthread_mutex_unlock(&n->lock);
    return found;
}

const char *krc_route_ignored(const struct krc_config *cfg, const struct krc_restart_delta *d)
{
    if (d->pod->ignore) {
        return "restart ignored: pod has annotation krc.io/ignore=true";
    }
    if (krc_restart_pod_total(d->pod) > cfg->ignore_restart_count) {
        return "restart ignored: pod restart count exceeds IGNORE_RESTART_COUNT";
    }
    if (cfg->ignore_restarts_with_exit_code_zero && d->container->has_last_terminated &&
        d->container->last_exit_code == 0) {
        return "restart ignored: exit code 0 (IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO)";
    }
    return NULL;
}
