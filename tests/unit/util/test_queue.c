/* Bounded MPMC queue: order, limits, timeouts, close, and real threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/queue.h"

#define ITEM(n) ((void *)(uintptr_t)(n))
#define NUM(p) ((uintptr_t)(p))

static void test_fifo_and_length(void **state)
{
    struct krc_queue q;
    void *it = NULL;
    (void)state;

    assert_int_equal(krc_queue_init(&q, 4), 0);
    assert_int_equal(krc_queue_length(&q), 0);
    for (uintptr_t i = 1; i <= 4; i++) {
        assert_int_equal(krc_queue_push(&q, ITEM(i), 0), 0);
        assert_int_equal(krc_queue_length(&q), i);
    }
    /* full: a zero timeout fails at once */
    assert_int_equal(krc_queue_push(&q, ITEM(5), 0), KRC_ETIMEOUT);
    assert_int_equal(krc_queue_length(&q), 4);
    for (uintptr_t i = 1; i <= 4; i++) {
        assert_int_equal(krc_queue_pop(&q, &it, 0), 0);
        assert_int_equal(NUM(it), i);
    }
    it = ITEM(99);
    assert_int_equal(krc_queue_pop(&q, &it, 0), KRC_ETIMEOUT);
    assert_int_equal(NUM(it), 99); /* ret_ untouched */
    krc_queue_cleanup(&q, NULL);
}

/* The ring wraps around many times without losing order. */
static void test_wraparound(void **state)
{
    struct krc_queue q;
    uintptr_t next_in = 1;
    uintptr_t next_out = 1;
    (void)state;

    assert_int_equal(krc_queue_init(&q, 3), 0);
    for (int round = 0; round < 1000; round++) {
        int n_in = 1 + round % 3;
        int n_out = 1 + (round * 7) % 3;
        for (int i = 0; i < n_in; i++) {
            if (krc_queue_push(&q, ITEM(next_in), 0) == 0) {
                next_in++;
            }
        }
        for (int i = 0; i < n_out; i++) {
            void *it;
            if (krc_queue_pop(&q, &it, 0) == 0) {
                assert_int_equal(NUM(it), next_out);
                next_out++;
            }
        }
        assert_int_equal(krc_queue_length(&q), next_in - next_out);
        assert_true(krc_queue_length(&q) <= 3);
    }
    assert_true(next_out > 1000);
    krc_queue_cleanup(&q, NULL);
}

static void test_timeouts_wait(void **state)
{
    struct krc_queue q;
    void *it;
    int64_t t0;
    int64_t el;
    (void)state;

    assert_int_equal(krc_queue_init(&q, 1), 0);
    t0 = krc_clock_mono_ms();
    assert_int_equal(krc_queue_pop(&q, &it, 120), KRC_ETIMEOUT);
    el = krc_clock_mono_ms() - t0;
    assert_true(el >= 115);
    assert_true(el < 5000);

    assert_int_equal(krc_queue_push(&q, ITEM(1), 0), 0);
    t0 = krc_clock_mono_ms();
    assert_int_equal(krc_queue_push(&q, ITEM(2), 1100), KRC_ETIMEOUT); /* > 1 s: tv_sec path */
    el = krc_clock_mono_ms() - t0;
    assert_true(el >= 1095);
    assert_true(el < 6000);
    krc_queue_cleanup(&q, NULL);
}

static int n_freed;

static void free_item(void *p)
{
    n_freed++;
    free(p);
}

static void test_close_drains_then_cancels(void **state)
{
    struct krc_queue q;
    void *it;
    int *a = malloc(sizeof(int));
    int *b = malloc(sizeof(int));
    int *c = malloc(sizeof(int));
    (void)state;

    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_int_equal(krc_queue_init(&q, 4), 0);
    assert_int_equal(krc_queue_push(&q, a, -1), 0);
    assert_int_equal(krc_queue_push(&q, b, -1), 0);
    krc_queue_close(&q);
    /* pushes fail after close; the caller keeps ownership */
    assert_int_equal(krc_queue_push(&q, c, -1), KRC_ECANCELED);
    assert_int_equal(krc_queue_push(&q, c, 0), KRC_ECANCELED);
    free(c);
    /* pops drain, even with no wait, then report the close */
    assert_int_equal(krc_queue_pop(&q, &it, 0), 0);
    assert_ptr_equal(it, a);
    free(it);
    assert_int_equal(krc_queue_pop(&q, &it, -1), 0);
    assert_ptr_equal(it, b);
    free(it);
    assert_int_equal(krc_queue_pop(&q, &it, -1), KRC_ECANCELED);
    assert_int_equal(krc_queue_pop(&q, &it, 50), KRC_ECANCELED);
    krc_queue_close(&q); /* twice is harmless */
    krc_queue_cleanup(&q, free_item);
}

