/* `krc history`'s shared pieces: history.c (the restart list and `show`) and
 * history_incidents.c (`incidents`, `incident ID`, `changes`). Not a public
 * header: nothing outside src/cli/ includes it. */
#ifndef KRC_HISTORY_INT_H
#define KRC_HISTORY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/store/store.h"

struct cJSON;

#define KRC_HISTORY_EXIT_USAGE 2

/* "2026-12-02 17:30:05" (UTC), "-" for t <= 0. */
void krc_history_time_utc(int64_t t, char *out, size_t outsz);
/* JSON for people (two spaces a level) on stdout. 0, or KRC_ENOMEM. */
int krc_history_print_json(const struct cJSON *o);
/* "Label:     value" (terminal-safe), nothing for an empty value. */
void krc_history_print_field(const char *label, const char *v);
/* Terminal-safe (possibly multi-line) text, each line after indent. */
void krc_history_print_block(const char *indent, const char *text, size_t max);
/* A stored report's evidence, containers, events, node, notes and log tail. */
void krc_history_print_report(const struct cJSON *rep);
/* One outbox row: kind, destination, state, attempts, times, last error. */
void krc_history_print_outbox(const struct krc_store_message *m);
/* The database of --db and --db-password-file (NULL: their defaults),
 * read-only. 0, or 1 after saying why. */
int krc_history_open_db(const char *db, const char *password_file, struct krc_store **ret);
/* opt's value v as a number from min to max: 0, or KRC_HISTORY_EXIT_USAGE
 * after saying why. */
int krc_history_parse_long(const char *opt, const char *v, long min, long max, long *ret);
/* Flush stdout: status, or 1 when the output could not be written. */
int krc_history_finish(int status);

/* history_incidents.c: `krc history incidents|incident|changes ...` (argv as
 * krc_history_main's, `what` the subcommand). The exit status. */
int krc_history_incidents_main(int argc, char **argv, const char *what);

#endif
