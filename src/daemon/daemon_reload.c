/* SIGHUP: the configuration rebuilt from the `krc run` arguments; what a
 * reload may change is applied (filters, alerting, routes, silences, the
 * log level, /mcp's scope), the rest keeps its running value. */
#include "krc/daemon/daemon_internal.h"

#include <string.h>

#include "krc/util/log.h"
#include "krc/util/mem.h"

/* --- SIGHUP: reload ------------------------------------------------------- */

/* Options a reload applies; every other option keeps its running value
 * until krc is restarted (a warning names each one that changed). */
static const char *const reloadable[] = {
    "clusterName",
    "watchedNamespaces",
    "ignoredNamespaces",
    "watchedPodNamePrefixes",
    "ignoredPodNamePrefixes",
    "ignoreRestartCount",
    "ignoreRestartsWithExitCodeZero",
    "slackChannel",
    "slackUsername",
    "slackIcon",
    "muteSeconds",
    "incidentReplyInterval",
    "incidentUpdateInterval",
    "pageIntentionalRestarts",
    "stormThreshold",
    "stormWindow",
    "stormSummaryDelay",
    "logTailLines",
    "logLimitBytes",
    "logTransferLimitBytes",
    "routes",
    "silences",
    "logLevel",
    "mcpNamespaces",
    NULL,
};

static int is_reloadable(const char *key)
{
    for (size_t i = 0; reloadable[i] != NULL; i++) {
        if (strcmp(reloadable[i], key) == 0) {
            return 1;
        }
    }
    return 0;
}

static int option_changed(const struct krc_config *a, const struct krc_config *b,
                          const struct krc_config_option *o)
{
    const char *pa = (const char *)a + o->offset;
    const char *pb = (const char *)b + o->offset;

    switch (o->type) {
    case KRC_CONFIG_STRING:
    case KRC_CONFIG_SECRET: {
        const char *x = *(char *const *)(const void *)pa;
        const char *y = *(char *const *)(const void *)pb;
        return strcmp(x ? x : "", y ? y : "") != 0;
    }
    case KRC_CONFIG_LIST:
    case KRC_CONFIG_PATTERNS:
        return !krc_config_list_equal((const void *)pa, (const void *)pb);
    case KRC_CONFIG_INT:
    case KRC_CONFIG_DURATION:
        return *(const long *)(const void *)pa != *(const long *)(const void *)pb;
    case KRC_CONFIG_BOOL:
        return *(const int *)(const void *)pa != *(const int *)(const void *)pb;
    case KRC_CONFIG_ROUTES:
    case KRC_CONFIG_SILENCES:
        return 0; /* reloadable anyway */
    case KRC_CONFIG_DESTINATIONS:
        return krc_destinations_differ(a->destinations, a->n_destinations, b->destinations,
                                       b->n_destinations);
    }
    return 0;
}

/* The plain namespaces are the watch scopes: changing them needs new watch
 * loops (and maybe other permissions), which a reload does not start. */
