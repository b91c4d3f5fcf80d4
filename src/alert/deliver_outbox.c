/* The deliver stage's outbox (include/krc/alert/deliver.h): the resume of
 * pending rows at start-up or take-over, the delivered marks with their
 * journal and retries, and the claims of a shared outbox. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "krc/alert/dest.h"
#include "krc/alert/deliver.h"
#include "krc/alert/sender.h"
#include "krc/store/store.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "sender_int.h"

/* An outbox row of this process's own (see first_own_outbox_id). */
void krc_deliver_note_own_outbox(struct krc_sender *n, int64_t id)
{
    long long cur = atomic_load(&n->first_own_outbox_id);

    while (id > 0 && (cur == 0 || id < cur) &&
           !atomic_compare_exchange_weak(&n->first_own_outbox_id, &cur, (long long)id)) {
    }
}

/* The destination and target of an outbox row's key: the Go tool's
 * settings' (their kind reads the key) or a named one's ("dest:NAME").
 * KRC_ENOTFOUND: the configuration no longer has it. */
int krc_deliver_row_target(struct krc_sender *n, const struct krc_store_message *m,
                           const char *channel, const struct krc_destination **ret,
                           struct krc_dest_target *t)
{
    int rc = krc_dest_target_of_key(n->env, m->destination, channel, n->o.routes, n->o.n_routes, t);

    *ret = n->env;
    if (rc == 0 && strncmp(m->destination, "dest:", 5) == 0) {
        *ret = krc_route_fixed_named(n, m->destination + 5);
        rc = *ret != NULL && krc_dest_ops(*ret) != NULL
                 ? krc_dest_target_of_key(*ret, m->destination, channel, n->o.routes, n->o.n_routes,
                                          t)
                 : 0;
    }
    return rc == 1 ? 0 : KRC_ENOTFOUND;
}

static int resume_row(struct krc_sender *n, const struct krc_store_message *m,
                      const struct krc_store_row *restart)
{
    const struct krc_destination *nd = NULL;
    struct krc_dest_target t;
    struct item *it;
    struct dest *d;
    const char *channel = m->channel != NULL && m->channel[0] != '\0' ? m->channel : NULL;

    if (krc_deliver_row_target(n, m, channel, &nd, &t) < 0) {
        return KRC_ENOTFOUND; /* the configuration no longer has that destination */
    }
    /* channel strings must outlive the item: keep them in the options or
     * routes when they match, else in the dest table's own copy */
    it = krc_calloc(1, sizeof(*it));
    if (it == NULL) {
        return KRC_ENOMEM;
    }
    it->body = krc_strdup(m->body);
    it->fallback = m->fallback != NULL ? krc_strdup(m->fallback) : NULL;
    if (it->body == NULL || (m->fallback != NULL && it->fallback == NULL)) {
        krc_deliver_item_free(it);
        return KRC_ENOMEM;
    }
    pthread_mutex_lock(&n->lock);
    d = krc_route_dest_get(n, nd, &t);
    pthread_mutex_unlock(&n->lock);
    it->kind = m->kind == KRC_STORE_KIND_REPLY       ? ITEM_REPLY
               : m->kind == KRC_STORE_KIND_RECOVERED ? ITEM_RECOVERED
               : m->kind == KRC_STORE_KIND_SUMMARY   ? ITEM_SUMMARY
                                                     : ITEM_ALERT;
    it->dest = d;
    it->outbox_id = m->id;
    it->restart_id = m->restart_id;
    if (restart != NULL) {
        (void)krc_store_row_ident(restart, &it->ident);
    }
    snprintf(it->pod_key, sizeof(it->pod_key), "%s", m->thread_key ? m->thread_key : "");
    snprintf(it->what, sizeof(it->what), "%s #%lld from before the restart of krc",
             krc_store_kind_name(m->kind), (long long)m->id);
    krc_deliver_queue(n, it);
    return 0;
}

struct resume {
    struct krc_sender *n;
    struct krc_store *store;
    int (*was_handled)(const struct krc_store_row *row, void *ud);
    void *ud;
    size_t superseded;
};

