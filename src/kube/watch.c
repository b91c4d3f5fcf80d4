#include "krc/kube/watch.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/util/backoff.h"
#include "krc/kube/watch_pacing.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/linebuf.h"
#include "krc/kube/list_framer.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

#define RV_MAX 128
#define URL_MAX 8192
#define WHAT_MAX 160
/* metadata_only: what the metadata client of client-go asks for, JSON only
 * (no fallback to the full objects) */
#define ACCEPT_META_LIST "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#define ACCEPT_META_WATCH "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
/* A streaming list that never delivers its end marker is given up after
 * this many attempts, and the loop falls back to LIST for good. */
#define STREAMING_LIST_ATTEMPTS 2

enum stream_mode {
    MODE_WATCH,          /* WATCH from a resourceVersion */
    MODE_STREAMING_LIST, /* WATCH with sendInitialEvents, until the end marker */
    MODE_FULL_LIST,      /* LIST without limit (build_path only) */
};

struct wctx {
    const struct krc_watch_options *o;
    const struct krc_watch_handler *h;
    struct krc_kube_client *client;
    struct krc_watch_stats *stats;
    char rv[RV_MAX];
    enum stream_mode mode;
    int synced;      /* the current sync has completed */
    int marker_seen; /* streaming list: the initial-events-end bookmark arrived */
    long long stream_events;
    int stop;      /* error code that ended the stream from inside, 0 if none */
    int finishing; /* the stream ended: its last line is being framed */
    int delivered; /* an event, bookmark or item was delivered in this chunk */
    struct krc_error stop_err;
    struct krc_linebuf lb;
    struct krc_list_framer lf;
    struct krc_watch_event ev;
    struct krc_pod_info item;
    struct krc_watch_pacing pacing;
    struct krc_buf base_path;
    int generic;       /* another resource than pods: objects go to h->object */
    int denied_logged; /* generic: a 403/404 was logged since the last sync */
    const char *what;  /* in messages: "pod", "apps/v1 replicasets" */
    const char *items; /* what the list counts: "pods", "objects" */
    char what_buf[WHAT_MAX];
    char what_stream[WHAT_MAX + 32]; /* "streaming pod list" */
    char what_list[WHAT_MAX + 32];   /* "pod list" */
    char what_watch[WHAT_MAX + 32];  /* "pod watch" */
};

static struct krc_watch_stats dummy_stats;

void krc_watch_options_defaults(struct krc_watch_options *o)
{
    memset(o, 0, sizeof(*o));
    o->idle_timeout_ms = 180000;
    o->page_size = 500;
    o->streaming_list = 1;
    o->max_line = 8 * 1024 * 1024;
    o->timeout_min_s = 300;
    o->timeout_max_s = 600;
    o->backoff_initial_ms = 800;
    o->backoff_max_ms = 30000;
}

static const char *scope(const struct wctx *w)
{
    return w->o->namespace != NULL ? w->o->namespace : "all namespaces";
}

static int cancelled(const struct wctx *w)
{
    return w->o->cancel != NULL && *w->o->cancel;
}

static void set_rv(struct wctx *w, const char *rv)
{
    if (rv != NULL && *rv != '\0') {
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
    }
}

/* --- skipped objects ---------------------------------------------------- */

enum skip_reason {
    SKIP_OVERSIZED,
    SKIP_UNDECODABLE,
};

/* "the MODIFIED event of pod shop/web-0 (uid U, resourceVersion 12)", or for
 * a list item "items[3], pod shop/web-0 (...)", from what the object's first
 * bytes say; what they do not say is called unknown. Another resource's
 * object is "object shop/api-5d9c" ("object node-1" without a namespace:
 * cluster-scoped, or not in its first bytes). */
static void describe(const struct wctx *w, const struct krc_kube_ident *id, long long list_index,
                     char *out, size_t size)
{
    const char *noun = w->generic ? "object" : "pod";
    char pod[384];
    char extra[256];

    if (id->name[0] != '\0' && w->generic && id->namespace[0] == '\0') {
        snprintf(pod, sizeof(pod), "object %s", id->name);
    } else if (id->name[0] != '\0') {
        snprintf(pod, sizeof(pod), "%s %s/%s", noun, id->namespace[0] ? id->namespace : "(unknown)",
                 id->name);
    } else {
        snprintf(pod, sizeof(pod), "an unknown %s (no metadata.name in its first bytes)", noun);
    }
    extra[0] = '\0';
    if (id->uid[0] != '\0' || id->resource_version[0] != '\0') {
        snprintf(extra, sizeof(extra), " (%s%s%s%s%s)", id->uid[0] ? "uid " : "", id->uid,
                 id->uid[0] && id->resource_version[0] ? ", " : "",
                 id->resource_version[0] ? "resourceVersion " : "", id->resource_version);
    }
    if (list_index >= 0) {
        snprintf(out, size, "items[%lld], %s%s", list_index, pod, extra);
    } else if (id->type[0] != '\0') {
        snprintf(out, size, "the %s event of %s%s", id->type, pod, extra);
    } else {
        snprintf(out, size, "an event (type unknown) of %s%s", pod, extra);
    }
}

