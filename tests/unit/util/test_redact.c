/* redact: every built-in pattern (positive and negative cases), the extra
 * regexes, raw bytes, truncated key blocks, speed on adversarial input and
 * allocation failures. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

#define R "[REDACTED]"

/* Redact `len` bytes (copied to an exact-size heap block so ASan sees any
 * over-read); returns the output (caller frees) and the count. */
static char *red_n(const struct krc_redactor *rd, const char *in, size_t len, int *ret_count)
{
    struct krc_buf b;
    struct krc_error err;
    char *copy = malloc(len ? len : 1);
    char *s;
    int n;

    assert_non_null(copy);
    memcpy(copy, in, len);
    krc_buf_init(&b, 1 << 24);
    krc_error_clear(&err);
    n = krc_redact_apply(rd, copy, len, &b, &err);
    free(copy);
    assert_true(n >= 0);
    if (ret_count != NULL) {
        *ret_count = n;
    }
    s = krc_buf_take(&b);
    assert_non_null(s);
    krc_buf_cleanup(&b);
    return s;
}

static void expect(const struct krc_redactor *rd, const char *in, const char *want, int count)
{
    int n = -1;
    char *s = red_n(rd, in, strlen(in), &n);

    if (strcmp(s, want) != 0 || n != count) {
        print_error("input:    %s\nexpected: %s (%d)\ngot:      %s (%d)\n", in, want, count, s, n);
    }
    assert_string_equal(s, want);
    assert_int_equal(n, count);
    krc_free(s);
}

/* the text must come out unchanged */
static void keep(const char *in)
{
    expect(NULL, in, in, 0);
}

static void test_bearer_and_authorization(void **state)
{
    (void)state;
    expect(NULL, "Authorization: Bearer abc123def456ghi", "Authorization: Bearer " R, 1);
    expect(NULL, "curl -H 'authorization: Basic dXNlcjpwYXNzd29yZA==' http://x",
           "curl -H 'authorization: Basic " R "' http://x", 1);
    expect(NULL, "{\"Authorization\": \"Bearer s3cr3t-t0ken.value\"}",
           "{\"Authorization\": \"Bearer " R "\"}", 1);
    expect(NULL, "sending bearer ya29.a0AfH6SMBx9 to api", "sending bearer " R " to api", 1);
    expect(NULL, "BEARER   0123456789abcdef", "BEARER   " R, 1);
    /* prose survives */
    keep("Using bearer authentication for the upstream");
    /* the word after "Bearer" is the key of a pair: the pair's value goes
     * (fuzz_redact) */
    expect(NULL, "Bearer  aws_secret_access_key = C0rp11/abcdefghijklmnopqrstuvwxyz012 o",
           "Bearer  aws_secret_access_key = " R " o", 1);
    keep("the bearer of bad news");
    keep("authorization failed for user bob");
}

static void test_jwt(void **state)
{
    const char *jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
                      "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    char in[512];
    char want[512];

    (void)state;
    snprintf(in, sizeof(in), "token accepted: %s (exp 3600)", jwt);
    expect(NULL, in, "token accepted: " R " (exp 3600)", 1);
    snprintf(in, sizeof(in), "cookie=session;jwt:%s", jwt);
    snprintf(want, sizeof(want), "cookie=" R ";jwt:" R);
    expect(NULL, in, want, 2);
    snprintf(in, sizeof(in), "id_token %s", jwt);
    expect(NULL, in, "id_token " R, 1);
    /* not a JWT: too short, a single segment, or a word containing eyJ */
    keep("eyJhbGciOiJIUzI1NiJ9");
    keep("the key eyJa.b.c is short");
    keep("heyJude.something.else");
}

static void test_cloud_keys(void **state)
{
    (void)state;
    expect(NULL, "aws key AKIAIOSFODNN7EXAMPLE used", "aws key " R " used", 1);
    expect(NULL, "id=ASIAY34FZKBOKMUTVV7A,", "id=" R ",", 1);
    expect(NULL, "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
           "aws_secret_access_key=" R, 1);
    expect(NULL, "AWS_SECRET_ACCESS_KEY: \"wJalrXUtnFEMI/K7MDENG\"",
           "AWS_SECRET_ACCESS_KEY: \"" R "\"", 1);
    expect(NULL, "maps key AIzaSyA1234567890abcdefghijklmnopqrstuv ok", "maps key " R " ok", 1);
    /* shapes that are close but not keys */
    keep("AKIAIOSFODNN7EXAMPL is too short");
    keep("AKIAIOSFODNN7EXAMPLEX is too long");
    keep("AKIAiosfodnn7example lower case");
    keep("AIzaSyShort");
}