static int resume_one(const struct krc_store_message *m, void *ud)
{
    struct resume *rs = ud;
    struct krc_store_entry *ent = NULL;
    struct krc_error e;
    long long own = atomic_load(&rs->n->first_own_outbox_id);
    int rc;

    if (own > 0 && m->id >= own) {
        return 0; /* written by this process since: queued already */
    }
    /* The row's restart, when it has one: published as handled once posted,
     * and not posted at all when the leader this replica took over from did. */
    krc_error_clear(&e);
    if (m->restart_id > 0 && krc_store_get(rs->store, m->restart_id, &ent, &e) == 0 &&
        rs->was_handled != NULL && rs->was_handled(&ent->row, rs->ud)) {
        /* not a delivery failure: its own outbox state (schema 5) */
        krc_error_clear(&e);
        if (krc_store_mark_superseded(rs->store, m->id, &e) < 0) {
            krc_log(KRC_LOG_WARN,
                    "outbox message #%lld was posted by the previous leader, but its row could "
                    "not be marked superseded: %s",
                    (long long)m->id, e.msg);
        }
        rs->superseded++;
        krc_store_entry_free(ent);
        return 0;
    }
    rc = resume_row(rs->n, m, ent != NULL ? &ent->row : NULL);
    krc_store_entry_free(ent);
    if (rc == KRC_ENOTFOUND && strcmp(m->destination, "dest:" KRC_SENDER_KUBE_EVENT_NAME) == 0) {
        /* kubernetesEvents was turned off since: not left pending forever */
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: a Kubernetes Event, and kubernetesEvents is false now; "
                "marked failed, not written",
                (long long)m->id);
        krc_store_mark_attempt(rs->store, m->id, "kubernetesEvents is false", 1, NULL);
    } else if (rc == KRC_ENOTFOUND || rc == KRC_EINVAL) {
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: destination %s is no longer configured; "
                "marked failed",
                (long long)m->id, m->destination);
        krc_store_mark_attempt(rs->store, m->id, "destination no longer configured", 1, NULL);
    }
    return 0;
}

int krc_sender_resume_outbox(struct krc_sender *n, struct krc_store *store,
                             int (*was_handled)(const struct krc_store_row *row, void *ud),
                             void *ud)
{
    struct resume rs = {n, store, was_handled, ud, 0};
    size_t before = krc_sender_pending(n);
    struct krc_error e;
    int rc;

    krc_error_clear(&e);
    if ((rc = krc_store_pending(store, resume_one, &rs, &e)) < 0) {
        krc_log(KRC_LOG_ERROR, "outbox: %s", e.msg);
        return rc;
    }
    if (krc_sender_pending(n) > before) {
        krc_log(KRC_LOG_INFO, "outbox: resuming %zu undelivered notification(s)",
                krc_sender_pending(n) - before);
    }
    if (rs.superseded > 0) {
        krc_log(KRC_LOG_INFO,
                "outbox: %zu undelivered notification(s) of an earlier leadership were posted "
                "by the previous leader; not sent again",
                rs.superseded);
    }
    return 0;
}

/* Remember a failed mark for a retry; the oldest is dropped from memory
 * when the table is full (the journal still has it, if it was written).
 * Caller holds mark_lock. */
static void unmarked_add(struct krc_sender *n, int64_t id, const char *ts, int journaled)
{
    struct unmarked *u;

    if (n->n_unmarked == MAX_UNMARKED) {
        krc_log(KRC_LOG_WARN,
                "outbox message #%lld: too many delivered marks waiting for the database; "
                "left to the delivery journal",
                (long long)n->unmarked[0].outbox_id);
        n->journal_kept = 1;
        memmove(&n->unmarked[0], &n->unmarked[1], (MAX_UNMARKED - 1) * sizeof(n->unmarked[0]));
        n->n_unmarked--;
    }
    u = &n->unmarked[n->n_unmarked++];
    memset(u, 0, sizeof(*u));
    u->outbox_id = id;
    snprintf(u->ts, sizeof(u->ts), "%s", ts != NULL ? ts : "");
    u->delay_ms = UNMARKED_FIRST_RETRY_MS;
    u->next_ms = krc_clock_mono_ms() + u->delay_ms;
    u->tries = 1;
    u->journaled = journaled;
}

/* Slack accepted outbox row `id`: record it. When the database refuses,
 * the message must still not be posted again: the fact goes to the
 * delivery journal and to memory for a retry. */
void krc_deliver_mark_delivered(struct krc_sender *n, struct krc_store *store, int64_t id,
                                const char *ts, const char *what)
{
    struct krc_error se;
    struct krc_error je;
    int jrc;

    krc_error_clear(&se);
    if (krc_store_mark_delivered(store, id, ts, &se) == 0) {
        return;
    }
    if (se.code == KRC_ENOTFOUND) {
        krc_log(KRC_LOG_WARN, "%s was posted but its outbox row is gone: %s", what, se.msg);
        return;
    }
    krc_error_clear(&je);
    /* under mark_lock: the main sender loop must not clear the journal
     * between this write and the table entry */
    pthread_mutex_lock(&n->mark_lock);
    jrc = krc_store_journal_delivered(store, id, ts, &je);
    unmarked_add(n, id, ts, jrc == 0);
    pthread_mutex_unlock(&n->mark_lock);
    if (jrc == 0) {
        krc_log(KRC_LOG_ERROR,
                "%s was posted but could not be marked delivered: %s; noted in the delivery "
                "journal, retrying in %ds",
                what, se.msg, UNMARKED_FIRST_RETRY_MS / 1000);
    } else {
        krc_log(KRC_LOG_ERROR,
                "%s was posted but could not be marked delivered: %s; the delivery journal "
                "failed too (%s): retrying in %ds, and a restart of krc before that succeeds "
                "would post it again",
                what, se.msg, je.msg, UNMARKED_FIRST_RETRY_MS / 1000);
    }
}

