/* Logging: one event per line, human text or JSON lines, to stderr.
 * Thread-safe; each line is written with a single write(2). Registered
 * secrets are replaced by "[REDACTED]" in every line before it is written. */
#ifndef KRC_LOG_H
#define KRC_LOG_H

#include <stddef.h>

enum krc_log_level {
    KRC_LOG_DEBUG = 0,
    KRC_LOG_INFO = 1,
    KRC_LOG_WARN = 2,
    KRC_LOG_ERROR = 3,
};

enum krc_log_format {
    KRC_LOG_TEXT = 0,
    KRC_LOG_JSON = 1,
};

/* A structured field. `value` is borrowed; `raw` means it is a JSON number or
 * boolean and is written without quotes in JSON lines. */
struct krc_log_field {
    const char *key;
    const char *value;
    int raw;
};

void krc_log_setup(enum krc_log_level min_level, enum krc_log_format format, int fd);
/* Change the minimum level at run time (configuration reload). */
void krc_log_set_level(enum krc_log_level min_level);
/* Parse "debug|info|warn|error" / "text|json"; 0 or KRC_EINVAL. */
int krc_log_parse_level(const char *s, enum krc_log_level *ret_level);
int krc_log_parse_format(const char *s, enum krc_log_format *ret_format);
int krc_log_enabled(enum krc_log_level level);

void krc_log(enum krc_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void krc_log_fields(enum krc_log_level level, const char *msg, const struct krc_log_field *fields,
                    size_t n_fields);

/* Never print `secret` (copied). Strings shorter than 4 bytes are ignored. */
void krc_log_add_secret(const char *secret);
void krc_log_clear_secrets(void);

/* Redact registered secrets from s into out (size outsz); used by other
 * writers of user-visible text (error messages on stdout). */
void krc_log_redact(const char *s, char *out, size_t outsz);

#define KRC_DEBUG(...) krc_log(KRC_LOG_DEBUG, __VA_ARGS__)
#define KRC_INFO(...) krc_log(KRC_LOG_INFO, __VA_ARGS__)
#define KRC_WARN(...) krc_log(KRC_LOG_WARN, __VA_ARGS__)
#define KRC_ERROR(...) krc_log(KRC_LOG_ERROR, __VA_ARGS__)

#endif
