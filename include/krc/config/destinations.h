/* Destinations: where alerts go besides the Go tool's Slack settings.
 *
 * The configuration file's `destinations:` list names each destination and
 * gives its type and the type's fields; routes name destinations
 * (`destinations: [a, b]`). The one table of types is here: a new type is a
 * row below and a sink (alert/sink.h) of that name.
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

enum krc_dest_type {
    KRC_DEST_SLACK_WEBHOOK = 0,
    KRC_DEST_SLACK_API,
    KRC_DEST_PAGERDUTY,
    KRC_DEST_TEAMS,
    KRC_DEST_GOOGLE_CHAT,
    KRC_DEST_WEBHOOK,
    KRC_DEST_KUBERNETES_EVENT,
};

struct krc_dest_type_info {
    enum krc_dest_type type;
    const char *name;        /* as written in the file: "pagerduty" */
    const char *keys;        /* allowed keys, "a|b|c" */
    int url;                 /* 0: none; 1: required; 2: optional (default_url) */
    int url_is_secret;       /* the URL itself grants access (incoming webhooks) */
    const char *default_url; /* url == 2 */
    const char *secret;      /* its secret's key stem ("routingKey"), or NULL */
    const char *help;        /* one line for docs and errors */
};

/* The table, and its row of `name` (NULL: not a type). */
const struct krc_dest_type_info *krc_dest_types(size_t *ret_n);
const struct krc_dest_type_info *krc_dest_type_find(const char *name);
const struct krc_dest_type_info *krc_dest_type_info(enum krc_dest_type t);

struct krc_destination {
    char *name;
    enum krc_dest_type type;
    char *url;      /* the endpoint (NULL: none, or unresolved in `config check`) */
    char *secret;   /* routing key, signing secret or bot token; NULL: none */
    char *channel;  /* slack-api / slack-webhook; NULL: none */
    char *headers;  /* webhook: extra header lines "Name: value\n"; NULL: none */
    char *api_url;  /* slack-api: the Web API base; NULL: Slack's */
    int is_default; /* `default: true`: gets the restarts no route matches */
    /* where each secret came from, "urlEnv: NAME" / "secretFile: PATH" (NULL: inline
     * or none): what `krc config print` shows instead of the secret */
    char *url_src;
    char *secret_src;
    char *headers_src;
    size_t line; /* where it was defined (1-based) */
    size_t column;
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

/* 1 when `url` may be used: https, or http to a loopback host (localhost,
 * 127.0.0.0/8, [::1]). */
int krc_dest_url_allowed(const char *url);

#endif