static void test_cleanup_frees_items(void **state)
{
    struct krc_queue q;
    void *it;
    (void)state;

    n_freed = 0;
    assert_int_equal(krc_queue_init(&q, 4), 0);
    /* wrap the ring first so cleanup walks head..end..start */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(krc_queue_push(&q, malloc(8), 0), 0);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(krc_queue_pop(&q, &it, 0), 0);
        free(it);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(krc_queue_push(&q, malloc(8), 0), 0);
    }
    assert_int_equal(krc_queue_length(&q), 4);
    krc_queue_cleanup(&q, free_item);
    assert_int_equal(n_freed, 4);
    krc_queue_cleanup(&q, free_item); /* after cleanup: nothing more */
    assert_int_equal(n_freed, 4);
}

static void test_init_enomem(void **state)
{
    struct krc_queue q;
    (void)state;

    memset(&q, 0x5a, sizeof(q));
    krc_mem_fail_after(0);
    assert_int_equal(krc_queue_init(&q, 8), KRC_ENOMEM);
    krc_mem_fail_after(-1);
    krc_queue_cleanup(&q, free_item); /* safe after a failed init */
}

/* --- threads --------------------------------------------------------------- */

struct blocked {
    struct krc_queue *q;
    int rc;
    void *item;
    long timeout_ms;
    int push; /* 1: push item, 0: pop */
};

static void *blocked_thread(void *arg)
{
    struct blocked *b = arg;

    if (b->push) {
        b->rc = krc_queue_push(b->q, b->item, b->timeout_ms);
    } else {
        b->rc = krc_queue_pop(b->q, &b->item, b->timeout_ms);
    }
    return NULL;
}

/* close() wakes a pop and a push that wait forever. */
static void test_close_wakes_waiters(void **state)
{
    struct krc_queue empty;
    struct krc_queue full;
    struct blocked pop = {&empty, 1, NULL, -1, 0};
    struct blocked push = {&full, 1, ITEM(2), -1, 1};
    pthread_t t1;
    pthread_t t2;
    (void)state;

    assert_int_equal(krc_queue_init(&empty, 2), 0);
    assert_int_equal(krc_queue_init(&full, 1), 0);
    assert_int_equal(krc_queue_push(&full, ITEM(1), 0), 0);
    assert_int_equal(pthread_create(&t1, NULL, blocked_thread, &pop), 0);
    assert_int_equal(pthread_create(&t2, NULL, blocked_thread, &push), 0);
    krc_clock_sleep_ms(50, NULL); /* let both block; the result does not depend on it */
    krc_queue_close(&empty);
    krc_queue_close(&full);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert_int_equal(pop.rc, KRC_ECANCELED);
    assert_int_equal(push.rc, KRC_ECANCELED);
    krc_queue_cleanup(&empty, NULL);
    krc_queue_cleanup(&full, NULL);
}

/* A waiting pop gets an item pushed later; a waiting push gets room. */
static void test_waiters_get_served(void **state)
{
    struct krc_queue q;
    struct blocked pop = {&q, 1, NULL, 10000, 0};
    struct blocked push = {&q, 1, ITEM(8), 10000, 1};
    pthread_t t;
    void *it;
    (void)state;

    assert_int_equal(krc_queue_init(&q, 1), 0);
    assert_int_equal(pthread_create(&t, NULL, blocked_thread, &pop), 0);
    krc_clock_sleep_ms(20, NULL);
    assert_int_equal(krc_queue_push(&q, ITEM(7), -1), 0);
    pthread_join(t, NULL);
    assert_int_equal(pop.rc, 0);
    assert_int_equal(NUM(pop.item), 7);

    assert_int_equal(krc_queue_push(&q, ITEM(1), 0), 0);
    assert_int_equal(pthread_create(&t, NULL, blocked_thread, &push), 0);
    krc_clock_sleep_ms(20, NULL);
    assert_int_equal(krc_queue_pop(&q, &it, -1), 0);
    assert_int_equal(NUM(it), 1);
    pthread_join(t, NULL);
    assert_int_equal(push.rc, 0);
    assert_int_equal(krc_queue_pop(&q, &it, 0), 0);
    assert_int_equal(NUM(it), 8);
    krc_queue_cleanup(&q, NULL);
}

