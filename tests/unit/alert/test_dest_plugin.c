/* A kind of destination added the way docs/HACKING.md says a newcomer adds
 * one: the kind below ("ticket", a made-up ticket service) is one
 * definition -- its settings table, its format and its sink -- and one line
 * in the registry (here the extra table of krc_dest_registry_init, the test
 * build's registry line). Nothing else in krc knows it, yet:
 *   - the configuration loader reads its settings from its table (a URL, a
 *     secret from the environment, a text with a default and a check) and
 *     reports its mistakes at their line and column;
 *   - the sender routes a restart to it by a route's `destinations:`,
 *     renders the restart with its format, and delivers the message through
 *     its sink (in memory here), whose settings arrive with the destination. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "krc/alert/dest.h"
#include "krc/alert/sender.h"
#include "krc/alert/sink.h"
#include "krc/config/config.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc_test.h"

/* --- the kind: what a newcomer writes in src/alert/dest/ticket.c ---------------------------- */

/* Delivered messages, as the ticket service would have received them. */
static struct {
    pthread_mutex_t lock;
    int n;
    char url[256];
    char token[64];
    char queue[64];
    char body[512];
} received = {PTHREAD_MUTEX_INITIALIZER, 0, "", "", "", ""};

struct ticket_sink {
    struct krc_sink base;
    const struct krc_destination *d; /* its settings, as the loader read them */
    const char *url;
};

static const struct krc_sink_ops ticket_ops;

static struct krc_sink *ticket_create(const struct krc_sink_options *o, const char *target,
                                      struct krc_error *err)
{
    struct ticket_sink *s;

    if (o->destination == NULL || target == NULL) {
        krc_error_set(err, KRC_EINVAL, "ticket sink: no destination");
        return NULL;
    }
    s = krc_calloc(1, sizeof(*s));
    if (s == NULL) {
        krc_error_set(err, KRC_ENOMEM, "out of memory");
        return NULL;
    }
    s->base.ops = &ticket_ops;
    s->base.limits.min_interval_ms = 0;
    s->base.limits.max_payload = 4096;
    s->d = o->destination;
    s->url = target;
    return &s->base;
}

