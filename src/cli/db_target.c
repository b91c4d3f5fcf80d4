/* The history database of `krc history` and `krc mcp` (krc/cli/db_target.h). */
#include "krc/cli/db_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/store/store.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"

int krc_db_target_resolve(const char *prog, const char *db, const char *password_file,
                          struct krc_db_target *t)
{
    struct krc_error err;
    int flag = password_file != NULL;

    memset(t, 0, sizeof(*t));
    if (db == NULL) {
        db = getenv("KRC_DB");
    }
    if (password_file == NULL) {
        password_file = getenv("KRC_DB_PASSWORD_FILE");
    }
    t->password_file = password_file != NULL && password_file[0] != '\0' ? password_file : NULL;
    krc_error_clear(&err);
    if (db != NULL && db[0] != '\0') {
        if (strlen(db) >= sizeof(t->target)) {
            fprintf(stderr, "%s: --db: longer than %zu bytes\n", prog, sizeof(t->target) - 1);
            return 1;
        }
        snprintf(t->target, sizeof(t->target), "%s", db);
    } else if (krc_store_default_path(t->target, sizeof(t->target), &err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return 1;
    }
    {
        char *shown = krc_url_mask_password(t->target); /* no URL password */
        snprintf(t->display, sizeof(t->display), "%s", shown != NULL ? shown : "(database)");
        krc_free(shown);
    }
    if (!krc_store_is_url(t->target)) {
        /* $KRC_DB_PASSWORD_FILE of a pod is no reason to refuse a local file */
        if (!flag) {
            t->password_file = NULL;
            return 0;
        }
        fprintf(stderr,
                "%s: --db-password-file %s is for a PostgreSQL URL; "
                "the database %s is a SQLite file, which has no password\n",
                prog, t->password_file, t->display);
        return 1;
    }
    return 0;
}
