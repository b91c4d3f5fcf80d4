/* The facts of a pod template or a node, as short strings.
 *
 * A fact is TYPE CONTAINER \x1f SUB \x1f VALUE: TYPE one of KRC_FACT_*, the
 * container's name ("init:NAME" for an init container, "" for pod-level
 * facts), SUB what within it (an env name, a resource, a probe kind, a
 * volume, ...), VALUE its value (never an env value: a valueFrom reference
 * or ""). The key is everything before the last \x1f. Control bytes become
 * spaces; a value over KRC_FACT_VALUE_MAX is cut and ends with a hash of the
 * whole, so a change past the cut still shows. */
#ifndef KRC_TRACK_DIGEST_H
#define KRC_TRACK_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "krc/util/error.h"
#include "krc/util/jscan.h"

/* Template facts, in the order their items are listed. An image is two
 * facts: sub "" its repository, sub KRC_FACT_IMAGE_TAG the rest (":tag",
 * "@sha256:...", ":tag@sha256:..." or ""). */
#define KRC_FACT_IMAGE 'a'
#define KRC_FACT_IMAGE_TAG ":"
#define KRC_FACT_LIMIT 'b'
#define KRC_FACT_REQUEST 'c'
#define KRC_FACT_COMMAND 'd'
#define KRC_FACT_ARGS 'e'
#define KRC_FACT_ENV 'f'
#define KRC_FACT_ENV_FROM 'g'
#define KRC_FACT_PROBE 'h'
#define KRC_FACT_VOLUME 'v'
#define KRC_FACT_SERVICE_ACCOUNT 'w'
#define KRC_FACT_NODE_SELECTOR 'x'
#define KRC_FACT_TOLERATION 'y'
/* Node facts. */
#define KRC_FACT_KUBELET 'A'
#define KRC_FACT_RUNTIME 'B'
#define KRC_FACT_KERNEL 'C'
#define KRC_FACT_OS 'D'
#define KRC_FACT_TAINT 'E'
#define KRC_FACT_CONDITION 'F'
#define KRC_FACT_LABEL 'G'

#define KRC_FACT_VALUE_MAX 160
#define KRC_FACT_SEP '\x1f'
/* Between the parts of a probe's value (handler, delay, period, ...). */
#define KRC_FACT_PART_SEP '\x1e'
#define KRC_FACTS_MAX 512 /* facts of one template or node at most (the rest dropped) */

/* A growing list of facts (one buffer, offsets). */
struct krc_facts {
    char *buf;
    size_t len, cap;
    uint32_t *off; /* start of each fact in buf; each ends with a NUL */
    size_t n, cap_n;
    size_t dropped; /* facts over KRC_FACTS_MAX */
};

void krc_facts_init(struct krc_facts *f);
void krc_facts_cleanup(struct krc_facts *f);
void krc_facts_reset(struct krc_facts *f);
/* Add one fact (value cut and hashed over KRC_FACT_VALUE_MAX). KRC_ENOMEM. */
int krc_facts_add(struct krc_facts *f, char type, const char *container, size_t clen,
                  const char *sub, size_t slen, const char *value, size_t vlen);
static inline const char *krc_facts_get(const struct krc_facts *f, size_t i)
{
    return f->buf + f->off[i];
}
/* Sort by key; of two facts with one key (an env var listed twice) the
 * later one stays, as in Kubernetes. */
void krc_facts_finish(struct krc_facts *f);

/* The length of a fact's key (up to and without its last separator). */
size_t krc_fact_key_len(const char *fact, size_t len);

/* The scanner is at a PodSpec object: consume it, adding its facts.
 * KRC_EPARSE (the scanner's message), KRC_ENOMEM. */
int krc_digest_pod_spec(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err);

/* Node parts (the scanner at the value): spec.taints, status.nodeInfo,
 * status.conditions, metadata.labels (only accelerator driver labels:
 * krc_digest_is_driver_label). */
int krc_digest_node_taints(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err);
int krc_digest_node_info(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err);
int krc_digest_node_conditions(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err);
int krc_digest_node_labels(struct krc_jscan *s, struct krc_facts *f, struct krc_error *err);
int krc_digest_is_driver_label(const char *key, size_t len);

/* Where an image's tag or digest starts (its length when it has neither). */
size_t krc_digest_image_split(const char *image, size_t n);

/* Copy a scanned string into out (at most outsz - 1 bytes, unescaped, cut
 * at a UTF-8 boundary, NUL-terminated). Returns the length. */
size_t krc_digest_copy(const struct krc_jscan_str *str, char *out, size_t outsz);

#endif
