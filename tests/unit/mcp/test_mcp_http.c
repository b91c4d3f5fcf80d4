/* MCP's Streamable HTTP route over real connections on 127.0.0.1: the
 * Origin and Host checks, the bearer token, methods, content type, 202 for
 * notifications; the token file reader and the loopback rule. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "krc/serve/http_server.h"
#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_http.h"
#include "krc/util/error.h"
#include "krc/util/log.h"
#include "krc/util/mem.h"

static int noop(void *ud, const cJSON *args, cJSON **ret, char *msg, size_t msgsz,
                struct krc_error *err)
{
    (void)ud;
    (void)args;
    (void)msg;
    (void)msgsz;
    (void)err;
    *ret = cJSON_CreateObject();
    return KRC_MCP_TOOL_OK;
}

static const struct krc_mcp_tool tools[] = {
    {"noop", NULL, "nothing", "{\"type\":\"object\",\"additionalProperties\":false}", NULL, noop},
};

struct fx {
    struct krc_mcp *m;
    struct krc_http_server *srv;
    struct krc_mcp_http_route *route;
    int port;
};

static void start(struct fx *f, const char *token, int loopback_only)
{
    struct krc_mcp_config mc = {"t", NULL, "1", NULL, tools, 1, NULL};
    struct krc_http_server_config hc;
    struct krc_mcp_http_config rc;
    struct krc_error err;

    memset(f, 0, sizeof(*f));
    memset(&hc, 0, sizeof(hc));
    hc.listen = "127.0.0.1:0";
    memset(&rc, 0, sizeof(rc));
    rc.token = token;
    rc.loopback_only = loopback_only;
    assert_int_equal(krc_mcp_new(&mc, &f->m, &err), 0);
    assert_int_equal(krc_http_server_new(&hc, &f->srv, &err), 0);
    assert_int_equal(krc_mcp_http_add(f->srv, f->m, &rc, &f->route, &err), 0);
    assert_int_equal(krc_http_server_start(f->srv, &err), 0);
    f->port = krc_http_server_port(f->srv);
}

static void stop(struct fx *f)
{
    krc_http_server_free(f->srv);
    krc_mcp_http_free(f->route);
    krc_mcp_free(f->m);
}

/* One request with extra header lines; returns the status, the response in out. */
static int request(const struct fx *f, const char *method, const char *headers, const char *body,
                   char *out, size_t outsz)
{
    struct sockaddr_in a;
    char req[4096];
    size_t got = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int status = 0;
    int n;

    assert_true(fd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)f->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    n = snprintf(req, sizeof(req),
                 "%s /mcp HTTP/1.1\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n%s", method,
                 headers, strlen(body), body);
    assert_int_equal(write(fd, req, (size_t)n), n);
    while (got + 1 < outsz) {
        ssize_t r = read(fd, out + got, outsz - 1 - got);
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
    }
    out[got] = '\0';
    close(fd);
    assert_int_equal(sscanf(out, "HTTP/1.%*d %d", &status), 1);
    return status;
}

#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
#define JSON_HDR "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"

static void test_loopback_without_token(void **state)
{
    struct fx f;
    char out[4096];
    (void)state;
    start(&f, NULL, 1);
    assert_int_equal(request(&f, "POST", JSON_HDR, PING, out, sizeof(out)), 200);
    assert_non_null(strstr(out, "\"result\":{}"));
    assert_non_null(strstr(out, "application/json"));
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Origin: http://localhost:6274\r\n", PING, out, sizeof(out)),
        200);
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Origin: http://[::1]:80\r\n", PING, out, sizeof(out)), 200);
    /* DNS rebinding: a foreign page's Origin, a rebound name in Host */
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Origin: http://evil.example\r\n", PING, out, sizeof(out)),
        403);
    assert_non_null(strstr(out, "-32600"));
    assert_int_equal(request(&f, "POST", JSON_HDR "Origin: http://127.0.0.1.evil.example\r\n", PING,
                             out, sizeof(out)),
                     403);
    assert_int_equal(request(&f, "POST", JSON_HDR "Origin: null\r\n", PING, out, sizeof(out)), 403);
    assert_int_equal(request(&f, "POST", "Host: evil.example:8080\r\n", PING, out, sizeof(out)),
                     403);
    assert_int_equal(request(&f, "POST", "Host: localhost:1\r\nContent-Type: application/json\r\n",
                             PING, out, sizeof(out)),
                     200);
    /* a notification: 202, no body */
    assert_int_equal(request(&f, "POST", JSON_HDR,
                             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", out,
                             sizeof(out)),
                     202);
    assert_non_null(strstr(out, "Content-Length: 0"));
    assert_int_equal(request(&f, "GET", "Host: 127.0.0.1\r\n", "", out, sizeof(out)), 405);
    assert_int_equal(request(&f, "DELETE", "Host: 127.0.0.1\r\n", "", out, sizeof(out)), 405);
    assert_int_equal(request(&f, "POST", "Host: 127.0.0.1\r\nContent-Type: text/plain\r\n", PING,
                             out, sizeof(out)),
                     415);
    assert_int_equal(request(&f, "POST", JSON_HDR, "{oops", out, sizeof(out)), 400);
    assert_non_null(strstr(out, "-32700"));
    stop(&f);
}

