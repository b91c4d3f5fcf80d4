/* Parser benchmark: krc_watch_event_parse against cJSON on a realistic pod.
 *
 * Generates a ~10 KB pod (labels, annotations, ownerReferences, a large
 * managedFields block, 2 containers + 1 sidecar init container with env
 * vars, probes and volumes, status with conditions and container statuses;
 * the same shape as bench/podgen.py) wrapped as a MODIFIED watch event, and
 * measures events/s and MB/s (CPU time of this process) for:
 *   - krc_watch_event_parse
 *   - cJSON_ParseWithLength + extracting the same fields + cJSON_Delete
 *   - linebuf framing (16 KB chunks) + krc_watch_event_parse
 *   - list_framer (16 KB chunks) + krc_pod_info_parse on a PodList
 *
 * Usage: bench_parse [-n iterations] [-s pod_bytes] [-f events.jsonl]
 * With -f, the first line of the file (e.g. from podgen.py --format watch)
 * is used instead of the built-in pod. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/kube/kube_pod.h"
#include "krc/util/linebuf.h"
#include "krc/kube/list_framer.h"
#include "krc/util/mem.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void gen_container(struct krc_buf *b, const char *name, const char *image, int port,
                          int n_env)
{
    int i;

    krc_buf_printf(b, "{\"name\":\"%s\",\"image\":\"%s\",", name, image);
    krc_buf_printf(b, "\"ports\":[{\"containerPort\":%d,\"protocol\":\"TCP\",\"name\":\"http\"}],",
                   port);
    krc_buf_append_str(b, "\"env\":[");
    for (i = 0; i < n_env; i++) {
        krc_buf_printf(b, "%s{\"name\":\"ENV_%d\",\"value\":\"value-%d-xxxxxxxxxxxx\"}",
                       i ? "," : "", i, i);
    }
    krc_buf_append_str(b, "],");
    krc_buf_append_str(
        b, "\"resources\":{\"limits\":{\"memory\":\"512Mi\"},\"requests\":{\"cpu\":\"250m\","
           "\"memory\":\"256Mi\"}},\"volumeMounts\":[{\"name\":\"config\",\"mountPath\":"
           "\"/etc/app\",\"readOnly\":true},{\"name\":\"kube-api-access-x7k2p\",\"readOnly\":true,"
           "\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],");
    krc_buf_printf(b,
                   "\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":%d,\"scheme\":"
                   "\"HTTP\"},\"initialDelaySeconds\":10,\"timeoutSeconds\":1,\"periodSeconds\":10,"
                   "\"successThreshold\":1,\"failureThreshold\":3},",
                   port);
    krc_buf_printf(b,
                   "\"readinessProbe\":{\"httpGet\":{\"path\":\"/ready\",\"port\":%d,\"scheme\":"
                   "\"HTTP\"},\"timeoutSeconds\":1,\"periodSeconds\":5,\"successThreshold\":1,"
                   "\"failureThreshold\":3},",
                   port);
    krc_buf_append_str(b, "\"terminationMessagePath\":\"/dev/termination-log\","
                          "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":"
                          "\"IfNotPresent\"}");
}

static void gen_managed_fields(struct krc_buf *b, int pad)
{
    static const char *const conds[] = {"ContainersReady", "Initialized",
                                        "PodReadyToStartContainers", "PodScheduled", "Ready"};
    int i;

    krc_buf_append_str(
        b, "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
           "\"apiVersion\":\"v1\",\"time\":\"2026-07-30T07:00:00Z\",\"fieldsType\":\"FieldsV1\","
           "\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{},\"f:labels\":{\".\":{},"
           "\"f:app\":{},\"f:pod-template-hash\":{},\"f:team\":{}},\"f:ownerReferences\":{\".\":"
           "{},\"k:{\\\"uid\\\":\\\"5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a59\\\"}\":{}}},"
           "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},\"f:env\":"
           "{\".\":{}");
    for (i = 0; i < 6; i++) {
        krc_buf_printf(b,
                       ",\"k:{\\\"name\\\":\\\"ENV_%d\\\"}\":{\".\":{},\"f:name\":{},"
                       "\"f:value\":{}}",
                       i);
    }
    krc_buf_append_str(
        b, "},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:livenessProbe\":{\".\":{},"
           "\"f:httpGet\":{\".\":{},\"f:path\":{},\"f:port\":{}}},\"f:name\":{},\"f:ports\":{\".\":"
           "{},\"k:{\\\"containerPort\\\":8080,\\\"protocol\\\":\\\"TCP\\\"}\":{}},"
           "\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:memory\":{}},\"f:requests\":"
           "{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{},"
           "\"f:volumeMounts\":{\".\":{},\"k:{\\\"mountPath\\\":\\\"/etc/app\\\"}\":{}}},"
           "\"k:{\\\"name\\\":\\\"metrics\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{}}},"
           "\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},\"f:initContainers\":{"
           "\"k:{\\\"name\\\":\\\"log-shipper\\\"}\":{\".\":{},\"f:image\":{},"
           "\"f:restartPolicy\":{}}},\"f:restartPolicy\":{},\"f:schedulerName\":{},"
           "\"f:securityContext\":{},\"f:terminationGracePeriodSeconds\":{},\"f:volumes\":{\".\":"
           "{},\"k:{\\\"name\\\":\\\"config\\\"}\":{\".\":{},\"f:configMap\":{},\"f:name\":{}}}}}},"
           "{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":"
           "\"2026-07-30T07:43:55Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{"
           "\"f:conditions\":{");
    for (i = 0; i < 5; i++) {
        krc_buf_printf(b,
                       "%s\"k:{\\\"type\\\":\\\"%s\\\"}\":{\".\":{},\"f:lastProbeTime\":{},"
                       "\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}}",
                       i ? "," : "", conds[i]);
    }
    krc_buf_append_str(b, "},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},"
                          "\"f:initContainerStatuses\":{},\"f:phase\":{},\"f:podIP\":{},"
                          "\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"10.244.3.17\\\"}\":{\".\":{},"
                          "\"f:ip\":{}}},\"f:startTime\":{}");
    for (i = 0; i < pad; i++) {
        krc_buf_printf(b, ",\"f:pad%04d\":{\".\":{},\"f:value\":{}}", i);
    }
    krc_buf_append_str(b, "}},\"subresource\":\"status\"}]");
}

static void gen_status(struct krc_buf *b, const char *name, int restarts, const char *hash)
{
    krc_buf_printf(b,
                   "{\"name\":\"%s\",\"ready\":%s,\"started\":%s,\"restartCount\":%d,\"image\":"
                   "\"registry.local/%s:1.4.2\",\"imageID\":\"registry.local/%s@sha256:%s%s%s%s\","
                   "\"containerID\":\"containerd://%s%s%s%s\",",
                   name, restarts ? "false" : "true", restarts ? "false" : "true", restarts, name,
                   name, hash, hash, hash, hash, hash, hash, hash, hash);
    if (restarts) {
        krc_buf_printf(b,
                       "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":"
                       "\"back-off 2m40s restarting failed container=%s pod=web-7d9c8b6f5-00001_"
                       "ns-001(0c9e6b55-3a7e-4c0e-9d7f-2f9b3d1a2b10)\"}},\"lastState\":{"
                       "\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\",\"startedAt\":"
                       "\"2026-07-30T07:10:02Z\",\"finishedAt\":\"2026-07-30T07:11:42Z\","
                       "\"containerID\":\"containerd://%s\"}}}",
                       name, hash);
    } else {
        krc_buf_append_str(b, "\"state\":{\"running\":{\"startedAt\":\"2026-07-30T07:00:02Z\"}},"
                              "\"lastState\":{}}");
    }
}

/* A MODIFIED watch event around a pod of roughly `target` bytes. */
static int gen_event(struct krc_buf *b, size_t target, int with_event)
{
    static const char *const conds[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                        "ContainersReady", "PodScheduled"};
    int pad = 0;
    int i;

    for (;;) {
        krc_buf_reset(b);
        if (with_event) {
            krc_buf_append_str(b, "{\"type\":\"MODIFIED\",\"object\":");
        }
        krc_buf_append_str(
            b, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
               "\"web-7d9c8b6f5-00001\",\"generateName\":\"web-7d9c8b6f5-\",\"namespace\":"
               "\"ns-001\",\"uid\":\"0c9e6b55-3a7e-4c0e-9d7f-2f9b3d1a2b10\",\"resourceVersion\":"
               "\"990112\",\"creationTimestamp\":\"2026-07-30T07:00:00Z\",\"labels\":{\"app\":"
               "\"web\",\"pod-template-hash\":\"7d9c8b6f5\",\"team\":\"payments\","
               "\"app.kubernetes.io/version\":\"1.4.2\"},\"annotations\":{"
               "\"kubectl.kubernetes.io/default-container\":\"app\",\"prometheus.io/scrape\":"
               "\"true\",\"prometheus.io/port\":\"9090\",\"alert-slack-channel\":"
               "\"#payments-alerts\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
               "\"ReplicaSet\",\"name\":\"web-7d9c8b6f5\",\"uid\":"
               "\"5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a59\",\"controller\":true,"
               "\"blockOwnerDeletion\":true}],");
        gen_managed_fields(b, pad);
        krc_buf_append_str(
            b, "},\"spec\":{\"volumes\":[{\"name\":\"config\",\"configMap\":{\"name\":"
               "\"web-config\",\"defaultMode\":420}},{\"name\":\"kube-api-access-x7k2p\","
               "\"projected\":{\"defaultMode\":420,\"sources\":[{\"serviceAccountToken\":{"
               "\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{\"name\":"
               "\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}}]}}],"
               "\"initContainers\":[{\"name\":\"log-shipper\",\"image\":"
               "\"fluent/fluent-bit:3.1\",\"restartPolicy\":\"Always\",\"resources\":{"
               "\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}},\"terminationMessagePath\":"
               "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
               "\"imagePullPolicy\":\"IfNotPresent\"}],\"containers\":[");
        gen_container(b, "app", "registry.local/web:1.4.2", 8080, 6);
        krc_buf_append_char(b, ',');
        gen_container(b, "metrics", "registry.local/exporter:0.9", 9090, 2);
        krc_buf_append_str(
            b, "],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
               "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"web\",\"serviceAccount\":"
               "\"web\",\"nodeName\":\"node-01\",\"securityContext\":{\"runAsNonRoot\":true,"
               "\"fsGroup\":2000},\"schedulerName\":\"default-scheduler\",\"tolerations\":[{"
               "\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
               "\"NoExecute\",\"tolerationSeconds\":300},{\"key\":"
               "\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":"
               "\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,"
               "\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},"
               "\"status\":{\"phase\":\"Running\",\"conditions\":[");
        for (i = 0; i < 5; i++) {
            krc_buf_printf(b,
                           "%s{\"type\":\"%s\",\"status\":\"True\",\"lastProbeTime\":null,"
                           "\"lastTransitionTime\":\"2026-07-30T07:00:05Z\"}",
                           i ? "," : "", conds[i]);
        }
        krc_buf_append_str(
            b, "],\"hostIP\":\"10.0.3.2\",\"hostIPs\":[{\"ip\":\"10.0.3.2\"}],\"podIP\":"
               "\"10.244.3.17\",\"podIPs\":[{\"ip\":\"10.244.3.17\"}],\"startTime\":"
               "\"2026-07-30T07:00:01Z\",\"initContainerStatuses\":[");
        gen_status(b, "log-shipper", 0, "ab12ab12");
        krc_buf_append_str(b, "],\"containerStatuses\":[");
        gen_status(b, "app", 3, "9e0d9e0d");
        krc_buf_append_char(b, ',');
        gen_status(b, "metrics", 0, "77aa77aa");
        krc_buf_append_str(b, "],\"qosClass\":\"Burstable\"}}");
        if (with_event) {
            krc_buf_append_char(b, '}');
        }
        if (b->len >= target || pad > 100000) {
            break;
        }
        pad += (int)((target - b->len) / 36) + 1;
    }
    return 0;
}

