/* The ConfigMaps and Secrets a pod references, and what a metadata-only
 * read of one says about its content's last change (trackConfigChanges). */
#include <stdio.h>
#include <string.h>

#include "krc/track/digest.h"
#include "krc/track/object.h"
#include "krc/track/track.h"
#include "krc/util/jscan.h"

struct refs {
    struct krc_track_config_ref *v;
    size_t max, n, more;
};

static void add_ref(struct refs *r, const char *kind, const char *name)
{
    if (name[0] == '\0') {
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->v[i].kind, kind) == 0 && strcmp(r->v[i].name, name) == 0) {
            return;
        }
    }
    if (r->n >= r->max) {
        r->more++;
        return;
    }
    snprintf(r->v[r->n].kind, sizeof(r->v[r->n].kind), "%s", kind);
    snprintf(r->v[r->n].name, sizeof(r->v[r->n].name), "%s", name);
    r->n++;
}

/* The digest's facts hold every reference: volumes ("configMap x",
 * "secret y", "projected configMap a, secret b"), envFrom ("configMap x")
 * and env valueFrom ("secret NAME/KEY"). */
static void refs_of_value(struct refs *r, const char *v, int with_key)
{
    while (*v != '\0') {
        const char *kind = NULL;
        if (strncmp(v, "configMap ", 10) == 0) {
            kind = "ConfigMap";
            v += 10;
        } else if (strncmp(v, "secret ", 7) == 0) {
            kind = "Secret";
            v += 7;
        }
        size_t n = strcspn(v, with_key ? "/," : ",");
        if (kind != NULL) {
            char name[254];
            snprintf(name, sizeof(name), "%.*s", (int)n, v);
            add_ref(r, kind, name);
        }
        v += n;
        v += strcspn(v, ",");
        while (*v == ',' || *v == ' ') {
            v++;
        }
    }
}

/* A key of the pod: its spec digested into the facts (ctx). */
static int pod_key(struct krc_jscan *s, const struct krc_jscan_str *k, void *ctx,
                   struct krc_error *err)
{
    if (KRC_JSCAN_EQ(k, "spec")) {
        return krc_digest_pod_spec(s, ctx, err);
    }
    return krc_jscan_skip(s, NULL, err);
}

int krc_track_config_refs(const char *pod_json, size_t len, struct krc_track_config_ref *refs,
                          size_t max, size_t *ret_n, size_t *ret_more, struct krc_error *err)
{
    struct krc_jscan s;
    struct krc_facts f;
    struct refs r = {refs, max, 0, 0};
    int rc;

    krc_facts_init(&f);
    krc_jscan_init(&s, pod_json, len, "pod");
    if (krc_jscan_peek(&s, err) == KRC_JSON_OBJECT) {
        rc = krc_jscan_each_key(&s, pod_key, &f, err);
    } else {
        rc = krc_jscan_object_begin(&s, err); /* fails: the pod is not an object */
    }
    if (rc < 0) {
        krc_facts_cleanup(&f);
        return rc == KRC_ENOMEM ? rc : KRC_EPARSE;
    }
    /* volumes first (in pod order), then envFrom, then env */
    const char order[] = {KRC_FACT_VOLUME, KRC_FACT_ENV_FROM, KRC_FACT_ENV};
    for (size_t o = 0; o < sizeof(order); o++) {
        for (size_t i = 0; i < f.n; i++) {
            const char *fact = krc_facts_get(&f, i);
            const char *sub = strchr(fact, KRC_FACT_SEP);
            const char *val = sub != NULL ? strchr(sub + 1, KRC_FACT_SEP) : NULL;
            if (fact[0] != order[o] || val == NULL) {
                continue;
            }
            if (order[o] == KRC_FACT_ENV_FROM) {
                char ref[300];
                snprintf(ref, sizeof(ref), "%.*s", (int)(val - sub - 1), sub + 1);
                refs_of_value(&r, ref, 0);
            } else {
                refs_of_value(&r, val + 1, order[o] == KRC_FACT_ENV);
            }
        }
    }
    krc_facts_cleanup(&f);
    *ret_n = r.n;
    *ret_more = r.more;
    return 0;
}

int krc_track_config_meta_parse(const char *json, size_t len, struct krc_track_config_meta *ret,
                                struct krc_error *err)
{
    struct krc_track_obj o;
    int rc;

    krc_track_obj_init(&o);
    rc = krc_track_obj_parse_meta(&o, KRC_TRACK_TOUCH_DATA, json, len, err);
    if (rc == 0) {
        memset(ret, 0, sizeof(*ret));
        if (o.manager_at > 0) {
            ret->at = o.manager_at;
            ret->from_managed_fields = 1;
            snprintf(ret->manager, sizeof(ret->manager), "%s", o.manager);
        } else {
            ret->at = o.created;
        }
        snprintf(ret->resource_version, sizeof(ret->resource_version), "%s", o.resource_version);
    }
    krc_track_obj_cleanup(&o);
    return rc;
}
