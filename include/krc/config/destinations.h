/* Destinations: where alerts go besides the Go tool's Slack settings.
 *
 * The configuration file's `destinations:` list names each destination and
 * gives its type and the type's fields; routes name destinations
 * (`destinations: [a, b]`). Each kind of destination has its settings
 * table (struct krc_dest_schema) in its own file (alert/dest/); this loader
 * reads every destination generically with its kind's table.
 *
 * Secrets (webhook URLs of Slack, Teams and Google Chat, the PagerDuty
 * routing key, the signing secret, bot tokens, extra headers) are read from
 * an environment variable (`...Env`) or a file (`...File`, a mounted Secret),
 * never from the file's text except a plain `url`, and never printed. */
#ifndef KRC_DESTINATIONS_H
#define KRC_DESTINATIONS_H

#include <stddef.h>

#include <yaml.h>

#include "krc/util/buf.h"

#define KRC_DEST_EXTRA_MAX 4

struct krc_destination;

/* How a setting's value is given in the file. */
enum krc_dest_value {
    KRC_DEST_TEXT,   /* a plain value: `channel: "#ops"` */
    KRC_DEST_URL,    /* an endpoint: https://, or http:// to a loopback host */
    KRC_DEST_SECRET, /* `<key>Env` (a variable) or `<key>File` (a mounted Secret), never the
                      * file's text (but `<key>` itself with KRC_DEST_INLINE) */
};

/* KRC_DEST_SECRET: `<key>` itself may hold the value (an incoming webhook's
 * url), and the value is then an endpoint (checked as KRC_DEST_URL). */
#define KRC_DEST_INLINE 0x1u
/* The destination needs a value (after the default). */
#define KRC_DEST_REQUIRED 0x2u
/* KRC_DEST_SECRET given only as `<key>File` (no `<key>Env`). */
#define KRC_DEST_FILE_ONLY 0x4u
/* The value itself grants access (an incoming webhook's URL): never printed,
 * registered with the log redactor. Secrets always are. */
#define KRC_DEST_HIDDEN 0x8u
/* A failed check names the key and the file it was read from
 * ("(NAME).headersFile: PATH: WHY") instead of the destination. */
#define KRC_DEST_CHECK_AT_FILE 0x10u

/* One setting of a kind of destination: the kind's file has a table of
 * these and the loader reads every destination with it (fluent-bit's
 * config_map is the model). Its value (an owned string) goes to the char *
 * field of struct krc_destination at `offset`, where it came from ("urlEnv:
 * NAME") to the one at `source` (0: not kept). */
struct krc_dest_setting {
    const char *key; /* "url", "channel"; a secret's stem: "routingKey" */
    enum krc_dest_value type;
    unsigned flags;
    const char *default_value; /* NULL: none */
    size_t offset;
    size_t source;
    /* A check beyond the type's, or NULL: 0, or -1 with why set (a sentence
     * without the value: it may be a secret). */
    int (*check)(const char *value, char *why, size_t whysz);
};

/* A kind of destination as the loader sees it: the alert layer's kinds
 * (alert/dest.h) each hold one. */
struct krc_dest_schema {
    const char *name; /* as written in the file: "pagerduty" */
    const char *help; /* one line for the log and docs */
    const struct krc_dest_setting *settings;
    size_t n_settings;
};

/* The kinds the loader knows, in the order errors list them. The config
 * layer cannot see the destinations' files (alert/dest/), so the program
 * hands them over once before it loads a configuration
 * (krc_dest_registry_init, alert/dest.h); until then no type is known.
 * The array is borrowed. */
void krc_dest_schemas_set(const struct krc_dest_schema *const *v, size_t n);
/* The kind named `name`, or NULL. */
const struct krc_dest_schema *krc_dest_schema_find(const char *name);

