#include "krc/config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <regex.h>
#include <yaml.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"
#include "krc/util/yaml_doc.h"

#define OFF(field) offsetof(struct krc_config, field)

static const struct krc_config_option options[] = {
    {"clusterName", "CLUSTER_NAME", "cluster-name", KRC_CONFIG_STRING, OFF(cluster_name), "", 0, 0,
     NULL, "Cluster name shown in alerts"},
    {"watchedNamespaces", "WATCHED_NAMESPACES", "watched-namespaces", KRC_CONFIG_STRING,
     OFF(watched_namespaces), "", 0, 0, NULL,
     "Comma-separated namespaces (names or regexes) to watch; empty: all"},
    {"ignoredNamespaces", "IGNORED_NAMESPACES", "ignored-namespaces", KRC_CONFIG_STRING,
     OFF(ignored_namespaces), "", 0, 0, NULL,
     "Comma-separated namespaces (names or regexes) to ignore"},
    {"watchedPodNamePrefixes", "WATCHED_POD_NAME_PREFIXES", "watched-pod-name-prefixes",
     KRC_CONFIG_STRING, OFF(watched_pod_name_prefixes), "", 0, 0, NULL,
     "Comma-separated pod name prefixes (or regexes) to watch; empty: all"},
    {"ignoredPodNamePrefixes", "IGNORED_POD_NAME_PREFIXES", "ignored-pod-name-prefixes",
     KRC_CONFIG_STRING, OFF(ignored_pod_name_prefixes), "", 0, 0, NULL,
     "Comma-separated pod name prefixes (or regexes) to ignore"},
    {"ignoreRestartCount", "IGNORE_RESTART_COUNT", "ignore-restart-count", KRC_CONFIG_INT,
     OFF(ignore_restart_count), "30", 0, 1000000000, NULL,
     "Skip pods whose total restart count exceeds this"},
    {"ignoreRestartsWithExitCodeZero", "IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO",
     "ignore-restarts-with-exit-code-zero", KRC_CONFIG_BOOL,
     OFF(ignore_restarts_with_exit_code_zero), "false", 0, 0, NULL,
     "Skip restarts whose previous container exited with code 0"},
    {"labelSelector", "KRC_LABEL_SELECTOR", "label-selector", KRC_CONFIG_STRING,
     OFF(label_selector), "", 0, 0, NULL, "Kubernetes label selector applied server-side"},
    {"slackWebhookUrl", "SLACK_WEBHOOK_URL", NULL, KRC_CONFIG_SECRET, OFF(slack_webhook_url), "", 0,
     0, NULL, "Slack incoming webhook URL (secret)"},
    {"slackChannel", "SLACK_CHANNEL", "slack-channel", KRC_CONFIG_STRING, OFF(slack_channel), "", 0,
     0, NULL, "Default Slack channel (legacy webhooks and Web API)"},
    {"slackUsername", "SLACK_USERNAME", "slack-username", KRC_CONFIG_STRING, OFF(slack_username),
     "", 0, 0, NULL, "Slack user name (legacy webhooks)"},
    {"muteSeconds", "MUTE_SECONDS", "mute-seconds", KRC_CONFIG_INT, OFF(mute_seconds), "600", 0,
     31536000, NULL, "Mute further alerts of the same pod for this many seconds"},
    {"listen", "KRC_LISTEN", "listen", KRC_CONFIG_STRING, OFF(listen), "0.0.0.0:8080", 0, 0, NULL,
     "Address of /healthz, /readyz and /metrics (HOST:PORT; \"off\" disables it)"},
    {"mcpTokenFile", "KRC_MCP_TOKEN_FILE", "mcp-token-file", KRC_CONFIG_STRING, OFF(mcp_token_file),
     "", 0, 0, NULL,
     "File holding the bearer token MCP clients send to /mcp on the listen address (read at "
     "start); empty: no /mcp (docs/mcp.md)"},
    {"mcpNamespaces", "KRC_MCP_NAMESPACES", "mcp-namespaces", KRC_CONFIG_STRING,
     OFF(mcp_namespaces), "", 0, 0, NULL,
     "Comma-separated namespaces (names or regexes) MCP may answer about, within what krc "
     "watches; empty: all it watches (docs/mcp.md)"},
    {"db", "KRC_DB", "db", KRC_CONFIG_STRING, OFF(db), "", 0, 0, NULL,
     "History database: a SQLite file (default /var/lib/krc/krc.db in a cluster, else "
     "~/.local/state/krc/krc.db) or a PostgreSQL URL postgres://USER@HOST[:PORT]/DATABASE shared "
     "by replicas and clusters (password in dbPasswordFile)"},
    {"dbPasswordFile", "KRC_DB_PASSWORD_FILE", "db-password-file", KRC_CONFIG_STRING,
     OFF(db_password_file), "", 0, 0, NULL,
     "File whose first line is the PostgreSQL password (a mounted Secret; read at start and at "
     "every reconnection, never logged); empty: the URL's or libpq's own"},
    {"historyMaxAge", "KRC_HISTORY_MAX_AGE", "history-max-age", KRC_CONFIG_DURATION,
     OFF(history_max_age_s), "30d", 3600, 315360000, NULL,
     "Restarts older than this are pruned from the history"},
    {"historyMaxRows", "KRC_HISTORY_MAX_ROWS", "history-max-rows", KRC_CONFIG_INT,
     OFF(history_max_rows), "50000", 100, 100000000, NULL,
     "At most this many restarts are kept (about 16 KB each)"},
    {"slackBotToken", "SLACK_BOT_TOKEN", NULL, KRC_CONFIG_SECRET, OFF(slack_bot_token), "", 0, 0,
     NULL, "Slack bot token (xoxb-...): Web API mode with threads, log files, recovered replies"},
    {"slackApiUrl", "KRC_SLACK_API_URL", "slack-api-url", KRC_CONFIG_STRING, OFF(slack_api_url),
     "https://slack.com/api", 0, 0, NULL, "Slack Web API base URL"},
    {"slackIcon", "SLACK_ICON", "slack-icon", KRC_CONFIG_STRING, OFF(slack_icon), "", 0, 0, NULL,
     "Icon (:emoji: or URL) for legacy webhooks"},
    {"stormThreshold", "KRC_STORM_THRESHOLD", "storm-threshold", KRC_CONFIG_INT,
     OFF(storm_threshold), "5", 0, 100000, NULL,
     "More restarts than this within stormWindow for one destination start an alert storm: "
     "further restarts are grouped into one summary (0: off)"},
    {"stormWindow", "KRC_STORM_WINDOW", "storm-window", KRC_CONFIG_DURATION, OFF(storm_window_s),
     "30s", 1, 86400, NULL, "Sliding window of the storm guard, and the interval of summaries"},
    {"stormSummaryDelay", "KRC_STORM_SUMMARY_DELAY", "storm-summary-delay", KRC_CONFIG_DURATION,
     OFF(storm_summary_delay_s), "10s", 0, 3600, NULL,
     "The first storm summary is posted this long after the storm starts"},
    {"recoveredAfter", "KRC_RECOVERED_AFTER", "recovered-after", KRC_CONFIG_DURATION,
     OFF(recovered_after_s), "10m", 0, 604800, NULL,
     "Web API: reply \"recovered\" once the container ran ready this long (0: off)"},
    {"logTailLines", "KRC_LOG_TAIL_LINES", "log-tail-lines", KRC_CONFIG_INT, OFF(log_tail_lines),
     "50", 1, 100000, NULL, "Previous-log lines fetched and shown"},
    {"logLimitBytes", "KRC_LOG_LIMIT_BYTES", "log-limit-bytes", KRC_CONFIG_INT,
     OFF(log_limit_bytes), "65536", 1024, 67108864, NULL,
     "Previous-log bytes kept: the end of the last logTailLines lines (at most 8 MiB are kept)"},
    {"logTransferLimitBytes", "KRC_LOG_TRANSFER_LIMIT_BYTES", "log-transfer-limit-bytes",
     KRC_CONFIG_INT, OFF(log_transfer_limit_bytes), "4194304", 1024, 1073741824, NULL,
     "Previous-log bytes read at most (raised to logLimitBytes when lower): a window of "
     "logTailLines lines longer than this is not read to its end"},
    {"workers", "KRC_WORKERS", "workers", KRC_CONFIG_INT, OFF(workers), "1", 1, 64, NULL,
     "Restarts collected in parallel (each further worker: own connections and "
     "database handle, ~0.4 MiB)"},
    {"redactPatterns", "KRC_REDACT_PATTERNS", NULL, KRC_CONFIG_LIST, OFF(redact_patterns), "", 0, 0,
     NULL,
     "Extra regular expressions redacted, after the built-in rules, from every text taken from the "
     "cluster and from the diagnosis (list)"},
    {"logIgnorePatterns", "KRC_LOG_IGNORE_PATTERNS", NULL, KRC_CONFIG_LIST,
     OFF(log_ignore_patterns), "", 0, 0, NULL,
     "Regular expressions: a restart whose previous log matches is recorded, not alerted (list)"},
    {"routes", NULL, NULL, KRC_CONFIG_ROUTES, OFF(routes), "", 0, 0, NULL,
     "Routes: [{namespace, pod, container, webhookUrl | webhookUrlEnv, channel, destinations: "
     "[names]}], first match wins"},
    {"destinations", NULL, NULL, KRC_CONFIG_DESTINATIONS, OFF(destinations), "", 0, 0, NULL,
     "Destinations besides Slack: [{name, type: slack-webhook | slack-api | pagerduty | teams | "
     "google-chat | webhook | kubernetes-event, ...}] (docs/destinations.md)"},
    {"silences", NULL, NULL, KRC_CONFIG_SILENCES, OFF(silences), "", 0, 0, NULL,
     "Silences: [{namespace, pod, container, start, end, daily: \"22:00-06:00\", reason}]"},
    {"kubernetesEvents", "KRC_KUBERNETES_EVENTS", "kubernetes-events", KRC_CONFIG_BOOL,
     OFF(kubernetes_events), "true", 0, 0, NULL,
     "Also write an events.k8s.io/v1 Event (Warning, RestartDiagnosed) on the restarted pod, "
     "shown by kubectl describe pod (needs create on events.k8s.io events)"},
    {"startupWindow", "KRC_STARTUP_WINDOW", "startup-window", KRC_CONFIG_DURATION,
     OFF(startup_window_s), "10m", 0, 604800, NULL,
     "At start-up, report restarts that finished this recently"},
    {"watchIdleTimeout", "KRC_WATCH_IDLE_TIMEOUT", "watch-idle-timeout", KRC_CONFIG_DURATION,
     OFF(watch_idle_timeout_s), "3m", 1, 86400, NULL,
     "Drop and resume a watch stream silent (no event, no bookmark) for this long"},
    {"watchBookmarkInterval", "KRC_WATCH_BOOKMARK_INTERVAL", "watch-bookmark-interval",
     KRC_CONFIG_DURATION, OFF(watch_bookmark_interval_s), "1m", 1, 3600, NULL,
     "How often the API server sends a watch bookmark (Kubernetes: about every minute); /readyz "
     "is 503 while a watch has delivered no event or bookmark for twice this"},
    {"listPageSize", "KRC_LIST_PAGE_SIZE", "list-page-size", KRC_CONFIG_INT, OFF(list_page_size),
     "500", 1, 100000, NULL, "Page size (limit) of pod LIST requests"},
    {"streamingList", "KRC_STREAMING_LIST", "streaming-list", KRC_CONFIG_BOOL, OFF(streaming_list),
     "true", 0, 0, NULL, "Try a streaming list (sendInitialEvents) before paginated LIST"},
    {"leaderElect", "KRC_LEADER_ELECT", "leader-elect", KRC_CONFIG_BOOL, OFF(leader_elect), "false",
     0, 0, NULL,
     "Elect a leader among replicas with a coordination.k8s.io/v1 Lease; only the leader "
     "watches and alerts"},
    {"leaseNamespace", "KRC_LEASE_NAMESPACE", "lease-namespace", KRC_CONFIG_STRING,
     OFF(lease_namespace), "", 0, 0, NULL,
     "Namespace of the Lease (default: the pod's namespace, from POD_NAMESPACE or the service "
     "account)"},
    {"leaseName", "KRC_LEASE_NAME", "lease-name", KRC_CONFIG_STRING, OFF(lease_name), "krc", 0, 0,
     NULL, "Name of the Lease"},
    {"leaseDuration", "KRC_LEASE_DURATION", "lease-duration", KRC_CONFIG_DURATION,
     OFF(lease_duration_s), "15s", 2, 3600, NULL,
     "A standby takes over when the leader has not renewed the Lease for this long"},
    {"leaseRenewDeadline", "KRC_LEASE_RENEW_DEADLINE", "lease-renew-deadline", KRC_CONFIG_DURATION,
     OFF(lease_renew_deadline_s), "10s", 1, 3600, NULL,
     "The leader gives up (and exits) when it could not renew for this long; less than "
     "leaseDuration"},
    {"leaseRetryPeriod", "KRC_LEASE_RETRY_PERIOD", "lease-retry-period", KRC_CONFIG_DURATION,
     OFF(lease_retry_period_s), "2s", 1, 600, NULL,
     "Interval of Lease renewals and of a standby's acquisition attempts; less than "
     "leaseRenewDeadline"},
    {"logLevel", "KRC_LOG_LEVEL", "log-level", KRC_CONFIG_STRING, OFF(log_level), "info", 0, 0,
     "debug|info|warn|error", "Log level"},
    {"logFormat", "KRC_LOG_FORMAT", "log-format", KRC_CONFIG_STRING, OFF(log_format), "text", 0, 0,
     "text|json", "Log format: text or JSON lines"},
    {NULL, NULL, NULL, KRC_CONFIG_STRING, 0, NULL, 0, 0, NULL, NULL},
};

