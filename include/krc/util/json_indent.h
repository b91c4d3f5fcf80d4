/* Compact JSON -> JSON indented with two spaces per level, one member or
 * element a line, "key": value, and empty objects and arrays as {} and []
 * (what Python's json.dumps(indent=2) and jq print), for output people
 * read. Only white space outside strings changes: the strings, numbers
 * and literals are copied byte for byte. */
#ifndef KRC_JSON_INDENT_H
#define KRC_JSON_INDENT_H

#include <stddef.h>

/* `json`: one JSON text (len bytes) whose white space outside strings, if
 * any, is dropped (e.g. cJSON_PrintUnformatted's output). *ret (caller
 * frees with krc_free) is NUL-terminated, with no final newline. 0,
 * KRC_EPARSE for an unterminated string or unbalanced brackets (the text
 * was not JSON), KRC_ENOMEM. */
int krc_json_indent(const char *json, size_t len, char **ret);

#endif
