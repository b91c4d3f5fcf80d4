#include "krc/config/config.h"
#include "krc/config/config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

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
     31536000, NULL,
     "Incidents: repeats of an open incident (a workload's container, one cause) are not alerted "
     "each but paced by incidentReplyInterval/incidentUpdateInterval (0: every restart is "
     "alerted; any other value paces, its size is not used)"},
    {"pageIntentionalRestarts", "KRC_PAGE_INTENTIONAL_RESTARTS", "page-intentional-restarts",
     KRC_CONFIG_BOOL, OFF(page_intentional_restarts), "false", 0, 0, NULL,
     "Alert restarts that a field of the pod proves intended (a restart rule, the stop signal; "
     "\"intentional\": true) like crashes; false: recorded and counted, not alerted"},
    {"deviceHealthRecheckSeconds", "KRC_DEVICE_HEALTH_RECHECK_SECONDS",
     "device-health-recheck-seconds", KRC_CONFIG_INT, OFF(device_health_recheck_seconds), "60", 0,
     3600, NULL,
     "After a restart of a container holding accelerators, watch its pod this many seconds for "
     "the kubelet reporting one of its devices Unhealthy (allocatedResourcesStatus), and amend "
     "the restart's alert and stored report once; 0: off"},
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
     NULL, "Slack bot token (xoxb-...): Web API mode with threads, log files, incident replies"},
    {"slackApiUrl", "KRC_SLACK_API_URL", "slack-api-url", KRC_CONFIG_STRING, OFF(slack_api_url),
     "https://slack.com/api", 0, 0, NULL, "Slack Web API base URL"},
    {"slackAllowInsecureHttp", "KRC_SLACK_ALLOW_INSECURE_HTTP", "slack-allow-insecure-http",
     KRC_CONFIG_BOOL, OFF(slack_allow_insecure_http), "false", 0, 0, NULL,
     "Allow plain http:// to any host for SLACK_WEBHOOK_URL, KRC_SLACK_API_URL and the routes' "
     "webhooks (without it: https://, or http:// only to localhost/127.0.0.0/8/[::1]); the "
     "URL and the bot token then cross the network unencrypted"},
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
     "The incident settle time: an incident ends, with one \"resolved\" message, once its "
     "container ran ready this long (0: no message; it ends when first seen ready)"},
    {"incidentReplyInterval", "KRC_INCIDENT_REPLY_INTERVAL", "incident-reply-interval",
     KRC_CONFIG_DURATION, OFF(incident_reply_interval_s), "10m", 0, 604800, NULL,
     "An open incident's repeats get at most one reply per this interval in its thread "
     "(destinations with threads: the Slack Web API)"},
    {"incidentUpdateInterval", "KRC_INCIDENT_UPDATE_INTERVAL", "incident-update-interval",
     KRC_CONFIG_DURATION, OFF(incident_update_interval_s), "30m", 0, 604800, NULL,
     "An open incident's repeats get at most one update per this interval at destinations "
     "without threads (PagerDuty: none, the incident stays triggered)"},
    {"logTailLines", "KRC_LOG_TAIL_LINES", "log-tail-lines", KRC_CONFIG_INT, OFF(log_tail_lines),
     "50", 1, 100000, NULL,
     "Previous-log lines fetched (a Slack message shows at most the last 15; the history keeps "
     "them all)"},
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
    {"logIgnorePatterns", "KRC_LOG_IGNORE_PATTERNS", NULL, KRC_CONFIG_PATTERNS,
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
    {"trackChanges", "KRC_TRACK_CHANGES", "track-changes", KRC_CONFIG_BOOL, OFF(track_changes),
     "true", 0, 0, NULL,
     "Watch Deployments, ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions, Jobs, "
     "CronJobs and nodes (read-only) to say in the first alert of an incident what changed "
     "before it (docs/design/change-tracking.md)"},
    {"trackConfigChanges", "KRC_TRACK_CONFIG_CHANGES", "track-config-changes", KRC_CONFIG_BOOL,
     OFF(track_config_changes), "false", 0, 0, NULL,
     "Also read the metadata of the ConfigMaps and Secrets a crashing pod references, to name "
     "one whose data changed before the crash (needs get on configmaps and secrets, which also "
     "allows reading their data; with trackChanges)"},
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

int krc_config_allowed_value(const char *allowed, const char *v)
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

static void list_cleanup(struct krc_config_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        krc_free(l->items[i]);
    }
    krc_pattern_list_free(l->patterns, l->n_patterns);
    krc_free(l->items);
    memset(l, 0, sizeof(*l));
}

