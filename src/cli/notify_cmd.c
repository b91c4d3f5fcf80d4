/* krc notify test (include/krc/cli/notify_cmd.h). */
#include "krc/cli/notify_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "krc/alert/dest.h"
#include "krc/alert/format.h"
#include "krc/alert/sink.h"
#include "krc/config/config.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/http.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define MAX_TARGETS 80

/* One place a test message goes: a destination and, for the Go tool's
 * Slack settings, which of its webhooks. */
struct target {
    const struct krc_destination *d;
    char label[160]; /* "slack (SLACK_WEBHOOK_URL)", "oncall (pagerduty)" */
    const char *url; /* the sink's target (borrowed) */
    const char *channel;
};

static void usage(FILE *out)
{
    fputs("Usage: krc notify test [--destination NAME] [--config FILE] [krc run's options]\n"
          "  Send one message marked as a test to every chat and paging destination that\n"
          "  krc run with the same options, environment and configuration file posts to\n"
          "  (not the Kubernetes Event), and print each one's answer, explained.\n"
          "  --destination NAME  only this one (\"slack\": the SLACK_* settings)\n"
          "  Exit status: 0 all accepted, 1 one or more failed, 2 usage or configuration.\n",
          out);
}

/* The loader's mistakes (made for krc run: "krc run: ..." lines) as this
 * command's; the file's values in them are shown, never obeyed. */
static void put_errors(const char *text)
{
    struct krc_buf b;

    krc_buf_init(&b, 2 * 1024 * 1024);
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, "krc run:", 8) == 0) {
            krc_buf_printf(&b, "krc notify test:%.*s", (int)(len - 8), p + 8);
        } else {
            krc_buf_printf(&b, "%.*s", (int)len, p);
        }
        p += len;
    }
    krc_text_fputs(krc_buf_str(&b), 1024 * 1024, KRC_TEXT_LINES, stderr);
    krc_buf_cleanup(&b);
}

/* The targets of cfg, in the order krc config print lists them. */
static size_t targets_of(const struct krc_config *cfg, struct target *t, size_t max)
{
    const struct krc_destination *env = &cfg->slack_env;
    size_t n = 0;

    if (env->kind != NULL && krc_dest_is(env, "slack-api") && env->secret != NULL) {
        t[n].d = env;
        snprintf(t[n].label, sizeof(t[n].label), "slack (SLACK_BOT_TOKEN, channel %s)",
                 env->channel != NULL ? env->channel : "none set");
        t[n].channel = env->channel;
        n++;
    } else if (env->kind != NULL && krc_dest_is(env, "slack-webhook")) {
        if (env->url != NULL) {
            t[n].d = env;
            snprintf(t[n].label, sizeof(t[n].label), "slack (SLACK_WEBHOOK_URL)");
            t[n].url = env->url;
            t[n].channel = env->channel;
            n++;
        }
        for (size_t i = 0; i < cfg->n_routes && n < max; i++) {
            const struct krc_route *r = &cfg->routes[i];
            if (r->webhook_url == NULL || r->webhook_url[0] == '\0') {
                continue;
            }
            t[n].d = env;
            snprintf(t[n].label, sizeof(t[n].label), "slack (routes[%zu].%s)", i,
                     r->webhook_env ? "webhookUrlEnv" : "webhookUrl");
            t[n].url = r->webhook_url;
            t[n].channel = r->channel != NULL ? r->channel : env->channel;
            n++;
        }
    }
    for (size_t i = 0; i < cfg->n_destinations && n < max; i++) {
        const struct krc_destination *d = &cfg->destinations[i];
        struct krc_dest_target dt;
        krc_dest_target_of(d, NULL, &dt);
        t[n].d = d;
        snprintf(t[n].label, sizeof(t[n].label), "%s (%s)", d->name,
                 d->kind != NULL ? d->kind->name : "?");
        t[n].url = dt.url;
        t[n].channel = dt.channel;
        n++;
    }
    return n;
}

