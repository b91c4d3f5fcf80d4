#define _GNU_SOURCE /* pipe2 */
/* Kubeconfig exec credential plugins: run the command (posix_spawn, pipes,
 * no shell), read its ExecCredential, cache it until it expires. */
#include "krc/kube/kube_exec.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

extern char **environ;

#define STDERR_MAX (64 * 1024)
#define EXEC_INFO_NAME "KUBERNETES_EXEC_INFO"
/* After the plugin exits, its pipes are read this long more when a process
 * it started keeps them open; while it runs, its exit is looked for this
 * often. */
#define EXIT_GRACE_MS 250
#define EXIT_POLL_MS 50

struct krc_exec_plugin {
    pthread_mutex_t lock;
    int refs; /* under lock */
    char *origin;
    char *describe;
    char *api_version;
    char **argv; /* command, args, NULL */
    char **env;  /* plugin env entries, NULL-terminated */
    size_t nenv;
    char *install_hint;
    char *exec_info; /* KUBERNETES_EXEC_INFO=... */
    long timeout_ms;
    size_t max_output;
    /* cache, under lock */
    struct krc_exec_creds cached;
    int have;
    int stale;
    unsigned runs;
};

/* ---------------------------------------------------------------------- */
/* Construction                                                           */

static char **dup_list(const char *first, const char *const *items, size_t n)
{
    size_t off = first != NULL ? 1 : 0;
    char **v = krc_calloc(n + off + 1, sizeof(*v));

    if (v == NULL) {
        return NULL;
    }
    if (first != NULL && (v[0] = krc_strdup(first)) == NULL) {
        krc_free(v);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        v[i + off] = krc_strdup(items[i]);
        if (v[i + off] == NULL) {
            for (size_t k = 0; k < i + off; k++) {
                krc_free(v[k]);
            }
            krc_free(v);
            return NULL;
        }
    }
    return v;
}

static void free_list(char **v)
{
    if (v == NULL) {
        return;
    }
    for (size_t i = 0; v[i] != NULL; i++) {
        krc_free(v[i]);
    }
    krc_free(v);
}

static char *make_exec_info(const char *api_version, const char *cluster_json)
{
    struct krc_buf b;
    char *s;

    krc_buf_init(&b, 1024 * 1024);
    if (krc_buf_printf(&b,
                       EXEC_INFO_NAME "={\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
                                      "\"spec\":{\"interactive\":false%s%s}}",
                       api_version, cluster_json != NULL ? ",\"cluster\":" : "",
                       cluster_json != NULL ? cluster_json : "") < 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    s = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    return s;
}

static char *make_describe(const char *command, const char *origin)
{
    struct krc_buf b;
    char *s;

    krc_buf_init(&b, 64 * 1024);
    if (krc_buf_printf(&b, "the exec credential plugin %s of %s", command, origin) < 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    s = krc_buf_take(&b);
    krc_buf_cleanup(&b);
    return s;
}

struct krc_exec_plugin *krc_exec_plugin_new(const struct krc_exec_spec *spec, struct krc_error *err)
{
    struct krc_exec_plugin *p = krc_calloc(1, sizeof(*p));

    if (p == NULL) {
        krc_error_set(err, KRC_ENOMEM, "%s: out of memory", spec->origin);
        return NULL;
    }
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        krc_free(p);
        krc_error_set(err, KRC_ENOMEM, "%s: cannot create a mutex", spec->origin);
        return NULL;
    }
    p->refs = 1;
    p->timeout_ms = KRC_EXEC_TIMEOUT_MS;
    p->max_output = KRC_EXEC_MAX_OUTPUT;
    p->nenv = spec->nenv;
    p->origin = krc_strdup(spec->origin);
    p->describe = make_describe(spec->command, spec->origin);
    p->api_version = krc_strdup(spec->api_version);
    p->argv = dup_list(spec->command, spec->args, spec->nargs);
    p->env = dup_list(NULL, spec->env, spec->nenv);
    p->exec_info = make_exec_info(spec->api_version, spec->cluster_json);
    if (spec->install_hint != NULL) {
        p->install_hint = krc_strdup(spec->install_hint);
    }
    if (p->origin == NULL || p->describe == NULL || p->api_version == NULL || p->argv == NULL ||
        p->env == NULL || p->exec_info == NULL ||
        (spec->install_hint != NULL && p->install_hint == NULL)) {
        krc_error_set(err, KRC_ENOMEM, "%s: out of memory", spec->origin);
        krc_exec_plugin_unref(p);
        return NULL;
    }
    return p;
}

struct krc_exec_plugin *krc_exec_plugin_ref(struct krc_exec_plugin *p)
{
    pthread_mutex_lock(&p->lock);
    p->refs++;
    pthread_mutex_unlock(&p->lock);
    return p;
}

void krc_exec_creds_cleanup(struct krc_exec_creds *c)
{
    if (c == NULL) {
        return;
    }
    if (c->token != NULL) {
        memset(c->token, 0, strlen(c->token));
    }
    if (c->key_pem != NULL) {
        memset(c->key_pem, 0, c->key_pem_len);
    }
    krc_free(c->token);
    krc_free(c->cert_pem);
    krc_free(c->key_pem);
    memset(c, 0, sizeof(*c));
}

void krc_exec_plugin_unref(struct krc_exec_plugin *p)
{
    int last;

    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->lock);
    last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (!last) {
        return;
    }
    krc_exec_creds_cleanup(&p->cached);
    free_list(p->argv);
    free_list(p->env);
    krc_free(p->origin);
    krc_free(p->describe);
    krc_free(p->api_version);
    krc_free(p->install_hint);
    krc_free(p->exec_info);
    pthread_mutex_destroy(&p->lock);
    krc_free(p);
}

