/* Helpers of the fuzz targets (fuzz.h). */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **parts, size_t *lens, size_t max)
{
    const size_t seplen = sizeof(FUZZ_SEP) - 1;
    size_t n = 0;
    size_t start = 0;

    for (size_t i = 0; n + 1 < max && i + seplen <= size; i++) {
        if (memcmp(data + i, FUZZ_SEP, seplen) == 0) {
            parts[n] = data + start;
            lens[n] = i - start;
            n++;
            i += seplen - 1;
            start = i + 1;
        }
    }
    parts[n] = data + start;
    lens[n] = size - start;
    return n + 1;
}

static char tmpdir[PATH_MAX];

static void remove_tmpdir(void)
{
    static const char *const names[] = {"config.yaml", "kubeconfig", "ca.crt",  "token",
                                        "namespace",   "pod",        "events",  "node",
                                        "logs",        "cert.pem",   "key.pem", NULL};
    char path[PATH_MAX + 32];

    for (size_t i = 0; names[i] != NULL; i++) {
        snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
}

const char *fuzz_tmpdir(void)
{
    if (tmpdir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof(tmpdir), "%s/krc-fuzz-XXXXXX",
                 base != NULL && base[0] != '\0' ? base : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_tmpdir);
    }
    return tmpdir;
}

const char *fuzz_write(int slot, const char *name, const void *data, size_t len)
{
    static char paths[4][PATH_MAX + 64];
    char *path = paths[slot & 3];
    const char *p = data;
    int fd;

    snprintf(path, sizeof(paths[0]), "%s/%s", fuzz_tmpdir(), name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return NULL;
    }
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w <= 0) {
            close(fd);
            return NULL;
        }
        p += w;
        len -= (size_t)w;
    }
    close(fd);
    return path;
}

int fuzz_utf8_ok(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        unsigned c = p[i];
        size_t n;
        unsigned cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + n >= len) {
            return 0;
        }
        for (size_t k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80) {
                return 0;
            }
            cp = (cp << 6) | (p[i + k] & 0x3fu);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff)) {
            return 0;
        }
        i += n + 1;
    }
    return 1;
}
