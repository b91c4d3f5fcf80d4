/* krc_report_redact: every text of a report that came from the cluster is
 * redacted in place (labels and annotations by their key too), the rest is
 * left alone; and with allocations failing at every point, no secret is ever
 * left in the report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "krc/model/report.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"

#define R "[REDACTED]"

static const char *const secrets[] = {
    "tok1",  "pw1", "nt1", "pm1", "sm1", "tm1", "lm1", "ev1", "nc1", "lg1", "EXAMPLEKEY012345",
    "cus-77"};

static void kv(struct krc_kv_list *l, const char *k, const char *v)
{
    struct krc_kv *grown = krc_realloc(l->items, (l->n + 1) * sizeof(*grown));
    assert_non_null(grown);
    l->items = grown;
    l->items[l->n].key = krc_strdup(k);
    l->items[l->n].value = krc_strdup(v);
    l->n++;
    l->cap = l->n;
}

static void build(struct krc_report *r)
{
    struct krc_report_container *c;
    struct krc_report_event *e;
    const char *log = "starting\nPGPASSWORD=lg1 psql\ncustomer cus-77 done\n";

    krc_report_init(r);
    r->namespace = krc_strdup("shop");
    r->name = krc_strdup("api-0");
    r->pod_message = krc_strdup("evicted; password=pm1");
    kv(&r->labels, "app", "web");
    kv(&r->labels, "api-token", "tok1");
    kv(&r->annotations, "example.com/db-password", "pw1");
    kv(&r->annotations, "example.com/notes", "deployed with token=nt1 by ci");
    kv(&r->annotations, "alert-slack-channel", "#payments");
    c = krc_report_add_container(r);
    assert_non_null(c);
    c->name = krc_strdup("app");
    c->state_message = krc_strdup("back-off; secret=sm1");
    c->state_term.message = krc_strdup("DB_PASS=tm1");
    c->last.message = krc_strdup("api_key: lm1");
    e = krc_report_add_event(r);
    assert_non_null(e);
    e->reason = krc_strdup("Failed");
    e->message = krc_strdup("pull failed: auth=ev1");
    r->node.present = 1;
    r->node.conditions = krc_calloc(1, sizeof(*r->node.conditions));
    assert_non_null(r->node.conditions);
    r->node.n_conditions = 1;
    r->node.conditions[0].type = krc_strdup("Ready");
    r->node.conditions[0].message = krc_strdup("kubelet token=nc1");
    assert_int_equal(krc_report_add_note(r, "fetched with AKIAEXAMPLEKEY012345"), 0);
    assert_int_equal(krc_report_set_log(r, "app", log, strlen(log), 0, NULL), 0);
}

static int has(const char *s, const char *needle)
{
    return s != NULL && strstr(s, needle) != NULL;
}

/* Is any secret still somewhere in the report? */
static const char *leaked(const struct krc_report *r)
{
    for (size_t k = 0; k < sizeof(secrets) / sizeof(secrets[0]); k++) {
        const char *x = secrets[k];
        int found = has(r->pod_message, x);
        for (size_t i = 0; i < r->labels.n; i++) {
            found |= has(r->labels.items[i].value, x);
        }
        for (size_t i = 0; i < r->annotations.n; i++) {
            found |= has(r->annotations.items[i].value, x);
        }
        for (size_t i = 0; i < r->n_containers; i++) {
            found |= has(r->containers[i].state_message, x) |
                     has(r->containers[i].state_term.message, x) |
                     has(r->containers[i].last.message, x);
        }
        for (size_t i = 0; i < r->n_events; i++) {
            found |= has(r->events[i].message, x);
        }
        for (size_t i = 0; i < r->node.n_conditions; i++) {
            found |= has(r->node.conditions[i].message, x);
        }
        for (size_t i = 0; i < r->n_notes; i++) {
            found |= has(r->notes[i], x);
        }
        if (r->log != NULL) {
            for (size_t i = 0; i + strlen(x) <= r->log_len; i++) {
                found |= memcmp(r->log + i, x, strlen(x)) == 0;
            }
        }
        if (found) {
            return x;
        }
    }
    return NULL;
}

static void test_every_text(void **state)
{
    static const char *const pats[] = {"cus-[0-9]+"};
    struct krc_redactor *rd = NULL;
    struct krc_report r;
    const char *x;

    (void)state;
    assert_int_equal(krc_redact_new(pats, 1, &rd, NULL), 0);
    build(&r);
    assert_int_equal(krc_report_redact(&r, rd, NULL), 12);
    x = leaked(&r);
    if (x != NULL) {
        fail_msg("secret %s left in the report", x);
    }
    /* by key: the whole value; other keys: the value rules; the rest kept */
    assert_string_equal(r.labels.items[0].value, "web");
    assert_string_equal(r.labels.items[1].value, R);
    assert_string_equal(r.annotations.items[0].value, R);
    assert_string_equal(r.annotations.items[1].value, "deployed with token=" R " by ci");
    assert_string_equal(r.annotations.items[2].value, "#payments");
    assert_string_equal(r.containers[0].state_term.message, "DB_PASS=" R);
    assert_string_equal(r.events[0].reason, "Failed");
    assert_int_equal(r.log_len, strlen("starting\nPGPASSWORD=" R " psql\ncustomer " R " done\n"));
    assert_memory_equal(r.log, "starting\nPGPASSWORD=" R " psql\ncustomer " R " done\n", r.log_len);
    assert_string_equal(r.log_container, "app");
    /* a second time: nothing more */
    assert_int_equal(krc_report_redact(&r, rd, NULL), 0);
    krc_report_cleanup(&r);
    krc_redact_free(rd);
}

static void test_allocation_failures(void **state)
{
    long n;

    (void)state;
    for (n = 0; n < 400; n++) {
        struct krc_report r;
        struct krc_error e;
        const char *x;
        long used;
        int rc;
        build(&r);
        krc_error_clear(&e);
        krc_mem_fail_after(n);
        rc = krc_report_redact(&r, NULL, &e);
        used = krc_mem_fail_after(-1);
        x = leaked(&r);
        if (x != NULL && strcmp(x, "cus-77") != 0) {
            fail_msg("allocation %ld failed: secret %s left in the report (rc %d)", n, x, rc);
        }
        if (rc >= 0) {
            assert_true(used <= n);
            krc_report_cleanup(&r);
            return;
        }
        assert_int_equal(rc, KRC_ENOMEM);
        assert_non_null(strstr(e.msg, "report redaction"));
        krc_report_cleanup(&r);
    }
    fail_msg("never succeeded");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_text),
        cmocka_unit_test(test_allocation_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
