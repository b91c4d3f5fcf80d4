#include "krc/config/destinations.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/yaml_doc.h"

#define COMMON_KEYS "name|type|default"
#define URL_KEYS "url|urlEnv|urlFile"
#define SECRET_MAX (64 * 1024)
#define NAME_MAX_LEN 40

/* The one table of destination types (kubernetes-event: the Event on the
 * pod, a sink of its own). */
static const struct krc_dest_type_info types[] = {
    {KRC_DEST_SLACK_WEBHOOK, "slack-webhook", COMMON_KEYS "|" URL_KEYS "|channel", 1, 1, NULL, NULL,
     "a Slack incoming webhook"},
    {KRC_DEST_SLACK_API, "slack-api", COMMON_KEYS "|tokenEnv|tokenFile|channel|apiUrl", 0, 0, NULL,
     "token", "the Slack Web API (a bot token and a channel)"},
    {KRC_DEST_PAGERDUTY, "pagerduty", COMMON_KEYS "|routingKeyEnv|routingKeyFile|url", 2, 0,
     "https://events.pagerduty.com/v2/enqueue", "routingKey", "PagerDuty Events API v2"},
    {KRC_DEST_TEAMS, "teams", COMMON_KEYS "|" URL_KEYS, 1, 1, NULL, NULL,
     "a Microsoft Teams Workflows webhook"},
    {KRC_DEST_GOOGLE_CHAT, "google-chat", COMMON_KEYS "|" URL_KEYS, 1, 1, NULL, NULL,
     "a Google Chat incoming webhook"},
    {KRC_DEST_WEBHOOK, "webhook", COMMON_KEYS "|" URL_KEYS "|secretEnv|secretFile|headersFile", 1,
     0, NULL, "secret", "the report as signed JSON (HMAC-SHA256)"},
    {KRC_DEST_KUBERNETES_EVENT, "kubernetes-event", COMMON_KEYS, 0, 0, NULL, NULL,
     "an Event on the pod (events.k8s.io/v1)"},
};

#define N_TYPES (sizeof(types) / sizeof(types[0]))

const struct krc_dest_type_info *krc_dest_types(size_t *ret_n)
{
    *ret_n = N_TYPES;
    return types;
}

const struct krc_dest_type_info *krc_dest_type_find(const char *name)
{
    for (size_t i = 0; i < N_TYPES; i++) {
        if (strcmp(types[i].name, name) == 0) {
            return &types[i];
        }
    }
    return NULL;
}

