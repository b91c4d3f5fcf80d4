/* The render stage of the alert pipeline: from a restart's plan
 * (alert/route.h), its report and its diagnosis to the messages the outbox
 * records, one per destination that gets one, through each destination's
 * format (alert/sink.h). Pure: no lock, no clock (the time comes in), no
 * I/O; a failed format is logged and leaves that destination without a
 * message. */
#ifndef KRC_RENDER_H
#define KRC_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "krc/alert/policy.h"
#include "krc/alert/route.h"
#include "krc/detect/restart.h"
#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"
#include "krc/store/store.h"

/* A message ready to be recorded in the outbox and then delivered. */
struct krc_sender_message {
    enum krc_policy_decision decision;
    enum krc_store_kind kind; /* alert or reply */
    char destination[64];     /* store key: "webhook:default", "route:N", "api" */
    char channel[256];
    char thread_key[512]; /* namespace/pod */
    char what[300];       /* for logs */
    char *body;           /* owned; NULL when nothing is to be posted */
    char *fallback;       /* owned, may be NULL */
    int64_t detected_mono_ms;
    int64_t restart_id; /* set by the caller after recording (0: not recorded) */
    struct krc_restart_ident
        ident;         /* the restart's (docs/design/detection-and-identity.md), for on_posted */
    uint64_t incident; /* an incident's first alert: its handle (alert/incident.h), else 0 */
    void *dest;        /* private: the plan's destination */
    void *group;       /* private: shared by the messages of one restart (deliver) */
    /* the same restart's message to its next destination (owned, freed by
     * krc_sender_message_cleanup), or NULL: one outbox row each */
    struct krc_sender_message *next;
};

/* Render the restart's messages into *ret (the first; the others chained
 * to it) at unix time now_s, and return the final decision: the plan's,
 * except that an alert or reply whose diagnosis is intentional is held back
 * (KRC_POLICY_INTENTIONAL) unless plan->page_intentional, one whose previous
 * log matches a log-ignore pattern is silenced, and one whose every
 * destination is storming is grouped. The pipeline holds an intentional
 * restart back before routing it when the pod the watch saw already shows
 * it; render's hold is for the others: the route stage has then marked the
 * pod's mute and counted the storm arrival, which stay (the mute only holds
 * back repeats of the pod; undoing it could unmute a pod another restart
 * was just alerted for). ret->body is NULL when nothing is to be posted. Does not take
 * ownership of rep/diag. Free with krc_sender_message_cleanup. */
enum krc_policy_decision krc_render_restart(const struct krc_route_plan *plan,
                                            const struct krc_restart *r,
                                            const struct krc_report *rep,
                                            const struct krc_diagnosis *diag, int64_t now_s,
                                            struct krc_sender_message *ret);
void krc_sender_message_cleanup(struct krc_sender_message *m);

#endif
