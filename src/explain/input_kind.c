/* What a file given to `krc explain FILE...` holds (input_kind.h). */
#include "krc/explain/input_kind.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "krc/explain/describe_node.h"
#include "krc/explain/kube_describe.h"
#include "krc/explain/yaml_json.h"
#include "krc/util/mem.h"

const char *krc_input_kind_name(enum krc_input_kind kind)
{
    switch (kind) {
    case KRC_INPUT_POD:
        return "pod";
    case KRC_INPUT_DESCRIBE_POD:
        return "describe pod";
    case KRC_INPUT_EVENTS:
        return "events";
    case KRC_INPUT_EVENT_TABLE:
        return "event table";
    case KRC_INPUT_NODE:
        return "node";
    case KRC_INPUT_DESCRIBE_NODE:
        return "describe node";
    default:
        return "log";
    }
}

static int only_space(const char *data, size_t len)
{
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;

    for (; i < len; i++) {
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' && data[i] != '\n') {
            return 0;
        }
    }
    return 1;
}

/* ---- Kubernetes objects ------------------------------------------------ */

/* 1 when o has one of a Kubernetes object's top-level keys. */
static int kube_keys(const cJSON *o)
{
    static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec", "status", "items"};

    for (size_t i = 0; cJSON_IsObject(o) && i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (cJSON_GetObjectItemCaseSensitive(o, keys[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

static const cJSON *member(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

    return b != NULL && v != NULL ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
}

enum obj { OBJ_POD, OBJ_EVENT, OBJ_NODE, OBJ_LIST, OBJ_OTHER };

/* What one object is: its kind, else its fields. */
static enum obj object_of(const cJSON *o, const char **ret_kind)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
    const char *kind = cJSON_IsString(k) ? k->valuestring : NULL;

    *ret_kind = kind;
    if (kind != NULL) {
        if (strcmp(kind, "Pod") == 0) {
            return OBJ_POD;
        }
        if (strcmp(kind, "Event") == 0) {
            return OBJ_EVENT;
        }
        if (strcmp(kind, "Node") == 0) {
            return OBJ_NODE;
        }
        if (strcmp(kind, "List") == 0 || strcmp(kind, "EventList") == 0 ||
            strcmp(kind, "PodList") == 0 || strcmp(kind, "NodeList") == 0) {
            return OBJ_LIST;
        }
        return OBJ_OTHER;
    }
    if (cJSON_IsArray(member(o, "items", NULL))) {
        return OBJ_LIST;
    }
    if (member(o, "spec", "containers") != NULL ||
        member(o, "status", "containerStatuses") != NULL ||
        member(o, "status", "initContainerStatuses") != NULL) {
        return OBJ_POD;
    }
    if (member(o, "involvedObject", NULL) != NULL || member(o, "regarding", NULL) != NULL) {
        return OBJ_EVENT;
    }
    if (member(o, "status", "nodeInfo") != NULL) {
        return OBJ_NODE;
    }
    return OBJ_OTHER;
}

static int classify_list(const cJSON *list, enum krc_input_kind *ret, struct krc_error *err)
{
    const cJSON *items = member(list, "items", NULL);
    const cJSON *it;
    int pods = 0;
    int events = 0;
    int nodes = 0;
    int total = 0;
    const char *other = NULL;

    if (!cJSON_IsArray(items)) {
        return krc_error_set(err, KRC_EINVAL, "a List without items");
    }
    cJSON_ArrayForEach(it, items)
    {
        const char *kind = NULL;
        switch (cJSON_IsObject(it) ? object_of(it, &kind) : OBJ_OTHER) {
        case OBJ_POD:
            pods++;
            break;
        case OBJ_EVENT:
            events++;
            break;
        case OBJ_NODE:
            nodes++;
            break;
        default:
            if (other == NULL) {
                other = kind != NULL ? kind : "an object of no known kind";
            }
            break;
        }
        total++;
    }
    if (events == total) {
        *ret = KRC_INPUT_EVENTS; /* also the empty list of `kubectl get events -o yaml` */
        return 0;
    }
    if (pods == 1) {
        *ret = KRC_INPUT_POD; /* the Pod among other manifests, as --pod reads it */
        return 0;
    }
    if (pods == 0 && nodes == 1) {
        *ret = KRC_INPUT_NODE;
        return 0;
    }
    if (pods > 1) {
        return krc_error_set(err, KRC_EINVAL, "a List of %d Pods (one pod is explained at a time)",
                             pods);
    }
    if (nodes > 1) {
        return krc_error_set(err, KRC_EINVAL, "a List of %d Nodes", nodes);
    }
    return krc_error_set(err, KRC_EINVAL, "a List of %d item%s, of them %.60s", total,
                         total == 1 ? "" : "s", other != NULL ? other : "?");
}

/* 1 and *ret when the JSON is a Kubernetes object (or a List), 0 when it
 * is not one (a JSON log line), 2 when it is not one JSON document
 * (*ret_bad: where it broke off), <0 when it is one of another kind. */
static int classify_json(const char *json, size_t len, enum krc_input_kind *ret, size_t *ret_bad,
                         struct krc_error *err)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    const char *kind = NULL;
    int rc = 1;

    if (o == NULL) {
        *ret_bad = end != NULL && end >= json && end <= json + len ? (size_t)(end - json) : 0;
        return 2;
    }
    if (!kube_keys(o)) {
        cJSON_Delete(o);
        return 0;
    }
    switch (object_of(o, &kind)) {
    case OBJ_POD:
        *ret = KRC_INPUT_POD;
        break;
    case OBJ_EVENT:
        *ret = KRC_INPUT_EVENTS;
        break;
    case OBJ_NODE:
        *ret = KRC_INPUT_NODE;
        break;
    case OBJ_LIST:
        rc = classify_list(o, ret, err);
        rc = rc < 0 ? rc : 1;
        break;
    default:
        if (kind != NULL) {
            const char *a = strchr("AEIOU", kind[0]) != NULL && kind[0] != '\0' ? "an" : "a";
            rc = krc_error_set(err, KRC_EINVAL, "%s %.60s (a Kubernetes object of another kind)", a,
                               kind);
        } else {
            rc = krc_error_set(err, KRC_EINVAL,
                               "a Kubernetes object without a kind, and neither a Pod's "
                               "containers, an Event's involvedObject nor a Node's nodeInfo");
        }
        break;
    }
    cJSON_Delete(o);
    return rc;
}

/* ---- text -------------------------------------------------------------- */

/* 1 when describe pod's conversion of the text shows something of the pod
 * (a name, a container, a status), 0 when it is an Events table alone. */
static int describe_shows_pod(const char *data, size_t len, struct krc_error *err)
{
    char *pod = NULL;
    char *events = NULL;
    cJSON *o;
    int shows = 0;
    int rc = krc_kube_describe_pod(data, len, &pod, &events, err);

    if (rc < 0) {
        return rc == KRC_ENOMEM ? rc : 1; /* the pod loader says what is wrong */
    }
    o = cJSON_Parse(pod);
    if (o == NULL) {
        rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (const char *const *k = (const char *const[]){"metadata", "spec", "status", NULL};
         o != NULL && *k != NULL; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *k);
        shows |= v != NULL && !(cJSON_IsObject(v) && v->child == NULL);
    }
    /* describe of a pod without events says "Events: <none>": still a pod */
    shows |= events == NULL;
    cJSON_Delete(o);
    krc_free(pod);
    krc_free(events);
    return rc < 0 ? rc : shows;
}

static char first_char(const char *data, size_t len)
{
    size_t i = 0;

    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n')) {
        i++;
    }
    return i < len ? data[i] : '?';
}

/* 1 when the first line that is not blank is "{" or "[" alone: how
 * `kubectl -o json` (and any pretty-printed JSON) starts, never a log line
 * or a prompt. */
static int json_document_start(const char *data, size_t len)
{
    size_t i = 0;

    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n')) {
        i++;
    }
    if (i == len || (data[i] != '{' && data[i] != '[')) {
        return 0;
    }
    for (i++; i < len && data[i] != '\n'; i++) {
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r') {
            return 0;
        }
    }
    return 1;
}

