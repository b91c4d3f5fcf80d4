#include "krc/kube/leader.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define LEASE_MAX_BODY (1024 * 1024)

struct krc_leader {
    struct krc_kube_client *client;
    char *namespace;
    char *name;
    char *identity;
    char path[512];       /* .../namespaces/NS/leases/NAME */
    char collection[512]; /* .../namespaces/NS/leases */
    long duration_ms;
    long deadline_ms;
    long retry_ms;
    long retention_s;
    size_t handled_max;
    void (*on_lost)(void *userdata);
    void *userdata;

    atomic_int stop;
    atomic_int role;

    /* election state, touched only by the thread running the loop (and by
     * release after it returned) */
    cJSON *lease;                 /* the last Lease object read or written */
    char observed[512];           /* holder|renewTime|resourceVersion last seen */
    int64_t observed_ms;          /* when it last changed (monotonic) */
    int64_t observed_duration_ms; /* its spec.leaseDurationSeconds (0: none seen) */
    atomic_llong last_renew_ms;   /* last successful write (read by krc_leader_overdue) */
    atomic_llong fence_token;     /* of this replica's acquisition (krc_leader_fence_token) */

    pthread_mutex_t lock; /* holder, last_error, handled */
    char holder[256];
    char last_error[256];
    struct krc_leader_handled *handled; /* ring, oldest first from head */
    size_t n_handled;
    size_t head;
};