static void test_slack_and_github(void **state)
{
    (void)state;
    expect(NULL, "posting with xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp done",
           "posting with " R " done", 1);
    expect(NULL, "xoxp-12345-67890-abcdef", R, 1);
    expect(NULL, "app token xapp-1-A0123-456789-abcdef", "app token " R, 1);
    expect(NULL, "url https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX end",
           "url https://hooks.slack.com/services/" R " end", 1);
    expect(NULL, "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok", "gh " R " ok", 1);
    expect(NULL, "GITHUB github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "GITHUB " R,
           1);
    keep("xoxb- is a prefix; ghp_ too; xoxz-1234567890123 is not slack");
    keep("the ghp_short token");
}

static void test_url_password(void **state)
{
    (void)state;
    expect(NULL, "connecting to postgres://app:hunter2@db.internal:5432/orders",
           "connecting to postgres://app:" R "@db.internal:5432/orders", 1);
    expect(NULL, "redis://:p%40ss@redis:6379/0", "redis://:" R "@redis:6379/0", 1);
    expect(NULL, "amqp://guest:guest@rabbit/ and https://u:p@h/x",
           "amqp://guest:" R "@rabbit/ and https://u:" R "@h/x", 2);
    /* user only, host:port, no userinfo */
    keep("https://user@example.com/path");
    keep("http://db.internal:5432/orders and http://10.0.0.1:8080/a@b");
    keep("see https://example.com/?q=a:b@c");
}

static void test_key_value(void **state)
{
    (void)state;
    expect(NULL, "login password=hunter2 user=bob", "login password=" R " user=bob", 1);
    expect(NULL, "PASSWORD: hunter2", "PASSWORD: " R, 1);
    expect(NULL, "{\"password\": \"p a s s\", \"user\": \"bob\"}",
           "{\"password\": \"" R "\", \"user\": \"bob\"}", 1);
    expect(NULL, "{'client_secret': 'abc\\'def', 'id': 7}", "{'client_secret': '" R "', 'id': 7}",
           1);
    expect(NULL, "GET /cb?code=1&token=abc.def&state=x", "GET /cb?code=1&token=" R "&state=x", 1);
    expect(NULL, "env DB_PASSWORD=s3cret REDIS_PWD=x", "env DB_PASSWORD=" R " REDIS_PWD=" R, 2);
    expect(NULL, "x-api-key: 0123abcd", "x-api-key: " R, 1);
    expect(NULL, "apiKey=ABCDEF accessToken=xyz spring.datasource.password=pw",
           "apiKey=" R " accessToken=" R " spring.datasource.password=" R, 3);
    expect(NULL, "passwd = 'p w', secret:=s, api_key=k; access_key=a",
           "passwd = '" R "', secret:=" R ", api_key=" R "; access_key=" R, 4);
    expect(NULL, "password=\"unterminated value", "password=\"" R, 1);
    /* not secrets */
    keep("password reset email sent to bob@example.com");
    keep("passwordless login enabled; tokens=5 max_tokens=100 tokenizer=bpe");
    keep("password= token: \"\" secret=null");
    keep("unexpected token: } at line 3");
    keep("Password change required");
    /* redacting twice changes nothing (stored text is redacted again when served) */
    keep("env DB_PASSWORD=" R " REDIS_PWD=" R);
    keep("{\"password\": \"" R "\", \"user\": \"bob\"}");
    keep("x-api-key: " R);
    keep("Authorization: Bearer " R); /* the scheme stays (tests/fuzz/fuzz_redact) */
}

