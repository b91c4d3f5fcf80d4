/* `krc notify test`: one message marked as a test to every chat and paging
 * destination that `krc run` with the same options, environment and
 * configuration file would post to, and the answer of each, explained.
 *
 *   krc notify test [--destination NAME] [krc run's options: --config FILE ...]
 *
 * One line per destination on stdout: "NAME (WHERE): 200 ok: sent" or
 * "NAME (WHERE): failed: 404 no_service: this webhook was revoked or
 * mistyped". A Kubernetes Event destination is not written to (a line says
 * it was skipped). PagerDuty gets an info trigger resolved at once
 * (docs/destinations.md). Exit status: 0 every destination accepted its
 * message, 1 one or more failed, 2 usage or configuration error (an unknown
 * --destination lists the names). */
#ifndef KRC_NOTIFY_CMD_H
#define KRC_NOTIFY_CMD_H

/* argv[0] is "notify". Returns the process exit status. */
int krc_notify_main(int argc, char **argv);

#endif
