/* The notifier and the alert sender. It applies the alert policy
 * (alert/policy.h: where each restart goes, what is held back) with its
 * memory, says what is posted (an alert, a thread reply, a grouped storm
 * summary, a "recovered" reply) through the destination's sink
 * (alert/sink.h), and delivers it: one thread per destination, exactly-once
 * marking in the outbox, which it alone reads.
 *
 * Restarts are decided on before any collection, so a storm or a muted pod
 * costs no log fetch; nothing held back is lost: it is counted, logged and
 * recorded by the store with its decision.
 *
 * Threads: pipeline workers call krc_sender_decide(),
 * krc_sender_prepare() and krc_sender_enqueue(); one thread runs
 * krc_sender_run(), which runs one delivery thread per destination
 * (alert/sink.h). */
#ifndef KRC_SENDER_H
#define KRC_SENDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "krc/alert/policy.h"
#include "krc/alert/sink.h"
#include "krc/config/config.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/detect/filter.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/redact.h"
#include "krc/model/report.h"
#include "krc/detect/restart.h"
#include "krc/store/store.h"

struct krc_sender_options {
    const char *cluster_name;
    const char *webhook_url; /* default incoming webhook */
    const char *channel;     /* default channel (legacy webhooks, Web API) */
    const char *username;
    const char *icon_emoji;
    const char *bot_token; /* Web API mode when set */
    const char *api_url;   /* Web API base URL */
    const char *ca_file;   /* extra CA for Slack (tests) */
    long mute_seconds;
    int storm_threshold; /* more restarts than this within storm_window_s start a storm */
    long storm_window_s;
    long storm_delay_s; /* first summary this long after a storm starts */
    /* Web API: "recovered" reply after the container ran ready this long, as
     * the watch saw it (krc_sender_pod_event); 0: off */
    long recovered_after_s;
    int max_log_lines;
    const struct krc_route *routes;
    size_t n_routes;
    /* named destinations (config/destinations.h), each with its own lane */
    const struct krc_destination *destinations;
    size_t n_destinations;
    const struct krc_silence *silences;
    size_t n_silences;
    /* text patterns (KRC_PATTERN_TEXT); a matching previous log suppresses the alert */
    const struct krc_pattern *log_ignore;
    size_t n_log_ignore;
    const struct krc_redactor *redactor; /* may be NULL */
    const char *store_path; /* the outbox: the sender opens its own connection; NULL: none */
    /* how every connection of the sender to store_path is opened (cluster,
     * password file: krc_store_open_with); borrowed, may be NULL */
    const struct krc_store_options *store_options;
    unsigned store_flags; /* krc_store_open_with's flags (the daemon: KRC_STORE_DEFER_CONNECT) */
    /* called by a delivery thread after an alert or reply was accepted by Slack, with
     * the seconds since the restart was detected (for the latency histogram) */
    void (*on_delivered)(double seconds, void *userdata);
    /* called by a delivery thread after Slack accepted the alert or reply
     * of a restart (a message resumed from the outbox too, when its restart
     * is stored): leader election publishes it as handled only then. May be
     * NULL; gets on_delivered_userdata. Both callbacks run in the delivery
     * threads, one per destination, so they must be thread-safe. */
    void (*on_posted)(const char *uid, const char *container, int restart_count,
                      int64_t finished_at, const char *container_id, void *userdata);
    void *on_delivered_userdata;
    const atomic_int *cancel;
    /* The kind of sink of every destination (alert/sink.h); NULL: the
     * Slack Web API when bot_token is set, else Slack incoming webhooks. */
    const struct krc_sink_ops *sink_ops;
    /* kubernetesEvents: every restart also goes to a Kubernetes Event
     * destination (type kubernetes-event): the declared ones in
     * `destinations`, routed like any other, or, when none is declared, an
     * implicit one named KRC_SENDER_KUBE_EVENT_NAME that every restart goes
     * to whatever the routes. 0: a declared one is an error (start-up). */
    int kubernetes_events;
    /* the Kubernetes Event sink's client (borrowed) */
    const struct krc_kube_auth_config *kube_auth;
    struct krc_token_source *kube_tokens;
};

/* The implicit Kubernetes Event destination's name (outbox key
 * "dest:kubernetes-event"). */
#define KRC_SENDER_KUBE_EVENT_NAME "kubernetes-event"

struct krc_sender_stats {
    atomic_llong alerts_sent;
    atomic_llong replies_sent;
    atomic_llong summaries_sent;
    atomic_llong recovered_sent;
    atomic_llong failed;
    atomic_llong muted;
    atomic_llong grouped;
    atomic_llong silenced;
    atomic_llong log_ignored;
    atomic_llong rate_limited; /* 429s from Slack */
    atomic_llong files_uploaded;
};

struct krc_sender;