/* One object skipped: counted, and a warning that names it. head: its first
 * bytes (at most KRC_LINEBUF_HEAD); size: its length; detail: why it did not
 * decode (SKIP_UNDECODABLE). Fills *id with what its head says. */
static void skip_object(struct wctx *w, enum skip_reason reason, long long list_index,
                        const char *head, size_t head_len, size_t size, const char *detail,
                        struct krc_kube_ident *id)
{
    char what[768];

    krc_kube_ident_scan(head, head_len, id);
    describe(w, id, list_index, what, sizeof(what));
    if (reason == SKIP_OVERSIZED) {
        const char *lost;
        atomic_fetch_add(&w->stats->skipped_oversized, 1);
        if (strcmp(id->type, "DELETED") == 0) {
            lost = w->generic ? "krc keeps what it knew of this object until the next relist"
                              : "krc keeps what it knew of this pod until the next relist";
        } else {
            lost = w->generic ? "krc does not know this object's state until a version of it "
                                "within the limit arrives"
                              : "krc does not know this pod's state and sees none of its "
                                "restarts until a version of it within the limit arrives";
        }
        krc_log(KRC_LOG_WARN,
                "%s %s (%s): skipped %s: %zu bytes, larger than the %zu-byte limit; %s", w->what,
                list_index >= 0 ? "list" : "watch", scope(w), what, size, w->o->max_line, lost);
    } else {
        atomic_fetch_add(&w->stats->skipped_undecodable, 1);
        krc_log(KRC_LOG_WARN, "%s %s (%s): skipped %s: undecodable (%zu bytes): %s; %s goes on",
                w->what, list_index >= 0 ? "list" : "watch", scope(w), what, size, detail,
                list_index >= 0 ? "the list" : "the stream");
    }
}

/* --- watch lines ------------------------------------------------------ */

static int stop_stream(struct wctx *w, int code)
{
    w->stop = code;
    return 1;
}

/* An event, bookmark or list item was delivered: readiness counts from the
 * chunk that carried it (stored once per chunk by chunk_done, not per
 * object). */
static void delivered(struct wctx *w)
{
    w->delivered = 1;
}

/* A chunk that arrived at `now` has been framed. */
static void chunk_done(struct wctx *w, long long now)
{
    if (w->delivered) {
        w->delivered = 0;
        atomic_store(&w->stats->last_ok_mono_ms, now);
    }
}

