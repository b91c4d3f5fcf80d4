#include "krc/util/yaml_doc.h"

#include <string.h>

#include "krc/util/error.h"

void krc_yaml_doc_problem(const yaml_parser_t *p, struct krc_yaml_problem *ret)
{
    memset(ret, 0, sizeof(*ret));
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        ret->kind = KRC_YAML_OUT_OF_MEMORY;
        break;
    case YAML_READER_ERROR:
        ret->kind = KRC_YAML_UNREADABLE;
        break;
    default:
        ret->kind = KRC_YAML_SYNTAX;
        break;
    }
    ret->line = p->problem_mark.line + 1;
    ret->column = p->problem_mark.column + 1;
    ret->offset = p->problem_offset;
    ret->problem = p->problem;
    ret->context = p->context;
}

/* fp or data[0..len): the parser's input. */
static int load(yaml_document_t *doc, FILE *fp, const char *data, size_t len,
                struct krc_yaml_problem *ret_problem)
{
    yaml_parser_t parser;
    int rc = 0;

    if (!yaml_parser_initialize(&parser)) {
        memset(ret_problem, 0, sizeof(*ret_problem));
        ret_problem->kind = KRC_YAML_NO_PARSER;
        return KRC_ENOMEM;
    }
    if (fp != NULL) {
        yaml_parser_set_input_file(&parser, fp);
    } else {
        yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
    }
    if (!yaml_parser_load(&parser, doc)) {
        /* the problem's texts are libyaml's static strings: they outlive
         * the parser */
        krc_yaml_doc_problem(&parser, ret_problem);
        rc = ret_problem->kind == KRC_YAML_OUT_OF_MEMORY ? KRC_ENOMEM : KRC_EPARSE;
    }
    yaml_parser_delete(&parser);
    return rc;
}

int krc_yaml_doc_load(yaml_document_t *doc, const char *data, size_t len,
                      struct krc_yaml_problem *ret_problem)
{
    return load(doc, NULL, data != NULL ? data : "", len, ret_problem);
}

int krc_yaml_doc_load_file(yaml_document_t *doc, FILE *fp, struct krc_yaml_problem *ret_problem)
{
    return load(doc, fp, NULL, 0, ret_problem);
}

size_t krc_yaml_doc_line(const yaml_node_t *n)
{
    return n != NULL ? n->start_mark.line + 1 : 0;
}

size_t krc_yaml_doc_column(const yaml_node_t *n)
{
    return n != NULL ? n->start_mark.column + 1 : 0;
}

int krc_yaml_doc_is_null(const yaml_node_t *n, int empty_is_null)
{
    const char *v;

    if (n == NULL) {
        return empty_is_null;
    }
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        return 0;
    }
    v = (const char *)n->data.scalar.value;
    return (empty_is_null && v[0] == '\0') || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
           strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

const char *krc_yaml_doc_scalar(const yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

size_t krc_yaml_doc_map_len(const yaml_node_t *map)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE) {
        return 0;
    }
    return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

size_t krc_yaml_doc_seq_len(const yaml_node_t *seq)
{
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE) {
        return 0;
    }
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

void krc_yaml_doc_map_pair(yaml_document_t *doc, const yaml_node_t *map, size_t i,
                           yaml_node_t **ret_key, yaml_node_t **ret_value)
{
    const yaml_node_pair_t *pr = &map->data.mapping.pairs.start[i];

    *ret_key = yaml_document_get_node(doc, pr->key);
    *ret_value = yaml_document_get_node(doc, pr->value);
}

yaml_node_t *krc_yaml_doc_seq_item(yaml_document_t *doc, const yaml_node_t *seq, size_t i)
{
    return yaml_document_get_node(doc, seq->data.sequence.items.start[i]);
}

yaml_node_t *krc_yaml_doc_map_get(yaml_document_t *doc, const yaml_node_t *map, const char *key)
{
    size_t n = krc_yaml_doc_map_len(map);

    for (size_t i = 0; i < n; i++) {
        yaml_node_t *k;
        yaml_node_t *v;
        const char *ks;
        krc_yaml_doc_map_pair(doc, map, i, &k, &v);
        ks = krc_yaml_doc_scalar(k);
        if (ks != NULL && strcmp(ks, key) == 0) {
            return v;
        }
    }
    return NULL;
}
