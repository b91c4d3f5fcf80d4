/* The store's front: opening a store on the SQL driver its target names
 * (krc/store/driver.h), the names of kinds and states, the default path, the
 * display form of a target and the parts of a stored identity. The queries
 * are history.c's and outbox.c's. No database library is seen here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/store/driver.h"
#include "krc/store/store.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"

/* ---- targets ------------------------------------------------------------------- */

int krc_store_is_url(const char *target)
{
    return target != NULL &&
           (strncmp(target, "postgres://", 11) == 0 || strncmp(target, "postgresql://", 13) == 0);
}

/* ---- open and close ------------------------------------------------------------- */

static void store_free(struct krc_store *s)
{
    krc_free(s->target);
    krc_free(s->display);
    krc_free(s->cluster);
    krc_free(s);
}

int krc_store_open_as(const char *target, const char *display, unsigned flags,
                      const struct krc_store_options *o, struct krc_store **ret,
                      struct krc_error *err)
{
    struct krc_store *s;
    int rc;

    if (target == NULL || target[0] == '\0') {
        return krc_error_set(err, KRC_EINVAL, "database path is empty");
    }
    if ((s = krc_calloc(1, sizeof(*s))) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    s->drv = krc_store_is_url(target) ? &krc_sql_pg : &krc_sql_sqlite;
    s->flags = flags;
    s->target = krc_strdup(target);
    s->display = krc_strdup(display);
    s->cluster = krc_strdup(o != NULL && o->cluster != NULL ? o->cluster : "");
    if (s->target == NULL || s->display == NULL || s->cluster == NULL) {
        store_free(s);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if ((rc = s->drv->open(s, o, err)) < 0) {
        store_free(s);
        return rc;
    }
    *ret = s;
    return rc; /* 0, or KRC_STORE_DEFERRED */
}

int krc_store_open_with(const char *target, unsigned flags, const struct krc_store_options *o,
                        struct krc_store **ret, struct krc_error *err)
{
    char *display;
    int rc;

    if (target == NULL || target[0] == '\0') {
        return krc_error_set(err, KRC_EINVAL, "database path is empty");
    }
    if ((display = krc_url_mask_password(target)) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = krc_store_open_as(target, display, flags, o, ret, err);
    krc_free(display);
    return rc;
}

int krc_store_open(const char *path, unsigned flags, struct krc_store **ret, struct krc_error *err)
{
    return krc_store_open_with(path, flags, NULL, ret, err);
}

void krc_store_close(struct krc_store *s)
{
    if (s == NULL) {
        return;
    }
    s->drv->close(s->c);
    store_free(s);
}

const char *krc_store_path(const struct krc_store *s)
{
    return s->display;
}

const char *krc_store_backend_name(const struct krc_store *s)
{
    return s->drv->name;
}

int krc_store_shared(const struct krc_store *s)
{
    return s->drv->shared;
}

int krc_store_default_path(char *out, size_t outsz, struct krc_error *err)
{
    const char *k8s = getenv("KUBERNETES_SERVICE_HOST");
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    int n;

    if (k8s != NULL && k8s[0] != '\0') {
        n = snprintf(out, outsz, "%s", KRC_STORE_DEFAULT_PATH_INCLUSTER);
    } else if (xdg != NULL && xdg[0] == '/') {
        n = snprintf(out, outsz, "%s/krc/krc.db", xdg);
    } else if (home != NULL && home[0] != '\0') {
        n = snprintf(out, outsz, "%s/.local/state/krc/krc.db", home);
    } else {
        return krc_error_set(err, KRC_ENOTFOUND,
                             "no default database path: HOME and XDG_STATE_HOME are not set "
                             "(use --db FILE or KRC_DB)");
    }
    if (n < 0 || (size_t)n >= outsz) {
        return krc_error_set(err, KRC_ETOOBIG, "default database path is too long");
    }
    return 0;
}

/* ---- names ------------------------------------------------------------------------ */

static const char *const kind_names[KRC_STORE_KIND_COUNT] = {"alert", "reply", "summary",
                                                             "recovered"};
static const char *const state_names[KRC_STORE_STATE_COUNT] = {"pending", "delivered", "failed",
                                                               "withdrawn", "superseded"};

const char *krc_store_kind_name(enum krc_store_kind k)
{
    return (unsigned)k < KRC_STORE_KIND_COUNT ? kind_names[k] : "unknown";
}

const char *krc_store_state_name(enum krc_store_state st)
{
    return (unsigned)st < KRC_STORE_STATE_COUNT ? state_names[st] : "unknown";
}

/* The finishedAt (0: none) and the containerID (into out, "" when none) of a
 * stored identity ("t<finishedAt>/<containerID>/<count>" or "c<count>"). */
static int64_t identity_container_id(const char *identity, char *out, size_t outsz)
{
    const char *first;
    const char *last;
    size_t n;

    if (outsz > 0) {
        out[0] = '\0';
    }
    /* "t<finishedAt>/<containerID>/<restartCount>"; the id may hold '/' */
    if (identity == NULL || identity[0] != 't' || (first = strchr(identity, '/')) == NULL ||
        (last = strrchr(identity, '/')) == first) {
        return identity != NULL && identity[0] == 't' ? strtoll(identity + 1, NULL, 10) : 0;
    }
    n = (size_t)(last - first - 1);
    if (outsz > 0) {
        n = n < outsz - 1 ? n : outsz - 1;
        memcpy(out, first + 1, n);
        out[n] = '\0';
    }
    return strtoll(identity + 1, NULL, 10);
}

int krc_store_row_ident(const struct krc_store_row *row, struct krc_restart_ident *ret)
{
    char cid[KRC_RESTART_IDENT_CONTAINER_ID_MAX];
    int64_t fin;

    if (row->pod_uid == NULL || row->container == NULL) {
        (void)krc_restart_ident_set(ret, NULL, NULL, 0, 0, NULL);
        return 0;
    }
    fin = identity_container_id(row->identity, cid, sizeof(cid));
    (void)krc_restart_ident_set(ret, row->pod_uid, row->container, row->restart_count, fin, cid);
    return 1;
}

enum krc_store_kind krc_store_kind_parse(const char *name)
{
    for (int i = 0; i < KRC_STORE_KIND_COUNT; i++) {
        if (name != NULL && strcmp(name, krc_store_kind_name((enum krc_store_kind)i)) == 0) {
            return (enum krc_store_kind)i;
        }
    }
    return KRC_STORE_KIND_ALERT;
}

enum krc_store_state krc_store_state_parse(const char *name)
{
    for (int i = 0; i < KRC_STORE_STATE_COUNT; i++) {
        if (name != NULL && strcmp(name, krc_store_state_name((enum krc_store_state)i)) == 0) {
            return (enum krc_store_state)i;
        }
    }
    return KRC_STORE_PENDING;
}

/* ---- reading ------------------------------------------------------------------------ */

void krc_store_entry_free(struct krc_store_entry *e)
{
    if (e == NULL) {
        return;
    }
    for (size_t i = 0; i < e->n_strings_; i++) {
        krc_free(e->strings_[i]);
    }
    krc_free(e->strings_);
    krc_free(e->messages);
    krc_free(e);
}
