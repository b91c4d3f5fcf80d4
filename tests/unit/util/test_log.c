/* Logging: text and JSON lines written to a pipe (or a file for big lines),
 * quoting, newline folding, level filtering and secret redaction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <unistd.h>

#include "krc/util/error.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

struct pipe_fds {
    int r;
    int w;
    char out[65536];
};

static int setup(void **state)
{
    struct pipe_fds *p = calloc(1, sizeof(*p));
    int fds[2];

    if (p == NULL || pipe(fds) != 0) {
        free(p);
        return -1;
    }
    p->r = fds[0];
    p->w = fds[1];
    fcntl(p->r, F_SETFL, fcntl(p->r, F_GETFL) | O_NONBLOCK);
    krc_log_clear_secrets();
    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_TEXT, p->w);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    struct pipe_fds *p = *state;

    krc_log_setup(KRC_LOG_INFO, KRC_LOG_TEXT, 2);
    krc_log_clear_secrets();
    close(p->r);
    close(p->w);
    free(p);
    return 0;
}

/* Everything written since the last call (lines are written whole, before
 * krc_log returns, so a non-blocking read sees them all). */
static const char *drain(struct pipe_fds *p)
{
    size_t len = 0;

    for (;;) {
        ssize_t n = read(p->r, p->out + len, sizeof(p->out) - 1 - len);
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
    }
    p->out[len] = '\0';
    return p->out;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s != '\0'; s++) {
        n += *s == c;
    }
    return n;
}

static void assert_matches(const char *s, const char *pattern)
{
    regex_t re;

    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    if (regexec(&re, s, 0, NULL, 0) != 0) {
        regfree(&re);
        fail_msg("\"%s\" does not match /%s/", s, pattern);
    }
    regfree(&re);
}

#define TS "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"

/* --- text ------------------------------------------------------------------ */

static void test_text_line(void **state)
{
    struct pipe_fds *p = *state;

    krc_log(KRC_LOG_INFO, "watch started for %s (%d namespaces)", "cluster", 3);
    assert_matches(drain(p), "^" TS " info  watch started for cluster \\(3 namespaces\\)\n$");
    KRC_WARN("w");
    assert_matches(drain(p), "^" TS " warn  w\n$");
    KRC_ERROR("e");
    assert_matches(drain(p), "^" TS " error e\n$");
    KRC_DEBUG("d");
    assert_matches(drain(p), "^" TS " debug d\n$");
}

static void test_text_fields_quoting(void **state)
{
    struct pipe_fds *p = *state;
    const struct krc_log_field f[] = {
        {"pod", "web-1", 0},        {"count", "3", 1},  {"reason", "Back-off restarting", 0},
        {"empty", "", 0},           {"null", NULL, 0},  {"quote", "say \"hi\"", 0},
        {"eq", "a=b", 0},           {"bs", "C:\\x", 0}, {"nl", "one\ntwo", 0},
        {"utf8", "caf\xc3\xa9", 0},
    };

    krc_log_fields(KRC_LOG_INFO, "restart", f, sizeof(f) / sizeof(f[0]));
    assert_matches(drain(p),
                   "^" TS " info  restart pod=web-1 count=3 reason=\"Back-off restarting\""
                   " empty=\"\" null=\"\" quote=\"say \\\\\"hi\\\\\"\" eq=\"a=b\""
                   " bs=\"C:\\\\\\\\x\" nl=\"one\\\\ntwo\" utf8=\"caf\xc3\xa9\"\n$");
}

static void test_text_newline_folding(void **state)
{
    struct pipe_fds *p = *state;
    const char *out;

    krc_log(KRC_LOG_WARN, "first\nsecond\r\nthird\r");
    out = drain(p);
    assert_int_equal(count_char(out, '\n'), 1);
    assert_null(strchr(out, '\r'));
    assert_matches(out, "^" TS " warn  first second third \n$"); /* CR LF: one space */

    krc_log_fields(KRC_LOG_INFO, "multi\nline", NULL, 0);
    out = drain(p);
    assert_int_equal(count_char(out, '\n'), 1);
    assert_matches(out, " info  multi line\n$");
}