static void test_key_rule(void **state)
{
    static const char *const secret[] = {
        "password",
        "DB_PASSWORD",
        "PGPASSWORD",
        "DB_PASS",
        "PASS",
        "pass",
        "db-pass",
        "smtp.pass",
        "passwd",
        "passphrase",
        "MYSQL_PWD",
        "secret",
        "client_secret",
        "clientSecret",
        "SECRET_VALUE",
        "secretkey",
        "token",
        "AUTH_TOKEN",
        "accessToken",
        "csrftoken",
        "TOKEN_V2",
        "api_key",
        "apikey",
        "api-key",
        "x-api-key",
        "APIKey",
        "AccountKey",
        "SharedAccessKey",
        "x_key",
        "SSH_KEY",
        "key",
        "aws_secret_access_key",
        "credential",
        "credentials",
        "X-Amz-Credential",
        "cookie",
        "Set-Cookie",
        "session",
        "session_id",
        "JSESSIONID",
        "sessionid",
        "auth",
        "basic_auth",
        "AUTH",
        "authorization",
        "proxy-authorization",
        "private",
        "private_key",
        "privateKey",
        "sig",
        "X-Amz-Signature",
        "example.com/db-password",
        "vault.hashicorp.com/agent-inject-token",
        "REDIS_PASS_2",
        "password_b64",
        "creds",
        "jwt",
        "ssh-private-key",
        "routing_key",
    };
    static const char *const plain[] = {
        "passed",
        "bypass",
        "compass",
        "passes",
        "pass_count",
        "author",
        "authority",
        "keyboard",
        "monkey",
        "turkey",
        "keys",
        "public_key",
        "publicKey",
        "PUBLICKEY",
        "cache_key",
        "sort_key",
        "primary_key",
        "session_count",
        "sessions",
        "tokens",
        "max_tokens",
        "tokenizer",
        "token_count",
        "token_expiry",
        "secret_name",
        "secretName",
        "secretKeyRef",
        "password_file",
        "DB_PASSWORD_FILE",
        "passwordless",
        "aws_access_key_id",
        "key_id",
        "app.kubernetes.io/name",
        "pod-template-hash",
        "checksum/config",
        "user",
        "",
        "secrets",
        "auth_method",
        "cookie_domain",
        "signature_version",
        "keyspace",
        "2",
        "_",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++) {
        if (!krc_redact_secret_key(secret[i], strlen(secret[i]))) {
            fail_msg("\"%s\" should name a secret", secret[i]);
        }
    }
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        if (krc_redact_secret_key(plain[i], strlen(plain[i]))) {
            fail_msg("\"%s\" should not name a secret", plain[i]);
        }
    }
    assert_false(krc_redact_secret_key(NULL, 0));
}

/* Every word of the key rule's lists (docs/configuration.md, "Redaction"),
 * alone and in keys: the redactor keeps its lists sorted by length and stops
 * early, so a word out of place would be missed. */
static void test_key_rule_lists(void **state)
{
    static const char *const words[] = {
        "pass",      "pwd",           "passwd",     "password",    "passphrase", "secret", "token",
        "auth",      "authorization", "cookie",     "session",     "sessionid",  "sessid", "sid",
        "private",   "privatekey",    "credential", "credentials", "creds",      "key",    "apikey",
        "accesskey", "secretkey",     "sig",        "signature",   "jwt"};
    static const char *const suffixes[] = {
        "password",   "passwd",      "passphrase", "secret",    "token",
        "apikey",     "secretkey",   "privatekey", "accesskey", "authorization",
        "credential", "credentials", "sessionid",  "sessid",    "pwd"};
    static const char *const plain_key[] = {"public",  "pub",     "cache",  "partition",  "sort",
                                            "primary", "foreign", "object", "row",        "shard",
                                            "dedup",   "lookup",  "hash",   "range",      "unique",
                                            "index",   "map",     "group",  "idempotency"};
    static const char *const qualifiers[] = {"value", "raw", "base", "hex", "encoded"};
    char k[64];

    (void)state;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        snprintf(k, sizeof(k), "%s", words[i]);
        assert_true(krc_redact_secret_key(k, strlen(k)));
        snprintf(k, sizeof(k), "DB_%s", words[i]);
        assert_true(krc_redact_secret_key(k, strlen(k)));
        snprintf(k, sizeof(k), "%sz", words[i]); /* another word */
        assert_false(krc_redact_secret_key(k, strlen(k)));
        for (size_t q = 0; q < sizeof(qualifiers) / sizeof(qualifiers[0]); q++) {
            snprintf(k, sizeof(k), "%s_%s", words[i], qualifiers[q]);
            assert_true(krc_redact_secret_key(k, strlen(k)));
        }
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(k, sizeof(k), "x%s", suffixes[i]); /* one word ending in it */
        assert_true(krc_redact_secret_key(k, strlen(k)));
        snprintf(k, sizeof(k), "my_zz%s", suffixes[i]);
        assert_true(krc_redact_secret_key(k, strlen(k)));
    }
    for (size_t i = 0; i < sizeof(plain_key) / sizeof(plain_key[0]); i++) {
        snprintf(k, sizeof(k), "%s_key", plain_key[i]);
        assert_false(krc_redact_secret_key(k, strlen(k)));
        snprintf(k, sizeof(k), "%s_token", plain_key[i]);
        assert_true(krc_redact_secret_key(k, strlen(k)));
    }
    for (size_t q = 0; q < sizeof(qualifiers) / sizeof(qualifiers[0]); q++) {
        assert_false(krc_redact_secret_key(qualifiers[q], strlen(qualifiers[q])));
    }
}

