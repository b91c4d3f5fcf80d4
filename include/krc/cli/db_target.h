/* The history database of the read-only commands (`krc history`, `krc mcp`):
 * which one (--db, else $KRC_DB, else the default path), its password file
 * (--db-password-file, else $KRC_DB_PASSWORD_FILE) and how to name it in a
 * message without its password. */
#ifndef KRC_CLI_DB_TARGET_H
#define KRC_CLI_DB_TARGET_H

#include <stddef.h>

#define KRC_DB_TARGET_MAX 4096

struct krc_db_target {
    char target[KRC_DB_TARGET_MAX];  /* a SQLite file or a PostgreSQL URL */
    char display[KRC_DB_TARGET_MAX]; /* the same, password replaced by "****" */
    const char *password_file;       /* borrowed from argv or the environment; NULL: none */
};

/* Fill *t from the options (NULL: not given) and the environment. Returns
 * 0, or 1 after writing "PROG: why" to stderr (no default path: no HOME;
 * a target longer than KRC_DB_TARGET_MAX - 1 bytes; --db-password-file with
 * a SQLite file, which has no password; $KRC_DB_PASSWORD_FILE is ignored for
 * one). */
int krc_db_target_resolve(const char *prog, const char *db, const char *password_file,
                          struct krc_db_target *t);

#endif
