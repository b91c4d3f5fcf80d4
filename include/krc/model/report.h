/* The restart report: everything known about one container restart, owned
 * and free of JSON nodes. It is filled by kube_parse (from pod, events and
 * node JSON) or by the collector, read by diagnose and the Slack formatter.
 *
 * Ownership: every string and array inside a struct krc_report belongs to
 * it and is released by krc_report_cleanup()/krc_report_free(). Strings may
 * be NULL when the field was absent. Timestamps are unix seconds; 0 means
 * "absent" (and also 1970-01-01T00:00:00Z, which the kubelet writes for a
 * container that never started). */
#ifndef KRC_REPORT_H
#define KRC_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"
#include "krc/util/logtail.h"
#include "krc/util/redact.h"

/* Hard limit on the previous log kept in a report (bytes). */
#define KRC_REPORT_LOG_MAX (8u * 1024u * 1024u)
/* The reportingController of the Events krc itself writes on pods (the
 * kubernetes-event destination). They are krc's own earlier diagnoses, never
 * evidence of a later one: the event parser leaves them out. */
#define KRC_REPORTING_CONTROLLER "krc.io/kube-restart-collector"

/* A name -> value pair (labels, annotations, resource quantities). */
struct krc_kv {
    char *key;
    char *value;
};

struct krc_kv_list {
    struct krc_kv *items;
    size_t n;
    size_t cap;
};

/* A terminated container state (state.terminated or lastState.terminated). */
struct krc_report_term {
    int present;
    int exit_code;
    int exit_code_missing; /* the terminated state had no exitCode (a pasted, partial status) */
    int signal;            /* "signal" field, 0 when absent (never set with CRI runtimes) */
    char *reason;          /* OOMKilled, Error, Completed, StartError, ... */
    char *message;         /* runtime error or FallbackToLogsOnError log tail */
    int64_t started_at;    /* 0 when absent or 1970 (StartError) */
    int64_t finished_at;   /* 0 when absent */
    char *container_id;
};

/* A liveness or startup probe of the container spec, Kubernetes defaults
 * applied (initialDelaySeconds 0, periodSeconds 10, timeoutSeconds 1,
 * failureThreshold 3). */
struct krc_report_probe {
    int present;
    const char *handler; /* static "exec", "httpGet", "tcpSocket", "grpc" or "unknown" */
    int initial_delay;
    int period;
    int timeout;
    int failure_threshold;
    int64_t grace_period; /* probe-level terminationGracePeriodSeconds, -1 when absent */
};

/* ---- Fields Kubernetes 1.33-1.37 added to say why a container restarted
 * (docs/design/kubernetes-1.33-fields.md: the version of each and its
 * source). All of them are optional: a Pod of an older cluster leaves them
 * empty. Lists are capped (what was left out is counted in *_omitted) and
 * every text is cut at KRC_REPORT_FIELD_TEXT_MAX bytes (a UTF-8 boundary);
 * values the API may add later are kept as the text sent. */
#define KRC_REPORT_RULES_MAX 20         /* restartPolicyRules (the API allows 20) */
#define KRC_REPORT_RULE_CODES_MAX 255   /* exitCodes.values (the API allows 255) */
#define KRC_REPORT_RESIZE_MAX 8         /* resizePolicy entries (cpu, memory, ...) */
#define KRC_REPORT_HEALTH_MAX 16        /* allocatedResourcesStatus entries */
#define KRC_REPORT_DEVICES_MAX 64       /* resources[] of one of them */
#define KRC_REPORT_CONDITIONS_MAX 32    /* status.conditions */
#define KRC_REPORT_CLAIMS_MAX 32        /* status.resourceClaimStatuses */
#define KRC_REPORT_CLAIM_DEVICES_MAX 32 /* a ResourceClaim's allocated devices */
#define KRC_REPORT_CLAIM_CONDS_MAX 8    /* conditions of one of them */
#define KRC_REPORT_FIELD_TEXT_MAX 1024

/* spec.containers[].restartPolicyRules[] (KEP-5307; action RestartAllContainers:
 * KEP-5532). */
struct krc_report_restart_rule {
    char *action;       /* Restart, RestartAllContainers, or what was sent */
    int has_exit_codes; /* exitCodes was given */
    char *op;           /* exitCodes.operator: In / NotIn / what was sent; may be NULL */
    int *values;        /* exitCodes.values */
    size_t n_values;
    size_t values_omitted;
};