/* The same fields through cJSON, as the daemon would extract them. */
struct cj_result {
    int n;
    int restarts;
    int sidecars;
    long long ts;
};

static const char *cj_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void cj_extract(const char *json, size_t len, struct cj_result *r)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    const cJSON *obj;
    const cJSON *meta;
    const cJSON *spec;
    const cJSON *status;
    const cJSON *c;
    const char *s;
    int64_t t;
    int k;

    if (root == NULL) {
        fprintf(stderr, "cJSON failed\n");
        exit(1);
    }
    s = cj_str(root, "type");
    obj = cJSON_GetObjectItemCaseSensitive(root, "object");
    meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    r->n += s != NULL && cj_str(meta, "uid") != NULL && cj_str(meta, "name") != NULL &&
            cj_str(meta, "namespace") != NULL && cj_str(meta, "resourceVersion") != NULL;
    s = cj_str(meta, "creationTimestamp");
    if (s != NULL && krc_parse_rfc3339(s, strlen(s), &t) == 0) {
        r->ts += t;
    }
    (void)cj_str(meta, "deletionTimestamp");
    (void)cj_str(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), "krc.io/ignore");
    (void)cj_str(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), "alert-slack-channel");
    (void)cj_str(cJSON_GetObjectItemCaseSensitive(meta, "labels"), "alert-slack-channel");
    (void)cj_str(spec, "nodeName");
    (void)cj_str(status, "phase");
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers"))
    {
        s = cj_str(c, "restartPolicy");
        r->sidecars += s != NULL && strcmp(s, "Always") == 0 && cj_str(c, "name") != NULL;
    }
    for (k = 0; k < 2; k++) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, k ? "initContainerStatuses"
                                                                         : "containerStatuses"))
        {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "state");
            const cJSON *lt = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(c, "lastState"), "terminated");
            const cJSON *rc = cJSON_GetObjectItemCaseSensitive(c, "restartCount");
            (void)cj_str(c, "name");
            (void)cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ready"));
            (void)cj_str(cJSON_GetObjectItemCaseSensitive(st, "waiting"), "reason");
            (void)cJSON_GetObjectItemCaseSensitive(st, "running");
            (void)cJSON_GetObjectItemCaseSensitive(st, "terminated");
            if (cJSON_IsNumber(rc)) {
                r->restarts += rc->valueint;
            }
            if (lt != NULL) {
                (void)cJSON_GetObjectItemCaseSensitive(lt, "exitCode");
                (void)cJSON_GetObjectItemCaseSensitive(lt, "signal");
                (void)cj_str(lt, "reason");
                s = cj_str(lt, "startedAt");
                if (s != NULL && krc_parse_rfc3339(s, strlen(s), &t) == 0) {
                    r->ts += t;
                }
                s = cj_str(lt, "finishedAt");
                if (s != NULL && krc_parse_rfc3339(s, strlen(s), &t) == 0) {
                    r->ts += t;
                }
            }
        }
    }
    cJSON_Delete(root);
}