static void test_key_forms(void **state)
{
    (void)state;
    /* the forms of the review (issue 24), the non-secret part kept */
    expect(NULL, "PGPASSWORD=pg1 psql -h db", "PGPASSWORD=" R " psql -h db", 1);
    expect(NULL, "DB_PASS=x1 DB_USER=app", "DB_PASS=" R " DB_USER=app", 1);
    expect(NULL, "passphrase=abc", "passphrase=" R, 1);
    expect(NULL, "AccountName=a;AccountKey=k+/y==;EndpointSuffix=core.windows.net",
           "AccountName=a;AccountKey=" R ";EndpointSuffix=core.windows.net", 1);
    expect(NULL, "SharedAccessKeyName=Root;SharedAccessKey=abc=",
           "SharedAccessKeyName=Root;SharedAccessKey=" R, 1);
    expect(NULL, "cookie: session=abc; theme=dark", "cookie: " R "; theme=dark", 1);
    expect(NULL, "Cookie: theme=dark; session=abc", "Cookie: " R "; session=" R, 2);
    expect(NULL, "secretkey=s3", "secretkey=" R, 1);
    expect(NULL, "x_key=1 SSH_KEY=2 api-key: 3", "x_key=" R " SSH_KEY=" R " api-key: " R, 3);
    expect(NULL, "auth: Basic dXNlcjpw", "auth: Basic " R, 1);
    /* JSON inside a JSON string */
    expect(NULL, "{\"msg\":\"{\\\"password\\\":\\\"pw\\\",\\\"user\\\":\\\"bob\\\"}\"}",
           "{\"msg\":\"{\\\"password\\\":\\\"" R "\\\",\\\"user\\\":\\\"bob\\\"}\"}", 1);
    /* two and three levels deep */
    expect(NULL, "{\"log\":\"{\\\"msg\\\":\\\"{\\\\\\\"token\\\\\\\":\\\\\\\"t0k\\\\\\\"}\\\"}\"}",
           "{\"log\":\"{\\\"msg\\\":\\\"{\\\\\\\"token\\\\\\\":\\\\\\\"" R "\\\\\\\"}\\\"}\"}", 1);
    expect(NULL, "\\\"password\\\":\\\"a\\\\\\\"b\\\"", "\\\"password\\\":\\\"" R "\\\"", 1);
    /* an annotation in a pod's JSON or YAML: the key holds a '/' */
    expect(NULL, "\"annotations\": {\"example.com/db-password\": \"pw\", \"a/b\": \"c\"}",
           "\"annotations\": {\"example.com/db-password\": \"" R "\", \"a/b\": \"c\"}", 1);
    expect(NULL, "  vault.hashicorp.com/agent-inject-token: s.abc",
           "  vault.hashicorp.com/agent-inject-token: " R, 1);
    /* a bare value that is the next key */
    expect(NULL, "token: api-key: s3cr3t", "token: api-key: " R, 1);
    expect(NULL, "password=hunter2: dial tcp", "password=" R " dial tcp", 1);
    /* a command line */
    expect(NULL, "mysql --user root --password hunter2 db", "mysql --user root --password " R " db",
           1);
    keep("mysql --password --user root");
    keep("run --token-file /var/run/token");
    /* an environment variable of a pod spec, JSON and YAML */
    expect(
        NULL, "[{\"name\":\"DB_PASSWORD\",\"value\":\"pw\"},{\"name\":\"MODE\",\"value\":\"x\"}]",
        "[{\"name\":\"DB_PASSWORD\",\"value\":\"" R "\"},{\"name\":\"MODE\",\"value\":\"x\"}]", 1);
    expect(NULL, "- name: API_TOKEN\n  value: t0k\n- name: PORT\n  value: 80",
           "- name: API_TOKEN\n  value: " R "\n- name: PORT\n  value: 80", 1);
    keep("{\"name\": \"DB_PASSWORD\", \"valueFrom\": {\"secretKeyRef\": {\"name\": \"db\"}}}");
    /* a line of source code in a traceback: a call after a spaced '=' */
    keep("    session = ort.InferenceSession(model_path, sess_options=opts)");
    keep("token = auth.get_token(scope)");
    expect(NULL, "token=f(1)", "token=" R ")", 1);
    expect(NULL, "token = 'f(1)'", "token = '" R "'", 1);
    /* not secrets: the last word of the key is another word */
    keep("tests passed=3 bypass=on compass=north author=bob keyboard=us monkey=1");
    keep("session_count=3 secret_name=db-creds password_file=/etc/pw token_expiry=3600");
    keep("public_key=ssh-ed25519 cache_key=user:42 sort_key=name");
    /* twice changes nothing */
    keep("cookie: " R "; theme=dark");
    keep("mysql --password " R " db");
    keep("[{\"name\":\"DB_PASSWORD\",\"value\":\"" R "\"}]");
}

