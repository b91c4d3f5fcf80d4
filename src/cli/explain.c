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
#include "krc/explain/describe_node.h"
#include "krc/explain/input_kind.h"
#include "krc/util/json_indent.h"

enum format { FMT_TEXT, FMT_JSON, FMT_SLACK };

static void usage(FILE *f)
{
    fprintf(f, "usage: krc explain [FILE...] [--pod FILE] [--events FILE] [--node FILE]\n"
               "                   [--logs FILE] [--container NAME] [--format text|json|slack]\n"
               "  Diagnose the last restart of a pod from saved kubectl output.\n"
               "    FILE...          each file is told apart by its content: a pod (kubectl\n"
               "                     get pod -o json|yaml, or kubectl describe pod), events\n"
               "                     (kubectl get events [-o json|yaml]), a node (kubectl get\n"
               "                     node -o json|yaml, or kubectl describe node) or, anything\n"
               "                     else, the previous log (kubectl logs --previous); \"-\"\n"
               "                     is stdin. Without a pod among them, piped stdin is\n"
               "                     read the same way:\n"
               "                     kubectl describe pod POD | krc explain\n"
               "    --pod FILE       kubectl get pod POD -o json|yaml   (\"-\" reads stdin),\n"
               "                     or kubectl describe pod POD (then --events may be left\n"
               "                     out: its Events table is used)\n"
               "    --events FILE    kubectl get events -n NS [-o json|yaml], or the Events\n"
               "                     table of kubectl describe pod\n"
               "    --node FILE      kubectl get node NODE -o json|yaml (JSON or YAML, told\n"
               "                     apart by the content), or kubectl describe node NODE\n"
               "    --logs FILE      kubectl logs POD -c CONTAINER --previous\n"
               "                     (the options say what a file is, unsniffed)\n"
               "    --container NAME diagnose this container (default: the one that\n"
               "                     terminated last)\n"
               "    --format F       text (default), json (indented with two spaces) or slack\n"
               "  docs/explain.md has every input krc explain reads.\n");
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

/* No NUL byte in the data (text, not binary); empty data has none. */
static int no_nul(const char *data, size_t len)
{
    return len == 0 || memchr(data, '\0', len) == NULL;
}

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

/* `kubectl describe node` text: the node's name, conditions, capacity,
 * allocatable and system info. */
static int load_describe_node(const char *data, size_t len, struct krc_report *r,
                              struct krc_error *err)
{
    char *node = NULL;
    int rc = krc_describe_node(data, len, &node, err);

    if (rc == 0) {
        rc = krc_kube_parse_node(node, strlen(node), r, err);
    }
    krc_free(node);
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

/* Decode kubectl output in JSON or YAML (told apart by content, not by the
 * file name) with fn. `label` names the input in errors ("--pod FILE", or
 * the file alone). `kind` picks the document of that kind from a
 * multi-document YAML file; `what` names the expected command. For a pod
 * (fn is krc_kube_parse_pod), `kubectl describe pod` text is read too;
 * events_given tells whether its Events table is wanted. */
static int decode_doc(const char *label, const char *data, size_t len, parse_fn fn,
                      const char *kind, const char *what, int events_given, struct krc_report *r)
{
    struct krc_error err;
    char *json = NULL;
    int hint = 0;
    int rc;

    krc_error_clear(&err);
    if (only_space(data, len)) {
        fprintf(stderr, "krc explain: %s: the file is empty (expected the output of %s)\n", label,
                what);
        return KRC_EPARSE;
    }
    if (krc_yaml_json_is_json(data, len)) {
        rc = fn(data, len, r, &err);
        if (rc == KRC_EPARSE && fn == krc_kube_parse_pod && no_nul(data, len) &&
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
        int text = no_nul(data, len) &&
                   (fn == krc_kube_parse_pod      ? krc_kube_describe_is_pod(data, len)
                    : fn == krc_kube_parse_events ? krc_kube_describe_is_events(data, len)
                                                  : krc_describe_node_is(data, len));
        rc = krc_yaml_json_convert(data, len, kind, KRC_KUBE_PARSE_MAX, &json, &jlen, &err);
        if (text && !(rc == 0 && kube_object(json))) {
            /* describe's shapes, and not YAML of a Kubernetes object: kubectl
             * describe text (a "Key: value" mapping is valid YAML too) */
            krc_free(json);
            json = NULL;
            krc_error_clear(&err);
            rc = fn == krc_kube_parse_pod      ? load_describe(data, len, events_given, r, &err)
                 : fn == krc_kube_parse_events ? load_event_table(data, len, r, &err)
                                               : load_describe_node(data, len, r, &err);
            hint = rc == KRC_EINVAL;
        } else if (rc == KRC_EPARSE) {
            hint = 1; /* e.g. kubectl's default table output */
        } else if (rc == 0) {
            rc = fn(json, jlen, r, &err);
        }
    }
    krc_free(json);
    if (rc < 0 && hint) {
        /* say what is expected */
        complain("%s: %s (expected the output of %s%s)", label, err.msg, what,
                 fn == krc_kube_parse_pod      ? " or kubectl describe pod"
                 : fn == krc_kube_parse_events ? ", the Events table of kubectl describe pod "
                                                 "or kubectl get events"
                                               : " or kubectl describe node");
    } else if (rc < 0) {
        complain("%s: %s", label, err.msg);
    }
    return rc;
}

/* Read a file named by an option (or stdin for "-") and decode it as
 * decode_doc does. */
static int load_doc(const char *opt, const char *path, parse_fn fn, const char *kind,
                    const char *what, int events_given, struct krc_report *r)
{
    struct krc_error err;
    char label[4200];
    char *data = NULL;
    size_t len = 0;
    int rc;

    snprintf(label, sizeof(label), "%s %s", opt, strcmp(path, "-") ? path : "<stdin>");
    krc_error_clear(&err);
    rc = read_input(path, KRC_KUBE_PARSE_MAX, &data, &len, &err);
    if (rc < 0) {
        complain("%s: %s", label, err.msg);
        return rc;
    }
    rc = decode_doc(label, data, len, fn, kind, what, events_given, r);
    krc_free(data);
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
    char *compact;
    char *text = NULL;
    int ok = o != NULL;
    int rc;

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
    ok = ok && (!d->intentional || cJSON_AddTrueToObject(o, "intentional") != NULL);
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
    compact = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    /* two spaces a level, as jq and kubectl print JSON */
    rc = compact != NULL ? krc_json_indent(compact, strlen(compact), &text) : KRC_ENOMEM;
    cJSON_free(compact);
    if (rc < 0) {
        return KRC_ENOMEM;
    }
    fprintf(out, "%s\n", text);
    krc_free(text);
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
    fprintf(out, "Cause:      %s (confidence: %s%s)\n", krc_cause_name(d->cause),
            krc_confidence_name(d->confidence), d->intentional ? "; intentional" : "");
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
    const char **files; /* the positional files, told apart by content */
    size_t n_files;
    int stdin_used; /* "-" among the options or the files */
    enum format fmt;
};

/* Parses argv into *a (a->files: caller frees with krc_free). Returns -1 to
 * go on, or the exit status to return now (0 after --help, 2 on a usage
 * error, said on stderr). */
static int parse_args(int argc, char **argv, struct explain_args *a)
{
    int stdin_uses = 0;
    int only_files = 0;
    int i;

    memset(a, 0, sizeof(*a));
    a->fmt = FMT_TEXT;
    a->files = krc_calloc((size_t)argc + 1, sizeof(*a->files));
    if (a->files == NULL) {
        fprintf(stderr, "krc explain: out of memory\n");
        return 1;
    }
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = NULL;
        const char **dst = NULL;
        const char *eq;
        size_t nl;
        static const char *const opts[] = {"--pod",  "--events",    "--node",
                                           "--logs", "--container", "--format"};
        size_t k;

        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            /* a file, told apart by its content */
            if (arg[0] == '\0') {
                fprintf(stderr, "krc explain: an empty file name\n");
                return 2;
            }
            stdin_uses += strcmp(arg, "-") == 0;
            a->files[a->n_files++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_files = 1;
            continue;
        }
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
    if (stdin_uses > 1) {
        fprintf(stderr, "krc explain: only one input can be read from stdin (\"-\")\n");
        return 2;
    }
    a->stdin_used = stdin_uses > 0;
    return -1;
}

/* One input: a file named by an option (read as the option says), or a
 * positional file or piped stdin (read to tell what it is). */
struct input {
    const char *path;         /* "-" is stdin */
    const char *opt;          /* "--pod", ...; NULL when told apart by content */
    enum krc_input_kind kind; /* when opt is NULL */
    char label[4200];         /* "--pod FILE" or "FILE" ("<stdin>" for "-") */
    char *data;               /* the content read to tell what it is */
    size_t len;
    unsigned char *log; /* a log too large to tell apart: its end */
    size_t log_len;
    struct krc_logtail_cut cut;
    int tailed; /* log, log_len and cut are set */
};

/* What each kind of input is when none is right: said after the file's name. */
#define EXPECTED                                                                                   \
    "expected a pod (kubectl get pod -o json|yaml, or kubectl describe pod), events (kubectl "     \
    "get events [-o json|yaml]), a node (kubectl get node -o json|yaml, or kubectl describe "      \
    "node) or a container log (kubectl logs --previous)"

static void input_cleanup(struct input *in)
{
    krc_free(in->data);
    krc_free(in->log);
    memset(in, 0, sizeof(*in));
}

/* Feed bytes into a log tail; 0 or KRC_ENOMEM. */
static int tail_feed(struct krc_logtail *t, const char *data, size_t len, struct krc_error *err)
{
    return krc_logtail_feed(t, data, len) < 0 ? krc_error_set(err, KRC_ENOMEM, "out of memory") : 0;
}

/* Read a positional file (or stdin) to tell what it holds. A regular file
 * larger than any kubectl object krc reads is a log: only its end is read.
 * A stream that grows past that size turns into a log tail as it is read. */
static int sniff_read(struct input *in, struct krc_error *err)
{
    struct krc_logtail tail;
    struct krc_buf b;
    char chunk[65536];
    struct stat st;
    int tailing = 0;
    int fd;
    int rc = open_input(in->path, &fd, &st, err);

    if (rc < 0) {
        return rc;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)KRC_KUBE_PARSE_MAX) {
        if (fd != STDIN_FILENO) {
            close(fd);
        }
        in->kind = KRC_INPUT_LOG;
        in->tailed = 1;
        return read_log(in->path, KRC_REPORT_LOG_MAX, &in->log, &in->log_len, &in->cut, err);
    }
    krc_buf_init(&b, KRC_KUBE_PARSE_MAX);
    krc_logtail_init(&tail, KRC_REPORT_LOG_MAX, 0);
    for (;;) {
        ssize_t n = read_chunk(fd, chunk, sizeof(chunk), err);
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        if (tailing) {
            rc = tail_feed(&tail, chunk, (size_t)n, err);
        } else if ((rc = krc_buf_append(&b, chunk, (size_t)n)) == KRC_ETOOBIG) {
            /* larger than any kubectl object krc reads: a log */
            tailing = 1;
            rc = tail_feed(&tail, b.data, b.len, err);
            rc = rc == 0 ? tail_feed(&tail, chunk, (size_t)n, err) : rc;
            krc_buf_cleanup(&b);
        } else if (rc < 0) {
            rc = krc_error_set(err, rc, "out of memory");
        }
        if (rc < 0) {
            break;
        }
    }
    if (rc == 0 && tailing) {
        in->kind = KRC_INPUT_LOG;
        in->tailed = 1;
        krc_logtail_finish(&tail, &in->log, &in->log_len, &in->cut);
    } else if (rc == 0) {
        in->len = b.len;
        in->data = krc_buf_take(&b);
        if (in->data == NULL) {
            rc = krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
    }
    krc_logtail_cleanup(&tail);
    krc_buf_cleanup(&b);
    if (fd != STDIN_FILENO) {
        close(fd);
    }
    return rc;
}

/* Read and classify a positional file or stdin. 0, 1 when stdin (read
 * because it was piped, not named) was empty, or -1 after saying why on
 * stderr. */
static int sniff(struct input *in, const char *path, int piped)
{
    struct krc_error err;

    memset(in, 0, sizeof(*in));
    in->path = path;
    snprintf(in->label, sizeof(in->label), "%s", strcmp(path, "-") ? path : "<stdin>");
    krc_error_clear(&err);
    if (sniff_read(in, &err) < 0) {
        complain("%s: %s", in->label, err.msg);
        return -1;
    }
    if (in->tailed) {
        return 0;
    }
    if (piped && only_space(in->data, in->len)) {
        return 1;
    }
    if (krc_input_classify(in->data, in->len, KRC_KUBE_PARSE_MAX, &in->kind, &err) < 0) {
        if (err.code == KRC_ENOMEM) {
            complain("%s: out of memory", in->label);
        } else {
            complain("%s: cannot tell what it is: %s; " EXPECTED, in->label, err.msg);
        }
        return -1;
    }
    return 0;
}

enum role { ROLE_POD, ROLE_EVENTS, ROLE_NODE, ROLE_LOGS, N_ROLES };

static enum role role_of(enum krc_input_kind kind)
{
    switch (kind) {
    case KRC_INPUT_POD:
    case KRC_INPUT_DESCRIBE_POD:
        return ROLE_POD;
    case KRC_INPUT_EVENTS:
    case KRC_INPUT_EVENT_TABLE:
        return ROLE_EVENTS;
    case KRC_INPUT_NODE:
    case KRC_INPUT_DESCRIBE_NODE:
        return ROLE_NODE;
    default:
        return ROLE_LOGS;
    }
}

/* Give the input its role; two inputs for one role are an error naming both. */
static int assign(struct input **roles, enum role role, struct input *in)
{
    static const char *const what[N_ROLES] = {"pod inputs", "event inputs", "node inputs",
                                              "logs (one container's previous log is read)"};

    if (roles[role] != NULL) {
        const struct input *was = roles[role];
        complain("two %s: %s%s%s%s and %s%s%s%s; give one", what[role], was->label,
                 was->opt == NULL ? " (" : "",
                 was->opt == NULL ? krc_input_kind_name(was->kind) : "",
                 was->opt == NULL ? ")" : "", in->label, in->opt == NULL ? " (" : "",
                 in->opt == NULL ? krc_input_kind_name(in->kind) : "", in->opt == NULL ? ")" : "");
        return -1;
    }
    roles[role] = in;
    return 0;
}

/* The inputs of the options, of the positional files, and of piped stdin
 * when no pod was given otherwise; ins holds a->n_files + 5 entries. */
static int gather(const struct explain_args *a, struct input *ins, struct input **roles)
{
    const char *const by_opt[N_ROLES] = {a->pod, a->events, a->node, a->logs};
    static const char *const opts[N_ROLES] = {"--pod", "--events", "--node", "--logs"};
    size_t n = 0;

    for (int k = 0; k < N_ROLES; k++) {
        if (by_opt[k] != NULL) {
            struct input *in = &ins[n++];
            in->path = by_opt[k];
            in->opt = opts[k];
            snprintf(in->label, sizeof(in->label), "%s %s", opts[k],
                     strcmp(by_opt[k], "-") ? by_opt[k] : "<stdin>");
            roles[k] = in;
        }
    }
    for (size_t i = 0; i < a->n_files; i++) {
        struct input *in = &ins[n++];
        if (sniff(in, a->files[i], 0) < 0 || assign(roles, role_of(in->kind), in) < 0) {
            return -1;
        }
    }
    if (roles[ROLE_POD] == NULL && !a->stdin_used && !isatty(STDIN_FILENO)) {
        /* kubectl describe pod POD | krc explain */
        struct input *in = &ins[n++];
        int rc = sniff(in, "-", 1);
        if (rc < 0 || (rc == 0 && assign(roles, role_of(in->kind), in) < 0)) {
            return -1;
        }
    }
    if (roles[ROLE_POD] == NULL && roles[ROLE_EVENTS] != NULL && roles[ROLE_EVENTS]->opt == NULL &&
        roles[ROLE_EVENTS]->kind == KRC_INPUT_EVENT_TABLE &&
        krc_kube_describe_is_pod(roles[ROLE_EVENTS]->data, roles[ROLE_EVENTS]->len)) {
        /* describe's Events table pasted alone, and no pod: read as --pod
         * reads it (the restart explained from its events) */
        roles[ROLE_POD] = roles[ROLE_EVENTS];
        roles[ROLE_EVENTS] = NULL;
    }
    if (roles[ROLE_POD] == NULL) {
        fprintf(stderr,
                "krc explain: no pod given: name a file holding kubectl get pod POD -o yaml or "
                "kubectl describe pod POD output, pipe it in, or use --pod FILE%s\n",
                a->n_files > 0 ? " (none of the files is a pod)" : "");
        usage(stderr);
        return -2;
    }
    return 0;
}

/* A positional input's log (already tailed, or its content) into the report. */
static int take_log(const struct explain_args *a, struct input *in, struct krc_report *r)
{
    struct krc_error err;
    unsigned char *data = NULL;
    size_t len = 0;
    struct krc_logtail_cut cut;
    int rc = 0;

    krc_error_clear(&err);
    memset(&cut, 0, sizeof(cut));
    if (in->opt != NULL) {
        rc = read_log(in->path, KRC_REPORT_LOG_MAX, &data, &len, &cut, &err);
    } else if (in->tailed) {
        data = in->log;
        len = in->log_len;
        cut = in->cut;
        in->log = NULL;
    } else {
        struct krc_logtail tail;
        krc_logtail_init(&tail, KRC_REPORT_LOG_MAX, 0);
        rc = tail_feed(&tail, in->data, in->len, &err);
        if (rc == 0) {
            krc_logtail_finish(&tail, &data, &len, &cut);
        }
        krc_logtail_cleanup(&tail);
    }
    if (rc == 0) {
        rc = krc_report_take_log(r, a->container, data, len, &err);
    }
    if (rc < 0) {
        complain("%s: %s", in->label, err.msg);
        return -1;
    }
    krc_report_set_log_cut(r, &cut);
    return 0;
}

/* Decode one kubectl input as its option says, or as its content was told. */
static int load_input(struct input *in, parse_fn fn, const char *kind, const char *what,
                      int events_given, struct krc_report *r)
{
    if (in->opt != NULL) {
        return load_doc(in->opt, in->path, fn, kind, what, events_given, r);
    }
    return decode_doc(in->label, in->data, in->len, fn, kind, what, events_given, r);
}

/* Fills *r from the inputs. Returns 0, or -1 after saying why on stderr. */
static int load_report(const struct explain_args *a, struct input **roles, struct krc_report *r)
{
    if (load_input(roles[ROLE_POD], krc_kube_parse_pod, "Pod", "kubectl get pod POD -o json|yaml",
                   roles[ROLE_EVENTS] != NULL, r) < 0) {
        return -1;
    }
    if (roles[ROLE_EVENTS] != NULL && load_input(roles[ROLE_EVENTS], krc_kube_parse_events, NULL,
                                                 "kubectl get events -o json|yaml", 0, r) < 0) {
        return -1;
    }
    if (roles[ROLE_NODE] != NULL && load_input(roles[ROLE_NODE], krc_kube_parse_node, "Node",
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
    if (roles[ROLE_LOGS] != NULL && take_log(a, roles[ROLE_LOGS], r) < 0) {
        return -1;
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
    struct input *ins = NULL;
    struct input *roles[N_ROLES] = {NULL};
    int status = parse_args(argc, argv, &a);

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    krc_error_clear(&err);
    if (status >= 0) {
        goto out;
    }
    status = 1;
    ins = krc_calloc(a.n_files + N_ROLES + 1, sizeof(*ins));
    if (ins == NULL) {
        fprintf(stderr, "krc explain: out of memory\n");
        goto out;
    }
    if ((status = gather(&a, ins, roles)) < 0) {
        status = status == -2 ? 2 : 1;
        goto out;
    }
    status = 1;
    if (load_report(&a, roles, &r) < 0) {
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
        complain("nothing to explain: %s (in %s)", d.summary, roles[ROLE_POD]->label);
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
    for (size_t i = 0; ins != NULL && i < a.n_files + N_ROLES + 1; i++) {
        input_cleanup(&ins[i]);
    }
    krc_free(ins);
    krc_free(a.files);
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    krc_redact_free(rd);
    return status;
}
