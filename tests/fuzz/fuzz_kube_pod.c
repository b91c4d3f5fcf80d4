/* kube_pod: the first byte picks the decoder (watch event line or pod
 * object; with bit 1 set, the generic watch's: another resource's event
 * line or object, metadata only); the rest is the JSON. A decoded event or pod has its promised
 * fields (uid, namespace and name for pods; the type), its strings lie in
 * its arena, and `raw` lies inside the input. The struct is reused across
 * inputs as the watch loop reuses it. The naming of a skipped object
 * (krc_kube_ident_scan) reads the same input, every prefix of it too, and
 * gives only printable fields; on a decoded pod it agrees with the decoder. */
#include <string.h>

#include "fuzz.h"
#include "krc/kube/kube_pod.h"

static void check_field(const char *f, size_t cap)
{
    size_t n = strnlen(f, cap);
    FUZZ_CHECK(n < cap, "ident field not terminated");
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK((unsigned char)f[i] > 0x20 && (unsigned char)f[i] < 0x7f, "ident byte 0x%02x",
                   (unsigned char)f[i]);
    }
}

static void check_ident(const uint8_t *in, size_t len, struct krc_kube_ident *id)
{
    krc_kube_ident_scan((const char *)in, len, id);
    check_field(id->type, sizeof(id->type));
    check_field(id->namespace, sizeof(id->namespace));
    check_field(id->name, sizeof(id->name));
    check_field(id->uid, sizeof(id->uid));
    check_field(id->resource_version, sizeof(id->resource_version));
}

static void check_pod(const struct krc_pod_info *p, const uint8_t *in, size_t len, int need_ids)
{
    if (need_ids) {
        FUZZ_CHECK(p->uid != NULL && p->namespace != NULL && p->name != NULL, "pod without ids");
    }
    FUZZ_CHECK(p->resource_version != NULL, "resource_version NULL");
    if (p->raw != NULL) {
        FUZZ_CHECK((const uint8_t *)p->raw >= in &&
                       (const uint8_t *)p->raw + p->raw_len <= in + len,
                   "raw outside the input");
    }
    for (size_t i = 0; i < p->n_containers; i++) {
        const struct krc_container_info *c = &p->containers[i];
        FUZZ_CHECK(c->name != NULL, "container %zu without a name", i);
        FUZZ_CHECK(c->state_running + c->state_waiting + c->state_terminated <= 1,
                   "container %s in several states", c->name);
        FUZZ_CHECK(!c->is_sidecar || c->is_init, "sidecar that is not an init container");
        (void)strlen(c->name);
        if (c->state_reason != NULL) {
            (void)strlen(c->state_reason);
        }
        if (c->last_reason != NULL) {
            (void)strlen(c->last_reason);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct krc_watch_event ev;
    static struct krc_pod_info pod;
    static int ready;
    struct krc_error err;
    struct krc_kube_ident id;
    struct krc_kube_ident id_half;
    uint8_t *copy;

    if (size < 1) {
        return 0;
    }
    if (!ready) {
        krc_watch_event_init(&ev);
        krc_pod_info_init(&pod);
        ready = 1;
    }
    /* an exact-size copy of the JSON part, so that reads past it are caught */
    copy = malloc(size - 1 > 0 ? size - 1 : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data + 1, size - 1);
    check_ident(copy, size - 1, &id);
    check_ident(copy, (size - 1) / 2, &id_half);
    if (data[0] & 2) {
        /* another resource (the generic watch): metadata only, no uid needed */
        if (data[0] & 1) {
            if (krc_kube_object_meta_parse((const char *)copy, size - 1, &pod, &err) == 0) {
                FUZZ_CHECK(pod.name != NULL, "object without a name");
                check_pod(&pod, copy, size - 1, 0);
            } else {
                FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
            }
        } else if (krc_watch_event_parse_object((const char *)copy, size - 1, &ev, &err) == 0) {
            FUZZ_CHECK(ev.type >= KRC_WATCH_ADDED && ev.type <= KRC_WATCH_ERROR, "type %d",
                       ev.type);
            if (ev.type <= KRC_WATCH_DELETED) {
                FUZZ_CHECK(ev.pod.name != NULL, "object without a name");
                check_pod(&ev.pod, copy, size - 1, 0);
            }
        } else {
            FUZZ_CHECK(ev.type == 0, "failed parse left type %d", ev.type);
            FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        }
    } else if (data[0] & 1) {
        if (krc_pod_info_parse((const char *)copy, size - 1, &pod, &err) == 0) {
            check_pod(&pod, copy, size - 1, 1);
            FUZZ_CHECK(id.name[0] == '\0' || strcmp(id.name, pod.name) == 0,
                       "ident name %s, pod name %s", id.name, pod.name);
        } else {
            FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        }
    } else if (krc_watch_event_parse((const char *)copy, size - 1, &ev, &err) == 0) {
        FUZZ_CHECK(ev.type >= KRC_WATCH_ADDED && ev.type <= KRC_WATCH_ERROR, "type %d", ev.type);
        if (ev.type <= KRC_WATCH_DELETED) {
            check_pod(&ev.pod, copy, size - 1, 1);
        }
    } else {
        FUZZ_CHECK(ev.type == 0, "failed parse left type %d", ev.type);
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    }
    free(copy);
    return 0;
}
