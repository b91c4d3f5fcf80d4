/* The Kubernetes Event destination: an events.k8s.io/v1 Event on the pod
 * whose container restarted (type Warning, reason RestartDiagnosed), so that
 * `kubectl describe pod` and every event exporter show the diagnosis. The
 * sink (krc_sink_kube_event, alert/sink.h) POSTs it through krc's Kubernetes
 * client; this header has the pure body builder it uses. The name is the
 * restart's, so one restart has one Event whichever krc process writes it
 * (a second create is 409 AlreadyExists: krc_sink_result.already_exists). */
#ifndef KRC_KUBE_EVENT_H
#define KRC_KUBE_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/model/report.h"
#include "krc/model/restart_ident.h"
#include "krc/util/error.h"

#define KRC_KUBE_EVENT_REASON "RestartDiagnosed"
#define KRC_KUBE_EVENT_ACTION "Diagnose"
#define KRC_KUBE_EVENT_CONTROLLER KRC_REPORTING_CONTROLLER
/* The API server's limits (events.k8s.io/v1 validation). */
#define KRC_KUBE_EVENT_NOTE_MAX 1024 /* bytes */
#define KRC_KUBE_EVENT_FIELD_MAX 128 /* reportingInstance, action, reason */
#define KRC_KUBE_EVENT_NAME_MAX 253  /* a DNS subdomain */

struct krc_kube_event_in {
    const char *namespace; /* the pod's (required) */
    const char *pod;       /* required */
    const char *pod_uid;   /* may be NULL */
    const char *container; /* NULL: the event is on the pod as a whole */
    int init_container;    /* fieldPath spec.initContainers{name} */
    const char *cause;     /* cause code name, e.g. "OOMKilled" */
    const char *confidence;
    const char *summary;            /* one line without log text (the diagnosis'
                                       summary_unquoted); may be NULL */
    const char *reporting_instance; /* krc's pod name (required) */
    int64_t time_ns;                /* eventTime (Unix ns): microseconds are kept */
    /* The restart the Event is about (model/restart_ident.h), or NULL (or an
     * identity without uid or container): then the name is from time_ns. */
    const struct krc_restart_ident *restart;
    /* The amendment of that restart's first Event (its device reported
     * Unhealthy later, detect/dev_health.h): a second Event, named
     * "<pod>.krc-<16 hex>-amended", so that it is not answered 409. */
    int amended;
};

/* The Event's metadata.name for a restart: "<pod>.krc-<16 hex>", the hex the
 * first 64 bits of the SHA-256 of the restart's identity (pod UID,
 * container, and its termination: finishedAt, containerID and restartCount,
 * or restartCount alone without a finishedAt), so that every krc process
 * names one restart's Event alike and a second create of it is answered
 * 409 AlreadyExists. The pod part is cut so the name stays a DNS subdomain
 * of at most 253 characters. out needs KRC_KUBE_EVENT_NAME_MAX + 1 bytes. */
void krc_kube_event_restart_name(const char *pod, const struct krc_restart_ident *id, char *out,
                                 size_t outsz);

/* The Event as JSON (caller frees with krc_free): the note is
 * "<cause> (<confidence> confidence): <summary>", valid UTF-8 (bad bytes
 * become U+FFFD) and cut on a code point with "…" to at most 1024 bytes;
 * metadata.name is krc_kube_event_restart_name's with a known restart, else
 * "<pod>.<hex time_ns>" like client-go's recorder (the pod part shortened so
 * the name stays a DNS subdomain). KRC_EINVAL names a missing field. */
int krc_kube_event_build(const struct krc_kube_event_in *in, char **ret, struct krc_error *err);

/* The namespace of a built Event (metadata.namespace) into out; KRC_EPARSE
 * when body is not one. */
int krc_kube_event_namespace(const char *body, char *out, size_t outsz, struct krc_error *err);

#endif