/* Text from the cluster (a pod name, a plugin's stderr) in a message or a
 * field never reaches the terminal as a control: ESC, BEL and DEL are
 * shown as Control Pictures in a message and escaped in a quoted value; C1
 * controls, bidi controls and invalid UTF-8 are replaced or escaped. */
static void test_text_controls_shown(void **state)
{
    struct pipe_fds *p = *state;
    const struct krc_log_field f[] = {
        {"pod", "evil\x1b]0;pwned\x07", 0},
        {"c1",
         "a\xc2\x9b"
         "2Jb",
         0},
        {"bidi", "x\xe2\x80\xaey", 0},
        {"bad", "z\xff", 0},
        {"del", "d\x7f", 0},
    };
    const char *out;

    krc_log(KRC_LOG_WARN, "pod %s: %s", "evil\x1b[2J\x1b]0;t\x07",
            "a\xc2\x9b"
            "b\xff\x7f");
    out = drain(p);
    assert_null(strchr(out, '\x1b'));
    assert_null(strchr(out, '\x07'));
    assert_null(strchr(out, '\x7f'));
    assert_null(strstr(out, "\xc2\x9b"));
    assert_matches(out, " warn  pod evil\xe2\x90\x9b\\[2J\xe2\x90\x9b]0;t\xe2\x90\x87: "
                        "a\xef\xbf\xbd"
                        "b\xef\xbf\xbd\xe2\x90\xa1\n$");

    krc_log_fields(KRC_LOG_INFO, "fields", f, sizeof(f) / sizeof(f[0]));
    out = drain(p);
    assert_null(strchr(out, '\x1b'));
    assert_null(strchr(out, '\x7f'));
    assert_null(strstr(out, "\xc2\x9b"));
    assert_null(strstr(out, "\xe2\x80\xae"));
    assert_null(strchr(out, '\xff'));
    assert_non_null(strstr(out, "pod=\"evil\\u001b]0;pwned\\u0007\""));
    assert_non_null(strstr(out, "c1=\"a\\u009b2Jb\""));
    assert_non_null(strstr(out, "bidi=\"x\\u202ey\""));
    assert_non_null(strstr(out, "bad=\"z\\ufffd\""));
    assert_non_null(strstr(out, "del=\"d\\u007f\""));
}

/* --- JSON ------------------------------------------------------------------ */

static cJSON *parse_one_line(const char *out)
{
    cJSON *j;
    size_t len = strlen(out);

    assert_true(len > 0);
    assert_int_equal(out[len - 1], '\n');
    assert_int_equal(count_char(out, '\n'), 1);
    j = cJSON_ParseWithLength(out, len);
    if (j == NULL) {
        fail_msg("not JSON: %s", out);
    }
    return j;
}

