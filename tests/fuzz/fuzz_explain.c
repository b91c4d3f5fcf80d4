/* `krc explain` (cli/explain.c) on outside files. Parts split at FUZZ_SEP:
 * pod | events | node | logs, each written to a file and passed with its
 * option (events, node and logs only when the part is there); the first
 * byte picks the format (text, json, slack) and whether --container names
 * the first container-ish word. The exit status is 0 or 1 (bad input),
 * never 2 (our arguments are right); with json or slack and status 0 the
 * output is one valid JSON value. */
#include <cjson/cJSON.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "krc/cli/explain.h"
#include "krc/util/log.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) {
        if (f != NULL) {
            fclose(f);
        }
        return NULL;
    }
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (buf != NULL) {
        buf[fread(buf, 1, (size_t)n, f)] = '\0';
    }
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const formats[] = {"text", "json", "slack"};
    static const char *const opts[] = {"--pod", "--events", "--node", "--logs"};
    static const char *const names[] = {"pod", "events", "node", "logs"};
    const uint8_t *parts[4];
    size_t lens[4];
    char *argv[16];
    char out_path[4096];
    int argc = 0;
    size_t n;
    int fmt;
    int status;

    if (size < 1) {
        return 0;
    }
    krc_log_set_level(KRC_LOG_ERROR);
    fmt = data[0] % 3;
    n = fuzz_split(data + 1, size - 1, parts, lens, 4);
    argv[argc++] = (char *)"explain";
    for (size_t i = 0; i < n; i++) {
        const char *p = fuzz_write((int)i, names[i], parts[i], lens[i]);
        if (p == NULL) {
            return 0;
        }
        argv[argc++] = (char *)opts[i];
        argv[argc++] = (char *)p;
    }
    argv[argc++] = (char *)"--format";
    argv[argc++] = (char *)formats[fmt];
    if (data[0] & 4) {
        argv[argc++] = (char *)"--container";
        argv[argc++] = (char *)"app";
    }
    argv[argc] = NULL;
    snprintf(out_path, sizeof(out_path), "%s/out", fuzz_tmpdir());
    fflush(stdout);
    if (freopen(out_path, "w", stdout) == NULL) {
        abort();
    }
    status = krc_explain_main(argc, argv);
    fflush(stdout);
    FUZZ_CHECK(status == 0 || status == 1, "exit status %d", status);
    if (status == 0 && fmt != 0) {
        char *text = slurp(out_path);
        cJSON *j = text != NULL ? cJSON_Parse(text) : NULL;
        FUZZ_CHECK(j != NULL, "--format %s printed no JSON: %.300s", formats[fmt],
                   text != NULL ? text : "(unreadable)");
        cJSON_Delete(j);
        free(text);
    }
    return 0;
}
