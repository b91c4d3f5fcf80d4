/* Shared helpers of the fuzz targets (tests/fuzz/README.md).
 *
 * Every target defines LLVMFuzzerTestOneInput. Built with -DKRC_FUZZ=ON
 * (clang) it links libFuzzer; otherwise replay_main.c drives it over files,
 * so the regression inputs also run in the ordinary sanitizer build. A
 * broken property calls FUZZ_CHECK, which aborts: libFuzzer keeps the input
 * as a crash artefact. */
#ifndef KRC_FUZZ_H
#define KRC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The separator of the targets that take several inputs in one (a text line,
 * so that seeds made from fixtures stay readable and mutate well). */
#define FUZZ_SEP "\n#--krc-fuzz--\n"

/* Split data at FUZZ_SEP into at most max parts (the last one takes the
 * rest). Returns the number of parts (>= 1). */
size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **parts, size_t *lens,
                  size_t max);

/* A private directory for the inputs of the targets whose API takes a path
 * (made once per process, removed at exit). */
const char *fuzz_tmpdir(void);

/* Write len bytes to fuzz_tmpdir()/name; returns the path (static storage,
 * one per name slot 0..3) or NULL on failure. */
const char *fuzz_write(int slot, const char *name, const void *data, size_t len);

/* Well-formed UTF-8 (no overlongs, surrogates, values past U+10FFFF)? */
int fuzz_utf8_ok(const char *s, size_t len);

#endif
