/* The render stage (include/krc/alert/render.h): a restart's messages
 * from its plan, report and diagnosis through the destinations' formats;
 * and, for the lanes, the formats' settings and the storm summaries. */
#include "krc/alert/render.h"

#include <stdio.h>
#include <string.h>

#include "krc/alert/sink.h"
#include "krc/alert/format.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "sender_int.h"

/* "HEADLINE SUMMARY" in a new string (NULL: out of memory). */
static char *prefixed(const char *headline, const char *summary)
{
    size_t a = strlen(headline);
    size_t b = summary != NULL ? strlen(summary) : 0;
    char *s = krc_malloc(a + b + 2);

    if (s != NULL) {
        memcpy(s, headline, a);
        s[a] = ' ';
        if (b > 0) {
            memcpy(s + a + 1, summary, b);
        }
        s[a + 1 + b] = '\0';
    }
    return s;
}

/* The restart's message to pd: a paced message of an incident's repeat starts with the
 * incident's headline (the count since the last message, what differs from the first). */
static int format_paced(const struct krc_route_plan *plan, const struct krc_plan_dest *pd,
                        const struct krc_report *rep, const struct krc_diagnosis *diag,
                        const struct krc_alert_options *fo, struct krc_sender_message *m,
                        struct krc_error *e)
{
    const char *headline =
        pd->reply && !pd->is_event ? plan->headline_reply : plan->headline_update;
    struct krc_diagnosis d;
    int rc;

    if (!plan->repeat || headline == NULL || headline[0] == '\0') {
        return pd->ops->format_restart(rep, diag, fo, &m->body, &m->fallback, e);
    }
    d = *diag; /* the same diagnosis, its summaries prefixed (borrowed otherwise) */
    d.summary = prefixed(headline, diag->summary);
    d.summary_unquoted = prefixed(headline, diag->summary_unquoted);
    if (d.summary == NULL || d.summary_unquoted == NULL) {
        rc = krc_error_set(e, KRC_ENOMEM, "out of memory");
    } else {
        rc = pd->ops->format_restart(rep, &d, fo, &m->body, &m->fallback, e);
    }
    krc_free(d.summary);
    krc_free(d.summary_unquoted);
    return rc;
}

/* Format the message of plan destination pd into m (the decision's kind). */
static int render_one(const struct krc_route_plan *plan, const struct krc_plan_dest *pd,
                      const struct krc_restart *r, enum krc_policy_decision d,
                      const struct krc_report *rep, const struct krc_diagnosis *diag, int64_t now_s,
                      struct krc_sender_message *m)
{
    struct krc_alert_options fo = plan->format;
    struct krc_accel_note accel = r->accel;
    struct krc_error e;

    fo.now = now_s;
    if (accel.devices > 0) { /* GPU time lost, brought up to now */
        accel.lost_ms += accel.down && now_s > r->detected_at ? (now_s - r->detected_at) * 1000 : 0;
        fo.accel = &accel;
    }
    fo.channel = pd->channel;
    fo.restart = &r->ident; /* the Kubernetes Event's name */
    fo.amended = r->amend;
    /* an Event has no thread: a restart within the mute's thread window is
     * one more Event on the pod */
    m->kind = d == KRC_POLICY_THREAD && pd->reply ? KRC_STORE_KIND_REPLY : KRC_STORE_KIND_ALERT;
    snprintf(m->destination, sizeof(m->destination), "%s", pd->store_key);
    snprintf(m->channel, sizeof(m->channel), "%s", pd->channel ? pd->channel : "");
    if (plan->thread_key[0] != '\0') {
        snprintf(m->thread_key, sizeof(m->thread_key), "%s", plan->thread_key);
    } else {
        snprintf(m->thread_key, sizeof(m->thread_key), "%s/%s", r->namespace, r->pod);
    }
    m->dest = pd->dest;
    krc_error_clear(&e);
    if (format_paced(plan, pd, rep, diag, &fo, m, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the alert for %s/%s (%s): %s", r->namespace, r->pod,
                pd->store_key, e.msg);
        krc_free(m->body);
        krc_free(m->fallback);
        m->body = m->fallback = NULL;
        return -1;
    }
    snprintf(m->what, sizeof(m->what), "%s for %s/%s container %s (%s)%s%s",
             pd->is_event ? (r->amend ? "amending Kubernetes Event" : "Kubernetes Event")
             : r->amend   ? (d == KRC_POLICY_THREAD ? "amendment thread reply" : "amendment")
             : d == KRC_POLICY_THREAD ? (pd->reply ? "thread reply" : "incident update")
                                      : "alert",
             r->namespace, r->pod, diag->container ? diag->container : r->ident.container,
             krc_cause_name(diag->cause), pd->name != NULL ? " to " : "",
             pd->name != NULL ? pd->name : "");
    m->detected_mono_ms = r->detected_mono_ms;
    m->ident = r->ident;
    m->incident = plan->repeat ? 0 : plan->incident;
    m->decision = d;
    return 0;
}

