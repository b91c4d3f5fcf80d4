#include "krc/cli/config_cmd.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/clock.h"
#include "krc/config/config.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"
#include "krc/util/url.h"

#define EXIT_BAD 1
#define EXIT_USAGE 2
#define MESSAGES_MAX (1024u * 1024u)

/* Errors and notes quote the file's values (an unknown key, a bad value):
 * written sanitised, so a control character in the file is shown, never
 * obeyed by the terminal. */
static void put_messages(const char *s)
{
    krc_text_fputs(s, MESSAGES_MAX, KRC_TEXT_LINES, stderr);
}

/* Each line of notes (NULL: none) as "note: LINE", sanitised. */
static void put_notes(const char *notes)
{
    for (const char *p = notes; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        char *line = krc_strndup(p, len);
        fputs("note: ", stderr);
        put_messages(line != NULL ? line : "(out of memory)");
        fputc('\n', stderr);
        krc_free(line);
        p = nl != NULL ? nl + 1 : NULL;
    }
}

/* A duration in the largest unit of the configuration's parser (d, h, m,
 * s) that holds it exactly: 2592000 is 30d, 5400 is 90m, 90 is 90s; it
 * reads back as the same number of seconds. */
static void print_duration(const char *key, long seconds)
{
    static const struct {
        long s;
        char unit;
    } units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}};
    size_t i;

    for (i = 0; seconds != 0 && i < sizeof(units) / sizeof(units[0]); i++) {
        if (seconds % units[i].s == 0) {
            printf("%s: %ld%c\n", key, seconds / units[i].s, units[i].unit);
            return;
        }
    }
    printf("%s: %lds\n", key, seconds);
}

static void usage(FILE *out)
{
    fprintf(out, "Usage:\n"
                 "  krc config check FILE       validate a configuration file; every mistake is\n"
                 "                              reported with its line and column (exit 1);\n"
                 "                              a webhookUrlEnv variable unset here is a note\n"
                 "  krc config print [--config FILE]\n"
                 "                              the effective configuration (file, then\n"
                 "                              environment), secrets redacted, as YAML\n"
                 "  krc config keys             every key, its environment variable, flag and\n"
                 "                              default, as a Markdown table\n");
}

/* YAML double-quoted scalar: control characters (C0, DEL, C1) and the
 * bidirectional controls as YAML escapes, invalid UTF-8 as \uFFFD, so the
 * terminal shows every value as text. */
static void print_quoted(const char *s)
{
    size_t len = s != NULL ? strlen(s) : 0;

    putchar('"');
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        size_t n;

        if (c == '"' || c == '\\') {
            printf("\\%c", c);
            i++;
            continue;
        }
        if (c == '\n') {
            fputs("\\n", stdout);
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            printf("\\x%02x", c);
            i++;
            continue;
        }
        n = krc_text_utf8_decode(s + i, len - i, &cp);
        if (n == 0) {
            fputs("\\uFFFD", stdout);
            i++;
        } else if (krc_text_unsafe_cp(cp)) {
            printf(cp <= 0xff ? "\\x%02x" : "\\u%04x", (unsigned)cp);
            i += n;
        } else {
            fwrite(s + i, 1, n, stdout);
            i += n;
        }
    }
    putchar('"');
}

static void print_pattern_field(const char *key, const char *value)
{
    if (value != NULL) {
        printf("    %s: ", key);
        print_quoted(value);
        putchar('\n');
    }
}

/* "secretFile: PATH" as a YAML pair with a quoted value. */
static void print_source(const char *src)
{
    const char *colon = strchr(src, ':');

    printf("    %.*s: ", (int)(colon - src), src);
    print_quoted(colon + 2);
    putchar('\n');
}

/* Secrets (webhook URLs of chat services, keys, tokens, headers) are never
 * printed: where they come from is. */
static void print_destinations(const struct krc_config *cfg)
{
    if (cfg->n_destinations == 0) {
        printf("destinations: []\n");
        return;
    }
    printf("destinations:\n");
    for (size_t i = 0; i < cfg->n_destinations; i++) {
        const struct krc_destination *d = &cfg->destinations[i];
        printf("  - name: ");
        print_quoted(d->name);
        printf("\n    type: %s\n", d->kind != NULL ? d->kind->name : "?");
        /* a secret is shown by where it comes from (a variable, a file), never itself */
        if (d->url_src != NULL) {
            print_source(d->url_src);
        } else if (d->url != NULL) {
            print_pattern_field("url", krc_dest_url_hidden(d) ? "[REDACTED]" : d->url);
        }
        if (d->secret_src != NULL) {
            print_source(d->secret_src);
        }
        if (d->headers_src != NULL) {
            print_source(d->headers_src);
        }
        print_pattern_field("channel", d->channel);
        print_pattern_field("apiUrl", d->api_url);
        if (d->is_default) {
            printf("    default: true\n");
        }
    }
}