const struct krc_dest_type_info *krc_dest_type_info(enum krc_dest_type t)
{
    for (size_t i = 0; i < N_TYPES; i++) {
        if (types[i].type == t) {
            return &types[i];
        }
    }
    return NULL;
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

int krc_dest_url_allowed(const char *url)
{
    const char *host;
    size_t hl;

    if (strncasecmp(url, "https://", 8) == 0) {
        return url[8] != '\0' && url[8] != '/';
    }
    if (strncasecmp(url, "http://", 7) != 0) {
        return 0;
    }
    host = url + 7;
    if (strchr(host, '@') != NULL && strchr(host, '@') < host + strcspn(host, "/?#")) {
        host = strchr(host, '@') + 1;
    }
    if (host[0] == '[') {
        return strncmp(host, "[::1]", 5) == 0 && strchr(":/?#", host[5] ? host[5] : '/') != NULL;
    }
    hl = strcspn(host, ":/?#");
    if ((hl == 9 && strncasecmp(host, "localhost", 9) == 0)) {
        return 1;
    }
    if (hl >= 9 && strncmp(host, "127.", 4) == 0) {
        for (size_t i = 4; i < hl; i++) {
            if (!((host[i] >= '0' && host[i] <= '9') || host[i] == '.')) {
                return 0;
            }
        }
        return 1;
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

/* Header lines "Name: value" (a Secret mounted as a file): each must have
 * a token name and no line breaks inside. */
static int check_headers(const char *h, char *why, size_t whysz)
{
    size_t line = 1;

    for (const char *p = h; *p != '\0'; line++) {
        const char *nl = strchr(p, '\n');
        size_t l = nl != NULL ? (size_t)(nl - p) : strlen(p);
        const char *colon = memchr(p, ':', l);
        if (l > 0 && p[l - 1] == '\r') {
            l--;
        }
        if (l > 0) {
            if (colon == NULL || colon == p) {
                snprintf(why, whysz, "line %zu is not \"Name: value\"", line);
                return -1;
            }
            for (const char *c = p; c < colon; c++) {
                if (*c <= ' ' || *c >= 127 || strchr("()<>@,;:\\\"/[]?={}", *c) != NULL) {
                    snprintf(why, whysz, "line %zu: the header name has a character not allowed",
                             line);
                    return -1;
                }
            }
        }
        p = nl != NULL ? nl + 1 : p + strlen(p);
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
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s): unknown key \"%s\" (allowed: %s)",
                   w->path, k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0,
                   w->idx, w->dname, key ? key : "", allowed);
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

/* The type of mapping m, or NULL (reported). */
static const struct krc_dest_type_info *dest_type(yaml_document_t *doc, yaml_node_t *m,
                                                  const struct where *w)
{
    yaml_node_t *tn = krc_yaml_doc_map_get(doc, m, "type");
    const char *t = krc_yaml_doc_scalar(tn);
    const struct krc_dest_type_info *ti;
    const char *names[N_TYPES];
    char list[256] = "";

    if (t == NULL || t[0] == '\0') {
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s) needs a type", w->path,
               m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname);
        return NULL;
    }
    ti = krc_dest_type_find(t);
    if (ti != NULL) {
        return ti;
    }
    for (size_t i = 0; i < N_TYPES; i++) {
        names[i] = types[i].name;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 types[i].name);
    }
    {
        const char *near = nearest(t, names, N_TYPES);
        char mean[96] = "";
        if (near != NULL) {
            snprintf(mean, sizeof(mean), "did you mean \"%s\"? ", near);
        }
        report(w->rep,
               "%s:%zu:%zu: destinations[%zu] (%s).type: unknown destination type \"%s\" "
               "(%stypes: %s)",
               w->path, tn->start_mark.line + 1, tn->start_mark.column + 1, w->idx, w->dname, t,
               mean, list);
    }
    return NULL;
}

/* The url of a destination: given, resolved and allowed. */
static void dest_url(yaml_document_t *doc, yaml_node_t *m, const struct krc_dest_type_info *ti,
                     const struct where *w, struct krc_destination *d)
{
    yaml_node_t *un = krc_yaml_doc_map_get(doc, m, "url");
    int unavailable;

    unavailable = 0;
    if (key_allowed(ti->keys, "urlEnv")) {
        unavailable = load_secret(doc, m, "url", 1, w, &d->url, &d->url_src);
    } else {
        const char *u = krc_yaml_doc_scalar(un);
        d->url = u != NULL && u[0] != '\0' ? krc_strdup(u) : NULL;
    }
    if (d->url == NULL && !unavailable && ti->default_url != NULL) {
        d->url = krc_strdup(ti->default_url);
    }
    if (d->url == NULL) {
        if (!unavailable) {
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s): a %s destination needs url%s",
                   w->path, m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname,
                   ti->name, key_allowed(ti->keys, "urlEnv") ? ", urlEnv or urlFile" : "");
        }
        return;
    }
    if (!krc_dest_url_allowed(d->url)) {
        yaml_node_t *at = un != NULL ? un : m;
        /* the URL may be a secret: name where it came from, never its text */
        report(w->rep,
               "%s:%zu:%zu: destinations[%zu] (%s): the url must be https:// (http:// only "
               "to localhost, 127.0.0.0/8 or [::1])",
               w->path, at->start_mark.line + 1, at->start_mark.column + 1, w->idx, w->dname);
    }
}

