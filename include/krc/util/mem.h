/* Allocation wrappers. Every allocation in krc goes through these so tests can
 * make the Nth allocation fail and prove that every error path cleans up. */
#ifndef KRC_MEM_H
#define KRC_MEM_H

#include <stddef.h>

/* alloc_size tells the compiler the size of what they return, so that
 * _FORTIFY_SOURCE=3 (__builtin_dynamic_object_size) checks copies into it. */
void *krc_malloc(size_t size) __attribute__((malloc, alloc_size(1)));
void *krc_calloc(size_t n, size_t size) __attribute__((malloc, alloc_size(1, 2)));
void *krc_realloc(void *ptr, size_t size) __attribute__((alloc_size(2)));
char *krc_strdup(const char *s);
char *krc_strndup(const char *s, size_t n);
void krc_free(void *ptr);

/* Test seam: after `n` more successful allocations, every allocation fails
 * (n < 0 disables injection). Returns the number of allocations attempted
 * since the last call, so a sweep can stop once a run needs no more. */
long krc_mem_fail_after(long n);

#endif