static int on_line(const char *line, size_t len, void *userdata)
{
    struct wctx *w = userdata;
    struct krc_error perr;
    int rc;

    if (w->stop != 0) {
        return 1;
    }
    krc_error_clear(&perr);
    rc = w->generic ? krc_watch_event_parse_object(line, len, &w->ev, &perr)
                    : krc_watch_event_parse(line, len, &w->ev, &perr);
    if (rc == KRC_ENOMEM) {
        krc_error_set(&w->stop_err, KRC_ENOMEM, "out of memory decoding a watch line");
        return stop_stream(w, KRC_ENOMEM);
    }
    if (rc < 0) {
        /* One bad line must not blind the watch: skip it and read the next.
         * The resourceVersion stays where it was (a line that does not
         * decode is not trusted for one): the next event's takes over, and
         * a resume before one replays this line, which is skipped again.
         * Not an event for readiness or for the pacing: a server that sends
         * nothing but such lines is not healthy. */
        struct krc_kube_ident id;
        skip_object(w, SKIP_UNDECODABLE, -1, line, len, len, perr.msg, &id);
        return 0;
    }
    w->stream_events++;
    if (w->ev.type != KRC_WATCH_ERROR) {
        /* A stream that delivers events is healthy: whatever backoff an
         * outage built up before it no longer applies. */
        krc_watch_pacing_healthy(&w->pacing);
        delivered(w);
    }
    switch (w->ev.type) {
    case KRC_WATCH_ADDED:
    case KRC_WATCH_MODIFIED:
    case KRC_WATCH_DELETED:
        if (w->ev.type == KRC_WATCH_ADDED) {
            atomic_fetch_add(&w->stats->events_added, 1);
        } else if (w->ev.type == KRC_WATCH_MODIFIED) {
            atomic_fetch_add(&w->stats->events_modified, 1);
        } else {
            atomic_fetch_add(&w->stats->events_deleted, 1);
        }
        if (w->generic) {
            w->h->object(w->ev.type, w->ev.pod.raw, w->ev.pod.raw_len, w->h->userdata);
        } else {
            w->h->pod(w->ev.type, &w->ev.pod, w->h->userdata);
        }
        /* The initial burst of a streaming list is not ordered by
         * resourceVersion; only the end marker gives a resumable one. */
        if (w->mode == MODE_WATCH || w->marker_seen) {
            set_rv(w, w->ev.pod.resource_version);
        }
        break;
    case KRC_WATCH_BOOKMARK:
        atomic_fetch_add(&w->stats->events_bookmark, 1);
        set_rv(w, w->ev.pod.resource_version);
        if (w->mode == MODE_STREAMING_LIST && !w->marker_seen && w->ev.initial_events_end) {
            long long now = krc_clock_mono_ms();

            /* stamped now, not at the chunk's end: /readyz never sees the
             * sync done with an older delivery time */
            atomic_store(&w->stats->last_ok_mono_ms, now);
            w->marker_seen = 1;
            w->synced = 1;
            w->denied_logged = 0;
            w->h->sync_end(w->h->userdata);
            atomic_store(&w->stats->synced, 1);
            atomic_store(&w->stats->last_sync_mono_ms, now);
            krc_log(KRC_LOG_INFO, "%s sync complete (streaming list, %s) at resourceVersion %s",
                    w->what, scope(w), w->rv);
        }
        break;
    case KRC_WATCH_ERROR: {
        const struct krc_kube_status *st = &w->ev.status;
        atomic_fetch_add(&w->stats->events_error, 1);
        if (st->code == 410 || (st->reason != NULL && (strcmp(st->reason, "Expired") == 0 ||
                                                       strcmp(st->reason, "Gone") == 0))) {
            krc_error_set(&w->stop_err, KRC_EGONE, "watch expired: %s",
                          st->message ? st->message : "410 Gone");
            return stop_stream(w, KRC_EGONE);
        }
        krc_error_set(&w->stop_err, KRC_EHTTP, "watch ERROR event: %d %s: %s", st->code,
                      st->reason ? st->reason : "", st->message ? st->message : "");
        w->stop_err.http_status = st->code;
        return stop_stream(w, (st->code == 400 || st->code == 422) ? KRC_EUNSUPPORTED : KRC_EHTTP);
    }
    }
    return 0;
}

/* A line over max_line ended; only its head was kept. */
static void on_oversize(const char *head, size_t head_len, size_t size, void *userdata)
{
    struct wctx *w = userdata;
    struct krc_kube_ident id;

    if (w->stop != 0) {
        return;
    }
    skip_object(w, SKIP_OVERSIZED, -1, head, head_len, size, NULL, &id);
    /* Past a complete line the resourceVersion moves on to the skipped
     * event's, when its head names one: a resume then does not replay it
     * (it would only be skipped again). A line cut by the end of the stream
     * keeps the last one, so its event is read again in full. */
    if (!w->finishing && (w->mode == MODE_WATCH || w->marker_seen) &&
        (strcmp(id.type, "ADDED") == 0 || strcmp(id.type, "MODIFIED") == 0 ||
         strcmp(id.type, "DELETED") == 0)) {
        set_rv(w, id.resource_version);
    }
}

static int on_watch_data(const char *data, size_t len, void *userdata)
{
    struct wctx *w = userdata;
    long long now = krc_clock_mono_ms();
    int rc;

    atomic_fetch_add(&w->stats->bytes, (long long)len);
    /* liveness only: readiness waits for a decoded event or bookmark */
    atomic_store(&w->stats->heartbeat_mono_ms, now);
    rc = krc_linebuf_feed(&w->lb, data, len, on_line, on_oversize, w);
    chunk_done(w, now);
    if (rc == KRC_ENOMEM && w->stop == 0) {
        /* A line was lost: abandon the stream and resume from the last good
         * resourceVersion, which delivers it again. */
        krc_error_set(&w->stop_err, KRC_ENOMEM, "out of memory buffering a watch line");
        w->stop = KRC_ENOMEM;
    }
    return w->stop != 0;
}

/* --- list items ------------------------------------------------------- */

