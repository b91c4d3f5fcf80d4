#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/util/error.h"
#include "krc/kube/kube_pod.h"
#include "krc/kube/list_framer.h"
#include "krc/util/mem.h"

struct items {
    char out[16384];
    size_t len;
    int n;
    int stop_at; /* return -99 at this item (1-based); 0: never */
    struct krc_list_framer *lf;
};

static int on_item(const char *json, size_t len, void *ud)
{
    struct items *it = ud;

    assert_true(it->len + len + 2 < sizeof(it->out));
    memcpy(it->out + it->len, json, len);
    it->len += len;
    it->out[it->len++] = '|';
    it->out[it->len] = '\0';
    it->n++;
    if (it->lf != NULL) {
        assert_int_equal(krc_list_framer_item_count(it->lf), (size_t)it->n);
    }
    return it->stop_at == it->n ? -99 : 0;
}

/* Feed split at the cuts (ascending), each chunk in its own allocation;
 * returns the first error of feed or finish. */
static int run(struct krc_list_framer *lf, const char *body, size_t len, const size_t *cuts,
               size_t ncuts, struct items *it, struct krc_error *err)
{
    size_t prev = 0;
    size_t i;
    int rc;

    krc_list_framer_reset(lf);
    for (i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        char *chunk = malloc(end - prev + 1);
        assert_non_null(chunk);
        memcpy(chunk, body + prev, end - prev);
        rc = krc_list_framer_feed(lf, chunk, end - prev, on_item, it, err);
        free(chunk);
        if (rc != 0) {
            return rc;
        }
        prev = end;
    }
    return krc_list_framer_finish(lf, err);
}

static int run_whole(struct krc_list_framer *lf, const char *body, struct items *it,
                     struct krc_error *err)
{
    return run(lf, body, strlen(body), NULL, 0, it, err);
}

static const char BODY[] =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
    "\"metadata\":{\"resourceVersion\":\"88\",\"continue\":\"tok\\u0065n\",\"remainingItemCount\":"
    "3},"
    "\"items\":[{\"metadata\":{\"name\":\"a\"}} , {\"s\":\"}]\\\"{[\",\"n\":[1,{\"x\":null}]},\n"
    "{\"e\":{}}]}\n";
static const char BODY_ITEMS[] =
    "{\"metadata\":{\"name\":\"a\"}}|{\"s\":\"}]\\\"{[\",\"n\":[1,{\"x\":null}]}|{\"e\":{}}|";

static void test_every_split_position(void **state)
{
    size_t len = strlen(BODY);
    struct krc_list_framer lf;
    size_t a;
    size_t b;

    (void)state;
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
    for (a = 0; a <= len; a++) {
        for (b = a; b <= len; b += 7) {
            struct items it;
            struct krc_error err;
            size_t cuts[2] = {a, b};

            memset(&it, 0, sizeof(it));
            it.lf = &lf;
            if (run(&lf, BODY, len, cuts, 2, &it, &err) != 0) {
                fail_msg("split %zu/%zu: %s", a, b, err.msg);
            }
            assert_string_equal(it.out, BODY_ITEMS);
            assert_string_equal(krc_list_framer_resource_version(&lf), "88");
            assert_string_equal(krc_list_framer_continue(&lf), "token");
            assert_string_equal(krc_list_framer_kind(&lf), "PodList");
            assert_int_equal(krc_list_framer_item_count(&lf), 3);
        }
    }
    krc_list_framer_cleanup(&lf);
}

static void test_one_byte_chunks(void **state)
{
    size_t len = strlen(BODY);
    size_t cuts[sizeof(BODY)];
    struct krc_list_framer lf;
    struct items it;
    struct krc_error err;
    size_t i;

    (void)state;
    for (i = 0; i + 1 < len; i++) {
        cuts[i] = i + 1;
    }
    memset(&it, 0, sizeof(it));
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
    assert_int_equal(run(&lf, BODY, len, cuts, len - 1, &it, &err), 0);
    assert_string_equal(it.out, BODY_ITEMS);
    assert_string_equal(krc_list_framer_resource_version(&lf), "88");
    krc_list_framer_cleanup(&lf);
}

