/* The `krc demo` simulated cluster: a Kubernetes API server and a
 * Slack-compatible incoming-webhook endpoint in one embedded HTTP server on
 * 127.0.0.1 (libmicrohttpd; see docs/design/demo.md for why this is the
 * second MHD user).
 *
 * Served over real HTTP/1.1, as kube-apiserver does (bearer token required
 * on /api):
 *   GET /api/v1/pods, /api/v1/namespaces/NS/pods       PodList (limit/continue),
 *       ?watch=true                                     chunked watch stream, one
 *       JSON event per line, from resourceVersion or with sendInitialEvents
 *       (ADDED..., then the initial-events-end BOOKMARK), BOOKMARKs when idle,
 *       closed after timeoutSeconds
 *   GET /api/v1/namespaces/NS/pods/NAME                 Pod
 *   GET /api/v1/namespaces/NS/pods/NAME/log             the previous instance's log
 *       (container, previous, tailLines, limitBytes, timestamps)
 *   GET /api/v1/events, /api/v1/namespaces/NS/events    EventList (fieldSelector)
 *   GET /api/v1/nodes/NAME                              Node
 *   GET /api/v1/nodes, /apis/apps/v1/{deployments,replicasets,statefulsets,
 *       daemonsets,controllerrevisions}, /apis/batch/v1/{jobs,cronjobs} (and
 *       .../namespaces/NS/...)                          LIST (limit/continue) and WATCH as
 *       for pods, for change tracking (trackChanges); the Accept header's
 *       as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1 gives metadata only; a kind
 *       with no objects answers an empty list and a quiet watch (BOOKMARKs)
 *   GET /apis/GROUP/v1/namespaces/NS/RESOURCE/NAME      one of those objects
 *   POST /services/...                                  a Slack incoming webhook: "ok"
 *   POST /apis/events.k8s.io/v1/namespaces/NS/events    krc's Kubernetes Event: checked
 *       as the API server does (krc_demo_kube_event_check), 201, 409 for a name that exists
 * Anything else gets a v1 Status (404, 405, 400, 401) as the API server words it. */
#ifndef KRC_DEMO_SIM_H
#define KRC_DEMO_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "krc/demo/slack_view.h"
#include "krc/util/error.h"

/* --- pure parts (unit-tested) ------------------------------------------- */

enum krc_demo_route_kind {
    KRC_DEMO_ROUTE_NONE = 0, /* not a path this server knows: 404 */
    KRC_DEMO_ROUTE_PODS,     /* pod list or watch; ns "" = all namespaces */
    KRC_DEMO_ROUTE_POD,
    KRC_DEMO_ROUTE_POD_LOG,
    KRC_DEMO_ROUTE_EVENTS, /* ns "" = all namespaces */
    KRC_DEMO_ROUTE_NODE,
    KRC_DEMO_ROUTE_WEBHOOK,
    KRC_DEMO_ROUTE_KUBE_EVENTS, /* events.k8s.io/v1 events of namespace ns (POST) */
    KRC_DEMO_ROUTE_LIST,        /* list or watch of resource res; ns "" = all namespaces */
    KRC_DEMO_ROUTE_OBJECT,      /* one object of resource res (ns, name) */
};

/* The resources served besides pods: what change tracking lists and watches
 * (src/track/track.c), nodes included. */
enum krc_demo_resource {
    KRC_DEMO_RES_NONE = 0,
    KRC_DEMO_RES_NODES,
    KRC_DEMO_RES_DEPLOYMENTS,
    KRC_DEMO_RES_REPLICASETS,
    KRC_DEMO_RES_STATEFULSETS,
    KRC_DEMO_RES_DAEMONSETS,
    KRC_DEMO_RES_CONTROLLERREVISIONS,
    KRC_DEMO_RES_JOBS,
    KRC_DEMO_RES_CRONJOBS,
    KRC_DEMO_RES_N
};

struct krc_demo_resource_info {
    const char *plural;      /* "replicasets" */
    const char *api_version; /* "apps/v1" */
    const char *kind;        /* "ReplicaSet" */
    int namespaced;
};

/* The resource's names (NONE: NULL). */
const struct krc_demo_resource_info *krc_demo_resource_info(enum krc_demo_resource res);

struct krc_demo_route {
    enum krc_demo_route_kind kind;
    enum krc_demo_resource res; /* LIST, OBJECT */
    char ns[254];
    char name[254];
};

/* Which resource `path` (no query string) names. Returns 0 and fills `r`
 * (kind NONE for an unknown path); KRC_EINVAL for a segment that is empty or
 * too long. */
int krc_demo_route_parse(const char *path, struct krc_demo_route *r);

/* What the Accept header asks for: 0 the objects (no conversion, or none
 * asked), 1 as=PartialObjectMetadata, 2 as=PartialObjectMetadataList (with
 * g=meta.k8s.io and v=v1), as the API server negotiates JSON: the first
 * application/json (or * / *) clause decides; KRC_EINVAL for any other
 * conversion (the server answers 406 NotAcceptable). */
