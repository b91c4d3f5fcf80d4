#include "krc/explain.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "krc/buf.h"
#include "krc/diagnose.h"
#include "krc/error.h"
#include "krc/kube_parse.h"
#include "krc/mem.h"
#include "krc/redact.h"
#include "krc/report.h"
#include "krc/slack_format.h"

enum format { FMT_TEXT, FMT_JSON, FMT_SLACK };

static void usage(FILE *f)
{
    fprintf(f, "usage: krc explain --pod FILE [--events FILE] [--node FILE] [--logs FILE]\n"
               "                   [--container NAME] [--format text|json|slack]\n"
               "  Diagnose the last restart of a pod from saved kubectl output:\n"
               "    --pod FILE       kubectl get pod POD -o json   (\"-\" reads stdin)\n"
               "    --events FILE    kubectl get events -n NS -o json\n"
               "    --node FILE      kubectl get node NODE -o json\n"
               "    --logs FILE      kubectl logs POD -c CONTAINER --previous\n"
               "    --container NAME diagnose this container (default: the one that\n"
               "                     terminated last)\n"
               "    --format F       text (default), json or slack\n");
}

/* Read a whole file (or stdin for "-") into memory, up to `max` bytes; with
 * keep_tail, larger regular files keep their last `max` bytes. */
static int read_input(const char *path, size_t max, int keep_tail, char **ret, size_t *ret_len,
                      int *ret_truncated, struct krc_error *err)
{
    struct krc_buf b;
    char chunk[65536];
    int fd;
    int rc = 0;
    struct stat st;
    int truncated = 0;

    if (strcmp(path, "-") == 0) {
        fd = STDIN_FILENO;
    } else {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return krc_error_set(err, KRC_EIO, "cannot open: %s", KRC_ERRNO_STR(errno));
        }
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = krc_error_set(err, KRC_EIO, "is a directory");
        goto close;
    }
    if (keep_tail && fd != STDIN_FILENO && S_ISREG(st.st_mode) && (size_t)st.st_size > max) {
        if (lseek(fd, st.st_size - (off_t)max, SEEK_SET) < 0) {
            rc = krc_error_set(err, KRC_EIO, "cannot seek: %s", KRC_ERRNO_STR(errno));
            goto close;
        }
        truncated = 1;
    }
    krc_buf_init(&b, max);
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rc = krc_error_set(err, KRC_EIO, "read error: %s", KRC_ERRNO_STR(errno));
            break;
        }
        if (n == 0) {
            break;
        }
        rc = krc_buf_append(&b, chunk, (size_t)n);
        if (rc == KRC_ETOOBIG && keep_tail) {
            /* stdin or a growing file: keep the newest `max` bytes */
            size_t un = (size_t)n;
            size_t drop = b.len + un - max;
            const char *from = chunk;
            if (drop > b.len) {
                from += un - max;
                un = max;
                drop = b.len;
            }
            krc_buf_consume(&b, drop);
            rc = krc_buf_append(&b, from, un);
            truncated = 1;
        }
        if (rc == KRC_ETOOBIG) {
            rc = krc_error_set(err, KRC_ETOOBIG, "larger than the %zu byte limit", max);
            break;
        }
        if (rc < 0) {
            rc = krc_error_set(err, rc, "out of memory");
            break;
        }
    }
    if (rc == 0) {
        *ret_len = b.len;
        *ret = krc_buf_take(&b);
        if (*ret == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        if (ret_truncated != NULL) {
            *ret_truncated = truncated;
        }
    }
    krc_buf_cleanup(&b);
close:
    if (fd != STDIN_FILENO) {
        close(fd);
    }
    return rc;
}

typedef int (*parse_fn)(const char *, size_t, struct krc_report *, struct krc_error *);

static int load_json(const char *opt, const char *path, parse_fn fn, struct krc_report *r)
{
    struct krc_error err;
    char *data = NULL;
    size_t len = 0;
    int rc;

    krc_error_clear(&err);
    rc = read_input(path, KRC_KUBE_PARSE_MAX, 0, &data, &len, NULL, &err);
    if (rc < 0) {
        fprintf(stderr, "krc explain: %s %s: %s\n", opt, path, err.msg);
        return rc;
    }
    rc = fn(data, len, r, &err);
    krc_free(data);
    if (rc < 0) {
        fprintf(stderr, "krc explain: %s %s: %s\n", opt, strcmp(path, "-") ? path : "<stdin>",
                err.msg);
    }
    return rc;
}

