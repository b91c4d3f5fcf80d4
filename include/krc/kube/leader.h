/* Leader election on a coordination.k8s.io/v1 Lease, with client-go's
 * semantics: a replica takes the Lease when it is free or when its holder has
 * not renewed it for leaseDuration (measured on this replica's own clock from
 * the moment it last saw the record change, so clock skew between nodes does
 * not matter); the leader renews every retryPeriod with an optimistic update
 * (metadata.resourceVersion; 409 Conflict = somebody else wrote first); a
 * leader that cannot renew for renewDeadline, or finds another holder, has
 * lost. On shutdown the leader releases the Lease so a standby takes over at
 * once.
 *
 * Expiry is judged with the observed record's spec.leaseDurationSeconds (as
 * client-go does), not with this replica's own configured duration, which
 * is only what it writes when it holds the Lease.
 *
 * Hand-over: the leader also publishes in the Lease (annotation
 * krc.io/handled-restarts) the restarts it has handled recently, so that a
 * new leader, which reports the restarts of the last startupWindow when it
 * starts watching, does not alert again what its predecessor already
 * handled. The list of the Lease as observed for a successful take-over PUT
 * is merged at every acquisition (not before a PUT that may lose a 409
 * race), and the PUT itself carries it on, so it survives this leader. */
#ifndef KRC_LEADER_H
#define KRC_LEADER_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"
#include "krc/kube/kube_client.h"
#include "krc/model/restart_ident.h"

#define KRC_LEADER_ANNOTATION "krc.io/handled-restarts"

struct krc_leader_options {
    const char *namespace; /* of the Lease */
    const char *name;      /* of the Lease */
    const char *identity;  /* this replica: POD_NAME or the host name */
    long lease_duration_s;
    long renew_deadline_s;
    long retry_period_s;
    long handled_retention_s; /* publish handled restarts this long (>= startupWindow) */
    size_t handled_max;       /* and at most this many (0: 1000) */
    /* Called on the election thread at the moment leadership is lost (another
     * holder, or no renewal within the renew deadline), before
     * krc_leader_role() says KRC_LEADER_LOST: the caller stops posting at
     * once. May be NULL. */
    void (*on_lost)(void *userdata);
    void *userdata;
};

enum krc_leader_role {
    KRC_LEADER_STANDBY = 0,
    KRC_LEADER_LEADING = 1,
    KRC_LEADER_LOST = 2, /* was leading and lost the Lease: the process should stop */
};

struct krc_leader;

/* The client is owned by the leader from here on (also on failure); strings
 * of o are copied. */
int krc_leader_new(struct krc_kube_client *client, const struct krc_leader_options *o,
                   struct krc_leader **ret, struct krc_error *err);
void krc_leader_free(struct krc_leader *l);

/* The election loop, for a thread of its own: acquires, then renews, until
 * krc_leader_stop or until leadership is lost. */
void krc_leader_run(struct krc_leader *l);
void krc_leader_stop(struct krc_leader *l);

/* After krc_leader_run returned: if still leading, publish the handled
 * restarts one last time and release the Lease (holder cleared). */
int krc_leader_release(struct krc_leader *l, struct krc_error *err);

enum krc_leader_role krc_leader_role(struct krc_leader *l);
/* 1 when leading but the last successful renewal is a renew deadline ago or
 * more: a renewal hangs (the election thread notices only once it returns);
 * the caller must stop as if the Lease were lost. */
int krc_leader_overdue(struct krc_leader *l);
/* The fencing token of this replica's leadership (a shared outbox,
 * krc_store_fence / krc_store_claim): taken from the Lease record this
 * process wrote when it acquired the Lease, as
 *   creationTimestamp (unix s) * KRC_LEADER_FENCE_EPOCH + spec.leaseTransitions
 * (a Lease without creationTimestamp: leaseTransitions alone). Every
 * acquisition by a process that did not lead (from another holder, nobody,
 * or an earlier process of the same identity) increments leaseTransitions,
 * so each leading process has a token of its own, larger than every earlier
 * one; a Lease deleted and created again starts from its new creation time,
 * still larger. 0 before the first acquisition (and without leader
 * election, where there is no struct krc_leader: pass NULL). */
#define KRC_LEADER_FENCE_EPOCH ((int64_t)1 << 20)
int64_t krc_leader_fence_token(struct krc_leader *l);
/* The current holder as last seen ("" if none), for messages. */
void krc_leader_holder(struct krc_leader *l, char *out, size_t outsz);
/* Why the last attempt failed ("" if it did not), for messages. */
void krc_leader_last_error(struct krc_leader *l, char *out, size_t outsz);

/* A restart was handled by this replica: its message was accepted by Slack,
 * or it had none to post (muted, grouped, silenced). Published in the Lease
 * from the next renewal on. It is identified by its identity
 * (model/restart_ident.h; docs/design/detection-and-identity.md, "Identity"): its
 * termination, finished_at, container_id and
 * restart_count when finished_at > 0, else restart_count alone. */
void krc_leader_note_handled(struct krc_leader *l, const struct krc_restart_ident *id);
/* 1 if this replica or a previous leader already handled it. An entry of
 * the older encoding (count only, from a Lease written by an older krc)
 * matches a restart of that count that finished no later than the entry's
 * time. */
int krc_leader_was_handled(struct krc_leader *l, const struct krc_restart_ident *id);

/* The annotation's format, exposed for tests: one "UNIXTIME UID CONTAINER
 * IDENT" line per restart, IDENT "t<finishedAt>[:<16 chars of the container
 * id>]#<restartCount>" or "c<restartCount>" when no finishedAt is known; an
 * older krc wrote
 * a bare restartCount there, which is still read. Parsing skips malformed
 * lines. */
struct krc_leader_handled {
    int64_t at;
    char key[320]; /* "uid/container/IDENT" */
};
size_t krc_leader_parse_handled(const char *text, struct krc_leader_handled *out, size_t max);
/* Add the entries of an annotation text (a predecessor's list) to this
 * replica's; returns how many were read, SIZE_MAX when out of memory. */
size_t krc_leader_merge_handled(struct krc_leader *l, const char *text);

/* MicroTime as the API writes it: 2026-12-02T19:36:00.123456Z. */
void krc_leader_format_microtime(int64_t unix_us, char *out, size_t outsz);

#endif