static void report(const char *what, long n, size_t bytes_each, double secs)
{
    printf("%-44s %9.0f events/s %8.1f MB/s  (%ld x %zu B in %.2f s CPU)\n", what, (double)n / secs,
           (double)n * (double)bytes_each / secs / 1e6, n, bytes_each, secs);
}

struct pipe_ctx {
    struct krc_watch_event ev;
    struct krc_pod_info pod;
    long parsed;
    int restarts;
};

static int pipe_line(const char *line, size_t len, void *ud)
{
    struct pipe_ctx *p = ud;
    struct krc_error err;

    if (krc_watch_event_parse(line, len, &p->ev, &err) != 0) {
        fprintf(stderr, "parse failed: %s\n", err.msg);
        exit(1);
    }
    p->parsed++;
    return 0;
}

static int pipe_item(const char *json, size_t len, void *ud)
{
    struct pipe_ctx *p = ud;
    struct krc_error err;

    if (krc_pod_info_parse(json, len, &p->pod, &err) != 0) {
        fprintf(stderr, "item parse failed: %s\n", err.msg);
        exit(1);
    }
    p->parsed++;
    return 0;
}

static int noop_line(const char *line, size_t len, void *ud)
{
    (void)line;
    (void)len;
    ((struct pipe_ctx *)ud)->parsed++;
    return 0;
}