static void test_provider_tokens(void **state)
{
    (void)state;
    expect(NULL, "pay sk_live_abcdefghij0123456789 ok", "pay " R " ok", 1);
    expect(NULL, "rk_test_abcdefghij0123456789", R, 1);
    expect(NULL, "wh whsec_abcdefghijklmnopqrstuvwx01", "wh " R, 1);
    expect(NULL, "gitlab glpat-abcdefghij0123456789 x", "gitlab " R " x", 1);
    expect(NULL, "deploy gldt-abcdefghij0123456789", "deploy " R, 1);
    expect(NULL, "vault hvs.CAESIJabcdefghijklmnopqrst done", "vault " R " done", 1);
    expect(NULL, "npm_abcdefghijklmnopqrstuvwxyz0123456789", R, 1);
    expect(NULL, "k sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "k " R, 1);
    expect(NULL, "k sk-proj-abcdefghijklmnopqrstuvwxyz012345", "k " R, 1);
    expect(NULL, "t ya29.a0AfH6SMBxabcdefghijkl", "t " R, 1);
    expect(NULL, "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", R, 1);
    /* after a '-' in a word that starts with x or g (an earlier shortcut skipped these) */
    expect(NULL, "x-ghp_abcdefghijklmnopqrstuvwxyz0123456789", "x-" R, 1);
    expect(NULL, "gw-sk_live_abcdefghij0123456789", "gw-" R, 1);
    /* every prefix (the scanner looks for them by their first character) */
    {
        static const char *const prefixes[] = {
            "sk_live_", "sk_test_",  "rk_live_", "rk_test_", "whsec_", "sk-ant-",
            "sk-proj-", "glpat-",    "glptt-",   "gldt-",    "glrt-",  "glcbt-",
            "glsoat-",  "hvs.",      "hvb.",     "hvr.",     "npm_",   "pypi-AgE",
            "ya29.",    "dckr_pat_", "dop_v1_",  "shpat_",   "SG."};
        for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
            char in[160];
            snprintf(in, sizeof(in), "t %s%s%s x", prefixes[k],
                     "abcdefghijklmnopqrstuvwxyz0123456789",
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
            expect(NULL, in, "t " R " x", 1);
        }
    }
    /* prefixes alone, or too short */
    keep("sk_live_ is the prefix; glpat-short; hvs.x; npm_install; SG.x");
    keep("the ask_live_stream flag");
}

static void test_aws_secret_shape(void **state)
{
    (void)state;
    expect(NULL, "key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end", "key " R " end", 1);
    expect(NULL, "\"Abcdefghij0123456789ABCDEFGHIJabcdefghij\"", "\"" R "\"", 1);
    /* a git SHA-1 (hex, one case), other lengths, paths and longer tokens */
    keep("commit 3f2c1e9a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e");
    keep("COMMIT 3F2C1E9A8B7D6C5E4F3A2B1C0D9E8F7A6B5C4D3E");
    keep("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE is 39");
    keep("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYS is 41");
    keep("/opt/App/bin/Server2/lib/Main3/configXYZ1");
    keep("opt/App/bin/Server2/lib/Main3/config/XY1");
    keep("ref wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.json");
    keep("allAlphabeticWordsMakeNoSecretAtAllHereX");
}

/* tests/fixtures/secrets/corpus.txt: each form (one a line; the secret between
 * {{ and }}; "\n" a newline) through the redactor: no secret survives, the
 * "keep" lines come out as they went in. Also the fuzz_redact and
 * test_secrets corpus. */
struct corpus_line {
    char kind;       /* 't'ext, 'a'nnotation, 'l'abel, 'k'eep */
    char key[128];   /* annotation and label */
    char text[1024]; /* markers removed, "\n" a newline */
    char secret[8][160];
    size_t n_secrets;
};

static size_t read_corpus(struct corpus_line *out, size_t max)
{
    FILE *f = fopen(KRC_FIXTURES "/secrets/corpus.txt", "r");
    char line[1200];
    size_t n = 0;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL && n < max) {
        struct corpus_line *c = &out[n];
        char *s = line;
        size_t o = 0;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') {
            continue;
        }
        memset(c, 0, sizeof(*c));
        c->kind = 't';
        if (strncmp(s, "annotation ", 11) == 0 || strncmp(s, "label ", 6) == 0) {
            char *sp;
            c->kind = s[0];
            s = strchr(s, ' ') + 1;
            sp = strchr(s, ' ');
            assert_non_null(sp);
            snprintf(c->key, sizeof(c->key), "%.*s", (int)(sp - s), s);
            s = sp + 1;
        } else if (strncmp(s, "keep ", 5) == 0) {
            c->kind = 'k';
            s += 5;
        }
        while (*s != '\0' && o + 1 < sizeof(c->text)) {
            if (s[0] == '\\' && s[1] == 'n') {
                c->text[o++] = '\n';
                s += 2;
            } else if (s[0] == '{' && s[1] == '{') {
                char *e = strstr(s, "}}");
                assert_non_null(e);
                assert_true(c->n_secrets < 8);
                snprintf(c->secret[c->n_secrets++], sizeof(c->secret[0]), "%.*s", (int)(e - s - 2),
                         s + 2);
                s += 2;
                memcpy(c->text + o, s, (size_t)(e - s));
                o += (size_t)(e - s);
                s = e + 2;
            } else {
                c->text[o++] = *s++;
            }
        }
        c->text[o] = '\0';
        assert_true(c->kind == 'k' || c->n_secrets > 0);
        n++;
    }
    fclose(f);
    return n;
}

