/* Metrics registry: exact exposition text, escaping, histograms, label caps,
 * validation, collectors, allocation failures and concurrent updates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <pthread.h>

#include "krc/diagnose/diagnose.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/serve/metrics.h"

#define V(...) ((const char *[]){__VA_ARGS__})

static struct krc_metrics *new_registry(void)
{
    struct krc_metrics *m = NULL;
    struct krc_error err;

    assert_int_equal(krc_metrics_new(&m, &err), 0);
    return m;
}

static struct krc_metric *add(struct krc_metrics *m, const struct krc_metric_desc *d)
{
    struct krc_metric *mt = NULL;
    struct krc_error err;

    krc_error_clear(&err);
    if (krc_metrics_add(m, d, &mt, &err) != 0) {
        fail_msg("krc_metrics_add(%s): %s", d->name, err.msg);
    }
    return mt;
}

/* Render into a fresh string the caller frees with krc_free. */
static char *render(struct krc_metrics *m)
{
    struct krc_buf b;
    struct krc_error err;

    krc_buf_init(&b, 1 << 20);
    krc_error_clear(&err);
    if (krc_metrics_render(m, &b, &err) != 0) {
        fail_msg("render: %s", err.msg);
    }
    return krc_buf_take(&b);
}

static void test_render_exact(void **state)
{
    static const char *const results[] = {"sent", "failed", NULL};
    static const char *const verbs[] = {"GET", "LIST", NULL};
    static const double buckets[] = {0.5, 1, 2.5};
    const struct krc_metric_label result = {.name = "result", .values = results};
    const struct krc_metric_label ns_verb[] = {{.name = "namespace", .cap = 10},
                                               {.name = "verb", .values = verbs}};
    const struct krc_metric_label verb = {.name = "verb", .values = verbs};
    struct krc_metrics *m = new_registry();
    struct krc_metric *plain;
    struct krc_metric *by_result;
    struct krc_metric *by_ns;
    struct krc_metric *gauge;
    struct krc_metric *hist;
    char *text;
    (void)state;

    plain = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                             .name = "t_plain_total",
                                             .help = "Back\\slash and\nnewline \"quoted\"."});
    by_result = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                                 .name = "t_results_total",
                                                 .help = "By result.",
                                                 .labels = &result,
                                                 .n_labels = 1});
    by_ns = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                             .name = "t_ns_total",
                                             .help = "By namespace and verb.",
                                             .labels = ns_verb,
                                             .n_labels = 2});
    gauge = add(m, &(struct krc_metric_desc){
                       .type = KRC_METRIC_GAUGE, .name = "t_gauge", .help = "A gauge."});
    hist = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_HISTOGRAM,
                                            .name = "t_seconds",
                                            .help = "A histogram.",
                                            .labels = &verb,
                                            .n_labels = 1,
                                            .buckets = buckets,
                                            .n_buckets = 3});

    assert_int_equal(krc_metric_inc(plain, NULL), 0);
    assert_int_equal(krc_metric_add(plain, NULL, 2), 0);
    assert_int_equal(krc_metric_add(by_result, V("failed"), 5), 0);
    assert_int_equal(krc_metric_inc(by_ns, V("b", "LIST")), 0);
    assert_int_equal(krc_metric_inc(by_ns, V("a\"\\\nz", "GET")), 0);
    assert_int_equal(krc_metric_inc(by_ns, V("b", "GET")), 0);
    assert_int_equal(krc_metric_set(gauge, NULL, -1.5), 0);
    assert_int_equal(krc_metric_observe(hist, V("GET"), 0.25), 0);
    assert_int_equal(krc_metric_observe(hist, V("GET"), 1), 0);   /* on a bound: le="1" */
    assert_int_equal(krc_metric_observe(hist, V("GET"), 100), 0); /* only +Inf */

    text = render(m);
    assert_string_equal(text, "# HELP t_plain_total Back\\\\slash and\\nnewline \"quoted\".\n"
                              "# TYPE t_plain_total counter\n"
                              "t_plain_total 3\n"
                              "# HELP t_results_total By result.\n"
                              "# TYPE t_results_total counter\n"
                              "t_results_total{result=\"sent\"} 0\n"
                              "t_results_total{result=\"failed\"} 5\n"
                              "# HELP t_ns_total By namespace and verb.\n"
                              "# TYPE t_ns_total counter\n"
                              "t_ns_total{namespace=\"b\",verb=\"GET\"} 1\n"
                              "t_ns_total{namespace=\"b\",verb=\"LIST\"} 1\n"
                              "t_ns_total{namespace=\"a\\\"\\\\\\nz\",verb=\"GET\"} 1\n"
                              "# HELP t_gauge A gauge.\n"
                              "# TYPE t_gauge gauge\n"
                              "t_gauge -1.5\n"
                              "# HELP t_seconds A histogram.\n"
                              "# TYPE t_seconds histogram\n"
                              "t_seconds_bucket{verb=\"GET\",le=\"0.5\"} 1\n"
                              "t_seconds_bucket{verb=\"GET\",le=\"1\"} 2\n"
                              "t_seconds_bucket{verb=\"GET\",le=\"2.5\"} 2\n"
                              "t_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 3\n"
                              "t_seconds_sum{verb=\"GET\"} 101.25\n"
                              "t_seconds_count{verb=\"GET\"} 3\n"
                              "t_seconds_bucket{verb=\"LIST\",le=\"0.5\"} 0\n"
                              "t_seconds_bucket{verb=\"LIST\",le=\"1\"} 0\n"
                              "t_seconds_bucket{verb=\"LIST\",le=\"2.5\"} 0\n"
                              "t_seconds_bucket{verb=\"LIST\",le=\"+Inf\"} 0\n"
                              "t_seconds_sum{verb=\"LIST\"} 0\n"
                              "t_seconds_count{verb=\"LIST\"} 0\n");
    krc_free(text);
    krc_metrics_free(m);
}

