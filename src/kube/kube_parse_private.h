/* Private to src/kube: what kube_parse.c shares with kube_parse_fields.c. */
#ifndef KRC_KUBE_PARSE_PRIVATE_H
#define KRC_KUBE_PARSE_PRIVATE_H

#include <cjson/cJSON.h>

#include "krc/model/report.h"
#include "krc/util/error.h"

/* "a string", "an object", ... for messages. */
const char *krc_kube_parse_type_name(const cJSON *v);

/* The fields Kubernetes 1.33-1.37 added to say why a container restarted
 * (docs/design/kubernetes-1.33-fields.md), read from `pod` into `r` after
 * kube_parse has read the rest (its containers exist). Optional fields: one
 * of the wrong type is left out with a note naming it, the pod is still
 * read. 0, or KRC_ENOMEM. */
int krc_kube_parse_pod_fields(const cJSON *pod, struct krc_report *r, struct krc_error *err);

/* What the ResourceClaim `claim` says of its devices, into c (its previous
 * devices replaced; c->fetched set): status.allocation.devices.results and
 * the conditions of status.devices. A field of the wrong type is left out
 * with a note in r naming the claim and the field. 0, or KRC_ENOMEM. */
int krc_kube_parse_claim_fields(const cJSON *claim, struct krc_report *r,
                                struct krc_report_claim_status *c, struct krc_error *err);

#endif
