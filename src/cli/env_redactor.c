#include "krc/cli/env_redactor.h"

#include <stdlib.h>
#include <string.h>

#include "krc/util/mem.h"

int krc_env_redactor(struct krc_redactor **ret, struct krc_error *err)
{
    const char *env = getenv("KRC_REDACT_PATTERNS");
    char *copy = krc_strdup(env != NULL ? env : "");
    const char *items[KRC_REDACT_MAX_EXTRA + 1];
    size_t n = 0;
    int rc;

    if (copy == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (char *line = copy, *next; line != NULL; line = next) {
        next = strchr(line, '\n');
        if (next != NULL) {
            *next++ = '\0';
        }
        /* one more than allowed makes krc_redact_new say "too many" */
        if (line[0] != '\0' && n <= KRC_REDACT_MAX_EXTRA) {
            items[n++] = line;
        }
    }
    rc = krc_redact_new(items, n, ret, err);
    if (rc < 0) {
        krc_error_prefix(err, "KRC_REDACT_PATTERNS");
    }
    krc_free(copy);
    return rc;
}
