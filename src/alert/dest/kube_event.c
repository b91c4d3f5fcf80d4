/* The Kubernetes Event sink (alert/kube_event.h): an events.k8s.io/v1 Event
 * on the restarted pod, POSTed through krc's Kubernetes client (its
 * credentials, TLS and 401 handling). No threads, no files, no storm
 * summaries or "recovered" replies: an Event is about one pod. */
#include "krc/alert/kube_event.h"

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/alert/sink.h"
#include "krc/alert/sink_formats.h"
#include "krc/kube/kube_client.h"
#include "krc/util/backoff.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc/alert/dest.h"

static const struct krc_sink_ops krc_sink_kube_event;

/* An Event is a few hundred bytes; this bounds what krc sends. */
#define KEVENT_MAX_PAYLOAD (16 * 1024)
#define ELLIPSIS "\xe2\x80\xa6"

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* Append s to out[*n] (size outsz) as valid, one-line UTF-8: bad bytes
 * become U+FFFD, control characters a space. Stops before a code point that
 * does not fit. */
static void note_append(char *out, size_t outsz, size_t *n, const char *s)
{
    size_t len = strlen(s);

    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = krc_text_utf8_decode(s + i, len - i, &cp);
        const char *piece = s + i;
        size_t plen = k;
        if (k == 0) {
            piece = "\xef\xbf\xbd";
            plen = 3;
            k = 1;
        } else if (cp < 0x20 || cp == 0x7f) {
            piece = " ";
            plen = 1;
        }
        if (*n + plen >= outsz) {
            return;
        }
        memcpy(out + *n, piece, plen);
        *n += plen;
        i += k;
    }
    out[*n] = '\0';
}

/* "<cause> (<confidence> confidence): <summary>" within the note limit. */
static void build_note(const struct krc_kube_event_in *in, char *note, size_t notesz)
{
    char full[KRC_KUBE_EVENT_NOTE_MAX * 2];
    size_t n = 0;

    full[0] = '\0';
    note_append(full, sizeof(full), &n, nonempty(in->cause) ? in->cause : "Unknown");
    if (nonempty(in->confidence)) {
        note_append(full, sizeof(full), &n, " (");
        note_append(full, sizeof(full), &n, in->confidence);
        note_append(full, sizeof(full), &n, " confidence)");
    }
    if (nonempty(in->summary)) {
        note_append(full, sizeof(full), &n, ": ");
        note_append(full, sizeof(full), &n, in->summary);
    }
    if (n + 1 > notesz) {
        /* cut on a code point (full is valid UTF-8) with room for "…" */
        size_t keep = 0;
        for (size_t i = 0; i < n;) {
            size_t next = krc_text_utf8_next(full, n, i);
            if (next + strlen(ELLIPSIS) + 1 > notesz) {
                break;
            }
            keep = i = next;
        }
        memcpy(full + keep, ELLIPSIS, strlen(ELLIPSIS) + 1);
    }
    snprintf(note, notesz, "%s", full);
}

/* metadata.name: "<pod>.<suffix>", the pod part cut so the name stays a DNS
 * subdomain (<= 253, no "-." or ".." where the cut falls). */
static void build_name(const char *pod, const char *suffix, char *out, size_t outsz)
{
    size_t plen = strlen(pod);
    size_t room = KRC_KUBE_EVENT_NAME_MAX - 1 - strlen(suffix);

    if (plen > room) {
        plen = room;
    }
    while (plen > 0 && (pod[plen - 1] == '.' || pod[plen - 1] == '-')) {
        plen--;
    }
    snprintf(out, outsz, "%.*s.%s", (int)plen, pod, suffix);
}

/* The restart's identity as hashed: one line per field (a UID and a container
 * name have no newline), the termination as the store keys it
 * (docs/design/detection-and-identity.md). */
static int ident_text(const struct krc_restart_ident *id, char *out, size_t outsz)
{
    int n;

    if (id->finished_at > 0) {
        n = snprintf(out, outsz, "krc restart v1\n%s\n%s\nt%lld\n%s\n%d", id->uid, id->container,
                     (long long)id->finished_at, id->container_id, id->restart_count);
    } else {
        n = snprintf(out, outsz, "krc restart v1\n%s\n%s\nc%d", id->uid, id->container,
                     id->restart_count);
    }
    return n > 0 && (size_t)n < outsz ? n : -1;
}

