/* The store's front: struct krc_store, the dispatch of every krc_store_*
 * call of krc/store/store.h to the backend krc_store_open_with() chose
 * (krc/store/backend.h), and what the backends share: the argument checks
 * (so both give the same validation and errors), the names of kinds and
 * states, the default path, the display form of a target and the parts of a
 * stored identity. No database library is seen here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/store/backend.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"

struct krc_store {
    const struct krc_store_backend *be;
    struct krc_store_be *b;
    char *display; /* the path, or the URL without its passwords */
};

/* ---- targets ------------------------------------------------------------------- */

int krc_store_is_url(const char *target)
{
    return target != NULL &&
           (strncmp(target, "postgres://", 11) == 0 || strncmp(target, "postgresql://", 13) == 0);
}

/* ---- open and close ------------------------------------------------------------- */

int krc_store_open_with(const char *target, unsigned flags, const struct krc_store_options *o,
                        struct krc_store **ret, struct krc_error *err)
{
    struct krc_store *s;
    int rc;

    if (target == NULL || target[0] == '\0') {
        return krc_error_set(err, KRC_EINVAL, "database path is empty");
    }
    s = krc_calloc(1, sizeof(*s));
    if (s == NULL || (s->display = krc_url_mask_password(target)) == NULL) {
        krc_free(s);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    s->be = krc_store_is_url(target) ? &krc_store_pg_backend : &krc_store_sqlite_backend;
    if ((rc = s->be->open(target, s->display, flags, o, &s->b, err)) < 0) {
        krc_free(s->display);
        krc_free(s);
        return rc;
    }
    *ret = s;
    return rc; /* 0, or KRC_STORE_DEFERRED */
}

int krc_store_open(const char *path, unsigned flags, struct krc_store **ret, struct krc_error *err)
{
    return krc_store_open_with(path, flags, NULL, ret, err);
}

void krc_store_close(struct krc_store *s)
{
    if (s == NULL) {
        return;
    }
    s->be->close(s->b);
    krc_free(s->display);
    krc_free(s);
}

const char *krc_store_path(const struct krc_store *s)
{
    return s->display;
}

const char *krc_store_backend_name(const struct krc_store *s)
{
    return s->be->name;
}

int krc_store_shared(const struct krc_store *s)
{
    return s->be->shared;
}

int krc_store_default_path(char *out, size_t outsz, struct krc_error *err)
{
    const char *k8s = getenv("KUBERNETES_SERVICE_HOST");
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    int n;

    if (k8s != NULL && k8s[0] != '\0') {
        n = snprintf(out, outsz, "%s", KRC_STORE_DEFAULT_PATH_INCLUSTER);
    } else if (xdg != NULL && xdg[0] == '/') {
        n = snprintf(out, outsz, "%s/krc/krc.db", xdg);
    } else if (home != NULL && home[0] != '\0') {
        n = snprintf(out, outsz, "%s/.local/state/krc/krc.db", home);
    } else {
        return krc_error_set(err, KRC_ENOTFOUND,
                             "no default database path: HOME and XDG_STATE_HOME are not set "
                             "(use --db FILE or KRC_DB)");
    }
    if (n < 0 || (size_t)n >= outsz) {
        return krc_error_set(err, KRC_ETOOBIG, "default database path is too long");
    }
    return 0;
}

/* ---- names ------------------------------------------------------------------------ */

static const char *const kind_names[KRC_STORE_KIND_COUNT] = {"alert", "reply", "summary",
                                                             "recovered"};
static const char *const state_names[KRC_STORE_STATE_COUNT] = {"pending", "delivered", "failed",
                                                               "withdrawn", "superseded"};

const char *krc_store_kind_name(enum krc_store_kind k)
{
    return (unsigned)k < KRC_STORE_KIND_COUNT ? kind_names[k] : "unknown";
}

const char *krc_store_state_name(enum krc_store_state st)
{
    return (unsigned)st < KRC_STORE_STATE_COUNT ? state_names[st] : "unknown";
}

int64_t krc_store_identity_container_id(const char *identity, char *out, size_t outsz)
{
    const char *first;
    const char *last;
    size_t n;

    if (outsz > 0) {
        out[0] = '\0';
    }
    /* "t<finishedAt>/<containerID>/<restartCount>"; the id may hold '/' */
    if (identity == NULL || identity[0] != 't' || (first = strchr(identity, '/')) == NULL ||
        (last = strrchr(identity, '/')) == first) {
        return identity != NULL && identity[0] == 't' ? strtoll(identity + 1, NULL, 10) : 0;
    }
    n = (size_t)(last - first - 1);
    if (outsz > 0) {
        n = n < outsz - 1 ? n : outsz - 1;
        memcpy(out, first + 1, n);
        out[n] = '\0';
    }
    return strtoll(identity + 1, NULL, 10);
}

/* ---- argument checks (both backends) -------------------------------------------- */

enum krc_store_kind krc_store_kind_parse(const char *name)
{
    for (int i = 0; i < KRC_STORE_KIND_COUNT; i++) {
        if (name != NULL && strcmp(name, krc_store_kind_name((enum krc_store_kind)i)) == 0) {
            return (enum krc_store_kind)i;
        }
    }
    return KRC_STORE_KIND_ALERT;
}

enum krc_store_state krc_store_state_parse(const char *name)
{
    for (int i = 0; i < KRC_STORE_STATE_COUNT; i++) {
        if (name != NULL && strcmp(name, krc_store_state_name((enum krc_store_state)i)) == 0) {
            return (enum krc_store_state)i;
        }
    }
    return KRC_STORE_PENDING;
}

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static int check_restart(const struct krc_store_restart *r, struct krc_error *err)
{
    if (r == NULL) {
        return krc_error_set(err, KRC_EINVAL, "no restart to record");
    }
    if (!nonempty(r->pod_uid) || !nonempty(r->container) || !nonempty(r->namespace) ||
        !nonempty(r->pod) || !nonempty(r->decision)) {
        return krc_error_set(err, KRC_EINVAL,
                             "restart record needs pod_uid, container, namespace, pod and "
                             "decision (missing %s)",
                             !nonempty(r->pod_uid)     ? "pod_uid"
                             : !nonempty(r->container) ? "container"
                             : !nonempty(r->namespace) ? "namespace"
                             : !nonempty(r->pod)       ? "pod"
                                                       : "decision");
    }
    if (r->restart_count < 0 || r->detected_at <= 0) {
        return krc_error_set(err, KRC_EINVAL,
                             "restart record of %s/%s: restart_count %d and detected_at %lld "
                             "must not be negative / must be set",
                             r->namespace, r->pod, r->restart_count, (long long)r->detected_at);
    }
    return 0;
}

/* A URL or a Slack token (xoxb-, xoxp-, xapp-...). */
static int looks_secret(const char *v)
{
    if (strstr(v, "://") != NULL) {
        return 1;
    }
    for (const char *p = v; (p = strstr(p, "x")) != NULL; p++) {
        if ((strncmp(p, "xox", 3) == 0 && p[3] != '\0' && p[4] == '-') ||
            strncmp(p, "xapp-", 5) == 0) {
            return 1;
        }
    }
    return 0;
}

static int check_outbox(const struct krc_store_outbox *m, struct krc_error *err)
{
    if (m == NULL) {
        return krc_error_set(err, KRC_EINVAL, "no notification to queue");
    }
    if ((unsigned)m->kind >= KRC_STORE_KIND_COUNT) {
        return krc_error_set(err, KRC_EINVAL, "outbox: unknown kind %d", (int)m->kind);
    }
    if (!nonempty(m->destination) || !nonempty(m->body)) {
        return krc_error_set(err, KRC_EINVAL, "outbox: %s is required",
                             nonempty(m->destination) ? "body" : "destination");
    }
    /* Webhook URLs and tokens are secrets and must not be written to disk. */
    if (looks_secret(m->destination)) {
        return krc_error_set(err, KRC_EINVAL,
                             "outbox: destination must be a configuration key such as "
                             "\"webhook:default\", not a URL or token");
    }
    return 0;
}

/* A Slack ts as the journal can hold it: printable, no space, short. */
static int valid_ts(const char *ts)
{
    for (const char *p = ts; *p != '\0'; p++) {
        if (*p <= ' ' || *p > '~') {
            return 0;
        }
    }
    return ts[0] != '\0' && strlen(ts) < 64;
}

/* ---- writing ---------------------------------------------------------------------- */

int krc_store_record(struct krc_store *s, const struct krc_store_restart *rec,
                     const struct krc_store_outbox *msg, int64_t *ret_restart_id,
                     int64_t *ret_outbox_id, struct krc_error *err)
{
    return krc_store_record_many(s, rec, msg, msg != NULL ? 1 : 0, ret_restart_id, ret_outbox_id,
                                 err);
}

int krc_store_record_many(struct krc_store *s, const struct krc_store_restart *rec,
                          const struct krc_store_outbox *msgs, size_t n_msgs,
                          int64_t *ret_restart_id, int64_t *ret_outbox_ids, struct krc_error *err)
{
    int rc;

    if ((rc = check_restart(rec, err)) < 0) {
        return rc;
    }
    if (n_msgs > 0 && msgs == NULL) {
        return krc_error_set(err, KRC_EINVAL, "no notification to queue");
    }
    for (size_t i = 0; i < n_msgs; i++) {
        if ((rc = check_outbox(&msgs[i], err)) < 0) {
            return rc;
        }
    }
    return s->be->record_many(s->b, rec, msgs, n_msgs, ret_restart_id, ret_outbox_ids, err);
}

int krc_store_find_restart(struct krc_store *s, const struct krc_store_identity *id,
                           int64_t *ret_id, struct krc_error *err)
{
    if (id == NULL || !nonempty(id->pod_uid) || !nonempty(id->container)) {
        return krc_error_set(err, KRC_EINVAL, "restart lookup needs pod_uid and container");
    }
    return s->be->find_restart(s->b, id, ret_id, err);
}

int krc_store_last_diagnosed(struct krc_store *s, const char *pod_uid, const char *container,
                             struct krc_store_diagnosed *ret, struct krc_error *err)
{
    if (!nonempty(pod_uid) || !nonempty(container)) {
        return krc_error_set(err, KRC_EINVAL,
                             "last diagnosed restart: needs pod_uid and container");
    }
    return s->be->last_diagnosed(s->b, pod_uid, container, ret, err);
}

int krc_store_set_decision(struct krc_store *s, int64_t restart_id, const char *decision,
                           const char *message, struct krc_error *err)
{
    if (!nonempty(decision)) {
        return krc_error_set(err, KRC_EINVAL, "decision is required");
    }
    return s->be->set_decision(s->b, restart_id, decision, message, err);
}

int krc_store_add_outbox(struct krc_store *s, int64_t restart_id,
                         const struct krc_store_outbox *msg, int64_t *ret_outbox_id,
                         struct krc_error *err)
{
    int rc = check_outbox(msg, err);
    return rc < 0 ? rc : s->be->add_outbox(s->b, restart_id, msg, ret_outbox_id, err);
}

int krc_store_mark_delivered(struct krc_store *s, int64_t id, const char *slack_ts,
                             struct krc_error *err)
{
    return s->be->mark_delivered(s->b, id, slack_ts, err);
}

int krc_store_journal_delivered(struct krc_store *s, int64_t id, const char *slack_ts,
                                struct krc_error *err)
{
    if (id <= 0 || (slack_ts != NULL && !valid_ts(slack_ts))) {
        return krc_error_set(err, KRC_EINVAL, "delivery journal: bad outbox id or slack ts");
    }
    return s->be->journal_delivered(s->b, id, slack_ts, err);
}

int krc_store_journal_clear(struct krc_store *s, struct krc_error *err)
{
    return s->be->journal_clear(s->b, err);
}

int krc_store_mark_attempt(struct krc_store *s, int64_t id, const char *error_text, int final,
                           struct krc_error *err)
{
    return s->be->mark_attempt(s->b, id, error_text, final, err);
}

int krc_store_mark_withdrawn(struct krc_store *s, int64_t id, struct krc_error *err)
{
    return s->be->mark_withdrawn(s->b, id, err);
}

int krc_store_mark_superseded(struct krc_store *s, int64_t id, struct krc_error *err)
{
    return s->be->mark_superseded(s->b, id, err);
}

/* ---- fencing ------------------------------------------------------------------------ */

int krc_store_fence(struct krc_store *s, int64_t token, struct krc_error *err)
{
    if (token < 0) {
        return krc_error_set(err, KRC_EINVAL, "fence: token %lld is negative", (long long)token);
    }
    return s->be->shared ? s->be->fence(s->b, token, err) : 0;
}

int krc_store_claim(struct krc_store *s, int64_t id, int64_t token, struct krc_error *err)
{
    if (id <= 0 || token < 0) {
        return krc_error_set(err, KRC_EINVAL, "claim: outbox id %lld or token %lld is out of range",
                             (long long)id, (long long)token);
    }
    return s->be->shared ? s->be->claim(s->b, id, token, err) : 0;
}

/* ---- reading ------------------------------------------------------------------------ */

int krc_store_pending(struct krc_store *s, krc_store_message_fn fn, void *ud, struct krc_error *err)
{
    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "pending: no callback");
    }
    return s->be->pending(s->b, fn, ud, err);
}