/* Buckets are cumulative, observations on a bound count in that bucket,
 * +Inf equals _count, and _sum adds every observation. */
static void test_histogram_cumulative(void **state)
{
    static const double buckets[] = {KRC_METRICS_LATENCY_BUCKETS};
    static const double obs[] = {0, 0.05, 0.051, 0.1, 0.3,  0.5,   0.7, 1,   2,   2.5, 4.9,
                                 5, 9,    10,    29,  30.5, 59.99, 250, 300, 301, 1e9};
    const size_t nb = sizeof(buckets) / sizeof(buckets[0]);
    struct krc_metrics *m = new_registry();
    struct krc_metric *h;
    char *text;
    char line[128];
    double sum = 0;
    double count = -1;
    (void)state;

    h = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_HISTOGRAM,
                                         .name = "h_seconds",
                                         .help = "h",
                                         .buckets = buckets,
                                         .n_buckets = nb});
    for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) {
        assert_int_equal(krc_metric_observe(h, NULL, obs[i]), 0);
        sum += obs[i];
    }
    text = render(m);
    for (size_t b = 0; b <= nb; b++) {
        char le[40];
        unsigned want = 0;

        for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) {
            want += b == nb || obs[i] <= buckets[b];
        }
        if (b < nb) {
            krc_metrics_format_value(buckets[b], le, sizeof(le));
        } else {
            snprintf(le, sizeof(le), "+Inf");
        }
        snprintf(line, sizeof(line), "\nh_seconds_bucket{le=\"%s\"} %u\n", le, want);
        if (strstr(text, line) == NULL) {
            fail_msg("missing %s in\n%s", line + 1, text);
        }
    }
    snprintf(line, sizeof(line), "\nh_seconds_count %zu\n", sizeof(obs) / sizeof(obs[0]));
    assert_non_null(strstr(text, line));
    krc_metrics_format_value(sum, line, sizeof(line));
    {
        char want[128];
        snprintf(want, sizeof(want), "\nh_seconds_sum %s\n", line);
        assert_non_null(strstr(text, want));
    }
    assert_int_equal(krc_metric_get(h, NULL, &count), 0);
    assert_true(count == (double)(sizeof(obs) / sizeof(obs[0])));
    /* the last line ends the text */
    assert_int_equal(text[strlen(text) - 1], '\n');
    krc_free(text);
    krc_metrics_free(m);
}

