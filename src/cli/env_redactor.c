#include "krc/cli/env_redactor.h"

#include <stdlib.h>

#include "krc/config/config.h"
#include "krc/util/mem.h"

int krc_env_redactor(struct krc_redactor **ret, struct krc_error *err)
{
    const char *env = getenv("KRC_REDACT_PATTERNS");
    struct krc_config cfg;
    int rc;

    /* only redactPatterns, from the environment: the one builder
     * (krc_config_redactor) splits and checks it as for krc run, and no
     * other variable can make krc explain fail */
    krc_config_init(&cfg);
    if (env != NULL) {
        krc_free(cfg.redact_patterns);
        cfg.redact_patterns = krc_strdup(env);
        if (cfg.redact_patterns == NULL) {
            krc_config_cleanup(&cfg);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    rc = krc_config_redactor(&cfg, ret, err);
    if (rc < 0) {
        krc_error_prefix(err, "KRC_REDACT_PATTERNS");
    }
    krc_config_cleanup(&cfg);
    return rc;
}
