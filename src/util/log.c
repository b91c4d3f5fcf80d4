#define _GNU_SOURCE /* memmem */
#include "krc/util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"
#include "krc/util/text.h"

#define MAX_SECRETS 16
#define LINE_MAX_BYTES (64 * 1024)

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int log_min = KRC_LOG_INFO; /* SIGHUP may change it */
static enum krc_log_format log_format = KRC_LOG_TEXT;
static int log_fd = 2;
static char *secrets[MAX_SECRETS];
static size_t secret_lens[MAX_SECRETS];
static size_t n_secrets;

static const char *level_names[] = {"debug", "info", "warn", "error"};

void krc_log_setup(enum krc_log_level min_level, enum krc_log_format format, int fd)
{
    pthread_mutex_lock(&log_lock);
    atomic_store(&log_min, (int)min_level);
    log_format = format;
    log_fd = fd;
    pthread_mutex_unlock(&log_lock);
}

void krc_log_set_level(enum krc_log_level min_level)
{
    atomic_store(&log_min, (int)min_level);
}

int krc_log_parse_level(const char *s, enum krc_log_level *ret_level)
{
    size_t i;

    for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *ret_level = (enum krc_log_level)i;
            return 0;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *ret_level = KRC_LOG_WARN;
        return 0;
    }
    return KRC_EINVAL;
}

int krc_log_parse_format(const char *s, enum krc_log_format *ret_format)
{
    if (strcasecmp(s, "text") == 0) {
        *ret_format = KRC_LOG_TEXT;
        return 0;
    }
    if (strcasecmp(s, "json") == 0) {
        *ret_format = KRC_LOG_JSON;
        return 0;
    }
    return KRC_EINVAL;
}

int krc_log_enabled(enum krc_log_level level)
{
    return (int)level >= atomic_load(&log_min);
}

void krc_log_add_secret(const char *secret)
{
    if (secret == NULL || strlen(secret) < 4) {
        return;
    }
    pthread_mutex_lock(&log_lock);
    for (size_t i = 0; i < n_secrets; i++) {
        if (strcmp(secrets[i], secret) == 0) {
            pthread_mutex_unlock(&log_lock);
            return;
        }
    }
    if (n_secrets == MAX_SECRETS) {
        /* Oldest secret (e.g. a rotated token) makes room. */
        krc_free(secrets[0]);
        memmove(secrets, secrets + 1, (MAX_SECRETS - 1) * sizeof(secrets[0]));
        memmove(secret_lens, secret_lens + 1, (MAX_SECRETS - 1) * sizeof(secret_lens[0]));
        n_secrets--;
    }
    secrets[n_secrets] = krc_strdup(secret);
    if (secrets[n_secrets] != NULL) {
        secret_lens[n_secrets] = strlen(secret);
        n_secrets++;
    }
    pthread_mutex_unlock(&log_lock);
}

void krc_log_clear_secrets(void)
{
    pthread_mutex_lock(&log_lock);
    for (size_t i = 0; i < n_secrets; i++) {
        krc_free(secrets[i]);
    }
    n_secrets = 0;
    pthread_mutex_unlock(&log_lock);
}

/* Caller holds log_lock. Finds each secret with memmem (fast even on long
 * lines); at the same position the longest secret wins, since one secret may
 * be a prefix of another. */
static void redact_locked(const char *s, char *out, size_t outsz)
{
    static const char mark[] = "[REDACTED]";
    size_t len = strlen(s);
    size_t pos = 0;
    size_t o = 0;

    if (outsz == 0) {
        return;
    }
    while (pos < len && o + 1 < outsz) {
        const char *best = NULL;
        size_t best_len = 0;
        size_t copy;
        for (size_t i = 0; i < n_secrets; i++) {
            const char *hit = memmem(s + pos, len - pos, secrets[i], secret_lens[i]);
            if (hit != NULL &&
                (best == NULL || hit < best || (hit == best && secret_lens[i] > best_len))) {
                best = hit;
                best_len = secret_lens[i];
            }
        }
        copy = (best != NULL ? (size_t)(best - s) : len) - pos;
        if (copy > outsz - 1 - o) {
            copy = outsz - 1 - o;
        }
        memcpy(out + o, s + pos, copy);
        o += copy;
        pos += copy;
        if (best == NULL || o + 1 >= outsz) {
            break;
        }
        for (const char *r = mark; *r != '\0' && o + 1 < outsz; r++) {
            out[o++] = *r;
        }
        pos += best_len;
    }
    out[o] = '\0';
}

void krc_log_redact(const char *s, char *out, size_t outsz)
{
    pthread_mutex_lock(&log_lock);
    redact_locked(s, out, outsz);
    pthread_mutex_unlock(&log_lock);
}

static void timestamp(char *out, size_t outsz)
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, outsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static int needs_quotes(const char *v)
{
    if (*v == '\0') {
        return 1;
    }
    for (; *v != '\0'; v++) {
        unsigned char c = (unsigned char)*v;
        if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c >= 0x7f) {
            return 1;
        }
    }
    return 0;
}

/* s as the inside of a JSON string that is also safe on a terminal:
 * krc_buf_append_json_str's escapes (C0 as \u00XX), plus DEL, C1 and the
 * bidirectional controls as \u escapes and each invalid UTF-8 byte as
 * \ufffd, so a log line is valid JSON and nothing in a value can reach the
 * terminal as a control. */
