/* yaml_doc: loading (text and stream), the located problem of a failed
 * load, and the lookups the configuration and kubeconfig readers share. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"
#include "krc/util/yaml_doc.h"

static const char DOC[] = "name: web\n"
                          "empty:\n"
                          "tilde: ~\n"
                          "quoted: \"null\"\n"
                          "upper: NULL\n"
                          "blank: ''\n"
                          "list:\n"
                          "  - a\n"
                          "  - {k: v}\n"
                          "map: {x: 1}\n"
                          "name: second\n";

static void load(yaml_document_t *doc, const char *text)
{
    struct krc_yaml_problem yp;

    assert_int_equal(krc_yaml_doc_load(doc, text, strlen(text), &yp), 0);
}

static void test_lookups(void **state)
{
    yaml_document_t doc;
    yaml_node_t *root;
    yaml_node_t *list;
    yaml_node_t *k;
    yaml_node_t *v;

    (void)state;
    load(&doc, DOC);
    root = yaml_document_get_root_node(&doc);
    assert_non_null(root);
    /* the first of a repeated key wins */
    assert_string_equal(krc_yaml_doc_scalar(krc_yaml_doc_map_get(&doc, root, "name")), "web");
    assert_null(krc_yaml_doc_map_get(&doc, root, "absent"));
    assert_null(krc_yaml_doc_map_get(&doc, NULL, "name"));
    /* a sequence is not a mapping: nothing to look up */
    list = krc_yaml_doc_map_get(&doc, root, "list");
    assert_non_null(list);
    assert_null(krc_yaml_doc_map_get(&doc, list, "a"));
    assert_null(krc_yaml_doc_scalar(list));
    assert_null(krc_yaml_doc_scalar(NULL));
    /* lengths and items */
    assert_int_equal(krc_yaml_doc_map_len(root), 9);
    assert_int_equal(krc_yaml_doc_map_len(list), 0);
    assert_int_equal(krc_yaml_doc_seq_len(list), 2);
    assert_int_equal(krc_yaml_doc_seq_len(root), 0);
    assert_int_equal(krc_yaml_doc_seq_len(NULL), 0);
    assert_string_equal(krc_yaml_doc_scalar(krc_yaml_doc_seq_item(&doc, list, 0)), "a");
    v = krc_yaml_doc_seq_item(&doc, list, 1);
    assert_int_equal(v->type, YAML_MAPPING_NODE);
    assert_string_equal(krc_yaml_doc_scalar(krc_yaml_doc_map_get(&doc, v, "k")), "v");
    krc_yaml_doc_map_pair(&doc, root, 8, &k, &v);
    assert_string_equal(krc_yaml_doc_scalar(k), "name");
    assert_string_equal(krc_yaml_doc_scalar(v), "second");
    /* positions are 1-based */
    assert_int_equal(krc_yaml_doc_line(k), 11);
    assert_int_equal(krc_yaml_doc_column(k), 1);
    assert_int_equal(krc_yaml_doc_line(v), 11);
    assert_int_equal(krc_yaml_doc_column(v), 7);
    assert_int_equal(krc_yaml_doc_line(NULL), 0);
    assert_int_equal(krc_yaml_doc_column(NULL), 0);
    yaml_document_delete(&doc);
}

static void test_null(void **state)
{
    yaml_document_t doc;
    yaml_node_t *root;

    (void)state;
    load(&doc, DOC);
    root = yaml_document_get_root_node(&doc);
#define AT(key) krc_yaml_doc_map_get(&doc, root, key)
    /* the null words, plain */
    assert_true(krc_yaml_doc_is_null(AT("tilde"), 0));
    assert_true(krc_yaml_doc_is_null(AT("upper"), 0));
    assert_true(krc_yaml_doc_is_null(AT("tilde"), 1));
    /* an empty plain value and an absent key: null only when asked */
    assert_false(krc_yaml_doc_is_null(AT("empty"), 0));
    assert_true(krc_yaml_doc_is_null(AT("empty"), 1));
    assert_false(krc_yaml_doc_is_null(NULL, 0));
    assert_true(krc_yaml_doc_is_null(NULL, 1));
    /* quoted text is a string, even "null" or '' */
    assert_false(krc_yaml_doc_is_null(AT("quoted"), 1));
    assert_false(krc_yaml_doc_is_null(AT("blank"), 1));
    /* other values and collections are not null */
    assert_false(krc_yaml_doc_is_null(AT("name"), 1));
    assert_false(krc_yaml_doc_is_null(AT("map"), 1));
#undef AT
    yaml_document_delete(&doc);
}