void krc_exec_plugin_set_limits(struct krc_exec_plugin *p, long timeout_ms, size_t max_output)
{
    pthread_mutex_lock(&p->lock);
    p->timeout_ms = timeout_ms;
    p->max_output = max_output;
    pthread_mutex_unlock(&p->lock);
}

const char *krc_exec_plugin_describe(const struct krc_exec_plugin *p)
{
    return p->describe;
}

unsigned krc_exec_plugin_runs(struct krc_exec_plugin *p)
{
    unsigned n;

    pthread_mutex_lock(&p->lock);
    n = p->runs;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void krc_exec_plugin_invalidate(struct krc_exec_plugin *p)
{
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->stale = 1;
    pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------------- */
/* Running the plugin                                                     */

struct run_out {
    struct krc_buf out;
    struct krc_buf errb;
    int status; /* waitpid status */
    int timed_out;
    int too_big;   /* KRC_ETOOBIG: more than max_output; KRC_ENOMEM */
    int held_open; /* it exited, a process it started kept a pipe open */
};

/* What a plugin gets of krc's environment: these names and prefixes only
 * (docs/configuration.md, "What the plugin gets"), so krc's own secrets
 * (SLACK_WEBHOOK_URL, SLACK_BOT_TOKEN, KRC_*, PGPASSWORD, ...) never reach
 * it. client-go passes its whole environment; krc holds secrets kubectl
 * does not. The kubeconfig's `env` adds anything else. The list: what a
 * program needs to run (PATH, HOME, the user, locale, time zone, temporary
 * files, XDG folders), proxies and CA files for its own HTTPS requests
 * (SSL_CERT_*, and REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE that Python's requests
 * and curl read), and the credential chains of the cloud plugins: the AWS
 * CLI and aws-iam-authenticator (AWS_*: profile, region, keys, IRSA's
 * AWS_ROLE_ARN/AWS_WEB_IDENTITY_TOKEN_FILE, EKS Pod Identity's
 * AWS_CONTAINER_*), gke-gcloud-auth-plugin (GOOGLE_* such as
 * GOOGLE_APPLICATION_CREDENTIALS, gcloud's CLOUDSDK_*, GCE_METADATA_HOST)
 * and kubelogin (AZURE_* of workload identity and the Azure SDKs, AAD_*,
 * its token cache KUBECACHEDIR). */
static const char *const env_names[] = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "KUBECACHEDIR",
};
static const char *const env_prefixes[] = {"LC_",           "AWS_",   "GOOGLE_", "CLOUDSDK_",
                                           "GCE_METADATA_", "AZURE_", "AAD_"};

int krc_exec_env_allowed(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++) {
        if (strlen(env_names[i]) == len && memcmp(env_names[i], name, len) == 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof(env_prefixes) / sizeof(env_prefixes[0]); i++) {
        size_t pl = strlen(env_prefixes[i]);
        if (len > pl && memcmp(env_prefixes[i], name, pl) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The allowed part of krc's environment, minus the names the plugin's env
 * and KUBERNETES_EXEC_INFO set, then those (the kubeconfig's env wins). The
 * strings are borrowed. */
static char **build_envp(const struct krc_exec_plugin *p)
{
    size_t n = 0;
    size_t k = 0;
    char **envp;

    while (environ != NULL && environ[n] != NULL) {
        n++;
    }
    envp = krc_calloc(n + p->nenv + 2, sizeof(*envp));
    if (envp == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq != NULL ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int shadowed = eq == NULL || !krc_exec_env_allowed(environ[i], nl);

        for (size_t j = 0; j < p->nenv && !shadowed; j++) {
            shadowed = strncmp(p->env[j], environ[i], nl) == 0 && p->env[j][nl] == '=';
        }
        if (!shadowed) {
            envp[k++] = environ[i];
        }
    }
    for (size_t j = 0; j < p->nenv; j++) {
        envp[k++] = p->env[j];
    }
    envp[k++] = p->exec_info;
    envp[k] = NULL;
    return envp;
}

static int spawn_plugin(const struct krc_exec_plugin *p, char **envp, int out_w, int err_w,
                        pid_t *ret_pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    sigset_t defaults;
    int rc;

    rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0) {
        return rc;
    }
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGCHLD);
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, out_w, 1);
    }
    if (rc == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, err_w, 2);
    }
    if (rc == 0) {
        /* Its own process group, so a timeout kills its children too. */
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                 POSIX_SPAWN_SETPGROUP);
    }
    if (rc == 0) {
        rc = posix_spawnattr_setsigmask(&attr, &none);
    }
    if (rc == 0) {
        rc = posix_spawnattr_setsigdefault(&attr, &defaults);
    }
    if (rc == 0) {
        rc = posix_spawnattr_setpgroup(&attr, 0);
    }
    if (rc == 0) {
        if (strchr(p->argv[0], '/') != NULL) {
            rc = posix_spawn(ret_pid, p->argv[0], &fa, &attr, p->argv, envp);
        } else {
            rc = posix_spawnp(ret_pid, p->argv[0], &fa, &attr, p->argv, envp);
        }
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* Read fd into b; a full buffer (or no memory) sets *full to the code and
 * stops keeping bytes (they are still read so the plugin does not block).
 * Returns 1 at EOF. */
static int drain(int fd, struct krc_buf *b, int *full)
{
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof(chunk));

    if (n < 0) {
        return errno == EINTR || errno == EAGAIN ? 0 : 1;
    }
    if (n == 0) {
        return 1;
    }
    if (*full == 0) {
        int rc = krc_buf_append(b, chunk, (size_t)n);
        *full = rc < 0 ? rc : 0;
    }
    return 0;
}

