#include "krc/cli/explain.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "krc/analyse/analyse.h"
#include "krc/util/buf.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/explain/kube_describe.h"
#include "krc/kube/kube_parse.h"
#include "krc/util/logtail.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"
#include "krc/cli/env_redactor.h"
#include "krc/model/report.h"
#include "krc/alert/dest.h"
#include "krc/util/text.h"
#include "krc/explain/yaml_json.h"

enum format { FMT_TEXT, FMT_JSON, FMT_SLACK };

static void usage(FILE *f)
{
    fprintf(f, "usage: krc explain --pod FILE [--events FILE] [--node FILE] [--logs FILE]\n"
               "                   [--container NAME] [--format text|json|slack]\n"
               "  Diagnose the last restart of a pod from saved kubectl output:\n"
               "    --pod FILE       kubectl get pod POD -o json|yaml   (\"-\" reads stdin),\n"
               "                     or kubectl describe pod POD (then --events may be left\n"
               "                     out: its Events table is used)\n"
               "    --events FILE    kubectl get events -n NS [-o json|yaml], or the Events\n"
               "                     table of kubectl describe pod\n"
               "    --node FILE      kubectl get node NODE -o json|yaml\n"
               "                     (JSON or YAML, told apart by the content)\n"
               "    --logs FILE      kubectl logs POD -c CONTAINER --previous\n"
               "    --container NAME diagnose this container (default: the one that\n"
               "                     terminated last)\n"
               "    --format F       text (default), json or slack\n");
}

/* An error on stderr. Its details may quote the input files (a name, a
 * reason): sanitised like the text output. */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
    char msg[KRC_ERROR_MSG_MAX + 1024];
    char *safe;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    safe = krc_text_safe(msg, sizeof(msg) * 3, 0);
    fprintf(stderr, "krc explain: %s\n", safe != NULL ? safe : msg);
    krc_free(safe);
}

/* Open a file (or stdin for "-") for reading; directories are refused. */
static int open_input(const char *path, int *ret_fd, struct stat *st, struct krc_error *err)
{
    int fd = STDIN_FILENO;

    *ret_fd = -1; /* set on every path (clang-tidy could not see the error codes) */
    memset(st, 0, sizeof(*st));

    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return krc_error_set(err, KRC_EIO, "cannot open: %s", KRC_ERRNO_STR(errno));
        }
    }
    if (fstat(fd, st) != 0) {
        memset(st, 0, sizeof(*st));
    } else if (S_ISDIR(st->st_mode)) {
        if (fd != STDIN_FILENO) {
            close(fd);
        }
        return krc_error_set(err, KRC_EIO, "is a directory");
    }
    *ret_fd = fd;
    return 0;
}

/* Read into buf: 0 at the end, the byte count, or a negative code. */
static ssize_t read_chunk(int fd, char *buf, size_t n, struct krc_error *err)
{
    for (;;) {
        ssize_t got = read(fd, buf, n);
        if (got >= 0) {
            return got;
        }
        if (errno != EINTR) {
            return krc_error_set(err, KRC_EIO, "read error: %s", KRC_ERRNO_STR(errno));
        }
    }
}

/* Read a whole file (or stdin for "-") into memory, up to `max` bytes. */
static int read_input(const char *path, size_t max, char **ret, size_t *ret_len,
                      struct krc_error *err)
{
    struct krc_buf b;
    char chunk[65536];
    struct stat st;
    int fd;
    int rc = open_input(path, &fd, &st, err);

    if (rc < 0) {
        return rc;
    }
    krc_buf_init(&b, max);
    for (;;) {
        ssize_t n = read_chunk(fd, chunk, sizeof(chunk), err);
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        rc = krc_buf_append(&b, chunk, (size_t)n);
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
    }
    krc_buf_cleanup(&b);
    if (fd != STDIN_FILENO) {
        close(fd);
    }
    return rc;
}

/* Read the end of a log file (or stdin): its last `max` bytes, from a line
 * start when one is kept, and what was cut (a large regular file is not
 * read before its last max + 1 bytes). *ret: caller frees with krc_free. */
