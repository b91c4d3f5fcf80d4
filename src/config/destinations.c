#include "krc/config/destinations.h"
#include "krc/config/config_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/url.h"
#include "krc/util/yaml_doc.h"

#define COMMON_KEYS "name|type|default"
#define SECRET_MAX (64 * 1024)
#define NAME_MAX_LEN 40

#define MAX_KINDS 32

static const struct krc_dest_schema *const *kinds;
static size_t n_kinds;

void krc_dest_schemas_set(const struct krc_dest_schema *const *v, size_t n)
{
    kinds = v;
    n_kinds = n;
}

const struct krc_dest_schema *krc_dest_schema_find(const char *name)
{
    for (size_t i = 0; i < n_kinds; i++) {
        if (strcmp(kinds[i]->name, name) == 0) {
            return kinds[i];
        }
    }
    return NULL;
}

static char *nonempty_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? (char *)s : NULL;
}

void krc_dest_slack_env(const char *webhook_url, const char *channel, const char *bot_token,
                        const char *api_url, struct krc_destination *ret)
{
    int api = nonempty_or_null(bot_token) != NULL;

    memset(ret, 0, sizeof(*ret));
    ret->name = (char *)KRC_DEST_SLACK_ENV_NAME;
    ret->kind = krc_dest_schema_find(api ? "slack-api" : "slack-webhook");
    ret->url = api ? NULL : nonempty_or_null(webhook_url);
    ret->secret = api ? (char *)bot_token : NULL;
    ret->channel = nonempty_or_null(channel);
    ret->api_url = api ? nonempty_or_null(api_url) : NULL;
    ret->implicit = 1;
}

int krc_dest_is(const struct krc_destination *d, const char *kind)
{
    return d->kind != NULL && strcmp(d->kind->name, kind) == 0;
}

int krc_dest_url_hidden(const struct krc_destination *d)
{
    for (size_t i = 0; d->kind != NULL && i < d->kind->n_settings; i++) {
        const struct krc_dest_setting *st = &d->kind->settings[i];
        if (st->offset == offsetof(struct krc_destination, url)) {
            return (st->flags & KRC_DEST_HIDDEN) != 0;
        }
    }
    return 0;
}