/* 1 when the child has exited; it stays a zombie (WNOWAIT), so its pid
 * and process group id cannot be reused before it is reaped. */
static int child_exited(pid_t pid)
{
    siginfo_t si;

    memset(&si, 0, sizeof(si));
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* After the plugin was reaped: reap what is left of its process group when
 * those processes became krc's children (krc is PID 1 in its container, or
 * a subreaper), for up to EXIT_GRACE_MS; anything else is init's. */
static void reap_group(pid_t pgid)
{
    int64_t until = krc_clock_mono_ms() + EXIT_GRACE_MS;

    for (;;) {
        int status;
        pid_t got = waitpid(-pgid, &status, WNOHANG);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 || krc_clock_mono_ms() >= until) {
            return; /* ECHILD: none of the group is ours */
        }
        if (got == 0) {
            krc_clock_sleep_ms(5, NULL);
        }
    }
}

/* Collect stdout and stderr until both close, the deadline passes or
 * stdout grows past the cap; then reap the child. A plugin that exits
 * while a process it started still holds its stdout or stderr open (a
 * background helper) is not waited for: what it printed before it exited
 * is read for EXIT_GRACE_MS more, then the rest of its process group is
 * killed and the output used as it is. */
static void collect(pid_t pid, int out_r, int err_r, long timeout_ms, struct run_out *r)
{
    int64_t deadline = krc_clock_mono_ms() + timeout_ms;
    int64_t grace_end = 0; /* set when the plugin has exited */
    int out_open = 1;
    int err_open = 1;
    int err_full = 0;

    while ((out_open || err_open) && !r->too_big) {
        struct pollfd fds[2];
        nfds_t nf = 0;
        int64_t now = krc_clock_mono_ms();
        int64_t until;
        int n;

        if (grace_end == 0 && child_exited(pid)) {
            grace_end = now + EXIT_GRACE_MS;
        }
        if (grace_end != 0 && now >= grace_end) {
            r->held_open = 1;
            break;
        }
        if (now >= deadline) {
            r->timed_out = 1;
            break;
        }
        /* while it runs, look for its exit every EXIT_POLL_MS */
        until = grace_end != 0 ? grace_end : now + EXIT_POLL_MS;
        until = until < deadline ? until : deadline;
        if (out_open) {
            fds[nf++] = (struct pollfd){.fd = out_r, .events = POLLIN};
        }
        if (err_open) {
            fds[nf++] = (struct pollfd){.fd = err_r, .events = POLLIN};
        }
        n = poll(fds, nf, (int)(until - now));
        if (n <= 0) {
            continue;
        }
        for (nfds_t i = 0; i < nf; i++) {
            if (fds[i].revents == 0) {
                continue;
            }
            if (fds[i].fd == out_r && drain(out_r, &r->out, &r->too_big)) {
                out_open = 0;
            } else if (fds[i].fd == err_r && drain(err_r, &r->errb, &err_full)) {
                err_open = 0;
            }
        }
    }
    if (r->timed_out || r->too_big || r->held_open) {
        /* the plugin is still a zombie here, or alive: its group id is its own */
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {
    }
    if (r->timed_out || r->too_big || r->held_open) {
        reap_group(pid);
    }
}

/* s[0..len) with the secrets krc's built-in patterns find replaced
 * (krc_redact_apply: bearer tokens, JWTs, cloud keys, Slack tokens and
 * webhook paths, URL passwords, password=... pairs), into out (cut to its
 * maximum; "" when there is no memory). */
static void redacted(const char *s, size_t len, struct krc_buf *out)
{
    struct krc_error err;

    krc_buf_reset(out);
    if (krc_redact_apply(NULL, s, len, out, &err) == KRC_ENOMEM) {
        krc_buf_reset(out);
    }
}

/* The first non-empty line of stderr, redacted, at most outsz-1 bytes,
 * control characters replaced. */
static void first_line(const struct krc_buf *b, char *out, size_t outsz)
{
    const char *s = b->data != NULL ? b->data : "";
    size_t len = b->len;
    size_t i = 0;
    size_t end;
    size_t o = 0;
    struct krc_buf red;

    while (i < len && (s[i] == '\n' || s[i] == '\r' || s[i] == ' ')) {
        i++;
    }
    end = i;
    while (end < len && s[end] != '\n') {
        end++;
    }
    krc_buf_init(&red, STDERR_MAX * 4);
    redacted(s + i, end - i, &red);
    for (const char *c = krc_buf_str(&red); *c != '\0' && o + 1 < outsz; c++) {
        out[o++] = (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c;
    }
    krc_buf_cleanup(&red);
    while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '\r')) {
        o--;
    }
    out[o] = '\0';
}