static void test_open_label_cap(void **state)
{
    const struct krc_metric_label ns = {.name = "namespace", .cap = 3};
    struct krc_metrics *m = new_registry();
    struct krc_metric *c;
    char longv[KRC_METRICS_LABEL_VALUE_MAX + 2];
    double v = 0;
    char *text;
    (void)state;

    c = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                         .name = "c_total",
                                         .help = "c",
                                         .labels = &ns,
                                         .n_labels = 1});
    /* nothing exported before the first update */
    text = render(m);
    assert_string_equal(text, "# HELP c_total c\n# TYPE c_total counter\n");
    krc_free(text);

    assert_int_equal(krc_metric_inc(c, V("kube-system")), 0);
    assert_int_equal(krc_metric_inc(c, V("default")), 0);
    assert_int_equal(krc_metric_inc(c, V("kube-system")), 0);
    assert_int_equal(krc_metric_inc(c, V("ml")), 0);
    /* cap reached: new values go to "other", known ones keep their series */
    assert_int_equal(krc_metric_inc(c, V("payments")), 0);
    assert_int_equal(krc_metric_inc(c, V("web")), 0);
    assert_int_equal(krc_metric_inc(c, V("ml")), 0);
    /* values that never get a series of their own */
    memset(longv, 'x', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    assert_int_equal(krc_metric_inc(c, V(longv)), 0);
    assert_int_equal(krc_metric_inc(c, V("bad\xff utf8")), 0);
    assert_int_equal(krc_metric_inc(c, V("\xc0\xaf")), 0); /* overlong '/' */
    assert_int_equal(krc_metric_inc(c, V("other")), 0);
    assert_int_equal(krc_metric_inc(c, NULL), KRC_EINVAL);
    assert_int_equal(krc_metric_inc(c, V(NULL)), KRC_EINVAL);

    text = render(m);
    assert_string_equal(text, "# HELP c_total c\n# TYPE c_total counter\n"
                              "c_total{namespace=\"kube-system\"} 2\n"
                              "c_total{namespace=\"default\"} 1\n"
                              "c_total{namespace=\"ml\"} 2\n"
                              "c_total{namespace=\"other\"} 6\n");
    krc_free(text);
    assert_int_equal(krc_metric_get(c, V("ml"), &v), 0);
    assert_true(v == 2);
    assert_int_equal(krc_metric_get(c, V("payments"), &v), 0); /* reads "other" */
    assert_true(v == 6);
    krc_metrics_free(m);

    /* UTF-8 that is valid keeps its own series */
    m = new_registry();
    c = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                         .name = "c_total",
                                         .help = "c",
                                         .labels = &ns,
                                         .n_labels = 1});
    assert_int_equal(krc_metric_inc(c, V("caf\xc3\xa9")), 0);
    assert_int_equal(krc_metric_get(c, V("nope"), &v), KRC_ENOTFOUND);
    text = render(m);
    assert_non_null(strstr(text, "c_total{namespace=\"caf\xc3\xa9\"} 1\n"));
    krc_free(text);
    krc_metrics_free(m);
}

/* Several open labels: the cap bounds their combinations; past it, or with
 * any value that cannot have a series, the one series whose open labels are
 * all "other" counts; fixed labels keep their own values. */
static void test_open_combinations(void **state)
{
    static const char *const kinds[] = {"a", "b", NULL};
    const struct krc_metric_label labels[] = {
        {.name = "namespace", .cap = 3},
        {.name = "kind", .values = kinds},
        {.name = "workload", .cap = 3},
    };
    struct krc_metrics *m = new_registry();
    struct krc_metric *c;
    char longv[KRC_METRICS_LABEL_VALUE_MAX + 2];
    double v = 0;
    char *text;
    (void)state;

    c = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                         .name = "c_total",
                                         .help = "c",
                                         .labels = labels,
                                         .n_labels = 3});
    assert_int_equal(krc_metric_add(c, V("ml", "a", "train"), 8), 0);
    assert_int_equal(krc_metric_add(c, V("ml", "b", "train"), 1), 0);
    /* "x" "yz" and "xy" "z" are different combinations */
    assert_int_equal(krc_metric_add(c, V("x", "a", "yz"), 3), 0);
    assert_int_equal(krc_metric_add(c, V("xy", "a", "z"), 4), 0);
    /* the cap (3 combinations) is reached: the same values swapped are new */
    assert_int_equal(krc_metric_add(c, V("train", "a", "ml"), 2), 0);
    assert_int_equal(krc_metric_add(c, V("ml", "a", "train"), 8), 0);
    memset(longv, 'x', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    assert_int_equal(krc_metric_add(c, V("ml", "b", longv), 5), 0);
    assert_int_equal(krc_metric_add(c, V("ml", "c", "train"), 1), KRC_EINVAL);
    assert_int_equal(krc_metric_add(c, V("ml", "a", NULL), 1), KRC_EINVAL);
    text = render(m);
    assert_string_equal(text, "# HELP c_total c\n# TYPE c_total counter\n"
                              "c_total{namespace=\"ml\",kind=\"a\",workload=\"train\"} 16\n"
                              "c_total{namespace=\"ml\",kind=\"b\",workload=\"train\"} 1\n"
                              "c_total{namespace=\"x\",kind=\"a\",workload=\"yz\"} 3\n"
                              "c_total{namespace=\"xy\",kind=\"a\",workload=\"z\"} 4\n"
                              "c_total{namespace=\"other\",kind=\"a\",workload=\"other\"} 2\n"
                              "c_total{namespace=\"other\",kind=\"b\",workload=\"other\"} 5\n");
    krc_free(text);
    assert_int_equal(krc_metric_get(c, V("xy", "a", "z"), &v), 0);
    assert_true(v == 4);
    assert_int_equal(krc_metric_get(c, V("nope", "a", "nope"), &v), 0); /* reads "other" */
    assert_true(v == 2);
    krc_metrics_free(m);
}

