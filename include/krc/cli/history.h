/* `krc history`: read the restart history that `krc run` records.
 *
 *   krc history [--db FILE] [--namespace NS] [--pod NAME] [--cause CODE]
 *               [--since DURATION] [--limit N] [--format table|json]
 *   krc history show ID [--db FILE] [--format text|json]
 *   krc history incidents|incident ID|changes --workload NS/KIND/NAME ...
 *               (history_incidents.c: incidents and recorded changes)
 *
 * The database is FILE, else $KRC_DB, else krc_store_default_path(); it is
 * opened read-only (safe while krc run writes). --pod is a name prefix,
 * --since accepts 90s, 10m, 2h, 1d, 1h30m, --limit defaults to 50. The list
 * is newest first; times are UTC. `show` prints one full report: the alert
 * text as posted, everything collected (evidence, containers, events, node,
 * notes, log tail) and the delivery state of its notifications.
 * Text output is made terminal-safe (no control characters from the data).
 * Exit status: 0 success, 1 no/unreadable/corrupt database or unknown ID,
 * 2 usage error. */
#ifndef KRC_HISTORY_H
#define KRC_HISTORY_H

#define KRC_HISTORY_DEFAULT_LIMIT 50

/* argv[0] is "history". Returns the process exit status. */
int krc_history_main(int argc, char **argv);

#endif