/* Every line of the plugin's stderr to the log, redacted: by the built-in
 * patterns here, and by the log's registered secrets (the webhook URL, the
 * bot token, the new token: registered before this runs). */
static void log_stderr(const struct krc_exec_plugin *p, const struct krc_buf *b)
{
    const char *s = b->data;
    size_t len = b->len;
    struct krc_buf red;

    krc_buf_init(&red, STDERR_MAX * 4); /* room for the marks: cut below, once redacted */
    while (s != NULL && len > 0) {
        const char *nl = memchr(s, '\n', len);
        size_t ll = nl != NULL ? (size_t)(nl - s) : len;

        if (ll > 0 && !(ll == 1 && s[0] == '\r')) {
            redacted(s, ll, &red);
            KRC_INFO("%s: stderr: %.*s", p->describe, (int)(red.len > 4000 ? 4000 : red.len),
                     krc_buf_str(&red));
        }
        if (nl == NULL) {
            break;
        }
        len -= ll + 1;
        s = nl + 1;
    }
    krc_buf_cleanup(&red);
}

static int spawn_error(const struct krc_exec_plugin *p, int e, struct krc_error *err)
{
    char ebuf[128];

    if (e == ENOENT) {
        return krc_error_set(
            err, KRC_ENOTFOUND, "%s: exec credential plugin \"%s\" not found (%s); %s", p->origin,
            p->argv[0], strchr(p->argv[0], '/') != NULL ? "no such file" : "not in $PATH",
            p->install_hint != NULL ? p->install_hint
                                    : "install it, or fix exec.command in the kubeconfig");
    }
    return krc_error_set(err, KRC_EIO, "%s: cannot run exec credential plugin \"%s\": %s",
                         p->origin, p->argv[0], krc_errno_str(e, ebuf, sizeof(ebuf)));
}