int krc_store_thread_ts(struct krc_store *s, const char *thread_key, char **ret_ts,
                        char **ret_channel, struct krc_error *err)
{
    if (thread_key == NULL) {
        return krc_error_set(err, KRC_EINVAL, "thread key is required");
    }
    return s->be->thread_ts(s->b, thread_key, ret_ts, ret_channel, err);
}

int krc_store_list(struct krc_store *s, const struct krc_store_filter *f, krc_store_row_fn fn,
                   void *ud, struct krc_error *err)
{
    struct krc_store_filter none;

    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "list: no callback");
    }
    if (f == NULL) {
        memset(&none, 0, sizeof(none));
        f = &none;
    }
    return s->be->list(s->b, f, fn, ud, err);
}

int krc_store_get(struct krc_store *s, int64_t id, struct krc_store_entry **ret,
                  struct krc_error *err)
{
    return s->be->get(s->b, id, ret, err);
}

void krc_store_entry_free(struct krc_store_entry *e)
{
    if (e == NULL) {
        return;
    }
    for (size_t i = 0; i < e->n_strings_; i++) {
        krc_free(e->strings_[i]);
    }
    krc_free(e->strings_);
    krc_free(e->messages);
    krc_free(e);
}

int krc_store_window(struct krc_store *s, int64_t since, const char *cluster,
                     krc_store_window_fn fn, void *ud, struct krc_error *err)
{
    if (fn == NULL) {
        return krc_error_set(err, KRC_EINVAL, "window: no callback");
    }
    return s->be->window(s->b, since, cluster, fn, ud, err);
}

/* ---- retention and health -------------------------------------------------------- */

int krc_store_prune(struct krc_store *s, int64_t max_age_seconds, int64_t max_rows, int batch,
                    int64_t *ret_deleted, struct krc_error *err)
{
    if (batch <= 0 || max_age_seconds < 0 || max_rows < 0) {
        return krc_error_set(err, KRC_EINVAL, "prune: batch must be > 0 and limits >= 0");
    }
    return s->be->prune(s->b, max_age_seconds, max_rows, batch, ret_deleted, err);
}

void krc_store_release_memory(struct krc_store *s)
{
    if (s != NULL) {
        s->be->release_memory(s->b);
    }
}

int krc_store_stats(struct krc_store *s, struct krc_store_stats *ret, struct krc_error *err)
{
    return s->be->stats(s->b, ret, err);
}