/* spec.containers[].resizePolicy[] (KEP-1287). */
struct krc_report_resize_policy {
    char *resource_name;  /* cpu, memory, ... */
    char *restart_policy; /* NotRequired / RestartContainer / what was sent */
};

/* containerStatuses[].allocatedResourcesStatus[].resources[] (KEP-4680). */
struct krc_report_device_health {
    char *resource_id;
    char *health;  /* Healthy / Unhealthy / Unknown / what was sent; may be NULL */
    char *message; /* e.g. "ECC error count exceeded threshold"; may be NULL */
};

/* containerStatuses[].allocatedResourcesStatus[] (KEP-4680). */
struct krc_report_resource_health {
    char *name; /* a resource name (nvidia.com/gpu) or "claim:<claim>/<request>" */
    struct krc_report_device_health *resources;
    size_t n_resources;
    size_t resources_omitted;
};

/* status.conditions[] of the pod. */
struct krc_report_pod_condition {
    char *type;
    char *status; /* True / False / Unknown */
    char *reason;
    char *message;
    int64_t last_transition;     /* lastTransitionTime, 0 when absent */
    int has_observed_generation; /* conditions[].observedGeneration (KEP-5067) */
    int64_t observed_generation;
};

/* One device a ResourceClaim was allocated (resource.k8s.io/v1 ResourceClaim
 * status.allocation.devices.results[]: request, driver, pool, device), with
 * what its driver reports of it in status.devices[] (same driver, pool and
 * device: conditions, KEP-4817). */
struct krc_report_claim_device {
    char *request; /* the claim's request it satisfies (may be "req/subreq") */
    char *driver;
    char *pool;
    char *device;
    int has_status; /* status.devices[] had an entry for it */
    struct krc_report_pod_condition *conditions;
    size_t n_conditions;
    size_t conditions_omitted;
};

/* status.resourceClaimStatuses[] (DRA, KEP-4381), and the ResourceClaim it
 * names when the collector read it (fetched 1). */
struct krc_report_claim_status {
    char *name;                /* the claim's name in pod.spec.resourceClaims */
    char *resource_claim_name; /* the ResourceClaim object; NULL when none was generated */
    int fetched;               /* the ResourceClaim was read (devices below) */
    int allocated;             /* it has status.allocation */
    struct krc_report_claim_device *devices;
    size_t n_devices;
    size_t devices_omitted;
};

enum krc_report_state {
    KRC_REPORT_STATE_NONE = 0,
    KRC_REPORT_STATE_WAITING,
    KRC_REPORT_STATE_RUNNING,
    KRC_REPORT_STATE_TERMINATED,
};

struct krc_report_container {
    char *name;
    int is_init;    /* declared in spec.initContainers / initContainerStatuses */
    int is_sidecar; /* init container with restartPolicy: Always */
    int has_status; /* appeared in containerStatuses / initContainerStatuses */
    char *image;
    int ready;
    int restart_count;
    int restart_count_known; /* the status gave restartCount (a pasted one may not) */
    enum krc_report_state state;
    char *state_reason;                /* waiting or terminated reason */
    char *state_message;               /* waiting or terminated message */
    int64_t state_started_at;          /* running.startedAt / terminated.startedAt */
    struct krc_report_term state_term; /* state.terminated, when state is TERMINATED */
    struct krc_report_term last;       /* lastState.terminated */
    struct krc_kv_list limits;         /* resources.limits: name -> quantity string */
    struct krc_kv_list requests;       /* resources.requests */
    int has_spec;                      /* declared in spec.containers / spec.initContainers */
    int has_liveness;
    int has_readiness;
    int has_startup;
    struct krc_report_probe liveness; /* present == has_liveness */
    struct krc_report_probe startup;  /* present == has_startup */
    char *termination_message_policy; /* File / FallbackToLogsOnError */
    /* Where the spec's environment comes from, for the diagnosis to name (literal values
     * are not kept: they may be secrets). env: variable name -> "value" (a literal),
     * "secret NAME key KEY", "configMap NAME key KEY", "fieldRef", "resourceFieldRef";
     * env_from: "secret NAME" / "configMap NAME" -> its prefix ("" without one). */
    struct krc_kv_list env;
    struct krc_kv_list env_from;
    /* env and env_from are the whole environment of the spec: the container
     * lists env or envFrom, or the Pod is an object the API server served
     * (metadata.resourceVersion), where an absent list means none. A spec
     * converted from `kubectl describe` or pasted by hand leaves it 0. */
    int env_known;
    /* The JVM heap options (-Xmx, -XX:MaxRAMPercentage, -XX:MaxRAMFraction) of the spec,
     * by where they were found: JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS,
     * JAVA_OPTS (literal values only), "command/args" -> the options, space-separated. */
    struct krc_kv_list jvm_heap;