static void report(const struct krc_dest_report *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report(const struct krc_dest_report *rep, const char *fmt, ...)
{
    char msg[KRC_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rep->error(rep->ctx, msg);
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a);
    size_t lb = strlen(b);
    size_t row[64];

    if (la >= 63 || lb >= 63) {
        return 99;
    }
    for (size_t j = 0; j <= lb; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The nearest of `names` ("a|b|c" or an array) within a typo's distance. */
static const char *nearest(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = 4;
    size_t wl = strlen(word);
    size_t limit = wl / 4 < 1 ? 1 : wl / 4 > 3 ? 3 : wl / 4;

    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, names[i]);
        if (d <= limit && d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

static int key_allowed(const char *allowed, const char *key)
{
    size_t kl = strlen(key);

    for (const char *p = allowed; *p != '\0';) {
        const char *bar = strchr(p, '|');
        size_t l = bar != NULL ? (size_t)(bar - p) : strlen(p);
        if (l == kl && strncmp(p, key, l) == 0) {
            return 1;
        }
        p = bar != NULL ? bar + 1 : p + l;
    }
    return 0;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > NAME_MAX_LEN || s[0] == '-' || s[n - 1] == '-') {
        return 0;
    }
    for (const char *p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
            return 0;
        }
    }
    return 1;
}

static const struct krc_dest_setting *setting_of(const struct krc_dest_schema *k, const char *key)
{
    for (size_t i = 0; k != NULL && key != NULL && i < k->n_settings; i++) {
        if (strcmp(k->settings[i].key, key) == 0) {
            return &k->settings[i];
        }
    }
    return NULL;
}

int krc_dest_check_url(const struct krc_dest_schema *k, const char *key, const char *url,
                       int allow_http, const char *optin, char *why, size_t whysz)
{
    struct krc_url_parts u;
    const struct krc_dest_setting *st;

    if (strcmp(url, "[REDACTED]") == 0) {
        snprintf(why, whysz,
                 "is the placeholder krc config print writes for a secret: give the real one");
        return -1;
    }
    switch (krc_url_split(url, &u)) {
    case KRC_URL_OK:
        break;
    case KRC_URL_NO_SCHEME:
        snprintf(why, whysz,
                 "has no scheme: write it as https://HOST/... (without one it would be taken "
                 "for a host name)");
        return -1;
    case KRC_URL_BAD_SCHEME:
        snprintf(why, whysz, "does not start with a valid scheme; it must be https://");
        return -1;
    case KRC_URL_NO_HOST:
        snprintf(why, whysz, "names no host (https://HOST/...)");
        return -1;
    case KRC_URL_BAD_PORT:
        snprintf(why, whysz, "has a bad port (a number from 1 to 65535 after the host)");
        return -1;
    case KRC_URL_BAD_CHAR:
        snprintf(why, whysz,
                 "contains a space or a control character (a line break copied with it?)");
        return -1;
    }
    if (u.scheme_len == 5 && strncasecmp(u.scheme, "https", 5) == 0) {
        /* the provider's rules below */
    } else if (u.scheme_len == 4 && strncasecmp(u.scheme, "http", 4) == 0) {
        if (!allow_http && !krc_url_host_is_loopback(u.host, u.host_len)) {
            /* not the host: a webhook URL's host may tell where its secret goes */
            snprintf(why, whysz,
                     "is plain http:// to a host that is not loopback: the URL and its token "
                     "would cross the network unencrypted; use https://%s%s",
                     optin != NULL ? ", or set " : "", optin != NULL ? optin : "");
            return -1;
        }
    } else {
        snprintf(why, whysz, "has the scheme \"%.*s://\"; it must be https://%s",
                 (int)(u.scheme_len < 16 ? u.scheme_len : 16), u.scheme,
                 u.scheme_len == 4 && strncasecmp(u.scheme, "htps", 4) == 0 ? " (a typo?)" : "");
        return -1;
    }
    st = setting_of(k, key);
    if (st != NULL && st->check != NULL && st->check(url, why, whysz) < 0) {
        return -1;
    }
    return 0;
}

/* A file's contents without trailing newlines (a mounted Secret's value). */
static int read_secret_file(const char *file, char **ret, char *why, size_t whysz)
{
    FILE *fp = fopen(file, "rb");
    char *buf;
    size_t len;

    if (fp == NULL) {
        snprintf(why, whysz, "%s", KRC_ERRNO_STR(errno));
        return errno == ENOENT ? KRC_ENOTFOUND : KRC_EIO;
    }
    buf = krc_malloc(SECRET_MAX + 1);
    if (buf == NULL) {
        fclose(fp);
        return KRC_ENOMEM;
    }
    len = fread(buf, 1, SECRET_MAX + 1, fp);
    fclose(fp);
    if (len > SECRET_MAX) {
        krc_free(buf);
        snprintf(why, whysz, "larger than %d bytes", SECRET_MAX);
        return KRC_ETOOBIG;
    }
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) {
        len--;
    }
    buf[len] = '\0';
    *ret = buf;
    return 0;
}

struct where {
    const char *path;
    size_t idx;
    const char *dname;
    const struct krc_dest_report *rep;
};

/* A secret given as `<stem>Env` or `<stem>File` (or, for a url, `url`):
 * *ret the value, or NULL. 1 when given but not available here and the
 * caller runs `config check` (a note was written), 0 otherwise; errors are
 * reported. */
static int load_secret(yaml_document_t *doc, yaml_node_t *m, const char *stem, int inline_ok,
                       const struct where *w, char **ret, char **ret_src)
{
    char key_env[64];
    char key_file[64];
    yaml_node_t *n_env =
        krc_yaml_doc_map_get(doc, m, (snprintf(key_env, sizeof(key_env), "%sEnv", stem), key_env));
    yaml_node_t *n_file = krc_yaml_doc_map_get(
        doc, m, (snprintf(key_file, sizeof(key_file), "%sFile", stem), key_file));
    yaml_node_t *n_inline = inline_ok ? krc_yaml_doc_map_get(doc, m, stem) : NULL;
    const char *v_env = krc_yaml_doc_scalar(n_env);
    const char *v_file = krc_yaml_doc_scalar(n_file);
    const char *v_inline = krc_yaml_doc_scalar(n_inline);
    int given = (v_env && v_env[0]) + (v_file && v_file[0]) + (v_inline && v_inline[0]);
    yaml_node_t *at = n_env ? n_env : n_file ? n_file : n_inline ? n_inline : m;

    *ret = NULL;
    if (given == 1) {
        /* where it comes from (not the secret): "routingKeyEnv: NAME" for config print */
        const char *k = v_env && v_env[0] ? key_env : v_file && v_file[0] ? key_file : stem;
        const char *v = v_env && v_env[0] ? v_env : v_file && v_file[0] ? v_file : NULL;
        char src[1024];
        snprintf(src, sizeof(src), "%s: %s", k, v != NULL ? v : "");
        krc_free(*ret_src);
        *ret_src = v != NULL ? krc_strdup(src) : NULL;
    }
    if (given > 1) {
        report(w->rep,
               "%s:%zu:%zu: destinations[%zu] (%s): give only one of %s%s, %sEnv and %sFile",
               w->path, at->start_mark.line + 1, at->start_mark.column + 1, w->idx, w->dname,
               inline_ok ? stem : "", inline_ok ? "," : "", stem, stem);
        return 0;
    }
    if (v_inline != NULL && v_inline[0] != '\0') {
        *ret = krc_strdup(v_inline);
        return 0;
    }
    if (n_env != NULL && v_env != NULL && v_env[0] != '\0') {
        const char *v = getenv(v_env);
        if (v != NULL && v[0] != '\0') {
            *ret = krc_strdup(v);
            return 0;
        }
        if (w->rep->notes != NULL) {
            krc_buf_printf(w->rep->notes,
                           "%s:%zu:%zu: destinations[%zu] (%s).%s: environment variable %s is "
                           "not set here; krc run will need it\n",
                           w->path, n_env->start_mark.line + 1, n_env->start_mark.column + 1,
                           w->idx, w->dname, key_env, v_env);
            return 1;
        }
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).%s: environment variable %s is not set",
               w->path, n_env->start_mark.line + 1, n_env->start_mark.column + 1, w->idx, w->dname,
               key_env, v_env);
        return 0;
    }
    if (n_file != NULL && v_file != NULL && v_file[0] != '\0') {
        char why[160];
        int rc = read_secret_file(v_file, ret, why, sizeof(why));
        if (rc == 0) {
            return 0;
        }
        if (rc == KRC_ENOTFOUND && w->rep->notes != NULL) {
            krc_buf_printf(w->rep->notes,
                           "%s:%zu:%zu: destinations[%zu] (%s).%s: %s does not exist here; "
                           "krc run will need it\n",
                           w->path, n_file->start_mark.line + 1, n_file->start_mark.column + 1,
                           w->idx, w->dname, key_file, v_file);
            return 1;
        }
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).%s: cannot read %s: %s", w->path,
               n_file->start_mark.line + 1, n_file->start_mark.column + 1, w->idx, w->dname,
               key_file, v_file, why);
    }
    return 0;
}