static void test_metadata_after_items_and_empty_lists(void **state)
{
    struct krc_list_framer lf;
    struct items it;
    struct krc_error err;

    (void)state;
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);

    memset(&it, 0, sizeof(it));
    assert_int_equal(run_whole(&lf,
                               "{\"items\":[{\"a\":1}],\"metadata\":{\"resourceVersion\":\"9\"}}",
                               &it, &err),
                     0);
    assert_string_equal(it.out, "{\"a\":1}|");
    assert_string_equal(krc_list_framer_resource_version(&lf), "9");
    assert_null(krc_list_framer_continue(&lf));
    assert_null(krc_list_framer_kind(&lf));

    memset(&it, 0, sizeof(it));
    assert_int_equal(run_whole(&lf,
                               " { \"items\" : [ ] , \"metadata\" : { \"continue\" : \"\" , "
                               "\"resourceVersion\" : \"10\" } } ",
                               &it, &err),
                     0);
    assert_int_equal(it.n, 0);
    assert_null(krc_list_framer_continue(&lf)); /* "" means none */
    assert_string_equal(krc_list_framer_resource_version(&lf), "10");

    memset(&it, 0, sizeof(it));
    assert_int_equal(
        run_whole(&lf, "{\"metadata\":{\"resourceVersion\":\"11\"},\"items\":null}", &it, &err), 0);
    assert_int_equal(it.n, 0);
    assert_string_equal(krc_list_framer_resource_version(&lf), "11");

    /* no items key at all: not a list */
    memset(&it, 0, sizeof(it));
    assert_int_equal(run_whole(&lf, "{\"kind\":\"Pod\",\"metadata\":{}}", &it, &err), KRC_EPARSE);
    assert_string_equal(err.msg, "list: body (kind Pod) has no \"items\"");
    krc_list_framer_cleanup(&lf);
}

/* Items over max_item, as the skip callback saw them: "index:size:head;". */
struct skips {
    char out[1024];
    size_t len;
    int n;
};

static struct skips *skips_seen;

static void on_skip(size_t index, const char *head, size_t head_len, size_t size, void *ud)
{
    struct skips *k = skips_seen;
    int w;

    (void)ud;
    assert_non_null(k);
    w = snprintf(k->out + k->len, sizeof(k->out) - k->len, "%zu:%zu:%.*s;", index, size,
                 (int)head_len, head);
    assert_true(w > 0 && (size_t)w < sizeof(k->out) - k->len);
    k->len += (size_t)w;
    k->n++;
}

/* An item over the limit is skipped (named to the callback with its index,
 * size and head) and the list goes on, whatever the chunking; the framer
 * keeps no more than max_item bytes of it. */
