/* `krc demo`: the whole product end to end on a simulated cluster. The real
 * daemon (watch, detection, collection, diagnosis, formatting, store, sender)
 * runs unchanged against the embedded API server and Slack-compatible
 * webhook of demo/sim.h while demo/scenario.h's crashes play out. */
#ifndef KRC_DEMO_H
#define KRC_DEMO_H

#include <stdio.h>

#define KRC_DEMO_DEFAULT_OUT "krc-demo"
#define KRC_DEMO_DB "history.db"
#define KRC_DEMO_HTML "alerts.html"

struct krc_demo_options {
    const char *out_dir; /* created if missing; history.db and alerts.html go there */
    int colour;          /* ANSI colours in the terminal */
    FILE *out;           /* where the story and the alerts are printed */
};

/* Run the demo. Returns 0 when it played to the end, 130 when SIGINT (or
 * SIGTERM: 143) stopped it (the history so far is kept), 1 on an error
 * (printed to stderr). Blocks SIGINT, SIGTERM and SIGHUP in the calling
 * thread: call it from the main thread before any other thread exists. */
int krc_demo_run(const struct krc_demo_options *o);

#endif