static void expect_add_error(struct krc_metrics *m, const struct krc_metric_desc *d,
                             const char *msg_part)
{
    struct krc_metric *mt = NULL;
    struct krc_error err;

    krc_error_clear(&err);
    assert_int_equal(krc_metrics_add(m, d, &mt, &err), KRC_EINVAL);
    assert_null(mt);
    if (strstr(err.msg, msg_part) == NULL) {
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, msg_part);
    }
}

static void test_validation(void **state)
{
    static const char *const one[] = {"a", NULL};
    static const char *const dup[] = {"a", "a", NULL};
    static const char *const none[] = {NULL};
    static const double good[] = {1, 2};
    static const double bad[] = {1, 1};
    const double inf[] = {1, INFINITY};
    const struct krc_metric_label two_open[] = {{.name = "x", .cap = 2}, {.name = "y", .cap = 3}};
    const struct krc_metric_label same[] = {{.name = "x", .values = one},
                                            {.name = "x", .values = one}};
    const struct krc_metric_label le = {.name = "le", .values = one};
    const struct krc_metric_label dunder = {.name = "__x", .values = one};
    const struct krc_metric_label dupv = {.name = "x", .values = dup};
    const struct krc_metric_label empty = {.name = "x", .values = none};
    const struct krc_metric_label nocap = {.name = "x", .cap = 0};
    const struct krc_metric_label x = {.name = "x", .values = one};
    struct krc_metrics *m = new_registry();
    struct krc_metric *c;
    struct krc_metric *g;
    struct krc_metric *h;
    double v = -1;
    (void)state;

    expect_add_error(m,
                     &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER, .name = "c", .help = ""},
                     "must end in _total");
    expect_add_error(m,
                     &(struct krc_metric_desc){.type = KRC_METRIC_GAUGE, .name = "1x", .help = ""},
                     "invalid metric name");
    expect_add_error(m,
                     &(struct krc_metric_desc){.type = KRC_METRIC_GAUGE, .name = "a-b", .help = ""},
                     "invalid metric name");
    expect_add_error(m, &(struct krc_metric_desc){.type = KRC_METRIC_GAUGE, .name = "g"},
                     "help text");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_GAUGE, .name = "g", .help = "", .labels = two_open, .n_labels = 2},
        "differs from the cap 2 of the first open label");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_GAUGE, .name = "g", .help = "", .labels = same, .n_labels = 2},
        "declared twice");
    expect_add_error(m,
                     &(struct krc_metric_desc){.type = KRC_METRIC_HISTOGRAM,
                                               .name = "h",
                                               .help = "",
                                               .labels = &le,
                                               .n_labels = 1,
                                               .buckets = good,
                                               .n_buckets = 2},
                     "reserved");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_GAUGE, .name = "g", .help = "", .labels = &dunder, .n_labels = 1},
        "invalid label name");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_GAUGE, .name = "g", .help = "", .labels = &dupv, .n_labels = 1},
        "listed twice");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_GAUGE, .name = "g", .help = "", .labels = &empty, .n_labels = 1},
        "empty value list");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_GAUGE, .name = "g", .help = "", .labels = &nocap, .n_labels = 1},
        "cap 0");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_HISTOGRAM, .name = "h", .help = "", .buckets = bad, .n_buckets = 2},
        "strictly increasing");
    expect_add_error(
        m,
        &(struct krc_metric_desc){
            .type = KRC_METRIC_HISTOGRAM, .name = "h", .help = "", .buckets = inf, .n_buckets = 2},
        "finite");
    expect_add_error(
        m, &(struct krc_metric_desc){.type = KRC_METRIC_HISTOGRAM, .name = "h", .help = ""},
        "buckets");

    c = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                         .name = "c_total",
                                         .help = "",
                                         .labels = &x,
                                         .n_labels = 1});
    expect_add_error(
        m, &(struct krc_metric_desc){.type = KRC_METRIC_GAUGE, .name = "c_total", .help = ""},
        "already registered");
    g = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_GAUGE, .name = "g", .help = ""});
    h = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_HISTOGRAM,
                                         .name = "h",
                                         .help = "",
                                         .buckets = good,
                                         .n_buckets = 2});

    /* updates that do not fit change nothing */
    assert_int_equal(krc_metric_inc(c, V("b")), KRC_EINVAL);
    assert_int_equal(krc_metric_add(c, V("a"), -1), KRC_EINVAL);
    assert_int_equal(krc_metric_add(c, V("a"), NAN), KRC_EINVAL);
    assert_int_equal(krc_metric_observe(c, V("a"), 1), KRC_EINVAL);
    assert_int_equal(krc_metric_observe(g, NULL, 1), KRC_EINVAL);
    assert_int_equal(krc_metric_add(h, NULL, 1), KRC_EINVAL);
    assert_int_equal(krc_metric_set(h, NULL, 1), KRC_EINVAL);
    assert_int_equal(krc_metric_observe(h, NULL, NAN), KRC_EINVAL);
    assert_int_equal(krc_metric_set(g, NULL, NAN), KRC_EINVAL);
    assert_int_equal(krc_metric_get(c, V("a"), &v), 0);
    assert_true(v == 0);
    assert_int_equal(krc_metric_get(c, V("b"), &v), KRC_EINVAL);
    /* gauges go both ways and hold infinities */
    assert_int_equal(krc_metric_add(g, NULL, 2), 0);
    assert_int_equal(krc_metric_add(g, NULL, -3), 0);
    assert_int_equal(krc_metric_get(g, NULL, &v), 0);
    assert_true(v == -1);
    assert_int_equal(krc_metric_set(g, NULL, INFINITY), 0);
    {
        char *text = render(m);
        assert_non_null(strstr(text, "\ng +Inf\n"));
        krc_free(text);
    }
    assert_string_equal(krc_metric_name(h), "h");
    krc_metrics_free(m);
}

