/* The history database of `krc history` and `krc mcp` (krc/cli/db_target.h). */
#include "krc/cli/db_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/store/store.h"
#include "krc/util/error.h"

/* Append n bytes of s to out (size outsz, length *len), cut at the end. */
static void put(char *out, size_t outsz, size_t *len, const char *s, size_t n)
{
    if (*len + 1 >= outsz) {
        return;
    }
    if (n > outsz - 1 - *len) {
        n = outsz - 1 - *len;
    }
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
}

/* The query part from q ('?' included): every password=VALUE shown as password=****. */
static void put_query(char *out, size_t outsz, size_t *len, const char *q)
{
    while (*q != '\0') {
        size_t n = strcspn(q + 1, "&") + 1; /* one separator and its parameter */
        if (strncmp(q + 1, "password=", 9) == 0) {
            put(out, outsz, len, q, 10);
            put(out, outsz, len, "****", 4);
        } else {
            put(out, outsz, len, q, n);
        }
        q += n;
    }
}

void krc_db_target_display(const char *target, char *out, size_t outsz)
{
    const char *auth;
    const char *end;
    const char *at;
    const char *colon;
    size_t len = 0;

    if (outsz == 0) {
        return;
    }
    out[0] = '\0';
    if (target == NULL) {
        return;
    }
    if (!krc_store_is_url(target)) {
        put(out, outsz, &len, target, strlen(target));
        return;
    }
    auth = strstr(target, "://") + 3;
    end = auth + strcspn(auth, "/?#");
    /* user information ends at the last '@' of the authority (a password may hold '@') */
    at = NULL;
    for (const char *p = auth; p < end; p++) {
        at = *p == '@' ? p : at;
    }
    colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon != NULL) {
        put(out, outsz, &len, target, (size_t)(colon + 1 - target));
        put(out, outsz, &len, "****", 4);
        put(out, outsz, &len, at, (size_t)(end - at));
    } else {
        put(out, outsz, &len, target, (size_t)(end - target));
    }
    if (*end == '/') {
        size_t n = strcspn(end, "?#");
        put(out, outsz, &len, end, n);
        end += n;
    }
    if (*end == '?') {
        size_t n = strcspn(end, "#");
        char q[KRC_DB_TARGET_MAX];
        snprintf(q, sizeof(q), "%.*s", (int)n, end);
        put_query(out, outsz, &len, q);
        end += n;
    }
    put(out, outsz, &len, end, strlen(end));
}

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
    krc_db_target_display(t->target, t->display, sizeof(t->display));
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
