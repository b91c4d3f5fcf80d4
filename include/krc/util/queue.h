/* Bounded multi-producer/multi-consumer queue of owned pointers. */
#ifndef KRC_QUEUE_H
#define KRC_QUEUE_H

#include <pthread.h>
#include <stddef.h>

struct krc_queue {
    void **items;
    size_t cap;
    size_t head;
    size_t len;
    int closed;
    pthread_mutex_t lock;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
};

int krc_queue_init(struct krc_queue *q, size_t cap);
/* Items still queued are passed to free_item (may be NULL). */
void krc_queue_cleanup(struct krc_queue *q, void (*free_item)(void *));
/* Push, waiting up to timeout_ms for room (< 0: forever). Takes ownership on
 * success (0); KRC_ETIMEOUT when still full, KRC_ECANCELED when closed. */
int krc_queue_push(struct krc_queue *q, void *item, long timeout_ms);
/* Pop, waiting up to timeout_ms (< 0: forever). 0 and *ret_item, KRC_ETIMEOUT,
 * or KRC_ECANCELED when closed and drained. */
int krc_queue_pop(struct krc_queue *q, void **ret_item, long timeout_ms);
/* Wake everybody; pops drain what is left, pushes fail. */
void krc_queue_close(struct krc_queue *q);
size_t krc_queue_length(struct krc_queue *q);

#endif
