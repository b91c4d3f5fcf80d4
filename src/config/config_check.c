/* Rules between options (lease timings, kubernetes-event destinations) and
 * the history database's settings: the PostgreSQL URL's shape, its notes,
 * and the password file. */
#include "krc/config/config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krc/util/buf.h"
#include "krc/util/mem.h"

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

/* The Go tool's Slack URLs, checked as their kind checks a declared
 * destination's (config/destinations.h: krc_dest_check_url), before they
 * are needed: SLACK_WEBHOOK_URL without a bot token, KRC_SLACK_API_URL with
 * one, and every route's webhook. The message names the variable and the
 * key, never the URL (a webhook URL is a secret). */
static int validate_slack_urls(const struct krc_config *cfg, struct krc_error *err)
{
    const char *file = cfg->config_file != NULL ? cfg->config_file : "the configuration";
    const char *optin = "slackAllowInsecureHttp: true (KRC_SLACK_ALLOW_INSECURE_HTTP=true)";
    int api = cfg->slack_bot_token != NULL && cfg->slack_bot_token[0] != '\0';
    int http = cfg->slack_allow_insecure_http;
    char why[300];

    if (!api && cfg->slack_webhook_url != NULL && cfg->slack_webhook_url[0] != '\0' &&
        krc_dest_check_url(krc_dest_schema_find("slack-webhook"), "url", cfg->slack_webhook_url,
                           http, optin, why, sizeof(why)) < 0) {
        return krc_error_set(err, KRC_EINVAL, "SLACK_WEBHOOK_URL (slackWebhookUrl): the URL %s",
                             why);
    }
    if (api && cfg->slack_api_url != NULL && cfg->slack_api_url[0] != '\0' &&
        krc_dest_check_url(krc_dest_schema_find("slack-api"), "apiUrl", cfg->slack_api_url, http,
                           optin, why, sizeof(why)) < 0) {
        return krc_error_set(err, KRC_EINVAL,
                             "KRC_SLACK_API_URL (slackApiUrl, used with SLACK_BOT_TOKEN): the URL "
                             "%s",
                             why);
    }
    for (size_t i = 0; i < cfg->n_routes; i++) {
        const struct krc_route *r = &cfg->routes[i];
        if (r->webhook_url != NULL && r->webhook_url[0] != '\0' &&
            krc_dest_check_url(krc_dest_schema_find("slack-webhook"), "url", r->webhook_url, http,
                               optin, why, sizeof(why)) < 0) {
            return krc_error_set(err, KRC_EINVAL, "%s:%zu:%zu: routes[%zu].%s: the URL %s", file,
                                 r->line, r->column, i,
                                 r->webhook_env ? "webhookUrlEnv" : "webhookUrl", why);
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

    if (validate_kube_events(cfg, err) < 0 || validate_slack_urls(cfg, err) < 0) {
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