    /* With has_status: its position in containerStatuses / initContainerStatuses. */
    int status_index;

    /* Kubernetes 1.33+ (see above). */
    char *restart_policy; /* the container's own restartPolicy (sidecars, KEP-5307) */
    struct krc_report_restart_rule *restart_rules;
    size_t n_restart_rules;
    size_t restart_rules_omitted;
    struct krc_report_resize_policy *resize_policy;
    size_t n_resize_policy;
    size_t resize_policy_omitted;
    char *stop_signal; /* containerStatuses[].stopSignal (KEP-4960), e.g. SIGTERM */
    struct krc_report_resource_health *resource_health; /* allocatedResourcesStatus */
    size_t n_resource_health;
    size_t resource_health_omitted;
    /* containerStatuses[].resources: the limits and requests the kubelet
     * actuated (KEP-1287), which a resize may have changed from the spec's. */
    int has_status_resources;
    struct krc_kv_list status_limits;
    struct krc_kv_list status_requests;
};

struct krc_report_event {
    char *type; /* Normal / Warning */
    char *reason;
    char *message;           /* "(combined from similar events): " prefix kept as sent */
    int count;               /* 0 when absent (events API writers) */
    int64_t first_timestamp; /* firstTimestamp, else eventTime, else creationTimestamp */
    int64_t last_timestamp;  /* lastTimestamp, else series.lastObservedTime, else eventTime,
                                else creationTimestamp (protocols.md 1.6.2) */
    char *object_kind;
    char *object_namespace;
    char *object_name;
    char *object_uid;
    char *field_path; /* spec.containers{NAME}, spec.initContainers{NAME} or NULL */
    char *source_component;
    char *source_host;
};

struct krc_report_node_condition {
    char *type;
    char *status; /* "True" / "False" / "Unknown" */
    char *reason;
    char *message;
    int64_t last_transition; /* lastTransitionTime, 0 when absent */
};

struct krc_report_node {
    int present;
    char *name;
    struct krc_report_node_condition *conditions;
    size_t n_conditions;
    /* Extended resources only (names with a '/', e.g. nvidia.com/gpu) plus
     * cpu/memory, as quantity strings. */
    struct krc_kv_list capacity;
    struct krc_kv_list allocatable;
    char *kubelet_version;
    char *container_runtime_version;
    char *kernel_version;
    char *os_image;
    int unschedulable;
};

/* Log flags (bit set). A report starts with KRC_REPORT_LOG_ABSENT. */
enum {
    KRC_REPORT_LOG_ABSENT = 1u << 0,     /* no previous log was captured */
    KRC_REPORT_LOG_EMPTY = 1u << 1,      /* captured, zero bytes */
    KRC_REPORT_LOG_TRUNCATED = 1u << 2,  /* something was cut: see log_cut */
    KRC_REPORT_LOG_CAPPED = 1u << 3,     /* reading stopped at the transfer cap: the end
                                            of the log may not have been read */
    KRC_REPORT_LOG_TIMESTAMPS = 1u << 4, /* fetched with timestamps=true: every line
                                            starts with the kubelet's time stamp */
};

struct krc_report {
    /* pod identity */
    char *namespace;
    char *name;
    char *uid;
    char *node_name;
    char *owner_kind; /* controller ownerReference (else the first one) */
    char *owner_name;
    /* The workload an operator knows: a ReplicaSet owned through the
     * pod-template-hash convention is shown as its Deployment (no extra RBAC
     * needed); otherwise the owner itself. NULL for bare pods. */
    char *workload_kind;
    char *workload_name;
    int64_t created_at;
    char *phase;
    char *pod_reason;     /* status.reason (Evicted, ...) */
    char *pod_message;    /* status.message */
    char *restart_policy; /* Always / OnFailure / Never; NULL when absent */
    /* The Pod carries metadata.resourceVersion: an object the API server
     * served, whole, where a field that is absent is not set. A pasted,
     * cut or converted Pod may leave fields out (no limit shown is not
     * "no limit"). */
    int api_object;
    int64_t grace_period; /* spec.terminationGracePeriodSeconds, 30 when absent */
    char *slack_channel;  /* annotation, else label, "alert-slack-channel" */
    struct krc_kv_list labels;
    struct krc_kv_list annotations;

