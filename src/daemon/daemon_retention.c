/* The history database of the daemon: its target and password, the first
 * connection, and retention (the pruner thread). */
#include "krc/daemon/daemon_internal.h"

#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"

/* Every connection of the daemon to its store: the cluster's rows, the
 * password file (krc_store_open_with). A PostgreSQL server that does not
 * answer yet gives a store that connects on a later call
 * (KRC_STORE_DEFER_CONNECT: returns KRC_STORE_DEFERRED, e says why). */
int krc_daemon_open_store(const struct daemon *d, unsigned flags, struct krc_store **ret,
                          struct krc_error *e)
{
    return krc_store_open_with(d->db_path, flags | d->store_flags, &d->store_opts, ret, e);
}

#define RESUME_RETRY_MS 5000

/* A shared store with leader election is pruned by the leader only (the
 * backend's advisory lock also keeps two leaders of different clusters from
 * pruning at once); a replica's own SQLite file by that replica. */
static int may_prune(struct daemon *d)
{
    return !d->shared_store || d->leader == NULL ||
           krc_leader_role(d->leader) == KRC_LEADER_LEADING;
}

/* A minute between two rounds of retention, resuming the outbox meanwhile
 * when it is due (late_resume). */
static void prune_pause(struct daemon *d, struct krc_store *st)
{
    for (int waited = 0; waited < 60000 && !d->cancel; waited += RESUME_RETRY_MS) {
        krc_daemon_late_resume(d, st);
        krc_daemon_track_drain(d, st);
        if (krc_clock_sleep_ms(RESUME_RETRY_MS, &d->cancel)) {
            break;
        }
    }
}

/* Retention without blocking the watch or the workers: small batches, each
 * its own short transaction, once a minute. */
void *krc_daemon_pruner_main(void *arg)
{
    struct daemon *d = arg;
    struct krc_store *st = NULL;
    struct krc_error e;

    krc_daemon_name_thread("krc-store");
    krc_error_clear(&e);
    if (krc_daemon_open_store(d, 0, &st, &e) < 0) {
        krc_log(KRC_LOG_ERROR, "history retention disabled: %s", e.msg);
        return NULL;
    }
    while (!d->cancel) {
        int64_t deleted = 0;
        int64_t total = 0;
        if (!may_prune(d)) {
            prune_pause(d, st);
            continue;
        }
        do {
            krc_error_clear(&e);
            deleted = 0;
            if (krc_store_prune(st, d->cfg->history_max_age_s, d->cfg->history_max_rows, 100,
                                &deleted, &e) < 0) {
                atomic_fetch_add(&d->status.store_errors, 1);
                krc_log(KRC_LOG_ERROR, "history retention: %s", e.msg);
                break;
            }
            total += deleted;
        } while (deleted > 0 && !d->cancel && !krc_clock_sleep_ms(20, &d->cancel));
        if (total > 0) {
            krc_log(KRC_LOG_INFO, "history retention: %lld old restart(s) pruned",
                    (long long)total);
        }
        prune_pause(d, st);
    }
    krc_store_close(st);
    return NULL;
}

/* dbPasswordFile must be readable at start-up (the store reads it again at
 * every connection); its password is never logged from here on. */
static int check_db_password(struct daemon *d, struct krc_error *e)
{
    const char *file = d->cfg->db_password_file;
    char *pw = NULL;

    if (file == NULL || file[0] == '\0') {
        return 0;
    }
    if (!krc_store_is_url(d->db_path)) {
        krc_log(KRC_LOG_WARN, "dbPasswordFile is set but db is not a PostgreSQL URL: ignored");
        return 0;
    }
    if (krc_config_read_db_password(file, &pw, e) < 0) {
        return -1;
    }
    krc_log_add_secret(pw);
    for (volatile char *p = pw; *p != '\0'; p++) {
        *p = 0;
    }
    krc_free(pw);
    d->store_opts.password_file = file;
    return 0;
}

/* A password in the URL's user information is never logged either (an
 * error of libpq's quoting the URL, say). */
static void register_url_password(const char *url)
{
    const char *rest = strstr(url, "://");
    size_t auth_len;
    const char *at = NULL;
    const char *colon;
    char pw[512];

    if (rest == NULL) {
        return;
    }
    rest += 3;
    auth_len = strcspn(rest, "/?#");
    for (size_t i = 0; i < auth_len; i++) {
        if (rest[i] == '@') {
            at = rest + i;
        }
    }
    colon = at != NULL ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
    if (colon != NULL && (size_t)(at - colon - 1) < sizeof(pw)) {
        snprintf(pw, sizeof(pw), "%.*s", (int)(at - colon - 1), colon + 1);
        krc_log_add_secret(pw);
        for (volatile char *p = pw; *p != '\0'; p++) {
            *p = 0;
        }
    }
}

int krc_daemon_open_history(struct daemon *d, struct krc_error *ep)
{
    struct krc_error e;
    int has_password = 0;
    int rc;

    krc_error_clear(&e);
    d->store_opts.cluster = d->cfg->cluster_name;
    if (d->cfg->db != NULL && d->cfg->db[0] != '\0') {
        snprintf(d->db_path, sizeof(d->db_path), "%s", d->cfg->db);
    } else if (krc_store_default_path(d->db_path, sizeof(d->db_path), &e) < 0) {
        krc_log(KRC_LOG_ERROR, "history unavailable: %s; restarts are alerted but not recorded",
                e.msg);
        d->db_path[0] = '\0';
        return 0;
    }
    if (check_db_password(d, ep) < 0) {
        return -1;
    }
    if (krc_store_is_url(d->db_path) &&
        krc_config_check_db_url(d->db_path, &has_password, NULL) == 0 && has_password) {
        register_url_password(d->db_path);
        krc_log(KRC_LOG_WARN, "db: the PostgreSQL URL holds a password; put it in a file named "
                              "by dbPasswordFile (e.g. a mounted Secret) instead");
    }
    {
        char *shown = krc_url_mask_password(d->db_path);
        snprintf(d->db_shown, sizeof(d->db_shown), "%s", shown != NULL ? shown : "(database)");
        krc_free(shown);
    }
    rc = krc_daemon_open_store(d, KRC_STORE_QUICK_CHECK, &d->store, &e);
    if (rc < 0) {
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_ERROR,
                "history database unavailable: %s; restarts are still detected and alerted "
                "(in memory only)",
                e.msg);
        d->store = NULL;
        d->db_path[0] = '\0';
        return 0;
    }
    snprintf(d->db_shown, sizeof(d->db_shown), "%s", krc_store_path(d->store));
    d->shared_store = krc_store_shared(d->store);
    if (rc == KRC_STORE_DEFERRED) {
        d->store_flags |= KRC_STORE_CONNECT_ON_USE;
        krc_pipeline_store_failed(&d->status, e.msg);
        krc_log(KRC_LOG_WARN,
                "history database: %s; restarts are still detected and alerted, their records "
                "are kept in memory and written once it answers",
                e.msg);
    }
    krc_log(KRC_LOG_INFO, "history database %s (%s%s)", d->db_shown,
            krc_store_backend_name(d->store),
            d->shared_store ? (d->cfg->leader_elect ? ", shared: fenced outbox"
                                                    : ", shared; without leaderElect run one "
                                                      "replica per clusterName")
                            : "");
    return 0;
}
