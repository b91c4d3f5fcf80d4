#include "krc/cli/env_redactor.h"

#include <stdlib.h>

#include "krc/config/config.h"
#include "krc/util/mem.h"

int krc_env_redactor(struct krc_redactor **ret, struct krc_error *err)
{
    const char *env = getenv("KRC_REDACT_PATTERNS");
    struct krc_config cfg;
    int rc;

    /* only redactPatterns, from the environment: split as for krc run
     * (krc_config_set_env) and checked by the one builder
     * (krc_config_redactor), and no other variable can make krc explain
     * fail */
    krc_config_init(&cfg);
    if (env != NULL && (rc = krc_config_set_env(&cfg, "KRC_REDACT_PATTERNS", env, err)) < 0) {
        krc_config_cleanup(&cfg);
        return rc;
    }
    rc = krc_config_redactor(&cfg, ret, err);
    if (rc < 0) {
        krc_error_prefix(err, "KRC_REDACT_PATTERNS");
    }
    krc_config_cleanup(&cfg);
    return rc;
}
