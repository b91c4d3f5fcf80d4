/* Internal to explain/: the document of lines that kube_describe.c,
 * describe_containers.c and describe_events.c share (kube_describe.h is the
 * interface). A describe text is cut into lines with their indentation and
 * kinds; the readers turn them into Kubernetes JSON with cJSON (its type
 * only declared here). */
#ifndef KRC_DESCRIBE_DOC_H
#define KRC_DESCRIBE_DOC_H

#include <stddef.h>

#include "krc/util/error.h"

struct cJSON;

struct line {
    const char *p; /* after the indentation */
    size_t len;    /* trailing white space and \r removed */
    size_t indent;
    size_t key_len; /* 0: not a "Key:" line */
    const char *val;
    size_t val_len;
    unsigned kind;    /* LN_* */
    unsigned unnamed; /* a container block pasted without its name line */
    unsigned trimmed; /* white space was cut from its end */
    unsigned glued;   /* LN_WRAP: the terminal broke a word here (no space) */
};

/* What a line is, beyond "Key: value": parts of an event table, and the
 * poster's elisions ("...", "<snip>"), which end the lines above them. */
enum { LN_TEXT, LN_ELISION, LN_HEADER, LN_RULE, LN_ROW, LN_WRAP, LN_BROW };

struct doc {
    struct line *l;
    size_t n;
    int oom;
};

/* The columns of an event table: describe's Events table, or the default
 * output of `kubectl get events` (with a NAMESPACE column under -A). */
enum {
    COL_TYPE,
    COL_REASON,
    COL_AGE,
    COL_FROM,
    COL_MESSAGE,
    COL_OBJECT,
    COL_NS,
    COL_COUNT,
    COL_PATH,
    COL_N
};

#define TABLE_COLS 8

struct table {
    size_t n;               /* columns */
    size_t col[TABLE_COLS]; /* offsets in the header line (tabs expanded) */
    int field[COL_N];       /* COL_* -> column index, -1 when absent */
};

/* kube_describe.c: navigation and JSON building (a sticky out-of-memory
 * flag in the doc), the keys kubectl writes */
struct cJSON *krc_desc_add(struct doc *d, struct cJSON *o, const char *k, struct cJSON *item);
const char *krc_desc_find(const char *s, const char *e, const char *needle);
size_t krc_desc_span(const struct line *l, const char *set);
size_t krc_desc_child(const struct doc *d, size_t i, const char *key);
size_t krc_desc_end_of(const struct doc *d, size_t i);
int krc_desc_is_space(char c);
int krc_desc_has_val(const struct line *l);
int krc_desc_parse_int(const char *s, size_t n, long *ret);
struct cJSON *krc_desc_add_obj(struct doc *d, struct cJSON *o, const char *k);
void krc_desc_add_strn(struct doc *d, struct cJSON *o, const char *k, const char *s, size_t n);
void krc_desc_add_val(struct doc *d, struct cJSON *o, const char *k, size_t i, const char *key);
void krc_desc_add_int_val(struct doc *d, struct cJSON *o, const char *k, size_t i, const char *key);
void krc_desc_add_time_val(struct doc *d, struct cJSON *o, const char *k, size_t i,
                           const char *key);
int krc_desc_describe_key(const struct line *l);
/* describe_containers.c: the container blocks of a section into spec and
 * status arrays */
int krc_desc_add_containers(struct doc *d, struct cJSON *spec_arr, struct cJSON *status_arr,
                            size_t sec, struct krc_error *err);
/* describe_events.c: event tables (rows, the header's columns) into an
 * event List */
int krc_desc_bare_row(const struct line *l);
char *krc_desc_events_json(struct doc *d, const char *name, const char *ns);
void krc_desc_mark_tables(struct doc *d);
int krc_desc_table_header(const struct line *raw, struct table *t);

#endif