static void print_value(const struct krc_config *cfg, const struct krc_config_option *o)
{
    const char *base = (const char *)cfg;

    switch (o->type) {
    case KRC_CONFIG_SECRET: {
        const char *v = *(char *const *)(base + o->offset);
        printf("%s: %s\n", o->key, v != NULL && v[0] != '\0' ? "\"[REDACTED]\"" : "\"\"");
        break;
    }
    case KRC_CONFIG_STRING: {
        const char *v = *(char *const *)(base + o->offset);
        char *shown = v == cfg->db ? krc_url_mask_password(v) : NULL; /* no URL password */
        printf("%s: ", o->key);
        print_quoted(v == cfg->db ? (shown != NULL ? shown : "(out of memory)") : v);
        krc_free(shown);
        putchar('\n');
        break;
    }
    case KRC_CONFIG_LIST:
    case KRC_CONFIG_PATTERNS: {
        const struct krc_config_list *l = (const void *)(base + o->offset);
        if (l->n == 0) {
            printf("%s: []\n", o->key);
            break;
        }
        printf("%s:\n", o->key);
        for (size_t i = 0; i < l->n; i++) {
            printf("  - ");
            print_quoted(l->items[i]);
            putchar('\n');
        }
        break;
    }
    case KRC_CONFIG_INT:
        printf("%s: %ld\n", o->key, *(const long *)(base + o->offset));
        break;
    case KRC_CONFIG_DURATION:
        print_duration(o->key, *(const long *)(base + o->offset));
        break;
    case KRC_CONFIG_BOOL:
        printf("%s: %s\n", o->key, *(const int *)(base + o->offset) ? "true" : "false");
        break;
    case KRC_CONFIG_ROUTES:
        if (cfg->n_routes == 0) {
            printf("routes: []\n");
            break;
        }
        printf("routes:\n");
        for (size_t i = 0; i < cfg->n_routes; i++) {
            const struct krc_route *r = &cfg->routes[i];
            printf("  - # route %zu\n", i);
            print_pattern_field("namespace", r->namespace.text);
            print_pattern_field("pod", r->pod.text);
            print_pattern_field("container", r->container.text);
            if (r->webhook_url != NULL) {
                printf("    webhookUrl: \"[REDACTED]\"\n");
            }
            print_pattern_field("channel", r->channel);
            if (r->n_dests > 0) {
                printf("    destinations: [");
                for (size_t k = 0; k < r->n_dests; k++) {
                    printf("%s", k ? ", " : "");
                    print_quoted(r->dests[k].name);
                }
                printf("]\n");
            }
        }
        break;
    case KRC_CONFIG_DESTINATIONS:
        print_destinations(cfg);
        break;
    case KRC_CONFIG_SILENCES:
        if (cfg->n_silences == 0) {
            printf("silences: []\n");
            break;
        }
        printf("silences:\n");
        for (size_t i = 0; i < cfg->n_silences; i++) {
            const struct krc_silence *x = &cfg->silences[i];
            printf("  - # silence %zu\n", i);
            print_pattern_field("namespace", x->namespace.text);
            print_pattern_field("pod", x->pod.text);
            print_pattern_field("container", x->container.text);
            if (x->start != 0) {
                char t[32];
                krc_clock_format_rfc3339(x->start, t, sizeof(t));
                printf("    start: \"%s\"\n", t);
            }
            if (x->end != 0) {
                char t[32];
                krc_clock_format_rfc3339(x->end, t, sizeof(t));
                printf("    end: \"%s\"\n", t);
            }
            if (x->daily_from != x->daily_to) {
                printf("    daily: \"%02d:%02d-%02d:%02d\"\n", x->daily_from / 60,
                       x->daily_from % 60, x->daily_to / 60, x->daily_to % 60);
            }
            print_pattern_field("reason", x->reason);
        }
        break;
    }
}

static const char *type_name(enum krc_config_type t)
{
    switch (t) {
    case KRC_CONFIG_STRING:
        return "string";
    case KRC_CONFIG_SECRET:
        return "secret string";
    case KRC_CONFIG_INT:
        return "integer";
    case KRC_CONFIG_DURATION:
        return "duration";
    case KRC_CONFIG_BOOL:
        return "boolean";
    case KRC_CONFIG_LIST:
    case KRC_CONFIG_PATTERNS:
        return "list of strings";
    case KRC_CONFIG_ROUTES:
        return "list of routes";
    case KRC_CONFIG_SILENCES:
        return "list of silences";
    case KRC_CONFIG_DESTINATIONS:
        return "list of destinations";
    }
    return "?";
}

