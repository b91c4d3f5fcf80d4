/* A restart's identity: which termination of which container of which pod
 * (docs/design/detection-and-identity.md). Detection forms it (struct
 * krc_restart's `ident`); the leader's hand-over list, the store's lookup
 * and the sender's messages take it as it is, so one restart has one shape
 * from the watch to on_posted.
 *
 * It is its pod UID and container and its termination: finished_at
 * (lastState.terminated.finishedAt) with container_id and restart_count when
 * finished_at > 0, restart_count alone when no finishedAt is known. How each
 * user encodes it (the store's identity column, the Lease's hand-over key)
 * is that user's; the fields are the same.
 *
 * The strings are fixed-size arrays, not pointers: the identity is copied
 * into every message of a restart and into items resumed from the outbox,
 * and handed to delivery threads after the restart is freed; a copy is a
 * struct assignment, with no allocation and nothing to free on any path. The sizes hold
 * what an API server writes (a UUID; a DNS-label container name of at most
 * 63; "<runtime>://<64 hex>") with room to spare; a longer value is cut
 * (krc_restart_ident_set says so). */
#ifndef KRC_RESTART_IDENT_H
#define KRC_RESTART_IDENT_H

#include <stddef.h>
#include <stdint.h>

#define KRC_RESTART_IDENT_UID_MAX 64
#define KRC_RESTART_IDENT_CONTAINER_MAX 256
#define KRC_RESTART_IDENT_CONTAINER_ID_MAX 160

struct krc_restart_ident {
    char uid[KRC_RESTART_IDENT_UID_MAX];             /* metadata.uid; "": unknown */
    char container[KRC_RESTART_IDENT_CONTAINER_MAX]; /* the container's name */
    int restart_count;                               /* its restartCount */
    int64_t finished_at; /* lastState.terminated.finishedAt (unix s), 0: unknown */
    char container_id[KRC_RESTART_IDENT_CONTAINER_ID_MAX]; /* ...containerID, "": none */
};

/* Fill *id (container_id NULL: none). 0, or 1 when a string did not fit and
 * was cut. */
int krc_restart_ident_set(struct krc_restart_ident *id, const char *uid, const char *container,
                          int restart_count, int64_t finished_at, const char *container_id);

/* 1 when the identity names a restart (uid and container set); an
 * identity left empty (a message resumed without its restart) is 0. */
int krc_restart_ident_known(const struct krc_restart_ident *id);

/* The container ID, or NULL when there is none (for the APIs that take a
 * NULL for "none"). */
const char *krc_restart_ident_container_id(const struct krc_restart_ident *id);

#endif