static void test_json_line(void **state)
{
    struct pipe_fds *p = *state;
    const char *out;
    const struct krc_log_field f[] = {
        {"pod", "web-1", 0}, {"count", "3", 1}, {"ok", "true", 1},
        {"rawempty", "", 1}, {"null", NULL, 0}, {"q\"k", "v\"\\\n\x01", 0},
    };
    cJSON *j;
    const cJSON *v;

    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_JSON, p->w);
    krc_log_fields(KRC_LOG_WARN, "restart \"x\"\nnext", f, sizeof(f) / sizeof(f[0]));
    j = parse_one_line(drain(p));
    assert_matches(cJSON_GetStringValue(cJSON_GetObjectItem(j, "ts")), "^" TS "$");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "level")), "warn");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "restart \"x\"\nnext");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "pod")), "web-1");
    v = cJSON_GetObjectItem(j, "count");
    assert_true(cJSON_IsNumber(v));
    assert_int_equal(v->valueint, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    /* a raw field without a value is still valid JSON */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "rawempty")), "");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "null")), "");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "q\"k")), "v\"\\\n\x01");
    cJSON_Delete(j);

    krc_log(KRC_LOG_ERROR, "100%% done\t%s", "tab");
    j = parse_one_line(drain(p));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "level")), "error");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "100% done\ttab");
    cJSON_Delete(j);

    /* controls escaped (the line is plain ASCII there), invalid UTF-8 as U+FFFD: valid JSON */
    krc_log(KRC_LOG_INFO, "%s", "e\x1b[2J c1\xc2\x9b bidi\xe2\x80\xae del\x7f bad\xff");
    out = drain(p);
    assert_null(strchr(out, '\x1b'));
    assert_null(strstr(out, "\xc2\x9b"));
    assert_null(strstr(out, "\xe2\x80\xae"));
    assert_null(strchr(out, '\x7f'));
    j = parse_one_line(out);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")),
                        "e\x1b[2J c1\xc2\x9b bidi\xe2\x80\xae del\x7f bad\xef\xbf\xbd");
    cJSON_Delete(j);
}

/* --- levels ---------------------------------------------------------------- */

static void test_level_filtering(void **state)
{
    struct pipe_fds *p = *state;
    const struct krc_log_field f[] = {{"k", "v", 0}};
    const char *out;

    krc_log_setup(KRC_LOG_WARN, KRC_LOG_TEXT, p->w);
    assert_false(krc_log_enabled(KRC_LOG_DEBUG));
    assert_false(krc_log_enabled(KRC_LOG_INFO));
    assert_true(krc_log_enabled(KRC_LOG_WARN));
    assert_true(krc_log_enabled(KRC_LOG_ERROR));
    KRC_DEBUG("hidden-debug");
    KRC_INFO("hidden-info");
    krc_log_fields(KRC_LOG_INFO, "hidden-fields", f, 1);
    KRC_WARN("shown-warn");
    krc_log_fields(KRC_LOG_ERROR, "shown-fields", f, 1);
    out = drain(p);
    assert_null(strstr(out, "hidden"));
    assert_non_null(strstr(out, "shown-warn"));
    assert_non_null(strstr(out, "shown-fields k=v"));
    assert_int_equal(count_char(out, '\n'), 2);

    krc_log_setup(KRC_LOG_ERROR, KRC_LOG_TEXT, p->w);
    KRC_WARN("hidden-warn");
    assert_string_equal(drain(p), "");
    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_TEXT, p->w);
    KRC_DEBUG("shown-debug");
    assert_non_null(strstr(drain(p), "shown-debug"));
}

static void test_parse_level_format(void **state)
{
    enum krc_log_level l = KRC_LOG_ERROR;
    enum krc_log_format f = KRC_LOG_JSON;
    (void)state;

    assert_int_equal(krc_log_parse_level("debug", &l), 0);
    assert_int_equal(l, KRC_LOG_DEBUG);
    assert_int_equal(krc_log_parse_level("INFO", &l), 0);
    assert_int_equal(l, KRC_LOG_INFO);
    assert_int_equal(krc_log_parse_level("Warn", &l), 0);
    assert_int_equal(l, KRC_LOG_WARN);
    assert_int_equal(krc_log_parse_level("warning", &l), 0);
    assert_int_equal(l, KRC_LOG_WARN);
    assert_int_equal(krc_log_parse_level("error", &l), 0);
    assert_int_equal(l, KRC_LOG_ERROR);
    assert_int_equal(krc_log_parse_level("verbose", &l), KRC_EINVAL);
    assert_int_equal(krc_log_parse_level("", &l), KRC_EINVAL);
    assert_int_equal(krc_log_parse_level("info ", &l), KRC_EINVAL);
    assert_int_equal(l, KRC_LOG_ERROR); /* untouched on failure */

    assert_int_equal(krc_log_parse_format("json", &f), 0);
    assert_int_equal(f, KRC_LOG_JSON);
    assert_int_equal(krc_log_parse_format("Text", &f), 0);
    assert_int_equal(f, KRC_LOG_TEXT);
    assert_int_equal(krc_log_parse_format("logfmt", &f), KRC_EINVAL);
    assert_int_equal(f, KRC_LOG_TEXT);
}