    /* Kubernetes 1.33+ (see above). */
    int has_pod_resources; /* spec.resources, pod-level (KEP-2837) */
    struct krc_kv_list pod_limits;
    struct krc_kv_list pod_requests;
    int has_generation; /* metadata.generation (KEP-5067) */
    int64_t generation;
    int has_observed_generation; /* status.observedGeneration (KEP-5067) */
    int64_t observed_generation;
    struct krc_report_pod_condition *conditions; /* status.conditions, every type */
    size_t n_conditions;
    size_t conditions_omitted;
    struct krc_report_claim_status *claim_statuses; /* status.resourceClaimStatuses */
    size_t n_claim_statuses;
    size_t claim_statuses_omitted;
    /* metadata.deletionTimestamp: the time the API server deletes the pod,
     * set when its graceful deletion was asked for (0: not being deleted);
     * the ask came deletion_grace seconds before it (deletionGracePeriodSeconds,
     * has_deletion_grace 0 when absent). */
    int64_t deletion_timestamp;
    int has_deletion_grace;
    int64_t deletion_grace;

    struct krc_report_container *containers; /* spec order: init containers first */
    size_t n_containers;
    size_t containers_cap;

    struct krc_report_event *events;
    size_t n_events;
    size_t events_cap;

    struct krc_report_node node;

    /* What the collector could not get, for the reader ("no previous log: the
     * container has not terminated before", "node gpu-3 not found", ...). */
    char **notes;
    size_t n_notes;

    /* previous log of log_container: raw bytes, not NUL-terminated, maybe
     * not UTF-8; NULL when absent or empty */
    unsigned char *log;
    size_t log_len;
    unsigned log_flags;
    char *log_container;
    /* what was cut before the log was kept, when its producer counted it
     * (the collector, krc explain); log_cut.known 0 otherwise */
    struct krc_logtail_cut log_cut;

    /* What changed before the incident's first restart (the change tracker,
     * track/track.h, asked by the worker at the incident's first alert): one
     * line ("Deployment shop/api rolled out revision 12 at 03:52, ...", or
     * "No change to the workload or its node in the 24 h before the first
     * crash."), and the changes as a JSON array of change objects
     * (docs/design/incidents.md). Both NULL when nothing can be said
     * (tracking off, the workload's kind not synced, not a first alert).
     * Owned, freed with the report. */
    char *what_changed;
    char *changes_json;
};

/* Embedded lifecycle. cleanup releases everything and leaves an initialized
 * empty report. */
void krc_report_init(struct krc_report *r);
void krc_report_cleanup(struct krc_report *r);
/* Heap lifecycle; krc_report_free accepts NULL. */
struct krc_report *krc_report_new(void);
void krc_report_free(struct krc_report *r);

/* Drop the pod part (identity, containers) / events / node / log. */
void krc_report_clear_pod(struct krc_report *r);
/* Forgets what was read of c's ResourceClaim (devices, fetched, allocated). */
void krc_report_claim_clear_devices(struct krc_report_claim_status *c);
void krc_report_clear_events(struct krc_report *r);
void krc_report_clear_node(struct krc_report *r);
void krc_report_clear_log(struct krc_report *r);
/* Forget what_changed and changes_json. */
void krc_report_clear_changes(struct krc_report *r);

/* Copy `len` bytes of log for `container` (may be NULL). Longer logs keep
 * their last KRC_REPORT_LOG_MAX bytes and get KRC_REPORT_LOG_TRUNCATED;
 * `truncated` adds that flag (the producer cut it already). */
int krc_report_set_log(struct krc_report *r, const char *container, const void *data, size_t len,
                       int truncated, struct krc_error *err);

/* Like krc_report_set_log without a copy: takes ownership of `data`
 * (krc_malloc'd, len <= KRC_REPORT_LOG_MAX, NULL when len is 0), also when
 * it fails. */
int krc_report_take_log(struct krc_report *r, const char *container, unsigned char *data,
                        size_t len, struct krc_error *err);

/* Record what was cut before the log was kept (after krc_report_set_log):
 * sets log_cut, and KRC_REPORT_LOG_TRUNCATED when bytes were dropped or
 * KRC_REPORT_LOG_CAPPED (with TRUNCATED) when reading stopped at the cap. */
void krc_report_set_log_cut(struct krc_report *r, const struct krc_logtail_cut *cut);