static void check_format(double v, const char *want)
{
    char out[40];

    krc_metrics_format_value(v, out, sizeof(out));
    assert_string_equal(out, want);
}

static void test_format_value(void **state)
{
    char out[40];
    (void)state;

    check_format(0, "0");
    check_format(12, "12");
    check_format(0.1, "0.1");
    check_format(-2.5, "-2.5");
    check_format(1e21, "1e+21");
    check_format(9007199254740993.0, "9007199254740992");
    check_format(NAN, "NaN");
    check_format(INFINITY, "+Inf");
    check_format(-INFINITY, "-Inf");
    /* 1/3 needs 17 digits to read back the same double */
    krc_metrics_format_value(1.0 / 3.0, out, sizeof(out));
    assert_true(strtod(out, NULL) == 1.0 / 3.0);
    assert_string_equal(out, "0.33333333333333331");
}

struct collect_state {
    struct krc_metric *g;
    int calls;
};

static void collect(struct krc_metrics *m, void *userdata)
{
    struct collect_state *cs = userdata;
    (void)m;

    cs->calls++;
    krc_metric_set(cs->g, NULL, cs->calls * 10);
}

static void test_collectors(void **state)
{
    struct krc_metrics *m = new_registry();
    struct collect_state cs = {0};
    struct krc_error err;
    char *text;
    (void)state;

    cs.g = add(m, &(struct krc_metric_desc){
                      .type = KRC_METRIC_GAUGE, .name = "queue_length", .help = "q"});
    assert_int_equal(krc_metrics_add_collector(m, collect, &cs, &err), 0);
    assert_int_equal(krc_metrics_add_collector(m, NULL, &cs, &err), KRC_EINVAL);
    text = render(m);
    assert_string_equal(text, "# HELP queue_length q\n# TYPE queue_length gauge\n"
                              "queue_length 10\n");
    krc_free(text);
    text = render(m);
    assert_non_null(strstr(text, "queue_length 20\n"));
    krc_free(text);
    assert_int_equal(cs.calls, 2);
    for (int i = 1; i < KRC_METRICS_MAX_COLLECTORS; i++) {
        assert_int_equal(krc_metrics_add_collector(m, collect, &cs, &err), 0);
    }
    assert_int_equal(krc_metrics_add_collector(m, collect, &cs, &err), KRC_ETOOBIG);
    krc_metrics_free(m);
}

