/* `krc mcp`: the read-only MCP server over stdio or Streamable HTTP. */
#include "krc/cli/mcp_cmd.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/cli/db_target.h"
#include "krc/config/config.h"
#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/serve/http_server.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_http.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/store/store.h"
#include "krc/util/http.h"
#include "krc/util/linebuf.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

#define EXIT_USAGE 2
#define STDIO_MAX_LINE (1024u * 1024u) /* the HTTP transport's limit too */
#define STDIO_MAX_RESPONSE (16u * 1024u * 1024u)

struct args {
    const char *db;
    const char *db_password_file;
    const char *kubeconfig;
    const char *context;
    const char *listen;
    const char *token_file;
    const char *log_level;
    const char *config;
    const char *mcp_namespaces;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: krc mcp [--config FILE] [--db FILE|URL] [--db-password-file FILE]\n"
               "               [--kubeconfig FILE] [--context NAME] [--listen HOST:PORT]\n"
               "               [--token-file FILE] [--mcp-namespaces LIST] [--log-level LEVEL]\n"
               "  Serve the restart history to MCP clients (AI agents), read-only.\n"
               "    --config FILE      krc's configuration file: its filters (watchedNamespaces,\n"
               "                       ignoredNamespaces, watchedPodNamePrefixes,\n"
               "                       ignoredPodNamePrefixes), mcpNamespaces, redactPatterns,\n"
               "                       db and dbPasswordFile; their environment variables\n"
               "                       override it, as for krc run\n"
               "    --db FILE|URL      database: a SQLite file or a PostgreSQL URL\n"
               "                       (default: $KRC_DB, else db of --config, else the\n"
               "                       default path)\n"
               "    --db-password-file FILE\n"
               "                       PostgreSQL password: the first line of FILE (default:\n"
               "                       $KRC_DB_PASSWORD_FILE)\n"
               "    --kubeconfig FILE  Kubernetes access for the live explain_pod tool\n"
               "                       (without it: in-cluster when run in a pod, else none)\n"
               "    --context NAME     kubeconfig context\n"
               "    --listen HOST:PORT Streamable HTTP at /mcp instead of stdio\n"
               "    --token-file FILE  bearer token clients must send over HTTP (required\n"
               "                       unless HOST is loopback)\n"
               "    --mcp-namespaces LIST\n"
               "                       answer only about these namespaces (names or regexes,\n"
               "                       comma-separated) of those the filters let through\n"
               "                       (default: $KRC_MCP_NAMESPACES, else mcpNamespaces)\n"
               "    --log-level L      debug, info, warn (default), error; logs go to stderr\n"
               "  explain_pod's reports are redacted with the built-in patterns and those of\n"
               "  $KRC_REDACT_PATTERNS (newline-separated, as for krc run). See docs/mcp.md.\n");
}