/* --- secrets --------------------------------------------------------------- */

#define WEBHOOK "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX"
#define TOKEN "eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.payload.signature"

static void test_secrets_redacted_in_lines(void **state)
{
    struct pipe_fds *p = *state;
    const struct krc_log_field f[] = {{"url", WEBHOOK, 0}, {"auth", "Bearer " TOKEN, 0}};
    const char *out;
    cJSON *j;

    krc_log_add_secret(WEBHOOK);
    krc_log_add_secret(TOKEN);
    krc_log_add_secret(TOKEN); /* duplicates are harmless */

    krc_log(KRC_LOG_ERROR, "POST %s failed; token %s; again %s", WEBHOOK, TOKEN, TOKEN);
    out = drain(p);
    assert_null(strstr(out, "XXXXXXXXXXXXXXXX"));
    assert_null(strstr(out, "payload.signature"));
    assert_matches(out,
                   " POST \\[REDACTED\\] failed; token \\[REDACTED\\]; again \\[REDACTED\\]\n$");

    krc_log_fields(KRC_LOG_INFO, "send", f, 2);
    out = drain(p);
    assert_null(strstr(out, "XXXXXXXXXXXXXXXX"));
    assert_null(strstr(out, "payload"));
    assert_non_null(strstr(out, "url=[REDACTED]"));
    assert_non_null(strstr(out, "auth=\"Bearer [REDACTED]\""));

    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_JSON, p->w);
    krc_log_fields(KRC_LOG_INFO, "send " TOKEN, f, 2);
    out = drain(p);
    assert_null(strstr(out, "payload"));
    j = parse_one_line(out);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "send [REDACTED]");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "url")), "[REDACTED]");
    cJSON_Delete(j);

    /* a secret holding a quote and a backslash is found before they are escaped */
    krc_log_add_secret("pa\"ss\\word-123");
    krc_log_fields(KRC_LOG_INFO, "db",
                   (const struct krc_log_field[]){{"pw", "x pa\"ss\\word-123", 0}}, 1);
    out = drain(p);
    assert_null(strstr(out, "word-123"));
    j = parse_one_line(out);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "pw")), "x [REDACTED]");
    cJSON_Delete(j);
    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_TEXT, p->w);
    krc_log(KRC_LOG_INFO, "%s", "pw pa\"ss\\word-123\nnext");
    krc_log_fields(KRC_LOG_INFO, "db",
                   (const struct krc_log_field[]){{"pw", "pa\"ss\\word-123", 0}}, 1);
    out = drain(p);
    assert_null(strstr(out, "word-123"));
    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_JSON, p->w);

    /* after clearing, the text is printed again */
    krc_log_clear_secrets();
    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_TEXT, p->w);
    krc_log(KRC_LOG_INFO, "%s", TOKEN);
    assert_non_null(strstr(drain(p), TOKEN));
}

/* Long lines go through the heap path of the redaction. */
static void test_secret_in_long_line(void **state)
{
    struct pipe_fds *p = *state;
    char *big = malloc(20001);
    struct krc_log_field f[2];
    const char *out;

    assert_non_null(big);
    memset(big, 'a', 20000);
    memcpy(big + 19000, TOKEN, strlen(TOKEN));
    memcpy(big + 10, TOKEN, strlen(TOKEN));
    big[20000] = '\0';
    f[0].key = "body";
    f[0].value = big;
    f[0].raw = 0;
    f[1].key = "end";
    f[1].value = "yes";
    f[1].raw = 0;
    krc_log_add_secret(TOKEN);
    krc_log_fields(KRC_LOG_INFO, "long", f, 2);
    out = drain(p);
    assert_null(strstr(out, "payload"));
    assert_int_equal(count_char(out, '\n'), 1);
    assert_non_null(strstr(out, "[REDACTED]"));
    assert_non_null(strstr(out, " end=yes\n"));
    assert_true(strlen(out) > 19000);
    free(big);
}