void krc_leader_format_microtime(int64_t unix_us, char *out, size_t outsz)
{
    time_t secs = (time_t)(unix_us / 1000000);
    struct tm tm;
    char base[32];

    gmtime_r(&secs, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, outsz, "%s.%06dZ", base, (int)(unix_us % 1000000));
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void set_error(struct krc_leader *l, const char *msg)
{
    pthread_mutex_lock(&l->lock);
    snprintf(l->last_error, sizeof(l->last_error), "%s", msg);
    pthread_mutex_unlock(&l->lock);
}

int krc_leader_new(struct krc_kube_client *client, const struct krc_leader_options *o,
                   struct krc_leader **ret, struct krc_error *err)
{
    struct krc_leader *l;

    *ret = NULL;
    if (o->namespace == NULL || o->namespace[0] == '\0' || o->name == NULL || o->name[0] == '\0' ||
        o->identity == NULL || o->identity[0] == '\0') {
        krc_kube_client_free(client);
        return krc_error_set(err, KRC_EINVAL,
                             "leader election needs a Lease namespace, a Lease name and an "
                             "identity");
    }
    l = krc_calloc(1, sizeof(*l));
    if (l == NULL) {
        krc_kube_client_free(client);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    l->client = client;
    l->namespace = krc_strdup(o->namespace);
    l->name = krc_strdup(o->name);
    l->identity = krc_strdup(o->identity);
    l->handled_max = o->handled_max > 0 ? o->handled_max : 1000;
    l->handled = krc_calloc(l->handled_max, sizeof(*l->handled));
    pthread_mutex_init(&l->lock, NULL);
    if (l->namespace == NULL || l->name == NULL || l->identity == NULL || l->handled == NULL) {
        krc_leader_free(l);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    snprintf(l->collection, sizeof(l->collection),
             "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->namespace);
    snprintf(l->path, sizeof(l->path), "%s/%s", l->collection, l->name);
    l->duration_ms = o->lease_duration_s * 1000;
    l->deadline_ms = o->renew_deadline_s * 1000;
    l->retry_ms = o->retry_period_s * 1000;
    l->retention_s = o->handled_retention_s;
    l->on_lost = o->on_lost;
    l->userdata = o->userdata;
    *ret = l;
    return 0;
}

void krc_leader_free(struct krc_leader *l)
{
    if (l == NULL) {
        return;
    }
    krc_kube_client_free(l->client);
    cJSON_Delete(l->lease);
    krc_free(l->handled);
    krc_free(l->namespace);
    krc_free(l->name);
    krc_free(l->identity);
    pthread_mutex_destroy(&l->lock);
    krc_free(l);
}

enum krc_leader_role krc_leader_role(struct krc_leader *l)
{
    return (enum krc_leader_role)atomic_load(&l->role);
}

void krc_leader_holder(struct krc_leader *l, char *out, size_t outsz)
{
    pthread_mutex_lock(&l->lock);
    snprintf(out, outsz, "%s", l->holder);
    pthread_mutex_unlock(&l->lock);
}

void krc_leader_last_error(struct krc_leader *l, char *out, size_t outsz)
{
    pthread_mutex_lock(&l->lock);
    snprintf(out, outsz, "%s", l->last_error);
    pthread_mutex_unlock(&l->lock);
}

int krc_leader_overdue(struct krc_leader *l)
{
    return atomic_load(&l->role) == KRC_LEADER_LEADING &&
           krc_clock_mono_ms() - atomic_load(&l->last_renew_ms) >= l->deadline_ms;
}

void krc_leader_stop(struct krc_leader *l)
{
    atomic_store(&l->stop, 1);
}

/* --- handled restarts ------------------------------------------------------ */

/* The hand-over key of a restart: "uid/container/IDENT" with IDENT its
 * termination, "t<finishedAt>[:<container id, 16 characters>]#<count>", or
 * "c<count>" when no finishedAt is known (docs/design/detection-and-identity.md,
 * "Identity"). */
static void handled_key(char *out, size_t outsz, const struct krc_restart_ident *id)
{
    char cid[17];
    size_t n = 0;

    if (id->finished_at <= 0) {
        snprintf(out, outsz, "%s/%s/c%d", id->uid, id->container, id->restart_count);
        return;
    }
    if (id->container_id[0] != '\0') {
        /* "containerd://<64 hex>": the hex after the scheme is enough */
        const char *p = strstr(id->container_id, "://");
        for (p = p != NULL ? p + 3 : id->container_id; *p != '\0' && n < sizeof(cid) - 1; p++) {
            if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
                cid[n++] = *p;
            }
        }
    }
    cid[n] = '\0';
    snprintf(out, outsz, "%s/%s/t%lld%s%s#%d", id->uid, id->container, (long long)id->finished_at,
             n ? ":" : "", cid, id->restart_count);
}

/* An entry of the encoding before the identity (a Lease written by an older
 * krc during an upgrade): "uid/container/<count>", no letter. */
static void legacy_key(char *out, size_t outsz, const char *uid, const char *container, int count)
{
    snprintf(out, outsz, "%s/%s/%d", uid, container, count);
}

/* Caller holds the lock. The entry, or NULL. */
static const struct krc_leader_handled *handled_find(const struct krc_leader *l, const char *key)
{
    for (size_t i = 0; i < l->n_handled; i++) {
        const struct krc_leader_handled *h = &l->handled[(l->head + i) % l->handled_max];
        if (strcmp(h->key, key) == 0) {
            return h;
        }
    }
    return NULL;
}

/* Caller holds the lock. The ring drops the oldest entry when full. */
static void handled_add(struct krc_leader *l, const char *key, int64_t at)
{
    struct krc_leader_handled *h;
    if (handled_find(l, key)) {
        return;
    }
    if (l->n_handled == l->handled_max) {
        l->head = (l->head + 1) % l->handled_max;
        l->n_handled--;
    }
    h = &l->handled[(l->head + l->n_handled) % l->handled_max];
    h->at = at;
    snprintf(h->key, sizeof(h->key), "%s", key);
    l->n_handled++;
}

void krc_leader_note_handled(struct krc_leader *l, const struct krc_restart_ident *id)
{
    char key[320];
    handled_key(key, sizeof(key), id);
    pthread_mutex_lock(&l->lock);
    handled_add(l, key, krc_clock_now());
    pthread_mutex_unlock(&l->lock);
}

int krc_leader_was_handled(struct krc_leader *l, const struct krc_restart_ident *id)
{
    char key[320];
    char old[320];
    const struct krc_leader_handled *h;
    int found;

    handled_key(key, sizeof(key), id);
    legacy_key(old, sizeof(old), id->uid, id->container, id->restart_count);
    pthread_mutex_lock(&l->lock);
    found = handled_find(l, key) != NULL;
    if (!found && (h = handled_find(l, old)) != NULL) {
        /* An older krc handled this count at h->at: the same termination
         * unless this one finished after that. */
        found = id->finished_at <= 0 || id->finished_at <= h->at;
    }
    pthread_mutex_unlock(&l->lock);
    return found;
}

static const char *skip_digits(const char *p)
{
    if (*p < '0' || *p > '9') {
        return NULL;
    }
    while (*p >= '0' && *p <= '9') {
        p++;
    }
    return p;
}

/* "t<digits>[:<alnum>]#<digits>", "c<digits>" or (older encoding) "<digits>". */
static int ident_valid(const char *id)
{
    const char *p = id;

    if (*p != 't') { /* "c<digits>" or the older bare "<digits>" */
        p = skip_digits(*p == 'c' ? p + 1 : p);
        return p != NULL && *p == '\0';
    }
    if ((p = skip_digits(p + 1)) == NULL) {
        return 0;
    }
    if (*p == ':') {
        const char *start = ++p;
        while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
            p++;
        }
        if (p == start) {
            return 0;
        }
    }
    if (*p != '#' || (p = skip_digits(p + 1)) == NULL) {
        return 0;
    }
    return *p == '\0';
}

size_t krc_leader_parse_handled(const char *text, struct krc_leader_handled *out, size_t max)
{
    size_t n = 0;
    const char *p = text;

    while (p != NULL && *p != '\0' && n < max) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[400];
        char uid[80], container[256], ident[64];
        long long at;
        char extra;
        if (len < sizeof(line)) {
            memcpy(line, p, len);
            line[len] = '\0';
            /* clang-tidy: %18lld cannot overflow; the fields are range-checked below */
            /* NOLINTNEXTLINE(cert-err34-c) */
            if (sscanf(line, "%18lld %79s %255s %63s %c", &at, uid, container, ident, &extra) ==
                    4 &&
                at > 0 && ident_valid(ident)) {
                out[n].at = (int64_t)at;
                /* a bare count is the older encoding: kept as a legacy key */
                snprintf(out[n].key, sizeof(out[n].key), "%s/%s/%s", uid, container, ident);
                n++;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

/* Caller holds the lock. Drops entries past the retention. */
static char *handled_text(struct krc_leader *l, int64_t now)
{
    struct krc_buf b;
    krc_buf_init(&b, 512 * 1024);
    krc_buf_append_str(&b, "");
    for (size_t i = 0; i < l->n_handled; i++) {
        const struct krc_leader_handled *h = &l->handled[(l->head + i) % l->handled_max];
        char uid[320];
        const char *c1, *c2;
        if (l->retention_s > 0 && now - h->at > l->retention_s) {
            continue;
        }
        /* key is uid/container/IDENT: write it space-separated */
        c1 = strchr(h->key, '/');
        c2 = strrchr(h->key, '/');
        if (c1 == NULL || c2 == NULL || c1 == c2) {
            continue;
        }
        snprintf(uid, sizeof(uid), "%.*s", (int)(c1 - h->key), h->key);
        krc_buf_printf(&b, "%lld %s %.*s %s\n", (long long)h->at, uid, (int)(c2 - c1 - 1), c1 + 1,
                       c2 + 1);
    }
    if (b.data == NULL) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    return b.data; /* handed to the caller */
}

/* The hand-over list of a Lease object (borrowed), or NULL. */
static const char *handled_annotation(const cJSON *lease)
{
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lease, "metadata"),
                                         "annotations"),
        KRC_LEADER_ANNOTATION);
    return cJSON_IsString(ann) ? ann->valuestring : NULL;
}

/* Merge the predecessor's list (the annotation text of the Lease this
 * replica just took over). */
static void merge_predecessor(struct krc_leader *l, const char *text, const char *from)
{
    size_t n;

    if (text == NULL) {
        return;
    }
    n = krc_leader_merge_handled(l, text);
    if (n == SIZE_MAX) {
        krc_log(KRC_LOG_ERROR,
                "leader election: out of memory reading the restarts handled by \"%s\"; "
                "they may be alerted again",
                from);
        return;
    }
    krc_log(KRC_LOG_INFO, "leader election: %zu restart(s) handled by the previous leader (\"%s\")",
            n, from);
}

size_t krc_leader_merge_handled(struct krc_leader *l, const char *text)
{
    struct krc_leader_handled *tmp = krc_calloc(l->handled_max, sizeof(*tmp));
    size_t n;

    if (tmp == NULL) {
        return SIZE_MAX;
    }
    n = krc_leader_parse_handled(text, tmp, l->handled_max);
    pthread_mutex_lock(&l->lock);
    for (size_t i = 0; i < n; i++) {
        handled_add(l, tmp[i].key, tmp[i].at);
    }
    pthread_mutex_unlock(&l->lock);
    krc_free(tmp);
    return n;
}

/* --- the Lease -------------------------------------------------------------- */

static const char *spec_str(const cJSON *lease, const char *field)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lease, "spec"), field);
    return cJSON_IsString(v) && v->valuestring != NULL ? v->valuestring : "";
}