int krc_demo_accept_meta(const char *accept);

/* The PartialObjectMetadata (meta.k8s.io/v1) of the object text `json`: its
 * whole metadata, nothing else. Caller frees with cJSON_free; NULL when json
 * is no object or on ENOMEM. */
char *krc_demo_partial_metadata(const char *json);

/* Whether `obj` matches a Kubernetes field selector ("a.b=v,c!=w", "==" as
 * "="; an empty selector matches everything) over the fields an Event
 * supports (involvedObject.*, reason, reportingComponent, source, type,
 * metadata.name, metadata.namespace). 1 match, 0 no match, KRC_EINVAL for a
 * malformed selector or an unsupported field (its name in `bad`). */
int krc_demo_field_selector_match(const char *selector, const cJSON *obj, char *bad,
                                  size_t bad_size);

/* An events.k8s.io/v1 Event POSTed to namespace `ns`, checked as the API
 * server validates one: 0 when valid; else the HTTP status (422 Invalid, 400
 * for a namespace that differs from the path's) and the API server's message
 * in `why`. */
int krc_demo_kube_event_check(const cJSON *ev, const char *ns, char *why, size_t why_size);
/* The string member k of object o; NULL when o is not an object or k is
 * absent or not a string. */
const char *krc_demo_json_str(const cJSON *o, const char *k);

/* The last `tail_lines` lines (< 0: all) of `log`, each prefixed with an
 * RFC 3339 time stamp with nanoseconds when `timestamps` (as the kubelet
 * does; line k of n gets `ended` minus (n-k) ms), cut to `limit_bytes`
 * (< 0: no limit). Caller frees with krc_free; NULL on ENOMEM. */
char *krc_demo_log_window(const char *log, long tail_lines, int timestamps, int64_t ended,
                          long limit_bytes);

/* --- the server ----------------------------------------------------------- */

struct krc_demo_sim;

/* Called on a server thread for each webhook message as it arrives, in order. */
typedef void (*krc_demo_sim_message_fn)(const struct krc_demo_msg *m, void *userdata);
/* Called on a server thread for each Kubernetes Event created (borrowed). */
typedef void (*krc_demo_sim_kube_event_fn)(const cJSON *event, void *userdata);
/* The note of a webhook message posted to `path` (a static string), or NULL. */
typedef const char *(*krc_demo_sim_note_fn)(const char *path, void *userdata);

struct krc_demo_sim_options {
    const char *token; /* the bearer token /api requires (copied) */
    krc_demo_sim_message_fn on_message;
    void *userdata;
    krc_demo_sim_kube_event_fn on_kube_event; /* may be NULL; gets userdata */
    krc_demo_sim_note_fn note_for;            /* may be NULL; gets userdata */
};

/* Listen on 127.0.0.1, a free port, and serve. */
int krc_demo_sim_start(const struct krc_demo_sim_options *o, struct krc_demo_sim **ret,
                       struct krc_error *err);
int krc_demo_sim_port(const struct krc_demo_sim *s);

/* Create or replace a pod (by namespace/name; a watch sees ADDED or
 * MODIFIED with a new resourceVersion), with the log of its previous
 * instance (NULL: none) that ended at `log_ended`. Takes `pod`. */
int krc_demo_sim_put_pod(struct krc_demo_sim *s, cJSON *pod, const char *previous_log,
                         int64_t log_ended);
/* Create or replace a node; add an event, or replace the one with its
 * namespace and name (as the event recorder updates count and
 * lastTimestamp). Take the object. */
int krc_demo_sim_put_node(struct krc_demo_sim *s, cJSON *node);
/* Create or replace an object of resource res (not nodes: put_node) by
 * namespace and name; a watch sees ADDED or MODIFIED. Takes the object. */
int krc_demo_sim_put_object(struct krc_demo_sim *s, enum krc_demo_resource res, cJSON *obj);
int krc_demo_sim_add_event(struct krc_demo_sim *s, cJSON *event);

/* Pod watch streams open now. */
int krc_demo_sim_watchers(struct krc_demo_sim *s);
/* How many of the resources other than pods (nodes and the tracked kinds)
 * have had a whole list served: a LIST's last page or a streaming list's
 * initial events. */
int krc_demo_sim_listed_resources(struct krc_demo_sim *s);
/* Webhook messages received so far, and the monotonic ms of the last one (0: none). */
size_t krc_demo_sim_message_count(struct krc_demo_sim *s, int64_t *ret_last_mono_ms);
/* Every message received (borrowed; valid until krc_demo_sim_free). Only
 * after krc_demo_sim_stop. */
const struct krc_demo_msg *krc_demo_sim_messages(const struct krc_demo_sim *s, size_t *ret_n);

/* Close the listening socket, end the watch streams, join every thread. */
void krc_demo_sim_stop(struct krc_demo_sim *s);
void krc_demo_sim_free(struct krc_demo_sim *s);

#endif