/* The line number (from 1) of byte offset off. */
static size_t line_of(const char *data, size_t off)
{
    size_t line = 1;

    for (size_t i = 0; i < off; i++) {
        line += data[i] == '\n';
    }
    return line;
}

int krc_input_classify(const char *data, size_t len, size_t max, enum krc_input_kind *ret_kind,
                       struct krc_error *err)
{
    int rc;

    *ret_kind = KRC_INPUT_LOG;
    if (only_space(data, len)) {
        return 0; /* kubectl logs of a container that wrote nothing */
    }
    if (memchr(data, '\0', len) != NULL) {
        return krc_error_set(err, KRC_EINVAL, "binary data (a NUL byte)");
    }
    if (krc_yaml_json_is_json(data, len)) {
        size_t skip = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        size_t bad = 0;
        rc = classify_json(data + skip, len - skip, ret_kind, &bad, err);
        if (rc == 2 && json_document_start(data + skip, len - skip)) {
            /* `kubectl get ... -o json` output cut short or edited */
            return krc_error_set(err, KRC_EINVAL,
                                 "a JSON document (its first line is \"%c\") that is not valid "
                                 "JSON (cut short or malformed near line %zu)",
                                 first_char(data + skip, len - skip), line_of(data + skip, bad));
        }
        if (rc != 0 && rc != 2) {
            return rc < 0 ? rc : 0;
        }
        /* not one JSON object: JSON log lines, or text after a prompt "[..." */
    } else {
        char *json = NULL;
        size_t jlen = 0;
        struct krc_error yerr;

        krc_error_clear(&yerr);
        if (krc_yaml_json_convert(data, len, NULL, max, &json, &jlen, &yerr) == 0) {
            size_t bad = 0;
            rc = classify_json(json, jlen, ret_kind, &bad, err);
            krc_free(json);
            if (rc != 0) {
                return rc < 0 ? rc : 0;
            }
        } else if (yerr.code == KRC_ENOMEM) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    if (krc_describe_node_is(data, len)) {
        *ret_kind = KRC_INPUT_DESCRIBE_NODE;
        return 0;
    }
    if (krc_kube_describe_is_pod(data, len)) {
        rc = describe_shows_pod(data, len, err);
        if (rc < 0) {
            return rc;
        }
        *ret_kind = rc || !krc_kube_describe_is_events(data, len) ? KRC_INPUT_DESCRIBE_POD
                                                                  : KRC_INPUT_EVENT_TABLE;
        return 0;
    }
    if (krc_kube_describe_is_events(data, len)) {
        *ret_kind = KRC_INPUT_EVENT_TABLE;
        return 0;
    }
    *ret_kind = KRC_INPUT_LOG;
    return 0;
}
