/* Probable cause of a container restart (include/krc/diagnose/diagnose.h):
 * pick the container, compute its facts, run the rule table, and write the
 * diagnosis (src/diagnose/diagnose_private.h says which file does what). */
#include <stdio.h>
#include <string.h>

#include "diagnose_private.h"
#include "krc/util/buf.h"
#include "krc/util/mem.h"

/* Run the table on x; returns the rule that holds (the last one always does). */
static const struct rule *first_rule(struct dctx *x)
{
    size_t i;

    for (i = 0; i < krc_diag_n_rules; i++) {
        if (krc_diag_rules[i].match(x)) {
            return &krc_diag_rules[i];
        }
    }
    return &krc_diag_rules[krc_diag_n_rules - 1];
}

static int list_names(const struct krc_report *r, char *out, size_t outsz)
{
    size_t i;
    size_t o = 0;

    out[0] = '\0';
    for (i = 0; i < r->n_containers && o < outsz; i++) {
        int n = snprintf(out + o, outsz - o, "%s%s%s", o ? ", " : "",
                         r->containers[i].name ? r->containers[i].name : "?",
                         r->containers[i].is_init ? " (init)" : "");
        if (n < 0) {
            break;
        }
        o += (size_t)n;
    }
    return 0;
}

static int diagnose_with(const struct krc_report *r, const struct krc_report_container *c,
                         struct krc_diagnosis *ret)
{
    struct builder b;
    struct krc_buf s;
    struct dctx x;
    const struct rule *rule;

    b.d = ret;
    b.oom = 0;
    krc_buf_init(&s, 4096);
    ret->gpus = krc_report_gpu_count(r);
    if (c == NULL) {
        ret->cause = KRC_CAUSE_UNKNOWN;
        ret->confidence = KRC_CONFIDENCE_LOW;
        krc_buf_printf(&s,
                       "No container of pod %s/%s has restarted, terminated or is waiting to "
                       "restart, so there is no termination to explain",
                       r->namespace ? r->namespace : "?", r->name ? r->name : "?");
        krc_diag_summary_set(&b, &s);
        if (krc_diag_set_str(&b, &ret->next_step,
                             "Nothing to do: run krc explain again on the pod after a restart") ==
            0) {
            krc_diag_add_unchecked(
                &b, "no container status shows a restart, a termination or a back-off");
        }
        goto done;
    }
    if (krc_diag_set_str(&b, &ret->container, c->name ? c->name : "") < 0) {
        goto done;
    }
    ret->is_init = c->is_init;
    ret->is_sidecar = c->is_sidecar;
    ret->restart_count = c->restart_count;
    ret->restart_count_known = c->restart_count_known;
    krc_diag_ctx_init(&x, r, c);
    if (x.t != NULL) {
        ret->has_termination = x.has_exit;
        ret->from_last_state = x.from_last;
        ret->exit_code = x.exit_code;
        ret->started_at = x.t->started_at;
        ret->finished_at = x.t->finished_at;
        ret->signal = x.signal;
        ret->signal_name = x.signal_name;
        if (x.t->reason != NULL && krc_diag_set_str(&b, &ret->reason, x.t->reason) < 0) {
            goto done;
        }
    }
    krc_diag_add_common_evidence(&b, &x);
    rule = first_rule(&x);
    ret->cause = rule->cause;
    ret->confidence = x.conf;
    rule->say(&x, &b, &s);
    krc_diag_device_evidence(&b, &x);
    krc_diag_evidence_restart_all(&b, &x);
    krc_diag_finish(&b, &x, &s);
    krc_diag_add_missing(&b, &x, rule);
    krc_diag_add_commands(&b, &x, rule->cmds | x.cmds);
    if (krc_diag_set_str(&b, &ret->next_step, x.next[0] ? x.next : rule->next_step) == 0) {
        krc_diag_summary_set(&b, &s);
    }

done:
    krc_buf_cleanup(&s);
    if (b.oom || ret->summary == NULL || ret->next_step == NULL) {
        krc_diagnosis_cleanup(ret);
        return KRC_ENOMEM;
    }
    return 0;
}

static const struct krc_report_container *find_named(const struct krc_report *r,
                                                     const char *container, struct krc_error *err)
{
    const struct krc_report_container *c = krc_report_container_get(r, container, -1);
    char names[512];

    if (c == NULL) {
        list_names(r, names, sizeof(names));
        krc_error_set(err, KRC_ENOTFOUND,
                      "container \"%.100s\" not found in pod %s/%s (containers: %s)", container,
                      r->namespace ? r->namespace : "?", r->name ? r->name : "?",
                      names[0] ? names : "none");
    }
    return c;
}

int krc_diagnose(const struct krc_report *r, const char *container, struct krc_diagnosis *ret,
                 struct krc_error *err)
{
    const struct krc_report_container *c;

    krc_diagnosis_cleanup(ret);
    if (container != NULL) {
        if ((c = find_named(r, container, err)) == NULL) {
            return KRC_ENOTFOUND;
        }
    } else {
        c = krc_diagnose_pick(r);
    }
    if (diagnose_with(r, c, ret) < 0) {
        return krc_error_set(err, KRC_ENOMEM, "diagnose: out of memory");
    }
    return 0;
}

size_t krc_diagnose_rule_count(void)
{
    return krc_diag_n_rules;
}

const char *krc_diagnose_rule_name(size_t i)
{
    return i < krc_diag_n_rules ? krc_diag_rules[i].name : NULL;
}

enum krc_cause krc_diagnose_rule_cause(size_t i)
{
    return i < krc_diag_n_rules ? krc_diag_rules[i].cause : KRC_CAUSE_UNKNOWN;
}

int krc_diagnose_rule_matches(const struct krc_report *r, const char *container, const char *rule,
                              enum krc_confidence *ret_confidence, struct krc_error *err)
{
    const struct krc_report_container *c;
    struct dctx x;
    size_t i;

    for (i = 0; i < krc_diag_n_rules && strcmp(krc_diag_rules[i].name, rule) != 0; i++) {
    }
    if (i == krc_diag_n_rules) {
        return krc_error_set(err, KRC_EINVAL, "no diagnosis rule \"%.60s\"", rule);
    }
    c = container != NULL ? find_named(r, container, err) : krc_diagnose_pick(r);
    if (c == NULL) {
        return container != NULL ? KRC_ENOTFOUND
                                 : krc_error_set(err, KRC_ENOTFOUND, "no container to diagnose");
    }
    krc_diag_ctx_init(&x, r, c);
    if (!krc_diag_rules[i].match(&x)) {
        return 0;
    }
    if (ret_confidence != NULL) {
        *ret_confidence = x.conf;
    }
    return 1;
}
