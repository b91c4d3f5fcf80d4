#include "krc/util/queue.h"

#include <errno.h>
#include <time.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"

int krc_queue_init(struct krc_queue *q, size_t cap)
{
    pthread_condattr_t ca;

    q->items = krc_calloc(cap, sizeof(void *));
    if (q->items == NULL) {
        return KRC_ENOMEM;
    }
    q->cap = cap;
    q->head = 0;
    q->len = 0;
    q->closed = 0;
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->not_empty, &ca);
    pthread_cond_init(&q->not_full, &ca);
    pthread_condattr_destroy(&ca);
    return 0;
}

void krc_queue_cleanup(struct krc_queue *q, void (*free_item)(void *))
{
    if (q->items == NULL) {
        return;
    }
    while (q->len > 0) {
        void *it = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        if (free_item != NULL) {
            free_item(it);
        }
    }
    krc_free(q->items);
    q->items = NULL;
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
}

static void deadline(struct timespec *ts, long timeout_ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += timeout_ms / 1000;
    ts->tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int krc_queue_push(struct krc_queue *q, void *item, long timeout_ms)
{
    struct timespec ts;
    int rc = 0;

    if (timeout_ms >= 0) {
        deadline(&ts, timeout_ms);
    }
    pthread_mutex_lock(&q->lock);
    while (q->len == q->cap && !q->closed) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&q->not_full, &q->lock);
        } else if (pthread_cond_timedwait(&q->not_full, &q->lock, &ts) == ETIMEDOUT) {
            rc = KRC_ETIMEOUT;
            break;
        }
    }
    if (rc == 0 && q->closed) {
        rc = KRC_ECANCELED;
    }
    if (rc == 0) {
        q->items[(q->head + q->len) % q->cap] = item;
        q->len++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

int krc_queue_pop(struct krc_queue *q, void **ret_item, long timeout_ms)
{
    struct timespec ts;
    int rc = 0;

    if (timeout_ms >= 0) {
        deadline(&ts, timeout_ms);
    }
    pthread_mutex_lock(&q->lock);
    while (q->len == 0 && !q->closed) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&q->not_empty, &q->lock);
        } else if (pthread_cond_timedwait(&q->not_empty, &q->lock, &ts) == ETIMEDOUT) {
            rc = KRC_ETIMEOUT;
            break;
        }
    }
    if (rc == 0 && q->len == 0) {
        rc = KRC_ECANCELED;
    }
    if (rc == 0 || (rc == KRC_ETIMEOUT && q->len > 0)) {
        *ret_item = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        rc = 0;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

void krc_queue_close(struct krc_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}

size_t krc_queue_length(struct krc_queue *q)
{
    size_t n;
    pthread_mutex_lock(&q->lock);
    n = q->len;
    pthread_mutex_unlock(&q->lock);
    return n;
}
