/* krc: command line entry point. argv/env, wiring, exit codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/config.h"
#include "krc/config_cmd.h"
#include "krc/daemon.h"
#include "krc/error.h"
#include "krc/explain.h"
#include "krc/history.h"
#include "krc/http.h"
#include "krc/log.h"
#include "krc/mem.h"

#define EXIT_USAGE 2

static void usage(FILE *out)
{
    fprintf(out,
            "krc - Kubernetes pod restart diagnostics collector\n"
            "\n"
            "Usage:\n"
            "  krc run [--kubeconfig FILE] [--context NAME] [--config FILE] [OPTIONS]\n"
            "      Watch pods and report every container restart.\n"
            "  krc explain --pod FILE [--events FILE] [--node FILE] [--logs FILE]\n"
            "              [--container NAME] [--format text|json|slack]\n"
            "      Explain a restart offline from saved kubectl output (--pod - reads stdin).\n"
            "  krc history [--db FILE] [--namespace NS] [--pod NAME] [--cause CODE] [--since 2h]\n"
            "              [--limit N] [--format table|json]\n"
            "  krc history show ID [--db FILE] [--format text|json]\n"
            "      The recorded restarts (default database: $KRC_DB, else the default path).\n"
            "  krc config check FILE | print [--config FILE] | keys\n"
            "      Validate a configuration file; show the effective configuration.\n"
            "  krc version\n"
            "  krc help\n"
            "\n"
            "With no --kubeconfig, $KUBECONFIG is used, then the in-cluster service account\n"
            "(KUBERNETES_SERVICE_HOST/PORT), then ~/.kube/config.\n"
            "\n"
            "Options of krc run (each also settable in the --config file and by environment):\n");
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        char flag[64];
        if (o->flag != NULL) {
            snprintf(flag, sizeof(flag), "--%s", o->flag);
        } else {
            snprintf(flag, sizeof(flag), "(no flag)");
        }
        fprintf(out, "  %-38s %s\n      config key %s, environment %s, default \"%s\"\n", flag,
                o->help, o->key, o->env ? o->env : "-",
                o->type == KRC_CONFIG_SECRET ? "" : o->default_value);
    }
}

struct flag_value {
    const char *name;
    const char *value;
};

/* Parse `krc run` arguments into cfg with the precedence default < file <
 * environment < flags. Returns 0, or an exit code. */
static int parse_run_args(int argc, char **argv, struct krc_config *cfg)
{
    struct flag_value *flags = krc_calloc((size_t)argc + 1, sizeof(*flags));
    size_t n_flags = 0;
    const char *config_file = NULL;
    struct krc_error e;
    int rc = 0;

    if (flags == NULL) {
        fprintf(stderr, "krc: out of memory\n");
        return 1;
    }
    krc_error_clear(&e);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *name;
        const char *value = NULL;
        char namebuf[128];
        const char *eq;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            krc_free(flags);
            return -1;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "krc run: unexpected argument \"%s\" (see krc help)\n", a);
            rc = EXIT_USAGE;
            goto out;
        }
        eq = strchr(a + 2, '=');
        if (eq != NULL) {
            snprintf(namebuf, sizeof(namebuf), "%.*s", (int)(eq - a - 2), a + 2);
            value = eq + 1;
        } else {
            snprintf(namebuf, sizeof(namebuf), "%s", a + 2);
        }
        name = namebuf;
        if (strcmp(name, "kubeconfig") != 0 && strcmp(name, "context") != 0 &&
            strcmp(name, "config") != 0 && krc_config_find_flag(name) == NULL) {
            fprintf(stderr, "krc run: unknown option --%s (see krc help)\n", name);
            rc = EXIT_USAGE;
            goto out;
        }
        if (value == NULL) {
            if (i + 1 >= argc) {
                fprintf(stderr, "krc run: option --%s needs a value\n", name);
                rc = EXIT_USAGE;
                goto out;
            }
            value = argv[++i];
        }
        if (strcmp(name, "kubeconfig") == 0) {
            krc_free(cfg->kubeconfig);
            cfg->kubeconfig = krc_strdup(value);
        } else if (strcmp(name, "context") == 0) {
            krc_free(cfg->context);
            cfg->context = krc_strdup(value);
        } else if (strcmp(name, "config") == 0) {
            config_file = value;
        } else {
            /* the option table's flag names are static strings */
            flags[n_flags].name = krc_config_find_flag(name)->flag;
            flags[n_flags].value = value;
            n_flags++;
        }
    }
    if (config_file != NULL) {
        char *errors = NULL;
        cfg->config_file = krc_strdup(config_file);
        if (krc_config_load_file(cfg, config_file, &errors, &e) < 0) {
            fprintf(stderr, "krc run: invalid configuration:\n%s", errors ? errors : e.msg);
            krc_free(errors);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    if (krc_config_load_env(cfg, &e) < 0) {
        fprintf(stderr, "krc run: %s\n", e.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < n_flags; i++) {
        if (krc_config_set_flag(cfg, flags[i].name, flags[i].value, &e) < 0) {
            fprintf(stderr, "krc run: %s\n", e.msg);
            rc = EXIT_USAGE;
            goto out;
        }
    }
out:
    krc_free(flags);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    struct krc_config cfg;
    struct krc_error e;
    enum krc_log_level level = KRC_LOG_INFO;
    enum krc_log_format format = KRC_LOG_TEXT;
    int rc;

    krc_config_init(&cfg);
    rc = parse_run_args(argc, argv, &cfg);
    if (rc != 0) {
        krc_config_cleanup(&cfg);
        return rc < 0 ? 0 : rc;
    }
    krc_log_parse_level(cfg.log_level, &level);
    krc_log_parse_format(cfg.log_format, &format);
    krc_log_setup(level, format, STDERR_FILENO);
    if (cfg.slack_webhook_url != NULL && cfg.slack_webhook_url[0] != '\0') {
        krc_log_add_secret(cfg.slack_webhook_url);
    }
    krc_error_clear(&e);
    if (krc_http_global_init(&e) < 0) {
        krc_log(KRC_LOG_ERROR, "%s", e.msg);
        krc_config_cleanup(&cfg);
        return 1;
    }
    rc = krc_daemon_run(&cfg);
    krc_http_global_cleanup();
    krc_config_cleanup(&cfg);
    krc_log_clear_secrets();
    return rc;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "help";

    if (strcmp(cmd, "run") == 0) {
        return cmd_run(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "config") == 0) {
        return krc_config_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "history") == 0) {
        return krc_history_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "explain") == 0) {
        return krc_explain_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("krc %s\n", KRC_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "krc: unknown command \"%s\"\n\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
