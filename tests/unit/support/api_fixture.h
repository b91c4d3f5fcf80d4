/* A plain-HTTP Kubernetes API server on 127.0.0.1 (serve/http_server) for the
 * tests of what krc asks the API (tests/unit/collect, tests/unit/kube): the
 * test routes its paths to its own handlers, then starts it, and reaches it
 * with the auth settings, the token source and the clients made here. */
#ifndef KRC_TEST_API_FIXTURE_H
#define KRC_TEST_API_FIXTURE_H

#include "krc/kube/kube_auth.h"
#include "krc/kube/kube_client.h"
#include "krc/serve/http_server.h"

struct krc_test_api {
    struct krc_http_server *srv;
    struct krc_kube_auth_config auth; /* server `url`, the static token, source "test" */
    struct krc_token_source *tokens;  /* the static token */
    char url[64];                     /* http://127.0.0.1:PORT */
};

/* The server on a free port of 127.0.0.1, not started: the test routes its
 * paths (krc_test_api_get, or krc_http_server_route on api->srv), then calls
 * krc_test_api_start with the static bearer token the clients send. A
 * failure fails the test. */
void krc_test_api_new(struct krc_test_api *api);

/* Route GET requests for `path` to fn with userdata ud, answers of up to
 * max_response bytes (0: the server's default). */
void krc_test_api_get(struct krc_test_api *api, const char *path, size_t max_response,
                      krc_http_server_handler_fn fn, void *ud);
void krc_test_api_start(struct krc_test_api *api, const char *token); /* token: kept, not copied */

/* A client of the server; timeout_ms > 0 sets its per-request timeout
 * (krc_kube_client_set_timeout), 0 keeps the default. Free it with
 * krc_kube_client_free before krc_test_api_free. */
struct krc_kube_client *krc_test_api_client(const struct krc_test_api *api, long timeout_ms);

/* The value of the query parameter `key` of a request the handler got, into
 * out; `missing` when the request has none. */
void krc_test_api_query(const struct krc_http_server_request *req, const char *key,
                        const char *missing, char *out, size_t size);

/* Stop and free the server and the token source. */
void krc_test_api_free(struct krc_test_api *api);

#endif