static int check_dest_keys(yaml_document_t *doc, yaml_node_t *m, const char *allowed,
                           const struct where *w)
{
    int bad = 0;

    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(doc, pr->value);
        const char *key = krc_yaml_doc_scalar(k);
        if (key == NULL || !key_allowed(allowed, key)) {
            char mean[160] = "";
            if (key != NULL) {
                krc_config_suggest_allowed(key, allowed, mean, sizeof(mean));
            }
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s): unknown key \"%s\" (%sallowed: %s)",
                   w->path, k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0,
                   w->idx, w->dname, key ? key : "", mean, allowed);
            bad = 1;
        } else if (v == NULL || v->type != YAML_SCALAR_NODE) {
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).%s must be a single value", w->path,
                   v ? v->start_mark.line + 1 : 0, v ? v->start_mark.column + 1 : 0, w->idx,
                   w->dname, key);
            bad = 1;
        }
    }
    return bad;
}

/* The keys a kind allows, "name|type|default|url|urlEnv|urlFile|channel",
 * in the order of its table. */
static void allowed_keys(const struct krc_dest_schema *k, char *out, size_t outsz)
{
    int endpoint = 0;

    for (size_t i = 0; i < k->n_settings; i++) {
        endpoint |= k->settings[i].type == KRC_DEST_URL || (k->settings[i].flags & KRC_DEST_INLINE);
    }
    /* the opt-in to plain http, for a kind that has an endpoint */
    snprintf(out, outsz, "%s%s", COMMON_KEYS, endpoint ? "|allowInsecureHttp" : "");
    for (size_t i = 0; i < k->n_settings; i++) {
        const struct krc_dest_setting *st = &k->settings[i];
        size_t l = strlen(out);
        if (st->type != KRC_DEST_SECRET) {
            snprintf(out + l, outsz - l, "|%s", st->key);
            continue;
        }
        if (st->flags & KRC_DEST_INLINE) {
            snprintf(out + l, outsz - l, "|%s", st->key);
            l = strlen(out);
        }
        if (!(st->flags & KRC_DEST_FILE_ONLY)) {
            snprintf(out + l, outsz - l, "|%sEnv", st->key);
            l = strlen(out);
        }
        snprintf(out + l, outsz - l, "|%sFile", st->key);
    }
}