const struct krc_config_option *krc_config_options(void)
{
    return options;
}

int krc_config_parse_duration(const char *s, long *ret_seconds)
{
    return krc_parse_duration(s, ret_seconds);
}

static int parse_bool(const char *v, int *ret)
{
    if (strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0 ||
        strcasecmp(v, "on") == 0) {
        *ret = 1;
        return 0;
    }
    if (strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 || strcmp(v, "0") == 0 ||
        strcasecmp(v, "off") == 0 || *v == '\0') {
        *ret = 0;
        return 0;
    }
    return KRC_EINVAL;
}

static int allowed_value(const char *allowed, const char *v)
{
    size_t n = strlen(v);
    const char *p = allowed;
    while (p != NULL && *p != '\0') {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (l == n && strncasecmp(p, v, n) == 0) {
            return 1;
        }
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* --- "did you mean" -------------------------------------------------------- */

#define SUGGEST_MAX_LEN 63

/* Optimal-string-alignment distance between a and b[0..blen), ignoring
 * case; SUGGEST_MAX_LEN + 1 for words longer than that. */
static size_t edit_distance(const char *a, const char *b, size_t blen)
{
    size_t alen = strlen(a);
    size_t d[SUGGEST_MAX_LEN + 2][SUGGEST_MAX_LEN + 2];

    if (alen > SUGGEST_MAX_LEN || blen > SUGGEST_MAX_LEN) {
        return SUGGEST_MAX_LEN + 1;
    }
    for (size_t i = 0; i <= alen; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= blen; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= alen; i++) {
        for (size_t j = 1; j <= blen; j++) {
            int ca = tolower((unsigned char)a[i - 1]);
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (ca != cb);

            if (d[i - 1][j] + 1 < best) {
                best = d[i - 1][j] + 1;
            }
            if (d[i][j - 1] + 1 < best) {
                best = d[i][j - 1] + 1;
            }
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[alen][blen];
}

struct suggestion {
    const char *word;
    const char *best;
    size_t best_len;
    size_t best_d;
};

static void suggest_init(struct suggestion *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->best_len = 0;
    s->best_d = SUGGEST_MAX_LEN + 1;
}

static void suggest_consider(struct suggestion *s, const char *cand, size_t len)
{
    size_t d = edit_distance(s->word, cand, len);
    size_t wl = strlen(s->word);
    /* Close enough to be a typo: 1 edit for short words, up to 3 for long ones. */
    size_t limit = wl / 4 < 1 ? 1 : wl / 4 > 3 ? 3 : wl / 4;

    if (d <= limit && d < s->best_d) {
        s->best = cand;
        s->best_len = len;
        s->best_d = d;
    }
}

/* " (did you mean \"clusterName\"?)" for a file key, or "" (static storage per call site). */
static const char *suggest_key(const char *word, char *out, size_t outsz)
{
    struct suggestion s;

    suggest_init(&s, word);
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        suggest_consider(&s, o->key, strlen(o->key));
    }
    out[0] = '\0';
    if (s.best != NULL) {
        snprintf(out, outsz, " (did you mean \"%.*s\"?)", (int)s.best_len, s.best);
    }
    return out;
}

/* Same for a key of a route or silence, from its "a|b|c" list. */
static const char *suggest_allowed(const char *word, const char *allowed, char *out, size_t outsz)
{
    struct suggestion s;

    suggest_init(&s, word);
    for (const char *p = allowed; p != NULL && *p != '\0';) {
        const char *bar = strchr(p, '|');
        size_t l = bar != NULL ? (size_t)(bar - p) : strlen(p);
        suggest_consider(&s, p, l);
        p = bar != NULL ? bar + 1 : NULL;
    }
    out[0] = '\0';
    if (s.best != NULL) {
        snprintf(out, outsz, "did you mean \"%.*s\"? ", (int)s.best_len, s.best);
    }
    return out;
}

/* "fooBarBaz" -> "foo-bar-baz" */
static void dashed(const char *key, char *out, size_t outsz)
{
    size_t o = 0;

    for (const char *k = key; *k != '\0' && o + 2 < outsz; k++) {
        if (isupper((unsigned char)*k)) {
            out[o++] = '-';
            out[o++] = (char)tolower((unsigned char)*k);
        } else {
            out[o++] = *k;
        }
    }
    out[o] = '\0';
}

/* For an unknown --flag: the nearest flag, or how to set an option that
 * has no flag (secrets, lists, routes). */
static void suggest_flag(const char *word, char *out, size_t outsz)
{
    static const char *const extra[] = {"kubeconfig", "context", "config"};
    struct suggestion s;
    char d[128];

    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        dashed(o->key, d, sizeof(d));
        if (o->flag == NULL && strcasecmp(d, word) == 0) {
            if (o->env != NULL) {
                snprintf(out, outsz,
                         "; %s has no flag: set the environment variable %s or the key "
                         "%s in the --config file",
                         o->key, o->env, o->key);
            } else {
                snprintf(out, outsz, "; %s has no flag: set it in the --config file", o->key);
            }
            return;
        }
    }
    suggest_init(&s, word);
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        if (o->flag != NULL) {
            suggest_consider(&s, o->flag, strlen(o->flag));
        }
    }
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
        suggest_consider(&s, extra[i], strlen(extra[i]));
    }
    out[0] = '\0';
    if (s.best != NULL) {
        snprintf(out, outsz, "; did you mean --%.*s?", (int)s.best_len, s.best);
    }
}

