#include "krc/util/mem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* -1: injection off. Atomic so that tests with threads stay well defined. */
static atomic_long fail_countdown = -1;
static atomic_long attempts = 0;

static int should_fail(void)
{
    long left;

    atomic_fetch_add(&attempts, 1);
    left = atomic_load(&fail_countdown);
    if (left < 0) {
        return 0;
    }
    if (left == 0) {
        return 1;
    }
    atomic_fetch_sub(&fail_countdown, 1);
    return 0;
}

long krc_mem_fail_after(long n)
{
    long prev = atomic_exchange(&attempts, 0);
    atomic_store(&fail_countdown, n);
    return prev;
}

void *krc_malloc(size_t size)
{
    if (should_fail()) {
        return NULL;
    }
    return malloc(size == 0 ? 1 : size);
}

void *krc_calloc(size_t n, size_t size)
{
    if (should_fail()) {
        return NULL;
    }
    return calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);
}

void *krc_realloc(void *ptr, size_t size)
{
    if (should_fail()) {
        return NULL;
    }
    return realloc(ptr, size == 0 ? 1 : size);
}

char *krc_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = krc_malloc(len + 1);

    if (p == NULL) {
        return NULL;
    }
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *krc_strdup(const char *s)
{
    return krc_strndup(s, strlen(s));
}

void krc_free(void *ptr)
{
    free(ptr);
}