static int same_scopes(const struct krc_filter *a, const struct krc_filter *b)
{
    const char *const *na = NULL, *const *nb = NULL;
    size_t ca = krc_filter_plain_namespaces(a, &na);
    size_t cb = krc_filter_plain_namespaces(b, &nb);
    if (ca != cb) {
        return 0;
    }
    for (size_t i = 0; i < ca; i++) {
        if (strcmp(na[i], nb[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

static void reload_rejected(const char *why)
{
    krc_log(KRC_LOG_ERROR, "configuration reload rejected; the running configuration is kept: %s",
            why);
}

static void reload_failed(struct daemon *d, const char *why)
{
    if (why != NULL) {
        reload_rejected(why);
    }
    krc_health_reloaded(&d->health, 0);
}

void krc_daemon_reload(struct daemon *d)
{
    const struct krc_config *old = live_cfg(d);
    struct krc_config *cfg = krc_calloc(1, sizeof(*cfg));
    struct krc_filter *filter = NULL;
    struct retired *ret = krc_calloc(1, sizeof(*ret));
    struct krc_sender_options no;
    struct krc_error e;
    char *errors = NULL;
    size_t changed = 0;
    int rc;

    krc_log(KRC_LOG_INFO, "SIGHUP received; reloading the configuration%s%s",
            d->cfg->config_file ? " from " : "", d->cfg->config_file ? d->cfg->config_file : "");
    /* a rotated Secret is taken whatever becomes of the configuration */
    krc_health_reload_mcp_token(&d->health);
    if (cfg == NULL || ret == NULL) {
        krc_free(cfg);
        krc_free(ret);
        reload_failed(d, "out of memory");
        return;
    }
    krc_config_init(cfg);
    krc_error_clear(&e);
    rc = krc_config_from_args(cfg, d->cfg->run_argc, d->cfg->run_argv, &errors, &e);
    if (rc != 0) {
        /* one line per mistake, as krc config check prints them */
        char *p = errors;
        while (p != NULL && *p != '\0') {
            char *nl = strchr(p, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            if (*p != '\0' && strcmp(p, "krc run: invalid configuration:") != 0) {
                reload_rejected(strncmp(p, "krc run: ", 9) == 0 ? p + 9 : p);
            }
            p = nl ? nl + 1 : NULL;
        }
        reload_failed(d, errors == NULL ? e.msg : NULL);
        krc_free(errors);
        goto fail;
    }
    if (krc_filter_new(cfg->watched_namespaces, cfg->ignored_namespaces,
                       cfg->watched_pod_name_prefixes, cfg->ignored_pod_name_prefixes, &filter,
                       &e) < 0) {
        reload_failed(d, e.msg);
        goto fail;
    }
    if (!same_scopes(filter, atomic_load(&d->live_filter))) {
        reload_failed(d, "watchedNamespaces changes which namespaces are watched; restart krc "
                         "to apply it");
        goto fail;
    }
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        if (option_changed(old, cfg, o)) {
            changed++;
            if (!is_reloadable(o->key)) {
                krc_log(KRC_LOG_WARN,
                        "configuration reload: %s changed; it takes effect when krc is "
                        "restarted (the running value is kept)",
                        o->key);
            }
        }
    }
    /* /mcp answers about what the new filters let through (from its next call) */
    if (d->mcp_tools != NULL) {
        struct krc_mcp_scope_config sc;
        krc_mcp_scope_config_from(cfg, &sc);
        if (krc_mcp_tools_set_scope(d->mcp_tools, &sc, &e) < 0) {
            reload_failed(d, e.msg);
            goto fail;
        }
    }
    /* Apply: the sender first (under its lock), then the watch side. */
    if (d->sender != NULL) {
        krc_daemon_sender_options_from(cfg, &no); /* the sender takes the reloadable ones */
        krc_sender_reconfigure(d->sender, &no);
    }
    {
        enum krc_log_level level = KRC_LOG_INFO;
        if (krc_log_parse_level(cfg->log_level, &level) == 0) {
            krc_log_set_level(level);
        }
    }
    ret->cfg = (struct krc_config *)old;
    ret->filter = atomic_load(&d->live_filter);
    atomic_store(&d->live_filter, filter);
    atomic_store(&d->live, cfg);
    ret->next = d->retired;
    d->retired = ret;
    krc_health_reloaded(&d->health, 1);
    krc_log(KRC_LOG_INFO,
            "configuration reloaded (%zu option(s) differ from the running ones; %zu route(s), "
            "%zu silence(s))",
            changed, cfg->n_routes, cfg->n_silences);
    return;
fail:
    krc_filter_free(filter);
    krc_config_cleanup(cfg);
    krc_free(cfg);
    krc_free(ret);
}

/* The configurations and filters SIGHUP replaced, and the live ones. */
void krc_daemon_free_reloaded(struct daemon *d)
{
    while (d->retired != NULL) {
        struct retired *r = d->retired;
        d->retired = r->next;
        if (r->cfg != d->cfg) {
            krc_config_cleanup(r->cfg);
            krc_free(r->cfg);
        }
        if (r->filter != d->filter) {
            krc_filter_free(r->filter);
        }
        krc_free(r);
    }
    if (atomic_load(&d->live) != d->cfg) {
        struct krc_config *live = (struct krc_config *)atomic_load(&d->live);
        krc_config_cleanup(live);
        krc_free(live);
    }
    if (atomic_load(&d->live_filter) != d->filter) {
        krc_filter_free(atomic_load(&d->live_filter));
    }
}