/* Set one option from text; `where` names the source for messages. */
static int set_value(struct krc_config *cfg, const struct krc_config_option *o, const char *v,
                     const char *where, struct krc_error *err)
{
    char *base = (char *)cfg;

    switch (o->type) {
    case KRC_CONFIG_ROUTES:
    case KRC_CONFIG_SILENCES:
    case KRC_CONFIG_DESTINATIONS:
        if (*v == '\0') {
            return 0;
        }
        return krc_error_set(err, KRC_EINVAL, "%s: %s can only be set in the configuration file",
                             where, o->key);
    case KRC_CONFIG_STRING:
    case KRC_CONFIG_LIST:
    case KRC_CONFIG_SECRET: {
        char **dst = (char **)(base + o->offset);
        char *copy;
        if (o->allowed != NULL && !allowed_value(o->allowed, v)) {
            return krc_error_set(err, KRC_EINVAL, "%s: %s must be one of %s, not \"%s\"", where,
                                 o->key, o->allowed, v);
        }
        copy = krc_strdup(v);
        if (copy == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        krc_free(*dst);
        *dst = copy;
        return 0;
    }
    case KRC_CONFIG_INT: {
        char *end;
        long n;
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || n < o->min || n > o->max) {
            return krc_error_set(err, KRC_EINVAL,
                                 "%s: %s must be a whole number from %ld to %ld, not \"%s\"", where,
                                 o->key, o->min, o->max, v);
        }
        *(long *)(base + o->offset) = n;
        return 0;
    }
    case KRC_CONFIG_DURATION: {
        long n;
        if (krc_config_parse_duration(v, &n) < 0 || n < o->min || n > o->max) {
            return krc_error_set(err, KRC_EINVAL,
                                 "%s: %s must be a duration (e.g. 90s, 10m, 1h) from %lds to "
                                 "%lds, not \"%s\"",
                                 where, o->key, o->min, o->max, v);
        }
        *(long *)(base + o->offset) = n;
        return 0;
    }
    case KRC_CONFIG_BOOL: {
        int b;
        if (parse_bool(v, &b) < 0) {
            return krc_error_set(err, KRC_EINVAL, "%s: %s must be true or false, not \"%s\"", where,
                                 o->key, v);
        }
        *(int *)(base + o->offset) = b;
        return 0;
    }
    }
    return KRC_EINVAL;
}

void krc_config_init(struct krc_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        set_value(cfg, o, o->default_value, "default", NULL);
    }
}

static void routes_free(struct krc_config *cfg)
{
    for (size_t i = 0; i < cfg->n_routes; i++) {
        struct krc_route *r = &cfg->routes[i];
        krc_pattern_cleanup(&r->namespace);
        krc_pattern_cleanup(&r->pod);
        krc_pattern_cleanup(&r->container);
        krc_free(r->webhook_url);
        krc_free(r->channel);
        krc_route_dests_free(r->dests, r->n_dests);
    }
    krc_free(cfg->routes);
    cfg->routes = NULL;
    cfg->n_routes = 0;
}

static void silences_free(struct krc_config *cfg)
{
    for (size_t i = 0; i < cfg->n_silences; i++) {
        struct krc_silence *x = &cfg->silences[i];
        krc_pattern_cleanup(&x->namespace);
        krc_pattern_cleanup(&x->pod);
        krc_pattern_cleanup(&x->container);
        krc_free(x->reason);
    }
    krc_free(cfg->silences);
    cfg->silences = NULL;
    cfg->n_silences = 0;
}