static int ticket_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 char **ret_fallback, struct krc_error *err)
{
    char body[512];

    snprintf(body, sizeof(body), "TICKET %s cluster=%s pod=%s/%s cause=%s",
             krc_alert_cause_title(diag->cause), fo->cluster != NULL ? fo->cluster : "-",
             rep->namespace != NULL ? rep->namespace : "", rep->name != NULL ? rep->name : "",
             krc_cause_name(diag->cause));
    *ret_fallback = NULL;
    *ret_body = krc_strdup(body);
    return *ret_body != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

static int ticket_format_summary(const struct krc_alert_summary *sum,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err)
{
    char body[128];

    (void)fo;
    snprintf(body, sizeof(body), "TICKET storm restarts=%zu", sum->restarts);
    *ret_body = krc_strdup(body);
    return *ret_body != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

static int ticket_format_recovered(const struct krc_alert_recovered *rec,
                                   const struct krc_alert_options *fo, char **ret_body,
                                   struct krc_error *err)
{
    char body[256];

    (void)fo;
    snprintf(body, sizeof(body), "TICKET resolved %s/%s", rec->namespace, rec->pod);
    *ret_body = krc_strdup(body);
    return *ret_body != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

static int ticket_send(struct krc_sink *base, const struct krc_sink_message *m,
                       struct krc_sink_result *res, struct krc_error *err)
{
    struct ticket_sink *s = (struct ticket_sink *)base;

    (void)err;
    pthread_mutex_lock(&received.lock);
    snprintf(received.url, sizeof(received.url), "%s", s->url);
    snprintf(received.token, sizeof(received.token), "%s", s->d->secret);
    snprintf(received.queue, sizeof(received.queue), "%s", s->d->extra[0]);
    snprintf(received.body, sizeof(received.body), "%s", m->body);
    received.n++;
    pthread_mutex_unlock(&received.lock);
    res->http_status = 201;
    res->attempts = 1;
    return 0;
}

static void ticket_free(struct krc_sink *base)
{
    krc_free(base);
}

static const struct krc_sink_ops ticket_ops = {
    .name = "ticket",
    .create = ticket_create,
    .format_restart = ticket_format_restart,
    .format_summary = ticket_format_summary,
    .format_recovered = ticket_format_recovered,
    .send = ticket_send,
    .upload = NULL,
    .free = ticket_free,
};

static int check_token(const char *v, char *why, size_t whysz)
{
    if (strlen(v) >= 8) {
        return 0;
    }
    snprintf(why, whysz, "the token must have at least 8 characters, not %zu", strlen(v));
    return -1;
}

static int check_queue(const char *v, char *why, size_t whysz)
{
    for (const char *p = v; *p != '\0'; p++) {
        if (*p < 'a' || *p > 'z') {
            snprintf(why, whysz, "queue must be lowercase letters");
            return -1;
        }
    }
    return 0;
}

static const struct krc_dest_setting ticket_settings[] = {
    {"url", KRC_DEST_URL, KRC_DEST_REQUIRED, NULL, offsetof(struct krc_destination, url), 0, NULL},
    {"token", KRC_DEST_SECRET, KRC_DEST_REQUIRED, NULL, offsetof(struct krc_destination, secret),
     offsetof(struct krc_destination, secret_src), check_token},
    {"queue", KRC_DEST_TEXT, 0, "ops", offsetof(struct krc_destination, extra[0]), 0, check_queue},
};

static const struct krc_dest_kind ticket_kind = {
    .schema = {"ticket", "a ticket per restart", ticket_settings,
               sizeof(ticket_settings) / sizeof(ticket_settings[0])},
    .ops = &ticket_ops,
};

/* A paging service whose incident stays open until the resolve, like PagerDuty: the kind says
 * so (no_incident_updates), the route stage asks the kind, never its name. */
static const struct krc_dest_kind page_kind = {
    .schema = {"page", "a page per incident", ticket_settings,
               sizeof(ticket_settings) / sizeof(ticket_settings[0])},
    .ops = &ticket_ops,
    .no_incident_updates = 1,
};

/* --- the registry line: the test build's extra table ---------------------------------------- */

static const struct krc_dest_kind *const test_kinds[] = {&ticket_kind};

static int setup(void **state)
{
    (void)state;
    return krc_dest_registry_init(test_kinds, 1);
}

/* --- helpers -------------------------------------------------------------------------------- */

static char tmp_path[64];

/* A configuration file with `text`, loaded: 0 or the error code, every error in *ret_errors. */
static int load(struct krc_config *cfg, const char *text, char **ret_errors)
{
    struct krc_error err;
    int fd;
    int rc;

    snprintf(tmp_path, sizeof(tmp_path), "/tmp/krc-dest-plugin-XXXXXX");
    fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    krc_config_init(cfg);
    krc_error_clear(&err);
    *ret_errors = NULL;
    rc = krc_config_load_file(cfg, tmp_path, ret_errors, &err);
    unlink(tmp_path);
    return rc;
}

static void assert_contains(const char *text, const char *part)
{
    if (text == NULL || strstr(text, part) == NULL) {
        fail_msg("\"%s\" not in:\n%s", part, text != NULL ? text : "(null)");
    }
}

static void *run_thread(void *arg)
{
    krc_sender_run(arg);
    return NULL;
}

/* --- the tests ------------------------------------------------------------------------------ */

static const char good_file[] = "destinations:\n"
                                "  - name: tickets\n"
                                "    type: ticket\n"
                                "    url: http://127.0.0.1:9/tickets\n"
                                "    tokenEnv: KRC_TEST_TICKET_TOKEN\n"
                                "routes:\n"
                                "  - namespace: shop\n"
                                "    destinations: [tickets]\n";

static void test_settings_from_the_table(void **state)
{
    struct krc_config cfg;
    char *errors;
    const struct krc_destination *d;
    (void)state;

    setenv("KRC_TEST_TICKET_TOKEN", "tk-0123456789", 1);
    assert_int_equal(load(&cfg, good_file, &errors), 0);
    assert_null(errors);
    assert_int_equal(cfg.n_destinations, 1);
    d = &cfg.destinations[0];
    assert_ptr_equal(d->kind, &ticket_kind.schema);
    assert_ptr_equal(krc_dest_kind_of(d), &ticket_kind);
    assert_ptr_equal(krc_dest_ops(d), &ticket_ops);
    assert_string_equal(d->url, "http://127.0.0.1:9/tickets");
    assert_string_equal(d->secret, "tk-0123456789");
    assert_string_equal(d->secret_src, "tokenEnv: KRC_TEST_TICKET_TOKEN");
    assert_string_equal(d->extra[0], "ops"); /* the table's default */
    krc_config_cleanup(&cfg);
}

static void test_mistakes_named(void **state)
{
    static const char bad[] = "destinations:\n"
                              "  - name: a\n"
                              "    type: tiket\n"
                              "  - name: b\n"
                              "    type: ticket\n"
                              "    url: https://tickets.example.test/\n"
                              "  - name: c\n"
                              "    type: ticket\n"
                              "    url: http://tickets.example.test/\n"
                              "    tokenEnv: KRC_TEST_TICKET_SHORT\n"
                              "    queue: Ops\n"
                              "  - name: d\n"
                              "    type: ticket\n"
                              "    colour: red\n";
    struct krc_config cfg;
    char *errors;
    (void)state;

    setenv("KRC_TEST_TICKET_SHORT", "short", 1);
    assert_true(load(&cfg, bad, &errors) < 0);
    /* its name is a type like the built-in ones, suggested for a typo */
    assert_contains(errors, ":3:11: destinations[0] (a).type: unknown destination type \"tiket\" "
                            "(did you mean \"ticket\"? types: slack-webhook, slack-api, "
                            "pagerduty, teams, google-chat, webhook, kubernetes-event, ticket)");
    /* a required secret, with the keys the table gives it */
    assert_contains(errors, ":4:5: destinations[1] (b): a ticket destination needs tokenEnv or "
                            "tokenFile");
    /* the URL type's own check, then the table's check functions */
    assert_contains(errors, ":9:10: destinations[2] (c).url: the URL is plain http:// to a host "
                            "that is not loopback");
    assert_contains(errors, ":7:5: destinations[2] (c): the token must have at least 8 "
                            "characters, not 5");
    assert_contains(errors, ":7:5: destinations[2] (c): queue must be lowercase letters");
    /* the allowed keys are the table's */
    assert_contains(errors, ":14:5: destinations[3] (d): unknown key \"colour\" (allowed: "
                            "name|type|default|allowInsecureHttp|url|tokenEnv|tokenFile|queue)");
    free(errors);
    krc_config_cleanup(&cfg);
}

static void test_route_render_deliver(void **state)
{
    struct krc_config cfg;
    char *errors;
    struct krc_sender_options o = krc_test_sender_options(NULL);
    struct krc_sender *n;
    struct krc_restart r;
    struct krc_restart other;
    struct krc_report *rep = krc_report_new();
    struct krc_diagnosis *dg = krc_calloc(1, sizeof(*dg));
    struct krc_sender_message msg;
    struct krc_route_plan plan;
    struct krc_route_plan other_plan;
    pthread_t th;
    int64_t deadline;
    (void)state;

    setenv("KRC_TEST_TICKET_TOKEN", "tk-0123456789", 1);
    assert_int_equal(load(&cfg, good_file, &errors), 0);
    o.cluster_name = "prod";
    o.routes = cfg.routes;
    o.n_routes = cfg.n_routes;
    o.destinations = cfg.destinations;
    o.n_destinations = cfg.n_destinations;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    assert_true(krc_sender_has_destination(n));

    /* route: the route's namespace goes to the ticket destination, another nowhere */
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)"web-1";
    (void)krc_restart_ident_set(&r.ident, "uid-1", "app", 0, 0, NULL);
    r.ident.restart_count = 3;
    other = r;
    other.namespace = (char *)"billing";
    assert_int_equal(krc_route_restart_in(n, &other, NULL, &other_plan), KRC_POLICY_NO_DESTINATION);
    assert_int_equal(other_plan.n_dests, 0);
    assert_int_equal(krc_route_restart_in(n, &r, NULL, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.n_dests, 1);
    assert_string_equal(plan.dests[0].store_key, "dest:tickets");

    /* render: the kind's format */
    assert_non_null(rep);
    assert_non_null(dg);
    krc_diagnosis_init(dg);
    rep->namespace = krc_strdup("shop");
    rep->name = krc_strdup("web-1");
    dg->cause = KRC_CAUSE_OOM_KILLED;
    assert_int_equal(krc_render_restart(&plan, &r, rep, dg, krc_clock_now(), &msg),
                     KRC_POLICY_ALERT);
    assert_string_equal(msg.destination, "dest:tickets");
    assert_non_null(msg.body);
    assert_string_equal(msg.body, "TICKET OOMKilled cluster=prod pod=shop/web-1 cause=oom_killed");
    assert_null(msg.next);

    /* deliver: the sender's lane for it builds its sink with the destination's settings */
    received.n = 0;
    krc_deliver_restart(n, &plan, &r, &msg, NULL, 1, rep, dg, NULL, 0);
    assert_int_equal(pthread_create(&th, NULL, run_thread, n), 0);
    deadline = krc_clock_mono_ms() + 10000;
    while (krc_sender_stats(n)->alerts_sent < 1 && krc_clock_mono_ms() < deadline) {
        krc_clock_sleep_ms(10, NULL);
    }
    krc_sender_abort(n);
    pthread_join(th, NULL);
    pthread_mutex_lock(&received.lock);
    assert_int_equal(received.n, 1);
    assert_string_equal(received.url, "http://127.0.0.1:9/tickets");
    assert_string_equal(received.token, "tk-0123456789");
    assert_string_equal(received.queue, "ops");
    assert_string_equal(received.body,
                        "TICKET OOMKilled cluster=prod pod=shop/web-1 cause=oom_killed");
    pthread_mutex_unlock(&received.lock);
    assert_int_equal(krc_sender_stats(n)->alerts_sent, 1);
    krc_sender_free(n);
    krc_config_cleanup(&cfg);
}

/* A repeat of an incident past incidentUpdateInterval: an update to the ticket destination,
 * none to the kind that takes no incident updates. */
static void test_kind_without_incident_updates(void **state)
{
    static const struct krc_dest_kind *const with_page[] = {&ticket_kind, &page_kind};
    static const struct krc_route_incident inc = {"Deployment", "web", KRC_CAUSE_OOM_KILLED};
    struct krc_sender_options o = krc_test_sender_options(NULL);
    struct krc_destination d[2];
    struct krc_route_plan plan;
    struct krc_sender *n;
    struct krc_restart r;
    int64_t t0 = krc_clock_now();
    (void)state;

    assert_int_equal(krc_dest_registry_init(with_page, 2), 0);
    memset(d, 0, sizeof(d));
    d[0].name = (char *)"tickets";
    d[0].kind = &ticket_kind.schema;
    d[1].name = (char *)"pager";
    d[1].kind = &page_kind.schema;
    for (int i = 0; i < 2; i++) {
        d[i].url = (char *)"http://127.0.0.1:9/tickets";
        d[i].secret = (char *)"tk-0123456789";
        d[i].is_default = 1;
    }
    o.destinations = d;
    o.n_destinations = 2;
    n = krc_sender_new(&o, NULL);
    assert_non_null(n);
    memset(&r, 0, sizeof(r));
    r.namespace = (char *)"shop";
    r.pod = (char *)"web-1";
    (void)krc_restart_ident_set(&r.ident, "uid-1", "app", 1, 0, NULL);
    krc_clock_set_fake_now(t0);
    assert_int_equal(krc_route_restart_in(n, &r, &inc, &plan), KRC_POLICY_ALERT);
    assert_int_equal(plan.n_dests, 2);
    r.ident.restart_count = 2;
    krc_clock_set_fake_now(t0 + o.incident_update_interval_s - 1);
    assert_int_equal(krc_route_restart_in(n, &r, &inc, &plan), KRC_POLICY_MUTED);
    r.ident.restart_count = 3;
    krc_clock_set_fake_now(t0 + o.incident_update_interval_s);
    assert_int_equal(krc_route_restart_in(n, &r, &inc, &plan), KRC_POLICY_THREAD);
    assert_int_equal(plan.n_dests, 2);
    for (size_t k = 0; k < plan.n_dests; k++) {
        assert_int_equal(plan.dests[k].reply, 0);
        assert_int_equal(plan.dests[k].held, strcmp(plan.dests[k].store_key, "dest:pager") == 0);
    }
    krc_clock_set_fake_now(0);
    krc_sender_free(n);
    assert_int_equal(krc_dest_registry_init(test_kinds, 1), 0);
}

static void test_registry_refuses_a_taken_name(void **state)
{
    static const struct krc_dest_kind again = {.schema = {"teams", "not Teams", NULL, 0},
                                               .ops = &ticket_ops};
    static const struct krc_dest_kind *const clash[] = {&again};
    (void)state;

    assert_int_equal(krc_dest_registry_init(clash, 1), KRC_EINVAL);
    /* the earlier registration stands */
    assert_ptr_equal(krc_dest_kind_find("ticket"), &ticket_kind);
    assert_ptr_equal(krc_dest_schema_find("ticket"), &ticket_kind.schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_from_the_table),
        cmocka_unit_test(test_mistakes_named),
        cmocka_unit_test(test_route_render_deliver),
        cmocka_unit_test(test_kind_without_incident_updates),
        cmocka_unit_test(test_registry_refuses_a_taken_name),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