static void test_render_too_big(void **state)
{
    struct krc_metrics *m = new_registry();
    struct krc_metrics_std std;
    struct krc_buf b;
    struct krc_error err;
    (void)state;

    assert_int_equal(krc_metrics_register_std(m, "1.2.3", &std, &err), 0);
    krc_buf_init(&b, 100);
    assert_int_equal(krc_metrics_render(m, &b, &err), KRC_ETOOBIG);
    assert_non_null(strstr(err.msg, "over 100 bytes"));
    krc_buf_cleanup(&b);
    krc_metrics_free(m);
}

static void test_std_metrics(void **state)
{
    struct krc_metrics *m = new_registry();
    struct krc_metrics_std std;
    struct krc_error err;
    char ns[32];
    char *text;
    double v = 0;
    (void)state;

    assert_int_equal(krc_metrics_register_std(m, "9.9.9", &std, &err), 0);
    /* every cause name is a valid label value, and nothing else is */
    for (int c = 0; c < KRC_CAUSE_COUNT; c++) {
        assert_int_equal(
            krc_metric_inc(std.restarts_detected, V("default", krc_cause_name((enum krc_cause)c))),
            0);
    }
    assert_int_equal(krc_metric_inc(std.restarts_detected, V("default", "bogus")), KRC_EINVAL);
    /* namespace cap: the 201st distinct namespace is "other" */
    for (int i = 1; i < KRC_METRICS_NAMESPACE_CAP; i++) {
        snprintf(ns, sizeof(ns), "ns-%d", i);
        assert_int_equal(krc_metric_inc(std.restarts_detected, V(ns, "oom_killed")), 0);
    }
    assert_int_equal(krc_metric_inc(std.restarts_detected, V("late", "oom_killed")), 0);
    assert_int_equal(krc_metric_inc(std.restarts_detected, V("later", "oom_killed")), 0);
    assert_int_equal(krc_metric_get(std.restarts_detected, V("other", "oom_killed"), &v), 0);
    assert_true(v == 2);
    assert_int_equal(krc_metric_get(std.restarts_detected, V("ns-199", "oom_killed"), &v), 0);
    assert_true(v == 1);

    for (const char *const *r =
             V("sent", "failed", "muted", "grouped", "silenced", "not_posted", "rate_limited");
         *r != NULL && strcmp(*r, "rate_limited") != 0; r++) {
        assert_int_equal(krc_metric_inc(std.notifications, r), 0);
    }
    assert_int_equal(krc_metric_inc(std.notifications, V("rate_limited")), 0);
    assert_int_equal(krc_metric_inc(std.notifications, V("intentional")), 0);
    assert_int_equal(krc_metric_inc(std.notifications, V("ok")), KRC_EINVAL);
    assert_int_equal(krc_metric_inc(std.restarts_intentional, V("jobs", "restart_rule")), 0);
    assert_int_equal(krc_metric_inc(std.restarts_intentional, V("jobs", "bogus")), KRC_EINVAL);
    assert_int_equal(krc_metric_inc(std.watch_events, V("BOOKMARK")), 0);
    assert_int_equal(krc_metric_inc(std.watch_events, V("added")), KRC_EINVAL);
    assert_int_equal(krc_metric_inc(std.watch_restarts, V("silent")), 0);
    assert_int_equal(krc_metric_inc(std.store_errors, NULL), 0);
    assert_int_equal(krc_metric_set(std.pods_tracked, NULL, 17), 0);
    assert_int_equal(krc_metric_observe(std.restart_to_notification, NULL, 0.3), 0);
    assert_int_equal(krc_metric_set(std.ready, NULL, 1), 0);

    text = render(m);
    assert_non_null(strstr(text, "# TYPE krc_restarts_detected_total counter\n"
                                 "krc_restarts_detected_total{namespace=\"default\",cause="
                                 "\"unknown\"} 1\n"));
    assert_non_null(
        strstr(text, "krc_restarts_detected_total{namespace=\"other\",cause=\"oom_killed\"} 2\n"));
    assert_non_null(strstr(text, "krc_notifications_total{result=\"not_posted\"} 1\n"));
    assert_non_null(strstr(text, "krc_notifications_total{result=\"intentional\"} 1\n"));
    assert_non_null(strstr(text, "# TYPE krc_restarts_intentional_total counter\n"
                                 "krc_restarts_intentional_total{namespace=\"jobs\",cause="
                                 "\"restart_rule\"} 1\n"));
    assert_non_null(strstr(text, "krc_watch_events_total{type=\"BOOKMARK\"} 1\n"));
    assert_non_null(strstr(text, "krc_watch_events_total{type=\"ERROR\"} 0\n"));
    assert_non_null(strstr(text, "krc_watch_restarts_total{reason=\"silent\"} 1\n"));
    assert_non_null(strstr(text, "\nkrc_pods_tracked 17\n"));
    assert_non_null(strstr(text, "\nkrc_store_errors_total 1\n"));
    assert_non_null(strstr(text, "krc_restart_to_notification_seconds_bucket{le=\"0.25\"} 0\n"
                                 "krc_restart_to_notification_seconds_bucket{le=\"0.5\"} 1\n"));
    assert_non_null(strstr(text, "krc_restart_to_notification_seconds_bucket{le=\"300\"} 1\n"
                                 "krc_restart_to_notification_seconds_bucket{le=\"+Inf\"} 1\n"));
    assert_non_null(strstr(text, "\nkrc_build_info{version=\"9.9.9\"} 1\n"));
    assert_non_null(strstr(text, "\nkrc_up 1\n"));
    assert_non_null(strstr(text, "\nkrc_ready 1\n"));
    /* 200 namespaces x at most 2 causes + default's 14 + other: bounded */
    {
        size_t lines = 0;
        for (const char *p = text; (p = strstr(p, "krc_restarts_detected_total{")) != NULL; p++) {
            lines++;
        }
        assert_int_equal(lines, KRC_CAUSE_COUNT + (KRC_METRICS_NAMESPACE_CAP - 1) + 1);
    }
    krc_free(text);
    krc_metrics_free(m);
}