static int read_log(const char *path, size_t max, unsigned char **ret, size_t *ret_len,
                    struct krc_logtail_cut *ret_cut, struct krc_error *err)
{
    struct krc_logtail tail;
    char chunk[65536];
    struct stat st;
    int fd;
    int rc = open_input(path, &fd, &st, err);

    if (rc < 0) {
        return rc;
    }
    krc_logtail_init(&tail, max, 0);
    if (fd != STDIN_FILENO && S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max + 1) {
        /* the byte before the kept ones tells whether they start a line */
        off_t skip = st.st_size - (off_t)max - 1;
        if (lseek(fd, skip, SEEK_SET) < 0) {
            rc = krc_error_set(err, KRC_EIO, "cannot seek: %s", KRC_ERRNO_STR(errno));
            goto close;
        }
        krc_logtail_skip(&tail, (uint64_t)skip);
    }
    for (;;) {
        ssize_t n = read_chunk(fd, chunk, sizeof(chunk), err);
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        if (krc_logtail_feed(&tail, chunk, (size_t)n) < 0) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == 0) {
        krc_logtail_finish(&tail, ret, ret_len, ret_cut);
    }
close:
    krc_logtail_cleanup(&tail);
    if (fd != STDIN_FILENO) {
        close(fd);
    }
    return rc;
}

typedef int (*parse_fn)(const char *, size_t, struct krc_report *, struct krc_error *);

static int only_space(const char *data, size_t len)
{
    size_t i = 0;

    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        i = 3;
    }
    for (; i < len; i++) {
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' && data[i] != '\n') {
            return 0;
        }
    }
    return 1;
}

/* `kubectl describe pod` text: the pod, and its Events table unless
 * --events was given. */
static int load_describe(const char *data, size_t len, int events_given, struct krc_report *r,
                         struct krc_error *err)
{
    char *pod = NULL;
    char *events = NULL;
    int rc = krc_kube_describe_pod(data, len, &pod, &events, err);

    if (rc == 0) {
        rc = krc_kube_parse_pod(pod, strlen(pod), r, err);
    }
    if (rc == 0 && events != NULL && !events_given) {
        rc = krc_kube_parse_events(events, strlen(events), r, err);
    }
    krc_free(pod);
    krc_free(events);
    return rc;
}

/* An event table as text: describe's Events table or `kubectl get events`. */
static int load_event_table(const char *data, size_t len, struct krc_report *r,
                            struct krc_error *err)
{
    char *events = NULL;
    int rc = krc_kube_describe_events(data, len, &events, err);

    if (rc == 0) {
        rc = krc_kube_parse_events(events, strlen(events), r, err);
    }
    krc_free(events);
    return rc;
}

/* 1 when the JSON (from YAML) is an object with a Kubernetes object's
 * top-level keys, or a List of them: then it is not describe text. */
static int kube_object(const char *json)
{
    static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec", "status", "items"};
    cJSON *o = json != NULL ? cJSON_Parse(json) : NULL;
    int yes = 0;

    for (size_t i = 0; cJSON_IsObject(o) && i < sizeof(keys) / sizeof(keys[0]); i++) {
        yes |= cJSON_GetObjectItemCaseSensitive(o, keys[i]) != NULL;
    }
    cJSON_Delete(o);
    return yes;
}

/* Read kubectl output in JSON or YAML (told apart by content, not by the
 * file name) and decode it with fn. `kind` picks the document of that kind
 * from a multi-document YAML file; `what` names the expected command. For
 * --pod (fn is krc_kube_parse_pod), `kubectl describe pod` text is read
 * too; events_given tells whether its Events table is wanted. */
