/* Incidents and recorded changes (krc/store/incident.h). This first step
 * declares the calls; they fail with KRC_EUNSUPPORTED until the schema step
 * that stores them lands (the next commits of the i27-store branch). */
#include "krc/store/driver.h"
#include "krc/store/incident.h"
#include "krc/util/mem.h"

static int not_yet(struct krc_store *s, const char *what, struct krc_error *err)
{
    return krc_error_set(err, KRC_EUNSUPPORTED, "%s: %s is not stored yet", s->display, what);
}

int krc_store_incidents_open(struct krc_store *s, krc_store_incident_fn fn, void *ud,
                             struct krc_error *err)
{
    (void)fn;
    (void)ud;
    return not_yet(s, "incidents", err);
}

int krc_store_incident_end(struct krc_store *s, int64_t id, int64_t ended_at,
                           const struct krc_store_outbox *msgs, size_t n, int64_t *ret_outbox_ids,
                           struct krc_error *err)
{
    (void)id;
    (void)ended_at;
    (void)msgs;
    (void)n;
    (void)ret_outbox_ids;
    return not_yet(s, "incidents", err);
}

int krc_store_incidents_list(struct krc_store *s, const struct krc_store_incident_filter *f,
                             krc_store_incident_fn fn, void *ud, struct krc_error *err)
{
    (void)f;
    (void)fn;
    (void)ud;
    return not_yet(s, "incidents", err);
}

int krc_store_incident_get(struct krc_store *s, int64_t id, struct krc_store_incident_detail **ret,
                           struct krc_error *err)
{
    (void)id;
    (void)ret;
    return not_yet(s, "incidents", err);
}

void krc_store_incident_detail_free(struct krc_store_incident_detail *d)
{
    if (d == NULL) {
        return;
    }
    krc_store_entry_free(d->first);
    krc_store_entry_free(d->latest);
    for (size_t i = 0; i < d->n_strings_; i++) {
        krc_free(d->strings_[i]);
    }
    krc_free(d->strings_);
    krc_free(d->messages);
    krc_free(d);
}

int krc_store_record_change(struct krc_store *s, const struct krc_store_change *c,
                            struct krc_error *err)
{
    (void)c;
    return not_yet(s, "changes", err);
}

int krc_store_changes_list(struct krc_store *s, const struct krc_store_change_filter *f,
                           krc_store_change_fn fn, void *ud, struct krc_error *err)
{
    (void)f;
    (void)fn;
    (void)ud;
    return not_yet(s, "changes", err);
}