#define PRODUCERS 4
#define CONSUMERS 3
#define PER_PRODUCER 20000

struct producer {
    struct krc_queue *q;
    int id;
    int rc;
};

struct consumer {
    struct krc_queue *q;
    unsigned char *seen; /* shared; each index written by one consumer only */
    uintptr_t last[PRODUCERS];
    int order_ok;
    long got;
    int end_rc;
};

static void *producer_main(void *arg)
{
    struct producer *p = arg;

    for (uintptr_t i = 0; i < PER_PRODUCER; i++) {
        /* item: 1 + producer * PER_PRODUCER + sequence (never NULL) */
        int rc = krc_queue_push(p->q, ITEM(1 + (uintptr_t)p->id * PER_PRODUCER + i), -1);
        if (rc != 0) {
            p->rc = rc;
            return NULL;
        }
    }
    return NULL;
}

static void *consumer_main(void *arg)
{
    struct consumer *c = arg;
    void *it;
    int rc;

    c->order_ok = 1;
    while ((rc = krc_queue_pop(c->q, &it, -1)) == 0) {
        uintptr_t v = NUM(it) - 1;
        uintptr_t prod = v / PER_PRODUCER;
        uintptr_t seq = v % PER_PRODUCER;
        c->seen[v]++;
        /* each consumer sees every producer's items in increasing order */
        if (c->last[prod] != 0 && seq + 1 <= c->last[prod]) {
            c->order_ok = 0;
        }
        c->last[prod] = seq + 1;
        c->got++;
    }
    c->end_rc = rc;
    return NULL;
}

static void run_producers_consumers(int n_consumers, size_t cap)
{
    struct krc_queue q;
    pthread_t pt[PRODUCERS];
    pthread_t ct[CONSUMERS];
    struct producer pr[PRODUCERS];
    struct consumer co[CONSUMERS];
    unsigned char *seen = calloc(PRODUCERS * PER_PRODUCER, 1);
    long total = 0;

    assert_non_null(seen);
    assert_int_equal(krc_queue_init(&q, cap), 0);
    memset(co, 0, sizeof(co));
    for (int i = 0; i < n_consumers; i++) {
        co[i].q = &q;
        co[i].seen = seen;
        assert_int_equal(pthread_create(&ct[i], NULL, consumer_main, &co[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pr[i].q = &q;
        pr[i].id = i;
        pr[i].rc = 0;
        assert_int_equal(pthread_create(&pt[i], NULL, producer_main, &pr[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(pt[i], NULL);
        assert_int_equal(pr[i].rc, 0);
    }
    /* everything pushed; close: consumers drain what is left, then stop */
    krc_queue_close(&q);
    for (int i = 0; i < n_consumers; i++) {
        pthread_join(ct[i], NULL);
        assert_int_equal(co[i].end_rc, KRC_ECANCELED);
        assert_true(co[i].order_ok);
        total += co[i].got;
    }
    assert_int_equal(total, PRODUCERS * PER_PRODUCER);
    for (long i = 0; i < PRODUCERS * PER_PRODUCER; i++) {
        if (seen[i] != 1) {
            fail_msg("item %ld delivered %d times", i, seen[i]);
        }
    }
    assert_int_equal(krc_queue_length(&q), 0);
    krc_queue_cleanup(&q, NULL);
    free(seen);
}

static void test_mpmc_exactly_once(void **state)
{
    (void)state;
    run_producers_consumers(CONSUMERS, 16);
    run_producers_consumers(CONSUMERS, 1);
}

static void test_mpsc_keeps_producer_order(void **state)
{
    (void)state;
    run_producers_consumers(1, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_and_length),
        cmocka_unit_test(test_wraparound),
        cmocka_unit_test(test_timeouts_wait),
        cmocka_unit_test(test_close_drains_then_cancels),
        cmocka_unit_test(test_cleanup_frees_items),
        cmocka_unit_test(test_init_enomem),
        cmocka_unit_test(test_close_wakes_waiters),
        cmocka_unit_test(test_waiters_get_served),
        cmocka_unit_test(test_mpmc_exactly_once),
        cmocka_unit_test(test_mpsc_keeps_producer_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