static void test_corpus(void **state)
{
    static struct corpus_line lines[128];
    size_t n = read_corpus(lines, 128);
    size_t forms = 0;

    (void)state;
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++) {
        struct corpus_line *c = &lines[i];
        struct krc_buf b;
        int k;
        krc_buf_init(&b, 1 << 20);
        if (c->kind == 'a' || c->kind == 'l') {
            k = krc_redact_field(NULL, c->key, c->text, strlen(c->text), &b, NULL);
        } else {
            k = krc_redact_apply(NULL, c->text, strlen(c->text), &b, NULL);
        }
        assert_true(k >= 0);
        if (c->kind == 'k') {
            if (k != 0 || strcmp(krc_buf_str(&b), c->text) != 0) {
                fail_msg("not a secret, but changed: %s -> %s", c->text, krc_buf_str(&b));
            }
        }
        for (size_t s = 0; s < c->n_secrets; s++) {
            if (strstr(krc_buf_str(&b), c->secret[s]) != NULL || k == 0) {
                fail_msg("secret \"%s\" survived: %s -> %s", c->secret[s], c->text,
                         krc_buf_str(&b));
            }
            forms++;
        }
        krc_buf_cleanup(&b);
    }
    assert_true(forms >= 40);
}

static void test_field(void **state)
{
    struct krc_buf b;

    (void)state;
    krc_buf_init(&b, 4096);
    assert_int_equal(krc_redact_field(NULL, "example.com/db-password", "pw", 2, &b, NULL), 1);
    assert_string_equal(krc_buf_str(&b), R);
    krc_buf_reset(&b);
    /* twice: the mark stays the mark, an empty value stays empty */
    assert_int_equal(krc_redact_field(NULL, "example.com/db-password", R, strlen(R), &b, NULL), 0);
    assert_string_equal(krc_buf_str(&b), R);
    krc_buf_reset(&b);
    assert_int_equal(krc_redact_field(NULL, "db-password", "", 0, &b, NULL), 0);
    assert_string_equal(krc_buf_str(&b), "");
    /* another key: the value rules */
    assert_int_equal(krc_redact_field(NULL, "example.com/notes", "token=abc ok", 12, &b, NULL), 1);
    assert_string_equal(krc_buf_str(&b), "token=" R " ok");
    krc_buf_reset(&b);
    assert_int_equal(krc_redact_field(NULL, NULL, "plain", 5, &b, NULL), 0);
    assert_string_equal(krc_buf_str(&b), "plain");
    krc_buf_cleanup(&b);
}