static void time_str(int64_t t, char *out, size_t outsz)
{
    if (t <= 0) {
        snprintf(out, outsz, "-");
        return;
    }
    {
        /* RFC 3339 UTC without depending on the daemon's clock module */
        int64_t days = t / 86400;
        int64_t rem = t % 86400;
        int64_t z = days + 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        int64_t doe = z - era * 146097;
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        int64_t y = yoe + era * 400;
        int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        int64_t mp = (5 * doy + 2) / 153;
        int64_t d = doy - (153 * mp + 2) / 5 + 1;
        int64_t m = mp < 10 ? mp + 3 : mp - 9;
        y += m <= 2;
        snprintf(out, outsz, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)y,
                 (long long)m, (long long)d, (long long)(rem / 3600), (long long)(rem % 3600 / 60),
                 (long long)(rem % 60));
    }
}

static cJSON *add_str_or_null(cJSON *o, const char *k, const char *v)
{
    return v != NULL ? cJSON_AddStringToObject(o, k, v) : cJSON_AddNullToObject(o, k);
}

static int print_json(const struct krc_report *r, const struct krc_diagnosis *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *ev;
    char ts[40];
    char *text;
    size_t i;
    int ok = o != NULL;

    ok = ok && add_str_or_null(o, "namespace", r->namespace);
    ok = ok && add_str_or_null(o, "pod", r->name);
    ok = ok && add_str_or_null(o, "uid", r->uid);
    ok = ok && add_str_or_null(o, "node", r->node_name);
    ok = ok && add_str_or_null(o, "container", d->container);
    ok = ok && cJSON_AddBoolToObject(o, "init_container", d->is_init);
    ok = ok && cJSON_AddNumberToObject(o, "restart_count", d->restart_count);
    ok = ok && cJSON_AddNumberToObject(o, "exit_code", d->exit_code);
    ok = ok && add_str_or_null(o, "signal", d->signal_name);
    ok = ok && add_str_or_null(o, "reason", d->reason);
    ok = ok && cJSON_AddStringToObject(o, "cause", krc_cause_name(d->cause));
    ok = ok && cJSON_AddStringToObject(o, "summary", d->summary);
    time_str(d->started_at, ts, sizeof(ts));
    ok = ok && add_str_or_null(o, "started_at", d->started_at > 0 ? ts : NULL);
    time_str(d->finished_at, ts, sizeof(ts));
    ok = ok && add_str_or_null(o, "finished_at", d->finished_at > 0 ? ts : NULL);
    ok = ok && cJSON_AddNumberToObject(o, "gpus", (double)d->gpus);
    ev = ok ? cJSON_AddArrayToObject(o, "evidence") : NULL;
    ok = ev != NULL;
    for (i = 0; ok && i < d->n_evidence; i++) {
        cJSON *s = cJSON_CreateString(d->evidence[i]);
        ok = s != NULL && cJSON_AddItemToArray(ev, s);
    }
    text = ok ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (text == NULL) {
        fprintf(stderr, "krc explain: out of memory\n");
        return 1;
    }
    printf("%s\n", text);
    cJSON_free(text);
    return 0;
}

static void print_text(const struct krc_report *r, const struct krc_diagnosis *d)
{
    char ts[40];
    size_t i;

    printf("Pod:        %s/%s", r->namespace ? r->namespace : "?", r->name ? r->name : "?");
    if (r->owner_kind != NULL && r->owner_name != NULL) {
        printf(" (%s %s)", r->owner_kind, r->owner_name);
    }
    if (r->node_name != NULL) {
        printf(" on node %s", r->node_name);
    }
    printf("\nContainer:  %s%s, %d restart%s\n", d->container,
           d->is_sidecar ? " (sidecar)" : (d->is_init ? " (init)" : ""), d->restart_count,
           d->restart_count == 1 ? "" : "s");
    time_str(d->finished_at, ts, sizeof(ts));
    printf("Last exit:  code %d", d->exit_code);
    if (d->signal_name != NULL) {
        printf(" (%s)", d->signal_name);
    }
    printf(", reason %s, finished %s\n", d->reason ? d->reason : "-", ts);
    printf("Cause:      %s\n", krc_cause_name(d->cause));
    printf("Summary:    %s\n", d->summary);
    if (d->n_evidence > 0) {
        printf("Evidence:\n");
        for (i = 0; i < d->n_evidence; i++) {
            printf("  - %s\n", d->evidence[i]);
        }
    }
}

/* The Slack alert exactly as the daemon would post it (cluster name from
 * $CLUSTER_NAME, ages relative to now, built-in redaction). */
static int print_slack(const struct krc_report *r, const struct krc_diagnosis *d)
{
    struct krc_slack_options o;
    struct krc_redactor *rd = NULL;
    struct krc_error err;
    const char *cluster = getenv("CLUSTER_NAME");
    char *json = NULL;
    int rc;

    krc_error_clear(&err);
    krc_slack_options_init(&o);
    o.cluster = cluster != NULL && cluster[0] != '\0' ? cluster : NULL;
    o.now = (int64_t)time(NULL);
    rc = krc_redact_new(NULL, 0, &rd, &err);
    if (rc == 0) {
        o.redactor = rd;
        rc = krc_slack_format_restart(r, d, &o, &json, NULL, &err);
    }
    krc_redact_free(rd);
    if (rc < 0) {
        fprintf(stderr, "krc explain: %s\n", err.msg);
        return 1;
    }
    printf("%s\n", json);
    krc_free(json);
    return 0;
}

