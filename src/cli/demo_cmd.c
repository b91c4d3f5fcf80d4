/* `krc demo [--out DIR] [--no-colour]`: run demo/demo.h, then show the
 * history with the code of `krc history` and say what to try next. */
#include "krc/cli/demo_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/cli/history.h"
#include "krc/demo/demo.h"
#include "krc/util/error.h"
#include "krc/util/http.h"
#include "krc/util/log.h"

#define EXIT_USAGE 2

static void usage(FILE *f)
{
    fprintf(f,
            "usage: krc demo [--out DIR] [--no-colour]\n"
            "\n"
            "Runs krc end to end on a simulated cluster inside this process: a Kubernetes\n"
            "API server and a Slack-compatible webhook on 127.0.0.1, real crash cases\n"
            "(OOM kill, liveness probe, Python traceback, CUDA out of memory, missing\n"
            "binary, start failure, unreachable database, a node going NotReady with a\n"
            "storm of restarts). Each alert is printed as it arrives; at the end\n"
            "DIR/" KRC_DEMO_HTML " shows every message as Slack does and DIR/" KRC_DEMO_DB "\n"
            "holds the history for `krc history` and `krc mcp`. About 20 seconds; Ctrl-C\n"
            "stops it (exit 130, the history so far kept).\n"
            "\n"
            "    --out DIR     output directory (default ./" KRC_DEMO_DEFAULT_OUT "; a previous\n"
            "                  demo's history there is replaced)\n"
            "    --no-colour   no ANSI colours (also when NO_COLOR is set or stdout is\n"
            "                  not a terminal)\n");
}

static void epilogue(const char *dir)
{
    char db[4200];
    char *argv[] = {"history", "--db", db, NULL};

    snprintf(db, sizeof(db), "%s/%s", dir, KRC_DEMO_DB);
    printf("History (krc history --db %s):\n\n", db);
    fflush(stdout);
    krc_history_main(3, argv);
    printf("\nFiles:\n"
           "  %s/%s   every message as Slack shows it (open it in a browser)\n"
           "  %s   the restarts krc recorded\n"
           "\nTry:\n"
           "  krc history --db %s\n"
           "  krc history show 1 --db %s\n"
           "  krc mcp --db %s      (MCP over stdio, for AI agents)\n",
           dir, KRC_DEMO_HTML, db, db, db, db);
}

int krc_demo_main(int argc, char **argv)
{
    struct krc_demo_options o = {KRC_DEMO_DEFAULT_OUT, 0, stdout};
    struct krc_error e;
    int colour = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
    enum krc_log_level level;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc && argv[i + 1][0] != '\0') {
            o.out_dir = argv[++i];
        } else if (strncmp(argv[i], "--out=", 6) == 0 && argv[i][6] != '\0') {
            o.out_dir = argv[i] + 6;
        } else if (strcmp(argv[i], "--no-colour") == 0 || strcmp(argv[i], "--no-color") == 0) {
            colour = 0;
        } else {
            fprintf(stderr, "krc demo: %s '%s'\n",
                    strncmp(argv[i], "--out", 5) == 0 ? "needs a directory:" : "unknown option",
                    argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    o.colour = colour;
    /* krc's own log: warnings only, unless KRC_LOG_LEVEL asks for more */
    if (getenv("KRC_LOG_LEVEL") == NULL ||
        krc_log_parse_level(getenv("KRC_LOG_LEVEL"), &level) < 0) {
        level = KRC_LOG_WARN;
    }
    krc_log_setup(level, KRC_LOG_TEXT, STDERR_FILENO);
    krc_error_clear(&e);
    if (krc_http_global_init(&e) < 0) {
        fprintf(stderr, "krc demo: %s\n", e.msg);
        return 1;
    }
    rc = krc_demo_run(&o);
    krc_http_global_cleanup();
    if (rc == 0) {
        epilogue(o.out_dir);
    } else if (rc == 130 || rc == 143) {
        fprintf(stderr, "\nkrc demo: interrupted; the history so far is in %s/%s\n", o.out_dir,
                KRC_DEMO_DB);
    }
    return rc;
}
