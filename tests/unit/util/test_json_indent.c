/* json_indent: compact JSON -> two spaces a level, byte for byte what
 * Python's json.dumps(indent=2) prints; strings are copied untouched. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/json_indent.h"
#include "krc/util/mem.h"

static int indent(const char *json, char **out)
{
    size_t n = strlen(json);
    char *copy = malloc(n ? n : 1);
    int rc;

    assert_non_null(copy);
    memcpy(copy, json, n);
    rc = krc_json_indent(copy, n, out);
    free(copy);
    return rc;
}

static void expect(const char *json, const char *want)
{
    char *out = NULL;

    assert_int_equal(indent(json, &out), 0);
    assert_string_equal(out, want);
    krc_free(out);
}

static void test_layout(void **state)
{
    (void)state;
    expect("{}", "{}");
    expect("[]", "[]");
    expect("1", "1");
    expect("{\"a\":1}", "{\n  \"a\": 1\n}");
    expect("{\"a\":1,\"b\":[true,null,\"x\"],\"c\":{},\"d\":[],\"e\":{\"f\":[{\"g\":-1.5e3}]}}",
           "{\n"
           "  \"a\": 1,\n"
           "  \"b\": [\n"
           "    true,\n"
           "    null,\n"
           "    \"x\"\n"
           "  ],\n"
           "  \"c\": {},\n"
           "  \"d\": [],\n"
           "  \"e\": {\n"
           "    \"f\": [\n"
           "      {\n"
           "        \"g\": -1.5e3\n"
           "      }\n"
           "    ]\n"
           "  }\n"
           "}");
    /* white space outside strings (cJSON_Print's tabs) is dropped */
    expect("{\n\t\"a\":\t[ 1 ,\n 2 ]\n}", "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
    expect("[ ]", "[]");
}

static void test_strings_untouched(void **state)
{
    (void)state;
    /* brackets, commas, colons, escaped quotes and backslashes inside strings */
    expect("{\"k:{[,\":\"v, \\\"q\\\" {x}: [y]\\\\\"}",
           "{\n  \"k:{[,\": \"v, \\\"q\\\" {x}: [y]\\\\\"\n}");
    expect("[\"\\u001b[31m\",\"caf\xC3\xA9\",\"\\\\\"]",
           "[\n  \"\\u001b[31m\",\n  \"caf\xC3\xA9\",\n  \"\\\\\"\n]");
}

static void test_not_json(void **state)
{
    char *out = NULL;

    (void)state;
    assert_int_equal(indent("{\"a\":\"unterminated}", &out), KRC_EPARSE);
    assert_null(out);
    assert_int_equal(indent("{\"a\":[1}", &out), KRC_EPARSE);
    assert_int_equal(indent("{\"a\":1", &out), KRC_EPARSE);
    assert_int_equal(indent("]", &out), KRC_EPARSE);
    assert_int_equal(indent("\"\\", &out), KRC_EPARSE);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_strings_untouched),
        cmocka_unit_test(test_not_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
