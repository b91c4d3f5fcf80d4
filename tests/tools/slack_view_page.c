/* slack_view_page: the demo's message views on real formatter output, for
 * the integration test and scripts/readme-picture until `krc demo` writes
 * its own page.
 *
 *   slack_view_page --out PAGE.html [--title T] [--corpus DIR] [--colour-bar]
 *                   [--term | --term-colour] [--dump DIR] [BODY.json ...]
 *
 * --corpus DIR: every case folder of DIR (tests/fixtures/corpus layout) is
 * parsed, diagnosed and formatted by the Slack webhook sink's own format
 * function (cluster "prod-eu", the time 2m30s after the restart), followed by
 * a storm summary and an incident's "resolved" reply; each BODY.json file is
 * added as a raw POST body, unchanged. The page is written with krc_demo_html_write;
 * --term prints every message's terminal view (plain; --term-colour: ANSI)
 * to stdout, separated by a line "----"; --dump writes every body to
 * DIR/NNN.json (001 first) for the test to compare the page with. Exit 0, or
 * 1 with the reason. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "krc/alert/sink.h"
#include "krc/alert/dest.h"
#include "krc/alert/dest/slack.h"
#include "krc/demo/slack_view.h"
#include "krc/diagnose/diagnose.h"
#include "krc/kube/kube_parse.h"
#include "krc/model/report.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

#define MAX_MSGS 256

struct page {
    struct krc_demo_msg msgs[MAX_MSGS];
    char *owned[MAX_MSGS];
    size_t n;
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    long n;

    if (f == NULL) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)n + 1);
        if (data != NULL && fread(data, 1, (size_t)n, f) == (size_t)n) {
            data[n] = '\0';
            *len = (size_t)n;
        } else {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    return data;
}

static int add(struct page *p, char *body, double at)
{
    if (p->n >= MAX_MSGS) {
        fprintf(stderr, "slack_view_page: more than %d messages\n", MAX_MSGS);
        free(body);
        return -1;
    }
    p->owned[p->n] = body;
    p->msgs[p->n].body = body;
    p->msgs[p->n].received_at = at;
    p->msgs[p->n].note = NULL;
    p->n++;
    return 0;
}

/* krc-allocated -> malloc'd, so the page owns one kind. */
static char *own(char *s)
{
    char *c = s != NULL ? strdup(s) : NULL;

    krc_free(s);
    return c;
}

typedef int (*parse_fn)(const char *, size_t, struct krc_report *, struct krc_error *);

static int load_json(const char *dir, const char *file, parse_fn fn, struct krc_report *r,
                     int required)
{
    char path[4096];
    struct krc_error err;
    size_t len = 0;
    char *data;
    int rc;

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    data = slurp(path, &len);
    if (data == NULL) {
        if (required) {
            fprintf(stderr, "slack_view_page: %s: cannot read\n", path);
        }
        return required ? -1 : 0;
    }
    rc = fn(data, len, r, &err);
    free(data);
    if (rc < 0) {
        fprintf(stderr, "slack_view_page: %s: %s\n", path, err.msg);
    }
    return rc;
}