static const char *meta_str(const cJSON *lease, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(lease, "metadata"), field);
    return cJSON_IsString(v) && v->valuestring != NULL ? v->valuestring : "";
}

static cJSON *child_object(cJSON *parent, const char *name)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, name);
    if (!cJSON_IsObject(o)) {
        cJSON_DeleteItemFromObjectCaseSensitive(parent, name);
        o = cJSON_AddObjectToObject(parent, name);
    }
    return o;
}

static void set_string(cJSON *obj, const char *name, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
    cJSON_AddStringToObject(obj, name, value);
}

static void set_number(cJSON *obj, const char *name, double value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
    cJSON_AddNumberToObject(obj, name, value);
}

/* Record what this replica observed of the Lease; a change restarts the
 * expiry clock. */
static void observe(struct krc_leader *l, const cJSON *lease)
{
    char rec[512];
    const char *holder = spec_str(lease, "holderIdentity");

    snprintf(rec, sizeof(rec), "%s|%s|%s", holder, spec_str(lease, "renewTime"),
             meta_str(lease, "resourceVersion"));
    if (strcmp(rec, l->observed) != 0) {
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(lease, "spec"), "leaseDurationSeconds");
        snprintf(l->observed, sizeof(l->observed), "%s", rec);
        l->observed_ms = krc_clock_mono_ms();
        /* client-go times expiry with the observed record's duration: the
         * holder decides how long its Lease lasts */
        l->observed_duration_ms =
            cJSON_IsNumber(dur) && dur->valuedouble >= 1 && dur->valuedouble <= 1e9
                ? (int64_t)dur->valuedouble * 1000
                : 0;
    }
    pthread_mutex_lock(&l->lock);
    snprintf(l->holder, sizeof(l->holder), "%s", holder);
    pthread_mutex_unlock(&l->lock);
}

