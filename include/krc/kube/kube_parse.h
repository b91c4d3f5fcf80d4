/* Kubernetes JSON (Pod, Event lists, Node) -> struct krc_report.
 *
 * Used by `krc explain` on files and by the collector on API responses.
 * The input is `len` bytes, not necessarily NUL-terminated. cJSON trees
 * are built and freed inside each call; nothing of them is kept.
 *
 * Error messages name the field or position but not the source: the caller
 * prefixes the file name or URL (krc_error_prefix), e.g.
 * "pod.json: not a Pod (kind \"Node\")", "events.json: not JSON at line 3,
 * column 7 near '...'". On error the report is left as it was before the
 * call, except for krc_kube_parse_pod, which leaves the pod part empty. */
#ifndef KRC_KUBE_PARSE_H
#define KRC_KUBE_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"
#include "krc/model/report.h"

/* Largest document accepted (KRC_ETOOBIG beyond). */
#define KRC_KUBE_PARSE_MAX (64u * 1024u * 1024u)

/* Replace the pod part of `r` (identity, labels, containers with spec and
 * status merged) with the Pod in `json`. A `List` holding exactly one Pod
 * is accepted too. KRC_EPARSE on malformed JSON, KRC_EINVAL when the
 * document is not a Pod or a field has the wrong type. */
int krc_kube_parse_pod(const char *json, size_t len, struct krc_report *r, struct krc_error *err);

/* Append the events of `json` to `r`: a core `List` of v1 Events (with or
 * without kind/apiVersion on items), the API server's `EventList`, a bare
 * JSON array of events, or one Event; events.k8s.io/v1 field names
 * (regarding, note, deprecated*) are understood. All events are kept; see
 * krc_report_retain_pod_events() to filter. */
int krc_kube_parse_events(const char *json, size_t len, struct krc_report *r,
                          struct krc_error *err);

/* Replace the node part of `r` with the Node in `json`. */
int krc_kube_parse_node(const char *json, size_t len, struct krc_report *r, struct krc_error *err);

/* Read the ResourceClaim (resource.k8s.io/v1) in `json` into
 * r->claim_statuses[i], the claim status that names it: the devices of
 * status.allocation.devices.results {request, driver, pool, device} and the
 * conditions status.devices gives each (KEP-4817). Capped lists; a field of
 * the wrong type is left out with a note naming the claim. KRC_EPARSE on
 * malformed JSON, KRC_EINVAL when it is not a ResourceClaim. */
int krc_kube_parse_resource_claim(const char *json, size_t len, struct krc_report *r, size_t i,
                                  struct krc_error *err);

#endif