static void append_json_safe(struct krc_buf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        size_t run = i;
        uint32_t cp = 0;
        size_t n = 0;

        while (run < len) {
            if (p[run] < 0x7f) {
                run++;
                continue;
            }
            n = p[run] == 0x7f ? 1 : krc_text_utf8_decode(p + run, len - run, &cp);
            if (p[run] == 0x7f || n == 0 || krc_text_unsafe_cp(cp)) {
                break;
            }
            run += n;
        }
        krc_buf_append_json_str(b, s + i, run - i);
        if (run == len) {
            break;
        }
        if (p[run] == 0x7f) {
            krc_buf_append_str(b, "\\u007f");
            run++;
        } else if (n == 0) {
            krc_buf_append_str(b, "\\ufffd");
            run++;
        } else {
            krc_buf_printf(b, "\\u%04x", (unsigned)cp);
            run += n;
        }
        i = run;
    }
}

static void append_text_value(struct krc_buf *b, const char *v)
{
    if (!needs_quotes(v)) {
        krc_buf_append_str(b, v);
        return;
    }
    krc_buf_append_char(b, '"');
    append_json_safe(b, v, strlen(v));
    krc_buf_append_char(b, '"');
}

/* Caller holds log_lock. v with the registered secrets redacted: v itself
 * when there are none, else a copy in *tmp (no memory: v is not shown).
 * Pieces are redacted before they are escaped, so a secret holding a quote
 * or a backslash is still found. */
static const char *redact_piece(const char *v, char **tmp)
{
    size_t need;

    *tmp = NULL;
    if (n_secrets == 0) {
        return v;
    }
    need = strlen(v) * 3 + 16;
    *tmp = krc_malloc(need);
    if (*tmp == NULL) {
        return "(not shown: out of memory)"; /* never unredacted */
    }
    redact_locked(v, *tmp, need);
    return *tmp;
}

/* Caller holds log_lock. */
static void build_line(struct krc_buf *line, enum krc_log_level level, const char *msg,
                       const struct krc_log_field *fields, size_t n_fields)
{
    char ts[40];
    char *tmp;
    const char *m;

    timestamp(ts, sizeof(ts));
    m = redact_piece(msg, &tmp);
    if (log_format == KRC_LOG_JSON) {
        krc_buf_printf(line, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts, level_names[level]);
        append_json_safe(line, m, strlen(m));
        krc_buf_append_char(line, '"');
    } else {
        krc_buf_printf(line, "%s %-5s ", ts, level_names[level]);
        /* A message is one line: newlines, tabs and controls are folded or
         * shown (krc_text_sanitize), never written raw. */
        krc_text_sanitize(line, m, strlen(m), 0);
    }
    krc_free(tmp);
    for (size_t i = 0; i < n_fields; i++) {
        const char *v = redact_piece(fields[i].value != NULL ? fields[i].value : "", &tmp);
        if (log_format == KRC_LOG_JSON) {
            krc_buf_append_str(line, ",\"");
            append_json_safe(line, fields[i].key, strlen(fields[i].key));
            krc_buf_append_str(line, "\":");
            if (fields[i].raw && *v != '\0') {
                krc_buf_append_str(line, v);
            } else {
                krc_buf_append_char(line, '"');
                append_json_safe(line, v, strlen(v));
                krc_buf_append_char(line, '"');
            }
        } else {
            krc_buf_printf(line, " %s=", fields[i].key);
            append_text_value(line, v);
        }
        krc_free(tmp);
    }
    if (log_format == KRC_LOG_JSON) {
        line->max = LINE_MAX_BYTES + 2;
        krc_buf_append_str(line, "}\n");
    } else {
        line->max = LINE_MAX_BYTES + 1;
        krc_buf_append_char(line, '\n');
    }
}

static void emit(enum krc_log_level level, const char *msg, const struct krc_log_field *fields,
                 size_t n_fields)
{
    struct krc_buf line;
    char stackbuf[4096];
    char *redacted = stackbuf;
    size_t need;

    /* Content may use up LINE_MAX_BYTES; the line ending always fits. */
    krc_buf_init(&line, LINE_MAX_BYTES);
    pthread_mutex_lock(&log_lock);
    build_line(&line, level, msg, fields, n_fields);
    if (line.data == NULL) {
        pthread_mutex_unlock(&log_lock);
        krc_buf_cleanup(&line);
        return;
    }
    if (n_secrets > 0) {
        /* Each secret is >= 4 bytes and "[REDACTED]" is 10: at most 2.5x growth. */
        need = line.len * 3 + 16;
        if (need > sizeof(stackbuf)) {
            redacted = krc_malloc(need);
        }
        if (redacted != NULL) {
            redact_locked(line.data, redacted, need > sizeof(stackbuf) ? need : sizeof(stackbuf));
        }
    } else {
        redacted = line.data;
    }
    if (redacted != NULL) {
        size_t len = strlen(redacted);
        size_t off = 0;
        while (off < len) {
            ssize_t w = write(log_fd, redacted + off, len - off);
            if (w <= 0) {
                break;
            }
            off += (size_t)w;
        }
    }
    pthread_mutex_unlock(&log_lock);
    if (redacted != stackbuf && redacted != line.data) {
        krc_free(redacted);
    }
    krc_buf_cleanup(&line);
}

void krc_log(enum krc_log_level level, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;

    if ((int)level < atomic_load(&log_min)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    emit(level, msg, NULL, 0);
}

void krc_log_fields(enum krc_log_level level, const char *msg, const struct krc_log_field *fields,
                    size_t n_fields)
{
    if ((int)level < atomic_load(&log_min)) {
        return;
    }
    emit(level, msg, fields, n_fields);
}