static void test_oversize_item_is_skipped(void **state)
{
    struct krc_list_framer lf;
    struct items it;
    struct skips k;
    struct krc_error err;
    /* items[1] (39 bytes) and items[3] (35 bytes: brackets and quotes inside
     * its strings) are over 30 bytes */
    const char *body = "{\"items\":[{\"a\":1},{\"b\":\"0123456789012345678901234567890\"},"
                       "{},{\"c\":\"}]\\\"{[\",\"d\":[1,{\"x\":\"]]]]\"}]},{\"z\":2}],"
                       "\"metadata\":{\"resourceVersion\":\"7\"}}";
    size_t len = strlen(body);
    size_t a;

    (void)state;
    assert_int_equal(krc_list_framer_init(&lf, 30), 0);
    krc_list_framer_set_skip(&lf, on_skip);
    skips_seen = &k;
    for (a = 0; a <= len; a++) {
        size_t cuts[1] = {a};
        memset(&it, 0, sizeof(it));
        memset(&k, 0, sizeof(k));
        krc_error_clear(&err);
        if (run(&lf, body, len, cuts, 1, &it, &err) != 0) {
            fail_msg("split %zu: %s", a, err.msg);
        }
        assert_string_equal(it.out, "{\"a\":1}|{}|{\"z\":2}|");
        assert_string_equal(k.out, "1:39:{\"b\":\"012345678901234567890123;"
                                   "3:35:{\"c\":\"}]\\\"{[\",\"d\":[1,{\"x\":\"]]];");
        assert_int_equal(krc_list_framer_item_count(&lf), 3);
        assert_int_equal(krc_list_framer_skipped_count(&lf), 2);
        assert_string_equal(krc_list_framer_resource_version(&lf), "7");
        assert_true(lf.val.cap <= 31);
    }
    /* byte by byte */
    {
        size_t cuts[512];
        assert_true(len < 512);
        for (a = 0; a + 1 < len; a++) {
            cuts[a] = a + 1;
        }
        memset(&it, 0, sizeof(it));
        memset(&k, 0, sizeof(k));
        assert_int_equal(run(&lf, body, len, cuts, len - 1, &it, &err), 0);
        assert_int_equal(k.n, 2);
        assert_string_equal(it.out, "{\"a\":1}|{}|{\"z\":2}|");
    }
    /* a body cut inside a skipped item (37 of its 39 bytes) is truncated,
     * not a success */
    memset(&it, 0, sizeof(it));
    memset(&k, 0, sizeof(k));
    assert_int_equal(run(&lf, body, 55, NULL, 0, &it, &err), KRC_EPARSE);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_int_equal(k.n, 0);
    skips_seen = NULL;
    krc_list_framer_cleanup(&lf);
}

/* Without a callback the item is skipped silently (counted); a top-level
 * value over the limit still fails the list (sticky). */
static void test_oversize_top_level_value_fails(void **state)
{
    struct krc_list_framer lf;
    struct items it;
    struct krc_error err;
    const char *skipped = "{\"items\":[{\"b\":\"0123456789012345678901234567890\"}]}";
    const char *body = "{\"items\":[],\"metadata\":{\"resourceVersion\":\"0123456789012345\"}}";

    (void)state;
    assert_int_equal(krc_list_framer_init(&lf, 20), 0);
    memset(&it, 0, sizeof(it));
    assert_int_equal(run_whole(&lf, skipped, &it, &err), 0);
    assert_int_equal(it.n, 0);
    assert_int_equal(krc_list_framer_skipped_count(&lf), 1);
    memset(&it, 0, sizeof(it));
    krc_error_clear(&err);
    assert_int_equal(run_whole(&lf, body, &it, &err), KRC_ETOOBIG);
    assert_string_equal(err.msg,
                        "list: top-level value larger than the 20-byte limit at offset 23");
    assert_int_equal(krc_list_framer_feed(&lf, "x", 1, on_item, &it, &err), KRC_ETOOBIG);
    assert_int_equal(krc_list_framer_finish(&lf, &err), KRC_ETOOBIG);
    krc_list_framer_cleanup(&lf);
}