void krc_config_cleanup(struct krc_config *cfg)
{
    char *base = (char *)cfg;
    routes_free(cfg);
    silences_free(cfg);
    krc_destinations_free(cfg->destinations, cfg->n_destinations);
    cfg->destinations = NULL;
    cfg->n_destinations = 0;
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        if (o->type == KRC_CONFIG_STRING || o->type == KRC_CONFIG_SECRET ||
            o->type == KRC_CONFIG_LIST) {
            char **p = (char **)(base + o->offset);
            krc_free(*p);
            *p = NULL;
        }
    }
    krc_free(cfg->kubeconfig);
    krc_free(cfg->context);
    krc_free(cfg->config_file);
    cfg->kubeconfig = cfg->context = cfg->config_file = NULL;
}

int krc_config_load_env(struct krc_config *cfg, struct krc_error *err)
{
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        const char *v;
        char where[128];
        int rc;
        if (o->env == NULL) {
            continue;
        }
        v = getenv(o->env);
        if (v == NULL) {
            continue;
        }
        snprintf(where, sizeof(where), "environment variable %s", o->env);
        rc = set_value(cfg, o, v, where, err);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

const struct krc_config_option *krc_config_find_flag(const char *flag)
{
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        if (o->flag != NULL && strcmp(o->flag, flag) == 0) {
            return o;
        }
    }
    return NULL;
}

int krc_config_set_flag(struct krc_config *cfg, const char *flag, const char *value,
                        struct krc_error *err)
{
    const struct krc_config_option *o = krc_config_find_flag(flag);
    char where[128];

    if (o == NULL) {
        return krc_error_set(err, KRC_EINVAL, "unknown option --%s", flag);
    }
    snprintf(where, sizeof(where), "option --%s", flag);
    return set_value(cfg, o, value, where, err);
}

/* --- YAML file ------------------------------------------------------------ */

struct file_errors {
    struct krc_buf text;
    int first;
    int count;
    struct krc_buf *notes; /* krc config check: what is not the file's mistake, or NULL */
    struct krc_error *err; /* for the destinations' reports */
};

static void add_error(struct file_errors *fe, int code, struct krc_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(struct file_errors *fe, int code, struct krc_error *err, const char *fmt, ...)
{
    char msg[KRC_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (fe->count == 0) {
        fe->first = code;
        krc_error_set(err, code, "%s", msg);
    }
    fe->count++;
    krc_buf_printf(&fe->text, "%s\n", msg);
}

static const struct krc_config_option *find_key(const char *key)
{
    for (const struct krc_config_option *o = options; o->key != NULL; o++) {
        if (strcmp(o->key, key) == 0) {
            return o;
        }
    }
    return NULL;
}

/* Scalar value of `key` in mapping `m`; NULL when absent. Errors on a
 * non-scalar and on unknown keys are reported by the callers' key walk. */
static const char *map_scalar(yaml_document_t *doc, yaml_node_t *m, const char *key,
                              yaml_node_t **ret_node)
{
    yaml_node_t *v = krc_yaml_doc_map_get(doc, m, key);

    if (v == NULL) {
        return NULL; /* so a value always comes with its node (clang-tidy) */
    }
    if (ret_node != NULL) {
        *ret_node = v;
    }
    return krc_yaml_doc_scalar(v);
}

/* Every key of mapping `m` must be in `allowed` ("a|b|c") and scalar. */
static int check_keys(yaml_document_t *doc, yaml_node_t *m, const char *allowed, const char *path,
                      const char *what, size_t index, struct file_errors *fe, struct krc_error *err)
{
    int bad = 0;
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(doc, pr->value);
        const char *key =
            k != NULL && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
        if (!allowed_value(allowed, key)) {
            char mean[160];
            add_error(fe, KRC_EINVAL, err,
                      "%s:%zu:%zu: %s[%zu]: unknown key \"%s\" (%sallowed: %s)", path,
                      k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0, what, index,
                      key, suggest_allowed(key, allowed, mean, sizeof(mean)), allowed);
            bad = 1;
        } else if (v == NULL || (v->type != YAML_SCALAR_NODE && strcmp(key, "destinations") != 0)) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: %s[%zu].%s must be a single value", path,
                      v ? v->start_mark.line + 1 : 0, v ? v->start_mark.column + 1 : 0, what, index,
                      key);
            bad = 1;
        }
    }
    return bad ? KRC_EINVAL : 0;
}

static char *dup_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? krc_strdup(s) : NULL;
}

/* Compile the pattern of `key` (namespace, pod or container: util/pattern.h
 * says which patterns are plain for each) once, at load. */
static int pattern_field(yaml_document_t *doc, yaml_node_t *m, const char *key,
                         struct krc_pattern *dst, const char *path, const char *what, size_t index,
                         struct file_errors *fe, struct krc_error *err)
{
    yaml_node_t *vn = NULL;
    const char *v = map_scalar(doc, m, key, &vn);
    enum krc_pattern_field field = strcmp(key, "pod") == 0         ? KRC_PATTERN_POD
                                   : strcmp(key, "container") == 0 ? KRC_PATTERN_CONTAINER
                                                                   : KRC_PATTERN_NAMESPACE;
    char where[512];
    struct krc_error pe;
    int rc;

    memset(dst, 0, sizeof(*dst));
    if (v == NULL || v[0] == '\0') {
        return 0;
    }
    snprintf(where, sizeof(where), "%s:%zu:%zu: %s[%zu].%s", path, vn->start_mark.line + 1,
             vn->start_mark.column + 1, what, index, key);
    krc_error_clear(&pe);
    rc = krc_pattern_compile(dst, v, field, 0, where, &pe);
    if (rc == KRC_EINVAL) {
        add_error(fe, KRC_EINVAL, err, "%s", pe.msg);
    } else if (rc < 0) {
        krc_error_set(err, rc, "%s", pe.msg);
    }
    return rc;
}

static void dest_error(void *ctx, const char *msg)
{
    struct file_errors *fe = ctx;

    add_error(fe, KRC_EINVAL, fe->err, "%s", msg);
}

/* A route's named destinations (resolved once the whole file is read). */
static int route_dests(struct krc_route *r, yaml_document_t *doc, yaml_node_t *m, const char *path,
                       size_t idx, struct file_errors *fe, struct krc_error *err)
{
    yaml_node_t *v = krc_yaml_doc_map_get(doc, m, "destinations");
    struct krc_dest_report rep = {dest_error, fe, fe->notes};

    fe->err = err;
    if (v == NULL) {
        return 0;
    }
    if (krc_route_dests_load(doc, v, path, idx, &rep, &r->dests, &r->n_dests) < 0) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    return 0;
}

static int load_destinations(struct krc_config *cfg, yaml_document_t *doc, yaml_node_t *seq,
                             const char *path, struct file_errors *fe, struct krc_error *err)
{
    struct krc_dest_report rep = {dest_error, fe, fe->notes};

    fe->err = err;
    krc_destinations_free(cfg->destinations, cfg->n_destinations);
    cfg->destinations = NULL;
    cfg->n_destinations = 0;
    if (krc_destinations_load(doc, seq, path, &rep, &cfg->destinations, &cfg->n_destinations) < 0) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    return 0;
}

/* Every destination a route names exists (checked once the whole file is
 * read: the two lists may come in either order). */
static void resolve_route_dests(struct krc_config *cfg, const char *path, struct file_errors *fe,
                                struct krc_error *err)
{
    struct krc_dest_report rep = {dest_error, fe, fe->notes};

