/* The `krc demo` scenario: which pods crash, how, on which nodes, with which
 * events and previous logs. The failure facts (termination reason, exit code,
 * message, event texts, log lines) are taken from the cases of
 * tests/fixtures/realworld (each with its public source) and, for the CUDA case,
 * tests/fixtures/corpus; docs/demo.md lists what comes from where and what the
 * simulation adds (names, times, counts). Pure: builds Kubernetes JSON objects
 * (cJSON) from the table, no I/O. */
#ifndef KRC_DEMO_SCENARIO_H
#define KRC_DEMO_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* An event of a case, at `offset_s` seconds from the end of the crashed
 * instance (negative: before). */
struct krc_demo_event {
    const char *type; /* Normal | Warning */
    const char *reason;
    const char *message;
    const char *component; /* source.component */
    int count;
    int first_offset_s;
    int last_offset_s;
};

/* The simulation's own rollout before a case's crash, shown by change
 * tracking (docs/demo.md): the Deployment's previous revision, whose pod
 * template differed from the crashing pod's. Not a fact of the case. */
struct krc_demo_rollout {
    const char *prev_hash;      /* the previous ReplicaSet's pod-template-hash */
    const char *prev_args_json; /* the previous template's container args (JSON array) */
    int before_s;               /* the new revision: this long before the demo began */
    const char *manager;        /* the field manager that changed the template */
};

struct krc_demo_case {
    const char *key;     /* short name, also the step's name in the terminal */
    const char *what;    /* one line for the terminal: what happens */
    const char *source;  /* public source of the facts */
    const char *fixture; /* the repository's copy: tests/fixtures/... */
    const char *ns;
    const char *pod; /* with replicas > 1: the prefix, "-N" appended */
    const char *container;
    const char *image;
    const char *node;
    const char *resources; /* JSON of spec.containers[].resources, or NULL */
    const char *liveness;  /* JSON of the livenessProbe, or NULL */
    const char *t_reason;  /* lastState.terminated.reason */
    int exit_code;
    const char *t_message; /* lastState.terminated.message, or NULL */
    int run_s;             /* how long the crashed instance ran */
    const char *log;       /* its previous log, or NULL */
    const struct krc_demo_event *events;
    size_t n_events;
    int replicas;           /* pods that crash the same way at once (the storm): >= 1 */
    int restarts;           /* how often the container crashes (a crash loop: > 1); 0 means 1 */
    const char *owner_api;  /* metadata.ownerReferences[0]: apiVersion, kind, name */
    const char *owner_kind; /* NULL: no owner */
    const char *owner_name; /* a ReplicaSet's NAME-HASH gets the pod-template-hash label */
    const char *expect;     /* the cause code krc must name */
    const char *args_json;  /* the container's args as the case posted them (JSON array) */
    /* the pod's restartPolicy as the case posted it; NULL: Always */
    const char *restart_policy;
    /* a ReplicaSet's case: the simulation's rollout before the crash; NULL:
     * its Deployment's one revision is 30 days old */
    const struct krc_demo_rollout *rollout;
    /* A field demonstration (issue 26), not a public crash case: a pod shaped
     * after the Kubernetes API reference to show a field of a recent release
     * that krc reads. `field` names it for the terminal ("restartPolicyRules,
     * KEP-5307, beta in 1.35"); `source` is the KEP, `fixture` the composed
     * pod of tests/fixtures/k8s-1.35 whose shape it follows. NULL: a public case. */
    const char *field;
    const char *pod_spec_json;       /* JSON object merged into spec (pod-level resources) */
    const char *container_spec_json; /* merged into the container's spec (restart rules) */
    const char *crashed_status_json; /* merged into its status after a crash (device health) */
    const char *const *others;       /* other containers, NULL-terminated, or NULL */
    int others_restart;              /* the others stop with it (exit 137) and restart too */
    int running_after;               /* restarted at once (by a rule): running, no back-off */
    const char *conditions_json;     /* JSON array: status.conditions after a crash, or NULL */
    int step;                        /* the scenario step it plays at; 0: its index */
};

struct krc_demo_node {
    const char *name;
    int gpus; /* nvidia.com/gpu capacity */
    int memory_gib;
};

/* The table. */
const struct krc_demo_case *krc_demo_cases(size_t *ret_n);
const struct krc_demo_node *krc_demo_nodes(size_t *ret_n);
/* The node of that name in the table, or NULL. */
const struct krc_demo_node *krc_demo_node_named(const char *name);
/* The node that goes NotReady while its pods restart (the storm). */
const char *krc_demo_storm_node(void);

