/* Leader election glue: the Lease's thread, the take-over (fence the shared
 * outbox, resume what is pending), the hand-over list of posted restarts,
 * and following the role between two signals. */
#include "krc/daemon/daemon_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/util/log.h"

/* Did this replica or its predecessor handle the stored restart? By its
 * identity as stored (finishedAt, containerID, count). */
static int resumed_was_handled(const struct krc_store_row *row, void *ud)
{
    struct daemon *d = ud;
    struct krc_restart_ident id;

    (void)krc_store_row_ident(row, &id);
    return krc_leader_was_handled(d->leader, &id);
}

/* Queue the outbox rows still pending from before (the sender reads them).
 * Without leader election at start-up. With it, only when this replica
 * becomes the leader, never on a standby: the rows were decided while an
 * earlier process of this replica led, and one the leader in between posted
 * (its hand-over list, merged at the take-over, names the restart) is marked
 * failed, not sent again. */
void krc_daemon_resume_outbox(struct daemon *d, struct krc_store *store)
{
    int loaded;
    int rc;

    /* the open incidents first: a repeat the relist finds continues its incident and
     * thread, and the end of one sends its resolved message once (issue 27) */
    loaded = krc_sender_load_incidents(d->sender, store);
    rc = krc_sender_resume_outbox(d->sender, store, d->leader != NULL ? resumed_was_handled : NULL,
                                  d);
    if ((rc < 0 || loaded < 0) && d->shared_store) {
        /* PostgreSQL down: the open incidents and the rows left pending by an earlier
         * process or leader are loaded and resumed once it answers (late_resume) */
        atomic_store(&d->resume_due, 1);
    }
}

/* The pruner thread: load the open incidents, then resume the outbox, once
 * the database answers again, if it did not when this replica started or took
 * over (a standby waits until it leads). An incident this process holds
 * already is not loaded twice, and the sender skips rows this process wrote
 * meanwhile; until both succeed, it is tried again. */
void krc_daemon_late_resume(struct daemon *d, struct krc_store *st)
{
    if (!atomic_load(&d->resume_due) ||
        (d->leader != NULL && krc_leader_role(d->leader) != KRC_LEADER_LEADING)) {
        return;
    }
    /* the incidents before the outbox (as at the take-over): a repeat seen from now on
     * continues its incident and thread instead of opening a new one */
    if (krc_sender_load_incidents(d->sender, st) < 0 ||
        krc_sender_resume_outbox(d->sender, st, d->leader != NULL ? resumed_was_handled : NULL, d) <
            0) {
        return;
    }
    atomic_store(&d->resume_due, 0);
    krc_log(KRC_LOG_INFO,
            "outbox: the history database %s answers; undelivered notifications "
            "from before are resumed",
            d->db_shown);
    if (atomic_load(&d->status.unwritten) == 0) {
        atomic_store(&d->status.store_fault, 0);
    }
}

/* A shared outbox: raise this cluster's fence to our token before anything
 * is resumed or posted. Returns 1 when a newer leader has fenced us out
 * (the caller stops as on a lost Lease). A database error is logged and
 * ignored: the Lease remains the authority, and each POST is claimed. */
static int fence_store(struct daemon *d, struct krc_store *st, int64_t token)
{
    struct krc_error e;
    int rc;

    krc_error_clear(&e);
    rc = krc_store_fence(st, token, &e);
    if (rc == KRC_STORE_FENCED) {
        krc_log(KRC_LOG_ERROR,
                "leader election: fenced: the shared outbox %s has a newer leader's fence than "
                "this replica's token %lld (a newer leader exists, or another krc writes with "
                "the same clusterName \"%s\"); stopping",
                d->db_shown, (long long)token, d->cfg->cluster_name);
        return 1;
    }
    if (rc < 0) {
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_ERROR,
                "leader election: the shared outbox could not be fenced (%s); leading anyway "
                "(the Lease decides, and every POST is claimed)",
                e.msg);
        return 0;
    }
    krc_log(KRC_LOG_INFO, "leader election: shared outbox %s fenced with token %lld", d->db_shown,
            (long long)token);
    return 0;
}

/* This replica starts leading: fence the shared outbox (PostgreSQL), give
 * the sender its token, queue what is pending. Returns 1 when fenced out. */