/* The Streamable HTTP transport POSTs application/json (parameters allowed):
 * anything else, or none, is 415 with a JSON-RPC body and the type to send
 * in Accept; an Accept that allows no JSON answer is 406. */
static void test_content_type_and_accept(void **state)
{
    static const char *const ok[] = {
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
        "application/json ; charset=utf-8",
    };
    static const char *const refused[] = {
        NULL, /* none */
        "",
        "text/plain",
        "application/jsonfoo",
        "application/json-seq",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "xapplication/json",
    };
    static const char *const acceptable[] = {
        "application/json, text/event-stream",
        "text/event-stream, application/json",
        "application/json",
        "*/*",
        "application/*",
        "text/html, */*;q=0.1",
        "application/json;q=0.5",
    };
    static const char *const unacceptable[] = {
        "text/event-stream",
        "text/html",
        "application/jsonfoo",
        "application/json;q=0",
        "application/json; q=0.000, text/plain",
    };
    struct fx f;
    char hdr[512];
    char out[4096];
    (void)state;
    start(&f, NULL, 1);
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        snprintf(hdr, sizeof(hdr), "Host: 127.0.0.1\r\nContent-Type: %s\r\n", ok[i]);
        assert_int_equal(request(&f, "POST", hdr, PING, out, sizeof(out)), 200);
    }
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        if (refused[i] == NULL) {
            snprintf(hdr, sizeof(hdr), "Host: 127.0.0.1\r\n");
        } else {
            snprintf(hdr, sizeof(hdr), "Host: 127.0.0.1\r\nContent-Type: %s\r\n", refused[i]);
        }
        if (request(&f, "POST", hdr, PING, out, sizeof(out)) != 415) {
            fail_msg("Content-Type %s: %s", refused[i] != NULL ? refused[i] : "(none)", out);
        }
        assert_non_null(strstr(out, "\r\nAccept: application/json\r\n"));
        assert_non_null(strstr(out, "\"code\":-32600"));
        assert_non_null(strstr(out, "Unsupported Media Type"));
        assert_null(strstr(out, "\"result\""));
    }
    for (size_t i = 0; i < sizeof(acceptable) / sizeof(acceptable[0]); i++) {
        snprintf(hdr, sizeof(hdr), JSON_HDR "Accept: %s\r\n", acceptable[i]);
        if (request(&f, "POST", hdr, PING, out, sizeof(out)) != 200) {
            fail_msg("Accept %s: %s", acceptable[i], out);
        }
    }
    for (size_t i = 0; i < sizeof(unacceptable) / sizeof(unacceptable[0]); i++) {
        snprintf(hdr, sizeof(hdr), JSON_HDR "Accept: %s\r\n", unacceptable[i]);
        if (request(&f, "POST", hdr, PING, out, sizeof(out)) != 406) {
            fail_msg("Accept %s: %s", unacceptable[i], out);
        }
        assert_non_null(strstr(out, "Not Acceptable"));
    }
    /* and the server keeps serving */
    assert_int_equal(request(&f, "POST", JSON_HDR, PING, out, sizeof(out)), 200);
    stop(&f);
}

static void test_token(void **state)
{
    struct fx f;
    char out[4096];
    (void)state;
    start(&f, "s3cret", 0);
    assert_int_equal(request(&f, "POST", JSON_HDR, PING, out, sizeof(out)), 401);
    assert_non_null(strstr(out, "WWW-Authenticate: Bearer"));
    assert_null(strstr(out, "s3cret"));
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Authorization: Bearer s3cre\r\n", PING, out, sizeof(out)),
        401);
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Authorization: Bearer s3cretX\r\n", PING, out, sizeof(out)),
        401);
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Authorization: Basic s3cret\r\n", PING, out, sizeof(out)),
        401);
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Authorization: Bearer s3cret\r\n", PING, out, sizeof(out)),
        200);
    /* not a loopback-only listener: any Host, still no foreign Origin */
    assert_int_equal(request(&f, "POST",
                             "Host: krc.krc.svc:8080\r\nContent-Type: application/json\r\n"
                             "Authorization: bearer s3cret\r\n",
                             PING, out, sizeof(out)),
                     200);
    assert_int_equal(request(&f, "POST",
                             JSON_HDR
                             "Authorization: Bearer s3cret\r\nOrigin: https://x.example\r\n",
                             PING, out, sizeof(out)),
                     403);
    stop(&f);
}

