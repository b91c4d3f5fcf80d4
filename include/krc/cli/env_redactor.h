/* The redactor of the command that reads no configuration file (`krc
 * explain`; `krc mcp` builds its own from --config with krc_config_redactor):
 * the built-in patterns and those of KRC_REDACT_PATTERNS, newline-separated
 * as `krc run` reads the variable, so that what it shows is redacted as the
 * daemon's reports are. */
#ifndef KRC_CLI_ENV_REDACTOR_H
#define KRC_CLI_ENV_REDACTOR_H

#include "krc/util/error.h"
#include "krc/util/redact.h"

/* *ret: free with krc_redact_free. KRC_EINVAL naming KRC_REDACT_PATTERNS and
 * the pattern (krc_redact_new's checks), KRC_ENOMEM. */
int krc_env_redactor(struct krc_redactor **ret, struct krc_error *err);

#endif
