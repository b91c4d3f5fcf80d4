/* A Kubernetes API server on 127.0.0.1 for unit tests (api_fixture.h). */
#include "api_fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "krc/util/error.h"

void krc_test_api_new(struct krc_test_api *api)
{
    struct krc_http_server_config hc;
    struct krc_error err;

    memset(api, 0, sizeof(*api));
    memset(&hc, 0, sizeof(hc));
    hc.listen = "127.0.0.1:0";
    krc_error_clear(&err);
    if (krc_http_server_new(&hc, &api->srv, &err) != 0) {
        fail_msg("krc_http_server_new: %s", err.msg);
    }
}

void krc_test_api_get(struct krc_test_api *api, const char *path, size_t max_response,
                      krc_http_server_handler_fn fn, void *ud)
{
    struct krc_error err;

    krc_error_clear(&err);
    if (krc_http_server_route(api->srv, path, KRC_HTTP_METHOD_GET, 0, max_response, fn, ud, &err) !=
        0) {
        fail_msg("route %s: %s", path, err.msg);
    }
}

void krc_test_api_start(struct krc_test_api *api, const char *token)
{
    struct krc_error err;

    krc_error_clear(&err);
    if (krc_http_server_start(api->srv, &err) != 0) {
        fail_msg("krc_http_server_start: %s", err.msg);
    }
    snprintf(api->url, sizeof(api->url), "http://127.0.0.1:%d", krc_http_server_port(api->srv));
    api->auth.server = api->url;
    api->auth.token = (char *)token;
    api->auth.source = (char *)"test";
    api->tokens = krc_token_source_new(token, NULL, 0);
    assert_non_null(api->tokens);
}

struct krc_kube_client *krc_test_api_client(const struct krc_test_api *api, long timeout_ms)
{
    struct krc_kube_client *c;
    struct krc_error err;

    krc_error_clear(&err);
    c = krc_kube_client_new(&api->auth, api->tokens, &err);
    if (c == NULL) {
        fail_msg("krc_kube_client_new: %s", err.msg);
    }
    if (timeout_ms > 0) {
        krc_kube_client_set_timeout(c, timeout_ms);
    }
    return c;
}

void krc_test_api_query(const struct krc_http_server_request *req, const char *key,
                        const char *missing, char *out, size_t size)
{
    const char *v = krc_http_server_request_query(req, key);

    snprintf(out, size, "%s", v != NULL ? v : missing);
}

void krc_test_api_free(struct krc_test_api *api)
{
    krc_http_server_stop(api->srv);
    krc_http_server_free(api->srv);
    krc_token_source_free(api->tokens);
}
