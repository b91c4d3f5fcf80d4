/* `krc explain`: diagnose a restart offline from saved kubectl output.
 *
 *   krc explain --pod FILE [--events FILE] [--node FILE] [--logs FILE]
 *               [--container NAME] [--format text|json|slack]
 *
 * FILE "-" reads standard input (at most one of them). Output goes to
 * stdout, errors to stderr. Exit status: 0 success, 1 bad input (unreadable
 * file, not JSON, not a Pod, unknown container, nothing to explain), 2 usage
 * error. The slack format prints the alert exactly as the daemon would post
 * it (slack_format), with $CLUSTER_NAME as the cluster. */
#ifndef KRC_EXPLAIN_H
#define KRC_EXPLAIN_H

/* argv[0] is "explain". Returns the process exit status. */
int krc_explain_main(int argc, char **argv);

#endif