static void test_syntax_problem(void **state)
{
    static const char bad[] = "a: 1\nb: [1, 2\nc: 3\n";
    struct krc_yaml_problem yp;
    yaml_document_t doc;

    (void)state;
    assert_int_equal(krc_yaml_doc_load(&doc, bad, strlen(bad), &yp), KRC_EPARSE);
    assert_int_equal(yp.kind, KRC_YAML_SYNTAX);
    assert_int_equal(yp.line, 3);
    assert_true(yp.column >= 1);
    assert_non_null(yp.problem);
    assert_non_null(yp.context);

    assert_int_equal(krc_yaml_doc_load(&doc, "a: b: c\n", 8, &yp), KRC_EPARSE);
    assert_int_equal(yp.kind, KRC_YAML_SYNTAX);
    assert_int_equal(yp.line, 1);
    assert_int_equal(yp.column, 5);
    assert_string_equal(yp.problem, "mapping values are not allowed in this context");
}

static void test_unreadable_problem(void **state)
{
    static const char bad[] = "key: ab\xff\xfe";
    struct krc_yaml_problem yp;
    yaml_document_t doc;

    (void)state;
    assert_int_equal(krc_yaml_doc_load(&doc, bad, sizeof(bad) - 1, &yp), KRC_EPARSE);
    assert_int_equal(yp.kind, KRC_YAML_UNREADABLE);
    assert_int_equal(yp.offset, 7);
    assert_non_null(yp.problem);
}

static void test_empty_and_length(void **state)
{
    struct krc_yaml_problem yp;
    yaml_document_t doc;

    (void)state;
    assert_int_equal(krc_yaml_doc_load(&doc, "", 0, &yp), 0);
    assert_null(yaml_document_get_root_node(&doc));
    yaml_document_delete(&doc);
    assert_int_equal(krc_yaml_doc_load(&doc, NULL, 0, &yp), 0);
    assert_null(yaml_document_get_root_node(&doc));
    yaml_document_delete(&doc);
    /* the length bounds the text: "x: 1" of "x: 1: broken" */
    assert_int_equal(krc_yaml_doc_load(&doc, "x: 1: broken", 4, &yp), 0);
    assert_string_equal(
        krc_yaml_doc_scalar(krc_yaml_doc_map_get(&doc, yaml_document_get_root_node(&doc), "x")),
        "1");
    yaml_document_delete(&doc);
}

static void test_load_file(void **state)
{
    struct krc_yaml_problem yp;
    yaml_document_t doc;
    FILE *fp = tmpfile();

    (void)state;
    assert_non_null(fp);
    fputs("top:\n  - one\n  - two\n", fp);
    rewind(fp);
    assert_int_equal(krc_yaml_doc_load_file(&doc, fp, &yp), 0);
    assert_int_equal(
        krc_yaml_doc_seq_len(krc_yaml_doc_map_get(&doc, yaml_document_get_root_node(&doc), "top")),
        2);
    yaml_document_delete(&doc);
    fclose(fp);

    fp = tmpfile();
    assert_non_null(fp);
    fputs("ok: 1\n\"unclosed\n", fp);
    rewind(fp);
    assert_int_equal(krc_yaml_doc_load_file(&doc, fp, &yp), KRC_EPARSE);
    assert_int_equal(yp.kind, KRC_YAML_SYNTAX);
    assert_true(yp.line >= 2);
    fclose(fp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookups),          cmocka_unit_test(test_null),
        cmocka_unit_test(test_syntax_problem),   cmocka_unit_test(test_unreadable_problem),
        cmocka_unit_test(test_empty_and_length), cmocka_unit_test(test_load_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