    fe->err = err;
    for (size_t i = 0; i < cfg->n_routes; i++) {
        krc_route_dests_resolve(cfg->routes[i].dests, cfg->routes[i].n_dests, i, cfg->destinations,
                                cfg->n_destinations, path, &rep);
    }
}

static int load_routes(struct krc_config *cfg, yaml_document_t *doc, yaml_node_t *seq,
                       const char *path, struct file_errors *fe, struct krc_error *err)
{
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    size_t idx = 0;

    routes_free(cfg);
    if (n == 0) {
        return 0;
    }
    cfg->routes = krc_calloc(n, sizeof(struct krc_route));
    if (cfg->routes == NULL) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, idx++) {
        yaml_node_t *m = yaml_document_get_node(doc, *it);
        struct krc_route *r = &cfg->routes[cfg->n_routes];
        const char *hook;
        const char *hook_env;
        const char *channel;
        yaml_node_t *hn = NULL;

        if (m == NULL || m->type != YAML_MAPPING_NODE) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: routes[%zu] must be a mapping", path,
                      m ? m->start_mark.line + 1 : 0, m ? m->start_mark.column + 1 : 0, idx);
            continue;
        }
        if (check_keys(doc, m,
                       "namespace|pod|container|webhookUrl|webhookUrlEnv|channel|destinations",
                       path, "routes", idx, fe, err) < 0) {
            continue;
        }
        memset(r, 0, sizeof(*r));
        if (pattern_field(doc, m, "namespace", &r->namespace, path, "routes", idx, fe, err) < 0 ||
            pattern_field(doc, m, "pod", &r->pod, path, "routes", idx, fe, err) < 0 ||
            pattern_field(doc, m, "container", &r->container, path, "routes", idx, fe, err) < 0) {
            krc_pattern_cleanup(&r->namespace);
            krc_pattern_cleanup(&r->pod);
            krc_pattern_cleanup(&r->container);
            memset(r, 0, sizeof(*r));
            continue;
        }
        if (route_dests(r, doc, m, path, idx, fe, err) < 0) {
            krc_pattern_cleanup(&r->namespace);
            krc_pattern_cleanup(&r->pod);
            krc_pattern_cleanup(&r->container);
            memset(r, 0, sizeof(*r));
            return KRC_ENOMEM;
        }
        hook = map_scalar(doc, m, "webhookUrl", &hn);
        hook_env = map_scalar(doc, m, "webhookUrlEnv", &hn);
        channel = map_scalar(doc, m, "channel", NULL);
        if (hook_env != NULL && hook_env[0] != '\0') {
            /* One mistake, one error: an unset variable is not also "needs
             * webhookUrl, webhookUrlEnv or channel". */
            hook = getenv(hook_env);
            if ((hook == NULL || hook[0] == '\0') && fe->notes != NULL) {
                krc_buf_printf(fe->notes,
                               "%s:%zu:%zu: routes[%zu].webhookUrlEnv: environment variable %s is "
                               "not set here; krc run will need it\n",
                               path, hn->start_mark.line + 1, hn->start_mark.column + 1, idx,
                               hook_env);
            } else if (hook == NULL || hook[0] == '\0') {
                add_error(fe, KRC_EINVAL, err,
                          "%s:%zu:%zu: routes[%zu].webhookUrlEnv: environment variable %s is not "
                          "set",
                          path, hn->start_mark.line + 1, hn->start_mark.column + 1, idx, hook_env);
            }
        } else if ((hook == NULL || hook[0] == '\0') && (channel == NULL || channel[0] == '\0') &&
                   r->n_dests == 0) {
            add_error(fe, KRC_EINVAL, err,
                      "%s:%zu:%zu: routes[%zu] needs webhookUrl, webhookUrlEnv, channel or "
                      "destinations",
                      path, m->start_mark.line + 1, m->start_mark.column + 1, idx);
        }
        r->webhook_url = dup_or_null(hook);
        r->channel = dup_or_null(channel);
        cfg->n_routes++;
    }
    return 0;
}

static int parse_hhmm(const char *s, int *ret_minutes)
{
    int h;
    int m;
    if (strlen(s) != 5 || s[2] != ':' || s[0] < '0' || s[0] > '2' || s[1] < '0' || s[1] > '9' ||
        s[3] < '0' || s[3] > '5' || s[4] < '0' || s[4] > '9') {
        return KRC_EINVAL;
    }
    h = (s[0] - '0') * 10 + (s[1] - '0');
    m = (s[3] - '0') * 10 + (s[4] - '0');
    if (h > 23) {
        return KRC_EINVAL;
    }
    *ret_minutes = h * 60 + m;
    return 0;
}

static int load_silences(struct krc_config *cfg, yaml_document_t *doc, yaml_node_t *seq,
                         const char *path, struct file_errors *fe, struct krc_error *err)
{
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    size_t idx = 0;

    silences_free(cfg);
    if (n == 0) {
        return 0;
    }
    cfg->silences = krc_calloc(n, sizeof(struct krc_silence));
    if (cfg->silences == NULL) {
        add_error(fe, KRC_ENOMEM, err, "out of memory");
        return KRC_ENOMEM;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, idx++) {
        yaml_node_t *m = yaml_document_get_node(doc, *it);
        struct krc_silence *x = &cfg->silences[cfg->n_silences];
        const char *names[2] = {"start", "end"};
        int64_t *dst[2];
        const char *daily;
        yaml_node_t *vn = NULL;
        int bad = 0;

        if (m == NULL || m->type != YAML_MAPPING_NODE) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: silences[%zu] must be a mapping", path,
                      m ? m->start_mark.line + 1 : 0, m ? m->start_mark.column + 1 : 0, idx);
            continue;
        }
        if (check_keys(doc, m, "namespace|pod|container|start|end|daily|reason", path, "silences",
                       idx, fe, err) < 0) {
            continue;
        }
        memset(x, 0, sizeof(*x));
        dst[0] = &x->start;
        dst[1] = &x->end;
        for (int k = 0; k < 2; k++) {
            const char *t = map_scalar(doc, m, names[k], &vn);
            if (t != NULL && t[0] != '\0' && krc_parse_rfc3339(t, strlen(t), dst[k]) < 0) {
                add_error(fe, KRC_EINVAL, err,
                          "%s:%zu:%zu: silences[%zu].%s must be an RFC 3339 time such as "
                          "2026-12-24T18:00:00Z, not \"%s\"",
                          path, vn->start_mark.line + 1, vn->start_mark.column + 1, idx, names[k],
                          t);
                bad = 1;
            }
        }
        daily = map_scalar(doc, m, "daily", &vn);
        if (daily != NULL && daily[0] != '\0') {
            char a[8];
            char b[8];
            const char *dash = strchr(daily, '-');
            if (dash == NULL || dash - daily > 5 || strlen(dash + 1) > 5) {
                bad = 2;
            } else {
                snprintf(a, sizeof(a), "%.*s", (int)(dash - daily), daily);
                snprintf(b, sizeof(b), "%s", dash + 1);
                if (parse_hhmm(a, &x->daily_from) < 0 || parse_hhmm(b, &x->daily_to) < 0 ||
                    x->daily_from == x->daily_to) {
                    bad = 2;
                }
            }
            if (bad == 2) {
                add_error(fe, KRC_EINVAL, err,
                          "%s:%zu:%zu: silences[%zu].daily must look like \"22:00-06:00\" (UTC), "
                          "not \"%s\"",
                          path, vn->start_mark.line + 1, vn->start_mark.column + 1, idx, daily);
            }
        }
        if (!bad && x->start != 0 && x->end != 0 && x->end <= x->start) {
            add_error(fe, KRC_EINVAL, err, "%s:%zu:%zu: silences[%zu]: end is not after start",
                      path, m->start_mark.line + 1, m->start_mark.column + 1, idx);
            bad = 1;
        }
        if (bad ||
            pattern_field(doc, m, "namespace", &x->namespace, path, "silences", idx, fe, err) < 0 ||
            pattern_field(doc, m, "pod", &x->pod, path, "silences", idx, fe, err) < 0 ||
            pattern_field(doc, m, "container", &x->container, path, "silences", idx, fe, err) < 0) {
            krc_pattern_cleanup(&x->namespace);
            krc_pattern_cleanup(&x->pod);
            krc_pattern_cleanup(&x->container);
            memset(x, 0, sizeof(*x));
            continue;
        }
        x->reason = dup_or_null(map_scalar(doc, m, "reason", NULL));
        cfg->n_silences++;
    }
    return 0;
}

