/* Kubernetes names as the API server checks them (kube/kube_name.h): DNS
 * labels (namespaces, containers), DNS subdomains (pods) and pod name
 * prefixes; "." and ".." are never names (the MCP explain_pod finding: they
 * made GET /api/v1/namespaces/../pods/.. into GET /api/v1/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "krc/kube/kube_name.h"

#define OK(s, k) assert_null(krc_kube_name_problem((s), (k)))
#define BAD(s, k) assert_non_null(krc_kube_name_problem((s), (k)))

static void test_labels(void **state)
{
    char max[64];
    char over[65];
    (void)state;

    memset(max, 'a', 63);
    max[63] = '\0';
    memset(over, 'a', 64);
    over[64] = '\0';
    OK("default", KRC_KUBE_NAME_LABEL);
    OK("kube-system", KRC_KUBE_NAME_LABEL);
    OK("a", KRC_KUBE_NAME_LABEL);
    OK("0", KRC_KUBE_NAME_LABEL);
    OK("team-1-x", KRC_KUBE_NAME_LABEL);
    OK(max, KRC_KUBE_NAME_LABEL);
    assert_string_equal(krc_kube_name_problem(over, KRC_KUBE_NAME_LABEL),
                        "is longer than 63 characters");
    assert_string_equal(krc_kube_name_problem("", KRC_KUBE_NAME_LABEL), "is empty");
    assert_string_equal(krc_kube_name_problem(NULL, KRC_KUBE_NAME_LABEL), "is empty");
    assert_string_equal(krc_kube_name_problem("..", KRC_KUBE_NAME_LABEL),
                        "may hold only lower-case letters, digits and '-'");
    BAD(".", KRC_KUBE_NAME_LABEL);
    BAD("a.b", KRC_KUBE_NAME_LABEL);
    BAD("Default", KRC_KUBE_NAME_LABEL);
    BAD("-a", KRC_KUBE_NAME_LABEL);
    BAD("a-", KRC_KUBE_NAME_LABEL);
    BAD("a b", KRC_KUBE_NAME_LABEL);
    BAD("a/b", KRC_KUBE_NAME_LABEL);
    BAD("a%2f", KRC_KUBE_NAME_LABEL);
    BAD("a_b", KRC_KUBE_NAME_LABEL);
    BAD("\xc3\xa9", KRC_KUBE_NAME_LABEL);
}

static void test_subdomains(void **state)
{
    char max[254];
    char over[255];
    char long_part[101];
    (void)state;

    memset(max, 'a', 253);
    max[253] = '\0';
    memset(over, 'a', 254);
    over[254] = '\0';
    memset(long_part, 'b', 100);
    long_part[100] = '\0';
    OK("web-1", KRC_KUBE_NAME_SUBDOMAIN);
    OK("web-7d9f8b6c5d-x2x9k", KRC_KUBE_NAME_SUBDOMAIN);
    OK("a.b.c", KRC_KUBE_NAME_SUBDOMAIN);
    OK("kube-proxy.node-1", KRC_KUBE_NAME_SUBDOMAIN);
    OK(max, KRC_KUBE_NAME_SUBDOMAIN);
    OK(long_part, KRC_KUBE_NAME_SUBDOMAIN); /* a part may be longer than a label */
    assert_string_equal(krc_kube_name_problem(over, KRC_KUBE_NAME_SUBDOMAIN),
                        "is longer than 253 characters");
    BAD(".", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("..", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("a..b", KRC_KUBE_NAME_SUBDOMAIN);
    BAD(".a", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("a.", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("a.-b", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("a-.b", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("-a", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("../x", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("Web-1", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("web_1", KRC_KUBE_NAME_SUBDOMAIN);
    BAD("", KRC_KUBE_NAME_SUBDOMAIN);
    assert_string_equal(krc_kube_name_problem("a/b", KRC_KUBE_NAME_SUBDOMAIN),
                        "may hold only lower-case letters, digits, '-' and '.'");
}

static void test_prefixes(void **state)
{
    (void)state;
    OK("web", KRC_KUBE_NAME_PREFIX);
    OK("web-", KRC_KUBE_NAME_PREFIX); /* the beginning of "web-1" */
    OK("web.", KRC_KUBE_NAME_PREFIX);
    OK("w", KRC_KUBE_NAME_PREFIX);
    BAD(".", KRC_KUBE_NAME_PREFIX);
    BAD("..", KRC_KUBE_NAME_PREFIX);
    BAD("-web", KRC_KUBE_NAME_PREFIX);
    BAD("web%", KRC_KUBE_NAME_PREFIX); /* no LIKE wildcards either */
    BAD("web_", KRC_KUBE_NAME_PREFIX);
    BAD("", KRC_KUBE_NAME_PREFIX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_subdomains),
        cmocka_unit_test(test_prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
