/* trackConfigChanges: a crashing pod's ConfigMaps and Secrets, metadata
 * only (config_changes.h). */
#include "krc/collect/config_changes.h"

#include <stdio.h>
#include <string.h>

#include "krc/model/report.h"
#include "krc/util/buf.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

/* A PartialObjectMetadata is small, but managedFields and annotations (a
 * kubectl last-applied-configuration) can make it grow: the cap. */
#define META_MAX (512 * 1024)
#define META_IDLE_MS 10000

static int on_meta(const char *data, size_t len, void *ud)
{
    struct krc_buf *b = ud;
    return krc_buf_append(b, data, len) < 0 ? 1 : 0;
}

/* The body may hold an annotation with a Secret's data (kubectl's
 * last-applied-configuration): wiped before it is freed. */
static void wipe(struct krc_buf *b)
{
    for (volatile char *p = b->data; p != NULL && p < b->data + b->cap; p++) {
        *p = 0;
    }
    krc_buf_cleanup(b);
}

static int read_one(struct krc_kube_client *c, struct krc_track *t,
                    const struct krc_track_config_ref *ref, struct krc_report *rep,
                    int *denied_noted)
{
    int secret = strcmp(ref->kind, "Secret") == 0;
    char path[512];
    struct krc_buf b;
    struct krc_error e;
    struct krc_track_config_meta meta;
    int rc;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/%s/%s", rep->namespace,
             secret ? "secrets" : "configmaps", ref->name);
    krc_buf_init(&b, META_MAX);
    krc_error_clear(&e);
    rc = krc_kube_stream_accept(c, path, KRC_COLLECT_CONFIG_ACCEPT, META_IDLE_MS, on_meta, &b, NULL,
                                &e);
    if (rc == 0) {
        rc = krc_track_config_meta_parse(b.data != NULL ? b.data : "", b.len, &meta, &e);
    }
    wipe(&b);
    if (rc == 0) {
        const char *kind;
        const char *name;
        krc_workload_or_pod(rep->workload_kind, rep->workload_name, rep->name, &kind, &name);
        rc = krc_track_note_config(t, rep->namespace, kind, name, ref, &meta);
        return rc < 0 ? rc : 1;
    }
    if (rc == KRC_ENOMEM) {
        return rc;
    }
    if (rc == KRC_ENOTFOUND) {
        krc_log(KRC_LOG_DEBUG, "%s %s/%s not found: no change to say about it", ref->kind,
                rep->namespace, ref->name);
        return 0;
    }
    if (rc == KRC_EAUTH && e.http_status == 403) {
        if (!*denied_noted) {
            *denied_noted = 1;
            return krc_report_add_note(rep,
                                       "%s %s not readable (403: trackConfigChanges needs get "
                                       "on configmaps and secrets): %s",
                                       ref->kind, ref->name, e.msg) < 0
                       ? KRC_ENOMEM
                       : 0;
        }
        return 0;
    }
    return krc_report_add_note(rep, "%s %s metadata unavailable: %s", ref->kind, ref->name,
                               e.msg[0] ? e.msg : krc_strerror(rc)) < 0
               ? KRC_ENOMEM
               : 0;
}

int krc_collect_config_changes(struct krc_kube_client *c, struct krc_track *t, const char *pod_json,
                               size_t len, struct krc_report *rep)
{
    struct krc_track_config_ref refs[KRC_TRACK_CONFIG_REFS];
    size_t n = 0, more = 0;
    struct krc_error e;
    int denied = 0;
    int read = 0;

    if (t == NULL || pod_json == NULL || rep->namespace == NULL || rep->name == NULL) {
        return 0;
    }
    krc_error_clear(&e);
    if (krc_track_config_refs(pod_json, len, refs, KRC_TRACK_CONFIG_REFS, &n, &more, &e) < 0) {
        krc_log(KRC_LOG_DEBUG, "ConfigMap/Secret references of %s/%s not read: %s", rep->namespace,
                rep->name, e.msg);
        return 0;
    }
    if (more > 0) {
        krc_log(KRC_LOG_DEBUG, "%s/%s references %zu more ConfigMaps/Secrets than the %d read",
                rep->namespace, rep->name, more, KRC_TRACK_CONFIG_REFS);
    }
    for (size_t i = 0; i < n; i++) {
        int rc = read_one(c, t, &refs[i], rep, &denied);
        if (rc < 0) {
            return rc;
        }
        read += rc;
    }
    return read;
}