static void test_malformed(void **state)
{
    static const struct {
        const char *body;
        const char *msg;
    } cases[] = {
        {"", "list: empty body"},
        {"[1,2]", "list: body is a JSON array, not an object, at offset 0"},
        {"\"str\"", "list: body is a JSON string, not an object, at offset 0"},
        {"<html>", "list: body is not JSON: expected '{', got '<' at offset 0"},
        {"{\"items\":[{\"a\":1,}]}", "list: items[0]: expected a string key, got '}' at offset 17"},
        {"{\"items\":[{\"a\":1}]", "list: body truncated at offset 18"},
        {"{\"items\":[{\"a\":1}",
         "list: body truncated at offset 17 inside items (after 1 complete "
         "items)"},
        {"{\"items\":[{\"a\":1]}]}", "list: items[0]: expected ',' or '}', got ']' at offset 16"},
        {"{\"items\":[1]}", "list: items[0] is not an object at offset 10"},
        {"{\"items\":{}}", "list: items must be an array or null, got object at offset 9"},
        {"{\"items\":[] \"x\":1}", "list: expected ',' or '}', got '\"' at offset 12"},
        {"{\"items\":[]}}", "list: expected end of body after the list object, got '}' at offset "
                            "12"},
        {"{\"items\" []}", "list: expected ':' after an object key, got '[' at offset 9"},
        {"{\"items\":[],}", "list: expected a string key after ',', got '}' at offset 12"},
        {"{\"x\":tru,\"items\":[]}", "list: invalid literal or number 'tru' at offset 5"},
        {"{\"x\":01,\"items\":[]}", "list: invalid literal or number '01' at offset 5"},
        {"{\"items\":[],\"items\":[]}", "list: duplicate key \"items\" at offset 12"},
        {"{\"metadata\":[],\"items\":[]}", "list: metadata must be an object, got array at "
                                           "offset 12"},
        {"{\"ite\\x\":1}", "list: invalid escape sequence in a string at offset 5"},
    };
    struct krc_list_framer lf;
    size_t i;
    int bad = 0;

    (void)state;
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct items it;
        struct krc_error err;
        int rc;

        memset(&it, 0, sizeof(it));
        krc_error_clear(&err);
        rc = run_whole(&lf, cases[i].body, &it, &err);
        if (rc != KRC_EPARSE || strcmp(err.msg, cases[i].msg) != 0) {
            print_message("case %zu (%s): rc %d msg %s\n", i, cases[i].body, rc, err.msg);
            bad++;
        }
    }
    krc_list_framer_cleanup(&lf);
    assert_int_equal(bad, 0);
}

