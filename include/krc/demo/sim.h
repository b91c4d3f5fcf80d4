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
};

struct krc_demo_route {
    enum krc_demo_route_kind kind;
    char ns[254];
    char name[254];
};

/* Which resource `path` (no query string) names. Returns 0 and fills `r`
 * (kind NONE for an unknown path); KRC_EINVAL for a segment that is empty or
 * too long. */
int krc_demo_route_parse(const char *path, struct krc_demo_route *r);

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
int krc_demo_sim_add_event(struct krc_demo_sim *s, cJSON *event);

/* Pod watch streams open now. */
int krc_demo_sim_watchers(struct krc_demo_sim *s);
/* Webhook messages received so far, and the monotonic ms of the last one (0: none). */
size_t krc_demo_sim_message_count(struct krc_demo_sim *s, int64_t *ret_last_mono_ms);
/* Every message received (borrowed; valid until krc_demo_sim_free). Only
 * after krc_demo_sim_stop. */
const struct krc_demo_msg *krc_demo_sim_messages(const struct krc_demo_sim *s, size_t *ret_n);

/* Close the listening socket, end the watch streams, join every thread. */
void krc_demo_sim_stop(struct krc_demo_sim *s);
void krc_demo_sim_free(struct krc_demo_sim *s);

#endif