/* The decision after collection: an alert whose diagnosis is intentional
 * is held back (unless they are paged); one whose log a log-ignore pattern
 * matches is silenced; one whose every destination storms is grouped. */
static enum krc_policy_decision final_decision(const struct krc_route_plan *plan,
                                               const struct krc_report *rep,
                                               const struct krc_diagnosis *diag)
{
    enum krc_policy_decision d = plan->decision;
    struct krc_policy pol;
    size_t n_post = 0;

    if (d != KRC_POLICY_ALERT && d != KRC_POLICY_THREAD) {
        return d;
    }
    if (diag != NULL && diag->intentional && !plan->page_intentional) {
        return KRC_POLICY_INTENTIONAL;
    }
    memset(&pol, 0, sizeof(pol));
    pol.log_ignore = plan->log_ignore;
    pol.n_log_ignore = plan->n_log_ignore;
    if (krc_policy_log_ignored(&pol, (const char *)rep->log, rep->log_len)) {
        return KRC_POLICY_SILENCED;
    }
    for (size_t i = 0; i < plan->n_dests; i++) {
        n_post += !plan->dests[i].storming;
    }
    return plan->n_dests > 0 && n_post == 0 ? KRC_POLICY_GROUPED : d;
}

enum krc_policy_decision krc_render_restart(const struct krc_route_plan *plan,
                                            const struct krc_restart *r,
                                            const struct krc_report *rep,
                                            const struct krc_diagnosis *diag, int64_t now_s,
                                            struct krc_sender_message *ret)
{
    enum krc_policy_decision d = final_decision(plan, rep, diag);
    struct krc_sender_message **tail = &ret->next;

    memset(ret, 0, sizeof(*ret));
    ret->decision = d;
    if (d != KRC_POLICY_ALERT && d != KRC_POLICY_THREAD) {
        return d;
    }
    for (size_t i = 0; i < plan->n_dests; i++) {
        const struct krc_plan_dest *pd = &plan->dests[i];
        /* the first message is ret itself, the others are chained to it */
        struct krc_sender_message *m;
        if (pd->storming || pd->held) {
            continue; /* counted into its storm summary by deliver; held: an incident's
                       * repeat gets no message to it now */
        }
        m = ret->body == NULL ? ret : krc_calloc(1, sizeof(*m));
        if (m == NULL) {
            krc_log(KRC_LOG_ERROR, "out of memory: alert for %s/%s to %s dropped", r->namespace,
                    r->pod, pd->store_key);
            continue;
        }
        if (render_one(plan, pd, r, d, rep, diag, now_s, m) < 0) {
            if (m != ret) {
                krc_free(m);
            } else {
                ret->dest = NULL;
            }
            continue;
        }
        if (m != ret) {
            *tail = m;
            tail = &m->next;
        }
    }
    ret->decision = d;
    return d;
}

void krc_sender_message_cleanup(struct krc_sender_message *m)
{
    struct krc_sender_message *next = m->next;

    krc_free(m->body);
    krc_free(m->fallback);
    krc_siblings_unref(m->group);
    m->body = NULL;
    m->fallback = NULL;
    m->group = NULL;
    m->next = NULL;
    while (next != NULL) {
        struct krc_sender_message *x = next;
        next = x->next;
        krc_free(x->body);
        krc_free(x->fallback);
        krc_siblings_unref(x->group);
        krc_free(x);
    }
}