struct swapper {
    struct krc_mcp_http_route *route;
    atomic_int stop;
    long swaps;
    long failed; /* cmocka's asserts are for the main thread */
};

static void *swap_tokens(void *arg)
{
    struct swapper *sw = arg;
    while (!atomic_load(&sw->stop)) {
        sw->failed +=
            krc_mcp_http_set_token(sw->route, sw->swaps % 2 ? "token-a" : "token-b", NULL) < 0;
        sw->swaps++;
    }
    return NULL;
}

/* SIGHUP's token swap (krc_mcp_http_set_token): the old token is refused at
 * once, the new one accepted; while requests are checked on the server's
 * threads, each one sees one token or the other (ThreadSanitizer runs this). */
static void test_token_swap(void **state)
{
    struct fx f;
    struct swapper sw;
    pthread_t th;
    char out[4096];
    (void)state;
    start(&f, "token-a", 0);
    assert_int_equal(krc_mcp_http_set_token(f.route, "token-b", NULL), 1);
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Authorization: Bearer token-a\r\n", PING, out, sizeof(out)),
        401);
    assert_int_equal(
        request(&f, "POST", JSON_HDR "Authorization: Bearer token-b\r\n", PING, out, sizeof(out)),
        200);
    assert_int_equal(krc_mcp_http_set_token(f.route, "token-b", NULL), 0);
    memset(&sw, 0, sizeof(sw));
    sw.route = f.route;
    atomic_init(&sw.stop, 0);
    assert_int_equal(pthread_create(&th, NULL, swap_tokens, &sw), 0);
    for (int i = 0; i < 50; i++) {
        int st = request(&f, "POST", JSON_HDR "Authorization: Bearer token-a\r\n", PING, out,
                         sizeof(out));
        assert_true(st == 200 || st == 401);
    }
    atomic_store(&sw.stop, 1);
    pthread_join(th, NULL);
    assert_true(sw.swaps > 0);
    assert_int_equal(sw.failed, 0);
    stop(&f);
}

static void test_read_token_and_loopback(void **state)
{
    char path[] = "/tmp/krc-test-token-XXXXXX";
    struct krc_error err;
    char *tok = NULL;
    int fd = mkstemp(path);
    (void)state;

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "  abc.def \r\nsecond line\n", 24), 24);
    close(fd);
    assert_int_equal(krc_mcp_http_read_token(path, &tok, &err), 0);
    assert_string_equal(tok, "abc.def");
    krc_free(tok);
    {
        /* the token read is a secret of the log from then on */
        char out[64];
        krc_log_redact("bearer abc.def here", out, sizeof(out));
        assert_null(strstr(out, "abc.def"));
        krc_log_clear_secrets();
    }
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, " \n", 2), 2);
    close(fd);
    assert_int_equal(krc_mcp_http_read_token(path, &tok, &err), KRC_EINVAL);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "empty"));
    unlink(path);
    assert_int_equal(krc_mcp_http_read_token(path, &tok, &err), KRC_EIO);
    assert_null(tok);

    assert_true(krc_mcp_http_is_loopback("127.0.0.1"));
    assert_true(krc_mcp_http_is_loopback("127.1.2.3"));
    assert_true(krc_mcp_http_is_loopback("::1"));
    assert_true(krc_mcp_http_is_loopback("LocalHost"));
    assert_false(krc_mcp_http_is_loopback("0.0.0.0"));
    assert_false(krc_mcp_http_is_loopback("::"));
    assert_false(krc_mcp_http_is_loopback("10.0.0.1"));
    assert_false(krc_mcp_http_is_loopback(NULL));
    assert_false(krc_mcp_http_is_loopback("127.0.0.1.evil.example"));
    assert_false(krc_mcp_http_is_loopback("127.evil"));
    assert_false(krc_mcp_http_is_loopback("localhost.evil.example"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loopback_without_token),
        cmocka_unit_test(test_content_type_and_accept),
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_token_swap),
        cmocka_unit_test(test_read_token_and_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