static void test_redact_function(void **state)
{
    char out[128];
    (void)state;

    krc_log_redact("nothing to hide", out, sizeof(out));
    assert_string_equal(out, "nothing to hide");

    krc_log_add_secret("abc"); /* shorter than 4: ignored */
    krc_log_add_secret(NULL);
    krc_log_add_secret("");
    krc_log_add_secret("hunter22");
    krc_log_redact("abc hunter22 abc hunter22hunter22", out, sizeof(out));
    assert_string_equal(out, "abc [REDACTED] abc [REDACTED][REDACTED]");
    krc_log_redact("hunter2", out, sizeof(out));
    assert_string_equal(out, "hunter2");

    /* truncation keeps the output terminated and never leaks the secret */
    krc_log_redact("x hunter22", out, 6);
    assert_string_equal(out, "x [RE");
    krc_log_redact("hunter22", out, 1);
    assert_string_equal(out, "");
    out[0] = 'Z';
    krc_log_redact("hunter22", out, 0);
    assert_int_equal(out[0], 'Z');
    krc_log_redact("", out, sizeof(out));
    assert_string_equal(out, "");
}

/* At most 16 secrets are kept: the oldest (e.g. a rotated token) goes. */
static void test_secret_limit_drops_oldest(void **state)
{
    char name[32];
    char out[64];
    (void)state;

    for (int i = 0; i < 17; i++) {
        snprintf(name, sizeof(name), "secret-%02d", i);
        krc_log_add_secret(name);
    }
    krc_log_redact("secret-16", out, sizeof(out));
    assert_string_equal(out, "[REDACTED]");
    krc_log_redact("secret-01", out, sizeof(out));
    assert_string_equal(out, "[REDACTED]");
    krc_log_redact("secret-00", out, sizeof(out));
    assert_string_equal(out, "secret-00");
}

/* BUG (src/util/log.c redact_locked): the first registered secret that matches
 * wins, not the longest, so when one secret is a prefix of another the
 * longer one's tail is printed. Minor: secrets rarely prefix each other. */
static void test_fixed_secret_prefix_of_another_leaks_tail(void **state)
{
    char out[128];
    (void)state;

    krc_log_add_secret("https://hooks.example.com/T1");
    krc_log_add_secret("https://hooks.example.com/T1/B2/SECRETPART");
    krc_log_redact("url https://hooks.example.com/T1/B2/SECRETPART", out, sizeof(out));
    assert_null(strstr(out, "SECRETPART")); /* fails: "url [REDACTED]/B2/SECRETPART" */
}

/* --- concurrency and big lines --------------------------------------------- */

struct writer {
    int id;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    char val[300];