static int load_doc(const char *opt, const char *path, parse_fn fn, const char *kind,
                    const char *what, int events_given, struct krc_report *r)
{
    struct krc_error err;
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    char *data = NULL;
    char *json = NULL;
    size_t len = 0;
    int hint = 0;
    int rc;

    krc_error_clear(&err);
    rc = read_input(path, KRC_KUBE_PARSE_MAX, &data, &len, &err);
    if (rc < 0) {
        complain("%s %s: %s", opt, name, err.msg);
        return rc;
    }
    if (only_space(data, len)) {
        fprintf(stderr, "krc explain: %s %s: the file is empty (expected the output of %s)\n", opt,
                name, what);
        krc_free(data);
        return KRC_EPARSE;
    }
    if (krc_yaml_json_is_json(data, len)) {
        rc = fn(data, len, r, &err);
        if (rc == KRC_EPARSE && fn == krc_kube_parse_pod && memchr(data, '\0', len) == NULL &&
            krc_kube_describe_is_pod(data, len)) {
            /* not JSON after all: describe text whose first line starts
             * with '[' or '{' (a shell prompt "[12:54:41] $ kubectl ...") */
            krc_report_clear_pod(r);
            krc_error_clear(&err);
            rc = load_describe(data, len, events_given, r, &err);
            hint = rc == KRC_EINVAL;
        }
    } else {
        size_t jlen = 0;
        int text = memchr(data, '\0', len) == NULL &&
                   (fn == krc_kube_parse_pod      ? krc_kube_describe_is_pod(data, len)
                    : fn == krc_kube_parse_events ? krc_kube_describe_is_events(data, len)
                                                  : 0);
        rc = krc_yaml_json_convert(data, len, kind, KRC_KUBE_PARSE_MAX, &json, &jlen, &err);
        if (text && !(rc == 0 && kube_object(json))) {
            /* describe's shapes, and not YAML of a Kubernetes object: kubectl
             * describe text (a "Key: value" mapping is valid YAML too) */
            krc_free(json);
            json = NULL;
            krc_error_clear(&err);
            rc = fn == krc_kube_parse_pod ? load_describe(data, len, events_given, r, &err)
                                          : load_event_table(data, len, r, &err);
            hint = rc == KRC_EINVAL;
        } else if (rc == KRC_EPARSE) {
            hint = 1; /* e.g. kubectl's default table output */
        } else if (rc == 0) {
            rc = fn(json, jlen, r, &err);
        }
    }
    krc_free(json);
    krc_free(data);
    if (rc < 0 && hint) {
        /* say what is expected */
        complain("%s %s: %s (expected the output of %s%s)", opt, name, err.msg, what,
                 fn == krc_kube_parse_pod      ? " or kubectl describe pod"
                 : fn == krc_kube_parse_events ? ", the Events table of kubectl describe pod "
                                                 "or kubectl get events"
                                               : "");
    } else if (rc < 0) {
        complain("%s %s: %s", opt, name, err.msg);
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

static int add_strings(cJSON *o, const char *k, char *const *v, size_t n)
{
    cJSON *a = cJSON_AddArrayToObject(o, k);
    size_t i;

    for (i = 0; a != NULL && i < n; i++) {
        cJSON *s = cJSON_CreateString(v[i]);
        if (s == NULL || !cJSON_AddItemToArray(a, s)) {
            cJSON_Delete(s);
            return 0;
        }
    }
    return a != NULL;
}

int krc_explain_write_json(FILE *out, const struct krc_report *r, const struct krc_diagnosis *d)
{
    cJSON *o = cJSON_CreateObject();
    char ts[40];
    char *text;
    int ok = o != NULL;

    ok = ok && add_str_or_null(o, "namespace", r->namespace);
    ok = ok && add_str_or_null(o, "pod", r->name);
    ok = ok && add_str_or_null(o, "uid", r->uid);
    ok = ok && add_str_or_null(o, "node", r->node_name);
    ok = ok && add_str_or_null(o, "container", d->container);
    ok = ok && cJSON_AddBoolToObject(o, "init_container", d->is_init);
    ok = ok &&
         (d->restart_count_known ? cJSON_AddNumberToObject(o, "restart_count", d->restart_count)
                                 : cJSON_AddNullToObject(o, "restart_count")) != NULL;
    ok = ok && (d->has_termination ? cJSON_AddNumberToObject(o, "exit_code", d->exit_code)
                                   : cJSON_AddNullToObject(o, "exit_code"));
    ok = ok && add_str_or_null(o, "signal", d->signal_name);
    ok = ok && add_str_or_null(o, "reason", d->reason);
    ok = ok && cJSON_AddStringToObject(o, "cause", krc_cause_name(d->cause));
    ok = ok && cJSON_AddStringToObject(o, "confidence", krc_confidence_name(d->confidence));
    ok = ok && cJSON_AddStringToObject(o, "summary", d->summary);
    time_str(d->started_at, ts, sizeof(ts));
    ok = ok && add_str_or_null(o, "started_at", d->started_at > 0 ? ts : NULL);
    time_str(d->finished_at, ts, sizeof(ts));
    ok = ok && add_str_or_null(o, "finished_at", d->finished_at > 0 ? ts : NULL);
    ok = ok && cJSON_AddNumberToObject(o, "gpus", (double)d->gpus);
    ok = ok && add_strings(o, "evidence", d->evidence, d->n_evidence);
    ok = ok && add_strings(o, "unchecked", d->unchecked, d->n_unchecked);
    ok = ok && add_str_or_null(o, "next_step", d->next_step);
    ok = ok && add_strings(o, "commands", d->commands, d->n_commands);
    text = ok ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (text == NULL) {
        return KRC_ENOMEM;
    }
    fprintf(out, "%s\n", text);
    cJSON_free(text);
    return 0;
}

/* The text renderer's untrusted strings (names, reasons, diagnosis texts
 * quoting the pod, its events and its log) go through krc_text_sanitize:
 * an escape sequence in a pod name, a node name or a log line is printed
 * as visible text, never obeyed by the terminal. */
#define SHOW_MAX (64u * 1024u)

/* Write s (NULL: `dflt`), sanitised, on one line. */
static void put(FILE *out, const char *s, const char *dflt)
{
    if (s == NULL) {
        fputs(dflt, out);
    } else {
        krc_text_fputs(s, SHOW_MAX, 0, out);
    }
}

static void print_list(FILE *out, const char *title, char *const *v, size_t n, const char *bullet)
{
    size_t i;

    if (n > 0) {
        fprintf(out, "%s\n", title);
        for (i = 0; i < n; i++) {
            fputs(bullet, out);
            put(out, v[i], "");
            fputc('\n', out);
        }
    }
}

void krc_explain_write_text(FILE *out, const struct krc_report *r, const struct krc_diagnosis *d)
{
    char ts[40];

    fputs("Pod:        ", out);
    put(out, r->namespace, "?");
    fputc('/', out);
    put(out, r->name, "?");
    if (r->owner_kind != NULL && r->owner_name != NULL) {
        fputs(" (", out);
        put(out, r->owner_kind, "");
        fputc(' ', out);
        put(out, r->owner_name, "");
        fputc(')', out);
    }
    if (r->node_name != NULL) {
        fputs(" on node ", out);
        put(out, r->node_name, "");
    }
    fputs("\nContainer:  ", out);
    put(out, d->container, "?");
    fprintf(out, "%s, ", d->is_sidecar ? " (sidecar)" : (d->is_init ? " (init)" : ""));
    if (d->restart_count_known) {
        fprintf(out, "%d restart%s\n", d->restart_count, d->restart_count == 1 ? "" : "s");
    } else {
        fprintf(out, "restart count not given\n");
    }
    if (d->has_termination) {
        time_str(d->finished_at, ts, sizeof(ts));
        fprintf(out, "Last exit:  code %d", d->exit_code);
        if (d->signal_name != NULL) {
            fprintf(out, " (%s)", d->signal_name);
        }
        fputs(", reason ", out);
        put(out, d->reason, "-");
        fprintf(out, ", finished %s\n", ts);
    } else {
        fprintf(out, "Last exit:  not in the given files%s", d->reason ? ", reason " : "");
        put(out, d->reason, "");
        fputc('\n', out);
    }
    fprintf(out, "Cause:      %s (confidence: %s)\n", krc_cause_name(d->cause),
            krc_confidence_name(d->confidence));
    fputs("Summary:    ", out);
    put(out, d->summary, "");
    fputc('\n', out);
    print_list(out, "Evidence:", d->evidence, d->n_evidence, "  - ");
    print_list(out, "Not checked:", d->unchecked, d->n_unchecked, "  - ");
    if (d->next_step != NULL) {
        fputs("Next step:  ", out);
        put(out, d->next_step, "");
        fputc('\n', out);
    }
    print_list(out, "Commands:", d->commands, d->n_commands, "  $ ");
}

/* The Slack alert exactly as the daemon would post it (cluster name from
 * $CLUSTER_NAME, ages relative to now, redacted with rd). */
static int print_slack(const struct krc_report *r, const struct krc_diagnosis *d,
                       const struct krc_redactor *rd)
{
    struct krc_alert_options o;
    struct krc_error err;
    const char *cluster = getenv("CLUSTER_NAME");
    char *json = NULL;
    char *fallback = NULL;
    int rc;

    krc_error_clear(&err);
    krc_alert_options_init(&o);
    o.cluster = cluster != NULL && cluster[0] != '\0' ? cluster : NULL;
    o.now = (int64_t)time(NULL);
    o.redactor = rd;
    rc = krc_dest_kind_find("slack-webhook")->ops->format_restart(r, d, &o, &json, &fallback, &err);
    krc_free(fallback);
    if (rc < 0) {
        complain("%s", err.msg);
        return 1;
    }
    printf("%s\n", json);
    krc_free(json);
    return 0;
}

/* The files and options `krc explain` was given. */
struct explain_args {
    const char *pod;
    const char *events;
    const char *node;
    const char *logs;
    const char *container;
    enum format fmt;
};

/* Parses argv into *a. Returns -1 to go on, or the exit status to return now
 * (0 after --help, 2 on a usage error, said on stderr). */
static int parse_args(int argc, char **argv, struct explain_args *a)
{
    int stdin_uses = 0;
    int i;

    memset(a, 0, sizeof(*a));
    a->fmt = FMT_TEXT;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = NULL;
        const char **dst = NULL;
        const char *eq;
        size_t nl;
        static const char *const opts[] = {"--pod",  "--events",    "--node",
                                           "--logs", "--container", "--format"};
        size_t k;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        eq = strchr(arg, '=');
        nl = eq ? (size_t)(eq - arg) : strlen(arg);
        for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
            if (strlen(opts[k]) == nl && strncmp(arg, opts[k], nl) == 0) {
                break;
            }
        }
        if (k == sizeof(opts) / sizeof(opts[0])) {
            fprintf(stderr, "krc explain: unknown argument '%s'\n", arg);
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
            dst = &a->pod;
            break;
        case 1:
            dst = &a->events;
            break;
        case 2:
            dst = &a->node;
            break;
        case 3:
            dst = &a->logs;
            break;
        case 4:
            dst = &a->container;
            break;
        default:
            if (strcmp(val, "text") == 0) {
                a->fmt = FMT_TEXT;
            } else if (strcmp(val, "json") == 0) {
                a->fmt = FMT_JSON;
            } else if (strcmp(val, "slack") == 0) {
                a->fmt = FMT_SLACK;
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
    if (a->pod == NULL) {
        fprintf(stderr, "krc explain: --pod FILE is required\n");
        usage(stderr);
        return 2;
    }
    if (stdin_uses > 1) {
        fprintf(stderr, "krc explain: only one input can be read from stdin (\"-\")\n");
        return 2;
    }
    return -1;
}

/* Fills *r from the files in *a. Returns 0, or -1 after saying why on stderr. */
static int load_report(const struct explain_args *a, struct krc_report *r)
{
    struct krc_error err;

    krc_error_clear(&err);
    if (load_doc("--pod", a->pod, krc_kube_parse_pod, "Pod", "kubectl get pod POD -o json|yaml",
                 a->events != NULL, r) < 0) {
        return -1;
    }
    if (a->events != NULL && load_doc("--events", a->events, krc_kube_parse_events, NULL,
                                      "kubectl get events -o json|yaml", 0, r) < 0) {
        return -1;
    }
    if (a->node != NULL && load_doc("--node", a->node, krc_kube_parse_node, "Node",
                                    "kubectl get node NODE -o json|yaml", 0, r) < 0) {
        return -1;
    }
    krc_report_retain_pod_events(r);
    if (r->n_containers == 0) {
        /* A pasted Pod without containers or statuses: the log and the
         * events still belong to one, named by --container or unnamed. */
        struct krc_report_container *c = krc_report_add_container(r);
        if (c == NULL ||
            (c->name = krc_strdup(a->container ? a->container : "(unnamed)")) == NULL) {
            fprintf(stderr, "krc explain: out of memory\n");
            return -1;
        }
    }
    if (a->logs != NULL) {
        unsigned char *data = NULL;
        size_t len = 0;
        struct krc_logtail_cut cut;
        if (read_log(a->logs, KRC_REPORT_LOG_MAX, &data, &len, &cut, &err) < 0) {
            complain("--logs %s: %s", a->logs, err.msg);
            return -1;
        }
        if (krc_report_take_log(r, a->container, data, len, &err) < 0) {
            complain("--logs %s: %s", a->logs, err.msg);
            return -1;
        }
        krc_report_set_log_cut(r, &cut);
    }
    return 0;
}

/* The report as the files gave it, redacted and diagnosed (analyse.h):
 * 0, or -1 after saying why on stderr. */
static int analyse(const struct explain_args *a, struct krc_report *r, struct krc_diagnosis *d,
                   const struct krc_redactor *rd)
{
    struct krc_analyse_request q;
    struct krc_analysis res;
    struct krc_error err;

    memset(&q, 0, sizeof(q));
    q.container = a->container;
    q.redactor = rd;
    res.report = r;
    res.diagnosis = d;
    krc_error_clear(&err);
    if (krc_analyse(&q, &res, &err) == 0) {
        krc_analysis_cleanup(&res);
        return 0;
    }
    if (res.failed == KRC_ANALYSE_DIAGNOSE) {
        complain("%s%s", err.code == KRC_ENOTFOUND ? "--container: " : "", err.msg);
    } else {
        fprintf(stderr, "krc explain: %s\n", err.msg);
    }
    krc_analysis_cleanup(&res);
    return -1;
}

int krc_explain_main(int argc, char **argv)
{
    struct explain_args a;
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_redactor *rd = NULL;
    struct krc_error err;
    int status = parse_args(argc, argv, &a);

    if (status >= 0) {
        return status;
    }
    status = 1;
    krc_report_init(&r);
    krc_diagnosis_init(&d);
    krc_error_clear(&err);
    if (load_report(&a, &r) < 0) {
        goto out;
    }
    /* what it prints is often pasted into a ticket: redacted like the
     * daemon's reports (built-in patterns and KRC_REDACT_PATTERNS), before
     * the diagnosis quotes it */
    if (krc_env_redactor(&rd, &err) < 0) {
        fprintf(stderr, "krc explain: %s\n", err.msg);
        goto out;
    }
    if (analyse(&a, &r, &d, rd) < 0) {
        goto out;
    }
    if (d.container == NULL) {
        /* A Pod without any container status to read: nothing to render. */
        complain("nothing to explain: %s (in %s)", d.summary, a.pod);
        goto out;
    }
    switch (a.fmt) {
    case FMT_JSON:
        if (krc_explain_write_json(stdout, &r, &d) < 0) {
            fprintf(stderr, "krc explain: out of memory\n");
            status = 1;
        } else {
            status = 0;
        }
        break;
    case FMT_SLACK:
        status = print_slack(&r, &d, rd);
        break;
    default:
        krc_explain_write_text(stdout, &r, &d);
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
    krc_redact_free(rd);
    return status;
}