int krc_config_list_equal(const struct krc_config_list *a, const struct krc_config_list *b)
{
    if (a->n != b->n) {
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->items[i], b->items[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Append item text[0..len) to l; a pattern list compiles it (unless empty)
 * as a text pattern, its errors naming `where` and the key. */
static int list_add(struct krc_config_list *l, const struct krc_config_option *o, const char *text,
                    size_t len, const char *where, struct krc_error *err)
{
    char **items = krc_realloc(l->items, (l->n + 1) * sizeof(*items));
    struct krc_pattern *pats;
    struct krc_error pe;
    int rc;

    if (items == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    l->items = items;
    if ((l->items[l->n] = krc_strndup(text, len)) == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    l->n++;
    if (o->type != KRC_CONFIG_PATTERNS || len == 0) {
        return 0;
    }
    pats = krc_realloc(l->patterns, (l->n_patterns + 1) * sizeof(*pats));
    if (pats == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    l->patterns = pats;
    krc_error_clear(&pe);
    rc = krc_pattern_compile(&l->patterns[l->n_patterns], l->items[l->n - 1], KRC_PATTERN_TEXT,
                             KRC_PATTERN_NEWLINE, o->key, &pe);
    if (rc < 0) {
        return rc == KRC_EINVAL ? krc_error_set(err, rc, "%s: %s", where, pe.msg)
                                : krc_error_set(err, rc, "%s", pe.msg);
    }
    l->n_patterns++;
    return 0;
}

/* A list option from text, one item a line (the end of the text is no
 * further item); the running value is kept on error. */
static int set_list(struct krc_config_list *dst, const struct krc_config_option *o, const char *v,
                    const char *where, struct krc_error *err)
{
    struct krc_config_list l;
    int rc = 0;

    memset(&l, 0, sizeof(l));
    for (const char *p = v; *p != '\0' && rc == 0;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        rc = list_add(&l, o, p, len, where, err);
        p += len + (nl != NULL);
    }
    if (rc < 0) {
        list_cleanup(&l);
        return rc;
    }
    list_cleanup(dst);
    *dst = l;
    return 0;
}

/* Set one option from text; `where` names the source for messages. */
int krc_config_set_value(struct krc_config *cfg, const struct krc_config_option *o, const char *v,
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
    case KRC_CONFIG_LIST:
    case KRC_CONFIG_PATTERNS:
        return set_list((struct krc_config_list *)(void *)(base + o->offset), o, v, where, err);
    case KRC_CONFIG_STRING:
    case KRC_CONFIG_SECRET: {
        char **dst = (char **)(base + o->offset);
        char *copy;
        if (o->allowed != NULL && !krc_config_allowed_value(o->allowed, v)) {
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
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        krc_config_set_value(cfg, o, o->default_value, "default", NULL);
    }
}

void krc_config_cleanup(struct krc_config *cfg)
{
    char *base = (char *)cfg;
    krc_config_routes_free(cfg);
    krc_config_silences_free(cfg);
    krc_destinations_free(cfg->destinations, cfg->n_destinations);
    cfg->destinations = NULL;
    cfg->n_destinations = 0;
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        if (o->type == KRC_CONFIG_STRING || o->type == KRC_CONFIG_SECRET) {
            char **p = (char **)(base + o->offset);
            krc_free(*p);
            *p = NULL;
        } else if (o->type == KRC_CONFIG_LIST || o->type == KRC_CONFIG_PATTERNS) {
            list_cleanup((struct krc_config_list *)(void *)(base + o->offset));
        }
    }
    krc_free(cfg->kubeconfig);
    krc_free(cfg->context);
    krc_free(cfg->config_file);
    cfg->kubeconfig = cfg->context = cfg->config_file = NULL;
}

const struct krc_config_option *krc_config_find_flag(const char *flag)
{
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
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
    return krc_config_set_value(cfg, o, value, where, err);
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
            krc_config_suggest_flag(name, mean, sizeof(mean));
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
        } else if (o != NULL) { /* found above: every other name was refused */
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
    krc_dest_slack_env(cfg->slack_webhook_url, cfg->slack_channel, cfg->slack_bot_token,
                       cfg->slack_api_url, &cfg->slack_env);
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

int krc_config_redactor(const struct krc_config *cfg, struct krc_redactor **ret,
                        struct krc_error *err)
{
    const struct krc_config_list *l = &cfg->redact_patterns;
    const char **items = krc_calloc(l->n + 1, sizeof(char *));
    size_t n = 0;
    int rc;

    *ret = NULL;
    if (items == NULL) {
        return krc_error_set(err, KRC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i][0] != '\0') { /* empty lines are skipped */
            items[n++] = l->items[i];
        }
    }
    rc = krc_redact_new(items, n, ret, err);
    if (rc < 0) {
        krc_error_prefix(err, "redactPatterns");
    }
    krc_free(items);
    return rc;
}
