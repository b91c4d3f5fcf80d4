/* The environment: the option table's variables (the Go tool's names and
 * meaning kept), and the KRC_ variables that look like a mistyped one. */
#include "krc/config/config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/buf.h"

int krc_config_load_env(struct krc_config *cfg, struct krc_error *err)
{
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
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
        rc = krc_config_set_value(cfg, o, v, where, err);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

int krc_config_set_env(struct krc_config *cfg, const char *env, const char *value,
                       struct krc_error *err)
{
    char where[128];

    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        if (o->env != NULL && strcmp(o->env, env) == 0) {
            snprintf(where, sizeof(where), "environment variable %s", o->env);
            return krc_config_set_value(cfg, o, value, where, err);
        }
    }
    return krc_error_set(err, KRC_EINVAL, "%s is not a krc environment variable", env);
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
        char name[KRC_SUGGEST_MAX_LEN + 1];
        struct krc_suggestion sg;
        int known = 0;

        if (nl < 5 || nl > KRC_SUGGEST_MAX_LEN || strncmp(*e, "KRC_", 4) != 0) {
            continue;
        }
        memcpy(name, *e, nl);
        name[nl] = '\0';
        krc_config_suggest_init(&sg, name);
        for (const struct krc_config_option *o = krc_config_options(); o->key != NULL && !known;
             o++) {
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
                krc_config_suggest_consider(&sg, o->env, strlen(o->env));
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