/* Redact, in place and once, every text of the report that came from the
 * cluster, before it is diagnosed, rendered or stored (so that every output
 * of it is redacted by construction): the pod's status message, the values
 * of labels and annotations (the whole value when the key names a secret:
 * krc_redact_field), container state and termination messages, event
 * messages, pod and node condition messages, device health
 * messages (allocatedResourcesStatus), notes and the previous log; `rd` NULL:
 * the built-in patterns. A text that cannot be redacted becomes the mark (a
 * log is left out, with a note). Returns the number of redactions, or
 * KRC_ENOMEM after doing what it could (the report is safe to show either
 * way). */
int krc_report_redact(struct krc_report *r, const struct krc_redactor *rd, struct krc_error *err);

/* Append a note (printf-style, one line). KRC_ENOMEM on failure. */
int krc_report_add_note(struct krc_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void krc_report_clear_notes(struct krc_report *r);

/* Set workload_kind/workload_name from owner_kind/owner_name and the
 * pod-template-hash label (called by the pod parser). */
int krc_report_resolve_workload(struct krc_report *r);

/* The workload a restart counts under (incidents, changes, summaries): kind
 * and name when both are given and not empty, else the pod itself ("Pod",
 * pod): a bare pod is its own workload. */
void krc_workload_or_pod(const char *kind, const char *name, const char *pod, const char **ret_kind,
                         const char **ret_name);

/* Append an empty container / event and return it (borrowed, valid until
 * the next append); NULL on allocation failure. */
struct krc_report_container *krc_report_add_container(struct krc_report *r);
struct krc_report_event *krc_report_add_event(struct krc_report *r);
/* Remove the last event (its fields freed): undoes krc_report_add_event.
 * Nothing when there is none. */
void krc_report_drop_last_event(struct krc_report *r);

/* Borrowed container by name and kind (is_init -1: any, containers first). */
const struct krc_report_container *krc_report_container_get(const struct krc_report *r,
                                                            const char *name, int is_init);

/* Keep only events about this pod (involvedObject.uid equal to the pod's
 * uid) and about its node (kind Node, name spec.nodeName). */
void krc_report_retain_pod_events(struct krc_report *r);

/* Does `ev` concern container `c` of this report's pod? Matches by
 * involvedObject.uid (name + namespace when the event has no uid) and by
 * fieldPath spec.containers{NAME} / spec.initContainers{NAME}. */
int krc_report_event_matches(const struct krc_report *r, const struct krc_report_event *ev,
                             const struct krc_report_container *c);
/* Does `ev` concern this pod (any container or the pod itself)? */
int krc_report_event_is_pod(const struct krc_report *r, const struct krc_report_event *ev);

/* Number of accelerator devices (krc_report_is_gpu_resource: nvidia.com/gpu,
 * amd.com/gpu, google.com/tpu, MIG slices ...; not quantities such as
 * nvidia.com/gpumem or gpucores) that the pod holds: limits (else requests)
 * summed over regular and sidecar containers, or the largest ordinary init
 * container request if larger. */
long krc_report_gpu_count(const struct krc_report *r);
/* Same for one container. */
long krc_report_container_gpus(const struct krc_report_container *c);
/* Is this extended resource an accelerator device count (a device plugin's
 * resource name, src/model/report.c lists them), not a quantity? */
int krc_report_is_gpu_resource(const char *name);
/* Is this allocatedResourcesStatus entry an accelerator: a device count
 * (krc_report_is_gpu_resource) or a DRA claim ("claim:<claim>/<request>")? */
int krc_report_is_accelerator_status(const char *name);
/* Container c's Unhealthy accelerator devices (allocatedResourcesStatus,
 * accelerator entries only): how many, with the first in *ret_rh / *ret_dev
 * (both NULL when none). *ret_listed (may be NULL): 1 when any accelerator
 * is listed at all. The one reading shared by the diagnosis
 * (gpu_device_unhealthy) and the late device-health check. */
size_t krc_report_unhealthy_accelerators(const struct krc_report_container *c,
                                         const struct krc_report_resource_health **ret_rh,
                                         const struct krc_report_device_health **ret_dev,
                                         int *ret_listed);

/* Whether a Pod's JSON may name a resource krc_report_is_gpu_resource takes
 * (a quoted name whose domain is a device resource's, e.g. "nvidia.com/...):
 * 0 means it names none, so the watch thread scans no further (a few
 * microseconds of memchr for a 10 KB pod). */
int krc_report_json_may_name_gpu_resource(const char *json, size_t len);

/* key/value lists. put copies both strings (replaces an existing key). */
int krc_kv_list_put(struct krc_kv_list *l, const char *key, const char *value);
const char *krc_kv_list_get(const struct krc_kv_list *l, const char *key);
void krc_kv_list_cleanup(struct krc_kv_list *l);

#endif