/* Options are copied (strings and arrays stay borrowed: keep them alive).
 * Caller frees with krc_sender_free. */
struct krc_sender *krc_sender_new(const struct krc_sender_options *o, struct krc_error *err);
void krc_sender_free(struct krc_sender *n);
const struct krc_sender_stats *krc_sender_stats(const struct krc_sender *n);
/* SIGHUP: take the reloadable settings of o (cluster name, default channel,
 * user name, icon, mute, storm guard, log lines, routes, silences); the rest
 * of o is ignored. The strings and arrays o points to must outlive n (the
 * daemon keeps every configuration it loaded until it exits), because
 * destinations already in use keep pointing into them. */
void krc_sender_reconfigure(struct krc_sender *n, const struct krc_sender_options *o);
/* 1 when a restart can be posted somewhere (the implicit Kubernetes Event
 * does not count). */
int krc_sender_has_destination(const struct krc_sender *n);
/* Web API mode wants the full previous log for the thread. */
int krc_sender_wants_full_log(const struct krc_sender *n);

/* Decide what happens to a restart, before collecting anything. */
enum krc_policy_decision krc_sender_decide(struct krc_sender *n, const struct krc_restart *r);

/* A message ready to be recorded in the outbox and then queued. */
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
    char uid[64];       /* the restart's identity (docs/architecture.md), for on_posted */
    char container[256];
    int restart_count;
    int64_t finished_at;
    char container_id[160];
    void *dest;  /* private */
    void *group; /* private: shared by the messages of one restart */
    /* the same restart's message to its next destination (owned, freed by
     * krc_sender_message_cleanup), or NULL: one outbox row and one
     * krc_sender_enqueue each */
    struct krc_sender_message *next;
};

/* Apply the late checks (a storm began, a log-ignore pattern matches),
 * count grouped restarts, and format the message when one is to be posted
 * (ret->body != NULL). Returns the final decision. Does not take ownership
 * of rep/diag. */
enum krc_policy_decision krc_sender_prepare(struct krc_sender *n, const struct krc_restart *r,
                                            enum krc_policy_decision d,
                                            const struct krc_report *rep,
                                            const struct krc_diagnosis *diag,
                                            struct krc_sender_message *ret);
void krc_sender_message_cleanup(struct krc_sender_message *m);

/* Queue a prepared message (takes its bodies, rep, diag and full_log);
 * outbox_id is its store row (0: not stored), marked delivered when sent. */
void krc_sender_enqueue(struct krc_sender *n, struct krc_sender_message *msg, int64_t outbox_id,
                        struct krc_report *rep, struct krc_diagnosis *diag, char *full_log,
                        size_t full_log_len);

/* Queue every outbox row still pending in `store` (from before a restart of
 * the daemon, or of an earlier leadership), oldest first: the sender is the
 * only reader of the outbox. A row whose restart `was_handled` (may be NULL;
 * gets ud) names, e.g. because the leader this replica took over from posted
 * it, is marked superseded instead (not a failure); a row whose destination is no
 * longer configured is marked failed. Logs what it did. A resumed row's
 * delivery is reported to on_posted like a new alert's when its restart is
 * stored. Rows from the first one this process wrote or was given
 * (krc_sender_enqueue) on are skipped: they are queued already, so a resume
 * may be tried again after the database failed (a late resume). Returns 0,
 * or the error of reading the pending rows (logged; nothing was queued). */
int krc_sender_resume_outbox(struct krc_sender *n, struct krc_store *store,
                             int (*was_handled)(const struct krc_store_row *row, void *ud),
                             void *ud);

/* The sender loop: posts queued alerts, storm summaries and recovered
 * replies until krc_sender_abort(). Once *options.cancel is set, owed
 * storm summaries are posted at once; the caller waits for
 * krc_sender_pending() to reach 0 (bounded), then aborts. */
void krc_sender_run(struct krc_sender *n);
void krc_sender_abort(struct krc_sender *n);
/* 1 once krc_sender_abort was called: nothing new is posted. */
int krc_sender_aborted(struct krc_sender *n);
/* Stop at once: also abort the request in flight (a hung Slack). After
 * krc_sender_abort, the loop ends when the message in flight is done. */
void krc_sender_abort_transfers(struct krc_sender *n);
/* Monotonic ms of the sender loop's last iteration (liveness). */
int64_t krc_sender_heartbeat(const struct krc_sender *n);

/* Recovery from what the watch sees (no-ops unless Web API mode with
 * recovered_after_s): the watch thread reports each detected restart
 * (before the event's state) and every pod event, DELETED ones included. */
void krc_sender_restart_seen(struct krc_sender *n, const char *uid, const char *ns,
                             const char *name, const char *container, int restart_count);
void krc_sender_pod_event(struct krc_sender *n, const struct krc_pod_info *pod, int deleted);

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
