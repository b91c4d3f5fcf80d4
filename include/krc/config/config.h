/* Configuration: one table of options, each settable from the YAML file
 * (--config), its environment variable, and a command-line flag. Precedence:
 * built-in default < file < environment < flag. The Go tool's environment
 * variables keep their names and meaning. */
#ifndef KRC_CONFIG_H
#define KRC_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "krc/config/destinations.h"
#include "krc/util/error.h"
#include "krc/util/pattern.h"
#include "krc/util/redact.h"

/* A route: restarts whose namespace/pod/container match go to a webhook
 * and/or channel. Patterns follow util/pattern.h's one rule (plain, i.e. only
 * the field's name characters: exact namespace / pod-name prefix / exact
 * container; otherwise a regular expression searched anywhere); an absent
 * pattern matches anything. They are compiled when the file is loaded. */
struct krc_route {
    struct krc_pattern namespace; /* compiled at load; .text is what was written */
    struct krc_pattern pod;
    struct krc_pattern container;
    char *webhook_url; /* NULL: the default webhook */
    char *channel;     /* NULL: the default channel */
    size_t line;       /* of webhookUrl or webhookUrlEnv in the file (0: none) */
    size_t column;
    int webhook_env; /* the URL came from webhookUrlEnv */
    /* named destinations (config/destinations.h); none: Slack as above plus
     * the destinations marked default */
    struct krc_route_dest *dests;
    size_t n_dests;
};

/* A silence: matching restarts are recorded but not alerted while it is
 * active: between start and end (unix seconds, 0 = open), and, when
 * daily_from != daily_to, only between those minutes of the day (UTC,
 * wrapping past midnight). */
struct krc_silence {
    struct krc_pattern namespace; /* compiled at load; .text is what was written */
    struct krc_pattern pod;
    struct krc_pattern container;
    int64_t start;
    int64_t end;
    int daily_from; /* minutes after 00:00 UTC */
    int daily_to;
    char *reason;
};

/* The value of a list option (KRC_CONFIG_LIST, KRC_CONFIG_PATTERNS): one
 * item per line of the text it was set from (a YAML sequence's entries, or
 * the lines of an environment variable), in order; an empty line is an empty
 * item, which every use skips. */
struct krc_config_list {
    char **items;
    size_t n;
    /* KRC_CONFIG_PATTERNS: the non-empty items as text patterns
     * (util/pattern.h, one line each), compiled when the option is set */
    struct krc_pattern *patterns;
    size_t n_patterns;
};

struct krc_config {
    /* cluster and API access */
    char *kubeconfig;
    char *context;
    char *config_file;
    char *cluster_name;
    /* filters (Go tool) */
    char *watched_namespaces;
    char *ignored_namespaces;
    char *watched_pod_name_prefixes;
    char *ignored_pod_name_prefixes;
    long ignore_restart_count;
    int ignore_restarts_with_exit_code_zero;
    /* filters (krc) */
    char *label_selector;
    /* Slack (Go tool names) */
    char *slack_webhook_url;
    char *slack_channel;
    char *slack_username;
    long mute_seconds;
    int page_intentional_restarts; /* alert intentional restarts (default: recorded only) */
    /* re-read a restarted container's device health for this long (0: off) */
    long device_health_recheck_seconds;
    /* watch */
    char *db;               /* history database path or PostgreSQL URL ("" = default) */
    char *db_password_file; /* PostgreSQL password file ("": none) */
    char *listen;           /* health/metrics endpoint HOST:PORT, "" or "off": none */
    char *mcp_token_file;   /* bearer token of /mcp on listen; "": no /mcp */
    char *mcp_namespaces;   /* MCP's allow-list within the filters; "": no further limit */
    long history_max_age_s;
    long history_max_rows;
    char *slack_bot_token;
    char *slack_api_url;
    int slack_allow_insecure_http; /* http:// to any host for the Go tool's Slack URLs */
    char *slack_icon;
    long storm_threshold;
    long storm_window_s;
    long storm_summary_delay_s;
    long recovered_after_s;          /* the incident settle time (0: no resolved message) */
    long incident_reply_interval_s;  /* an incident's thread replies at most this often */
    long incident_update_interval_s; /* its updates (destinations without threads) */
    long log_tail_lines;
    long log_limit_bytes;
    long log_transfer_limit_bytes;
    long workers;
    struct krc_config_list redact_patterns;     /* regular expressions (the redactor's) */
    struct krc_config_list log_ignore_patterns; /* compiled: .patterns */
    struct krc_route *routes;
    size_t n_routes;
    struct krc_silence *silences;
    size_t n_silences;
    struct krc_destination *destinations; /* the `destinations:` list */
    size_t n_destinations;
    /* the Go tool's Slack settings as a destination (krc_dest_slack_env),
     * made by krc_config_from_args once the settings are final; implicit:
     * not in `destinations`, never printed */
    struct krc_destination slack_env;
    int kubernetes_events; /* an events.k8s.io/v1 Event on the restarted pod */
    /* change tracking (docs/design/change-tracking.md) */
    int track_changes;        /* watch the workload controllers and nodes */
    int track_config_changes; /* GET a crashing pod's ConfigMaps/Secrets' metadata */
    /* watch */
    long startup_window_s;
    long watch_idle_timeout_s;
    long watch_bookmark_interval_s; /* /readyz: unready after twice this without delivery */
    long list_page_size;
    int streaming_list;
    /* high availability */
    int leader_elect;
    char *lease_namespace; /* "" = the pod's namespace */
    char *lease_name;
    long lease_duration_s;
    long lease_renew_deadline_s;
    long lease_retry_period_s;
    /* the `krc run` arguments the configuration was built from (borrowed from
     * main's argv; SIGHUP rebuilds the configuration from them) */
    int run_argc;
    char **run_argv;
    /* logging */
    char *log_level;
    char *log_format;
};