/* The scalar items of the sequence v joined (by newlines for a list option,
 * by commas for a string) and set as the value of o: a list is accepted where
 * the Go tool took a comma-separated string. */
static int set_joined_value(struct krc_config *cfg, const struct krc_config_option *o,
                            yaml_document_t *doc, yaml_node_t *v, const char *key,
                            const char *where, struct krc_error *e)
{
    struct krc_buf joined;
    int rc = 0;

    krc_buf_init(&joined, 64 * 1024);
    for (yaml_node_item_t *it = v->data.sequence.items.start;
         it < v->data.sequence.items.top && rc == 0; it++) {
        yaml_node_t *item = yaml_document_get_node(doc, *it);
        if (item == NULL || item->type != YAML_SCALAR_NODE) {
            rc = krc_error_set(e, KRC_EINVAL, "%s: %s: list items must be strings", where, key);
            break;
        }
        if (joined.len > 0) {
            krc_buf_append_char(&joined, o->type == KRC_CONFIG_LIST ? '\n' : ',');
        }
        rc = krc_buf_append_str(&joined, (const char *)item->data.scalar.value);
    }
    if (rc == 0) {
        rc = set_value(cfg, o, krc_buf_str(&joined), where, e);
    }
    krc_buf_cleanup(&joined);
    return rc;
}

static int load_file(struct krc_config *cfg, const char *path, struct krc_buf *notes,
                     char **ret_errors, struct krc_error *err);

int krc_config_load_file(struct krc_config *cfg, const char *path, char **ret_errors,
                         struct krc_error *err)
{
    return load_file(cfg, path, NULL, ret_errors, err);
}

int krc_config_check_file(struct krc_config *cfg, const char *path, char **ret_errors,
                          char **ret_notes, struct krc_error *err)
{
    struct krc_buf notes;
    int rc;

    krc_buf_init(&notes, 64 * 1024);
    rc = load_file(cfg, path, &notes, ret_errors, err);
    *ret_notes = notes.len > 0 ? krc_buf_take(&notes) : NULL;
    krc_buf_cleanup(&notes);
    return rc;
}

static int load_file(struct krc_config *cfg, const char *path, struct krc_buf *notes,
                     char **ret_errors, struct krc_error *err)
{
    FILE *fp;
    yaml_document_t doc;
    yaml_node_t *root;
    struct krc_yaml_problem yp;
    struct file_errors fe;
    int rc = 0;

    memset(&fe, 0, sizeof(fe));
    fe.notes = notes;
    krc_buf_init(&fe.text, 64 * 1024);
    fp = fopen(path, "rb");
    if (fp == NULL) {
        add_error(&fe, KRC_EIO, err, "%s: cannot open: %s", path, KRC_ERRNO_STR(errno));
        goto out;
    }
    if (krc_yaml_doc_load_file(&doc, fp, &yp) < 0) {
        if (yp.kind == KRC_YAML_NO_PARSER) {
            add_error(&fe, KRC_ENOMEM, err, "%s: cannot initialise the YAML parser", path);
        } else {
            add_error(&fe, KRC_EPARSE, err, "%s:%zu:%zu: invalid YAML: %s", path, yp.line,
                      yp.column, yp.problem ? yp.problem : "syntax error");
        }
        fclose(fp);
        goto out;
    }
    root = yaml_document_get_root_node(&doc);
    if (root == NULL) {
        /* An empty file sets nothing. */
    } else if (root->type != YAML_MAPPING_NODE) {
        add_error(&fe, KRC_EINVAL, err, "%s:%zu:%zu: the configuration must be a mapping of keys",
                  path, root->start_mark.line + 1, root->start_mark.column + 1);
    } else {
        for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
             pair < root->data.mapping.pairs.top; pair++) {
            yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
            yaml_node_t *v = yaml_document_get_node(&doc, pair->value);
            const struct krc_config_option *o;
            char where[512];
            const char *key;
            struct krc_error e;

            if (k == NULL || v == NULL || k->type != YAML_SCALAR_NODE) {
                add_error(&fe, KRC_EINVAL, err, "%s:%zu:%zu: keys must be plain strings", path,
                          k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0);
                continue;
            }
            key = (const char *)k->data.scalar.value;
            o = find_key(key);
            if (o == NULL) {
                char mean[160];
                add_error(&fe, KRC_EINVAL, err, "%s:%zu:%zu: unknown key \"%s\"%s", path,
                          k->start_mark.line + 1, k->start_mark.column + 1, key,
                          suggest_key(key, mean, sizeof(mean)));
                continue;
            }
            snprintf(where, sizeof(where), "%s:%zu:%zu", path, v->start_mark.line + 1,
                     v->start_mark.column + 1);
            krc_error_clear(&e);
            if (o->type == KRC_CONFIG_DESTINATIONS) {
                if (v->type != YAML_SEQUENCE_NODE) {
                    rc = krc_error_set(&e, KRC_EINVAL, "%s: %s must be a list of mappings", where,
                                       key);
                } else {
                    rc = load_destinations(cfg, &doc, v, path, &fe, err);
                    continue;
                }
            } else if (o->type == KRC_CONFIG_ROUTES || o->type == KRC_CONFIG_SILENCES) {
                if (v->type != YAML_SEQUENCE_NODE) {
                    rc = krc_error_set(&e, KRC_EINVAL, "%s: %s must be a list of mappings", where,
                                       key);
                } else {
                    rc = o->type == KRC_CONFIG_ROUTES ? load_routes(cfg, &doc, v, path, &fe, err)
                                                      : load_silences(cfg, &doc, v, path, &fe, err);
                    continue; /* errors were added per entry */
                }
            } else if (v->type == YAML_SCALAR_NODE) {
                const char *text = (const char *)v->data.scalar.value;
                /* A plain (unquoted) null means "unset", as in any YAML reader. */
                if (krc_yaml_doc_is_null(v, 0)) {
                    text = o->type == KRC_CONFIG_STRING || o->type == KRC_CONFIG_SECRET
                               ? ""
                               : o->default_value;
                }
                rc = set_value(cfg, o, text, where, &e);
            } else if (v->type == YAML_SEQUENCE_NODE &&
                       (o->type == KRC_CONFIG_STRING || o->type == KRC_CONFIG_LIST) &&
                       o->allowed == NULL) {
                rc = set_joined_value(cfg, o, &doc, v, key, where, &e);
            } else {
                rc = krc_error_set(&e, KRC_EINVAL, "%s: %s must be a single value", where, key);
            }
            if (rc < 0) {
                add_error(&fe, rc, err, "%s", e.msg);
            }
        }
    }
    resolve_route_dests(cfg, path, &fe, err);
    yaml_document_delete(&doc);
    fclose(fp);