struct krc_destination {
    char *name;
    const struct krc_dest_schema *kind;
    char *url;     /* the endpoint (NULL: none, or unresolved in `config check`) */
    char *secret;  /* routing key, signing secret or bot token; NULL: none */
    char *channel; /* slack-api / slack-webhook; NULL: none */
    char *headers; /* webhook: extra header lines "Name: value\n"; NULL: none */
    char *api_url; /* slack-api: the Web API base; NULL: Slack's */
    /* the settings of a kind that no field above holds (its table says
     * which: offsetof(struct krc_destination, extra[i])) */
    char *extra[KRC_DEST_EXTRA_MAX];
    int is_default; /* `default: true`: gets the restarts no route matches */
    /* `allowInsecureHttp: true`: its endpoints may be plain http:// to any
     * host (without it, http:// only to a loopback host) */
    int allow_insecure_http;
    /* where each secret came from, "urlEnv: NAME" / "secretFile: PATH" (NULL: inline
     * or none): what `krc config print` shows instead of the secret */
    char *url_src;
    char *secret_src;
    char *headers_src;
    size_t line; /* where it was defined (1-based) */
    size_t column;
    /* made by the loader from the Go tool's Slack settings (krc_dest_slack_env),
     * not declared: never listed or printed, its strings borrowed from the
     * configuration, its outbox keys and lanes its kind's (alert/dest.h) */
    int implicit;
};

/* A route's reference to a destination by name. */
struct krc_route_dest {
    char *name;
    size_t line;
    size_t column;
    size_t index; /* into the configuration's destinations, once resolved */
};

/* Where the loader reports: each error is one line "FILE:LINE:COL: ...";
 * with notes (krc config check), a secret that is not available here (an
 * unset variable, a file that does not exist) is a note, not an error. */
struct krc_dest_report {
    void (*error)(void *ctx, const char *msg);
    void *ctx;
    struct krc_buf *notes;
};

/* Load the `destinations:` sequence `seq` of `doc` (file `path`). Returns the
 * number of destinations in *ret (caller frees with krc_destinations_free),
 * or KRC_ENOMEM; every mistake goes to rep->error. */
int krc_destinations_load(yaml_document_t *doc, yaml_node_t *seq, const char *path,
                          const struct krc_dest_report *rep, struct krc_destination **ret,
                          size_t *ret_n);
void krc_destinations_free(struct krc_destination *v, size_t n);
/* 1 when the two lists differ (a reload keeps the running ones). */
int krc_destinations_differ(const struct krc_destination *a, size_t na,
                            const struct krc_destination *b, size_t nb);

/* A route's `destinations:` value (a sequence of names, or one name). */
int krc_route_dests_load(yaml_document_t *doc, yaml_node_t *v, const char *path, size_t route,
                         const struct krc_dest_report *rep, struct krc_route_dest **ret,
                         size_t *ret_n);
void krc_route_dests_free(struct krc_route_dest *v, size_t n);

/* Resolve every name a route gives (index set); an unknown one is an error
 * at its line and column, with the nearest defined name. */
void krc_route_dests_resolve(struct krc_route_dest *v, size_t n, size_t route,
                             const struct krc_destination *dests, size_t n_dests, const char *path,
                             const struct krc_dest_report *rep);

/* The implicit destination the Go tool's Slack settings make
 * (SLACK_WEBHOOK_URL, SLACK_CHANNEL, SLACK_BOT_TOKEN, SLACK_API_URL):
 * of kind slack-api when bot_token is set, else slack-webhook (whose routes
 * may give webhooks of their own even without a default one). The strings
 * are borrowed ("" is kept as none). Its name is KRC_DEST_SLACK_ENV_NAME, which
 * no key, log line or output shows. kind is NULL until the kinds are known
 * (krc_dest_schemas_set). */
#define KRC_DEST_SLACK_ENV_NAME "slack"
void krc_dest_slack_env(const char *webhook_url, const char *channel, const char *bot_token,
                        const char *api_url, struct krc_destination *ret);

/* 1 when d is of the kind named `kind`. */
int krc_dest_is(const struct krc_destination *d, const char *kind);
/* 1 when d's url is a secret (an incoming webhook's: KRC_DEST_HIDDEN). */
int krc_dest_url_hidden(const struct krc_destination *d);

/* Check the endpoint `url` of setting `key` of kind k before it is needed:
 * a scheme (https; http:// only to a loopback host, or to any host with
 * allow_http), a host, a port, no space, then the kind's own rules for the
 * setting (its check: the provider's URL shape, e.g. a Slack incoming
 * webhook is https://hooks.slack.com/services/T.../B.../...). k NULL (or no
 * such setting): the generic rules only. 0, or -1 with why set to a
 * sentence that never quotes the URL (it may be a secret; the scheme and
 * host may be named); `optin` names the setting that allows http to any
 * host ("allowInsecureHttp: true"), said in the sentence about http. */
int krc_dest_check_url(const struct krc_dest_schema *k, const char *key, const char *url,
                       int allow_http, const char *optin, char *why, size_t whysz);

#endif
