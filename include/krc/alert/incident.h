/* Incidents (issue 27, docs/design/incidents.md): the restarts of one
 * workload's container with the same cause, from the first until the
 * container has run ready for the settle time (recoveredAfter).
 *
 * The table is the alert pipeline's memory of the open incidents, replacing
 * the mute per pod: the first restart of an incident is alerted; a repeat
 * (an open incident of the same namespace, workload and container whose
 * cause the repeat's cheap diagnosis gives) is counted into it and, paced,
 * told as one thread reply per incidentReplyInterval (destinations with
 * threads) and one update per incidentUpdateInterval (destinations without;
 * PagerDuty gets none: its incident stays triggered). The key of a bare pod
 * is kind "Pod" and the pod's name.
 *
 * Pure like the policy (alert/policy.h): an explicit table, the time passed
 * in, no lock (the sender's lock guards it), no I/O. Bounded: at most `cap`
 * open incidents; when full, the one whose last restart is oldest is
 * forgotten (its history stays in the store). */
#ifndef KRC_ALERT_INCIDENT_H
#define KRC_ALERT_INCIDENT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/alert/policy.h"
#include "krc/model/cause.h"
#include "krc/model/diagnosis.h"

#define KRC_INCIDENT_MAX_DESTS KRC_POLICY_MAX_ROUTED
/* The first failure's log kept to tell the first line that differs. */
#define KRC_INCIDENT_LOG_MAX 2048

/* One failure as an incident compares it (the first one is kept). */
struct krc_incident_facts {
    int has_exit_code;
    int exit_code;
    int signal;
    char reason[64]; /* "" none */
    char node[254];  /* "" unknown */
    int has_confidence;
    enum krc_confidence confidence;
};

struct krc_incident {
    uint64_t seq; /* this process's handle (> 0) */
    int64_t id;   /* the store's id, 0 until recorded (or without a store) */
    char namespace[64];
    char workload_kind[32];
    char workload_name[254];
    char container[64];
    enum krc_cause cause;       /* the incident's: its first alert's diagnosis */
    enum krc_cause first_cheap; /* its first restart's cheap diagnosis (what the watch saw) */
    char thread_key[320];       /* the first alert's thread ("namespace/pod") */
    char first_pod[254];        /* the first alert's pod (PagerDuty's dedup_key) */
    long restarts;
    int64_t first_at, last_at; /* unix s */
    int64_t last_reply_at;     /* the last message in its thread (the first alert counts) */
    int64_t last_update_at;    /* the last message to destinations without threads */
    long told_reply;           /* restarts counted in the messages so far: threads */
    long told_update;          /* ... and destinations without threads */
    /* the first failure, the one source of it: its restart's id (0 until recorded), cause,
     * confidence, termination, reason and whether its log was collected, for a repeat to
     * carry (krc_diagnosis_carry) and a paced message to compare with
     * (krc_incident_first_facts); filled by the first alert's settle from its diagnosis or by
     * a load from its stored record. first_diagnosed 0 until its diagnosis is known. */
    struct krc_diagnosis_history first;
    int first_diagnosed;
    char first_node[254];                 /* "" unknown */
    char first_log[KRC_INCIDENT_LOG_MAX]; /* the first failure's log tail, "" none */
    /* the pod awaited: the incident's latest restart's */
    char latest_uid[64];
    char latest_pod[254];
    int64_t latest_restart_id;
    /* the destinations its first alert went to: the sender's (opaque here)
     * and their outbox keys, for the resolved messages */
    void *dests[KRC_INCIDENT_MAX_DESTS];
    char dest_keys[KRC_INCIDENT_MAX_DESTS][64];
    size_t n_dests;
    int alerted;   /* its first alert was (or is being) posted */
    int recorded;  /* its first restart's record was written (or failed): id is final */
    int unsettled; /* messages of its first alert not posted or given up yet */
    int ending;    /* ended: its resolved messages are on their way */
};

struct krc_incidents {
    struct krc_incident *v;
    size_t n;
    size_t cap;      /* at most this many */
    size_t capacity; /* allocated */
    uint64_t next_seq;
};

/* KRC_ENOMEM; free with krc_incidents_cleanup (also after a failure). */
int krc_incidents_init(struct krc_incidents *t, size_t cap);
void krc_incidents_cleanup(struct krc_incidents *t);

/* The open incident of this key whose cause is `cause` (or whose first
 * restart's cheap diagnosis was `cause`), else NULL. kind/name NULL: a bare
 * pod, give kind "Pod" and the pod's name instead. */
struct krc_incident *krc_incident_match(struct krc_incidents *t, const char *ns, const char *kind,
                                        const char *name, const char *container,
                                        enum krc_cause cause);
/* The open incident of this key with the latest restart (any cause), or
 * NULL: whose first failure a repeat's cheap diagnosis carries. */
struct krc_incident *krc_incident_latest(struct krc_incidents *t, const char *ns, const char *kind,
                                         const char *name, const char *container);
struct krc_incident *krc_incident_by_seq(struct krc_incidents *t, uint64_t seq);
struct krc_incident *krc_incident_by_id(struct krc_incidents *t, int64_t id);

/* A new incident (its first restart at now_s, restarts 1, told 1, its
 * messages' clocks at now_s: the first alert is the last message). NULL
 * only when out of memory; when the table is full the incident whose last
 * restart is oldest is forgotten first. */
struct krc_incident *krc_incident_open(struct krc_incidents *t, const char *ns, const char *kind,
                                       const char *name, const char *container,
                                       enum krc_cause cause, int64_t now_s);

/* A repeat at now_s counted into inc. */
void krc_incident_count(struct krc_incident *inc, int64_t now_s);

/* Is a thread reply (reply_s) / an update (update_s) due at now_s? */
int krc_incident_reply_due(const struct krc_incident *inc, int64_t now_s, long reply_s);
int krc_incident_update_due(const struct krc_incident *inc, int64_t now_s, long update_s);
/* A thread reply / an update is told at now_s: it counts the restarts so far. */
void krc_incident_told(struct krc_incident *inc, int reply, int64_t now_s);

/* Forget inc (ended, or given up); pointers into the table move. */
void krc_incident_remove(struct krc_incidents *t, struct krc_incident *inc);

/* The first failure of inc as a paced message compares it. Pure. */
void krc_incident_first_facts(const struct krc_incident *inc, struct krc_incident_facts *ret);

/* The end of log (len bytes) that fits out[size], from a line's start ("" none). Pure. */
void krc_incident_keep_log(const char *log, size_t len, char *out, size_t size);

/* The first log line of `log` (len bytes) that the first failure's log
 * does not have, cut to fit out[size] ("" when every line is there, or a
 * log is missing). Pure. */
void krc_incident_log_differs(const char *first_log, const char *log, size_t len, char *out,
                              size_t size);

/* What differs from the first failure, for a reply or update:
 * "exit code 1 → 137; reason Error → OOMKilled; node a → b; confidence high → medium;
 * log: LINE" (only what differs; "" when nothing). log_line may be NULL. */
void krc_incident_differs(const struct krc_incident_facts *first,
                          const struct krc_incident_facts *now, const char *log_line, char *out,
                          size_t size);

/* The words a reply or update of inc starts with:
 * "Incident #12 of Deployment shop/api container app (oom_killed): 7 more restarts since
 * the last message, 20 since 03:56 UTC. Differs from the first failure: ..." */
void krc_incident_headline(const struct krc_incident *inc, long since_last, const char *differs,
                           char *out, size_t size);

#endif
