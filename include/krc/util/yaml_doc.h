/* YAML documents (libyaml's document API) for the configuration file and
 * kubeconfigs: loading with the parser's problem located, and the lookups
 * both readers make. yaml_json has the event parser and shares the problem
 * reading. Nodes are borrowed from their document and live as long as it. */
#ifndef KRC_YAML_DOC_H
#define KRC_YAML_DOC_H

#include <stddef.h>
#include <stdio.h>
#include <yaml.h>

enum krc_yaml_failure {
    KRC_YAML_NO_PARSER = 1, /* yaml_parser_initialize failed (memory) */
    KRC_YAML_OUT_OF_MEMORY, /* while parsing */
    KRC_YAML_UNREADABLE,    /* not text in a Unicode encoding: at byte `offset` */
    KRC_YAML_SYNTAX,        /* at `line`, `column` */
};

/* Why libyaml failed, for the caller's message ("FILE:LINE:COL: problem"). */
struct krc_yaml_problem {
    enum krc_yaml_failure kind;
    size_t line;         /* 1-based */
    size_t column;       /* 1-based */
    size_t offset;       /* byte offset of an unreadable byte */
    const char *problem; /* libyaml's text, NULL when it gave none */
    const char *context; /* what was being parsed, NULL when none */
};

/* The problem of parser `p` after a failed call (a load or a parse). */
void krc_yaml_doc_problem(const yaml_parser_t *p, struct krc_yaml_problem *ret);

/* Load the first document of data[0..len) (text, not necessarily
 * NUL-terminated) or of the stream fp into *doc. 0 (the caller deletes
 * *doc with yaml_document_delete), KRC_ENOMEM (kind KRC_YAML_NO_PARSER or
 * KRC_YAML_OUT_OF_MEMORY) or KRC_EPARSE, with *ret_problem set; on an
 * error *doc needs no cleanup. An empty text is a document without a root
 * node. */
int krc_yaml_doc_load(yaml_document_t *doc, const char *data, size_t len,
                      struct krc_yaml_problem *ret_problem);
int krc_yaml_doc_load_file(yaml_document_t *doc, FILE *fp, struct krc_yaml_problem *ret_problem);

/* 1-based line and column where node n starts; 0 for NULL. */
size_t krc_yaml_doc_line(const yaml_node_t *n);
size_t krc_yaml_doc_column(const yaml_node_t *n);

/* Is n a plain (unquoted) null: "~", "null", "Null" or "NULL"? With
 * empty_is_null, also an absent node (NULL) and an empty plain scalar, as
 * YAML's core schema reads them. A quoted "null" is a string. */
int krc_yaml_doc_is_null(const yaml_node_t *n, int empty_is_null);

/* The text of scalar n, NULL when n is NULL or not a scalar. */
const char *krc_yaml_doc_scalar(const yaml_node_t *n);

/* Value node of the first `key` (a scalar key) in mapping `map`; NULL when
 * map is NULL or not a mapping, or the key is absent. */
yaml_node_t *krc_yaml_doc_map_get(yaml_document_t *doc, const yaml_node_t *map, const char *key);

/* Pairs of a mapping, items of a sequence (0 for NULL or another type). */
size_t krc_yaml_doc_map_len(const yaml_node_t *map);
size_t krc_yaml_doc_seq_len(const yaml_node_t *seq);

/* Pair i (< krc_yaml_doc_map_len) of `map`: key and value nodes. */
void krc_yaml_doc_map_pair(yaml_document_t *doc, const yaml_node_t *map, size_t i,
                           yaml_node_t **ret_key, yaml_node_t **ret_value);

/* Item i (< krc_yaml_doc_seq_len) of `seq`. */
yaml_node_t *krc_yaml_doc_seq_item(yaml_document_t *doc, const yaml_node_t *seq, size_t i);

#endif