/* The kind of mapping m, or NULL (reported). */
static const struct krc_dest_schema *dest_kind(yaml_document_t *doc, yaml_node_t *m,
                                               const struct where *w)
{
    yaml_node_t *tn = krc_yaml_doc_map_get(doc, m, "type");
    const char *t = krc_yaml_doc_scalar(tn);
    const struct krc_dest_schema *k;
    const char *names[MAX_KINDS];
    size_t n = n_kinds < MAX_KINDS ? n_kinds : MAX_KINDS;
    char list[512] = "";
    const char *near;
    char mean[96] = "";

    if (t == NULL || t[0] == '\0') {
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s) needs a type", w->path,
               m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname);
        return NULL;
    }
    k = krc_dest_schema_find(t);
    if (k != NULL) {
        return k;
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = kinds[i]->name;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 kinds[i]->name);
    }
    near = nearest(t, names, n);
    if (near != NULL) {
        snprintf(mean, sizeof(mean), "did you mean \"%s\"? ", near);
    }
    report(w->rep,
           "%s:%zu:%zu: destinations[%zu] (%s).type: unknown destination type \"%s\" "
           "(%stypes: %s)",
           w->path, tn->start_mark.line + 1, tn->start_mark.column + 1, w->idx, w->dname, t, mean,
           list);
    return NULL;
}

static char **field(struct krc_destination *d, size_t offset)
{
    return (char **)(void *)((char *)d + offset);
}

/* A setting's value is missing: "a pagerduty destination needs
 * routingKeyEnv or routingKeyFile". */
static void report_missing(const struct krc_dest_setting *st, const char *kind, yaml_node_t *m,
                           const struct where *w)
{
    char need[160];

    if (st->type == KRC_DEST_SECRET && (st->flags & KRC_DEST_INLINE)) {
        snprintf(need, sizeof(need), "%s, %sEnv or %sFile", st->key, st->key, st->key);
    } else if (st->type == KRC_DEST_SECRET) {
        snprintf(need, sizeof(need), "%sEnv or %sFile", st->key, st->key);
    } else if (st->type == KRC_DEST_TEXT) {
        snprintf(need, sizeof(need), "a %s", st->key);
    } else {
        snprintf(need, sizeof(need), "%s", st->key);
    }
    report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s): a %s destination needs %s", w->path,
           m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname, kind, need);
}

/* An endpoint that is neither https nor loopback http. The url may be a
 * secret: the message names where it came from, never its text (a `url`
 * at its node, another key at the destination). */