/* Run the plugin once; r holds its output and exit status. */
static int run_plugin(struct krc_exec_plugin *p, struct run_out *r, struct krc_error *err)
{
    char ebuf[128];
    int out_p[2] = {-1, -1};
    int err_p[2] = {-1, -1};
    char **envp;
    pid_t pid;
    int rc;

    envp = build_envp(p);
    if (envp == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "%s: out of memory", p->origin);
    }
    if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0) {
        int e = errno;
        rc = krc_error_set(err, KRC_EIO, "%s: cannot create a pipe for the exec plugin: %s",
                           p->origin, krc_errno_str(e, ebuf, sizeof(ebuf)));
        goto out;
    }
    p->runs++;
    rc = spawn_plugin(p, envp, out_p[1], err_p[1], &pid);
    close(out_p[1]);
    close(err_p[1]);
    out_p[1] = err_p[1] = -1;
    if (rc != 0) {
        rc = spawn_error(p, rc, err);
        goto out;
    }
    KRC_DEBUG("%s: started (pid %ld)", p->describe, (long)pid);
    collect(pid, out_p[0], err_p[0], p->timeout_ms, r);
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        if (out_p[i] >= 0) {
            close(out_p[i]);
        }
        if (err_p[i] >= 0) {
            close(err_p[i]);
        }
    }
    krc_free(envp);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Reading the ExecCredential                                             */

static int bad_byte(const char *t)
{
    for (const char *c = t; *c != '\0'; c++) {
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f) {
            return 1;
        }
    }
    return 0;
}

/* Optional string member: *ret NULL when absent or null. */
static int str_member(const struct krc_exec_plugin *p, const cJSON *obj, const char *key,
                      const char **ret, struct krc_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    *ret = NULL;
    if (v == NULL || cJSON_IsNull(v)) {
        return 0;
    }
    if (!cJSON_IsString(v)) {
        return krc_error_set(err, KRC_EPARSE, "%s: exec plugin %s printed %s that is not a string",
                             p->origin, p->argv[0], key);
    }
    *ret = v->valuestring[0] != '\0' ? v->valuestring : NULL;
    return 0;
}

static int check_header(const struct krc_exec_plugin *p, const cJSON *root, struct krc_error *err)
{
    const char *api = NULL;
    const char *kind = NULL;
    int rc = str_member(p, root, "apiVersion", &api, err);

    if (rc == 0) {
        rc = str_member(p, root, "kind", &kind, err);
    }
    if (rc < 0) {
        return rc;
    }
    if (kind == NULL || strcmp(kind, "ExecCredential") != 0) {
        return krc_error_set(err, KRC_EPARSE,
                             "%s: exec plugin %s printed kind \"%.64s\", expected "
                             "\"ExecCredential\"",
                             p->origin, p->argv[0], kind != NULL ? kind : "");
    }
    if (api == NULL || strcmp(api, p->api_version) != 0) {
        return krc_error_set(err, KRC_EPARSE,
                             "%s: exec plugin %s printed apiVersion \"%.64s\", but the kubeconfig "
                             "asks for \"%s\" (exec.apiVersion)",
                             p->origin, p->argv[0], api != NULL ? api : "", p->api_version);
    }
    return 0;
}