static int cmd_keys(void)
{
    printf("| key | environment | flag | type | default | meaning |\n"
           "| --- | --- | --- | --- | --- | --- |\n");
    for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
        printf("| `%s` | %s%s%s | %s%s%s | %s | %s%s%s | %s", o->key, o->env ? "`" : "",
               o->env ? o->env : "-", o->env ? "`" : "", o->flag ? "`--" : "",
               o->flag ? o->flag : "-", o->flag ? "`" : "", type_name(o->type),
               o->default_value[0] ? "`" : "", o->default_value[0] ? o->default_value : "(empty)",
               o->default_value[0] ? "`" : "", o->help);
        if (o->allowed != NULL) {
            printf(" (one of `%s`)", o->allowed);
        }
        if (o->type == KRC_CONFIG_INT || o->type == KRC_CONFIG_DURATION) {
            printf(" (%ld to %ld%s)", o->min, o->max, o->type == KRC_CONFIG_DURATION ? " s" : "");
        }
        printf(" |\n");
    }
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    struct krc_config cfg;
    struct krc_error e;
    char *errors = NULL;
    char *notes = NULL;
    char *db_notes = NULL;
    int rc;

    if (argc != 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    krc_config_init(&cfg);
    krc_error_clear(&e);
    rc = krc_config_check_file(&cfg, argv[1], &errors, &notes, &e);
    if (rc == 0 && cfg.config_file == NULL) {
        cfg.config_file = krc_strdup(argv[1]); /* validate names it: FILE:LINE:COL */
    }
    /* a message that does not name the file yet ("FILE:LINE:COL: ...") gets it in front; the
     * colon matters: a file named "lease" is not named by "leaseRenewDeadline (...)" */
    if (rc == 0 && (rc = krc_config_validate(&cfg, &e)) < 0 &&
        (strncmp(e.msg, argv[1], strlen(argv[1])) != 0 || e.msg[strlen(argv[1])] != ':')) {
        char where[KRC_ERROR_MSG_MAX];
        snprintf(where, sizeof(where), "%s: %s", argv[1], e.msg);
        krc_error_set(&e, rc, "%s", where);
    }
    if (rc == 0) {
        db_notes = krc_config_db_notes(&cfg);
    }
    krc_config_cleanup(&cfg);
    if (rc < 0) {
        put_messages(errors != NULL ? errors : e.msg);
        if (errors == NULL) {
            fputc('\n', stderr);
        }
        krc_free(errors);
        krc_free(notes);
        return EXIT_BAD;
    }
    printf("%s: ok\n", argv[1]);
    /* Not mistakes of the file, but what krc run here would stop at. */
    put_notes(notes);
    krc_free(notes);
    put_notes(db_notes);
    krc_free(db_notes);
    return 0;
}

static int cmd_print(int argc, char **argv)
{
    struct krc_config cfg;
    struct krc_error e;
    const char *file = NULL;
    char *typos;
    int rc = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            file = argv[i] + 9;
        } else {
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    krc_config_init(&cfg);
    krc_error_clear(&e);
    if (file != NULL) {
        char *errors = NULL;
        if (krc_config_load_file(&cfg, file, &errors, &e) < 0) {
            put_messages(errors != NULL ? errors : e.msg);
            krc_free(errors);
            krc_config_cleanup(&cfg);
            return EXIT_BAD;
        }
    }
    typos = krc_config_env_typos();
    if (typos != NULL) {
        put_messages(typos);
        krc_free(typos);
    }
    if (krc_config_load_env(&cfg, &e) < 0) {
        put_messages(e.msg);
        fputc('\n', stderr);
        rc = EXIT_BAD;
    } else {
        printf("# effective configuration: defaults < %s < environment\n",
               file != NULL ? file : "(no file)");
        for (const struct krc_config_option *o = krc_config_options(); o->key != NULL; o++) {
            print_value(&cfg, o);
        }
    }
    krc_config_cleanup(&cfg);
    return rc;
}

int krc_config_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "check") == 0) {
        return cmd_check(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "print") == 0) {
        return cmd_print(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "keys") == 0) {
        return cmd_keys();
    }
    fprintf(stderr, "krc config: unknown subcommand \"%s\"\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
