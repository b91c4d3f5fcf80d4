/* `kubectl describe pod` text, the container blocks (kube_describe.c cuts
 * the text into lines): a block's State, Last State, Ready, Restart Count,
 * Limits, Requests, probes and Environment lines -> a container's spec and
 * status JSON. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/explain/describe_doc.h"
#include "krc/util/mem.h"

/* ---- containers ---------------------------------------------------------------------- */

/* "State: Terminated" and its Reason, Exit Code, ... lines. */
static void add_state(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = krc_desc_child(d, i, key);
    const struct line *l;
    cJSON *st;
    cJSON *s;

    if (j == 0) {
        return;
    }
    l = &d->l[j];
    if (l->val_len == 7 && memcmp(l->val, "Running", 7) == 0) {
        st = krc_desc_add_obj(d, o, k);
        s = krc_desc_add_obj(d, st, "running");
        krc_desc_add_time_val(d, s, "startedAt", j, "Started");
    } else if (l->val_len == 7 && memcmp(l->val, "Waiting", 7) == 0) {
        st = krc_desc_add_obj(d, o, k);
        s = krc_desc_add_obj(d, st, "waiting");
        krc_desc_add_val(d, s, "reason", j, "Reason");
        krc_desc_add_val(d, s, "message", j, "Message");
    } else if (l->val_len == 10 && memcmp(l->val, "Terminated", 10) == 0) {
        st = krc_desc_add_obj(d, o, k);
        s = krc_desc_add_obj(d, st, "terminated");
        krc_desc_add_int_val(d, s, "exitCode", j, "Exit Code");
        krc_desc_add_int_val(d, s, "signal", j, "Signal");
        krc_desc_add_val(d, s, "reason", j, "Reason");
        krc_desc_add_val(d, s, "message", j, "Message");
        krc_desc_add_time_val(d, s, "startedAt", j, "Started");
        krc_desc_add_time_val(d, s, "finishedAt", j, "Finished");
    }
}

/* The indented lines under "Command:" / "Args:", one element each. */
static void add_lines(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = krc_desc_child(d, i, key);
    size_t end;
    cJSON *a;

    if (j == 0 || j + 1 >= d->n || d->l[j + 1].indent <= d->l[j].indent) {
        return;
    }
    a = krc_desc_add(d, o, k, cJSON_CreateArray());
    end = krc_desc_end_of(d, j);
    for (size_t m = j + 1; m < end && !d->oom; m++) {
        krc_desc_add_strn(d, a, NULL, d->l[m].p, d->l[m].len);
    }
}

/* "memory:  1Gi" lines under "Limits:" / "Requests:". */
static void add_map(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    size_t j = krc_desc_child(d, i, key);
    size_t end;
    cJSON *m;

    if (j == 0 || j + 1 >= d->n || d->l[j + 1].indent <= d->l[j].indent) {
        return;
    }
    m = krc_desc_add_obj(d, o, k);
    end = krc_desc_end_of(d, j);
    for (size_t x = j + 1; x < end && !d->oom; x++) {
        const struct line *l = &d->l[x];
        char name[128];
        if (l->key_len == 0 || l->key_len >= sizeof(name) || !krc_desc_has_val(l)) {
            continue;
        }
        memcpy(name, l->p, l->key_len);
        name[l->key_len] = '\0';
        krc_desc_add_strn(d, m, name, l->val, l->val_len);
    }
}

/* "10s" -> 10 */
static int seconds(const char *s, size_t n, long *ret)
{
    return n > 1 && s[n - 1] == 's' ? krc_desc_parse_int(s, n - 1, ret) : -1;
}

static void add_port(struct doc *d, cJSON *o, const char *s, size_t n)
{
    long v;

    if (krc_desc_parse_int(s, n, &v) == 0) {
        krc_desc_add(d, o, "port", cJSON_CreateNumber((double)v));
    } else if (n > 0) {
        krc_desc_add_strn(d, o, "port", s, n);
    }
}

/* "HOST:PORT" up to the first space in [a, e): the port into o. */
static void add_host_port(struct doc *d, cJSON *o, const char *a, const char *e)
{
    const char *ae = memchr(a, ' ', (size_t)(e - a));
    const char *colon;

    ae = ae != NULL ? ae : e;
    colon = memchr(a, ':', (size_t)(ae - a));
    if (colon != NULL) {
        add_port(d, o, colon + 1, (size_t)(ae - colon - 1));
    }
}

