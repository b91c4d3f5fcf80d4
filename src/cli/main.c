/* krc: command line entry point. argv/env, wiring, exit codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/config/config.h"
#include "krc/cli/config_cmd.h"
#include "krc/cli/demo_cmd.h"
#include "krc/daemon/daemon.h"
#include "krc/util/error.h"
#include "krc/cli/explain.h"
#include "krc/util/gnutls_noinit.h"
#include "krc/cli/history.h"
#include "krc/cli/mcp_cmd.h"
#include "krc/cli/notify_cmd.h"
#include "krc/util/http.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc/alert/dest.h"

#define EXIT_USAGE 2

static void usage(FILE *out)
{
    fprintf(out,
            "krc - Kubernetes pod restart diagnostics collector\n"
            "\n"
            "Usage:\n"
            "  krc run [--kubeconfig FILE] [--context NAME] [--config FILE] [OPTIONS]\n"
            "      Watch pods and report every container restart.\n"
            "  krc explain [FILE...] [--pod FILE] [--events FILE] [--node FILE] [--logs FILE]\n"
            "              [--container NAME] [--format text|json|slack]\n"
            "      Explain a restart offline from saved kubectl output: each FILE is told\n"
            "      apart by its content (pod, describe pod, events, node, log); without\n"
            "      a pod, piped stdin is read: kubectl describe pod POD | krc explain\n"
            "  krc history [--db FILE|URL] [--db-password-file FILE] [--cluster NAME]\n"
            "              [--namespace NS] [--pod NAME] [--cause CODE] [--since 2h]\n"
            "              [--limit N] [--format table|json]\n"
            "  krc history show ID [--db FILE|URL] [--db-password-file FILE]\n"
            "                      [--format text|json]\n"
            "  krc history incidents [--namespace NS] [--workload KIND/NAME] [--open]\n"
            "                        [--since 2h] [--limit N] [--format table|json]\n"
            "  krc history incident ID [--format text|json]\n"
            "  krc history changes --workload NS/KIND/NAME [--since 2h] [--format table|json]\n"
            "      The recorded restarts, incidents (a workload's restarts with one cause) and\n"
            "      changes (default database: $KRC_DB, else the default path).\n"
            "  krc mcp [--config FILE] [--db FILE|URL] [--db-password-file FILE]\n"
            "          [--kubeconfig FILE] [--context NAME] [--listen HOST:PORT]\n"
            "          [--token-file FILE] [--mcp-namespaces LIST] [--log-level LEVEL]\n"
            "      Serve the history read-only to AI agents over MCP (stdio, or HTTP at /mcp).\n"
            "  krc demo [--out DIR] [--no-colour]\n"
            "      Try krc without a cluster: real crash cases on a simulated cluster inside\n"
            "      this process; alerts in the terminal, DIR/alerts.html and DIR/history.db\n"
            "      (default DIR ./krc-demo). About 20 s; Ctrl-C stops it (exit 130).\n"
            "  krc notify test [--destination NAME] [--config FILE] [OPTIONS]\n"
            "      Send a message marked as a test to each chat and paging destination krc run\n"
            "      would use, and explain each answer; exit 1 when one failed.\n"
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

/* Bare `krc`: what there is to do, in a few lines (the full help is `krc help`). */
static void short_usage(FILE *out)
{
    fputs("krc - Kubernetes pod restart diagnostics collector\n"
          "\n"
          "Usage: krc COMMAND [OPTIONS]\n"
          "  demo       see krc work on a simulated cluster (no cluster needed)\n"
          "  run        watch pods and report every container restart\n"
          "  explain    explain a restart offline from saved kubectl output\n"
          "  history    the recorded restarts\n"
          "  mcp        serve the history to AI agents (Model Context Protocol)\n"
          "  config     check a configuration file, print the effective configuration\n"
          "  notify     send a test message to each destination (notify test)\n"
          "  version    print the version\n"
          "  help       every command and option\n"
          "\n"
          "Try: krc demo\n"
          "     krc run --kubeconfig ~/.kube/config --context NAME\n",
          out);
}

/* A misspelt KRC_ variable is not an error (the environment is shared with
 * other programs), but it is said at start-up. */
static void env_typos(void)
{
    char *typos = krc_config_env_typos();

    for (char *p = typos; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        KRC_WARN("%s", p);
        p = nl != NULL ? nl + 1 : NULL;
    }
    krc_free(typos);
}

static int cmd_run(int argc, char **argv)
{
    struct krc_config cfg;
    struct krc_error e;
    char *errors = NULL;
    enum krc_log_level level = KRC_LOG_INFO;
    enum krc_log_format format = KRC_LOG_TEXT;
    int rc;

    krc_config_init(&cfg);
    krc_error_clear(&e);
    rc = krc_config_from_args(&cfg, argc, argv, &errors, &e);
    if (rc != 0) {
        if (rc == 1) {
            usage(stdout);
        } else {
            /* the mistakes quote the file's values: shown, never obeyed */
            krc_text_fputs(errors != NULL ? errors : e.msg, 1024 * 1024, KRC_TEXT_LINES, stderr);
        }
        krc_free(errors);
        krc_config_cleanup(&cfg);
        return rc == 1 ? 0 : EXIT_USAGE;
    }
    krc_log_parse_level(cfg.log_level, &level);
    krc_log_parse_format(cfg.log_format, &format);
    krc_log_setup(level, format, STDERR_FILENO);
    if (cfg.slack_webhook_url != NULL && cfg.slack_webhook_url[0] != '\0') {
        krc_log_add_secret(cfg.slack_webhook_url);
    }
    env_typos();
    KRC_DEBUG("GnuTLS (loaded by libcurl and libmicrohttpd, unused) left uninitialised: "
              "%d load-time initialisation(s) skipped",
              krc_gnutls_noinit_skipped());
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
    const char *cmd;

    if (argc < 2) {
        short_usage(stderr);
        return EXIT_USAGE;
    }
    cmd = argv[1];
    /* the kinds of destination the configuration may name (alert/dest.h) */
    (void)krc_dest_registry_init(NULL, 0);

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
    if (strcmp(cmd, "demo") == 0) {
        return krc_demo_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "mcp") == 0) {
        return krc_mcp_main(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "notify") == 0) {
        return krc_notify_main(argc - 1, argv + 1);
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