static int resume_after_takeover(struct daemon *d)
{
    struct krc_store *st = NULL;
    struct krc_error e;
    int64_t token = krc_leader_fence_token(d->leader);

    if (d->db_path[0] == '\0' || d->sender == NULL) {
        return 0;
    }
    krc_error_clear(&e);
    if (krc_daemon_open_store(d, 0, &st, &e) < 0) {
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_ERROR, "outbox: %s; undelivered notifications are not resumed", e.msg);
        if (d->shared_store) {
            atomic_store(&d->resume_due, 1);
        }
        if (d->shared_store) {
            krc_sender_set_fence_token(d->sender, token); /* claims still protect */
        }
        return 0;
    }
    if (d->shared_store && krc_store_shared(st)) {
        if (fence_store(d, st, token)) {
            krc_store_close(st);
            return 1;
        }
        krc_sender_set_fence_token(d->sender, token);
    }
    krc_daemon_resume_outbox(d, st);
    krc_store_close(st);
    return 0;
}

/* Slack accepted a restart's message: published in the hand-over list from
 * the next renewal on. */
void krc_daemon_on_posted(const struct krc_restart_ident *id, void *userdata)
{
    struct daemon *d = userdata;
    if (d->leader != NULL) {
        krc_leader_note_handled(d->leader, id);
    }
}

/* --- leader election ------------------------------------------------------- */

/* The election thread, the moment the Lease is lost: nothing new is posted
 * from here on (a POST already in flight may still complete: the one
 * window). What is not delivered stays pending in this replica's outbox and
 * is not sent by it unless it leads again (see resume_outbox); the next
 * leader reports those restarts from its relist. */
static void leadership_lost(void *userdata)
{
    struct daemon *d = userdata;
    atomic_store(&d->lost, 1);
    if (d->sender != NULL) {
        krc_sender_abort(d->sender);
    }
}

void *krc_daemon_leader_main(void *arg)
{
    krc_daemon_name_thread("krc-leader");
    krc_leader_run(arg);
    return NULL;
}

int krc_daemon_setup_leader(struct daemon *d, struct krc_error *err)
{
    const struct krc_config *cfg = d->cfg;
    struct krc_leader_options lo;
    struct krc_kube_client *client;
    char host[256];
    const char *ns = cfg->lease_namespace;
    const char *id = getenv("POD_NAME");

    if (ns == NULL || ns[0] == '\0') {
        ns = getenv("POD_NAMESPACE");
    }
    if (ns == NULL || ns[0] == '\0') {
        ns = d->auth.namespace; /* in-cluster namespace file, or the context's */
    }
    if (ns == NULL || ns[0] == '\0') {
        ns = "default";
    }
    if (id == NULL || id[0] == '\0') {
        if (gethostname(host, sizeof(host)) != 0) {
            return krc_error_set(err, KRC_EIO,
                                 "leader election needs an identity: set POD_NAME (no host name)");
        }
        host[sizeof(host) - 1] = '\0';
        id = host;
    }
    client = krc_kube_client_new(&d->auth, d->tokens, err);
    if (client == NULL) {
        return err->code ? err->code : KRC_ENOMEM;
    }
    krc_kube_client_set_timeout(client, (cfg->lease_renew_deadline_s * 1000) / 2);
    memset(&lo, 0, sizeof(lo));
    lo.namespace = ns;
    lo.name = cfg->lease_name;
    lo.identity = id;
    lo.lease_duration_s = cfg->lease_duration_s;
    lo.renew_deadline_s = cfg->lease_renew_deadline_s;
    lo.retry_period_s = cfg->lease_retry_period_s;
    /* a new leader reports the restarts of the last startupWindow: the
     * hand-over list must cover them */
    lo.handled_retention_s = cfg->startup_window_s + 300;
    lo.on_lost = leadership_lost;
    lo.userdata = d;
    return krc_leader_new(client, &lo, &d->leader, err);
}

/* Between two signals, with leader election: start watching once leading;
 * returns 1 when the daemon must stop (leadership lost or overdue). */
int krc_daemon_follow_leader(struct daemon *d)
{
    enum krc_leader_role role = krc_leader_role(d->leader);

    if (role == KRC_LEADER_LEADING && !d->watching) {
        krc_log(KRC_LOG_INFO, "leading: watching pods and alerting");
        if (resume_after_takeover(d)) {
            leadership_lost(d);
            return 1;
        }
        return krc_daemon_start_watches(d) < 0;
    }
    if (role == KRC_LEADER_LEADING && krc_leader_overdue(d->leader)) {
        /* a renewal hangs: past the renew deadline a standby may take the
         * Lease soon, so stop posting now */
        leadership_lost(d);
        krc_log(KRC_LOG_ERROR,
                "leader election: no renewal of the lease for %lds (renew deadline); "
                "stopping, exiting so that this replica restarts as a standby",
                d->cfg->lease_renew_deadline_s);
        return 1;
    }
    if (role == KRC_LEADER_LOST) {
        /* a fresh process starts as a clean standby */
        krc_log(KRC_LOG_ERROR, "leadership lost; exiting so that this replica restarts "
                               "as a standby");
        return 1;
    }
    return 0;
}