/* Retry the due delivered marks (all of them when `all`, once). The
 * journal is removed once memory holds nothing it did not write. Main
 * sender thread, with mark_lock held. */
static void retry_unmarked_locked(struct krc_sender *n, int all)
{
    int64_t now = krc_clock_mono_ms();
    size_t i = 0;
    int had = n->n_unmarked > 0;

    while (i < n->n_unmarked) {
        struct unmarked *u = &n->unmarked[i];
        struct krc_error e;
        int rc;

        if (!all && u->next_ms > now) {
            i++;
            continue;
        }
        krc_error_clear(&e);
        rc = krc_store_mark_delivered(n->store, u->outbox_id, u->ts[0] ? u->ts : NULL, &e);
        if (rc == 0 || e.code == KRC_ENOTFOUND) {
            krc_log(KRC_LOG_INFO, "outbox message #%lld marked delivered (try %d)",
                    (long long)u->outbox_id, u->tries + 1);
        } else if (u->journaled && u->tries + 1 >= UNMARKED_MAX_TRIES) {
            krc_log(KRC_LOG_ERROR,
                    "outbox message #%lld still not marked delivered after %d tries: %s; left to "
                    "the delivery journal for the next start",
                    (long long)u->outbox_id, u->tries + 1, e.msg);
            n->journal_kept = 1;
        } else {
            u->tries++;
            u->delay_ms =
                u->delay_ms * 2 > UNMARKED_MAX_DELAY_MS ? UNMARKED_MAX_DELAY_MS : u->delay_ms * 2;
            u->next_ms = krc_clock_mono_ms() + u->delay_ms;
            krc_log(KRC_LOG_WARN,
                    "outbox message #%lld: delivered mark failed again: %s; retrying in %llds",
                    (long long)u->outbox_id, e.msg, (long long)(u->delay_ms / 1000));
            if (all || e.code == KRC_ETIMEOUT) {
                /* the database is busy: the others would wait as long */
                break;
            }
            i++;
            continue;
        }
        memmove(u, u + 1, (n->n_unmarked - i - 1) * sizeof(*u));
        n->n_unmarked--;
    }
    if (had && n->n_unmarked == 0 && !n->journal_kept) {
        struct krc_error e;
        krc_error_clear(&e);
        if (krc_store_journal_clear(n->store, &e) < 0) {
            krc_log(KRC_LOG_WARN, "delivery journal: %s", e.msg);
        }
    }
}

void krc_deliver_retry_unmarked(struct krc_sender *n, int all)
{
    pthread_mutex_lock(&n->mark_lock);
    if (n->n_unmarked > 0) {
        retry_unmarked_locked(n, all);
    }
    pthread_mutex_unlock(&n->mark_lock);
}

void krc_sender_set_fence_token(struct krc_sender *n, int64_t token)
{
    atomic_store(&n->fence_token, token);
    atomic_store(&n->fencing, 1);
}

enum krc_sender_claim_action krc_sender_claim_action(int claim_rc)
{
    if (claim_rc == 0) {
        return KRC_SENDER_CLAIM_POST;
    }
    if (claim_rc == KRC_STORE_FENCED) {
        return KRC_SENDER_CLAIM_DROP;
    }
    return KRC_SENDER_CLAIM_POST_ANYWAY;
}

/* A shared outbox: may this replica post the item's row now? 1: post,
 * 0: another leader owns it (dropped, logged). */
int krc_deliver_claimed(struct krc_sender *n, struct lane *l, const struct item *it)
{
    struct krc_error e;
    int rc;

    if (!atomic_load(&n->fencing) || l->store == NULL || it->outbox_id <= 0 ||
        !krc_store_shared(l->store)) {
        return 1;
    }
    krc_error_clear(&e);
    rc = krc_store_claim(l->store, it->outbox_id, atomic_load(&n->fence_token), &e);
    switch (krc_sender_claim_action(rc)) {
    case KRC_SENDER_CLAIM_POST:
        return 1;
    case KRC_SENDER_CLAIM_DROP:
        krc_log(KRC_LOG_INFO,
                "outbox row %lld is owned by a newer leader (or was delivered by another "
                "replica); not posted",
                (long long)it->outbox_id);
        return 0;
    case KRC_SENDER_CLAIM_POST_ANYWAY:
        break;
    }
    krc_log(KRC_LOG_DEBUG, "outbox row %lld not claimed (%s); posting it anyway",
            (long long)it->outbox_id, e.msg);
    return 1;
}