out:
    if (ret_errors != NULL) {
        *ret_errors = fe.count > 0 ? krc_buf_take(&fe.text) : NULL;
    }
    krc_buf_cleanup(&fe.text);
    return fe.count > 0 ? fe.first : 0;
}

/* --- krc run arguments ----------------------------------------------------- */

struct flag_value {
    const char *name; /* the option table's static flag name */
    const char *value;
};

static int is_bool_word(const char *v)
{
    int b;
    return v != NULL && *v != '\0' && parse_bool(v, &b) == 0;
}

/* Cross-field rules that a single option's range cannot express. */
/* kubernetesEvents and the declared destinations: a kubernetes-event one
 * needs it on; with it on and none declared, the implicit one (named
 * "kubernetes-event", alert/sender.h) takes that name. */
static int validate_kube_events(const struct krc_config *cfg, struct krc_error *err)
{
    const char *file = cfg->config_file != NULL ? cfg->config_file : "the configuration";
    int declared = 0;

    for (size_t i = 0; i < cfg->n_destinations; i++) {
        const struct krc_destination *d = &cfg->destinations[i];
        if (!krc_dest_is(d, "kubernetes-event")) {
            continue;
        }
        declared = 1;
        if (!cfg->kubernetes_events) {
            return krc_error_set(err, KRC_EINVAL,
                                 "%s:%zu:%zu: destinations (%s): type kubernetes-event needs "
                                 "kubernetesEvents: true (it is false); remove the destination "
                                 "or turn it on",
                                 file, d->line, d->column, d->name);
        }
    }
    for (size_t i = 0; cfg->kubernetes_events && !declared && i < cfg->n_destinations; i++) {
        const struct krc_destination *d = &cfg->destinations[i];
        if (strcmp(d->name, "kubernetes-event") == 0) {
            return krc_error_set(err, KRC_EINVAL,
                                 "%s:%zu:%zu: destinations (%s): the name is the implicit "
                                 "Kubernetes Event destination's (kubernetesEvents: true); "
                                 "rename it",
                                 file, d->line, d->column, d->name);
        }
    }
    return 0;
}

int krc_config_db_is_url(const char *db)
{
    return db != NULL &&
           (strncmp(db, "postgres://", 11) == 0 || strncmp(db, "postgresql://", 13) == 0);
}

/* The value of query parameter `key` in q ("a=1&b=2") is non-empty. */
static int query_has(const char *q, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = q; p != NULL && *p != '\0';
         p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, key, kl) == 0 && p[kl] == '=' && p[kl + 1] != '\0' && p[kl + 1] != '&') {
            return 1;
        }
    }
    return 0;
}

/* Every port of a host list ("h1:5432,h2") is 1..65535 when given. */
static int ports_valid(const char *hosts, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        const char *colon = NULL;
        while (end < len && hosts[end] != ',') {
            if (hosts[end] == ']') {
                colon = NULL; /* an IPv6 literal's colons are not a port */
            } else if (hosts[end] == ':') {
                colon = hosts + end;
            }
            end++;
        }
        if (colon != NULL) {
            long port = 0;
            const char *p = colon + 1;
            if (p == hosts + end) {
                return 0;
            }
            for (; p < hosts + end; p++) {
                if (*p < '0' || *p > '9' || (port = port * 10 + (*p - '0')) > 65535) {
                    return 0;
                }
            }
            if (port == 0) {
                return 0;
            }
        }
        i = end + 1;
    }
    return 1;
}

int krc_config_check_db_url(const char *url, int *ret_has_password, struct krc_error *err)
{
    const char *rest = strstr(url, "://") + 3;
    size_t auth_len = strcspn(rest, "/?#");
    const char *at = NULL;
    const char *hosts;
    const char *query = strchr(rest, '?');
    size_t host_len;

    *ret_has_password = 0;
    for (size_t i = 0; i < auth_len; i++) {
        if (rest[i] == '@') {
            at = rest + i; /* the last '@' ends the user information */
        }
    }
    if (at != NULL) {
        const char *colon = memchr(rest, ':', (size_t)(at - rest));
        *ret_has_password = colon != NULL && colon + 1 < at;
    }
    hosts = at != NULL ? at + 1 : rest;
    host_len = (size_t)(rest + auth_len - hosts);
    if (query != NULL) {
        query++;
    }
    if (host_len == 0 || hosts[0] == ':' || hosts[0] == ',') {
        if (!query_has(query, "host") && !query_has(query, "hostaddr")) {
            return krc_error_set(err, KRC_EINVAL,
                                 "db: the PostgreSQL URL names no host "
                                 "(postgres://USER@HOST[:PORT]/DATABASE)");
        }
    } else if (!ports_valid(hosts, host_len)) {
        return krc_error_set(err, KRC_EINVAL,
                             "db: the PostgreSQL URL has a bad port (a number from 1 to 65535 "
                             "after the host)");
    }
    if (rest[auth_len] != '/' || rest[auth_len + 1] == '\0' || rest[auth_len + 1] == '?' ||
        rest[auth_len + 1] == '#') {
        if (!query_has(query, "dbname")) {
            return krc_error_set(err, KRC_EINVAL,
                                 "db: the PostgreSQL URL names no database "
                                 "(postgres://USER@HOST[:PORT]/DATABASE)");
        }
    }
    if (query != NULL && query_has(query, "password")) {
        *ret_has_password = 1;
    }
    return 0;
}

char *krc_config_db_notes(const struct krc_config *cfg)
{
    struct krc_buf b;
    int url = krc_config_db_is_url(cfg->db);
    int has_password = 0;
    const char *pwf = cfg->db_password_file;

    krc_buf_init(&b, 4096);
    if (url && krc_config_check_db_url(cfg->db, &has_password, NULL) == 0 && has_password) {
        krc_buf_printf(&b, "db: the PostgreSQL URL holds a password; put it in a file named by "
                           "dbPasswordFile (e.g. a mounted Secret) instead, so that it is not "
                           "in the configuration\n");
    }
    if (pwf != NULL && pwf[0] != '\0') {
        if (!url) {
            krc_buf_printf(&b, "dbPasswordFile is set but db is not a PostgreSQL URL: it is "
                               "ignored\n");
        } else if (access(pwf, R_OK) != 0) {
            krc_buf_printf(&b,
                           "dbPasswordFile %s is not readable here (%s); krc run needs it at "
                           "start-up\n",
                           pwf, KRC_ERRNO_STR(errno));
        }
    }
    if (b.len == 0) {
        krc_buf_cleanup(&b);
        return NULL;
    }
    return krc_buf_take(&b);
}

/* A password's copy on the stack is cleared before it goes out of scope. */
static void wipe(char *p, size_t n)
{
    volatile char *v = p;
    while (n-- > 0) {
        *v++ = 0;
    }
}

