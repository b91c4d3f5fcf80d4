/* What several unit tests share (krc_test.h). */
#include "krc_test.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "krc/kube/kube_parse.h"
#include "krc/serve/metrics.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/http.h"

long krc_test_alloc_sweep(long (*run)(void *ud, long n), void *ud)
{
    for (long n = 0;; n++) {
        if (run(ud, n) <= n) {
            return n + 1;
        }
    }
}

struct krc_policy krc_test_policy(const char *webhook_url)
{
    struct krc_policy p;
    memset(&p, 0, sizeof(p));
    p.webhook_url = webhook_url;
    p.mute_seconds = KRC_TEST_MUTE_S;
    p.storm_window_s = KRC_TEST_STORM_WINDOW_S;
    p.storm_delay_s = KRC_TEST_STORM_DELAY_S;
    return p;
}

struct krc_sender_options krc_test_sender_options(const char *webhook_url)
{
    struct krc_sender_options o;
    memset(&o, 0, sizeof(o));
    o.webhook_url = webhook_url;
    o.mute_seconds = KRC_TEST_MUTE_S;
    o.incident_reply_interval_s = 600;   /* the defaults of incidentReplyInterval */
    o.incident_update_interval_s = 1800; /* and incidentUpdateInterval */
    o.storm_window_s = KRC_TEST_STORM_WINDOW_S;
    o.storm_delay_s = KRC_TEST_STORM_DELAY_S;
    return o;
}

void krc_test_remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-delivered"};
    char p[4096];

    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

char *krc_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;

    if (f == NULL) {
        return NULL;
    }
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    data[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return data;
}

void krc_test_tmpdir(char *dir, size_t size, const char *name)
{
    assert_true((size_t)snprintf(dir, size, "/tmp/krc-test-%s-XXXXXX", name) < size);
    assert_non_null(mkdtemp(dir));
}

void krc_test_rmtree(const char *dir)
{
    char cmd[600];

    assert_true((size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) < sizeof(cmd));
    assert_int_equal(system(cmd), 0);
}

int krc_test_stdout_of(const char *dir, int (*main_fn)(int, char **), int argc, char **argv,
                       char **out)
{
    char path[600];
    int saved;
    int fd;
    int rc;
    size_t len;

    snprintf(path, sizeof(path), "%s/stdout", dir);
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    assert_true(dup2(fd, STDOUT_FILENO) >= 0);
    close(fd);
    rc = main_fn(argc, argv);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    *out = krc_test_read_file(path, &len);
    assert_non_null(*out);
    return rc;
}

const char *krc_test_file_text(FILE *f)
{
    static char text[32768];
    size_t n;

    rewind(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    return text;
}

int krc_test_http_init(void **state)
{
    (void)state;
    return krc_http_global_init(NULL) == 0 ? 0 : -1;
}

int krc_test_http_cleanup(void **state)
{
    (void)state;
    krc_http_global_cleanup();
    return 0;
}

typedef int (*parse_fn)(const char *, size_t, struct krc_report *, struct krc_error *);

/* 1 if dir/file was there and parsed, 0 if it is missing. */
static int load_json(const char *dir, const char *file, parse_fn fn, struct krc_report *r)
{
    char path[1024];
    struct krc_error err;
    size_t len;
    char *data;
    int rc;

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    data = krc_test_read_file(path, &len);
    if (data == NULL) {
        return 0;
    }
    rc = fn(data, len, r, &err);
    if (rc < 0) {
        print_error("%s: %s\n", path, err.msg);
    }
    assert_int_equal(rc, 0);
    free(data);
    return 1;
}

void krc_test_load_case(const char *dir, struct krc_report *r, struct krc_diagnosis *d)
{
    char path[1024];
    size_t len;
    char *log;

    krc_report_init(r);
    krc_diagnosis_init(d);
    assert_true(load_json(dir, "pod.json", krc_kube_parse_pod, r));
    load_json(dir, "events.json", krc_kube_parse_events, r);
    load_json(dir, "node.json", krc_kube_parse_node, r);
    krc_report_retain_pod_events(r);
    snprintf(path, sizeof(path), "%s/logs.txt", dir);
    log = krc_test_read_file(path, &len);
    if (log != NULL) {
        assert_int_equal(krc_report_set_log(r, NULL, log, len, 0, NULL), 0);
        free(log);
    }
    assert_int_equal(krc_diagnose(r, NULL, d, NULL), 0);
}

void krc_test_unload_case(struct krc_report *r, struct krc_diagnosis *d)
{
    krc_diagnosis_cleanup(d);
    krc_report_cleanup(r);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t krc_test_case_names(const char *corpus, char ***ret)
{
    DIR *dir = opendir(corpus);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;

    assert_non_null(dir);
    while ((de = readdir(dir)) != NULL) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s/pod.json", corpus, de->d_name);
        if (de->d_name[0] == '.' || stat(path, &st) != 0) {
            continue;
        }
        names = realloc(names, (n + 1) * sizeof(*names));
        assert_non_null(names);
        names[n] = strdup(de->d_name);
        assert_non_null(names[n]);
        n++;
    }
    closedir(dir);
    qsort(names, n, sizeof(*names), cmp_str);
    *ret = names;
    return n;
}

int krc_test_has_note(const struct krc_report *r, const char *text)
{
    for (size_t i = 0; i < r->n_notes; i++) {
        if (strstr(r->notes[i], text) != NULL) {
            return 1;
        }
    }
    return 0;
}

double krc_test_metric(struct krc_metrics *m, const char *series)
{
    struct krc_buf buf;
    struct krc_error err;
    char want[256];
    const char *p;
    double v = -1;

    krc_buf_init(&buf, 1 << 20);
    assert_int_equal(krc_metrics_render(m, &buf, &err), 0);
    snprintf(want, sizeof(want), "\n%s ", series);
    p = strstr(krc_buf_str(&buf), want);
    if (p != NULL) {
        v = strtod(p + strlen(want), NULL);
    }
    krc_buf_cleanup(&buf);
    return v;
}