/* "http-get http://:8080/healthz delay=10s timeout=1s period=10s #success=1 #failure=3",
 * "exec [cat /tmp/ready] delay=0s ...", "tcp-socket :5432 ...", "grpc <pod>:9090  ..." */
static void add_probe(struct doc *d, cJSON *o, const char *k, size_t i, const char *key)
{
    static const struct {
        const char *word;
        const char *field;
    } nums[] = {{"delay=", "initialDelaySeconds"},
                {"timeout=", "timeoutSeconds"},
                {"period=", "periodSeconds"},
                {"#success=", "successThreshold"},
                {"#failure=", "failureThreshold"}};
    size_t j = krc_desc_child(d, i, key);
    const char *s;
    const char *e;
    cJSON *p;

    if (j == 0 || !krc_desc_has_val(&d->l[j])) {
        return;
    }
    s = d->l[j].val;
    e = s + d->l[j].val_len;
    p = krc_desc_add_obj(d, o, k);
    if (e - s > 9 && memcmp(s, "http-get ", 9) == 0) {
        const char *u = s + 9;
        const char *ue = memchr(u, ' ', (size_t)(e - u));
        const char *hp;
        const char *path;
        cJSON *h = krc_desc_add_obj(d, p, "httpGet");
        ue = ue != NULL ? ue : e;
        hp = krc_desc_find(u, ue, "://");
        if (hp != NULL && hp < ue) {
            const char *colon;
            krc_desc_add_strn(d, h, "scheme", u, (size_t)(hp - u));
            hp += 3;
            path = memchr(hp, '/', (size_t)(ue - hp));
            path = path != NULL ? path : ue;
            colon = memchr(hp, ':', (size_t)(path - hp));
            if (colon != NULL) {
                add_port(d, h, colon + 1, (size_t)(path - colon - 1));
            }
            if (path < ue) {
                krc_desc_add_strn(d, h, "path", path, (size_t)(ue - path));
            }
        }
        cJSON *sc = cJSON_GetObjectItemCaseSensitive(h, "scheme");
        if (sc != NULL) {
            for (char *c = sc->valuestring; c != NULL && *c != '\0'; c++) {
                *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
            }
        }
    } else if (e - s > 6 && memcmp(s, "exec [", 6) == 0) {
        const char *c = s + 6;
        const char *ce = memchr(c, ']', (size_t)(e - c));
        cJSON *x = krc_desc_add_obj(d, p, "exec");
        cJSON *a = krc_desc_add(d, x, "command", cJSON_CreateArray());
        ce = ce != NULL ? ce : e;
        while (c < ce && !d->oom) {
            const char *w = c;
            while (w < ce && *w != ' ') {
                w++;
            }
            if (w > c) {
                krc_desc_add_strn(d, a, NULL, c, (size_t)(w - c));
            }
            c = w + 1;
        }
    } else if (e - s > 11 && memcmp(s, "tcp-socket ", 11) == 0) {
        add_host_port(d, krc_desc_add_obj(d, p, "tcpSocket"), s + 11, e);
    } else if (e - s > 5 && memcmp(s, "grpc ", 5) == 0) {
        add_host_port(d, krc_desc_add_obj(d, p, "grpc"), s + 5, e);
    }
    for (const char *w = s; w < e && !d->oom;) {
        const char *we = memchr(w, ' ', (size_t)(e - w));
        we = we != NULL ? we : e;
        for (size_t n = 0; n < sizeof(nums) / sizeof(nums[0]); n++) {
            size_t wl = strlen(nums[n].word);
            long v;
            if ((size_t)(we - w) > wl && memcmp(w, nums[n].word, wl) == 0 &&
                ((n < 3 && seconds(w + wl, (size_t)(we - w) - wl, &v) == 0) ||
                 (n >= 3 && krc_desc_parse_int(w + wl, (size_t)(we - w) - wl, &v) == 0))) {
                krc_desc_add(d, p, nums[n].field, cJSON_CreateNumber((double)v));
            }
        }
        w = we + 1;
    }
}

/* Is the container's spec part all there? kubectl prints Limits, Requests
 * and the probes before Environment and Mounts (always printed, "<none>"
 * when empty): a block without them was cut, and a spec entry built from
 * it would tell kube_parse that the container has no limit and no probe. */