static void report_url(const struct krc_dest_setting *st, yaml_document_t *doc, yaml_node_t *m,
                       const struct where *w, const char *why)
{
    char key_env[64];
    char key_file[64];
    yaml_node_t *kn = krc_yaml_doc_map_get(doc, m, st->key);
    yaml_node_t *kn_env = krc_yaml_doc_map_get(
        doc, m, (snprintf(key_env, sizeof(key_env), "%sEnv", st->key), key_env));
    yaml_node_t *kn_file = krc_yaml_doc_map_get(
        doc, m, (snprintf(key_file, sizeof(key_file), "%sFile", st->key), key_file));
    yaml_node_t *at = kn != NULL ? kn : kn_env != NULL ? kn_env : kn_file != NULL ? kn_file : m;
    const char *from = kn != NULL ? st->key : kn_env != NULL ? key_env : kn_file ? key_file : NULL;
    const char *src = kn != NULL ? NULL : krc_yaml_doc_scalar(kn_env ? kn_env : kn_file);

    /* "(alerts).urlEnv (SLACK_ALERTS_URL): the URL has no scheme ..." */
    report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).%s%s%s%s: the URL %s", w->path,
           at->start_mark.line + 1, at->start_mark.column + 1, w->idx, w->dname,
           from != NULL ? from : st->key, src != NULL ? " (" : "", src != NULL ? src : "",
           src != NULL ? ")" : "", why);
}

/* The value of one setting: read (a secret from its variable or file),
 * defaulted and checked; every mistake reported. */
static void dest_setting(yaml_document_t *doc, yaml_node_t *m, const struct krc_dest_setting *st,
                         const char *kind, const struct where *w, struct krc_destination *d)
{
    char why[240];
    char **v = field(d, st->offset);
    char **src = st->source != 0 ? field(d, st->source) : NULL;
    char *ignored_src = NULL;
    int unavailable = 0;

    if (st->type == KRC_DEST_SECRET) {
        unavailable = load_secret(doc, m, st->key, (st->flags & KRC_DEST_INLINE) != 0, w, v,
                                  src != NULL ? src : &ignored_src);
        krc_free(ignored_src);
    } else {
        const char *t = krc_yaml_doc_scalar(krc_yaml_doc_map_get(doc, m, st->key));
        *v = t != NULL && t[0] != '\0' ? krc_strdup(t) : NULL;
    }
    if (*v == NULL && !unavailable && st->default_value != NULL) {
        *v = krc_strdup(st->default_value);
    }
    if (*v == NULL) {
        if (!unavailable && (st->flags & KRC_DEST_REQUIRED)) {
            report_missing(st, kind, m, w);
        }
        return;
    }
    if (st->type == KRC_DEST_URL || (st->flags & KRC_DEST_INLINE)) {
        /* the scheme, the host, then the kind's own rules (its check) */
        if (krc_dest_check_url(d->kind, st->key, *v, d->allow_insecure_http,
                               "allowInsecureHttp: true", why, sizeof(why)) < 0) {
            report_url(st, doc, m, w, why);
        }
    } else if (st->check != NULL && st->check(*v, why, sizeof(why)) < 0) {
        if (st->flags & KRC_DEST_CHECK_AT_FILE) {
            char key_file[64];
            yaml_node_t *fn = krc_yaml_doc_map_get(
                doc, m, (snprintf(key_file, sizeof(key_file), "%sFile", st->key), key_file));
            const char *file = krc_yaml_doc_scalar(fn);
            yaml_node_t *at = fn != NULL ? fn : m;
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).%s: %s: %s", w->path,
                   at->start_mark.line + 1, at->start_mark.column + 1, w->idx, w->dname, key_file,
                   file != NULL ? file : "", why);
        } else {
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s): %s", w->path,
                   m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname, why);
        }
    }
}

static int dest_one(yaml_document_t *doc, yaml_node_t *m, struct where *w,
                    struct krc_destination *all, size_t n_done, struct krc_destination *d)
{
    yaml_node_t *nn = krc_yaml_doc_map_get(doc, m, "name");
    const char *name = krc_yaml_doc_scalar(nn);
    const char *dflt = krc_yaml_doc_scalar(krc_yaml_doc_map_get(doc, m, "default"));
    yaml_node_t *in = krc_yaml_doc_map_get(doc, m, "allowInsecureHttp");
    const char *insecure = krc_yaml_doc_scalar(in);
    const struct krc_dest_schema *k;
    char allowed[512];