    memset(val, 'a' + w->id, sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    for (int i = 0; i < 500; i++) {
        const struct krc_log_field f[] = {{"v", val, 0}};
        krc_log_fields(KRC_LOG_INFO, "w", f, 1);
    }
    return NULL;
}

static int tmpfile_fd(void)
{
    char path[] = "/tmp/krc-log-XXXXXX";
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    unlink(path);
    return fd;
}

static char *read_all(int fd, size_t *ret_len)
{
    off_t size = lseek(fd, 0, SEEK_END);
    char *s = malloc((size_t)size + 1);

    assert_non_null(s);
    assert_int_equal(pread(fd, s, (size_t)size, 0), size);
    s[size] = '\0';
    *ret_len = (size_t)size;
    return s;
}

/* Lines from several threads never interleave. */
static void test_threads_whole_lines(void **state)
{
    int fd = tmpfile_fd();
    pthread_t t[4];
    struct writer w[4];
    size_t len;
    char *all;
    char *line;
    int lines = 0;
    (void)state;

    krc_log_setup(KRC_LOG_DEBUG, KRC_LOG_TEXT, fd);
    for (int i = 0; i < 4; i++) {
        w[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    krc_log_setup(KRC_LOG_INFO, KRC_LOG_TEXT, 2);
    all = read_all(fd, &len);
    for (line = all; *line != '\0';) {
        char *nl = strchr(line, '\n');
        char *v;
        assert_non_null(nl);
        *nl = '\0';
        v = strstr(line, " info  w v=");
        assert_non_null(v);
        v += strlen(" info  w v=");
        assert_int_equal(strlen(v), 299);
        for (int i = 1; i < 299; i++) {
            assert_int_equal(v[i], v[0]);
        }
        lines++;
        line = nl + 1;
    }
    assert_int_equal(lines, 2000);
    free(all);
    close(fd);
}

/* Every event is exactly one line, even near the 64 KiB line cap: a
 * following line must never be glued onto a truncated one.
 * BUG (src/util/log.c emit): when the content fills the line buffer to its 64 KiB
 * limit, the final "\n" (text) or "}\n" (JSON) append fails with ETOOBIG and
 * is silently dropped; the line is written without its newline and the next
 * event continues on the same line. */
static void test_fixed_line_at_cap_loses_newline(void **state)
{
    int fd = tmpfile_fd();
    char *val = malloc(70000);
    int bad_text = -1;
    int bad_json = -1;
    (void)state;

    assert_non_null(val);
    for (int fmt = 0; fmt < 2; fmt++) {
        krc_log_setup(KRC_LOG_DEBUG, fmt ? KRC_LOG_JSON : KRC_LOG_TEXT, fd);
        for (size_t n = 65440; n < 65560; n++) {
            struct krc_log_field f[1];
            char last;
            memset(val, 'v', n);
            val[n] = '\0';
            f[0].key = "k";
            f[0].value = val;
            f[0].raw = 0;
            krc_log_fields(KRC_LOG_INFO, "m", f, 1);
            assert_int_equal(pread(fd, &last, 1, lseek(fd, 0, SEEK_END) - 1), 1);
            if (last != '\n') {
                if (fmt) {
                    bad_json = (int)n;
                } else {
                    bad_text = (int)n;
                }
                /* realign for the next write */
                assert_int_equal(write(fd, "\n", 1), 1);
            }
        }
    }
    krc_log_setup(KRC_LOG_INFO, KRC_LOG_TEXT, 2);
    free(val);
    close(fd);
    if (bad_text >= 0 || bad_json >= 0) {
        fail_msg("line without newline: text at value length %d, json at %d (-1: none)", bad_text,
                 bad_json);
    }
}

/* Known-bug tests (test_bug_*) fail until the code is fixed. They are skipped
 * unless KRC_BUG_TESTS is set: "1" runs everything, "only" just them. */
static void select_bug_tests(void)
{
    const char *v = getenv("KRC_BUG_TESTS");

    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0) {
        cmocka_set_skip_filter("test_bug_*");
    } else if (strcmp(v, "only") == 0) {
        cmocka_set_test_filter("test_bug_*");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_fields_quoting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_newline_folding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_controls_shown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_level_filtering, setup, teardown),
        cmocka_unit_test(test_parse_level_format),
        cmocka_unit_test_setup_teardown(test_secrets_redacted_in_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_in_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redact_function, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_limit_drops_oldest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_whole_lines, setup, teardown),
        /* known bugs: KRC_BUG_TESTS=only runs just these */
        cmocka_unit_test_setup_teardown(test_fixed_secret_prefix_of_another_leaks_tail, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fixed_line_at_cap_loses_newline, setup, teardown),
    };
    select_bug_tests();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
