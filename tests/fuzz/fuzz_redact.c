/* redact: any bytes (logs, messages) through the built-in scanners plus two
 * text patterns. No redaction means an unchanged copy; a second pass over
 * the output changes nothing (a redacted text stays as it is, see
 * test_redact); and the output is never longer than the input plus one
 * mark per redaction.
 *
 * And the secret corpus (tests/fixtures/secrets/corpus.txt, issue 24): the
 * input also picks a corpus form (byte 0), how it is written (byte 1: as it
 * is, inside a JSON string, two JSON strings deep, as a field value through
 * krc_redact_field; a label or annotation also as KEY: VALUE, "KEY": "VALUE",
 * KEY=VALUE and --KEY VALUE), the blanks around it (byte 2) and the text
 * before and after it (the rest, split at FUZZ_SEP); no secret of the form
 * may survive. The surrounding text is any bytes but quotes, backslashes,
 * '=' and ':' (those would make it part of the form's syntax: an open quote
 * before a form swallows its key) and is set apart from the form by blanks
 * or a newline (text glued to a key is another key). */
#include <string.h>

#include "fuzz.h"
#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/redact.h"

#define CORPUS_MAX 256
#define LINE_MAX_ 1024
#define SECRETS_MAX 4

struct form {
    char kind; /* 't'ext, 'a'nnotation, 'l'abel */
    char key[160];
    char text[LINE_MAX_];
    char secret[SECRETS_MAX][160];
    size_t n_secrets;
};

static struct form corpus[CORPUS_MAX];
static size_t n_corpus;

/* One line of the corpus file into f; 0 for comments, "keep" lines and blanks. */
static int parse_line(char *s, struct form *f)
{
    size_t o = 0;

    memset(f, 0, sizeof(*f));
    f->kind = 't';
    if (s[0] == '#' || s[0] == '\0' || strncmp(s, "keep ", 5) == 0) {
        return 0;
    }
    if (strncmp(s, "annotation ", 11) == 0 || strncmp(s, "label ", 6) == 0) {
        char *sp;
        f->kind = s[0];
        s = strchr(s, ' ') + 1;
        sp = strchr(s, ' ');
        FUZZ_CHECK(sp != NULL, "corpus: %s has no value", s);
        snprintf(f->key, sizeof(f->key), "%.*s", (int)(sp - s), s);
        s = sp + 1;
    }
    while (*s != '\0' && o + 1 < sizeof(f->text)) {
        if (s[0] == '\\' && s[1] == 'n') {
            f->text[o++] = '\n';
            s += 2;
        } else if (s[0] == '{' && s[1] == '{') {
            char *e = strstr(s, "}}");
            FUZZ_CHECK(e != NULL && f->n_secrets < SECRETS_MAX, "corpus: bad marker in %s", s);
            snprintf(f->secret[f->n_secrets++], sizeof(f->secret[0]), "%.*s", (int)(e - s - 2),
                     s + 2);
            memcpy(f->text + o, s + 2, (size_t)(e - s - 2));
            o += (size_t)(e - s - 2);
            s = e + 2;
        } else {
            f->text[o++] = *s++;
        }
    }
    f->text[o] = '\0';
    return f->n_secrets > 0;
}

static void load_corpus(void)
{
    FILE *fp = fopen(KRC_FIXTURES "/secrets/corpus.txt", "r");
    char line[LINE_MAX_ + 256];

    FUZZ_CHECK(fp != NULL, "cannot read %s", KRC_FIXTURES "/secrets/corpus.txt");
    while (fgets(line, sizeof(line), fp) != NULL && n_corpus < CORPUS_MAX) {
        line[strcspn(line, "\n")] = '\0';
        n_corpus += (size_t)parse_line(line, &corpus[n_corpus]);
    }
    fclose(fp);
    FUZZ_CHECK(n_corpus >= 40, "corpus: %zu forms", n_corpus);
}