static void test_private_key(void **state)
{
    (void)state;
    expect(NULL,
           "loading key\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc+/=\n"
           "-----END RSA PRIVATE KEY-----\nstarted",
           "loading key\n-----BEGIN RSA PRIVATE KEY-----" R "-----END RSA PRIVATE KEY-----\n"
           "started",
           1);
    /* JSON-escaped on one line */
    expect(NULL, "{\"pem\":\"-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n\"}",
           "{\"pem\":\"-----BEGIN PRIVATE KEY-----" R "-----END PRIVATE KEY-----\\n\"}", 1);
    /* a key named "key": the whole value */
    expect(NULL, "{\"key\":\"-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n\"}",
           "{\"key\":\"" R "\"}", 1);
    /* cut at the end by truncation */
    expect(NULL, "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA",
           "x\n-----BEGIN OPENSSH PRIVATE KEY-----" R, 1);
    /* cut at the top: the log starts inside the key */
    expect(NULL, "QyNTUxOQAAACBh\nZW5zc2gta2V5\n-----END OPENSSH PRIVATE KEY-----\nready",
           R "-----END OPENSSH PRIVATE KEY-----\nready", 1);
    expect(NULL, "log: started\nabc\n-----END EC PRIVATE KEY-----",
           "log: started\n" R "-----END EC PRIVATE KEY-----", 1);
    expect(NULL,
           "ready: ok\nMIIEpAIBAAKCAQEAwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY0123\nabc\n"
           "-----END RSA PRIVATE KEY-----",
           "ready: ok\n" R "-----END RSA PRIVATE KEY-----", 1);
    /* a header whose label is no label hides nothing (fuzz_redact): the
     * label goes with the key */
    expect(NULL,
           "-----BEGIN RSA   client_secret: C0rp33clientSecret  PRIVATE KEY-----\nMIIE\n"
           "-----END RSA PRIVATE KEY-----",
           "-----BEGIN " R "-----END RSA PRIVATE KEY-----", 1);
    /* certificates and public keys are not secrets */
    keep("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    keep("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----");
}

static void test_negatives(void **state)
{
    (void)state;
    keep("");
    keep("2025-02-06 03:14:40,245 - INFO - __main__ - Loading model from /models/llama");
    keep("image sha256:b5848deef738d212164fe3350c4345353fc5a087412a14d607878881a77f214b");
    keep("pod uid c4aace75-df67-4a3c-832e-4b4b09bc06f3 commit 3f2c1e9a8b7d6c5e4f3a2b1c0d9e8f7a");
    keep("base64 payload aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBzZWNyZXQ= done");
    keep("GET /api/v1/orders?page=2&limit=50 200 12ms");
    keep("Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n");
    keep("java.lang.OutOfMemoryError: Java heap space\n\tat com.example.Foo.bar(Foo.java:42)");
}

static void test_raw_bytes(void **state)
{
    static const char in[] = "\xff\xfe password=\x80\x81 ok\x00 token=abc\x00tail \xc3";
    static const char want[] = "\xff\xfe password=" R " ok\x00 token=" R "\x00tail \xc3";
    int n = 0;
    char *s;

    (void)state;
    s = red_n(NULL, in, sizeof(in) - 1, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(s, want, sizeof(want) - 1);
    krc_free(s);
}

static void test_extra_patterns(void **state)
{
    const char *pats[] = {"CUST-[0-9]{6}", "internal-[a-z]+\\.corp"};
    struct krc_redactor *rd = NULL;
    struct krc_error err;

    (void)state;
    krc_error_clear(&err);
    assert_int_equal(krc_redact_new(pats, 2, &rd, &err), 0);
    expect(rd, "customer CUST-123456 on internal-db.corp\nCUST-000001 CUST-1 password=x\n",
           "customer " R " on " R "\n" R " CUST-1 password=" R "\n", 4);
    /* a pattern's mark opens a word boundary for the built-in key=value
     * scanner: it runs again, so a second pass changes nothing (fuzz_redact) */
    expect(rd, "id CUST-123456Authorization: Bearer abc", "id " R "Authorization: Bearer " R, 2);
    /* a short line with a match, then a longer line (the line buffer kept the
     * short line's limit and failed with KRC_ETOOBIG; fuzz_redact) */
    expect(rd,
           "CUST-123456\nno secret on this line, but it is longer than the first one: it is a "
           "long line of a log of an application that writes a lot, far more than eleven times "
           "the first line\n",
           R "\nno secret on this line, but it is longer than the first one: it is a long line of "
             "a log of an application that writes a lot, far more than eleven times the first "
             "line\n",
           1);
    /* NUL bytes and a line without newline */
    {
        static const char in[] = "a CUST-111111\x00 CUST-222222";
        int n = 0;
        char *s = red_n(rd, in, sizeof(in) - 1, &n);
        assert_int_equal(n, 1);
        assert_memory_equal(s, "a " R "\x00 CUST-222222", sizeof("a " R "\x00 CUST-222222") - 1);
        krc_free(s);
    }
    krc_redact_free(rd);
    /* the pattern syntax of krc/util/pattern.h: Go's \d is a digit */
    {
        const char *go[] = {"CUST-\\d{6}"};
        rd = NULL;
        assert_int_equal(krc_redact_new(go, 1, &rd, &err), 0);
        expect(rd, "CUST-123456 CUST-dddddd", R " CUST-dddddd", 1);
        krc_redact_free(rd);
    }
}

static void test_extra_pattern_errors(void **state)
{
    const char *bad[] = {"ok", "a(b"};
    const char *empty[] = {"x*"};
    const char *blank[] = {""};
    struct krc_redactor *rd = NULL;
    struct krc_error err;

    (void)state;
    krc_error_clear(&err);
    assert_int_equal(krc_redact_new(bad, 2, &rd, &err), KRC_EINVAL);
    assert_null(rd);
    assert_non_null(strstr(err.msg, "redaction pattern 2"));
    assert_non_null(strstr(err.msg, "not a valid extended regex"));
    assert_non_null(strstr(err.msg, "\"a(b\"")); /* the pattern is quoted */
    assert_int_equal(krc_redact_new(empty, 1, &rd, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "pattern 1 matches the empty string"));
    assert_int_equal(krc_redact_new(blank, 1, &rd, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, "pattern 1 is empty"));
    assert_null(rd);
    krc_redact_free(NULL);
}

static void test_output_limit(void **state)
{
    struct krc_buf b;
    struct krc_error err;

    (void)state;
    krc_buf_init(&b, 8);
    krc_error_clear(&err);
    assert_int_equal(krc_redact_apply(NULL, "password=abc", 12, &b, &err), KRC_ETOOBIG);
    assert_int_equal(err.code, KRC_ETOOBIG);
    krc_buf_cleanup(&b);
}

/* Adversarial 64 KiB inputs: repeated candidate prefixes that never
 * complete are left as they are; a realistic log has every token redacted.
 * How long they take is measured by bench/bench_redact.c (a quadratic
 * scanner would take seconds there; no timing is asserted here). */
static void test_adversarial_inputs(void **state)
{
    static const char *const units[] = {"eyJ-",    "xoxb-",       "a-",   "password-", "://",
                                        "bearer ", "-----BEGIN ", "AKIA", "ghp_",      "x:y"};
    const char *pats[] = {"SECRET-[0-9]+"};
    struct krc_redactor *rd = NULL;
    size_t len = 64 * 1024;
    char *in = malloc(len);

    (void)state;
    assert_non_null(in);
    assert_int_equal(krc_redact_new(pats, 1, &rd, NULL), 0);
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
        size_t ul = strlen(units[u]);
        int n = -1;
        char *out;
        for (size_t i = 0; i < len; i++) {
            in[i] = units[u][i % ul];
        }
        out = red_n(rd, in, len, &n);
        /* "xoxb-xoxb-..." is one long Slack token; nothing else is a secret */
        if (strcmp(units[u], "xoxb-") == 0 ? n != 1 || strstr(out, "xoxb-xoxb") != NULL
                                           : n != 0 || memcmp(out, in, len) != 0) {
            fail_msg("unit '%s': %d redaction(s)", units[u], n);
        }
        krc_free(out);
    }
    /* a realistic log: 64 KiB of lines with a few secrets */
    {
        struct krc_buf b;
        int n = 0;
        char *out;
        krc_buf_init(&b, len + 256);
        while (b.len + 200 < len) {
            assert_int_equal(krc_buf_printf(&b,
                                            "2025-02-06T03:14:40Z INFO request id=%zu "
                                            "path=/api/v1/orders user=bob token=t%zu ok\n",
                                            b.len, b.len),
                             0);
        }
        out = red_n(rd, b.data, b.len, &n);
        assert_true(n > 500);
        assert_null(strstr(out, "token=t"));
        krc_free(out);
        krc_buf_cleanup(&b);
    }
    krc_redact_free(rd);
    free(in);
}

static void test_alloc_failures(void **state)
{
    const char *pats[] = {"CUST-[0-9]+", "zz+"};
    const char *in = "CUST-1 password=x\nAKIAIOSFODNN7EXAMPLE zzz\n";
    long n;

    (void)state;
    for (n = 0; n < 200; n++) {
        struct krc_redactor *rd = NULL;
        struct krc_buf b;
        long used;
        int rc;
        krc_buf_init(&b, 4096);
        krc_mem_fail_after(n);
        rc = krc_redact_new(pats, 2, &rd, NULL);
        if (rc == 0) {
            rc = krc_redact_apply(rd, in, strlen(in), &b, NULL);
        }
        used = krc_mem_fail_after(-1);
        krc_redact_free(rd);
        if (rc >= 0) {
            assert_int_equal(rc, 4);
            assert_string_equal(b.data, R " password=" R "\n" R " " R "\n");
            krc_buf_cleanup(&b);
            assert_true(used <= n);
            return;
        }
        assert_int_equal(rc, KRC_ENOMEM);
        krc_buf_cleanup(&b);
    }
    fail_msg("never succeeded");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bearer_and_authorization),
        cmocka_unit_test(test_jwt),
        cmocka_unit_test(test_cloud_keys),
        cmocka_unit_test(test_slack_and_github),
        cmocka_unit_test(test_url_password),
        cmocka_unit_test(test_key_value),
        cmocka_unit_test(test_key_rule),
        cmocka_unit_test(test_key_rule_lists),
        cmocka_unit_test(test_key_forms),
        cmocka_unit_test(test_provider_tokens),
        cmocka_unit_test(test_aws_secret_shape),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_private_key),
        cmocka_unit_test(test_negatives),
        cmocka_unit_test(test_raw_bytes),
        cmocka_unit_test(test_extra_patterns),
        cmocka_unit_test(test_extra_pattern_errors),
        cmocka_unit_test(test_output_limit),
        cmocka_unit_test(test_adversarial_inputs),
        cmocka_unit_test(test_alloc_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
