/* Kubernetes REST client on top of http: authentication headers, timeouts,
 * and errors that say what failed (status, the API's Status reason/message,
 * and for 401/403 which permission or credential is missing).
 *
 * A client is used by one thread at a time (it owns one HTTP handle and its
 * kept-alive connections); the token source may be shared between clients. */
#ifndef KRC_KUBE_CLIENT_H
#define KRC_KUBE_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>

#include "krc/util/buf.h"
#include "krc/util/error.h"
#include "krc/util/http.h"
#include "krc/kube/kube_auth.h"

struct krc_kube_client;

/* cfg is borrowed during the call; ts is borrowed for the client's lifetime.
 * Caller frees with krc_kube_client_free. */
struct krc_kube_client *krc_kube_client_new(const struct krc_kube_auth_config *cfg,
                                            struct krc_token_source *ts, struct krc_error *err);
void krc_kube_client_free(struct krc_kube_client *c);

/* Default per-request timeout of non-streaming calls (ms). */
void krc_kube_client_set_timeout(struct krc_kube_client *c, long timeout_ms);

/* Query string builder: krc_kube_query_add escapes the value. */
int krc_kube_query_add(struct krc_buf *q, const char *key, const char *value);

/* GET `path` (absolute API path with query, e.g. "/api/v1/pods?limit=500").
 * On 2xx: *ret_body (NUL-terminated, caller frees with krc_free) and
 * *ret_len. Errors: KRC_EAUTH (401/403), KRC_ENOTFOUND (404), KRC_EGONE (410),
 * KRC_ERATELIMIT (429; err->retry_after), KRC_EHTTP (others; err->http_status),
 * transport errors from http. A 401 makes the token source re-read its file
 * and the request is tried once more. */
int krc_kube_get(struct krc_kube_client *c, const char *path, size_t max_body, char **ret_body,
                 size_t *ret_len, struct krc_error *err);

/* Several GETs at once (n <= KRC_HTTP_MAX_PARALLEL), with the status and
 * body of any 2xx/4xx handed back instead of translated (for callers that
 * interpret specific statuses, such as the log endpoint's 400; transport
 * errors and 401 are still errors): rets[i]/errs[i] per request (errs an array of n, never NULL,
 * cleared by the caller), statuses and bodies in resps[i]. The 2xx body of
 * request i goes to on_data[i] (with userdata[i]) piece by piece instead of
 * being collected, when on_data and on_data[i] are not NULL (a callback that
 * returns non-zero stops its transfer: rets[i] KRC_ECANCELED). Error bodies
 * are still collected. A request retried after a 401 streams to the same
 * callback. */
int krc_kube_get_many_stream(struct krc_kube_client *c, const char *const *paths, size_t n,
                             size_t max_body, const krc_http_data_cb *on_data,
                             void *const *userdata, struct krc_http_response *resps, int *rets,
                             struct krc_error *errs);

/* Streamed GET (LIST bodies and WATCH streams): the 2xx body goes to on_data
 * piece by piece. idle_timeout_ms aborts a stream that stays silent. Returns 0
 * when the server ended the response normally. */
int krc_kube_stream(struct krc_kube_client *c, const char *path, long idle_timeout_ms,
                    krc_http_data_cb on_data, void *userdata, const atomic_int *cancel,
                    struct krc_error *err);

/* The same with another Accept media type (the value, e.g.
 * "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"; at
 * most 240 bytes, one line: KRC_EINVAL otherwise). */
int krc_kube_stream_accept(struct krc_kube_client *c, const char *path, const char *accept,
                           long idle_timeout_ms, krc_http_data_cb on_data, void *userdata,
                           const atomic_int *cancel, struct krc_error *err);

/* POST/PUT a JSON body; on 2xx the response body is returned like krc_kube_get.
 * 409 gives KRC_ECONFLICT. */
int krc_kube_write(struct krc_kube_client *c, const char *method, const char *path,
                   const char *json, size_t json_len, char **ret_body, size_t *ret_len,
                   struct krc_error *err);

/* The message of an error response: the Status `message`, a plain-text
 * body trimmed to one line, or "HTTP 503 Service Unavailable". */
void krc_kube_status_message(const struct krc_http_response *resp, char *out, size_t outsz);

/* Translate a non-2xx response into err (exposed for tests). Returns the code. */
int krc_kube_translate_error(const char *method, const char *path, long status, const char *body,
                             size_t body_len, const char *content_type, int retry_after,
                             struct krc_error *err);

#endif