static long long list_index(const struct wctx *w)
{
    return (long long)(krc_list_framer_item_count(&w->lf) + krc_list_framer_skipped_count(&w->lf)) -
           1;
}

static int on_item(const char *json, size_t len, void *userdata)
{
    struct wctx *w = userdata;
    struct krc_error perr;
    int rc;

    krc_error_clear(&perr);
    rc = w->generic ? krc_kube_object_meta_parse(json, len, &w->item, &perr)
                    : krc_pod_info_parse(json, len, &w->item, &perr);
    if (rc == KRC_ENOMEM) {
        return rc; /* the list fails and is read again */
    }
    if (rc < 0) {
        /* One bad item must not hide the others: name it and go on. */
        struct krc_kube_ident id;
        skip_object(w, SKIP_UNDECODABLE, list_index(w), json, len, len, perr.msg, &id);
        return 0;
    }
    delivered(w);
    if (w->generic) {
        w->h->object(KRC_WATCH_ADDED, json, len, w->h->userdata);
    } else {
        w->h->pod(KRC_WATCH_ADDED, &w->item, w->h->userdata);
    }
    return 0;
}

/* An item over max_item was read to its end; only its head was kept. */
static void on_list_skip(size_t index, const char *head, size_t head_len, size_t size,
                         void *userdata)
{
    struct wctx *w = userdata;
    struct krc_kube_ident id;
    skip_object(w, SKIP_OVERSIZED, (long long)index, head, head_len, size, NULL, &id);
}

static int on_list_data(const char *data, size_t len, void *userdata)
{
    struct wctx *w = userdata;
    long long now = krc_clock_mono_ms();
    int rc;

    atomic_fetch_add(&w->stats->bytes, (long long)len);
    atomic_store(&w->stats->heartbeat_mono_ms, now);
    rc = krc_list_framer_feed(&w->lf, data, len, on_item, w, &w->stop_err);
    chunk_done(w, now);
    if (rc < 0) {
        w->stop = rc;
        return 1;
    }
    return 0;
}

/* --- requests ----------------------------------------------------------- */

/* A list (watch 0) is paginated in MODE_WATCH and unpaginated (one full
 * list) in MODE_FULL_LIST. */
static int build_path(struct wctx *w, struct krc_buf *path, enum stream_mode mode, int watch,
                      const char *cont)
{
    struct krc_buf q;
    char tmp[32];
    int rc = 0;

    krc_buf_init(&q, URL_MAX);
    krc_buf_reset(path);
    if (watch) {
        int t =
            (int)krc_backoff_rand_range(&w->pacing.conn, w->o->timeout_min_s, w->o->timeout_max_s);
        rc |= krc_kube_query_add(&q, "watch", "true");
        rc |= krc_kube_query_add(&q, "allowWatchBookmarks", "true");
        if (mode == MODE_STREAMING_LIST) {
            rc |= krc_kube_query_add(&q, "sendInitialEvents", "true");
            rc |= krc_kube_query_add(&q, "resourceVersionMatch", "NotOlderThan");
        } else {
            rc |= krc_kube_query_add(&q, "resourceVersion", w->rv);
        }
        snprintf(tmp, sizeof(tmp), "%d", t);
        rc |= krc_kube_query_add(&q, "timeoutSeconds", tmp);
    } else if (mode == MODE_WATCH) {
        snprintf(tmp, sizeof(tmp), "%d", w->o->page_size);
        rc |= krc_kube_query_add(&q, "limit", tmp);
        if (cont != NULL && *cont != '\0') {
            rc |= krc_kube_query_add(&q, "continue", cont);
        }
    }
    if (w->o->label_selector != NULL && *w->o->label_selector != '\0') {
        rc |= krc_kube_query_add(&q, "labelSelector", w->o->label_selector);
    }
    if (rc == 0) {
        rc = krc_buf_printf(path, "%s?%s", krc_buf_str(&w->base_path), krc_buf_str(&q));
    }
    krc_buf_cleanup(&q);
    return rc < 0 ? KRC_ENOMEM : 0;
}

/* GET path, its body to on_data (list: a LIST, else a watch stream). */
static int request(struct wctx *w, const char *path, int list, krc_http_data_cb on_data,
                   struct krc_error *err)
{
    if (w->o->metadata_only) {
        return krc_kube_stream_accept(w->client, path, list ? ACCEPT_META_LIST : ACCEPT_META_WATCH,
                                      w->o->idle_timeout_ms, on_data, w, w->o->cancel, err);
    }
    return krc_kube_stream(w->client, path, w->o->idle_timeout_ms, on_data, w, w->o->cancel, err);
}

