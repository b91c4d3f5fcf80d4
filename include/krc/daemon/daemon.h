/* The daemon's lifecycle: threads, signals and the bounded queue between the
 * watch loops (detection) and the worker (what happens to a restart). */
#ifndef KRC_DAEMON_H
#define KRC_DAEMON_H

#include <stdatomic.h>

#include "krc/config/config.h"

/* Run until SIGTERM/SIGINT. Returns the process exit code. */
int krc_daemon_run(const struct krc_config *cfg);

/* The same, for a caller that runs the daemon inside a larger program (krc
 * demo): it also stops, as on SIGTERM, once *stop is non-zero (NULL: never),
 * and *ret_signal (may be NULL) gets the signal that stopped it, 0 if none.
 * The caller blocks SIGINT, SIGTERM and SIGHUP in every thread it starts
 * before this, so that only this call takes them. */
int krc_daemon_run_until(const struct krc_config *cfg, const atomic_int *stop, int *ret_signal);

#endif