static int corpus_case(struct page *p, const char *dir, const struct krc_redactor *rd,
                       int colour_bar)
{
    struct krc_report r;
    struct krc_diagnosis d;
    struct krc_alert_options o;
    struct krc_error err;
    char path[4096];
    char *body = NULL;
    char *fallback = NULL;
    char *log;
    size_t len = 0;
    int rc;

    krc_report_init(&r);
    krc_diagnosis_init(&d);
    rc = load_json(dir, "pod.json", krc_kube_parse_pod, &r, 1);
    if (rc == 0) {
        rc = load_json(dir, "events.json", krc_kube_parse_events, &r, 0);
    }
    if (rc == 0) {
        rc = load_json(dir, "node.json", krc_kube_parse_node, &r, 0);
    }
    krc_report_retain_pod_events(&r);
    snprintf(path, sizeof(path), "%s/logs.txt", dir);
    log = rc == 0 ? slurp(path, &len) : NULL;
    if (log != NULL) {
        rc = krc_report_set_log(&r, NULL, log, len, 0, NULL);
        free(log);
    }
    if (rc == 0) {
        rc = krc_diagnose(&r, NULL, &d, &err);
    }
    if (rc == 0) {
        krc_alert_options_init(&o);
        o.cluster = "prod-eu";
        o.now = d.finished_at + 150;
        o.redactor = rd;
        o.color_bar = colour_bar;
        rc = krc_dest_kind_find("slack-webhook")
                 ->ops->format_restart(&r, &d, &o, &body, &fallback, &err);
        if (rc < 0) {
            fprintf(stderr, "slack_view_page: %s: %s\n", dir, err.msg);
        }
    }
    if (rc == 0) {
        rc = add(p, own(body), (double)o.now);
        krc_free(fallback);
    }
    krc_diagnosis_cleanup(&d);
    krc_report_cleanup(&r);
    return rc < 0 ? -1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A storm summary and an incident's "resolved" reply, as the sender would have them formatted. */
static int storm_and_recovery(struct page *p, double at)
{
    struct krc_alert_group causes[] = {{"dependency_unreachable", 9, NULL},
                                       {"oom_killed", 2, NULL}};
    struct krc_alert_group nodes[] = {{"gke-prod-pool-2-7f3a", 11, NULL}};
    struct krc_alert_group workloads[] = {{"Deployment shop/cart", 6, NULL},
                                          {"Deployment shop/web", 5, NULL}};
    struct krc_alert_example ex[] = {
        {"shop", "cart-6d5f9-x2k4p", "app", "dependency_unreachable", "gke-prod-pool-2-7f3a", 3},
        {"shop", "web-7d9c-q8z1m", "app", "oom_killed", "gke-prod-pool-2-7f3a", 1},
    };
    /* an incident's end, as deliver_incident.c fills it */
    struct krc_alert_recovered rec = {.namespace = "payments",
                                      .pod = "checkout-5f7d9c8b6d-w9j4h",
                                      .container = "checkout",
                                      .ready_seconds = 600,
                                      .incident_id = 41,
                                      .workload_kind = "Deployment",
                                      .workload_name = "checkout",
                                      .cause = "liveness_probe_failed",
                                      .restarts = 4,
                                      .first_at = 1764773400, /* 2025-12-03T14:50:00Z */
                                      .last_at = 1764774000,
                                      .last_pod = "checkout-5f7d9c8b6d-w9j4h"};
    struct krc_alert_summary s;
    struct krc_alert_options o;
    char *json = NULL;

    memset(&s, 0, sizeof(s));
    s.restarts = 11;
    s.pods = 9;
    s.window_seconds = 60;
    s.alerted = 2;
    s.by_cause = causes;
    s.n_by_cause = 2;
    s.by_node = nodes;
    s.n_by_node = 1;
    s.by_workload = workloads;
    s.n_by_workload = 2;
    s.examples = ex;
    s.n_examples = 2;
    krc_alert_options_init(&o);
    o.cluster = "prod-eu";
    if (krc_dest_kind_find("slack-webhook")->ops->format_summary(&s, &o, &json, NULL) < 0 ||
        add(p, own(json), at) < 0) {
        return -1;
    }
    json = NULL;
    if (krc_dest_kind_find("slack-webhook")->ops->format_recovered(&rec, &o, &json, NULL) < 0 ||
        add(p, own(json), at) < 0) {
        return -1;
    }
    return 0;
}

static int corpus(struct page *p, const char *root, int colour_bar)
{
    struct krc_redactor *rd = NULL;
    DIR *dir = opendir(root);
    struct dirent *de;
    char *names[MAX_MSGS];
    size_t n = 0;
    size_t i;
    int rc = 0;

    if (dir == NULL) {
        fprintf(stderr, "slack_view_page: %s: cannot open the corpus folder\n", root);
        return -1;
    }
    while ((de = readdir(dir)) != NULL && n < MAX_MSGS) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s/pod.json", root, de->d_name);
        if (de->d_name[0] != '.' && stat(path, &st) == 0) {
            names[n++] = strdup(de->d_name);
        }
    }
    closedir(dir);
    qsort(names, n, sizeof(names[0]), cmp_str);
    if (krc_redact_new(NULL, 0, &rd, NULL) < 0) {
        rc = -1;
    }
    for (i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", root, names[i]);
        if (rc == 0) {
            rc = corpus_case(p, path, rd, colour_bar);
        }
        free(names[i]);
    }
    krc_redact_free(rd);
    if (rc == 0) {
        rc = storm_and_recovery(p, p->n > 0 ? p->msgs[p->n - 1].received_at : 0);
    }
    return rc;
}

static int dump(const struct page *p, const char *dir)
{
    size_t i;

    for (i = 0; i < p->n; i++) {
        char path[4096];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%03zu.json", dir, i + 1);
        f = fopen(path, "wb");
        if (f == NULL || fputs(p->msgs[i].body, f) == EOF || fclose(f) != 0) {
            fprintf(stderr, "slack_view_page: %s: cannot write\n", path);
            return -1;
        }
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: slack_view_page --out PAGE.html [--title T] [--corpus DIR] "
                    "[--colour-bar] [--term | --term-colour] [--dump DIR] [BODY.json ...]\n");
    return 1;
}

int main(int argc, char **argv)
{
    static struct page p;
    const char *out = NULL;
    const char *title = "#alerts";
    const char *corpus_dir = NULL;
    const char *dump_dir = NULL;
    int colour_bar = 0;
    int term = -1;
    struct krc_error err;
    int i;
    int rc = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--title") == 0 && i + 1 < argc) {
            title = argv[++i];
        } else if (strcmp(argv[i], "--corpus") == 0 && i + 1 < argc) {
            corpus_dir = argv[++i];
        } else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
            dump_dir = argv[++i];
        } else if (strcmp(argv[i], "--colour-bar") == 0) {
            colour_bar = 1;
        } else if (strcmp(argv[i], "--term") == 0 || strcmp(argv[i], "--term-colour") == 0) {
            term = strcmp(argv[i], "--term-colour") == 0;
        } else if (argv[i][0] == '-') {
            return usage();
        } else {
            size_t len = 0;
            char *body = slurp(argv[i], &len);
            if (body == NULL) {
                fprintf(stderr, "slack_view_page: %s: cannot read\n", argv[i]);
                return 1;
            }
            if (add(&p, body, 1764774000.0 + (double)p.n * 60) < 0) {
                return 1;
            }
        }
    }
    if (out == NULL) {
        return usage();
    }
    if (corpus_dir != NULL && corpus(&p, corpus_dir, colour_bar) < 0) {
        rc = 1;
    }
    if (rc == 0 && dump_dir != NULL && dump(&p, dump_dir) < 0) {
        rc = 1;
    }
    if (rc == 0 && krc_demo_html_write(out, p.msgs, p.n, title, &err) < 0) {
        fprintf(stderr, "slack_view_page: %s\n", err.msg);
        rc = 1;
    }
    for (i = 0; rc == 0 && term >= 0 && (size_t)i < p.n; i++) {
        char *t = krc_demo_term_render(p.msgs[i].body, term);
        fputs(t != NULL ? t : "(out of memory)\n", stdout);
        fputs("----\n", stdout);
        krc_free(t);
    }
    for (i = 0; (size_t)i < p.n; i++) {
        free(p.owned[i]);
    }
    return rc;
}
