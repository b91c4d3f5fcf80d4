/* Private to src/kube: what the pod parser (kube_pod.c) shares with the
 * watch event parser (kube_watch_event.c). */
#ifndef KRC_KUBE_POD_PRIVATE_H
#define KRC_KUBE_POD_PRIVATE_H

#include <stddef.h>

#include "krc/kube/kube_pod.h"
#include "krc/util/error.h"
#include "krc/util/jscan.h"

/* Parse state shared by the parsers of a pod, a Status and a watch event. */
struct pctx {
    struct krc_jscan *s;
    struct krc_pod_info *p;
    struct krc_error *err;
    const char *what;    /* "pod", "watch event: pod", ... for semantic errors */
    const char *section; /* e.g. "status.containerStatuses", for field paths */
    size_t index;        /* element of `section`, or SIZE_MAX */
    const char *ann_channel;
    const char *label_channel;
    int initial_events_end;
    int seen_statuses;
    int seen_init_statuses;
};

#define NO_INDEX ((size_t)-1)

#define EQ(k, lit) KRC_JSCAN_EQ(k, lit)

/* Reserve the arena for an input of `len` bytes (every string copied out of
 * it fits); 0 or KRC_ENOMEM. */
int krc_pod_arena_reserve(struct krc_pod_info *p, size_t len, struct krc_error *err);
/* Forget a previous parse (the arena is kept). */
void krc_pod_reset(struct krc_pod_info *p);
void krc_pod_ctx_init(struct pctx *c, struct krc_jscan *s, struct krc_pod_info *p, const char *what,
                      struct krc_error *err);
/* The pod object at the scanner position (bookmark: metadata only, no uid
 * required). */
int krc_pod_parse_object(struct pctx *c, int bookmark);
/* The Status object at the scanner position into *st (strings in the pod
 * arena). */
int krc_pod_parse_status_object(struct pctx *c, struct krc_kube_status *st);

#endif