    w->dname = name != NULL && name[0] != '\0' ? name : "?";
    if (name == NULL || !valid_name(name)) {
        yaml_node_t *at = nn != NULL ? nn : m;
        report(w->rep,
               "%s:%zu:%zu: destinations[%zu] needs a name of lowercase letters, digits "
               "and '-' (at most %d)",
               w->path, at->start_mark.line + 1, at->start_mark.column + 1, w->idx, NAME_MAX_LEN);
        return KRC_EINVAL;
    }
    for (size_t i = 0; i < n_done; i++) {
        if (strcmp(all[i].name, name) == 0) {
            report(w->rep,
                   "%s:%zu:%zu: destinations[%zu]: the name \"%s\" is already used at "
                   "line %zu",
                   w->path, nn->start_mark.line + 1, nn->start_mark.column + 1, w->idx, name,
                   all[i].line);
            return KRC_EINVAL;
        }
    }
    k = dest_kind(doc, m, w);
    if (k == NULL) {
        return KRC_EINVAL;
    }
    allowed_keys(k, allowed, sizeof(allowed));
    if (check_dest_keys(doc, m, allowed, w)) {
        return KRC_EINVAL;
    }
    memset(d, 0, sizeof(*d));
    d->name = krc_strdup(name);
    d->kind = k;
    d->line = m->start_mark.line + 1;
    d->column = m->start_mark.column + 1;
    d->is_default = dflt != NULL && (strcmp(dflt, "true") == 0 || strcmp(dflt, "yes") == 0);
    if (dflt != NULL && !d->is_default && strcmp(dflt, "false") != 0 && strcmp(dflt, "no") != 0) {
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).default must be true or false", w->path,
               m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname);
    }
    d->allow_insecure_http =
        insecure != NULL && (strcmp(insecure, "true") == 0 || strcmp(insecure, "yes") == 0);
    if (insecure != NULL && !d->allow_insecure_http && strcmp(insecure, "false") != 0 &&
        strcmp(insecure, "no") != 0) {
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).allowInsecureHttp must be true or false",
               w->path, in->start_mark.line + 1, in->start_mark.column + 1, w->idx, w->dname);
    }
    /* the endpoint first, then the others in the table's order */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < k->n_settings; i++) {
            if ((k->settings[i].offset == offsetof(struct krc_destination, url)) == (pass == 0)) {
                dest_setting(doc, m, &k->settings[i], k->name, w, d);
            }
        }
    }
    return d->name != NULL ? 0 : KRC_ENOMEM;
}

int krc_destinations_load(yaml_document_t *doc, yaml_node_t *seq, const char *path,
                          const struct krc_dest_report *rep, struct krc_destination **ret,
                          size_t *ret_n)
{
    size_t cap = krc_yaml_doc_seq_len(seq);
    struct krc_destination *v;
    size_t n = 0;
    size_t idx = 0;

    *ret = NULL;
    *ret_n = 0;
    if (cap == 0) {
        return 0;
    }
    v = krc_calloc(cap, sizeof(*v));
    if (v == NULL) {
        return KRC_ENOMEM;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, idx++) {
        yaml_node_t *m = yaml_document_get_node(doc, *it);
        struct where w = {path, idx, "?", rep};
        if (m == NULL || m->type != YAML_MAPPING_NODE) {
            report(rep, "%s:%zu:%zu: destinations[%zu] must be a mapping (name, type, ...)", path,
                   m ? m->start_mark.line + 1 : 0, m ? m->start_mark.column + 1 : 0, idx);
            continue;
        }
        if (dest_one(doc, m, &w, v, n, &v[n]) == KRC_ENOMEM) {
            krc_destinations_free(v, n + 1);
            return KRC_ENOMEM;
        }
        if (v[n].name != NULL) {
            n++;
        }
    }
    *ret = v;
    *ret_n = n;
    return 0;
}

void krc_destinations_free(struct krc_destination *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++) {
        krc_free(v[i].name);
        krc_free(v[i].url);
        krc_free(v[i].secret);
        krc_free(v[i].channel);
        krc_free(v[i].headers);
        krc_free(v[i].api_url);
        krc_free(v[i].url_src);
        krc_free(v[i].secret_src);
        krc_free(v[i].headers_src);
        for (size_t k = 0; k < KRC_DEST_EXTRA_MAX; k++) {
            krc_free(v[i].extra[k]);
        }
    }
    krc_free(v);
}

static int str_differ(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") != 0;
}