/* Run one watch stream (plain or streaming list). */
static int run_stream(struct wctx *w, enum stream_mode mode, struct krc_error *err)
{
    struct krc_buf path;
    int rc;

    krc_buf_init(&path, URL_MAX);
    if (build_path(w, &path, mode, 1, NULL) < 0) {
        krc_buf_cleanup(&path);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    w->mode = mode;
    w->marker_seen = 0;
    w->stream_events = 0;
    w->stop = 0;
    krc_error_clear(&w->stop_err);
    krc_linebuf_reset(&w->lb);
    if (mode == MODE_STREAMING_LIST) {
        w->h->sync_begin(w->h->userdata);
    }
    rc = request(w, krc_buf_str(&path), 0, on_watch_data, err);
    if (rc == 0 && w->stop == 0) {
        /* A final line without a newline still counts. */
        w->finishing = 1;
        krc_linebuf_finish(&w->lb, on_line, on_oversize, w);
        w->finishing = 0;
        chunk_done(w, krc_clock_mono_ms());
    }
    if (w->stop != 0) {
        rc = w->stop;
        if (err != NULL) {
            *err = w->stop_err;
        }
    }
    krc_buf_cleanup(&path);
    return rc;
}

/* Paginated LIST; on success the list's resourceVersion is in w->rv. */
static int run_list(struct wctx *w, struct krc_error *err)
{
    struct krc_buf path;
    char *cont = NULL;
    int rc = 0;
    long long items = 0;
    int pages = 0;
    int full = 0; /* the fallback after an expired continue token */
    long long skipped0 =
        atomic_load(&w->stats->skipped_oversized) + atomic_load(&w->stats->skipped_undecodable);
    long long skipped;

    krc_buf_init(&path, URL_MAX);
    w->h->sync_begin(w->h->userdata);
    for (;;) {
        const char *next;
        if (build_path(w, &path, full ? MODE_FULL_LIST : MODE_WATCH, 0, cont) < 0) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
            break;
        }
        krc_list_framer_reset(&w->lf);
        w->stop = 0;
        krc_error_clear(&w->stop_err);
        rc = request(w, krc_buf_str(&path), 1, on_list_data, err);
        if (rc == 0 && w->stop == 0) {
            rc = krc_list_framer_finish(&w->lf, &w->stop_err);
            if (rc < 0) {
                w->stop = rc;
            }
        }
        if (w->stop != 0) {
            rc = w->stop;
            if (err != NULL) {
                *err = w->stop_err;
                krc_error_prefix(err, "GET %s", krc_buf_str(&w->base_path));
            }
        }
        if (rc == KRC_EGONE && cont != NULL && !full) {
            /* The continue token expired (the snapshot was compacted).
             * Starting over with pages could expire again and again on a
             * large cluster: like client-go's pager (FullListIfExpired),
             * list everything in one request. Pods applied from the first
             * pages are applied again: that changes nothing. */
            krc_log(KRC_LOG_INFO,
                    "%s list (%s): continue token expired after %d page(s) (%s); listing all "
                    "%s in one request",
                    w->what, scope(w), pages, err != NULL ? err->msg : "410", w->items);
            atomic_fetch_add(&w->stats->expired, 1);
            full = 1;
            pages = 0;
            items = 0;
            krc_free(cont);
            cont = NULL;
            krc_error_clear(err);
            continue;
        }
        if (rc < 0) {
            break;
        }
        pages++;
        items +=
            (long long)(krc_list_framer_item_count(&w->lf) + krc_list_framer_skipped_count(&w->lf));
        next = krc_list_framer_continue(&w->lf);
        krc_free(cont);
        cont = NULL;
        if (next == NULL || *next == '\0') {
            const char *rv = krc_list_framer_resource_version(&w->lf);
            if (rv == NULL || *rv == '\0') {
                rc = krc_error_set(err, KRC_EPARSE, "GET %s: list has no metadata.resourceVersion",
                                   krc_buf_str(&w->base_path));
                break;
            }
            set_rv(w, rv);
            break;
        }
        cont = krc_strdup(next);
        if (cont == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
            break;
        }
    }
    krc_free(cont);
    krc_buf_cleanup(&path);
    if (rc == KRC_EPARSE || rc == KRC_ETOOBIG) {
        /* the body was not a list krc can frame (its items are skipped one
         * by one; this is the whole body) */
        atomic_fetch_add(&w->stats->malformed_lists, 1);
    }
    if (rc == 0) {
        long long now = krc_clock_mono_ms();

        atomic_store(&w->stats->last_ok_mono_ms, now); /* a whole list read */
        w->synced = 1;
        w->h->sync_end(w->h->userdata);
        atomic_store(&w->stats->synced, 1);
        atomic_store(&w->stats->last_sync_mono_ms, now);
        skipped = atomic_load(&w->stats->skipped_oversized) +
                  atomic_load(&w->stats->skipped_undecodable) - skipped0;
        w->denied_logged = 0;
        if (skipped > 0) {
            krc_log(KRC_LOG_INFO,
                    "%s sync complete (list, %s): %lld %s in %d pages, %lld of them skipped "
                    "(named above), resourceVersion %s",
                    w->what, scope(w), items, w->items, pages, skipped, w->rv);
        } else {
            krc_log(KRC_LOG_INFO,
                    "%s sync complete (list, %s): %lld %s in %d pages, resourceVersion %s", w->what,
                    scope(w), items, w->items, pages, w->rv);
        }
    }
    return rc;
}

