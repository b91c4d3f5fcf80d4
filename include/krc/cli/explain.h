/* `krc explain`: diagnose a restart offline from saved kubectl output.
 *
 *   krc explain --pod FILE [--events FILE] [--node FILE] [--logs FILE]
 *               [--container NAME] [--format text|json|slack]
 *
 * FILE "-" reads standard input (at most one of them). --pod, --events and
 * --node take kubectl's JSON or YAML (yaml_json), told apart by content;
 * --pod also takes `kubectl describe pod` text (kube_describe), whose Events
 * table is used when --events is not given. Output goes to stdout, errors
 * to stderr naming the option and the file. Exit status: 0 success, 1 bad
 * input (unreadable or empty file, binary data, not JSON/YAML, invalid YAML,
 * not a Pod, unknown container, a pod that never restarted), 2 usage
 * error. The slack format prints the alert exactly as the daemon would post
 * it (slack_format), with $CLUSTER_NAME as the cluster. */
#ifndef KRC_EXPLAIN_H
#define KRC_EXPLAIN_H

#include <stdio.h>

#include "krc/diagnose/diagnose.h"
#include "krc/model/report.h"

/* argv[0] is "explain". Returns the process exit status. */
int krc_explain_main(int argc, char **argv);

/* The text report of a diagnosis of r: pod, container, last exit (or that
 * the files hold none), "Cause: CODE (confidence: C)", summary, evidence,
 * "Not checked:", "Next step:" and the commands. d->container must be set. */
void krc_explain_write_text(FILE *out, const struct krc_report *r, const struct krc_diagnosis *d);

/* The same as one JSON object (the keys README.md lists). KRC_ENOMEM. */
int krc_explain_write_json(FILE *out, const struct krc_report *r, const struct krc_diagnosis *d);

#endif
