/* The daemon's lifecycle: threads, signals and the bounded queue between the
 * watch loops (detection) and the worker (what happens to a restart). */
#ifndef KRC_DAEMON_H
#define KRC_DAEMON_H

#include "krc/config/config.h"

/* Run until SIGTERM/SIGINT. Returns the process exit code. */
int krc_daemon_run(const struct krc_config *cfg);

#endif