static int fill_creds(const struct krc_exec_plugin *p, const char *token, const char *cert,
                      const char *key, const char *expiry, struct krc_exec_creds *c,
                      struct krc_error *err)
{
    if (expiry != NULL && krc_parse_rfc3339(expiry, strlen(expiry), &c->expires) < 0) {
        return krc_error_set(err, KRC_EPARSE,
                             "%s: exec plugin %s printed expirationTimestamp \"%.64s\", which is "
                             "not an RFC 3339 time",
                             p->origin, p->argv[0], expiry);
    }
    if (token != NULL) {
        if (bad_byte(token)) {
            return krc_error_set(err, KRC_EPARSE,
                                 "%s: exec plugin %s printed a token with whitespace or a control "
                                 "character",
                                 p->origin, p->argv[0]);
        }
        c->token = krc_strdup(token);
        if (c->token == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "%s: out of memory", p->origin);
        }
    }
    if (cert != NULL && key != NULL) { /* the caller refused one without the other */
        c->cert_pem = (unsigned char *)krc_strdup(cert);
        c->key_pem = (unsigned char *)krc_strdup(key);
        if (c->cert_pem == NULL || c->key_pem == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "%s: out of memory", p->origin);
        }
        c->cert_pem_len = strlen(cert);
        c->key_pem_len = strlen(key);
    }
    return 0;
}

static int parse_credential(const struct krc_exec_plugin *p, const struct krc_buf *out,
                            struct krc_exec_creds *c, struct krc_error *err)
{
    const char *token = NULL;
    const char *cert = NULL;
    const char *key = NULL;
    const char *expiry = NULL;
    const cJSON *status;
    cJSON *root;
    int rc;

    root = cJSON_ParseWithLength(out->data != NULL ? out->data : "", out->len);
    if (root == NULL || !cJSON_IsObject(root)) {
        /* The output is not quoted: it could be a bare token. */
        cJSON_Delete(root);
        return krc_error_set(err, KRC_EPARSE,
                             "%s: exec plugin %s printed %zu bytes that are not an "
                             "ExecCredential JSON object",
                             p->origin, p->argv[0], out->len);
    }
    rc = check_header(p, root, err);
    status = cJSON_GetObjectItemCaseSensitive(root, "status");
    if (rc == 0 && !cJSON_IsObject(status)) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "%s: exec plugin %s printed an ExecCredential "
                           "without status",
                           p->origin, p->argv[0]);
    }
    if (rc == 0) {
        rc = str_member(p, status, "token", &token, err);
    }
    if (rc == 0) {
        rc = str_member(p, status, "clientCertificateData", &cert, err);
    }
    if (rc == 0) {
        rc = str_member(p, status, "clientKeyData", &key, err);
    }
    if (rc == 0) {
        rc = str_member(p, status, "expirationTimestamp", &expiry, err);
    }
    if (rc == 0 && (cert == NULL) != (key == NULL)) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "%s: exec plugin %s printed only %s; clientCertificateData and "
                           "clientKeyData go together",
                           p->origin, p->argv[0],
                           cert != NULL ? "clientCertificateData" : "clientKeyData");
    }
    if (rc == 0 && token == NULL && cert == NULL) {
        rc = krc_error_set(err, KRC_EPARSE,
                           "%s: exec plugin %s printed an ExecCredential with neither a token "
                           "nor clientCertificateData/clientKeyData",
                           p->origin, p->argv[0]);
    }
    if (rc == 0) {
        rc = fill_creds(p, token, cert, key, expiry, c, err);
    }
    cJSON_Delete(root);
    return rc;
}

static int exit_error(const struct krc_exec_plugin *p, const struct run_out *r,
                      struct krc_error *err)
{
    char line[512];