static int sleep_delay(struct wctx *w, int64_t delay, enum krc_log_level level, const char *what,
                       const struct krc_error *e, int retry_after)
{
    if (retry_after > 0) {
        delay = (int64_t)retry_after * 1000;
    }
    krc_log(level, "%s (%s) failed: %s; retrying in %.1fs", what, scope(w),
            e->msg[0] ? e->msg : krc_strerror(e->code), (double)delay / 1000.0);
    return krc_clock_sleep_ms(delay, w->o->cancel);
}

static int sleep_backoff_level(struct wctx *w, enum krc_log_level level, const char *what,
                               const struct krc_error *e, int retry_after)
{
    return sleep_delay(w, krc_watch_pacing_failure(&w->pacing, krc_clock_mono_ms()), level, what, e,
                       retry_after);
}

static int sleep_backoff(struct wctx *w, const char *what, const struct krc_error *e,
                         int retry_after)
{
    return sleep_backoff_level(w, KRC_LOG_WARN, what, e, retry_after);
}

/* The level of a 403 or 404 (first: the pods' level). Another resource's
 * watch is optional to krc (the change tracker's): its first denial since
 * it last synced is a warning, the retries that follow are logged at debug
 * level only (RBAC without it, or an API server that does not serve the
 * resource, would otherwise log every 30 s for ever). */
static enum krc_log_level denied_level(struct wctx *w, enum krc_log_level first)
{
    if (!w->generic) {
        return first;
    }
    if (w->denied_logged) {
        return KRC_LOG_DEBUG;
    }
    w->denied_logged = 1;
    return KRC_LOG_WARN;
}

/* After a failed list or watch that started at started (monotonic ms): log,
 * count and wait as the error rc (detail in *e) deserves. Returns 0 to go on,
 * 1 when cancelled while waiting. */
static int after_failure(struct wctx *w, int rc, const char *what, const struct krc_error *e,
                         int64_t started)
{
    int64_t delay;

    switch (rc) {
    case KRC_EGONE:
        atomic_fetch_add(&w->stats->expired, 1);
        atomic_fetch_add(&w->stats->relists, 1);
        krc_log(KRC_LOG_INFO, "%s (%s): %s; relisting", what, scope(w), e->msg);
        w->synced = 0;
        w->rv[0] = '\0';
        /* A relist right after a relist means the server keeps expiring
         * us: back off instead of hammering it. */
        if (krc_clock_mono_ms() - started < 1000 && sleep_backoff(w, what, e, 0)) {
            return 1;
        }
        break;
    case KRC_ETIMEOUT:
        if (w->synced || w->mode == MODE_STREAMING_LIST) {
            atomic_fetch_add(&w->stats->silent_streams, 1);
            krc_log(KRC_LOG_WARN, "%s (%s): %s; no event or bookmark, reconnecting", what, scope(w),
                    e->msg);
            break;
        }
        if (sleep_backoff(w, what, e, 0)) {
            return 1;
        }
        break;
    case KRC_EPARSE:
    case KRC_ETOOBIG:
        /* A response body that could not be framed (a LIST that is not a
         * list; bad watch lines and items are skipped one by one and never
         * end up here). Retry at once when the request had run for a
         * while; a server that keeps sending such bodies gets backoff of
         * its own: the server answered, so an outage's backoff does not
         * apply (after one, a bad line used to cost 20 s and more). */
        delay = krc_watch_pacing_bad_line(&w->pacing, krc_clock_mono_ms(),
                                          krc_clock_mono_ms() - started);
        if (delay > 0) {
            if (sleep_delay(w, delay, KRC_LOG_WARN, what, e, 0)) {
                return 1;
            }
        } else {
            krc_log(KRC_LOG_WARN, "%s (%s): %s; retrying at once", what, scope(w), e->msg);
        }
        break;
    case KRC_ERATELIMIT:
        if (sleep_backoff(w, what, e, e->retry_after > 0 ? e->retry_after : 0)) {
            return 1;
        }
        break;
    case KRC_ENOMEM:
        krc_log(KRC_LOG_ERROR, "%s (%s): out of memory; retrying", what, scope(w));
        if (sleep_backoff(w, what, e, 0)) {
            return 1;
        }
        break;
    case KRC_EAUTH:
        /* Credentials or RBAC may be fixed without restarting us. */
        if (sleep_backoff_level(w, denied_level(w, KRC_LOG_ERROR), what, e, 0)) {
            return 1;
        }
        break;
    case KRC_ENOTFOUND:
        if (sleep_backoff_level(w, denied_level(w, KRC_LOG_WARN), what, e,
                                e->retry_after > 0 ? e->retry_after : 0)) {
            return 1;
        }
        break;
    default:
        if (sleep_backoff(w, what, e, e->retry_after > 0 ? e->retry_after : 0)) {
            return 1;
        }
        break;
    }
    return 0;
}