static void test_process_metrics(void **state)
{
    struct krc_metrics *m = new_registry();
    struct krc_error err;
    char *text;
    const char *p;
    (void)state;

    assert_int_equal(krc_metrics_register_process(m, &err), 0);
    assert_int_equal(krc_metrics_register_process(m, &err), KRC_EINVAL);
    text = render(m);
    p = strstr(text, "\nprocess_resident_memory_bytes ");
    assert_non_null(p);
    assert_true(strtod(p + strlen("\nprocess_resident_memory_bytes "), NULL) > 1e5);
    p = strstr(text, "\nprocess_start_time_seconds ");
    assert_non_null(p);
    assert_true(strtod(p + strlen("\nprocess_start_time_seconds "), NULL) > 1.5e9);
    p = strstr(text, "\nprocess_open_fds ");
    assert_non_null(p);
    assert_true(strtod(p + strlen("\nprocess_open_fds "), NULL) >= 3);
    assert_non_null(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
    assert_non_null(strstr(text, "\nprocess_max_fds "));
    krc_free(text);
    krc_metrics_free(m);
}

/* Every allocation failure in registration and rendering is reported as
 * ENOMEM and leaks nothing (ASan checks the leaks). */
static void test_allocation_failures(void **state)
{
    long n;
    (void)state;

    for (n = 0; n < 100000; n++) {
        struct krc_metrics *m = NULL;
        struct krc_metrics_std std;
        struct krc_error err;
        struct krc_buf b;
        int rc;
        long used;

        krc_buf_init(&b, 1 << 20);
        krc_mem_fail_after(n);
        rc = krc_metrics_new(&m, &err);
        if (rc == 0) {
            rc = krc_metrics_register_std(m, NULL, &std, &err);
        }
        if (rc == 0) {
            rc = krc_metrics_register_process(m, &err);
        }
        if (rc == 0) {
            krc_metric_inc(std.restarts_detected, V("ns", "killed"));
            rc = krc_metrics_render(m, &b, &err);
        }
        used = krc_mem_fail_after(-1);
        krc_buf_cleanup(&b);
        krc_metrics_free(m);
        if (rc == 0) {
            break;
        }
        assert_int_equal(rc, KRC_ENOMEM);
        assert_true(used > n);
    }
    assert_true(n > 10 && n < 100000);
}

#define N_THREADS 4
#define N_ITER 50000

struct worker {
    struct krc_metric *fixed;
    struct krc_metric *open;
    struct krc_metric *gauge;
    struct krc_metric *hist;
    struct krc_metrics *m;
    int id;
};

static void *work(void *arg)
{
    const struct worker *w = arg;
    static const char *const names[] = {"a", "b", "c", "d", "e", "f"};

    for (int i = 0; i < N_ITER; i++) {
        krc_metric_inc(w->fixed, V((i & 1) ? "x" : "y"));
        krc_metric_inc(w->open, V(names[(i + w->id) % 6]));
        krc_metric_add(w->gauge, NULL, 1);
        krc_metric_add(w->gauge, NULL, -1);
        krc_metric_add(w->gauge, NULL, 1);
        krc_metric_observe(w->hist, NULL, (i % 4) * 0.5);
        if (w->id == 0 && i % 5000 == 0) {
            /* renders run alongside the updates */
            char *text = render(w->m);
            krc_free(text);
        }
    }
    return NULL;
}

static void test_concurrent_updates(void **state)
{
    static const char *const xy[] = {"x", "y", NULL};
    static const double buckets[] = {0.5, 1};
    const struct krc_metric_label fixed = {.name = "l", .values = xy};
    const struct krc_metric_label open = {.name = "l", .cap = 4};
    struct krc_metrics *m = new_registry();
    struct worker w[N_THREADS];
    pthread_t t[N_THREADS];
    double v;
    double total = 0;
    (void)state;

    w[0].m = m;
    w[0].fixed = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                                  .name = "f_total",
                                                  .help = "f",
                                                  .labels = &fixed,
                                                  .n_labels = 1});
    w[0].open = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_COUNTER,
                                                 .name = "o_total",
                                                 .help = "o",
                                                 .labels = &open,
                                                 .n_labels = 1});
    w[0].gauge =
        add(m, &(struct krc_metric_desc){.type = KRC_METRIC_GAUGE, .name = "g", .help = "g"});
    w[0].hist = add(m, &(struct krc_metric_desc){.type = KRC_METRIC_HISTOGRAM,
                                                 .name = "h",
                                                 .help = "h",
                                                 .buckets = buckets,
                                                 .n_buckets = 2});
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = w[0];
        w[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    assert_int_equal(krc_metric_get(w[0].fixed, V("x"), &v), 0);
    assert_true(v == N_THREADS * N_ITER / 2);
    assert_int_equal(krc_metric_get(w[0].fixed, V("y"), &v), 0);
    assert_true(v == N_THREADS * N_ITER / 2);
    /* six names share four series and "other": nothing is lost */
    {
        char *text = render(m);
        int series = 0;

        for (const char *p = text; (p = strstr(p, "\no_total{")) != NULL; p++) {
            total += strtod(strchr(p, '}') + 1, NULL);
            series++;
        }
        assert_int_equal(series, 5);
        assert_non_null(strstr(text, "o_total{l=\"other\"}"));
        krc_free(text);
    }
    assert_true(total == N_THREADS * N_ITER);
    assert_int_equal(krc_metric_get(w[0].gauge, NULL, &v), 0);
    assert_true(v == N_THREADS * N_ITER);
    assert_int_equal(krc_metric_get(w[0].hist, NULL, &v), 0);
    assert_true(v == N_THREADS * N_ITER);
    {
        char *text = render(m);
        char want[128];
        /* 0, 0.5 -> le 0.5; 1 -> le 1; 1.5 -> +Inf; sum 3.0 per 4 */
        snprintf(want, sizeof(want), "h_bucket{le=\"0.5\"} %d\nh_bucket{le=\"1\"} %d\n",
                 N_THREADS * N_ITER / 2, N_THREADS * N_ITER * 3 / 4);
        assert_non_null(strstr(text, want));
        snprintf(want, sizeof(want), "h_sum %d\nh_count %d\n", N_THREADS * N_ITER * 3 / 4,
                 N_THREADS * N_ITER);
        assert_non_null(strstr(text, want));
        krc_free(text);
    }
    krc_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_exact),        cmocka_unit_test(test_histogram_cumulative),
        cmocka_unit_test(test_open_label_cap),      cmocka_unit_test(test_open_combinations),
        cmocka_unit_test(test_validation),          cmocka_unit_test(test_format_value),
        cmocka_unit_test(test_collectors),          cmocka_unit_test(test_render_too_big),
        cmocka_unit_test(test_std_metrics),         cmocka_unit_test(test_process_metrics),
        cmocka_unit_test(test_allocation_failures), cmocka_unit_test(test_concurrent_updates),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
