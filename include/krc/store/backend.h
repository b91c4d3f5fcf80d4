/* The store's backends (issue 17). `store.c` owns struct krc_store and
 * dispatches every krc_store_* call of krc/store/store.h to the backend that
 * krc_store_open_with() chose from the target:
 *   postgres://... or postgresql://...  -> store_pg.c      (libpq; shared)
 *   anything else (a file, ":memory:")   -> store_sqlite.c  (SQLite; one replica)
 * Each backend is the only file that includes its library's header. The
 * semantics of every operation are those documented in krc/store/store.h; a
 * backend that cannot do something (the delivery journal on a database
 * server) returns KRC_EUNSUPPORTED with a message saying why.
 *
 * Only files of src/store/ include this header. */
#ifndef KRC_STORE_BACKEND_H
#define KRC_STORE_BACKEND_H

#include "krc/store/store.h"

/* A backend's connection (its own struct, private to its file). */
struct krc_store_be;

struct krc_store_backend {
    const char *name; /* "sqlite", "postgres" */
    /* 1: one database serves many replicas and clusters: the outbox is shared,
     * so a replica must claim a row (fence and claim below) before posting it */
    int shared;

    /* `target` is the path or URL as given; `display` is what messages may
     * name (a URL without its password), valid until close. */
    int (*open)(const char *target, const char *display, unsigned flags,
                const struct krc_store_options *o, struct krc_store_be **ret,
                struct krc_error *err);
    void (*close)(struct krc_store_be *b);

    int (*record_many)(struct krc_store_be *b, const struct krc_store_restart *rec,
                       const struct krc_store_outbox *msgs, size_t n_msgs, int64_t *ret_restart_id,
                       int64_t *ret_outbox_ids, struct krc_error *err);
    int (*find_restart)(struct krc_store_be *b, const struct krc_store_identity *id,
                        int64_t *ret_id, struct krc_error *err);
    int (*last_diagnosed)(struct krc_store_be *b, const char *pod_uid, const char *container,
                          struct krc_store_diagnosed *ret, struct krc_error *err);
    int (*set_decision)(struct krc_store_be *b, int64_t restart_id, const char *decision,
                        const char *message, struct krc_error *err);
    int (*add_outbox)(struct krc_store_be *b, int64_t restart_id,
                      const struct krc_store_outbox *msg, int64_t *ret_outbox_id,
                      struct krc_error *err);

    int (*mark_delivered)(struct krc_store_be *b, int64_t id, const char *slack_ts,
                          struct krc_error *err);
    int (*journal_delivered)(struct krc_store_be *b, int64_t id, const char *slack_ts,
                             struct krc_error *err);
    int (*journal_clear)(struct krc_store_be *b, struct krc_error *err);
    int (*mark_attempt)(struct krc_store_be *b, int64_t id, const char *error_text, int final,
                        struct krc_error *err);
    int (*mark_withdrawn)(struct krc_store_be *b, int64_t id, struct krc_error *err);
    int (*mark_superseded)(struct krc_store_be *b, int64_t id, struct krc_error *err);

    int (*fence)(struct krc_store_be *b, int64_t token, struct krc_error *err);
    int (*claim)(struct krc_store_be *b, int64_t outbox_id, int64_t token, struct krc_error *err);

    int (*pending)(struct krc_store_be *b, krc_store_message_fn fn, void *ud,
                   struct krc_error *err);
    int (*thread_ts)(struct krc_store_be *b, const char *thread_key, char **ret_ts,
                     char **ret_channel, struct krc_error *err);
    int (*list)(struct krc_store_be *b, const struct krc_store_filter *f, krc_store_row_fn fn,
                void *ud, struct krc_error *err);
    int (*get)(struct krc_store_be *b, int64_t id, struct krc_store_entry **ret,
               struct krc_error *err);
    int (*window)(struct krc_store_be *b, int64_t since, const char *cluster,
                  krc_store_window_fn fn, void *ud, struct krc_error *err);

    int (*prune)(struct krc_store_be *b, int64_t max_age_seconds, int64_t max_rows, int batch,
                 int64_t *ret_deleted, struct krc_error *err);
    void (*release_memory)(struct krc_store_be *b);
    int (*stats)(struct krc_store_be *b, struct krc_store_stats *ret, struct krc_error *err);
};

/* A stored kind or state name back to its value (store.c; both backends read
 * them): an unknown or NULL name gives KRC_STORE_KIND_ALERT / KRC_STORE_PENDING. */
enum krc_store_kind krc_store_kind_parse(const char *name);
enum krc_store_state krc_store_state_parse(const char *name);

/* SQL both backends run as written (standard SQL that SQLite and PostgreSQL read
 * alike). */
/* A restart's delivery in the history is its latest message's, the implicit
 * Kubernetes Event's (outbox destination "dest:kubernetes-event",
 * alert/sender.h) only when it has no other: that column says whether
 * someone was told. */
#define EVENT_LAST "ORDER BY o.destination = 'dest:kubernetes-event', o.id DESC LIMIT 1"
#define RESTART_COLS                                                                               \
    "r.id, r.pod_uid, r.namespace, r.pod, r.container, r.restart_count, r.workload_kind, "         \
    "r.workload_name, r.node, r.cause, r.exit_code, r.signal, r.reason, r.started_at, "            \
    "r.finished_at, r.detected_at, r.decision, r.summary, "                                        \
    "(SELECT o.state FROM outbox o WHERE o.restart_id = r.id " EVENT_LAST "), "                    \
    "(SELECT o.attempts FROM outbox o WHERE o.restart_id = r.id " EVENT_LAST "), "                 \
    "r.confidence, r.identity, r.cluster"
#define N_RESTART_COLS 23

#define OUTBOX_COLS                                                                                \
    "id, restart_id, kind, destination, channel, thread_key, body, fallback, state, attempts, "    \
    "last_error, created_at, updated_at, delivered_at, slack_ts"

/* Restarts that may be deleted: no pending notification. */
#define PRUNABLE                                                                                   \
    "NOT EXISTS (SELECT 1 FROM outbox o WHERE o.restart_id = r.id AND o.state = 'pending')"

extern const struct krc_store_backend krc_store_sqlite_backend;
extern const struct krc_store_backend krc_store_pg_backend;

#endif