/* A resource path "api/<version>/<plural>" or "apis/<group>/<version>/<plural>",
 * lower-case letters, digits, '.' and '-' between the slashes. */
static int resource_ok(const char *r)
{
    size_t segs = 1;
    size_t seg_len = 0;
    const char *p;

    if (strncmp(r, "api/", 4) != 0 && strncmp(r, "apis/", 5) != 0) {
        return 0;
    }
    for (p = r; *p != '\0'; p++) {
        if (*p == '/') {
            if (seg_len == 0) {
                return 0;
            }
            segs++;
            seg_len = 0;
        } else if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-') {
            seg_len++;
        } else {
            return 0;
        }
    }
    return seg_len > 0 && segs == (r[3] == '/' ? 3u : 4u) && p - r < WHAT_MAX;
}

/* The scope-independent part of the set-up: what the messages call the
 * resource, the collection's path. */
static int setup_resource(struct wctx *w, struct krc_error *err)
{
    const struct krc_watch_options *o = w->o;
    const char *r = o->resource;
    int rc;

    if (r == NULL) {
        if (o->metadata_only) {
            return krc_error_set(err, KRC_EINVAL,
                                 "watch: metadata_only is for other resources than pods");
        }
        if (w->h->pod == NULL) {
            return krc_error_set(err, KRC_EINVAL, "pod watch: no pod callback");
        }
        w->what = "pod";
        w->items = "pods";
        rc = o->namespace != NULL
                 ? krc_buf_printf(&w->base_path, "/api/v1/namespaces/%s/pods", o->namespace)
                 : krc_buf_append_str(&w->base_path, "/api/v1/pods");
    } else {
        const char *slash;
        const char *gv;
        if (!resource_ok(r)) {
            return krc_error_set(err, KRC_EINVAL,
                                 "watch: resource \"%.200s\" is not a collection path like "
                                 "\"apis/apps/v1/replicasets\" or \"api/v1/nodes\"",
                                 r);
        }
        if (w->h->object == NULL) {
            return krc_error_set(err, KRC_EINVAL, "watch of %s: no object callback", r);
        }
        w->generic = 1;
        slash = strrchr(r, '/');
        gv = r[3] == '/' ? r + 4 : r + 5; /* after "api/" or "apis/" */
        /* "apps/v1 replicasets", "v1 nodes" */
        snprintf(w->what_buf, sizeof(w->what_buf), "%.*s %s", (int)(slash - gv), gv, slash + 1);
        w->what = w->what_buf;
        w->items = "objects";
        rc = o->namespace != NULL ? krc_buf_printf(&w->base_path, "/%.*s/namespaces/%s/%s",
                                                   (int)(slash - r), r, o->namespace, slash + 1)
                                  : krc_buf_printf(&w->base_path, "/%s", r);
    }
    snprintf(w->what_stream, sizeof(w->what_stream), "streaming %s list", w->what);
    snprintf(w->what_list, sizeof(w->what_list), "%s list", w->what);
    snprintf(w->what_watch, sizeof(w->what_watch), "%s watch", w->what);
    if (rc < 0) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory setting up the %s watch", w->what);
    }
    return 0;
}