    first_line(&r->errb, line, sizeof(line));
    if (r->timed_out) {
        return krc_error_set(err, KRC_ETIMEOUT,
                             "%s: exec plugin %s did not finish within %ld ms and was killed%s%s",
                             p->origin, p->argv[0], p->timeout_ms, line[0] ? ": " : "", line);
    }
    if (r->too_big == KRC_ENOMEM) {
        return krc_error_set(err, KRC_ENOMEM, "%s: out of memory reading exec plugin %s", p->origin,
                             p->argv[0]);
    }
    if (r->too_big) {
        return krc_error_set(err, KRC_ETOOBIG,
                             "%s: exec plugin %s printed more than %zu bytes and was killed",
                             p->origin, p->argv[0], p->max_output);
    }
    if (WIFSIGNALED(r->status)) {
        return krc_error_set(err, KRC_EIO, "%s: exec plugin %s was killed by signal %d%s%s",
                             p->origin, p->argv[0], WTERMSIG(r->status), line[0] ? ": " : "", line);
    }
    return krc_error_set(err, KRC_EIO, "%s: exec plugin %s failed with exit status %d%s%s",
                         p->origin, p->argv[0], WEXITSTATUS(r->status),
                         line[0] ? ": " : " and printed nothing on stderr", line);
}

static int copy_creds(const struct krc_exec_creds *from, struct krc_exec_creds *to)
{
    memset(to, 0, sizeof(*to));
    to->expires = from->expires;
    to->generation = from->generation;
    if (from->token != NULL && (to->token = krc_strdup(from->token)) == NULL) {
        return KRC_ENOMEM;
    }
    if (from->cert_pem != NULL) {
        to->cert_pem =
            (unsigned char *)krc_strndup((const char *)from->cert_pem, from->cert_pem_len);
        to->key_pem = (unsigned char *)krc_strndup((const char *)from->key_pem, from->key_pem_len);
        if (to->cert_pem == NULL || to->key_pem == NULL) {
            krc_exec_creds_cleanup(to);
            return KRC_ENOMEM;
        }
        to->cert_pem_len = from->cert_pem_len;
        to->key_pem_len = from->key_pem_len;
    }
    return 0;
}

/* Under p->lock: run the plugin and replace the cache. */
static int refresh(struct krc_exec_plugin *p, struct krc_error *err)
{
    struct run_out r;
    struct krc_exec_creds fresh;
    int rc;

    memset(&r, 0, sizeof(r));
    memset(&fresh, 0, sizeof(fresh));
    krc_buf_init(&r.out, p->max_output);
    krc_buf_init(&r.errb, STDERR_MAX);
    rc = run_plugin(p, &r, err);
    if (rc == 0 && r.held_open) {
        KRC_INFO("%s: exited, but a process it started kept its output open; krc stopped reading "
                 "%d ms later and killed what was left of its process group",
                 p->describe, EXIT_GRACE_MS);
    }
    if (rc == 0 &&
        (r.timed_out || r.too_big || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)) {
        rc = exit_error(p, &r, err);
    } else if (rc == 0) {
        rc = parse_credential(p, &r.out, &fresh, err);
    }
    if (rc == 0) {
        krc_log_add_secret(fresh.token);
    }
    log_stderr(p, &r.errb);
    if (r.out.data != NULL) {
        memset(r.out.data, 0, r.out.len);
    }
    krc_buf_cleanup(&r.out);
    krc_buf_cleanup(&r.errb);
    if (rc < 0) {
        krc_exec_creds_cleanup(&fresh);
        return rc;
    }
    fresh.generation = p->cached.generation + 1;
    krc_exec_creds_cleanup(&p->cached);
    p->cached = fresh;
    p->have = 1;
    p->stale = 0;
    KRC_DEBUG("%s: new %s%s", p->describe, fresh.token != NULL ? "token" : "client certificate",
              fresh.expires != 0 ? " with an expiry" : "");
    return 0;
}

int krc_exec_plugin_get(struct krc_exec_plugin *p, struct krc_exec_creds *ret,
                        struct krc_error *err)
{
    int rc = 0;

    memset(ret, 0, sizeof(*ret));
    pthread_mutex_lock(&p->lock);
    if (!p->have || p->stale || (p->cached.expires != 0 && krc_clock_now() >= p->cached.expires)) {
        rc = refresh(p, err);
    }
    if (rc == 0 && copy_creds(&p->cached, ret) < 0) {
        rc = krc_error_set(err, KRC_ENOMEM, "%s: out of memory", p->origin);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}