static void test_status_body(void **state)
{
    const char *body =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{\"continue\":\"newtok\"},"
        "\"status\":\"Failure\",\"message\":\"The provided continue parameter is too old\","
        "\"reason\":\"Expired\",\"code\":410}";
    struct krc_list_framer lf;
    struct items it;
    struct krc_error err;

    (void)state;
    memset(&it, 0, sizeof(it));
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
    krc_error_clear(&err);
    assert_int_equal(run_whole(&lf, body, &it, &err), KRC_EGONE);
    assert_int_equal(err.http_status, 410);
    assert_string_equal(err.msg, "list: the server answered with a Status instead of a list: code "
                                 "410, reason Expired: The provided continue parameter is too old");
    assert_string_equal(krc_list_framer_kind(&lf), "Status");
    assert_string_equal(krc_list_framer_continue(&lf), "newtok");

    krc_error_clear(&err);
    assert_int_equal(
        run_whole(&lf, "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\"}", &it, &err),
        KRC_EAUTH);
    assert_int_equal(err.http_status, 403);
    assert_int_equal(run_whole(&lf, "{\"kind\":\"Status\",\"code\":500}", &it, &err), KRC_EHTTP);
    assert_int_equal(it.n, 0);
    krc_list_framer_cleanup(&lf);
}

static void test_callback_stop(void **state)
{
    struct krc_list_framer lf;
    struct items it;
    struct krc_error err;

    (void)state;
    memset(&it, 0, sizeof(it));
    it.stop_at = 2;
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
    assert_int_equal(run_whole(&lf, "{\"items\":[{},{\"b\":1},{}]}", &it, &err), -99);
    assert_int_equal(it.n, 2);
    assert_int_equal(krc_list_framer_feed(&lf, "{}", 2, on_item, &it, &err), -99);
    assert_int_equal(it.n, 2);
    krc_list_framer_cleanup(&lf);
}

/* Items of a generated list parse as pods, whatever the chunk sizes. */
struct pods {
    struct krc_pod_info pod;
    int n;
    int restarts;
};

static int on_pod(const char *json, size_t len, void *ud)
{
    struct pods *p = ud;
    struct krc_error err;

    if (krc_pod_info_parse(json, len, &p->pod, &err) != 0) {
        fail_msg("item %d: %s", p->n, err.msg);
    }
    assert_int_equal(p->pod.n_containers, 1);
    p->restarts += p->pod.containers[0].restart_count;
    p->n++;
    return 0;
}

static void test_generated_list_random_chunks(void **state)
{
    struct krc_list_framer lf;
    struct pods p;
    struct krc_error err;
    char *body;
    size_t cap = 400000;
    size_t n = 0;
    size_t off;
    unsigned seed = 99;
    int i;

    (void)state;
    body = malloc(cap);
    assert_non_null(body);
    n += (size_t)snprintf(body + n, cap - n, "{\"kind\":\"PodList\",\"items\":[");
    for (i = 0; i < 500; i++) {
        n += (size_t)snprintf(
            body + n, cap - n,
            "%s{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"ns\",\"uid\":\"u-%d\","
            "\"annotations\":{\"x\":\"\\\"}]\"}},\"status\":{\"containerStatuses\":[{\"name\":"
            "\"c\",\"restartCount\":%d}]}}",
            i ? "," : "", i, i, i % 3);
    }
    n += (size_t)snprintf(body + n, cap - n, "],\"metadata\":{\"resourceVersion\":\"777\"}}");
    assert_true(n < cap - 1);

    memset(&p, 0, sizeof(p));
    krc_pod_info_init(&p.pod);
    assert_int_equal(krc_list_framer_init(&lf, 4096), 0);
    krc_list_framer_reset(&lf);
    for (off = 0; off < n;) {
        size_t chunk;
        seed = seed * 1103515245u + 12345u;
        chunk = 1 + (seed >> 16) % 700;
        if (chunk > n - off) {
            chunk = n - off;
        }
        assert_int_equal(krc_list_framer_feed(&lf, body + off, chunk, on_pod, &p, &err), 0);
        off += chunk;
    }
    assert_int_equal(krc_list_framer_finish(&lf, &err), 0);
    assert_int_equal(p.n, 500);
    assert_int_equal(p.restarts, 166 + 2 * 166 + 1 /* i%3 summed over 0..499 */);
    assert_string_equal(krc_list_framer_resource_version(&lf), "777");
    krc_pod_info_cleanup(&p.pod);
    krc_list_framer_cleanup(&lf);
    free(body);
}

static void test_truncations_never_succeed(void **state)
{
    size_t len = strlen(BODY);
    struct krc_list_framer lf;
    size_t i;

    (void)state;
    assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
    for (i = 0; i < len - 1; i++) { /* BODY ends with "}\n": the last byte is whitespace */
        struct items it;
        struct krc_error err;
        memset(&it, 0, sizeof(it));
        if (run(&lf, BODY, i, NULL, 0, &it, &err) != KRC_EPARSE) {
            fail_msg("prefix %zu accepted", i);
        }
    }
    krc_list_framer_cleanup(&lf);
}

static void test_out_of_memory_sweep(void **state)
{
    struct krc_list_framer lf;
    long n;

    (void)state;
    for (n = 0; n < 100; n++) {
        struct items it;
        struct krc_error err;
        size_t cuts[3] = {5, 30, 90};
        long attempts;
        int rc;

        memset(&it, 0, sizeof(it));
        assert_int_equal(krc_list_framer_init(&lf, 1024), 0);
        krc_mem_fail_after(n);
        rc = run(&lf, BODY, strlen(BODY), cuts, 3, &it, &err);
        attempts = krc_mem_fail_after(-1);
        krc_list_framer_cleanup(&lf);
        if (rc == 0) {
            assert_true(attempts <= n);
            assert_string_equal(it.out, BODY_ITEMS);
            return;
        }
        assert_int_equal(rc, KRC_ENOMEM);
    }
    fail_msg("never succeeded");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split_position),
        cmocka_unit_test(test_one_byte_chunks),
        cmocka_unit_test(test_metadata_after_items_and_empty_lists),
        cmocka_unit_test(test_oversize_item_is_skipped),
        cmocka_unit_test(test_oversize_top_level_value_fails),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_status_body),
        cmocka_unit_test(test_callback_stop),
        cmocka_unit_test(test_generated_list_random_chunks),
        cmocka_unit_test(test_truncations_never_succeed),
        cmocka_unit_test(test_out_of_memory_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
