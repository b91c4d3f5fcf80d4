/* The deliver stage of the alert pipeline: the recorded messages of a
 * restart go to one lane per destination (its own thread, queue, sink,
 * pacing and store connection), which posts them and moves their outbox
 * rows through pending -> delivered / failed / withdrawn / superseded
 * (exactly once, with the delivery journal when the database refuses the
 * mark). It also resumes the outbox at start-up or take-over, posts the
 * storm summaries and the incidents' "resolved" messages, and calls on_posted and
 * on_delivered (alert/sender.h). */
#ifndef KRC_DELIVER_H
#define KRC_DELIVER_H

#include <stddef.h>
#include <stdint.h>

#include "krc/alert/render.h"
#include "krc/alert/route.h"
#include "krc/detect/restart.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_pod.h"
#include "krc/model/report.h"
#include "krc/store/store.h"

struct krc_sender;

/* Hand the restart's recorded messages to their destinations' lanes
 * (takes msg's bodies, rep, diag and full_log; msg is left empty).
 * r is the restart msg was rendered for; outbox_ids[k] is the outbox row of the k-th message of
 * msg's chain (0: not stored; outbox_ids may be NULL), marked delivered when sent; the first
 * destination (Slack when it is one) gets rep, diag and the log file. With post 0 (the Lease was
 * lost, or the restart was recorded already) nothing is queued. Either way the restart is counted
 * (grouped, log-ignored) and, to the destinations the plan or a storm that began since groups it
 * into, added to their storm summary. */
void krc_deliver_restart(struct krc_sender *n, const struct krc_route_plan *plan,
                         const struct krc_restart *r, struct krc_sender_message *msg,
                         const int64_t *outbox_ids, int post, struct krc_report *rep,
                         struct krc_diagnosis *diag, char *full_log, size_t full_log_len);

/* Queue every outbox row still pending in `store` (from before a restart of
 * the daemon, or of an earlier leadership), oldest first: the sender is the
 * only reader of the outbox. A row whose restart `was_handled` (may be NULL;
 * gets ud) names, e.g. because the leader this replica took over from posted
 * it, is marked superseded instead (not a failure); a row whose destination is no
 * longer configured is marked failed. Logs what it did. A resumed row's
 * delivery is reported to on_posted like a new alert's when its restart is
 * stored. Rows from the first one this process wrote or was given
 * (krc_deliver_restart) on are skipped: they are queued already, so a resume
 * may be tried again after the database failed (a late resume). Returns 0,
 * or the error of reading the pending rows (logged; nothing was queued). */
int krc_sender_resume_outbox(struct krc_sender *n, struct krc_store *store,
                             int (*was_handled)(const struct krc_store_row *row, void *ud),
                             void *ud);

/* The sender loop: posts queued alerts, storm summaries and resolved
 * messages (it ends the incidents that are over) until krc_sender_abort(). Once *options.cancel is
 * set, owed storm summaries are posted at once; the caller waits for krc_sender_pending() to reach
 * 0 (bounded), then aborts. */
void krc_sender_run(struct krc_sender *n);
void krc_sender_abort(struct krc_sender *n);
/* Stop at once: also abort the request in flight (a hung Slack). After
 * krc_sender_abort, the loop ends when the message in flight is done. */
void krc_sender_abort_transfers(struct krc_sender *n);
/* Monotonic ms of the sender loop's last iteration (liveness). */
int64_t krc_sender_heartbeat(const struct krc_sender *n);

/* Recovery from what the watch sees (alert/recovery.h: the end of incidents): the watch
 * thread reports each detected restart (before the event's state) and every pod event,
 * DELETED ones included. An event of a pod nothing waits for takes no lock. */
void krc_sender_restart_seen(struct krc_sender *n, const char *uid, const char *ns,
                             const char *name, const char *container, int restart_count);
void krc_sender_pod_event(struct krc_sender *n, const struct krc_pod_info *pod, int deleted);
/* Containers the recovery tracker holds (tests). */
size_t krc_sender_awaited(const struct krc_sender *n);

/* A shared outbox (krc_store_shared, PostgreSQL) with leader election: from
 * now on, every message with an outbox row is claimed with `token` (the
 * Lease's fencing token, krc_leader_fence_token) right before each POST
 * (krc_store_claim on the lane's connection). Call at the take-over, before
 * krc_sender_resume_outbox. Never called (without leader election, or a
 * SQLite outbox): nothing is claimed. */
void krc_sender_set_fence_token(struct krc_sender *n, int64_t token);

/* What a lane does with a message after krc_store_claim returned `claim_rc`
 * (a pure decision, exposed for tests). */
enum krc_sender_claim_action {
    KRC_SENDER_CLAIM_POST = 0,    /* claimed (0): post it */
    KRC_SENDER_CLAIM_DROP,        /* KRC_STORE_FENCED: a newer leader owns it, or another
                                   * replica delivered it: never posted here, no retry */
    KRC_SENDER_CLAIM_POST_ANYWAY, /* a database error: post it (krc keeps alerting while the
                                   * database is down; the Lease keeps a deposed leader from
                                   * posting) */
};
enum krc_sender_claim_action krc_sender_claim_action(int claim_rc);

/* Number of messages waiting to be sent. */
size_t krc_sender_pending(struct krc_sender *n);

#endif