enum krc_config_type {
    KRC_CONFIG_STRING,
    KRC_CONFIG_SECRET, /* a string that is never printed */
    KRC_CONFIG_INT,
    KRC_CONFIG_DURATION, /* seconds; accepts 90, 90s, 10m, 1h, 1h30m */
    KRC_CONFIG_BOOL,
    KRC_CONFIG_LIST,         /* strings; YAML sequence, or newline-separated in env/flags */
    KRC_CONFIG_PATTERNS,     /* KRC_CONFIG_LIST of text patterns, compiled when set */
    KRC_CONFIG_ROUTES,       /* YAML sequence of route mappings (file only) */
    KRC_CONFIG_SILENCES,     /* YAML sequence of silence mappings (file only) */
    KRC_CONFIG_DESTINATIONS, /* YAML sequence of destination mappings (file only) */
};

struct krc_config_option {
    const char *key;  /* YAML key */
    const char *env;  /* environment variable, or NULL */
    const char *flag; /* command-line flag without "--", or NULL */
    enum krc_config_type type;
    size_t offset;
    const char *default_value;
    long min;
    long max;
    const char *allowed; /* for enumerations: "a|b|c", else NULL */
    const char *help;
};

/* The option table, terminated by an entry with key NULL. */
const struct krc_config_option *krc_config_options(void);

void krc_config_init(struct krc_config *cfg); /* sets defaults; cannot fail but on ENOMEM */
void krc_config_cleanup(struct krc_config *cfg);

/* Apply a YAML file. Errors name the file, line and column and the key:
 * "krc.yaml:3:1: unknown key \"watchedNamespace\"". Every error is appended
 * to `errors` (one per line) when it is non-NULL; the return value is the
 * first error code. */
int krc_config_load_file(struct krc_config *cfg, const char *path, char **ret_errors,
                         struct krc_error *err);
/* krc_config_load_file for `krc config check`: an environment variable a
 * route names (webhookUrlEnv) that is not set here is not a mistake of the
 * file; each such one is a line in *ret_notes (caller frees; NULL when
 * none) instead of an error. */
int krc_config_check_file(struct krc_config *cfg, const char *path, char **ret_errors,
                          char **ret_notes, struct krc_error *err);
/* Apply the environment variables of the table. */
int krc_config_load_env(struct krc_config *cfg, struct krc_error *err);
/* Variables of the environment that start with KRC_, are not options, and
 * are close to one (or are one with KRC_ in front of the Go tool's name):
 * one line each, "environment variable KRC_MUTE_SECONDS is not a krc option;
 * did you mean MUTE_SECONDS?"; NULL when there are none (caller frees).
 * Other KRC_ variables are left alone: they are not krc's to judge. */
char *krc_config_env_typos(void);
/* Set one option by flag name ("label-selector") from a string value. */
int krc_config_set_flag(struct krc_config *cfg, const char *flag, const char *value,
                        struct krc_error *err);
/* Set one option by environment variable name ("KRC_REDACT_PATTERNS") from
 * a string value, as krc_config_load_env does. */
int krc_config_set_env(struct krc_config *cfg, const char *env, const char *value,
                       struct krc_error *err);
/* 1 when two list values hold the same items. */
int krc_config_list_equal(const struct krc_config_list *a, const struct krc_config_list *b);
/* Find the option a flag names; NULL if none. */
const struct krc_config_option *krc_config_find_flag(const char *flag);

/* Build the configuration of `krc run` from its arguments (argv[0] is "run";
 * argv is borrowed for cfg's lifetime: SIGHUP rebuilds from it) with the
 * precedence default < file (--config) < environment < flags; "--flag" alone
 * sets a boolean option. Returns 0; 1 when --help was asked; or a negative
 * code with every message ("krc run: ..." lines) in *ret_errors (caller
 * frees). cfg must come from krc_config_init. */
int krc_config_from_args(struct krc_config *cfg, int argc, char **argv, char **ret_errors,
                         struct krc_error *err);

/* Rules between options (lease timings). Error names the keys. */
int krc_config_validate(const struct krc_config *cfg, struct krc_error *err);

/* 1 when db is a PostgreSQL URL (postgres:// or postgresql://). */
int krc_config_db_is_url(const char *db);
/* A PostgreSQL URL's shape: a host (or a host= parameter), ports 1..65535,
 * a database name (or dbname=). KRC_EINVAL with a message naming `db` and
 * never quoting the URL (it may hold a password). *ret_has_password: the
 * URL (user information or password= parameter) holds a password. */
int krc_config_check_db_url(const char *url, int *ret_has_password, struct krc_error *err);
/* `krc config check`'s notes about the database (a password in the URL,
 * never quoting it; dbPasswordFile unreadable here or unused), one per
 * line; NULL when none (caller frees). */
char *krc_config_db_notes(const struct krc_config *cfg);
/* The first line of dbPasswordFile (without its newline), owned (free with
 * krc_free, after clearing it); errors name the file, never its content. */
int krc_config_read_db_password(const char *path, char **ret, struct krc_error *err);

/* The redactor of the configuration: the built-in scanners plus
 * redactPatterns. The one builder of krc run and krc mcp, so that both
 * redact alike. KRC_EINVAL prefixed "redactPatterns: " naming the pattern;
 * KRC_ENOMEM. Caller frees *ret with krc_redact_free. */
int krc_config_redactor(const struct krc_config *cfg, struct krc_redactor **ret,
                        struct krc_error *err);

/* Parse "90", "90s", "10m", "2h", "1h30m", "1d" into seconds. */
int krc_config_parse_duration(const char *s, long *ret_seconds);

#endif