/* Feed `stream` in 16 KB chunks; with a list framer when lf != NULL. */
static double frame_only(const struct krc_buf *stream, struct krc_list_framer *lf, long *ret_n)
{
    struct pipe_ctx pc;
    struct krc_linebuf lb;
    struct krc_error err;
    size_t off;
    double t0;

    memset(&pc, 0, sizeof(pc));
    krc_linebuf_init(&lb, 16 * 1024 * 1024);
    if (lf != NULL) {
        krc_list_framer_reset(lf);
    }
    t0 = cpu_now();
    for (off = 0; off < stream->len; off += 16384) {
        size_t chunk = stream->len - off < 16384 ? stream->len - off : 16384;
        if (lf != NULL) {
            krc_list_framer_feed(lf, stream->data + off, chunk, noop_line, &pc, &err);
        } else {
            krc_linebuf_feed(&lb, stream->data + off, chunk, noop_line, NULL, &pc);
        }
    }
    if (lf != NULL) {
        krc_list_framer_finish(lf, &err);
    } else {
        krc_linebuf_finish(&lb, noop_line, NULL, &pc);
    }
    t0 = cpu_now() - t0;
    krc_linebuf_cleanup(&lb);
    *ret_n = pc.parsed;
    return t0;
}

static char *read_first_line(const char *path, size_t *ret_len)
{
    FILE *f = fopen(path, "rb");
    struct krc_buf b;
    int ch;

    if (f == NULL) {
        perror(path);
        exit(2);
    }
    krc_buf_init(&b, 64 * 1024 * 1024);
    while ((ch = fgetc(f)) != EOF && ch != '\n') {
        if (krc_buf_append_char(&b, (char)ch) < 0) {
            fprintf(stderr, "%s: line too long\n", path);
            exit(2);
        }
    }
    fclose(f);
    *ret_len = b.len;
    return krc_buf_take(&b);
}