/* Stable identifiers derived from names: a UUID ("8-4-4-4-12") and a
 * containerd container ID (64 hex digits). out must hold 37 / 78 bytes. */
void krc_demo_uid(const char *ns, const char *name, char out[37]);
void krc_demo_container_id(const char *pod, const char *container, int instance, char out[78]);

/* The pod name of replica `i` (0-based) of a case. */
void krc_demo_pod_name(const struct krc_demo_case *c, int i, char *out, size_t outsz);

/* v1 Pod of replica `i`: running and ready since `started` when restarts is
 * 0, else after its `restarts`-th crash: the crashed instance (it ran from
 * `ran_from` to `ended`) in lastState.terminated, restartCount `restarts`
 * and CrashLoopBackOff with the kubelet's back-off for that count (10 s,
 * doubled per restart, at most 300 s). NULL on ENOMEM. */
cJSON *krc_demo_pod_json(const struct krc_demo_case *c, int i, int restarts, int64_t started,
                         int64_t ran_from, int64_t ended);

/* The kubelet's back-off in seconds before the next start after `restarts`
 * crashes (10, 20, 40, ... at most 300). */
int krc_demo_backoff_s(int restarts);

/* The kubelet's BackOff event of replica `i` of a crash-looping case, as the
 * kubelet's event recorder keeps it: one object per pod whose count and
 * lastTimestamp grow (`count` times, first at `first`, last at `last`). */
cJSON *krc_demo_backoff_event_json(const struct krc_demo_case *c, int i, int count, int64_t first,
                                   int64_t last);

/* When replica pods of a case were created, for a demo that began at t0:
 * an hour before, or with a rollout 5 s after its new revision. */
int64_t krc_demo_pod_created(const struct krc_demo_case *c, int64_t t0);

/* The Deployment of a case whose pod a ReplicaSet NAME-HASH owns: its name
 * NAME in out (0), or -1 for another owner. */
int krc_demo_deployment_name(const struct krc_demo_case *c, char *out, size_t outsz);

/* apps/v1 Deployment of such a case and its ReplicaSet (previous: the one
 * before the rollout, with the rollout's template; NULL without a rollout),
 * with the revision annotation, pod-template-hash, owner reference, creation
 * time and managedFields the controllers write, for a demo that began at t0.
 * NULL on ENOMEM or for another owner. */
cJSON *krc_demo_deployment_json(const struct krc_demo_case *c, int64_t t0);
cJSON *krc_demo_replicaset_json(const struct krc_demo_case *c, int previous, int64_t t0);

/* The objects of a case whose pod a StatefulSet or a Job owns, for a demo
 * that began at t0 (change tracking reads them; a real cluster has them).
 * revision_name: the StatefulSet's ControllerRevision NAME-HASH in out (0;
 * HASH: FNV-1 32 of the revision's data in SafeEncodeString's alphabet, as
 * the StatefulSet controller names it), the pods' controller-revision-hash
 * label; -1 for another owner or on ENOMEM. owner_created: when the owner
 * was made (a StatefulSet: 30 days before t0; a Job: 2 s before its pod).
 * The StatefulSet (its template the pod's, status currentRevision and
 * updateRevision NAME-HASH), its ControllerRevision (revision 1, data the
 * template as a patch replacing it, owned by the StatefulSet, made with
 * it), the Job (its template the pod's, with the controller-uid and
 * job-name labels it selects by): NULL on ENOMEM or for another owner. */
int krc_demo_revision_name(const struct krc_demo_case *c, char *out, size_t outsz);
int64_t krc_demo_owner_created(const struct krc_demo_case *c, int64_t t0);
cJSON *krc_demo_statefulset_json(const struct krc_demo_case *c, int64_t t0);
cJSON *krc_demo_controllerrevision_json(const struct krc_demo_case *c, int64_t t0);
cJSON *krc_demo_job_json(const struct krc_demo_case *c, int64_t t0);

/* v1 Node; ready: 1 Ready=True, 0 Ready=Unknown (NodeStatusUnknown, as the
 * node lifecycle controller writes it when the kubelet stops posting). */
cJSON *krc_demo_node_json(const struct krc_demo_node *n, int ready, int64_t created,
                          int64_t transition);

/* v1 Event `e` of replica `i` of a case, placed around `ended`; `seq` makes
 * its name unique. */
cJSON *krc_demo_event_json(const struct krc_demo_case *c, int i, const struct krc_demo_event *e,
                           int64_t ended, int seq);

/* An event of a node (in namespace "default", as the kubelet and the node
 * controller write them), or of a pod about its node. */
cJSON *krc_demo_node_event_json(const char *node, const char *type, const char *reason,
                                const char *message, const char *component, int64_t t, int seq);

#endif