/* s as the inside of a JSON string (quotes and backslashes escaped). */
static void json_escaped(struct krc_buf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\') {
            krc_buf_append_char(b, '\\');
            krc_buf_append_char(b, s[i]);
        } else if (s[i] == '\n') {
            krc_buf_append_str(b, "\\n");
        } else {
            krc_buf_append_char(b, s[i]);
        }
    }
}

/* The surrounding text: the fuzzer's bytes without the form's syntax. */
static void context(struct krc_buf *b, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\'' || c == '`' || c == '\\' || c == '=' || c == ':') {
            c = '_';
        }
        krc_buf_append_char(b, (char)c);
    }
}

/* Does data[0..len) hold s? (the output may hold NUL bytes) */
static int contains(const char *data, size_t len, const char *s)
{
    size_t n = strlen(s);

    for (size_t i = 0; data != NULL && n > 0 && i + n <= len; i++) {
        if (data[i] == s[0] && memcmp(data + i, s, n) == 0) {
            return 1;
        }
    }
    return 0;
}

static const char *const blanks[] = {" ", "\n", "\t", " \n", "  ", "\r\n"};

static void check_corpus(const struct krc_redactor *rd, const uint8_t *data, size_t size)
{
    const uint8_t *parts[2];
    size_t lens[2] = {0, 0};
    const struct form *f;
    const char *gap;
    struct krc_buf form;
    struct krc_buf before;
    struct krc_buf after;
    struct krc_buf in;
    struct krc_buf out;
    unsigned how;
    int n;

    if (size < 3) {
        return;
    }
    f = &corpus[data[0] % n_corpus];
    how = data[1] % (f->kind == 't' ? 4u : 8u);
    gap = blanks[data[2] % (sizeof(blanks) / sizeof(blanks[0]))];
    parts[1] = NULL;
    if (fuzz_split(data + 3, size - 3, parts, lens, 2) < 2) {
        lens[1] = 0;
    }
    krc_buf_init(&form, 1u << 20);
    krc_buf_init(&before, 1u << 20);
    krc_buf_init(&after, 1u << 20);
    krc_buf_init(&in, 1u << 22);
    krc_buf_init(&out, 1u << 22);
    /* the form */
    switch (how) {
    case 0: /* as it is; a field as KEY: VALUE */
        if (f->kind != 't') {
            krc_buf_printf(&form, "%s: ", f->key);
        }
        krc_buf_append_str(&form, f->text);
        break;
    case 1: /* inside a JSON string; a field as "KEY": "VALUE" */
        krc_buf_append_str(&form, f->kind == 't' ? "{\"msg\":\"" : "{\"");
        if (f->kind != 't') {
            krc_buf_printf(&form, "%s\": \"", f->key);
        }
        json_escaped(&form, f->text, strlen(f->text));
        krc_buf_append_str(&form, "\"}");
        break;
    case 2: { /* two JSON strings deep; a field: "KEY": "VALUE" inside one */
        struct krc_buf inner;
        krc_buf_init(&inner, 1u << 20);
        krc_buf_append_str(&inner, "{\"");
        if (f->kind != 't') {
            krc_buf_printf(&inner, "%s\":\"", f->key);
        } else {
            krc_buf_append_str(&inner, "log\":\"");
        }
        json_escaped(&inner, f->text, strlen(f->text));
        krc_buf_append_str(&inner, "\"}");
        krc_buf_append_str(&form, "{\"msg\":\"");
        json_escaped(&form, inner.data != NULL ? inner.data : "", inner.len);
        krc_buf_append_str(&form, "\"}");
        krc_buf_cleanup(&inner);
        break;
    }
    case 4: /* KEY=VALUE */
        krc_buf_printf(&form, "%s=%s", f->key, f->text);
        break;
    case 5: /* YAML: KEY: VALUE under a map */
        krc_buf_printf(&form, "annotations:\n  %s: %s", f->key, f->text);
        break;
    case 6: /* a command line */
        krc_buf_printf(&form, "run --%s %s", f->key, f->text);
        break;
    default: /* 3, 7: a field value, through krc_redact_field (below) */
        krc_buf_append_str(&form, f->text);
        break;
    }
    if (how == 6 && (strchr(f->text, ' ') != NULL || strpbrk(f->key, "./") != NULL ||
                     !krc_redact_secret_key(f->key, strlen(f->key)))) {
        /* --KEY VALUE: one word, a flag's name (no '.' or '/'), a secret's */
        goto done;
    }
    if (how == 4 && strchr(f->text, ' ') != NULL && krc_redact_secret_key(f->key, strlen(f->key))) {
        goto done; /* a bare value ends at a blank: KEY=two words is not one value */
    }
    context(&before, parts[0], lens[0]);
    context(&after, parts[1], lens[1]);
    for (size_t s = 0; s < f->n_secrets; s++) {
        if (contains(before.data, before.len, f->secret[s]) ||
            contains(after.data, after.len, f->secret[s])) {
            goto done; /* the surrounding text spells the secret itself */
        }
    }
    krc_buf_append(&in, before.data != NULL ? before.data : "", before.len);
    krc_buf_append_str(&in, gap);
    krc_buf_append(&in, form.data != NULL ? form.data : "", form.len);
    krc_buf_append_str(&in, gap);
    krc_buf_append(&in, after.data != NULL ? after.data : "", after.len);
    if (in.data == NULL) {
        goto done;
    }
    if (how == 3 || how == 7) {
        n = krc_redact_field(rd, f->kind == 't' ? "message" : f->key, in.data, in.len, &out, NULL);
    } else {
        n = krc_redact_apply(rd, in.data, in.len, &out, NULL);
    }
    FUZZ_CHECK(n > 0, "corpus form %s (way %u) not redacted", f->text, how);
    for (size_t s = 0; s < f->n_secrets; s++) {
        FUZZ_CHECK(!contains(out.data, out.len, f->secret[s]),
                   "secret \"%s\" survived (way %u): %.*s -> %s", f->secret[s], how, (int)in.len,
                   in.data, krc_buf_str(&out));
    }
done:
    krc_buf_cleanup(&form);
    krc_buf_cleanup(&before);
    krc_buf_cleanup(&after);
    krc_buf_cleanup(&in);
    krc_buf_cleanup(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct krc_redactor *rd;
    static const char *const extra[] = {"secret-[a-z]{4}", "pin:\\d{4,}"};
    struct krc_buf a;
    struct krc_buf b;
    struct krc_error err;
    int n;
    int m;

    if (rd == NULL && krc_redact_new(extra, 2, &rd, &err) != 0) {
        fprintf(stderr, "redact: %s\n", err.msg);
        abort();
    }
    if (n_corpus == 0) {
        load_corpus();
    }
    krc_buf_init(&a, 1u << 24);
    krc_buf_init(&b, 1u << 24);
    n = krc_redact_apply(rd, data, size, &a, &err);
    FUZZ_CHECK(n >= 0, "redact failed: %d", n);
    if (n == 0) {
        FUZZ_CHECK(a.len == size && (size == 0 || memcmp(a.data, data, size) == 0),
                   "no redaction but the copy differs");
    }
    FUZZ_CHECK(a.len <= size + (size_t)n * sizeof(KRC_REDACT_MARK), "%zu bytes from %zu, %d marks",
               a.len, size, n);
    m = krc_redact_apply(rd, a.data, a.len, &b, &err);
    FUZZ_CHECK(m >= 0, "second pass failed: %d", m);
    FUZZ_CHECK(b.len == a.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0),
               "a second pass changed the text (%d more redactions)", m);
    krc_buf_cleanup(&a);
    krc_buf_cleanup(&b);
    check_corpus(rd, data, size);
    return 0;
}