void krc_render_format_options(const struct krc_sender *n, const struct dest *d,
                               struct krc_alert_options *fo)
{
    krc_alert_options_init(fo);
    fo->cluster = n->o.cluster_name != NULL && n->o.cluster_name[0] ? n->o.cluster_name : NULL;
    fo->now = krc_clock_now();
    fo->channel = d != NULL ? d->channel : NULL;
    fo->username = n->o.username != NULL && n->o.username[0] ? n->o.username : NULL;
    fo->icon = n->o.icon_emoji != NULL && n->o.icon_emoji[0] ? n->o.icon_emoji : NULL;
    fo->redactor = n->o.redactor;
    if (n->o.max_log_lines > 0) {
        fo->max_log_lines = n->o.max_log_lines;
    }
}

int krc_render_summary(struct krc_sender *n, struct dest *d, char **ret_body, long *ret_total)
{
    struct krc_alert_summary s;
    struct krc_alert_options fo;
    struct krc_alert_group nodes[MAX_GROUPS], wls[MAX_GROUPS], causes[MAX_GROUPS];
    struct krc_alert_example ex[MAX_EXAMPLES];
    struct krc_error e;
    int rc;

    memset(&s, 0, sizeof(s));
    for (size_t i = 0; i < d->n_by_node; i++) {
        nodes[i].key = d->by_node[i].key;
        nodes[i].count = (size_t)d->by_node[i].count;
        nodes[i].condition = d->by_node[i].condition[0] ? d->by_node[i].condition : NULL;
    }
    for (size_t i = 0; i < d->n_by_workload; i++) {
        wls[i].key = d->by_workload[i].key;
        wls[i].count = (size_t)d->by_workload[i].count;
        wls[i].condition = NULL;
    }
    for (size_t i = 0; i < d->n_by_cause; i++) {
        causes[i].key = d->by_cause[i].key;
        causes[i].count = (size_t)d->by_cause[i].count;
        causes[i].condition = NULL;
    }
    for (size_t i = 0; i < d->n_examples; i++) {
        const struct example *x = &d->examples[i];
        ex[i].namespace = x->namespace;
        ex[i].pod = x->pod;
        ex[i].container = x->container;
        ex[i].cause = x->cause;
        ex[i].node = x->node[0] ? x->node : NULL;
        ex[i].restart_count = x->restart_count;
    }
    s.restarts = (size_t)(d->grouped_total + d->storm.alerted_before_storm);
    s.window_seconds = (krc_clock_mono_ms() - d->storm.summary_since_ms) / 1000;
    s.alerted = (size_t)d->storm.alerted_before_storm;
    s.by_node = nodes;
    s.n_by_node = d->n_by_node;
    s.by_workload = wls;
    s.n_by_workload = d->n_by_workload;
    s.by_cause = causes;
    s.n_by_cause = d->n_by_cause;
    s.examples = ex;
    s.n_examples = d->n_examples;
    krc_render_format_options(n, d, &fo);
    krc_error_clear(&e);
    rc = d->ops->format_summary(&s, &fo, ret_body, &e);
    if (rc == KRC_EUNSUPPORTED) {
        /* a destination without summaries (a Kubernetes Event is about one
         * pod): the grouped restarts are recorded; this summary is done */
        krc_log(KRC_LOG_INFO, "%s: %ld restart(s) grouped by the storm guard get no message (%s)",
                d->named != NULL && !d->named->implicit ? d->named->name : d->ops->name,
                d->grouped_total, e.msg);
        *ret_body = NULL;
    } else if (rc < 0) {
        krc_log(KRC_LOG_ERROR, "cannot format the storm summary: %s", e.msg);
        return rc;
    }
    *ret_total = d->grouped_total;
    /* start the next summary */
    d->grouped_total = 0;
    d->n_by_node = d->n_by_workload = d->n_by_cause = 0;
    d->n_examples = 0;
    krc_policy_storm_summarised(&n->pol, &d->storm, krc_clock_mono_ms());
    return 0;
}