static void keep_lease(struct krc_leader *l, cJSON *lease)
{
    cJSON_Delete(l->lease);
    l->lease = lease;
}

/* Fill spec (and the annotation) for this replica holding the Lease. */
static int fill_holder(struct krc_leader *l, cJSON *lease, int acquiring, int release,
                       const char *predecessor)
{
    cJSON *spec = child_object(lease, "spec");
    cJSON *meta = child_object(lease, "metadata");
    char now[40];
    char *text;
    int64_t us = now_us();
    long long whole_seconds = l->duration_ms / 1000; /* the field is an integer */

    if (spec == NULL || meta == NULL) {
        return KRC_ENOMEM;
    }
    krc_leader_format_microtime(us, now, sizeof(now));
    if (acquiring) {
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
        /* taken over from another holder, a released Lease or an earlier
         * process of this identity: every leading process gets a token of
         * its own (docs/design/shared-outbox.md) */
        set_number(spec, "leaseTransitions", (cJSON_IsNumber(tr) ? tr->valuedouble : 0) + 1);
        set_string(spec, "acquireTime", now);
    }
    set_string(spec, "holderIdentity", release ? "" : l->identity);
    set_number(spec, "leaseDurationSeconds", release ? 1 : (double)whole_seconds);
    set_string(spec, "renewTime", now);
    pthread_mutex_lock(&l->lock);
    text = handled_text(l, us / 1000000);
    pthread_mutex_unlock(&l->lock);
    if (text == NULL) {
        return KRC_ENOMEM;
    }
    if (predecessor != NULL && predecessor[0] != '\0') {
        /* A take-over carries the predecessor's list on: it is merged into
         * ours only once the PUT succeeded, and must not be lost if this
         * replica dies before its first renewal. */
        struct krc_buf b;
        krc_buf_init(&b, 1024 * 1024);
        if (krc_buf_append_str(&b, text) < 0 || krc_buf_append_str(&b, predecessor) < 0 ||
            (predecessor[strlen(predecessor) - 1] != '\n' && krc_buf_append_str(&b, "\n") < 0)) {
            krc_buf_cleanup(&b);
            krc_free(text);
            return KRC_ENOMEM;
        }
        krc_free(text);
        text = krc_buf_take(&b);
        if (text == NULL) {
            return KRC_ENOMEM;
        }
    }
    {
        cJSON *ann = child_object(meta, "annotations");
        if (ann == NULL) {
            krc_free(text);
            return KRC_ENOMEM;
        }
        set_string(ann, KRC_LEADER_ANNOTATION, text);
        krc_free(text);
    }
    return 0;
}