static int parse_args(int argc, char **argv, struct args *a)
{
    static const char *const names[] = {
        "--db",        "--kubeconfig",       "--context", "--listen",        "--token-file",
        "--log-level", "--db-password-file", "--config",  "--mcp-namespaces"};
    const char **slots[] = {
        &a->db,        &a->kubeconfig,       &a->context, &a->listen,        &a->token_file,
        &a->log_level, &a->db_password_file, &a->config,  &a->mcp_namespaces};

    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        size_t k;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 1;
        }
        for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            size_t n = strlen(names[k]);
            if (strcmp(argv[i], names[k]) == 0 && i + 1 < argc) {
                *slots[k] = argv[++i];
                break;
            }
            if (strncmp(argv[i], names[k], n) == 0 && argv[i][n] == '=') {
                *slots[k] = argv[i] + n + 1;
                break;
            }
        }
        if (k == sizeof(names) / sizeof(names[0])) {
            fprintf(stderr, "krc mcp: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* ---- stdio ------------------------------------------------------------------------------- */

struct stdio_ctx {
    struct krc_mcp *m;
    struct krc_mcp_session sess;
    struct krc_buf out;
    int failed;
};

static int write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int flush_out(struct stdio_ctx *c)
{
    if (c->out.len == 0) {
        return 0;
    }
    if (krc_buf_append_char(&c->out, '\n') < 0 || write_all(c->out.data, c->out.len) < 0) {
        krc_log(KRC_LOG_ERROR, "mcp: cannot write to stdout: %s", KRC_ERRNO_STR(errno));
        c->failed = 1;
        return 1;
    }
    krc_buf_reset(&c->out);
    return 0;
}

static int on_line(const char *line, size_t len, void *ud)
{
    struct stdio_ctx *c = ud;
    struct krc_error err;
    int status;

    krc_buf_reset(&c->out);
    krc_error_clear(&err);
    if (krc_mcp_handle(c->m, &c->sess, line, len, NULL, &c->out, &status, &err) < 0) {
        krc_log(KRC_LOG_ERROR, "mcp: %s", err.msg);
        krc_buf_reset(&c->out);
        krc_mcp_error_json(&c->out, KRC_MCP_INTERNAL_ERROR, "Internal error: response too large");
    }
    return flush_out(c);
}

static void on_oversize(const char *head, size_t head_len, size_t size, void *ud)
{
    struct stdio_ctx *c = ud;
    (void)head;
    (void)head_len;
    krc_log(KRC_LOG_WARN, "mcp: a request of %zu bytes was dropped", size);
    krc_buf_reset(&c->out);
    krc_mcp_error_json(&c->out, KRC_MCP_INVALID_REQUEST,
                       "Invalid Request: message larger than 1 MiB");
    flush_out(c);
}

static int serve_stdio(struct krc_mcp *m)
{
    struct stdio_ctx c;
    struct krc_linebuf lb;
    char chunk[65536];
    ssize_t n;

    memset(&c, 0, sizeof(c));
    c.m = m;
    krc_buf_init(&c.out, STDIO_MAX_RESPONSE);
    krc_linebuf_init(&lb, STDIO_MAX_LINE);
    krc_log(KRC_LOG_INFO, "mcp: serving on stdio");
    while (!c.failed) {
        n = read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            krc_log(KRC_LOG_ERROR, "mcp: cannot read stdin: %s", KRC_ERRNO_STR(errno));
            c.failed = 1;
            break;
        }
        if (n == 0) {
            /* the last line may lack its newline */
            krc_linebuf_feed(&lb, "\n", 1, on_line, on_oversize, &c);
            break;
        }
        krc_linebuf_feed(&lb, chunk, (size_t)n, on_line, on_oversize, &c);
    }
    krc_linebuf_cleanup(&lb);
    krc_buf_cleanup(&c.out);
    return c.failed ? 1 : 0;
}

/* ---- HTTP -------------------------------------------------------------------------------- */

static int serve_http(struct krc_mcp *m, const struct args *a)
{
    struct krc_http_server_config hc;
    struct krc_http_server *srv = NULL;
    struct krc_mcp_http_config mc;
    struct krc_mcp_http_route *route = NULL;
    struct krc_error err;
    char host[256];
    char *token = NULL;
    sigset_t set;
    int port;
    int sig = 0;
    int rc;

    krc_error_clear(&err);
    memset(&mc, 0, sizeof(mc));
    if (krc_http_server_parse_listen(a->listen, host, sizeof(host), &port, &err) < 0) {
        fprintf(stderr, "krc mcp: --listen: %s\n", err.msg);
        return EXIT_USAGE;
    }
    mc.loopback_only = krc_mcp_http_is_loopback(host);
    if (a->token_file == NULL && !mc.loopback_only) {
        fprintf(stderr,
                "krc mcp: --listen %s is not a loopback address: --token-file is "
                "required (clients must send Authorization: Bearer TOKEN)\n",
                a->listen);
        return EXIT_USAGE;
    }
    if (a->token_file != NULL && krc_mcp_http_read_token(a->token_file, &token, &err) < 0) {
        fprintf(stderr, "krc mcp: --token-file: %s\n", err.msg);
        return 1;
    }
    mc.token = token;
    memset(&hc, 0, sizeof(hc));
    hc.listen = a->listen;
    rc = krc_http_server_new(&hc, &srv, &err);
    rc = rc < 0 ? rc : krc_mcp_http_add(srv, m, &mc, &route, &err);
    if (token != NULL) {
        memset(token, 0, strlen(token));
        krc_free(token);
    }
    /* block the stop signals before the server's threads start: they inherit the mask */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    rc = rc < 0 ? rc : krc_http_server_start(srv, &err);
    if (rc < 0) {
        fprintf(stderr, "krc mcp: %s\n", err.msg);
        krc_http_server_free(srv);
        krc_mcp_http_free(route);
        return 1;
    }
    krc_log(KRC_LOG_INFO, "mcp: serving Streamable HTTP on %s port %d at /mcp%s", host,
            krc_http_server_port(srv), mc.token != NULL ? " (bearer token required)" : "");
    sigwait(&set, &sig);
    krc_log(KRC_LOG_INFO, "mcp: stopping (signal %d)", sig);
    krc_http_server_free(srv);
    krc_mcp_http_free(route);
    return 0;
}

/* ---- main -------------------------------------------------------------------------------- */

/* krc's configuration as krc run builds it (--config, then the environment),
 * then --mcp-namespaces. 0, or 1 with the mistakes on stderr. A route's
 * webhookUrlEnv that is not set here is no mistake: krc mcp sends nothing. */
static int load_config(const struct args *a, struct krc_config *cfg)
{
    struct krc_error err;
    char *errors = NULL;
    char *notes = NULL;
    int rc = 0;

    krc_error_clear(&err);
    if (a->config != NULL) {
        rc = krc_config_check_file(cfg, a->config, &errors, &notes, &err);
        krc_free(notes);
        if (rc < 0) {
            fprintf(stderr, "krc mcp: invalid configuration:\n%s", errors != NULL ? errors : "");
            if (errors == NULL) {
                fprintf(stderr, "%s\n", err.msg);
            }
            krc_free(errors);
            return 1;
        }
    }
    if (krc_config_load_env(cfg, &err) < 0 ||
        (a->mcp_namespaces != NULL &&
         krc_config_set_flag(cfg, "mcp-namespaces", a->mcp_namespaces, &err) < 0)) {
        fprintf(stderr, "krc mcp: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The database: --db, else KRC_DB or the file's db (cfg), else the default
 * (krc_db_target_resolve); the file's dbPasswordFile goes with a URL. */
static int resolve_db(const struct args *a, const struct krc_config *cfg, struct krc_db_target *t)
{
    const char *db = a->db;
    const char *pwf = a->db_password_file;

    if (db == NULL && cfg->db != NULL && cfg->db[0] != '\0') {
        db = cfg->db;
    }
    if (pwf == NULL && db != NULL && krc_store_is_url(db) && cfg->db_password_file != NULL &&
        cfg->db_password_file[0] != '\0') {
        pwf = cfg->db_password_file;
    }
    return krc_db_target_resolve("krc mcp", db, pwf, t);
}

static int open_kube(const struct args *a, struct krc_kube_auth_config *auth,
                     struct krc_token_source **ts, struct krc_kube_client **ret)
{
    struct krc_kube_auth_options ao;
    struct krc_error err;

    *ret = NULL;
    if (a->kubeconfig == NULL && getenv("KUBERNETES_SERVICE_HOST") == NULL) {
        krc_log(KRC_LOG_INFO, "mcp: no --kubeconfig and not in a cluster: explain_pod is off");
        return 0;
    }
    memset(&ao, 0, sizeof(ao));
    ao.kubeconfig = a->kubeconfig;
    ao.context = a->context;
    krc_error_clear(&err);
    if (krc_kube_auth_load(&ao, auth, &err) < 0 || krc_http_global_init(&err) < 0) {
        fprintf(stderr, "krc mcp: %s\n", err.msg);
        return 1;
    }
    if (auth->token != NULL) {
        krc_log_add_secret(auth->token);
    }
    *ts = krc_token_source_new(auth->token, auth->token_file, 60);
    *ret = *ts != NULL ? krc_kube_client_new(auth, *ts, &err) : NULL;
    if (*ret == NULL) {
        fprintf(stderr, "krc mcp: %s\n", *ts != NULL ? err.msg : "out of memory");
        return 1;
    }
    return 0;
}

int krc_mcp_main(int argc, char **argv)
{
    struct args a;
    struct krc_kube_auth_config auth;
    struct krc_token_source *ts = NULL;
    struct krc_kube_client *kube = NULL;
    struct krc_redactor *rd = NULL;
    struct krc_mcp_tools_config tc;
    struct krc_mcp_scope_config sc;
    struct krc_config cfg;
    struct krc_mcp_tools *tools = NULL;
    struct krc_mcp *m = NULL;
    struct krc_error err;
    enum krc_log_level level = KRC_LOG_WARN;
    struct krc_db_target db;
    int rc;

    if ((rc = parse_args(argc, argv, &a)) != 0) {
        return rc == 1 ? 0 : rc;
    }
    if (a.log_level != NULL && krc_log_parse_level(a.log_level, &level) < 0) {
        fprintf(stderr, "krc mcp: --log-level '%s': use debug, info, warn or error\n", a.log_level);
        return EXIT_USAGE;
    }
    krc_log_setup(level, KRC_LOG_TEXT, STDERR_FILENO); /* never stdout: it carries MCP */
    signal(SIGPIPE, SIG_IGN);
    memset(&auth, 0, sizeof(auth));
    krc_config_init(&cfg);
    if (load_config(&a, &cfg) != 0 || resolve_db(&a, &cfg, &db) != 0 ||
        open_kube(&a, &auth, &ts, &kube) != 0) {
        rc = 1;
        goto out;
    }
    krc_error_clear(&err);
    memset(&tc, 0, sizeof(tc));
    tc.db_path = db.target;
    tc.db_password_file = db.password_file;
    tc.kube = kube;
    /* the same redactor and scope as krc run of the same configuration */
    krc_mcp_scope_config_from(&cfg, &sc);
    tc.scope = &sc;
    rc = krc_config_redactor(&cfg, &rd, &err);
    tc.redactor = rd;
    rc = rc < 0 ? rc : krc_mcp_tools_new(&tc, &tools, &err);
    rc = rc < 0 ? rc : krc_mcp_tools_server(tools, &m, &err);
    if (rc < 0) {
        fprintf(stderr, "krc mcp: %s\n", err.msg);
        rc = 1;
        goto out;
    }
    krc_log(KRC_LOG_INFO, "mcp: history %s", db.display); /* never the password */
    rc = a.listen != NULL ? serve_http(m, &a) : serve_stdio(m);
out:
    krc_mcp_free(m);
    krc_mcp_tools_free(tools);
    krc_redact_free(rd);
    krc_kube_client_free(kube);
    krc_token_source_free(ts);
    krc_kube_auth_config_cleanup(&auth);
    if (kube != NULL) {
        krc_http_global_cleanup();
    }
    krc_config_cleanup(&cfg);
    krc_log_clear_secrets();
    return rc;
}