int main(int argc, char **argv)
{
    long iters = 100000;
    size_t target = 10240;
    const char *file = NULL;
    struct krc_buf ev;
    struct krc_buf podb;
    struct krc_buf stream;
    struct krc_watch_event e;
    struct krc_error err;
    struct cj_result cr;
    struct pipe_ctx pc;
    const char *json;
    size_t len;
    char *filebuf = NULL;
    double t0;
    double t1;
    long i;
    int opt;

    for (opt = 1; opt < argc; opt++) {
        if (strcmp(argv[opt], "-n") == 0 && opt + 1 < argc) {
            iters = strtol(argv[++opt], NULL, 10);
        } else if (strcmp(argv[opt], "-s") == 0 && opt + 1 < argc) {
            target = (size_t)strtoul(argv[++opt], NULL, 10);
        } else if (strcmp(argv[opt], "-f") == 0 && opt + 1 < argc) {
            file = argv[++opt];
        } else {
            fprintf(stderr, "usage: %s [-n iterations] [-s pod_bytes] [-f events.jsonl]\n",
                    argv[0]);
            return 2;
        }
    }
    if (iters < 1 || iters > 100000000) {
        fprintf(stderr, "bad -n\n");
        return 2;
    }

    krc_buf_init(&ev, 64 * 1024 * 1024);
    krc_buf_init(&podb, 64 * 1024 * 1024);
    if (file != NULL) {
        filebuf = read_first_line(file, &len);
        json = filebuf;
    } else {
        gen_event(&ev, target + 31, 1);
        json = ev.data;
        len = ev.len;
    }
    gen_event(&podb, target, 0);

    krc_watch_event_init(&e);
    if (krc_watch_event_parse(json, len, &e, &err) != 0) {
        fprintf(stderr, "event does not parse: %s\n", err.msg);
        return 1;
    }
    printf("event: %zu bytes, type %d, pod %s/%s, %zu containers", len, (int)e.type,
           e.pod.namespace, e.pod.name, e.pod.n_containers);
    for (i = 0; i < (long)e.pod.n_containers; i++) {
        const struct krc_container_info *c = &e.pod.containers[i];
        printf("%s %s%s restarts=%d", i ? "," : ":", c->name, c->is_sidecar ? "(sidecar)" : "",
               c->restart_count);
    }
    printf("\n");

    /* warm up, then measure */
    for (i = 0; i < 1000; i++) {
        krc_watch_event_parse(json, len, &e, &err);
    }
    t0 = cpu_now();
    for (i = 0; i < iters; i++) {
        if (krc_watch_event_parse(json, len, &e, &err) != 0) {
            fprintf(stderr, "parse failed: %s\n", err.msg);
            return 1;
        }
    }
    t1 = cpu_now();
    report("krc_watch_event_parse", iters, len, t1 - t0);

    memset(&cr, 0, sizeof(cr));
    {
        long n = iters / 5 > 0 ? iters / 5 : 1;
        t0 = cpu_now();
        for (i = 0; i < n; i++) {
            cj_extract(json, len, &cr);
        }
        t1 = cpu_now();
        report("cJSON_ParseWithLength + extract + Delete", n, len, t1 - t0);
        if (cr.n != n) {
            fprintf(stderr, "cJSON extraction mismatch\n");
            return 1;
        }
    }

    /* the daemon's watch path: 16 KB chunks through linebuf, then parse */
    memset(&pc, 0, sizeof(pc));
    krc_watch_event_init(&pc.ev);
    krc_pod_info_init(&pc.pod);
    krc_buf_init(&stream, (size_t)1 << 31);
    {
        struct krc_linebuf lb;
        size_t off;
        long n = 0;

        while (stream.len < 64 * 1024 * 1024 && n < iters) {
            if (krc_buf_append(&stream, json, len) < 0 || krc_buf_append_char(&stream, '\n') < 0) {
                return 1;
            }
            n++;
        }
        {
            long nf;
            double t = frame_only(&stream, NULL, &nf); /* first touch of the pages: warm-up */
            t = frame_only(&stream, NULL, &nf);
            report("linebuf framing alone (16 KB chunks)", nf, len, t);
        }
        krc_linebuf_init(&lb, 16 * 1024 * 1024);
        t0 = cpu_now();
        for (off = 0; off < stream.len; off += 16384) {
            size_t chunk = stream.len - off < 16384 ? stream.len - off : 16384;
            krc_linebuf_feed(&lb, stream.data + off, chunk, pipe_line, NULL, &pc);
        }
        krc_linebuf_finish(&lb, pipe_line, NULL, &pc);
        t1 = cpu_now();
        report("linebuf (16 KB chunks) + watch_event_parse", pc.parsed, len, t1 - t0);
        krc_linebuf_cleanup(&lb);
        if (pc.parsed != n) {
            fprintf(stderr, "framing mismatch %ld != %ld\n", pc.parsed, n);
            return 1;
        }
    }

    /* the LIST path: a PodList through list_framer, then pod parse */
    {
        struct krc_list_framer lf;
        long n = 0;
        size_t off;

        krc_buf_reset(&stream);
        krc_buf_append_str(&stream, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
                                    "\"resourceVersion\":\"88\"},\"items\":[");
        while (stream.len < 64 * 1024 * 1024 && n < iters) {
            if ((n > 0 && krc_buf_append_char(&stream, ',') < 0) ||
                krc_buf_append(&stream, podb.data, podb.len) < 0) {
                return 1;
            }
            n++;
        }
        krc_buf_append_str(&stream, "]}");
        pc.parsed = 0;
        krc_list_framer_init(&lf, 16 * 1024 * 1024);
        {
            long nf;
            double t = frame_only(&stream, &lf, &nf); /* warm-up */
            t = frame_only(&stream, &lf, &nf);
            report("list_framer alone (16 KB chunks, validating)", nf, podb.len, t);
        }
        krc_list_framer_reset(&lf);
        t0 = cpu_now();
        for (off = 0; off < stream.len; off += 16384) {
            size_t chunk = stream.len - off < 16384 ? stream.len - off : 16384;
            if (krc_list_framer_feed(&lf, stream.data + off, chunk, pipe_item, &pc, &err) != 0) {
                fprintf(stderr, "list: %s\n", err.msg);
                return 1;
            }
        }
        if (krc_list_framer_finish(&lf, &err) != 0) {
            fprintf(stderr, "list: %s\n", err.msg);
            return 1;
        }
        t1 = cpu_now();
        report("list_framer (16 KB chunks) + pod_info_parse", pc.parsed, podb.len, t1 - t0);
        krc_list_framer_cleanup(&lf);
    }

    krc_watch_event_cleanup(&pc.ev);
    krc_pod_info_cleanup(&pc.pod);
    krc_watch_event_cleanup(&e);
    krc_buf_cleanup(&stream);
    krc_buf_cleanup(&ev);
    krc_buf_cleanup(&podb);
    krc_free(filebuf);
    return 0;
}