/* Write the Lease (PUT, or POST when create). On success the response is
 * kept as the current Lease. */
static int write_lease(struct krc_leader *l, cJSON *lease, int create, struct krc_error *err)
{
    char *json = cJSON_PrintUnformatted(lease);
    char *body = NULL;
    size_t len = 0;
    int rc;

    if (json == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = krc_kube_write(l->client, create ? "POST" : "PUT", create ? l->collection : l->path, json,
                        strlen(json), &body, &len, err);
    cJSON_free(json);
    if (rc < 0) {
        return rc;
    }
    {
        cJSON *resp = cJSON_ParseWithLength(body, len);
        krc_free(body);
        if (!cJSON_IsObject(resp)) {
            cJSON_Delete(resp);
            return krc_error_set(err, KRC_EPARSE, "%s: the Lease in the response is not JSON",
                                 l->path);
        }
        observe(l, resp);
        keep_lease(l, resp);
    }
    return 0;
}

static int get_lease(struct krc_leader *l, cJSON **ret, struct krc_error *err)
{
    char *body = NULL;
    size_t len = 0;
    int rc = krc_kube_get(l->client, l->path, LEASE_MAX_BODY, &body, &len, err);
    cJSON *lease;

    *ret = NULL;
    if (rc < 0) {
        return rc;
    }
    lease = cJSON_ParseWithLength(body, len);
    krc_free(body);
    if (!cJSON_IsObject(lease)) {
        cJSON_Delete(lease);
        return krc_error_set(err, KRC_EPARSE, "GET %s: the response is not a JSON object", l->path);
    }
    *ret = lease;
    return 0;
}

static int create_lease(struct krc_leader *l, struct krc_error *err)
{
    cJSON *lease = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(lease, "metadata");
    int rc;

    if (lease == NULL || meta == NULL) {
        cJSON_Delete(lease);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(lease, "kind", "Lease");
    cJSON_AddStringToObject(meta, "name", l->name);
    cJSON_AddStringToObject(meta, "namespace", l->namespace);
    if (fill_holder(l, lease, 1, 0, NULL) < 0) {
        cJSON_Delete(lease);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    set_number(child_object(lease, "spec"), "leaseTransitions", 0);
    rc = write_lease(l, lease, 1, err);
    cJSON_Delete(lease);
    return rc;
}

static int64_t fence_of(const cJSON *lease)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
    const char *created = meta_str(lease, "creationTimestamp");
    int64_t since = 0;
    int64_t transitions = 0;

    if (cJSON_IsNumber(tr) && tr->valuedouble >= 0 && tr->valuedouble < 1e15) {
        transitions = (int64_t)tr->valuedouble;
    }
    if (created[0] != '\0' && krc_parse_rfc3339(created, strlen(created), &since) < 0) {
        since = 0;
    }
    if (since < 0 || since > ((int64_t)1 << 40)) {
        since = 0;
    }
    return since * KRC_LEADER_FENCE_EPOCH + transitions;
}

/* This process now holds the Lease it did not hold before (l->lease is the
 * record just written): its fencing token. */
static void acquired(struct krc_leader *l)
{
    int64_t token = fence_of(l->lease);
    atomic_store(&l->fence_token, token);
    krc_log(KRC_LOG_INFO, "leader election: fencing token %lld (lease %s/%s)", (long long)token,
            l->namespace, l->name);
}

int64_t krc_leader_fence_token(struct krc_leader *l)
{
    return l != NULL ? atomic_load(&l->fence_token) : 0;
}

/* One round of client-go's tryAcquireOrRenew. Returns 1 when this replica
 * holds the Lease afterwards, 0 when another one does, or an error. */
static int try_acquire_or_renew(struct krc_leader *l, struct krc_error *err)
{
    int leading = atomic_load(&l->role) == KRC_LEADER_LEADING;
    cJSON *lease = NULL;
    const char *holder;
    int rc;

    /* Leading: write over the copy we hold; a 409 means somebody else wrote
     * in between, and the fresh copy is read below. */
    if (leading && l->lease != NULL) {
        cJSON *copy = cJSON_Duplicate(l->lease, 1);
        if (copy == NULL || fill_holder(l, copy, 0, 0, NULL) < 0) {
            cJSON_Delete(copy);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        rc = write_lease(l, copy, 0, err);
        cJSON_Delete(copy);
        if (rc == 0) {
            return 1;
        }
        if (rc != KRC_ECONFLICT && rc != KRC_ENOTFOUND) {
            return rc;
        }
        krc_error_clear(err);
    }
    rc = get_lease(l, &lease, err);
    if (rc == KRC_ENOTFOUND) {
        krc_error_clear(err);
        rc = create_lease(l, err);
        if (rc == KRC_ECONFLICT) { /* AlreadyExists: another replica was first */
            krc_error_clear(err);
            return 0;
        }
        if (rc == 0) {
            acquired(l);
        }
        return rc < 0 ? rc : 1;
    }
    if (rc < 0) {
        return rc;
    }
    observe(l, lease);
    holder = spec_str(lease, "holderIdentity");
    if (holder[0] != '\0' && strcmp(holder, l->identity) != 0 &&
        krc_clock_mono_ms() <
            l->observed_ms +
                (l->observed_duration_ms > 0 ? l->observed_duration_ms : (int64_t)l->duration_ms)) {
        keep_lease(l, lease);
        return 0; /* held by another replica, and not expired */
    }
    {
        /* A take-over (this process did not lead: the holder is another
         * replica, nobody, or an earlier process with our identity): the
         * list of the record observed for this PUT is merged once the PUT
         * succeeded, and carried on in the PUT itself. */
        const char *text = leading ? NULL : handled_annotation(lease);
        char *pred = text != NULL ? krc_strdup(text) : NULL;
        char from[256];
        snprintf(from, sizeof(from), "%s", holder[0] ? holder : "(released)");
        if ((text != NULL && pred == NULL) ||
            fill_holder(l, lease, !leading || strcmp(holder, l->identity) != 0, 0, pred) < 0) {
            krc_free(pred);
            cJSON_Delete(lease);
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        rc = write_lease(l, lease, 0, err);
        cJSON_Delete(lease);
        if (rc == 0) {
            merge_predecessor(l, pred, from);
            if (!leading) {
                acquired(l);
            }
        }
        krc_free(pred);
    }
    if (rc == KRC_ECONFLICT) {
        krc_error_clear(err);
        return 0;
    }
    return rc < 0 ? rc : 1;
}

/* Stop posting before anybody can see the role change. */
static void lost(struct krc_leader *l)
{
    if (l->on_lost != NULL) {
        l->on_lost(l->userdata);
    }
    atomic_store(&l->role, KRC_LEADER_LOST);
}

static void sleep_ms(struct krc_leader *l, long ms)
{
    int64_t end = krc_clock_mono_ms() + ms;
    while (!atomic_load(&l->stop) && krc_clock_mono_ms() < end) {
        krc_clock_sleep_ms(50, NULL);
    }
}

void krc_leader_run(struct krc_leader *l)
{
    char last_other[256] = "";

    krc_log(KRC_LOG_INFO, "leader election: lease %s/%s as \"%s\" (duration %lds)", l->namespace,
            l->name, l->identity, l->duration_ms / 1000);
    while (!atomic_load(&l->stop)) {
        struct krc_error e;
        int rc;
        krc_error_clear(&e);
        rc = try_acquire_or_renew(l, &e);
        if (rc == 1) {
            set_error(l, "");
            atomic_store(&l->last_renew_ms, krc_clock_mono_ms());
            if (atomic_load(&l->role) != KRC_LEADER_LEADING) {
                atomic_store(&l->role, KRC_LEADER_LEADING);
                krc_log(KRC_LOG_INFO, "leader election: became the leader (lease %s/%s)",
                        l->namespace, l->name);
            }
        } else if (atomic_load(&l->role) == KRC_LEADER_LEADING) {
            char holder[256];
            krc_leader_holder(l, holder, sizeof(holder));
            if (rc == 0) {
                krc_log(KRC_LOG_ERROR, "leader election: lost the lease %s/%s to \"%s\"; stopping",
                        l->namespace, l->name, holder);
                lost(l);
                return;
            }
            set_error(l, e.msg);
            krc_log(KRC_LOG_WARN, "leader election: renewing the lease %s/%s failed: %s",
                    l->namespace, l->name, e.msg);
            if (krc_clock_mono_ms() - atomic_load(&l->last_renew_ms) >= l->deadline_ms) {
                krc_log(KRC_LOG_ERROR,
                        "leader election: could not renew the lease %s/%s for %lds "
                        "(renew deadline); stopping",
                        l->namespace, l->name, l->deadline_ms / 1000);
                lost(l);
                return;
            }
        } else if (rc < 0) {
            set_error(l, e.msg);
            krc_log(KRC_LOG_WARN, "leader election: %s", e.msg);
        } else {
            char holder[256];
            set_error(l, "");
            krc_leader_holder(l, holder, sizeof(holder));
            if (strcmp(holder, last_other) != 0) {
                krc_log(KRC_LOG_INFO, "leader election: standby; lease %s/%s is held by \"%s\"",
                        l->namespace, l->name, holder);
                snprintf(last_other, sizeof(last_other), "%s", holder);
            }
        }
        sleep_ms(l, l->retry_ms);
    }
}

int krc_leader_release(struct krc_leader *l, struct krc_error *err)
{
    cJSON *copy;
    int rc;

    if (atomic_load(&l->role) != KRC_LEADER_LEADING || l->lease == NULL) {
        return 0;
    }
    copy = cJSON_Duplicate(l->lease, 1);
    if (copy == NULL || fill_holder(l, copy, 0, 1, NULL) < 0) {
        cJSON_Delete(copy);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    rc = write_lease(l, copy, 0, err);
    cJSON_Delete(copy);
    if (rc == 0) {
        atomic_store(&l->role, KRC_LEADER_STANDBY);
        krc_log(KRC_LOG_INFO, "leader election: released the lease %s/%s", l->namespace, l->name);
    }
    return rc;
}