int krc_config_read_db_password(const char *path, char **ret, struct krc_error *err)
{
    char line[1024];
    FILE *f;
    size_t n;

    *ret = NULL;
    f = fopen(path, "re");
    if (f == NULL) {
        return krc_error_set(err, KRC_EIO, "dbPasswordFile %s: cannot open: %s", path,
                             KRC_ERRNO_STR(errno));
    }
    if (fgets(line, sizeof(line), f) == NULL) {
        int bad = ferror(f);
        fclose(f);
        return krc_error_set(err, KRC_EIO, "dbPasswordFile %s: %s", path,
                             bad ? "cannot read it" : "it is empty");
    }
    fclose(f);
    n = strcspn(line, "\r\n");
    if (n == strlen(line) && n == sizeof(line) - 1) {
        wipe(line, sizeof(line));
        return krc_error_set(err, KRC_EINVAL,
                             "dbPasswordFile %s: the first line is longer than %zu bytes", path,
                             sizeof(line) - 2);
    }
    line[n] = '\0';
    if (n == 0) {
        return krc_error_set(err, KRC_EINVAL, "dbPasswordFile %s: the first line is empty", path);
    }
    *ret = krc_strdup(line);
    wipe(line, sizeof(line));
    return *ret != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

int krc_config_validate(const struct krc_config *cfg, struct krc_error *err)
{
    int has_password;

    if (validate_kube_events(cfg, err) < 0) {
        return KRC_EINVAL;
    }
    if (krc_config_db_is_url(cfg->db) && krc_config_check_db_url(cfg->db, &has_password, err) < 0) {
        return KRC_EINVAL;
    }
    if (cfg->leader_elect) {
        if (cfg->lease_renew_deadline_s >= cfg->lease_duration_s) {
            return krc_error_set(err, KRC_EINVAL,
                                 "leaseRenewDeadline (%lds) must be less than leaseDuration "
                                 "(%lds)",
                                 cfg->lease_renew_deadline_s, cfg->lease_duration_s);
        }
        if (cfg->lease_retry_period_s >= cfg->lease_renew_deadline_s) {
            return krc_error_set(err, KRC_EINVAL,
                                 "leaseRetryPeriod (%lds) must be less than leaseRenewDeadline "
                                 "(%lds)",
                                 cfg->lease_retry_period_s, cfg->lease_renew_deadline_s);
        }
        if (cfg->lease_name == NULL || cfg->lease_name[0] == '\0') {
            return krc_error_set(err, KRC_EINVAL, "leaseName must not be empty");
        }
    }
    return 0;
}

int krc_config_from_args(struct krc_config *cfg, int argc, char **argv, char **ret_errors,
                         struct krc_error *err)
{
    struct flag_value *flags = krc_calloc((size_t)argc + 1, sizeof(*flags));
    struct krc_buf msg;
    size_t n_flags = 0;
    const char *config_file = NULL;
    int rc = 0;

    *ret_errors = NULL;
    krc_buf_init(&msg, 1 << 20);
    if (flags == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    cfg->run_argc = argc;
    cfg->run_argv = argv;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct krc_config_option *o;
        const char *value = NULL;
        char name[128];
        const char *eq;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            krc_free(flags);
            krc_buf_cleanup(&msg);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            krc_buf_printf(&msg, "krc run: unexpected argument \"%s\" (see krc help)\n", a);
            rc = KRC_EINVAL;
            goto out;
        }
        eq = strchr(a + 2, '=');
        if (eq != NULL) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - a - 2), a + 2);
            value = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a + 2);
        }
        o = krc_config_find_flag(name);
        if (strcmp(name, "kubeconfig") != 0 && strcmp(name, "context") != 0 &&
            strcmp(name, "config") != 0 && o == NULL) {
            char mean[300] = "";
            suggest_flag(name, mean, sizeof(mean));
            krc_buf_printf(&msg, "krc run: unknown option --%s%s (see krc help)\n", name, mean);
            rc = KRC_EINVAL;
            goto out;
        }
        if (value == NULL && o != NULL && o->type == KRC_CONFIG_BOOL) {
            /* a switch: "--leader-elect", or "--leader-elect false" */
            value = (i + 1 < argc && is_bool_word(argv[i + 1])) ? argv[++i] : "true";
        }
        if (value == NULL) {
            if (i + 1 >= argc) {
                krc_buf_printf(&msg, "krc run: option --%s needs a value\n", name);
                rc = KRC_EINVAL;
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
            flags[n_flags].name = o->flag;
            flags[n_flags].value = value;
            n_flags++;
        }
    }
    if (config_file != NULL) {
        char *errors = NULL;
        krc_free(cfg->config_file);
        cfg->config_file = krc_strdup(config_file);
        rc = krc_config_load_file(cfg, config_file, &errors, err);
        if (rc < 0) {
            krc_buf_printf(&msg, "krc run: invalid configuration:\n%s", errors ? errors : err->msg);
            krc_free(errors);
            goto out;
        }
    }
    if ((rc = krc_config_load_env(cfg, err)) < 0) {
        krc_buf_printf(&msg, "krc run: %s\n", err->msg);
        goto out;
    }
    for (size_t i = 0; i < n_flags; i++) {
        if ((rc = krc_config_set_flag(cfg, flags[i].name, flags[i].value, err)) < 0) {
            krc_buf_printf(&msg, "krc run: %s\n", err->msg);
            goto out;
        }
    }
    if ((rc = krc_config_validate(cfg, err)) < 0) {
        krc_buf_printf(&msg, "krc run: %s\n", err->msg);
        goto out;
    }
out:
    krc_free(flags);
    if (rc < 0) {
        if (msg.len == 0) {
            krc_buf_printf(&msg, "krc run: %s\n", err->msg);
        }
        if (err->code == 0) {
            krc_error_set(err, rc, "invalid arguments");
        }
        *ret_errors = msg.data; /* handed to the caller */
        msg.data = NULL;
    }
    krc_buf_cleanup(&msg);
    return rc;
}

extern char **environ;

char *krc_config_env_typos(void)
{
    struct krc_buf b;
    char *s;

    krc_buf_init(&b, 64 * 1024);
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        size_t nl = eq != NULL ? (size_t)(eq - *e) : strlen(*e);
        char name[SUGGEST_MAX_LEN + 1];
        struct suggestion sg;
        int known = 0;

        if (nl < 5 || nl > SUGGEST_MAX_LEN || strncmp(*e, "KRC_", 4) != 0) {
            continue;
        }
        memcpy(name, *e, nl);
        name[nl] = '\0';
        suggest_init(&sg, name);
        for (const struct krc_config_option *o = options; o->key != NULL && !known; o++) {
            if (o->env == NULL) {
                continue;
            }
            known = strcmp(o->env, name) == 0;
            if (strcmp(o->env, name + 4) == 0) {
                /* KRC_MUTE_SECONDS for MUTE_SECONDS: the Go tool's names have no prefix */
                sg.best = o->env;
                sg.best_len = strlen(o->env);
                sg.best_d = 0;
            } else {
                suggest_consider(&sg, o->env, strlen(o->env));
            }
        }
        if (!known && sg.best != NULL) {
            krc_buf_printf(&b, "environment variable %s is not a krc option; did you mean %.*s?\n",
                           name, (int)sg.best_len, sg.best);
        }
    }
    s = b.len > 0 ? krc_buf_take(&b) : NULL;
    krc_buf_cleanup(&b);
    return s;
}

int krc_config_redactor(const struct krc_config *cfg, struct krc_redactor **ret,
                        struct krc_error *err)
{
    const char *list = cfg->redact_patterns != NULL ? cfg->redact_patterns : "";
    char *copy = krc_strdup(list);
    const char **items = krc_calloc(strlen(list) / 2 + 2, sizeof(char *));
    size_t n = 0;
    int rc;

    *ret = NULL;
    if (copy == NULL || items == NULL) {
        krc_free(copy);
        krc_free(items);
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    /* a KRC_CONFIG_LIST: one pattern a line, empty lines skipped */
    for (char *p = copy; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        if (*p != '\0') {
            items[n++] = p;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    rc = krc_redact_new(items, n, ret, err);
    if (rc < 0) {
        krc_error_prefix(err, "redactPatterns");
    }
    krc_free(items);
    krc_free(copy);
    return rc;
}