/* Send the test to one target; prints its line. 1 when it failed. */
static int test_one(const struct krc_config *cfg, const struct target *t, const char *test_id)
{
    const struct krc_sink_ops *ops = krc_dest_ops(t->d);
    struct krc_sink_options so;
    struct krc_alert_options fo;
    struct krc_sink *s;
    struct krc_error e;
    char line[600];
    int failed = 0;

    if (ops == NULL || ops->format_test == NULL) {
        printf("%s: skipped: it is not a message (krc run writes it; nothing is sent here)\n",
               t->label);
        return 0;
    }
    krc_sink_options_defaults(&so);
    so.max_attempts = 3; /* a 5xx or a lost connection is tried again, briefly */
    so.backoff_max_ms = 4000;
    so.timeout_ms = 15000;
    krc_dest_sink_options(t->d, &so);
    krc_error_clear(&e);
    s = ops->create(&so, t->url, &e);
    if (s == NULL) {
        printf("%s: failed: %s\n", t->label, e.msg);
        return 1;
    }
    krc_alert_options_init(&fo);
    fo.cluster = cfg->cluster_name != NULL && cfg->cluster_name[0] ? cfg->cluster_name : NULL;
    fo.channel = t->channel;
    fo.username =
        cfg->slack_username != NULL && cfg->slack_username[0] ? cfg->slack_username : NULL;
    fo.icon = cfg->slack_icon != NULL && cfg->slack_icon[0] ? cfg->slack_icon : NULL;
    for (int step = 0; step < 2 && !failed; step++) {
        struct krc_sink_message m;
        struct krc_sink_result res;
        char *body = NULL;
        int rc;

        krc_error_clear(&e);
        if (ops->format_test(&fo, test_id, step, &body, &e) < 0) {
            printf("%s: failed: %s\n", t->label, e.msg);
            failed = 1;
            break;
        }
        if (body == NULL) {
            break; /* no follow-up */
        }
        memset(&m, 0, sizeof(m));
        memset(&res, 0, sizeof(res));
        m.body = body;
        m.channel = t->channel;
        rc = ops->send(s, &m, &res, &e);
        krc_free(body);
        krc_sink_explain(ops, res.http_status, res.error, line, sizeof(line));
        if (rc < 0) {
            /* an answer explained; no answer: what the transport said (no secret in it) */
            printf("%s: failed: %s\n", t->label, res.http_status != 0 ? line : e.msg);
            failed = 1;
        } else if (step == 0) {
            printf("%s: %s\n", t->label, line);
        }
    }
    fflush(stdout);
    krc_sink_free(s);
    return failed;
}

static int cmd_test(int argc, char **argv)
{
    struct krc_config cfg;
    struct krc_error e;
    struct target *targets;
    char **args = krc_calloc((size_t)argc + 1, sizeof(char *));
    const char *only = NULL;
    char *errors = NULL;
    char test_id[64];
    size_t n_args = 0;
    size_t n;
    int failed = 0;
    int rc;

    if (args == NULL) {
        fprintf(stderr, "krc notify test: out of memory\n");
        return EXIT_FAILED;
    }
    args[n_args++] = "notify test";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--destination") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strncmp(argv[i], "--destination=", 14) == 0) {
            only = argv[i] + 14;
        } else if (strcmp(argv[i], "--destination") == 0) {
            fprintf(stderr, "krc notify test: --destination needs a name\n");
            krc_free(args);
            return EXIT_USAGE;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            krc_free(args);
            return 0;
        } else {
            args[n_args++] = argv[i];
        }
    }
    krc_config_init(&cfg);
    krc_error_clear(&e);
    /* the settings krc run would take: --config FILE, the environment, the flags */
    rc = krc_config_from_args(&cfg, (int)n_args, args, &errors, &e);
    krc_free(args);
    if (rc != 0) {
        if (rc == 1) {
            usage(stdout);
        } else {
            put_errors(errors != NULL ? errors : e.msg);
        }
        krc_free(errors);
        krc_config_cleanup(&cfg);
        return rc == 1 ? 0 : EXIT_USAGE;
    }
    targets = krc_calloc(MAX_TARGETS, sizeof(*targets));
    if (targets == NULL) {
        krc_config_cleanup(&cfg);
        return EXIT_FAILED;
    }
    n = targets_of(&cfg, targets, MAX_TARGETS);
    if (only != NULL) {
        int known = 0;
        for (size_t i = 0; i < n; i++) {
            known |= strcmp(targets[i].d->name, only) == 0;
        }
        if (!known) {
            fprintf(stderr, "krc notify test: no destination is named \"%s\" (destinations:", only);
            for (size_t i = 0; i < n; i++) {
                if (i == 0 || targets[i].d != targets[i - 1].d) {
                    fprintf(stderr, "%s %s", i ? "," : "", targets[i].d->name);
                }
            }
            fprintf(stderr, "%s)\n", n == 0 ? " none" : "");
            krc_free(targets);
            krc_config_cleanup(&cfg);
            return EXIT_USAGE;
        }
    }
    if (n == 0) {
        fprintf(stderr, "krc notify test: no destination is configured (SLACK_WEBHOOK_URL, "
                        "SLACK_BOT_TOKEN, or destinations: in the --config file)\n");
        krc_free(targets);
        krc_config_cleanup(&cfg);
        return EXIT_USAGE;
    }
    krc_log_setup(KRC_LOG_WARN, KRC_LOG_TEXT, STDERR_FILENO);
    krc_error_clear(&e);
    if (krc_http_global_init(&e) < 0) {
        fprintf(stderr, "krc notify test: %s\n", e.msg);
        krc_free(targets);
        krc_config_cleanup(&cfg);
        return EXIT_FAILED;
    }
    snprintf(test_id, sizeof(test_id), "%lld-%ld", (long long)time(NULL), (long)getpid());
    for (size_t i = 0; i < n; i++) {
        if (only != NULL && strcmp(targets[i].d->name, only) != 0) {
            continue;
        }
        failed += test_one(&cfg, &targets[i], test_id);
    }
    krc_http_global_cleanup();
    krc_free(targets);
    krc_config_cleanup(&cfg);
    krc_log_clear_secrets();
    return failed > 0 ? EXIT_FAILED : 0;
}

int krc_notify_main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "test") == 0) {
        return cmd_test(argc - 1, argv + 1);
    }
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return EXIT_USAGE;
}