void krc_kube_event_restart_name(const char *pod, const struct krc_restart_ident *id, char *out,
                                 size_t outsz)
{
    /* the fields are bounded arrays: this holds them all */
    char text[64 + KRC_RESTART_IDENT_UID_MAX + KRC_RESTART_IDENT_CONTAINER_MAX +
              KRC_RESTART_IDENT_CONTAINER_ID_MAX];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char suffix[32];
    int n = ident_text(id, text, sizeof(text));

    if (n < 0 || EVP_Digest(text, (size_t)n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen < 8) {
        /* not reached (the text fits; SHA-256 does not fail): a name from
         * the fields alone, still the same for the same restart */
        snprintf(suffix, sizeof(suffix), "krc-c%d", id->restart_count);
    } else {
        /* "krc-": never a client-go recorder's "<object>.<hex time>" name,
         * whose suffix is all hex */
        snprintf(suffix, sizeof(suffix), "krc-%02x%02x%02x%02x%02x%02x%02x%02x", md[0], md[1],
                 md[2], md[3], md[4], md[5], md[6], md[7]);
    }
    build_name(pod, suffix, out, outsz);
}

static void format_micro(int64_t time_ns, char *out, size_t outsz)
{
    int64_t sec = time_ns / 1000000000;
    long usec = (long)((time_ns % 1000000000) / 1000);
    char base[40];

    krc_clock_format_rfc3339(sec, base, sizeof(base)); /* 2026-12-03T15:58:00Z */
    if (strlen(base) > 0 && base[strlen(base) - 1] == 'Z') {
        base[strlen(base) - 1] = '\0';
    }
    snprintf(out, outsz, "%s.%06ldZ", base, usec);
}

static int check_in(const struct krc_kube_event_in *in, struct krc_error *err)
{
    if (!nonempty(in->namespace)) {
        return krc_error_set(err, KRC_EINVAL, "Kubernetes Event: no namespace");
    }
    if (!nonempty(in->pod)) {
        return krc_error_set(err, KRC_EINVAL, "Kubernetes Event: no pod name");
    }
    if (!nonempty(in->reporting_instance)) {
        return krc_error_set(err, KRC_EINVAL, "Kubernetes Event: no reportingInstance");
    }
    if (strlen(in->reporting_instance) > KRC_KUBE_EVENT_FIELD_MAX) {
        return krc_error_set(err, KRC_EINVAL,
                             "Kubernetes Event: reportingInstance longer than %d bytes",
                             KRC_KUBE_EVENT_FIELD_MAX);
    }
    return 0;
}

static cJSON *regarding(const struct krc_kube_event_in *in)
{
    cJSON *r = cJSON_CreateObject();
    char field_path[320];

    if (r == NULL) {
        return NULL;
    }
    cJSON_AddStringToObject(r, "kind", "Pod");
    cJSON_AddStringToObject(r, "apiVersion", "v1");
    cJSON_AddStringToObject(r, "namespace", in->namespace);
    cJSON_AddStringToObject(r, "name", in->pod);
    if (nonempty(in->pod_uid)) {
        cJSON_AddStringToObject(r, "uid", in->pod_uid);
    }
    if (nonempty(in->container)) {
        snprintf(field_path, sizeof(field_path), "spec.%s{%s}",
                 in->init_container ? "initContainers" : "containers", in->container);
        cJSON_AddStringToObject(r, "fieldPath", field_path);
    }
    return r;
}

int krc_kube_event_build(const struct krc_kube_event_in *in, char **ret, struct krc_error *err)
{
    char note[KRC_KUBE_EVENT_NOTE_MAX + 1];
    char name[KRC_KUBE_EVENT_NAME_MAX + 1];
    char when[48];
    cJSON *ev;
    cJSON *md;
    cJSON *reg;
    int rc = check_in(in, err);

    *ret = NULL;
    if (rc < 0) {
        return rc;
    }
    build_note(in, note, sizeof(note));
    if (in->restart != NULL && krc_restart_ident_known(in->restart)) {
        krc_kube_event_restart_name(in->pod, in->restart, name, sizeof(name));
        if (in->amended) {
            char first[KRC_KUBE_EVENT_NAME_MAX + 1];
            const char *suffix = strrchr(name, '.');
            size_t plen = suffix != NULL ? (size_t)(suffix - name) : 0;
            size_t room = KRC_KUBE_EVENT_NAME_MAX - strlen(suffix != NULL ? suffix : "") - 8;

            snprintf(first, sizeof(first), "%s", name);
            /* "-amended" (8 characters) after the suffix; the pod part is cut
             * to leave it room, as build_name cuts it for the suffix */
            snprintf(name, sizeof(name), "%.*s%s-amended", (int)(plen < room ? plen : room), first,
                     suffix != NULL ? suffix : "");
        }
    } else {
        char hex[24];
        snprintf(hex, sizeof(hex), "%" PRIx64, (uint64_t)in->time_ns);
        build_name(in->pod, hex, name, sizeof(name));
    }
    format_micro(in->time_ns, when, sizeof(when));
    ev = cJSON_CreateObject();
    md = cJSON_CreateObject();
    reg = regarding(in);
    if (ev == NULL || md == NULL || reg == NULL) {
        cJSON_Delete(ev);
        cJSON_Delete(md);
        cJSON_Delete(reg);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    cJSON_AddStringToObject(ev, "apiVersion", "events.k8s.io/v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", in->namespace);
    cJSON_AddItemToObject(ev, "metadata", md);
    cJSON_AddStringToObject(ev, "eventTime", when);
    cJSON_AddStringToObject(ev, "reportingController", KRC_KUBE_EVENT_CONTROLLER);
    cJSON_AddStringToObject(ev, "reportingInstance", in->reporting_instance);
    cJSON_AddStringToObject(ev, "action", KRC_KUBE_EVENT_ACTION);
    cJSON_AddStringToObject(ev, "reason", KRC_KUBE_EVENT_REASON);
    cJSON_AddItemToObject(ev, "regarding", reg);
    cJSON_AddStringToObject(ev, "note", note);
    cJSON_AddStringToObject(ev, "type", "Warning");
    *ret = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    if (*ret == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    return 0;
}

int krc_kube_event_namespace(const char *body, char *out, size_t outsz, struct krc_error *err)
{
    cJSON *ev = cJSON_Parse(body);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(ev, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
    int rc = 0;

    if (!cJSON_IsString(ns) || ns->valuestring[0] == '\0' || strlen(ns->valuestring) >= outsz) {
        rc = krc_error_set(err, KRC_EPARSE, "Kubernetes Event: the body has no metadata.namespace");
    } else {
        snprintf(out, outsz, "%s", ns->valuestring);
    }
    cJSON_Delete(ev);
    return rc;
}

/* metadata.name of a built Event, "?" when it has none. */
static void event_name(const char *body, char *out, size_t outsz)
{
    cJSON *ev = cJSON_Parse(body);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(ev, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");

    snprintf(out, outsz, "%s", cJSON_IsString(name) ? name->valuestring : "?");
    cJSON_Delete(ev);
}

/* --- the sink ----------------------------------------------------------- */

struct kevent_sink {
    struct krc_sink base;
    struct krc_sink_options o;
    struct krc_kube_client *client;
    int warned_forbidden; /* the RBAC warning is logged once */
    int64_t last_ms;      /* the last attempt (monotonic), for the pacing */
};

/* krc's wall clock (it has a test seam) with the real clock's fraction when
 * they agree on the second. */
static int64_t now_ns(void)
{
    struct timespec ts;
    int64_t sec = krc_clock_now();

    clock_gettime(CLOCK_REALTIME, &ts);
    return sec * 1000000000 + (sec == (int64_t)ts.tv_sec ? ts.tv_nsec : 0);
}

static const struct krc_report_container *find_container(const struct krc_report *rep,
                                                         const char *name)
{
    for (size_t i = 0; name != NULL && i < rep->n_containers; i++) {
        if (rep->containers[i].name != NULL && strcmp(rep->containers[i].name, name) == 0) {
            return &rep->containers[i];
        }
    }
    return NULL;
}

/* reportingInstance: krc's pod name (POD_NAME, from the downward API), else
 * the host name (a pod's host name is its name). The outbox row is the exact
 * request. */
static void reporting_instance(char *out, size_t outsz)
{
    const char *pod = getenv("POD_NAME");

    if (nonempty(pod)) {
        snprintf(out, outsz, "%.128s", pod);
        return;
    }
    if (gethostname(out, outsz) != 0 || out[0] == '\0') {
        snprintf(out, outsz, "krc");
    }
    out[outsz - 1] = '\0';
    if (strlen(out) > KRC_KUBE_EVENT_FIELD_MAX) {
        out[KRC_KUBE_EVENT_FIELD_MAX] = '\0';
    }
}

/* The restart the Event is about: the detected one (fo->restart, set by
 * render.c), else the diagnosed container's last termination in the report
 * (an Event formatted outside the daemon's pipeline), else NULL. */
static const struct krc_restart_ident *restart_of(const struct krc_report *rep,
                                                  const struct krc_report_container *c,
                                                  const struct krc_alert_options *fo,
                                                  struct krc_restart_ident *from_report)
{
    if (fo->restart != NULL && krc_restart_ident_known(fo->restart)) {
        return fo->restart;
    }
    if (c == NULL || !c->has_status || !nonempty(rep->uid) || !nonempty(c->name)) {
        return NULL;
    }
    (void)krc_restart_ident_set(from_report, rep->uid, c->name, c->restart_count,
                                c->last.present ? c->last.finished_at : 0,
                                c->last.present ? c->last.container_id : NULL);
    return from_report;
}

static int ke_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                             const struct krc_alert_options *fo, char **ret_body,
                             char **ret_fallback, struct krc_error *err)
{
    struct krc_kube_event_in in;
    const struct krc_report_container *c = find_container(rep, diag->container);
    char instance[KRC_KUBE_EVENT_FIELD_MAX + 1];
    struct krc_alert_options defaults;
    struct krc_restart_ident from_report;
    const char *unquoted = diag->summary_unquoted;
    char *summary = NULL;
    int rc;

    *ret_fallback = NULL;
    if (fo == NULL) {
        krc_alert_options_init(&defaults);
        fo = &defaults;
    }
    reporting_instance(instance, sizeof(instance));
    /* An Event is read by anyone who may list events in the namespace: its
     * note has the summary without the text it quotes from the pod (no log
     * line, event, runtime or termination message), redacted and made
     * display-safe (no terminal escapes) like every text krc sends (2 KiB is
     * past the note's 1 KiB) */
    if (unquoted != NULL && (summary = krc_card_text(fo, unquoted, strlen(unquoted),
                                                     2 * KRC_KUBE_EVENT_NOTE_MAX, 0)) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    if (summary != NULL && rep->what_changed != NULL && rep->what_changed[0] != '\0') {
        /* the incident's first alert: what changed before it, after the summary (the
         * note's limit cuts it first) */
        char *changed = krc_card_text(fo, rep->what_changed, strlen(rep->what_changed),
                                      KRC_KUBE_EVENT_NOTE_MAX, 0);
        size_t size = strlen(summary) + (changed != NULL ? strlen(changed) : 0) + 32;
        char *both = changed != NULL ? krc_malloc(size) : NULL;
        if (both != NULL) {
            snprintf(both, size, "%s What changed: %s", summary, changed);
            krc_free(summary);
            summary = both;
            both = NULL;
        }
        krc_free(both);
        krc_free(changed);
    }
    memset(&in, 0, sizeof(in));
    in.namespace = rep->namespace;
    in.pod = rep->name;
    in.pod_uid = rep->uid;
    in.container = diag->container;
    in.init_container = c != NULL && c->is_init;
    in.cause = krc_cause_name(diag->cause);
    in.confidence = krc_confidence_name(diag->confidence);
    in.summary = summary;
    in.reporting_instance = instance;
    in.time_ns = now_ns();
    in.restart = restart_of(rep, c, fo, &from_report);
    in.amended = fo->amended;
    rc = krc_kube_event_build(&in, ret_body, err);
    krc_free(summary);
    return rc;
}

static int ke_format_summary(const struct krc_alert_summary *sum,
                             const struct krc_alert_options *fo, char **ret_body,
                             struct krc_error *err)
{
    (void)sum;
    (void)fo;
    *ret_body = NULL;
    return krc_error_set(err, KRC_EUNSUPPORTED,
                         "a Kubernetes Event is about one pod: no storm summary");
}

static int ke_format_recovered(const struct krc_alert_recovered *rec,
                               const struct krc_alert_options *fo, char **ret_body,
                               struct krc_error *err)
{
    (void)rec;
    (void)fo;
    *ret_body = NULL;
    return krc_error_set(err, KRC_EUNSUPPORTED, "Kubernetes Events have no replies");
}

static int canceled(const struct kevent_sink *k)
{
    return k->o.cancel != NULL && atomic_load(k->o.cancel);
}

/* A final answer of the API server: KRC_EHTTP with the status, or 0 for a
 * 409 AlreadyExists: the Event's name is the restart's
 * (krc_kube_event_restart_name), so an Event of that name is this restart's,
 * written before (by an earlier krc process, a previous leader, or this
 * POST's own earlier attempt whose answer was lost): delivered, counted as
 * res->already_exists, never retried. */
static int final_status(struct kevent_sink *k, const char *ns, const char *body,
                        const struct krc_error *e, struct krc_sink_result *res,
                        struct krc_error *err)
{
    long st = e->http_status;

    res->http_status = st;
    /* the Status reason is in the client's message: "POST ...: 409
     * AlreadyExists: events.events.k8s.io \"x\" already exists" */
    if (st == 409 && strstr(e->msg, " 409 AlreadyExists") != NULL) {
        char name[KRC_KUBE_EVENT_NAME_MAX + 1];
        res->already_exists = 1;
        event_name(body, name, sizeof(name));
        krc_log(KRC_LOG_INFO,
                "Kubernetes Event %s/%s exists already (this restart's, written before): not "
                "written again",
                ns, name);
        return 0;
    }
    if (st == 403) {
        snprintf(res->error, sizeof(res->error), "forbidden");
        if (!k->warned_forbidden) {
            k->warned_forbidden = 1;
            krc_log(KRC_LOG_WARN,
                    "Kubernetes Events: krc may not create events (apiGroup events.k8s.io) in "
                    "namespace \"%s\": grant the verb \"create\" on \"events\" in "
                    "\"events.k8s.io\" there (the Helm chart and deploy/manifests do), or set "
                    "kubernetesEvents: false; such Events are marked failed, not retried",
                    ns);
        }
    } else if (st == 404) {
        snprintf(res->error, sizeof(res->error), "namespace gone");
        krc_log(KRC_LOG_INFO, "Kubernetes Event for namespace \"%s\" dropped: 404 (gone)", ns);
    } else {
        snprintf(res->error, sizeof(res->error), "HTTP %ld", st);
    }
    krc_error_set(err, KRC_EHTTP, "%s", e->msg);
    if (err != NULL) {
        err->http_status = (int)st;
    }
    return KRC_EHTTP;
}

/* At most one attempt per o.min_interval_ms (one Event per second by
 * default), as the HTTP sinks pace theirs in sink_send.c: a burst of
 * restarts does not turn into a burst of writes to the API server. */
static int pace(struct kevent_sink *k)
{
    int64_t since = krc_clock_mono_ms() - k->last_ms;

    if (k->last_ms != 0 && since < k->o.min_interval_ms &&
        krc_clock_sleep_ms(k->o.min_interval_ms - since, k->o.cancel)) {
        return KRC_ECANCELED;
    }
    k->last_ms = krc_clock_mono_ms();
    return 0;
}

static int ke_post(struct kevent_sink *k, const char *path, const char *ns, const char *body,
                   struct krc_backoff *bo, struct krc_sink_result *res, struct krc_error *err)
{
    struct krc_error e;
    char *resp = NULL;
    size_t resp_len = 0;
    int rc;

    for (int attempt = 1;; attempt++) {
        int64_t wait;
        if (canceled(k) || pace(k) < 0) {
            return krc_error_set(err, KRC_ECANCELED, "shutting down");
        }
        krc_error_clear(&e);
        res->attempts = attempt;
        rc = krc_kube_write(k->client, "POST", path, body, strlen(body), &resp, &resp_len, &e);
        krc_free(resp);
        resp = NULL;
        if (rc == 0) {
            res->http_status = 201;
            return 0;
        }
        /* 4xx other than 429 (and 401, which the client retried once with
         * fresh credentials) never succeed */
        if (e.http_status >= 400 && e.http_status < 500 && e.http_status != 429 &&
            e.http_status != 401) {
            return final_status(k, ns, body, &e, res, err);
        }
        res->http_status = e.http_status;
        wait = krc_backoff_next(bo, krc_clock_mono_ms());
        if (rc == KRC_ERATELIMIT) {
            res->rate_limited++;
            if (e.retry_after > 0) {
                wait = (int64_t)e.retry_after * 1000;
                res->retry_after_ms = wait;
            }
        }
        if (attempt >= k->o.max_attempts) {
            return krc_error_set(err, rc, "%s (gave up after %d attempts)", e.msg, attempt);
        }
        krc_log(KRC_LOG_WARN, "Kubernetes Event: %s; retrying in %lldms", e.msg, (long long)wait);
        if (krc_clock_sleep_ms(wait, k->o.cancel)) {
            return krc_error_set(err, KRC_ECANCELED, "shutting down");
        }
    }
}

static int ke_send(struct krc_sink *s, const struct krc_sink_message *m,
                   struct krc_sink_result *res, struct krc_error *err)
{
    struct kevent_sink *k = (struct kevent_sink *)s;
    struct krc_backoff bo;
    char ns[256];
    char path[400];
    int rc;

    memset(res, 0, sizeof(*res));
    rc = krc_kube_event_namespace(m->body, ns, sizeof(ns), err);
    if (rc < 0) {
        res->http_status = 400; /* a body that can never be sent */
        return krc_error_set(err, KRC_EHTTP, "%s", err != NULL ? err->msg : "bad Event");
    }
    snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events", ns);
    krc_backoff_init(&bo, k->o.backoff_initial_ms, k->o.backoff_max_ms, 0,
                     (uint64_t)krc_clock_mono_ms());
    return ke_post(k, path, ns, m->body, &bo, res, err);
}

static void ke_free(struct krc_sink *s)
{
    struct kevent_sink *k = (struct kevent_sink *)s;

    krc_kube_client_free(k->client);
    krc_free(k);
}

static struct krc_sink *ke_create(const struct krc_sink_options *o, const char *target,
                                  struct krc_error *err)
{
    struct kevent_sink *k;

    (void)target;
    if (o->kube_auth == NULL) {
        krc_error_set(err, KRC_EINVAL, "Kubernetes Event sink: no Kubernetes client");
        return NULL;
    }
    k = krc_calloc(1, sizeof(*k));
    if (k == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    k->base.ops = &krc_sink_kube_event;
    k->base.limits.min_interval_ms = o->min_interval_ms;
    k->base.limits.max_payload = KEVENT_MAX_PAYLOAD;
    k->o = *o;
    if (k->o.max_attempts < 1) {
        k->o.max_attempts = 1;
    }
    k->client = krc_kube_client_new(o->kube_auth, o->kube_tokens, err);
    if (k->client == NULL) {
        krc_free(k);
        return NULL;
    }
    if (o->timeout_ms > 0) {
        krc_kube_client_set_timeout(k->client, o->timeout_ms);
    }
    return &k->base;
}

static const struct krc_sink_ops krc_sink_kube_event = {
    .name = "kubernetes-event",
    .create = ke_create,
    .format_restart = ke_format_restart,
    .format_summary = ke_format_summary,
    .format_recovered = ke_format_recovered,
    .send = ke_send,
    .upload = NULL,
    .free = ke_free,
};

/* --- the kind: no settings of its own (alert/dest.h) ----------------------- */

const struct krc_dest_kind krc_dest_kube_event = {
    .schema = {"kubernetes-event", "an Event on the pod (events.k8s.io/v1)", NULL, 0},
    .ops = &krc_sink_kube_event,
};