static int spec_shown(const struct doc *d, size_t i)
{
    return krc_desc_child(d, i, "Environment") != 0 ||
           krc_desc_child(d, i, "Environment Variables from") != 0 ||
           krc_desc_child(d, i, "Mounts") != 0 || krc_desc_child(d, i, "Devices") != 0;
}

/* A probe line of container i ("Liveness:", "Readiness:", "Startup:"). */
static int probe_shown(const struct doc *d, size_t i)
{
    return krc_desc_child(d, i, "Liveness") != 0 || krc_desc_child(d, i, "Readiness") != 0 ||
           krc_desc_child(d, i, "Startup") != 0;
}

/* The spec entry (NULL when not shown) and the status entry of container
 * i; from a cut block (!full) only the probes its lines show. */
static void add_container_fields(struct doc *d, cJSON *sp, cJSON *st, size_t i, int full)
{
    if (sp != NULL && full) {
        krc_desc_add_val(d, sp, "image", i, "Image");
        add_lines(d, sp, "command", i, "Command");
        add_lines(d, sp, "args", i, "Args");
        if (krc_desc_child(d, i, "Limits") != 0 || krc_desc_child(d, i, "Requests") != 0) {
            cJSON *res = krc_desc_add_obj(d, sp, "resources");
            add_map(d, res, "limits", i, "Limits");
            add_map(d, res, "requests", i, "Requests");
        }
    }
    if (sp != NULL) {
        add_probe(d, sp, "livenessProbe", i, "Liveness");
        add_probe(d, sp, "readinessProbe", i, "Readiness");
        add_probe(d, sp, "startupProbe", i, "Startup");
    }
    krc_desc_add_val(d, st, "image", i, "Image");
    krc_desc_add_val(d, st, "containerID", i, "Container ID");
    add_state(d, st, "state", i, "State");
    add_state(d, st, "lastState", i, "Last State");
    krc_desc_add_int_val(d, st, "restartCount", i, "Restart Count");
    {
        size_t r = krc_desc_child(d, i, "Ready");
        if (r != 0 && krc_desc_has_val(&d->l[r])) {
            int t = d->l[r].val_len == 4 && memcmp(d->l[r].val, "True", 4) == 0;
            int f = d->l[r].val_len == 5 && memcmp(d->l[r].val, "False", 5) == 0;
            if (t || f) {
                krc_desc_add(d, st, "ready", cJSON_CreateBool(t));
            }
        }
    }
}

int krc_desc_add_containers(struct doc *d, cJSON *spec_arr, cJSON *status_arr, size_t sec,
                            struct krc_error *err)
{
    size_t end = krc_desc_end_of(d, sec);

    for (size_t i = sec + 1; i < end && !d->oom; i++) {
        const struct line *l = &d->l[i];
        cJSON *sp;
        cJSON *st;
        char *name;
        if (l->indent != d->l[sec + 1].indent) {
            continue;
        }
        if (l->unnamed) {
            /* no name: kube_parse matches it to the only spec container */
            sp = spec_shown(d, i) || probe_shown(d, i) ? krc_desc_add_obj(d, spec_arr, NULL) : NULL;
            st = krc_desc_add_obj(d, status_arr, NULL);
            add_container_fields(d, sp, st, i, spec_shown(d, i));
            continue;
        }
        if (l->key_len == 0 || l->val_len != 0) {
            return krc_error_set(err, KRC_EINVAL,
                                 "kubectl describe output: expected a container name (\"app:\") "
                                 "under %.*s, got \"%.*s\"",
                                 (int)d->l[sec].key_len, d->l[sec].p,
                                 (int)(l->len < 60 ? l->len : 60), l->p);
        }
        name = krc_calloc(1, l->key_len + 1);
        if (name == NULL) {
            d->oom = 1;
            break;
        }
        memcpy(name, l->p, l->key_len);
        sp = spec_shown(d, i) || probe_shown(d, i) ? krc_desc_add_obj(d, spec_arr, NULL) : NULL;
        st = krc_desc_add_obj(d, status_arr, NULL);
        if (sp != NULL) {
            krc_desc_add(d, sp, "name", cJSON_CreateString(name));
        }
        krc_desc_add(d, st, "name", cJSON_CreateString(name));
        krc_free(name);
        add_container_fields(d, sp, st, i, spec_shown(d, i));
    }
    return 0;
}