static void dest_secret(yaml_document_t *doc, yaml_node_t *m, const struct krc_dest_type_info *ti,
                        const struct where *w, struct krc_destination *d)
{
    char why[160];

    if (ti->secret != NULL &&
        load_secret(doc, m, ti->secret, 0, w, &d->secret, &d->secret_src) == 0 &&
        d->secret == NULL) {
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s): a %s destination needs %sEnv or %sFile",
               w->path, m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname,
               ti->name, ti->secret, ti->secret);
    }
    if (ti->type == KRC_DEST_PAGERDUTY && d->secret != NULL && strlen(d->secret) != 32) {
        report(w->rep,
               "%s:%zu:%zu: destinations[%zu] (%s): the routing key must be 32 characters "
               "(an Events API v2 integration key), not %zu",
               w->path, m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname,
               strlen(d->secret));
    }
    if (ti->type == KRC_DEST_WEBHOOK && key_allowed(ti->keys, "headersFile")) {
        yaml_node_t *hn = krc_yaml_doc_map_get(doc, m, "headersFile");
        const char *hf = krc_yaml_doc_scalar(hn);
        if (hf != NULL && hf[0] != '\0' &&
            load_secret(doc, m, "headers", 0, w, &d->headers, &d->headers_src) == 0 &&
            d->headers != NULL && check_headers(d->headers, why, sizeof(why)) < 0) {
            report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).headersFile: %s: %s", w->path,
                   hn->start_mark.line + 1, hn->start_mark.column + 1, w->idx, w->dname, hf, why);
        }
    }
}

static int dest_one(yaml_document_t *doc, yaml_node_t *m, struct where *w,
                    struct krc_destination *all, size_t n_done, struct krc_destination *d)
{
    yaml_node_t *nn = krc_yaml_doc_map_get(doc, m, "name");
    const char *name = krc_yaml_doc_scalar(nn);
    const char *dflt = krc_yaml_doc_scalar(krc_yaml_doc_map_get(doc, m, "default"));
    const struct krc_dest_type_info *ti;

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
    ti = dest_type(doc, m, w);
    if (ti == NULL || check_dest_keys(doc, m, ti->keys, w)) {
        return KRC_EINVAL;
    }
    memset(d, 0, sizeof(*d));
    d->name = krc_strdup(name);
    d->type = ti->type;
    d->line = m->start_mark.line + 1;
    d->column = m->start_mark.column + 1;
    d->is_default = dflt != NULL && (strcmp(dflt, "true") == 0 || strcmp(dflt, "yes") == 0);
    if (dflt != NULL && !d->is_default && strcmp(dflt, "false") != 0 && strcmp(dflt, "no") != 0) {
        report(w->rep, "%s:%zu:%zu: destinations[%zu] (%s).default must be true or false", w->path,
               m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname);
    }
    if (ti->url != 0) {
        dest_url(doc, m, ti, w, d);
    }
    dest_secret(doc, m, ti, w, d);
    if (key_allowed(ti->keys, "channel")) {
        const char *c = krc_yaml_doc_scalar(krc_yaml_doc_map_get(doc, m, "channel"));
        d->channel = c != NULL && c[0] != '\0' ? krc_strdup(c) : NULL;
    }
    if (ti->type == KRC_DEST_SLACK_API) {
        const char *a = krc_yaml_doc_scalar(krc_yaml_doc_map_get(doc, m, "apiUrl"));
        d->api_url = a != NULL && a[0] != '\0' ? krc_strdup(a) : NULL;
        if (d->channel == NULL) {
            report(w->rep,
                   "%s:%zu:%zu: destinations[%zu] (%s): a slack-api destination needs a "
                   "channel",
                   w->path, m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname);
        }
        if (d->api_url != NULL && !krc_dest_url_allowed(d->api_url)) {
            report(w->rep,
                   "%s:%zu:%zu: destinations[%zu] (%s): apiUrl must be https:// (http:// "
                   "only to localhost, 127.0.0.0/8 or [::1])",
                   w->path, m->start_mark.line + 1, m->start_mark.column + 1, w->idx, w->dname);
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
        if (str_differ(a[i].name, b[i].name) || a[i].type != b[i].type ||
            str_differ(a[i].url, b[i].url) || str_differ(a[i].secret, b[i].secret) ||
            str_differ(a[i].channel, b[i].channel) || str_differ(a[i].headers, b[i].headers) ||
            str_differ(a[i].api_url, b[i].api_url) || a[i].is_default != b[i].is_default) {
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