int krc_destinations_differ(const struct krc_destination *a, size_t na,
                            const struct krc_destination *b, size_t nb)
{
    if (na != nb) {
        return 1;
    }
    for (size_t i = 0; i < na; i++) {
        for (size_t k = 0; k < KRC_DEST_EXTRA_MAX; k++) {
            if (str_differ(a[i].extra[k], b[i].extra[k])) {
                return 1;
            }
        }
        if (str_differ(a[i].name, b[i].name) || a[i].kind != b[i].kind ||
            str_differ(a[i].url, b[i].url) || str_differ(a[i].secret, b[i].secret) ||
            str_differ(a[i].channel, b[i].channel) || str_differ(a[i].headers, b[i].headers) ||
            str_differ(a[i].api_url, b[i].api_url) || a[i].is_default != b[i].is_default ||
            a[i].allow_insecure_http != b[i].allow_insecure_http) {
            return 1;
        }
    }
    return 0;
}

static int route_dest_add(struct krc_route_dest *v, size_t *n, const yaml_node_t *item)
{
    v[*n].name = krc_strdup((const char *)item->data.scalar.value);
    v[*n].line = item->start_mark.line + 1;
    v[*n].column = item->start_mark.column + 1;
    if (v[*n].name == NULL) {
        return KRC_ENOMEM;
    }
    (*n)++;
    return 0;
}

int krc_route_dests_load(yaml_document_t *doc, yaml_node_t *v, const char *path, size_t route,
                         const struct krc_dest_report *rep, struct krc_route_dest **ret,
                         size_t *ret_n)
{
    size_t cap = v->type == YAML_SEQUENCE_NODE ? krc_yaml_doc_seq_len(v) : 1;
    struct krc_route_dest *out;
    size_t n = 0;

    *ret = NULL;
    *ret_n = 0;
    if (cap == 0 || (v->type == YAML_SCALAR_NODE && krc_yaml_doc_is_null(v, 1))) {
        return 0;
    }
    out = krc_calloc(cap, sizeof(*out));
    if (out == NULL) {
        return KRC_ENOMEM;
    }
    if (v->type == YAML_SCALAR_NODE) {
        if (route_dest_add(out, &n, v) < 0) {
            krc_route_dests_free(out, n);
            return KRC_ENOMEM;
        }
    } else if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            yaml_node_t *item = yaml_document_get_node(doc, *it);
            if (item == NULL || item->type != YAML_SCALAR_NODE) {
                report(rep, "%s:%zu:%zu: routes[%zu].destinations: items must be destination names",
                       path, item ? item->start_mark.line + 1 : 0,
                       item ? item->start_mark.column + 1 : 0, route);
                continue;
            }
            if (route_dest_add(out, &n, item) < 0) {
                krc_route_dests_free(out, n);
                return KRC_ENOMEM;
            }
        }
    } else {
        report(rep, "%s:%zu:%zu: routes[%zu].destinations must be a list of destination names",
               path, v->start_mark.line + 1, v->start_mark.column + 1, route);
    }
    *ret = out;
    *ret_n = n;
    return 0;
}

void krc_route_dests_free(struct krc_route_dest *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++) {
        krc_free(v[i].name);
    }
    krc_free(v);
}

void krc_route_dests_resolve(struct krc_route_dest *v, size_t n, size_t route,
                             const struct krc_destination *dests, size_t n_dests, const char *path,
                             const struct krc_dest_report *rep)
{
    for (size_t i = 0; i < n; i++) {
        const char *names[64];
        size_t k = 0;
        const char *near;
        char mean[96] = "";
        int found = 0;

        for (size_t j = 0; j < n_dests; j++) {
            if (strcmp(dests[j].name, v[i].name) == 0) {
                v[i].index = j;
                found = 1;
                break;
            }
            if (k < 64) {
                names[k++] = dests[j].name;
            }
        }
        if (found) {
            continue;
        }
        near = nearest(v[i].name, names, k);
        if (near != NULL) {
            snprintf(mean, sizeof(mean), " (did you mean \"%s\"?)", near);
        }
        report(rep, "%s:%zu:%zu: routes[%zu].destinations: no destination is named \"%s\"%s", path,
               v[i].line, v[i].column, route, v[i].name,
               n_dests == 0 ? " (destinations: is empty)" : mean);
    }
}
