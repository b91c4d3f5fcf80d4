/* A main() for the fuzz targets without libFuzzer: runs each file named on
 * the command line (a directory: each regular file in it, in name order)
 * once through LLVMFuzzerTestOneInput. A missing directory counts as empty.
 * Used by the ctest fuzz_replay_* tests in every sanitizer build. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    size_t len = 0;
    size_t cap = 0;

    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    for (;;) {
        size_t got;
        if (cap - len < 65536) {
            unsigned char *n = realloc(data, cap + 65536);
            if (n == NULL) {
                fclose(f);
                free(data);
                fprintf(stderr, "replay: out of memory reading %s\n", path);
                return 1;
            }
            data = n;
            cap += 65536;
        }
        got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            break;
        }
    }
    fclose(f);
    /* an exact-size copy, so that ASan sees reads past the input's end */
    {
        unsigned char *exact = malloc(len > 0 ? len : 1);
        if (exact == NULL) {
            free(data);
            return 1;
        }
        memcpy(exact, data, len);
        free(data);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    int status = 0;

    if (d == NULL) {
        return errno == ENOENT ? 0 : 1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        char **grown;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            continue;
        }
        grown = realloc(names, (n + 1) * sizeof(*names));
        if (grown == NULL || (grown[n] = strdup(path)) == NULL) {
            names = grown != NULL ? grown : names;
            status = 1;
            break;
        }
        names = grown;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        status |= run_file(names[i]);
        free(names[i]);
    }
    free(names);
    *count += n;
    return status;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    int status = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            status |= run_dir(argv[i], &count);
        } else if (stat(argv[i], &st) == 0) {
            status |= run_file(argv[i]);
            count++;
        } else if (errno != ENOENT) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            status = 1;
        }
    }
    fprintf(stderr, "replay: %zu inputs ran\n", count);
    return status;
}
