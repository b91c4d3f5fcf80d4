/* Compact JSON -> two-space indented JSON (json_indent.h). */
#include "krc/util/json_indent.h"

#include <stdint.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/mem.h"

#define DEPTH_MAX 1024

static int newline(struct krc_buf *b, int depth)
{
    int rc = krc_buf_append_char(b, '\n');

    for (int i = 0; rc == 0 && i < depth; i++) {
        rc = krc_buf_append(b, "  ", 2);
    }
    return rc;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The next byte that is not white space after i, or '\0' at the end. */
static char next_token(const char *json, size_t len, size_t i)
{
    while (i < len && is_space(json[i])) {
        i++;
    }
    return i < len ? json[i] : '\0';
}

int krc_json_indent(const char *json, size_t len, char **ret)
{
    struct krc_buf b;
    char open[DEPTH_MAX];
    int depth = 0;
    int rc = 0;
    size_t i = 0;

    *ret = NULL;
    krc_buf_init(&b, SIZE_MAX / 2);
    while (rc == 0 && i < len) {
        char c = json[i];

        if (c == '"') {
            size_t start = i++;
            while (i < len && json[i] != '"') {
                i += json[i] == '\\' ? 2 : 1;
            }
            if (i >= len) {
                rc = KRC_EPARSE;
                break;
            }
            rc = krc_buf_append(&b, json + start, ++i - start);
            continue;
        }
        i++;
        if (is_space(c)) {
            continue;
        }
        if (c == '{' || c == '[') {
            char close = c == '{' ? '}' : ']';
            if (next_token(json, len, i) == close) {
                /* {} and [] on one line */
                rc = krc_buf_append_char(&b, c);
                rc = rc == 0 ? krc_buf_append_char(&b, close) : rc;
                while (json[i] != close) {
                    i++;
                }
                i++;
                continue;
            }
            if (depth == DEPTH_MAX) {
                rc = KRC_EPARSE;
                break;
            }
            open[depth++] = close;
            rc = krc_buf_append_char(&b, c);
            rc = rc == 0 ? newline(&b, depth) : rc;
        } else if (c == '}' || c == ']') {
            if (depth == 0 || open[depth - 1] != c) {
                rc = KRC_EPARSE;
                break;
            }
            rc = newline(&b, --depth);
            rc = rc == 0 ? krc_buf_append_char(&b, c) : rc;
        } else if (c == ',') {
            rc = krc_buf_append_char(&b, c);
            rc = rc == 0 ? newline(&b, depth) : rc;
        } else if (c == ':') {
            rc = krc_buf_append(&b, ": ", 2);
        } else {
            rc = krc_buf_append_char(&b, c);
        }
    }
    if (rc == 0 && depth != 0) {
        rc = KRC_EPARSE;
    }
    if (rc == 0) {
        *ret = krc_buf_take(&b);
        rc = *ret != NULL ? 0 : KRC_ENOMEM;
    }
    krc_buf_cleanup(&b);
    return rc;
}