int krc_explain_main(int argc, char **argv)
{
    const char *pod = NULL;
    const char *events = NULL;
    const char *node = NULL;
    const char *logs = NULL;
    const char *container = NULL;
    enum format fmt = FMT_TEXT;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_error err;
    int stdin_uses = 0;
    int status = 1;
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        const char **dst = NULL;
        const char *eq;
        size_t nl;
        static const char *const opts[] = {"--pod",  "--events",    "--node",
                                           "--logs", "--container", "--format"};
        size_t k;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        eq = strchr(a, '=');
        nl = eq ? (size_t)(eq - a) : strlen(a);
        for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
            if (strlen(opts[k]) == nl && strncmp(a, opts[k], nl) == 0) {
                break;
            }
        }
        if (k == sizeof(opts) / sizeof(opts[0])) {
            fprintf(stderr, "krc explain: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (eq != NULL) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            fprintf(stderr, "krc explain: %s needs a value\n", opts[k]);
            usage(stderr);
            return 2;
        }
        if (val[0] == '\0') {
            fprintf(stderr, "krc explain: %s needs a non-empty value\n", opts[k]);
            return 2;
        }
        switch (k) {
        case 0:
            dst = &pod;
            break;
        case 1:
            dst = &events;
            break;
        case 2:
            dst = &node;
            break;
        case 3:
            dst = &logs;
            break;
        case 4:
            dst = &container;
            break;
        default:
            if (strcmp(val, "text") == 0) {
                fmt = FMT_TEXT;
            } else if (strcmp(val, "json") == 0) {
                fmt = FMT_JSON;
            } else if (strcmp(val, "slack") == 0) {
                fmt = FMT_SLACK;
            } else {
                fprintf(stderr, "krc explain: --format must be text, json or slack, not '%s'\n",
                        val);
                return 2;
            }
            break;
        }
        if (dst != NULL) {
            if (*dst != NULL) {
                fprintf(stderr, "krc explain: %s given twice\n", opts[k]);
                return 2;
            }
            *dst = val;
            if (k <= 3 && strcmp(val, "-") == 0) {
                stdin_uses++;
            }
        }
    }
    if (pod == NULL) {
        fprintf(stderr, "krc explain: --pod FILE is required\n");
        usage(stderr);
        return 2;
    }
    if (stdin_uses > 1) {
        fprintf(stderr, "krc explain: only one input can be read from stdin (\"-\")\n");
        return 2;
    }

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    krc_error_clear(&err);
    if (load_json("--pod", pod, krc_kube_parse_pod, &r) < 0) {
        goto out;
    }
    if (events != NULL && load_json("--events", events, krc_kube_parse_events, &r) < 0) {
        goto out;
    }
    if (node != NULL && load_json("--node", node, krc_kube_parse_node, &r) < 0) {
        goto out;
    }
    krc_report_retain_pod_events(&r);
    if (logs != NULL) {
        char *data = NULL;
        size_t len = 0;
        int truncated = 0;
        if (read_input(logs, KRC_REPORT_LOG_MAX, 1, &data, &len, &truncated, &err) < 0) {
            fprintf(stderr, "krc explain: --logs %s: %s\n", logs, err.msg);
            goto out;
        }
        if (krc_report_set_log(&r, container, data, len, truncated, &err) < 0) {
            krc_free(data);
            fprintf(stderr, "krc explain: --logs %s: %s\n", logs, err.msg);
            goto out;
        }
        krc_free(data);
    }
    if (krc_diagnose(&r, container, &d, &err) < 0) {
        fprintf(stderr, "krc explain: %s%s\n", err.code == KRC_ENOTFOUND ? "--container: " : "",
                err.msg);
        goto out;
    }
    if (!d.has_termination) {
        fprintf(stderr,
                "krc explain: nothing to explain: %s (is this the pod after a restart? "
                "lastState.terminated is empty in %s)\n",
                d.summary, pod);
        goto out;
    }
    switch (fmt) {
    case FMT_JSON:
        status = print_json(&r, &d);
        break;
    case FMT_SLACK:
        status = print_slack(&r, &d);
        break;
    default:
        print_text(&r, &d);
        status = 0;
        break;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "krc explain: cannot write the output: %s\n", KRC_ERRNO_STR(errno));
        status = 1;
    }
out:
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return status;
}