int krc_watch_run(struct krc_kube_client *client, const struct krc_watch_options *opts,
                  const struct krc_watch_handler *handler, struct krc_error *err)
{
    struct wctx w;
    int streaming = opts->streaming_list; /* 1: try, 0: use LIST */
    int streaming_failures = 0;
    int rc = 0;

    memset(&w, 0, sizeof(w));
    w.o = opts;
    w.h = handler;
    w.client = client;
    w.stats = opts->stats != NULL ? opts->stats : &dummy_stats;
    krc_watch_pacing_init(&w.pacing, opts->backoff_initial_ms, opts->backoff_max_ms, 120000,
                          (uint64_t)krc_clock_mono_ms() ^ ((uint64_t)getpid() << 32));
    krc_buf_init(&w.base_path, 1024);
    krc_watch_event_init(&w.ev);
    krc_pod_info_init(&w.item);
    rc = setup_resource(&w, err);
    if (rc < 0) {
        goto out;
    }
    if (krc_linebuf_init(&w.lb, opts->max_line) < 0 ||
        krc_list_framer_init(&w.lf, opts->max_line) < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory setting up the %s watch", w.what);
        goto out;
    }
    krc_list_framer_set_skip(&w.lf, on_list_skip);

    while (!cancelled(&w)) {
        struct krc_error e;
        int64_t started = krc_clock_mono_ms();
        const char *what;

        atomic_store(&w.stats->heartbeat_mono_ms, started);

        krc_error_clear(&e);
        if (!w.synced) {
            atomic_store(&w.stats->synced, 0);
            if (streaming) {
                what = w.what_stream;
                rc = run_stream(&w, MODE_STREAMING_LIST, &e);
                if (!w.synced && rc == 0) {
                    /* Ended without its end marker: an older server, or one
                     * that ignored allowWatchBookmarks. */
                    rc = krc_error_set(&e, KRC_EUNSUPPORTED,
                                       "stream ended without the initial-events-end bookmark");
                }
            } else {
                what = w.what_list;
                rc = run_list(&w, &e);
                if (rc == 0) {
                    /* synced: watch from the list's resourceVersion at once */
                    krc_watch_pacing_healthy(&w.pacing);
                    continue;
                }
            }
        } else {
            what = w.what_watch;
            atomic_fetch_add(&w.stats->reconnects, 1);
            rc = run_stream(&w, MODE_WATCH, &e);
        }
        if (cancelled(&w) || rc == KRC_ECANCELED) {
            break;
        }
        if (w.synced) {
            what = w.what_watch;
        }
        if (rc == 0) {
            /* The server closed the stream (timeoutSeconds). A watch that ends
             * at once without any event is treated as an error, like client-go. */
            if (w.stream_events == 0 && krc_clock_mono_ms() - started < 1000) {
                krc_error_set(&e, KRC_EIO, "watch closed immediately without events");
                if (sleep_backoff(&w, what, &e, 0)) {
                    break;
                }
            } else {
                krc_watch_pacing_healthy(&w.pacing);
            }
            continue;
        }
        atomic_fetch_add(&w.stats->request_errors, 1);
        if (rc != KRC_EPARSE && rc != KRC_ETOOBIG && rc != KRC_EGONE &&
            !(rc == KRC_ETIMEOUT && w.synced)) {
            /* the API server could not be reached or refused us */
            atomic_store(&w.stats->last_error_mono_ms, krc_clock_mono_ms());
        }
        if (!w.synced && streaming && w.mode == MODE_STREAMING_LIST &&
            (rc == KRC_EUNSUPPORTED || e.http_status == 400 || e.http_status == 422 ||
             (rc == KRC_ETIMEOUT && ++streaming_failures >= STREAMING_LIST_ATTEMPTS))) {
            streaming = 0;
            if (w.generic) {
                krc_log(KRC_LOG_INFO,
                        "streaming list not available (%s); using paginated LIST for %s (%s)",
                        e.msg, w.what, scope(&w));
            } else {
                krc_log(KRC_LOG_INFO,
                        "streaming list not available (%s); using paginated LIST for %s", e.msg,
                        scope(&w));
            }
            continue;
        }
        if (after_failure(&w, rc, what, &e, started)) {
            break; /* cancelled while waiting: a clean stop, not a failure */
        }
    }
    rc = 0;
out:
    krc_linebuf_cleanup(&w.lb);
    krc_list_framer_cleanup(&w.lf);
    krc_watch_event_cleanup(&w.ev);
    krc_pod_info_cleanup(&w.item);
    krc_buf_cleanup(&w.base_path);
    return rc;
}
